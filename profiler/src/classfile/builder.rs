//! Building class files in memory: a constant-pool builder with de-duplication and a bytecode
//! assembler for straight-line code. The VM uses it to link `invokedynamic` call sites into
//! ordinary classes (lambda proxies, string concatenation, record methods), so that everything
//! the program does still runs as bytecode the trackers observe.

use super::descriptor::Kind;
use super::{access, ClassFile, Code, Constant, ConstantPool, FieldInfo, MethodInfo};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Default)]
pub struct ClassBuilder {
    entries: Vec<Constant>,
    index: HashMap<String, u16>,
    fields: Vec<FieldInfo>,
    methods: Vec<MethodInfo>,
}

impl ClassBuilder {
    pub fn new() -> Self {
        ClassBuilder { entries: vec![Constant::Unusable], ..Default::default() }
    }

    fn add(&mut self, key: String, c: Constant) -> u16 {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.entries.len() as u16;
        let wide = matches!(c, Constant::Long(_) | Constant::Double(_));
        self.entries.push(c);
        if wide {
            self.entries.push(Constant::Unusable);
        }
        self.index.insert(key, i);
        i
    }

    pub fn utf8(&mut self, s: &str) -> u16 {
        self.add(format!("U{s}"), Constant::Utf8(Arc::from(s)))
    }
    pub fn class(&mut self, name: &str) -> u16 {
        let n = self.utf8(name);
        self.add(format!("C{name}"), Constant::Class { name: n })
    }
    pub fn string(&mut self, s: &str) -> u16 {
        let u = self.utf8(s);
        self.add(format!("S{s}"), Constant::String { utf8: u })
    }
    pub fn integer(&mut self, v: i32) -> u16 {
        self.add(format!("I{v}"), Constant::Integer(v))
    }
    pub fn long(&mut self, v: i64) -> u16 {
        self.add(format!("J{v}"), Constant::Long(v))
    }
    pub fn float(&mut self, v: f32) -> u16 {
        self.add(format!("F{}", v.to_bits()), Constant::Float(v))
    }
    pub fn double(&mut self, v: f64) -> u16 {
        self.add(format!("D{}", v.to_bits()), Constant::Double(v))
    }
    fn name_and_type(&mut self, name: &str, desc: &str) -> u16 {
        let (n, d) = (self.utf8(name), self.utf8(desc));
        self.add(format!("N{name}:{desc}"), Constant::NameAndType { name: n, descriptor: d })
    }
    pub fn field_ref(&mut self, class: &str, name: &str, desc: &str) -> u16 {
        let (c, nt) = (self.class(class), self.name_and_type(name, desc));
        self.add(format!("f{class}.{name}:{desc}"), Constant::FieldRef { class: c, name_and_type: nt })
    }
    pub fn method_ref(&mut self, class: &str, name: &str, desc: &str, interface: bool) -> u16 {
        let (c, nt) = (self.class(class), self.name_and_type(name, desc));
        if interface {
            self.add(format!("i{class}.{name}{desc}"), Constant::InterfaceMethodRef { class: c, name_and_type: nt })
        } else {
            self.add(format!("m{class}.{name}{desc}"), Constant::MethodRef { class: c, name_and_type: nt })
        }
    }

    pub fn field(&mut self, access_flags: u16, name: &str, desc: &str) {
        self.fields.push(FieldInfo {
            access_flags,
            name: Arc::from(name),
            descriptor: Arc::from(desc),
            constant_value: None,
            signature: None,
            annotations: Default::default(),
        });
    }

    pub fn method(&mut self, access_flags: u16, name: &str, desc: &str, code: Code) {
        self.methods.push(MethodInfo {
            access_flags,
            name: Arc::from(name),
            descriptor: Arc::from(desc),
            code: Some(code),
            exceptions: Vec::new(),
            signature: None,
            hidden: false,
            caller_sensitive: false,
            annotations: Default::default(),
            parameters: None,
        });
    }

    pub fn build(self, name: &str, super_class: &str, interfaces: &[&str], access_flags: u16) -> ClassFile {
        let mut class = ClassFile::new(
            Arc::from(name),
            Some(Arc::from(super_class)),
            interfaces.iter().map(|&i| Arc::from(i)).collect(),
            access_flags | access::SYNTHETIC,
        );
        class.major_version = 61;
        class.constant_pool = ConstantPool::from_entries(self.entries);
        class.fields = self.fields;
        class.methods = self.methods;
        class
    }
}

/// Straight-line bytecode with a running stack depth for `max_stack`.
#[derive(Default)]
pub struct CodeBuilder {
    pub bytes: Vec<u8>,
    depth: i32,
    max_depth: i32,
    pub max_locals: u16,
}

pub mod opcodes {
    pub const ACONST_NULL: u8 = 0x01;
    pub const ICONST_0: u8 = 0x03;
    pub const ICONST_1: u8 = 0x04;
    pub const BIPUSH: u8 = 0x10;
    pub const LDC_W: u8 = 0x13;
    pub const LDC2_W: u8 = 0x14;
    pub const AALOAD: u8 = 0x32;
    pub const AASTORE: u8 = 0x53;
    pub const ASTORE: u8 = 0x3a;
    pub const POP: u8 = 0x57;
    pub const POP2: u8 = 0x58;
    pub const DUP: u8 = 0x59;
    pub const IADD: u8 = 0x60;
    pub const IMUL: u8 = 0x68;
    pub const I2L: u8 = 0x85;
    pub const I2F: u8 = 0x86;
    pub const I2D: u8 = 0x87;
    pub const L2F: u8 = 0x89;
    pub const L2D: u8 = 0x8a;
    pub const F2D: u8 = 0x8d;
    pub const LCMP: u8 = 0x94;
    pub const FCMPL: u8 = 0x95;
    pub const DCMPL: u8 = 0x97;
    pub const IFEQ: u8 = 0x99;
    pub const IFNE: u8 = 0x9a;
    pub const IF_ICMPNE: u8 = 0xa0;
    pub const IF_ACMPNE: u8 = 0xa6;
    pub const GOTO: u8 = 0xa7;
    pub const IRETURN: u8 = 0xac;
    pub const LRETURN: u8 = 0xad;
    pub const FRETURN: u8 = 0xae;
    pub const DRETURN: u8 = 0xaf;
    pub const ARETURN: u8 = 0xb0;
    pub const RETURN: u8 = 0xb1;
    pub const GETSTATIC: u8 = 0xb2;
    pub const PUTSTATIC: u8 = 0xb3;
    pub const GETFIELD: u8 = 0xb4;
    pub const PUTFIELD: u8 = 0xb5;
    pub const INVOKEVIRTUAL: u8 = 0xb6;
    pub const INVOKESPECIAL: u8 = 0xb7;
    pub const INVOKESTATIC: u8 = 0xb8;
    pub const INVOKEINTERFACE: u8 = 0xb9;
    pub const NEW: u8 = 0xbb;
    pub const ANEWARRAY: u8 = 0xbd;
    pub const CHECKCAST: u8 = 0xc0;
    pub const INSTANCEOF: u8 = 0xc1;
    pub const ARRAYLENGTH: u8 = 0xbe;
    pub const ATHROW: u8 = 0xbf;
    pub const IFNULL: u8 = 0xc6;
}
use opcodes::*;

impl CodeBuilder {
    pub fn new(max_locals: u16) -> Self {
        CodeBuilder { max_locals, ..Default::default() }
    }

    /// Emits an opcode and records its net effect on the stack (in slots).
    pub fn op(&mut self, opcode: u8, stack_effect: i32) -> &mut Self {
        self.bytes.push(opcode);
        self.depth += stack_effect;
        self.max_depth = self.max_depth.max(self.depth);
        self
    }
    pub fn u1(&mut self, v: u8) -> &mut Self {
        self.bytes.push(v);
        self
    }
    pub fn u2(&mut self, v: u16) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn op_u2(&mut self, opcode: u8, v: u16, stack_effect: i32) -> &mut Self {
        self.op(opcode, stack_effect).u2(v)
    }

    /// A forward branch; returns the position to patch with [`CodeBuilder::patch`].
    pub fn branch(&mut self, opcode: u8, stack_effect: i32) -> usize {
        let at = self.bytes.len();
        self.op(opcode, stack_effect).u2(0);
        at
    }
    /// Points the branch at `at` to the current position.
    pub fn patch(&mut self, at: usize) {
        let off = (self.bytes.len() - at) as i16;
        self.bytes[at + 1..at + 3].copy_from_slice(&off.to_be_bytes());
    }
    /// Sets the stack depth at a branch target (the depth the branches arrive with).
    pub fn set_depth(&mut self, depth: i32) {
        self.depth = depth;
    }

    pub fn load(&mut self, kind: Kind, index: u16) -> &mut Self {
        let base = match kind {
            Kind::Long => 0x16,
            Kind::Float => 0x17,
            Kind::Double => 0x18,
            Kind::Reference => 0x19,
            _ => 0x15,
        };
        self.op(0xc4, kind.slots() as i32).u1(base).u2(index)
    }

    pub fn ret(&mut self, kind: Kind) -> &mut Self {
        let opcode = match kind {
            Kind::Void => RETURN,
            Kind::Long => LRETURN,
            Kind::Float => FRETURN,
            Kind::Double => DRETURN,
            Kind::Reference => ARETURN,
            _ => IRETURN,
        };
        self.op(opcode, -(kind.slots() as i32))
    }

    /// An invoke whose method takes `arg_slots` (receiver included) and returns `ret`.
    pub fn invoke(&mut self, opcode: u8, cp: u16, arg_slots: usize, ret: Kind) -> &mut Self {
        self.op_u2(opcode, cp, ret.slots() as i32 - arg_slots as i32);
        if opcode == INVOKEINTERFACE {
            self.u1(arg_slots as u8).u1(0);
        }
        self
    }

    pub fn finish(self) -> Code {
        Code {
            max_stack: self.max_depth.max(0) as u16 + 2,
            max_locals: self.max_locals,
            bytecode: self.bytes,
            exception_table: Vec::new(),
            line_numbers: Vec::new(),
            local_variables: Vec::new(),
            stack_map_table: None,
        }
    }
}

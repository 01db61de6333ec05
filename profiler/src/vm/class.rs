//! The runtime shapes of classes and methods, after loading and linking.

use super::decode::Code;
use super::heap::Ref;
use crate::classfile::descriptor::{Kind, MethodDescriptor};
use crate::classfile::{access, ClassFile};
use crate::classpath::Origin;
use std::cell::{Cell, OnceCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

pub type ClassId = u32;
pub type MethodId = u32;
/// An interned (name, descriptor) pair: the key of virtual and interface dispatch.
pub type SigId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitState {
    Linked,
    /// `<clinit>` is running (on the only thread that can run it: ours).
    Initializing,
    Initialized,
    /// `<clinit>` threw; later uses throw NoClassDefFoundError.
    Failed,
}

/// The element type of an array class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    Boolean,
    Byte,
    Char,
    Short,
    Int,
    Float,
    Long,
    Double,
    Ref,
}

impl Elem {
    pub fn from_descriptor(c: u8) -> Option<Elem> {
        Some(match c {
            b'Z' => Elem::Boolean,
            b'B' => Elem::Byte,
            b'C' => Elem::Char,
            b'S' => Elem::Short,
            b'I' => Elem::Int,
            b'F' => Elem::Float,
            b'J' => Elem::Long,
            b'D' => Elem::Double,
            b'L' | b'[' => Elem::Ref,
            _ => return None,
        })
    }
    /// The `newarray` type codes (JVMS §6.5.newarray).
    pub fn from_atype(t: u8) -> Option<Elem> {
        Some(match t {
            4 => Elem::Boolean,
            5 => Elem::Char,
            6 => Elem::Float,
            7 => Elem::Double,
            8 => Elem::Byte,
            9 => Elem::Short,
            10 => Elem::Int,
            11 => Elem::Long,
            _ => return None,
        })
    }
    pub fn descriptor(self) -> char {
        match self {
            Elem::Boolean => 'Z',
            Elem::Byte => 'B',
            Elem::Char => 'C',
            Elem::Short => 'S',
            Elem::Int => 'I',
            Elem::Float => 'F',
            Elem::Long => 'J',
            Elem::Double => 'D',
            Elem::Ref => 'L',
        }
    }
    /// Bytes per element, as HotSpot lays arrays out (references compressed to 4).
    pub fn size(self) -> usize {
        match self {
            Elem::Boolean | Elem::Byte => 1,
            Elem::Char | Elem::Short => 2,
            Elem::Int | Elem::Float | Elem::Ref => 4,
            Elem::Long | Elem::Double => 8,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassKind {
    Instance,
    Array {
        elem: Elem,
        component: ClassId,
        dims: u8,
    },
    /// `int.class` and friends; `void` too.
    Primitive(char),
}

#[derive(Debug, Clone)]
pub struct Field {
    pub name: Arc<str>,
    pub descriptor: Arc<str>,
    pub access: u16,
    /// Instance fields: index into the object's slots. Static fields: index into the VM's statics.
    pub slot: u32,
    pub constant_value: Option<u16>,
    /// Generic signature, for reflection (`Field.getGenericType`).
    pub signature: Option<Arc<str>>,
}

impl Field {
    pub fn is_static(&self) -> bool {
        self.access & access::STATIC != 0
    }
    pub fn kind(&self) -> Kind {
        crate::classfile::descriptor::field_kind(&self.descriptor)
    }
}

pub struct Class {
    pub id: ClassId,
    /// Internal name: `java/lang/String`, `[I`, or the primitive's name (`int`).
    pub name: Arc<str>,
    pub access: u16,
    pub kind: ClassKind,
    pub super_class: Option<ClassId>,
    pub interfaces: Vec<ClassId>,
    pub file: Option<Rc<ClassFile>>,
    pub origin: Origin,
    /// The user class's source file on disk, when found (for placing findings on the source's lines).
    pub source: Option<std::sync::Arc<std::path::Path>>,
    /// The defining class loader (0: the boot loader). Symbolic references of this class are
    /// resolved through it.
    pub loader: Ref,
    /// The protection domain given when the class was defined (0: none).
    pub protection_domain: Ref,
    /// `Class.setSigners` (JDK 17, a native there): the signers a class loader gave the class.
    pub signers: Ref,
    /// Declared fields, static and instance.
    pub fields: Vec<Field>,
    /// Instance slots, inherited ones included.
    pub instance_slots: u32,
    /// Instance slots that hold references, inherited ones included (the GC scans these).
    pub ref_slots: Vec<u32>,
    pub methods: Vec<MethodId>,
    pub vtable: Vec<MethodId>,
    /// Every instance method this class answers to, by signature (own, inherited, default).
    pub dispatch: HashMap<SigId, MethodId>,
    /// Every superclass and superinterface, and the class itself, sorted (for subtype tests).
    pub supertypes: Vec<ClassId>,
    pub mirror: Cell<u32>,
    pub init: Cell<InitState>,
    /// Resolved class references of the constant pool, by index (0 = not yet).
    pub class_refs: Vec<Cell<ClassId>>,
    /// Made by the VM (lambda proxies, linked call sites): left out of stack traces, as HotSpot
    /// hides its own spun classes.
    pub hidden: bool,
    /// The user's own code (its source is in the workspace), decided once at definition.
    pub user: bool,
    /// The nest host given at definition (a hidden class defined as a nestmate of its lookup
    /// class); otherwise the `NestHost` attribute decides.
    pub nest_host: Option<ClassId>,
    /// Whether the bytecode verifier has yet to pass this class (see `verification.rs`).
    pub verification: Cell<Verification>,
    /// The class file's bytes as a Java class loader defined it, or as JVMTI keeps them for
    /// retransformation once `cached` (after the transformers that cannot retransform). None for
    /// the boot loader's classes of the JDK image (read again from the image) and classes the VM
    /// generates.
    pub class_bytes: Option<Rc<[u8]>>,
    /// Whether `class_bytes` are HotSpot's cached class file: taken when the class was defined,
    /// redefined or retransformed while a retransformation-capable transformer was registered,
    /// and kept from then on (every retransformation starts from them).
    pub cached: bool,
    /// The bytes the class runs now, when they differ from `class_bytes` (transformed or
    /// redefined since).
    pub current_bytes: Option<Rc<[u8]>>,
}

/// Where a class stands with the bytecode verifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// The JDK's own classes and the VM's generated ones (HotSpot trusts the boot class path).
    Trusted,
    /// Defined by a Java class loader; verified before its code first runs (again after a
    /// failure, which then repeats the same VerifyError).
    Pending,
    Verifying,
    Verified,
}

impl Class {
    pub fn is_interface(&self) -> bool {
        self.access & access::INTERFACE != 0
    }
    pub fn is_array(&self) -> bool {
        matches!(self.kind, ClassKind::Array { .. })
    }
    /// The name as Java shows it: `java.lang.String`, `[I`, `[Ljava.lang.String;`.
    pub fn java_name(&self) -> String {
        self.name.replace('/', ".")
    }
    /// The package part of the internal name (`java/lang` for `java/lang/String`, empty for none).
    pub fn package(&self) -> &str {
        package_of(&self.name)
    }
    pub fn field(&self, name: &str, descriptor: Option<&str>) -> Option<&Field> {
        self.fields.iter().find(|f| &*f.name == name && descriptor.is_none_or(|d| &*f.descriptor == d))
    }
}

/// The package part of an internal class name (`java/lang` for `java/lang/String`). A hidden
/// class's name (`Foo/0x1`) counts from before its suffix.
pub fn package_of(name: &str) -> &str {
    let name = super::class_loaders::hidden_base_name(name);
    name.rsplit_once('/').map(|(p, _)| p).unwrap_or("")
}

pub struct Method {
    pub id: MethodId,
    pub class: ClassId,
    pub name: Arc<str>,
    pub descriptor: Arc<str>,
    pub access: u16,
    pub sig: SigId,
    pub parsed: MethodDescriptor,
    /// Slots the arguments take, the receiver included.
    pub arg_slots: u16,
    pub raw: Option<crate::classfile::Code>,
    /// Generic signature, for reflection.
    pub signature: Option<Arc<str>>,
    /// `@Hidden` (the JDK's own glue): left out of stack traces and walks.
    pub hidden: bool,
    /// `@CallerSensitive`: a method handle to it is bound to its caller (see natives/invoke.rs).
    pub caller_sensitive: bool,
    pub code: OnceCell<Rc<Code>>,
    pub vindex: Option<u32>,
    /// An obsolete method (its class was redefined while a frame ran it): the class file its
    /// code came from, whose constant pool that code names. None for every current method.
    pub obsolete: Option<Rc<ClassFile>>,
}

impl Method {
    pub fn is_static(&self) -> bool {
        self.access & access::STATIC != 0
    }
    pub fn is_native(&self) -> bool {
        self.access & access::NATIVE != 0
    }
    pub fn is_abstract(&self) -> bool {
        self.access & access::ABSTRACT != 0
    }
    pub fn is_private(&self) -> bool {
        self.access & access::PRIVATE != 0
    }
    pub fn is_synchronized(&self) -> bool {
        self.access & access::SYNCHRONIZED != 0
    }
    /// Calls to it go through `enter_slow` (native, abstract or synchronized).
    pub fn slow_entry(&self) -> bool {
        self.access & (access::NATIVE | access::ABSTRACT | access::SYNCHRONIZED) != 0
    }
    pub fn line_of(&self, bci: u16) -> Option<u16> {
        self.raw.as_ref().and_then(|c| c.line_of(bci))
    }
}

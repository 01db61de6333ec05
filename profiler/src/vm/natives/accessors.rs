//! Core reflection's accessors, kept in bytecode. On JDK 18+ `Method.invoke`,
//! `Constructor.newInstance` and `Field.get`/`set` go through method handles
//! (`MethodHandleAccessorFactory`), which this VM does not run; on JDK 17 through the native
//! accessors for a member's first 15 calls. A native accessor is a nested VM call, where other
//! threads are not scheduled: a reflective call that waits for a thread (a test framework calling
//! a test that joins its worker) would wait forever. So:
//! - methods and constructors get a generated accessor ([`call_accessor_class`]) that makes the
//!   call in bytecode and leaves every other case (conversions, errors) to the JDK's native
//!   accessor, whose messages are HotSpot's: made by the factory on JDK 18+
//!   (`newMethodAccessor`, `newConstructorAccessor`), put in front of the native accessor by
//!   `Delegating{Method,Constructor}AccessorImpl`'s constructor on JDK 17;
//! - `newFieldAccessor` (JDK 18+) builds, per field, a subclass of the JDK's own accessor for the
//!   field's type (`MethodHandleIntegerFieldAccessorImpl`, …) whose two core methods read and
//!   write the field with `getfield`/`putfield` bytecode. Every other method (boxing, widening,
//!   `set(Object)`'s unboxing) and every exception message stay the JDK's, and the access stays
//!   visible to trackers. JDK 17 reads fields through Unsafe and never calls the factory.

use super::{Registry, VmResult};
use crate::classfile::builder::{opcodes::*, ClassBuilder, CodeBuilder};
use crate::classfile::descriptor::{field_kind, Kind, MethodDescriptor};
use crate::classfile::{access, ClassFile, ExceptionHandler};
use crate::vm::class::ClassId;
use crate::vm::class::MethodId;
use crate::vm::heap::Ref;
use crate::vm::indy::{cast_name, wrapper};
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};

const FACTORY: &str = "jdk/internal/reflect/MethodHandleAccessorFactory";
const OBJECT: &str = "java/lang/Object";
const IAE: &str = "java/lang/IllegalArgumentException";
/// The constructor every `MethodHandle<Type>FieldAccessorImpl` has: (field, getter, setter,
/// isReadOnly, isStatic). The generated accessor passes no handles.
const BASE_INIT: &str = "(Ljava/lang/reflect/Field;Ljava/lang/invoke/MethodHandle;Ljava/lang/invoke/MethodHandle;ZZ)V";

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    reg.add(
        FACTORY,
        "newMethodAccessor",
        "(Ljava/lang/reflect/Method;Z)Ljdk/internal/reflect/MethodAccessorImpl;",
        |vm, t, a| {
            let (method, caller_sensitive) = (a[0] as Ref, a[1] != 0);
            vm.pinning(&[method], |vm| vm.new_call_accessor(t, method, false, caller_sensitive)).map(|r| r as u64)
        },
    );
    reg.add(
        FACTORY,
        "newConstructorAccessor",
        "(Ljava/lang/reflect/Constructor;)Ljdk/internal/reflect/ConstructorAccessorImpl;",
        |vm, t, a| {
            let ctor = a[0] as Ref;
            vm.pinning(&[ctor], |vm| vm.new_call_accessor(t, ctor, true, false)).map(|r| r as u64)
        },
    );
    reg.add(
        "jdk/internal/reflect/DelegatingMethodAccessorImpl",
        "<init>",
        "(Ljdk/internal/reflect/MethodAccessorImpl;)V",
        |vm, t, a| vm.delegate_in_bytecode(t, a[0] as Ref, a[1] as Ref, false).map(|_| 0),
    );
    reg.add(
        "jdk/internal/reflect/DelegatingConstructorAccessorImpl",
        "<init>",
        "(Ljdk/internal/reflect/ConstructorAccessorImpl;)V",
        |vm, t, a| vm.delegate_in_bytecode(t, a[0] as Ref, a[1] as Ref, true).map(|_| 0),
    );
    reg.add(
        FACTORY,
        "newFieldAccessor",
        "(Ljava/lang/reflect/Field;Z)Ljdk/internal/reflect/FieldAccessorImpl;",
        |vm, t, a| {
            let (field, read_only) = (a[0] as Ref, a[1] != 0);
            vm.pinning(&[field], |vm| vm.new_field_accessor(t, field, read_only)).map(|r| r as u64)
        },
    );
}

/// The JDK accessor class for a field of this kind, and the names of its two core methods.
fn base_for(kind: Kind) -> (&'static str, &'static str, &'static str) {
    let base = |name| match name {
        "Object" => "jdk/internal/reflect/MethodHandleObjectFieldAccessorImpl",
        "Boolean" => "jdk/internal/reflect/MethodHandleBooleanFieldAccessorImpl",
        "Byte" => "jdk/internal/reflect/MethodHandleByteFieldAccessorImpl",
        "Character" => "jdk/internal/reflect/MethodHandleCharacterFieldAccessorImpl",
        "Short" => "jdk/internal/reflect/MethodHandleShortFieldAccessorImpl",
        "Integer" => "jdk/internal/reflect/MethodHandleIntegerFieldAccessorImpl",
        "Long" => "jdk/internal/reflect/MethodHandleLongFieldAccessorImpl",
        "Float" => "jdk/internal/reflect/MethodHandleFloatFieldAccessorImpl",
        _ => "jdk/internal/reflect/MethodHandleDoubleFieldAccessorImpl",
    };
    match kind {
        Kind::Boolean => (base("Boolean"), "getBoolean", "setBoolean"),
        Kind::Byte => (base("Byte"), "getByte", "setByte"),
        Kind::Char => (base("Character"), "getChar", "setChar"),
        Kind::Short => (base("Short"), "getShort", "setShort"),
        Kind::Int => (base("Integer"), "getInt", "setInt"),
        Kind::Long => (base("Long"), "getLong", "setLong"),
        Kind::Float => (base("Float"), "getFloat", "setFloat"),
        Kind::Double => (base("Double"), "getDouble", "setDouble"),
        _ => (base("Object"), "get", "set"),
    }
}

/// `Objects.requireNonNull(obj)`, then the receiver check the JDK's handle makes: an object of
/// another class is an IllegalArgumentException built by `message` (the base class's own).
fn check_receiver(cb: &mut ClassBuilder, code: &mut CodeBuilder, base: &str, decl: &str, message: &str) {
    let require = cb.method_ref("java/util/Objects", "requireNonNull", "(Ljava/lang/Object;)Ljava/lang/Object;", false);
    code.load(Kind::Reference, 1).invoke(INVOKESTATIC, require, 1, Kind::Reference).op(POP, -1);
    let decl_class = cb.class(decl);
    code.load(Kind::Reference, 1).op_u2(INSTANCEOF, decl_class, 0);
    let ok = code.branch(IFNE, -1);
    let m = cb.method_ref(base, message, &format!("(L{OBJECT};)L{IAE};"), false);
    code.load(Kind::Reference, 0).load(Kind::Reference, 1).invoke(INVOKEVIRTUAL, m, 2, Kind::Reference).op(ATHROW, -1);
    code.patch(ok);
    code.set_depth(0);
    code.load(Kind::Reference, 1).op_u2(CHECKCAST, decl_class, 0);
}

/// The accessor class for field `name` (descriptor `desc`) of class `decl`.
fn accessor_class(class_name: &str, decl: &str, name: &str, desc: &str, is_static: bool) -> ClassFile {
    let kind = field_kind(desc);
    let (base, get, set) = base_for(kind);
    let mut cb = ClassBuilder::new();
    let field = cb.field_ref(decl, name, desc);
    let value_desc = if kind == Kind::Reference { format!("L{OBJECT};") } else { desc.to_string() };
    let value_kind = if kind == Kind::Reference { Kind::Reference } else { kind };

    // get(obj): the field's value.
    let mut code = CodeBuilder::new(2);
    if is_static {
        code.op_u2(GETSTATIC, field, value_kind.slots() as i32);
    } else {
        check_receiver(&mut cb, &mut code, base, decl, "newGetIllegalArgumentException");
        code.op_u2(GETFIELD, field, value_kind.slots() as i32 - 1);
    }
    code.ret(value_kind);
    cb.method(access::PUBLIC, get, &format!("(L{OBJECT};){value_desc}"), code.finish());

    // set(obj, value): final fields refuse, as the JDK's accessor does.
    let mut code = CodeBuilder::new(2 + value_kind.slots() as u16);
    let is_read_only = cb.method_ref(base, "isReadOnly", "()Z", false);
    let ensure_obj = cb.method_ref(base, "ensureObj", &format!("(L{OBJECT};)V"), false);
    let refuse = cb.method_ref(base, "throwFinalFieldIllegalAccessException", &format!("({value_desc})V"), false);
    if kind == Kind::Reference {
        // The receiver first (ensureObj), then finality, then the value's type.
        code.load(Kind::Reference, 0).load(Kind::Reference, 1).invoke(INVOKEVIRTUAL, ensure_obj, 2, Kind::Void);
    }
    code.load(Kind::Reference, 0).invoke(INVOKEVIRTUAL, is_read_only, 1, Kind::Int);
    let writable = code.branch(IFEQ, -1);
    if kind != Kind::Reference {
        code.load(Kind::Reference, 0).load(Kind::Reference, 1).invoke(INVOKEVIRTUAL, ensure_obj, 2, Kind::Void);
    }
    code.load(Kind::Reference, 0).load(value_kind, 2).invoke(INVOKEVIRTUAL, refuse, 1 + value_kind.slots(), Kind::Void);
    code.ret(Kind::Void);
    code.patch(writable);
    code.set_depth(0);
    let value_class = (kind == Kind::Reference).then(|| cb.class(cast_name(desc)));
    if let Some(value_class) = value_class {
        code.load(Kind::Reference, 2);
        let null = code.branch(IFNULL, -1);
        code.load(Kind::Reference, 2).op_u2(INSTANCEOF, value_class, 0);
        let instance = code.branch(IFNE, -1);
        let wrong = cb.method_ref(base, "throwSetIllegalArgumentException", &format!("(L{OBJECT};)V"), false);
        code.load(Kind::Reference, 0).load(Kind::Reference, 2).invoke(INVOKEVIRTUAL, wrong, 2, Kind::Void);
        code.ret(Kind::Void);
        code.patch(null);
        code.patch(instance);
        code.set_depth(0);
    }
    if is_static {
        code.load(value_kind, 2);
    } else {
        check_receiver(&mut cb, &mut code, base, decl, "newSetIllegalArgumentException");
        code.load(value_kind, 2);
    }
    if let Some(value_class) = value_class {
        code.op_u2(CHECKCAST, value_class, 0);
    }
    if is_static {
        code.op_u2(PUTSTATIC, field, -(value_kind.slots() as i32));
    } else {
        code.op_u2(PUTFIELD, field, -(value_kind.slots() as i32) - 1);
    }
    code.ret(Kind::Void);
    cb.method(access::PUBLIC, set, &format!("(L{OBJECT};{value_desc})V"), code.finish());
    cb.build(class_name, base, &[], access::PUBLIC | access::FINAL | access::SUPER)
}

impl<T: Tracker> Vm<T> {
    /// `MethodHandleAccessorFactory.newMethodAccessor(method, callerSensitive)` and
    /// `newConstructorAccessor(ctor)` (JDK 18+): the JDK's native accessor, in bytecode where it can.
    fn new_call_accessor(
        &mut self,
        t: &mut JThread,
        member: Ref,
        construct: bool,
        caller_sensitive: bool,
    ) -> VmResult<Ref> {
        let (holder, desc) = match construct {
            true => (
                "jdk/internal/reflect/DirectConstructorHandleAccessor",
                "(Ljava/lang/reflect/Constructor;)Ljdk/internal/reflect/ConstructorAccessorImpl;",
            ),
            false => (
                "jdk/internal/reflect/DirectMethodHandleAccessor",
                "(Ljava/lang/reflect/Method;Z)Ljdk/internal/reflect/MethodAccessorImpl;",
            ),
        };
        let holder_class = self.load_or_throw(t, holder)?;
        let make_native = self.find_declared_method(holder_class, "nativeAccessor", desc).ok_or_else(|| {
            Fault::Fatal(VmError::Unsupported(format!("reflection on this JDK ({holder}.nativeAccessor{desc})")))
        })?;
        let args: &[u64] = if construct { &[member as u64] } else { &[member as u64, caller_sensitive as u64] };
        let native_accessor = self.invoke(t, make_native, args)? as Ref;
        self.pinning(&[native_accessor], |vm| vm.in_bytecode(t, member, construct, native_accessor))
    }

    /// JDK 17's `Delegating{Method,Constructor}AccessorImpl(delegate)`, made for the native
    /// accessor of every reflected member: it delegates to the native accessor in bytecode
    /// instead (which the native one still replaces after 15 of its own calls, as in HotSpot).
    fn delegate_in_bytecode(
        &mut self,
        t: &mut JThread,
        this: Ref,
        native_accessor: Ref,
        construct: bool,
    ) -> VmResult<()> {
        let native_class = &*self.classes[self.heap.get(native_accessor).class as usize].name;
        let member = match native_class {
            "jdk/internal/reflect/NativeMethodAccessorImpl" => self.get_named(native_accessor, "method") as Ref,
            "jdk/internal/reflect/NativeConstructorAccessorImpl" => self.get_named(native_accessor, "c") as Ref,
            _ => 0,
        };
        let delegate = match member {
            0 => native_accessor,
            member => self.pinning(&[this, native_accessor, member], |vm| {
                vm.in_bytecode(t, member, construct, native_accessor)
            })?,
        };
        self.set_named(this, "delegate", delegate as u64);
        Ok(())
    }

    /// An accessor that calls `member` in bytecode (see [`call_accessor_class`]), with
    /// `native_accessor` for what it leaves to the JDK; or `native_accessor` itself where
    /// bytecode cannot call the member as reflection does (caller-sensitive and native methods,
    /// signature-polymorphic ones, members of hidden classes, which no constant pool can name).
    /// The declaring class is initialised first, as the JDK does, so that its initializer's
    /// failure is not wrapped.
    fn in_bytecode(&mut self, t: &mut JThread, member: Ref, construct: bool, native_accessor: Ref) -> VmResult<Ref> {
        let m = self.get_named(member, "slot") as MethodId;
        let method = &self.methods[m as usize];
        let (decl, is_static, private) = (method.class, method.is_static(), method.is_private());
        let class = &self.classes[decl as usize];
        let polymorphic = matches!(&*class.name, "java/lang/invoke/MethodHandle" | "java/lang/invoke/VarHandle");
        if method.caller_sensitive || method.is_native() || polymorphic || class.hidden || method.arg_slots >= 254 {
            return Ok(native_accessor);
        }
        self.initialize(t, decl)?;
        let call = match () {
            _ if construct => Call::Construct,
            _ if is_static => Call::Static,
            _ if private => Call::Special,
            _ if self.classes[decl as usize].is_interface() => Call::Interface,
            _ => Call::Virtual,
        };
        let method = &self.methods[m as usize];
        let (name, parsed) = (method.name.clone(), method.parsed.clone());
        self.generated_classes += 1;
        let decl_name = self.classes[decl as usize].name.clone();
        let kind = if construct { "ConstructorAccessor" } else { "MethodAccessor" };
        let class_name = format!("{decl_name}$${kind}${}", self.generated_classes);
        let decl_is_interface = self.classes[decl as usize].is_interface();
        let file = call_accessor_class(&class_name, &decl_name, decl_is_interface, &name, &parsed, call);
        let accessor_class = self.define_generated(t, decl, file)?;
        self.initialize(t, accessor_class)?;
        let accessor = self.alloc_instance(accessor_class);
        let init =
            self.find_declared_method(accessor_class, "<init>", "()V").expect("the generated accessor has <init>");
        self.pinning(&[accessor], |vm| vm.invoke(t, init, &[accessor as u64]))?;
        self.set_named(accessor, "fallback", native_accessor as u64);
        Ok(accessor)
    }

    /// `MethodHandleAccessorFactory.newFieldAccessor(field, isReadOnly)`: an instance of a
    /// generated accessor for the field (its declaring class initialised first, as the JDK does).
    fn new_field_accessor(&mut self, t: &mut JThread, field: Ref, read_only: bool) -> VmResult<Ref> {
        let decl = self.class_of_mirror(self.get_named(field, "clazz") as Ref);
        let slot = self.get_named(field, "slot") as u32;
        let modifiers = self.get_named(field, "modifiers") as u16;
        let is_static = modifiers & access::STATIC != 0;
        let f = self.classes[decl as usize]
            .fields
            .iter()
            .find(|f| f.slot == slot && f.is_static() == is_static)
            .ok_or_else(|| Fault::Fatal(VmError::Internal(format!("reflected field slot {slot} not found"))))?;
        let (name, desc) = (f.name.clone(), f.descriptor.clone());
        self.initialize(t, decl)?;
        let (base_name, _, _) = base_for(field_kind(&desc));
        let base = self.load_or_throw(t, base_name)?;
        let init = self.find_declared_method(base, "<init>", BASE_INIT).ok_or_else(|| {
            Fault::Fatal(VmError::Unsupported(format!(
                "field reflection on this JDK ({base_name} without {BASE_INIT})"
            )))
        })?;
        self.generated_classes += 1;
        let decl_name = self.classes[decl as usize].name.clone();
        let class_name = format!("{decl_name}$$FieldAccessor${}", self.generated_classes);
        let file = accessor_class(&class_name, &decl_name, &name, &desc, is_static);
        let class: ClassId = self.define_generated(t, decl, file)?;
        self.initialize(t, class)?;
        let accessor = self.alloc_instance(class);
        self.invoke(t, init, &[accessor as u64, field as u64, 0, 0, read_only as u64, is_static as u64])?;
        Ok(accessor)
    }
}

/// How a generated accessor calls its member.
#[derive(Clone, Copy, PartialEq)]
enum Call {
    Static,
    Virtual,
    Interface,
    /// A private instance method: no dispatch.
    Special,
    Construct,
}

const METHOD_ACCESSOR: &str = "jdk/internal/reflect/MethodAccessorImpl";
const CONSTRUCTOR_ACCESSOR: &str = "jdk/internal/reflect/ConstructorAccessorImpl";
const ITE: &str = "java/lang/reflect/InvocationTargetException";

/// The accessor class that calls `decl.name desc` as `Method.invoke` (or, for a constructor,
/// `Constructor.newInstance`) does, in bytecode: the call is a frame of the interpreter's loop,
/// where the thread can wait for others (the JDK's native accessor is a nested VM call, where it
/// cannot). Only the usual case is bytecode: a receiver of the declaring class, the right number
/// of arguments, each of the parameter's type or its exact box. Anything else — a null or
/// foreign receiver, a widening, a wrong argument — goes to the JDK's native accessor kept in
/// `fallback`, which converts or throws exactly as HotSpot's accessor does. What the member
/// throws is wrapped in an InvocationTargetException.
fn call_accessor_class(
    class_name: &str,
    decl: &str,
    decl_is_interface: bool,
    name: &str,
    desc: &MethodDescriptor,
    call: Call,
) -> ClassFile {
    let construct = call == Call::Construct;
    let (base, entry, entry_desc) = match construct {
        true => (CONSTRUCTOR_ACCESSOR, "newInstance", format!("([L{OBJECT};)L{OBJECT};")),
        false => (METHOD_ACCESSOR, "invoke", format!("(L{OBJECT};[L{OBJECT};)L{OBJECT};")),
    };
    let args: u16 = if construct { 1 } else { 2 };
    let mut cb = ClassBuilder::new();
    cb.field(access::PRIVATE, "fallback", &format!("L{base};"));
    let fallback = cb.field_ref(class_name, "fallback", &format!("L{base};"));
    let decl_class = cb.class(decl);
    let mut code = CodeBuilder::new(args + 2);
    let mut to_fallback: Vec<usize> = Vec::new();
    let push_int = |cb: &mut ClassBuilder, code: &mut CodeBuilder, v: usize| {
        if v <= 127 {
            code.op(BIPUSH, 1).u1(v as u8);
        } else {
            let c = cb.integer(v as i32);
            code.op_u2(LDC_W, c, 1);
        }
    };
    let element = |cb: &mut ClassBuilder, code: &mut CodeBuilder, i: usize| {
        code.load(Kind::Reference, args);
        push_int(cb, code, i);
        code.op(AALOAD, -1);
    };
    // The receiver.
    if matches!(call, Call::Virtual | Call::Interface | Call::Special) {
        code.load(Kind::Reference, 1).op_u2(INSTANCEOF, decl_class, 0);
        to_fallback.push(code.branch(IFEQ, -1));
    }
    // The argument count (no array stands for none).
    let n = desc.params.len();
    code.load(Kind::Reference, args);
    if n == 0 {
        let none = code.branch(IFNULL, -1);
        code.load(Kind::Reference, args).op(ARRAYLENGTH, 0);
        to_fallback.push(code.branch(IFNE, -1));
        code.patch(none);
        code.set_depth(0);
    } else {
        to_fallback.push(code.branch(IFNULL, -1));
        code.load(Kind::Reference, args).op(ARRAYLENGTH, 0);
        push_int(&mut cb, &mut code, n);
        to_fallback.push(code.branch(IF_ICMPNE, -2));
    }
    // Each argument: of the parameter's type (or null), or a primitive's exact box.
    for (i, (kind, ty)) in desc.params.iter().zip(&desc.param_types).enumerate() {
        let class = match kind {
            Kind::Reference if ty == &format!("L{OBJECT};") => continue,
            Kind::Reference => cast_name(ty),
            _ => wrapper(*kind).0,
        };
        let class = cb.class(class);
        let mut null = None;
        if *kind == Kind::Reference {
            element(&mut cb, &mut code, i);
            null = Some(code.branch(IFNULL, -1));
        }
        element(&mut cb, &mut code, i);
        code.op_u2(INSTANCEOF, class, 0);
        to_fallback.push(code.branch(IFEQ, -1));
        if let Some(null) = null {
            code.patch(null);
        }
    }
    // The call, with the arguments unboxed.
    // An interface's static and private methods are named by an InterfaceMethodref too.
    let member = cb.method_ref(decl, name, &desc_string(desc), decl_is_interface);
    match call {
        Call::Construct => {
            code.op_u2(NEW, decl_class, 1).op(DUP, 1);
        }
        Call::Static => {}
        _ => {
            code.load(Kind::Reference, 1).op_u2(CHECKCAST, decl_class, 0);
        }
    }
    for (i, (kind, ty)) in desc.params.iter().zip(&desc.param_types).enumerate() {
        element(&mut cb, &mut code, i);
        match kind {
            Kind::Reference if ty == &format!("L{OBJECT};") => {}
            Kind::Reference => {
                let class = cb.class(cast_name(ty));
                code.op_u2(CHECKCAST, class, 0);
            }
            _ => {
                let (boxed, unbox, prim) = wrapper(*kind);
                let class = cb.class(boxed);
                let unbox = cb.method_ref(boxed, unbox, &format!("(){prim}"), false);
                code.op_u2(CHECKCAST, class, 0).invoke(INVOKEVIRTUAL, unbox, 1, *kind);
            }
        }
    }
    let arg_slots: usize = desc.params.iter().map(|k| k.slots()).sum::<usize>() + (call != Call::Static) as usize;
    let start = code.bytes.len() as u16;
    let (opcode, ret) = match call {
        Call::Static => (INVOKESTATIC, desc.ret),
        Call::Virtual => (INVOKEVIRTUAL, desc.ret),
        Call::Interface => (INVOKEINTERFACE, desc.ret),
        Call::Special | Call::Construct => (INVOKESPECIAL, desc.ret),
    };
    code.invoke(opcode, member, arg_slots, ret);
    let end = code.bytes.len() as u16;
    match ret {
        Kind::Void if !construct => {
            code.op(ACONST_NULL, 1);
        }
        Kind::Void | Kind::Reference => {}
        prim => {
            let (boxed, _, p) = wrapper(prim);
            let value_of = cb.method_ref(boxed, "valueOf", &format!("({p})L{boxed};"), false);
            code.invoke(INVOKESTATIC, value_of, prim.slots(), Kind::Reference);
        }
    }
    code.ret(Kind::Reference);
    // What the member threw, wrapped.
    let handler = code.bytes.len() as u16;
    code.set_depth(1);
    let ite = cb.class(ITE);
    let ite_init = cb.method_ref(ITE, "<init>", "(Ljava/lang/Throwable;)V", false);
    code.op(ASTORE, -1).u1((args + 1) as u8);
    code.op_u2(NEW, ite, 1).op(DUP, 1).load(Kind::Reference, args + 1);
    code.invoke(INVOKESPECIAL, ite_init, 2, Kind::Void).op(ATHROW, -1);
    // The JDK's native accessor for everything else.
    for at in to_fallback {
        code.patch(at);
    }
    code.set_depth(0);
    let delegate = cb.method_ref(base, entry, &entry_desc, false);
    code.load(Kind::Reference, 0).op_u2(GETFIELD, fallback, 0);
    for local in 1..=args {
        code.load(Kind::Reference, local);
    }
    code.invoke(INVOKEVIRTUAL, delegate, 1 + args as usize, Kind::Reference).ret(Kind::Reference);
    let mut body = code.finish();
    body.exception_table.push(ExceptionHandler { start_pc: start, end_pc: end, handler_pc: handler, catch_type: 0 });
    cb.method(access::PUBLIC, entry, &entry_desc, body);

    let mut init = CodeBuilder::new(1);
    let super_init = cb.method_ref(base, "<init>", "()V", false);
    init.load(Kind::Reference, 0).invoke(INVOKESPECIAL, super_init, 1, Kind::Void).ret(Kind::Void);
    cb.method(access::PUBLIC, "<init>", "()V", init.finish());
    cb.build(class_name, base, &[], access::PUBLIC | access::FINAL | access::SUPER)
}

fn desc_string(desc: &MethodDescriptor) -> String {
    format!("({}){}", desc.param_types.concat(), desc.return_type)
}

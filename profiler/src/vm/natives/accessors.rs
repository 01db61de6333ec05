//! Core reflection on JDK 18+, whose `Method.invoke`, `Constructor.newInstance` and
//! `Field.get`/`set` go through method handles (`MethodHandleAccessorFactory`) once
//! `java.lang.invoke` is initialised. This VM does not run method handles, so it replaces two
//! pieces of that factory:
//! - `useNativeAccessor` says yes for every method and constructor: they take the JDK's native
//!   accessors, which reflect.rs implements (as before `java.lang.invoke` starts, and on JDK 17).
//! - `newFieldAccessor` builds, per field, a subclass of the JDK's own accessor for the field's
//!   type (`MethodHandleIntegerFieldAccessorImpl`, …) whose two core methods read and write the
//!   field with `getfield`/`putfield` bytecode. Every other method (boxing, widening,
//!   `set(Object)`'s unboxing) and every exception message stay the JDK's, and the access stays
//!   visible to trackers.
//!
//! JDK 17 reflects through Unsafe and the native accessors and never calls the factory.

use super::{Registry, VmResult};
use crate::classfile::builder::{opcodes::*, ClassBuilder, CodeBuilder};
use crate::classfile::descriptor::{field_kind, Kind};
use crate::classfile::{access, ClassFile};
use crate::vm::class::ClassId;
use crate::vm::heap::Ref;
use crate::vm::indy::cast_name;
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};

const FACTORY: &str = "jdk/internal/reflect/MethodHandleAccessorFactory";
const OBJECT: &str = "java/lang/Object";
const IAE: &str = "java/lang/IllegalArgumentException";
/// The constructor every `MethodHandle<Type>FieldAccessorImpl` has: (field, getter, setter,
/// isReadOnly, isStatic). The generated accessor passes no handles.
const BASE_INIT: &str = "(Ljava/lang/reflect/Field;Ljava/lang/invoke/MethodHandle;Ljava/lang/invoke/MethodHandle;ZZ)V";

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    reg.add(FACTORY, "useNativeAccessor", "(Ljava/lang/reflect/Executable;)Z", |_, _, _| Ok(1));
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

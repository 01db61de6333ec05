//! `invokedynamic`, linked by the VM itself. Each call site becomes an ordinary static method in
//! a class the VM builds (see `classfile::builder`), and the site is quickened into a direct call:
//!
//! - `LambdaMetafactory.metafactory`/`altMetafactory`: a proxy class implementing the functional
//!   interface (plus markers and bridges), with one field per captured value, a static factory
//!   (non-capturing lambdas return one shared instance, as on HotSpot), and the interface method,
//!   which adapts arguments (casts, boxing, unboxing, widening) and calls the implementation.
//! - `StringConcatFactory.makeConcat[WithConstants]`: a StringBuilder chain over the recipe, the
//!   same code `javac -XDstringConcat=inline` emits, so every character copy stays observable.
//! - `ObjectMethods.bootstrap`: a record's `toString`, `equals` and `hashCode`, with the JDK's
//!   formats and hash combination (`31 * h + hash(field)`).
//!
//! Any other bootstrap method is run by the JDK itself (see method_handles.rs).

use super::class::ClassId;
use super::ops::Op;
use super::{Fault, JThread, Tracker, Vm, VmError, VmResult};
use crate::classfile::builder::{opcodes::*, ClassBuilder, CodeBuilder};
use crate::classfile::descriptor::{Kind, MethodDescriptor};
use crate::classfile::{access, Constant, ConstantPool};
use std::sync::Arc;

/// A static argument of a bootstrap method.
#[derive(Debug, Clone)]
enum BsmArg {
    MethodType(Arc<str>),
    Handle {
        kind: u8,
        class: Arc<str>,
        name: Arc<str>,
        descriptor: Arc<str>,
        interface: bool,
    },
    Str(Arc<str>),
    Int(i32),
    Long(i64),
    /// Float and double constants (javac does not emit them as concat constants).
    Float,
    Double,
    Class(Arc<str>),
}

const REF_GET_FIELD: u8 = 1;
const REF_INVOKE_VIRTUAL: u8 = 5;
const REF_INVOKE_STATIC: u8 = 6;
const REF_INVOKE_SPECIAL: u8 = 7;
const REF_NEW_INVOKE_SPECIAL: u8 = 8;
const REF_INVOKE_INTERFACE: u8 = 9;

const OBJECT: &str = "java/lang/Object";
const SB: &str = "java/lang/StringBuilder";

fn bsm_arg(cp: &ConstantPool, index: u16) -> Result<BsmArg, String> {
    Ok(match cp.get(index) {
        Some(Constant::MethodType { descriptor }) => BsmArg::MethodType(cp.utf8(*descriptor)?.clone()),
        Some(Constant::MethodHandle { kind, reference }) => {
            let r = cp.member_ref(*reference)?;
            BsmArg::Handle {
                kind: *kind,
                class: r.class,
                name: r.name,
                descriptor: r.descriptor,
                interface: r.interface,
            }
        }
        Some(Constant::String { utf8 }) => BsmArg::Str(cp.utf8(*utf8)?.clone()),
        Some(Constant::Integer(v)) => BsmArg::Int(*v),
        Some(Constant::Long(v)) => BsmArg::Long(*v),
        Some(Constant::Float(_)) => BsmArg::Float,
        Some(Constant::Double(_)) => BsmArg::Double,
        Some(Constant::Class { name }) => BsmArg::Class(cp.utf8(*name)?.clone()),
        other => return Err(format!("bootstrap argument {other:?}")),
    })
}

/// The class name a `checkcast` of this reference descriptor names (`[I` for arrays).
/// The class constant a field descriptor names (`Ljava/lang/String;` → `java/lang/String`, arrays as is).
pub(super) fn cast_name(desc: &str) -> &str {
    desc.strip_prefix('L').and_then(|d| d.strip_suffix(';')).unwrap_or(desc)
}

pub(super) fn wrapper(prim: Kind) -> (&'static str, &'static str, &'static str) {
    // (wrapper class, unboxing method, primitive descriptor)
    match prim {
        Kind::Boolean => ("java/lang/Boolean", "booleanValue", "Z"),
        Kind::Byte => ("java/lang/Byte", "byteValue", "B"),
        Kind::Char => ("java/lang/Character", "charValue", "C"),
        Kind::Short => ("java/lang/Short", "shortValue", "S"),
        Kind::Int => ("java/lang/Integer", "intValue", "I"),
        Kind::Float => ("java/lang/Float", "floatValue", "F"),
        Kind::Long => ("java/lang/Long", "longValue", "J"),
        Kind::Double => ("java/lang/Double", "doubleValue", "D"),
        _ => (OBJECT, "", ""),
    }
}

fn kind_of(desc: &str) -> Kind {
    crate::classfile::descriptor::field_kind(desc)
}

/// Primitive widening from `from` to `to` (JLS §5.1.2), as far as LambdaMetafactory allows.
fn widen(code: &mut CodeBuilder, from: Kind, to: Kind) {
    let int_like = |k: Kind| matches!(k, Kind::Int | Kind::Short | Kind::Byte | Kind::Char | Kind::Boolean);
    match (from, to) {
        (f, Kind::Long) if int_like(f) => code.op(I2L, 1),
        (f, Kind::Float) if int_like(f) => code.op(I2F, 0),
        (f, Kind::Double) if int_like(f) => code.op(I2D, 1),
        (Kind::Long, Kind::Float) => code.op(L2F, -1),
        (Kind::Long, Kind::Double) => code.op(L2D, 0),
        (Kind::Float, Kind::Double) => code.op(F2D, 1),
        _ => code,
    };
}

/// Converts the value on top of the stack from type `from` to type `to` (descriptors).
fn adapt(cb: &mut ClassBuilder, code: &mut CodeBuilder, from: &str, to: &str) {
    if from == to {
        return;
    }
    let (fk, tk) = (kind_of(from), kind_of(to));
    match (fk == Kind::Reference, tk == Kind::Reference) {
        (true, true) => {
            if to != "Ljava/lang/Object;" {
                let c = cb.class(cast_name(to));
                code.op_u2(CHECKCAST, c, 0);
            }
        }
        (false, false) => widen(code, fk, tk),
        (false, true) => {
            let (w, _, p) = wrapper(fk);
            let m = cb.method_ref(w, "valueOf", &format!("({p})L{w};"), false);
            code.invoke(INVOKESTATIC, m, fk.slots(), Kind::Reference);
        }
        (true, false) => {
            // Unbox through the source's own wrapper when it names one (Integer → long), else the target's.
            let source_prim = ["Z", "B", "C", "S", "I", "F", "J", "D"]
                .iter()
                .map(|p| kind_of(p))
                .find(|&k| format!("L{};", wrapper(k).0) == from);
            let prim = source_prim.unwrap_or(tk);
            let (w, unbox, p) = wrapper(prim);
            let c = cb.class(w);
            code.op_u2(CHECKCAST, c, 0);
            let m = cb.method_ref(w, unbox, &format!("(){p}"), false);
            code.invoke(INVOKEVIRTUAL, m, 1, prim);
            widen(code, prim, tk);
        }
    }
}

/// `StringBuilder.append` overload for a value of this descriptor.
fn append_descriptor(desc: &str) -> &'static str {
    match desc {
        "Z" => "(Z)Ljava/lang/StringBuilder;",
        "C" => "(C)Ljava/lang/StringBuilder;",
        "B" | "S" | "I" => "(I)Ljava/lang/StringBuilder;",
        "J" => "(J)Ljava/lang/StringBuilder;",
        "F" => "(F)Ljava/lang/StringBuilder;",
        "D" => "(D)Ljava/lang/StringBuilder;",
        "Ljava/lang/String;" => "(Ljava/lang/String;)Ljava/lang/StringBuilder;",
        _ => "(Ljava/lang/Object;)Ljava/lang/StringBuilder;",
    }
}

fn append(cb: &mut ClassBuilder, code: &mut CodeBuilder, desc: &str) {
    let d = append_descriptor(desc);
    let m = cb.method_ref(SB, "append", d, false);
    let slots = 1 + kind_of(&d[1..]).slots();
    code.invoke(INVOKEVIRTUAL, m, slots, Kind::Reference);
}

fn append_literal(cb: &mut ClassBuilder, code: &mut CodeBuilder, s: &str) {
    let c = cb.string(s);
    code.op_u2(LDC_W, c, 1);
    append(cb, code, "Ljava/lang/String;");
}

fn new_string_builder(cb: &mut ClassBuilder, code: &mut CodeBuilder) {
    let c = cb.class(SB);
    code.op_u2(NEW, c, 1).op(DUP, 1);
    let init = cb.method_ref(SB, "<init>", "()V", false);
    code.invoke(INVOKESPECIAL, init, 1, Kind::Void);
}

fn finish_string_builder(cb: &mut ClassBuilder, code: &mut CodeBuilder) {
    let m = cb.method_ref(SB, "toString", "()Ljava/lang/String;", false);
    code.invoke(INVOKEVIRTUAL, m, 1, Kind::Reference);
    code.ret(Kind::Reference);
}

impl<T: Tracker> Vm<T> {
    /// Links the `invokedynamic` at constant `cp` of `owner` and returns the op that replaces it.
    pub(super) fn link_call_site(&mut self, t: &mut JThread, owner: ClassId, cp_index: u16) -> VmResult<Op> {
        let file = self.classes[owner as usize].file.clone().expect("code belongs to loaded classes");
        let cp = &file.constant_pool;
        let bad = |e: String| Fault::Fatal(VmError::Internal(format!("invokedynamic: {e}")));
        let (bootstrap, nat) = match cp.get(cp_index) {
            Some(Constant::InvokeDynamic { bootstrap, name_and_type }) => (*bootstrap, *name_and_type),
            other => return Err(bad(format!("constant {other:?}"))),
        };
        let (name, desc) = cp.name_and_type(nat).map_err(bad)?;
        let (site_name, desc) = (name.to_string(), desc.clone());
        let bsm =
            file.bootstrap_methods.get(bootstrap as usize).ok_or_else(|| bad("no such bootstrap method".into()))?;
        let BsmArg::Handle { class: bsm_class, name: bsm_name, .. } = bsm_arg(cp, bsm.method_handle).map_err(bad)?
        else {
            return Err(bad("bootstrap is not a method handle".into()));
        };
        let linked_here = matches!(
            (&*bsm_class, &*bsm_name),
            ("java/lang/invoke/LambdaMetafactory", "metafactory" | "altMetafactory")
                | ("java/lang/invoke/StringConcatFactory", "makeConcatWithConstants" | "makeConcat")
                | ("java/lang/runtime/ObjectMethods", "bootstrap")
        );
        let args = bsm.arguments.iter().map(|&a| bsm_arg(cp, a)).collect::<Result<Vec<_>, _>>();
        // A concatenation the JDK's factory would refuse, or that is not javac's usual shape, is
        // left to the factory: its errors (and its output) are then the JDK's own.
        let unusual_concat = &*bsm_class == "java/lang/invoke/StringConcatFactory"
            && !args.as_ref().is_ok_and(|args| plain_concat(&desc, args, &bsm_name));
        if !linked_here || unusual_concat {
            // Any other bootstrap method runs in Java, as on HotSpot.
            return self.link_dynamic_call_site(t, owner, cp_index);
        }
        let args = args.map_err(bad)?;
        // As HotSpot, the bootstrap method's class is resolved through the caller's loader.
        self.load_seen_from(t, owner, &bsm_class)?;
        let site = self.generated_classes;
        self.generated_classes += 1;
        let owner_name = self.classes[owner as usize].name.clone();
        let (class_file, class_name) = match (&*bsm_class, &*bsm_name) {
            ("java/lang/invoke/LambdaMetafactory", "metafactory" | "altMetafactory") => {
                let name = format!("{owner_name}$$Lambda${site}");
                (lambda_class(&name, &owner_name, &site_name, &desc, &args).map_err(bad)?, name)
            }
            ("java/lang/invoke/StringConcatFactory", "makeConcatWithConstants" | "makeConcat") => {
                let name = format!("{owner_name}$$Concat${site}");
                (concat_class(&name, &desc, &args, &bsm_name).map_err(bad)?, name)
            }
            ("java/lang/runtime/ObjectMethods", "bootstrap") => {
                let name = format!("{owner_name}$$ObjectMethods${site}");
                let simple = self.simple_name(owner);
                (object_methods_class(&name, &simple, &site_name, &desc, &args).map_err(bad)?, name)
            }
            (c, m) => unreachable!("{c}.{m} is linked by the JDK"),
        };
        debug_assert_eq!(*class_file.this_class, *class_name);
        let class = self.define_generated(t, owner, class_file)?;
        self.initialize(t, class)?;
        let entry = self
            .find_declared_method(class, SITE_METHOD, &desc)
            .ok_or_else(|| bad(format!("linked class lacks {SITE_METHOD}{desc}")))?;
        let args = self.methods[entry as usize].arg_slots;
        Ok(Op::InvokeDirect { method: entry, args })
    }

    /// `Class.getSimpleName()` of a loaded class.
    fn simple_name(&self, c: ClassId) -> String {
        let cl = &self.classes[c as usize];
        let inner = cl.file.as_ref().and_then(|f| {
            f.inner_classes
                .iter()
                .find(|ic| ic.inner_class.as_deref() == Some(&*f.this_class))
                .and_then(|ic| ic.inner_name.clone())
        });
        match inner {
            Some(n) => n.to_string(),
            None => cl.name.rsplit('/').next().unwrap_or(&cl.name).to_string(),
        }
    }
}

/// Every linked call site is a static method of this name whose descriptor is the site's.
const SITE_METHOD: &str = "callSite";

fn interface_of(indy_desc: &str) -> String {
    let ret = &indy_desc[indy_desc.find(')').map(|i| i + 1).unwrap_or(0)..];
    cast_name(ret).to_string()
}

/// The proxy class of a lambda call site in `host` whose interface method is `method_name`.
fn lambda_class(
    name: &str,
    host: &str,
    method_name: &str,
    indy_desc: &str,
    args: &[BsmArg],
) -> Result<crate::classfile::ClassFile, String> {
    let site = MethodDescriptor::parse(indy_desc).ok_or("call site descriptor")?;
    let iface = interface_of(indy_desc);
    let (
        BsmArg::MethodType(sam),
        BsmArg::Handle { kind, class: impl_class, name: impl_name, descriptor: impl_desc, interface },
        BsmArg::MethodType(inst),
    ) = (args.first().ok_or("sam type")?, args.get(1).ok_or("impl handle")?, args.get(2).ok_or("instantiated type")?)
    else {
        return Err("metafactory arguments".into());
    };
    // altMetafactory: flags, then marker interfaces and bridge descriptors.
    let mut interfaces = vec![iface.clone()];
    let mut bridges: Vec<Arc<str>> = Vec::new();
    let mut serializable = false;
    if let Some(BsmArg::Int(flags)) = args.get(3) {
        let mut i = 4;
        if flags & 1 != 0 {
            interfaces.push("java/io/Serializable".into());
            serializable = true;
        }
        if flags & 2 != 0 {
            let n = match args.get(i) {
                Some(BsmArg::Int(n)) => *n as usize,
                _ => 0,
            };
            for a in &args[i + 1..(i + 1 + n).min(args.len())] {
                if let BsmArg::Class(c) = a {
                    interfaces.push(c.to_string());
                }
            }
            i += 1 + n;
        }
        if flags & 4 != 0 {
            let n = match args.get(i) {
                Some(BsmArg::Int(n)) => *n as usize,
                _ => 0,
            };
            for a in &args[i + 1..(i + 1 + n).min(args.len())] {
                if let BsmArg::MethodType(d) = a {
                    bridges.push(d.clone());
                }
            }
        }
    }
    let mut cb = ClassBuilder::new();
    let this = name;
    // Fields for captured values.
    for (i, p) in site.param_types.iter().enumerate() {
        cb.field(access::PRIVATE | access::FINAL, &format!("arg${}", i + 1), p);
    }
    let capturing = !site.params.is_empty();
    let self_desc = format!("L{this};");
    // <init>()V
    {
        let mut code = CodeBuilder::new(1);
        code.load(Kind::Reference, 0);
        let m = cb.method_ref(OBJECT, "<init>", "()V", false);
        code.invoke(INVOKESPECIAL, m, 1, Kind::Void).ret(Kind::Void);
        cb.method(access::PRIVATE, "<init>", "()V", code.finish());
    }
    // The factory: the call site itself.
    {
        let mut code = CodeBuilder::new(site.param_slots() as u16);
        if capturing {
            let c = cb.class(this);
            code.op_u2(NEW, c, 1).op(DUP, 1);
            let init = cb.method_ref(this, "<init>", "()V", false);
            code.invoke(INVOKESPECIAL, init, 1, Kind::Void);
            let mut at = 0u16;
            for (i, (k, p)) in site.params.iter().zip(&site.param_types).enumerate() {
                code.op(DUP, 1);
                code.load(*k, at);
                at += k.slots() as u16;
                let f = cb.field_ref(this, &format!("arg${}", i + 1), p);
                code.op_u2(PUTFIELD, f, -1 - k.slots() as i32);
            }
        } else {
            cb.field(access::PRIVATE | access::STATIC | access::FINAL, "INSTANCE", &self_desc);
            let f = cb.field_ref(this, "INSTANCE", &self_desc);
            code.op_u2(GETSTATIC, f, 1);
            let mut clinit = CodeBuilder::new(0);
            let c = cb.class(this);
            clinit.op_u2(NEW, c, 1).op(DUP, 1);
            let init = cb.method_ref(this, "<init>", "()V", false);
            clinit.invoke(INVOKESPECIAL, init, 1, Kind::Void);
            clinit.op_u2(PUTSTATIC, f, -1).ret(Kind::Void);
            cb.method(access::STATIC, "<clinit>", "()V", clinit.finish());
        }
        code.ret(Kind::Reference);
        cb.method(access::PUBLIC | access::STATIC, SITE_METHOD, indy_desc, code.finish());
    }
    // The interface method, and each bridge with the same body.
    let impl_d = MethodDescriptor::parse(impl_desc).ok_or("impl descriptor")?;
    let inst_d = MethodDescriptor::parse(inst).ok_or("instantiated descriptor")?;
    let mut impl_params: Vec<String> = Vec::new();
    if matches!(*kind, REF_INVOKE_VIRTUAL | REF_INVOKE_INTERFACE | REF_INVOKE_SPECIAL) {
        impl_params.push(format!("L{impl_class};"));
    }
    impl_params.extend(impl_d.param_types.iter().cloned());
    let impl_ret = if *kind == REF_NEW_INVOKE_SPECIAL { format!("L{impl_class};") } else { impl_d.return_type.clone() };
    let mut descriptors: Vec<Arc<str>> = vec![sam.clone()];
    for b in bridges {
        if !descriptors.contains(&b) {
            descriptors.push(b);
        }
    }
    for sam_desc in descriptors {
        let sd = MethodDescriptor::parse(&sam_desc).ok_or("sam descriptor")?;
        if sd.params.len() + site.params.len() != impl_params.len() {
            return Err(format!(
                "lambda arity: {} + {} captured vs {}",
                sd.params.len(),
                site.params.len(),
                impl_params.len()
            ));
        }
        let mut code = CodeBuilder::new(1 + sd.param_slots() as u16);
        if *kind == REF_NEW_INVOKE_SPECIAL {
            let c = cb.class(impl_class);
            code.op_u2(NEW, c, 1).op(DUP, 1);
        }
        for (i, p) in site.param_types.iter().enumerate() {
            code.load(Kind::Reference, 0);
            let f = cb.field_ref(this, &format!("arg${}", i + 1), p);
            code.op_u2(GETFIELD, f, kind_of(p).slots() as i32 - 1);
            adapt(&mut cb, &mut code, p, &impl_params[i]);
        }
        let mut at = 1u16;
        for (j, (k, p)) in sd.params.iter().zip(&sd.param_types).enumerate() {
            code.load(*k, at);
            at += k.slots() as u16;
            // Cast through the instantiated type first when it is more precise than the erased one.
            let from = inst_d.param_types.get(j).map(String::as_str).unwrap_or(p);
            if kind_of(p) == Kind::Reference && kind_of(from) == Kind::Reference && from != p.as_str() {
                adapt(&mut cb, &mut code, p, from);
            }
            let from = if kind_of(p) == Kind::Reference { from } else { p.as_str() };
            adapt(&mut cb, &mut code, from, &impl_params[site.params.len() + j]);
        }
        let arg_slots: usize = impl_params.iter().map(|p| kind_of(p).slots()).sum();
        let m = cb.method_ref(impl_class, impl_name, impl_desc, *interface);
        match *kind {
            REF_INVOKE_STATIC => code.invoke(INVOKESTATIC, m, arg_slots, impl_d.ret),
            REF_INVOKE_VIRTUAL => code.invoke(INVOKEVIRTUAL, m, arg_slots, impl_d.ret),
            REF_INVOKE_INTERFACE => code.invoke(INVOKEINTERFACE, m, arg_slots, impl_d.ret),
            REF_INVOKE_SPECIAL => {
                // A private method of the host (javac's lambda bodies): a direct call.
                code.invoke(INVOKESPECIAL, m, arg_slots, impl_d.ret)
            }
            REF_NEW_INVOKE_SPECIAL => code.invoke(INVOKESPECIAL, m, arg_slots + 1, Kind::Void),
            other => return Err(format!("method handle kind {other}")),
        };
        match (kind_of(&impl_ret), sd.ret) {
            (Kind::Void, Kind::Void) => {}
            (k, Kind::Void) => {
                code.op(if k.slots() == 2 { POP2 } else { POP }, -(k.slots() as i32));
            }
            (Kind::Void, _) => return Err("void implementation for a value-returning interface method".into()),
            _ => {
                let target = if sd.ret == Kind::Reference && inst_d.ret == Kind::Reference {
                    inst_d.return_type.as_str()
                } else {
                    sd.return_type.as_str()
                };
                adapt(&mut cb, &mut code, &impl_ret, target);
            }
        }
        code.ret(sd.ret);
        cb.method(access::PUBLIC, method_name, &sam_desc, code.finish());
    }
    if serializable {
        let lambda = SerializedForm {
            host,
            interface: &iface,
            method_name,
            sam,
            kind: *kind,
            implementation: (impl_class, impl_name, impl_desc),
            instantiated: inst,
        };
        write_replace(&mut cb, this, &lambda, &site.param_types);
    }
    let refs: Vec<&str> = interfaces.iter().map(String::as_str).collect();
    Ok(cb.build(name, OBJECT, &refs, access::FINAL | access::SUPER))
}

/// What a serializable lambda is written as: the arguments of `SerializedLambda`'s constructor
/// but the captured values.
struct SerializedForm<'a> {
    host: &'a str,
    interface: &'a str,
    method_name: &'a str,
    sam: &'a str,
    kind: u8,
    implementation: (&'a str, &'a str, &'a str),
    instantiated: &'a str,
}

/// `private final Object writeReplace()`, as the JDK's lambda factory generates it for a
/// serializable lambda: serialization writes the `SerializedLambda` it returns, and reading
/// that back calls the host's `$deserializeLambda$` (javac's), which links the lambda again.
fn write_replace(cb: &mut ClassBuilder, this: &str, lambda: &SerializedForm, captured: &[String]) {
    const SERIALIZED_LAMBDA: &str = "java/lang/invoke/SerializedLambda";
    let mut code = CodeBuilder::new(1);
    let c = cb.class(SERIALIZED_LAMBDA);
    code.op_u2(NEW, c, 1).op(DUP, 1);
    let host = cb.class(lambda.host);
    code.op_u2(LDC_W, host, 1);
    let (impl_class, impl_name, impl_desc) = lambda.implementation;
    for s in [lambda.interface, lambda.method_name, lambda.sam] {
        let s = cb.string(s);
        code.op_u2(LDC_W, s, 1);
    }
    let kind = cb.integer(lambda.kind as i32);
    code.op_u2(LDC_W, kind, 1);
    for s in [impl_class, impl_name, impl_desc, lambda.instantiated] {
        let s = cb.string(s);
        code.op_u2(LDC_W, s, 1);
    }
    // The captured values, boxed, in an Object[].
    let n = cb.integer(captured.len() as i32);
    code.op_u2(LDC_W, n, 1);
    let object = cb.class(OBJECT);
    code.op_u2(ANEWARRAY, object, 0);
    for (i, p) in captured.iter().enumerate() {
        code.op(DUP, 1);
        let index = cb.integer(i as i32);
        code.op_u2(LDC_W, index, 1);
        code.load(Kind::Reference, 0);
        let f = cb.field_ref(this, &format!("arg${}", i + 1), p);
        code.op_u2(GETFIELD, f, kind_of(p).slots() as i32 - 1);
        adapt(cb, &mut code, p, "Ljava/lang/Object;");
        code.op(AASTORE, -3);
    }
    let init = cb.method_ref(
        SERIALIZED_LAMBDA,
        "<init>",
        "(Ljava/lang/Class;Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;ILjava/lang/String;\
         Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;[Ljava/lang/Object;)V",
        false,
    );
    code.invoke(INVOKESPECIAL, init, 11, Kind::Void).ret(Kind::Reference);
    cb.method(access::PRIVATE | access::FINAL, "writeReplace", "()Ljava/lang/Object;", code.finish());
}

/// The JDK's limit on a concatenation's argument slots (`MAX_INDY_CONCAT_ARG_SLOTS`).
const MAX_CONCAT_SLOTS: usize = 200;

/// A concatenation site [`concat_class`] builds just as the JDK's factory would: it returns a
/// String, takes at most [`MAX_CONCAT_SLOTS`], and its recipe uses every argument and every
/// (string or integral) constant exactly once.
fn plain_concat(indy_desc: &str, args: &[BsmArg], bsm: &str) -> bool {
    let Some(site) = MethodDescriptor::parse(indy_desc) else { return false };
    if site.return_type != "Ljava/lang/String;" || site.param_slots() > MAX_CONCAT_SLOTS {
        return false;
    }
    if bsm == "makeConcat" {
        return args.is_empty();
    }
    let Some((BsmArg::Str(recipe), constants)) = args.split_first() else { return false };
    constants.iter().all(|c| matches!(c, BsmArg::Str(_) | BsmArg::Int(_) | BsmArg::Long(_)))
        && recipe.chars().filter(|&c| c == '\u{1}').count() == site.params.len()
        && recipe.chars().filter(|&c| c == '\u{2}').count() == constants.len()
}

fn concat_class(
    name: &str,
    indy_desc: &str,
    args: &[BsmArg],
    bsm: &str,
) -> Result<crate::classfile::ClassFile, String> {
    let site = MethodDescriptor::parse(indy_desc).ok_or("call site descriptor")?;
    let mut cb = ClassBuilder::new();
    let mut code = CodeBuilder::new(site.param_slots() as u16);
    new_string_builder(&mut cb, &mut code);
    let recipe: String = match (bsm, args.first()) {
        ("makeConcatWithConstants", Some(BsmArg::Str(r))) => r.to_string(),
        ("makeConcatWithConstants", _) => return Err("concat recipe".into()),
        _ => "\u{1}".repeat(site.params.len()),
    };
    let mut constants = args.iter().skip(1);
    let mut locals = Vec::new();
    let mut at = 0u16;
    for k in &site.params {
        locals.push(at);
        at += k.slots() as u16;
    }
    let mut next_arg = 0usize;
    let mut literal = String::new();
    for ch in recipe.chars() {
        match ch {
            '\u{1}' | '\u{2}' if !literal.is_empty() => {
                append_literal(&mut cb, &mut code, &literal);
                literal.clear();
            }
            _ => {}
        }
        match ch {
            '\u{1}' => {
                let (k, p) = (
                    site.params.get(next_arg).ok_or("recipe has more arguments than the call site")?,
                    &site.param_types[next_arg],
                );
                code.load(*k, locals[next_arg]);
                append(&mut cb, &mut code, p);
                next_arg += 1;
            }
            '\u{2}' => match constants.next() {
                Some(BsmArg::Str(s)) => append_literal(&mut cb, &mut code, s),
                Some(BsmArg::Int(v)) => append_literal(&mut cb, &mut code, &v.to_string()),
                Some(BsmArg::Long(v)) => append_literal(&mut cb, &mut code, &v.to_string()),
                Some(other) => return Err(format!("concat constant {other:?}")),
                None => return Err("recipe has more constants than the bootstrap".into()),
            },
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        append_literal(&mut cb, &mut code, &literal);
    }
    finish_string_builder(&mut cb, &mut code);
    cb.method(access::PUBLIC | access::STATIC, SITE_METHOD, indy_desc, code.finish());
    Ok(cb.build(name, OBJECT, &[], access::FINAL | access::SUPER))
}

/// A record's `method` (`toString`, `equals` or `hashCode`) for `ObjectMethods.bootstrap`.
fn object_methods_class(
    name: &str,
    simple_name: &str,
    method: &str,
    indy_desc: &str,
    args: &[BsmArg],
) -> Result<crate::classfile::ClassFile, String> {
    let record = match args.first() {
        Some(BsmArg::Class(c)) => c.to_string(),
        _ => return Err("ObjectMethods record class".into()),
    };
    let names: Vec<String> = match args.get(1) {
        Some(BsmArg::Str(s)) if !s.is_empty() => s.split(';').map(str::to_string).collect(),
        _ => Vec::new(),
    };
    let getters: Vec<(Arc<str>, Arc<str>)> = args[2..]
        .iter()
        .filter_map(|a| match a {
            BsmArg::Handle { kind: REF_GET_FIELD, name, descriptor, .. } => Some((name.clone(), descriptor.clone())),
            _ => None,
        })
        .collect();
    let mut cb = ClassBuilder::new();
    let rec_class = cb.class(&record);
    let field = |cb: &mut ClassBuilder, code: &mut CodeBuilder, local: u16, (n, d): &(Arc<str>, Arc<str>)| {
        code.load(Kind::Reference, local);
        let f = cb.field_ref(&record, n, d);
        code.op_u2(GETFIELD, f, kind_of(d).slots() as i32 - 1);
    };
    let code = match method {
        "toString" => {
            let mut code = CodeBuilder::new(1);
            new_string_builder(&mut cb, &mut code);
            append_literal(&mut cb, &mut code, &format!("{simple_name}["));
            for (i, g) in getters.iter().enumerate() {
                let label = format!("{}{}=", if i > 0 { ", " } else { "" }, names.get(i).cloned().unwrap_or_default());
                append_literal(&mut cb, &mut code, &label);
                field(&mut cb, &mut code, 0, g);
                append(&mut cb, &mut code, &g.1);
            }
            append_literal(&mut cb, &mut code, "]");
            finish_string_builder(&mut cb, &mut code);
            code
        }
        "hashCode" => {
            let mut code = CodeBuilder::new(1);
            code.op(ICONST_0, 1);
            for g in &getters {
                code.op(BIPUSH, 1).u1(31).op(IMUL, -1);
                field(&mut cb, &mut code, 0, g);
                let k = kind_of(&g.1);
                let m = if k == Kind::Reference {
                    cb.method_ref("java/util/Objects", "hashCode", "(Ljava/lang/Object;)I", false)
                } else {
                    let (w, _, p) = wrapper(k);
                    cb.method_ref(w, "hashCode", &format!("({p})I"), false)
                };
                code.invoke(INVOKESTATIC, m, k.slots(), Kind::Int);
                code.op(IADD, -1);
            }
            code.ret(Kind::Int);
            code
        }
        "equals" => {
            let mut code = CodeBuilder::new(3);
            code.load(Kind::Reference, 0).load(Kind::Reference, 1);
            let not_same = code.branch(IF_ACMPNE, -2);
            code.op(ICONST_1, 1).ret(Kind::Int);
            code.patch(not_same);
            code.set_depth(0);
            code.load(Kind::Reference, 1);
            code.op_u2(INSTANCEOF, rec_class, 0);
            let is_record = code.branch(IFNE, -1);
            code.op(ICONST_0, 1).ret(Kind::Int);
            code.patch(is_record);
            code.set_depth(0);
            code.load(Kind::Reference, 1).op_u2(CHECKCAST, rec_class, 0);
            code.op(0x3a, -1).u1(2); // astore 2
            let mut to_false = Vec::new();
            for g in &getters {
                field(&mut cb, &mut code, 0, g);
                field(&mut cb, &mut code, 2, g);
                match kind_of(&g.1) {
                    Kind::Long => {
                        code.op(LCMP, -3);
                        to_false.push(code.branch(IFNE, -1));
                    }
                    Kind::Float => {
                        let m = cb.method_ref("java/lang/Float", "compare", "(FF)I", false);
                        code.invoke(INVOKESTATIC, m, 2, Kind::Int);
                        to_false.push(code.branch(IFNE, -1));
                    }
                    Kind::Double => {
                        let m = cb.method_ref("java/lang/Double", "compare", "(DD)I", false);
                        code.invoke(INVOKESTATIC, m, 4, Kind::Int);
                        to_false.push(code.branch(IFNE, -1));
                    }
                    Kind::Reference => {
                        let m = cb.method_ref(
                            "java/util/Objects",
                            "equals",
                            "(Ljava/lang/Object;Ljava/lang/Object;)Z",
                            false,
                        );
                        code.invoke(INVOKESTATIC, m, 2, Kind::Boolean);
                        to_false.push(code.branch(IFEQ, -1));
                    }
                    _ => to_false.push(code.branch(IF_ICMPNE, -2)),
                }
            }
            code.op(ICONST_1, 1).ret(Kind::Int);
            for b in to_false {
                code.patch(b);
            }
            code.set_depth(0);
            code.op(ICONST_0, 1).ret(Kind::Int);
            code
        }
        other => return Err(format!("ObjectMethods for {other}")),
    };
    cb.method(access::PUBLIC | access::STATIC, SITE_METHOD, indy_desc, code.finish());
    Ok(cb.build(name, OBJECT, &[], access::FINAL | access::SUPER))
}

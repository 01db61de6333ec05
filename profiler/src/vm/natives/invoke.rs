//! `java.lang.invoke.MethodHandleNatives`: what HotSpot provides under the JDK's method handles.
//! The JDK's own code builds every handle, lambda form and invoker; the VM resolves the
//! `MemberName`s they rest on (fields, methods, constructors, signature-polymorphic methods) and
//! records the method a resolved name targets in the name's hidden `vmtarget` slot, which the
//! interpreter's `invokeBasic`/`linkTo*` ops read (see vm/method_handles.rs).

use super::memory::STATIC_TAG;
use super::{Registry, VmResult};
use crate::classfile::access;
use crate::vm::class::{ClassId, ClassKind, MethodId};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{Fault, JThread, Tracker, Vm};

/// Slots of `java.lang.invoke` objects the interpreter reads on every handle call.
#[derive(Debug, Default, Clone)]
pub struct InvokeSlots {
    /// `MemberName`'s hidden slot: the method it targets, + 1 (0: none).
    pub member_vmtarget: u32,
    /// `MethodHandle.form`.
    pub handle_form: u32,
    /// `LambdaForm.vmentry`.
    pub form_vmentry: u32,
}

/// `MemberName.flags` bits (java.lang.invoke.MethodHandleNatives.Constants).
pub(crate) const IS_METHOD: u32 = 0x0001_0000;
pub(crate) const IS_CONSTRUCTOR: u32 = 0x0002_0000;
pub(crate) const IS_FIELD: u32 = 0x0004_0000;
const CALLER_SENSITIVE: u32 = 0x0010_0000;
const TRUSTED_FINAL: u32 = 0x0020_0000;
const KIND_SHIFT: u32 = 24;

/// Reference kinds (JVMS §5.4.3.5).
pub(crate) const REF_GET_FIELD: u32 = 1;
pub(crate) const REF_GET_STATIC: u32 = 2;
pub(crate) const REF_PUT_FIELD: u32 = 3;
pub(crate) const REF_INVOKE_VIRTUAL: u32 = 5;
pub(crate) const REF_INVOKE_STATIC: u32 = 6;
pub(crate) const REF_INVOKE_SPECIAL: u32 = 7;
pub(crate) const REF_NEW_INVOKE_SPECIAL: u32 = 8;
pub(crate) const REF_INVOKE_INTERFACE: u32 = 9;

const MHN: &str = "java/lang/invoke/MethodHandleNatives";

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    reg.add(MHN, "getNamedCon", "(I[Ljava/lang/Object;)I", |_, _, _| Ok(0));
    reg.add(MHN, "resolve", "(Ljava/lang/invoke/MemberName;Ljava/lang/Class;IZ)Ljava/lang/invoke/MemberName;", resolve);
    reg.add(MHN, "init", "(Ljava/lang/invoke/MemberName;Ljava/lang/Object;)V", init);
    reg.add(MHN, "expand", "(Ljava/lang/invoke/MemberName;)V", expand);
    reg.add(MHN, "objectFieldOffset", "(Ljava/lang/invoke/MemberName;)J", |vm, t, a| {
        let (_, slot, _) = member_field(vm, t, a[0] as Ref)?;
        Ok(slot as u64)
    });
    reg.add(MHN, "staticFieldOffset", "(Ljava/lang/invoke/MemberName;)J", |vm, t, a| {
        let (_, slot, _) = member_field(vm, t, a[0] as Ref)?;
        Ok((STATIC_TAG | slot as i64) as u64)
    });
    reg.add(MHN, "staticFieldBase", "(Ljava/lang/invoke/MemberName;)Ljava/lang/Object;", |vm, t, a| {
        let (class, _, _) = member_field(vm, t, a[0] as Ref)?;
        Ok(vm.mirror(class) as u64)
    });
    reg.add(MHN, "getMemberVMInfo", "(Ljava/lang/invoke/MemberName;)Ljava/lang/Object;", member_vm_info);
    // HotSpot also invalidates code compiled against the old target; an interpreter has none.
    for name in ["setCallSiteTargetNormal", "setCallSiteTargetVolatile"] {
        reg.add(MHN, name, "(Ljava/lang/invoke/CallSite;Ljava/lang/invoke/MethodHandle;)V", |vm, _, a| {
            vm.set_named(a[0] as Ref, "target", a[1]);
            Ok(0)
        });
    }
    reg.add(MHN, "clearCallSiteContext", "(Ljava/lang/invoke/MethodHandleNatives$CallSiteContext;)V", |_, _, _| Ok(0));
    // Signature-polymorphic methods are linked by the interpreter; reached any other way (Method.invoke,
    // a Rust caller) they refuse, as HotSpot's do.
    for name in ["invokeExact", "invoke", "invokeBasic"] {
        reg.add("java/lang/invoke/MethodHandle", name, "([Ljava/lang/Object;)Ljava/lang/Object;", |vm, t, _| {
            Err(vm.throw_new(
                t,
                "java/lang/UnsupportedOperationException",
                Some("cannot reflectively invoke MethodHandle"),
            ))
        });
    }
}

/// The class and member name a MemberName holds (a NullPointerException when either is missing).
fn class_and_name<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, member: Ref) -> VmResult<(ClassId, String)> {
    let clazz = vm.get_named(member, "clazz") as Ref;
    let name = vm.get_named(member, "name") as Ref;
    if clazz == 0 || name == 0 {
        return Err(vm.throw_npe(t));
    }
    Ok((vm.class_of_mirror(clazz), vm.rust_string(name)))
}

/// The declaring class, slot and access flags of the field a MemberName names.
fn member_field<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, member: Ref) -> VmResult<(u32, u32, u16)> {
    let (class, name) = class_and_name(vm, t, member)?;
    let mut c = Some(class);
    while let Some(id) = c {
        if let Some(f) = vm.classes[id as usize].field(&name, None) {
            return Ok((id, f.slot, f.access));
        }
        c = vm.classes[id as usize].super_class;
    }
    let msg = format!("{}.{name}", vm.classes[class as usize].java_name());
    Err(vm.throw_new(t, "java/lang/NoSuchFieldError", Some(&msg)))
}

/// The flags HotSpot gives a resolved field: kind, access, and whether a final field is trusted
/// (static, or in a record or hidden class: no reflective write may change it).
fn field_flags<T: Tracker>(vm: &Vm<T>, class: ClassId, access_flags: u16, setter: bool) -> u32 {
    let is_static = access_flags & access::STATIC != 0;
    let kind = if is_static { REF_GET_STATIC } else { REF_GET_FIELD } + if setter { 2 } else { 0 };
    let c = &vm.classes[class as usize];
    let record = c.super_class.is_some_and(|s| &*vm.classes[s as usize].name == "java/lang/Record");
    let trusted = access_flags & access::FINAL != 0 && (is_static || record || c.hidden);
    IS_FIELD | (kind << KIND_SHIFT) | access_flags as u32 | if trusted { TRUSTED_FINAL } else { 0 }
}

/// The flags, declaring class and reference kind HotSpot gives a method resolved for `kind`:
/// static methods are `invokeStatic`, constructors and methods that cannot be overridden are
/// `invokeSpecial` (a direct call), interface methods `invokeInterface`, the rest `invokeVirtual`.
fn method_flags<T: Tracker>(vm: &Vm<T>, m: MethodId, kind: u32, requested: ClassId) -> (u32, ClassId) {
    let method = &vm.methods[m as usize];
    let decl = method.class;
    let decl_interface = vm.classes[decl as usize].is_interface();
    let mut flags = method.access as u32;
    if method.caller_sensitive {
        flags |= CALLER_SENSITIVE;
    }
    let statically_bound = method.is_private()
        || method.access & access::FINAL != 0
        || (!decl_interface && vm.classes[decl as usize].access & access::FINAL != 0);
    let (shape, kind, clazz) = if method.is_static() {
        (IS_METHOD, REF_INVOKE_STATIC, decl)
    } else if &*method.name == "<init>" {
        (IS_CONSTRUCTOR, REF_INVOKE_SPECIAL, decl)
    } else if kind == REF_INVOKE_SPECIAL || statically_bound {
        (IS_METHOD, REF_INVOKE_SPECIAL, decl)
    } else if kind == REF_INVOKE_INTERFACE && decl_interface {
        (IS_METHOD, REF_INVOKE_INTERFACE, decl)
    } else if decl_interface {
        // A default or abstract interface method reached through a class: HotSpot names the class.
        let c = if vm.classes[requested as usize].is_interface() { vm.wk_object() } else { requested };
        (IS_METHOD, REF_INVOKE_VIRTUAL, c)
    } else {
        (IS_METHOD, REF_INVOKE_VIRTUAL, decl)
    };
    (flags | shape | (kind << KIND_SHIFT), clazz)
}

/// The JVM descriptor of a MemberName's `type`: a descriptor string, a `MethodType`, a field's
/// `Class`, or the `{rtype, ptypes}` pair the JDK leaves before resolution.
fn member_descriptor<T: Tracker>(vm: &Vm<T>, member: Ref) -> Option<String> {
    let ty = vm.get_named(member, "type") as Ref;
    if ty == 0 {
        return None;
    }
    let class = vm.heap.get(ty).class;
    let method_type = |rtype: Ref, ptypes: Ref| -> Option<String> {
        let params = match &vm.heap.get(ptypes).data {
            ObjData::Refs(p) => p.iter().map(|&c| vm.descriptor_of_mirror(c)).collect::<String>(),
            _ => return None,
        };
        Some(format!("({params}){}", vm.descriptor_of_mirror(rtype)))
    };
    match &*vm.classes[class as usize].name {
        "java/lang/String" => Some(vm.rust_string(ty)),
        "java/lang/Class" => Some(vm.descriptor_of_mirror(ty)),
        "java/lang/invoke/MethodType" => {
            method_type(vm.get_named(ty, "rtype") as Ref, vm.get_named(ty, "ptypes") as Ref)
        }
        _ => match &vm.heap.get(ty).data {
            ObjData::Refs(pair) if pair.len() == 2 => method_type(pair[0], pair[1]),
            _ => None,
        },
    }
}

fn resolve<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let (member, speculative) = (a[0] as Ref, a[3] != 0);
    let flags = vm.get_named(member, "flags") as u32;
    let result = if flags & IS_FIELD != 0 {
        member_field(vm, t, member).map(|(class, _, access_flags)| {
            let setter = (flags >> KIND_SHIFT) & 0xF >= REF_PUT_FIELD;
            (field_flags(vm, class, access_flags, setter), class, None)
        })
    } else {
        resolve_method(vm, t, member, flags)
    };
    match result {
        Ok((flags, class, target)) => {
            let mirror = vm.mirror(class);
            vm.set_named(member, "clazz", mirror as u64);
            vm.set_named(member, "flags", flags as u64);
            vm.set_named(member, "resolution", 0);
            vm.set_member_target(member, target);
            Ok(member as u64)
        }
        Err(Fault::Exception(_)) if speculative => Ok(0),
        Err(f) => Err(f),
    }
}

/// Resolves a method or constructor MemberName as the JVM resolves the matching bytecode call:
/// the new flags, the declaring class to record, and the method targeted.
fn resolve_method<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    member: Ref,
    flags: u32,
) -> VmResult<(u32, ClassId, Option<MethodId>)> {
    let (class, name) = class_and_name(vm, t, member)?;
    let kind = (flags >> KIND_SHIFT) & 0xF;
    let Some(desc) = member_descriptor(vm, member) else {
        return Err(vm.throw_new(t, "java/lang/InternalError", Some("MemberName without a type")));
    };
    if let Some(m) = vm.signature_polymorphic(class, &name) {
        // One native stands for every descriptor; calls to it are linked by the interpreter.
        let method = &vm.methods[m as usize];
        let kind = if method.is_static() { REF_INVOKE_STATIC } else { REF_INVOKE_VIRTUAL };
        let flags = IS_METHOD | method.access as u32 | (kind << KIND_SHIFT);
        return Ok((flags, class, Some(m)));
    }
    let found = if name == "<init>" {
        vm.find_declared_method(class, &name, &desc)
    } else {
        vm.find_method(class, &name, &desc)
    };
    let Some(m) = found else {
        let msg = format!("'{}'", vm.pretty_method(&vm.classes[class as usize].java_name(), &name, &desc));
        return Err(vm.throw_new(t, "java/lang/NoSuchMethodError", Some(&msg)));
    };
    let is_interface = vm.classes[class as usize].is_interface();
    let is_static = vm.methods[m as usize].is_static();
    let mismatch = match kind {
        REF_INVOKE_STATIC => (!is_static).then_some("Expecting static method"),
        REF_INVOKE_INTERFACE if !is_interface => Some("Found class, but interface was expected"),
        REF_INVOKE_VIRTUAL if is_interface => Some("Found interface, but class was expected"),
        REF_INVOKE_VIRTUAL | REF_INVOKE_INTERFACE | REF_INVOKE_SPECIAL | REF_NEW_INVOKE_SPECIAL => {
            is_static.then_some("Expecting non-static method")
        }
        _ => None,
    };
    if let Some(what) = mismatch {
        let msg = format!("{what} {}", vm.method_name(m));
        return Err(vm.throw_new(t, "java/lang/IncompatibleClassChangeError", Some(&msg)));
    }
    let (flags, decl) = method_flags(vm, m, kind, class);
    Ok((flags, decl, Some(m)))
}

/// `MemberName(Method | Constructor | Field)`: fills in what HotSpot's `init_MemberName` does
/// (declaring class, flags, target); the JDK sets the name and type itself.
fn init<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let (member, target) = (a[0] as Ref, a[1] as Ref);
    if member == 0 || target == 0 {
        return Err(vm.throw_npe(t));
    }
    let class = vm.heap.get(target).class;
    let holder = vm.class_of_mirror(vm.get_named(target, "clazz") as Ref);
    match &*vm.classes[class as usize].name {
        "java/lang/reflect/Method" | "java/lang/reflect/Constructor" => {
            let m = vm.get_named(target, "slot") as MethodId;
            if vm.signature_polymorphic(holder, &vm.methods[m as usize].name.clone()).is_some() {
                // No concrete signature: the JDK handles this case itself (clazz stays null).
                return Ok(0);
            }
            let kind =
                if vm.classes[holder as usize].is_interface() { REF_INVOKE_INTERFACE } else { REF_INVOKE_VIRTUAL };
            let (flags, decl) = method_flags(vm, m, kind, holder);
            let mirror = vm.mirror(decl);
            vm.set_named(member, "clazz", mirror as u64);
            vm.set_named(member, "flags", flags as u64);
            vm.set_member_target(member, Some(m));
        }
        "java/lang/reflect/Field" => {
            let name = vm.get_named(target, "name") as Ref;
            let name = vm.rust_string(name);
            let Some(f) = vm.classes[holder as usize].field(&name, None).map(|f| f.access) else {
                return Err(vm.throw_new(t, "java/lang/InternalError", Some(&name)));
            };
            let flags = field_flags(vm, holder, f, false);
            let mirror = vm.mirror(holder);
            vm.set_named(member, "clazz", mirror as u64);
            vm.set_named(member, "flags", flags as u64);
        }
        other => {
            let msg = format!("MemberName of {}", other.replace('/', "."));
            return Err(vm.throw_new(t, "java/lang/InternalError", Some(&msg)));
        }
    }
    Ok(0)
}

/// Fills in a resolved MemberName's missing name and type from its target.
fn expand<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let member = a[0] as Ref;
    if member == 0 {
        return Err(vm.throw_npe(t));
    }
    if let Some(m) = vm.member_target(member) {
        let (name, desc) = (vm.methods[m as usize].name.clone(), vm.methods[m as usize].descriptor.clone());
        if vm.get_named(member, "name") == 0 {
            let s = vm.intern_str(&name);
            vm.set_named(member, "name", s as u64);
        }
        if vm.get_named(member, "type") == 0 {
            let s = vm.pinning(&[member], |vm| vm.intern_str(&desc));
            vm.set_named(member, "type", s as u64);
        }
    }
    Ok(0)
}

/// `{vmindex, vmtarget}` as HotSpot answers: the vtable index (or -1) and the name itself for
/// methods; the offset and declaring class for fields.
fn member_vm_info<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let member = a[0] as Ref;
    let flags = vm.get_named(member, "flags") as u32;
    let (index, target) = if flags & IS_FIELD != 0 {
        let (class, slot, _) = member_field(vm, t, member)?;
        (slot as i64, vm.mirror(class))
    } else {
        let index = vm.member_target(member).and_then(|m| vm.methods[m as usize].vindex).map_or(-1, |v| v as i64);
        (index, member)
    };
    let boxed = vm.pinning(&[target], |vm| vm.box_value(t, crate::classfile::descriptor::Kind::Long, index as u64))?;
    let class = vm.load_or_throw(t, "[Ljava/lang/Object;")?;
    Ok(vm.heap.alloc(class, ObjData::Refs(vec![boxed, target].into())) as u64)
}

impl<T: Tracker> Vm<T> {
    /// The method a resolved MemberName targets.
    #[inline]
    pub(crate) fn member_target(&self, member: Ref) -> Option<MethodId> {
        match &self.heap.get(member).data {
            ObjData::Fields(f) => (f[self.wk.invoke.member_vmtarget as usize] as MethodId).checked_sub(1),
            _ => None,
        }
    }

    fn set_member_target(&mut self, member: Ref, m: Option<MethodId>) {
        let slot = self.wk.invoke.member_vmtarget;
        self.set_field(member, slot, m.map_or(0, |m| m as u64 + 1));
    }

    /// The native that stands for every signature of `MethodHandle.<name>` or `VarHandle.<name>`.
    pub(crate) fn signature_polymorphic(&self, class: ClassId, name: &str) -> Option<MethodId> {
        let c = &self.classes[class as usize];
        if !matches!(&*c.name, "java/lang/invoke/MethodHandle" | "java/lang/invoke/VarHandle") {
            return None;
        }
        c.methods.iter().copied().find(|&m| {
            let m = &self.methods[m as usize];
            &*m.name == name && m.is_native() && m.access & access::VARARGS != 0
        })
    }

    /// The field descriptor of the class a mirror stands for (`I`, `[J`, `Ljava/lang/String;`).
    pub(crate) fn descriptor_of_mirror(&self, mirror: Ref) -> String {
        let c = &self.classes[self.class_of_mirror(mirror) as usize];
        match c.kind {
            ClassKind::Primitive(d) => d.to_string(),
            ClassKind::Array { .. } => c.name.to_string(),
            ClassKind::Instance => format!("L{};", c.name),
        }
    }

    fn wk_object(&self) -> ClassId {
        self.classes[self.wk.class as usize].super_class.unwrap_or(0)
    }
}

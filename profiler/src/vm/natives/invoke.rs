//! The parts of `java.lang.invoke` the VM provides: resolving field `MemberName`s and their
//! offsets, so that the JDK's own code can build `VarHandle`s (`MethodHandles.Lookup.findVarHandle`,
//! `MethodHandles.arrayElementVarHandle`). Calls through a VarHandle are linked by the VM itself
//! (see vm/varhandle.rs). Method handles to methods are not resolved yet: such a lookup stops the
//! run with an error naming it.

use super::memory::STATIC_TAG;
use super::{Registry, VmResult};
use crate::vm::heap::Ref;
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};

/// `MemberName.flags` bits (java.lang.invoke.MethodHandleNatives.Constants).
const IS_FIELD: u64 = 0x0004_0000;

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    const MHN: &str = "java/lang/invoke/MethodHandleNatives";
    reg.add(MHN, "getNamedCon", "(I[Ljava/lang/Object;)I", |_, _, _| Ok(0));
    reg.add(MHN, "resolve", "(Ljava/lang/invoke/MemberName;Ljava/lang/Class;IZ)Ljava/lang/invoke/MemberName;", resolve);
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
}

/// The declaring class, slot and access flags of the field a MemberName names.
fn member_field<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, member: Ref) -> VmResult<(u32, u32, u16)> {
    let clazz = vm.get_named(member, "clazz") as Ref;
    let name = vm.get_named(member, "name") as Ref;
    if clazz == 0 || name == 0 {
        return Err(vm.throw_npe(t));
    }
    let class = vm.class_of_mirror(clazz);
    let name = vm.rust_string(name);
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

fn resolve<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let (member, speculative) = (a[0] as Ref, a[3] != 0);
    let flags = vm.get_named(member, "flags") as u32 as u64;
    if flags & IS_FIELD == 0 {
        let name = match vm.get_named(member, "name") as Ref {
            0 => "?".to_string(),
            n => vm.rust_string(n),
        };
        return Err(Fault::Fatal(VmError::Unsupported(format!("method handles (resolving method {name})"))));
    }
    match member_field(vm, t, member) {
        Ok((class, _, access)) => {
            let mirror = vm.mirror(class);
            vm.set_named(member, "clazz", mirror as u64);
            vm.set_named(member, "flags", (flags | access as u64) & 0xFFFF_FFFF);
            vm.set_named(member, "resolution", 0);
            Ok(member as u64)
        }
        Err(Fault::Exception(_)) if speculative => Ok(0),
        Err(f) => Err(f),
    }
}

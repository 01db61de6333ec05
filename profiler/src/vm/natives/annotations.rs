//! Annotations through reflection, as HotSpot hands them over: the raw bodies of the
//! annotation attributes (`Class.getRawAnnotations`, the `byte[]` arguments of the reflection
//! objects' constructors, type annotations) and the class's constant pool
//! (`jdk.internal.reflect.ConstantPool`, whose `constantPoolOop` is the class's mirror). The
//! JDK's own `AnnotationParser` does the rest. Also `Executable.getParameters0` (MethodParameters).

use super::{Registry, VmResult};
use crate::classfile::Constant;
use crate::vm::class::{ClassId, MethodId};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{JThread, Tracker, Vm};

const CP: &str = "jdk/internal/reflect/ConstantPool";

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    reg.add("java/lang/Class", "getRawAnnotations", "()[B", |vm, _, a| {
        let c = vm.class_of_mirror(a[0] as Ref);
        let raw = vm.classes[c as usize].file.as_ref().and_then(|f| f.annotations.visible.clone());
        Ok(vm.raw_bytes(&raw) as u64)
    });
    reg.add("java/lang/Class", "getRawTypeAnnotations", "()[B", |vm, _, a| {
        let c = vm.class_of_mirror(a[0] as Ref);
        let raw = vm.classes[c as usize].file.as_ref().and_then(|f| f.annotations.type_annotations.clone());
        Ok(vm.raw_bytes(&raw) as u64)
    });
    reg.add("java/lang/Class", "getConstantPool", "()Ljdk/internal/reflect/ConstantPool;", |vm, t, a| {
        let c = vm.load_or_throw(t, CP)?;
        let pool = vm.alloc_instance(c);
        vm.set_named(pool, "constantPoolOop", a[0]);
        Ok(pool as u64)
    });
    reg.add("java/lang/reflect/Executable", "getTypeAnnotationBytes0", "()[B", |vm, _, a| {
        let m = vm.get_named(a[0] as Ref, "slot") as MethodId;
        let raw = vm.method_info(m).and_then(|i| i.annotations.type_annotations.clone());
        Ok(vm.raw_bytes(&raw) as u64)
    });
    reg.add("java/lang/reflect/Field", "getTypeAnnotationBytes0", "()[B", |vm, _, a| {
        let c = vm.class_of_mirror(vm.get_named(a[0] as Ref, "clazz") as Ref);
        let name = vm.rust_string(vm.get_named(a[0] as Ref, "name") as Ref);
        let raw = vm.classes[c as usize]
            .file
            .as_ref()
            .and_then(|f| f.fields.iter().find(|f| *f.name == *name))
            .and_then(|f| f.annotations.type_annotations.clone());
        Ok(vm.raw_bytes(&raw) as u64)
    });
    reg.add("java/lang/reflect/Executable", "getParameters0", "()[Ljava/lang/reflect/Parameter;", |vm, t, a| {
        let exec = a[0] as Ref;
        let m = vm.get_named(exec, "slot") as MethodId;
        let Some(raw) = vm.method_info(m).and_then(|i| i.parameters.clone()) else {
            return Ok(0);
        };
        let class = vm.methods[m as usize].class;
        // u1 parameters_count, then (u2 name_index, u2 access_flags) each.
        let count = raw.first().copied().unwrap_or(0) as usize;
        let mut params = Vec::with_capacity(count);
        for i in 0..count {
            let at = 1 + i * 4;
            let Some(entry) = raw.get(at..at + 4) else { break };
            let name_index = u16::from_be_bytes([entry[0], entry[1]]);
            let flags = u16::from_be_bytes([entry[2], entry[3]]);
            let name = if name_index == 0 {
                0
            } else {
                let utf8 =
                    vm.classes[class as usize].file.as_ref().and_then(|f| f.constant_pool.utf16(name_index).ok());
                match utf8 {
                    Some(units) => vm.intern_utf16(units.into()),
                    None => {
                        return Err(vm.throw_new(
                            t,
                            "java/lang/IllegalArgumentException",
                            Some("Invalid constant pool index"),
                        ))
                    }
                }
            };
            let p = vm.pinning(&params, |vm| {
                vm.pinning(&[exec, name], |vm| {
                    vm.construct(
                        t,
                        "java/lang/reflect/Parameter",
                        "(Ljava/lang/String;ILjava/lang/reflect/Executable;I)V",
                        &[name as u64, flags as u64, exec as u64, i as u64],
                    )
                })
            })?;
            params.push(p);
        }
        let arr = vm.load_or_throw(t, "[Ljava/lang/reflect/Parameter;")?;
        Ok(vm.heap.alloc(arr, ObjData::Refs(params.into())) as u64)
    });

    // jdk.internal.reflect.ConstantPool: (this, constantPoolOop = the holder's mirror, index).
    reg.add(CP, "getSize0", "(Ljava/lang/Object;)I", |vm, _, a| {
        let c = vm.class_of_mirror(a[1] as Ref);
        Ok(vm.classes[c as usize].file.as_ref().map(|f| f.constant_pool.len()).unwrap_or(0) as u64)
    });
    reg.add(CP, "getTagAt0", "(Ljava/lang/Object;I)B", |vm, t, a| {
        let constant = vm.pool_entry(t, a)?.1;
        let tag: u8 = match constant {
            Constant::Unusable => 0,
            Constant::Utf8(_) => 1,
            Constant::Integer(_) => 3,
            Constant::Float(_) => 4,
            Constant::Long(_) => 5,
            Constant::Double(_) => 6,
            Constant::Class { .. } => 7,
            Constant::String { .. } => 8,
            Constant::FieldRef { .. } => 9,
            Constant::MethodRef { .. } => 10,
            Constant::InterfaceMethodRef { .. } => 11,
            Constant::NameAndType { .. } => 12,
            Constant::MethodHandle { .. } => 15,
            Constant::MethodType { .. } => 16,
            Constant::Dynamic { .. } => 17,
            Constant::InvokeDynamic { .. } => 18,
            Constant::Module { .. } => 19,
            Constant::Package { .. } => 20,
        };
        Ok(tag as i8 as i32 as u32 as u64)
    });
    reg.add(CP, "getIntAt0", "(Ljava/lang/Object;I)I", |vm, t, a| match vm.pool_entry(t, a)? {
        (_, Constant::Integer(v)) => Ok(v as u32 as u64),
        _ => Err(wrong_type(vm, t)),
    });
    reg.add(CP, "getLongAt0", "(Ljava/lang/Object;I)J", |vm, t, a| match vm.pool_entry(t, a)? {
        (_, Constant::Long(v)) => Ok(v as u64),
        _ => Err(wrong_type(vm, t)),
    });
    reg.add(CP, "getFloatAt0", "(Ljava/lang/Object;I)F", |vm, t, a| match vm.pool_entry(t, a)? {
        (_, Constant::Float(v)) => Ok(v.to_bits() as u64),
        _ => Err(wrong_type(vm, t)),
    });
    reg.add(CP, "getDoubleAt0", "(Ljava/lang/Object;I)D", |vm, t, a| match vm.pool_entry(t, a)? {
        (_, Constant::Double(v)) => Ok(v.to_bits()),
        _ => Err(wrong_type(vm, t)),
    });
    reg.add(CP, "getUTF8At0", "(Ljava/lang/Object;I)Ljava/lang/String;", |vm, t, a| match vm.pool_entry(t, a)? {
        (c, Constant::Utf8(_)) => Ok(vm.pool_string(c, a[2] as u16) as u64),
        _ => Err(wrong_type(vm, t)),
    });
    reg.add(CP, "getStringAt0", "(Ljava/lang/Object;I)Ljava/lang/String;", |vm, t, a| match vm.pool_entry(t, a)? {
        (c, Constant::String { utf8 }) => Ok(vm.pool_string(c, utf8) as u64),
        _ => Err(wrong_type(vm, t)),
    });
    reg.add(CP, "getClassAt0", "(Ljava/lang/Object;I)Ljava/lang/Class;", |vm, t, a| {
        let (c, name) = vm.pool_class_name(t, a)?;
        let k = vm.load_seen_from(t, c, &name)?;
        Ok(vm.mirror(k) as u64)
    });
    reg.add(CP, "getClassAtIfLoaded0", "(Ljava/lang/Object;I)Ljava/lang/Class;", |vm, t, a| {
        let (c, name) = vm.pool_class_name(t, a)?;
        match vm.lookup_in(vm.classes[c as usize].loader, &name) {
            Some(k) => Ok(vm.mirror(k) as u64),
            None => Ok(0),
        }
    });
    reg.add(CP, "getClassRefIndexAt0", "(Ljava/lang/Object;I)I", |vm, t, a| match vm.pool_entry(t, a)? {
        (_, Constant::FieldRef { class, .. } | Constant::MethodRef { class, .. })
        | (_, Constant::InterfaceMethodRef { class, .. }) => Ok(class as u64),
        _ => Err(wrong_type(vm, t)),
    });
    reg.add(CP, "getNameAndTypeRefIndexAt0", "(Ljava/lang/Object;I)I", |vm, t, a| match vm.pool_entry(t, a)? {
        (_, Constant::FieldRef { name_and_type, .. } | Constant::MethodRef { name_and_type, .. })
        | (_, Constant::InterfaceMethodRef { name_and_type, .. })
        | (_, Constant::Dynamic { name_and_type, .. } | Constant::InvokeDynamic { name_and_type, .. }) => {
            Ok(name_and_type as u64)
        }
        _ => Err(wrong_type(vm, t)),
    });
    reg.add(CP, "getNameAndTypeRefInfoAt0", "(Ljava/lang/Object;I)[Ljava/lang/String;", |vm, t, a| {
        let (c, _) = vm.pool_entry(t, a)?;
        let file = vm.classes[c as usize].file.clone();
        match file.as_ref().and_then(|f| f.constant_pool.name_and_type(a[2] as u16).ok()) {
            Some((n, d)) => Ok(vm.new_string_array(&[Some(n.to_string()), Some(d.to_string())])? as u64),
            None => Err(wrong_type(vm, t)),
        }
    });
    reg.add(CP, "getMemberRefInfoAt0", "(Ljava/lang/Object;I)[Ljava/lang/String;", |vm, t, a| {
        let (c, _) = vm.pool_entry(t, a)?;
        let file = vm.classes[c as usize].file.clone();
        match file.as_ref().and_then(|f| f.constant_pool.member_ref(a[2] as u16).ok()) {
            Some(r) => {
                let items = [Some(r.class.to_string()), Some(r.name.to_string()), Some(r.descriptor.to_string())];
                Ok(vm.new_string_array(&items)? as u64)
            }
            None => Err(wrong_type(vm, t)),
        }
    });
    for (name, desc) in [
        ("getMethodAt0", "(Ljava/lang/Object;I)Ljava/lang/reflect/Member;"),
        ("getMethodAtIfLoaded0", "(Ljava/lang/Object;I)Ljava/lang/reflect/Member;"),
    ] {
        reg.add(CP, name, desc, |vm, t, a| {
            let (c, r) = vm.pool_member(t, a)?;
            let k = vm.load_seen_from(t, c, &r.class)?;
            let Some(m) = vm.find_method(k, &r.name, &r.descriptor) else {
                return Err(vm.throw_new(
                    t,
                    "java/lang/RuntimeException",
                    Some("Unable to look up method in target class"),
                ));
            };
            let obj = if &*r.name == "<init>" { vm.reflect_constructor(t, m)? } else { vm.reflect_method(t, m)? };
            Ok(obj as u64)
        });
    }
    for (name, desc) in [
        ("getFieldAt0", "(Ljava/lang/Object;I)Ljava/lang/reflect/Field;"),
        ("getFieldAtIfLoaded0", "(Ljava/lang/Object;I)Ljava/lang/reflect/Field;"),
    ] {
        reg.add(CP, name, desc, |vm, t, a| {
            let (c, r) = vm.pool_member(t, a)?;
            let k = vm.load_seen_from(t, c, &r.class)?;
            let Some((owner, _)) = vm.find_field(k, &r.name, &r.descriptor) else {
                return Err(vm.throw_new(
                    t,
                    "java/lang/RuntimeException",
                    Some("Unable to look up field in target class"),
                ));
            };
            let index = vm.classes[owner as usize]
                .fields
                .iter()
                .position(|f| *f.name == *r.name && *f.descriptor == *r.descriptor)
                .unwrap_or(0);
            Ok(vm.reflect_field(t, owner, index)? as u64)
        });
    }
}

fn wrong_type<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread) -> crate::vm::Fault {
    vm.throw_new(t, "java/lang/IllegalArgumentException", Some("Wrong type at constant pool index"))
}

impl<T: Tracker> Vm<T> {
    /// The holder class and the entry at a ConstantPool native's index, with HotSpot's
    /// bounds check.
    fn pool_entry(&mut self, t: &mut JThread, a: &[u64]) -> VmResult<(ClassId, Constant)> {
        let c = self.class_of_mirror(a[1] as Ref);
        let index = a[2] as i32;
        let entry = self.classes[c as usize].file.as_ref().and_then(|f| {
            if index < 0 {
                None
            } else {
                f.constant_pool.get(index as u16).cloned()
            }
        });
        match entry {
            Some(e) if index < 0x10000 => Ok((c, e)),
            _ => {
                Err(self.throw_new(t, "java/lang/IllegalArgumentException", Some("Constant pool index out of bounds")))
            }
        }
    }

    /// The interned string of a Utf8 entry, exactly as Java sees it (lone surrogates kept).
    fn pool_string(&mut self, c: ClassId, utf8: u16) -> Ref {
        let units = self.classes[c as usize].file.as_ref().and_then(|f| f.constant_pool.utf16(utf8).ok());
        self.intern_utf16(units.unwrap_or_default().into())
    }

    fn pool_class_name(&mut self, t: &mut JThread, a: &[u64]) -> VmResult<(ClassId, String)> {
        match self.pool_entry(t, a)? {
            (c, Constant::Class { name }) => {
                let name =
                    self.classes[c as usize].file.as_ref().and_then(|f| f.constant_pool.utf8(name).ok().cloned());
                Ok((c, name.map(|n| n.to_string()).unwrap_or_default()))
            }
            _ => Err(wrong_type(self, t)),
        }
    }

    fn pool_member(&mut self, t: &mut JThread, a: &[u64]) -> VmResult<(ClassId, crate::classfile::MemberRef)> {
        let (c, _) = self.pool_entry(t, a)?;
        let r = self.classes[c as usize].file.as_ref().and_then(|f| f.constant_pool.member_ref(a[2] as u16).ok());
        match r {
            Some(r) => Ok((c, r)),
            None => Err(wrong_type(self, t)),
        }
    }
}

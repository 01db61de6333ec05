//! Resources (`Class.getResourceAsStream`, `ClassLoader.getSystemResourceAsStream`): served by the
//! VM from the JDK image and the user's class path, as a `ByteArrayInputStream`. Every class lives
//! in one unnamed module here, so the JDK's own lookup (through its class loaders and `ZipFile`)
//! would search the wrong places; these Java methods are replaced (see natives/mod.rs).

use super::{Registry, VmResult};
use crate::vm::heap::Ref;
use crate::vm::{JThread, Tracker, Vm};

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    reg.add("java/lang/Class", "getResourceAsStream", "(Ljava/lang/String;)Ljava/io/InputStream;", |vm, t, a| {
        if a[1] == 0 {
            return Err(vm.throw_npe(t));
        }
        let class = vm.class_of_mirror(a[0] as Ref);
        let name = vm.rust_string(a[1] as Ref);
        // Relative names are relative to the class's package, as Class.resolveName does.
        let path = match name.strip_prefix('/') {
            Some(abs) => abs.to_string(),
            None => match vm.classes[class as usize].name.rsplit_once('/') {
                Some((pkg, _)) => format!("{pkg}/{name}"),
                None => name,
            },
        };
        stream_of(vm, t, &path)
    });
    const DESC: &str = "(Ljava/lang/String;)Ljava/io/InputStream;";
    reg.add("java/lang/ClassLoader", "getSystemResourceAsStream", DESC, |vm, t, a| system_resource(vm, t, a[0] as Ref));
    reg.add("java/lang/ClassLoader", "getResourceAsStream", DESC, |vm, t, a| system_resource(vm, t, a[1] as Ref));
}

fn system_resource<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, name: Ref) -> VmResult<u64> {
    if name == 0 {
        return Err(vm.throw_npe(t));
    }
    let path = vm.rust_string(name);
    stream_of(vm, t, path.trim_start_matches('/'))
}

/// A ByteArrayInputStream over the resource's bytes, or null when there is no such resource.
fn stream_of<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, path: &str) -> VmResult<u64> {
    let Some(bytes) = vm.find_resource(path) else { return Ok(0) };
    let array = vm.new_byte_array(&bytes);
    vm.pinned.push(array);
    let class = vm.load_or_throw(t, "java/io/ByteArrayInputStream");
    let result = class.and_then(|c| {
        vm.initialize(t, c)?;
        let obj = vm.alloc_instance(c);
        let ctor = vm.find_declared_method(c, "<init>", "([B)V").expect("ByteArrayInputStream(byte[])");
        vm.invoke(t, ctor, &[obj as u64, array as u64])?;
        Ok(obj as u64)
    });
    vm.pinned.pop();
    result
}

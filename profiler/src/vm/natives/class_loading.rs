//! What HotSpot provides beneath the JDK's class loaders and module system: defining classes from
//! bytes (`ClassLoader.defineClass0/1/2`), finding what a loader has loaded, the boot loader's
//! classes and packages, the module graph's packages (`Module.defineModule0`), and loading the
//! JDK's own native libraries (whose natives this VM implements itself).

use super::{Registry, VmResult};
use crate::classpath::Origin;
use crate::vm::class_loaders::Definition;
use crate::vm::heap::{ObjData, Ref};
use crate::vm::loader::LoadError;
use crate::vm::{Fault, JThread, Tracker, Vm};
use std::sync::Arc;

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    const CL: &str = "java/lang/ClassLoader";
    reg.add(
        CL,
        "defineClass1",
        "(Ljava/lang/ClassLoader;Ljava/lang/String;[BIILjava/security/ProtectionDomain;Ljava/lang/String;)Ljava/lang/Class;",
        |vm, t, a| {
            let bytes = array_bytes(vm, t, a[2] as Ref, a[3] as i32, a[4] as i32)?;
            define(vm, t, a[0] as Ref, a[1] as Ref, &bytes, a[5] as Ref, a[6] as Ref)
        },
    );
    // Unsafe.defineClass (Byte Buddy's and cglib's injection into an existing loader).
    reg.add(
        "jdk/internal/misc/Unsafe",
        "defineClass0",
        "(Ljava/lang/String;[BIILjava/lang/ClassLoader;Ljava/security/ProtectionDomain;)Ljava/lang/Class;",
        |vm, t, a| {
            let bytes = array_bytes(vm, t, a[2] as Ref, a[3] as i32, a[4] as i32)?;
            define(vm, t, a[5] as Ref, a[1] as Ref, &bytes, a[6] as Ref, 0)
        },
    );
    // Direct buffers only: the JDK copies a heap buffer into an array and calls defineClass1.
    reg.add(
        CL,
        "defineClass2",
        "(Ljava/lang/ClassLoader;Ljava/lang/String;Ljava/nio/ByteBuffer;IILjava/security/ProtectionDomain;Ljava/lang/String;)Ljava/lang/Class;",
        |vm, t, a| {
            let address = vm.get_named(a[2] as Ref, "address");
            let (off, len) = (a[3] as i32, a[4] as i32);
            let bytes = (off >= 0 && len >= 0)
                .then(|| vm.native_memory.read_bytes(address + off as u64, len as usize))
                .flatten();
            let Some(bytes) = bytes else {
                return Err(vm.throw_new(t, "java/lang/ArrayIndexOutOfBoundsException", None));
            };
            define(vm, t, a[0] as Ref, a[1] as Ref, &bytes, a[5] as Ref, a[6] as Ref)
        },
    );
    // Lookup.defineClass and defineHiddenClass.
    reg.add(
        CL,
        "defineClass0",
        "(Ljava/lang/ClassLoader;Ljava/lang/Class;Ljava/lang/String;[BIILjava/security/ProtectionDomain;ZILjava/lang/Object;)Ljava/lang/Class;",
        |vm, t, a| {
            const NESTMATE_CLASS: u64 = 0x1;
            const HIDDEN_CLASS: u64 = 0x2;
            let (loader, name, pd, initialize, flags, class_data) =
                (a[0] as Ref, a[2] as Ref, a[6] as Ref, a[7] != 0, a[8], a[9] as Ref);
            let bytes = array_bytes(vm, t, a[3] as Ref, a[4] as i32, a[5] as i32)?;
            let name = (name != 0).then(|| vm.rust_string(name).replace('.', "/"));
            let hidden = flags & HIDDEN_CLASS != 0;
            let d = Definition {
                loader,
                name: name.as_deref(),
                protection_domain: pd,
                origin: Origin::Generated,
                hidden,
            };
            let c = vm.define_from_bytes(t, &bytes, d)?;
            if hidden && flags & NESTMATE_CLASS != 0 {
                let lookup = vm.class_of_mirror(a[1] as Ref);
                let host = vm.nest_host(t, lookup)?;
                vm.classes[c as usize].nest_host = Some(host);
            }
            let mirror = vm.mirror(c);
            if class_data != 0 {
                vm.set_named(mirror, "classData", class_data as u64);
            }
            if initialize {
                vm.initialize(t, c)?;
            }
            Ok(mirror as u64)
        },
    );
    // The nest: its host first, then the members its NestMembers attribute names.
    // JDK 17: a class's signers, kept by the VM (a copy is handed out, as HotSpot does).
    reg.add("java/lang/Class", "setSigners", "([Ljava/lang/Object;)V", |vm, _, a| {
        let c = vm.class_of_mirror(a[0] as Ref);
        vm.classes[c as usize].signers = a[1] as Ref;
        Ok(0)
    });
    reg.add("java/lang/Class", "getSigners", "()[Ljava/lang/Object;", |vm, _, a| {
        let c = vm.class_of_mirror(a[0] as Ref);
        match vm.classes[c as usize].signers {
            0 => Ok(0),
            signers => {
                let copy = vm.heap.get(signers).data.clone();
                let class = vm.heap.get(signers).class;
                Ok(vm.heap.alloc(class, copy) as u64)
            }
        }
    });
    reg.add("java/lang/Class", "getNestMembers0", "()[Ljava/lang/Class;", |vm, t, a| {
        let host = vm.nest_host(t, vm.class_of_mirror(a[0] as Ref))?;
        let members = vm.classes[host as usize].file.as_ref().map(|f| f.nest_members.clone()).unwrap_or_default();
        let mut mirrors = vec![vm.mirror(host)];
        for name in members {
            let m = vm.load_seen_from(t, host, &name)?;
            mirrors.push(vm.mirror(m));
        }
        let array = vm.load_or_throw(t, "[Ljava/lang/Class;")?;
        Ok(vm.heap.alloc(array, ObjData::Refs(mirrors.into())) as u64)
    });
    reg.add(CL, "findBootstrapClass", "(Ljava/lang/String;)Ljava/lang/Class;", |vm, t, a| {
        let name = vm.rust_string(a[0] as Ref).replace('.', "/");
        // Through `java.lang.instrument`'s transformers when an agent has some.
        if let Some(c) = vm.load_boot_class_for_java(t, &name)? {
            return Ok(vm.mirror(c) as u64);
        }
        match vm.load_class(&name) {
            Ok(c) => Ok(vm.mirror(c) as u64),
            Err(LoadError::NotFound(_)) => Ok(0),
            Err(LoadError::Fatal(e)) => Err(Fault::Fatal(e)),
        }
    });
    reg.add(CL, "findLoadedClass0", "(Ljava/lang/String;)Ljava/lang/Class;", |vm, _, a| {
        let name = vm.rust_string(a[1] as Ref).replace('.', "/");
        Ok(vm.lookup_in(a[0] as Ref, &name).map(|c| vm.mirror(c) as u64).unwrap_or(0))
    });
    reg.add(CL, "retrieveDirectives", "()Ljava/lang/AssertionStatusDirectives;", |vm, t, _| {
        // The -ea/-da options by name, in the order given (a later one wins), and the user default.
        let c = vm.load_or_throw(t, "java/lang/AssertionStatusDirectives")?;
        let booleans = vm.load_or_throw(t, "[Z")?;
        let obj = vm.alloc_instance(c);
        let directives = vm.opts.assertions.clone();
        let lists =
            [("classes", "classEnabled", &directives.classes), ("packages", "packageEnabled", &directives.packages)];
        for (names_field, enabled_field, list) in lists {
            let names: Vec<Option<String>> = list.iter().map(|(n, _)| Some(n.clone())).collect();
            let names = vm.new_string_array(&names)?;
            vm.set_named(obj, names_field, names as u64);
            let enabled = list.iter().map(|(_, on)| *on as i8).collect();
            let enabled = vm.heap.alloc(booleans, ObjData::Bytes(enabled));
            vm.set_named(obj, enabled_field, enabled as u64);
        }
        vm.set_named(obj, "deflt", directives.user_default as u64);
        Ok(obj as u64)
    });

    const MODULE: &str = "java/lang/Module";
    reg.add(
        MODULE,
        "defineModule0",
        "(Ljava/lang/Module;ZLjava/lang/String;Ljava/lang/String;[Ljava/lang/Object;)V",
        |vm, t, a| {
            let (module, pns) = (a[0] as Ref, a[4] as Ref);
            let name = match vm.get_named(module, "name") as Ref {
                0 => {
                    return Err(vm.throw_new(
                        t,
                        "java/lang/IllegalArgumentException",
                        Some("module name cannot be null"),
                    ))
                }
                s => vm.rust_string(s),
            };
            let packages: Vec<String> = match &vm.heap.get(pns).data {
                ObjData::Refs(items) => items.to_vec(),
                _ => Vec::new(),
            }
            .into_iter()
            .map(|p| vm.rust_string(p))
            .collect();
            vm.define_module(module, &name, packages);
            Ok(0)
        },
    );
    // Readability and exports are the JDK's to check (reflection, method handles); the
    // interpreter does not check access, so the VM need not record them.
    reg.add(MODULE, "addReads0", "(Ljava/lang/Module;Ljava/lang/Module;)V", |_, _, _| Ok(0));
    reg.add(MODULE, "addExports0", "(Ljava/lang/Module;Ljava/lang/String;Ljava/lang/Module;)V", |_, _, _| Ok(0));
    reg.add(MODULE, "addExportsToAll0", "(Ljava/lang/Module;Ljava/lang/String;)V", |_, _, _| Ok(0));
    reg.add(MODULE, "addExportsToAllUnnamed0", "(Ljava/lang/Module;Ljava/lang/String;)V", |_, _, _| Ok(0));

    const BOOT: &str = "jdk/internal/loader/BootLoader";
    reg.add(BOOT, "setBootLoaderUnnamedModule0", "(Ljava/lang/Module;)V", |vm, _, a| {
        vm.boot_unnamed_module = a[0] as Ref;
        Ok(0)
    });
    reg.add(BOOT, "getSystemPackageNames", "()[Ljava/lang/String;", |vm, _, _| {
        let names: Vec<Option<String>> = vm.boot_packages().into_iter().map(Some).collect();
        Ok(vm.new_string_array(&names)? as u64)
    });
    // The location of a boot-loader package: its module in the runtime image.
    reg.add(BOOT, "getSystemPackageLocation", "(Ljava/lang/String;)Ljava/lang/String;", |vm, _, a| {
        let package = vm.rust_string(a[0] as Ref);
        match vm.boot_package_module(&package) {
            Some(m) => Ok(vm.new_string(&format!("jrt:/{m}")) as u64),
            None => Ok(0),
        }
    });

    // The JDK image for the JDK's own Java reader (the platform loader's classes, `jrt:`
    // resources): mapped read-only, as HotSpot's libjimage maps it.
    reg.add(
        "jdk/internal/jimage/NativeImageBuffer",
        "getNativeMap",
        "(Ljava/lang/String;)Ljava/nio/ByteBuffer;",
        |vm, t, a| {
            let path = vm.rust_string(a[0] as Ref);
            if std::path::Path::new(&path) != vm.opts.jdk.modules() {
                return Ok(0);
            }
            let Some((address, len)) = vm.map_jdk_image() else { return Ok(0) };
            direct_buffer(vm, t, address, len)
        },
    );

    // Native libraries: the VM implements the JDK's natives itself, so a library of the JDK
    // (under java.home) loads as a no-op; any other holds code the VM cannot run, and fails to
    // load as a library that is not there, so that programs take their pure-Java path.
    const LIBS: &str = "jdk/internal/loader/NativeLibraries";
    reg.add(LIBS, "findBuiltinLib", "(Ljava/lang/String;)Ljava/lang/String;", |_, _, _| Ok(0));
    reg.add(LIBS, "load", "*", |vm, t, a| {
        // JDK 17: (impl, name, isBuiltin, isJNI, throwIfFail); JDK 18+: (impl, name, isBuiltin, throwIfFail).
        let throw = *a.last().unwrap_or(&0) != 0;
        load_library(vm, t, a[0] as Ref, a[1] as Ref, throw)
    });
    reg.add(LIBS, "unload", "*", |_, _, _| Ok(0));
    reg.add(LIBS, "findEntry0", "*", |_, _, _| Ok(0));
    const RAW: &str = "jdk/internal/loader/RawNativeLibraries";
    reg.add(RAW, "load0", "*", |vm, t, a| load_library(vm, t, a[0] as Ref, a[1] as Ref, false));
    reg.add(RAW, "unload0", "*", |_, _, _| Ok(0));
}

/// The bytes `off..off + len` of a `byte[]`, or ArrayIndexOutOfBoundsException.
fn array_bytes<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, array: Ref, off: i32, len: i32) -> VmResult<Vec<u8>> {
    if array == 0 {
        return Err(vm.throw_npe(t));
    }
    let bytes = match &vm.heap.get(array).data {
        ObjData::Bytes(b) if off >= 0 && len >= 0 && (off as usize + len as usize) <= b.len() => {
            Some(b[off as usize..off as usize + len as usize].iter().map(|&x| x as u8).collect())
        }
        _ => None,
    };
    match bytes {
        Some(b) => Ok(b),
        None => Err(vm.throw_new(t, "java/lang/ArrayIndexOutOfBoundsException", None)),
    }
}

/// `defineClass1/2`: a class of `loader` from bytes, with its code source's location.
fn define<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    loader: Ref,
    name: Ref,
    bytes: &[u8],
    pd: Ref,
    source: Ref,
) -> VmResult<u64> {
    let name = (name != 0).then(|| vm.rust_string(name).replace('.', "/"));
    let source = (source != 0).then(|| vm.rust_string(source));
    let d = Definition {
        loader,
        name: name.as_deref(),
        protection_domain: pd,
        origin: origin_of_location(source.as_deref()),
        hidden: false,
    };
    let c = vm.define_from_bytes(t, bytes, d)?;
    Ok(vm.mirror(c) as u64)
}

/// Where a class defined from bytes came from, by its code source's location: a `file:` URL
/// names a class path directory (the program's code) or a jar (a library); anything else (or
/// none) was made at run time.
pub(crate) fn origin_of_location(location: Option<&str>) -> Origin {
    let Some(path) = location.and_then(|l| l.strip_prefix("file:")) else {
        return Origin::Generated;
    };
    let path = path.trim_start_matches("//localhost").trim_start_matches("//");
    let path = if path.starts_with('/') { path.to_string() } else { format!("/{path}") };
    let path: Arc<std::path::Path> = Arc::from(std::path::Path::new(&percent_decode(&path)));
    if path.is_file() {
        Origin::Jar(path)
    } else {
        Origin::ClassPath(path)
    }
}

/// `%20` → ` ` (a URL path back to a file name).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn load_library<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, lib: Ref, name: Ref, throw: bool) -> VmResult<u64> {
    let path = vm.rust_string(name);
    let jdk_lib = std::path::Path::new(&path).starts_with(&vm.opts.jdk.home);
    if jdk_lib {
        vm.set_named(lib, "handle", 1);
        vm.set_named(lib, "jniVersion", 0x000a_0000);
        return Ok(1);
    }
    if throw {
        let msg = format!("{path}: the Bloatlens VM runs Java bytecode only and cannot load native libraries");
        return Err(vm.throw_new(t, "java/lang/UnsatisfiedLinkError", Some(&msg)));
    }
    Ok(0)
}

/// A `java.nio.DirectByteBuffer` over native memory, as JNI's `NewDirectByteBuffer` makes it.
pub(crate) fn direct_buffer<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, address: u64, len: usize) -> VmResult<u64> {
    let c = vm.load_or_throw(t, "java/nio/DirectByteBuffer")?;
    vm.initialize(t, c)?;
    let obj = vm.alloc_instance(c);
    vm.pinned.push(obj);
    // JDK 17: (long, int); JDK 21+: (long, long).
    let result = if let Some(ctor) = vm.find_declared_method(c, "<init>", "(JI)V") {
        vm.invoke(t, ctor, &[obj as u64, address, 0, len as u64])
    } else if let Some(ctor) = vm.find_declared_method(c, "<init>", "(JJ)V") {
        vm.invoke(t, ctor, &[obj as u64, address, 0, len as u64, 0])
    } else {
        Err(Fault::Fatal(crate::vm::VmError::Unsupported(
            "DirectByteBuffer without an (address, capacity) constructor".into(),
        )))
    };
    vm.pinned.pop();
    result.map(|_| obj as u64)
}

impl<T: Tracker> Vm<T> {
    /// Maps the JDK image once; its address and length in native memory.
    fn map_jdk_image(&mut self) -> Option<(u64, usize)> {
        if let Some(mapped) = self.jdk_image_map {
            return Some(mapped);
        }
        let file = std::fs::File::open(self.opts.jdk.modules()).ok()?;
        // SAFETY: the JDK image is a read-only file of the installed JDK that no one writes while
        // a program runs; HotSpot maps it the same way (libjimage). The mapping is only read.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let len = map.len();
        let address = self.native_memory.map(Arc::new(map));
        self.jdk_image_map = Some((address, len));
        Some((address, len))
    }
}

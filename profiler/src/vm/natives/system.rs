//! Natives of the JDK's start-up and internals: system properties, jdk.internal.misc.VM and
//! CDS (no archive: everything is loaded from lib/modules), signals, reflection's caller
//! lookup and the access controller.

use super::{Registry, VmResult};
use crate::vm::class::ClassId;
use crate::vm::heap::Ref;
use crate::vm::{JThread, Tracker, Vm, VmError};

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    reg.add("java/lang/ProcessImpl", "init", "()V", |_, _, _| Ok(0));
    // Starting another process (`ProcessBuilder.start`, `Runtime.exec`) ends the run, naming the command.
    reg.add("java/lang/ProcessImpl", "forkAndExec", "*", |vm, _, a| {
        let bytes = |r: u64| match r as Ref {
            0 => Vec::new(),
            r => match &vm.heap.get(r).data {
                crate::vm::heap::ObjData::Bytes(b) => b.iter().map(|&x| x as u8).collect(),
                _ => Vec::new(),
            },
        };
        // (this, mode, helperpath, prog, argBlock, argc, …): the program and its arguments, NUL-ended.
        let mut words: Vec<String> = Vec::new();
        for field in [bytes(a[3]), bytes(a[4])] {
            words.extend(field.split(|&b| b == 0).filter(|w| !w.is_empty()).map(|w| String::from_utf8_lossy(w).into_owned()));
        }
        Err(crate::vm::Fault::Fatal(VmError::Refused(format!(
            "the program started a process (`{}`): processes are refused — the Bloatlens VM runs only the Java program itself",
            words.join(" ")
        ))))
    });
    // System.getenv: the process environment with the run's own variables over it, as
    // alternating name/value byte arrays.
    reg.add("java/lang/ProcessEnvironment", "environ", "()[[B", |vm, t, _| {
        use std::os::unix::ffi::OsStrExt;
        let mut vars: Vec<(Vec<u8>, Vec<u8>)> =
            std::env::vars_os().map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec())).collect();
        for (k, v) in vm.opts.env.clone() {
            vars.retain(|(name, _)| name.as_slice() != k.as_bytes());
            vars.push((k.into_bytes(), v.into_bytes()));
        }
        let mut items = Vec::new();
        for (k, v) in vars {
            items.push(vm.new_byte_array(&k));
            items.push(vm.new_byte_array(&v));
        }
        let class = vm.load_or_throw(t, "[[B")?;
        Ok(vm.heap.alloc(class, crate::vm::heap::ObjData::Refs(items.into())) as u64)
    });
    // JDK 21+ (JDK 25's start-up).
    reg.add("jdk/internal/misc/CDS", "getCDSConfigStatus", "()I", |_, _, _| Ok(0));
    // Performance counters (PerfCounter): backed by a plain 8-byte heap buffer nobody reads.
    reg.add("jdk/internal/perf/Perf", "createLong", "(Ljava/lang/String;IIJ)Ljava/nio/ByteBuffer;", |vm, t, _| {
        let c = vm.load_or_throw(t, "java/nio/ByteBuffer")?;
        vm.initialize(t, c)?;
        let alloc = vm
            .find_declared_method(c, "allocate", "(I)Ljava/nio/ByteBuffer;")
            .ok_or_else(|| VmError::Internal("ByteBuffer.allocate".into()))?;
        vm.invoke(t, alloc, &[8])
    });
    reg.add(
        "java/security/AccessController",
        "getProtectionDomain",
        "(Ljava/lang/Class;)Ljava/security/ProtectionDomain;",
        |_, _, _| Ok(0),
    );
    reg.add("jdk/internal/util/SystemProps$Raw", "vmProperties", "()[Ljava/lang/String;", vm_properties);
    reg.add("jdk/internal/util/SystemProps$Raw", "platformProperties", "()[Ljava/lang/String;", platform_properties);

    reg.add("jdk/internal/misc/VM", "initialize", "()V", |_, _, _| Ok(0));
    reg.add("jdk/internal/misc/VM", "initializeFromArchive", "(Ljava/lang/Class;)V", |_, _, _| Ok(0));
    reg.add(
        "jdk/internal/misc/VM",
        "latestUserDefinedLoader0",
        "()Ljava/lang/ClassLoader;",
        latest_user_defined_loader,
    );
    reg.add("jdk/internal/misc/VM", "getNanoTimeAdjustment", "(J)J", |_, _, a| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let offset = a[0] as i64;
        let adj = now.as_secs() as i64 - offset;
        if adj.abs() > (1i64 << 32) {
            return Ok(-1i64 as u64);
        }
        Ok((adj * 1_000_000_000 + now.subsec_nanos() as i64) as u64)
    });
    reg.add("jdk/internal/misc/VM", "getRuntimeArguments", "()[Ljava/lang/String;", |vm, _, _| {
        Ok(vm.new_string_array(&[])? as u64)
    });
    for name in ["getuid", "geteuid", "getgid", "getegid"] {
        reg.add("jdk/internal/misc/VM", name, "()J", |_, _, _| Ok(0));
    }

    reg.add("jdk/internal/misc/CDS", "isDumpingClassList0", "()Z", |_, _, _| Ok(0));
    reg.add("jdk/internal/misc/CDS", "isDumpingArchive0", "()Z", |_, _, _| Ok(0));
    reg.add("jdk/internal/misc/CDS", "isSharingEnabled0", "()Z", |_, _, _| Ok(0));
    reg.add("jdk/internal/misc/CDS", "getRandomSeedForDumping", "()J", |_, _, _| Ok(0));
    reg.add("jdk/internal/misc/CDS", "initializeFromArchive", "(Ljava/lang/Class;)V", |_, _, _| Ok(0));
    reg.add("jdk/internal/misc/CDS", "defineArchivedModules", "*", |_, _, _| Ok(0));
    reg.add("jdk/internal/misc/CDS", "logLambdaFormInvoker", "(Ljava/lang/String;)V", |_, _, _| Ok(0));

    reg.add("jdk/internal/misc/Signal", "findSignal0", "(Ljava/lang/String;)I", |vm, _, a| {
        let name = vm.rust_string(a[0] as Ref);
        Ok(match name.as_str() {
            "HUP" => 1,
            "INT" => 2,
            "QUIT" => 3,
            "TERM" => 15,
            _ => -1i32 as u32 as u64,
        })
    });
    reg.add("jdk/internal/misc/Signal", "handle0", "(IJ)J", |_, _, _| Ok(0));
    reg.add("jdk/internal/misc/ScopedMemoryAccess", "registerNatives", "()V", |_, _, _| Ok(0));
    // Closing a shared arena: HotSpot makes sure no thread is inside a scoped access to its
    // memory. The VM's threads leave the scoped accessors only at their end (they are short and
    // never wait), so none is ever inside one: closing always succeeds.
    reg.add(
        "jdk/internal/misc/ScopedMemoryAccess",
        "closeScope0",
        "(Ljdk/internal/foreign/MemorySessionImpl;Ljdk/internal/misc/ScopedMemoryAccess$ScopedAccessError;)V",
        |_, _, _| Ok(0),
    );
    reg.add(
        "jdk/internal/misc/ScopedMemoryAccess",
        "closeScope0",
        "(Ljdk/internal/foreign/MemorySessionImpl;)Z",
        |_, _, _| Ok(1),
    );

    // `ProcessHandle.current()` and its parent: the VM's own process, as /proc shows it (other
    // processes' handles, children and `info()` are natives the VM lacks).
    const PH: &str = "java/lang/ProcessHandleImpl";
    reg.add(PH, "initNative", "()V", |_, _, _| Ok(0));
    reg.add(PH, "getCurrentPid0", "()J", |_, _, _| Ok(std::process::id() as u64));
    reg.add(PH, "isAlive0", "(J)J", |_, _, a| {
        Ok(process_start(a[0] as i64).map(|ms| ms as u64).unwrap_or(-1i64 as u64))
    });
    reg.add(PH, "parent0", "(JJ)J", |_, _, a| {
        let (pid, start) = (a[0] as i64, a[2] as i64);
        let alive = process_start(pid);
        // A start time that does not match is another process that took the pid.
        if alive.is_none() || (start > 0 && alive != Some(start)) {
            return Ok(-1i64 as u64);
        }
        Ok(proc_stat(pid).and_then(|f| f.get(1)?.parse::<i64>().ok()).unwrap_or(-1) as u64)
    });

    // JDK 22+'s foreign function interface: the VM calls no native code, so `Linker.nativeLinker()`
    // throws UnsupportedOperationException (as on a platform without a linker); memory segments,
    // arenas and mapped files work without it.
    reg.add("jdk/internal/vm/ForeignLinkerSupport", "isSupported0", "()Z", |_, _, _| Ok(0));

    // Programs run without --enable-preview.
    reg.add("jdk/internal/misc/PreviewFeatures", "isPreviewEnabled", "()Z", |_, _, _| Ok(0));
    reg.add("jdk/internal/reflect/Reflection", "getCallerClass", "()Ljava/lang/Class;", get_caller_class);
    reg.add("jdk/internal/reflect/Reflection", "getClassAccessFlags", "(Ljava/lang/Class;)I", |vm, _, a| {
        let c = vm.class_of_mirror(a[0] as Ref);
        Ok(vm.classes[c as usize].access as u64)
    });
    reg.add("jdk/internal/reflect/Reflection", "areNestMates", "(Ljava/lang/Class;Ljava/lang/Class;)Z", |vm, t, a| {
        let (x, y) = (vm.class_of_mirror(a[0] as Ref), vm.class_of_mirror(a[1] as Ref));
        Ok((x == y || vm.nest_host(t, x)? == vm.nest_host(t, y)?) as u64)
    });

    reg.add(
        "java/security/AccessController",
        "getStackAccessControlContext",
        "()Ljava/security/AccessControlContext;",
        |_, _, _| Ok(0),
    );
    reg.add(
        "java/security/AccessController",
        "getInheritedAccessControlContext",
        "()Ljava/security/AccessControlContext;",
        |_, _, _| Ok(0),
    );
    reg.add("java/security/AccessController", "ensureMaterializedForStackWalk", "(Ljava/lang/Object;)V", |_, _, _| {
        Ok(0)
    });
    reg.add("java/util/concurrent/atomic/AtomicLong", "VMSupportsCS8", "()Z", |_, _, _| Ok(1));
    reg.add("java/util/TimeZone", "getSystemTimeZoneID", "(Ljava/lang/String;)Ljava/lang/String;", |vm, _, _| {
        Ok(system_time_zone().map(|z| vm.new_string(&z) as u64).unwrap_or(0))
    });
    reg.add("java/util/TimeZone", "getSystemGMTOffsetID", "()Ljava/lang/String;", |vm, _, _| {
        Ok(vm.new_string("GMT") as u64)
    });
}

/// The platform's time zone as libjava finds it on Linux: `TZ` (a leading `:` dropped), else
/// `/etc/timezone`, else the zone `/etc/localtime` links to; `None` leaves the JDK at GMT.
fn system_time_zone() -> Option<String> {
    if let Ok(tz) = std::env::var("TZ") {
        let tz = tz.trim_start_matches(':').trim();
        if !tz.is_empty() {
            return Some(tz.strip_prefix("/usr/share/zoneinfo/").unwrap_or(tz).to_string());
        }
    }
    if let Ok(s) = std::fs::read_to_string("/etc/timezone") {
        let zone = s.lines().next().unwrap_or("").trim();
        if !zone.is_empty() {
            return Some(zone.to_string());
        }
    }
    let target = std::fs::read_link("/etc/localtime").ok()?;
    let target = target.to_string_lossy();
    target.split_once("zoneinfo/").map(|(_, zone)| zone.to_string())
}

/// `Reflection.getCallerClass()`: the class of the method that called the method asking,
/// skipping reflection's own frames above it (as HotSpot: the asking method itself is never
/// skipped, so `Method.invoke` asking gets its caller).
/// The class of the caller of the `@CallerSensitive` method that called `getCallerClass`, as
/// HotSpot finds it: reflection's frames (`Method.invoke`, the method and constructor accessors)
/// and the frames of compiled lambda forms are not callers.
fn get_caller_class<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, _: &[u64]) -> VmResult<u64> {
    let accessors: Vec<ClassId> =
        ["jdk/internal/reflect/MethodAccessorImpl", "jdk/internal/reflect/ConstructorAccessorImpl"]
            .iter()
            .filter_map(|n| vm.lookup_class(n))
            .collect();
    let class_of = |f: &crate::vm::Frame| &*vm.classes[vm.methods[f.method as usize].class as usize].name;
    let mut frames = t.frames.iter().rev().skip_while(|f| class_of(f) == "jdk/internal/reflect/Reflection");
    frames.next(); // the @CallerSensitive method itself
    let mut frames = frames.filter(|f| {
        let m = &vm.methods[f.method as usize];
        let reflection = class_of(f) == "java/lang/reflect/Method" && &*m.name == "invoke"
            || accessors.iter().any(|&a| vm.is_subtype(m.class, a));
        let lambda_form = m.hidden && class_of(f).starts_with("java/lang/invoke/");
        !(reflection || lambda_form)
    });
    match frames.next() {
        Some(f) => {
            let c = vm.methods[f.method as usize].class;
            Ok(vm.mirror(c) as u64)
        }
        None => Ok(0),
    }
}

/// `VM.latestUserDefinedLoader0()`: the loader of the innermost method on the stack whose class
/// neither the boot nor the platform loader defined, reflection's accessors skipped (as HotSpot);
/// deserialization resolves the stream's classes with it.
fn latest_user_defined_loader<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, _: &[u64]) -> VmResult<u64> {
    let accessor = vm.lookup_class("jdk/internal/reflect/MethodAccessorImpl");
    for f in t.frames.iter().rev() {
        let class = vm.methods[f.method as usize].class;
        if accessor.is_some_and(|a| vm.is_subtype(class, a)) {
            continue;
        }
        let loader = vm.classes[class as usize].loader;
        if loader == 0 {
            continue;
        }
        let loader_class = &*vm.classes[vm.heap.get(loader).class as usize].name;
        if loader_class != "jdk/internal/loader/ClassLoaders$PlatformClassLoader" {
            return Ok(loader as u64);
        }
    }
    Ok(0)
}

fn vm_properties<T: Tracker>(vm: &mut Vm<T>, _: &mut JThread, _: &[u64]) -> VmResult<u64> {
    let java_home = vm.opts.jdk.home.display().to_string();
    let version = vm.opts.jdk.version().unwrap_or_else(|| "17".into());
    let props: Vec<(String, String)> = vec![
        ("java.home".into(), java_home.clone()),
        ("java.class.path".into(), vm.opts.class_path.clone()),
        ("java.vm.specification.name".into(), "Java Virtual Machine Specification".into()),
        ("java.vm.specification.vendor".into(), "Oracle Corporation".into()),
        ("java.vm.specification.version".into(), version.split('.').next().unwrap_or("17").into()),
        ("java.vm.name".into(), "Bloatlens VM".into()),
        ("java.vm.vendor".into(), "Bloatlens".into()),
        ("java.vm.version".into(), env!("CARGO_PKG_VERSION").into()),
        ("java.vm.info".into(), "interpreted mode".into()),
        ("jdk.debug".into(), "release".into()),
        ("sun.boot.library.path".into(), format!("{java_home}/lib")),
        ("java.library.path".into(), "/usr/java/packages/lib:/usr/lib64:/lib64:/lib:/usr/lib".into()),
        ("sun.java.launcher".into(), "SUN_STANDARD".into()),
        ("sun.nio.MaxDirectMemorySize".into(), "-1".into()),
        ("sun.nio.PageAlignDirectMemory".into(), "false".into()),
        ("java.lang.invoke.MethodHandle.TRACE_RESOLVE".into(), "false".into()),
        // Attaching to this VM is done in-process (see natives/instrument.rs); the other way
        // HotSpot offers a library such as Byte Buddy, a helper `java` process that attaches back,
        // is refused like every process. `-Djdk.attach.allowAttachSelf=false` restores HotSpot's
        // default, and the JDK's own check then refuses self-attachment as HotSpot does.
        ("jdk.attach.allowAttachSelf".into(), "true".into()),
    ];
    // The command line's `-D` properties come last: SystemProps keeps the last of a name, as
    // `java` lets `-D` override (`user.dir` included: only absent ones take the platform's).
    let props = props.into_iter().chain(vm.opts.properties.iter().cloned());
    let mut items: Vec<Option<String>> = Vec::new();
    for (k, v) in props {
        items.push(Some(k));
        items.push(Some(v));
    }
    items.push(None);
    Ok(vm.new_string_array(&items)? as u64)
}

/// `platformProperties()`: an array indexed by `SystemProps$Raw`'s `_*_NDX` constants, which we
/// read from the class itself so that the layout always matches the JDK in use.
fn platform_properties<T: Tracker>(vm: &mut Vm<T>, _: &mut JThread, _: &[u64]) -> VmResult<u64> {
    let raw = vm
        .lookup_class("jdk/internal/util/SystemProps$Raw")
        .ok_or_else(|| VmError::Boot("SystemProps$Raw not loaded".into()))?;
    let file = vm.classes[raw as usize].file.clone().ok_or_else(|| VmError::Boot("SystemProps$Raw".into()))?;
    let mut slots: Vec<(String, usize)> = Vec::new();
    let mut length = 0usize;
    for f in &file.fields {
        let Some(cv) = f.constant_value else { continue };
        let Some(crate::classfile::Constant::Integer(v)) = file.constant_pool.get(cv) else {
            continue;
        };
        if &*f.name == "FIXED_LENGTH" {
            length = *v as usize;
        } else if let Some(key) = f.name.strip_prefix('_').and_then(|n| n.strip_suffix("_NDX")) {
            slots.push((key.to_string(), *v as usize));
        }
    }
    let cwd = vm.working_dir().display().to_string();
    // A sandboxed run's temporary files are its own (a `-Djava.io.tmpdir` still wins).
    let tmp = vm.sandbox.as_ref().map_or_else(|| "/tmp".to_string(), |s| s.tmp_dir().display().to_string());
    let home = std::env::var("HOME").unwrap_or_else(|_| "/".into());
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let os_version =
        std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).unwrap_or_default();
    let value = |key: &str| -> Option<String> {
        Some(
            match key {
                "file_encoding" | "native_encoding" | "sun_jnu_encoding" => "UTF-8",
                "file_separator" => "/",
                "path_separator" => ":",
                "line_separator" => "\n",
                "java_io_tmpdir" => &tmp,
                "os_arch" => "amd64",
                "os_name" => "Linux",
                "os_version" => &os_version,
                "sun_arch_data_model" => "64",
                "sun_cpu_endian" => "little",
                "sun_io_unicode_encoding" => "UnicodeLittle",
                "sun_os_patch_level" => "unknown",
                "user_dir" => &cwd,
                "user_home" => &home,
                "user_name" => &user,
                "display_language" | "format_language" => "en",
                _ => return None,
            }
            .to_string(),
        )
    };
    let mut items = vec![None; length.max(slots.iter().map(|s| s.1 + 1).max().unwrap_or(0))];
    for (key, i) in slots {
        items[i] = value(&key);
    }
    Ok(vm.new_string_array(&items)? as u64)
}

/// The fields of /proc/PID/stat after the command name (state first).
fn proc_stat(pid: i64) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(stat.rsplit_once(')')?.1.split_whitespace().map(str::to_string).collect())
}

/// When process `pid` started, in ms since the epoch (as the JDK's native computes it: boot time
/// plus the start in clock ticks); None when there is no such process.
fn process_start(pid: i64) -> Option<i64> {
    let fields = proc_stat(pid)?;
    let ticks: i64 = fields.get(19)?.parse().ok()?;
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let boot: i64 = stat.lines().find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())?;
    Some(boot * 1000 + ticks * 1000 / 100)
}

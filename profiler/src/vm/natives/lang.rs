//! Natives of java.lang: Object, Class, String, Throwable, Thread, System, Runtime, the float
//! bit conversions and StrictMath.

use super::{Registry, VmResult};
use crate::classfile::access;
use crate::vm::class::{ClassKind, Elem};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::threads::{STATUS_NEW, STATUS_TERMINATED};
use crate::vm::tracker::Bulk;
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};

type A<'a> = &'a [u64];

fn r(v: u64) -> Ref {
    v as Ref
}

fn b(v: bool) -> VmResult<u64> {
    Ok(v as u64)
}

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    reg.add("java/lang/Thread", "currentCarrierThread", "()Ljava/lang/Thread;", |_, t, _| Ok(t.obj as u64));
    // No continuations: the JDK runs virtual threads as platform threads then.
    reg.add("jdk/internal/vm/ContinuationSupport", "isSupported0", "()Z", |_, _, _| Ok(0));
    // JDK 21+ variants of natives above.
    reg.add(
        "java/lang/StackTraceElement",
        "initStackTraceElements",
        "([Ljava/lang/StackTraceElement;Ljava/lang/Object;I)V",
        |vm, _, a| {
            vm.init_stack_trace_elements(r(a[0]), r(a[1]), a[2] as i32 as usize)?;
            Ok(0)
        },
    );
    reg.add("java/lang/ref/PhantomReference", "clear0", "()V", |vm, _, a| {
        vm.set_named(r(a[0]), "referent", 0);
        Ok(0)
    });
    reg.add("java/lang/Thread", "ensureMaterializedForStackWalk", "(Ljava/lang/Object;)V", |_, _, _| Ok(0));
    // JDK 21+: thread ids come from a native counter read with Unsafe.getAndAddLong(null, offset, 1).
    reg.add("java/lang/Thread", "getNextThreadIdOffset", "()J", |vm, _, _| {
        if vm.next_tid_address == 0 {
            vm.next_tid_address = vm.native_memory.allocate(8);
            vm.native_memory.write(vm.next_tid_address, 8, 2);
        }
        Ok(vm.next_tid_address)
    });
    // Threads and monitors (see vm/threads.rs).
    reg.add("java/lang/Thread", "isAlive", "()Z", |vm, _, a| {
        let status = vm.thread_field(r(a[0]), "threadStatus");
        b(status != STATUS_NEW && status != STATUS_TERMINATED)
    });
    reg.add("java/lang/Thread", "start0", "()V", |vm, t, a| {
        vm.start_thread(t, r(a[0]))?;
        Ok(0)
    });
    reg.add("java/lang/Thread", "holdsLock", "(Ljava/lang/Object;)Z", |vm, t, a| {
        if a[0] == 0 {
            return Err(vm.throw_npe(t));
        }
        b(t.held.contains(&r(a[0])))
    });
    reg.add("java/lang/Thread", "yield", "()V", |vm, _, _| if vm.can_yield() { Err(Fault::Yield) } else { Ok(0) });
    reg.add("java/lang/Thread", "sleep", "(J)V", |vm, t, a| {
        vm.sleep(t, a[0] as i64)?;
        Ok(0)
    });
    reg.add("java/lang/Thread", "interrupt0", "()V", |vm, _, a| {
        vm.interrupt(r(a[0]));
        Ok(0)
    });
    reg.add("java/lang/Object", "notify", "()V", |vm, t, a| {
        vm.monitor_notify(t, r(a[0]), false)?;
        Ok(0)
    });
    reg.add("java/lang/Object", "notifyAll", "()V", |vm, t, a| {
        vm.monitor_notify(t, r(a[0]), true)?;
        Ok(0)
    });
    reg.add("java/lang/Object", "wait", "(J)V", |vm, t, a| {
        vm.monitor_wait(t, r(a[0]), a[1] as i64)?;
        Ok(0)
    });
    // JDK 21+: `wait(long)` and `sleep(long)` are Java (virtual threads), around these natives.
    reg.add("java/lang/Object", "wait0", "(J)V", |vm, t, a| {
        vm.monitor_wait(t, r(a[0]), a[1] as i64)?;
        Ok(0)
    });
    reg.add("java/lang/Thread", "sleepNanos0", "(J)V", |vm, t, a| {
        vm.sleep_for(t, std::time::Duration::from_nanos(a[0]))?;
        Ok(0)
    });
    // The Reference Handler blocks until the collector leaves references pending (see vm/gc.rs).
    reg.add("java/lang/ref/Reference", "waitForReferencePendingList", "()V", |vm, _, _| {
        vm.await_pending_references()?;
        Ok(0)
    });
    // java.lang.Object
    reg.add("java/lang/Object", "getClass", "()Ljava/lang/Class;", |vm, _, a| {
        let c = vm.heap.get(r(a[0])).class;
        Ok(vm.mirror(c) as u64)
    });
    reg.add("java/lang/Object", "hashCode", "()I", |vm, _, a| Ok(vm.identity_hash(r(a[0])) as u32 as u64));
    reg.add("java/lang/System", "identityHashCode", "(Ljava/lang/Object;)I", |vm, _, a| {
        Ok(if a[0] == 0 { 0 } else { vm.identity_hash(r(a[0])) as u32 as u64 })
    });
    reg.add("java/lang/Object", "clone", "()Ljava/lang/Object;", object_clone);
    // java.lang.String and friends
    reg.add("java/lang/String", "intern", "()Ljava/lang/String;", |vm, _, a| Ok(vm.intern(r(a[0])) as u64));
    reg.add("java/lang/StringUTF16", "isBigEndian", "()Z", |_, _, _| b(false));
    reg.add("java/lang/NullPointerException", "getExtendedNPEMessage", "()Ljava/lang/String;", |vm, _, a| {
        if !super::flags::show_code_details(vm) {
            return Ok(0);
        }
        match vm.extended_npe_message(r(a[0])) {
            Some(msg) => Ok(vm.new_string(&msg) as u64),
            None => Ok(0),
        }
    });

    // Float and double bits
    reg.add("java/lang/Float", "floatToRawIntBits", "(F)I", |_, _, a| Ok(a[0] & 0xFFFF_FFFF));
    reg.add("java/lang/Float", "intBitsToFloat", "(I)F", |_, _, a| Ok(a[0] & 0xFFFF_FFFF));
    reg.add("java/lang/Double", "doubleToRawLongBits", "(D)J", |_, _, a| Ok(a[0]));
    reg.add("java/lang/Double", "longBitsToDouble", "(J)D", |_, _, a| Ok(a[0]));

    // StrictMath: fdlibm's algorithms, through the libm crate (a port of musl's fdlibm-derived code).
    macro_rules! math1 {
        ($($name:literal => $f:path),* $(,)?) => {$(
            reg.add("java/lang/StrictMath", $name, "(D)D", |_, _, a| Ok($f(f64::from_bits(a[0])).to_bits()));
        )*};
    }
    math1! {
        "sin" => libm::sin, "cos" => libm::cos, "tan" => libm::tan, "asin" => libm::asin,
        "acos" => libm::acos, "atan" => libm::atan, "exp" => libm::exp, "log" => libm::log,
        "log10" => libm::log10, "sqrt" => libm::sqrt, "cbrt" => libm::cbrt, "sinh" => libm::sinh,
        "cosh" => libm::cosh, "tanh" => libm::tanh, "expm1" => libm::expm1, "log1p" => libm::log1p,
    }
    macro_rules! math2 {
        ($($name:literal => $f:path),* $(,)?) => {$(
            reg.add("java/lang/StrictMath", $name, "(DD)D", |_, _, a| {
                Ok($f(f64::from_bits(a[0]), f64::from_bits(a[2])).to_bits())
            });
        )*};
    }
    math2! { "atan2" => libm::atan2, "pow" => libm::pow, "hypot" => libm::hypot, "IEEEremainder" => libm::remainder }

    // Throwable and stack traces
    reg.add("java/lang/Throwable", "fillInStackTrace", "(I)Ljava/lang/Throwable;", |vm, t, a| {
        vm.fill_in_stack_trace(t, r(a[0]))?;
        Ok(a[0])
    });
    reg.add(
        "java/lang/StackTraceElement",
        "initStackTraceElements",
        "([Ljava/lang/StackTraceElement;Ljava/lang/Throwable;)V",
        |vm, _, a| {
            let throwable = r(a[1]);
            let backtrace = vm.fields(throwable)[vm.wk.throwable_backtrace as usize] as Ref;
            let depth =
                vm.wk.throwable_depth.map(|d| vm.fields(throwable)[d as usize] as i32 as usize).unwrap_or(usize::MAX);
            vm.init_stack_trace_elements(r(a[0]), backtrace, depth)?;
            Ok(0)
        },
    );

    // java.lang.Class
    reg.add("java/lang/Class", "getPrimitiveClass", "(Ljava/lang/String;)Ljava/lang/Class;", |vm, _, a| {
        let name = vm.rust_string(r(a[0]));
        let c = vm.lookup_class(&name).ok_or_else(|| VmError::Internal(format!("no primitive class {name}")))?;
        Ok(vm.mirror(c) as u64)
    });
    reg.add("java/lang/Class", "desiredAssertionStatus0", "(Ljava/lang/Class;)Z", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        let class = &vm.classes[c as usize];
        b(vm.opts.assertions.enabled(&class.name, class.loader == 0))
    });
    reg.add("java/lang/Class", "isPrimitive", "()Z", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        b(matches!(vm.classes[c as usize].kind, ClassKind::Primitive(_)))
    });
    reg.add("java/lang/Class", "isArray", "()Z", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        b(vm.classes[c as usize].is_array())
    });
    reg.add("java/lang/Class", "isInterface", "()Z", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        b(vm.classes[c as usize].is_interface())
    });
    reg.add("java/lang/Class", "isHidden", "()Z", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        b(vm.classes[c as usize].hidden)
    });
    reg.add("java/lang/Class", "isRecord0", "()Z", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        let cl = &vm.classes[c as usize];
        b(cl.super_class.is_some_and(|s| &*vm.classes[s as usize].name == "java/lang/Record")
            && cl.file.as_ref().is_some_and(|f| !f.record_components.is_empty() || f.access_flags & access::FINAL != 0))
    });
    reg.add("java/lang/Class", "isInstance", "(Ljava/lang/Object;)Z", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        b(a[1] != 0 && vm.is_subtype(vm.heap.get(r(a[1])).class, c))
    });
    reg.add("java/lang/Class", "isAssignableFrom", "(Ljava/lang/Class;)Z", |vm, t, a| {
        if a[1] == 0 {
            return Err(vm.throw_npe(t));
        }
        let (sup, sub) = (vm.class_of_mirror(r(a[0])), vm.class_of_mirror(r(a[1])));
        b(vm.is_subtype(sub, sup))
    });
    reg.add("java/lang/Class", "getSuperclass", "()Ljava/lang/Class;", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        let cl = &vm.classes[c as usize];
        if cl.is_interface() || matches!(cl.kind, ClassKind::Primitive(_)) {
            return Ok(0);
        }
        Ok(cl.super_class.map(|s| vm.mirror(s) as u64).unwrap_or(0))
    });
    reg.add("java/lang/Class", "getInterfaces0", "()[Ljava/lang/Class;", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        let ifaces = vm.classes[c as usize].interfaces.clone();
        let mirrors: Vec<Ref> = ifaces.iter().map(|&i| vm.mirror(i)).collect();
        let arr = vm.load_class("[Ljava/lang/Class;").map_err(|_| VmError::Internal("Class[]".into()))?;
        Ok(vm.heap.alloc(arr, ObjData::Refs(mirrors.into())) as u64)
    });
    reg.add("java/lang/Class", "getModifiers", "()I", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        let cl = &vm.classes[c as usize];
        // Inner classes carry their declared modifiers in the InnerClasses attribute.
        let inner = cl.file.as_ref().and_then(|f| {
            f.inner_classes.iter().find(|ic| ic.inner_class.as_deref() == Some(&*cl.name)).map(|ic| ic.access_flags)
        });
        let flags = inner.unwrap_or(cl.access) & !access::SUPER;
        Ok(flags as u64)
    });
    reg.add("java/lang/Class", "initClassName", "()Ljava/lang/String;", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        let name = vm.classes[c as usize].java_name();
        let s = vm.intern_str(&name);
        vm.set_named(r(a[0]), "name", s as u64);
        Ok(s as u64)
    });
    reg.add(
        "java/lang/Class",
        "forName0",
        "(Ljava/lang/String;ZLjava/lang/ClassLoader;Ljava/lang/Class;)Ljava/lang/Class;",
        |vm, t, a| {
            // Through the given loader, as HotSpot's JVM_FindClassFromCaller; a name in internal
            // form (with '/') is not a binary name.
            let name = vm.rust_string(r(a[0]));
            if name.contains('/') || name.is_empty() {
                return Err(vm.throw_new(t, "java/lang/ClassNotFoundException", Some(&name)));
            }
            let internal = name.replace('.', "/");
            let c = vm.ask_loader(t, r(a[2]), &internal)?;
            if a[1] != 0 {
                vm.initialize(t, c)?;
            }
            Ok(vm.mirror(c) as u64)
        },
    );
    reg.add("java/lang/Class", "getDeclaringClass0", "()Ljava/lang/Class;", |vm, t, a| {
        let c = vm.class_of_mirror(r(a[0]));
        let outer = vm.classes[c as usize].file.as_ref().and_then(|f| {
            f.inner_classes
                .iter()
                .find(|ic| ic.inner_class.as_deref() == Some(&*f.this_class))
                .and_then(|ic| ic.outer_class.clone())
        });
        match outer {
            Some(o) => {
                let oc = vm.load_seen_from(t, c, &o)?;
                Ok(vm.mirror(oc) as u64)
            }
            None => Ok(0),
        }
    });
    // HotSpot's JVM_GetDeclaredClasses: the InnerClasses entries whose outer class is this one,
    // in attribute order.
    reg.add("java/lang/Class", "getDeclaredClasses0", "()[Ljava/lang/Class;", |vm, t, a| {
        let c = vm.class_of_mirror(r(a[0]));
        let inner: Vec<_> = vm.classes[c as usize]
            .file
            .as_ref()
            .map(|f| {
                f.inner_classes
                    .iter()
                    .filter(|ic| ic.outer_class.as_deref() == Some(&*f.this_class))
                    .filter_map(|ic| ic.inner_class.clone())
                    .collect()
            })
            .unwrap_or_default();
        let mut mirrors = Vec::with_capacity(inner.len());
        for n in inner {
            let ic = vm.load_seen_from(t, c, &n)?;
            mirrors.push(vm.mirror(ic));
        }
        let arr = vm.load_or_throw(t, "[Ljava/lang/Class;")?;
        Ok(vm.heap.alloc(arr, ObjData::Refs(mirrors.into())) as u64)
    });
    reg.add("java/lang/Class", "getSimpleBinaryName0", "()Ljava/lang/String;", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        let simple = vm.classes[c as usize].file.as_ref().and_then(|f| {
            f.inner_classes
                .iter()
                .find(|ic| ic.inner_class.as_deref() == Some(&*f.this_class))
                .map(|ic| ic.inner_name.clone())
        });
        match simple {
            Some(Some(n)) => Ok(vm.intern_str(&n) as u64),
            _ => Ok(0),
        }
    });
    reg.add("java/lang/Class", "getEnclosingMethod0", "()[Ljava/lang/Object;", |vm, t, a| {
        // [enclosing class, method name, method descriptor] from the EnclosingMethod attribute.
        let c = vm.class_of_mirror(r(a[0]));
        let Some(enclosing) = vm.classes[c as usize].file.as_ref().and_then(|f| f.enclosing_method.clone()) else {
            return Ok(0);
        };
        let (outer, method) = (enclosing.class, enclosing.method);
        let oc = vm.load_seen_from(t, c, &outer)?;
        let items = [
            vm.mirror(oc),
            method.as_ref().map(|(n, _)| vm.intern_str(n)).unwrap_or(0),
            method.as_ref().map(|(_, d)| vm.intern_str(d)).unwrap_or(0),
        ];
        let arr = vm.load_or_throw(t, "[Ljava/lang/Object;")?;
        Ok(vm.heap.alloc(arr, ObjData::Refs(items.into())) as u64)
    });
    reg.add("java/lang/Class", "getPermittedSubclasses0", "()[Ljava/lang/Class;", |vm, t, a| {
        let c = vm.class_of_mirror(r(a[0]));
        let names = vm.classes[c as usize].file.as_ref().map(|f| f.permitted_subclasses.clone()).unwrap_or_default();
        if names.is_empty() {
            return Ok(0);
        }
        let mut mirrors = Vec::new();
        for n in names {
            let sc = vm.load_seen_from(t, c, &n)?;
            mirrors.push(vm.mirror(sc));
        }
        let arr = vm.load_or_throw(t, "[Ljava/lang/Class;")?;
        Ok(vm.heap.alloc(arr, ObjData::Refs(mirrors.into())) as u64)
    });
    reg.add("java/lang/Class", "getGenericSignature0", "()Ljava/lang/String;", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        match vm.classes[c as usize].file.as_ref().and_then(|f| f.signature.clone()) {
            Some(sig) => Ok(vm.intern_str(&sig) as u64),
            None => Ok(0),
        }
    });
    // The protection domain its loader gave when defining it (JDK 17 asks here; 21+ read the mirror).
    reg.add("java/lang/Class", "getProtectionDomain0", "()Ljava/security/ProtectionDomain;", |vm, _, a| {
        let c = vm.class_of_mirror(r(a[0]));
        Ok(vm.classes[c as usize].protection_domain as u64)
    });
    reg.add("java/lang/Class", "getNestHost0", "()Ljava/lang/Class;", |vm, t, a| {
        let c = vm.class_of_mirror(r(a[0]));
        let host = vm.nest_host(t, c)?;
        Ok(vm.mirror(host) as u64)
    });

    // java.lang.Thread (one thread for now)
    reg.add("java/lang/Thread", "currentThread", "()Ljava/lang/Thread;", |_, t, _| Ok(t.obj as u64));
    reg.add("java/lang/Thread", "setPriority0", "(I)V", |_, _, _| Ok(0));
    reg.add("java/lang/Thread", "clearInterruptEvent", "()V", |_, _, _| Ok(0));
    reg.add("java/lang/Thread", "setNativeName", "(Ljava/lang/String;)V", |_, _, _| Ok(0));
    // java.lang.Runtime and shutdown
    reg.add("java/lang/reflect/Array", "newArray", "(Ljava/lang/Class;I)Ljava/lang/Object;", |vm, t, a| {
        let (component, len) = (vm.class_of_mirror(r(a[0])), a[1] as i32);
        if len < 0 {
            return Err(vm.throw_new(t, "java/lang/NegativeArraySizeException", Some(&len.to_string())));
        }
        if matches!(vm.classes[component as usize].kind, ClassKind::Primitive('V')) {
            return Err(vm.throw_new(t, "java/lang/IllegalArgumentException", None));
        }
        let class = vm.array_class_or_throw(t, component)?;
        Ok(vm.new_array_checked(t, class, len as usize)? as u64)
    });
    reg.add("java/lang/Runtime", "availableProcessors", "()I", |_, _, _| {
        Ok(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as u64)
    });
    reg.add("java/lang/Runtime", "maxMemory", "()J", |vm, _, _| Ok(vm.opts.limits.max_heap_bytes));
    reg.add("java/lang/Runtime", "totalMemory", "()J", |vm, _, _| Ok(vm.opts.limits.max_heap_bytes));
    reg.add("java/lang/Runtime", "freeMemory", "()J", |vm, _, _| {
        Ok(vm.opts.limits.max_heap_bytes.saturating_sub(vm.heap.live_bytes))
    });
    reg.add("java/lang/Runtime", "gc", "()V", |vm, t, _| {
        vm.collect_garbage(t)?;
        Ok(0)
    });
    reg.add("java/lang/Shutdown", "beforeHalt", "()V", |_, _, _| Ok(0));
    reg.add("java/lang/Shutdown", "halt0", "(I)V", |_, _, a| Err(Fault::Exit(a[0] as i32)));

    // java.lang.System
    reg.add("java/lang/System", "currentTimeMillis", "()J", |_, _, _| {
        let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Ok(d.as_millis() as u64)
    });
    reg.add("java/lang/System", "nanoTime", "()J", |vm, _, _| Ok(vm.nano_time() as u64));
    reg.add("java/lang/System", "arraycopy", "(Ljava/lang/Object;ILjava/lang/Object;II)V", arraycopy);
    reg.add("java/lang/System", "setIn0", "(Ljava/io/InputStream;)V", |vm, _, a| {
        vm.set_static("java/lang/System", "in", a[0]);
        Ok(0)
    });
    reg.add("java/lang/System", "setOut0", "(Ljava/io/PrintStream;)V", |vm, _, a| {
        vm.set_static("java/lang/System", "out", a[0]);
        Ok(0)
    });
    reg.add("java/lang/System", "setErr0", "(Ljava/io/PrintStream;)V", |vm, _, a| {
        vm.set_static("java/lang/System", "err", a[0]);
        Ok(0)
    });
    reg.add("java/lang/System", "mapLibraryName", "(Ljava/lang/String;)Ljava/lang/String;", |vm, _, a| {
        let n = vm.rust_string(r(a[0]));
        Ok(vm.new_string(&format!("lib{n}.so")) as u64)
    });

    // java.lang.ref
    reg.add("java/lang/ref/Reference", "refersTo0", "(Ljava/lang/Object;)Z", |vm, _, a| {
        b(vm.get_named(r(a[0]), "referent") == a[1])
    });
    reg.add("java/lang/ref/Reference", "clear0", "()V", |vm, _, a| {
        vm.set_named(r(a[0]), "referent", 0);
        Ok(0)
    });
    reg.add("java/lang/ref/PhantomReference", "refersTo0", "(Ljava/lang/Object;)Z", |vm, _, a| {
        b(vm.get_named(r(a[0]), "referent") == a[1])
    });
    reg.add("java/lang/ref/Reference", "getAndClearReferencePendingList", "()Ljava/lang/ref/Reference;", |vm, _, _| {
        Ok(vm.take_pending_references() as u64)
    });
    reg.add("java/lang/ref/Reference", "hasReferencePendingList", "()Z", |vm, _, _| b(vm.has_pending_references()));
    reg.add("java/lang/ref/Finalizer", "isFinalizationEnabled", "()Z", |_, _, _| b(false));
}

fn object_clone<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: A) -> VmResult<u64> {
    let src = r(a[0]);
    let class = vm.heap.get(src).class;
    let cloneable = vm.lookup_class("java/lang/Cloneable").unwrap_or(u32::MAX);
    if !vm.classes[class as usize].is_array() && !vm.is_subtype(class, cloneable) {
        let name = vm.classes[class as usize].java_name();
        return Err(vm.throw_new(t, "java/lang/CloneNotSupportedException", Some(&name)));
    }
    let data = vm.heap.get(src).data.clone();
    let (len, unit) = match &data {
        ObjData::Fields(f) => (f.len(), Bulk::Fields),
        other => (other.array_len().unwrap_or(0), Bulk::Elements(other.elem_bytes())),
    };
    let copy = vm.heap.alloc(class, data);
    if vm.observing(t) {
        vm.tracker.on_bulk_copy(src, 0, copy, 0, len, unit);
    }
    Ok(copy as u64)
}

/// `System.arraycopy` with Java's checks and messages; overlapping copies behave like memmove.
fn arraycopy<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: A) -> VmResult<u64> {
    let (src, sp, dst, dp, len) = (r(a[0]), a[1] as i32, r(a[2]), a[3] as i32, a[4] as i32);
    if src == 0 || dst == 0 {
        return Err(vm.throw_npe(t));
    }
    let (sc, dc) = (vm.heap.get(src).class, vm.heap.get(dst).class);
    let (sk, dk) = (vm.classes[sc as usize].kind.clone(), vm.classes[dc as usize].kind.clone());
    let (se, de) = match (&sk, &dk) {
        (ClassKind::Array { elem: se, .. }, ClassKind::Array { elem: de, .. }) => (*se, *de),
        _ => {
            let which = if !matches!(sk, ClassKind::Array { .. }) { ("source", sc) } else { ("destination", dc) };
            let msg =
                format!("arraycopy: {} type {} is not an array", which.0, vm.classes[which.1 as usize].java_name());
            return Err(vm.throw_new(t, "java/lang/ArrayStoreException", Some(&msg)));
        }
    };
    let type_name = |e: Elem| match e {
        Elem::Ref => "object array[]".to_string(),
        other => format!(
            "{}[]",
            crate::vm::loader::PRIMITIVES.iter().find(|p| p.1 == other.descriptor()).map(|p| p.0).unwrap_or("?")
        ),
    };
    if se != de && !(se == Elem::Boolean && de == Elem::Byte || se == Elem::Byte && de == Elem::Boolean) {
        let msg = format!("arraycopy: type mismatch: can not copy {} into {}", type_name(se), type_name(de));
        return Err(vm.throw_new(t, "java/lang/ArrayStoreException", Some(&msg)));
    }
    let slen = vm.heap.get(src).data.array_len().unwrap_or(0) as i64;
    let dlen = vm.heap.get(dst).data.array_len().unwrap_or(0) as i64;
    let check = |pos: i32, alen: i64, what: &str| -> Option<String> {
        if pos < 0 {
            Some(format!("arraycopy: {what} index {pos} out of bounds for {}", type_name_len(se, alen)))
        } else if pos as i64 + len as i64 > alen {
            Some(format!(
                "arraycopy: last {what} index {} out of bounds for {}",
                pos as i64 + len as i64,
                type_name_len(se, alen)
            ))
        } else {
            None
        }
    };
    let problem = if len < 0 {
        Some(format!("arraycopy: length {len} is negative"))
    } else {
        check(sp, slen, "source").or_else(|| check(dp, dlen, "destination"))
    };
    if let Some(msg) = problem {
        return Err(vm.throw_new(t, "java/lang/ArrayIndexOutOfBoundsException", Some(&msg)));
    }
    let (sp, dp, len) = (sp as usize, dp as usize, len as usize);
    if len == 0 {
        return Ok(0);
    }
    if se == Elem::Ref {
        // Element-wise type checks when the destination's component is narrower.
        let dcomp = match dk {
            ClassKind::Array { component, .. } => component,
            _ => unreachable!(),
        };
        let items: Vec<Ref> = match &vm.heap.get(src).data {
            ObjData::Refs(v) => v[sp..sp + len].to_vec(),
            _ => Vec::new(),
        };
        let mut copied = len;
        let mut bad = None;
        if !vm.is_subtype(sc, dc) {
            for (i, &x) in items.iter().enumerate() {
                if x != 0 && !vm.is_subtype(vm.heap.get(x).class, dcomp) {
                    copied = i;
                    bad = Some(x);
                    break;
                }
            }
        }
        if let ObjData::Refs(v) = &mut vm.heap.get_mut(dst).data {
            v[dp..dp + copied].copy_from_slice(&items[..copied]);
        }
        if vm.observing(t) {
            vm.tracker.on_bulk_copy(src, sp, dst, dp, copied, Bulk::Elements(4));
        }
        if let Some(x) = bad {
            let msg = format!(
                "arraycopy: element type mismatch: can not cast one of the elements of {}[] to the type of the destination array, {}",
                vm.classes[sc as usize].java_name().trim_start_matches("[L").trim_end_matches(';'),
                vm.classes[dcomp as usize].java_name()
            );
            let _ = x;
            return Err(vm.throw_new(t, "java/lang/ArrayStoreException", Some(&msg)));
        }
        return Ok(0);
    }
    macro_rules! copy {
        ($v:ident) => {{
            if src == dst {
                if let ObjData::$v(a) = &mut vm.heap.get_mut(src).data {
                    a.copy_within(sp..sp + len, dp);
                }
            } else {
                let tmp = match &vm.heap.get(src).data {
                    ObjData::$v(a) => a[sp..sp + len].to_vec(),
                    _ => Vec::new(),
                };
                if let ObjData::$v(a) = &mut vm.heap.get_mut(dst).data {
                    a[dp..dp + len].copy_from_slice(&tmp);
                }
            }
        }};
    }
    match se {
        Elem::Boolean | Elem::Byte => copy!(Bytes),
        Elem::Char => copy!(Chars),
        Elem::Short => copy!(Shorts),
        Elem::Int => copy!(Ints),
        Elem::Long => copy!(Longs),
        Elem::Float => copy!(Floats),
        Elem::Double => copy!(Doubles),
        Elem::Ref => unreachable!(),
    }
    let width = vm.heap.get(dst).data.elem_bytes();
    if vm.observing(t) {
        vm.tracker.on_bulk_copy(src, sp, dst, dp, len, Bulk::Elements(width));
    }
    Ok(0)
}

fn type_name_len(e: Elem, len: i64) -> String {
    let base = match e {
        Elem::Ref => "object array".to_string(),
        other => crate::vm::loader::PRIMITIVES
            .iter()
            .find(|p| p.1 == other.descriptor())
            .map(|p| p.0)
            .unwrap_or("?")
            .to_string(),
    };
    format!("{base}[{len}]")
}

impl<T: Tracker> Vm<T> {
    /// The identity hash, assigned on first request from a xorshift sequence (as HotSpot's
    /// default `hashCode=5` mode does) and stored in the object header.
    pub fn identity_hash(&mut self, r: Ref) -> i32 {
        let h = self.heap.get(r).hash;
        if h != 0 {
            return h;
        }
        let mut x = self.hash_state;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.hash_state = x;
        let h = ((x >> 1) & 0x7FFF_FFFF) as i32;
        let h = if h == 0 { 1 } else { h };
        self.heap.get_mut(r).hash = h;
        h
    }

    /// `System.nanoTime`. Start-up runs on a clock of its own (a nanosecond per instruction), so that
    /// what the JDK seeds from it while booting — `ImmutableCollections`' iteration salt, which orders
    /// the module graph's sets and maps — is the same in every run, and so are the profiles.
    pub fn nano_time(&self) -> i64 {
        let boot_clock = self.instructions as i64;
        if !self.booted {
            return 1_000_000_000 + boot_clock;
        }
        1_000_000_000 + (self.started.elapsed().as_nanos() as i64).max(boot_clock)
    }
}

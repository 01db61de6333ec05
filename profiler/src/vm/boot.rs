//! Start-up, as HotSpot's `create_vm` does it: the core classes, the primitive classes, the
//! `main` thread and its thread groups, `UnsafeConstants`, then the JDK's own three phases:
//! `System.initPhase1` (properties, `System.out`), `initPhase2` (the module system: the boot layer
//! and the JDK's class loaders, told to the VM through `Module.defineModule0`) and `initPhase3`
//! (the system class loader, the main thread's context loader). Then `run_main` loads the user's
//! class through the system class loader and runs `main`, and the shutdown hooks after it.

use super::class::ClassId;
use super::heap::Ref;
use super::loader::LoadError;
use super::threads::Finished;
use super::{Fault, JThread, Outcome, Tracker, Vm, VmError, VmResult};

impl<T: Tracker> Vm<T> {
    fn boot_class(&mut self, name: &str) -> Result<ClassId, VmError> {
        match self.load_class(name) {
            Ok(c) => Ok(c),
            Err(LoadError::NotFound(n)) => Err(VmError::Boot(format!("the JDK lacks {n}"))),
            Err(LoadError::Fatal(e)) => Err(e),
        }
    }

    fn boot_fault(&self, step: &str, f: Fault) -> VmError {
        match f {
            Fault::Fatal(e) => e,
            Fault::Exception(e) => VmError::Boot(format!("{step} threw {}", self.describe_exception(e))),
            Fault::Exit(s) => VmError::Boot(format!("{step} exited with status {s}")),
            Fault::Yield => VmError::Internal(format!("{step} tried to switch threads during start-up")),
        }
    }

    fn boot_init(&mut self, t: &mut JThread, name: &str) -> Result<ClassId, VmError> {
        let c = self.boot_class(name)?;
        self.initialize(t, c).map_err(|f| self.boot_fault(&format!("initializing {name}"), f))?;
        Ok(c)
    }

    fn boot_call(
        &mut self,
        t: &mut JThread,
        class: &str,
        name: &str,
        desc: &str,
        args: &[u64],
    ) -> Result<u64, VmError> {
        let c = self.boot_class(class)?;
        let m = self
            .find_method(c, name, desc)
            .ok_or_else(|| VmError::Boot(format!("the JDK lacks {class}.{name}{desc}")))?;
        self.invoke(t, m, args).map_err(|f| self.boot_fault(&format!("{class}.{name}"), f))
    }

    pub(super) fn boot(&mut self, t: &mut JThread) -> Result<(), VmError> {
        self.boot_class("java/lang/Object")?;
        self.wk.class = self.boot_class("java/lang/Class")?;
        self.create_primitive_classes();
        self.wk.string = self.boot_class("java/lang/String")?;
        self.wk.byte_array = self.boot_class("[B")?;
        let slot = |vm: &Self, c: &str, f: &str| -> Result<u32, VmError> {
            let id = vm.lookup_class(c).ok_or_else(|| VmError::Boot(format!("{c} not loaded")))?;
            vm.field_slot(id, f).ok_or_else(|| VmError::Boot(format!("{c}.{f} missing")))
        };
        self.wk.string_value = slot(self, "java/lang/String", "value")?;
        self.wk.string_coder = slot(self, "java/lang/String", "coder")?;
        self.wk.class_component_type = self.field_slot(self.wk.class, "componentType");
        self.wk.class_module = self.field_slot(self.wk.class, "module");
        self.wk.class_loader = self.field_slot(self.wk.class, "classLoader");
        // JDK 21+ keep a class's protection domain in its mirror (JDK 17 asks a native).
        self.wk.class_protection_domain = self.field_slot(self.wk.class, "protectionDomain");
        let throwable = self.boot_class("java/lang/Throwable")?;
        self.wk.throwable_backtrace = slot(self, "java/lang/Throwable", "backtrace")?;
        self.wk.throwable_depth = self.field_slot(throwable, "depth");
        let thread_class = self.boot_class("java/lang/Thread")?;
        let group_class = self.boot_class("java/lang/ThreadGroup")?;

        for c in ["java/lang/Object", "java/lang/String", "java/lang/System", "java/lang/Class"] {
            self.boot_init(t, c)?;
        }
        self.boot_init(t, "java/lang/ThreadGroup")?;
        self.boot_init(t, "java/lang/Thread")?;

        // The main thread object must exist before any constructor asks for currentThread().
        let thread = self.alloc_instance(thread_class);
        t.obj = thread;
        self.add_thread(thread, false, None, super::threads::State::Runnable);
        self.set_thread_field(thread, "priority", 5);
        self.set_thread_field(thread, "threadStatus", super::threads::STATUS_RUNNABLE);
        let system_group = self.alloc_instance(group_class);
        self.extra_roots.push(system_group);
        self.boot_call(t, "java/lang/ThreadGroup", "<init>", "()V", &[system_group as u64])?;
        let main_group = self.alloc_instance(group_class);
        self.extra_roots.push(main_group);
        let main_name = self.new_string("main");
        self.pinned.push(main_name);
        self.boot_call(
            t,
            "java/lang/ThreadGroup",
            "<init>",
            "(Ljava/lang/ThreadGroup;Ljava/lang/String;)V",
            &[main_group as u64, system_group as u64, main_name as u64],
        )?;
        self.boot_call(
            t,
            "java/lang/Thread",
            "<init>",
            "(Ljava/lang/ThreadGroup;Ljava/lang/String;)V",
            &[thread as u64, main_group as u64, main_name as u64],
        )?;
        self.pinned.pop();

        self.boot_init(t, "jdk/internal/misc/UnsafeConstants")?;
        self.set_static("jdk/internal/misc/UnsafeConstants", "ADDRESS_SIZE0", 8);
        self.set_static("jdk/internal/misc/UnsafeConstants", "PAGE_SIZE", 4096);
        self.set_static("jdk/internal/misc/UnsafeConstants", "BIG_ENDIAN", 0);
        self.set_static("jdk/internal/misc/UnsafeConstants", "UNALIGNED_ACCESS", 1);
        for c in [
            "java/lang/Module",
            "java/lang/OutOfMemoryError",
            "java/lang/NullPointerException",
            "java/lang/ClassCastException",
            "java/lang/ArrayStoreException",
            "java/lang/ArithmeticException",
            "java/lang/StackOverflowError",
            "java/lang/IllegalMonitorStateException",
            "java/lang/IllegalArgumentException",
        ] {
            self.boot_init(t, c)?;
        }
        // As HotSpot: Method (and so AccessibleObject, which registers reflection's shared
        // secrets) and Finalizer are initialized before phase 1.
        self.boot_init(t, "java/lang/reflect/Method")?;
        self.boot_init(t, "java/lang/ref/Finalizer")?;
        self.boot_call(t, "java/lang/System", "initPhase1", "()V", &[])?;
        // HotSpot passes (DisplayVMOutputToStderr, log init): the JDK prints why the boot layer
        // could not be made and answers -1.
        let trace = std::env::var_os("BLOATLENS_DEBUG").is_some() as u64;
        if self.boot_call(t, "java/lang/System", "initPhase2", "(ZZ)I", &[trace, trace])? as i32 != 0 {
            return Err(VmError::Boot("the module system could not be initialized (System.initPhase2)".into()));
        }
        self.boot_call(t, "java/lang/System", "initPhase3", "()V", &[])?;
        self.system_loader =
            self.boot_call(t, "java/lang/ClassLoader", "getSystemClassLoader", "()Ljava/lang/ClassLoader;", &[])?
                as Ref;
        self.booted = true;
        Ok(())
    }

    /// Loads `main_class`, runs `main(args)` under the thread scheduler, waits for the other
    /// non-daemon threads, then runs the JDK's shutdown sequence, as the `java` launcher does. An
    /// uncaught exception is printed by the thread's uncaught-exception handler (HotSpot's format)
    /// and gives status 1.
    pub fn run_main(&mut self, t: &mut JThread, main_class: &str, args: &[String]) -> Outcome {
        // As the launcher: Class.forName(name, false, ClassLoader.getSystemClassLoader()).
        if let Err(outcome) = self.run_premains(t) {
            return self.finish(outcome);
        }
        let internal = main_class.replace('.', "/");
        let loader = self.system_loader;
        self.nesting += 1;
        let loaded = self.ask_loader(t, loader, &internal);
        self.nesting -= 1;
        let class = match loaded {
            Ok(c) => c,
            Err(Fault::Exception(e)) => {
                let class = main_class.to_string();
                let described = self.describe_exception(e);
                return Outcome::Stopped(if described.starts_with("java.lang.ClassNotFoundException") {
                    VmError::MainClassNotFound { class, hint: self.class_path_problems() }
                } else {
                    VmError::MainClassLinkage { class, error: described }
                });
            }
            // Loading the main class is the JDK's code (the system class loader), still start-up.
            Err(Fault::Fatal(e)) => return Outcome::Stopped(e.before_main()),
            Err(Fault::Exit(s)) => return Outcome::Exited(s),
            Err(Fault::Yield) => {
                return Outcome::Stopped(VmError::Internal("a yield while loading the main class".into()))
            }
        };
        let main = match self.find_declared_method(class, "main", "([Ljava/lang/String;)V") {
            Some(m) if self.methods[m as usize].is_static() => m,
            _ => return Outcome::Stopped(VmError::NoMainMethod(main_class.to_string())),
        };
        self.observe_from_main(class);
        if let Some(first) = self.opts.first_collection_in_main {
            self.heap.allocated_since_gc = self.opts.gc_interval_bytes.saturating_sub(first);
        }
        // The main thread moves into its slot for the scheduler, and back at the end.
        self.threads[0].thread = Some(std::mem::take(t));
        self.scheduling = true;
        let outcome = self.run_main_thread(class, main, args);
        self.scheduling = false;
        if let Some(main_thread) = self.threads[0].thread.take() {
            *t = main_thread;
        }
        self.finish(outcome)
    }

    fn run_main_thread(&mut self, class: ClassId, main: u32, args: &[String]) -> Outcome {
        let stopped = |vm: &Self, f: Fault| match f {
            Fault::Exit(s) => Outcome::Exited(s),
            Fault::Fatal(e) => {
                if std::env::var_os("BLOATLENS_DEBUG").is_some() {
                    eprintln!("{}", vm.last_fatal_stack);
                }
                Outcome::Stopped(e)
            }
            Fault::Exception(e) => Outcome::UncaughtException(vm.describe_exception(e)),
            Fault::Yield => Outcome::Stopped(VmError::Internal("a yield escaped the scheduler".into())),
        };
        let arr = {
            let mut main_thread = self.threads[0].thread.take().expect("main thread");
            self.nesting += 1;
            let prepared = self.initialize(&mut main_thread, class).and_then(|_| {
                let items: Vec<Option<String>> = args.iter().cloned().map(Some).collect();
                self.new_string_array(&items)
            });
            self.nesting -= 1;
            self.threads[0].thread = Some(main_thread);
            match prepared {
                Ok(arr) => arr,
                Err(Fault::Exception(e)) => {
                    let line = self.describe_exception(e);
                    let _ = self.report_uncaught(e);
                    return Outcome::UncaughtException(line);
                }
                Err(f) => return stopped(self, f),
            }
        };
        let mut outcome = match self.run_scheduled(0, main, &[arr as u64]) {
            Ok(Finished::Returned(_)) => Outcome::Exited(0),
            Ok(Finished::Threw(e)) => {
                let line = self.describe_exception(e);
                if let Err(f) = self.report_uncaught(e) {
                    return stopped(self, f);
                }
                Outcome::UncaughtException(line)
            }
            Err(f) => return stopped(self, f),
        };
        // As DestroyJavaVM: wait for the other non-daemon threads, then run the shutdown hooks.
        if let Err(f) = self.await_non_daemon_threads(0) {
            return stopped(self, f);
        }
        if let Some(shutdown) =
            self.lookup_class("java/lang/Shutdown").and_then(|c| self.find_method(c, "shutdown", "()V"))
        {
            match self.run_scheduled(0, shutdown, &[]) {
                Ok(_) => {}
                Err(Fault::Exit(s)) => outcome = Outcome::Exited(s),
                Err(f) => return stopped(self, f),
            }
        }
        outcome
    }

    /// Why the class path may not hold the main class: entries that do not exist or are not
    /// jars (the JDK's loader skips them silently, as HotSpot does).
    fn class_path_problems(&self) -> String {
        let mut problems = Vec::new();
        for entry in std::env::split_paths(&self.opts.class_path).filter(|p| !p.as_os_str().is_empty()) {
            if let Err(e) = crate::classpath::check_entry(&entry) {
                problems.push(e.to_string());
            }
        }
        if problems.is_empty() {
            String::new()
        } else {
            format!(" ({})", problems.join("; "))
        }
    }

    fn finish(&mut self, o: Outcome) -> Outcome {
        self.flush_output();
        o
    }

    /// `Thread.dispatchUncaughtException`, which prints `Exception in thread "main" …` and the trace.
    fn report_uncaught(&mut self, e: Ref) -> VmResult<()> {
        let thread = self.threads[0].obj;
        let dispatch = self
            .lookup_class("java/lang/Thread")
            .and_then(|c| self.find_method(c, "dispatchUncaughtException", "(Ljava/lang/Throwable;)V"));
        let printed = match dispatch {
            Some(m) => match self.run_scheduled(0, m, &[thread as u64, e as u64]) {
                Ok(Finished::Returned(_)) => true,
                Ok(Finished::Threw(_)) => false,
                Err(Fault::Fatal(err)) => return Err(Fault::Fatal(err)),
                Err(Fault::Exit(s)) => return Err(Fault::Exit(s)),
                Err(_) => false,
            },
            None => false,
        };
        if !printed {
            let line = format!("Exception in thread \"main\" {}\n", self.describe_exception(e));
            self.write_output(2, line.as_bytes());
        }
        Ok(())
    }
}

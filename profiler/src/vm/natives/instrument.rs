//! `java.lang.instrument` and attaching to this VM: the natives of the JDK's
//! `sun.instrument.InstrumentationImpl` (HotSpot's libinstrument, over `vm/instrument.rs`), the
//! current process's handle (`ProcessHandle.current()`), and the attach mechanism of `jdk.attach`
//! for this VM's own process: `VirtualMachine.attach(ownPid).loadAgent(jar)` loads the agent
//! in-process and runs its `agentmain`, as HotSpot's attach listener does — with the JDK's own
//! check of `jdk.attach.allowAttachSelf` first. Attaching to another process is refused like
//! every socket; other attach operations (`loadAgentPath`, properties, thread dumps) stay
//! unsupported natives (`VirtualMachineImpl.socket`).

use super::{Registry, VmResult};
use crate::vm::class::{ClassId, ClassKind};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::instrument::AgentFailure;
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};

const IMPL: &str = "sun/instrument/InstrumentationImpl";

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    // Instance natives: (this, long agent in two slots, …).
    reg.add(IMPL, "isModifiableClass0", "(JLjava/lang/Class;)Z", |vm, _, a| {
        let c = vm.class_of_mirror(a[3] as Ref);
        Ok(vm.is_modifiable(c) as u64)
    });
    reg.add(IMPL, "isRetransformClassesSupported0", "(J)Z", |vm, _, a| {
        Ok(vm.agent(a[1]).is_some_and(|ag| ag.can_retransform) as u64)
    });
    reg.add(IMPL, "setHasTransformers", "(JZ)V", |vm, _, a| {
        if let Some(ag) = vm.agent_mut(a[1]) {
            ag.has_transformers = a[3] != 0;
        }
        Ok(0)
    });
    reg.add(IMPL, "setHasRetransformableTransformers", "(JZ)V", |vm, _, a| {
        if let Some(ag) = vm.agent_mut(a[1]) {
            ag.has_retransformable = a[3] != 0;
        }
        Ok(0)
    });
    reg.add(IMPL, "retransformClasses0", "(J[Ljava/lang/Class;)V", |vm, t, a| {
        let classes = vm.classes_of_array(t, a[3] as Ref)?;
        vm.retransform(t, &classes).map(|_| 0)
    });
    reg.add(IMPL, "redefineClasses0", "(J[Ljava/lang/instrument/ClassDefinition;)V", |vm, t, a| {
        if !vm.agent(a[1]).is_some_and(|ag| ag.can_redefine) {
            let msg = "redefineClasses is not supported in this environment";
            return Err(vm.throw_new(t, "java/lang/UnsupportedOperationException", Some(msg)));
        }
        let defs = match &vm.heap.get(a[3] as Ref).data {
            ObjData::Refs(items) => items.to_vec(),
            _ => Vec::new(),
        };
        let mut classes = Vec::with_capacity(defs.len());
        for d in defs {
            if d == 0 {
                return Err(vm.throw_npe(t));
            }
            let (mirror, bytes) = (vm.get_named(d, "mClass") as Ref, vm.get_named(d, "mClassFile") as Ref);
            if mirror == 0 || bytes == 0 {
                return Err(vm.throw_npe(t));
            }
            let bytes: Vec<u8> = match &vm.heap.get(bytes).data {
                ObjData::Bytes(b) => b.iter().map(|&x| x as u8).collect(),
                _ => Vec::new(),
            };
            classes.push((vm.class_of_mirror(mirror), bytes));
        }
        vm.redefine_classes(t, classes).map(|_| 0)
    });
    reg.add(IMPL, "getAllLoadedClasses0", "(J)[Ljava/lang/Class;", |vm, t, _| {
        let ids: Vec<ClassId> = (0..vm.classes.len() as ClassId)
            .filter(|&c| {
                !matches!(vm.classes[c as usize].kind, ClassKind::Primitive(_)) && !vm.classes[c as usize].hidden
            })
            .collect();
        vm.class_array(t, &ids)
    });
    reg.add(IMPL, "getInitiatedClasses0", "(JLjava/lang/ClassLoader;)[Ljava/lang/Class;", |vm, t, a| {
        let mut ids: Vec<ClassId> = vm.initiated_by(a[3] as Ref);
        ids.sort_unstable();
        vm.class_array(t, &ids)
    });
    reg.add(IMPL, "getObjectSize0", "(JLjava/lang/Object;)J", |vm, t, a| {
        if a[3] == 0 {
            return Err(vm.throw_npe(t));
        }
        Ok(vm.object_size(a[3] as Ref))
    });
    reg.add(IMPL, "appendToClassLoaderSearch0", "(JLjava/lang/String;Z)V", |vm, t, a| {
        let path = vm.rust_string(a[3] as Ref);
        if a[4] != 0 {
            let host = vm.host_path(&path);
            if !vm.agents.append_boot_jar(&host) {
                let msg = format!("{path} is not a readable jar");
                return Err(vm.throw_new(t, "java/lang/IllegalArgumentException", Some(&msg)));
            }
            return Ok(0);
        }
        let loader = vm.system_loader();
        let s = a[3] as Ref;
        vm.pinning(&[s, loader], |vm| {
            vm.invoke_virtual(t, loader, "appendToClassPathForInstrumentation", "(Ljava/lang/String;)V", &[s as u64])
        })
        .map(|_| 0)
    });
    // Native method prefixes only rename natives an agent wraps; no agent here wraps one.
    reg.add(IMPL, "setNativeMethodPrefixes", "(J[Ljava/lang/String;Z)V", |_, _, _| Ok(0));
    // JDK 21+: the agent's jar, for the warning about agents loaded into a running VM.
    reg.add(IMPL, "jarFile", "(J)Ljava/lang/String;", |vm, _, a| {
        let jar = vm.agent(a[1]).map(|ag| ag.jar.display().to_string()).unwrap_or_default();
        Ok(vm.new_string(&jar) as u64)
    });

    // The current process (what Byte Buddy compares a process id with). Other processes are
    // answered from /proc, without reaching them.
    const PH: &str = "java/lang/ProcessHandleImpl";
    reg.add(PH, "initNative", "()V", |_, _, _| Ok(0));
    reg.add(PH, "getCurrentPid0", "()J", |_, _, _| Ok(std::process::id() as u64));
    reg.add(PH, "isAlive0", "(J)J", |_, _, a| {
        let pid = a[0] as i64;
        let alive =
            pid == std::process::id() as i64 || (pid > 0 && std::path::Path::new(&format!("/proc/{pid}")).exists());
        // 0: alive, start time not known; -1: no such process.
        Ok(if alive { 0 } else { u64::MAX })
    });
    reg.add(PH, "parent0", "(JJ)J", |_, _, a| {
        if a[0] as i64 == std::process::id() as i64 {
            // SAFETY: getppid has no preconditions and cannot fail.
            return Ok(unsafe { libc::getppid() } as i64 as u64);
        }
        Ok(u64::MAX)
    });

    // The attach mechanism, for this process only.
    const VMI: &str = "sun/tools/attach/VirtualMachineImpl";
    const HSVM: &str = "sun/tools/attach/HotSpotVirtualMachine";
    reg.add(
        "sun/tools/attach/HotSpotAttachProvider",
        "testAttachable",
        "(Ljava/lang/String;)V",
        // Every VM the provider is asked for is taken as attachable; the constructor decides.
        |_, _, _| Ok(0),
    );
    reg.add(VMI, "<init>", "(Lcom/sun/tools/attach/spi/AttachProvider;Ljava/lang/String;)V", |vm, t, a| {
        let (this, provider, id) = (a[0] as Ref, a[1] as Ref, a[2] as Ref);
        // HotSpotVirtualMachine's constructor: the id's checks and `jdk.attach.allowAttachSelf`.
        let class = vm.heap.get(this).class;
        let sup = vm.classes[class as usize].super_class.unwrap_or(class);
        let ctor = vm
            .find_declared_method(sup, "<init>", "(Lcom/sun/tools/attach/spi/AttachProvider;Ljava/lang/String;)V")
            .ok_or_else(|| VmError::Unsupported(format!("{HSVM}.<init> of this JDK")))?;
        vm.pinning(&[this, provider, id], |vm| vm.invoke(t, ctor, &[this as u64, provider as u64, id as u64]))?;
        let text = vm.rust_string(id);
        let own = std::process::id().to_string();
        if text != own && text != "0" {
            return Err(Fault::Fatal(VmError::Refused(format!(
                "the program attached to another Java process ({text}): the Bloatlens VM attaches only to itself"
            ))));
        }
        vm.set_named(this, "socket_path", id as u64);
        Ok(0)
    });
    reg.add(HSVM, "loadAgent", "(Ljava/lang/String;Ljava/lang/String;)V", |vm, t, a| {
        let (this, agent, options) = (a[0] as Ref, a[1] as Ref, a[2] as Ref);
        if agent == 0 {
            return Err(vm.throw_new(t, "java/lang/NullPointerException", Some("agent cannot be null")));
        }
        if vm.get_named(this, "socket_path") == 0 {
            return Err(vm.throw_new(t, "java/io/IOException", Some("Detached from target VM")));
        }
        let jar = vm.rust_string(agent);
        let options = (options != 0).then(|| vm.rust_string(options));
        let failure = match vm.pinning(&[this], |vm| vm.load_agent(t, &jar, options.as_deref(), true))? {
            Ok(()) => return Ok(0),
            Err(f) => f,
        };
        let (class, msg) = match failure {
            AgentFailure::BadJar => {
                ("com/sun/tools/attach/AgentLoadException", "Agent JAR not found or no Agent-Class attribute")
            }
            AgentFailure::NotOnClassPath => {
                ("com/sun/tools/attach/AgentLoadException", "Unable to add JAR file to system class path")
            }
            AgentFailure::StartFailed => {
                ("com/sun/tools/attach/AgentInitializationException", "Agent JAR loaded but agent failed to initialize")
            }
        };
        let from = vm.heap.get(this).class;
        Err(vm.throw_seen_from(t, from, class, msg))
    });
}

impl<T: Tracker> Vm<T> {
    fn agent(&self, id: u64) -> Option<&crate::vm::instrument::Agent> {
        self.agents.list.get((id as usize).wrapping_sub(1))
    }

    fn agent_mut(&mut self, id: u64) -> Option<&mut crate::vm::instrument::Agent> {
        self.agents.list.get_mut((id as usize).wrapping_sub(1))
    }

    /// The classes of a `Class[]` (a null element is a NullPointerException).
    fn classes_of_array(&mut self, t: &mut JThread, array: Ref) -> VmResult<Vec<ClassId>> {
        let mirrors = match &self.heap.get(array).data {
            ObjData::Refs(items) => items.to_vec(),
            _ => Vec::new(),
        };
        let mut out = Vec::with_capacity(mirrors.len());
        for m in mirrors {
            if m == 0 {
                return Err(self.throw_npe(t));
            }
            out.push(self.class_of_mirror(m));
        }
        Ok(out)
    }

    fn class_array(&mut self, t: &mut JThread, ids: &[ClassId]) -> VmResult<u64> {
        let mirrors: Vec<Ref> = ids.iter().map(|&c| self.mirror(c)).collect();
        let array = self.load_or_throw(t, "[Ljava/lang/Class;")?;
        Ok(self.heap.alloc(array, ObjData::Refs(mirrors.into())) as u64)
    }

    /// An exception of a class `from`'s loader sees, made with its `(String)` constructor.
    fn throw_seen_from(&mut self, t: &mut JThread, from: ClassId, class: &str, msg: &str) -> Fault {
        let made = (|| {
            let c = self.load_seen_from(t, from, class)?;
            self.initialize(t, c)?;
            let ctor = self
                .find_declared_method(c, "<init>", "(Ljava/lang/String;)V")
                .ok_or_else(|| VmError::Internal(format!("{class} without a (String) constructor")))?;
            let obj = self.alloc_instance(c);
            let s = self.pinning(&[obj], |vm| vm.new_string(msg));
            self.pinning(&[obj, s], |vm| vm.invoke(t, ctor, &[obj as u64, s as u64]))?;
            Ok(obj)
        })();
        match made {
            Ok(e) => Fault::Exception(e),
            Err(f) => f,
        }
    }

    /// `retransformClasses`: every class modifiable (else UnmodifiableClassException), then each
    /// class's bytes — as defined, or as last redefined — through the retransformation-capable
    /// transformers, and the classes whose bytes changed redefined with the result.
    fn retransform(&mut self, t: &mut JThread, classes: &[ClassId]) -> VmResult<()> {
        if let Some(&c) = classes.iter().find(|&&c| !self.is_modifiable(c)) {
            let _ = c;
            return Err(self.throw_new(t, "java/lang/instrument/UnmodifiableClassException", None));
        }
        let mut defs = Vec::new();
        for &c in classes {
            let Some(source) = self.retransform_source(c) else {
                let name = self.classes[c as usize].java_name();
                return Err(Fault::Fatal(VmError::Unsupported(format!(
                    "retransforming {name}, whose class file the VM did not keep"
                ))));
            };
            let (loader, pd, name) = {
                let class = &self.classes[c as usize];
                (class.loader, class.protection_domain, class.name.to_string())
            };
            let (_, bytes) = self.transform_class_file(t, loader, &name, Some(c), pd, source.clone(), true)?;
            let class = &self.classes[c as usize];
            let current = class.current_bytes.as_deref().or(class.class_bytes.as_deref());
            let unchanged = match current {
                Some(cur) => cur == &bytes[..],
                None => bytes == source,
            };
            if unchanged {
                // Nothing to swap, but the cached class file is taken as for a redefinition.
                self.keep_class_bytes(c, source, bytes);
            } else {
                defs.push((c, source, bytes));
            }
        }
        self.redefine(t, defs, false)
    }

    /// `redefineClasses`: every class modifiable, then each new class file through the
    /// transformers (all of them, as for a definition), and the classes redefined.
    fn redefine_classes(&mut self, t: &mut JThread, classes: Vec<(ClassId, Vec<u8>)>) -> VmResult<()> {
        if classes.iter().any(|&(c, _)| !self.is_modifiable(c)) {
            return Err(self.throw_new(t, "java/lang/instrument/UnmodifiableClassException", None));
        }
        let mut defs = Vec::with_capacity(classes.len());
        for (c, bytes) in classes {
            let (loader, pd, name) = {
                let class = &self.classes[c as usize];
                (class.loader, class.protection_domain, class.name.to_string())
            };
            let (source, bytes) = if self.agents.transforming() {
                self.transform_class_file(t, loader, &name, Some(c), pd, bytes, false)?
            } else {
                (bytes.clone(), bytes)
            };
            defs.push((c, source, bytes));
        }
        // JDK 17's HotSpot keeps a class's cached class file through a redefinition (a later
        // retransformation starts from the bytes first loaded); JDK 25's replaces it with the
        // redefinition's.
        let replace_cache = self.max_major_version >= 69;
        self.redefine(t, defs, replace_cache)
    }
}

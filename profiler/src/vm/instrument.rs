//! `java.lang.instrument` beneath the JDK's own `sun.instrument.InstrumentationImpl`: what HotSpot's
//! JPLIS agent (libinstrument) and JVMTI do for it. Agents come from `-javaagent:JAR[=options]`
//! (`premain`, before the main class loads) or from attaching to this VM (`agentmain`, see
//! `natives/instrument.rs`); each gets an `InstrumentationImpl` whose native agent number is its
//! index here + 1. Once an agent registers a transformer, every class defined from bytes — by a
//! Java class loader, or by the boot loader while resolving for Java code — passes through
//! `InstrumentationImpl.transform` (retransformation-incapable transformers first, then capable
//! ones, as JVMTI orders its environments). Hidden classes are not transformed, as on HotSpot.
//!
//! Redefinition (and retransformation, a redefinition from the class's own bytes through the
//! capable transformers) replaces the method bodies and the constant pool of a loaded class. As on
//! HotSpot, the new class file may not add or remove methods or fields, or change the hierarchy or
//! modifiers (`UnsupportedOperationException: class redefinition failed: attempted to …`). Method
//! ids stay, so every quickened call site, vtable and `Method` object reaches the new code; frames
//! running the old code keep it (obsolete methods with the old constant pool).

use super::class::{ClassId, ClassKind, Method, MethodId, Verification};
use super::decode::Obsolete;
use super::heap::{ObjData, Ref};
use super::{Fault, JThread, Tracker, Vm, VmError, VmResult};
use crate::classfile::{self, ClassFile};
use crate::classpath::Origin;
use std::cell::{Cell, OnceCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

/// One loaded agent (a JPLIS agent of HotSpot's).
#[derive(Debug)]
pub struct Agent {
    pub jar: PathBuf,
    /// The agent's `sun.instrument.InstrumentationImpl` (kept alive through `extra_roots`).
    pub instrumentation: Ref,
    pub can_redefine: bool,
    pub can_retransform: bool,
    pub has_transformers: bool,
    pub has_retransformable: bool,
}

/// The agents of a run and the jars appended to the boot loader's search.
#[derive(Default)]
pub struct Agents {
    pub list: Vec<Agent>,
    /// `appendToBootstrapClassLoaderSearch` and agents' `Boot-Class-Path`, in order.
    boot_append: Vec<BootJar>,
}

struct BootJar {
    path: Arc<Path>,
    archive: std::cell::RefCell<zip::ZipArchive<std::fs::File>>,
}

impl Agents {
    /// Whether any agent has a transformer for class definitions.
    pub fn transforming(&self) -> bool {
        self.list.iter().any(|a| a.has_transformers || a.has_retransformable)
    }

    /// Whether a retransformation-capable transformer is registered: JVMTI then keeps a class's
    /// bytes as defined for later retransformations (its cached class file).
    pub fn caching(&self) -> bool {
        self.list.iter().any(|a| a.has_retransformable)
    }

    /// A class's bytes from the jars appended to the boot loader's search.
    pub fn find_boot_appended(&self, internal_name: &str) -> Option<(Vec<u8>, Arc<Path>)> {
        let entry = format!("{internal_name}.class");
        for jar in &self.boot_append {
            let mut archive = jar.archive.borrow_mut();
            let Ok(mut file) = archive.by_name(&entry) else { continue };
            let mut bytes = Vec::with_capacity(file.size() as usize);
            if std::io::Read::read_to_end(&mut file, &mut bytes).is_ok() {
                return Some((bytes, jar.path.clone()));
            }
        }
        None
    }

    /// Appends a jar to the boot loader's search; false when it cannot be opened as a jar.
    pub fn append_boot_jar(&mut self, path: &Path) -> bool {
        if self.boot_append.iter().any(|j| &*j.path == path) {
            return true;
        }
        let Ok(file) = std::fs::File::open(path) else { return false };
        let Ok(archive) = zip::ZipArchive::new(file) else { return false };
        self.boot_append.push(BootJar { path: Arc::from(path), archive: std::cell::RefCell::new(archive) });
        true
    }
}

/// The main section of a jar's manifest (attribute names as written).
pub fn read_manifest(jar: &Path) -> Option<HashMap<String, String>> {
    let file = std::fs::File::open(jar).ok()?;
    let mut archive = zip::ZipArchive::new(file).ok()?;
    let mut entry = archive.by_name("META-INF/MANIFEST.MF").ok()?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut entry, &mut text).ok()?;
    let mut attrs = HashMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)) {
        if line.is_empty() {
            break;
        }
        if let Some(more) = line.strip_prefix(' ') {
            if let Some((_, v)) = current.as_mut() {
                v.push_str(more);
            }
            continue;
        }
        if let Some((k, v)) = current.take() {
            attrs.insert(k, v);
        }
        if let Some((k, v)) = line.split_once(':') {
            current = Some((k.trim().to_string(), v.trim_start().to_string()));
        }
    }
    if let Some((k, v)) = current {
        attrs.insert(k, v);
    }
    Some(attrs)
}

/// How loading an agent failed, as the attach mechanism reports it (JPLIS's return codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentFailure {
    /// The jar cannot be read, or its manifest lacks the agent class.
    BadJar = 100,
    /// The jar could not be appended to the system class loader's search.
    NotOnClassPath = 101,
    /// The agent's `premain`/`agentmain` threw.
    StartFailed = 102,
}

/// A redefinition HotSpot refuses: the exception class and its message.
pub struct Refusal {
    pub exception: &'static str,
    pub message: String,
}

fn unsupported(what: &str) -> Refusal {
    Refusal {
        exception: "java/lang/UnsupportedOperationException",
        message: format!("class redefinition failed: attempted to {what}"),
    }
}

/// The class modifiers HotSpot compares (JVM_RECOGNIZED_CLASS_MODIFIERS).
const CLASS_MODIFIERS: u16 = 0x0001 | 0x0010 | 0x0020 | 0x0200 | 0x0400 | 0x1000 | 0x2000 | 0x4000;
/// JVM_RECOGNIZED_METHOD_MODIFIERS.
const METHOD_MODIFIERS: u16 =
    0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040 | 0x0080 | 0x0100 | 0x0400 | 0x0800 | 0x1000;
/// JVM_RECOGNIZED_FIELD_MODIFIERS.
const FIELD_MODIFIERS: u16 = 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0040 | 0x0080 | 0x1000 | 0x4000;

/// HotSpot's checks of a redefinition (jvmtiRedefineClasses.cpp, `compare_and_normalize_class_versions`),
/// in its order.
pub fn check_redefinition(old: &ClassFile, new: &ClassFile) -> Result<(), Refusal> {
    if old.super_class != new.super_class || old.interfaces != new.interfaces {
        return Err(unsupported("change superclass or interfaces"));
    }
    if (old.access_flags ^ new.access_flags) & CLASS_MODIFIERS != 0 {
        return Err(unsupported("change the class modifiers"));
    }
    let same_fields = old.fields.len() == new.fields.len()
        && old.fields.iter().zip(&new.fields).all(|(a, b)| {
            a.name == b.name && a.descriptor == b.descriptor && (a.access_flags ^ b.access_flags) & FIELD_MODIFIERS == 0
        });
    if !same_fields {
        return Err(unsupported("change the schema (add/remove fields)"));
    }
    if old.nest_host != new.nest_host
        || old.nest_members != new.nest_members
        || old.permitted_subclasses != new.permitted_subclasses
        || old.record_components.len() != new.record_components.len()
    {
        return Err(unsupported("change the class NestHost, NestMembers, Record, or PermittedSubclasses attribute"));
    }
    let key = |m: &classfile::MethodInfo| (m.name.clone(), m.descriptor.clone());
    let old_methods: HashMap<_, _> = old.methods.iter().map(|m| (key(m), m.access_flags)).collect();
    let new_methods: HashMap<_, _> = new.methods.iter().map(|m| (key(m), m.access_flags)).collect();
    // HotSpot walks both lists sorted by name: the first difference decides the message.
    let mut names: Vec<_> = old_methods.keys().chain(new_methods.keys()).cloned().collect();
    names.sort();
    names.dedup();
    for k in names {
        match (old_methods.get(&k), new_methods.get(&k)) {
            (Some(_), None) => return Err(unsupported("delete a method")),
            (None, Some(_)) => return Err(unsupported("add a method")),
            (Some(a), Some(b)) if (a ^ b) & METHOD_MODIFIERS != 0 => {
                return Err(unsupported("change method modifiers"))
            }
            _ => {}
        }
    }
    Ok(())
}

impl<T: Tracker> Vm<T> {
    /// Loads an agent jar: its manifest's `Premain-Class` (`dynamic`: `Agent-Class`, the jar
    /// appended to the system class loader's search first), `Boot-Class-Path` and capabilities,
    /// an `InstrumentationImpl` for it, then `premain`/`agentmain(options, instrumentation)`. A
    /// `premain` runs on the main thread under the scheduler (threads it starts run); an
    /// `agentmain` runs nested in the attaching call. `Ok(Err(_))`: the agent failed to load, with
    /// what the attach mechanism says of it (an exception it threw was printed).
    pub(super) fn load_agent(
        &mut self,
        t: &mut JThread,
        jar: &str,
        options: Option<&str>,
        dynamic: bool,
    ) -> VmResult<Result<(), AgentFailure>> {
        let path = self.host_path(jar);
        // JPLIS's messages, on the VM's stderr.
        let Some(manifest) = read_manifest(&path) else {
            let sep = if dynamic { ":" } else { " :" };
            self.write_output(2, format!("Error opening zip file or JAR manifest missing{sep} {jar}\n").as_bytes());
            return Ok(Err(AgentFailure::BadJar));
        };
        let attr = |name: &str| manifest.get(name).map(|s| s.trim().to_string());
        let Some(agent_class) = attr(if dynamic { "Agent-Class" } else { "Premain-Class" }) else {
            let msg = if dynamic {
                format!("Failed to find Agent-Class manifest attribute from {jar}\n")
            } else {
                format!("Failed to find Premain-Class manifest attribute in {jar}\n")
            };
            self.write_output(2, msg.as_bytes());
            return Ok(Err(AgentFailure::BadJar));
        };
        let yes = |name: &str| attr(name).is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let (can_redefine, can_retransform, can_prefix) =
            (yes("Can-Redefine-Classes"), yes("Can-Retransform-Classes"), yes("Can-Set-Native-Method-Prefix"));
        if let Some(boot) = attr("Boot-Class-Path") {
            let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
            for entry in boot.split_whitespace() {
                let p = Path::new(entry);
                let p = if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
                self.agents.append_boot_jar(&p);
            }
        }
        {
            // The jar joins the system class loader's search (`java.class.path` does not show it).
            let s = self.new_string(&path.to_string_lossy());
            let loader = self.system_loader;
            let appended = self.pinning(&[s, loader], |vm| {
                vm.unobserved(|vm| {
                    vm.invoke_virtual(
                        t,
                        loader,
                        "appendToClassPathForInstrumentation",
                        "(Ljava/lang/String;)V",
                        &[s as u64],
                    )
                })
            });
            match appended {
                Ok(_) => {}
                Err(Fault::Exception(_)) => return Ok(Err(AgentFailure::NotOnClassPath)),
                Err(f) => return Err(f),
            }
        }
        let impl_class = self.load_or_throw(t, "sun/instrument/InstrumentationImpl")?;
        self.initialize(t, impl_class)?;
        let id = self.agents.list.len() as u64 + 1;
        let obj = self.alloc_instance(impl_class);
        self.extra_roots.push(obj);
        self.agents.list.push(Agent {
            jar: path.clone(),
            instrumentation: obj,
            can_redefine,
            can_retransform,
            has_transformers: false,
            has_retransformable: false,
        });
        // JDK 21+ takes whether to warn of a dynamically loaded agent (HotSpot warns unless
        // -XX:+EnableDynamicAgentLoading, which this VM does not take).
        let (ctor, args) = match self.find_declared_method(impl_class, "<init>", "(JZZZ)V") {
            Some(m) => (m, vec![obj as u64, id, 0, can_redefine as u64, can_prefix as u64, dynamic as u64]),
            None => {
                let m = self.find_declared_method(impl_class, "<init>", "(JZZ)V").ok_or_else(|| {
                    VmError::Unsupported("this JDK's sun.instrument.InstrumentationImpl constructor".into())
                })?;
                (m, vec![obj as u64, id, 0, can_redefine as u64, can_prefix as u64])
            }
        };
        self.invoke(t, ctor, &args)?;
        let (name, desc) = if dynamic {
            ("loadClassAndCallAgentmain", "(Ljava/lang/String;Ljava/lang/String;)V")
        } else {
            ("loadClassAndCallPremain", "(Ljava/lang/String;Ljava/lang/String;)V")
        };
        let start = self
            .find_declared_method(impl_class, name, desc)
            .ok_or_else(|| VmError::Unsupported(format!("sun.instrument.InstrumentationImpl.{name}{desc}")))?;
        let class_name = self.new_string(&agent_class);
        let options = self.pinning(&[class_name], |vm| options.map(|o| vm.new_string(o)).unwrap_or(0));
        let args = [obj as u64, class_name as u64, options as u64];
        let ran = if dynamic {
            self.pinning(&[class_name, options], |vm| vm.invoke(t, start, &args)).map(|_| None)
        } else {
            // On the main thread, moved into its slot for the scheduler (threads it starts run).
            self.threads[0].thread = Some(std::mem::take(t));
            let was = std::mem::replace(&mut self.scheduling, true);
            let ran = self.pinning(&[class_name, options], |vm| vm.run_scheduled(0, start, &args));
            self.scheduling = was;
            if let Some(main_thread) = self.threads[0].thread.take() {
                *t = main_thread;
            }
            ran.map(|f| match f {
                super::threads::Finished::Threw(e) => Some(e),
                super::threads::Finished::Returned(_) => None,
            })
        };
        let thrown = match ran {
            Ok(None) => return Ok(Ok(())),
            Ok(Some(e)) | Err(Fault::Exception(e)) => e,
            Err(f) => return Err(f),
        };
        // As JPLIS: the exception is printed, and the agent counts as failed to start.
        self.print_stack_trace(t, thrown)?;
        Ok(Err(AgentFailure::StartFailed))
    }

    /// `-javaagent`s: each agent's `premain`, in order, on the main thread before the main class
    /// loads (as HotSpot's VMInit event runs them). Ends the run when one fails, as the JVM aborts.
    pub(super) fn run_premains(&mut self, t: &mut JThread) -> Result<(), super::Outcome> {
        let agents = self.opts.java_agents.clone();
        if agents.is_empty() {
            return Ok(());
        }
        let mut result = Ok(());
        for spec in &agents {
            let (jar, options) = match spec.split_once('=') {
                Some((j, o)) => (j, Some(o)),
                None => (spec.as_str(), None),
            };
            let loaded = self.load_agent(t, jar, options, false);
            let failure = match loaded {
                Ok(Ok(())) => continue,
                Ok(Err(AgentFailure::BadJar | AgentFailure::NotOnClassPath)) => {
                    // As the JVM's start fails.
                    self.write_output(
                        2,
                        b"Error occurred during initialization of VM\nagent library failed to init: instrument\n",
                    );
                    result = Err(super::Outcome::Exited(1));
                    break;
                }
                Ok(Err(_)) => format!("processing of -javaagent failed: the premain of {jar} threw"),
                Err(Fault::Exit(s)) => {
                    result = Err(super::Outcome::Exited(s));
                    break;
                }
                Err(Fault::Fatal(e)) => {
                    result = Err(super::Outcome::Stopped(e));
                    break;
                }
                Err(_) => format!("processing of -javaagent failed: {jar}"),
            };
            result = Err(super::Outcome::Stopped(VmError::Boot(failure)));
            break;
        }
        result
    }

    /// Prints an exception's stack trace (`Throwable.printStackTrace()`), as JPLIS does for an
    /// agent that threw.
    fn print_stack_trace(&mut self, t: &mut JThread, e: Ref) -> VmResult<()> {
        match self.pinning(&[e], |vm| vm.invoke_virtual(t, e, "printStackTrace", "()V", &[])) {
            Ok(_) | Err(Fault::Exception(_)) => Ok(()),
            Err(f) => Err(f),
        }
    }

    /// Runs the agents' transformers on a class file being defined or redefined: the
    /// retransformation-incapable ones (unless `capable_only`, a retransformation), then the capable
    /// ones. Returns the bytes after the incapable transformers (what a later retransformation
    /// starts from) and the final bytes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn transform_class_file(
        &mut self,
        t: &mut JThread,
        loader: Ref,
        name: &str,
        redefined: Option<ClassId>,
        protection_domain: Ref,
        bytes: Vec<u8>,
        capable_only: bool,
    ) -> VmResult<(Vec<u8>, Vec<u8>)> {
        let mut current = bytes;
        let mut after_incapable = None;
        for capable in [false, true] {
            if capable {
                after_incapable = Some(current.clone());
            }
            if !capable && capable_only {
                continue;
            }
            for i in 0..self.agents.list.len() {
                let agent = &self.agents.list[i];
                let has = if capable { agent.has_retransformable } else { agent.has_transformers };
                if !has {
                    continue;
                }
                let obj = agent.instrumentation;
                if let Some(out) =
                    self.call_transform(t, obj, loader, name, redefined, protection_domain, &current, capable)?
                {
                    current = out;
                }
            }
        }
        Ok((after_incapable.unwrap_or_else(|| current.clone()), current))
    }

    /// One `InstrumentationImpl.transform` call: the new bytes, or None for "unchanged". An
    /// exception from it leaves the bytes unchanged (TransformerManager already catches what a
    /// transformer throws).
    #[allow(clippy::too_many_arguments)]
    fn call_transform(
        &mut self,
        t: &mut JThread,
        instrumentation: Ref,
        loader: Ref,
        name: &str,
        redefined: Option<ClassId>,
        protection_domain: Ref,
        bytes: &[u8],
        capable: bool,
    ) -> VmResult<Option<Vec<u8>>> {
        // JPLIS passes the named module of the class's package in its loader (null: Java finds
        // the unnamed one).
        let package = super::class::package_of(name);
        let module = match redefined {
            Some(c) => self.module_of(c),
            None => self.package_modules.get(&(loader, Arc::from(package))).copied().unwrap_or(0),
        };
        let mirror = redefined.map(|c| self.mirror(c)).unwrap_or(0);
        let array = self.new_byte_array(bytes);
        let jname = self.pinning(&[array], |vm| vm.new_string(name));
        let roots = [array, jname, instrumentation, loader, module, mirror, protection_domain];
        let args = [
            module as u64,
            loader as u64,
            jname as u64,
            mirror as u64,
            protection_domain as u64,
            array as u64,
            capable as u64,
        ];
        // A private method of InstrumentationImpl's.
        let class = self.heap.get(instrumentation).class;
        let transform = self
            .find_declared_method(
                class,
                "transform",
                "(Ljava/lang/Module;Ljava/lang/ClassLoader;Ljava/lang/String;Ljava/lang/Class;Ljava/security/ProtectionDomain;[BZ)[B",
            )
            .ok_or_else(|| VmError::Unsupported("this JDK's InstrumentationImpl.transform".into()))?;
        let mut full = vec![instrumentation as u64];
        full.extend_from_slice(&args);
        let result = self.pinning(&roots, |vm| vm.unobserved(|vm| vm.invoke(t, transform, &full)));
        match result {
            Ok(0) | Err(Fault::Exception(_)) => Ok(None),
            Ok(r) => Ok(match &self.heap.get(r as Ref).data {
                ObjData::Bytes(b) => Some(b.iter().map(|&x| x as u8).collect()),
                _ => None,
            }),
            Err(f) => Err(f),
        }
    }

    /// Whether `java.lang.instrument` may redefine or retransform a class (`isModifiableClass`):
    /// not primitives, arrays or hidden classes.
    pub(super) fn is_modifiable(&self, c: ClassId) -> bool {
        let class = &self.classes[c as usize];
        matches!(class.kind, ClassKind::Instance) && !class.hidden && class.file.is_some()
    }

    /// The bytes a retransformation of `c` starts from: as it was defined (after the
    /// retransformation-incapable transformers), or as last redefined.
    pub(super) fn retransform_source(&self, c: ClassId) -> Option<Vec<u8>> {
        let class = &self.classes[c as usize];
        // JVMTI's cached class file, else the class as it is now (HotSpot reconstitutes it).
        let kept = if class.cached {
            class.class_bytes.as_ref()
        } else {
            class.current_bytes.as_ref().or(class.class_bytes.as_ref())
        };
        if let Some(b) = kept {
            return Some(b.to_vec());
        }
        if class.loader == 0 {
            if let Ok(Some((bytes, _))) = self.image.find(&class.name) {
                return Some(bytes);
            }
        }
        None
    }

    /// Redefines classes with new class files, all or none: each is checked first (a class file
    /// that does not parse, names another class or changes the class's shape is refused with
    /// HotSpot's exception), then every class gets its new methods' code and constant pool.
    /// `source`: per class, the bytes later retransformations start from when no cached class
    /// file is kept (`replace_cache`: replace the one kept).
    pub(super) fn redefine(
        &mut self,
        t: &mut JThread,
        defs: Vec<(ClassId, Vec<u8>, Vec<u8>)>,
        replace_cache: bool,
    ) -> VmResult<()> {
        let mut parsed = Vec::with_capacity(defs.len());
        for (c, source, bytes) in defs {
            let name = self.classes[c as usize].name.clone();
            let file = match classfile::parse(&bytes) {
                Ok(f) => f,
                Err(e) => {
                    let msg = e.hotspot_message(&name).unwrap_or_else(|| e.to_string());
                    return Err(self.throw_new(t, "java/lang/ClassFormatError", Some(&msg)));
                }
            };
            if file.major_version > self.max_major_version {
                let msg = format!(
                    "{} has been compiled by a more recent version of the Java Runtime (class file version {}.0), \
                     this version of the Java Runtime only recognizes class file versions up to {}.0",
                    name.replace('/', "."),
                    file.major_version,
                    self.max_major_version
                );
                return Err(self.throw_new(t, "java/lang/UnsupportedClassVersionError", Some(&msg)));
            }
            if file.this_class != name {
                return Err(self.throw_new(t, "java/lang/NoClassDefFoundError", Some("class names don't match")));
            }
            let old = self.classes[c as usize].file.clone().expect("a modifiable class has a class file");
            if let Err(r) = check_redefinition(&old, &file) {
                return Err(self.throw_new(t, r.exception, Some(&r.message)));
            }
            parsed.push((c, source, bytes, file));
        }
        for (c, source, bytes, file) in parsed {
            self.apply_redefinition(t, c, file);
            if replace_cache {
                self.classes[c as usize].cached = false;
            }
            self.keep_class_bytes(c, source, bytes);
            // Reflection's caches of the class's members are dropped (HotSpot counts redefinitions
            // in the mirror: `Class.classRedefinedCount`).
            let mirror = self.mirror(c);
            let count = self.get_named(mirror, "classRedefinedCount") as i32;
            self.set_named(mirror, "classRedefinedCount", count.wrapping_add(1) as u32 as u64);
        }
        Ok(())
    }

    /// Records a class's bytes after a definition, redefinition or retransformation: `source`
    /// (before the retransformation-capable transformers) becomes the cached class file unless one
    /// is kept already; `bytes` is what the class runs.
    pub(super) fn keep_class_bytes(&mut self, c: ClassId, source: Vec<u8>, bytes: Vec<u8>) {
        let caching = self.agents.caching();
        let class = &mut self.classes[c as usize];
        if !class.cached {
            class.class_bytes = Some(Rc::from(source));
            class.cached = caching;
        }
        let same = class.class_bytes.as_deref() == Some(&bytes[..]);
        class.current_bytes = (!same).then(|| Rc::from(bytes));
    }

    /// Swaps a checked class file in: methods keep their ids (callers, vtables and reflection
    /// reach the new code), their decoded code is dropped, the constant pool's caches start
    /// afresh, and frames running the old code move to obsolete copies of their methods.
    fn apply_redefinition(&mut self, t: &mut JThread, c: ClassId, file: ClassFile) {
        let old_file = self.classes[c as usize].file.clone().expect("a class file");
        let old_refs: Box<[Cell<ClassId>]> =
            self.classes[c as usize].class_refs.iter().map(|r| Cell::new(r.get())).collect();
        let obsolete = Rc::new(Obsolete { file: old_file.clone(), class_refs: old_refs });
        let by_sig: HashMap<(Arc<str>, Arc<str>), MethodId> = self.classes[c as usize]
            .methods
            .iter()
            .map(|&m| ((self.methods[m as usize].name.clone(), self.methods[m as usize].descriptor.clone()), m))
            .collect();
        // Frames running the old code, on every thread.
        let mut running: HashMap<MethodId, MethodId> = HashMap::new();
        let old_methods = self.classes[c as usize].methods.clone();
        for &m in &old_methods {
            let Some(code) = self.methods[m as usize].code.take() else { continue };
            let on_stack = |th: &JThread| th.frames.iter().any(|f| f.method == m && Rc::ptr_eq(&f.code, &code));
            let busy = on_stack(t) || self.threads.iter().any(|s| s.thread.as_ref().is_some_and(on_stack));
            if !busy {
                continue;
            }
            let _ = code.obsolete.set(obsolete.clone());
            let old = &self.methods[m as usize];
            let id = self.methods.len() as MethodId;
            let copy = Method {
                id,
                class: old.class,
                name: old.name.clone(),
                descriptor: old.descriptor.clone(),
                access: old.access,
                sig: old.sig,
                parsed: old.parsed.clone(),
                arg_slots: old.arg_slots,
                raw: old.raw.clone(),
                signature: old.signature.clone(),
                hidden: old.hidden,
                caller_sensitive: old.caller_sensitive,
                code: OnceCell::from(code.clone()),
                vindex: None,
                obsolete: Some(old_file.clone()),
            };
            self.methods.push(copy);
            running.insert(m, id);
            let repoint = |th: &mut JThread| {
                for f in th.frames.iter_mut().filter(|f| f.method == m && Rc::ptr_eq(&f.code, &code)) {
                    f.method = id;
                }
            };
            repoint(t);
            for s in self.threads.iter_mut() {
                if let Some(th) = s.thread.as_mut() {
                    repoint(th);
                }
            }
        }
        // The new methods, in the new file's order (reflection reads them by position).
        let mut order = Vec::with_capacity(file.methods.len());
        for info in &file.methods {
            let Some(&m) = by_sig.get(&(info.name.clone(), info.descriptor.clone())) else { continue };
            let method = &mut self.methods[m as usize];
            method.raw = info.code.clone();
            method.signature = info.signature.clone();
            method.hidden = info.hidden;
            method.caller_sensitive = info.caller_sensitive;
            self.ref_maps.remove(&m);
            order.push(m);
        }
        for (field, info) in self.classes[c as usize].fields.iter_mut().zip(&file.fields) {
            field.constant_value = info.constant_value;
            field.signature = info.signature.clone();
        }
        let cp_len = file.constant_pool.len();
        let class = &mut self.classes[c as usize];
        class.methods = order;
        class.class_refs = (0..cp_len).map(|_| Cell::new(ClassId::MAX)).collect();
        class.file = Some(Rc::new(file));
        if class.verification.get() != Verification::Trusted {
            class.verification.set(Verification::Pending);
        }
        self.linked_constants.retain(|&(owner, _), _| owner != c);
    }

    /// `Instrumentation.getObjectSize`: the object's size as HotSpot lays it out on a 64-bit VM
    /// with compressed references and class pointers (12-byte header, fields packed largest first
    /// into the gaps, 8-byte alignment).
    pub(super) fn object_size(&self, r: Ref) -> u64 {
        let obj = self.heap.get(r);
        let align = |n: u64| (n + 7) & !7;
        if let Some(len) = obj.data.array_len() {
            let elem = match &self.classes[obj.class as usize].kind {
                ClassKind::Array { elem, .. } => elem.size() as u64,
                _ => 4,
            };
            return align(16 + len as u64 * elem);
        }
        // Superclasses first; each class's fields largest first, each at the first gap it fits.
        let mut chain = Vec::new();
        let mut c = Some(obj.class);
        while let Some(id) = c {
            chain.push(id);
            c = self.classes[id as usize].super_class;
        }
        let mut end = 12u64;
        let mut gaps: Vec<(u64, u64)> = Vec::new();
        for &id in chain.iter().rev() {
            let mut sizes: Vec<u64> = self.classes[id as usize]
                .fields
                .iter()
                .filter(|f| !f.is_static())
                .map(|f| match f.descriptor.as_bytes()[0] {
                    b'J' | b'D' => 8,
                    b'I' | b'F' | b'L' | b'[' => 4,
                    b'S' | b'C' => 2,
                    _ => 1,
                })
                .collect();
            sizes.sort_by(|a, b| b.cmp(a));
            for size in sizes {
                let fit = gaps.iter().position(|&(start, len)| {
                    let at = start.div_ceil(size) * size;
                    at + size <= start + len
                });
                match fit {
                    Some(i) => {
                        let (start, len) = gaps.remove(i);
                        let at = start.div_ceil(size) * size;
                        if at > start {
                            gaps.push((start, at - start));
                        }
                        if at + size < start + len {
                            gaps.push((at + size, start + len - at - size));
                        }
                        gaps.sort_unstable();
                    }
                    None => {
                        let at = end.div_ceil(size) * size;
                        if at > end {
                            gaps.push((end, at - end));
                        }
                        end = at + size;
                    }
                }
            }
        }
        align(end)
    }

    /// A class the boot loader defines for Java code (a resolution, `Class.forName`,
    /// `findBootstrapClass`) while agents transform classes: found in the image or the appended
    /// jars, transformed and defined here. None: nothing transforms, or not found (left to
    /// `load_class`).
    pub(super) fn load_boot_class_for_java(&mut self, t: &mut JThread, name: &str) -> VmResult<Option<ClassId>> {
        // Without transformers `load_class` does it all (the appended jars included).
        if !self.agents.transforming() || self.lookup_class(name).is_some() || name.starts_with('[') {
            return Ok(None);
        }
        let found = match self.image.find(name).map_err(VmError::from)? {
            Some((bytes, origin)) => match &origin {
                Origin::Module(m) if self.is_boot_module(m) => Some((bytes, origin, false)),
                _ => None,
            },
            None => self.agents.find_boot_appended(name).map(|(b, jar)| (b, Origin::Jar(jar), true)),
        };
        let Some((bytes, origin, appended)) = found else { return Ok(None) };
        let (source, bytes) = self.transform_class_file(t, 0, name, None, 0, bytes, false)?;
        let id = match self.define_class(name, &bytes, origin) {
            Ok(id) => id,
            Err(super::loader::LoadError::NotFound(n)) => {
                return Err(self.throw_new(t, "java/lang/NoClassDefFoundError", Some(&n)))
            }
            Err(super::loader::LoadError::Fatal(e)) => return Err(Fault::Fatal(e)),
        };
        if appended || source != bytes || self.agents.caching() {
            self.keep_class_bytes(id, source, bytes);
        }
        Ok(Some(id))
    }
}

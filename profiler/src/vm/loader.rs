//! Loading, linking and initialization (JVMS §5). Loading parses a class file and links it at
//! once: field slots, static slots, the vtable, the by-signature dispatch table (with default
//! methods) and the sorted supertype list. Initialization runs `<clinit>` on first active use.

use super::class::{Class, ClassId, ClassKind, Elem, Field, InitState, Method, MethodId, Verification};
use super::heap::{ObjData, Ref};
use super::{Fault, JThread, Tracker, Vm, VmError, VmResult};
use crate::classfile::descriptor::MethodDescriptor;
use crate::classfile::{self, access, Constant};
use crate::classpath::{is_user_code, source_path, Origin};
use std::cell::{Cell, OnceCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// Why a class could not be loaded. `NotFound` becomes a NoClassDefFoundError in Java;
/// the rest end the run with a clear message.
#[derive(Debug)]
pub enum LoadError {
    NotFound(String),
    Fatal(VmError),
}

impl From<VmError> for LoadError {
    fn from(e: VmError) -> Self {
        LoadError::Fatal(e)
    }
}

pub use crate::classfile::descriptor::PRIMITIVES;

impl<T: Tracker> Vm<T> {
    /// A class the boot loader has loaded, by internal name.
    pub fn lookup_class(&self, name: &str) -> Option<ClassId> {
        self.lookup_in(0, name)
    }

    /// A class `loader` has defined or been the initiating loader of (0: the boot loader).
    pub fn lookup_in(&self, loader: Ref, name: &str) -> Option<ClassId> {
        self.namespaces.get(&loader).and_then(|ns| ns.get(name)).copied()
    }

    /// Records that `loader` answers `name` with `id` (as defining or initiating loader).
    pub(super) fn register_name(&mut self, loader: Ref, name: &str, id: ClassId) {
        self.namespaces.entry(loader).or_default().insert(Arc::from(name), id);
    }

    pub fn class(&self, id: ClassId) -> &Class {
        &self.classes[id as usize]
    }

    /// Loads (and links) a class through the boot loader, or finds it loaded. The boot loader
    /// sees the JDK image's modules that are defined to it (before the module system starts:
    /// `java.base`), as HotSpot's does; the class path belongs to the application loader.
    pub fn load_class(&mut self, name: &str) -> Result<ClassId, LoadError> {
        if let Some(id) = self.lookup_class(name) {
            return Ok(id);
        }
        if name.starts_with('[') {
            return self.load_array_class(name);
        }
        let (bytes, origin) = match self.image.find(name).map_err(VmError::from)? {
            Some(found) => found,
            // The jars appended to the boot loader's search (`java.lang.instrument`).
            None => match self.agents.find_boot_appended(name) {
                Some((bytes, jar)) => {
                    let id = self.define_class(name, &bytes, Origin::Jar(jar))?;
                    self.classes[id as usize].class_bytes = Some(Rc::from(bytes));
                    return Ok(id);
                }
                None => return Err(LoadError::NotFound(name.to_string())),
            },
        };
        if let Origin::Module(m) = &origin {
            if !self.is_boot_module(m) {
                return Err(LoadError::NotFound(name.to_string()));
            }
        }
        self.define_class(name, &bytes, origin)
    }

    /// Loads a class through the boot loader, turning "not found" into a thrown NoClassDefFoundError.
    pub fn load_or_throw(&mut self, t: &mut JThread, name: &str) -> VmResult<ClassId> {
        if let Some(c) = self.load_boot_class_for_java(t, name)? {
            return Ok(c);
        }
        match self.load_class(name) {
            Ok(id) => Ok(id),
            Err(LoadError::NotFound(n)) => Err(self.throw_new(t, "java/lang/NoClassDefFoundError", Some(&n))),
            Err(LoadError::Fatal(e)) => Err(Fault::Fatal(e)),
        }
    }

    /// Defines a class of the boot loader from its bytes.
    pub fn define_class(&mut self, name: &str, bytes: &[u8], origin: Origin) -> Result<ClassId, LoadError> {
        let file =
            classfile::parse(bytes).map_err(|error| VmError::ClassFormat { class: name.replace('/', "."), error })?;
        self.define_parsed(name, file, origin)
    }

    /// Links a parsed class file for the boot loader (its supertypes through the boot loader too)
    /// and registers it.
    pub fn define_parsed(
        &mut self,
        name: &str,
        file: classfile::ClassFile,
        origin: Origin,
    ) -> Result<ClassId, LoadError> {
        self.check_version(name, &file)?;
        if &*file.this_class != name {
            return Err(LoadError::NotFound(format!("{name} (wrong name: {})", file.this_class)));
        }
        let super_class = match &file.super_class {
            Some(s) => Some(self.load_class(s)?),
            None => None,
        };
        let mut interfaces = Vec::with_capacity(file.interfaces.len());
        for i in &file.interfaces {
            interfaces.push(self.load_class(i)?);
        }
        let id = self.link(file, origin, 0, super_class, interfaces);
        self.register_name(0, name, id);
        Ok(id)
    }

    pub(super) fn check_version(&self, name: &str, file: &classfile::ClassFile) -> Result<(), VmError> {
        if file.major_version > self.max_major_version {
            return Err(VmError::UnsupportedVersion {
                class: name.replace('/', "."),
                major: file.major_version,
                max: self.max_major_version,
                java: self.max_major_version.saturating_sub(44),
            });
        }
        Ok(())
    }

    /// Lays out a class whose supertypes are loaded: field slots, static slots, methods, the
    /// vtable and dispatch table, the supertype list. The caller registers its name.
    pub(super) fn link(
        &mut self,
        file: classfile::ClassFile,
        origin: Origin,
        loader: Ref,
        super_class: Option<ClassId>,
        interfaces: Vec<ClassId>,
    ) -> ClassId {
        let name: Arc<str> = file.this_class.clone();
        let name = &*name;
        let id = self.classes.len() as ClassId;

        // Fields: instance slots continue the superclass's; statics get global slots.
        let (mut instance_slots, mut ref_slots) = match super_class {
            Some(s) => (self.classes[s as usize].instance_slots, self.classes[s as usize].ref_slots.clone()),
            None => (0, Vec::new()),
        };
        let mut fields = Vec::with_capacity(file.fields.len());
        for f in &file.fields {
            let is_ref = matches!(f.descriptor.as_bytes()[0], b'L' | b'[');
            let slot = if f.access_flags & access::STATIC != 0 {
                let s = self.statics.len() as u32;
                self.statics.push(0);
                if is_ref {
                    self.static_ref_slots.push(s);
                }
                s
            } else {
                let s = instance_slots;
                instance_slots += 1;
                if is_ref {
                    ref_slots.push(s);
                }
                s
            };
            fields.push(Field {
                name: f.name.clone(),
                descriptor: f.descriptor.clone(),
                access: f.access_flags,
                slot,
                constant_value: f.constant_value,
                signature: f.signature.clone(),
            });
        }
        match name {
            "java/lang/Class" => {
                // The hidden link from a mirror to its VM class.
                self.wk.class_id_slot = instance_slots;
                instance_slots += 1;
            }
            // The method a resolved MemberName names (HotSpot's injected `vmtarget`), + 1.
            "java/lang/invoke/MemberName" => {
                self.wk.invoke.member_vmtarget = instance_slots;
                instance_slots += 1;
            }
            _ => {}
        }
        let slot_of = |n: &str| fields.iter().find(|f: &&Field| &*f.name == n && !f.is_static()).map(|f| f.slot);
        match name {
            "java/lang/invoke/MethodHandle" => self.wk.invoke.handle_form = slot_of("form").unwrap_or(u32::MAX),
            "java/lang/invoke/LambdaForm" => self.wk.invoke.form_vmentry = slot_of("vmentry").unwrap_or(u32::MAX),
            _ => {}
        }

        // Methods.
        let mut methods = Vec::with_capacity(file.methods.len());
        for m in &file.methods {
            let mid = self.methods.len() as MethodId;
            let parsed = MethodDescriptor::parse(&m.descriptor).expect("descriptor checked by the parser");
            let is_static = m.access_flags & access::STATIC != 0;
            let arg_slots = parsed.param_slots() as u16 + if is_static { 0 } else { 1 };
            let sig = self.sig(&m.name, &m.descriptor);
            // A Rust implementation registered for a Java method replaces its bytecode (see natives),
            // except for natives that later JDKs made Java methods around a new native.
            let overridden = self.natives.contains_key(&(name, &*m.name, &*m.descriptor))
                && !super::natives::NATIVE_ONLY.contains(&(name, &*m.name, &*m.descriptor));
            let access_flags = if overridden { m.access_flags | access::NATIVE } else { m.access_flags };
            self.methods.push(Method {
                id: mid,
                class: id,
                name: m.name.clone(),
                descriptor: m.descriptor.clone(),
                access: access_flags,
                sig,
                parsed,
                arg_slots,
                raw: m.code.clone(),
                signature: m.signature.clone(),
                hidden: m.hidden,
                caller_sensitive: m.caller_sensitive,
                code: OnceCell::new(),
                vindex: None,
                obsolete: None,
            });
            methods.push(mid);
        }

        let is_interface = file.access_flags & access::INTERFACE != 0;
        let (vtable, dispatch) = self.build_dispatch(super_class, &interfaces, &methods, is_interface);
        let mut supertypes = vec![id];
        if let Some(s) = super_class {
            supertypes.extend_from_slice(&self.classes[s as usize].supertypes);
        }
        for &i in &interfaces {
            supertypes.extend_from_slice(&self.classes[i as usize].supertypes);
        }
        supertypes.sort_unstable();
        supertypes.dedup();
        let cp_len = file.constant_pool.len();
        let user = is_user_code(&origin, name, file.source_file.as_deref(), &self.opts.source_roots);
        let source = if user {
            source_path(&origin, name, file.source_file.as_deref(), &self.opts.source_roots).map(std::sync::Arc::from)
        } else {
            None
        };
        self.classes.push(Class {
            id,
            name: Arc::from(name),
            access: file.access_flags,
            kind: ClassKind::Instance,
            super_class,
            interfaces,
            file: Some(Rc::new(file)),
            origin,
            source,
            user,
            loader,
            protection_domain: 0,
            signers: 0,
            fields,
            instance_slots,
            ref_slots,
            methods,
            vtable,
            dispatch,
            supertypes,
            mirror: Cell::new(0),
            init: Cell::new(InitState::Linked),
            class_refs: (0..cp_len).map(|_| Cell::new(ClassId::MAX)).collect(),
            hidden: false,
            nest_host: None,
            verification: Cell::new(Verification::Trusted),
            class_bytes: None,
            cached: false,
            current_bytes: None,
        });
        id
    }

    /// The vtable (class methods by index) and the dispatch table (every instance method the class
    /// answers to, by signature, default methods included).
    fn build_dispatch(
        &mut self,
        super_class: Option<ClassId>,
        interfaces: &[ClassId],
        own: &[MethodId],
        is_interface: bool,
    ) -> (Vec<MethodId>, HashMap<u32, MethodId>) {
        let (mut vtable, mut dispatch) = match (super_class, is_interface) {
            (Some(s), false) => (self.classes[s as usize].vtable.clone(), self.classes[s as usize].dispatch.clone()),
            _ => (Vec::new(), HashMap::new()),
        };
        for &mid in own {
            let m = &self.methods[mid as usize];
            if m.is_static() || m.is_private() || m.name.starts_with('<') {
                continue;
            }
            let sig = m.sig;
            if !is_interface {
                let slot = vtable.iter().position(|&v| self.methods[v as usize].sig == sig);
                let index = match slot {
                    Some(i) => {
                        vtable[i] = mid;
                        i
                    }
                    None => {
                        vtable.push(mid);
                        vtable.len() - 1
                    }
                };
                self.methods[mid as usize].vindex = Some(index as u32);
            }
            dispatch.insert(sig, mid);
        }
        // Interface methods not implemented by the class hierarchy: the most specific default wins.
        let mut all_interfaces = Vec::new();
        for &i in interfaces {
            all_interfaces.extend(
                self.classes[i as usize]
                    .supertypes
                    .iter()
                    .copied()
                    .filter(|&c| self.classes[c as usize].is_interface()),
            );
        }
        if let Some(s) = super_class {
            all_interfaces.extend(
                self.classes[s as usize]
                    .supertypes
                    .iter()
                    .copied()
                    .filter(|&c| self.classes[c as usize].is_interface()),
            );
        }
        all_interfaces.sort_unstable();
        all_interfaces.dedup();
        for &iface in &all_interfaces {
            for &mid in &self.classes[iface as usize].methods {
                let m = &self.methods[mid as usize];
                if m.is_static() || m.is_private() || m.name.starts_with('<') {
                    continue;
                }
                let replace = match dispatch.get(&m.sig) {
                    None => true,
                    Some(&existing) => {
                        let e = &self.methods[existing as usize];
                        // The class being defined (not yet in the table) always wins.
                        let Some(e_class) = self.classes.get(e.class as usize) else {
                            continue;
                        };
                        // Only another interface's method can be displaced, and only by a more specific
                        // one, or an abstract one by a default.
                        e_class.is_interface()
                            && e.class != iface
                            && (self.classes[iface as usize].supertypes.binary_search(&e.class).is_ok()
                                || (e.is_abstract() && !m.is_abstract()))
                    }
                };
                if replace {
                    dispatch.insert(m.sig, mid);
                }
            }
        }
        (vtable, dispatch)
    }

    /// An array class through the boot loader: its component is loaded there first.
    fn load_array_class(&mut self, name: &str) -> Result<ClassId, LoadError> {
        let comp_desc = &name[1..];
        let first = *comp_desc.as_bytes().first().ok_or_else(|| LoadError::NotFound(name.into()))?;
        let component = match first {
            b'L' => {
                let inner = comp_desc
                    .strip_prefix('L')
                    .and_then(|s| s.strip_suffix(';'))
                    .ok_or_else(|| LoadError::NotFound(name.into()))?;
                self.load_class(inner)?
            }
            b'[' => self.load_class(comp_desc)?,
            _ => {
                let prim =
                    PRIMITIVES.iter().find(|p| p.1 as u8 == first).ok_or_else(|| LoadError::NotFound(name.into()))?.0;
                self.lookup_class(prim)
                    .ok_or_else(|| LoadError::Fatal(VmError::Internal("primitive classes not created".into())))?
            }
        };
        self.array_class_of(component)
    }

    /// The array class whose elements are `component`, made on first request. It belongs to the
    /// component's defining loader (JVMS §5.3.3).
    pub fn array_class_of(&mut self, component: ClassId) -> Result<ClassId, LoadError> {
        let c = &self.classes[component as usize];
        let name = match c.kind {
            ClassKind::Primitive(d) => format!("[{d}"),
            ClassKind::Array { .. } => format!("[{}", c.name),
            ClassKind::Instance => format!("[L{};", c.name),
        };
        let loader = c.loader;
        if let Some(id) = self.lookup_in(loader, &name) {
            return Ok(id);
        }
        let elem = Elem::from_descriptor(name.as_bytes()[1]).ok_or_else(|| LoadError::NotFound(name.clone()))?;
        let dims = match self.classes[component as usize].kind {
            ClassKind::Array { dims, .. } => dims + 1,
            _ => 1,
        };
        let object = self.load_class("java/lang/Object")?;
        let cloneable = self.load_class("java/lang/Cloneable")?;
        let serializable = self.load_class("java/io/Serializable")?;
        let id = self.classes.len() as ClassId;
        let o = &self.classes[object as usize];
        let mut supertypes = vec![id, object, cloneable, serializable];
        supertypes.sort_unstable();
        let class = Class {
            id,
            name: Arc::from(name.as_str()),
            access: access::PUBLIC | access::FINAL | access::ABSTRACT,
            kind: ClassKind::Array { elem, component, dims },
            super_class: Some(object),
            interfaces: vec![cloneable, serializable],
            file: None,
            origin: self.classes[component as usize].origin.clone(),
            source: None,
            user: self.classes[component as usize].user,
            loader,
            protection_domain: 0,
            signers: 0,
            fields: Vec::new(),
            instance_slots: 0,
            ref_slots: Vec::new(),
            methods: Vec::new(),
            vtable: o.vtable.clone(),
            dispatch: o.dispatch.clone(),
            supertypes,
            mirror: Cell::new(0),
            init: Cell::new(InitState::Initialized),
            class_refs: Vec::new(),
            hidden: false,
            nest_host: None,
            verification: Cell::new(Verification::Trusted),
            class_bytes: None,
            cached: false,
            current_bytes: None,
        };
        self.classes.push(class);
        self.register_name(loader, &name, id);
        Ok(id)
    }

    /// Creates `int.class` and friends (before any array class of them).
    pub(super) fn create_primitive_classes(&mut self) {
        for (name, desc) in PRIMITIVES {
            let id = self.classes.len() as ClassId;
            self.classes.push(Class {
                id,
                name: Arc::from(name),
                access: access::PUBLIC | access::FINAL | access::ABSTRACT,
                kind: ClassKind::Primitive(desc),
                super_class: None,
                interfaces: Vec::new(),
                file: None,
                origin: Origin::Module("java.base".into()),
                source: None,
                user: false,
                loader: 0,
                protection_domain: 0,
                signers: 0,
                fields: Vec::new(),
                instance_slots: 0,
                ref_slots: Vec::new(),
                methods: Vec::new(),
                vtable: Vec::new(),
                dispatch: HashMap::new(),
                supertypes: vec![id],
                mirror: Cell::new(0),
                init: Cell::new(InitState::Initialized),
                class_refs: Vec::new(),
                hidden: false,
                nest_host: None,
                verification: Cell::new(Verification::Trusted),
                class_bytes: None,
                cached: false,
                current_bytes: None,
            });
            self.register_name(0, name, id);
        }
    }

    /// Is `sub` assignable to `sup` (JVMS checkcast rules, arrays included)?
    pub fn is_subtype(&self, sub: ClassId, sup: ClassId) -> bool {
        if sub == sup {
            return true;
        }
        let s = &self.classes[sub as usize];
        if s.supertypes.binary_search(&sup).is_ok() {
            return true;
        }
        if let (
            ClassKind::Array { elem: Elem::Ref, component: sc, .. },
            ClassKind::Array { elem: Elem::Ref, component: tc, .. },
        ) = (&s.kind, &self.classes[sup as usize].kind)
        {
            return self.is_subtype(*sc, *tc);
        }
        false
    }

    /// The `java.lang.Class` object of a class, created on first request.
    pub fn mirror(&mut self, id: ClassId) -> Ref {
        let existing = self.classes[id as usize].mirror.get();
        if existing != 0 {
            return existing;
        }
        let class_class = self.wk.class;
        let slots = self.classes[class_class as usize].instance_slots as usize;
        let mut fields = vec![0u64; slots];
        fields[self.wk.class_id_slot as usize] = id as u64 + 1;
        if let (ClassKind::Array { component, .. }, Some(slot)) =
            (self.classes[id as usize].kind.clone(), self.wk.class_component_type)
        {
            fields[slot as usize] = self.mirror(component) as u64;
        }
        if let Some(slot) = self.wk.class_module {
            fields[slot as usize] = self.module_of(id) as u64;
        }
        let (loader, pd) = (self.classes[id as usize].loader, self.classes[id as usize].protection_domain);
        if let Some(slot) = self.wk.class_loader {
            fields[slot as usize] = loader as u64;
        }
        if let Some(slot) = self.wk.class_protection_domain {
            fields[slot as usize] = pd as u64;
        }
        let r = self.heap.alloc(class_class, ObjData::Fields(fields.into()));
        self.classes[id as usize].mirror.set(r);
        r
    }

    /// The class a `java.lang.Class` object stands for.
    pub fn class_of_mirror(&self, mirror: Ref) -> ClassId {
        match &self.heap.get(mirror).data {
            ObjData::Fields(f) => (f[self.wk.class_id_slot as usize] as ClassId).wrapping_sub(1),
            _ => ClassId::MAX,
        }
    }

    /// Runs class initialization (JVMS §5.5) if it has not run.
    pub fn initialize(&mut self, t: &mut JThread, id: ClassId) -> VmResult<()> {
        match self.classes[id as usize].init.get() {
            InitState::Initialized | InitState::Initializing => return Ok(()),
            InitState::Failed => {
                let msg = format!("Could not initialize class {}", self.classes[id as usize].java_name());
                let error = self.throw_new(t, "java/lang/NoClassDefFoundError", Some(&msg));
                return Err(match (error, self.init_errors.get(&id).copied()) {
                    (Fault::Exception(e), Some(cause)) => self.with_cause(t, e, cause),
                    (error, _) => error,
                });
            }
            InitState::Linked => {}
        }
        // Linking verifies the class first (a refusal leaves it uninitialised, as in HotSpot).
        self.ensure_verified(t, id)?;
        self.classes[id as usize].init.set(InitState::Initializing);
        if !self.classes[id as usize].is_interface() {
            if let Some(s) = self.classes[id as usize].super_class {
                if let Err(e) = self.initialize(t, s) {
                    self.classes[id as usize].init.set(InitState::Failed);
                    if let Fault::Exception(cause) = &e {
                        self.record_init_error(t, id, *cause);
                    }
                    return Err(e);
                }
            }
        }
        self.set_constant_values(id);
        let clinit = self.classes[id as usize]
            .methods
            .iter()
            .copied()
            .find(|&m| &*self.methods[m as usize].name == "<clinit>" && self.methods[m as usize].is_static());
        if let Some(m) = clinit {
            if let Err(fault) = self.invoke(t, m, &[]) {
                self.classes[id as usize].init.set(InitState::Failed);
                return Err(match fault {
                    Fault::Exception(e) => {
                        self.record_init_error(t, id, e);
                        let error = self.lookup_class("java/lang/Error").unwrap_or(ClassId::MAX);
                        let ec = self.heap.get(e).class;
                        if error != ClassId::MAX && self.is_subtype(ec, error) {
                            Fault::Exception(e)
                        } else {
                            self.wrap_in_initializer_error(t, e)
                        }
                    }
                    other => other,
                });
            }
        }
        self.classes[id as usize].init.set(InitState::Initialized);
        Ok(())
    }

    /// HotSpot's record of a failed initialization: not the exception itself (it would keep
    /// everything its stack trace reaches alive) but a new ExceptionInInitializerError saying
    /// `Exception <class>: <message> [in thread "<name>"]`, with the exception's stack trace.
    fn record_init_error(&mut self, t: &mut JThread, id: ClassId, e: Ref) {
        let class = self.classes[self.heap.get(e).class as usize].java_name();
        let message = match self.get_named(e, "detailMessage") as Ref {
            0 => String::new(),
            m => format!(": {}", self.rust_string(m)),
        };
        // During the boot there may be no thread object yet.
        let thread_obj = self.threads.get(self.current).map_or(0, |s| s.obj);
        let thread = match thread_obj {
            0 => String::new(),
            obj => match self.get_named(obj, "name") as Ref {
                0 => String::new(),
                name => self.rust_string(name),
            },
        };
        let text = format!("Exception {class}{message} [in thread \"{thread}\"]");
        let recorded = self.pinning(&[e], |vm| -> VmResult<Ref> {
            let Fault::Exception(record) = vm.throw_new(t, "java/lang/ExceptionInInitializerError", Some(&text)) else {
                return Ok(0);
            };
            vm.pinning(&[record], |vm| {
                let throwable = vm.load_or_throw(t, "java/lang/Throwable")?;
                let get = vm.find_method(throwable, "getStackTrace", "()[Ljava/lang/StackTraceElement;");
                let set = vm.find_method(throwable, "setStackTrace", "([Ljava/lang/StackTraceElement;)V");
                if let (Some(get), Some(set)) = (get, set) {
                    let trace = vm.invoke(t, get, &[e as u64])?;
                    vm.invoke(t, set, &[record as u64, trace])?;
                }
                Ok(record)
            })
        });
        // A failure to make the record (an error while erroring) leaves the class without one.
        if let Ok(record @ 1..) = recorded {
            self.extra_roots.push(record);
            self.init_errors.insert(id, record);
        }
    }

    /// `e.initCause(cause)`, answering `e` as the fault to throw.
    fn with_cause(&mut self, t: &mut JThread, e: Ref, cause: Ref) -> Fault {
        self.pinning(&[e], |vm| {
            let init_cause = vm
                .lookup_class("java/lang/Throwable")
                .and_then(|c| vm.find_method(c, "initCause", "(Ljava/lang/Throwable;)Ljava/lang/Throwable;"));
            match init_cause.map(|m| vm.invoke(t, m, &[e as u64, cause as u64])) {
                Some(Err(f)) => f,
                _ => Fault::Exception(e),
            }
        })
    }

    fn wrap_in_initializer_error(&mut self, t: &mut JThread, cause: Ref) -> Fault {
        // The cause is in no frame while the wrapper is loaded and made (either may collect).
        self.pinning(&[cause], |vm| {
            let eiie = match vm.load_or_throw(t, "java/lang/ExceptionInInitializerError") {
                Ok(c) => c,
                Err(f) => return f,
            };
            let obj = vm.alloc_instance(eiie);
            let Some(ctor) = vm.find_method(eiie, "<init>", "(Ljava/lang/Throwable;)V") else {
                return Fault::Exception(cause);
            };
            match vm.invoke(t, ctor, &[obj as u64, cause as u64]) {
                Ok(_) => Fault::Exception(obj),
                Err(f) => f,
            }
        })
    }

    /// `static final` fields with a ConstantValue attribute get their values before `<clinit>`.
    fn set_constant_values(&mut self, id: ClassId) {
        let Some(file) = self.classes[id as usize].file.clone() else {
            return;
        };
        let consts: Vec<(u32, u16)> = self.classes[id as usize]
            .fields
            .iter()
            .filter(|f| f.is_static())
            .filter_map(|f| f.constant_value.map(|cv| (f.slot, cv)))
            .collect();
        for (slot, cv) in consts {
            let v = match file.constant_pool.get(cv) {
                Some(Constant::Integer(i)) => *i as u32 as u64,
                Some(Constant::Float(f)) => f.to_bits() as u64,
                Some(Constant::Long(l)) => *l as u64,
                Some(Constant::Double(d)) => d.to_bits(),
                Some(Constant::String { utf8 }) => match file.constant_pool.utf16(*utf8) {
                    Ok(units) => self.intern_utf16(units.into()) as u64,
                    Err(_) => 0,
                },
                _ => 0,
            };
            self.statics[slot as usize] = v;
        }
    }

    /// Finds a method declared in `class` itself.
    pub fn find_declared_method(&self, class: ClassId, name: &str, descriptor: &str) -> Option<MethodId> {
        self.classes[class as usize]
            .methods
            .iter()
            .copied()
            .find(|&m| &*self.methods[m as usize].name == name && &*self.methods[m as usize].descriptor == descriptor)
    }

    /// Method resolution (JVMS §5.4.3.3): the class, its superclasses, then its superinterfaces.
    pub fn find_method(&self, class: ClassId, name: &str, descriptor: &str) -> Option<MethodId> {
        let mut c = Some(class);
        while let Some(id) = c {
            if let Some(m) = self.find_declared_method(id, name, descriptor) {
                return Some(m);
            }
            c = self.classes[id as usize].super_class;
        }
        // Superinterfaces: prefer a non-abstract (maximally specific) method.
        let mut found = None;
        for &s in &self.classes[class as usize].supertypes {
            if self.classes[s as usize].is_interface() {
                if let Some(m) = self.find_declared_method(s, name, descriptor) {
                    if self.methods[m as usize].is_static() || self.methods[m as usize].is_private() {
                        continue;
                    }
                    if found.is_none() || !self.methods[m as usize].is_abstract() {
                        found = Some(m);
                    }
                }
            }
        }
        found
    }

    /// Field resolution (JVMS §5.4.3.2): the class, its superinterfaces, then its superclass.
    pub fn find_field(&self, class: ClassId, name: &str, descriptor: &str) -> Option<(ClassId, Field)> {
        let c = &self.classes[class as usize];
        if let Some(f) = c.field(name, Some(descriptor)) {
            return Some((class, f.clone()));
        }
        for &i in &c.interfaces {
            if let Some(found) = self.find_field(i, name, descriptor) {
                return Some(found);
            }
        }
        c.super_class.and_then(|s| self.find_field(s, name, descriptor))
    }

    /// The slot of a named instance field (for natives), searching superclasses.
    pub fn field_slot(&self, class: ClassId, name: &str) -> Option<u32> {
        let mut c = Some(class);
        while let Some(id) = c {
            if let Some(f) = self.classes[id as usize].field(name, None).filter(|f| !f.is_static()) {
                return Some(f.slot);
            }
            c = self.classes[id as usize].super_class;
        }
        None
    }

    pub fn alloc_instance(&mut self, class: ClassId) -> Ref {
        let n = self.classes[class as usize].instance_slots as usize;
        self.heap.alloc(class, ObjData::Fields(vec![0u64; n].into()))
    }

    pub fn alloc_array(&mut self, array_class: ClassId, len: usize) -> Ref {
        let elem = match self.classes[array_class as usize].kind {
            ClassKind::Array { elem, .. } => elem,
            _ => Elem::Ref,
        };
        self.heap.alloc(array_class, ObjData::new_array(elem, len))
    }
}

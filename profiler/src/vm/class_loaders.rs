//! Class loaders and modules, as HotSpot's system dictionary keeps them: every class belongs to
//! the loader that defined it, and names resolve per loader. The boot loader is the VM itself
//! (the JDK image, `load_class`); every other loader — the JDK's platform and application
//! loaders included — is a Java object whose `loadClass` the VM calls, and which defines classes
//! from bytes through `ClassLoader.defineClass*`. Modules are the JDK's own (`Module.defineModule0`
//! tells the VM which packages each holds); a class's module is found from its package.

use super::class::{package_of, ClassId, ClassKind, Verification};
use super::heap::Ref;
use super::loader::LoadError;
use super::{Fault, JThread, Tracker, Vm, VmError, VmResult};
use crate::classfile;
use crate::classpath::Origin;
use std::sync::Arc;

/// How a class defined from bytes is to be named and registered.
pub struct Definition<'a> {
    pub loader: Ref,
    /// The binary name the caller expects (internal form), if it gave one.
    pub name: Option<&'a str>,
    pub protection_domain: Ref,
    pub origin: Origin,
    /// A hidden class (`Lookup.defineHiddenClass`): not findable by name, its name suffixed.
    pub hidden: bool,
}

impl<T: Tracker> Vm<T> {
    /// May the boot loader define classes of module `m`? Those defined to it (before the module
    /// system is up: java.base only).
    pub(super) fn is_boot_module(&self, m: &str) -> bool {
        if self.boot_modules.is_empty() {
            m == "java.base"
        } else {
            self.boot_modules.contains(m)
        }
    }

    /// Loads `name` (internal form) as `loader` sees it, for resolution: the boot loader is the
    /// VM; any other loader is asked through `loadClass` (see [`Vm::ask_loader`]). A loader that
    /// cannot find it makes this a NoClassDefFoundError caused by its ClassNotFoundException.
    pub fn load_from(&mut self, t: &mut JThread, loader: Ref, name: &str) -> VmResult<ClassId> {
        if loader == 0 {
            return self.load_or_throw(t, name);
        }
        match self.ask_loader(t, loader, name) {
            Err(Fault::Exception(e)) if self.is_instance_of_named(e, "java/lang/ClassNotFoundException") => {
                let error = self.pinning(&[e], |vm| vm.throw_new(t, "java/lang/NoClassDefFoundError", Some(name)));
                if let Fault::Exception(ncdfe) = error {
                    self.set_named(ncdfe, "cause", e as u64);
                }
                Err(error)
            }
            other => other,
        }
    }

    /// `Class.forName(name, init, loader)`'s lookup: the boot loader is the VM; any other loader
    /// is asked through `loadClass` (its exceptions pass through) and the answer is remembered
    /// for that loader. Arrays are made from their element class.
    pub fn ask_loader(&mut self, t: &mut JThread, loader: Ref, name: &str) -> VmResult<ClassId> {
        if loader == 0 {
            if let Some(c) = self.load_boot_class_for_java(t, name)? {
                return Ok(c);
            }
            return match self.load_class(name) {
                Ok(c) => Ok(c),
                Err(LoadError::NotFound(n)) => {
                    Err(self.throw_new(t, "java/lang/ClassNotFoundException", Some(&n.replace('/', "."))))
                }
                Err(LoadError::Fatal(e)) => Err(Fault::Fatal(e)),
            };
        }
        if let Some(id) = self.lookup_in(loader, name) {
            return Ok(id);
        }
        if let Some(component) = name.strip_prefix('[') {
            let component = match component.as_bytes().first() {
                Some(b'L') if component.ends_with(';') => {
                    self.ask_loader(t, loader, &component[1..component.len() - 1])?
                }
                Some(b'[') => self.ask_loader(t, loader, component)?,
                _ => return self.ask_loader(t, 0, name),
            };
            let id = self.array_class_or_throw(t, component)?;
            self.register_name(loader, name, id);
            return Ok(id);
        }
        let jname = self.new_string(&name.replace('/', "."));
        // Loading is the JVM's work, not the program's: the trackers do not see it.
        let mirror = self.pinning(&[jname, loader], |vm| {
            vm.unobserved(|vm| {
                vm.invoke_virtual(t, loader, "loadClass", "(Ljava/lang/String;)Ljava/lang/Class;", &[jname as u64])
            })
        })?;
        if mirror == 0 {
            return Err(self.throw_new(t, "java/lang/NoClassDefFoundError", Some(name)));
        }
        let id = self.class_of_mirror(mirror as Ref);
        if *self.classes[id as usize].name != *name {
            let msg = format!("{name} (wrong name: {})", self.classes[id as usize].name);
            return Err(self.throw_new(t, "java/lang/NoClassDefFoundError", Some(&msg)));
        }
        self.register_name(loader, name, id);
        if !self.loaders.contains(&loader) {
            self.loaders.push(loader);
        }
        Ok(id)
    }

    /// The nest host of `class` (JVMS §5.4.4): the one given at its definition, else the class its
    /// `NestHost` attribute names (resolved through its loader), else itself.
    pub fn nest_host(&mut self, t: &mut JThread, class: ClassId) -> VmResult<ClassId> {
        if let Some(h) = self.classes[class as usize].nest_host {
            return Ok(h);
        }
        match self.classes[class as usize].file.as_ref().and_then(|f| f.nest_host.clone()) {
            Some(h) => self.load_seen_from(t, class, &h),
            None => Ok(class),
        }
    }

    /// Loads `name` as the class `from` sees it (through `from`'s defining loader).
    pub fn load_seen_from(&mut self, t: &mut JThread, from: ClassId, name: &str) -> VmResult<ClassId> {
        let loader = self.classes[from as usize].loader;
        self.load_from(t, loader, name)
    }

    fn is_instance_of_named(&self, obj: Ref, class: &str) -> bool {
        match self.lookup_class(class) {
            Some(c) => self.is_subtype(self.heap.get(obj).class, c),
            None => false,
        }
    }

    /// Defines a class from a class file's bytes for a Java class loader (`defineClass*`), with
    /// HotSpot's errors as Java exceptions: ClassFormatError, UnsupportedClassVersionError,
    /// NoClassDefFoundError (wrong name), LinkageError (defined twice), and the supertype checks.
    pub fn define_from_bytes(&mut self, t: &mut JThread, bytes: &[u8], d: Definition) -> VmResult<ClassId> {
        // `java.lang.instrument`'s transformers see every class defined but hidden ones.
        let transformed;
        let (source, bytes) = if !d.hidden && self.agents.transforming() {
            let name = match d.name {
                Some(n) => n.to_string(),
                None => classfile::parse(bytes).map(|f| f.this_class.to_string()).unwrap_or_default(),
            };
            transformed =
                self.transform_class_file(t, d.loader, &name, None, d.protection_domain, bytes.to_vec(), false)?;
            (&transformed.0[..], &transformed.1[..])
        } else {
            (bytes, bytes)
        };
        let shown = d.name.unwrap_or("").replace('/', ".");
        let file = match classfile::parse(bytes) {
            Ok(f) => f,
            Err(e) => {
                // HotSpot names the class as it was asked to define it, in internal form.
                let msg = match (d.name, e.hotspot_message(d.name.unwrap_or_default())) {
                    (Some(_), Some(hotspot)) => hotspot,
                    _ if shown.is_empty() => e.to_string(),
                    _ => format!("{e} in class file {shown}"),
                };
                return Err(self.throw_new(t, "java/lang/ClassFormatError", Some(&msg)));
            }
        };
        if let Err(VmError::UnsupportedVersion { class, major, max, .. }) = self.check_version(&file.this_class, &file)
        {
            let msg = format!(
                "{class} has been compiled by a more recent version of the Java Runtime (class file version {major}.0), \
                 this version of the Java Runtime only recognizes class file versions up to {max}.0"
            );
            return Err(self.throw_new(t, "java/lang/UnsupportedClassVersionError", Some(&msg)));
        }
        if let Some(expected) = d.name {
            if *file.this_class != *expected && !d.hidden {
                let msg = format!("{expected} (wrong name: {})", file.this_class);
                return Err(self.throw_new(t, "java/lang/NoClassDefFoundError", Some(&msg)));
            }
        }
        let name: Arc<str> = file.this_class.clone();
        if !d.hidden {
            if let Some(existing) = self.lookup_in(d.loader, &name) {
                let kind = if self.classes[existing as usize].is_interface() { "interface" } else { "class" };
                let msg = format!(
                    "loader {} attempted duplicate {kind} definition for {}. ({})",
                    self.loader_name(d.loader),
                    name.replace('/', "."),
                    self.class_in_module_of_loader(existing)
                );
                return Err(self.throw_new(t, "java/lang/LinkageError", Some(&msg)));
            }
        }
        // Only the JDK's modules are trusted; everything a Java class loader defines is verified.
        let verify = d.loader != 0 && !matches!(d.origin, Origin::Module(_));
        let id = self.define_in(t, d.loader, file, d.origin, d.hidden)?;
        self.classes[id as usize].protection_domain = d.protection_domain;
        if !d.hidden {
            // What a retransformation starts from.
            self.keep_class_bytes(id, source.to_vec(), bytes.to_vec());
        }
        if verify && !self.is_reflection_accessor(id) {
            self.classes[id as usize].verification.set(Verification::Pending);
        }
        Ok(id)
    }

    /// The JDK's generated reflection accessors (serialization constructors call an `<init>` of a
    /// class other than their superclass's, on purpose): HotSpot does not verify them either.
    fn is_reflection_accessor(&self, id: ClassId) -> bool {
        self.classes[id as usize].supertypes.iter().any(|&s| {
            matches!(
                &*self.classes[s as usize].name,
                "jdk/internal/reflect/MagicAccessorImpl" | "jdk/internal/reflect/SerializationConstructorAccessorImpl"
            )
        })
    }

    /// Links a parsed class for `loader`, its supertypes loaded through that loader, and
    /// registers it by name unless it is hidden. Used by `defineClass*` and by the classes the VM
    /// generates on behalf of a class (linked call sites, field accessors).
    pub(super) fn define_in(
        &mut self,
        t: &mut JThread,
        loader: Ref,
        file: classfile::ClassFile,
        origin: Origin,
        hidden: bool,
    ) -> VmResult<ClassId> {
        let name: Arc<str> = file.this_class.clone();
        let super_class = match file.super_class.clone() {
            Some(s) => {
                let sc = self.load_from(t, loader, &s)?;
                let sup = &self.classes[sc as usize];
                if sup.is_interface() {
                    let msg =
                        format!("class {} has interface {} as super class", name.replace('/', "."), sup.java_name());
                    return Err(self.throw_new(t, "java/lang/IncompatibleClassChangeError", Some(&msg)));
                }
                if sup.access & classfile::access::FINAL != 0 {
                    let msg =
                        format!("class {} cannot inherit from final class {}", name.replace('/', "."), sup.java_name());
                    return Err(self.throw_new(t, "java/lang/IncompatibleClassChangeError", Some(&msg)));
                }
                Some(sc)
            }
            None => None,
        };
        let mut interfaces = Vec::with_capacity(file.interfaces.len());
        for i in file.interfaces.clone().iter() {
            let ic = self.load_from(t, loader, i)?;
            if !self.classes[ic as usize].is_interface() {
                let msg = format!(
                    "class {} can not implement {}, because it is not an interface ({})",
                    name.replace('/', "."),
                    self.classes[ic as usize].java_name(),
                    self.class_in_module_of_loader(ic)
                );
                return Err(self.throw_new(t, "java/lang/IncompatibleClassChangeError", Some(&msg)));
            }
            interfaces.push(ic);
        }
        let id = self.link(file, origin, loader, super_class, interfaces);
        if hidden {
            // Not findable by name: its references to itself resolve to itself.
            self.classes[id as usize].hidden = true;
            let base = hidden_base_name(&name);
            if let Some(file) = self.classes[id as usize].file.clone() {
                for i in 1..file.constant_pool.len() as u16 {
                    if matches!(file.constant_pool.class_name(i), Ok(n) if **n == *base || **n == *name) {
                        self.classes[id as usize].class_refs[i as usize].set(id);
                    }
                }
            }
        } else {
            self.register_name(loader, &name, id);
        }
        if loader != 0 && !self.loaders.contains(&loader) {
            self.loaders.push(loader);
        }
        Ok(id)
    }

    /// Links a class the VM generated on behalf of `owner` (a linked call site, a field accessor):
    /// it belongs to `owner`'s loader, is hidden and is not findable by name.
    pub(super) fn define_generated(
        &mut self,
        t: &mut JThread,
        owner: ClassId,
        file: classfile::ClassFile,
    ) -> VmResult<ClassId> {
        let (loader, origin) = (self.classes[owner as usize].loader, self.classes[owner as usize].origin.clone());
        self.define_in(t, loader, file, origin, true)
    }

    /// The module a class belongs to: the named module holding its package in its loader, else
    /// its loader's unnamed module; arrays are in their element's, primitives in java.base's.
    /// Null while the module system is not up yet (HotSpot patches such mirrors later too).
    pub(super) fn module_of(&self, id: ClassId) -> Ref {
        let mut c = id;
        while let ClassKind::Array { component, .. } = self.classes[c as usize].kind {
            c = component;
        }
        let class = &self.classes[c as usize];
        let package = match class.kind {
            ClassKind::Primitive(_) => "java/lang",
            _ => package_of(&class.name),
        };
        if let Some(&m) = self.package_modules.get(&(class.loader, Arc::from(package))) {
            return m;
        }
        if class.loader == 0 {
            self.boot_unnamed_module
        } else {
            self.get_named(class.loader, "unnamedModule") as Ref
        }
    }

    /// `Module.defineModule0`: the module's packages now resolve to it in its loader. Mirrors made
    /// before (java.base's classes, made before the module system) get their module now.
    pub(super) fn define_module(&mut self, module: Ref, name: &str, packages: Vec<String>) {
        let loader = self.get_named(module, "loader") as Ref;
        if loader == 0 {
            self.boot_modules.insert(Arc::from(name));
        } else if !self.loaders.contains(&loader) {
            self.loaders.push(loader);
        }
        let packages: std::collections::HashSet<Arc<str>> =
            packages.into_iter().map(|p| Arc::from(p.replace('.', "/"))).collect();
        for p in &packages {
            self.package_modules.insert((loader, p.clone()), module);
        }
        let Some(slot) = self.wk.class_module else { return };
        for i in 0..self.classes.len() {
            let c = &self.classes[i];
            let m = c.mirror.get();
            if m == 0 || c.loader != loader {
                continue;
            }
            let mut e = i as ClassId;
            while let ClassKind::Array { component, .. } = self.classes[e as usize].kind {
                e = component;
            }
            let package = match self.classes[e as usize].kind {
                ClassKind::Primitive(_) => "java/lang",
                _ => package_of(&self.classes[e as usize].name),
            };
            if packages.contains(package) {
                self.set_field(m, slot, module as u64);
            }
        }
    }

    /// How HotSpot names a loader in messages: `'bootstrap'`, `'app'`, `'platform'`, or the
    /// loader's class and identity hash (the JDK's `nameAndId`).
    pub fn loader_name(&self, loader: Ref) -> String {
        if loader == 0 {
            return "'bootstrap'".into();
        }
        match self.get_named(loader, "nameAndId") as Ref {
            0 => self.classes[self.heap.get(loader).class as usize].java_name(),
            s => self.rust_string(s),
        }
    }

    /// `Foo is in unnamed module of loader 'app'` — the parenthesis of HotSpot's linkage messages.
    pub(super) fn class_in_module_of_loader(&self, c: ClassId) -> String {
        format!("{} is in {}", self.classes[c as usize].java_name(), self.module_and_loader(c))
    }

    /// `module java.base of loader 'bootstrap'`, `unnamed module of loader 'app'`.
    pub(super) fn module_and_loader(&self, c: ClassId) -> String {
        let mut e = c;
        while let ClassKind::Array { component, .. } = self.classes[e as usize].kind {
            e = component;
        }
        let loader = self.classes[e as usize].loader;
        let module = self.module_of(c);
        let module_name = if module == 0 { 0 } else { self.get_named(module, "name") as Ref };
        let loader_name = self.loader_name(loader);
        if module_name == 0 {
            format!("unnamed module of loader {loader_name}")
        } else {
            format!("module {} of loader {loader_name}", self.rust_string(module_name))
        }
    }

    /// The named module a class is in, for stack trace elements (None: unnamed).
    pub(super) fn module_name_of(&self, c: ClassId) -> Option<String> {
        let module = self.module_of(c);
        if module == 0 {
            return match &self.classes[c as usize].origin {
                Origin::Module(m) => Some(m.clone()),
                _ => None,
            };
        }
        match self.get_named(module, "name") as Ref {
            0 => None,
            s => Some(self.rust_string(s)),
        }
    }

    /// The packages the boot loader has defined classes in (internal form, sorted).
    pub(super) fn boot_packages(&self) -> Vec<String> {
        let mut packages: Vec<String> = self
            .classes
            .iter()
            .filter(|c| c.loader == 0 && c.file.is_some() && !c.hidden)
            .map(|c| c.package().to_string())
            .filter(|p| !p.is_empty())
            .collect();
        packages.sort_unstable();
        packages.dedup();
        packages
    }

    /// The module of a boot-loader package (`java/lang` → `java.base`), if it is in the image.
    pub(super) fn boot_package_module(&self, package: &str) -> Option<String> {
        self.classes.iter().find(|c| c.loader == 0 && c.file.is_some() && c.package() == package).and_then(|c| match &c
            .origin
        {
            Origin::Module(m) => Some(m.clone()),
            _ => None,
        })
    }

    /// The class loader the launcher uses (`ClassLoader.getSystemClassLoader()`), 0 before phase 3.
    /// The classes `loader` is the defining or initiating loader of (0: the boot loader).
    pub(super) fn initiated_by(&self, loader: Ref) -> Vec<ClassId> {
        self.namespaces.get(&loader).map(|ns| ns.values().copied().collect()).unwrap_or_default()
    }

    pub fn system_loader(&self) -> Ref {
        self.system_loader
    }
}

/// The name a hidden class was given in its class file (`Foo` for `Foo/0x0000000800000001`).
pub fn hidden_base_name(name: &str) -> &str {
    match name.rfind("/0x") {
        Some(i) if !name[i + 1..].contains('/') => &name[..i],
        _ => name,
    }
}

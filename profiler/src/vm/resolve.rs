//! Slow paths the interpreter calls out to: resolving constant-pool references and rewriting the
//! op in place (quickening), entering methods that are not yet decoded or are native, finding
//! exception handlers, and allocating arrays with the heap cap checked.

use super::class::{ClassId, ClassKind, Elem, InitState, MethodId};
use super::decode::{Code, Obsolete};
use super::heap::{ObjData, Ref};
use super::loader::LoadError;
use super::ops::Op;
use super::{Fault, Frame, JThread, Tracker, Vm, VmError, VmResult};
use crate::classfile::descriptor::Kind;
use crate::classfile::{access, Constant};
use std::cell::Cell;
use std::rc::Rc;

impl<T: Tracker> Vm<T> {
    /// Resolves a Class constant of `m`'s class to a loaded class (cached per constant).
    pub(super) fn resolve_class_ref(&mut self, t: &mut JThread, m: MethodId, cp: u16) -> VmResult<ClassId> {
        let owner = self.methods[m as usize].class;
        self.resolve_class_in(t, owner, cp)
    }

    pub(super) fn resolve_class_in(&mut self, t: &mut JThread, owner: ClassId, cp: u16) -> VmResult<ClassId> {
        if let Some(c) = self.classes[owner as usize].class_refs.get(cp as usize) {
            if c.get() != ClassId::MAX {
                return Ok(c.get());
            }
        }
        let file = self.classes[owner as usize].file.clone().expect("constant pools belong to loaded classes");
        let name = file.constant_pool.class_name(cp).map_err(|e| VmError::Internal(e.to_string()))?.clone();
        let loader = self.classes[owner as usize].loader;
        let id = self.load_from(t, loader, &name)?;
        self.classes[owner as usize].class_refs[cp as usize].set(id);
        Ok(id)
    }

    /// Resolves the constant-pool reference of `op` (at op index `at` of `m`'s code), writes the
    /// quickened op into the code when that is final, and returns the op to run now.
    pub(super) fn quicken(&mut self, t: &mut JThread, m: MethodId, code: &Rc<Code>, at: usize, op: Op) -> VmResult<Op> {
        let owner = self.methods[m as usize].class;
        // Code whose class was redefined while it ran names its own (the old) constant pool.
        let obsolete = code.obsolete.get().cloned();
        let ob = obsolete.as_ref();
        let file = match ob {
            Some(o) => o.file.clone(),
            None => self.classes[owner as usize].file.clone().expect("code belongs to loaded classes"),
        };
        let cp = &file.constant_pool;
        let bad = |e: String| Fault::Fatal(VmError::Internal(format!("constant pool: {e}")));
        let mut permanent = true;
        let quick = match op {
            Op::LdcCp(i) => match cp.get(i) {
                Some(Constant::Integer(v)) => Op::Iconst(*v),
                Some(Constant::Float(v)) => Op::Fconst(*v),
                Some(Constant::String { utf8 }) => {
                    let units = cp.utf16(*utf8).map_err(bad)?;
                    Op::LdcRef(self.intern_utf16(units.into()))
                }
                Some(Constant::Class { .. }) => {
                    let c = self.resolve_class_of(t, owner, ob, i)?;
                    Op::LdcRef(self.mirror(c))
                }
                Some(Constant::MethodType { .. } | Constant::MethodHandle { .. } | Constant::Dynamic { .. }) => {
                    match self.with_pool_of(owner, ob, |vm| vm.linked_constant(t, owner, i))? {
                        (v, Kind::Reference) => Op::LdcRef(v as Ref),
                        (v, Kind::Float) => Op::Fconst(f32::from_bits(v as u32)),
                        (v, _) => Op::Iconst(v as i32),
                    }
                }
                other => return Err(bad(format!("ldc of {other:?}"))),
            },
            Op::Ldc2Cp(i) => match cp.get(i) {
                Some(Constant::Long(v)) => Op::Lconst(*v),
                Some(Constant::Double(v)) => Op::Dconst(*v),
                Some(Constant::Dynamic { .. }) => {
                    match self.with_pool_of(owner, ob, |vm| vm.linked_constant(t, owner, i))? {
                        (v, Kind::Double) => Op::Dconst(f64::from_bits(v)),
                        (v, _) => Op::Lconst(v as i64),
                    }
                }
                other => return Err(bad(format!("ldc2_w of {other:?}"))),
            },
            Op::GetStaticCp(i) | Op::PutStaticCp(i) | Op::GetFieldCp(i) | Op::PutFieldCp(i) => {
                let r = cp.member_ref(i).map_err(bad)?;
                let class = self.resolve_class_member_owner(t, owner, ob, i)?;
                let Some((decl, field)) = self.find_field(class, &r.name, &r.descriptor) else {
                    return Err(self.throw_new(t, "java/lang/NoSuchFieldError", Some(&r.name)));
                };
                let is_static_op = matches!(op, Op::GetStaticCp(_) | Op::PutStaticCp(_));
                if field.is_static() != is_static_op {
                    let msg = format!(
                        "Expected {} field {}.{}",
                        if is_static_op { "static" } else { "non-static" },
                        self.classes[decl as usize].java_name(),
                        r.name
                    );
                    return Err(self.throw_new(t, "java/lang/IncompatibleClassChangeError", Some(&msg)));
                }
                let wide = field.kind().is_wide();
                if is_static_op {
                    self.initialize(t, decl)?;
                    permanent = self.classes[decl as usize].init.get() == InitState::Initialized;
                }
                let narrow = super::ops::Narrow::of(field.kind());
                match (op, wide) {
                    (Op::GetStaticCp(_), false) => Op::GetStatic(field.slot),
                    (Op::GetStaticCp(_), true) => Op::GetStatic2(field.slot),
                    (Op::PutStaticCp(_), false) => match narrow {
                        Some(n) => Op::PutStaticNarrow(field.slot, n),
                        None => Op::PutStatic(field.slot),
                    },
                    (Op::PutStaticCp(_), true) => Op::PutStatic2(field.slot),
                    (Op::GetFieldCp(_), false) => Op::GetField(field.slot),
                    (Op::GetFieldCp(_), true) => Op::GetField2(field.slot),
                    (_, true) => Op::PutField2(field.slot),
                    _ => match narrow {
                        Some(n) => Op::PutFieldNarrow(field.slot, n),
                        None => Op::PutField(field.slot),
                    },
                }
            }
            Op::InvokeStaticCp(i) | Op::InvokeSpecialCp(i) | Op::InvokeVirtualCp(i) | Op::InvokeInterfaceCp(i) => {
                let r = cp.member_ref(i).map_err(bad)?;
                let class = self.resolve_class_member_owner(t, owner, ob, i)?;
                // Signature-polymorphic methods are declared `(Object...)`: link by name.
                if self.signature_polymorphic(class, &r.name).is_some() {
                    let quick = if &*self.classes[class as usize].name == "java/lang/invoke/VarHandle" {
                        super::varhandle::link(&r.name, &r.descriptor)
                            .ok_or_else(|| VmError::Unsupported(format!("VarHandle.{}{}", r.name, r.descriptor)))?
                    } else {
                        self.with_pool_of(owner, ob, |vm| vm.link_polymorphic(t, owner, &r.name, &r.descriptor))?
                    };
                    code.ops[at].set(quick);
                    return Ok(quick);
                }
                let Some(method) = self.find_method(class, &r.name, &r.descriptor) else {
                    let msg = format!(
                        "'{}'",
                        self.pretty_method(&self.classes[class as usize].java_name(), &r.name, &r.descriptor)
                    );
                    return Err(self.throw_new(t, "java/lang/NoSuchMethodError", Some(&msg)));
                };
                let mm = &self.methods[method as usize];
                let args = mm.arg_slots;
                let decl = mm.class;
                match op {
                    Op::InvokeStaticCp(_) => {
                        if !mm.is_static() {
                            let msg = format!("Expecting static method {}", self.method_name(method));
                            return Err(self.throw_new(t, "java/lang/IncompatibleClassChangeError", Some(&msg)));
                        }
                        self.initialize(t, decl)?;
                        permanent = self.classes[decl as usize].init.get() == InitState::Initialized;
                        Op::InvokeDirect { method, args }
                    }
                    Op::InvokeSpecialCp(_) => {
                        // `super.m()`: select from the current class's superclass (ACC_SUPER semantics).
                        let cur = &self.classes[owner as usize];
                        let target = if &*r.name != "<init>"
                            && !self.classes[class as usize].is_interface()
                            && class != owner
                            && cur.access & access::SUPER != 0
                            && self.is_subtype(owner, class)
                        {
                            let sup = cur.super_class.unwrap_or(class);
                            self.find_method(sup, &r.name, &r.descriptor).unwrap_or(method)
                        } else {
                            method
                        };
                        if self.methods[target as usize].is_abstract() {
                            let msg = self.method_name(target);
                            return Err(self.throw_new(t, "java/lang/AbstractMethodError", Some(&msg)));
                        }
                        Op::InvokeDirectNonNull { method: target, args }
                    }
                    _ => {
                        let final_method = mm.is_private()
                            || (mm.access & access::FINAL != 0 && !self.classes[decl as usize].is_interface())
                            || (self.classes[decl as usize].access & access::FINAL != 0);
                        if mm.is_static() {
                            let msg = format!("Expecting non-static method {}", self.method_name(method));
                            return Err(self.throw_new(t, "java/lang/IncompatibleClassChangeError", Some(&msg)));
                        }
                        let sig = self.methods[method as usize].sig;
                        if final_method {
                            Op::InvokeDirectNonNull { method, args }
                        } else if matches!(op, Op::InvokeInterfaceCp(_)) {
                            // Even a method of Object's, called through an interface, checks that the
                            // receiver implements it (HotSpot's interpreter does).
                            Op::InvokeInterface { sig, args, iface: class }
                        } else if let Some(vindex) = self.methods[method as usize].vindex {
                            Op::InvokeVirtual { vindex, args }
                        } else {
                            Op::InvokeInterface { sig, args, iface: class }
                        }
                    }
                }
            }
            Op::NewCp(i) => {
                let c = self.resolve_class_of(t, owner, ob, i)?;
                let cl = &self.classes[c as usize];
                if cl.access & (access::ABSTRACT | access::INTERFACE) != 0 {
                    let name = cl.java_name();
                    return Err(self.throw_new(t, "java/lang/InstantiationError", Some(&name)));
                }
                self.initialize(t, c)?;
                permanent = self.classes[c as usize].init.get() == InitState::Initialized;
                Op::New(c)
            }
            Op::ANewArrayCp(i) => {
                let c = self.resolve_class_of(t, owner, ob, i)?;
                Op::ANewArray(self.array_class_or_throw(t, c)?)
            }
            Op::InvokeDynamicCp(i) => self.with_pool_of(owner, ob, |vm| vm.link_call_site(t, owner, i))?,
            Op::CheckCastCp(i) => Op::CheckCast(self.resolve_class_of(t, owner, ob, i)?),
            Op::InstanceOfCp(i) => Op::InstanceOf(self.resolve_class_of(t, owner, ob, i)?),
            other => return Ok(other),
        };
        if permanent {
            code.ops[at].set(quick);
            // `aload; getfield` becomes one op in the load's slot (see ops::fuse).
            if let (Some(prev), Op::GetField(slot) | Op::GetField2(slot)) =
                (at.checked_sub(1).map(|p| &code.ops[p]), quick)
            {
                if let Op::Load(local) = prev.get() {
                    prev.set(if matches!(quick, Op::GetField(_)) {
                        Op::LoadGetField { local, slot }
                    } else {
                        Op::LoadGetField2 { local, slot }
                    });
                }
            }
        }
        Ok(quick)
    }

    /// The class named by a member reference's `class` part.
    pub(super) fn resolve_class_member_owner(
        &mut self,
        t: &mut JThread,
        owner: ClassId,
        obsolete: Option<&Rc<Obsolete>>,
        member_cp: u16,
    ) -> VmResult<ClassId> {
        let file = match obsolete {
            Some(o) => o.file.clone(),
            None => self.classes[owner as usize].file.clone().expect("loaded class"),
        };
        let class_index = match file.constant_pool.get(member_cp) {
            Some(
                Constant::FieldRef { class, .. }
                | Constant::MethodRef { class, .. }
                | Constant::InterfaceMethodRef { class, .. },
            ) => *class,
            _ => return Err(Fault::Fatal(VmError::Internal("member reference expected".into()))),
        };
        self.resolve_class_of(t, owner, obsolete, class_index)
    }

    /// Runs `f` (linking a call site or a constant of `owner`'s code) against the old constant pool
    /// of obsolete code: the class's pool, resolved classes and linked constants are the old
    /// ones meanwhile, and what `f` linked of the old pool is not kept for the new one. (Code of
    /// the class that a bootstrap method runs meanwhile would quicken against the old pool: the
    /// VM links lambdas, string concatenation and records itself, without such code.)
    pub(super) fn with_pool_of<R>(
        &mut self,
        owner: ClassId,
        obsolete: Option<&Rc<Obsolete>>,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let Some(o) = obsolete else { return f(self) };
        let class = &mut self.classes[owner as usize];
        let file = class.file.replace(o.file.clone());
        let refs = std::mem::replace(&mut class.class_refs, o.class_refs.iter().map(|c| Cell::new(c.get())).collect());
        let linked: Vec<_> =
            self.linked_constants.iter().filter(|(k, _)| k.0 == owner).map(|(k, v)| (*k, *v)).collect();
        self.linked_constants.retain(|k, _| k.0 != owner);
        let r = f(self);
        self.linked_constants.retain(|k, _| k.0 != owner);
        self.linked_constants.extend(linked);
        let class = &mut self.classes[owner as usize];
        for (kept, now) in o.class_refs.iter().zip(class.class_refs.iter()) {
            kept.set(now.get());
        }
        class.file = file;
        class.class_refs = refs;
        r
    }

    /// Resolves a Class constant of code of `owner`: of its current constant pool, or of the old
    /// one an obsolete method's code names (cached in that code's own table).
    pub(super) fn resolve_class_of(
        &mut self,
        t: &mut JThread,
        owner: ClassId,
        obsolete: Option<&Rc<Obsolete>>,
        cp: u16,
    ) -> VmResult<ClassId> {
        let Some(o) = obsolete else { return self.resolve_class_in(t, owner, cp) };
        if let Some(c) = o.class_refs.get(cp as usize).map(|c| c.get()).filter(|&c| c != ClassId::MAX) {
            return Ok(c);
        }
        let name = o.file.constant_pool.class_name(cp).map_err(|e| VmError::Internal(e.to_string()))?.clone();
        let loader = self.classes[owner as usize].loader;
        let id = self.load_from(t, loader, &name)?;
        if let Some(c) = o.class_refs.get(cp as usize) {
            c.set(id);
        }
        Ok(id)
    }

    pub(super) fn pretty_method(&self, class: &str, name: &str, descriptor: &str) -> String {
        use crate::classfile::descriptor::MethodDescriptor;
        let pretty = |d: &str| -> String {
            let dims = d.bytes().take_while(|&b| b == b'[').count();
            let base = &d[dims..];
            let name = match base.as_bytes().first() {
                Some(b'L') => base[1..base.len() - 1].replace('/', "."),
                Some(&c) => super::loader::PRIMITIVES
                    .iter()
                    .find(|p| p.1 as u8 == c)
                    .map(|p| p.0.to_string())
                    .unwrap_or_default(),
                None => String::new(),
            };
            format!("{name}{}", "[]".repeat(dims))
        };
        match MethodDescriptor::parse(descriptor) {
            Some(d) => format!(
                "{} {class}.{name}({})",
                pretty(&d.return_type),
                d.param_types.iter().map(|p| pretty(p)).collect::<Vec<_>>().join(", ")
            ),
            None => format!("{class}.{name}{descriptor}"),
        }
    }

    /// Entering a method that has no decoded code yet, or is native, abstract or synchronized.
    /// Returns the code to run and the monitor its frame holds, or None when a native already ran
    /// and left its result on the caller's stack.
    pub(super) fn enter_slow(
        &mut self,
        t: &mut JThread,
        m: MethodId,
        args_at: usize,
        nargs: usize,
    ) -> VmResult<Option<(Rc<Code>, Ref)>> {
        let method = &self.methods[m as usize];
        if method.is_abstract() {
            let receiver = t.stack.get(args_at).map(|&r| r as super::heap::Ref).filter(|&r| r != 0 && nargs > 0);
            let receiver = receiver.map(|r| self.heap.get(r).class);
            return Err(self.abstract_method_error(t, m, receiver));
        }
        let monitor = if method.is_synchronized() {
            let obj = if method.is_static() { self.mirror(method.class) } else { t.stack[args_at] as Ref };
            if let Err(f) = self.enter_or_block(t, obj) {
                if matches!(f, Fault::Yield) {
                    // Blocked: run the invoke again when the monitor is free.
                    let caller = t.frames.last_mut().expect("a caller frame");
                    caller.pc -= 1;
                }
                return Err(f);
            }
            obj
        } else {
            0
        };
        let method = &self.methods[m as usize];
        if method.is_native() {
            let ret_slots = method.parsed.ret.slots();
            let result = self.call_native(t, m, args_at, nargs);
            if monitor != 0 {
                self.exit_monitor(t, monitor);
            }
            return match result {
                Ok(v) => {
                    t.stack[args_at] = v;
                    t.frames.last_mut().expect("a caller frame").sp = (args_at + ret_slots) as u32;
                    Ok(None)
                }
                Err(Fault::Yield) if std::mem::take(&mut self.retry_native) => {
                    // Waiting for a descriptor: the invoke runs again, its arguments still on the stack.
                    t.frames.last_mut().expect("a caller frame").pc -= 1;
                    Err(Fault::Yield)
                }
                Err(Fault::Yield) => {
                    // A blocking native (wait, sleep, park: all void) has done its part; the thread
                    // resumes after the call.
                    t.frames.last_mut().expect("a caller frame").sp = args_at as u32;
                    Err(Fault::Yield)
                }
                Err(f) => Err(f),
            };
        }
        match self.code_of(t, m) {
            Ok(code) => Ok(Some((code, monitor))),
            Err(f) => {
                if monitor != 0 {
                    self.exit_monitor(t, monitor);
                }
                Err(f)
            }
        }
    }

    /// The handler in frame `f` that catches `exception` at op `at`, if any.
    pub(super) fn find_handler(
        &mut self,
        t: &mut JThread,
        f: &Frame,
        at: u32,
        exception: Ref,
    ) -> VmResult<Option<u32>> {
        let ec = self.heap.get(exception).class;
        let owner = self.methods[f.method as usize].class;
        for h in f.code.handlers.iter() {
            if at < h.start || at >= h.end {
                continue;
            }
            if h.catch_type == 0 {
                return Ok(Some(h.handler));
            }
            // Resolving a catch type may run a class loader's Java code, which allocates and can
            // collect, while the exception in flight is in no frame: pin it meanwhile.
            let obsolete = f.code.obsolete.get();
            let catch = match self.pinning(&[exception], |vm| vm.resolve_class_of(t, owner, obsolete, h.catch_type)) {
                Ok(c) => c,
                Err(Fault::Exception(_)) => continue,
                Err(other) => return Err(other),
            };
            if self.is_subtype(ec, catch) {
                return Ok(Some(h.handler));
            }
        }
        Ok(None)
    }

    pub(super) fn primitive_array_class(&mut self, atype: u8) -> VmResult<ClassId> {
        let elem = Elem::from_atype(atype).ok_or_else(|| VmError::Internal(format!("newarray type {atype}")))?;
        let name = format!("[{}", elem.descriptor());
        match self.load_class(&name) {
            Ok(c) => Ok(c),
            Err(LoadError::NotFound(n)) => Err(Fault::Fatal(VmError::Internal(format!("array class {n}")))),
            Err(LoadError::Fatal(e)) => Err(Fault::Fatal(e)),
        }
    }

    pub(crate) fn array_class_or_throw(&mut self, t: &mut JThread, component: ClassId) -> VmResult<ClassId> {
        match self.array_class_of(component) {
            Ok(c) => Ok(c),
            Err(LoadError::NotFound(n)) => Err(self.throw_new(t, "java/lang/NoClassDefFoundError", Some(&n))),
            Err(LoadError::Fatal(e)) => Err(Fault::Fatal(e)),
        }
    }

    /// Allocates an array, throwing OutOfMemoryError past the heap cap.
    pub(crate) fn new_array_checked(&mut self, t: &mut JThread, class: ClassId, len: usize) -> VmResult<Ref> {
        let elem = match self.classes[class as usize].kind {
            ClassKind::Array { elem, .. } => elem,
            _ => Elem::Ref,
        };
        let bytes = 16 + len as u64 * elem.size() as u64;
        if bytes > self.opts.limits.max_heap_bytes {
            return Err(self.throw_oom(t, "Requested array size exceeds VM limit"));
        }
        if self.heap.live_bytes + bytes > self.opts.limits.max_heap_bytes
            || self.heap.allocated_since_gc >= self.opts.gc_interval_bytes
        {
            self.make_room(t, bytes)?;
        }
        Ok(self.heap.alloc(class, ObjData::new_array(elem, len)))
    }

    /// Collects, then throws OutOfMemoryError if `bytes` more would still exceed the heap cap.
    pub(super) fn make_room(&mut self, t: &mut JThread, bytes: u64) -> VmResult<()> {
        self.collect_garbage(t)?;
        if self.heap.live_bytes + bytes > self.opts.limits.max_heap_bytes {
            // As HotSpot: one more collection, clearing every soft reference, before giving up.
            self.collect_garbage_clearing_soft_references(t)?;
        }
        if self.heap.live_bytes + bytes > self.opts.limits.max_heap_bytes {
            return Err(self.throw_oom(t, "Java heap space"));
        }
        Ok(())
    }

    pub(super) fn multi_new_array(&mut self, t: &mut JThread, class: ClassId, counts: &[i32]) -> VmResult<Ref> {
        let arr = self.new_array_checked(t, class, counts[0] as usize)?;
        if counts.len() > 1 {
            let ClassKind::Array { component, .. } = self.classes[class as usize].kind else {
                return Err(Fault::Fatal(VmError::Internal("multianewarray of a non-array class".into())));
            };
            self.pinned.push(arr);
            for i in 0..counts[0] as usize {
                let sub = match self.multi_new_array(t, component, &counts[1..]) {
                    Ok(s) => s,
                    Err(f) => {
                        self.pinned.pop();
                        return Err(f);
                    }
                };
                if let ObjData::Refs(v) = &mut self.heap.get_mut(arr).data {
                    v[i] = sub;
                }
            }
            self.pinned.pop();
        }
        Ok(arr)
    }
}

//! Method handles and dynamic linkage, as HotSpot provides them to the JDK's `java.lang.invoke`:
//!
//! - calls to `MethodHandle.invokeBasic` and `MethodHandle.linkTo{Static,Special,Virtual,Interface}`
//!   (the lambda forms the JDK generates are made of them) become the interpreter's
//!   `InvokeBasic`/`LinkTo` ops, which find their target through the handle's form and the
//!   `MemberName`'s hidden target (see natives/invoke.rs);
//! - `invokeExact`/`invoke` call sites are linked once through the upcall
//!   `MethodHandleNatives.linkMethod`, which answers an invoker method and an appendix (the call
//!   site's type) that the `InvokeHandle` op passes after the arguments;
//! - `invokedynamic` with a bootstrap method the VM does not link itself (see indy.rs), through
//!   `MethodHandleNatives.linkCallSite`: the JDK runs the bootstrap method and answers an invoker
//!   and the call site as appendix;
//! - `ldc` of `MethodHandle`, `MethodType` and dynamic constants, through
//!   `linkMethodHandleConstant`, `findMethodHandleType` and `linkDynamicConstant`.
//!
//! Linking is the JVM's work, so the upcalls run unobserved; the bootstrap method's result and
//! every linked constant stay reachable for the rest of the run (extra GC roots), as call sites
//! and resolved constants do in HotSpot.

use super::class::{ClassId, MethodId};
use super::heap::{ObjData, Ref};
use super::natives::invoke::REF_INVOKE_VIRTUAL;
use super::ops::Op;
use super::{Fault, JThread, Tracker, Vm, VmError, VmResult};
use crate::classfile::descriptor::{field_kind, Kind, MethodDescriptor};
use crate::classfile::Constant;

const MHN: &str = "java/lang/invoke/MethodHandleNatives";

/// How a `LinkTo` op selects its target from the `MemberName`'s method.
pub mod dispatch {
    pub const DIRECT: u8 = 0;
    pub const VIRTUAL: u8 = 1;
    pub const INTERFACE: u8 = 2;
}

impl<T: Tracker> Vm<T> {
    /// The op for a call from `owner` to the signature-polymorphic `MethodHandle.<name><desc>`.
    pub(super) fn link_polymorphic(&mut self, t: &mut JThread, owner: ClassId, name: &str, desc: &str) -> VmResult<Op> {
        let parsed = MethodDescriptor::parse(desc)
            .ok_or_else(|| Fault::Fatal(VmError::Internal(format!("descriptor {desc}"))))?;
        let slots = parsed.param_slots() as u16;
        Ok(match name {
            "invokeBasic" => Op::InvokeBasic { args: slots + 1 },
            "linkToStatic" | "linkToSpecial" => Op::LinkTo { dispatch: dispatch::DIRECT, args: slots },
            "linkToVirtual" => Op::LinkTo { dispatch: dispatch::VIRTUAL, args: slots },
            "linkToInterface" => Op::LinkTo { dispatch: dispatch::INTERFACE, args: slots },
            "invokeExact" | "invoke" => {
                let mark = self.pinned.len();
                let r = self.link_invoker(t, owner, name, desc, slots + 1);
                self.pinned.truncate(mark);
                r?
            }
            other => {
                return Err(Fault::Fatal(VmError::Unsupported(format!(
                    "signature-polymorphic call MethodHandle.{other}{desc}"
                ))))
            }
        })
    }

    /// `MethodHandleNatives.linkMethod` for an `invokeExact`/`invoke` site.
    fn link_invoker(&mut self, t: &mut JThread, owner: ClassId, name: &str, desc: &str, args: u16) -> VmResult<Op> {
        let (member, appendix) = self.link_method(t, owner, "java/lang/invoke/MethodHandle", name, desc)?;
        self.invoker_op(t, member, appendix, args)
    }

    /// A `VarHandle` access-mode call site linked as HotSpot links every one: the JDK's invoker for
    /// the access mode and the site's type, and its appendix (kept alive for the rest of the run).
    pub(super) fn link_varhandle_site(
        &mut self,
        t: &mut JThread,
        owner: ClassId,
        name: &str,
        desc: &str,
        args: u16,
    ) -> VmResult<(MethodId, Ref)> {
        let mark = self.pinned.len();
        let linked = self.link_method(t, owner, "java/lang/invoke/VarHandle", name, desc);
        self.pinned.truncate(mark);
        let (member, appendix_box) = linked?;
        match self.invoker_op(t, member, appendix_box, args)? {
            Op::InvokeHandle { invoker, appendix, .. } => Ok((invoker, appendix)),
            Op::InvokeDirect { method, .. } => Ok((method, 0)),
            _ => Err(Fault::Fatal(VmError::Internal(format!("VarHandle.{name}{desc} linked to no invoker")))),
        }
    }

    /// The upcall `MethodHandleNatives.linkMethod(caller, REF_invokeVirtual, defc, name, type,
    /// appendix[])`: the invoker's `MemberName` and the one-element box of its appendix.
    fn link_method(
        &mut self,
        t: &mut JThread,
        owner: ClassId,
        defc: &str,
        name: &str,
        desc: &str,
    ) -> VmResult<(Ref, Ref)> {
        let caller = self.mirror(owner);
        let defc = self.load_or_throw(t, defc)?;
        let defc = self.mirror(defc);
        let name = self.intern_str(name);
        self.pinned.push(name);
        let ty = self.method_type(t, owner, desc)?;
        let appendix = self.new_object_array(t, 1)?;
        let m = self.mhn_method("linkMethod")?;
        let member = self.upcall(
            t,
            m,
            &[caller as u64, REF_INVOKE_VIRTUAL as u64, defc as u64, name as u64, ty as u64, appendix as u64],
        )?;
        Ok((member as Ref, appendix))
    }

    /// The op that calls a linked invoker with the appendix the JDK answered, if any.
    fn invoker_op(&mut self, t: &mut JThread, member: Ref, appendix_box: Ref, args: u16) -> VmResult<Op> {
        if member == 0 {
            return Err(self.throw_npe(t));
        }
        let invoker = self
            .member_target(member)
            .ok_or_else(|| Fault::Fatal(VmError::Internal("linked invoker is not resolved".into())))?;
        let appendix = match &self.heap.get(appendix_box).data {
            ObjData::Refs(a) => a[0],
            _ => 0,
        };
        let class = self.methods[invoker as usize].class;
        self.initialize(t, class)?;
        let expected = args + u16::from(appendix != 0);
        if self.methods[invoker as usize].arg_slots != expected || !self.methods[invoker as usize].is_static() {
            return Err(Fault::Fatal(VmError::Internal(format!(
                "invoker {} for a call passing {expected} slots",
                self.method_name(invoker)
            ))));
        }
        if appendix == 0 {
            return Ok(Op::InvokeDirect { method: invoker, args });
        }
        self.extra_roots.push(appendix);
        Ok(Op::InvokeHandle { invoker, appendix, args })
    }

    /// Links an `invokedynamic` whose bootstrap method the JDK runs (`MethodHandleNatives.linkCallSite`).
    pub(super) fn link_dynamic_call_site(&mut self, t: &mut JThread, owner: ClassId, cp_index: u16) -> VmResult<Op> {
        let mark = self.pinned.len();
        let r = self.link_dynamic_call_site_pinned(t, owner, cp_index);
        self.pinned.truncate(mark);
        r
    }

    fn link_dynamic_call_site_pinned(&mut self, t: &mut JThread, owner: ClassId, cp_index: u16) -> VmResult<Op> {
        let file = self.classes[owner as usize].file.clone().expect("code belongs to loaded classes");
        let cp = &file.constant_pool;
        let bad = |e: String| Fault::Fatal(VmError::Internal(format!("invokedynamic: {e}")));
        let Some(Constant::InvokeDynamic { bootstrap, name_and_type }) = cp.get(cp_index) else {
            return Err(bad(format!("constant #{cp_index}")));
        };
        let (name, desc) = cp.name_and_type(*name_and_type).map_err(bad)?;
        let parsed = MethodDescriptor::parse(desc).ok_or_else(|| bad(format!("descriptor {desc}")))?;
        let (bsm, static_args) = self.bootstrap_arguments(t, owner, *bootstrap)?;
        let name = self.intern_str(name);
        self.pinned.push(name);
        let ty = self.method_type(t, owner, desc)?;
        let appendix = self.new_object_array(t, 1)?;
        let caller = self.mirror(owner);
        let m = self.mhn_method("linkCallSite")?;
        let mut args = vec![caller as u64];
        if self.methods[m as usize].parsed.params.len() == 7 {
            args.push(cp_index as u64); // JDK 17: the index, for tracing only
        }
        args.extend([bsm as u64, name as u64, ty as u64, static_args as u64, appendix as u64]);
        let member = self.upcall(t, m, &args)?;
        self.invoker_op(t, member as Ref, appendix, parsed.param_slots() as u16)
    }

    /// The bootstrap method handle and its static arguments (an `Object[]`, pinned).
    fn bootstrap_arguments(&mut self, t: &mut JThread, owner: ClassId, bootstrap: u16) -> VmResult<(Ref, Ref)> {
        let file = self.classes[owner as usize].file.clone().expect("code belongs to loaded classes");
        let bsm = file
            .bootstrap_methods
            .get(bootstrap as usize)
            .ok_or_else(|| Fault::Fatal(VmError::Internal(format!("no bootstrap method #{bootstrap}"))))?;
        let handle = self.constant_object(t, owner, bsm.method_handle)?;
        self.pinned.push(handle);
        let mut values = Vec::with_capacity(bsm.arguments.len());
        for &a in &bsm.arguments {
            let v = self.constant_object(t, owner, a)?;
            self.pinned.push(v);
            values.push(v);
        }
        let class = self.load_or_throw(t, "[Ljava/lang/Object;")?;
        let array = self.heap.alloc(class, ObjData::Refs(values.into()));
        self.pinned.push(array);
        Ok((handle, array))
    }

    /// A loadable constant as an object: boxed numbers, strings, classes, method types and
    /// handles, dynamic constants (boxed when primitive).
    fn constant_object(&mut self, t: &mut JThread, owner: ClassId, index: u16) -> VmResult<Ref> {
        let file = self.classes[owner as usize].file.clone().expect("loaded class");
        let cp = &file.constant_pool;
        let bad = |e: String| Fault::Fatal(VmError::Internal(format!("constant pool: {e}")));
        Ok(match cp.get(index) {
            Some(Constant::Integer(v)) => self.box_value(t, Kind::Int, *v as u32 as u64)?,
            Some(Constant::Float(v)) => self.box_value(t, Kind::Float, v.to_bits() as u64)?,
            Some(Constant::Long(v)) => self.box_value(t, Kind::Long, *v as u64)?,
            Some(Constant::Double(v)) => self.box_value(t, Kind::Double, v.to_bits())?,
            Some(Constant::String { utf8 }) => {
                let units = cp.utf16(*utf8).map_err(bad)?;
                self.intern_utf16(units.into())
            }
            Some(Constant::Class { .. }) => {
                let c = self.resolve_class_in(t, owner, index)?;
                self.mirror(c)
            }
            Some(Constant::MethodType { .. } | Constant::MethodHandle { .. } | Constant::Dynamic { .. }) => {
                let (value, kind) = self.linked_constant(t, owner, index)?;
                match kind {
                    Kind::Reference => value as Ref,
                    k => self.box_value(t, k, value)?,
                }
            }
            other => return Err(bad(format!("loadable constant {other:?}"))),
        })
    }

    /// A `MethodType`, `MethodHandle` or dynamic constant of `owner`, resolved once per class
    /// and constant: its value in slot form and its kind.
    pub(super) fn linked_constant(&mut self, t: &mut JThread, owner: ClassId, index: u16) -> VmResult<(u64, Kind)> {
        if let Some(&v) = self.linked_constants.get(&(owner, index)) {
            return Ok(v);
        }
        let mark = self.pinned.len();
        let r = self.link_constant(t, owner, index);
        self.pinned.truncate(mark);
        let v = r?;
        if v.1 == Kind::Reference && v.0 != 0 {
            self.extra_roots.push(v.0 as Ref);
        }
        self.linked_constants.insert((owner, index), v);
        Ok(v)
    }

    fn link_constant(&mut self, t: &mut JThread, owner: ClassId, index: u16) -> VmResult<(u64, Kind)> {
        let file = self.classes[owner as usize].file.clone().expect("loaded class");
        let cp = &file.constant_pool;
        let bad = |e: String| Fault::Fatal(VmError::Internal(format!("constant pool: {e}")));
        match cp.get(index) {
            Some(Constant::MethodType { descriptor }) => {
                let desc = cp.utf8(*descriptor).map_err(bad)?.clone();
                Ok((self.method_type(t, owner, &desc)? as u64, Kind::Reference))
            }
            Some(Constant::MethodHandle { kind, reference }) => {
                let r = cp.member_ref(*reference).map_err(bad)?;
                let defc = self.resolve_class_member_owner(t, owner, None, *reference)?;
                let defc = self.mirror(defc);
                let ty = if (*kind as u32) < REF_INVOKE_VIRTUAL {
                    let c = self.type_mirror(t, owner, &r.descriptor)?;
                    self.pinned.push(c);
                    c
                } else {
                    self.method_type(t, owner, &r.descriptor)?
                };
                let name = self.intern_str(&r.name);
                self.pinned.push(name);
                let caller = self.mirror(owner);
                let m = self.mhn_method("linkMethodHandleConstant")?;
                let args = [caller as u64, *kind as u64, defc as u64, name as u64, ty as u64];
                Ok((self.upcall(t, m, &args)?, Kind::Reference))
            }
            Some(Constant::Dynamic { bootstrap, name_and_type }) => {
                let (name, desc) = cp.name_and_type(*name_and_type).map_err(bad)?;
                let kind = field_kind(desc);
                let (bsm, static_args) = self.bootstrap_arguments(t, owner, *bootstrap)?;
                let name = self.intern_str(name);
                self.pinned.push(name);
                let ty = self.type_mirror(t, owner, desc)?;
                self.pinned.push(ty);
                let caller = self.mirror(owner);
                let m = self.mhn_method("linkDynamicConstant")?;
                let mut args = vec![caller as u64];
                if self.methods[m as usize].parsed.params.len() == 6 {
                    args.push(index as u64); // JDK 17: the index, for tracing only
                }
                args.extend([bsm as u64, name as u64, ty as u64, static_args as u64]);
                let value = self.upcall(t, m, &args)? as Ref;
                if kind == Kind::Reference {
                    return Ok((value as u64, kind));
                }
                // A primitive constant comes back boxed.
                if value == 0 {
                    return Err(self.throw_npe(t));
                }
                Ok((self.get_named(value, "value"), kind))
            }
            other => Err(bad(format!("linked constant {other:?}"))),
        }
    }

    /// `MethodType` for a method descriptor, its classes resolved as `owner` sees them (pinned).
    fn method_type(&mut self, t: &mut JThread, owner: ClassId, desc: &str) -> VmResult<Ref> {
        let parsed = MethodDescriptor::parse(desc)
            .ok_or_else(|| Fault::Fatal(VmError::Internal(format!("descriptor {desc}"))))?;
        let rtype = self.type_mirror(t, owner, &parsed.return_type)?;
        self.pinned.push(rtype);
        let params: Vec<String> = parsed.param_types.iter().map(|p| p.to_string()).collect();
        let ptypes = self.type_mirrors(t, owner, &params)?;
        self.pinned.push(ptypes);
        let m = self.mhn_method("findMethodHandleType")?;
        let ty = self.upcall(t, m, &[rtype as u64, ptypes as u64])? as Ref;
        self.pinned.push(ty);
        Ok(ty)
    }

    fn new_object_array(&mut self, t: &mut JThread, len: usize) -> VmResult<Ref> {
        let class = self.load_or_throw(t, "[Ljava/lang/Object;")?;
        let array = self.heap.alloc(class, ObjData::Refs(vec![0; len].into()));
        self.pinned.push(array);
        Ok(array)
    }

    /// A static method of MethodHandleNatives by name (its descriptor differs between JDKs).
    fn mhn_method(&mut self, name: &str) -> VmResult<MethodId> {
        let c = self.load_class(MHN).map_err(|_| VmError::Internal(format!("{MHN} is missing")))?;
        self.classes[c as usize]
            .methods
            .iter()
            .copied()
            .find(|&m| &*self.methods[m as usize].name == name && self.methods[m as usize].is_static())
            .ok_or_else(|| Fault::Fatal(VmError::Internal(format!("{MHN}.{name} is missing"))))
    }

    /// Runs a linkage upcall: the JVM's work, unseen by the trackers.
    fn upcall(&mut self, t: &mut JThread, m: MethodId, args: &[u64]) -> VmResult<u64> {
        let class = self.methods[m as usize].class;
        self.initialize(t, class)?;
        self.unobserved(|vm| vm.invoke(t, m, args))
    }

    /// The method a `LinkTo` op calls for `member`'s target on `receiver_class` (virtual and
    /// interface dispatch select the receiver's implementation), or None when the receiver's
    /// class does not implement it.
    #[inline]
    pub(super) fn link_to_target(&self, target: MethodId, how: u8, receiver_class: ClassId) -> Option<MethodId> {
        let m = &self.methods[target as usize];
        if how == dispatch::DIRECT || m.is_private() {
            return Some(target);
        }
        let class = &self.classes[receiver_class as usize];
        match m.vindex {
            Some(v) if how == dispatch::VIRTUAL && !self.classes[m.class as usize].is_interface() => {
                class.vtable.get(v as usize).copied()
            }
            _ => class.dispatch.get(&m.sig).copied(),
        }
    }

    /// The target of `invokeBasic` on handle `mh`: the method of its form's entry.
    #[inline]
    pub(super) fn basic_target(&self, mh: Ref) -> Option<MethodId> {
        let field = |r: Ref, slot: u32| match &self.heap.get(r).data {
            ObjData::Fields(f) => f.get(slot as usize).copied().unwrap_or(0) as Ref,
            _ => 0,
        };
        let form = field(mh, self.wk.invoke.handle_form);
        if form == 0 {
            return None;
        }
        let entry = field(form, self.wk.invoke.form_vmentry);
        if entry == 0 {
            return None;
        }
        self.member_target(entry)
    }

    /// A `LinkTo` op whose target the receiver does not answer to: HotSpot's errors.
    pub(super) fn link_to_error(&mut self, t: &mut JThread, target: MethodId, receiver_class: ClassId) -> Fault {
        let name = self.classes[receiver_class as usize].java_name();
        if self.classes[self.methods[target as usize].class as usize].is_interface() {
            let msg = format!("Receiver class {name} does not implement the interface method being invoked");
            return self.throw_new(t, "java/lang/IncompatibleClassChangeError", Some(&msg));
        }
        let msg = self.method_name(target);
        self.throw_new(t, "java/lang/AbstractMethodError", Some(&msg))
    }
}

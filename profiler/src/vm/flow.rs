//! Value flow: what each op does to values, told to a tracker with `FLOW = true`.
//!
//! The interpreter calls [`Vm::track_op`] before it runs an op (only when `T::FLOW`, so the plain
//! loop has no trace of this module). The op's effect is read off the operand stack as it is
//! before the op: which slots it reads, which slot receives its result, which heap location it
//! loads or stores and the value involved. An op that then throws leaves shadows that the
//! exception handler's fresh stack overwrites.
//!
//! Calls are handled in [`Vm::track_call`] (reference arguments and the receiver), natives in
//! [`Vm::track_native`] (a native consumes its arguments and produces a new value; `Unsafe`'s
//! reference loads and stores are heap loads and stores, [`Vm::track_unsafe_reference`]),
//! allocations by the interpreter's `on_alloc`, bulk copies by the natives that do them.

use super::class::{ClassId, MethodId};
use super::heap::{Heap, ObjData, Ref};
use super::ops::Op;
use super::tracker::{Alloc, Context, HeapLoc, RefPass, RefUse, Sink, Site, Value};
use super::{JThread, Tracker, Vm};
use crate::classfile::descriptor::Kind;

impl<T: Tracker> Vm<T> {
    /// Reports the value flow of `op` at `pc` in `mid`, whose locals start at `lp`, with the
    /// operand stack's top at `sp`.
    #[inline(always)]
    pub(super) fn track_op(&mut self, t: &JThread, op: Op, mid: MethodId, pc: usize, lp: usize, sp: usize) {
        let site = Site { method: mid, pc: pc as u32 };
        // The sites of the second and third ops a superinstruction stands for.
        let next = Site { method: mid, pc: pc as u32 + 1 };
        let after_next = Site { method: mid, pc: pc as u32 + 2 };
        let s = &t.stack;
        let cx = Context { frames: &t.frames, methods: &self.methods, classes: &self.classes };
        let tr = &mut self.tracker;
        // An object used by this frame, unless the frame is a constructor of that very object.
        let in_own_constructor = |obj: Ref| -> bool {
            let m = &cx.methods[mid as usize];
            &*m.name == "<init>" && s[lp] as Ref == obj
        };
        // A branch consumes its operands.
        macro_rules! consume {
            ($($slot:expr),*) => {
                tr.flow_consume(site, &[$($slot),*], Sink::Branch)
            };
        }
        // A computation consumes its operands and leaves its result at `at`.
        macro_rules! compute {
            ($at:expr, [$($slot:expr),*]) => {
                tr.flow_compute(site, &[$($slot),*], Some($at))
            };
        }
        // The reference in slot `$slot` is dereferenced; a use of its object.
        macro_rules! use_obj {
            ($slot:expr, $how:expr) => {{
                let slot = $slot;
                tr.flow_deref(site, slot);
                let obj = s[slot] as Ref;
                if obj != 0 && !in_own_constructor(obj) {
                    tr.flow_use(&cx, site, obj, $how);
                }
            }};
        }
        // `getfield` at `$at` of field slot `$slot` of `$obj`, whose reference is in stack slot
        // `$base` (one-slot value when `$narrow`), result to `$dst`.
        macro_rules! field_load {
            ($at:expr, $base:expr, $obj:expr, $slot:expr, $narrow:expr, $dst:expr) => {{
                let (slot, at) = ($slot, $at);
                tr.flow_deref(at, $base);
                let obj = $obj as Ref;
                if obj != 0 {
                    if !in_own_constructor(obj) {
                        tr.flow_use(&cx, at, obj, RefUse::Access);
                    }
                    let o = self.heap.get(obj);
                    let value = match &o.data {
                        ObjData::Fields(f) => f[slot as usize],
                        _ => 0,
                    };
                    let is_ref = $narrow && cx.classes[o.class as usize].ref_slots.binary_search(&slot).is_ok();
                    tr.flow_load(&cx, at, HeapLoc::Field { obj, slot }, Value { bits: value, is_ref }, $dst);
                }
            }};
        }
        match op {
            Op::AconstNull
            | Op::Iconst(_)
            | Op::Lconst(_)
            | Op::Fconst(_)
            | Op::Dconst(_)
            | Op::LdcRef(_)
            | Op::Jsr(_) => tr.flow_const(site, sp),
            Op::Load(n) | Op::Load2(n) => tr.flow_move(site, lp + n as usize, sp),
            Op::Store(n) => tr.flow_move(site, sp - 1, lp + n as usize),
            Op::Store2(n) => tr.flow_move(site, sp - 2, lp + n as usize),
            Op::Iinc(n, _) => compute!(lp + n as usize, [lp + n as usize]),

            Op::Iaload | Op::Laload | Op::Faload | Op::Daload | Op::Aaload | Op::Baload | Op::Caload | Op::Saload => {
                let (array, index) = (s[sp - 2] as Ref, s[sp - 1] as i32);
                use_obj!(sp - 2, RefUse::Access);
                if let Some(value) = heap_element(&self.heap, array, index) {
                    let loc = HeapLoc::Element { array, index: index as u32 };
                    tr.flow_load(&cx, site, loc, Value { bits: value, is_ref: op == Op::Aaload }, sp - 2);
                }
            }
            Op::Iastore
            | Op::Lastore
            | Op::Fastore
            | Op::Dastore
            | Op::Aastore
            | Op::Bastore
            | Op::Castore
            | Op::Sastore => {
                let wide = matches!(op, Op::Lastore | Op::Dastore);
                let src = sp - if wide { 2 } else { 1 };
                let (array, index) = (s[src - 2] as Ref, s[src - 1] as i32);
                use_obj!(src - 2, RefUse::Access);
                let in_bounds =
                    array != 0 && self.heap.get(array).data.array_len().is_some_and(|n| (index as u32 as usize) < n);
                if in_bounds {
                    let bytes = match op {
                        Op::Bastore => 1,
                        Op::Castore | Op::Sastore => 2,
                        Op::Lastore | Op::Dastore => 8,
                        _ => 4,
                    };
                    let loc = HeapLoc::Element { array, index: index as u32 };
                    tr.flow_store(&cx, site, loc, Value { bits: s[src], is_ref: op == Op::Aastore }, bytes, src);
                }
            }

            Op::Dup => tr.flow_move(site, sp - 1, sp),
            Op::DupX1 => tr.flow_shuffle(sp - 2, &[sp - 1, sp - 2, sp - 1]),
            Op::DupX2 => tr.flow_shuffle(sp - 3, &[sp - 1, sp - 3, sp - 2, sp - 1]),
            Op::Dup2 => tr.flow_shuffle(sp - 2, &[sp - 2, sp - 1, sp - 2, sp - 1]),
            Op::Dup2X1 => tr.flow_shuffle(sp - 3, &[sp - 2, sp - 1, sp - 3, sp - 2, sp - 1]),
            Op::Dup2X2 => tr.flow_shuffle(sp - 4, &[sp - 2, sp - 1, sp - 4, sp - 3, sp - 2, sp - 1]),
            Op::Swap => tr.flow_shuffle(sp - 2, &[sp - 1, sp - 2]),

            // Binary ops on one-slot values, and comparisons of floats.
            Op::Iadd
            | Op::Fadd
            | Op::Isub
            | Op::Fsub
            | Op::Imul
            | Op::Fmul
            | Op::Idiv
            | Op::Fdiv
            | Op::Irem
            | Op::Frem
            | Op::Ishl
            | Op::Ishr
            | Op::Iushr
            | Op::Iand
            | Op::Ior
            | Op::Ixor
            | Op::Fcmpl
            | Op::Fcmpg => compute!(sp - 2, [sp - 2, sp - 1]),
            // Binary ops on two-slot values, and their comparisons.
            Op::Ladd
            | Op::Dadd
            | Op::Lsub
            | Op::Dsub
            | Op::Lmul
            | Op::Dmul
            | Op::Ldiv
            | Op::Ddiv
            | Op::Lrem
            | Op::Drem
            | Op::Land
            | Op::Lor
            | Op::Lxor
            | Op::Lcmp
            | Op::Dcmpl
            | Op::Dcmpg => {
                compute!(sp - 4, [sp - 4, sp - 2])
            }
            // A long shifted by an int.
            Op::Lshl | Op::Lshr | Op::Lushr => compute!(sp - 3, [sp - 3, sp - 1]),
            // Unary ops and conversions: the operand's first slot receives the result.
            Op::Ineg
            | Op::Fneg
            | Op::I2l
            | Op::I2f
            | Op::I2d
            | Op::F2i
            | Op::F2l
            | Op::F2d
            | Op::I2b
            | Op::I2c
            | Op::I2s => compute!(sp - 1, [sp - 1]),
            Op::Lneg | Op::Dneg | Op::L2i | Op::L2f | Op::L2d | Op::D2i | Op::D2l | Op::D2f => {
                compute!(sp - 2, [sp - 2])
            }

            Op::Ifeq(_) | Op::Ifne(_) | Op::Iflt(_) | Op::Ifge(_) | Op::Ifgt(_) | Op::Ifle(_) => consume!(sp - 1),
            Op::TableSwitch(_) | Op::LookupSwitch(_) => consume!(sp - 1),
            Op::IfIcmpeq(_)
            | Op::IfIcmpne(_)
            | Op::IfIcmplt(_)
            | Op::IfIcmpge(_)
            | Op::IfIcmpgt(_)
            | Op::IfIcmple(_) => {
                consume!(sp - 2, sp - 1)
            }
            Op::IfAcmpeq(_) | Op::IfAcmpne(_) => {
                consume!(sp - 2, sp - 1);
                use_obj!(sp - 2, RefUse::Test);
                use_obj!(sp - 1, RefUse::Test);
            }
            // A null test does not need the object: not a use.
            Op::IfNull(_) | Op::IfNonNull(_) => consume!(sp - 1),

            Op::Ireturn | Op::IreturnNarrow(_) | Op::Lreturn => {
                let slots = if op == Op::Lreturn { 2 } else { 1 };
                let method = &cx.methods[mid as usize];
                if method.parsed.ret == Kind::Reference && s[sp - 1] != 0 {
                    tr.flow_pass(&cx, site, s[sp - 1] as Ref, RefPass::Return);
                }
                tr.flow_move(site, sp - slots, lp);
            }

            Op::GetStatic(slot) | Op::GetStatic2(slot) => {
                let is_ref = op == Op::GetStatic(slot) && self.static_ref_slots.binary_search(&slot).is_ok();
                tr.flow_load(
                    &cx,
                    site,
                    HeapLoc::Static { slot },
                    Value { bits: self.statics[slot as usize], is_ref },
                    sp,
                );
            }
            Op::PutStatic(slot) | Op::PutStatic2(slot) | Op::PutStaticNarrow(slot, _) => {
                let wide = op == Op::PutStatic2(slot);
                let src = sp - if wide { 2 } else { 1 };
                let is_ref = op == Op::PutStatic(slot) && self.static_ref_slots.binary_search(&slot).is_ok();
                let bytes = match op {
                    Op::PutStatic2(_) => 8,
                    Op::PutStaticNarrow(_, n) => n.bytes(),
                    _ => 4,
                };
                tr.flow_store(&cx, site, HeapLoc::Static { slot }, Value { bits: s[src], is_ref }, bytes, src);
            }
            Op::GetField(slot) | Op::GetField2(slot) => {
                field_load!(site, sp - 1, s[sp - 1], slot, op == Op::GetField(slot), sp - 1)
            }
            Op::PutField(slot) | Op::PutField2(slot) | Op::PutFieldNarrow(slot, _) => {
                let wide = op == Op::PutField2(slot);
                let src = sp - if wide { 2 } else { 1 };
                let obj = s[src - 1] as Ref;
                use_obj!(src - 1, RefUse::Access);
                if obj != 0 {
                    let class = self.heap.get(obj).class;
                    let is_ref =
                        op == Op::PutField(slot) && cx.classes[class as usize].ref_slots.binary_search(&slot).is_ok();
                    let bytes = match op {
                        Op::PutField2(_) => 8,
                        Op::PutFieldNarrow(_, n) => n.bytes(),
                        _ => 4,
                    };
                    tr.flow_store(&cx, site, HeapLoc::Field { obj, slot }, Value { bits: s[src], is_ref }, bytes, src);
                }
            }

            Op::ArrayLength => {
                use_obj!(sp - 1, RefUse::Access);
                tr.flow_const(site, sp - 1);
            }
            Op::CheckCast(_) => use_obj!(sp - 1, RefUse::Test),
            Op::InstanceOf(_) => {
                use_obj!(sp - 1, RefUse::Test);
                compute!(sp - 1, [sp - 1]);
            }
            // Superinstructions: the flow of the ops they stand for, at those ops' sites.
            Op::LoadLoad(a, b) => {
                tr.flow_move(site, lp + a as usize, sp);
                tr.flow_move(next, lp + b as usize, sp + 1);
            }
            Op::LoadConst(a, _) => {
                tr.flow_move(site, lp + a as usize, sp);
                tr.flow_const(next, sp + 1);
            }
            // The branch consumes the loaded copies; their shadows are the locals'.
            Op::IfCmpLocals { a, b, .. } => {
                tr.flow_consume(after_next, &[lp + a as usize, lp + b as usize], Sink::Branch)
            }
            Op::IfCmpConst { a, .. } => tr.flow_consume(after_next, &[lp + a as usize], Sink::Branch),
            Op::IincGoto { local, .. } => compute!(lp + local as usize, [lp + local as usize]),
            Op::LoadGetField { local, slot } | Op::LoadGetField2 { local, slot } => {
                tr.flow_move(site, lp + local as usize, sp);
                let obj = s[lp + local as usize];
                field_load!(next, sp, obj, slot, matches!(op, Op::LoadGetField { .. }), sp)
            }
            // Allocations are reported by `on_alloc`; calls by `track_call`; the constant-pool
            // forms are quickened and come back here resolved.
            _ => {}
        }
    }

    /// An allocation at `site` whose reference goes to slot `dst` (the interpreter pushes it next).
    #[inline(always)]
    pub(super) fn track_alloc(&mut self, t: &JThread, site: Site, obj: Ref, class: ClassId, lp: usize, dst: usize) {
        let owner = if self.methods[site.method as usize].is_static() { 0 } else { t.stack[lp] as Ref };
        let bytes = self.heap.get(obj).data.size_bytes();
        let cx = Context { frames: &t.frames, methods: &self.methods, classes: &self.classes };
        self.tracker.on_alloc(&cx, &Alloc { site, obj, class, bytes, owner, dst });
    }

    /// A call from `site` to `callee` with its arguments in slots `[at, …)`: the receiver is
    /// used (except by a constructor call), reference arguments are passed on.
    #[inline(never)]
    pub(super) fn track_call(&mut self, t: &JThread, site: Site, callee: MethodId, at: usize, lp: usize) {
        let cx = Context { frames: &t.frames, methods: &self.methods, classes: &self.classes };
        let method = &cx.methods[callee as usize];
        let caller = &cx.methods[site.method as usize];
        let mut slot = at;
        if !method.is_static() {
            self.tracker.flow_deref(site, slot);
            let recv = t.stack[slot] as Ref;
            // A constructor call, or a call on `this` from its own constructor, is not a use.
            let own = &*caller.name == "<init>" && t.stack[lp] as Ref == recv;
            if recv != 0 && &*method.name != "<init>" && !own {
                self.tracker.flow_use(&cx, site, recv, RefUse::Receiver);
            }
            slot += 1;
        }
        for &k in method.parsed.params.iter() {
            if k == Kind::Reference && t.stack[slot] != 0 {
                self.tracker.flow_pass(&cx, site, t.stack[slot] as Ref, RefPass::Argument(callee));
            }
            slot += k.slots();
        }
    }

    /// `Unsafe`'s reference accessors, called from `site` with their arguments at `at` (the
    /// `Unsafe` instance, the holder, the offset, …): how reflection (`Field.get`/`set`),
    /// `VarHandle`s and atomic updaters read and write reference fields, statics and elements. A
    /// store (`putReference`, a `compareAndSet`/`compareAndExchange` that finds the expected
    /// reference) is told now as the `putfield` it stands for; a load's location is returned, to
    /// be told with the reference the native returns ([`Vm::track_unsafe_load`]).
    pub(super) fn track_unsafe_reference(
        &mut self,
        t: &JThread,
        site: Site,
        m: MethodId,
        at: usize,
    ) -> Option<HeapLoc> {
        let method = &self.methods[m as usize];
        if &*self.classes[method.class as usize].name != "jdk/internal/misc/Unsafe" {
            return None;
        }
        let name = method.name.strip_suffix("Volatile").unwrap_or(&method.name);
        // The slot of the reference stored (none for a load); a compare-and-set's expected one
        // is the slot before it.
        let stored = match name {
            "getReference" => None,
            "putReference" => Some(at + 4),
            "compareAndSetReference" | "compareAndExchangeReference" => Some(at + 5),
            _ => return None,
        };
        let (holder, offset) = (t.stack[at + 1] as Ref, t.stack[at + 2] as i64);
        let (loc, current) = super::natives::memory::reference_at(self, holder, offset)?;
        let Some(value_slot) = stored else { return Some(loc) };
        if value_slot == at + 5 && current != t.stack[at + 4] {
            return None;
        }
        let cx = Context { frames: &t.frames, methods: &self.methods, classes: &self.classes };
        let value = Value { bits: t.stack[value_slot], is_ref: true };
        self.tracker.flow_store(&cx, site, loc, value, 4, value_slot);
        None
    }

    /// An `Unsafe` reference load from `loc` at `site` returned `value` into slot `dst`.
    pub(super) fn track_unsafe_load(&mut self, t: &JThread, site: Site, loc: HeapLoc, value: u64, dst: usize) {
        let cx = Context { frames: &t.frames, methods: &self.methods, classes: &self.classes };
        self.tracker.flow_load(&cx, site, loc, Value { bits: value, is_ref: true }, dst);
    }

    /// A native `m` called from `site` consumes its arguments in `[at, at + nargs)`; references
    /// among them are used.
    pub(super) fn track_native(&mut self, t: &JThread, site: Site, m: MethodId, at: usize, nargs: usize) {
        let cx = Context { frames: &t.frames, methods: &self.methods, classes: &self.classes };
        let method = &cx.methods[m as usize];
        let receiver = (!method.is_static()).then_some(Kind::Reference);
        let mut slots = Vec::with_capacity(nargs);
        let mut slot = at;
        for k in receiver.into_iter().chain(method.parsed.params.iter().copied()) {
            if slot >= at + nargs {
                break;
            }
            if k == Kind::Reference && t.stack[slot] != 0 {
                self.tracker.flow_use(&cx, site, t.stack[slot] as Ref, RefUse::Native);
            }
            slots.push(slot);
            slot += k.slots();
        }
        self.tracker.flow_consume(site, &slots, Sink::Native);
    }
}

/// The element of `array` at `index` in slot form, if `array` is an array and `index` in range.
fn heap_element(heap: &Heap, array: Ref, index: i32) -> Option<u64> {
    if array == 0 || index < 0 {
        return None;
    }
    let i = index as usize;
    Some(match &heap.get(array).data {
        ObjData::Bytes(v) => *v.get(i)? as i32 as u32 as u64,
        ObjData::Chars(v) => *v.get(i)? as u64,
        ObjData::Shorts(v) => *v.get(i)? as i32 as u32 as u64,
        ObjData::Ints(v) => *v.get(i)? as u32 as u64,
        ObjData::Longs(v) => *v.get(i)? as u64,
        ObjData::Floats(v) => v.get(i)?.to_bits() as u64,
        ObjData::Doubles(v) => v.get(i)?.to_bits(),
        ObjData::Refs(v) => *v.get(i)? as u64,
        ObjData::Fields(_) => return None,
    })
}

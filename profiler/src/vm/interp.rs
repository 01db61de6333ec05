//! The dispatch loop. One `match` over pre-decoded ops, with the frame's registers (code, pc,
//! locals base, stack pointer) in locals. Everything slow — resolution and quickening, natives,
//! exception objects, class initialization, collection — is a call into another module, made
//! after `sync!` has written the registers back to the frame so that the slow path (and the GC)
//! sees a consistent stack.

use super::class::{ClassKind, Elem, MethodId};
use super::decode::Code;
use super::heap::{ObjData, Ref};
use super::ops::{Cond, Op};
use super::tracker::{Arguments, Site};
use super::{Fault, Frame, JThread, Tracker, Vm, VmError, VmResult};
use std::rc::Rc;

/// Java's `f2i`/`d2i`: NaN → 0, saturating at the int range (Rust's `as` has the same semantics).
#[inline(always)]
fn f2i(v: f64) -> i32 {
    v as i32
}

#[inline(always)]
fn f2l(v: f64) -> i64 {
    v as i64
}

/// Java's `fcmpl`/`fcmpg` family: -1, 0, 1, and `nan` for unordered operands.
#[inline(always)]
fn fcmp(a: f64, b: f64, nan: i32) -> i32 {
    if a < b {
        -1
    } else if a > b {
        1
    } else if a == b {
        0
    } else {
        nan
    }
}

/// An address in the caller's native stack frame: how deep the Rust stack is (it grows down on
/// every platform Bloatlens runs on). Safe: the address is only compared, never dereferenced.
#[inline(always)]
pub(crate) fn native_stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Native stack a `StackOverflowError` may use below the floor while it is being built.
const NATIVE_OVERFLOW_SLACK: usize = 1 << 20;

/// The slots (locals and operands) a thread's stack holds per ten frames of the depth budget: with
/// the default budget of 10,000 frames, 105,000 slots of 8 bytes, what HotSpot's 1 MB stack leaves
/// for interpreted locals (JDK 17 and 25 measured: three frames of 30,000 locals fit, four do not;
/// one of 65,535 fits, two do not).
const STACK_SLOTS_PER_TEN_FRAMES: usize = 105;

impl<T: Tracker> Vm<T> {
    /// Calls `m` with `args` (already in slot form) from Rust and runs it to completion.
    pub fn invoke(&mut self, t: &mut JThread, m: MethodId, args: &[u64]) -> VmResult<u64> {
        let start = t.top_sp();
        if !t.ensure_capacity(start + args.len() + 1) {
            return Err(self.stack_overflow(t));
        }
        t.stack[start..start + args.len()].copy_from_slice(args);
        if T::FLOW && self.observing(t) {
            (start..start + args.len()).for_each(|slot| self.tracker.flow_new(slot));
        }
        if self.methods[m as usize].is_native() {
            // No frame covers these slots: pin the reference arguments for the native's duration.
            let pinned = self.pinned.len();
            let method = &self.methods[m as usize];
            let mut slot = 0;
            if !method.is_static() {
                self.pinned.push(args[0] as u32);
                slot = 1;
            }
            for k in method.parsed.params.clone() {
                if k == crate::classfile::descriptor::Kind::Reference {
                    self.pinned.push(args[slot] as u32);
                }
                slot += k.slots();
            }
            let r = self.call_native(t, m, start, args.len());
            self.pinned.truncate(pinned);
            return r;
        }
        // Each nested call costs native stack (HotSpot's Java and native frames share one stack too):
        // too deep is a StackOverflowError in Java, never a crash of the process.
        let floor = match self.depth_slack {
            0 => self.native_stack_floor,
            _ => self.native_stack_floor.saturating_sub(NATIVE_OVERFLOW_SLACK),
        };
        if native_stack_address() < floor {
            return Err(self.stack_overflow(t));
        }
        let base = t.frames.len();
        let code = self.code_of(t, m)?;
        self.push_frame(t, m, code, start)?;
        self.nesting += 1;
        let r = self.run(t, base);
        self.nesting -= 1;
        r
    }

    /// Calls the method `name desc` that `receiver`'s class answers to (virtual dispatch) from Rust;
    /// `args` follow the receiver.
    pub fn invoke_virtual(
        &mut self,
        t: &mut JThread,
        receiver: super::heap::Ref,
        name: &str,
        desc: &str,
        args: &[u64],
    ) -> VmResult<u64> {
        let class = self.heap.get(receiver).class;
        let m = self
            .find_sig(name, desc)
            .and_then(|sig| self.classes[class as usize].dispatch.get(&sig).copied())
            .ok_or_else(|| {
                super::VmError::Internal(format!(
                    "{} has no method {name}{desc}",
                    self.classes[class as usize].java_name()
                ))
            })?;
        let mut full = Vec::with_capacity(args.len() + 1);
        full.push(receiver as u64);
        full.extend_from_slice(args);
        self.invoke(t, m, &full)
    }

    /// The decoded code of a method, decoding it on first use.
    pub(super) fn code_of(&mut self, t: &mut JThread, m: MethodId) -> VmResult<Rc<Code>> {
        let method = &self.methods[m as usize];
        if let Some(c) = method.code.get() {
            return Ok(c.clone());
        }
        self.ensure_verified(t, method.class)?;
        let method = &self.methods[m as usize];
        let Some(raw) = method.raw.as_ref() else {
            return Err(Fault::Fatal(VmError::Internal(format!("{} has no code", self.method_name(m)))));
        };
        let code = super::decode::decode(raw)
            .map_err(|e| VmError::BadCode { method: self.method_name(m), reason: e.to_string() })?;
        // Returns narrower than int are narrowed by an op of their own, so `ireturn` stays one move.
        if let Some(n) = super::ops::Narrow::of(self.methods[m as usize].parsed.ret) {
            for op in code.ops.iter().filter(|op| op.get() == Op::Ireturn) {
                op.set(Op::IreturnNarrow(n));
            }
        }
        let code = Rc::new(code);
        let _ = self.methods[m as usize].code.set(code.clone());
        Ok(code)
    }

    /// Pushes a frame whose locals start at `locals` (where the caller left the arguments).
    #[inline]
    pub(super) fn push_frame(&mut self, t: &mut JThread, m: MethodId, code: Rc<Code>, locals: usize) -> VmResult<()> {
        let end = locals + code.max_locals as usize + code.max_stack as usize;
        let depth_limit = self.depth_limit();
        // Locals take room on the thread's stack, as they do on HotSpot's (its interpreter checks
        // a frame's locals at the call, not its operand stack, which grows as used).
        let too_big = locals + code.max_locals as usize > depth_limit * STACK_SLOTS_PER_TEN_FRAMES / 10;
        if t.frames.len() >= depth_limit || too_big || !t.ensure_capacity(end + 1) {
            return Err(self.stack_overflow(t));
        }
        let sp = (locals + code.max_locals as usize) as u32;
        let site = match t.frames.last() {
            Some(caller) => Site { method: caller.method, pc: caller.pc.saturating_sub(1) },
            None => Site { method: m, pc: 0 },
        };
        // The plain VM (no tracker) works out nothing here.
        let caller_tracked = T::OBSERVES && t.frames.last().is_some_and(|f| f.tracked);
        let tracked = self.tracks(caller_tracked, m);
        t.frames.push(Frame { method: m, code, pc: 0, locals: locals as u32, sp, monitor: 0, tracked });
        let observed = tracked && self.observed();
        // Argument slots matter only to trackers that follow values.
        let arg_slots = locals..if T::FLOW { locals + self.methods[m as usize].arg_slots as usize } else { locals };
        if T::FLOW && observed && !caller_tracked {
            // Called from code nobody followed (a launcher, a pool's worker): where the arguments
            // came from is unknown.
            arg_slots.clone().for_each(|slot| self.tracker.flow_new(slot));
        }
        let this =
            if T::FLOW && observed && !self.methods[m as usize].is_static() { t.stack[locals] as Ref } else { 0 };
        if T::INSTRUCTIONS && observed {
            self.tracker.on_instructions(self.observed_instructions());
        }
        if observed {
            self.tell_thread();
            let slots: &[u64] = &t.stack[arg_slots];
            let args = Arguments { slots, heap: &self.heap, methods: &self.methods, classes: &self.classes };
            self.tracker.on_call(site, m, t.frames.len(), this, &args);
        }
        Ok(())
    }

    /// Tells the trackers which thread the events that follow belong to, when it is not the one
    /// they were told last (it is asked at every observed call, and changes far more rarely).
    #[inline(always)]
    pub(super) fn tell_thread(&mut self) {
        if self.told_thread != self.current {
            self.told_thread = self.current;
            self.tracker.on_thread(self.current);
        }
    }

    /// Runs until the frame at depth `base` returns; returns its value (0 for void).
    // `executed` is reset by every flush; some expansions of the flush never read it again.
    #[allow(unused_assignments)]
    pub(super) fn run(&mut self, t: &mut JThread, base: usize) -> VmResult<u64> {
        let top = t.frames.last().expect("run needs a frame");
        let mut code = top.code.clone();
        let mut mid = top.method;
        let mut pc = top.pc as usize;
        let mut lp = top.locals as usize;
        let mut sp = top.sp as usize;
        // Whether the top frame is observed (see `Vm::observing`; the VM's own work is not either);
        // a constant `false` in the plain VM, so that its loop keeps no observation branch.
        let mut tracked = T::OBSERVES && top.tracked;
        // Instructions run since the last flush into `self.instructions` (kept in a register).
        let mut executed: u64 = 0;
        if tracked && self.observed() {
            if T::INSTRUCTIONS {
                self.tracker.on_instructions(self.observed_instructions());
            }
            self.tell_thread();
        }

        macro_rules! flush_count {
            () => {{
                self.instructions += executed;
                executed = 0;
            }};
        }
        macro_rules! sync {
            () => {{
                flush_count!();
                let f = t.frames.last_mut().expect("a frame");
                f.pc = pc as u32;
                f.sp = sp as u32;
            }};
        }
        // Loads the registers of the (new) top frame; `sp` only where the caller does not set it.
        macro_rules! reload_but_sp {
            () => {{
                let f = t.frames.last().expect("a frame");
                code = f.code.clone();
                mid = f.method;
                pc = f.pc as usize;
                lp = f.locals as usize;
                tracked = T::OBSERVES && f.tracked;
            }};
        }
        macro_rules! reload {
            () => {{
                reload_but_sp!();
                sp = t.frames.last().expect("a frame").sp as usize;
            }};
        }
        macro_rules! site {
            () => {
                Site { method: mid, pc: (pc - 1) as u32 }
            };
        }
        macro_rules! pop {
            () => {{
                sp -= 1;
                t.stack[sp]
            }};
        }
        macro_rules! push {
            ($v:expr) => {{
                t.stack[sp] = $v;
                sp += 1;
            }};
        }
        macro_rules! pop_i {
            () => {
                pop!() as i32
            };
        }
        macro_rules! push_i {
            ($v:expr) => {
                push!(($v) as i32 as u32 as u64)
            };
        }
        macro_rules! pop_l {
            () => {{
                sp -= 2;
                t.stack[sp] as i64
            }};
        }
        macro_rules! push_l {
            ($v:expr) => {{
                t.stack[sp] = ($v) as u64;
                sp += 2;
            }};
        }
        macro_rules! pop_f {
            () => {
                f32::from_bits(pop!() as u32)
            };
        }
        macro_rules! push_f {
            ($v:expr) => {
                push!(f32::to_bits($v) as u64)
            };
        }
        macro_rules! pop_d {
            () => {
                f64::from_bits(pop_l!() as u64)
            };
        }
        macro_rules! push_d {
            ($v:expr) => {
                push_l!(f64::to_bits($v))
            };
        }
        macro_rules! pop_r {
            () => {
                pop!() as Ref
            };
        }

        'outer: loop {
            // The inner loop runs ops until one throws; it yields the exception object. A thread
            // resumed with a pending exception (interrupted in wait/sleep) throws it at once.
            let pending = std::mem::take(&mut t.pending_exception);
            let exception: Ref = if pending != 0 {
                pending
            } else {
                'inner: loop {
                    macro_rules! fault {
                        ($f:expr) => {{
                            let f: Fault = $f;
                            match f {
                                Fault::Exception(e) => break 'inner e,
                                // The scheduler resumes this thread from its synced frames.
                                Fault::Yield => {
                                    flush_count!();
                                    return Err(Fault::Yield);
                                }
                                other => {
                                    flush_count!();
                                    if self.last_fatal_stack.is_empty() {
                                        self.last_fatal_stack = self.java_stack(t);
                                    }
                                    t.frames.truncate(base);
                                    return Err(other);
                                }
                            }
                        }};
                    }
                    macro_rules! throw {
                        ($make:expr) => {{
                            sync!();
                            fault!($make)
                        }};
                    }
                    macro_rules! tri {
                        ($e:expr) => {
                            match $e {
                                Ok(v) => v,
                                Err(f) => fault!(f),
                            }
                        };
                    }
                    macro_rules! null_check {
                        ($r:expr) => {
                            if $r == 0 {
                                throw!(self.throw_npe(t))
                            }
                        };
                    }
                    macro_rules! branch {
                        ($cond:expr, $target:expr) => {{
                            if $cond {
                                let target = $target as usize;
                                let backward = target < pc;
                                pc = target;
                                // Backward branches are where budgets are checked and threads switch.
                                if backward && self.instructions + executed >= self.next_check {
                                    sync!();
                                    self.sample_whereabouts(t);
                                    tri!(self.check_budgets(Some(t)));
                                }
                            }
                        }};
                    }
                    macro_rules! array_load {
                        ($variant:ident, $push:ident, $conv:expr) => {{
                            let i = pop_i!();
                            let a = pop_r!();
                            null_check!(a);
                            match &self.heap.get(a).data {
                                ObjData::$variant(v) => match v.get(i as u32 as usize) {
                                    Some(&x) => {
                                        $push!($conv(x))
                                    }
                                    None => {
                                        let len = v.len();
                                        throw!(self.throw_index(t, i, len))
                                    }
                                },
                                _ => {
                                    throw!(Fault::Fatal(VmError::Internal("array load on a non-matching array".into())))
                                }
                            }
                        }};
                    }
                    macro_rules! array_store {
                        ($variant:ident, $pop:ident, $conv:expr) => {{
                            let x = $pop!();
                            let i = pop_i!();
                            let a = pop_r!();
                            null_check!(a);
                            match &mut self.heap.get_mut(a).data {
                                ObjData::$variant(v) => match v.get_mut(i as u32 as usize) {
                                    Some(slot) => {
                                        *slot = $conv(x);
                                    }
                                    None => {
                                        let len = v.len();
                                        throw!(self.throw_index(t, i, len))
                                    }
                                },
                                _ => throw!(Fault::Fatal(VmError::Internal(
                                    "array store on a non-matching array".into()
                                ))),
                            }
                        }};
                    }
                    macro_rules! arith {
                        ($pop:ident, $push:ident, |$a:ident, $b:ident| $e:expr) => {{
                            let $b = $pop!();
                            let $a = $pop!();
                            $push!($e)
                        }};
                    }
                    macro_rules! invoke {
                        ($callee:expr, $args:expr) => {{
                            let callee: MethodId = $callee;
                            let args = $args as usize;
                            if T::FLOW && tracked && self.observed() {
                                self.track_call(t, site!(), callee, sp - args, lp);
                            }
                            let decoded = match self.methods[callee as usize].code.get() {
                                Some(c) if !self.methods[callee as usize].slow_entry() => Some(c.clone()),
                                _ => None,
                            };
                            let (callee_code, monitor) = match decoded {
                                Some(c) => (c, 0),
                                None => {
                                    sync!();
                                    match tri!(self.enter_slow(t, callee, sp - args, args)) {
                                        Some(entry) => entry,
                                        None => {
                                            // A native ran and left its result on the stack.
                                            sp = t.frames.last().expect("a frame").sp as usize;
                                            continue 'inner;
                                        }
                                    }
                                }
                            };
                            let f = t.frames.last_mut().expect("a frame");
                            f.pc = pc as u32;
                            f.sp = (sp - args) as u32;
                            if T::INSTRUCTIONS {
                                flush_count!();
                            }
                            if let Err(fault) = self.push_frame(t, callee, callee_code, sp - args) {
                                if monitor != 0 {
                                    self.exit_monitor(t, monitor);
                                }
                                fault!(fault)
                            }
                            t.frames.last_mut().expect("the new frame").monitor = monitor;
                            reload!();
                        }};
                    }

                    let mut op = code.ops[pc].get();
                    pc += 1;
                    executed += 1;
                    'dispatch: loop {
                        if T::FLOW && tracked && self.observed() {
                            self.track_op(t, op, mid, pc - 1, lp, sp);
                        }
                        match op {
                            Op::Nop => {}
                            Op::AconstNull => push!(0),
                            Op::Iconst(v) => push_i!(v),
                            Op::Lconst(v) => push_l!(v),
                            Op::Fconst(v) => push_f!(v),
                            Op::Dconst(v) => push_d!(v),
                            Op::LdcRef(r) => push!(r as u64),
                            Op::Load(n) => {
                                push!(t.stack[lp + n as usize])
                            }
                            Op::Load2(n) => {
                                t.stack[sp] = t.stack[lp + n as usize];
                                sp += 2;
                            }
                            Op::Store(n) => {
                                sp -= 1;
                                t.stack[lp + n as usize] = t.stack[sp];
                            }
                            Op::Store2(n) => {
                                sp -= 2;
                                t.stack[lp + n as usize] = t.stack[sp];
                            }
                            Op::Iinc(n, d) => {
                                let s = &mut t.stack[lp + n as usize];
                                *s = (*s as i32).wrapping_add(d) as u32 as u64;
                            }

                            // Superinstructions: the same effects as the ops they stand for, counted as those ops.
                            Op::LoadLoad(a, b) => {
                                t.stack[sp] = t.stack[lp + a as usize];
                                t.stack[sp + 1] = t.stack[lp + b as usize];
                                sp += 2;
                                pc += 1;
                                executed += 1;
                            }
                            Op::LoadConst(a, c) => {
                                t.stack[sp] = t.stack[lp + a as usize];
                                t.stack[sp + 1] = c as u32 as u64;
                                sp += 2;
                                pc += 1;
                                executed += 1;
                            }
                            Op::IfCmpLocals { a, b, cond, target } => {
                                let (x, y) = (t.stack[lp + a as usize] as i32, t.stack[lp + b as usize] as i32);
                                pc += 2;
                                executed += 2;
                                branch!(Cond::holds(cond, x, y), target)
                            }
                            Op::IfCmpConst { a, cond, c, target } => {
                                let x = t.stack[lp + a as usize] as i32;
                                pc += 2;
                                executed += 2;
                                branch!(Cond::holds(cond, x, c), target)
                            }
                            Op::IincGoto { local, delta, target } => {
                                let s = &mut t.stack[lp + local as usize];
                                *s = (*s as i32).wrapping_add(delta as i32) as u32 as u64;
                                pc += 1;
                                executed += 1;
                                branch!(true, target)
                            }
                            Op::LoadGetField { local, slot } | Op::LoadGetField2 { local, slot } => {
                                let o = t.stack[lp + local as usize] as Ref;
                                pc += 1;
                                executed += 1;
                                null_check!(o);
                                let v = match &self.heap.get(o).data {
                                    ObjData::Fields(f) => f[slot as usize],
                                    _ => 0,
                                };
                                if let Op::LoadGetField { .. } = op {
                                    push!(v)
                                } else {
                                    push_l!(v)
                                }
                            }
                            Op::Iaload => array_load!(Ints, push_i, |x: i32| x),
                            Op::Laload => array_load!(Longs, push_l, |x: i64| x),
                            Op::Faload => array_load!(Floats, push_f, |x: f32| x),
                            Op::Daload => array_load!(Doubles, push_d, |x: f64| x),
                            Op::Aaload => array_load!(Refs, push, |x: Ref| x as u64),
                            Op::Baload => array_load!(Bytes, push_i, |x: i8| x as i32),
                            Op::Caload => array_load!(Chars, push_i, |x: u16| x as i32),
                            Op::Saload => array_load!(Shorts, push_i, |x: i16| x as i32),
                            Op::Iastore => array_store!(Ints, pop_i, |x: i32| x),
                            Op::Lastore => array_store!(Longs, pop_l, |x: i64| x),
                            Op::Fastore => array_store!(Floats, pop_f, |x: f32| x),
                            Op::Dastore => array_store!(Doubles, pop_d, |x: f64| x),
                            Op::Bastore => {
                                // Boolean arrays keep only the low bit (JVMS §6.5.bastore).
                                let a = t.stack[sp - 3] as Ref;
                                let is_bool = a != 0
                                    && matches!(
                                        self.classes[self.heap.get(a).class as usize].kind,
                                        ClassKind::Array { elem: Elem::Boolean, .. }
                                    );
                                if is_bool {
                                    array_store!(Bytes, pop_i, |x: i32| (x & 1) as i8)
                                } else {
                                    array_store!(Bytes, pop_i, |x: i32| x as i8)
                                }
                            }
                            Op::Castore => array_store!(Chars, pop_i, |x: i32| x as u16),
                            Op::Sastore => array_store!(Shorts, pop_i, |x: i32| x as i16),
                            Op::Aastore => {
                                let v = t.stack[sp - 1] as Ref;
                                let a = t.stack[sp - 3] as Ref;
                                if v != 0 && a != 0 {
                                    let ac = self.heap.get(a).class;
                                    let vc = self.heap.get(v).class;
                                    if let ClassKind::Array { component, .. } = self.classes[ac as usize].kind {
                                        if !self.is_subtype(vc, component) {
                                            let name = self.classes[vc as usize].java_name();
                                            throw!(self.throw_new(t, "java/lang/ArrayStoreException", Some(&name)))
                                        }
                                    }
                                }
                                array_store!(Refs, pop_r, |x: Ref| x)
                            }

                            Op::Pop => sp -= 1,
                            Op::Pop2 => sp -= 2,
                            Op::Dup => {
                                t.stack[sp] = t.stack[sp - 1];
                                sp += 1;
                            }
                            Op::DupX1 => {
                                let (v1, v2) = (t.stack[sp - 1], t.stack[sp - 2]);
                                t.stack[sp - 2] = v1;
                                t.stack[sp - 1] = v2;
                                t.stack[sp] = v1;
                                sp += 1;
                            }
                            Op::DupX2 => {
                                let (v1, v2, v3) = (t.stack[sp - 1], t.stack[sp - 2], t.stack[sp - 3]);
                                t.stack[sp - 3] = v1;
                                t.stack[sp - 2] = v3;
                                t.stack[sp - 1] = v2;
                                t.stack[sp] = v1;
                                sp += 1;
                            }
                            Op::Dup2 => {
                                t.stack[sp] = t.stack[sp - 2];
                                t.stack[sp + 1] = t.stack[sp - 1];
                                sp += 2;
                            }
                            Op::Dup2X1 => {
                                let (v1, v2, v3) = (t.stack[sp - 1], t.stack[sp - 2], t.stack[sp - 3]);
                                t.stack[sp - 3] = v2;
                                t.stack[sp - 2] = v1;
                                t.stack[sp - 1] = v3;
                                t.stack[sp] = v2;
                                t.stack[sp + 1] = v1;
                                sp += 2;
                            }
                            Op::Dup2X2 => {
                                let (v1, v2, v3, v4) =
                                    (t.stack[sp - 1], t.stack[sp - 2], t.stack[sp - 3], t.stack[sp - 4]);
                                t.stack[sp - 4] = v2;
                                t.stack[sp - 3] = v1;
                                t.stack[sp - 2] = v4;
                                t.stack[sp - 1] = v3;
                                t.stack[sp] = v2;
                                t.stack[sp + 1] = v1;
                                sp += 2;
                            }
                            Op::Swap => t.stack.swap(sp - 1, sp - 2),

                            Op::Iadd => arith!(pop_i, push_i, |a, b| a.wrapping_add(b)),
                            Op::Ladd => arith!(pop_l, push_l, |a, b| a.wrapping_add(b)),
                            Op::Fadd => arith!(pop_f, push_f, |a, b| a + b),
                            Op::Dadd => arith!(pop_d, push_d, |a, b| a + b),
                            Op::Isub => arith!(pop_i, push_i, |a, b| a.wrapping_sub(b)),
                            Op::Lsub => arith!(pop_l, push_l, |a, b| a.wrapping_sub(b)),
                            Op::Fsub => arith!(pop_f, push_f, |a, b| a - b),
                            Op::Dsub => arith!(pop_d, push_d, |a, b| a - b),
                            Op::Imul => arith!(pop_i, push_i, |a, b| a.wrapping_mul(b)),
                            Op::Lmul => arith!(pop_l, push_l, |a, b| a.wrapping_mul(b)),
                            Op::Fmul => arith!(pop_f, push_f, |a, b| a * b),
                            Op::Dmul => arith!(pop_d, push_d, |a, b| a * b),
                            Op::Idiv | Op::Irem => {
                                let b = pop_i!();
                                let a = pop_i!();
                                if b == 0 {
                                    throw!(self.throw_new(t, "java/lang/ArithmeticException", Some("/ by zero")))
                                }
                                push_i!(if op == Op::Idiv { a.wrapping_div(b) } else { a.wrapping_rem(b) })
                            }
                            Op::Ldiv | Op::Lrem => {
                                let b = pop_l!();
                                let a = pop_l!();
                                if b == 0 {
                                    throw!(self.throw_new(t, "java/lang/ArithmeticException", Some("/ by zero")))
                                }
                                push_l!(if op == Op::Ldiv { a.wrapping_div(b) } else { a.wrapping_rem(b) })
                            }
                            Op::Fdiv => arith!(pop_f, push_f, |a, b| a / b),
                            Op::Ddiv => arith!(pop_d, push_d, |a, b| a / b),
                            Op::Frem => arith!(pop_f, push_f, |a, b| a % b),
                            Op::Drem => arith!(pop_d, push_d, |a, b| a % b),
                            Op::Ineg => {
                                let a = pop_i!();
                                push_i!(a.wrapping_neg())
                            }
                            Op::Lneg => {
                                let a = pop_l!();
                                push_l!(a.wrapping_neg())
                            }
                            Op::Fneg => {
                                let a = pop_f!();
                                push_f!(-a)
                            }
                            Op::Dneg => {
                                let a = pop_d!();
                                push_d!(-a)
                            }
                            Op::Ishl => arith!(pop_i, push_i, |a, b| a.wrapping_shl(b as u32 & 31)),
                            Op::Ishr => arith!(pop_i, push_i, |a, b| a.wrapping_shr(b as u32 & 31)),
                            Op::Iushr => {
                                arith!(pop_i, push_i, |a, b| ((a as u32) >> (b as u32 & 31)) as i32)
                            }
                            Op::Lshl | Op::Lshr | Op::Lushr => {
                                let b = pop_i!() as u32 & 63;
                                let a = pop_l!();
                                push_l!(match op {
                                    Op::Lshl => a << b,
                                    Op::Lshr => a >> b,
                                    _ => ((a as u64) >> b) as i64,
                                })
                            }
                            Op::Iand => arith!(pop_i, push_i, |a, b| a & b),
                            Op::Land => arith!(pop_l, push_l, |a, b| a & b),
                            Op::Ior => arith!(pop_i, push_i, |a, b| a | b),
                            Op::Lor => arith!(pop_l, push_l, |a, b| a | b),
                            Op::Ixor => arith!(pop_i, push_i, |a, b| a ^ b),
                            Op::Lxor => arith!(pop_l, push_l, |a, b| a ^ b),

                            Op::I2l => {
                                let a = pop_i!();
                                push_l!(a as i64)
                            }
                            Op::I2f => {
                                let a = pop_i!();
                                push_f!(a as f32)
                            }
                            Op::I2d => {
                                let a = pop_i!();
                                push_d!(a as f64)
                            }
                            Op::L2i => {
                                let a = pop_l!();
                                push_i!(a as i32)
                            }
                            Op::L2f => {
                                let a = pop_l!();
                                push_f!(a as f32)
                            }
                            Op::L2d => {
                                let a = pop_l!();
                                push_d!(a as f64)
                            }
                            Op::F2i => {
                                let a = pop_f!();
                                push_i!(f2i(a as f64))
                            }
                            Op::F2l => {
                                let a = pop_f!();
                                push_l!(f2l(a as f64))
                            }
                            Op::F2d => {
                                let a = pop_f!();
                                push_d!(a as f64)
                            }
                            Op::D2i => {
                                let a = pop_d!();
                                push_i!(f2i(a))
                            }
                            Op::D2l => {
                                let a = pop_d!();
                                push_l!(f2l(a))
                            }
                            Op::D2f => {
                                let a = pop_d!();
                                push_f!(a as f32)
                            }
                            Op::I2b => {
                                let a = pop_i!();
                                push_i!(a as i8 as i32)
                            }
                            Op::I2c => {
                                let a = pop_i!();
                                push_i!(a as u16 as i32)
                            }
                            Op::I2s => {
                                let a = pop_i!();
                                push_i!(a as i16 as i32)
                            }
                            Op::Lcmp => {
                                let b = pop_l!();
                                let a = pop_l!();
                                push_i!(a.cmp(&b) as i32)
                            }
                            Op::Fcmpl | Op::Fcmpg => {
                                let b = pop_f!();
                                let a = pop_f!();
                                push_i!(fcmp(a as f64, b as f64, if op == Op::Fcmpl { -1 } else { 1 }))
                            }
                            Op::Dcmpl | Op::Dcmpg => {
                                let b = pop_d!();
                                let a = pop_d!();
                                push_i!(fcmp(a, b, if op == Op::Dcmpl { -1 } else { 1 }))
                            }

                            Op::Ifeq(tg) => branch!(pop_i!() == 0, tg),
                            Op::Ifne(tg) => branch!(pop_i!() != 0, tg),
                            Op::Iflt(tg) => branch!(pop_i!() < 0, tg),
                            Op::Ifge(tg) => branch!(pop_i!() >= 0, tg),
                            Op::Ifgt(tg) => branch!(pop_i!() > 0, tg),
                            Op::Ifle(tg) => branch!(pop_i!() <= 0, tg),
                            Op::IfIcmpeq(tg) => {
                                let b = pop_i!();
                                branch!(pop_i!() == b, tg)
                            }
                            Op::IfIcmpne(tg) => {
                                let b = pop_i!();
                                branch!(pop_i!() != b, tg)
                            }
                            Op::IfIcmplt(tg) => {
                                let b = pop_i!();
                                branch!(pop_i!() < b, tg)
                            }
                            Op::IfIcmpge(tg) => {
                                let b = pop_i!();
                                branch!(pop_i!() >= b, tg)
                            }
                            Op::IfIcmpgt(tg) => {
                                let b = pop_i!();
                                branch!(pop_i!() > b, tg)
                            }
                            Op::IfIcmple(tg) => {
                                let b = pop_i!();
                                branch!(pop_i!() <= b, tg)
                            }
                            Op::IfAcmpeq(tg) => {
                                let b = pop_r!();
                                branch!(pop_r!() == b, tg)
                            }
                            Op::IfAcmpne(tg) => {
                                let b = pop_r!();
                                branch!(pop_r!() != b, tg)
                            }
                            Op::IfNull(tg) => branch!(pop_r!() == 0, tg),
                            Op::IfNonNull(tg) => branch!(pop_r!() != 0, tg),
                            Op::Goto(tg) => branch!(true, tg),
                            Op::TableSwitch(i) => {
                                let key = pop_i!();
                                let ts = &code.table_switches[i as usize];
                                let idx = (key as i64) - (ts.low as i64);
                                let target = if idx >= 0 && (idx as usize) < ts.targets.len() {
                                    ts.targets[idx as usize]
                                } else {
                                    ts.default
                                };
                                branch!(true, target)
                            }
                            Op::LookupSwitch(i) => {
                                let key = pop_i!();
                                let ls = &code.lookup_switches[i as usize];
                                let target = match ls.pairs.binary_search_by_key(&key, |p| p.0) {
                                    Ok(j) => ls.pairs[j].1,
                                    Err(_) => ls.default,
                                };
                                branch!(true, target)
                            }

                            Op::Ireturn | Op::IreturnNarrow(_) | Op::Lreturn | Op::Return => {
                                let (v, slots) = match op {
                                    Op::Ireturn => (t.stack[sp - 1], 1),
                                    Op::IreturnNarrow(n) => (n.apply(t.stack[sp - 1]), 1),
                                    Op::Lreturn => (t.stack[sp - 2], 2),
                                    _ => (0, 0),
                                };
                                if T::INSTRUCTIONS {
                                    flush_count!();
                                }
                                if tracked && self.observed() {
                                    if T::INSTRUCTIONS {
                                        self.tracker.on_instructions(self.observed_instructions());
                                    }
                                    self.tracker.on_return(mid);
                                }
                                let done = t.frames.pop().expect("a frame");
                                if done.monitor != 0 {
                                    self.exit_monitor(t, done.monitor);
                                }
                                if t.frames.len() == base {
                                    flush_count!();
                                    return Ok(v);
                                }
                                reload_but_sp!();
                                let dest = done.locals as usize;
                                t.stack[dest] = v;
                                sp = dest + slots;
                            }

                            Op::GetStatic(s) => {
                                push!(self.statics[s as usize])
                            }
                            Op::GetStatic2(s) => {
                                push_l!(self.statics[s as usize])
                            }
                            Op::PutStatic(s) => {
                                self.statics[s as usize] = pop!();
                            }
                            Op::PutStaticNarrow(s, n) => {
                                self.statics[s as usize] = n.apply(pop!());
                            }
                            Op::PutStatic2(s) => {
                                self.statics[s as usize] = pop_l!() as u64;
                            }
                            Op::GetField(s) | Op::GetField2(s) => {
                                let o = pop_r!();
                                null_check!(o);
                                let v = match &self.heap.get(o).data {
                                    ObjData::Fields(f) => f[s as usize],
                                    _ => 0,
                                };
                                if let Op::GetField(_) = op {
                                    push!(v)
                                } else {
                                    push_l!(v)
                                }
                            }
                            Op::PutField(s) | Op::PutField2(s) | Op::PutFieldNarrow(s, _) => {
                                let v = match op {
                                    Op::PutField2(_) => pop_l!() as u64,
                                    Op::PutFieldNarrow(_, n) => n.apply(pop!()),
                                    _ => pop!(),
                                };
                                let o = pop_r!();
                                null_check!(o);
                                if let ObjData::Fields(f) = &mut self.heap.get_mut(o).data {
                                    f[s as usize] = v;
                                }
                            }

                            Op::InvokeDirect { method, args } => invoke!(method, args),
                            Op::InvokeVarHandle { op: vh, args, ret_slots } => {
                                sync!();
                                let at = sp - args as usize;
                                let v = tri!(self.varhandle_invoke(t, vh, at, args as usize));
                                sp = at;
                                t.stack[sp] = v;
                                sp += ret_slots as usize;
                            }
                            Op::InvokeBasic { args } => {
                                let mh = t.stack[sp - args as usize] as Ref;
                                null_check!(mh);
                                match self.basic_target(mh) {
                                    Some(target) => invoke!(target, args),
                                    None => {
                                        sync!();
                                        fault!(Fault::Fatal(VmError::Internal(
                                            "invokeBasic on a handle without a linked form".into()
                                        )))
                                    }
                                }
                            }
                            Op::LinkTo { dispatch, args } => {
                                let member = t.stack[sp - 1] as Ref;
                                null_check!(member);
                                let Some(target) = self.member_target(member) else {
                                    sync!();
                                    fault!(Fault::Fatal(VmError::Internal(
                                        "linkTo with an unresolved MemberName".into()
                                    )))
                                };
                                let target = if dispatch == super::method_handles::dispatch::DIRECT {
                                    target
                                } else {
                                    let recv = t.stack[sp - args as usize] as Ref;
                                    null_check!(recv);
                                    let class = self.heap.get(recv).class;
                                    match self.link_to_target(target, dispatch, class) {
                                        Some(m) => m,
                                        None => throw!(self.link_to_error(t, target, class)),
                                    }
                                };
                                sp -= 1;
                                invoke!(target, args - 1)
                            }
                            Op::InvokeHandle { invoker, appendix, args } => {
                                if sp + 1 >= t.stack.len() {
                                    sync!();
                                    fault!(self.stack_overflow(t))
                                }
                                t.stack[sp] = appendix as u64;
                                if T::FLOW && tracked && self.observed() {
                                    self.tracker.flow_new(sp);
                                }
                                sp += 1;
                                invoke!(invoker, args + 1)
                            }
                            Op::InvokeDirectNonNull { method, args } => {
                                null_check!(t.stack[sp - args as usize] as Ref);
                                invoke!(method, args)
                            }
                            Op::InvokeVirtual { vindex, args } => {
                                let recv = t.stack[sp - args as usize] as Ref;
                                null_check!(recv);
                                let class = self.heap.get(recv).class;
                                let target = self.classes[class as usize].vtable[vindex as usize];
                                invoke!(target, args)
                            }
                            Op::InvokeInterface { sig, args, iface } => {
                                let recv = t.stack[sp - args as usize] as Ref;
                                null_check!(recv);
                                let class = self.heap.get(recv).class;
                                let target = match self.classes[class as usize].dispatch.get(&sig) {
                                    Some(&m) if self.is_subtype(class, iface) => m,
                                    _ => throw!(self.not_implemented(t, class, iface)),
                                };
                                invoke!(target, args)
                            }

                            Op::New(c) => {
                                if self.heap.allocated_since_gc >= self.opts.gc_interval_bytes {
                                    sync!();
                                    tri!(self.make_room(t, 0));
                                }
                                let r = self.alloc_instance(c);
                                if tracked && self.observed() {
                                    self.track_alloc(t, site!(), r, c, lp, sp);
                                }
                                push!(r as u64)
                            }
                            Op::NewArray(_) | Op::ANewArray(_) => {
                                let len = pop_i!();
                                if len < 0 {
                                    throw!(self.throw_new(
                                        t,
                                        "java/lang/NegativeArraySizeException",
                                        Some(&len.to_string())
                                    ))
                                }
                                sync!();
                                let class = match op {
                                    Op::ANewArray(c) => c,
                                    Op::NewArray(atype) => tri!(self.primitive_array_class(atype)),
                                    _ => unreachable!(),
                                };
                                let r = tri!(self.new_array_checked(t, class, len as usize));
                                if tracked && self.observed() {
                                    self.track_alloc(t, site!(), r, class, lp, sp);
                                }
                                push!(r as u64)
                            }
                            Op::MultiANewArrayCp(cp, dims) => {
                                sync!();
                                let class = tri!(self.resolve_class_ref(t, mid, cp));
                                let mut counts = Vec::with_capacity(dims as usize);
                                for _ in 0..dims {
                                    counts.push(pop_i!());
                                }
                                counts.reverse();
                                if let Some(&n) = counts.iter().find(|&&n| n < 0) {
                                    throw!(self.throw_new(
                                        t,
                                        "java/lang/NegativeArraySizeException",
                                        Some(&n.to_string())
                                    ))
                                }
                                let r = tri!(self.multi_new_array(t, class, &counts));
                                if tracked && self.observed() {
                                    self.track_alloc(t, site!(), r, class, lp, sp);
                                }
                                push!(r as u64)
                            }
                            Op::ArrayLength => {
                                let a = pop_r!();
                                null_check!(a);
                                push_i!(self.heap.get(a).data.array_len().unwrap_or(0) as i32)
                            }
                            Op::Athrow => {
                                let e = pop_r!();
                                null_check!(e);
                                sync!();
                                break 'inner e;
                            }
                            Op::CheckCast(c) => {
                                let r = t.stack[sp - 1] as Ref;
                                if r != 0 {
                                    let rc = self.heap.get(r).class;
                                    if !self.is_subtype(rc, c) {
                                        throw!(self.throw_class_cast(t, rc, c))
                                    }
                                }
                            }
                            Op::InstanceOf(c) => {
                                let r = pop_r!();
                                let yes = r != 0 && self.is_subtype(self.heap.get(r).class, c);
                                push_i!(yes as i32)
                            }
                            Op::MonitorEnter => {
                                let r = t.stack[sp - 1] as Ref;
                                null_check!(r);
                                if !self.try_enter(t, r) {
                                    // Contended: resume at this op, with the object still on the stack.
                                    pc -= 1;
                                    sync!();
                                    tri!(self.enter_or_block(t, r));
                                    pc += 1;
                                }
                                sp -= 1;
                            }
                            Op::MonitorExit => {
                                let r = pop_r!();
                                null_check!(r);
                                if !self.exit_monitor(t, r) {
                                    throw!(self.throw_new(t, "java/lang/IllegalMonitorStateException", None))
                                }
                            }

                            Op::Jsr(tg) => {
                                push!(pc as u64);
                                branch!(true, tg)
                            }
                            Op::Ret(n) => {
                                let target = t.stack[lp + n as usize] as usize;
                                branch!(true, target)
                            }
                            Op::Unsupported(opcode) => {
                                sync!();
                                fault!(Fault::Fatal(VmError::Unsupported(format!(
                                    "opcode {opcode:#04x} in {}",
                                    self.method_name(mid)
                                ))))
                            }
                            // Constant-pool ops: resolve, rewrite the op in place, run the result.
                            Op::LdcCp(_)
                            | Op::Ldc2Cp(_)
                            | Op::GetStaticCp(_)
                            | Op::PutStaticCp(_)
                            | Op::GetFieldCp(_)
                            | Op::PutFieldCp(_)
                            | Op::InvokeVirtualCp(_)
                            | Op::InvokeSpecialCp(_)
                            | Op::InvokeStaticCp(_)
                            | Op::InvokeInterfaceCp(_)
                            | Op::InvokeDynamicCp(_)
                            | Op::NewCp(_)
                            | Op::ANewArrayCp(_)
                            | Op::CheckCastCp(_)
                            | Op::InstanceOfCp(_) => {
                                sync!();
                                op = tri!(self.quicken(t, mid, &code, pc - 1, op));
                                continue 'dispatch;
                            }
                        }
                        break 'dispatch;
                    }
                }
            };
            // An exception is in flight: find a handler, unwinding frames as needed.
            flush_count!();
            loop {
                let f = t.frames.last().expect("a frame").clone();
                let at = f.pc.saturating_sub(1);
                let handler = match self.find_handler(t, &f, at, exception) {
                    Ok(h) => h,
                    Err(fault) => {
                        t.frames.truncate(base);
                        return Err(fault);
                    }
                };
                if let Some(h) = handler {
                    let top = t.frames.last_mut().expect("a frame");
                    top.pc = h;
                    let stack_base = top.locals as usize + top.code.max_locals as usize;
                    t.stack[stack_base] = exception as u64;
                    if T::FLOW && top.tracked && self.observed() {
                        self.tracker.flow_new(stack_base);
                    }
                    top.sp = stack_base as u32 + 1;
                    // A handler at or before the throw closes a loop with no backward branch (one
                    // that covers itself): budgets are checked here too, the frame already at it.
                    if h <= at && self.instructions >= self.next_check {
                        self.sample_whereabouts(t);
                        match self.check_budgets(Some(t)) {
                            Ok(()) => {}
                            Err(Fault::Yield) => return Err(Fault::Yield),
                            Err(other) => {
                                if self.last_fatal_stack.is_empty() {
                                    self.last_fatal_stack = self.java_stack(t);
                                }
                                t.frames.truncate(base);
                                return Err(other);
                            }
                        }
                    }
                    reload!();
                    continue 'outer;
                }
                // Returns are told of exactly the frames whose calls were.
                if f.tracked && self.observed() {
                    if T::INSTRUCTIONS {
                        self.tracker.on_instructions(self.observed_instructions());
                    }
                    self.tracker.on_return(f.method);
                }
                if let Some(done) = t.frames.pop() {
                    if done.monitor != 0 {
                        self.exit_monitor(t, done.monitor);
                    }
                }
                if t.frames.len() == base {
                    return Err(Fault::Exception(exception));
                }
            }
        }
    }
}

//! The instrumentation interface. The interpreter is generic over a `Tracker`; every hook has an
//! empty default body, so [`NoTracker`] compiles to nothing and the plain VM pays nothing.
//!
//! Two levels of hooks:
//! - **events** (allocation, call, return, native, bulk copy, free, collection) fire for every tracker;
//! - **value flow** (`flow_*`) fires only for trackers with `FLOW = true`: every op reports how it
//!   moves values between operand-stack slots, locals and the heap (see `vm/flow.rs`). Stack and
//!   local slots are named by their index in the thread's slot stack — a callee's locals are the
//!   caller's argument slots, so argument shadows pass to the callee with no extra hook, and a
//!   return is a move from the callee's top to the caller's. A tracker keeps one shadow per slot
//!   index per thread (`on_thread` says which thread the events and indices that follow belong to).
//!
//! Hooks see places as [`Site`]s (method + op index); [`Context`] turns a site inside the JDK into
//! the user frame that led to it.

use super::class::{Class, ClassId, Method, MethodId};
use super::heap::{Heap, Ref};
use super::Frame;

/// A static instruction: a method and an op index in its decoded code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Site {
    pub method: MethodId,
    pub pc: u32,
}

/// A heap location a value is loaded from or stored to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapLoc {
    Field { obj: Ref, slot: u32 },
    Static { slot: u32 },
    Element { array: Ref, index: u32 },
}

impl HeapLoc {
    /// The object holding the location (0 for a static).
    #[inline(always)]
    pub fn object(&self) -> Ref {
        match *self {
            HeapLoc::Field { obj, .. } => obj,
            HeapLoc::Element { array, .. } => array,
            HeapLoc::Static { .. } => 0,
        }
    }
}

/// An allocation the program made.
#[derive(Debug, Clone, Copy)]
pub struct Alloc {
    pub site: Site,
    pub obj: Ref,
    pub class: ClassId,
    pub bytes: usize,
    /// The receiver of the allocating method (0 in a static method).
    pub owner: Ref,
    /// The slot that receives the reference.
    pub dst: usize,
}

/// A value moved to or from the heap, in slot form.
#[derive(Debug, Clone, Copy)]
pub struct Value {
    pub bits: u64,
    pub is_ref: bool,
}

/// What a bulk copy moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bulk {
    /// Array elements of this many bytes each.
    Elements(u8),
    /// An instance's field slots (a `clone`).
    Fields,
}

/// How an op needs an object (reference propagation's "uses").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefUse {
    /// Base of a field or array-element read or write, or of `arraylength`.
    Access,
    /// Receiver of a call.
    Receiver,
    /// Operand of `instanceof`, `checkcast`, or a reference comparison.
    Test,
    /// Argument of a native method.
    Native,
}

/// What consumes values without producing one (cost-benefit's consumer nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sink {
    /// A conditional branch or switch.
    Branch,
    /// A native method's arguments.
    Native,
}

/// How a reference is passed on without reaching the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefPass {
    /// An argument of a call to this method (the one that runs: dispatch done).
    Argument(MethodId),
    Return,
}

/// A call's argument slots (the receiver first; empty for trackers without `FLOW`) and, read-only,
/// the heap they point into: a tracker may look at the argument objects as they are at the call.
pub struct Arguments<'a> {
    pub slots: &'a [u64],
    pub heap: &'a Heap,
    pub methods: &'a [Method],
    pub classes: &'a [Class],
}

/// Read-only view of the running thread, for hooks that record where something happened.
pub struct Context<'a> {
    pub frames: &'a [Frame],
    pub methods: &'a [Method],
    pub classes: &'a [Class],
}

/// Whether `m` belongs to the user's program (its source is the user's: not the JDK, not a jar, not
/// a class generated at run time; see [`crate::classpath::is_user_code`]). Also for analyses that
/// ask after the run.
pub fn is_user_method(methods: &[Method], classes: &[Class], m: MethodId) -> bool {
    is_user_class(&classes[methods[m as usize].class as usize])
}

/// Whether `class` belongs to the user's program (see [`is_user_method`]).
pub fn is_user_class(class: &Class) -> bool {
    class.user && !class.hidden
}

impl Context<'_> {
    /// Whether `m` belongs to the user's program (see [`is_user_method`]).
    pub fn is_user(&self, m: MethodId) -> bool {
        is_user_method(self.methods, self.classes, m)
    }

    /// The innermost frame in user code for an event at `site` on this thread: `site` itself
    /// when it is user code, else the call site in the nearest user caller.
    pub fn user_frame(&self, site: Site) -> Option<Site> {
        if self.is_user(site.method) {
            return Some(site);
        }
        // The top frame is `site`'s own; callers' pcs point past their call op.
        self.frames
            .iter()
            .rev()
            .skip(1)
            .find(|f| self.is_user(f.method))
            .map(|f| Site { method: f.method, pc: f.pc.saturating_sub(1) })
    }
}

#[allow(unused_variables)]
pub trait Tracker: 'static {
    /// Whether this tracker observes anything at all: `false` only for [`NoTracker`], so that the
    /// plain VM does not even work out which frames are observed.
    const OBSERVES: bool = true;
    /// Whether the interpreter reports value flow (`flow_*` hooks) to this tracker. Decided at
    /// compile time: with `false` no flow code is generated, and superinstructions stay on.
    const FLOW: bool = false;
    /// Whether the run ends with one more collection, so that objects that died since the last
    /// one are seen dying (`on_free`) rather than censored.
    const FINAL_COLLECTION: bool = false;
    /// Whether the interpreter reports its instruction count (`on_instructions`) before every
    /// call, return, thread switch and the end of the run, so a tracker can charge instructions
    /// to the frame that ran them.
    const INSTRUCTIONS: bool = false;

    /// `total` instructions have run so far, on all threads: at calls, returns and thread
    /// switches when `INSTRUCTIONS`; once before `finish` for every tracker.
    #[inline(always)]
    fn on_instructions(&mut self, total: u64) {}
    /// An object or array was allocated.
    #[inline(always)]
    fn on_alloc(&mut self, cx: &Context, a: &Alloc) {}
    /// Elements `[src_pos, src_pos+len)` of `src` were copied to `dst` at `dst_pos` (arraycopy and
    /// so `Arrays.copyOf`, array `clone`), or, for an instance's `clone`, its field slots.
    #[inline(always)]
    fn on_bulk_copy(&mut self, src: Ref, src_pos: usize, dst: Ref, dst_pos: usize, len: usize, unit: Bulk) {}
    /// The events and slot indices that follow belong to thread `thread` (the VM's index); told
    /// whenever it changes, and only then.
    #[inline(always)]
    fn on_thread(&mut self, thread: usize) {}
    /// A frame for `callee`, called from `site`, was pushed; it is the `depth`-th frame of its
    /// thread (1 for the outermost); `this` is its receiver (0 for a static method, and for
    /// trackers without `FLOW`, so the plain run reads nothing for it); `args` its argument slots
    /// (the receiver first) and the heap. Trackers
    /// that keep a stack of their own resynchronise on `depth`: frames a fatal error discards
    /// end without `on_return`.
    #[inline(always)]
    fn on_call(&mut self, site: Site, callee: MethodId, depth: usize, this: Ref, args: &Arguments) {}
    /// `callee`'s frame ended (returned or unwound by an exception).
    #[inline(always)]
    fn on_return(&mut self, callee: MethodId) {}
    /// A native method called from `site` is about to run.
    #[inline(always)]
    fn on_native(&mut self, site: Site, callee: MethodId) {}
    /// The collector freed `obj` (the lifetime analysis' death observation).
    #[inline(always)]
    fn on_free(&mut self, obj: Ref, class: ClassId, bytes: usize) {}
    /// A collection finished.
    #[inline(always)]
    fn on_gc(&mut self, collections: u64, allocated_bytes: u64) {}

    /// The run is over: the last moment the VM's classes and methods can be read (to turn sites
    /// into source locations).
    #[inline(always)]
    fn finish(&mut self, methods: &[Method], classes: &[Class]) {}

    /// Slot `dst` now holds a value with no heap origin (a constant, a computed value, a native's result).
    #[inline(always)]
    fn flow_new(&mut self, dst: usize) {}
    /// The op at `site` put a constant (or an array's length) in slot `dst`. By default a new value.
    #[inline(always)]
    fn flow_const(&mut self, site: Site, dst: usize) {
        self.flow_new(dst)
    }
    /// The value in slot `src` was copied to slot `dst` (local load/store, `dup`, return).
    #[inline(always)]
    fn flow_move(&mut self, site: Site, src: usize, dst: usize) {}
    /// Slots are permuted: slot `base + i` gets what slot `from[i]` held (`dup_x1`, `swap`, …).
    #[inline(always)]
    fn flow_shuffle(&mut self, base: usize, from: &[usize]) {}
    /// The values in slots `srcs` are consumed by a computation at `site` whose result goes to
    /// slot `dst` (arithmetic, conversions, comparisons, `instanceof`), or by a branch or a native
    /// (`dst` is `None`; a native's result is reported with `flow_new` after it ran).
    #[inline(always)]
    fn flow_compute(&mut self, site: Site, srcs: &[usize], dst: Option<usize>) {}
    /// The values in slots `srcs` are consumed by a branch or a native at `site`. By default a
    /// computation with no result.
    #[inline(always)]
    fn flow_consume(&mut self, site: Site, srcs: &[usize], sink: Sink) {
        self.flow_compute(site, srcs, None)
    }
    /// The reference in slot `slot` is dereferenced at `site` (base of a field or element access,
    /// receiver of a call, operand of a type test or a reference comparison); null included.
    #[inline(always)]
    fn flow_deref(&mut self, site: Site, slot: usize) {}
    /// `value` was loaded from `loc` into slot `dst`.
    #[inline(always)]
    fn flow_load(&mut self, cx: &Context, site: Site, loc: HeapLoc, value: Value, dst: usize) {}
    /// `value`, in slot `src`, was stored to `loc`; `bytes` is its size in the heap.
    #[inline(always)]
    fn flow_store(&mut self, cx: &Context, site: Site, loc: HeapLoc, value: Value, bytes: u8, src: usize) {}
    /// `obj` (not null) is needed by the op at `site`. Uses of an object inside its own
    /// constructor are not reported.
    #[inline(always)]
    fn flow_use(&mut self, cx: &Context, site: Site, obj: Ref, how: RefUse) {}
    /// The reference `obj` (not null) is passed as an argument or returned at `site`.
    #[inline(always)]
    fn flow_pass(&mut self, cx: &Context, site: Site, obj: Ref, how: RefPass) {}
}

/// The tracker of the plain run: every hook is empty.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTracker;

impl Tracker for NoTracker {
    const OBSERVES: bool = false;
}

/// Several trackers in one run: every hook goes to each, in order. Flat tuples (rather than
/// nested pairs) keep the hooks one call deep.
macro_rules! tuple_tracker {
    ($($t:ident $i:tt),+) => {
        impl<$($t: Tracker),+> Tracker for ($($t,)+) {
            const OBSERVES: bool = $($t::OBSERVES)||+;
            const FLOW: bool = $($t::FLOW)||+;
            const FINAL_COLLECTION: bool = $($t::FINAL_COLLECTION)||+;
            const INSTRUCTIONS: bool = $($t::INSTRUCTIONS)||+;
            fn on_instructions(&mut self, total: u64) {
                $(self.$i.on_instructions(total);)+
            }
            fn on_alloc(&mut self, cx: &Context, a: &Alloc) {
                $(self.$i.on_alloc(cx, a);)+
            }
            fn on_bulk_copy(&mut self, src: Ref, src_pos: usize, dst: Ref, dst_pos: usize, len: usize, unit: Bulk) {
                $(self.$i.on_bulk_copy(src, src_pos, dst, dst_pos, len, unit);)+
            }
            fn on_thread(&mut self, thread: usize) {
                $(self.$i.on_thread(thread);)+
            }
            fn on_call(&mut self, site: Site, callee: MethodId, depth: usize, this: Ref, args: &Arguments) {
                $(self.$i.on_call(site, callee, depth, this, args);)+
            }
            fn on_return(&mut self, callee: MethodId) {
                $(self.$i.on_return(callee);)+
            }
            fn on_native(&mut self, site: Site, callee: MethodId) {
                $(self.$i.on_native(site, callee);)+
            }
            fn on_free(&mut self, obj: Ref, class: ClassId, bytes: usize) {
                $(self.$i.on_free(obj, class, bytes);)+
            }
            fn on_gc(&mut self, collections: u64, allocated_bytes: u64) {
                $(self.$i.on_gc(collections, allocated_bytes);)+
            }
            fn finish(&mut self, methods: &[Method], classes: &[Class]) {
                $(self.$i.finish(methods, classes);)+
            }
            #[inline(always)]
            fn flow_new(&mut self, dst: usize) {
                $(self.$i.flow_new(dst);)+
            }
            #[inline(always)]
            fn flow_const(&mut self, site: Site, dst: usize) {
                $(self.$i.flow_const(site, dst);)+
            }
            #[inline(always)]
            fn flow_move(&mut self, site: Site, src: usize, dst: usize) {
                $(self.$i.flow_move(site, src, dst);)+
            }
            #[inline(always)]
            fn flow_shuffle(&mut self, base: usize, from: &[usize]) {
                $(self.$i.flow_shuffle(base, from);)+
            }
            #[inline(always)]
            fn flow_compute(&mut self, site: Site, srcs: &[usize], dst: Option<usize>) {
                $(self.$i.flow_compute(site, srcs, dst);)+
            }
            #[inline(always)]
            fn flow_consume(&mut self, site: Site, srcs: &[usize], sink: Sink) {
                $(self.$i.flow_consume(site, srcs, sink);)+
            }
            #[inline(always)]
            fn flow_deref(&mut self, site: Site, slot: usize) {
                $(self.$i.flow_deref(site, slot);)+
            }
            #[inline(always)]
            fn flow_load(&mut self, cx: &Context, site: Site, loc: HeapLoc, value: Value, dst: usize) {
                $(self.$i.flow_load(cx, site, loc, value, dst);)+
            }
            #[inline(always)]
            fn flow_store(&mut self, cx: &Context, site: Site, loc: HeapLoc, value: Value, bytes: u8, src: usize) {
                $(self.$i.flow_store(cx, site, loc, value, bytes, src);)+
            }
            #[inline(always)]
            fn flow_use(&mut self, cx: &Context, site: Site, obj: Ref, how: RefUse) {
                $(self.$i.flow_use(cx, site, obj, how);)+
            }
            #[inline(always)]
            fn flow_pass(&mut self, cx: &Context, site: Site, obj: Ref, how: RefPass) {
                $(self.$i.flow_pass(cx, site, obj, how);)+
            }
        }
    };
}

tuple_tracker!(A 0, B 1);
tuple_tracker!(A 0, B 1, C 2);

/// An analysis that may be off: every hook goes to it when it is on.
impl<T: Tracker> Tracker for Option<T> {
    const OBSERVES: bool = T::OBSERVES;
    const FLOW: bool = T::FLOW;
    const FINAL_COLLECTION: bool = T::FINAL_COLLECTION;
    const INSTRUCTIONS: bool = T::INSTRUCTIONS;
    fn on_instructions(&mut self, total: u64) {
        if let Some(t) = self {
            t.on_instructions(total);
        }
    }
    fn flow_const(&mut self, site: Site, dst: usize) {
        if let Some(t) = self {
            t.flow_const(site, dst);
        }
    }
    fn flow_consume(&mut self, site: Site, srcs: &[usize], sink: Sink) {
        if let Some(t) = self {
            t.flow_consume(site, srcs, sink);
        }
    }
    fn flow_deref(&mut self, site: Site, slot: usize) {
        if let Some(t) = self {
            t.flow_deref(site, slot);
        }
    }
    fn on_alloc(&mut self, cx: &Context, a: &Alloc) {
        if let Some(t) = self {
            t.on_alloc(cx, a);
        }
    }
    fn on_bulk_copy(&mut self, src: Ref, src_pos: usize, dst: Ref, dst_pos: usize, len: usize, unit: Bulk) {
        if let Some(t) = self {
            t.on_bulk_copy(src, src_pos, dst, dst_pos, len, unit);
        }
    }
    fn on_thread(&mut self, thread: usize) {
        if let Some(t) = self {
            t.on_thread(thread);
        }
    }
    fn on_call(&mut self, site: Site, callee: MethodId, depth: usize, this: Ref, args: &Arguments) {
        if let Some(t) = self {
            t.on_call(site, callee, depth, this, args);
        }
    }
    fn on_return(&mut self, callee: MethodId) {
        if let Some(t) = self {
            t.on_return(callee);
        }
    }
    fn on_native(&mut self, site: Site, callee: MethodId) {
        if let Some(t) = self {
            t.on_native(site, callee);
        }
    }
    fn on_free(&mut self, obj: Ref, class: ClassId, bytes: usize) {
        if let Some(t) = self {
            t.on_free(obj, class, bytes);
        }
    }
    fn on_gc(&mut self, collections: u64, allocated_bytes: u64) {
        if let Some(t) = self {
            t.on_gc(collections, allocated_bytes);
        }
    }
    fn finish(&mut self, methods: &[Method], classes: &[Class]) {
        if let Some(t) = self {
            t.finish(methods, classes);
        }
    }
    fn flow_new(&mut self, dst: usize) {
        if let Some(t) = self {
            t.flow_new(dst);
        }
    }
    fn flow_move(&mut self, site: Site, src: usize, dst: usize) {
        if let Some(t) = self {
            t.flow_move(site, src, dst);
        }
    }
    fn flow_shuffle(&mut self, base: usize, from: &[usize]) {
        if let Some(t) = self {
            t.flow_shuffle(base, from);
        }
    }
    fn flow_compute(&mut self, site: Site, srcs: &[usize], dst: Option<usize>) {
        if let Some(t) = self {
            t.flow_compute(site, srcs, dst);
        }
    }
    fn flow_load(&mut self, cx: &Context, site: Site, loc: HeapLoc, value: Value, dst: usize) {
        if let Some(t) = self {
            t.flow_load(cx, site, loc, value, dst);
        }
    }
    fn flow_store(&mut self, cx: &Context, site: Site, loc: HeapLoc, value: Value, bytes: u8, src: usize) {
        if let Some(t) = self {
            t.flow_store(cx, site, loc, value, bytes, src);
        }
    }
    fn flow_use(&mut self, cx: &Context, site: Site, obj: Ref, how: RefUse) {
        if let Some(t) = self {
            t.flow_use(cx, site, obj, how);
        }
    }
    fn flow_pass(&mut self, cx: &Context, site: Site, obj: Ref, how: RefPass) {
        if let Some(t) = self {
            t.flow_pass(cx, site, obj, how);
        }
    }
}

/// Counts what it sees; proves that hooks fire and measures the cost of a live tracker.
#[derive(Debug, Default, Clone)]
pub struct CountingTracker {
    pub allocations: u64,
    pub moves: u64,
    pub consumed: u64,
    pub field_loads: u64,
    pub field_stores: u64,
    pub array_loads: u64,
    pub array_stores: u64,
    pub static_loads: u64,
    pub static_stores: u64,
    pub uses: u64,
    pub passes: u64,
    pub calls: u64,
    pub returns: u64,
    pub natives: u64,
    pub frees: u64,
    pub bulk_copied: u64,
}

impl Tracker for CountingTracker {
    const FLOW: bool = true;
    fn on_alloc(&mut self, _: &Context, _: &Alloc) {
        self.allocations += 1;
    }
    fn on_bulk_copy(&mut self, _: Ref, _: usize, _: Ref, _: usize, len: usize, _: Bulk) {
        self.bulk_copied += len as u64;
    }
    fn on_call(&mut self, _: Site, _: MethodId, _: usize, _: Ref, _: &Arguments) {
        self.calls += 1;
    }
    fn on_return(&mut self, _: MethodId) {
        self.returns += 1;
    }
    fn on_native(&mut self, _: Site, _: MethodId) {
        self.natives += 1;
    }
    fn on_free(&mut self, _: Ref, _: ClassId, _: usize) {
        self.frees += 1;
    }
    fn flow_move(&mut self, _: Site, _: usize, _: usize) {
        self.moves += 1;
    }
    fn flow_compute(&mut self, _: Site, srcs: &[usize], _: Option<usize>) {
        self.consumed += srcs.len() as u64;
    }
    fn flow_load(&mut self, _: &Context, _: Site, loc: HeapLoc, _: Value, _: usize) {
        match loc {
            HeapLoc::Field { .. } => self.field_loads += 1,
            HeapLoc::Static { .. } => self.static_loads += 1,
            HeapLoc::Element { .. } => self.array_loads += 1,
        }
    }
    fn flow_store(&mut self, _: &Context, _: Site, loc: HeapLoc, _: Value, _: u8, _: usize) {
        match loc {
            HeapLoc::Field { .. } => self.field_stores += 1,
            HeapLoc::Static { .. } => self.static_stores += 1,
            HeapLoc::Element { .. } => self.array_stores += 1,
        }
    }
    fn flow_use(&mut self, _: &Context, _: Site, _: Ref, _: RefUse) {
        self.uses += 1;
    }
    fn flow_pass(&mut self, _: &Context, _: Site, _: Ref, _: RefPass) {
        self.passes += 1;
    }
}

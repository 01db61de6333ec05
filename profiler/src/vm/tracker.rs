//! The instrumentation interface. The interpreter is generic over a `Tracker`; every hook has an
//! empty default body, so [`NoTracker`] compiles to nothing and the plain VM pays nothing.
//!
//! Hooks see values as raw slots and places as [`Site`]s (method + op index); the analyses
//! (copy profiling, reference propagation, cost-benefit, lifetimes) keep their shadows behind
//! these hooks, so adding one never reshapes the dispatch loop.

use super::class::{ClassId, MethodId};
use super::heap::Ref;

/// A static instruction: a method and an op index in its decoded code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Site {
    pub method: MethodId,
    pub pc: u32,
}

#[allow(unused_variables)]
pub trait Tracker: 'static {
    /// An object or array was allocated at `site`.
    #[inline(always)]
    fn on_alloc(&mut self, site: Site, obj: Ref, class: ClassId, bytes: usize) {}
    /// A local variable was pushed onto the operand stack (`iload`, `aload`, …).
    #[inline(always)]
    fn on_local_load(&mut self, site: Site, local: u16) {}
    /// The top of the operand stack was stored into a local variable.
    #[inline(always)]
    fn on_local_store(&mut self, site: Site, local: u16) {}
    /// A value was read from an instance field (`obj.slot`) onto the stack.
    #[inline(always)]
    fn on_field_load(&mut self, site: Site, obj: Ref, slot: u32) {}
    /// A stack value was stored into an instance field.
    #[inline(always)]
    fn on_field_store(&mut self, site: Site, obj: Ref, slot: u32) {}
    #[inline(always)]
    fn on_static_load(&mut self, site: Site, slot: u32) {}
    #[inline(always)]
    fn on_static_store(&mut self, site: Site, slot: u32) {}
    #[inline(always)]
    fn on_array_load(&mut self, site: Site, array: Ref, index: usize) {}
    #[inline(always)]
    fn on_array_store(&mut self, site: Site, array: Ref, index: usize) {}
    /// Elements `[src_pos, src_pos+len)` of `src` were copied to `dst` at `dst_pos` (arraycopy, clone, copyOf).
    #[inline(always)]
    fn on_bulk_copy(&mut self, src: Ref, src_pos: usize, dst: Ref, dst_pos: usize, len: usize) {}
    /// An arithmetic or conversion op consumed its operands and produced a new value.
    #[inline(always)]
    fn on_compute(&mut self, site: Site) {}
    /// A conditional branch consumed its operands.
    #[inline(always)]
    fn on_predicate(&mut self, site: Site) {}
    /// A call from `site` to `callee` is about to run; its arguments are on the stack.
    #[inline(always)]
    fn on_call(&mut self, site: Site, callee: MethodId) {}
    /// `callee` returned to its caller.
    #[inline(always)]
    fn on_return(&mut self, callee: MethodId) {}
    /// A native method ran with its arguments.
    #[inline(always)]
    fn on_native(&mut self, site: Site, callee: MethodId) {}
    /// The collector freed `obj` (the lifetime analysis' death observation).
    #[inline(always)]
    fn on_free(&mut self, obj: Ref, class: ClassId, bytes: usize) {}
    /// A collection finished.
    #[inline(always)]
    fn on_gc(&mut self, collections: u64, allocated_bytes: u64) {}
}

/// The tracker of the plain run: every hook is empty.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTracker;

impl Tracker for NoTracker {}

/// Counts what it sees; proves that hooks fire and measures the cost of a live tracker.
#[derive(Debug, Default, Clone)]
pub struct CountingTracker {
    pub allocations: u64,
    pub local_loads: u64,
    pub local_stores: u64,
    pub field_loads: u64,
    pub field_stores: u64,
    pub array_loads: u64,
    pub array_stores: u64,
    pub calls: u64,
    pub returns: u64,
    pub frees: u64,
    pub bulk_copied: u64,
}

impl Tracker for CountingTracker {
    fn on_local_load(&mut self, _: Site, _: u16) {
        self.local_loads += 1;
    }
    fn on_local_store(&mut self, _: Site, _: u16) {
        self.local_stores += 1;
    }
    fn on_alloc(&mut self, _: Site, _: Ref, _: ClassId, _: usize) {
        self.allocations += 1;
    }
    fn on_field_load(&mut self, _: Site, _: Ref, _: u32) {
        self.field_loads += 1;
    }
    fn on_field_store(&mut self, _: Site, _: Ref, _: u32) {
        self.field_stores += 1;
    }
    fn on_array_load(&mut self, _: Site, _: Ref, _: usize) {
        self.array_loads += 1;
    }
    fn on_array_store(&mut self, _: Site, _: Ref, _: usize) {
        self.array_stores += 1;
    }
    fn on_bulk_copy(&mut self, _: Ref, _: usize, _: Ref, _: usize, len: usize) {
        self.bulk_copied += len as u64;
    }
    fn on_call(&mut self, _: Site, _: MethodId) {
        self.calls += 1;
    }
    fn on_return(&mut self, _: MethodId) {
        self.returns += 1;
    }
    fn on_free(&mut self, _: Ref, _: ClassId, _: usize) {
        self.frees += 1;
    }
}

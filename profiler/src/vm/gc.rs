//! Collection: gathers the roots (the reference slots of every frame, static reference fields,
//! class mirrors, interned strings, pinned handles, the thread object, the pending-reference list)
//! and runs the heap's mark-and-sweep. Frame slots are typed by reference maps (see `refmap.rs`),
//! so the collection is precise: a dead object is freed at the first collection after its last
//! reference went away.
//!
//! `java.lang.ref` as on HotSpot: the `referent` of a soft, weak or phantom reference is not
//! followed while marking. A soft reference's referent is then kept (marked, with what it reaches)
//! unless HotSpot's LRU policy would clear it (it was not read for longer than a second per free MiB
//! of heap) or the collection clears every soft reference, as one before an OutOfMemoryError does.
//! Every reference whose referent is still unmarked after that has it cleared (a phantom reference
//! too, as since JDK 9) and, when it was registered with a queue, goes on the pending list (chained
//! through `Reference.discovered`, the VM's list the JDK's Reference Handler thread takes with
//! `getAndClearReferencePendingList`), and the handler, blocked in `waitForReferencePendingList`,
//! is woken. The referent itself is freed by the same collection, so trackers see it die
//! (`on_free`) there. Final references (finalization) keep their referents strongly: the VM never
//! registers finalizers.

use super::class::{ClassId, MethodId};
use super::heap::{ObjData, Ref};
use super::refmap::RefMaps;
use super::{JThread, Tracker, Vm, VmResult};
use std::collections::HashMap;
use std::rc::Rc;

/// How the collector treats the referent of a class's instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Not a reference object, or a final reference: every reference slot is followed.
    Strong,
    Soft,
    Weak,
    Phantom,
}

/// Where `java.lang.ref` keeps what the collector needs, found once the classes are loaded.
#[derive(Debug, Clone, Copy)]
struct Layout {
    referent: u32,
    queue: u32,
    discovered: u32,
    /// `ReferenceQueue.NULL` (JDK 17; `NULL_QUEUE` in later JDKs): the static slot of "no queue".
    null_queue: Option<u32>,
    /// `SoftReference.timestamp` and the static `SoftReference.clock` (ms), once SoftReference is loaded.
    soft: Option<(u32, u32)>,
}

/// The collector's state for `java.lang.ref`.
#[derive(Default)]
pub(crate) struct References {
    /// Head of the pending list (chained through `Reference.discovered`): references the collector
    /// cleared whose queue the Reference Handler has yet to put them on. A GC root.
    pub(crate) pending: Ref,
    /// Per class id, what its instances are (extended at each collection: classes only grow).
    kinds: Vec<Kind>,
    /// For reference classes: their reference slots without `referent`.
    strong_slots: HashMap<ClassId, Box<[u32]>>,
    /// The classes of the three kinds, once loaded.
    bases: [Option<ClassId>; 3],
    layout: Option<Layout>,
}

impl<T: Tracker> Vm<T> {
    /// A collection as the allocator and `System.gc()` run it: soft references survive it unless
    /// HotSpot's LRU policy clears them.
    pub fn collect_garbage(&mut self, t: &mut JThread) -> VmResult<()> {
        self.collect(t, false)
    }

    /// The last collection before an OutOfMemoryError: it clears every soft reference whose
    /// referent is only softly reachable.
    pub fn collect_garbage_clearing_soft_references(&mut self, t: &mut JThread) -> VmResult<()> {
        self.collect(t, true)
    }

    fn collect(&mut self, t: &mut JThread, clear_all_soft: bool) -> VmResult<()> {
        let mut roots: Vec<Ref> = Vec::with_capacity(4096);
        self.thread_roots(t, &mut roots);
        for i in 0..self.threads.len() {
            if let Some(other) = self.threads[i].thread.take() {
                self.thread_roots(&other, &mut roots);
                self.threads[i].thread = Some(other);
            }
            roots.push(self.threads[i].obj);
            if let super::threads::State::Waiting { obj, .. } | super::threads::State::Blocked(obj) =
                self.threads[i].state
            {
                roots.push(obj);
            }
        }
        roots.extend(self.static_ref_slots.iter().map(|&s| self.statics[s as usize] as Ref));
        roots.extend(self.classes.iter().map(|c| c.mirror.get()));
        roots.extend(self.interned.values().copied());
        roots.extend(self.classes.iter().flat_map(|c| [c.loader, c.protection_domain, c.signers]));
        roots.extend(self.loaders.iter().copied());
        roots.extend(self.namespaces.keys().copied());
        roots.extend(self.package_modules.values().copied());
        roots.push(self.boot_unnamed_module);
        roots.extend(self.pinned.iter().copied());
        roots.extend(self.extra_roots.iter().copied());
        // What the scheduled call threw, when it ended inside a nested scheduler.
        if let Some(super::threads::Finished::Threw(e)) = self.call_done {
            roots.push(e);
        }
        roots.push(self.refs.pending);
        if let Some(&r) = roots.iter().find(|&&r| self.heap.freed_as(r).is_some()) {
            // Checked handles: a root holds an object an earlier collection freed.
            self.heap.get(r);
        }
        roots.retain(|&r| self.heap.is_live(r));

        self.update_reference_kinds();
        let layout = self.refs.layout;
        let soft_clock = layout.and_then(|l| l.soft).map(|(_, clock)| self.statics[clock as usize] as i64);
        let mut references = Vec::new();
        self.heap.begin_marking();
        self.mark_from(roots, &mut references);
        if let (Some(l), false) = (layout, clear_all_soft) {
            self.keep_soft_referents(&l, soft_clock, &mut references);
        }
        if let Some(l) = layout {
            self.clear_unreachable_referents(&l, &references);
        }

        let tracker = &mut self.tracker;
        self.heap.sweep(|r, obj| tracker.on_free(r, obj.class, obj.data.size_bytes()));
        if let (Some((_, clock)), Some(old)) = (layout.and_then(|l| l.soft), soft_clock) {
            let now_ms = self.nano_time() / 1_000_000;
            if now_ms > old {
                self.statics[clock as usize] = now_ms as u64;
            }
        }
        if self.refs.pending != 0 {
            self.wake_reference_handler();
        }
        // Grow the interval with the live heap, so collection work stays proportional to allocation
        // (with checked handles it stays as asked: collections come often, to find missed roots).
        if !self.opts.check_handles {
            self.opts.gc_interval_bytes = self.opts.gc_interval_bytes.max(self.heap.live_bytes);
        }
        self.tracker.on_gc(self.heap.collections, self.heap.allocated_bytes);
        Ok(())
    }

    /// Marks what `roots` reach; the reference objects reached (whose referents marking does not
    /// follow) are added to `references`.
    fn mark_from(&mut self, roots: Vec<Ref>, references: &mut Vec<Ref>) {
        let (classes, refs) = (&self.classes, &self.refs);
        let trace = |c: ClassId| match refs.kinds[c as usize] {
            Kind::Strong => (&classes[c as usize].ref_slots[..], false),
            _ => (&refs.strong_slots[&c][..], true),
        };
        self.heap.mark(roots, &trace, references);
    }

    /// Marks the referents of the soft references HotSpot's LRU policy (`LRUMaxHeapPolicy`) keeps,
    /// with what they reach (which may hold more soft references): those read (or made) at most a
    /// second per MiB of heap free after the last collection before `clock` (`SoftReference.clock`).
    fn keep_soft_referents(&mut self, l: &Layout, clock: Option<i64>, references: &mut Vec<Ref>) {
        let used_at_last_gc = self.heap.live_bytes.saturating_sub(self.heap.allocated_since_gc);
        let free_mib = self.opts.limits.max_heap_bytes.saturating_sub(used_at_last_gc) >> 20;
        let max_interval_ms = free_mib as i64 * 1000;
        let mut done = 0;
        loop {
            let mut kept = Vec::new();
            for &r in &references[done..] {
                let obj = self.heap.get(r);
                let ObjData::Fields(f) = &obj.data else { continue };
                if self.refs.kinds[obj.class as usize] != Kind::Soft {
                    continue;
                }
                let referent = f[l.referent as usize] as Ref;
                if referent == 0 || self.heap.is_marked(referent) {
                    continue;
                }
                let stale = match (l.soft, clock) {
                    (Some((timestamp, _)), Some(clock)) => clock - f[timestamp as usize] as i64 > max_interval_ms,
                    _ => false,
                };
                if !stale {
                    kept.push(referent);
                }
            }
            done = references.len();
            if kept.is_empty() {
                return;
            }
            self.mark_from(kept, references);
        }
    }

    /// Clears the referents marking did not reach, and puts the references that have a queue on
    /// the pending list (in the order they were found, ahead of what is pending already).
    fn clear_unreachable_referents(&mut self, l: &Layout, references: &[Ref]) {
        let null_queue = l.null_queue.map(|s| self.statics[s as usize] as Ref).unwrap_or(0);
        let mut pending = Vec::new();
        for &r in references {
            let fields = self.fields(r);
            let (referent, queue) = (fields[l.referent as usize] as Ref, fields[l.queue as usize] as Ref);
            if referent == 0 || self.heap.is_marked(referent) {
                continue;
            }
            self.set_field(r, l.referent, 0);
            if queue != 0 && queue != null_queue {
                pending.push(r);
            }
        }
        let mut next = self.refs.pending;
        for &r in pending.iter().rev() {
            self.set_field(r, l.discovered, next as u64);
            next = r;
        }
        self.refs.pending = next;
    }

    /// Extends the per-class kinds to the classes loaded since the last collection.
    fn update_reference_kinds(&mut self) {
        const BASES: [(&str, Kind); 3] = [
            ("java/lang/ref/SoftReference", Kind::Soft),
            ("java/lang/ref/WeakReference", Kind::Weak),
            ("java/lang/ref/PhantomReference", Kind::Phantom),
        ];
        for (k, (name, _)) in BASES.iter().enumerate() {
            if self.refs.bases[k].is_none() {
                self.refs.bases[k] = self.lookup_class(name);
            }
        }
        if self.refs.layout.is_none_or(|l| l.soft.is_none() || l.null_queue.is_none()) {
            self.refs.layout = self.reference_layout();
        }
        let Some(referent) = self.refs.layout.map(|l| l.referent) else {
            // No references exist before java.lang.ref.Reference is loaded.
            self.refs.kinds.resize(self.classes.len(), Kind::Strong);
            return;
        };
        for c in self.refs.kinds.len()..self.classes.len() {
            let class = &self.classes[c];
            let kind = BASES
                .iter()
                .zip(self.refs.bases)
                .find(|(_, base)| base.is_some_and(|b| class.supertypes.binary_search(&b).is_ok()))
                .map(|((_, kind), _)| *kind)
                .unwrap_or(Kind::Strong);
            if kind != Kind::Strong {
                let slots: Box<[u32]> = class.ref_slots.iter().copied().filter(|&s| s != referent).collect();
                self.refs.strong_slots.insert(c as ClassId, slots);
            }
            self.refs.kinds.push(kind);
        }
    }

    fn reference_layout(&self) -> Option<Layout> {
        let reference = self.lookup_class("java/lang/ref/Reference")?;
        let static_slot = |class: &str, names: &[&str]| {
            let c = self.lookup_class(class)?;
            names.iter().find_map(|n| self.classes[c as usize].field(n, None).filter(|f| f.is_static()).map(|f| f.slot))
        };
        let soft = self.lookup_class("java/lang/ref/SoftReference").and_then(|c| {
            Some((self.field_slot(c, "timestamp")?, static_slot("java/lang/ref/SoftReference", &["clock"])?))
        });
        Some(Layout {
            referent: self.field_slot(reference, "referent")?,
            queue: self.field_slot(reference, "queue")?,
            discovered: self.field_slot(reference, "discovered")?,
            null_queue: static_slot("java/lang/ref/ReferenceQueue", &["NULL", "NULL_QUEUE"]),
            soft,
        })
    }

    /// `Reference.hasReferencePendingList`.
    pub(crate) fn has_pending_references(&self) -> bool {
        self.refs.pending != 0
    }

    /// `Reference.getAndClearReferencePendingList`.
    pub(crate) fn take_pending_references(&mut self) -> Ref {
        std::mem::take(&mut self.refs.pending)
    }
}

impl<T: Tracker> Vm<T> {
    /// The references a thread's frames hold (typed by reference maps), its object and monitors.
    fn thread_roots(&mut self, t: &JThread, roots: &mut Vec<Ref>) {
        roots.push(t.obj);
        roots.push(t.pending_exception);
        roots.extend(t.held.iter().copied());
        for (depth, f) in t.frames.iter().enumerate() {
            let (locals, sp, max_locals) = (f.locals as usize, f.sp as usize, f.code.max_locals as usize);
            roots.push(f.monitor);
            let bci = t.frame_bci(depth);
            let maps = self.ref_maps(f.method);
            let depth = sp.saturating_sub(locals + max_locals);
            match maps.roots(bci, depth) {
                Some((local_bits, stack_bits)) => {
                    for (k, &is_ref) in local_bits.iter().enumerate() {
                        if is_ref {
                            roots.push(t.stack[locals + k] as Ref);
                        }
                    }
                    for (k, &is_ref) in stack_bits.iter().enumerate() {
                        if is_ref {
                            roots.push(t.stack[locals + max_locals + k] as Ref);
                        }
                    }
                }
                // No map (code the analysis could not reach): keep whatever looks like a handle.
                None => {
                    for &v in &t.stack[locals..sp] {
                        if v >> 32 == 0 && self.heap.is_live(v as Ref) {
                            roots.push(v as Ref);
                        }
                    }
                }
            }
        }
    }

    /// The reference maps of a method, computed on first need.
    fn ref_maps(&mut self, m: MethodId) -> Rc<RefMaps> {
        if let Some(maps) = self.ref_maps.get(&m) {
            return maps.clone();
        }
        let method = &self.methods[m as usize];
        // An obsolete method's code names its old constant pool.
        let cp = method.obsolete.clone().or_else(|| self.classes[method.class as usize].file.clone());
        let maps = match (&method.raw, cp) {
            (Some(code), Some(file)) => {
                super::refmap::compute(code, &file.constant_pool, &method.descriptor, method.is_static())
            }
            _ => super::refmap::compute(&crate::classfile::Code::default(), &Default::default(), "()V", true),
        };
        let maps = Rc::new(maps);
        self.ref_maps.insert(m, maps.clone());
        maps
    }
}

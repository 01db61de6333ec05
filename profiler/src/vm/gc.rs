//! Collection: gathers the roots (every frame's slots, static reference fields, class mirrors,
//! interned strings, pinned handles, the thread object) and runs the heap's mark-and-sweep.
//!
//! Frame slots are scanned conservatively: a slot whose value is a live handle keeps that object
//! alive. The heap never moves objects, so this can only retain garbage, never free a live object.

use super::heap::Ref;
use super::{JThread, Tracker, Vm, VmResult};

impl<T: Tracker> Vm<T> {
    pub fn collect_garbage(&mut self, t: &mut JThread) -> VmResult<()> {
        let mut roots: Vec<Ref> = Vec::with_capacity(4096);
        for f in &t.frames {
            for &v in &t.stack[f.locals as usize..f.sp as usize] {
                if v >> 32 == 0 && self.heap.is_live(v as Ref) {
                    roots.push(v as Ref);
                }
            }
        }
        roots.push(t.obj);
        roots.extend(self.static_ref_slots.iter().map(|&s| self.statics[s as usize] as Ref));
        roots.extend(self.classes.iter().map(|c| c.mirror.get()));
        roots.extend(self.interned.values().copied());
        roots.extend(self.pinned.iter().copied());
        roots.extend(self.extra_roots.iter().copied());
        let classes = &self.classes;
        let tracker = &mut self.tracker;
        self.heap.collect(roots, &|c| &classes[c as usize].ref_slots, |r, obj| {
            tracker.on_free(r, obj.class, obj.data.size_bytes());
        });
        // Grow the interval with the live heap, so collection work stays proportional to allocation.
        self.opts.gc_interval_bytes = self.opts.gc_interval_bytes.max(self.heap.live_bytes);
        self.tracker.on_gc(self.heap.collections, self.heap.allocated_bytes);
        Ok(())
    }
}

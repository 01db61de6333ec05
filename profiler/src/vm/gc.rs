//! Collection: gathers the roots (the reference slots of every frame, static reference fields,
//! class mirrors, interned strings, pinned handles, the thread object) and runs the heap's
//! mark-and-sweep. Frame slots are typed by reference maps (see `refmap.rs`), so the collection is
//! precise: a dead object is freed at the first collection after its last reference went away.

use super::class::MethodId;
use super::heap::Ref;
use super::refmap::RefMaps;
use super::{JThread, Tracker, Vm, VmResult};
use std::rc::Rc;

impl<T: Tracker> Vm<T> {
    pub fn collect_garbage(&mut self, t: &mut JThread) -> VmResult<()> {
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
        roots.extend(self.classes.iter().flat_map(|c| [c.loader, c.protection_domain]));
        roots.extend(self.loaders.iter().copied());
        roots.extend(self.namespaces.keys().copied());
        roots.extend(self.package_modules.values().copied());
        roots.push(self.boot_unnamed_module);
        roots.extend(self.pinned.iter().copied());
        roots.extend(self.extra_roots.iter().copied());
        roots.retain(|&r| self.heap.is_live(r));
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

impl<T: Tracker> Vm<T> {
    /// The references a thread's frames hold (typed by reference maps), its object and monitors.
    fn thread_roots(&mut self, t: &JThread, roots: &mut Vec<Ref>) {
        roots.push(t.obj);
        roots.push(t.pending_exception);
        roots.extend(t.held.iter().copied());
        for f in &t.frames {
            let (locals, sp, max_locals) = (f.locals as usize, f.sp as usize, f.code.max_locals as usize);
            roots.push(f.monitor);
            let bci = f.code.bci.get(f.pc.saturating_sub(1) as usize).copied().unwrap_or(0);
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
        let cp = self.classes[method.class as usize].file.clone();
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

//! Shadow storage for value-flow trackers (DESIGN §3): a tag per operand-stack and local slot of
//! every thread ([`ShadowStack`]) and per instance field, static field and array element
//! ([`ShadowHeap`]). A tracker picks its tag type (a graph node, a cost, a taint) and forwards the
//! `flow_*` hooks here; bulk copies move element tags one by one.

use crate::vm::heap::Ref;
use crate::vm::tracker::{Bulk, HeapLoc};

/// Per-thread slot shadows, indexed like the thread's slot stack.
pub struct ShadowStack<T: Copy + Default> {
    /// The running thread's stack; the others' are parked in `parked` while they do not run.
    stack: Vec<T>,
    parked: Vec<Vec<T>>,
    current: usize,
}

impl<T: Copy + Default> Default for ShadowStack<T> {
    fn default() -> Self {
        ShadowStack { stack: Vec::new(), parked: vec![Vec::new()], current: 0 }
    }
}

impl<T: Copy + Default> ShadowStack<T> {
    #[inline(always)]
    pub fn slot(&mut self, i: usize) -> &mut T {
        if i >= self.stack.len() {
            self.stack.resize(i + 256, T::default());
        }
        &mut self.stack[i]
    }

    #[inline(always)]
    pub fn get(&mut self, i: usize) -> T {
        *self.slot(i)
    }

    #[inline(always)]
    pub fn set(&mut self, i: usize, tag: T) {
        *self.slot(i) = tag;
    }

    #[inline(always)]
    pub fn copy(&mut self, src: usize, dst: usize) {
        let tag = self.get(src);
        self.set(dst, tag);
    }

    /// Slot `base + i` gets what slot `from[i]` held.
    pub fn shuffle(&mut self, base: usize, from: &[usize]) {
        let mut tags = [T::default(); 8];
        for (k, &s) in from.iter().enumerate() {
            tags[k] = self.get(s);
        }
        for (k, tag) in tags.iter().take(from.len()).enumerate() {
            self.set(base + k, *tag);
        }
    }

    /// Switches to thread `thread`'s shadows.
    pub fn switch_to(&mut self, thread: usize) {
        if thread == self.current {
            return;
        }
        if thread >= self.parked.len() {
            self.parked.resize_with(thread + 1, Vec::new);
        }
        std::mem::swap(&mut self.stack, &mut self.parked[self.current]);
        std::mem::swap(&mut self.stack, &mut self.parked[thread]);
        self.current = thread;
    }
}

/// Shadows of heap locations: per object, one tag per field slot or element, allocated on the
/// first store of a non-default tag (so objects that only hold untagged values cost nothing).
pub struct ShadowHeap<T: Copy + Default + PartialEq> {
    objects: Vec<Option<Box<[T]>>>,
    statics: Vec<T>,
}

impl<T: Copy + Default + PartialEq> Default for ShadowHeap<T> {
    fn default() -> Self {
        ShadowHeap { objects: Vec::new(), statics: Vec::new() }
    }
}

impl<T: Copy + Default + PartialEq> ShadowHeap<T> {
    pub fn get(&self, loc: HeapLoc) -> T {
        match loc {
            HeapLoc::Static { slot } => self.statics.get(slot as usize).copied().unwrap_or_default(),
            HeapLoc::Field { obj, slot } => self.object_get(obj, slot as usize),
            HeapLoc::Element { array, index } => self.object_get(array, index as usize),
        }
    }

    pub fn set(&mut self, loc: HeapLoc, tag: T) {
        match loc {
            HeapLoc::Static { slot } => {
                let s = slot as usize;
                if s >= self.statics.len() {
                    if tag == T::default() {
                        return;
                    }
                    self.statics.resize(s + 1, T::default());
                }
                self.statics[s] = tag;
            }
            HeapLoc::Field { obj, slot } => self.object_set(obj, slot as usize, tag),
            HeapLoc::Element { array, index } => self.object_set(array, index as usize, tag),
        }
    }

    fn object_get(&self, obj: Ref, i: usize) -> T {
        match self.objects.get(obj as usize) {
            Some(Some(tags)) => tags.get(i).copied().unwrap_or_default(),
            _ => T::default(),
        }
    }

    fn object_set(&mut self, obj: Ref, i: usize, tag: T) {
        let o = obj as usize;
        if o >= self.objects.len() {
            if tag == T::default() {
                return;
            }
            self.objects.resize_with(o + 1, || None);
        }
        let entry = &mut self.objects[o];
        match entry {
            Some(tags) if i < tags.len() => tags[i] = tag,
            _ if tag == T::default() => {}
            _ => {
                // Grown past the slot written, geometrically: an array filled front to back
                // reallocates its shadow a logarithmic number of times, not once per element.
                let mut tags = entry.take().map(Vec::from).unwrap_or_default();
                tags.resize((i + 1).max(tags.len() * 2), T::default());
                tags[i] = tag;
                *entry = Some(tags.into_boxed_slice());
            }
        }
    }

    /// Elements (or field slots) `[src_pos, src_pos + len)` of `src` were copied to `dst` at `dst_pos`.
    pub fn bulk_copy(&mut self, src: Ref, src_pos: usize, dst: Ref, dst_pos: usize, len: usize, _: Bulk) {
        let tags: Vec<T> = (0..len).map(|i| self.object_get(src, src_pos + i)).collect();
        for (i, tag) in tags.into_iter().enumerate() {
            self.object_set(dst, dst_pos + i, tag);
        }
    }

    /// The object was freed: its handle may come back as a new object with untagged contents.
    pub fn free(&mut self, obj: Ref) {
        if let Some(e) = self.objects.get_mut(obj as usize) {
            *e = None;
        }
    }

    pub fn bytes(&self) -> usize {
        self.objects.capacity() * std::mem::size_of::<Option<Box<[T]>>>()
            + self.objects.iter().flatten().map(|t| t.len() * std::mem::size_of::<T>()).sum::<usize>()
            + self.statics.capacity() * std::mem::size_of::<T>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_shadows_follow_stores_copies_and_frees() {
        let mut h: ShadowHeap<u32> = ShadowHeap::default();
        h.set(HeapLoc::Field { obj: 5, slot: 2 }, 7);
        h.set(HeapLoc::Element { array: 9, index: 3 }, 8);
        h.set(HeapLoc::Static { slot: 4 }, 9);
        assert_eq!(h.get(HeapLoc::Field { obj: 5, slot: 2 }), 7);
        assert_eq!(h.get(HeapLoc::Field { obj: 5, slot: 1 }), 0);
        assert_eq!(h.get(HeapLoc::Static { slot: 4 }), 9);
        h.bulk_copy(9, 2, 11, 10, 3, Bulk::Elements(4));
        assert_eq!(h.get(HeapLoc::Element { array: 11, index: 11 }), 8);
        assert_eq!(h.get(HeapLoc::Element { array: 11, index: 10 }), 0);
        h.free(9);
        assert_eq!(h.get(HeapLoc::Element { array: 9, index: 3 }), 0);
        // Untagged stores to unseen objects allocate nothing.
        let before = h.bytes();
        h.set(HeapLoc::Field { obj: 1000, slot: 0 }, 0);
        assert_eq!(h.bytes(), before);
    }

    #[test]
    fn stack_shadows_are_per_thread() {
        let mut s: ShadowStack<u8> = ShadowStack::default();
        s.set(3, 1);
        s.shuffle(2, &[3, 2]);
        assert_eq!((s.get(2), s.get(3)), (1, 0));
        s.switch_to(1);
        assert_eq!(s.get(2), 0);
        s.set(2, 5);
        s.switch_to(0);
        assert_eq!(s.get(2), 1);
        s.switch_to(1);
        assert_eq!(s.get(2), 5);
    }
}

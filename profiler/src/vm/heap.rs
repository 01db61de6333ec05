//! The Java heap: objects addressed by 32-bit handles (0 is `null`), a free list of handles,
//! and a precise mark-and-sweep collector whose roots the VM supplies (marking may be resumed from
//! more roots before the sweep, which is how `gc.rs` keeps softly reachable objects).
//!
//! With handles checked ([`Heap::check_handles`], a debug mode), freed handles are never reused:
//! a handle the collector freed while something still held it fails at its first use, naming the
//! object it was, instead of silently reading whatever object took its place.

use super::class::{ClassId, Elem};

pub type Ref = u32;

#[derive(Debug, Clone)]
pub enum ObjData {
    /// Instance fields, one slot each (longs and doubles too).
    Fields(Box<[u64]>),
    Bytes(Box<[i8]>),
    Chars(Box<[u16]>),
    Shorts(Box<[i16]>),
    Ints(Box<[i32]>),
    Longs(Box<[i64]>),
    Floats(Box<[f32]>),
    Doubles(Box<[f64]>),
    Refs(Box<[Ref]>),
}

impl ObjData {
    pub fn new_array(elem: Elem, len: usize) -> ObjData {
        match elem {
            Elem::Boolean | Elem::Byte => ObjData::Bytes(vec![0; len].into()),
            Elem::Char => ObjData::Chars(vec![0; len].into()),
            Elem::Short => ObjData::Shorts(vec![0; len].into()),
            Elem::Int => ObjData::Ints(vec![0; len].into()),
            Elem::Long => ObjData::Longs(vec![0; len].into()),
            Elem::Float => ObjData::Floats(vec![0.0; len].into()),
            Elem::Double => ObjData::Doubles(vec![0.0; len].into()),
            Elem::Ref => ObjData::Refs(vec![0; len].into()),
        }
    }

    pub fn array_len(&self) -> Option<usize> {
        Some(match self {
            ObjData::Fields(_) => return None,
            ObjData::Bytes(a) => a.len(),
            ObjData::Chars(a) => a.len(),
            ObjData::Shorts(a) => a.len(),
            ObjData::Ints(a) => a.len(),
            ObjData::Longs(a) => a.len(),
            ObjData::Floats(a) => a.len(),
            ObjData::Doubles(a) => a.len(),
            ObjData::Refs(a) => a.len(),
        })
    }

    /// Size as HotSpot would lay it out with compressed oops: a 12/16-byte header, 8-byte alignment.
    /// Bytes one array element takes in Java's heap.
    pub fn elem_bytes(&self) -> u8 {
        match self {
            ObjData::Bytes(_) => 1,
            ObjData::Chars(_) | ObjData::Shorts(_) => 2,
            ObjData::Longs(_) | ObjData::Doubles(_) => 8,
            _ => 4,
        }
    }

    pub fn size_bytes(&self) -> usize {
        let raw = match self {
            ObjData::Fields(f) => 12 + f.len() * 4,
            other => {
                let per = match other {
                    ObjData::Bytes(_) => 1,
                    ObjData::Chars(_) | ObjData::Shorts(_) => 2,
                    ObjData::Ints(_) | ObjData::Floats(_) | ObjData::Refs(_) => 4,
                    _ => 8,
                };
                16 + other.array_len().unwrap_or(0) * per
            }
        };
        (raw + 7) & !7
    }
}

#[derive(Debug, Clone)]
pub struct Object {
    pub class: ClassId,
    /// Identity hash, assigned on first request (0 = none yet).
    pub hash: i32,
    pub data: ObjData,
}

#[derive(Default)]
pub struct Heap {
    objects: Vec<Option<Object>>,
    free: Vec<Ref>,
    marks: Vec<bool>,
    /// Bytes allocated since the VM started (the lifetime analysis' clock).
    pub allocated_bytes: u64,
    /// Bytes currently live, as of the last collection plus what was allocated since.
    pub live_bytes: u64,
    /// Bytes counted toward the next collection: allocated since the last one, or, when `main`
    /// starts with a young generation asked for, set ahead so collections fall at a fixed phase
    /// from `main` (`Options::first_collection_in_main`); Eden's usage and the soft-reference
    /// policy read it bounded by the live heap.
    pub allocated_since_gc: u64,
    pub collections: u64,
    pub objects_allocated: u64,
    /// Checked handles: what each freed handle held (its class, the collection that freed it);
    /// None when handles are reused as usual.
    freed: Option<std::collections::HashMap<Ref, (ClassId, u64)>>,
}

impl Heap {
    pub fn new() -> Heap {
        Heap { objects: vec![None], ..Default::default() }
    }

    /// Turns on checked handles (before the first collection): freed handles are kept out of use
    /// and remembered, so a use of one is caught at once.
    pub fn check_handles(&mut self) {
        self.freed.get_or_insert_with(Default::default);
    }

    /// What a freed handle held, with checked handles on: its class and the collection that freed it.
    pub fn freed_as(&self, r: Ref) -> Option<(ClassId, u64)> {
        self.freed.as_ref()?.get(&r).copied()
    }

    pub fn alloc(&mut self, class: ClassId, data: ObjData) -> Ref {
        let size = data.size_bytes() as u64;
        self.allocated_bytes += size;
        self.allocated_since_gc += size;
        self.live_bytes += size;
        self.objects_allocated += 1;
        let obj = Some(Object { class, hash: 0, data });
        match self.free.pop() {
            Some(r) => {
                self.objects[r as usize] = obj;
                r
            }
            None => {
                self.objects.push(obj);
                (self.objects.len() - 1) as Ref
            }
        }
    }

    #[inline(always)]
    pub fn get(&self, r: Ref) -> &Object {
        match &self.objects[r as usize] {
            Some(o) => o,
            None => self.dangling(r),
        }
    }

    #[inline(always)]
    pub fn get_mut(&mut self, r: Ref) -> &mut Object {
        if self.objects[r as usize].is_none() {
            self.dangling(r)
        }
        self.objects[r as usize].as_mut().expect("checked above")
    }

    #[cold]
    #[inline(never)]
    fn dangling(&self, r: Ref) -> ! {
        match self.freed_as(r) {
            Some((class, gc)) => panic!(
                "dangling object handle {r}: collection {gc} freed this object (class id {class}) while it was still reachable"
            ),
            None => panic!("dangling object handle {r}: the collector freed an object that was still reachable"),
        }
    }

    /// Every object on the heap (some may be unreachable until the next collection).
    pub fn objects(&self) -> impl Iterator<Item = (Ref, &Object)> {
        self.objects.iter().enumerate().filter_map(|(r, o)| o.as_ref().map(|o| (r as Ref, o)))
    }

    pub fn is_live(&self, r: Ref) -> bool {
        r != 0 && matches!(self.objects.get(r as usize), Some(Some(_)))
    }

    /// Starts a collection: every object is unmarked.
    pub fn begin_marking(&mut self) {
        self.marks.clear();
        self.marks.resize(self.objects.len(), false);
    }

    /// Whether the marking so far reached `r`.
    pub fn is_marked(&self, r: Ref) -> bool {
        self.marks.get(r as usize).copied().unwrap_or(false)
    }

    /// Marks what `roots` reach, adding to the marks made since [`Heap::begin_marking`]. `trace`
    /// tells which instance slots of a class the collector follows, and whether its instances are
    /// references (`java.lang.ref`) whose referent it does not follow: those it reaches are pushed
    /// on `references`, for the caller to decide about their referents.
    pub fn mark<'c>(
        &mut self,
        roots: impl IntoIterator<Item = Ref>,
        trace: &dyn Fn(ClassId) -> (&'c [u32], bool),
        references: &mut Vec<Ref>,
    ) {
        let mut work: Vec<Ref> = Vec::new();
        for r in roots {
            if r != 0
                && (r as usize) < self.objects.len()
                && !self.marks[r as usize]
                && self.objects[r as usize].is_some()
            {
                self.marks[r as usize] = true;
                work.push(r);
            }
        }
        while let Some(r) = work.pop() {
            let obj = self.objects[r as usize].as_ref().expect("marked objects are live");
            let mut visit = |c: Ref| {
                if c != 0 && !self.marks[c as usize] {
                    self.marks[c as usize] = true;
                    work.push(c);
                }
            };
            match &obj.data {
                ObjData::Fields(f) => {
                    let (slots, is_reference) = trace(obj.class);
                    for &s in slots {
                        visit(f[s as usize] as Ref);
                    }
                    if is_reference {
                        references.push(r);
                    }
                }
                ObjData::Refs(a) => a.iter().for_each(|&c| visit(c)),
                _ => {}
            }
        }
    }

    /// Ends a collection: frees every object the marking did not reach, telling `on_free` of each.
    /// Returns how many were freed.
    pub fn sweep(&mut self, mut on_free: impl FnMut(Ref, &Object)) -> usize {
        let mut freed = 0;
        let mut freed_bytes = 0u64;
        for i in 1..self.objects.len() {
            if !self.marks[i] {
                if let Some(obj) = self.objects[i].take() {
                    freed_bytes += obj.data.size_bytes() as u64;
                    on_free(i as Ref, &obj);
                    match &mut self.freed {
                        Some(freed) => _ = freed.insert(i as Ref, (obj.class, self.collections + 1)),
                        None => self.free.push(i as Ref),
                    }
                    freed += 1;
                }
            }
        }
        self.live_bytes = self.live_bytes.saturating_sub(freed_bytes);
        self.allocated_since_gc = 0;
        self.collections += 1;
        freed
    }
}

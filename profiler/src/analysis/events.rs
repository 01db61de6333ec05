//! The event schema: what an analysis that needs no view into the VM during the run is told, as
//! data ([`Event`]), and its compact recorded form ([`Recorder`], [`replay`]), so that such an
//! analysis (a [`Consumer`]) can run inline or on a thread of its own with the same result
//! (`analysis::placement`).
//!
//! Each event is one tracker hook (`vm::Tracker`) with its arguments, and what the hook would
//! have asked the VM at that moment already answered: an allocation carries the user frame that
//! made it, a call whether the callee is the user's code. The recorded form is a stream of 32-bit words: a tag word (the kind in the low byte,
//! a small operand above it) and the event's fields; slot lists follow their event.

use crate::vm::class::{Class, ClassId, Method, MethodId};
use crate::vm::heap::Ref;
use crate::vm::tracker::{Alloc, Bulk, HeapLoc, RefPass, RefUse, Sink, Site, Value};

/// One hook call of a run, as data (see `vm::Tracker` for what each means).
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// Instructions run so far, on all threads. Only the run's total, told before `finish`, is sure
    /// to be told (an analysis on its own thread is told only that).
    Instructions(u64),
    /// The events that follow belong to this thread: told whenever it changes.
    Thread(usize),
    /// An allocation, and the innermost user frame of its thread then (`Context::user_frame`).
    Alloc {
        alloc: Alloc,
        user_frame: Option<Site>,
    },
    BulkCopy {
        src: Ref,
        src_pos: usize,
        dst: Ref,
        dst_pos: usize,
        len: usize,
        unit: Bulk,
    },
    /// A call; `user`: whether the callee is the user's code (`tracker::is_user_method`).
    Call {
        site: Site,
        callee: MethodId,
        depth: usize,
        this: Ref,
        user: bool,
    },
    Return(MethodId),
    Native {
        site: Site,
        callee: MethodId,
    },
    Free {
        obj: Ref,
        class: ClassId,
        bytes: usize,
    },
    Gc {
        collections: u64,
        allocated_bytes: u64,
    },
    New(usize),
    Const {
        site: Site,
        dst: usize,
    },
    Move {
        site: Site,
        src: usize,
        dst: usize,
    },
    Shuffle {
        base: usize,
        from: &'a [usize],
    },
    Compute {
        site: Site,
        srcs: &'a [usize],
        dst: Option<usize>,
    },
    Consume {
        site: Site,
        srcs: &'a [usize],
        sink: Sink,
    },
    Deref {
        site: Site,
        slot: usize,
    },
    Load {
        site: Site,
        loc: HeapLoc,
        value: Value,
        dst: usize,
    },
    Store {
        site: Site,
        loc: HeapLoc,
        value: Value,
        bytes: u8,
        src: usize,
    },
    Use {
        site: Site,
        obj: Ref,
        how: RefUse,
    },
    Pass {
        site: Site,
        obj: Ref,
        how: RefPass,
    },
}

/// An analysis fed by events alone: it can run inline or on its own thread
/// (`analysis::placement::Placed`), and finishes on the VM's thread once the run is over.
pub trait Consumer: Send + 'static {
    /// Whether the run ends with one more collection (`Tracker::FINAL_COLLECTION`).
    const FINAL_COLLECTION: bool = false;
    /// Whether the analysis reads `Event::Pass` (references passed on): when none does, they are
    /// not recorded, which the VM's thread would pay for at every call and return.
    const PASSES: bool = true;
    /// Whether the analysis reads value flow (`New` to `Deref`, `Load`, `Use`): when none does,
    /// only stores of it are recorded.
    const FLOW: bool = true;
    fn consume(&mut self, e: &Event<'_>);
    /// Whether a part of the analysis runs on a thread of its own beside the one that feeds it
    /// (a `Placed` consumer), and so takes whole batches rather than their events.
    fn beside(&self) -> bool {
        false
    }
    /// A batch of recorded events: replayed here, or handed whole to the parts that run beside.
    fn consume_batch(&mut self, words: &Batch)
    where
        Self: Sized,
    {
        replay(words, self);
    }
    /// The run is over and every event consumed (`Tracker::finish`).
    fn finish(&mut self, methods: &[Method], classes: &[Class]);
}

/// Recorded events as they pass between threads: shared by every thread that replays them.
pub type Batch = std::sync::Arc<Vec<u32>>;

/// An analysis that may be off.
impl<C: Consumer> Consumer for Option<C> {
    const FINAL_COLLECTION: bool = C::FINAL_COLLECTION;
    const PASSES: bool = C::PASSES;
    const FLOW: bool = C::FLOW;
    #[inline(always)]
    fn consume(&mut self, e: &Event<'_>) {
        if let Some(c) = self {
            c.consume(e);
        }
    }
    fn beside(&self) -> bool {
        self.as_ref().is_some_and(C::beside)
    }
    fn consume_batch(&mut self, words: &Batch) {
        if let Some(c) = self {
            c.consume_batch(words);
        }
    }
    fn finish(&mut self, methods: &[Method], classes: &[Class]) {
        if let Some(c) = self {
            c.finish(methods, classes);
        }
    }
}

/// Two analyses fed the same events, one after the other (on one thread: the events recorded once).
impl<A: Consumer, B: Consumer> Consumer for (A, B) {
    const FINAL_COLLECTION: bool = A::FINAL_COLLECTION || B::FINAL_COLLECTION;
    const PASSES: bool = A::PASSES || B::PASSES;
    const FLOW: bool = A::FLOW || B::FLOW;
    #[inline(always)]
    fn consume(&mut self, e: &Event<'_>) {
        self.0.consume(e);
        self.1.consume(e);
    }
    fn beside(&self) -> bool {
        self.0.beside() || self.1.beside()
    }
    fn consume_batch(&mut self, words: &Batch) {
        // Replayed once for both, unless one takes it whole.
        if self.beside() {
            self.0.consume_batch(words);
            self.1.consume_batch(words);
        } else {
            replay(words, self);
        }
    }
    fn finish(&mut self, methods: &[Method], classes: &[Class]) {
        self.0.finish(methods, classes);
        self.1.finish(methods, classes);
    }
}

// Tags of the recorded form.
const INSTRUCTIONS: u32 = 0;
const THREAD: u32 = 1;
const ALLOC: u32 = 2;
const BULK_COPY: u32 = 3;
const CALL: u32 = 4;
const RETURN: u32 = 5;
const NATIVE: u32 = 6;
const FREE: u32 = 7;
const GC: u32 = 8;
const NEW: u32 = 9;
const CONST: u32 = 10;
const MOVE: u32 = 11;
const SHUFFLE: u32 = 12;
const COMPUTE: u32 = 13;
const CONSUME: u32 = 14;
const DEREF: u32 = 15;
const LOAD: u32 = 16;
const STORE: u32 = 17;
const USE: u32 = 18;
const PASS: u32 = 19;

const NO_SLOT: u32 = u32::MAX;

/// Appends events to a word buffer.
#[derive(Debug, Default)]
pub struct Recorder {
    pub words: Vec<u32>,
}

impl Recorder {
    #[inline(always)]
    fn site(&mut self, s: Site) {
        self.words.extend_from_slice(&[s.method, s.pc]);
    }

    #[inline(always)]
    fn wide(&mut self, v: u64) {
        self.words.extend_from_slice(&[v as u32, (v >> 32) as u32]);
    }

    #[inline(always)]
    fn slots(&mut self, slots: &[usize]) {
        self.words.extend(slots.iter().map(|&s| slot(s)));
    }

    #[inline(always)]
    fn loc(loc: HeapLoc) -> (u32, u32, u32) {
        match loc {
            HeapLoc::Field { obj, slot } => (0, obj, slot),
            HeapLoc::Static { slot } => (1, 0, slot),
            HeapLoc::Element { array, index } => (2, array, index),
        }
    }

    #[inline(always)]
    pub fn record(&mut self, e: &Event<'_>) {
        match *e {
            Event::Instructions(n) => {
                self.words.push(INSTRUCTIONS);
                self.wide(n);
            }
            Event::Thread(t) => self.words.extend_from_slice(&[THREAD, t as u32]),
            Event::Alloc { alloc: a, user_frame } => {
                self.words.push(ALLOC | (user_frame.is_some() as u32) << 8);
                self.site(a.site);
                self.words.extend_from_slice(&[a.obj, a.class]);
                self.wide(a.bytes as u64);
                self.words.extend_from_slice(&[a.owner, slot(a.dst)]);
                self.site(user_frame.unwrap_or_default());
            }
            Event::BulkCopy { src, src_pos, dst, dst_pos, len, unit } => {
                let unit = match unit {
                    Bulk::Fields => 0,
                    Bulk::Elements(size) => 1 + size as u32,
                };
                self.words.extend_from_slice(&[
                    BULK_COPY | unit << 8,
                    src,
                    src_pos as u32,
                    dst,
                    dst_pos as u32,
                    len as u32,
                ]);
            }
            Event::Call { site, callee, depth, this, user } => {
                self.words.push(CALL | (user as u32) << 8);
                self.site(site);
                self.words.extend_from_slice(&[callee, depth as u32, this]);
            }
            Event::Return(m) => self.words.extend_from_slice(&[RETURN, m]),
            Event::Native { site, callee } => {
                self.words.push(NATIVE);
                self.site(site);
                self.words.push(callee);
            }
            Event::Free { obj, class, bytes } => {
                self.words.extend_from_slice(&[FREE, obj, class]);
                self.wide(bytes as u64);
            }
            Event::Gc { collections, allocated_bytes } => {
                self.words.push(GC);
                self.wide(collections);
                self.wide(allocated_bytes);
            }
            Event::New(dst) => self.words.extend_from_slice(&[NEW, slot(dst)]),
            Event::Const { site, dst } => {
                self.words.push(CONST);
                self.site(site);
                self.words.push(slot(dst));
            }
            Event::Move { site, src, dst } => {
                self.words.extend_from_slice(&[MOVE, site.method, site.pc, slot(src), slot(dst)]);
            }
            Event::Shuffle { base, from } => {
                self.words.extend_from_slice(&[SHUFFLE | (from.len() as u32) << 8, slot(base)]);
                self.slots(from);
            }
            Event::Compute { site, srcs, dst } => {
                let dst = dst.map_or(NO_SLOT, slot);
                self.words.extend_from_slice(&[COMPUTE | (srcs.len() as u32) << 8, site.method, site.pc, dst]);
                self.slots(srcs);
            }
            Event::Consume { site, srcs, sink } => {
                let sink = match sink {
                    Sink::Branch => 0,
                    Sink::Native => 1,
                };
                self.words.extend_from_slice(&[CONSUME | (srcs.len() as u32) << 8, site.method, site.pc, sink]);
                self.slots(srcs);
            }
            Event::Deref { site, slot: s } => self.words.extend_from_slice(&[DEREF, site.method, site.pc, slot(s)]),
            Event::Load { site, loc, value, dst } => {
                let (kind, a, b) = Self::loc(loc);
                self.words.extend_from_slice(&[
                    LOAD | kind << 8 | (value.is_ref as u32) << 16,
                    site.method,
                    site.pc,
                    a,
                    b,
                    value.bits as u32,
                    (value.bits >> 32) as u32,
                    slot(dst),
                ]);
            }
            Event::Store { site, loc, value, bytes, src } => {
                let (kind, a, b) = Self::loc(loc);
                self.words.extend_from_slice(&[
                    STORE | kind << 8 | (value.is_ref as u32) << 16 | (bytes as u32) << 24,
                    site.method,
                    site.pc,
                    a,
                    b,
                    value.bits as u32,
                    (value.bits >> 32) as u32,
                    slot(src),
                ]);
            }
            Event::Use { site, obj, how } => {
                let how = match how {
                    RefUse::Access => 0,
                    RefUse::Receiver => 1,
                    RefUse::Test => 2,
                    RefUse::Native => 3,
                };
                self.words.extend_from_slice(&[USE | how << 8, site.method, site.pc, obj]);
            }
            Event::Pass { site, obj, how } => {
                let (kind, m) = match how {
                    RefPass::Argument(m) => (0, m),
                    RefPass::Return => (1, 0),
                };
                self.words.extend_from_slice(&[PASS | kind << 8, site.method, site.pc, obj, m]);
            }
        }
    }
}

/// A slot index in the recorded form (slot stacks are far smaller than 4 G slots).
#[inline(always)]
fn slot(s: usize) -> u32 {
    debug_assert!(s < NO_SLOT as usize);
    s as u32
}

/// Feeds the events recorded in `words` to `c`, in order.
pub fn replay<C: Consumer>(words: &[u32], c: &mut C) {
    let mut list: Vec<usize> = Vec::new();
    let mut i = 0;
    let site = |i: usize| Site { method: words[i], pc: words[i + 1] };
    let wide = |i: usize| words[i] as u64 | (words[i + 1] as u64) << 32;
    let loc = |kind: u32, a: u32, b: u32| match kind {
        0 => HeapLoc::Field { obj: a, slot: b },
        1 => HeapLoc::Static { slot: b },
        _ => HeapLoc::Element { array: a, index: b },
    };
    while i < words.len() {
        let tag = words[i];
        let aux = tag >> 8;
        let w = &words[i + 1..];
        let len = match tag & 0xff {
            INSTRUCTIONS => {
                c.consume(&Event::Instructions(wide(i + 1)));
                3
            }
            THREAD => {
                c.consume(&Event::Thread(w[0] as usize));
                2
            }
            ALLOC => {
                let alloc = Alloc {
                    site: site(i + 1),
                    obj: w[2],
                    class: w[3],
                    bytes: wide(i + 5) as usize,
                    owner: w[6],
                    dst: w[7] as usize,
                };
                let user_frame = (aux != 0).then(|| site(i + 9));
                c.consume(&Event::Alloc { alloc, user_frame });
                11
            }
            BULK_COPY => {
                let unit = match aux {
                    0 => Bulk::Fields,
                    n => Bulk::Elements((n - 1) as u8),
                };
                let e = Event::BulkCopy {
                    src: w[0],
                    src_pos: w[1] as usize,
                    dst: w[2],
                    dst_pos: w[3] as usize,
                    len: w[4] as usize,
                    unit,
                };
                c.consume(&e);
                6
            }
            CALL => {
                let e =
                    Event::Call { site: site(i + 1), callee: w[2], depth: w[3] as usize, this: w[4], user: aux != 0 };
                c.consume(&e);
                6
            }
            RETURN => {
                c.consume(&Event::Return(w[0]));
                2
            }
            NATIVE => {
                c.consume(&Event::Native { site: site(i + 1), callee: w[2] });
                4
            }
            FREE => {
                c.consume(&Event::Free { obj: w[0], class: w[1], bytes: wide(i + 3) as usize });
                5
            }
            GC => {
                c.consume(&Event::Gc { collections: wide(i + 1), allocated_bytes: wide(i + 3) });
                5
            }
            NEW => {
                c.consume(&Event::New(w[0] as usize));
                2
            }
            CONST => {
                c.consume(&Event::Const { site: site(i + 1), dst: w[2] as usize });
                4
            }
            MOVE => {
                c.consume(&Event::Move { site: site(i + 1), src: w[2] as usize, dst: w[3] as usize });
                5
            }
            SHUFFLE => {
                let n = aux as usize;
                fill(&mut list, &w[1..1 + n]);
                c.consume(&Event::Shuffle { base: w[0] as usize, from: &list });
                2 + n
            }
            COMPUTE => {
                let n = aux as usize;
                fill(&mut list, &w[3..3 + n]);
                let dst = (w[2] != NO_SLOT).then_some(w[2] as usize);
                c.consume(&Event::Compute { site: site(i + 1), srcs: &list, dst });
                4 + n
            }
            CONSUME => {
                let n = aux as usize;
                fill(&mut list, &w[3..3 + n]);
                let sink = if w[2] == 0 { Sink::Branch } else { Sink::Native };
                c.consume(&Event::Consume { site: site(i + 1), srcs: &list, sink });
                4 + n
            }
            DEREF => {
                c.consume(&Event::Deref { site: site(i + 1), slot: w[2] as usize });
                4
            }
            LOAD | STORE => {
                let value = Value { bits: wide(i + 5), is_ref: (aux >> 8) & 1 != 0 };
                let (site, loc, slot) = (site(i + 1), loc(aux & 0xff, w[2], w[3]), w[6] as usize);
                let e = if tag & 0xff == LOAD {
                    Event::Load { site, loc, value, dst: slot }
                } else {
                    Event::Store { site, loc, value, bytes: (aux >> 16) as u8, src: slot }
                };
                c.consume(&e);
                8
            }
            USE => {
                let how = match aux {
                    0 => RefUse::Access,
                    1 => RefUse::Receiver,
                    2 => RefUse::Test,
                    _ => RefUse::Native,
                };
                c.consume(&Event::Use { site: site(i + 1), obj: w[2], how });
                4
            }
            PASS => {
                let how = if aux == 0 { RefPass::Argument(w[3]) } else { RefPass::Return };
                c.consume(&Event::Pass { site: site(i + 1), obj: w[2], how });
                5
            }
            other => unreachable!("event tag {other} was never recorded"),
        };
        i += len;
    }
}

fn fill(list: &mut Vec<usize>, words: &[u32]) {
    list.clear();
    list.extend(words.iter().map(|&w| w as usize));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps the events it is fed, owned.
    #[derive(Default)]
    struct Keep(Vec<String>);

    impl Consumer for Keep {
        fn consume(&mut self, e: &Event<'_>) {
            self.0.push(format!("{e:?}"));
        }
        fn finish(&mut self, _: &[Method], _: &[Class]) {}
    }

    /// Every kind of event, with every variant of its operands, comes back from the recorded form
    /// exactly as it went in.
    #[test]
    fn every_event_replays_as_recorded() {
        let s = Site { method: 7, pc: 42 };
        let t = Site { method: 3, pc: 9 };
        let alloc = Alloc { site: s, obj: 11, class: 5, bytes: 5_000_000_000, owner: 4, dst: 17 };
        let big = Value { bits: 0xdead_beef_0000_0001, is_ref: false };
        let r = Value { bits: 12, is_ref: true };
        let events = [
            Event::Instructions(1 << 40 | 3),
            Event::Thread(2),
            Event::Alloc { alloc, user_frame: Some(t) },
            Event::Alloc { alloc, user_frame: None },
            Event::BulkCopy { src: 1, src_pos: 2, dst: 3, dst_pos: 4, len: 5, unit: Bulk::Elements(8) },
            Event::BulkCopy { src: 1, src_pos: 0, dst: 3, dst_pos: 0, len: 2, unit: Bulk::Fields },
            Event::Call { site: s, callee: 9, depth: 4, this: 0, user: true },
            Event::Call { site: s, callee: 9, depth: 5, this: 3, user: false },
            Event::Return(9),
            Event::Native { site: s, callee: 8 },
            Event::Free { obj: 11, class: 5, bytes: 24 },
            Event::Gc { collections: 3, allocated_bytes: 1 << 33 },
            Event::New(6),
            Event::Const { site: s, dst: 6 },
            Event::Move { site: s, src: 6, dst: 7 },
            Event::Shuffle { base: 4, from: &[5, 4, 6] },
            Event::Compute { site: s, srcs: &[1, 2], dst: Some(1) },
            Event::Compute { site: s, srcs: &[1], dst: None },
            Event::Compute { site: s, srcs: &[], dst: Some(0) },
            Event::Consume { site: s, srcs: &[3], sink: Sink::Branch },
            Event::Consume { site: s, srcs: &[3, 4], sink: Sink::Native },
            Event::Deref { site: s, slot: 2 },
            Event::Load { site: s, loc: HeapLoc::Field { obj: 11, slot: 2 }, value: big, dst: 3 },
            Event::Load { site: s, loc: HeapLoc::Static { slot: 9 }, value: r, dst: 3 },
            Event::Store { site: s, loc: HeapLoc::Element { array: 11, index: 70_000 }, value: r, bytes: 4, src: 5 },
            Event::Store { site: s, loc: HeapLoc::Field { obj: 11, slot: 0 }, value: big, bytes: 8, src: 5 },
            Event::Use { site: s, obj: 11, how: RefUse::Access },
            Event::Use { site: s, obj: 11, how: RefUse::Receiver },
            Event::Use { site: s, obj: 11, how: RefUse::Test },
            Event::Use { site: s, obj: 11, how: RefUse::Native },
            Event::Pass { site: s, obj: 11, how: RefPass::Argument(13) },
            Event::Pass { site: s, obj: 11, how: RefPass::Return },
        ];
        let mut r = Recorder::default();
        for e in &events {
            r.record(e);
        }
        let mut kept = Keep::default();
        replay(&r.words, &mut kept);
        let expected: Vec<String> = events.iter().map(|e| format!("{e:?}")).collect();
        assert_eq!(kept.0, expected);
    }
}

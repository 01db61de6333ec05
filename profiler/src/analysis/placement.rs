//! Where an event-fed analysis ([`Consumer`]) runs: not at all, inline on the VM's thread, or on a
//! thread of its own fed the recorded event stream in batches — the interpreter then pays for
//! recording an event (a few words written) instead of the analysis' work, which runs on another
//! core meanwhile. Either way the analysis sees the same events in the same order, so its findings
//! are the same; it finishes on the VM's thread, where the VM's classes can be read.

use super::events::{Batch, Consumer, Event, Recorder};
use crate::vm::class::{Class, ClassId, Method, MethodId};
use crate::vm::heap::Ref;
use crate::vm::tracker::{
    is_user_method, Alloc, Arguments, Bulk, Context, HeapLoc, RefPass, RefUse, Sink, Site, Tracker, Value,
};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Words a batch holds before it is handed to the analysis' thread (1 MB).
const BATCH_WORDS: usize = 1 << 18;
/// Batches in flight: the VM waits when the analysis is this far behind, so memory stays bounded.
const BATCHES_IN_FLIGHT: usize = 4;

/// An analysis that may be off, and where it runs when on.
pub enum Placed<C: Consumer> {
    Off,
    Inline(C),
    OwnThread(Box<OwnThread<C>>),
}

/// The recording side of an analysis on its own thread.
pub struct OwnThread<C> {
    recorder: Recorder,
    batches: Option<SyncSender<Batch>>,
    /// Emptied batches, back from the analysis' thread for reuse.
    emptied: Receiver<Vec<u32>>,
    worker: Option<JoinHandle<C>>,
    /// The instruction count last told: recorded once, before the stream closes.
    instructions: Option<u64>,
}

impl<C: Consumer> Placed<C> {
    /// `analysis` (if on), on its own thread when `own_thread`, else inline. A thread that cannot
    /// be started leaves the analysis inline.
    pub fn new(analysis: Option<C>, own_thread: bool, name: &str) -> Self {
        let Some(c) = analysis else { return Placed::Off };
        if !own_thread {
            return Placed::Inline(c);
        }
        let (batches, incoming) = sync_channel::<Batch>(BATCHES_IN_FLIGHT);
        let (give_back, emptied) = sync_channel::<Vec<u32>>(BATCHES_IN_FLIGHT + 1);
        // The thread takes the analysis from a shared slot rather than by move, so that when the
        // thread cannot be started the analysis is still here, to run inline.
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(c)));
        let taken = slot.clone();
        let spawned = std::thread::Builder::new().name(format!("bloatlens-{name}")).spawn(move || {
            let mut c = taken.lock().unwrap_or_else(|e| e.into_inner()).take().expect("the analysis");
            for batch in incoming {
                c.consume_batch(&batch);
                // Reused unless a thread beside this one still reads it.
                if let Ok(mut words) = std::sync::Arc::try_unwrap(batch) {
                    words.clear();
                    let _ = give_back.try_send(words);
                }
            }
            c
        });
        match spawned {
            Ok(thread) => Placed::OwnThread(Box::new(OwnThread {
                recorder: Recorder { words: Vec::with_capacity(BATCH_WORDS + 64) },
                batches: Some(batches),
                emptied,
                worker: Some(thread),
                instructions: None,
            })),
            Err(_) => match slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
                Some(c) => Placed::Inline(c),
                None => Placed::Off,
            },
        }
    }

    /// The analysis, once the run has finished (`None` when it was off).
    pub fn into_inner(self) -> Option<C> {
        match self {
            Placed::Off => None,
            Placed::Inline(c) => Some(c),
            Placed::OwnThread(mut t) => t.join(),
        }
    }

    #[inline(always)]
    fn is_on(&self) -> bool {
        !matches!(self, Placed::Off)
    }

    #[inline(always)]
    fn emit(&mut self, e: Event<'_>) {
        match self {
            Placed::Off => {}
            Placed::Inline(c) => c.consume(&e),
            Placed::OwnThread(t) => {
                t.recorder.record(&e);
                if t.recorder.words.len() >= BATCH_WORDS {
                    t.send();
                }
            }
        }
    }
}

/// A consumer placed on a thread of its own beside the thread that feeds it (another analysis'
/// thread): it takes that thread's batches whole, so the events are recorded once and each part
/// replays them on a core of its own.
impl<C: Consumer> Consumer for Placed<C> {
    const FINAL_COLLECTION: bool = C::FINAL_COLLECTION;
    const PASSES: bool = C::PASSES;
    const FLOW: bool = C::FLOW;
    #[inline(always)]
    fn consume(&mut self, e: &Event<'_>) {
        match self {
            // Passed on as it came: no copy of the event where it runs inline.
            Placed::Inline(c) => c.consume(e),
            _ => self.emit(*e),
        }
    }
    fn beside(&self) -> bool {
        matches!(self, Placed::OwnThread(_))
    }
    fn consume_batch(&mut self, words: &Batch) {
        match self {
            Placed::Off => {}
            Placed::Inline(c) => c.consume_batch(words),
            // Only when `beside`: its feeder's batches.
            Placed::OwnThread(t) => {
                if !t.recorder.words.is_empty() {
                    t.send();
                }
                if let Some(tx) = &t.batches {
                    let _ = tx.send(words.clone());
                }
            }
        }
    }
    fn finish(&mut self, methods: &[Method], classes: &[Class]) {
        Tracker::finish(self, methods, classes);
    }
}

impl<C: Consumer> OwnThread<C> {
    #[inline(never)]
    fn send(&mut self) {
        let fresh = self.emptied.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH_WORDS + 64));
        let batch = std::mem::replace(&mut self.recorder.words, fresh);
        if let Some(tx) = &self.batches {
            // The analysis' thread ends only when this side closes the channel, or by a panic,
            // which `join` passes on.
            let _ = tx.send(Batch::new(batch));
        }
    }

    /// Sends what is left, closes the stream and takes the analysis back when its thread is done.
    fn join(&mut self) -> Option<C> {
        if let Some(total) = self.instructions.take() {
            self.recorder.record(&Event::Instructions(total));
        }
        if !self.recorder.words.is_empty() {
            self.send();
        }
        self.batches = None;
        let worker = self.worker.take()?;
        match worker.join() {
            Ok(c) => Some(c),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl<C> Drop for OwnThread<C> {
    fn drop(&mut self) {
        // A run that ended without `finish` (a crash): stop the thread, whatever it was doing.
        self.batches = None;
        if let Some(t) = self.worker.take() {
            let _ = t.join();
        }
    }
}

impl<C: Consumer> Tracker for Placed<C> {
    const FLOW: bool = true;
    const FINAL_COLLECTION: bool = C::FINAL_COLLECTION;

    #[inline(always)]
    fn on_instructions(&mut self, total: u64) {
        match self {
            Placed::OwnThread(t) => t.instructions = Some(total),
            _ => self.emit(Event::Instructions(total)),
        }
    }
    #[inline(always)]
    fn on_alloc(&mut self, cx: &Context, a: &Alloc) {
        if self.is_on() {
            let user_frame = cx.user_frame(a.site);
            self.emit(Event::Alloc { alloc: *a, user_frame });
        }
    }
    #[inline(always)]
    fn on_bulk_copy(&mut self, src: Ref, src_pos: usize, dst: Ref, dst_pos: usize, len: usize, unit: Bulk) {
        self.emit(Event::BulkCopy { src, src_pos, dst, dst_pos, len, unit });
    }
    #[inline(always)]
    fn on_thread(&mut self, thread: usize) {
        self.emit(Event::Thread(thread));
    }
    #[inline(always)]
    fn on_call(&mut self, site: Site, callee: MethodId, depth: usize, this: Ref, args: &Arguments) {
        if self.is_on() {
            let user = is_user_method(args.methods, args.classes, callee);
            self.emit(Event::Call { site, callee, depth, this, user });
        }
    }
    #[inline(always)]
    fn on_return(&mut self, callee: MethodId) {
        self.emit(Event::Return(callee));
    }
    #[inline(always)]
    fn on_native(&mut self, site: Site, callee: MethodId) {
        self.emit(Event::Native { site, callee });
    }
    #[inline(always)]
    fn on_free(&mut self, obj: Ref, class: ClassId, bytes: usize) {
        self.emit(Event::Free { obj, class, bytes });
    }
    #[inline(always)]
    fn on_gc(&mut self, collections: u64, allocated_bytes: u64) {
        self.emit(Event::Gc { collections, allocated_bytes });
    }
    fn finish(&mut self, methods: &[Method], classes: &[Class]) {
        if let Placed::OwnThread(t) = self {
            *self = match t.join() {
                Some(c) => Placed::Inline(c),
                None => Placed::Off,
            };
        }
        if let Placed::Inline(c) = self {
            c.finish(methods, classes);
        }
    }
    #[inline(always)]
    fn flow_new(&mut self, dst: usize) {
        if C::FLOW {
            self.emit(Event::New(dst));
        }
    }
    #[inline(always)]
    fn flow_const(&mut self, site: Site, dst: usize) {
        if C::FLOW {
            self.emit(Event::Const { site, dst });
        }
    }
    #[inline(always)]
    fn flow_move(&mut self, site: Site, src: usize, dst: usize) {
        if C::FLOW {
            self.emit(Event::Move { site, src, dst });
        }
    }
    #[inline(always)]
    fn flow_shuffle(&mut self, base: usize, from: &[usize]) {
        if C::FLOW {
            self.emit(Event::Shuffle { base, from });
        }
    }
    #[inline(always)]
    fn flow_compute(&mut self, site: Site, srcs: &[usize], dst: Option<usize>) {
        if C::FLOW {
            self.emit(Event::Compute { site, srcs, dst });
        }
    }
    #[inline(always)]
    fn flow_consume(&mut self, site: Site, srcs: &[usize], sink: Sink) {
        if C::FLOW {
            self.emit(Event::Consume { site, srcs, sink });
        }
    }
    #[inline(always)]
    fn flow_deref(&mut self, site: Site, slot: usize) {
        if C::FLOW {
            self.emit(Event::Deref { site, slot });
        }
    }
    #[inline(always)]
    fn flow_load(&mut self, _: &Context, site: Site, loc: HeapLoc, value: Value, dst: usize) {
        if C::FLOW {
            self.emit(Event::Load { site, loc, value, dst });
        }
    }
    #[inline(always)]
    fn flow_store(&mut self, _: &Context, site: Site, loc: HeapLoc, value: Value, bytes: u8, src: usize) {
        self.emit(Event::Store { site, loc, value, bytes, src });
    }
    #[inline(always)]
    fn flow_use(&mut self, _: &Context, site: Site, obj: Ref, how: RefUse) {
        if C::FLOW {
            self.emit(Event::Use { site, obj, how });
        }
    }
    #[inline(always)]
    fn flow_pass(&mut self, _: &Context, site: Site, obj: Ref, how: RefPass) {
        if C::PASSES {
            self.emit(Event::Pass { site, obj, how });
        }
    }
}

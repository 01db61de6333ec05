//! `java.lang.StackWalker`: the natives of `StackStreamFactory`. A walk snapshots the thread's
//! frames below the walker's native call (hidden classes left out unless SHOW_HIDDEN_FRAMES), fills
//! the JDK's frame buffer in batches and calls back `AbstractStackWalker.doStackWalk`, which
//! consumes them and asks for more with `fetchStackFrames`. The JDK's own Java code does the rest
//! (skipping its implementation and reflection frames, streams, `getCallerClass`).
//!
//! Two layouts: JDK 21+ fills `ClassFrameInfo`/`StackFrameInfo` objects (`classOrMemberName`: the
//! class, or a `ResolvedMethodName` holding it), JDK 17 fills a `MemberName` in each `StackFrameInfo`
//! or, for class-only walks, a `Class[]`. The method of each filled frame is remembered by the object
//! that names it, for `StackTraceElement.of(frame)` and `expandStackFrameInfo`.

use super::{Registry, VmResult};
use crate::vm::class::{ClassId, MethodId};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};
use std::collections::HashMap;

const FACTORY: &str = "java/lang/StackStreamFactory";
const WALKER: &str = "java/lang/StackStreamFactory$AbstractStackWalker";
/// Mode bits both layouts share.
const CLASS_ONLY: u64 = 0x2;
const SHOW_HIDDEN_FRAMES: u64 = 0x20;
const FILL_LIVE_STACK_FRAMES: u64 = 0x100;
/// `MemberName` flags (JDK 17's frames): a method, invoked virtually or statically.
const IS_METHOD: u64 = 0x0001_0000;
const REF_KIND_SHIFT: u64 = 24;
const REF_INVOKE_VIRTUAL: u64 = 5;
const REF_INVOKE_STATIC: u64 = 6;

/// The walks in progress (by anchor) and the method behind every frame object filled.
#[derive(Default)]
pub struct StackWalks {
    walks: HashMap<u64, Walk>,
    next_anchor: u64,
    /// The `ResolvedMethodName` (JDK 21+) or `MemberName` (JDK 17) of a filled frame → its method.
    /// Objects are never moved; an entry for a dead object is overwritten when its address is reused.
    methods: HashMap<Ref, MethodId>,
}

/// Where a batch of frames goes: up to `limit` elements of `buffer` from index `start`.
#[derive(Clone, Copy)]
struct Batch {
    limit: usize,
    start: usize,
    buffer: Ref,
}

struct Walk {
    frames: Vec<(MethodId, u16)>,
    next: usize,
}

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    reg.add(FACTORY, "checkStackWalkModes", "()Z", |_, _, _| Ok(1));
    // JDK 21+: (int mode, int skip, ContinuationScope, Continuation, int bufferSize, int start, T[]).
    reg.add(
        WALKER,
        "callStackWalk",
        "(IILjdk/internal/vm/ContinuationScope;Ljdk/internal/vm/Continuation;II[Ljava/lang/Object;)Ljava/lang/Object;",
        |vm, t, a| {
            if a[4] != 0 {
                return Err(Fault::Fatal(VmError::Unsupported("walking the stack of a continuation".into())));
            }
            let limit = (a[5] as i32 - a[6] as i32).max(0) as usize;
            vm.call_stack_walk(
                t,
                a[0] as Ref,
                a[1],
                a[2] as usize,
                Batch { limit, start: a[6] as usize, buffer: a[7] as Ref },
            )
        },
    );
    // JDK 17: (long mode, int skip, int batchSize, int start, T[]).
    reg.add(WALKER, "callStackWalk", "(JIII[Ljava/lang/Object;)Ljava/lang/Object;", |vm, t, a| {
        vm.call_stack_walk(
            t,
            a[0] as Ref,
            a[1],
            a[3] as usize,
            Batch { limit: a[4] as usize, start: a[5] as usize, buffer: a[6] as Ref },
        )
    });
    // JDK 21+: (int mode, long anchor, int lastBatchFrameCount, int bufferSize, int start, T[]).
    reg.add(WALKER, "fetchStackFrames", "(IJIII[Ljava/lang/Object;)I", |vm, t, a| {
        let limit = (a[5] as i32 - a[6] as i32).max(0) as usize;
        vm.fetch_stack_frames(t, a[1], a[2], Batch { limit, start: a[6] as usize, buffer: a[7] as Ref })
    });
    // JDK 17: (long mode, long anchor, int batchSize, int start, T[]); returns the end index.
    reg.add(WALKER, "fetchStackFrames", "(JJII[Ljava/lang/Object;)I", |vm, t, a| {
        let start = a[6];
        let batch = Batch { limit: a[5] as usize, start: start as usize, buffer: a[7] as Ref };
        vm.fetch_stack_frames(t, a[1], a[3], batch).map(|n| start + n)
    });
    reg.add(WALKER, "setContinuation", "*", |_, _, _| {
        Err(Fault::Fatal(VmError::Unsupported("walking the stack of a continuation".into())))
    });
    // Frames are filled with their name and descriptor already: nothing left to expand.
    reg.add("java/lang/StackFrameInfo", "expandStackFrameInfo", "()V", |_, _, _| Ok(0));
    reg.add(
        "java/lang/StackTraceElement",
        "initStackTraceElement",
        "(Ljava/lang/StackTraceElement;Ljava/lang/StackFrameInfo;)V",
        |vm, t, a| {
            let (ste, sfi) = (a[0] as Ref, a[1] as Ref);
            let (m, bci) = vm.frame_of(t, sfi)?;
            vm.fill_stack_trace_element(ste, m, bci)?;
            Ok(0)
        },
    );
}

impl<T: Tracker> Vm<T> {
    fn call_stack_walk(&mut self, t: &mut JThread, walker: Ref, mode: u64, skip: usize, batch: Batch) -> VmResult<u64> {
        if mode & FILL_LIVE_STACK_FRAMES != 0 {
            return Err(Fault::Fatal(VmError::Unsupported("StackWalker with local variables and operands".into())));
        }
        let show_hidden = mode & SHOW_HIDDEN_FRAMES != 0;
        let frames: Vec<(MethodId, u16)> = self
            .stack_frames(t)
            .into_iter()
            .skip_while(|&(m, _)| &*self.methods[m as usize].name == "callStackWalk")
            .filter(|&(m, _)| show_hidden || !self.is_hidden_frame(m))
            .skip(skip)
            .collect();
        self.stack_walks.next_anchor += 1;
        let anchor = self.stack_walks.next_anchor;
        self.stack_walks.walks.insert(anchor, Walk { frames, next: 0 });
        let start = batch.start;
        let walked = self.fill_frames(t, anchor, mode, batch).and_then(|n| {
            let class = self.load_or_throw(t, WALKER)?;
            let callback = self
                .find_declared_method(class, "doStackWalk", "(JIIII)Ljava/lang/Object;")
                .ok_or_else(|| Fault::Fatal(VmError::Internal("AbstractStackWalker.doStackWalk not found".into())))?;
            let args = [walker as u64, anchor, 0, skip as u64, n as u64, start as u64, (start + n) as u64];
            self.invoke(t, callback, &args)
        });
        self.stack_walks.walks.remove(&anchor);
        walked
    }

    fn fetch_stack_frames(&mut self, t: &mut JThread, mode: u64, anchor: u64, batch: Batch) -> VmResult<u64> {
        if !self.stack_walks.walks.contains_key(&anchor) {
            return Err(self.throw_new(t, "java/lang/InternalError", Some("doStackWalk: corrupted buffers on stack")));
        }
        self.fill_frames(t, anchor, mode, batch).map(|n| n as u64)
    }

    /// Fills a batch with the walk's next frames; returns how many.
    fn fill_frames(&mut self, t: &mut JThread, anchor: u64, mode: u64, batch: Batch) -> VmResult<usize> {
        let Batch { limit, start, buffer } = batch;
        let len = match &self.heap.get(buffer).data {
            ObjData::Refs(items) => items.len(),
            _ => return Err(Fault::Fatal(VmError::Internal("stack walk buffer is not an object array".into()))),
        };
        let walk = &self.stack_walks.walks[&anchor];
        let frames: Vec<(MethodId, u16)> =
            walk.frames[walk.next..].iter().copied().take(limit.min(len.saturating_sub(start))).collect();
        let class_array = {
            let c = self.heap.get(buffer).class;
            &*self.classes[c as usize].name == "[Ljava/lang/Class;"
        };
        for (i, &(m, bci)) in frames.iter().enumerate() {
            let class = self.methods[m as usize].class;
            if class_array {
                let mirror = self.mirror(class);
                self.set_element(buffer, start + i, mirror);
                continue;
            }
            let frame = match &self.heap.get(buffer).data {
                ObjData::Refs(items) => items[start + i],
                _ => 0,
            };
            if frame == 0 {
                return Err(self.throw_npe(t));
            }
            self.fill_frame(t, frame, mode, m, bci, class)?;
        }
        if let Some(w) = self.stack_walks.walks.get_mut(&anchor) {
            w.next += frames.len();
        }
        Ok(frames.len())
    }

    fn set_element(&mut self, array: Ref, index: usize, value: Ref) {
        if let ObjData::Refs(items) = &mut self.heap.get_mut(array).data {
            items[index] = value;
        }
    }

    /// One frame object: the class (and, unless class-only, the method: name, descriptor, bci).
    fn fill_frame(
        &mut self,
        t: &mut JThread,
        frame: Ref,
        mode: u64,
        m: MethodId,
        bci: u16,
        class: ClassId,
    ) -> VmResult<()> {
        let fc = self.heap.get(frame).class;
        let access = self.methods[m as usize].access as u64;
        let (name, desc) = (self.methods[m as usize].name.clone(), self.methods[m as usize].descriptor.clone());
        let mirror = self.mirror(class);
        let named = if self.field_slot(fc, "classOrMemberName").is_some() {
            // JDK 21+.
            let flags = self.get_named(frame, "flags");
            self.set_named(frame, "flags", (flags as u32 as u64) | access);
            if mode & CLASS_ONLY != 0 {
                self.set_named(frame, "classOrMemberName", mirror as u64);
                return Ok(());
            }
            let rmn_class = self.load_or_throw(t, "java/lang/invoke/ResolvedMethodName")?;
            let rmn = self.alloc_instance(rmn_class);
            self.set_named(rmn, "vmholder", mirror as u64);
            self.set_named(frame, "classOrMemberName", rmn as u64);
            self.stack_walks.methods.insert(rmn, m);
            frame
        } else {
            // JDK 17: the frame's own MemberName.
            let member = self.get_named(frame, "memberName") as Ref;
            if member == 0 {
                return Err(self.throw_npe(t));
            }
            let kind = if access & crate::classfile::access::STATIC as u64 != 0 {
                REF_INVOKE_STATIC
            } else {
                REF_INVOKE_VIRTUAL
            };
            self.set_named(member, "clazz", mirror as u64);
            self.set_named(member, "flags", access | IS_METHOD | (kind << REF_KIND_SHIFT));
            self.stack_walks.methods.insert(member, m);
            member
        };
        // The method's name and descriptor (on the frame, or on JDK 17's MemberName), the frame's bci.
        let name_ref = self.intern_str(&name);
        self.set_named(named, "name", name_ref as u64);
        let desc_ref = self.intern_str(&desc);
        self.set_named(named, "type", desc_ref as u64);
        self.set_named(frame, "bci", bci as u64);
        Ok(())
    }

    /// The method and bci a filled `StackFrameInfo` stands for.
    fn frame_of(&mut self, t: &mut JThread, sfi: Ref) -> VmResult<(MethodId, u16)> {
        let sc = self.heap.get(sfi).class;
        let named = if self.field_slot(sc, "classOrMemberName").is_some() {
            self.get_named(sfi, "classOrMemberName")
        } else {
            self.get_named(sfi, "memberName")
        } as Ref;
        let bci = self.get_named(sfi, "bci") as u16;
        match self.stack_walks.methods.get(&named) {
            Some(&m) => Ok((m, bci)),
            None => Err(self.throw_new(t, "java/lang/InternalError", Some("stack frame not filled by a walk"))),
        }
    }
}

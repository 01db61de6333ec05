//! Threads seen from outside, as HotSpot's thread service shows them: `sun.management.ThreadImpl`
//! (the `ThreadMXBean`: thread ids, `ThreadInfo` snapshots, thread dumps, CPU time, allocated bytes,
//! deadlock detection) and `java.lang.Thread`'s `getThreads`, `dumpThreads` and `getStackTrace0`
//! (`Thread.getAllStackTraces`, another thread's `getStackTrace`).
//!
//! A snapshot holds what HotSpot's `ThreadSnapshot` holds: the thread's status (the JVMTI bits the VM
//! keeps in `threadStatus`), the object it is blocked or waiting on and that object's owner (a parked
//! thread's `parkBlocker`, and the owner of an `AbstractOwnableSynchronizer` blocker), how often it
//! blocked and waited (times only while contention monitoring is on, else -1), its stack trace (a
//! stack trace of the running thread starts at the native asking), the monitors it holds with the
//! depth of the frame that locked each (a `synchronized` method's frame; a `synchronized` block is
//! put at the innermost frame whose method has one), and the ownable synchronizers it owns (found on
//! the heap, as HotSpot does). The VM's green threads run on one OS thread: a thread's CPU time is
//! that thread's CPU time while the Java thread ran.

use super::Registry;
use crate::vm::class::MethodId;
use crate::vm::heap::{ObjData, Ref};
use crate::vm::ops::Op;
use crate::vm::threads::State;
use crate::vm::{Fault, JThread, Tracker, Vm, VmError, VmResult};

const TI: &str = "sun/management/ThreadImpl";
const THREAD_INFO: &str = "java/lang/management/ThreadInfo";
const INFO_CTOR: &str = "(Ljava/lang/Thread;ILjava/lang/Object;Ljava/lang/Thread;JJJJ[Ljava/lang/StackTraceElement;)V";
const INFO_CTOR_LOCKS: &str = "(Ljava/lang/Thread;ILjava/lang/Object;Ljava/lang/Thread;JJJJ[Ljava/lang/StackTraceElement;[Ljava/lang/Object;[I[Ljava/lang/Object;)V";
const AOS: &str = "java/util/concurrent/locks/AbstractOwnableSynchronizer";

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    reg.add(TI, "getThreads", "()[Ljava/lang/Thread;", |vm, t, _| live_thread_array(vm, t));
    reg.add("java/lang/Thread", "getThreads", "()[Ljava/lang/Thread;", |vm, t, _| live_thread_array(vm, t));
    reg.add("java/lang/Thread", "dumpThreads", "([Ljava/lang/Thread;)[[Ljava/lang/StackTraceElement;", |vm, t, a| {
        let threads = refs(vm, a[0] as Ref);
        let mark = vm.pinned.len();
        let mut traces = Vec::with_capacity(threads.len());
        for obj in threads {
            let trace = match vm.slot_of(obj).filter(|&i| alive(vm, i)) {
                Some(i) => stack_trace(vm, t, i, -1, false)?,
                None => 0,
            };
            vm.pinned.push(trace);
            traces.push(trace);
        }
        vm.pinned.truncate(mark);
        new_ref_array(vm, t, "[[Ljava/lang/StackTraceElement;", traces)
    });
    // JDK 21+: another thread's stack, completed by `StackTraceElement.finishInit` in Java.
    reg.add("java/lang/Thread", "getStackTrace0", "()Ljava/lang/Object;", |vm, t, a| {
        match vm.slot_of(a[0] as Ref).filter(|&i| alive(vm, i)) {
            Some(i) => Ok(stack_trace(vm, t, i, -1, true)? as u64),
            None => Ok(0),
        }
    });

    reg.add(TI, "getThreadInfo1", "([JI[Ljava/lang/management/ThreadInfo;)V", |vm, t, a| {
        let (ids, max_depth, result) = (longs(vm, a[0] as Ref), a[1] as i32, a[2] as Ref);
        for (k, id) in ids.into_iter().enumerate() {
            let info = match by_id(vm, id) {
                Some(i) => thread_info(vm, t, i, max_depth, None)?,
                None => 0,
            };
            if let ObjData::Refs(items) = &mut vm.heap.get_mut(result).data {
                items[k] = info;
            }
        }
        Ok(0)
    });
    reg.add(TI, "dumpThreads0", "([JZZI)[Ljava/lang/management/ThreadInfo;", |vm, t, a| {
        let (monitors, synchronizers, max_depth) = (a[1] != 0, a[2] != 0, a[3] as i32);
        let wanted: Vec<Option<usize>> = match a[0] as Ref {
            0 => live(vm).into_iter().map(Some).collect(),
            ids => longs(vm, ids).into_iter().map(|id| by_id(vm, id)).collect(),
        };
        let mark = vm.pinned.len();
        let mut infos = Vec::with_capacity(wanted.len());
        for i in wanted {
            let info = match i {
                Some(i) => thread_info(vm, t, i, max_depth, Some((monitors, synchronizers)))?,
                None => 0,
            };
            vm.pinned.push(info);
            infos.push(info);
        }
        vm.pinned.truncate(mark);
        new_ref_array(vm, t, "[Ljava/lang/management/ThreadInfo;", infos)
    });

    reg.add(TI, "getThreadTotalCpuTime0", "(J)J", |vm, t, a| Ok(figure(vm, t, a[0] as i64, |u| u.cpu_ns) as u64));
    reg.add(TI, "getThreadUserCpuTime0", "(J)J", |vm, t, a| Ok(figure(vm, t, a[0] as i64, |u| u.user_ns) as u64));
    reg.add(TI, "getThreadAllocatedMemory0", "(J)J", |vm, t, a| Ok(figure(vm, t, a[0] as i64, |u| u.allocated) as u64));
    reg.add(TI, "getThreadTotalCpuTime1", "([J[J)V", |vm, t, a| figures(vm, t, a[0] as Ref, a[2] as Ref, |u| u.cpu_ns));
    reg.add(TI, "getThreadUserCpuTime1", "([J[J)V", |vm, t, a| figures(vm, t, a[0] as Ref, a[2] as Ref, |u| u.user_ns));
    reg.add(TI, "getThreadAllocatedMemory1", "([J[J)V", |vm, t, a| {
        figures(vm, t, a[0] as Ref, a[2] as Ref, |u| u.allocated)
    });
    // Every thread's allocation since the start, ended threads' included.
    reg.add(TI, "getTotalThreadAllocatedMemory", "()J", |vm, _, _| Ok(vm.heap.allocated_bytes));
    reg.add(TI, "setThreadCpuTimeEnabled0", "(Z)V", |vm, _, a| {
        vm.management.set_thread_cpu_time(a[0] != 0);
        Ok(0)
    });
    reg.add(TI, "setThreadAllocatedMemoryEnabled0", "(Z)V", |vm, _, a| {
        vm.management.set_thread_allocated_memory(a[0] != 0);
        Ok(0)
    });
    reg.add(TI, "setThreadContentionMonitoringEnabled0", "(Z)V", |vm, _, a| {
        vm.management.contention_monitoring = a[0] != 0;
        Ok(0)
    });
    // tid 0: every thread.
    reg.add(TI, "resetContentionTimes0", "(J)V", |vm, _, a| {
        let id = a[0] as i64;
        for i in 0..vm.threads.len() {
            if id == 0 || tid(vm, i) == id {
                vm.threads[i].usage.blocked_ms = 0;
                vm.threads[i].usage.waited_ms = 0;
            }
        }
        Ok(0)
    });
    reg.add(TI, "resetPeakThreadCount0", "()V", |vm, _, _| {
        super::management::reset_peak_threads(vm);
        Ok(0)
    });
    reg.add(TI, "findMonitorDeadlockedThreads0", "()[Ljava/lang/Thread;", |vm, t, _| deadlocked(vm, t, false));
    reg.add(TI, "findDeadlockedThreads0", "()[Ljava/lang/Thread;", |vm, t, _| deadlocked(vm, t, true));

    // `sun.management.HotspotThread`: HotSpot's own threads (compiler, GC); the VM has none.
    reg.add("sun/management/HotspotThread", "getInternalThreadCount", "()I", |_, _, _| Ok(0));
    reg.add("sun/management/HotspotThread", "getInternalThreadTimes0", "([Ljava/lang/String;[J)I", |_, _, _| Ok(0));
}

/// Whether thread `i` has started and not ended (the main thread after `main` has ended).
fn alive<T: Tracker>(vm: &Vm<T>, i: usize) -> bool {
    !matches!(vm.threads[i].state, State::Terminated | State::Idle)
}

/// The live threads in the order they started, as HotSpot lists them.
fn live<T: Tracker>(vm: &Vm<T>) -> Vec<usize> {
    (0..vm.threads.len()).filter(|&i| alive(vm, i)).collect()
}

fn tid<T: Tracker>(vm: &Vm<T>, i: usize) -> i64 {
    vm.thread_field(vm.threads[i].obj, "tid") as i64
}

fn by_id<T: Tracker>(vm: &Vm<T>, id: i64) -> Option<usize> {
    live(vm).into_iter().find(|&i| tid(vm, i) == id)
}

fn refs<T: Tracker>(vm: &Vm<T>, array: Ref) -> Vec<Ref> {
    match array {
        0 => Vec::new(),
        r => match &vm.heap.get(r).data {
            ObjData::Refs(items) => items.to_vec(),
            _ => Vec::new(),
        },
    }
}

fn longs<T: Tracker>(vm: &Vm<T>, array: Ref) -> Vec<i64> {
    match array {
        0 => Vec::new(),
        r => match &vm.heap.get(r).data {
            ObjData::Longs(items) => items.to_vec(),
            _ => Vec::new(),
        },
    }
}

fn new_ref_array<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, class: &str, items: Vec<Ref>) -> VmResult<u64> {
    let c = vm.load_or_throw(t, class)?;
    Ok(vm.heap.alloc(c, ObjData::Refs(items.into())) as u64)
}

fn live_thread_array<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread) -> VmResult<u64> {
    let threads: Vec<Ref> = live(vm).into_iter().map(|i| vm.threads[i].obj).collect();
    new_ref_array(vm, t, "[Ljava/lang/Thread;", threads)
}

/// A figure of thread `id` (0: the running thread) as of now; -1 for a thread that is not alive.
fn figure<T: Tracker>(vm: &mut Vm<T>, t: &JThread, id: i64, f: fn(&crate::vm::threads::Usage) -> u64) -> i64 {
    let i = if id == 0 { vm.slot_of(t.obj) } else { by_id(vm, id) };
    let Some(i) = i else { return -1 };
    vm.charge_running_thread();
    f(&vm.threads[i].usage) as i64
}

fn figures<T: Tracker>(
    vm: &mut Vm<T>,
    t: &JThread,
    ids: Ref,
    result: Ref,
    f: fn(&crate::vm::threads::Usage) -> u64,
) -> VmResult<u64> {
    let values: Vec<i64> = longs(vm, ids).into_iter().map(|id| figure(vm, t, id, f)).collect();
    if let ObjData::Longs(items) = &mut vm.heap.get_mut(result).data {
        for (slot, v) in items.iter_mut().zip(values) {
            *slot = v;
        }
    }
    Ok(0)
}

/// One frame of a thread's stack as a stack trace shows it, innermost first: a Java frame (with its
/// index in the thread's frames) or a native running between frames.
struct TraceFrame {
    method: MethodId,
    bci: u16,
    frame: Option<usize>,
}

/// Thread `i`'s stack, innermost first. Thread dumps show every frame, the JDK's hidden ones too.
fn trace_frames<T: Tracker>(vm: &Vm<T>, t: &JThread, i: usize) -> (Vec<TraceFrame>, Vec<Ref>, Vec<Ref>) {
    let jt = if vm.threads[i].obj == t.obj { Some(t) } else { vm.threads[i].thread.as_ref() };
    let Some(jt) = jt else { return (Vec::new(), Vec::new(), Vec::new()) };
    let mut out = Vec::with_capacity(jt.frames.len() + jt.natives.len() + 1);
    // A thread waiting in a native: that native on top, its caller at the call.
    let blocked_in = if jt.obj == t.obj { None } else { vm.threads[i].blocked_in };
    if let Some(m) = blocked_in {
        out.push(TraceFrame { method: m, bci: 0, frame: None });
    }
    let top = jt.frames.len().wrapping_sub(1);
    let mut natives = jt.natives.iter().rev().peekable();
    for (depth, f) in jt.frames.iter().enumerate().rev() {
        while let Some(&&(_, m)) = natives.peek().filter(|(below, _)| *below as usize > depth) {
            out.push(TraceFrame { method: m, bci: 0, frame: None });
            natives.next();
        }
        let at_op = |pc: u32| f.code.bci.get(pc as usize).copied().unwrap_or(0);
        let blocked_entering = depth == top
            && matches!(vm.threads[i].state, State::Blocked(_))
            && jt.suspended
            && matches!(f.code.ops.get(f.pc as usize).map(|op| op.get()), Some(Op::MonitorEnter));
        let bci = if blocked_in.is_some() && depth == top {
            at_op(f.pc.saturating_sub(1))
        } else if blocked_entering {
            // HotSpot's interpreter has moved past a `monitorenter` it blocks in.
            at_op(f.pc + 1)
        } else {
            jt.frame_bci(depth)
        };
        out.push(TraceFrame { method: f.method, bci, frame: Some(depth) });
    }
    out.extend(natives.map(|&(_, m)| TraceFrame { method: m, bci: 0, frame: None }));
    let frame_monitors = jt.frames.iter().map(|f| f.monitor).collect();
    (out, jt.held.clone(), frame_monitors)
}

/// A `StackTraceElement[]` of thread `i`'s stack (at most `max_depth` frames; -1: all), filled as
/// HotSpot's thread dumps fill it; `visible`: without the hidden frames (JDK 21+'s
/// `Thread.getStackTrace`, as a `Throwable`'s).
fn stack_trace<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, i: usize, max_depth: i32, visible: bool) -> VmResult<Ref> {
    let (mut frames, _, _) = trace_frames(vm, t, i);
    if visible {
        frames.retain(|f| !vm.is_hidden_frame(f.method));
    }
    let n = if max_depth < 0 { frames.len() } else { frames.len().min(max_depth as usize) };
    let pairs: Vec<(MethodId, u16)> = frames.iter().take(n).map(|f| (f.method, f.bci)).collect();
    stack_trace_array(vm, t, &pairs)
}

fn stack_trace_array<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, frames: &[(MethodId, u16)]) -> VmResult<Ref> {
    let ste = vm.load_or_throw(t, "java/lang/StackTraceElement")?;
    vm.initialize(t, ste)?;
    let array = vm.load_or_throw(t, "[Ljava/lang/StackTraceElement;")?;
    let mark = vm.pinned.len();
    let mut elements = Vec::with_capacity(frames.len());
    for &(m, bci) in frames {
        let e = vm.alloc_instance(ste);
        vm.pinned.push(e);
        vm.fill_stack_trace_element(e, m, bci)?;
        elements.push(e);
    }
    let result = vm.heap.alloc(array, ObjData::Refs(elements.into()));
    vm.pinned.truncate(mark);
    Ok(result)
}

/// The thread holding `obj`'s monitor, as its `Thread` object.
fn owner_of<T: Tracker>(vm: &Vm<T>, t: &JThread, obj: Ref) -> Ref {
    if t.held.contains(&obj) {
        return t.obj;
    }
    vm.threads.iter().find(|s| s.thread.as_ref().is_some_and(|th| th.held.contains(&obj))).map(|s| s.obj).unwrap_or(0)
}

/// The owner thread of an `AbstractOwnableSynchronizer` (0 for any other object).
fn synchronizer_owner<T: Tracker>(vm: &Vm<T>, obj: Ref) -> Ref {
    let Some(aos) = vm.lookup_class(AOS) else { return 0 };
    if obj == 0 || !vm.is_subtype(vm.heap.get(obj).class, aos) {
        return 0;
    }
    vm.get_named(obj, "exclusiveOwnerThread") as Ref
}

/// What thread `i` is blocked or waiting on, and who owns it.
fn lock_of<T: Tracker>(vm: &Vm<T>, t: &JThread, i: usize) -> (Ref, Ref) {
    match &vm.threads[i].state {
        State::Blocked(obj) | State::Waiting { obj, .. } => (*obj, owner_of(vm, t, *obj)),
        State::Parked(_) => {
            let blocker = vm.thread_field(vm.threads[i].obj, "parkBlocker") as Ref;
            (blocker, synchronizer_owner(vm, blocker))
        }
        _ => (0, 0),
    }
}

/// A `ThreadInfo` for thread `i`; `locks`: the thread-dump form, with the locked monitors and
/// ownable synchronizers if asked (which).
fn thread_info<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    i: usize,
    max_depth: i32,
    locks: Option<(bool, bool)>,
) -> VmResult<Ref> {
    let mark = vm.pinned.len();
    let result = thread_info_pinned(vm, t, i, max_depth, locks);
    vm.pinned.truncate(mark);
    result
}

fn thread_info_pinned<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    i: usize,
    max_depth: i32,
    locks: Option<(bool, bool)>,
) -> VmResult<Ref> {
    let obj = vm.threads[i].obj;
    let status = vm.thread_field(obj, "threadStatus");
    let (lock, owner) = lock_of(vm, t, i);
    let usage = vm.threads[i].usage.clone();
    let (blocked_ms, waited_ms) = if vm.management.contention_monitoring {
        let current = usage.since.map(|s| s.elapsed().as_millis() as u64).unwrap_or(0);
        match vm.threads[i].state {
            State::Blocked(_) => (usage.blocked_ms + current, usage.waited_ms),
            State::Waiting { .. } | State::Sleeping(_) | State::Parked(_) => {
                (usage.blocked_ms, usage.waited_ms + current)
            }
            _ => (usage.blocked_ms, usage.waited_ms),
        }
    } else {
        (u64::MAX, u64::MAX)
    };
    let (frames, held, frame_monitors) = trace_frames(vm, t, i);
    let depth = if max_depth < 0 { frames.len() } else { frames.len().min(max_depth as usize) };
    let trace = if max_depth == 0 && locks.is_none() {
        0
    } else {
        let pairs: Vec<(MethodId, u16)> = frames.iter().take(depth).map(|f| (f.method, f.bci)).collect();
        stack_trace_array(vm, t, &pairs)?
    };
    vm.pinned.push(trace);
    let c = vm.load_or_throw(t, THREAD_INFO)?;
    vm.initialize(t, c)?;
    let mut args = vec![
        obj as u64,
        status,
        lock as u64,
        owner as u64,
        usage.blocked_count,
        0,
        blocked_ms,
        0,
        usage.waited_count,
        0,
        waited_ms,
        0,
        trace as u64,
    ];
    let ctor = match locks {
        None => INFO_CTOR,
        Some((monitors, synchronizers)) => {
            let (objects, depths) = if monitors {
                locked_monitors(vm, &frames[..depth], &held, &frame_monitors)
            } else {
                (Vec::new(), Vec::new())
            };
            let (monitor_array, depth_array) = if monitors {
                let objects = new_ref_array(vm, t, "[Ljava/lang/Object;", objects)? as Ref;
                vm.pinned.push(objects);
                let ints = vm.load_or_throw(t, "[I")?;
                let depths = vm.heap.alloc(ints, ObjData::Ints(depths.into()));
                vm.pinned.push(depths);
                (objects, depths)
            } else {
                (0, 0)
            };
            let synchronizer_array = if synchronizers {
                let owned = owned_synchronizers(vm, obj);
                let array = new_ref_array(vm, t, "[Ljava/lang/Object;", owned)? as Ref;
                vm.pinned.push(array);
                array
            } else {
                0
            };
            args.extend([monitor_array as u64, depth_array as u64, synchronizer_array as u64]);
            INFO_CTOR_LOCKS
        }
    };
    let ctor = vm
        .find_declared_method(c, "<init>", ctor)
        .ok_or_else(|| Fault::Fatal(VmError::Internal(format!("ThreadInfo has no constructor {ctor}"))))?;
    let info = vm.alloc_instance(c);
    vm.pinned.push(info);
    args.insert(0, info as u64);
    vm.invoke(t, ctor, &args)?;
    Ok(info)
}

/// The monitors a thread holds, innermost frame first, with the depth (in the stack trace shown)
/// of the frame that locked each; -1 for one locked in a frame beyond the trace shown.
fn locked_monitors<T: Tracker>(
    vm: &Vm<T>,
    shown: &[TraceFrame],
    held: &[Ref],
    frame_monitors: &[Ref],
) -> (Vec<Ref>, Vec<i32>) {
    let depth_of_frame = |frame: usize| shown.iter().position(|f| f.frame == Some(frame)).map(|d| d as i32);
    let mut claimed = vec![false; frame_monitors.len()];
    // The innermost frame whose method has a `synchronized` block (monitorenter).
    let block_frame = shown.iter().find_map(|f| {
        let frame = f.frame?;
        let code = vm.methods[f.method as usize].code.get()?;
        code.ops.iter().any(|op| matches!(op.get(), Op::MonitorEnter)).then_some(frame)
    });
    let mut locked: Vec<(i32, Ref)> = Vec::new();
    for &obj in held {
        let by_method = (0..frame_monitors.len()).find(|&f| frame_monitors[f] == obj && !claimed[f]);
        let frame = match by_method {
            Some(f) => {
                claimed[f] = true;
                Some(f)
            }
            None => block_frame,
        };
        let depth = frame.and_then(depth_of_frame).unwrap_or(-1);
        if !locked.contains(&(depth, obj)) {
            locked.push((depth, obj));
        }
    }
    locked.sort_by_key(|&(d, _)| if d < 0 { i32::MAX } else { d });
    locked.into_iter().map(|(d, o)| (o, d)).unzip()
}

/// The ownable synchronizers (`ReentrantLock`s, write locks …) a thread owns.
fn owned_synchronizers<T: Tracker>(vm: &Vm<T>, thread: Ref) -> Vec<Ref> {
    let Some(aos) = vm.lookup_class(AOS) else { return Vec::new() };
    let mut owned = Vec::new();
    for (r, o) in vm.heap.objects() {
        if matches!(o.data, ObjData::Fields(_))
            && vm.is_subtype(o.class, aos)
            && vm.get_named(r, "exclusiveOwnerThread") as Ref == thread
        {
            owned.push(r);
        }
    }
    owned
}

/// The threads in a deadlock cycle: each waits for a monitor (or, with `synchronizers`, an ownable
/// synchronizer) that the next one holds; null when there are none.
fn deadlocked<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, synchronizers: bool) -> VmResult<u64> {
    let n = vm.threads.len();
    let waits_for = |vm: &Vm<T>, i: usize| -> Option<usize> {
        let owner = match &vm.threads[i].state {
            State::Blocked(obj) => owner_of(vm, t, *obj),
            State::Waiting { obj, notified: true, .. } => owner_of(vm, t, *obj),
            State::Parked(_) if synchronizers => {
                synchronizer_owner(vm, vm.thread_field(vm.threads[i].obj, "parkBlocker") as Ref)
            }
            _ => 0,
        };
        (owner != 0).then(|| vm.slot_of(owner)).flatten().filter(|&o| o != i)
    };
    let next: Vec<Option<usize>> = (0..n).map(|i| if alive(vm, i) { waits_for(vm, i) } else { None }).collect();
    let mut in_cycle = vec![false; n];
    for start in 0..n {
        // Follow the chain at most n steps; a thread is in a cycle when the chain returns to it.
        let mut at = next[start];
        for _ in 0..n {
            match at {
                Some(i) if i == start => {
                    in_cycle[start] = true;
                    break;
                }
                Some(i) => at = next[i],
                None => break,
            }
        }
    }
    if !in_cycle.iter().any(|&c| c) {
        return Ok(0);
    }
    let threads: Vec<Ref> = (0..n).filter(|&i| in_cycle[i]).map(|i| vm.threads[i].obj).collect();
    new_ref_array(vm, t, "[Ljava/lang/Thread;", threads)
}

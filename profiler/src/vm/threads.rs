//! Java threads as green threads: each has its own slot stack and frames, one runs at a time,
//! and the scheduler switches at backward branches every time slice (`Options::time_slice`,
//! [`SLICE`] instructions by default) (so runs are
//! reproducible) or when a thread blocks. Monitors are tracked per thread as the stack of objects
//! it holds; `Object.wait`, `Thread.sleep`, `LockSupport.park` and contended `synchronized` yield
//! to the scheduler. A thread can only be switched out from its outermost interpreter activation;
//! blocking inside a nested VM call (a class initializer, a native calling Java) waits in place.
//! When no thread can run and none waits with a deadline, the program is deadlocked, and the run
//! ends with an error naming the threads and what each waits for.

use super::class::MethodId;
use super::heap::Ref;
use super::{Fault, JThread, Tracker, Vm, VmError, VmResult};
use std::time::{Duration, Instant};

/// Instructions a thread runs before another runnable thread gets its turn (by default).
pub const SLICE: u64 = 200_000;

/// `threadStatus` values as HotSpot encodes them (JVMTI state bits).
pub const STATUS_NEW: u64 = 0;
pub const STATUS_RUNNABLE: u64 = 0x0004 | 0x0001;
pub const STATUS_TERMINATED: u64 = 0x0002;
const ALIVE: u64 = 0x0001;
const WAITING: u64 = 0x0080;
const WAITING_INDEFINITELY: u64 = 0x0010;
const WAITING_WITH_TIMEOUT: u64 = 0x0020;
const SLEEPING: u64 = 0x0040;
const IN_OBJECT_WAIT: u64 = 0x0100;
const PARKED: u64 = 0x0200;
const BLOCKED_ON_MONITOR_ENTER: u64 = 0x0400;

impl State {
    /// The `threadStatus` HotSpot keeps for a thread in this state (what `Thread.getState` and
    /// `ThreadInfo` decode); None for the states that leave it as it is (terminated: set by
    /// `terminate`; idle: the main thread after `main`).
    pub fn status(&self) -> Option<u64> {
        let timed = |deadline: bool| if deadline { WAITING_WITH_TIMEOUT } else { WAITING_INDEFINITELY };
        Some(match self {
            // HotSpot's Reference Handler waits for the pending list inside the VM, as RUNNABLE.
            // A thread in a socket read, accept or select is RUNNABLE on HotSpot too.
            State::Runnable | State::AwaitingReferences | State::AwaitingIo { .. } => STATUS_RUNNABLE,
            State::Blocked(_) => ALIVE | BLOCKED_ON_MONITOR_ENTER,
            State::Waiting { deadline, .. } => ALIVE | WAITING | IN_OBJECT_WAIT | timed(deadline.is_some()),
            State::Sleeping(_) => ALIVE | WAITING | SLEEPING | WAITING_WITH_TIMEOUT,
            State::Parked(deadline) => ALIVE | WAITING | PARKED | timed(deadline.is_some()),
            State::Idle | State::Terminated => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum State {
    Runnable,
    /// Waiting to enter the monitor of this object.
    Blocked(Ref),
    /// In `Object.wait`: until notified, interrupted or the deadline; then it re-enters the
    /// monitor `count` times.
    Waiting {
        obj: Ref,
        count: usize,
        deadline: Option<Instant>,
        notified: bool,
    },
    Sleeping(Instant),
    Parked(Option<Instant>),
    /// The Reference Handler in `Reference.waitForReferencePendingList`: until a collection leaves
    /// references pending.
    AwaitingReferences,
    /// In a native waiting for a host descriptor (`fd`) to be ready for `events` (poll(2) bits):
    /// a socket read, accept or connect, a selector's select. The native runs again when it is,
    /// or at the deadline.
    AwaitingIo {
        fd: i32,
        events: i16,
        deadline: Option<Instant>,
    },
    /// Not scheduled: the thread that waits for the others to end before shutdown.
    Idle,
    Terminated,
}

pub struct Slot {
    /// None while the thread runs (its state is borrowed by the interpreter).
    pub thread: Option<JThread>,
    pub state: State,
    pub obj: Ref,
    pub daemon: bool,
    /// `LockSupport` permit.
    pub permit: bool,
    /// Set by `interrupt0` on a sleeping or waiting thread: it resumes with InterruptedException
    /// (with HotSpot's message: "sleep interrupted" for a sleeper, none for a waiter).
    pub interrupted: Option<&'static str>,
    /// What the thread's outermost call is: its `run()`, or the Java calls that end a thread.
    pub ending: Ending,
    /// What it used and how often it waited (java.management's thread figures).
    pub usage: Usage,
    /// The native it waits in (`Object.wait`, `Thread.sleep`, `Unsafe.park`): its frame has gone
    /// (the thread resumes after the call), but stack traces show it on top, as HotSpot's do.
    pub blocked_in: Option<MethodId>,
    /// Blocked inside a nested call (a class initializer, a native calling Java): its Rust frames
    /// lie below a nested scheduler that runs the others, so only that scheduler resumes it.
    pub in_place: bool,
}

/// A thread's figures for java.management.
#[derive(Debug, Clone, Default)]
pub struct Usage {
    /// CPU time (user and system), and user time alone, in ns.
    pub cpu_ns: u64,
    pub user_ns: u64,
    /// Bytes allocated.
    pub allocated: u64,
    /// Times it blocked on a contended monitor, and waited (`Object.wait`, sleep, park).
    pub blocked_count: u64,
    pub waited_count: u64,
    /// Time spent blocked and waiting, in ms (counted while contention monitoring is on).
    pub blocked_ms: u64,
    pub waited_ms: u64,
    /// When it entered its current state.
    pub since: Option<Instant>,
}

/// The VM's own thread's CPU times (user and system, user alone) and the heap's allocation count
/// when the running Java thread was last charged.
#[derive(Debug, Clone, Copy, Default)]
pub struct UsageMark {
    cpu_ns: u64,
    user_ns: u64,
    allocated: u64,
}

/// poll(2) on host descriptors, waiting up to `timeout_ms`; each `revents` says what is ready
/// (an error or a closed descriptor counts: the waiting native then meets it).
pub(crate) fn poll_host(fds: &mut [libc::pollfd], timeout_ms: i32) {
    if fds.is_empty() {
        if timeout_ms > 0 {
            std::thread::sleep(Duration::from_millis(timeout_ms as u64));
        }
        return;
    }
    // SAFETY: `fds` is a live, exclusively borrowed slice of `pollfd`s whose length is passed with
    // it; poll(2) writes only their `revents` fields.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
}

/// The CPU time of the calling OS thread (user and system, user alone), in ns.
pub fn os_thread_times() -> (u64, u64) {
    // SAFETY: `rusage` is plain integers, for which all zeroes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one `rusage` through the pointer, which points to one we own.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return (0, 0);
    }
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (ns(usage.ru_utime) + ns(usage.ru_stime), ns(usage.ru_utime))
}

/// A thread ends as on HotSpot: after `run()`, an uncaught exception goes to
/// `dispatchUncaughtException`, then `Thread.exit` runs; both are scheduled like any Java code on
/// that thread (they take locks and may wait for other threads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Running,
    Dispatching,
    Exiting,
}

/// What a scheduler loop runs until.
#[derive(Debug, Clone, Copy)]
enum Until {
    /// The call on that thread at that frame depth ends.
    Call(usize, usize),
    /// No non-daemon thread is left to run.
    AllDone,
    /// That thread, blocked inside a nested call, may go on.
    Runnable(usize),
}

/// How a thread's outermost activation ended.
pub enum Finished {
    Returned(u64),
    Threw(Ref),
}

/// The longest uninterrupted sleep: how late a budget or a cancel may end a waiting run.
const NAP: Duration = Duration::from_millis(50);

impl<T: Tracker> Vm<T> {
    /// A field of a Thread: on the object itself (JDK 17) or its `holder` (JDK 19+ FieldHolder).
    pub(crate) fn thread_field(&self, thread: Ref, name: &str) -> u64 {
        let class = self.heap.get(thread).class;
        if self.field_slot(class, name).is_some() {
            return self.get_named(thread, name);
        }
        match self.get_named(thread, "holder") as Ref {
            0 => 0,
            holder => self.get_named(holder, name),
        }
    }

    pub(crate) fn set_thread_field(&mut self, thread: Ref, name: &str, v: u64) {
        let class = self.heap.get(thread).class;
        if self.field_slot(class, name).is_some() {
            return self.set_named(thread, name, v);
        }
        let holder = self.get_named(thread, "holder") as Ref;
        if holder != 0 {
            self.set_named(holder, name, v);
        }
    }

    /// Puts thread `i` in `state`, and its `threadStatus` with it (as HotSpot keeps it); counts
    /// its blocks and waits (and times them while contention monitoring is on).
    pub(super) fn set_state(&mut self, i: usize, state: State) {
        if let Some(status) = state.status() {
            if state.status() != self.threads[i].state.status() || self.threads[i].state == State::Idle {
                self.set_thread_field(self.threads[i].obj, "threadStatus", status);
            }
        }
        let timing = self.management.contention_monitoring;
        let slot = &mut self.threads[i];
        let usage = &mut slot.usage;
        if let Some(since) = usage.since.take() {
            let ms = since.elapsed().as_millis() as u64;
            match slot.state {
                State::Blocked(_) => usage.blocked_ms += ms,
                State::Waiting { .. } | State::Sleeping(_) | State::Parked(_) => usage.waited_ms += ms,
                _ => {}
            }
        }
        match state {
            State::Blocked(_) => usage.blocked_count += 1,
            State::Waiting { .. } | State::Sleeping(_) | State::Parked(_) => usage.waited_count += 1,
            _ => {}
        }
        if timing && matches!(state, State::Blocked(_) | State::Waiting { .. } | State::Sleeping(_) | State::Parked(_))
        {
            usage.since = Some(Instant::now());
        }
        if !matches!(state, State::Waiting { .. } | State::Sleeping(_) | State::Parked(_) | State::AwaitingIo { .. }) {
            slot.blocked_in = None;
        }
        slot.state = state;
    }

    /// Charges the CPU time and the allocation since the last charge to the running thread.
    pub(super) fn charge_running_thread(&mut self) {
        let (cpu_ns, user_ns) = os_thread_times();
        let mark = UsageMark { cpu_ns, user_ns, allocated: self.heap.allocated_bytes };
        let last = std::mem::replace(&mut self.usage_mark, mark);
        if let Some(s) = self.threads.get_mut(self.current) {
            s.usage.cpu_ns += mark.cpu_ns.saturating_sub(last.cpu_ns);
            s.usage.user_ns += mark.user_ns.saturating_sub(last.user_ns);
            s.usage.allocated += mark.allocated.saturating_sub(last.allocated);
        }
    }

    /// Registers a thread (its Java object and stack) and returns its index.
    pub(super) fn add_thread(&mut self, obj: Ref, daemon: bool, thread: Option<JThread>, state: State) -> usize {
        self.threads.push(Slot {
            thread,
            state,
            obj,
            daemon,
            permit: false,
            interrupted: None,
            ending: Ending::Running,
            usage: Usage::default(),
            blocked_in: None,
            in_place: false,
        });
        self.threads.len() - 1
    }

    /// True when the current thread may be switched out (it runs in its outermost activation).
    pub(super) fn can_yield(&self) -> bool {
        self.nesting == self.yield_nesting && self.scheduling
    }

    fn others_runnable(&self) -> bool {
        self.threads.iter().enumerate().any(|(i, s)| i != self.current && s.state == State::Runnable)
    }

    /// Called at backward branches when the slice is used up, by the running thread `running`.
    pub(super) fn maybe_switch(&mut self, running: Option<&JThread>) -> VmResult<()> {
        self.switch_at = self.instructions + self.opts.time_slice;
        if !self.can_yield() {
            return Ok(());
        }
        // Sleepers whose time has come compete for the processor too.
        self.update_states(Instant::now(), running);
        if self.others_runnable() {
            return Err(Fault::Yield);
        }
        Ok(())
    }

    /// Does some thread other than `t` hold the monitor of `obj`?
    fn held_elsewhere(&self, obj: Ref) -> bool {
        self.threads
            .iter()
            .enumerate()
            .any(|(i, s)| i != self.current && s.thread.as_ref().is_some_and(|th| th.held.contains(&obj)))
    }

    /// Enters the monitor of `obj`; false when another thread holds it.
    pub(super) fn try_enter(&mut self, t: &mut JThread, obj: Ref) -> bool {
        if self.held_elsewhere(obj) {
            return false;
        }
        t.held.push(obj);
        true
    }

    /// Enters the monitor or, when contended, blocks: yields if possible, else fails.
    pub(super) fn enter_or_block(&mut self, t: &mut JThread, obj: Ref) -> VmResult<()> {
        if self.try_enter(t, obj) {
            return Ok(());
        }
        if self.can_yield() {
            self.set_state(self.current, State::Blocked(obj));
            return Err(Fault::Yield);
        }
        if !self.scheduling {
            return Err(Fault::Fatal(VmError::Unsupported(
                "a contended lock before the program's threads are scheduled".into(),
            )));
        }
        // Inside a nested call: the other threads run from here until the monitor is free.
        loop {
            self.block_in_place(t, State::Blocked(obj))?;
            if self.try_enter(t, obj) {
                return Ok(());
            }
        }
    }

    /// Blocks the running thread, which is inside a nested call and so cannot be switched out,
    /// in `state`: a scheduler nested here runs the other threads until this one may go on (the
    /// monitor it waits for is free, it is notified or unparked). Its stack waits in its slot
    /// meanwhile, where the collector, thread dumps and the monitors' owners see it.
    pub(super) fn block_in_place(&mut self, t: &mut JThread, state: State) -> VmResult<()> {
        let me = self.current;
        self.set_state(me, state);
        self.threads[me].thread = Some(std::mem::take(t));
        self.threads[me].in_place = true;
        let yield_at = std::mem::replace(&mut self.yield_nesting, self.nesting + 1);
        let ran = self.schedule(Until::Runnable(me));
        self.yield_nesting = yield_at;
        self.threads[me].in_place = false;
        *t = self.threads[me].thread.take().expect("a thread blocked in place keeps its stack in its slot");
        if self.current != me {
            self.charge_running_thread();
            self.current = me;
        }
        self.switch_at = self.instructions + self.opts.time_slice;
        self.next_check = self.next_check.min(self.switch_at);
        if self.threads[me].state != State::Runnable {
            self.set_state(me, State::Runnable);
        }
        ran.map(|_| ())
    }

    /// Leaves the monitor of `obj`; false if this thread does not hold it.
    pub(super) fn exit_monitor(&mut self, t: &mut JThread, obj: Ref) -> bool {
        match t.held.iter().rposition(|&o| o == obj) {
            Some(i) => {
                t.held.remove(i);
                true
            }
            None => false,
        }
    }

    /// `Object.wait(ms)`.
    pub(super) fn monitor_wait(&mut self, t: &mut JThread, obj: Ref, ms: i64) -> VmResult<()> {
        if !t.held.contains(&obj) {
            return Err(self.throw_new(
                t,
                "java/lang/IllegalMonitorStateException",
                Some("current thread is not owner"),
            ));
        }
        if ms < 0 {
            return Err(self.throw_new(t, "java/lang/IllegalArgumentException", Some("timeout value is negative")));
        }
        if self.take_interrupt(t) {
            return Err(self.throw_new(t, "java/lang/InterruptedException", None));
        }
        let deadline = (ms > 0).then(|| Instant::now() + Duration::from_millis(ms as u64));
        if !self.can_yield() {
            // Nobody else can run while we wait in place: only a timed wait can end.
            return match deadline {
                Some(d) => self.wait_in_place(d),
                None => Err(Fault::Fatal(VmError::Unsupported("Object.wait() inside a nested VM call".into()))),
            };
        }
        let count = t.held.iter().filter(|&&o| o == obj).count();
        t.held.retain(|&o| o != obj);
        self.set_state(self.current, State::Waiting { obj, count, deadline, notified: false });
        self.threads[self.current].blocked_in = t.natives.last().map(|&(_, m)| m);
        Err(Fault::Yield)
    }

    /// `Object.notify` / `notifyAll`.
    pub(super) fn monitor_notify(&mut self, t: &mut JThread, obj: Ref, all: bool) -> VmResult<()> {
        if !t.held.contains(&obj) {
            return Err(self.throw_new(
                t,
                "java/lang/IllegalMonitorStateException",
                Some("current thread is not owner"),
            ));
        }
        for s in self.threads.iter_mut() {
            if let State::Waiting { obj: o, notified, .. } = &mut s.state {
                if *o == obj && !*notified {
                    *notified = true;
                    if !all {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Consumes the current thread's interrupt status (the `interrupted` field of its Thread).
    fn take_interrupt(&mut self, t: &JThread) -> bool {
        let set = self.get_named(t.obj, "interrupted") != 0;
        if set {
            self.set_named(t.obj, "interrupted", 0);
        }
        set
    }

    /// Waits until `deadline` without letting other threads run (a wait inside a nested call).
    fn wait_in_place(&mut self, deadline: Instant) -> VmResult<()> {
        while Instant::now() < deadline {
            self.nap_towards(deadline)?;
        }
        Ok(())
    }

    /// Sleeps one short step towards `deadline`: budgets and cancellation end a run within a step,
    /// whatever it waits for.
    fn nap_towards(&mut self, deadline: Instant) -> VmResult<()> {
        self.check_budgets(None)?;
        std::thread::sleep(deadline.saturating_duration_since(Instant::now()).min(NAP));
        Ok(())
    }

    /// `Thread.sleep(ms)`.
    pub(super) fn sleep(&mut self, t: &mut JThread, ms: i64) -> VmResult<()> {
        if ms < 0 {
            return Err(self.throw_new(t, "java/lang/IllegalArgumentException", Some("timeout value is negative")));
        }
        self.sleep_for(t, Duration::from_millis(ms as u64))
    }

    /// Sleeps `time` (JDK 21+'s `Thread.sleepNanos0`, and `sleep` before it).
    pub(super) fn sleep_for(&mut self, t: &mut JThread, time: Duration) -> VmResult<()> {
        if self.take_interrupt(t) {
            return Err(self.throw_new(t, "java/lang/InterruptedException", Some("sleep interrupted")));
        }
        if !self.can_yield() {
            if !self.scheduling {
                return self.wait_in_place(Instant::now() + time);
            }
            // Inside a nested call: the others run while it sleeps, as they would on HotSpot.
            self.block_in_place(t, State::Sleeping(Instant::now() + time))?;
            if self.threads[self.current].interrupted.take().is_some() {
                self.set_named(t.obj, "interrupted", 0);
                return Err(self.throw_new(t, "java/lang/InterruptedException", Some("sleep interrupted")));
            }
            return Ok(());
        }
        self.set_state(self.current, State::Sleeping(Instant::now() + time));
        self.threads[self.current].blocked_in = t.natives.last().map(|&(_, m)| m);
        Err(Fault::Yield)
    }

    /// `Unsafe.park(absolute, time)`: time in ns (relative) or ms since the epoch (absolute); 0 = forever.
    pub(super) fn park(&mut self, t: &mut JThread, absolute: bool, time: i64) -> VmResult<()> {
        let me = self.current;
        if self.threads[me].permit {
            self.threads[me].permit = false;
            return Ok(());
        }
        if self.get_named(t.obj, "interrupted") != 0 {
            return Ok(());
        }
        let deadline = match (absolute, time) {
            (false, 0) => None,
            (false, ns) if ns < 0 => return Ok(()),
            (false, ns) => Some(Instant::now() + Duration::from_nanos(ns as u64)),
            (true, ms) => {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                Some(Instant::now() + Duration::from_millis((ms as u64).saturating_sub(now.as_millis() as u64)))
            }
        };
        if !self.can_yield() {
            return match (self.scheduling, deadline) {
                // Inside a nested call: the others run (and may unpark it) while it is parked.
                (true, _) => self.block_in_place(t, State::Parked(deadline)),
                (false, Some(d)) => self.wait_in_place(d),
                (false, None) => Err(Fault::Fatal(VmError::Unsupported(
                    "LockSupport.park() before the program's threads are scheduled".into(),
                ))),
            };
        }
        self.set_state(me, State::Parked(deadline));
        self.threads[me].blocked_in = t.natives.last().map(|&(_, m)| m);
        Err(Fault::Yield)
    }

    /// Waits until host descriptor `fd` is ready for `events` (poll(2) bits) or `deadline`, as the
    /// running thread may: switched out (the native that called this returns `Fault::Yield` and
    /// runs again from the start once the thread is woken, see `Vm::retry_native`), blocked in
    /// place inside a nested call, or, before threads are scheduled, in a host poll.
    pub(super) fn await_io(
        &mut self,
        t: &mut JThread,
        fd: i32,
        events: i16,
        deadline: Option<Instant>,
    ) -> VmResult<()> {
        let state = State::AwaitingIo { fd, events, deadline };
        if self.can_yield() {
            self.set_state(self.current, state);
            self.threads[self.current].blocked_in = t.natives.last().map(|&(_, m)| m);
            self.retry_native = true;
            return Err(Fault::Yield);
        }
        if self.scheduling {
            return self.block_in_place(t, state);
        }
        self.check_budgets(None)?;
        let step = deadline.map_or(NAP, |d| d.saturating_duration_since(Instant::now()).min(NAP));
        poll_host(&mut [libc::pollfd { fd, events, revents: 0 }], step.as_millis() as i32);
        Ok(())
    }

    /// Makes runnable the threads awaiting a descriptor that is ready, or whose deadline passed;
    /// waits up to `timeout_ms` for one to be (0: only looks).
    fn wake_io_waiters(&mut self, now: Instant, timeout_ms: i32) {
        let mut waiting = Vec::new();
        let mut fds = Vec::new();
        for (i, s) in self.threads.iter().enumerate() {
            if let State::AwaitingIo { fd, events, deadline } = s.state {
                if deadline.is_some_and(|d| d <= now) {
                    waiting.push((i, true));
                } else {
                    waiting.push((i, false));
                    fds.push(libc::pollfd { fd, events, revents: 0 });
                }
            }
        }
        if waiting.is_empty() {
            return;
        }
        let due = waiting.iter().any(|&(_, due)| due);
        poll_host(&mut fds, if due { 0 } else { timeout_ms });
        let mut ready = fds.iter();
        for (i, due) in waiting {
            let woken = due || ready.next().is_some_and(|p| p.revents != 0);
            if woken {
                self.set_state(i, State::Runnable);
            }
        }
    }

    /// `Reference.waitForReferencePendingList`: returns when references are pending, else blocks
    /// the thread (without spinning) until a collection produces some.
    pub(super) fn await_pending_references(&mut self) -> VmResult<()> {
        if self.refs.pending != 0 {
            return Ok(());
        }
        if !self.can_yield() {
            return Err(Fault::Fatal(VmError::Unsupported(
                "Reference.waitForReferencePendingList inside a nested VM call".into(),
            )));
        }
        self.set_state(self.current, State::AwaitingReferences);
        Err(Fault::Yield)
    }

    /// A collection left references pending: the Reference Handler may run.
    pub(super) fn wake_reference_handler(&mut self) {
        for i in 0..self.threads.len() {
            if self.threads[i].state == State::AwaitingReferences {
                self.set_state(i, State::Runnable);
            }
        }
    }

    pub(super) fn slot_of(&self, thread_obj: Ref) -> Option<usize> {
        self.threads.iter().position(|s| s.obj == thread_obj)
    }

    pub(super) fn unpark(&mut self, thread_obj: Ref) {
        if let Some(i) = self.slot_of(thread_obj) {
            match self.threads[i].state {
                State::Parked(_) => self.set_state(i, State::Runnable),
                _ => self.threads[i].permit = true,
            }
        }
    }

    /// `interrupt0`: wakes a sleeping, waiting or parked thread.
    pub(super) fn interrupt(&mut self, thread_obj: Ref) {
        if let Some(i) = self.slot_of(thread_obj) {
            let s = &mut self.threads[i];
            match &mut s.state {
                State::Sleeping(_) => {
                    s.interrupted = Some("sleep interrupted");
                    self.set_state(i, State::Runnable);
                }
                State::Waiting { notified, .. } => {
                    *notified = true;
                    s.interrupted = Some("");
                }
                State::Parked(_) => self.set_state(i, State::Runnable),
                _ => {}
            }
        }
    }

    /// `Thread.start0`: a new thread whose first frame is the thread's `run()`.
    pub(super) fn start_thread(&mut self, t: &mut JThread, thread_obj: Ref) -> VmResult<()> {
        let class = self.heap.get(thread_obj).class;
        let run = self
            .find_sig("run", "()V")
            .and_then(|s| self.classes[class as usize].dispatch.get(&s).copied())
            .ok_or_else(|| VmError::Internal("Thread without run()".into()))?;
        let mut jt = JThread::new();
        jt.obj = thread_obj;
        jt.stack[0] = thread_obj as u64;
        let code = self.code_of(t, run)?;
        self.push_frame(&mut jt, run, code, 0)?;
        self.set_thread_field(thread_obj, "threadStatus", STATUS_RUNNABLE);
        let daemon = self.thread_field(thread_obj, "daemon") != 0;
        let _ = t;
        self.add_thread(thread_obj, daemon, Some(jt), State::Runnable);
        self.note_thread_started();
        Ok(())
    }

    /// Wakes sleepers and waiters whose time has come, and hands free monitors to waiting threads.
    /// `running`: the thread that runs now (its stack is out of its slot), if any.
    fn update_states(&mut self, now: Instant, running: Option<&JThread>) {
        self.wake_io_waiters(now, 0);
        for i in 0..self.threads.len() {
            let state = self.threads[i].state.clone();
            let next = match state {
                State::Sleeping(d) if d <= now => Some(State::Runnable),
                State::Parked(Some(d)) if d <= now => Some(State::Runnable),
                State::Waiting { obj, count, deadline, notified } if notified || deadline.is_some_and(|d| d <= now) => {
                    // Re-enter the monitor before returning from wait().
                    if self.monitor_free_for(i, obj, running) {
                        if let Some(th) = self.threads[i].thread.as_mut() {
                            th.held.extend(std::iter::repeat_n(obj, count));
                        }
                        Some(State::Runnable)
                    } else {
                        // Notified or timed out, it waits to re-enter the monitor: BLOCKED, as on HotSpot.
                        let blocked = State::Blocked(obj).status().unwrap_or(STATUS_RUNNABLE);
                        if self.thread_field(self.threads[i].obj, "threadStatus") != blocked {
                            self.set_thread_field(self.threads[i].obj, "threadStatus", blocked);
                        }
                        None
                    }
                }
                State::Blocked(obj) if self.monitor_free_for(i, obj, running) => Some(State::Runnable),
                _ => None,
            };
            if let Some(s) = next {
                self.set_state(i, s);
            }
        }
    }

    /// Whether no thread but `who` holds the monitor of `obj`. The running thread's monitors are
    /// in `running` (its stack is out of its slot); an ended thread holds none; a thread whose stack
    /// is out of its slot for another reason counts as holding it.
    fn monitor_free_for(&self, who: usize, obj: Ref, running: Option<&JThread>) -> bool {
        self.threads.iter().enumerate().all(|(i, s)| {
            let stack = s.thread.as_ref().or(running.filter(|r| r.obj == s.obj));
            i == who || s.state == State::Terminated || stack.is_some_and(|th| !th.held.contains(&obj))
        })
    }

    /// The program's threads wait for monitors that only they hold: no deadline (a daemon's timed
    /// wait, such as the JDK's cleaner thread) can ever free them.
    fn deadlocked(&self) -> bool {
        let live = |s: &&Slot| !s.daemon && !matches!(s.state, State::Terminated | State::Idle);
        let holder_blocked = |obj: Ref| {
            self.threads
                .iter()
                .find(|o| o.thread.as_ref().is_some_and(|th| th.held.contains(&obj)))
                .is_some_and(|h| !h.daemon && matches!(h.state, State::Blocked(_)))
        };
        let mut any = false;
        for s in self.threads.iter().filter(live) {
            match s.state {
                State::Blocked(obj) if holder_blocked(obj) => any = true,
                _ => return false,
            }
        }
        any
    }

    fn earliest_deadline(&self) -> Option<Instant> {
        self.threads
            .iter()
            .filter_map(|s| match s.state {
                State::Sleeping(d) => Some(d),
                State::Parked(Some(d)) => Some(d),
                State::Waiting { deadline: Some(d), .. } => Some(d),
                State::AwaitingIo { deadline: Some(d), .. } => Some(d),
                _ => None,
            })
            .min()
    }

    fn thread_name(&self, i: usize) -> String {
        match self.get_named(self.threads[i].obj, "name") as Ref {
            0 => format!("Thread-{i}"),
            s => self.rust_string(s),
        }
    }

    fn deadlock_report(&self) -> String {
        let mut parts = Vec::new();
        for (i, s) in self.threads.iter().enumerate() {
            if s.daemon {
                continue;
            }
            let holder = |obj: Ref| {
                self.threads
                    .iter()
                    .position(|o| o.thread.as_ref().is_some_and(|th| th.held.contains(&obj)))
                    .map(|h| format!(" held by \"{}\"", self.thread_name(h)))
                    .unwrap_or_default()
            };
            let what = match &s.state {
                State::Blocked(o) => format!(
                    "waits to lock a {}{}",
                    self.classes[self.heap.get(*o).class as usize].java_name(),
                    holder(*o)
                ),
                State::Waiting { obj, .. } => {
                    format!(
                        "waits in Object.wait() on a {} that nobody notifies",
                        self.classes[self.heap.get(*obj).class as usize].java_name()
                    )
                }
                State::Parked(None) => "is parked with nobody to unpark it".to_string(),
                _ => continue,
            };
            parts.push(format!("thread \"{}\" {what}", self.thread_name(i)));
        }
        parts.join("; ")
    }

    /// Runs `method(args)` on thread `who` and schedules every thread until that call returns.
    pub(super) fn run_scheduled(&mut self, who: usize, method: MethodId, args: &[u64]) -> VmResult<Finished> {
        let mut jt = self.threads[who].thread.take().expect("thread is parked in its slot");
        if self.methods[method as usize].is_native() {
            let prev = std::mem::replace(&mut self.current, who);
            let start = self.place_args(&mut jt, args);
            let r = self.call_native(&mut jt, method, start, args.len());
            self.current = prev;
            self.threads[who].thread = Some(jt);
            return match r {
                Ok(v) => Ok(Finished::Returned(v)),
                Err(Fault::Exception(e)) => Ok(Finished::Threw(e)),
                Err(f) => Err(f),
            };
        }
        let pushed = self.push_call(&mut jt, method, args);
        self.threads[who].thread = Some(jt);
        match pushed {
            Ok(()) => {}
            Err(Fault::Exception(e)) => return Ok(Finished::Threw(e)),
            Err(f) => return Err(f),
        }
        let base_depth = self.threads[who].thread.as_ref().map(|j| j.frames.len() - 1).unwrap_or(0);
        self.set_state(who, State::Runnable);
        match self.schedule(Until::Call(who, base_depth))? {
            Some(done) => Ok(done),
            None => Err(Fault::Fatal(VmError::Internal("scheduler ended without the target call".into()))),
        }
    }

    /// The scheduler loop, until the given call ends, every non-daemon thread has ended, or (a
    /// scheduler nested in a blocked thread's call) that thread may go on.
    fn schedule(&mut self, until: Until) -> VmResult<Option<Finished>> {
        let outer_call = self.scheduled_call;
        if let Until::Call(who, depth) = until {
            self.scheduled_call = Some((who, depth));
        }
        let r = self.schedule_loop(until);
        self.scheduled_call = outer_call;
        r
    }

    fn schedule_loop(&mut self, until: Until) -> VmResult<Option<Finished>> {
        let mut next = match until {
            Until::Call(who, _) | Until::Runnable(who) => who,
            Until::AllDone => 0,
        };
        loop {
            match until {
                Until::AllDone
                    if !self
                        .threads
                        .iter()
                        .any(|s| !s.daemon && !matches!(s.state, State::Terminated | State::Idle)) =>
                {
                    return Ok(None)
                }
                Until::Call(..) => {
                    if let Some(done) = self.call_done.take() {
                        return Ok(Some(done));
                    }
                }
                _ => {}
            }
            self.update_states(Instant::now(), None);
            if let Until::Runnable(me) = until {
                if self.threads[me].state == State::Runnable {
                    return Ok(None);
                }
            }
            // Round robin from the thread after the one that ran last; not a thread blocked in
            // place (its own scheduler resumes it), nor the scheduled call's once it has ended.
            let n = self.threads.len();
            let call_ended = self.call_done.is_some();
            let pickable = |i: usize| {
                let s = &self.threads[i];
                s.state == State::Runnable
                    && !s.in_place
                    && s.thread.is_some()
                    && !(call_ended && self.scheduled_call.is_some_and(|(who, _)| who == i))
            };
            let pick = (0..n).map(|k| (next + k) % n).find(|&i| pickable(i));
            let Some(i) = pick else {
                if self.deadlocked() {
                    return Err(Fault::Fatal(VmError::Deadlock(self.deadlock_report())));
                }
                if self.threads.iter().any(|s| matches!(s.state, State::AwaitingIo { .. })) {
                    // Nothing to run: the host's poll waits for a descriptor or the next deadline.
                    self.check_budgets(None)?;
                    let step =
                        self.earliest_deadline().map_or(NAP, |d| d.saturating_duration_since(Instant::now()).min(NAP));
                    self.wake_io_waiters(Instant::now(), step.as_millis().max(1) as i32);
                    continue;
                }
                match self.earliest_deadline() {
                    Some(d) => {
                        self.nap_towards(d)?;
                        continue;
                    }
                    None if matches!(until, Until::Runnable(_)) => {
                        return Err(Fault::Fatal(VmError::Unsupported(format!(
                            "threads that wait for each other across nested VM calls (class initialization or a native calling Java): {}",
                            self.deadlock_report()
                        ))))
                    }
                    None => return Err(Fault::Fatal(VmError::Deadlock(self.deadlock_report()))),
                }
            };
            let mut jt = self.threads[i].thread.take().expect("runnable thread has a stack");
            if i != self.current {
                self.charge_running_thread();
            }
            self.current = i;
            self.switch_at = self.instructions + self.opts.time_slice;
            self.next_check = self.next_check.min(self.switch_at);
            if let Some(msg) = self.threads[i].interrupted.take() {
                self.set_named(jt.obj, "interrupted", 0);
                let msg = (!msg.is_empty()).then_some(msg);
                // Made from the scheduler: its constructor runs nested, never switched out.
                self.nesting += 1;
                let made = self.throw_new(&mut jt, "java/lang/InterruptedException", msg);
                self.nesting -= 1;
                match made {
                    Fault::Exception(e) => jt.pending_exception = e,
                    other => {
                        self.threads[i].thread = Some(jt);
                        return Err(other);
                    }
                }
            }
            // The scheduled call's thread runs down to that call's frame, in whichever scheduler.
            let is_target = self.scheduled_call.is_some_and(|(who, _)| who == i);
            let base = match self.scheduled_call {
                Some((who, depth)) if who == i => depth,
                _ => 0,
            };
            let result = if jt.frames.len() > base {
                self.nesting += 1;
                jt.suspended = false;
                let r = self.run(&mut jt, base);
                self.nesting -= 1;
                r
            } else {
                Ok(0)
            };
            jt.suspended = matches!(result, Err(Fault::Yield));
            self.threads[i].thread = Some(jt);
            next = (i + 1) % self.threads.len();
            let done = match result {
                Ok(v) if is_target => Some(Finished::Returned(v)),
                Err(Fault::Exception(e)) if is_target => Some(Finished::Threw(e)),
                _ => None,
            };
            if let Some(done) = done {
                if matches!(until, Until::Call(..)) {
                    return Ok(Some(done));
                }
                // Ended inside a nested scheduler: kept (its exception a root) for the outer one.
                self.call_done = Some(done);
                continue;
            }
            match result {
                Err(Fault::Yield) => continue,
                Ok(_) => self.end_call(i, None)?,
                Err(Fault::Exception(e)) => self.end_call(i, Some(e))?,
                Err(other) => return Err(other),
            }
        }
    }

    /// A thread's outermost call ended: after `run()`, its uncaught exception (if any) goes to
    /// `dispatchUncaughtException`; then `Thread.exit` runs (what those two throw is dropped, as
    /// on HotSpot); after that the thread is terminated. Each call is pushed on the thread's stack
    /// for the scheduler to run.
    fn end_call(&mut self, i: usize, uncaught: Option<Ref>) -> VmResult<()> {
        let obj = self.threads[i].obj;
        let thread_class = self.lookup_class("java/lang/Thread").expect("Thread is loaded");
        let mut uncaught = uncaught.filter(|_| self.threads[i].ending == Ending::Running);
        loop {
            let (ending, call) = match (self.threads[i].ending, uncaught.take()) {
                (Ending::Running, Some(e)) => (
                    Ending::Dispatching,
                    self.find_method(thread_class, "dispatchUncaughtException", "(Ljava/lang/Throwable;)V")
                        .map(|m| (m, vec![obj as u64, e as u64])),
                ),
                (Ending::Running | Ending::Dispatching, _) => (
                    Ending::Exiting,
                    self.find_declared_method(thread_class, "exit", "()V").map(|m| (m, vec![obj as u64])),
                ),
                (Ending::Exiting, _) => return self.terminate(i),
            };
            self.threads[i].ending = ending;
            let Some((m, args)) = call else { continue };
            let mut jt = self.threads[i].thread.take().expect("ending thread in slot");
            let pushed = self.push_call(&mut jt, m, &args);
            self.threads[i].thread = Some(jt);
            match pushed {
                Ok(()) => return Ok(()),
                Err(Fault::Exception(_)) => continue,
                Err(other) => return Err(other),
            }
        }
    }

    /// Pushes a frame calling the Java method `m` with `args` on `jt` (not run yet).
    fn push_call(&mut self, jt: &mut JThread, m: MethodId, args: &[u64]) -> VmResult<()> {
        let start = self.place_args(jt, args);
        let code = self.code_of(jt, m)?;
        self.push_frame(jt, m, code, start)
    }

    /// Puts a call's arguments above `jt`'s top frame; returns where they start.
    fn place_args(&mut self, jt: &mut JThread, args: &[u64]) -> usize {
        let start = jt.top_sp();
        jt.ensure_capacity(start + args.len() + 16);
        jt.stack[start..start + args.len()].copy_from_slice(args);
        if T::FLOW && self.observing(jt) {
            (start..start + args.len()).for_each(|slot| self.tracker.flow_new(slot));
        }
        start
    }

    /// The thread is done: terminated, its monitors released, the threads joining it woken.
    fn terminate(&mut self, i: usize) -> VmResult<()> {
        let obj = self.threads[i].obj;
        self.set_thread_field(obj, "threadStatus", STATUS_TERMINATED);
        // Its stack goes (and the monitors it still held with it).
        self.threads[i].thread = None;
        self.threads[i].state = State::Terminated;
        // Joiners wait on the Thread object itself.
        for s in self.threads.iter_mut() {
            if let State::Waiting { obj: o, notified, .. } = &mut s.state {
                if *o == obj {
                    *notified = true;
                }
            }
        }
        Ok(())
    }

    /// Runs every thread until no non-daemon thread other than `who` is alive (the JVM's exit rule).
    pub(super) fn await_non_daemon_threads(&mut self, who: usize) -> VmResult<()> {
        self.threads[who].state = State::Idle;
        let r = self.schedule(Until::AllDone);
        self.threads[who].state = State::Runnable;
        r.map(|_| ())
    }
}

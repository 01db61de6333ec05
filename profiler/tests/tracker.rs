//! The tracker hooks fire for what a program does: a program with known work in, counts out.
//!
//! Every test runs the same tracker type, [`Probe`] (a counter, a taint tracker, one that can crash
//! and one that records thread switches): each tracker type is another copy of the interpreter to
//! compile, and this keeps the test binary to one.

use bloatlens_profiler::run::{run, run_with, RunConfig, RunResult};
use bloatlens_profiler::vm::{CountingTracker, Outcome};
use std::process::Command;

/// The trackers of every test, in one run: those a test does not ask for see the run and change
/// nothing ([`CrashingTracker`] crashes only at the allocation it is given).
type Probe = (CountingTracker, taint::Taint, (CrashingTracker, ThreadTells));

fn probe() -> Probe {
    Default::default()
}

fn run_probe(config: &RunConfig, probe: Probe) -> (RunResult, Probe) {
    run_with(config, probe).unwrap()
}

const PROGRAM: &str = r#"
public class Work {
    static final class Cell { int v; Cell(int v) { this.v = v; } }
    public static void main(String[] args) {
        Cell[] cells = new Cell[1000];
        for (int i = 0; i < cells.length; i++) cells[i] = new Cell(i);
        long sum = 0;
        for (Cell c : cells) { c.v = c.v * 2; sum += c.v; }
        int[] copy = new int[500];
        System.arraycopy(new int[500], 0, copy, 0, 500);
        System.out.println(sum);
    }
}
"#;

/// `source` compiled as class `name` into a fresh directory, and the run of its `main` there,
/// capturing its output.
fn compiled(name: &str, source: &str) -> (tempfile::TempDir, RunConfig) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{name}.java"));
    std::fs::write(&file, source).unwrap();
    let ok = Command::new("javac").arg("-d").arg(dir.path()).arg(&file).status().unwrap();
    assert!(ok.success());
    let mut config = RunConfig::new(dir.path().display().to_string(), name);
    config.capture = true;
    (dir, config)
}

#[test]
fn hooks_count_what_the_program_does() {
    let (_dir, config) = compiled("Work", PROGRAM);
    let plain = run(&config).unwrap();
    let (result, (counts, ..)) = run_probe(&config, probe());
    assert!(matches!(result.outcome, Outcome::Exited(0)), "{:?}", result.outcome);
    assert_eq!(String::from_utf8_lossy(&result.stdout), "999000\n");
    // The tracker does not change what the program computes or how much it executes (up to the
    // JDK's own per-run randomness: ImmutableCollections salts its iteration order with nanoTime).
    assert_eq!(plain.stdout, result.stdout);
    let (a, b) = (plain.stats.instructions as f64, result.stats.instructions as f64);
    // (That salt flips iteration orders inside the JDK, which moves the count by a fraction of a percent.)
    assert!((a - b).abs() / a < 0.02, "instructions plain {a} vs tracked {b}");
    // 1000 cells + arrays in main, plus whatever the JDK allocates at start-up and in println.
    assert!(counts.allocations >= 1003, "allocations {}", counts.allocations);
    // `c.v = c.v * 2` and the constructor's store: at least 2000 field stores, 2000 loads.
    assert!(counts.field_stores >= 2000 && counts.field_loads >= 2000, "{counts:?}");
    assert!(counts.array_stores >= 1000 && counts.array_loads >= 1000, "{counts:?}");
    // Locals loads and stores, dups and returns are moves; every `i < cells.length` consumes two values.
    assert!(counts.moves > 5000 && counts.consumed >= 2000, "{counts:?}");
    // `c.v` reads and writes use the cell; `println` passes its argument on.
    assert!(counts.uses >= 4000 && counts.passes >= 1, "{counts:?}");
    assert!(counts.natives >= 1, "{counts:?}");
    assert!(counts.calls >= 1000 && counts.returns >= 1000, "{counts:?}");
    assert!(counts.bulk_copied >= 500, "arraycopy is seen element by element: {counts:?}");
}

/// A taint tracker built from the framework's shadows: a value loaded from a static holding the
/// magic number is tainted; taint follows moves, calls and returns, arithmetic, heap stores and
/// loads (fields, elements, statics) and bulk copies (`clone`). Proves the shadows carry a value
/// through every kind of storage.
mod taint {
    use bloatlens_profiler::analysis::shadow::{ShadowHeap, ShadowStack};
    use bloatlens_profiler::vm::heap::Ref;
    use bloatlens_profiler::vm::tracker::{Bulk, Context, HeapLoc, Site, Tracker, Value};

    pub const MAGIC: u64 = 0x5EC12E7;

    #[derive(Default)]
    pub struct Taint {
        slots: ShadowStack<bool>,
        heap: ShadowHeap<bool>,
        /// Values stored to statics, with their taint.
        pub static_stores: Vec<(u64, bool)>,
    }

    impl Tracker for Taint {
        const FLOW: bool = true;
        fn on_bulk_copy(&mut self, src: Ref, sp: usize, dst: Ref, dp: usize, len: usize, unit: Bulk) {
            self.heap.bulk_copy(src, sp, dst, dp, len, unit);
        }
        fn on_free(&mut self, obj: Ref, _: u32, _: usize) {
            self.heap.free(obj);
        }
        fn on_thread(&mut self, thread: usize) {
            self.slots.switch_to(thread);
        }
        fn flow_new(&mut self, dst: usize) {
            self.slots.set(dst, false);
        }
        fn flow_move(&mut self, _: Site, src: usize, dst: usize) {
            self.slots.copy(src, dst);
        }
        fn flow_shuffle(&mut self, base: usize, from: &[usize]) {
            self.slots.shuffle(base, from);
        }
        fn flow_compute(&mut self, _: Site, srcs: &[usize], dst: Option<usize>) {
            let tainted = srcs.iter().any(|&s| self.slots.get(s));
            if let Some(d) = dst {
                self.slots.set(d, tainted);
            }
        }
        fn flow_load(&mut self, _: &Context, _: Site, loc: HeapLoc, value: Value, dst: usize) {
            let source = matches!(loc, HeapLoc::Static { .. }) && value.bits == MAGIC;
            let tag = source || self.heap.get(loc);
            self.slots.set(dst, tag);
        }
        fn flow_store(&mut self, _: &Context, _: Site, loc: HeapLoc, value: Value, _: u8, src: usize) {
            let tag = self.slots.get(src);
            self.heap.set(loc, tag);
            if let HeapLoc::Static { .. } = loc {
                self.static_stores.push((value.bits, tag));
            }
        }
    }
}

const TAINT_PROGRAM: &str = r#"
public class Flow {
    static int SECRET = 0x5EC12E7;
    static int OUT, CLEAN;
    static final class Box { int v; }
    static int twice(int x) { return x * 2; }
    public static void main(String[] args) {
        int[] a = new int[4];
        a[1] = twice(SECRET) + 1;
        int[] b = a.clone();
        Box box = new Box();
        box.v = b[1];
        int leak = box.v - 1;
        OUT = leak;
        CLEAN = a[0] + 5;
        System.out.println(OUT + " " + CLEAN);
    }
}
"#;

#[test]
fn shadows_carry_a_value_through_every_kind_of_storage() {
    let (_dir, config) = compiled("Flow", TAINT_PROGRAM);
    let (result, (_, taint, _)) = run_probe(&config, probe());
    assert_eq!(String::from_utf8_lossy(&result.stdout), format!("{} 5\n", taint::MAGIC * 2));
    let out = taint.static_stores.iter().find(|s| s.0 == taint::MAGIC * 2).expect("the store to OUT");
    assert!(out.1, "taint went static → call → arithmetic → element → clone → field → arithmetic → static");
    let clean = taint.static_stores.iter().find(|s| s.0 == 5).expect("the store to CLEAN");
    assert!(!clean.1, "an untainted element stays untainted");
}

/// Crashes (a panic, as a bug of ours would) at its `at`-th allocation (never when it is 0).
#[derive(Default)]
struct CrashingTracker {
    at: u64,
    allocations: u64,
    finished: bool,
}

impl bloatlens_profiler::vm::Tracker for CrashingTracker {
    fn on_alloc(&mut self, _: &bloatlens_profiler::vm::tracker::Context, _: &bloatlens_profiler::vm::tracker::Alloc) {
        self.allocations += 1;
        if self.at > 0 && self.allocations == self.at {
            panic!("a tracker crashed on purpose");
        }
    }
    fn finish(&mut self, _: &[bloatlens_profiler::vm::class::Method], _: &[bloatlens_profiler::vm::class::Class]) {
        self.finished = true;
    }
}

/// A crash inside the run does not lose what the trackers saw: the run ends as stopped, with the
/// crash as its reason, and the trackers are finished and handed back for a partial report.
#[test]
fn a_crash_keeps_what_the_trackers_saw() {
    let (_dir, config) = compiled("Work", PROGRAM);
    let (_, (counts, ..)) = run_probe(&config, probe());
    // Late in main: after the 1000 cells.
    let at = counts.allocations - 2;
    let mut crashing = probe();
    crashing.2 .0.at = at;
    let (result, (.., (tracker, _))) = run_probe(&config, crashing);
    match &result.outcome {
        Outcome::Stopped(e) => assert!(e.to_string().contains("a tracker crashed on purpose"), "{e}"),
        other => panic!("expected a stopped run, got {other:?}"),
    }
    assert_eq!(result.status(), bloatlens_profiler::run::STATUS_NOT_RUN);
    assert_eq!(tracker.allocations, at);
    assert!(tracker.finished, "the trackers were not finished after the crash");
    assert!(result.stats.instructions > 10_000, "the run's statistics are kept: {:?}", result.stats);
}

const THREADS: &str = r#"
public class Threads {
    static int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += step(i); return s; }
    static int step(int i) { return i % 7; }
    public static void main(String[] args) throws Exception {
        int[] r = new int[2];
        Thread a = new Thread(() -> r[0] = work(200000));
        Thread b = new Thread(() -> r[1] = work(200000));
        a.start(); b.start(); a.join(); b.join();
        System.out.println(r[0] + r[1]);
    }
}
"#;

/// Records which thread the trackers are told the events belong to, and the calls told before any.
#[derive(Default)]
struct ThreadTells {
    tells: Vec<usize>,
    calls: u64,
    calls_untold: u64,
}

impl bloatlens_profiler::vm::Tracker for ThreadTells {
    fn on_thread(&mut self, thread: usize) {
        self.tells.push(thread);
    }
    fn on_call(
        &mut self,
        _: bloatlens_profiler::vm::tracker::Site,
        _: bloatlens_profiler::vm::class::MethodId,
        _: usize,
        _: bloatlens_profiler::vm::heap::Ref,
        _: &bloatlens_profiler::vm::tracker::Arguments,
    ) {
        self.calls += 1;
        self.calls_untold += self.tells.is_empty() as u64;
    }
}

/// The running thread is told whenever it changes and only then: with two threads time-sliced,
/// every tell names another thread than the one before, and no call comes before the first tell.
#[test]
fn the_thread_is_told_when_it_changes() {
    let (_dir, config) = compiled("Threads", THREADS);
    let (result, (.., (_, t))) = run_probe(&config, probe());
    assert_eq!(String::from_utf8_lossy(&result.stdout), "1199988\n", "{:?}", result.outcome);
    assert!(t.calls > 400_000, "both workers' calls are seen: {}", t.calls);
    assert_eq!(t.calls_untold, 0);
    let distinct: std::collections::BTreeSet<usize> = t.tells.iter().copied().collect();
    assert!(distinct.len() >= 3, "main and both workers are told: {:?}", distinct);
    assert!(t.tells.windows(2).all(|w| w[0] != w[1]), "a tell repeats the thread before it: {:?}", t.tells);
    assert!(t.tells.len() < 10_000, "told at every call, not at every change: {}", t.tells.len());
}

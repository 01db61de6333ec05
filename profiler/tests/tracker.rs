//! The tracker hooks fire for what a program does: a program with known work in, counts out.

use bloatlens_profiler::run::{run_with, RunConfig};
use bloatlens_profiler::vm::{CountingTracker, NoTracker, Outcome};
use std::process::Command;

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

fn compile() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Work.java"), PROGRAM).unwrap();
    let ok = Command::new("javac").arg("-d").arg(dir.path()).arg(dir.path().join("Work.java")).status().unwrap();
    assert!(ok.success());
    dir
}

#[test]
fn hooks_count_what_the_program_does() {
    let dir = compile();
    let mut config = RunConfig::new(dir.path().display().to_string(), "Work");
    config.capture = true;
    let (plain, _) = run_with(&config, NoTracker).unwrap();
    let (result, counts) = run_with(&config, CountingTracker::default()).unwrap();
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

//! Measured fixes: does a finding's `share` — what a fix would save — hold when the fix is made?
//!
//! `fixtures/bloat/fixes/<program>-<pattern>/` holds a copy of a scored-corpus program
//! (`fixtures/bloat/corpus/<program>/`) with the problem of one of its findings fixed by hand
//! (`Main.java`, printing what the original prints) and `fix.txt`, which names the finding
//! (`program:`, `line:` in the original, `pattern:`) and says what changed (`change:`). Here: reading
//! them, what the VM counts of a run ([`VmTotals`]), and the saving a fix measured, in the unit of
//! the finding's share ([`Unit`], [`measured_share`]). The test that holds claims to their fixes
//! (`tests/fixes.rs`) and `bloatlens-bench --fixes` (which adds `java`) use them.

use crate::analysis::bottleneck::BottleneckTracker;
use crate::analysis::copy::CopyTracker;
use crate::analysis::costben::CostBenefitTracker;
use crate::analysis::lifetime::LifetimeTracker;
use crate::analysis::refprop::RefPropTracker;
use crate::report::{Finding, Kind, Report, Settings};
use crate::run::{run_with, RunConfig, RunResult};
use crate::vm::Outcome;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One hand-made fix of one finding.
#[derive(Debug, Clone)]
pub struct Fix {
    /// The directory's name: `<program>-<pattern>`.
    pub name: String,
    /// The fixed program's directory.
    pub dir: PathBuf,
    /// The corpus program it fixes.
    pub program: String,
    /// The finding's line in the original's `Main.java`.
    pub line: u32,
    /// The finding's pattern, as the JSON report names it.
    pub pattern: String,
    /// What the fix changed, in one sentence.
    pub change: String,
}

/// Reads `dir/fix.txt` (`key: value` lines: `program`, `line`, `pattern`, `change`).
pub fn read_fix(dir: &Path) -> Result<Fix, String> {
    let path = dir.join("fix.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let field = |key: &str| -> Result<String, String> {
        text.lines()
            .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("{}: no `{key}:` line", path.display()))
    };
    let line = field("line")?;
    Ok(Fix {
        name: dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        dir: dir.to_path_buf(),
        program: field("program")?,
        line: line.parse().map_err(|_| format!("{}: line `{line}` is not a number", path.display()))?,
        pattern: field("pattern")?,
        change: field("change")?,
    })
}

/// Every fix under `root` (its directories that hold a `fix.txt`), by name.
pub fn read_fixes(root: &Path) -> Result<Vec<Fix>, String> {
    let entries = std::fs::read_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut dirs: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join("fix.txt").is_file()).collect();
    dirs.sort();
    dirs.iter().map(|d| read_fix(d)).collect()
}

/// Compiles the `.java` files under `dir` with `javac -g` into `out`.
pub fn compile(dir: &Path, out: &Path) -> Result<(), String> {
    let sources = crate::javac::java_files(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let javac = crate::javac::find_javac(None).map_err(|e| format!("{e:?}"))?;
    let output = Command::new(javac)
        .args(["-g", "-encoding", "UTF-8", "-d"])
        .arg(out)
        .args(&sources)
        .output()
        .map_err(|e| format!("javac: {e}"))?;
    if !output.status.success() {
        return Err(format!("javac {}: {}", dir.display(), String::from_utf8_lossy(&output.stderr)));
    }
    Ok(())
}

/// The run of `Main` from `class_path`, its output captured, its findings placed on the lines of
/// the sources in `source_root`.
pub fn run_config(class_path: &Path, source_root: &Path) -> RunConfig {
    let mut run = RunConfig::new(class_path.display().to_string(), "Main");
    run.capture = true;
    run.source_roots = vec![source_root.to_path_buf()];
    run
}

/// The shown finding of `fix.pattern` on `fix.line` of the original's report.
pub fn finding_of<'a>(report: &'a Report, fix: &Fix) -> Option<&'a Finding> {
    report.findings.iter().find(|f| {
        f.hidden.is_none() && f.location.line == Some(fix.line) && f.pattern.is_some_and(|p| p.id() == fix.pattern)
    })
}

/// What the VM counts of one run: the totals a finding's share is taken of, and the costs of
/// `main` alone (the JVM's start-up and shutdown left out, as a harness that times `main`
/// under `java` sees it).
#[derive(Debug, Clone, Default)]
pub struct VmTotals {
    /// Bytecode instructions of the whole run (the share of a low-utility finding is of these).
    pub instructions: u64,
    /// Bytes allocated by the whole run (the share of NATH, usage and lifetime findings).
    pub allocated_bytes: u64,
    /// Heap-to-heap copies of the whole run (the share of copy chains and clones).
    pub copies: u64,
    /// Instructions of `main` and what it called (the share of a bottleneck: its `total`).
    pub main_instructions: u64,
    /// Bytes allocated by `main` and what it called.
    pub main_bytes: u64,
    /// The heap the run ends with: objects that survived a collection and lived to the end (a
    /// possible leak's share is of this).
    pub heap_at_end: u64,
    /// What the program printed.
    pub stdout: Vec<u8>,
}

/// Runs the program under the trackers that count what shares are taken of (copies, the
/// calling-context tree, lifetimes), with `settings` as a profile would use them. An error when
/// the run could not start or did not end by itself.
pub fn vm_totals(run: &RunConfig, settings: &Settings) -> Result<VmTotals, String> {
    let mut run = run.clone();
    run.gc_interval_bytes = Some(settings.young_gen_bytes);
    // The trackers as a profile holds them (one interpreter built for both), the three on.
    let trackers = (
        Some(CopyTracker::new(settings.clone())),
        None::<RefPropTracker>,
        None::<CostBenefitTracker>,
        Some(BottleneckTracker::new(settings.clone())),
        Some(LifetimeTracker::new(settings.clone(), settings.young_gen_bytes, true)),
    );
    let (result, (copy, _, _, bottleneck, lifetime)): (RunResult, _) =
        run_with(&run, trackers).map_err(|e| format!("{}: {e}", run.class_path))?;
    let (Some(copy), Some(bottleneck), Some(lifetime)) = (copy, bottleneck, lifetime) else {
        unreachable!("the three trackers were on")
    };
    if !matches!(result.outcome, Outcome::Exited(0)) {
        return Err(format!(
            "{}: the run ended with {:?}: {}",
            run.class_path,
            result.outcome,
            String::from_utf8_lossy(&result.stderr)
        ));
    }
    let nodes = &bottleneck.tree.nodes;
    Ok(VmTotals {
        instructions: result.stats.instructions,
        allocated_bytes: result.stats.allocated_bytes,
        copies: copy.total_copies,
        main_instructions: nodes.iter().map(|n| n.instructions).sum(),
        main_bytes: nodes.iter().map(|n| n.bytes).sum(),
        heap_at_end: lifetime.heap_at_end(),
        stdout: result.stdout,
    })
}

/// What a finding's `share` is a share of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Heap-to-heap copies of the run: copy chains and clones.
    Copies,
    /// Bytes allocated by the run: NATH, usage and lifetime findings.
    AllocatedBytes,
    /// The heap the run ends with: a possible leak.
    HeapAtEnd,
    /// Instructions of the run: low-utility structures.
    Instructions,
    /// Instructions of `main`: call paths (bottlenecks).
    MainInstructions,
}

impl Unit {
    /// The unit of `f.share` (as triage computes it).
    pub fn of(f: &Finding) -> Unit {
        match f.kind {
            Kind::CopyChain | Kind::Clone => Unit::Copies,
            Kind::Bottleneck => Unit::MainInstructions,
            Kind::LowUtility => Unit::Instructions,
            Kind::Lifetime if f.evidence.get("leak").and_then(|l| l.as_bool()) == Some(true) => Unit::HeapAtEnd,
            Kind::Nath
            | Kind::MostlyNath
            | Kind::NeverUsed
            | Kind::RarelyUsed
            | Kind::WriteReadImbalance
            | Kind::Lifetime => Unit::AllocatedBytes,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Unit::Copies => "heap copies",
            Unit::AllocatedBytes => "allocated bytes",
            Unit::HeapAtEnd => "heap at end",
            Unit::Instructions => "instructions",
            Unit::MainInstructions => "instructions of main",
        }
    }
}

/// The saving a fix measured on the VM, in the unit of the finding's share: what the original
/// counted less what the fixed program counts, over the original's total. Negative when the fix
/// costs more. The one place that says what a share's unit measures: when the unit changes, so
/// does this.
pub fn measured_share(unit: Unit, before: &VmTotals, after: &VmTotals) -> f64 {
    let saved = |b: u64, a: u64| saving(b as f64, a as f64);
    match unit {
        Unit::Copies => saved(before.copies, after.copies),
        Unit::AllocatedBytes => saved(before.allocated_bytes, after.allocated_bytes),
        Unit::HeapAtEnd => saved(before.heap_at_end, after.heap_at_end),
        Unit::Instructions => saved(before.instructions, after.instructions),
        Unit::MainInstructions => saved(before.main_instructions, after.main_instructions),
    }
}

/// `(before − after) / before`: a saving as a share of the original (0 when there was nothing).
pub fn saving(before: f64, after: f64) -> f64 {
    if before == 0.0 {
        0.0
    } else {
        (before - after) / before
    }
}

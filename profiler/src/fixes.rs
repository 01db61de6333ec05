//! Measured fixes: does a finding's `share` — what a fix would save — hold when the fix is made?
//!
//! `fixtures/bloat/fixes/<program>-<pattern>/` holds a copy of a scored-corpus program
//! (`fixtures/bloat/corpus/<program>/`) with the problem of one of its findings fixed by hand
//! (`Main.java`, printing what the original prints) and `fix.txt`, which names the finding
//! (`program:`, `line:` in the original, `pattern:`) and says what changed (`change:`). Here: reading
//! them, what the VM counts of a run ([`VmTotals`]), and the saving a fix measured, in the unit of
//! the finding's share ([`Unit`], [`measured_share`]). The test that holds claims to their fixes
//! (`tests/fixes.rs`) and `bloatlens-bench --fixes` (which adds `java`) use them.

use crate::analysis::lifetime::LifetimeTracker;
use crate::cost_model::{CostModel, Work};
use crate::report::{Finding, Report, Settings};
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

/// What the VM counts of one run: the program's own work (the run less the JDK's boot before
/// `main`, as a share is taken of it and as a harness that times `main` under `java` sees it) and
/// the heap it ends with.
#[derive(Debug, Clone, Default)]
pub struct VmTotals {
    /// Bytecode instructions and allocated bytes of the whole run.
    pub run: Work,
    /// Of `run`, what booting the JDK took before `main`.
    pub boot: Work,
    /// The heap the run ends with: objects that survived a collection and lived to the end (a
    /// possible leak's share may be of this).
    pub heap_at_end: u64,
    /// What the program printed.
    pub stdout: Vec<u8>,
}

impl VmTotals {
    /// The program's own work: the run less the JDK's boot.
    pub fn program(&self) -> Work {
        self.run.minus(self.boot)
    }
}

/// Runs the program under the lifetime tracker (which knows the heap the run ends with), with
/// `settings` as a profile would use them. An error when the run could not start or did not end
/// by itself.
pub fn vm_totals(run: &RunConfig, settings: &Settings) -> Result<VmTotals, String> {
    let mut run = run.clone();
    run.gc_interval_bytes = Some(settings.young_gen_bytes);
    let tracker = LifetimeTracker::new(settings.clone(), settings.young_gen_bytes, false);
    let (result, lifetime): (RunResult, _) = run_with(&run, tracker).map_err(|e| format!("{}: {e}", run.class_path))?;
    if !matches!(result.outcome, Outcome::Exited(0)) {
        return Err(format!(
            "{}: the run ended with {:?}: {}",
            run.class_path,
            result.outcome,
            String::from_utf8_lossy(&result.stderr)
        ));
    }
    Ok(VmTotals {
        run: Work::new(result.stats.instructions, result.stats.allocated_bytes),
        boot: result.boot,
        heap_at_end: lifetime.heap_at_end(),
        stdout: result.stdout,
    })
}

/// What a finding's `share` is a share of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// The program's estimated time on a warmed-up HotSpot ([`CostModel::HOTSPOT`] over its own
    /// instructions and bytes): every finding.
    HotSpotTime,
    /// The larger of that and the share of the heap the run ends with: a possible leak.
    HotSpotTimeOrHeapAtEnd,
}

impl Unit {
    /// The unit of `f.share` (as triage computes it).
    pub fn of(f: &Finding) -> Unit {
        if matches!(&f.evidence, crate::evidence::Evidence::Lifetime(l) if l.leak) {
            Unit::HotSpotTimeOrHeapAtEnd
        } else {
            Unit::HotSpotTime
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Unit::HotSpotTime => "estimated HotSpot time",
            Unit::HotSpotTimeOrHeapAtEnd => "estimated HotSpot time or heap at end",
        }
    }
}

/// The estimated HotSpot time of `work`, in nanoseconds: what a share is a share of.
pub fn estimated_nanos(work: Work) -> f64 {
    CostModel::HOTSPOT.nanos(work)
}

/// The saving a fix measured on the VM, in the unit of the finding's share: what the original
/// cost less what the fixed program costs, over the original's cost. Negative when the fix costs
/// more. The one place that says what a share's unit measures: when the unit changes, so does
/// this.
pub fn measured_share(unit: Unit, before: &VmTotals, after: &VmTotals) -> f64 {
    let time = saving(estimated_nanos(before.program()), estimated_nanos(after.program()));
    match unit {
        Unit::HotSpotTime => time,
        Unit::HotSpotTimeOrHeapAtEnd => time.max(saving(before.heap_at_end as f64, after.heap_at_end as f64)),
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

/// The quick fixes ([`crate::quickfix`]) offered for the shown findings of the corpus program
/// `program` (a directory with its `Main.java`), each written as a fix directory under `out`
/// (`<program>-<fix kind>-<line>/`: the fixed `Main.java` and its `fix.txt`), as the hand-made
/// fixes are, so that the same measurements hold them to their claims. With the report they came
/// from.
pub fn quick_fixes(program: &Path, out: &Path, settings: &Settings) -> Result<(Vec<Fix>, Report), String> {
    use crate::profile::{profile, Analyses, ProfileConfig};
    use crate::quickfix::{apply, fix_for, Target};
    let name = program.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let classes = out.join("classes").join(&name);
    compile(program, &classes)?;
    let config = ProfileConfig {
        run: run_config(&classes, program),
        analyses: Analyses::default(),
        settings: settings.clone(),
        threads: Default::default(),
    };
    let (_, report) = profile(&config).map_err(|e| format!("{name}: {e}"))?;
    let main = program.join("Main.java");
    let text = std::fs::read_to_string(&main).map_err(|e| format!("{}: {e}", main.display()))?;
    let mut made = Vec::new();
    for f in report.shown() {
        if f.location.file.as_deref() != Some("Main.java") {
            continue;
        }
        let (Ok(fix), Some(pattern), Some(line)) = (fix_for(&Target::new(f, &text, &[])), f.pattern, f.location.line)
        else {
            continue;
        };
        let dir = out.join(format!("{name}-{}-{line}", fix.kind));
        if dir.exists() {
            continue;
        }
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let write = |file: &str, body: &str| {
            std::fs::write(dir.join(file), body).map_err(|e| format!("{}: {e}", dir.join(file).display()))
        };
        write("Main.java", &apply(&text, &fix.edits))?;
        write(
            "fix.txt",
            &format!("program: {name}\nline: {line}\npattern: {}\nchange: {}\n", pattern.id(), fix.title),
        )?;
        made.push(read_fix(&dir)?);
    }
    Ok((made, report))
}

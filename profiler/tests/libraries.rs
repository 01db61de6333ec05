//! The real-library suite: every workload in `fixtures/libraries/<name>/` drives one library (from
//! Debian's packages) or one JDK module the way its users do; it is compiled, run under HotSpot and
//! under the Bloatlens VM, on JDK 17 and on JDK 25, and must print the same stdout and exit with the
//! same status. Libraries may log to stderr (with times), so stderr is not compared.
//!
//! A workload's class path is its `resources/` directory (if any) and the jars its `packages.txt`
//! names, found with `dpkg -L` by `scripts/resolve-library-classpath.sh` (`.ci/run` installs the
//! packages with `scripts/install-library-suite.sh`). `known-gaps.txt` lists the trials (`NAME`,
//! `jdk25/NAME`) that do not pass yet, each with its reason; they run as ignored tests.

mod hotspot;

use hotspot::{compare, known_gaps, lines, programs, trials, Jdk, Program};
use libtest_mimic::{Arguments, Failed};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/libraries")
}

/// The workload's resources directory and jars, in that order.
fn class_path(dir: &Path) -> Result<Vec<String>, Failed> {
    let mut entries = Vec::new();
    let resources = dir.join("resources");
    if resources.is_dir() {
        entries.push(resources.display().to_string());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/resolve-library-classpath.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string().into());
    }
    entries
        .extend(String::from_utf8_lossy(&out.stdout).trim().split(':').filter(|s| !s.is_empty()).map(str::to_string));
    Ok(entries)
}

fn check(jdk: &Jdk, dir: &Path) -> Result<(), Failed> {
    let program = Program {
        dir: dir.into(),
        class_path: class_path(dir)?,
        args: lines(dir, "args.txt"),
        compare_stderr: false,
        max_seconds: 300,
        profiled: false,
        gc_interval_bytes: None,
    };
    compare(jdk, &program)
}

fn main() {
    let args = Arguments::from_args();
    let dirs = programs(&fixtures());
    assert!(dirs.len() >= 25, "the suite has {} workloads", dirs.len());
    let known = known_gaps(&fixtures().join("known-gaps.txt"));
    libtest_mimic::run(&args, trials(&dirs, &known, check)).exit();
}

//! The real-library suite: every workload in `fixtures/libraries/<name>/` drives one library (from
//! Debian's packages) or one JDK module the way its users do; it is compiled, run under HotSpot and
//! under the Bloatlens VM, on JDK 17 and on JDK 25, and must print the same stdout and exit with the
//! same status. Libraries may log to stderr (with times), so stderr is not compared.
//!
//! A workload's class path is its `resources/` directory (if any), the jars its `packages.txt`
//! names (found with `dpkg -L`) and those its `maven.txt` resolves to (Maven, from ~/.m2), by
//! `scripts/resolve-library-classpath.sh` (`.ci/run` installs both with
//! `scripts/install-library-suite.sh`). `known-gaps.txt` lists the trials (`NAME`, `jdk25/NAME`)
//! that do not pass yet, each with its reason; they run as ignored tests.
//!
//! `heavy.txt` lists the workloads that take the longest (each with its figures): a plain `cargo
//! test` (CI) leaves them out, as ignored tests, and runs JDK 25 on a fixed sample of the rest, to
//! keep its time down; `BLOATLENS_SUITE=full` runs everything on both JDKs (so does
//! `--include-ignored`), and `bloatlens-bench --libraries` times them all.

mod hotspot;

use hotspot::{compare, full_suite, known_gaps, lines, programs, trials, Jdk, Program};
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
    assert!(dirs.len() >= 80, "the suite has {} workloads", dirs.len());
    let mut ignored = known_gaps(&fixtures().join("known-gaps.txt"));
    if !full_suite() {
        let heavy = known_gaps(&fixtures().join("heavy.txt"));
        eprintln!(
            "\n*** {} heavy workloads ignored on both JDKs (BLOATLENS_SUITE=full runs them): {} ***\n",
            heavy.len(),
            heavy.join(", ")
        );
        for name in heavy {
            ignored.push(format!("jdk25/{name}"));
            ignored.push(name);
        }
    }
    libtest_mimic::run(&args, trials(&dirs, &ignored, check)).exit();
}

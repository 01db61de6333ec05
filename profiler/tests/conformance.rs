//! VM conformance: every program in `fixtures/conformance/<name>/` is compiled with the machine's
//! `javac`, run under HotSpot (`java`) and under the Bloatlens VM, and must print the same stdout,
//! the same first line of stderr, and exit with the same status. The expected output is produced
//! by `java` in the test itself, so it can never go stale.
//!
//! The suite runs twice: on the default JDK (17), and on JDK 25 (`BLOATLENS_JDK25`, else the Temurin 25
//! these machines carry) compiled with that JDK's own `javac`; the JDK 25 run is skipped, loudly, only
//! when that JDK is absent. `jdk25-known-gaps.txt` lists trials (`jdk25/NAME`) that do not pass yet.
//! A plain `cargo test` (CI) runs JDK 25 on a fixed third of the programs, to keep its time down;
//! `BLOATLENS_SUITE=full` runs them all.
//!
//! On the default JDK each program also runs under `profile` with every analysis on, and must print
//! the same stdout and stderr and exit with the same status as its plain run.
//!
//! A program may carry `args.txt` (one argument per line), `classpath.txt` (jars it compiles
//! and runs against, one per line: the libraries `.ci/run` installs from Debian's packages) and
//! `gc-interval.txt` (collect after this many bytes of allocation: a stress of the collector's roots),
//! `assertions.txt` (`-ea`/`-da` options, one per line), `properties.txt` (`key=value` system
//! properties), `agent.txt` (a Java agent jar made of its classes) and `shared.txt` (sources of `fixtures/conformance/shared/` it compiles with: the class-file
//! writer the programs that define classes at run time share).

mod hotspot;

use hotspot::{compare, known_gaps, lines, programs, trials, Jdk, Program};
use libtest_mimic::{Arguments, Failed};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/conformance")
}

fn check(jdk: &Jdk, dir: &Path) -> Result<(), Failed> {
    let jars = lines(dir, "classpath.txt");
    if let Some(missing) = jars.iter().find(|j| !Path::new(j).exists()) {
        return Err(
            format!("library {missing} is missing: .ci/run installs it (see scripts/install-libraries.sh)").into()
        );
    }
    let program = Program {
        dir: dir.into(),
        class_path: jars,
        args: lines(dir, "args.txt"),
        compare_stderr: true,
        max_seconds: 300,
        // On the default JDK every program is profiled too, and must print the same.
        profiled: jdk.home.is_none(),
        gc_interval_bytes: lines(dir, "gc-interval.txt").first().and_then(|l| l.trim().parse().ok()),
    };
    compare(jdk, &program)
}

fn main() {
    let args = Arguments::from_args();
    let dirs = programs(&fixtures());
    let known = known_gaps(&fixtures().join("jdk25-known-gaps.txt"));
    libtest_mimic::run(&args, trials(&dirs, &known, check)).exit();
}

//! The collector under threads. The conformance programs that run several threads (pools,
//! executors, parallel streams, `CompletableFuture`, concurrent collections, blocking queues),
//! listed in `fixtures/conformance/thread-stress.txt`, run under `run` and under `profile` (every
//! analysis, and each alone) with checked handles (a freed handle is never reused, so a reference
//! the collector missed fails where it is used), collections every few kilobytes of allocation and
//! threads switching at varied points; each run must print what HotSpot prints, on JDK 17 and 25.
//!
//! Every mode in every round is a lot of runs: CI runs a sample (plain and every analysis, and
//! one analysis alone that rotates with the program; one round; on JDK 25 every other program, as
//! `BLOATLENS_SUITE=full` runs them all). `BLOATLENS_STRESS_ROUNDS=N` runs every mode N times on
//! every program, each round with another collection interval and time slice.

mod hotspot;

use bloatlens_profiler::profile::{profile, Analyses, ProfileConfig};
use bloatlens_profiler::report::Settings;
use bloatlens_profiler::run::run;
use hotspot::{compile_and_run_hotspot, full_suite, lines, stdout_difference, Jdk, Program};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

/// How a round collects and switches threads: (bytes between collections, instructions a slice).
const ROUNDS: [(u64, u64); 4] = [(48 << 10, 200_000), (16 << 10, 7_919), (160 << 10, 997), (96 << 10, 50_021)];

/// One way to run a program: plain, or profiled with these analyses.
#[derive(Clone, Copy)]
enum Mode {
    Run,
    Profile(&'static str),
}

const MODES: [Mode; 7] = [
    Mode::Run,
    Mode::Profile("copy,refprop,costben,lifetime,bottleneck"),
    Mode::Profile("copy"),
    Mode::Profile("refprop"),
    Mode::Profile("costben"),
    Mode::Profile("lifetime"),
    Mode::Profile("bottleneck"),
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/conformance")
}

/// The (mode, round) pairs a program runs in: all of them with `BLOATLENS_STRESS_ROUNDS`, else
/// the sample (plain, every analysis, and the `k`-th single analysis, each in its own round).
fn plan(k: usize) -> Vec<(Mode, usize)> {
    match std::env::var("BLOATLENS_STRESS_ROUNDS").ok().and_then(|n| n.parse::<usize>().ok()) {
        Some(rounds) => (0..rounds).flat_map(|r| MODES.iter().map(move |&m| (m, r))).collect(),
        None => vec![(MODES[0], k), (MODES[1], k + 1), (MODES[2 + k % 5], k + 2)],
    }
}

fn stress(jdk: &Jdk, dir: &Path, k: usize) -> Result<(), Failed> {
    let program = Program {
        dir: dir.into(),
        class_path: Vec::new(),
        args: lines(dir, "args.txt"),
        compare_stderr: false,
        max_seconds: 600,
        profiled: false,
        gc_interval_bytes: None,
    };
    let compiled = compile_and_run_hotspot(jdk, &program)?;
    for (mode, round) in plan(k) {
        let (interval, slice) = ROUNDS[round % ROUNDS.len()];
        let mut config = compiled.config.clone();
        config.check_handles = true;
        config.gc_interval_bytes = Some(interval);
        config.time_slice = Some(slice);
        let (result, what) = match mode {
            Mode::Run => (run(&config).map_err(|e| format!("the VM failed to start: {e}"))?, "run".to_string()),
            Mode::Profile(list) => {
                let analyses = Analyses::parse(list).map_err(|e| e.to_string())?;
                let settings = Settings { young_gen_bytes: interval, ..Settings::default() };
                let config = ProfileConfig { run: config, analyses, settings, threads: Default::default() };
                let (result, _) = profile(&config).map_err(|e| format!("the profiled VM failed to start: {e}"))?;
                (result, format!("profile --analyses {list}"))
            }
        };
        let round = format!("{what}, a collection every {} KB, a slice of {slice} instructions", interval >> 10);
        let stdout = String::from_utf8_lossy(&result.stdout);
        if let Some(diff) = stdout_difference(compiled.expected_stdout(), &stdout) {
            return Err(format!("{round}: {diff}\n({:?})", result.outcome).into());
        }
        if result.status() != compiled.expected_status() {
            return Err(format!(
                "{round}: exit status {} ({:?}), java's {}",
                result.status(),
                result.outcome,
                compiled.expected_status()
            )
            .into());
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let names: Vec<String> = lines(&fixtures(), "thread-stress.txt")
        .into_iter()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    assert!(!names.is_empty(), "fixtures/conformance/thread-stress.txt lists no programs");
    let mut jdks = vec![(String::new(), Jdk::default_jdk())];
    match Jdk::jdk25() {
        Ok(jdk25) => jdks.push(("jdk25/".to_string(), jdk25)),
        Err(home) => eprintln!("\n*** JDK 25 not found at {}: its stress runs are SKIPPED ***\n", home.display()),
    }
    // Outside the complete run, JDK 25 runs every other program (those at odd places, so that
    // with the rotation above it still meets every single analysis).
    let every_program = full_suite() || std::env::var_os("BLOATLENS_STRESS_ROUNDS").is_some();
    let mut trials = Vec::new();
    for (j, (prefix, jdk)) in jdks.into_iter().enumerate() {
        for (k, name) in names.iter().enumerate() {
            let dir = fixtures().join(name);
            assert!(
                dir.join("Main.java").is_file(),
                "thread-stress.txt names {name}, which is not a conformance program"
            );
            let jdk = jdk.clone();
            let sampled_out = j > 0 && !every_program && k % 2 == 0;
            trials.push(
                Trial::test(format!("{prefix}{name}"), move || stress(&jdk, &dir, k + j))
                    .with_ignored_flag(sampled_out),
            );
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

//! A profile booted ahead of its run (`prepared::Prepared`, what the language server keeps between
//! saves): it reports what a profile run from the start reports, runs the classes compiled while
//! it waited, takes the run's own arguments, cancel flag and sandbox log, and refuses a run that
//! would have booted otherwise.

use bloatlens_profiler::prepared::Prepared;
use bloatlens_profiler::profile::{profile, ProfileConfig};
use bloatlens_profiler::run::RunConfig;
use bloatlens_profiler::vm::sandbox::{SandboxConfig, WorkspaceWrites};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A program with findings of several kinds: a string copied into a list and out again, boxes
/// that are never stored, a map filled and read once.
const PROGRAM: &str = r#"
import java.util.*;

public class Main {
    static String label(int i) { return "item-" + i; }

    public static void main(String[] args) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 2000; i++) names.add(new String(label(i)));
        Map<String, Integer> lengths = new HashMap<>();
        for (String n : names) lengths.put(n, n.length());
        long total = 0;
        for (int i = 0; i < 2000; i++) {
            Integer boxed = i * 3;
            total += boxed;
        }
        System.out.println(args.length > 0 ? args[0] : "no arguments");
        System.out.println(total + " " + lengths.get("item-7"));
    }
}
"#;

/// `source` as `Main.java` in `dir`, compiled there.
fn compile(dir: &Path, source: &str) {
    let file = dir.join("Main.java");
    std::fs::write(&file, source).unwrap();
    let ok = Command::new("javac").arg("-g").arg("-d").arg(dir).arg(&file).status().unwrap();
    assert!(ok.success(), "javac failed");
}

fn config(dir: &Path) -> ProfileConfig {
    let mut run = RunConfig::new(dir.display().to_string(), "Main");
    run.capture = true;
    run.source_roots = vec![dir.to_path_buf()];
    ProfileConfig { run, analyses: Default::default(), settings: Default::default(), threads: Default::default() }
}

/// Boots `config` ahead and waits until the VM waits for its run.
fn booted(config: &ProfileConfig) -> Prepared {
    let prepared = Prepared::boot(config.clone()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !prepared.is_booted() {
        assert!(Instant::now() < deadline, "the prepared VM did not boot");
        std::thread::sleep(Duration::from_millis(10));
    }
    prepared
}

#[test]
fn a_prepared_profile_reports_what_one_run_from_the_start_does() {
    let dir = tempfile::tempdir().unwrap();
    compile(dir.path(), PROGRAM);
    let config = config(dir.path());
    let (cold_run, cold) = profile(&config).unwrap();
    let prepared = booted(&config);
    assert!(prepared.fits(&config));
    let (warm_run, warm) = prepared.run(&config).expect("it fits").unwrap();
    assert_eq!(String::from_utf8_lossy(&warm_run.stdout), "no arguments\n5997000 6\n");
    assert_eq!(warm_run.stdout, cold_run.stdout);
    assert!(!cold.findings.is_empty());
    assert_eq!(serde_json::to_value(&warm.findings).unwrap(), serde_json::to_value(&cold.findings).unwrap());
    assert_eq!(warm.run.boot_instructions, cold.run.boot_instructions);
    assert_eq!(warm.run.instructions, cold.run.instructions);
}

#[test]
fn it_runs_the_classes_compiled_while_it_waited_with_the_runs_arguments() {
    let dir = tempfile::tempdir().unwrap();
    compile(dir.path(), PROGRAM);
    let first = config(dir.path());
    let prepared = booted(&first);
    compile(dir.path(), &PROGRAM.replace("total + \" \"", "\"changed \" + total + \" \""));
    let mut second = first.clone();
    second.run.args = vec!["given".into()];
    assert!(prepared.fits(&second), "the arguments are the run's own");
    let (run, report) = prepared.run(&second).expect("it fits").unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "given\nchanged 5997000 6\n");
    assert_eq!(report.run.args, vec!["given".to_string()]);
}

#[test]
fn a_run_that_would_boot_otherwise_does_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    compile(dir.path(), PROGRAM);
    let booted_for = config(dir.path());
    let prepared = Prepared::boot(booted_for.clone()).unwrap();
    let mut property = booted_for.clone();
    property.run.properties.push(("app.mode".into(), "fast".into()));
    assert!(!prepared.fits(&property), "a system property is read while booting");
    let mut settings = booted_for.clone();
    settings.settings.min_copies += 1;
    assert!(!prepared.fits(&settings), "the analyses are made with their settings");
    let mut analyses = booted_for.clone();
    analyses.analyses.copy = false;
    assert!(!prepared.fits(&analyses));
    let mut cancel = booted_for.clone();
    cancel.run.limits.cancel = Some(Arc::new(AtomicBool::new(false)));
    assert!(prepared.fits(&cancel), "the cancel flag is the run's own");
    assert!(prepared.run(&property).is_none(), "a run that does not fit is not run");
}

#[test]
fn a_jar_changed_while_it_waits_does_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    compile(dir.path(), PROGRAM);
    let jar = dir.path().join("lib.jar");
    std::fs::write(&jar, b"not yet a jar").unwrap();
    let mut config = config(dir.path());
    config.run.class_path = format!("{}:{}", dir.path().display(), jar.display());
    let prepared = Prepared::boot(config.clone()).unwrap();
    assert!(prepared.fits(&config));
    std::fs::write(&jar, b"a jar rebuilt meanwhile, longer").unwrap();
    assert!(!prepared.fits(&config));
}

#[test]
fn the_run_takes_its_own_cancel_flag_and_sandbox_log() {
    let dir = tempfile::tempdir().unwrap();
    let writer = PROGRAM.replace(
        "System.out.println(args.length",
        "try { java.nio.file.Files.writeString(java.nio.file.Path.of(\"out.txt\"), \"x\"); } catch (Exception e) { throw new RuntimeException(e); }\n        System.out.println(args.length",
    );
    compile(dir.path(), &writer);
    let mut booted_for = config(dir.path());
    booted_for.run.cwd = Some(dir.path().to_path_buf());
    booted_for.run.sandbox = Some(SandboxConfig::new(dir.path(), WorkspaceWrites::Overlay, "hint"));
    let prepared = booted(&booted_for);
    let mut run = booted_for.clone();
    let log = Default::default();
    run.run.sandbox.as_mut().unwrap().log = log;
    let (result, _) = prepared.run(&run).expect("it fits").unwrap();
    assert_eq!(String::from_utf8_lossy(&result.stdout), "no arguments\n5997000 6\n");
    let written = run.run.sandbox.as_ref().unwrap().log.written();
    assert!(written.iter().any(|p| p.ends_with("out.txt")), "the run's log holds its write: {written:?}");
    assert!(booted_for.run.sandbox.as_ref().unwrap().log.written().is_empty(), "the boot's log does not");
    assert!(!dir.path().join("out.txt").exists(), "the write went to the overlay");

    // The config it boots with may carry a finished run's cancel flag, which a newer save sets.
    let finished = Arc::new(AtomicBool::new(false));
    let mut previous = booted_for.clone();
    previous.run.limits.cancel = Some(finished.clone());
    let prepared = Prepared::boot(previous).unwrap();
    finished.store(true, std::sync::atomic::Ordering::Relaxed);
    let (result, _) = prepared.run(&booted_for).expect("its boot was not cancelled").unwrap();
    assert_eq!(String::from_utf8_lossy(&result.stdout), "no arguments\n5997000 6\n");

    let prepared = booted(&booted_for);
    let mut cancelled = booted_for.clone();
    cancelled.run.limits.cancel = Some(Arc::new(AtomicBool::new(true)));
    let (_, report) = prepared.run(&cancelled).expect("it fits").unwrap();
    assert_eq!(report.run.outcome, "cancelled");
}

#[test]
fn the_time_it_waited_is_not_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    compile(dir.path(), PROGRAM);
    let config = config(dir.path());
    let prepared = booted(&config);
    let waited = Duration::from_secs(3);
    std::thread::sleep(waited);
    let (_, report) = prepared.run(&config).expect("it fits").unwrap();
    assert!(Duration::from_millis(report.run.wall_ms) < waited, "wall {} ms counts the wait", report.run.wall_ms);
}

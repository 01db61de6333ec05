//! The `bloatlens` command line.
//!
//! `bloatlens run -cp <classpath> <MainClass> [args...]` runs a program under the Bloatlens VM and
//! exits as `java` would.
//!
//! `bloatlens profile [-cp <classpath>] <MainClass | Main.java | source-dir> [args...]` runs it
//! under the analyses and prints the report (text, JSON or DOT). Sources are compiled first with
//! the user's `javac -g`.
//!
//! Both exit with the program's own status when it ran (as `time` and `perf stat` do: its
//! `System.exit` status, 1 for an uncaught exception); see [`EXIT_STATUSES`] for the rest.

#[path = "cli/fix.rs"]
mod fix;

use anyhow::{bail, Context};
use bloatlens_profiler::gate::Condition;
use bloatlens_profiler::graphs::{self, Graphs, Which};
use bloatlens_profiler::javac;
use bloatlens_profiler::junit::{Selection, TestLaunch, TestTimeouts, Timeouts};
use bloatlens_profiler::profile::{compare, profile, profile_with_graphs, Analyses, AnalysisThreads, ProfileConfig};
use bloatlens_profiler::project::suite::{self, Scope};
use bloatlens_profiler::project::surefire::{Surefire, TestEnvironment};
use bloatlens_profiler::project::{self, build_cache, Build, Module, Project};
use bloatlens_profiler::report::human_duration;
use bloatlens_profiler::report::{Report, Settings};
use bloatlens_profiler::run::{run, RunConfig, RunResult, STATUS_INTERRUPTED, STATUS_NOT_RUN};

/// `--fail-on` found what it was told to fail on.
const STATUS_GATE: i32 = 1;
use bloatlens_profiler::text::{render, Sources};
use bloatlens_profiler::vm::assertions::AssertionStatus;
use bloatlens_profiler::vm::sandbox::{SandboxConfig, WorkspaceWrites};
use bloatlens_profiler::vm::{Limits, Observe, Outcome, VmError};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A line on stderr. A closed stderr loses it: `eprintln!` would panic (exit 101) on a closed
/// pipe, where the exit status must still say what happened.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Text on stderr as it is (javac's messages), lost when stderr is closed.
fn say_raw(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// The exit statuses, as `--help` prints them.
const EXIT_STATUSES: &str =
    "Exit status: the program's own when it ran (its System.exit status, 1 for an uncaught exception);
2 when Bloatlens could not run it or do its job (no JDK, no main class, compile errors, an unsupported
native, a process or socket the program asked for, a budget that ended the JDK's start-up before main, a
report it could not write); 3 when an
instruction or time budget stopped the program; 130 when interrupted (Ctrl-C, SIGTERM or SIGHUP: the
report is still printed).";

#[derive(Parser)]
#[command(name = "bloatlens", version, about = "Find runtime bloat in Java programs", after_help = EXIT_STATUSES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a Java program under the Bloatlens VM, as `java -cp <classpath> <MainClass>` would.
    Run(Box<RunArgs>),
    /// Profile a Java program for bloat and print the findings.
    Profile(Box<ProfileArgs>),
    /// Print the quick fix of a finding as a unified diff (`--apply` writes it, `--check` checks
    /// it and measures what it saves); without `--finding`, list the fixes offered.
    Fix(Box<fix::FixArgs>),
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
    /// Graphviz DOT of a finding's part of its graph (`--finding`), or a whole graph (`--graph`).
    Dot,
    /// SARIF 2.1.0, for code scanning in CI (with `--compare`: each result's baselineState).
    Sarif,
}

#[derive(Args)]
struct ProfileArgs {
    /// Class path of an already compiled program (with a main class as the target), or of the
    /// libraries the sources need; `-cp` and `-classpath` work too.
    #[arg(long = "class-path", default_value = "")]
    class_path: String,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write the report to this file instead of stdout.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Write the program's own stdout and stderr to this file instead of the terminal.
    #[arg(long)]
    program_output: Option<PathBuf>,
    /// Analyses to run, comma-separated: copy, refprop, costben, lifetime, bottleneck (or all).
    #[arg(long, default_value = "all")]
    analyses: String,
    /// Observe everything the VM runs, the JDK's start-up and a test launcher's own work included,
    /// not only the user's code and what it calls (the findings are the same; the profile slower).
    #[arg(long)]
    observe_everything: bool,
    /// Run every analysis on the VM's thread (by default, on a machine with more than one core, copy
    /// profiling, cost-benefit analysis and lifetimes run on a thread of their own, fed the recorded
    /// events, and cost-benefit on one more with more than two cores; the findings are the same).
    #[arg(long)]
    inline_analyses: bool,
    /// The main class when the target is a source directory with several mains.
    #[arg(long)]
    main: Option<String>,
    /// Findings shown in the text format.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// With `--format dot`: the finding whose graph to draw, by its number in the text report
    /// (default: the first one that has a graph).
    #[arg(long)]
    finding: Option<usize>,
    /// With `--format dot`: draw this whole graph instead, summarised to its heaviest edges:
    /// copy, reference or calls.
    #[arg(long)]
    graph: Option<String>,
    /// Context slots of 1-object sensitivity (0: context-insensitive).
    #[arg(long, default_value_t = Settings::default().context_slots)]
    context_slots: u32,
    /// Longest copy chain reported, in hops.
    #[arg(long, default_value_t = Settings::default().max_chain_hops)]
    max_chain_hops: usize,
    /// A copy chain needs at least this many copies.
    #[arg(long, default_value_t = Settings::default().min_copies)]
    min_copies: u64,
    /// An allocation site needs at least this many instances.
    #[arg(long, default_value_t = Settings::default().min_instances)]
    min_instances: u64,
    /// Mostly-NATH threshold (fraction of a site's objects that never reach the heap).
    #[arg(long, default_value_t = Settings::default().mostly_nath)]
    mostly_nath: f64,
    /// Rarely-used threshold (fraction of a site's objects that are used).
    #[arg(long, default_value_t = Settings::default().rarely_used)]
    rarely_used: f64,
    /// Write-read imbalance threshold (heap writes over reads).
    #[arg(long, default_value_t = Settings::default().imbalance_ratio)]
    imbalance_ratio: f64,
    /// At most this many findings of each kind.
    #[arg(long, default_value_t = Settings::default().max_findings_per_kind)]
    max_findings: usize,
    /// Young generation of the lifetime analysis, in bytes: it collects after this much allocation.
    #[arg(long, default_value_t = Settings::default().young_gen_bytes)]
    young_gen_bytes: u64,
    /// The young generation lifetimes are judged against, in bytes: HotSpot's (tens of MB), where
    /// objects that die before this much allocation die young.
    #[arg(long, default_value_t = Settings::default().hotspot_young_bytes)]
    hotspot_young_bytes: u64,
    /// What bottlenecks measure: instructions, bytes (allocated) or copies (heap to heap).
    #[arg(long, default_value_t = Settings::default().bottleneck_metric)]
    bottleneck_metric: String,
    /// A bottleneck carries at least this share of the run that no other one covers.
    #[arg(long, default_value_t = Settings::default().bottleneck_min_share)]
    bottleneck_min_share: f64,
    /// Zooming's cutoff ratio: an extension with this share of a call sequence's cost is zoomed through.
    #[arg(long, default_value_t = Settings::default().zoom_cutoff)]
    zoom_cutoff: f64,
    /// Context slots of cost-benefit's receiver chains.
    #[arg(long, default_value_t = Settings::default().cost_slots)]
    cost_slots: u32,
    /// Height of the object reference trees that n-RAC and n-RAB sum over.
    #[arg(long, default_value_t = Settings::default().tree_height)]
    tree_height: usize,
    /// A low-utility structure costs at least this many instructions (n-RAC).
    #[arg(long, default_value_t = Settings::default().low_utility_min_cost)]
    low_utility_min_cost: u64,
    /// A low-utility structure's cost is at least this many times its benefit: n-RAC / (n-RAB + 1).
    #[arg(long, default_value_t = Settings::default().low_utility_rate)]
    low_utility_rate: f64,
    /// Findings whose fix would save less than this share of the run are hidden (summarised)
    #[arg(long, default_value_t = Settings::default().min_share)]
    min_share: f64,
    /// Compare with an earlier JSON report of the same program: which call sequences got more
    /// or less expensive.
    #[arg(long)]
    compare: Option<PathBuf>,
    /// Exit 1 (when the program itself succeeded) if the report has findings of these kinds or
    /// severities, comma-separated: `warning`, `info`, a kind (`copy-chain`, `nath`, `clone`…),
    /// and with `--compare`: `new` (findings the earlier report lacks), `costlier:10%` (a call
    /// path whose cost grew by more than that share).
    #[arg(long, value_name = "CONDITIONS")]
    fail_on: Option<String>,
    #[command(flatten)]
    budgets: Budgets,
    #[command(flatten)]
    program: ProgramEnv,
    /// The JDK whose class library to run and whose javac compiles (default: JAVA_HOME, else PATH).
    #[arg(long)]
    jdk: Option<PathBuf>,
    #[command(flatten)]
    project: ProjectArgs,
    /// A main class, a `.java` file (more may follow), a directory of sources, or a project
    /// directory (with a `pom.xml`: a Maven project, its modules' sources and dependencies).
    #[arg(required_unless_present_any = ["test", "tests"])]
    target: Option<PathBuf>,
    /// Arguments passed to main (as bytes, decoded as Java decodes its arguments).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

/// Where a project's sources are and how its tests run: `profile` and `run` alike.
#[derive(Args)]
struct ProjectArgs {
    /// Where the user's sources are: findings are about classes whose source is under these roots (and
    /// the compiled sources' root); sources are quoted from here too. With a main class and no root,
    /// every class path directory is the user's code; jars and the JDK are always libraries. In a
    /// plain tree (no `pom.xml`) run as a project (`--test`), the main sources' roots (default:
    /// `src/main/java` when there is one, else the tree).
    #[arg(long)]
    source_root: Vec<PathBuf>,
    /// In a plain tree, a root of test sources: compiled after the main ones, against them (default:
    /// `src/test/java` beside a `src/main/java`).
    #[arg(long)]
    test_source_root: Vec<PathBuf>,
    /// Run a JUnit test instead of a main: a test class (`com.acme.FooTest`) or method
    /// (`com.acme.FooTest#bar`) of the project (the target, default `.`). JUnit 5 runs directly,
    /// JUnit 4 through the vintage engine; the outcome is reported (a failed test: exit status 1).
    #[arg(long, value_name = "SELECTOR")]
    test: Option<String>,
    /// Run every test class of the project (the target, default `.`) under one VM, each test's
    /// outcome reported and each finding attributed to the tests that drove it: in a module's
    /// directory its tests, at the reactor's root every module's. The classes are those Maven's
    /// Surefire runs (its includes and excludes, `**/*Test.java` and the like by default).
    #[arg(long, conflicts_with = "test")]
    tests: bool,
    /// JUnit 5 timeouts (@Timeout and the junit.jupiter.execution.timeout.*.default parameters)
    /// under the VM, which is slower than java: `scale` multiplies them (by 50 under `profile`, by 16
    /// under `run`), `disable` turns them off, `keep` leaves them as written.
    #[arg(long, default_value = "scale", value_name = "POLICY", value_parser = test_timeouts)]
    test_timeouts: TestTimeouts,
    /// The Maven command for projects with a `pom.xml` (run offline, with your settings and repository).
    #[arg(long, default_value = "mvn")]
    mvn: String,
}

impl ProjectArgs {
    /// Whether the entry point is JUnit tests (`--test` or `--tests`) rather than a main.
    fn tests_run(&self) -> bool {
        self.test.is_some() || self.tests
    }
}

fn test_timeouts(s: &str) -> Result<TestTimeouts, String> {
    s.parse()
}

#[derive(Args)]
struct RunArgs {
    /// Class path: directories and jar files separated by ':' (`-cp` and `-classpath` work too).
    #[arg(long = "class-path", default_value = ".")]
    class_path: String,
    #[command(flatten)]
    budgets: Budgets,
    #[command(flatten)]
    program: ProgramEnv,
    /// The JDK whose class library to run (default: JAVA_HOME, else the `java` on PATH).
    #[arg(long)]
    jdk: Option<PathBuf>,
    #[command(flatten)]
    project: ProjectArgs,
    /// The main class, e.g. `com.example.Main`; with `--test`, the project's directory (default `.`).
    #[arg(required_unless_present_any = ["test", "tests"])]
    main_class: Option<String>,
    /// Arguments passed to main (as bytes, decoded as Java decodes its arguments).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

/// What the program runs in besides its arguments: system properties, working directory, environment.
#[derive(Args)]
struct ProgramEnv {
    /// A system property, as `java -Dkey=value` sets it (`-Dkey=value` works too); repeatable.
    #[arg(long = "property", value_name = "KEY=VALUE", value_parser = key_value)]
    properties: Vec<(String, String)>,
    /// The program's working directory: `user.dir`, and what its relative file paths resolve
    /// against (the class path and sources are still named relative to this shell's).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// An environment variable the program sees (`System.getenv`) over this process's; repeatable.
    #[arg(long = "env", value_name = "NAME=VALUE", value_parser = env_var)]
    env: Vec<(String, String)>,
    /// Debug mode for the VM's collector: freed objects' handles are never reused, so a reference
    /// the collector missed is an error where it is used, naming the object it was.
    #[arg(long)]
    check_handles: bool,
    /// Let the program change files only in the workspace (the project's directory with --test or a
    /// pom.xml, else its working directory) and in a temporary directory of its own (java.io.tmpdir);
    /// a change elsewhere fails in Java as a permission problem does. Processes and sockets are
    /// refused with or without it.
    #[arg(long)]
    sandbox: bool,
    /// With --sandbox, where the program's changes in the workspace go: `overlay` (a scratch copy the
    /// program sees for the rest of its run; the workspace itself does not change) or `allow` (the
    /// workspace).
    #[arg(long, value_name = "WHERE", default_value = "overlay", requires = "sandbox")]
    sandbox_writes: WorkspaceWrites,
    /// A Java agent, as `java -javaagent:JAR[=OPTIONS]` loads it (`-javaagent:…` works too): its
    /// jar joins the class path and its `premain` runs before the main class loads; repeatable.
    #[arg(long = "javaagent", value_name = "JAR[=OPTIONS]")]
    java_agents: Vec<String>,
    /// An assertion option as `java` takes it (`-ea`, `-ea:com.acme...`, `-da:com.acme.Foo`, `-esa`,
    /// `-dsa` and their long forms work too); repeatable, later ones win. A test run has assertions
    /// on as Surefire's `enableAssertions` has them, whatever this says.
    #[arg(long = "assertions", value_name = "OPTION", allow_hyphen_values = true, value_parser = assertion_option)]
    assertions: Vec<String>,
}

fn assertion_option(option: &str) -> Result<String, String> {
    AssertionStatus::default().add(option).map(|_| option.to_string()).map_err(|e| e.to_string())
}

impl ProgramEnv {
    /// The assertion options, `environment`'s (a test's argLine) first.
    fn assertions<'a>(&'a self, environment: impl IntoIterator<Item = &'a String>) -> AssertionStatus {
        AssertionStatus::of(environment.into_iter().chain(&self.assertions))
    }

    /// The sandbox `--sandbox` asks for (None without it), around the project's directory (`project`)
    /// or else the program's working directory; `writable`: a file outside it that Bloatlens itself
    /// has the program write (a test's outcomes).
    fn sandbox(&self, project: Option<&Path>, writable: Option<&Path>) -> anyhow::Result<Option<SandboxConfig>> {
        if !self.sandbox {
            return Ok(None);
        }
        let workspace = match (project, &self.cwd) {
            (Some(dir), _) => dir.to_path_buf(),
            (None, Some(dir)) => std::path::absolute(dir)?,
            (None, None) => std::env::current_dir().context("reading the working directory")?,
        };
        let mut config = SandboxConfig::new(workspace, self.sandbox_writes, "run it without --sandbox to allow them");
        config.writable.extend(writable.map(Path::to_path_buf));
        Ok(Some(config))
    }
}

/// After a sandboxed run: what its sandbox refused, and what its overlay kept from the workspace.
fn say_sandbox(config: Option<&SandboxConfig>) {
    let Some(config) = config else { return };
    let refused = config.log.refused();
    if !refused.is_empty() {
        let shown: Vec<&str> = refused.iter().take(3).map(String::as_str).collect();
        let more = if refused.len() > 3 { ", …" } else { "" };
        say!(
            "bloatlens: the sandbox refused {} change{} outside {}: {}{more}",
            refused.len(),
            if refused.len() == 1 { "" } else { "s" },
            config.workspace.display(),
            shown.join(", ")
        );
    }
    let written = config.log.written();
    if config.workspace_writes == WorkspaceWrites::Overlay && !written.is_empty() {
        say!(
            "bloatlens: the program's changes to {} path{} of the workspace went to the sandbox's overlay and were \
             dropped (--sandbox-writes allow keeps them)",
            written.len(),
            if written.len() == 1 { "" } else { "s" }
        );
    }
}

/// `key=value`; a bare `key` is the empty value, as `java -Dkey` takes it.
fn key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        _ if s.is_empty() || s.starts_with('=') => Err("expected KEY=VALUE".into()),
        Some((k, v)) => Ok((k.into(), v.into())),
        None => Ok((s.into(), String::new())),
    }
}

/// `NAME=VALUE`, the name non-empty.
fn env_var(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.into(), v.into())),
        _ => Err("expected NAME=VALUE".into()),
    }
}

#[derive(Args)]
struct Budgets {
    /// Stop after this many bytecode instructions [default: 50000000000; with --tests, none].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    max_instructions: Option<u64>,
    /// Stop after this many seconds of wall-clock time, at most a week [default: 600; with --tests,
    /// 14400: a whole suite].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=7 * 24 * 3600))]
    max_seconds: Option<u64>,
    /// Heap cap in MiB (at most 1 TiB); beyond it allocation throws OutOfMemoryError.
    #[arg(long, default_value_t = Limits::default().max_heap_bytes >> 20,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_heap_mb: u64,
    /// Java frames per thread; beyond it a call throws StackOverflowError. The default is about what
    /// HotSpot's default 1 MB thread stack holds of ordinary frames.
    #[arg(long, default_value_t = Limits::default().max_stack_depth as u64,
          value_parser = clap::value_parser!(u64).range(16..=10_000_000))]
    max_stack_depth: u64,
}

/// A whole test suite's wall-clock budget: Surefire sets none; four hours under the VM.
const SUITE_SECONDS: u64 = 4 * 3600;

impl Budgets {
    /// The limits, ended early when `interrupted` is set (Ctrl-C); a whole test suite (`suite`)
    /// runs without an instruction budget and with a longer time budget, unless they are given.
    fn limits(&self, interrupted: &Arc<AtomicBool>, suite: bool) -> Limits {
        let default = Limits::default();
        let (instructions, seconds) = match suite {
            true => (u64::MAX, SUITE_SECONDS),
            false => (default.max_instructions, default.max_wall.as_secs()),
        };
        Limits {
            max_instructions: self.max_instructions.unwrap_or(instructions),
            max_wall: Duration::from_secs(self.max_seconds.unwrap_or(seconds)),
            max_heap_bytes: self.max_heap_mb << 20,
            max_stack_depth: self.max_stack_depth as usize,
            cancel: Some(interrupted.clone()),
        }
    }
}

/// The build directory of the run under way, removed by a second interrupt before it quits.
static BUILD_DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Ctrl-C, SIGTERM and SIGHUP alike: the first ends the program as a budget does (the report is
/// still printed, the build directory removed, then exit 130); a second ends Bloatlens at once
/// (the build directory removed first). A signal the parent set to be ignored (`nohup`'s SIGHUP,
/// a background job's SIGINT) stays ignored.
fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let seen = flag.clone();
    let signals = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
    let ignored: Vec<libc::c_int> = signals.into_iter().filter(|&s| is_ignored(s)).collect();
    let _ = ctrlc::set_handler(move || {
        if seen.swap(true, Ordering::SeqCst) {
            if let Some(dir) = BUILD_DIR.lock().ok().and_then(|mut d| d.take()) {
                let _ = std::fs::remove_dir_all(dir);
            }
            std::process::exit(STATUS_INTERRUPTED);
        }
        say!("\nbloatlens: interrupted: stopping the program (Ctrl-C again to quit at once)");
    });
    for s in ignored {
        // SAFETY: restores the disposition the process started with; no handler runs Rust code.
        unsafe { libc::signal(s, libc::SIG_IGN) };
    }
    flag
}

/// Whether `signal` is ignored (as the parent left it).
fn is_ignored(signal: libc::c_int) -> bool {
    // SAFETY: a query (no new action); `old` is written by the call.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// The JDK to use: the one named, else `JAVA_HOME`'s, else `PATH`'s (with a warning when
/// `JAVA_HOME` names no JDK). Located before anything runs, so that compiling and running use it.
fn jdk(named: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    let jdk = bloatlens_profiler::run::locate_jdk(named)?;
    if let Some(w) = &jdk.warning {
        say!("bloatlens: warning: {w}");
    }
    Ok(jdk.home)
}

/// Says on stderr why a run did not end by itself, with a hint where a flag would help.
fn explain(result: &RunResult, limits: &Limits) {
    match &result.outcome {
        Outcome::Stopped(VmError::Cancelled) => {
            say!("bloatlens: interrupted after {}", human_duration(result.stats.wall))
        }
        Outcome::Stopped(e) => say!("bloatlens: error: {e}"),
        Outcome::UncaughtException(e) if e.contains("java.lang.StackOverflowError") => say!(
            "bloatlens: hint: the stack overflowed at {} frames; a program that needs more runs with \
             --max-stack-depth N",
            limits.max_stack_depth
        ),
        _ => {}
    }
}

/// `-cp`, `-classpath` and `-Dkey=value` are what java users type (clap's short flags are single
/// letters): they become `--class-path` and `--property key=value` among Bloatlens's own flags,
/// that is, before the program (the main class or source file); everything after it is the
/// program's, untouched, as `java` does. Arguments are bytes (`OsString`): paths and the
/// program's arguments need not be UTF-8.
fn java_style_flags(argv: Vec<OsString>) -> Vec<OsString> {
    use clap::CommandFactory;
    let cli = Cli::command();
    let mut out = Vec::with_capacity(argv.len());
    let mut rest = argv.into_iter();
    out.extend(rest.next()); // the program name
    let Some(sub) = rest.next() else { return out };
    let Some(command) = sub.to_str().and_then(|name| cli.find_subcommand(name)).cloned() else {
        out.push(sub);
        out.extend(rest);
        return out;
    };
    out.push(sub);
    // Whether `flag` (as typed, without `=value`) is one of the command's flags that takes a value.
    let takes_value = |flag: &str| {
        command.get_arguments().any(|a| {
            let named = flag.strip_prefix("--").map_or_else(
                || flag.strip_prefix('-').and_then(|s| s.chars().next()).is_some_and(|c| a.get_short() == Some(c)),
                |long| a.get_long() == Some(long),
            );
            named && a.get_action().takes_values()
        })
    };
    while let Some(arg) = rest.next() {
        let bytes = arg.as_bytes();
        match bytes {
            b"-cp" | b"-classpath" => {
                out.push("--class-path".into());
                out.extend(rest.next());
            }
            b"--" => {
                out.push(arg);
                break;
            }
            [b'-', b'D', define @ ..] if !define.is_empty() => {
                out.push("--property".into());
                out.push(OsStr::from_bytes(define).to_os_string());
            }
            _ if arg.to_str().is_some_and(AssertionStatus::is_option) => {
                out.push("--assertions".into());
                out.push(arg);
            }
            [b'-', b'j', b'a', b'v', b'a', b'a', b'g', b'e', b'n', b't', b':', agent @ ..] => {
                out.push("--javaagent".into());
                out.push(OsStr::from_bytes(agent).to_os_string());
            }
            [b'-', _, ..] => {
                let value = !bytes.contains(&b'=') && arg.to_str().is_some_and(takes_value);
                out.push(arg);
                if value {
                    out.extend(rest.next());
                }
            }
            // The program: the rest is its own.
            _ => {
                out.push(arg);
                break;
            }
        }
    }
    out.extend(rest);
    out
}

/// An argument that must be text is not valid UTF-8: which one (after which flag), shown lossily.
fn not_utf8(argv: &[OsString]) -> String {
    let at = argv.iter().position(|a| a.to_str().is_none()).unwrap_or(0);
    let shown = String::from_utf8_lossy(argv.get(at).map_or(&[][..], |a| a.as_bytes())).into_owned();
    match argv[..at].last().and_then(|f| f.to_str()).filter(|f| f.starts_with('-')) {
        Some(flag) => format!("the value of {flag} is not valid UTF-8 (`{shown}`); it is read as text"),
        None => {
            format!("the argument `{shown}` is not valid UTF-8; only paths and the program's arguments may be bytes")
        }
    }
}

/// A program argument as Java has it: the launcher decodes its bytes with `sun.jnu.encoding`,
/// UTF-8 in the Bloatlens VM, invalid bytes becoming U+FFFD.
fn java_argument(arg: OsString) -> String {
    match arg.into_string() {
        Ok(text) => text,
        Err(bytes) => String::from_utf8_lossy(&bytes.into_vec()).into_owned(),
    }
}

fn main() -> ExitCode {
    let argv = java_style_flags(std::env::args_os().collect());
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::InvalidUtf8 => {
            say!("bloatlens: error: {}", not_utf8(&argv));
            return ExitCode::from(STATUS_NOT_RUN as u8);
        }
        Err(e) => {
            // Help and version go to stdout, errors to stderr; either may be closed.
            let _ = e.print();
            return ExitCode::from(e.exit_code().clamp(0, 255) as u8);
        }
    };
    let interrupted = interrupt_flag();
    let status = match cli.command {
        Command::Profile(a) => profile_command(*a, &interrupted),
        Command::Run(a) => run_command(*a, &interrupted),
        Command::Fix(a) => fix::fix_command(*a),
    };
    match status {
        Ok(status) => ExitCode::from(status as u8),
        // Interrupted before the program started (while compiling or booting the JDK).
        Err(e) if interrupted.load(Ordering::SeqCst) => {
            say!("bloatlens: interrupted: {e:#}");
            ExitCode::from(STATUS_INTERRUPTED as u8)
        }
        Err(e) => {
            say!("bloatlens: error: {e:#}");
            ExitCode::from(STATUS_NOT_RUN as u8)
        }
    }
}

fn run_command(a: RunArgs, interrupted: &Arc<AtomicBool>) -> anyhow::Result<i32> {
    let jdk_home = jdk(a.jdk.as_ref())?;
    let mut config = RunConfig {
        class_path: a.class_path.clone(),
        main_class: a.main_class.clone().unwrap_or_default(),
        args: a.args.into_iter().map(java_argument).collect(),
        source_roots: Vec::new(),
        stdin: Default::default(),
        jdk: Some(jdk_home.clone()),
        limits: a.budgets.limits(interrupted, a.project.tests),
        capture: false,
        stdout_to_stderr: false,
        gc_interval_bytes: None,
        properties: a.program.properties.clone(),
        cwd: a.program.cwd.clone(),
        env: a.program.env.clone(),
        check_handles: a.program.check_handles,
        time_slice: None,
        sandbox: None,
        java_agents: a.program.java_agents.clone(),
        assertions: a.program.assertions([]),
        observe: Default::default(),
    };
    // A test: the project (the positional, default `.`) compiled, the test run through the JUnit
    // runner with nothing observed, its outcomes printed after the run.
    let mut launch = None;
    let _build;
    let mut project_dir = None;
    if a.project.tests_run() {
        let target = PathBuf::from(a.main_class.as_deref().unwrap_or("."));
        let given = if a.class_path == "." { "" } else { a.class_path.as_str() };
        let timeouts = Timeouts::plain(a.project.test_timeouts);
        let prepared = match prepare_project(&target, &a.project, given, None, &jdk_home, timeouts)? {
            Ok(p) => p,
            Err(status) => return Ok(status),
        };
        config.class_path = prepared.class_path;
        config.main_class = prepared.main_class;
        config.args = prepared.args;
        with_test_environment(&mut config, prepared.environment, &a.program);
        launch = prepared.launch;
        project_dir = Some(prepared.root);
        _build = prepared.build;
    }
    config.sandbox = a.program.sandbox(project_dir.as_deref(), launch.as_ref().map(TestLaunch::outcomes_path))?;
    let result = run(&config)?;
    say_sandbox(config.sandbox.as_ref());
    if let Outcome::Stopped(e @ (VmError::MainClassNotFound { .. } | VmError::NoMainMethod(_))) = &result.outcome {
        if launch.is_some() {
            say!("bloatlens: error: {e}");
            return Ok(STATUS_NOT_RUN);
        }
    }
    explain(&result, &config.limits);
    if let Some(launch) = &launch {
        let outcomes = match launch.outcomes(matches!(result.outcome, Outcome::Exited(_))) {
            Ok(o) => o,
            Err(e) => {
                say!("bloatlens: error: {e}");
                return Ok(STATUS_NOT_RUN);
            }
        };
        let mut text = String::new();
        for t in &outcomes.tests {
            text += &format!("test {}#{} {}\n", t.class, t.name, t.summary());
        }
        for note in &outcomes.notes {
            text += &format!("note: {note}\n");
        }
        let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
    }
    Ok(result.status())
}

/// Compiles the target if it is source, profiles it, writes the report; the program's status.
fn profile_command(a: ProfileArgs, interrupted: &Arc<AtomicBool>) -> anyhow::Result<i32> {
    let analyses = Analyses::parse(&a.analyses).map_err(anyhow::Error::msg)?;
    bloatlens_profiler::analysis::calltree::Metric::parse(&a.bottleneck_metric).map_err(anyhow::Error::msg)?;
    let gate = match &a.fail_on {
        Some(spec) => Condition::parse_list(spec).map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    if let Some(c) = gate.iter().find(|c| c.needs_previous()).filter(|_| a.compare.is_none()) {
        let _ = c;
        bail!("--fail-on new and costlier:… compare with an earlier report: give it with --compare previous.json");
    }
    // Read the earlier report first: a bad path should not cost a run.
    let previous: Option<bloatlens_profiler::report::Report> = match &a.compare {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            Some(
                serde_json::from_str(&text)
                    .with_context(|| format!("{} is not a Bloatlens JSON report", path.display()))?,
            )
        }
        None => None,
    };
    let settings = Settings {
        context_slots: a.context_slots,
        max_chain_hops: a.max_chain_hops,
        min_copies: a.min_copies,
        min_instances: a.min_instances,
        mostly_nath: a.mostly_nath,
        rarely_used: a.rarely_used,
        imbalance_ratio: a.imbalance_ratio,
        max_findings_per_kind: a.max_findings,
        young_gen_bytes: a.young_gen_bytes,
        hotspot_young_bytes: a.hotspot_young_bytes,
        bottleneck_metric: a.bottleneck_metric.clone(),
        bottleneck_min_share: a.bottleneck_min_share,
        zoom_cutoff: a.zoom_cutoff,
        cost_slots: a.cost_slots,
        tree_height: a.tree_height,
        low_utility_min_cost: a.low_utility_min_cost,
        low_utility_rate: a.low_utility_rate,
        min_share: a.min_share,
    };
    // Leading `.java` arguments are more sources; the rest go to main.
    let mut args = a.args.clone();
    let target = a.target.clone().unwrap_or_else(|| ".".into());
    let is_project = a.project.tests_run() || target.join("pom.xml").is_file();
    let is_source = target.as_os_str().as_bytes().ends_with(b".java") || target.is_dir();
    // Where the report and the program's output go: opened now, so that a path that cannot be
    // written costs no run.
    let mut output = a.output.as_deref().map(OutputFile::open).transpose()?;
    let mut program_output = a.program_output.as_deref().map(OutputFile::open).transpose()?;
    let jdk_home = jdk(a.jdk.as_ref())?;
    let build_dir = BuildDir::new()?;
    let mut build_dirs = Vec::new();
    let mut roots = a.project.source_root.clone();
    // The user's code: classes whose source is under the roots given, and the compiled sources'.
    let mut user_roots = a.project.source_root.clone();
    let mut test_launch = None;
    let properties = a.program.properties.clone();
    let mut project_dir = None;
    let mut test_environment = None;
    let (class_path, main_class) = if is_project {
        let prepared = prepare_project(
            &target,
            &a.project,
            &a.class_path,
            a.main.as_deref(),
            &jdk_home,
            Timeouts::profiled(a.project.test_timeouts),
        )?;
        let prepared = match prepared {
            Ok(p) => p,
            Err(status) => return Ok(status),
        };
        user_roots.extend(prepared.source_roots.iter().cloned());
        roots.extend(prepared.source_roots.iter().cloned());
        // Tests get the JUnit runner's arguments; a main keeps the user's.
        if prepared.launch.is_some() {
            args = prepared.args.into_iter().map(OsString::from).collect();
        }
        test_launch = prepared.launch;
        test_environment = Some(prepared.environment);
        project_dir = Some(prepared.root);
        build_dirs.push(prepared.build);
        (prepared.class_path, prepared.main_class)
    } else if is_source {
        let mut sources = vec![target.clone()];
        while args.first().is_some_and(|x| x.as_bytes().ends_with(b".java")) {
            sources.push(PathBuf::from(args.remove(0)));
        }
        let (files, main, root) = if target.is_dir() {
            let files = bloatlens_profiler::javac::java_files(&target)
                .with_context(|| format!("reading {}", target.display()))?;
            let main = match &a.main {
                Some(m) => m.clone(),
                None => only_main(&files)?,
            };
            (files, main, target.clone())
        } else {
            for s in &sources {
                if !s.is_file() {
                    bail!("{} does not exist", s.display());
                }
            }
            (sources.clone(), javac::class_name_of(&target)?, javac::source_root_of(&target))
        };
        let javac = javac::find_javac(Some(&jdk_home))?;
        let mut cp = a.class_path.clone();
        // A source tree's libraries: the jars in its `lib/`.
        if target.is_dir() {
            let libs = bloatlens_profiler::junit::join(&Project::plain(&target).libraries);
            if !libs.is_empty() {
                cp = if cp.is_empty() { libs } else { format!("{cp}:{libs}") };
            }
        }
        // javac finds the other sources a file needs under its source root.
        let job = javac::Job {
            sources: &files,
            source_path: std::slice::from_ref(&root),
            class_path: &cp,
            out: build_dir.path(),
            parameters: false,
        };
        match javac::compile(&javac, &job) {
            Ok(()) => {}
            Err(javac::CompileError::Failed { output, .. }) => {
                say_raw(&output);
                say!("bloatlens: error: the program does not compile");
                return Ok(STATUS_NOT_RUN);
            }
            Err(e) => return Err(e.into()),
        }
        user_roots.push(root.clone());
        roots.push(root);
        let out = build_dir.path().display().to_string();
        cp = if cp.is_empty() { out } else { format!("{out}:{cp}") };
        (cp, main)
    } else {
        roots.extend(a.class_path.split(':').filter(|p| Path::new(p).is_dir()).map(PathBuf::from));
        roots.push(PathBuf::from("."));
        let cp = if a.class_path.is_empty() { ".".to_string() } else { a.class_path.clone() };
        let Some(main) = target.to_str() else {
            bail!("the main class `{}` is not valid UTF-8", target.display());
        };
        (cp, main.to_string())
    };
    let mut config = ProfileConfig {
        run: RunConfig {
            class_path,
            main_class,
            args: args.into_iter().map(java_argument).collect(),
            source_roots: user_roots,
            stdin: Default::default(),
            jdk: Some(jdk_home),
            limits: a.budgets.limits(interrupted, a.project.tests),
            capture: a.program_output.is_some(),
            // A report on stdout keeps stdout to itself: the program's output goes to stderr.
            stdout_to_stderr: a.output.is_none() && !matches!(a.format, Format::Text),
            gc_interval_bytes: None,
            properties,
            cwd: a.program.cwd.clone(),
            env: a.program.env.clone(),
            check_handles: a.program.check_handles,
            time_slice: None,
            sandbox: a.program.sandbox(project_dir.as_deref(), test_launch.as_ref().map(TestLaunch::outcomes_path))?,
            java_agents: a.program.java_agents.clone(),
            assertions: a.program.assertions([]),
            observe: if a.observe_everything { Observe::Everything } else { Observe::UserCode },
        },
        analyses,
        settings,
        threads: if a.inline_analyses { AnalysisThreads::Inline } else { AnalysisThreads::default() },
    };
    if let Some(environment) = test_environment {
        with_test_environment(&mut config.run, environment, &a.program);
    }
    let which = match &a.graph {
        Some(g) => {
            Some(Which::parse(g).with_context(|| format!("unknown graph `{g}` (known: copy, reference, calls)"))?)
        }
        None => None,
    };
    let (result, mut report, graphs) = if matches!(a.format, Format::Dot) {
        profile_with_graphs(&config)?
    } else {
        let (r, report) = profile(&config)?;
        (r, report, Graphs::default())
    };
    if let Outcome::Stopped(
        e @ (VmError::MainClassNotFound { .. } | VmError::NoMainMethod(_) | VmError::StartupBudget(_)),
    ) = &result.outcome
    {
        // Nothing of the program ran: there is no report to print.
        say!("bloatlens: error: {e}");
        return Ok(STATUS_NOT_RUN);
    }
    if let Some(launch) = &test_launch {
        if let Err(e) = launch.finish(&mut report) {
            say!("bloatlens: error: {e}");
            return Ok(STATUS_NOT_RUN);
        }
    }
    if let Some(previous) = &previous {
        compare(&mut report, previous).map_err(|e| anyhow::anyhow!("cannot compare: {e}"))?;
    }
    if let Some(file) = &mut program_output {
        let mut bytes = result.stdout.clone();
        bytes.extend_from_slice(&result.stderr);
        file.write(&bytes)?;
    }
    let text = match a.format {
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
        Format::Sarif => {
            let base = std::env::current_dir().context("reading the working directory")?;
            let sources = bloatlens_profiler::sarif::Sources { roots: &roots, base: &base };
            serde_json::to_string_pretty(&bloatlens_profiler::sarif::to_sarif(&report, previous.as_ref(), &sources))?
                + "\n"
        }
        Format::Text => render(&report, &mut Sources::new(roots), a.top),
        Format::Dot => match dot(&report, &graphs, a.finding, which) {
            Ok(text) => text,
            Err(e) => {
                say!("bloatlens: error: {e}");
                return Ok(STATUS_NOT_RUN);
            }
        },
    };
    match &mut output {
        Some(file) => file.write(text.as_bytes())?,
        None => {
            // A report that cannot be written (stdout a closed pipe) is a job not done.
            let mut stdout = std::io::stdout().lock();
            if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
                say!("bloatlens: error: writing the report to stdout: {e}");
                explain(&result, &config.run.limits);
                return Ok(STATUS_NOT_RUN);
            }
        }
    }
    explain(&result, &config.run.limits);
    say_sandbox(config.run.sandbox.as_ref());
    let tripped = bloatlens_profiler::gate::check(&gate, &report, previous.as_ref());
    for line in &tripped {
        say!("bloatlens: --fail-on {line}");
    }
    // The program's own failure says more than the gate's; a gate trips a run that succeeded.
    Ok(match result.status() {
        0 if !tripped.is_empty() => STATUS_GATE,
        status => status,
    })
}

/// A file the report or the program's output goes to, opened (created if need be) before the
/// run so that a path that cannot be written is said at once. A file it created and never wrote
/// is removed again (a run that ended in an error leaves nothing behind); an existing one is
/// replaced only when the new text is written.
struct OutputFile {
    path: PathBuf,
    file: File,
    created: bool,
    written: bool,
}

impl OutputFile {
    fn open(path: &Path) -> anyhow::Result<OutputFile> {
        let created = std::fs::symlink_metadata(path).is_err();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(OutputFile { path: path.to_path_buf(), file, created, written: false })
    }

    fn write(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        self.written = true;
        // A regular file is emptied first; a device (`/dev/null`) or a pipe is written as it is.
        let regular = self.file.metadata().is_ok_and(|m| m.is_file());
        (if regular { self.file.set_len(0) } else { Ok(()) })
            .and_then(|()| self.file.write_all(bytes))
            .and_then(|()| self.file.flush())
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if self.created && !self.written {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The temporary directory sources compile into, removed when the command ends, and by a
/// second interrupt (see [`interrupt_flag`]) when it quits at once.
struct BuildDir(tempfile::TempDir);

impl BuildDir {
    fn new() -> anyhow::Result<BuildDir> {
        // Private (0700, an unpredictable name): what is compiled there is run.
        let dir =
            bloatlens_profiler::private_dir::owned_scratch("bloatlens-build-").context("creating a build directory")?;
        if let Ok(mut registered) = BUILD_DIR.lock() {
            *registered = Some(dir.path().to_path_buf());
        }
        Ok(BuildDir(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for BuildDir {
    fn drop(&mut self) {
        if let Ok(mut registered) = BUILD_DIR.lock() {
            *registered = None;
        }
    }
}

/// One javac run of a project's compile.
struct CompileStep<'a> {
    files: &'a [PathBuf],
    roots: &'a [PathBuf],
    class_path: Vec<PathBuf>,
    out: PathBuf,
}

/// Where a project's classes are: kept in its cache directory between runs under a key of all the
/// compile read ([`build_cache`]), else (no cache directory, a class directory on the class path)
/// a temporary directory compiled afresh.
enum ProjectBuild {
    Kept(build_cache::Build),
    Temporary(BuildDir),
}

impl ProjectBuild {
    fn open<'s>(
        dir: &Path,
        javac: &Path,
        parameters: bool,
        steps: &dyn Fn(&Path) -> Vec<CompileStep<'s>>,
    ) -> anyhow::Result<Self> {
        let kept = project::open_cache_dir(dir).ok().and_then(|cache| {
            // The steps' own outputs are keyed by where they lie in the build, not read.
            let base = Path::new("/bloatlens-build");
            let mut key = build_cache::Key::default();
            key.file(javac)?;
            // The class library it compiles against (a JDK updated in place keeps its javac's path).
            key.file(&javac.parent()?.parent()?.join("lib/modules"))?;
            key.text(if parameters { "parameters" } else { "" });
            for step in steps(base) {
                for f in step.files {
                    key.source(f).ok()?;
                }
                step.roots.iter().for_each(|r| key.path(r));
                for entry in &step.class_path {
                    match entry.starts_with(base) {
                        true => key.path(entry),
                        false => key.file(entry)?,
                    }
                }
                key.path(&step.out);
            }
            build_cache::Build::open(&cache.join("builds"), key).ok()
        });
        Ok(match kept {
            Some(b) => ProjectBuild::Kept(b),
            None => ProjectBuild::Temporary(BuildDir::new()?),
        })
    }

    /// Where to compile; None: the kept classes are the same, nothing to compile.
    fn compile_into(&self) -> Option<&Path> {
        match self {
            ProjectBuild::Kept(b) => b.compile_into(),
            ProjectBuild::Temporary(d) => Some(d.path()),
        }
    }

    /// The build once compiled: a new kept one moved into place.
    fn keep(self) -> anyhow::Result<Self> {
        Ok(match self {
            ProjectBuild::Kept(b) => {
                ProjectBuild::Kept(build_cache::Build::Kept(b.keep().context("keeping the compiled classes")?))
            }
            temporary => temporary,
        })
    }

    fn path(&self) -> &Path {
        match self {
            ProjectBuild::Kept(b) => b.path(),
            ProjectBuild::Temporary(d) => d.path(),
        }
    }
}

/// A project made ready to run: compiled, its class path, and the main class (or the JUnit runner).
struct Prepared {
    class_path: String,
    main_class: String,
    args: Vec<String>,
    /// The project's source roots (main before test).
    source_roots: Vec<PathBuf>,
    launch: Option<TestLaunch>,
    /// Where the classes were compiled (a temporary one is removed when dropped).
    build: ProjectBuild,
    /// The project's directory (a Maven reactor's root).
    root: PathBuf,
    /// What Surefire's configuration gives a test run (nothing for a main).
    environment: TestEnvironment,
}

/// A test run's environment from Surefire's configuration, under the user's own: their `-D`,
/// `--env` and `--cwd` win; the argLine's Java agents load with theirs.
fn with_test_environment(config: &mut RunConfig, environment: TestEnvironment, program: &ProgramEnv) {
    let unset = |mine: &[(String, String)], k: &str| !mine.iter().any(|(known, _)| known == k);
    let properties = environment.properties.into_iter().filter(|(k, _)| unset(&program.properties, k));
    config.properties = properties.chain(program.properties.iter().cloned()).collect();
    let env = environment.env.into_iter().filter(|(k, _)| unset(&program.env, k));
    config.env = env.chain(program.env.iter().cloned()).collect();
    config.cwd = program.cwd.clone().or(environment.cwd);
    // The argLine's `-javaagent`s load before the user's own, each once.
    let agents = environment.agents.into_iter().filter(|a| !program.java_agents.contains(a));
    config.java_agents = agents.chain(program.java_agents.iter().cloned()).collect();
    config.assertions = program.assertions(&environment.jvm_assertions);
}

/// Opens the project at `target` (a Maven reactor, or a plain tree with `lib/*.jar`), compiles its
/// sources and prepares its entry point: the test `--test` names, else `main` or the only main.
/// `Err(status)`: it cannot run, and why was said on stderr.
fn prepare_project(
    target: &Path,
    p: &ProjectArgs,
    given_class_path: &str,
    main: Option<&str>,
    jdk_home: &Path,
    timeouts: Timeouts,
) -> anyhow::Result<Result<Prepared, i32>> {
    let given_dir =
        std::fs::canonicalize(target).with_context(|| format!("{} is not a directory", target.display()))?;
    // A module's directory (or a folder of its sources): the reactor it belongs to is the project
    // (Maven needs its parent and siblings).
    let dir =
        bloatlens_profiler::project::maven::reactor_root(&bloatlens_profiler::project::maven::module_dir(&given_dir));
    let javac = javac::find_javac(Some(jdk_home))?;
    let project = match open_project(&dir, &p.mvn) {
        Ok(p) => p,
        Err(e) => {
            say!("bloatlens: error: {e}");
            return Ok(Err(STATUS_NOT_RUN));
        }
    };
    // `--tests` in a Maven reactor: the tests in the given directory (a folder of a module's tests,
    // a module, the reactor's root: every module's).
    let scope = match (p.tests && p.test.is_none(), project.build) {
        (true, Build::Maven) => match Scope::of_dir(&Scope::project_test_roots(&project, &[]), &dir, &given_dir) {
            Ok(s) => Some(s),
            Err(e) => {
                say!("bloatlens: error: {e}");
                return Ok(Err(STATUS_NOT_RUN));
            }
        },
        _ => None,
    };
    // The modules whose tests run: the test's, or those of the tests in the given directory.
    let suite_modules = match &scope {
        Some(s) => s.modules(&project),
        None => running_modules(&project, p),
    };
    let (main_roots, test_roots) = match project.build {
        // A test run compiles every module's main code, then the tests of the modules whose tests
        // run (one module's tests that do not compile do not stop another's); a test class found
        // in no module: every module's tests, and the run says it matches nothing.
        Build::Maven if p.tests_run() => {
            let mains = project.modules.iter().flat_map(|m| m.main_sources.iter().cloned()).collect();
            let running =
                if suite_modules.is_empty() { project.modules.iter().collect() } else { suite_modules.clone() };
            (mains, running.iter().flat_map(|m| m.test_sources.iter().cloned()).collect())
        }
        Build::Maven => (project.source_roots(), Vec::new()),
        Build::Plain => plain_roots(&dir, &p.source_root, &p.test_source_root)?,
    };
    let source_roots: Vec<PathBuf> = main_roots.iter().chain(&test_roots).cloned().collect();
    let java_files = |roots: &[PathBuf]| -> anyhow::Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for r in roots {
            files.extend(javac::java_files(r).with_context(|| format!("reading {}", r.display()))?);
        }
        // What the compiler plugin's includes and excludes leave out, Maven does not compile.
        files.retain(|f| project.module_of(f).is_none_or(|m| m.compiles(f)));
        Ok(files)
    };
    let test_files = java_files(&test_roots)?;
    // A test root inside a main one (a tree whose tests are in `test/`) is not main code.
    let main_files: Vec<PathBuf> =
        java_files(&main_roots)?.into_iter().filter(|f| !test_roots.iter().any(|r| f.starts_with(r))).collect();
    let test_file = p.test.as_deref().and_then(|t| source_of(&source_roots, t));
    // Every module compiles against every module's libraries (one javac run); a test runs
    // with its own module's. A plain tree's test roots compile after its main ones, against them.
    let given: Vec<PathBuf> = given_class_path.split(':').filter(|p| !p.is_empty()).map(PathBuf::from).collect();
    let all: Vec<PathBuf> = project.libraries_for(&dir).into_iter().chain(given.iter().cloned()).collect();
    let parameters = project.modules.iter().any(|m| m.parameters);
    // A multi-release overlay compiles into `META-INF/versions/N` of the main classes, against them
    // (a test run's class path holds it when Surefire's `additionalClasspathElements` names it).
    let mut overlays = Vec::new();
    if p.tests_run() {
        for overlay in project.modules.iter().flat_map(|m| m.overlays.iter()) {
            overlays.push((java_files(&overlay.roots)?, overlay));
        }
    }
    // The compile steps with their outputs under `base`: main, the overlays, then the tests.
    let layout = |base: &Path| match test_roots.is_empty() {
        true => (base.to_path_buf(), None),
        false => (base.join("main"), Some(base.join("test"))),
    };
    let steps = |base: &Path| {
        let (main_out, test_out) = layout(base);
        let against_main: Vec<PathBuf> = std::iter::once(main_out.clone()).chain(all.iter().cloned()).collect();
        let mut steps = vec![CompileStep {
            files: &main_files,
            roots: &main_roots,
            class_path: all.clone(),
            out: main_out.clone(),
        }];
        steps.extend(overlays.iter().map(|(files, o)| CompileStep {
            files,
            roots: &o.roots,
            class_path: against_main.clone(),
            out: main_out.join("META-INF/versions").join(&o.release),
        }));
        if let Some(test_out) = test_out {
            steps.push(CompileStep { files: &test_files, roots: &test_roots, class_path: against_main, out: test_out });
        }
        steps
    };
    let build = ProjectBuild::open(&dir, &javac, parameters, &steps)?;
    if let Some(into) = build.compile_into() {
        for step in steps(into) {
            if step.files.is_empty() {
                continue;
            }
            let job = javac::Job {
                sources: step.files,
                source_path: step.roots,
                class_path: &bloatlens_profiler::junit::join(&step.class_path),
                out: &step.out,
                parameters,
            };
            match javac::compile(&javac, &job) {
                Ok(()) => {}
                Err(javac::CompileError::Failed { output, .. }) => {
                    say_raw(&output);
                    say!("bloatlens: error: the project does not compile");
                    return Ok(Err(STATUS_NOT_RUN));
                }
                Err(e) => return Err(e.into()),
            }
        }
    } else {
        say!("bloatlens: the project's classes are up to date (compiled before from the same sources)");
    }
    let build = build.keep()?;
    let (main_out, test_out) = layout(build.path());
    // What the run's class path and resources are chosen by: the test's file, the one module's
    // test root, else the whole project.
    let anchor = match (&test_file, &scope, suite_modules.as_slice()) {
        (Some(f), _, _) => f.clone(),
        (None, Some(s), _) => s.anchor(),
        (None, None, [m]) => m.test_sources.first().cloned().unwrap_or_else(|| m.dir.clone()),
        _ => dir.clone(),
    };
    let libraries = project.libraries_for(&anchor);
    let mut cp: Vec<PathBuf> = libraries.iter().cloned().chain(given).collect();
    // The classes, then the resources beside them (as Maven's target/classes holds both).
    let resources = project.resources_for(&anchor);
    let classes = test_out.iter().cloned().chain(std::iter::once(main_out.clone()));
    cp.splice(0..0, classes.chain(resources));
    let mut environment = TestEnvironment::default();
    let (main_class, args, launch) = match p.tests_run() {
        true => {
            let cache = match project::open_cache_dir(&dir) {
                Ok(c) => c,
                Err(e) => {
                    say!("bloatlens: error: {e}");
                    return Ok(Err(STATUS_NOT_RUN));
                }
            };
            let (configs, mut notes) = project::maven::surefire_or_defaults(&project, &cache, &p.mvn);
            let selection = match &p.test {
                Some(selector) => Selection::one(selector),
                None => match suite(scope.as_ref(), &project, &test_roots, &dir, &configs) {
                    Ok(s) => s,
                    Err(e) => {
                        say!("bloatlens: error: {e}");
                        return Ok(Err(STATUS_NOT_RUN));
                    }
                },
            };
            environment = TestEnvironment::for_modules(&project, &suite_modules, &configs);
            notes.append(&mut environment.notes);
            // Surefire's additional elements, a module's `target/classes` being where it was compiled.
            for extra in &environment.class_path_after {
                let compiled = project.modules.iter().find_map(|m| {
                    extra.strip_prefix(m.dir.join("target/classes")).ok().map(|rest| main_out.join(rest))
                });
                cp.push(compiled.unwrap_or_else(|| extra.clone()));
            }
            let repositories = project.repositories();
            let prepared =
                TestLaunch::prepare_selection(&selection, &javac, &cache, &libraries, &repositories, timeouts);
            let mut launch = match prepared {
                Ok(l) => l,
                Err(e) => {
                    say!("bloatlens: error: {e}");
                    return Ok(Err(STATUS_NOT_RUN));
                }
            };
            if environment.assertions_on() {
                launch.enable_assertions();
            }
            launch.notes.extend(notes);
            cp.extend(launch.class_path.iter().cloned());
            (bloatlens_profiler::junit::RUNNER_CLASS.to_string(), launch.args.clone(), Some(launch))
        }
        false => match main {
            Some(m) => (m.to_string(), Vec::new(), None),
            None => {
                let mains: Vec<PathBuf> = main_files.iter().filter(|f| !project.is_test_source(f)).cloned().collect();
                (only_main(&mains)?, Vec::new(), None)
            }
        },
    };
    let class_path = bloatlens_profiler::junit::join(&cp);
    Ok(Ok(Prepared { class_path, main_class, args, source_roots, launch, build, root: dir, environment }))
}

/// The test classes `--tests` runs: those Surefire's patterns select in the Maven `scope` (a
/// plain tree: its test roots, with Surefire's defaults), with the modules' tag filters.
fn suite(
    scope: Option<&Scope>,
    project: &Project,
    plain_test_roots: &[PathBuf],
    root: &Path,
    configs: &std::collections::BTreeMap<String, Surefire>,
) -> anyhow::Result<Selection> {
    let scope = match scope {
        Some(s) => s.clone(),
        None => Scope::of_dir(plain_test_roots, root, root)?,
    };
    Ok(scope.selection(project, configs)?)
}

/// A plain tree's main and test source roots: the ones named (relative to the working
/// directory), else `src/main/java` and `src/test/java` when the tree has them, else the tree.
fn plain_roots(dir: &Path, named: &[PathBuf], named_tests: &[PathBuf]) -> anyhow::Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let absolute = |roots: &[PathBuf]| -> anyhow::Result<Vec<PathBuf>> {
        roots
            .iter()
            .map(|r| {
                std::fs::canonicalize(r).with_context(|| format!("the source root {} is not a directory", r.display()))
            })
            .collect()
    };
    let (conventional_mains, conventional_tests) = suite::plain_roots(dir);
    let mains = match named {
        [] => conventional_mains,
        some => absolute(some)?,
    };
    let tests = match named_tests {
        [] if named.is_empty() => conventional_tests,
        [] => Vec::new(),
        some => absolute(some)?,
    };
    Ok((mains, tests))
}

/// The source file of the test `test` names (`com.acme.FooTest#bar`, a nested `Foo$Inner`) under `roots`.
fn source_of(roots: &[PathBuf], test: &str) -> Option<PathBuf> {
    let class = test.split('#').next().unwrap_or(test).split('$').next().unwrap_or(test);
    let rel = format!("{}.java", class.replace('.', "/"));
    roots.iter().map(|r| r.join(&rel)).find(|f| f.is_file())
}

/// The modules whose tests a `--test` run runs: the module of the test class it names (none when
/// no module has its source); none for a main. (`--tests` in a Maven reactor: [`Scope::modules`];
/// a plain tree has no modules.)
fn running_modules<'p>(project: &'p Project, p: &ProjectArgs) -> Vec<&'p Module> {
    let Some(test) = &p.test else { return Vec::new() };
    let sources = |m: &&Module| m.test_sources.iter().chain(&m.main_sources).cloned().collect::<Vec<_>>();
    project.modules.iter().find(|m| source_of(&sources(m), test).is_some()).into_iter().collect()
}

/// The project at `dir` (Maven's class paths asked for, or taken from the cache when no pom
/// changed); the time Maven took is said on stderr.
fn open_project(dir: &Path, mvn: &str) -> Result<Project, bloatlens_profiler::project::ProjectError> {
    let (project, discovery) = Project::open(dir, &project::open_cache_dir(dir)?, mvn)?;
    if project.build == Build::Maven && !discovery.cached {
        say!(
            "bloatlens: Maven resolved the class paths of {} modules in {}",
            project.modules.len(),
            human_duration(discovery.took)
        );
    }
    for note in &project.notes {
        say!("note: {note}");
    }
    Ok(project)
}

/// `--format dot`: the whole graph asked for, the numbered finding's part of its graph, or the
/// first finding's that has one.
fn dot(report: &Report, graphs: &Graphs, finding: Option<usize>, which: Option<Which>) -> Result<String, String> {
    if let Some(w) = which {
        return graphs::whole_dot(graphs, w, graphs::SUMMARY_EDGES);
    }
    match finding {
        Some(n) => {
            let f = n
                .checked_sub(1)
                .and_then(|i| report.findings.get(i))
                .ok_or_else(|| format!("there is no finding {n} (the report has {})", report.findings.len()))?;
            graphs::finding_dot(graphs, f)
        }
        None => report
            .findings
            .iter()
            .find_map(|f| graphs::finding_dot(graphs, f).ok())
            .ok_or_else(|| "no finding has a graph; draw a whole one with --graph copy|reference|calls".into()),
    }
}

/// The one class among `files` that declares `main`, else an error listing the candidates.
fn only_main(files: &[PathBuf]) -> anyhow::Result<String> {
    let mut mains = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)?;
        if text.contains("static void main(") {
            mains.push(javac::class_name_of(f)?);
        }
    }
    match mains.len() {
        1 => Ok(mains.remove(0)),
        0 => bail!("no class with a main method among the sources"),
        _ => bail!("several classes have a main method ({}); choose one with --main", mains.join(", ")),
    }
}

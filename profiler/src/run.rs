//! One program run from start to end: locate the JDK, boot the VM, run `main`, report how it
//! ended. The CLI and the tests call this; nothing here prints except the program itself.

use crate::classpath::Jdk;
use crate::vm::{Limits, NoTracker, Options, Outcome, Stats, Tracker, Vm, VmError};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub class_path: String,
    pub main_class: String,
    pub args: Vec<String>,
    /// What the program's `System.in` reads.
    pub stdin: crate::vm::Stdin,
    /// Where the user's sources are: only classes whose source lies there are the user's code (the
    /// subjects of findings). Empty: every class path directory is the user's.
    pub source_roots: Vec<PathBuf>,
    /// The JDK whose class library runs; None: `JAVA_HOME`, else `java` on `PATH`.
    pub jdk: Option<PathBuf>,
    pub limits: Limits,
    /// Keep stdout/stderr in memory instead of writing them through.
    pub capture: bool,
    /// Write the program's stdout to the process's stderr (when the report goes to stdout).
    pub stdout_to_stderr: bool,
    /// Collect after this many bytes of allocation (default: a quarter of the heap cap, at most
    /// 64 MB, growing with the live heap). The lifetime analysis sets its young generation here.
    pub gc_interval_bytes: Option<u64>,
    /// System properties, as `java -Dkey=value` sets them.
    pub properties: Vec<(String, String)>,
    /// The program's working directory: `user.dir`, and what relative file paths resolve against.
    /// None: the process's own.
    pub cwd: Option<PathBuf>,
    /// What `System.getenv` returns over the process's environment (a name given twice: the last).
    pub env: Vec<(String, String)>,
    /// Debug mode: freed handles are never reused, so a missed reference fails where it is used,
    /// and collections come every `gc_interval_bytes` however large the live heap.
    pub check_handles: bool,
    /// Instructions a thread runs before another gets its turn (default [`crate::vm::threads::SLICE`]);
    /// stress tests vary it to move the points where threads switch.
    pub time_slice: Option<u64>,
    /// What the program may change on disk: its workspace (through an overlay, or for real) and a
    /// temporary directory of its own; None: whatever its user may (see [`crate::vm::sandbox`]).
    pub sandbox: Option<crate::vm::sandbox::SandboxConfig>,
    /// `-javaagent:JAR[=options]`: agents whose `premain` runs before the main class loads (each
    /// jar is appended to the system class loader's search, as the JVM does; `java.class.path`
    /// does not show it).
    pub java_agents: Vec<String>,
    /// `java`'s `-ea`/`-da`/`-esa`/`-dsa` options, in order ([`crate::vm::assertions`]).
    pub assertions: crate::vm::assertions::AssertionStatus,
    /// What the analyses observe (the user's code and what it calls, by default).
    pub observe: crate::vm::Observe,
}

impl RunConfig {
    pub fn new(class_path: impl Into<String>, main_class: impl Into<String>) -> Self {
        RunConfig {
            class_path: class_path.into(),
            main_class: main_class.into(),
            args: Vec::new(),
            source_roots: Vec::new(),
            stdin: Default::default(),
            jdk: None,
            limits: Limits::default(),
            capture: false,
            stdout_to_stderr: false,
            gc_interval_bytes: None,
            properties: Vec::new(),
            cwd: None,
            env: Vec::new(),
            check_handles: false,
            time_slice: None,
            sandbox: None,
            java_agents: Vec::new(),
            assertions: Default::default(),
            observe: Default::default(),
        }
    }
}

#[derive(Debug)]
pub struct RunResult {
    pub outcome: Outcome,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub stats: Stats,
    /// Time spent booting the JDK (initPhase1) before `main`.
    pub boot_time: Duration,
    /// What booting the JDK ran and allocated before `main`: the part of `stats` that is not the
    /// program's (a warmed-up `java` does not pay it again).
    pub boot: crate::cost_model::Work,
    /// Where a run that did not end by itself (a budget, a cancel) spent its last seconds.
    pub stopped_at: Option<crate::vm::whereabouts::StopPlace>,
}

/// The exit status of a run that an instruction or time budget stopped.
pub const STATUS_BUDGET: i32 = 3;
/// The exit status of a run interrupted (Ctrl-C, a cancel), as a shell reports SIGINT.
pub const STATUS_INTERRUPTED: i32 = 130;
/// The exit status when Bloatlens could not run the program (no JDK, no main class, compile errors,
/// an unsupported native, a VM error).
pub const STATUS_NOT_RUN: i32 = 2;

impl RunResult {
    /// The command line's exit status: the program's own when it ran (what `java` gives: its
    /// `System.exit` status, 1 for an uncaught exception), else why it did not end by itself.
    pub fn status(&self) -> i32 {
        match &self.outcome {
            Outcome::Exited(s) => *s,
            Outcome::UncaughtException(_) => 1,
            Outcome::Stopped(VmError::InstructionBudget(_) | VmError::TimeBudget(_)) => STATUS_BUDGET,
            Outcome::Stopped(VmError::Cancelled) => STATUS_INTERRUPTED,
            Outcome::Stopped(_) => STATUS_NOT_RUN,
        }
    }
}

pub fn locate_jdk(explicit: Option<&PathBuf>) -> Result<Jdk, VmError> {
    Ok(match explicit {
        Some(home) => Jdk::at(home)?,
        None => Jdk::locate()?,
    })
}

/// Native stack of the thread a run executes on. Java frames live on the VM's own stacks; this
/// native stack only holds Rust activations of nested calls back into Java (class initialisers,
/// reflection, natives that call Java), so it is sized for thousands of those. It is reserved, not
/// committed: untouched pages cost nothing.
pub const VM_THREAD_STACK: usize = 512 << 20;

/// Of [`VM_THREAD_STACK`], what nested calls may use before the call that goes deeper throws
/// `StackOverflowError` in Java (the rest is headroom for the deepest Rust code between checks).
pub const VM_NATIVE_STACK_BUDGET: usize = VM_THREAD_STACK - (64 << 20);

/// Runs a program under the VM with the given tracker. Errors before `main` starts (no JDK,
/// a class path entry missing, boot failure) are `Err`; everything after is in the outcome.
///
/// The run gets a thread of its own (see [`VM_THREAD_STACK`]), whatever thread calls: the CLI's
/// main thread and the server's worker threads alike. A panic inside the VM (a bug of ours, never
/// the program's fault) ends that thread only and is reported as `VmError::Internal`, so that a
/// caller such as the language server keeps running.
pub fn run_with<T: Tracker + Send>(config: &RunConfig, tracker: T) -> Result<(RunResult, T), VmError> {
    run_when(config, tracker, || Some(config.clone()))
}

/// [`run_with`], booted with `config` and then waiting, before `main`, for `start` to say which
/// run it is (a config that [boots like](RunConfig::boots_like) `config`: its main class,
/// arguments, cancel flag and sandbox log are taken from it); None from `start`: the run is
/// dropped, as [`VmError::Cancelled`]. The VM's clock does not count the wait.
pub fn run_when<T: Tracker + Send>(
    config: &RunConfig,
    tracker: T,
    start: impl FnOnce() -> Option<RunConfig> + Send,
) -> Result<(RunResult, T), VmError> {
    let ran = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("bloatlens-vm".into())
            .stack_size(VM_THREAD_STACK)
            .spawn_scoped(scope, || run_unguarded(config, tracker, start))
            .map(|vm| vm.join())
    });
    match ran {
        Err(e) => Err(VmError::Internal(format!("could not start the VM's thread: {e}"))),
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => Err(crashed(&*panic)),
    }
}

/// Hands the memory a finished run freed back to the system. glibc's allocator keeps freed small
/// blocks in its arenas (the VM's thread has one of its own) rather than returning them, so a
/// long-lived caller such as the language server would stay at its largest run's size (over a
/// gigabyte after a program that filled its heap). Call it once the run's VM and trackers are
/// dropped; a short-lived process need not.
pub fn give_memory_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory at the top of glibc's heaps and unused pages
    // inside them; it touches no allocation in use and is thread-safe (it locks each arena).
    unsafe {
        libc::malloc_trim(0);
    }
}

/// `class_path` with each relative entry made absolute against the process's directory (an empty
/// entry is that directory, as the JDK reads it).
fn absolute_class_path(class_path: &str) -> String {
    if class_path.is_empty() {
        return String::new();
    }
    std::env::split_paths(class_path)
        .map(|entry| {
            let entry = if entry.as_os_str().is_empty() { PathBuf::from(".") } else { entry };
            std::path::absolute(&entry).unwrap_or(entry)
        })
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(":")
}

/// The error a panic inside the VM becomes.
fn crashed(panic: &(dyn std::any::Any + Send)) -> VmError {
    let msg = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    VmError::Internal(format!("the VM crashed: {msg}"))
}

fn run_unguarded<T: Tracker>(
    config: &RunConfig,
    tracker: T,
    start: impl FnOnce() -> Option<RunConfig>,
) -> Result<(RunResult, T), VmError> {
    let jdk = locate_jdk(config.jdk.as_ref())?;
    let opts = Options {
        jdk,
        // The class path is named from where the run was asked for (the shell's directory), even
        // when the program runs in another one (`--cwd`): its relative entries are made absolute.
        class_path: match &config.cwd {
            Some(_) => absolute_class_path(&config.class_path),
            None => config.class_path.clone(),
        },
        source_roots: config.source_roots.clone(),
        stdin: config.stdin.clone(),
        stdout_to_stderr: config.stdout_to_stderr,
        limits: config.limits.clone(),
        native_stack_budget: VM_NATIVE_STACK_BUDGET,
        // Collect after a quarter of the cap (at most 64 MB) was allocated; the interval then grows with the live heap.
        gc_interval_bytes: config
            .gc_interval_bytes
            .unwrap_or((config.limits.max_heap_bytes / 4).clamp(1 << 20, 64 << 20)),
        // A young generation asked for (lifetimes): the same program sees the same collections
        // wherever it runs. Half a generation in, as after a typical start-up, so that a program
        // allocating about a young generation still sees a collection mid-run.
        first_collection_in_main: config.gc_interval_bytes.map(|young| young / 2),
        properties: config.properties.clone(),
        // Relative to the caller's directory, as a shell would take it; fixed before the program starts.
        cwd: match &config.cwd {
            Some(dir) if !dir.is_dir() => {
                return Err(VmError::Boot(format!("the working directory {} is not a directory", dir.display())))
            }
            Some(dir) => Some(std::path::absolute(dir).map_err(|e| VmError::Boot(format!("{}: {e}", dir.display())))?),
            None => None,
        },
        env: config.env.clone(),
        check_handles: config.check_handles,
        time_slice: config.time_slice.unwrap_or(crate::vm::threads::SLICE).max(1),
        sandbox: config.sandbox.clone(),
        java_agents: config.java_agents.clone(),
        assertions: config.assertions.clone(),
        observe: config.observe,
    };
    let started = std::time::Instant::now();
    let (mut vm, mut thread) = Vm::new_captured(opts, tracker, config.capture).map_err(VmError::before_main)?;
    let boot_time = started.elapsed();
    let booted = vm.stats();
    let boot = crate::cost_model::Work::new(booted.instructions, booted.allocated_bytes);
    let waiting = std::time::Instant::now();
    let config = &start().ok_or(VmError::Cancelled)?;
    vm.begin_run(waiting.elapsed(), config.limits.cancel.clone(), config.sandbox.as_ref());
    // A crash of the program's run (a bug of ours) still leaves the trackers what they saw until
    // then: the run ends as stopped, and its report says what ran. The heap may be inconsistent
    // after it, so no final collection reads it.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        vm.run_main(&mut thread, &config.main_class, &config.args)
    }));
    let (outcome, crashed) = match run {
        Ok(outcome) => (outcome, false),
        Err(panic) => (Outcome::Stopped(crashed(&*panic)), true),
    };
    let stopped_at = matches!(outcome, Outcome::Stopped(_)).then(|| vm.stop_place()).flatten();
    if T::FINAL_COLLECTION && !crashed {
        let _ = vm.collect_garbage(&mut thread);
    }
    let stats = vm.stats();
    // The final count goes to every tracker, `INSTRUCTIONS` or not.
    vm.tracker.on_instructions(stats.instructions);
    vm.tracker.finish(&vm.methods, &vm.classes);
    let (stdout, stderr) = vm.capture.take().unwrap_or_default();
    Ok((RunResult { outcome, stdout, stderr, stats, boot_time, boot, stopped_at }, vm.tracker))
}

impl RunConfig {
    /// Whether a VM booted with `self` can run `other`: they differ at most in what is taken
    /// only when `main` starts (the main class, its arguments, the cancel flag, the sandbox's log
    /// and the files it lets the run change). Every field is named, so a new one must be placed.
    pub fn boots_like(&self, other: &RunConfig) -> bool {
        let RunConfig {
            class_path,
            main_class: _,
            args: _,
            stdin,
            source_roots,
            jdk,
            limits,
            capture,
            stdout_to_stderr,
            gc_interval_bytes,
            properties,
            cwd,
            env,
            check_handles,
            time_slice,
            sandbox,
            java_agents,
            assertions,
            observe,
        } = self;
        *class_path == other.class_path
            && *stdin == other.stdin
            && *source_roots == other.source_roots
            && *jdk == other.jdk
            && limits.boots_like(&other.limits)
            && *capture == other.capture
            && *stdout_to_stderr == other.stdout_to_stderr
            && *gc_interval_bytes == other.gc_interval_bytes
            && *properties == other.properties
            && *cwd == other.cwd
            && *env == other.env
            && *check_handles == other.check_handles
            && *time_slice == other.time_slice
            && match (sandbox, &other.sandbox) {
                (Some(a), Some(b)) => a.boots_like(b),
                (None, None) => true,
                _ => false,
            }
            && *java_agents == other.java_agents
            && *assertions == other.assertions
            && *observe == other.observe
    }
}

pub fn run(config: &RunConfig) -> Result<RunResult, VmError> {
    run_with(config, NoTracker).map(|(r, _)| r)
}

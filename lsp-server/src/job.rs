//! One profile run for the editor: compile the entry point's sources with the user's `javac -g`
//! into a cache directory outside the workspace, then run it under the analyses — both on
//! blocking threads, with a cancel flag the VM checks with its budgets. The program runs in a
//! sandbox around the workspace (see [`sandbox`]).

use crate::config::Config;
use crate::rebuild;
use crate::warm_javac::WarmJavac;
use bloatlens_profiler::javac::{self, Diagnostic as JavacDiagnostic};
use bloatlens_profiler::junit::{self, TestLaunch};
use bloatlens_profiler::prepared::Prepared;
use bloatlens_profiler::private_dir;
use bloatlens_profiler::profile::{profile, ProfileConfig};
use bloatlens_profiler::project::suite::{self, Scope};
use bloatlens_profiler::project::surefire::Surefire;
use bloatlens_profiler::project::{self, Build, Discovery, Project};
use bloatlens_profiler::report::Report;
use bloatlens_profiler::run::RunConfig;
use bloatlens_profiler::vm::sandbox::{SandboxConfig, WorkspaceWrites, WriteLog};
use bloatlens_profiler::vm::{Outcome as RunOutcome, VmError};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// What runs, for people: the main class, or the test (`com.acme.FooTest#bar`).
    pub main_class: String,
    /// The test selector when the entry point is a JUnit test.
    pub test: Option<String>,
    /// The folder whose test classes run (every class Surefire would select below it) when the
    /// entry point is a folder of tests; `main_file` is the folder then.
    pub tests_in: Option<PathBuf>,
    /// The entry point's source file.
    pub main_file: PathBuf,
    /// The project's root: the workspace (or, with none, the file's source root).
    pub root: PathBuf,
    pub config: Config,
    /// Set when this run's entry point is a new one: how it was chosen (for the log).
    pub chosen: Option<String>,
    /// The launch.json configuration run (its arguments and class path are in `config` already).
    pub launch: Option<crate::launch::LaunchConfig>,
    /// Compile only, and say this when it compiles: a saved file with no main the parser sees
    /// (javac's errors, if any, are the truth about it).
    pub compile_only: Option<String>,
    /// The entry point before this plan's (the `entryPoint` key): it is the entry point again when
    /// this one is refused.
    pub previous_entry: Option<String>,
}

#[derive(Debug)]
pub enum Outcome {
    Report {
        report: Box<Report>,
        compile: Duration,
        run: Duration,
        /// The run took a VM whose JDK had booted ahead, after the run before it.
        booted_ahead: bool,
        /// Where the run's sources are: its findings' files are under these.
        roots: Vec<PathBuf>,
        /// How Maven's class paths were found, when this run asked for them.
        discovery: Option<Discovery>,
        /// What the sandbox did, for the log: changes it refused, changes the overlay kept from the workspace.
        notes: Vec<String>,
        /// What checking the findings' quick fixes needs of the run.
        fix_base: Box<crate::fix_check::Base>,
    },
    CompileErrors(Vec<JavacDiagnostic>),
    /// It compiled and there is nothing to run (no main): said as a warning.
    NothingToRun(String),
    /// Cancelled before it compiled (a newer save came while it waited for the compiler).
    Cancelled,
    /// The run could not start or the tools are missing; said to the user as a message.
    Failed(String),
    /// The entry point asked for holds nothing to run (a folder outside the test sources, or with
    /// no test class): said as a message, and the entry point before it stays.
    Refused(String),
}

/// The scratch directory for a workspace's classes and the warm compiler's source: under the
/// server's own private directory ([`private_dir::scratch`]: mode 0700, an unpredictable name),
/// never inside the workspace, never shared with another server (two on one workspace do not
/// delete each other's classes). Removed when the server ends ([`remove_cache_dirs`]).
pub fn cache_dir(source_root: &Path) -> Result<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    let mut scratch = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    if scratch.is_none() {
        let made = private_dir::owned_scratch("bloatlens-lsp-")
            .map_err(|e| format!("Bloatlens cannot create its scratch directory: {e}"))?;
        *scratch = Some(made);
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    source_root.hash(&mut h);
    let name = source_root.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    Ok(scratch.as_ref().map(|s| s.path()).unwrap_or(Path::new("")).join(format!("{name}-{:016x}", h.finish())))
}

/// The server's private scratch directory, made on first use.
static SCRATCH: Mutex<Option<tempfile::TempDir>> = Mutex::new(None);

/// Removes the scratch directory (at exit: nothing is left in the temp dir).
pub fn remove_cache_dirs() {
    if let Some(dir) = SCRATCH.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = dir.close();
    }
}

/// The VM booted for the next run ([`Prepared`]): after each run one boots for a run like it,
/// which the next save takes when its run boots alike (the same class path, properties and
/// settings: most saves), so that a save does not wait for the JDK's start-up.
pub type Ahead = Arc<Mutex<Option<Prepared>>>;

/// The workspace's project (its sources and Maven's class paths), shared by runs: opened on
/// first use, and again after a `pom.xml` changed.
pub type Projects = Arc<Mutex<ProjectSlot>>;

#[derive(Default)]
pub struct ProjectSlot {
    project: Option<Arc<Project>>,
}

impl ProjectSlot {
    /// The log's line for how the project's class paths were found (Maven projects only).
    pub fn describe(&self, d: &Discovery) -> Option<String> {
        self.project.as_ref().filter(|p| p.build == Build::Maven).map(|p| describe_discovery(p, d))
    }
}

/// `Maven: the class paths of 3 modules resolved in 3.4 s`.
pub fn describe_discovery(project: &Project, d: &Discovery) -> String {
    let mut text = format!(
        "Maven: the class paths of {} modules {} in {}",
        project.modules.len(),
        if d.cached { "read from the cache (no pom changed)" } else { "resolved" },
        bloatlens_profiler::report::human_duration(d.took)
    );
    for note in &project.notes {
        text.push_str(&format!("\nnote: {note}"));
    }
    text
}

/// Forgets the project (a pom changed): the next run asks Maven again (or its cache, keyed by
/// the poms' content).
pub fn invalidate(projects: &Projects) {
    projects.lock().unwrap_or_else(|e| e.into_inner()).project = None;
}

/// The project at `root` if it is open already and not being opened now (never blocks).
pub fn opened_project(projects: &Projects, root: &Path) -> Option<Arc<Project>> {
    let slot = projects.try_lock().ok()?;
    slot.project.as_ref().filter(|p| p.root == root).cloned()
}

/// The test source roots of `project` (rooted at `root`): Maven's modules', a plain tree's
/// conventional `src/test/java`.
fn test_roots(project: &Project, root: &Path) -> Vec<PathBuf> {
    Scope::project_test_roots(project, &suite::plain_roots(root).1)
}

/// The tests in the folder `dir` of the project at `root` (see [`Scope::of_dir`]).
pub fn tests_scope(project: &Project, root: &Path, dir: &Path) -> Result<Scope, suite::SuiteError> {
    Scope::of_dir(&test_roots(project, root), root, dir)
}

/// The project at `root`, opened if it is not yet (blocking: Maven may run for seconds).
pub fn project(projects: &Projects, root: &Path, mvn: &str) -> Result<(Arc<Project>, Option<Discovery>), String> {
    let mut slot = projects.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = slot.project.as_ref().filter(|p| p.root == root) {
        return Ok((p.clone(), None));
    }
    let (project, discovery) = Project::open(root, &project::open_cache_dir(root).map_err(|e| e.to_string())?, mvn)
        .map_err(|e| e.to_string())?;
    let project = Arc::new(project);
    slot.project = Some(project.clone());
    Ok((project, Some(discovery)))
}

/// The compiler, shared by runs (one compile at a time): the warm javac, started when the server
/// starts ([`warm_up`]) or on first use, and what the last compile of each source root made.
pub type Compiler = Arc<CompilerSlot>;

#[derive(Default)]
pub struct CompilerSlot {
    state: Mutex<CompilerState>,
    /// Runs waiting for the compiler: the warm-up compile is left out when one is (its compile
    /// warms the compiler as well).
    waiting: std::sync::atomic::AtomicUsize,
}

impl CompilerSlot {
    /// The compiler, for a run's compile (told to [`warm_up`] while it waits).
    fn for_run(&self) -> std::sync::MutexGuard<'_, CompilerState> {
        use std::sync::atomic::Ordering;
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        state
    }
}

#[derive(Default)]
pub struct CompilerState {
    warm: Option<WarmJavac>,
    built: std::collections::HashMap<PathBuf, rebuild::Built>,
}

impl CompilerState {
    /// Compiles through the warm javac (restarting it if it is gone), else a javac process.
    fn compile(&mut self, javac_path: &Path, scratch: &Path, job: &javac::Job) -> Result<(), javac::CompileError> {
        if self.warm.is_none() {
            self.warm = WarmJavac::start(javac_path, scratch).ok();
        }
        match self.warm.as_mut().map(|w| w.compile(job)) {
            Some(Err(javac::CompileError::Io(_))) | None => {
                // The warm compiler is gone: a javac process does this one, and the next save restarts it.
                self.warm = None;
                javac::compile(javac_path, job)
            }
            Some(Ok(())) => Ok(job.write_services()?),
            Some(result) => result,
        }
    }
}

/// Starts the warm compiler ahead of the first save, so that the first profile does not pay for
/// its start-up. Blocking: call on a blocking thread. Failing here is silent: the first save
/// tries again and says why.
pub fn warm_up(compiler: &Compiler, jdk: Option<&Path>, scratch: &Path) {
    let Ok(javac_path) = javac::find_javac(jdk) else { return };
    // One compile of a small program runs the compiler's code paths once (class loading and the
    // JIT's first tiers), which the first save would otherwise pay for: about a third of a second.
    let dir = scratch.join("warm-up");
    let source = dir.join("WarmUp.java");
    let text = "import java.util.*;\nclass WarmUp {\n    record P(String name, int n) {}\n    static int f(List<P> ps) {\n        int s = 0;\n        for (P p : ps) s += p.name().length() + p.n();\n        return s + String.format(\"%d\", ps.size()).length();\n    }\n}\n";
    if std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&source, text)).is_err() {
        return;
    }
    let sources = [source];
    let out = dir.join("classes");
    let job = javac::Job { sources: &sources, source_path: &[], class_path: "", out: &out, parameters: false };
    {
        let mut state = compiler.state.lock().unwrap_or_else(|e| e.into_inner());
        let warm = &mut state.warm;
        if warm.is_none() {
            *warm = WarmJavac::start(&javac_path, scratch).ok();
        }
        let save_waits = compiler.waiting.load(std::sync::atomic::Ordering::SeqCst) > 0;
        if let Some(w) = warm.as_mut().filter(|_| !save_waits) {
            let _ = w.compile(&job);
        }
    }
    // The first start on a machine (or of a JDK): the class archive the next starts map.
    crate::warm_javac::train_archive(&javac_path, scratch, &job.args());
}

/// Held while a project's tests are made ready to run (Surefire's configuration read, the JUnit
/// runner compiled): by [`prepare_tests`] ahead of the first test run, and by a test run until
/// its launch is ready, so that the two never write the same cached files at once.
static TESTS_SET_UP: Mutex<()> = Mutex::new(());

/// Gets a Maven project's tests ready to run before any is asked for: Surefire's configuration
/// read (one `mvn` run, cached under the poms' digest) and the JUnit runner compiled against each
/// module's test libraries (cached per launcher and JDK) — the several seconds a first test run
/// would otherwise wait for. Blocking: call on a blocking thread. Failing is silent: a test run
/// does the same and says why.
pub fn prepare_tests(project: &Project, root: &Path, config: &Config) {
    if project.build != Build::Maven {
        return;
    }
    let _set_up = TESTS_SET_UP.lock().unwrap_or_else(|e| e.into_inner());
    let (Ok(javac_path), Ok(cache)) = (javac::find_javac(config.jdk_path.as_deref()), project::open_cache_dir(root))
    else {
        return;
    };
    let _ = project::maven::surefire_or_defaults(project, &cache, &config.maven_path);
    let extra: Vec<PathBuf> = config.class_path.iter().map(PathBuf::from).collect();
    for module in &project.modules {
        let Some(tests) = module.test_sources.iter().find(|dir| dir.is_dir()) else { continue };
        let libraries: Vec<PathBuf> = project.libraries_for(tests).into_iter().chain(extra.iter().cloned()).collect();
        let _ = junit::prepare_runner(&javac_path, &cache, &libraries, &project.repositories());
    }
}

/// The end of a refusal's message in an editor's run: how the user lets the program write there.
pub const ALLOW_HINT: &str =
    "a profile on save may change only the workspace; `bloatlens profile` on the command line lets it write elsewhere";

/// The sandbox of a run of `plan`: the workspace (its root), where changes in it go (the
/// `sandbox.workspaceWrites` setting), and the files the server has the program write (a test's
/// outcomes); every change in the workspace is told to `log` as it happens.
pub fn sandbox(plan: &Plan, log: WriteLog, writable: Option<&Path>) -> SandboxConfig {
    let mut config = SandboxConfig::new(&plan.root, plan.config.sandbox.workspace_writes, ALLOW_HINT);
    config.writable.extend(writable.map(Path::to_path_buf));
    config.log = log;
    // In the server's cache directory: removed at exit even when a run is cut short.
    config.scratch_in = cache_dir(&plan.root).ok();
    config
}

/// What a sandboxed run did that the user should know: the changes it refused outside the
/// workspace, and (with the overlay) the workspace paths whose changes were dropped.
pub fn sandbox_notes(config: &SandboxConfig) -> Vec<String> {
    let mut notes = Vec::new();
    let refused = config.log.refused();
    if let Some(first) = refused.first() {
        let more = match refused.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        notes.push(format!(
            "the sandbox refused changes outside the workspace: {first}{more} (the program got a permission error)"
        ));
    }
    let written = config.log.written();
    if config.workspace_writes == WorkspaceWrites::Overlay && !written.is_empty() {
        let names: Vec<String> = written
            .iter()
            .take(3)
            .map(|p| p.strip_prefix(&config.workspace).unwrap_or(p).display().to_string())
            .collect();
        let more = if written.len() > 3 { ", …" } else { "" };
        notes.push(format!(
            "the program's changes in the workspace ({}{more}) went to the sandbox's overlay and were dropped; \
             the setting bloatlens.sandbox.workspaceWrites: allow keeps them",
            names.join(", ")
        ));
    }
    notes
}

/// The tests of a folder, chosen before compiling (their sources are what is compiled).
struct FolderTests {
    scope: Scope,
    selection: junit::Selection,
    sources: Vec<PathBuf>,
    configs: std::collections::BTreeMap<String, Surefire>,
    /// What the user should know about Surefire's configuration (not read: its defaults apply).
    notes: Vec<String>,
    cache: PathBuf,
}

/// The test classes Surefire would run in the folder `dir`, with its configuration.
fn folder_tests(plan: &Plan, project: &Project, dir: &Path) -> Result<FolderTests, Outcome> {
    let scope = tests_scope(project, &plan.root, dir).map_err(|e| Outcome::Refused(format!("Bloatlens: {e}")))?;
    let cache = project::open_cache_dir(&plan.root).map_err(|e| Outcome::Failed(format!("Bloatlens: {e}")))?;
    // Its includes, excludes and groups; what its forked JVM would get comes with them.
    let (configs, notes) = project::maven::surefire_or_defaults(project, &cache, &plan.config.maven_path);
    let selection = scope.selection(project, &configs).map_err(|e| Outcome::Refused(format!("Bloatlens: {e}")))?;
    let sources = scope.source_files(&selection);
    Ok(FolderTests { scope, selection, sources, configs, notes, cache })
}

/// Runs the plan to the end (or until `cancel` is set); `on_compiled` is called between compiling and
/// running; the program's changes in the workspace are told to `writes` as they happen. Blocking:
/// call on a blocking thread.
pub fn run(
    plan: &Plan,
    compiler: &Compiler,
    projects: &Projects,
    ahead: &Ahead,
    cancel: Arc<AtomicBool>,
    writes: WriteLog,
    on_compiled: impl FnOnce(),
) -> Outcome {
    let started = Instant::now();
    let javac_path = match javac::find_javac(plan.config.jdk_path.as_deref()) {
        Ok(j) => j,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    let (project, discovery) = match project(projects, &plan.root, &plan.config.maven_path) {
        Ok(p) => p,
        Err(e) => return Outcome::Failed(format!("Bloatlens: {e}")),
    };
    // Until the launch is ready (after the compile): see `TESTS_SET_UP`.
    let tests_set_up = (plan.test.is_some() || plan.tests_in.is_some())
        .then(|| TESTS_SET_UP.lock().unwrap_or_else(|e| e.into_inner()));
    let folder = match &plan.tests_in {
        Some(dir) => match folder_tests(plan, &project, dir) {
            Ok(f) => Some(f),
            Err(outcome) => return outcome,
        },
        None => None,
    };
    // Maven's modules' source roots (and the file's own, should it lie outside them); a plain
    // tree's root follows from the file's package (a folder's tests: its conventional roots).
    let mut roots = match project.build {
        Build::Maven => project.source_roots(),
        Build::Plain if folder.is_some() => {
            let (mains, tests) = suite::plain_roots(&plan.root);
            mains.into_iter().chain(tests).collect()
        }
        Build::Plain => Vec::new(),
    };
    if folder.is_none() && !roots.iter().any(|r| plan.main_file.starts_with(r)) {
        roots.push(javac::source_root_of(&plan.main_file));
    }
    // What is compiled (javac follows their references): the entry point's file, or the folder's test classes.
    let entries: Vec<PathBuf> = match &folder {
        Some(f) => f.sources.clone(),
        None => vec![plan.main_file.clone()],
    };
    // What the program's class path and resources are chosen by: its file, or the folder's tests.
    let anchor = folder.as_ref().map(|f| f.scope.anchor()).unwrap_or_else(|| plan.main_file.clone());
    let extra = plan.config.class_path.iter().map(PathBuf::from);
    // Every module compiles against every module's libraries; the program runs with its own module's.
    let compile_path: Vec<PathBuf> = project.libraries_for(&plan.root).into_iter().chain(extra.clone()).collect();
    let run_path: Vec<PathBuf> = project.libraries_for(&anchor).into_iter().chain(extra).collect();
    let scratch = match cache_dir(&plan.root) {
        Ok(s) => s,
        Err(e) => return Outcome::Failed(e),
    };
    let classes = scratch.join("classes");
    let cp = junit::join(&compile_path);
    let compiled = {
        let mut state = compiler.for_run();
        // Saves in quick succession queue here: only the newest is worth compiling.
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Outcome::Cancelled;
        }
        let key = format!("{entries:?}\n{cp}\n{}\n{roots:?}", javac_path.display());
        let root = plan.root.clone();
        let parameters = project.modules.iter().any(|m| m.parameters);
        let full = |state: &mut CompilerState| {
            // Start clean, so that classes of deleted sources do not linger.
            let _ = std::fs::remove_dir_all(&classes);
            let job = javac::Job { sources: &entries, source_path: &roots, class_path: &cp, out: &classes, parameters };
            state.compile(&javac_path, &scratch, &job)
        };
        let result = match rebuild::decide(state.built.get(&root), &key, &classes, &entries) {
            rebuild::Decision::Nothing => Ok(()),
            rebuild::Decision::Full => full(&mut state),
            rebuild::Decision::Changed(sources) => {
                let started = std::time::SystemTime::now();
                // Against the classes already built (javac takes a class file over a source older than it).
                let against = format!("{}:{cp}", classes.display());
                let job = javac::Job {
                    sources: &sources,
                    source_path: &roots,
                    class_path: &against,
                    out: &classes,
                    parameters,
                };
                match state.compile(&javac_path, &scratch, &job) {
                    Ok(()) if rebuild::needs_full(&state.built[&root], &sources, &classes, started) => full(&mut state),
                    other => other,
                }
            }
        };
        if result.is_ok() {
            state.built.insert(root.clone(), rebuild::record(&key, &roots, &classes));
        }
        result
    };
    match compiled {
        Ok(()) => {}
        Err(javac::CompileError::Failed { diagnostics, output }) => {
            if diagnostics.is_empty() {
                return Outcome::Failed(format!("javac failed:\n{output}"));
            }
            return Outcome::CompileErrors(diagnostics);
        }
        Err(e) => return Outcome::Failed(e.to_string()),
    }
    if let Some(said) = &plan.compile_only {
        return Outcome::NothingToRun(said.clone());
    }
    // A test runs as the JUnit runner's main, the launcher after the project's libraries.
    // The classes, then the resources beside them (as Maven's target/classes holds both).
    let resources = project.resources_for(&anchor);
    let mut class_path: Vec<PathBuf> =
        std::iter::once(classes.clone()).chain(resources).chain(run_path.iter().cloned()).collect();
    let mut test_environment = None;
    let (main_class, args, test_launch) = match (&plan.test, folder) {
        // A folder's tests, under one VM, as the command line's `--tests` runs a module's.
        (_, Some(f)) => {
            let timeouts = junit::Timeouts::profiled(plan.config.test_timeouts);
            let modules = f.scope.modules(&project);
            let environment = project::surefire::TestEnvironment::for_modules(&project, &modules, &f.configs);
            let prepared = TestLaunch::prepare_selection(
                &f.selection,
                &javac_path,
                &f.cache,
                &run_path,
                &project.repositories(),
                timeouts,
            );
            let mut launch = match prepared {
                Ok(l) => l,
                Err(e) => return Outcome::Failed(format!("Bloatlens cannot run {}: {e}", plan.main_class)),
            };
            if environment.assertions_on() {
                launch.enable_assertions();
            }
            launch.notes.extend(f.notes);
            launch.notes.extend(environment.notes.iter().cloned());
            test_environment = Some(environment);
            class_path.extend(launch.class_path.iter().cloned());
            (junit::RUNNER_CLASS.to_string(), launch.args.clone(), Some(launch))
        }
        (Some(selector), None) => {
            let cache = match project::open_cache_dir(&plan.root) {
                Ok(c) => c,
                Err(e) => return Outcome::Failed(format!("Bloatlens: {e}")),
            };
            let timeouts = junit::Timeouts::profiled(plan.config.test_timeouts);
            // What Surefire's forked JVM would get: its system properties, environment, directory.
            let (configs, notes) = project::maven::surefire_or_defaults(&project, &cache, &plan.config.maven_path);
            let module: Vec<&project::Module> = project.module_of(&plan.main_file).into_iter().collect();
            test_environment = Some(project::surefire::TestEnvironment::for_modules(&project, &module, &configs));
            match TestLaunch::prepare(selector, &javac_path, &cache, &run_path, &project.repositories(), timeouts) {
                Ok(mut launch) => {
                    if test_environment.as_ref().is_some_and(|e| e.assertions_on()) {
                        launch.enable_assertions();
                    }
                    launch.notes.extend(notes);
                    launch.notes.extend(test_environment.iter().flat_map(|e| e.notes.iter().cloned()));
                    class_path.extend(launch.class_path.iter().cloned());
                    (junit::RUNNER_CLASS.to_string(), launch.args.clone(), Some(launch))
                }
                Err(e) => return Outcome::Failed(format!("Bloatlens cannot run {selector}: {e}")),
            }
        }
        (None, None) => (plan.main_class.clone(), plan.config.args.clone(), None),
    };
    drop(tests_set_up);
    let compile = started.elapsed();
    on_compiled();
    let mut limits = plan.config.limits();
    limits.cancel = Some(cancel);
    let sandbox = sandbox(plan, writes, test_launch.as_ref().map(TestLaunch::outcomes_path));
    let config = ProfileConfig {
        run: RunConfig {
            class_path: junit::join(&class_path),
            main_class,
            args,
            source_roots: roots.clone(),
            // The server's stdin is the editor's JSON-RPC stream: never the program's.
            stdin: match &plan.config.stdin_file {
                Some(file) => bloatlens_profiler::vm::Stdin::File(file.clone()),
                None => bloatlens_profiler::vm::Stdin::Empty,
            },
            jdk: plan.config.jdk_path.clone(),
            limits,
            capture: true,
            stdout_to_stderr: false,
            gc_interval_bytes: None,
            // A test's: Surefire's properties and environment, then the launch configuration's.
            properties: test_environment
                .iter()
                .flat_map(|e| e.properties.iter().cloned())
                .chain(plan.launch.iter().flat_map(|l| l.properties.iter().cloned()))
                .collect(),
            // The launch configuration's directory, else a test's module's (as Surefire has it),
            // else the workspace's (as the Java debugger has it).
            cwd: Some(match (&plan.launch, test_environment.as_ref().and_then(|e| e.cwd.clone())) {
                (Some(l), _) => l.cwd.clone(),
                (None, Some(module)) => module,
                (None, None) => plan.root.clone(),
            }),
            env: test_environment
                .iter()
                .flat_map(|e| e.env.iter().cloned())
                .chain(plan.launch.iter().flat_map(|l| l.env.iter().cloned()))
                .collect(),
            check_handles: false,
            time_slice: None,
            sandbox: Some(sandbox.clone()),
            // A test's: the Java agents of Surefire's argLine.
            java_agents: test_environment.iter().flat_map(|e| e.agents.iter().cloned()).collect(),
            // A test's argLine's, then the launch configuration's `-ea`s.
            assertions: bloatlens_profiler::vm::assertions::AssertionStatus::of(
                test_environment
                    .iter()
                    .flat_map(|e| e.jvm_assertions.iter())
                    .chain(plan.launch.iter().flat_map(|l| l.assertions.iter())),
            ),
            observe: Default::default(),
        },
        analyses: plan.config.analyses(),
        settings: plan.config.thresholds(),
        threads: Default::default(),
    };
    let run_started = Instant::now();
    // Taken either way: a VM kept while the setting was on is not kept after it was turned off.
    let waiting_vm = ahead.lock().unwrap_or_else(|e| e.into_inner()).take().filter(|_| plan.config.boot_ahead);
    let (profiled, booted_ahead) = match waiting_vm.and_then(|vm| vm.run(&config)) {
        Some(profiled) => (profiled, true),
        None => (profile(&config), false),
    };
    // The run's heap and trackers are gone: their memory goes back to the system.
    bloatlens_profiler::run::give_memory_back();
    // The next save's VM boots now, while the user reads this one's findings.
    let ended = matches!(&profiled, Ok((r, _)) if !matches!(r.outcome, RunOutcome::Stopped(VmError::Cancelled)));
    if plan.config.boot_ahead && ended {
        *ahead.lock().unwrap_or_else(|e| e.into_inner()) = Prepared::boot(config.clone()).ok();
    }
    match profiled {
        Ok((result, mut report)) => {
            let fix_base = Box::new(crate::fix_check::Base::new(&config.run, &result, &roots, &javac_path, &scratch));
            if let Some(launch) = &test_launch {
                if let Err(e) = launch.finish(&mut report) {
                    return Outcome::Failed(format!("Bloatlens: {e}"));
                }
            }
            let notes = sandbox_notes(&sandbox);
            Outcome::Report {
                report: Box::new(report),
                compile,
                run: run_started.elapsed(),
                booted_ahead,
                roots,
                discovery,
                notes,
                fix_base,
            }
        }
        Err(e) => Outcome::Failed(format!("Bloatlens could not run {}: {e}", plan.main_class)),
    }
}

//! The state owner: one task applies every event (document edits, saves, disk changes, settings,
//! finished runs) in arrival order and publishes an immutable [`Snapshot`] that request handlers
//! read. Runs happen on blocking threads; a newer save cancels the running one, and a run whose
//! generation is no longer current is never published.

use crate::config::Config;
use crate::document::Document;
use crate::job::{self, Outcome, Plan};
use crate::mapping::{self, Encoding, LineIndex};
use crate::suppressions;
use crate::to_proto;
use bloatlens_profiler::junit::{TestOutcome, TestStatus};
use bloatlens_profiler::report::{human_duration, Finding, Report};
use bloatlens_profiler::vm::sandbox::WriteLog;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticSeverity, MessageType, NumberOrString, ProgressToken, Range, TextDocumentContentChangeEvent,
    Uri,
};
use tower_lsp_server::Client;

/// A related place of a finding, in the editor's terms.
#[derive(Debug, Clone)]
pub struct RelatedPlace {
    pub uri: Uri,
    pub range: Range,
    pub role: String,
}

/// A finding placed in a file.
#[derive(Debug, Clone)]
pub struct Mapped {
    pub finding: Arc<Finding>,
    pub key: String,
    pub uri: Uri,
    pub range: Range,
    pub related: Vec<RelatedPlace>,
    /// The file was edited on a line of this finding since the run.
    pub stale: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Idle,
    /// Several classes have a main and none is chosen yet: the user picks one.
    Choose {
        mains: Vec<String>,
    },
    /// Run number `run` (a newer save starts a new one) is compiling, then running.
    Compiling {
        main_class: String,
        run: u64,
    },
    Running {
        main_class: String,
        run: u64,
    },
    Done {
        main_class: String,
        findings: usize,
        millis: u128,
    },
    /// Cancelled by the user: the findings shown are the last complete run's.
    Cancelled {
        main_class: String,
    },
    Failed(String),
    /// The workspace is not trusted: nothing is compiled or run until the user trusts it.
    Restricted,
}

/// What an applied quick fix saved: the profile after it compared with the one before.
#[derive(Debug, Clone, PartialEq)]
pub struct FixSaving {
    pub uri: Uri,
    /// The line (0-based) the fix changed first.
    pub line: u32,
    /// "−23% instructions, −1.2 MB allocated since the fix; the finding is gone".
    pub text: String,
}

/// A quick fix the user applied, waiting for the next profile to be measured against.
#[derive(Debug, Clone)]
struct Applied {
    finding: Arc<Finding>,
    before: Arc<Report>,
    uri: Uri,
    line: u32,
}

/// What request handlers see.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub root: Option<PathBuf>,
    pub config: Config,
    pub encoding: Encoding,
    pub docs: HashMap<Uri, Document>,
    pub findings: Vec<Mapped>,
    pub report: Option<Arc<Report>>,
    /// The findings' quick fixes by finding key: offered when checked, else why not.
    pub fixes: HashMap<String, crate::fix_check::Offer>,
    /// What the last applied quick fix saved, measured by the profile after it.
    pub fix_saving: Option<FixSaving>,
    pub status: Status,
    /// The entry point as the client remembers it (`com.acme.Main`, `test:com.acme.FooTest#bar`).
    pub entry_point: Option<String>,
}

impl Snapshot {
    /// The source file of a class or a test (`com.acme.Main`, `com.acme.FooTest#bar`): the
    /// workspace's `com/acme/FooTest.java` (an open buffer's or the disk's) that declares it.
    pub fn class_file(&self, selector: &str) -> Option<PathBuf> {
        let class = selector.split('#').next()?.split('$').next()?;
        let suffix = format!("{}.java", class.replace('.', "/"));
        let mut files = Vec::new();
        if let Some(root) = &self.root {
            collect_java_files(root, &mut files, 0);
        }
        files.extend(self.docs.keys().filter_map(|u| u.to_file_path().map(|p| p.into_owned())));
        files.into_iter().find(|f| f.ends_with(&suffix))
    }

    /// Every main in the workspace's Java files (open buffers take precedence over the disk).
    pub fn workspace_mains(&self, file: Option<&Uri>) -> Vec<(String, PathBuf)> {
        let mut files: Vec<PathBuf> = Vec::new();
        if let Some(root) = &self.root {
            collect_java_files(root, &mut files, 0);
        }
        if let Some(p) = file.and_then(|u| u.to_file_path()) {
            if !files.iter().any(|f| f.as_path() == p.as_ref()) {
                files.push(p.into_owned());
            }
        }
        let mut out = Vec::new();
        for f in files {
            let uri = to_proto::uri_of(&f);
            let text = match uri.as_ref().and_then(|u| self.docs.get(u)) {
                Some(d) => d.text(),
                None => match std::fs::read_to_string(&f) {
                    Ok(t) => t,
                    Err(_) => continue,
                },
            };
            if !text.contains("main") {
                continue;
            }
            let tree = mapping::parse(&text);
            for m in mapping::main_methods(&text, tree.as_ref()) {
                out.push((m.class, f.clone()));
            }
        }
        out
    }

    pub fn findings_in(&self, uri: &Uri) -> impl Iterator<Item = &Mapped> + '_ {
        let uri = uri.clone();
        self.findings.iter().filter(move |m| m.uri == uri)
    }

    /// The document's text: the open buffer, else the file on disk.
    pub fn text_of(&self, uri: &Uri) -> Option<Arc<LineIndex>> {
        if let Some(d) = self.docs.get(uri) {
            return Some(d.index());
        }
        let path = uri.to_file_path()?;
        std::fs::read_to_string(path).ok().map(|t| Arc::new(LineIndex::new(t)))
    }
}

/// What a run starts from.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryPoint {
    /// A class with a `main`.
    Main(String),
    /// A JUnit test: a class, or `Class#method`.
    Test(String),
    /// Every test class Surefire would run in a folder (a package's directory in a test source
    /// root, a test root, a module's directory, the workspace): relative to the workspace when it
    /// is inside it (`.` for the workspace itself), else absolute.
    Tests(PathBuf),
}

/// How a folder of tests is named in the `entryPoint` setting: `tests:core/src/test/java/com/acme`.
const TESTS_PREFIX: &str = "tests:";

impl EntryPoint {
    /// As the client remembers it (the `entryPoint` setting): the class, `test:` and the
    /// selector, or `tests:` and the folder.
    pub fn key(&self) -> String {
        match self {
            EntryPoint::Main(c) => c.clone(),
            EntryPoint::Test(t) => format!("test:{t}"),
            EntryPoint::Tests(dir) => format!("{TESTS_PREFIX}{}", dir.display()),
        }
    }

    pub fn from_key(key: &str) -> EntryPoint {
        if let Some(dir) = key.strip_prefix(TESTS_PREFIX).filter(|d| !d.is_empty()) {
            return EntryPoint::Tests(PathBuf::from(dir));
        }
        match key.strip_prefix("test:") {
            Some(t) => EntryPoint::Test(t.to_string()),
            None => EntryPoint::Main(key.to_string()),
        }
    }

    /// The folder `dir` (absolute) as an entry point of the workspace at `root`: relative to it.
    pub fn tests_in(dir: &Path, root: Option<&Path>) -> EntryPoint {
        match root.and_then(|r| dir.strip_prefix(r).ok()) {
            Some(rel) if rel.as_os_str().is_empty() => EntryPoint::Tests(PathBuf::from(".")),
            Some(rel) => EntryPoint::Tests(rel.to_path_buf()),
            None => EntryPoint::Tests(dir.to_path_buf()),
        }
    }

    /// For people: `com.acme.Main`, `test com.acme.FooTest#bar`, `tests in src/test/java/com/acme`,
    /// `tests in the workspace`.
    pub fn name(&self) -> String {
        match self {
            EntryPoint::Main(c) => c.clone(),
            EntryPoint::Test(t) => format!("test {t}"),
            EntryPoint::Tests(dir) if dir.as_os_str() == "." => "tests in the workspace".to_string(),
            EntryPoint::Tests(dir) => format!("tests in {}", dir.display()),
        }
    }
}

#[derive(Debug)]
pub enum Event {
    Initialized {
        root: Option<PathBuf>,
        config: Box<Config>,
        encoding: Encoding,
        progress: bool,
        /// The client wants `bloatlens/status` notifications.
        status: bool,
        /// The client refreshes code lenses when asked.
        lens_refresh: bool,
    },
    /// The client's `initialized`: from here on the server may notify it (tower-lsp drops a
    /// notification sent while `initialize` is still being answered).
    ClientReady,
    Opened {
        uri: Uri,
        text: String,
        version: i32,
    },
    Changed {
        uri: Uri,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    },
    Saved {
        uri: Uri,
    },
    Closed {
        uri: Uri,
    },
    Configuration(serde_json::Value),
    /// Java files or poms changed on disk (a checkout, a build tool), after debouncing.
    DiskChanged(Vec<PathBuf>),
    /// The run `generation` has compiled and now runs.
    Compiled {
        generation: u64,
    },
    /// Profile this class (a lens or a command), or this test (`test`: a class or
    /// `Class#method`), or the tests in this folder (`tests_in`, absolute), or, without any, the
    /// file's main.
    Profile {
        main_class: Option<String>,
        test: Option<String>,
        tests_in: Option<PathBuf>,
        file: Option<Uri>,
    },
    /// The project was opened ahead of the first run: a line for the log, or why it could not be.
    ProjectOpened(Result<String, String>),
    CancelProgress(ProgressToken),
    Suppress(Vec<String>),
    /// The quick fix of finding `key`, as far as it is checked, for the run `generation`.
    FixOffer {
        generation: u64,
        key: String,
        offer: crate::fix_check::Offer,
    },
    /// The user applied the quick fix of finding `key`: the next profile says what it saved.
    FixApplied {
        key: String,
    },
    JobDone {
        generation: u64,
        plan: Box<Plan>,
        outcome: Outcome,
    },
}

struct Running {
    cancel: Arc<AtomicBool>,
    token: ProgressToken,
    main_class: String,
    /// Told when the run is cancelled: its progress ends at once, before the next run's begins
    /// (the editor shows one progress indicator, never two).
    cancelled: Arc<tokio::sync::Notify>,
    /// Closed when the run's progress has ended.
    progress_ended: watch::Receiver<bool>,
}

pub struct State {
    client: Client,
    snap: Snapshot,
    publish: watch::Sender<Arc<Snapshot>>,
    events: mpsc::UnboundedSender<Event>,
    generation: u64,
    running: Option<Running>,
    /// Files with diagnostics on the client now (to clear them when they have none).
    published: HashSet<Uri>,
    said_several_mains: bool,
    /// The entry point: chosen by the user (a lens, the picker, `mainClass`), else the first main
    /// profiled. A new main elsewhere never replaces it; only a choice does.
    entry: Option<String>,
    client_progress: bool,
    /// The client refreshes code lenses when asked (`workspace.codeLens.refreshSupport`).
    client_lens_refresh: bool,
    /// The client asked for `bloatlens/status` notifications (`experimental.bloatlensStatus`).
    client_status: bool,
    /// The client has sent `initialized`: notifications reach it from then on.
    client_ready: bool,
    /// The last status sent, to send only changes.
    sent_status: Option<serde_json::Value>,
    compiler: job::Compiler,
    ahead: job::Ahead,
    /// The source roots of the last published run, where its findings' files are.
    source_roots: Vec<PathBuf>,
    projects: job::Projects,
    suppressed: HashSet<String>,
    /// When each file was last saved through the editor (to ignore the watcher's echo).
    saved_at: HashMap<PathBuf, Instant>,
    /// What the latest runs changed in the workspace (when the sandbox lets changes land there):
    /// the watcher's reports of those changes start no profile.
    program_writes: Vec<WriteLog>,
    /// Set to stop the quick-fix checks of the last run (a newer save came).
    fix_checks: Option<Arc<AtomicBool>>,
    applied: Option<Applied>,
    _watcher: Option<notify::RecommendedWatcher>,
}

/// What a workspace without a main is told.
const NO_MAIN: &str =
    "Bloatlens: no main method in the workspace to profile (a test runs from its \"Profile test\" lens)";

/// What an untrusted workspace is told (the log, and a message when a profile is asked for).
const RESTRICTED: &str = "Bloatlens: this workspace is not trusted, so nothing is compiled or run in it (no javac, no \
     Maven, no program); trust the workspace to profile it";

/// Starts the state owner; returns the event sender and the snapshot receiver.
pub fn start(client: Client) -> (mpsc::UnboundedSender<Event>, watch::Receiver<Arc<Snapshot>>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let snap = Snapshot {
        root: None,
        config: Config::default(),
        encoding: Encoding::Utf16,
        docs: HashMap::new(),
        findings: Vec::new(),
        report: None,
        fixes: HashMap::new(),
        fix_saving: None,
        status: Status::Idle,
        entry_point: None,
    };
    let (publish, snapshots) = watch::channel(Arc::new(snap.clone()));
    let mut state = State {
        client,
        snap,
        publish,
        events: tx.clone(),
        generation: 0,
        running: None,
        published: HashSet::new(),
        said_several_mains: false,
        entry: None,
        client_progress: false,
        client_lens_refresh: false,
        client_status: false,
        client_ready: false,
        sent_status: None,
        compiler: job::Compiler::default(),
        ahead: job::Ahead::default(),
        source_roots: Vec::new(),
        projects: job::Projects::default(),
        suppressed: HashSet::new(),
        saved_at: HashMap::new(),
        program_writes: Vec::new(),
        fix_checks: None,
        applied: None,
        _watcher: None,
    };
    tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            state.apply(event).await;
            state.commit();
            state.notify_status().await;
        }
    });
    (tx, snapshots)
}

impl State {
    /// Makes the current state visible to request handlers. Called before every notification
    /// that reflects it, so a client that reacts to one sees the state that caused it.
    fn commit(&self) {
        let _ = self.publish.send(Arc::new(self.snap.clone()));
    }

    /// Sends `bloatlens/status` when what it says changed (only to clients that asked for it):
    /// what the status bar of an editor shows.
    async fn notify_status(&mut self) {
        if !self.client_status || !self.client_ready {
            return;
        }
        let status = to_proto::status(&self.snap);
        if self.sent_status.as_ref() != Some(&status) {
            self.sent_status = Some(status.clone());
            self.client.send_notification::<to_proto::StatusNotification>(status).await;
        }
    }

    async fn apply(&mut self, event: Event) {
        match event {
            Event::Initialized { root, config, encoding, progress, status, lens_refresh } => {
                self.client_status = status;
                self.client_lens_refresh = lens_refresh;
                // The entry point chosen in an earlier session (the client remembers it per workspace).
                self.entry = (!config.entry_point.is_empty()).then(|| config.entry_point.clone());
                self.snap.root = root;
                self.snap.config = *config;
                self.snap.encoding = encoding;
                self.client_progress = progress;
                self.suppressed = self.load_suppressions().await;
                self._watcher = self.watch();
                if !self.snap.config.trusted {
                    self.snap.status = Status::Restricted;
                    self.log(RESTRICTED.to_string()).await;
                } else if let Some(root) = self.snap.root.clone() {
                    let (compiler, jdk) = (self.compiler.clone(), self.snap.config.jdk_path.clone());
                    let warm_root = root.clone();
                    tokio::task::spawn_blocking(move || {
                        if let Ok(scratch) = job::cache_dir(&warm_root) {
                            job::warm_up(&compiler, jdk.as_deref(), &scratch)
                        }
                    });
                    self.open_project(root);
                }
            }
            Event::ClientReady => self.client_ready = true,
            Event::Opened { uri, text, version } => {
                self.snap.docs.insert(uri, Document::new(&text, version));
            }
            Event::Changed { uri, version, changes } => self.edited(uri, version, changes).await,
            Event::Saved { uri } => {
                if let Some(p) = uri.to_file_path() {
                    self.saved_at.insert(p.into_owned(), Instant::now());
                }
                if self.snap.config.profile_on_save {
                    self.start_profile(None, Some(uri)).await;
                }
            }
            Event::Closed { uri } => {
                self.snap.docs.remove(&uri);
            }
            Event::Configuration(value) => match Config::from_json(&value) {
                // Trust is the client's at start-up, never a setting: a new trust restarts the server.
                Ok(c) => self.snap.config = Config { trusted: self.snap.config.trusted, ..c },
                Err(e) => self.client.show_message(MessageType::ERROR, e).await,
            },
            Event::DiskChanged(paths) => {
                // What a run of the program changed itself is no change of the user's: it never
                // profiles again (a program that writes a source would profile itself forever).
                let paths: Vec<PathBuf> = paths
                    .into_iter()
                    .filter(|p| !self.program_writes.iter().any(|log| log.wrote_lately(p, PROGRAM_WRITE_ECHO)))
                    .collect();
                if let Some(pom) = paths.iter().find(|p| p.file_name().is_some_and(|n| n == "pom.xml")) {
                    // Maven's class paths may have changed: asked again before the next run.
                    job::invalidate(&self.projects);
                    self.log(format!("{} changed: Maven's class paths will be read again", pom.display())).await;
                    if let Some(root) = self.snap.root.clone().filter(|_| self.snap.config.trusted) {
                        self.open_project(root);
                    }
                }
                // Saves through the editor also reach the watcher: those are handled already.
                let fresh: Vec<PathBuf> = paths
                    .into_iter()
                    .filter(|p| self.saved_at.get(p).is_none_or(|t| t.elapsed() > Duration::from_secs(2)))
                    .collect();
                if !fresh.is_empty() && self.snap.config.profile_on_save {
                    let uri = fresh.iter().find_map(|p| to_proto::uri_of(p));
                    self.start_profile(None, uri).await;
                }
            }
            Event::Profile { main_class, test, tests_in, file } => {
                let entry = match (test, tests_in) {
                    (Some(t), _) => Some(EntryPoint::Test(t)),
                    (None, Some(dir)) => Some(EntryPoint::tests_in(&dir, self.snap.root.as_deref())),
                    (None, None) => main_class.map(EntryPoint::Main),
                };
                if !self.snap.config.trusted {
                    // Asked for by the user: said where it was asked, not only in the status bar.
                    self.client.show_message(MessageType::WARNING, RESTRICTED).await;
                }
                self.start_profile(entry, file).await
            }
            Event::ProjectOpened(Ok(line)) => self.log(line).await,
            Event::ProjectOpened(Err(message)) => {
                self.snap.status = Status::Failed(message.clone());
                self.log(message.clone()).await;
                self.client.show_message(MessageType::ERROR, message).await;
            }
            Event::Compiled { generation } => {
                if let (true, Status::Compiling { main_class, run }) =
                    (generation == self.generation, &self.snap.status)
                {
                    self.snap.status = Status::Running { main_class: main_class.clone(), run: *run };
                }
            }
            Event::CancelProgress(token) => {
                if let Some(r) = self.running.take_if(|r| r.token == token) {
                    r.cancel.store(true, Ordering::Relaxed);
                    r.cancelled.notify_one();
                    self.generation += 1;
                    self.snap.status = Status::Cancelled { main_class: r.main_class.clone() };
                    let shown = if self.snap.findings.is_empty() {
                        ""
                    } else {
                        "; the findings shown are the last complete run's"
                    };
                    self.log(format!("cancelled the profile of {}{shown}", r.main_class)).await;
                }
            }
            Event::Suppress(keys) => {
                self.suppressed.extend(keys);
                self.save_suppressions().await;
                if let Some(report) = self.snap.report.clone() {
                    self.snap.findings = self.map_findings(&report);
                    self.publish_findings(None).await;
                }
            }
            Event::JobDone { generation, plan, outcome } => self.finished(generation, *plan, outcome).await,
            Event::FixOffer { generation, key, offer } => {
                if generation == self.generation {
                    self.snap.fixes.insert(key, offer);
                }
            }
            Event::FixApplied { key } => {
                let found = self.snap.findings.iter().find(|m| m.key == key);
                if let (Some(m), Some(before)) = (found, self.snap.report.clone()) {
                    let line = match self.snap.fixes.get(&key) {
                        Some(crate::fix_check::Offer::Safe { fix, .. }) => self
                            .snap
                            .text_of(&m.uri)
                            .map(|index| {
                                let first = fix.edits.iter().map(|e| e.start).min().unwrap_or(0);
                                index.position(first.min(index.text.len()), self.snap.encoding).line
                            })
                            .unwrap_or(m.range.start.line),
                        _ => m.range.start.line,
                    };
                    self.applied = Some(Applied { finding: m.finding.clone(), before, uri: m.uri.clone(), line });
                }
            }
        }
    }

    /// Applies edits to the buffer; findings on edited lines go stale, those below move with the edit.
    async fn edited(&mut self, uri: Uri, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        let enc = self.snap.encoding;
        let Some(doc) = self.snap.docs.get_mut(&uri) else { return };
        let mut touched = false;
        for change in changes {
            match change.range {
                None => {
                    doc.replace_all(&change.text);
                    for m in self.snap.findings.iter_mut().filter(|m| m.uri == uri) {
                        m.stale = true;
                        touched = true;
                    }
                }
                Some(range) => {
                    let edit = doc.replace(range.start, range.end, &change.text, enc);
                    for m in self.snap.findings.iter_mut().filter(|m| m.uri == uri) {
                        if edit.last < m.range.start.line {
                            if edit.delta != 0 {
                                m.range.start.line = (m.range.start.line as i64 + edit.delta) as u32;
                                m.range.end.line = (m.range.end.line as i64 + edit.delta) as u32;
                                touched = true;
                            }
                        } else if edit.first <= m.range.end.line && !m.stale {
                            m.stale = true;
                            touched = true;
                        }
                    }
                }
            }
        }
        doc.version = version;
        if touched {
            self.publish_file(&uri).await;
        }
    }

    /// Works out what to run and starts it, cancelling the run in progress.
    async fn start_profile(&mut self, entry: Option<EntryPoint>, file: Option<Uri>) {
        if !self.snap.config.trusted {
            self.snap.status = Status::Restricted;
            return;
        }
        let plan = match self.plan(entry, file).await {
            Some(plan) => plan,
            None => return,
        };
        // The last run's quick-fix checks stop: this run needs the cores.
        if let Some(c) = self.fix_checks.take() {
            c.store(true, Ordering::Relaxed);
        }
        // The run in progress ends (its progress first, so that one indicator shows at a time).
        let previous = self.running.take().map(|r| {
            r.cancel.store(true, Ordering::Relaxed);
            r.cancelled.notify_one();
            r.progress_ended
        });
        self.generation += 1;
        let generation = self.generation;
        let cancel = Arc::new(AtomicBool::new(false));
        let cancelled = Arc::new(tokio::sync::Notify::new());
        let (ended_tx, progress_ended) = watch::channel(false);
        let token = ProgressToken::String(format!("bloatlens/profile/{generation}"));
        self.running = Some(Running {
            cancel: cancel.clone(),
            token: token.clone(),
            main_class: plan.main_class.clone(),
            cancelled: cancelled.clone(),
            progress_ended,
        });
        self.snap.status = Status::Compiling { main_class: plan.main_class.clone(), run: generation };
        let (client, events, progress) = (self.client.clone(), self.events.clone(), self.client_progress);
        let (compiler, projects, ahead) = (self.compiler.clone(), self.projects.clone(), self.ahead.clone());
        let writes = WriteLog::default();
        if self.program_writes.len() >= PROGRAM_WRITE_LOGS {
            self.program_writes.remove(0);
        }
        self.program_writes.push(writes.clone());
        tokio::spawn(async move {
            // Progress is set up beside the run, not before it: a slow client delays nothing.
            let title = format!("profiling {}", plan.main_class);
            let progress_client = client.clone();
            let ongoing = tokio::spawn(async move {
                if let Some(mut ended) = previous {
                    let _ = tokio::time::timeout(Duration::from_secs(5), ended.wait_for(|e| *e)).await;
                }
                if !progress {
                    return None;
                }
                // A request to the client: never awaited by a handler, and bounded in time.
                let created = tokio::time::timeout(
                    Duration::from_secs(30),
                    progress_client.create_work_done_progress(token.clone()),
                )
                .await;
                match created {
                    Ok(Ok(())) => Some(
                        progress_client
                            .progress(token, "Bloatlens")
                            .with_message(title)
                            .with_cancel_button()
                            .begin()
                            .await,
                    ),
                    _ => None,
                }
            });
            let job_plan = plan.clone();
            let compiled_events = events.clone();
            let compiled = move || {
                let _ = compiled_events.send(Event::Compiled { generation });
            };
            let mut job = tokio::task::spawn_blocking(move || {
                job::run(&job_plan, &compiler, &projects, &ahead, cancel, writes, compiled)
            });
            let finished = tokio::select! {
                outcome = &mut job => Some(outcome),
                _ = cancelled.notified() => None,
            };
            if let Ok(Some(p)) = ongoing.await {
                p.finish().await;
            }
            let _ = ended_tx.send(true);
            let outcome = match finished {
                Some(outcome) => outcome,
                None => job.await,
            }
            .unwrap_or_else(|e| Outcome::Failed(format!("the profile crashed: {e}")));
            let _ = events.send(Event::JobDone { generation, plan: Box::new(plan), outcome });
        });
    }

    /// After a run: what the quick fix applied before it saved, against the profile before the fix
    /// (the same program, with the same arguments); said in the log, on the fix's line and in
    /// the status. Any other run drops what an earlier fix saved.
    async fn measure_applied_fix(&mut self, report: &Report) {
        self.snap.fix_saving = None;
        let Some(applied) = self.applied.take() else { return };
        let (before, after) = (&applied.before.run, &report.run);
        if before.main_class != after.main_class || before.args != after.args || after.partial || before.partial {
            return;
        }
        use bloatlens_profiler::quickfix::measure::{same_finding, Saving};
        let saving = Saving::between(&applied.before, report);
        let gone = if same_finding(&applied.finding, report).is_some() { "still reported" } else { "gone" };
        let text = format!("{} since the fix; the finding is {gone}", saving.describe());
        let line = format!("quick fix measured: {text} (its finding claimed {:.1}%)", applied.finding.share * 100.0);
        self.snap.fix_saving = Some(FixSaving { uri: applied.uri, line: applied.line, text });
        // Visible to the handlers before the log line that says it.
        self.commit();
        self.log(line).await;
    }

    /// Makes and checks the quick fixes of the run's findings on a blocking thread, the largest
    /// first; each offer comes back as an event.
    fn check_fixes(&mut self, generation: u64, base: crate::fix_check::Base) {
        self.snap.fixes.clear();
        let mut seen = HashSet::new();
        let findings: Vec<(String, Arc<Finding>, PathBuf)> = self
            .snap
            .findings
            .iter()
            .filter(|m| seen.insert(m.key.clone()))
            .filter_map(|m| Some((m.key.clone(), m.finding.clone(), m.uri.to_file_path()?.into_owned())))
            .take(crate::fix_check::CHECKED_PER_RUN)
            .collect();
        if findings.is_empty() {
            return;
        }
        let cancel = Arc::new(AtomicBool::new(false));
        self.fix_checks = Some(cancel.clone());
        let events = self.events.clone();
        tokio::task::spawn_blocking(move || {
            crate::fix_check::check_all(&base, &findings, &cancel, |key, offer| {
                let _ = events.send(Event::FixOffer { generation, key: key.to_string(), offer });
            });
        });
    }

    /// Asks the client to fetch the code lenses again, now that the diagnostics they go with are out
    /// (clients that support it; others ask when they redraw).
    async fn refresh_lenses(&self) {
        if self.client_lens_refresh {
            // A request: spawned and bounded, so that the state task never waits for the client.
            let client = self.client.clone();
            tokio::spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(5), client.code_lens_refresh()).await;
            });
        }
    }

    /// Writes a line to the client's log (the Output panel): every choice and failure goes there.
    async fn log(&self, line: String) {
        self.client.log_message(MessageType::INFO, line).await;
    }

    /// The entry point: a class or test asked for (a lens, the picker: it becomes the entry
    /// point), the `mainClass` setting, the entry point chosen before (while it exists), the saved
    /// file's main, the workspace's only main. With several and none chosen, the status asks the
    /// user to pick one (said once as a message, and in the log each time).
    async fn plan(&mut self, asked: Option<EntryPoint>, file: Option<Uri>) -> Option<Plan> {
        let mut config = self.snap.config.clone();
        // The program's input file is named relative to the workspace.
        if let (Some(f), Some(root)) = (config.stdin_file.as_mut(), self.snap.root.as_ref()) {
            *f = root.join(&*f);
        }
        // A launch.json configuration (`launch:<name>`) where a class would be named, or remembered.
        let asked_key = asked.as_ref().map(EntryPoint::key);
        if let Some(name) = crate::launch::selected(asked_key.as_deref(), &config, self.entry.as_deref()) {
            let (name, remembered) = (name.to_string(), self.entry.clone());
            let mains = self.snap.workspace_mains(file.as_ref());
            return match crate::launch::plan(self.snap.root.as_deref(), &name, config, &mains, remembered.as_deref()) {
                Ok(plan) => {
                    let key = format!("{}{name}", crate::launch::PREFIX);
                    self.entry = Some(key.clone());
                    self.snap.entry_point = Some(key);
                    Some(plan)
                }
                Err(msg) => self.cannot_plan(msg).await,
            };
        }
        let explicit = asked.is_some();
        let setting = (!config.main_class.is_empty()).then(|| EntryPoint::Main(config.main_class.clone()));
        let remembered = self.entry.as_deref().map(EntryPoint::from_key);
        let (entry, path, why) = match asked.or(setting) {
            Some(EntryPoint::Test(selector)) => match self.snap.class_file(&selector) {
                Some(p) => (EntryPoint::Test(selector), p, "chosen"),
                None => return self.cannot_plan(format!("Bloatlens: no test class {selector} in the workspace")).await,
            },
            Some(EntryPoint::Tests(dir)) => match self.tests_folder(&dir) {
                Ok(p) => (EntryPoint::Tests(dir), p, "chosen"),
                Err(msg) => return self.cannot_plan(msg).await,
            },
            Some(EntryPoint::Main(class)) => {
                let why = if explicit { "chosen" } else { "the mainClass setting" };
                match self.snap.workspace_mains(file.as_ref()).into_iter().find(|(c, _)| *c == class) {
                    Some((c, p)) => (EntryPoint::Main(c), p, why),
                    // Its main hidden from the parser (a syntax error): javac says what is wrong.
                    None if self.snap.class_file(&class).is_some() => {
                        let p = self.snap.class_file(&class).unwrap_or_default();
                        (EntryPoint::Main(class), p, why)
                    }
                    None => {
                        return self
                            .cannot_plan(format!("Bloatlens: no main method found for {class} in the workspace"))
                            .await
                    }
                }
            }
            None => {
                let mains = self.snap.workspace_mains(file.as_ref());
                let remembered = match remembered {
                    Some(EntryPoint::Test(t)) => self.snap.class_file(&t).map(|p| (EntryPoint::Test(t), p)),
                    // A folder that is no longer there, or holds no tests now, is no entry point.
                    Some(EntryPoint::Tests(d)) => self.tests_folder(&d).ok().map(|p| (EntryPoint::Tests(d), p)),
                    Some(EntryPoint::Main(m)) => {
                        mains.iter().find(|(c, _)| *c == m).map(|(c, p)| (EntryPoint::Main(c.clone()), p.clone()))
                    }
                    None => None,
                };
                let saved = file.as_ref().and_then(|u| u.to_file_path()).map(|p| p.into_owned());
                let in_file = saved.as_ref().and_then(|p| mains.iter().find(|(_, mp)| mp == p).cloned());
                // A syntax error may hide a main from the parser: the entry point chosen before
                // is compiled all the same while its file is there (javac says what is wrong),
                // else, with no main at all, the saved file alone, so that its errors show.
                let hidden = match self.entry.as_deref().map(EntryPoint::from_key) {
                    Some(EntryPoint::Main(m)) if !mains.iter().any(|(c, _)| *c == m) => {
                        self.snap.class_file(&m).map(|p| (EntryPoint::Main(m), p))
                    }
                    _ => None,
                };
                match (remembered, in_file, hidden) {
                    (Some((e, p)), _, _) => (e, p, "the entry point"),
                    (None, Some((c, p)), _) => (EntryPoint::Main(c), p, "the saved file's main"),
                    (None, None, Some((e, p))) => (e, p, "the entry point"),
                    (None, None, None) if mains.len() == 1 => {
                        (EntryPoint::Main(mains[0].0.clone()), mains[0].1.clone(), "the only main")
                    }
                    (None, None, None)
                        if mains.is_empty()
                            && saved.as_ref().is_some_and(|p| p.extension().is_some_and(|e| e == "java")) =>
                    {
                        let path = saved.unwrap_or_default();
                        let root =
                            self.snap.root.clone().unwrap_or_else(|| bloatlens_profiler::javac::source_root_of(&path));
                        let name = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
                        return Some(Plan {
                            main_class: name,
                            test: None,
                            tests_in: None,
                            main_file: path,
                            root,
                            config,
                            chosen: None,
                            launch: None,
                            compile_only: Some(NO_MAIN.to_string()),
                            previous_entry: self.entry.clone(),
                        });
                    }
                    (None, None, None) => {
                        let msg = if mains.is_empty() {
                            self.snap.status = Status::Failed("no main method in the workspace".into());
                            NO_MAIN.to_string()
                        } else {
                            let names: Vec<String> = mains.iter().map(|(c, _)| c.clone()).collect();
                            self.snap.status = Status::Choose { mains: names };
                            format!(
                                "Bloatlens: {} classes have a main method; choose one with its \"Profile\" lens, the status bar or the bloatlens.mainClass setting",
                                mains.len()
                            )
                        };
                        self.outdate_findings().await;
                        self.log(msg.clone()).await;
                        if !self.said_several_mains {
                            self.said_several_mains = true;
                            self.client.show_message(MessageType::WARNING, msg).await;
                        }
                        return None;
                    }
                }
            }
        };
        // A new entry point is said in the run's log line.
        let key = entry.key();
        let chosen =
            (self.entry.as_deref() != Some(key.as_str())).then(|| format!("entry point {}: {why}", entry.name()));
        let previous_entry = self.entry.replace(key.clone());
        self.snap.entry_point = Some(key);
        let root = self.snap.root.clone().unwrap_or_else(|| bloatlens_profiler::javac::source_root_of(&path));
        let (main_class, test, tests_in) = match entry {
            EntryPoint::Main(class) => (class, None, None),
            EntryPoint::Test(selector) => (selector.clone(), Some(selector), None),
            tests @ EntryPoint::Tests(_) => (tests.name(), None, Some(path.clone())),
        };
        Some(Plan {
            main_class,
            test,
            tests_in,
            main_file: path,
            root,
            config,
            chosen,
            launch: None,
            compile_only: None,
            previous_entry,
        })
    }

    /// The folder of a `Tests` entry point (relative to the workspace, or absolute), checked: a
    /// directory, and, when the project is open already, one that is in (or holds) its test
    /// sources (else the run says so, once the project is open).
    fn tests_folder(&self, dir: &Path) -> Result<PathBuf, String> {
        let path = match (&self.snap.root, dir.is_absolute()) {
            (Some(root), false) if dir.as_os_str() == "." => root.clone(),
            (Some(root), false) => root.join(dir),
            _ => dir.to_path_buf(),
        };
        if !path.is_dir() {
            return Err(format!("Bloatlens: {} is not a folder of the workspace", dir.display()));
        }
        let root = self.snap.root.clone().unwrap_or_else(|| path.clone());
        if let Some(project) = job::opened_project(&self.projects, &root) {
            job::tests_scope(&project, &root, &path).map_err(|e| format!("Bloatlens: {e}"))?;
        }
        Ok(path)
    }

    /// Marks every finding shown as stale (the latest save did not profile: they are an earlier
    /// run's) and publishes them so, clearing javac's errors of an earlier save.
    async fn outdate_findings(&mut self) {
        for m in &mut self.snap.findings {
            m.stale = true;
        }
        self.publish_findings(None).await;
    }

    /// Says why there is nothing to run (status, log, a message).
    async fn cannot_plan(&mut self, msg: String) -> Option<Plan> {
        self.snap.status = Status::Failed(msg.clone());
        self.outdate_findings().await;
        self.log(msg.clone()).await;
        self.client.show_message(MessageType::WARNING, msg).await;
        None
    }

    /// Opens the project ahead of the first run (Maven's class paths take seconds), on a
    /// blocking thread; the log says how long it took, or the editor why it failed.
    fn open_project(&self, root: PathBuf) {
        let (projects, events, config) = (self.projects.clone(), self.events.clone(), self.snap.config.clone());
        tokio::task::spawn_blocking(move || {
            let (said, project) = match job::project(&projects, &root, &config.maven_path) {
                Ok((project, Some(d))) if project.build == bloatlens_profiler::project::Build::Maven => {
                    (Ok(job::describe_discovery(&project, &d)), Some(project))
                }
                Ok(_) => return,
                Err(e) => (Err(format!("Bloatlens: {e}")), None),
            };
            let _ = events.send(Event::ProjectOpened(said));
            // Then the tests, so that the first one run does not wait for their set-up.
            if let Some(project) = project {
                job::prepare_tests(&project, &root, &config);
            }
        });
    }

    async fn finished(&mut self, generation: u64, plan: Plan, outcome: Outcome) {
        if generation != self.generation {
            return; // cancelled or replaced: never published
        }
        self.running = None;
        match outcome {
            Outcome::Report { report, compile, run, booted_ahead, roots, discovery, notes, fix_base } => {
                if report.run.outcome == "cancelled" {
                    return;
                }
                let mut report = *report;
                // "Since the last save": how the bottlenecks' call paths changed since the last
                // complete profile of the same program.
                if let Some(previous) = &self.snap.report {
                    let comparable = previous.run.main_class == report.run.main_class
                        && previous.run.args == report.run.args
                        && !previous.run.partial
                        && !report.run.partial;
                    if comparable {
                        let _ = bloatlens_profiler::profile::compare(&mut report, previous);
                    }
                }
                let report: Arc<Report> = Arc::new(report);
                self.snap.status = Status::Done {
                    main_class: plan.main_class.clone(),
                    findings: report.findings.len(),
                    millis: (compile + run).as_millis(),
                };
                self.snap.report = Some(report.clone());
                if let Some(d) = &discovery {
                    // Maven was asked (the first run, or a pom changed since the last).
                    let line = self.projects.lock().unwrap_or_else(|e| e.into_inner()).describe(d);
                    if let Some(line) = line {
                        self.log(line).await;
                    }
                }
                self.source_roots = roots;
                self.snap.findings = self.map_findings_in(&report, &self.source_roots);
                if self.snap.config.quick_fixes {
                    self.check_fixes(generation, *fix_base);
                } else {
                    self.snap.fixes.clear();
                }
                // The profiled file gets its list even when empty (a folder of tests is no file).
                let main = plan.tests_in.is_none().then(|| to_proto::uri_of(&plan.main_file)).flatten();
                self.publish_findings(main).await;
                if report.run.partial {
                    let detail = report.run.outcome_detail.clone().unwrap_or_default();
                    let msg = match &report.run.stopped_at {
                        _ if report.run.outcome == "exception" => {
                            format!("Bloatlens: {} threw ({detail}); the findings cover what ran", plan.main_class)
                        }
                        Some(place) => format!(
                            "Bloatlens: {} was stopped ({detail}), {}; only copies and costs counted so far are shown",
                            plan.main_class,
                            place.describe()
                        ),
                        None => format!(
                            "Bloatlens: {} was stopped ({detail}); only copies and costs counted so far are shown",
                            plan.main_class
                        ),
                    };
                    self.client.show_message(MessageType::WARNING, msg).await;
                }
                let chosen = plan.chosen.as_deref().map(|c| format!("; {c}")).unwrap_or_default();
                let suppressed = report
                    .findings
                    .iter()
                    .filter(|f| f.hidden.is_none() && self.suppressed.contains(&to_proto::key(f)))
                    .count();
                self.log(format!(
                    "profiled {} in {} (javac {}, run {}{}): {}{chosen}",
                    plan.main_class,
                    human_duration(compile + run),
                    human_duration(compile),
                    human_duration(run),
                    if booted_ahead { " on a JDK booted ahead" } else { "" },
                    to_proto::findings_summary(
                        &report.findings,
                        report.run.settings.min_share,
                        &self.snap.findings,
                        suppressed
                    )
                ))
                .await;
                for note in notes {
                    self.log(format!("{}: {note}", plan.main_class)).await;
                }
                if !report.tests.is_empty() {
                    for t in &report.tests {
                        self.log(format!("test {}#{}: {}", t.class, t.name, t.summary())).await;
                    }
                    // How the tests ran: the engine added, timeouts scaled or disabled.
                    for note in &report.test_notes {
                        self.log(format!("note: {note}")).await;
                    }
                    // A failing test is worth a message: the findings are of a run that failed.
                    let failed: Vec<&TestOutcome> =
                        report.tests.iter().filter(|t| t.status == TestStatus::Failed).collect();
                    if let Some(first) = failed.first() {
                        let msg = format!(
                            "Bloatlens: {} — {} ({}: {})",
                            plan.main_class,
                            to_proto::tests_summary(&report.tests),
                            first.name,
                            first.message.as_deref().unwrap_or("failed")
                        );
                        self.client.show_message(MessageType::WARNING, msg).await;
                    }
                }
                self.measure_applied_fix(&report).await;
                self.refresh_lenses().await;
            }
            Outcome::Cancelled => {}
            Outcome::CompileErrors(diags) => {
                let errors = diags.iter().filter(|d| d.severity == bloatlens_profiler::javac::Severity::Error).count();
                self.snap.status = Status::Failed(format!("{} does not compile", plan.main_class));
                self.snap.findings.clear();
                self.publish_compile_errors(&plan, diags).await;
                self.log(format!(
                    "{} does not compile: {errors} javac errors (see the Problems panel)",
                    plan.main_class
                ))
                .await;
                self.refresh_lenses().await;
            }
            Outcome::NothingToRun(message) => {
                self.snap.status = Status::Failed("no main method in the workspace".into());
                // It compiles: javac's errors of an earlier save are gone.
                self.outdate_findings().await;
                self.log(message.clone()).await;
                if !self.said_several_mains {
                    self.said_several_mains = true;
                    self.client.show_message(MessageType::WARNING, message).await;
                }
            }
            Outcome::Failed(message) => {
                self.snap.status = Status::Failed(message.clone());
                self.outdate_findings().await;
                self.log(message.clone()).await;
                self.client.show_message(MessageType::ERROR, message).await;
            }
            Outcome::Refused(message) => {
                // Said as a plan that cannot be made is; the entry point before it stays.
                let refused = self.entry.take();
                self.entry = plan.previous_entry.filter(|p| Some(p) != refused.as_ref());
                self.snap.entry_point = self.entry.clone();
                self.cannot_plan(message).await;
            }
        }
    }

    /// Places the findings again (after a suppression), under the last run's source roots.
    fn map_findings(&self, report: &Report) -> Vec<Mapped> {
        let roots = match &self.snap.root {
            Some(root) if self.source_roots.is_empty() => vec![root.clone()],
            _ => self.source_roots.clone(),
        };
        self.map_findings_in(report, &roots)
    }

    /// Places every finding (not suppressed) and its related locations in files under the first
    /// of `roots` that has them (a report names files by package: `com/acme/Foo.java`).
    fn map_findings_in(&self, report: &Report, roots: &[PathBuf]) -> Vec<Mapped> {
        let enc = self.snap.encoding;
        // Each file's text and syntax tree, read once (None: unreadable).
        type Parsed = Option<(Arc<LineIndex>, Option<tree_sitter::Tree>)>;
        let mut texts: HashMap<PathBuf, Parsed> = HashMap::new();
        // A place: the expression the report names there (a call, a `new`), else what `kind` is about.
        let mut place = |at: &bloatlens_profiler::report::Location, kind: &str| -> Option<(Uri, Range)> {
            let (file, line) = (at.file.as_deref()?, at.line?);
            let path = roots.iter().map(|r| r.join(file)).find(|p| p.is_file())?;
            let uri = to_proto::uri_of(&path)?;
            let entry = texts.entry(path.clone()).or_insert_with(|| {
                let index = match self.snap.docs.get(&uri) {
                    Some(d) => d.index(),
                    None => Arc::new(LineIndex::new(std::fs::read_to_string(&path).ok()?)),
                };
                let tree = mapping::parse(&index.text);
                Some((index, tree))
            });
            let (index, tree) = entry.as_ref()?;
            let line = line.saturating_sub(1) as usize;
            let expression = at.expression.as_deref();
            Some((uri, mapping::finding_range(index, tree.as_ref(), line, kind, expression, enc)))
        };
        let mut out = Vec::new();
        // Hidden findings (work done once, a share under `minShare`) stay in the report only.
        for f in report.findings.iter().filter(|f| f.hidden.is_none()) {
            let key = to_proto::key(f);
            if self.suppressed.contains(&key) {
                continue;
            }
            let Some((uri, range)) = place(&f.location, f.kind().as_str()) else { continue };
            let related = f
                .related
                .iter()
                .filter_map(|r| {
                    let (uri, range) = place(&r.location, f.kind().as_str())?;
                    Some(RelatedPlace { uri, range, role: r.role.clone() })
                })
                .collect();
            out.push(Mapped { finding: Arc::new(f.clone()), key, uri, range, related, stale: false });
        }
        out
    }

    /// Publishes every file's findings; `main` (the profiled file) gets a list even when empty,
    /// so that a clean run clears what an earlier one showed there.
    async fn publish_findings(&mut self, main: Option<Uri>) {
        let mut by_uri: HashMap<Uri, Vec<Diagnostic>> = HashMap::new();
        if let Some(m) = main {
            by_uri.insert(m, Vec::new());
        }
        let mut by_file: HashMap<&Uri, Vec<&Mapped>> = HashMap::new();
        for m in &self.snap.findings {
            by_file.entry(&m.uri).or_default().push(m);
        }
        for (uri, findings) in by_file {
            by_uri.insert(uri.clone(), to_proto::diagnostics(findings));
        }
        self.publish_all(by_uri).await;
    }

    async fn publish_file(&mut self, uri: &Uri) {
        self.commit();
        let diags: Vec<Diagnostic> = to_proto::diagnostics(self.snap.findings_in(uri));
        let version = self.snap.docs.get(uri).map(|d| d.version);
        self.client.publish_diagnostics(uri.clone(), diags, version).await;
    }

    /// Publishes these files' diagnostics and clears the files that had some before.
    async fn publish_all(&mut self, by_uri: HashMap<Uri, Vec<Diagnostic>>) {
        self.commit();
        let old = std::mem::take(&mut self.published);
        for uri in old.iter().filter(|u| !by_uri.contains_key(*u)) {
            self.client.publish_diagnostics(uri.clone(), Vec::new(), None).await;
        }
        for (uri, diags) in by_uri {
            let version = self.snap.docs.get(&uri).map(|d| d.version);
            self.client.publish_diagnostics(uri.clone(), diags, version).await;
            self.published.insert(uri);
        }
    }

    async fn publish_compile_errors(&mut self, plan: &Plan, diags: Vec<bloatlens_profiler::javac::Diagnostic>) {
        let enc = self.snap.encoding;
        let mut by_uri: HashMap<Uri, Vec<Diagnostic>> = HashMap::new();
        for d in diags {
            let path = if d.file.is_absolute() { d.file.clone() } else { plan.root.join(&d.file) };
            let Some(uri) = to_proto::uri_of(&path) else { continue };
            let index = match self.snap.docs.get(&uri) {
                Some(doc) => doc.index(),
                None => Arc::new(LineIndex::new(std::fs::read_to_string(&path).unwrap_or_default())),
            };
            let line = d.line.saturating_sub(1) as usize;
            let range = match (d.column, index.line(line)) {
                (Some(col), Some(text)) => {
                    let (from, to) = caret_span(text, col);
                    let start = index.line_start(line);
                    index.range(start + from, start + to, enc)
                }
                _ => index.line_range(line, enc),
            };
            by_uri.entry(uri).or_default().push(Diagnostic {
                range,
                severity: Some(match d.severity {
                    bloatlens_profiler::javac::Severity::Error => DiagnosticSeverity::ERROR,
                    bloatlens_profiler::javac::Severity::Warning => DiagnosticSeverity::WARNING,
                }),
                code: Some(NumberOrString::String("javac".into())),
                // The editor shows `source(code)`: "bloatlens(javac)".
                source: Some("bloatlens".into()),
                message: d.message,
                ..Default::default()
            });
        }
        self.publish_all(by_uri).await;
    }

    fn suppressions_file(&self) -> Option<PathBuf> {
        self.snap.root.as_deref().map(suppressions::path_in)
    }

    /// The workspace's suppressions; a file Bloatlens will not read is said, and left alone.
    async fn load_suppressions(&self) -> HashSet<String> {
        let Some(path) = self.suppressions_file() else { return HashSet::new() };
        match suppressions::load(&path) {
            Ok(keys) => keys,
            Err(e) => {
                self.log(format!("Bloatlens: {e}")).await;
                self.client.show_message(MessageType::WARNING, format!("Bloatlens: {e}")).await;
                HashSet::new()
            }
        }
    }

    /// Saves the suppressions, merged with the file's (another server's among them).
    async fn save_suppressions(&mut self) {
        let Some(path) = self.suppressions_file() else { return };
        match suppressions::save(&path, &self.suppressed) {
            Ok(all) => self.suppressed = all,
            Err(e) => {
                let msg = format!("Bloatlens: {e} (the suppression holds until the server stops)");
                self.log(msg.clone()).await;
                self.client.show_message(MessageType::ERROR, msg).await;
            }
        }
    }

    /// Watches the workspace for Java files changed outside the editor; events are debounced
    /// (300 ms of quiet) and deduplicated before they reach the state task.
    fn watch(&self) -> Option<notify::RecommendedWatcher> {
        use notify::Watcher;
        let root = self.snap.root.clone()?;
        let (raw_tx, mut raw_rx) = mpsc::unbounded_channel::<PathBuf>();
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            if let Ok(ev) = res {
                if matches!(
                    ev.kind,
                    notify::EventKind::Modify(_) | notify::EventKind::Create(_) | notify::EventKind::Remove(_)
                ) {
                    let relevant = |p: &PathBuf| {
                        p.extension().is_some_and(|e| e == "java") || p.file_name().is_some_and(|n| n == "pom.xml")
                    };
                    for p in ev.paths.into_iter().filter(relevant) {
                        let _ = raw_tx.send(p);
                    }
                }
            }
        })
        .ok()?;
        watcher.watch(&root, notify::RecursiveMode::Recursive).ok()?;
        let events = self.events.clone();
        tokio::spawn(async move {
            while let Some(first) = raw_rx.recv().await {
                let mut batch: HashSet<PathBuf> = HashSet::from([first]);
                while let Ok(Some(p)) = tokio::time::timeout(Duration::from_millis(300), raw_rx.recv()).await {
                    batch.insert(p);
                }
                if events.send(Event::DiskChanged(batch.into_iter().collect())).is_err() {
                    break;
                }
            }
        });
        Some(watcher)
    }
}

/// The bytes of `line` javac's caret at 1-based `column` points at: the word it starts, or one
/// character. javac counts characters (a tab as one); a caret past the end of the line (a `;`
/// missing at its end) marks the line's last character, where the `;` belongs.
fn caret_span(line: &str, column: u32) -> (usize, usize) {
    let line = line.trim_end_matches(['\n', '\r']);
    match line.char_indices().nth(column.saturating_sub(1) as usize) {
        Some((byte, _)) => {
            let word = line[byte..].find(|c: char| !c.is_alphanumeric() && c != '_').unwrap_or(line.len() - byte);
            let one = line[byte..].chars().next().map_or(0, char::len_utf8);
            (byte, byte + word.max(one))
        }
        None => {
            let end = line.trim_end().len();
            let last = line[..end].chars().next_back().map_or(0, char::len_utf8);
            (end - last, end)
        }
    }
}

/// How long after a run changed a file the watcher's report of it is taken as that change's echo
/// (the watcher waits for 300 ms of quiet before it reports).
const PROGRAM_WRITE_ECHO: Duration = Duration::from_secs(3);

/// Runs whose changes are remembered (the current one and those it replaced).
const PROGRAM_WRITE_LOGS: usize = 8;

/// Java files under `dir`, skipping hidden directories and build outputs.
fn collect_java_files(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if depth > 12 || out.len() > 5000 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if !name.starts_with('.') && !matches!(name, "target" | "build" | "out" | "node_modules") {
                collect_java_files(&p, out, depth + 1);
            }
        } else if name.ends_with(".java") {
            out.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{caret_span, EntryPoint};
    use std::path::{Path, PathBuf};

    #[test]
    fn an_entry_point_round_trips_through_its_key() {
        let root = Path::new("/ws");
        let folder = EntryPoint::tests_in(Path::new("/ws/core/src/test/java/com/acme"), Some(root));
        assert_eq!(folder, EntryPoint::Tests(PathBuf::from("core/src/test/java/com/acme")));
        assert_eq!(folder.key(), "tests:core/src/test/java/com/acme");
        assert_eq!(folder.name(), "tests in core/src/test/java/com/acme");
        let whole = EntryPoint::tests_in(root, Some(root));
        assert_eq!((whole.key().as_str(), whole.name().as_str()), ("tests:.", "tests in the workspace"));
        // Outside the workspace: absolute.
        let outside = EntryPoint::tests_in(Path::new("/elsewhere/tests"), Some(root));
        assert_eq!(outside.key(), "tests:/elsewhere/tests");
        for e in [
            folder,
            whole,
            outside,
            EntryPoint::Test("com.acme.FooTest#bar".into()),
            EntryPoint::Main("com.acme.Main".into()),
        ] {
            assert_eq!(EntryPoint::from_key(&e.key()), e);
        }
        // `tests:` with no folder is no folder (a main class cannot be named so either).
        assert_eq!(EntryPoint::from_key("tests:"), EntryPoint::Main("tests:".into()));
    }

    #[test]
    fn a_caret_marks_its_word_or_the_end_of_the_line() {
        let line = "        int x = count(a)";
        // `count` at column 17 (1-based).
        assert_eq!(&line[caret_span(line, 17).0..caret_span(line, 17).1], "count");
        // A `(` is one character.
        let (a, b) = caret_span(line, 22);
        assert_eq!(&line[a..b], "(");
        // A `;` missing at the end of the line: javac's caret is one past it.
        let (a, b) = caret_span(line, line.len() as u32 + 1);
        assert_eq!(&line[a..b], ")");
        let (a, b) = caret_span("x = 5   \n", 30);
        assert_eq!(&"x = 5   "[a..b], "5");
        // Characters, not bytes: `é` is one column.
        let line = "String é = \"x\"";
        let (a, b) = caret_span(line, 10);
        assert_eq!(&line[a..b], "=");
        assert_eq!(caret_span("", 3), (0, 0));
    }
}

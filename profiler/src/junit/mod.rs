//! JUnit tests as entry points. A test (a class, or `Class#method`) runs under the VM like a
//! main: the JUnit Platform launcher from the project's own test class path (JUnit 5 directly,
//! JUnit 4 through the vintage engine) is driven by a small runner of ours, compiled once with the
//! user's `javac`, which writes each test's outcome to a file. The runner and the framework are
//! library code (jars and a class outside the source roots): their discovery, reflection and
//! reporting are never the user's findings; the test's code and the code under test are.

pub mod attribution;

use crate::javac;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The runner's class (in the unnamed package, so that it cannot clash with the user's).
pub const RUNNER_CLASS: &str = "BloatlensJUnitRunner";
const RUNNER_SOURCE: &str = include_str!("BloatlensJUnitRunner.java");
/// The Jupiter extension that enforces scaled timeouts (compiled only against a JUnit Jupiter API).
const TIMEOUTS_CLASS: &str = "BloatlensTimeouts";
const TIMEOUTS_SOURCE: &str = include_str!("BloatlensTimeouts.java");

/// What a JUnit 5 `@Timeout` (and the `junit.jupiter.execution.timeout.*` defaults) becomes in a
/// run under the VM, which is slower than `java`: the timeouts were written for HotSpot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestTimeouts {
    /// Multiplied by the run's factor ([`PROFILE_TIMEOUT_FACTOR`], [`RUN_TIMEOUT_FACTOR`]).
    #[default]
    Scale,
    /// Not applied (`junit.jupiter.execution.timeout.mode=disabled`).
    Disable,
    /// As written.
    Keep,
}

impl TestTimeouts {
    pub fn word(self) -> &'static str {
        match self {
            TestTimeouts::Scale => "scale",
            TestTimeouts::Disable => "disable",
            TestTimeouts::Keep => "keep",
        }
    }
}

impl std::str::FromStr for TestTimeouts {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "scale" => Ok(TestTimeouts::Scale),
            "disable" => Ok(TestTimeouts::Disable),
            "keep" => Ok(TestTimeouts::Keep),
            other => Err(format!("`{other}` is not a timeout policy: scale, disable or keep")),
        }
    }
}

/// The factor timeouts are scaled by under the analyses: the median slowdown of a profiled run
/// against `java` on the benchmark suite (26–108×, median 47×; docs/benchmarks.md).
pub const PROFILE_TIMEOUT_FACTOR: u32 = 50;
/// The factor under `bloatlens run` (no analyses): the worst slowdown of the VM against `java`
/// on the benchmark suite (5.6–15.8×).
pub const RUN_TIMEOUT_FACTOR: u32 = 16;

/// How a test launch treats timeouts: the policy, and the factor it scales by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub policy: TestTimeouts,
    pub factor: u32,
    /// Said in the notes: "for the profiled run" or "for the run under the VM".
    pub profiled: bool,
}

impl Timeouts {
    pub fn profiled(policy: TestTimeouts) -> Timeouts {
        Timeouts { policy, factor: PROFILE_TIMEOUT_FACTOR, profiled: true }
    }

    pub fn plain(policy: TestTimeouts) -> Timeouts {
        Timeouts { policy, factor: RUN_TIMEOUT_FACTOR, profiled: false }
    }

    /// The runner's argument: `scale:50`, `disable`, `keep`.
    fn arg(self) -> String {
        match self.policy {
            TestTimeouts::Scale => format!("scale:{}", self.factor),
            other => other.word().to_string(),
        }
    }

    fn run_name(self) -> &'static str {
        if self.profiled {
            "the profiled run"
        } else {
            "the run under the VM"
        }
    }
}

/// How one test ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestOutcome {
    /// The test's class and method (the method empty for a class-level failure).
    pub class: String,
    pub method: String,
    /// What JUnit calls it (`adds()`, a `@DisplayName`).
    pub name: String,
    pub status: TestStatus,
    /// The assertion's message (failed, aborted) or the reason (skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestStatus {
    Passed,
    Failed,
    /// An assumption did not hold.
    Aborted,
    Skipped,
}

impl TestStatus {
    pub fn word(self) -> &'static str {
        match self {
            TestStatus::Passed => "passed",
            TestStatus::Failed => "failed",
            TestStatus::Aborted => "aborted",
            TestStatus::Skipped => "skipped",
        }
    }
}

impl TestOutcome {
    /// `passed`, `failed: expected <5> but was <4>`, `skipped: not yet`.
    pub fn summary(&self) -> String {
        match &self.message {
            Some(m) if !m.is_empty() => format!("{}: {m}", self.status.word()),
            _ => self.status.word().to_string(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum JUnitError {
    #[error("the JUnit Platform ({0}) is neither on the test class path nor in a Maven repository nor in /usr/share/java: add junit-jupiter (or junit) as a test dependency")]
    NoPlatform(String),
    /// The tests bring part of JUnit at a version whose other parts are nowhere to be found
    /// (another version would fail at discovery with a `NoSuchMethodError`).
    #[error("{name} {version} ({why}) is in neither {} nor /usr/share/java: Maven's Surefire downloads it on the first `mvn test`; or declare {name} {version} as a test dependency", if repositories.is_empty() { "a Maven repository".to_string() } else { repositories.join(", ") })]
    MissingVersion { name: String, version: String, why: String, repositories: Vec<String> },
    #[error("compiling the JUnit runner: {0}")]
    Runner(String),
    #[error("no test matches {selector}{}: name a test class of the project's test sources (`com.acme.FooTest`) or one of its test methods (`com.acme.FooTest#bar`; with its parameter types when it has some: `#bar(java.nio.file.Path)`)", why.as_deref().map(|r| format!(" ({r})")).unwrap_or_default())]
    NoTests { selector: String, why: Option<String> },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("`{0}` is not a test: give a class (`com.acme.FooTest`) or a method (`com.acme.FooTest#bar`)")]
    BadSelector(String),
}

/// Checks a selector: `Class` or `Class#method` (a method's parameter list is JUnit's to read).
pub fn check_selector(selector: &str) -> Result<(), JUnitError> {
    let class = selector.split('#').next().unwrap_or("");
    let ok = !class.is_empty()
        && class.split('.').all(|part| {
            let mut chars = part.chars();
            chars.next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
                && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
        && selector.matches('#').count() <= 1
        && !selector.ends_with('#');
    if ok {
        Ok(())
    } else {
        Err(JUnitError::BadSelector(selector.to_string()))
    }
}

/// An artifact the launcher needs: Maven coordinates (group as a path) and Debian's jar name.
struct Artifact {
    group: &'static str,
    name: &'static str,
}

const LAUNCHER: Artifact = Artifact { group: "org/junit/platform", name: "junit-platform-launcher" };
const ENGINE: Artifact = Artifact { group: "org/junit/platform", name: "junit-platform-engine" };
const COMMONS: Artifact = Artifact { group: "org/junit/platform", name: "junit-platform-commons" };
const OPENTEST4J: Artifact = Artifact { group: "org/opentest4j", name: "opentest4j" };
const APIGUARDIAN: Artifact = Artifact { group: "org/apiguardian", name: "apiguardian-api" };
const JUPITER_API: Artifact = Artifact { group: "org/junit/jupiter", name: "junit-jupiter-api" };
const JUPITER_ENGINE: Artifact = Artifact { group: "org/junit/jupiter", name: "junit-jupiter-engine" };
const VINTAGE_ENGINE: Artifact = Artifact { group: "org/junit/vintage", name: "junit-vintage-engine" };

/// The version of `name` on a class path: `Some("1.2.3")` for `name-1.2.3.jar`, `Some("")` when
/// it is there without a usable version (Debian's `name.jar`, Debian's repository's `name-debian.jar`).
fn version_on(class_path: &[PathBuf], name: &str) -> Option<String> {
    class_path.iter().find_map(|p| version_in_name(p, name))
}

/// `Some("1.2.3")` for `name-1.2.3.jar`, `Some("")` for `name.jar` or `name-debian.jar`.
fn version_in_name(p: &Path, name: &str) -> Option<String> {
    let file = p.file_name()?.to_str()?.strip_suffix(".jar")?;
    if file == name {
        return Some(String::new());
    }
    let v = file.strip_prefix(name)?.strip_prefix('-')?;
    if v == "debian" {
        return Some(String::new());
    }
    v.starts_with(|c: char| c.is_ascii_digit()).then(|| v.to_string())
}

fn has_junit4(class_path: &[PathBuf]) -> bool {
    class_path.iter().any(|p| {
        let file = p.file_name().and_then(|f| f.to_str()).unwrap_or("");
        file == "junit4.jar" || file == "junit.jar" || (file.starts_with("junit-4.") && file.ends_with(".jar"))
    })
}

/// Numeric parts first, so that `1.10.0` > `1.9.1` and `debian` sorts below every number.
fn version_key(v: &str) -> Vec<u64> {
    let parts: Option<Vec<u64>> = v.split(['.', '-']).map(|n| n.parse().ok()).collect();
    parts.unwrap_or_default()
}

/// The Platform version released with a Jupiter or Vintage version: 5.M.p goes with 1.M.p (from
/// JUnit 6 on, they share one version).
fn platform_for(jupiter: &str) -> Option<String> {
    match jupiter.split_once('.') {
        Some(("5", rest)) => Some(format!("1.{rest}")),
        Some((major, _)) if major.parse::<u32>().is_ok_and(|m| m >= 6) => Some(jupiter.to_string()),
        _ => None,
    }
}

/// The Jupiter (and Vintage) version released with a Platform version.
fn jupiter_for(platform: &str) -> Option<String> {
    match platform.split_once('.') {
        Some(("1", rest)) => Some(format!("5.{rest}")),
        Some((major, _)) if major.parse::<u32>().is_ok_and(|m| m >= 6) => Some(platform.to_string()),
        _ => None,
    }
}

/// The newest version of `artifact` the first repository that has one holds (at most `at_most`).
fn newest(artifact: &Artifact, repositories: &[PathBuf], at_most: Option<&str>) -> Option<String> {
    let limit = at_most.map(version_key);
    repositories.iter().find_map(|repo| {
        let dir = repo.join(artifact.group).join(artifact.name);
        std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|v| !version_key(v).is_empty() && dir.join(v).join(format!("{}-{v}.jar", artifact.name)).is_file())
            .filter(|v| limit.as_ref().is_none_or(|l| version_key(v) <= *l))
            .max_by_key(|v| version_key(v))
    })
}

/// Which version of an artifact will do.
#[derive(Debug, Clone)]
enum Wanted {
    /// This one and no other (the tests bring part of the same release).
    Exactly(String),
    /// This one, else the newest below it, else any: a version derived from another part's.
    Preferably(String),
    Any,
    /// Debian's unversioned jar, else the newest: the tests bring Debian's unversioned JUnit.
    Debian,
}

/// Where `artifact` is: the version wanted in a Maven repository, else Debian's versioned jar in
/// `debian`; for one only preferred or any, the newest a repository holds (below the preferred
/// one, if it can), else Debian's jar.
fn locate(artifact: &Artifact, wanted: &Wanted, repositories: &[PathBuf], debian: &Path) -> Option<PathBuf> {
    let at = |v: &str| {
        let in_repository = repositories.iter().find_map(|repo| {
            let dir = repo.join(artifact.group).join(artifact.name).join(v);
            let jar = dir.join(format!("{}-{v}.jar", artifact.name));
            jar.is_file().then_some(jar)
        });
        in_repository.or_else(|| {
            let jar = debian.join(format!("{}-{v}.jar", artifact.name));
            jar.is_file().then_some(jar)
        })
    };
    let unversioned = || {
        let jar = debian.join(format!("{}.jar", artifact.name));
        jar.is_file().then_some(jar)
    };
    let newest_below = |limit: Option<&str>| newest(artifact, repositories, limit).and_then(|v| at(&v));
    match wanted {
        Wanted::Exactly(v) => at(v),
        Wanted::Preferably(v) => {
            at(v).or_else(|| newest_below(Some(v))).or_else(unversioned).or_else(|| newest_below(None))
        }
        Wanted::Any => newest_below(None).or_else(unversioned),
        Wanted::Debian => unversioned().or_else(|| newest_below(None)),
    }
}

/// What the launcher needs beyond the test class path, and what was added to run the tests.
#[derive(Debug, Default)]
pub struct Completion {
    pub jars: Vec<PathBuf>,
    /// The engines the tests did not declare (a project declares the API; the engine is the build
    /// tool's business), said to the user.
    pub engines: Vec<String>,
}

/// What the launcher needs beyond the test class path: the platform (at the version the tests
/// bring, when they bring part of it), its two small dependencies, and the engine of each JUnit
/// the tests use at the version of their API, as Surefire adds it: Jupiter's for
/// `junit-jupiter-api`, Vintage's for JUnit 4.
pub fn launcher_additions(test_class_path: &[PathBuf], repositories: &[PathBuf]) -> Result<Vec<PathBuf>, JUnitError> {
    complete(test_class_path, repositories, Path::new(DEBIAN_JARS)).map(|c| c.jars)
}

/// Debian's unversioned (and versioned) jars.
const DEBIAN_JARS: &str = "/usr/share/java";

fn complete(test_class_path: &[PathBuf], repositories: &[PathBuf], debian: &Path) -> Result<Completion, JUnitError> {
    let known = |v: Option<String>| v.filter(|v| !v.is_empty());
    let jupiter = [&JUPITER_API, &JUPITER_ENGINE].iter().find_map(|a| version_on(test_class_path, a.name));
    let junit4 = has_junit4(test_class_path);
    let platform_on = known([&COMMONS, &ENGINE, &LAUNCHER].iter().find_map(|a| version_on(test_class_path, a.name)));
    // JUnit 4 alone: the newest Vintage engine a repository holds, and the platform released with it.
    let junit4_alone = junit4 && jupiter.is_none() && platform_on.is_none();
    let lone_vintage = match junit4_alone {
        true => newest(&VINTAGE_ENGINE, repositories, None),
        false => None,
    };
    // Debian's unversioned jars (`junit-platform-commons.jar`) go with Debian's others: a newer
    // launcher from a Maven repository fails against them with a `NoSuchMethodError`.
    let debian_platform = [&COMMONS, &ENGINE, &LAUNCHER, &JUPITER_API]
        .iter()
        .any(|a| version_on(test_class_path, a.name).is_some_and(|v| v.is_empty()));
    let platform = match (&platform_on, known(jupiter.clone()).or(lone_vintage.clone())) {
        (Some(v), _) => Wanted::Exactly(v.clone()),
        (None, Some(j)) => platform_for(&j).map_or(Wanted::Any, Wanted::Preferably),
        (None, None) if debian_platform => Wanted::Debian,
        (None, None) => Wanted::Any,
    };
    let vintage = match known(jupiter.clone()).or(lone_vintage).or_else(|| platform_on.as_deref().and_then(jupiter_for))
    {
        Some(v) => Wanted::Preferably(v),
        None => Wanted::Any,
    };
    let platform_why = match known(jupiter.clone()) {
        Some(v) => format!("the platform of the tests' junit-jupiter-api {v}"),
        None => "the platform the tests bring".to_string(),
    };
    let mut needed: Vec<(&Artifact, Wanted, String)> = vec![
        (&LAUNCHER, platform.clone(), platform_why.clone()),
        (&ENGINE, platform.clone(), platform_why.clone()),
        (&COMMONS, platform, platform_why),
        (&OPENTEST4J, Wanted::Any, String::new()),
        (&APIGUARDIAN, Wanted::Any, String::new()),
    ];
    if jupiter.is_some() {
        let unversioned = if debian_platform { Wanted::Debian } else { Wanted::Any };
        let wanted = known(jupiter.clone()).map_or(unversioned, Wanted::Exactly);
        let why = format!("the version of the tests' junit-jupiter-api {}", jupiter.clone().unwrap_or_default());
        needed.push((&JUPITER_ENGINE, wanted, why));
    }
    // Surefire runs JUnit 4 tests through its JUnit 4 provider when nothing of the Platform is on
    // the test class path; once the Platform is there (Jupiter's API, or `junit:junit` brought in
    // by another library, as Testcontainers does), only through a Vintage engine the project
    // declares: it adds none.
    let mut out = Completion::default();
    if junit4_alone {
        needed.push((&VINTAGE_ENGINE, vintage, String::new()));
    } else if junit4 && version_on(test_class_path, VINTAGE_ENGINE.name).is_none() {
        out.engines.push(
            "junit:junit is on the test class path beside the JUnit Platform, without junit-vintage-engine: \
             JUnit 4 tests do not run (nor do they under Maven's Surefire)"
                .to_string(),
        );
    }
    for (artifact, wanted, why) in needed {
        if version_on(test_class_path, artifact.name).is_some() {
            continue;
        }
        let Some(jar) = locate(artifact, &wanted, repositories, debian) else {
            return Err(match wanted {
                Wanted::Exactly(version) => JUnitError::MissingVersion {
                    name: artifact.name.to_string(),
                    version,
                    why,
                    repositories: repositories.iter().map(|r| r.display().to_string()).collect(),
                },
                _ => JUnitError::NoPlatform(artifact.name.to_string()),
            });
        };
        let version = version_on(std::slice::from_ref(&jar), artifact.name).unwrap_or_default();
        let engine = format!("{} {version}", artifact.name).trim_end().to_string();
        if artifact.name == JUPITER_ENGINE.name {
            out.engines.push(format!("the tests declare no JUnit engine: {engine} added, as Maven's Surefire adds it"));
        } else if artifact.name == VINTAGE_ENGINE.name {
            out.engines.push(format!(
                "the JUnit 4 tests run through {engine} (Maven's Surefire runs them with its JUnit 4 provider)"
            ));
        }
        out.jars.push(jar);
    }
    Ok(out)
}

/// The runner compiled against the launcher on `class_path`, once per launcher and JDK (kept in `cache`);
/// with a JUnit Jupiter API on it, the timeouts' extension too, registered as a service.
pub fn runner(javac_path: &Path, cache: &Path, class_path: &[PathBuf]) -> Result<PathBuf, JUnitError> {
    use sha2::{Digest, Sha256};
    let cp = join(class_path);
    let jupiter = version_on(class_path, JUPITER_API.name).is_some();
    // Per JDK too: a runner compiled by a newer javac does not load on an older JDK.
    let digest =
        Sha256::digest(format!("{RUNNER_SOURCE}\n{TIMEOUTS_SOURCE}\n{jupiter}\n{cp}\n{}", javac_path.display()));
    let dir = cache.join(&format!("junit-runner-{digest:x}")[..28]);
    let class = dir.join(format!("{RUNNER_CLASS}.class"));
    if class.is_file() {
        return Ok(dir);
    }
    let src = dir.join("src");
    let write = |name: &str, text: &str| -> Result<PathBuf, JUnitError> {
        let file = src.join(name);
        std::fs::create_dir_all(file.parent().unwrap_or(&src))
            .and_then(|_| std::fs::write(&file, text))
            .map_err(|e| JUnitError::Runner(e.to_string()))?;
        Ok(file)
    };
    let mut sources = vec![write(&format!("{RUNNER_CLASS}.java"), RUNNER_SOURCE)?];
    if jupiter {
        sources.push(write(&format!("{TIMEOUTS_CLASS}.java"), TIMEOUTS_SOURCE)?);
    }
    let job = javac::Job { sources: &sources, source_path: &[], class_path: &cp, out: &dir, parameters: false };
    javac::compile(javac_path, &job).map_err(|e| match e {
        javac::CompileError::Failed { output, .. } => JUnitError::Runner(output),
        other => JUnitError::Runner(other.to_string()),
    })?;
    if jupiter {
        // Found by Jupiter's extension auto-detection, which the runner turns on for it alone.
        let services = dir.join("META-INF/services");
        std::fs::create_dir_all(&services)
            .and_then(|_| std::fs::write(services.join("org.junit.jupiter.api.extension.Extension"), TIMEOUTS_CLASS))
            .map_err(|e| JUnitError::Runner(e.to_string()))?;
    }
    Ok(dir)
}

/// The runner for tests with these libraries (compiled into `cache` the first time: [`runner`]), and
/// what the launcher needs beyond them ([`launcher_additions`]).
pub fn prepare_runner(
    javac_path: &Path,
    cache: &Path,
    test_libraries: &[PathBuf],
    repositories: &[PathBuf],
) -> Result<(PathBuf, Completion), JUnitError> {
    let completion = complete(test_libraries, repositories, Path::new(DEBIAN_JARS))?;
    let against: Vec<PathBuf> = test_libraries.iter().chain(&completion.jars).cloned().collect();
    Ok((runner(javac_path, cache, &against)?, completion))
}

/// Which tests a launch runs: one class or method (`--test`), or the classes of a whole suite
/// (`--tests`: a module's, or the reactor's), with the JUnit 5 tags (JUnit 4 categories) Surefire's
/// `groups` and `excludedGroups` keep and leave out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// What the report calls the entry point (`com.acme.FooTest`, `the tests of com.acme:core`).
    pub label: String,
    pub selectors: Vec<String>,
    pub include_tags: Option<String>,
    pub exclude_tags: Option<String>,
}

impl Selection {
    pub fn one(selector: &str) -> Selection {
        Selection { label: selector.to_string(), selectors: vec![selector.to_string()], ..Selection::default() }
    }

    /// The runner's arguments after the outcomes file and the timeouts: tag filters, then selectors.
    fn args(&self) -> Vec<String> {
        let tags = [("tags+:", &self.include_tags), ("tags-:", &self.exclude_tags)];
        let filters = tags.into_iter().filter_map(|(prefix, t)| t.as_ref().map(|t| format!("{prefix}{t}")));
        filters.chain(self.selectors.iter().cloned()).collect()
    }
}

/// The runner's argument that enables assertions in the classes the system class loader loads.
const ASSERTIONS_ARG: &str = "assertions:on";

/// A test made ready to run as a program: the runner is its main class, these class path
/// entries go after the project's classes and libraries, and these are its arguments.
pub struct TestLaunch {
    pub selector: String,
    pub class_path: Vec<PathBuf>,
    pub args: Vec<String>,
    /// What Bloatlens added that the project did not declare (the engines), for the user.
    pub notes: Vec<String>,
    timeouts: Timeouts,
    /// Where the runner writes the outcomes (removed with the launch).
    outcomes: tempfile::TempPath,
}

/// How the tests ended, and what the user should know about how they ran (their timeouts).
#[derive(Debug, Default)]
pub struct Outcomes {
    pub tests: Vec<TestOutcome>,
    pub notes: Vec<String>,
}

impl TestLaunch {
    /// Prepares `selector` against the tests' libraries (`test_libraries`: the project's test
    /// class path, without its own classes), compiling the runner into `cache` the first time.
    pub fn prepare(
        selector: &str,
        javac_path: &Path,
        cache: &Path,
        test_libraries: &[PathBuf],
        repositories: &[PathBuf],
        timeouts: Timeouts,
    ) -> Result<TestLaunch, JUnitError> {
        TestLaunch::prepare_selection(
            &Selection::one(selector),
            javac_path,
            cache,
            test_libraries,
            repositories,
            timeouts,
        )
    }

    /// Has the runner set the system class loader's default assertion status before any test
    /// class loads, as Surefire's booter does for `enableAssertions` (IDEs run tests with `-ea`).
    pub fn enable_assertions(&mut self) {
        if !self.args.iter().any(|a| a == ASSERTIONS_ARG) {
            self.args.insert(2, ASSERTIONS_ARG.to_string());
        }
    }

    /// Prepares the tests `selection` names, as [`TestLaunch::prepare`] does one.
    pub fn prepare_selection(
        selection: &Selection,
        javac_path: &Path,
        cache: &Path,
        test_libraries: &[PathBuf],
        repositories: &[PathBuf],
        timeouts: Timeouts,
    ) -> Result<TestLaunch, JUnitError> {
        for selector in &selection.selectors {
            check_selector(selector)?;
        }
        let (runner_dir, completion) = prepare_runner(javac_path, cache, test_libraries, repositories)?;
        let additions = completion.jars;
        std::fs::create_dir_all(cache)?;
        let outcomes = tempfile::Builder::new().prefix("test-outcomes-").tempfile_in(cache)?.into_temp_path();
        let mut args = vec![outcomes.display().to_string(), timeouts.arg()];
        args.extend(selection.args());
        let class_path = std::iter::once(runner_dir).chain(additions).collect();
        let notes = completion.engines;
        // Every test method runs through `Method.invoke`, whose accessors the VM keeps in bytecode
        // (see `vm::boot` and `natives::accessors`): a test may wait for its threads.
        Ok(TestLaunch { selector: selection.label.clone(), class_path, args, notes, timeouts, outcomes })
    }

    /// The file the runner writes the outcomes to (a sandboxed run must be let write it).
    pub fn outcomes_path(&self) -> &Path {
        &self.outcomes
    }

    /// How the tests ended. `ended_by_itself`: the run was not stopped (a budget, a cancel, a
    /// crash); such a run with no test run means the selector matched none.
    pub fn outcomes(&self, ended_by_itself: bool) -> Result<Outcomes, JUnitError> {
        let text = std::fs::read_to_string(&self.outcomes).unwrap_or_default();
        let tests: Vec<TestOutcome> = text.lines().filter_map(parse_outcome).collect();
        if tests.is_empty() && ended_by_itself {
            let why = text.lines().find_map(|l| l.strip_prefix("ERROR\t\t\t\t")).map(unescape);
            return Err(JUnitError::NoTests { selector: self.selector.clone(), why });
        }
        let timed = text.lines().find_map(|l| l.strip_prefix("TIMEOUTS\t")?.parse::<u64>().ok());
        let notes = self.notes.iter().cloned().chain(timeout_notes(self.timeouts, timed, &tests)).collect();
        Ok(Outcomes { notes, tests })
    }

    /// Tells the report what ran (the test, not the runner) and how each test ended; a run that
    /// ended by itself with no test run means the selector matched none.
    pub fn finish(&self, report: &mut crate::report::Report) -> Result<(), JUnitError> {
        let outcomes = self.outcomes(report.run.outcome == "exited")?;
        report.tests = outcomes.tests;
        report.test_notes = outcomes.notes;
        if let Some(tree) = &report.call_tree {
            attribution::attribute(&mut report.findings, tree, &report.tests);
        }
        report.run.main_class = self.selector.clone();
        report.run.args.clear();
        Ok(())
    }
}

/// What to say about timeouts: how they were treated (when JUnit 5 timeouts applied, or were
/// disabled), and, for a test that failed on one, why it may pass under `java`.
fn timeout_notes(timeouts: Timeouts, timed: Option<u64>, tests: &[TestOutcome]) -> Vec<String> {
    let run = timeouts.run_name();
    let mut notes = Vec::new();
    match (timeouts.policy, timed) {
        (TestTimeouts::Scale, Some(n)) if n > 0 => notes.push(format!(
            "timeouts scaled {}× for {run} ({n} timed {}; --test-timeouts keep leaves them as written)",
            timeouts.factor,
            if n == 1 { "invocation" } else { "invocations" }
        )),
        (TestTimeouts::Disable, _) => notes.push(format!("timeouts disabled for {run} (--test-timeouts disable)")),
        _ => {}
    }
    let failed = |needle: &str| {
        tests.iter().any(|t| t.status == TestStatus::Failed && t.message.as_deref().is_some_and(|m| m.contains(needle)))
    };
    let slower = if timeouts.profiled { "10–90×" } else { "5–16×" };
    if failed("execution exceeded timeout of") || failed("execution timed out after") {
        notes.push(format!(
            "assertTimeout and assertTimeoutPreemptively measure this VM, {slower} slower than java for {run}, \
             and are never scaled: a test that fails on one may pass under java"
        ));
    }
    if failed(" timed out after ") && timeouts.policy == TestTimeouts::Keep {
        notes.push(format!(
            "JUnit 5 timeouts kept as written (--test-timeouts keep) though this VM is {slower} slower than java for {run}: \
             --test-timeouts scale multiplies it by {}",
            timeouts.factor
        ));
    }
    notes
}

/// The outcomes the runner wrote (none when it did not get that far).
pub fn read_outcomes(path: &Path) -> Vec<TestOutcome> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter_map(parse_outcome).collect()
}

fn parse_outcome(line: &str) -> Option<TestOutcome> {
    let mut fields = line.split('\t');
    let status = match fields.next()? {
        "PASSED" => TestStatus::Passed,
        "FAILED" => TestStatus::Failed,
        "ABORTED" => TestStatus::Aborted,
        "SKIPPED" => TestStatus::Skipped,
        _ => return None,
    };
    let (class, method, name) = (fields.next()?, fields.next()?, unescape(fields.next()?));
    let message = unescape(fields.next().unwrap_or(""));
    Some(TestOutcome {
        class: class.to_string(),
        method: method.to_string(),
        name,
        status,
        message: (!message.is_empty()).then_some(message),
    })
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

pub fn join(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_lines_are_read_with_their_messages() {
        let text = "PASSED\tdemo.CalcTest\tadds\tadds()\t\nFAILED\tdemo.CalcTest\tfails\tfails()\torg.opentest4j.AssertionFailedError: math ==> expected: <5> but was: <4>\\nsecond line\nSKIPPED\tdemo.CalcTest\tskipped\tskipped()\tnot yet\nnonsense\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("outcomes");
        std::fs::write(&path, text).unwrap();
        let o = read_outcomes(&path);
        assert_eq!(o.len(), 3);
        assert_eq!(o[0].status, TestStatus::Passed);
        assert_eq!(o[0].summary(), "passed");
        assert_eq!(o[1].method, "fails");
        assert_eq!(
            o[1].message.as_deref(),
            Some("org.opentest4j.AssertionFailedError: math ==> expected: <5> but was: <4>\nsecond line")
        );
        assert_eq!(o[2].summary(), "skipped: not yet");
        assert!(read_outcomes(&dir.path().join("absent")).is_empty());
    }

    #[test]
    fn selectors_are_classes_or_methods() {
        for ok in ["demo.CalcTest", "CalcTest#adds", "a.b.C$Inner#m(int)", "a.b.C#m"] {
            assert!(check_selector(ok).is_ok(), "{ok}");
        }
        for bad in ["", "#m", "a..b", "a.b#", "a#b#c", "1a.B"] {
            assert!(check_selector(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_launcher_matches_the_platform_the_tests_bring() {
        let repo = tempfile::tempdir().unwrap();
        let put = |group: &str, name: &str, v: &str| {
            let dir = repo.path().join(group).join(name).join(v);
            std::fs::create_dir_all(&dir).unwrap();
            let jar = dir.join(format!("{name}-{v}.jar"));
            std::fs::write(&jar, "").unwrap();
            jar
        };
        for v in ["1.9.1", "1.10.0", "debian"] {
            put("org/junit/platform", "junit-platform-launcher", v);
        }
        put("org/junit/jupiter", "junit-jupiter-engine", "5.9.2");
        let tests = vec![
            put("org/junit/jupiter", "junit-jupiter-api", "5.9.2"),
            put("org/junit/platform", "junit-platform-commons", "1.9.1"),
            put("org/junit/platform", "junit-platform-engine", "1.9.1"),
            put("org/opentest4j", "opentest4j", "1.2.0"),
            put("org/apiguardian", "apiguardian-api", "1.1.2"),
        ];
        let added = launcher_additions(&tests, &[repo.path().to_path_buf()]).unwrap();
        let names: Vec<String> = added.iter().map(|p| p.file_name().unwrap().to_string_lossy().into()).collect();
        assert_eq!(names, vec!["junit-platform-launcher-1.9.1.jar", "junit-jupiter-engine-5.9.2.jar"]);
        // Without a platform version to match, the newest the repository has.
        let added = launcher_additions(&tests[3..], &[repo.path().to_path_buf()]);
        let first = added.map(|a| a[0].clone());
        if let Ok(first) = first {
            assert!(
                first.ends_with("1.10.0/junit-platform-launcher-1.10.0.jar") || first.starts_with("/usr/share/java")
            );
        }
        assert_eq!(version_key("debian"), Vec::<u64>::new());
    }

    /// A Maven repository and a Debian jar directory in a temp dir.
    struct Jars {
        repo: tempfile::TempDir,
        debian: tempfile::TempDir,
    }

    impl Jars {
        fn new() -> Jars {
            Jars { repo: tempfile::tempdir().unwrap(), debian: tempfile::tempdir().unwrap() }
        }

        fn put(&self, group: &str, name: &str, v: &str) -> PathBuf {
            let dir = self.repo.path().join(group).join(name).join(v);
            std::fs::create_dir_all(&dir).unwrap();
            let jar = dir.join(format!("{name}-{v}.jar"));
            std::fs::write(&jar, "").unwrap();
            jar
        }

        fn debian(&self, file: &str) {
            std::fs::write(self.debian.path().join(file), "").unwrap();
        }

        fn complete(&self, tests: &[PathBuf]) -> Result<Vec<String>, JUnitError> {
            let c = complete(tests, &[self.repo.path().to_path_buf()], self.debian.path())?;
            Ok(c.jars.iter().map(|p| p.file_name().unwrap().to_string_lossy().into()).collect())
        }
    }

    #[test]
    fn the_engine_has_the_version_of_the_api_the_tests_declare() {
        let jars = Jars::new();
        // Debian's JUnit is another version: it is not a substitute.
        for file in ["junit-jupiter-engine.jar", "junit-jupiter-engine-5.9.2.jar", "junit-platform-launcher.jar"] {
            jars.debian(file);
        }
        let tests = vec![
            jars.put("org/junit/jupiter", "junit-jupiter-api", "5.13.4"),
            jars.put("org/junit/platform", "junit-platform-commons", "1.13.4"),
            jars.put("org/opentest4j", "opentest4j", "1.3.0"),
            jars.put("org/apiguardian", "apiguardian-api", "1.1.2"),
        ];
        match jars.complete(&tests) {
            Err(JUnitError::MissingVersion { name, version, .. }) => {
                assert_eq!((name.as_str(), version.as_str()), ("junit-platform-launcher", "1.13.4"))
            }
            other => panic!("{other:?}"),
        }
        // What Surefire downloads on the first `mvn test`.
        jars.put("org/junit/platform", "junit-platform-launcher", "1.13.4");
        jars.put("org/junit/platform", "junit-platform-engine", "1.13.4");
        let err = jars.complete(&tests).unwrap_err().to_string();
        assert!(
            err.starts_with("junit-jupiter-engine 5.13.4 (the version of the tests' junit-jupiter-api 5.13.4)"),
            "{err}"
        );
        jars.put("org/junit/jupiter", "junit-jupiter-engine", "5.9.2");
        jars.put("org/junit/jupiter", "junit-jupiter-engine", "5.13.4");
        assert_eq!(
            jars.complete(&tests).unwrap(),
            [
                "junit-platform-launcher-1.13.4.jar",
                "junit-platform-engine-1.13.4.jar",
                "junit-jupiter-engine-5.13.4.jar"
            ]
        );
        // Debian's versioned jar does when its version is the one.
        let debian_api = [PathBuf::from("/usr/share/java/junit-jupiter-api.jar")];
        jars.debian("junit-platform-engine.jar");
        jars.debian("junit-platform-commons.jar");
        jars.debian("opentest4j.jar");
        jars.debian("apiguardian-api.jar");
        let found = complete(&debian_api, &[], jars.debian.path()).unwrap();
        assert_eq!(
            found.engines,
            ["the tests declare no JUnit engine: junit-jupiter-engine added, as Maven's Surefire adds it"],
            "Debian's unversioned jars go together"
        );
    }

    #[test]
    fn junit_4_alone_runs_through_a_vintage_engine_and_the_platform_released_with_it() {
        let jars = Jars::new();
        for v in ["1.9.1", "1.10.0"] {
            for name in ["junit-platform-launcher", "junit-platform-engine", "junit-platform-commons"] {
                jars.put("org/junit/platform", name, v);
            }
        }
        jars.put("org/junit/vintage", "junit-vintage-engine", "5.9.2");
        jars.put("org/opentest4j", "opentest4j", "1.2.0");
        jars.put("org/apiguardian", "apiguardian-api", "1.1.2");
        let tests = vec![jars.put("junit", "junit", "4.13.2")];
        assert_eq!(
            jars.complete(&tests).unwrap(),
            [
                "junit-platform-launcher-1.9.1.jar",
                "junit-platform-engine-1.9.1.jar",
                "junit-platform-commons-1.9.1.jar",
                "opentest4j-1.2.0.jar",
                "apiguardian-api-1.1.2.jar",
                "junit-vintage-engine-5.9.2.jar"
            ],
            "the newest launcher (1.10.0) does not go with the only vintage engine (5.9.2)"
        );
        assert_eq!(platform_for("5.9.2").as_deref(), Some("1.9.2"));
        assert_eq!(jupiter_for("1.13.4").as_deref(), Some("5.13.4"));
        assert_eq!(platform_for("6.0.1").as_deref(), Some("6.0.1"));
        assert_eq!(platform_for("debian"), None);
    }

    #[test]
    fn junit_4_beside_the_platform_runs_only_through_a_vintage_engine_the_project_declares() {
        let jars = Jars::new();
        for name in ["junit-platform-launcher", "junit-platform-engine", "junit-platform-commons"] {
            jars.put("org/junit/platform", name, "1.12.2");
        }
        jars.put("org/junit/jupiter", "junit-jupiter-engine", "5.12.2");
        jars.put("org/junit/vintage", "junit-vintage-engine", "5.9.3");
        jars.put("org/opentest4j", "opentest4j", "1.3.0");
        jars.put("org/apiguardian", "apiguardian-api", "1.1.2");
        // Jupiter's API, and JUnit 4 only as another library's dependency (Testcontainers').
        let tests =
            vec![jars.put("org/junit/jupiter", "junit-jupiter-api", "5.12.2"), jars.put("junit", "junit", "4.13.2")];
        let found = complete(&tests, &[jars.repo.path().to_path_buf()], jars.debian.path()).unwrap();
        let names: Vec<String> = found.jars.iter().map(|p| p.file_name().unwrap().to_string_lossy().into()).collect();
        assert!(!names.iter().any(|n| n.contains("vintage")), "Surefire adds no Vintage engine: {names:?}");
        assert!(names.contains(&"junit-jupiter-engine-5.12.2.jar".to_string()), "{names:?}");
        assert!(found.engines.iter().any(|e| e.contains("JUnit 4 tests do not run")), "{:?}", found.engines);
        // A Vintage engine the project declares is used as it is, and nothing is said.
        let mut declared = tests.clone();
        declared.push(jars.put("org/junit/vintage", "junit-vintage-engine", "5.12.2"));
        let found = complete(&declared, &[jars.repo.path().to_path_buf()], jars.debian.path()).unwrap();
        assert!(!found.engines.iter().any(|e| e.contains("JUnit 4")), "{:?}", found.engines);
    }

    #[test]
    fn timeout_notes_say_what_was_done_and_why_a_timeout_failed() {
        let failed = |message: &str| TestOutcome {
            class: "a.B".into(),
            method: "m".into(),
            name: "m()".into(),
            status: TestStatus::Failed,
            message: Some(message.into()),
        };
        let scaled = timeout_notes(Timeouts::profiled(TestTimeouts::Scale), Some(2), &[]);
        assert_eq!(
            scaled,
            ["timeouts scaled 50× for the profiled run (2 timed invocations; --test-timeouts keep leaves them as written)"]
        );
        assert!(timeout_notes(Timeouts::profiled(TestTimeouts::Scale), Some(0), &[]).is_empty(), "no timeout applied");
        let asserted = timeout_notes(
            Timeouts::plain(TestTimeouts::Scale),
            None,
            &[failed("execution exceeded timeout of 10 ms by 40 ms")],
        );
        assert_eq!(asserted.len(), 1);
        assert!(asserted[0].starts_with("assertTimeout and assertTimeoutPreemptively measure this VM, 5–16× slower"));
        let kept = timeout_notes(
            Timeouts::profiled(TestTimeouts::Keep),
            None,
            &[failed("java.util.concurrent.TimeoutException: m() timed out after 100 milliseconds")],
        );
        assert_eq!(kept.len(), 1);
        assert!(kept[0].ends_with("--test-timeouts scale multiplies it by 50"), "{kept:?}");
        assert_eq!("disable".parse::<TestTimeouts>(), Ok(TestTimeouts::Disable));
        assert!("off".parse::<TestTimeouts>().is_err());
    }
}

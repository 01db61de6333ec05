//! JUnit tests as entry points. A test (a class, or `Class#method`) runs under the VM like a
//! main: the JUnit Platform launcher from the project's own test class path (JUnit 5 directly,
//! JUnit 4 through the vintage engine) is driven by a small runner of ours, compiled once with the
//! user's `javac`, which writes each test's outcome to a file. The runner and the framework are
//! library code (jars and a class outside the source roots): their discovery, reflection and
//! reporting are never the user's findings; the test's code and the code under test are.

use crate::javac;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The runner's class (in the unnamed package, so that it cannot clash with the user's).
pub const RUNNER_CLASS: &str = "BloatlensJUnitRunner";
const RUNNER_SOURCE: &str = include_str!("BloatlensJUnitRunner.java");

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

/// The version of `name` on a class path (`name-1.2.3.jar`), or `Some("")` when present
/// unversioned (Debian's `name.jar`).
fn version_on(class_path: &[PathBuf], name: &str) -> Option<String> {
    class_path.iter().find_map(|p| {
        let file = p.file_name()?.to_str()?.strip_suffix(".jar")?;
        if file == name {
            return Some(String::new());
        }
        let v = file.strip_prefix(name)?.strip_prefix('-')?;
        v.starts_with(|c: char| c.is_ascii_digit()).then(|| v.to_string())
    })
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

/// Where `artifact` is: `version` (or the newest) in one of the Maven repositories, else
/// Debian's unversioned jar.
fn locate(artifact: &Artifact, version: Option<&str>, repositories: &[PathBuf]) -> Option<PathBuf> {
    for repo in repositories {
        let dir = repo.join(artifact.group).join(artifact.name);
        let chosen = match version.filter(|v| !v.is_empty()) {
            Some(v) => Some(v.to_string()),
            None => std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|v| !version_key(v).is_empty())
                .max_by_key(|v| version_key(v)),
        };
        if let Some(v) = chosen {
            let jar = dir.join(&v).join(format!("{}-{v}.jar", artifact.name));
            if jar.is_file() {
                return Some(jar);
            }
        }
    }
    let debian = Path::new("/usr/share/java").join(format!("{}.jar", artifact.name));
    debian.is_file().then_some(debian)
}

/// What the launcher needs beyond the test class path: the platform (at the version the tests
/// bring, when they bring part of it), its two small dependencies, and the engine of each JUnit
/// the tests use (a project declares the API; the engine is the build tool's business).
pub fn launcher_additions(test_class_path: &[PathBuf], repositories: &[PathBuf]) -> Result<Vec<PathBuf>, JUnitError> {
    let platform = [&COMMONS, &ENGINE, &LAUNCHER].iter().find_map(|a| version_on(test_class_path, a.name));
    let jupiter = version_on(test_class_path, JUPITER_API.name);
    let mut needed: Vec<(&Artifact, Option<String>)> = vec![
        (&LAUNCHER, platform.clone()),
        (&ENGINE, platform.clone()),
        (&COMMONS, platform),
        (&OPENTEST4J, None),
        (&APIGUARDIAN, None),
    ];
    if jupiter.is_some() {
        needed.push((&JUPITER_ENGINE, jupiter.clone()));
    }
    if has_junit4(test_class_path) {
        needed.push((&VINTAGE_ENGINE, jupiter));
    }
    let mut out = Vec::new();
    for (artifact, version) in needed {
        if version_on(test_class_path, artifact.name).is_some() {
            continue;
        }
        match locate(artifact, version.as_deref(), repositories) {
            Some(jar) => out.push(jar),
            None => return Err(JUnitError::NoPlatform(artifact.name.to_string())),
        }
    }
    Ok(out)
}

/// The runner compiled against the launcher on `class_path`, once per launcher (kept in `cache`).
pub fn runner(javac_path: &Path, cache: &Path, class_path: &[PathBuf]) -> Result<PathBuf, JUnitError> {
    use sha2::{Digest, Sha256};
    let cp = join(class_path);
    let digest = Sha256::digest(format!("{RUNNER_SOURCE}\n{cp}"));
    let dir = cache.join(&format!("junit-runner-{digest:x}")[..28]);
    let class = dir.join(format!("{RUNNER_CLASS}.class"));
    if class.is_file() {
        return Ok(dir);
    }
    let src = dir.join("src");
    let source = src.join(format!("{RUNNER_CLASS}.java"));
    std::fs::create_dir_all(&src)
        .and_then(|_| std::fs::write(&source, RUNNER_SOURCE))
        .map_err(|e| JUnitError::Runner(e.to_string()))?;
    let sources = [source];
    let job = javac::Job { sources: &sources, source_path: &[], class_path: &cp, out: &dir };
    javac::compile(javac_path, &job).map_err(|e| match e {
        javac::CompileError::Failed { output, .. } => JUnitError::Runner(output),
        other => JUnitError::Runner(other.to_string()),
    })?;
    Ok(dir)
}

/// A test made ready to run as a program: the runner is its main class, these class path
/// entries go after the project's classes and libraries, and these are its arguments.
pub struct TestLaunch {
    pub selector: String,
    pub class_path: Vec<PathBuf>,
    pub args: Vec<String>,
    /// Where the runner writes the outcomes (removed with the launch).
    outcomes: tempfile::TempPath,
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
    ) -> Result<TestLaunch, JUnitError> {
        check_selector(selector)?;
        let additions = launcher_additions(test_libraries, repositories)?;
        let against: Vec<PathBuf> = test_libraries.iter().chain(&additions).cloned().collect();
        let runner_dir = runner(javac_path, cache, &against)?;
        std::fs::create_dir_all(cache)?;
        let outcomes = tempfile::Builder::new().prefix("test-outcomes-").tempfile_in(cache)?.into_temp_path();
        let args = vec![outcomes.display().to_string(), selector.to_string()];
        let class_path = std::iter::once(runner_dir).chain(additions).collect();
        // Every test method runs through `Method.invoke`, whose accessors the VM keeps in bytecode
        // (see `vm::boot` and `natives::accessors`): a test may wait for its threads.
        Ok(TestLaunch { selector: selector.to_string(), class_path, args, outcomes })
    }

    /// Tells the report what ran (the test, not the runner) and how each test ended; a run that
    /// ended by itself with no test run means the selector matched none.
    pub fn finish(&self, report: &mut crate::report::Report) -> Result<(), JUnitError> {
        report.tests = read_outcomes(&self.outcomes);
        report.run.main_class = self.selector.clone();
        report.run.args.clear();
        if report.tests.is_empty() && report.run.outcome == "exited" {
            let text = std::fs::read_to_string(&self.outcomes).unwrap_or_default();
            let why = text.lines().find_map(|l| l.strip_prefix("ERROR\t\t\t\t")).map(unescape);
            return Err(JUnitError::NoTests { selector: self.selector.clone(), why });
        }
        Ok(())
    }
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
}

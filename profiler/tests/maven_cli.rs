//! `bloatlens profile` on a Maven project (`fixtures/projects/shop`, copied to a temp dir): the
//! modules' class paths from Maven (offline, Debian's repository named in its `.mvn/maven.config`),
//! JUnit 5 and JUnit 4 tests with `--test` and their outcomes, SARIF validated against the
//! schema with findings in the modules' sources, `--fail-on` exit statuses, and the clear
//! errors: an unknown test, a broken pom, no Maven. A pom that declares only the JUnit API
//! (`api-only`: the engine added as Surefire adds it), JUnit 5 timeouts scaled, disabled or kept,
//! `bloatlens run --test`, a plain tree with separate main and test source roots
//! (`plain-tests`), and Mockito's inline mock maker (`mockito-inline`: its dependencies from Maven
//! Central, the outcomes compared with `mvn test`'s), and a Spring Boot application (`spring-boot`: its
//! `@SpringBootTest`s and its main against `mvn test` and `java`).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A copy of a fixture project, and a cache directory beside it (outside it).
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(name: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&repo().join("fixtures/projects").join(name), &dir.path().join("ws"));
        Project { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// `bloatlens profile <args…>` from the project's root, as a CI job runs it.
    fn profile(&self, args: &[&str]) -> Output {
        self.profile_in("", args)
    }

    /// `bloatlens profile <args…>` from a directory of the project.
    fn profile_in(&self, dir: &str, args: &[&str]) -> Output {
        self.command(dir, "profile", args)
    }

    /// `bloatlens run <args…>` from the project's root.
    fn run(&self, args: &[&str]) -> Output {
        self.command("", "run", args)
    }

    fn command(&self, dir: &str, command: &str, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_bloatlens"))
            .arg(command)
            .args(args)
            .current_dir(self.root().join(dir))
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .output()
            .unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn tests_run_with_their_outcomes_and_the_sarif_log_names_the_modules_sources() {
    let p = Project::new("shop");
    // JUnit 5: one passes, one fails with its message, one is skipped; a failed test is the run's failure.
    let out = p.profile(&["--test", "com.acme.shop.core.InventoryTest"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("Maven resolved the class paths of 3 modules in"), "{stderr}");
    assert!(stdout.starts_with("bloatlens: com.acme.shop.core.InventoryTest — exited (exit status 1)"), "{stdout}");
    assert!(stdout.contains("test com.acme.shop.core.InventoryTest#totalsAreSummed() passed"), "{stdout}");
    assert!(
        stdout.contains("test com.acme.shop.core.InventoryTest#discountIsAppliedOnce() failed: discount applied twice ==> expected: <9000> but was: <8100>"),
        "{stdout}"
    );
    assert!(stdout.contains("skipped: warehouse transfers are not implemented yet"), "{stdout}");
    // The framework's work is not the user's: every finding is on the workspace's sources.
    assert!(!stdout.contains("junit"), "no finding about JUnit: {stdout}");

    // JUnit 4 through the vintage engine, one method; the class paths come from the cache now.
    let out = p.profile(&["--test", "com.acme.shop.app.ReportTest#rendersOneLinePerOrder", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("Maven resolved"), "no pom changed: Maven is not asked again");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["run"]["main_class"], "com.acme.shop.app.ReportTest#rendersOneLinePerOrder");
    let tests = report["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1, "{tests:?}");
    assert_eq!(tests[0]["status"], "passed");

    // Resources (the module's test and main resources are on the test class path), @TempDir, and a
    // test waiting for a worker thread.
    let out = p.profile(&["--test", "com.acme.shop.core.OrderTest"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains("test com.acme.shop.core.OrderTest#formatsTheExpectedPricesOfTheTestResource() passed"),
        "{stdout}"
    );
    assert_eq!(stdout.matches(" passed").count(), 6, "{stdout}");

    // From a module's directory: the reactor above it is the project (core's classes and all).
    let out = p.profile_in("app", &["--test", "com.acme.shop.app.ReportTest"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("test com.acme.shop.app.ReportTest#rendersOneLinePerOrder passed"));

    // The app's main as SARIF: valid, with results in both modules' sources, paths relative to the root.
    let sarif = p.dir.path().join("shop.sarif");
    let out =
        p.profile(&["--main", "com.acme.shop.app.Main", "--format", "sarif", "--output", sarif.to_str().unwrap(), "."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("profiler/tests/schemas/sarif-schema-2.1.0.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::draft7::new(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let uris: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap())
        .collect();
    assert!(uris.iter().any(|u| u.starts_with("core/src/main/java/com/acme/shop/core/")), "{uris:?}");
    assert!(uris.iter().any(|u| u.starts_with("app/src/main/java/com/acme/shop/app/")), "{uris:?}");

    // --fail-on: a kind present trips the gate (exit 1), one absent does not. (The shop's DTO copies
    // save about 0.4% of its time, under the default 0.5% line: the gate is set below them.)
    let out = p.profile(&["--main", "com.acme.shop.app.Main", "--min-share", "0.002", "--fail-on", "copy-chain", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--fail-on"), "{}", text(&out.stderr));
    let out = p.profile(&["--main", "com.acme.shop.app.Main", "--min-share", "0.002", "--fail-on", "clone", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn an_unknown_test_a_broken_pom_and_no_maven_are_clear_errors() {
    let p = Project::new("shop");
    let out = p.profile(&["--test", "com.acme.shop.core.InventoryTest#noSuchTest"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no test matches com.acme.shop.core.InventoryTest#noSuchTest"), "{stderr}");
    assert!(stderr.contains("Could not find method with name [noSuchTest]"), "JUnit's reason: {stderr}");

    let out = p.profile(&["--mvn", "/nonexistent/mvn", "--test", "com.acme.shop.core.InventoryTest"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("Maven was not found (`/nonexistent/mvn`)"), "{}", text(&out.stderr));

    let broken = Project::new("broken-pom");
    let out = broken.profile(&["--main", "demo.Main", "."]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("[FATAL] Non-parseable POM"), "Maven's own line: {stderr}");
    assert!(stderr.contains(&format!("{}/pom.xml", broken.root().canonicalize().unwrap().display())), "{stderr}");
    // Each of Maven's lines once, with one level: Maven doubles `[ERROR]` on its first line and
    // repeats the parse error in its summary.
    assert!(!stderr.contains("[ERROR] [ERROR]"), "{stderr}");
    assert_eq!(stderr.matches("Non-parseable POM").count(), 1, "{stderr}");
    assert!(stderr.contains("\n[ERROR] Some problems were encountered while processing the POMs:\n"), "{stderr}");
}

#[test]
fn a_pom_with_only_the_junit_api_runs_its_tests_through_the_engine_surefire_would_add() {
    let p = Project::new("api-only");
    let out = p.profile(&["--test", "com.acme.calc.CalcTest"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("test com.acme.calc.CalcTest#adds() passed"), "{stdout}");
    assert!(
        stdout.contains(
            "note: the tests declare no JUnit engine: junit-jupiter-engine 5.9.2 added, as Maven's Surefire adds it"
        ),
        "the engine of the API's version, said: {stdout}"
    );
}

#[test]
fn junit_timeouts_are_scaled_by_default_and_can_be_disabled_or_kept() {
    let p = Project::new("api-only");
    // Each test sleeps 300 ms under a 100 ms @Timeout (same thread, separate thread) or a 150 ms
    // default timeout (junit-platform.properties): as written, each fails; scaled 50×, none does.
    let out = p.profile(&["--test", "com.acme.calc.TimeoutsTest", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tests = report["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 3, "{tests:?}");
    assert!(tests.iter().all(|t| t["status"] == "passed"), "{tests:?}");
    let notes: Vec<&str> = report["test_notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(
        notes.contains(&"timeouts scaled 50× for the profiled run (3 timed invocations; --test-timeouts keep leaves them as written)"),
        "{notes:?}"
    );

    // Kept as written: the timeout fails the test, and the report says why it may pass under java.
    let out = p.profile(&["--test-timeouts", "keep", "--test", "com.acme.calc.TimeoutsTest#sleepsPastItsTimeout"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "failed: java.util.concurrent.TimeoutException: sleepsPastItsTimeout() timed out after 100 milliseconds"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("note: JUnit 5 timeouts kept as written (--test-timeouts keep)"), "{stdout}");

    // Disabled, under `run` (no analyses).
    let out = p.run(&["--test-timeouts", "disable", "--test", "com.acme.calc.TimeoutsTest"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", text(&out.stderr));
    assert_eq!(stdout.matches(" passed").count(), 3, "{stdout}");
    assert!(stdout.contains("note: timeouts disabled for the run under the VM (--test-timeouts disable)"), "{stdout}");
    let out = p.run(&["--test-timeouts", "sometimes", "--test", "com.acme.calc.TimeoutsTest"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`sometimes` is not a timeout policy"), "{}", text(&out.stderr));
}

#[test]
fn run_test_runs_a_test_without_the_analyses() {
    let p = Project::new("shop");
    let out = p.run(&["--test", "com.acme.shop.core.InventoryTest"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "a failed test fails the run: {stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("test com.acme.shop.core.InventoryTest#totalsAreSummed() passed"), "{stdout}");
    assert!(stdout.contains("#discountIsAppliedOnce() failed: discount applied twice"), "{stdout}");
    assert!(!stdout.contains("findings") && !stdout.contains("[lifetime]"), "no analyses: {stdout}");

    // One method, JUnit 4, from the module's directory.
    let out = p.command("app", "run", &["--test", "com.acme.shop.app.ReportTest#rendersOneLinePerOrder"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "test com.acme.shop.app.ReportTest#rendersOneLinePerOrder passed",
            "note: the JUnit 4 tests run through junit-vintage-engine 5.9.2 (Maven's Surefire runs them with its JUnit 4 \
             provider)"
        ],
        "{stdout}"
    );
    // Debian's repository, which the fixture names, has no Surefire plugin: its defaults apply, said.
    assert!(
        lines[2..]
            .iter()
            .all(|l| l
                .starts_with("note: Surefire's configuration could not be read, so the tests ran with its defaults: ")),
        "{stdout}"
    );

    let out = p.run(&["--test", "com.acme.shop.core.InventoryTest#noSuchTest"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("Could not find method with name [noSuchTest]"), "{}", text(&out.stderr));
}

/// A project's classes are kept between runs: the same sources run without a compile, and any
/// change to a source compiles again (never a stale class).
#[test]
fn compiled_classes_are_kept_until_a_source_changes() {
    let p = Project::new("shop");
    let failing = "#discountIsAppliedOnce() failed: discount applied twice";
    let up_to_date = "the project's classes are up to date";
    let first = p.run(&["--test", "com.acme.shop.core.InventoryTest"]);
    assert!(text(&first.stdout).contains(failing), "{}", text(&first.stdout));
    assert!(!text(&first.stderr).contains(up_to_date), "{}", text(&first.stderr));
    let again = p.run(&["--test", "com.acme.shop.core.InventoryTest"]);
    assert_eq!(text(&again.stdout), text(&first.stdout));
    assert!(text(&again.stderr).contains(up_to_date), "{}", text(&again.stderr));

    // The test's message changed: compiled again, the new message printed.
    let test = p.root().join("core/src/test/java/com/acme/shop/core/InventoryTest.java");
    let source = std::fs::read_to_string(&test).unwrap();
    std::fs::write(&test, source.replace("\"discount applied twice\"", "\"discount applied more than once\"")).unwrap();
    let edited = p.run(&["--test", "com.acme.shop.core.InventoryTest"]);
    assert!(!text(&edited.stderr).contains(up_to_date), "{}", text(&edited.stderr));
    assert!(text(&edited.stdout).contains("failed: discount applied more than once"), "{}", text(&edited.stdout));
    // Put back: the first build is still kept.
    std::fs::write(&test, source).unwrap();
    let back = p.run(&["--test", "com.acme.shop.core.InventoryTest"]);
    assert!(text(&back.stderr).contains(up_to_date), "{}", text(&back.stderr));
    assert!(text(&back.stdout).contains(failing), "{}", text(&back.stdout));
}

#[test]
fn a_plain_tree_names_its_main_and_test_source_roots() {
    let p = Project::new("plain-tests");
    // A plain tree's libraries are its lib/*.jar: the JUnit API, Debian's.
    std::fs::create_dir_all(p.root().join("lib")).unwrap();
    for jar in ["junit-jupiter-api", "opentest4j", "apiguardian-api", "junit-platform-commons"] {
        let from = PathBuf::from(format!("/usr/share/java/{jar}.jar"));
        std::os::unix::fs::symlink(&from, p.root().join("lib").join(format!("{jar}.jar"))).unwrap();
    }
    let named = ["--source-root", "src/main/java", "--test-source-root", "src/test/java"];
    for roots in [&named[..], &[]] {
        let args: Vec<&str> =
            roots.iter().copied().chain(["--test", "com.acme.ledger.LedgerTest", "--format", "json"]).collect();
        let out = p.profile(&args);
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}\n{}", text(&out.stderr));
        let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(report["tests"][0]["status"], "passed", "{}", report["tests"]);
        // The main sources are the user's code: findings are placed on their line.
        let placed = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["location"]["file"] == "com/acme/ledger/Ledger.java" && f["location"]["line"] == 13);
        assert!(placed, "{args:?}: {}", report["findings"]);
    }

    // Tests compile against the main classes, never the other way round.
    let main = p.root().join("src/main/java/com/acme/ledger/Audit.java");
    std::fs::write(&main, "package com.acme.ledger;\nclass Audit { LedgerTest test; }\n").unwrap();
    let out = p.run(&["--test", "com.acme.ledger.LedgerTest"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot find symbol"), "{}", text(&out.stderr));
}

/// A test's call paths and places read like the test: they start at the test method, and no
/// frame of the JUnit launcher, its engines or reflection is shown.
#[test]
fn a_tests_call_path_starts_at_the_test_method() {
    let p = Project::new("api-only");
    // The module's 150-ms default timeout is no part of this test: a loaded machine must not fail it.
    let out = p.profile(&["--test", "com.acme.calc.MatchingTest", "--test-timeouts", "disable", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let path = findings.iter().find(|f| f["kind"] == "bottleneck" && f["hidden"].is_null()).expect("the repeated work");
    let calls: Vec<&str> = path["evidence"]["calls"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert!(calls[0].starts_with("com.acme.calc.MatchingTest.countsEveryName"), "{calls:?}");
    for f in findings.iter().filter(|f| f["hidden"].is_null()) {
        let text = f.to_string();
        for launcher in ["org.junit", "BloatlensJUnitRunner", "jdk.internal.reflect"] {
            assert!(!text.contains(launcher), "{launcher} in a shown finding: {text}");
        }
    }
}

/// Surefire's outcomes of a module's tests, from its XML reports: (class, method, status, message),
/// sorted; a parameterized invocation (`parses(String)[2]`) by its method's name.
fn surefire_outcomes(reports: &Path) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(reports).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !(name.starts_with("TEST-") && name.ends_with(".xml")) {
            continue;
        }
        let xml = std::fs::read_to_string(e.path()).unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        for case in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
            let method = case.attribute("name").unwrap_or("").split(['(', '[']).next().unwrap_or("").to_string();
            let class = case.attribute("classname").unwrap_or("").to_string();
            let ended = |tag: &str| case.children().find(|c| c.has_tag_name(tag));
            let (status, message) = match (ended("failure").or(ended("error")), ended("skipped")) {
                (Some(f), _) => ("failed", f.attribute("message").unwrap_or("")),
                (None, Some(s)) => ("skipped", s.attribute("message").unwrap_or("")),
                (None, None) => ("passed", ""),
            };
            out.push((class, method, status.to_string(), message.to_string()));
        }
    }
    out.sort();
    out
}

/// A suite's JSON report (`profile --tests --format json`) in which a test failed: its tests'
/// outcomes and messages must be Surefire's (`expected`, as [`surefire_outcomes`] reads them).
fn suite_report(out: &Output, expected: &[(String, String, String, String)]) -> Value {
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(out.status.code(), Some(1), "a failed test fails the run: {}", text(&out.stderr));
    let mut ours: Vec<(String, String, String, String)> = report["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let s = |k: &str| t[k].as_str().unwrap_or("").to_string();
            (s("class"), s("method"), s("status"), s("message"))
        })
        .collect();
    ours.sort();
    assert_eq!(ours, expected, "the same tests, outcomes and messages as Surefire's");
    report
}

/// JUnit 6 (its BOM) under Surefire's configuration: includes, excludes, properties, the working
/// directory, a class disabled whole; every outcome and message as `mvn test`'s.
#[test]
fn a_whole_suite_runs_as_surefire_runs_it_under_its_configuration() {
    let p = Project::new("surefire-config");
    // Maven's own run first: it brings Surefire and JUnit from Maven Central into the local
    // repository (Bloatlens then reads the project offline) and says the outcomes to match.
    let mvn = Command::new("mvn")
        .args(["-B", "-q", "test", "-Dmaven.test.failure.ignore=true"])
        .current_dir(p.root())
        .output()
        .expect("running mvn");
    assert!(mvn.status.success(), "mvn test: {}{}", text(&mvn.stdout), text(&mvn.stderr));
    let expected = surefire_outcomes(&p.root().join("ledger/target/surefire-reports"));
    assert_eq!(expected.len(), 15, "{expected:?}");
    std::fs::remove_dir_all(p.root().join("ledger/target")).unwrap();

    let out = p.profile(&["--tests", "--format", "json", "--test-timeouts", "disable"]);
    let report = suite_report(&out, &expected);
    let notes = report["test_notes"].to_string();
    assert!(notes.contains("argLine options not applied under the VM: -Xmx256m"), "{notes}");
    assert_eq!(report["run"]["main_class"], "the tests of com.acme.ledger:ledger (3 classes)");

    // From the module's directory: its tests alone, without the analyses.
    let out = p.command("ledger", "run", &["--tests"]);
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().filter(|l| l.starts_with("test ")).count(), 15, "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("LedgerTest#runsInTheWorkingDirectory() passed"), "{stdout}");
}

/// `--tests` from a folder of a module's tests: the test classes below it, and no other; a folder
/// of main code holds none, and says where the tests are.
#[test]
fn the_tests_in_a_folder_run_from_it() {
    let p = Project::new("shop");
    let out = p.command("core/src/test/java/com/acme/shop/core", "run", &["--tests"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "a test fails: {stdout}{}", text(&out.stderr));
    let outcomes = printed_outcomes(&stdout);
    let classes: std::collections::BTreeSet<&str> = outcomes.keys().map(|t| t.split('#').next().unwrap()).collect();
    assert_eq!(
        classes.into_iter().collect::<Vec<_>>(),
        ["com.acme.shop.core.InventoryTest", "com.acme.shop.core.OrderTest"],
        "{stdout}"
    );
    assert_eq!(outcomes.get("com.acme.shop.core.OrderTest#formatsCents").map(String::as_str), Some("passed"));

    let out = p.command("core/src/main/java", "run", &["--tests"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "bloatlens: error: core/src/main/java is not in a test source root and holds none (the test sources are in \
             core/src/test/java, app/src/test/java)"
        ),
        "{}",
        text(&out.stderr)
    );
}

/// The outcomes `bloatlens run --test`/`profile --test` printed (`test Class#method() passed`).
fn printed_outcomes(stdout: &str) -> std::collections::BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test "))
        .filter_map(|l| {
            let (test, rest) = l.split_once("() ")?;
            let outcome = rest.split(|c: char| c == ':' || c.is_whitespace()).next()?;
            Some((test.to_string(), outcome.to_string()))
        })
        .collect()
}

/// Mockito 5's default, inline, mock maker (`mockito-inline`): a final class mocked through
/// `MockitoExtension`, `mockStatic`, spies on the program's objects and on a JDK list, a verification
/// that fails — through the agent Byte Buddy attaches to the running VM, which retransforms loaded
/// classes (the JDK's too). Its dependencies come from Maven Central: `mvn test` runs first, online,
/// filling the local repository as a developer's build does, and then Bloatlens (offline) must give
/// every test Surefire's outcome, under `run --test` and `profile --test`.
#[test]
fn mockito_inline_mocks_give_the_outcomes_of_mvn_test() {
    let p = Project::new("mockito-inline");
    let mvn = Command::new("mvn")
        .args(["-B", "-q", "dependency:go-offline", "test", "-Dmaven.test.failure.ignore=true"])
        .current_dir(p.root())
        .output()
        .expect("mvn runs");
    assert!(
        mvn.status.success(),
        "mvn test (online, from Maven Central) failed:\n{}{}",
        text(&mvn.stdout),
        text(&mvn.stderr)
    );
    let expected: std::collections::BTreeMap<String, String> =
        surefire_outcomes(&p.root().join("target/surefire-reports"))
            .into_iter()
            .map(|(class, method, status, _)| (format!("{class}#{method}"), status))
            .collect();
    assert_eq!(expected.len(), 10, "{expected:?}");
    assert_eq!(expected["com.acme.pricing.CheckoutTest#aMissedVerificationFails"], "failed");

    let mut ran = std::collections::BTreeMap::new();
    for class in ["com.acme.pricing.CheckoutTest", "com.acme.pricing.SpyTest", "com.acme.pricing.AgentTest"] {
        let out = p.run(&["--test", class]);
        let stdout = text(&out.stdout);
        assert!(!text(&out.stderr).contains("error"), "{class}: {}{stdout}", text(&out.stderr));
        ran.extend(printed_outcomes(&stdout));
    }
    assert_eq!(ran, expected, "bloatlens run --test against mvn test");
    assert!(
        text(&p.run(&["--test", "com.acme.pricing.CheckoutTest#aMissedVerificationFails"]).stdout)
            .contains("Wanted but not invoked:\nprices.priceOf(\"never asked\");"),
        "Mockito's own message"
    );

    let out = p.profile(&["--test", "com.acme.pricing.SpyTest"]);
    let stdout = text(&out.stdout);
    let profiled = printed_outcomes(&stdout);
    let spies: std::collections::BTreeMap<_, _> = expected
        .iter()
        .filter(|(k, _)| k.starts_with("com.acme.pricing.SpyTest#"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(profiled, spies, "bloatlens profile --test against mvn test:\n{stdout}{}", text(&out.stderr));

    // Mockito's documented setup for JDK 21+: its jar as a Java agent in Surefire's argLine. The
    // premain runs before the tests (AgentTest sees its instrumentation) and nothing changes.
    let pom = p.root().join("pom.xml");
    let with_agent = std::fs::read_to_string(&pom).unwrap().replace(
        "<version>3.2.5</version>",
        "<version>3.2.5</version>\n        <configuration><argLine>-javaagent:${settings.localRepository}/org/mockito/\
         mockito-core/5.14.2/mockito-core-5.14.2.jar -Dpricing.premain=true</argLine></configuration>",
    );
    std::fs::write(&pom, with_agent).unwrap();
    let mut ran = std::collections::BTreeMap::new();
    for class in ["com.acme.pricing.AgentTest", "com.acme.pricing.CheckoutTest"] {
        let out = p.run(&["--test", class]);
        ran.extend(printed_outcomes(&text(&out.stdout)));
    }
    let wanted: std::collections::BTreeMap<_, _> = expected
        .iter()
        .filter(|(k, _)| !k.starts_with("com.acme.pricing.SpyTest#"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(ran, wanted, "with Mockito's agent in the argLine");
}

/// A Spring Boot 3 application (`spring-boot`: Boot's parent pom and starters from Maven Central):
/// `@SpringBootTest` contexts started twice (component scanning, a `@ConfigurationProperties`
/// record, a `@Cacheable` service behind a CGLIB proxy, application events, `classpath*:` resources,
/// a `@MockitoBean` through the inline mock maker, a profile and an overridden property). Every test
/// ends as under `mvn test`, with AssertJ's message; the application's main prints what `java` prints;
/// the framework's start-up is never a finding on the user's `SpringApplication.run(…)` line.
#[test]
fn a_spring_boot_application_starts_and_its_tests_end_as_under_mvn_test() {
    let p = Project::new("spring-boot");
    let mvn = |args: &[&str]| {
        let out = Command::new("mvn").arg("-B").arg("-q").args(args).current_dir(p.root()).output().expect("mvn runs");
        assert!(out.status.success(), "mvn {args:?}: {}{}", text(&out.stdout), text(&out.stderr));
    };
    mvn(&["test", "-Dmaven.test.failure.ignore=true", "dependency:build-classpath", "-Dmdep.outputFile=cp.txt"]);
    let expected = surefire_outcomes(&p.root().join("target/surefire-reports"));
    assert_eq!(expected.len(), 5, "{expected:?}");
    assert_eq!(expected.iter().filter(|t| t.2 == "failed").count(), 1, "{expected:?}");

    // The main, under `java` and under the VM.
    let class_path = format!(
        "{}:{}",
        p.root().join("target/classes").display(),
        std::fs::read_to_string(p.root().join("cp.txt")).unwrap().trim()
    );
    let java = Command::new("java")
        .args(["-cp", &class_path, "com.acme.inventory.InventoryApplication", "--inventory.warehouses=east,west"])
        .current_dir(p.root())
        .output()
        .expect("java runs");
    assert!(java.status.success(), "{}", text(&java.stderr));
    assert!(text(&java.stdout).contains("2 items in stock: apples, plums"), "{}", text(&java.stdout));
    assert!(
        text(&java.stdout).contains("warehouses: [east, west]"),
        "the argument reached Spring: {}",
        text(&java.stdout)
    );
    std::fs::remove_dir_all(p.root().join("target")).unwrap();
    let printed = p.dir.path().join("main.out");
    let out = p.profile(&[
        ".",
        "--main",
        "com.acme.inventory.InventoryApplication",
        "--program-output",
        printed.to_str().unwrap(),
        "--inventory.warehouses=east,west",
    ]);
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&printed).unwrap(), text(&java.stdout), "the main's output, as java's");
    assert!(!report.contains("InventoryApplication.java:"), "Spring's start-up is not the user's finding:\n{report}");

    // The tests: one VM, both contexts; outcomes and messages as Surefire's.
    let out = p.profile(&["--tests", "--format", "json"]);
    suite_report(&out, &expected);
}

//! The server on a real Maven project (`fixtures/projects/shop`: two modules, commons-lang3,
//! JUnit 5 and JUnit 4 tests) over stdio: Maven's class paths (offline, from Debian's Maven
//! repository, which the project's `.mvn/maven.config` names), findings in both modules, a test
//! profiled from its lens with its outcome shown, a pom change, and a broken pom said clearly.
//! Needs `mvn` and Debian's `junit5`/`junit4` packages (`scripts/install-libraries.sh`).

use bloatlens_lsp::harness::Editor;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Every file of a fixture project, relative to it.
fn project_files(name: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/projects").join(name);
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(&root).unwrap().display().to_string();
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out
}

fn start(name: &str) -> Editor {
    let files = project_files(name);
    let refs: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    // The shop's DTO copies save about 0.4% of its time as HotSpot pays it, under the default
    // 0.5% line: shown here so that their hops across modules can be checked.
    Editor::start(Path::new(env!("CARGO_BIN_EXE_bloatlens-lsp")), &refs, json!({"thresholds": {"minShare": 0.002}}))
}

fn log_text(m: &Value) -> Option<&str> {
    (m["method"] == "window/logMessage").then(|| m["params"]["message"].as_str()).flatten()
}

/// Messages up to the log line that starts with `prefix`.
fn until_log(ed: &mut Editor, prefix: &str) -> Vec<Value> {
    ed.until(|m| log_text(m).is_some_and(|t| t.starts_with(prefix)))
}

/// The files that got diagnostics among `msgs`, with them.
/// The next message shown to the user; only notes may be logged before it (Surefire's
/// configuration unreadable offline, say).
fn shown(ed: &mut Editor) -> Value {
    let msgs = ed.until(|m| m["method"] == "window/showMessage");
    let (said, before) = msgs.split_last().unwrap();
    assert!(before.iter().all(|m| log_text(m).is_some_and(|l| l.starts_with("note: "))), "{before:?}");
    said["params"].clone()
}

fn diagnostics_by_file(msgs: &[Value]) -> Vec<(String, Vec<Value>)> {
    msgs.iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .map(|m| {
            (m["params"]["uri"].as_str().unwrap().to_string(), m["params"]["diagnostics"].as_array().unwrap().clone())
        })
        .collect()
}

fn lenses(ed: &mut Editor, u: &str) -> Vec<Value> {
    let id = ed.request("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    ed.response(id).as_array().unwrap().clone()
}

fn file(ed: &Editor, rel: &str) -> PathBuf {
    ed.root.join(rel)
}

const MAIN: &str = "app/src/main/java/com/acme/shop/app/Main.java";
const INVENTORY_TEST: &str = "core/src/test/java/com/acme/shop/core/InventoryTest.java";

#[test]
fn a_maven_project_is_profiled_across_its_modules_and_its_tests_run_from_their_lenses() {
    let mut ed = start("shop");
    // Opening the workspace asks Maven for the modules' class paths, ahead of the first save.
    let opened = until_log(&mut ed, "Maven: the class paths of 3 modules resolved in");
    assert_eq!(opened.len(), 1, "{opened:?}");
    eprintln!("first open: {}", log_text(&opened[0]).unwrap());

    // A save of the app's main: compiled against core's sources and commons-lang3 from Maven.
    let main = ed.open(MAIN);
    ed.save(&main);
    let msgs = until_log(&mut ed, "profiled com.acme.shop.app.Main");
    let by_file = diagnostics_by_file(&msgs);
    let in_module = |m: &str| {
        by_file.iter().filter(|(u, d)| u.contains(&format!("/ws/{m}/src/main/java/")) && !d.is_empty()).count()
    };
    assert!(in_module("core") > 0, "findings in core: {by_file:#?}");
    // The app's own waste is under the line (its regex internals are no copy chain): its files
    // are published, cleared.
    assert!(by_file.iter().any(|(u, _)| u.contains("/ws/app/src/main/java/")), "app's files: {by_file:#?}");
    // The copy chain of core's DTOs is found, on core's own source, with a hop in another file.
    let (_, dto) = by_file.iter().find(|(u, _)| u.ends_with("core/ItemDto.java")).expect("ItemDto.java has findings");
    let chain = dto.iter().find(|d| d["data"]["kind"] == "copy-chain").expect("a copy chain in ItemDto.java");
    let related = chain["relatedInformation"].as_array().unwrap();
    assert!(related.iter().any(|r| r["location"]["uri"].as_str().unwrap().ends_with("ItemView.java")), "{chain}");
    // Nothing about the JDK or the jars: every file with findings is the workspace's.
    assert!(by_file.iter().all(|(u, _)| u.contains("/ws/")), "{by_file:#?}");

    // The test class has a lens per test and one for the class.
    let test = ed.open(INVENTORY_TEST);
    let ls = lenses(&mut ed, &test);
    let titles: Vec<&str> = ls.iter().map(|l| l["command"]["title"].as_str().unwrap()).collect();
    assert_eq!(titles.iter().filter(|t| **t == "▶ Profile test").count(), 3, "{titles:?}");
    assert_eq!(titles.iter().filter(|t| **t == "▶ Profile tests").count(), 1, "{titles:?}");
    let failing = ls
        .iter()
        .find(|l| l["command"]["arguments"][1]["test"] == "com.acme.shop.core.InventoryTest#discountIsAppliedOnce")
        .expect("a lens for discountIsAppliedOnce")
        .clone();
    let class_lens = ls
        .iter()
        .find(|l| l["command"]["arguments"][1]["test"] == "com.acme.shop.core.InventoryTest")
        .expect("a lens for the class")
        .clone();

    // Running the class's lens: the JUnit 5 tests run under the VM; each outcome is shown.
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": class_lens["command"]["command"], "arguments": class_lens["command"]["arguments"]}),
    );
    let msgs = until_log(&mut ed, "profiled com.acme.shop.core.InventoryTest");
    assert!(msgs.iter().any(|m| m["id"] == id), "the command is answered");
    let rest = until_log(&mut ed, "test com.acme.shop.core.InventoryTest#transfersBetweenWarehouses()");
    let logs: Vec<&str> = msgs.iter().chain(&rest).filter_map(log_text).collect();
    assert!(logs.contains(&"test com.acme.shop.core.InventoryTest#totalsAreSummed(): passed"), "{logs:?}");
    assert!(
        logs.iter().any(|l| l.starts_with(
            "test com.acme.shop.core.InventoryTest#discountIsAppliedOnce(): failed: discount applied twice"
        )),
        "{logs:?}"
    );
    assert!(logs.iter().any(|l| l.ends_with("skipped: warehouse transfers are not implemented yet")), "{logs:?}");
    // The failure is said to the user.
    let said = shown(&mut ed);
    let text = said["message"].as_str().unwrap();
    assert!(text.contains("1 passed, 1 failed, 1 skipped") && text.contains("discount applied twice"), "{text}");
    // The lenses show each test's outcome; clicking one runs that test again.
    let titles: Vec<String> =
        lenses(&mut ed, &test).iter().map(|l| l["command"]["title"].as_str().unwrap().to_string()).collect();
    assert!(titles.iter().any(|t| t == "✔ passed"), "{titles:?}");
    assert!(titles.iter().any(|t| t.starts_with("✘ failed: discount applied twice")), "{titles:?}");
    assert!(titles.iter().any(|t| t == "○ skipped: warehouse transfers are not implemented yet"), "{titles:?}");

    // One test method, from its lens: only it runs.
    ed.request(
        "workspace/executeCommand",
        json!({"command": "bloatlens.profile", "arguments": failing["command"]["arguments"]}),
    );
    let msgs = until_log(&mut ed, "test com.acme.shop.core.InventoryTest#discountIsAppliedOnce(): failed");
    let logs: Vec<&str> = msgs.iter().filter_map(log_text).collect();
    assert!(!logs.iter().any(|l| l.contains("totalsAreSummed")), "only the chosen test ran: {logs:?}");
    shown(&mut ed);

    // A JUnit 4 test of the other module runs through the vintage engine.
    let report_test = ed.open("app/src/test/java/com/acme/shop/app/ReportTest.java");
    ed.request(
        "workspace/executeCommand",
        json!({"command": "bloatlens.profile", "arguments": [report_test, {"test": "com.acme.shop.app.ReportTest#rendersOneLinePerOrder"}]}),
    );
    until_log(&mut ed, "test com.acme.shop.app.ReportTest#rendersOneLinePerOrder: passed");

    // A pom change: Maven is asked again (its answer is cached by the poms' content).
    let pom = file(&ed, "app/pom.xml");
    let text = std::fs::read_to_string(&pom).unwrap();
    std::fs::write(&pom, text.replace("</dependencies>", "  <!-- edited -->\n  </dependencies>")).unwrap();
    let msgs = until_log(&mut ed, "Maven: the class paths of 3 modules resolved in");
    eprintln!("after a pom change: {}", log_text(msgs.last().unwrap()).unwrap());
    assert!(msgs
        .iter()
        .filter_map(log_text)
        .any(|l| l.ends_with("app/pom.xml changed: Maven's class paths will be read again")));
    // The open file's run that the pom change started (it asked Maven again) ends, however long
    // Maven took.
    let run_ended = |m: &Value| {
        m["method"] == "$/progress"
            && m["params"]["value"]["kind"] == "end"
            && m["params"]["token"].as_str().is_some_and(|t| t.starts_with("bloatlens/profile/"))
    };
    if !msgs.iter().any(run_ended) {
        ed.until(run_ended);
    }
    ed.drain(std::time::Duration::from_secs(3));
    ed.finish();
}

#[test]
fn the_tests_in_a_folder_run_under_one_vm_each_with_its_outcome() {
    let mut ed = start("shop");
    let folder = |ed: &Editor, rel: &str| bloatlens_lsp::harness::uri(&file(ed, rel));
    // A folder of main code holds no tests: said, and nothing runs. (Asked at once: the project
    // may still be opening, and then the run says it once it is open.)
    let main_code = folder(&ed, "core/src/main/java/com/acme/shop/core");
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "bloatlens.profile", "arguments": [main_code, {"testsIn": main_code}]}),
    );
    let msgs = ed.until(|m| m["method"] == "window/showMessage");
    assert!(msgs.iter().any(|m| m["id"] == id && m.get("error").is_none()), "the command is answered: {msgs:?}");
    let said = &msgs.last().unwrap()["params"];
    assert_eq!(said["type"], 2, "a warning: {said}");
    assert_eq!(
        said["message"],
        "Bloatlens: core/src/main/java/com/acme/shop/core is not in a test source root and holds none (the test \
         sources are in core/src/test/java, app/src/test/java): choose a folder of the tests, a module's directory \
         or the project's"
    );
    if !msgs.iter().filter_map(log_text).any(|l| l.starts_with("Maven: the class paths of 3 modules resolved")) {
        until_log(&mut ed, "Maven: the class paths of 3 modules resolved in");
    }
    // A malformed argument is the request's error.
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "bloatlens.profile", "arguments": [null, {"testsIn": "core/src/test"}]}),
    );
    let answer = ed.until(|m| m["id"] == id);
    let error = &answer.last().unwrap()["error"];
    assert!(error["message"].as_str().unwrap().starts_with("`testsIn` is a folder's file URI"), "{error}");

    // The package's folder: both of core's test classes run, in one VM; app's test does not.
    let tests = folder(&ed, "core/src/test/java/com/acme/shop/core");
    ed.request(
        "workspace/executeCommand",
        json!({"command": "bloatlens.profile", "arguments": [tests, {"testsIn": tests}]}),
    );
    let msgs = until_log(&mut ed, "profiled tests in core/src/test/java/com/acme/shop/core in ");
    let logs: Vec<&str> = msgs.iter().filter_map(log_text).collect();
    assert!(
        logs.last().unwrap().ends_with("; entry point tests in core/src/test/java/com/acme/shop/core: chosen"),
        "{logs:?}"
    );
    // A test failed: said once every outcome is in the log.
    let rest = ed.until(|m| m["method"] == "window/showMessage");
    let logs: Vec<&str> = rest.iter().filter_map(log_text).collect();
    let test_lines: Vec<&str> = logs.iter().copied().filter(|l| l.starts_with("test ")).collect();
    for expected in [
        "test com.acme.shop.core.InventoryTest#totalsAreSummed(): passed",
        "test com.acme.shop.core.OrderTest#subtotalIgnoresDiscount(): passed",
        "test com.acme.shop.core.OrderTest#totalsAreComputedOnAWorkerThread(): passed",
        // The module's test resources are on the class path.
        "test com.acme.shop.core.OrderTest#formatsTheExpectedPricesOfTheTestResource(): passed",
    ] {
        assert!(test_lines.contains(&expected), "{expected}: {test_lines:#?}");
    }
    assert!(
        test_lines.iter().any(|l| l.starts_with(
            "test com.acme.shop.core.InventoryTest#discountIsAppliedOnce(): failed: discount applied twice"
        )),
        "{test_lines:#?}"
    );
    assert_eq!(test_lines.len(), 9, "3 of InventoryTest, 6 of OrderTest: {test_lines:#?}");
    assert!(
        !test_lines.iter().any(|l| l.contains("ReportTest")),
        "app's tests are outside the folder: {test_lines:#?}"
    );
    let said = &rest.last().unwrap()["params"];
    let text = said["message"].as_str().unwrap();
    assert!(
        text.starts_with("Bloatlens: tests in core/src/test/java/com/acme/shop/core — 7 passed, 1 failed, 1 skipped"),
        "{text}"
    );

    // Each class's lenses show its tests' outcomes, as after a class's run.
    let order_test = ed.open("core/src/test/java/com/acme/shop/core/OrderTest.java");
    let titles: Vec<String> =
        lenses(&mut ed, &order_test).iter().map(|l| l["command"]["title"].as_str().unwrap().to_string()).collect();
    assert_eq!(titles.iter().filter(|t| *t == "✔ passed").count(), 6, "{titles:?}");
    let inventory_test = ed.open(INVENTORY_TEST);
    let titles: Vec<String> =
        lenses(&mut ed, &inventory_test).iter().map(|l| l["command"]["title"].as_str().unwrap().to_string()).collect();
    assert!(titles.iter().any(|t| t.starts_with("✘ failed: discount applied twice")), "{titles:?}");
    ed.drain(std::time::Duration::from_secs(2));
    ed.finish();
}

#[test]
fn a_broken_pom_is_said_with_mavens_own_words() {
    let mut ed = start("broken-pom");
    let said = ed.until(|m| m["method"] == "window/showMessage");
    let msg = said.last().unwrap();
    assert_eq!(msg["params"]["type"], 1, "an error: {msg}");
    let text = msg["params"]["message"].as_str().unwrap();
    assert!(text.contains("Maven could not resolve the class paths of"), "{text}");
    assert!(
        text.contains("[FATAL] Non-parseable POM") && text.contains("/ws/pom.xml"),
        "Maven's line, the workspace's path: {text}"
    );
    assert!(!text.contains("/cache/"), "the cache's copy is not named: {text}");
    // A save says it again rather than running with a wrong class path.
    let main = ed.open("src/main/java/demo/Main.java");
    ed.save(&main);
    let msgs = ed.until(|m| m["method"] == "window/showMessage");
    assert!(msgs.last().unwrap()["params"]["message"].as_str().unwrap().contains("Non-parseable POM"));
    ed.drain(std::time::Duration::from_secs(1));
    ed.finish();
}

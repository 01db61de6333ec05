//! The real server binary under abuse: programs that nest calls from the VM back into Java until
//! the stack overflows, a hundred saves with edits in between, malformed messages; after all of
//! it a normal save must still produce findings, and memory stays bounded.

use bloatlens_lsp::harness::Editor;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

fn fixture(dir: &str, name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures").join(dir).join(name).join("Main.java"),
    )
    .unwrap()
}

/// Puts `text` in Main.java (on disk, where javac reads it, and in the editor), saves, and
/// returns everything the server sends until the run's log line.
fn replace_and_profile(ed: &mut Editor, u: &str, version: i64, text: &str) -> Vec<Value> {
    std::fs::write(ed.root.join("Main.java"), text).unwrap();
    ed.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": version}, "contentChanges": [{"text": text}]}),
    );
    ed.save(u);
    ed.until(|m| m["method"] == "window/logMessage")
}

fn published(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .flat_map(|m| m["params"]["diagnostics"].as_array().unwrap().clone())
        .collect()
}

#[test]
fn the_server_survives_deep_nesting_rapid_saves_and_garbage() {
    let chain = fixture("conformance", "clinit_chain_overflow");
    let reflective = fixture("conformance", "reflective_recursion_overflow");
    let normal = fixture("bloat", "result_per_call");
    let mut ed = Editor::start(Path::new(env!("CARGO_BIN_EXE_bloatlens-lsp")), &[("Main.java", &chain)], json!({}));
    let u = ed.open("Main.java");

    // Class initialisers nested until the stack overflows: a StackOverflowError in Java, caught
    // by the program; the server lives on. The same through Method.invoke.
    for (version, text) in [(2, &chain), (3, &reflective)] {
        let started = Instant::now();
        let seen = replace_and_profile(&mut ed, &u, version, text);
        let log = seen.last().unwrap()["params"]["message"].as_str().unwrap().to_string();
        assert!(log.starts_with("profiled Main"), "{log}");
        assert!(!seen.iter().any(|m| m["method"] == "window/showMessage"), "the program ran to its end: {seen:?}");
        eprintln!("deep nesting program {version}: {log} ({:?})", started.elapsed());
    }
    let before = ed.resident_bytes().unwrap();

    // A hundred saves, each after an edit, as fast as the pipe takes them.
    std::fs::write(ed.root.join("Main.java"), &normal).unwrap();
    let started = Instant::now();
    for i in 0..100 {
        let text = format!("{normal}// edit {i}\n");
        ed.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": u, "version": 10 + i}, "contentChanges": [{"text": text}]}),
        );
        ed.save(&u);
    }
    // Still answering while the saves are worked off.
    let id =
        ed.request("textDocument/hover", json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 0}}));
    let answered = Instant::now();
    ed.until(|m| m["id"] == id);
    let hover_latency = answered.elapsed();
    let rest = ed.drain(Duration::from_secs(5));
    let after = ed.resident_bytes().unwrap();
    eprintln!(
        "100 saves worked off in {:?}; a hover during them answered in {hover_latency:?}; {} messages after it; \
         resident memory {} MB before, {} MB after",
        started.elapsed(),
        rest.len(),
        before >> 20,
        after >> 20
    );
    assert!(hover_latency < Duration::from_secs(5), "the server stopped answering: {hover_latency:?}");
    assert!(after < before + (1 << 30), "memory grew from {} MB to {} MB", before >> 20, after >> 20);

    // Garbage on the wire is answered, not fatal.
    ed.send_raw(b"Content-Length: 5\r\n\r\n{{{{{");
    assert_eq!(ed.next_message()["error"]["code"], -32700);
    // Documents the server never saw, and a huge one.
    let unknown = bloatlens_lsp::harness::uri(&ed.root.join("Nowhere.java"));
    ed.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": unknown, "version": 1}, "contentChanges": [{"range": {"start": {"line": 3, "character": 0}, "end": {"line": 4, "character": 0}}, "text": "x"}]}),
    );
    let id = ed.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": unknown}, "position": {"line": 9, "character": 9}}),
    );
    ed.response(id);
    let huge = "// filler\n".repeat(500_000);
    let big = bloatlens_lsp::harness::uri(&ed.root.join("Huge.txt"));
    ed.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": big, "languageId": "java", "version": 1, "text": huge}}),
    );
    let id = ed.request("textDocument/codeLens", json!({"textDocument": {"uri": big}}));
    ed.response(id);

    // A normal save still produces findings.
    let seen = replace_and_profile(&mut ed, &u, 200, &normal);
    let diags = published(&seen);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "{seen:?}");
    ed.finish();
}

/// Each keystroke is applied on the task that publishes diagnostics: its cost must follow the
/// edit, not the document. A 50 MB one-line document edited 20,000 times, then a request: the
/// answer comes (before, every edit copied and rescanned the whole text: minutes behind).
#[test]
fn a_huge_document_edited_keystroke_by_keystroke_keeps_the_server_answering() {
    let server = Path::new(env!("CARGO_BIN_EXE_bloatlens-lsp"));
    let main = "public class Main { public static void main(String[] a) {} }\n";
    let mut ed = Editor::start(server, &[("Main.java", main)], json!({"profileOnSave": false}));
    let u = format!("file://{}", ed.root.join("Huge.java").display());
    let text = format!("// {}\n", "x".repeat(50 << 20));
    ed.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": u, "languageId": "java", "version": 1, "text": text}}),
    );
    for i in 0..20_000u32 {
        let at = json!({"line": 0, "character": (25 << 20) + i});
        ed.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": u, "version": i + 2}, "contentChanges": [{"range": {"start": at, "end": at}, "text": "y"}]}),
        );
    }
    let started = std::time::Instant::now();
    let id = ed.request("workspace/executeCommand", json!({"command": "bloatlens.status", "arguments": []}));
    let status = ed.response(id);
    assert!(status["status"].is_string(), "{status}");
    eprintln!("the answer after 20,000 edits of a 50 MB line came {:?} after they were sent", started.elapsed());
    // The edits landed: the lens request reads the edited text.
    let id = ed.request("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    assert_eq!(ed.response(id), json!([]));
    ed.finish();
}

/// What a run allocated goes back to the system when it ends: after a program that fills its
/// heap until OutOfMemoryError, and one that starts 10,000 threads, the server is back near
/// where it started (before, 1.4 GB and 810 MB stayed resident).
#[test]
fn memory_a_run_took_is_given_back_when_it_ends() {
    let oom = "import java.util.*;\npublic class Main {\n    public static void main(String[] args) {\n        List<Object> keep = new ArrayList<>();\n        try {\n            while (true) keep.add(new int[] {keep.size()});\n        } catch (OutOfMemoryError e) {\n            int n = keep.size();\n            keep = null;\n            System.out.println(\"OOM after \" + n);\n        }\n    }\n}\n";
    let threads = "public class Main {\n    public static void main(String[] args) throws Exception {\n        Thread[] ts = new Thread[10_000];\n        int[] sum = new int[1];\n        for (int i = 0; i < ts.length; i++) {\n            final int k = i;\n            ts[i] = new Thread(() -> { synchronized (sum) { sum[0] += k % 7; } });\n            ts[i].start();\n        }\n        for (Thread t : ts) t.join();\n        System.out.println(sum[0]);\n    }\n}\n";
    let server = Path::new(env!("CARGO_BIN_EXE_bloatlens-lsp"));
    let options = json!({"budgets": {"maxHeapMb": 256}});
    let mut ed = Editor::start(
        server,
        &[("Main.java", "public class Main { public static void main(String[] a) {} }\n")],
        options,
    );
    let u = ed.open("Main.java");
    ed.save(&u);
    ed.until(|m| m["method"] == "window/logMessage");
    ed.drain(Duration::from_secs(1));
    let before = ed.resident_bytes().unwrap();
    for (name, program) in [("OutOfMemoryError", oom), ("10,000 threads", threads)] {
        std::fs::write(ed.root.join("Main.java"), program).unwrap();
        ed.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}));
        ed.open("Main.java");
        ed.save(&u);
        let seen = ed.until(|m| {
            m["method"] == "window/logMessage"
                && m["params"]["message"].as_str().is_some_and(|s| s.starts_with("profiled"))
        });
        assert!(!seen.is_empty());
        ed.drain(Duration::from_secs(2));
        let after = ed.resident_bytes().unwrap();
        eprintln!("after {name}: resident {} MB (before the runs {} MB)", after >> 20, before >> 20);
        assert!(
            after < before + (200 << 20),
            "after {name} the server keeps {} MB (before: {} MB)",
            after >> 20,
            before >> 20
        );
    }
    ed.finish();
}

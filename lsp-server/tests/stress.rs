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
    assert!(diags.iter().any(|d| d["code"] == "nath"), "{seen:?}");
    ed.finish();
}

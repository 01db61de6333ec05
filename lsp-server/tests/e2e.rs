//! The server over its real transport: the `bloatlens-lsp` binary on stdio, driven as an editor
//! would (see `bloatlens_lsp::harness`). Every message the server sends must be consumed by the
//! test, in order; one left over at the end fails the test.

use bloatlens_lsp::harness::Editor;
use serde_json::{json, Value};
use std::path::Path;

fn start(files: &[(&str, &str)], options: Value) -> Editor {
    Editor::start(Path::new(env!("CARGO_BIN_EXE_bloatlens-lsp")), files, options)
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bloat").join(name).join("Main.java"),
    )
    .unwrap()
}

/// Saves `u` and consumes what a successful profile sends: progress, diagnostics, the log line.
fn save_and_profile(ed: &mut Editor, u: &str) -> Vec<Value> {
    save_and_profile_logged(ed, u).0
}

/// [`save_and_profile`], with the run's log line.
fn save_and_profile_logged(ed: &mut Editor, u: &str) -> (Vec<Value>, String) {
    ed.save(u);
    ed.progress();
    let diags = ed.diagnostics(u);
    let log = ed.notification("window/logMessage")["message"].as_str().unwrap().to_string();
    (diags, log)
}

/// The titles of the code lenses on `u`.
fn lens_titles(ed: &mut Editor, u: &str) -> Vec<String> {
    let id = ed.request("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    let lenses = ed.response(id);
    lenses.as_array().unwrap().iter().map(|l| l["command"]["title"].as_str().unwrap().to_string()).collect()
}

fn line_of(text: &str, needle: &str) -> u64 {
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle} not in the text")) as u64
}

#[test]
fn save_publishes_findings_with_lenses_and_hovers() {
    let src = fixture("result_per_call");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    ed.save(&u);
    ed.progress();
    let diags = ed.diagnostics(&u);
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().starts_with("profiled Main in "), "{log}");
    let nath = diags.iter().find(|d| d["data"]["kind"] == "nath").expect("a NATH diagnostic");
    assert_eq!(nath["source"], "bloatlens");
    let line = line_of(&src, "return new Stats(min, max);");
    assert_eq!(nath["range"]["start"]["line"], line);
    // The range is the `new` expression, not the whole line.
    let text_line = src.lines().nth(line as usize).unwrap();
    let col = text_line.find("new Stats").unwrap() as u64;
    assert_eq!(nath["range"]["start"]["character"], col);
    assert_eq!(nath["range"]["end"]["character"], col + "new Stats(min, max)".len() as u64);
    // Reading an array's smallest value into the result is the program's computation, no copy chain.
    assert!(!diags.iter().any(|d| d["data"]["kind"] == "copy-chain"), "{diags:?}");

    let titles = lens_titles(&mut ed, &u);
    assert!(titles.iter().any(|t| t == "▶ Profile with Bloatlens"), "{titles:?}");
    assert!(titles.iter().any(|t| t == "NATH: 500 temporary objects, never stored"), "{titles:?}");

    let id = ed.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": line, "character": col + 2}}),
    );
    let hover = ed.response(id);
    let md = hover["contents"]["value"].as_str().unwrap();
    // The pattern names the finding; the kind's glossary explains what the analysis saw.
    assert!(md.contains("Bloatlens · A result or carrier object per call") && md.contains("| objects | 500 |"), "{md}");
    assert!(md.contains("_NATH (never assigned to the heap)"), "{md}");
    assert_eq!(nath["code"], "result-object-per-call");
    assert!(
        nath["codeDescription"]["href"].as_str().unwrap().ends_with("docs/patterns.md#result-object-per-call"),
        "{nath}"
    );
    // Advice first (the diagnostic above it says what was seen), the figures last under their
    // heading, no evidence keys.
    assert!(md.starts_with("**Use the values directly"), "{md}");
    assert!(!md.contains(nath["message"].as_str().unwrap()), "the message is the diagnostic's: {md}");
    assert!(md.find("**Details**").unwrap() > md.find("a fix saves about").unwrap(), "{md}");
    assert!(!md.contains("call_return_nodes") && !md.contains("merge_key") && !md.contains("graph"), "{md}");
    ed.finish();
}

#[test]
fn chain_commands_walk_the_hops_with_show_document() {
    let src = fixture("two_hop_char_copy");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    let diags = save_and_profile(&mut ed, &u);
    let chain = diags.iter().find(|d| d["data"]["kind"] == "copy-chain").expect("the two-hop chain");
    // Copy chains carry their hops as related information.
    let related = chain["relatedInformation"].as_array().unwrap();
    assert!(related.iter().any(|r| r["message"].as_str().unwrap().starts_with("hop 1 of 2: loaded")), "{chain}");
    let start = chain["range"]["start"].clone();
    let id = ed.request("workspace/executeCommand", json!({"command": "bloatlens.nextHop", "arguments": [u, start]}));
    let (result, shown) = ed.command_showing(id);
    assert_eq!(result["hop"], 1);
    assert_eq!(result["message"], format!("stop 2 of {} of the copy chain", result["of"]), "{result}");
    let load_line = line_of(&src, "char c = from[i];");
    assert_eq!(shown["selection"]["start"]["line"], load_line, "the first hop's load");
    assert_eq!(shown["uri"], u);
    // From the load, the next hop is the store; back from there is the load again.
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "bloatlens.nextHop", "arguments": [u, {"line": load_line, "character": 0}]}),
    );
    let (_, shown) = ed.command_showing(id);
    assert_eq!(shown["selection"]["start"]["line"], line_of(&src, "to[i] = c;"));
    // The store's line is also the finding's: the stop the client is at says where it is in the
    // chain, so the walk goes on to the second hop's load instead of back to the first.
    let store = json!({"line": line_of(&src, "to[i] = c;"), "character": 0});
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "bloatlens.nextHop", "arguments": [u, store, {"stop": 2}]}),
    );
    let (result, shown) = ed.command_showing(id);
    assert_eq!(result["hop"], 3, "{result}");
    assert_eq!(shown["selection"]["start"]["line"], load_line);
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "bloatlens.prevHop", "arguments": [u, store, {"stop": 2}]}),
    );
    let (result, _) = ed.command_showing(id);
    assert_eq!(result["hop"], 1, "{result}");
    let id = ed.request("workspace/executeCommand", json!({"command": "bloatlens.showChain", "arguments": [u, start]}));
    let (chain, _) = ed.command_showing(id);
    assert_eq!(chain["kind"], "copy-chain");
    assert!(chain["hops"].as_array().unwrap().len() >= 3, "{chain}");
    ed.finish();
}

/// Every finding's lens opens that finding: its command names it, whatever else its line or the
/// file holds (a clone's lens used to open the file's copy chain; a low-utility lens, the file's
/// first finding). The places come back as VS Code's picker asks for them (`reveal: false`).
#[test]
fn a_lens_opens_its_own_finding() {
    for fixture_name in ["two_hop_char_copy", "list_for_null_check", "repeated_work"] {
        let src = fixture(fixture_name);
        let mut ed = start(&[("Main.java", &src)], json!({"maxLensesPerFile": 10}));
        let u = ed.open("Main.java");
        let diags = save_and_profile(&mut ed, &u);
        let id = ed.request("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
        let lenses = ed.response(id);
        let findings: Vec<&Value> =
            lenses.as_array().unwrap().iter().filter(|l| l["command"]["command"] == "bloatlens.showChain").collect();
        assert!(findings.len() >= 2, "{fixture_name}: {lenses}");
        for lens in findings {
            let mut args = lens["command"]["arguments"].as_array().unwrap().clone();
            let key =
                args[2]["finding"].as_str().unwrap_or_else(|| panic!("the lens names its finding: {lens}")).to_string();
            args[2]["reveal"] = json!(false);
            let id =
                ed.request("workspace/executeCommand", json!({"command": "bloatlens.showChain", "arguments": args}));
            let places = ed.response(id);
            assert_eq!(places["key"], key, "{fixture_name}: {lens} opened {places}");
            assert_eq!(places["hops"][0]["range"], lens["range"], "{fixture_name}: {lens} opened {places}");
            // The finding the line's diagnostic data lists (a line's lens is its top finding).
            let line = lens["range"]["start"]["line"].clone();
            let diag =
                diags.iter().find(|d| d["range"]["start"]["line"] == line).expect("a diagnostic on the lens's line");
            assert_eq!(places["kind"].as_str(), key.split('|').next(), "{places}");
            assert!(diag["data"]["keys"].as_array().unwrap().contains(&json!(key)), "{diag}");
            let title = places["title"].as_str().unwrap();
            assert!(
                title.ends_with(&format!(
                    " · {} place{}",
                    places["hops"].as_array().unwrap().len(),
                    if places["hops"].as_array().unwrap().len() == 1 { "" } else { "s" }
                )),
                "{title}"
            );
        }
        ed.finish();
    }
}

/// Next Hop walks whatever the finding on the line has places for, and says what it walks: a
/// bottleneck's call path is not a copy chain.
#[test]
fn next_hop_on_a_call_path_says_call_path() {
    let src = fixture("decode_whole_map");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    let diags = save_and_profile(&mut ed, &u);
    let path = diags.iter().find(|d| d["data"]["kind"] == "bottleneck").expect("the bottleneck");
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "bloatlens.nextHop", "arguments": [u, path["range"]["start"]]}),
    );
    let (result, shown) = ed.command_showing(id);
    assert_eq!(result["kind"], "bottleneck", "{result}");
    assert!(result["of"].as_u64().unwrap() >= 2, "{result}");
    assert_eq!(result["message"], format!("stop 2 of {} of the call path", result["of"]), "{result}");
    assert_eq!(shown["selection"], result["range"]);
    ed.finish();
}

/// A call's finding covers the call (`parts[i].substring(…)`), not an argument of it that is of a
/// kind ranked higher elsewhere (the concatenation or sum inside it).
#[test]
fn a_calls_squiggle_covers_the_call() {
    let src = fixture("repeated_work");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    ed.save(&u);
    ed.progress();
    let diags = ed.diagnostics(&u);
    let log = ed.notification("window/logMessage");
    let line = line_of(&src, "out[i] = Integer.parseInt(parts[i].substring(");
    let nath = diags.iter().find(|d| d["range"]["start"]["line"] == line).expect("the substring's NATH finding");
    assert_eq!(nath["data"]["kind"], "nath", "{nath}");
    let text = src.lines().nth(line as usize).unwrap();
    let (start, end) =
        (nath["range"]["start"]["character"].as_u64().unwrap(), nath["range"]["end"]["character"].as_u64().unwrap());
    assert_eq!(&text[start as usize..end as usize], "parts[i].substring(parts[i].indexOf('=') + 1)");
    // The log says how many findings there are, how many are shown, and why the others are not.
    let message = log["message"].as_str().unwrap();
    let counts = message.split("): ").nth(1).unwrap_or_else(|| panic!("{message}"));
    let (total, rest) = counts.split_once(" findings, ").unwrap_or_else(|| panic!("{message}"));
    let (shown, why) = rest.split_once(" shown").unwrap_or_else(|| panic!("{message}"));
    let (total, shown): (usize, usize) = (total.parse().unwrap(), shown.parse().unwrap());
    assert!(shown > 0 && shown < total, "{message}");
    let lines = diags.len();
    assert!(why.starts_with(&format!(" on {lines} lines (")) || (shown == lines && why.starts_with(" (")), "{message}");
    let hidden: usize = why
        .split('(')
        .nth(1)
        .unwrap()
        .trim_end_matches(')')
        .split(", ")
        .map(|part| part.split(' ').next().unwrap().parse::<usize>().unwrap_or_else(|_| panic!("{message}")))
        .sum();
    assert_eq!(shown + hidden, total, "every finding is accounted for: {message}");
    assert!(why.contains("under 0.5% of the run"), "{message}");
    ed.finish();
}

#[test]
fn compile_errors_become_diagnostics_and_the_server_keeps_going() {
    let bad = "public class Main {\n    public static void main(String[] args) {\n        int x = \"no\";\n        int total = 0; for (int i = 0; i < 10; i++) { total += i } System.out.println(total);\n    }\n}\n";
    let mut ed = start(&[("Main.java", bad)], json!({}));
    let u = ed.open("Main.java");
    ed.save(&u);
    ed.progress();
    let diags = ed.diagnostics(&u);
    // javac stops at the syntax error: the one it reports, at its column (javac's 65, 1-based).
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["severity"], 1);
    assert_eq!((&diags[0]["source"], &diags[0]["code"]), (&json!("bloatlens"), &json!("javac")), "one label");
    assert_eq!(diags[0]["range"]["start"], json!({"line": 3, "character": 64}), "{diags:?}");
    assert!(diags[0]["message"].as_str().unwrap().contains("';' expected"));
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().contains("Main does not compile: 1 javac errors"), "{log}");
    // Fixed on disk and saved again: the error goes away.
    std::fs::write(ed.root.join("Main.java"), fixture("result_per_call")).unwrap();
    ed.save(&u);
    ed.progress();
    let diags = ed.diagnostics(&u);
    assert!(diags.iter().all(|d| d["source"] == "bloatlens" && d["code"] != "javac"), "{diags:?}");
    ed.notification("window/logMessage");
    ed.finish();
}

#[test]
fn a_program_that_throws_or_hits_its_budget_is_reported_as_such() {
    let src = "public class Main {\n    static final class P { int a; P(int a) { this.a = a; } }\n    public static void main(String[] args) {\n        long s = 0;\n        for (int i = 0; i < 300; i++) s += new P(i).a;\n        if (s > 0) throw new IllegalStateException(\"boom\");\n    }\n}\n";
    let mut ed = start(&[("Main.java", src)], json!({}));
    let u = ed.open("Main.java");
    ed.save(&u);
    ed.progress();
    let diags = ed.diagnostics(&u);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "{diags:?}");
    let msg = ed.notification("window/showMessage");
    assert!(msg["message"].as_str().unwrap().contains("threw"), "{msg}");
    ed.notification("window/logMessage");
    ed.finish();

    let looping = "public class Main {\n    public static void main(String[] args) {\n        long s = 0;\n        while (true) s += s * 31 + 1;\n    }\n}\n";
    let mut ed = start(&[("Main.java", looping)], json!({"budgets": {"maxInstructions": 5000000}}));
    let u = ed.open("Main.java");
    ed.save(&u);
    ed.progress();
    assert_eq!(ed.diagnostics(&u), Vec::<Value>::new(), "nothing found before the stop");
    let msg = ed.notification("window/showMessage");
    let text = msg["message"].as_str().unwrap();
    assert!(text.contains("instruction budget"), "{msg}");
    assert!(text.contains("in Main.main (Main.java:4)"), "where it looped: {msg}");
    ed.notification("window/logMessage");
    ed.finish();
}

#[test]
fn a_second_save_cancels_the_first_run() {
    // Long enough that the second save lands while the first run is going.
    let slow = "public class Main {\n    static final class P { int a; P(int a) { this.a = a; } }\n    public static void main(String[] args) {\n        long s = 0;\n        for (int i = 0; i < 3_000_000; i++) s += new P(i).a;\n        System.out.println(s);\n    }\n}\n";
    let mut ed = start(&[("Main.java", slow)], json!({}));
    let u = ed.open("Main.java");
    ed.save(&u);
    let first = ed.server_request("window/workDoneProgress/create", Value::Null);
    let begin = ed.notification("$/progress");
    assert_eq!(begin["value"]["kind"], "begin");
    ed.save(&u);
    // The second run's progress starts; the first ends without publishing.
    let mut ends = Vec::new();
    let mut second = None;
    while ends.len() < 2 {
        let m = ed.next_message();
        match m["method"].as_str() {
            Some("window/workDoneProgress/create") => {
                // One progress indicator at a time: the cancelled run's ended first.
                assert_eq!(ends, vec![first["token"].clone()], "the second progress began before the first ended");
                second = Some(m["params"]["token"].clone());
                ed.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": null}));
            }
            Some("$/progress") if m["params"]["value"]["kind"] == "end" => ends.push(m["params"]["token"].clone()),
            Some("$/progress") => assert_eq!(m["params"]["value"]["kind"], "begin"),
            _ => panic!("unexpected while two runs overlap: {m}"),
        }
    }
    assert_eq!(ends[0], first["token"], "the cancelled run ends first");
    assert_eq!(ends[1], second.unwrap());
    let diags = ed.diagnostics(&u);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "{diags:?}");
    ed.notification("window/logMessage");
    ed.finish();
}

#[test]
fn edits_mark_findings_stale_or_move_them() {
    let src = fixture("result_per_call");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    let diags = save_and_profile(&mut ed, &u);
    let nath_line =
        diags.iter().find(|d| d["data"]["kind"] == "nath").unwrap()["range"]["start"]["line"].as_u64().unwrap();
    // A line inserted at the top moves every finding down by one.
    ed.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2}, "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "// note\n"}]}),
    );
    let moved = ed.diagnostics(&u);
    let nath = moved.iter().find(|d| d["data"]["kind"] == "nath").unwrap();
    assert_eq!(nath["range"]["start"]["line"], nath_line + 1);
    assert!(!nath["message"].as_str().unwrap().contains("stale"));
    // An edit on the finding's own line makes it stale.
    ed.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 3}, "contentChanges": [{"range": {"start": {"line": nath_line + 1, "character": 0}, "end": {"line": nath_line + 1, "character": 0}}, "text": " "}]}),
    );
    let stale = ed.diagnostics(&u);
    let nath = stale.iter().find(|d| d["data"]["kind"] == "nath").unwrap();
    assert!(nath["message"].as_str().unwrap().contains("stale"), "{nath}");
    assert_eq!(nath["severity"], 4);
    ed.finish();
}

#[test]
fn a_change_outside_the_document_leaves_the_server_working() {
    let src = fixture("result_per_call");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    save_and_profile(&mut ed, &u);
    // A reversed range whose start lies far past the end (the state task used to panic slicing it).
    ed.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2}, "contentChanges": [{"range": {"start": {"line": 9999, "character": 5}, "end": {"line": 1, "character": 0}}, "text": "x"}]}),
    );
    let stale = ed.diagnostics(&u);
    assert!(stale.iter().all(|d| d["message"].as_str().unwrap().contains("stale")), "{stale:?}");
    // The state task is alive: the client resyncs the whole text, and a save profiles and publishes.
    ed.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 3}, "contentChanges": [{"text": src}]}),
    );
    ed.diagnostics(&u);
    let diags = save_and_profile(&mut ed, &u);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "{diags:?}");
    ed.finish();
}

/// A program that reads `System.in` under the server reads nothing (its stdin is the editor's
/// protocol stream): it sees the end of input, and the server keeps answering.
#[test]
fn a_program_reading_stdin_reads_nothing_from_the_editor() {
    let src = r#"
import java.io.*;
public class Main {
    static final class Box { final int v; Box(int v) { this.v = v; } }
    public static void main(String[] args) throws IOException {
        String line = new BufferedReader(new InputStreamReader(System.in)).readLine();
        long s = 0;
        for (int i = 0; i < 500; i++) s += new Box(i).v;
        System.out.println("read " + line + " " + s);
    }
}
"#;
    let mut ed = start(&[("Main.java", src)], json!({}));
    let u = ed.open("Main.java");
    let diags = save_and_profile(&mut ed, &u);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "{diags:?}");
    let id =
        ed.request("textDocument/hover", json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 0}}));
    ed.response(id);
    ed.finish();
}

#[test]
fn findings_on_one_line_are_one_diagnostic_with_one_hover() {
    // A business program whose lines hold several kinds at once (a temporary map that is also
    // the hop of a copy chain, a concatenation with a lifetime and a NATH finding).
    let src = fixture("corpus/customer_dto_mapping");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    let diags = save_and_profile(&mut ed, &u);
    let mut lines: Vec<u64> = diags.iter().map(|d| d["range"]["start"]["line"].as_u64().unwrap()).collect();
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines.len(), diags.len(), "one diagnostic a line: {diags:#?}");
    let shared = diags
        .iter()
        .find(|d| d["data"]["keys"].as_array().unwrap().len() >= 2)
        .unwrap_or_else(|| panic!("a line with two findings: {diags:#?}"));
    let message = shared["message"].as_str().unwrap();
    assert!(message.contains("\nAlso "), "the others follow the lead: {message}");
    assert!(!message.contains('$') && !message.contains("java.lang."), "source names: {message}");
    // One hover for the line: every finding, the lead first, the figures once at the end.
    let id =
        ed.request("textDocument/hover", json!({"textDocument": {"uri": u}, "position": shared["range"]["start"]}));
    let md = ed.response(id)["contents"]["value"].as_str().unwrap().to_string();
    let kinds = md.matches("Bloatlens · ").count();
    assert_eq!(kinds, shared["data"]["keys"].as_array().unwrap().len(), "{md}");
    assert_eq!(md.matches("**Details**").count(), 1, "{md}");
    // Suppressing the line's diagnostic suppresses all its findings.
    let id = ed.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": shared["range"], "context": {"diagnostics": [shared]}}),
    );
    let actions = ed.response(id);
    let id = ed.request("workspace/executeCommand", actions[0]["command"].clone());
    let (_, published) = ed.response_and(id, "textDocument/publishDiagnostics", Value::Null);
    let after = published["diagnostics"].as_array().unwrap();
    assert_eq!(after.len(), diags.len() - 1, "{after:#?}");
    assert!(after.iter().all(|d| d["range"]["start"]["line"] != shared["range"]["start"]["line"]), "{after:#?}");
    ed.finish();
}

#[test]
fn a_suppressed_finding_disappears_and_stays_suppressed() {
    let src = fixture("result_per_call");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    let diags = save_and_profile(&mut ed, &u);
    let nath = diags.iter().find(|d| d["data"]["kind"] == "nath").unwrap().clone();
    let id = ed.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": nath["range"], "context": {"diagnostics": [nath]}}),
    );
    let actions = ed.response(id);
    let action = &actions[0];
    assert!(
        action["title"].as_str().unwrap().starts_with("Suppress this Bloatlens finding (result-object-per-call)"),
        "{action}"
    );
    let id = ed.request("workspace/executeCommand", action["command"].clone());
    let (_, published) = ed.response_and(id, "textDocument/publishDiagnostics", Value::Null);
    assert_eq!(published["uri"], u);
    let after = published["diagnostics"].as_array().unwrap().clone();
    assert!(after.iter().all(|d| d["data"]["kind"] != "nath"), "{after:?}");
    assert_eq!(after.len(), diags.len() - 1);
    let saved = std::fs::read_to_string(ed.root.join(".bloatlens/suppressions.json")).unwrap();
    assert!(saved.contains("nath|Main.stats"), "{saved}");
    // The next profile keeps it suppressed.
    ed.save(&u);
    ed.progress();
    assert!(ed.diagnostics(&u).iter().all(|d| d["data"]["kind"] != "nath"));
    ed.notification("window/logMessage");
    ed.finish();
}

#[test]
fn several_mains_ask_for_a_choice_and_the_choice_sticks() {
    let a = "public class A {\n    public static void main(String[] args) { System.out.println(new StringBuilder(\"a\")); }\n}\n";
    let b = fixture("result_per_call").replace("public class Main", "public class B");
    let util = "public class Util {\n    static int twice(int x) { return 2 * x; }\n}\n";
    let mut ed = start(&[("A.java", a), ("B.java", &b), ("Util.java", util)], json!({}));
    let uu = ed.open("Util.java");
    ed.save(&uu);
    // No entry point yet and two mains: the log says so each time, a message once, and the status
    // asks for a choice until one is made.
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().contains("2 classes have a main method"), "{log}");
    let msg = ed.notification("window/showMessage");
    assert!(msg["message"].as_str().unwrap().contains("2 classes have a main method"), "{msg}");
    ed.save(&uu);
    ed.notification("window/logMessage");
    let id = ed.request("workspace/executeCommand", json!({"command": "bloatlens.status", "arguments": []}));
    assert!(ed.response(id)["status"].as_str().unwrap().starts_with("Choose"), "the status asks for a choice");
    // The lens command chooses B.
    let bu = harness_uri(&ed, "B.java");
    let id = ed.request("workspace/executeCommand", json!({"command": "bloatlens.profile", "arguments": [bu, "B"]}));
    let (_, created) = ed.response_and(id, "window/workDoneProgress/create", Value::Null);
    ed.progress_after_create(created);
    let diags = ed.diagnostics(&bu);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "{diags:?}");
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().ends_with("; entry point B: chosen"), "{log}");
    // Saving A, which has a main of its own, still profiles B: only a choice changes the entry point.
    let au = ed.open("A.java");
    ed.save(&au);
    ed.progress();
    let diags = ed.diagnostics(&bu);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "{diags:?}");
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().starts_with("profiled B in"), "{log}");
    // A new class with a main, created on disk, changes nothing either.
    std::fs::write(ed.root.join("C.java"), a.replace("class A", "class C")).unwrap();
    ed.progress();
    ed.diagnostics(&bu);
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().starts_with("profiled B in"), "{log}");
    // Choosing A (its lens) switches: B's findings are cleared, A's published (none: an empty list).
    let id = ed.request("workspace/executeCommand", json!({"command": "bloatlens.profile", "arguments": [au, "A"]}));
    let (_, created) = ed.response_and(id, "window/workDoneProgress/create", Value::Null);
    ed.progress_after_create(created);
    let mut seen =
        [ed.notification("textDocument/publishDiagnostics"), ed.notification("textDocument/publishDiagnostics")];
    seen.sort_by_key(|p| p["uri"].as_str().unwrap().to_string());
    assert_eq!(seen[0]["uri"], au);
    assert_eq!(seen[1]["uri"], bu);
    assert_eq!(seen[1]["diagnostics"], json!([]));
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().starts_with("profiled A in"), "{log}");
    ed.finish();
}

#[test]
fn later_saves_run_on_a_jdk_booted_ahead_unless_it_boots_otherwise() {
    let src = fixture("result_per_call");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    let first = save_and_profile_logged(&mut ed, &u).1;
    assert!(first.starts_with("profiled Main in ") && !first.contains("booted ahead"), "{first}");
    let second = save_and_profile_logged(&mut ed, &u).1;
    assert!(second.contains(" on a JDK booted ahead)"), "{second}");
    // Other arguments are the run's own: the VM booted ahead runs them.
    ed.notify("workspace/didChangeConfiguration", json!({"settings": {"bloatlens": {"args": ["7"]}}}));
    let third = save_and_profile_logged(&mut ed, &u).1;
    assert!(third.contains(" on a JDK booted ahead)"), "{third}");
    // The analyses are made before the JDK boots, with their thresholds: other thresholds, another VM.
    ed.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"bloatlens": {"args": ["7"], "thresholds": {"minCopies": 3}}}}),
    );
    let fourth = save_and_profile_logged(&mut ed, &u).1;
    assert!(!fourth.contains("booted ahead"), "{fourth}");
    ed.finish();

    let mut ed = start(&[("Main.java", &src)], json!({"bootAhead": false}));
    let u = ed.open("Main.java");
    for _ in 0..2 {
        let line = save_and_profile_logged(&mut ed, &u).1;
        assert!(line.starts_with("profiled Main in ") && !line.contains("booted ahead"), "{line}");
    }
    ed.finish();
}

#[test]
fn a_remembered_entry_point_is_used_from_the_start() {
    let a = "public class A {\n    public static void main(String[] args) { System.out.println(new StringBuilder(\"a\")); }\n}\n";
    let b = fixture("result_per_call").replace("public class Main", "public class B");
    let mut ed = start(&[("A.java", a), ("B.java", &b)], json!({"entryPoint": "B"}));
    let au = ed.open("A.java");
    ed.save(&au);
    ed.progress();
    let diags = ed.diagnostics(&harness_uri(&ed, "B.java"));
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "{diags:?}");
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().starts_with("profiled B in"), "{log}");
    ed.finish();
}

fn harness_uri(ed: &Editor, name: &str) -> String {
    bloatlens_lsp::harness::uri(&ed.root.join(name))
}

#[test]
fn a_change_on_disk_reprofiles_and_a_bad_jdk_is_said() {
    let src = fixture("result_per_call");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = harness_uri(&ed, "Main.java");
    // Not opened in the editor: a tool rewrites it on disk.
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(ed.root.join("Main.java"), src.replace("500", "600")).unwrap();
    ed.progress();
    let diags = ed.diagnostics(&u);
    let nath = diags.iter().find(|d| d["data"]["kind"] == "nath").expect("profiled after the change on disk");
    assert!(nath["message"].as_str().unwrap().contains("all 600 objects"), "{nath}");
    ed.notification("window/logMessage");
    ed.finish();

    let mut ed = start(&[("Main.java", &src)], json!({"jdkPath": "/nonexistent/jdk"}));
    let u = ed.open("Main.java");
    ed.save(&u);
    ed.progress();
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().contains("javac not found"), "the log says it too: {log}");
    let msg = ed.notification("window/showMessage");
    assert_eq!(msg["type"], 1, "an error: {msg}");
    assert!(msg["message"].as_str().unwrap().contains("javac not found"), "{msg}");
    // The server still answers.
    let id = ed.request("workspace/executeCommand", json!({"command": "bloatlens.status", "arguments": []}));
    let status = ed.response(id);
    assert!(status["status"].as_str().unwrap().starts_with("Failed"), "{status}");
    ed.finish();
}

#[test]
fn the_progress_cancel_button_stops_the_run_without_publishing() {
    let slow = "public class Main {\n    public static void main(String[] args) {\n        long s = 0;\n        for (long i = 0; i < 4_000_000_000L; i++) s += i % 7;\n        System.out.println(s);\n    }\n}\n";
    let mut ed = start(&[("Main.java", slow)], json!({}));
    let u = ed.open("Main.java");
    ed.save(&u);
    let created = ed.server_request("window/workDoneProgress/create", Value::Null);
    let begin = ed.notification("$/progress");
    assert_eq!(begin["value"]["kind"], "begin");
    ed.notify("window/workDoneProgress/cancel", json!({"token": created["token"]}));
    // The cancel is said in the log, the progress ends, and the status says cancelled.
    let mut seen = [ed.next_message(), ed.next_message()];
    seen.sort_by_key(|m| m["method"].as_str().unwrap().to_string());
    assert_eq!(seen[0]["params"]["value"]["kind"], "end", "{seen:?}");
    assert!(seen[1]["params"]["message"].as_str().unwrap().starts_with("cancelled the profile of Main"), "{seen:?}");
    let id = ed.request("workspace/executeCommand", json!({"command": "bloatlens.status", "arguments": []}));
    let status = ed.response(id);
    assert!(status["status"].as_str().unwrap().starts_with("Cancelled"), "{status}");
    ed.finish();
}

#[test]
fn a_save_seen_by_both_the_editor_and_the_watcher_profiles_once() {
    let src = fixture("result_per_call");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    std::thread::sleep(std::time::Duration::from_millis(300));
    // The editor writes the file and says so: the watcher sees the write too.
    std::fs::write(ed.root.join("Main.java"), src.replace("500", "400")).unwrap();
    ed.save(&u);
    ed.progress();
    let diags = ed.diagnostics(&u);
    assert!(diags.iter().any(|d| d["message"].as_str().unwrap().contains("all 400 objects")), "{diags:?}");
    ed.notification("window/logMessage");
    // No second run follows (finish fails on any further message).
    std::thread::sleep(std::time::Duration::from_millis(800));
    ed.finish();
}

#[test]
fn a_second_save_shows_how_a_bottleneck_changed_since_the_last_run() {
    let src = fixture("repeated_security_check");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    let diags = save_and_profile(&mut ed, &u);
    let b = diags.iter().find(|d| d["data"]["kind"] == "bottleneck").expect("the bottleneck");
    let line = line_of(&src, "if (!checkPermission(");
    assert_eq!(b["range"]["start"]["line"], line, "at the check's call in handle");
    let titles = lens_titles(&mut ed, &u);
    let first = titles.iter().find(|t| t.starts_with("Bottleneck: ")).unwrap_or_else(|| panic!("{titles:?}"));
    assert!(first.contains("% of the run's instructions") && !first.contains("since"), "{first}");
    let id = ed.request("textDocument/hover", json!({"textDocument": {"uri": u}, "position": b["range"]["start"]}));
    let md = ed.response(id)["contents"]["value"].as_str().unwrap().to_string();
    assert!(md.contains("Call path: `Main.main → Main.handle → Main.checkPermission"), "{md}");

    // Half as many requests again: the path through the check costs about 50% more.
    let more = src.replace("r < 2000", "r < 3000");
    std::fs::write(ed.root.join("Main.java"), &more).unwrap();
    save_and_profile(&mut ed, &u);
    let titles = lens_titles(&mut ed, &u);
    let again = titles.iter().find(|t| t.starts_with("Bottleneck: ")).unwrap_or_else(|| panic!("{titles:?}"));
    assert!(again.contains("▲ 4") || again.contains("▲ 5"), "about +50% since the last run: {again}");
    ed.finish();
}

#[test]
fn a_client_that_asks_gets_status_entry_points_and_the_hops_for_its_own_picker() {
    let src = fixture("two_hop_char_copy");
    let other = "public class Other {\n    public static void main(String[] args) { System.out.println(1); }\n}\n";
    let server = Path::new(env!("CARGO_BIN_EXE_bloatlens-lsp"));
    let files = [("Main.java", src.as_str()), ("Other.java", other)];
    let mut ed = Editor::start_with(server, &files, json!({}), json!({"experimental": {"bloatlensStatus": true}}));
    let idle = ed.notification("bloatlens/status");
    assert_eq!(idle, json!({"state": "idle", "findings": 0, "stale": 0}));

    let id = ed.request("workspace/executeCommand", json!({"command": "bloatlens.entryPoints", "arguments": []}));
    let mut mains: Vec<(String, String)> = ed
        .response(id)
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["class"].as_str().unwrap().to_string(), m["uri"].as_str().unwrap().to_string()))
        .collect();
    mains.sort();
    assert_eq!(
        mains,
        [("Main".into(), harness_uri(&ed, "Main.java")), ("Other".into(), harness_uri(&ed, "Other.java"))]
    );

    // A save: running, then done with the findings' count, beside the usual messages.
    let u = ed.open("Main.java");
    ed.save(&u);
    let seen = ed.until(|m| m["method"] == "bloatlens/status" && m["params"]["state"] == "done");
    let statuses: Vec<&Value> =
        seen.iter().filter(|m| m["method"] == "bloatlens/status").map(|m| &m["params"]).collect();
    assert_eq!((&statuses[0]["state"], &statuses[1]["state"]), (&json!("compiling"), &json!("running")));
    assert_eq!(statuses[0]["mainClass"], "Main");
    assert_eq!(statuses[0]["run"], statuses[1]["run"], "compiling and running are one run");
    let done = statuses.last().unwrap();
    let published = seen.iter().find(|m| m["method"] == "textDocument/publishDiagnostics").expect("diagnostics");
    let diags = published["params"]["diagnostics"].as_array().unwrap();
    assert_eq!(done["findings"].as_u64().unwrap(), diags.len() as u64);
    assert!(done["millis"].as_u64().unwrap() > 0, "{done}");
    if !seen.iter().any(|m| m["method"] == "window/logMessage") {
        ed.notification("window/logMessage");
    }

    // The chain's hops without a jump: the client shows them its own way.
    let chain = diags.iter().find(|d| d["data"]["kind"] == "copy-chain").expect("the two-hop chain");
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "bloatlens.showChain", "arguments": [u, chain["range"]["start"], {"reveal": false}]}),
    );
    let hops = ed.response(id);
    assert!(hops["hops"].as_array().unwrap().len() >= 3, "{hops}");

    // An edit on the chain's line makes it stale, and the status says so.
    let line = chain["range"]["start"]["line"].clone();
    ed.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2}, "contentChanges": [{
            "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": " "}]}),
    );
    ed.diagnostics(&u);
    let stale = ed.notification("bloatlens/status");
    assert!(stale["stale"].as_u64().unwrap() >= 1, "{stale}");
    ed.finish();
}

#[test]
fn malformed_messages_are_answered_and_the_server_keeps_working() {
    let src = fixture("result_per_call");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    // A body that is not JSON, one that is not UTF-8, a Content-Length that is not a number.
    ed.send_raw(b"Content-Length: 9\r\n\r\n{not json");
    let parse = ed.next_message();
    assert_eq!((parse["id"].clone(), parse["error"]["code"].clone()), (Value::Null, json!(-32700)), "{parse}");
    ed.send_raw(b"Content-Length: 4\r\n\r\n\"\xff\xfe\"");
    let utf8 = ed.next_message();
    assert_eq!(utf8["error"]["code"], -32700, "{utf8}");
    assert!(utf8["error"]["message"].as_str().unwrap().contains("UTF-8"), "{utf8}");
    ed.send_raw(b"Content-Length: lots\r\n\r\n");
    assert_eq!(ed.next_message()["error"]["code"], -32700);
    // JSON, but not JSON-RPC: an invalid request, answered with its id.
    ed.send_raw(b"Content-Length: 24\r\n\r\n{\"id\": 42, \"params\": {}}");
    let invalid = ed.next_message();
    assert_eq!((invalid["id"].clone(), invalid["error"]["code"].clone()), (json!(42), json!(-32600)), "{invalid}");
    // The session goes on: a save profiles and publishes.
    let diags = save_and_profile(&mut ed, &u);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "{diags:?}");
    ed.finish();
}

#[test]
fn exit_ends_the_server_within_a_second_while_a_program_sleeps() {
    let src = "public class Main {\n    public static void main(String[] args) throws Exception {\n        Thread.sleep(600_000);\n    }\n}\n";
    let mut ed = start(&[("Main.java", src)], json!({}));
    let u = ed.open("Main.java");
    ed.save(&u);
    ed.server_request("window/workDoneProgress/create", Value::Null);
    assert_eq!(ed.notification("$/progress")["value"]["kind"], "begin");
    // Let the program reach its sleep.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let took = ed.finish_timed();
    assert!(took < std::time::Duration::from_secs(1), "the server took {took:?} to end after `exit`");
    eprintln!("the server ended {took:?} after `exit` while its program slept");
}

#[test]
fn the_chain_walk_stays_on_its_chain_through_lines_with_other_findings() {
    // The copy chain found on line 63 passes line 18, where another copy chain starts.
    let src = fixture("corpus/payroll_summary");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    save_and_profile(&mut ed, &u);
    let walk = |ed: &mut Editor, command: &str, at: &Value, extra: Option<Value>| {
        let mut args = vec![json!(u), at.clone()];
        args.extend(extra);
        let id = ed.request("workspace/executeCommand", json!({"command": command, "arguments": args}));
        let (result, shown) = ed.command_showing(id);
        assert_eq!(shown["selection"], result["range"], "the editor is shown the stop answered");
        result
    };
    let first = walk(&mut ed, "bloatlens.nextHop", &json!({"line": 62, "character": 0}), None);
    let (chain, of) = (first["chain"].clone(), first["of"].as_u64().unwrap());
    assert!(of >= 4, "{first}");
    let mut lines = vec![first["range"]["start"]["line"].as_u64().unwrap()];
    let mut last = first;
    // Forward to the end: every step on the same chain, one stop further.
    while last["hop"].as_u64().unwrap() < of - 1 {
        let hop = last["hop"].as_u64().unwrap();
        let next =
            walk(&mut ed, "bloatlens.nextHop", &last["range"]["start"], Some(json!({"stop": hop, "chain": chain})));
        assert_eq!(next["chain"], chain, "the walk switched chains at {last}");
        assert_eq!(next["hop"].as_u64().unwrap(), hop + 1, "{next}");
        lines.push(next["range"]["start"]["line"].as_u64().unwrap());
        last = next;
    }
    assert!(lines.contains(&17), "the walk passed line 18, where the other chain starts: {lines:?}");
    // And back to the finding.
    while last["hop"].as_u64().unwrap() > 0 {
        let hop = last["hop"].as_u64().unwrap();
        let prev =
            walk(&mut ed, "bloatlens.prevHop", &last["range"]["start"], Some(json!({"stop": hop, "chain": chain})));
        assert_eq!(prev["chain"], chain, "the walk switched chains at {last}");
        assert_eq!(prev["hop"].as_u64().unwrap(), hop - 1, "{prev}");
        last = prev;
    }
    assert_eq!(last["range"]["start"]["line"], 62);
    ed.finish();
}

#[test]
fn lenses_are_refreshed_when_the_diagnostics_are_published() {
    let src = fixture("result_per_call");
    let server = Path::new(env!("CARGO_BIN_EXE_bloatlens-lsp"));
    let caps = json!({"workspace": {"codeLens": {"refreshSupport": true}}});
    let mut ed = Editor::start_with(server, &[("Main.java", &src)], json!({}), caps);
    let u = ed.open("Main.java");
    ed.save(&u);
    ed.progress();
    let diags = ed.diagnostics(&u);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "{diags:?}");
    // The log line and the refresh request, in either order (the request is sent from a task of its own).
    let mut seen = [ed.next_message(), ed.next_message()];
    seen.sort_by_key(|m| m["method"].as_str().unwrap().to_string());
    assert_eq!(seen[0]["method"], "window/logMessage", "{seen:?}");
    assert_eq!(seen[1]["method"], "workspace/codeLens/refresh", "{seen:?}");
    ed.send(json!({"jsonrpc": "2.0", "id": seen[1]["id"], "result": null}));
    // Asked again, the lenses are the new run's.
    let id = ed.request("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    let lenses = ed.response(id);
    assert!(
        lenses.as_array().unwrap().iter().any(|l| !l["command"]["title"].as_str().unwrap().contains("Profile")),
        "{lenses}"
    );
    ed.finish();
}

#[test]
fn a_program_reads_the_stdin_file_the_settings_name() {
    let src = r#"
import java.io.*;
public class Main {
    static final class Box { final int v; Box(int v) { this.v = v; } }
    public static void main(String[] args) throws IOException {
        String line = new BufferedReader(new InputStreamReader(System.in)).readLine();
        long s = 0;
        // Only with the input the setting names does the program make its temporaries.
        if ("boxes".equals(line)) for (int i = 0; i < 500; i++) s += new Box(i).v;
        System.out.println(s);
    }
}
"#;
    let mut ed = start(&[("Main.java", src), ("input/lines.txt", "boxes\n")], json!({"stdinFile": "input/lines.txt"}));
    let u = ed.open("Main.java");
    let diags = save_and_profile(&mut ed, &u);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "the program read the file: {diags:?}");
    ed.finish();
    // A file that is not there: said, not a crash.
    let mut ed = start(&[("Main.java", src)], json!({"stdinFile": "missing.txt"}));
    let u = ed.open("Main.java");
    ed.save(&u);
    ed.progress();
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().contains("missing.txt as the program's input"), "{log}");
    ed.notification("window/showMessage");
    ed.finish();
}

/// A save compiles only what changed; a constant that another class inlined changes that class too.
#[test]
fn a_changed_constant_in_another_file_reaches_the_class_that_inlined_it() {
    let main = r#"
public class Main {
    static final class Box { final int v; Box(int v) { this.v = v; } }
    public static void main(String[] args) {
        long s = 0;
        // javac copies Helper.MODE into this class: only a recompile of Main sees a new value.
        if (Helper.MODE == 2) for (int i = 0; i < 500; i++) s += new Box(i).v;
        System.out.println(s + Helper.twice(1));
    }
}
"#;
    let helper = "class Helper {\n    static final int MODE = 1;\n    static int twice(int x) { return 2 * x; }\n}\n";
    let mut ed = start(&[("Main.java", main), ("Helper.java", helper)], json!({}));
    let u = ed.open("Main.java");
    let diags = save_and_profile(&mut ed, &u);
    assert!(!diags.iter().any(|d| d["data"]["kind"] == "nath"), "mode 1 makes no temporaries: {diags:?}");
    // Only Helper changes, on disk (the server re-profiles on the watcher's word); Main is as it was.
    std::fs::write(ed.root.join("Helper.java"), helper.replace("MODE = 1", "MODE = 2")).unwrap();
    let seen = ed.until(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == u
            && m["params"]["diagnostics"].as_array().is_some_and(|d| !d.is_empty())
    });
    let diags = seen.last().unwrap()["params"]["diagnostics"].as_array().unwrap().clone();
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "Main was compiled again with MODE 2: {diags:?}");
    ed.drain(std::time::Duration::from_millis(500));
    ed.finish();
}

/// A program whose temporaries (NATH findings) appear only when it runs as `Run Shop` launches
/// it: with its argument, its `-D` property, its environment variable, and in its working
/// directory, where it reads a relative file.
const SHOP: &str = r#"package com.acme;

import java.nio.file.*;

public class Main {
    static final class Box { final int v; Box(int v) { this.v = v; } }
    public static void main(String[] args) throws Exception {
        boolean launched = args.length == 2 && args[0].equals("boxes") && args[1].equals("two words")
            && "fast".equals(System.getProperty("shop.mode"))
            && "3".equals(System.getenv("SHOP_LEVEL"))
            && Files.exists(Path.of("orders.txt"))
            && System.getProperty("user.dir").endsWith("/run");
        long s = 0;
        if (launched) for (int i = 0; i < 500; i++) s += new Box(i).v;
        System.out.println(s);
    }
}
"#;

const SHOP_LAUNCH: &str = r#"{
    // Java configurations as VS Code's Java debugger writes them.
    "version": "0.2.0",
    "configurations": [
        {
            "type": "java",
            "name": "Current File",
            "request": "launch",
            "mainClass": "${file}",
        },
        {
            "type": "java",
            "name": "Run Shop",
            "request": "launch",
            "mainClass": "com.acme.Main",
            "args": "boxes 'two words'",
            "vmArgs": ["-Xmx512m", "-Dshop.mode=fast"],
            "cwd": "${workspaceFolder}/run",
            "env": {"SHOP_LEVEL": "3"},
        },
        {"type": "node", "name": "Web", "request": "launch", "program": "web.js"},
    ],
}"#;

fn shop_files() -> [(&'static str, &'static str); 3] {
    [("src/com/acme/Main.java", SHOP), (".vscode/launch.json", SHOP_LAUNCH), ("run/orders.txt", "1\n")]
}

#[test]
fn a_launch_configuration_from_the_picker_runs_with_its_arguments_properties_directory_and_environment() {
    let mut ed = start(&shop_files(), json!({}));
    let u = ed.open("src/com/acme/Main.java");
    // The settings' way (no arguments, the server's directory): no temporaries.
    let diags = save_and_profile(&mut ed, &u);
    assert!(!diags.iter().any(|d| d["data"]["kind"] == "nath"), "{diags:?}");

    // The picker lists the main and the Java launch configuration that can run; the log says why
    // `Current File` is not offered.
    let id = ed.request("workspace/executeCommand", json!({"command": "bloatlens.entryPoints", "arguments": []}));
    let (entries, log) = ed.response_and(id, "window/logMessage", Value::Null);
    assert!(
        log["message"].as_str().unwrap().contains("\"Current File\" is not offered: mainClass uses ${file}"),
        "{log}"
    );
    assert_eq!(
        entries,
        json!([
            {"class": "com.acme.Main", "uri": u},
            {"class": "com.acme.Main", "uri": u, "launch": "Run Shop", "label": "launch.json: Run Shop"},
        ])
    );

    // Choosing it runs it as launched.
    let id = ed.request(
        "workspace/executeCommand",
        json!({"command": "bloatlens.profile", "arguments": [u, "launch:Run Shop"]}),
    );
    let (_, created) = ed.response_and(id, "window/workDoneProgress/create", Value::Null);
    ed.progress_after_create(created);
    let diags = ed.diagnostics(&u);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "the run had the launch's surroundings: {diags:?}");
    let log = ed.notification("window/logMessage");
    let line = log["message"].as_str().unwrap();
    assert!(
        line.ends_with(
            "; entry point .vscode/launch.json: Run Shop (com.acme.Main); vmArgs other than -D ignored: -Xmx512m"
        ),
        "{log}"
    );
    // The choice sticks: the next save runs it again.
    let diags = save_and_profile(&mut ed, &u);
    assert!(diags.iter().any(|d| d["data"]["kind"] == "nath"), "{diags:?}");
    ed.finish();
}

#[test]
fn a_launch_configuration_named_in_the_settings_is_the_entry_point_the_status_reports() {
    let server = Path::new(env!("CARGO_BIN_EXE_bloatlens-lsp"));
    let options = json!({"entryPoint": "launch:Run Shop"});
    let mut ed = Editor::start_with(server, &shop_files(), options, json!({"experimental": {"bloatlensStatus": true}}));
    ed.notification("bloatlens/status");
    let u = ed.open("src/com/acme/Main.java");
    ed.save(&u);
    let seen = ed.until(|m| m["method"] == "bloatlens/status" && m["params"]["state"] == "done");
    let compiling = seen.iter().find(|m| m["params"]["state"] == "compiling").expect("compiling");
    // The client remembers the launch configuration, not its main class.
    assert_eq!(compiling["params"]["entryPoint"], "launch:Run Shop");
    assert_eq!(compiling["params"]["mainClass"], "com.acme.Main");
    let published = seen.iter().find(|m| m["method"] == "textDocument/publishDiagnostics").expect("diagnostics");
    assert!(
        published["params"]["diagnostics"].as_array().unwrap().iter().any(|d| d["data"]["kind"] == "nath"),
        "{published}"
    );
    if !seen.iter().any(|m| m["method"] == "window/logMessage") {
        ed.notification("window/logMessage");
    }
    // A name launch.json does not have is said, and nothing runs.
    ed.notify("workspace/didChangeConfiguration", json!({"settings": {"bloatlens": {"mainClass": "launch:Nope"}}}));
    ed.save(&u);
    let seen = ed.until(|m| m["method"] == "window/showMessage");
    let msg = seen.last().unwrap()["params"]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("no Java launch configuration named Nope"), "{msg}");
    ed.drain(std::time::Duration::from_millis(300));
    ed.finish();
}

/// Tools that leave a mark when they run: `bin/java` and `bin/javac` of a JDK, and `mvn`.
fn marking_tools(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let jdk = dir.join("jdk");
    std::fs::create_dir_all(jdk.join("bin")).unwrap();
    let script = |p: std::path::PathBuf| {
        let text = format!("#!/bin/sh\ntouch '{}/ran-'\"$(basename \"$0\")\"\nexit 1\n", dir.display());
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    };
    script(jdk.join("bin/java"));
    script(jdk.join("bin/javac"));
    (jdk, script(dir.join("mvn")))
}

fn marks(dir: &Path) -> Vec<String> {
    let mut ran: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("ran-").map(String::from))
        .collect();
    ran.sort();
    ran
}

#[test]
fn an_untrusted_workspace_runs_nothing_and_says_so() {
    let tools = tempfile::tempdir().unwrap();
    let (jdk, mvn) = marking_tools(tools.path());
    let pom = "<project><modelVersion>4.0.0</modelVersion><groupId>g</groupId><artifactId>a</artifactId><version>1</version></project>";
    let src = fixture("result_per_call");
    let files = [("pom.xml", pom), ("src/main/java/Main.java", src.as_str())];
    let server = Path::new(env!("CARGO_BIN_EXE_bloatlens-lsp"));
    let options = json!({"trusted": false, "jdkPath": jdk, "mavenPath": mvn});
    let mut ed = Editor::start_with(server, &files, options, json!({"experimental": {"bloatlensStatus": true}}));
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().contains("not trusted"), "{log}");
    assert_eq!(ed.notification("bloatlens/status")["state"], "restricted");
    // A save profiles nothing; asking for a profile says why.
    let u = ed.open("src/main/java/Main.java");
    ed.save(&u);
    let id = ed.request("workspace/executeCommand", json!({"command": "bloatlens.profile", "arguments": [u, "Main"]}));
    let (_, msg) = ed.response_and(id, "window/showMessage", Value::Null);
    assert!(msg["message"].as_str().unwrap().contains("trust the workspace"), "{msg}");
    // A settings change cannot make it trusted: trust is the client's at start-up.
    ed.notify("workspace/didChangeConfiguration", json!({"settings": {"bloatlens": {"trusted": true}}}));
    ed.save(&u);
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(marks(tools.path()), Vec::<String>::new(), "nothing ran");
    ed.finish();
    // The same workspace trusted: the tools run (the warm compiler at start, Maven on the pom).
    let mut ed = Editor::start(server, &files, json!({"jdkPath": jdk, "mavenPath": mvn}));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while marks(tools.path()) != ["java", "mvn"] && std::time::Instant::now() < deadline {
        ed.drain(std::time::Duration::from_millis(200));
    }
    assert_eq!(marks(tools.path()), ["java", "mvn"], "the proof that the test could fail");
    ed.drain(std::time::Duration::from_millis(500));
    ed.finish();
}

/// The buffer and the file replaced by `text`, as an editor's save leaves them.
fn rewrite(ed: &mut Editor, name: &str, text: &str) {
    let u = harness_uri(ed, name);
    ed.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}));
    std::fs::write(ed.root.join(name), text).unwrap();
    ed.open(name);
}

#[test]
fn a_broken_file_shows_javacs_errors_where_they_are_and_no_stale_finding_stays_unmarked() {
    let good = fixture("result_per_call");
    // The main's signature commented out: the parser sees no main; javac sees a stray body.
    let hidden = good.replacen(
        "public static void main(String[] args) {",
        "// public static void main(String[] args) {\n    void broken( {",
        1,
    );
    assert_ne!(hidden, good);
    let mut ed = start(&[("Main.java", &good)], json!({}));
    let u = ed.open("Main.java");
    let first = save_and_profile(&mut ed, &u);
    assert!(!first.is_empty(), "findings to go stale later");

    // A syntax error hides the main: the entry point is compiled all the same and javac says why.
    rewrite(&mut ed, "Main.java", &hidden);
    ed.save(&u);
    ed.progress();
    let diags = ed.diagnostics(&u);
    assert!(
        !diags.is_empty() && diags.iter().all(|d| d["code"] == "javac"),
        "javac's errors, the old findings cleared: {diags:?}"
    );
    let broken_line = line_of(&hidden, "void broken( {");
    assert!(diags.iter().any(|d| d["range"]["start"]["line"] == broken_line), "{diags:?}");
    let log = ed.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().contains("does not compile"), "{log}");

    // A `;` missing at the end of a line: marked where it belongs, not at column 1.
    let semi = good.replacen("return new Stats", "int unused = 1\n        return new Stats", 1);
    assert_ne!(semi, good, "the fixture has the line to break");
    rewrite(&mut ed, "Main.java", &semi);
    ed.save(&u);
    ed.progress();
    let diags = ed.diagnostics(&u);
    let line = line_of(&semi, "int unused = 1");
    let text = semi.lines().nth(line as usize).unwrap();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["range"]["start"], json!({"line": line, "character": text.len() - 1}), "{diags:?}");
    assert_eq!(diags[0]["range"]["end"], json!({"line": line, "character": text.len()}), "{diags:?}");
    ed.notification("window/logMessage");

    // Fixed: findings again; then a run that cannot start marks them stale instead of leaving them.
    rewrite(&mut ed, "Main.java", &good);
    let fresh = save_and_profile(&mut ed, &u);
    assert!(fresh.iter().all(|d| d["code"] != "javac" && d["severity"] != 4), "{fresh:?}");
    ed.notify("workspace/didChangeConfiguration", json!({"settings": {"bloatlens": {"jdkPath": "/nonexistent/jdk"}}}));
    ed.save(&u);
    ed.progress();
    let stale = ed.diagnostics(&u);
    assert_eq!(stale.len(), fresh.len());
    assert!(stale.iter().all(|d| d["severity"] == 4 && d["message"].as_str().unwrap().contains("stale")), "{stale:?}");
    ed.notification("window/logMessage");
    ed.notification("window/showMessage");
    ed.finish();
}

#[test]
fn a_first_save_of_a_file_whose_main_the_parser_cannot_see_shows_javacs_errors() {
    let src =
        "public class Main {\n    public static void main(String[] args {\n        System.out.println(1);\n    }\n}\n";
    let mut ed = start(&[("Main.java", src)], json!({}));
    let u = ed.open("Main.java");
    ed.save(&u);
    let seen = ed.until(|m| m["method"] == "textDocument/publishDiagnostics");
    let diags = seen.last().unwrap()["params"]["diagnostics"].as_array().unwrap().clone();
    assert!(!diags.is_empty() && diags.iter().all(|d| d["code"] == "javac"), "{diags:?}");
    ed.drain(std::time::Duration::from_millis(500));
    ed.finish();
}

#[test]
fn two_servers_on_one_workspace_keep_their_own_classes() {
    // `Helper` loads from the classes directory after the sleep: gone then, it would be a
    // NoClassDefFoundError.
    let src = "public class Main {\n    public static void main(String[] args) throws Exception {\n        Thread.sleep(3000);\n        System.out.println(new Helper().twice(21));\n    }\n}\nclass Helper {\n    int twice(int x) { return 2 * x; }\n}\n";
    let server = Path::new(env!("CARGO_BIN_EXE_bloatlens-lsp"));
    let status = json!({"experimental": {"bloatlensStatus": true}});
    let mut first = Editor::start_with(server, &[("Main.java", src)], json!({}), status);
    first.notification("bloatlens/status");
    let mut second = Editor::beside(server, &first, json!({}));
    let u2 = second.open("Main.java");
    second.save(&u2);
    second.progress();
    second.diagnostics(&u2);
    second.notification("window/logMessage");
    // The first server runs the program; meanwhile the second one ends and removes its scratch.
    let u = first.open("Main.java");
    first.save(&u);
    first.until(|m| m["method"] == "bloatlens/status" && m["params"]["state"] == "running");
    second.finish();
    let seen = first.until(|m| m["method"] == "window/logMessage");
    assert!(!seen.iter().any(|m| m["method"] == "window/showMessage"), "{seen:?}");
    let log = &seen.last().unwrap()["params"]["message"];
    assert!(log.as_str().unwrap().starts_with("profiled Main"), "{log}");
    first.drain(std::time::Duration::from_millis(500));
    first.finish();
}

/// A program that writes a Java source into the workspace it is given (its argument), reads it back,
/// and makes its temporaries (a NATH finding) only when it saw what it wrote.
const WRITES_A_SOURCE: &str = r#"import java.nio.file.*;

public class Main {
    static final class Box { final int v; Box(int v) { this.v = v; } }
    public static void main(String[] args) throws Exception {
        Path generated = Path.of(args[0], "Generated.java");
        Files.writeString(generated, "class Generated { static final long STAMP = " + System.nanoTime() + "L; }\n");
        boolean seen = Files.readString(generated).startsWith("class Generated");
        long s = 0;
        if (seen) for (int i = 0; i < 500; i++) s += new Box(i).v;
        System.out.println(s);
    }
}
"#;

/// A profiled program that writes a source file in the workspace never profiles itself again (it
/// would, on every change the watcher reports, forever): with the sandbox's overlay the workspace
/// does not change at all, though the program reads back what it wrote; with its changes allowed,
/// the file lands and the watcher's report of it starts no run.
#[test]
fn a_program_that_writes_a_source_file_does_not_profile_itself_again() {
    for writes in ["overlay", "allow"] {
        let settings = |root: &str| json!({"args": [root], "sandbox": {"workspaceWrites": writes}});
        let mut ed = start(&[("Main.java", WRITES_A_SOURCE)], settings("."));
        let root = ed.root.clone();
        ed.notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"bloatlens": settings(&root.display().to_string())}}),
        );
        let u = ed.open("Main.java");
        let diags = save_and_profile(&mut ed, &u);
        assert!(
            diags.iter().any(|d| d["data"]["kind"] == "nath"),
            "{writes}: the program read back what it wrote: {diags:?}"
        );
        if writes == "overlay" {
            let note = ed.notification("window/logMessage");
            let note = note["message"].as_str().unwrap();
            assert!(note.contains("(Generated.java) went to the sandbox's overlay"), "{note}");
        }
        // Over the next seconds (the watcher reports after 300 ms of quiet), no other run starts.
        let later = ed.within(std::time::Duration::from_secs(4));
        let runs = later.iter().filter(|m| m["method"] == "window/workDoneProgress/create").count();
        assert_eq!(runs, 0, "{writes}: the program's own write started {runs} more runs");
        assert!(later.is_empty(), "{writes}: {later:?}");
        let mut names: Vec<String> =
            std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        match writes {
            "overlay" => assert_eq!(names, ["Main.java"], "the workspace did not change"),
            _ => {
                assert_eq!(names, ["Generated.java", "Main.java"], "the write landed");
                let text = std::fs::read_to_string(root.join("Generated.java")).unwrap();
                assert!(text.starts_with("class Generated"), "{text}");
            }
        }
        ed.finish();
    }
}

/// Applies LSP text edits (ASCII text: UTF-16 positions are bytes) to `text`.
fn apply_edits(text: &str, edits: &[Value]) -> String {
    let starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let offset = |p: &Value| starts[p["line"].as_u64().unwrap() as usize] + p["character"].as_u64().unwrap() as usize;
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| (offset(&e["range"]["start"]), offset(&e["range"]["end"]), e["newText"].as_str().unwrap()))
        .collect();
    spans.sort();
    let mut out = String::new();
    let mut at = 0;
    for (start, end, new) in spans {
        out.push_str(&text[at..start]);
        out.push_str(new);
        at = end;
    }
    out + &text[at..]
}

#[test]
fn a_checked_quick_fix_is_offered_applied_and_its_saving_measured() {
    let src = fixture("corpus/word_frequency");
    let mut ed = start(&[("Main.java", &src)], json!({}));
    let u = ed.open("Main.java");
    let diags = save_and_profile(&mut ed, &u);
    let line = line_of(&src, "String word = token.replaceAll(");
    let diag = diags
        .iter()
        .find(|d| d["range"]["start"]["line"] == line)
        .unwrap_or_else(|| panic!("no finding on line {line}: {diags:?}"))
        .clone();
    // The fix is offered once it is checked (compiled and run again in the background).
    let started = std::time::Instant::now();
    let action = loop {
        let id = ed.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": u}, "range": diag["range"], "context": {"diagnostics": [diag]}}),
        );
        let actions = ed.response(id);
        let fix =
            actions.as_array().unwrap().iter().find(|a| a["kind"] == "quickfix" && a.get("edit").is_some()).cloned();
        if let Some(fix) = fix {
            // Suppressing stays on offer beside it.
            assert!(actions.as_array().unwrap().iter().any(|a| a["title"].as_str().unwrap().starts_with("Suppress")));
            break fix;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(90), "no quick fix offered: {actions}");
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    let title = action["title"].as_str().unwrap();
    assert!(title.starts_with("Bloatlens: Compile \"[^A-Za-z']\" once into `static final Pattern"), "{title}");
    assert_eq!(action["isPreferred"], true);
    // The hover says it was checked.
    let id = ed.request("textDocument/hover", json!({"textDocument": {"uri": u}, "position": diag["range"]["start"]}));
    let md = ed.response(id)["contents"]["value"].as_str().unwrap().to_string();
    assert!(md.contains("**Quick fix:** Compile") && md.contains("prints the same"), "{md}");

    // The editor applies the edit, runs the action's command, and the user saves.
    let edits = action["edit"]["changes"][&u].as_array().unwrap().clone();
    let fixed = apply_edits(&src, &edits);
    assert!(
        fixed.contains("private static final Pattern") && fixed.contains(".matcher(token).replaceAll(\"\")"),
        "{fixed}"
    );
    ed.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2}, "contentChanges": [{"text": fixed}]}),
    );
    // The edited lines' findings go stale until the save.
    let stale = ed.diagnostics(&u);
    assert!(stale.iter().all(|d| d["message"].as_str().unwrap().contains("(stale")), "{stale:?}");
    let id = ed.request("workspace/executeCommand", action["command"].clone());
    ed.response(id);
    std::fs::write(ed.root.join("Main.java"), &fixed).unwrap();
    ed.save(&u);
    ed.progress();
    let after = ed.diagnostics(&u);
    let log = ed.notification("window/logMessage")["message"].as_str().unwrap().to_string();
    assert!(log.starts_with("profiled Main"), "{log}");
    let measured = ed.notification("window/logMessage")["message"].as_str().unwrap().to_string();
    assert!(measured.starts_with("quick fix measured: −") && measured.contains("the finding is gone"), "{measured}");
    assert!(!after.iter().any(|d| d["code"] == "regex-per-call"), "{after:?}");
    // On the fix's line, a lens says what it saved.
    let titles = lens_titles(&mut ed, &u);
    assert!(titles.iter().any(|t| t.starts_with("Bloatlens quick fix: −") && t.contains("instructions")), "{titles:?}");
    ed.finish();
}

/// The server's scratch directory (the workspace's classes, the fixes' checks) lives as long as
/// the server: what one killed outright (SIGKILL, which it cannot catch) left is removed by the
/// next server on the machine, and an editor that stops a server with SIGTERM leaves nothing.
#[test]
fn the_scratch_directory_does_not_outlive_its_server() {
    let server = Path::new(env!("CARGO_BIN_EXE_bloatlens-lsp"));
    let scratch_in = |tmp: &Path| -> Vec<std::path::PathBuf> {
        let mut dirs: Vec<_> = std::fs::read_dir(tmp)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("bloatlens-lsp-"))
            .map(|e| e.path())
            .collect();
        dirs.sort();
        dirs
    };
    let mut first = start(&[("Main.java", &fixture("result_per_call"))], json!({}));
    let tmp = first.temp_dir().to_path_buf();
    let u = first.open("Main.java");
    save_and_profile(&mut first, &u);
    let killed = scratch_in(&tmp);
    assert_eq!(killed.len(), 1, "one scratch directory: {killed:?}");
    let owner = std::fs::read_to_string(killed[0].join("owner.pid")).unwrap();
    assert_eq!(owner.trim(), first.pid().to_string(), "it names its server");

    let status = first.signal("KILL");
    assert!(!status.success());
    assert!(killed[0].exists(), "a killed server cannot remove it");
    let mut second = Editor::beside(server, &first, json!({}));
    let u = second.open("Main.java");
    second.save(&u);
    second.progress();
    assert!(!second.diagnostics(&u).is_empty());
    let now = scratch_in(&tmp);
    assert!(!now.contains(&killed[0]), "the next server removed the killed one's: {now:?}");
    assert_eq!(now.len(), 1, "{now:?}");

    let status = second.signal("TERM");
    assert_eq!(status.code(), Some(128 + 15), "ended as SIGTERM ends a process");
    assert_eq!(scratch_in(&tmp), Vec::<std::path::PathBuf>::new(), "SIGTERM removes the server's own");
}

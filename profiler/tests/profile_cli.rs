//! `bloatlens profile` end to end: sources in, report out, including the bad inputs (a program
//! that does not compile, one that throws, one a budget stops).

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn bloatlens(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bloatlens")).args(args).output().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// `bloatlens profile --format json --output <out> <flags…> <target and args…>`.
fn profile_json(out: &Path, flags: &[&str], target: &[&str]) -> Output {
    let mut args = vec!["profile", "--format", "json", "--output", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    args.extend_from_slice(target);
    bloatlens(&args)
}

fn json_report(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A JSON report reads back into the profiler's typed report (the editor and `--compare` read it
/// so) and writes out as the same text: no figure lost, renamed or retyped on the way.
fn reads_back(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let report: bloatlens_profiler::report::Report = serde_json::from_str(&text).expect("a typed report");
    let again = serde_json::to_string_pretty(&report).unwrap() + "\n";
    let differ = again.lines().zip(text.lines()).position(|(a, b)| a != b);
    if let Some(i) = differ.or((again.lines().count() != text.lines().count()).then_some(0)) {
        let around = |t: &str| t.lines().skip(i.saturating_sub(3)).take(6).collect::<Vec<_>>().join("\n");
        panic!(
            "{} reads back differently at line {}:\n{}\n--- as written:\n{}",
            path.display(),
            i + 1,
            around(&again),
            around(&text)
        );
    }
}

fn kinds(report: &Value) -> Vec<String> {
    report["findings"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap().to_string()).collect()
}

const TEMPS: &str = r#"
public class Temps {
    static final class Pair { final int a, b; Pair(int a, int b) { this.a = a; this.b = b; } }
    static Pair pair(int i) { return new Pair(i, i * 2); }
    public static void main(String[] args) {
        long s = 0;
        for (int i = 0; i < 200; i++) { Pair p = pair(i); s += p.a + p.b; }
        System.out.println("sum " + s);
        if (args.length > 0 && args[0].equals("throw")) throw new IllegalStateException("boom");
        if (args.length > 0 && args[0].equals("loop")) while (true) { s += pair((int) s).a; }
    }
}
"#;

#[test]
fn profiles_a_source_file_and_writes_json() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Temps.java", TEMPS);
    let out = dir.path().join("report.json");
    let o = profile_json(&out, &[], &[&src]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "sum 59700\n", "the program's own output still appears");
    let r = json_report(&out);
    assert_eq!(r["schema"], "bloatlens-report/4");
    assert_eq!(r["run"]["outcome"], "exited");
    assert_eq!(r["run"]["partial"], false);
    let nath = r["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "nath").expect("a NATH finding");
    assert_eq!(nath["location"]["file"], "Temps.java");
    // `pair` is a small factory: its objects are reported at the call that asks for one per value.
    assert_eq!(nath["location"]["line"], 7);
    assert_eq!(nath["location"]["method"], "main");
    assert_eq!(nath["evidence"]["instances"], 200);
    assert!(nath["severity"].is_string() && nath["score"].as_f64().unwrap() >= 200.0);
}

#[test]
fn text_report_quotes_the_source_line() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Temps.java", TEMPS);
    let o = bloatlens(&["profile", "--program-output", dir.path().join("out.txt").to_str().unwrap(), &src]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("[A result or carrier object per call] Temps.java:7"), "{text}");
    assert!(text.contains("| for (int i = 0; i < 200; i++) { Pair p = pair(i); s += p.a + p.b; }"), "{text}");
    assert_eq!(std::fs::read_to_string(dir.path().join("out.txt")).unwrap(), "sum 59700\n");
}

#[test]
fn a_program_that_throws_still_gets_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Temps.java", TEMPS);
    let out = dir.path().join("r.json");
    let o = profile_json(&out, &[], &[&src, "throw"]);
    assert_eq!(o.status.code(), Some(1), "the program's own status, as java gives it");
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("Exception in thread \"main\" java.lang.IllegalStateException: boom"));
    let r = json_report(&out);
    assert_eq!(r["run"]["outcome"], "exception");
    assert_eq!(r["run"]["partial"], true);
    assert!(kinds(&r).contains(&"nath".to_string()));
}

#[test]
fn a_budget_stop_yields_a_partial_report() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Temps.java", TEMPS);
    let out = dir.path().join("r.json");
    let o = profile_json(&out, &["--max-instructions", "3000000"], &[&src, "loop"]);
    assert_eq!(o.status.code(), Some(3), "a budget stop has its own status");
    let r = json_report(&out);
    assert_eq!(r["run"]["outcome"], "stopped");
    assert_eq!(r["run"]["partial"], true);
    assert!(r["run"]["outcome_detail"].as_str().unwrap().contains("instruction"), "{}", r["run"]);
    // Where it was: the endless loop of main, on its source line.
    let loop_line = TEMPS.lines().position(|l| l.contains("while (true)")).unwrap() + 1;
    assert_eq!(r["run"]["stopped_at"]["method"], "main", "{}", r["run"]);
    assert_eq!(r["run"]["stopped_at"]["line"], loop_line, "{}", r["run"]);
    assert!(r["run"]["stopped_at"]["share"].as_f64().unwrap() > 0.5, "{}", r["run"]);
    // Verdicts on what objects came to need the end of the run: none from a stopped one.
    for f in r["findings"].as_array().unwrap() {
        assert!(["copy-chain", "clone", "bottleneck"].contains(&f["kind"].as_str().unwrap()), "{f}");
        assert_eq!(f["evidence"]["partial"], true, "{f}");
    }
    reads_back(&out);
    assert!(!kinds(&r).contains(&"nath".to_string()));
    // The text report says where it stopped.
    let o = bloatlens(&["profile", "--max-instructions", "3000000", &src, "loop"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("stopped in: ") && text.contains(&format!("Temps.main (Temps.java:{loop_line})")), "{text}");
}

#[test]
fn a_program_that_does_not_compile_shows_javacs_errors() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Bad.java", "public class Bad {\n    void f() {\n        int x = \"no\";\n    }\n}\n");
    let o = bloatlens(&["profile", &src]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Bad.java:3: error: incompatible types"), "{err}");
    assert!(err.contains("bloatlens: error: the program does not compile"), "{err}");
}

#[test]
fn analyses_can_be_chosen_and_unknown_ones_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Temps.java", TEMPS);
    let out = dir.path().join("r.json");
    let o = profile_json(&out, &["--analyses", "copy"], &[&src]);
    assert!(o.status.success());
    let r = json_report(&out);
    assert_eq!(r["run"]["analyses"], serde_json::json!(["copy"]));
    assert!(!kinds(&r).iter().any(|k| k == "nath"), "refprop was off");
    let o = bloatlens(&["profile", "--analyses", "copy,lifetimez", &src]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown analysis `lifetimez`"));
}

#[test]
fn a_compiled_program_is_profiled_by_class_name() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Temps.java", TEMPS);
    let classes = dir.path().join("classes");
    assert!(Command::new("javac").arg("-g").arg("-d").arg(&classes).arg(&src).status().unwrap().success());
    let o = bloatlens(&[
        "profile",
        "-cp",
        classes.to_str().unwrap(),
        "--source-root",
        dir.path().to_str().unwrap(),
        "Temps",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("| static Pair pair(int i)"));
}

const HOT: &str = r#"
public class Hot {
    static int check(String who) {
        int h = 0;
        for (int k = 0; k < ROUNDS; k++) h += who.hashCode() % 7;
        return h;
    }
    static int serve(int i) { return check("user" + (i % 3)) + i; }
    static final int ROUNDS = 20;
    public static void main(String[] args) {
        long s = 0;
        for (int i = 0; i < 300; i++) s += serve(i);
        System.out.println(s);
    }
}
"#;

#[test]
fn compare_names_the_call_sequence_that_got_more_expensive() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Hot.java", HOT);
    let before = dir.path().join("before.json");
    let o = profile_json(&before, &["--analyses", "bottleneck"], &[&src]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = json_report(&before);
    assert!(r["call_tree"]["nodes"].as_array().unwrap().len() > 3, "the report carries the tree");
    let b = r["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "bottleneck").expect("a bottleneck");
    assert!(b["evidence"]["calls"].to_string().contains("Hot.check"), "{b}");
    // `check` is called with three distinct strings (equal by value, new each time): the same work
    // again, to change at the call in `serve`.
    assert_eq!(b["location"]["line"], 8, "the repeated call of check in serve");

    // The check now loops five times as long.
    write(dir.path(), "Hot.java", &HOT.replace("ROUNDS = 20", "ROUNDS = 100"));
    let after = dir.path().join("after.json");
    let o = profile_json(&after, &["--analyses", "bottleneck", "--compare", before.to_str().unwrap()], &[&src]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    reads_back(&after);
    let c = &json_report(&after)["comparison"];
    assert!(c["total_after"].as_i64().unwrap() > c["total_before"].as_i64().unwrap());
    let first = &c["changes"][0];
    assert!(first["calls"].to_string().contains("Hot.check"), "{c}");
    assert!(first["change"].as_i64().unwrap() > 0);
    assert_eq!(first["change"].as_i64().unwrap(), first["after"].as_i64().unwrap() - first["before"].as_i64().unwrap());

    // A file that is not a report is named; the run does not start.
    let junk = write(dir.path(), "junk.json", "{}");
    let o = bloatlens(&["profile", "--compare", &junk, &src]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a Bloatlens JSON report"));
    assert!(o.stdout.is_empty(), "the program did not run");
}

/// Every kind of finding and of evidence, merged findings (`also`) among them, reads back as it
/// was written.
#[test]
fn a_report_of_every_kind_reads_back_as_written() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bloat");
    let dir = tempfile::tempdir().unwrap();
    let mut seen: Vec<String> = Vec::new();
    for program in ["corpus/cart_checkout", "lifetime_mixed_factory", "two_hop_char_copy"] {
        let out = dir.path().join("r.json");
        let o = profile_json(&out, &["--program-output", "/dev/null"], &[fixtures.join(program).to_str().unwrap()]);
        assert!(o.status.success(), "{program}: {}", String::from_utf8_lossy(&o.stderr));
        reads_back(&out);
        seen.extend(kinds(&json_report(&out)));
    }
    for kind in [
        "copy-chain",
        "clone",
        "nath",
        "mostly-nath",
        "never-used",
        "write-read-imbalance",
        "lifetime",
        "low-utility",
        "bottleneck",
    ] {
        assert!(seen.iter().any(|k| k == kind), "no {kind} finding in {seen:?}");
    }
}

#[test]
fn all_five_analyses_report_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Hot.java", HOT);
    let out = dir.path().join("r.json");
    let o = profile_json(&out, &[], &[&src]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = json_report(&out);
    assert_eq!(r["run"]["analyses"], serde_json::json!(["copy", "refprop", "costben", "lifetime", "bottleneck"]));
    let cb = &r["cost_benefit"];
    assert!(cb["nodes"].as_u64().unwrap() > 0 && cb["ipd"].as_f64().unwrap() < 1.0, "{cb}");
    assert!(kinds(&r).contains(&"bottleneck".to_string()));
}

/// `--format dot`: a copy chain's part of the copy graph in the source's words, a whole graph
/// summarised, and errors for a finding that is not there; Graphviz (installed by
/// `scripts/install-tools.sh`) must draw what is written.
#[test]
fn dot_draws_a_findings_graph_and_whole_graphs() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bloat/corpus/customer_dto_mapping/Main.java");
    let src = src.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let chain = dir.path().join("chain.dot");
    let o = bloatlens(&["profile", "--format", "dot", "--output", chain.to_str().unwrap(), src]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dot = std::fs::read_to_string(&chain).unwrap();
    assert!(dot.starts_with("digraph {"), "{dot}");
    // The report's first finding is the DTO's copy chain: its hops are nodes in the source's
    // words, every merged field's chain drawn, edges labelled with their copies.
    assert!(dot.contains("label = \"copy chain — 6 fields copied here"), "{dot}");
    for node in ["CustomerEntity.country (line 57)", "HashMap.Node.value (line 68)", "CustomerDto.email (line 74)"] {
        assert!(dot.contains(&format!("label = \"{node}")), "{node} in {dot}");
    }
    assert!(dot.contains("1,500 copies"), "{dot}");
    assert!(!dot.contains('$') && !dot.contains("java.lang."), "{dot}");
    let calls = dir.path().join("calls.dot");
    let o = bloatlens(&["profile", "--format", "dot", "--graph", "calls", "--output", calls.to_str().unwrap(), src]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let tree = std::fs::read_to_string(&calls).unwrap();
    assert!(tree.contains("Main.toRow") && tree.contains("instructions ("), "{tree}");
    let o = bloatlens(&["profile", "--format", "dot", "--finding", "99", src]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("there is no finding 99"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = bloatlens(&["profile", "--format", "dot", "--graph", "heap", src]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("unknown graph `heap`"));
    // Graphviz reads both.
    match Command::new("dot").arg("-V").output() {
        Ok(_) => {
            for file in [&chain, &calls] {
                let svg = Command::new("dot").arg("-Tsvg").arg(file).output().unwrap();
                assert!(svg.status.success(), "dot: {}", String::from_utf8_lossy(&svg.stderr));
                assert!(String::from_utf8_lossy(&svg.stdout).contains("<svg"));
            }
        }
        Err(_) => assert!(
            std::env::var_os("CI").is_none(),
            "Graphviz's dot is missing (scripts/install-tools.sh installs it)"
        ),
    }
}

/// Values rotated through one array, round and round, are the program's state moving within
/// one object: no copy chain, no clone.
#[test]
fn a_ring_rotated_in_place_is_no_copy_chain() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(
        dir.path(),
        "Rotate.java",
        r#"
public class Rotate {
    static final class Ring { final Integer[] slots = new Integer[64]; }
    public static void main(String[] args) {
        Ring r = new Ring();
        for (int i = 0; i < r.slots.length; i++) r.slots[i] = i;
        for (int turn = 0; turn < 200; turn++) {
            Integer first = r.slots[0];
            for (int i = 0; i + 1 < r.slots.length; i++) r.slots[i] = r.slots[i + 1];
            r.slots[r.slots.length - 1] = first;
        }
        System.out.println(r.slots[0]);
    }
}
"#,
    );
    let out = dir.path().join("report.json");
    let o = profile_json(&out, &[], &[&src]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = json_report(&out);
    let copies: Vec<&serde_json::Value> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "copy-chain" || f["kind"] == "clone")
        .collect();
    assert!(copies.is_empty(), "a ring's values moving within its array are state, not copies: {copies:#?}");
}

/// A library compiled into a class path directory (its sources are not the user's) is library code:
/// the finding is on the user's line that calls it, never inside the library's file.
#[test]
fn a_class_path_directory_without_the_users_sources_is_a_library() {
    let dir = tempfile::tempdir().unwrap();
    let lib_src = dir.path().join("vendor/geo");
    std::fs::create_dir_all(&lib_src).unwrap();
    let points = write(
        &lib_src,
        "Points.java",
        "package geo;\npublic final class Points {\n    public static final class Pair { public final int a, b; Pair(int a, int b) { this.a = a; this.b = b; } }\n    public static Pair make(int i) { return new Pair(i, i * 2); }\n}\n",
    );
    let lib_classes = dir.path().join("lib-classes");
    assert!(Command::new("javac").arg("-g").arg("-d").arg(&lib_classes).arg(&points).status().unwrap().success());
    let app = dir.path().join("app");
    std::fs::create_dir_all(&app).unwrap();
    let main = write(
        &app,
        "Main.java",
        "public class Main {\n    public static void main(String[] args) {\n        long s = 0;\n        for (int i = 0; i < 2000; i++) {\n            s += geo.Points.make(i).a;\n        }\n        System.out.println(s);\n    }\n}\n",
    );
    let out = dir.path().join("r.json");
    let o = profile_json(&out, &["-cp", lib_classes.to_str().unwrap(), "--analyses", "refprop"], &[&main]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = json_report(&out);
    let shown: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f.get("hidden").is_none()).collect();
    let files: Vec<String> = shown
        .iter()
        .map(|f| format!("{}:{}", f["location"]["file"].as_str().unwrap_or("?"), f["location"]["line"]))
        .collect();
    assert!(files.iter().any(|f| f.ends_with("Main.java:5")), "the call in Main is the subject: {files:?}");
    assert!(!files.iter().any(|f| f.contains("Points.java")), "nothing inside the library: {files:?}");
}

/// `-cp` before the program is the class path; after it, the program's own argument, untouched.
#[test]
fn arguments_after_the_program_are_the_programs() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(
        dir.path(),
        "Echo.java",
        "public class Echo { public static void main(String[] a) { System.out.println(String.join(\"|\", a)); } }\n",
    );
    let classes = dir.path().join("classes");
    assert!(Command::new("javac").arg("-d").arg(&classes).arg(&src).status().unwrap().success());
    let cp = classes.to_str().unwrap();
    let o = bloatlens(&["run", "-cp", cp, "Echo", "-cp", "a", "-classpath", "--max-seconds", "b"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "-cp|a|-classpath|--max-seconds|b\n",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = bloatlens(&[
        "profile",
        "--analyses",
        "refprop",
        "-classpath",
        cp,
        "--program-output",
        dir.path().join("out.txt").to_str().unwrap(),
        "Echo",
        "-cp",
        "x",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(dir.path().join("out.txt")).unwrap(), "-cp|x\n");
    let help = bloatlens(&["profile", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("-cp"));
}

#[test]
fn profile_exits_with_the_programs_status_or_2_when_it_could_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(
        dir.path(),
        "Quits.java",
        "public class Quits { public static void main(String[] a) { System.out.println(\"bye\"); System.exit(3 + a.length); } }",
    );
    let out = dir.path().join("r.json");
    let o = profile_json(&out, &[], &[&src, "x"]);
    assert_eq!(o.status.code(), Some(4), "System.exit's status: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json_report(&out)["run"]["exit_status"], 4);
    // A main class that does not exist: nothing ran, no report, status 2.
    let classes = dir.path().join("classes");
    std::fs::create_dir_all(&classes).unwrap();
    let o = bloatlens(&["profile", "-cp", classes.to_str().unwrap(), "NoSuchMain"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "", "no report for a program that never ran");
    assert!(String::from_utf8_lossy(&o.stderr).contains("could not find or load main class NoSuchMain"));
}

#[test]
fn a_json_report_on_stdout_keeps_the_programs_output_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Temps.java", TEMPS);
    let o = bloatlens(&["profile", "--format", "json", &src]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).expect("stdout is the JSON report alone");
    assert_eq!(report["run"]["outcome"], "exited");
    assert!(String::from_utf8_lossy(&o.stderr).contains("sum 59700\n"));
}

#[test]
fn a_source_file_is_found_from_inside_its_package_folder() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("com/acme/util");
    std::fs::create_dir_all(&pkg).unwrap();
    write(
        &pkg,
        "Names.java",
        "package com.acme.util;\npublic class Names { static String shout(String s) { return s.toUpperCase(); } }\n",
    );
    write(
        &pkg,
        "App.java",
        "package com.acme.util;\npublic class App { public static void main(String[] a) { System.out.println(Names.shout(\"hi\")); } }\n",
    );
    let o =
        Command::new(env!("CARGO_BIN_EXE_bloatlens")).current_dir(&pkg).args(["profile", "App.java"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("HI\n"), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn a_stack_overflow_names_the_flag_and_a_deep_recursion_runs_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(
        dir.path(),
        "Deep.java",
        "public class Deep { static int down(int n) { return n == 0 ? 0 : 1 + down(n - 1); }
         public static void main(String[] a) { System.out.println(down(Integer.parseInt(a[0]))); } }",
    );
    let o = bloatlens(&["profile", "--analyses", "copy", &src, "5000"]);
    assert!(o.status.success(), "5,000 frames run under java's default stack: {}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("5000\n"));
    let o = bloatlens(&["profile", "--analyses", "copy", "--max-stack-depth", "1000", &src, "5000"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("java.lang.StackOverflowError"), "{err}");
    assert!(err.contains("--max-stack-depth"), "the hint names the flag: {err}");
}

#[test]
fn numeric_flags_out_of_range_are_errors() {
    for (flag, value) in [("--max-heap-mb", "0"), ("--max-heap-mb", "99999999999999"), ("--max-stack-depth", "5")] {
        let o = bloatlens(&["profile", flag, value, "Nope.java"]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(flag) && err.contains("error"), "{flag} {value}: {err}");
    }
}

#[test]
fn ctrl_c_stops_the_program_and_still_prints_the_report() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let src = write(
        dir.path(),
        "Spin.java",
        "public class Spin { public static void main(String[] a) { System.err.println(\"started\"); long s = 0;
         while (true) { s += new StringBuilder().append(s).length(); } } }",
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .args(["profile", "--format", "json", &src])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("started") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "the program never started");
    }
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130));
    let report: Value = serde_json::from_slice(&o.stdout).expect("the report is printed after Ctrl-C");
    assert_eq!(report["run"]["outcome"], "cancelled");
    assert_eq!(report["run"]["partial"], true);
}

/// The README's sample output is what `scripts/demo.sh` prints: its findings, in order, with their
/// quoted lines (timings aside).
#[test]
fn the_readme_sample_output_is_the_demos() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let sample: Vec<&str> = readme
        .split("$ scripts/demo.sh\n")
        .nth(1)
        .expect("the README shows the demo's output")
        .lines()
        .take_while(|l| !l.starts_with("```"))
        .filter(|l| {
            l.starts_with("findings:")
                || l.trim_start().starts_with("| ")
                || l.split_once(". [").is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
        })
        .collect();
    assert!(sample.len() >= 4, "{sample:?}");
    let o = bloatlens(&["profile", root.join("examples/orders/OrderReport.java").to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8_lossy(&o.stdout);
    let mut rest = printed.as_ref();
    for line in sample {
        let at = rest.find(line).unwrap_or_else(|| {
            panic!("the README's sample line\n  {line}\nis not (in this order) in what the demo prints:\n{printed}")
        });
        rest = &rest[at + line.len()..];
    }
}

/// The clone of the papers' running example (a list copied element by element) is drawn: its
/// part of the copy graph, the arrays its elements are copied between.
#[test]
fn dot_draws_a_clone() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bloat/deep_clone_list/Main.java");
    let src = src.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let o = profile_json(&out, &[], &[src, "a", "b", "c", "d", "e"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let n = kinds(&json_report(&out)).iter().position(|k| k == "clone").expect("a clone finding") + 1;
    let o = bloatlens(&["profile", "--format", "dot", "--finding", &n.to_string(), src, "a", "b", "c", "d", "e"]);
    let dot = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dot.contains("label = \"clone — "), "{dot}");
    let filled: Vec<&str> = dot.lines().filter(|l| l.contains("filled")).collect();
    assert!(filled.len() >= 2, "the clone's own nodes are marked: {dot}");
    assert!(filled.iter().all(|l| l.contains("Object[] elements")), "{filled:?}");
}

/// A program that says it started, then runs until it is stopped.
const SPINS: &str = r#"
public class Spins {
    public static void main(String[] args) {
        System.out.println("started");
        long s = 0;
        while (true) { s += Integer.toString((int) s).length(); }
    }
}
"#;

/// SIGTERM (what CI runners and `timeout` send) is the first Ctrl-C: the program ends as a
/// budget would end it, the report is printed, the exit status is 130, and the build directory
/// is removed.
#[test]
fn sigterm_ends_the_program_with_its_report_and_no_build_directory_left() {
    use std::io::{BufRead, Read};
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Spins.java", SPINS);
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .args(["profile", "--analyses", "copy", "--max-seconds", "120", &src])
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "started\n");
    let build: Vec<std::path::PathBuf> = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(build.len(), 1, "the build directory, while the program runs");
    // Private: what is compiled there is run, so no other user may write into it.
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::symlink_metadata(&build[0]).unwrap().permissions().mode() & 0o777, 0o700, "{build:?}");
    // SAFETY: a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    let mut report = String::new();
    stdout.read_to_string(&mut report).unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(report.starts_with("bloatlens: Spins — cancelled"), "{report}");
    assert!(stderr.contains("bloatlens: interrupted"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// `--output` and `--program-output` are opened before anything runs: a path that cannot be
/// written is an error at once (status 2), with no run; a file made for a run that then could
/// not start is removed.
#[test]
fn an_output_that_cannot_be_written_is_an_error_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Temps.java", TEMPS);
    for flag in ["--output", "--program-output"] {
        let o = bloatlens(&["profile", flag, "/nonexistent/dir/out.txt", &src]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.starts_with("bloatlens: error: cannot write /nonexistent/dir/out.txt"), "{stderr}");
        assert_eq!(String::from_utf8_lossy(&o.stdout), "", "{flag}: nothing ran");
    }
    let broken = write(dir.path(), "Broken.java", "public class Broken { void f() { int x = ; } }");
    let out = dir.path().join("r.json");
    let o = profile_json(&out, &[], &[&broken]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists(), "a report file for a program that did not compile");
    std::fs::write(&out, "earlier").unwrap();
    let o = profile_json(&out, &[], &[&broken]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "earlier", "an existing report is kept");
}

/// stdout a closed pipe: the report cannot be written, which is a job not done (status 2), and
/// with stderr closed too an error still exits 2 where `eprintln!` would panic (101).
#[test]
fn a_closed_stdout_or_stderr_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let src = write(dir.path(), "Temps.java", TEMPS);
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .args(["profile", "--format", "json", &src])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bloatlens: error: writing the report to stdout: Broken pipe"), "{stderr}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .args(["profile", "-cp", dir.path().to_str().unwrap(), "Nope"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(2));
}

/// Paths and program arguments that are not UTF-8 are taken as the bytes they are.
#[test]
fn a_report_path_and_arguments_that_are_not_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let src = write(
        dir.path(),
        "Echo.java",
        "public class Echo { public static void main(String[] a) { System.out.println(String.join(\"|\", a)); } }\n",
    );
    let mut out = dir.path().as_os_str().to_os_string();
    out.push(OsStr::from_bytes(b"/r\xff.json"));
    let o = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .args(["profile", "--format", "json", "--output"])
        .arg(&out)
        .arg(&src)
        .arg(OsStr::from_bytes(b"x\xffy"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "x\u{fffd}y\n");
    assert_eq!(json_report(Path::new(&out))["run"]["main_class"], "Echo");
}

/// `bloatlens fix`: the findings listed with their fixes, one printed as a diff (nothing written),
/// checked, applied; then `profile --compare` with the report before it says what it saved and
/// that the finding is gone. A finding without a fix exits 1 with the reason.
#[test]
fn fix_lists_prints_checks_and_applies_a_quick_fix_and_compare_measures_it() {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bloat/corpus/word_frequency/Main.java"),
    )
    .unwrap();
    let main = write(dir.path(), "Main.java", &original);
    let before = dir.path().join("before.json");
    let out = profile_json(&before, &["--program-output", dir.path().join("p.txt").to_str().unwrap()], &[&main]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let list = bloatlens(&["fix", &main, "--report", before.to_str().unwrap()]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.starts_with("1. [A regular expression compiled per call] Main.java:54 — fix: Compile"), "{listed}");
    assert!(listed.contains("2. [A temporary string per call] Main.java:59 — no fix: "), "{listed}");

    let refused = bloatlens(&["fix", &main, "--report", before.to_str().unwrap(), "--finding", "2"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no fix offered"), "{refused:?}");

    let diff = bloatlens(&["fix", &main, "--finding", "1", "--check"]);
    assert!(diff.status.success(), "{}", String::from_utf8_lossy(&diff.stderr));
    let patch = String::from_utf8_lossy(&diff.stdout);
    assert!(
        patch.contains("+    private static final Pattern WORD_PATTERN = Pattern.compile(\"[^A-Za-z']\");"),
        "{patch}"
    );
    assert!(patch.contains("+import java.util.regex.Pattern;"), "{patch}");
    let said = String::from_utf8_lossy(&diff.stderr);
    assert!(
        said.contains("check: compiles and prints the same; saved ") && said.contains("the finding is gone"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&main).unwrap(), original, "nothing is written without --apply");

    let applied = bloatlens(&["fix", &main, "--report", before.to_str().unwrap(), "--finding", "1", "--apply"]);
    assert!(applied.status.success());
    assert!(std::fs::read_to_string(&main).unwrap().contains("WORD_PATTERN.matcher(token).replaceAll(\"\")"));

    let after = bloatlens(&["profile", &main, "--compare", before.to_str().unwrap(), "--program-output", "/dev/null"]);
    let text = String::from_utf8_lossy(&after.stdout);
    assert!(
        text.contains("  the program's own work: −") && text.contains("findings gone: regex-per-call at Main.java:54"),
        "{text}"
    );
}

/// Collections are counted from `main`: what start-up allocates depends on where the program runs
/// (`user.dir`, the user's home), and must not move the program's collections and so its objects'
/// lifetimes. The same program, run from directories of different lengths with a different home,
/// gets the same lifetime findings to the object.
#[test]
fn lifetimes_do_not_depend_on_where_the_program_runs() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bloat/lifetime_mixed_factory/Main.java");
    let src = dir.path().join("Main.java");
    std::fs::copy(fixture, &src).unwrap();
    let lifetimes = |cwd: &Path, home: &str| {
        std::fs::create_dir_all(cwd).unwrap();
        let out = dir.path().join("report.json");
        let o = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
            .args(["profile", "--analyses", "lifetime", "--format", "json", "--output"])
            .arg(&out)
            .arg(&src)
            .current_dir(cwd)
            .env("HOME", home)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let findings = json_report(&out)["findings"].clone();
        assert!(findings.as_array().is_some_and(|f| !f.is_empty()), "lifetime findings: {findings}");
        findings
    };
    let near = lifetimes(&dir.path().join("a"), "/tmp");
    let far = lifetimes(&dir.path().join("a".repeat(100)).join("b".repeat(100)), &format!("/tmp/{}", "h".repeat(150)));
    assert_eq!(near, far);
}

//! `bloatlens profile --format sarif` and `--fail-on`: the SARIF log validates against the
//! OASIS SARIF 2.1.0 schema (vendored in `tests/schemas/`), copy chains are code flows with a
//! location per hop, fingerprints are the same from run to run, `--compare` sets each result's
//! baselineState, and `--fail-on` gates a CI job with exit status 1.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `bloatlens profile <args…>`, run from the repository's root (as a CI job runs it).
fn bloatlens(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bloatlens")).args(args).current_dir(repo()).output().unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn validate(log: &Value) {
    let schema: Value = read_json(&repo().join("profiler/tests/schemas/sarif-schema-2.1.0.json"));
    let validator = jsonschema::draft7::new(&schema).expect("the SARIF schema compiles");
    let errors: Vec<String> = validator.iter_errors(log).map(|e| format!("{} at {}", e, e.instance_path)).collect();
    assert!(errors.is_empty(), "the SARIF log breaks the schema:\n{}", errors.join("\n"));
}

fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"].as_array().unwrap()
}

fn prints(log: &Value) -> Vec<String> {
    let mut p: Vec<String> =
        results(log).iter().map(|r| r["partialFingerprints"]["bloatlens/v1"].as_str().unwrap().to_string()).collect();
    p.sort();
    p
}

#[test]
fn a_corpus_program_as_sarif_validates_with_chains_as_code_flows_and_stable_fingerprints() {
    let dir = tempfile::tempdir().unwrap();
    let target = "fixtures/bloat/corpus/customer_dto_mapping";
    let first = dir.path().join("first.sarif");
    let o = bloatlens(&["profile", "--format", "sarif", "--output", first.to_str().unwrap(), target]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let log = read_json(&first);
    validate(&log);
    assert_eq!(log["version"], "2.1.0");

    let rules = log["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 27 + 10, "one rule per catalog pattern, then one per raw finding kind");
    for r in rules {
        assert!(!r["help"]["text"].as_str().unwrap().is_empty(), "{} has help", r["id"]);
    }
    let results = results(&log);
    assert!(!results.is_empty());
    for r in results {
        let rule = &rules[r["ruleIndex"].as_u64().unwrap() as usize];
        assert_eq!(rule["id"], r["ruleId"], "ruleIndex points at the rule");
        let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap_or("");
        assert!(
            uri.starts_with(&format!("{target}/")),
            "the user's own source, relative to the working directory: {r}"
        );
        assert!(r["properties"]["evidence"].is_object());
        // What was found, then what to do: two sentences, the first ended by a period (a raw
        // result that fits no pattern is hidden, level `none`, and has no advice).
        if r["level"] == "none" && r["ruleId"] == r["properties"]["kind"] {
            continue;
        }
        let text = r["message"]["text"].as_str().unwrap();
        let (found, advice) = text.split_once(". ").unwrap_or_else(|| panic!("two sentences: {text:?}"));
        assert!(!found.is_empty() && advice.ends_with('.'), "{text:?}");
        assert!(advice.starts_with(char::is_uppercase), "the advice starts a sentence: {text:?}");
    }
    let chain = results
        .iter()
        .find(|r| r["properties"]["kind"] == "copy-chain" && r["codeFlows"].is_array())
        .expect("a copy chain in the DTO mapping");
    let steps = chain["codeFlows"][0]["threadFlows"][0]["locations"].as_array().unwrap();
    let related = chain["relatedLocations"].as_array().unwrap();
    assert_eq!(steps.len(), related.len() + 1, "the user's line, then a step per hop");
    assert!(steps[1]["location"]["message"]["text"].as_str().unwrap().starts_with("hop 1 of"), "{}", steps[1]);

    // A second run: the same findings have the same fingerprints.
    let second = dir.path().join("second.sarif");
    let o = bloatlens(&["profile", "--format", "sarif", "--output", second.to_str().unwrap(), target]);
    assert!(o.status.success());
    assert_eq!(prints(&log), prints(&read_json(&second)));
    let mut unique = prints(&log);
    unique.dedup();
    assert_eq!(unique.len(), results.len(), "no two findings share a fingerprint");
}

const PAIRS: &str = r#"
public class Pairs {
    static final class Pair { final int a, b; Pair(int a, int b) { this.a = a; this.b = b; } }
    static Pair pair(int i) { return new Pair(i, i * 2); }
    public static void main(String[] args) {
        long s = 0;
        for (int i = 0; i < 200; i++) { Pair p = pair(i); s += p.a + p.b; }
        System.out.println("sum " + s);
    }
}
"#;

#[test]
fn compare_sets_baseline_states_and_fail_on_gates_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("Pairs.java");
    let src_arg = src.to_str().unwrap();
    std::fs::write(&src, PAIRS).unwrap();
    let before = dir.path().join("before.json");
    let o = bloatlens(&["profile", "--format", "json", "--output", before.to_str().unwrap(), src_arg]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = read_json(&before);
    let shown =
        |kind: &str| report["findings"].as_array().unwrap().iter().any(|f| f["kind"] == kind && f["hidden"].is_null());
    assert!(shown("nath"), "new Pair(…) never reaches the heap: {report}");

    let sarif = |extra: &[&str]| -> (Output, Value) {
        let out = dir.path().join("now.sarif");
        let mut args = vec!["profile", "--format", "sarif", "--output", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.push(src_arg);
        let o = bloatlens(&args);
        let log = if out.exists() { read_json(&out) } else { Value::Null };
        let _ = std::fs::remove_file(&out);
        (o, log)
    };
    let states = |log: &Value| -> Vec<String> {
        let mut s: Vec<String> =
            results(log).iter().map(|r| r["baselineState"].as_str().unwrap().to_string()).collect();
        s.sort();
        s.dedup();
        s
    };

    // The same program: every result is unchanged, and a gate on new findings passes.
    let (o, log) = sarif(&["--compare", before.to_str().unwrap(), "--fail-on", "new"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    validate(&log);
    assert_eq!(states(&log), ["unchanged"]);

    // Twice the pairs: the same finding with other figures is updated.
    std::fs::write(&src, PAIRS.replace("i < 200", "i < 400")).unwrap();
    let (_, log) = sarif(&["--compare", before.to_str().unwrap()]);
    validate(&log);
    assert!(states(&log).contains(&"updated".to_string()), "{:?}", states(&log));

    // The factory renamed: its finding is new, the old one absent, and the gate on new trips.
    std::fs::write(&src, PAIRS.replace("pair(", "makePair(")).unwrap();
    let (o, log) = sarif(&["--compare", before.to_str().unwrap(), "--fail-on", "new"]);
    validate(&log);
    let s = states(&log);
    assert!(s.contains(&"new".to_string()) && s.contains(&"absent".to_string()), "{s:?}");
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bloatlens: --fail-on new: "));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "sum 59700\n", "the report went to its file");

    // Gates on kinds and severities trip exactly when the report has such findings.
    std::fs::write(&src, PAIRS).unwrap();
    for kind in ["nath", "copy-chain", "clone", "lifetime", "warning"] {
        let o = bloatlens(&["profile", "--fail-on", kind, src_arg]);
        let expected = if kind == "warning" {
            report["findings"].as_array().unwrap().iter().any(|f| f["severity"] == "warning" && f["hidden"].is_null())
        } else {
            shown(kind)
        };
        assert_eq!(
            o.status.code(),
            Some(if expected { 1 } else { 0 }),
            "--fail-on {kind}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    // Mistakes are named before anything runs.
    let o = bloatlens(&["profile", "--fail-on", "new", src_arg]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--compare"));
    let o = bloatlens(&["profile", "--fail-on", "copies", src_arg]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown --fail-on condition `copies`"));
    assert!(o.stdout.is_empty(), "the program did not run");
}

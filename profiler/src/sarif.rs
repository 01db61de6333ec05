//! SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format) for CI: one rule per finding
//! kind with its help text, a result per finding on the user's source line, copy chains as code
//! flows (a location per hop), the evidence in `properties`, fingerprints that stay the same
//! from run to run, and with an earlier report, each result's `baselineState`.

use crate::patterns::Pattern;
use crate::report::{Finding, Kind, Location, Report, Severity};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The key `partialFingerprints` holds a finding's fingerprint under.
pub const FINGERPRINT: &str = "bloatlens/v1";

/// Where source files are found and how their URIs are written: relative to `base` (the
/// working directory, `%SRCROOT%`) when they lie under it, else absolute `file:` URIs.
pub struct Sources<'a> {
    pub roots: &'a [PathBuf],
    pub base: &'a Path,
}

/// The SARIF log of `report`; with `previous`, results carry their `baselineState` and the
/// previous run's findings that are gone appear as `absent`.
pub fn to_sarif(report: &Report, previous: Option<&Report>, sources: &Sources) -> Value {
    let prints = fingerprints(&report.findings);
    let mut results: Vec<Value> =
        report.findings.iter().zip(&prints).map(|(f, print)| result(f, print, sources)).collect();
    if let Some(previous) = previous {
        let before: HashMap<String, &Finding> =
            fingerprints(&previous.findings).into_iter().zip(&previous.findings).collect();
        for (r, (f, print)) in results.iter_mut().zip(report.findings.iter().zip(&prints)) {
            let state = match before.get(print) {
                None => "new",
                Some(old) if old.message == f.message && old.severity == f.severity => "unchanged",
                Some(_) => "updated",
            };
            r["baselineState"] = json!(state);
        }
        let now: std::collections::HashSet<&String> = prints.iter().collect();
        for (print, f) in fingerprints(&previous.findings).iter().zip(&previous.findings) {
            if !now.contains(print) {
                let mut r = result(f, print, sources);
                r["baselineState"] = json!("absent");
                results.push(r);
            }
        }
    }
    let rules: Vec<Value> =
        Pattern::ALL.iter().map(|&p| pattern_rule(p)).chain(Kind::ALL.iter().map(|&k| kind_rule(k))).collect();
    let run = &report.run;
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "Bloatlens",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/bloatlens/bloatlens",
                "rules": rules,
            }},
            "originalUriBaseIds": { "%SRCROOT%": { "uri": dir_uri(sources.base) } },
            "invocations": [{
                "executionSuccessful": run.outcome != "stopped",
                "exitCode": run.exit_status,
                "commandLine": std::iter::once(run.main_class.as_str()).chain(run.args.iter().map(String::as_str)).collect::<Vec<_>>().join(" "),
                "properties": {
                    "outcome": run.outcome,
                    "outcomeDetail": run.outcome_detail,
                    "partial": run.partial,
                    "wallMs": run.wall_ms,
                    "instructions": run.instructions,
                    "allocatedBytes": run.allocated_bytes,
                    "jdk": run.jdk,
                    // A test run's outcomes (the entry point was a JUnit test).
                    "tests": report.tests,
                },
            }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// The rule of a catalog pattern: what it is and its fix, its page in the catalog.
fn pattern_rule(p: Pattern) -> Value {
    let e = p.entry();
    json!({
        "id": p.id(),
        "name": e.title.split(' ').map(capitalised).collect::<String>().replace([',', '\'', '-'], ""),
        "shortDescription": { "text": format!("Bloatlens: {}", e.title) },
        "fullDescription": { "text": e.what },
        "help": {
            "text": format!("{} Fix: {}", e.what, e.fix),
            "markdown": format!("**{}**. {}\n\n**Fix.** {}\n\nBefore:\n\n```java\n{}\n```\n\nAfter:\n\n```java\n{}\n```", e.title, e.what, e.fix, e.before, e.after),
        },
        "helpUri": format!("https://github.com/bloatlens/bloatlens/blob/main/{}", p.doc_anchor()),
        "defaultConfiguration": { "level": "warning" },
        "properties": { "tags": ["performance", "memory", "pattern"] },
    })
}

/// The rule of a raw analysis result (a finding that fits no pattern, hidden): its kind.
fn kind_rule(kind: Kind) -> Value {
    let help = kind.glossary();
    json!({
        "id": kind.as_str(),
        "name": kind.label().split(' ').map(capitalised).collect::<String>().replace(',', ""),
        "shortDescription": { "text": format!("Bloatlens: {}", kind.label()) },
        "fullDescription": { "text": help },
        "help": { "text": help, "markdown": format!("**{}**. {help}", kind.label()) },
        "defaultConfiguration": { "level": "note" },
        "properties": { "tags": ["performance", "memory", kind.family().as_str()] },
    })
}

/// A result's rule: its pattern's, else its raw kind's.
fn rule_id(f: &Finding) -> &'static str {
    f.pattern.map_or(f.kind().as_str(), Pattern::id)
}

fn capitalised(word: &str) -> String {
    let mut c = word.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// A result's message: what was found, then what to do, as two sentences.
fn message_text(f: &Finding) -> String {
    let message = f.message.trim_end();
    if f.advice.is_empty() {
        return message.to_string();
    }
    let end = if message.ends_with(['.', '!', '?']) { "" } else { "." };
    format!("{message}{end} {}", f.advice.trim())
}

fn level(f: &Finding) -> &'static str {
    match f.severity {
        Severity::Warning => "warning",
        Severity::Info => "note",
        Severity::Hint => "none",
    }
}

fn result(f: &Finding, print: &str, sources: &Sources) -> Value {
    let rule_index = match f.pattern {
        Some(p) => Pattern::ALL.iter().position(|x| *x == p),
        None => Kind::ALL.iter().position(|k| *k == f.kind()).map(|i| i + Pattern::ALL.len()),
    };
    let mut r = json!({
        "ruleId": rule_id(f),
        "level": level(f),
        "message": { "text": message_text(f) },
        "locations": [location(&f.location, None, sources)],
        "partialFingerprints": { FINGERPRINT: print },
        "rank": (f.share * 100.0).clamp(0.0, 100.0),
    });
    if let Some(i) = rule_index {
        r["ruleIndex"] = json!(i);
    }
    if !f.related.is_empty() {
        r["relatedLocations"] = Value::Array(
            f.related
                .iter()
                .enumerate()
                .map(|(i, rel)| location(&rel.location, Some((i, &rel.role)), sources))
                .collect(),
        );
    }
    if matches!(f.kind(), Kind::CopyChain | Kind::Clone) {
        // The chain, hop by hop, as a code flow: the user's line, then every load and store.
        let steps: Vec<Value> =
            std::iter::once(json!({ "location": location(&f.location, None, sources), "nestingLevel": 0 }))
                .chain(f.related.iter().map(|rel| {
                    let mut l = location(&rel.location, None, sources);
                    l["message"] = json!({ "text": rel.role });
                    json!({ "location": l, "nestingLevel": 1 })
                }))
                .collect();
        r["codeFlows"] = json!([{ "threadFlows": [{ "locations": steps }] }]);
    }
    let mut properties = Map::new();
    properties.insert("share".into(), json!(f.share));
    properties.insert("score".into(), json!(f.score));
    properties.insert("severity".into(), json!(f.severity));
    properties.insert("kind".into(), json!(f.kind()));
    if let Some(h) = &f.hidden {
        properties.insert("hidden".into(), json!(h));
    }
    properties.insert("evidence".into(), json!(f.evidence));
    r["properties"] = Value::Object(properties);
    r
}

/// A physical location when the source file is known, and always the logical one (the method).
fn location(l: &Location, related: Option<(usize, &str)>, sources: &Sources) -> Value {
    let mut out = Map::new();
    if let Some((id, role)) = related {
        out.insert("id".into(), json!(id));
        out.insert("message".into(), json!({ "text": role }));
    }
    // A library's frame (the JDK, a jar) has no source in the workspace: its method is named only.
    if let Some(artifact) = l.file.as_deref().and_then(|f| artifact(f, sources)) {
        let mut physical = Map::new();
        physical.insert("artifactLocation".into(), artifact);
        if let Some(line) = l.line.filter(|&n| n > 0) {
            physical.insert("region".into(), json!({ "startLine": line }));
        }
        out.insert("physicalLocation".into(), Value::Object(physical));
    }
    out.insert(
        "logicalLocations".into(),
        json!([{
            "fullyQualifiedName": format!("{}.{}", l.class, l.method),
            "decoratedName": format!("{}.{}{}", l.class, l.method, l.descriptor),
            "kind": "function",
        }]),
    );
    Value::Object(out)
}

/// The artifact of a source file named as javac recorded it (`com/acme/Main.java`), when it is
/// under one of the source roots.
fn artifact(file: &str, sources: &Sources) -> Option<Value> {
    let path = sources.roots.iter().map(|r| r.join(file)).find(|p| p.is_file())?;
    let path = path.canonicalize().unwrap_or(path);
    let base = sources.base.canonicalize().unwrap_or_else(|_| sources.base.to_path_buf());
    Some(match path.strip_prefix(&base) {
        Ok(rel) => json!({ "uri": encode(&rel.to_string_lossy()), "uriBaseId": "%SRCROOT%" }),
        Err(_) => json!({ "uri": format!("file://{}", encode(&path.to_string_lossy())) }),
    })
}

fn dir_uri(dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let s = encode(&dir.to_string_lossy());
    format!("file://{}{}", s, if s.ends_with('/') { "" } else { "/" })
}

/// Percent-encodes what a URI path may not hold as is (RFC 3986: unreserved characters and `/` stay).
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b'$' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A fingerprint per finding that survives edits elsewhere and a second run: the kind, the
/// method, the expression (or the bytecode index where there is none) and the methods a chain
/// passes through; two findings alike in all that are told apart by their order in the method.
pub fn fingerprints(findings: &[Finding]) -> Vec<String> {
    let keys: Vec<String> = findings
        .iter()
        .map(|f| {
            let l = &f.location;
            let at = l.expression.clone().unwrap_or_else(|| format!("@{}", l.bci));
            let through: Vec<String> = f
                .related
                .iter()
                .map(|r| format!("{}.{}{}", r.location.class, r.location.method, r.location.descriptor))
                .collect();
            format!("{}\n{}.{}{}\n{at}\n{}", f.kind(), l.class, l.method, l.descriptor, through.join("\n"))
        })
        .collect();
    // Alike findings are numbered in the order of their bytecode positions, not of their rank.
    let mut order: Vec<usize> = (0..findings.len()).collect();
    order.sort_by_key(|&i| (keys[i].clone(), findings[i].location.bci));
    let mut ordinal = vec![0usize; findings.len()];
    for w in 1..order.len() {
        if keys[order[w]] == keys[order[w - 1]] {
            ordinal[order[w]] = ordinal[order[w - 1]] + 1;
        }
    }
    keys.iter()
        .zip(&ordinal)
        .map(|(k, n)| {
            let digest = Sha256::digest(format!("{k}\n#{n}").as_bytes());
            digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
        })
        .collect()
}

//! Findings to LSP values: diagnostics with related information, lens titles, hover markdown.
//! The only module that knows both the report and the protocol.

use crate::state::{Mapped, Snapshot, Status};
use bloatlens_profiler::report::{kind_label, Finding};
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};

pub const SOURCE: &str = "bloatlens";

pub fn severity(f: &Finding) -> DiagnosticSeverity {
    match f.severity.as_str() {
        "warning" => DiagnosticSeverity::WARNING,
        "info" => DiagnosticSeverity::INFORMATION,
        _ => DiagnosticSeverity::HINT,
    }
}

/// One diagnostic per line: findings that share a line (a NATH and a lifetime finding on one
/// `new`) are one problem to the reader. The line's most important finding leads (findings come in
/// rank order); the others follow in its message, their places among its related locations, and
/// every finding's key in its data (a suppression removes them all).
pub fn diagnostics<'a>(findings: impl IntoIterator<Item = &'a Mapped>) -> Vec<Diagnostic> {
    let mut lines: Vec<Vec<&Mapped>> = Vec::new();
    for m in findings {
        match lines.iter_mut().find(|g| g[0].uri == m.uri && g[0].range.start.line == m.range.start.line) {
            Some(g) => g.push(m),
            None => lines.push(vec![m]),
        }
    }
    lines.into_iter().map(|g| line_diagnostic(&g)).collect()
}

fn line_diagnostic(group: &[&Mapped]) -> Diagnostic {
    let lead = group[0];
    let f = &lead.finding;
    let mut related: Vec<DiagnosticRelatedInformation> = Vec::new();
    for r in group.iter().flat_map(|m| &m.related) {
        let info = DiagnosticRelatedInformation {
            location: Location { uri: r.uri.clone(), range: r.range },
            message: r.role.clone(),
        };
        if !related.contains(&info) {
            related.push(info);
        }
    }
    let mut message = f.message.clone();
    for m in &group[1..] {
        message.push_str(&format!("\nAlso {}: {}", kind_label(&m.finding.kind), m.finding.message));
    }
    if lead.stale {
        message.push_str(" (stale: from an earlier profile; the code changed since, or the latest save did not run)");
    }
    let keys: Vec<&str> = group.iter().map(|m| m.key.as_str()).collect();
    Diagnostic {
        range: lead.range,
        severity: Some(if lead.stale { DiagnosticSeverity::HINT } else { severity(f) }),
        code: Some(NumberOrString::String(f.kind.clone())),
        source: Some(SOURCE.into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        data: Some(serde_json::json!({ "key": lead.key, "keys": keys })),
        ..Default::default()
    }
}

/// `copy chain · 3 hops · 1.2 MB copied`, `NATH · 500 objects never reach the heap`.
pub fn lens_title(f: &Finding) -> String {
    // Counts may be stored as floats (cost-benefit's sums): round those.
    let n = |k: &str| f.evidence.get(k).and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|x| x.round() as u64)));
    let n = |k: &str| n(k).unwrap_or(0);
    match f.kind.as_str() {
        "copy-chain" => {
            let hops = n("hops");
            format!("copy chain · {hops} hop{} · {} copied", if hops == 1 { "" } else { "s" }, bytes(n("volume")))
        }
        "clone" => format!("clone · {} copied", bytes(n("volume"))),
        "nath" => format!("NATH · {} objects never reach the heap", n("instances")),
        "mostly-nath" => {
            format!("mostly NATH · {} of {} objects never reach the heap", n("nath_objects"), n("instances"))
        }
        "never-used" => format!("never used · {} objects", n("instances")),
        "rarely-used" => format!("rarely used · {} of {} objects", n("used_objects"), n("instances")),
        "write-read-imbalance" => format!("{} heap writes · {} reads", n("heap_writes"), n("heap_reads")),
        "lifetime" => format!(
            "lifetime: {} · {} objects",
            f.evidence.get("class").and_then(|c| c.as_str()).unwrap_or("?"),
            n("instances")
        ),
        "low-utility" => format!("low utility · costs {} · used {}", n("n_rac"), n("n_rab")),
        "bottleneck" => {
            let share = f.evidence.get("share").and_then(|v| v.as_f64()).unwrap_or(0.0);
            let metric = f.evidence.get("metric").and_then(|v| v.as_str()).unwrap_or("instructions");
            format!("bottleneck · {:.0}% of {metric}{}", share * 100.0, change(f).unwrap_or_default())
        }
        other => other.to_string(),
    }
}

/// ` · ▲ 35% since the last run` when the run was compared with an earlier one.
fn change(f: &Finding) -> Option<String> {
    let before = f.evidence.get("cum_before")?.as_i64()?;
    let delta = f.evidence.get("cum_change")?.as_i64()?;
    if before <= 0 {
        return Some(" · new since the last run".into());
    }
    let pct = delta as f64 * 100.0 / before as f64;
    if pct.abs() < 1.0 {
        return None;
    }
    Some(format!(" · {} {:.0}% since the last run", if pct > 0.0 { "▲" } else { "▼" }, pct.abs()))
}

pub fn bytes(b: u64) -> String {
    match b {
        0..=9_999 => format!("{b} B"),
        10_000..=9_999_999 => format!("{:.1} KB", b as f64 / 1e3),
        _ => format!("{:.1} MB", b as f64 / 1e6),
    }
}

/// The hover of a line: its findings, most important first. Each starts with what to change, then
/// what was seen and what a fix saves; a glossary term is explained the first time it appears;
/// the raw figures come last, under "Details".
pub fn hover_markdown(hits: &[&Mapped]) -> String {
    let mut md = String::new();
    let mut explained = Vec::new();
    for (i, m) in hits.iter().enumerate() {
        let f = &m.finding;
        if i > 0 {
            md.push_str("\n---\n\n");
        }
        md.push_str(&format!("**Bloatlens · {}** — {}\n\n", kind_label(&f.kind), lens_title(f)));
        if !f.advice.is_empty() {
            md.push_str(&format!("**{}**\n\n", f.advice));
        }
        md.push_str(&format!("{}\n\n", f.message));
        if let Some(term) = bloatlens_profiler::report::glossary(&f.kind).filter(|t| !explained.contains(t)) {
            md.push_str(&format!("_{term}_\n\n"));
            explained.push(term);
        }
        md.push_str(&format!("Fixing it would save about {:.1}% of the run.\n\n", f.share * 100.0));
        if m.stale {
            md.push_str("_The file changed since this profile; save to re-profile._\n\n");
        }
    }
    md.push_str("\n---\n\n**Details**\n\n");
    for m in hits {
        md.push_str(&details(m));
    }
    md
}

/// Evidence that is bookkeeping for triage and the editor, not a figure for the reader.
const NOT_FIGURES: [&str; 13] = [
    "path",
    "histogram",
    "calls",
    "fields",
    "also",
    "merge_key",
    "user_data",
    "handled_by_user",
    "made_by_library",
    "field",
    "suggestion",
    "leak",
    "fields_copied",
];

/// A finding's figures with readable names, its lifetimes, fields, call path and places.
fn details(m: &Mapped) -> String {
    let f = &m.finding;
    let mut md = format!("{} figures:\n\n| figure | value |\n|---|---|\n", kind_label(&f.kind));
    for (k, v) in &f.evidence {
        if NOT_FIGURES.contains(&k.as_str()) {
            continue;
        }
        let v = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
        md.push_str(&format!("| {} | {v} |\n", figure_name(k)));
    }
    let rows = bloatlens_profiler::report::histogram_rows(f);
    if !rows.is_empty() {
        md.push_str("\nLifetimes (bytes allocated while alive):\n```\n");
        for r in rows {
            md.push_str(&r);
            md.push('\n');
        }
        md.push_str("```\n");
    }
    if let Some(fields) = f.evidence.get("fields").and_then(|v| v.as_array()) {
        md.push_str("\n| field | cost (instructions) | used (instructions) |\n|---|---|---|\n");
        for row in fields.iter().take(8) {
            md.push_str(&format!("| {} | {} | {} |\n", row["field"].as_str().unwrap_or("?"), row["rac"], row["rab"]));
        }
    }
    if let Some(calls) = f.evidence.get("calls").and_then(|v| v.as_array()) {
        let names: Vec<String> =
            calls.iter().filter_map(|c| c.as_str()).map(bloatlens_profiler::analysis::bottleneck::short_name).collect();
        md.push_str(&format!("\nCall path: `{}`\n", names.join(" → ")));
    }
    if !m.related.is_empty() {
        md.push_str("\n| where | what |\n|---|---|\n");
        for r in &m.related {
            let name = r.uri.path().as_str().rsplit('/').next().unwrap_or("").to_string();
            md.push_str(&format!("| {name}:{} | {} |\n", r.range.start.line + 1, r.role));
        }
    }
    md.push('\n');
    md
}

/// An evidence key as a reader names the figure (`instances` → `objects`).
fn figure_name(key: &str) -> String {
    match key {
        "instances" => "objects".into(),
        "bytes" => "bytes allocated".into(),
        "nath_objects" => "objects never stored".into(),
        "used_objects" => "objects used".into(),
        "heap_writes" => "stores into fields".into(),
        "heap_reads" => "reads from fields".into(),
        "call_return_nodes" => "calls and returns it passes".into(),
        "heap_nodes" => "fields it passes".into(),
        "n_rac" => "cost to build (instructions)".into(),
        "n_rab" => "use (instructions)".into(),
        "rate" => "cost per use".into(),
        "frequency" => "values copied".into(),
        "hops" => "copies per value".into(),
        "volume" => "bytes copied".into(),
        "waste_factor" => "copies per computation".into(),
        "cum" => "cost of the path".into(),
        "base" => "cost in the path's own frames".into(),
        "line_ran" => "times the line ran".into(),
        "internal_bytes" => "bytes the library allocated for it".into(),
        "retained_bytes" => "bytes alive at the end".into(),
        other => other.replace('_', " "),
    }
}

/// A stable name for a finding, for suppressions: kind and bytecode location (which survive
/// edits elsewhere in the file).
pub fn key(f: &Finding) -> String {
    format!("{}|{}.{}{}|{}", f.kind, f.location.class, f.location.method, f.location.descriptor, f.location.bci)
}

pub fn uri_of(path: &std::path::Path) -> Option<Uri> {
    Uri::from_file_path(path)
}

/// `bloatlens/status`: the profile's state for an editor's status bar, sent on every change to
/// clients that set `experimental.bloatlensStatus` (the VS Code extension does).
pub enum StatusNotification {}

impl tower_lsp_server::ls_types::notification::Notification for StatusNotification {
    type Params = serde_json::Value;
    const METHOD: &'static str = "bloatlens/status";
}

/// The status as the notification carries it: `state` (`idle`, `choose` — several mains, none
/// chosen: `mains` lists them —, `compiling`, `running` — with the run's number `run`, which a newer
/// save changes —, `done`, `cancelled`, `failed` with its `message`), the main class, the problems
/// shown (one a line) and how many of them are stale (edited since the run), the last run's time.
/// A test's outcome on its lens: `✔ passed`, `✘ failed: expected <5> but was <4>` (one line, short).
pub fn test_lens_title(t: &bloatlens_profiler::junit::TestOutcome) -> String {
    use bloatlens_profiler::junit::TestStatus;
    let mark = match t.status {
        TestStatus::Passed => "✔",
        TestStatus::Failed => "✘",
        TestStatus::Aborted | TestStatus::Skipped => "○",
    };
    let summary = t.summary();
    let line = summary.lines().next().unwrap_or("");
    let short: String = line.chars().take(100).collect();
    let cut = if short.len() < line.len() { "…" } else { "" };
    format!("{mark} {short}{cut}")
}

/// `2 passed, 1 failed, 1 skipped`: the outcomes of a test run, counted.
pub fn tests_summary(tests: &[bloatlens_profiler::junit::TestOutcome]) -> String {
    use bloatlens_profiler::junit::TestStatus;
    let statuses = [TestStatus::Passed, TestStatus::Failed, TestStatus::Aborted, TestStatus::Skipped];
    statuses
        .iter()
        .filter_map(|&s| {
            let n = tests.iter().filter(|t| t.status == s).count();
            (n > 0).then(|| format!("{n} {}", s.word()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn status(snap: &Snapshot) -> serde_json::Value {
    // Counted as the editor shows them: one problem a line.
    let lines: std::collections::HashSet<(&Uri, u32)> =
        snap.findings.iter().map(|m| (&m.uri, m.range.start.line)).collect();
    let stale_lines: std::collections::HashSet<(&Uri, u32)> =
        snap.findings.iter().filter(|m| m.stale).map(|m| (&m.uri, m.range.start.line)).collect();
    let mut out = serde_json::json!({"findings": lines.len(), "stale": stale_lines.len()});
    let fields = match &snap.status {
        Status::Idle => serde_json::json!({"state": "idle"}),
        Status::Choose { mains } => serde_json::json!({"state": "choose", "mains": mains}),
        Status::Compiling { main_class, run } => {
            serde_json::json!({"state": "compiling", "mainClass": main_class, "run": run})
        }
        Status::Running { main_class, run } => {
            serde_json::json!({"state": "running", "mainClass": main_class, "run": run})
        }
        Status::Done { main_class, millis, .. } => {
            let mut done = serde_json::json!({"state": "done", "mainClass": main_class, "millis": millis});
            if let Some(report) = snap.report.as_ref().filter(|r| !r.tests.is_empty()) {
                done["tests"] = tests_summary(&report.tests).into();
            }
            done
        }
        Status::Cancelled { main_class } => serde_json::json!({"state": "cancelled", "mainClass": main_class}),
        Status::Failed(message) => serde_json::json!({"state": "failed", "message": message}),
        Status::Restricted => serde_json::json!({"state": "restricted"}),
    };
    if let Some(entry) = &snap.entry_point {
        out["entryPoint"] = entry.clone().into();
    }
    if let (Some(out), serde_json::Value::Object(fields)) = (out.as_object_mut(), fields) {
        out.extend(fields);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloatlens_profiler::report::Location;

    /// Cost-benefit's sums are floats in the report; the lens shows them as counts.
    #[test]
    fn a_low_utility_lens_rounds_the_sums_to_counts() {
        let at = Location {
            file: Some("Main.java".into()),
            line: Some(3),
            class: "Main".into(),
            method: "main".into(),
            descriptor: "([Ljava/lang/String;)V".into(),
            bci: 0,
            expression: None,
        };
        let f = Finding::new("low-utility", 1.0, String::new(), at).evidence("n_rac", 6940.4).evidence("n_rab", 0.0);
        assert_eq!(lens_title(&f), "low utility · costs 6940 · used 0");
    }
}

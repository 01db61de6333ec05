//! Findings to LSP values: diagnostics with related information, lens titles, hover markdown.
//! The only module that knows both the report and the protocol.

use crate::mapping::{Encoding, LineIndex};
use crate::state::{Mapped, Snapshot, Status};
use bloatlens_profiler::analysis::calltree::Metric;
use bloatlens_profiler::evidence::{
    BottleneckEvidence, Evidence, LifetimeClass, LowUtilityEvidence, RepeatedWork, UsageKind,
};
use bloatlens_profiler::patterns::Pattern;
use bloatlens_profiler::report::{human_bytes, Finding, Kind, Severity};
use std::collections::HashMap;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeDescription, Command, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity,
    Location, NumberOrString, TextEdit, Uri, WorkspaceEdit,
};

pub const SOURCE: &str = "bloatlens";

pub fn severity(f: &Finding) -> DiagnosticSeverity {
    match f.severity {
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
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
    let mut message = format!("{}: {}", name(f), f.message);
    for m in &group[1..] {
        message.push_str(&format!("\nAlso {}: {}", name(&m.finding), m.finding.message));
    }
    if lead.stale {
        message.push_str(" (stale: from an earlier profile; the code changed since, or the latest save did not run)");
    }
    let keys: Vec<&str> = group.iter().map(|m| m.key.as_str()).collect();
    Diagnostic {
        range: lead.range,
        severity: Some(if lead.stale { DiagnosticSeverity::HINT } else { severity(f) }),
        code: Some(NumberOrString::String(f.pattern.map_or(f.kind().as_str(), |p| p.id()).to_string())),
        code_description: f.pattern.and_then(|p| {
            let href = format!("https://github.com/bloatlens/bloatlens/blob/main/{}", p.doc_anchor());
            Some(CodeDescription { href: href.parse().ok()? })
        }),
        source: Some(SOURCE.into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        // The analysis's kind, for clients and tests that sort by it; the code is the pattern.
        data: Some(serde_json::json!({ "key": lead.key, "keys": keys, "kind": f.kind() })),
        ..Default::default()
    }
}

/// `1,500`.
fn count(n: u64) -> String {
    bloatlens_profiler::analysis::words::count(n)
}

/// `once`, `twice`, `3 times`.
fn times(n: u64) -> String {
    match n {
        1 => "once".into(),
        2 => "twice".into(),
        n => format!("{} times", count(n)),
    }
}

/// `5.7%`: a share of the run.
fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// What a finding is, for the reader: its pattern's title (`Boxing in a hot loop`), else its
/// kind's name (`lifetime`).
fn name(f: &Finding) -> &'static str {
    f.pattern.map_or(f.kind().label(), |p| p.title())
}

/// A kind's name at the start of a sentence: `Copy chain`, `NATH`, `Written, not read`.
fn label_capitalized(kind: Kind) -> String {
    let label = kind.label();
    let mut chars = label.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// What a finding's lens says, in words and with its main figures: `Copy chain: 500 values (2 KB)
/// copied once`, `NATH: 500 temporary objects, never stored`, `Low-utility structure: 2,000 built
/// for 4,204,004 instructions, used for 2,022,002`. A finding without the figures its kind is told
/// with says what a fix saves.
pub fn lens_title(f: &Finding) -> String {
    lens_words(f)
        .unwrap_or_else(|| format!("{}: a fix saves {} of the run", label_capitalized(f.kind()), percent(f.share)))
}

/// A figure a lens is told with: `None` when it is zero (a finding read without its figures).
fn some(n: u64) -> Option<u64> {
    (n > 0).then_some(n)
}

/// Cost-benefit's sums (floats) as counts.
fn rounded(x: f64) -> u64 {
    if x.is_finite() {
        x.max(0.0).round() as u64
    } else {
        0
    }
}

fn lens_words(f: &Finding) -> Option<String> {
    Some(match &f.evidence {
        Evidence::CopyChain(c) => {
            let size = some(c.volume).map(|v| format!(" ({})", human_bytes(v))).unwrap_or_default();
            format!("Copy chain: {} values{size} copied {}", count(some(c.frequency)?), times(some(c.hops)?))
        }
        Evidence::Clone(c) => format!("Clone: {} copied field by field", human_bytes(some(c.volume)?)),
        Evidence::Usage(kind, u) => {
            let all = count(some(u.instances)?);
            match kind {
                UsageKind::Nath => format!("NATH: {all} temporary objects, never stored"),
                UsageKind::MostlyNath => {
                    format!("Mostly NATH: {} of {all} objects never stored", count(u.nath_objects))
                }
                UsageKind::NeverUsed => format!("Never used: none of {all} objects is ever used"),
                UsageKind::RarelyUsed => format!("Rarely used: only {} of {all} objects used", count(u.used_objects)),
                UsageKind::WriteReadImbalance => {
                    format!("Written, not read: {} stores, {} reads back", count(u.heap_writes), count(u.heap_reads))
                }
            }
        }
        Evidence::Lifetime(l) => {
            let all = some(l.instances)?;
            match l.class {
                LifetimeClass::Short => format!("Lifetime: {} short-lived temporaries", count(all)),
                LifetimeClass::Medium | LifetimeClass::Long if f.pattern == Some(Pattern::MidLifeObjects) => format!(
                    "Lifetime: {} of {} objects die after outliving a HotSpot young generation",
                    count(l.outlived_hotspot_young),
                    count(all)
                ),
                LifetimeClass::Long => format!("Lifetime: {} objects live long", count(all)),
                LifetimeClass::Immortal if l.growing => {
                    format!("Lifetime: {} objects kept to the end, still growing", count(l.immortal))
                }
                LifetimeClass::Immortal => {
                    format!("Lifetime: {} of {} objects live to the end", count(l.immortal), count(all))
                }
                LifetimeClass::Mixed => match l.temporary_objects.filter(|&t| t > 0) {
                    Some(t) => format!(
                        "Lifetime: {} objects, kept by some callers; {} made only to be read and dropped",
                        count(all),
                        count(t)
                    ),
                    None => format!("Lifetime: {} objects, short-lived for some callers, long for others", count(all)),
                },
                LifetimeClass::Medium => format!("Lifetime: {} objects die soon after a young collection", count(all)),
            }
        }
        Evidence::FilledCollection(c) if c.only_size => {
            format!("Low utility: {} collections only asked for their size", count(some(c.instances)?))
        }
        Evidence::FilledCollection(c) => {
            format!("Low utility: {} collections filled, never read", count(some(c.instances)?))
        }
        Evidence::LowUtility(l) => {
            let unread = unread_fields(l);
            match rounded(l.unread_cost) {
                cost if cost > 0 && !unread.is_empty() => {
                    format!("Low utility: {} never read, {} instructions to compute", unread.join(", "), count(cost))
                }
                _ => {
                    let built = some(l.instances).map(|i| format!(" {} built", count(i))).unwrap_or_default();
                    let used = match rounded(l.n_rab) {
                        0 => "never used".to_string(),
                        b => format!("used for {}", count(b)),
                    };
                    format!("Low-utility structure:{built} for {} instructions, {used}", count(some(rounded(l.n_rac))?))
                }
            }
        }
        Evidence::Bottleneck(b) => {
            let share = Some(b.share).filter(|&s| s > 0.0)?;
            format!(
                "Bottleneck: {:.0}% of the run's {}{}",
                share * 100.0,
                metric_words(b.metric),
                change(b).unwrap_or_default()
            )
        }
    })
}

/// What a metric counts, as a sentence says it: `instructions`, `allocated bytes`, `heap copies`.
fn metric_words(metric: Metric) -> &'static str {
    match metric {
        Metric::Instructions => "instructions",
        Metric::Bytes => "allocated bytes",
        Metric::Copies => "heap copies",
    }
}

/// The fields of a structure nothing reads, by their names (`checksum`, not `Summary.checksum`).
fn unread_fields(l: &LowUtilityEvidence) -> Vec<&str> {
    l.unread_fields.iter().map(|n| n.rsplit('.').next().unwrap_or(n)).collect()
}

/// ` · ▲ 35% since the last run` when the run was compared with an earlier one.
fn change(b: &BottleneckEvidence) -> Option<String> {
    let (before, delta) = (b.cum_before?, b.cum_change?);
    if before <= 0 {
        return Some(" · new since the last run".into());
    }
    let pct = delta as f64 * 100.0 / before as f64;
    if pct.abs() < 1.0 {
        return None;
    }
    Some(format!(" · {} {:.0}% since the last run", if pct > 0.0 { "▲" } else { "▼" }, pct.abs()))
}

/// How the editor's walk names what it walks through: `copy chain`, `call path`.
pub fn walk_name(kind: Kind) -> String {
    match kind {
        Kind::CopyChain => "copy chain".into(),
        Kind::Clone => "clone".into(),
        Kind::Bottleneck => "call path".into(),
        other => format!("{} finding", other.label()),
    }
}

/// The hover of a line: its findings, most important first. Each starts with what to change (the
/// diagnostic above it in the editor already says what was seen), then the kind and what a fix
/// saves, its name explained the first time it appears; the figures come last, under "Details",
/// in words and in one format (counts with separators, sizes as `347 KB`).
pub fn hover_markdown(hits: &[&Mapped]) -> String {
    let mut md = String::new();
    let mut explained = Vec::new();
    for (i, m) in hits.iter().enumerate() {
        let f = &m.finding;
        if i > 0 {
            md.push_str("\n---\n\n");
        }
        if !f.advice.is_empty() {
            md.push_str(&format!("**{}**\n\n", f.advice));
        }
        md.push_str(&format!("Bloatlens · {} · a fix saves about {} of the run", name(f), percent(f.share)));
        if m.stale {
            md.push_str(" · _the file changed since this profile; save to re-profile_");
        }
        md.push_str("\n\n");
        if let Some(term) = Some(f.kind().glossary()).filter(|t| !explained.contains(t)) {
            md.push_str(&format!("_{term}_\n\n"));
            explained.push(term);
        }
    }
    md.push_str("---\n\n**Details**\n\n");
    for m in hits {
        md.push_str(&details(m));
    }
    md
}

/// A figure of a finding's details, as it reads.
enum Figure<'f> {
    Count(u64),
    Bytes(u64),
    /// A share of the run (0.18 → `18.0%`).
    Share(f64),
    /// `8.0×`; a ratio with nothing below it (never read back) reads `∞`.
    Ratio(f64),
    /// A signed count (`+1,200`, `-300`).
    Change(i64),
    /// Words as they are (`same arguments`).
    Words(&'f str),
    /// A type as the source writes it (`Main$Stats` → `Stats`).
    Type(&'f str),
    /// Shown only when true (`yes`).
    Yes(bool),
    Lifetime(LifetimeClass),
}

impl Figure<'_> {
    /// As it reads, or `None` when it says nothing: zero where zero says nothing (`shown_when_zero`
    /// false), false, or no words.
    fn text(&self, shown_when_zero: bool) -> Option<String> {
        let zero = match *self {
            Figure::Count(n) | Figure::Bytes(n) => n == 0,
            Figure::Share(x) | Figure::Ratio(x) => x.is_finite() && x.max(0.0).round() == 0.0,
            Figure::Change(d) => d == 0,
            Figure::Words(_) | Figure::Type(_) | Figure::Yes(_) | Figure::Lifetime(_) => false,
        };
        let empty = matches!(*self, Figure::Words("") | Figure::Type(""));
        if empty || (zero && !shown_when_zero) {
            return None;
        }
        Some(match *self {
            Figure::Count(n) => count(n),
            Figure::Bytes(n) => human_bytes(n),
            Figure::Share(x) => percent(x),
            Figure::Ratio(x) if x.is_infinite() => "∞".into(),
            Figure::Ratio(x) if x >= 100.0 => format!("{}×", count(x.round() as u64)),
            Figure::Ratio(x) => format!("{x:.1}×"),
            Figure::Change(d) => {
                let sign = match d.signum() {
                    1 => "+",
                    -1 => "-",
                    _ => "",
                };
                format!("{sign}{}", count(d.unsigned_abs()))
            }
            Figure::Words(w) => w.to_string(),
            Figure::Type(t) => bloatlens_profiler::analysis::words::source_type(t),
            Figure::Yes(yes) => yes.then(|| "yes".to_string())?,
            Figure::Lifetime(class) => match class {
                LifetimeClass::Short => "short: dead before the next young collection".into(),
                LifetimeClass::Medium => "medium: dead soon after a young collection".into(),
                LifetimeClass::Long => "long: survives many young collections".into(),
                LifetimeClass::Immortal => "to the end of the run".into(),
                LifetimeClass::Mixed => "differs by caller".into(),
            },
        })
    }
}

/// The figures a hover shows, in this order, named as a reader would: (name, figure, shown when
/// zero). The rest of the evidence is bookkeeping (graph nodes, merge keys, the places of the
/// work, sites with their descriptors) and stays in the JSON report.
fn figures<'f>(f: &'f Finding) -> Vec<(String, Figure<'f>, bool)> {
    use Figure::*;
    let mut out = Vec::new();
    let mut add = |name: &str, figure: Figure<'f>, shown_when_zero: bool| {
        out.push((name.to_string(), figure, shown_when_zero));
    };
    match &f.evidence {
        Evidence::CopyChain(c) => {
            add("values copied", Count(c.frequency), true);
            add("copies per value", Count(c.hops), true);
            add("bytes copied per hop", Bytes(c.volume), true);
            add("bytes per value", Bytes(c.bytes), true);
        }
        Evidence::Clone(c) => {
            add("bytes copied", Bytes(c.volume), true);
            add("copied from", Words(&c.source), true);
            add("copied into", Words(&c.target), true);
        }
        Evidence::Usage(_, u) => {
            add("type", Type(&u.type_name), true);
            add("objects", Count(u.instances), true);
            add("objects never stored", Count(u.nath_objects), true);
            add("objects used", Count(u.used_objects), true);
            add("stores into fields", Count(u.heap_writes), true);
            add("reads from fields", Count(u.heap_reads), true);
            if let Some(r) = u.ratio {
                add("stores per read", Ratio(r.0), true);
            }
            if let Some(n) = u.contexts {
                add("calling contexts", Count(n), false);
            }
            add("bytes allocated", Bytes(u.bytes), true);
        }
        Evidence::LowUtility(l) => {
            add("type", Type(&l.type_name), true);
            add("objects", Count(l.instances), true);
            add("cost to build (instructions)", Count(rounded(l.n_rac)), true);
            add("use (instructions)", Count(rounded(l.n_rab)), true);
            add("instructions a fix saves", Count(rounded(l.avoidable_cost)), false);
            add("instructions the unread fields cost", Count(rounded(l.unread_cost)), false);
            add("calling contexts", Count(l.contexts), false);
        }
        Evidence::FilledCollection(c) => {
            add("type", Type(&c.type_name), true);
            add("objects", Count(c.instances), true);
        }
        Evidence::Lifetime(l) => {
            add("type", Type(&l.type_name), true);
            add("objects", Count(l.instances), true);
            add("lifetime", Lifetime(l.class), true);
            add("objects dead young", Count(l.short), false);
            add("objects dead after a young collection", Count(l.medium), false);
            add("objects long-lived", Count(l.long), false);
            add("objects alive at the end", Count(l.immortal), false);
            add("still growing at the end", Yes(l.growing), false);
            add("bytes alive at the end", Bytes(l.retained_bytes), false);
            add("young collections in the run", Count(l.collections), false);
            add("objects dead after a HotSpot-sized young generation", Count(l.outlived_hotspot_young), false);
            if let Some(n) = l.temporary_objects {
                add("objects some callers only read and drop", Count(n), false);
            }
            add("bytes allocated", Bytes(l.bytes), true);
        }
        Evidence::Bottleneck(b) => {
            // Its counts are of its metric: `instructions on the path`.
            let metric = match b.metric {
                Metric::Instructions => "instructions",
                Metric::Bytes => "bytes allocated",
                Metric::Copies => "heap copies",
            };
            let of_metric = |name: &str| format!("{metric} {name}");
            let count_of = |n: i64| Count(n.max(0) as u64);
            add("share of the run", Share(b.share), true);
            add(&of_metric("on the path"), count_of(b.cum), true);
            add(&of_metric("in the path's own frames"), count_of(b.base), true);
            add(&of_metric("shared with other bottlenecks"), count_of(b.overlap), false);
            add(&of_metric("in the whole run"), count_of(b.total), true);
            if let Some(before) = b.cum_before {
                add(&of_metric("on the path in the last run"), count_of(before), true);
            }
            if let Some(change) = b.cum_change {
                add("change since the last run", Change(change), true);
            }
            if let Some(repeated) = b.repeated {
                add("repeated work", Words(repeated_words(repeated)), true);
            }
        }
    }
    // The line's figures, which any kind of finding may have.
    if let Some(bytes) = f.evidence.internal_bytes() {
        add("bytes the library allocated for it", Bytes(bytes), false);
    }
    if let Some(runs) = f.evidence.line_ran() {
        add("times the line ran", Count(runs), true);
    }
    out
}

/// Repeated work as the report's JSON names it (`same arguments`).
fn repeated_words(r: RepeatedWork) -> &'static str {
    match r {
        RepeatedWork::ScanPerIteration => "scan per iteration",
        RepeatedWork::SameArguments => "same arguments",
        RepeatedWork::RegexCompiledPerCall => "regex compiled per call",
    }
}

/// A finding's figures, its lifetimes, the fields it costs, its call path and places.
fn details(m: &Mapped) -> String {
    let f = &m.finding;
    let mut md = format!("**{}**\n\n| figure | value |\n|---|---|\n", label_capitalized(f.kind()));
    for (name, figure, shown_when_zero) in figures(f) {
        if let Some(value) = figure.text(shown_when_zero) {
            md.push_str(&format!("| {name} | {value} |\n"));
        }
    }
    let low_utility = match &f.evidence {
        Evidence::LowUtility(l) => Some(l),
        _ => None,
    };
    if let Some(names) = low_utility.map(unread_fields).filter(|n| !n.is_empty()) {
        md.push_str(&format!("| fields never read | {} |\n", names.join(", ")));
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
    if let Some(l) = low_utility {
        md.push_str("\n| field | cost (instructions) | use (instructions) |\n|---|---|---|\n");
        for field in l.fields.iter().take(8) {
            md.push_str(&format!(
                "| {} | {} | {} |\n",
                field.field,
                count(rounded(field.rac)),
                count(rounded(field.rab))
            ));
        }
    }
    if let Some(b) = f.evidence.bottleneck() {
        let names: Vec<String> =
            b.calls.iter().map(|c| bloatlens_profiler::analysis::bottleneck::short_name(c)).collect();
        md.push_str(&format!("\nCall path: `{}`\n", names.join(" → ")));
    }
    if !m.related.is_empty() {
        md.push_str(&format!(
            "\nIts places (*Next Hop* walks the {}: Ctrl+F8 in VS Code):\n\n| where | what |\n|---|---|\n",
            walk_name(f.kind())
        ));
        for r in &m.related {
            let name = r.uri.path().as_str().rsplit('/').next().unwrap_or("").to_string();
            md.push_str(&format!("| {name}:{} | {} |\n", r.range.start.line + 1, r.role));
        }
    }
    md.push('\n');
    md
}

/// What the log says of a run's findings: how many, how many the editor shows (and on how many
/// lines, one problem a line) and why it does not show the others: `19 findings, 5 shown (14
/// under 1% of the run)`. `findings`: the report's (`min_share`, its setting); `suppressed`:
/// those the triage shows that the user suppressed.
pub fn findings_summary(findings: &[Finding], min_share: f64, shown: &[Mapped], suppressed: usize) -> String {
    let total = findings.len();
    if total == 0 {
        return "no findings".into();
    }
    let lines: std::collections::HashSet<(&Uri, u32)> = shown.iter().map(|m| (&m.uri, m.range.start.line)).collect();
    let hidden = bloatlens_profiler::triage::hidden_reasons(findings, min_share);
    let mut why: Vec<String> = hidden.iter().map(|(words, n)| format!("{n} {words}")).collect();
    if suppressed > 0 {
        why.push(format!("{suppressed} suppressed"));
    }
    let unplaced = total.saturating_sub(hidden.iter().map(|(_, n)| n).sum::<usize>() + suppressed + shown.len());
    if unplaced > 0 {
        why.push(format!("{unplaced} outside the workspace's sources"));
    }
    let on = if lines.len() < shown.len() { format!(" on {} lines", lines.len()) } else { String::new() };
    match (total, why.is_empty()) {
        (1, true) => format!("1 finding, shown{on}"),
        (_, true) => format!("{total} findings, all shown{on}"),
        (_, false) => format!(
            "{total} finding{}, {} shown{on} ({})",
            if total == 1 { "" } else { "s" },
            shown.len(),
            why.join(", ")
        ),
    }
}

/// A checked quick fix as the editor's code action: its edits, preferred, and the command that
/// tells the server it was applied (so that the next profile says what it saved).
pub fn quick_fix(
    uri: &Uri,
    index: &LineIndex,
    enc: Encoding,
    fix: &bloatlens_profiler::quickfix::QuickFix,
    verdict: &bloatlens_profiler::quickfix::check::Verdict,
    diagnostic: &Diagnostic,
    key: &str,
) -> CodeAction {
    let edits = fix
        .edits
        .iter()
        .map(|e| TextEdit { range: index.range(e.start, e.end, enc), new_text: e.text.clone() })
        .collect();
    let checked = match verdict {
        bloatlens_profiler::quickfix::check::Verdict::Safe => "",
        _ => " (compiles; output not compared)",
    };
    CodeAction {
        title: format!("Bloatlens: {}{checked}", fix.title),
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![diagnostic.clone()]),
        edit: Some(WorkspaceEdit { changes: Some([(uri.clone(), edits)].into_iter().collect()), ..Default::default() }),
        command: Some(Command {
            title: "Measure the fix".into(),
            command: "bloatlens.fixApplied".into(),
            arguments: Some(vec![serde_json::json!(key)]),
        }),
        is_preferred: Some(true),
        ..Default::default()
    }
}

/// What the hover says of the findings' quick fixes: the fix offered (and how it was checked), or
/// why there is none.
pub fn fix_offers_markdown(hits: &[&Mapped], offers: &HashMap<String, crate::fix_check::Offer>) -> String {
    use crate::fix_check::Offer;
    let mut md = String::new();
    let mut said = std::collections::HashSet::new();
    for m in hits {
        if !said.insert(&m.key) {
            continue;
        }
        let line = match offers.get(&m.key) {
            Some(Offer::Safe { fix, verdict, .. }) => {
                let caveat = fix.caveat.as_deref().map(|c| format!(" Note: {c}.")).unwrap_or_default();
                format!("**Quick fix:** {} — {}.{caveat}", fix.title, verdict.describe())
            }
            Some(Offer::Checking) => "**Quick fix:** being checked (compiled and run once more)…".into(),
            Some(Offer::NotOffered(why)) => format!("_Quick fix not offered: {why}._"),
            None => continue,
        };
        md.push_str(&format!("\n\n{line}\n"));
    }
    md
}

/// A stable name for a finding, for suppressions: kind and bytecode location (which survive
/// edits elsewhere in the file).
pub fn key(f: &Finding) -> String {
    format!("{}|{}.{}{}|{}", f.kind(), f.location.class, f.location.method, f.location.descriptor, f.location.bci)
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
/// shown (one a line) and how many of them are stale (edited since the run), the last run's time,
/// and after a run that followed a quick fix, what the fix saved (`fixSaved`).
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
            if let Some(saving) = &snap.fix_saving {
                done["fixSaved"] = saving.text.clone().into();
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
    use serde_json::json;
    use tower_lsp_server::ls_types::{Position, Range};

    /// Findings as the profiler reports them (from the fixtures' runs, their evidence as it is,
    /// bookkeeping included), each with the lens it gets.
    fn findings() -> Vec<(Finding, &'static str)> {
        let at = |line: u32, expression: Option<&str>| {
            json!({"file": "Main.java", "line": line, "class": "Main", "method": "stage",
                   "descriptor": "([C[C)V", "bci": 12, "expression": expression})
        };
        let cases = [
            (
                json!({"kind": "copy-chain", "severity": "warning", "score": 1.0, "share": 0.955,
                    "message": "177,581 values copied 2 times without computation: char[] elements (line 4) → char[] elements (line 5) → char[] elements (line 6)",
                    "advice": "Share the collection (or copy it once, outside the loop) instead of copying its elements on every call.",
                    "location": at(11, None), "related": [],
                    "evidence": {"bytes": 2, "consumed": false, "field": "elements", "frequency": 177581,
                        "graph_nodes": [2886, 2887, 2888], "hops": 2, "merge_key": "Main.stage([C[C)V|true",
                        "path": ["char[] elements (line 4)", "char[] elements (line 5)"], "user_data": true,
                        "volume": 355162, "waste_factor": 710324}}),
                "Copy chain: 177,581 values (347 KB) copied twice",
            ),
            (
                json!({"kind": "clone", "severity": "info", "score": 1.0, "share": 0.239,
                    "message": "355,162 bytes copied from the objects of new char[…] (line 4) into those of new char[…] (line 5): a clone built copy by copy",
                    "advice": "Share the original (or copy it lazily) instead of rebuilding its object graph copy by copy.",
                    "location": at(5, Some("new char[…]")), "related": [],
                    "evidence": {"graph_nodes": [2886, 2887], "source": "new char[…] (line 4)", "target": "new char[…] (line 5)", "volume": 355162}}),
                "Clone: 347 KB copied field by field",
            ),
            (
                json!({"kind": "nath", "severity": "info", "score": 1.0, "share": 0.025,
                    "message": "new Stats(…): all 500 objects are temporaries, never stored in a field, array or collection (NATH)",
                    "advice": "Use the values directly, or build this object once outside the loop: each one lives only for the call that made it.",
                    "location": at(12, Some("new Stats(…)")), "related": [],
                    "evidence": {"bytes": 12000, "call_return_nodes": 1, "graph_nodes": [920], "handled_by_user": true,
                        "heap_nodes": 0, "heap_reads": 0, "heap_writes": 0, "instances": 500, "made_by_library": false,
                        "nath_objects": 500, "type": "Main$Stats", "used_objects": 500}}),
                "NATH: 500 temporary objects, never stored",
            ),
            (
                json!({"kind": "write-read-imbalance", "severity": "info", "score": 1.0, "share": 0.051,
                    "message": "new Buffer(…): stored into fields or collections 400 times but never read back",
                    "advice": "Drop the structure this fills, or fill it only when needed: what is stored is rarely read back.",
                    "location": at(13, Some("new Buffer(…)")), "related": [],
                    "evidence": {"bytes": 326400, "graph_nodes": [921], "heap_reads": 0, "heap_writes": 400,
                        "instances": 20400, "made_by_library": false, "ratio": "inf", "type": "Main$Buffer"}}),
                "Written, not read: 400 stores, 0 reads back",
            ),
            (
                json!({"kind": "lifetime", "severity": "info", "score": 1.0, "share": 0.142,
                    "message": "new Session(…): 3,000 of 3,000 objects live to the end and their number keeps growing: a possible leak",
                    "advice": "Stop keeping every one of these objects: they accumulate until the end (keep a running summary, or drop them once used).",
                    "location": at(19, Some("new Session(…)")), "related": [],
                    "evidence": {"bytes": 72000, "class": "immortal", "collections": 29, "growing": true, "heap_at_end": 507363,
                        "histogram": [{"from_bytes": 131072, "objects": 64}, {"from_bytes": 1048576, "objects": 2936}],
                        "immortal": 3000, "instances": 3000, "leak": true, "long": 0, "made_by_library": false, "medium": 0,
                        "retained_bytes": 72000, "short": 0, "type": "Main$Session", "unclassified": 0, "young_gen_bytes": 1048576}}),
                "Lifetime: 3,000 objects kept to the end, still growing",
            ),
            (
                json!({"kind": "low-utility", "severity": "info", "score": 1.0, "share": 0.481,
                    "message": "new Summary(…): its fields checksum, score are never read, yet computing them costs 2,828,002 of the 4,204,004 instructions that build it",
                    "advice": "Drop the fields nothing reads (checksum, score), or compute them only when asked for.",
                    "location": at(28, Some("new Summary(…)")), "related": [],
                    "evidence": {"avoidable_cost": 2828002.0, "contexts": 1, "fields": [{"field": "Summary.checksum", "rab": 0.0, "rac": 2016002.0}],
                        "instances": 2000, "made_by_library": false, "n_rab": 2022002.0, "n_rac": 4204004.0, "rate": 2.079,
                        "tree_height": 4, "type": "Main$Summary", "unread_cost": 2828002.0, "unread_everywhere": true,
                        "unread_fields": ["Summary.checksum", "Summary.score"]}}),
                "Low utility: checksum, score never read, 2,828,002 instructions to compute",
            ),
            (
                json!({"kind": "low-utility", "severity": "info", "score": 1.0, "share": 0.502,
                    "message": "Object[] objects made by List.add(…): building it costs 624,412 instructions, for 0 of use",
                    "advice": "Compute only what is read: most of what building this structure costs is never used (compute it lazily, or do not build it).",
                    "location": at(15, Some("List.add(…)")), "related": [],
                    "evidence": {"avoidable_cost": 624412.0, "contexts": 1, "fields": [{"field": "Object[] elements", "rab": 0.0, "rac": 14000.0}],
                        "instances": 240, "internal_bytes": 64000, "line_ran": 2000, "made_by_library": true, "n_rab": 0.0,
                        "n_rac": 624412.0, "rate": 624412.0, "tree_height": 4, "type": "java.lang.Object[]", "unread_cost": -0.0,
                        "unread_everywhere": true, "unread_fields": []}}),
                "Low-utility structure: 240 built for 624,412 instructions, never used",
            ),
            (
                json!({"kind": "low-utility", "severity": "info", "score": 1.0, "share": 0.014,
                    "message": "new ArrayList(…): 50 collections filled, then never read: neither their elements nor their size",
                    "advice": "Stop filling this collection (or fill it only when it is needed): nothing reads it.",
                    "location": at(11, Some("new ArrayList(…)")), "related": [],
                    "evidence": {"cost_sites": [["Main", "directoryList", "(Ljava/lang/String;)Ljava/util/List;", 0]],
                        "instances": 50, "internal_bytes": 4, "only_size": false, "type": "java.util.ArrayList"}}),
                "Low utility: 50 collections filled, never read",
            ),
            (
                json!({"kind": "bottleneck", "severity": "warning", "score": 1.0, "share": 0.571,
                    "message": "the calls Main.main → Main.sameGroup take 57% of the run's instructions (10,127,948 of 17,750,844)",
                    "advice": "Build what this call looks for once (a map or index, before the loop) instead of going over the data on every call.",
                    "location": at(33, Some("Main.sameGroup(…)")), "related": [],
                    "evidence": {"base": 2276748, "base_share": 0.128, "calls": ["Main.main([Ljava/lang/String;)V", "Main.sameGroup(Ljava/util/List;I)I"],
                        "covered_by_all": 0.984, "cum": 10127948, "graph_nodes": [1, 12], "line_ran": 400, "metric": "instructions",
                        "overlap": 0, "repeated": "scan per iteration", "share": 0.571,
                        "suggestion": "build what this call looks for once", "total": 17750844, "work_location": null}}),
                "Bottleneck: 57% of the run's instructions",
            ),
            (
                json!({"kind": "bottleneck", "severity": "warning", "score": 1.0, "share": 0.179,
                    "message": "the calls Main.main → Main.user → Main.decode take 18% of the run's instructions",
                    "advice": "Compute this once before the loop (or cache it by its arguments): the call repeats the same work.",
                    "location": at(17, Some("Main.decode(…)")), "related": [],
                    "evidence": {"base": 393313, "calls": ["Main.main([Ljava/lang/String;)V", "Main.decode(Ljava/lang/String;)Ljava/util/Map;"],
                        "cum": 393313, "metric": "instructions", "repeated": "same arguments", "share": 0.179, "total": 2196985,
                        "work_location": {"bci": 11, "class": "Main", "descriptor": "(Ljava/lang/String;)Ljava/util/Map;",
                            "expression": "String.split(…)", "file": "Main.java", "line": 9, "method": "decode"}}}),
                "Bottleneck: 18% of the run's instructions",
            ),
        ];
        cases.into_iter().map(|(f, lens)| (serde_json::from_value(f).expect("a finding"), lens)).collect()
    }

    fn mapped(f: Finding) -> Mapped {
        let at = Position { line: f.location.line.unwrap_or(1) - 1, character: 4 };
        Mapped {
            key: key(&f),
            finding: std::sync::Arc::new(f),
            uri: uri_of(std::path::Path::new("/w/Main.java")).unwrap(),
            range: Range { start: at, end: Position { character: 20, ..at } },
            related: Vec::new(),
            stale: false,
        }
    }

    #[test]
    fn each_kinds_lens_says_what_it_found_in_words() {
        for (f, lens) in findings() {
            assert_eq!(lens_title(&f), lens, "{}", f.kind());
        }
    }

    /// Cost-benefit's sums are floats in the report; the lens shows them as counts.
    #[test]
    fn a_low_utility_lens_rounds_the_sums_to_counts() {
        let (mut f, _) = findings().remove(6);
        let Evidence::LowUtility(l) = &mut f.evidence else { panic!("a low-utility structure") };
        l.n_rac = 6940.4;
        l.n_rab = 12.6;
        assert_eq!(lens_title(&f), "Low-utility structure: 240 built for 6,940 instructions, used for 13");
    }

    /// A finding without the figures its kind is told with: no "costs 0 · used 0".
    #[test]
    fn a_lens_without_its_figures_says_what_a_fix_saves() {
        for (mut f, _) in findings() {
            f.evidence = Evidence::from_json(f.kind(), json!({})).unwrap();
            f.share = 0.057;
            let title = lens_title(&f);
            assert!(title.ends_with(": a fix saves 5.7% of the run"), "{title}");
            assert!(!title.contains(" 0 "), "{title}");
        }
    }

    #[test]
    fn a_hover_leads_with_the_advice_and_keeps_bookkeeping_out() {
        for (f, _) in findings() {
            let m = mapped(f.clone());
            let md = hover_markdown(&[&m]);
            let first = md.lines().next().unwrap();
            assert_eq!(first, format!("**{}**", f.advice), "the advice first:\n{md}");
            assert!(md.lines().nth(2).unwrap().starts_with(&format!("Bloatlens · {}", name(&f))), "{md}");
            assert!(!md.contains(&f.message), "the diagnostic says the message already:\n{md}");
            for bookkeeping in ["null", "Ljava/", ";)", "([", ")V", "(I)", "graph node"] {
                assert!(!md.contains(bookkeeping), "{bookkeeping} in the hover of {}:\n{md}", f.kind());
            }
            // No graph node ids, however written.
            let ids = f.evidence.graph_nodes();
            if !ids.is_empty() {
                let ids: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
                for written in [ids.join(", "), ids.join(","), ids.join(" ")] {
                    assert!(!md.contains(&written), "graph nodes {written} in the hover of {}:\n{md}", f.kind());
                }
            }
            // No evidence key as it is stored (`line_ran`, `n_rac`, `work_location`).
            let stored = serde_json::to_value(&f.evidence).unwrap();
            for k in stored.as_object().unwrap().keys().filter(|k| k.contains('_')) {
                assert!(!md.contains(k.as_str()), "{k} in the hover of {}:\n{md}", f.kind());
            }
        }
    }

    #[test]
    fn a_hovers_figures_read_in_words_and_one_size_format() {
        let all = findings();
        let hover = |i: usize| hover_markdown(&[&mapped(all[i].0.clone())]);
        let chain = hover(0);
        assert!(chain.contains("| values copied | 177,581 |"), "{chain}");
        assert!(chain.contains("| bytes copied per hop | 347 KB |"), "{chain}");
        assert!(chain.contains("| bytes per value | 2 B |"), "{chain}");
        let nath = hover(2);
        assert!(nath.contains("| type | Stats |") && nath.contains("| bytes allocated | 12 KB |"), "{nath}");
        assert!(hover(3).contains("| stores per read | ∞ |"), "{}", hover(3));
        let leak = hover(4);
        assert!(
            leak.contains("| lifetime | to the end of the run |")
                && leak.contains("| still growing at the end | yes |")
        );
        assert!(leak.contains("≥   128 KB") && leak.contains("≥     1 MB"), "{leak}");
        let fields = hover(5);
        assert!(fields.contains("| fields never read | checksum, score |"), "{fields}");
        assert!(fields.contains("| Summary.checksum | 2,016,002 | 0 |"), "{fields}");
        let path = hover(8);
        assert!(path.contains("Call path: `Main.main → Main.sameGroup`"), "{path}");
        assert!(path.contains("| instructions on the path | 10,127,948 |"), "{path}");
        assert!(path.contains("| share of the run | 57.1% |"), "{path}");
    }

    #[test]
    fn a_lines_hover_gives_every_findings_advice_before_the_details() {
        let all = findings();
        let (a, b) = (mapped(all[2].0.clone()), mapped(all[4].0.clone()));
        let md = hover_markdown(&[&a, &b]);
        let details = md.find("**Details**").unwrap();
        assert!(md.starts_with(&format!("**{}**", a.finding.advice)), "{md}");
        assert!(md.find(&b.finding.advice).unwrap() < details, "{md}");
        assert_eq!(md.matches("Bloatlens · ").count(), 2, "{md}");
    }

    #[test]
    fn the_log_says_how_many_findings_are_shown_and_why_not_the_others() {
        let all: Vec<Finding> = findings().into_iter().map(|(f, _)| f).collect();
        let mut report = all.clone();
        for f in report.iter_mut().skip(5) {
            f.hidden = Some(bloatlens_profiler::triage::SMALL.into());
        }
        report[4].hidden = Some(bloatlens_profiler::triage::ONE_TIME.into());
        let shown: Vec<Mapped> = all[..3].iter().cloned().map(mapped).collect();
        assert_eq!(
            findings_summary(&report, 0.01, &shown, 1),
            "10 findings, 3 shown (5 under 1% of the run, 1 from work done once, 1 suppressed)"
        );
        report.truncate(3);
        assert_eq!(findings_summary(&report, 0.01, &shown, 0), "3 findings, all shown");
        // Two of them on one line: one problem in the editor.
        let mut one_line = shown.clone();
        one_line[1].range = one_line[0].range;
        assert_eq!(findings_summary(&report, 0.01, &one_line, 0), "3 findings, all shown on 2 lines");
        assert_eq!(
            findings_summary(&report, 0.01, &shown[..2], 0),
            "3 findings, 2 shown (1 outside the workspace's sources)"
        );
        assert_eq!(findings_summary(&[], 0.01, &[], 0), "no findings");
    }
}

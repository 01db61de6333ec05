//! The report for a terminal: the run in one line, then the top findings, each with its source
//! line quoted and, for a copy chain, every hop drawn.

use crate::junit::TestStatus;
use crate::report::{Location, Report};
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Reads source lines from the first root that has the file.
pub struct Sources {
    roots: Vec<PathBuf>,
    cache: HashMap<String, Option<Vec<String>>>,
}

impl Sources {
    pub fn new(roots: Vec<PathBuf>) -> Self {
        Sources { roots, cache: HashMap::new() }
    }

    pub fn line(&mut self, loc: &Location) -> Option<String> {
        let (file, line) = (loc.file.as_ref()?, loc.line? as usize);
        let roots = &self.roots;
        let lines = self.cache.entry(file.clone()).or_insert_with(|| {
            roots
                .iter()
                .find_map(|r| std::fs::read_to_string(Path::new(r).join(file)).ok())
                .map(|t| t.lines().map(String::from).collect())
        });
        lines.as_ref()?.get(line.checked_sub(1)?).map(|l| l.trim().to_string())
    }
}

pub fn render(report: &Report, sources: &mut Sources, top: usize) -> String {
    let mut out = String::new();
    let r = &report.run;
    let _ = writeln!(
        out,
        "bloatlens: {} — {} ({}), {} instructions, {} allocated, {} ms",
        r.main_class,
        r.outcome,
        match &r.outcome_detail {
            Some(d) => format!("{d}; the findings cover what ran"),
            None => format!("exit status {}", r.exit_status),
        },
        r.instructions,
        crate::report::human_bytes(r.allocated_bytes),
        r.wall_ms
    );
    if let Some(place) = &r.stopped_at {
        let _ = writeln!(out, "stopped in: {}", place.describe());
    }
    // A whole suite: how many ended how, and the tests that did not pass.
    let many = report.tests.len() > 20;
    if many {
        let count = |s: TestStatus| report.tests.iter().filter(|t| t.status == s).count();
        let statuses = [TestStatus::Passed, TestStatus::Failed, TestStatus::Aborted, TestStatus::Skipped];
        let counts: Vec<String> = statuses
            .iter()
            .map(|&s| (s, count(s)))
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| format!("{n} {}", s.word()))
            .collect();
        let _ = writeln!(out, "tests: {} ({})", report.tests.len(), counts.join(", "));
    }
    for t in report.tests.iter().filter(|t| !many || t.status != TestStatus::Passed) {
        let _ = writeln!(out, "test {}#{} {}", t.class, t.name, t.summary());
    }
    for note in &report.test_notes {
        let _ = writeln!(out, "note: {note}");
    }
    if report.findings.is_empty() {
        let _ = writeln!(out, "no findings ({} analyses: {})", r.analyses.len(), r.analyses.join(", "));
    }
    // The findings in the report's order (by what a fix would save); the hidden ones only counted.
    let shown = report.shown();
    let mut by_kind: Vec<(&str, usize)> = Vec::new();
    for f in &shown {
        let family = f.kind().family().as_str();
        match by_kind.iter_mut().find(|k| k.0 == family) {
            Some(k) => k.1 += 1,
            None => by_kind.push((family, 1)),
        }
    }
    if !by_kind.is_empty() {
        let summary: Vec<String> = by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = writeln!(out, "findings: {}", summary.join(", "));
    }
    for (i, f) in shown.iter().take(top).enumerate() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{}. [{}] {} — {:.1}% of the run — {}",
            i + 1,
            f.pattern.map_or(f.kind().label(), |p| p.title()),
            f.location.short(),
            f.share * 100.0,
            f.advice
        );
        let _ = writeln!(out, "   {}", f.message);
        if report.tests.len() > 1 && !f.tests.is_empty() {
            let shown: Vec<String> =
                f.tests.iter().take(3).map(|t| format!("{} {:.0}%", t.test, t.share * 100.0)).collect();
            let more = match f.tests.len().saturating_sub(3) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let _ = writeln!(out, "   driven by the tests {}{more}", shown.join(", "));
        }
        quote(&mut out, sources, &f.location, "   ");
        let rows = crate::report::histogram_rows(f);
        if !rows.is_empty() {
            let _ = writeln!(out, "     lifetimes (bytes allocated meanwhile):");
            for r in rows {
                let _ = writeln!(out, "       {r}");
            }
        }
        for rel in &f.related {
            let _ = writeln!(out, "     {} {}", rel.role, rel.location.short());
            quote(&mut out, sources, &rel.location, "       ");
        }
    }
    let more = shown.len().saturating_sub(top);
    let hidden = crate::triage::hidden_reasons(&report.findings, report.run.settings.min_share);
    let rest = more + hidden.iter().map(|(_, n)| n).sum::<usize>();
    if rest > 0 {
        let mut why: Vec<String> = Vec::new();
        if more > 0 {
            why.push(format!("{more} below the top {top}"));
        }
        why.extend(hidden.iter().map(|(words, n)| format!("{n} {words}")));
        let _ = writeln!(
            out,
            "\nand {rest} more finding{} ({}; all are in --format json)",
            if rest == 1 { "" } else { "s" },
            why.join(", ")
        );
    }
    if let Some(c) = &report.cost_benefit {
        let _ = writeln!(
            out,
            "\ncost-benefit: {:.1}% of instructions produce only dead values (IPD), {:.1}% only feed branches (IPP); {:.1}% of {} graph nodes are dead (NLD)",
            c.ipd * 100.0,
            c.ipp * 100.0,
            c.nld * 100.0,
            c.nodes
        );
    }
    if let Some(c) = &report.comparison {
        let _ = writeln!(
            out,
            "\nsince {}: {} {} → {} ({:+})",
            c.previous,
            c.metric,
            c.total_before,
            c.total_after,
            c.total_after - c.total_before
        );
        if !c.work.is_empty() {
            let _ = writeln!(out, "  the program's own work: {}", c.work);
        }
        if !c.gone.is_empty() {
            let _ = writeln!(out, "  findings gone: {}", c.gone.join(", "));
        }
        for ch in c.changes.iter().take(top) {
            let path: Vec<String> = ch.calls.iter().map(|l| crate::analysis::bottleneck::short_name(l)).collect();
            let _ = writeln!(out, "  {:>+12}  {} → {}  {}", ch.change, ch.before, ch.after, path.join(" → "));
        }
    }
    if !report.copy_profile.is_empty() {
        let _ = writeln!(out, "\ncopies by method (flat / cumulative):");
        for m in report.copy_profile.iter().take(5) {
            let name = crate::analysis::words::source_method(&m.class, &m.method, &m.descriptor);
            let _ = writeln!(out, "  {:>10} {:>10}  {name}", m.flat, m.cumulative);
        }
    }
    out
}

fn quote(out: &mut String, sources: &mut Sources, loc: &Location, indent: &str) {
    if let Some(text) = sources.line(loc) {
        let _ = writeln!(out, "{indent}| {text}");
    }
}

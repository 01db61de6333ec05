//! The scored corpus: programs in `fixtures/bloat/corpus/<name>/`, written like ordinary business
//! code, whose sources say what a developer expects a profiler to report. A line ending in
//! `// expect: copy-chain, nath` expects a finding of each kind there; `// expect: copy-chain#fields`
//! on several lines is one expected finding that any of them satisfies; a line ending in `// clean`
//! must get no finding at all. The scorer compares a report with that and sums, per kind, recall
//! and findings on clean lines, plus the share of each report's first five findings that are
//! expected and the number of findings against the number expected.

use bloatlens_profiler::report::{Finding, Report};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

/// The kinds a developer expects, as the product names them ([`families`] folds the report's finer
/// kinds into them).
pub const KINDS: [&str; 5] = ["copy-chain", "nath", "low-utility", "lifetime", "bottleneck"];

use bloatlens_profiler::javac::java_files;

/// The product kinds a shown finding speaks for: its own, and those of the findings of other
/// kinds it took in as one problem (a leak and the unread collection on its line).
pub fn families(f: &Finding) -> Vec<&'static str> {
    std::iter::once(f.kind()).chain(f.evidence.also().iter().map(|a| a.kind())).map(|k| k.family().as_str()).collect()
}

/// One expected finding: its kind and the lines (file relative to the program's directory, line)
/// any of which it may land on.
#[derive(Debug)]
pub struct Expectation {
    pub kind: String,
    pub lines: Vec<(String, u32)>,
}

#[derive(Debug, Default)]
pub struct Annotations {
    pub expected: Vec<Expectation>,
    pub clean: HashSet<(String, u32)>,
}

/// Reads the `// expect:` and `// clean` marks of every `.java` file under `dir`.
pub fn annotations(dir: &Path) -> Result<Annotations, String> {
    let mut out = Annotations::default();
    let mut labelled: BTreeMap<(String, String), usize> = BTreeMap::new();
    for file in java_files(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let rel = file.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        for (i, line) in text.lines().enumerate() {
            let here = (rel.clone(), i as u32 + 1);
            let Some(comment) = line.rfind("//").map(|c| line[c + 2..].trim()) else { continue };
            if comment == "clean" {
                out.clean.insert(here);
            } else if let Some(kinds) = comment.strip_prefix("expect:") {
                for item in kinds.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let (kind, label) = match item.split_once('#') {
                        Some((k, l)) => (k.trim(), Some(l.trim())),
                        None => (item, None),
                    };
                    if !KINDS.contains(&kind) {
                        return Err(format!("{rel}:{}: unknown kind `{kind}` (known: {})", i + 1, KINDS.join(", ")));
                    }
                    let group = label.map(|l| (kind.to_string(), l.to_string()));
                    match group.as_ref().and_then(|g| labelled.get(g)) {
                        Some(&at) => out.expected[at].lines.push(here.clone()),
                        None => {
                            if let Some(g) = group {
                                labelled.insert(g, out.expected.len());
                            }
                            out.expected.push(Expectation { kind: kind.into(), lines: vec![here.clone()] });
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// How one report fares against its program's annotations.
#[derive(Debug, Default, Clone)]
pub struct ProgramScore {
    pub name: String,
    /// Per kind: (expected, found).
    pub recall: BTreeMap<String, (usize, usize)>,
    /// Per kind: findings on clean lines.
    pub on_clean: BTreeMap<String, usize>,
    /// Of the first (up to) five findings, how many are expected.
    pub top5: (usize, usize),
    pub findings: usize,
    pub expected: usize,
    /// Findings that are neither expected nor on a clean line, as `kind file:line`, for reading.
    pub unexpected: Vec<String>,
    pub missed: Vec<String>,
}

fn at(f: &Finding) -> Option<(String, u32)> {
    Some((f.location.file.clone()?, f.location.line?))
}

fn matches(f: &Finding, e: &Expectation) -> bool {
    families(f).contains(&e.kind.as_str()) && at(f).is_some_and(|here| e.lines.contains(&here))
}

/// Scores the findings the report shows (in report order; hidden ones left out) against the
/// annotations.
pub fn score(name: &str, report: &Report, a: &Annotations) -> ProgramScore {
    let shown: Vec<&Finding> = report.findings.iter().filter(|f| f.hidden.is_none()).collect();
    let mut s =
        ProgramScore { name: name.into(), findings: shown.len(), expected: a.expected.len(), ..Default::default() };
    for k in KINDS {
        s.recall.insert(k.into(), (0, 0));
        s.on_clean.insert(k.into(), 0);
    }
    for e in &a.expected {
        let found = shown.iter().any(|f| matches(f, e));
        let r = s.recall.get_mut(&e.kind).unwrap();
        r.0 += 1;
        if found {
            r.1 += 1;
        } else {
            let (file, line) = &e.lines[0];
            s.missed.push(format!("{} {file}:{line}", e.kind));
        }
    }
    for (i, f) in shown.iter().enumerate() {
        let expected = a.expected.iter().any(|e| matches(f, e));
        if i < 5 {
            s.top5.1 += 1;
            s.top5.0 += expected as usize;
        }
        if at(f).is_some_and(|here| a.clean.contains(&here)) {
            *s.on_clean.entry(f.kind().family().as_str().into()).or_default() += 1;
        } else if !expected {
            s.unexpected.push(format!("{} {}", f.kind(), f.location.short()));
        }
    }
    s
}

/// The corpus's table: per kind, then the whole.
pub fn table(scores: &[ProgramScore]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| kind | expected | found | recall | on clean lines |");
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    for k in KINDS {
        let (e, f) = scores.iter().map(|s| s.recall[k]).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let clean: usize = scores.iter().map(|s| s.on_clean[k]).sum();
        let _ = writeln!(out, "| {k} | {e} | {f} | {} | {clean} |", percent(f, e));
    }
    let t = totals(scores);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{} programs: recall {}, {} findings on clean lines, first five findings expected {}, {} findings for {} expected ({:.2}×)",
        scores.len(),
        percent(t.found, t.expected),
        t.on_clean,
        percent(t.top5.0, t.top5.1),
        t.findings,
        t.expected,
        t.findings as f64 / t.expected.max(1) as f64
    );
    out
}

pub struct Totals {
    pub expected: usize,
    pub found: usize,
    pub on_clean: usize,
    pub top5: (usize, usize),
    pub findings: usize,
}

pub fn totals(scores: &[ProgramScore]) -> Totals {
    let mut t = Totals { expected: 0, found: 0, on_clean: 0, top5: (0, 0), findings: 0 };
    for s in scores {
        for (e, f) in s.recall.values() {
            t.expected += e;
            t.found += f;
        }
        t.on_clean += s.on_clean.values().sum::<usize>();
        t.top5 = (t.top5.0 + s.top5.0, t.top5.1 + s.top5.1);
        t.findings += s.findings;
    }
    t
}

pub fn percent(n: usize, d: usize) -> String {
    if d == 0 {
        "–".into()
    } else {
        format!("{:.0}%", 100.0 * n as f64 / d as f64)
    }
}

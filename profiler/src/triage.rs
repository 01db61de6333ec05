//! Triage: the analyses' raw findings turned into the few a developer acts on (DESIGN §4.6).
//!
//! The analyses report what they see per allocation site, chain or call path, already placed on
//! the first user frame. Triage then:
//! 1. drops library mechanics: usage findings about objects the user's code never handles (a
//!    `String`'s `byte[]`, a `HashMap`'s nodes) and copy chains that move only a library's own
//!    bookkeeping — their bytes roll up into the user-level finding on the same line;
//! 2. merges findings of one kind on one user line into one, the costliest first, the others as
//!    evidence (`also`);
//! 3. costs each finding by what a fix would save (`share`): the instructions and bytes it
//!    removes, priced as HotSpot pays them ([`crate::cost_model`]), over the program's own work;
//! 4. hides what is not worth a developer's attention (`hidden`): work done once (a user line
//!    that ran once — the JDK's one-time set-up behind the first `printf` lands there), call
//!    paths that are the program's essential work (nothing on them repeated or dropped) and
//!    findings under the `min_share` setting;
//! 5. ranks everything by share, and gives severities and advice by rank and pattern.

use crate::analysis::calltree::Metric;
use crate::cost_model::{self, CostModel, Work};
use crate::evidence::{AlsoEntry, Evidence, LifetimeClass, LifetimeEvidence};
use crate::patterns::Pattern;
use crate::recognise::{self, builds_a_string, LineFacts};
use crate::report::{Family, Finding, Kind, Settings, Severity};
use std::collections::HashMap;

/// The run's totals that shares are taken of.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunTotals {
    /// The program's own work: the run less the JDK's boot before `main`.
    pub program: Work,
}

/// How often each call site of the user's code ran and what its calls cost, keyed by (class,
/// method, descriptor, bci) as report locations name them. Empty when the bottleneck analysis
/// (which counts calls) is off.
pub type SiteCalls = HashMap<(String, String, String, u32), SiteRuns>;

#[derive(Debug, Clone, Copy, Default)]
pub struct SiteRuns {
    pub calls: u64,
    /// Instructions run inside the calls made there.
    pub instructions: u64,
}

/// Why a finding is hidden from the editor.
pub const ONE_TIME: &str = "one-time work: its line ran once, or a library filled a table once";
pub const SMALL: &str = "below the minimum share";
pub const ESSENTIAL: &str = "the program's essential work: no call on this path repeats work or builds what is dropped";
pub const STORED_YOUNG: &str = "short-lived objects kept by a structure that drops them";
pub const OUTPUT_TEXT: &str =
    "the text of values the program writes (a number's digits handed to a Writer or a builder): its output, not a temporary";
pub const AT_CALLER: &str = "temporaries a small factory makes: reported at the call that asks for them, per value";
pub const NO_PATTERN: &str = "fits no pattern of the catalog (docs/patterns.md): a raw analysis result";
pub const SCALAR_REPLACED: &str = "temporaries that never leave code HotSpot inlines (a collection's iterator in its loop, a lambda's closure, a collection never filled): its escape analysis removes them (a fix saves nothing there)";

/// Why findings are hidden, in a few words each and counted, the commonest first: `[("under 1% of
/// the run", 14), ("from work done once", 3)]`. What the CLI's last line and the editor's log say
/// about the findings they do not show.
pub fn hidden_reasons(findings: &[Finding], min_share: f64) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for reason in findings.iter().filter_map(|f| f.hidden.as_deref()) {
        let words = match reason {
            SMALL => format!("under {} of the run", percent(min_share)),
            ONE_TIME => "from work done once".into(),
            ESSENTIAL => "on the program's essential path".into(),
            STORED_YOUNG => "short-lived objects a structure drops".into(),
            AT_CALLER => "reported at a factory's caller".into(),
            OUTPUT_TEXT => "text the program writes".into(),
            SCALAR_REPLACED => "temporaries the JIT removes".into(),
            NO_PATTERN => "fitting no pattern".into(),
            other => other.to_string(),
        };
        match counts.iter_mut().find(|(w, _)| *w == words) {
            Some((_, n)) => *n += 1,
            None => counts.push((words, 1)),
        }
    }
    // Stable: equal counts keep the order in which the report lists them.
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    counts
}

/// `1%`, `0.5%`: a setting's share as the reader wrote it.
fn percent(share: f64) -> String {
    let p = share * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

pub fn triage(mut raw: Vec<Finding>, totals: &RunTotals, calls: &SiteCalls, settings: &Settings) -> Vec<Finding> {
    // 0. A repeated call path whose innermost line builds a string nobody uses: the fix is to stop
    //    building it there, so that line is the finding's (not the loop that repeats it).
    let dropped_lines: std::collections::HashSet<(Option<String>, Option<u32>)> = raw
        .iter()
        .filter(|f| matches!(f.kind(), Kind::NeverUsed | Kind::RarelyUsed))
        .map(|f| (f.location.file.clone(), f.location.line))
        .collect();
    for f in raw.iter_mut() {
        let Some(work) = f.evidence.bottleneck().and_then(|b| b.work_location.clone()) else { continue };
        if dropped_lines.contains(&(work.file.clone(), work.line)) {
            let moved = Finding { location: work, ..f.clone() };
            if builds_a_string(&moved) {
                *f = moved;
            }
        }
    }
    // Lines whose stored objects are never read back from the heap, seen before mechanics go.
    let unread_lines: std::collections::HashSet<(Option<String>, Option<u32>)> = raw
        .iter()
        .filter(|f| matches!(f.kind(), Kind::WriteReadImbalance | Kind::NeverUsed))
        .filter(|f| f.evidence.usage().is_some_and(|u| u.heap_writes > 0 && u.heap_reads == 0))
        .map(|f| (f.location.file.clone(), f.location.line))
        .collect();
    // 1. Library mechanics out; their bytes remembered by line.
    let mut internal_bytes: HashMap<(Option<String>, Option<u32>), u64> = HashMap::new();
    let mut kept = Vec::new();
    for f in raw {
        match mechanics_bytes(&f) {
            Some(bytes) => *internal_bytes.entry((f.location.file.clone(), f.location.line)).or_default() += bytes,
            None => kept.push(f),
        }
    }
    // 2. One finding per kind and line.
    let mut groups: Vec<Vec<Finding>> = Vec::new();
    let mut index: HashMap<(Family, Option<String>, String), usize> = HashMap::new();
    for mut f in kept {
        f.share = share(&f, totals, calls);
        // A finding may name what makes it one problem with others (`merge_key`); else its line.
        let mut at = match &f.evidence {
            Evidence::CopyChain(c) => c.merge_key.clone(),
            _ => format!("{:?}", f.location.line),
        };
        // The text of values written out is not one problem with the line's other strings.
        if value_text_written(&f) {
            at.push_str(" text written");
        }
        let key = (f.kind().family(), f.location.file.clone(), at);
        match index.get(&key) {
            Some(&g) => groups[g].push(f),
            None => {
                index.insert(key, groups.len());
                groups.push(vec![f]);
            }
        }
    }
    // A possible leak costs the memory it holds, not what it allocated: objects that pile up to
    // the end while nothing reads their references back (a usage finding on the same line says
    // so) are charged their share of the heap the run ends with.
    // (Library-made objects count: the strings a `String.format` makes for a list nobody reads.)
    let unread = unread_lines;
    for f in groups.iter_mut().flatten() {
        let line = (f.location.file.clone(), f.location.line);
        if let Evidence::Lifetime(l) = &mut f.evidence {
            if l.growing && unread.contains(&line) {
                let held = l.retained_bytes as f64 / l.heap_at_end.max(1) as f64;
                f.share = f.share.max(held.min(1.0));
                l.leak = true;
            }
        }
    }
    // Young temporaries are a problem where nothing keeps them (NATH on the same line: made,
    // used, dropped); stored into a structure that lets them go, the structure's churn is.
    let nath_lines = |keep: fn(&Finding) -> bool| -> std::collections::HashSet<(Option<String>, Option<u32>)> {
        groups
            .iter()
            .flatten()
            .filter(|f| f.kind().family() == Family::Nath && keep(f))
            .map(|f| (f.location.file.clone(), f.location.line))
            .collect()
    };
    // Lines of small factories whose temporaries are reported at the caller that asks for them.
    let factory_lines: std::collections::HashSet<(Option<String>, Option<u32>)> = groups
        .iter()
        .flatten()
        .filter(|f| f.kind().family() == Family::Nath)
        .filter_map(|f| f.evidence.usage()?.factory_at.clone())
        .collect();
    let temporaries = nath_lines(|_| true);
    // What NATH says of a line's temporaries holds for their short lifetimes there too.
    let text_written = nath_lines(value_text_written);
    let removed = nath_lines(removed_by_the_jit);
    let mut out: Vec<Finding> = groups
        .into_iter()
        .map(|g| {
            let mut f = merge(g);
            let rolled = internal_bytes.get(&(f.location.file.clone(), f.location.line)).copied().unwrap_or(0);
            if rolled > 0 {
                f.evidence.set_internal_bytes(rolled);
            }
            f
        })
        .collect();
    // Lines whose objects are (almost) never used: a string built there is built for nothing.
    let unused: std::collections::HashSet<(Option<String>, Option<u32>)> = out
        .iter()
        .filter(|f| matches!(f.kind(), Kind::NeverUsed | Kind::RarelyUsed))
        .map(|f| (f.location.file.clone(), f.location.line))
        .collect();
    // 3–5. Hide, rank, advise.
    for f in &mut out {
        let line = (f.location.file.clone(), f.location.line);
        let dropped = unused.contains(&line);
        f.pattern = recognise::pattern(f, LineFacts { dropped, text_written: text_written.contains(&line) });
        f.advice = f.pattern.map(|p| recognise::advice(f, p)).unwrap_or_default();
        let ran = calls.get(&(
            f.location.class.clone(),
            f.location.method.clone(),
            f.location.descriptor.clone(),
            f.location.bci,
        ));
        if let Some(r) = ran {
            f.evidence.set_line_ran(r.calls);
        }
        let short = short_lived(f);
        let stored_young = short && !temporaries.contains(&line);
        // Objects a library made that all live to the end, born early rather than all through
        // the run, or far more of them than the user's line ran: a cache or table it fills once
        // (locale data behind the first `String.format`), however short the run that saw it grow.
        let library_setup = f.evidence.lifetime().is_some_and(|l| {
            l.class == LifetimeClass::Immortal
                && l.made_by_library
                && (!l.growing || ran.is_some_and(|r| l.instances >= 50 * r.calls.max(1)))
        });
        // A call path is a bottleneck when its cost looks redundant (the same work repeated, or a
        // result dropped), not because the program's real work is costly.
        let essential =
            f.evidence.bottleneck().is_some_and(|b| b.repeated.is_none()) && !(dropped && builds_a_string(f));
        // Objects a library's class initializer made (a class's tables, built on its first use):
        // a class is initialised once, however often the user's line ran.
        let class_init =
            f.related.iter().any(|r| r.role.starts_with("allocated inside") && r.location.method == "<clinit>");
        f.hidden = if ran.is_some_and(|r| r.calls <= 1) || library_setup || class_init {
            Some(ONE_TIME.into())
        } else if loop_iterator(f) || scalar_replaced(f, removed.contains(&line)) {
            Some(SCALAR_REPLACED.into())
        } else if essential {
            Some(ESSENTIAL.into())
        } else if short && factory_lines.contains(&line) {
            Some(AT_CALLER.into())
        } else if stored_young {
            Some(STORED_YOUNG.into())
        } else if f.pattern.is_none() && (value_text_written(f) || (short && text_written.contains(&line))) {
            Some(OUTPUT_TEXT.into())
        } else if f.pattern.is_none() {
            Some(NO_PATTERN.into())
        } else if f.share < settings.min_share {
            Some(SMALL.into())
        } else {
            None
        };
    }
    let mut out = one_per_problem(out);
    out.sort_by(|a, b| {
        a.hidden.is_some().cmp(&b.hidden.is_some()).then(b.share.total_cmp(&a.share)).then(a.location.cmp(&b.location))
    });
    let mut shown = 0;
    for f in &mut out {
        f.severity = match (&f.hidden, shown) {
            (Some(_), _) => Severity::Hint,
            (None, 0..=2) if f.share >= 5.0 * settings.min_share => Severity::Warning,
            _ => Severity::Info,
        };
        shown += f.hidden.is_none() as usize;
    }
    out
}

/// Patterns that, on one line, are part of another's problem: objects that pile up unread are one
/// leak, whatever else says they are unread; a string built for a message nobody uses is also the
/// temporary string and the never-used objects of its line.
const PART_OF: [(Pattern, Pattern); 4] = [
    (Pattern::WrittenNeverRead, Pattern::Leak),
    (Pattern::NeverUsedObjects, Pattern::Leak),
    (Pattern::TemporaryString, Pattern::UnusedMessageString),
    (Pattern::NeverUsedObjects, Pattern::UnusedMessageString),
];

/// One finding per problem: shown findings of one pattern on one line are the same objects or the
/// same work seen by two analyses (NATH and a short lifetime, a never-used site and its imbalance),
/// and a pattern that is part of another's problem on its line ([`PART_OF`]) joins it. The largest
/// share leads (the including pattern always); the others go into its `also`, their share not added.
fn one_per_problem(findings: Vec<Finding>) -> Vec<Finding> {
    let at = |f: &Finding| (f.location.file.clone(), f.location.line);
    let present: std::collections::HashSet<_> =
        findings.iter().filter(|f| f.hidden.is_none()).filter_map(|f| Some((f.pattern?, at(f)))).collect();
    let problem = |f: &Finding| -> Option<Pattern> {
        let p = f.pattern.filter(|_| f.hidden.is_none())?;
        let whole = PART_OF.iter().find(|(part, whole)| *part == p && present.contains(&(*whole, at(f))));
        Some(whole.map_or(p, |(_, whole)| *whole))
    };
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    let mut index: HashMap<(Pattern, Option<String>, Option<u32>), usize> = HashMap::new();
    for f in findings {
        let Some(p) = problem(&f) else {
            out.push(f);
            continue;
        };
        let key = (p, f.location.file.clone(), f.location.line);
        let Some(&i) = index.get(&key) else {
            index.insert(key, out.len());
            out.push(f);
            continue;
        };
        let lead_first = out[i].pattern == Some(p) && (f.pattern != Some(p) || out[i].share >= f.share);
        let (mut lead, other) = if lead_first { (out[i].clone(), f) } else { (f, out[i].clone()) };
        let merged = AlsoEntry {
            evidence: other.evidence,
            message: other.message,
            pattern: other.pattern,
            share: round4(other.share),
        };
        lead.evidence.also_mut().push(merged);
        out[i] = lead;
    }
    out
}

/// Whether the finding is about short-lived objects (a lifetime finding of class `short`).
fn short_lived(f: &Finding) -> bool {
    f.evidence.lifetime().is_some_and(|l| l.class == LifetimeClass::Short)
}

/// Whether the finding is about the text of values the program writes out (see
/// [`recognise::value_text_written`]).
fn value_text_written(f: &Finding) -> bool {
    f.evidence.usage().is_some_and(recognise::value_text_written)
}

/// A temporary that is a JDK collection's iterator (`ArrayList$Itr`, `HashMap$KeyIterator`): made
/// by a for-each loop and never stored, it is scalar-replaced by HotSpot's JIT, so it costs nothing
/// there whatever our interpreter counts.
fn loop_iterator(f: &Finding) -> bool {
    let temporary = matches!(f.kind(), Kind::Nath | Kind::MostlyNath | Kind::NeverUsed) || short_lived(f);
    let ty = f.evidence.type_name().unwrap_or("");
    let inner = ty.rsplit('$').next().unwrap_or("");
    temporary
        && ty.starts_with("java.util.")
        && ty.contains('$')
        && (inner.ends_with("Itr") || inner.ends_with("Iterator"))
}

/// Temporaries with no state of their own to compute with — a lambda's closure, a collection
/// never filled (made to be asked `isEmpty()`) — that never leave code HotSpot inlines (refprop's
/// `inlined`: never stored, never given to a native, every method they reach small): its escape
/// analysis removes them, so a fix saves nothing. (A result object is left shown: its fields are
/// the program's values, and whether the JIT removes it depends on more than its size.)
fn removed_by_the_jit(f: &Finding) -> bool {
    let Some(u) = f.evidence.usage().filter(|_| f.kind() == Kind::Nath) else { return false };
    let closure = u.type_name.contains("$$Lambda");
    u.inlined && (closure || u.empty_collection)
}

/// A temporary HotSpot removes ([`removed_by_the_jit`]), or a short lifetime on its line.
fn scalar_replaced(f: &Finding, line_removed: bool) -> bool {
    removed_by_the_jit(f) || (short_lived(f) && line_removed)
}

/// The bytes of a finding about the library's own workings, which the user's code neither sees
/// nor changes (`None` for the others): a copy chain that moves only library bookkeeping (an
/// iterator's cursor), never the user's data; objects inside a library structure (a `String`'s
/// `byte[]`, a map's nodes) that user code never touches — part of the structure the user made.
/// The analyses say so in the evidence.
fn mechanics_bytes(f: &Finding) -> Option<u64> {
    match &f.evidence {
        Evidence::CopyChain(c) if !c.user_data => Some(c.bytes),
        Evidence::Usage(_, u) if !u.handled_by_user => Some(u.bytes),
        _ => None,
    }
}

/// What a fix would save, as a share of the program's estimated time on HotSpot
/// ([`crate::cost_model`]): the finding's [`Work`] priced by the model.
fn share(f: &Finding, t: &RunTotals, calls: &SiteCalls) -> f64 {
    CostModel::HOTSPOT.share(saved_work(f, calls), t.program)
}

/// What a fix removes, as the VM counted it.
fn saved_work(f: &Finding, calls: &SiteCalls) -> Work {
    // Cost-benefit's figures are sums, rounded floats: counted whole.
    let whole = |x: f64| x.max(0.0) as u64;
    match &f.evidence {
        Evidence::CopyChain(c) => cost_model::copy_chain(c.frequency, c.hops, c.through_containers),
        // A clone not made: its copies (as 4-byte values), and the objects it allocated (about the
        // bytes it copied).
        Evidence::Clone(c) => cost_model::COPY.times(c.volume / 4).plus(Work::new(0, c.volume)),
        // A collection only filled: what the calls that made and filled it cost.
        Evidence::FilledCollection(c) => {
            let cost: u64 = c
                .cost_sites
                .iter()
                .filter_map(|s| {
                    let key = (s.class.clone(), s.method.clone(), s.descriptor.clone(), s.bci);
                    calls.get(&key).map(|r| r.instructions)
                })
                .sum();
            Work::new(cost, 0)
        }
        // What building it costs, or, for unread fields of a useful object, what computing those costs.
        Evidence::LowUtility(l) => Work::new(whole(l.avoidable_cost), 0),
        // The calls' instructions (or copies) and the bytes they allocate.
        Evidence::Bottleneck(b) => {
            let cum = b.cum.max(0) as u64;
            match b.metric {
                Metric::Bytes => Work::new(0, cum),
                Metric::Copies => cost_model::COPY.times(cum).plus(Work::new(0, b.cum_bytes)),
                Metric::Instructions => Work::new(cum, b.cum_bytes),
            }
        }
        // A mixed site: what its throw-away objects cost, not what the callers that keep theirs do.
        Evidence::Lifetime(LifetimeEvidence { temporary_bytes: Some(bytes), .. }) => Work::new(0, *bytes),
        Evidence::Lifetime(l) => Work::new(0, l.bytes),
        Evidence::Usage(_, u) => Work::new(0, u.bytes),
    }
}

/// One finding for a kind on a line: the costliest, with the others as evidence. Allocation and
/// copy findings add up (different objects, different copies); call paths may overlap, so a
/// line's bottleneck share is its largest.
fn merge(mut group: Vec<Finding>) -> Finding {
    group.sort_by(|a, b| b.share.total_cmp(&a.share).then(a.location.cmp(&b.location)));
    let mut it = group.into_iter();
    let mut first = it.next().expect("a group has a finding");
    let rest: Vec<Finding> = it.collect();
    if rest.is_empty() {
        return first;
    }
    if first.kind() != Kind::Bottleneck {
        first.share = (first.share + rest.iter().map(|f| f.share).sum::<f64>()).min(1.0);
    }
    // Copy chains of several fields into one container: the fields, named.
    let mut fields: Vec<String> = Vec::new();
    for name in std::iter::once(&first).chain(&rest).filter_map(copied_field) {
        if !fields.contains(&name) {
            fields.push(name);
        }
    }
    if fields.len() > 1 {
        if let Evidence::CopyChain(c) = &mut first.evidence {
            first.message = format!("{} fields copied here: {}; {}", fields.len(), fields.join(", "), first.message);
            c.fields_copied = Some(fields);
        }
    }
    let mut also: Vec<AlsoEntry> = Vec::new();
    // The others' own lines are related places; their hops stay in `also`.
    for f in rest {
        let what = copied_field(&f).or_else(|| f.evidence.type_name().map(String::from));
        let role = format!("also here: {}", what.unwrap_or_else(|| f.kind().to_string()));
        if f.location.line != first.location.line && !first.related.iter().any(|r| r.location == f.location) {
            first.related.push(crate::report::Related { location: f.location, role });
        }
        also.push(AlsoEntry { evidence: f.evidence, message: f.message, pattern: None, share: round4(f.share) });
    }
    *first.evidence.also_mut() = also;
    first
}

/// The field a copy chain moves into its container (`Order.sku` → `sku`).
fn copied_field(f: &Finding) -> Option<String> {
    let Evidence::CopyChain(c) = &f.evidence else { return None };
    let node = c.field.as_str();
    let name = node.rsplit('.').next()?;
    (name != node && !node.contains(' ')).then(|| name.to_string())
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{UsageEvidence, UsageKind};
    use crate::report::Location;

    fn at() -> Location {
        Location {
            file: Some("Main.java".into()),
            line: Some(1),
            class: "Main".into(),
            method: "main".into(),
            descriptor: "([Ljava/lang/String;)V".into(),
            bci: 0,
            expression: None,
        }
    }

    fn hidden(reason: Option<&str>) -> Finding {
        let nath = Evidence::Usage(UsageKind::Nath, UsageEvidence::default());
        Finding { hidden: reason.map(String::from), ..Finding::new(nath, 1.0, String::new(), at()) }
    }

    fn with_share(evidence: Evidence) -> Finding {
        Finding { share: 0.05, ..Finding::new(evidence, 1.0, String::new(), at()) }
    }

    #[test]
    fn hidden_findings_are_counted_by_reason_in_words() {
        let findings =
            [hidden(None), hidden(Some(SMALL)), hidden(Some(ONE_TIME)), hidden(Some(SMALL)), hidden(Some(ESSENTIAL))];
        assert_eq!(
            hidden_reasons(&findings, 0.01),
            vec![
                ("under 1% of the run".to_string(), 2),
                ("from work done once".to_string(), 1),
                ("on the program's essential path".to_string(), 1)
            ]
        );
        assert_eq!(hidden_reasons(&findings, 0.005)[0].0, "under 0.5% of the run");
        assert!(hidden_reasons(&findings[..1], 0.01).is_empty());
    }

    /// A lambda's closure or a collection never filled that never leaves inlined code is removed
    /// by HotSpot's escape analysis: hidden. Reaching a large method or a native, or a result
    /// object of the program's own, it is shown.
    #[test]
    fn closures_and_empty_collections_in_inlined_code_are_hidden() {
        let temp = |ty: &str, inlined: bool, empty_collection: bool| {
            let u = UsageEvidence {
                type_name: ty.into(),
                inlined,
                empty_collection,
                bytes: 100_000,
                handled_by_user: true,
                ..UsageEvidence::default()
            };
            with_share(Evidence::Usage(UsageKind::Nath, u))
        };
        let totals = RunTotals { program: Work::new(1_000_000, 1 << 20) };
        let mut calls = SiteCalls::new();
        calls.insert(
            ("Main".into(), "main".into(), "([Ljava/lang/String;)V".into(), 0),
            SiteRuns { calls: 4000, instructions: 0 },
        );
        let hidden_as = |f: Finding| triage(vec![f], &totals, &calls, &Settings::default())[0].hidden.clone();
        let removed = Some(SCALAR_REPLACED.to_string());
        assert_eq!(hidden_as(temp("Main$Parser$$Lambda$3", true, false)), removed);
        assert_eq!(hidden_as(temp("java.util.ArrayList", true, true)), removed);
        assert_eq!(hidden_as(temp("Main$Parser$$Lambda$3", false, false)), None, "handed to a large method");
        assert_eq!(hidden_as(temp("java.util.ArrayList", true, false)), None, "filled");
        assert_eq!(hidden_as(temp("Main$Decision", true, false)), None, "the program's own values");
    }

    /// Objects a library made on a line that ran a few times, hundreds per run of it, all kept:
    /// a table the library fills once (the locale data behind the first `String.format`), even
    /// when the collector saw it grow during a short run. One per run of the line is a leak.
    #[test]
    fn a_library_table_filled_behind_a_few_calls_is_one_time_work_not_a_leak() {
        let leak = |instances: u64| {
            with_share(Evidence::Lifetime(LifetimeEvidence {
                class: LifetimeClass::Immortal,
                growing: true,
                made_by_library: true,
                instances,
                ..LifetimeEvidence::default()
            }))
        };
        let totals = RunTotals { program: Work::new(1_000_000, 1 << 20) };
        let mut calls = SiteCalls::new();
        calls.insert(
            ("Main".into(), "main".into(), "([Ljava/lang/String;)V".into(), 0),
            SiteRuns { calls: 3, instructions: 0 },
        );
        let settings = Settings::default();
        let table = triage(vec![leak(1348)], &totals, &calls, &settings);
        assert_eq!(table[0].hidden.as_deref(), Some(ONE_TIME));
        let kept = triage(vec![leak(3)], &totals, &calls, &settings);
        assert_ne!(
            kept[0].hidden.as_deref(),
            Some(ONE_TIME),
            "as many objects as the line ran: the user's own accumulation"
        );
    }
}

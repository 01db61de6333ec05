//! The analyses as Java source in → findings out. Each `fixtures/bloat/<name>/` holds a program
//! reproducing a case study of the papers (or a clean program) and `expected.txt`, the snapshot of
//! its findings: one line per finding with its kind, user line and the evidence figures that define
//! it. `BLOATLENS_BLESS=1` rewrites the snapshots. Besides the snapshots, the numbers the papers
//! print for their examples are asserted directly.

use bloatlens_profiler::analysis::copy::CopyTracker;
use bloatlens_profiler::analysis::costben::CostBenefitTracker;
use bloatlens_profiler::analysis::lifetime::LifetimeTracker;
use bloatlens_profiler::analysis::placement::Placed;
use bloatlens_profiler::evidence::{
    BottleneckEvidence, CloneEvidence, CopyChainEvidence, Evidence, LifetimeClass, LifetimeEvidence,
    LowUtilityEvidence, RepeatedWork, UsageEvidence,
};
use bloatlens_profiler::profile::{profile, Analyses, AnalysisThreads, ProfileConfig};
use bloatlens_profiler::report::{Finding, Kind, Report, Settings};
use bloatlens_profiler::run::{run_with, RunConfig};
use bloatlens_profiler::vm::Observe;
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

mod support {
    pub mod corpus;
    pub mod javac;
}
use support::{corpus, javac};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bloat")
}

/// Compiles a fixture with `javac -g` and profiles it with the default settings.
fn profile_fixture(name: &str) -> Result<Report, Failed> {
    profile_fixture_with(name, Settings::default())
}

fn profile_fixture_with(name: &str, settings: Settings) -> Result<Report, Failed> {
    profile_dir(&fixtures().join(name), settings)
}

fn profile_dir(dir: &Path, settings: Settings) -> Result<Report, Failed> {
    profile_dir_observing(dir, settings, Observe::UserCode)
}

fn profile_dir_observing(dir: &Path, settings: Settings, observe: Observe) -> Result<Report, Failed> {
    let (_classes, mut run) = compiled_run(dir)?;
    run.observe = observe;
    let config = ProfileConfig { run, analyses: Analyses::default(), settings, threads: AnalysisThreads::Own };
    let (_, report) = profile(&config).map_err(|e| e.to_string())?;
    Ok(report)
}

/// The program in `dir` compiled with `javac -g` (into the directory returned, removed when dropped)
/// and the run of its `Main` with the arguments of its `args.txt`.
fn compiled_run(dir: &Path) -> Result<(tempfile::TempDir, RunConfig), Failed> {
    let out = tempfile::tempdir().map_err(|e| e.to_string())?;
    let sources = bloatlens_profiler::javac::java_files(dir).map_err(|e| e.to_string())?;
    let mut args = vec!["-g".to_string(), "-d".to_string(), out.path().display().to_string()];
    args.extend(sources.iter().map(|s| s.display().to_string()));
    let tools = javac::Tools { javac: Path::new("javac"), java: Path::new("java") };
    let compiled = javac::javac(tools, &args)?;
    if compiled.status != 0 {
        return Err(format!("javac failed: {}", compiled.messages).into());
    }
    let args = std::fs::read_to_string(dir.join("args.txt")).unwrap_or_default();
    let mut run = RunConfig::new(out.path().display().to_string(), "Main");
    run.args = args.split_whitespace().map(String::from).collect();
    run.capture = true;
    // The program's sources, as the CLI and the editor give them (findings are placed on their lines).
    run.source_roots = vec![dir.to_path_buf()];
    Ok((out, run))
}

/// The figures that define a finding of each kind.
fn key_evidence(kind: &str) -> &'static [&'static str] {
    match kind {
        "copy-chain" => &["hops", "frequency", "bytes", "volume", "waste_factor", "consumed"],
        "clone" => &["volume"],
        "lifetime" => &[
            "class",
            "type",
            "instances",
            "short",
            "medium",
            "long",
            "immortal",
            "growing",
            "outlived_hotspot_young",
            "temporary_objects",
        ],
        "low-utility" => &["type", "instances", "n_rac", "n_rab", "unread_fields"],
        "bottleneck" => &["path", "percent", "repeated"],
        _ => &["type", "instances", "nath_objects", "used_objects", "heap_writes", "heap_reads"],
    }
}

/// Figures the snapshot shows in a form of its own: a bottleneck's path by short method names,
/// its share in whole percent.
fn derived(f: &Finding, key: &str) -> Option<String> {
    let b = f.evidence.bottleneck()?;
    match key {
        "path" => Some(
            b.calls
                .iter()
                .map(|c| bloatlens_profiler::analysis::bottleneck::short_name(c))
                .collect::<Vec<_>>()
                .join(">"),
        ),
        "percent" => Some(format!("{:.0}", b.share * 100.0)),
        _ => None,
    }
}

fn snapshot(report: &Report) -> String {
    let mut lines: Vec<String> = report
        .findings
        .iter()
        .map(|f| {
            // The figures as the JSON report writes them, by their names there.
            let written = serde_json::to_value(&f.evidence).expect("evidence as JSON");
            let figures: Vec<String> = key_evidence(f.kind().as_str())
                .iter()
                .filter_map(|k| derived(f, k).or_else(|| written.get(*k).map(|v| v.to_string())))
                .map(|v| v.trim_matches('"').to_string())
                .zip(key_evidence(f.kind().as_str()))
                .map(|(v, k)| format!("{k}={v}"))
                .collect();
            format!(
                "{}{} {}:{} {} | {}",
                if f.hidden.is_some() { "(hidden) " } else { "" },
                f.kind(),
                f.location.file.as_deref().unwrap_or("?"),
                f.location.line.unwrap_or(0),
                f.location.method,
                figures.join(" ")
            )
        })
        .collect();
    lines.sort();
    let mut out = format!("outcome: {} {}\n", report.run.outcome, report.run.exit_status);
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

fn check_snapshot(name: &str) -> Result<(), Failed> {
    let report = profile_fixture(name)?;
    let actual = snapshot(&report);
    let path = fixtures().join(name).join("expected.txt");
    if std::env::var_os("BLOATLENS_BLESS").is_some() {
        std::fs::write(&path, &actual).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let expected = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e} (bless with BLOATLENS_BLESS=1)", path.display()))?;
    if expected != actual {
        return Err(
            format!("findings differ from {}\n--- expected\n{expected}--- actual\n{actual}", path.display()).into()
        );
    }
    Ok(())
}

fn find<'a>(report: &'a Report, kind: &str, pred: impl Fn(&Finding) -> bool) -> Result<&'a Finding, Failed> {
    report
        .findings
        .iter()
        .find(|f| f.kind().as_str() == kind && pred(f))
        .ok_or_else(|| Failed::from(format!("no matching {kind} finding among {:#?}", report.findings)))
}

fn chain(f: &Finding) -> &CopyChainEvidence {
    match &f.evidence {
        Evidence::CopyChain(c) => c,
        other => panic!("not a copy chain: {other:?}"),
    }
}

fn clone_of(f: &Finding) -> &CloneEvidence {
    match &f.evidence {
        Evidence::Clone(c) => c,
        other => panic!("not a clone: {other:?}"),
    }
}

fn usage(f: &Finding) -> &UsageEvidence {
    f.evidence.usage().unwrap_or_else(|| panic!("not a usage finding: {:?}", f.evidence))
}

fn low_utility(f: &Finding) -> &LowUtilityEvidence {
    match &f.evidence {
        Evidence::LowUtility(l) => l,
        other => panic!("not a low-utility structure: {other:?}"),
    }
}

fn lifetime(f: &Finding) -> &LifetimeEvidence {
    f.evidence.lifetime().unwrap_or_else(|| panic!("not a lifetime finding: {:?}", f.evidence))
}

fn bottleneck(f: &Finding) -> &BottleneckEvidence {
    f.evidence.bottleneck().unwrap_or_else(|| panic!("not a bottleneck: {:?}", f.evidence))
}

/// The type of an allocation finding's objects.
fn of_type(f: &Finding, ty: &str) -> bool {
    f.evidence.type_name() == Some(ty)
}

/// Copy profiling §5.1: antlr's chain prints as `(355162, 2)`: 177581 two-byte copies over two
/// hops. 355162 is the volume (frequency × bytes); the waste factor the paper defines multiplies
/// by the length too.
fn antlr_chain_numbers() -> Result<(), Failed> {
    let report = profile_fixture("two_hop_char_copy")?;
    let found = find(&report, "copy-chain", |f| chain(f).hops == 2)?;
    let c = chain(found);
    assert_eq!(c.frequency, 177581);
    assert_eq!(c.bytes, 2);
    assert_eq!(c.volume, 355162, "the paper's printed figure");
    assert_eq!(c.waste_factor, 2 * 355162, "length × frequency × bytes");
    assert_eq!(found.related.iter().filter(|r| r.role.contains("stored")).count(), 2, "one store per hop");
    Ok(())
}

/// Copy profiling Figure 7 and §5.2: slowClone copies the 1000 Integer references from one list's
/// array to the other's (edge 1000 × 4 bytes), and the clone detector blames the pair of
/// ListClient objects (volume 4000), the cause, rather than the arrays.
fn slow_clone_numbers() -> Result<(), Failed> {
    let report = profile_fixture("deep_clone_list")?;
    let c = chain(find(&report, "copy-chain", |f| f.location.method == "add")?);
    assert_eq!((c.frequency, c.bytes, c.hops), (1000, 4, 1));
    let clone = find(&report, "clone", |_| true)?;
    let (target, source, volume) = (&clone_of(clone).target, &clone_of(clone).source, clone_of(clone).volume);
    assert_eq!(volume, 4000);
    assert!(target.contains("ListClient") && source.contains("ListClient"), "{source} → {target}");
    assert_eq!(clone.location.method, "slowClone");
    Ok(())
}

/// Copy profiling §3.2 (Figure 7): context-insensitive naming merges the two lists' arrays (both
/// allocated at one site) into one node, so slowClone's copies form a self-edge; 1-object
/// sensitivity names each array by its owner's allocation site and separates them.
fn context_sensitivity() -> Result<(), Failed> {
    let insensitive = profile_fixture_with("deep_clone_list", Settings { context_slots: 0, ..Settings::default() })?;
    let path = &chain(find(&insensitive, "copy-chain", |f| f.location.method == "add")?).path;
    assert_eq!(path.len(), 2);
    assert_eq!(path[0], path[1], "one node O.ELM for both arrays: a self-edge");
    let sensitive = profile_fixture("deep_clone_list")?;
    let path = &chain(find(&sensitive, "copy-chain", |f| f.location.method == "add")?).path;
    assert_ne!(path[0], path[1], "each array named by its owner");
    Ok(())
}

/// Cost-benefit with object-sensitive contexts: one factory's summaries, made for two callers
/// that each read one of the two fields. Neither field is "never read"; each is unread in the
/// other caller's objects, and the finding says in how many. The NATH verdict, shared by both
/// contexts, is one finding with all the line's objects.
fn unread_per_context() -> Result<(), Failed> {
    let report = profile_fixture("unread_in_one_context")?;
    let f = find(&report, "low-utility", |f| f.location.method == "summarize")?;
    assert_eq!(low_utility(f).instances, 2500);
    assert!(!low_utility(f).unread_everywhere);
    assert!(
        f.message.contains("of its 2,500 objects, its fields checksum (in 2,000), total (in 500) are never read"),
        "{}",
        f.message
    );
    assert!(!f.message.contains("its fields checksum, total are never read"), "{}", f.message);
    assert!(f.advice.contains("only for the callers that read them"), "{}", f.advice);
    let nath = find(&report, "nath", |f| f.location.method == "summarize")?;
    let u = usage(nath);
    assert_eq!((u.instances, u.contexts), (2500, Some(2)));
    assert_eq!((u.nath_objects, u.used_objects), (2500, 2500), "the line's figures");
    assert!(nath.message.contains("all 2,500 objects are temporaries"), "{}", nath.message);
    Ok(())
}

/// ROLP §5: one allocation site reached by two call paths — the same two helpers called in the
/// opposite order — whose objects live differently. The calling-context tree keeps the paths
/// apart (an additive stack hash would merge them), so the site is `mixed` and both paths are named.
fn rolp_mixed_contexts() -> Result<(), Failed> {
    let report = profile_fixture("lifetime_mixed_factory")?;
    let f = find(&report, "lifetime", |f| f.location.method == "make")?;
    let l = lifetime(f);
    assert_eq!(l.class, LifetimeClass::Mixed);
    // The temporaries born after the last young collection die in the final one: unclassified,
    // at most a young generation's allocation (1 MB: fewer than 4,096 buffers of 256 bytes). One
    // in hand as a collection comes survives it: at most one per collection is medium-lived.
    assert_eq!((l.immortal, l.short + l.medium + l.unclassified), (400, 20000));
    assert!(l.unclassified < (1 << 20) / 256, "{} unclassified", l.unclassified);
    assert!(l.medium <= l.collections, "{} medium-lived in {} collections", l.medium, l.collections);
    let contexts: Vec<&str> = f.related.iter().map(|r| r.role.as_str()).filter(|r| r.starts_with("context:")).collect();
    assert_eq!(contexts.len(), 2, "{contexts:?}");
    assert!(
        contexts
            .iter()
            .any(|c| c.starts_with("context: immortal (400 objects) via Main.java:25 → Main.java:15 → Main.java:16")),
        "{contexts:?}"
    );
    assert!(
        contexts
            .iter()
            .any(|c| c.starts_with("context: short (20,000 objects) via Main.java:27 → Main.java:16 → Main.java:15")),
        "{contexts:?}"
    );
    let leak = find(&report, "lifetime", |f| lifetime(f).class == LifetimeClass::Immortal)?;
    assert!(lifetime(leak).growing, "listeners only ever added: a possible leak");
    Ok(())
}

/// The figures of one field of a low-utility finding: (RAC, RAB).
fn field_figures(f: &Finding, field: &str) -> Result<(f64, f64), Failed> {
    let fields = &low_utility(f).fields;
    let row = fields.iter().find(|r| r.field == field).ok_or_else(|| format!("no {field} in {fields:?}"))?;
    Ok((row.rac, row.rab))
}

/// Abstract dynamic slicing §4, Fig. 11, in Java. Our unit of cost is one bytecode instruction
/// (the paper's is one statement), so the loop that computes `t` costs 7 per iteration (iload s,
/// iload i, iconst_3, imul, iadd, istore s, iinc) plus 6 around it: RAC(A.t) = 7006 where the paper
/// counts 4 statements per iteration plus 5 (4005). The other figures are the paper's exactly:
/// RAB(A.t) = 2 (the getfield and the parameter's load before it is stored again), and the
/// list's array elements cost 2 and are never read (RAC 2, RAB 0).
fn figure_11_costs() -> Result<(), Failed> {
    let all = Settings { low_utility_min_cost: 1, low_utility_rate: 0.0, ..Settings::default() };
    let report = profile_fixture_with("computed_field_read_once", all)?;
    let a = find(&report, "low-utility", |f| of_type(f, "Main$A"))?;
    assert_eq!(field_figures(a, "A.t")?, (7006.0, 2.0));
    let elements = find(&report, "low-utility", |f| of_type(f, "int[]") && f.location.line == Some(8))?;
    assert_eq!(field_figures(elements, "int[] elements")?, (2.0, 0.0));
    let list = find(&report, "low-utility", |f| of_type(f, "Main$IntList"))?;
    let own: f64 = ["IntList.count", "IntList.elems"]
        .iter()
        .map(|n| field_figures(list, n).map(|(c, _)| c))
        .sum::<Result<f64, Failed>>()?;
    assert_eq!(low_utility(list).n_rac, own + 2.0, "the tree reaches the array's elements");
    // With the default thresholds only A is reported: the list is cheap however useless.
    let report = profile_fixture("computed_field_read_once")?;
    let low: Vec<&Finding> = report.findings.iter().filter(|f| f.kind() == Kind::LowUtility).collect();
    assert_eq!(low.len(), 1, "{low:#?}");
    assert_eq!(low[0].location.line, Some(25));
    Ok(())
}

/// Bottlenecks §3.1: a security check repeated on every call of a hot path. The search names the
/// call sequence through the check, at the call in `handle`, with almost all of the run.
fn repeated_check_bottleneck() -> Result<(), Failed> {
    let report = profile_fixture("repeated_security_check")?;
    let b = find(&report, "bottleneck", |_| true)?;
    let calls = &bottleneck(b).calls;
    assert!(calls.iter().any(|c| c.starts_with("Main.checkPermission(")), "{calls:?}");
    assert_eq!(b.location.line, Some(19), "the check's call in handle");
    assert!(bottleneck(b).share > 0.9);
    assert!(b.related.iter().any(|r| r.role.contains("Main.checkPermission")), "{:?}", b.related);
    Ok(())
}

/// Profiles every program of the scored corpus (`fixtures/bloat/corpus/`, see `support/corpus.rs`)
/// and prints the scorer's table; `BLOATLENS_CORPUS_VERBOSE=1` adds each program's misses and
/// unexpected findings. The floors asserted here only guard against regressions; the targets and
/// the measured figures are in docs/benchmarks.md.
fn score_corpus() -> Result<(), Failed> {
    let root = fixtures().join("corpus");
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let verbose = std::env::var_os("BLOATLENS_CORPUS_VERBOSE").is_some();
    let mut scores = Vec::new();
    for name in &names {
        let dir = root.join(name);
        let marks = corpus::annotations(&dir)?;
        let report = profile_dir(&dir, Settings::default())?;
        if report.run.outcome != "exited" {
            return Err(format!("{name}: the run did not finish: {:?}", report.run.outcome_detail).into());
        }
        let s = corpus::score(name, &report, &marks);
        if verbose {
            println!(
                "{}: {} findings, {} expected; first five {}/{}\n  missed: {:?}\n  unexpected: {:?}",
                s.name, s.findings, s.expected, s.top5.0, s.top5.1, s.missed, s.unexpected
            );
        }
        scores.push(s);
    }
    let table = corpus::table(&scores);
    println!("\nscored corpus ({} programs)\n{table}", scores.len());
    let t = corpus::totals(&scores);
    if scores.len() < 20 {
        return Err(format!("the scored corpus holds {} programs, fewer than 20", scores.len()).into());
    }
    let recall = t.found as f64 / t.expected.max(1) as f64;
    let per_expected = t.findings as f64 / t.expected.max(1) as f64;
    if recall < FLOOR.recall || t.on_clean > FLOOR.on_clean || per_expected > FLOOR.findings_per_expected {
        return Err(format!("the corpus's score fell past its floor {FLOOR:?}\n{table}").into());
    }
    Ok(())
}

/// Observing only the user's code and what it calls (the default) rather than everything, the
/// JDK's start-up included, keeps the findings a user sees, on every program of the corpus and
/// every snapshot: the same kinds in the same methods, and the corpus scores the same. What may
/// move is cost-benefit's figures: a cost no longer includes the JDK's one-time set-up (a table
/// its start-up built, read per call), which no change to the program saves; so low-utility
/// findings, and the findings on their lines that one finding per line leaves, are not compared.
fn observing_user_code_keeps_findings() -> Result<(), Failed> {
    let low_utility_lines = |r: &Report| -> Vec<(String, u32)> {
        r.findings
            .iter()
            .filter(|f| f.kind() == Kind::LowUtility)
            .map(|f| (f.location.file.clone().unwrap_or_default(), f.location.line.unwrap_or(0)))
            .collect()
    };
    let visible = |r: &Report, skip: &[(String, u32)]| {
        let mut v: Vec<String> = r
            .findings
            .iter()
            .filter(|f| f.hidden.is_none() && f.kind() != Kind::LowUtility)
            .filter(|f| !skip.contains(&(f.location.file.clone().unwrap_or_default(), f.location.line.unwrap_or(0))))
            .map(|f| format!("{} {}.{}", f.kind(), f.location.class, f.location.method))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let mut differ = Vec::new();
    let corpus_root = fixtures().join("corpus");
    let (mut score_user, mut score_all) = (Vec::new(), Vec::new());
    for dir in program_dirs()? {
        let user = profile_dir_observing(&dir, Settings::default(), Observe::UserCode)?;
        let all = profile_dir_observing(&dir, Settings::default(), Observe::Everything)?;
        let skip: Vec<_> = low_utility_lines(&user).into_iter().chain(low_utility_lines(&all)).collect();
        let (u, a) = (visible(&user, &skip), visible(&all, &skip));
        if u != a {
            let only = |x: &[String], y: &[String]| x.iter().filter(|f| !y.contains(f)).cloned().collect::<Vec<_>>();
            differ.push(format!(
                "{}: only observing the user's code {:?}; only observing everything {:?}",
                dir.display(),
                only(&u, &a),
                only(&a, &u)
            ));
        }
        if dir.parent() == Some(corpus_root.as_path()) {
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let marks = corpus::annotations(&dir)?;
            score_user.push(corpus::score(&name, &user, &marks));
            score_all.push(corpus::score(&name, &all, &marks));
        }
    }
    let (tu, ta) = (corpus::totals(&score_user), corpus::totals(&score_all));
    if (tu.found, tu.expected, tu.on_clean) != (ta.found, ta.expected, ta.on_clean) {
        differ.push(format!(
            "the corpus scores differently\nobserving the user's code:\n{}\nobserving everything:\n{}",
            corpus::table(&score_user),
            corpus::table(&score_all)
        ));
    }
    if differ.is_empty() {
        Ok(())
    } else {
        Err(differ.join("\n").into())
    }
}

/// Copy profiling, cost-benefit analysis and lifetimes on threads of their own, fed the recorded
/// event stream (cost-benefit on a second thread beside the first, taking its batches), find
/// exactly what they find inline on the VM's thread: both placements watch the same run of every
/// program of the snapshots and the corpus, and come to the same findings with the same figures
/// (and the same copy profile, the same cost summary).
fn own_threads_keep_findings() -> Result<(), Failed> {
    type EventFed = ((Option<CopyTracker>, Option<LifetimeTracker>), Placed<CostBenefitTracker>);
    let found = |t: Placed<EventFed>| -> Result<[String; 3], Failed> {
        let ((copy, lifetime), costben) = t.into_inner().ok_or("the analyses were on")?;
        let (Some(copy), Some(costben), Some(lifetime)) = (copy, costben.into_inner(), lifetime) else {
            return Err("every analysis was on".into());
        };
        Ok([
            format!("{}\n{}", json(&copy.findings), json(&copy.profile)),
            format!("{}\n{}", json(&costben.findings), json(&costben.summary)),
            json(&lifetime.findings),
        ])
    };
    let mut differ = Vec::new();
    let dirs = program_dirs()?;
    let s = Settings::default();
    for dir in &dirs {
        let (_classes, mut run) = compiled_run(dir)?;
        run.gc_interval_bytes = Some(s.young_gen_bytes);
        let analyses = |beside: bool| {
            Some((
                (Some(CopyTracker::new(s.clone())), Some(LifetimeTracker::new(s.clone(), s.young_gen_bytes, true))),
                Placed::new(Some(CostBenefitTracker::new(s.clone())), beside, "cost-benefit"),
            ))
        };
        let both = (Placed::new(analyses(false), false, "inline"), Placed::new(analyses(true), true, "analyses"));
        let (result, (inline, own)) = run_with(&run, both).map_err(|e| e.to_string())?;
        if result.stats.instructions < 100_000 {
            differ.push(format!("{}: did not run ({:?})", dir.display(), result.outcome));
        }
        let (inline, own) = (found(inline)?, found(own)?);
        let analyses = ["copy profiling", "cost-benefit", "lifetimes"];
        for (analysis, (i, o)) in analyses.into_iter().zip(inline.iter().zip(&own)) {
            if i != o {
                differ.push(format!("{} ({analysis}):\ninline:\n{i}\non its own thread:\n{o}", dir.display()));
            }
        }
    }
    if dirs.len() < 20 {
        differ.push(format!("only {} programs", dirs.len()));
    }
    if differ.is_empty() {
        Ok(())
    } else {
        Err(differ.join("\n").into())
    }
}

/// What an analysis found, as JSON to compare.
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("(not serialisable: {e})"))
}

/// Every program of the snapshots and of the scored corpus.
fn program_dirs() -> Result<Vec<PathBuf>, Failed> {
    let mut dirs = Vec::new();
    for root in [fixtures(), fixtures().join("corpus")] {
        for e in std::fs::read_dir(&root).map_err(|e| e.to_string())? {
            let path = e.map_err(|e| e.to_string())?.path();
            if path.join("Main.java").is_file() {
                dirs.push(path);
            }
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// Program state that moves as the program works — a parser's cursor saved and restored, a list
/// relinked, path compression, an interpreter's registers and stack trading values — copies no
/// data: no copy chain and no clone, whatever the volume.
fn state_moves_are_not_copies() -> Result<(), Failed> {
    let report = profile_dir(&fixtures().join("corpus/state_machines"), Settings::default())?;
    let copies: Vec<String> = report
        .findings
        .iter()
        .filter(|f| matches!(f.kind(), Kind::CopyChain | Kind::Clone))
        .map(|f| format!("{} {}: {}", f.kind(), f.location.short(), f.message))
        .collect();
    if copies.is_empty() {
        Ok(())
    } else {
        Err(format!("state moves reported as copies:\n{}", copies.join("\n")).into())
    }
}

/// A fixture's own marks (`// expect:` and `// clean`, as in the scored corpus) hold: every
/// expected finding is shown on its line, no finding on a clean line.
fn marks_hold(name: &str) -> Result<Report, Failed> {
    let dir = fixtures().join(name);
    let marks = corpus::annotations(&dir)?;
    let report = profile_dir(&dir, Settings::default())?;
    let s = corpus::score(name, &report, &marks);
    let on_clean: usize = s.on_clean.values().sum();
    if !s.missed.is_empty() || on_clean > 0 {
        let shown: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.hidden.is_none())
            .map(|f| format!("{} {}: {}", f.kind(), f.location.short(), f.message))
            .collect();
        return Err(format!(
            "{name}: missed {:?}, {on_clean} findings on clean lines; findings:\n{}",
            s.missed,
            shown.join("\n")
        )
        .into());
    }
    Ok(report)
}

/// An allocation's findings are on the line of its `new`, also where javac's line table puts the
/// `new` on an earlier line (after a `return`, in a call's arguments split over lines).
fn allocations_on_their_new_lines() -> Result<(), Failed> {
    marks_hold("split_allocation").map(|_| ())
}

/// Arguments compared by value: a parser called again and again with one scanner object at a new
/// position each time repeats nothing; the same method called with new but equal strings or
/// lists does.
fn equal_arguments_are_equal_values() -> Result<(), Failed> {
    let report = marks_hold("parser_scanner")?;
    let repeated: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.evidence.bottleneck().is_some_and(|b| b.repeated.is_some()))
        .map(|f| format!("{}: {}", f.location.short(), f.message))
        .collect();
    if !repeated.is_empty() {
        return Err(format!("the parser's calls reported as repeated work:\n{}", repeated.join("\n")).into());
    }
    let report = marks_hold("equal_arguments")?;
    for line in [29, 35] {
        let b = find(&report, "bottleneck", |f| f.location.line == Some(line))?;
        assert_eq!(bottleneck(b).repeated, Some(RepeatedWork::SameArguments), "line {line}: {}", b.message);
    }
    Ok(())
}

/// Regression guards, set just below what the scorer measured (the targets are in docs/benchmarks.md).
#[derive(Debug)]
struct Floor {
    recall: f64,
    on_clean: usize,
    findings_per_expected: f64,
}

const FLOOR: Floor = Floor { recall: 0.6, on_clean: 15, findings_per_expected: 2.1 };

fn main() {
    let args = Arguments::from_args();
    let mut names: Vec<String> = std::fs::read_dir(fixtures())
        .expect("fixtures/bloat")
        .filter_map(|e| e.ok())
        // The scored corpus and the fixes of its findings (tests/fixes.rs) are no snapshots.
        .filter(|e| e.path().is_dir() && e.file_name() != "corpus" && e.file_name() != "fixes")
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut trials: Vec<Trial> =
        names.into_iter().map(|n| Trial::test(format!("snapshot/{n}"), move || check_snapshot(&n))).collect();
    trials.push(Trial::test("corpus/score", score_corpus));
    trials.push(Trial::test("paper/antlr_chain_numbers", antlr_chain_numbers));
    trials.push(Trial::test("paper/slow_clone_numbers", slow_clone_numbers));
    trials.push(Trial::test("paper/context_sensitivity", context_sensitivity));
    trials.push(Trial::test("paper/rolp_mixed_contexts", rolp_mixed_contexts));
    trials.push(Trial::test("contexts/unread_per_context", unread_per_context));
    trials.push(Trial::test("copies/state_moves_are_not_copies", state_moves_are_not_copies));
    trials.push(Trial::test("levers/observing_user_code_keeps_findings", observing_user_code_keeps_findings));
    trials.push(Trial::test("levers/own_threads_keep_findings", own_threads_keep_findings));
    trials.push(Trial::test("paper/figure_11_costs", figure_11_costs));
    trials.push(Trial::test("paper/repeated_check_bottleneck", repeated_check_bottleneck));
    trials.push(Trial::test("locations/allocations_on_their_new_lines", allocations_on_their_new_lines));
    trials.push(Trial::test("bottleneck/equal_arguments_are_equal_values", equal_arguments_are_equal_values));
    libtest_mimic::run(&args, trials).exit();
}

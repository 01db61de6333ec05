//! A profiled run: the program runs once under the trackers of the chosen analyses, and what
//! they found becomes a [`Report`]. A run that throws, or that a budget stops, still yields the
//! report of what ran, marked `partial`.

use crate::analysis::bottleneck::{self, BottleneckTracker};
use crate::analysis::copy::CopyTracker;
use crate::analysis::costben::CostBenefitTracker;
use crate::analysis::lifetime::LifetimeTracker;
use crate::analysis::placement::Placed;
use crate::analysis::refprop::RefPropTracker;
use crate::graphs::Graphs;
use crate::report::{Finding, Kind, MethodCopies, Report, RunInfo, Settings, Severity, SCHEMA};
use crate::run::{locate_jdk, run_when, RunConfig, RunResult};
use crate::triage::{triage, RunTotals, SiteCalls};
use crate::vm::{NoTracker, Outcome, VmError};

/// Which analyses run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Analyses {
    pub copy: bool,
    pub refprop: bool,
    pub costben: bool,
    pub lifetime: bool,
    pub bottleneck: bool,
}

impl Default for Analyses {
    fn default() -> Self {
        Analyses { copy: true, refprop: true, costben: true, lifetime: true, bottleneck: true }
    }
}

impl Analyses {
    pub const NAMES: [&'static str; 5] = ["copy", "refprop", "costben", "lifetime", "bottleneck"];
    const NONE: Analyses = Analyses { copy: false, refprop: false, costben: false, lifetime: false, bottleneck: false };

    /// `copy,refprop` → both on; unknown names are an error naming them.
    pub fn parse(list: &str) -> Result<Analyses, String> {
        let mut a = Analyses::NONE;
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if name == "all" {
                a = Analyses::default();
            } else if !a.set(name, true) {
                return Err(format!("unknown analysis `{name}` (known: {})", Analyses::NAMES.join(", ")));
            }
        }
        Ok(a)
    }

    /// Turns the analysis `name` on or off; false when there is no such analysis.
    pub fn set(&mut self, name: &str, on: bool) -> bool {
        let flag = match name {
            "copy" => &mut self.copy,
            "refprop" => &mut self.refprop,
            "costben" => &mut self.costben,
            "lifetime" => &mut self.lifetime,
            "bottleneck" => &mut self.bottleneck,
            _ => return false,
        };
        *flag = on;
        true
    }

    fn flags(&self) -> [bool; 5] {
        [self.copy, self.refprop, self.costben, self.lifetime, self.bottleneck]
    }

    fn names(&self) -> Vec<String> {
        Analyses::NAMES.iter().zip(self.flags()).filter(|(_, on)| *on).map(|(n, _)| n.to_string()).collect()
    }
}

/// Where the analyses that need nothing but the event stream run (`analysis::placement`):
/// copy profiling, cost-benefit analysis and lifetimes so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnalysisThreads {
    /// All on the VM's thread.
    Inline,
    /// On a thread of their own, fed the recorded events (cost-benefit on a second one beside it
    /// when the machine has more than two cores).
    Own,
}

impl Default for AnalysisThreads {
    /// Threads of their own when the machine has more than one core.
    fn default() -> Self {
        match std::thread::available_parallelism() {
            Ok(n) if n.get() > 1 => AnalysisThreads::Own,
            _ => AnalysisThreads::Inline,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ProfileConfig {
    pub run: RunConfig,
    pub analyses: Analyses,
    pub settings: Settings,
    pub threads: AnalysisThreads,
}

/// Runs the program under the chosen analyses. `Err` only when the run could not start (no JDK,
/// a missing class path entry, boot failure).
pub fn profile(config: &ProfileConfig) -> Result<(RunResult, Report), VmError> {
    profile_when(config, false, || Some(config.clone())).map(|(r, report, _)| (r, report))
}

/// [`profile`], also keeping the analyses' graphs as they stand at the end (for `--format dot`).
pub fn profile_with_graphs(config: &ProfileConfig) -> Result<(RunResult, Report, Graphs), VmError> {
    profile_when(config, true, || Some(config.clone()))
}

impl ProfileConfig {
    /// Whether a profile booted with `self` can run `other` (see [`RunConfig::boots_like`]): the
    /// same analyses with the same settings, on a VM booted alike.
    pub fn boots_like(&self, other: &ProfileConfig) -> bool {
        let ProfileConfig { run, analyses, settings, threads } = self;
        run.boots_like(&other.run)
            && *analyses == other.analyses
            && *settings == other.settings
            && *threads == other.threads
    }

    /// The run's config as the VM takes it: lifetimes set the young generation's size.
    fn vm_run(&self) -> RunConfig {
        let mut run = self.run.clone();
        if self.analyses.lifetime {
            run.gc_interval_bytes = Some(self.settings.young_gen_bytes);
        }
        run
    }
}

/// A profile booted with `config` that waits, before `main`, for `start` to say which run it is
/// (a config that [boots like](ProfileConfig::boots_like) `config`; see [`crate::run::run_when`]);
/// the report is of that run.
pub(crate) fn profile_when(
    config: &ProfileConfig,
    keep_graphs: bool,
    start: impl FnOnce() -> Option<ProfileConfig> + Send,
) -> Result<(RunResult, Report, Graphs), VmError> {
    let mut started = None;
    let start = || {
        let c = start()?;
        let run = c.vm_run();
        started = Some(c);
        Some(run)
    };
    let (result, findings, copy_profile, analysed) = analyse(config, keep_graphs, start)?;
    let config = started.as_ref().unwrap_or(config);
    let Analysed { tree, cost_benefit, calls, user_work, graphs } = analysed;
    let counted = crate::cost_model::Work::new(result.stats.instructions, result.stats.allocated_bytes);
    // Tests run from JUnit's launcher, whose discovery and reporting are no part of the program:
    // their findings' shares are of the tests' own work (what ran in their frames and below).
    let program = match user_work {
        Some(w) if config.run.main_class == crate::junit::RUNNER_CLASS && w.instructions > 0 => w,
        _ => counted.minus(result.boot),
    };
    let totals = RunTotals { program };
    let mut findings = triage(findings, &totals, &calls, &config.settings);
    if matches!(result.outcome, Outcome::Stopped(_)) {
        keep_what_a_stopped_run_knows(&mut findings);
    }
    let mut report = make_report(config, &result, findings, copy_profile);
    report.call_tree = tree;
    report.cost_benefit = cost_benefit;
    Ok((result, report, graphs))
}

/// What the analyses leave beside their findings.
#[derive(Default)]
struct Analysed {
    tree: Option<crate::analysis::calltree::CallTree>,
    cost_benefit: Option<crate::report::CostSummary>,
    calls: SiteCalls,
    user_work: Option<crate::cost_model::Work>,
    graphs: Graphs,
}

/// The run under the trackers of `config`'s analyses, and what each found.
fn analyse(
    config: &ProfileConfig,
    keep_graphs: bool,
    start: impl FnOnce() -> Option<RunConfig> + Send,
) -> Result<(RunResult, Vec<Finding>, Vec<MethodCopies>, Analysed), VmError> {
    let s = config.settings.clone();
    let a = config.analyses;
    let run = config.vm_run();
    // Two shapes of tracker, so the interpreter is built twice, not once per combination: with
    // value flow (any analysis but lifetimes on) and without (lifetimes alone only watch events).
    let flow = a.copy || a.refprop || a.costben || a.bottleneck;
    let mut analysed = Analysed::default();
    let (result, findings, copy_profile) = if flow {
        // Copy profiling, cost-benefit analysis and lifetimes need nothing but the events: on a
        // thread of their own when there are cores to spare (the events recorded once), and
        // cost-benefit, the costliest, on one more beside it when there are cores for that too.
        let own = config.threads == AnalysisThreads::Own;
        let beside = own && std::thread::available_parallelism().is_ok_and(|n| n.get() > 2);
        let event_fed = (
            (
                a.copy.then(|| {
                    let mut t = CopyTracker::new(s.clone());
                    t.keep_graph = keep_graphs;
                    t
                }),
                a.lifetime.then(|| LifetimeTracker::new(s.clone(), s.young_gen_bytes, true)),
            ),
            Placed::new(a.costben.then(|| CostBenefitTracker::new(s.clone())), beside, "cost-benefit"),
        );
        let event_fed = (a.copy || a.costben || a.lifetime).then_some(event_fed);
        let trackers = (
            Placed::new(event_fed, own, "analyses"),
            a.refprop.then(|| {
                let mut t = RefPropTracker::new(s.clone());
                t.keep_graph = keep_graphs;
                t
            }),
            a.bottleneck.then(|| BottleneckTracker::new(s.clone())),
        );
        let (r, (event_fed, p, b)) = run_when(&run, trackers, start)?;
        let ((c, l), cb) = match event_fed.into_inner() {
            Some((rest, cb)) => (rest, cb.into_inner()),
            None => ((None, None), None),
        };
        let mut f = Vec::new();
        let mut profile = Vec::new();
        if let Some(c) = c {
            analysed.graphs.copy = c.graph;
            f.extend(c.findings);
            profile = c.profile;
        }
        if let Some(p) = p {
            analysed.graphs.reference = p.graph;
            f.extend(p.findings);
        }
        f.extend(l.into_iter().flat_map(|l| l.findings));
        if let Some(cb) = cb {
            f.extend(cb.findings);
            analysed.cost_benefit = cb.summary;
        }
        if let Some(b) = b {
            if keep_graphs {
                analysed.graphs.calls = Some(b.call_graph());
            }
            f.extend(b.findings);
            analysed.tree = Some(b.tree);
            analysed.calls = b.site_calls;
            analysed.user_work = Some(b.user_work);
        }
        (r, f, profile)
    } else if a.lifetime {
        let (r, l) = run_when(&run, LifetimeTracker::new(s.clone(), s.young_gen_bytes, false), start)?;
        (r, l.findings, Vec::new())
    } else {
        (run_when(&run, NoTracker, start)?.0, Vec::new(), Vec::new())
    };
    Ok((result, findings, copy_profile, analysed))
}

/// What a run that a budget or a cancel stopped can know: the copies and the costs counted so far.
/// Verdicts about what objects came to (never used, never stored in the heap, how long they lived,
/// what their fields brought) need the end of the run, so those findings are left out; the rest
/// are marked partial and are never warnings.
fn keep_what_a_stopped_run_knows(findings: &mut Vec<Finding>) {
    findings.retain(|f| matches!(f.kind(), Kind::CopyChain | Kind::Clone | Kind::Bottleneck));
    for f in findings {
        f.evidence.mark_partial();
        f.message.push_str(" (counted until the run was stopped)");
        if f.severity == Severity::Warning {
            f.severity = Severity::Info;
        }
    }
}

/// Adds to `report` how its call sequences' costs changed since `previous` (an earlier report of
/// the same program, with its calling-context tree). An error says why they cannot be compared.
pub fn compare(report: &mut Report, previous: &Report) -> Result<(), String> {
    let after = report.call_tree.take().ok_or("this run has no calling-context tree (bottleneck analysis off)")?;
    let Some(before) = previous.call_tree.as_ref() else {
        report.call_tree = Some(after);
        return Err("the previous report has no calling-context tree (bottleneck analysis off)".into());
    };
    let name = format!("{} ({} ms)", previous.run.main_class, previous.run.wall_ms);
    let mut comparison = bottleneck::compare(&after, before, &report.run.settings, &mut report.findings, name);
    report.call_tree = Some(after);
    use crate::quickfix::measure::{same_finding, Saving};
    comparison.work = Saving::between(previous, report).describe();
    comparison.gone = previous
        .shown()
        .into_iter()
        .filter(|f| same_finding(f, report).is_none())
        .map(|f| format!("{} at {}", f.pattern.map_or(f.kind().as_str(), |p| p.id()), f.location.short()))
        .collect();
    report.comparison = Some(comparison);
    Ok(())
}

fn make_report(
    config: &ProfileConfig,
    result: &RunResult,
    findings: Vec<Finding>,
    copy_profile: Vec<MethodCopies>,
) -> Report {
    let (outcome, detail, partial) = match &result.outcome {
        Outcome::Exited(_) => ("exited", None, false),
        Outcome::UncaughtException(e) => ("exception", Some(e.clone()), true),
        Outcome::Stopped(VmError::Cancelled) => ("cancelled", Some(VmError::Cancelled.to_string()), true),
        Outcome::Stopped(e) => ("stopped", Some(e.to_string()), true),
    };
    let jdk = locate_jdk(config.run.jdk.as_ref()).map(|j| j.home.display().to_string()).unwrap_or_default();
    Report {
        schema: SCHEMA.into(),
        run: RunInfo {
            main_class: config.run.main_class.clone(),
            args: config.run.args.clone(),
            class_path: config.run.class_path.clone(),
            jdk,
            outcome: outcome.into(),
            exit_status: result.status(),
            outcome_detail: detail,
            partial,
            stopped_at: result.stopped_at.clone(),
            analyses: config.analyses.names(),
            settings: config.settings.clone(),
            wall_ms: result.stats.wall.as_millis() as u64,
            instructions: result.stats.instructions,
            allocated_bytes: result.stats.allocated_bytes,
            boot_instructions: result.boot.instructions,
            boot_allocated_bytes: result.boot.bytes,
            collections: result.stats.collections,
        },
        findings,
        copy_profile,
        call_tree: None,
        comparison: None,
        cost_benefit: None,
        tests: Vec::new(),
        test_notes: Vec::new(),
    }
}

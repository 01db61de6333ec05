//! A profiled run: the program runs once under the trackers of the chosen analyses, and what
//! they found becomes a [`Report`]. A run that throws, or that a budget stops, still yields the
//! report of what ran, marked `partial`.

use crate::analysis::copy::CopyTracker;
use crate::analysis::lifetime::LifetimeTracker;
use crate::analysis::refprop::RefPropTracker;
use crate::report::{assign_severities, Finding, MethodCopies, Report, RunInfo, Settings, SCHEMA};
use crate::run::{locate_jdk, run_with, RunConfig, RunResult};
use crate::vm::{Outcome, VmError};

/// Which analyses run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Analyses {
    pub copy: bool,
    pub refprop: bool,
    pub lifetime: bool,
}

impl Default for Analyses {
    fn default() -> Self {
        Analyses { copy: true, refprop: true, lifetime: true }
    }
}

impl Analyses {
    pub const NAMES: [&'static str; 3] = ["copy", "refprop", "lifetime"];

    /// `copy,refprop` → both on; unknown names are an error naming them.
    pub fn parse(list: &str) -> Result<Analyses, String> {
        let mut a = Analyses { copy: false, refprop: false, lifetime: false };
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match name {
                "copy" => a.copy = true,
                "refprop" => a.refprop = true,
                "lifetime" => a.lifetime = true,
                "all" => a = Analyses::default(),
                other => return Err(format!("unknown analysis `{other}` (known: {})", Analyses::NAMES.join(", "))),
            }
        }
        Ok(a)
    }

    fn names(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.copy {
            v.push("copy".to_string());
        }
        if self.refprop {
            v.push("refprop".to_string());
        }
        if self.lifetime {
            v.push("lifetime".to_string());
        }
        v
    }
}

#[derive(Debug, Clone)]
pub struct ProfileConfig {
    pub run: RunConfig,
    pub analyses: Analyses,
    pub settings: Settings,
}

/// Runs the program under the chosen analyses. `Err` only when the run could not start (no JDK,
/// a missing class path entry, boot failure).
pub fn profile(config: &ProfileConfig) -> Result<(RunResult, Report), VmError> {
    let s = config.settings.clone();
    let a = config.analyses;
    let mut run = config.run.clone();
    if a.lifetime {
        run.gc_interval_bytes = Some(s.young_gen_bytes);
    }
    let lifetime = a.lifetime.then(|| LifetimeTracker::new(s.clone(), s.young_gen_bytes));
    // Two shapes of tracker, so the interpreter is built twice, not once per combination: with
    // value flow (copy or refprop on) and without (lifetimes alone only watch events).
    let (result, findings, copy_profile) = if a.copy || a.refprop {
        let trackers = (
            a.copy.then(|| CopyTracker::new(s.clone())),
            (a.refprop.then(|| RefPropTracker::new(s.clone())), lifetime),
        );
        let (r, (c, (p, l))) = run_with(&run, trackers)?;
        let mut f = Vec::new();
        let mut profile = Vec::new();
        if let Some(c) = c {
            f.extend(c.findings);
            profile = c.profile;
        }
        f.extend(p.into_iter().flat_map(|p| p.findings));
        f.extend(l.into_iter().flat_map(|l| l.findings));
        (r, f, profile)
    } else if let Some(l) = lifetime {
        let (r, l) = run_with(&run, l)?;
        (r, l.findings, Vec::new())
    } else {
        (crate::run::run(&run)?, Vec::new(), Vec::new())
    };
    let report = make_report(config, &result, findings, copy_profile);
    Ok((result, report))
}

fn make_report(
    config: &ProfileConfig,
    result: &RunResult,
    mut findings: Vec<Finding>,
    copy_profile: Vec<MethodCopies>,
) -> Report {
    let (outcome, detail, partial) = match &result.outcome {
        Outcome::Exited(_) => ("exited", None, false),
        Outcome::UncaughtException(e) => ("exception", Some(e.clone()), true),
        Outcome::Stopped(VmError::Cancelled) => ("cancelled", Some(VmError::Cancelled.to_string()), true),
        Outcome::Stopped(e) => ("stopped", Some(e.to_string()), true),
    };
    assign_severities(&mut findings);
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
            analyses: config.analyses.names(),
            settings: config.settings.clone(),
            wall_ms: result.stats.wall.as_millis() as u64,
            instructions: result.stats.instructions,
            allocated_bytes: result.stats.allocated_bytes,
            collections: result.stats.collections,
        },
        findings,
        copy_profile,
    }
}

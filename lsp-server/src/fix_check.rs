//! The quick fixes of a run's findings, made and checked in the background after the run: each
//! fix is compiled in the server's scratch directory (never in the workspace) and the program is
//! run again under the VM with the fixed classes first on its class path; a fix is offered as a
//! code action only when it compiles and the program prints what it printed (or, when its output
//! differs from one run to the next anyway, only compiles). Why a finding has no fix is kept for
//! its hover. A newer save cancels the checks.

use bloatlens_profiler::quickfix::check::{compile_fixed, same, Output, Verdict};
use bloatlens_profiler::quickfix::{apply, fix_for, QuickFix, Target};
use bloatlens_profiler::report::Finding;
use bloatlens_profiler::run::{run, RunConfig, RunResult};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// At most this many findings a run get their fix checked (the largest first): each check
/// compiles and runs the program once more.
pub const CHECKED_PER_RUN: usize = 6;

/// What the editor may offer for a finding.
#[derive(Debug, Clone)]
pub enum Offer {
    /// Made and being checked: not offered yet.
    Checking,
    /// Checked: offered as a quick fix while the file's text is `made_for` (its digest).
    Safe { fix: QuickFix, made_for: u64, verdict: Verdict },
    /// Why no fix is offered.
    NotOffered(String),
}

/// What the checks need of the run they follow.
#[derive(Debug, Clone)]
pub struct Base {
    /// The run as it was configured (its class path starts with the compiled classes).
    pub run: RunConfig,
    /// What it printed and how it ended.
    pub output: Output,
    pub roots: Vec<PathBuf>,
    pub javac: PathBuf,
    /// The server's scratch directory for this workspace.
    pub scratch: PathBuf,
}

impl Base {
    pub fn new(run: &RunConfig, result: &RunResult, roots: &[PathBuf], javac: &Path, scratch: &Path) -> Base {
        let mut run = run.clone();
        run.limits.cancel = None;
        Base {
            run,
            output: Output::of(result),
            roots: roots.to_vec(),
            javac: javac.to_path_buf(),
            scratch: scratch.to_path_buf(),
        }
    }
}

/// A digest of a file's text: a fix is offered only on the text it was made for.
pub fn digest(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// Makes and checks the fix of each finding (`key`, the finding, its file), telling `on_offer`
/// each one's offer as soon as it is known; stops when `cancel` is set.
pub fn check_all(
    base: &Base,
    findings: &[(String, Arc<Finding>, PathBuf)],
    cancel: &Arc<AtomicBool>,
    mut on_offer: impl FnMut(&str, Offer),
) {
    let mut others: Option<Vec<(PathBuf, String)>> = None;
    for (i, (key, finding, file)) in findings.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return;
        }
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let others = others.get_or_insert_with(|| workspace_sources(&base.roots));
        let other_texts: Vec<&str> = others.iter().filter(|(p, _)| p != file).map(|(_, t)| t.as_str()).collect();
        let fix = match fix_for(&Target::new(finding, &text, &other_texts)) {
            Ok(fix) => fix,
            Err(why) => {
                on_offer(key, Offer::NotOffered(format!("no quick fix: {why}")));
                continue;
            }
        };
        on_offer(key, Offer::Checking);
        let offer = check_one(base, file, &text, &fix, i, cancel);
        if cancel.load(Ordering::Relaxed) {
            return;
        }
        on_offer(key, offer);
    }
}

fn check_one(base: &Base, file: &Path, text: &str, fix: &QuickFix, n: usize, cancel: &Arc<AtomicBool>) -> Offer {
    let fixed = apply(text, &fix.edits);
    let scratch = base.scratch.join("fix-checks").join(n.to_string());
    let _ = std::fs::remove_dir_all(&scratch);
    let classes = match compile_fixed(&base.javac, file, &fixed, &base.roots, &base.run.class_path, &scratch) {
        Ok(c) => c,
        Err(e) => return Offer::NotOffered(Verdict::DoesNotCompile(e).describe()),
    };
    let mut config = base.run.clone();
    config.capture = true;
    config.limits.cancel = Some(cancel.clone());
    config.class_path = format!("{}:{}", classes.display(), base.run.class_path);
    let after = match run(&config) {
        Ok(r) => r,
        Err(e) => return Offer::NotOffered(format!("not checked: the fixed program did not run ({e})")),
    };
    let verdict = match same(&base.output, &Output::of(&after)) {
        Verdict::Safe => Verdict::Safe,
        differs => {
            // The original run again: when it too prints something else, its output is not
            // deterministic, and only the compile says anything.
            let mut again = base.run.clone();
            again.capture = true;
            again.limits.cancel = Some(cancel.clone());
            match run(&again) {
                Ok(r) if same(&base.output, &Output::of(&r)) != Verdict::Safe => Verdict::Compiles,
                _ => return Offer::NotOffered(differs.describe()),
            }
        }
    };
    Offer::Safe { fix: fix.clone(), made_for: digest(text), verdict }
}

/// The workspace's sources under the run's roots (a fix that removes a field must know nothing
/// else names it); at most a few thousand files.
fn workspace_sources(roots: &[PathBuf]) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for root in roots {
        for f in bloatlens_profiler::javac::java_files(root).unwrap_or_default().into_iter().take(5000) {
            if let Ok(t) = std::fs::read_to_string(&f) {
                out.push((f, t));
            }
        }
    }
    out
}

//! `bloatlens fix FILE [--finding N] [--check] [--apply]`: the quick fix of a finding, as a
//! unified diff. The findings come from profiling FILE (or what follows `--`, as `profile` takes
//! it), or from a JSON report (`--report`). `--check` profiles the fixed program in a scratch copy
//! of FILE's sources and says whether it compiles, prints the same, and what it saved.

use anyhow::{bail, Context};
use bloatlens_profiler::javac;
use bloatlens_profiler::quickfix::measure::{same_finding, Saving};
use bloatlens_profiler::quickfix::{apply, fix_for, unified_diff, Target};
use bloatlens_profiler::report::{Finding, Report};
use clap::Args;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Args)]
pub struct FixArgs {
    /// The Java source file to fix, or a directory of sources (the finding's file is found under it).
    file: PathBuf,
    /// The finding to fix, by its number in the text report. Without it, every shown finding is
    /// listed with the fix offered for it, or why there is none.
    #[arg(long)]
    finding: Option<usize>,
    /// Write the fixed file (by default the diff is printed and nothing is written). With
    /// `--check`, only when the check passes.
    #[arg(long)]
    apply: bool,
    /// Check the fix: profile the fixed program in a scratch copy of FILE's sources, compare its
    /// output with the original's, and say what it saved against what the finding claimed. For a
    /// program that is FILE (or the directory of sources) itself: not with `--report` or a profile
    /// given after `--` (a driver on a class path: make the fix, then `profile --compare`).
    #[arg(long, conflicts_with_all = ["report", "profile"])]
    check: bool,
    /// Take the findings from this JSON report (`bloatlens profile --format json`) instead of
    /// profiling.
    #[arg(long)]
    report: Option<PathBuf>,
    /// The JDK whose class library runs and whose javac compiles (as `profile --jdk`).
    #[arg(long)]
    jdk: Option<PathBuf>,
    /// What to profile, as `bloatlens profile` takes it after its options (default: FILE).
    #[arg(last = true)]
    profile: Vec<OsString>,
}

/// Runs the command; its exit status: 0 when it printed or applied a fix (or listed them), 1 when
/// the finding has no fix or the check found it unsafe.
pub fn fix_command(a: FixArgs) -> anyhow::Result<i32> {
    let given = a.file.canonicalize().with_context(|| format!("reading {}", a.file.display()))?;
    let scratch = tempfile::Builder::new().prefix("bloatlens-fix-").tempdir()?;
    let (before, before_out) = match &a.report {
        Some(path) => (read_report(path)?, Vec::new()),
        None => profile(&a, &a.profile_target(&given), &scratch.path().join("before"))?,
    };
    let findings = before.shown();
    let Some(n) = a.finding else {
        list(&findings, &given);
        return Ok(0);
    };
    let f = n
        .checked_sub(1)
        .and_then(|i| findings.get(i))
        .with_context(|| format!("there is no finding {n} (the report shows {})", findings.len()))?;
    let file = source_of(f, &given).with_context(|| {
        format!("finding {n} is in {}: not {} or not once under it", f.location.short(), given.display())
    })?;
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let others = other_sources(&file);
    let others: Vec<&str> = others.iter().map(String::as_str).collect();
    let fix = match fix_for(&Target::new(f, &text, &others)) {
        Ok(fix) => fix,
        Err(why) => {
            say(&format!("finding {n} ({}): no fix offered: {why}", f.location.short()));
            return Ok(1);
        }
    };
    let fixed = apply(&text, &fix.edits);
    let shown_path = if given.is_dir() {
        a.file.join(file.strip_prefix(&given).unwrap_or(&file)).display().to_string()
    } else {
        a.file.display().to_string()
    };
    print!("{}", unified_diff(&shown_path, &text, &fixed));
    say(&format!("fix: {} [{}]", fix.title, fix.kind));
    if let Some(c) = &fix.caveat {
        say(&format!("note: {c}"));
    }
    if a.check {
        let ok = check(&a, (&given, &file), &fixed, (&before, &before_out), f, scratch.path())?;
        if !ok {
            return Ok(1);
        }
    }
    if a.apply {
        let tmp = file.with_extension("java.bloatlens-fix");
        std::fs::write(&tmp, &fixed).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &file).with_context(|| format!("writing {}", file.display()))?;
        say(&format!("applied to {shown_path}"));
    }
    Ok(0)
}

impl FixArgs {
    /// The arguments `profile` gets for the original: what followed `--`, else FILE.
    fn profile_target(&self, file: &Path) -> Vec<OsString> {
        if self.profile.is_empty() {
            vec![file.as_os_str().to_owned()]
        } else {
            self.profile.clone()
        }
    }
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn read_report(path: &Path) -> anyhow::Result<Report> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a Bloatlens JSON report", path.display()))
}

/// Profiles `target` with this executable's `profile`, the report and the program's output kept in
/// `dir`: the report and what the program printed.
fn profile(a: &FixArgs, target: &[OsString], dir: &Path) -> anyhow::Result<(Report, Vec<u8>)> {
    std::fs::create_dir_all(dir)?;
    let report = dir.join("report.json");
    let output = dir.join("program-output.txt");
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.arg("profile").arg("--format").arg("json").arg("--output").arg(&report).arg("--program-output").arg(&output);
    if let Some(jdk) = &a.jdk {
        cmd.arg("--jdk").arg(jdk);
    }
    let done = cmd.args(target).output().context("running bloatlens profile")?;
    if !report.is_file() {
        let err = String::from_utf8_lossy(&done.stderr);
        bail!("profiling failed: {}", err.trim());
    }
    Ok((read_report(&report)?, std::fs::read(&output).unwrap_or_default()))
}

/// The workspace's other sources: every `.java` file under FILE's source root but FILE.
fn other_sources(file: &Path) -> Vec<String> {
    let root = javac::source_root_of(file);
    let files = javac::java_files(&root).unwrap_or_default();
    files.iter().filter(|p| p.as_path() != file).filter_map(|p| std::fs::read_to_string(p).ok()).collect()
}

/// The source of a finding: `given` itself when its path ends with the package path javac
/// recorded, or the only file under the directory `given` that does.
fn source_of(f: &Finding, given: &Path) -> Option<PathBuf> {
    let rel = f.location.file.as_deref()?;
    if given.is_file() {
        return given.ends_with(rel).then(|| given.to_path_buf());
    }
    let mut found = javac::java_files(given).ok()?.into_iter().filter(|p| p.ends_with(rel));
    let one = found.next()?;
    // Several sources of that package path (several programs under the directory): none is it.
    found.next().is_none().then_some(one)
}

/// Every shown finding with its fix or why there is none.
fn list(findings: &[&Finding], given: &Path) {
    if findings.is_empty() {
        println!("no findings shown");
    }
    for (i, f) in findings.iter().enumerate() {
        let what = f.pattern.map_or("(no pattern)", |p| p.title());
        let offer = match source_of(f, given) {
            None if given.is_file() => "in another file".to_string(),
            None => "its source is not under the directory (or is there several times)".to_string(),
            Some(file) => match std::fs::read_to_string(&file) {
                Ok(text) => {
                    let others = other_sources(&file);
                    let others: Vec<&str> = others.iter().map(String::as_str).collect();
                    match fix_for(&Target::new(f, &text, &others)) {
                        Ok(fix) => format!("fix: {} [{}]", fix.title, fix.kind),
                        Err(why) => format!("no fix: {why}"),
                    }
                }
                Err(e) => format!("{}: {e}", file.display()),
            },
        };
        println!("{}. [{what}] {} — {offer}", i + 1, f.location.short());
    }
}

/// Profiles the fixed program in a scratch copy of FILE's source root and says what it found;
/// whether the fix is safe.
fn check(
    a: &FixArgs,
    (given, file): (&Path, &Path),
    fixed: &str,
    (before, before_out): (&Report, &[u8]),
    f: &Finding,
    scratch: &Path,
) -> anyhow::Result<bool> {
    if !a.profile.is_empty() {
        bail!("--check profiles FILE's own program; it cannot check a profile given after `--`");
    }
    let root = javac::source_root_of(file);
    let copy_root = scratch.join("fixed");
    for source in javac::java_files(&root)? {
        let rel = source.strip_prefix(&root).unwrap_or(&source);
        let to = copy_root.join(rel);
        std::fs::create_dir_all(to.parent().unwrap_or(&copy_root))?;
        std::fs::copy(&source, &to)?;
    }
    let fixed_file = copy_root.join(file.strip_prefix(&root).unwrap_or(file));
    std::fs::write(&fixed_file, fixed)?;
    // The same target as the original's: the file, or the directory of sources.
    let target = if given.is_dir() {
        match given.strip_prefix(&root) {
            Ok(rel) => copy_root.join(rel),
            Err(_) => {
                bail!("--check takes a source file or a directory within its source root, not {}", given.display())
            }
        }
    } else {
        fixed_file
    };
    let (after, after_out) = match profile(a, &[target.into_os_string()], &scratch.join("after")) {
        Ok(r) => r,
        Err(e) => {
            say(&format!("check: not safe: {e:#}"));
            return Ok(false);
        }
    };
    if before_out != after_out || before.run.exit_status != after.run.exit_status {
        say("check: not safe: the fixed program's output differs from the original's");
        return Ok(false);
    }
    let saving = Saving::between(before, &after);
    let gone = if same_finding(f, &after).is_some() { "still reported" } else { "gone" };
    say(&format!(
        "check: compiles and prints the same; saved {:.1}% of the run's estimated HotSpot time (the finding claimed {:.1}%): {}; the finding is {gone}",
        saving.time * 100.0,
        f.share * 100.0,
        saving.describe()
    ));
    Ok(true)
}

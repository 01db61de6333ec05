//! Quick fixes held to their cases and to the corpus.
//!
//! - `case/<name>`: each `fixtures/quickfix/<name>/` is a program (`Main.java`), a finding on it
//!   (`finding.txt`: `pattern`, `line`, `expression` as a report words them), and either the fixed
//!   program the quick fix must make (`expected.java`, byte for byte) or words the reason it refuses
//!   must contain (`refused.txt`). `BLOATLENS_BLESS=1` writes whichever the fix gives (review it).
//! - `case-runs/<name>`: an expected fix compiles and prints what the original prints, under
//!   `java` and on the VM — unless the case has an `unsafe.txt` (why the fix, though offered on
//!   the syntax, changes what the program does): then the check the editor and `bloatlens fix
//!   --check` make (`quickfix::check`) must find its output differs.
//! - `corpus/<program>`: every quick fix offered for a shown finding of a scored-corpus program
//!   compiles, prints what the original prints on the VM and under `java`, and saves at least half
//!   of the share its finding claims (on the VM, in the claim's unit). CI runs a sample of the
//!   programs; `BLOATLENS_QUICKFIX_CORPUS=all` runs every one, and `bloatlens-bench --quick-fixes`
//!   measures them under `java` too.

use bloatlens_profiler::fixes::{self, Unit};
use bloatlens_profiler::patterns::Pattern;
use bloatlens_profiler::quickfix::{apply, fix_for, Subject, Target};
use bloatlens_profiler::report::Settings;
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The corpus programs CI checks: between them, six kinds of fix.
const SAMPLE: [&str; 4] = ["word_frequency", "json_tokenizer", "email_templates", "price_cache"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

fn subject(dir: &Path) -> Result<Subject, Failed> {
    let text = std::fs::read_to_string(dir.join("finding.txt")).map_err(|e| format!("{}: {e}", dir.display()))?;
    let field = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':'))).map(|v| v.trim().to_string())
    };
    let pattern = field("pattern").ok_or("no pattern:")?;
    Ok(Subject {
        pattern: Some(Pattern::parse(&pattern).ok_or_else(|| format!("no pattern {pattern}"))?),
        line: Some(field("line").ok_or("no line:")?.parse().map_err(|_| "line: not a number")?),
        expression: field("expression"),
    })
}

fn case(dir: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(dir.join("Main.java")).map_err(|e| e.to_string())?;
    let made = fix_for(&Target { subject: subject(dir)?, text: &text, others: &[] });
    let (expected, refused) = (dir.join("expected.java"), dir.join("refused.txt"));
    if std::env::var_os("BLOATLENS_BLESS").is_some() {
        let _ = std::fs::remove_file(&expected);
        let _ = std::fs::remove_file(&refused);
        match &made {
            Ok(fix) => std::fs::write(&expected, apply(&text, &fix.edits)),
            Err(why) => std::fs::write(&refused, format!("{why}\n")),
        }
        .map_err(|e| e.to_string())?;
    }
    match (made, std::fs::read_to_string(&expected), std::fs::read_to_string(&refused)) {
        (Ok(fix), Ok(want), _) => {
            let got = apply(&text, &fix.edits);
            if got != want {
                return Err(format!("{} made\n{got}\nexpected\n{want}", fix.title).into());
            }
            Ok(())
        }
        (Err(why), _, Ok(words)) if why.0.contains(words.trim()) => Ok(()),
        (Err(why), _, Ok(words)) => Err(format!("refused: `{why}`, expected words: `{}`", words.trim()).into()),
        (Ok(fix), Err(_), _) => Err(format!("offered `{}` where a refusal is expected", fix.title).into()),
        (Err(why), Err(_), Err(_)) | (Err(why), Ok(_), Err(_)) => {
            Err(format!("refused: `{why}` (no expected.java or refused.txt: bless with BLOATLENS_BLESS=1)").into())
        }
    }
}

/// Compiles `dir`'s `Main.java` (or its `expected.java` as `Main.java`) and runs it under `java`.
fn java_output(dir: &Path, file: &str, work: &Path) -> Result<(PathBuf, Vec<u8>), Failed> {
    let src = work.join(format!("{file}-src"));
    std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    std::fs::copy(dir.join(file), src.join("Main.java")).map_err(|e| e.to_string())?;
    let classes = work.join(format!("{file}-classes"));
    fixes::compile(&src, &classes)?;
    let main = match std::fs::read_to_string(src.join("Main.java"))
        .ok()
        .and_then(|t| bloatlens_profiler::javac::package_of(&t))
    {
        Some(p) => format!("{p}.Main"),
        None => "Main".into(),
    };
    let out = Command::new("java").arg("-cp").arg(&classes).arg(&main).output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("java {file}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok((classes, out.stdout))
}

/// A fix the syntax allows but the program's behaviour does not: compiled by `check::compile_fixed`
/// and run by `check::compare_runs`, as the editor checks a fix, it must not pass.
fn unsafe_case(dir: &Path) -> Result<(), Failed> {
    use bloatlens_profiler::quickfix::check::{compare_runs, compile_fixed, Verdict};
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let original = dir.join("Main.java");
    // The original alone (the directory also holds expected.java, another `Main`).
    let src = work.path().join("src");
    std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    std::fs::copy(&original, src.join("Main.java")).map_err(|e| e.to_string())?;
    fixes::compile(&src, &work.path().join("classes"))?;
    let fixed = std::fs::read_to_string(dir.join("expected.java")).map_err(|e| e.to_string())?;
    let javac = bloatlens_profiler::javac::find_javac(None).map_err(|e| e.to_string())?;
    let classes = work.path().join("classes").display().to_string();
    let fixed_classes = compile_fixed(&javac, &original, &fixed, &[], &classes, &work.path().join("scratch"))?;
    let run = fixes::run_config(&work.path().join("classes"), dir);
    let (verdict, _, _) = compare_runs(&run, &fixed_classes)?;
    match verdict {
        Verdict::OutputDiffers(_) => Ok(()),
        other => Err(format!("the check let an unsafe fix through: {other:?}").into()),
    }
}

fn case_runs(dir: &Path) -> Result<(), Failed> {
    if dir.join("unsafe.txt").is_file() {
        return unsafe_case(dir);
    }
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (before_classes, before) = java_output(dir, "Main.java", work.path())?;
    let (after_classes, after) = java_output(dir, "expected.java", work.path())?;
    if before != after {
        return Err(format!(
            "under java the fix prints something else\n--- original\n{}--- fixed\n{}",
            String::from_utf8_lossy(&before),
            String::from_utf8_lossy(&after)
        )
        .into());
    }
    let main =
        bloatlens_profiler::javac::package_of(&std::fs::read_to_string(dir.join("Main.java")).unwrap_or_default())
            .map(|p| format!("{p}.Main"))
            .unwrap_or_else(|| "Main".into());
    for (classes, java) in [(&before_classes, &before), (&after_classes, &after)] {
        let mut run = fixes::run_config(classes, dir);
        run.main_class = main.clone();
        let vm = bloatlens_profiler::run::run(&run).map_err(|e| e.to_string())?;
        if &vm.stdout != java {
            return Err(
                format!("on the VM {} prints\n{}", classes.display(), String::from_utf8_lossy(&vm.stdout)).into()
            );
        }
    }
    Ok(())
}

fn corpus(program: &Path) -> Result<(), Failed> {
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let settings = Settings::default();
    let (made, report) = fixes::quick_fixes(program, &work.path().join("fixes"), &settings)?;
    let classes = work.path().join("fixes/classes").join(program.file_name().unwrap_or_default());
    let before = fixes::vm_totals(&fixes::run_config(&classes, program), &settings)?;
    let java_before =
        Command::new("java").arg("-cp").arg(&classes).arg("Main").output().map_err(|e| e.to_string())?.stdout;
    for fix in &made {
        let finding = fixes::finding_of(&report, fix).ok_or_else(|| format!("{}: its finding is gone", fix.name))?;
        let fixed = work.path().join("fixed").join(&fix.name);
        fixes::compile(&fix.dir, &fixed).map_err(|e| format!("{}: does not compile: {e}", fix.name))?;
        let after = fixes::vm_totals(&fixes::run_config(&fixed, &fix.dir), &settings)?;
        if after.stdout != before.stdout {
            return Err(format!("{}: prints something else on the VM", fix.name).into());
        }
        let java = Command::new("java").arg("-cp").arg(&fixed).arg("Main").output().map_err(|e| e.to_string())?;
        if java.stdout != java_before || java_before != before.stdout {
            return Err(format!("{}: prints something else under java", fix.name).into());
        }
        let measured = fixes::measured_share(Unit::of(finding), &before, &after);
        println!("{}: claims {:.4}, saves {measured:.4} ({})", fix.name, finding.share, fix.change);
        if measured < 0.5 * finding.share {
            return Err(
                format!("{}: saves {measured:.4}, under half the {:.4} claimed", fix.name, finding.share).into()
            );
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let root = fixtures().join("quickfix");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("fixtures/quickfix")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("finding.txt").is_file())
        .collect();
    cases.sort();
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut trials: Vec<Trial> = Vec::new();
    for c in &cases {
        let dir = c.clone();
        trials.push(Trial::test(format!("case/{}", name(c)), move || case(&dir)));
        if c.join("expected.java").is_file() {
            let dir = c.clone();
            trials.push(Trial::test(format!("case-runs/{}", name(c)), move || case_runs(&dir)));
        }
    }
    let all = std::env::var("BLOATLENS_QUICKFIX_CORPUS").is_ok_and(|v| v == "all");
    let corpus_root = fixtures().join("bloat/corpus");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&corpus_root)
        .expect("fixtures/bloat/corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| all || SAMPLE.iter().any(|s| p.ends_with(s)))
        .collect();
    programs.sort();
    for p in programs {
        trials.push(Trial::test(format!("corpus/{}", name(&p)), move || corpus(&p)));
    }
    libtest_mimic::run(&args, trials).exit();
}

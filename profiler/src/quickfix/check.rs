//! Whether an offered fix is safe for this program: the fixed file compiles (in a scratch
//! directory, never in the workspace), and the fixed program's run under the VM prints what the
//! original's printed and ends the same way.

use crate::javac::{self, CompileError, Job};
use crate::run::{run, RunConfig, RunResult};
use std::path::{Path, PathBuf};

/// What checking a fix found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It compiles and the program's output and exit are the same.
    Safe,
    /// It compiles; the program could not be compared (no entry point given).
    Compiles,
    /// javac refused the fixed file: its first error.
    DoesNotCompile(String),
    /// The fixed program printed something else, or ended otherwise: where they first differ.
    OutputDiffers(String),
}

impl Verdict {
    /// The verdict in a sentence, for the CLI and the hover.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Safe => "checked: the fixed file compiles and the program prints the same".into(),
            Verdict::Compiles => "checked: the fixed file compiles (the output was not compared)".into(),
            Verdict::DoesNotCompile(e) => format!("not safe: the fixed file does not compile ({e})"),
            Verdict::OutputDiffers(d) => format!("not safe: the fixed program's output differs ({d})"),
        }
    }
}

/// Compiles `fixed` (the new text of `file`, a source under one of `roots`) with the other
/// sources of `roots` into `scratch/classes`, writing the file to `scratch/src`. Returns the
/// classes directory, to be put before the program's own on its class path.
pub fn compile_fixed(
    javac_path: &Path,
    file: &Path,
    fixed: &str,
    roots: &[PathBuf],
    class_path: &str,
    scratch: &Path,
) -> Result<PathBuf, String> {
    let root = roots.iter().find(|r| file.starts_with(r));
    let relative = match root {
        Some(r) => file.strip_prefix(r).map(Path::to_path_buf).unwrap_or_else(|_| file.to_path_buf()),
        None => {
            let package = javac::package_of(fixed).unwrap_or_default().replace('.', "/");
            Path::new(&package).join(file.file_name().unwrap_or_default())
        }
    };
    let src = scratch.join("src");
    let out = scratch.join("classes");
    let copy = src.join(&relative);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(copy.parent().unwrap_or(&src)).map_err(|e| format!("{}: {e}", src.display()))?;
    std::fs::write(&copy, fixed).map_err(|e| format!("{}: {e}", copy.display()))?;
    let mut source_path = vec![src.clone()];
    source_path.extend(roots.iter().cloned());
    if root.is_none() {
        source_path.extend(file.parent().map(Path::to_path_buf));
    }
    let job = Job { sources: &[copy], source_path: &source_path, class_path, out: &out, parameters: false };
    match javac::compile(javac_path, &job) {
        Ok(()) => Ok(out),
        Err(CompileError::Failed { diagnostics, output }) => Err(diagnostics
            .first()
            .map(|d| format!("line {}: {}", d.line, d.message))
            .unwrap_or_else(|| output.lines().next().unwrap_or("javac failed").to_string())),
        Err(e) => Err(e.to_string()),
    }
}

/// What a run printed and how it ended: what a fix must keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The exit status the command line would give ([`RunResult::status`]).
    pub status: i32,
}

impl Output {
    pub fn of(r: &RunResult) -> Output {
        Output { stdout: r.stdout.clone(), stderr: r.stderr.clone(), status: r.status() }
    }
}

/// Runs `original` and the same program with `fixed_classes` first on its class path, output
/// captured, and compares them.
pub fn compare_runs(original: &RunConfig, fixed_classes: &Path) -> Result<(Verdict, RunResult, RunResult), String> {
    let mut before = original.clone();
    before.capture = true;
    let mut after = before.clone();
    after.class_path = if before.class_path.is_empty() {
        fixed_classes.display().to_string()
    } else {
        format!("{}:{}", fixed_classes.display(), before.class_path)
    };
    let a = run(&before).map_err(|e| format!("the original did not run: {e}"))?;
    let b = run(&after).map_err(|e| format!("the fixed program did not run: {e}"))?;
    Ok((same(&Output::of(&a), &Output::of(&b)), a, b))
}

/// `Safe` when the two runs printed the same and ended the same way.
pub fn same(a: &Output, b: &Output) -> Verdict {
    if a.status != b.status {
        return Verdict::OutputDiffers(format!("exit status {} before, {} after", a.status, b.status));
    }
    for (what, x, y) in [("stdout", &a.stdout, &b.stdout), ("stderr", &a.stderr, &b.stderr)] {
        if x != y {
            let x = String::from_utf8_lossy(x);
            let y = String::from_utf8_lossy(y);
            let line =
                x.lines().zip(y.lines()).position(|(p, q)| p != q).unwrap_or(x.lines().count().min(y.lines().count()));
            return Verdict::OutputDiffers(format!("{what} line {}", line + 1));
        }
    }
    Verdict::Safe
}

//! Compiling the user's sources with the user's own `javac` (`-g`, so that lines and locals are
//! in the class files), and reading its error messages back as structured diagnostics.

use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: PathBuf,
    pub line: u32,
    /// 1-based column of the caret javac draws under the source line, when it draws one.
    pub column: Option<u32>,
    pub severity: Severity,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("javac not found (looked in {0}); install a JDK or set the JDK path")]
    NoJavac(String),
    #[error("could not run javac: {0}")]
    Io(#[from] std::io::Error),
    #[error("javac failed:\n{output}")]
    Failed { output: String, diagnostics: Vec<Diagnostic> },
}

/// `javac` of the JDK at `jdk_home` (only there, when given), else of `JAVA_HOME`, else the one
/// on `PATH`.
pub fn find_javac(jdk_home: Option<&Path>) -> Result<PathBuf, CompileError> {
    if let Some(home) = jdk_home {
        let javac = home.join("bin/javac");
        return if javac.is_file() { Ok(javac) } else { Err(CompileError::NoJavac(javac.display().to_string())) };
    }
    let mut tried = Vec::new();
    if let Some(home) = std::env::var_os("JAVA_HOME").map(PathBuf::from) {
        let javac = home.join("bin/javac");
        if javac.is_file() {
            return Ok(javac);
        }
        tried.push(format!("{} (from JAVA_HOME)", javac.display()));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let javac = dir.join("javac");
            if javac.is_file() {
                return Ok(javac);
            }
        }
    }
    tried.push("PATH".into());
    Err(CompileError::NoJavac(tried.join(", ")))
}

/// What to compile: `sources` into `out` with `-g`, against `class_path` (may be empty); javac
/// finds the other sources they need under `source_path`.
pub struct Job<'a> {
    pub sources: &'a [PathBuf],
    pub source_path: &'a [PathBuf],
    pub class_path: &'a str,
    pub out: &'a Path,
    /// `-parameters`: parameter names kept for reflection, as the project's build asks.
    pub parameters: bool,
}

/// A source root's module declaration.
pub const MODULE_DESCRIPTOR: &str = "module-info.java";

impl Job<'_> {
    /// javac's arguments for this job (the warm compiler of the language server takes the same).
    ///
    /// Sources are compiled on the class path, as one program, whether or not a root declares a
    /// module: several modules (a reactor's) cannot be compiled in one run, and the tests of a
    /// module would have to be patched into it. A root with a `module-info.java` is therefore not
    /// given as the source path (javac would compile in that module): every source of the roots is
    /// named instead, the descriptors left out; their `provides` become service files
    /// ([`Job::write_services`]).
    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> =
            vec!["-g".into(), "-encoding".into(), "UTF-8".into(), "-d".into(), self.out.display().to_string()];
        if self.parameters {
            args.push("-parameters".into());
        }
        let modular = self.modular();
        if modular {
            args.extend(["-sourcepath".into(), String::new()]);
        } else if !self.source_path.is_empty() {
            let joined = self.source_path.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":");
            args.extend(["-sourcepath".into(), joined]);
        }
        if !self.class_path.is_empty() {
            args.extend(["-cp".into(), self.class_path.to_string()]);
        }
        let mut sources: Vec<PathBuf> = self.sources.to_vec();
        if modular {
            for root in self.source_path {
                sources.extend(java_files(root).unwrap_or_default());
            }
            sources.sort();
            sources.dedup();
        }
        let named = sources.iter().filter(|s| s.file_name().is_none_or(|n| n != MODULE_DESCRIPTOR));
        args.extend(named.map(|s| s.display().to_string()));
        args
    }

    /// Whether a source root declares a module.
    fn modular(&self) -> bool {
        self.source_path.iter().any(|r| r.join(MODULE_DESCRIPTOR).is_file())
    }

    /// The services the roots' module declarations `provides`, as `META-INF/services/` files in
    /// the output (the class path's way of saying them), after any the sources' own resources
    /// declare. Called after a successful compile.
    pub fn write_services(&self) -> std::io::Result<()> {
        for root in self.source_path {
            let Ok(text) = std::fs::read_to_string(root.join(MODULE_DESCRIPTOR)) else { continue };
            for (service, providers) in provided_services(&text) {
                let dir = self.out.join("META-INF/services");
                std::fs::create_dir_all(&dir)?;
                let lines: String = providers.iter().map(|p| format!("{p}\n")).collect();
                std::fs::write(dir.join(service), lines)?;
            }
        }
        Ok(())
    }

    /// The outcome of a javac run that exited with `success` and printed `output`.
    pub fn outcome(success: bool, output: String) -> Result<(), CompileError> {
        if success {
            Ok(())
        } else {
            Err(CompileError::Failed { diagnostics: parse_diagnostics(&output), output })
        }
    }
}

/// Runs `javac` on the job.
pub fn compile(javac: &Path, job: &Job) -> Result<(), CompileError> {
    std::fs::create_dir_all(job.out)?;
    let output = Command::new(javac).args(job.args()).output()?;
    let text = String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout);
    Job::outcome(output.status.success(), text)?;
    Ok(job.write_services()?)
}

/// A module declaration's `provides S with P1, P2;` directives: (S, [P1, P2]), names as written
/// (binary names but for nested classes, which are rare among providers).
pub fn provided_services(module_info: &str) -> Vec<(String, Vec<String>)> {
    // Comments out, then the directive's tokens.
    let mut text = String::with_capacity(module_info.len());
    let mut rest = module_info;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
            text.push(' ');
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            text.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    let mut out = Vec::new();
    for directive in text.split([';', '{']) {
        let mut words = directive.split_whitespace();
        if words.next() != Some("provides") {
            continue;
        }
        let Some(service) = words.next() else { continue };
        if words.next() != Some("with") {
            continue;
        }
        let providers: String = words.collect();
        let providers: Vec<String> = providers.split(',').filter(|p| !p.is_empty()).map(str::to_string).collect();
        out.push((service.to_string(), providers));
    }
    out
}

/// javac's `File.java:12: error: message` lines, with the caret line's column and the message's
/// continuation lines.
pub fn parse_diagnostics(text: &str) -> Vec<Diagnostic> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(d) = parse_head(lines[i]) {
            let mut d = d;
            // Following lines: the source line, the caret, and more message text (e.g. `symbol:`).
            let mut j = i + 1;
            let mut source_seen = false;
            while j < lines.len() && parse_head(lines[j]).is_none() {
                let l = lines[j];
                if l.trim_start().starts_with('^') && d.column.is_none() {
                    d.column = Some(l.find('^').map(|c| c as u32 + 1).unwrap_or(1));
                } else if !source_seen && d.column.is_none() {
                    source_seen = true;
                } else if l.trim_start().starts_with("symbol:") || l.trim_start().starts_with("location:") {
                    d.message.push('\n');
                    d.message.push_str(l.trim());
                } else if l.ends_with(" error")
                    || l.ends_with(" errors")
                    || l.ends_with(" warning")
                    || l.ends_with(" warnings")
                {
                    break;
                }
                j += 1;
            }
            out.push(d);
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

fn parse_head(line: &str) -> Option<Diagnostic> {
    for (tag, severity) in [(": error: ", Severity::Error), (": warning: ", Severity::Warning)] {
        if let Some(at) = line.find(tag) {
            let (place, message) = (&line[..at], &line[at + tag.len()..]);
            let (file, line_no) = place.rsplit_once(':')?;
            let line_no: u32 = line_no.parse().ok()?;
            return Some(Diagnostic {
                file: PathBuf::from(file),
                line: line_no,
                column: None,
                severity,
                message: message.to_string(),
            });
        }
    }
    None
}

/// The binary name of the class a source file declares as its top level: its package plus its
/// file name (`src/com/acme/Main.java` with `package com.acme;` → `com.acme.Main`).
pub fn class_name_of(source: &Path) -> std::io::Result<String> {
    let text = std::fs::read_to_string(source)?;
    let stem = source.file_stem().and_then(|s| s.to_str()).unwrap_or("Main").to_string();
    Ok(match package_of(&text) {
        Some(p) => format!("{p}.{stem}"),
        None => stem,
    })
}

/// The package a source declares, skipping comments before it.
pub fn package_of(text: &str) -> Option<String> {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map(|x| x.1).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map(|x| x.1).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix("package") {
            let name: String = r.split(';').next()?.chars().filter(|c| !c.is_whitespace()).collect();
            return (!name.is_empty()).then_some(name);
        } else {
            return None;
        }
    }
}

/// The source root of a file: its directory minus the package's directories, when they match.
/// From any working directory: `App.java` inside `com/acme/util` has the root three levels up.
pub fn source_root_of(source: &Path) -> PathBuf {
    let source =
        source.canonicalize().or_else(|_| std::path::absolute(source)).unwrap_or_else(|_| source.to_path_buf());
    let source = source.as_path();
    let dir = source.parent().map(Path::to_path_buf).unwrap_or_default();
    let package = std::fs::read_to_string(source).ok().and_then(|t| package_of(&t));
    match package {
        Some(p) => {
            let mut root = dir.clone();
            for part in p.split('.').rev() {
                if root.file_name().and_then(|n| n.to_str()) == Some(part) {
                    root.pop();
                } else {
                    return dir;
                }
            }
            root
        }
        None => dir,
    }
}

/// Every `.java` file under `dir` (its subdirectories too), sorted.
pub fn java_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "java") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_javac_errors_with_columns_and_symbols() {
        let text = "src/Main.java:3: error: cannot find symbol\n        foo(1);\n        ^\n  symbol:   method foo(int)\n  location: class Main\nsrc/Main.java:7: error: ';' expected\n        int x = 1\n                 ^\n2 errors\n";
        let d = parse_diagnostics(text);
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].line, d[0].column), (3, Some(9)));
        assert!(d[0].message.starts_with("cannot find symbol\nsymbol:   method foo(int)"), "{}", d[0].message);
        assert_eq!((d[1].line, d[1].column, d[1].message.as_str()), (7, Some(18), "';' expected"));
    }

    #[test]
    fn a_module_declarations_provided_services_are_read() {
        let text = "/* a module */\nmodule com.acme { // exports\n  exports com.acme;\n  provides com.acme.Spi with\n    com.acme.impl.A, // first\n    com.acme.impl.B;\n  uses com.acme.Other;\n  provides java.sql.Driver with com.acme.Db;\n}\n";
        assert_eq!(
            provided_services(text),
            [
                ("com.acme.Spi".to_string(), vec!["com.acme.impl.A".to_string(), "com.acme.impl.B".to_string()]),
                ("java.sql.Driver".to_string(), vec!["com.acme.Db".to_string()]),
            ]
        );
    }

    #[test]
    fn modules_compile_on_the_class_path_with_their_services() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let files = [
            (a.join("module-info.java"), "module a { exports a; provides a.Spi with a.Impl; }"),
            (a.join("a/Spi.java"), "package a; public interface Spi { String hi(); }"),
            (
                a.join("a/Impl.java"),
                "package a; public class Impl implements Spi { public String hi() { return \"hi\"; } }",
            ),
            (b.join("module-info.java"), "module b { requires a; }"),
            (b.join("b/Main.java"), "package b; public class Main { a.Spi s; }"),
        ];
        for (path, text) in &files {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let out = dir.path().join("out");
        let roots = [a, b.clone()];
        let job = Job {
            sources: &[b.join("b/Main.java")],
            source_path: &roots,
            class_path: "",
            out: &out,
            parameters: false,
        };
        compile(&find_javac(None).unwrap(), &job).unwrap();
        assert!(out.join("a/Impl.class").is_file() && out.join("b/Main.class").is_file());
        assert!(!out.join("module-info.class").exists(), "no module compiled");
        assert_eq!(std::fs::read_to_string(out.join("META-INF/services/a.Spi")).unwrap(), "a.Impl\n");
    }

    #[test]
    fn finds_the_package_after_comments() {
        assert_eq!(package_of("// x\n/* y */ package com.acme ;\nclass A {}").as_deref(), Some("com.acme"));
        assert_eq!(package_of("import java.util.*; class A {}"), None);
    }
}

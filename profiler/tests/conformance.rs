//! VM conformance: every program in `fixtures/conformance/<name>/` is compiled with the machine's
//! `javac`, run under HotSpot (`java`) and under the Bloatlens VM, and must print the same stdout,
//! the same first line of stderr, and exit with the same status. The expected output is produced
//! by `java` in the test itself, so it can never go stale.
//!
//! The suite runs twice: on the default JDK (17), and on JDK 25 (`BLOATLENS_JDK25`, else the Temurin 25
//! these machines carry) compiled with that JDK's own `javac`; the JDK 25 run is skipped, loudly, only
//! when that JDK is absent. `jdk25-known-gaps.txt` lists programs that do not pass on JDK 25 yet.
//!
//! A program may carry `args.txt` (one argument per line) and `classpath.txt` (jars it compiles
//! and runs against, one per line: the libraries `.ci/run` installs from Debian's packages).

use bloatlens_profiler::run::{run, RunConfig};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/conformance")
}

struct Expected {
    stdout: String,
    stderr_first: String,
    status: i32,
}

/// The JDK a trial compiles with, compares against, and runs the VM on.
#[derive(Clone)]
struct Jdk {
    javac: PathBuf,
    java: PathBuf,
    /// None: the VM's own default (JAVA_HOME or the `java` on PATH).
    home: Option<PathBuf>,
}

impl Jdk {
    fn default_jdk() -> Jdk {
        Jdk { javac: "javac".into(), java: "java".into(), home: None }
    }
    fn at(home: &Path) -> Jdk {
        Jdk { javac: home.join("bin/javac"), java: home.join("bin/java"), home: Some(home.into()) }
    }
}

fn compile(jdk: &Jdk, src: &Path, out: &Path, jars: &[String]) -> Result<(), Failed> {
    let sources: Vec<PathBuf> = std::fs::read_dir(src)
        .map_err(|e| format!("{}: {e}", src.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    let mut javac = Command::new(&jdk.javac);
    if !jars.is_empty() {
        javac.arg("-cp").arg(jars.join(":"));
    }
    let output = javac
        .args(["-g", "-nowarn", "-d"])
        .arg(out)
        .args(&sources)
        .output()
        .map_err(|e| format!("cannot run javac: {e}"))?;
    if !output.status.success() {
        return Err(format!("javac failed:\n{}", String::from_utf8_lossy(&output.stderr)).into());
    }
    Ok(())
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

fn hotspot(jdk: &Jdk, class_path: &str, args: &[String]) -> Result<Expected, Failed> {
    let out = Command::new(&jdk.java)
        .args(["-Xshare:auto", "-XX:+UseSerialGC", "-cp"])
        .arg(class_path)
        .arg("Main")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run java: {e}"))?;
    Ok(Expected {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr_first: first_line(&String::from_utf8_lossy(&out.stderr)),
        status: out.status.code().unwrap_or(-1),
    })
}

fn check(jdk: &Jdk, dir: &Path) -> Result<(), Failed> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let classes = tmp.path().join("classes");
    let lines = |name: &str| -> Vec<String> {
        std::fs::read_to_string(dir.join(name)).map(|s| s.lines().map(str::to_string).collect()).unwrap_or_default()
    };
    let jars = lines("classpath.txt");
    if let Some(missing) = jars.iter().find(|j| !Path::new(j).exists()) {
        return Err(
            format!("library {missing} is missing: .ci/run installs it (see scripts/install-libraries.sh)").into()
        );
    }
    compile(jdk, dir, &classes, &jars)?;
    let args = lines("args.txt");
    let class_path = std::iter::once(classes.display().to_string()).chain(jars).collect::<Vec<_>>().join(":");
    let expected = hotspot(jdk, &class_path, &args)?;
    let mut config = RunConfig::new(class_path, "Main");
    config.jdk = jdk.home.clone();
    config.args = args;
    config.capture = true;
    let result = run(&config).map_err(|e| format!("VM failed to start: {e}"))?;
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    let mut problems = Vec::new();
    if stdout != expected.stdout {
        let at = stdout.lines().zip(expected.stdout.lines()).position(|(a, b)| a != b);
        let (ours, theirs) = match at {
            Some(i) => (stdout.lines().nth(i).unwrap_or(""), expected.stdout.lines().nth(i).unwrap_or("")),
            None => ("<length differs>", ""),
        };
        problems.push(format!(
            "stdout differs at line {}:\n  java:      {theirs}\n  bloatlens: {ours}\n  (java printed {} lines, bloatlens {})",
            at.map(|i| i + 1).unwrap_or(0),
            expected.stdout.lines().count(),
            stdout.lines().count()
        ));
    }
    if first_line(&stderr) != expected.stderr_first {
        problems.push(format!(
            "stderr first line:\n  java:      {}\n  bloatlens: {}",
            expected.stderr_first,
            first_line(&stderr)
        ));
    }
    if result.status() != expected.status {
        problems.push(format!(
            "exit status: java {} bloatlens {} ({:?})",
            expected.status,
            result.status(),
            result.outcome
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("fixtures/conformance exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Main.java").is_file())
        .collect();
    dirs.sort();
    let mut trials: Vec<Trial> = dirs
        .iter()
        .map(|d| {
            let (name, d) = (d.file_name().unwrap().to_string_lossy().into_owned(), d.clone());
            Trial::test(name, move || check(&Jdk::default_jdk(), &d))
        })
        .collect();
    let jdk25 = std::env::var_os("BLOATLENS_JDK25")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/jvm/temurin-25-jdk-amd64"));
    if jdk25.join("lib/modules").is_file() {
        let gaps = std::fs::read_to_string(fixtures().join("jdk25-known-gaps.txt")).unwrap_or_default();
        let known: Vec<&str> =
            gaps.lines().filter(|l| !l.starts_with('#')).filter_map(|l| l.split(':').next()).collect();
        for d in &dirs {
            let name = d.file_name().unwrap().to_string_lossy().into_owned();
            let (jdk, d2) = (Jdk::at(&jdk25), d.clone());
            let ignored = known.contains(&name.as_str());
            trials.push(Trial::test(format!("jdk25/{name}"), move || check(&jdk, &d2)).with_ignored_flag(ignored));
        }
    } else {
        eprintln!(
            "\n*** JDK 25 not found at {} (set BLOATLENS_JDK25): the JDK 25 conformance run is SKIPPED ***\n",
            jdk25.display()
        );
        trials.push(Trial::test("jdk25 (JDK 25 not installed: skipped)", || Ok(())).with_ignored_flag(true));
    }
    libtest_mimic::run(&args, trials).exit();
}

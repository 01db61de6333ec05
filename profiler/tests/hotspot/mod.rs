//! Comparing the Bloatlens VM with HotSpot on one Java program: compile it with a JDK's `javac`,
//! run it under that JDK's `java` and under the VM, and compare what they print. Shared by the
//! conformance suite (small programs), the real-library suite (programs driving libraries) and the
//! thread stress test (the collector under threads); each uses part of it.
#![allow(dead_code)]

#[path = "../support/javac.rs"]
mod javac;

use bloatlens_profiler::profile::{profile, Analyses, ProfileConfig};
use bloatlens_profiler::report::Settings;
use bloatlens_profiler::run::{run, RunConfig};
use libtest_mimic::{Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The JDK a trial compiles with, compares against, and runs the VM on.
#[derive(Clone)]
pub struct Jdk {
    pub javac: PathBuf,
    pub java: PathBuf,
    /// None: the VM's own default (JAVA_HOME or the `java` on PATH).
    pub home: Option<PathBuf>,
}

impl Jdk {
    pub fn default_jdk() -> Jdk {
        Jdk { javac: "javac".into(), java: "java".into(), home: None }
    }
    pub fn at(home: &Path) -> Jdk {
        Jdk { javac: home.join("bin/javac"), java: home.join("bin/java"), home: Some(home.into()) }
    }
    /// JDK 25 (`BLOATLENS_JDK25`, else the Temurin 25 these machines carry), if installed.
    pub fn jdk25() -> Result<Jdk, PathBuf> {
        let home = std::env::var_os("BLOATLENS_JDK25")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/usr/lib/jvm/temurin-25-jdk-amd64"));
        if home.join("lib/modules").is_file() {
            Ok(Jdk::at(&home))
        } else {
            Err(home)
        }
    }
}

/// One program to compare: its sources, what it runs against, its arguments.
pub struct Program {
    pub dir: PathBuf,
    /// Jars and directories it compiles and runs against (after its own classes).
    pub class_path: Vec<String>,
    pub args: Vec<String>,
    /// Compare the first line of stderr too (the conformance programs' uncaught exceptions);
    /// libraries may log to stderr with timestamps, so their suite compares stdout and status.
    pub compare_stderr: bool,
    pub max_seconds: u64,
    /// Also profile it with every analysis on: profiling must not change what the program prints
    /// or its exit status.
    pub profiled: bool,
    /// Collect after this many bytes of allocation (a stress of the collector's roots).
    pub gc_interval_bytes: Option<u64>,
}

/// The lines of `dir/name` (none when the file is absent).
pub fn lines(dir: &Path, name: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(name)).map(|s| s.lines().map(str::to_string).collect()).unwrap_or_default()
}

struct Printed {
    stdout: String,
    stderr_first: String,
    status: i32,
}

/// The `.java` files in `dir` and below it (a program's packages are its subdirectories).
fn java_sources(dir: &Path) -> Result<Vec<PathBuf>, Failed> {
    let mut sources = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            sources.extend(java_sources(&path)?);
        } else if path.extension().is_some_and(|x| x == "java") {
            sources.push(path);
        }
    }
    Ok(sources)
}

/// Compiles a program's `.java` files, with the suite's shared sources its `shared.txt` names
/// (files in the suite's `shared/` directory, one per line).
fn compile(jdk: &Jdk, src: &Path, out: &Path, class_path: &[String]) -> Result<(), Failed> {
    let mut sources = java_sources(src)?;
    let shared = src.parent().unwrap_or(src).join("shared");
    sources.extend(lines(src, "shared.txt").iter().map(|l| shared.join(l.trim())));
    let mut args = Vec::new();
    if !class_path.is_empty() {
        args.extend(["-cp".to_string(), class_path.join(":")]);
    }
    args.extend(["-g", "-nowarn", "-d"].map(String::from));
    args.push(out.display().to_string());
    args.extend(sources.iter().map(|s| s.display().to_string()));
    let compiled = javac::javac(javac::Tools { javac: &jdk.javac, java: &jdk.java }, &args)?;
    if compiled.status != 0 {
        return Err(format!("javac failed:\n{}", compiled.messages).into());
    }
    Ok(())
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// What a program runs with besides its class path and arguments: `-D` properties
/// (`properties.txt`, `key=value` lines), assertion options (`assertions.txt`, one per line:
/// `-ea:com.acme...`) and a Java agent built from its classes (`agent.txt`).
#[derive(Default)]
struct Launch {
    properties: Vec<(String, String)>,
    assertions: Vec<String>,
    /// `-javaagent:JAR[=options]`.
    java_agent: Option<String>,
}

/// A program's agent jar, when it has an `agent.txt`: the manifest's lines (`Premain-Class: …`,
/// `Agent-Class: …`, `Can-Retransform-Classes: true` …) and, in a line `javaagent: OPTIONS`, that
/// the JVM starts with `-javaagent:agent.jar=OPTIONS` (without it the program attaches the jar
/// itself). The jar holds all the program's classes; its path is the property `agent.jar`.
fn agent_jar(jdk: &Jdk, src: &Path, classes: &Path, out: &Path) -> Result<Option<(PathBuf, Option<String>)>, Failed> {
    let spec = lines(src, "agent.txt");
    if spec.is_empty() {
        return Ok(None);
    }
    let (options, manifest): (Vec<&String>, Vec<&String>) = spec.iter().partition(|l| l.starts_with("javaagent:"));
    let manifest_file = out.join("agent-manifest.txt");
    let text: String = manifest.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&manifest_file, text).map_err(|e| e.to_string())?;
    let jar_tool =
        jdk.javac.parent().filter(|p| !p.as_os_str().is_empty()).map_or(PathBuf::from("jar"), |p| p.join("jar"));
    let jar = out.join("agent.jar");
    let made = Command::new(jar_tool)
        .arg("cfm")
        .arg(&jar)
        .arg(&manifest_file)
        .arg("-C")
        .arg(classes)
        .arg(".")
        .output()
        .map_err(|e| format!("cannot run jar: {e}"))?;
    if !made.status.success() {
        return Err(format!("jar failed:\n{}", String::from_utf8_lossy(&made.stderr)).into());
    }
    let options = options.first().map(|l| l["javaagent:".len()..].trim().to_string());
    Ok(Some((jar, options)))
}

fn hotspot(jdk: &Jdk, class_path: &str, args: &[String], launch: &Launch) -> Result<Printed, Failed> {
    let mut java = Command::new(&jdk.java);
    // CDS warns on stderr when an agent appends to the boot class path: agents run without it.
    java.arg(if launch.java_agent.is_some() { "-Xshare:off" } else { "-Xshare:auto" });
    java.arg("-XX:+UseSerialGC");
    if let Some(agent) = &launch.java_agent {
        java.arg(format!("-javaagent:{agent}"));
    }
    for (k, v) in &launch.properties {
        java.arg(format!("-D{k}={v}"));
    }
    java.args(&launch.assertions);
    let out =
        java.arg("-cp").arg(class_path).arg("Main").args(args).output().map_err(|e| format!("cannot run java: {e}"))?;
    Ok(Printed {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr_first: first_line(&String::from_utf8_lossy(&out.stderr)),
        status: out.status.code().unwrap_or(-1),
    })
}

/// A program compiled with a JDK's `javac`, and what that JDK's HotSpot printed running it.
pub struct Compiled {
    /// Holds the compiled classes for as long as the program is run.
    _classes: tempfile::TempDir,
    expected: Printed,
    /// The VM's run of it, as HotSpot ran it (stdout and stderr captured).
    pub config: RunConfig,
}

impl Compiled {
    /// What HotSpot printed on stdout.
    pub fn expected_stdout(&self) -> &str {
        &self.expected.stdout
    }

    /// HotSpot's exit status.
    pub fn expected_status(&self) -> i32 {
        self.expected.status
    }
}

/// Compiles `p` with `jdk` and runs it under HotSpot.
pub fn compile_and_run_hotspot(jdk: &Jdk, p: &Program) -> Result<Compiled, Failed> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let classes = tmp.path().join("classes");
    compile(jdk, &p.dir, &classes, &p.class_path)?;
    let class_path = std::iter::once(classes.display().to_string())
        .chain(p.class_path.iter().cloned())
        .collect::<Vec<_>>()
        .join(":");
    let mut launch = Launch::default();
    for line in lines(&p.dir, "properties.txt") {
        let (k, v) = line.split_once('=').unwrap_or((line.as_str(), ""));
        launch.properties.push((k.to_string(), v.to_string()));
    }
    launch.assertions = lines(&p.dir, "assertions.txt");
    if let Some((jar, options)) = agent_jar(jdk, &p.dir, &classes, tmp.path())? {
        let jar = jar.display().to_string();
        launch.properties.push(("agent.jar".into(), jar.clone()));
        launch.java_agent = options.map(|o| if o.is_empty() { jar.clone() } else { format!("{jar}={o}") });
    }
    let expected = hotspot(jdk, &class_path, &p.args, &launch)?;
    let mut config = RunConfig::new(class_path, "Main");
    config.properties = launch.properties;
    for option in &launch.assertions {
        config.assertions.add(option).map_err(|e| e.to_string())?;
    }
    config.java_agents = launch.java_agent.into_iter().collect();
    config.jdk = jdk.home.clone();
    config.args = p.args.clone();
    config.capture = true;
    config.limits.max_wall = std::time::Duration::from_secs(p.max_seconds);
    config.gc_interval_bytes = p.gc_interval_bytes;
    Ok(Compiled { _classes: tmp, expected, config })
}

/// Compiles `p` with `jdk`, runs it under HotSpot and under the VM (same working directory),
/// and fails with the first difference.
pub fn compare(jdk: &Jdk, p: &Program) -> Result<(), Failed> {
    let compiled = compile_and_run_hotspot(jdk, p)?;
    let (expected, config) = (&compiled.expected, compiled.config.clone());
    let result = run(&config).map_err(|e| format!("VM failed to start: {e}"))?;
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    let mut problems = Vec::new();
    problems.extend(stdout_difference(&expected.stdout, &stdout));
    if p.compare_stderr && first_line(&stderr) != expected.stderr_first {
        problems.push(format!(
            "stderr first line:\n  java:      {}\n  bloatlens: {}",
            expected.stderr_first,
            first_line(&stderr)
        ));
    }
    if result.status() != expected.status {
        problems.push(format!(
            "exit status: java {} bloatlens {} ({:?}); stderr: {}",
            expected.status,
            result.status(),
            result.outcome,
            first_line(&stderr)
        ));
    }
    if problems.is_empty() && p.profiled {
        let config = ProfileConfig {
            run: config,
            analyses: Analyses::default(),
            settings: Settings::default(),
            threads: Default::default(),
        };
        let (profiled, _) = profile(&config).map_err(|e| format!("the profiled VM failed to start: {e}"))?;
        if (&profiled.stdout, &profiled.stderr, profiled.status()) != (&result.stdout, &result.stderr, result.status())
        {
            problems.push(format!(
                "profiling changed the program: status {} ({:?}) where the plain run gave {}; stdout {}; stderr: {}",
                profiled.status(),
                profiled.outcome,
                result.status(),
                if profiled.stdout == result.stdout { "the same" } else { "differs" },
                String::from_utf8_lossy(&profiled.stderr).lines().next().unwrap_or("")
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// Where the VM's stdout first differs from HotSpot's, if it does.
pub fn stdout_difference(expected: &str, got: &str) -> Option<String> {
    if got == expected {
        return None;
    }
    let at = got.lines().zip(expected.lines()).position(|(a, b)| a != b);
    let (ours, theirs) = match at {
        Some(i) => (got.lines().nth(i).unwrap_or(""), expected.lines().nth(i).unwrap_or("")),
        None => ("<length differs>", ""),
    };
    Some(format!(
        "stdout differs at line {}:\n  java:      {theirs}\n  bloatlens: {ours}\n  (java printed {} lines, bloatlens {})",
        at.map(|i| i + 1).unwrap_or(0),
        expected.lines().count(),
        got.lines().count()
    ))
}

/// Programs listed in `file` (`name: reason` lines, `#` comments) that are known not to pass yet.
pub fn known_gaps(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split(':').next())
        .map(|n| n.trim().to_string())
        .collect()
}

/// The programs of a suite (directories with a `Main.java`), sorted.
pub fn programs(fixtures: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures)
        .unwrap_or_else(|e| panic!("{}: {e}", fixtures.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Main.java").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Whether this run is the complete one (`BLOATLENS_SUITE=full`): every program on both JDKs, the
/// heavy library workloads included. A plain `cargo test` (CI) runs a fixed sample instead, to keep
/// its time down (see [`trials`]); the complete run is the one made before a release, and
/// `--include-ignored` runs everything too.
pub fn full_suite() -> bool {
    std::env::var("BLOATLENS_SUITE").as_deref() == Ok("full")
}

/// Outside the complete run, JDK 25 runs one program in this many (the first, then every
/// `JDK25_SAMPLE`-th in name order): a fixed sample, so that a CI run repeats the one before it.
/// The default JDK runs every program.
const JDK25_SAMPLE: usize = 3;

/// One trial per program on the default JDK and, when installed, one more on JDK 25 (named
/// `jdk25/NAME`); trials named in `known` (a known-gaps file) are ignored, loudly, and so are
/// the JDK 25 trials outside the sample unless this is the complete run ([`full_suite`]).
pub fn trials(dirs: &[PathBuf], known: &[String], check: fn(&Jdk, &Path) -> Result<(), Failed>) -> Vec<Trial> {
    let mut jdks = vec![(String::new(), Jdk::default_jdk())];
    match Jdk::jdk25() {
        Ok(jdk25) => jdks.push(("jdk25/".to_string(), jdk25)),
        Err(home) => eprintln!(
            "\n*** JDK 25 not found at {} (set BLOATLENS_JDK25): the JDK 25 run is SKIPPED ***\n",
            home.display()
        ),
    }
    let every = if full_suite() { 1 } else { JDK25_SAMPLE };
    if every > 1 {
        eprintln!(
            "\n*** JDK 25 runs one program in {every} (the rest are ignored); BLOATLENS_SUITE=full runs them all ***\n"
        );
    }
    let mut trials = Vec::new();
    for (prefix, jdk) in jdks {
        for (i, d) in dirs.iter().enumerate() {
            let name = format!("{prefix}{}", d.file_name().unwrap().to_string_lossy());
            let sampled_out = !prefix.is_empty() && i % every != 0;
            let ignored = sampled_out || known.contains(&name);
            let (jdk, d) = (jdk.clone(), d.clone());
            trials.push(Trial::test(name, move || check(&jdk, &d)).with_ignored_flag(ignored));
        }
    }
    if Jdk::jdk25().is_err() {
        trials.push(Trial::test("jdk25 (JDK 25 not installed: skipped)", || Ok(())).with_ignored_flag(true));
    }
    trials
}

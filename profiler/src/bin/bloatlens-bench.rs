//! `bloatlens-bench`: runs the CPU-bound programs in `fixtures/bench/` (or, with `--libraries`, the
//! real-library workloads of `fixtures/libraries/` that pass on the `java` on PATH) under
//! `java -Xint`, `java` (JIT), `bloatlens run` and `bloatlens profile` (all five analyses on),
//! alternating, several rounds each, and prints each program's median wall time, peak memory
//! (GNU time's maximum RSS, when /usr/bin/time exists) and the ratios.
//!
//! Usage: `bloatlens-bench [--rounds N] [--only NAME] [--dir DIR] [--libraries] [--no-profile]`

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

struct Measurement {
    wall: Duration,
    peak_kb: Option<u64>,
}

fn measure(cmd: &[String]) -> Result<Measurement> {
    let use_time = Path::new("/usr/bin/time").exists();
    let mut command = if use_time {
        let mut c = Command::new("/usr/bin/time");
        c.args(["-f", "%M"]).args(cmd);
        c
    } else {
        let mut c = Command::new(&cmd[0]);
        c.args(&cmd[1..]);
        c
    };
    let start = Instant::now();
    let out = command.output().with_context(|| format!("running {}", cmd.join(" ")))?;
    let wall = start.elapsed();
    if !out.status.success() {
        bail!("{} failed: {}", cmd.join(" "), String::from_utf8_lossy(&out.stderr));
    }
    let peak_kb = if use_time {
        String::from_utf8_lossy(&out.stderr).lines().last().and_then(|l| l.trim().parse().ok())
    } else {
        None
    };
    Ok(Measurement { wall, peak_kb })
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

const USAGE: &str = "usage: bloatlens-bench [--rounds N] [--only NAME] [--dir DIR] [--libraries] [--no-profile]
  default: the programs of fixtures/bench; --libraries: the workloads of fixtures/libraries
  (their Debian packages installed, see scripts/install-library-suite.sh);
  --no-profile: leave out the run with every analysis on";

/// A program to measure: its class path and main class.
struct Workload {
    name: String,
    class_path: String,
    main: String,
}

/// The programs of a bench directory (`NAME.java`, default package), compiled together.
fn bench_programs(dir: &Path, only: Option<&str>, out: &Path) -> Result<Vec<Workload>> {
    let mut programs: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".java")).map(str::to_string))
        .filter(|n| only.is_none_or(|o| o == n))
        .collect();
    programs.sort();
    let sources: Vec<PathBuf> = programs.iter().map(|p| dir.join(format!("{p}.java"))).collect();
    let status = Command::new("javac").arg("-d").arg(out).args(&sources).status()?;
    if !status.success() {
        bail!("javac failed");
    }
    let cp = out.display().to_string();
    Ok(programs.into_iter().map(|p| Workload { name: p.clone(), class_path: cp.clone(), main: p }).collect())
}

/// The major version of the `java` on PATH.
fn java_major() -> Result<u32> {
    let out = Command::new("java").arg("-version").output().context("running java -version")?;
    let text = String::from_utf8_lossy(&out.stderr);
    let version = text.split('"').nth(1).context("no version in java -version")?;
    version.split(['.', '-']).next().and_then(|v| v.parse().ok()).context("unparsable java version")
}

/// The real-library workloads (`DIR/NAME/Main.java`), each compiled against its jars, leaving out
/// the known gaps of the `java` on PATH (`fixtures/libraries/known-gaps.txt`).
fn library_workloads(dir: &Path, only: Option<&str>, out: &Path) -> Result<Vec<Workload>> {
    let prefix = if java_major()? >= 21 { "jdk25/" } else { "" };
    let gaps: Vec<String> = std::fs::read_to_string(dir.join("known-gaps.txt"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(':').next().and_then(|n| n.strip_prefix(prefix).or((prefix.is_empty()).then_some(n))))
        .filter(|n| !n.contains('/'))
        .map(|n| n.trim().to_string())
        .collect();
    let resolver = dir.join("../../scripts/resolve-library-classpath.sh");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Main.java").exists())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| only.is_none_or(|o| o == n) && !gaps.contains(n))
        .collect();
    names.sort();
    let mut workloads = Vec::new();
    for name in names {
        let source = dir.join(&name);
        let jars = Command::new(&resolver).arg(&source).output()?;
        if !jars.status.success() {
            bail!("{name}: {}", String::from_utf8_lossy(&jars.stderr).trim());
        }
        let jars = String::from_utf8_lossy(&jars.stdout).trim().to_string();
        let classes = out.join(&name);
        let sources: Vec<PathBuf> = std::fs::read_dir(&source)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "java"))
            .collect();
        let status =
            Command::new("javac").args(["-nowarn", "-d"]).arg(&classes).args(["-cp", &jars]).args(&sources).status()?;
        if !status.success() {
            bail!("{name}: javac failed");
        }
        let mut class_path = vec![classes.display().to_string()];
        let resources = source.join("resources");
        if resources.is_dir() {
            class_path.push(resources.canonicalize()?.display().to_string());
        }
        if !jars.is_empty() {
            class_path.push(jars);
        }
        workloads.push(Workload { name, class_path: class_path.join(":"), main: "Main".into() });
    }
    Ok(workloads)
}

fn main() -> Result<()> {
    let mut rounds = 3;
    let mut only: Option<String> = None;
    let mut dir: Option<PathBuf> = None;
    let mut libraries = false;
    let mut profile = true;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => rounds = args.next().context("--rounds N")?.parse()?,
            "--only" => only = args.next(),
            "--dir" => dir = Some(args.next().context("--dir DIR")?.into()),
            "--libraries" => libraries = true,
            "--no-profile" => profile = false,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument {other} ({USAGE})"),
        }
    }
    let bloatlens = std::env::current_exe()?.with_file_name("bloatlens");
    if !bloatlens.exists() {
        bail!("{} not found: build it with `cargo build --release`", bloatlens.display());
    }
    let classes = tempfile::tempdir()?;
    let programs = if libraries {
        let dir = dir.unwrap_or_else(|| PathBuf::from("fixtures/libraries"));
        library_workloads(&dir, only.as_deref(), classes.path())?
    } else {
        let dir = dir.unwrap_or_else(|| PathBuf::from("fixtures/bench"));
        bench_programs(&dir, only.as_deref(), classes.path())?
    };
    println!("rounds: {rounds} (median wall time, whole process incl. start-up); peak = max RSS\n");
    println!(
        "| program | java -Xint | java | bloatlens | bloatlens / -Xint | bloatlens / java | profiled | profiled / bloatlens | peak java | peak bloatlens | peak / java | peak profiled |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut ratios_xint = Vec::new();
    let mut ratios_jit = Vec::new();
    let mut ratios_profiled = Vec::new();
    let mut ratios_peak = Vec::new();
    for w in &programs {
        let (p, cp, main) = (&w.name, &w.class_path, &w.main);
        let mut cmds: Vec<Vec<String>> = vec![
            vec!["java".into(), "-Xint".into(), "-XX:+UseSerialGC".into(), "-cp".into(), cp.clone(), main.clone()],
            vec!["java".into(), "-XX:+UseSerialGC".into(), "-cp".into(), cp.clone(), main.clone()],
            vec![bloatlens.display().to_string(), "run".into(), "-cp".into(), cp.clone(), main.clone()],
        ];
        if profile {
            cmds.push(
                [bloatlens.display().to_string(), "profile".into(), "-cp".into(), cp.clone()]
                    .into_iter()
                    .chain(["--format", "json", "--output", "/dev/null"].map(String::from))
                    .chain([main.clone()])
                    .collect(),
            );
        }
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); cmds.len()];
        let mut peaks: Vec<Option<u64>> = vec![None; cmds.len()];
        let mut failure = None;
        'rounds: for _ in 0..rounds {
            for (i, c) in cmds.iter().enumerate() {
                match measure(c) {
                    Ok(m) => {
                        times[i].push(m.wall);
                        peaks[i] = peaks[i].max(m.peak_kb);
                    }
                    Err(e) => {
                        failure = Some(e);
                        break 'rounds;
                    }
                }
            }
        }
        // A program that fails is reported and left out of the ratios; the others still run.
        if let Some(e) = failure {
            let first = format!("{e:#}").lines().take(3).collect::<Vec<_>>().join(" ");
            println!("| {p} | failed: {first} ||||||||||");
            continue;
        }
        let times: Vec<f64> = times.into_iter().map(|t| median(t).as_secs_f64()).collect();
        let (xint, jit, ours) = (times[0], times[1], times[2]);
        let (rx, rj) = (ours / xint, ours / jit);
        ratios_xint.push(rx);
        ratios_jit.push(rj);
        let prof = times.get(3).copied();
        let rp = prof.map(|p| p / ours);
        ratios_profiled.extend(rp);
        let peak_ratio = peaks[2].zip(peaks[1]).map(|(ours, java)| ours as f64 / java as f64);
        ratios_peak.extend(peak_ratio);
        let mb = |k: Option<u64>| k.map(|k| format!("{} MB", k / 1024)).unwrap_or_else(|| "-".into());
        let opt = |v: Option<f64>, unit: &str| v.map(|v| format!("{v:.2}{unit}")).unwrap_or_else(|| "-".into());
        println!(
            "| {p} | {xint:.2} s | {jit:.2} s | {ours:.2} s | {rx:.2}× | {rj:.2}× | {} | {} | {} | {} | {} | {} |",
            opt(prof, " s"),
            opt(rp, "×"),
            mb(peaks[1]),
            mb(peaks[2]),
            opt(peak_ratio, "×"),
            mb(peaks.get(3).copied().flatten())
        );
    }
    let summary = |mut v: Vec<f64>| -> Option<(f64, f64)> {
        v.sort_by(|a, b| a.total_cmp(b));
        Some((*v.get(v.len() / 2)?, *v.last()?))
    };
    if let (Some((mx, wx)), Some((mj, _))) = (summary(ratios_xint), summary(ratios_jit)) {
        println!("\nmedian bloatlens / java -Xint: {mx:.2}×, worst {wx:.2}×; median bloatlens / java: {mj:.2}×");
    }
    if let Some((mp, wp)) = summary(ratios_peak) {
        println!("peak memory bloatlens / java: median {mp:.2}×, worst {wp:.2}×");
    }
    if let Some((mp, wp)) = summary(ratios_profiled) {
        println!(
            "analyses on (copy, refprop, costben, lifetime, bottleneck): median profiled / bloatlens {mp:.2}×, worst {wp:.2}×"
        );
    }
    Ok(())
}

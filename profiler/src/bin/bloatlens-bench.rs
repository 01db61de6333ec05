//! `bloatlens-bench`: runs the CPU-bound programs in `fixtures/bench/` under `java -Xint`, `java`
//! (JIT), `bloatlens run` and `bloatlens profile` (all five analyses on),
//! alternating, several rounds each, and prints each program's median wall time, peak memory
//! (GNU time's maximum RSS, when /usr/bin/time exists) and the ratios.
//!
//! Usage: `bloatlens-bench [--rounds N] [--only NAME] [--dir fixtures/bench]`

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

const USAGE: &str = "usage: bloatlens-bench [--rounds N] [--only NAME] [--dir fixtures/bench]";

fn main() -> Result<()> {
    let mut rounds = 3;
    let mut only: Option<String> = None;
    let mut dir = PathBuf::from("fixtures/bench");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => rounds = args.next().context("--rounds N")?.parse()?,
            "--only" => only = args.next(),
            "--dir" => dir = args.next().context("--dir DIR")?.into(),
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
    let mut programs: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".java")).map(str::to_string))
        .filter(|n| only.as_ref().is_none_or(|o| o == n))
        .collect();
    programs.sort();
    let classes = tempfile::tempdir()?;
    let sources: Vec<PathBuf> = programs.iter().map(|p| dir.join(format!("{p}.java"))).collect();
    let status = Command::new("javac").arg("-d").arg(classes.path()).args(&sources).status()?;
    if !status.success() {
        bail!("javac failed");
    }
    let cp = classes.path().display().to_string();
    println!("rounds: {rounds} (median wall time, whole process incl. start-up); peak = max RSS\n");
    println!(
        "| program | java -Xint | java | bloatlens | bloatlens / -Xint | bloatlens / java | profiled | profiled / bloatlens | peak -Xint | peak bloatlens | peak profiled |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut ratios_xint = Vec::new();
    let mut ratios_jit = Vec::new();
    let mut ratios_profiled = Vec::new();
    for p in &programs {
        let profiled: Vec<String> = [bloatlens.display().to_string(), "profile".into(), "-cp".into(), cp.clone()]
            .into_iter()
            .chain(["--format", "json", "--output", "/dev/null"].map(String::from))
            .chain([p.clone()])
            .collect();
        let cmds: [Vec<String>; 4] = [
            vec!["java".into(), "-Xint".into(), "-XX:+UseSerialGC".into(), "-cp".into(), cp.clone(), p.clone()],
            vec!["java".into(), "-XX:+UseSerialGC".into(), "-cp".into(), cp.clone(), p.clone()],
            vec![bloatlens.display().to_string(), "run".into(), "-cp".into(), cp.clone(), p.clone()],
            profiled,
        ];
        let mut times: [Vec<Duration>; 4] = Default::default();
        let mut peaks: [Option<u64>; 4] = [None; 4];
        for _ in 0..rounds {
            for (i, c) in cmds.iter().enumerate() {
                let m = measure(c)?;
                times[i].push(m.wall);
                peaks[i] = peaks[i].max(m.peak_kb);
            }
        }
        let [xint, jit, ours, prof] = times.map(median);
        let rx = ours.as_secs_f64() / xint.as_secs_f64();
        let rj = ours.as_secs_f64() / jit.as_secs_f64();
        let rp = prof.as_secs_f64() / ours.as_secs_f64();
        ratios_xint.push(rx);
        ratios_jit.push(rj);
        ratios_profiled.push(rp);
        let mb = |k: Option<u64>| k.map(|k| format!("{} MB", k / 1024)).unwrap_or_else(|| "-".into());
        println!(
            "| {p} | {:.2} s | {:.2} s | {:.2} s | {rx:.2}× | {rj:.2}× | {:.2} s | {rp:.2}× | {} | {} | {} |",
            xint.as_secs_f64(),
            jit.as_secs_f64(),
            ours.as_secs_f64(),
            prof.as_secs_f64(),
            mb(peaks[0]),
            mb(peaks[2]),
            mb(peaks[3])
        );
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let worst = ratios_xint.iter().cloned().fold(0.0, f64::max);
    let worst_profiled = ratios_profiled.iter().cloned().fold(0.0, f64::max);
    println!(
        "\nmedian bloatlens / java -Xint: {:.2}×, worst {:.2}×; median bloatlens / java: {:.2}×",
        med(ratios_xint),
        worst,
        med(ratios_jit)
    );
    println!(
        "analyses on (copy, refprop, costben, lifetime, bottleneck): median profiled / bloatlens {:.2}×, worst {worst_profiled:.2}×",
        med(ratios_profiled)
    );
    Ok(())
}

//! `bloatlens-bench`: runs the CPU-bound programs in `fixtures/bench/` (or, with `--libraries`, the
//! real-library workloads of `fixtures/libraries/` that pass on the `java` on PATH) under
//! `java -Xint`, `java` (JIT), `bloatlens run` and `bloatlens profile` (all five analyses on),
//! alternating, several rounds each, and prints each program's median wall time, peak memory
//! (GNU time's maximum RSS, when /usr/bin/time exists) and the ratios.
//!
//! With `--fixes`: the measured fixes of `fixtures/bloat/fixes/` (see `bloatlens_profiler::fixes`):
//! per fix, the share its finding claims against the saving measured on the VM and under `java`
//! (main run in one JVM after warm-up, `scripts/measure/Measure.java`: median thread CPU time and
//! allocated bytes); then per scored-corpus program what `java` and the VM count of one run, also
//! written as TSV with `--tsv PATH` (the data a cost model of HotSpot time is fitted to).
//!
//! With `--quick-fixes`: the same for the quick fixes Bloatlens offers (`bloatlens_profiler::quickfix`)
//! for the corpus programs' shown findings, made and measured as the hand-made ones are.
//!
//! Usage: `bloatlens-bench [--rounds N] [--only NAME] [--dir DIR] [--libraries] [--no-profile]`,
//! `bloatlens-bench --fixes [--rounds N] [--only NAME] [--warm N] [--reps N] [--tsv PATH]`,
//! `bloatlens-bench --quick-fixes [the same options]`

use anyhow::{bail, Context, Result};
use bloatlens_profiler::fixes;
use bloatlens_profiler::profile::{profile, Analyses, ProfileConfig};
use bloatlens_profiler::report::{Report, Settings};
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
       bloatlens-bench --fixes [--rounds N] [--only NAME] [--warm N] [--reps N] [--tsv PATH]
       bloatlens-bench --quick-fixes [the options of --fixes]
  default: the programs of fixtures/bench; --libraries: the workloads of fixtures/libraries
  (their Debian packages installed, see scripts/install-library-suite.sh);
  --no-profile: leave out the run with every analysis on;
  --fixes: the fixes of fixtures/bloat/fixes, claimed saving against the saving measured on the VM and
  under java (--only: the fixes whose name contains NAME; --warm: main's warm-up in each JVM, runs or
  seconds as `2s` (the default); --reps: main's measured runs, default 60; --rounds: JVMs per program,
  alternating original and fix), then
  what java and the VM count of one run of each corpus program (--tsv: also written there as TSV);
  --quick-fixes: the same for the quick fixes Bloatlens offers for the corpus programs' findings";

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
    let mut fixes: Option<FixesOptions> = None;
    let mut warm = String::from("2s");
    let mut reps = 60;
    let mut tsv: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => rounds = args.next().context("--rounds N")?.parse()?,
            "--only" => only = args.next(),
            "--dir" => dir = Some(args.next().context("--dir DIR")?.into()),
            "--libraries" => libraries = true,
            "--no-profile" => profile = false,
            "--fixes" => fixes = Some(FixesOptions::default()),
            "--quick-fixes" => fixes = Some(FixesOptions { quick: true, ..FixesOptions::default() }),
            "--warm" => warm = args.next().context("--warm N")?,
            "--reps" => reps = args.next().context("--reps N")?.parse()?,
            "--tsv" => tsv = Some(args.next().context("--tsv PATH")?.into()),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument {other} ({USAGE})"),
        }
    }
    if let Some(mut o) = fixes {
        o.rounds = rounds.max(1);
        o.warm = warm;
        o.reps = reps.max(1);
        o.only = only;
        o.tsv = tsv;
        o.root = dir.unwrap_or_else(|| PathBuf::from("fixtures/bloat"));
        return measured_fixes(&o);
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

/// The quick fixes offered for the findings of the corpus programs (those whose name contains
/// `--only`), each with a fix it printed: the fix, its finding, and the first lines of its change.
fn quick_fixes(o: &FixesOptions, out: &Path) -> Result<Vec<fixes::Fix>> {
    let corpus = o.root.join("corpus");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .with_context(|| format!("reading {}", corpus.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Main.java").is_file())
        .filter(|p| o.only.as_deref().is_none_or(|n| p.to_string_lossy().contains(n)))
        .collect();
    dirs.sort();
    let mut all = Vec::new();
    let mut shown = 0;
    for d in dirs {
        let (made, report) = fixes::quick_fixes(&d, out, &Settings::default()).map_err(anyhow::Error::msg)?;
        shown += report.shown().len();
        for f in &made {
            println!("quick fix {}: {}", f.name, f.change);
        }
        all.extend(made);
    }
    println!("\n{} quick fixes offered for {shown} shown findings\n", all.len());
    Ok(all)
}

/// `--fixes`: what to measure and how.
#[derive(Default)]
struct FixesOptions {
    rounds: usize,
    /// Warm-up runs of main, or seconds of them (`2s`).
    warm: String,
    reps: usize,
    only: Option<String>,
    tsv: Option<PathBuf>,
    /// `fixtures/bloat`: its `fixes/` and `corpus/`.
    root: PathBuf,
    /// The quick fixes Bloatlens offers for the corpus programs' findings instead of the
    /// hand-made fixes.
    quick: bool,
}

/// Medians of main's runs in one JVM (`Measure --raw`), or of such medians over several JVMs.
#[derive(Debug, Clone, Copy)]
struct JavaRun {
    cpu_ns: f64,
    bytes: f64,
    wall_ns: f64,
}

/// Runs `Main` of `classes` under `Measure` (compiled into `measure`): main `warm` times, then
/// `reps` times measured. Returns the medians and what the last run printed.
fn java_measure(measure: &Path, classes: &Path, warm: &str, reps: usize) -> Result<(JavaRun, String)> {
    let cp = format!("{}:{}", measure.display(), classes.display());
    let out = Command::new("java")
        .args(["-cp", &cp, "Measure", "--raw", warm, &reps.to_string(), "Main"])
        .output()
        .context("running java")?;
    if !out.status.success() {
        bail!("java Measure {}: {}", classes.display(), String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (printed, last) = text.trim_end_matches('\n').rsplit_once('\n').unwrap_or(("", text.trim_end()));
    let fields: Vec<f64> = last
        .strip_prefix("measure\t")
        .context("no measure line")?
        .split('\t')
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let [cpu_ns, bytes, wall_ns, _, _] = fields[..] else { bail!("measure line `{last}`") };
    let printed = if printed.is_empty() { String::new() } else { format!("{printed}\n") };
    Ok((JavaRun { cpu_ns, bytes, wall_ns }, printed))
}

fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// `rounds` JVMs per program, the programs alternating (a machine busy with other work disturbs
/// each alike); per program each JVM's medians and what its last run printed.
fn java_rounds(measure: &Path, programs: &[&Path], o: &FixesOptions) -> Result<Vec<(Vec<JavaRun>, String)>> {
    let mut runs: Vec<Vec<JavaRun>> = vec![Vec::new(); programs.len()];
    let mut printed = vec![String::new(); programs.len()];
    for _ in 0..o.rounds {
        for (i, p) in programs.iter().enumerate() {
            let (run, out) = java_measure(measure, p, &o.warm, o.reps)?;
            runs[i].push(run);
            printed[i] = out;
        }
    }
    Ok(runs.into_iter().zip(printed).collect())
}

/// The medians of several JVMs' medians.
fn medians(runs: &[JavaRun]) -> JavaRun {
    let m = |f: fn(&JavaRun) -> f64| median_f64(runs.iter().map(f).collect());
    JavaRun { cpu_ns: m(|r| r.cpu_ns), bytes: m(|r| r.bytes), wall_ns: m(|r| r.wall_ns) }
}

/// A saving measured in pairs of JVMs (original, fix) run one after the other: the median over the
/// pairs, and the smallest and largest.
fn paired_saving(before: &[JavaRun], after: &[JavaRun], f: fn(&JavaRun) -> f64) -> (f64, f64, f64) {
    let savings: Vec<f64> = before.iter().zip(after).map(|(b, a)| fixes::saving(f(b), f(a))).collect();
    let lo = savings.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = savings.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (median_f64(savings), lo, hi)
}

/// `12.3% (8.1 – 15.0)`: a median and its range, in percent.
fn pct_range((median, lo, hi): (f64, f64, f64)) -> String {
    format!("{:.1}% ({:.0} – {:.0})", median * 100.0, lo * 100.0, hi * 100.0)
}

/// One row of the TSV: a program's run under `java` and on the VM.
fn tsv_row(name: &str, variant: &str, program: &str, java: &JavaRun, vm: &fixes::VmTotals) -> String {
    format!(
        "{name}\t{variant}\t{program}\t{:.0}\t{:.0}\t{:.0}\t{}\t{}\t{}\t{}\t{}\n",
        java.cpu_ns,
        java.bytes,
        java.wall_ns,
        vm.program().instructions,
        vm.program().bytes,
        vm.run.instructions,
        vm.run.bytes,
        vm.heap_at_end
    )
}

/// `vm_instructions`, `vm_bytes`: the program's own work (the run less the JDK's boot, as shares
/// are taken of it); `vm_run_*`: the whole run.
const TSV_HEADER: &str = "name\tvariant\tprogram\tjava_cpu_ns\tjava_bytes\tjava_wall_ns\tvm_instructions\tvm_bytes\tvm_run_instructions\tvm_run_bytes\tvm_heap_at_end\n";

fn pct(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

fn measured_fixes(o: &FixesOptions) -> Result<()> {
    let work = tempfile::tempdir()?;
    let all = if o.quick {
        quick_fixes(o, &work.path().join("quick"))?
    } else {
        fixes::read_fixes(&o.root.join("fixes")).map_err(anyhow::Error::msg)?
    };
    let chosen: Vec<&fixes::Fix> =
        all.iter().filter(|f| o.only.as_deref().is_none_or(|n| f.name.contains(n))).collect();
    let corpus = o.root.join("corpus");
    let mut programs: Vec<String> = std::fs::read_dir(&corpus)
        .with_context(|| format!("reading {}", corpus.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Main.java").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|p| o.only.is_none() || chosen.iter().any(|f| &f.program == p))
        .collect();
    programs.sort();
    let measure = work.path().join("measure");
    let harness = Path::new("scripts/measure/Measure.java");
    let status = Command::new("javac").arg("-d").arg(&measure).arg(harness).status()?;
    if !status.success() {
        bail!("javac {} failed (run from the repository's root)", harness.display());
    }
    let settings = Settings::default();
    // Class paths of one length (`original/P`, `fixed001/P`): the JDK's class loading runs Java code
    // over the class path, and the VM counts what it costs.
    let compiled = |dir: &Path, name: &str| -> Result<PathBuf> {
        let out = work.path().join(name);
        fixes::compile(dir, &out).map_err(anyhow::Error::msg)?;
        Ok(out)
    };
    let vm = |classes: &Path, sources: &Path| -> Result<fixes::VmTotals> {
        fixes::vm_totals(&fixes::run_config(classes, sources), &settings).map_err(anyhow::Error::msg)
    };
    let mut tsv = String::from(TSV_HEADER);
    let java = Command::new("java").arg("-version").output()?;
    let java_version = String::from_utf8_lossy(&java.stderr).lines().next().unwrap_or("").to_string();
    println!(
        "java: {java_version}; {} JVMs per program (original and fix alternating), in each main warmed up ({}) then run {} times measured; medians",
        o.rounds, o.warm, o.reps
    );
    println!("savings are shares of the original's: on the VM of its own work (the run less the JDK's boot), under java of main's thread CPU time and allocated bytes\n");
    println!("java: the median saving over the pairs of JVMs (range)\n");
    println!("| fix | pattern | kind | claimed | of | VM, claim's unit | measured / claimed | VM instructions | VM bytes | java CPU | java bytes |");
    println!("|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|");
    let mut originals: std::collections::HashMap<String, (PathBuf, fixes::VmTotals, Report)> = Default::default();
    // Per fix: the measured savings over the claimed share (VM in the claim's unit, java CPU).
    let mut ratios: Vec<[f64; 2]> = Vec::new();
    for (i, fix) in chosen.iter().enumerate() {
        let source = corpus.join(&fix.program);
        if !originals.contains_key(&fix.program) {
            let classes = compiled(&source, &format!("original/{}", fix.program))?;
            let totals = vm(&classes, &source)?;
            let config = ProfileConfig {
                run: fixes::run_config(&classes, &source),
                analyses: Analyses::default(),
                settings: settings.clone(),
                threads: Default::default(),
            };
            let (_, report) = profile(&config).map_err(|e| anyhow::anyhow!("{}: {e}", fix.program))?;
            originals.insert(fix.program.clone(), (classes, totals, report));
        }
        let (classes, before, report) = &originals[&fix.program];
        let fixed = compiled(&fix.dir, &format!("fixed{:03}/{}", i % 1000, fix.program))?;
        let after = vm(&fixed, &fix.dir)?;
        let Some(finding) = fixes::finding_of(report, fix) else {
            println!(
                "| {} | {} | no shown finding of this pattern on line {} |||||||||",
                fix.name, fix.pattern, fix.line
            );
            continue;
        };
        let unit = fixes::Unit::of(finding);
        let measured = fixes::measured_share(unit, before, &after);
        let java = java_rounds(&measure, &[classes.as_path(), fixed.as_path()], o)?;
        let (jb, ja) = (&java[0].0, &java[1].0);
        let (cpu, bytes) = (paired_saving(jb, ja, |r| r.cpu_ns), paired_saving(jb, ja, |r| r.bytes));
        let same_output =
            before.stdout == after.stdout && java[0].1.as_bytes() == before.stdout && java[1].1 == java[0].1;
        let saving = fixes::saving;
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.2}× | {} | {} | {} | {} |{}",
            fix.name,
            fix.pattern,
            finding.kind(),
            pct(finding.share),
            unit.name(),
            pct(measured),
            measured / finding.share,
            pct(saving(before.program().instructions as f64, after.program().instructions as f64)),
            pct(saving(before.program().bytes as f64, after.program().bytes as f64)),
            pct_range(cpu),
            pct_range(bytes),
            if same_output { "" } else { " output differs!" }
        );
        tsv.push_str(&tsv_row(&fix.name, "fix", &fix.program, &medians(ja), &after));
        ratios.push([measured, cpu.0].map(|m| m / finding.share));
    }
    let within = |i: usize| ratios.iter().filter(|r| (0.5..=2.0).contains(&r[i])).count();
    println!(
        "\nwithin 0.5–2× of the claimed share, of {} fixes: on the VM (the claim's unit) {}, under java (thread CPU time) {}",
        ratios.len(),
        within(0),
        within(1)
    );
    if o.quick {
        return Ok(());
    }
    println!("\nper corpus program, one run of main:\n");
    println!("| program | java CPU | java bytes | VM instructions | VM bytes | estimated HotSpot time |");
    println!("|---|---:|---:|---:|---:|---:|");
    for p in &programs {
        let source = corpus.join(p);
        let classes = match originals.get(p) {
            Some((c, _, _)) => c.clone(),
            None => compiled(&source, &format!("original/{p}"))?,
        };
        let totals = match originals.get(p) {
            Some((_, t, _)) => t.clone(),
            None => vm(&classes, &source)?,
        };
        let (runs, printed) = java_rounds(&measure, &[classes.as_path()], o)?.remove(0);
        let j = medians(&runs);
        println!(
            "| {p} | {:.2} ms | {:.0} KB | {} | {:.0} KB | {:.2} ms |{}",
            j.cpu_ns / 1e6,
            j.bytes / 1024.0,
            totals.program().instructions,
            totals.program().bytes as f64 / 1024.0,
            fixes::estimated_nanos(totals.program()) / 1e6,
            if printed.as_bytes() == totals.stdout { "" } else { " output differs from the VM's!" }
        );
        tsv.push_str(&tsv_row(p, "original", p, &j, &totals));
    }
    if let Some(path) = &o.tsv {
        std::fs::write(path, tsv).with_context(|| format!("writing {}", path.display()))?;
        println!("\nwritten: {}", path.display());
    }
    Ok(())
}

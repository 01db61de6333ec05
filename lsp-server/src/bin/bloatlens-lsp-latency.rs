//! `bloatlens-lsp-latency`: the time from `didSave` to `publishDiagnostics` (javac included),
//! through the real server on stdio, for each program in `fixtures/bloat/`, and alongside the time
//! `java` takes to run the same program. Several saves each, every one after the first following an
//! edit of the file; prints medians.
//!
//! Usage: `bloatlens-lsp-latency [--saves N] [--dir fixtures/bloat] [--pause-ms 1000] [--settings JSON] [--verbose]`,
//! or `… --project fixtures/projects/shop --test com.acme.shop.core.InventoryTest#totalsAreSummed`: one
//! JUnit test method of a Maven project run from its lens (`--saves` times, the first `--settle-ms`,
//! 10000, after the workspace opened), instead of the corpus
//! (`--pause-ms`: how long after a save's diagnostics the next edit comes, as a developer reads
//! and types in between; `--settings`: the server's settings besides the program's arguments, such as
//! `{"bootAhead": false}`; `--verbose`: each save's log line, with javac's and the run's time, on stderr)

use anyhow::{bail, Context, Result};
use bloatlens_lsp::harness::Editor;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<()> {
    let mut saves = 5;
    let mut dir = PathBuf::from("fixtures/bloat");
    // A Maven project's JUnit test method, run from its lens instead of the corpus's saves.
    let (mut project, mut test) = (None, None);
    let mut settle = Duration::from_secs(10);
    // Each save's log line (javac's and the run's share of it) on stderr.
    let mut verbose = false;
    // Server settings besides the program's arguments (to compare, e.g. `{"bootAhead": false}`).
    let mut settings = json!({});
    // Between one save's diagnostics and the next edit: a developer reads and types in between.
    let mut pause = Duration::from_millis(1000);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--saves" => saves = args.next().context("--saves N")?.parse()?,
            "--dir" => dir = args.next().context("--dir DIR")?.into(),
            "--verbose" => verbose = true,
            "--settings" => settings = serde_json::from_str(&args.next().context("--settings JSON")?)?,
            "--pause-ms" => pause = Duration::from_millis(args.next().context("--pause-ms MS")?.parse()?),
            "--project" => project = Some(PathBuf::from(args.next().context("--project DIR")?)),
            "--test" => test = Some(args.next().context("--test CLASS#METHOD")?),
            "--settle-ms" => settle = Duration::from_millis(args.next().context("--settle-ms MS")?.parse()?),
            other => bail!("unknown argument {other}"),
        }
    }
    let server = std::env::current_exe()?.with_file_name("bloatlens-lsp");
    if !server.exists() {
        bail!("{} not found: build it with `cargo build --release`", server.display());
    }
    let runs = Runs { server, saves, pause, settings, verbose, settle };
    match (project, test) {
        (Some(project), Some(test)) => test_latency(&runs, &project, &test),
        (None, None) => corpus_latency(&runs, &dir),
        _ => bail!("--project and --test go together"),
    }
}

/// How each program is run through the server.
struct Runs {
    server: PathBuf,
    saves: usize,
    pause: Duration,
    settings: Value,
    verbose: bool,
    /// From the workspace's opening (Maven's class paths read) to the first test run.
    settle: Duration,
}

/// Each `Main.java` program of `dir`: saves of the file, each after an edit.
fn corpus_latency(runs: &Runs, dir: &Path) -> Result<()> {
    let Runs { server, saves, pause, settings, verbose, settle: _ } = runs;
    let (saves, pause, verbose) = (*saves, *pause, *verbose);
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Main.java").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    println!("save → diagnostics through bloatlens-lsp (javac -g + profile), {saves} saves each; median\n");
    println!("| program | java | first save | save → diagnostics |");
    println!("|---|---:|---:|---:|");
    let (mut all, mut firsts) = (Vec::new(), Vec::new());
    for name in &names {
        let src = std::fs::read_to_string(dir.join(name).join("Main.java"))?;
        let args = std::fs::read_to_string(dir.join(name).join("args.txt")).unwrap_or_default();
        let args: Vec<String> = args.split_whitespace().map(String::from).collect();
        // `java` on the same program, for scale.
        let classes = tempfile::tempdir()?;
        let ok = Command::new("javac").arg("-d").arg(classes.path()).arg(dir.join(name).join("Main.java")).status()?;
        if !ok.success() {
            bail!("javac failed on {name}");
        }
        let t = Instant::now();
        Command::new("java").arg("-cp").arg(classes.path()).arg("Main").args(&args).output()?;
        let java = t.elapsed();
        let mut options = settings.clone();
        options["args"] = json!(args);
        let mut ed = Editor::start(server, &[("Main.java", &src)], options);
        let u = ed.open("Main.java");
        let mut times = Vec::new();
        for i in 0..saves {
            // Each save after the first follows an edit, as a developer's do (a save with nothing
            // changed would compile nothing).
            if i > 0 {
                std::thread::sleep(pause);
                std::fs::write(ed.root.join("Main.java"), format!("{src}// edit {i}\n"))?;
            }
            let t = Instant::now();
            ed.save(&u);
            ed.progress();
            ed.diagnostics(&u);
            times.push(t.elapsed());
            let log = ed.notification("window/logMessage");
            if verbose {
                eprintln!("{name} save {}: {}", i + 1, log["message"].as_str().unwrap_or_default());
            }
        }
        ed.finish();
        let m = median(times.clone());
        firsts.push(times[0]);
        println!("| {name} | {} ms | {} ms | {} ms |", java.as_millis(), times[0].as_millis(), m.as_millis());
        all.extend(times);
    }
    println!(
        "\nmedian over all saves: {} ms; of the first saves (right after the server starts): {} ms",
        median(all).as_millis(),
        median(firsts).as_millis()
    );
    Ok(())
}

/// Every text file of the project at `root` (build outputs aside), relative to it.
fn project_files(root: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir)?.flatten() {
            let p = e.path();
            if p.is_dir() && e.file_name() != "target" {
                stack.push(p);
            } else if p.is_file() {
                let rel = p.strip_prefix(root)?.display().to_string();
                // The editor harness writes text files: a binary one (a test's data) is said and left out.
                match String::from_utf8(std::fs::read(&p)?) {
                    Ok(text) => out.push((rel, text)),
                    Err(_) => eprintln!("left out (not text): {rel}"),
                }
            }
        }
    }
    Ok(out)
}

/// One JUnit test method of a Maven project, run from its lens several times: the time from the
/// command to its run's log line (the project's sources compiled, the test run and profiled).
fn test_latency(runs: &Runs, project: &Path, test: &str) -> Result<()> {
    if runs.saves < 2 {
        bail!("--saves: at least 2 runs (the first, and the later ones)");
    }
    let files = project_files(project)?;
    let refs: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let (class, _) = test.split_once('#').context("--test CLASS#METHOD")?;
    let source = format!("{}.java", class.replace('.', "/"));
    let file = files.iter().map(|(n, _)| n).find(|n| n.ends_with(&source)).context("no source for the test's class")?;
    let mut ed = Editor::start(&runs.server, &refs, runs.settings.clone());
    // Maven's class paths are asked for when the workspace opens, before any run.
    ed.until(|m| log(m).is_some_and(|t| t.starts_with("Maven: ")));
    // A developer opens the test and reads it before running it; meanwhile the server gets the
    // project's tests ready (Surefire's configuration, the JUnit runner).
    ed.drain(runs.settle);
    let u = ed.open(file);
    let id = ed.request("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    let lens = ed
        .response(id)
        .as_array()
        .and_then(|ls| ls.iter().find(|l| l["command"]["arguments"][1]["test"] == test).cloned())
        .context("no lens for the test")?;
    println!("{test} from its lens through bloatlens-lsp (javac -g + JUnit + profile), {} runs\n", runs.saves);
    let mut times = Vec::new();
    for i in 0..runs.saves {
        if i > 0 {
            std::thread::sleep(runs.pause);
        }
        let t = Instant::now();
        let command = json!({"command": lens["command"]["command"], "arguments": lens["command"]["arguments"]});
        ed.request("workspace/executeCommand", command);
        let seen = ed.until(|m| log(m).is_some_and(|t| t.starts_with(&format!("profiled {test}"))));
        times.push(t.elapsed());
        if runs.verbose {
            eprintln!("run {}: {}", i + 1, seen.last().and_then(log).unwrap_or_default());
        }
        // The tests' outcomes follow the run's line.
        ed.drain(Duration::from_millis(500));
    }
    ed.drain(Duration::from_millis(500));
    ed.finish();
    let first = times[0];
    println!(
        "first run {} ms; median of all {} ms; of the later runs {} ms",
        first.as_millis(),
        median(times.clone()).as_millis(),
        median(times[1..].to_vec()).as_millis()
    );
    Ok(())
}

/// The text of a log message, if `m` is one.
fn log(m: &Value) -> Option<&str> {
    (m["method"] == "window/logMessage").then(|| m["params"]["message"].as_str()).flatten()
}

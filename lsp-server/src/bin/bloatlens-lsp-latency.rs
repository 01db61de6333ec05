//! `bloatlens-lsp-latency`: the time from `didSave` to `publishDiagnostics` (javac included),
//! through the real server on stdio, for each program in `fixtures/bloat/`, and alongside the time
//! `java` takes to run the same program. Several saves each, every one after the first following an
//! edit of the file; prints medians.
//!
//! Usage: `bloatlens-lsp-latency [--saves N] [--dir fixtures/bloat] [--pause-ms 1000] [--verbose]`
//! (`--pause-ms`: how long after a save's diagnostics the next edit comes, as a developer reads
//! and types in between; `--verbose`: each save's log line, with javac's and the run's time, on stderr)

use anyhow::{bail, Context, Result};
use bloatlens_lsp::harness::Editor;
use serde_json::json;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<()> {
    let mut saves = 5;
    let mut dir = PathBuf::from("fixtures/bloat");
    // Each save's log line (javac's and the run's share of it) on stderr.
    let mut verbose = false;
    // Between one save's diagnostics and the next edit: a developer reads and types in between.
    let mut pause = Duration::from_millis(1000);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--saves" => saves = args.next().context("--saves N")?.parse()?,
            "--dir" => dir = args.next().context("--dir DIR")?.into(),
            "--verbose" => verbose = true,
            "--pause-ms" => pause = Duration::from_millis(args.next().context("--pause-ms MS")?.parse()?),
            other => bail!("unknown argument {other}"),
        }
    }
    let server = std::env::current_exe()?.with_file_name("bloatlens-lsp");
    if !server.exists() {
        bail!("{} not found: build it with `cargo build --release`", server.display());
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
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
        let mut ed = Editor::start(&server, &[("Main.java", &src)], json!({"args": args}));
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

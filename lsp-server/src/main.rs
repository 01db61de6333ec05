//! The `bloatlens-lsp` binary: a language server on stdio (`--stdio` is accepted and implied).

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version" || a == "-V") {
        println!("bloatlens-lsp {}", env!("CARGO_PKG_VERSION"));
        return Ok(());
    }
    if let Some(bad) = args.iter().find(|a| *a != "--stdio") {
        anyhow::bail!("unknown argument {bad} (usage: bloatlens-lsp [--stdio] | --version)");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.spawn(end_on_signal());
    runtime.block_on(bloatlens_lsp::serve(tokio::io::stdin(), tokio::io::stdout()));
    // After `exit` nothing may keep the process alive: not a profiled program still running on its
    // thread (it is cancelled, but may be inside a long native call), nor the blocked stdin read.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(())
}

/// An editor that stops its server with a signal rather than `exit` (a client that gives up
/// waiting, a closed terminal, Ctrl-C): the scratch directory is removed first, then the process
/// ends as the signal would have ended it (128 + its number). SIGKILL cannot be caught: the next
/// server removes what that one left (`private_dir::owned_scratch`).
async fn end_on_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut hup), Ok(mut int)) =
        (signal(SignalKind::terminate()), signal(SignalKind::hangup()), signal(SignalKind::interrupt()))
    else {
        return;
    };
    let code = tokio::select! {
        _ = term.recv() => 128 + 15,
        _ = hup.recv() => 128 + 1,
        _ = int.recv() => 128 + 2,
    };
    bloatlens_lsp::job::remove_cache_dirs();
    std::process::exit(code);
}

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
    runtime.block_on(bloatlens_lsp::serve(tokio::io::stdin(), tokio::io::stdout()));
    // After `exit` nothing may keep the process alive: not a profiled program still running on its
    // thread (it is cancelled, but may be inside a long native call), nor the blocked stdin read.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(())
}

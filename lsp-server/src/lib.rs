//! `bloatlens-lsp`: the language server. Saving a Java file compiles the workspace's entry point
//! with the user's `javac -g`, profiles it under Bloatlens' VM on a blocking thread, and publishes
//! the findings on their source lines (diagnostics with every hop as related information, code
//! lenses, hovers, commands that walk a copy chain).
//!
//! - [`server`]: protocol handlers (read snapshots, send events);
//! - [`state`]: the state owner task (documents, settings, runs, publishing);
//! - [`job`]: one compile-and-profile run;
//! - [`mapping`]: tree-sitter ranges and position encodings; [`to_proto`]: findings → LSP values;
//! - [`config`]: the settings.

pub mod config;
pub mod harness;
pub mod job;
pub mod mapping;
pub mod server;
pub mod state;
pub mod to_proto;
pub mod warm_javac;

use tower_lsp_server::{LspService, Server};

/// Serves one client over `input`/`output` until it exits.
pub async fn serve<I, O>(input: I, output: O)
where
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite,
{
    let (service, socket) = LspService::build(server::Backend::new)
        .custom_method("window/workDoneProgress/cancel", server::Backend::progress_cancel)
        .finish();
    Server::new(input, output, socket).serve(service).await;
}

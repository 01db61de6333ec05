//! `bloatlens-lsp`: the language server. Saving a Java file compiles the workspace's entry point
//! with the user's `javac -g`, profiles it under Bloatlens' VM on a blocking thread, and publishes
//! the findings on their source lines (diagnostics with every hop as related information, code
//! lenses, hovers, commands that walk a copy chain).
//!
//! - [`server`]: protocol handlers (read snapshots, send events);
//! - [`state`]: the state owner task (documents, settings, runs, publishing);
//! - [`job`]: one compile-and-profile run; [`launch`]: launch.json's Java configurations;
//! - [`fix_check`]: the findings' quick fixes, made and checked after a run;
//! - [`mapping`]: tree-sitter ranges and position encodings; [`to_proto`]: findings → LSP values;
//! - [`config`]: the settings; [`framing`]: the byte stream, malformed messages answered, not fatal.

pub mod config;
pub mod document;
pub mod fix_check;
pub mod framing;
pub mod harness;
pub mod job;
pub mod launch;
pub mod mapping;
pub mod rebuild;
pub mod server;
pub mod state;
pub mod suppressions;
pub mod to_proto;
pub mod warm_javac;

use tower_lsp_server::{LspService, Server};

/// Serves one client over `input`/`output` until it exits. The protocol library reads and writes
/// through [`framing`]'s pumps, so that no malformed message can end the session.
pub async fn serve<I, O>(input: I, output: O)
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (service, socket) = LspService::build(server::Backend::new)
        .custom_method("window/workDoneProgress/cancel", server::Backend::progress_cancel)
        .finish();
    let (to_library, library_input) = tokio::io::duplex(1 << 16);
    let (library_output, from_library) = tokio::io::duplex(1 << 16);
    let (answers_tx, answers_rx) = tokio::sync::mpsc::unbounded_channel();
    let reader = tokio::spawn(framing::pump_input(tokio::io::BufReader::new(input), to_library, answers_tx));
    let writer = tokio::spawn(framing::pump_output(tokio::io::BufReader::new(from_library), output, answers_rx));
    Server::new(library_input, library_output, socket).serve(service).await;
    // The library has answered `exit` (or its input ended): what it wrote is flushed, and the
    // editor's stream is no longer read, even if the editor keeps it open.
    reader.abort();
    let _ = tokio::time::timeout(std::time::Duration::from_millis(500), writer).await;
    job::remove_cache_dirs();
}

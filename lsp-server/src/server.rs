//! The protocol handlers. Notifications become [`Event`]s for the state owner, in arrival order;
//! requests answer from the latest [`Snapshot`]; requests to the client (`window/showDocument`)
//! are spawned with a timeout, never awaited by a handler.

use crate::config::Config;
use crate::mapping::{self, Encoding};
use crate::state::{self, Event, Mapped, Snapshot};
use crate::to_proto;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

pub const COMMANDS: [&str; 8] = [
    "bloatlens.profile",
    "bloatlens.entryPoints",
    "bloatlens.nextHop",
    "bloatlens.prevHop",
    "bloatlens.showChain",
    "bloatlens.suppress",
    "bloatlens.status",
    "bloatlens.fixApplied",
];

pub struct Backend {
    client: Client,
    events: mpsc::UnboundedSender<Event>,
    snapshots: watch::Receiver<Arc<Snapshot>>,
}

impl Backend {
    pub fn new(client: Client) -> Self {
        let (events, snapshots) = state::start(client.clone());
        Backend { client, events, snapshots }
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshots.borrow().clone()
    }

    fn send(&self, e: Event) {
        let _ = self.events.send(e);
    }

    /// `window/workDoneProgress/cancel` from the client's cancel button.
    pub async fn progress_cancel(&self, params: WorkDoneProgressCancelParams) {
        self.send(Event::CancelProgress(params.token));
    }

    /// Asks the client to show a place; spawned and bounded, so no handler waits for the client.
    fn show(&self, uri: Uri, range: Range) {
        let client = self.client.clone();
        tokio::spawn(async move {
            let params =
                ShowDocumentParams { uri, external: Some(false), take_focus: Some(true), selection: Some(range) };
            let _ = tokio::time::timeout(Duration::from_secs(5), client.show_document(params)).await;
        });
    }
}

/// `bloatlens.profile`'s `testsIn`: a folder's `file:` URI, as a path (whether it is a folder of
/// the workspace's tests is the state owner's to say).
fn folder_arg(value: &serde_json::Value) -> std::result::Result<std::path::PathBuf, String> {
    let said = || format!("`testsIn` is a folder's file URI (file:///…/src/test/java/com/acme), not {value}");
    let text = value.as_str().filter(|t| t.starts_with("file:")).ok_or_else(said)?;
    let uri: Uri = text.parse().map_err(|_| said())?;
    match uri.to_file_path() {
        Some(p) if p.is_absolute() => Ok(p.into_owned()),
        _ => Err(said()),
    }
}

/// A command's first argument: the document it acts on.
fn arg_uri(args: &[serde_json::Value]) -> Option<Uri> {
    serde_json::from_value(args.first()?.clone()).ok()
}

/// The finding a command is about, and the stop of its walk the cursor is on:
/// `[uri, position, {finding}]`. A lens names its finding (`finding`: its key, as in the
/// diagnostic's data); else the cursor's line decides: a copy chain on it, else a finding on it
/// with places to walk, else a finding one of whose places is on it (chains first), else the
/// file's first chain, its first finding with places, its first finding.
fn finding_at<'a>(snap: &'a Snapshot, args: &[serde_json::Value]) -> Option<(&'a Mapped, Option<usize>)> {
    let uri = arg_uri(args)?;
    let pos: Position = args.get(1).and_then(|p| serde_json::from_value(p.clone()).ok()).unwrap_or_default();
    let at_cursor = |m: &Mapped| m.uri == uri && m.range.start.line == pos.line;
    if let Some(key) = args.get(2).and_then(|o| o.get("finding")).and_then(|k| k.as_str()) {
        // Two findings may share a key (one kind, one bytecode): the one where the lens is.
        let named: Vec<&Mapped> = snap.findings.iter().filter(|m| m.key == key).collect();
        if let Some(m) = named.iter().find(|m| at_cursor(m)).or(named.first()) {
            return Some((m, at_cursor(m).then_some(0)));
        }
    }
    let is_chain = |m: &Mapped| m.finding.kind() == bloatlens_profiler::report::Kind::CopyChain;
    let has_places = |m: &Mapped| !m.related.is_empty();
    let on_line: Vec<&Mapped> = snap.findings_in(&uri).filter(|m| at_cursor(m)).collect();
    if let Some(m) = on_line.iter().find(|m| is_chain(m)).or_else(|| on_line.iter().find(|m| has_places(m))) {
        return Some((m, Some(0)));
    }
    for chains in [true, false] {
        for m in snap.findings.iter().filter(|m| is_chain(m) == chains) {
            if let Some(i) = stops(m).iter().position(|(u, r)| *u == uri && r.start.line == pos.line) {
                return Some((m, Some(i)));
            }
        }
    }
    let in_file: Vec<&Mapped> = snap.findings_in(&uri).collect();
    let any =
        in_file.iter().find(|m| is_chain(m)).or_else(|| in_file.iter().find(|m| has_places(m))).or(in_file.first())?;
    Some((any, None))
}

/// The places a walk goes through: the finding, then its places in order (a chain's loads and
/// stores, a call path's calls), consecutive duplicates merged.
fn stops(m: &Mapped) -> Vec<(Uri, Range)> {
    let mut out: Vec<(Uri, Range)> = vec![(m.uri.clone(), m.range)];
    for r in &m.related {
        let last = out.last().expect("not empty");
        if !(last.0 == r.uri && last.1.start.line == r.range.start.line) {
            out.push((r.uri.clone(), r.range));
        }
    }
    out
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let encoding =
            Encoding::negotiate(params.capabilities.general.as_ref().and_then(|g| g.position_encodings.as_deref()));
        let progress = params.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
        let status = params
            .capabilities
            .experimental
            .as_ref()
            .and_then(|e| e.get("bloatlensStatus"))
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        let lens_refresh = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false);
        #[allow(deprecated)]
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|f| f.first())
            .and_then(|f| f.uri.to_file_path().map(|p| p.into_owned()))
            .or_else(|| params.root_uri.as_ref().and_then(|u| u.to_file_path().map(|p| p.into_owned())));
        let config = match params.initialization_options.as_ref().map(Config::from_json) {
            Some(Ok(c)) => c,
            Some(Err(e)) => return Err(Error::invalid_params(e)),
            None => Config::default(),
        };
        self.send(Event::Initialized { root, config: Box::new(config), encoding, progress, status, lens_refresh });
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(encoding.kind()),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                    ..Default::default()
                })),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                inlay_hint_provider: Some(OneOf::Left(true)),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: COMMANDS.iter().map(|c| c.to_string()).collect(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "bloatlens-lsp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.send(Event::ClientReady);
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, p: DidOpenTextDocumentParams) {
        self.send(Event::Opened {
            uri: p.text_document.uri,
            text: p.text_document.text,
            version: p.text_document.version,
        });
    }

    async fn did_change(&self, p: DidChangeTextDocumentParams) {
        self.send(Event::Changed {
            uri: p.text_document.uri,
            version: p.text_document.version,
            changes: p.content_changes,
        });
    }

    async fn did_save(&self, p: DidSaveTextDocumentParams) {
        self.send(Event::Saved { uri: p.text_document.uri });
    }

    async fn did_close(&self, p: DidCloseTextDocumentParams) {
        self.send(Event::Closed { uri: p.text_document.uri });
    }

    async fn did_change_configuration(&self, p: DidChangeConfigurationParams) {
        self.send(Event::Configuration(p.settings));
    }

    async fn code_lens(&self, p: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let snap = self.snapshot();
        let uri = p.text_document.uri;
        let mut lenses = Vec::new();
        if let Some(saving) = snap.fix_saving.as_ref().filter(|s| s.uri == uri) {
            let at = Position { line: saving.line, character: 0 };
            lenses.push(CodeLens {
                range: Range { start: at, end: at },
                command: Some(Command {
                    title: format!("Bloatlens quick fix: {}", saving.text),
                    command: String::new(),
                    arguments: None,
                }),
                data: None,
            });
        }
        if let Some(index) = snap.text_of(&uri) {
            let tree = mapping::parse(&index.text);
            for m in mapping::main_methods(&index.text, tree.as_ref()) {
                let range = index.range(m.name_span.0, m.name_span.1, snap.encoding);
                lenses.push(CodeLens {
                    range,
                    command: Some(Command {
                        title: "▶ Profile with Bloatlens".into(),
                        command: "bloatlens.profile".into(),
                        arguments: Some(vec![serde_json::json!(uri), serde_json::json!(m.class)]),
                    }),
                    data: None,
                });
            }
            // JUnit tests: a lens to profile each test and each test class, and, after a test
            // run, how each test ended (clicking it runs the test again).
            let outcomes = snap.report.as_ref().map(|r| r.tests.as_slice()).unwrap_or_default();
            for t in mapping::test_entries(&index.text, tree.as_ref()) {
                let range = index.range(t.name_span.0, t.name_span.1, snap.encoding);
                let selector = t.selector();
                let profile = |title: String| CodeLens {
                    range,
                    command: Some(Command {
                        title,
                        command: "bloatlens.profile".into(),
                        arguments: Some(vec![serde_json::json!(uri), serde_json::json!({ "test": selector })]),
                    }),
                    data: None,
                };
                let title = if t.method.is_some() { "▶ Profile test" } else { "▶ Profile tests" };
                lenses.push(profile(title.into()));
                if let Some(method) = &t.method {
                    let ended = outcomes.iter().find(|o| o.class == t.class && o.method == *method);
                    if let Some(o) = ended {
                        lenses.push(profile(to_proto::test_lens_title(o)));
                    }
                }
            }
        }
        // The file's top findings by what a fix would save, whatever their kind; one lens a line.
        let mut top: Vec<&Mapped> = snap.findings_in(&uri).filter(|m| !m.stale).collect();
        top.sort_by(|a, b| b.finding.share.total_cmp(&a.finding.share));
        let mut lines = std::collections::HashSet::new();
        top.retain(|m| lines.insert(m.range.start.line));
        for m in top.into_iter().take(snap.config.max_lenses_per_file) {
            lenses.push(CodeLens {
                range: m.range,
                command: Some(Command {
                    title: to_proto::lens_title(&m.finding),
                    command: "bloatlens.showChain".into(),
                    // The finding itself, by its key: the line may hold others.
                    arguments: Some(vec![
                        serde_json::json!(m.uri),
                        serde_json::json!(m.range.start),
                        serde_json::json!({ "finding": m.key }),
                    ]),
                }),
                data: None,
            });
        }
        Ok(Some(lenses))
    }

    async fn hover(&self, p: HoverParams) -> Result<Option<Hover>> {
        let snap = self.snapshot();
        let (uri, pos) = (p.text_document_position_params.text_document.uri, p.text_document_position_params.position);
        let hits: Vec<&Mapped> = snap
            .findings_in(&uri)
            .filter(|m| m.range.start.line == pos.line || (m.range.start <= pos && pos <= m.range.end))
            .collect();
        if hits.is_empty() {
            return Ok(None);
        }
        let mut value = to_proto::hover_markdown(&hits);
        value.push_str(&to_proto::fix_offers_markdown(&hits, &snap.fixes));
        Ok(Some(Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }),
            range: Some(hits[0].range),
        }))
    }

    async fn inlay_hint(&self, p: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let snap = self.snapshot();
        if !snap.config.inlay_hints {
            return Ok(Some(Vec::new()));
        }
        let index = snap.text_of(&p.text_document.uri);
        let hints = snap
            .findings_in(&p.text_document.uri)
            .filter(|m| p.range.start.line <= m.range.start.line && m.range.start.line <= p.range.end.line)
            .filter_map(|m| {
                let end = index.as_ref()?.line_range(m.range.start.line as usize, snap.encoding).end;
                Some(InlayHint {
                    position: end,
                    label: InlayHintLabel::String(format!("  ⟵ {}", to_proto::lens_title(&m.finding))),
                    kind: None,
                    text_edits: None,
                    tooltip: None,
                    padding_left: Some(true),
                    padding_right: None,
                    data: None,
                })
            })
            .collect();
        Ok(Some(hints))
    }

    async fn code_action(&self, p: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let snap = self.snapshot();
        let uri = &p.text_document.uri;
        let mut actions = Vec::new();
        // Quick fixes first: each checked fix of a finding on the diagnostics' lines, on the text
        // it was made for.
        if let Some(index) = snap.text_of(uri) {
            let digest = crate::fix_check::digest(&index.text);
            let mut offered = std::collections::HashSet::new();
            for d in p.context.diagnostics.iter().filter(|d| d.source.as_deref() == Some(to_proto::SOURCE)) {
                for m in snap.findings_in(uri).filter(|m| m.range.start.line == d.range.start.line) {
                    let Some(crate::fix_check::Offer::Safe { fix, made_for, verdict }) = snap.fixes.get(&m.key) else {
                        continue;
                    };
                    if *made_for != digest || !offered.insert(m.key.clone()) {
                        continue;
                    }
                    actions.push(CodeActionOrCommand::CodeAction(to_proto::quick_fix(
                        uri,
                        &index,
                        snap.encoding,
                        fix,
                        verdict,
                        d,
                        &m.key,
                    )));
                }
            }
        }
        for d in p.context.diagnostics.iter().filter(|d| d.source.as_deref() == Some(to_proto::SOURCE)) {
            // A line's diagnostic carries every key of its findings: suppressing it removes them all.
            let Some(data) = d.data.as_ref() else { continue };
            let keys: Vec<serde_json::Value> = match data.get("keys").and_then(|k| k.as_array()) {
                Some(keys) => keys.clone(),
                None => data.get("key").into_iter().cloned().collect(),
            };
            if keys.is_empty() {
                continue;
            }
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!(
                    "Suppress this Bloatlens finding ({})",
                    d.code.as_ref().map(code_str).unwrap_or_default()
                ),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![d.clone()]),
                command: Some(Command {
                    title: "Suppress".into(),
                    command: "bloatlens.suppress".into(),
                    arguments: Some(keys),
                }),
                ..Default::default()
            }));
        }
        Ok(Some(actions))
    }

    async fn execute_command(&self, p: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let args = p.arguments;
        match p.command.as_str() {
            "bloatlens.profile" => {
                // Arguments: the file, then a main class, `{"test": "com.acme.FooTest#bar"}` or
                // `{"testsIn": "file:///…/src/test/java/com/acme"}` (a folder's test classes).
                let file = args.first().and_then(|v| serde_json::from_value::<Uri>(v.clone()).ok());
                let main_class = args.get(1).and_then(|v| v.as_str()).map(String::from);
                let test = args.get(1).and_then(|v| v.get("test")).and_then(|t| t.as_str()).map(String::from);
                if let Some(t) = &test {
                    if let Err(e) = bloatlens_profiler::junit::check_selector(t) {
                        return Err(tower_lsp_server::jsonrpc::Error::invalid_params(e.to_string()));
                    }
                }
                let tests_in = match args.get(1).and_then(|v| v.get("testsIn")) {
                    Some(folder) => Some(folder_arg(folder).map_err(tower_lsp_server::jsonrpc::Error::invalid_params)?),
                    None => None,
                };
                self.send(Event::Profile { main_class, test, tests_in, file });
                Ok(None)
            }
            "bloatlens.entryPoints" => {
                // Every main of the workspace (and of the given file, if it lies outside).
                let snap = self.snapshot();
                let file = args.first().and_then(|v| serde_json::from_value::<Uri>(v.clone()).ok());
                let found = snap.workspace_mains(file.as_ref());
                let mut mains: Vec<serde_json::Value> = found
                    .iter()
                    .map(|(class, path)| serde_json::json!({"class": class, "uri": to_proto::uri_of(path)}))
                    .collect();
                // Then launch.json's Java configurations (`launch` names one); those it cannot run, in the log.
                let (launches, skipped) = crate::launch::entry_points(snap.root.as_deref(), &found);
                mains.extend(launches);
                for line in skipped {
                    self.client.log_message(MessageType::INFO, line).await;
                }
                Ok(Some(serde_json::Value::Array(mains)))
            }
            "bloatlens.nextHop" | "bloatlens.prevHop" => {
                let snap = self.snapshot();
                let cursor = args.get(1).and_then(|p| serde_json::from_value::<Position>(p.clone()).ok());
                // A client walking a chain names it (`{"chain": key}`, from the last answer): the
                // walk stays on that chain whatever other findings the lines it lands on hold.
                let named = args
                    .get(2)
                    .and_then(|o| o.get("chain"))
                    .and_then(|v| v.as_str())
                    .and_then(|key| snap.findings.iter().find(|m| m.key == key));
                let found = match named {
                    Some(m) => {
                        let (uri, line) = (arg_uri(&args), cursor.map(|c| c.line));
                        Some((
                            m,
                            stops(m).iter().position(|(u, r)| Some(u) == uri.as_ref() && Some(r.start.line) == line),
                        ))
                    }
                    None => finding_at(&snap, &args),
                };
                let Some((m, mut at)) = found else { return Ok(None) };
                let stops = stops(m);
                // A chain within one method passes its lines more than once; a client that walks
                // it says which stop it is at (`{"stop": i}`, from the last answer) while the
                // cursor is still there.
                let hint = args.get(2).and_then(|o| o.get("stop")).and_then(|v| v.as_u64()).map(|v| v as usize);
                if let (Some(h), Some(pos)) = (hint, cursor) {
                    if stops.get(h).is_some_and(|(u, r)| Some(u) == arg_uri(&args).as_ref() && r.start.line == pos.line)
                    {
                        at = Some(h);
                    }
                }
                let i = match (p.command.as_str(), at) {
                    ("bloatlens.nextHop", Some(i)) => (i + 1).min(stops.len() - 1),
                    ("bloatlens.nextHop", None) => 0,
                    (_, Some(i)) => i.saturating_sub(1),
                    (_, None) => stops.len() - 1,
                };
                let (uri, range) = stops[i].clone();
                self.show(uri.clone(), range);
                // What the client says of the step: "stop 2 of 5 of the call path".
                let message =
                    format!("stop {} of {} of the {}", i + 1, stops.len(), to_proto::walk_name(m.finding.kind()));
                Ok(Some(serde_json::json!({
                    "uri": uri, "range": range, "hop": i, "of": stops.len(), "chain": m.key,
                    "kind": m.finding.kind(), "message": message,
                })))
            }
            "bloatlens.showChain" => {
                let snap = self.snapshot();
                let Some((m, _)) = finding_at(&snap, &args) else { return Ok(None) };
                let hops: Vec<serde_json::Value> =
                    std::iter::once(serde_json::json!({"uri": m.uri, "range": m.range, "role": m.finding.message}))
                        .chain(
                            m.related
                                .iter()
                                .map(|r| serde_json::json!({"uri": r.uri, "range": r.range, "role": r.role})),
                        )
                        .collect();
                // A third argument `{"reveal": false}` asks for the hops only (a client's own picker).
                let reveal = args.get(2).and_then(|o| o.get("reveal")).and_then(|r| r.as_bool()).unwrap_or(true);
                if let (true, Some(first)) = (reveal, m.related.first()) {
                    self.show(first.uri.clone(), first.range);
                }
                // The picker's title: "copy chain · 5 places".
                let title = format!(
                    "{} · {} place{}",
                    to_proto::walk_name(m.finding.kind()),
                    hops.len(),
                    if hops.len() == 1 { "" } else { "s" }
                );
                Ok(Some(serde_json::json!({ "kind": m.finding.kind(), "key": m.key, "title": title, "hops": hops })))
            }
            "bloatlens.fixApplied" => {
                if let Some(key) = args.first().and_then(|v| v.as_str()) {
                    self.send(Event::FixApplied { key: key.to_string() });
                }
                Ok(None)
            }
            "bloatlens.suppress" => {
                let keys: Vec<String> = args.iter().filter_map(|v| v.as_str()).map(String::from).collect();
                if !keys.is_empty() {
                    self.send(Event::Suppress(keys));
                }
                Ok(None)
            }
            "bloatlens.status" => {
                let snap = self.snapshot();
                Ok(Some(serde_json::json!({
                    "status": format!("{:?}", snap.status),
                    "findings": snap.findings.len(),
                    "stale": snap.findings.iter().filter(|m| m.stale).count(),
                })))
            }
            other => Err(Error::invalid_params(format!("unknown command {other}"))),
        }
    }
}

fn code_str(c: &NumberOrString) -> String {
    match c {
        NumberOrString::String(s) => s.clone(),
        NumberOrString::Number(n) => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_to_profile_is_a_file_uri() {
        let folder = folder_arg(&serde_json::json!("file:///ws/core/src/test/java/com/acme%20shop")).unwrap();
        assert_eq!(folder, std::path::PathBuf::from("/ws/core/src/test/java/com/acme shop"));
        for wrong in [serde_json::json!(3), serde_json::json!("core/src/test"), serde_json::json!("https://x/y")] {
            let e = folder_arg(&wrong).unwrap_err();
            assert!(e.starts_with("`testsIn` is a folder's file URI"), "{wrong}: {e}");
        }
    }
}

//! A scripted editor for the server: spawns the `bloatlens-lsp` binary on stdio with real
//! Content-Length framing and lets a test (or the latency bench) drive it message by message.
//! Every message the server sends must be consumed, in order; one left over fails `finish`.

use crate::warm_javac::ARCHIVES;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const WAIT: Duration = Duration::from_secs(120);

pub struct Editor {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
    pub root: PathBuf,
    /// The server's `XDG_CACHE_HOME`.
    cache: PathBuf,
    /// The server's `TMPDIR`: its scratch directory is made there, inside the test's own.
    tmp: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Editor {
    /// What its server trained is kept for the next editors.
    fn drop(&mut self) {
        share_class_archives(&self.cache.join("bloatlens").join(ARCHIVES), &shared_class_archives());
    }
}

/// The warm compiler's class archives ([`crate::warm_javac`]), shared by the editors of one
/// machine's tests and benches: each editor has a cache of its own (so that every test starts
/// with no project cached), into which the archives one server trained are hard-linked.
fn shared_class_archives() -> PathBuf {
    std::env::temp_dir().join(format!("bloatlens-harness-archives-{}", bloatlens_profiler::private_dir::user_id()))
}

/// Hard-links the class archives of `from` that `to` lacks into it (each made private first).
fn share_class_archives(from: &Path, to: &Path) {
    if bloatlens_profiler::private_dir::ensure(from).and_then(|_| bloatlens_profiler::private_dir::ensure(to)).is_err()
    {
        return;
    }
    for entry in std::fs::read_dir(from).into_iter().flatten().flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().ends_with(".jsa") && !to.join(&name).exists() {
            let _ = std::fs::hard_link(entry.path(), to.join(&name));
        }
    }
}

pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

impl Editor {
    /// Starts the server binary `server` in a fresh workspace holding `files`, and initializes it.
    pub fn start(server: &Path, files: &[(&str, &str)], options: Value) -> Editor {
        Editor::start_with(server, files, options, json!({}))
    }

    /// Like [`Editor::start`], with these client capabilities besides the usual ones (merged at
    /// the top level: `{"experimental": {...}, "workspace": {...}}`).
    pub fn start_with(server: &Path, files: &[(&str, &str)], options: Value, capabilities: Value) -> Editor {
        let dir = tempfile::tempdir().unwrap();
        // The workspace, and beside it (outside the workspace, as on a user's machine) the
        // server's persistent cache, so that every test starts with none.
        let root = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(&root).unwrap();
        for (name, text) in files {
            let p = root.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let tmp = dir.path().canonicalize().unwrap().join("tmp");
        Editor::spawn(server, dir, root, tmp, options, capabilities)
    }

    /// A second editor (a second server) on `other`'s workspace, as a second window on the same
    /// machine would be (the same temp dir).
    pub fn beside(server: &Path, other: &Editor, options: Value) -> Editor {
        Editor::spawn(server, tempfile::tempdir().unwrap(), other.root.clone(), other.tmp.clone(), options, json!({}))
    }

    fn spawn(
        server: &Path,
        dir: tempfile::TempDir,
        root: PathBuf,
        tmp: PathBuf,
        options: Value,
        capabilities: Value,
    ) -> Editor {
        let cache = dir.path().canonicalize().unwrap().join("cache");
        share_class_archives(&shared_class_archives(), &cache.join("bloatlens").join(ARCHIVES));
        std::fs::create_dir_all(&tmp).unwrap();
        let mut child = Command::new(server)
            .env("XDG_CACHE_HOME", &cache)
            .env("TMPDIR", &tmp)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || loop {
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("Content-Length: ") {
                    len = v.parse().unwrap();
                }
            }
            let mut body = vec![0; len];
            stdout.read_exact(&mut body).unwrap();
            if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                return;
            }
        });
        let mut ed = Editor { child, stdin, incoming, next_id: 1, root: root.clone(), cache, tmp, _dir: dir };
        let mut caps = json!({
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": true, "showDocument": {"support": true}},
            "textDocument": {"publishDiagnostics": {"relatedInformation": true}}
        });
        if let (Some(caps), Some(extra)) = (caps.as_object_mut(), capabilities.as_object()) {
            caps.extend(extra.clone());
        }
        let id = ed.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": uri(&root),
                "workspaceFolders": [{"uri": uri(&root), "name": "ws"}],
                "capabilities": caps,
                "initializationOptions": options
            }),
        );
        let init = ed.response(id);
        assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
        assert_eq!(init["serverInfo"]["name"], "bloatlens-lsp");
        ed.notify("initialized", json!({}));
        ed
    }

    pub fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Writes `bytes` to the server as they are (malformed frames for the robustness tests).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn next_message(&mut self) -> Value {
        match self.incoming.recv_timeout(WAIT) {
            Ok(v) => v,
            Err(e) => panic!("no message from the server within {WAIT:?}: {e}"),
        }
    }

    /// The next message must be the response to `id`.
    pub fn response(&mut self, id: i64) -> Value {
        let m = self.next_message();
        assert_eq!(m["id"], id, "expected the response to request {id}, got {m}");
        assert!(m.get("error").is_none(), "error response: {m}");
        m["result"].clone()
    }

    /// The next message must be a notification `method`.
    pub fn notification(&mut self, method: &str) -> Value {
        let m = self.next_message();
        assert_eq!(m["method"], method, "expected {method}, got {m}");
        assert!(m.get("id").is_none(), "{method} should be a notification: {m}");
        m["params"].clone()
    }

    /// The next message must be a request `method` from the server; answers it with `result`.
    pub fn server_request(&mut self, method: &str, result: Value) -> Value {
        let m = self.next_message();
        assert_eq!(m["method"], method, "expected the request {method}, got {m}");
        let id = m["id"].clone();
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
        m["params"].clone()
    }

    /// The response to `id` and a message `method` the server sends because of it, in either
    /// order (the server sends it from its state task or a spawned task, so it may come first).
    /// A request is answered with `answer`. Returns (result, the message's params).
    pub fn response_and(&mut self, id: i64, method: &str, answer: Value) -> (Value, Value) {
        let (mut result, mut other) = (None, None);
        while result.is_none() || other.is_none() {
            let m = self.next_message();
            if m["method"] == method && other.is_none() {
                if m.get("id").is_some() {
                    self.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": answer}));
                }
                other = Some(m["params"].clone());
            } else {
                assert_eq!(m["id"], id, "expected the response to {id} or {method}, got {m}");
                assert!(m.get("error").is_none(), "error response: {m}");
                result = Some(m["result"].clone());
            }
        }
        (result.unwrap(), other.unwrap())
    }

    /// Every message up to and including the first that `last` accepts, whatever their order;
    /// requests from the server among them are answered with `null`.
    pub fn until(&mut self, mut last: impl FnMut(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let m = self.next_message();
            if m.get("method").is_some() && m.get("id").is_some() {
                self.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": null}));
            }
            let done = last(&m);
            seen.push(m);
            if done {
                return seen;
            }
        }
    }

    /// A command answered with a `window/showDocument` request: (result, shown params).
    pub fn command_showing(&mut self, id: i64) -> (Value, Value) {
        self.response_and(id, "window/showDocument", json!({"success": true}))
    }

    /// A run's progress: the token is created, the progress begins and ends.
    pub fn progress(&mut self) -> Value {
        let created = self.server_request("window/workDoneProgress/create", Value::Null);
        self.progress_after_create(created)
    }

    /// The rest of a run's progress once its `create` request was consumed (and answered).
    pub fn progress_after_create(&mut self, created: Value) -> Value {
        let begin = self.notification("$/progress");
        assert_eq!(begin["value"]["kind"], "begin");
        assert_eq!(begin["token"], created["token"]);
        assert_eq!(begin["value"]["cancellable"], true);
        let end = self.notification("$/progress");
        assert_eq!(end["value"]["kind"], "end");
        created["token"].clone()
    }

    pub fn open(&mut self, name: &str) -> String {
        let path = self.root.join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let u = uri(&path);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": u, "languageId": "java", "version": 1, "text": text}}),
        );
        u
    }

    pub fn save(&mut self, u: &str) {
        self.notify("textDocument/didSave", json!({"textDocument": {"uri": u}}));
    }

    /// Diagnostics published for `u` (others before it fail the test).
    pub fn diagnostics(&mut self, u: &str) -> Vec<Value> {
        let p = self.notification("textDocument/publishDiagnostics");
        assert_eq!(p["uri"], u, "diagnostics for another file: {p}");
        p["diagnostics"].as_array().unwrap().clone()
    }

    /// Every message until none comes for `quiet`; requests from the server are answered with `null`.
    pub fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        let mut seen = Vec::new();
        while let Ok(m) = self.incoming.recv_timeout(quiet) {
            if m.get("method").is_some() && m.get("id").is_some() {
                self.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": null}));
            }
            seen.push(m);
        }
        seen
    }

    /// Every message that comes within the next `window` (however many keep coming); requests from
    /// the server are answered with `null`.
    pub fn within(&mut self, window: Duration) -> Vec<Value> {
        let deadline = Instant::now() + window;
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Ok(m) = self.incoming.recv_timeout(left) else { break };
            if m.get("method").is_some() && m.get("id").is_some() {
                self.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": null}));
            }
            seen.push(m);
        }
        seen
    }

    /// The server process's resident memory, in bytes (Linux: from /proc).
    pub fn resident_bytes(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let kb: u64 =
            status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kb * 1024)
    }

    /// The server's temp dir (`TMPDIR`), where it makes its scratch directory.
    pub fn temp_dir(&self) -> &Path {
        &self.tmp
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends the server `signal` (`TERM`, `KILL`, …) as an editor stopping it would, and waits
    /// for it to end; its exit status.
    pub fn signal(&mut self, signal: &str) -> std::process::ExitStatus {
        let sent = Command::new("kill").arg(format!("-{signal}")).arg(self.child.id().to_string()).status().unwrap();
        assert!(sent.success(), "kill -{signal} failed");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        panic!("the server did not end on SIG{signal}");
    }

    /// Shuts down cleanly; fails if the server sent anything the test did not consume.
    pub fn finish(self) {
        self.finish_timed();
    }

    /// [`Editor::finish`], returning how long the process took to end after `exit`.
    pub fn finish_timed(mut self) -> Duration {
        match self.incoming.recv_timeout(Duration::from_millis(500)) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(m) => panic!("unconsumed message from the server: {m}"),
            Err(e) => panic!("server gone: {e}"),
        }
        let id = self.request("shutdown", Value::Null);
        self.response(id);
        self.notify("exit", Value::Null);
        let exit_sent = Instant::now();
        while exit_sent.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(status)) = self.child.try_wait() {
                assert!(status.success(), "server exited with {status}");
                return exit_sent.elapsed();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        panic!("server did not exit after `exit`");
    }
}

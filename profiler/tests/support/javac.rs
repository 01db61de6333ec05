//! javac for the test suites: a warm compiler per JDK (`JavacServer.java`, kept running and fed program
//! after program), since starting javac's JVM and warming the compiler up costs more than compiling
//! a suite's small program. The class files are the `javac` command's: the same compiler, the same
//! arguments. A server that cannot be started or that fails mid-request is dropped, and that
//! compilation (and the next) runs the `javac` command instead.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

/// A JDK's compiler and launcher.
#[derive(Clone, Copy)]
pub struct Tools<'a> {
    pub javac: &'a Path,
    pub java: &'a Path,
}

/// What javac said: its exit status and its messages.
pub struct Compiled {
    pub status: i32,
    pub messages: String,
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(jdk: Tools) -> Option<Server> {
        let classes = server_classes(jdk)?;
        let mut child = Command::new(jdk.java)
            .args(["-Xshare:auto", "-XX:+UseSerialGC", "-Xmx1g", "-cp"])
            .arg(classes)
            .arg("JavacServer")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take()?;
        let stdout = BufReader::new(child.stdout.take()?);
        Some(Server { child, stdin, stdout })
    }

    fn compile(&mut self, args: &[String]) -> std::io::Result<Compiled> {
        let request = args.join("\0");
        if request.contains('\n') {
            return Err(std::io::Error::other("an argument holds a line break"));
        }
        self.stdin.write_all(format!("{request}\n").as_bytes())?;
        self.stdin.flush()?;
        let mut header = String::new();
        self.stdout.read_line(&mut header)?;
        let mut fields = header.split_whitespace().map(str::parse::<usize>);
        let (Some(Ok(status)), Some(Ok(len))) = (fields.next(), fields.next()) else {
            return Err(std::io::Error::other(format!("the javac server answered {header:?}")));
        };
        let mut text = vec![0; len];
        self.stdout.read_exact(&mut text)?;
        Ok(Compiled { status: status as i32, messages: String::from_utf8_lossy(&text).into_owned() })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Idle servers, by the `javac` of their JDK: a test thread takes one (or starts one) and gives it
/// back, so that threads compile side by side.
static IDLE: Mutex<Vec<(PathBuf, Server)>> = Mutex::new(Vec::new());

/// The directory holding `JavacServer.class` compiled by this JDK (once per JDK and test binary),
/// or None when that failed.
fn server_classes(jdk: Tools) -> Option<PathBuf> {
    static BUILT: Mutex<Option<HashMap<PathBuf, Option<PathBuf>>>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    built
        .get_or_insert_with(HashMap::new)
        .entry(jdk.javac.to_path_buf())
        .or_insert_with(|| {
            // Under Cargo's directory for integration tests' files, not the system's temp directory.
            let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).ok()?.keep();
            let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/JavacServer.java");
            let ok = Command::new(jdk.javac).arg("-d").arg(&dir).arg(source).output().ok()?.status.success();
            ok.then_some(dir)
        })
        .clone()
}

/// Compiles with `args` (javac's arguments) on a warm server of `jdk`, else with the `javac`
/// command; Err only when neither could run.
pub fn javac(jdk: Tools, args: &[String]) -> Result<Compiled, String> {
    let taken = {
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        idle.iter().position(|(javac, _)| *javac == jdk.javac).map(|i| idle.swap_remove(i).1)
    };
    if let Some(mut server) = taken.or_else(|| Server::start(jdk)) {
        if let Ok(compiled) = server.compile(args) {
            IDLE.lock().unwrap_or_else(|e| e.into_inner()).push((jdk.javac.to_path_buf(), server));
            return Ok(compiled);
        }
    }
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| eprintln!("*** the warm javac server failed: compiling with the `javac` command (slower) ***"));
    let output = Command::new(jdk.javac).args(args).output().map_err(|e| format!("cannot run javac: {e}"))?;
    Ok(Compiled {
        status: output.status.code().unwrap_or(-1),
        messages: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

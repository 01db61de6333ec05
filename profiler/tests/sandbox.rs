//! A sandboxed run (`RunConfig::sandbox`: the language server's runs, `--sandbox`): what the program
//! changes in its workspace goes to an overlay it alone sees (or, when allowed, to the workspace),
//! a change anywhere else fails as a permission problem, and its temporary files are its own.
//!
//! The programs are conformance programs (`fixtures/conformance/file_changes`, `writes_elsewhere`),
//! which the conformance suite also runs unsandboxed against HotSpot; here they get a directory.
//! They run on the default JDK and, when it is installed, on JDK 25 (whose natives differ).

mod hotspot;

use bloatlens_profiler::run::{run, RunConfig, RunResult};
use bloatlens_profiler::vm::sandbox::{SandboxConfig, WorkspaceWrites};
use bloatlens_profiler::vm::Outcome;
use hotspot::Jdk;
use std::path::{Path, PathBuf};
use std::process::Command;

fn conformance(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/conformance").join(name).join("Main.java")
}

/// The default JDK, and JDK 25 when it is installed.
fn jdks() -> Vec<Jdk> {
    std::iter::once(Jdk::default_jdk()).chain(Jdk::jdk25().ok()).collect()
}

/// Compiles Java sources into `out` with the default JDK's javac.
fn javac(sources: &[PathBuf], out: &Path) {
    javac_of(&Jdk::default_jdk(), sources, out)
}

/// `source` as `root/Main.java`, compiled into `root/classes` (returned).
fn compile_main(root: &Path, source: &str) -> PathBuf {
    let src = root.join("Main.java");
    std::fs::write(&src, source).unwrap();
    let classes = root.join("classes");
    javac(&[src], &classes);
    classes
}

fn javac_of(jdk: &Jdk, sources: &[PathBuf], out: &Path) {
    let o = Command::new(&jdk.javac).arg("-d").arg(out).args(sources).output().expect("javac (a JDK) on PATH");
    assert!(o.status.success(), "javac: {}", String::from_utf8_lossy(&o.stderr));
}

/// Every entry under `dir` (relative), with a file's contents or a link's target: what a run left.
fn snapshot(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.strip_prefix(dir).unwrap().display().to_string();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.file_type().is_symlink() {
                out.push(format!("{name} -> {}", std::fs::read_link(&p).unwrap().display()));
            } else if m.is_dir() {
                out.push(format!("{name}/"));
                stack.push(p);
            } else {
                out.push(format!("{name}: {:?}", std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// What `file_changes` expects to find in its directory.
fn seed(dir: &Path) {
    std::fs::create_dir_all(dir.join("docs/old")).unwrap();
    std::fs::write(dir.join("existing.txt"), "one\ntwo\n").unwrap();
    std::fs::write(dir.join("docs/readme.md"), "# docs\n").unwrap();
    std::fs::write(dir.join("docs/old/notes.txt"), "old notes\n").unwrap();
}

/// The VM runs `Main` of `classes` in `cwd` with `args`, sandboxed by `sandbox`.
fn run_vm(classes: &Path, cwd: &Path, args: &[&str], sandbox: Option<SandboxConfig>) -> RunResult {
    run_on(&Jdk::default_jdk(), classes, cwd, args, sandbox)
}

fn run_on(jdk: &Jdk, classes: &Path, cwd: &Path, args: &[&str], sandbox: Option<SandboxConfig>) -> RunResult {
    let mut config = RunConfig::new(classes.display().to_string(), "Main");
    config.jdk = jdk.home.clone();
    config.args = args.iter().map(|a| a.to_string()).collect();
    config.cwd = Some(cwd.to_path_buf());
    config.capture = true;
    config.sandbox = sandbox;
    let result = run(&config).expect("the VM starts");
    assert!(
        matches!(result.outcome, Outcome::Exited(0)),
        "{:?}: {}",
        result.outcome,
        String::from_utf8_lossy(&result.stderr)
    );
    result
}

fn stdout(r: &RunResult) -> String {
    String::from_utf8_lossy(&r.stdout).into_owned()
}

/// The program writes, appends, lists, renames, moves, deletes, links and copies files in its
/// workspace and reads each change back: sandboxed with the overlay it prints exactly what HotSpot
/// prints doing it for real, and the workspace is as it was; with changes allowed, the workspace
/// ends as HotSpot left its copy. Either way the run's changes are in its log.
#[test]
fn changes_in_the_workspace_go_to_the_overlay_where_the_program_sees_them() {
    for jdk in jdks() {
        in_the_workspace(&jdk);
    }
}

fn in_the_workspace(jdk: &Jdk) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let classes = root.join("classes");
    javac_of(jdk, &[conformance("file_changes")], &classes);
    let (hotspot_ws, ws) = (root.join("hotspot"), root.join("ws"));
    seed(&hotspot_ws);
    seed(&ws);
    let seeded = snapshot(&ws);
    let java = Command::new(&jdk.java)
        .args(["-cp"])
        .arg(&classes)
        .args(["Main", "."])
        .current_dir(&hotspot_ws)
        .output()
        .unwrap();
    assert!(java.status.success(), "java: {}", String::from_utf8_lossy(&java.stderr));
    let expected = String::from_utf8_lossy(&java.stdout).into_owned();
    assert!(expected.contains("renameTo: true") && expected.contains("  out/final.txt (5)"), "{expected}");

    let overlay = SandboxConfig::new(&ws, WorkspaceWrites::Overlay, "the test's hint");
    let log = overlay.log.clone();
    let r = run_on(jdk, &classes, &ws, &["."], Some(overlay));
    assert_eq!(stdout(&r), expected, "the program saw its own changes as on HotSpot");
    assert_eq!(snapshot(&ws), seeded, "the workspace did not change");
    let written = log.written();
    for changed in ["existing.txt", "out/nested/deeper/p.txt", "archive/docs", "docs", "link.txt", "hard.txt"] {
        assert!(written.contains(&ws.join(changed)), "{changed} not in the log: {written:?}");
    }
    assert!(log.refused().is_empty(), "{:?}", log.refused());

    let allow = SandboxConfig::new(&ws, WorkspaceWrites::Allow, "the test's hint");
    let log = allow.log.clone();
    let r = run_on(jdk, &classes, &ws, &["."], Some(allow));
    assert_eq!(stdout(&r), expected);
    assert_eq!(snapshot(&ws), snapshot(&hotspot_ws), "the changes landed as HotSpot's did");
    assert!(log.written().contains(&ws.join("copy.txt")));
}

/// The same program in a workspace that is a symbolic link, and a workspace named with `..`:
/// the overlay still holds the changes (the sandbox compares canonical paths).
#[test]
fn a_workspace_named_through_a_link_or_dots_is_the_same_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let classes = root.join("classes");
    javac(&[conformance("file_changes")], &classes);
    let real = root.join("real");
    seed(&real);
    let seeded = snapshot(&real);
    std::os::unix::fs::symlink(&real, root.join("alias")).unwrap();
    for (workspace, cwd) in [(root.join("alias"), real.clone()), (root.join("classes/../real"), root.join("alias"))] {
        let r = run_vm(&classes, &cwd, &["."], Some(SandboxConfig::new(&workspace, WorkspaceWrites::Overlay, "hint")));
        assert!(stdout(&r).contains("renameTo: true old exists false"), "{}", stdout(&r));
        assert_eq!(snapshot(&real), seeded, "workspace {}", workspace.display());
    }
}

/// What `writes_elsewhere` prints when every change of its directory is refused: java.io's
/// `FileNotFoundException` and `IOException`, false from the methods that answer so, NIO's
/// `AccessDeniedException` — what each API gives for a permission problem — each with the
/// sandbox's reason; reads and temporary files work.
const REFUSED: &str = "\
read: original
RandomAccessFile r: original
newByteChannel READ: 9
list: 1
FileOutputStream: java.io.FileNotFoundException (sandbox)
FileOutputStream append: java.io.FileNotFoundException (sandbox)
FileOutputStream new: java.io.FileNotFoundException (sandbox)
FileWriter: java.io.FileNotFoundException (sandbox)
RandomAccessFile rw: java.io.FileNotFoundException (sandbox)
createNewFile: java.io.IOException (sandbox)
mkdir: false
mkdirs: false
setLastModified: false
setReadOnly: false
setWritable: false
setExecutable: false
canWrite: false
Files.writeString: java.nio.file.AccessDeniedException (sandbox)
Files.write APPEND: java.nio.file.AccessDeniedException (sandbox)
newOutputStream: java.nio.file.AccessDeniedException (sandbox)
FileChannel WRITE: java.nio.file.AccessDeniedException (sandbox)
newByteChannel CREATE_NEW: java.nio.file.AccessDeniedException (sandbox)
createFile: java.nio.file.AccessDeniedException (sandbox)
createDirectory: java.nio.file.AccessDeniedException (sandbox)
createDirectories: java.nio.file.AccessDeniedException (sandbox)
setLastModifiedTime: java.nio.file.AccessDeniedException (sandbox)
setPosixFilePermissions: java.nio.file.AccessDeniedException (sandbox)
createSymbolicLink: java.nio.file.AccessDeniedException (sandbox)
createLink: java.nio.file.AccessDeniedException (sandbox)
copy: java.nio.file.AccessDeniedException (sandbox)
isWritable: false
createTempFile: true
Files.createTempFile: ok
createTempDirectory: ok
renameTo: false
Files.move: java.nio.file.AccessDeniedException (sandbox)
File.delete: false
Files.delete: java.nio.file.AccessDeniedException (sandbox)
deleteIfExists: false
left: victim.txt
";

/// Changes aimed outside the workspace — by an absolute path, through `..`, through a link in
/// the workspace — are refused in both modes, and the directory is left as it was.
#[test]
fn changes_outside_the_workspace_are_refused_as_permission_problems() {
    for jdk in jdks() {
        outside_the_workspace(&jdk);
    }
}

fn outside_the_workspace(jdk: &Jdk) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let classes = root.join("classes");
    javac_of(jdk, &[conformance("writes_elsewhere")], &classes);
    let (ws, outside) = (root.join("ws"), root.join("outside"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("victim.txt"), "original\n").unwrap();
    std::os::unix::fs::symlink("../outside", ws.join("link-out")).unwrap();
    let before = (snapshot(&outside), snapshot(&ws));
    let absolute = outside.display().to_string();
    for writes in [WorkspaceWrites::Overlay, WorkspaceWrites::Allow] {
        for aim in [absolute.as_str(), "../outside", "link-out", "link-out/../outside"] {
            let config = SandboxConfig::new(&ws, writes, "the test's hint");
            let log = config.log.clone();
            let r = run_on(jdk, &classes, &ws, &[aim], Some(config));
            assert_eq!(stdout(&r), REFUSED, "{writes:?}, aimed at {aim}");
            assert_eq!((snapshot(&outside), snapshot(&ws)), before, "{writes:?}, aimed at {aim}");
            let refused = log.refused();
            assert!(refused.contains(&format!("write {absolute}/victim.txt")), "{refused:?}");
            assert!(refused.contains(&format!("delete {absolute}/victim.txt")), "{refused:?}");
            assert!(log.written().is_empty(), "nothing changed in the workspace: {:?}", log.written());
        }
    }
}

/// The messages say who refused and how to allow it; the temporary directory is the run's own
/// (not the system's), and goes with it.
#[test]
fn a_refusal_says_why_and_the_temporary_directory_is_private() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let classes = compile_main(
        &root,
        r#"import java.io.*;
import java.nio.file.*;
public class Main {
    public static void main(String[] args) throws Exception {
        try { new FileOutputStream(args[0]); } catch (IOException e) { System.out.println(e); }
        try { Files.writeString(Path.of(args[0]), "x"); } catch (IOException e) { System.out.println(e); }
        try { new File(args[0]).createNewFile(); } catch (IOException e) { System.out.println(e); }
        File t = File.createTempFile("bl-", ".tmp");
        System.out.println(System.getProperty("java.io.tmpdir"));
        System.out.println(t.exists() + " " + t.getParent().equals(System.getProperty("java.io.tmpdir")));
    }
}
"#,
    );
    let ws = root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let target = root.join("out.txt").display().to_string();
    let config = SandboxConfig::new(&ws, WorkspaceWrites::Overlay, "run it without --sandbox to allow them");
    let r = run_vm(&classes, &ws, &[&target], Some(config));
    let out = stdout(&r);
    let lines: Vec<&str> = out.lines().collect();
    let reason = format!(
        "Permission denied: Bloatlens's sandbox refuses writes outside the workspace {} (run it without --sandbox to allow them)",
        ws.display()
    );
    assert_eq!(lines[0], format!("java.io.FileNotFoundException: {target} ({reason})"));
    assert_eq!(lines[1], format!("java.nio.file.AccessDeniedException: {target}: {reason}"));
    assert_eq!(lines[2], format!("java.io.IOException: {reason}"));
    let tmpdir = PathBuf::from(lines[3]);
    assert_ne!(tmpdir, Path::new("/tmp"));
    assert!(!tmpdir.starts_with(&ws), "{}", tmpdir.display());
    assert_eq!(lines[4], "true true");
    assert!(!tmpdir.exists(), "the run's temporary directory is removed with it");
    assert!(!Path::new(&target).exists());
}

/// Sockets in a sandboxed run: the loopback interface works as on HotSpot (the conformance program
/// `sockets`: servers, clients, selectors, the JDK's HTTP server and client, all on 127.0.0.1);
/// listening on every interface listens on loopback alone; any other address is refused with a
/// `SocketException` that says why and how to allow it.
#[test]
fn a_sandboxed_run_reaches_loopback_only() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let ws = root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let jdk = Jdk::default_jdk();
    let classes = root.join("sockets");
    javac(&[conformance("sockets")], &classes);
    let java = Command::new(&jdk.java).arg("-cp").arg(&classes).arg("Main").output().unwrap();
    assert!(java.status.success(), "java: {}", String::from_utf8_lossy(&java.stderr));
    let config = SandboxConfig::new(&ws, WorkspaceWrites::Overlay, "run it without --sandbox to allow them");
    let r = run_vm(&classes, &ws, &[], Some(config));
    assert_eq!(stdout(&r), String::from_utf8_lossy(&java.stdout), "loopback as on HotSpot");

    let classes = compile_main(
        &root,
        r#"import java.io.*;
import java.net.*;
public class Main {
    public static void main(String[] args) throws Exception {
        try (java.nio.channels.ServerSocketChannel server = java.nio.channels.ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(0));
            InetSocketAddress bound = (InetSocketAddress) server.getLocalAddress();
            System.out.println("listening on " + bound.getAddress().getHostAddress());
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), bound.getPort())) {
                System.out.println("connected: " + s.isConnected());
            }
        }
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getByAddress(new byte[] {(byte) 192, 0, 2, 1}), 80), 2000);
            System.out.println("connected outside");
        } catch (IOException e) {
            System.out.println(e);
        }
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getByAddress(new byte[] {(byte) 192, 0, 2, 1}), 0));
        } catch (IOException e) {
            System.out.println(e);
        }
    }
}
"#,
    );
    let config = SandboxConfig::new(&ws, WorkspaceWrites::Overlay, "run it without --sandbox to allow them");
    let out = stdout(&run_vm(&classes, &ws, &[], Some(config)));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "listening on 127.0.0.1", "{out}");
    assert_eq!(lines[1], "connected: true", "{out}");
    let why = |what: &str| {
        format!("java.net.SocketException: Permission denied: Bloatlens's sandbox refuses {what}: a sandboxed run reaches 127.0.0.1 only (run it without --sandbox to allow them)")
    };
    assert_eq!(lines[2], why("connecting to 192.0.2.1"), "{out}");
    assert_eq!(lines[3], why("listening on 192.0.2.1"), "{out}");
}

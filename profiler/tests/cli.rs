//! The `bloatlens run` command line on bad input and at its limits: each case is one clear line
//! on stderr and exit status 2 (VM errors), or a Java-level outcome (an exception thrown in Java).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Compiles Java sources (name, text) into a fresh directory.
fn compile(sources: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let mut files = Vec::new();
    for (name, text) in sources {
        let p = src.join(name);
        std::fs::write(&p, text).unwrap();
        files.push(p);
    }
    let out = Command::new("javac").arg("-d").arg(dir.path().join("classes")).args(&files).output().unwrap();
    assert!(out.status.success(), "javac: {}", String::from_utf8_lossy(&out.stderr));
    dir
}

fn classes(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("classes")
}

fn bloatlens(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bloatlens")).args(args).output().unwrap()
}

fn run_in(cp: &Path, main: &str, extra: &[&str]) -> Output {
    let cp = cp.display().to_string();
    let mut args = vec!["run"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-cp", &cp, main]);
    bloatlens(&args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// One `bloatlens: error:` line, nothing else (no panic, no backtrace), status 2.
fn assert_vm_error(o: &Output, needle: &str) {
    assert_stopped(o, 2, needle);
}

/// One line on stderr, `bloatlens: error: …needle…`, and exit status `status`.
fn assert_stopped(o: &Output, status: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(status), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line expected, got: {err}");
    assert!(err.starts_with("bloatlens: error: "), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in {err:?}");
}

const HELLO: &str =
    "public class Hello { public static void main(String[] a) { System.out.println(\"hi \" + a.length); } }";

#[test]
fn runs_a_program_with_arguments() {
    let d = compile(&[("Hello.java", HELLO)]);
    let cp = classes(&d).display().to_string();
    let o = bloatlens(&["run", "-cp", &cp, "Hello", "x", "-y"]);
    assert_eq!(stdout(&o), "hi 2\n");
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn missing_main_class() {
    let d = compile(&[("Hello.java", HELLO)]);
    assert_vm_error(&run_in(&classes(&d), "Nope", &[]), "could not find or load main class Nope");
}

#[test]
fn class_without_main_method() {
    let d = compile(&[("NoMain.java", "public class NoMain { static void helper() {} }")]);
    assert_vm_error(&run_in(&classes(&d), "NoMain", &[]), "main method not found in class NoMain");
}

#[test]
fn class_file_version_newer_than_supported() {
    let d = compile(&[("Hello.java", HELLO)]);
    let path = classes(&d).join("Hello.class");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[6..8].copy_from_slice(&70u16.to_be_bytes());
    std::fs::write(&path, bytes).unwrap();
    assert_vm_error(&run_in(&classes(&d), "Hello", &[]), "class file version 70.0");
}

#[test]
fn truncated_class_file_names_the_offset() {
    let d = compile(&[("Hello.java", HELLO)]);
    let path = classes(&d).join("Hello.class");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    assert_vm_error(&run_in(&classes(&d), "Hello", &[]), "malformed class file at byte");
}

#[test]
fn corrupt_jar() {
    let d = tempfile::tempdir().unwrap();
    let jar = d.path().join("broken.jar");
    std::fs::write(&jar, b"PK\x03\x04 this is not really a zip archive").unwrap();
    assert_vm_error(&run_in(&jar, "Hello", &[]), "is not a valid jar");
}

#[test]
fn missing_class_path_entry() {
    assert_vm_error(&run_in(Path::new("/nonexistent/classes"), "Hello", &[]), "does not exist");
}

#[test]
fn jdk_without_lib_modules() {
    let d = tempfile::tempdir().unwrap();
    let o = bloatlens(&["run", "--jdk", &d.path().display().to_string(), "-cp", ".", "Hello"]);
    assert_vm_error(&o, "has no lib/modules");
    assert!(stderr(&o).contains("(from the --jdk flag"), "{}", stderr(&o));
}

#[test]
fn a_wrong_java_home_is_named_and_the_java_on_path_is_used() {
    let d = compile(&[("Hello.java", HELLO)]);
    let empty = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .env("JAVA_HOME", empty.path())
        .args(["run", "-cp", &classes(&d).display().to_string(), "Hello"])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "hi 0\n", "stderr: {}", stderr(&o));
    let err = stderr(&o);
    assert!(err.starts_with("bloatlens: warning: ") && err.contains("(from JAVA_HOME)"), "{err}");
    assert!(err.contains("using the JDK of the `java` on PATH"), "{err}");
    // With no java on PATH either, the error says where the path came from.
    let o = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .env("JAVA_HOME", empty.path())
        .env("PATH", empty.path())
        .args(["run", "-cp", ".", "Hello"])
        .output()
        .unwrap();
    assert_vm_error(&o, "(from JAVA_HOME) has no lib/modules");
}

const SPIN: &str = "public class Spin { public static void main(String[] a) { long i = 0; while (true) { i++; } } }";

#[test]
fn instruction_budget_stops_an_endless_loop() {
    let d = compile(&[("Spin.java", SPIN)]);
    assert_stopped(
        &run_in(&classes(&d), "Spin", &["--max-instructions", "5000000"]),
        3,
        "instruction budget exhausted",
    );
}

#[test]
fn time_budget_stops_an_endless_loop() {
    let d = compile(&[("Spin.java", SPIN)]);
    let o = run_in(&classes(&d), "Spin", &["--max-seconds", "1"]);
    assert_stopped(&o, 3, "time budget exhausted after 1.0 s");
}

#[test]
fn heap_cap_throws_out_of_memory_error_in_java() {
    let src = "import java.util.*; public class Hog { public static void main(String[] a) {
        List<long[]> keep = new ArrayList<>();
        try { while (true) keep.add(new long[100_000]); }
        catch (OutOfMemoryError e) { int n = keep.size(); keep = null; System.out.println(\"caught \" + e.getMessage() + \" after \" + (n > 10)); } } }";
    let d = compile(&[("Hog.java", src)]);
    let o = run_in(&classes(&d), "Hog", &["--max-heap-mb", "64"]);
    assert_eq!(stdout(&o), "caught Java heap space after true\n", "stderr: {}", stderr(&o));
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn stack_depth_cap_throws_stack_overflow_error_in_java() {
    let src = "public class Deep { static int d; static void f() { d++; f(); }
        public static void main(String[] a) { try { f(); } catch (StackOverflowError e) { System.out.println(d >= 400 && d <= 500); } } }";
    let d = compile(&[("Deep.java", src)]);
    let o = run_in(&classes(&d), "Deep", &["--max-stack-depth", "500"]);
    assert_eq!(stdout(&o), "true\n", "stderr: {}", stderr(&o));
}

#[test]
fn unsupported_native_is_named() {
    let src = "public class Pid { public static void main(String[] a) { System.out.println(ProcessHandle.current().info().command()); } }";
    let d = compile(&[("Pid.java", src)]);
    assert_vm_error(&run_in(&classes(&d), "Pid", &[]), "native method java.lang.ProcessHandleImpl$Info.info0(J)V");
}

#[test]
fn uncaught_exception_prints_like_hotspot_and_exits_1() {
    let src = "public class Boom { public static void main(String[] a) { System.out.println(\"before\"); throw new IllegalStateException(\"bad state\"); } }";
    let d = compile(&[("Boom.java", src)]);
    let o = run_in(&classes(&d), "Boom", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "before\n");
    let err = stderr(&o);
    let mut lines = err.lines();
    assert_eq!(lines.next(), Some("Exception in thread \"main\" java.lang.IllegalStateException: bad state"));
    assert_eq!(lines.next(), Some("\tat Boom.main(Boom.java:1)"));
}

#[test]
fn garbage_is_reclaimed_under_a_small_heap_cap() {
    // 2 GB allocated in total, at most a few MB live at once: only a working collector passes.
    let src = "public class Churn { public static void main(String[] a) {
        long sum = 0; int[][] window = new int[8][];
        for (int i = 0; i < 8000; i++) { int[] x = new int[65536]; x[i % 65536] = i; window[i % 8] = x; sum += x.length; }
        System.out.println(sum); } }";
    let d = compile(&[("Churn.java", src)]);
    let o = run_in(&classes(&d), "Churn", &["--max-heap-mb", "24"]);
    assert_eq!(stdout(&o), "524288000\n", "stderr: {}", stderr(&o));
}

#[test]
fn a_deadlock_is_reported_naming_the_threads() {
    let src = "public class Dead { static final Object A = new Object(), B = new Object();
        public static void main(String[] args) throws Exception {
            Thread t = new Thread(() -> { synchronized (B) { sleep(); synchronized (A) { System.out.println(\"never\"); } } }, \"second\");
            t.start();
            synchronized (A) { sleep(); synchronized (B) { System.out.println(\"never\"); } }
        }
        static void sleep() { try { Thread.sleep(50); } catch (InterruptedException e) {} } }";
    let d = compile(&[("Dead.java", src)]);
    let o = run_in(&classes(&d), "Dead", &["--max-seconds", "20"]);
    assert_vm_error(&o, "deadlock: ");
    let err = stderr(&o);
    assert!(err.contains("thread \"main\" waits to lock a java.lang.Object held by \"second\""), "{err}");
    assert!(err.contains("thread \"second\" waits to lock a java.lang.Object held by \"main\""), "{err}");
}

#[test]
fn a_sleep_inside_a_class_initialiser_still_ends_at_the_time_budget() {
    // A static initialiser runs as a nested call: its sleep cannot yield to the scheduler.
    let src = "public class Nap { static class Slow { static int v; static { try { Thread.sleep(60_000); } catch (InterruptedException e) {} v = 1; } }
        public static void main(String[] a) { System.out.println(Slow.v); } }";
    let d = compile(&[("Nap.java", src)]);
    let started = std::time::Instant::now();
    let o = run_in(&classes(&d), "Nap", &["--max-seconds", "1"]);
    assert_stopped(&o, 3, "time budget exhausted");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
}

#[test]
fn a_prompt_without_a_newline_shows_before_the_program_reads() {
    use std::io::{Read, Write};
    let src = "import java.util.Scanner; public class Ask { public static void main(String[] a) {
        System.out.print(\"Your name? \"); String n = new Scanner(System.in).nextLine(); System.out.println(\"Hello, \" + n); } }";
    let d = compile(&[("Ask.java", src)]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .args(["run", "-cp", &classes(&d).display().to_string(), "Ask"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    // Should the prompt never come, the program is killed and the read below fails instead of hanging.
    let pid = child.id().to_string();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(60));
        let _ = Command::new("kill").args(["-9", &pid]).status();
    });
    let mut prompt = [0u8; 11];
    // Blocks until the prompt arrives: with buffered output it would never come before the answer.
    out.read_exact(&mut prompt).unwrap();
    assert_eq!(&prompt, b"Your name? ");
    child.stdin.take().unwrap().write_all(b"Ada\n").unwrap();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "Hello, Ada\n");
    assert!(child.wait().unwrap().success());
}

const ENVIRONMENT: &str = "import java.nio.file.*; public class Env { public static void main(String[] a) throws Exception {
    System.out.println(System.getProperty(\"k\") + \" \" + System.getProperty(\"flag\") + \" \" + System.getenv(\"K\") + \" \" + System.getenv(\"J\"));
    System.out.println(System.getProperty(\"user.dir\") + \" \" + Files.readString(Path.of(\"in.txt\")).trim() + \" \" + String.join(\",\", a)); } }";

/// `-Dkey=value` before the main class (as `java` takes it), `--cwd` and `--env`: the program
/// prints what `java` started with the same prints; a `-D` after the main class is the program's.
#[test]
fn system_properties_working_directory_and_environment_as_java_has_them() {
    let d = compile(&[("Env.java", ENVIRONMENT)]);
    let cp = classes(&d).display().to_string();
    let work = d.path().canonicalize().unwrap().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("in.txt"), "input\n").unwrap();
    let java = Command::new("java")
        .args(["-Dk=v w", "-Dflag", "-cp", &cp, "Env", "-Dx=1", "b"])
        .current_dir(&work)
        .env("K", "kv")
        .env("J", "a=b")
        .output()
        .unwrap();
    assert!(java.status.success(), "java: {}", stderr(&java));
    let dir = work.display().to_string();
    assert_eq!(stdout(&java), format!("v w  kv a=b\n{dir} input -Dx=1,b\n"));
    let printed = d.path().join("printed.txt").display().to_string();
    for command in ["run", "profile"] {
        let mut args = vec![command, "-Dk=v w", "-Dflag", "--cwd", &dir, "--env", "K=kv", "--env=J=a=b"];
        if command == "profile" {
            args.extend(["--program-output", &printed, "--format", "json", "--output", "/dev/null"]);
        }
        args.extend(["-cp", &cp, "Env", "-Dx=1", "b"]);
        let o = bloatlens(&args);
        assert_eq!(o.status.code(), Some(0), "{command}: {}", stderr(&o));
        let out = if command == "run" { stdout(&o) } else { std::fs::read_to_string(&printed).unwrap() };
        assert_eq!(out, stdout(&java), "{command}");
    }
    // A relative class path is the shell's, not the program's working directory's.
    let o = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .args(["run", "--cwd", &dir, "-cp", "classes", "Env"])
        .current_dir(d.path())
        .env("K", "kv")
        .env("J", "a=b")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("null null kv a=b\n"), "{}", stdout(&o));
    let o = bloatlens(&["run", "--env", "NOEQUALS", "-cp", &cp, "Env"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("expected NAME=VALUE"), "{}", stderr(&o));
}

/// A budget that runs out while the JDK is still starting stops no program of the user's: it is
/// Bloatlens that could not run it (status 2), said as such, not a budget stop (status 3).
#[test]
fn a_budget_that_ends_the_jdks_start_up_is_not_a_budget_stop() {
    let d = compile(&[("Hello.java", HELLO)]);
    let o = run_in(&classes(&d), "Hello", &["--max-instructions", "1000"]);
    assert_stopped(&o, 2, "the budget ended the JDK's start-up before main");
    assert_eq!(stdout(&o), "");
    let cp = classes(&d).display().to_string();
    let o = bloatlens(&["profile", "--max-instructions", "1000", "-cp", &cp, "Hello"]);
    assert_stopped(&o, 2, "the budget ended the JDK's start-up before main");
    assert_eq!(stdout(&o), "", "no report: nothing of the program ran");
}

/// Program arguments are bytes, as `java` takes them: the VM's launcher decodes them as UTF-8
/// (its `sun.jnu.encoding`), an invalid byte becoming U+FFFD. A flag whose value is text says
/// so when it is not UTF-8; neither panics.
#[test]
fn arguments_that_are_not_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let points = "public class Points { public static void main(String[] a) {
        for (String s : a) { StringBuilder b = new StringBuilder();
            s.chars().forEach(c -> b.append(c).append(' ')); System.out.println(b.toString().trim()); } } }";
    let d = compile(&[("Points.java", points)]);
    let o = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .args(["run", "-cp"])
        .arg(classes(&d))
        .args(["Points", "é"])
        .arg(OsStr::from_bytes(b"a\xffb"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "233\n97 65533 98\n");
    let o = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .args(["run", "-cp"])
        .arg(OsStr::from_bytes(b"/tmp/\xff"))
        .arg("Points")
        .output()
        .unwrap();
    assert_stopped(&o, 2, "the value of --class-path is not valid UTF-8 (`/tmp/\u{fffd}`)");
}

/// stderr a closed pipe: the error cannot be read, but the status still says it (2), where
/// `eprintln!` would have panicked (101).
#[test]
fn an_error_on_a_closed_stderr_still_exits_2() {
    let d = compile(&[("Hello.java", HELLO)]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .args(["run", "-cp"])
        .arg(classes(&d))
        .arg("Nope")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(2));
}

/// Starting a process ends the run with one line that says so (status 2), sandbox or not: the VM
/// runs only the Java program itself. Sockets are the program's: a refused connection is its own
/// `ConnectException`, as under `java`; sandboxed, an address off the loopback interface is refused
/// with a `SocketException` that says why.
#[test]
fn processes_are_refused_with_a_clear_message_and_sockets_are_the_programs() {
    let process = "public class Proc { public static void main(String[] a) throws Exception { new ProcessBuilder(\"echo\", \"hi\").start(); } }";
    let socket = "public class Sock { public static void main(String[] a) throws Exception { new java.net.Socket(System.getProperty(\"host\"), 9); } }";
    let d = compile(&[("Proc.java", process), ("Sock.java", socket)]);
    assert_vm_error(
        &run_in(&classes(&d), "Proc", &[]),
        "the program started a process (`echo hi`): processes are refused — the Bloatlens VM runs only the Java program itself",
    );
    let o = run_in(&classes(&d), "Sock", &["-Dhost=127.0.0.1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let first = stderr(&o).lines().next().unwrap_or_default().to_string();
    assert_eq!(first, "Exception in thread \"main\" java.net.ConnectException: Connection refused");
    let o = run_in(&classes(&d), "Sock", &["--sandbox", "-Dhost=192.0.2.1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let first = stderr(&o).lines().next().unwrap_or_default().to_string();
    assert!(
        first.starts_with("Exception in thread \"main\" java.net.SocketException: Permission denied: Bloatlens's sandbox refuses connecting to 192.0.2.1"),
        "{first}"
    );
}

/// Writes a file in the working directory and one at the path it is given, each said as done or
/// as the exception; then reads the first back.
const WRITER: &str = r#"import java.nio.file.*;
public class Writer {
    public static void main(String[] a) throws Exception {
        Files.writeString(Path.of("here.txt"), "here");
        try { Files.writeString(Path.of(a[0]), "there"); System.out.println("there: written"); }
        catch (AccessDeniedException e) { System.out.println("there: " + e.getMessage()); }
        System.out.println("here: " + Files.readString(Path.of("here.txt")));
    }
}
"#;

/// `run` and `profile` change what the program asks, as `java` would; with `--sandbox` the working
/// directory is the workspace — its changes go to an overlay the program alone sees, or to the
/// workspace with `--sandbox-writes allow` — and a change elsewhere is refused, which stderr says
/// after the run.
#[test]
fn sandbox_keeps_the_program_to_its_workspace() {
    let d = compile(&[("Writer.java", WRITER)]);
    let cp = classes(&d).display().to_string();
    let root = d.path().canonicalize().unwrap();
    let (ws, outside) = (root.join("ws"), root.join("outside.txt"));
    let target = outside.display().to_string();
    let printed = root.join("printed.txt").display().to_string();
    let clean = || {
        let _ = std::fs::remove_file(&outside);
        let _ = std::fs::remove_dir_all(&ws);
        std::fs::create_dir_all(&ws).unwrap();
    };
    for command in ["run", "profile"] {
        let exec = |flags: &[&str]| {
            let mut args = vec![command];
            args.extend_from_slice(flags);
            if command == "profile" {
                args.extend(["--program-output", &printed, "--format", "json", "--output", "/dev/null"]);
            }
            args.extend(["-cp", &cp, "Writer", &target]);
            let o = Command::new(env!("CARGO_BIN_EXE_bloatlens")).args(&args).current_dir(&ws).output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{command} {flags:?}: {}", stderr(&o));
            let out = if command == "run" { stdout(&o) } else { std::fs::read_to_string(&printed).unwrap() };
            (out, stderr(&o))
        };
        // As the user asked: both land.
        clean();
        let (out, err) = exec(&[]);
        assert_eq!(out, "there: written\nhere: here\n", "{command}");
        assert_eq!(err, "", "{command}");
        assert!(outside.is_file() && ws.join("here.txt").is_file(), "{command}");

        let refused = format!(
            "there: {target}: Permission denied: Bloatlens's sandbox refuses writes outside the workspace {} (run it without --sandbox to allow them)\nhere: here\n",
            ws.display()
        );
        let said = format!("bloatlens: the sandbox refused 1 change outside {}: write {target}\n", ws.display());
        clean();
        let (out, err) = exec(&["--sandbox"]);
        assert_eq!(out, refused, "{command}");
        assert_eq!(
            err,
            format!("{said}bloatlens: the program's changes to 1 path of the workspace went to the sandbox's overlay and were dropped (--sandbox-writes allow keeps them)\n"),
            "{command}"
        );
        assert!(!outside.exists(), "{command}");
        assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 0, "{command}: the workspace did not change");

        clean();
        let (out, err) = exec(&["--sandbox", "--sandbox-writes", "allow"]);
        assert_eq!(out, refused, "{command}");
        assert_eq!(err, said, "{command}");
        assert!(!outside.exists(), "{command}");
        assert_eq!(std::fs::read_to_string(ws.join("here.txt")).unwrap(), "here", "{command}: the change landed");
    }
    let o = bloatlens(&["run", "--sandbox-writes", "allow", "-cp", &cp, "Writer", &target]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--sandbox"), "{}", stderr(&o));
}

/// `-javaagent:JAR=OPTIONS` as `java` takes it: the premain runs before main with the options; a
/// jar without a manifest fails the start as HotSpot's does (its words, status 1).
#[test]
fn a_java_agent_runs_its_premain_before_main() {
    let dir = compile(&[
        (
            "Agent.java",
            "public class Agent { public static void premain(String a, java.lang.instrument.Instrumentation i) { \
             System.out.println(\"premain \" + a + \" \" + i.isRetransformClassesSupported()); } }",
        ),
        ("Main.java", "public class Main { public static void main(String[] a) { System.out.println(\"main\"); } }"),
    ]);
    let manifest = dir.path().join("manifest.txt");
    std::fs::write(&manifest, "Premain-Class: Agent\nCan-Retransform-Classes: true\n").unwrap();
    let jar = dir.path().join("agent.jar");
    let made = Command::new("jar").arg("cfm").arg(&jar).arg(&manifest).arg("-C").arg(classes(&dir)).arg(".").output();
    assert!(made.unwrap().status.success());
    let flag = format!("-javaagent:{}=opts", jar.display());
    let out = run_in(&classes(&dir), "Main", &[&flag]);
    assert_eq!(stdout(&out), "premain opts true\nmain\n", "{}", stderr(&out));
    assert_eq!(out.status.code(), Some(0));

    let out = run_in(&classes(&dir), "Main", &["-javaagent:/nonexistent.jar"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("Error opening zip file or JAR manifest missing : /nonexistent.jar\n"));
    assert_eq!(stdout(&out), "");
}

#[test]
fn assertion_options_are_taken_as_java_takes_them() {
    let src = "package app; public class Check { public static void main(String[] a) {
        try { assert a.length > 0 : \"no arguments\"; System.out.println(\"asserts off\"); }
        catch (AssertionError e) { System.out.println(\"asserts on: \" + e.getMessage()); } } }";
    let d = compile(&[("Check.java", src)]);
    let cp = classes(&d);
    assert_eq!(stdout(&run_in(&cp, "app.Check", &[])), "asserts off\n");
    assert_eq!(stdout(&run_in(&cp, "app.Check", &["-ea"])), "asserts on: no arguments\n");
    assert_eq!(stdout(&run_in(&cp, "app.Check", &["-enableassertions:app..."])), "asserts on: no arguments\n");
    assert_eq!(stdout(&run_in(&cp, "app.Check", &["-ea", "-da:app.Check"])), "asserts off\n");
    assert_eq!(stdout(&run_in(&cp, "app.Check", &["--assertions", "-ea:app.Check"])), "asserts on: no arguments\n");
    let o = run_in(&cp, "app.Check", &["--assertions", "-esa:app"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("-esa:app is not an assertion option"), "{}", stderr(&o));
}

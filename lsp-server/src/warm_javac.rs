//! A javac kept warm: one JVM running `java/BloatlensJavacServer.java` (launched from source)
//! compiles on request, so that a save pays javac's work but not its start-up (about 0.8 s of the
//! 0.9 s a small program takes on these machines). If it cannot start or dies, compiles fall back
//! to a `javac` process.

use bloatlens_profiler::javac::{CompileError, Job};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const SOURCE: &str = include_str!("../java/BloatlensJavacServer.java");

pub struct WarmJavac {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl WarmJavac {
    /// Starts the compiler JVM with the `java` beside `javac`.
    pub fn start(javac: &Path, scratch: &Path) -> std::io::Result<WarmJavac> {
        let java = javac.with_file_name("java");
        std::fs::create_dir_all(scratch)?;
        let source = scratch.join("BloatlensJavacServer.java");
        std::fs::write(&source, SOURCE)?;
        let mut child = Command::new(java)
            .args(["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss4m"])
            .arg(&source)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut warm = WarmJavac { child, stdin, stdout };
        // A first request loads the compiler's classes before the first save needs them.
        warm.run(&["-version".to_string()])?;
        Ok(warm)
    }

    /// Runs javac with `args`; returns its exit code and output.
    pub fn run(&mut self, args: &[String]) -> std::io::Result<(i32, String)> {
        let mut req = format!("{}\n", args.len());
        for a in args {
            if a.contains('\n') {
                return Err(std::io::Error::other("an argument with a line break"));
            }
            req.push_str(a);
            req.push('\n');
        }
        self.stdin.write_all(req.as_bytes())?;
        self.stdin.flush()?;
        let mut line = String::new();
        let mut read_line = |r: &mut BufReader<ChildStdout>| -> std::io::Result<String> {
            line.clear();
            if r.read_line(&mut line)? == 0 {
                return Err(std::io::Error::other("the compiler JVM ended"));
            }
            Ok(line.trim().to_string())
        };
        let rc: i32 = read_line(&mut self.stdout)?.parse().map_err(std::io::Error::other)?;
        let len: usize = read_line(&mut self.stdout)?.parse().map_err(std::io::Error::other)?;
        let mut text = vec![0; len];
        self.stdout.read_exact(&mut text)?;
        Ok((rc, String::from_utf8_lossy(&text).into_owned()))
    }

    /// The same as `javac::compile`, through the warm compiler.
    pub fn compile(&mut self, job: &Job) -> Result<(), CompileError> {
        std::fs::create_dir_all(job.out)?;
        let (rc, output) = self.run(&job.args())?;
        Job::outcome(rc == 0, output)
    }
}

impl Drop for WarmJavac {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

//! A javac kept warm: one JVM running `java/BloatlensJavacServer.java` (launched from source)
//! compiles on request, so that a save pays javac's work but not its start-up (about 0.8 s of the
//! 0.9 s a small program takes on these machines). If it cannot start or dies, compiles fall back
//! to a `javac` process.
//!
//! Its start-up is shortened by a class archive (CDS): the classes javac loads, mapped from a file
//! instead of parsed and verified at each start. One is made per JDK, once, by a training run in
//! the background ([`train_archive`]), and kept in the user's cache; a JVM that finds the archive
//! does not match it starts without it.

use bloatlens_profiler::javac::{CompileError, Job};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
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
        WarmJavac::start_with(&java, scratch, users_archive(&java).as_deref())
    }

    /// Starts the compiler JVM `java`, mapping the class archive `archive` if there is one.
    fn start_with(java: &Path, scratch: &Path, archive: Option<&Path>) -> std::io::Result<WarmJavac> {
        let source = write_source(scratch)?;
        let archive = archive.filter(|a| a.is_file());
        let mut child = Command::new(java)
            .args(JVM_OPTIONS)
            .args(archive.map(|a| format!("-XX:SharedArchiveFile={}", a.display())))
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
        self.stdin.write_all(request(args)?.as_bytes())?;
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

/// The compiler JVM's options: a small heap's collector and the JIT's first tier (javac's work per
/// save is short), a stack for deep syntax trees, and no logging (its stdout is the protocol).
const JVM_OPTIONS: [&str; 4] = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss4m", "-Xlog:disable"];

/// The server's source in `scratch`, where `java` launches it from.
fn write_source(scratch: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(scratch)?;
    let source = scratch.join("BloatlensJavacServer.java");
    std::fs::write(&source, SOURCE)?;
    Ok(source)
}

/// One request of the protocol: javac's arguments.
fn request(args: &[String]) -> std::io::Result<String> {
    let mut req = format!("{}\n", args.len());
    for a in args {
        if a.contains('\n') {
            return Err(std::io::Error::other("an argument with a line break"));
        }
        req.push_str(a);
        req.push('\n');
    }
    Ok(req)
}

/// Where the class archive of the compiler JVM run by `java` is kept in the cache `base`: named by
/// the JDK (its path, its `release` file, its class library's size and time of change), so that an
/// updated JDK gets an archive of its own. None: `java` is not there.
pub fn class_archive(java: &Path, base: &Path) -> Option<PathBuf> {
    use sha2::{Digest, Sha256};
    let java = std::fs::canonicalize(java).ok()?;
    let home = java.parent()?.parent()?;
    let mut digest = Sha256::new();
    digest.update(java.as_os_str().as_encoded_bytes());
    digest.update(std::fs::read(home.join("release")).unwrap_or_default());
    if let Ok(m) = std::fs::metadata(home.join("lib").join("modules")) {
        digest.update(m.len().to_le_bytes());
        let changed = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        digest.update(changed.unwrap_or_default().as_nanos().to_le_bytes());
    }
    Some(base.join(ARCHIVES).join(format!("{:x}.jsa", digest.finalize())))
}

/// [`class_archive`] in the user's cache.
fn users_archive(java: &Path) -> Option<PathBuf> {
    class_archive(java, &bloatlens_profiler::project::cache_base().ok()?)
}

/// The cache's directory of class archives.
pub const ARCHIVES: &str = "javac-archives";

/// Makes the class archive for `java` if there is none: a compiler JVM of its own compiles `args`
/// (the warm-up program), then ends and writes the classes it loaded; the archive is renamed into
/// place only when that worked. Blocking (a second or two, once per JDK): call it on a blocking
/// thread, after the warm compiler started.
pub fn train_archive(javac: &Path, scratch: &Path, args: &[String]) {
    let java = javac.with_file_name("java");
    let Some(archive) = users_archive(&java) else { return };
    if !archive.is_file() {
        // Failing is silent: the compiler starts without an archive.
        let _ = make_archive(&java, &archive, scratch, args);
    }
}

fn make_archive(java: &Path, archive: &Path, scratch: &Path, args: &[String]) -> std::io::Result<()> {
    let dir = archive.parent().ok_or_else(|| std::io::Error::other("no directory"))?;
    bloatlens_profiler::private_dir::ensure(dir)?;
    let source = write_source(&scratch.join("training"))?;
    let name = archive.file_name().unwrap_or_default().to_string_lossy();
    let partial = dir.join(format!(".{}.{name}", std::process::id()));
    let mut child = Command::new(java)
        .args(JVM_OPTIONS)
        .arg(format!("-XX:ArchiveClassesAtExit={}", partial.display()))
        .arg(&source)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    // One compile, then the end of its input: the JVM ends and writes the archive.
    let fed = child.stdin.take().expect("piped").write_all(request(args)?.as_bytes());
    let status = child.wait()?;
    match fed {
        Ok(()) if status.success() && partial.is_file() => std::fs::rename(&partial, archive),
        _ => {
            let _ = std::fs::remove_file(&partial);
            Err(std::io::Error::other("the training run made no archive"))
        }
    }
}

impl Drop for WarmJavac {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compiles a one-class program through `warm`; its class file is made.
    fn compiles(warm: &mut WarmJavac, dir: &Path) {
        let source = dir.join("Hello.java");
        std::fs::write(
            &source,
            "class Hello { public static void main(String[] a) { System.out.println(a.length); } }\n",
        )
        .unwrap();
        let out = dir.join("out");
        let sources = [source];
        let job = Job { sources: &sources, source_path: &[], class_path: "", out: &out, parameters: false };
        warm.compile(&job).unwrap();
        assert!(out.join("Hello.class").is_file());
    }

    #[test]
    fn a_trained_class_archive_is_made_once_and_mapped_by_the_next_start() {
        let Ok(javac) = bloatlens_profiler::javac::find_javac(None) else { return };
        let java = javac.with_file_name("java");
        let (cache, scratch) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let archive = class_archive(&java, cache.path()).unwrap();
        assert!(archive.starts_with(cache.path().join(ARCHIVES)));
        assert_eq!(class_archive(&java, cache.path()), Some(archive.clone()), "named by the JDK alone");
        let args: Vec<String> = ["-version".to_string()].into();
        make_archive(&java, &archive, scratch.path(), &args).unwrap();
        assert!(archive.is_file() && std::fs::metadata(&archive).unwrap().len() > 1 << 20);
        let leftovers: Vec<_> = std::fs::read_dir(archive.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "only the archive: {leftovers:?}");
        let mut warm = WarmJavac::start_with(&java, scratch.path(), Some(&archive)).unwrap();
        compiles(&mut warm, scratch.path());
        // Ended before its archive is replaced: a JVM that maps a file changed in place crashes
        // (SIGBUS), which is why an archive is only ever renamed into place.
        drop(warm);
        // An archive the JVM cannot use (another JDK's, a torn file) is ignored, silently: the
        // protocol on its stdout is not disturbed.
        let torn = archive.with_extension("torn");
        std::fs::write(&torn, b"not an archive").unwrap();
        std::fs::rename(&torn, &archive).unwrap();
        let mut warm = WarmJavac::start_with(&java, scratch.path(), Some(&archive)).unwrap();
        compiles(&mut warm, scratch.path());
    }
}

//! A run's surroundings besides its arguments — system properties, working directory, environment
//! (`RunConfig::properties`, `cwd`, `env`) — as the program sees them, compared with HotSpot given
//! the same (`java -Dk=v`, started in that directory with that environment).

use bloatlens_profiler::run::{run, RunConfig};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Prints what a launch configuration sets: a property, a variable, `user.dir`, a relative file
/// read through java.io and NIO, `File`'s absolute and canonical forms, and writes a relative file.
const SURROUNDINGS: &str = r#"
import java.io.*;
import java.nio.file.*;

public class Surroundings {
    public static void main(String[] args) throws Exception {
        System.out.println("k=" + System.getProperty("k"));
        System.out.println("spaced=" + System.getProperty("spaced"));
        System.out.println("empty=[" + System.getProperty("empty") + "]");
        System.out.println("K=" + System.getenv("K"));
        System.out.println("PATH kept=" + (System.getenv("PATH") != null));
        System.out.println("user.dir=" + System.getProperty("user.dir"));
        try (BufferedReader r = new BufferedReader(new FileReader("data.txt"))) {
            System.out.println("java.io=" + r.readLine());
        }
        System.out.println("nio=" + Files.readAllLines(Paths.get("data.txt")).get(0));
        System.out.println("nio absolute=" + Paths.get("data.txt").toAbsolutePath());
        File f = new File("data.txt");
        System.out.println("exists=" + f.exists() + " length=" + f.length() + " absolute=" + f.getAbsolutePath());
        System.out.println("canonical=" + new File("sub/../data.txt").getCanonicalPath());
        System.out.println("listed=" + new File("sub").list().length);
        try (FileWriter w = new FileWriter("out.txt")) {
            w.write("written");
        }
        System.out.println("args=" + String.join(",", args));
    }
}
"#;

/// The compiled program and a working directory (canonical, as `user.dir` is) holding its data.
struct Setup {
    _tmp: tempfile::TempDir,
    classes: PathBuf,
    work: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let src = root.join("Surroundings.java");
    std::fs::write(&src, SURROUNDINGS).unwrap();
    let classes = root.join("classes");
    let out = Command::new("javac").arg("-d").arg(&classes).arg(&src).output().expect("javac (a JDK) on PATH");
    assert!(out.status.success(), "javac: {}", String::from_utf8_lossy(&out.stderr));
    let work = root.join("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::write(work.join("data.txt"), "first line\nsecond\n").unwrap();
    Setup { _tmp: tmp, classes, work }
}

const PROPERTIES: [(&str, &str); 3] = [("k", "v=1"), ("spaced", "a b"), ("empty", "")];

fn hotspot(s: &Setup, out_dir: &Path) -> String {
    let mut java = Command::new("java");
    for (k, v) in PROPERTIES {
        java.arg(format!("-D{k}={v}"));
    }
    let out = java
        .arg("-cp")
        .arg(&s.classes)
        .args(["Surroundings", "x", "y z"])
        .current_dir(out_dir)
        .env("K", "from env")
        .output()
        .expect("java on PATH");
    assert!(out.status.success(), "java: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn properties_working_directory_and_environment_are_the_programs_as_under_java() {
    let s = setup();
    let expected = hotspot(&s, &s.work);
    assert!(expected.contains(&format!("user.dir={}\n", s.work.display())), "{expected}");
    std::fs::remove_file(s.work.join("out.txt")).unwrap();

    let mut config = RunConfig::new(s.classes.display().to_string(), "Surroundings");
    config.args = vec!["x".into(), "y z".into()];
    config.properties = PROPERTIES.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    config.cwd = Some(s.work.clone());
    config.env = vec![("K".into(), "from env".into())];
    config.capture = true;
    let result = run(&config).unwrap();
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert_eq!(result.status(), 0, "{stdout}\n{}", String::from_utf8_lossy(&result.stderr));
    assert_eq!(stdout, expected);
    // The relative file written lands in the working directory, not in this process's.
    assert_eq!(std::fs::read_to_string(s.work.join("out.txt")).unwrap(), "written");
}

#[test]
fn without_them_the_run_keeps_the_process_directory_and_environment() {
    let s = setup();
    let mut config = RunConfig::new(s.classes.display().to_string(), "Surroundings");
    config.capture = true;
    let result = run(&config).unwrap();
    let stdout = String::from_utf8_lossy(&result.stdout);
    let here = std::env::current_dir().unwrap();
    assert!(stdout.contains("k=null\n"), "{stdout}");
    assert!(stdout.contains(&format!("K={}\n", std::env::var("K").unwrap_or_else(|_| "null".into()))), "{stdout}");
    assert!(stdout.contains(&format!("user.dir={}\n", here.display())), "{stdout}");
    // data.txt is not in this process's directory: the program throws.
    assert_eq!(result.status(), 1, "{stdout}");
}

#[test]
fn a_working_directory_that_is_not_one_is_an_error_before_the_run() {
    let s = setup();
    let mut config = RunConfig::new(s.classes.display().to_string(), "Surroundings");
    config.cwd = Some(s.work.join("data.txt"));
    let err = run(&config).unwrap_err().to_string();
    assert!(err.contains("is not a directory"), "{err}");
}

//! Whose code a finding is about: classes from a class path directory are the user's program; a jar
//! is a library however much waste happens inside it, so findings land on the user's line that
//! drives it. The same library put on the class path as a directory is the user's code again.

use std::path::Path;
use std::process::Command;

const LIBRARY: &str = r#"
package lib;

public class Bloaty {
    private int[] kept;

    public int churn(int[] data) {
        int sum = 0;
        for (int round = 0; round < 40; round++) {
            int[] scratch = new int[data.length];
            for (int i = 0; i < data.length; i++) scratch[i] = data[i];
            kept = new int[scratch.length];
            for (int i = 0; i < scratch.length; i++) kept[i] = scratch[i];
            sum += kept[round % kept.length];
        }
        return sum;
    }
}
"#;

const PROGRAM: &str = r#"
public class Main {
    public static void main(String[] args) {
        int[] data = new int[500];
        for (int i = 0; i < data.length; i++) data[i] = i * 7;
        long total = 0;
        for (int call = 0; call < 30; call++) {
            total += new lib.Bloaty().churn(data);
        }
        System.out.println(total);
    }
}
"#;

fn javac(out: &Path, class_path: Option<&Path>, sources: &[&Path]) {
    let mut c = Command::new("javac");
    c.arg("-g").arg("-d").arg(out);
    if let Some(cp) = class_path {
        c.arg("-cp").arg(cp);
    }
    let o = c.args(sources).output().unwrap();
    assert!(o.status.success(), "javac: {}", String::from_utf8_lossy(&o.stderr));
}

/// The files the findings of `bloatlens profile` name, running `Main` on `class_path`.
fn finding_files(class_path: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let o = Command::new(env!("CARGO_BIN_EXE_bloatlens"))
        .args(["profile", "-cp", class_path, "--format", "json", "--output"])
        .arg(&report)
        .arg("Main")
        .output()
        .unwrap();
    assert!(o.status.success(), "profile: {}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["location"]["file"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_jar_is_library_code_and_a_class_directory_is_the_users() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("lib")).unwrap();
    let (lib_src, main_src) = (src.join("lib/Bloaty.java"), src.join("Main.java"));
    std::fs::write(&lib_src, LIBRARY).unwrap();
    std::fs::write(&main_src, PROGRAM).unwrap();
    let (lib_classes, classes) = (dir.path().join("lib-classes"), dir.path().join("classes"));
    javac(&lib_classes, None, &[&lib_src]);
    let jar = dir.path().join("bloaty.jar");
    let o = Command::new("jar").arg("cf").arg(&jar).arg("-C").arg(&lib_classes).arg(".").output().unwrap();
    assert!(o.status.success(), "jar: {}", String::from_utf8_lossy(&o.stderr));
    javac(&classes, Some(&jar), &[&main_src]);

    let with_jar = finding_files(&format!("{}:{}", classes.display(), jar.display()));
    assert!(!with_jar.is_empty(), "the library's waste is reported");
    assert!(with_jar.iter().all(|f| f == "Main.java"), "every finding on the user's file: {with_jar:?}");

    let as_directory = finding_files(&format!("{}:{}", classes.display(), lib_classes.display()));
    assert!(
        as_directory.iter().any(|f| f.ends_with("Bloaty.java")),
        "classes from a directory are the user's code: {as_directory:?}"
    );
}

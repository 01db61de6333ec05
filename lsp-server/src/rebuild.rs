//! What a save recompiles. After a full compile of the entry point (javac follows its references
//! through `-sourcepath`), the classes stay in the cache directory with a record of the sources
//! they came from (content hashes) and each class's API (the signatures and constants other
//! classes compile against). A later save compiles only the sources whose content changed, against
//! the classes already built; when that changes an API (a constant another class inlined, a method
//! another class calls) or drops a class, the dependents could be stale, so everything is compiled
//! again. Nothing changed: nothing is compiled.

use bloatlens_profiler::classfile::{self, access};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What the last successful compile of a source root made.
#[derive(Debug, Clone)]
pub struct Built {
    /// The entry point, class path and JDK it was made for: another of them means a full compile.
    key: String,
    /// Content hash of every source a class came from.
    sources: HashMap<PathBuf, u64>,
    /// API digest per class (internal name).
    apis: HashMap<String, u64>,
    /// The classes each source made.
    made_by: HashMap<PathBuf, Vec<String>>,
}

/// What this save needs.
#[derive(Debug, PartialEq)]
pub enum Decision {
    /// No source changed since the classes were made.
    Nothing,
    /// Only these sources changed: compile them against the classes there are.
    Changed(Vec<PathBuf>),
    /// Compile everything from the entry point, in a clean directory.
    Full,
}

fn hash_file(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    Some(h.finish())
}

/// Decides from the record of the last compile (if any) and the sources on disk; `entries` are
/// the files compiled from (the entry point's, a folder's test classes): one not built yet means a
/// full compile.
pub fn decide(built: Option<&Built>, key: &str, classes: &Path, entries: &[PathBuf]) -> Decision {
    let Some(built) = built.filter(|b| b.key == key && classes.is_dir()) else { return Decision::Full };
    let mut changed = Vec::new();
    for (source, hash) in &built.sources {
        match hash_file(source) {
            None => return Decision::Full, // a deleted source: its classes would linger
            Some(h) if h != *hash => changed.push(source.clone()),
            Some(_) => {}
        }
    }
    if !entries.iter().all(|e| built.sources.contains_key(e)) {
        return Decision::Full;
    }
    changed.sort();
    if changed.is_empty() {
        Decision::Nothing
    } else {
        Decision::Changed(changed)
    }
}

/// After compiling `changed` at `started`: whether the dependents may now be stale — a class
/// whose API differs from before, or a class a changed source made before and did not make again.
pub fn needs_full(built: &Built, changed: &[PathBuf], classes: &Path, started: SystemTime) -> bool {
    for source in changed {
        for class in built.made_by.get(source).into_iter().flatten() {
            let file = classes.join(format!("{class}.class"));
            let remade = std::fs::metadata(&file).and_then(|m| m.modified()).is_ok_and(|t| t >= started);
            if !remade {
                return true;
            }
        }
    }
    let now = scan(classes, &[]);
    built.apis.iter().any(|(class, api)| now.apis.get(class).is_some_and(|a| a != api))
}

/// The record of what `classes` holds, sources found under the first of `roots` that has them
/// (by package and `SourceFile`).
pub fn record(key: &str, roots: &[PathBuf], classes: &Path) -> Built {
    let mut built = scan(classes, roots);
    built.key = key.to_string();
    built
}

fn scan(classes: &Path, roots: &[PathBuf]) -> Built {
    let mut built =
        Built { key: String::new(), sources: HashMap::new(), apis: HashMap::new(), made_by: HashMap::new() };
    let mut stack = vec![classes.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "class") {
                continue;
            }
            let Some(class) = std::fs::read(&path).ok().and_then(|b| classfile::parse(&b).ok()) else { continue };
            built.apis.insert(class.this_class.to_string(), api(&class));
            if let Some(file) = &class.source_file {
                let package = class.this_class.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
                let found = roots.iter().find_map(|root| {
                    let source = root.join(package).join(&**file);
                    hash_file(&source).map(|h| (source, h))
                });
                if let Some((source, h)) = found {
                    built.sources.insert(source.clone(), h);
                    built.made_by.entry(source).or_default().push(class.this_class.to_string());
                }
            }
        }
    }
    built
}

/// What other classes compile against: the class's header, its non-private fields (with their
/// constant values, which javac inlines) and methods, nesting and sealing.
fn api(c: &classfile::ClassFile) -> u64 {
    let mut h = DefaultHasher::new();
    (c.access_flags, &c.super_class, &c.interfaces, &c.permitted_subclasses, &c.signature).hash(&mut h);
    for f in c.fields.iter().filter(|f| f.access_flags & access::PRIVATE == 0) {
        (&f.name, &f.descriptor, f.access_flags, &f.signature).hash(&mut h);
        if let Some(cv) = f.constant_value {
            format!("{:?}", c.constant_pool.get(cv)).hash(&mut h);
        }
    }
    for m in c.methods.iter().filter(|m| m.access_flags & access::PRIVATE == 0) {
        (&m.name, &m.descriptor, m.access_flags, &m.signature).hash(&mut h);
    }
    for i in &c.inner_classes {
        format!("{i:?}").hash(&mut h);
    }
    for r in &c.record_components {
        format!("{r:?}").hash(&mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloatlens_profiler::javac;

    const MAIN: &str = "package p;\npublic class Main {\n    public static void main(String[] a) { System.out.println(\"k=\" + Helper.K + \" \" + Helper.f()); }\n}\n";
    const HELPER: &str =
        "package p;\nclass Helper {\n    static final int K = 5;\n    static int f() { return 1; }\n}\n";

    fn modified(p: &Path) -> SystemTime {
        std::fs::metadata(p).unwrap().modified().unwrap()
    }

    #[test]
    fn a_save_compiles_what_changed_and_everything_when_an_api_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("src");
        let classes = dir.path().join("classes");
        std::fs::create_dir_all(root.join("p")).unwrap();
        let (main, helper) = (root.join("p/Main.java"), root.join("p/Helper.java"));
        std::fs::write(&main, MAIN).unwrap();
        std::fs::write(&helper, HELPER).unwrap();
        let javac_path = javac::find_javac(None).unwrap();
        let compile = |sources: &[PathBuf], cp: &str| {
            let job = javac::Job {
                sources,
                source_path: std::slice::from_ref(&root),
                class_path: cp,
                out: &classes,
                parameters: false,
            };
            javac::compile(&javac_path, &job).unwrap();
        };
        let cp = classes.display().to_string();

        assert_eq!(decide(None, "k", &classes, std::slice::from_ref(&main)), Decision::Full, "nothing built yet");
        compile(std::slice::from_ref(&main), "");
        let built = record("k", std::slice::from_ref(&root), &classes);
        assert_eq!(built.sources.len(), 2, "both sources are known, Helper found through -sourcepath");
        assert_eq!(decide(Some(&built), "k", &classes, std::slice::from_ref(&main)), Decision::Nothing);
        assert_eq!(decide(Some(&built), "another entry point", &classes, std::slice::from_ref(&main)), Decision::Full);

        // The entry point's text changes: only it is compiled; Helper's class stays as it was.
        let helper_class = classes.join("p/Helper.class");
        let helper_made = modified(&helper_class);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&main, MAIN.replace("k=", "K is ")).unwrap();
        let changed = vec![main.clone()];
        assert_eq!(
            decide(Some(&built), "k", &classes, std::slice::from_ref(&main)),
            Decision::Changed(changed.clone())
        );
        let started = SystemTime::now();
        compile(&changed, &cp);
        assert!(!needs_full(&built, &changed, &classes, started));
        assert_eq!(modified(&helper_class), helper_made, "Helper was not compiled again");
        let built = record("k", std::slice::from_ref(&root), &classes);

        // A method body changes: Main compiled against the same API needs nothing more.
        std::fs::write(&helper, HELPER.replace("return 1;", "return 2;")).unwrap();
        let changed = vec![helper.clone()];
        assert_eq!(
            decide(Some(&built), "k", &classes, std::slice::from_ref(&main)),
            Decision::Changed(changed.clone())
        );
        let started = SystemTime::now();
        compile(&changed, &cp);
        assert!(!needs_full(&built, &changed, &classes, started));
        let built = record("k", std::slice::from_ref(&root), &classes);

        // A constant Main inlined changes: Main could be stale, so everything is compiled again.
        std::fs::write(&helper, HELPER.replace("K = 5", "K = 6")).unwrap();
        let changed = vec![helper.clone()];
        let started = SystemTime::now();
        compile(&changed, &cp);
        assert!(needs_full(&built, &changed, &classes, started), "a constant is part of the API");

        // A source deleted: its classes would linger.
        std::fs::remove_file(&helper).unwrap();
        assert_eq!(decide(Some(&built), "k", &classes, std::slice::from_ref(&main)), Decision::Full);
    }
}

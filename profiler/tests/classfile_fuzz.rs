//! The class-file parser against real and mutated input: every class of the JDK's `java.base`
//! parses and decodes; seeded mutations of real class files (bit flips, byte overwrites with
//! boundary values, truncations, insertions) never panic; every file of the regression corpus
//! in `fixtures/classfile-corpus/` is refused with an error naming an offset inside the file.

use bloatlens_profiler::classfile;
use bloatlens_profiler::classpath::{JImage, Jdk};
use bloatlens_profiler::vm::decode::decode;
use std::path::Path;

fn image() -> JImage {
    let jdk = Jdk::locate().expect("a JDK (JAVA_HOME or java on PATH)");
    JImage::open(&jdk.modules()).expect("lib/modules")
}

/// xorshift64*: a small deterministic generator, so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn parse_and_decode(bytes: &[u8]) -> Result<(), classfile::ClassFormatError> {
    let class = classfile::parse(bytes)?;
    for m in &class.methods {
        if let Some(code) = &m.code {
            let _ = decode(code);
        }
    }
    Ok(())
}

#[test]
fn every_java_base_class_parses_and_decodes() {
    let image = image();
    let names: Vec<String> =
        image.names().into_iter().filter(|n| n.starts_with("/java.base/") && n.ends_with(".class")).collect();
    assert!(names.len() > 5000, "java.base has thousands of classes, found {}", names.len());
    let mut failures = Vec::new();
    for n in &names {
        let bytes = image.image_resource(n).unwrap().unwrap();
        match classfile::parse(&bytes) {
            Ok(c) => {
                for m in &c.methods {
                    if let Some(code) = &m.code {
                        if let Err(e) = decode(code) {
                            failures.push(format!("{n} {}: {e}", m.name));
                        }
                    }
                }
            }
            Err(e) => failures.push(format!("{n}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{} failures, first: {:?}", failures.len(), &failures[..failures.len().min(5)]);
}

#[test]
fn mutated_real_class_files_never_panic() {
    let image = image();
    let samples = [
        "/java.base/java/lang/String.class",
        "/java.base/java/util/HashMap.class",
        "/java.base/java/lang/invoke/LambdaMetafactory.class",
        "/java.base/java/util/stream/Collectors.class",
        "/java.base/java/lang/Record.class",
        "/java.base/java/util/concurrent/ConcurrentHashMap$TreeBin.class",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut refused = 0;
    let mut total = 0;
    for name in samples {
        let original = image.image_resource(name).unwrap().unwrap();
        for _ in 0..400 {
            let mut bytes = original.clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(bytes.len());
                match rng.below(5) {
                    0 => bytes[at] ^= 1 << rng.below(8),
                    1 => bytes[at] = [0x00, 0xFF, 0x7F, 0x80, 0x01][rng.below(5)],
                    2 => bytes.truncate(at),
                    3 => bytes.insert(at, rng.next() as u8),
                    _ => {
                        if at + 1 < bytes.len() {
                            bytes[at] = 0xFF;
                            bytes[at + 1] = 0xFF;
                        }
                    }
                }
                if bytes.is_empty() {
                    break;
                }
            }
            total += 1;
            let result = std::panic::catch_unwind(|| parse_and_decode(&bytes));
            match result {
                Err(_) => panic!("parser panicked on a mutation of {name}"),
                Ok(Err(e)) => {
                    refused += 1;
                    assert!(e.offset <= bytes.len(), "offset {} beyond input of {}", e.offset, bytes.len());
                }
                Ok(Ok(())) => {}
            }
        }
    }
    // Most mutations must be caught; a few (inside bytecode or string contents) are still well-formed.
    assert!(refused * 2 > total, "only {refused} of {total} mutations were refused");
}

#[test]
fn regression_corpus_is_refused_with_offsets() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/classfile-corpus");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "class") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let err = classfile::parse(&bytes).expect_err(&format!("{} must be refused", path.display()));
        assert!(err.offset <= bytes.len(), "{}: {err}", path.display());
        n += 1;
    }
    assert!(n >= 5, "the corpus holds at least five files, found {n}");
}

//! Maven Surefire's configuration of each module's tests, as Maven itself evaluated it, and the
//! test classes it selects.
//!
//! Maven is asked once (offline, on the copy of the pom tree, cached with the class paths' digest):
//! `mvn -X test` with the tests, compiling and resources skipped. Surefire's mojo is then configured
//! but does not run, and Maven's debug log says every parameter's value after inheritance,
//! `pluginManagement` and property expansion (`(s) argLine = -Dfoo=bar`), and the build plan says
//! the configuration's XML (which names a map's keys, so that a value holding `, k=v` is read
//! right). Only the `default-test` execution is read: it is the one `mvn test` runs first.

use super::mojo_log::{ga, parse_list};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What Surefire's configuration says about how a module's tests run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Surefire {
    /// The plugin's version (`3.5.2`): its default includes depend on it.
    pub version: String,
    /// Patterns of the test classes to run (`**/*Test.java`); empty: Surefire's defaults.
    pub includes: Vec<String>,
    /// Patterns of classes not to run; empty: Surefire's default (`**/*$*`, nested classes).
    pub excludes: Vec<String>,
    /// `systemPropertyVariables`, in the pom's order.
    pub system_properties: Vec<(String, String)>,
    /// `environmentVariables`.
    pub environment: Vec<(String, String)>,
    /// `argLine`: the forked JVM's options, as one string.
    pub arg_line: Option<String>,
    /// `workingDirectory` (default: the module's directory).
    pub working_directory: Option<PathBuf>,
    /// JUnit 5 tags (JUnit 4 categories) to run, and to leave out: `groups`, `excludedGroups`.
    pub groups: Option<String>,
    pub excluded_groups: Option<String>,
    /// `enableAssertions` (None: not read, Surefire's default: on).
    #[serde(default)]
    pub enable_assertions: Option<bool>,
    /// `additionalClasspathElements`: after the test class path, as Surefire appends them.
    #[serde(default)]
    pub additional_class_path: Vec<PathBuf>,
}

impl Surefire {
    /// The include patterns in force: the configured ones, else the defaults of this version.
    pub fn effective_includes(&self) -> Vec<String> {
        if !self.includes.is_empty() {
            return self.includes.clone();
        }
        let mut defaults = vec!["**/Test*.java", "**/*Test.java", "**/*Tests.java", "**/*TestCase.java"];
        // `*Tests` became a default in Surefire 2.20.
        let version: Vec<u32> = self.version.split(['.', '-']).map_while(|n| n.parse().ok()).collect();
        if !version.is_empty() && version < vec![2, 20] {
            defaults.retain(|p| *p != "**/*Tests.java");
        }
        defaults.into_iter().map(String::from).collect()
    }

    pub fn effective_excludes(&self) -> Vec<String> {
        match self.excludes.is_empty() {
            true => vec!["**/*$*".to_string()],
            false => self.excludes.clone(),
        }
    }
}

/// What `argLine` asks of the JVM, sorted by what a run under the VM can do with it.
#[derive(Debug, Default, PartialEq)]
pub struct JvmOptions {
    /// `-Dkey=value` (`-Dkey`: the empty string).
    pub properties: Vec<(String, String)>,
    /// `--add-opens`/`--add-exports`/`--add-reads`/`--add-modules`, as the `java` launcher passes
    /// them to the module system: `jdk.module.addopens.0=java.base/java.lang=ALL-UNNAMED`.
    pub module_properties: Vec<(String, String)>,
    /// `-javaagent:jar[=options]`.
    pub agents: Vec<String>,
    /// `-ea`, `-da:com.acme...`, `-esa` …, in order ([`crate::vm::assertions`]).
    pub assertions: Vec<String>,
    /// Options a run under the VM does not apply (heap sizes, GC and JIT flags), said to the user.
    pub ignored: Vec<String>,
}

/// What a test run gets from Surefire's configuration, as Surefire's forked JVM gets it: system
/// properties (`basedir`, `systemPropertyVariables`, `argLine`'s `-D` and module options), the
/// environment, the working directory; and what the user should know about what was not applied.
#[derive(Debug, Default, PartialEq)]
pub struct TestEnvironment {
    pub properties: Vec<(String, String)>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// `-javaagent:` options of the `argLine`: loaded as `java` loads them (`RunConfig::java_agents`).
    pub agents: Vec<String>,
    /// The argLine's assertion options, for the JVM (`-ea:com.acme...`).
    pub jvm_assertions: Vec<String>,
    /// Surefire's `enableAssertions` (None: its default, on; and so for tests outside Maven, as
    /// IDEs run them): the system class loader's default assertion status, set before the tests
    /// load, as Surefire's booter sets it.
    pub enable_assertions: Option<bool>,
    /// Surefire's `additionalClasspathElements`, as Maven named them (paths under a module's
    /// `target/classes` are the caller's to map to where Bloatlens compiled it).
    pub class_path_after: Vec<PathBuf>,
    pub notes: Vec<String>,
}

impl TestEnvironment {
    /// The environment of the tests of the module in `dir` under `surefire` (`None`: Surefire's
    /// defaults, when its configuration could not be read).
    pub fn of(dir: &Path, surefire: Option<&Surefire>) -> TestEnvironment {
        let mut out = TestEnvironment {
            properties: vec![("basedir".to_string(), dir.display().to_string())],
            cwd: Some(dir.to_path_buf()),
            ..TestEnvironment::default()
        };
        let Some(s) = surefire else { return out };
        out.enable_assertions = s.enable_assertions;
        out.class_path_after = s.additional_class_path.clone();
        out.properties.extend(s.system_properties.iter().cloned());
        out.env.extend(s.environment.iter().cloned());
        if let Some(wd) = &s.working_directory {
            out.cwd = Some(wd.clone());
        }
        if let Some(line) = &s.arg_line {
            let o = jvm_options(line);
            out.properties.extend(o.properties);
            out.properties.extend(o.module_properties);
            out.agents = o.agents;
            out.jvm_assertions = o.assertions;
            if !o.ignored.is_empty() {
                out.notes.push(format!(
                    "Surefire's argLine options not applied under the VM: {} (its -D properties and module options are)",
                    o.ignored.join(" ")
                ));
            }
        }
        out
    }

    /// Whether the tests run with assertions enabled in the classes the system class loader loads.
    pub fn assertions_on(&self) -> bool {
        self.enable_assertions.unwrap_or(true)
    }

    /// The environment of `modules`' tests under one VM (a plain tree's: none), with notes on
    /// what of Surefire's configuration is not applied.
    pub fn for_modules(
        project: &super::Project,
        modules: &[&super::Module],
        configs: &BTreeMap<String, Surefire>,
    ) -> TestEnvironment {
        if project.build != super::Build::Maven {
            return TestEnvironment::default();
        }
        let each = modules.iter().map(|m| TestEnvironment::of(&m.dir, configs.get(&m.id))).collect();
        TestEnvironment::merged(&project.root, each)
    }

    /// The environment of several modules' tests under one VM: the first module's value of each
    /// property and variable, run from `root`.
    pub fn merged(root: &Path, each: Vec<TestEnvironment>) -> TestEnvironment {
        if each.len() == 1 {
            return each.into_iter().next().unwrap_or_default();
        }
        let mut out = TestEnvironment { cwd: Some(root.to_path_buf()), ..TestEnvironment::default() };
        // One JVM: the first module's assertion options.
        out.enable_assertions = each.first().and_then(|e| e.enable_assertions);
        out.jvm_assertions = each.first().map(|e| e.jvm_assertions.clone()).unwrap_or_default();
        for e in each {
            for (k, v) in e.properties {
                if !out.properties.iter().any(|(known, _)| *known == k) {
                    out.properties.push((k, v));
                }
            }
            for (k, v) in e.env {
                if !out.env.iter().any(|(known, _)| *known == k) {
                    out.env.push((k, v));
                }
            }
            for a in e.agents {
                if !out.agents.contains(&a) {
                    out.agents.push(a);
                }
            }
            for p in e.class_path_after {
                if !out.class_path_after.contains(&p) {
                    out.class_path_after.push(p);
                }
            }
            for n in e.notes {
                if !out.notes.contains(&n) {
                    out.notes.push(n);
                }
            }
        }
        out
    }
}

/// Reads an `argLine` as the JVM's command line (quotes group, as Surefire splits it).
pub fn jvm_options(arg_line: &str) -> JvmOptions {
    let mut out = JvmOptions::default();
    // Surefire replaces `@{property}` late, from properties a plugin set during the build (JaCoCo's
    // agent); with the tests skipped none was set, and Surefire leaves an unknown one out.
    let line = strip_late_properties(arg_line);
    let words = shlex::split(&line).unwrap_or_else(|| line.split_whitespace().map(String::from).collect());
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut words = words.into_iter();
    while let Some(w) = words.next() {
        let module_option = ["--add-opens", "--add-exports", "--add-reads", "--add-modules"]
            .into_iter()
            .find(|o| w == *o || w.starts_with(&format!("{o}=")));
        if let Some(option) = module_option {
            let value = match w.split_once('=') {
                Some((_, v)) if w.starts_with(&format!("{option}=")) => Some(v.to_string()),
                _ => words.next(),
            };
            let Some(value) = value else { continue };
            let name = &option[2..].replace('-', "");
            let n = counts.entry(option).or_default();
            out.module_properties.push((format!("jdk.module.{name}.{n}"), value));
            *n += 1;
        } else if let Some(property) = w.strip_prefix("-D") {
            let (k, v) = property.split_once('=').unwrap_or((property, ""));
            out.properties.push((k.to_string(), v.to_string()));
        } else if let Some(agent) = w.strip_prefix("-javaagent:") {
            out.agents.push(agent.to_string());
        } else if crate::vm::assertions::AssertionStatus::is_option(&w) {
            out.assertions.push(w);
        } else {
            out.ignored.push(w);
        }
    }
    out
}

fn strip_late_properties(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("@{") {
        out.push_str(&rest[..start]);
        match rest[start..].find('}') {
            Some(end) => rest = &rest[start + end + 1..],
            None => {
                rest = &rest[start..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The test classes of `roots` (a module's test source roots) that the patterns select, by binary
/// name, sorted: Surefire matches a class's path below the test classes' directory; its source's
/// path below the source root is the same path.
pub fn test_classes(roots: &[PathBuf], surefire: &Surefire) -> Result<Vec<String>, String> {
    test_classes_in(roots, surefire, None)
}

/// [`test_classes`], only those whose source is below `under` (a folder of one of the roots) when
/// it is given: the patterns still match the class's whole path below its root.
pub fn test_classes_in(roots: &[PathBuf], surefire: &Surefire, under: Option<&Path>) -> Result<Vec<String>, String> {
    let includes = patterns(&surefire.effective_includes())?;
    let excludes = patterns(&surefire.effective_excludes())?;
    let mut classes = Vec::new();
    for root in roots {
        // Only the folder's files are read (a root that does not hold it has none).
        let dir = match under {
            Some(dir) if dir.starts_with(root) => dir,
            Some(_) => continue,
            None => root.as_path(),
        };
        for file in crate::javac::java_files(dir).map_err(|e| format!("reading {}: {e}", dir.display()))? {
            let Ok(rel) = file.strip_prefix(root) else { continue };
            let rel = rel.to_string_lossy().to_string();
            let stem = rel.strip_suffix(".java").unwrap_or(&rel);
            if includes.is_match(stem) && !excludes.is_match(stem) {
                classes.push(stem.replace('/', "."));
            }
        }
    }
    classes.sort();
    classes.dedup();
    Ok(classes)
}

/// Surefire's patterns as globs over a class's path without its extension: `**/*Test.java` and
/// `**/*Test.class` mean `**/*Test`; a pattern without a directory (`FooTest`, `*IT`) matches in
/// any package, as Surefire prefixes it with `**/`; `a.b.FooTest` is a class name.
fn patterns(list: &[String]) -> Result<globset::GlobSet, String> {
    let mut set = globset::GlobSetBuilder::new();
    for p in list.iter().flat_map(|p| p.split(',')).map(str::trim).filter(|p| !p.is_empty()) {
        if p.starts_with("%regex[") || p.contains('#') {
            return Err(format!("the Surefire pattern `{p}` (regular expressions and methods are not read yet)"));
        }
        let p = p.strip_prefix('!').unwrap_or(p);
        let stem = p.strip_suffix(".java").or_else(|| p.strip_suffix(".class")).unwrap_or(p);
        let stem = if !stem.contains('/') && stem.contains('.') && !stem.contains('*') {
            stem.replace('.', "/")
        } else {
            stem.to_string()
        };
        let glob = if stem.starts_with("**/") || stem.starts_with('/') { stem } else { format!("**/{stem}") };
        let glob = glob.trim_start_matches('/');
        set.add(
            globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .map_err(|e| format!("the Surefire pattern `{p}`: {e}"))?,
        );
    }
    set.build().map_err(|e| e.to_string())
}

/// Every module's `default-test` configuration in a `mvn -X` log, by `groupId:artifactId`;
/// `copy` (the pom tree Maven ran on) is replaced by `root` in paths.
pub fn parse_debug_log(log: &str, copy: &Path, root: &Path) -> BTreeMap<String, Surefire> {
    let lines: Vec<&str> = log.lines().collect();
    // The build plan's XML of each module's default-test execution: the maps' keys.
    let mut keys: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut plan_project = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if let Some(p) = line.strip_prefix("[DEBUG] Project:") {
            plan_project = ga(p.trim());
        } else if line.starts_with("[DEBUG] Goal:")
            && line.contains(":maven-surefire-plugin:")
            && line.trim_end().ends_with("(default-test)")
        {
            let Some(start) = lines.get(i + 1).and_then(|l| l.strip_prefix("[DEBUG] Configuration: ")) else {
                continue;
            };
            let mut xml = start.to_string();
            i += 2;
            while i < lines.len() && !lines[i - 1].trim_end().ends_with("</configuration>") {
                xml.push('\n');
                xml.push_str(lines[i]);
                i += 1;
            }
            keys.insert(plan_project.clone(), map_keys(&xml));
        }
    }
    let mut out = BTreeMap::new();
    let runs = super::mojo_log::mojo_runs(log, copy, root);
    for run in runs.iter().filter(|r| r.plugin == "maven-surefire-plugin" && r.execution == "default-test") {
        let values = &run.values;
        let no_keys = BTreeMap::new();
        let known = keys.get(&run.project).unwrap_or(&no_keys);
        let map = |name: &str| -> Vec<(String, String)> {
            let empty = Vec::new();
            values.get(name).map(|v| parse_map(v, known.get(name).unwrap_or(&empty))).unwrap_or_default()
        };
        let text = |name: &str| values.get(name).filter(|v| !v.trim().is_empty() && *v != "null").cloned();
        let surefire = Surefire {
            version: run.version.clone(),
            includes: values.get("includes").map(|v| parse_list(v)).unwrap_or_default(),
            excludes: values.get("excludes").map(|v| parse_list(v)).unwrap_or_default(),
            system_properties: map("systemPropertyVariables"),
            environment: map("environmentVariables"),
            arg_line: text("argLine"),
            working_directory: text("workingDirectory").map(PathBuf::from),
            groups: text("groups"),
            excluded_groups: text("excludedGroups"),
            enable_assertions: text("enableAssertions").map(|v| v.trim() != "false"),
            additional_class_path: values
                .get("additionalClasspathElements")
                .map(|v| parse_list(v).into_iter().map(PathBuf::from).collect())
                .unwrap_or_default(),
        };
        out.entry(run.project.clone()).or_insert(surefire);
    }
    out
}

/// The child element names of each map parameter in a plan's configuration XML.
fn map_keys(xml: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let Ok(doc) = roxmltree::Document::parse(xml) else { return out };
    for name in ["systemPropertyVariables", "environmentVariables"] {
        if let Some(node) = doc.root_element().children().find(|c| c.has_tag_name(name)) {
            let keys = node.children().filter(|c| c.is_element()).map(|c| c.tag_name().name().to_string()).collect();
            out.insert(name.to_string(), keys);
        }
    }
    out
}

/// A map as Java prints it (`{k1=v1, k2=v2}`), split at the keys the configuration names (a
/// value may hold `, x=y`); without them, at every `, `.
fn parse_map(value: &str, keys: &[String]) -> Vec<(String, String)> {
    let inner = value.trim();
    let inner = inner.strip_prefix('{').and_then(|v| v.strip_suffix('}')).unwrap_or(inner);
    if inner.is_empty() {
        return Vec::new();
    }
    // Where each entry starts: the start, and every `, key=` of a known key.
    let mut starts: Vec<(usize, &str)> = Vec::new();
    for key in keys {
        let lead = format!("{key}=");
        if inner.starts_with(&lead) {
            starts.push((0, key));
        }
        let needle = format!(", {key}=");
        let mut from = 0;
        while let Some(at) = inner[from..].find(&needle) {
            starts.push((from + at + 2, key));
            from += at + 2;
        }
    }
    if starts.is_empty() || !starts.iter().any(|(at, _)| *at == 0) {
        return inner
            .split(", ")
            .filter_map(|e| e.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
    }
    starts.sort();
    // Each key once, at its first place after the previous entry's start.
    let mut entries = Vec::new();
    let mut taken: Vec<&str> = Vec::new();
    let mut chosen: Vec<(usize, &str)> = Vec::new();
    for (at, key) in starts {
        if taken.contains(&key) {
            continue;
        }
        taken.push(key);
        chosen.push((at, key));
    }
    chosen.sort();
    for (n, (at, key)) in chosen.iter().enumerate() {
        let end = chosen.get(n + 1).map_or(inner.len(), |(next, _)| next - 2);
        let value = inner.get(at + key.len() + 1..end).unwrap_or("");
        entries.push((key.to_string(), value.to_string()));
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = include_str!("../../tests/support/surefire-debug.log");

    #[test]
    fn the_default_test_execution_is_read_as_maven_evaluated_it() {
        let parsed = parse_debug_log(LOG, Path::new("/cache/maven-x/poms"), Path::new("/work/shop"));
        let core = &parsed["com.acme.shop:core"];
        assert_eq!(core.version, "3.5.2");
        assert_eq!(core.arg_line.as_deref(), Some("-Xmx512m -Dcore.flag=on -Dspaced=\"a b\""));
        assert_eq!(core.includes, ["**/*Test.java", "**/Check*.java"]);
        assert_eq!(core.excludes, ["**/Slow*"]);
        assert_eq!(
            core.system_properties,
            [("other".to_string(), "x, y=z".to_string()), ("shop.mode".to_string(), "test".to_string())]
        );
        assert_eq!(core.working_directory.as_deref(), Some(Path::new("/work/shop/core/target/work")));
        assert_eq!(core.enable_assertions, Some(true));
        let extra: Vec<&str> = core.additional_class_path.iter().filter_map(|p| p.to_str()).collect();
        assert_eq!(extra, ["/work/shop/core/target/classes/META-INF/versions/11", "/opt/extra.jar"]);
        let env = TestEnvironment::of(Path::new("/work/shop/core"), Some(core));
        assert_eq!(env.class_path_after, core.additional_class_path);
        let app = &parsed["com.acme.shop:app"];
        assert_eq!(app.version, "2.12.4");
        assert!(app.includes.is_empty() && app.arg_line.is_none() && app.system_properties.is_empty());
        assert_eq!(app.effective_includes(), ["**/Test*.java", "**/*Test.java", "**/*TestCase.java"]);
    }

    #[test]
    fn an_arg_line_is_read_as_the_java_launcher_reads_it() {
        let o = jvm_options(
            "-Xmx1g @{argLine} -Dfoo=bar -Dquoted=\"a b\" -Dflag --add-opens java.base/java.lang=ALL-UNNAMED \
             --add-opens=java.base/java.util=ALL-UNNAMED -javaagent:/m2/agent.jar=x -da:com.acme... -esa",
        );
        assert_eq!(
            o.properties,
            [("foo".into(), "bar".into()), ("quoted".into(), "a b".into()), ("flag".into(), String::new())]
        );
        assert_eq!(
            o.module_properties,
            [
                ("jdk.module.addopens.0".to_string(), "java.base/java.lang=ALL-UNNAMED".to_string()),
                ("jdk.module.addopens.1".to_string(), "java.base/java.util=ALL-UNNAMED".to_string())
            ]
        );
        assert_eq!(o.agents, ["/m2/agent.jar=x"]);
        assert_eq!(o.assertions, ["-da:com.acme...", "-esa"]);
        assert_eq!(o.ignored, ["-Xmx1g"]);
    }

    #[test]
    fn test_classes_are_chosen_by_surefire_patterns() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("src/test/java");
        for f in [
            "a/FooTest.java",
            "a/b/BarTests.java",
            "a/TestHelper.java",
            "a/Util.java",
            "a/SlowTest.java",
            "CheckIt.java",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "class X {}").unwrap();
        }
        let defaults = Surefire { version: "3.5.2".into(), ..Surefire::default() };
        assert_eq!(
            test_classes(std::slice::from_ref(&root), &defaults).unwrap(),
            ["a.FooTest", "a.SlowTest", "a.TestHelper", "a.b.BarTests"]
        );
        let configured = Surefire {
            includes: vec!["**/*Test.java".into(), "Check*".into()],
            excludes: vec!["**/Slow*".into()],
            ..defaults.clone()
        };
        assert_eq!(test_classes(std::slice::from_ref(&root), &configured).unwrap(), ["CheckIt", "a.FooTest"]);
        let by_name = Surefire { includes: vec!["a.b.BarTests".into()], ..defaults };
        assert_eq!(test_classes(std::slice::from_ref(&root), &by_name).unwrap(), ["a.b.BarTests"]);
        let regex = Surefire { includes: vec!["%regex[.*IT]".into()], ..Surefire::default() };
        assert!(test_classes(&[root], &regex).unwrap_err().contains("%regex[.*IT]"));
    }

    #[test]
    fn maps_are_split_at_the_keys_the_pom_names() {
        let keys = vec!["a".to_string(), "b.c".to_string()];
        assert_eq!(
            parse_map("{b.c=1, 2, a=x=y}", &keys),
            [("b.c".to_string(), "1, 2".to_string()), ("a".to_string(), "x=y".to_string())]
        );
        assert_eq!(parse_map("{}", &keys), Vec::<(String, String)>::new());
        assert_eq!(
            parse_map("{p=1, q=2}", &[]),
            [("p".to_string(), "1".to_string()), ("q".to_string(), "2".to_string())]
        );
    }
}

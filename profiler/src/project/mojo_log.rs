//! What a `mvn -X` log says of each mojo Maven configured: its plugin, goal, execution and module,
//! and every parameter's value after inheritance, `pluginManagement`, profiles and property
//! expansion. Maven configures a mojo just before it runs it, so a parameter such as the
//! compiler's `compileSourceRoots` holds what plugins before it added (a generator's output, the
//! build helper's extra roots). Surefire's configuration and the source roots are read from it.

use std::collections::BTreeMap;
use std::path::Path;

/// One mojo as Maven configured it.
#[derive(Debug, Clone, PartialEq)]
pub struct MojoRun {
    /// The plugin's artifact id (`maven-compiler-plugin`).
    pub plugin: String,
    pub version: String,
    /// `compile`, `testCompile`, `test`, …
    pub goal: String,
    /// The execution id (`default-compile`), from the line Maven prints before it.
    pub execution: String,
    /// The module's `groupId:artifactId`.
    pub project: String,
    /// Each parameter's value as the log prints it (`[a, b]` for a list), the copy's paths replaced
    /// by the workspace's.
    pub values: BTreeMap<String, String>,
}

/// Every mojo configuration in `log`, in the order Maven ran them; `copy` (the pom tree Maven ran
/// on) is replaced by `root` in values.
pub fn mojo_runs(log: &str, copy: &Path, root: &Path) -> Vec<MojoRun> {
    let (copy, root) = (copy.display().to_string(), root.display().to_string());
    let lines: Vec<&str> = log.lines().collect();
    let mut runs = Vec::new();
    let mut execution = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        // `[INFO] --- maven-compiler-plugin:3.13.0:compile (default-compile) @ core ---` (Maven 3.9
        // prints the plugin's prefix: `--- compiler:3.13.0:compile (default-compile) @ core ---`).
        if let Some(rest) = line.strip_prefix("[INFO] --- ") {
            execution = rest
                .rsplit_once(") @ ")
                .and_then(|(head, _)| head.rsplit_once(" ("))
                .map(|(_, id)| id.to_string())
                .unwrap_or_default();
            continue;
        }
        // `[DEBUG] Configuring mojo 'org.apache.maven.plugins:maven-compiler-plugin:3.13.0:compile' with …`
        let Some(coordinates) = line.strip_prefix("[DEBUG] Configuring mojo '").and_then(|r| r.split_once('\'')) else {
            continue;
        };
        let parts: Vec<&str> = coordinates.0.split(':').collect();
        let [_, plugin, version, goal] = parts[..] else { continue };
        let mut values: BTreeMap<String, String> = BTreeMap::new();
        let mut current: Option<String> = None;
        while i < lines.len() && !lines[i].starts_with("[DEBUG] -- end configuration --") {
            let l = lines[i];
            let parameter = l.strip_prefix("[DEBUG]   (").and_then(|r| r.get(3..)).and_then(|r| r.split_once(" = "));
            match parameter {
                Some((name, value)) => {
                    values.insert(name.to_string(), value.replace(&copy, &root));
                    current = Some(name.to_string());
                }
                // A value over several lines (an `argLine` written over several).
                None if !l.starts_with('[') => {
                    if let Some(v) = current.as_ref().and_then(|c| values.get_mut(c)) {
                        v.push('\n');
                        v.push_str(&l.replace(&copy, &root));
                    }
                }
                None => current = None,
            }
            i += 1;
        }
        let project = values
            .get("project")
            .and_then(|p| p.strip_prefix("MavenProject: "))
            .map(|p| ga(p.split(" @ ").next().unwrap_or(p)));
        let Some(project) = project else { continue };
        runs.push(MojoRun {
            plugin: plugin.to_string(),
            version: version.to_string(),
            goal: goal.to_string(),
            execution: execution.clone(),
            project,
            values,
        });
    }
    runs
}

/// `g:a:v` or `g:a:packaging:v` → `g:a`.
pub fn ga(coordinates: &str) -> String {
    let mut parts = coordinates.split(':');
    format!("{}:{}", parts.next().unwrap_or(""), parts.next().unwrap_or(""))
}

/// `[a, b]` → `a`, `b`.
pub fn parse_list(value: &str) -> Vec<String> {
    let inner = value.trim().trim_start_matches('[').trim_end_matches(']');
    inner.split(", ").map(str::trim).filter(|s| !s.is_empty() && *s != "null").map(String::from).collect()
}

/// Each module's source roots as the compiler plugin's executions name them (`compile` and
/// `testCompile`; every execution's, in the order they ran, each root once), by `groupId:artifactId`.
/// A `compile` execution with `multiReleaseOutput` compiles a multi-release overlay: its roots are
/// kept apart, with the release whose `META-INF/versions/N` they go to.
pub fn compile_source_roots(runs: &[MojoRun]) -> BTreeMap<String, SourceRoots> {
    let mut out: BTreeMap<String, SourceRoots> = BTreeMap::new();
    for run in runs.iter().filter(|r| r.plugin == "maven-compiler-plugin") {
        let roots = out.entry(run.project.clone()).or_default();
        let overlay = run.values.get("multiReleaseOutput").is_some_and(|v| v.trim() == "true");
        let release = run.values.get("release").map(|r| r.trim().to_string()).filter(|r| !r.is_empty() && r != "null");
        let list = match (run.goal.as_str(), overlay, release) {
            ("compile", true, Some(release)) => match roots.overlays.iter().position(|(r, _)| *r == release) {
                Some(i) => &mut roots.overlays[i].1,
                None => {
                    roots.overlays.push((release, Vec::new()));
                    &mut roots.overlays.last_mut().expect("just pushed").1
                }
            },
            ("compile", _, _) => &mut roots.main,
            ("testCompile", _, _) => &mut roots.test,
            _ => continue,
        };
        for root in run.values.get("compileSourceRoots").map(|v| parse_list(v)).unwrap_or_default() {
            if !list.contains(&root) {
                list.push(root);
            }
        }
    }
    out
}

/// A module's main and test source roots, absolute, and its multi-release overlays' (by release).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceRoots {
    pub main: Vec<String>,
    pub test: Vec<String>,
    pub overlays: Vec<(String, Vec<String>)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
[INFO] --- maven-compiler-plugin:3.15.0:compile (compile-java8-base) @ lib ---
[DEBUG] Configuring mojo 'org.apache.maven.plugins:maven-compiler-plugin:3.15.0:compile' with basic configurator -->
[DEBUG]   (f) compileSourceRoots = [/cache/m/poms/src/main/java]
[DEBUG]   (f) project = MavenProject: org.acme:lib:1.0 @ /cache/m/poms/pom.xml
[DEBUG] -- end configuration --
[INFO] --- compiler:3.15.0:compile (overlay) @ lib ---
[DEBUG] Configuring mojo 'org.apache.maven.plugins:maven-compiler-plugin:3.15.0:compile' with basic configurator -->
[DEBUG]   (f) compileSourceRoots = [/cache/m/poms/src/main/java11]
[DEBUG]   (f) multiReleaseOutput = true
[DEBUG]   (f) release = 11
[DEBUG]   (f) project = MavenProject: org.acme:lib:1.0 @ /cache/m/poms/pom.xml
[DEBUG] -- end configuration --
[INFO] --- build-helper-maven-plugin:3.6.1:add-test-source (extra) @ lib ---
[DEBUG] Configuring mojo 'org.codehaus.mojo:build-helper-maven-plugin:3.6.1:add-test-source' with basic configurator -->
[DEBUG]   (f) sources = [/cache/m/poms/src/test/java11]
[DEBUG]   (f) project = MavenProject: org.acme:lib:1.0 @ /cache/m/poms/pom.xml
[DEBUG] -- end configuration --
[INFO] --- maven-compiler-plugin:3.15.0:testCompile (default-testCompile) @ lib ---
[DEBUG] Configuring mojo 'org.apache.maven.plugins:maven-compiler-plugin:3.15.0:testCompile' with basic configurator -->
[DEBUG]   (f) compileSourceRoots = [/cache/m/poms/src/test/java, /cache/m/poms/src/test/java11, /cache/m/poms/target/generated-test-sources/protobuf]
[DEBUG]   (f) project = MavenProject: org.acme:lib:1.0 @ /cache/m/poms/pom.xml
[DEBUG] -- end configuration --
";

    #[test]
    fn each_mojo_is_read_with_its_execution_and_module() {
        let runs = mojo_runs(LOG, Path::new("/cache/m/poms"), Path::new("/work/lib"));
        let names: Vec<(&str, &str, &str)> =
            runs.iter().map(|r| (r.plugin.as_str(), r.goal.as_str(), r.execution.as_str())).collect();
        assert_eq!(
            names,
            [
                ("maven-compiler-plugin", "compile", "compile-java8-base"),
                ("maven-compiler-plugin", "compile", "overlay"),
                ("build-helper-maven-plugin", "add-test-source", "extra"),
                ("maven-compiler-plugin", "testCompile", "default-testCompile"),
            ]
        );
        assert!(runs.iter().all(|r| r.project == "org.acme:lib"));
        assert_eq!(runs[1].values["multiReleaseOutput"], "true");
    }

    #[test]
    fn source_roots_are_every_compiler_execution_s_an_overlay_s_apart() {
        let runs = mojo_runs(LOG, Path::new("/cache/m/poms"), Path::new("/work/lib"));
        let roots = &compile_source_roots(&runs)["org.acme:lib"];
        assert_eq!(roots.main, ["/work/lib/src/main/java"]);
        assert_eq!(roots.overlays, [("11".to_string(), vec!["/work/lib/src/main/java11".to_string()])]);
        assert_eq!(
            roots.test,
            [
                "/work/lib/src/test/java",
                "/work/lib/src/test/java11",
                "/work/lib/target/generated-test-sources/protobuf"
            ]
        );
    }
}

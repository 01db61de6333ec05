//! Which tests drove each finding, read off the run's calling-context tree.
//!
//! JUnit calls each test method (through reflection) from its own frames, so every calling
//! context of the code under test has the test above it. A finding is about one method (its
//! location's); each context of that method is charged to the innermost test method above it,
//! else to the test class whose set-up code (`@BeforeEach`, `@BeforeAll`, a constructor) is above
//! it. A context under no test (the launcher's discovery, a thread the tests started, whose
//! frames start at `Thread.run`) is charged to none: the shares then add up to less than 1. The
//! weight of a context is its cost with everything it calls, as the cost model prices it.

use crate::analysis::calltree::CallTree;
use crate::cost_model::{CostModel, Work};
use crate::junit::TestOutcome;
use crate::report::{Finding, TestShare};
use rustc_hash::{FxHashMap, FxHashSet};

/// Sets each finding's `tests` (largest share first; shares under 0.5% are left out).
pub fn attribute(findings: &mut [Finding], tree: &CallTree, tests: &[TestOutcome]) {
    if tests.is_empty() || tree.nodes.len() < 2 {
        return;
    }
    let classes: FxHashSet<&str> = tests.iter().map(|t| t.class.as_str()).collect();
    let methods: FxHashSet<(&str, &str)> =
        tests.iter().filter(|t| !t.method.is_empty()).map(|t| (t.class.as_str(), t.method.as_str())).collect();
    let labels: Vec<(&str, &str)> = tree.methods.iter().map(|l| class_and_method(l)).collect();
    // The test each node runs under (children come after their parents in the tree).
    let mut keys: Vec<String> = Vec::new();
    let mut key_of: FxHashMap<String, u32> = FxHashMap::default();
    let mut intern = |key: String| -> u32 {
        *key_of.entry(key.clone()).or_insert_with(|| {
            keys.push(key);
            keys.len() as u32 - 1
        })
    };
    let mut under: Vec<Option<u32>> = vec![None; tree.nodes.len()];
    let mut exact: Vec<bool> = vec![false; tree.nodes.len()];
    for i in 1..tree.nodes.len() {
        let node = &tree.nodes[i];
        let parent = node.parent as usize;
        let Some(&(class, method)) = labels.get(node.method as usize) else { continue };
        if methods.contains(&(class, method)) && !exact[parent] {
            under[i] = Some(intern(format!("{class}#{method}")));
            exact[i] = true;
        } else if under[parent].is_some() {
            under[i] = under[parent];
            exact[i] = exact[parent];
        } else if classes.contains(class) {
            under[i] = Some(intern(class.to_string()));
        }
    }
    // Each node's cost with its callees'.
    let mut cum: Vec<Work> = tree.nodes.iter().map(|n| Work::new(n.instructions, n.bytes)).collect();
    for i in (1..tree.nodes.len()).rev() {
        let parent = tree.nodes[i].parent as usize;
        cum[parent] = cum[parent].plus(cum[i]);
    }
    let mut by_label: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (i, node) in tree.nodes.iter().enumerate().skip(1) {
        if let Some(label) = tree.methods.get(node.method as usize) {
            by_label.entry(label.as_str()).or_default().push(i);
        }
    }
    let model = CostModel::HOTSPOT;
    for finding in findings.iter_mut() {
        let l = &finding.location;
        let label = format!("{}.{}{}", l.class, l.method, l.descriptor);
        let Some(nodes) = by_label.get(label.as_str()) else { continue };
        let method = tree.nodes[nodes[0]].method;
        let mut per_test: FxHashMap<u32, f64> = FxHashMap::default();
        let mut total = 0.0;
        for &n in nodes {
            // A recursive method's inner contexts are already in its outermost one's cost.
            if has_ancestor(tree, n, method) {
                continue;
            }
            let cost = model.nanos(cum[n]);
            total += cost;
            if let Some(test) = under[n] {
                *per_test.entry(test).or_default() += cost;
            }
        }
        if total <= 0.0 {
            continue;
        }
        let mut shares: Vec<TestShare> = per_test
            .into_iter()
            .map(|(test, cost)| TestShare { test: keys[test as usize].clone(), share: cost / total })
            .filter(|s| s.share >= 0.005)
            .collect();
        shares.sort_by(|a, b| b.share.total_cmp(&a.share).then_with(|| a.test.cmp(&b.test)));
        finding.tests = shares;
    }
}

/// `com.acme.Foo$Bar.run(I)V` → (`com.acme.Foo$Bar`, `run`).
fn class_and_method(label: &str) -> (&str, &str) {
    let name = &label[..label.find('(').unwrap_or(label.len())];
    match name.rfind('.') {
        Some(dot) => (&name[..dot], &name[dot + 1..]),
        None => ("", name),
    }
}

fn has_ancestor(tree: &CallTree, mut n: usize, method: u32) -> bool {
    while n != 0 {
        n = tree.nodes[n].parent as usize;
        if n != 0 && tree.nodes[n].method == method {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::calltree::CallNode;
    use crate::junit::TestStatus;

    fn node(parent: u32, method: u32, instructions: u64) -> CallNode {
        CallNode { parent, method, instructions, bytes: 0, copies: 0 }
    }

    fn test(class: &str, method: &str) -> TestOutcome {
        TestOutcome {
            class: class.into(),
            method: method.into(),
            name: format!("{method}()"),
            status: TestStatus::Passed,
            message: None,
        }
    }

    #[test]
    fn a_finding_is_charged_to_the_tests_above_its_method() {
        let methods = [
            "org.junit.Runner.invoke()V",
            "a.FooTest.adds()V",
            "a.FooTest.removes()V",
            "a.FooTest.setUp()V",
            "a.Calc.sum(I)I",
            "a.FooTest.helper()V",
        ];
        let tree = CallTree {
            methods: methods.iter().map(|m| m.to_string()).collect(),
            nodes: vec![
                node(0, u32::MAX, 0),
                node(0, 0, 100), // 1: the launcher
                node(1, 1, 10),  // 2: adds
                node(2, 5, 5),   // 3: adds → helper
                node(3, 4, 300), // 4: adds → helper → sum
                node(1, 2, 10),  // 5: removes
                node(5, 4, 100), // 6: removes → sum
                node(6, 4, 50),  // 7: removes → sum → sum (recursion: in 6's cost)
                node(1, 3, 10),  // 8: setUp
                node(8, 4, 100), // 9: setUp → sum
                node(1, 4, 50),  // 10: the launcher → sum (discovery)
            ],
        };
        let tests = [test("a.FooTest", "adds"), test("a.FooTest", "removes")];
        let location = crate::report::Location {
            file: Some("a/Calc.java".into()),
            line: Some(3),
            class: "a.Calc".into(),
            method: "sum".into(),
            descriptor: "(I)I".into(),
            bci: 0,
            expression: None,
        };
        let evidence = crate::evidence::Evidence::Bottleneck(Default::default());
        let mut findings = vec![Finding::new(evidence, 1.0, String::new(), location)];
        attribute(&mut findings, &tree, &tests);
        let got: Vec<(String, String)> =
            findings[0].tests.iter().map(|t| (t.test.clone(), format!("{:.3}", t.share))).collect();
        // sum's cost: 300 under adds, 150 under removes, 100 under setUp, 50 under no test (600).
        assert_eq!(
            got,
            [
                ("a.FooTest#adds".to_string(), "0.500".to_string()),
                ("a.FooTest#removes".to_string(), "0.250".to_string()),
                ("a.FooTest".to_string(), "0.167".to_string())
            ]
        );
    }
}

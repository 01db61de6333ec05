//! From report locations (a file and a line) to editor ranges: tree-sitter-java finds the exact
//! expression a finding is about on its line — the `new` expression of an allocation, the store of
//! a copy, the call — and positions are converted to the client's encoding (UTF-16 by default).
//! Also finds `main` methods for the "Profile" lenses.

use tower_lsp_server::ls_types::{Position, PositionEncodingKind, Range};
use tree_sitter::{Node, Tree};

/// How the client counts characters in a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
    Utf32,
}

impl Encoding {
    /// The best encoding among the client's offers (UTF-8 saves conversions; UTF-16 is the default).
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        let offered = offered.unwrap_or(&[]);
        if offered.contains(&PositionEncodingKind::UTF8) {
            Encoding::Utf8
        } else if offered.contains(&PositionEncodingKind::UTF32) && !offered.contains(&PositionEncodingKind::UTF16) {
            Encoding::Utf32
        } else {
            Encoding::Utf16
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    fn units(self, c: char) -> u32 {
        match self {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
            Encoding::Utf32 => 1,
        }
    }
}

/// A document's text with its line starts, for converting between byte offsets and positions.
#[derive(Debug, Clone)]
pub struct LineIndex {
    pub text: String,
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: String) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// Byte offset where 0-based `line` starts (the end of the text past the last line).
    pub fn line_start(&self, line: usize) -> usize {
        self.starts.get(line).copied().unwrap_or(self.text.len())
    }

    /// The text of 0-based line `line`, without its line break.
    pub fn line(&self, line: usize) -> Option<&str> {
        let start = *self.starts.get(line)?;
        let end = self.starts.get(line + 1).copied().unwrap_or(self.text.len());
        Some(self.text[start..end].trim_end_matches(['\n', '\r']))
    }

    pub fn position(&self, offset: usize, enc: Encoding) -> Position {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character = self.text[start..offset].chars().map(|c| enc.units(c)).sum();
        Position { line: line as u32, character }
    }

    pub fn offset(&self, pos: Position, enc: Encoding) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else { return self.text.len() };
        let line = self.line(pos.line as usize).unwrap_or("");
        let mut units = 0;
        for (i, c) in line.char_indices() {
            if units >= pos.character {
                return start + i;
            }
            units += enc.units(c);
        }
        start + line.len()
    }

    pub fn range(&self, start: usize, end: usize, enc: Encoding) -> Range {
        Range { start: self.position(start, enc), end: self.position(end, enc) }
    }

    /// The trimmed text of 0-based `line` as a range (the fallback when no expression matches).
    pub fn line_range(&self, line: usize, enc: Encoding) -> Range {
        let Some(text) = self.line(line) else {
            let end = self.position(self.text.len(), enc);
            return Range { start: end, end };
        };
        let start = self.starts[line] + (text.len() - text.trim_start().len());
        let end = self.starts[line] + text.trim_end().len();
        self.range(start, end.max(start), enc)
    }
}

pub fn parse(text: &str) -> Option<Tree> {
    bloatlens_profiler::quickfix::syntax::parse_java(text)
}

/// The node kinds that say what a finding of `kind` is about, most specific first.
fn wanted(kind: &str) -> &'static [&'static str] {
    match kind {
        "copy-chain" => &["assignment_expression", "method_invocation", "variable_declarator", "return_statement"],
        "clone" | "nath" | "mostly-nath" | "never-used" | "rarely-used" | "write-read-imbalance" | "lifetime" => &[
            "object_creation_expression",
            "array_creation_expression",
            "binary_expression",
            "method_invocation",
            "array_initializer",
        ],
        _ => &["method_invocation", "object_creation_expression", "assignment_expression"],
    }
}

/// What the report's words for an expression (`Location::expression`: `String.substring(…)`,
/// `new Order(…)`, `new int[…]`, `the string concatenation`, `the lambda (a Runnable)`,
/// `Order::total`) name in the syntax tree.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target<'e> {
    /// A method invocation of this name.
    Call(&'e str),
    /// An object creation of this type (its simple name).
    New(&'e str),
    NewArray,
    Concat,
    Lambda,
    MethodRef,
}

fn target(expression: &str) -> Option<Target<'_>> {
    let identifier = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    if expression == "the string concatenation" {
        return Some(Target::Concat);
    }
    if expression.starts_with("the lambda") {
        return Some(Target::Lambda);
    }
    if expression.contains("::") {
        return Some(Target::MethodRef);
    }
    if let Some(rest) = expression.strip_prefix("new ") {
        if rest.contains('[') {
            return Some(Target::NewArray);
        }
        let ty = rest.split('(').next()?.rsplit('.').next()?;
        return Some(Target::New(ty));
    }
    // `Owner.name(…)`, `Owner.name()`: a call.
    let name = expression.split_once('(')?.0.rsplit('.').next()?;
    identifier(name).then_some(Target::Call(name))
}

/// The span of the node `target` names on 0-based `line`, if there is one: the first in the line
/// (the outermost of those that start together). A call whose receiver starts on an earlier line
/// (a chain) is taken from its method's name.
fn target_span(index: &LineIndex, tree: &Tree, line: usize, target: Target) -> Option<(usize, usize)> {
    let text = index.text.as_str();
    let mut best: Option<(usize, usize, bool)> = None;
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.start_position().row > line || node.end_position().row < line {
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
        let start = match (target, node.kind()) {
            (Target::Call(name), "method_invocation") => {
                let Some(n) = node.child_by_field_name("name").filter(|n| &text[n.byte_range()] == name) else {
                    continue;
                };
                if node.start_position().row == line {
                    node.start_byte()
                } else if n.start_position().row == line {
                    n.start_byte()
                } else {
                    continue;
                }
            }
            _ if node.start_position().row != line => continue,
            (Target::New(_), "object_creation_expression")
            | (Target::NewArray, "array_creation_expression")
            | (Target::Lambda, "lambda_expression")
            | (Target::MethodRef, "method_reference") => node.start_byte(),
            (Target::Concat, "binary_expression")
                if node.child_by_field_name("operator").is_some_and(|o| o.kind() == "+") =>
            {
                node.start_byte()
            }
            _ => continue,
        };
        // An object creation of another type is taken only when none is of the type named.
        let exact = match target {
            Target::New(ty) => node.child_by_field_name("type").is_some_and(|t| {
                let written = &text[t.byte_range()];
                written.split('<').next().unwrap_or(written).trim().rsplit('.').next() == Some(ty)
            }),
            _ => true,
        };
        let better = match best {
            None => true,
            Some((s, e, ex)) => (exact, std::cmp::Reverse(start), node.end_byte()) > (ex, std::cmp::Reverse(s), e),
        };
        if better {
            best = Some((start, node.end_byte(), exact));
        }
    }
    best.map(|(s, e, _)| (s, e))
}

/// The byte range of the expression a finding of `kind` on 0-based `line` is about: the one the
/// report names (`expression`: the call, the `new`, the concatenation the bytecode ran there)
/// when the line has it, else the outermost node of the most specific kind `kind` wants that
/// starts on that line; `None` when there is neither.
pub fn finding_span(
    index: &LineIndex,
    tree: Option<&Tree>,
    line: usize,
    kind: &str,
    expression: Option<&str>,
) -> Option<(usize, usize)> {
    let tree = tree?;
    // A node running over several lines is cut at the end of its first line.
    let line_end = index.line(line).map(|l| index.line_start(line) + l.trim_end().len());
    let cut = |(s, e): (usize, usize)| (s, line_end.map_or(e, |l| e.min(l)));
    if let Some(span) = expression.and_then(target).and_then(|t| target_span(index, tree, line, t)) {
        return Some(cut(span));
    }
    let mut best: Option<(usize, Node)> = None;
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let (start, end) = (node.start_position().row, node.end_position().row);
        if start > line || end < line {
            continue;
        }
        if start == line {
            if let Some(rank) = wanted(kind).iter().position(|k| *k == node.kind()) {
                // A better kind wins; among equals, the outermost (found first, it is larger).
                let better = match &best {
                    None => true,
                    Some((r, b)) => rank < *r || (rank == *r && node.start_byte() < b.start_byte()),
                };
                if better {
                    best = Some((rank, node));
                }
            }
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    let (_, node) = best?;
    Some(cut((node.start_byte(), node.end_byte())))
}

/// The range for a finding: the expression `finding_span` finds, else the line's trimmed text.
pub fn finding_range(
    index: &LineIndex,
    tree: Option<&Tree>,
    line: usize,
    kind: &str,
    expression: Option<&str>,
    enc: Encoding,
) -> Range {
    match finding_span(index, tree, line, kind, expression) {
        Some((s, e)) => index.range(s, e, enc),
        None => index.line_range(line, enc),
    }
}

/// A `public static void main(String[])` in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MainMethod {
    /// Binary name of the declaring class (`com.acme.App`, `com.acme.App$Inner`).
    pub class: String,
    /// 0-based line of the method's name.
    pub line: usize,
    /// Byte range of the name.
    pub name_span: (usize, usize),
}

pub fn main_methods(text: &str, tree: Option<&Tree>) -> Vec<MainMethod> {
    let Some(tree) = tree else { return Vec::new() };
    let mut out = Vec::new();
    each_method(tree.root_node(), text, &mut |class, _, method| {
        let Some(name) = method.child_by_field_name("name") else { return };
        let mods = modifiers(method).map(|m| &text[m.byte_range()]).unwrap_or("");
        let params = method.child_by_field_name("parameters").map(|p| &text[p.byte_range()]).unwrap_or("");
        let is_main = &text[name.byte_range()] == "main"
            && mods.split_whitespace().any(|m| m == "static")
            && mods.split_whitespace().any(|m| m == "public")
            && params.contains("String");
        if is_main {
            out.push(MainMethod {
                class: class.to_string(),
                line: name.start_position().row,
                name_span: (name.start_byte(), name.end_byte()),
            });
        }
    });
    out
}

/// A JUnit test in a source file: a test method, or a class that has some (`method` None).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestEntry {
    pub class: String,
    pub method: Option<String>,
    /// Byte range of the method's (or the class's) name.
    pub name_span: (usize, usize),
}

impl TestEntry {
    /// What `bloatlens profile --test` takes: `com.acme.FooTest` or `com.acme.FooTest#bar`.
    pub fn selector(&self) -> String {
        match &self.method {
            Some(m) => format!("{}#{m}", self.class),
            None => self.class.clone(),
        }
    }
}

/// The annotations that make a method a test: JUnit 5's (tests, parameterized, repeated,
/// factories, templates) and JUnit 4's `@Test`.
const TEST_ANNOTATIONS: &[&str] = &["Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate"];

/// The file's test methods, each class that has one first (in source order).
pub fn test_entries(text: &str, tree: Option<&Tree>) -> Vec<TestEntry> {
    let Some(tree) = tree else { return Vec::new() };
    let mut out: Vec<TestEntry> = Vec::new();
    each_method(tree.root_node(), text, &mut |class, class_name, method| {
        let Some(name) = method.child_by_field_name("name") else { return };
        let is_test = modifiers(method).is_some_and(|m| {
            m.children(&mut m.walk())
                .filter(|a| a.kind() == "marker_annotation" || a.kind() == "annotation")
                .filter_map(|a| a.child_by_field_name("name"))
                .any(|n| TEST_ANNOTATIONS.contains(&text[n.byte_range()].rsplit('.').next().unwrap_or("")))
        });
        if !is_test {
            return;
        }
        if !out.iter().any(|t| t.class == class && t.method.is_none()) {
            out.push(TestEntry {
                class: class.to_string(),
                method: None,
                name_span: (class_name.start_byte(), class_name.end_byte()),
            });
        }
        out.push(TestEntry {
            class: class.to_string(),
            method: Some(text[name.byte_range()].to_string()),
            name_span: (name.start_byte(), name.end_byte()),
        });
    });
    out
}

fn modifiers(method: Node) -> Option<Node> {
    method.children(&mut method.walk()).find(|c| c.kind() == "modifiers")
}

/// Calls `visit` with every method declaration of the file's classes (nested ones too), its
/// class's binary name (`p.Outer$Inner`) and the node of the class's name.
fn each_method<'t>(root: Node<'t>, text: &str, visit: &mut dyn FnMut(&str, Node<'t>, Node<'t>)) {
    let package = bloatlens_profiler::javac::package_of(text);
    walk_classes(root, text, &mut Vec::new(), &package, visit);
}

fn walk_classes<'t>(
    node: Node<'t>,
    text: &str,
    names: &mut Vec<(String, Node<'t>)>,
    package: &Option<String>,
    visit: &mut dyn FnMut(&str, Node<'t>, Node<'t>),
) {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "class_declaration" | "enum_declaration" | "record_declaration" | "interface_declaration" => {
                let Some(name) = child.child_by_field_name("name") else { continue };
                names.push((text[name.byte_range()].to_string(), name));
                if let Some(body) = child.child_by_field_name("body") {
                    walk_classes(body, text, names, package, visit);
                }
                names.pop();
            }
            "method_declaration" if !names.is_empty() => {
                let nested = names.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join("$");
                let class = match package {
                    Some(p) => format!("{p}.{nested}"),
                    None => nested,
                };
                visit(&class, names[names.len() - 1].1, child);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "package p;\nclass A {\n    static class In { public static void main(String[] a) {} }\n    void f(int[] xs) {\n        String s = \"é𝄞\" + xs.length; Object o = new Object();\n        xs[0] = xs[1];\n    }\n    public static void main(String... args) { }\n}\n";

    #[test]
    fn finds_junit_tests_and_their_classes() {
        let src = "package p;\nimport org.junit.jupiter.api.*;\nclass CalcTest {\n  @Test void adds() {}\n  @org.junit.Test public void old() {}\n  @ParameterizedTest @ValueSource(ints = {1}) void many(int x) {}\n  @Disabled(\"no\") @Test void off() {}\n  void helper() {}\n  @Nested class Inner { @RepeatedTest(2) void again() {} }\n}\nclass Plain { void f() {} }\n";
        let tree = parse(src);
        let found: Vec<String> = test_entries(src, tree.as_ref()).iter().map(|t| t.selector()).collect();
        assert_eq!(
            found,
            vec![
                "p.CalcTest",
                "p.CalcTest#adds",
                "p.CalcTest#old",
                "p.CalcTest#many",
                "p.CalcTest#off",
                "p.CalcTest$Inner",
                "p.CalcTest$Inner#again"
            ]
        );
        let first = &test_entries(src, tree.as_ref())[0];
        assert_eq!(&src[first.name_span.0..first.name_span.1], "CalcTest");
    }

    #[test]
    fn finds_the_expression_and_counts_utf16() {
        let index = LineIndex::new(SRC.to_string());
        let tree = parse(SRC);
        // Line 4 (0-based) holds `new Object()` after a string with a 2-unit UTF-16 character.
        let r = finding_range(&index, tree.as_ref(), 4, "nath", None, Encoding::Utf16);
        let line = index.line(4).unwrap();
        let col_bytes = line.find("new Object()").unwrap();
        let col_utf16: u32 = line[..col_bytes].chars().map(|c| c.len_utf16() as u32).sum();
        // The string concatenation `"é𝄞" + xs.length` is a binary expression, ranked after `new`.
        assert_eq!((r.start.line, r.start.character), (4, col_utf16));
        assert_eq!(r.end.character - r.start.character, "new Object()".len() as u32);
        let r8 = finding_range(&index, tree.as_ref(), 4, "nath", None, Encoding::Utf8);
        assert_eq!(r8.start.character, col_bytes as u32, "UTF-8 counts bytes");
        assert_ne!(r8.start.character, r.start.character);
        let copy = finding_range(&index, tree.as_ref(), 5, "copy-chain", None, Encoding::Utf16);
        assert_eq!(
            &index.line(5).unwrap()[copy.start.character as usize..copy.end.character as usize],
            "xs[0] = xs[1]"
        );
        // No expression of a wanted kind: the trimmed line.
        let fallback = finding_range(&index, tree.as_ref(), 1, "nath", None, Encoding::Utf16);
        assert_eq!((fallback.start.character, fallback.end.character), (0, 9));
    }

    /// The expression the report names is the range: the call, not an argument that happens to be
    /// of a kind ranked higher (a concatenation, a `new`).
    #[test]
    fn the_named_expression_is_the_range() {
        let src = "class A {\n    void f(String f, String pkg, java.util.List<String> ret, String[] parts, int[] out) {\n        ret.add(f.substring(pkg.length() + 1).toUpperCase());\n        for (int i = 0; i < 3; i++) out[i] = Integer.parseInt(parts[i].substring(parts[i].indexOf('=') + 1));\n        String s = f.trim()\n            .substring(1, 3);\n        Object o = java.util.List.of(new StringBuilder(\"a\" + f), new java.util.HashMap<String, Integer>());\n        Runnable r = () -> {}; String t = \"x\" + f + pkg;\n    }\n}\n";
        let index = LineIndex::new(src.to_string());
        let tree = parse(src);
        let span = |line: usize, kind: &str, expression: Option<&str>| {
            let (s, e) = finding_span(&index, tree.as_ref(), line, kind, expression).unwrap();
            src[s..e].to_string()
        };
        let cases = [
            (2, "nath", Some("String.substring(…)"), "f.substring(pkg.length() + 1)"),
            (2, "low-utility", Some("List.add(…)"), "ret.add(f.substring(pkg.length() + 1).toUpperCase())"),
            (2, "nath", Some("String.toUpperCase()"), "f.substring(pkg.length() + 1).toUpperCase()"),
            (3, "nath", Some("String.substring(…)"), "parts[i].substring(parts[i].indexOf('=') + 1)"),
            // The call's receiver starts a line above: the squiggle starts at the method's name.
            (5, "nath", Some("String.substring(…)"), "substring(1, 3)"),
            (6, "nath", Some("new HashMap(…)"), "new java.util.HashMap<String, Integer>()"),
            (6, "lifetime", Some("new StringBuilder(…)"), "new StringBuilder(\"a\" + f)"),
            (6, "nath", Some("the string concatenation"), "\"a\" + f"),
            (7, "lifetime", Some("the lambda (a Runnable)"), "() -> {}"),
            (7, "nath", Some("the string concatenation"), "\"x\" + f + pkg"),
            // Words with no syntax of their own, or a call the line does not have: the kind decides.
            (2, "nath", Some("boxing to Integer"), "pkg.length() + 1"),
            (2, "nath", Some("String.strip()"), "pkg.length() + 1"),
        ];
        for (line, kind, expression, want) in cases {
            assert_eq!(span(line, kind, expression), want, "{kind} {expression:?} on line {line}");
        }
    }

    #[test]
    fn offsets_round_trip_in_every_encoding() {
        let index = LineIndex::new(SRC.to_string());
        for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
            for off in [0, 15, SRC.find("𝄞").unwrap(), SRC.find("new Object").unwrap(), SRC.len()] {
                assert_eq!(index.offset(index.position(off, enc), enc), off, "{enc:?} at {off}");
            }
        }
    }

    #[test]
    fn finds_mains_with_their_binary_names() {
        let tree = parse(SRC);
        let mains = main_methods(SRC, tree.as_ref());
        let names: Vec<(&str, usize)> = mains.iter().map(|m| (m.class.as_str(), m.line)).collect();
        assert_eq!(names, vec![("p.A$In", 2), ("p.A", 7)]);
    }
}

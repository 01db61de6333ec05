//! The Java source a quick fix edits, as tree-sitter-java parses it: finding the expression a
//! finding names on its line, the statement, loop, method and class around it, and the small
//! facts a fix must check (a local's declared type, whether a name is assigned in a range).

use tree_sitter::{Node, Parser, Tree};

/// A parsed source file.
pub struct Source<'t> {
    pub text: &'t str,
    pub tree: Tree,
}

impl<'t> Source<'t> {
    /// `None` when tree-sitter-java cannot be loaded (a version mismatch of the grammar).
    pub fn parse(text: &'t str) -> Option<Source<'t>> {
        Some(Source { text, tree: parse_java(text)? })
    }

    pub fn text_of(&self, n: Node<'_>) -> &'t str {
        &self.text[n.byte_range()]
    }

    /// Every node of `kind` that starts on `line` (1-based), outermost first.
    pub fn on_line(&self, line: u32, kind: &str) -> Vec<Node<'_>> {
        let row = line.saturating_sub(1) as usize;
        let mut out = Vec::new();
        let mut stack = vec![self.tree.root_node()];
        while let Some(n) = stack.pop() {
            if n.start_position().row > row || n.end_position().row < row {
                continue;
            }
            if n.kind() == kind && n.start_position().row == row {
                out.push(n);
            }
            let mut c = n.walk();
            let children: Vec<Node<'_>> = n.children(&mut c).collect();
            stack.extend(children.into_iter().rev());
        }
        out.sort_by_key(|n| (n.start_byte(), std::cmp::Reverse(n.end_byte())));
        out
    }

    /// The whitespace that starts `n`'s line.
    pub fn indent_of(&self, n: Node<'_>) -> &'t str {
        let start = self.line_start(n.start_byte());
        let line = &self.text[start..];
        &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
    }

    /// The byte offset at which `offset`'s line starts.
    pub fn line_start(&self, offset: usize) -> usize {
        self.text[..offset].rfind('\n').map(|i| i + 1).unwrap_or(0)
    }

    /// The byte offset just past the end of `offset`'s line (after its line break).
    pub fn line_end(&self, offset: usize) -> usize {
        self.text[offset..].find('\n').map(|i| offset + i + 1).unwrap_or(self.text.len())
    }

    /// The line break the file uses.
    pub fn newline(&self) -> &'static str {
        if self.text.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        }
    }

    /// One level of indentation as the file writes it (a tab, or the smallest step of spaces).
    pub fn indent_unit(&self) -> String {
        let mut step = usize::MAX;
        for line in self.text.lines() {
            if line.starts_with('\t') {
                return "\t".into();
            }
            let n = line.len() - line.trim_start_matches(' ').len();
            if n > 0 && n < line.len() {
                step = step.min(n);
            }
        }
        " ".repeat(if step == usize::MAX { 4 } else { step })
    }

    /// Whether `name` occurs as an identifier anywhere in `scope` (declared, read or written).
    pub fn mentions(&self, scope: Node<'_>, name: &str) -> bool {
        descendants(scope).any(|n| is_name(n.kind()) && self.text_of(n) == name)
    }

    /// Whether `name` occurs in `scope` as a variable (a local, parameter or field, declared or
    /// used), not only as a method's name, which lives in another namespace.
    pub fn mentions_variable(&self, scope: Node<'_>, name: &str) -> bool {
        descendants(scope).any(|n| {
            is_name(n.kind())
                && self.text_of(n) == name
                && !n.parent().is_some_and(|p| {
                    matches!(p.kind(), "method_invocation" | "method_declaration")
                        && p.child_by_field_name("name") == Some(n)
                })
        })
    }

    /// Whether the file imports `class` (`java.util.regex.Pattern`) by name or by its package's
    /// wildcard; and whether another class of the same simple name is imported or declared, so
    /// that the simple name cannot be used.
    pub fn import_state(&self, class: &str) -> ImportState {
        let (package, simple) = class.rsplit_once('.').unwrap_or(("", class));
        let root = self.tree.root_node();
        let mut state = ImportState::Missing;
        let mut c = root.walk();
        for n in root.children(&mut c) {
            if n.kind() != "import_declaration" {
                continue;
            }
            let text = self.text_of(n);
            let body = text.trim_start_matches("import").trim().trim_end_matches(';').trim();
            if body.starts_with("static ") {
                continue;
            }
            if body == class || body == format!("{package}.*") {
                state = ImportState::Imported;
            } else if body.rsplit('.').next() == Some(simple) {
                return ImportState::Clashes;
            }
        }
        if state == ImportState::Missing
            && descendants(root).any(|n| {
                matches!(
                    n.kind(),
                    "class_declaration" | "interface_declaration" | "enum_declaration" | "record_declaration"
                ) && n.child_by_field_name("name").is_some_and(|id| self.text_of(id) == simple)
            })
        {
            return ImportState::Clashes;
        }
        state
    }

    /// Where a new import goes: after the last import, else after the package declaration, else at
    /// the top; with the text to insert for `class`.
    pub fn import_edit(&self, class: &str) -> (usize, String) {
        let root = self.tree.root_node();
        let mut c = root.walk();
        let mut after = None;
        for n in root.children(&mut c) {
            match n.kind() {
                "import_declaration" | "package_declaration" => after = Some(n),
                _ => {}
            }
        }
        let nl = self.newline();
        match after {
            Some(n) if n.kind() == "package_declaration" => {
                (self.line_end(n.end_byte()), format!("{nl}import {class};{nl}"))
            }
            Some(n) => (self.line_end(n.end_byte()), format!("import {class};{nl}")),
            None => (0, format!("import {class};{nl}{nl}")),
        }
    }
}

/// `text` parsed by tree-sitter-java (it parses what it can of a file with errors); `None` when the
/// grammar cannot be loaded (a version mismatch).
pub fn parse_java(text: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_java::LANGUAGE.into()).ok()?;
    parser.parse(text, None)
}

/// Whether a class can be named by its simple name in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportState {
    Imported,
    /// Not imported, and nothing else of that simple name is: an import can be added.
    Missing,
    /// Another class of that simple name is imported or declared: write the qualified name.
    Clashes,
}

/// `n` and everything below it, in source order.
pub fn descendants<'a>(n: Node<'a>) -> impl Iterator<Item = Node<'a>> {
    let mut stack = vec![n];
    std::iter::from_fn(move || {
        let n = stack.pop()?;
        let mut c = n.walk();
        let children: Vec<Node<'a>> = n.children(&mut c).collect();
        stack.extend(children.into_iter().rev());
        Some(n)
    })
}

/// The nearest ancestor of `n` (not `n` itself) whose kind is one of `kinds`.
pub fn ancestor<'a>(n: Node<'a>, kinds: &[&str]) -> Option<Node<'a>> {
    let mut at = n.parent();
    while let Some(p) = at {
        if kinds.contains(&p.kind()) {
            return Some(p);
        }
        at = p.parent();
    }
    None
}

/// Calls that change their receiver (a collection's or a builder's) and whose result a statement
/// may drop: a name used as one's receiver in a loop is not invariant there; a field only ever
/// the receiver of these is never read.
pub const MUTATORS: [&str; 26] = [
    "add",
    "addAll",
    "addFirst",
    "addLast",
    "put",
    "putAll",
    "putIfAbsent",
    "remove",
    "removeIf",
    "removeAll",
    "retainAll",
    "set",
    "clear",
    "append",
    "insert",
    "delete",
    "deleteCharAt",
    "sort",
    "push",
    "pop",
    "poll",
    "offer",
    "compute",
    "computeIfAbsent",
    "merge",
    "setLength",
];

pub const LOOPS: [&str; 4] = ["for_statement", "enhanced_for_statement", "while_statement", "do_statement"];
pub const METHODS: [&str; 4] =
    ["method_declaration", "constructor_declaration", "lambda_expression", "static_initializer"];
pub const TYPES: [&str; 4] = ["class_declaration", "record_declaration", "enum_declaration", "interface_declaration"];

fn is_name(kind: &str) -> bool {
    kind == "identifier"
}

/// A call's method name, receiver and argument nodes.
pub struct Call<'a> {
    pub node: Node<'a>,
    pub name: Node<'a>,
    pub object: Option<Node<'a>>,
    pub args: Vec<Node<'a>>,
}

impl<'a> Call<'a> {
    pub fn of(node: Node<'a>) -> Option<Call<'a>> {
        if node.kind() != "method_invocation" {
            return None;
        }
        let name = node.child_by_field_name("name")?;
        let object = node.child_by_field_name("object");
        let list = node.child_by_field_name("arguments")?;
        let mut c = list.walk();
        let args = list.named_children(&mut c).filter(|a| a.kind() != "comment").collect();
        Some(Call { node, name, object, args })
    }
}

/// The names a statement range assigns: plain assignments, compound assignments, `++`/`--`.
pub fn assigned_in<'a>(src: &Source<'a>, scope: Node<'_>) -> Vec<&'a str> {
    let mut out = Vec::new();
    for n in descendants(scope) {
        let target = match n.kind() {
            "assignment_expression" => n.child_by_field_name("left"),
            "update_expression" => n.named_child(0),
            _ => None,
        };
        if let Some(t) = target {
            let t = if t.kind() == "field_access" { t.child_by_field_name("field").unwrap_or(t) } else { t };
            out.push(src.text_of(t));
        }
    }
    out
}

/// The names declared in `scope` (locals, parameters, loop variables, lambda parameters).
pub fn declared_in<'a>(src: &Source<'a>, scope: Node<'_>) -> Vec<&'a str> {
    let mut out = Vec::new();
    for n in descendants(scope) {
        let name = match n.kind() {
            "variable_declarator" | "formal_parameter" | "enhanced_for_statement" | "catch_formal_parameter" => {
                n.child_by_field_name("name")
            }
            "lambda_expression" => n.child_by_field_name("parameters").filter(|p| p.kind() == "identifier"),
            "inferred_parameters" => {
                out.extend(descendants(n).filter(|i| i.kind() == "identifier").map(|i| src.text_of(i)));
                None
            }
            _ => None,
        };
        if let Some(name) = name {
            out.push(src.text_of(name));
        }
    }
    out
}

/// The declared type of the local, parameter or field `name` visible at `at`: the nearest
/// declaration in an enclosing method, then the enclosing classes' fields. `None` when none is
/// found or it is declared with `var`.
pub fn declared_type<'a>(src: &Source<'a>, at: Node<'_>, name: &str) -> Option<&'a str> {
    let mut scope = at.parent();
    while let Some(s) = scope {
        let mut best: Option<&'a str> = None;
        // Declarations directly in this scope (not in nested classes), before `at`.
        for n in descendants(s) {
            if n.start_byte() > at.start_byte() && !TYPES.contains(&s.kind()) {
                break;
            }
            let (ty, declared) = match n.kind() {
                "local_variable_declaration" | "field_declaration" => {
                    let ty = n.child_by_field_name("type");
                    let mut c = n.walk();
                    let hit = n
                        .children_by_field_name("declarator", &mut c)
                        .any(|d| d.child_by_field_name("name").is_some_and(|id| src.text_of(id) == name));
                    (ty, hit)
                }
                "formal_parameter" | "enhanced_for_statement" | "catch_formal_parameter" => (
                    n.child_by_field_name("type"),
                    n.child_by_field_name("name").is_some_and(|id| src.text_of(id) == name),
                ),
                _ => (None, false),
            };
            if declared {
                if let Some(ty) = ty {
                    best = Some(src.text_of(ty));
                }
            }
        }
        if let Some(ty) = best {
            return (ty != "var").then_some(ty);
        }
        scope = s.parent();
    }
    None
}

/// The declared type's name without its type arguments or package: `List` for
/// `java.util.List<String>`.
pub fn simple_type(ty: &str) -> &str {
    let raw = ty.split('<').next().unwrap_or(ty).trim();
    raw.rsplit('.').next().unwrap_or(raw)
}

/// A Java identifier made from words: `taxTable` from `buildTaxTable`, `UPPER_CASE` forms.
pub fn constant_name(words: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for ch in words.chars() {
        if ch.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_uppercase());
            prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
            prev_lower = false;
        }
    }
    out.trim_matches('_').to_string()
}

/// `name`, or `name2`, `name3`… whichever `taken` does not hold.
pub fn fresh_name(name: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(name) {
        return name.to_string();
    }
    (2..).map(|i| format!("{name}{i}")).find(|n| !taken(n)).unwrap_or_default()
}

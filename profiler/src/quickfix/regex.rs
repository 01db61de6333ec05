//! Precompile a regular expression: `s.replaceAll(R, x)`, `s.replaceFirst(R, x)`, `s.split(R)`,
//! `s.matches(R)`, `Pattern.compile(R)` and `Pattern.matches(R, s)` with a constant `R` compile
//! `R` on every call; the fix compiles it once into a `private static final Pattern` and calls the
//! same operation on it (`String.replaceAll` is specified as exactly that).

use super::syntax::{ancestor, constant_name, fresh_name, Call, ImportState, Source, TYPES};
use super::{no, Edit, FixKind, Hint, NoFix, QuickFix, Site};
use tree_sitter::Node;

const PATTERN: &str = "java.util.regex.Pattern";

pub(super) fn fix(site: &Site<'_, '_>) -> Result<QuickFix, NoFix> {
    let src = site.src;
    let wanted = match &site.hint {
        Hint::Call { method, .. } => Some(method.as_str()),
        _ => None,
    };
    let calls: Vec<Call<'_>> = src
        .on_line(site.line, "method_invocation")
        .into_iter()
        .filter_map(Call::of)
        .filter(|c| op(src, c).is_some())
        .collect();
    let call =
        calls.iter().find(|c| wanted.is_none_or(|w| src.text_of(c.name) == w)).or(calls.first()).ok_or_else(|| {
            no("no `replaceAll`, `split`, `matches` or `Pattern.compile` call with its expression on this line")
        })?;
    let op = op(src, call).expect("filtered");
    let regex = op.regex(call);
    if regex.kind() != "string_literal" && !is_constant(src, regex) {
        return Err(no("the regular expression is not a constant here, so it cannot be compiled once"));
    }
    if matches!(op, Op::Split) && splits_without_regex(src.text_of(regex)) {
        return Err(no("String.split does not compile a one-character expression"));
    }
    let (class, import) = match src.import_state(PATTERN) {
        ImportState::Imported => ("Pattern", None),
        ImportState::Missing => ("Pattern", Some(src.import_edit(PATTERN))),
        ImportState::Clashes => (PATTERN, None),
    };
    let holder = holder(src, call.node).ok_or_else(|| {
        no("no class around the call can hold a static field (an interface, an enum or a local class)")
    })?;
    let body = holder.child_by_field_name("body").ok_or_else(|| no("the class has no body"))?;
    let name = fresh_name(&field_name(src, call), |n| src.mentions(src.tree.root_node(), n));
    let flags = op.flags(call).map(|f| format!(", {}", src.text_of(f))).unwrap_or_default();
    let indent = member_indent(src, holder, body);
    let nl = src.newline();
    let field =
        format!("{indent}private static final {class} {name} = {class}.compile({}{flags});{nl}", src.text_of(regex));
    let subject = |n: Node<'_>| src.text_of(n).to_string();
    let replacement = match op {
        Op::Replace => format!(
            "{name}.matcher({}).{}({})",
            subject(call.object.expect("checked")),
            src.text_of(call.name),
            src.text_of(call.args[1])
        ),
        Op::Split => match call.args.get(1) {
            Some(limit) => format!("{name}.split({}, {})", subject(call.object.expect("checked")), src.text_of(*limit)),
            None => format!("{name}.split({})", subject(call.object.expect("checked"))),
        },
        Op::Matches => format!("{name}.matcher({}).matches()", subject(call.object.expect("checked"))),
        Op::Compile => name.clone(),
        Op::PatternMatches => format!("{name}.matcher({}).matches()", subject(call.args[1])),
    };
    let mut edits = vec![
        Edit { start: src.line_end(body.start_byte()), end: src.line_end(body.start_byte()), text: field },
        Edit { start: call.node.start_byte(), end: call.node.end_byte(), text: replacement },
    ];
    if let Some((at, text)) = import {
        edits.push(Edit { start: at, end: at, text });
    }
    Ok(QuickFix {
        kind: FixKind::PrecompileRegex,
        title: format!("Compile {} once into `static final Pattern {name}`", src.text_of(regex)),
        edits,
        caveat: None,
    })
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Replace,
    Split,
    Matches,
    Compile,
    PatternMatches,
}

impl Op {
    fn regex<'a>(self, call: &Call<'a>) -> Node<'a> {
        call.args[0]
    }

    fn flags<'a>(self, call: &Call<'a>) -> Option<Node<'a>> {
        match self {
            Op::Compile => call.args.get(1).copied(),
            _ => None,
        }
    }
}

/// The operation a call is, when it compiles its first argument as a regular expression.
fn op(src: &Source<'_>, call: &Call<'_>) -> Option<Op> {
    let name = src.text_of(call.name);
    let on_pattern = call.object.is_some_and(|o| matches!(src.text_of(o), "Pattern" | "java.util.regex.Pattern"));
    match (name, call.args.len(), on_pattern) {
        ("compile", 1 | 2, true) => Some(Op::Compile),
        ("matches", 2, true) => Some(Op::PatternMatches),
        ("replaceAll" | "replaceFirst", 2, false) if call.object.is_some() => Some(Op::Replace),
        ("split", 1 | 2, false) if call.object.is_some() => Some(Op::Split),
        ("matches", 1, false) if call.object.is_some() => Some(Op::Matches),
        _ => None,
    }
}

/// Whether `n` names a `static final` field of the file initialised with a string literal.
fn is_constant(src: &Source<'_>, n: Node<'_>) -> bool {
    if n.kind() != "identifier" {
        return false;
    }
    let name = src.text_of(n);
    super::syntax::descendants(src.tree.root_node()).any(|d| {
        d.kind() == "field_declaration" && {
            let modifiers = d.child(0).filter(|m| m.kind() == "modifiers").map(|m| src.text_of(m)).unwrap_or("");
            let mut c = d.walk();
            modifiers.contains("static")
                && modifiers.contains("final")
                && d.children_by_field_name("declarator", &mut c).any(|v| {
                    v.child_by_field_name("name").is_some_and(|id| src.text_of(id) == name)
                        && v.child_by_field_name("value").is_some_and(|x| x.kind() == "string_literal")
                })
        }
    })
}

/// `String.split`'s fast path: a one-character expression that is not a metacharacter, or a
/// backslash and a character that is not a letter or digit, is split on without a `Pattern`.
fn splits_without_regex(literal: &str) -> bool {
    let Some(body) = literal.strip_prefix('"').and_then(|l| l.strip_suffix('"')) else { return false };
    // The literal as Java reads it, for the escapes a one-character expression can have.
    let value = body.replace("\\\\", "\\").replace("\\t", "\t").replace("\\\"", "\"");
    let chars: Vec<char> = value.chars().collect();
    match chars.as_slice() {
        [c] => !".$|()[{^?*+\\".contains(*c),
        ['\\', c] => !c.is_ascii_alphanumeric(),
        _ => false,
    }
}

/// The class the field goes in: the nearest class or record around the call that may declare a
/// static field (top-level or static nested; a record is static).
fn holder<'a>(src: &Source<'_>, at: Node<'a>) -> Option<Node<'a>> {
    let mut n = at;
    while let Some(t) = ancestor(n, &TYPES) {
        let top = t.parent().is_some_and(|p| p.kind() == "program");
        let in_body = t.parent().is_some_and(|p| matches!(p.kind(), "class_body" | "enum_body_declarations"));
        let is_static = t.child(0).is_some_and(|m| m.kind() == "modifiers" && src.text_of(m).contains("static"));
        match t.kind() {
            "class_declaration" if top || (in_body && is_static) => return Some(t),
            "record_declaration" if top || in_body => return Some(t),
            _ => n = t,
        }
    }
    None
}

/// The indentation of the class's members (its first member's, or the class's plus one step).
pub(super) fn member_indent(src: &Source<'_>, class: Node<'_>, body: Node<'_>) -> String {
    let mut c = body.walk();
    let first = body.named_children(&mut c).find(|m| m.kind() != "comment");
    match first {
        Some(m) if m.start_position().row > body.start_position().row => src.indent_of(m).to_string(),
        _ => format!("{}{}", src.indent_of(class), src.indent_unit()),
    }
}

/// `WORD_PATTERN` for `String word = token.replaceAll(…)`; `SPLIT_PATTERN` otherwise.
fn field_name(src: &Source<'_>, call: &Call<'_>) -> String {
    let mut at = call.node.parent();
    while let Some(p) = at {
        match p.kind() {
            "variable_declarator" => {
                if let Some(id) = p.child_by_field_name("name") {
                    return format!("{}_PATTERN", constant_name(src.text_of(id)));
                }
            }
            "assignment_expression" => {
                if let Some(l) = p.child_by_field_name("left") {
                    let l = l.child_by_field_name("field").unwrap_or(l);
                    return format!("{}_PATTERN", constant_name(src.text_of(l)));
                }
            }
            "expression_statement" | "block" | "method_declaration" => break,
            _ => {}
        }
        at = p.parent();
    }
    format!("{}_PATTERN", constant_name(src.text_of(call.name)))
}

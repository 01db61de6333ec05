//! Temporary strings made only to be compared or grown: a one-character string switched on
//! (switch on the `char`), a substring made to be compared (compare in place), a string grown by
//! `+=` in a loop (a `StringBuilder`).

use super::syntax::{ancestor, declared_type, descendants, Call, LOOPS, METHODS};
use super::{no, Edit, FixKind, NoFix, QuickFix, Site};
use tree_sitter::Node;

/// `switch (String.valueOf(c))` with one-character string labels → `switch (c)` with `char` ones.
pub(super) fn switch_on_char(site: &Site<'_, '_>) -> Result<QuickFix, NoFix> {
    let src = site.src;
    let call = src
        .on_line(site.line, "method_invocation")
        .into_iter()
        .filter_map(Call::of)
        .find(|c| {
            matches!(
                (c.object.map(|o| src.text_of(o)), src.text_of(c.name)),
                (Some("String"), "valueOf") | (Some("Character"), "toString")
            ) && c.args.len() == 1
        })
        .ok_or_else(|| no("no `String.valueOf` of a character on this line"))?;
    let switch = call
        .node
        .parent()
        .filter(|p| p.kind() == "parenthesized_expression")
        .and_then(|p| p.parent())
        .filter(|s| matches!(s.kind(), "switch_expression" | "switch_statement"))
        .ok_or_else(|| no("the string is not what a switch switches on"))?;
    let arg = call.args[0];
    let is_char = match arg.kind() {
        "identifier" => declared_type(src, arg, src.text_of(arg)) == Some("char"),
        "method_invocation" => Call::of(arg).is_some_and(|c| src.text_of(c.name) == "charAt" && c.args.len() == 1),
        "character_literal" => true,
        _ => false,
    };
    if !is_char {
        return Err(no("the switched value is not known to be a `char`"));
    }
    let body = switch.child_by_field_name("body").ok_or_else(|| no("no switch body"))?;
    let mut edits =
        vec![Edit { start: call.node.start_byte(), end: call.node.end_byte(), text: src.text_of(arg).to_string() }];
    for label in
        descendants(body).filter(|n| n.kind() == "switch_label" && ancestor(*n, &["switch_block"]) == Some(body))
    {
        let mut c = label.walk();
        for value in label.named_children(&mut c) {
            if value.kind() != "string_literal" {
                return Err(no(format!("the label `{}` is not a string of one character", src.text_of(value))));
            }
            let ch = char_literal(src.text_of(value))
                .ok_or_else(|| no(format!("the label {} is not one character", src.text_of(value))))?;
            edits.push(Edit { start: value.start_byte(), end: value.end_byte(), text: ch });
        }
    }
    Ok(QuickFix {
        kind: FixKind::SwitchOnChar,
        title: format!("Switch on the char `{}` instead of a string made of it", src.text_of(arg)),
        edits,
        caveat: None,
    })
}

/// `"x"` → `'x'`, `"'"` → `'\''`, `"\""` → `'"'`, `"\n"` → `'\n'`; `None` for longer strings.
fn char_literal(string: &str) -> Option<String> {
    let body = string.strip_prefix('"')?.strip_suffix('"')?;
    let mut chars = body.chars();
    match (chars.next()?, chars.next(), chars.next()) {
        ('\'', None, _) => Some("'\\''".into()),
        ('\\', Some('"'), None) => Some("'\"'".into()),
        ('\\', Some(e), None) if "ntrbf0\\'".contains(e) => Some(format!("'\\{e}'")),
        ('\\', _, _) => None,
        (c, None, _) if c.len_utf16() == 1 => Some(format!("'{c}'")),
        _ => None,
    }
}

/// The number of `char`s a string literal holds, for the simple escapes; `None` for others.
fn literal_len(string: &str) -> Option<usize> {
    let body = string.strip_prefix('"')?.strip_suffix('"')?;
    let mut n = 0;
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let e = chars.next()?;
            if !"ntrbf\\'\"".contains(e) {
                return None;
            }
            n += 1;
        } else {
            n += c.len_utf16();
        }
    }
    Some(n)
}

/// `s.substring(i, i + 2).equals("{{")` → `s.startsWith("{{", i)` (and `"{{".equals(…)`).
pub(super) fn compare_in_place(site: &Site<'_, '_>) -> Result<QuickFix, NoFix> {
    let src = site.src;
    let mut why = "no substring compared with a string literal on this line".to_string();
    for eq in src.on_line(site.line, "method_invocation").into_iter().filter_map(Call::of) {
        if src.text_of(eq.name) != "equals" || eq.args.len() != 1 {
            continue;
        }
        let (sub, literal) = match (eq.object, eq.args[0]) {
            (Some(o), a) if a.kind() == "string_literal" => (o, a),
            (Some(o), a) if o.kind() == "string_literal" => (a, o),
            _ => continue,
        };
        let Some(sub) = Call::of(sub).filter(|c| src.text_of(c.name) == "substring") else { continue };
        let Some(text) = sub.object else { continue };
        let Some(len) = literal_len(src.text_of(literal)) else { continue };
        let from = src.text_of(sub.args[0]);
        let spans_literal = match sub.args.as_slice() {
            [_, to] => span(from, src.text_of(*to)) == Some(len),
            _ => false,
        };
        if !spans_literal {
            why = format!("the substring's length is not that of {}", src.text_of(literal));
            continue;
        }
        let text = src.text_of(text);
        let lit = src.text_of(literal);
        let replacement = if from.trim() == "0" {
            format!("{text}.startsWith({lit})")
        } else {
            format!("{text}.startsWith({lit}, {from})")
        };
        return Ok(QuickFix {
            kind: FixKind::CompareInPlace,
            title: format!("Compare in place: `{replacement}`"),
            edits: vec![Edit { start: eq.node.start_byte(), end: eq.node.end_byte(), text: replacement }],
            caveat: Some("where the text is too short the check is false instead of throwing".into()),
        });
    }
    Err(no(why))
}

/// `to - from` when the code says it: `i` and `i + 2`, or two integer literals.
fn span(from: &str, to: &str) -> Option<usize> {
    let (from, to) = (from.replace(' ', ""), to.replace(' ', ""));
    if let (Ok(a), Ok(b)) = (from.parse::<usize>(), to.parse::<usize>()) {
        return b.checked_sub(a);
    }
    to.strip_prefix(&format!("{from}+"))?.parse().ok()
}

/// `String s = …; for (…) { s += x; }` → `StringBuilder s = new StringBuilder(…)`, `s.append(x)`,
/// and `s.toString()` where `s` is read after the loop.
pub(super) fn builder_in_loop(site: &Site<'_, '_>) -> Result<QuickFix, NoFix> {
    let src = site.src;
    let grow = src
        .on_line(site.line, "assignment_expression")
        .into_iter()
        .find(|a| a.child_by_field_name("operator").is_some_and(|o| src.text_of(o) == "+="))
        .ok_or_else(|| no("no `+=` on this line"))?;
    let left =
        grow.child_by_field_name("left").filter(|l| l.kind() == "identifier").ok_or_else(|| no("not a local"))?;
    let name = src.text_of(left);
    let lp = ancestor(grow, &LOOPS).ok_or_else(|| no("the string is not grown in a loop"))?;
    let method = ancestor(grow, &METHODS).ok_or_else(|| no("not in a method"))?;
    if method.start_byte() > lp.start_byte() {
        return Err(no("the string is grown in a lambda"));
    }
    let decl = descendants(method)
        .find(|n| {
            n.kind() == "local_variable_declaration" && {
                let mut c = n.walk();
                let found = n
                    .children_by_field_name("declarator", &mut c)
                    .any(|d| d.child_by_field_name("name").is_some_and(|id| src.text_of(id) == name));
                found
            }
        })
        .ok_or_else(|| no(format!("`{name}` is not a local of this method")))?;
    let ty = decl.child_by_field_name("type").map(|t| src.text_of(t)).unwrap_or("");
    if ty != "String" {
        return Err(no(format!("`{name}` is not declared a String")));
    }
    let mut c = decl.walk();
    let declarators: Vec<Node<'_>> = decl.children_by_field_name("declarator", &mut c).collect();
    let [declarator] = declarators.as_slice() else {
        return Err(no("the declaration declares more than one variable"));
    };
    if decl.end_byte() > lp.start_byte() {
        return Err(no(format!("`{name}` is declared in the loop")));
    }
    let init = match declarator.child_by_field_name("value") {
        Some(v) if src.text_of(v) == "\"\"" => String::new(),
        Some(v) if v.kind() == "string_literal" => src.text_of(v).to_string(),
        _ => return Err(no(format!("`{name}` does not start as a string literal"))),
    };
    let mut edits = vec![Edit {
        start: decl.start_byte(),
        end: decl.end_byte(),
        text: format!("StringBuilder {name} = new StringBuilder({init});"),
    }];
    for use_ in descendants(method).filter(|n| n.kind() == "identifier" && src.text_of(*n) == name) {
        let parent = use_.parent().expect("an identifier has a parent");
        if parent == *declarator {
            continue;
        }
        if parent.kind() == "assignment_expression" && parent.child_by_field_name("left") == Some(use_) {
            if src.text_of(parent.child_by_field_name("operator").expect("operator")) != "+=" {
                return Err(no(format!("`{name}` is assigned, not only appended to")));
            }
            if ancestor(parent, &METHODS) != Some(method) {
                return Err(no(format!("`{name}` is appended to in a lambda")));
            }
            let value = parent.child_by_field_name("right").expect("right");
            edits.push(Edit {
                start: parent.start_byte(),
                end: parent.end_byte(),
                text: format!("{name}.append({})", src.text_of(value)),
            });
            continue;
        }
        if use_.start_byte() > lp.start_byte() && use_.end_byte() < lp.end_byte() {
            return Err(no(format!("`{name}` is read in the loop, where each read would build the string")));
        }
        edits.push(Edit { start: use_.start_byte(), end: use_.end_byte(), text: format!("{name}.toString()") });
    }
    Ok(QuickFix {
        kind: FixKind::BuilderInLoop,
        title: format!("Grow `{name}` in a StringBuilder instead of copying it on every `+=`"),
        edits,
        caveat: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_character_strings_become_char_literals() {
        assert_eq!(char_literal("\":\"").as_deref(), Some("':'"));
        assert_eq!(char_literal("\"'\"").as_deref(), Some("'\\''"));
        assert_eq!(char_literal("\"\\\"\"").as_deref(), Some("'\"'"));
        assert_eq!(char_literal("\"\\n\"").as_deref(), Some("'\\n'"));
        assert_eq!(char_literal("\"ab\""), None);
        assert_eq!(char_literal("\"\\u0041\""), None);
    }

    #[test]
    fn spans_are_read_from_the_code() {
        assert_eq!(span("i", "i + 2"), Some(2));
        assert_eq!(span("20", "25"), Some(5));
        assert_eq!(span("i", "j"), None);
        assert_eq!(literal_len("\"{{\""), Some(2));
        assert_eq!(literal_len("\"a\\tb\""), Some(3));
    }
}

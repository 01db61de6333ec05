//! Drop a collection nothing reads: a field only ever added to (`log.add(…)`,
//! `byKey.computeIfAbsent(k, …).add(v)`, `this.log = new ArrayList<>()`) is removed with every
//! statement that fills it. Offered only when every mention of the field in its file is one of
//! those and no other source of the workspace names it.

use super::syntax::{descendants, Call, Source, MUTATORS};
use super::{no, Edit, FixKind, NoFix, QuickFix, Site};
use tree_sitter::Node;

pub(super) fn fix(site: &Site<'_, '_>) -> Result<QuickFix, NoFix> {
    let src = site.src;
    let mut why = "no collection field is filled on this line".to_string();
    for n in src.on_line(site.line, "method_invocation") {
        let Some(field) = filled_field(src, n) else { continue };
        let name = src.text_of(field);
        match removal(src, name, site.target.others) {
            Ok((edits, removed, calls)) => {
                let caveat = (!calls.is_empty())
                    .then(|| format!("the removed statements' calls are no longer made: {}", calls.join(", ")));
                return Ok(QuickFix {
                    kind: FixKind::DropUnreadCollection,
                    title: format!("Remove `{name}`, which nothing reads, and the {removed} statement(s) filling it"),
                    edits,
                    caveat,
                });
            }
            Err(e) => why = e.0,
        }
    }
    Err(no(why))
}

/// The field (its name node) at the root of a statement that only fills it: `f.add(x);`,
/// `this.f.put(k, v);`, `f.computeIfAbsent(k, …).add(v);`.
fn filled_field<'a>(src: &Source<'_>, call: Node<'a>) -> Option<Node<'a>> {
    if call.parent().is_none_or(|p| p.kind() != "expression_statement") {
        return None;
    }
    let mut at = call;
    loop {
        let c = Call::of(at)?;
        if !MUTATORS.contains(&src.text_of(c.name)) {
            return None;
        }
        let object = c.object?;
        match object.kind() {
            "method_invocation" => at = object,
            "identifier" => return Some(object),
            "field_access" if object.child_by_field_name("object").is_some_and(|o| o.kind() == "this") => {
                return object.child_by_field_name("field");
            }
            _ => return None,
        }
    }
}

type Removal = (Vec<Edit>, usize, Vec<String>);

/// The edits that remove field `name` and the statements filling it, how many statements, and the
/// calls in their arguments that will no longer be made.
fn removal(src: &Source<'_>, name: &str, others: &[&str]) -> Result<Removal, super::NoFix> {
    if others.iter().any(|o| mentions_word(o, name)) {
        return Err(no(format!("another source file of the workspace names `{name}`")));
    }
    let root = src.tree.root_node();
    let fields: Vec<Node<'_>> = descendants(root)
        .filter(|n| n.kind() == "field_declaration")
        .filter(|n| {
            let mut c = n.walk();
            let found = n
                .children_by_field_name("declarator", &mut c)
                .any(|d| d.child_by_field_name("name").is_some_and(|id| src.text_of(id) == name));
            found
        })
        .collect();
    let [field] = fields.as_slice() else {
        return Err(no(format!("`{name}` is not one field of this file")));
    };
    let mut c = field.walk();
    if field.children_by_field_name("declarator", &mut c).count() != 1 {
        return Err(no("the field's declaration declares other fields too"));
    }
    let mut edits = vec![remove_lines(src, *field)];
    let mut statements = 0;
    let mut calls = Vec::new();
    for use_ in descendants(root).filter(|n| n.kind() == "identifier" && src.text_of(*n) == name) {
        if use_.start_byte() >= field.start_byte() && use_.end_byte() <= field.end_byte() {
            continue;
        }
        let stmt = statement_filling(src, use_, name).ok_or_else(|| {
            let line = use_.start_position().row + 1;
            let at = use_.parent().map(|p| src.text_of(p)).unwrap_or(name);
            no(format!("`{name}` is read at line {line} (`{}`)", at.lines().next().unwrap_or(at)))
        })?;
        if stmt.parent().is_some_and(|p| p.kind() != "block" && p.kind() != "constructor_body") {
            edits.push(Edit { start: stmt.start_byte(), end: stmt.end_byte(), text: "{}".into() });
        } else {
            edits.push(remove_lines(src, stmt));
        }
        statements += 1;
        for inner in descendants(stmt).filter_map(Call::of) {
            let callee = src.text_of(inner.name);
            if !MUTATORS.contains(&callee) {
                calls.push(format!("`{callee}(…)`"));
            }
        }
        for creation in descendants(stmt).filter(|n| n.kind() == "object_creation_expression") {
            if let Some(t) = creation.child_by_field_name("type") {
                let t = src.text_of(t);
                if !t.starts_with("ArrayList") && !t.starts_with("HashMap") && !t.starts_with("HashSet") {
                    calls.push(format!("`new {}(…)`", t.split('<').next().unwrap_or(t)));
                }
            }
        }
    }
    calls.dedup();
    Ok((edits, statements, calls))
}

/// The statement a mention of the field is, when it only fills or creates it.
fn statement_filling<'a>(src: &Source<'_>, use_: Node<'a>, name: &str) -> Option<Node<'a>> {
    let mut at = use_.parent()?;
    if at.kind() == "field_access" {
        at = at.parent()?;
    }
    if at.kind() == "assignment_expression" {
        let right = at.child_by_field_name("right")?;
        let stmt = at.parent().filter(|p| p.kind() == "expression_statement")?;
        let plain = right.kind() == "object_creation_expression"
            && right.child_by_field_name("arguments").is_some_and(|a| a.named_child_count() == 0);
        return plain.then_some(stmt);
    }
    // Up the chain of calls the mention is the receiver of.
    let mut call = at;
    while let Some(parent) = call.parent().filter(|p| p.kind() == "method_invocation") {
        if parent.child_by_field_name("object") != Some(call) {
            break;
        }
        call = parent;
    }
    let stmt = call.parent().filter(|p| p.kind() == "expression_statement")?;
    (filled_field(src, call).is_some_and(|f| src.text_of(f) == name)).then_some(stmt)
}

/// An edit removing `n`'s whole lines when nothing else is on them, else only `n`.
fn remove_lines(src: &Source<'_>, n: Node<'_>) -> Edit {
    let start = src.line_start(n.start_byte());
    let end = src.line_end(n.end_byte());
    // A comment after the statement is about it, and goes with it.
    let after = src.text[n.end_byte()..end].trim();
    let alone = src.text[start..n.start_byte()].trim().is_empty() && (after.is_empty() || after.starts_with("//"));
    if alone {
        Edit { start, end, text: String::new() }
    } else {
        Edit { start: n.start_byte(), end: n.end_byte(), text: String::new() }
    }
}

/// Whether `text` has `word` as a whole identifier.
fn mentions_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

//! Hoist a call repeated with the same arguments out of its loop: the finding saw the call made
//! again and again with equal arguments; the fix computes it once before the outermost loop in
//! which nothing the call names is declared, assigned or changed by a known mutating call.

use super::syntax::{
    ancestor, assigned_in, declared_in, descendants, fresh_name, Call, Source, LOOPS, METHODS, MUTATORS,
};
use super::{no, Edit, FixKind, Hint, NoFix, QuickFix, Site};
use tree_sitter::Node;

pub(super) fn fix(site: &Site<'_, '_>) -> Result<QuickFix, NoFix> {
    let src = site.src;
    let Hint::Call { method, .. } = &site.hint else {
        return Err(no("the finding does not name a call"));
    };
    let call = src
        .on_line(site.line, "method_invocation")
        .into_iter()
        .filter_map(Call::of)
        .find(|c| src.text_of(c.name) == method)
        .ok_or_else(|| no(format!("no call of `{method}` on this line")))?;
    let method_scope = ancestor(call.node, &METHODS).ok_or_else(|| no("the call is not in a method"))?;
    if method_scope.kind() == "lambda_expression" {
        return Err(no("the call is in a lambda: hoisting it would change when it runs"));
    }
    let used = names_used(src, &call);
    let mut chosen: Option<Node<'_>> = None;
    let mut at = call.node;
    let mut why_not = String::new();
    while let Some(lp) = ancestor(at, &LOOPS) {
        if lp.start_byte() < method_scope.start_byte() {
            break;
        }
        if let Some(reason) = varies_in(src, lp, &used) {
            why_not = reason;
            break;
        }
        chosen = Some(lp);
        at = lp;
    }
    let lp = chosen.ok_or_else(|| if why_not.is_empty() { no("the call is not in a loop") } else { no(why_not) })?;
    let stmt = match lp.parent() {
        Some(p) if p.kind() == "labeled_statement" => p,
        _ => lp,
    };
    if !stmt.parent().is_some_and(|p| matches!(p.kind(), "block" | "constructor_body" | "switch_block_statement_group"))
    {
        return Err(no("the loop is not a statement of a block, so nothing can be put before it"));
    }
    let indent = src.indent_of(stmt);
    let nl = src.newline();
    let insert_at = src.line_start(stmt.start_byte());
    let caveat = Some("evaluated once before the loop, also when the loop runs no iteration".to_string());
    let call_text = src.text_of(call.node);

    // Each iteration had an object of its own: once hoisted, one object is shared by them all, so
    // nothing may change it or keep it (an immutable result, a `String` or a number, is safe).
    let uses: Vec<Node<'_>> = match call.node.parent().filter(|p| p.kind() == "variable_declarator") {
        Some(d) => {
            let name = d.child_by_field_name("name").map(|n| src.text_of(n)).unwrap_or_default();
            descendants(lp)
                .filter(|n| n.kind() == "identifier" && src.text_of(*n) == name && n.parent() != Some(d))
                .collect()
        }
        None => vec![call.node],
    };
    let immutable = return_type(src, method).is_some_and(is_immutable)
        || call
            .node
            .parent()
            .and_then(|d| d.parent())
            .and_then(|l| l.child_by_field_name("type"))
            .is_some_and(|t| is_immutable(src.text_of(t)));
    if !immutable {
        if let Some(why) = uses.iter().find_map(|u| shared_use(src, *u)) {
            return Err(no(why));
        }
    }

    // `T x = f(a);` directly in the loop's body, `x` never assigned: move the declaration itself.
    if let Some(decl) = whole_declaration(src, &call, lp) {
        let start = src.line_start(decl.start_byte());
        let end = src.line_end(decl.end_byte());
        let after = src.text[decl.end_byte()..end].trim();
        let only_statement_on_lines =
            src.text[start..decl.start_byte()].trim().is_empty() && (after.is_empty() || after.starts_with("//"));
        if only_statement_on_lines {
            // A comment after the declaration goes with it.
            let text = src.text[decl.start_byte()..end].trim_end();
            return Ok(QuickFix {
                kind: FixKind::HoistInvariantCall,
                title: format!("Compute `{call_text}` once, before the loop"),
                edits: vec![
                    Edit { start: insert_at, end: insert_at, text: format!("{indent}{text}{nl}") },
                    Edit { start, end, text: String::new() },
                ],
                caveat,
            });
        }
    }
    let class = ancestor(method_scope, &super::syntax::TYPES).unwrap_or(method_scope);
    let name = fresh_name(&local_name(method), |n| src.mentions_variable(class, n));
    let ty = return_type(src, method).unwrap_or("var");
    Ok(QuickFix {
        kind: FixKind::HoistInvariantCall,
        title: format!("Compute `{call_text}` once, before the loop, into `{name}`"),
        edits: vec![
            Edit { start: insert_at, end: insert_at, text: format!("{indent}{ty} {name} = {call_text};{nl}") },
            Edit { start: call.node.start_byte(), end: call.node.end_byte(), text: name.clone() },
        ],
        caveat,
    })
}

/// The identifiers a call reads (its receiver's and arguments'), not the methods it names.
fn names_used<'a>(src: &Source<'a>, call: &Call<'_>) -> Vec<&'a str> {
    descendants(call.node)
        .filter(|n| n.kind() == "identifier")
        .filter(|n| {
            !n.parent().is_some_and(|p| p.kind() == "method_invocation" && p.child_by_field_name("name") == Some(*n))
        })
        .map(|n| src.text_of(n))
        .collect()
}

/// Why the names may differ from one iteration of `lp` to the next, if they may.
fn varies_in(src: &Source<'_>, lp: Node<'_>, used: &[&str]) -> Option<String> {
    let assigned = assigned_in(src, lp);
    let declared = declared_in(src, lp);
    for name in used {
        if declared.contains(name) {
            return Some(format!("`{name}` is declared in the loop"));
        }
        if assigned.contains(name) {
            return Some(format!("`{name}` is assigned in the loop"));
        }
    }
    for n in descendants(lp) {
        if let Some(c) = Call::of(n) {
            let receiver = c.object.map(|o| src.text_of(o));
            let name = src.text_of(c.name);
            if let Some(r) = receiver {
                if used.contains(&r) && MUTATORS.contains(&name) {
                    return Some(format!("`{r}` is changed in the loop (`{r}.{name}`)"));
                }
            }
        }
    }
    None
}

/// Types whose values cannot change: sharing one between iterations changes nothing.
fn is_immutable(ty: &str) -> bool {
    matches!(
        ty.trim(),
        "String"
            | "int"
            | "long"
            | "double"
            | "float"
            | "boolean"
            | "char"
            | "short"
            | "byte"
            | "Integer"
            | "Long"
            | "Double"
            | "Float"
            | "Boolean"
            | "Character"
            | "Short"
            | "Byte"
            | "BigDecimal"
            | "BigInteger"
    )
}

/// A name that reads as a change to its receiver: a known mutator, or `set…`, `add…`, `put…`,
/// `remove…`, `clear…`.
fn changes_receiver(name: &str) -> bool {
    MUTATORS.contains(&name) || ["set", "add", "put", "remove", "clear"].iter().any(|p| name.starts_with(p))
}

/// Why the value at `use_` (the hoisted result, or a read of the variable holding it) could be
/// changed or kept by the loop: a call chain on it that changes something (`value.asObject().add(…)`),
/// the value stored (`list.add(value)`, `field = value`).
fn shared_use(src: &Source<'_>, use_: Node<'_>) -> Option<String> {
    let mut at = use_;
    while let Some(p) = at.parent() {
        let on_it = match p.kind() {
            "method_invocation" => p.child_by_field_name("object") == Some(at),
            "field_access" | "parenthesized_expression" | "cast_expression" => true,
            _ => false,
        };
        if !on_it {
            break;
        }
        if let Some(c) = Call::of(p) {
            if changes_receiver(src.text_of(c.name)) {
                return Some(format!("the loop changes the value it computes each time (`{}`)", src.text_of(p)));
            }
        }
        at = p;
    }
    let parent = at.parent()?;
    match parent.kind() {
        "argument_list" => {
            let call = parent.parent().and_then(Call::of)?;
            changes_receiver(src.text_of(call.name))
                .then(|| format!("the loop keeps the value it computes each time (`{}`)", src.text_of(call.node)))
        }
        "assignment_expression" if parent.child_by_field_name("right") == Some(at) => {
            Some(format!("the loop keeps the value it computes each time (`{}`)", src.text_of(parent)))
        }
        _ => None,
    }
}

/// The local declaration the call initialises in full, when it is a statement of the loop's body
/// and its variable is not assigned in the loop.
fn whole_declaration<'a>(src: &Source<'_>, call: &Call<'a>, lp: Node<'a>) -> Option<Node<'a>> {
    let declarator = call.node.parent().filter(|p| p.kind() == "variable_declarator")?;
    let decl = declarator.parent().filter(|d| d.kind() == "local_variable_declaration")?;
    let mut c = decl.walk();
    if decl.children_by_field_name("declarator", &mut c).count() != 1 {
        return None;
    }
    let body = decl.parent().filter(|b| b.kind() == "block")?;
    if body.parent() != Some(lp) {
        return None;
    }
    let name = src.text_of(declarator.child_by_field_name("name")?);
    (!assigned_in(src, lp).contains(&name)).then_some(decl)
}

/// `taxTable` for `buildTaxTable`, `grandTotal` for `grandTotal`, `sectionNames` for `sectionNames`.
fn local_name(method: &str) -> String {
    for prefix in ["get", "compute", "build", "calculate", "calc", "load", "make", "create", "find", "read", "parse"] {
        if let Some(rest) = method.strip_prefix(prefix) {
            if rest.starts_with(|c: char| c.is_ascii_uppercase()) {
                let mut out = rest[..1].to_ascii_lowercase();
                out.push_str(&rest[1..]);
                return out;
            }
        }
    }
    if matches!(method, "parse" | "get" | "compute" | "build" | "of") {
        return "result".into();
    }
    method.to_string()
}

/// The declared return type of the file's only method named `method`, when it has no type
/// parameters of its own (so the type reads the same at the call).
fn return_type<'a>(src: &Source<'a>, method: &str) -> Option<&'a str> {
    let mut found = descendants(src.tree.root_node()).filter(|n| {
        n.kind() == "method_declaration" && n.child_by_field_name("name").is_some_and(|id| src.text_of(id) == method)
    });
    let m = found.next()?;
    if found.next().is_some() || m.child_by_field_name("type_parameters").is_some() {
        return None;
    }
    let ty = src.text_of(m.child_by_field_name("type")?);
    (ty != "void").then_some(ty)
}

//! A primitive local instead of a boxed one: a local declared `Integer` (`Long`, `Double`…) that
//! the loop updates boxes a new object at each update; declared `int` it boxes nothing. Offered
//! only when no use of the local needs an object: never `null`, never compared by `==` with
//! anything but a number, never a method's receiver, never locked on.

use super::syntax::{ancestor, descendants, Source, METHODS};
use super::{no, Edit, FixKind, Hint, NoFix, QuickFix, Site};
use tree_sitter::Node;

fn primitive_of(boxed: &str) -> Option<&'static str> {
    Some(match boxed {
        "Integer" => "int",
        "Long" => "long",
        "Double" => "double",
        "Float" => "float",
        "Short" => "short",
        "Byte" => "byte",
        "Character" => "char",
        "Boolean" => "boolean",
        _ => return None,
    })
}

pub(super) fn fix(site: &Site<'_, '_>) -> Result<QuickFix, NoFix> {
    let src = site.src;
    let Hint::Boxing { to } = &site.hint else {
        return Err(no("the finding does not name a boxing"));
    };
    let primitive = primitive_of(to).ok_or_else(|| no(format!("{to} is not a box of a primitive")))?;
    let targets = src
        .on_line(site.line, "assignment_expression")
        .into_iter()
        .filter_map(|a| a.child_by_field_name("left"))
        .chain(src.on_line(site.line, "update_expression").into_iter().filter_map(|u| u.named_child(0)))
        .chain(src.on_line(site.line, "variable_declarator").into_iter().filter_map(|d| d.child_by_field_name("name")))
        .filter(|t| t.kind() == "identifier");
    let mut why = format!("no local of type {to} is set on this line");
    for target in targets {
        let name = src.text_of(target);
        let Some(method) = ancestor(target, &METHODS) else { continue };
        let Some(decl) = declaration(src, method, name) else {
            why =
                format!("`{name}` is not a local of this method (a field or parameter may be seen as null elsewhere)");
            continue;
        };
        let ty = decl.child_by_field_name("type").ok_or_else(|| no("no type"))?;
        if src.text_of(ty) != to.as_str() {
            why = format!("`{name}` is declared {}, not {to}", src.text_of(ty));
            continue;
        }
        if let Some(reason) = needs_an_object(src, method, name) {
            why = reason;
            continue;
        }
        return Ok(QuickFix {
            kind: FixKind::PrimitiveLocal,
            title: format!("Declare `{name}` as `{primitive}`: updating an {to} boxes a new one each time"),
            edits: vec![Edit { start: ty.start_byte(), end: ty.end_byte(), text: primitive.to_string() }],
            caveat: None,
        });
    }
    Err(no(why))
}

/// The method's declaration of the local `name`, when it declares only that variable.
fn declaration<'a>(src: &Source<'_>, method: Node<'a>, name: &str) -> Option<Node<'a>> {
    descendants(method).find(|n| {
        n.kind() == "local_variable_declaration" && {
            let mut c = n.walk();
            let declarators: Vec<Node<'_>> = n.children_by_field_name("declarator", &mut c).collect();
            declarators.len() == 1
                && declarators[0].child_by_field_name("name").is_some_and(|id| src.text_of(id) == name)
        }
    })
}

/// Why a use of `name` needs it to be an object, if one does.
fn needs_an_object(src: &Source<'_>, method: Node<'_>, name: &str) -> Option<String> {
    for use_ in descendants(method).filter(|n| n.kind() == "identifier" && src.text_of(*n) == name) {
        let Some(parent) = use_.parent() else { continue };
        match parent.kind() {
            "method_invocation" if parent.child_by_field_name("object") == Some(use_) => {
                return Some(format!("`{name}` is the receiver of a method call ({})", src.text_of(parent)));
            }
            "binary_expression" => {
                let op = parent.child_by_field_name("operator").map(|o| src.text_of(o)).unwrap_or("");
                if op == "==" || op == "!=" {
                    let other = if parent.child_by_field_name("left") == Some(use_) {
                        parent.child_by_field_name("right")
                    } else {
                        parent.child_by_field_name("left")
                    };
                    let numeric = other.is_some_and(|o| {
                        matches!(
                            o.kind(),
                            "decimal_integer_literal" | "decimal_floating_point_literal" | "character_literal"
                        )
                    });
                    if !numeric {
                        return Some(format!("`{name}` is compared by reference ({})", src.text_of(parent)));
                    }
                }
            }
            "synchronized_statement" | "parenthesized_expression"
                if parent.parent().is_some_and(|g| g.kind() == "synchronized_statement") =>
            {
                return Some(format!("`{name}` is locked on"));
            }
            "variable_declarator" | "assignment_expression" => {
                let value = parent.child_by_field_name("value").or_else(|| parent.child_by_field_name("right"));
                if value.is_some_and(|v| v.kind() == "null_literal") {
                    return Some(format!("`{name}` is set to null"));
                }
            }
            _ => {}
        }
    }
    None
}

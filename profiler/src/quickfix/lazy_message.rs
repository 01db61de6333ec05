//! Build a message only when it is used: a string concatenation or `String.format` passed
//! straight to a call that has a `Supplier<String>` overload (`Objects.requireNonNull`,
//! `java.util.logging.Logger`'s level methods and `log(Level, …)`, JUnit 5's assertions) is passed
//! as `() -> message`, which the callee calls only when the message is needed.

use super::syntax::{
    ancestor, assigned_in, declared_in, declared_type, descendants, simple_type, Call, Source, METHODS,
};
use super::{no, Edit, FixKind, Hint, NoFix, QuickFix, Site};
use tree_sitter::Node;

const LOGGER_LEVELS: [&str; 7] = ["severe", "warning", "info", "config", "fine", "finer", "finest"];
const ASSERTIONS: [&str; 12] = [
    "assertTrue",
    "assertFalse",
    "assertEquals",
    "assertNotEquals",
    "assertNull",
    "assertNotNull",
    "assertSame",
    "assertNotSame",
    "assertArrayEquals",
    "assertIterableEquals",
    "assertLinesMatch",
    "fail",
];

pub(super) fn fix(site: &Site<'_, '_>) -> Result<QuickFix, NoFix> {
    let src = site.src;
    let messages: Vec<Node<'_>> = match &site.hint {
        Hint::Concat => src
            .on_line(site.line, "binary_expression")
            .into_iter()
            .filter(|b| b.parent().is_some_and(|p| p.kind() != "binary_expression"))
            .collect(),
        Hint::Call { method, .. } if method == "format" => src
            .on_line(site.line, "method_invocation")
            .into_iter()
            .filter(|n| Call::of(*n).is_some_and(|c| src.text_of(c.name) == "format"))
            .collect(),
        _ => {
            let named = site.target.subject.expression.as_deref().unwrap_or("no expression");
            return Err(no(format!("the finding names {named}, not a string concatenation or `String.format`")));
        }
    };
    let mut why = "the message is not built on this line".to_string();
    for message in messages {
        let Some(call) =
            message.parent().filter(|p| p.kind() == "argument_list").and_then(|l| l.parent()).and_then(Call::of)
        else {
            why = "the string is not passed straight to a call; only a call with a Supplier overload (a logger, \
                   Objects.requireNonNull, an assertion) can build it lazily"
                .into();
            continue;
        };
        if !has_supplier_overload(src, &call, message) {
            why = format!("`{}` has no overload that takes the message as a Supplier", src.text_of(call.name));
            continue;
        }
        if let Some(name) = not_effectively_final(src, message) {
            why = format!("`{name}` changes after it is set, so a lambda cannot read it");
            continue;
        }
        return Ok(QuickFix {
            kind: FixKind::LazyMessage,
            title: format!("Build the message only when `{}` uses it (`() -> …`)", src.text_of(call.name)),
            edits: vec![Edit {
                start: message.start_byte(),
                end: message.end_byte(),
                text: format!("() -> {}", src.text_of(message)),
            }],
            caveat: None,
        });
    }
    Err(no(why))
}

/// Whether `call`, given `message` where it is, has an overload that takes a `Supplier<String>`
/// in its place.
fn has_supplier_overload(src: &Source<'_>, call: &Call<'_>, message: Node<'_>) -> bool {
    let name = src.text_of(call.name);
    let last = call.args.last() == Some(&message);
    let receiver = call.object.map(|o| src.text_of(o));
    match name {
        "requireNonNull" => last && call.args.len() == 2 && matches!(receiver, Some("Objects" | "java.util.Objects")),
        n if LOGGER_LEVELS.contains(&n) => call.args.len() == 1 && is_jul_logger(src, call),
        "log" => call.args.len() == 2 && last && is_jul_logger(src, call),
        n if ASSERTIONS.contains(&n) => {
            last && call.args.len() >= 2 && src.text.contains("org.junit.jupiter.api.Assertions")
        }
        _ => false,
    }
}

/// A `java.util.logging.Logger` receiver: declared `Logger` in a file that imports that class.
fn is_jul_logger(src: &Source<'_>, call: &Call<'_>) -> bool {
    let Some(o) = call.object.filter(|o| o.kind() == "identifier") else { return false };
    let declared = declared_type(src, o, src.text_of(o)).map(simple_type);
    let (qualified, imported) = (
        declared == Some("java.util.logging.Logger"),
        src.text.contains("import java.util.logging.Logger;") || src.text.contains("import java.util.logging.*;"),
    );
    qualified || (declared == Some("Logger") && imported)
}

/// A local the message reads that is assigned after its declaration (a lambda can read only
/// effectively final locals).
fn not_effectively_final<'a>(src: &Source<'a>, message: Node<'_>) -> Option<&'a str> {
    let method = ancestor(message, &METHODS)?;
    let locals = declared_in(src, method);
    let assigned = assigned_in(src, method);
    descendants(message)
        .filter(|n| n.kind() == "identifier")
        .map(|n| src.text_of(n))
        .find(|name| locals.contains(name) && assigned.contains(name))
}

//! Collections made only to be read or counted: a copy returned where a read-only view of the
//! original does (share), a stream collected only for its size (count), a collection grown
//! element by element to a size the loop that fills it knows (presize).

use super::syntax::{ancestor, declared_type, descendants, simple_type, Call, ImportState, Source, METHODS};
use super::{no, Edit, FixKind, Hint, NoFix, QuickFix, Site};
use tree_sitter::Node;

/// What a copied collection is, by its class: the view that shares it, and the declared types
/// that view fits.
fn family(class: &str) -> Option<(&'static str, &'static [&'static str], &'static [&'static str])> {
    const LISTS: &[&str] = &["List", "ArrayList", "LinkedList", "CopyOnWriteArrayList"];
    const SETS: &[&str] = &["Set", "HashSet", "LinkedHashSet", "TreeSet", "SortedSet", "NavigableSet"];
    const MAPS: &[&str] = &["Map", "HashMap", "LinkedHashMap", "TreeMap", "SortedMap", "NavigableMap"];
    match class {
        "ArrayList" | "LinkedList" => Some(("unmodifiableList", LISTS, &["List", "Collection", "Iterable"])),
        "HashSet" | "LinkedHashSet" => Some(("unmodifiableSet", SETS, &["Set", "Collection", "Iterable"])),
        "HashMap" | "LinkedHashMap" => Some(("unmodifiableMap", MAPS, &["Map"])),
        _ => None,
    }
}

pub(super) fn fix(site: &Site<'_, '_>) -> Result<QuickFix, NoFix> {
    let src = site.src;
    let creation = creation_on_line(site)?;
    let ty = simple_type(src.text_of(creation.child_by_field_name("type").ok_or_else(|| no("no type"))?));
    let (view, sources, returns) =
        family(ty).ok_or_else(|| no(format!("a copy into a new {ty} has no read-only view to share instead")))?;
    let args = arguments(creation);
    let [arg] = args.as_slice() else {
        return Err(no("the new collection is not a copy of one other collection"));
    };
    let arg_name = match arg.kind() {
        "identifier" => src.text_of(*arg),
        "field_access" => src.text_of(arg.child_by_field_name("field").unwrap_or(*arg)),
        _ => return Err(no("the copied collection is not a field or a variable")),
    };
    let arg_type = declared_type(src, *arg, arg_name)
        .ok_or_else(|| no(format!("the declared type of `{arg_name}` is not known here")))?;
    if arg_type.chars().next().is_some_and(char::is_lowercase) {
        return Err(no(format!("the new {ty} is given a capacity (`{arg_name}`), not a collection to copy")));
    }
    if !sources.contains(&simple_type(arg_type)) {
        return Err(no(format!("`{arg_name}` is declared {arg_type}, which a `{view}` view does not fit")));
    }
    let ret = creation.parent().filter(|p| p.kind() == "return_statement").ok_or_else(|| {
        no("the copy is not returned: a local or field copy may be written to or guard against changes while it is read")
    })?;
    let method =
        ancestor(ret, &METHODS).filter(|m| m.kind() == "method_declaration").ok_or_else(|| no("not in a method"))?;
    let declared = method.child_by_field_name("type").map(|t| simple_type(src.text_of(t))).unwrap_or("");
    if !returns.contains(&declared) {
        return Err(no(format!("the method returns a {declared}, which a read-only view is not")));
    }
    let (collections, import) = class_name(src, "java.util.Collections");
    let mut edits = vec![Edit {
        start: creation.start_byte(),
        end: creation.end_byte(),
        text: format!("{collections}.{view}({})", src.text_of(*arg)),
    }];
    edits.extend(import);
    Ok(QuickFix {
        kind: FixKind::ShareInsteadOfCopy,
        title: format!("Return a read-only view of `{}` instead of a copy", src.text_of(*arg)),
        edits,
        caveat: Some(format!(
            "callers see later changes to `{arg_name}`, and a caller that writes to the result gets an UnsupportedOperationException"
        )),
    })
}

/// `stream.collect(Collectors.toList()).size()` → `(int) stream.count()`, `.isEmpty()` →
/// `stream.findAny().isEmpty()`; and a local list collected only to be asked its size.
pub(super) fn count_instead_of_collect(site: &Site<'_, '_>) -> Result<QuickFix, NoFix> {
    let src = site.src;
    let mut why = "no stream collected on this line".to_string();
    for n in src.on_line(site.line, "method_invocation") {
        let Some(collect) = Call::of(n) else { continue };
        let Some((stream, distinct)) = collected(src, &collect) else { continue };
        let stream = src.text_of(stream);
        let distinct = if distinct { ".distinct()" } else { "" };
        // Chained: `….collect(toList()).size()`.
        if let Some(asked) = n.parent().and_then(Call::of).filter(|c| c.object == Some(n)) {
            let text = match src.text_of(asked.name) {
                "size" => format!("(int) {stream}{distinct}.count()"),
                "isEmpty" => format!("{stream}.findAny().isEmpty()"),
                other => {
                    why = format!("the collected collection is asked `{other}`, not only its size");
                    continue;
                }
            };
            return Ok(QuickFix {
                kind: FixKind::CountInsteadOfCollect,
                title: format!("Count the stream instead of collecting it ({text})"),
                edits: vec![Edit { start: asked.node.start_byte(), end: asked.node.end_byte(), text }],
                caveat: None,
            });
        }
        // A local: `List<T> xs = ….collect(toList());` read only as `xs.size()` / `xs.isEmpty()`.
        let Some(decl) = n.parent().filter(|p| p.kind() == "variable_declarator") else {
            why = "the collected collection is not asked only its size".into();
            continue;
        };
        let Some(local) = decl.parent().filter(|p| p.kind() == "local_variable_declaration") else { continue };
        let name = src.text_of(decl.child_by_field_name("name").ok_or_else(|| no("no name"))?);
        let scope = ancestor(local, &["block"]).ok_or_else(|| no("not in a block"))?;
        let mut edits = Vec::new();
        let mut only_size = true;
        for use_ in descendants(scope).filter(|u| u.kind() == "identifier" && src.text_of(*u) == name) {
            if use_.parent() == Some(decl) {
                continue;
            }
            let asked = use_.parent().and_then(Call::of).filter(|c| c.object == Some(use_));
            match asked.as_ref().map(|c| (c, src.text_of(c.name))) {
                Some((c, "size")) => edits.push(Edit {
                    start: c.node.start_byte(),
                    end: c.node.end_byte(),
                    text: format!("{name}Count"),
                }),
                Some((c, "isEmpty")) => {
                    let bare = c.node.parent().is_some_and(|p| p.kind() == "parenthesized_expression");
                    let test = if bare { format!("{name}Count == 0") } else { format!("({name}Count == 0)") };
                    edits.push(Edit { start: c.node.start_byte(), end: c.node.end_byte(), text: test })
                }
                _ => only_size = false,
            }
        }
        if !only_size || edits.is_empty() {
            why = format!("`{name}` is read for more than its size");
            continue;
        }
        edits.push(Edit {
            start: local.start_byte(),
            end: local.end_byte(),
            text: format!("int {name}Count = (int) {stream}{distinct}.count();"),
        });
        return Ok(QuickFix {
            kind: FixKind::CountInsteadOfCollect,
            title: format!("Count the stream into `{name}Count` instead of collecting `{name}`"),
            edits,
            caveat: None,
        });
    }
    Err(no(why))
}

/// The stream a call collects into a list or set (`s.collect(Collectors.toList())`,
/// `s.toList()`), and whether a set (so the count is of distinct elements).
fn collected<'a>(src: &Source<'_>, call: &Call<'a>) -> Option<(Node<'a>, bool)> {
    let stream = call.object?;
    match (src.text_of(call.name), call.args.as_slice()) {
        ("toList", []) => Some((stream, false)),
        ("collect", [collector]) => {
            let c = Call::of(*collector)?;
            let from_collectors = c.object.is_none_or(|o| src.text_of(o) == "Collectors");
            match (src.text_of(c.name), c.args.is_empty(), from_collectors) {
                ("toList" | "toUnmodifiableList", true, true) => Some((stream, false)),
                ("toSet" | "toUnmodifiableSet", true, true) => Some((stream, true)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `List<T> out = new ArrayList<>();` followed by a loop that adds to it once per element of a
/// collection or array, or per index up to a bound: the size is known, pass it.
pub(super) fn presize(site: &Site<'_, '_>) -> Result<QuickFix, NoFix> {
    let src = site.src;
    let creation = creation_on_line(site)?;
    let ty = simple_type(src.text_of(creation.child_by_field_name("type").ok_or_else(|| no("no type"))?));
    let hashed = match ty {
        "ArrayList" | "ArrayDeque" => false,
        "HashMap" | "HashSet" | "LinkedHashMap" | "LinkedHashSet" => true,
        "StringBuilder" => return Err(no("the builder's final length is not known from the code")),
        other => return Err(no(format!("a {other} is not presized by this fix"))),
    };
    if !arguments(creation).is_empty() {
        return Err(no("the collection is already given a size or contents"));
    }
    let declarator =
        creation.parent().filter(|p| p.kind() == "variable_declarator" || p.kind() == "assignment_expression");
    let name_node = declarator
        .and_then(|d| d.child_by_field_name("name").or_else(|| d.child_by_field_name("left")))
        .ok_or_else(|| no("the new collection is not held in a variable"))?;
    let name = src.text_of(name_node);
    let stmt = ancestor(creation, &["local_variable_declaration", "expression_statement"])
        .ok_or_else(|| no("no statement"))?;
    let next = stmt.next_named_sibling().ok_or_else(|| no("no loop fills the collection right after it is made"))?;
    let size = loop_size(src, next)
        .ok_or_else(|| no("the next statement is not a loop whose number of iterations is known"))?;
    let body = next.child_by_field_name("body").ok_or_else(|| no("no loop body"))?;
    let adds = descendants(body)
        .filter_map(Call::of)
        .filter(|c| {
            c.object.is_some_and(|o| src.text_of(o) == name) && matches!(src.text_of(c.name), "add" | "put" | "addLast")
        })
        .collect::<Vec<_>>();
    let [add] = adds.as_slice() else {
        return Err(no(format!("the loop does not add to `{name}` exactly once per iteration")));
    };
    let unconditional =
        add.node.parent().filter(|p| p.kind() == "expression_statement").and_then(|s| s.parent()) == Some(body);
    if !unconditional {
        return Err(no(format!("`{name}` is added to only on some iterations")));
    }
    let capacity = if hashed { format!("(int) Math.ceil({size} / 0.75)") } else { size.clone() };
    let args = creation.child_by_field_name("arguments").ok_or_else(|| no("no arguments"))?;
    Ok(QuickFix {
        kind: FixKind::PresizeCollection,
        title: format!("Presize `{name}` for the loop's {size} elements"),
        edits: vec![Edit { start: args.start_byte(), end: args.end_byte(), text: format!("({capacity})") }],
        caveat: None,
    })
}

/// How many times `lp` runs, as an expression: `xs.size()` for `for (T x : xs)` over a
/// collection, `xs.length` over an array, `n` for `for (int i = 0; i < n; i++)`.
fn loop_size(src: &Source<'_>, lp: Node<'_>) -> Option<String> {
    match lp.kind() {
        "enhanced_for_statement" => {
            let over = lp.child_by_field_name("value")?;
            if over.kind() != "identifier" {
                return None;
            }
            let name = src.text_of(over);
            let ty = declared_type(src, lp, name)?;
            if ty.trim_end().ends_with(']') {
                Some(format!("{name}.length"))
            } else if matches!(simple_type(ty), "List" | "ArrayList" | "Set" | "HashSet" | "Collection" | "LinkedList")
            {
                Some(format!("{name}.size()"))
            } else {
                None
            }
        }
        "for_statement" => {
            let init = src.text_of(lp.child_by_field_name("init")?).replace(' ', "");
            let init = init.trim_end_matches(';');
            let cond = lp.child_by_field_name("condition")?;
            let update = src.text_of(lp.child_by_field_name("update")?).replace(' ', "");
            let var = init.strip_prefix("inti=").map(|_| "i").or_else(|| {
                let rest = init.strip_prefix("int")?;
                rest.strip_suffix("=0").filter(|v| v.chars().all(|c| c.is_alphanumeric() || c == '_'))
            })?;
            if !init.ends_with("=0") || (update != format!("{var}++") && update != format!("++{var}")) {
                return None;
            }
            if cond.kind() != "binary_expression"
                || cond.child_by_field_name("operator").map(|o| src.text_of(o)) != Some("<")
            {
                return None;
            }
            let left = cond.child_by_field_name("left")?;
            let right = cond.child_by_field_name("right")?;
            let assigned = super::syntax::assigned_in(src, lp);
            let bound_fixed =
                descendants(right).all(|n| n.kind() != "identifier" || !assigned.contains(&src.text_of(n)));
            (src.text_of(left) == var && bound_fixed).then(|| src.text_of(right).to_string())
        }
        _ => None,
    }
}

/// The `new` expression the finding names on its line.
fn creation_on_line<'a>(site: &'a Site<'_, '_>) -> Result<Node<'a>, NoFix> {
    let src = site.src;
    let wanted = match &site.hint {
        Hint::New { class } => Some(class.rsplit(['.', '$']).next().unwrap_or(class).to_string()),
        _ => None,
    };
    src.on_line(site.line, "object_creation_expression")
        .into_iter()
        .find(|n| {
            let ty = n.child_by_field_name("type").map(|t| simple_type(src.text_of(t))).unwrap_or("");
            wanted.as_deref().is_none_or(|w| w == ty)
        })
        .ok_or_else(|| no("no `new` expression of the finding's class on this line"))
}

fn arguments(creation: Node<'_>) -> Vec<Node<'_>> {
    let Some(list) = creation.child_by_field_name("arguments") else { return Vec::new() };
    let mut c = list.walk();
    list.named_children(&mut c).filter(|a| a.kind() != "comment").collect()
}

/// How the file can name `class`, and the import to add for it when one is needed.
pub(super) fn class_name(src: &Source<'_>, class: &'static str) -> (&'static str, Option<Edit>) {
    let simple = class.rsplit('.').next().unwrap_or(class);
    match src.import_state(class) {
        ImportState::Imported => (simple, None),
        ImportState::Missing if class.starts_with("java.lang.") => (simple, None),
        ImportState::Missing => {
            let (at, text) = src.import_edit(class);
            (simple, Some(Edit { start: at, end: at, text }))
        }
        ImportState::Clashes => (class, None),
    }
}

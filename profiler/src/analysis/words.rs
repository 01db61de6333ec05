//! The source's words: what findings call types, methods and expressions, as a Java developer
//! writes them — `Order`, not `com.acme.Main$Order`; `Report.render(List)`, not a descriptor;
//! "the string concatenation", not the `byte[]` the JDK made for it; "the lambda at line 49".
//!
//! Expressions are read back from the bytecode at a location's bci: the instruction a user line
//! ran there (`new`, `newarray`, an `invokedynamic` for a concatenation or a lambda, a call).

use crate::classfile::descriptor::{primitive_name, MethodDescriptor};
use crate::classfile::Constant;
use crate::report::Location;
use crate::vm::class::{Class, Method};

/// Packages whose nested classes keep their outer name (`HashMap.Node`): a developer knows the
/// outer class, not the inner one. A user's nested class is written by its own name (`Order`).
const PLATFORM: [&str; 5] = ["java.", "javax.", "jdk.", "sun.", "com.sun."];

/// A type as the source writes it: `com.acme.Main$Order` → `Order`, `java.util.HashMap$Node[]`
/// → `HashMap.Node[]`, `java.lang.String` → `String`, `Main$$Lambda/0x…` → `lambda`, `Main$1` →
/// `anonymous class in Main`. Accepts dotted and internal (`/`) names.
pub fn source_type(name: &str) -> String {
    let dims = name.matches("[]").count();
    let base = name.trim_end_matches("[]").replace('/', ".");
    let arrays = "[]".repeat(dims);
    if base.contains("$$Lambda") {
        return format!("lambda{arrays}");
    }
    let platform = PLATFORM.iter().any(|p| base.starts_with(p));
    let simple = base.rsplit('.').find(|s| !s.starts_with("0x")).unwrap_or(&base);
    let parts: Vec<&str> = simple.split('$').filter(|p| !p.is_empty()).collect();
    let Some(&last) = parts.last() else { return format!("{simple}{arrays}") };
    if platform {
        let named: Vec<&str> = parts.iter().copied().filter(|p| !p.bytes().all(|b| b.is_ascii_digit())).collect();
        return format!("{}{arrays}", named.join("."));
    }
    if last.bytes().all(|b| b.is_ascii_digit()) {
        let outer = parts.iter().rev().find(|p| !p.bytes().all(|b| b.is_ascii_digit())).unwrap_or(&"?");
        return format!("anonymous class in {outer}{arrays}");
    }
    format!("{last}{arrays}")
}

/// A field descriptor as source: `I` → `int`, `[Ljava/lang/String;` → `String[]`.
pub fn descriptor_type(d: &str) -> String {
    let dims = d.bytes().take_while(|&b| b == b'[').count();
    let elem = &d[dims..];
    let base = match elem.strip_prefix('L') {
        Some(class) => source_type(class.trim_end_matches(';')),
        None => elem.chars().next().and_then(primitive_name).unwrap_or("?").to_string(),
    };
    format!("{base}{}", "[]".repeat(dims))
}

/// A method as the source names it: `Report.render(List)`, `new Order(String, int)` for a
/// constructor, `Report's static initialiser`, `the lambda in main` for javac's `lambda$main$0`.
pub fn source_method(class: &str, name: &str, descriptor: &str) -> String {
    let owner = source_type(class);
    if let Some(rest) = name.strip_prefix("lambda$") {
        let enclosing = rest.split('$').next().filter(|s| !s.is_empty() && !s.starts_with("static"));
        return match enclosing {
            Some("new") => format!("the lambda in {owner}'s constructor"),
            Some(m) => format!("the lambda in {owner}.{m}"),
            None => format!("a lambda in {owner}"),
        };
    }
    let params = MethodDescriptor::parse(descriptor)
        .map(|d| d.param_types.iter().map(|p| descriptor_type(p)).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    match name {
        "<init>" => format!("new {owner}({params})"),
        "<clinit>" => format!("{owner}'s static initialiser"),
        _ => format!("{owner}.{name}({params})"),
    }
}

/// A method without its parameters, for call paths: `Report.render`, `new Order`, `lambda`.
pub fn short_method(class: &str, name: &str) -> String {
    let owner = source_type(class);
    match name {
        "<init>" => format!("new {owner}"),
        "<clinit>" => format!("{owner}.<static init>"),
        n if n.starts_with("lambda$") => "lambda".into(),
        n => format!("{owner}.{n}"),
    }
}

/// What an allocation finding is about, at the user's line `at`: the user's own expression when
/// the user's code allocated the objects; when a library did (inside `made_in`), the objects and
/// the call that made them (`HashMap.Node objects made by Map.put(…)`), except where the call and
/// the objects are one thing to the reader (boxing, a concatenation's string, a lambda, the
/// `byte[]` inside the strings a call built).
pub fn allocation_subject(at: &Location, type_name: &str, made_in: Option<&Location>) -> String {
    let ty = object_type(at, type_name, made_in);
    let Some(e) = &at.expression else {
        return match made_in {
            None => format!("new {ty}"),
            Some(_) => format!("{ty} objects made by the library call here"),
        };
    };
    match (made_in, ty.as_str()) {
        (None, _) => e.clone(),
        (Some(_), _) if e == &format!("boxing to {ty}") => e.clone(),
        (Some(_), "String") if e == "the string concatenation" => e.clone(),
        (Some(_), "String") => format!("the strings made by {e}"),
        (Some(_), "lambda") if e.starts_with("the lambda") || e.contains("::") => e.clone(),
        (Some(_), _) => format!("{ty} objects made by {e}"),
    }
}

/// The type a reader knows objects by: `String` for the `byte[]` a string holds (compact strings:
/// made inside the string classes, or for a concatenation), else the source type.
pub fn object_type(at: &Location, type_name: &str, made_in: Option<&Location>) -> String {
    let ty = source_type(type_name);
    let in_string = made_in.is_some_and(|m| is_string_internal(&m.class))
        || at.expression.as_deref() == Some("the string concatenation");
    if ty == "byte[]" && made_in.is_some() && in_string {
        "String".into()
    } else {
        ty
    }
}

/// Classes whose `byte[]` allocations are a string's contents (compact strings). `Unsafe`'s
/// uninitialised arrays are made for the string operations that fill them at once
/// (`String.replace`, concatenation).
pub fn is_string_internal(class: &str) -> bool {
    if class == "jdk.internal.misc.Unsafe" {
        return true;
    }
    let simple = class.strip_prefix("java.lang.").unwrap_or("");
    [
        "String",
        "Integer",
        "Long",
        "AbstractStringBuilder",
        "StringBuilder",
        "StringBuffer",
        "StringConcatHelper",
        "StringLatin1",
        "StringUTF16",
    ]
    .iter()
    .any(|c| simple == *c || simple.starts_with(&format!("{c}$")))
}

/// `1,500`: counts as a reader reads them.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 value` / `2 values`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// The user expression a method ran at `bci`, in source words: `new Order(…)`, `new int[]`, `the
/// string concatenation`, `the lambda`, `Order::total`, `boxing to Integer`, `String.format(…)`.
/// `None` where the instruction is none of these (or the class file is not at hand).
pub fn expression_at(method: &Method, class: &Class, bci: u32) -> Option<String> {
    let code = method.raw.as_ref()?;
    let file = class.file.as_ref()?;
    let cp = &file.constant_pool;
    let b = &code.bytecode;
    let pc = bci as usize;
    let op = *b.get(pc)?;
    let u2 = |i: usize| u16::from_be_bytes([b.get(i).copied().unwrap_or(0), b.get(i + 1).copied().unwrap_or(0)]);
    Some(match op {
        0xbb => format!("new {}(…)", source_type(cp.class_name(u2(pc + 1)).ok()?)),
        0xbc => {
            let elem = match b.get(pc + 1)? {
                4 => "boolean",
                5 => "char",
                6 => "float",
                7 => "double",
                8 => "byte",
                9 => "short",
                10 => "int",
                _ => "long",
            };
            format!("new {elem}[…]")
        }
        0xbd => {
            let elem = cp.class_name(u2(pc + 1)).ok()?;
            let elem = if elem.starts_with('[') { descriptor_type(elem) } else { source_type(elem) };
            format!("new {elem}[…]")
        }
        0xc5 => {
            let d = descriptor_type(cp.class_name(u2(pc + 1)).ok()?);
            format!("new {}", d.replace("[]", "[…]"))
        }
        0xba => {
            let Some(Constant::InvokeDynamic { bootstrap, name_and_type }) = cp.get(u2(pc + 1)) else { return None };
            let (name, descriptor) = cp.name_and_type(*name_and_type).ok()?;
            if name.starts_with("makeConcat") {
                return Some("the string concatenation".into());
            }
            // A lambda or method reference: the implementation is the bootstrap's second argument.
            let target = file.bootstrap_methods.get(*bootstrap as usize).and_then(|m| m.arguments.get(1)).and_then(
                |&a| match cp.get(a) {
                    Some(Constant::MethodHandle { reference, .. }) => cp.member_ref(*reference).ok(),
                    _ => None,
                },
            );
            let interface = MethodDescriptor::parse(descriptor).map(|d| descriptor_type(&d.return_type));
            match target {
                Some(t) if t.name.starts_with("lambda$") => match interface {
                    Some(i) => format!("the lambda (a {i})"),
                    None => "the lambda".into(),
                },
                Some(t) if &*t.name == "<init>" => format!("{}::new", source_type(&t.class)),
                Some(t) => format!("{}::{}", source_type(&t.class), t.name),
                // A record's generated `toString`, `equals`, `hashCode` (ObjectMethods).
                None if matches!(&**name, "toString" | "equals" | "hashCode") => {
                    format!("the record's generated {name}()")
                }
                None => format!("the {name} call site"),
            }
        }
        0xb6..=0xb9 => {
            let r = cp.member_ref(u2(pc + 1)).ok()?;
            let owner = source_type(&r.class);
            if &*r.name == "valueOf" && is_box(&r.class) && !r.descriptor.starts_with("(Ljava/lang/String;") {
                return Some(format!("boxing to {owner}"));
            }
            match &*r.name {
                "<init>" => format!("new {owner}(…)"),
                n => format!("{owner}.{n}({})", if r.descriptor.starts_with("()") { "" } else { "…" }),
            }
        }
        _ => return None,
    })
}

/// Whether a class (dotted or internal name) is one of the primitive wrappers boxing makes.
pub fn is_box(class: &str) -> bool {
    matches!(
        class.strip_prefix("java.lang.").or_else(|| class.strip_prefix("java/lang/")),
        Some("Integer" | "Long" | "Double" | "Float" | "Short" | "Byte" | "Character" | "Boolean")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_read_as_written() {
        assert_eq!(source_type("com.acme.Main$Order"), "Order");
        assert_eq!(source_type("Main$CustomerView[]"), "CustomerView[]");
        assert_eq!(source_type("java.util.HashMap$Node[]"), "HashMap.Node[]");
        assert_eq!(source_type("java/lang/String"), "String");
        assert_eq!(source_type("Main$$Lambda/0x0000000800c01234"), "lambda");
        assert_eq!(source_type("Main$$Lambda$14"), "lambda");
        assert_eq!(source_type("com.acme.Main$1"), "anonymous class in Main");
        assert_eq!(source_type("java.util.stream.ReferencePipeline$2$1"), "ReferencePipeline");
        assert_eq!(source_type("int[]"), "int[]");
    }

    #[test]
    fn methods_read_as_written() {
        assert_eq!(source_method("Main$Report", "render", "(Ljava/util/List;I)V"), "Report.render(List, int)");
        assert_eq!(source_method("Main$Order", "<init>", "(Ljava/lang/String;)V"), "new Order(String)");
        assert_eq!(source_method("Main", "lambda$main$0", "(I)Z"), "the lambda in Main.main");
        assert_eq!(source_method("Main", "<clinit>", "()V"), "Main's static initialiser");
        assert_eq!(descriptor_type("[[J"), "long[][]");
    }

    #[test]
    fn counts_have_thousands_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1500), "1,500");
        assert_eq!(count(12_249_504), "12,249,504");
        assert_eq!(plural(1, "value", "values"), "1 value");
    }

    #[test]
    fn boxes_by_either_name() {
        assert!(is_box("java.lang.Integer") && is_box("java/lang/Long"));
        assert!(!is_box("java.lang.String") && !is_box("com.acme.Integer"));
    }
}

//! Which catalog pattern a finding is an instance of, from the evidence its analysis gathered,
//! and the pattern's advice in the program's own names. A finding that fits no pattern is a raw
//! analysis result: the JSON keeps it, the editor does not show it.

use crate::analysis::copy::{JVM_MADE, LAMBDA_CAPTURE};
use crate::analysis::words;
use crate::evidence::{
    BottleneckEvidence, CopyChainEvidence, Evidence, LifetimeClass, LifetimeEvidence, RepeatedWork, UsageEvidence,
    UsageKind,
};
use crate::patterns::Pattern;
use crate::report::Finding;

/// What triage knows about a finding's line beyond the finding itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct LineFacts {
    /// What the line makes is (almost) never used (a never-used or rarely-used finding there).
    pub dropped: bool,
    /// The line's temporary strings are the text of values written out ([`value_text_written`]).
    pub text_written: bool,
}

/// The pattern `f` is an instance of, if its evidence shows one.
pub fn pattern(f: &Finding, line: LineFacts) -> Option<Pattern> {
    match &f.evidence {
        Evidence::CopyChain(c) => copy_chain(f, c),
        Evidence::Clone(_) => Some(Pattern::CloneToRead),
        Evidence::Usage(kind, u) => usage(*kind, u),
        Evidence::FilledCollection(c) => {
            Some(if c.only_size { Pattern::CollectionForSize } else { Pattern::WrittenNeverRead })
        }
        Evidence::LowUtility(l) => Some(if l.unread_cost >= 1.0 {
            Pattern::UnreadCostlyFields
        } else if l.n_rab < 1.0 {
            Pattern::DroppedResult
        } else {
            Pattern::WholeInputDecoded
        }),
        Evidence::Lifetime(l) => lifetime(l, line),
        Evidence::Bottleneck(b) => bottleneck(f, b, line),
    }
}

/// What reference propagation's verdict on a site makes of it.
fn usage(kind: UsageKind, u: &UsageEvidence) -> Option<Pattern> {
    let ty = u.type_name.as_str();
    match kind {
        UsageKind::Nath | UsageKind::MostlyNath if value_text_written(u) => None,
        UsageKind::Nath | UsageKind::MostlyNath => Some(temporary(ty, u.lookup_key)),
        UsageKind::NeverUsed if ty == "java.lang.String" => Some(Pattern::UnusedMessageString),
        UsageKind::NeverUsed if u.heap_writes > 0 && u.heap_reads == 0 => Some(Pattern::WrittenNeverRead),
        UsageKind::NeverUsed => Some(Pattern::NeverUsedObjects),
        UsageKind::RarelyUsed => Some(Pattern::EagerCreation),
        UsageKind::WriteReadImbalance => Some(Pattern::WrittenNeverRead),
    }
}

fn lifetime(l: &LifetimeEvidence, line: LineFacts) -> Option<Pattern> {
    let ty = l.type_name.as_str();
    match l.class {
        // Kept to the end and growing is a leak only when nothing reads them back: data a
        // program keeps on purpose (a parsed document, inputs for a later check) is read.
        LifetimeClass::Immortal if l.growing && l.leak => Some(Pattern::Leak),
        LifetimeClass::Immortal => None,
        LifetimeClass::Mixed => throwaway_in_some_callers(l).then_some(Pattern::MixedLifetimeFactory),
        LifetimeClass::Short if line.text_written && ty == "java.lang.String" => None,
        LifetimeClass::Short => Some(temporary(ty, false)),
        // Medium or long by the VM's small collections; judged by HotSpot's.
        LifetimeClass::Medium | LifetimeClass::Long => mid_life_on_hotspot(l).then_some(Pattern::MidLifeObjects),
    }
}

/// HotSpot places an object alike whatever its allocation site (it has no per-site pretenuring),
/// so callers that keep a factory's objects for different spans cost nothing by that alone: a
/// split factory makes the same objects. What a split saves is the objects of the callers that
/// only read them and drop them at once — most of the short-lived contexts' objects never stored.
/// A library's object inside a result (a `String`'s `byte[]`, a map's node) is stored in it by
/// the library whoever keeps the result, so the evidence is about the user's own `new`.
fn throwaway_in_some_callers(l: &LifetimeEvidence) -> bool {
    let short = l.short_context_objects.unwrap_or(0);
    !l.made_by_library && short > 0 && l.temporary_objects.unwrap_or(0) * 2 > short
}

/// Objects a HotSpot young collection copies: most of the site's objects outlived a HotSpot-sized
/// young generation and then died (whether after one of its collections or after tenuring). Outliving the VM's small young generation is not enough: a
/// parsed document used and dropped within a few MB of allocation dies young on HotSpot.
fn mid_life_on_hotspot(l: &LifetimeEvidence) -> bool {
    l.outlived_hotspot_young * 2 > l.classified()
}

/// A copy is waste when something shows it: it goes through a container that exists to carry
/// it, it copies a collection per call, it moves data through layers, or nothing computes with
/// the copy. A single move of a value that is then used is the program's state at work (a
/// cursor, a save and restore, a relinking), not a pattern.
fn copy_chain(f: &Finding, c: &CopyChainEvidence) -> Option<Pattern> {
    let path = &c.path;
    // Into a box's value: a primitive boxed (and maybe unboxed from another box before).
    let boxes = path.last().is_some_and(|n| {
        let class = n.split(['.', ' ']).next().unwrap_or("");
        words::is_box(&format!("java.lang.{class}")) && n.contains(".value")
    });
    if boxes {
        return Some(Pattern::BoxingInLoop);
    }
    // Into a link of a linked structure (a list's `next`, a map's `tail`): the structure relinking
    // its nodes, which is how it works, not a copy of data. An inner object's link to its outer
    // one (javac's `this$0`, an iterator's to its collection) is such a link too.
    let relinks = path.last().is_some_and(|n| {
        let field = n.split(" (").next().unwrap_or(n).rsplit('.').next().unwrap_or("");
        LINK_FIELDS.contains(&field) || field.starts_with("this$")
    });
    if relinks {
        return None;
    }
    // Through a lambda's captured value: a closure holding what it calls back with (the enclosing
    // object, a setting), handed on as a reference, not data copied.
    if path.iter().any(|n| n.starts_with(LAMBDA_CAPTURE)) {
        return None;
    }
    let (hops, consumed) = (c.hops, c.consumed);
    let (Some(source), Some(dest)) = (path.first().map(String::as_str), path.last().map(String::as_str)) else {
        return None;
    };
    // A value taken out of an array into the object's state (a reader's `current = buf[pos++]`,
    // an iterator's count at its index) and used there is the program reading its data.
    if is_elements(source) && !is_elements(dest) && hops == 1 && consumed {
        return None;
    }
    // Every object on the path made on the finding's own line: the inside of one computation
    // there (a `new BigDecimal(text)` parsing its digits), no second copy of the program's data.
    let here = f.location.line.map(|l| format!("(line {l}"));
    if hops == 1 && here.is_some() && made_on(source) == here.as_deref() && made_on(dest) == here.as_deref() {
        return None;
    }
    // Values looked up in a table (a code table, log and exp tables) into a smaller array: the
    // lookup is the computation.
    if hops == 1 && c.from_a_table {
        return None;
    }
    // A constant's characters copied once into a new value (`replace`, `concat` of a literal):
    // the computation's result, not a copy of data the program holds.
    if hops == 1 && source == JVM_MADE {
        return None;
    }
    if is_elements(source) && is_elements(dest) {
        return Some(Pattern::DefensiveCopyPerCall);
    }
    if c.via_container {
        // Put into a collection and never taken out into another place: the program keeping its
        // data there (a set's `PRESENT` marker, a list of the lines it parsed), not a go-between.
        return (c.through_containers > 0).then_some(Pattern::IntermediateContainer);
    }
    (hops >= 2 || !consumed).then_some(Pattern::LayeredCopy)
}

/// A copy analysis node that is an array's or a collection's elements (or a string's characters).
fn is_elements(node: &str) -> bool {
    node.contains(" elements (") || node.starts_with("String contents (")
}

/// The line the node's object was made on, as the copy analysis names it (`… (line 12)`).
fn made_on(node: &str) -> Option<&str> {
    let at = node.find("(line ")?;
    node[at..].split(')').next()
}

/// Fields that link a structure's nodes.
const LINK_FIELDS: [&str; 10] =
    ["next", "prev", "previous", "head", "tail", "before", "after", "left", "right", "parent"];

/// Temporaries (never stored, or dying in the iteration that made them) by what they are;
/// `lookup_key`: their only uses are hashing and comparing inside the JDK.
fn temporary(ty: &str, lookup_key: bool) -> Pattern {
    let simple = ty.rsplit(['.', '$']).next().unwrap_or(ty);
    if words::is_box(ty) {
        Pattern::BoxingInLoop
    } else if lookup_key {
        Pattern::TemporaryLookupKey
    } else if ty == "java.lang.String" || ty == "java.lang.StringBuilder" {
        Pattern::TemporaryString
    } else if ty.starts_with("java.util.regex.") {
        Pattern::RegexPerCall
    } else if ty.starts_with("java.util.Formatter") {
        Pattern::FormatPerCall
    } else if ty.starts_with("java.util.stream.")
        || simple.ends_with("Itr")
        || simple.ends_with("Iterator")
        || simple.ends_with("Spliterator")
        || simple.contains("Pipeline")
    {
        Pattern::StreamPerCall
    } else {
        Pattern::ResultObjectPerCall
    }
}

/// Strings made from a value (a number's digits, a character: characters that exist nowhere else)
/// and nearly all handed whole to a text output (a `Writer`, a builder, a concatenation): what the
/// program writes. There is nothing to compare or use directly instead, and no form of the output
/// that takes the value without its text, so they are no temporary-string.
pub fn value_text_written(u: &UsageEvidence) -> bool {
    u.type_name == "java.lang.String" && u.from_value && u.written_objects * 10 >= u.instances * 9
}

/// Library calls whose set-up dominates and which have a prepared form to reuse.
const SET_UP_CALLS: [&str; 8] = [
    "java.security.MessageDigest.getInstance",
    "javax.crypto.Cipher.getInstance",
    "javax.crypto.Mac.getInstance",
    "java.time.format.DateTimeFormatter.ofPattern",
    "java.text.SimpleDateFormat.<init>",
    "java.text.NumberFormat.getInstance",
    "javax.xml.parsers.DocumentBuilderFactory.newInstance",
    "java.text.DecimalFormat.<init>",
];

/// A call path is a pattern only when its cost looks redundant: the same work repeated, or a
/// string built for nothing. The program's essential work is no pattern.
fn bottleneck(f: &Finding, b: &BottleneckEvidence, line: LineFacts) -> Option<Pattern> {
    let through = |prefix: &str| b.calls.iter().any(|c| c.starts_with(prefix));
    if line.dropped && builds_a_string(f) {
        return Some(Pattern::UnusedMessageString);
    }
    Some(match b.repeated? {
        RepeatedWork::RegexCompiledPerCall => Pattern::RegexPerCall,
        _ if SET_UP_CALLS.iter().any(|c| through(c)) => Pattern::PreparedFormPerItem,
        RepeatedWork::ScanPerIteration => Pattern::QuadraticScan,
        _ if through("java.util.Formatter.format") => Pattern::FormatPerCall,
        RepeatedWork::SameArguments => Pattern::RepeatedCall,
    })
}

/// A call path whose user line builds a string (a concatenation, `String.valueOf`, `format`)
/// and whose cost is in the string building below it.
pub fn builds_a_string(f: &Finding) -> bool {
    let Evidence::Bottleneck(b) = &f.evidence else { return false };
    let e = f.location.expression.as_deref().unwrap_or("");
    let builds = e == "the string concatenation" || e.starts_with("String.valueOf") || e.starts_with("String.format");
    let in_building = |c: &String| c.contains("StringBuilder") || c.contains("StringConcat") || c.contains("Formatter");
    builds && b.calls.iter().any(in_building)
}

/// The pattern's fix for this finding, with the program's names where the evidence has them.
pub fn advice(f: &Finding, pattern: Pattern) -> String {
    let ty = f.evidence.type_name().unwrap_or("");
    let simple = if ty.is_empty() { String::new() } else { words::source_type(ty) };
    match (pattern, &f.evidence) {
        (Pattern::BoxingInLoop, _) if !simple.is_empty() && words::is_box(ty) => {
            format!("Keep these values primitive: each {simple} made here is a new object read once.")
        }
        (Pattern::UnreadCostlyFields, Evidence::LowUtility(l)) => {
            let names: Vec<&str> = l.unread_fields.iter().map(|n| n.rsplit('.').next().unwrap_or(n)).collect();
            if names.is_empty() {
                return pattern.entry().fix.to_string();
            }
            if !l.unread_everywhere {
                format!(
                    "Compute {} only for the callers that read {} (lazily, or with a cheaper factory for the others).",
                    names.join(", "),
                    if names.len() == 1 { "it" } else { "them" }
                )
            } else {
                format!("Drop the fields nothing reads ({}), or compute them only when asked for.", names.join(", "))
            }
        }
        (Pattern::NeverUsedObjects, _) if !simple.is_empty() => {
            format!("Stop creating these {simple} objects: nothing ever reads them.")
        }
        (Pattern::EagerCreation, _) if !simple.is_empty() => {
            format!("Create {simple} objects only when needed: most of them are never used.")
        }
        _ => pattern.entry().fix.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Location;

    fn finding(evidence: Evidence) -> Finding {
        let at = Location {
            file: Some("Main.java".into()),
            line: Some(3),
            class: "Main".into(),
            method: "run".into(),
            descriptor: "()V".into(),
            bci: 0,
            expression: None,
        };
        Finding::new(evidence, 1.0, String::new(), at)
    }

    fn of(evidence: Evidence) -> Option<Pattern> {
        pattern(&finding(evidence), LineFacts::default())
    }

    fn lifetime(e: LifetimeEvidence) -> Option<Pattern> {
        of(Evidence::Lifetime(e))
    }

    /// The program's state moving is no pattern: a list relinked, a single move of a value that
    /// is then computed with. A copy into a box is boxing; through a map, an intermediate container.
    #[test]
    fn copies_are_patterns_only_with_evidence_of_waste() {
        let copy = |path: &[&str], hops: u64, consumed: bool, via_container: bool| CopyChainEvidence {
            path: path.iter().map(|n| n.to_string()).collect(),
            hops,
            consumed,
            via_container,
            ..CopyChainEvidence::default()
        };
        let chain = |path: &[&str], hops: u64, consumed: bool, via: bool| {
            of(Evidence::CopyChain(copy(path, hops, consumed, via)))
        };
        assert_eq!(chain(&["Node.value (line 3)", "Node.next (line 4)"], 1, true, false), None);
        assert_eq!(chain(&["LruCache elements (line 73)", "LinkedHashMap.tail (line 56)"], 1, true, true), None);
        assert_eq!(chain(&["Parser.pos (line 3)", "Parser.mark (line 4)"], 1, true, false), None);
        assert_eq!(
            chain(
                &["Parser.this$0 (line 5)", "a value the lambda captured (line 9)", "Row.parser (line 12)"],
                2,
                true,
                true
            ),
            None,
            "a reference handed to a closure"
        );
        assert_eq!(
            chain(&["JsonArray.values (line 59)", "ArrayList.Itr.this$0 (line 36)"], 1, false, true),
            None,
            "an iterator's link to its collection"
        );
        assert_eq!(
            chain(&["Ledger.balance (line 10)", "Long.value (line 13)"], 1, true, true),
            Some(Pattern::BoxingInLoop)
        );
        let through = |path: &[&str], hops: u64, through_containers: u64| {
            of(Evidence::CopyChain(CopyChainEvidence { through_containers, ..copy(path, hops, true, true) }))
        };
        assert_eq!(
            through(&["Customer.name", "HashMap.Node.value (line 9)", "Row.name (line 12)"], 2, 1),
            Some(Pattern::IntermediateContainer)
        );
        assert_eq!(
            through(&["static HashSet.PRESENT", "HashMap.Node.value (line 80)"], 1, 0),
            None,
            "put into a collection and kept there: the program's data, no go-between"
        );
        assert_eq!(chain(&["Entity.id", "Order.id", "Dto.id"], 2, true, false), Some(Pattern::LayeredCopy));
        assert_eq!(chain(&["Order.id", "Audit.id"], 1, false, false), Some(Pattern::LayeredCopy), "never used");
        assert_eq!(
            chain(&["Item elements (line 5)", "Object[] elements (line 6)"], 1, true, true),
            Some(Pattern::DefensiveCopyPerCall)
        );
        // A reader taking the next value into its state, and a computation's own insides.
        assert_eq!(chain(&["char[] elements (line 10)", "Lexer.current (line 55)"], 1, true, false), None);
        assert_eq!(chain(&["char[] elements (line 3)", "BigDecimal elements (line 3)"], 1, true, true), None);
        assert_eq!(
            chain(&["Object[] elements (line 10)", "Object[] elements (line 10)"], 1, true, true),
            Some(Pattern::DefensiveCopyPerCall),
            "two lists' arrays made by one constructor, copied elsewhere"
        );
        assert_eq!(chain(&[JVM_MADE, "String contents (line 35)"], 1, false, true), None);
        // The same reads into a field nothing uses are a copy; a table lookup is not.
        assert_eq!(
            chain(&["char[] elements (line 10)", "Lexer.current (line 55)"], 1, false, false),
            Some(Pattern::LayeredCopy)
        );
        let lookup = CopyChainEvidence {
            from_a_table: true,
            ..copy(&["int[] elements (line 7)", "int[] elements (line 42)"], 1, true, true)
        };
        assert_eq!(of(Evidence::CopyChain(lookup)), None);
    }

    /// Kept to the end and growing is a leak only when the objects are never read back.
    #[test]
    fn a_leak_needs_objects_never_read_again() {
        let kept = |leak: bool| {
            lifetime(LifetimeEvidence {
                class: LifetimeClass::Immortal,
                growing: true,
                leak,
                type_name: "Main$Entry".into(),
                ..LifetimeEvidence::default()
            })
        };
        assert_eq!(kept(true), Some(Pattern::Leak));
        assert_eq!(kept(false), None, "kept and read: the program's data");
        let long = LifetimeEvidence { class: LifetimeClass::Long, ..LifetimeEvidence::default() };
        assert_eq!(lifetime(long), None, "no HotSpot figure: kept, not waste");
    }

    /// Surviving the VM's 1 MB young generation is not mid-life on HotSpot: most objects must have
    /// lived through a HotSpot-sized young generation's allocation, and died before the end.
    #[test]
    fn mid_life_is_judged_against_a_hotspot_young_generation() {
        let medium = |outlived: u64| {
            lifetime(LifetimeEvidence {
                class: LifetimeClass::Medium,
                short: 10,
                medium: 90,
                outlived_hotspot_young: outlived,
                hotspot_young_bytes: 32 << 20,
                ..LifetimeEvidence::default()
            })
        };
        assert_eq!(medium(0), None, "a document used and dropped within a few MB dies young on HotSpot");
        assert_eq!(medium(50), None, "half is not most");
        assert_eq!(medium(80), Some(Pattern::MidLifeObjects));
        let unjudged = LifetimeEvidence { class: LifetimeClass::Medium, medium: 90, ..LifetimeEvidence::default() };
        assert_eq!(lifetime(unjudged), None, "no HotSpot figure, no verdict");
        let long = LifetimeEvidence {
            class: LifetimeClass::Long,
            long: 100,
            outlived_hotspot_young: 100,
            ..LifetimeEvidence::default()
        };
        assert_eq!(
            lifetime(long),
            Some(Pattern::MidLifeObjects),
            "long by the VM's collections, mid-life on HotSpot's"
        );
    }

    /// Callers that keep a factory's objects for different spans are no waste on HotSpot (no
    /// per-site pretenuring); callers that make the user's objects only to read and drop them are.
    #[test]
    fn a_mixed_site_is_waste_only_where_callers_throw_its_objects_away() {
        let mixed = |library: bool, short: u64, temporaries: Option<u64>| {
            lifetime(LifetimeEvidence {
                class: LifetimeClass::Mixed,
                made_by_library: library,
                short,
                immortal: 400,
                short_context_objects: temporaries.map(|_| short),
                temporary_objects: temporaries,
                ..LifetimeEvidence::default()
            })
        };
        assert_eq!(mixed(false, 2100, Some(2100)), Some(Pattern::MixedLifetimeFactory), "read and dropped");
        assert_eq!(mixed(false, 16000, Some(0)), None, "a parser's current line, stored in its field");
        assert_eq!(mixed(false, 16000, Some(4000)), None, "mostly stored");
        assert_eq!(mixed(true, 1660, Some(1660)), None, "a library's object inside a result kept for different spans");
        assert_eq!(mixed(false, 2100, None), None, "stores not seen (lifetimes alone)");
        assert_eq!(mixed(false, 0, Some(0)), None);
    }

    /// The text of a value handed whole to an output is what the program writes; a string cut
    /// from other text, or one compared or parsed, is a temporary. Short lives on such a line
    /// are the same strings.
    #[test]
    fn the_text_of_values_written_out_is_output_not_a_temporary() {
        let string = |from_value: bool, written: u64| {
            let u = UsageEvidence {
                type_name: "java.lang.String".into(),
                instances: 100,
                from_value,
                written_objects: written,
                ..UsageEvidence::default()
            };
            of(Evidence::Usage(UsageKind::Nath, u))
        };
        assert_eq!(string(true, 100), None, "Long.toString handed to a Writer");
        assert_eq!(string(true, 95), None, "nearly all written");
        assert_eq!(string(true, 0), Some(Pattern::TemporaryString), "a number's text compared or parsed");
        assert_eq!(string(false, 100), Some(Pattern::TemporaryString), "a substring written: write the range");
        let short = |text_written: bool| {
            let e = LifetimeEvidence {
                class: LifetimeClass::Short,
                type_name: "java.lang.String".into(),
                ..LifetimeEvidence::default()
            };
            pattern(&finding(Evidence::Lifetime(e)), LineFacts { text_written, ..LineFacts::default() })
        };
        assert_eq!(short(true), None);
        assert_eq!(short(false), Some(Pattern::TemporaryString));
    }

    /// Temporaries are named by what they are; a call path only by what it repeats.
    #[test]
    fn temporaries_and_call_paths_by_their_evidence() {
        let nath = |ty: &str, lookup_key: bool| {
            let u = UsageEvidence { type_name: ty.into(), lookup_key, ..UsageEvidence::default() };
            of(Evidence::Usage(UsageKind::Nath, u))
        };
        assert_eq!(nath("java.lang.Integer", false), Some(Pattern::BoxingInLoop));
        assert_eq!(nath("java.lang.String", false), Some(Pattern::TemporaryString));
        assert_eq!(nath("java.util.stream.ReferencePipeline$3", false), Some(Pattern::StreamPerCall));
        assert_eq!(nath("com.acme.Main$MinMax", false), Some(Pattern::ResultObjectPerCall));
        assert_eq!(nath("java.lang.String", true), Some(Pattern::TemporaryLookupKey));
        let path = |repeated: Option<RepeatedWork>, calls: &[&str]| {
            let calls = calls.iter().map(|c| c.to_string()).collect();
            of(Evidence::Bottleneck(BottleneckEvidence { repeated, calls, ..BottleneckEvidence::default() }))
        };
        assert_eq!(path(None, &["Main.main()V"]), None, "the program's essential work");
        assert_eq!(
            path(Some(RepeatedWork::SameArguments), &["Main.main()V", "Main.rate()D"]),
            Some(Pattern::RepeatedCall)
        );
        assert_eq!(
            path(
                Some(RepeatedWork::ScanPerIteration),
                &["Main.main()V", "java.util.ArrayList.contains(Ljava/lang/Object;)Z"]
            ),
            Some(Pattern::QuadraticScan)
        );
        assert_eq!(path(Some(RepeatedWork::RegexCompiledPerCall), &["Main.main()V"]), Some(Pattern::RegexPerCall));
        assert_eq!(
            path(Some(RepeatedWork::SameArguments), &["Main.main()V", "java.time.format.DateTimeFormatter.ofPattern(Ljava/lang/String;)Ljava/time/format/DateTimeFormatter;"]),
            Some(Pattern::PreparedFormPerItem)
        );
    }
}

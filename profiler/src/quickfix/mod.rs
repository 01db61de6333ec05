//! Quick fixes: the change a finding's pattern names, made on the source's syntax tree.
//!
//! A finding says where (its line and the expression there, [`crate::report::Location`]) and what
//! (its [`Pattern`]); [`fix_for`] finds that expression in the file with tree-sitter-java and, when
//! the pattern's change is mechanical and safe for this code, returns the edits ([`QuickFix`]) — or
//! why it is not offered ([`NoFix`], which the editor's hover shows). Edits are byte ranges of the
//! original text and touch only what the change needs, so the user's formatting stays.
//!
//! A fix here is only *offered*; [`check`] says whether it is safe to apply (the fixed file
//! compiles, the program's output is the same), and the editor compares the profiles before and
//! after. Each fix is one module: what it recognises, its edits, and when it refuses.

pub mod check;
mod hoist;
mod lazy_message;
pub mod measure;
mod primitive;
mod regex;
mod share;
mod strings;
pub mod syntax;
mod unread;

use crate::patterns::Pattern;
use crate::report::Finding;
use std::fmt;

/// The fixes Bloatlens can make, one per mechanical change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixKind {
    /// `s.replaceAll("[^a-z]", "")` → `NON_LETTERS.matcher(s).replaceAll("")` with a
    /// `private static final Pattern`: the expression is compiled once, not per call.
    PrecompileRegex,
    /// A call repeated with the same arguments in a loop, computed once before the loop.
    HoistInvariantCall,
    /// `return new ArrayList<>(items);` → `return Collections.unmodifiableList(items);`: callers
    /// read the original, and one that writes fails loudly instead of writing a copy.
    ShareInsteadOfCopy,
    /// `switch (String.valueOf(c))` over one-character labels → `switch (c)`.
    SwitchOnChar,
    /// `s.substring(i, i + 2).equals("{{")` → `s.startsWith("{{", i)`.
    CompareInPlace,
    /// `stream.collect(toList()).size()` → `(int) stream.count()`; `.isEmpty()` → `findAny()`.
    CountInsteadOfCollect,
    /// A message built only for a call with a `Supplier` overload, passed as `() -> message`.
    LazyMessage,
    /// A local declared `Integer` (or another box) that only holds numbers, declared primitive.
    PrimitiveLocal,
    /// A private field only ever added to (never read), and the statements filling it, removed.
    DropUnreadCollection,
    /// `String s = ""; for (…) s += x;` → a `StringBuilder` appended to in the loop.
    BuilderInLoop,
    /// `new ArrayList<>()` filled once per element of a collection → presized to its size.
    PresizeCollection,
}

impl FixKind {
    pub const ALL: [FixKind; 11] = [
        FixKind::PrecompileRegex,
        FixKind::HoistInvariantCall,
        FixKind::ShareInsteadOfCopy,
        FixKind::SwitchOnChar,
        FixKind::CompareInPlace,
        FixKind::CountInsteadOfCollect,
        FixKind::LazyMessage,
        FixKind::PrimitiveLocal,
        FixKind::DropUnreadCollection,
        FixKind::BuilderInLoop,
        FixKind::PresizeCollection,
    ];

    /// The name the JSON, the CLI and the docs use.
    pub fn name(self) -> &'static str {
        match self {
            FixKind::PrecompileRegex => "precompile-regex",
            FixKind::HoistInvariantCall => "hoist-invariant-call",
            FixKind::ShareInsteadOfCopy => "share-instead-of-copy",
            FixKind::SwitchOnChar => "switch-on-char",
            FixKind::CompareInPlace => "compare-in-place",
            FixKind::CountInsteadOfCollect => "count-instead-of-collect",
            FixKind::LazyMessage => "lazy-message",
            FixKind::PrimitiveLocal => "primitive-local",
            FixKind::DropUnreadCollection => "drop-unread-collection",
            FixKind::BuilderInLoop => "builder-in-loop",
            FixKind::PresizeCollection => "presize-collection",
        }
    }

    /// The patterns whose findings it can fix.
    pub fn patterns(self) -> &'static [Pattern] {
        match self {
            FixKind::PrecompileRegex => &[Pattern::RegexPerCall, Pattern::PreparedFormPerItem],
            FixKind::HoistInvariantCall => &[Pattern::RepeatedCall],
            FixKind::ShareInsteadOfCopy => &[Pattern::CloneToRead, Pattern::DefensiveCopyPerCall],
            FixKind::SwitchOnChar | FixKind::CompareInPlace => &[Pattern::TemporaryString],
            FixKind::CountInsteadOfCollect => &[Pattern::CollectionForSize],
            FixKind::LazyMessage => &[Pattern::UnusedMessageString],
            FixKind::PrimitiveLocal => &[Pattern::BoxingInLoop],
            FixKind::DropUnreadCollection => &[Pattern::WrittenNeverRead, Pattern::Leak],
            FixKind::BuilderInLoop => &[Pattern::TemporaryString, Pattern::LayeredCopy],
            FixKind::PresizeCollection => &[Pattern::RegrownBuilder],
        }
    }
}

impl fmt::Display for FixKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Replace `start..end` (bytes of the original text) with `text`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// A change offered for a finding.
#[derive(Debug, Clone, serde::Serialize)]
pub struct QuickFix {
    pub kind: FixKind,
    /// What the editor's menu says: "Compile `[^A-Za-z']` once into `static final Pattern NON_WORD`".
    pub title: String,
    /// Non-overlapping edits of the original text.
    pub edits: Vec<Edit>,
    /// What the change may alter beyond the saving, when anything ("also evaluated when the loop
    /// runs no iteration"); checked by running the program, said in the hover.
    pub caveat: Option<String>,
}

/// Why no fix is offered for a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoFix(pub String);

impl fmt::Display for NoFix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub(crate) fn no(why: impl Into<String>) -> NoFix {
    NoFix(why.into())
}

/// What a finding's location names at its line, from [`crate::report::Location::expression`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hint {
    /// `String.replaceAll(…)`: the method (after the class's simple name).
    Call { method: String },
    /// `new ArrayList(…)`.
    New { class: String },
    /// `the string concatenation`.
    Concat,
    /// `boxing to Integer`.
    Boxing { to: String },
    /// Anything else, or nothing.
    Other,
}

impl Hint {
    pub(crate) fn of(expression: Option<&str>) -> Hint {
        let Some(e) = expression else { return Hint::Other };
        if e == "the string concatenation" {
            return Hint::Concat;
        }
        if let Some(to) = e.strip_prefix("boxing to ") {
            return Hint::Boxing { to: to.to_string() };
        }
        if let Some(class) = e.strip_prefix("new ") {
            let class = class.split(['(', '[']).next().unwrap_or(class);
            return Hint::New { class: class.to_string() };
        }
        if let Some(call) = e.strip_suffix("(…)").or_else(|| e.strip_suffix("()")) {
            if let Some((_, method)) = call.rsplit_once('.') {
                return Hint::Call { method: method.to_string() };
            }
        }
        Hint::Other
    }
}

/// What a fix needs of a finding: its pattern, its line, and the expression it names there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub pattern: Option<Pattern>,
    pub line: Option<u32>,
    /// As [`crate::report::Location::expression`] words it: `String.replaceAll(…)`.
    pub expression: Option<String>,
}

impl Subject {
    pub fn of(f: &Finding) -> Subject {
        Subject { pattern: f.pattern, line: f.location.line, expression: f.location.expression.clone() }
    }
}

/// What a fixer reads: the finding, its file's text, and the workspace's other sources (to know
/// that nothing else reads what a fix removes).
pub struct Target<'a> {
    pub subject: Subject,
    pub text: &'a str,
    pub others: &'a [&'a str],
}

impl<'a> Target<'a> {
    pub fn new(finding: &Finding, text: &'a str, others: &'a [&'a str]) -> Target<'a> {
        Target { subject: Subject::of(finding), text, others }
    }
}

/// The fix for `finding` in its source `text`, or why there is none.
pub fn fix_for(target: &Target<'_>) -> Result<QuickFix, NoFix> {
    let Some(pattern) = target.subject.pattern else {
        return Err(no("the finding fits no pattern"));
    };
    let Some(line) = target.subject.line else {
        return Err(no("the finding has no source line"));
    };
    let src = syntax::Source::parse(target.text).ok_or_else(|| no("the source could not be parsed"))?;
    if src.tree.root_node().has_error() && on_error_line(&src, line) {
        return Err(no("the line does not parse as Java"));
    }
    let hint = Hint::of(target.subject.expression.as_deref());
    let site = Site { src: &src, line, hint, target };
    let kinds: Vec<FixKind> = FixKind::ALL.into_iter().filter(|k| k.patterns().contains(&pattern)).collect();
    if kinds.is_empty() {
        let advice = pattern.entry().fix;
        return Err(no(format!("no mechanical fix for this pattern; the change it asks for: {advice}")));
    }
    let mut why = Vec::new();
    for kind in kinds {
        let made = match kind {
            FixKind::PrecompileRegex => regex::fix(&site),
            FixKind::HoistInvariantCall => hoist::fix(&site),
            FixKind::ShareInsteadOfCopy => share::fix(&site),
            FixKind::SwitchOnChar => strings::switch_on_char(&site),
            FixKind::CompareInPlace => strings::compare_in_place(&site),
            FixKind::CountInsteadOfCollect => share::count_instead_of_collect(&site),
            FixKind::LazyMessage => lazy_message::fix(&site),
            FixKind::PrimitiveLocal => primitive::fix(&site),
            FixKind::DropUnreadCollection => unread::fix(&site),
            FixKind::BuilderInLoop => strings::builder_in_loop(&site),
            FixKind::PresizeCollection => share::presize(&site),
        };
        match made {
            Ok(fix) => return Ok(fix),
            Err(e) => why.push(e.0),
        }
    }
    why.dedup();
    Err(no(why.join("; ")))
}

fn on_error_line(src: &syntax::Source<'_>, line: u32) -> bool {
    let row = line.saturating_sub(1) as usize;
    syntax::descendants(src.tree.root_node())
        .any(|n| (n.is_error() || n.is_missing()) && n.start_position().row <= row && n.end_position().row >= row)
}

/// What one fixer is given.
pub(crate) struct Site<'s, 't> {
    pub src: &'s syntax::Source<'t>,
    pub line: u32,
    pub hint: Hint,
    pub target: &'s Target<'s>,
}

/// The text with `edits` made.
pub fn apply(text: &str, edits: &[Edit]) -> String {
    let mut edits: Vec<&Edit> = edits.iter().collect();
    edits.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for e in edits {
        out.push_str(&text[at..e.start.max(at)]);
        out.push_str(&e.text);
        at = at.max(e.end);
    }
    out.push_str(&text[at..]);
    out
}

/// A unified diff of `before` and `after`, as `git diff` prints one (`a/` and `b/` prefixes).
pub fn unified_diff(path: &str, before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fix_is_documented_and_has_a_case() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let page = std::fs::read_to_string(root.join("docs/quick-fixes.md")).unwrap();
        let cases: Vec<String> = std::fs::read_dir(root.join("fixtures/quickfix"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        for kind in FixKind::ALL {
            assert!(page.contains(&format!("| `{}` |", kind.name())), "docs/quick-fixes.md lacks {kind}");
            assert!(
                cases.iter().any(|c| c.starts_with(kind.name().split('-').next().unwrap_or_default())),
                "no case in fixtures/quickfix for {kind}"
            );
        }
    }

    #[test]
    fn hints_read_a_locations_words() {
        assert_eq!(Hint::of(Some("String.replaceAll(…)")), Hint::Call { method: "replaceAll".into() });
        assert_eq!(Hint::of(Some("Config.sectionNames()")), Hint::Call { method: "sectionNames".into() });
        assert_eq!(Hint::of(Some("new ArrayList(…)")), Hint::New { class: "ArrayList".into() });
        assert_eq!(Hint::of(Some("boxing to Long")), Hint::Boxing { to: "Long".into() });
        assert_eq!(Hint::of(Some("the string concatenation")), Hint::Concat);
        assert_eq!(Hint::of(None), Hint::Other);
    }

    #[test]
    fn edits_apply_in_order_and_diffs_read_as_git_s() {
        let text = "a\nb\nc\n";
        let edits = [Edit { start: 4, end: 5, text: "C".into() }, Edit { start: 0, end: 0, text: "x\n".into() }];
        let after = apply(text, &edits);
        assert_eq!(after, "x\na\nb\nC\n");
        let diff = unified_diff("Main.java", text, &after);
        assert!(diff.starts_with("--- a/Main.java\n+++ b/Main.java\n@@"), "{diff}");
        assert!(diff.contains("+x\n") && diff.contains("-c\n") && diff.contains("+C\n"), "{diff}");
    }
}

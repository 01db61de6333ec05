//! The catalog of bloat patterns: what a developer would change, named. Every finding the editor
//! shows is an instance of one (its `pattern`); its advice is the pattern's, written with the
//! program's own names. `docs/patterns.md` is generated from this catalog (a test keeps it current).
//!
//! A pattern says what it is, the evidence the analyses must show before a finding is an instance
//! of it (`evidence`), why it costs on HotSpot (not only in our interpreter), the fix, and a
//! before/after example. Which findings are instances is decided in [`crate::recognise`].

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    IntermediateContainer,
    LayeredCopy,
    DefensiveCopyPerCall,
    CloneToRead,
    RegrownBuilder,
    BoxingInLoop,
    TemporaryString,
    TemporaryLookupKey,
    ResultObjectPerCall,
    StreamPerCall,
    RegexPerCall,
    FormatPerCall,
    UnusedMessageString,
    NeverUsedObjects,
    EagerCreation,
    WrittenNeverRead,
    CollectionForSize,
    UnreadCostlyFields,
    WholeInputDecoded,
    DroppedResult,
    Leak,
    MixedLifetimeFactory,
    MidLifeObjects,
    QuadraticScan,
    RepeatedCall,
    PreparedFormPerItem,
    StoredTwice,
}

/// One pattern's page in the catalog.
#[derive(Debug)]
pub struct Entry {
    pub pattern: Pattern,
    /// Named for what a developer would change.
    pub title: &'static str,
    /// What it is, in a sentence or two.
    pub what: &'static str,
    /// What the analyses must show before a finding is an instance of this pattern; `None` when
    /// no analysis recognises it yet (the catalog says so).
    pub evidence: Option<&'static str>,
    /// Why it costs on HotSpot, where a JIT, escape analysis and intrinsics change the bill.
    pub cost: &'static str,
    /// The fix, in one sentence: the advice a finding gives, before the program's names fill it.
    pub fix: &'static str,
    pub before: &'static str,
    pub after: &'static str,
}

impl Pattern {
    pub const ALL: [Pattern; 27] = [
        Pattern::IntermediateContainer,
        Pattern::LayeredCopy,
        Pattern::DefensiveCopyPerCall,
        Pattern::CloneToRead,
        Pattern::RegrownBuilder,
        Pattern::BoxingInLoop,
        Pattern::TemporaryString,
        Pattern::TemporaryLookupKey,
        Pattern::ResultObjectPerCall,
        Pattern::StreamPerCall,
        Pattern::RegexPerCall,
        Pattern::FormatPerCall,
        Pattern::UnusedMessageString,
        Pattern::NeverUsedObjects,
        Pattern::EagerCreation,
        Pattern::WrittenNeverRead,
        Pattern::CollectionForSize,
        Pattern::UnreadCostlyFields,
        Pattern::WholeInputDecoded,
        Pattern::DroppedResult,
        Pattern::Leak,
        Pattern::MixedLifetimeFactory,
        Pattern::MidLifeObjects,
        Pattern::QuadraticScan,
        Pattern::RepeatedCall,
        Pattern::PreparedFormPerItem,
        Pattern::StoredTwice,
    ];

    /// The pattern's name in the JSON, SARIF rule ids and the editor's diagnostic codes.
    pub fn id(self) -> &'static str {
        match self {
            Pattern::IntermediateContainer => "intermediate-container",
            Pattern::LayeredCopy => "layered-copy",
            Pattern::DefensiveCopyPerCall => "defensive-copy-per-call",
            Pattern::CloneToRead => "clone-to-read",
            Pattern::RegrownBuilder => "regrown-builder",
            Pattern::BoxingInLoop => "boxing-in-loop",
            Pattern::TemporaryString => "temporary-string",
            Pattern::TemporaryLookupKey => "temporary-lookup-key",
            Pattern::ResultObjectPerCall => "result-object-per-call",
            Pattern::StreamPerCall => "stream-per-call",
            Pattern::RegexPerCall => "regex-per-call",
            Pattern::FormatPerCall => "format-per-call",
            Pattern::UnusedMessageString => "unused-message-string",
            Pattern::NeverUsedObjects => "never-used-objects",
            Pattern::EagerCreation => "eager-creation",
            Pattern::WrittenNeverRead => "written-never-read",
            Pattern::CollectionForSize => "collection-for-size",
            Pattern::UnreadCostlyFields => "unread-costly-fields",
            Pattern::WholeInputDecoded => "whole-input-decoded",
            Pattern::DroppedResult => "dropped-result",
            Pattern::Leak => "leak",
            Pattern::MixedLifetimeFactory => "mixed-lifetime-factory",
            Pattern::MidLifeObjects => "mid-life-objects",
            Pattern::QuadraticScan => "quadratic-scan",
            Pattern::RepeatedCall => "repeated-call",
            Pattern::PreparedFormPerItem => "prepared-form-per-item",
            Pattern::StoredTwice => "stored-twice",
        }
    }

    pub fn parse(id: &str) -> Option<Pattern> {
        Pattern::ALL.into_iter().find(|p| p.id() == id)
    }

    pub fn entry(self) -> &'static Entry {
        CATALOG.iter().find(|e| e.pattern == self).expect("every pattern has a catalog entry")
    }

    pub fn title(self) -> &'static str {
        self.entry().title
    }

    /// Where the pattern's page is, relative to the repository (`docs/patterns.md#leak`).
    pub fn doc_anchor(self) -> String {
        format!("docs/patterns.md#{}", self.id())
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

pub const CATALOG: &[Entry] = &[
    Entry {
        pattern: Pattern::IntermediateContainer,
        title: "Copy through an intermediate container",
        what: "Values move from one object into a map, array or holder object and from there into another object, with no computation on the way: the container exists only to carry them.",
        evidence: Some("A copy chain of the program's own data (not a library's bookkeeping) whose path passes through a `HashMap`, an array or a holder's fields, copied on many runs of its line, while its source object stays in use."),
        cost: "Each value is stored and loaded twice more than needed, and the container is allocated, filled (hashing, boxing, resizing) and collected on every run of the line; HotSpot cannot remove a container that escapes into a map.",
        fix: "Copy the fields directly into their destination instead of through an intermediate map or array.",
        before: "Map<String, Object> row = new HashMap<>();\nrow.put(\"name\", customer.name());\nrow.put(\"city\", customer.city());\nreturn new CustomerDto((String) row.get(\"name\"), (String) row.get(\"city\"));",
        after: "return new CustomerDto(customer.name(), customer.city());",
    },
    Entry {
        pattern: Pattern::LayeredCopy,
        title: "A representation copied layer to layer",
        what: "The same data is copied field by field from one layer's object into the next layer's (entity → domain object → DTO), each copy read once to build the next.",
        evidence: Some("A copy chain of two or more heap-to-heap hops of the program's own data, each hop a store into a different object, repeated on many runs of its line; not a cursor, a save/restore or a relinking (values that move as the program works)."),
        cost: "Every layer allocates an object and copies every field; the intermediate objects escape (they are returned and stored), so the JIT allocates and the collector clears them all.",
        fix: "Pass the original object along instead of copying its fields from structure to structure.",
        before: "OrderEntity e = repository.load(id);\nOrder o = new Order(e.id(), e.total());\nreturn new OrderDto(o.id(), o.total());",
        after: "OrderEntity e = repository.load(id);\nreturn new OrderDto(e.id(), e.total());",
    },
    Entry {
        pattern: Pattern::DefensiveCopyPerCall,
        title: "A defensive copy on every call",
        what: "A collection's elements are copied into a new collection on every call (`new ArrayList<>(items)`, `List.copyOf`, `toArray`) although the callers only read it.",
        evidence: Some("A copy chain whose values are a collection's elements, copied on many runs of the same line."),
        cost: "An array the size of the collection is allocated and filled per call (an intrinsic `arraycopy` on HotSpot, but still the allocation and the collection of it): linear work per call where a view is constant.",
        fix: "Share the collection (or copy it once, outside the loop) instead of copying its elements on every call.",
        before: "List<Item> items() { return new ArrayList<>(items); }",
        after: "List<Item> items() { return Collections.unmodifiableList(items); }",
    },
    Entry {
        pattern: Pattern::CloneToRead,
        title: "A clone made only to be read",
        what: "A structure is copied field by field into a new one of the same shape, and the copy is only read (to compute a derived value, to iterate) before it is dropped.",
        evidence: Some("A clone: a destination object whose fields come mostly from one source object of the same shape, reported once per pair, on many runs of its line."),
        cost: "The whole object graph is allocated again and copied; the copy escapes into the code that reads it, so the JIT cannot remove it.",
        fix: "Share the original (or copy it lazily) instead of rebuilding its object graph copy by copy.",
        before: "Cart snapshot = cart.deepCopy();\nreturn snapshot.total();",
        after: "return cart.total();",
    },
    Entry {
        pattern: Pattern::RegrownBuilder,
        title: "A builder or collection regrown element by element",
        what: "A `StringBuilder`, `ArrayList` or `HashMap` whose final size is known is started at its default capacity and grows by copying its contents into ever larger arrays.",
        evidence: None,
        cost: "Each growth allocates a larger array and copies everything so far (about twice the final size in all); with a known size a presized one allocates once.",
        fix: "Presize it: pass the known size to the constructor.",
        before: "List<Row> rows = new ArrayList<>();\nfor (Line l : lines) rows.add(parse(l));",
        after: "List<Row> rows = new ArrayList<>(lines.size());\nfor (Line l : lines) rows.add(parse(l));",
    },
    Entry {
        pattern: Pattern::BoxingInLoop,
        title: "Boxing in a hot loop",
        what: "Primitive values are boxed (`Integer`, `Long`, `Double`) on every iteration, used once and dropped, or stored into a collection of boxes.",
        evidence: Some("A box type's objects made on a line that runs many times, never stored in the heap (NATH) or dying within the iteration that made them."),
        cost: "Outside the small-value cache every box is an allocation; escape analysis removes only boxes that never leave the inlined code, so boxes passed to a collection or a non-inlined call stay.",
        fix: "Keep these values primitive: boxing makes a new object for each value that is only read once.",
        before: "Map<String, Integer> counts = …;\ncounts.put(word, counts.get(word) + 1);",
        after: "Map<String, int[]> counts = …;\ncounts.computeIfAbsent(word, w -> new int[1])[0]++;",
    },
    Entry {
        pattern: Pattern::TemporaryString,
        title: "A temporary string per call",
        what: "A string is built (concatenated, formatted, `substring`, `toLowerCase`) on every call only to be compared, hashed or parsed, then dropped.",
        evidence: Some("`String` objects made on a line that runs many times, never stored in the heap (NATH) or dying within the iteration that made them. Not the text of a value (a number's digits, a character) handed whole to a `Writer`, a builder or a concatenation: that text is what the program writes, and no form of the output takes the value without it."),
        cost: "Each string is a `byte[]` allocated and filled character by character; HotSpot does not remove a string that reaches `equals`, `hashCode` or a map.",
        fix: "Avoid building this string on every call: compare or use its parts directly, or build it once.",
        before: "if ((user.first() + \" \" + user.last()).equals(name)) …",
        after: "if (name.length() == user.first().length() + 1 + user.last().length()\n        && name.startsWith(user.first()) && name.endsWith(user.last())) …",
    },
    Entry {
        pattern: Pattern::TemporaryLookupKey,
        title: "A temporary key object per lookup",
        what: "A key object (a concatenated string, a record, a list) is built for every map lookup and dropped after it.",
        evidence: Some("Temporaries (NATH) made on a line that runs many times whose only uses are hashing and comparing inside the JDK (`hashCode`, `equals`, `compareTo` as a map or set looks them up)."),
        cost: "The key is allocated and hashed on every lookup (a string key's hash is computed again for every new string); the JIT cannot remove a key that is passed into `HashMap.get` unless the whole lookup inlines.",
        fix: "Look up by the parts directly (a nested map, or a key object kept and reused), instead of building a key for every lookup.",
        before: "prices.get(sku + \"@\" + region)",
        after: "pricesByRegion.get(region).get(sku)",
    },
    Entry {
        pattern: Pattern::ResultObjectPerCall,
        title: "A result or carrier object per call",
        what: "A small object of the program's own class is made on every call to return or pass a few values, read once and dropped.",
        evidence: Some("Objects of a class of the user's code made on a line that runs many times, never stored in the heap (NATH), or dying within the iteration that made them with nothing keeping them. Objects a small factory makes and returns (`of(…)`, an `iterator()` that wraps another) are reported at the call that asks for them. Not a lambda's closure or a collection never filled that only reach methods small enough to inline: HotSpot's escape analysis removes those."),
        cost: "An allocation per call unless the JIT inlines every use (often not across a megamorphic call or a large method); the collector clears them all.",
        fix: "Use the values directly, or build this object once outside the loop: each one lives only for the call that made it.",
        before: "MinMax m = minMax(values);\nrange += m.max() - m.min();",
        after: "range += max(values) - min(values);  // or fill one reused MinMax",
    },
    Entry {
        pattern: Pattern::StreamPerCall,
        title: "A stream pipeline per call",
        what: "A stream pipeline (or an explicit iterator object) is built on every call of a small, hot method.",
        evidence: Some("Stream pipeline or iterator objects (not a for-each loop's iterator, which HotSpot removes) made on a line that runs many times and never stored."),
        cost: "A pipeline is several objects (the source spliterator, one stage per operation, the lambdas' captures) and megamorphic calls that HotSpot rarely inlines through.",
        fix: "Use a plain loop here: an iterator or stream pipeline is built on every call.",
        before: "return items.stream().mapToLong(Item::price).sum();",
        after: "long sum = 0;\nfor (Item i : items) sum += i.price();\nreturn sum;",
    },
    Entry {
        pattern: Pattern::RegexPerCall,
        title: "A regular expression compiled per call",
        what: "`String.split`, `replaceAll`, `matches` or `Pattern.compile` compiles the same regular expression again on every call.",
        evidence: Some("A call path whose calls spend a fifth or more of their instructions in `Pattern`'s constructor, made many times."),
        cost: "Compiling a pattern parses it and builds its node graph (dozens of objects); HotSpot has no cache for it (only a one-character `split` takes a fast path).",
        fix: "Compile the pattern once into a `static final Pattern` and reuse it.",
        before: "String[] parts = line.split(\"\\\\s*,\\\\s*\");",
        after: "private static final Pattern COMMA = Pattern.compile(\"\\\\s*,\\\\s*\");\nString[] parts = COMMA.split(line);",
    },
    Entry {
        pattern: Pattern::FormatPerCall,
        title: "A format string parsed per call",
        what: "`String.format` or `printf` runs in a hot loop: the format string is parsed again and a `Formatter` built on every call.",
        evidence: Some("A repeated call path whose cost is mostly in `java.util.Formatter`."),
        cost: "`String.format` parses its format with a regular expression-like scanner, allocates a `Formatter`, a `StringBuilder` and a specifier per conversion; plain concatenation is compiled by HotSpot to a presized builder.",
        fix: "Build the string with concatenation or a reused `StringBuilder` instead of `String.format` in this loop.",
        before: "for (Row r : rows) out.add(String.format(\"%s=%d\", r.key(), r.value()));",
        after: "for (Row r : rows) out.add(r.key() + \"=\" + r.value());",
    },
    Entry {
        pattern: Pattern::UnusedMessageString,
        title: "A string built eagerly for a message that is never used",
        what: "A log or error message is concatenated or formatted on every call, and then not logged (the level is off) or not used.",
        evidence: Some("A call path whose cost is building a string (concatenation, `String.valueOf`, `String.format`) on a line whose strings are (almost) never used afterwards."),
        cost: "The whole formatting runs (number conversion, allocation of the builder and the string) for a result that is dropped; HotSpot cannot prove the string unused once it is passed to a logger.",
        fix: "Build this string only when it is used (inside the branch that needs it, or lazily with a Supplier).",
        before: "log.debug(\"order \" + order + \" priced at \" + price);",
        after: "if (log.isDebugEnabled()) log.debug(\"order \" + order + \" priced at \" + price);",
    },
    Entry {
        pattern: Pattern::NeverUsedObjects,
        title: "Objects created and never used",
        what: "Objects are made on every run of a line and nothing ever reads them: no field read, no call on them.",
        evidence: Some("An allocation site of the user's line whose objects are never used (no field read or written, no call on them) after they are made."),
        cost: "Each is an allocation and, when stored, a reference the collector keeps tracing.",
        fix: "Stop creating these objects: nothing ever reads them (create them only when needed).",
        before: "Audit audit = new Audit(user, action);  // never read\nperform(action);",
        after: "perform(action);",
    },
    Entry {
        pattern: Pattern::EagerCreation,
        title: "Objects created eagerly, rarely used",
        what: "Objects are made up front for every case although only a few of them are ever used.",
        evidence: Some("An allocation site of the user's line fewer than a tenth of whose objects are ever used."),
        cost: "Every object is allocated and initialised; only the few used ones earn it.",
        fix: "Create these objects only when needed: most of them are never used.",
        before: "Options o = new Options(defaults());  // per request\nif (request.hasOverrides()) o.apply(request);",
        after: "Options o = request.hasOverrides() ? new Options(defaults()).apply(request) : DEFAULTS;",
    },
    Entry {
        pattern: Pattern::WrittenNeverRead,
        title: "A field or collection written and never read",
        what: "A collection is filled (or a field set) on every run, and nothing ever reads what was stored.",
        evidence: Some("A structure the user's code fills whose stored references are never read back from the heap, or a `java.util` collection that is filled and never read."),
        cost: "The stores, the growth of the collection, its nodes and the values kept alive by it — all for nothing read.",
        fix: "Stop filling this collection (or fill it only when it is needed): nothing reads it.",
        before: "history.computeIfAbsent(sku, s -> new ArrayList<>()).add(price);  // never read",
        after: "// history removed",
    },
    Entry {
        pattern: Pattern::CollectionForSize,
        title: "A collection built only for its size or emptiness",
        what: "A collection is filled and then only asked `size()` or `isEmpty()`.",
        evidence: Some("A `java.util` collection made by the user's line whose only reads are `size`, `isEmpty` (no element is read)."),
        cost: "Every element is stored (with its node or array slot, and its growth) to produce one number.",
        fix: "Count or test instead of collecting (`anyMatch`, `count()`, a counter): this collection is only asked for its size.",
        before: "List<Order> late = new ArrayList<>();\nfor (Order o : orders) if (o.late()) late.add(o);\nreturn late.size();",
        after: "int late = 0;\nfor (Order o : orders) if (o.late()) late++;\nreturn late;",
    },
    Entry {
        pattern: Pattern::UnreadCostlyFields,
        title: "Costly fields never read",
        what: "An object's fields are computed with real work when it is made, and never read (by any caller, or by most callers).",
        evidence: Some("Fields of a user class that no code reads, whose values cost instructions to compute (thin slicing from the field back to its inputs)."),
        cost: "The computation runs for every object made; its result is stored and dropped with the object.",
        fix: "Drop the fields nothing reads, or compute them only when asked for.",
        before: "Stats s = new Stats(values);  // computes mean, median, stddev\nreturn s.mean();",
        after: "return mean(values);  // median and stddev computed lazily, when asked",
    },
    Entry {
        pattern: Pattern::WholeInputDecoded,
        title: "A whole input decoded to read one part",
        what: "A whole document, file or message is parsed into a structure of which only a small part is read.",
        evidence: Some("A data structure whose construction costs at least four times the benefit of what is read from it (cost-benefit analysis: n-RAC over n-RAB), above a minimum cost."),
        cost: "Parsing and allocating the unread part costs as much on HotSpot as the read part; it is work for data no code uses.",
        fix: "Compute only what is read: decode the part the code needs, lazily or with a streaming reader.",
        before: "Map<String, String> all = parseHeaders(raw);\nreturn all.get(\"Content-Type\");",
        after: "return findHeader(raw, \"Content-Type\");",
    },
    Entry {
        pattern: Pattern::DroppedResult,
        title: "Work whose result is dropped",
        what: "A computation builds a structure or value and nothing reads the result.",
        evidence: Some("A data structure whose construction costs instructions and from which nothing is read at all (its benefit is zero)."),
        cost: "All the work of building the result, for nothing.",
        fix: "Stop computing this result, or compute it only where it is used.",
        before: "summary.rebuildIndex();  // the index is never queried",
        after: "// call removed",
    },
    Entry {
        pattern: Pattern::Leak,
        title: "Objects that pile up and are never read again",
        what: "Objects are added to a long-lived structure on every run and kept to the end, and nothing reads them after they are stored: a memory leak.",
        evidence: Some("A site's objects live to the end of the run, their number keeps growing, and their references are never read back from the heap after they are stored."),
        cost: "The live heap grows with the run: every full collection traces them, and a long run ends in `OutOfMemoryError`.",
        fix: "Stop keeping every one of these objects: they accumulate until the end (keep a running summary, or drop them once used).",
        before: "listeners.add(event -> audit(event));  // added per request, never removed",
        after: "listeners.add(auditListener);  // once, at start-up",
    },
    Entry {
        pattern: Pattern::MixedLifetimeFactory,
        title: "One factory, kept by one caller and thrown away by another",
        what: "A factory's objects are kept by one caller, while another makes them only to read a value or two and drops them at once.",
        evidence: Some("One allocation site, the program's own `new`, whose objects are kept (they live through young collections) in some calling contexts while, in others, most of them die before the next young collection without ever being stored in a field, array or collection (lifetime analysis per calling context, with the stores the value-flow analyses see). Callers that merely keep the objects for different spans are no evidence."),
        cost: "HotSpot places every object alike whatever its site (it has no per-site pretenuring), so the kept objects cost the same however the factory is split. The throw-away ones are the waste: an allocation and its initialisation per call, which escape analysis removes only when the factory is inlined and the object never escapes into a call it cannot see.",
        fix: "Give the callers that only read these objects the values directly, and keep the factory for the callers that keep them.",
        before: "if (Money.of(cents).sameAs(entry.amount)) matched++;  // Money.of also builds the ledger",
        after: "if (cents == entry.amount.cents) matched++;",
    },
    Entry {
        pattern: Pattern::MidLifeObjects,
        title: "Objects that outlive a young collection only to die soon after",
        what: "Objects live just long enough to survive a young collection and die soon after: the collector copies them, maybe promotes them, for nothing.",
        evidence: Some("A site most of whose objects live through more allocation than a HotSpot-sized young generation (32 MB by default, `--hotspot-young-bytes`) and die before the end of the run. Outliving the profiler's own small young generation is not enough: data used and dropped within a few MB of allocation (a parsed document) dies young on HotSpot."),
        cost: "Each surviving object is copied by the young collector (and promoted to the old generation if it survives a few), which costs far more than an allocation.",
        fix: "Shorten these objects' lives (drop references sooner) or reuse them.",
        before: "List<Batch> pending = …;  // batches kept until the whole file is read",
        after: "// process each batch as soon as it is complete",
    },
    Entry {
        pattern: Pattern::QuadraticScan,
        title: "A linear scan per iteration",
        what: "Inside a loop, a call scans a whole collection (`contains`, `indexOf`, a search loop) on every iteration: the loop is quadratic.",
        evidence: Some("A call made many times per run of its caller on the same object, each call doing work that grows with the loop."),
        cost: "n iterations × n elements; a hash set or an index makes each lookup constant.",
        fix: "Index what the loop searches (a `HashSet` or `HashMap` built once) instead of scanning it on every iteration.",
        before: "for (Order o : orders) if (blocked.contains(o.customer())) …  // blocked is a List",
        after: "Set<Customer> blockedSet = new HashSet<>(blocked);\nfor (Order o : orders) if (blockedSet.contains(o.customer())) …",
    },
    Entry {
        pattern: Pattern::RepeatedCall,
        title: "A call repeated with equal arguments",
        what: "The same computation runs again and again on equal inputs, each time producing the same result.",
        evidence: Some("A call made many times with only a few distinct argument lists, arguments compared by value (equal strings and boxes are equal; an object whose contents changed between calls is a different argument), and no call changing its receiver."),
        cost: "All of the call's work, for a result the program already had.",
        fix: "Compute it once and reuse the result (hoist it out of the loop, or cache it by its arguments).",
        before: "for (Item i : items) total += i.price() * taxRate(region);",
        after: "double rate = taxRate(region);\nfor (Item i : items) total += i.price() * rate;",
    },
    Entry {
        pattern: Pattern::PreparedFormPerItem,
        title: "A costly library call per item where a prepared form exists",
        what: "A library call with a costly set-up (`MessageDigest.getInstance`, `DateTimeFormatter.ofPattern`, `new SimpleDateFormat`, `DocumentBuilderFactory.newInstance`) runs per item where one prepared instance could serve them all.",
        evidence: Some("A call path repeating work (the same arguments, or a scan per iteration) that goes through one of the known set-up calls: `MessageDigest`, `Cipher` or `Mac.getInstance`, `DateTimeFormatter.ofPattern`, `new SimpleDateFormat`, `new DecimalFormat`, `NumberFormat.getInstance`, `DocumentBuilderFactory.newInstance`."),
        cost: "The set-up (provider lookup, pattern parsing, factory discovery) dominates each call; the prepared form pays it once.",
        fix: "Prepare the library object once (a field or a `static final`) and reuse it for every item.",
        before: "for (Row r : rows) out.add(DateTimeFormatter.ofPattern(\"yyyy-MM-dd\").format(r.date()));",
        after: "static final DateTimeFormatter DAY = DateTimeFormatter.ofPattern(\"yyyy-MM-dd\");\nfor (Row r : rows) out.add(DAY.format(r.date()));",
    },
    Entry {
        pattern: Pattern::StoredTwice,
        title: "The same structure stored twice and read one way",
        what: "The same data is kept in two structures (a list and a map of the same items) and only one of them is ever read.",
        evidence: None,
        cost: "Twice the stores, nodes and memory for data read through one structure only.",
        fix: "Keep the structure the code reads, and drop the other.",
        before: "all.add(order);\nbyId.put(order.id(), order);  // only byId is read",
        after: "byId.put(order.id(), order);",
    },
];

/// The catalog as Markdown: `docs/patterns.md`.
pub fn markdown() -> String {
    let recognised = CATALOG.iter().filter(|e| e.evidence.is_some()).count();
    let mut md = String::from("# Bloat patterns\n\n");
    md.push_str(
        "<!-- Generated from profiler/src/patterns.rs by `BLOATLENS_BLESS=1 cargo test -p bloatlens-profiler --lib patterns`; edit the catalog there. -->\n\n",
    );
    md.push_str(&format!(
        "Every finding the editor shows is an instance of one of these {} patterns: its `pattern` in the JSON \
         report, its rule in SARIF, its code in the editor. {} are recognised from the analyses' evidence; the \
         others are named here so that a reader knows them, and no finding claims them yet. A raw analysis \
         result that fits no pattern stays in the JSON under its `kind`, hidden (`hidden`: \"fits no pattern\"), \
         and is not shown in the editor.\n\n",
        CATALOG.len(),
        recognised
    ));
    md.push_str("| pattern | id | recognised |\n|---|---|---|\n");
    for e in CATALOG {
        md.push_str(&format!(
            "| [{}](#{}) | `{}` | {} |\n",
            e.title,
            e.pattern.id(),
            e.pattern.id(),
            if e.evidence.is_some() { "yes" } else { "not yet" }
        ));
    }
    for e in CATALOG {
        md.push_str(&format!(
            "\n<a id=\"{}\"></a>\n## {}\n\n`{}`\n\n{}\n\n",
            e.pattern.id(),
            e.title,
            e.pattern.id(),
            e.what
        ));
        match e.evidence {
            Some(ev) => md.push_str(&format!("**Evidence.** {ev}\n\n")),
            None => md.push_str("**Evidence.** Not recognised yet: no finding names this pattern.\n\n"),
        }
        md.push_str(&format!("**Why it costs on HotSpot.** {}\n\n**Fix.** {}\n\n", e.cost, e.fix));
        md.push_str(&format!("Before:\n\n```java\n{}\n```\n\nAfter:\n\n```java\n{}\n```\n", e.before, e.after));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_has_one_entry_and_a_distinct_id() {
        assert_eq!(CATALOG.len(), Pattern::ALL.len());
        for p in Pattern::ALL {
            assert_eq!(CATALOG.iter().filter(|e| e.pattern == p).count(), 1, "{p}");
            assert_eq!(Pattern::parse(p.id()), Some(p));
            assert_eq!(serde_json::to_value(p).unwrap(), p.id(), "the JSON name is the id");
            let e = p.entry();
            assert!(e.fix.ends_with('.') && !e.before.is_empty() && !e.after.is_empty(), "{p}");
        }
    }

    /// `docs/patterns.md` is the catalog; `BLOATLENS_BLESS=1` rewrites it.
    #[test]
    fn the_catalog_page_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/patterns.md");
        let md = markdown();
        if std::env::var_os("BLOATLENS_BLESS").is_some() {
            std::fs::write(&path, &md).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == md,
            "docs/patterns.md is out of date: run BLOATLENS_BLESS=1 cargo test -p bloatlens-profiler --lib patterns"
        );
    }
}

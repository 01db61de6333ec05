//! The profile interface of `seeds/bottlenecks.txt` (§2.1–2.2) over calling-context trees, its
//! suggesters (HighCum, HighBase) and zooming (§2.3), and the automatic search for bottlenecks
//! built on them.
//!
//! A *summary* is a call sequence (method labels, outermost first); it stands for every path in
//! the tree labelled by that sequence, from every node that roots it. Its **base** is the cost of
//! the nodes along those paths; its **cum** adds everything below their final nodes, counting a
//! node once even when recursion puts it both on a path and below a final node. `total_*` do the
//! same for a set of summaries, so overlapping summaries are not counted twice. The comparative
//! profile subtracts a second tree's figures from the first's (both may go negative).

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

/// A measured calling-context tree, as the report carries it. Node 0 is a synthetic root.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CallTree {
    /// Method labels (`java.util.HashMap.get(Ljava/lang/Object;)Ljava/lang/Object;`).
    pub methods: Vec<String>,
    pub nodes: Vec<CallNode>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CallNode {
    pub parent: u32,
    /// Index into `methods` (`u32::MAX` for the root).
    pub method: u32,
    /// Base costs: what ran in this context's own frames.
    pub instructions: u64,
    pub bytes: u64,
    pub copies: u64,
}

/// Which cost a query measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    #[default]
    Instructions,
    Bytes,
    Copies,
}

impl Metric {
    pub fn parse(s: &str) -> Result<Metric, String> {
        match s {
            "instructions" => Ok(Metric::Instructions),
            "bytes" => Ok(Metric::Bytes),
            "copies" => Ok(Metric::Copies),
            other => Err(format!("unknown metric `{other}` (known: instructions, bytes, copies)")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Metric::Instructions => "instructions",
            Metric::Bytes => "bytes",
            Metric::Copies => "copies",
        }
    }

    fn of(self, n: &CallNode) -> i64 {
        (match self {
            Metric::Instructions => n.instructions,
            Metric::Bytes => n.bytes,
            Metric::Copies => n.copies,
        }) as i64
    }
}

/// A method label, shared by the trees a profile reads.
pub type Label = u32;

/// Method names to labels, shared by the two trees of a comparison.
#[derive(Debug, Default)]
pub struct Labels {
    ids: FxHashMap<String, Label>,
    pub names: Vec<String>,
}

impl Labels {
    pub fn intern(&mut self, name: &str) -> Label {
        if let Some(&l) = self.ids.get(name) {
            return l;
        }
        let l = self.names.len() as Label;
        self.ids.insert(name.to_string(), l);
        self.names.push(name.to_string());
        l
    }

    pub fn get(&self, name: &str) -> Option<Label> {
        self.ids.get(name).copied()
    }
}

/// A call sequence, outermost call first.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Summary {
    pub calls: Vec<Label>,
}

/// The paper's Fig. 3, with extensions returned as summaries' labels.
pub trait ProfileInterface {
    fn initial_summaries(&self) -> Vec<Summary>;
    fn top_extensions(&self, s: &Summary) -> Vec<Label>;
    fn bottom_extensions(&self, s: &Summary) -> Vec<Label>;
    fn base_of(&self, s: &Summary) -> i64 {
        self.total_base_of(std::slice::from_ref(s))
    }
    fn cum_of(&self, s: &Summary) -> i64 {
        self.total_cum_of(std::slice::from_ref(s))
    }
    fn total_base_of(&self, s: &[Summary]) -> i64;
    fn total_cum_of(&self, s: &[Summary]) -> i64;

    fn extend_top(&self, s: &Summary, m: Label) -> Summary {
        let mut calls = vec![m];
        calls.extend_from_slice(&s.calls);
        Summary { calls }
    }
    fn extend_bottom(&self, s: &Summary, m: Label) -> Summary {
        let mut calls = s.calls.clone();
        calls.push(m);
        Summary { calls }
    }
    fn trim_top(&self, s: &Summary) -> Option<Summary> {
        (s.calls.len() > 1).then(|| Summary { calls: s.calls[1..].to_vec() })
    }
    fn trim_bottom(&self, s: &Summary) -> Option<Summary> {
        (s.calls.len() > 1).then(|| Summary { calls: s.calls[..s.calls.len() - 1].to_vec() })
    }
    /// How much of `s`'s cum the summaries `others` also cover (the paper's `cum_ovl`).
    fn cum_overlap(&self, s: &Summary, others: &[Summary]) -> i64 {
        let mut all = others.to_vec();
        all.push(s.clone());
        self.cum_of(s) + self.total_cum_of(others) - self.total_cum_of(&all)
    }
}

/// One tree under the profile interface.
pub struct TreeProfile {
    parent: Vec<u32>,
    label: Vec<Label>,
    children: Vec<Vec<u32>>,
    by_label: FxHashMap<Label, Vec<u32>>,
    cost: Vec<i64>,
    /// Cost of each node and its descendants.
    cum: Vec<i64>,
}

/// The nodes a set of summaries covers.
struct Cover {
    along: FxHashSet<u32>,
    finals: FxHashSet<u32>,
}

impl TreeProfile {
    pub fn new(tree: &CallTree, metric: Metric, labels: &mut Labels) -> Self {
        let n = tree.nodes.len();
        let label_of: Vec<Label> = tree.methods.iter().map(|m| labels.intern(m)).collect();
        let mut p = TreeProfile {
            parent: Vec::with_capacity(n),
            label: Vec::with_capacity(n),
            children: vec![Vec::new(); n],
            by_label: FxHashMap::default(),
            cost: Vec::with_capacity(n),
            cum: vec![0; n],
        };
        for (i, node) in tree.nodes.iter().enumerate() {
            let label = label_of.get(node.method as usize).copied().unwrap_or(Label::MAX);
            p.parent.push(if i == 0 { 0 } else { node.parent });
            p.label.push(label);
            p.cost.push(metric.of(node));
            if i != 0 {
                p.children[node.parent as usize].push(i as u32);
                p.by_label.entry(label).or_default().push(i as u32);
            }
        }
        // Parents come before children in a tree built by calls; sum bottom-up in reverse.
        p.cum.clone_from(&p.cost);
        for i in (1..n).rev() {
            let parent = p.parent[i] as usize;
            p.cum[parent] += p.cum[i];
        }
        p
    }

    /// The nodes that root `s` (paths labelled `s.calls` start there).
    pub fn roots(&self, s: &Summary) -> Vec<u32> {
        let Some(first) = s.calls.first() else { return Vec::new() };
        let mut cover = Cover { along: FxHashSet::default(), finals: FxHashSet::default() };
        self.by_label
            .get(first)
            .map(|ns| ns.iter().copied().filter(|&n| self.walk(n, &s.calls[1..], &mut cover)).collect())
            .unwrap_or_default()
    }

    /// Follows `rest` down from `n`, adding complete paths to `cover`; whether one was found.
    fn walk(&self, n: u32, rest: &[Label], cover: &mut Cover) -> bool {
        let Some((&next, tail)) = rest.split_first() else {
            cover.along.insert(n);
            cover.finals.insert(n);
            return true;
        };
        let mut found = false;
        for &c in &self.children[n as usize] {
            if self.label[c as usize] == next {
                found |= self.walk(c, tail, cover);
            }
        }
        if found {
            cover.along.insert(n);
        }
        found
    }

    fn cover(&self, summaries: &[Summary]) -> Cover {
        let mut cover = Cover { along: FxHashSet::default(), finals: FxHashSet::default() };
        for s in summaries {
            let Some(first) = s.calls.first() else { continue };
            for &n in self.by_label.get(first).map(Vec::as_slice).unwrap_or(&[]) {
                self.walk(n, &s.calls[1..], &mut cover);
            }
        }
        cover
    }

    /// Whether a proper ancestor of `n` is in `finals`.
    fn below(&self, mut n: u32, finals: &FxHashSet<u32>) -> bool {
        while n != 0 {
            n = self.parent[n as usize];
            if finals.contains(&n) {
                return true;
            }
        }
        false
    }

    fn extensions(&self, s: &Summary, top: bool) -> Vec<Label> {
        let mut out: Vec<Label> = Vec::new();
        if top {
            for r in self.roots(s) {
                let p = self.parent[r as usize];
                if p != 0 {
                    out.push(self.label[p as usize]);
                }
            }
        } else {
            let cover = self.cover(std::slice::from_ref(s));
            for &f in &cover.finals {
                out.extend(self.children[f as usize].iter().map(|&c| self.label[c as usize]));
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether `n` is an outermost frame (a child of the synthetic root).
    pub fn is_outermost(&self, n: u32) -> bool {
        n != 0 && self.parent[n as usize] == 0
    }

    /// The labels of the path from the outermost frame down to `n`.
    pub fn path_to(&self, mut n: u32) -> Vec<Label> {
        let mut calls = Vec::new();
        while n != 0 {
            calls.push(self.label[n as usize]);
            n = self.parent[n as usize];
        }
        calls.reverse();
        calls
    }

    /// The final node of `s` with the largest cum (the context a finding points at).
    pub fn heaviest_final(&self, s: &Summary) -> Option<u32> {
        let cover = self.cover(std::slice::from_ref(s));
        let heaviest = cover.finals.iter().copied().max_by_key(|&n| (self.cum[n as usize], std::cmp::Reverse(n)))?;
        // The same callee from two call sites of one caller at about the same cost (one lookup
        // made twice in a method) is the same work: the first call site is shown, whatever a few
        // instructions of difference say.
        let h = heaviest as usize;
        cover
            .finals
            .into_iter()
            .filter(|&n| {
                let n = n as usize;
                self.parent[n] == self.parent[h]
                    && self.label[n] == self.label[h]
                    && self.cum[n] * 100 >= self.cum[h] * 99
            })
            .min()
    }

    pub fn total(&self) -> i64 {
        self.cum.first().copied().unwrap_or(0)
    }
}

impl ProfileInterface for TreeProfile {
    fn initial_summaries(&self) -> Vec<Summary> {
        let mut labels: Vec<Label> = self.by_label.keys().copied().collect();
        labels.sort_unstable();
        labels.into_iter().map(|l| Summary { calls: vec![l] }).collect()
    }

    fn top_extensions(&self, s: &Summary) -> Vec<Label> {
        self.extensions(s, true)
    }

    fn bottom_extensions(&self, s: &Summary) -> Vec<Label> {
        self.extensions(s, false)
    }

    fn total_base_of(&self, s: &[Summary]) -> i64 {
        self.cover(s).along.iter().map(|&n| self.cost[n as usize]).sum()
    }

    fn total_cum_of(&self, s: &[Summary]) -> i64 {
        let cover = self.cover(s);
        cover
            .along
            .iter()
            .filter(|n| !self.below(**n, &cover.finals))
            .map(|&n| if cover.finals.contains(&n) { self.cum[n as usize] } else { self.cost[n as usize] })
            .sum()
    }
}

/// Two trees compared: every figure is the first's minus the second's.
pub struct ComparativeProfile {
    pub after: TreeProfile,
    pub before: TreeProfile,
}

impl ProfileInterface for ComparativeProfile {
    fn initial_summaries(&self) -> Vec<Summary> {
        let mut all = self.after.initial_summaries();
        all.extend(self.before.initial_summaries());
        all.sort();
        all.dedup();
        all
    }

    fn top_extensions(&self, s: &Summary) -> Vec<Label> {
        union(self.after.top_extensions(s), self.before.top_extensions(s))
    }

    fn bottom_extensions(&self, s: &Summary) -> Vec<Label> {
        union(self.after.bottom_extensions(s), self.before.bottom_extensions(s))
    }

    fn total_base_of(&self, s: &[Summary]) -> i64 {
        self.after.total_base_of(s) - self.before.total_base_of(s)
    }

    fn total_cum_of(&self, s: &[Summary]) -> i64 {
        self.after.total_cum_of(s) - self.before.total_cum_of(s)
    }
}

fn union(mut a: Vec<Label>, b: Vec<Label>) -> Vec<Label> {
    a.extend(b);
    a.sort_unstable();
    a.dedup();
    a
}

/// Which way zooming extends a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Add callers (a bottom-up search).
    Top,
    /// Add callees (a top-down search).
    Bottom,
}

/// Where zooming stopped: `end` is the last summary it zoomed through (or the start), `nearby`
/// the extensions of `end` that together carry at least the cutoff share of the start's cum
/// (empty when no set of them does, or when `end` has none).
#[derive(Debug, Clone, PartialEq)]
pub struct Zoomed {
    pub end: Summary,
    pub nearby: Vec<Summary>,
}

/// The paper's `Zoom(s, c)`: skips extensions that carry little cost and zooms through one that
/// carries at least `cutoff` of `s`'s cum. (The paper's pseudocode returns ∅ when the last
/// summary zoomed through has no extension; we return that summary as `end`, which is what its
/// worked example shows.)
pub fn zoom<P: ProfileInterface + ?Sized>(p: &P, s: &Summary, cutoff: f64, dir: Direction) -> Zoomed {
    let target = cutoff * p.cum_of(s).unsigned_abs() as f64;
    let mut end = s.clone();
    loop {
        let labels = match dir {
            Direction::Top => p.top_extensions(&end),
            Direction::Bottom => p.bottom_extensions(&end),
        };
        let mut ext: Vec<(i64, Summary)> = labels
            .into_iter()
            .map(|m| match dir {
                Direction::Top => p.extend_top(&end, m),
                Direction::Bottom => p.extend_bottom(&end, m),
            })
            .map(|e| (p.cum_of(&e), e))
            .collect();
        ext.sort_by(|a, b| b.0.unsigned_abs().cmp(&a.0.unsigned_abs()).then(a.1.cmp(&b.1)));
        let mut nearby = Vec::new();
        let mut reached = false;
        for (_, e) in ext {
            nearby.push(e);
            if p.total_cum_of(&nearby).unsigned_abs() as f64 >= target {
                reached = true;
                break;
            }
        }
        if !reached {
            return Zoomed { end, nearby: Vec::new() };
        }
        if nearby.len() == 1 {
            end = nearby.pop().expect("one");
            continue;
        }
        return Zoomed { end, nearby };
    }
}

/// HighCum: length-1 summaries by descending cum (starting points of a top-down search).
pub fn high_cum<P: ProfileInterface + ?Sized>(p: &P) -> Vec<(Summary, i64)> {
    ranked(p, |s| p.cum_of(s))
}

/// HighBase: length-1 summaries by descending base (starting points of a bottom-up search).
pub fn high_base<P: ProfileInterface + ?Sized>(p: &P) -> Vec<(Summary, i64)> {
    ranked(p, |s| p.base_of(s))
}

fn ranked<P: ProfileInterface + ?Sized>(p: &P, key: impl Fn(&Summary) -> i64) -> Vec<(Summary, i64)> {
    let mut v: Vec<(Summary, i64)> = p
        .initial_summaries()
        .into_iter()
        .map(|s| {
            let k = key(&s);
            (s, k)
        })
        .collect();
    v.sort_by(|a, b| b.1.unsigned_abs().cmp(&a.1.unsigned_abs()).then(a.0.cmp(&b.0)));
    v
}

/// Knobs of the automatic search.
#[derive(Debug, Clone, Copy)]
pub struct Search {
    /// Zooming's cutoff ratio (the paper's default: 0.95).
    pub cutoff: f64,
    /// A bottleneck carries at least this share of the total that no other bottleneck covers.
    pub min_share: f64,
    pub max: usize,
}

/// A bottleneck found: its figures, and how much of its cum the other bottlenecks also cover.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub summary: Summary,
    pub base: i64,
    pub cum: i64,
    pub overlap: i64,
}

/// Starting points a search looks at, per suggester.
const SUGGESTIONS: usize = 30;

/// Finds bottleneck call sequences automatically, the way the paper's analyst does:
/// - bottom-up, from HighBase's suggestions (base at least the minimum share): extend at the top, zooming through callers that
///   carry the cost; where the cost splits among callers, follow each that carries at least the
///   minimum share; stop once the sequence reaches a method of the program (`is_user`), which
///   is where a developer can act;
/// - top-down, from HighCum's suggestions that are not the whole run (cum below the cutoff share
///   of the total): extend at the bottom while one callee carries the cost;
/// - then keep candidates greedily, largest cum first, bottom-up ones before top-down ones,
///   while each adds at least `min_share` of the total and at least half its own cum that the
///   kept ones do not already cover.
pub fn find_bottlenecks<P: ProfileInterface + ?Sized>(
    p: &P,
    total: i64,
    is_user: &dyn Fn(Label) -> bool,
    opts: Search,
) -> Vec<Found> {
    let floor = (opts.min_share * total as f64).max(1.0);
    let mut bottom_up: Vec<Summary> = Vec::new();
    for (s, base) in high_base(p).into_iter().take(SUGGESTIONS) {
        if (base as f64) < floor {
            break;
        }
        search_up(p, &s, is_user, opts.cutoff, floor, 0, &mut bottom_up);
    }
    let mut top_down: Vec<Summary> = Vec::new();
    for (s, cum) in high_cum(p).into_iter().take(SUGGESTIONS) {
        let cum = cum as f64;
        if cum < floor || cum >= opts.cutoff * total as f64 {
            continue;
        }
        top_down.push(zoom(p, &s, opts.cutoff, Direction::Bottom).end);
    }
    let mut kept: Vec<Summary> = Vec::new();
    for mut group in [bottom_up, top_down] {
        group.sort();
        group.dedup();
        // Largest cum first; of equal cums, the one whose cost lies along it (more specific).
        let mut by_cum: Vec<(i64, i64, Summary)> =
            group.into_iter().map(|s| (p.cum_of(&s), p.base_of(&s), s)).collect();
        by_cum.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        for (cum, _, s) in by_cum {
            if kept.len() >= opts.max || kept.contains(&s) {
                continue;
            }
            let new = cum - p.cum_overlap(&s, &kept);
            if new as f64 >= floor && new * 2 >= cum {
                kept.push(s);
            }
        }
    }
    // One kept early may be covered by later ones (a top-down sequence around it): drop, smallest
    // first, those whose cost the others cover almost entirely.
    let others = |kept: &[Summary], i: usize| -> Vec<Summary> {
        kept.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, o)| o.clone()).collect()
    };
    loop {
        let covered = (0..kept.len())
            .filter(|&i| p.cum_overlap(&kept[i], &others(&kept, i)) as f64 >= 0.9 * p.cum_of(&kept[i]) as f64)
            .min_by_key(|&i| p.cum_of(&kept[i]));
        match covered {
            Some(i) => {
                kept.remove(i);
            }
            None => break,
        }
    }
    (0..kept.len())
        .map(|i| {
            let s = &kept[i];
            Found {
                summary: s.clone(),
                base: p.base_of(s),
                cum: p.cum_of(s),
                overlap: p.cum_overlap(s, &others(&kept, i)),
            }
        })
        .collect()
}

/// Extends `s` at the top until it reaches user code (see [`find_bottlenecks`]).
fn search_up<P: ProfileInterface + ?Sized>(
    p: &P,
    s: &Summary,
    is_user: &dyn Fn(Label) -> bool,
    cutoff: f64,
    floor: f64,
    depth: usize,
    out: &mut Vec<Summary>,
) {
    let z = zoom(p, s, cutoff, Direction::Top);
    let reached_user = z.end.calls.iter().any(|&l| is_user(l));
    let callers: Vec<Summary> = if reached_user || depth >= 16 {
        Vec::new()
    } else {
        let labels = p.top_extensions(&z.end);
        labels.into_iter().map(|m| p.extend_top(&z.end, m)).filter(|e| p.cum_of(e) as f64 >= floor).collect()
    };
    if callers.is_empty() {
        out.push(z.end);
        return;
    }
    for c in callers {
        search_up(p, &c, is_user, cutoff, floor, depth + 1, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree from (parent, method, cost) rows; row i is node i + 1, parent 0 is the root.
    fn tree(rows: &[(u32, &str, u64)]) -> CallTree {
        let mut methods: Vec<String> = Vec::new();
        let mut nodes = vec![CallNode { parent: 0, method: u32::MAX, instructions: 0, bytes: 0, copies: 0 }];
        for &(parent, m, cost) in rows {
            let method = match methods.iter().position(|x| x == m) {
                Some(i) => i as u32,
                None => {
                    methods.push(m.to_string());
                    methods.len() as u32 - 1
                }
            };
            nodes.push(CallNode { parent, method, instructions: cost, bytes: 0, copies: 0 });
        }
        CallTree { methods, nodes }
    }

    fn seq(labels: &Labels, names: &str) -> Summary {
        Summary { calls: names.split_whitespace().map(|n| labels.get(n).expect(n)).collect() }
    }

    /// The tree of the paper's Fig. 2, rebuilt from the figures its text prints: `a` is the
    /// root method; `[c]` has two roots (under `b` and under `a`), top extensions `a` and `b`,
    /// bottom extensions `d` and `e`; base `[c]` = 15, cum `[c]` = 97; for `[a]` and `[c]`
    /// together, total base 16 and total cum 100.
    fn figure_2() -> (TreeProfile, Labels) {
        let t = tree(&[(0, "a", 1), (1, "b", 2), (2, "c", 10), (3, "d", 80), (1, "c", 5), (5, "e", 2)]);
        let mut labels = Labels::default();
        (TreeProfile::new(&t, Metric::Instructions, &mut labels), labels)
    }

    #[test]
    fn the_papers_figure_2_numbers() {
        let (p, l) = figure_2();
        let c = seq(&l, "c");
        assert_eq!(p.initial_summaries().len(), 5);
        assert_eq!(p.roots(&c).len(), 2);
        assert_eq!(p.roots(&seq(&l, "c d")).len(), 1);
        let names = |v: Vec<Label>| v.into_iter().map(|x| l.names[x as usize].clone()).collect::<Vec<_>>();
        assert_eq!(names(p.top_extensions(&c)), ["a", "b"]);
        assert_eq!(names(p.bottom_extensions(&c)), ["d", "e"]);
        assert_eq!(p.base_of(&c), 15);
        assert_eq!(p.cum_of(&c), 97);
        let both = [seq(&l, "a"), c.clone()];
        assert_eq!(p.total_base_of(&both), 16);
        assert_eq!(p.total_cum_of(&both), 100, "overlapping measurements count once");
        assert_eq!(p.cum_overlap(&c, &[seq(&l, "a")]), 97, "everything under [c] is under [a]");
        assert_eq!(p.trim_top(&seq(&l, "b c d")), Some(seq(&l, "c d")));
        assert_eq!(p.trim_bottom(&seq(&l, "b c d")), Some(seq(&l, "b c")));
        assert_eq!(p.trim_top(&c), None);
    }

    #[test]
    fn zooming_goes_through_the_extension_that_carries_the_cost() {
        let (p, l) = figure_2();
        // The paper: from [c d], zooming shows [a b c d] instead of [b c d].
        let z = zoom(&p, &seq(&l, "c d"), 0.95, Direction::Top);
        assert_eq!(z.end, seq(&l, "a b c d"));
        assert!(z.nearby.is_empty());
        // From [c], callers a (5 + 2) and b (10 + 80) are both needed to reach 95% of 97.
        let z = zoom(&p, &seq(&l, "c"), 0.95, Direction::Top);
        assert_eq!(z.end, seq(&l, "c"));
        assert_eq!(z.nearby, vec![seq(&l, "b c"), seq(&l, "a c")]);
        // A lower cutoff zooms through b alone.
        assert_eq!(zoom(&p, &seq(&l, "c"), 0.9, Direction::Top).end, seq(&l, "a b c"));
        // Top-down from [b]: c carries everything, then d almost everything.
        assert_eq!(zoom(&p, &seq(&l, "b"), 0.85, Direction::Bottom).end, seq(&l, "b c d"));
    }

    #[test]
    fn recursion_counts_a_node_once() {
        // main → f → g → f → g: the inner f is along [f g] and below its outer final g.
        let t = tree(&[(0, "main", 1), (1, "f", 10), (2, "g", 100), (3, "f", 1000), (4, "g", 10000)]);
        let mut l = Labels::default();
        let p = TreeProfile::new(&t, Metric::Instructions, &mut l);
        let fg = seq(&l, "f g");
        assert_eq!(p.roots(&fg).len(), 2);
        assert_eq!(p.base_of(&fg), 11110, "every node along a path, once");
        assert_eq!(p.cum_of(&fg), 11110, "the inner f and g are below the outer g: not counted again");
        assert_eq!(p.cum_of(&seq(&l, "g")), 11100, "the inner g is below the outer: counted once");
        assert_eq!(p.total_cum_of(&[fg.clone(), seq(&l, "g")]), 11110);
        assert_eq!(p.cum_overlap(&seq(&l, "g"), &[fg]), 11100);
    }

    #[test]
    fn comparative_figures_may_go_negative() {
        let mut l = Labels::default();
        let before = tree(&[(0, "main", 1), (1, "parse", 50), (1, "render", 10)]);
        let after = tree(&[(0, "main", 1), (1, "parse", 20), (1, "render", 90), (3, "escape", 40)]);
        let cmp = ComparativeProfile {
            after: TreeProfile::new(&after, Metric::Instructions, &mut l),
            before: TreeProfile::new(&before, Metric::Instructions, &mut l),
        };
        assert_eq!(cmp.cum_of(&seq(&l, "parse")), -30);
        assert_eq!(cmp.cum_of(&seq(&l, "render")), 120);
        assert_eq!(cmp.base_of(&seq(&l, "render")), 80);
        assert_eq!(cmp.cum_of(&seq(&l, "main render escape")), 40 + 90 + 1);
        assert_eq!(cmp.initial_summaries().len(), 4, "escape exists only after");
        let top = high_cum(&cmp);
        assert_eq!(top[0].0, seq(&l, "render"), "ranked by the size of the change: {top:?}");
    }

    #[test]
    fn the_search_finds_the_hot_paths_and_their_overlap() {
        // main → handle (user) → check → JDK's getStack (the hot leaf) and main → report (user) → format.
        let t = tree(&[
            (0, "main", 10),
            (1, "handle", 40),
            (2, "check", 30),
            (3, "getStack", 600),
            (1, "report", 20),
            (5, "format", 250),
            (1, "log", 50),
        ]);
        let mut l = Labels::default();
        let p = TreeProfile::new(&t, Metric::Instructions, &mut l);
        let user: FxHashSet<Label> = ["main", "handle", "report", "log"].iter().map(|n| l.get(n).unwrap()).collect();
        let found =
            find_bottlenecks(&p, p.total(), &|x| user.contains(&x), Search { cutoff: 0.95, min_share: 0.05, max: 10 });
        let calls: Vec<Summary> = found.iter().map(|f| f.summary.clone()).collect();
        assert_eq!(calls[0], seq(&l, "main handle check getStack"), "{found:?}");
        assert_eq!(calls[1], seq(&l, "main report format"));
        assert_eq!(found[0].cum, 10 + 40 + 30 + 600);
        assert_eq!(found[0].overlap, 10, "the two share only main's own cost");
        assert!(calls.iter().all(|c| c.calls.len() > 1), "no bare method: {found:?}");
    }
}

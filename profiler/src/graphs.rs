//! The analyses' graphs as they stand when the run ends — the copy graph, the reference-propagation
//! graph and the calling-context tree — as `petgraph` graphs with source names and figures, and
//! their Graphviz DOT: a finding's part of a graph, or a whole graph summarised to its heaviest
//! edges. The interpreter keeps its flat tables while the program runs; these are built after.

use crate::analysis::bottleneck::short_name;
use crate::analysis::calltree::CallTree;
use crate::analysis::words;
use crate::report::{Finding, Kind};
use petgraph::dot::{Config, Dot};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use std::collections::HashSet;
use std::fmt;

/// A node: what it stands for in the source's words, its figures, and the analysis's own id for
/// it (a copy-graph node, an allocation site, a calling context) that findings name it by.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphNode {
    pub name: String,
    pub figures: String,
    /// In the user's code (drawn bold), else the JDK's or a library's.
    pub user: bool,
    pub id: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GraphEdge {
    pub label: String,
    /// What the edge carries (copies, references, cost): its drawn width.
    pub weight: u64,
}

impl fmt::Display for GraphNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.figures.is_empty() {
            true => write!(f, "{}", self.name),
            false => write!(f, "{}\n{}", self.name, self.figures),
        }
    }
}

impl fmt::Display for GraphEdge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

pub type Graph = DiGraph<GraphNode, GraphEdge>;

/// The graphs a profiled run kept (each `None` when its analysis was off).
#[derive(Debug, Clone, Default)]
pub struct Graphs {
    pub copy: Option<Graph>,
    pub reference: Option<Graph>,
    pub calls: Option<Graph>,
}

/// Which graph `--graph` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Copy,
    Reference,
    Calls,
}

impl Which {
    pub fn parse(name: &str) -> Option<Which> {
        Some(match name {
            "copy" => Which::Copy,
            "reference" | "refprop" => Which::Reference,
            "calls" | "cct" => Which::Calls,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Which::Copy => "copy graph",
            Which::Reference => "reference-propagation graph",
            Which::Calls => "calling-context tree",
        }
    }

    /// The graph a finding of `kind` lives in.
    pub fn of_kind(kind: Kind) -> Option<Which> {
        match kind {
            Kind::CopyChain | Kind::Clone => Some(Which::Copy),
            Kind::Nath | Kind::MostlyNath | Kind::NeverUsed | Kind::RarelyUsed | Kind::WriteReadImbalance => {
                Some(Which::Reference)
            }
            Kind::Bottleneck => Some(Which::Calls),
            Kind::LowUtility | Kind::Lifetime => None,
        }
    }
}

impl Graphs {
    pub fn get(&self, which: Which) -> Result<&Graph, String> {
        let g = match which {
            Which::Copy => &self.copy,
            Which::Reference => &self.reference,
            Which::Calls => &self.calls,
        };
        g.as_ref().ok_or_else(|| format!("the run has no {} (its analysis was off)", which.name()))
    }
}

/// Edges kept in a summarised whole graph.
pub const SUMMARY_EDGES: usize = 60;

/// The whole graph, summarised to its `max_edges` heaviest edges and their ends, as DOT.
pub fn whole_dot(graphs: &Graphs, which: Which, max_edges: usize) -> Result<String, String> {
    let g = graphs.get(which)?;
    let mut edges: Vec<_> = g.edge_references().collect();
    edges.sort_by_key(|e| std::cmp::Reverse(e.weight().weight));
    let keep: HashSet<NodeIndex> = edges.iter().take(max_edges).flat_map(|e| [e.source(), e.target()]).collect();
    let kept: HashSet<_> = edges.iter().take(max_edges).map(|e| e.id()).collect();
    let sub = g.filter_map(|n, w| keep.contains(&n).then(|| w.clone()), |e, w| kept.contains(&e).then(|| w.clone()));
    Ok(to_dot(&sub, &format!("{}, its {} heaviest edges", which.name(), max_edges), &HashSet::new()))
}

/// The part of its graph a finding is about — the nodes it names (`evidence.graph_nodes`: a copy
/// chain's hops, a bottleneck's calls, an allocation site) and their neighbours — as DOT, with the
/// finding's own nodes highlighted.
pub fn finding_dot(graphs: &Graphs, f: &Finding) -> Result<String, String> {
    let which = Which::of_kind(f.kind()).ok_or_else(|| {
        format!("a {} finding has no graph (copy chains, NATH and usage findings, bottlenecks do)", f.kind())
    })?;
    let g = graphs.get(which)?;
    // Its own nodes, and those of the findings merged into it (a chain per field copied).
    let merged = f.evidence.also().iter().map(|a| &a.evidence);
    let ids: HashSet<u64> = std::iter::once(&f.evidence).chain(merged).flat_map(|e| e.graph_nodes()).copied().collect();
    let own: HashSet<NodeIndex> = g.node_indices().filter(|&n| g[n].id.is_some_and(|id| ids.contains(&id))).collect();
    if own.is_empty() {
        return Err(format!("the {} does not hold this finding's nodes", which.name()));
    }
    // The finding's nodes and the ones next to them; on a tree, the path and its children.
    let mut keep = own.clone();
    for &n in &own {
        keep.extend(g.neighbors_undirected(n));
    }
    let sub = g.filter_map(|n, w| keep.contains(&n).then(|| w.clone()), |_, w| Some(w.clone()));
    Ok(to_dot(&sub, &finding_title(g, f, &own), &ids))
}

/// A drawn finding's title: its kind and message; for a call path, first the figure of the one
/// context drawn (the message's figure sums every context that ends in the same calls: the
/// same calls made from several call sites are several contexts of the tree).
fn finding_title(g: &Graph, f: &Finding, own: &HashSet<NodeIndex>) -> String {
    let label = f.kind().label();
    // The path's deepest node in the drawing: the context whose figure it is.
    let end = own.iter().copied().max_by_key(|&n| {
        let mut depth = 0;
        let mut at = n;
        while let Some(parent) = g.neighbors_directed(at, petgraph::Direction::Incoming).next() {
            depth += 1;
            at = parent;
        }
        depth
    });
    match end.map(|n| &g[n]).filter(|n| Which::of_kind(f.kind()) == Some(Which::Calls) && !n.figures.is_empty()) {
        Some(n) => format!(
            "{label} — the context drawn, ending in {}: {}; in all its contexts, {}",
            n.name, n.figures, f.message
        ),
        None => format!("{label} — {}", f.message),
    }
}

/// DOT with the graph's title as its label; user nodes bold, library nodes grey, `marked` nodes
/// (by id) filled; edge widths grow with their weight.
pub fn to_dot(g: &Graph, title: &str, marked: &HashSet<u64>) -> String {
    let max = g.edge_references().map(|e| e.weight().weight).max().unwrap_or(1).max(1);
    let edge_attrs = |_: &Graph, e: petgraph::graph::EdgeReference<'_, GraphEdge>| {
        let width = 1.0 + 4.0 * (e.weight().weight as f64 / max as f64);
        format!("penwidth = {width:.1}")
    };
    let node_attrs = |_: &Graph, (_, n): (NodeIndex, &GraphNode)| {
        let mut a = vec!["shape = box".to_string()];
        let style = if n.user { "rounded,bold" } else { "rounded" };
        if n.id.is_some_and(|id| marked.contains(&id)) {
            a.push(format!("style = \"{style},filled\", fillcolor = lightgoldenrod1"));
        } else {
            a.push(format!("style = \"{style}\""));
        }
        if !n.user {
            a.push("color = gray50, fontcolor = gray30".into());
        }
        a.join(", ")
    };
    let dot = Dot::with_attr_getters(g, &[Config::RankDir(petgraph::dot::RankDir::LR)], &edge_attrs, &node_attrs);
    let body = format!("{dot}");
    let title = wrap(title, 110).replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
    // The title as the graph's label, after the opening brace.
    match body.split_once('{') {
        Some((head, rest)) => format!("{head}{{\n    label = \"{title}\"\n    labelloc = t\n    fontsize = 12{rest}"),
        None => body,
    }
}

/// `text` broken into lines of about `width` characters, at spaces.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split(' ') {
        if line > 0 && line + word.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += word.chars().count();
    }
    out
}

/// The calling-context tree the report carries as a graph: one node per context (the method in
/// the source's words, its cumulative cost and share), edges from caller to callee weighted by the
/// callee's cumulative cost. Contexts under `min_share` of the run are left out.
pub fn call_graph(tree: &CallTree, user: &dyn Fn(u32) -> bool, min_share: f64) -> Graph {
    let n = tree.nodes.len();
    let mut cum: Vec<u64> = tree.nodes.iter().map(|c| c.instructions).collect();
    // Children come after their parents: sum bottom-up.
    for i in (1..n).rev() {
        let p = tree.nodes[i].parent as usize;
        if p != i {
            cum[p] += cum[i];
        }
    }
    let total = cum.first().copied().unwrap_or(0).max(1);
    let mut g = Graph::new();
    let mut index: Vec<Option<NodeIndex>> = vec![None; n];
    for i in 0..n {
        let c = &tree.nodes[i];
        if i > 0 && (cum[i] as f64) < min_share * total as f64 {
            continue;
        }
        let label = tree.methods.get(c.method as usize).cloned().unwrap_or_else(|| "the program".into());
        let node = GraphNode {
            name: if i == 0 { "the program".into() } else { short_name(&label) },
            figures: format!("{} instructions ({:.1}%)", words::count(cum[i]), cum[i] as f64 * 100.0 / total as f64),
            user: i > 0 && user(c.method),
            id: Some(i as u64),
        };
        let at = g.add_node(node);
        index[i] = Some(at);
        if i > 0 {
            if let Some(p) = index[c.parent as usize] {
                g.add_edge(p, at, GraphEdge { label: String::new(), weight: cum[i] });
            }
        }
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{BottleneckEvidence, Evidence};
    use crate::report::Location;

    fn node(name: &str, figures: &str, id: u64) -> GraphNode {
        GraphNode { name: name.into(), figures: figures.into(), user: true, id: Some(id) }
    }

    /// The same calls made from two call sites are two contexts: the title gives the figure of
    /// the one drawn before the message's total over both.
    #[test]
    fn a_call_paths_title_gives_the_figure_of_the_context_drawn() {
        let mut g = Graph::new();
        let root = g.add_node(node("the program", "1,000 instructions (100.0%)", 0));
        let main = g.add_node(node("Main.main", "990 instructions (99.0%)", 1));
        let put = g.add_node(node("HashMap.put", "100 instructions (10.0%)", 2));
        let other = g.add_node(node("HashMap.put", "200 instructions (20.0%)", 3));
        for (a, b) in [(root, main), (main, put), (main, other)] {
            g.add_edge(a, b, GraphEdge { label: String::new(), weight: 1 });
        }
        let graphs = Graphs { calls: Some(g.clone()), ..Graphs::default() };
        let at = Location {
            file: None,
            line: None,
            class: "Main".into(),
            method: "main".into(),
            descriptor: "([Ljava/lang/String;)V".into(),
            bci: 0,
            expression: None,
        };
        let message = "the calls Main.main → HashMap.put take 30% of the run's instructions (300 of 1,000)";
        let path = BottleneckEvidence { graph_nodes: vec![1, 2], ..BottleneckEvidence::default() };
        let f = Finding::new(Evidence::Bottleneck(path), 300.0, message.into(), at);
        assert!(finding_dot(&graphs, &f).unwrap().contains("the context drawn"));
        let title = finding_title(&g, &f, &[main, put].into_iter().collect());
        assert!(
            title.contains(
                "the context drawn, ending in HashMap.put: 100 instructions (10.0%); in all its contexts, the calls"
            ),
            "{title}"
        );
    }
}

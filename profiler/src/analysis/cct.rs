//! The calling-context tree: one node per distinct path of calls (caller's call site, callee),
//! kept current per thread by the call and return events. Unlike an additive hash of the stack
//! (ROLP's thread stack state), two paths through the same call sites in a different order are
//! different nodes. Recursion folds: a call to a method already on the path re-enters its node.

use crate::vm::class::MethodId;
use crate::vm::tracker::Site;
use rustc_hash::FxHashMap;

pub const ROOT: u32 = 0;

#[derive(Debug, Clone, Copy)]
pub struct Node {
    pub parent: u32,
    /// The call site in the parent's method (for the root: none).
    pub site: Site,
    pub method: MethodId,
}

pub struct Cct {
    pub nodes: Vec<Node>,
    children: FxHashMap<(u32, Site, MethodId), u32>,
    /// Per thread, the path of open frames (innermost last).
    stacks: Vec<Vec<u32>>,
    current: usize,
    /// How many open frames (of all threads) each method has.
    on_path: Vec<u32>,
    /// Whether the last [`Cct::enter`] re-entered a node on the path (a recursive call).
    pub reentered: bool,
}

impl Default for Cct {
    fn default() -> Self {
        Cct {
            nodes: vec![Node { parent: ROOT, site: Site::default(), method: MethodId::MAX }],
            children: FxHashMap::default(),
            stacks: vec![Vec::new()],
            current: 0,
            on_path: Vec::new(),
            reentered: false,
        }
    }
}

impl Cct {
    pub fn switch_to(&mut self, thread: usize) {
        if thread >= self.stacks.len() {
            self.stacks.resize_with(thread + 1, Vec::new);
        }
        self.current = thread;
    }

    /// The running thread's current node.
    #[inline]
    pub fn top(&self) -> u32 {
        self.stacks[self.current].last().copied().unwrap_or(ROOT)
    }

    /// A frame for `callee` was pushed as the thread's `depth`-th (frames a fatal error
    /// discarded without returning are dropped here first).
    #[inline]
    pub fn enter(&mut self, site: Site, callee: MethodId, depth: usize) -> u32 {
        let stack = &mut self.stacks[self.current];
        for gone in stack.drain(depth.saturating_sub(1).min(stack.len())..) {
            self.on_path[self.nodes[gone as usize].method as usize] -= 1;
        }
        let m = callee as usize;
        if m >= self.on_path.len() {
            self.on_path.resize(m + 1, 0);
        }
        // Recursion folds onto the callee's frame already on the path, so that the tree stays as
        // large as the program's distinct non-recursive paths (a recursive fib would otherwise
        // grow a node per call).
        self.reentered = false;
        if self.on_path[m] > 0 {
            let stack = &self.stacks[self.current];
            if let Some(&again) = stack.iter().rev().find(|&&n| self.nodes[n as usize].method == callee) {
                self.on_path[m] += 1;
                self.stacks[self.current].push(again);
                self.reentered = true;
                return again;
            }
        }
        self.on_path[m] += 1;
        let parent = self.top();
        let next = self.nodes.len() as u32;
        let node = *self.children.entry((parent, site, callee)).or_insert(next);
        if node == next {
            self.nodes.push(Node { parent, site, method: callee });
        }
        self.stacks[self.current].push(node);
        node
    }

    #[inline]
    pub fn exit(&mut self) {
        if let Some(n) = self.stacks[self.current].pop() {
            self.on_path[self.nodes[n as usize].method as usize] -= 1;
        }
    }

    /// The call sites from the outermost frame down to `node`'s frame, outermost first.
    /// [`Cct::path`] from the first call site in code `is_user` accepts (the frames before it are
    /// how the user's code was reached: a test launcher, a pool's worker loop); the whole path
    /// when none is.
    pub fn user_path(&self, node: u32, is_user: impl Fn(Site) -> bool) -> Vec<Site> {
        let mut path = self.path(node);
        if let Some(k) = path.iter().position(|&s| is_user(s)) {
            path.drain(..k);
        }
        path
    }

    pub fn path(&self, mut node: u32) -> Vec<Site> {
        let mut sites = Vec::new();
        while node != ROOT {
            let n = self.nodes[node as usize];
            if n.parent != ROOT {
                sites.push(n.site);
            }
            node = n.parent;
        }
        sites.reverse();
        sites
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(method: MethodId, pc: u32) -> Site {
        Site { method, pc }
    }

    #[test]
    fn the_same_call_sites_in_another_order_are_another_context() {
        let mut t = Cct::default();
        t.enter(site(0, 0), 1, 1); // main
        let (a, b, c) = (site(1, 3), site(2, 5), site(3, 7));
        t.enter(a, 2, 2);
        t.enter(b, 3, 3);
        let first = t.enter(c, 4, 4);
        t.exit();
        t.exit();
        t.exit();
        t.enter(b, 3, 2);
        t.enter(a, 2, 3);
        let second = t.enter(c, 4, 4);
        assert_ne!(first, second, "an additive hash of {{a, b, c}} could not tell these apart");
        assert_eq!(t.path(first), vec![a, b, c]);
        assert_eq!(t.path(second), vec![b, a, c]);
        // Frames discarded without returning: the depth resynchronises the path.
        t.enter(a, 2, 2);
        t.enter(b, 3, 3);
        assert_eq!(t.enter(c, 4, 4), first, "a path seen before is the same node");
    }

    #[test]
    fn recursion_folds_onto_the_frame_on_the_path() {
        let mut t = Cct::default();
        let main = t.enter(site(0, 0), 1, 1);
        let fib = t.enter(site(1, 2), 2, 2);
        for depth in 3..40 {
            assert_eq!(t.enter(site(2, (depth % 2) as u32), 2, depth), fib);
        }
        assert_eq!(t.nodes.len(), 3, "root, main, fib");
        for _ in 3..40 {
            t.exit();
        }
        t.exit();
        assert_eq!(t.top(), main);
        assert_ne!(t.enter(site(1, 9), 3, 2), fib);
    }

    #[test]
    fn a_user_path_starts_at_the_users_first_call_site() {
        // A launcher (methods 10, 11) calls the user's test (method 1), which calls a library (20).
        let mut t = Cct::default();
        t.enter(site(10, 0), 10, 1);
        t.enter(site(10, 4), 11, 2);
        let test = site(11, 8);
        t.enter(test, 1, 3);
        let call = site(1, 2);
        let inner = t.enter(call, 20, 4);
        let user = |s: Site| s.method < 10;
        assert_eq!(t.path(inner), vec![site(10, 4), test, call]);
        assert_eq!(t.user_path(inner, user), vec![call], "from the user's own call site");
        assert_eq!(t.user_path(inner, |_| false), t.path(inner), "no user code: the whole path");
    }
}

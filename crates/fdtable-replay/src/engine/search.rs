//! The bounded linearizability search of P3.
//!
//! Each call took effect at some point between its entry line and its result line; calls of
//! threads sharing a table overlap, so the order of their result lines is not the order of
//! their effects. Given the table as it was at a cut point, the calls whose steps may move
//! (those placed after the cut, the call whose result disagreed, and calls still in flight
//! whose results the look-ahead knows), the search looks for an order of their steps that
//! reproduces every logged result:
//!
//! - a step may run only after the previous steps of its call, and after every call whose
//!   result line comes before its call's entry line;
//! - every call that has returned must be complete; calls still in flight may stay
//!   unplaced;
//! - each candidate step runs on a copy of the table *through the library*; a step whose
//!   result disagrees with the log prunes the branch;
//! - first with every call atomic (its steps contiguous: "exact"), then letting a call hold
//!   a reservation while others run ("consistent": a failed open holding a number, the two
//!   halves of a pipe2).
//!
//! It is a depth-first search that tries the original order first, memoises visited states
//! (placed steps, held reservations and a fingerprint of the table) and stops after a node
//! budget, so its cost is bounded whatever the log.

use super::step::{Fdt, Step, duplicate, fingerprint};
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

/// The most calls one search considers.
pub const MAX_OPS: usize = 64;

/// A call in a search.
#[derive(Clone, Debug)]
pub struct SearchOp {
    /// Its id.
    pub id: u64,
    /// All its steps.
    pub steps: Vec<Step>,
    /// Steps already placed before the cut.
    pub start: usize,
    /// Descriptors it held at the cut.
    pub held0: Vec<u32>,
    /// Entry line.
    pub entry: u64,
    /// Result line.
    pub result: u64,
    /// Whether it must be complete (it has returned).
    pub required: bool,
    /// The caller's RLIMIT_NOFILE.
    pub nofile: u64,
    /// The preference rank of each step (lower is tried first), indexed from `start`.
    pub pref: Vec<u64>,
}

/// A search problem.
#[derive(Debug)]
pub struct Problem {
    /// The calls (at most [`MAX_OPS`]).
    pub ops: Vec<SearchOp>,
    /// Whether calls may be split (held reservations).
    pub split: bool,
    /// Node budget.
    pub budget: usize,
}

/// A found order: `(call index, step index)` pairs.
pub type Path = Vec<(usize, usize)>;

struct Dfs<'p> {
    p: &'p Problem,
    must: Vec<u64>,
    prog: Vec<usize>,
    held: Vec<Vec<u32>>,
    open: Option<usize>,
    path: Path,
    memo: HashSet<u64>,
    nodes: usize,
}

/// Searches an order of `p`'s steps from the table `base`: the order found (`None` if none
/// exists within the budget) and the number of nodes visited.
pub fn solve(base: &Fdt, p: &Problem) -> (Option<Path>, usize) {
    if p.ops.len() > MAX_OPS {
        return (None, 0);
    }
    let n = p.ops.len();
    let mut must = vec![0u64; n];
    for (i, a) in p.ops.iter().enumerate() {
        for (j, b) in p.ops.iter().enumerate() {
            if i != j && b.result < a.entry {
                must[i] |= 1 << j;
            }
        }
    }
    let mut d = Dfs {
        p,
        must,
        prog: p.ops.iter().map(|o| o.start).collect(),
        held: p.ops.iter().map(|o| o.held0.clone()).collect(),
        open: None,
        path: Vec::new(),
        memo: HashSet::new(),
        nodes: 0,
    };
    let found = d.go(base);
    (found.then_some(d.path), d.nodes)
}

impl Dfs<'_> {
    fn complete(&self, i: usize) -> bool {
        self.prog[i] >= self.p.ops[i].steps.len()
    }

    fn done_mask(&self) -> u64 {
        (0..self.p.ops.len())
            .filter(|&i| self.complete(i))
            .fold(0, |m, i| m | 1 << i)
    }

    fn goal(&self) -> bool {
        (self.p.split || self.open.is_none())
            && self
                .p
                .ops
                .iter()
                .enumerate()
                .all(|(i, o)| !o.required || self.complete(i))
    }

    fn key(&self, f: &Fdt) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.prog.hash(&mut h);
        self.held.hash(&mut h);
        self.open.hash(&mut h);
        fingerprint(f).hash(&mut h);
        h.finish()
    }

    fn go(&mut self, f: &Fdt) -> bool {
        if self.goal() {
            return true;
        }
        let done = self.done_mask();
        let mut cands: Vec<usize> = match self.open {
            Some(o) => vec![o],
            None => (0..self.p.ops.len())
                .filter(|&i| !self.complete(i) && self.must[i] & !done == 0)
                .collect(),
        };
        cands.sort_by_key(|&i| self.p.ops[i].pref[self.prog[i] - self.p.ops[i].start]);
        for i in cands {
            if self.nodes >= self.p.budget {
                return false;
            }
            self.nodes += 1;
            let Ok(mut g) = duplicate(f) else {
                return false;
            };
            let op = &self.p.ops[i];
            let k = self.prog[i];
            let saved_held = self.held[i].clone();
            let check = op.steps[k].run(&mut g, &mut self.held[i], op.nofile, op.result);
            if !check.ok() {
                self.held[i] = saved_held;
                continue;
            }
            self.prog[i] += 1;
            let saved_open = self.open;
            if !self.p.split {
                self.open = (!self.complete(i)).then_some(i);
            }
            if self.memo.insert(self.key(&g)) {
                self.path.push((i, k));
                if self.go(&g) {
                    return true;
                }
                self.path.pop();
            }
            self.open = saved_open;
            self.prog[i] -= 1;
            self.held[i] = saved_held;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Kind;
    use crate::engine::step::{Step, Val, force_install};

    fn table() -> Fdt {
        let mut f = Fdt::new();
        for fd in 0..3 {
            force_install(&mut f, fd, Kind::Inherited, 0);
        }
        f
    }

    fn alloc(expect: u32) -> Vec<Step> {
        vec![Step::Alloc {
            cloexec: false,
            kind: Kind::File,
            opath: false,
            expect: Val::Fd(expect),
        }]
    }

    fn op(id: u64, steps: Vec<Step>, entry: u64, result: u64, pref: u64) -> SearchOp {
        SearchOp {
            id,
            pref: vec![pref; steps.len()],
            steps,
            start: 0,
            held0: vec![],
            entry,
            result,
            required: true,
            nofile: 1024,
        }
    }

    #[test]
    fn finds_the_order_the_results_need_within_the_windows() {
        // A got 4 and B got 3: B ran first. Their windows overlap.
        let p = Problem {
            ops: vec![op(1, alloc(4), 1, 3, 0), op(2, alloc(3), 2, 4, 1)],
            split: false,
            budget: 100,
        };
        let (path, nodes) = solve(&table(), &p);
        assert_eq!(path, Some(vec![(1, 0), (0, 0)]));
        assert!(nodes >= 2);
        // If A returned before B entered, A ran first: no order fits.
        let p = Problem {
            ops: vec![op(1, alloc(4), 1, 2, 0), op(2, alloc(3), 3, 4, 1)],
            split: false,
            budget: 100,
        };
        assert_eq!(solve(&table(), &p).0, None);
    }

    #[test]
    fn held_reservations_only_when_splitting_is_allowed() {
        // A failed open in flight (reserve, release) and an open that got 4.
        let failed = op(1, vec![Step::Reserve, Step::Release], 1, 4, 0);
        let open = op(2, alloc(4), 2, 3, 1);
        let mut p = Problem {
            ops: vec![failed, open],
            split: false,
            budget: 100,
        };
        assert_eq!(solve(&table(), &p).0, None);
        p.split = true;
        assert_eq!(solve(&table(), &p).0, Some(vec![(0, 0), (1, 0), (0, 1)]));
    }

    #[test]
    fn the_budget_bounds_the_search() {
        let ops = (0..10).map(|i| op(i, alloc(20), 1, 100, i)).collect();
        let p = Problem {
            ops,
            split: false,
            budget: 50,
        };
        let (path, nodes) = solve(&table(), &p);
        assert_eq!(path, None);
        assert!(nodes <= 50);
    }
}

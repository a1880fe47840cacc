//! Applying a call's steps to its table, and the linearization of shared tables (P3).
//!
//! A table used by one task replays each call at its result line, in line order. A table
//! shared by several tasks keeps its recent linearization ([`super::table::History`]: each
//! placed step with a copy of the table before it). A call is first placed at the end (line
//! order); if the library's result disagrees with the log, [`super::search`] looks for
//! another order the calls' windows allow — pulling calls still in flight forward (their
//! results come from the look-ahead), or moving back calls already placed — first with every
//! call atomic, then with held reservations. The search's result is replayed again through
//! the library and becomes the new linearization. When no task of the table is inside a
//! table call any more, nothing before can move: the history is committed.

use super::plan::{Plan, plan};
use super::search::{MAX_OPS, Problem, SearchOp, solve};
use super::step::{Check, Step, Val, duplicate};
use super::table::{LinOp, Placed};
use super::{Engine, Lookahead, may_touch_table};
use crate::decode::{Decoded, Kind, Op, decode};
use crate::parse::Call;
use crate::stats::Exactness;

/// What the search for a disagreeing call's place found.
enum Found {
    /// An order; it is the linearization now.
    Order,
    /// No order of the calls it could consider.
    None,
    /// No order, but it could not consider them all: why.
    Undecided(&'static str),
}

/// Why a search is undecided when it has more calls to order than it can.
const TOO_MANY: &str = "had more calls in flight to order than it can consider";
/// Why a search is undecided when a call in flight returns beyond the look-ahead.
const BEYOND: &str = "needed the result of a call in flight beyond the look-ahead";

/// The result line of a call the log never shows returning.
const NEVER: u64 = u64::MAX / 2;
/// Node budget of one search attempt.
const BUDGET: usize = 4000;
/// How far back (in placed steps) the search may cut, beyond the first overlapping step.
const CUT_BACK: [usize; 4] = [0, 8, 32, 96];

impl Engine {
    /// A table operation: plan its steps and apply them.
    pub(crate) fn table_op(&mut self, c: &Call, d: &Decoded, look: &mut dyn Lookahead) {
        let Some(task) = self.tasks.get(&c.entry_tid) else {
            return;
        };
        let (ti, group) = (task.table, task.group);
        let nofile = self
            .groups
            .get(group)
            .map_or(self.init.nofile, |g| g.nofile);
        let steps = match plan(&d.op, c.ret, &d.arg_fds()) {
            Plan::Skip(why) => {
                self.stats.row(&c.name).skipped += 1;
                if c.ret.is_ok() && matches!(d.op, Op::Pair { .. } | Op::Recv { .. }) {
                    if let Some(t) = self.tables.get_mut(ti) {
                        t.blind = true;
                    }
                    self.stats.note(format!("line {}: {why}", c.line));
                }
                return;
            }
            Plan::Bad(msg) => {
                self.stats.row(&c.name).skipped += 1;
                self.stats.error(c.line, msg);
                return;
            }
            Plan::Steps(s) => s,
        };
        self.stats.row(&c.name).replayed += 1;
        if !steps.is_empty()
            && let Some(t) = self.tables.get_mut(ti)
        {
            t.changed = c.line;
        }
        for s in &steps {
            let shown = match s {
                Step::Alloc {
                    expect: Val::Fd(fd),
                    ..
                }
                | Step::ReserveAt {
                    expect: Val::Fd(fd),
                    ..
                }
                | Step::Close { fd, .. }
                | Step::Dup2 { new: fd, .. }
                | Step::Dup3 { new: fd, .. } => Some(*fd),
                _ => None,
            };
            if let Some(fd) = shown
                && self.touched.insert(fd)
            {
                self.fresh.push(fd);
            }
        }
        if steps.is_empty() {
            return;
        }
        let Some(t) = self.tables.get(ti) else {
            return;
        };
        let concurrent =
            t.sharers() > 1 || !t.hist.seq.is_empty() || t.hist.ops.contains_key(&c.id);
        if concurrent {
            self.lin_apply(ti, c, steps, nofile, look);
        } else {
            if let Some(t) = self.tables.get_mut(ti) {
                t.unsettled = None;
            }
            self.direct(ti, c, &steps, nofile);
        }
        if matches!(
            d.op,
            Op::NewFd {
                kind: Kind::IoUring,
                ..
            }
        ) && c.ret.is_ok()
            && let Some(t) = self.tables.get_mut(ti)
        {
            t.drifting = true;
            self.drifted.insert(ti);
        }
    }

    /// Places a call on a shared table: at the end if the library agrees, else where the
    /// search finds an order; else it is a mismatch.
    fn lin_apply(
        &mut self,
        ti: usize,
        c: &Call,
        steps: Vec<Step>,
        nofile: u64,
        look: &mut dyn Lookahead,
    ) {
        let Some(t) = self.tables.get_mut(ti) else {
            return;
        };
        let op = t.hist.ops.entry(c.id).or_insert_with(|| LinOp {
            id: c.id,
            tid: c.entry_tid,
            entry: c.entry_line,
            result: c.line,
            returned: true,
            checks: vec![None; steps.len()],
            steps,
            nofile,
            base_placed: 0,
            base_held: Vec::new(),
            placed: 0,
            held: Vec::new(),
            exactness: Exactness::Exact,
            reordered: false,
        });
        op.returned = true;
        op.result = c.line;
        if op.placed < op.steps.len() && !self.place_at_end(ti, c.id, c.line) {
            match self.search(ti, c.id, look) {
                Found::Order => {}
                Found::None => {
                    self.fail(ti, c);
                    self.maybe_commit(ti);
                    return;
                }
                Found::Undecided(why) => {
                    self.undecided = Some(why);
                    self.fail(ti, c);
                    self.undecided = None;
                    self.maybe_commit(ti);
                    return;
                }
            }
        }
        // Count the call's checks as placed.
        let Some(t) = self.tables.get_mut(ti) else {
            return;
        };
        let Some(op) = t.hist.ops.get(&c.id) else {
            return;
        };
        let (how, reordered) = (op.exactness, op.reordered);
        let items: Vec<(Step, Check)> = op
            .steps
            .iter()
            .zip(&op.checks)
            .filter_map(|(s, ch)| ch.map(|ch| (s.clone(), ch)))
            .collect();
        if reordered {
            self.stats.reordered += 1;
        }
        for (s, ch) in items {
            self.account(ti, c, &s, ch, how);
        }
        self.maybe_commit(ti);
    }

    /// Runs the call's remaining steps at the end of the linearization; keeps them if every
    /// result agrees, else restores the table and returns false.
    fn place_at_end(&mut self, ti: usize, id: u64, line: u64) -> bool {
        let Some(t) = self.tables.get_mut(ti) else {
            return false;
        };
        let Some(op) = t.hist.ops.get_mut(&id) else {
            return false;
        };
        let mut placed = Vec::new();
        let mut ok = true;
        let held0 = op.held.clone();
        for k in op.placed..op.steps.len() {
            let Ok(before) = duplicate(&t.files) else {
                ok = false;
                break;
            };
            let chk = op.steps[k].run(&mut t.files, &mut op.held, op.nofile, line);
            op.checks[k] = Some(chk);
            placed.push(Placed {
                id,
                k,
                before,
                held_after: op.held.clone(),
            });
            if !chk.ok() {
                ok = false;
                break;
            }
        }
        if ok {
            op.placed = op.steps.len();
            t.hist.seq.extend(placed);
        } else {
            // Undo: back to the state before the first step.
            op.held = held0;
            for k in op.placed..op.steps.len() {
                op.checks[k] = None;
            }
            if let Some(first) = placed.into_iter().next() {
                t.replace(first.before);
            }
        }
        ok
    }

    /// Searches an order for call `x`; on success the new linearization is in place. When
    /// no order was found but the search could not try them all (node budget, too many
    /// calls, a call in flight whose result is beyond the look-ahead), the answer is
    /// [`Found::Undecided`].
    fn search(&mut self, ti: usize, x: u64, look: &mut dyn Lookahead) -> Found {
        let mut undecided = self.gather_in_flight(ti, x, look);
        let none = |u: Option<&'static str>| u.map_or(Found::None, Found::Undecided);
        let Some(t) = self.tables.get(ti) else {
            return Found::None;
        };
        let h = &t.hist;
        let n = h.seq.len();
        let e_x = h.ops[&x].entry;
        let in_flight: Vec<u64> = h
            .ops
            .values()
            .filter(|o| !o.returned && o.placed < o.steps.len())
            .map(|o| o.id)
            .collect();
        let c0 = h
            .seq
            .iter()
            .position(|p| {
                let o = &h.ops[&p.id];
                !o.returned || o.result >= e_x
            })
            .unwrap_or(n);
        if c0 == n && in_flight.is_empty() {
            return none(undecided);
        }
        let mut cuts: Vec<usize> = CUT_BACK.iter().map(|b| c0.saturating_sub(*b)).collect();
        cuts.dedup();
        let multi = h.ops.values().any(|o| o.steps.len() > 1);
        for split in [false, true] {
            if split && !multi {
                break;
            }
            for &cut in &cuts {
                let Some(t) = self.tables.get(ti) else {
                    return Found::None;
                };
                let problem = build_problem(&t.hist, cut, x, split);
                if problem.ops.len() > MAX_OPS {
                    undecided = Some(TOO_MANY);
                    break;
                }
                if self.search_allowance == 0 {
                    return Found::Undecided("allowance for the log was used up");
                }
                let mut problem = problem;
                problem.budget = problem.budget.min(self.search_allowance as usize);
                let (path, nodes) = {
                    let base = if cut < t.hist.seq.len() {
                        &t.hist.seq[cut].before
                    } else {
                        &t.files
                    };
                    solve(base, &problem)
                };
                self.stats.search_nodes += nodes as u64;
                self.search_allowance = self.search_allowance.saturating_sub(nodes as u64);
                if path.is_none() && nodes >= problem.budget {
                    undecided = Some("ran out of its node budget");
                }
                if let Some(path) = path
                    && self.adopt(ti, cut, &problem, &path, x)
                {
                    return Found::Order;
                }
            }
        }
        none(undecided)
    }

    /// Adds the table calls still in flight (other tasks of the table inside a call) whose
    /// results the look-ahead knows; says why not if one's result is beyond it.
    fn gather_in_flight(
        &mut self,
        ti: usize,
        x: u64,
        look: &mut dyn Lookahead,
    ) -> Option<&'static str> {
        let mut beyond = None;
        let wanted: Vec<(u32, &super::Pending, usize)> = self
            .tasks
            .iter()
            .filter(|(_, t)| t.table == ti)
            .filter_map(|(&tid, t)| t.pending.as_ref().map(|p| (tid, p, t.group)))
            .filter(|(_, p, _)| p.id != x && may_touch_table(&p.name))
            .collect();
        // A call whose result the log never shows (it ends first) is taken as returning
        // nothing at its end: a reserve-first call then held its number from its entry on
        // (red team 35, N10).
        let wanted: Vec<(u32, u64, usize, Call)> = wanted
            .into_iter()
            .map(|(tid, p, g)| {
                let never = Call {
                    id: p.id,
                    tid,
                    entry_tid: tid,
                    entry_line: p.entry,
                    line: NEVER,
                    name: p.name.clone(),
                    args: p.partial.clone(),
                    ret: crate::parse::Ret::Unknown,
                    injected: false,
                };
                (tid, p.id, g, never)
            })
            .collect();
        for (tid, id, group, never) in wanted {
            if self
                .tables
                .get(ti)
                .is_none_or(|t| t.hist.ops.contains_key(&id))
            {
                continue;
            }
            let call = match look.peek(id) {
                Some(call) => call,
                None if look.gave_up() => {
                    beyond = Some(BEYOND);
                    continue;
                }
                None => never,
            };
            if call.injected {
                continue;
            }
            let d = decode(&call);
            // A clone with CLONE_PIDFD installs the pidfd in the parent's table before the
            // child runs; with CLONE_VFORK the call then stays in flight until the child execs
            // or exits, while the parent's other threads already see the number taken.
            let pidfd_clone = matches!(d.op, Op::Clone { flags, pidfd: Some(_) } if flags.pidfd);
            if !d.op.reorderable() && !pidfd_clone {
                continue;
            }
            let Plan::Steps(steps) = plan(&d.op, call.ret, &d.arg_fds()) else {
                continue;
            };
            if steps.is_empty() {
                continue;
            }
            let nofile = self
                .groups
                .get(group)
                .map_or(self.init.nofile, |g| g.nofile);
            if let Some(t) = self.tables.get_mut(ti) {
                t.hist.ops.insert(
                    id,
                    LinOp {
                        id,
                        tid,
                        entry: call.entry_line,
                        result: call.line,
                        returned: false,
                        checks: vec![None; steps.len()],
                        steps,
                        nofile,
                        base_placed: 0,
                        base_held: Vec::new(),
                        placed: 0,
                        held: Vec::new(),
                        exactness: Exactness::Exact,
                        reordered: false,
                    },
                );
            }
        }
        beyond
    }

    /// Replays a found order from the cut through the library and makes it the
    /// linearization.
    fn adopt(
        &mut self,
        ti: usize,
        cut: usize,
        p: &Problem,
        path: &[(usize, usize)],
        x: u64,
    ) -> bool {
        let Some(t) = self.tables.get_mut(ti) else {
            return false;
        };
        let base = if cut < t.hist.seq.len() {
            duplicate(&t.hist.seq[cut].before)
        } else {
            duplicate(&t.files)
        };
        let Ok(mut f) = base else {
            return false;
        };
        for so in &p.ops {
            if let Some(op) = t.hist.ops.get_mut(&so.id) {
                op.placed = so.start;
                op.held.clone_from(&so.held0);
                for ch in op.checks.iter_mut().skip(so.start) {
                    *ch = None;
                }
            }
        }
        t.hist.seq.truncate(cut);
        // Which calls ran split (a step of another call between two of theirs).
        let mut split_ops = std::collections::HashSet::new();
        for w in 0..path.len() {
            let (i, k) = path[w];
            if k > p.ops[i].start && w > 0 && path[w - 1].0 != i {
                split_ops.insert(p.ops[i].id);
            }
        }
        for &(i, k) in path {
            let id = p.ops[i].id;
            let Ok(before) = duplicate(&f) else {
                return false;
            };
            let Some(op) = t.hist.ops.get_mut(&id) else {
                return false;
            };
            let chk = op.steps[k].run(&mut f, &mut op.held, op.nofile, op.result);
            if !chk.ok() {
                // The library answered differently for the same order: not deterministic.
                return false;
            }
            op.checks[k] = Some(chk);
            op.placed = k + 1;
            if id == x || !op.returned || p.split && split_ops.contains(&id) {
                op.reordered = true;
            }
            if p.split && (id == x || split_ops.contains(&id)) {
                op.exactness = Exactness::Consistent;
            }
            t.hist.seq.push(Placed {
                id,
                k,
                before,
                held_after: op.held.clone(),
            });
        }
        t.replace(f);
        true
    }

    /// No order fits: replay the call at the end anyway, count its disagreements, resync.
    fn fail(&mut self, ti: usize, c: &Call) {
        let Some(t) = self.tables.get_mut(ti) else {
            return;
        };
        let Some(op) = t.hist.ops.remove(&c.id) else {
            return;
        };
        t.hist.commit();
        self.run_in_order(ti, c, &op.steps[op.placed..], op.held.clone(), op.nofile);
    }

    /// Commits the history when no task of the table is inside a table call.
    fn maybe_commit(&mut self, ti: usize) {
        let busy = self
            .tasks
            .values()
            .any(|t| t.table == ti && t.pending.as_ref().is_some_and(|p| may_touch_table(&p.name)));
        if let Some(t) = self.tables.get_mut(ti) {
            if busy {
                t.hist.trim();
            } else {
                t.hist.commit();
            }
        }
        self.settle(ti);
    }
}

/// The search problem for call `x` with the history cut at `cut`.
fn build_problem(h: &super::table::History, cut: usize, x: u64, split: bool) -> Problem {
    let mut order: Vec<u64> = Vec::new();
    let mut pref: std::collections::HashMap<(u64, usize), u64> = std::collections::HashMap::new();
    for (pos, p) in h.seq[cut..].iter().enumerate() {
        if !order.contains(&p.id) {
            order.push(p.id);
        }
        pref.insert((p.id, p.k), pos as u64);
    }
    let base = (h.seq.len() - cut) as u64;
    if !order.contains(&x) {
        order.push(x);
    }
    let mut rest: Vec<&LinOp> = h
        .ops
        .values()
        .filter(|o| !o.returned && !order.contains(&o.id) && o.placed < o.steps.len())
        .collect();
    rest.sort_by_key(|o| o.entry);
    order.extend(rest.iter().map(|o| o.id));
    let ops = order
        .iter()
        .enumerate()
        .filter_map(|(rank, &id)| {
            let o = h.ops.get(&id)?;
            let (start, held0) = h.at_cut(id, cut);
            let pref = (start..o.steps.len())
                .map(|k| {
                    pref.get(&(id, k))
                        .copied()
                        .unwrap_or(base + if id == x { 0 } else { 1000 } + rank as u64)
                })
                .collect();
            Some(SearchOp {
                id,
                steps: o.steps.clone(),
                start,
                held0,
                entry: o.entry,
                result: if o.returned { o.result } else { u64::MAX },
                required: o.returned,
                nofile: o.nofile,
                pref,
            })
        })
        .collect();
    Problem {
        ops,
        split,
        budget: BUDGET,
    }
}

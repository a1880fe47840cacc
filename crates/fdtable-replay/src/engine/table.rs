//! A traced `files_struct`: the library table, one handle per task that uses it, and (while
//! tasks share it) the recent history of its linearization.
//!
//! Sharing goes through the library: a `CLONE_FILES` child gets a [`fdtable::Files::share`]
//! handle, so the library's own sharer count decides what `unshare`, `exec` and
//! `close_range(CLOSE_RANGE_UNSHARE)` copy. The handles live here, not in the tasks, so that
//! the search can swap the whole table for another linearization's state in one place.

use super::step::{Check, Fdt, Step, duplicate};
use crate::decode::Kind;
use crate::stats::Exactness;
use std::collections::HashMap;

/// A call taking part in a shared table's linearization.
#[derive(Debug)]
pub struct LinOp {
    /// The call's id.
    pub id: u64,
    /// Its task.
    pub tid: u32,
    /// Entry line.
    pub entry: u64,
    /// Result line (known early through the look-ahead).
    pub result: u64,
    /// Whether its result line has been processed.
    pub returned: bool,
    /// Its steps.
    pub steps: Vec<Step>,
    /// The caller's RLIMIT_NOFILE.
    pub nofile: u64,
    /// Steps placed before the first entry of the history window.
    pub base_placed: usize,
    /// Descriptors it held at that point.
    pub base_held: Vec<u32>,
    /// Steps placed in the current linearization.
    pub placed: usize,
    /// Descriptors it holds now.
    pub held: Vec<u32>,
    /// The check of each placed step.
    pub checks: Vec<Option<Check>>,
    /// How its placement was found.
    pub exactness: Exactness,
    /// Whether it was moved out of line order.
    pub reordered: bool,
}

/// One placed step of the linearization, with the table as it was before it.
#[derive(Debug)]
pub struct Placed {
    /// The call.
    pub id: u64,
    /// Which of its steps.
    pub k: usize,
    /// The table before the step.
    pub before: Fdt,
    /// What the call held after the step.
    pub held_after: Vec<u32>,
}

/// The recent linearization of a shared table: placed steps (oldest first) and the calls
/// they belong to, plus calls placed ahead of their result line.
#[derive(Debug, Default)]
pub struct History {
    /// Placed steps since the last commit.
    pub seq: Vec<Placed>,
    /// Calls referenced by `seq`, or placed while still in flight.
    pub ops: HashMap<u64, LinOp>,
}

/// The longest history kept; older steps are committed (can no longer move).
pub const MAX_SEQ: usize = 256;

impl History {
    /// Forgets the placed steps: everything so far is final.
    pub fn commit(&mut self) {
        self.seq.clear();
        self.ops.retain(|_, op| !op.returned);
        for op in self.ops.values_mut() {
            op.base_placed = op.placed;
            op.base_held = op.held.clone();
        }
    }

    /// Commits the oldest steps when the history is too long.
    pub fn trim(&mut self) {
        if self.seq.len() <= MAX_SEQ {
            return;
        }
        let drop = self.seq.len() - MAX_SEQ / 2;
        for p in self.seq.drain(..drop) {
            if let Some(op) = self.ops.get_mut(&p.id) {
                op.base_placed = p.k + 1;
                op.base_held = p.held_after;
            }
        }
        let live: std::collections::HashSet<u64> = self.seq.iter().map(|p| p.id).collect();
        self.ops.retain(|id, op| !op.returned || live.contains(id));
    }

    /// The progress and held descriptors of `id` just before `seq[cut]`.
    pub fn at_cut(&self, id: u64, cut: usize) -> (usize, Vec<u32>) {
        let op = &self.ops[&id];
        let mut placed = op.base_placed;
        let mut held = op.base_held.clone();
        for p in &self.seq[..cut] {
            if p.id == id {
                placed = p.k + 1;
                held.clone_from(&p.held_after);
            }
        }
        (placed, held)
    }
}

/// A traced descriptor table.
#[derive(Debug)]
pub struct Table {
    /// The table (the first sharer's handle).
    pub files: Fdt,
    /// One more handle per additional sharer.
    extra: Vec<Fdt>,
    /// Holds (or held) an io_uring instance: descriptors may appear or vanish invisibly (P12).
    pub drifting: bool,
    /// A call created descriptors whose numbers the log did not print.
    pub blind: bool,
    /// A disagreement the search could not decide was resynchronised: until the calls then
    /// in flight on the table have returned, the model may be wrong and disagreements are
    /// undecided too (why the first was, and those calls' ids).
    pub unsettled: Option<(&'static str, Vec<u64>)>,
    /// The linearization history, used while tasks share the table.
    pub hist: History,
    /// The result line of the last call that changed it (or created it).
    pub changed: u64,
}

impl Table {
    /// A table of one task.
    pub fn new(files: Fdt) -> Self {
        Table {
            files,
            extra: Vec::new(),
            drifting: false,
            blind: false,
            unsettled: None,
            hist: History::default(),
            changed: 0,
        }
    }

    /// Tasks using the table.
    pub fn sharers(&self) -> usize {
        1 + self.extra.len()
    }

    /// Another task uses the table (`CLONE_FILES`).
    pub fn add_sharer(&mut self) {
        let h = self.files.share();
        self.extra.push(h);
    }

    /// A task stops using the table; returns whether it is now unused.
    pub fn remove_sharer(&mut self) -> bool {
        self.extra.pop().is_none()
    }

    /// Takes a sharer's handle out, for a task leaving the table (the caller unshares or execs
    /// it into a private table). `None` if only one task uses the table.
    pub fn detach(&mut self) -> Option<Fdt> {
        self.extra.pop()
    }

    /// Gives back a handle taken with [`Table::detach`] that is still a sharer.
    pub fn reattach(&mut self, h: Fdt) {
        self.extra.push(h);
    }

    /// Replaces the table's state (keeping the number of sharers).
    pub fn replace(&mut self, files: Fdt) {
        let n = self.extra.len();
        self.extra.clear();
        self.files = files;
        for _ in 0..n {
            self.add_sharer();
        }
    }

    /// A copy of the current state, for the history.
    pub fn snapshot(&self) -> Option<Fdt> {
        duplicate(&self.files).ok()
    }

    /// Whether any installed descriptor is an io_uring instance.
    pub fn has_io_uring(&self) -> bool {
        self.files.iter().any(|o| o.file.kind == Kind::IoUring)
    }
}

//! The replay engine: traced tasks, their thread groups and tables, and every call's effect
//! replayed through the library.
//!
//! - [`tasks`]: task lifecycle — the root, children created at their first line or at their
//!   parent's clone result (P5), threads and processes, `CLONE_FILES` sharing, unshare,
//!   execve (close-on-exec, non-leader exec, P7), exits and pid reuse (P8), RLIMIT_NOFILE
//!   per thread group (P11).
//! - [`plan`]: a call's logged result → the [`step::Step`]s the library must replay (P13).
//! - [`lin`]: applying steps; on a table shared by several tasks, keeping the recent
//!   linearization and searching it ([`search`]) when a result disagrees (P3).
//! - [`table`]: a traced `files_struct` and its history.
//!
//! Disagreements are classified: in a table that may change invisibly (io_uring, P12) they
//! are *drift*; for descriptors that can only have been inherited when the initial state was
//! assumed they are *inherited* (P10); on a shared table whose search ran out of budget,
//! calls or look-ahead before trying every order they are *undecided* (so are that table's
//! next ones until its calls in flight have returned); otherwise they are *mismatches*.
//! Either way the model is resynchronised to the log, so one error does not cascade.

pub mod args;
pub mod check;
pub mod lin;
pub mod plan;
pub mod search;
pub mod step;
pub mod table;
pub mod tasks;

use crate::decode::{self, Op, decode};
use crate::parse::{Call, Event, scan};
use crate::stats::Stats;
pub use crate::syscalls::may_touch_table;
use std::collections::{HashMap, HashSet, VecDeque};
use table::Table;

/// Gives the engine the whole call of a split call still in flight, if its result line is
/// within reach (the look-ahead of P3).
pub trait Lookahead {
    /// The call with this id, once joined.
    fn peek(&mut self, id: u64) -> Option<Call>;

    /// Whether the last `peek` that found nothing stopped at the look-ahead's window (the
    /// call's result may lie beyond it) rather than at the end of the log.
    fn gave_up(&self) -> bool {
        false
    }
}

/// A look-ahead that sees nothing (calls in flight cannot be pulled forward).
pub struct NoLookahead;

impl Lookahead for NoLookahead {
    fn peek(&mut self, _id: u64) -> Option<Call> {
        None
    }

    /// Any result may lie beyond it (a call in flight is not taken as never returning).
    fn gave_up(&self) -> bool {
        true
    }
}

/// How the root process started (P10, P11).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitState {
    /// Descriptors open at the start.
    pub fds: Vec<u32>,
    /// RLIMIT_NOFILE (soft).
    pub nofile: u64,
    /// Whether this was assumed (no meta file, no flags): then an early unexplained
    /// descriptor counts as inherited rather than as a mismatch.
    pub assumed: bool,
}

impl Default for InitState {
    fn default() -> Self {
        InitState {
            fds: vec![0, 1, 2],
            nofile: 1024,
            assumed: true,
        }
    }
}

/// A child announced by a clone result (from the pre-pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Birth {
    /// The task that called clone.
    pub parent: u32,
    /// Its flags.
    pub flags: decode::CloneFlags,
    /// The clone's result line.
    pub line: u64,
}

/// Children by tid, in order of their clone results (a tid may be reused).
pub type Births = HashMap<u32, VecDeque<Birth>>;

/// A call a task has entered and not finished.
#[derive(Clone, Debug)]
pub struct Pending {
    /// Call id.
    pub id: u64,
    /// Syscall name.
    pub name: String,
    /// Descriptor arguments that were open at entry.
    pub open_at_entry: Vec<u32>,
    /// Entry line.
    pub entry: u64,
    /// The arguments printed at entry (for a call whose result the log never shows).
    pub partial: String,
}

/// A traced task.
#[derive(Debug)]
pub struct Task {
    /// Its thread group.
    pub group: usize,
    /// Its table.
    pub table: usize,
    /// The call it is in, if split.
    pub pending: Option<Pending>,
    /// The clone result line it was born from.
    pub born: Option<u64>,
}

/// A thread group (a process): what its threads share besides, maybe, the table.
#[derive(Debug)]
pub struct Group {
    /// RLIMIT_NOFILE (soft).
    pub nofile: u64,
    /// Its tasks.
    pub members: Vec<u32>,
}

/// A vector with stable indices and reuse of free slots.
#[derive(Debug)]
pub struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    /// Stores `v`, returning its index.
    pub fn insert(&mut self, v: T) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.items[i] = Some(v);
                i
            }
            None => {
                self.items.push(Some(v));
                self.items.len() - 1
            }
        }
    }

    /// Removes the item at `i`.
    pub fn remove(&mut self, i: usize) -> Option<T> {
        let v = self.items.get_mut(i)?.take();
        if v.is_some() {
            self.free.push(i);
        }
        v
    }

    /// The item at `i`.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.items.get(i)?.as_ref()
    }

    /// The item at `i`, mutably.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.items.get_mut(i)?.as_mut()
    }
}

/// The replay of one log.
#[derive(Debug)]
pub struct Engine {
    /// What was found.
    pub stats: Stats,
    tasks: HashMap<u32, Task>,
    groups: Slab<Group>,
    tables: Slab<Table>,
    births: Births,
    aliases: HashMap<u32, u32>,
    init: InitState,
    root_made: bool,
    /// Descriptor numbers the replay has seen allocated or closed (P10's "never seen").
    touched: HashSet<u32>,
    /// Of `touched`, the numbers first seen in the call being replayed.
    fresh: Vec<u32>,
    /// Tables that ever held an io_uring instance.
    drifted: HashSet<usize>,
    /// Clone result lines whose child was created at its own first line (P5).
    born_early: HashSet<u64>,
    /// Search nodes still allowed: grows with the calls replayed, so that a log full of
    /// disagreements on shared tables costs time in proportion to its length.
    search_allowance: u64,
    /// Tasks that called exit or exit_group (their table may already be gone: pidfd_getfd
    /// then answers EBADF whatever the descriptor).
    dying: HashSet<u32>,
    /// Why the disagreements being counted now could not be decided (the search ran out of
    /// budget, calls or look-ahead): they are then undecided, not mismatches.
    undecided: Option<&'static str>,
}

/// Search nodes allowed at the start of a log, and per call replayed.
const ALLOWANCE_START: u64 = 200_000;
const ALLOWANCE_PER_CALL: u64 = 50;
/// The most allowance that can be saved up.
const ALLOWANCE_MAX: u64 = 20_000_000;

impl Engine {
    /// An engine for a log whose children the pre-pass found in `births`.
    pub fn new(init: InitState, births: Births) -> Self {
        Engine {
            stats: Stats::default(),
            tasks: HashMap::new(),
            groups: Slab::default(),
            tables: Slab::default(),
            births,
            aliases: HashMap::new(),
            init,
            root_made: false,
            touched: HashSet::new(),
            fresh: Vec::new(),
            drifted: HashSet::new(),
            born_early: HashSet::new(),
            search_allowance: ALLOWANCE_START,
            dying: HashSet::new(),
            undecided: None,
        }
    }

    /// Handles one event of the log.
    pub fn handle(&mut self, ev: Event, look: &mut dyn Lookahead) {
        match ev {
            Event::Enter {
                id,
                tid,
                line,
                name,
                partial,
            } => {
                self.ensure_task(tid, line);
                let open_at_entry = self.open_at_entry(tid, &name, &partial);
                if let Some(t) = self.tasks.get_mut(&tid) {
                    t.pending = Some(Pending {
                        id,
                        name,
                        open_at_entry,
                        entry: line,
                        partial,
                    });
                }
            }
            Event::Call(c) => self.call(&c, look),
            Event::Exit { tid, .. } => self.remove_task(tid),
            Event::Superseded { .. } | Event::Signal { .. } => {}
            Event::Rename { from, to } => self.rename(from, to),
            Event::Abandoned { id, tid } => self.abandon(id, tid),
            Event::Error { line, msg } => self.stats.error(line, msg),
        }
    }

    fn call(&mut self, c: &Call, look: &mut dyn Lookahead) {
        self.stats.calls += 1;
        self.fresh.clear();
        self.search_allowance = (self.search_allowance + ALLOWANCE_PER_CALL).min(ALLOWANCE_MAX);
        let tid = c.entry_tid;
        self.ensure_task(tid, c.entry_line);
        let pending = self
            .tasks
            .get_mut(&tid)
            .and_then(|t| t.pending.take())
            .filter(|p| p.id == c.id);
        if c.injected {
            // strace replaced the call with its own result: the kernel never saw it.
            self.stats.row(&c.name).skipped += 1;
            self.stats.injected += 1;
            return;
        }
        let d = decode(c);
        match c.name.as_str() {
            "exit" => {
                self.dying.insert(tid);
            }
            "exit_group" => {
                let members = self
                    .tasks
                    .get(&tid)
                    .and_then(|t| self.groups.get(t.group))
                    .map(|g| g.members.clone())
                    .unwrap_or_default();
                self.dying.extend(members);
                self.dying.insert(tid);
            }
            _ => {}
        }
        match &d.op {
            Op::Unknown => {
                *self.stats.unsupported.entry(c.name.clone()).or_default() += 1;
                self.stats.row(&c.name).skipped += 1;
            }
            Op::Plain => self.check_args(c, &d, pending.as_ref()),
            Op::Clone { .. } => self.clone_call(c, &d, look),
            Op::Unshare(files) => self.unshare(c, *files),
            Op::Exec => {
                self.check_args(c, &d, pending.as_ref());
                self.exec(c);
            }
            Op::Rlimit { pid, new, old } => self.rlimit(c, *pid, *new, *old),
            Op::CloseRange { flags, .. } if flags & fdtable::CLOSE_RANGE_UNSHARE != 0 => {
                self.close_range_unshare(c, &d.op)
            }
            _ => {
                self.check_args(c, &d, pending.as_ref());
                self.table_op(c, &d, look);
            }
        }
    }

    /// The descriptor arguments of a call entered now that are open in its table.
    fn open_at_entry(&self, tid: u32, name: &str, partial: &str) -> Vec<u32> {
        let Some(t) = self.tasks.get(&tid) else {
            return Vec::new();
        };
        let Some(table) = self.tables.get(t.table) else {
            return Vec::new();
        };
        // Decode the entry half as if it were the whole call; only descriptor args matter.
        let args = match scan::split_top(partial) {
            Some(_) => partial.to_string(),
            None => partial.split(',').next().unwrap_or("").to_string(),
        };
        let probe = Call {
            id: 0,
            tid,
            entry_tid: tid,
            entry_line: 0,
            line: 0,
            name: name.to_string(),
            args,
            ret: crate::parse::Ret::Val(0),
            injected: false,
        };
        decode(&probe)
            .uses()
            .into_iter()
            .filter(|&fd| matches!(table.files.fd_state(fd), fdtable::FdState::Installed { .. }))
            .collect()
    }

    /// Ends the replay.
    pub fn finish(mut self) -> Stats {
        self.stats.drifting_tables = self.drifted.len() as u64;
        self.stats
    }
}

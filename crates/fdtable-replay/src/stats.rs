//! What a replay found: counters per syscall, the first mismatches, drift and notes.

use serde::Serialize;
use std::collections::BTreeMap;

/// Counters of one syscall.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Row {
    /// Calls whose table effect was replayed (including injected object-layer errors).
    pub replayed: u64,
    /// Values compared with the log: fd numbers, table errnos, close-on-exec bits.
    pub checked: u64,
    /// Compared values the library got right.
    pub matched: u64,
    /// Compared values the library got wrong.
    pub mismatched: u64,
    /// Calls not replayed (interrupted, numbers not printed, unknown syscall).
    pub skipped: u64,
}

/// How a result was confirmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exactness {
    /// In line order, or in an order the windows allow with every call atomic: predicted.
    Exact,
    /// Only if some call held a reserved descriptor between its entry and result (P3).
    Consistent,
}

/// One disagreement between the library and the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// Line of the result.
    pub line: u64,
    /// Task.
    pub tid: u32,
    /// The call, shortened.
    pub call: String,
    /// What the log says.
    pub log: String,
    /// What the library computed.
    pub library: String,
}

/// How many mismatches (and drift events) are kept in full.
pub const KEEP: usize = 20;

/// Everything one replay found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Physical lines read.
    pub lines: u64,
    /// Syscall events (joined calls).
    pub calls: u64,
    /// Per syscall.
    pub by_syscall: BTreeMap<String, Row>,
    /// Checked values confirmed by a sequential or reordered order of atomic calls.
    pub exact: u64,
    /// Checked values confirmed only with a held reservation (P3).
    pub consistent: u64,
    /// Matched descriptor numbers the kernel chose (lowest-free allocations: opens, pipes,
    /// sockets, accepts, dup, F_DUPFD, SCM_RIGHTS, CLONE_PIDFD; not dup2/dup3 targets).
    pub fds_predicted: u64,
    /// Matched close-on-exec bits (F_GETFD).
    pub cloexec_bits: u64,
    /// Matched EBADF results.
    pub ebadf: u64,
    /// Nodes the reordering search visited (its cost).
    pub search_nodes: u64,
    /// Results that needed a reordering of overlapping calls.
    pub reordered: u64,
    /// Calls of unknown syscalls (by name).
    pub unsupported: BTreeMap<String, u64>,
    /// Disagreements in tables that may change invisibly (io_uring): reported, not counted.
    pub drift: u64,
    /// Resynchronisations of the model to the log (after a mismatch, drift or inheritance).
    pub resyncs: u64,
    /// Descriptors found open without any visible creation, taken as inherited because the
    /// initial state was assumed (no meta file, P10).
    pub inherited: u64,
    /// Disagreements on shared tables the bounded search could not decide (its node budget,
    /// [`crate::engine::search::MAX_OPS`] or the look-ahead ran out before it had tried every
    /// order): reported, not counted as mismatches.
    pub undecided: u64,
    /// The first undecided disagreements.
    pub first_undecided: Vec<Mismatch>,
    /// Calls strace's fault injection replaced (` (INJECTED)`): never run by the kernel,
    /// skipped.
    pub injected: u64,
    /// Descriptor arguments of successful calls checked open and, where `fdget` looks them
    /// up, not O_PATH (P15).
    pub fd_uses: u64,
    /// EBADF answers of calls with descriptor arguments (besides close, the dup family and
    /// fcntl's descriptor commands) that the model explains: an argument closed, negative, or
    /// an O_PATH file where `fdget` looks it up; or pidfd_getfd's target descriptor absent
    /// from the target's table. Included in `ebadf`.
    pub ebadf_args: u64,
    /// Of `ebadf_args`, those explained by an O_PATH file alone.
    pub ebadf_opath: u64,
    /// Failed calls whose errno comes after their descriptor lookups, their descriptor
    /// arguments checked valid.
    pub failed_fd_uses: u64,
    /// pidfd_getfd target descriptors checked in the table of the pidfd's process.
    pub remote_fd_args: u64,
    /// Calls whose descriptor arguments the log cannot decide (reported, never mismatches),
    /// by reason.
    pub fd_args_unchecked: BTreeMap<String, u64>,
    /// Descriptors closed by close-on-exec at execve.
    pub closed_on_exec: u64,
    /// Processes (the root and every non-thread child).
    pub processes: u64,
    /// Threads (CLONE_THREAD children).
    pub threads: u64,
    /// Tables that held an io_uring instance.
    pub drifting_tables: u64,
    /// Lines that could not be read.
    pub errors: u64,
    /// The first mismatches.
    pub first_mismatches: Vec<Mismatch>,
    /// The first drift events.
    pub first_drift: Vec<Mismatch>,
    /// The first unreadable lines: (line, message).
    pub first_errors: Vec<(u64, String)>,
    /// Things worth saying once (inherited fds, learnt limits, truncated arrays...).
    pub notes: Vec<String>,
}

impl Stats {
    /// The row of `name`.
    pub fn row(&mut self, name: &str) -> &mut Row {
        if !self.by_syscall.contains_key(name) {
            self.by_syscall.insert(name.to_string(), Row::default());
        }
        self.by_syscall.get_mut(name).expect("inserted above")
    }

    /// The counters of `name` (zero if it never occurred).
    pub fn of(&self, name: &str) -> Row {
        self.by_syscall.get(name).cloned().unwrap_or_default()
    }

    /// Sums over every syscall.
    pub fn total(&self) -> Row {
        let mut t = Row::default();
        for r in self.by_syscall.values() {
            t.replayed += r.replayed;
            t.checked += r.checked;
            t.matched += r.matched;
            t.mismatched += r.mismatched;
            t.skipped += r.skipped;
        }
        t
    }

    /// Calls of unknown syscalls.
    pub fn unsupported_calls(&self) -> u64 {
        self.unsupported.values().sum()
    }

    /// Records a note once.
    pub fn note(&mut self, s: impl Into<String>) {
        let s = s.into();
        if self.notes.len() < 50 && !self.notes.contains(&s) {
            self.notes.push(s);
        }
    }

    /// Records an unreadable line.
    pub fn error(&mut self, line: u64, msg: String) {
        self.errors += 1;
        if self.first_errors.len() < KEEP {
            self.first_errors.push((line, msg));
        }
    }
}

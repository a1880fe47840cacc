//! New tasks whose first stop came before their creator's clone event.
//!
//! A new task is kept stopped until its creator's event names it: the event says which table
//! it has (a copy, or the creator's shared). A creator killed after the kernel made the copy
//! and before the event (by `exit_group` or an exec of another of its threads, or `SIGKILL`
//! from another process) never reports it: a task with a fatal signal pending skips ptrace
//! stops, and one killed inside the event stop cannot be asked for the new id. The child is
//! then claimed here, from the kernel: its table read from `/proc` (or, when `kcmp` finds a
//! task on the same kernel table, shared with that task's), and started.
//!
//! A child is claimed once no task that can still report it is left. Its creator is a task
//! of its thread group (a thread), or of its parent's group or a sibling process (a process;
//! a sibling with `CLONE_PARENT`), and is inside a clone call until its event: so such a task
//! blocked in another call, or gone, is not the creator. What a running task runs cannot be
//! read without stopping it; one whose user time grew between two checks left the kernel
//! meanwhile, so it is not the creator either (a creator returns only after its event). A
//! claim thus waits two checks for a task that computes.
//!
//! Asking costs procfs reads (tens of microseconds each on a small guest), and the creator's
//! event nearly always follows within microseconds, so nothing is asked when a child stops
//! early: the ptrace thread runs a timer every [`EARLY_WAIT`] while early tasks remain
//! (`events::run`), and asks when it fires. Without the timer (it could not be made), the
//! check runs when a child stops early and whenever a task exits or is reaped.

use std::time::Duration;

/// The period of the timer that checks early tasks: an early task waits up to this long for
/// its creator's event before the supervisor first asks the kernel whether the creator can
/// still report it.
pub const EARLY_WAIT: Duration = Duration::from_millis(20);

use super::{Proc, State, Task, key_of};
use crate::procfs::{self, Cloning};
use crate::sys;
use rustc_hash::FxHashMap as HashMap;

impl State {
    /// `tid` stopped before its creator's event: kept stopped (see the module's text for
    /// when it is claimed).
    pub(super) fn stopped_early(&mut self, tid: i32) {
        self.early.insert(tid);
        self.stats.early += 1;
        if !self.early_timer {
            self.claim_early();
        }
    }

    /// A task exited or was reaped: without the timer, early tasks are checked now.
    pub(super) fn after_exit(&mut self) {
        if !self.early_timer {
            self.claim_early();
        }
    }

    /// Claims every early task whose creator can no longer report it.
    pub fn claim_early(&mut self) {
        if self.early.is_empty() {
            self.early_utime.clear();
            return;
        }
        // The user time of running tasks at the previous check: a task whose user time grew
        // since left the kernel meanwhile, so it was in no clone call when that check found
        // the child early (a creator returns only after its event, which claims the child).
        let before = std::mem::take(&mut self.early_utime);
        let mut now: HashMap<i32, u64> = HashMap::default();
        let mut orphans = Vec::new();
        for &c in &self.early {
            self.stats.early_checks += 1;
            // A process (a thread-group leader: a signal-0 `tgkill(c, c)` finds it) was made
            // by a task of its parent's group or, with `CLONE_PARENT`, of a sibling; a
            // thread, by one of its own group.
            let leader =
                sys::in_thread_group(c, c).unwrap_or_else(|| procfs::tgid_of(c) == Some(c));
            let (tgid, parent) = if leader {
                match procfs::state_of(c) {
                    Some((_, ppid)) => (c, Some(ppid)),
                    // Gone: its exit status removes it.
                    None => continue,
                }
            } else {
                match procfs::tgid_of(c) {
                    Some(tgid) => (tgid, None),
                    None => continue,
                }
            };
            let mut parents: HashMap<i32, Option<i32>> = HashMap::default();
            let creator_left = self.tasks.values().any(|t| {
                if t.exiting {
                    return false;
                }
                let could = match parent {
                    None => t.tgid == tgid,
                    Some(p) => {
                        t.tgid == p
                            || *parents
                                .entry(t.tgid)
                                .or_insert_with(|| procfs::state_of(t.tgid).map(|(_, pp)| pp))
                                == Some(p)
                    }
                };
                could
                    && match procfs::may_be_cloning(t.tid) {
                        Cloning::No => false,
                        Cloning::Yes => true,
                        Cloning::Running(u) => {
                            now.insert(t.tid, u);
                            before.get(&t.tid).is_none_or(|&b| u <= b)
                        }
                    }
            });
            if !creator_left {
                orphans.push((c, tgid));
            }
        }
        self.early_utime = now;
        for (c, tgid) in orphans {
            self.early.remove(&c);
            self.stats.claimed += 1;
            self.claim(c, tgid);
        }
    }

    /// Takes `tid` (of thread group `tgid`, stopped) into the supervisor without its
    /// creator's event, and starts it.
    fn claim(&mut self, tid: i32, tgid: i32) {
        // On a table another task uses (a CLONE_FILES child, or a thread sharing its
        // creator's table): share it; else a table of its own, read from the kernel.
        let sharer = self
            .tasks
            .values()
            .filter(|t| !t.exiting)
            .find(|t| sys::same_files(t.tid, tid) == Some(true))
            .map(|t| t.tid);
        let (files, own) = match sharer.and_then(|s| self.tasks.get_mut(&s)) {
            Some(s) => {
                let f = s.files.share();
                self.tables.entry(key_of(&f)).or_default().members += 1;
                (f, false)
            }
            None => {
                let f = super::Fdt::new();
                self.tables.insert(key_of(&f), super::table::Table::new());
                (f, true)
            }
        };
        let thread = tgid != tid;
        if !self.procs.contains_key(&tgid) {
            let dumpable = procfs::state_of(tid)
                .and_then(|(_, ppid)| self.procs.get(&ppid))
                .is_none_or(|p| p.dumpable);
            let nofile = sys::nofile_of(tid).unwrap_or((1024, 1024));
            self.procs.insert(tgid, Proc::new(nofile, dumpable));
        }
        let shares = thread || !own;
        // The options it inherited are not known: `start` sets them either way.
        self.tasks
            .insert(tid, Task::new(tid, tgid, files, !shares, shares));
        self.stats.tasks += 1;
        if own {
            self.rebuild(tid);
        }
        self.start(tid);
    }
}

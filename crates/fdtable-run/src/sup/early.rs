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
//! of its thread group (a thread) or of its parent's (a process), and is inside a clone call
//! until its event: so a task of that group blocked in another call, or gone, is not the
//! creator. The check runs when a child stops early and whenever a task exits or is reaped.
//! A creator that used `CLONE_PARENT` is a sibling, not a task of the parent's group: such a
//! child is claimed only once the parent's group has no task left in a clone call.

use super::{Proc, State, Task, key_of};
use crate::procfs;
use crate::sys;

impl State {
    /// `tid` stopped before its creator's event: kept stopped, and claimed at once if no
    /// creator is left to report it.
    pub(super) fn stopped_early(&mut self, tid: i32) {
        self.early.insert(tid);
        self.claim_early();
    }

    /// Claims every early task whose creator can no longer report it.
    pub(super) fn claim_early(&mut self) {
        if self.early.is_empty() {
            return;
        }
        let mut orphans = Vec::new();
        for &c in &self.early {
            match procfs::ids_of(c) {
                // Gone: its exit status removes it.
                None => {}
                Some((tgid, ppid)) => {
                    let group = if tgid != c { tgid } else { ppid };
                    let creator_left = self
                        .tasks
                        .values()
                        .any(|t| t.tgid == group && !t.exiting && procfs::may_be_cloning(t.tid));
                    if !creator_left {
                        orphans.push((c, tgid));
                    }
                }
            }
        }
        for (c, tgid) in orphans {
            self.early.remove(&c);
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
            let dumpable = procfs::ids_of(tid)
                .and_then(|(_, ppid)| self.procs.get(&ppid))
                .is_none_or(|p| p.dumpable);
            self.procs.insert(
                tgid,
                Proc {
                    nofile: sys::nofile_of(tid).unwrap_or((1024, 1024)),
                    rlimit_pending: 0,
                    dumpable,
                    image: None,
                    reported: false,
                },
            );
        }
        let shares = thread || !own;
        self.tasks.insert(
            tid,
            Task {
                tid,
                tgid,
                files,
                inflight: None,
                call: -1,
                touched: Vec::new(),
                started: false,
                raw: false,
                exiting: false,
                // The options it inherited are not known: `start` sets them either way.
                exec_events: !shares,
                exec_wanted: shares,
            },
        );
        self.stats.tasks += 1;
        if own {
            self.rebuild(tid);
        }
        self.start(tid);
    }
}

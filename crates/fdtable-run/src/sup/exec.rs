//! `execve` and `execveat`: closing the close-on-exec descriptors in the library exactly when
//! the kernel does, which is when an exec succeeds.
//!
//! Two ways to learn that an exec ran:
//!
//! - **The exec event** (`PTRACE_EVENT_EXEC`), for the program's first exec and for tasks of
//!   a process with several threads or of a table several tasks share: there an exec changes
//!   a thread's id (`de_thread`) and unshares the table, which only the event shows.
//! - **Settled at the task's next stop** (`Settle::Exec`), for every other exec: a task
//!   alone on its table, in a process of one thread. The call is notified and continued; no
//!   other task can change or read the table meanwhile, and the task's next notification or
//!   event proves the call over. One kernel probe then tells whether it ran:
//!   - with two or more close-on-exec descriptors, the highest: an exec that ran closed it,
//!     and nothing installs there (a `binfmt_misc` interpreter's descriptor takes the lowest
//!     free number, at most the lowest of them);
//!   - with one, `n`: closed means it ran; installed means it did not, unless the library
//!     has no free number below `n`, where the interpreter's descriptor would go: then `n`'s
//!     close-on-exec bit, in `fdinfo`, tells the interpreter's (clear) from the old (set);
//!   - with none, the table is the same whether it ran or not, but for an interpreter's
//!     descriptor at the lowest free number, which is probed.
//!
//! An exec event costs a ptrace stop (about 25 µs per process on the project's VM); a
//! notification costs a round trip on the task's CPU and the probe a `kcmp`.

use super::table::{Expect, Table};
use super::{State, key_of};
use crate::sys;
use fdtable_syscalls::consts::O_CLOEXEC;
use nix::sys::ptrace;
use nix::unistd::Pid;

/// Why a process that executed a binary the supervisor may not read is killed.
const UNREADABLE: &str = "executed a binary the supervisor may not read (the process is no \
     longer dumpable, so a supervisor without CAP_SYS_PTRACE cannot probe its table)";

/// What the kernel's table says of an exec settled at the task's next stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ran {
    Yes,
    No,
    /// The table is the same either way (no close-on-exec descriptor).
    Unseen,
    /// The task is gone.
    Gone,
    /// It ran a binary the supervisor may not read: the process is no longer dumpable, and
    /// no probe reaches its table any more.
    Unreadable,
}

impl State {
    /// `execve` or `execveat` of `tid`, notified: settled by its exec event if it has them,
    /// else at its next stop.
    pub fn exec_call(&mut self, tid: i32) {
        let Some(task) = self.tasks.get(&tid) else {
            return;
        };
        if task.exec_events {
            // In flight until its event (or, if it fails, its next stop): the table may not
            // be settled through this task meanwhile, whose kernel table the exec replaces.
            self.in_flight(tid, super::settle::Settle::Numbers, Vec::new());
            return;
        }
        // A process that cleared its dumpable flag (kept by the supervisor): its image now,
        // for an exec that leaves the table as it was (`exec_unseen`).
        if let Some(p) = self.procs.get_mut(&task.tgid).filter(|p| !p.dumpable) {
            p.image = crate::mem::image_id(tid);
        }
        self.in_flight(tid, super::settle::Settle::Exec, Vec::new());
    }

    /// An exec that left the table as it was, by a process that cleared its dumpable flag:
    /// a new image (new `AT_RANDOM` bytes) shows that it ran, and the kernel made the process
    /// dumpable again. Any other process is not affected by whether it ran.
    fn exec_unseen(&mut self, tid: i32) {
        let Some(p) = self
            .tasks
            .get(&tid)
            .and_then(|t| self.procs.get_mut(&t.tgid))
        else {
            return;
        };
        if let Some(before) = p.image.take()
            && crate::mem::image_id(tid).is_some_and(|now| now != before)
        {
            p.dumpable = true;
        }
    }

    /// Settles `tid`'s exec at its next stop; `single`: the task is alone on its table.
    pub fn settle_exec(&mut self, tid: i32, single: bool) {
        if !single {
            // A task without exec events is alone on its table (the clone event that shares
            // a table turns its events on). Should that ever not hold, nothing tells whether
            // the kernel unshared the table: the process is not guessed about.
            self.lose(
                tid,
                "an exec on a shared table was made without its exec event".into(),
            );
            return;
        }
        let outcome = match self.exec_outcome(tid) {
            Ran::Yes => self.exec_ran(tid, false),
            Ran::Unseen => self.interpreter_fd(tid),
            other => other,
        };
        match outcome {
            Ran::Unreadable => self.lose(tid, UNREADABLE.into()),
            Ran::Unseen => self.exec_unseen(tid),
            _ => {}
        }
        if let Some(p) = self
            .tasks
            .get(&tid)
            .and_then(|t| self.procs.get_mut(&t.tgid))
        {
            p.image = None;
        }
    }

    /// What a probe that found nothing says: the task is gone, or it is alive and no longer
    /// readable by the supervisor, which only an exec of a binary it cannot read does to a
    /// traced task.
    fn unprobeable(&self, tid: i32) -> Ran {
        if crate::procfs::tgid_of(tid).is_some() {
            Ran::Unreadable
        } else {
            Ran::Gone
        }
    }

    /// Kills `tid`'s process, whose table the supervisor can no longer keep, with a note.
    pub(super) fn lose(&mut self, tid: i32, why: String) {
        let tgid = self.tasks.get(&tid).map_or(tid, |t| t.tgid);
        self.note(format!("process {tgid}: {why}; killed"));
        let _ = sys::kill(tgid, libc::SIGKILL);
    }

    fn exec_outcome(&mut self, tid: i32) -> Ran {
        let Some(task) = self.tasks.get(&tid) else {
            return Ran::Gone;
        };
        let mut lowest = None;
        let mut highest = None;
        for o in task.files.iter().filter(|o| o.cloexec) {
            lowest.get_or_insert(o.fd);
            highest = Some(o.fd);
        }
        let (Some(lo), Some(hi)) = (lowest, highest) else {
            return Ran::Unseen;
        };
        let free_below = lo > 0
            && task.files.alloc_fd(0, lo as u64, 0).is_ok_and(|m| {
                task.files.put_unused_fd(m);
                true
            });
        // The highest: with two or more it is never where an interpreter's descriptor goes.
        let n = hi;
        match self.probe(tid, n) {
            Some(false) => Ran::Yes,
            Some(true) if n != lo || free_below => Ran::No,
            // The only close-on-exec descriptor at the lowest number an interpreter's
            // descriptor could take: its bit says which it is now.
            Some(true) => match self.kernel_flags(tid, n) {
                Some(f) if f & O_CLOEXEC != 0 => Ran::No,
                Some(_) => Ran::Yes,
                None => self.unprobeable(tid),
            },
            None => self.unprobeable(tid),
        }
    }

    /// An exec of `tid` ran: the library does what the kernel did (close-on-exec
    /// descriptors closed, the table unshared, an interpreter's descriptor installed);
    /// `busy`: other tasks may have changed the table meanwhile, so it is read from the
    /// kernel.
    fn exec_ran(&mut self, tid: i32, busy: bool) -> Ran {
        let Some(task) = self.tasks.get_mut(&tid) else {
            return Ran::Gone;
        };
        let tgid = task.tgid;
        let old_key = key_of(&task.files);
        if let Err(e) = task.files.exec() {
            self.note(format!("process {tid}: exec in the library failed: {e}"));
        }
        let new_key = self.key(tid).unwrap_or(old_key);
        if new_key != old_key {
            // The library unshared (another process still uses the old table).
            self.leave(old_key, tid);
            self.tables.insert(new_key, Table::new());
        }
        // The kernel makes a process dumpable again at exec (a binary it may read).
        if let Some(p) = self.procs.get_mut(&tgid) {
            p.dumpable = true;
        }
        let ran = if busy {
            self.rebuild(tid);
            Ran::Yes
        } else {
            self.interpreter_fd(tid)
        };
        if self.cfg.check_tables && ran != Ran::Unreadable {
            self.check_task(tid, true);
        }
        ran
    }

    /// A `binfmt_misc` interpreter with the open-binary flag gets the program's descriptor
    /// at the lowest free number: probed there. `Yes` if one was installed, `Unseen` if not,
    /// or what an unanswered probe means.
    fn interpreter_fd(&mut self, tid: i32) -> Ran {
        let end = self.nofile(tid).max(1);
        let Some(task) = self.tasks.get(&tid) else {
            return Ran::Gone;
        };
        let Ok(n) = task.files.alloc_fd(0, end, 0) else {
            return Ran::Unseen;
        };
        let probe = self.probe(tid, n);
        if probe == Some(true) {
            if !self.adopt(tid, n, Expect::default(), true) {
                if let Some(task) = self.tasks.get(&tid) {
                    task.files.put_unused_fd(n);
                }
                return Ran::Gone;
            }
            if let Some(p) = self
                .tasks
                .get(&tid)
                .and_then(|t| self.procs.get_mut(&t.tgid))
            {
                p.dumpable = true;
            }
        } else if let Some(task) = self.tasks.get(&tid) {
            task.files.put_unused_fd(n);
        }
        match probe {
            Some(true) => Ran::Yes,
            Some(false) => Ran::Unseen,
            None => self.unprobeable(tid),
        }
    }

    /// The exec event of `tid` (a task with exec events on).
    pub(super) fn on_exec(&mut self, tid: i32) {
        let Some(former) = super::events::event_message(tid, libc::PTRACE_EVENT_EXEC) else {
            // Killed since the stop was reported: its exit is reported in turn.
            return;
        };
        let former = former as i32;
        // The exec replaced the task's table (unshared, its close-on-exec descriptors
        // closed): what other tasks' calls left unsettled in the old one says nothing about
        // it, and no probe through this task reaches the old one. It is read from the kernel.
        if let Some(k) = self.tasks.get(&former).map(|t| key_of(&t.files))
            && let Some(t) = self.tables.get_mut(&k)
        {
            t.stale = true;
        }
        if former != tid {
            // A thread other than the leader executed: it takes the leader's id.
            if let Some(old) = self.tasks.remove(&tid) {
                let k = key_of(&old.files);
                drop(old);
                self.leave(k, tid);
            }
            if let Some(mut t) = self.tasks.remove(&former) {
                t.tid = tid;
                self.tasks.insert(tid, t);
            }
        }
        self.task_back(tid);
        let Some(task) = self.tasks.get(&tid) else {
            let _ = sys::resume(tid, 0);
            return;
        };
        let tgid = task.tgid;
        // de_thread: every other thread of the process is gone; their handles go first, so
        // that a table only they shared is not copied.
        let others: Vec<i32> = self
            .tasks
            .values()
            .filter(|t| t.tid != tid && t.tgid == tgid)
            .map(|t| t.tid)
            .collect();
        for t in others {
            if let Some(mut old) = self.tasks.remove(&t) {
                let k = key_of(&old.files);
                let f = old.inflight.take();
                drop(old);
                self.drop_in_flight(k, f);
                self.leave(k, t);
            }
        }
        let Some(task) = self.tasks.get_mut(&tid) else {
            let _ = sys::resume(tid, 0);
            return;
        };
        if std::mem::replace(&mut task.raw, false) {
            // The program's first exec: its table is what it inherited.
            if let Some(p) = self.procs.get_mut(&tgid)
                && let Some(l) = sys::nofile_of(tgid)
            {
                p.nofile = l;
            }
            self.rebuild(tid);
            self.inherited(tid);
        } else {
            let key = key_of(&task.files);
            let busy = self.tables.get(&key).is_some_and(|t| {
                t.members > 1
                    || t.inflight > 0
                    || !t.uncertain.is_empty()
                    || !t.bits.is_empty()
                    || t.stale
            });
            self.exec_ran(tid, busy);
        }
        // One thread and a table of its own now: later execs are settled without events.
        self.set_exec_events(tid, false);
        if self.probe(tid, 0).is_none() && self.unprobeable(tid) == Ran::Unreadable {
            self.lose(tid, UNREADABLE.into());
        }
        let _ = sys::resume(tid, 0);
    }

    /// Turns `tid`'s exec events on or off; the task must be in a ptrace stop.
    pub(super) fn set_exec_events(&mut self, tid: i32, on: bool) {
        let exit_events = self.cfg.exit_events();
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        if task.exec_events != on
            && ptrace::setoptions(Pid::from_raw(tid), super::events::options(exit_events, on))
                .is_ok()
        {
            task.exec_events = on;
        }
    }
}

//! Task lifecycle: root, children (P4, P5), vfork (P6), execve (P7), exits and pid reuse
//! (P8), RLIMIT_NOFILE (P11).
//!
//! A table belongs to whatever the clone flags say, never to a pid: `CLONE_FILES` shares the
//! parent's table (a library `share` handle), anything else copies it (library `fork`, which
//! drops reserved slots as `dup_fd` does). RLIMIT_NOFILE belongs to the thread group.
//! A child is created at its first line or at its parent's clone result, whichever comes
//! first, from the parent's table as it is then: the parent is inside clone, so only its
//! sibling threads could have changed the table meanwhile.

use super::plan::{Plan, plan};
use super::step::{Fdt, force_install};
use super::table::Table;
use super::{Engine, Group, Lookahead, Task};
use crate::decode::{CloneFlags, Decoded, Kind, Op};
use crate::parse::{Call, Ret, join::shorten};
use crate::stats::Mismatch;
use fdtable::Errno;

impl Engine {
    /// Makes sure `tid` is a live task: a new tid is the child of its pre-pass birth, or the
    /// root, or (if neither) a task of unknown origin with the initial state.
    pub(crate) fn ensure_task(&mut self, tid: u32, line: u64) {
        if self.tasks.contains_key(&tid) {
            return;
        }
        let birth = self.births.get_mut(&tid).and_then(|q| q.pop_front());
        if let Some(b) = birth {
            let parent = self.resolve(b.parent);
            if self.tasks.contains_key(&parent) {
                self.create_child(parent, tid, b.flags, b.line);
                self.born_early.insert(b.line);
                return;
            }
        }
        if self.root_made {
            self.stats.note(format!(
                "task {tid} (line {line}) appears without a clone that created it; \
                 it starts from the initial descriptors"
            ));
        }
        self.create_root(tid);
    }

    /// The task a (possibly placeholder) tid names now.
    pub(crate) fn resolve(&self, tid: u32) -> u32 {
        self.aliases.get(&tid).copied().unwrap_or(tid)
    }

    fn create_root(&mut self, tid: u32) {
        self.root_made = true;
        self.dying.remove(&tid);
        let mut files = Fdt::new();
        for &fd in &self.init.fds.clone() {
            force_install(&mut files, fd, Kind::Inherited, 0);
            self.touched.insert(fd);
        }
        let table = self.tables.insert(Table::new(files));
        let group = self.groups.insert(Group {
            nofile: self.init.nofile,
            members: vec![tid],
        });
        self.stats.processes += 1;
        self.tasks.insert(
            tid,
            Task {
                group,
                table,
                pending: None,
                born: None,
            },
        );
    }

    fn create_child(&mut self, parent: u32, child: u32, flags: CloneFlags, born: u64) {
        let (pgroup, ptable) = {
            let p = &self.tasks[&parent];
            (p.group, p.table)
        };
        let table = if flags.files {
            if let Some(t) = self.tables.get_mut(ptable) {
                t.add_sharer();
            }
            ptable
        } else {
            let Some(t) = self.tables.get(ptable) else {
                return self.create_root(child);
            };
            let copy = match t.files.fork() {
                Ok(f) => f,
                Err(e) => {
                    self.stats
                        .note(format!("copying the table for task {child} failed: {e:?}"));
                    Fdt::new()
                }
            };
            let mut nt = Table::new(copy);
            nt.drifting = t.drifting;
            nt.blind = t.blind;
            nt.changed = born;
            let drifting = nt.drifting;
            let i = self.tables.insert(nt);
            if drifting {
                self.drifted.insert(i);
            }
            i
        };
        let group = if flags.thread {
            if let Some(g) = self.groups.get_mut(pgroup) {
                g.members.push(child);
            }
            self.stats.threads += 1;
            pgroup
        } else {
            let nofile = self
                .groups
                .get(pgroup)
                .map_or(self.init.nofile, |g| g.nofile);
            self.stats.processes += 1;
            self.groups.insert(Group {
                nofile,
                members: vec![child],
            })
        };
        if let Some(old) = self.tasks.remove(&child) {
            self.drop_task(child, old);
        }
        self.dying.remove(&child);
        self.tasks.insert(
            child,
            Task {
                group,
                table,
                pending: None,
                born: Some(born),
            },
        );
    }

    /// `+++ exited` / `+++ killed`: the task is gone.
    pub(crate) fn remove_task(&mut self, tid: u32) {
        self.dying.remove(&tid);
        if let Some(t) = self.tasks.remove(&tid) {
            self.drop_task(tid, t);
        }
    }

    fn drop_task(&mut self, tid: u32, t: Task) {
        if let Some(p) = &t.pending {
            self.forget_op(t.table, p.id);
        }
        self.leave_table(t.table);
        if let Some(g) = self.groups.get_mut(t.group) {
            g.members.retain(|&m| m != tid);
            if g.members.is_empty() {
                self.groups.remove(t.group);
            }
        }
    }

    /// A task stops using table `i`.
    fn leave_table(&mut self, i: usize) {
        let empty = self.tables.get_mut(i).is_some_and(|t| t.remove_sharer());
        if empty {
            self.tables.remove(i);
        } else if let Some(t) = self.tables.get_mut(i)
            && t.sharers() == 1
        {
            t.hist.commit();
        }
    }

    /// A call in flight will never return (its task left): forget it. If it was placed ahead
    /// of its result, its effect stays and the history is committed.
    fn forget_op(&mut self, table: usize, id: u64) {
        if let Some(t) = self.tables.get_mut(table)
            && t.hist.ops.get(&id).is_some_and(|o| !o.returned)
        {
            if t.hist.seq.iter().any(|p| p.id == id) {
                t.hist.commit();
            }
            t.hist.ops.remove(&id);
        }
    }

    pub(crate) fn abandon(&mut self, id: u64, tid: u32) {
        if let Some(t) = self.tasks.get_mut(&tid)
            && t.pending.as_ref().is_some_and(|p| p.id == id)
        {
            t.pending = None;
            let table = t.table;
            self.forget_op(table, id);
        }
    }

    /// The placeholder task (stderr mode) turns out to be `to`.
    pub(crate) fn rename(&mut self, from: u32, to: u32) {
        if let Some(t) = self.tasks.remove(&from) {
            if let Some(g) = self.groups.get_mut(t.group) {
                for m in &mut g.members {
                    if *m == from {
                        *m = to;
                    }
                }
            }
            self.tasks.insert(to, t);
        }
        self.aliases.insert(from, to);
    }

    /// clone / clone3 / fork / vfork.
    pub(crate) fn clone_call(&mut self, c: &Call, d: &Decoded, look: &mut dyn Lookahead) {
        let Op::Clone { flags, .. } = d.op else {
            return;
        };
        let Ret::Val(child) = c.ret else {
            return;
        };
        let Ok(child) = u32::try_from(child) else {
            return;
        };
        if child == 0 {
            return;
        }
        let parent = c.entry_tid;
        // Created already at its first line (P5), maybe even gone already.
        let already = self.born_early.remove(&c.line);
        if !already {
            // Consume the pre-pass record of this birth (the child has not printed yet).
            if let Some(q) = self.births.get_mut(&child)
                && let Some(pos) = q.iter().position(|b| b.line == c.line)
            {
                q.remove(pos);
            }
            self.create_child(parent, child, flags, c.line);
            // The child's copy is made before the pidfd exists (copy_files runs before
            // pidfd_prepare): if the search already placed the pidfd in the parent's table
            // (pulled forward while the clone was in flight), the copy must not have it.
            if let Op::Clone {
                pidfd: Some(fd), ..
            } = d.op
                && !flags.files
                && self.pidfd_placed(parent, c.id)
                && let Some(t) = self.tasks.get(&child).map(|t| t.table)
                && let Some(t) = self.tables.get_mut(t)
            {
                let _ = t.files.close_fd(fd);
            }
        }
        if flags.pidfd {
            match plan(&d.op, c.ret, &[]) {
                Plan::Steps(s) if !s.is_empty() => self.table_op(c, d, look),
                _ => {
                    self.stats.row(&c.name).skipped += 1;
                    self.stats.note(format!(
                        "line {}: CLONE_PIDFD without a printed pidfd",
                        c.line
                    ));
                }
            }
        }
    }

    /// Whether call `id` of `parent` already has steps placed in its table's linearization.
    fn pidfd_placed(&self, parent: u32, id: u64) -> bool {
        self.tasks
            .get(&parent)
            .and_then(|p| self.tables.get(p.table))
            .and_then(|t| t.hist.ops.get(&id))
            .is_some_and(|o| o.placed > 0)
    }

    /// unshare(CLONE_FILES): a private copy if the table is shared.
    pub(crate) fn unshare(&mut self, c: &Call, files: bool) {
        if !files || !c.ret.is_ok() {
            return;
        }
        let Some(task) = self.tasks.get(&c.entry_tid) else {
            return;
        };
        let ti = task.table;
        self.stats.row(&c.name).replayed += 1;
        let Some(t) = self.tables.get_mut(ti) else {
            return;
        };
        t.hist.commit();
        match t.detach() {
            Some(mut h) => {
                if let Err(e) = h.unshare() {
                    self.stats.note(format!(
                        "line {}: unshare failed in the library: {e:?}",
                        c.line
                    ));
                }
                let (drifting, blind) = (t.drifting, t.blind);
                self.move_to_new_table(c.entry_tid, h, drifting, blind, c.line);
                self.leave_table_commit(ti);
            }
            None => {
                let _ = t.files.unshare();
            }
        }
    }

    fn leave_table_commit(&mut self, ti: usize) {
        if let Some(t) = self.tables.get_mut(ti)
            && t.sharers() == 1
        {
            t.hist.commit();
        }
    }

    fn move_to_new_table(&mut self, tid: u32, files: Fdt, drifting: bool, blind: bool, line: u64) {
        let mut nt = Table::new(files);
        nt.drifting = drifting;
        nt.blind = blind;
        nt.changed = line;
        let i = self.tables.insert(nt);
        if drifting {
            self.drifted.insert(i);
        }
        if let Some(t) = self.tasks.get_mut(&tid) {
            t.table = i;
        }
    }

    /// close_range(..., CLOSE_RANGE_UNSHARE): a private copy first, then the range.
    pub(crate) fn close_range_unshare(&mut self, c: &Call, op: &Op) {
        let Op::CloseRange { first, last, flags } = *op else {
            return;
        };
        let expect = match c.ret {
            Ret::Val(_) => Ok(()),
            Ret::Err(Errno::EINVAL) => Err(Errno::EINVAL),
            _ => {
                self.stats.row(&c.name).skipped += 1;
                return;
            }
        };
        let Some(task) = self.tasks.get(&c.entry_tid) else {
            return;
        };
        let ti = task.table;
        let Some(t) = self.tables.get_mut(ti) else {
            return;
        };
        t.hist.commit();
        let got = match t.detach() {
            Some(mut h) => {
                let r = h.close_range(first, last, flags);
                if h.is_shared() {
                    // The library refused before copying (EINVAL): the task keeps the table.
                    t.reattach(h);
                } else {
                    let (drifting, blind) = (t.drifting, t.blind);
                    self.move_to_new_table(c.entry_tid, h, drifting, blind, c.line);
                    self.leave_table_commit(ti);
                }
                r
            }
            None => {
                t.changed = c.line;
                t.files.close_range(first, last, flags)
            }
        };
        let row = self.stats.row(&c.name);
        row.replayed += 1;
        row.checked += 1;
        if got == expect {
            row.matched += 1;
            self.stats.exact += 1;
        } else {
            row.mismatched += 1;
            self.push_mismatch(
                c,
                fmt_unit(expect),
                fmt_unit(got),
                "close_range result differs",
            );
        }
    }

    /// execve / execveat.
    pub(crate) fn exec(&mut self, c: &Call) {
        if !c.ret.is_ok() {
            return;
        }
        let tid = c.entry_tid;
        let Some(task) = self.tasks.get(&tid) else {
            return;
        };
        let group = task.group;
        // de_thread: the other threads die without lines of their own.
        let others: Vec<u32> = self
            .groups
            .get(group)
            .map(|g| g.members.iter().copied().filter(|&m| m != tid).collect())
            .unwrap_or_default();
        for o in others {
            self.remove_task(o);
        }
        // A non-leader exec takes over the leader's tid.
        if c.tid != tid
            && let Some(t) = self.tasks.remove(&tid)
        {
            if let Some(g) = self.groups.get_mut(t.group) {
                for m in &mut g.members {
                    if *m == tid {
                        *m = c.tid;
                    }
                }
            }
            self.tasks.insert(c.tid, t);
        }
        let tid = c.tid;
        let Some(task) = self.tasks.get(&tid) else {
            return;
        };
        let ti = task.table;
        let Some(t) = self.tables.get_mut(ti) else {
            return;
        };
        t.hist.commit();
        self.stats.row(&c.name).replayed += 1;
        match t.detach() {
            // Another process shares the table (CLONE_FILES): exec unshares it.
            Some(mut h) => {
                let before = h.iter().count();
                if let Err(e) = h.exec() {
                    self.stats.note(format!(
                        "line {}: exec failed in the library: {e:?}",
                        c.line
                    ));
                }
                self.stats.closed_on_exec += before.saturating_sub(h.iter().count()) as u64;
                let blind = t.blind;
                let drifting = t.drifting;
                self.move_to_new_table(tid, h, drifting, blind, c.line);
                self.leave_table_commit(ti);
                self.refresh_drift(tid);
            }
            None => {
                t.changed = c.line;
                let before = t.files.iter().count();
                if let Err(e) = t.files.exec() {
                    self.stats.note(format!(
                        "line {}: exec failed in the library: {e:?}",
                        c.line
                    ));
                }
                self.stats.closed_on_exec += before.saturating_sub(t.files.iter().count()) as u64;
                self.refresh_drift(tid);
            }
        }
    }

    /// A table that no longer holds an io_uring instance stops drifting.
    fn refresh_drift(&mut self, tid: u32) {
        if let Some(task) = self.tasks.get(&tid)
            && let Some(t) = self.tables.get_mut(task.table)
            && t.drifting
            && !t.has_io_uring()
        {
            t.drifting = false;
        }
    }

    /// prlimit64 / setrlimit / getrlimit on RLIMIT_NOFILE.
    pub(crate) fn rlimit(
        &mut self,
        c: &Call,
        pid: Option<u32>,
        new: Option<u64>,
        old: Option<u64>,
    ) {
        if !c.ret.is_ok() {
            return;
        }
        let target = match pid {
            None => Some(c.entry_tid),
            Some(p) => {
                let p = self.resolve(p);
                self.tasks.contains_key(&p).then_some(p)
            }
        };
        let Some(group) = target.and_then(|t| self.tasks.get(&t)).map(|t| t.group) else {
            return;
        };
        self.stats.row(&c.name).replayed += 1;
        let Some(g) = self.groups.get_mut(group) else {
            return;
        };
        if let Some(old) = old
            && old != g.nofile
        {
            let msg = format!(
                "line {}: the log shows RLIMIT_NOFILE {} where the replay had {}; using the log's",
                c.line, old, g.nofile
            );
            g.nofile = old;
            self.stats.note(msg);
        }
        if let Some(new) = new
            && let Some(g) = self.groups.get_mut(group)
        {
            g.nofile = new;
        }
    }

    /// Records a mismatch (counted by the caller).
    pub(crate) fn push_mismatch(&mut self, c: &Call, log: String, library: String, _why: &str) {
        keep(&mut self.stats.first_mismatches, c, log, library);
    }
}

/// Records call `c`'s disagreement (the log's value and the library's) in `list`, one of the
/// report's first mismatches, drifts or undecided results, while it holds fewer than
/// [`crate::stats::KEEP`].
pub(crate) fn keep(list: &mut Vec<Mismatch>, c: &Call, log: String, library: String) {
    if list.len() < crate::stats::KEEP {
        list.push(Mismatch {
            line: c.line,
            tid: c.tid,
            call: format!("{}({})", c.name, shorten(&c.args)),
            log,
            library,
        });
    }
}

fn fmt_unit(r: Result<(), Errno>) -> String {
    match r {
        Ok(()) => "0".into(),
        Err(e) => format!("{e:?}"),
    }
}

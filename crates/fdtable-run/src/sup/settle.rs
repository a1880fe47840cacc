//! Settling what `CONTINUE`d calls did, from the kernel's table (never from the program's
//! memory): a task's next notification or ptrace event proves its previous call finished;
//! `kcmp` says whether a number is installed; `fdinfo` gives close-on-exec bits; a listing of
//! `/proc/<pid>/fd` gives a whole table when its copy was taken while others changed it.

use super::table::Expect;
use super::{Desc, Fdt, State, TableKey, key_of};
use crate::{procfs, sys};
use fdtable::{FdState, FileRef};
use fdtable_syscalls::consts::{O_CLOEXEC, O_PATH};
use std::os::fd::OwnedFd;

/// A `CONTINUE`d call whose task has not come back yet.
#[derive(Debug)]
pub struct InFlight {
    /// What settling it takes beyond the table's uncertain numbers.
    pub settle: Settle,
    /// The numbers it may change (left out of `--check-tables` until it settles; their
    /// `pending` mark is cleared when it does).
    pub touched: Vec<u32>,
}

/// What settling a call takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// Its numbers are in the table's uncertain set (creations, and on shared tables closes
    /// and dup targets), or it has nothing to settle (close-on-exec changes).
    Numbers,
    /// Descriptors installed at the lowest free numbers, how many only the call knew
    /// (`recvmsg` on a Unix socket, an unknown `ioctl`).
    Unbounded {
        /// Their close-on-exec bit, if the call's flags say (else read from `fdinfo`).
        cloexec: Option<bool>,
        /// The call (`--track-fds`).
        origin: u32,
    },
    /// Descriptors installed at the lowest free numbers and closed at any (a BPF syscall
    /// program): the table is reconciled with the kernel's (`reconcile`) when it settles.
    Anywhere,
    /// RLIMIT_NOFILE of process `pid` changed.
    Rlimit {
        /// The process.
        pid: i32,
        /// The caller is that process's only task: no decision of the process can have read
        /// the old limit and still be on its way to the kernel.
        alone: bool,
    },
    /// `UFFDIO_API` on this descriptor: the features the kernel enabled are checked.
    UffdApi {
        /// The userfaultfd.
        fd: u32,
    },
    /// `clone(CLONE_PIDFD)`: settled at the clone event, after the child's copy was taken.
    ClonePidfd,
    /// `clone3`: its flags were read from memory, as a hint only. Settled at the clone event,
    /// after the child's copy was taken (a pidfd nobody announced is found by probing); if
    /// the call returns without an event, a task it made untraced is looked for.
    Clone3,
    /// `pidfd_send_signal` on a descriptor the supervisor checked: its number must not change
    /// until the call is over.
    Pinned {
        /// The descriptor.
        fd: u32,
        /// The task's time on a CPU (ns) when its call was let run: once it has had
        /// [`crate::calls::process::PAST_THE_CALL_NS`] more, it is past the call.
        cpu_ns: u64,
    },
    /// `close_range(first, last, CLOSE_RANGE_CLOEXEC)` on a shared table: as `Numbers`, and
    /// a number in the range that another call installs meanwhile takes its bit from the
    /// kernel ([`super::table::Table::cloexec_ranges`]).
    CloexecRange {
        /// The range's first number.
        first: u32,
        /// Its last number.
        last: u32,
    },
    /// `execve` or `execveat` of a task without exec events: whether it ran is read from the
    /// kernel's table (`sup::exec`).
    Exec,
    /// `unshare(CLONE_FILES)` or `close_range(CLOSE_RANGE_UNSHARE)` on a shared table: if the
    /// kernel gave the task its own copy (the call can fail), the library does too and reads
    /// it from the kernel.
    Unshare,
}

impl State {
    /// Probes whether `n` is installed in `tid`'s kernel table.
    pub fn probe(&mut self, tid: i32, n: u32) -> Option<bool> {
        self.stats.probes += 1;
        sys::installed(tid, n)
    }

    /// The open flags of `tid`'s descriptor `n` (with `O_CLOEXEC` for its close-on-exec bit).
    pub fn kernel_flags(&mut self, tid: i32, n: u32) -> Option<u64> {
        self.stats.fdinfo += 1;
        procfs::fd_flags(tid, n)
    }

    /// `tid` made a new call or stopped at an event: its previous call has finished; settle it.
    pub fn task_back(&mut self, tid: i32) {
        self.settle_call(tid, false)
    }

    /// Settles `tid`'s call in flight; `clone_event`: the call is the clone whose event this
    /// is (so the child it made is traced).
    pub fn settle_call(&mut self, tid: i32, clone_event: bool) {
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        let Some(f) = task.inflight.take() else {
            return;
        };
        let key = key_of(&task.files);
        let single = {
            let t = self.tables.entry(key).or_default();
            t.inflight = t.inflight.saturating_sub(1);
            for n in &f.touched {
                if let Some(e) = t.uncertain.get_mut(n) {
                    e.pending.retain(|&p| p != tid);
                }
                unbusy(t, *n);
            }
            t.members <= 1
        };
        match f.settle {
            Settle::Unbounded { cloexec, origin } if single => {
                self.probe_upward(tid, cloexec, origin)
            }
            Settle::Rlimit { .. } => self.rlimit_over(f.settle),
            Settle::UffdApi { fd } => self.check_uffd(tid, fd),
            Settle::Exec => self.settle_exec(tid, single),
            Settle::Clone3 => {
                if !clone_event {
                    self.untraced(tid);
                }
                if single {
                    self.probe_upward(tid, Some(true), 0);
                }
            }
            Settle::Unshare => {
                // Still sharing only if another task of the table is seen to use the same
                // kernel table: a peer that is exiting (a `CLONE_FILES` child) answers nothing.
                let peers: Vec<i32> = self
                    .tasks
                    .values()
                    .filter(|t| t.tid != tid && key_of(&t.files) == key)
                    .map(|t| t.tid)
                    .collect();
                let alone = !peers.iter().any(|&p| sys::same_files(tid, p) == Some(true));
                if alone
                    && let Some(task) = self.tasks.get_mut(&tid)
                    && task.files.unshare().is_ok()
                {
                    let new = key_of(&task.files);
                    self.tables.insert(new, super::table::Table::new());
                    self.leave(key, tid);
                    // The copy was taken while other tasks changed the table.
                    self.rebuild(tid);
                    return;
                }
            }
            _ => {}
        }
        self.quiesce(key, tid);
    }

    /// When nothing of table `key` is in flight, probes every uncertain number and makes the
    /// library's table equal the kernel's; `tid` is a task using the table.
    pub fn quiesce(&mut self, key: TableKey, tid: i32) {
        let Some(t) = self.tables.get_mut(&key) else {
            return;
        };
        // A stale table is read whole from the kernel before its next use.
        if t.stale
            || t.inflight > 0
            || (t.uncertain.is_empty() && !t.unbounded && t.bits.is_empty())
        {
            return;
        }
        // Bits the kernel's order decides, read below before the uncertain numbers are
        // adopted: one of those numbers takes its bit from the kernel too, not from what its
        // call expected (a `dup3(O_CLOEXEC)` onto it that an `F_SETFD` ran after).
        let contested_bits = t.bits.clone();
        if !t.bits.is_empty() && !self.read_bits(key, tid) {
            return;
        }
        let Some(t) = self.tables.get_mut(&key) else {
            return;
        };
        if std::mem::replace(&mut t.unbounded, false) && !self.reconcile(tid) {
            // Read through a task that has let go of the table: a task that holds it
            // settles it later.
            if let Some(t) = self.tables.get_mut(&key) {
                t.unbounded = true;
            }
            return;
        }
        let Some(t) = self.tables.get_mut(&key) else {
            return;
        };
        let contended = std::mem::replace(&mut t.contended, false);
        let uncertain = std::mem::take(&mut t.uncertain);
        let mut free = Vec::new();
        for (n, mut e) in uncertain {
            match self.probe(tid, n) {
                Some(true) => {
                    if contested_bits.contains(&n) {
                        e.cloexec = None;
                    }
                    if !self.adopt(tid, n, e.clone(), contended)
                        && let Some(t) = self.tables.get_mut(&key)
                    {
                        t.uncertain.insert(n, e);
                        t.contended |= contended;
                    }
                }
                Some(false) => free.push((n, e)),
                // The task is gone; its table goes with it (or another task settles it), with
                // what is known of the order of its calls.
                None => {
                    if let Some(t) = self.tables.get_mut(&key) {
                        t.uncertain.insert(n, e);
                        t.contended |= contended;
                    }
                }
            }
        }
        if free.is_empty() {
            return;
        }
        // `kcmp` answers EBADF for every number of a task that has let go of its table (a
        // thread killed by another's `exit_group` does so without an exit stop, while the
        // table lives on in its other users): those answers say nothing about the table.
        let holds = self.holds_table(tid);
        for (n, e) in free {
            if holds {
                if let Some(task) = self.tasks.get(&tid) {
                    task.files.put_unused_fd(n);
                }
            } else if let Some(t) = self.tables.get_mut(&key) {
                t.uncertain.insert(n, e);
                t.contended |= contended;
            }
        }
    }

    /// Reads the close-on-exec bits of the numbers of table `key` that concurrent calls
    /// changed from the kernel, through `tid`, once nothing is in flight; false (the bits
    /// kept for a task that holds the table) if `tid` no longer does.
    fn read_bits(&mut self, key: TableKey, tid: i32) -> bool {
        let Some(t) = self.tables.get_mut(&key) else {
            return false;
        };
        let bits = std::mem::take(&mut t.bits);
        let mut read = Vec::with_capacity(bits.len());
        for &n in &bits {
            read.push((n, self.kernel_flags(tid, n)));
        }
        if !self.holds_table(tid) {
            if let Some(t) = self.tables.get_mut(&key) {
                t.bits = bits;
            }
            return false;
        }
        if let Some(task) = self.tasks.get(&tid) {
            for (n, f) in read {
                if let Some(f) = f {
                    let _ = task.files.set_close_on_exec(n, f & O_CLOEXEC != 0);
                }
            }
        }
        true
    }

    /// Whether `tid` still holds its kernel table, on a quiet table (nothing in flight): a
    /// number the library has installed is installed in the kernel (`kcmp`), or, with none
    /// installed, the task is not exiting (it lets go of its table after it is marked so).
    fn holds_table(&mut self, tid: i32) -> bool {
        let Some(anchor) = self.tasks.get(&tid).and_then(|t| t.files.next_open_fd(0)) else {
            return !procfs::exiting(tid);
        };
        self.probe(tid, anchor) == Some(true)
    }

    /// Installs, at `tid`'s reserved number `n`, what the kernel shows there. False (`n` left
    /// reserved) if its close-on-exec bit is the kernel's to say and `tid` can no longer show
    /// it (it let go of its table while exiting): a task that holds the table settles `n`.
    #[must_use]
    pub fn adopt(&mut self, tid: i32, n: u32, e: Expect, contended: bool) -> bool {
        let mut cloexec = e.cloexec;
        if let Some(t) = self.table(tid) {
            if t.busy.contains_key(&n) {
                // Another call in flight names `n` (an `F_SETFD` decided while `n` was
                // uncertain): it may run after the bit is read here, on what was installed
                // meanwhile, so the bit is read again once the table is quiet.
                t.bits.insert(n);
            }
            if t.bits.contains(&n) {
                // Its bit is the kernel's to say ([`super::table::Table::bits`]).
                cloexec = None;
            }
        }
        let mut opath = e.opath;
        if contended || cloexec.is_none() {
            match self.kernel_flags(tid, n) {
                Some(f) => {
                    cloexec = Some(f & O_CLOEXEC != 0);
                    opath = Some(f & O_PATH != 0);
                }
                None if contended || cloexec.is_none() => return false,
                None => {}
            }
            if contended {
                self.stats.adopted += 1;
            }
        }
        let Some(task) = self.tasks.get(&tid) else {
            return false;
        };
        // Contended numbers may have been taken in another order than reserved (two `dup`s
        // racing): the expected description may be another number's, and with it what it
        // cached (whether it is a Unix socket), so the number gets a description of its own.
        let file = match e.file {
            Some(f) if !contended => f,
            _ => FileRef::new(Desc::new(opath)),
        };
        if task.files.fd_install(n, file).is_ok() {
            let _ = task.files.set_close_on_exec(n, cloexec.unwrap_or(false));
            let _ = task.files.set_fd_payload(n, e.origin);
        }
        if e.foreign || contended {
            self.check_foreign(tid, n);
        }
        // `--check-tables` compares it at the task's next stop, as a number its call changed.
        if self.cfg.check_tables
            && let Some(task) = self.tasks.get_mut(&tid)
        {
            task.touched.push(n);
        }
        true
    }

    /// A call that installs an unknown number of descriptors finished on a table only its
    /// task uses: they took the lowest free numbers, so probe upward until one is free.
    fn probe_upward(&mut self, tid: i32, cloexec: Option<bool>, origin: u32) {
        // Up to the hard limit, not the soft one read now: a limit raised from outside while
        // the call ran and lowered again before this read (a blocking `recvmsg` gives it all
        // the time it needs) let the kernel install above the soft limit. The kernel installs
        // at the lowest free numbers, so the first number it has free still ends the probe.
        let soft = self.nofile(tid);
        let end = soft.max(self.hard_nofile(tid)).max(1);
        let mut from = 0;
        loop {
            let Some(task) = self.tasks.get(&tid) else {
                return;
            };
            let Ok(n) = task.files.alloc_fd(from, end, 0) else {
                return;
            };
            match self.probe(tid, n) {
                Some(true) => {
                    let e = Expect {
                        cloexec,
                        origin,
                        foreign: true,
                        ..Expect::default()
                    };
                    if !self.adopt(tid, n, e, false) {
                        // The task let go of its table: nothing more to read through it.
                        if let Some(task) = self.tasks.get(&tid) {
                            task.files.put_unused_fd(n);
                        }
                        return;
                    }
                    from = n + 1;
                }
                _ => {
                    if let Some(task) = self.tasks.get(&tid) {
                        task.files.put_unused_fd(n);
                    }
                    return;
                }
            }
        }
    }

    /// Reserves the lowest number >= `from` `count` times in `tid`'s table and makes them
    /// uncertain, expecting `e`; `None` (and nothing reserved) if the library has no room even
    /// under the hard limit: the kernel then answers EMFILE, after its own earlier checks, or,
    /// on a shared table, takes one of the uncertain numbers.
    ///
    /// The limit is the one the decision read ([`State::nofile_to_decide`]). Where it leaves
    /// no room, the numbers are reserved above it, up to the hard limit: the call runs anyway
    /// (the kernel answers EMFILE), and a limit raised from outside between the decision and
    /// the call's run lets the kernel install them. The settle's probe of the reserved
    /// numbers tells which (one `kcmp` each, as for any creation).
    pub fn reserve(&mut self, tid: i32, from: u32, count: usize, e: &Expect) -> Option<Vec<u32>> {
        let nofile = self.cached_nofile(tid);
        let hard = self.hard_nofile(tid).max(nofile);
        let got = self.alloc_numbers(tid, from, count, nofile).or_else(|| {
            (hard > nofile)
                .then(|| self.alloc_numbers(tid, from, count, hard))
                .flatten()
        });
        let task = self.tasks.get(&tid)?;
        let Some(got) = got else {
            // No room even under the hard limit: the call runs and the kernel answers
            // EMFILE, unless a new hard limit lands first (a `setrlimit` in flight) and it
            // installs a number the library has free: read the table then.
            let (tgid, key) = (task.tgid, key_of(&task.files));
            if self.procs.get(&tgid).is_some_and(|p| p.rlimit_pending > 0) {
                self.tables.entry(key).or_default().unbounded = true;
            }
            return None;
        };
        let key = key_of(&task.files);
        let t = self.tables.entry(key).or_default();
        if t.inflight > 0 {
            t.contended = true;
        }
        for &n in &got {
            t.uncertain.insert(n, e.clone());
        }
        let len = t.uncertain.len() as u64;
        self.stats.uncertain_max = self.stats.uncertain_max.max(len);
        Some(got)
    }

    /// `count` numbers >= `from` below `limit` reserved in `tid`'s table (none if they do not
    /// all fit).
    fn alloc_numbers(&self, tid: i32, from: u32, count: usize, limit: u64) -> Option<Vec<u32>> {
        let task = self.tasks.get(&tid)?;
        let mut got = Vec::with_capacity(count);
        for _ in 0..count {
            match task.files.alloc_fd(from, limit, 0) {
                Ok(n) => got.push(n),
                Err(_) => {
                    for &n in &got {
                        task.files.put_unused_fd(n);
                    }
                    return None;
                }
            }
        }
        Some(got)
    }

    /// On a shared table: the call in flight of `tid` changes number `n` (a close, a dup's
    /// target); the library holds it reserved until the kernel's table says what is there.
    /// Returns the file that was installed at `n`.
    pub fn make_uncertain(&mut self, tid: i32, n: u32, mut e: Expect) -> Option<FileRef<Desc>> {
        let task = self.tasks.get_mut(&tid)?;
        let old = task.files.file_close_fd(n).ok();
        if task.files.alloc_fd(n, n as u64 + 1, 0).is_err() {
            return old;
        }
        e.pending.push(tid);
        let key = key_of(&task.files);
        let t = self.tables.entry(key).or_default();
        t.uncertain.insert(n, e);
        let len = t.uncertain.len() as u64;
        self.stats.uncertain_max = self.stats.uncertain_max.max(len);
        old
    }

    /// What number `n` of `tid`'s table is, after probing it if the library does not know.
    pub fn resolve(&mut self, tid: i32, n: u32) -> Known {
        let Some(task) = self.tasks.get(&tid) else {
            return Known::Free;
        };
        let key = key_of(&task.files);
        match task.files.fd_state(n) {
            FdState::Installed { .. } => Known::Installed,
            FdState::Reserved => {
                let pending = self
                    .tables
                    .get(&key)
                    .and_then(|t| t.uncertain.get(&n))
                    .map(|e| e.pending.iter().any(|&p| p != tid));
                match pending {
                    // Another thread's close or dup of it may not have run yet.
                    Some(true) => Known::Unsure,
                    Some(false) => match self.probe(tid, n) {
                        Some(true) => {
                            let e = self
                                .tables
                                .get_mut(&key)
                                .and_then(|t| t.uncertain.remove(&n))
                                .unwrap_or_default();
                            let contended = self.tables.get(&key).is_some_and(|t| t.contended);
                            if self.adopt(tid, n, e.clone(), contended) {
                                Known::Installed
                            } else {
                                if let Some(t) = self.tables.get_mut(&key) {
                                    t.uncertain.insert(n, e);
                                }
                                Known::Unsure
                            }
                        }
                        // Free, or reserved by a call in flight: EBADF either way.
                        _ => Known::Reserved,
                    },
                    None => Known::Reserved,
                }
            }
            FdState::Free => {
                if !self.tables.get(&key).is_some_and(|t| t.unbounded) {
                    return Known::Free;
                }
                // A call in flight may have installed any free number.
                match self.probe(tid, n) {
                    Some(true) => {
                        let Some(task) = self.tasks.get(&tid) else {
                            return Known::Free;
                        };
                        if task.files.alloc_fd(n, n as u64 + 1, 0).is_err() {
                            return Known::Unsure;
                        }
                        if self.adopt(tid, n, Expect::default(), true) {
                            return Known::Installed;
                        }
                        if let Some(task) = self.tasks.get(&tid) {
                            task.files.put_unused_fd(n);
                        }
                        Known::Unsure
                    }
                    _ => Known::Free,
                }
            }
        }
    }

    /// Rebuilds `tid`'s table from the kernel's if it is stale. The table's other users
    /// (another process's `CLONE_FILES` sharers, after one of them executed) use the same
    /// kernel table, so they move to the rebuilt one with `tid`: rebuilt for each on its
    /// own, the sharers would end on tables of their own while the kernel's stays one.
    /// A user that `kcmp` shows on another kernel table stays, and is rebuilt on its own.
    pub fn fresh(&mut self, tid: i32) {
        let Some(old_key) = self.key(tid) else {
            return;
        };
        if !self.tables.get(&old_key).is_some_and(|t| t.stale) {
            return;
        }
        self.rebuild(tid);
        let Some(new_key) = self.key(tid).filter(|&k| k != old_key) else {
            return;
        };
        let others: Vec<i32> = self
            .tasks
            .values()
            .filter(|t| t.tid != tid && key_of(&t.files) == old_key)
            .map(|t| t.tid)
            .filter(|&o| sys::same_files(tid, o) != Some(false))
            .collect();
        for o in others {
            let Some(shared) = self.tasks.get_mut(&tid).map(|t| t.files.share()) else {
                return;
            };
            let Some(task) = self.tasks.get_mut(&o) else {
                continue;
            };
            let old = std::mem::replace(&mut task.files, shared);
            // A call of the mover still in flight settles on the rebuilt table, which was read
            // while it may not have run: what it reserved in the old one is not there, so the
            // table is read from the kernel again once quiet, and the numbers it changes are
            // busy (left out of checks) and take their bits from the kernel.
            let moved_call = task.inflight.as_ref().map(|f| f.touched.clone());
            drop(old);
            if let (Some(touched), Some(t)) = (&moved_call, self.tables.get_mut(&old_key)) {
                t.inflight = t.inflight.saturating_sub(1);
                for &n in touched {
                    unbusy(t, n);
                }
            }
            self.leave(old_key, o);
            let t = self.tables.entry(new_key).or_default();
            t.members += 1;
            if let Some(touched) = moved_call {
                t.inflight += 1;
                t.unbounded = true;
                for &n in &touched {
                    *t.busy.entry(n).or_default() += 1;
                }
                // What the call does to them is the kernel's to say: each is uncertain,
                // pending on the mover, and probed when asked about once it is back.
                for n in touched {
                    let file = self.tasks.get(&o).and_then(|t| t.files.fget(n));
                    let e = Expect {
                        file,
                        ..Expect::default()
                    };
                    hold_uncertain(self, o, n, e);
                }
            }
        }
    }

    /// Makes `tid`'s library table equal its kernel table, read from /proc: for a table only
    /// `tid` uses (a fork's child, a process after exec or unshare), whose copy was taken
    /// while other tasks changed the original. Descriptions still at the same number keep
    /// their identity.
    pub fn rebuild(&mut self, tid: i32) {
        self.stats.listings += 1;
        let Some(list) = procfs::list_fds(tid) else {
            return;
        };
        let mut flags = Vec::with_capacity(list.len());
        for &n in &list {
            flags.push(self.kernel_flags(tid, n).unwrap_or(0));
        }
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        let new = Fdt::new();
        // Numbers the library did not have: what another task's call left there (an exec
        // that ended a thread's `recvmsg` before it was settled), perhaps another process's.
        let mut unknown = Vec::new();
        for (&n, &f) in list.iter().zip(&flags) {
            let (file, payload) = match task.files.fd_state(n) {
                FdState::Installed { .. } => {
                    (task.files.fget(n), task.files.fd_payload(n).unwrap_or(0))
                }
                _ => {
                    unknown.push(n);
                    (None, 0)
                }
            };
            let file = file.unwrap_or_else(|| FileRef::new(Desc::new(Some(f & O_PATH != 0))));
            if new.alloc_fd(n, n as u64 + 1, 0).is_ok() && new.fd_install(n, file).is_ok() {
                let _ = new.set_close_on_exec(n, f & O_CLOEXEC != 0);
                let _ = new.set_fd_payload(n, payload);
            }
        }
        let old_key = key_of(&task.files);
        let old = std::mem::replace(&mut task.files, new);
        let new_key = key_of(&task.files);
        drop(old);
        self.leave(old_key, tid);
        self.tables.insert(new_key, super::table::Table::new());
        for n in unknown {
            self.check_foreign(tid, n);
        }
    }

    /// Reads `tid`'s shared table from the kernel after a call that installs an unknown number
    /// of descriptors: every number the kernel shows that the library has free is adopted,
    /// every installed one it lacks is dropped.
    /// False when the listing says nothing (`tid` is gone, or has let go of the table: its
    /// listing is then empty).
    fn reconcile(&mut self, tid: i32) -> bool {
        self.stats.listings += 1;
        let Some(list) = procfs::list_fds(tid) else {
            return false;
        };
        if !self.holds_table(tid) {
            return false;
        }
        let Some(task) = self.tasks.get(&tid) else {
            return false;
        };
        let have: Vec<u32> = task.files.iter().map(|o| o.fd).collect();
        let mut adopt = Vec::new();
        for &n in &list {
            if task.files.fd_state(n) == FdState::Free
                && task.files.alloc_fd(n, n as u64 + 1, 0).is_ok()
            {
                adopt.push(n);
            }
        }
        if let Some(task) = self.tasks.get_mut(&tid) {
            for n in have {
                if list.binary_search(&n).is_err() {
                    let _ = task.files.file_close_fd(n);
                }
            }
        }
        for n in adopt {
            if !self.adopt(tid, n, Expect::default(), true) {
                // Read through a task that let go of the table meanwhile.
                if let Some(task) = self.tasks.get(&tid) {
                    task.files.put_unused_fd(n);
                }
                return false;
            }
        }
        true
    }

    /// `tid` no longer uses table `key`.
    pub fn leave(&mut self, key: TableKey, tid: i32) {
        let Some(t) = self.tables.get_mut(&key) else {
            return;
        };
        t.members = t.members.saturating_sub(1);
        if t.members == 0 {
            self.tables.remove(&key);
            return;
        }
        // A task that stays settles what is left, once nothing is in flight.
        let other = self
            .tasks
            .values()
            .find(|x| x.tid != tid && key_of(&x.files) == key)
            .map(|x| x.tid);
        if let Some(o) = other {
            self.quiesce(key, o);
        }
    }

    /// The reply to `tid`'s notification could not be delivered (it was killed while it
    /// waited): its call never ran.
    pub fn lost(&mut self, tid: i32) {
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        let Some(f) = task.inflight.take() else {
            return;
        };
        let key = key_of(&task.files);
        self.rlimit_over(f.settle);
        if let Some(t) = self.tables.get_mut(&key) {
            t.inflight = t.inflight.saturating_sub(1);
            for n in &f.touched {
                if let Some(e) = t.uncertain.get_mut(n) {
                    e.pending.retain(|&p| p != tid);
                    // The call may or may not have run: the bit is the kernel's.
                    e.cloexec = None;
                }
                unbusy(t, *n);
            }
        }
        // What the library decided for it stays uncertain until the table settles.
        if self.shared(tid) {
            for n in f.touched {
                if let Some(task) = self.tasks.get(&tid)
                    && let Some(file) = task.files.fget(n)
                {
                    let e = Expect {
                        file: Some(file),
                        ..Expect::default()
                    };
                    self.make_uncertain(tid, n, e);
                    if let Some(t) = self.tables.get_mut(&key)
                        && let Some(e) = t.uncertain.get_mut(&n)
                    {
                        e.pending.retain(|&p| p != tid);
                    }
                }
            }
        }
        self.quiesce(key, tid);
    }

    /// Records `tid`'s call in flight.
    pub fn in_flight(&mut self, tid: i32, settle: Settle, touched: Vec<u32>) {
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        let key = key_of(&task.files);
        task.touched.extend_from_slice(&touched);
        let ranges = self
            .tables
            .get(&key)
            .is_some_and(|t| !t.cloexec_ranges.is_empty());
        if ranges {
            self.cloexec_ranges_meet(key, tid, &touched);
        }
        if let Settle::CloexecRange { first, last } = settle {
            self.tables
                .entry(key)
                .or_default()
                .cloexec_ranges
                .push((tid, first, last));
        }
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        let t = self.tables.entry(key).or_default();
        t.inflight += 1;
        for &n in &touched {
            *t.busy.entry(n).or_default() += 1;
        }
        task.inflight = Some(InFlight { settle, touched });
    }

    /// `tid`'s call about to be in flight changes `touched` of table `key`: those inside the
    /// range of another task's `close_range(CLOSE_RANGE_CLOEXEC)` still in flight get their
    /// close-on-exec bit from the kernel, which may run the two calls in either order.
    fn cloexec_ranges_meet(&mut self, key: TableKey, tid: i32, touched: &[u32]) {
        let Some(mut ranges) = self
            .tables
            .get_mut(&key)
            .map(|t| std::mem::take(&mut t.cloexec_ranges))
        else {
            return;
        };
        ranges.retain(|&(owner, first, last)| {
            self.tasks.get(&owner).is_some_and(|o| {
                key_of(&o.files) == key
                    && o.inflight
                        .as_ref()
                        .is_some_and(|f| f.settle == Settle::CloexecRange { first, last })
            })
        });
        let Some(t) = self.tables.get_mut(&key) else {
            return;
        };
        let met: Vec<u32> = touched
            .iter()
            .copied()
            .filter(|&n| {
                ranges
                    .iter()
                    .any(|&(owner, first, last)| owner != tid && first <= n && n <= last)
            })
            .collect();
        bits_to_kernel(t, &met);
        t.cloexec_ranges = ranges;
    }

    /// `tid` was killed during its call in flight, which may or may not have run (a fatal
    /// signal that wakes a task waiting for its answer skips the call, even when the answer
    /// was `CONTINUE` and was delivered): the close-on-exec bits of the numbers it touched
    /// are the kernel's. Settle the call after this.
    pub fn cut_short(&mut self, tid: i32) {
        let Some(task) = self.tasks.get(&tid) else {
            return;
        };
        let Some(f) = task.inflight.as_ref() else {
            return;
        };
        let key = key_of(&task.files);
        let Some(t) = self.tables.get_mut(&key) else {
            return;
        };
        bits_to_kernel(t, &f.touched);
    }

    /// A task with a call in flight is gone (or its table is): the call is over.
    pub fn drop_in_flight(&mut self, key: TableKey, f: Option<InFlight>) {
        let (Some(f), Some(t)) = (f, self.tables.get_mut(&key)) else {
            return;
        };
        t.inflight = t.inflight.saturating_sub(1);
        for &n in &f.touched {
            unbusy(t, n);
        }
        // The call may or may not have run.
        bits_to_kernel(t, &f.touched);
        self.rlimit_over(f.settle);
    }

    /// A `setrlimit`/`prlimit64` in flight is over (its task is back, or gone, or its answer
    /// was not delivered): the limit of the process it named is read from the kernel again.
    ///
    /// Unless the caller was the process's only task, the call is a change like one made
    /// from outside ([`State::limit_changed`]), whatever the limit reads now: another thread
    /// of the process, or the process itself when another process of the program set its
    /// limit, may have decided a call under the old limit that ran in the kernel under the
    /// new one, and a second traced call may have set it back before this read.
    fn rlimit_over(&mut self, settle: Settle) {
        if let Settle::Rlimit { pid, alone } = settle
            && let Some(p) = self.procs.get_mut(&pid)
        {
            p.rlimit_pending = p.rlimit_pending.saturating_sub(1);
            if let Some(l) = sys::nofile_of(pid) {
                let old = std::mem::replace(&mut p.nofile, l);
                // Even when the two reads agree: another traced call may have set the limit
                // back between them (a flip away and back that this call was half of).
                if !alone {
                    self.limit_changed(pid, old.0, l.0);
                }
            }
        }
    }

    /// After a `clone3` that returned without a clone event: a task its flags (changed by
    /// another thread after the supervisor read them) made untraced is killed, with its
    /// process and every process it made.
    ///
    /// The new task is a thread of `tid`'s process, a child of one of its threads, or (with
    /// `CLONE_PARENT`) a child of its parent's. A task is a stray when it is alive and no
    /// thread of the supervisor traces it (`TracerPid`): a traced task is so from its
    /// creation, before its id can be seen, even while its first stop is not reported yet. A
    /// stray process is stopped as soon as it is found, so that it makes no more processes
    /// while its own are looked for. Each is signalled through a pidfd opened before it was
    /// checked ([`State::stray_process`]), so that a process that dies meanwhile and whose
    /// number is reused takes no signal meant for it.
    fn untraced(&mut self, tid: i32) {
        let Some(tgid) = self.tasks.get(&tid).map(|t| t.tgid) else {
            return;
        };
        // Only the program's own processes are searched. A child the first process made with
        // `CLONE_PARENT` is the caller's, among the caller's other children (its other jobs,
        // sandboxed or not, other runs of `fdtable run`): nothing here tells it from them. It
        // carries the program's filter, so it is killed at its first call that reaches the
        // supervisor (`on_notification`), and cannot change its table before.
        let mut groups = vec![tgid];
        if let Some((_, ppid)) = procfs::state_of(tgid)
            && self.procs.contains_key(&ppid)
        {
            groups.push(ppid);
        }
        // A stray thread: its process is killed (its other threads' children are traced).
        let mut thread_stray = false;
        let mut procs = Vec::new();
        for g in groups {
            for t in procfs::tasks_of(g) {
                if g == tgid && self.stray(t) {
                    thread_stray = true;
                }
                for c in procfs::children_of(g, t) {
                    if let Some(fd) = self.stray_process(c) {
                        let _ = sys::pidfd_kill(&fd, libc::SIGSTOP);
                        procs.push((c, fd));
                    }
                }
            }
        }
        // The thread's process: the pidfd is opened before the thread is checked again.
        if thread_stray
            && let Ok(fd) = sys::pidfd_open(tgid)
            && procfs::tasks_of(tgid).into_iter().any(|t| self.stray(t))
            && !sys::pidfd_exited(&fd)
        {
            procs.push((tgid, fd));
        }
        self.kill_strays(procs);
    }

    /// A pidfd of process `c` if it is a stray (`State::stray`): opened first, and kept only
    /// if the process it names has not exited after the check, so that the check was of that
    /// process (a number is reused only once its process is reaped).
    pub fn stray_process(&self, c: i32) -> Option<OwnedFd> {
        let fd = sys::pidfd_open(c).ok()?;
        (self.stray(c) && !sys::pidfd_exited(&fd)).then_some(fd)
    }

    /// Kills stray processes `procs` (stopped already, but for a thread stray's process),
    /// each with a pidfd from [`State::stray_process`], and every process they made: a stray
    /// process's own children are strays too (no tracer follows them), each stopped as soon
    /// as it is found.
    pub fn kill_strays(&mut self, mut procs: Vec<(i32, OwnedFd)>) {
        let mut i = 0;
        while i < procs.len() {
            let p = procs[i].0;
            i += 1;
            for t in procfs::tasks_of(p) {
                for c in procfs::children_of(p, t) {
                    if !procs.iter().any(|&(q, _)| q == c)
                        && let Some(fd) = self.stray_process(c)
                    {
                        let _ = sys::pidfd_kill(&fd, libc::SIGSTOP);
                        procs.push((c, fd));
                    }
                }
            }
        }
        for (p, fd) in procs {
            self.note(format!(
                "process {p} was created untraced (CLONE_UNTRACED in clone3's arguments, which the supervisor does not read); killed"
            ));
            let _ = sys::pidfd_kill(&fd, libc::SIGKILL);
        }
    }

    /// Whether task `t` is alive (not a zombie: a traced child the supervisor reaped goes
    /// back to its parent untraced), not the supervisor, and traced by no thread of it.
    ///
    /// `TracerPid` is read before the state: a traced task is untraced again only once the
    /// supervisor has reaped it, when it is already a zombie or gone; read the other way
    /// round, a traced process killed meanwhile (still running its exit at the first read,
    /// reaped at the second) looked like a stray.
    fn stray(&self, t: i32) -> bool {
        !self.tasks.contains_key(&t)
            && !self.early.contains(&t)
            && !self.outside.contains(&t)
            && procfs::tracer_of(t).is_some_and(|p| !self.outside.contains(&p))
            && procfs::state_of(t).is_some_and(|(s, _)| !matches!(s, 'Z' | 'X' | 'x'))
    }

    /// After `UFFDIO_API`: the features the kernel enabled (`fdinfo`'s `API:` line).
    fn check_uffd(&mut self, tid: i32, fd: u32) {
        let Some(text) = procfs::fdinfo(tid, fd) else {
            return;
        };
        let features = procfs::field(&text, "API:")
            .and_then(|v| v.split(':').nth(1))
            .and_then(|f| u64::from_str_radix(f, 16).ok())
            .unwrap_or(0);
        if features & fdtable_syscalls::consts::UFFD_FEATURE_EVENT_FORK != 0 {
            let tgid = self.tasks.get(&tid).map_or(tid, |t| t.tgid);
            self.note(format!(
                "refused UFFDIO_API with UFFD_FEATURE_EVENT_FORK: read() of the userfaultfd would install descriptors inside the kernel; process {tgid} killed"
            ));
            let _ = sys::kill(tgid, libc::SIGKILL);
        }
    }
}

/// Makes `n` of `tid`'s table uncertain, pending on `tid`, whatever it holds (already
/// uncertain: `tid` is added to its pending calls, and its bit is the kernel's).
fn hold_uncertain(st: &mut State, tid: i32, n: u32, e: Expect) {
    let Some(key) = st.key(tid) else {
        return;
    };
    if let Some(x) = st
        .tables
        .get_mut(&key)
        .and_then(|t| t.uncertain.get_mut(&n))
    {
        x.pending.push(tid);
        x.cloexec = None;
        return;
    }
    st.make_uncertain(tid, n, e);
}

/// The close-on-exec bits of `ns` are the kernel's to say (a call that changed them may or
/// may not have run): an uncertain number's expectation is dropped, another is read when the
/// table is quiet ([`super::table::Table::bits`]).
fn bits_to_kernel(t: &mut super::table::Table, ns: &[u32]) {
    for &n in ns {
        match t.uncertain.get_mut(&n) {
            Some(e) => e.cloexec = None,
            None => {
                t.bits.insert(n);
            }
        }
    }
}

fn unbusy(t: &mut super::table::Table, n: u32) {
    if let Some(c) = t.busy.get_mut(&n) {
        *c -= 1;
        if *c == 0 {
            t.busy.remove(&n);
        }
    }
}

/// What a number of a table is, as far as a call naming it is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    /// Installed (in the library, and so in the kernel).
    Installed,
    /// Not installed: free, or reserved by a call in flight (EBADF either way).
    Reserved,
    /// Free.
    Free,
    /// Another thread's call in flight may or may not have changed it: only the kernel can
    /// answer (the call is let run, and the number stays uncertain).
    Unsure,
}

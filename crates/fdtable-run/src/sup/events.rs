//! The ptrace thread: process events only (`PTRACE_O_TRACEFORK`, `TRACEVFORK`,
//! `TRACECLONE`; `TRACEEXEC` for the tasks that need it, below; `TRACEEXIT` for
//! `--track-fds` and `--check-tables`; no syscall stops). The library's tables follow the
//! processes through its own calls: `fork` or `share` at the clone event, with the child's
//! id and while the child is stopped; `exec` when an exec is known to have run; the handle
//! dropped when the task is reaped.
//!
//! Exec events are kept only where a notification cannot settle an exec: the program's first
//! exec (its table is read then), and every task of a process with several threads or of a
//! table several tasks share (an exec there changes thread ids and unshares the table). Each
//! task's option is set at a stop: the parent's at the clone event that makes it multi-task,
//! the child's at its first stop, and cleared again at the exec event (after an exec the
//! process has one thread and its own table). Every other exec is notified and settled at the
//! task's next stop, from the kernel's table (`Settle::Exec`): one ptrace stop fewer per
//! process.

use super::Shared;
use super::table::Table;
use super::{Exit, FirstStop, Proc, State, Task, key_of};
use crate::procfs;
use crate::sys::{self, Status};
use fdtable_syscalls::consts::{CLONE_FILES, CLONE_THREAD, CLONE_VFORK};
use nix::sys::ptrace;
use nix::unistd::Pid;

/// The ptrace options: events only; exec events when `exec_events`.
pub fn options(exit_events: bool, exec_events: bool) -> ptrace::Options {
    let mut o = ptrace::Options::PTRACE_O_TRACEFORK
        | ptrace::Options::PTRACE_O_TRACEVFORK
        | ptrace::Options::PTRACE_O_TRACECLONE
        | ptrace::Options::PTRACE_O_EXITKILL;
    if exec_events {
        o |= ptrace::Options::PTRACE_O_TRACEEXEC;
    }
    if exit_events {
        o |= ptrace::Options::PTRACE_O_TRACEEXIT;
    }
    o
}

/// Receives process events until no tracee is left.
pub fn run(shared: &Shared) {
    if shared.lock().cfg.floor {
        return floor(shared);
    }
    // Early tasks (`early`) are checked when this timer fires: it interrupts the wait. It
    // repeats while early tasks remain, so a signal that lands just before the wait (the flag
    // set, the wait not interrupted) is followed by another.
    let timer = sys::Alarm::new().ok();
    shared.lock().early_timer = timer.is_some();
    let mut armed = false;
    loop {
        let st = sys::wait_interruptible(-1, 0);
        let mut s = shared.lock_for_events();
        match st {
            Ok(st) => s.dispatch(st),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(_) => return,
        }
        if let Some(t) = &timer {
            // The timer may have fired during the dispatch (a call it interrupted was
            // retried): its flag says so.
            if t.fired() {
                s.claim_early();
            }
            let want = !s.early.is_empty();
            if want != armed {
                if t.set(want.then_some(super::early::EARLY_WAIT)) {
                    armed = want;
                } else {
                    // No timer after all: early tasks are checked as they come.
                    s.early_timer = false;
                    s.claim_early();
                }
            }
        }
    }
}

/// `--floor`: resumes every stop (a signal with its signal), keeping no table.
fn floor(shared: &Shared) {
    let (mut events, mut signals) = (0, 0);
    loop {
        match sys::wait(-1, 0) {
            Ok(Status::Event(tid, _, _)) => {
                events += 1;
                let _ = sys::resume(tid, 0);
            }
            Ok(Status::Signal(tid, sig)) => {
                signals += 1;
                let _ = sys::resume(tid, sig);
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    let mut st = shared.lock();
    st.stats.events += events;
    st.stats.signals += signals;
}

impl State {
    /// Makes a traced zombie `pid` reapable by its parent now, as it is natively once its
    /// pidfd is readable: a tracer must first collect a traced task's exit (the kernel then
    /// hands the zombie to its parent), which the event thread may not have done yet. Waits
    /// for it here, under the state lock, and dispatches what it gets as the event thread
    /// would. Ends when the task is no zombie traced by this process, or after a few tries
    /// that found nothing to collect: the event thread's own wait was collecting it (the
    /// kernel hands it over within that wait), or it is a thread-group leader whose threads
    /// still run (its pidfd is not readable yet either).
    pub fn release_zombie(&mut self, pid: i32) {
        let me = std::process::id() as i32;
        for _ in 0..4 {
            if !matches!(procfs::state_of(pid), Some(('Z', _)))
                || procfs::tracer_of(pid) != Some(me)
            {
                return;
            }
            match sys::try_wait(pid) {
                Ok(Some(st)) => {
                    self.stats.released += 1;
                    self.dispatch(st);
                    self.after_exit();
                }
                Ok(None) => std::thread::yield_now(),
                Err(_) => return,
            }
        }
    }

    fn dispatch(&mut self, st: Status) {
        match st {
            Status::Event(tid, sig, ev) => {
                self.stats.events += 1;
                if ev != libc::PTRACE_EVENT_STOP
                    && let Some(t) = self.tasks.get_mut(&tid)
                {
                    // In a call: any handler it ran has returned.
                    t.delivered = 0;
                }
                match ev {
                    libc::PTRACE_EVENT_FORK
                    | libc::PTRACE_EVENT_VFORK
                    | libc::PTRACE_EVENT_CLONE => self.on_clone(tid, ev),
                    libc::PTRACE_EVENT_EXEC => self.on_exec(tid),
                    libc::PTRACE_EVENT_EXIT => {
                        self.on_exit_event(tid);
                        self.after_exit();
                    }
                    libc::PTRACE_EVENT_STOP => self.on_stop(tid, sig),
                    _ => {
                        let _ = sys::resume(tid, 0);
                    }
                }
            }
            Status::Signal(tid, sig) => self.on_signal(tid, sig),
            Status::Exited(tid, code) => {
                self.on_gone(tid, Exit::Code(code));
                self.after_exit();
            }
            Status::Signaled(tid, sig) => {
                self.on_gone(tid, Exit::Signal(sig));
                self.after_exit();
            }
        }
    }

    fn on_clone(&mut self, tid: i32, ev: i32) {
        let pid = Pid::from_raw(tid);
        let Some(child) = event_message(tid, ev) else {
            // Killed since the stop was reported (by the supervisor too, for a refused
            // descriptor): its next stop, its exit, is reported in turn.
            return;
        };
        let child = child as i32;
        // The flags: clone's first argument is a register; clone3's are in memory, so what
        // they did is read from the kernel: whether the child shares the table, and its
        // thread group.
        let flags = match ptrace::getregs(pid) {
            Ok(r) if r.orig_rax == libc::SYS_clone as u64 => r.rdi,
            Ok(r) if r.orig_rax == libc::SYS_clone3 as u64 => {
                let mut f = 0;
                if sys::same_files(tid, child) == Some(true) {
                    f |= CLONE_FILES;
                }
                let ptgid = self.tasks.get(&tid).map_or(tid, |t| t.tgid);
                // A signal-0 `tgkill` costs a system call where reading `status` costs a
                // procfs open (about 15 µs per `posix_spawn` on the project's VM).
                let thread = sys::in_thread_group(ptgid, child)
                    .unwrap_or_else(|| crate::procfs::tgid_of(child) == Some(ptgid));
                if thread {
                    f |= CLONE_THREAD;
                }
                f
            }
            _ if ev == libc::PTRACE_EVENT_VFORK => (libc::CLONE_VM as u64) | CLONE_VFORK,
            _ => libc::SIGCHLD as u64,
        };
        let Some(parent) = self.tasks.get(&tid) else {
            let _ = sys::resume(tid, 0);
            return;
        };
        // clone(CLONE_PIDFD) and clone3 installed a pidfd after the child's copy was taken:
        // settle them after the copy; any other previous call before.
        let pidfd = matches!(
            parent.inflight.as_ref().map(|f| f.settle),
            Some(super::settle::Settle::ClonePidfd | super::settle::Settle::Clone3)
        );
        if !pidfd {
            self.task_back(tid);
            self.fresh(tid);
        }
        if self.tasks.contains_key(&child) {
            // Claimed already, from the kernel (`early`): no task that could have made it
            // seemed to be in a clone call. The parent's exec events as the clone asks.
            if flags & (CLONE_THREAD | CLONE_FILES) != 0 {
                self.set_exec_events(tid, true);
                if let Some(p) = self.tasks.get_mut(&tid) {
                    p.exec_wanted = true;
                }
            }
            if pidfd {
                self.settle_call(tid, true);
            }
            let _ = sys::resume(tid, 0);
            return;
        }
        let Some(parent) = self.tasks.get_mut(&tid) else {
            let _ = sys::resume(tid, 0);
            return;
        };
        let key = key_of(&parent.files);
        let tgid = if flags & CLONE_THREAD != 0 {
            parent.tgid
        } else {
            child
        };
        let ptgid = parent.tgid;
        // The child inherits the parent's options as they were when the kernel copied it.
        let inherited_exec_events = parent.exec_events;
        let shares = flags & (CLONE_THREAD | CLONE_FILES) != 0;
        // A table only the parent uses, with nothing in flight but a CLONE_PIDFD reservation
        // (which the kernel, as the library, leaves out of the copy), is copied exactly.
        let busy = self.tables.get(&key).is_some_and(|t| {
            t.members > 1
                || !t.bits.is_empty()
                || (!pidfd && (t.inflight > 0 || !t.uncertain.is_empty()))
        });
        let files = if flags & CLONE_FILES != 0 {
            let f = parent.files.share();
            self.tables.entry(key).or_default().members += 1;
            f
        } else {
            match parent.files.fork() {
                Ok(f) => f,
                Err(e) => {
                    // The kernel made the copy; the library could not. Nothing sound is left
                    // for this child.
                    let _ = sys::kill(child, libc::SIGKILL);
                    self.note(format!(
                        "process {child}: the library could not copy its table ({e}); killed"
                    ));
                    let _ = sys::resume(tid, 0);
                    return;
                }
            }
        };
        let new_table = flags & CLONE_FILES == 0;
        if new_table {
            self.tables.insert(key_of(&files), Table::new());
        }
        if tgid != ptgid {
            let (nofile, dumpable) = self
                .procs
                .get(&ptgid)
                .map_or(((1024, 1024), true), |p| (p.nofile, p.dumpable));
            // The kernel copied the parent's limit with the process: a new one that another
            // thread of the parent set may not be settled in the library yet.
            let nofile = sys::nofile_of(child).unwrap_or(nofile);
            self.procs.insert(tgid, Proc::new(nofile, dumpable));
        }
        // A table holding a descriptor refused as the parent's call settled (above): the
        // child, stopped, never runs.
        let refused = self.refuse_copy(child, &files);
        self.tasks.insert(
            child,
            Task::new(child, tgid, files, inherited_exec_events, shares),
        );
        if shares {
            // Its exec would change thread ids or unshare a table: the parent's events on
            // (it is stopped at this event), the child's at its first stop.
            self.set_exec_events(tid, true);
            if let Some(p) = self.tasks.get_mut(&tid) {
                p.exec_wanted = true;
            }
        }
        self.stats.tasks += 1;
        if new_table && busy && !refused {
            // Other tasks may have changed the parent's table while the kernel copied it:
            // the child's copy is read from the kernel (the child is stopped).
            self.rebuild(child);
        }
        if pidfd {
            self.settle_call(tid, true);
        }
        if self.early.remove(&child) {
            self.start(child);
        }
        let _ = sys::resume(tid, 0);
    }

    fn on_exit_event(&mut self, tid: i32) {
        // A task reaches its exit with a call in flight only when it was killed during the
        // call (a fatal signal, another thread's `exit_group` or exec), perhaps before the
        // call ran, even if its `CONTINUE` was delivered.
        self.cut_short(tid);
        self.task_back(tid);
        if let Some(task) = self.tasks.get_mut(&tid) {
            task.exiting = true;
            let tgid = task.tgid;
            let last = self.tasks.values().all(|t| t.tgid != tgid || t.exiting)
                && self
                    .procs
                    .get_mut(&tgid)
                    .is_some_and(|p| !std::mem::replace(&mut p.reported, true));
            if last {
                if self.cfg.check_tables {
                    self.check_task(tid, true);
                }
                if self.cfg.track_fds {
                    self.report_fds(tid, true);
                }
            }
        }
        // The last task: the counters now, before its process can be reaped (the caller's
        // `wait` for the program returns after this, when the program's process is the last).
        if self.tasks.values().all(|t| t.exiting)
            && let Some((path, fds_start)) = self.stats_file.take()
        {
            super::write_stats(&path, &self.stats, fds_start, procfs::own_fd_count());
        }
        let _ = sys::resume(tid, 0);
    }

    fn on_gone(&mut self, tid: i32, _how: Exit) {
        self.early.remove(&tid);
        self.first_stops.remove(&tid);
        let Some(tgid) = self.tasks.get(&tid).map(|t| t.tgid) else {
            return;
        };
        let last = !self.tasks.values().any(|t| t.tgid == tgid && t.tid != tid);
        if last
            && self.cfg.track_fds
            && self
                .procs
                .get_mut(&tgid)
                .is_some_and(|p| !std::mem::replace(&mut p.reported, true))
        {
            // Killed without an exit stop: report from the library's table alone.
            self.report_fds(tid, false);
        }
        let Some(mut task) = self.tasks.remove(&tid) else {
            return;
        };
        let key = key_of(&task.files);
        let f = task.inflight.take();
        drop(task);
        if last {
            self.procs.remove(&tgid);
        }
        self.drop_in_flight(key, f);
        self.leave(key, tid);
    }

    fn on_stop(&mut self, tid: i32, sig: i32) {
        let Some(task) = self.tasks.get_mut(&tid) else {
            // A new task's first stop, before its creator's event.
            self.first_stop(tid, FirstStop::of_event_stop(sig));
            self.stopped_early(tid);
            return;
        };
        if !task.started {
            self.first_stop(tid, FirstStop::of_event_stop(sig));
            self.start(tid);
            return;
        }
        if super::is_stop_signal(sig) {
            // Group-stop: stay stopped, but hear about SIGCONT.
            let _ = sys::ptrace_listen(tid);
        } else {
            let _ = sys::resume(tid, 0);
        }
    }

    fn on_signal(&mut self, tid: i32, sig: i32) {
        self.stats.signals += 1;
        let Some(task) = self.tasks.get_mut(&tid) else {
            self.first_stop(tid, FirstStop::Signal(sig));
            self.stopped_early(tid);
            return;
        };
        if !task.started {
            self.first_stop(tid, FirstStop::Signal(sig));
            self.start(tid);
            return;
        }
        self.restart_cut_call(tid, sig);
        let _ = sys::resume(tid, sig);
    }

    /// At the signal-delivery stop of `sig`, two interruptions a native run would not see.
    ///
    /// A notified call the signal interrupted before the supervisor received it (until then
    /// the task's wait is interruptible) returns `-ERESTARTSYS`, which a handler without
    /// `SA_RESTART` turns into EINTR, from calls that natively run to completion (`close`,
    /// `dup`, the open of a regular file). That call never ran: it is restarted after the
    /// handler instead (`-ERESTARTNOINTR`), as if the signal had come just before it. A call
    /// the supervisor `CONTINUE`d ran in the kernel, and its own interruptions (an open of a
    /// FIFO) stay the program's.
    ///
    /// A traced task's ignored signals are queued (natively they are discarded when sent),
    /// so they wake its waits: the calls that then fail with EINTR even without a handler
    /// (`epoll_wait` without a timeout: [`crate::policy::waits_forever_until_any_signal`])
    /// are restarted, when `sig` is ignored and unblocked, no other signal that will be
    /// delivered is pending, and every signal passed on since the task was last in a call
    /// the supervisor saw was ignored too (so no handler frame stands on its registers).
    pub fn restart_cut_call(&mut self, tid: i32, sig: i32) {
        const EINTR: i64 = 4;
        const ERESTARTSYS: i64 = 512;
        const ERESTARTNOINTR: i64 = 513;
        let (continued, before) = match self.tasks.get_mut(&tid) {
            Some(t) => {
                let before = t.delivered;
                if (1..=64).contains(&sig) {
                    t.delivered |= 1 << (sig - 1);
                }
                (t.continued.take(), before)
            }
            None => (None, u64::MAX),
        };
        let pid = Pid::from_raw(tid);
        let Ok(mut r) = ptrace::getregs(pid) else {
            return;
        };
        if (r.orig_rax as i64) < 0 {
            return;
        }
        let args = [r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9];
        if r.rax as i64 == -EINTR {
            if self.ignored_wakeup(tid, sig, before, r.orig_rax, &args) {
                r.rax = r.orig_rax;
                r.rip = r.rip.wrapping_sub(2);
                if ptrace::setregs(pid, r).is_ok() {
                    self.stats.restarted += 1;
                }
            }
            return;
        }
        if r.rax as i64 != -ERESTARTSYS {
            return;
        }
        // A call that may block in the kernel, `CONTINUE`d at this address, was interrupted
        // there (or, in a loop, the next call at the same address was cut: left as it is).
        if continued == Some((r.orig_rax, r.rip))
            && fdtable_syscalls::by_nr(r.orig_rax)
                .is_some_and(|sc| crate::policy::may_be_interrupted(sc, &args))
        {
            return;
        }
        let action = crate::filter::evaluate(
            &self.filter,
            crate::filter::AUDIT_ARCH_X86_64,
            r.orig_rax as u32,
            args,
        );
        if action != crate::filter::RET_NOTIFY {
            return;
        }
        // A call that would have blocked (a FIFO opened without a peer, an `accept` with no
        // connection waiting, a receive with nothing to read) is left interrupted: natively
        // the signal finds it blocked and it fails with EINTR (or restarts under
        // `SA_RESTART`, which the kernel still decides), and a program that times such a
        // call out with `alarm` counts on that.
        let tgid = self.tasks.get(&tid).map_or(tid, |t| t.tgid);
        if fdtable_syscalls::by_nr(r.orig_rax)
            .is_some_and(|sc| cut_call_would_block(tid, tgid, sc.name, &args))
        {
            self.stats.left_interrupted += 1;
            return;
        }
        r.rax = -ERESTARTNOINTR as u64;
        if ptrace::setregs(pid, r).is_ok() {
            self.stats.restarted += 1;
        }
    }

    /// Whether call `nr` of task `tid` failed with EINTR only because ignored signal `sig`
    /// woke it (see [`State::restart_cut_call`]); `before`: the signals passed on since the
    /// task was last in a call the supervisor saw (bit `s - 1` for signal `s`).
    fn ignored_wakeup(
        &mut self,
        tid: i32,
        sig: i32,
        before: u64,
        nr: u64,
        args: &[u64; 6],
    ) -> bool {
        if !fdtable_syscalls::by_nr(nr)
            .is_some_and(|s| crate::policy::waits_forever_until_any_signal(s, args))
            || !(1..=64).contains(&sig)
            // After a stop, these calls fail with EINTR natively too (signal(7)).
            || sig == libc::SIGCONT
        {
            return false;
        }
        let Some(m) = procfs::signal_masks(tid) else {
            return false;
        };
        let bit = |s: u64| 1u64 << (s - 1);
        // Ignored by default unless caught (SIGCONT aside, above).
        let default_ignored =
            bit(libc::SIGCHLD as u64) | bit(libc::SIGURG as u64) | bit(libc::SIGWINCH as u64);
        let ignored = m.ignored | (default_ignored & !m.caught);
        let s = sig as u64;
        ignored & bit(s) != 0
            && m.blocked & bit(s) == 0
            && before & !ignored == 0
            && m.pending & !m.blocked & !ignored == 0
    }

    /// Records how new task `tid`'s first stop must end.
    fn first_stop(&mut self, tid: i32, how: FirstStop) {
        if how == FirstStop::Attach {
            self.first_stops.remove(&tid);
        } else {
            self.first_stops.insert(tid, how);
        }
    }

    /// A new task's first stop, after its creator's event: its exec events as it needs
    /// them, then it runs (or, at a group-stop, stays stopped until `SIGCONT`).
    pub fn start(&mut self, tid: i32) {
        let how = self.first_stops.remove(&tid).unwrap_or(FirstStop::Attach);
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        task.started = true;
        let want = task.exec_wanted;
        self.set_exec_events(tid, want);
        let _ = match how {
            FirstStop::Attach => sys::resume(tid, 0),
            FirstStop::GroupStop => sys::ptrace_listen(tid),
            FirstStop::Signal(sig) => sys::resume(tid, sig),
        };
    }
}

/// Whether call `name` of task `tid` (of thread group `tgid`), with `args`, cut by a signal
/// before the supervisor received it, would have blocked had it run then (a guess, made
/// after the signal; anything that cannot be read counts as not blocking, and such calls are
/// restarted, as natively a signal never interrupts them):
/// - an `accept`, `accept4`, `recvmsg` or `recvmmsg` on a blocking socket with nothing to
///   read (`poll` of a copy of it);
/// - a `recvmsg` on a stream socket that holds fewer bytes than it waits for (`MSG_WAITALL`:
///   its buffers' length, read from memory; else `SO_RCVLOWAT`), or a `recvmmsg` of two
///   messages or more without `MSG_WAITFORONE`: natively such a call takes what is there,
///   then waits for the rest, and the signal finds it waiting (it returns what it got;
///   left interrupted, it fails with EINTR and leaves the data queued, rather than wait
///   again after the handler);
/// - a `waitid(P_PIDFD)` without `WNOHANG` for a child that has not exited (its pidfd,
///   copied, is not readable, and not `PIDFD_NONBLOCK`), unless it waits for stopped
///   children and the child is stopped;
/// - an `open`, `openat`, `openat2` or `creat` without `O_NONBLOCK` of a FIFO (its path, and
///   `openat2`'s flags, read from the task's memory, the path looked up from its root,
///   working directory or directory descriptor; `openat2`'s `resolve` flags are not applied
///   to that look).
fn cut_call_would_block(tid: i32, tgid: i32, name: &str, args: &[u64; 6]) -> bool {
    const MSG_DONTWAIT: u64 = libc::MSG_DONTWAIT as u64;
    let copy = |fd: u64| sys::task_getfd(tid, tgid, fd as u32).ok();
    // Memory the call reads first: not readable at all (EFAULT), the call fails at once; not
    // read in time, it may still be readable.
    let readable = |addr: u64, len: usize| {
        crate::mem::read_timed_or(Pid::from_raw(tid), addr, len, crate::mem::READ_DEADLINE)
            != Err(false)
    };
    let fifo = |dirfd: Option<i32>, path: u64, flags: u64| {
        // Opens of a FIFO that never wait: non-blocking, read-write, `O_PATH`, and
        // `O_DIRECTORY` (ENOTDIR).
        let never = libc::O_NONBLOCK | libc::O_PATH | libc::O_DIRECTORY;
        if flags & never as u64 != 0 || flags & libc::O_ACCMODE as u64 == libc::O_RDWR as u64 {
            return false;
        }
        crate::mem::read_path(tid, path).is_some_and(|p| is_task_fifo(tid, dirfd, &p, flags))
    };
    match name {
        "accept" | "accept4" => copy(args[0]).is_some_and(|f| sys::read_would_block(&f)),
        // A receive that fails at once (a listening socket, a header it cannot read, no
        // message asked for) never waits.
        "recvmsg" if args[2] & MSG_DONTWAIT == 0 && readable(args[1], 56) => copy(args[0])
            .is_some_and(|f| {
                !sys::is_listening(&f)
                    && (sys::read_would_block(&f)
                        || recvmsg_waits_for_more(tid, &f, args[1], args[2]))
            }),
        "recvmmsg" if args[3] & MSG_DONTWAIT == 0 && args[2] > 0 && readable(args[1], 64) => {
            copy(args[0]).is_some_and(|f| {
                !sys::is_listening(&f)
                    && (sys::read_would_block(&f)
                        || (args[2] >= 2
                            && args[3] & libc::MSG_WAITFORONE as u64 == 0
                            && sys::is_blocking(&f)))
            })
        }
        "waitid" => waitid_would_block(tid, tgid, args),
        "open" => fifo(None, args[0], args[1]),
        "creat" => fifo(None, args[0], libc::O_WRONLY as u64),
        "openat" => fifo(Some(args[0] as i32), args[1], args[2]),
        "openat2" => {
            // `struct open_how`'s first field, `flags` (a `u64`), read as the path is.
            let how = (args[3] >= 8)
                .then(|| {
                    crate::mem::read_timed(
                        Pid::from_raw(tid),
                        args[2],
                        8,
                        crate::mem::READ_DEADLINE,
                    )
                })
                .flatten()
                .and_then(|b| Some(u64::from_ne_bytes(b.try_into().ok()?)));
            how.is_some_and(|flags| fifo(Some(args[0] as i32), args[1], flags))
        }
        _ => false,
    }
}

/// Whether `path` (a path argument of task `tid`, relative to `dirfd` or its working
/// directory) names a FIFO, looked up as the task would:
/// - the task's own descriptors by their usual names (`/proc/self/fd/N`,
///   `/proc/thread-self/fd/N`, `/dev/fd/N`, `/dev/stdin`...), whose `self` would be the
///   supervisor's if looked up here, are the task's descriptor N (`/proc/<tid>/fd/N`);
/// - an absolute path below the task's root (`RESOLVE_IN_ROOT`: its absolute links stay
///   there), a relative one below its directory;
/// - through no other procfs link (`RESOLVE_NO_MAGICLINKS`): such a link (`/proc/self/...`
///   reached another way) would resolve in the supervisor's view, so the path counts as not a
///   FIFO, whatever the supervisor's own descriptors are.
fn is_task_fifo(tid: i32, dirfd: Option<i32>, path: &[u8], flags: u64) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let parts: Vec<&[u8]> = path
        .split(|&c| c == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .collect();
    let absolute = path.first() == Some(&b'/');
    let own_fd = |n: &[u8]| {
        std::str::from_utf8(n)
            .ok()
            .and_then(|n| n.parse::<u32>().ok())
    };
    let own = match parts.as_slice() {
        _ if !absolute => None,
        [b"proc", b"self" | b"thread-self", b"fd", n] | [b"dev", b"fd", n] => own_fd(n),
        [b"dev", b"stdin"] => Some(0),
        [b"dev", b"stdout"] => Some(1),
        [b"dev", b"stderr"] => Some(2),
        _ => None,
    };
    if let Some(n) = own {
        return std::fs::metadata(format!("/proc/{tid}/fd/{n}"))
            .is_ok_and(|m| m.file_type().is_fifo());
    }
    let (base, resolve) = match dirfd {
        _ if absolute => (format!("/proc/{tid}/root"), sys::RESOLVE_IN_ROOT),
        None | Some(libc::AT_FDCWD) => (format!("/proc/{tid}/cwd"), 0),
        Some(d) => (format!("/proc/{tid}/fd/{d}"), 0),
    };
    let Ok(base) = std::fs::File::open(&base) else {
        return false;
    };
    let rel: Vec<u8> = if absolute {
        path.iter().skip_while(|&&c| c == b'/').copied().collect()
    } else {
        path.to_vec()
    };
    let Ok(rel) = std::ffi::CString::new(if rel.is_empty() { b".".to_vec() } else { rel }) else {
        return false;
    };
    let mut open = libc::O_PATH;
    if flags & libc::O_NOFOLLOW as u64 != 0 {
        open |= libc::O_NOFOLLOW;
    }
    let base: std::os::fd::OwnedFd = base.into();
    sys::openat2(&base, &rel, open, resolve | sys::RESOLVE_NO_MAGICLINKS)
        .ok()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata().ok())
        .is_some_and(|m| m.file_type().is_fifo())
}

/// A `recvmsg(fd, msg, flags)` on the stream socket `f` (a copy of `fd`) that finds data
/// would still wait for more: `MSG_WAITALL` with fewer bytes waiting than its buffers hold,
/// or fewer than `SO_RCVLOWAT` (capped by the buffers), as the kernel's `sock_rcvlowat`.
fn recvmsg_waits_for_more(tid: i32, f: &std::os::fd::OwnedFd, msg: u64, flags: u64) -> bool {
    let Some((lowat, waiting)) = sys::stream_waiting(f) else {
        return false;
    };
    let waitall = flags & libc::MSG_WAITALL as u64 != 0;
    if !sys::is_blocking(f) || (!waitall && lowat <= waiting) {
        return false;
    }
    let Some(len) = iov_len(tid, msg) else {
        return false;
    };
    let target = if waitall { len } else { lowat.min(len) };
    waiting < target
}

/// The total length of the buffers of the `struct msghdr` at `msg` in task `tid`'s memory
/// (read with the usual deadline); `None` if it cannot be read or has more than `UIO_MAXIOV`
/// buffers (the call fails then).
fn iov_len(tid: i32, msg: u64) -> Option<usize> {
    const UIO_MAXIOV: u64 = 1024;
    let pid = Pid::from_raw(tid);
    let word = |b: &[u8], i: usize| Some(u64::from_ne_bytes(b.get(i..i + 8)?.try_into().ok()?));
    // `msg_iov` and `msg_iovlen`: the third and fourth words of `struct msghdr`.
    let hdr = crate::mem::read_timed(pid, msg, 32, crate::mem::READ_DEADLINE)?;
    let (iov, n) = (word(&hdr, 16)?, word(&hdr, 24)?);
    if n > UIO_MAXIOV {
        return None;
    }
    let vec = crate::mem::read_timed(pid, iov, n as usize * 16, crate::mem::READ_DEADLINE)?;
    (0..n as usize).try_fold(0usize, |sum, i| {
        Some(sum.saturating_add(word(&vec, i * 16 + 8)? as usize))
    })
}

/// A `waitid(P_PIDFD, fd, info, options)` that would wait: no `WNOHANG`, the pidfd (copied)
/// is blocking and not readable (its process has not exited), and that process is a child
/// of the caller's process, unless the call also waits for stopped children and it is
/// stopped. Anything else returns at once (or fails: ECHILD, EAGAIN).
fn waitid_would_block(tid: i32, tgid: i32, args: &[u64; 6]) -> bool {
    if args[0] as u32 != crate::calls::process::P_PIDFD || args[3] & libc::WNOHANG as u64 != 0 {
        return false;
    }
    let Some(f) = sys::task_getfd(tid, tgid, args[1] as u32).ok() else {
        return false;
    };
    if !sys::read_would_block(&f) {
        return false;
    }
    let pid = crate::procfs::fdinfo(tid, args[1] as u32)
        .and_then(|t| crate::procfs::field(&t, "Pid:").and_then(|v| v.parse::<i32>().ok()));
    let Some((state, ppid)) = pid.filter(|&p| p > 0).and_then(crate::procfs::state_of) else {
        return false;
    };
    let stopped = matches!(state, 'T' | 't');
    ppid == tgid && !(args[3] & libc::WSTOPPED as u64 != 0 && stopped)
}

/// The message of `tid`'s ptrace event `ev` (`PTRACE_GETEVENTMSG`), if `tid` is still in that
/// event's stop. A task killed after the stop was reported leaves it for its exit stop,
/// whose message is its exit status: read as a clone's child, that is a process id that is
/// not the program's (9 after a SIGKILL). The stop is checked first (`PTRACE_GETSIGINFO`:
/// an event stop's `si_code` is `SIGTRAP | ev << 8`); a task no longer stopped answers
/// neither.
pub(super) fn event_message(tid: i32, ev: i32) -> Option<u64> {
    let pid = Pid::from_raw(tid);
    let si = ptrace::getsiginfo(pid).ok()?;
    if si.si_signo != libc::SIGTRAP || si.si_code >> 8 != ev {
        return None;
    }
    ptrace::getevent(pid).ok().map(|v| v as u64)
}

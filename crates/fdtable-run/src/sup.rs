//! The supervisor: one thread, one `waitpid` loop over every traced task, a
//! `fdtable::Files` handle per task, and the tables following the tasks through the library's
//! own calls (`fork`, `share`, `unshare`, `exec`).
//!
//! The per-call work is in [`crate::handlers`]; this module has the tasks, the stops, the
//! register edits, and syscall injection (running a call of the supervisor's choosing in a
//! stopped tracee: a close, an mmap for scratch memory).

use crate::handlers::{Decision, Then};
use crate::sys::{self, Status};
use crate::table::{Desc, DescKind, FdMap, Origin, Slot};
use fdtable::{FileRef, Files};
use nix::sys::ptrace;
use nix::unistd::Pid;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::rc::Rc;

/// The real number given to an fd argument that names no descriptor: never open in any
/// tracee (it is above every real limit), so the kernel answers EBADF in its own order of
/// checks, as it would for the program's number.
pub const BADF: i32 = i32::MAX;

/// Real descriptors kept free, when there are placeholders, beyond those the program may
/// hold (its virtual soft limit): room for a real descriptor whose number the library has
/// already freed while another thread's close of it is still in flight.
pub const SLACK: u64 = 64;

/// Size of each thread's scratch mapping (address space only; pages are touched on use).
pub const SCRATCH: u64 = 1 << 20;

/// How the supervisor was configured.
#[derive(Clone, Debug)]
pub struct Config {
    /// The virtual RLIMIT_NOFILE of the first process (soft, hard).
    pub nofile: (u64, u64),
    /// Report the descriptors each process still holds when it exits.
    pub track_fds: bool,
    /// How many placeholders fill the bottom of the first process's real table (0: none).
    pub placeholders: i32,
    /// The real RLIMIT_NOFILE every traced process runs with.
    pub real_limit: u64,
    /// Check, at every process exit, that the real table matches the library's (slow).
    pub check_tables: bool,
    /// The kernel's `fs.nr_open` (the ceiling of RLIMIT_NOFILE).
    pub nr_open: u64,
}

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// `exit(code)`.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// Counters, for `--stats` and the benchmark.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Seccomp stops (traced calls).
    pub seccomp_stops: u64,
    /// Syscall-exit stops (calls whose registers or result needed work after the kernel).
    pub exit_stops: u64,
    /// Calls answered without running them.
    pub emulated: u64,
    /// Calls the supervisor ran inside a tracee.
    pub injected: u64,
    /// Refused calls.
    pub refused: u64,
    /// Processes and threads traced.
    pub tasks: u64,
    /// Signal-delivery stops.
    pub signals: u64,
    /// Differences found between a real table and the library's (`check_tables`).
    pub table_mismatches: u64,
    /// Orphaned real descriptors closed.
    pub orphans_closed: u64,
    /// Placeholders at the bottom of the first process's real table.
    pub placeholders: u64,
    /// Placeholders closed because a program raised its soft limit.
    pub placeholders_retired: u64,
}

/// A thread group.
#[derive(Debug)]
pub struct Proc {
    /// Its id.
    pub tgid: i32,
    /// Virtual RLIMIT_NOFILE (soft, hard).
    pub nofile: (u64, u64),
    /// Tasks that have not reached their exit.
    pub live: usize,
    /// `--track-fds` report printed.
    pub reported: bool,
}

/// An address space: the scratch mappings the supervisor made in it.
#[derive(Clone, Debug, Default)]
pub struct Mm {
    /// Every scratch mapping.
    pub all: Vec<u64>,
    /// Those no task uses now.
    pub free: Vec<u64>,
}

/// A call in flight that needs the syscall-exit stop.
#[derive(Debug)]
pub struct Pending {
    /// The original number.
    pub nr: u64,
    /// The original arguments.
    pub args: [u64; 6],
    /// Which argument registers were changed.
    pub edited: [bool; 6],
    /// Whether the number was changed.
    pub nr_edited: bool,
    /// What to do with the result.
    pub then: Then,
}

/// One traced task.
pub struct Task {
    /// Its id.
    pub tid: i32,
    /// Its thread group.
    pub proc_: Rc<RefCell<Proc>>,
    /// Its descriptor table (a handle; threads sharing a table each hold one from `share`).
    pub files: Files<Desc>,
    /// The translation of that table (shared with the same sharers).
    pub map: Rc<RefCell<FdMap>>,
    /// Its address space.
    pub mm: Rc<RefCell<Mm>>,
    /// Its scratch mapping, if it has one.
    pub scratch: Option<u64>,
    /// The call in flight, when its exit stop is awaited.
    pub pending: Option<Pending>,
    /// Flags of the clone/fork call in flight.
    pub clone_flags: Option<u64>,
    /// Its first stop has been seen.
    pub started: bool,
    /// Before the first process's first exec: calls pass untranslated.
    pub raw: bool,
    /// An exec event happened while a call was pending.
    pub exec_happened: bool,
    /// Signals taken during an injection, re-sent: their original siginfo.
    pub fixups: Vec<libc::siginfo_t>,
    /// Signals taken during the current injection.
    pub held: Vec<libc::siginfo_t>,
}

impl Task {
    /// Its thread group id.
    pub fn tgid(&self) -> i32 {
        self.proc_.borrow().tgid
    }

    /// Its virtual RLIMIT_NOFILE soft limit.
    pub fn nofile(&self) -> u64 {
        self.proc_.borrow().nofile.0
    }
}

/// A call run inside a tracee by the supervisor.
#[derive(Clone, Copy, Debug)]
pub struct Inject {
    /// Number.
    pub nr: i64,
    /// Arguments.
    pub args: [u64; 6],
}

impl Inject {
    /// `close(fd)`.
    pub fn close(fd: i32) -> Inject {
        Inject {
            nr: libc::SYS_close,
            args: [fd as u64, 0, 0, 0, 0, 0],
        }
    }
}

/// The tracee died (or is dying) during an injection.
#[derive(Debug)]
pub struct Gone;

/// The supervisor.
pub struct Supervisor {
    /// Configuration.
    pub cfg: Config,
    /// Every traced task.
    pub tasks: HashMap<i32, Task>,
    /// New tasks whose first stop came before their creator's event.
    early: HashSet<i32>,
    /// Stops read during an injection that belong to the main loop.
    requeue: VecDeque<Status>,
    /// The first process.
    pub root: i32,
    /// How it ended.
    pub root_exit: Option<Exit>,
    /// Counter for pending-slot tokens.
    pub next_token: u64,
    /// Notes already printed (each once per run).
    notes: HashSet<String>,
    /// Counters.
    pub stats: Stats,
}

/// `-ERESTARTSYS`, `-ERESTARTNOINTR`, `-ERESTARTNOHAND`, `-ERESTART_RESTARTBLOCK`: the
/// call will be restarted (the kernel's internal codes, never seen by the program).
pub fn is_restart(ret: i64) -> bool {
    matches!(ret, -516..=-512)
}

fn arg_offset(i: usize) -> usize {
    use std::mem::offset_of;
    type R = libc::user_regs_struct;
    [
        offset_of!(R, rdi),
        offset_of!(R, rsi),
        offset_of!(R, rdx),
        offset_of!(R, r10),
        offset_of!(R, r8),
        offset_of!(R, r9),
    ][i]
}

fn poke(tid: i32, off: usize, v: u64) -> nix::Result<()> {
    ptrace::write_user(
        Pid::from_raw(tid),
        std::ptr::without_provenance_mut(off),
        v as libc::c_long,
    )
}

fn peek(tid: i32, off: usize) -> nix::Result<u64> {
    ptrace::read_user(Pid::from_raw(tid), std::ptr::without_provenance_mut(off)).map(|v| v as u64)
}

const OFF_RAX: usize = std::mem::offset_of!(libc::user_regs_struct, rax);
const OFF_ORIG_RAX: usize = std::mem::offset_of!(libc::user_regs_struct, orig_rax);

/// Skips the call of a tracee in a seccomp stop whose registers are `regs`: it returns `v`
/// without running (one request).
fn skip(tid: i32, regs: &mut libc::user_regs_struct, v: i64) {
    regs.orig_rax = u64::MAX;
    regs.rax = v as u64;
    let _ = ptrace::setregs(Pid::from_raw(tid), *regs);
    let _ = sys::resume(tid, false, 0);
}

fn arg_of(r: &libc::user_regs_struct, i: usize) -> u64 {
    [r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9][i]
}

fn set_arg(r: &mut libc::user_regs_struct, i: usize, v: u64) {
    match i {
        0 => r.rdi = v,
        1 => r.rsi = v,
        2 => r.rdx = v,
        3 => r.r10 = v,
        4 => r.r8 = v,
        _ => r.r9 = v,
    }
}

impl Supervisor {
    /// A supervisor for the first process `root`, whose initial descriptors are `initial`
    /// (virtual number, real number).
    pub fn new(cfg: Config, root: i32, initial: &[(u32, i32)]) -> Supervisor {
        let files: Files<Desc> = Files::new();
        let placeholders = cfg.placeholders;
        let mut map = FdMap::default();
        map.placeholders = placeholders;
        let origin = Rc::new(Origin {
            call: "<inherited from parent>".into(),
            pid: 0,
            from: None,
        });
        let mut dropped = Vec::new();
        for &(v, real) in initial {
            // A number the library cannot hold (beyond its nr_open) is left out, and said so.
            let Ok(fd) = files.alloc_fd(v, v as u64 + 1, 0) else {
                dropped.push(v);
                continue;
            };
            let _ = files.fd_install(fd, FileRef::new(Desc::new(DescKind::Plain)));
            map.set(
                v,
                Slot::Real {
                    real,
                    origin: origin.clone(),
                },
            );
        }
        if !dropped.is_empty() {
            let _ = writeln!(
                std::io::stderr(),
                "fdtable run: inherited descriptors {dropped:?} are beyond the library's nr_open; the program does not get them"
            );
        }
        let proc_ = Rc::new(RefCell::new(Proc {
            tgid: root,
            nofile: cfg.nofile,
            live: 1,
            reported: false,
        }));
        let task = Task {
            tid: root,
            proc_,
            files,
            map: Rc::new(RefCell::new(map)),
            mm: Rc::new(RefCell::new(Mm::default())),
            scratch: None,
            pending: None,
            clone_flags: None,
            started: true,
            raw: true,
            exec_happened: false,
            fixups: Vec::new(),
            held: Vec::new(),
        };
        let mut tasks = HashMap::new();
        tasks.insert(root, task);
        Supervisor {
            cfg,
            tasks,
            early: HashSet::new(),
            requeue: VecDeque::new(),
            root,
            root_exit: None,
            next_token: 1,
            notes: HashSet::new(),
            stats: Stats {
                tasks: 1,
                placeholders: placeholders as u64,
                ..Stats::default()
            },
        }
    }

    /// Prints a note on stderr, once per distinct text.
    pub fn note(&mut self, text: String) {
        if self.notes.insert(text.clone()) {
            let _ = writeln!(std::io::stderr(), "fdtable run: {text}");
        }
    }

    /// Runs until every traced task is gone; returns how the first process ended.
    pub fn run(&mut self) -> Option<Exit> {
        loop {
            let st = match self.requeue.pop_front() {
                Some(s) => s,
                None => match sys::wait(-1) {
                    Ok(s) => s,
                    Err(e) if e.raw_os_error() == Some(libc::ECHILD) => break,
                    Err(e) => {
                        self.note(format!("waitpid: {e}"));
                        break;
                    }
                },
            };
            self.dispatch(st);
        }
        self.root_exit
    }

    fn dispatch(&mut self, st: Status) {
        match st {
            Status::Event(tid, sig, ev) => match ev {
                libc::PTRACE_EVENT_SECCOMP => self.on_seccomp(tid),
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE => {
                    self.on_clone_event(tid, ev)
                }
                libc::PTRACE_EVENT_EXEC => self.on_exec(tid),
                libc::PTRACE_EVENT_EXIT => self.on_exit_event(tid),
                libc::PTRACE_EVENT_STOP => self.on_event_stop(tid, sig),
                _ => self.resume(tid, 0),
            },
            Status::Syscall(tid) => self.on_syscall_stop(tid),
            Status::Signal(tid, sig) => self.on_signal(tid, sig),
            Status::Exited(tid, code) => self.on_gone(tid, Exit::Code(code)),
            Status::Signaled(tid, sig) => self.on_gone(tid, Exit::Signal(sig)),
        }
    }

    /// Resumes `tid`: to the exit of its pending call if it has one, else freely.
    pub fn resume(&mut self, tid: i32, sig: i32) {
        let syscall = self.tasks.get(&tid).is_some_and(|t| t.pending.is_some());
        let _ = sys::resume(tid, syscall, sig);
    }

    // === stops ===

    fn on_seccomp(&mut self, tid: i32) {
        let Some(task) = self.tasks.get(&tid) else {
            let _ = sys::resume(tid, false, 0);
            return;
        };
        if task.raw {
            let _ = sys::resume(tid, false, 0);
            return;
        }
        // One request reads everything: the number (orig_rax) and the arguments.
        let Ok(regs) = ptrace::getregs(Pid::from_raw(tid)) else {
            return;
        };
        let nr = regs.orig_rax;
        let args = [regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9];
        self.stats.seccomp_stops += 1;
        // Placeholders that must make room for a raised soft limit go first, then real
        // descriptors left over by a fork or exec; then the call starts again.
        let retire = {
            let mut m = task.map.borrow_mut();
            match m.shrink_to.take() {
                Some(to) if to < m.placeholders => {
                    let from = std::mem::replace(&mut m.placeholders, to);
                    Some((to, from - 1))
                }
                _ => None,
            }
        };
        if let Some((lo, hi)) = retire {
            self.stats.placeholders_retired += (hi - lo + 1) as u64;
            let call = Inject {
                nr: libc::SYS_close_range,
                args: [lo as u64, hi as u64, 0, 0, 0, 0],
            };
            if let Ok((_, saved)) = self.inject(tid, true, &[call]) {
                self.restart(tid, saved);
            }
            return;
        }
        let orphans = std::mem::take(&mut task.map.borrow_mut().orphans);
        if !orphans.is_empty() {
            self.stats.orphans_closed += orphans.len() as u64;
            let kept = task.map.borrow().reals();
            let calls = crate::handlers::close_calls(orphans, &kept);
            if let Ok((_, saved)) = self.inject(tid, true, &calls) {
                self.restart(tid, saved);
            }
            return;
        }
        // The filter gives other ABIs ENOSYS itself; x32 numbers stop here.
        let decision = if nr & 0x4000_0000 != 0 {
            Decision::Refuse(
                libc::ENOSYS,
                format!("refused system call {nr:#x} of another ABI (x32)"),
            )
        } else {
            self.decide(tid, nr, args)
        };
        self.apply(tid, regs, decision);
    }

    fn apply(&mut self, tid: i32, mut regs: libc::user_regs_struct, decision: Decision) {
        let nr = regs.orig_rax;
        let args = [regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9];
        match decision {
            Decision::Pass => {
                let _ = sys::resume(tid, false, 0);
            }
            Decision::Return(v) => {
                self.stats.emulated += 1;
                skip(tid, &mut regs, v);
            }
            Decision::Refuse(errno, why) => {
                self.stats.refused += 1;
                self.note(why);
                skip(tid, &mut regs, -(errno as i64));
            }
            Decision::NeedScratch => {
                let call = Inject {
                    nr: libc::SYS_mmap,
                    args: [
                        0,
                        SCRATCH,
                        (libc::PROT_READ | libc::PROT_WRITE) as u64,
                        (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64,
                        u64::MAX,
                        0,
                    ],
                };
                if let Ok((r, saved)) = self.inject(tid, true, &[call]) {
                    let addr = r[0];
                    if let Some(t) = self.tasks.get_mut(&tid)
                        && addr > 0
                        && (addr as u64) < 0x8000_0000_0000
                    {
                        t.scratch = Some(addr as u64);
                        t.mm.borrow_mut().all.push(addr as u64);
                        self.restart(tid, saved);
                    } else {
                        // No memory for scratch: the call fails as the kernel would.
                        self.finish_injected(tid, saved, -(libc::ENOMEM as i64));
                    }
                }
            }
            Decision::InjectReturn(calls, ret) => {
                if let Ok((_, saved)) = self.inject(tid, true, &calls) {
                    self.finish_injected(tid, saved, ret);
                }
            }
            Decision::Run {
                nr: new_nr,
                edits,
                then,
            } => {
                let mut edited = [false; 6];
                let mut n_edits = 0;
                for (i, e) in edits.iter().enumerate() {
                    if let Some(v) = *e
                        && v != args[i]
                    {
                        set_arg(&mut regs, i, v);
                        edited[i] = true;
                        n_edits += 1;
                    }
                }
                let nr_edited = new_nr.is_some_and(|n| n != nr);
                if let Some(n) = new_nr.filter(|_| nr_edited) {
                    regs.orig_rax = n;
                    n_edits += 1;
                }
                // One request whatever the number of changes, or one poke for a single one.
                if n_edits > 1 {
                    let _ = ptrace::setregs(Pid::from_raw(tid), regs);
                } else if nr_edited {
                    let _ = poke(tid, OFF_ORIG_RAX, regs.orig_rax);
                } else if let Some(i) = edited.iter().position(|&e| e) {
                    let _ = poke(tid, arg_offset(i), arg_of(&regs, i));
                }
                if let Some(t) = self.tasks.get_mut(&tid) {
                    t.pending = Some(Pending {
                        nr,
                        args,
                        edited,
                        nr_edited,
                        then,
                    });
                }
                let _ = sys::resume(tid, true, 0);
            }
        }
    }

    /// After injections that started in a seccomp stop: the call returns `ret`.
    fn finish_injected(&mut self, tid: i32, mut saved: libc::user_regs_struct, ret: i64) {
        saved.rax = ret as u64;
        let _ = ptrace::setregs(Pid::from_raw(tid), saved);
        self.resend_held(tid);
        let _ = sys::resume(tid, false, 0);
    }

    /// After injections that started in a seccomp stop: the original call runs again from
    /// the start (and stops in the supervisor again).
    fn restart(&mut self, tid: i32, mut saved: libc::user_regs_struct) {
        saved.rip -= 2;
        saved.rax = saved.orig_rax;
        let _ = ptrace::setregs(Pid::from_raw(tid), saved);
        self.resend_held(tid);
        let _ = sys::resume(tid, false, 0);
    }

    fn on_syscall_stop(&mut self, tid: i32) {
        let Some(task) = self.tasks.get_mut(&tid) else {
            let _ = sys::resume(tid, false, 0);
            return;
        };
        let Some(p) = task.pending.take() else {
            let _ = sys::resume(tid, false, 0);
            return;
        };
        self.stats.exit_stops += 1;
        if matches!(p.then, Then::Exec) && std::mem::take(&mut task.exec_happened) {
            // The new program's registers: nothing of the old call to restore.
            let _ = sys::resume(tid, false, 0);
            return;
        }
        let restore = |tid: i32| {
            for i in 0..6 {
                if p.edited[i] {
                    let _ = poke(tid, arg_offset(i), p.args[i]);
                }
            }
            if p.nr_edited {
                let _ = poke(tid, OFF_ORIG_RAX, p.nr);
            }
        };
        if matches!(p.then, Then::Restore) {
            // The result is the kernel's as it is: only the arguments go back (a restarted
            // call then arrives with them, translated afresh).
            restore(tid);
            let _ = sys::resume(tid, false, 0);
            return;
        }
        let Ok(ret) = peek(tid, OFF_RAX) else {
            return;
        };
        let ret = ret as i64;
        restore(tid);
        if is_restart(ret) {
            // The kernel will run the call again with the original (virtual) arguments,
            // which stop here again; undo what the entry did. A restart through
            // restart_syscall would reuse the rewritten arguments: ask for a plain restart.
            self.undo(tid, p.then);
            if ret == -516 {
                let _ = poke(tid, OFF_RAX, (-514i64) as u64);
            }
            let _ = sys::resume(tid, false, 0);
            return;
        }
        let new = self.finish(tid, p.then, ret);
        if new != ret {
            let _ = poke(tid, OFF_RAX, new as u64);
        }
        self.resend_held(tid);
        let _ = sys::resume(tid, false, 0);
    }

    fn on_signal(&mut self, tid: i32, sig: i32) {
        self.stats.signals += 1;
        let Some(task) = self.tasks.get_mut(&tid) else {
            // A new task's first stop, before its creator's event.
            self.early.insert(tid);
            return;
        };
        if !task.started {
            task.started = true;
            self.resume(tid, 0);
            return;
        }
        if let Some(i) = task.fixups.iter().position(|s| s.si_signo == sig) {
            let info = task.fixups.remove(i);
            let _ = ptrace::setsiginfo(Pid::from_raw(tid), &info);
        }
        self.resume(tid, sig);
    }

    fn on_event_stop(&mut self, tid: i32, sig: i32) {
        let Some(task) = self.tasks.get_mut(&tid) else {
            self.early.insert(tid);
            return;
        };
        if !task.started {
            task.started = true;
            self.resume(tid, 0);
            return;
        }
        if matches!(
            sig,
            libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
        ) {
            // Group-stop: stay stopped, but hear about SIGCONT.
            let _ = sys::ptrace_listen(Pid::from_raw(tid));
        } else {
            self.resume(tid, 0);
        }
    }

    // === process lifetime ===

    fn on_clone_event(&mut self, tid: i32, ev: i32) {
        let Ok(child) = ptrace::getevent(Pid::from_raw(tid)) else {
            self.resume(tid, 0);
            return;
        };
        let child = child as i32;
        let Some(parent) = self.tasks.get_mut(&tid) else {
            let _ = sys::resume(tid, false, 0);
            return;
        };
        let flags = parent.clone_flags.take().unwrap_or(match ev {
            libc::PTRACE_EVENT_FORK => libc::SIGCHLD as u64,
            libc::PTRACE_EVENT_VFORK => (libc::CLONE_VM | libc::CLONE_VFORK) as u64,
            _ => (libc::CLONE_VM | libc::CLONE_FILES | libc::CLONE_THREAD) as u64,
        });
        let files_shared = flags & libc::CLONE_FILES as u64 != 0;
        let thread = flags & libc::CLONE_THREAD as u64 != 0;
        let vm = flags & libc::CLONE_VM as u64 != 0;
        let racy = parent.files.is_shared();
        let (files, map) = if files_shared {
            (parent.files.share(), parent.map.clone())
        } else {
            match parent.files.fork() {
                Ok(f) => (f, Rc::new(RefCell::new(parent.map.borrow().clone()))),
                Err(e) => {
                    // The kernel made the copy; the library could not. Nothing sound is left
                    // for this child.
                    let msg = format!(
                        "process {child}: the library could not copy its table ({e}); killed"
                    );
                    let _ = sys::tgkill(child, child, libc::SIGKILL);
                    self.note(msg);
                    self.resume(tid, 0);
                    return;
                }
            }
        };
        // A pending reservation (a pidfd in flight) is not part of the child's copy, as in
        // the kernel; the map has no slot for it either.
        let proc_ = if thread {
            parent.proc_.borrow_mut().live += 1;
            parent.proc_.clone()
        } else {
            Rc::new(RefCell::new(Proc {
                tgid: child,
                nofile: parent.proc_.borrow().nofile,
                live: 1,
                reported: false,
            }))
        };
        let (mm, scratch) = if vm {
            let s = parent.mm.borrow_mut().free.pop();
            (parent.mm.clone(), s)
        } else {
            let mut m = parent.mm.borrow().clone();
            m.free = m
                .all
                .iter()
                .copied()
                .filter(|&a| Some(a) != parent.scratch)
                .collect();
            (Rc::new(RefCell::new(m)), parent.scratch)
        };
        let task = Task {
            tid: child,
            proc_,
            files,
            map,
            mm,
            scratch,
            pending: None,
            clone_flags: None,
            started: false,
            raw: false,
            exec_happened: false,
            fixups: Vec::new(),
            held: Vec::new(),
        };
        self.stats.tasks += 1;
        self.tasks.insert(child, task);
        if !files_shared && racy {
            // Another thread of the parent may have changed the table while the kernel
            // copied it: make the child's map agree with its real table.
            self.reconcile(child);
        }
        if self.early.remove(&child) {
            self.tasks.get_mut(&child).unwrap().started = true;
            let _ = sys::resume(child, false, 0);
        }
        self.resume(tid, 0);
    }

    fn on_exec(&mut self, tid: i32) {
        let former = ptrace::getevent(Pid::from_raw(tid)).map_or(tid, |v| v as i32);
        if former != tid {
            // A thread other than the leader executed: it takes the leader's id.
            self.tasks.remove(&tid);
            if let Some(mut t) = self.tasks.remove(&former) {
                t.tid = tid;
                self.tasks.insert(tid, t);
            }
        }
        let Some(task) = self.tasks.get(&tid) else {
            let _ = sys::resume(tid, false, 0);
            return;
        };
        // de_thread: every other thread of the process is gone.
        let proc_ = task.proc_.clone();
        let others: Vec<i32> = self
            .tasks
            .iter()
            .filter(|(t, other)| **t != tid && Rc::ptr_eq(&other.proc_, &proc_))
            .map(|(t, _)| *t)
            .collect();
        for t in others {
            self.tasks.remove(&t);
        }
        {
            let mut p = proc_.borrow_mut();
            p.live = 1;
            p.tgid = tid;
        }
        let task = self.tasks.get_mut(&tid).unwrap();
        let first = std::mem::replace(&mut task.raw, false);
        if task.pending.is_some() {
            task.exec_happened = true;
        }
        task.mm = Rc::new(RefCell::new(Mm::default()));
        task.scratch = None;
        if first {
            // The first process's own exec: its table is the initial one.
            let _ = sys::resume(tid, task.pending.is_some(), 0);
            return;
        }
        let was_shared = task.files.is_shared();
        let closing: Vec<u32> = task
            .map
            .borrow()
            .iter()
            .map(|(fd, _)| fd)
            .filter(|&fd| {
                matches!(
                    task.files.fd_state(fd),
                    fdtable::FdState::Installed { cloexec: true }
                )
            })
            .collect();
        if let Err(e) = task.files.exec() {
            let msg = format!("process {tid}: exec in the library failed: {e}");
            self.note(msg);
        }
        let task = self.tasks.get_mut(&tid).unwrap();
        if was_shared {
            let copy = task.map.borrow().clone();
            task.map = Rc::new(RefCell::new(copy));
        }
        let unsynced = {
            let mut m = task.map.borrow_mut();
            for fd in closing {
                m.take(fd);
            }
            std::mem::take(&mut m.cloexec_unsynced)
        };
        if was_shared || unsynced {
            self.reconcile(tid);
        }
        self.resume(tid, 0);
    }

    fn on_exit_event(&mut self, tid: i32) {
        if let Some(task) = self.tasks.get(&tid) {
            let last = {
                let mut p = task.proc_.borrow_mut();
                p.live = p.live.saturating_sub(1);
                p.live == 0 && !std::mem::replace(&mut p.reported, true)
            };
            if last {
                if self.cfg.track_fds {
                    self.report_fds(tid, true);
                }
                if self.cfg.check_tables {
                    self.check_table(tid);
                }
            }
        }
        let _ = sys::resume(tid, false, 0);
    }

    fn on_gone(&mut self, tid: i32, how: Exit) {
        if tid == self.root {
            self.root_exit = Some(how);
        }
        self.early.remove(&tid);
        if let Some(task) = self.tasks.get(&tid) {
            let last = {
                let p = task.proc_.borrow();
                Rc::strong_count(&task.proc_) == 1 && !p.reported
            };
            if last && self.cfg.track_fds {
                // Killed without an exit stop: report from the library's table alone.
                task.proc_.borrow_mut().reported = true;
                self.report_fds(tid, false);
            }
        }
        if let Some(task) = self.tasks.remove(&tid)
            && let Some(s) = task.scratch
        {
            task.mm.borrow_mut().free.push(s);
        }
    }

    // === injection ===

    /// Runs `calls` in `tid`, which is in a seccomp stop (`from_entry`: the first call takes
    /// the place of the stopped one) or in a syscall-exit stop. Returns the results and the
    /// registers of the stop it started from; the tracee is left in the exit stop of the last
    /// call, and the caller sets the registers it must resume with.
    pub fn inject(
        &mut self,
        tid: i32,
        from_entry: bool,
        calls: &[Inject],
    ) -> Result<(Vec<i64>, libc::user_regs_struct), Gone> {
        let pid = Pid::from_raw(tid);
        let saved = ptrace::getregs(pid).map_err(|_| Gone)?;
        let mut out = Vec::with_capacity(calls.len());
        let mut at_entry = from_entry;
        for c in calls {
            self.stats.injected += 1;
            let mut r = saved;
            r.orig_rax = c.nr as u64;
            r.rax = c.nr as u64;
            for (i, &a) in c.args.iter().enumerate() {
                set_arg(&mut r, i, a);
            }
            if !at_entry {
                r.rip = saved.rip - 2;
            }
            ptrace::setregs(pid, r).map_err(|_| Gone)?;
            sys::resume(tid, true, 0).map_err(|_| Gone)?;
            self.wait_exit(tid, !at_entry)?;
            out.push(peek(tid, OFF_RAX).map_err(|_| Gone)? as i64);
            at_entry = false;
        }
        Ok((out, saved))
    }

    /// Waits for `tid`'s syscall-exit stop (after its entry stop when `entry` is expected).
    fn wait_exit(&mut self, tid: i32, mut entry: bool) -> Result<(), Gone> {
        loop {
            let st = sys::wait(tid).map_err(|_| Gone)?;
            match st {
                Status::Syscall(_) if entry => entry = false,
                Status::Syscall(_) => return Ok(()),
                Status::Event(_, _, libc::PTRACE_EVENT_EXIT)
                | Status::Exited(..)
                | Status::Signaled(..) => {
                    self.requeue.push_back(st);
                    return Err(Gone);
                }
                Status::Event(..) => {}
                Status::Signal(_, sig) => {
                    // Held until the injection is over, then sent again with its siginfo.
                    if let Ok(info) = ptrace::getsiginfo(Pid::from_raw(tid))
                        && let Some(t) = self.tasks.get_mut(&tid)
                    {
                        t.held.push(info);
                    } else {
                        let _ = sig;
                    }
                }
            }
            sys::resume(tid, true, 0).map_err(|_| Gone)?;
        }
    }

    /// Sends again the signals held during an injection; their stops restore the siginfo.
    fn resend_held(&mut self, tid: i32) {
        let Some(t) = self.tasks.get_mut(&tid) else {
            return;
        };
        let held = std::mem::take(&mut t.held);
        let tgid = t.tgid();
        for info in held {
            if sys::tgkill(tgid, tid, info.si_signo).is_ok() {
                t.fixups.push(info);
            }
        }
    }

    /// Closes real descriptors in `tid`, which is in a syscall-exit stop, leaving its
    /// registers as they were.
    pub fn close_reals(&mut self, tid: i32, reals: &[i32]) {
        if reals.is_empty() {
            return;
        }
        let kept = self
            .tasks
            .get(&tid)
            .map(|t| t.map.borrow().reals())
            .unwrap_or_default();
        let calls = crate::handlers::close_calls(reals.to_vec(), &kept);
        if let Ok((_, saved)) = self.inject(tid, false, &calls) {
            let _ = ptrace::setregs(Pid::from_raw(tid), saved);
        }
    }

    // === tables ===

    /// The placeholders at the bottom of `tid`'s real table (0: none).
    pub fn placeholders(&self, tid: i32) -> i32 {
        self.tasks
            .get(&tid)
            .map_or(0, |t| t.map.borrow().placeholders)
    }

    /// The real descriptors above the placeholders in `tid`'s real table.
    pub fn real_fds(&self, tid: i32) -> Vec<i32> {
        crate::procfs::list_fds(tid, self.placeholders(tid))
    }

    /// Makes `tid`'s map agree with its real table: numbers whose real descriptor is gone are
    /// closed in the library; real descriptors no number maps to are closed in the tracee at
    /// its next stop.
    pub fn reconcile(&mut self, tid: i32) {
        let reals: HashSet<i32> = self.real_fds(tid).into_iter().collect();
        let Some(task) = self.tasks.get_mut(&tid) else {
            return;
        };
        let mut map = task.map.borrow_mut();
        let mut dead = Vec::new();
        for (fd, s) in map.iter() {
            if let Slot::Real { real, .. } = s
                && !reals.contains(real)
            {
                dead.push(fd);
            }
        }
        for fd in dead {
            map.take(fd);
            let _ = task.files.file_close_fd(fd);
        }
        let mapped: HashSet<i32> = map.reals().into_iter().collect();
        let mut orphans: Vec<i32> = reals.difference(&mapped).copied().collect();
        orphans.sort_unstable();
        map.orphans.extend(orphans);
    }

    /// Compares `tid`'s real table with the library's; counts differences.
    fn check_table(&mut self, tid: i32) {
        let reals: HashSet<i32> = self.real_fds(tid).into_iter().collect();
        let placeholders = self.placeholders(tid);
        let below = crate::procfs::count_fds_below(tid, placeholders);
        let Some(task) = self.tasks.get(&tid) else {
            return;
        };
        let map = task.map.borrow();
        // Orphans not closed yet are accounted for: a process that exits before its next
        // traced call (a forked child whose exec failed) leaves them to the kernel.
        let mapped: HashSet<i32> = map
            .reals()
            .into_iter()
            .chain(map.orphans.iter().copied())
            .collect();
        let mut bad = 0;
        if below != Some(placeholders as usize) {
            bad += 1;
        }
        for (fd, s) in map.iter() {
            let installed = matches!(task.files.fd_state(fd), fdtable::FdState::Installed { .. });
            match s {
                Slot::Real { real, .. } if installed && reals.contains(real) => {}
                _ => bad += 1,
            }
        }
        bad += reals.difference(&mapped).count();
        if bad > 0 {
            let _ = writeln!(
                std::io::stderr(),
                "fdtable run: process {tid}: real table differs from the library's in {bad} places"
            );
        }
        self.stats.table_mismatches += bad as u64;
    }

    /// `--track-fds`: the descriptors `tid`'s process still holds.
    fn report_fds(&mut self, tid: i32, alive: bool) {
        let Some(task) = self.tasks.get(&tid) else {
            return;
        };
        let pid = task.tgid();
        let map = task.map.borrow();
        let open: Vec<(u32, Rc<Origin>, Option<i32>)> = map
            .iter()
            .map(|(fd, s)| {
                let real = match s {
                    Slot::Real { real, .. } => Some(*real),
                    Slot::Pending { .. } => None,
                };
                (fd, s.origin().clone(), real)
            })
            .collect();
        drop(map);
        let std = open
            .iter()
            .filter(|(fd, o, _)| *fd <= 2 && o.pid == 0)
            .count();
        let mut out = format!(
            "=={pid}== FILE DESCRIPTORS: {} open ({std} std) at exit.\n",
            open.len()
        );
        for (fd, origin, real) in &open {
            if *fd <= 2 && origin.pid == 0 {
                continue;
            }
            let target = match real {
                Some(r) if alive => {
                    crate::procfs::fd_target(tid, *r).unwrap_or_else(|| "(unknown)".to_string())
                }
                _ => "(the process is gone)".to_string(),
            };
            out.push_str(&format!("=={pid}== Open file descriptor {fd}: {target}\n"));
            if origin.pid == 0 {
                out.push_str(&format!("=={pid}==    {}\n", origin.call));
            } else {
                out.push_str(&format!(
                    "=={pid}==    created by {} in process {}\n",
                    origin.call, origin.pid
                ));
            }
            if let Some(from) = &origin.from {
                if from.pid == 0 {
                    out.push_str(&format!(
                        "=={pid}==    duplicating a descriptor {}\n",
                        from.call
                    ));
                } else {
                    out.push_str(&format!(
                        "=={pid}==    duplicating a descriptor created by {} in process {}\n",
                        from.call, from.pid
                    ));
                }
            }
            out.push_str(&format!("=={pid}== \n"));
        }
        let _ = std::io::stderr().write_all(out.as_bytes());
    }
}

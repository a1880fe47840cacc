//! Everything `unsafe` in the supervisor, in one place: the first process between `fork` and
//! `execve` (async-signal-safe raw calls only), installing the seccomp filter, the signal
//! handler that forwards signals to the program, re-raising the program's fatal signal, and
//! resuming and waiting with realtime signals (which nix's `Signal` cannot hold).
//!
//! The rest of the crate is safe code over `nix`.

use nix::unistd::Pid;
use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

/// Which of descriptors 0, 1 and 2 were closed when the process started (bit `fd`), with
/// [`STD_RECORDED`] set once recorded.
///
/// Rust's runtime opens `/dev/null` on a closed 0, 1 or 2 before `main` (`std::rt::init`,
/// called from `main` through `lang_start`), so by the time `fdtable run` looks at its
/// descriptors a closed standard stream looks open. The ELF constructors in `.init_array`
/// run earlier: glibc's `__libc_start_main` calls them (`call_init`) before `main`, so
/// [`record_std_fds`] sees the descriptors as the caller left them.
static STD_CLOSED: AtomicU8 = AtomicU8::new(0);
const STD_RECORDED: u8 = 0x80;

extern "C" fn record_std_fds() {
    let mut bits = STD_RECORDED;
    for fd in 0..3 {
        // SAFETY: F_GETFD takes no pointer; a closed number gives EBADF.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            bits |= 1 << fd;
        }
    }
    // ORDERING: Relaxed; written once by the constructor on the only thread there is before
    // `main`, read later on the same thread (program order); there is no pair.
    STD_CLOSED.store(bits, Ordering::Relaxed);
}

/// The constructor entry: a pointer in `.init_array`, which the dynamic loader (or the
/// static start-up code) calls before `main` and so before Rust's runtime fills closed
/// standard descriptors with `/dev/null`.
#[used]
// SAFETY: `.init_array` holds pointers to functions taking (argc, argv, envp) per the SysV
// ABI; a function ignoring its arguments is called correctly, and `record_std_fds` only makes
// raw fcntl calls and an atomic store (no allocation, no std runtime needed).
#[unsafe(link_section = ".init_array")]
static RECORD_STD_FDS: extern "C" fn() = record_std_fds;

/// The standard descriptors (of 0, 1, 2) that were closed when this process started, before
/// Rust's runtime put `/dev/null` there; `None` if the constructor did not run (a binary
/// linked in a way that drops `.init_array` entries).
pub fn std_fds_closed_at_start() -> Option<[bool; 3]> {
    // The reference keeps the constructor's object file, and its `.init_array` entry, in
    // every binary that asks.
    std::hint::black_box(&RECORD_STD_FDS);
    // ORDERING: Relaxed; see `record_std_fds`.
    let bits = STD_CLOSED.load(Ordering::Relaxed);
    (bits & STD_RECORDED != 0).then_some([bits & 1 != 0, bits & 2 != 0, bits & 4 != 0])
}

/// What the first process does between `fork` and `execve`; everything is prepared by the
/// parent so the child allocates nothing.
pub struct ChildPlan {
    /// The program, resolved against `PATH` by the parent.
    pub path: CString,
    /// `argv`, NULL-terminated pointers into `argv_store`.
    pub argv: Vec<*const libc::c_char>,
    /// `envp`, NULL-terminated.
    pub envp: Vec<*const libc::c_char>,
    /// Owners of the strings above.
    pub strings: Vec<CString>,
    /// The descriptors the program inherits, ascending; with placeholders the i-th moves to
    /// `placeholders + i`, without them each keeps its number.
    pub inherited: Vec<i32>,
    /// How many placeholders fill the bottom of the real table (0: none).
    pub placeholders: i32,
    /// Without placeholders: the descriptors the child keeps (the inherited ones and the two
    /// pipes), ascending.
    pub keep: Vec<i32>,
    /// The real RLIMIT_NOFILE (soft = hard) the program's processes run with.
    pub real_limit: u64,
    /// An `O_PATH` descriptor of /dev/null: the placeholder that fills
    /// `0..placeholders` (-1 without placeholders).
    pub placeholder: i32,
    /// Read end of the pipe the parent writes to once it has attached.
    pub go: i32,
    /// Write end (close-on-exec) of the pipe that reports a failed setup or exec.
    pub err: i32,
    /// The seccomp filter.
    pub filter: Vec<libc::sock_filter>,
}

/// Steps of the child's setup, reported through the error pipe with the errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Step {
    /// Raising RLIMIT_NOFILE to the real limit.
    Rlimit = 1,
    /// Moving descriptors into place.
    Descriptors = 2,
    /// Waiting for the supervisor to attach.
    Attach = 3,
    /// Installing the seccomp filter.
    Seccomp = 4,
    /// `execve` of the program.
    Exec = 5,
}

impl Step {
    /// The step a number names.
    pub fn from_u32(v: u32) -> Option<Step> {
        Some(match v {
            1 => Step::Rlimit,
            2 => Step::Descriptors,
            3 => Step::Attach,
            4 => Step::Seccomp,
            5 => Step::Exec,
            _ => return None,
        })
    }
}

/// Forks the first process. In the child this never returns: it runs the plan's setup and
/// executes the program (or reports the failed step through `plan.err` and exits with 127).
pub fn spawn(plan: &ChildPlan) -> io::Result<Pid> {
    // SAFETY: the supervisor is single-threaded when it forks (checked by the caller), and the
    // child only runs `child_main`, which makes async-signal-safe raw calls on memory prepared
    // before the fork.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            // SAFETY: in the freshly forked child, see above.
            unsafe { child_main(plan) }
        }
        p => Ok(Pid::from_raw(p)),
    }
}

/// Reports `step` and `errno` through the error pipe and exits with 127.
///
/// # Safety
///
/// Only in the forked child.
unsafe fn fail(err: i32, step: Step, errno: i32) -> ! {
    let mut msg = [0u8; 8];
    msg[..4].copy_from_slice(&(step as u32).to_ne_bytes());
    msg[4..].copy_from_slice(&errno.to_ne_bytes());
    // SAFETY: raw write and _exit; `msg` outlives the call.
    unsafe {
        libc::write(err, msg.as_ptr().cast(), msg.len());
        libc::_exit(127)
    }
}

/// The child's side of [`spawn`].
///
/// # Safety
///
/// Only in the forked child of a single-threaded parent.
unsafe fn child_main(plan: &ChildPlan) -> ! {
    let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
    let rl = plan.real_limit as i32;
    let n = plan.inherited.len() as i32;
    // Fixed places at the top of the real table: the go pipe, the placeholder, the error
    // pipe, then one temporary copy of each inherited descriptor.
    let go = rl - 1;
    let ph = rl - 2;
    let err = rl - 3;
    let temp = |i: i32| rl - 4 - i;
    // SAFETY: raw calls on integers and on memory owned by `plan`, which the parent keeps
    // alive and unchanged (the child has its own copy of the address space).
    unsafe {
        // The program gets default dispositions for what the supervisor changed (Rust
        // ignores SIGPIPE), and an empty signal mask.
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        for &s in FORWARDED {
            libc::signal(s, libc::SIG_DFL);
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());

        let lim = libc::rlimit {
            rlim_cur: plan.real_limit,
            rlim_max: plan.real_limit,
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
            fail(plan.err, Step::Rlimit, errno());
        }
        let move_to = |from: i32, to: i32, flags: i32| -> bool {
            from == to || libc::dup3(from, to, flags) == to
        };
        if plan.placeholders == 0 {
            // No placeholders: the inherited descriptors stay where they are, and everything
            // else goes (the supervisor's own descriptors) but the two pipes.
            let mut lo: u32 = 0;
            for &k in &plan.keep {
                let k = k as u32;
                if k > lo && libc::syscall(libc::SYS_close_range, lo, k - 1, 0u32) != 0 {
                    fail(plan.err, Step::Descriptors, errno());
                }
                lo = lo.max(k + 1);
            }
            if libc::syscall(libc::SYS_close_range, lo, u32::MAX, 0u32) != 0 {
                fail(plan.err, Step::Descriptors, errno());
            }
            let mut b = 0u8;
            if libc::read(plan.go, (&mut b as *mut u8).cast(), 1) != 1 {
                fail(plan.err, Step::Attach, errno());
            }
            libc::close(plan.go);
            exec_filtered(plan, plan.err)
        }
        if !move_to(plan.err, err, libc::O_CLOEXEC) {
            fail(plan.err, Step::Descriptors, errno());
        }
        if !move_to(plan.go, go, libc::O_CLOEXEC) || !move_to(plan.placeholder, ph, libc::O_CLOEXEC)
        {
            fail(err, Step::Descriptors, errno());
        }
        for (i, &f) in plan.inherited.iter().enumerate() {
            if !move_to(f, temp(i as i32), libc::O_CLOEXEC) {
                fail(err, Step::Descriptors, errno());
            }
        }
        // Everything below the temporaries goes: the supervisor's own descriptors and the
        // originals of the inherited ones.
        let lowest = if n > 0 { temp(n - 1) } else { err };
        if libc::syscall(libc::SYS_close_range, 0u32, (lowest - 1) as u32, 0u32) != 0 {
            fail(err, Step::Descriptors, errno());
        }
        for i in 0..n {
            if !move_to(temp(i), plan.placeholders + i, 0) {
                fail(err, Step::Descriptors, errno());
            }
        }
        // The placeholder fills every number below the private range, so the kernel's
        // lowest-free allocation lands in the private range and an untranslated number never
        // reaches a descriptor of the program.
        for fd in 0..plan.placeholders {
            if libc::dup2(ph, fd) != fd {
                fail(err, Step::Descriptors, errno());
            }
        }
        let mut b = 0u8;
        if libc::read(go, (&mut b as *mut u8).cast(), 1) != 1 {
            fail(err, Step::Attach, errno());
        }
        libc::close(go);
        libc::close(ph);
        for i in 0..n {
            libc::close(temp(i));
        }
        exec_filtered(plan, err)
    }
}

/// Installs the seccomp filter and executes the program (the last step of [`child_main`]);
/// `err` is the error pipe.
///
/// # Safety
///
/// Only in the forked child, after its descriptors are in place.
unsafe fn exec_filtered(plan: &ChildPlan, err: i32) -> ! {
    let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
    // SAFETY: raw calls on memory owned by `plan` (see `child_main`).
    unsafe {
        let prog = libc::sock_fprog {
            len: plan.filter.len() as u16,
            filter: plan.filter.as_ptr() as *mut libc::sock_filter,
        };
        let install = || {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0u32,
                &prog as *const libc::sock_fprog,
            )
        };
        if install() != 0 {
            // Without CAP_SYS_ADMIN a filter needs no_new_privs.
            if errno() != libc::EACCES
                || libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || install() != 0
            {
                fail(err, Step::Seccomp, errno());
            }
        }
        libc::execve(plan.path.as_ptr(), plan.argv.as_ptr(), plan.envp.as_ptr());
        fail(err, Step::Exec, errno())
    }
}

/// Signals the supervisor forwards to the program's first process when another process sent
/// them to the supervisor (a terminal's signals reach the whole process group already).
pub const FORWARDED: &[i32] = &[
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGWINCH,
    libc::SIGCONT,
    libc::SIGTSTP,
];

/// The first process, for the forwarding handler (0: none yet).
static FORWARD_TO: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    // Only what a process sent (SI_USER, SI_QUEUE, SI_TKILL: codes <= 0); a terminal's
    // SIGINT (SI_KERNEL) reached the program's process group already.
    if code > 0 {
        return;
    }
    // ORDERING: Relaxed; the store in `forward_signals_to` happens on this same thread
    // before any signal can be forwarded (the handler runs on the supervisor's only thread),
    // so program order suffices; there is no pair.
    let pid = FORWARD_TO.load(Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// Installs the forwarding handler for [`FORWARDED`], sending to `pid`.
pub fn forward_signals_to(pid: Pid) {
    // ORDERING: Relaxed; read by the handler on this same thread (see `forward`).
    FORWARD_TO.store(pid.as_raw(), Ordering::Relaxed);
    for &s in FORWARDED {
        // SAFETY: a zeroed sigaction with an SA_SIGINFO handler of the right signature;
        // SA_RESTART keeps waitpid going.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(s, &sa, std::ptr::null_mut());
        }
    }
}

/// Dies of `sig` the way the program did (without a core file of the supervisor).
pub fn reraise(sig: i32) -> ! {
    // SAFETY: plain calls on integers and zeroed structures.
    unsafe {
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        // A signal whose default action is not to terminate (the program died of it only
        // because of its own handler's doing) cannot be reproduced: exit as a shell reports.
        libc::_exit(128 + sig)
    }
}

/// `PTRACE_LISTEN`: leaves a tracee in group-stop but reports when it is continued.
pub fn ptrace_listen(pid: Pid) -> io::Result<()> {
    // SAFETY: PTRACE_LISTEN takes no pointers.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_LISTEN,
            pid.as_raw(),
            std::ptr::null_mut::<libc::c_void>(),
            std::ptr::null_mut::<libc::c_void>(),
        )
    };
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Whether the calling process has more than one thread (fork would be unsafe).
pub fn is_single_threaded() -> bool {
    std::fs::read_dir("/proc/self/task").map_or(true, |d| d.count() <= 1)
}

/// What `waitpid` reported for one tracee.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Exited with a code.
    Exited(i32, i32),
    /// Killed by a signal.
    Signaled(i32, i32),
    /// A syscall stop (entry or exit; `PTRACE_O_TRACESYSGOOD`).
    Syscall(i32),
    /// A `PTRACE_EVENT_*` stop: (tid, signal, event).
    Event(i32, i32, i32),
    /// A signal-delivery stop.
    Signal(i32, i32),
}

/// `waitpid(pid, __WALL)` (`pid` -1: any), decoded; realtime signals included (nix's
/// `Signal` cannot hold them). Retries EINTR.
pub fn wait(pid: i32) -> io::Result<Status> {
    loop {
        let mut st = 0;
        // SAFETY: `st` is a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut st, libc::__WALL) };
        if r == -1 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        let s = if libc::WIFEXITED(st) {
            Status::Exited(r, libc::WEXITSTATUS(st))
        } else if libc::WIFSIGNALED(st) {
            Status::Signaled(r, libc::WTERMSIG(st))
        } else if libc::WIFSTOPPED(st) {
            let sig = libc::WSTOPSIG(st);
            let event = st >> 16;
            if sig == libc::SIGTRAP | 0x80 {
                Status::Syscall(r)
            } else if event != 0 {
                Status::Event(r, sig, event)
            } else {
                Status::Signal(r, sig)
            }
        } else {
            // WIFCONTINUED is not asked for.
            continue;
        };
        return Ok(s);
    }
}

/// Resumes a stopped tracee: `PTRACE_SYSCALL` (stop at the call's exit) or `PTRACE_CONT`,
/// delivering `sig` (0: none; realtime signals included).
pub fn resume(tid: i32, syscall: bool, sig: i32) -> io::Result<()> {
    let req = if syscall {
        libc::PTRACE_SYSCALL
    } else {
        libc::PTRACE_CONT
    };
    // SAFETY: PTRACE_SYSCALL/PTRACE_CONT take the signal number as data, no pointer.
    let r = unsafe {
        libc::ptrace(
            req,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            sig as usize as *mut libc::c_void,
        )
    };
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `tgkill(tgid, tid, sig)`.
pub fn tgkill(tgid: i32, tid: i32, sig: i32) -> io::Result<()> {
    // SAFETY: integers only.
    let r = unsafe { libc::syscall(libc::SYS_tgkill, tgid, tid, sig) };
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `fcntl(fd, F_GETFD)` on a descriptor of the calling process; `None` if it is not open.
pub fn getfd(fd: i32) -> Option<i32> {
    // SAFETY: F_GETFD takes no pointer; an unopened number gives EBADF.
    let r = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    (r >= 0).then_some(r)
}

//! Everything `unsafe` in `fdtable run`, in one place: the program's process between `fork`
//! and `execve` (async-signal-safe raw calls only), the seccomp listener's ioctls, `kcmp`,
//! pidfds, rlimits of other processes, capabilities, and signal dispositions.
//!
//! The rest of the crate is safe code over these functions and `nix`.

use nix::unistd::Pid;
use std::ffi::CString;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

fn check(r: libc::c_long) -> io::Result<libc::c_long> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

// === the standard streams the caller closed ===

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

// === processes ===

/// Forks. `Ok(None)` in the child.
///
/// The caller must be single-threaded (checked with [`is_single_threaded`]): the child is
/// then a full copy that may run any code.
pub fn fork() -> io::Result<Option<Pid>> {
    // SAFETY: the caller is single-threaded, so no lock (the allocator's included) is held by
    // a thread that does not exist in the child.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(None),
        p => Ok(Some(Pid::from_raw(p))),
    }
}

/// `_exit(code)`: ends the calling process at once (a forked child that must not run the
/// parent's exit handlers or flush its buffers).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` takes an integer and does not return.
    unsafe { libc::_exit(code) }
}

/// Whether the calling process has more than one thread (fork would be unsafe).
pub fn is_single_threaded() -> bool {
    std::fs::read_dir("/proc/self/task").map_or(true, |d| d.count() <= 1)
}

/// `gettid()`.
pub fn gettid() -> i32 {
    // SAFETY: no arguments.
    unsafe { libc::gettid() }
}

/// `setsid()`.
pub fn setsid() -> io::Result<()> {
    // SAFETY: no arguments.
    check(unsafe { libc::setsid() } as libc::c_long).map(drop)
}

/// `prctl(PR_SET_DUMPABLE, on)`.
pub fn set_dumpable(on: bool) -> io::Result<()> {
    // SAFETY: integer arguments only.
    check(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, on as libc::c_ulong, 0, 0, 0) } as _)
        .map(drop)
}

/// Whether the calling process has `cap` in its effective set.
pub fn has_capability(cap: u32) -> bool {
    let mut hdr = libc_cap_header(0);
    let mut data = [CapData::default(); 2];
    // SAFETY: capget writes two `__user_cap_data_struct`s for version 3.
    let r = unsafe { libc::syscall(libc::SYS_capget, &mut hdr, data.as_mut_ptr()) };
    r == 0 && data[(cap / 32) as usize].effective & (1 << (cap % 32)) != 0
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

fn libc_cap_header(pid: i32) -> CapHeader {
    CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid,
    }
}

/// `CAP_SYS_PTRACE`.
pub const CAP_SYS_PTRACE: u32 = 19;

/// What `fdtable run`'s process does to become the program; everything is prepared before
/// the setup starts, so that the setup allocates nothing.
pub struct ProgramPlan {
    /// The program, resolved against `PATH`.
    pub path: CString,
    /// `argv`, NULL-terminated pointers into `strings`.
    pub argv: Vec<*const libc::c_char>,
    /// `envp`, NULL-terminated.
    pub envp: Vec<*const libc::c_char>,
    /// Owners of the strings above.
    pub strings: Vec<CString>,
    /// The descriptors the child keeps (the inherited ones and its channel, which is
    /// close-on-exec), ascending.
    pub keep: Vec<i32>,
    /// `RLIMIT_NOFILE` to set (soft and hard), if asked.
    pub nofile: Option<u64>,
    /// The caller's `RLIMIT_NOFILE` (soft, hard), given back to the program first, if this
    /// process raised its soft limit (to fit the supervisor's channels).
    pub caller_nofile: Option<(u64, u64)>,
    /// The seccomp filter.
    pub filter: Vec<libc::sock_filter>,
    /// The program's end of its channel with the supervisor (close-on-exec): the listener's
    /// number or a failed step go there, "go" comes back.
    pub channel: i32,
    /// The supervisor (its `PR_SET_PTRACER`).
    pub supervisor: i32,
    /// The caller's ignored signals and signal mask, which the program inherits.
    pub signals: CallerSignals,
}

/// What a program inherits of its caller's signal state across `fork` and `execve`: the
/// signals it ignores (`nohup`'s `SIGHUP`, a background job's `SIGINT` and `SIGQUIT`) and
/// its signal mask. Handled signals reset to their default at `execve` anyway.
#[derive(Clone, Copy)]
pub struct CallerSignals {
    /// Bit `s` set: signal `s` is ignored.
    ignored: u64,
    mask: libc::sigset_t,
}

/// Whether `SIGPIPE` was ignored when this process started (the caller's disposition, which
/// `execve` kept): 0 not known, 1 ignored, 2 not. Rust's runtime ignores `SIGPIPE` before
/// `main`, so it is read earlier, by [`record_sigpipe`] from `.init_array`.
static SIGPIPE_AT_START: AtomicU8 = AtomicU8::new(0);

/// Reads `SIGPIPE`'s disposition before Rust's runtime changes it: the C library runs
/// `.init_array` before `main`, where that runtime starts.
extern "C" fn record_sigpipe() {
    // SAFETY: reading a disposition into a zeroed sigaction; nothing else runs yet.
    let ignored = unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    };
    // ORDERING: Relaxed; read by `CallerSignals::capture` on the same thread, later.
    SIGPIPE_AT_START.store(if ignored { 1 } else { 2 }, Ordering::Relaxed);
}

/// [`record_sigpipe`]'s entry in `.init_array` (referenced by
/// [`CallerSignals::capture`], so that the linker keeps it).
#[used]
// SAFETY: `.init_array` holds pointers to functions the C library calls once before `main`;
// `record_sigpipe` ignores the arguments it is passed (`argc`, `argv`, `envp`).
#[unsafe(link_section = ".init_array")]
static RECORD_SIGPIPE: extern "C" fn() = record_sigpipe;

impl CallerSignals {
    /// The calling process's, read first. `SIGPIPE`'s is the one it had when it started
    /// (`record_sigpipe`): Rust's runtime ignores it before `main`; if that was not read,
    /// the program gets the default.
    pub fn capture() -> CallerSignals {
        std::hint::black_box(&RECORD_SIGPIPE);
        let mut ignored = 0u64;
        // ORDERING: Relaxed; written by `record_sigpipe` on this thread, before `main`.
        if SIGPIPE_AT_START.load(Ordering::Relaxed) == 1 {
            ignored |= 1 << libc::SIGPIPE;
        }
        for s in 1..32 {
            if s == libc::SIGPIPE || s == libc::SIGKILL || s == libc::SIGSTOP {
                continue;
            }
            // SAFETY: reading a disposition into a zeroed sigaction.
            let ign = unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(s, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN
            };
            if ign {
                ignored |= 1 << s;
            }
        }
        // SAFETY: reading the mask into a zeroed sigset.
        let mask = unsafe {
            let mut m: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut m);
            libc::sigprocmask(libc::SIG_BLOCK, std::ptr::null(), &mut m);
            m
        };
        CallerSignals { ignored, mask }
    }
}

/// Steps of the program's setup; the one that failed is reported with its errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Step {
    /// Setting RLIMIT_NOFILE (`--nofile`).
    Rlimit = 1,
    /// Closing what the program must not inherit.
    Descriptors = 2,
    /// Dropping `CAP_SYS_PTRACE`.
    Capabilities = 3,
    /// Installing the seccomp filter.
    Seccomp = 4,
    /// Waiting for the supervisor.
    Attach = 5,
    /// `execve` of the program.
    Exec = 6,
}

impl Step {
    /// What the step does, for a message.
    pub fn what(self) -> &'static str {
        match self {
            Step::Rlimit => "setting RLIMIT_NOFILE",
            Step::Descriptors => "closing what the program must not inherit",
            Step::Capabilities => "dropping CAP_SYS_PTRACE",
            Step::Seccomp => "installing the seccomp filter (its listener needs a descriptor)",
            Step::Attach => "waiting for the supervisor",
            Step::Exec => "executing the program",
        }
    }
}

/// Makes this process the program: runs the plan's setup, waits for the supervisor, and
/// executes the program. On failure `report` gets the step that failed and its errno, and
/// the process exits at once with the code it returns (nothing else runs after the setup
/// closed the descriptors the program must not inherit).
pub fn become_program(plan: &ProgramPlan, report: impl FnOnce(Step, i32) -> i32) -> ! {
    if !is_single_threaded() {
        // Another thread could hold a descriptor the setup closes.
        exit_now(report(Step::Descriptors, libc::EBUSY));
    }
    // SAFETY: single-threaded (checked), and the process exits without returning to code
    // that could use a closed descriptor.
    let (step, errno) = unsafe { program_main(plan) };
    exit_now(report(step, errno))
}

/// A message from the program's process to the supervisor: 12 bytes, a kind and two
/// integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    /// The seccomp listener's number.
    Listener(i32),
}

fn encode(kind: u32, a: i32, b: i32) -> [u8; 12] {
    let mut m = [0u8; 12];
    m[..4].copy_from_slice(&kind.to_ne_bytes());
    m[4..8].copy_from_slice(&a.to_ne_bytes());
    m[8..].copy_from_slice(&b.to_ne_bytes());
    m
}

/// Reads one [`Message`]; `None` at the end of the channel.
pub fn read_message(r: &mut impl std::io::Read) -> Option<Message> {
    let mut m = [0u8; 12];
    r.read_exact(&mut m).ok()?;
    let int = |i: usize| i32::from_ne_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
    match int(0) {
        1 => Some(Message::Listener(int(4))),
        _ => None,
    }
}

/// The filter does not turn on the speculative store bypass mitigation (nor, before 5.16,
/// `spectre_v2_user=seccomp`'s): on a kernel booted with `spec_store_bypass_disable=seccomp`
/// (the default until 5.16) a filter without it makes every task that carries it run with
/// SSBD, slower than natively in all its work. A program that wants the mitigation asks with
/// `prctl(PR_SET_SPECULATION_CTRL)`, or gets it from a filter of its own, as natively.
const SECCOMP_FILTER_FLAG_SPEC_ALLOW: libc::c_ulong = 1 << 2;
const SECCOMP_FILTER_FLAG_NEW_LISTENER: libc::c_ulong = 1 << 3;
const SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: libc::c_ulong = 1 << 5;
const PR_SET_PTRACER: libc::c_int = 0x5961_6d61;
const PR_CAP_AMBIENT: libc::c_int = 47;
const PR_CAP_AMBIENT_LOWER: libc::c_ulong = 3;
const PR_CAPBSET_DROP: libc::c_int = 24;

/// [`become_program`]'s setup and `execve`; returns the step that failed.
///
/// # Safety
///
/// The process is single-threaded, and exits after this returns.
unsafe fn program_main(plan: &ProgramPlan) -> (Step, i32) {
    let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
    let err = plan.channel;
    // SAFETY: raw calls on integers and on memory owned by `plan`, which the caller keeps
    // alive and unchanged.
    unsafe {
        // The caller's dispositions for what this process changed (Rust's ignored SIGPIPE):
        // ignored where the caller ignored them, else the default;
        // and the caller's signal mask.
        for s in 1..32 {
            if s != libc::SIGKILL && s != libc::SIGSTOP {
                let ign = plan.signals.ignored & (1 << s) != 0;
                libc::signal(s, if ign { libc::SIG_IGN } else { libc::SIG_DFL });
            }
        }
        libc::sigprocmask(libc::SIG_SETMASK, &plan.signals.mask, std::ptr::null_mut());

        // Everything but what the program inherits and the three pipes goes.
        let mut lo: u32 = 0;
        for &k in &plan.keep {
            let k = k as u32;
            if k > lo && libc::syscall(libc::SYS_close_range, lo, k - 1, 0u32) != 0 {
                return (Step::Descriptors, errno());
            }
            lo = lo.max(k + 1);
        }
        if libc::syscall(libc::SYS_close_range, lo, u32::MAX, 0u32) != 0 {
            return (Step::Descriptors, errno());
        }
        // Without CAP_SYS_PTRACE, even a root program cannot open the non-dumpable
        // supervisor's /proc entries, read its memory or borrow its descriptors.
        if libc::prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE as libc::c_ulong, 0, 0, 0) != 0
            && errno() != libc::EPERM
            && errno() != libc::EINVAL
        {
            return (Step::Capabilities, errno());
        }
        libc::prctl(
            PR_CAP_AMBIENT,
            PR_CAP_AMBIENT_LOWER,
            CAP_SYS_PTRACE as libc::c_ulong,
            0,
            0,
        );
        let mut hdr = libc_cap_header(0);
        let mut data = [CapData::default(); 2];
        if libc::syscall(libc::SYS_capget, &mut hdr, data.as_mut_ptr()) != 0 {
            return (Step::Capabilities, errno());
        }
        let bit = 1u32 << CAP_SYS_PTRACE;
        if (data[0].effective | data[0].permitted | data[0].inheritable) & bit != 0 {
            data[0].effective &= !bit;
            data[0].permitted &= !bit;
            data[0].inheritable &= !bit;
            let mut hdr = libc_cap_header(0);
            if libc::syscall(libc::SYS_capset, &mut hdr, data.as_ptr()) != 0 {
                return (Step::Capabilities, errno());
            }
        }
        // Under Yama's restricted ptrace the supervisor, not an ancestor, needs the exception.
        libc::prctl(PR_SET_PTRACER, plan.supervisor as libc::c_ulong, 0, 0, 0);

        let prog = libc::sock_fprog {
            len: plan.filter.len() as u16,
            filter: plan.filter.as_ptr() as *mut libc::sock_filter,
        };
        let install = || {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                SECCOMP_FILTER_FLAG_NEW_LISTENER
                    | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
                    | SECCOMP_FILTER_FLAG_SPEC_ALLOW,
                &prog as *const libc::sock_fprog,
            )
        };
        let mut listener = install();
        if listener < 0 {
            // Without CAP_SYS_ADMIN a filter needs no_new_privs.
            if errno() != libc::EACCES || libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return (Step::Seccomp, errno());
            }
            listener = install();
            if listener < 0 {
                return (Step::Seccomp, errno());
            }
        }
        // From here on every call goes through the filter: write and read are allowed.
        let msg = encode(1, listener as i32, 0);
        if libc::write(err, msg.as_ptr().cast(), msg.len()) != msg.len() as isize {
            return (Step::Attach, errno());
        }
        let mut b = 0u8;
        if libc::read(err, (&mut b as *mut u8).cast(), 1) != 1 {
            return (Step::Attach, errno());
        }
        // The program's RLIMIT_NOFILE (the caller's, or `--nofile`'s) only now: the listener
        // needed a descriptor, and a limit at or below the descriptors the program inherits
        // leaves none (natively such a limit still lets a static program run). The filter
        // notifies these calls; the supervisor lets this process's calls run until it
        // executes the program.
        if let Some((soft, hard)) = plan.caller_nofile {
            let lim = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return (Step::Rlimit, errno());
            }
        }
        if let Some(n) = plan.nofile {
            let lim = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return (Step::Rlimit, errno());
            }
        }
        // The listener and the channel are close-on-exec.
        libc::execve(plan.path.as_ptr(), plan.argv.as_ptr(), plan.envp.as_ptr());
        (Step::Exec, errno())
    }
}

// === seccomp user notification ===

/// `struct seccomp_data`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SeccompData {
    /// The call number.
    pub nr: i32,
    /// `AUDIT_ARCH_*`.
    pub arch: u32,
    /// The instruction pointer.
    pub ip: u64,
    /// The arguments.
    pub args: [u64; 6],
}

/// `struct seccomp_notif`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Notif {
    /// The notification's cookie.
    pub id: u64,
    /// The task that made the call (in the supervisor's pid namespace).
    pub pid: u32,
    /// Unused.
    pub flags: u32,
    /// The call.
    pub data: SeccompData,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct NotifResp {
    id: u64,
    val: i64,
    error: i32,
    flags: u32,
}

const SECCOMP_IOCTL_NOTIF_RECV: libc::c_ulong = 0xc050_2100;
const SECCOMP_IOCTL_NOTIF_SEND: libc::c_ulong = 0xc018_2101;
const SECCOMP_IOCTL_NOTIF_SET_FLAGS: libc::c_ulong = 0x4008_2104;
/// `SECCOMP_USER_NOTIF_FLAG_CONTINUE`.
pub const SECCOMP_USER_NOTIF_FLAG_CONTINUE: u32 = 1;
/// `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`.
pub const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;

/// `SECCOMP_IOCTL_NOTIF_RECV`: waits for the next notification.
pub fn notif_recv(listener: RawFd) -> io::Result<Notif> {
    let mut n = Notif::default();
    // SAFETY: the kernel writes one `struct seccomp_notif`, which `n` is (zeroed, as the
    // kernel requires).
    check(unsafe { libc::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &mut n) } as _)?;
    Ok(n)
}

/// Whether the listener's filter has no user any more (`poll` reports `POLLHUP` once every
/// task that carried the filter is gone): `SECCOMP_IOCTL_NOTIF_RECV` then fails with `ENOENT`
/// at once, every time.
pub fn orphaned(listener: RawFd) -> bool {
    let mut p = libc::pollfd {
        fd: listener,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    r == 1 && p.revents & libc::POLLHUP != 0
}

/// Whether another notification is waiting (`poll` with no timeout).
pub fn readable(listener: RawFd) -> bool {
    let mut p = libc::pollfd {
        fd: listener,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    r == 1 && p.revents & libc::POLLIN != 0
}

/// `SECCOMP_IOCTL_NOTIF_SEND`: answers notification `id` with `val` (error 0), `-error`, or
/// lets it run (`flags` = [`SECCOMP_USER_NOTIF_FLAG_CONTINUE`]).
pub fn notif_send(listener: RawFd, id: u64, val: i64, error: i32, flags: u32) -> io::Result<()> {
    let r = NotifResp {
        id,
        val,
        error,
        flags,
    };
    // SAFETY: the kernel reads one `struct seccomp_notif_resp`.
    check(unsafe { libc::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r) } as _).map(drop)
}

/// `SECCOMP_IOCTL_NOTIF_SET_FLAGS`.
pub fn notif_set_flags(listener: RawFd, flags: u64) -> io::Result<()> {
    // SAFETY: the flags are passed by value.
    check(unsafe { libc::ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags) } as _).map(drop)
}

// === other processes' tables ===

const KCMP_FILE: libc::c_int = 0;

/// Whether descriptor `fd` is installed in task `tid`'s table (`kcmp(tid, tid, KCMP_FILE,
/// fd, fd)` is 0 for an installed descriptor, EBADF for a free or reserved one). `None` if
/// the task cannot be asked (gone, or not ours to inspect).
pub fn installed(tid: i32, fd: u32) -> Option<bool> {
    // SAFETY: integer arguments only.
    let r = unsafe { libc::syscall(libc::SYS_kcmp, tid, tid, KCMP_FILE, fd, fd) };
    match r {
        0 => Some(true),
        -1 if io::Error::last_os_error().raw_os_error() == Some(libc::EBADF) => Some(false),
        _ => None,
    }
}

/// Whether descriptor `fd` of task `a` and the same number of task `b` are one open file
/// description (`kcmp(a, b, KCMP_FILE, fd, fd)`); `None` if either cannot be asked or has
/// nothing there.
pub fn same_file_at(a: i32, b: i32, fd: u32) -> Option<bool> {
    // SAFETY: integer arguments only.
    let r = unsafe { libc::syscall(libc::SYS_kcmp, a, b, KCMP_FILE, fd, fd) };
    (r >= 0).then_some(r == 0)
}

const KCMP_FILES: libc::c_int = 2;

/// Whether tasks `a` and `b` use the same descriptor table (`kcmp(a, b, KCMP_FILES)`).
pub fn same_files(a: i32, b: i32) -> Option<bool> {
    // SAFETY: integer arguments only.
    let r = unsafe { libc::syscall(libc::SYS_kcmp, a, b, KCMP_FILES, 0, 0) };
    (r >= 0).then_some(r == 0)
}

/// Whether task `tid` belongs to thread group `tgid`: `tgkill(tgid, tid, 0)` checks exactly
/// that (ESRCH otherwise) and sends nothing. `None` when the kernel refuses the check
/// (EPERM: the task's credentials changed).
pub fn in_thread_group(tgid: i32, tid: i32) -> Option<bool> {
    match tgkill(tgid, tid, 0) {
        Ok(()) => Some(true),
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Some(false),
        Err(_) => None,
    }
}

/// `pidfd_open(pid, 0)`.
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: integer arguments only.
    let fd = check(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) })?;
    // SAFETY: a new descriptor, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// `PIDFD_THREAD` (Linux 6.9): a pidfd naming one thread, not its thread group.
const PIDFD_THREAD: libc::c_int = libc::O_EXCL;

/// A copy of descriptor `fd` of task `tid` (of thread group `tgid`), from **its** table: a
/// thread may have a table of its own (`unshare(CLONE_FILES)`, `clone` without
/// `CLONE_FILES`), and a leader that has exited has none. Through a pidfd naming the thread
/// (`PIDFD_THREAD`); on kernels without it, through the thread group's only if `tid` uses
/// the leader's table (EPERM otherwise).
pub fn task_getfd(tid: i32, tgid: i32, fd: u32) -> io::Result<OwnedFd> {
    // SAFETY: integer arguments only.
    let r = unsafe { libc::syscall(libc::SYS_pidfd_open, tid, PIDFD_THREAD) };
    if r >= 0 {
        // SAFETY: a new descriptor, ours alone.
        let pidfd = unsafe { OwnedFd::from_raw_fd(r as RawFd) };
        return pidfd_getfd(&pidfd, fd);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::EINVAL) {
        return Err(e);
    }
    if tid != tgid && same_files(tid, tgid) != Some(true) {
        return Err(io::Error::from_raw_os_error(libc::EPERM));
    }
    pidfd_getfd(&pidfd_open(tgid)?, fd)
}

/// Whether a blocking read of `f` (a receive, an `accept`) would wait now: the description
/// is not `O_NONBLOCK` and `poll` finds nothing to read.
pub fn read_would_block(f: &OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    if !is_blocking(f) {
        return false;
    }
    let mut p = libc::pollfd {
        fd: f.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, and no wait.
    unsafe { libc::poll(&mut p, 1, 0) == 0 }
}

/// Whether the description `f` refers to is not `O_NONBLOCK` (false if that cannot be read).
pub fn is_blocking(f: &OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: F_GETFL takes no pointer; `f` is open.
    let fl = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
    fl >= 0 && fl & libc::O_NONBLOCK == 0
}

/// For a stream socket `f`: its `SO_RCVLOWAT` and the bytes waiting to be read (`FIONREAD`);
/// `None` for any other file, or if either cannot be read.
pub fn stream_waiting(f: &OwnedFd) -> Option<(usize, usize)> {
    use std::os::fd::AsRawFd;
    let opt = |name| sockopt_int(f, name);
    if opt(libc::SO_TYPE)? != libc::SOCK_STREAM {
        return None;
    }
    let lowat = opt(libc::SO_RCVLOWAT)?;
    let mut waiting: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int, which `waiting` is.
    if unsafe { libc::ioctl(f.as_raw_fd(), libc::FIONREAD, &mut waiting) } != 0 {
        return None;
    }
    Some((lowat.max(1) as usize, waiting.max(0) as usize))
}

/// `pidfd_getfd(pidfd, fd, 0)`: a copy of another process's descriptor.
pub fn pidfd_getfd(pidfd: &OwnedFd, fd: u32) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    // SAFETY: integer arguments only.
    let r = check(unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) })?;
    // SAFETY: a new descriptor, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// The process a `/proc/<pid>` directory names, as `pidfd_send_signal` takes it: `None`
/// unless `dir` is a thread-group directory of a procfs (one with a `task` entry: the
/// kernel's `tgid_pidfd_to_pid` takes no other), else the first field of its `stat`. Both
/// entries are opened beneath `dir` without crossing a mount or following a link, and
/// `stat` without blocking: a directory the program made (a FIFO called `stat`, a link) is
/// never opened, and nothing it mounts over one is read.
pub fn proc_dir_pid(dir: &OwnedFd) -> Option<i32> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    // SAFETY: `fs` is a valid out-pointer of its type.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as said.
    if unsafe { libc::fstatfs(dir.as_raw_fd(), &mut fs) } != 0
        || fs.f_type != libc::PROC_SUPER_MAGIC
    {
        return None;
    }
    openat_beneath(dir, c"task", libc::O_PATH | libc::O_DIRECTORY)?;
    let stat = openat_beneath(dir, c"stat", libc::O_RDONLY | libc::O_NONBLOCK)?;
    let mut text = String::new();
    std::fs::File::from(stat)
        .take(512)
        .read_to_string(&mut text)
        .ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// `openat2`'s `resolve` flags.
pub const RESOLVE_NO_XDEV: u64 = 0x01;
/// `openat2`'s `resolve` flags.
pub const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
/// `openat2`'s `resolve` flags.
pub const RESOLVE_NO_SYMLINKS: u64 = 0x04;
/// `openat2`'s `resolve` flags.
pub const RESOLVE_BENEATH: u64 = 0x08;
/// `openat2`'s `resolve` flags.
pub const RESOLVE_IN_ROOT: u64 = 0x10;

/// `openat2(dir, name, flags | O_CLOEXEC)` beneath `dir`, crossing no mount and following no
/// link.
fn openat_beneath(dir: &OwnedFd, name: &std::ffi::CStr, flags: i32) -> Option<OwnedFd> {
    let resolve = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH;
    openat2(dir, name, flags, resolve).ok()
}

/// `openat2(dir, name, flags | O_CLOEXEC)` with `resolve`.
pub fn openat2(
    dir: &OwnedFd,
    name: &std::ffi::CStr,
    flags: i32,
    resolve: u64,
) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve,
    };
    // SAFETY: `name` is a C string and `how` a valid `open_how` of the size given.
    let r = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            name.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    let fd = check(r)?;
    // SAFETY: a new descriptor, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Whether the socket `f` is listening (`SO_ACCEPTCONN`): a receive on it fails at once.
pub fn is_listening(f: &OwnedFd) -> bool {
    sockopt_int(f, libc::SO_ACCEPTCONN).is_some_and(|v| v != 0)
}

/// `getsockopt(f, SOL_SOCKET, name)` of an `int` option; `None` if it fails.
fn sockopt_int(f: &OwnedFd, name: libc::c_int) -> Option<libc::c_int> {
    use std::os::fd::AsRawFd;
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` and `len` are valid for writes of an int and its size.
    let r = unsafe {
        libc::getsockopt(
            f.as_raw_fd(),
            libc::SOL_SOCKET,
            name,
            (&raw mut v).cast(),
            &mut len,
        )
    };
    (r == 0).then_some(v)
}

/// The real and effective user ids of this process.
pub fn uids() -> (u32, u32) {
    // SAFETY: no arguments; these calls cannot fail.
    unsafe { (libc::getuid(), libc::geteuid()) }
}

/// An owner-setting call on `fd` with its argument in memory: `fcntl(fd, F_SETOWN_EX,
/// &arg)` (`fcntl`) or `ioctl(fd, cmd, &arg)` (`FIOSETOWN`, `SIOCSPGRP`), with `arg`'s bytes
/// (8 for a `struct f_owner_ex`, 4 for a pid). The result, or the errno.
pub fn owner_call(fd: &OwnedFd, fcntl: bool, cmd: u32, arg: [u8; 8]) -> Result<i64, i32> {
    use std::os::fd::AsRawFd;
    let mut buf = arg;
    let p = buf.as_mut_ptr();
    // SAFETY: `buf` is 8 writable bytes, as large as either argument, and outlives the call.
    let r = unsafe {
        if fcntl {
            libc::fcntl(fd.as_raw_fd(), cmd as i32, p)
        } else {
            libc::ioctl(fd.as_raw_fd(), cmd as libc::Ioctl, p)
        }
    };
    check(r as libc::c_long).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
}

/// The socket family of `fd` (`SO_DOMAIN`), or `None` if it is no socket.
pub fn socket_domain(fd: &OwnedFd) -> Option<i32> {
    use std::os::fd::AsRawFd;
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` and `len` are valid out-pointers of the sizes given.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_DOMAIN,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (r == 0).then_some(v)
}

/// `RLIMIT_NOFILE` (soft, hard) of process `pid`.
pub fn nofile_of(pid: i32) -> Option<(u64, u64)> {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `old` is a valid out-pointer; no new limit is given.
    let r = unsafe { libc::prlimit(pid, libc::RLIMIT_NOFILE, std::ptr::null(), &mut old) };
    (r == 0).then_some((old.rlim_cur, old.rlim_max))
}

/// Raises the calling process's RLIMIT_NOFILE soft limit to its hard limit if it is below
/// `below`: returns the limits it had (soft, hard) if it did.
pub fn raise_soft_nofile(below: u64) -> Option<(u64, u64)> {
    let (soft, hard) = nofile_of(0)?;
    if soft >= below || soft >= hard {
        return None;
    }
    let lim = libc::rlimit {
        rlim_cur: hard,
        rlim_max: hard,
    };
    // SAFETY: `lim` is a valid pointer to a limit.
    (unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } == 0).then_some((soft, hard))
}

/// Raises the calling process's RLIMIT_NOFILE soft limit to its hard limit, and as far as
/// `fs.nr_open` when allowed: the supervisor may need more descriptors than a program run
/// under `ulimit -n 8`.
pub fn raise_nofile() {
    let nr_open: u64 = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1 << 20);
    for n in [nr_open, 0] {
        let mut l = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `l` is a valid in/out pointer.
        unsafe {
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut l);
            if n > 0 {
                l.rlim_cur = n;
                l.rlim_max = n;
            } else {
                l.rlim_cur = l.rlim_max;
            }
            if libc::setrlimit(libc::RLIMIT_NOFILE, &l) == 0 {
                return;
            }
        }
    }
}

/// `sched_yield()`.
pub fn yield_now() {
    // SAFETY: no arguments.
    unsafe {
        libc::sched_yield();
    }
}

// === signals ===

/// The signals of job control and of the terminal, which the supervisor ignores (its own
/// session: they reach it only when a process names it).
const JOB_SIGNALS: &[i32] = &[
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
    libc::SIGTTIN,
    libc::SIGTTOU,
];

/// Ignores the signals of job control and of the terminal (the supervisor takes none).
pub fn ignore_job_signals() {
    for &s in JOB_SIGNALS {
        // SAFETY: setting a disposition to SIG_IGN.
        unsafe {
            libc::signal(s, libc::SIG_IGN);
        }
    }
}

/// `kill(pid, sig)`.
pub fn kill(pid: i32, sig: i32) -> io::Result<()> {
    // SAFETY: integers only.
    check(unsafe { libc::kill(pid, sig) } as _).map(drop)
}

/// `pidfd_send_signal(pidfd, sig, NULL, 0)`: a signal to the process the pidfd names, which
/// a number reused after that process was reaped cannot redirect.
pub fn pidfd_kill(pidfd: &OwnedFd, sig: i32) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: integer arguments and a null siginfo.
    check(unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            sig,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        )
    })
    .map(drop)
}

/// Whether the process a pidfd names has exited (the pidfd polls readable): a check of
/// `/proc/<pid>` made before this answered false was of that process, not of one that took
/// its number after it was reaped.
pub fn pidfd_exited(pidfd: &OwnedFd) -> bool {
    use std::os::fd::AsRawFd;
    readable(pidfd.as_raw_fd())
}

/// `tgkill(tgid, tid, sig)`.
pub fn tgkill(tgid: i32, tid: i32, sig: i32) -> io::Result<()> {
    // SAFETY: integers only.
    check(unsafe { libc::syscall(libc::SYS_tgkill, tgid, tid, sig) }).map(drop)
}

// === ptrace ===

fn ptrace_raw(req: libc::c_uint, tid: i32, data: usize) -> io::Result<()> {
    // SAFETY: requests whose address argument is unused and whose data is an integer.
    let r = unsafe {
        libc::ptrace(
            req,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            data as *mut libc::c_void,
        )
    };
    check(r).map(drop)
}

/// `PTRACE_LISTEN`: leaves a tracee in group-stop but reports when it is continued.
pub fn ptrace_listen(tid: i32) -> io::Result<()> {
    ptrace_raw(libc::PTRACE_LISTEN, tid, 0)
}

/// `PTRACE_CONT`, delivering `sig` (0: none; realtime signals included).
pub fn resume(tid: i32, sig: i32) -> io::Result<()> {
    ptrace_raw(libc::PTRACE_CONT, tid, sig as usize)
}

/// What `waitpid` reported for one tracee.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Exited with a code.
    Exited(i32, i32),
    /// Killed by a signal.
    Signaled(i32, i32),
    /// A `PTRACE_EVENT_*` stop: (tid, signal, event).
    Event(i32, i32, i32),
    /// A signal-delivery stop.
    Signal(i32, i32),
}

/// `waitpid(pid, flags | __WALL)` (`pid` -1: any), decoded; realtime signals included
/// (nix's `Signal` cannot hold them). Retries EINTR.
pub fn wait(pid: i32, flags: i32) -> io::Result<Status> {
    wait_inner(pid, flags, true)
}

/// `waitpid(pid, WNOHANG | __WALL)`, decoded: `None` when `pid` has nothing to report
/// now (or only a continuation, which is not asked for).
pub fn try_wait(pid: i32) -> io::Result<Option<Status>> {
    let mut st = 0;
    // SAFETY: `st` is a valid out-pointer.
    let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG | libc::__WALL) };
    if r == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok((r > 0).then(|| decode(r, st)).flatten())
}

/// A status `waitpid` returned for task `r`; `None` for a continuation.
fn decode(r: i32, st: i32) -> Option<Status> {
    Some(if libc::WIFEXITED(st) {
        Status::Exited(r, libc::WEXITSTATUS(st))
    } else if libc::WIFSIGNALED(st) {
        Status::Signaled(r, libc::WTERMSIG(st))
    } else if libc::WIFSTOPPED(st) {
        let sig = libc::WSTOPSIG(st);
        let event = st >> 16;
        if event != 0 {
            Status::Event(r, sig, event)
        } else {
            Status::Signal(r, sig)
        }
    } else {
        // WIFCONTINUED is not asked for.
        return None;
    })
}

/// [`wait`], but a signal handled meanwhile (an [`Alarm`]) ends it with EINTR.
pub fn wait_interruptible(pid: i32, flags: i32) -> io::Result<Status> {
    wait_inner(pid, flags, false)
}

fn wait_inner(pid: i32, flags: i32, retry: bool) -> io::Result<Status> {
    loop {
        let mut st = 0;
        // SAFETY: `st` is a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut st, flags | libc::__WALL) };
        if r == -1 {
            let e = io::Error::last_os_error();
            if retry && e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if let Some(s) = decode(r, st) {
            return Ok(s);
        }
    }
}

/// `fcntl(fd, F_GETFD)` on a descriptor of the calling process; `None` if it is not open.
pub fn getfd(fd: i32) -> Option<i32> {
    // SAFETY: F_GETFD takes no pointer; an unopened number gives EBADF.
    let r = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    (r >= 0).then_some(r)
}

/// Closes every descriptor of the calling process except those in `keep` (ascending).
pub fn close_all_but(keep: &[i32]) {
    let mut lo: u32 = 0;
    for &k in keep {
        let k = k as u32;
        if k > lo {
            // SAFETY: integers only; closes descriptors this process owns and no longer uses.
            unsafe {
                libc::syscall(libc::SYS_close_range, lo, k - 1, 0u32);
            }
        }
        lo = lo.max(k + 1);
    }
    // SAFETY: as above.
    unsafe {
        libc::syscall(libc::SYS_close_range, lo, u32::MAX, 0u32);
    }
}

/// Set by [`Alarm`]'s signal handler.
static ALARM_FIRED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_alarm(_: libc::c_int) {
    // ORDERING: Relaxed; read by the same thread after the handler returns (`Alarm::fired`).
    ALARM_FIRED.store(true, Ordering::Relaxed);
}

/// A periodic timer of the calling thread: when it fires, a signal with a handler that does
/// not restart calls interrupts what the thread is blocked in (EINTR). For one thread of the
/// process (the ptrace thread).
pub struct Alarm {
    timer: libc::timer_t,
}

impl Alarm {
    /// A realtime signal the supervisor uses for nothing else.
    fn signal() -> i32 {
        libc::SIGRTMIN() + 8
    }

    /// The timer, its signal's handler installed and the signal unblocked in this thread.
    pub fn new() -> io::Result<Alarm> {
        let sig = Self::signal();
        // SAFETY: a zeroed sigaction with a handler of the right signature and no flags
        // (no SA_RESTART: the wait it interrupts returns EINTR); a zeroed signal set filled
        // by sigemptyset/sigaddset; a zeroed sigevent naming this thread; `timer` an
        // out-pointer.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_alarm as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            let mut sev: libc::sigevent = std::mem::zeroed();
            sev.sigev_notify = libc::SIGEV_THREAD_ID;
            sev.sigev_signo = sig;
            sev.sigev_notify_thread_id = gettid();
            let mut timer: libc::timer_t = std::ptr::null_mut();
            if libc::timer_create(libc::CLOCK_MONOTONIC, &mut sev, &mut timer) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(Alarm { timer })
        }
    }

    /// Fires every `every` from now on (`None`: stops); false if the timer could not be set.
    pub fn set(&self, every: Option<std::time::Duration>) -> bool {
        let d = every.unwrap_or_default();
        let t = libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: t,
            it_value: t,
        };
        // SAFETY: a timer of ours; `spec` a valid pointer.
        unsafe { libc::timer_settime(self.timer, 0, &spec, std::ptr::null_mut()) == 0 }
    }

    /// Whether it fired since the last call.
    pub fn fired(&self) -> bool {
        // ORDERING: Relaxed; see `on_alarm`.
        ALARM_FIRED.swap(false, Ordering::Relaxed)
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        // SAFETY: a timer of ours, deleted once.
        unsafe {
            libc::timer_delete(self.timer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn ino(fd: RawFd) -> u64 {
        // SAFETY: `st` is written by the kernel before it is read.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid out-pointer.
        assert_eq!(unsafe { libc::fstat(fd, &mut st) }, 0);
        st.st_ino
    }

    #[test]
    fn task_getfd_reads_the_threads_own_table() {
        const N: i32 = 913;
        let pid = std::process::id() as i32;
        std::thread::spawn(move || {
            // SAFETY: unsharing this thread's table touches no other thread's descriptors.
            assert_eq!(unsafe { libc::unshare(libc::CLONE_FILES) }, 0);
            // SAFETY: integer arguments; a new eventfd, ours.
            let e = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
            assert!(e >= 0);
            // SAFETY: N is free in this thread's own table (just unshared).
            assert_eq!(unsafe { libc::dup3(e, N, libc::O_CLOEXEC) }, N);
            let copy = task_getfd(gettid(), pid, N as u32).expect("the thread's descriptor");
            assert_eq!(ino(copy.as_raw_fd()), ino(N));
            // The thread group's leader has no N.
            let leader = task_getfd(pid, pid, N as u32).map(drop);
            assert_eq!(leader.unwrap_err().raw_os_error(), Some(libc::EBADF));
            drop(copy);
            // SAFETY: ours.
            unsafe {
                libc::close(N);
                libc::close(e);
            }
        })
        .join()
        .unwrap();
    }
}

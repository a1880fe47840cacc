//! What each syscall does to a descriptor table (§6 of REPORT.md), decoded from a joined
//! [`Call`] into an [`Op`].
//!
//! Only the descriptor layer is modelled. Calls fall in four groups:
//!
//! - **table operations** the library replays: opens and every other fd-creating call,
//!   close, the dup family, fcntl's descriptor commands, `ioctl(FIOCLEX/FIONCLEX)`,
//!   `close_range`, SCM_RIGHTS receives;
//! - **task operations** the engine replays: clone/clone3/fork/vfork, unshare, execve, and
//!   RLIMIT_NOFILE changes;
//! - **plain calls** with descriptor arguments: a success proves those descriptors valid (P15),
//!   EBADF one of them bad, an errno from after the lookup all of them valid; each argument
//!   is decoded with how the kernel looks it up ([`Lookup`]: O_PATH files pass `fdget_raw`
//!   and path walks, not `fdget`) and each call with what its EBADF means ([`Ebadf`]) and
//!   which errnos come after its lookups ([`EARLY`]); see [`crate::engine::args`];
//! - **unknown names** (`syscall_0x1b8`, or any name not in [`crate::syscalls`]'s lists): counted as
//!   unsupported, since they might create descriptors the replay cannot see.

use crate::parse::{Call, scan};
use crate::syscalls;
use fdtable::Errno;

/// `O_CLOEXEC` and the flags that share its value (`SOCK_CLOEXEC`, `EFD_CLOEXEC`, ...).
const O_CLOEXEC_BIT: u64 = 0o2000000;

/// How an fd-creating call orders its allocation against its other failures (P13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alloc {
    /// Reserves the fd first (open, openat, openat2, creat): a later failure (ENOENT) held a
    /// number for a while, and a full table answers EMFILE whatever the path.
    ReserveFirst,
    /// Checks the listening fd, then reserves (accept, accept4): EBADF, then EMFILE, then the
    /// socket's own errors.
    Accept,
    /// Creates the object first (socket, eventfd, epoll, ...): its errors win over EMFILE.
    CreateFirst,
    /// An ioctl that returns a new descriptor (TIOCGPTPEER, NS_GET_USERNS, KVM_CREATE_VM,
    /// ...): `fdget` of the ioctl's own fd first (EBADF), then the command's checks (ENOTTY,
    /// EINVAL, EPERM: taken from the log, nothing reserved), then the allocation (EMFILE).
    Ioctl,
}

/// The kind of object behind a descriptor (for reports and io_uring drift).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Opened by path.
    File,
    /// A socket, pipe or other anonymous object.
    Anon,
    /// An io_uring instance: its table may change invisibly (P12).
    IoUring,
    /// Present at the start (meta file or default).
    Inherited,
    /// Received with SCM_RIGHTS or pidfd_getfd.
    Received,
    /// Installed by a resync: the log proved it open but no visible call created it.
    Opaque,
    /// A pidfd of this process (or thread), from pidfd_open or CLONE_PIDFD.
    Pidfd(u32),
}

impl Kind {
    /// Whether the replay knows if the file is O_PATH: it saw the open (received, inherited
    /// and resynced descriptors may be O_PATH files it never saw opened).
    pub fn opath_known(self) -> bool {
        !matches!(self, Kind::Inherited | Kind::Received | Kind::Opaque)
    }
}

/// The clone flags the replay needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CloneFlags {
    /// `CLONE_FILES`: share the table.
    pub files: bool,
    /// `CLONE_THREAD`: join the parent's thread group.
    pub thread: bool,
    /// `CLONE_VFORK`.
    pub vfork: bool,
    /// `CLONE_PIDFD`: a pidfd is installed in the parent.
    pub pidfd: bool,
}

/// What a call does to the descriptor layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// No table effect.
    Plain,
    /// Allocates one new fd at the lowest free number (the result).
    NewFd {
        /// How allocation is ordered against the call's other failures.
        alloc: Alloc,
        /// Whether the new fd is close-on-exec.
        cloexec: bool,
        /// What it refers to.
        kind: Kind,
        /// An `O_PATH` open: `fget` (not `fget_raw`) callers see it as absent.
        opath: bool,
    },
    /// pipe, pipe2, socketpair: two fds, allocated one after the other.
    Pair {
        /// The two fds, if printed.
        fds: Option<[u32; 2]>,
        /// Close-on-exec for both.
        cloexec: bool,
        /// socketpair reserves both fds before creating the sockets.
        reserve_first: bool,
    },
    /// close.
    Close(u32),
    /// dup.
    Dup(u32),
    /// dup2.
    Dup2(u32, u32),
    /// dup3 (flags as the kernel sees them).
    Dup3(u32, u32, u32),
    /// fcntl F_DUPFD / F_DUPFD_CLOEXEC.
    DupFd {
        /// Source fd.
        fd: u32,
        /// Lowest acceptable new fd.
        from: u32,
        /// F_DUPFD_CLOEXEC.
        cloexec: bool,
    },
    /// fcntl F_GETFD.
    GetFd(u32),
    /// fcntl F_SETFD, or ioctl FIOCLEX / FIONCLEX.
    SetFd {
        /// Target fd.
        fd: u32,
        /// The new close-on-exec bit.
        cloexec: bool,
        /// ioctl (uses `fdget`, so an O_PATH fd answers EBADF).
        ioctl: bool,
    },
    /// fcntl F_DUPFD_QUERY.
    DupFdQuery(u32, u32),
    /// close_range.
    CloseRange {
        /// First fd.
        first: u32,
        /// Last fd (inclusive).
        last: u32,
        /// Raw flags.
        flags: u32,
    },
    /// recvmsg / recvmmsg that received descriptors with SCM_RIGHTS.
    Recv {
        /// The received fds; `None` if strace truncated the array (`-s` too small).
        fds: Option<Vec<u32>>,
        /// MSG_CMSG_CLOEXEC in the flags argument.
        cloexec: bool,
    },
    /// clone, clone3, fork, vfork.
    Clone {
        /// Flags.
        flags: CloneFlags,
        /// The pidfd installed in the parent (CLONE_PIDFD), if printed.
        pidfd: Option<u32>,
    },
    /// unshare (whether CLONE_FILES is among the flags).
    Unshare(bool),
    /// execve / execveat.
    Exec,
    /// RLIMIT_NOFILE through prlimit64 / setrlimit / getrlimit.
    Rlimit {
        /// The target pid (`None` = the caller's process).
        pid: Option<u32>,
        /// The new soft limit, if set.
        new: Option<u64>,
        /// The soft limit before the call, if printed.
        old: Option<u64>,
    },
    /// A syscall name the replay does not know.
    Unknown,
}

impl Op {
    /// Whether the op can take part in the reordering search of a shared table (a pure table
    /// operation, as opposed to task-level operations that restructure tables).
    pub fn reorderable(&self) -> bool {
        matches!(
            self,
            Op::NewFd { .. }
                | Op::Pair { .. }
                | Op::Close(_)
                | Op::Dup(_)
                | Op::Dup2(..)
                | Op::Dup3(..)
                | Op::DupFd { .. }
                | Op::GetFd(_)
                | Op::SetFd { .. }
                | Op::DupFdQuery(..)
                | Op::Recv { .. }
        ) || matches!(self, Op::CloseRange { flags, .. } if flags & 2 == 0)
    }
}

/// How a call looks one of its descriptor arguments up (fs/file.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// `fdget_raw` / `fget_raw`, or the start of a path walk: an O_PATH descriptor will do.
    Raw,
    /// `fdget` / `fget`: an O_PATH descriptor is EBADF, as if it were closed.
    NoPath,
}

/// What an EBADF answer of a call says about its descriptor arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ebadf {
    /// Only the lookups of the arguments answer EBADF: one of them was bad.
    Strict,
    /// EBADF may also come from elsewhere (why): a bad argument explains it, valid ones do
    /// not contradict it.
    Other(&'static str),
    /// The call's table steps check it (close, the dup family, fcntl's descriptor commands,
    /// accept, ioctls that return descriptors).
    Steps,
}

/// A descriptor argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdArg {
    /// The number as the kernel's `unsigned int fd` sees it: a negative value is far beyond
    /// any table.
    pub fd: u32,
    /// Printed negative (never a descriptor).
    pub negative: bool,
    /// How the call looks it up.
    pub lookup: Lookup,
}

/// Errnos a call may answer before (or without) looking its descriptors up: argument checks
/// and copies (EINVAL, EFAULT, E2BIG, ENAMETOOLONG), allocations (ENOMEM, ENFILE, and EMFILE:
/// an open reserves its descriptor before it walks from the dirfd), and what seccomp filters
/// answer instead of running a call (EPERM, ENOSYS). Any other errno of a call whose lookups
/// come first proves that they found their descriptors.
pub const EARLY: &[Errno] = &[
    Errno::EPERM,
    Errno::ENOSYS,
    Errno::EINVAL,
    Errno::EFAULT,
    Errno::new(libc::E2BIG),
    Errno::ENAMETOOLONG,
    Errno::ENOMEM,
    Errno::ENFILE,
    Errno::EMFILE,
];

/// A decoded call: its op, and its descriptor arguments with what a success or a failure
/// says about them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The table effect.
    pub op: Op,
    /// Descriptor arguments: a success proves them valid (P15); see `ebadf` and `proves` for
    /// failures.
    pub args: Vec<FdArg>,
    /// What EBADF says about `args`.
    pub ebadf: Ebadf,
    /// Whether an errno outside [`EARLY`] (and `early`) proves that `args` were found (the
    /// lookups come before the call's other checks).
    pub proves: bool,
    /// Errnos besides [`EARLY`] this call may answer before its lookups (ENOENT for an empty
    /// path: `getname` refuses it before the walk starts).
    pub early: &'static [Errno],
    /// pidfd_getfd's target descriptor, looked up (with `fget_task`, O_PATH included) in the
    /// table of the pidfd's process.
    pub remote: Option<FdArg>,
}

impl Decoded {
    /// A call without descriptor arguments of its own: any EBADF is its steps' (close, the
    /// dup family, fcntl's descriptor commands).
    fn op(op: Op) -> Self {
        Decoded {
            op,
            args: Vec::new(),
            ebadf: Ebadf::Steps,
            proves: false,
            early: &[],
            remote: None,
        }
    }

    fn with(mut self, args: Vec<FdArg>, ebadf: Ebadf, proves: bool) -> Self {
        self.args = args;
        self.ebadf = ebadf;
        self.proves = proves;
        self
    }

    /// The descriptors a success proves open (P15): the non-negative arguments.
    pub fn uses(&self) -> Vec<u32> {
        self.args
            .iter()
            .filter(|a| !a.negative)
            .map(|a| a.fd)
            .collect()
    }

    /// Every argument's number as the kernel sees it (negative ones included).
    pub fn arg_fds(&self) -> Vec<u32> {
        self.args.iter().map(|a| a.fd).collect()
    }

    /// Whether `e` may come before the lookups (so it says nothing about them).
    pub fn is_early(&self, e: Errno) -> bool {
        EARLY.contains(&e) || self.early.contains(&e)
    }
}

/// ENOENT comes before the walk for an empty path (without AT_EMPTY_PATH).
const EMPTY_PATH: &[Errno] = &[Errno::ENOENT];

/// Decodes one call.
pub fn decode(call: &Call) -> Decoded {
    let a = call.arg_list();
    let arg = |i: usize| a.get(i).copied().unwrap_or("");
    let flag = |i: usize, name: &str| has_cloexec_flag(arg(i), name);
    let one = |i: usize, lookup| fd_arg(arg(i), lookup).into_iter().collect::<Vec<_>>();
    let plain = |args: Vec<FdArg>, ebadf, proves| Decoded::op(Op::Plain).with(args, ebadf, proves);
    let new = |alloc, cloexec, kind| Op::NewFd {
        alloc,
        cloexec,
        kind,
        opath: false,
    };
    use Alloc::*;
    use Lookup::{NoPath, Raw};
    let name = syscalls::canonical(&call.name);
    let op = match name {
        "open" => open_op(arg(1)),
        "openat" | "open_by_handle_at" => {
            let d = open_op(arg(2));
            if name == "open_by_handle_at" {
                // The mount fd's lookup is not modelled.
                return Decoded::op(d).with(one(0, Raw), Ebadf::Other(syscalls::UNMODELLED), false);
            }
            let mut d = Decoded::op(d).with(dirfd_args(&a, &[100]), Ebadf::Strict, true);
            d.early = empty_path_early(arg(1));
            return d;
        }
        "openat2" => {
            let flags = scan::field(arg(2), "flags").unwrap_or("");
            let mut d =
                Decoded::op(open_op(flags)).with(dirfd_args(&a, &[100]), Ebadf::Strict, true);
            d.early = empty_path_early(arg(1));
            return d;
        }
        "accept" | "accept4" => {
            let cloexec = name == "accept4" && flag(3, "SOCK_CLOEXEC");
            return Decoded::op(new(Accept, cloexec, Kind::Anon)).with(
                one(0, NoPath),
                Ebadf::Steps,
                true,
            );
        }
        "signalfd" | "signalfd4" => {
            if arg(0).trim() == "-1" {
                let cloexec = name == "signalfd4" && flag(3, "SFD_CLOEXEC");
                new(CreateFirst, cloexec, Kind::Anon)
            } else {
                // fs/signalfd.c: `fdget` of an existing signalfd, then EINVAL for others.
                return plain(one(0, NoPath), Ebadf::Strict, true);
            }
        }
        // A task that dies inside a call whose number strace cannot read any more.
        "???" if matches!(call.ret, crate::parse::Ret::Unknown) => Op::Plain,
        "pidfd_open" => {
            // The process it refers to (a thread with PIDFD_THREAD): pidfd_getfd's target.
            let kind = scan::leading_int(arg(0))
                .and_then(|p| u32::try_from(p).ok())
                .filter(|&p| p > 0)
                .map_or(Kind::Anon, Kind::Pidfd);
            new(CreateFirst, true, kind)
        }
        "pidfd_getfd" => {
            // kernel/pid.c: EINVAL for flags, `fdget` of the pidfd (EBADF), EBADF for a
            // descriptor that is no pidfd, ESRCH, EPERM, then `fget_task` of the target
            // descriptor in the target's table (EBADF), then the allocation (EMFILE).
            let mut d = Decoded::op(new(CreateFirst, true, Kind::Received)).with(
                one(0, NoPath),
                Ebadf::Other(syscalls::NOT_PIDFD),
                true,
            );
            d.remote = fd_arg(arg(1), Raw);
            return d;
        }
        "landlock_create_ruleset" => {
            if arg(2).contains("VERSION") || arg(2).contains("ERRATA") {
                Op::Plain
            } else {
                new(CreateFirst, true, Kind::Anon)
            }
        }
        "bpf" => {
            let c = strip_comment(arg(0));
            let fd_cmd = fdtable_syscalls::bpf::creates_named(&c)
                || (c.starts_with(|x: char| x.is_ascii_digit())
                    && fdtable_syscalls::bpf::creates(num(&c)));
            if fd_cmd {
                new(CreateFirst, true, Kind::Anon)
            } else {
                Op::Plain
            }
        }
        "seccomp" => {
            if arg(1).contains("NEW_LISTENER") {
                new(CreateFirst, true, Kind::Anon)
            } else {
                Op::Plain
            }
        }
        "pipe" => Op::Pair {
            fds: pair(arg(0)),
            cloexec: false,
            reserve_first: false,
        },
        "pipe2" => Op::Pair {
            fds: pair(arg(0)),
            cloexec: flag(1, "O_CLOEXEC"),
            reserve_first: false,
        },
        "socketpair" => Op::Pair {
            fds: pair(arg(3)),
            cloexec: flag(1, "SOCK_CLOEXEC"),
            reserve_first: true,
        },
        "close" => match raw_fd(arg(0)) {
            Some(f) => Op::Close(f),
            None => Op::Plain,
        },
        "dup" => match raw_fd(arg(0)) {
            Some(f) => Op::Dup(f),
            None => Op::Plain,
        },
        "dup2" => match (raw_fd(arg(0)), raw_fd(arg(1))) {
            (Some(o), Some(n)) => Op::Dup2(o, n),
            _ => Op::Plain,
        },
        "dup3" => match (raw_fd(arg(0)), raw_fd(arg(1))) {
            (Some(o), Some(n)) => Op::Dup3(o, n, dup3_flags(arg(2))),
            _ => Op::Plain,
        },
        "fcntl" | "fcntl64" => return fcntl_op(&a),
        "ioctl" => {
            let cmd = strip_comment(arg(1));
            let cmd = cmd.as_ref();
            // fs/ioctl.c: `fdget` first, whatever the command.
            if let Some(cloexec) = ioctl_new_fd(cmd, arg(2)) {
                return Decoded::op(new(Ioctl, cloexec, Kind::Anon)).with(
                    one(0, NoPath),
                    Ebadf::Steps,
                    true,
                );
            }
            let set = match cmd {
                "FIOCLEX" => Some(true),
                "FIONCLEX" => Some(false),
                // `-X raw` / `-X verbose`: the number.
                c => match ioctl_cmd_value(c) {
                    Some(0x5451) => Some(true),
                    Some(0x5450) => Some(false),
                    _ => None,
                },
            };
            match (set, raw_fd(arg(0))) {
                (Some(cloexec), Some(f)) => Op::SetFd {
                    fd: f,
                    cloexec,
                    ioctl: true,
                },
                _ => {
                    let ebadf = if ioctl_only_lookup_ebadf(cmd) {
                        Ebadf::Strict
                    } else {
                        Ebadf::Other(syscalls::DRIVER)
                    };
                    return plain(one(0, NoPath), ebadf, true);
                }
            }
        }
        "close_range" => {
            let first = scan::leading_int(arg(0)).and_then(|v| u32::try_from(v).ok());
            let last = scan::leading_int(arg(1)).and_then(|v| u32::try_from(v).ok());
            match (first, last) {
                (Some(first), Some(last)) => Op::CloseRange {
                    first,
                    last,
                    flags: close_range_flags(arg(2)),
                },
                _ => Op::Plain,
            }
        }
        "recvmsg" | "recvmmsg" => {
            let flags_at = if name == "recvmsg" { 2 } else { 3 };
            let cloexec = flag(flags_at, "MSG_CMSG_CLOEXEC");
            let args = one(0, NoPath);
            let op = match scm_rights(&call.args) {
                Some(fds) if call.ret.is_ok() => Op::Recv { fds, cloexec },
                _ => Op::Plain,
            };
            return Decoded::op(op).with(args, Ebadf::Strict, true);
        }
        "clone" | "clone3" | "fork" | "vfork" => clone_op(&call.name, &call.args, &a),
        "unshare" => Op::Unshare(has_flag_bits(arg(0), "CLONE_FILES", 0x400)),
        "execve" => Op::Exec,
        "execveat" => {
            // The dirfd starts the walk (`fdget_raw`); RLIMIT_NPROC's EAGAIN and the
            // argument copies may come before it.
            return Decoded::op(Op::Exec).with(dirfd_args(&a, &[100]), Ebadf::Strict, false);
        }
        "prlimit64" => {
            if !is_nofile(arg(1)) {
                return Decoded::op(Op::Plain);
            }
            let pid = scan::leading_int(arg(0)).and_then(|p| u32::try_from(p).ok());
            Op::Rlimit {
                pid: pid.filter(|&p| p != 0),
                new: soft_limit(arg(2)),
                old: soft_limit(arg(3)),
            }
        }
        "setrlimit" if is_nofile(arg(0)) => Op::Rlimit {
            pid: None,
            new: soft_limit(arg(1)),
            old: None,
        },
        "getrlimit" | "ugetrlimit" if is_nofile(arg(0)) => Op::Rlimit {
            pid: None,
            new: None,
            old: soft_limit(arg(1)),
        },
        "setrlimit" | "getrlimit" | "ugetrlimit" => Op::Plain,
        "mmap" | "mmap2" => {
            // ksys_mmap_pgoff: `fget` of the descriptor unless MAP_ANONYMOUS.
            let anon = has_flag_bits(arg(3), "MAP_ANONYMOUS", 0x20);
            let args = if anon { vec![] } else { one(4, NoPath) };
            return plain(args, Ebadf::Strict, true);
        }
        // utimensat with both times UTIME_OMIT returns before looking anything up; with a
        // NULL path it changes the descriptor's own file, looked up with `fdget`.
        "utimensat" if both_omitted(arg(2)) => Op::Plain,
        "utimensat" if arg(1).trim() == "NULL" => {
            return plain(one(0, NoPath), Ebadf::Strict, true);
        }
        // A zero length returns before the descriptors are looked up.
        "splice" if scan::leading_int(arg(4)) == Some(0) => Op::Plain,
        "tee" if scan::leading_int(arg(2)) == Some(0) => Op::Plain,
        // Every other call that creates one descriptor, as the catalogue says.
        name if let Some(op) = catalogue_create(name, &a) => op,
        name => {
            if let Some(fc) = syscalls::fd_call(name) {
                let mut d = plain(
                    if fc.pos.iter().any(|&p| p >= 100) {
                        dirfd_args(&a, fc.pos)
                    } else {
                        fc.pos
                            .iter()
                            .filter_map(|&i| fd_arg(arg(i), fc.lookup))
                            .collect()
                    },
                    fc.ebadf,
                    fc.proves,
                );
                if fc.pos.iter().any(|&p| p >= 100) {
                    // Path walks: the dirfd's lookup; an empty path fails before it.
                    for x in &mut d.args {
                        x.lookup = fc.lookup;
                    }
                    let empty = fc
                        .pos
                        .iter()
                        .any(|&p| p >= 100 && is_empty_path(arg(p - 100 + 1)));
                    if empty {
                        d.early = EMPTY_PATH;
                    }
                }
                return d;
            }
            if syscalls::is_known_plain(name) {
                Op::Plain
            } else {
                Op::Unknown
            }
        }
    };
    Decoded::op(op)
}

/// A descriptor argument (`AT_FDCWD` and unparsable text are none).
fn fd_arg(s: &str, lookup: Lookup) -> Option<FdArg> {
    let v = scan::leading_int(s)?;
    let v = i32::try_from(v).ok()?;
    Some(FdArg {
        fd: v as u32,
        negative: v < 0,
        lookup,
    })
}

/// `AT_FDCWD` as `-X raw` prints it.
const AT_FDCWD: i64 = -100;

/// The dirfds at `pos` (100 + i: a dirfd at i, counted only when the path after it is
/// relative or empty; a NULL path, as in `utimensat(fd, NULL, ...)`, means the fd itself).
/// Plain positions (below 100) are taken as they are. Looked up raw (path walks).
fn dirfd_args(a: &[&str], pos: &[usize]) -> Vec<FdArg> {
    let mut out = Vec::new();
    for &p in pos {
        let (i, dirfd) = if p >= 100 {
            (p - 100, true)
        } else {
            (p, false)
        };
        let Some(s) = a.get(i) else {
            continue;
        };
        if dirfd && scan::leading_int(s) == Some(AT_FDCWD) {
            continue;
        }
        let Some(f) = fd_arg(s, Lookup::Raw) else {
            continue;
        };
        if dirfd && a.get(i + 1).is_some_and(|path| is_absolute(path)) {
            continue;
        }
        out.push(f);
    }
    out
}

/// `[UTIME_OMIT, UTIME_OMIT]` (by name, or by value with `-X raw`).
fn both_omitted(times: &str) -> bool {
    times.matches("UTIME_OMIT").count() == 2 || times.matches("1073741822").count() == 2
}

fn is_empty_path(path_arg: &str) -> bool {
    path_arg.trim() == "\"\""
}

fn empty_path_early(path_arg: &str) -> &'static [Errno] {
    if is_empty_path(path_arg) {
        EMPTY_PATH
    } else {
        &[]
    }
}

/// Whether an ioctl command answers EBADF only for its own descriptor: the terminal and
/// generic file commands (`TC*`, `TIOC*`, `FIO*`; by number, type `'T'` below the tun
/// commands), which take no descriptor in their argument.
fn ioctl_only_lookup_ebadf(cmd: &str) -> bool {
    let name = cmd.split(" or ").next().unwrap_or("").trim();
    if name.starts_with("TC") || name.starts_with("TIOC") || name.starts_with("FIO") {
        return true;
    }
    match ioctl_cmd_value(cmd).or_else(|| ioc_value(cmd)) {
        Some(v) => (v >> 8) & 0xff == 0x54 && v & 0xff < 0x80,
        None => false,
    }
}

/// The type and number bits of an `_IOC(dir, type, nr, size)` or numeric command.
fn ioc_value(cmd: &str) -> Option<u32> {
    let inner = cmd.trim().strip_prefix("_IOC(")?.strip_suffix(')')?;
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    if let [_, ty, nr, _] = parts[..] {
        let ty = u32::try_from(scan::leading_int(ty)?).ok()?;
        let nr = u32::try_from(scan::leading_int(nr)?).ok()?;
        return Some(((ty & 0xff) << 8) | (nr & 0xff));
    }
    None
}

/// An fd argument as the kernel's `unsigned int fd` sees it: `-1` becomes 4294967295, which
/// no table holds (so the library answers EBADF, as the kernel does).
fn raw_fd(s: &str) -> Option<u32> {
    scan::leading_int(s).map(|v| v as i32 as u32)
}

/// The value of an ioctl command as strace prints it: a name from the table below, a number,
/// or `_IOC(_IOC_NONE, 0xb7, 0x1, 0)`.
fn ioctl_cmd_value(cmd: &str) -> Option<u32> {
    let cmd = cmd.trim();
    // strace prints a value two names share as `A or B`.
    for name in cmd.split(" or ") {
        if let Some(c) = fdtable_syscalls::ioctl::by_name(name.trim()) {
            return Some(c.cmd);
        }
    }
    if let Some(inner) = cmd.strip_prefix("_IOC(").and_then(|c| c.strip_suffix(')')) {
        // _IOC(dir, type, nr, size): only commands without a payload return descriptors.
        let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
        if let [dir, ty, nr, size] = parts[..] {
            let ty = scan::leading_int(ty)?;
            let nr = scan::leading_int(nr)?;
            let size = scan::leading_int(size)?;
            if dir == "_IOC_NONE" && size == 0 && (0..256).contains(&ty) && (0..256).contains(&nr) {
                return Some(((ty as u32) << 8) | nr as u32);
            }
        }
        return None;
    }
    if cmd.starts_with(|c: char| c.is_ascii_digit()) {
        return scan::leading_int(cmd).and_then(|v| u32::try_from(v).ok());
    }
    None
}

/// Whether an ioctl command returns a new descriptor, and if so whether it is close-on-exec
/// (the catalogue's commands: TIOCGPTPEER and USERFAULTFD_IOC_NEW take the new fd's flags as
/// their argument; the namespace, KVM and VFIO commands always set O_CLOEXEC).
fn ioctl_new_fd(cmd: &str, arg: &str) -> Option<bool> {
    use fdtable_syscalls::{Cloexec, ioctl};
    match ioctl::by_value(ioctl_cmd_value(cmd)?)?.effect {
        ioctl::Effect::Create(Cloexec::Flag { name, .. }) => Some(has_cloexec_flag(arg, name)),
        ioctl::Effect::Create(Cloexec::Always) => Some(true),
        ioctl::Effect::Create(Cloexec::Never) => Some(false),
        _ => None,
    }
}

/// A call the catalogue says creates one descriptor, returned as its result: its allocation
/// order, close-on-exec source and kind (io_uring, a file opened by name, or an object).
fn catalogue_create(name: &str, a: &[&str]) -> Option<Op> {
    use fdtable_syscalls::{Cloexec, Count, Effect, Later, Order};
    let s = fdtable_syscalls::by_name(name)?;
    let Effect::Create(c) = s.effect else {
        return None;
    };
    if c.count != Count::One {
        return None;
    }
    let alloc = match c.order {
        Order::ReserveFirst => Alloc::ReserveFirst,
        Order::CreateFirst => Alloc::CreateFirst,
        Order::Accept => Alloc::Accept,
    };
    let cloexec = match c.cloexec {
        Cloexec::Never => false,
        Cloexec::Always => true,
        Cloexec::Flag { arg, name, .. } => {
            has_cloexec_flag(a.get(arg as usize).copied().unwrap_or(""), name)
        }
        Cloexec::Field { .. } => return None,
    };
    let kind = if c.later == Later::Ring {
        Kind::IoUring
    } else if c.order == Order::ReserveFirst {
        Kind::File
    } else {
        Kind::Anon
    };
    Some(Op::NewFd {
        alloc,
        cloexec,
        kind,
        opath: false,
    })
}

fn open_op(flags: &str) -> Op {
    Op::NewFd {
        alloc: Alloc::ReserveFirst,
        cloexec: has_cloexec_flag(flags, "O_CLOEXEC"),
        kind: Kind::File,
        opath: has_flag_bits(flags, "O_PATH", 0o10000000),
    }
}

fn is_absolute(path_arg: &str) -> bool {
    path_arg.trim_start().starts_with("\"/")
}

/// `s` without its `/* ... */` comments (`-X verbose` prints one after every number:
/// `0x1 /* SOCK_STREAM */|0x80000 /* SOCK_CLOEXEC */`), trimmed.
fn strip_comment(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains("/*") {
        return std::borrow::Cow::Borrowed(s.trim());
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = match rest[i..].find("*/") {
            Some(j) => &rest[i + j + 2..],
            None => "",
        };
    }
    out.push_str(rest);
    let t = out.trim();
    // Spaces left around `|` where a comment was.
    std::borrow::Cow::Owned(t.split('|').map(str::trim).collect::<Vec<_>>().join("|"))
}

/// Whether a flags value has `name`, or (for numeric values) the O_CLOEXEC bit.
fn has_cloexec_flag(value: &str, name: &str) -> bool {
    let bit = match name {
        "MFD_CLOEXEC" | "FAN_CLOEXEC" | "FSOPEN_CLOEXEC" | "FSPICK_CLOEXEC" | "FSMOUNT_CLOEXEC" => {
            1
        }
        "PERF_FLAG_FD_CLOEXEC" => 8,
        "MSG_CMSG_CLOEXEC" => 0x4000_0000,
        _ => O_CLOEXEC_BIT,
    };
    has_flag_bits(value, name, bit)
}

/// Whether `value` (`A|B|0x80000`) has the symbolic flag `name` or the numeric `bit`.
fn has_flag_bits(value: &str, name: &str, bit: u64) -> bool {
    strip_comment(value).split('|').any(|t| {
        let t = t.trim();
        t == name || (t.starts_with(|c: char| c.is_ascii_digit()) && num(t) & bit != 0)
    })
}

fn num(t: &str) -> u64 {
    scan::leading_int(t).map_or(0, |v| v as u64)
}

/// The two descriptors of `[a, b]`. A number that cannot be a descriptor (above INT_MAX;
/// negative or past `u32` as `u32::MAX`) is kept beyond any table, so that the plan rejects
/// the line rather than take the numbers as unprinted.
fn pair(s: &str) -> Option<[u32; 2]> {
    if let Some(v) = scan::fd_array(s) {
        return match v.as_slice() {
            [a, b] => Some([*a, *b]),
            _ => None,
        };
    }
    let body = scan::inner(s.trim(), b'[', b']')?;
    let nums: Vec<i64> = scan::split_top(body)?
        .into_iter()
        .map(scan::leading_int)
        .collect::<Option<_>>()?;
    let fd = |v: i64| u32::try_from(v).unwrap_or(u32::MAX);
    match nums.as_slice() {
        [a, b] => Some([fd(*a), fd(*b)]),
        _ => None,
    }
}

fn dup3_flags(s: &str) -> u32 {
    let mut f = 0u32;
    for t in strip_comment(s).split('|') {
        let t = t.trim();
        match t {
            "O_CLOEXEC" => f |= O_CLOEXEC_BIT as u32,
            "0" | "" => {}
            _ if t.starts_with(|c: char| c.is_ascii_digit()) => f |= num(t) as u32,
            // Any other flag is invalid for dup3.
            _ => f |= 1,
        }
    }
    f
}

fn close_range_flags(s: &str) -> u32 {
    let mut f = 0u32;
    for t in strip_comment(s).split('|') {
        match t.trim() {
            "CLOSE_RANGE_UNSHARE" => f |= 1 << 1,
            "CLOSE_RANGE_CLOEXEC" => f |= 1 << 2,
            "0" | "" => {}
            t if t.starts_with(|c: char| c.is_ascii_digit()) => f |= num(t) as u32,
            _ => f |= 1 << 31,
        }
    }
    f
}

fn fcntl_op(a: &[&str]) -> Decoded {
    let arg = |i: usize| a.get(i).copied().unwrap_or("");
    let Some(fd) = raw_fd(arg(0)) else {
        return Decoded::op(Op::Plain);
    };
    let cmd = strip_comment(arg(1));
    let cmd = cmd.as_ref();
    // Names, or numbers (`-X raw`, `-X verbose`, and F_DUPFD_QUERY, which strace 6.1 prints
    // as `0x403 /* F_??? */`).
    let numeric = cmd
        .starts_with(|c: char| c.is_ascii_digit())
        .then(|| scan::leading_int(cmd))
        .flatten();
    let cmd = match (cmd, numeric) {
        ("F_DUPFD", _) | (_, Some(0)) => "F_DUPFD",
        ("F_GETFD", _) | (_, Some(1)) => "F_GETFD",
        ("F_SETFD", _) | (_, Some(2)) => "F_SETFD",
        ("F_DUPFD_QUERY", _) | (_, Some(1027)) => "F_DUPFD_QUERY",
        ("F_DUPFD_CLOEXEC", _) | (_, Some(1030)) => "F_DUPFD_CLOEXEC",
        (c, None) => c,
        (_, Some(n)) => fcntl_cmd_name(n).unwrap_or("?"),
    };
    let op = match cmd {
        "F_DUPFD" | "F_DUPFD_CLOEXEC" => match scan::leading_int(arg(2)) {
            Some(from) => Op::DupFd {
                fd,
                // A negative or huge `from` is out of range for any limit.
                from: u32::try_from(from).unwrap_or(u32::MAX),
                cloexec: cmd == "F_DUPFD_CLOEXEC",
            },
            None => Op::Plain,
        },
        "F_GETFD" => Op::GetFd(fd),
        "F_SETFD" => Op::SetFd {
            fd,
            cloexec: has_flag_bits(arg(2), "FD_CLOEXEC", 1),
            ioctl: false,
        },
        "F_DUPFD_QUERY" => match scan::fd_arg(arg(2)) {
            Some(o) => Op::DupFdQuery(fd, o),
            None => Op::Plain,
        },
        _ => {
            // fs/fcntl.c: `fdget_raw`, then EBADF for an O_PATH file unless the command is
            // one check_fcntl_cmd allows; do_fcntl's own EBADFs are the lock types against
            // the access mode and the pipe commands on other files (the catalogue's).
            let (lookup, ebadf) = match fdtable_syscalls::fcntl::by_name(cmd) {
                Some(c) => (
                    match c.lookup {
                        fdtable_syscalls::Lookup::Raw => Lookup::Raw,
                        fdtable_syscalls::Lookup::NoPath => Lookup::NoPath,
                    },
                    match c.ebadf {
                        fdtable_syscalls::Ebadf::Other(why) => Ebadf::Other(why),
                        _ => Ebadf::Strict,
                    },
                ),
                // A command this replay does not know: a newer kernel may allow it on O_PATH.
                None => (Lookup::Raw, Ebadf::Other(syscalls::FCNTL_OTHER)),
            };
            return Decoded::op(Op::Plain).with(
                vec![FdArg {
                    fd,
                    negative: fd > i32::MAX as u32,
                    lookup,
                }],
                ebadf,
                true,
            );
        }
    };
    Decoded::op(op)
}

/// fcntl commands by number (`-X raw`, and those newer than strace 6.1).
fn fcntl_cmd_name(n: i64) -> Option<&'static str> {
    fdtable_syscalls::fcntl::by_value(u32::try_from(n).ok()?).map(|c| c.name)
}

/// The fds of every `SCM_RIGHTS` control message in `args`; `Some(None)` if one was
/// truncated; `None` if there is none.
fn scm_rights(args: &str) -> Option<Option<Vec<u32>>> {
    if !args.contains("cmsg_type=") {
        return None;
    }
    let mut all = Vec::new();
    let levels = scan::fields(args, "cmsg_level");
    let types = scan::fields(args, "cmsg_type");
    let datas = scan::fields(args, "cmsg_data");
    if types.len() != datas.len() || levels.len() != types.len() {
        return Some(None);
    }
    // SOL_SOCKET / SCM_RIGHTS, by name or (`-X raw`, `-X verbose`) by number: 1 and 1.
    let is = |v: &str, name: &str| {
        let v = strip_comment(v);
        let v = v.as_ref();
        v == name || (v.starts_with(|c: char| c.is_ascii_digit()) && num(v) == 1)
    };
    let mut any = false;
    for ((l, t), d) in levels.iter().zip(&types).zip(&datas) {
        if is(l, "SOL_SOCKET") && is(t, "SCM_RIGHTS") {
            any = true;
            match scan::fd_array(d) {
                Some(v) if !d.contains("...") => all.extend(v),
                _ => return Some(None),
            }
        }
    }
    any.then_some(Some(all))
}

fn clone_op(name: &str, args: &str, a: &[&str]) -> Op {
    let flags_text = match name {
        "fork" => "SIGCHLD",
        "vfork" => "CLONE_VM|CLONE_VFORK",
        _ => scan::field(args, "flags").unwrap_or(""),
    };
    let flags = CloneFlags {
        files: has_flag_bits(flags_text, "CLONE_FILES", 0x400),
        thread: has_flag_bits(flags_text, "CLONE_THREAD", 0x10000),
        vfork: has_flag_bits(flags_text, "CLONE_VFORK", 0x4000),
        pidfd: has_flag_bits(flags_text, "CLONE_PIDFD", 0x1000),
    };
    let pidfd = if !flags.pidfd {
        None
    } else if name == "clone3" {
        // `=> {pidfd=[6]}`: the value written back, not the pointer given.
        scan::fields(args, "pidfd")
            .into_iter()
            .find(|v| v.starts_with('['))
            .and_then(scan::fd_array)
            .and_then(|v| v.first().copied())
    } else {
        a.iter()
            .find_map(|x| x.strip_prefix("parent_tid="))
            .and_then(scan::fd_array)
            .and_then(|v| v.first().copied())
    };
    Op::Clone { flags, pidfd }
}

fn is_nofile(s: &str) -> bool {
    let s = strip_comment(s);
    s == "RLIMIT_NOFILE" || (s.starts_with(|c: char| c.is_ascii_digit()) && num(&s) == 7)
}

fn soft_limit(s: &str) -> Option<u64> {
    scan::field(s, "rlim_cur").and_then(scan::limit_value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Joiner;
    use crate::parse::join::Event;

    fn dec(line: &str) -> Decoded {
        let mut j = Joiner::new();
        let mut out = Vec::new();
        j.push(1, line, &mut out);
        match out.pop() {
            Some(Event::Call(c)) => decode(&c),
            other => panic!("not a call: {other:?}"),
        }
    }

    fn arg(fd: u32, lookup: Lookup) -> FdArg {
        FdArg {
            fd,
            negative: false,
            lookup,
        }
    }

    #[test]
    fn descriptor_arguments_and_their_lookups() {
        use Lookup::{NoPath, Raw};
        let d = dec("1 read(-1, 0x7ffe, 1) = -1 EBADF (Bad file descriptor)");
        assert_eq!(
            d.args,
            vec![FdArg {
                fd: u32::MAX,
                negative: true,
                lookup: NoPath
            }]
        );
        assert!(d.uses().is_empty());
        assert_eq!(d.ebadf, Ebadf::Other(syscalls::ACCESS_MODE));
        // fdget_raw: fstat, fchdir, fcntl's F_GETFL; a path walk's dirfd.
        for (line, lookup) in [
            ("1 fstatfs(3, 0x7ffe) = 0", Raw),
            ("1 fchdir(3) = 0", Raw),
            (
                "1 fcntl(3, F_GETFL) = 0x8000 (flags O_RDONLY|O_LARGEFILE)",
                Raw,
            ),
            ("1 fcntl(3, 0x3) = 0x8000", Raw),
            ("1 fcntl(3, 0x404 /* F_??? */) = 0", Raw),
            (
                "1 newfstatat(3, \"x\", 0x7ffe, 0) = -1 ENOENT (No such file)",
                Raw,
            ),
            ("1 openat(3, \"x\", O_RDONLY) = 4", Raw),
            ("1 fchmod(3, 0644) = 0", NoPath),
            ("1 fcntl(3, F_GETLK, 0x7ffe) = 0", NoPath),
            ("1 fcntl(3, 0x5, 0x7ffe) = 0", NoPath),
            (
                "1 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 3, 0) = 0x7f00",
                NoPath,
            ),
            (
                "1 ioctl(3, TCGETS, 0x7ffe) = -1 ENOTTY (Inappropriate ioctl)",
                NoPath,
            ),
            ("1 accept4(3, NULL, NULL, SOCK_CLOEXEC) = 4", NoPath),
            (
                "1 utimensat(3, NULL, [UTIME_NOW, UTIME_OMIT], 0) = 0",
                NoPath,
            ),
            ("1 pidfd_getfd(3, 5, 0) = 6", NoPath),
        ] {
            assert_eq!(dec(line).args, vec![arg(3, lookup)], "{line}");
        }
        // AT_FDCWD (named or `-X raw`'s -100) and absolute paths look nothing up; both times
        // UTIME_OMIT neither; MAP_ANONYMOUS (by name or bit) ignores the descriptor.
        for line in [
            "1 openat(AT_FDCWD, \"x\", O_RDONLY) = 3",
            "1 openat(-100, \"x\", 0) = 3",
            "1 newfstatat(3, \"/etc\", 0x7ffe, 0) = 0",
            "1 utimensat(77, NULL, [UTIME_OMIT, UTIME_OMIT], 0) = 0",
            "1 mmap(NULL, 8192, 0x3, 0x22, -1, 0) = 0x7f00",
            "1 splice(3, NULL, 4, NULL, 0, 0) = 0",
            "1 execveat(3, \"/bin/true\", [\"true\"], 0x7ffe /* 1 var */, 0) = 0",
        ] {
            assert!(dec(line).args.is_empty(), "{line}");
        }
        let neg = dec("1 mkdirat(-5, \"x\", 0700) = -1 EBADF (Bad file descriptor)");
        assert!(neg.args[0].negative);
        // What EBADF means.
        assert_eq!(dec("1 fchmod(3, 0644) = 0").ebadf, Ebadf::Strict);
        assert_eq!(dec("1 close(3) = 0").ebadf, Ebadf::Steps);
        assert_eq!(dec("1 accept(3, NULL, NULL) = 4").ebadf, Ebadf::Steps);
        assert_eq!(dec("1 ioctl(3, TIOCGPTPEER, 0x2) = 4").ebadf, Ebadf::Steps);
        assert_eq!(dec("1 ioctl(3, TCGETS, 0x7ffe) = 0").ebadf, Ebadf::Strict);
        assert_eq!(dec("1 ioctl(3, 0x5401, 0x7ffe) = 0").ebadf, Ebadf::Strict);
        assert_eq!(
            dec("1 ioctl(3, FICLONE, 4) = 0").ebadf,
            Ebadf::Other(syscalls::DRIVER)
        );
        assert_eq!(
            dec("1 fcntl(3, F_SETLK, {l_type=F_WRLCK}) = 0").ebadf,
            Ebadf::Other(syscalls::FCNTL_OTHER)
        );
        assert_eq!(
            dec("1 sendmsg(3, {msg_name=NULL}, 0) = 1").ebadf,
            Ebadf::Other(syscalls::INNER_FD)
        );
        // pidfd_getfd's target descriptor, in the target's table.
        let g = dec("1 pidfd_getfd(3, -1, 0) = -1 EBADF (Bad file descriptor)");
        assert_eq!(g.remote.map(|r| (r.fd, r.negative)), Some((u32::MAX, true)));
        assert_eq!(
            dec("1 pidfd_open(1234, 0) = 5").op,
            Op::NewFd {
                alloc: Alloc::CreateFirst,
                cloexec: true,
                kind: Kind::Pidfd(1234),
                opath: false
            }
        );
        // Which errnos say nothing about the lookup.
        let at = dec("1 newfstatat(3, \"\", 0x7ffe, 0) = -1 ENOENT (No such file)");
        assert!(at.is_early(Errno::ENOENT) && at.is_early(Errno::EFAULT));
        let rel = dec("1 newfstatat(3, \"x\", 0x7ffe, 0) = -1 ENOENT (No such file)");
        assert!(!rel.is_early(Errno::ENOENT) && rel.proves);
        assert!(rel.is_early(Errno::EPERM) && rel.is_early(Errno::EMFILE));
    }

    #[test]
    fn decodes_table_ops() {
        assert_eq!(
            dec("1 openat(AT_FDCWD, \"/x\", O_RDONLY|O_CLOEXEC) = 3").op,
            Op::NewFd {
                alloc: Alloc::ReserveFirst,
                cloexec: true,
                kind: Kind::File,
                opath: false
            }
        );
        assert_eq!(
            dec("1 pipe2([3, 4], O_CLOEXEC) = 0").op,
            Op::Pair {
                fds: Some([3, 4]),
                cloexec: true,
                reserve_first: false
            }
        );
        assert_eq!(
            dec("1 fcntl(3, F_DUPFD_CLOEXEC, 0) = 4").op,
            Op::DupFd {
                fd: 3,
                from: 0,
                cloexec: true
            }
        );
        assert_eq!(
            dec("1 close_range(3, 4294967295, CLOSE_RANGE_UNSHARE) = 0").op,
            Op::CloseRange {
                first: 3,
                last: u32::MAX,
                flags: 2
            }
        );
        assert_eq!(
            dec("1 clone(child_stack=NULL, flags=CLONE_VM|CLONE_PIDFD|CLONE_VFORK, parent_tid=[13]) = 9").op,
            Op::Clone {
                flags: CloneFlags {
                    files: false,
                    thread: false,
                    vfork: true,
                    pidfd: true
                },
                pidfd: Some(13)
            }
        );
        assert_eq!(
            dec("1 clone3({flags=CLONE_PIDFD, pidfd=0x7ffc, exit_signal=SIGCHLD} => {pidfd=[6]}, 88) = 5").op,
            Op::Clone {
                flags: CloneFlags {
                    pidfd: true,
                    ..Default::default()
                },
                pidfd: Some(6)
            }
        );
        let r = dec(
            "1 recvmsg(11, {msg_control=[{cmsg_len=20, cmsg_level=SOL_SOCKET, cmsg_type=SCM_RIGHTS, cmsg_data=[34, 35]}], msg_flags=MSG_CMSG_CLOEXEC}, MSG_CMSG_CLOEXEC) = 1",
        );
        assert_eq!(
            r.op,
            Op::Recv {
                fds: Some(vec![34, 35]),
                cloexec: true
            }
        );
        assert_eq!(r.uses(), vec![11]);
        assert_eq!(
            dec("1 prlimit64(0, RLIMIT_NOFILE, {rlim_cur=64, rlim_max=64}, NULL) = 0").op,
            Op::Rlimit {
                pid: None,
                new: Some(64),
                old: None
            }
        );
        assert_eq!(dec("1 syscall_0x1b8(1, 2) = 0").op, Op::Unknown);
        // `-X raw` and `-X verbose` print numbers.
        assert_eq!(dec("1 fcntl(3, 0x1) = 0x1").op, Op::GetFd(3));
        assert_eq!(
            dec("1 fcntl(3, 0x1 /* F_GETFD */) = 0x1 (flags FD_CLOEXEC)").op,
            Op::GetFd(3)
        );
        assert_eq!(
            dec("1 fcntl(3, 0x406 /* F_DUPFD_CLOEXEC */, 0) = 4").op,
            Op::DupFd {
                fd: 3,
                from: 0,
                cloexec: true
            }
        );
        assert_eq!(
            dec("1 fcntl(3, 0x2, 0x1) = 0").op,
            Op::SetFd {
                fd: 3,
                cloexec: true,
                ioctl: false
            }
        );
        assert_eq!(
            dec("1 ioctl(3, 0x5451) = 0").op,
            Op::SetFd {
                fd: 3,
                cloexec: true,
                ioctl: true
            }
        );
        assert_eq!(
            dec("1 prlimit64(0, 0x7, {rlim_cur=64, rlim_max=64}, NULL) = 0").op,
            Op::Rlimit {
                pid: None,
                new: Some(64),
                old: None
            }
        );
        assert_eq!(
            dec("1 prlimit64(0, 0x7 /* RLIMIT_NOFILE */, {rlim_cur=64, rlim_max=64}, NULL) = 0").op,
            Op::Rlimit {
                pid: None,
                new: Some(64),
                old: None
            }
        );
        assert_eq!(
            dec("1 prlimit64(0, 0x3, NULL, {rlim_cur=8, rlim_max=8}) = 0").op,
            Op::Plain
        );
        let raw = dec(
            "1 recvmsg(7, {msg_name=0x7ff, msg_namelen=110 => 0, msg_iov=[{iov_base=\"\\10\", iov_len=1}], msg_iovlen=1, msg_control=[{cmsg_len=24, cmsg_level=0x1, cmsg_type=0x1, cmsg_data=[8, 9]}], msg_controllen=24, msg_flags=0}, 0x40000000) = 1",
        );
        assert_eq!(
            raw.op,
            Op::Recv {
                fds: Some(vec![8, 9]),
                cloexec: true
            }
        );
        // SCM_CREDENTIALS (type 2) installs nothing.
        assert_eq!(
            dec("1 recvmsg(7, {msg_control=[{cmsg_len=28, cmsg_level=SOL_SOCKET, cmsg_type=SCM_CREDENTIALS, cmsg_data={pid=1, uid=0, gid=0}}], msg_flags=0}, 0) = 1").op,
            Op::Plain
        );
        let peer = dec("1 ioctl(5, TIOCGPTPEER, 0x80102) = 7");
        assert_eq!(
            peer.op,
            Op::NewFd {
                alloc: Alloc::Ioctl,
                cloexec: true,
                kind: Kind::Anon,
                opath: false
            }
        );
        assert_eq!(peer.uses(), vec![5]);
        for line in [
            "1 ioctl(5, TIOCGPTPEER, O_RDWR|O_NOCTTY) = 7",
            "1 ioctl(5, 0x5441, 0x102) = 7",
        ] {
            assert!(
                matches!(
                    dec(line).op,
                    Op::NewFd {
                        alloc: Alloc::Ioctl,
                        cloexec: false,
                        ..
                    }
                ),
                "{line}"
            );
        }
        for line in [
            "1 ioctl(5, NS_GET_USERNS) = 6",
            "1 ioctl(5, _IOC(_IOC_NONE, 0xb7, 0x2, 0)) = 6",
            "1 ioctl(6, KVM_CREATE_VCPU, 0) = 7",
            "1 ioctl(3, PIDFD_GET_NET_NAMESPACE, 0) = 4",
        ] {
            assert!(
                matches!(
                    dec(line).op,
                    Op::NewFd {
                        alloc: Alloc::Ioctl,
                        cloexec: true,
                        ..
                    }
                ),
                "{line}"
            );
        }
        // Commands that return counts or nothing stay plain.
        for line in [
            "1 ioctl(5, TIOCGPTN, [0]) = 0",
            "1 ioctl(5, _IOC(_IOC_READ, 0x45, 0x6, 0x100), 0x7ff) = 9",
            "1 ioctl(5, NS_GET_NSTYPE) = 1073741824",
        ] {
            assert_eq!(dec(line).op, Op::Plain, "{line}");
        }
        assert_eq!(
            dec("1 newfstatat(3, \"\", {st_mode=S_IFREG}, AT_EMPTY_PATH) = 0").uses(),
            vec![3]
        );
        assert!(
            dec("1 newfstatat(3, \"/abs\", {st_mode=S_IFREG}, 0) = 0")
                .uses()
                .is_empty()
        );
        assert!(
            dec("1 mmap(NULL, 8192, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x1")
                .uses()
                .is_empty()
        );
    }
}

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
//! - **plain calls** with descriptor arguments: a success proves those descriptors open (P15);
//! - **unknown names** (`syscall_0x1b8`, or any name not in [`crate::syscalls`]'s lists): counted as
//!   unsupported, since they might create descriptors the replay cannot see.

use crate::parse::{Call, scan};
use crate::syscalls;

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

/// A decoded call: its op and the descriptors its success proves open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The table effect.
    pub op: Op,
    /// Descriptor arguments (P15).
    pub uses: Vec<u32>,
}

/// Decodes one call.
pub fn decode(call: &Call) -> Decoded {
    let a = call.arg_list();
    let arg = |i: usize| a.get(i).copied().unwrap_or("");
    let fd = |i: usize| scan::fd_arg(arg(i));
    let flag = |i: usize, name: &str| has_cloexec_flag(arg(i), name);
    let plain = |uses: Vec<u32>| Decoded {
        op: Op::Plain,
        uses,
    };
    let new = |alloc, cloexec, kind| Op::NewFd {
        alloc,
        cloexec,
        kind,
        opath: false,
    };
    use Alloc::*;
    let op = match syscalls::canonical(&call.name) {
        "open" => open_op(arg(1)),
        "openat" | "open_by_handle_at" => {
            let d = open_op(arg(2));
            let relative = call.name == "open_by_handle_at" || !is_absolute(arg(1));
            let dirfd = if relative { fd(0) } else { None };
            return Decoded {
                op: d,
                uses: dirfd.into_iter().collect(),
            };
        }
        "openat2" => {
            let flags = scan::field(arg(2), "flags").unwrap_or("");
            let d = open_op(flags);
            let dirfd = if is_absolute(arg(1)) { None } else { fd(0) };
            return Decoded {
                op: d,
                uses: dirfd.into_iter().collect(),
            };
        }
        "creat" => new(ReserveFirst, false, Kind::File),
        "socket" => new(CreateFirst, flag(1, "SOCK_CLOEXEC"), Kind::Anon),
        "accept" => {
            return Decoded {
                op: new(Accept, false, Kind::Anon),
                uses: fd(0).into_iter().collect(),
            };
        }
        "accept4" => {
            return Decoded {
                op: new(Accept, flag(3, "SOCK_CLOEXEC"), Kind::Anon),
                uses: fd(0).into_iter().collect(),
            };
        }
        "eventfd" | "epoll_create" | "inotify_init" => new(CreateFirst, false, Kind::Anon),
        "eventfd2" => new(CreateFirst, flag(1, "EFD_CLOEXEC"), Kind::Anon),
        "epoll_create1" => new(CreateFirst, flag(0, "EPOLL_CLOEXEC"), Kind::Anon),
        "inotify_init1" => new(CreateFirst, flag(0, "IN_CLOEXEC"), Kind::Anon),
        "signalfd" | "signalfd4" => {
            if arg(0).trim() == "-1" {
                let cloexec = call.name == "signalfd4" && flag(3, "SFD_CLOEXEC");
                new(CreateFirst, cloexec, Kind::Anon)
            } else {
                return plain(fd(0).into_iter().collect());
            }
        }
        "timerfd_create" => new(CreateFirst, flag(1, "TFD_CLOEXEC"), Kind::Anon),
        "memfd_create" => new(CreateFirst, flag(1, "MFD_CLOEXEC"), Kind::Anon),
        "memfd_secret" => new(CreateFirst, flag(0, "O_CLOEXEC"), Kind::Anon),
        "userfaultfd" => new(CreateFirst, flag(0, "O_CLOEXEC"), Kind::Anon),
        "fanotify_init" => new(CreateFirst, flag(0, "FAN_CLOEXEC"), Kind::Anon),
        "perf_event_open" => new(CreateFirst, flag(4, "PERF_FLAG_FD_CLOEXEC"), Kind::Anon),
        "open_tree" | "open_tree_attr" => {
            new(CreateFirst, flag(2, "OPEN_TREE_CLOEXEC"), Kind::Anon)
        }
        // A task that dies inside a call whose number strace cannot read any more.
        "???" if matches!(call.ret, crate::parse::Ret::Unknown) => Op::Plain,
        "fsopen" => new(CreateFirst, flag(1, "FSOPEN_CLOEXEC"), Kind::Anon),
        "fspick" => new(CreateFirst, flag(2, "FSPICK_CLOEXEC"), Kind::Anon),
        "fsmount" => new(CreateFirst, flag(1, "FSMOUNT_CLOEXEC"), Kind::Anon),
        "mq_open" => new(ReserveFirst, flag(1, "O_CLOEXEC"), Kind::File),
        "pidfd_open" => new(CreateFirst, true, Kind::Anon),
        "pidfd_getfd" => {
            return Decoded {
                op: new(CreateFirst, true, Kind::Received),
                uses: fd(0).into_iter().collect(),
            };
        }
        "io_uring_setup" => new(CreateFirst, true, Kind::IoUring),
        "landlock_create_ruleset" => {
            if arg(2).contains("VERSION") || arg(2).contains("ERRATA") {
                Op::Plain
            } else {
                new(CreateFirst, true, Kind::Anon)
            }
        }
        "bpf" => {
            let c = arg(0);
            let fd_cmd = c.contains("_CREATE")
                || c.contains("_LOAD")
                || c.contains("GET_FD_BY_ID")
                || c == "BPF_OBJ_GET"
                || c == "BPF_RAW_TRACEPOINT_OPEN";
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
            if let Some(cloexec) = ioctl_new_fd(cmd, arg(2)) {
                return Decoded {
                    op: new(Ioctl, cloexec, Kind::Anon),
                    uses: fd(0).into_iter().collect(),
                };
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
                _ => return plain(fd(0).into_iter().collect()),
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
            let flags_at = if call.name == "recvmsg" { 2 } else { 3 };
            let cloexec = flag(flags_at, "MSG_CMSG_CLOEXEC");
            let uses = fd(0).into_iter().collect();
            match scm_rights(&call.args) {
                Some(fds) if call.ret.is_ok() => {
                    return Decoded {
                        op: Op::Recv { fds, cloexec },
                        uses,
                    };
                }
                _ => return plain(uses),
            }
        }
        "clone" | "clone3" | "fork" | "vfork" => clone_op(&call.name, &call.args, &a),
        "unshare" => Op::Unshare(has_flag_bits(arg(0), "CLONE_FILES", 0x400)),
        "execve" => Op::Exec,
        "execveat" => {
            return Decoded {
                op: Op::Exec,
                uses: fd(0).into_iter().collect(),
            };
        }
        "prlimit64" => {
            if !is_nofile(arg(1)) {
                return plain(vec![]);
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
            let anon = arg(3).contains("MAP_ANONYMOUS");
            let f = if anon { None } else { fd(4) };
            return plain(f.into_iter().collect());
        }
        name => {
            if let Some(pos) = syscalls::fd_positions(name) {
                return plain(uses_at(&a, pos));
            }
            if syscalls::is_known_plain(name) {
                Op::Plain
            } else {
                Op::Unknown
            }
        }
    };
    Decoded { op, uses: vec![] }
}

/// An fd argument as the kernel's `unsigned int fd` sees it: `-1` becomes 4294967295, which
/// no table holds (so the library answers EBADF, as the kernel does).
fn raw_fd(s: &str) -> Option<u32> {
    scan::leading_int(s).map(|v| v as i32 as u32)
}

/// The value of an ioctl command as strace prints it: a name from the table below, a number,
/// or `_IOC(_IOC_NONE, 0xb7, 0x1, 0)`.
fn ioctl_cmd_value(cmd: &str) -> Option<u32> {
    const NAMED: &[(&str, u32)] = &[
        ("TIOCGPTPEER", 0x5441),
        ("TUNGETDEVNETNS", 0x54e3),
        ("SIOCGSKNS", 0x894c),
        ("NS_GET_USERNS", 0xb701),
        ("NS_GET_PARENT", 0xb702),
        ("KVM_CREATE_VM", 0xae01),
        ("KVM_CREATE_VCPU", 0xae41),
        ("KVM_GET_STATS_FD", 0xaece),
        ("VFIO_GROUP_GET_DEVICE_FD", 0x3b6a),
        ("USERFAULTFD_IOC_NEW", 0xaa00),
        ("PIDFD_GET_CGROUP_NAMESPACE", 0xff01),
        ("PIDFD_GET_IPC_NAMESPACE", 0xff02),
        ("PIDFD_GET_MNT_NAMESPACE", 0xff03),
        ("PIDFD_GET_NET_NAMESPACE", 0xff04),
        ("PIDFD_GET_PID_NAMESPACE", 0xff05),
        ("PIDFD_GET_PID_FOR_CHILDREN_NAMESPACE", 0xff06),
        ("PIDFD_GET_TIME_NAMESPACE", 0xff07),
        ("PIDFD_GET_TIME_FOR_CHILDREN_NAMESPACE", 0xff08),
        ("PIDFD_GET_USER_NAMESPACE", 0xff09),
        ("PIDFD_GET_UTS_NAMESPACE", 0xff0a),
    ];
    let cmd = cmd.trim();
    // strace prints a value two names share as `A or B`.
    for name in cmd.split(" or ") {
        if let Some(&(_, v)) = NAMED.iter().find(|(n, _)| *n == name.trim()) {
            return Some(v);
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

/// Whether an ioctl command returns a new descriptor, and if so whether it is close-on-exec.
/// TIOCGPTPEER and USERFAULTFD_IOC_NEW take the new fd's flags as their argument; the
/// namespace, KVM and VFIO commands always set O_CLOEXEC.
fn ioctl_new_fd(cmd: &str, arg: &str) -> Option<bool> {
    match ioctl_cmd_value(cmd)? {
        0x5441 | 0xaa00 => Some(has_cloexec_flag(arg, "O_CLOEXEC")),
        0x54e3 | 0x894c | 0xb701 | 0xb702 | 0xae01 | 0xae41 | 0xaece | 0x3b6a => Some(true),
        0xff01..=0xff0a => Some(true),
        _ => None,
    }
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

fn pair(s: &str) -> Option<[u32; 2]> {
    match scan::fd_array(s)?.as_slice() {
        [a, b] => Some([*a, *b]),
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
        return Decoded {
            op: Op::Plain,
            uses: vec![],
        };
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
        (c, _) => c,
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
            return Decoded {
                op: Op::Plain,
                uses: vec![fd],
            };
        }
    };
    Decoded { op, uses: vec![] }
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

/// The descriptors at `pos` (100 + i: a dirfd at i, counted only when the path after it is
/// relative or empty; a NULL path, as in `utimensat(fd, NULL, ...)`, means the fd itself).
fn uses_at(a: &[&str], pos: &[usize]) -> Vec<u32> {
    let mut out = Vec::new();
    for &p in pos {
        let (i, dirfd) = if p >= 100 {
            (p - 100, true)
        } else {
            (p, false)
        };
        let Some(f) = a.get(i).and_then(|s| scan::fd_arg(s)) else {
            continue;
        };
        if dirfd && a.get(i + 1).is_some_and(|path| is_absolute(path)) {
            continue;
        }
        out.push(f);
    }
    out
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
        assert_eq!(r.uses, vec![11]);
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
        assert_eq!(peer.uses, vec![5]);
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
            dec("1 newfstatat(3, \"\", {st_mode=S_IFREG}, AT_EMPTY_PATH) = 0").uses,
            vec![3]
        );
        assert!(
            dec("1 newfstatat(3, \"/abs\", {st_mode=S_IFREG}, 0) = 0")
                .uses
                .is_empty()
        );
        assert!(
            dec("1 mmap(NULL, 8192, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x1")
                .uses
                .is_empty()
        );
    }
}

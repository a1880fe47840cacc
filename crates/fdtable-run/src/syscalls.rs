//! Every x86_64 system call by number: its name, and what the supervisor does with it
//! ([`Kind`]): let it run untraced (the seccomp filter answers ALLOW), translate the
//! descriptor and path arguments, map the descriptor it returns, run a handler of its own, or
//! refuse it.
//!
//! A number that is not in [`NAMES`] is unknown: the filter traces it and the supervisor
//! refuses it with ENOSYS and a note naming it, because an unknown call may take or create
//! descriptors that nothing here would translate.

/// One descriptor-carrying argument of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// A descriptor.
    Fd,
    /// A directory descriptor whose path is the next argument (`AT_FDCWD` stays as it is).
    DirFd,
    /// A path (relative to the working directory, or to the `DirFd` just before it).
    Path,
}

/// How a call that returns a new descriptor orders its allocation against its other errors
/// (the same classes as the replay's `decode::Alloc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Reserves the fd before anything else can fail (the opens): a full table answers
    /// EMFILE whatever the path.
    ReserveFirst,
    /// Creates the object first; its errors win over EMFILE.
    CreateFirst,
}

/// Where a new descriptor's close-on-exec bit comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cloexec {
    /// Never set.
    Never,
    /// Always set (pidfds, namespace descriptors, ...).
    Always,
    /// Set when argument `arg` has `bit`.
    Flag(u8, u64),
}

/// Calls with a handler of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Special {
    Open,
    Openat,
    Openat2,
    Creat,
    Close,
    Dup,
    Dup2,
    Dup3,
    Fcntl,
    Ioctl,
    CloseRange,
    Pipe,
    Pipe2,
    Socketpair,
    Accept,
    Accept4,
    Signalfd,
    Signalfd4,
    PidfdGetfd,
    LandlockCreateRuleset,
    LandlockAddRule,
    PerfEventOpen,
    Recvmsg,
    Recvmmsg,
    Sendmsg,
    Sendmmsg,
    Poll,
    Ppoll,
    Select,
    Pselect6,
    Getdents,
    Getdents64,
    Lseek,
    Clone,
    Clone3,
    Fork,
    Vfork,
    Execve,
    Execveat,
    Unshare,
    Getrlimit,
    Setrlimit,
    Prlimit64,
    Prctl,
    Waitid,
    Kcmp,
    Setsockopt,
    Getsockopt,
    Fsconfig,
    Seccomp,
    MountRequest,
    ClockFd,
    Keyctl,
}

/// What the supervisor does with a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Takes and returns no descriptor and no path: the filter lets it run untraced.
    Allow,
    /// Translates these arguments; the result needs nothing.
    Plain(&'static [(u8, Arg)]),
    /// Translates these arguments; the result is a new descriptor.
    NewFd {
        /// Descriptor and path arguments.
        args: &'static [(u8, Arg)],
        /// Allocation order.
        order: Order,
        /// Close-on-exec.
        cloexec: Cloexec,
    },
    /// A handler of its own.
    Special(Special),
    /// Refused with this errno, and a note naming the call and why.
    Refuse {
        /// The errno returned.
        errno: i32,
        /// Why it cannot be virtualised.
        why: &'static str,
    },
    /// Not a call this supervisor knows: refused with ENOSYS and a note.
    Unknown,
}

use Arg::*;

const FD0: &[(u8, Arg)] = &[(0, Fd)];
const FD01: &[(u8, Arg)] = &[(0, Fd), (1, Fd)];
const FD02: &[(u8, Arg)] = &[(0, Fd), (2, Fd)];
const P0: &[(u8, Arg)] = &[(0, Path)];
const P01: &[(u8, Arg)] = &[(0, Path), (1, Path)];
const P1: &[(u8, Arg)] = &[(1, Path)];
const AT0: &[(u8, Arg)] = &[(0, DirFd), (1, Path)];
const AT0_AT2: &[(u8, Arg)] = &[(0, DirFd), (1, Path), (2, DirFd), (3, Path)];
const AT1: &[(u8, Arg)] = &[(1, DirFd), (2, Path)];
const NONE: &[(u8, Arg)] = &[];

const O_CLOEXEC: u64 = libc::O_CLOEXEC as u64;

/// The kind of the call named `name`.
pub fn kind_of(name: &str) -> Kind {
    use self::Special as S;
    use Kind::*;
    let new = |args, order, cloexec| NewFd {
        args,
        order,
        cloexec,
    };
    let create = |args, cloexec| new(args, Order::CreateFirst, cloexec);
    match name {
        // Descriptor arguments only.
        "read"
        | "write"
        | "pread64"
        | "pwrite64"
        | "readv"
        | "writev"
        | "preadv"
        | "pwritev"
        | "preadv2"
        | "pwritev2"
        | "fstat"
        | "fstatfs"
        | "fsync"
        | "fdatasync"
        | "ftruncate"
        | "fchmod"
        | "fchown"
        | "fchdir"
        | "flock"
        | "fadvise64"
        | "fallocate"
        | "readahead"
        | "syncfs"
        | "sync_file_range"
        | "fgetxattr"
        | "fsetxattr"
        | "flistxattr"
        | "fremovexattr"
        | "sendto"
        | "recvfrom"
        | "connect"
        | "bind"
        | "listen"
        | "getsockname"
        | "getpeername"
        | "shutdown"
        | "epoll_wait"
        | "epoll_pwait"
        | "epoll_pwait2"
        | "inotify_rm_watch"
        | "timerfd_settime"
        | "timerfd_gettime"
        | "pidfd_send_signal"
        | "process_madvise"
        | "process_mrelease"
        | "setns"
        | "quotactl_fd"
        | "cachestat"
        | "vmsplice"
        | "mq_timedsend"
        | "mq_timedreceive"
        | "mq_notify"
        | "mq_getsetattr"
        | "finit_module"
        | "landlock_restrict_self" => Plain(FD0),
        "epoll_ctl" | "splice" | "copy_file_range" => Plain(FD02),
        "tee" | "sendfile" | "kexec_file_load" => Plain(FD01),
        "mmap" => Plain(&[(4, Fd)]),
        "inotify_add_watch" => Plain(&[(0, Fd), (1, Path)]),
        "fanotify_mark" => Plain(&[(0, Fd), (3, DirFd), (4, Path)]),
        // Paths only.
        "stat" | "lstat" | "access" | "readlink" | "chdir" | "truncate" | "chmod" | "chown"
        | "lchown" | "utime" | "utimes" | "statfs" | "getxattr" | "lgetxattr" | "setxattr"
        | "lsetxattr" | "listxattr" | "llistxattr" | "removexattr" | "lremovexattr" | "mkdir"
        | "rmdir" | "unlink" | "mknod" | "chroot" | "acct" | "swapon" | "swapoff" | "uselib"
        | "umount2" => Plain(P0),
        "rename" | "link" | "pivot_root" | "mount" => Plain(P01),
        // symlink's first argument is the link's contents, not a path that is resolved.
        "symlink" | "quotactl" => Plain(P1),
        // A directory descriptor and its path.
        "newfstatat" | "statx" | "faccessat" | "faccessat2" | "fchmodat" | "fchmodat2"
        | "fchownat" | "mkdirat" | "mknodat" | "unlinkat" | "readlinkat" | "utimensat"
        | "futimesat" | "name_to_handle_at" | "mount_setattr" | "setxattrat" | "getxattrat"
        | "listxattrat" | "removexattrat" | "file_getattr" | "file_setattr" => Plain(AT0),
        "renameat" | "renameat2" | "linkat" | "move_mount" => Plain(AT0_AT2),
        "symlinkat" => Plain(AT1),
        // Calls that return a new descriptor.
        "socket" => create(NONE, Cloexec::Flag(1, O_CLOEXEC)),
        "eventfd" | "epoll_create" | "inotify_init" => create(NONE, Cloexec::Never),
        "eventfd2" => create(NONE, Cloexec::Flag(1, O_CLOEXEC)),
        "epoll_create1" | "inotify_init1" | "memfd_secret" | "userfaultfd" => {
            create(NONE, Cloexec::Flag(0, O_CLOEXEC))
        }
        "timerfd_create" => create(NONE, Cloexec::Flag(1, O_CLOEXEC)),
        "memfd_create" => create(NONE, Cloexec::Flag(1, 1)),
        "pidfd_open" => create(NONE, Cloexec::Always),
        "fsopen" => create(NONE, Cloexec::Flag(1, 1)),
        "fspick" => create(AT0, Cloexec::Flag(2, 1)),
        "fsmount" => create(FD0, Cloexec::Flag(1, 1)),
        "open_tree" | "open_tree_attr" => create(AT0, Cloexec::Flag(2, O_CLOEXEC)),
        "mq_open" => new(NONE, Order::ReserveFirst, Cloexec::Flag(1, O_CLOEXEC)),
        "open_by_handle_at" => new(FD0, Order::ReserveFirst, Cloexec::Flag(2, O_CLOEXEC)),
        // Handlers of their own.
        "open" => Special(S::Open),
        "openat" => Special(S::Openat),
        "openat2" => Special(S::Openat2),
        "creat" => Special(S::Creat),
        "close" => Special(S::Close),
        "dup" => Special(S::Dup),
        "dup2" => Special(S::Dup2),
        "dup3" => Special(S::Dup3),
        "fcntl" => Special(S::Fcntl),
        "ioctl" => Special(S::Ioctl),
        "close_range" => Special(S::CloseRange),
        "pipe" => Special(S::Pipe),
        "pipe2" => Special(S::Pipe2),
        "socketpair" => Special(S::Socketpair),
        "accept" => Special(S::Accept),
        "accept4" => Special(S::Accept4),
        "signalfd" => Special(S::Signalfd),
        "signalfd4" => Special(S::Signalfd4),
        "pidfd_getfd" => Special(S::PidfdGetfd),
        "landlock_create_ruleset" => Special(S::LandlockCreateRuleset),
        "landlock_add_rule" => Special(S::LandlockAddRule),
        "perf_event_open" => Special(S::PerfEventOpen),
        "recvmsg" => Special(S::Recvmsg),
        "recvmmsg" => Special(S::Recvmmsg),
        "sendmsg" => Special(S::Sendmsg),
        "sendmmsg" => Special(S::Sendmmsg),
        "poll" => Special(S::Poll),
        "ppoll" => Special(S::Ppoll),
        "select" => Special(S::Select),
        "pselect6" => Special(S::Pselect6),
        "getdents" => Special(S::Getdents),
        "getdents64" => Special(S::Getdents64),
        "lseek" => Special(S::Lseek),
        "clone" => Special(S::Clone),
        "clone3" => Special(S::Clone3),
        "fork" => Special(S::Fork),
        "vfork" => Special(S::Vfork),
        "execve" => Special(S::Execve),
        "execveat" => Special(S::Execveat),
        "unshare" => Special(S::Unshare),
        "getrlimit" => Special(S::Getrlimit),
        "setrlimit" => Special(S::Setrlimit),
        "prlimit64" => Special(S::Prlimit64),
        "prctl" => Special(S::Prctl),
        "waitid" => Special(S::Waitid),
        "kcmp" => Special(S::Kcmp),
        "setsockopt" => Special(S::Setsockopt),
        "getsockopt" => Special(S::Getsockopt),
        "fsconfig" => Special(S::Fsconfig),
        "seccomp" => Special(S::Seccomp),
        "statmount" | "listmount" => Special(S::MountRequest),
        // A dynamic clock's id carries a descriptor (FD_TO_CLOCKID, /dev/ptp*); the filter
        // traces only such ids. clock_nanosleep and timer_create answer EOPNOTSUPP to a
        // dynamic clock before looking at its descriptor: they stay plain.
        "clock_gettime" | "clock_settime" | "clock_getres" | "clock_adjtime" => Special(S::ClockFd),
        // KEYCTL_WATCH_KEY's watch queue descriptor; the filter traces only that command.
        "keyctl" => Special(S::Keyctl),
        // Refused: what cannot be virtualised.
        "io_uring_setup" | "io_uring_enter" | "io_uring_register" => Refuse {
            errno: libc::ENOSYS,
            why: "io_uring installs and uses descriptors inside the kernel, without a system call the supervisor could translate",
        },
        "io_setup" | "io_submit" => Refuse {
            errno: libc::ENOSYS,
            why: "Linux AIO control blocks carry descriptors the kernel reads asynchronously",
        },
        "bpf" => Refuse {
            errno: libc::ENOSYS,
            why: "BPF attributes and maps carry descriptors of many kinds",
        },
        "fanotify_init" => Refuse {
            errno: libc::ENOSYS,
            why: "fanotify installs a descriptor for every event it delivers through read()",
        },
        "ptrace" => Refuse {
            errno: libc::EPERM,
            why: "every process under fdtable run is already traced by the supervisor",
        },
        // Calls that the kernel does not implement any more, or never did.
        "afs_syscall" | "create_module" | "epoll_ctl_old" | "epoll_wait_old"
        | "get_kernel_syms" | "getpmsg" | "putpmsg" | "nfsservctl" | "query_module"
        | "security" | "tuxcall" | "vserver" | "_sysctl" | "lookup_dcookie" => Allow,
        _ => Allow,
    }
}

/// The descriptor a dynamic clock id names (`CLOCKID_TO_FD`): a negative id whose low three
/// bits are `CLOCKFD` (3). Other negative ids are CPU clocks of a process or thread, which
/// carry a pid.
pub fn clock_fd(id: i32) -> Option<u32> {
    (id < 0 && id & 7 == 3).then_some(!(id >> 3) as u32)
}

/// The largest descriptor a clock id can carry (28 bits).
pub const CLOCK_FD_MAX: u32 = (1 << 28) - 1;

/// The clock id of descriptor `fd` (`FD_TO_CLOCKID`), for `fd <= CLOCK_FD_MAX`.
pub fn fd_clock(fd: u32) -> i32 {
    ((!fd) << 3 | 3) as i32
}

/// Whether call `name` follows a symbolic link in the last component of its path argument
/// `i` (`readlink`, `lstat`, `unlink`, an `O_NOFOLLOW` open do not; the `*at` calls as their
/// flags say).
pub fn follows_last(name: &str, args: &[u64; 6], i: usize) -> bool {
    const AT_SYMLINK_NOFOLLOW: u64 = 0x100;
    const AT_SYMLINK_FOLLOW: u64 = 0x400;
    const O_NOFOLLOW: u64 = libc::O_NOFOLLOW as u64;
    let unless = |a: usize, bit: u64| args[a] & bit == 0;
    match name {
        "readlink" | "readlinkat" | "lstat" | "lchown" | "lgetxattr" | "lsetxattr"
        | "llistxattr" | "lremovexattr" | "unlink" | "unlinkat" | "rmdir" | "rename"
        | "renameat" | "renameat2" | "link" | "symlink" | "symlinkat" | "mkdir" | "mkdirat"
        | "mknod" | "mknodat" => false,
        "newfstatat" | "utimensat" | "faccessat2" | "fchmodat2" => unless(3, AT_SYMLINK_NOFOLLOW),
        "statx" | "getxattrat" | "setxattrat" | "listxattrat" | "removexattrat" | "open_tree"
        | "open_tree_attr" | "mount_setattr" => unless(2, AT_SYMLINK_NOFOLLOW),
        "fchownat" | "execveat" | "file_getattr" | "file_setattr" => unless(4, AT_SYMLINK_NOFOLLOW),
        "name_to_handle_at" => !unless(4, AT_SYMLINK_FOLLOW),
        "linkat" => i == 1 && !unless(4, AT_SYMLINK_FOLLOW),
        // MOVE_MOUNT_F_SYMLINKS, MOVE_MOUNT_T_SYMLINKS.
        "move_mount" => !unless(4, if i == 1 { 0x1 } else { 0x10 }),
        // FSPICK_SYMLINK_NOFOLLOW.
        "fspick" => unless(2, 0x2),
        // IN_DONT_FOLLOW.
        "inotify_add_watch" => unless(2, 0x0200_0000),
        // FAN_MARK_DONT_FOLLOW.
        "fanotify_mark" => unless(1, 0x4),
        // UMOUNT_NOFOLLOW.
        "umount2" => unless(1, 0x8),
        "open" => unless(1, O_NOFOLLOW),
        "openat" => unless(2, O_NOFOLLOW),
        _ => true,
    }
}

/// Calls whose numbers the kernel knows and that take or return no descriptor or path. Kept
/// as an explicit list (checked by a test against [`NAMES`]) so that a call added to the
/// table without a decision is noticed.
const PLAIN: &str = "
    mprotect munmap brk rt_sigaction rt_sigprocmask rt_sigreturn sched_yield
    mremap msync mincore madvise shmget shmat shmctl pause nanosleep getitimer alarm
    setitimer getpid exit wait4 kill uname semget semop semctl shmdt msgget msgsnd msgrcv
    msgctl getcwd gettimeofday getrusage sysinfo times getuid syslog getgid setuid setgid
    geteuid getegid setpgid getppid getpgrp setsid setreuid setregid getgroups setgroups
    setresuid getresuid setresgid getresgid getpgid setfsuid setfsgid getsid capget capset
    rt_sigpending rt_sigtimedwait rt_sigqueueinfo rt_sigsuspend sigaltstack personality
    ustat sysfs getpriority setpriority sched_setparam sched_getparam sched_setscheduler
    sched_getscheduler sched_get_priority_max sched_get_priority_min sched_rr_get_interval
    mlock munlock mlockall munlockall vhangup modify_ldt arch_prctl adjtimex sync
    settimeofday reboot sethostname setdomainname iopl ioperm init_module delete_module
    gettid time futex sched_setaffinity sched_getaffinity set_thread_area io_destroy
    io_getevents io_cancel get_thread_area remap_file_pages set_tid_address
    restart_syscall semtimedop timer_create timer_settime timer_gettime timer_getoverrun
    timer_delete clock_nanosleep exit_group tgkill
    mbind set_mempolicy get_mempolicy mq_unlink kexec_load add_key request_key
    ioprio_set ioprio_get migrate_pages set_robust_list get_robust_list move_pages
    getcpu rt_tgsigqueueinfo sched_setattr sched_getattr getrandom
    membarrier mlock2 pkey_mprotect pkey_alloc pkey_free io_pgetevents rseq uretprobe
    uprobe process_vm_readv process_vm_writev futex_waitv set_mempolicy_home_node
    map_shadow_stack futex_wake futex_wait futex_requeue lsm_get_self_attr umask
    lsm_set_self_attr lsm_list_modules mseal tkill
";

/// Whether `name` is one of the calls known to take and return no descriptor or path.
pub fn is_plain(name: &str) -> bool {
    PLAIN.split_ascii_whitespace().any(|n| n == name)
}

/// The name of call `nr`, if this supervisor knows it.
pub fn name(nr: u64) -> Option<&'static str> {
    NAMES
        .binary_search_by_key(&nr, |&(n, _)| n as u64)
        .ok()
        .map(|i| NAMES[i].1)
}

/// The kind of call `nr`: a number that is not in [`NAMES`] is [`Kind::Unknown`], and so is a
/// known name that [`kind_of`] leaves at `Allow` without being in the plain list.
pub fn kind(nr: u64) -> Kind {
    match name(nr) {
        None => Kind::Unknown,
        Some(n) => match kind_of(n) {
            Kind::Allow if !is_plain(n) && !is_obsolete(n) => Kind::Unknown,
            k => k,
        },
    }
}

fn is_obsolete(name: &str) -> bool {
    matches!(
        name,
        "afs_syscall"
            | "create_module"
            | "epoll_ctl_old"
            | "epoll_wait_old"
            | "get_kernel_syms"
            | "getpmsg"
            | "putpmsg"
            | "nfsservctl"
            | "query_module"
            | "security"
            | "tuxcall"
            | "vserver"
            | "_sysctl"
            | "lookup_dcookie"
    )
}

/// The table: one past the largest known number.
pub const NR_MAX: u64 = 470;

/// Every x86_64 call number the supervisor knows, with its name: the kernel headers' list
/// (0–334, 424–450) and the calls added since (335, 336, 451–469).
pub const NAMES: &[(u32, &str)] = &[
    (0, "read"),
    (1, "write"),
    (2, "open"),
    (3, "close"),
    (4, "stat"),
    (5, "fstat"),
    (6, "lstat"),
    (7, "poll"),
    (8, "lseek"),
    (9, "mmap"),
    (10, "mprotect"),
    (11, "munmap"),
    (12, "brk"),
    (13, "rt_sigaction"),
    (14, "rt_sigprocmask"),
    (15, "rt_sigreturn"),
    (16, "ioctl"),
    (17, "pread64"),
    (18, "pwrite64"),
    (19, "readv"),
    (20, "writev"),
    (21, "access"),
    (22, "pipe"),
    (23, "select"),
    (24, "sched_yield"),
    (25, "mremap"),
    (26, "msync"),
    (27, "mincore"),
    (28, "madvise"),
    (29, "shmget"),
    (30, "shmat"),
    (31, "shmctl"),
    (32, "dup"),
    (33, "dup2"),
    (34, "pause"),
    (35, "nanosleep"),
    (36, "getitimer"),
    (37, "alarm"),
    (38, "setitimer"),
    (39, "getpid"),
    (40, "sendfile"),
    (41, "socket"),
    (42, "connect"),
    (43, "accept"),
    (44, "sendto"),
    (45, "recvfrom"),
    (46, "sendmsg"),
    (47, "recvmsg"),
    (48, "shutdown"),
    (49, "bind"),
    (50, "listen"),
    (51, "getsockname"),
    (52, "getpeername"),
    (53, "socketpair"),
    (54, "setsockopt"),
    (55, "getsockopt"),
    (56, "clone"),
    (57, "fork"),
    (58, "vfork"),
    (59, "execve"),
    (60, "exit"),
    (61, "wait4"),
    (62, "kill"),
    (63, "uname"),
    (64, "semget"),
    (65, "semop"),
    (66, "semctl"),
    (67, "shmdt"),
    (68, "msgget"),
    (69, "msgsnd"),
    (70, "msgrcv"),
    (71, "msgctl"),
    (72, "fcntl"),
    (73, "flock"),
    (74, "fsync"),
    (75, "fdatasync"),
    (76, "truncate"),
    (77, "ftruncate"),
    (78, "getdents"),
    (79, "getcwd"),
    (80, "chdir"),
    (81, "fchdir"),
    (82, "rename"),
    (83, "mkdir"),
    (84, "rmdir"),
    (85, "creat"),
    (86, "link"),
    (87, "unlink"),
    (88, "symlink"),
    (89, "readlink"),
    (90, "chmod"),
    (91, "fchmod"),
    (92, "chown"),
    (93, "fchown"),
    (94, "lchown"),
    (95, "umask"),
    (96, "gettimeofday"),
    (97, "getrlimit"),
    (98, "getrusage"),
    (99, "sysinfo"),
    (100, "times"),
    (101, "ptrace"),
    (102, "getuid"),
    (103, "syslog"),
    (104, "getgid"),
    (105, "setuid"),
    (106, "setgid"),
    (107, "geteuid"),
    (108, "getegid"),
    (109, "setpgid"),
    (110, "getppid"),
    (111, "getpgrp"),
    (112, "setsid"),
    (113, "setreuid"),
    (114, "setregid"),
    (115, "getgroups"),
    (116, "setgroups"),
    (117, "setresuid"),
    (118, "getresuid"),
    (119, "setresgid"),
    (120, "getresgid"),
    (121, "getpgid"),
    (122, "setfsuid"),
    (123, "setfsgid"),
    (124, "getsid"),
    (125, "capget"),
    (126, "capset"),
    (127, "rt_sigpending"),
    (128, "rt_sigtimedwait"),
    (129, "rt_sigqueueinfo"),
    (130, "rt_sigsuspend"),
    (131, "sigaltstack"),
    (132, "utime"),
    (133, "mknod"),
    (134, "uselib"),
    (135, "personality"),
    (136, "ustat"),
    (137, "statfs"),
    (138, "fstatfs"),
    (139, "sysfs"),
    (140, "getpriority"),
    (141, "setpriority"),
    (142, "sched_setparam"),
    (143, "sched_getparam"),
    (144, "sched_setscheduler"),
    (145, "sched_getscheduler"),
    (146, "sched_get_priority_max"),
    (147, "sched_get_priority_min"),
    (148, "sched_rr_get_interval"),
    (149, "mlock"),
    (150, "munlock"),
    (151, "mlockall"),
    (152, "munlockall"),
    (153, "vhangup"),
    (154, "modify_ldt"),
    (155, "pivot_root"),
    (156, "_sysctl"),
    (157, "prctl"),
    (158, "arch_prctl"),
    (159, "adjtimex"),
    (160, "setrlimit"),
    (161, "chroot"),
    (162, "sync"),
    (163, "acct"),
    (164, "settimeofday"),
    (165, "mount"),
    (166, "umount2"),
    (167, "swapon"),
    (168, "swapoff"),
    (169, "reboot"),
    (170, "sethostname"),
    (171, "setdomainname"),
    (172, "iopl"),
    (173, "ioperm"),
    (174, "create_module"),
    (175, "init_module"),
    (176, "delete_module"),
    (177, "get_kernel_syms"),
    (178, "query_module"),
    (179, "quotactl"),
    (180, "nfsservctl"),
    (181, "getpmsg"),
    (182, "putpmsg"),
    (183, "afs_syscall"),
    (184, "tuxcall"),
    (185, "security"),
    (186, "gettid"),
    (187, "readahead"),
    (188, "setxattr"),
    (189, "lsetxattr"),
    (190, "fsetxattr"),
    (191, "getxattr"),
    (192, "lgetxattr"),
    (193, "fgetxattr"),
    (194, "listxattr"),
    (195, "llistxattr"),
    (196, "flistxattr"),
    (197, "removexattr"),
    (198, "lremovexattr"),
    (199, "fremovexattr"),
    (200, "tkill"),
    (201, "time"),
    (202, "futex"),
    (203, "sched_setaffinity"),
    (204, "sched_getaffinity"),
    (205, "set_thread_area"),
    (206, "io_setup"),
    (207, "io_destroy"),
    (208, "io_getevents"),
    (209, "io_submit"),
    (210, "io_cancel"),
    (211, "get_thread_area"),
    (212, "lookup_dcookie"),
    (213, "epoll_create"),
    (214, "epoll_ctl_old"),
    (215, "epoll_wait_old"),
    (216, "remap_file_pages"),
    (217, "getdents64"),
    (218, "set_tid_address"),
    (219, "restart_syscall"),
    (220, "semtimedop"),
    (221, "fadvise64"),
    (222, "timer_create"),
    (223, "timer_settime"),
    (224, "timer_gettime"),
    (225, "timer_getoverrun"),
    (226, "timer_delete"),
    (227, "clock_settime"),
    (228, "clock_gettime"),
    (229, "clock_getres"),
    (230, "clock_nanosleep"),
    (231, "exit_group"),
    (232, "epoll_wait"),
    (233, "epoll_ctl"),
    (234, "tgkill"),
    (235, "utimes"),
    (236, "vserver"),
    (237, "mbind"),
    (238, "set_mempolicy"),
    (239, "get_mempolicy"),
    (240, "mq_open"),
    (241, "mq_unlink"),
    (242, "mq_timedsend"),
    (243, "mq_timedreceive"),
    (244, "mq_notify"),
    (245, "mq_getsetattr"),
    (246, "kexec_load"),
    (247, "waitid"),
    (248, "add_key"),
    (249, "request_key"),
    (250, "keyctl"),
    (251, "ioprio_set"),
    (252, "ioprio_get"),
    (253, "inotify_init"),
    (254, "inotify_add_watch"),
    (255, "inotify_rm_watch"),
    (256, "migrate_pages"),
    (257, "openat"),
    (258, "mkdirat"),
    (259, "mknodat"),
    (260, "fchownat"),
    (261, "futimesat"),
    (262, "newfstatat"),
    (263, "unlinkat"),
    (264, "renameat"),
    (265, "linkat"),
    (266, "symlinkat"),
    (267, "readlinkat"),
    (268, "fchmodat"),
    (269, "faccessat"),
    (270, "pselect6"),
    (271, "ppoll"),
    (272, "unshare"),
    (273, "set_robust_list"),
    (274, "get_robust_list"),
    (275, "splice"),
    (276, "tee"),
    (277, "sync_file_range"),
    (278, "vmsplice"),
    (279, "move_pages"),
    (280, "utimensat"),
    (281, "epoll_pwait"),
    (282, "signalfd"),
    (283, "timerfd_create"),
    (284, "eventfd"),
    (285, "fallocate"),
    (286, "timerfd_settime"),
    (287, "timerfd_gettime"),
    (288, "accept4"),
    (289, "signalfd4"),
    (290, "eventfd2"),
    (291, "epoll_create1"),
    (292, "dup3"),
    (293, "pipe2"),
    (294, "inotify_init1"),
    (295, "preadv"),
    (296, "pwritev"),
    (297, "rt_tgsigqueueinfo"),
    (298, "perf_event_open"),
    (299, "recvmmsg"),
    (300, "fanotify_init"),
    (301, "fanotify_mark"),
    (302, "prlimit64"),
    (303, "name_to_handle_at"),
    (304, "open_by_handle_at"),
    (305, "clock_adjtime"),
    (306, "syncfs"),
    (307, "sendmmsg"),
    (308, "setns"),
    (309, "getcpu"),
    (310, "process_vm_readv"),
    (311, "process_vm_writev"),
    (312, "kcmp"),
    (313, "finit_module"),
    (314, "sched_setattr"),
    (315, "sched_getattr"),
    (316, "renameat2"),
    (317, "seccomp"),
    (318, "getrandom"),
    (319, "memfd_create"),
    (320, "kexec_file_load"),
    (321, "bpf"),
    (322, "execveat"),
    (323, "userfaultfd"),
    (324, "membarrier"),
    (325, "mlock2"),
    (326, "copy_file_range"),
    (327, "preadv2"),
    (328, "pwritev2"),
    (329, "pkey_mprotect"),
    (330, "pkey_alloc"),
    (331, "pkey_free"),
    (332, "statx"),
    (333, "io_pgetevents"),
    (334, "rseq"),
    (335, "uretprobe"),
    (336, "uprobe"),
    (424, "pidfd_send_signal"),
    (425, "io_uring_setup"),
    (426, "io_uring_enter"),
    (427, "io_uring_register"),
    (428, "open_tree"),
    (429, "move_mount"),
    (430, "fsopen"),
    (431, "fsconfig"),
    (432, "fsmount"),
    (433, "fspick"),
    (434, "pidfd_open"),
    (435, "clone3"),
    (436, "close_range"),
    (437, "openat2"),
    (438, "pidfd_getfd"),
    (439, "faccessat2"),
    (440, "process_madvise"),
    (441, "epoll_pwait2"),
    (442, "mount_setattr"),
    (443, "quotactl_fd"),
    (444, "landlock_create_ruleset"),
    (445, "landlock_add_rule"),
    (446, "landlock_restrict_self"),
    (447, "memfd_secret"),
    (448, "process_mrelease"),
    (449, "futex_waitv"),
    (450, "set_mempolicy_home_node"),
    (451, "cachestat"),
    (452, "fchmodat2"),
    (453, "map_shadow_stack"),
    (454, "futex_wake"),
    (455, "futex_wait"),
    (456, "futex_requeue"),
    (457, "statmount"),
    (458, "listmount"),
    (459, "lsm_get_self_attr"),
    (460, "lsm_set_self_attr"),
    (461, "lsm_list_modules"),
    (462, "mseal"),
    (463, "setxattrat"),
    (464, "getxattrat"),
    (465, "listxattrat"),
    (466, "removexattrat"),
    (467, "open_tree_attr"),
    (468, "file_getattr"),
    (469, "file_setattr"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_call_has_a_decision() {
        let mut undecided = Vec::new();
        for &(nr, name) in NAMES {
            if kind(nr as u64) == Kind::Unknown {
                undecided.push(name);
            }
        }
        assert!(undecided.is_empty(), "no decision for {undecided:?}");
        // Numbers are unique and ascending (binary search).
        assert!(NAMES.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(name(0), Some("read"));
        assert_eq!(name(469), Some("file_setattr"));
        assert_eq!(kind(470), Kind::Unknown);
        assert_eq!(kind(400), Kind::Unknown);
    }

    #[test]
    fn dynamic_clock_ids_carry_descriptors() {
        // FD_TO_CLOCKID(fd) = ((~fd) << 3) | CLOCKFD.
        for fd in [0u32, 1, 3, 5, 1000, 65535, CLOCK_FD_MAX] {
            let id = fd_clock(fd);
            assert!(id < 0, "{fd}");
            assert_eq!(id, ((!(fd as i32)) << 3) | 3);
            assert_eq!(clock_fd(id), Some(fd), "{fd}");
        }
        assert_eq!(fd_clock(3), -29);
        // CLOCK_MONOTONIC and friends, CPU clocks of a process (MAKE_PROCESS_CPUCLOCK) or a
        // thread (CPUCLOCK_PERTHREAD_MASK), and the invalid low bits 7: no descriptor.
        for id in [0, 1, 4, 7, 11] {
            assert_eq!(clock_fd(id), None, "{id}");
        }
        for pid in [1, 42, 4_000_000] {
            for which in [0, 1, 2, 4, 5, 6, 7] {
                assert_eq!(clock_fd(((!pid) << 3) | which), None, "{pid} {which}");
            }
        }
        assert_eq!(clock_fd(-1), None);
        assert_eq!(clock_fd(i32::MIN | 3), Some(CLOCK_FD_MAX));
    }

    #[test]
    fn numbers_match_libc() {
        for (n, want) in [
            (libc::SYS_openat, "openat"),
            (libc::SYS_close_range, "close_range"),
            (libc::SYS_pidfd_getfd, "pidfd_getfd"),
            (libc::SYS_clone3, "clone3"),
            (libc::SYS_io_uring_setup, "io_uring_setup"),
            (libc::SYS_fchmodat2, "fchmodat2"),
            (libc::SYS_mseal, "mseal"),
            (libc::SYS_recvmmsg, "recvmmsg"),
            (libc::SYS_epoll_pwait2, "epoll_pwait2"),
        ] {
            assert_eq!(name(n as u64), Some(want));
        }
    }

    #[test]
    fn whatever_the_replay_knows_as_a_descriptor_call_is_traced() {
        use fdtable_replay::syscalls as replay;
        for &(nr, name) in NAMES {
            let k = kind(nr as u64);
            if replay::may_touch_table(name) || replay::fd_positions(name).is_some() {
                assert_ne!(
                    k,
                    Kind::Allow,
                    "{name} changes a table or takes descriptors"
                );
            }
            if k == Kind::Allow && !is_obsolete(name) {
                // What we let run untraced, the replay knows as a call with no table effect
                // (uprobe, 6.18, is newer than its lists).
                assert!(replay::is_known_plain(name) || name == "uprobe", "{name}");
            }
        }
    }

    #[test]
    fn descriptor_arguments_match_the_replays_positions() {
        use fdtable_replay::syscalls as replay;
        for &(nr, name) in NAMES {
            let (Some(theirs), Kind::Plain(ours)) = (replay::fd_positions(name), kind(nr as u64))
            else {
                continue;
            };
            for &p in theirs {
                // 100 + i: a directory descriptor at i.
                let (i, want) = if p >= 100 {
                    (p - 100, Arg::DirFd)
                } else {
                    (p, Arg::Fd)
                };
                assert!(
                    ours.contains(&(i as u8, want)),
                    "{name}: argument {i} should be {want:?} ({ours:?})"
                );
            }
        }
    }
}

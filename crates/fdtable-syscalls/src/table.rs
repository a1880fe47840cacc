//! The table: every x86_64 call number Linux 6.19 has (0-336, 424-470), in order.

use crate::consts::*;
use crate::{
    ACCESS_MODE, Cloexec, Cond, Count, Create, Ebadf, Effect, FdArg, INNER_FD, IO_URING, Later,
    Lookup, NOT_PIDFD, Order, Rlimit, Syscall, UNMODELLED, Uses,
};
use Effect::None as Nothing;
use Lookup::{NoPath, Raw};

const fn s(nr: u32, name: &'static str, effect: Effect, uses: Uses) -> Syscall {
    Syscall {
        nr,
        name,
        effect,
        uses,
    }
}

/// A call with no table effect and no descriptor argument.
const fn p(nr: u32, name: &'static str) -> Syscall {
    s(nr, name, Nothing, Uses::NONE)
}

/// A call with no table effect that looks descriptors up.
const fn uses(nr: u32, name: &'static str, uses: Uses) -> Syscall {
    s(nr, name, Nothing, uses)
}

const fn u(fds: &'static [FdArg], lookup: Lookup, ebadf: Ebadf, proves: bool) -> Uses {
    Uses {
        fds,
        lookup,
        ebadf,
        proves,
    }
}

const fn fd(arg: u8) -> FdArg {
    FdArg { arg, dirfd: false }
}

const fn dirfd(arg: u8) -> FdArg {
    FdArg { arg, dirfd: true }
}

const A0: &[FdArg] = &[fd(0)];
const A01: &[FdArg] = &[fd(0), fd(1)];
const A02: &[FdArg] = &[fd(0), fd(2)];
const D0: &[FdArg] = &[dirfd(0)];
const D1: &[FdArg] = &[dirfd(1)];
const D0D2: &[FdArg] = &[dirfd(0), dirfd(2)];

// fs/read_write.c: `fdget_pos`/`fdget`, then FMODE_READ/FMODE_WRITE (EBADF too).
const RW: Uses = u(A0, NoPath, Ebadf::Other(ACCESS_MODE), true);
const STRICT: Uses = u(A0, NoPath, Ebadf::Strict, true);
// vfs_fstat, fd_statfs and fchdir use `fdget_raw`: O_PATH will do.
const RAW: Uses = u(A0, Raw, Ebadf::Strict, true);
// SCM_RIGHTS descriptors; BPF program descriptors in socket options.
const INNER: Uses = u(A0, NoPath, Ebadf::Other(INNER_FD), true);
// pidfd_pid: a descriptor that is no pidfd is EBADF.
const PIDFD: Uses = u(A0, NoPath, Ebadf::Other(NOT_PIDFD), true);
// Path walks start at the dirfd with `fdget_raw` (fs/namei.c path_init).
const AT: Uses = u(D0, Raw, Ebadf::Strict, true);
// Two walks: the first one's errors come before the second dirfd is looked up.
const AT2: Uses = u(D0D2, Raw, Ebadf::Strict, false);
// With an empty path these look the descriptor itself up; not modelled.
const ATX: Uses = u(D0, Raw, Ebadf::Other(UNMODELLED), false);
/// Looked up, what EBADF says not modelled.
const NM: Uses = u(A0, NoPath, Ebadf::NotModelled, false);
const NM_RAW: Uses = u(A0, Raw, Ebadf::NotModelled, false);
const NM_AT: Uses = u(D0, Raw, Ebadf::NotModelled, false);

const fn create(order: Order, cloexec: Cloexec) -> Create {
    Create {
        order,
        count: Count::One,
        cloexec,
        later: Later::Nothing,
    }
}

const fn flag(arg: u8, bit: u64, name: &'static str) -> Cloexec {
    Cloexec::Flag { arg, bit, name }
}

const fn new(order: Order, cloexec: Cloexec) -> Effect {
    Effect::Create(create(order, cloexec))
}

/// The opens: the path is copied, then the number reserved (`get_unused_fd_flags`), then the
/// file opened.
const fn open(cloexec: Cloexec) -> Effect {
    new(Order::ReserveFirst, cloexec)
}

/// Objects created before their descriptor is allocated.
const fn obj(cloexec: Cloexec) -> Effect {
    new(Order::CreateFirst, cloexec)
}

const fn later(cloexec: Cloexec, later: Later) -> Effect {
    Effect::Create(Create {
        order: Order::CreateFirst,
        count: Count::One,
        cloexec,
        later,
    })
}

const fn pair(order: Order, at: u8, cloexec: Cloexec) -> Effect {
    Effect::Create(Create {
        order,
        count: Count::Pair(at),
        cloexec,
        later: Later::Nothing,
    })
}

const fn rlimit(pid: Option<u8>, resource: u8, new: Option<u8>, old: Option<u8>) -> Effect {
    Effect::Rlimit(Rlimit {
        pid,
        resource,
        new,
        old,
    })
}

const SOCK_CLOEXEC: Cloexec = flag(1, O_CLOEXEC, "SOCK_CLOEXEC");

/// Every x86_64 call of Linux 6.18, ascending by number.
pub const SYSCALLS: &[Syscall] = &[
    uses(0, "read", RW),
    uses(1, "write", RW),
    s(2, "open", open(flag(1, O_CLOEXEC, "O_CLOEXEC")), Uses::NONE),
    s(3, "close", Effect::Close, Uses::NONE),
    p(4, "stat"),
    uses(5, "fstat", RAW),
    p(6, "lstat"),
    p(7, "poll"),
    uses(8, "lseek", STRICT),
    // ksys_mmap_pgoff: `fget` of the descriptor unless MAP_ANONYMOUS.
    uses(9, "mmap", u(&[fd(4)], NoPath, Ebadf::NotModelled, true)),
    p(10, "mprotect"),
    p(11, "munmap"),
    p(12, "brk"),
    p(13, "rt_sigaction"),
    p(14, "rt_sigprocmask"),
    p(15, "rt_sigreturn"),
    s(
        16,
        "ioctl",
        Effect::Ioctl,
        u(A0, NoPath, Ebadf::NotModelled, true),
    ),
    uses(17, "pread64", RW),
    uses(18, "pwrite64", RW),
    uses(19, "readv", RW),
    uses(20, "writev", RW),
    p(21, "access"),
    // fs/pipe.c: the pipe is created, then both numbers allocated.
    s(
        22,
        "pipe",
        pair(Order::CreateFirst, 0, Cloexec::Never),
        Uses::NONE,
    ),
    p(23, "select"),
    p(24, "sched_yield"),
    p(25, "mremap"),
    p(26, "msync"),
    p(27, "mincore"),
    p(28, "madvise"),
    p(29, "shmget"),
    p(30, "shmat"),
    p(31, "shmctl"),
    s(32, "dup", Effect::Dup, Uses::NONE),
    s(33, "dup2", Effect::Dup2, Uses::NONE),
    p(34, "pause"),
    p(35, "nanosleep"),
    p(36, "getitimer"),
    p(37, "alarm"),
    p(38, "setitimer"),
    p(39, "getpid"),
    uses(
        40,
        "sendfile",
        u(A01, NoPath, Ebadf::Other(ACCESS_MODE), false),
    ),
    s(41, "socket", obj(SOCK_CLOEXEC), Uses::NONE),
    // net/socket.c: `sockfd_lookup_light` (fdget), then ENOTSOCK.
    uses(42, "connect", STRICT),
    s(43, "accept", new(Order::Accept, Cloexec::Never), NM),
    uses(44, "sendto", STRICT),
    uses(45, "recvfrom", STRICT),
    uses(46, "sendmsg", INNER),
    s(47, "recvmsg", Effect::Recv { flags_arg: 2 }, NM),
    uses(48, "shutdown", STRICT),
    uses(49, "bind", STRICT),
    uses(50, "listen", STRICT),
    uses(51, "getsockname", STRICT),
    uses(52, "getpeername", STRICT),
    // __sys_socketpair: both numbers reserved, then the sockets created.
    s(
        53,
        "socketpair",
        pair(Order::ReserveFirst, 3, SOCK_CLOEXEC),
        Uses::NONE,
    ),
    uses(54, "setsockopt", INNER),
    // SO_PEERPIDFD installs a pidfd of the peer (close-on-exec), written to optval.
    s(
        55,
        "getsockopt",
        Effect::CreateIf(
            &[
                Cond::Is {
                    arg: 1,
                    value: SOL_SOCKET as i64,
                    name: "SOL_SOCKET",
                },
                Cond::Is {
                    arg: 2,
                    value: SO_PEERPIDFD as i64,
                    name: "SO_PEERPIDFD",
                },
            ],
            Create {
                order: Order::CreateFirst,
                count: Count::OneAt(3),
                cloexec: Cloexec::Always,
                later: Later::Nothing,
            },
        ),
        STRICT,
    ),
    s(56, "clone", Effect::Clone, Uses::NONE),
    s(57, "fork", Effect::Fork, Uses::NONE),
    s(58, "vfork", Effect::Vfork, Uses::NONE),
    s(59, "execve", Effect::Exec, Uses::NONE),
    p(60, "exit"),
    p(61, "wait4"),
    p(62, "kill"),
    p(63, "uname"),
    p(64, "semget"),
    p(65, "semop"),
    p(66, "semctl"),
    p(67, "shmdt"),
    p(68, "msgget"),
    p(69, "msgsnd"),
    p(70, "msgrcv"),
    p(71, "msgctl"),
    s(72, "fcntl", Effect::Fcntl, Uses::NONE),
    // flock: neither FMODE_READ nor FMODE_WRITE (an O_ACCMODE open) is EBADF.
    uses(73, "flock", RW),
    uses(74, "fsync", STRICT),
    uses(75, "fdatasync", STRICT),
    p(76, "truncate"),
    uses(77, "ftruncate", STRICT),
    uses(78, "getdents", STRICT),
    p(79, "getcwd"),
    p(80, "chdir"),
    uses(81, "fchdir", RAW),
    p(82, "rename"),
    p(83, "mkdir"),
    p(84, "rmdir"),
    s(85, "creat", open(Cloexec::Never), Uses::NONE),
    p(86, "link"),
    p(87, "unlink"),
    p(88, "symlink"),
    p(89, "readlink"),
    p(90, "chmod"),
    uses(91, "fchmod", STRICT),
    p(92, "chown"),
    uses(93, "fchown", STRICT),
    p(94, "lchown"),
    p(95, "umask"),
    p(96, "gettimeofday"),
    s(97, "getrlimit", rlimit(None, 0, None, Some(1)), Uses::NONE),
    p(98, "getrusage"),
    p(99, "sysinfo"),
    p(100, "times"),
    s(101, "ptrace", Effect::Trace, Uses::NONE),
    p(102, "getuid"),
    p(103, "syslog"),
    p(104, "getgid"),
    p(105, "setuid"),
    p(106, "setgid"),
    p(107, "geteuid"),
    p(108, "getegid"),
    p(109, "setpgid"),
    p(110, "getppid"),
    p(111, "getpgrp"),
    p(112, "setsid"),
    p(113, "setreuid"),
    p(114, "setregid"),
    p(115, "getgroups"),
    p(116, "setgroups"),
    p(117, "setresuid"),
    p(118, "getresuid"),
    p(119, "setresgid"),
    p(120, "getresgid"),
    p(121, "getpgid"),
    p(122, "setfsuid"),
    p(123, "setfsgid"),
    p(124, "getsid"),
    p(125, "capget"),
    p(126, "capset"),
    p(127, "rt_sigpending"),
    p(128, "rt_sigtimedwait"),
    p(129, "rt_sigqueueinfo"),
    p(130, "rt_sigsuspend"),
    p(131, "sigaltstack"),
    p(132, "utime"),
    p(133, "mknod"),
    p(134, "uselib"),
    p(135, "personality"),
    p(136, "ustat"),
    p(137, "statfs"),
    uses(138, "fstatfs", RAW),
    p(139, "sysfs"),
    p(140, "getpriority"),
    p(141, "setpriority"),
    p(142, "sched_setparam"),
    p(143, "sched_getparam"),
    p(144, "sched_setscheduler"),
    p(145, "sched_getscheduler"),
    p(146, "sched_get_priority_max"),
    p(147, "sched_get_priority_min"),
    p(148, "sched_rr_get_interval"),
    p(149, "mlock"),
    p(150, "munlock"),
    p(151, "mlockall"),
    p(152, "munlockall"),
    p(153, "vhangup"),
    p(154, "modify_ldt"),
    p(155, "pivot_root"),
    s(156, "_sysctl", Effect::Obsolete, Uses::NONE),
    // PR_SET_MM_EXE_FILE, PR_SET_MM_MAP's exe_fd: looked up, not created.
    p(157, "prctl"),
    p(158, "arch_prctl"),
    p(159, "adjtimex"),
    s(160, "setrlimit", rlimit(None, 0, Some(1), None), Uses::NONE),
    p(161, "chroot"),
    p(162, "sync"),
    p(163, "acct"),
    p(164, "settimeofday"),
    p(165, "mount"),
    p(166, "umount2"),
    p(167, "swapon"),
    p(168, "swapoff"),
    p(169, "reboot"),
    p(170, "sethostname"),
    p(171, "setdomainname"),
    p(172, "iopl"),
    p(173, "ioperm"),
    s(174, "create_module", Effect::Obsolete, Uses::NONE),
    p(175, "init_module"),
    p(176, "delete_module"),
    s(177, "get_kernel_syms", Effect::Obsolete, Uses::NONE),
    s(178, "query_module", Effect::Obsolete, Uses::NONE),
    p(179, "quotactl"),
    s(180, "nfsservctl", Effect::Obsolete, Uses::NONE),
    s(181, "getpmsg", Effect::Obsolete, Uses::NONE),
    s(182, "putpmsg", Effect::Obsolete, Uses::NONE),
    s(183, "afs_syscall", Effect::Obsolete, Uses::NONE),
    s(184, "tuxcall", Effect::Obsolete, Uses::NONE),
    s(185, "security", Effect::Obsolete, Uses::NONE),
    p(186, "gettid"),
    uses(187, "readahead", RW),
    p(188, "setxattr"),
    p(189, "lsetxattr"),
    uses(190, "fsetxattr", STRICT),
    p(191, "getxattr"),
    p(192, "lgetxattr"),
    uses(193, "fgetxattr", STRICT),
    p(194, "listxattr"),
    p(195, "llistxattr"),
    uses(196, "flistxattr", STRICT),
    p(197, "removexattr"),
    p(198, "lremovexattr"),
    uses(199, "fremovexattr", STRICT),
    p(200, "tkill"),
    p(201, "time"),
    p(202, "futex"),
    p(203, "sched_setaffinity"),
    p(204, "sched_getaffinity"),
    p(205, "set_thread_area"),
    // Linux AIO: a context id, not a descriptor; io_submit looks up each control block's
    // descriptor (and its IOCB_FLAG_RESFD eventfd) when it submits it.
    p(206, "io_setup"),
    p(207, "io_destroy"),
    p(208, "io_getevents"),
    p(209, "io_submit"),
    p(210, "io_cancel"),
    p(211, "get_thread_area"),
    s(212, "lookup_dcookie", Effect::Obsolete, Uses::NONE),
    s(213, "epoll_create", obj(Cloexec::Never), Uses::NONE),
    s(214, "epoll_ctl_old", Effect::Obsolete, Uses::NONE),
    s(215, "epoll_wait_old", Effect::Obsolete, Uses::NONE),
    p(216, "remap_file_pages"),
    uses(217, "getdents64", STRICT),
    p(218, "set_tid_address"),
    p(219, "restart_syscall"),
    p(220, "semtimedop"),
    uses(221, "fadvise64", STRICT),
    p(222, "timer_create"),
    p(223, "timer_settime"),
    p(224, "timer_gettime"),
    p(225, "timer_getoverrun"),
    p(226, "timer_delete"),
    // A dynamic clock's id (FD_TO_CLOCKID) names a descriptor, looked up.
    p(227, "clock_settime"),
    p(228, "clock_gettime"),
    p(229, "clock_getres"),
    p(230, "clock_nanosleep"),
    p(231, "exit_group"),
    uses(232, "epoll_wait", STRICT),
    // Both descriptors are looked up before any other check (the event is copied first).
    uses(233, "epoll_ctl", u(A02, NoPath, Ebadf::Strict, true)),
    p(234, "tgkill"),
    p(235, "utimes"),
    s(236, "vserver", Effect::Obsolete, Uses::NONE),
    p(237, "mbind"),
    p(238, "set_mempolicy"),
    p(239, "get_mempolicy"),
    // ipc/mqueue.c: do_mq_open reserves with O_CLOEXEC whatever the flags say.
    s(240, "mq_open", open(Cloexec::Always), Uses::NONE),
    p(241, "mq_unlink"),
    uses(242, "mq_timedsend", NM),
    uses(243, "mq_timedreceive", NM),
    // SIGEV_THREAD's netlink socket is looked up, not created.
    uses(244, "mq_notify", NM),
    uses(245, "mq_getsetattr", NM),
    p(246, "kexec_load"),
    p(247, "waitid"),
    p(248, "add_key"),
    p(249, "request_key"),
    // KEYCTL_WATCH_KEY's watch queue is looked up.
    p(250, "keyctl"),
    p(251, "ioprio_set"),
    p(252, "ioprio_get"),
    s(253, "inotify_init", obj(Cloexec::Never), Uses::NONE),
    uses(254, "inotify_add_watch", STRICT),
    uses(255, "inotify_rm_watch", STRICT),
    p(256, "migrate_pages"),
    s(257, "openat", open(flag(2, O_CLOEXEC, "O_CLOEXEC")), AT),
    uses(258, "mkdirat", AT),
    uses(259, "mknodat", AT),
    uses(260, "fchownat", AT),
    uses(261, "futimesat", AT),
    uses(262, "newfstatat", AT),
    uses(263, "unlinkat", AT),
    uses(264, "renameat", AT2),
    uses(265, "linkat", AT2),
    uses(266, "symlinkat", u(D1, Raw, Ebadf::Strict, true)),
    uses(267, "readlinkat", AT),
    uses(268, "fchmodat", AT),
    uses(269, "faccessat", AT),
    p(270, "pselect6"),
    p(271, "ppoll"),
    s(272, "unshare", Effect::Unshare, Uses::NONE),
    p(273, "set_robust_list"),
    p(274, "get_robust_list"),
    uses(
        275,
        "splice",
        u(A02, NoPath, Ebadf::Other(ACCESS_MODE), false),
    ),
    uses(276, "tee", u(A01, NoPath, Ebadf::Other(ACCESS_MODE), false)),
    uses(277, "sync_file_range", STRICT),
    uses(278, "vmsplice", NM),
    p(279, "move_pages"),
    uses(280, "utimensat", AT),
    uses(281, "epoll_pwait", STRICT),
    // fs/signalfd.c: -1 creates; another number is `fdget` of an existing signalfd.
    s(
        282,
        "signalfd",
        Effect::CreateIf(
            &[Cond::Is {
                arg: 0,
                value: -1,
                name: "-1",
            }],
            create(Order::CreateFirst, Cloexec::Never),
        ),
        STRICT,
    ),
    s(
        283,
        "timerfd_create",
        obj(flag(1, O_CLOEXEC, "TFD_CLOEXEC")),
        Uses::NONE,
    ),
    s(284, "eventfd", obj(Cloexec::Never), Uses::NONE),
    uses(285, "fallocate", RW),
    uses(286, "timerfd_settime", STRICT),
    uses(287, "timerfd_gettime", STRICT),
    s(
        288,
        "accept4",
        new(Order::Accept, flag(3, O_CLOEXEC, "SOCK_CLOEXEC")),
        NM,
    ),
    s(
        289,
        "signalfd4",
        Effect::CreateIf(
            &[Cond::Is {
                arg: 0,
                value: -1,
                name: "-1",
            }],
            create(Order::CreateFirst, flag(3, O_CLOEXEC, "SFD_CLOEXEC")),
        ),
        STRICT,
    ),
    s(
        290,
        "eventfd2",
        obj(flag(1, O_CLOEXEC, "EFD_CLOEXEC")),
        Uses::NONE,
    ),
    s(
        291,
        "epoll_create1",
        obj(flag(0, O_CLOEXEC, "EPOLL_CLOEXEC")),
        Uses::NONE,
    ),
    s(292, "dup3", Effect::Dup3, Uses::NONE),
    s(
        293,
        "pipe2",
        pair(Order::CreateFirst, 0, flag(1, O_CLOEXEC, "O_CLOEXEC")),
        Uses::NONE,
    ),
    s(
        294,
        "inotify_init1",
        obj(flag(0, O_CLOEXEC, "IN_CLOEXEC")),
        Uses::NONE,
    ),
    uses(295, "preadv", RW),
    uses(296, "pwritev", RW),
    p(297, "rt_tgsigqueueinfo"),
    // The group leader's descriptor (argument 3) is looked up.
    s(
        298,
        "perf_event_open",
        obj(flag(4, PERF_FLAG_FD_CLOEXEC, "PERF_FLAG_FD_CLOEXEC")),
        Uses::NONE,
    ),
    s(299, "recvmmsg", Effect::Recv { flags_arg: 3 }, NM),
    s(
        300,
        "fanotify_init",
        later(flag(0, BIT0_CLOEXEC, "FAN_CLOEXEC"), Later::ReadInstalls),
        Uses::NONE,
    ),
    // The mark's dirfd is looked up too (EBADF).
    uses(301, "fanotify_mark", INNER),
    s(
        302,
        "prlimit64",
        rlimit(Some(0), 1, Some(2), Some(3)),
        Uses::NONE,
    ),
    uses(303, "name_to_handle_at", AT),
    // The mount descriptor is looked up (not modelled), then the number reserved.
    s(
        304,
        "open_by_handle_at",
        open(flag(2, O_CLOEXEC, "O_CLOEXEC")),
        NM_RAW,
    ),
    p(305, "clock_adjtime"),
    uses(306, "syncfs", STRICT),
    uses(307, "sendmmsg", INNER),
    uses(308, "setns", STRICT),
    p(309, "getcpu"),
    p(310, "process_vm_readv"),
    p(311, "process_vm_writev"),
    // Descriptors of two processes, compared.
    p(312, "kcmp"),
    uses(313, "finit_module", NM),
    p(314, "sched_setattr"),
    p(315, "sched_getattr"),
    uses(316, "renameat2", AT2),
    // SECCOMP_FILTER_FLAG_NEW_LISTENER returns the listener (close-on-exec).
    s(
        317,
        "seccomp",
        Effect::CreateIf(
            &[Cond::HasAll {
                arg: 1,
                bits: SECCOMP_FILTER_FLAG_NEW_LISTENER,
                name: "SECCOMP_FILTER_FLAG_NEW_LISTENER",
            }],
            create(Order::CreateFirst, Cloexec::Always),
        ),
        Uses::NONE,
    ),
    p(318, "getrandom"),
    s(
        319,
        "memfd_create",
        obj(flag(1, BIT0_CLOEXEC, "MFD_CLOEXEC")),
        Uses::NONE,
    ),
    uses(
        320,
        "kexec_file_load",
        u(A01, NoPath, Ebadf::NotModelled, false),
    ),
    s(
        321,
        "bpf",
        Effect::CreateIf(
            &[Cond::OneOf {
                arg: 0,
                values: crate::bpf::CREATING,
            }],
            create(Order::CreateFirst, Cloexec::Always),
        ),
        Uses::NONE,
    ),
    s(322, "execveat", Effect::Exec, NM_AT),
    s(
        323,
        "userfaultfd",
        later(flag(0, O_CLOEXEC, "O_CLOEXEC"), Later::ForkEvents),
        Uses::NONE,
    ),
    p(324, "membarrier"),
    p(325, "mlock2"),
    uses(
        326,
        "copy_file_range",
        u(A02, NoPath, Ebadf::Other(ACCESS_MODE), false),
    ),
    uses(327, "preadv2", RW),
    uses(328, "pwritev2", RW),
    p(329, "pkey_mprotect"),
    p(330, "pkey_alloc"),
    p(331, "pkey_free"),
    uses(332, "statx", AT),
    p(333, "io_pgetevents"),
    p(334, "rseq"),
    p(335, "uretprobe"),
    p(336, "uprobe"),
    uses(424, "pidfd_send_signal", PIDFD),
    s(
        425,
        "io_uring_setup",
        later(Cloexec::Always, Later::Ring),
        Uses::NONE,
    ),
    // IORING_ENTER_REGISTERED_RING: the argument is an index, not a descriptor.
    s(
        426,
        "io_uring_enter",
        Effect::Async,
        u(A0, NoPath, Ebadf::Other(IO_URING), false),
    ),
    s(
        427,
        "io_uring_register",
        Effect::Async,
        u(A0, NoPath, Ebadf::Other(IO_URING), false),
    ),
    s(
        428,
        "open_tree",
        obj(flag(2, O_CLOEXEC, "OPEN_TREE_CLOEXEC")),
        Uses::NONE,
    ),
    uses(429, "move_mount", AT2),
    s(
        430,
        "fsopen",
        obj(flag(1, BIT0_CLOEXEC, "FSOPEN_CLOEXEC")),
        Uses::NONE,
    ),
    uses(431, "fsconfig", NM),
    s(
        432,
        "fsmount",
        obj(flag(1, BIT0_CLOEXEC, "FSMOUNT_CLOEXEC")),
        Uses::NONE,
    ),
    s(
        433,
        "fspick",
        obj(flag(2, BIT0_CLOEXEC, "FSPICK_CLOEXEC")),
        Uses::NONE,
    ),
    s(434, "pidfd_open", obj(Cloexec::Always), Uses::NONE),
    s(435, "clone3", Effect::Clone3, Uses::NONE),
    s(436, "close_range", Effect::CloseRange, Uses::NONE),
    s(
        437,
        "openat2",
        open(Cloexec::Field {
            arg: 2,
            field: "flags",
            bit: O_CLOEXEC,
            name: "O_CLOEXEC",
        }),
        Uses::NONE,
    ),
    // kernel/pid.c: flags (EINVAL), the pidfd (EBADF), the target's descriptor in its
    // table, then the new number (close-on-exec).
    s(438, "pidfd_getfd", obj(Cloexec::Always), Uses::NONE),
    uses(439, "faccessat2", AT),
    uses(440, "process_madvise", PIDFD),
    uses(441, "epoll_pwait2", STRICT),
    uses(442, "mount_setattr", NM_AT),
    uses(
        443,
        "quotactl_fd",
        u(A0, Raw, Ebadf::Other(UNMODELLED), false),
    ),
    s(
        444,
        "landlock_create_ruleset",
        Effect::CreateIf(
            &[Cond::HasNone {
                arg: 2,
                bits: LANDLOCK_CREATE_RULESET_QUERIES,
                names: &[
                    "LANDLOCK_CREATE_RULESET_VERSION",
                    "LANDLOCK_CREATE_RULESET_ERRATA",
                ],
            }],
            create(Order::CreateFirst, Cloexec::Always),
        ),
        Uses::NONE,
    ),
    uses(445, "landlock_add_rule", NM),
    uses(446, "landlock_restrict_self", NM),
    s(
        447,
        "memfd_secret",
        obj(flag(0, O_CLOEXEC, "O_CLOEXEC")),
        Uses::NONE,
    ),
    uses(448, "process_mrelease", PIDFD),
    p(449, "futex_waitv"),
    p(450, "set_mempolicy_home_node"),
    uses(
        451,
        "cachestat",
        u(A0, Raw, Ebadf::Other(UNMODELLED), false),
    ),
    uses(452, "fchmodat2", AT),
    p(453, "map_shadow_stack"),
    p(454, "futex_wake"),
    p(455, "futex_wait"),
    p(456, "futex_requeue"),
    p(457, "statmount"),
    p(458, "listmount"),
    p(459, "lsm_get_self_attr"),
    p(460, "lsm_set_self_attr"),
    p(461, "lsm_list_modules"),
    p(462, "mseal"),
    uses(463, "setxattrat", ATX),
    uses(464, "getxattrat", ATX),
    uses(465, "listxattrat", ATX),
    uses(466, "removexattrat", ATX),
    s(
        467,
        "open_tree_attr",
        obj(flag(2, O_CLOEXEC, "OPEN_TREE_CLOEXEC")),
        Uses::NONE,
    ),
    uses(468, "file_getattr", ATX),
    uses(469, "file_setattr", ATX),
    // Namespace ids, by a structure of ids: no descriptor (Linux 6.19).
    p(470, "listns"),
];

//! Syscall names the replay knows, by what they can do to a descriptor table.
//!
//! Three lists: calls that never change a table ([`is_known_plain`]; anything not here and not
//! decoded by [`crate::decode`] is *unsupported*, because it might create descriptors the
//! replay cannot see), calls that may change one ([`may_touch_table`]: while one is in flight
//! on a shared table, the table's history is kept for the search), and where plain calls
//! take descriptor arguments, how the kernel looks them up and what their EBADF means
//! ([`fd_call`], for the checks of [`crate::engine::args`]).

use crate::decode::{Ebadf, Lookup};
use std::collections::HashSet;
use std::sync::OnceLock;

/// Calls with no table effect (whitespace-separated).
const KNOWN_PLAIN: &str = "
    unsupported read write pread64 pwrite64 readv writev preadv pwritev preadv2 pwritev2
    lseek _llseek fstat fstatfs fsync fdatasync ftruncate fchmod fchown fchdir getdents
    getdents64 flock fadvise64 fallocate readahead syncfs sync_file_range fgetxattr
    fsetxattr flistxattr fremovexattr sendto recvfrom sendmsg sendmmsg connect bind listen
    getsockname getpeername setsockopt getsockopt shutdown epoll_ctl epoll_wait epoll_pwait
    epoll_pwait2 inotify_add_watch inotify_rm_watch timerfd_settime timerfd_gettime splice
    tee sendfile copy_file_range io_uring_enter io_uring_register pidfd_send_signal
    fanotify_mark mmap ioctl fcntl newfstatat fstatat64 statx faccessat faccessat2 fchmodat
    fchmodat2 fchownat mkdirat mknodat unlinkat renameat renameat2 linkat symlinkat
    readlinkat utimensat futimesat name_to_handle_at mount_setattr move_mount fsconfig setns
    brk mprotect munmap mremap madvise msync mlock munlock mincore rt_sigaction
    rt_sigprocmask rt_sigreturn rt_sigsuspend rt_sigtimedwait rt_sigqueueinfo
    rt_tgsigqueueinfo sigaltstack futex futex_waitv set_robust_list get_robust_list
    set_tid_address rseq arch_prctl prctl access stat lstat readlink getcwd chdir chroot
    mkdir rmdir unlink rename link symlink chmod chown lchown utime utimes truncate statfs
    getxattr lgetxattr setxattr lsetxattr listxattr llistxattr removexattr lremovexattr
    umask getpid getppid gettid getuid geteuid getgid getegid getresuid getresgid setuid
    setgid setreuid setregid setresuid setresgid setfsuid setfsgid getgroups setgroups
    getpgrp getpgid setpgid getsid setsid capget capset uname sysinfo getrusage times time
    gettimeofday clock_gettime clock_getres clock_nanosleep nanosleep clock_settime
    clock_adjtime timer_create timer_settime timer_gettime timer_delete timer_getoverrun
    alarm setitimer getitimer pause sched_yield sched_getaffinity sched_setaffinity
    sched_getparam sched_setparam sched_getscheduler sched_setscheduler
    sched_get_priority_max sched_get_priority_min getpriority setpriority ioprio_get
    ioprio_set wait4 waitid kill tkill tgkill exit exit_group getrandom poll ppoll select
    pselect6 restart_syscall membarrier mbind get_mempolicy set_mempolicy pkey_alloc
    pkey_free pkey_mprotect personality sync mount umount2 pivot_root socketcall
    process_vm_readv process_vm_writev kcmp ptrace syslog getcpu vhangup acct swapon swapoff
    reboot sethostname setdomainname iopl ioperm quotactl lookup_dcookie remap_file_pages
    semget semop semctl semtimedop shmget shmat shmdt shmctl msgget msgsnd msgrcv msgctl
    mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr add_key request_key
    keyctl sched_setattr sched_getattr landlock_add_rule landlock_restrict_self
    process_madvise process_mrelease set_mempolicy_home_node cachestat map_shadow_stack
    lsm_get_self_attr lsm_set_self_attr lsm_list_modules mseal statmount listmount uretprobe
    migrate_pages move_pages vmsplice io_setup io_destroy io_submit io_cancel io_getevents
    io_pgetevents ustat sysfs _sysctl modify_ldt adjtimex settimeofday init_module
    finit_module delete_module kexec_load kexec_file_load mknod rt_sigpending mlock2 mlockall
    munlockall sched_rr_get_interval get_thread_area set_thread_area quotactl_fd futex_wake
    futex_wait futex_requeue setxattrat getxattrat listxattrat removexattrat file_getattr
    file_setattr uselib afs_syscall create_module epoll_ctl_old epoll_wait_old
    get_kernel_syms getpmsg putpmsg nfsservctl query_module security tuxcall vserver
";

/// Calls that may change a table (whitespace-separated).
const TOUCH_TABLE: &str = "
    open openat openat2 creat open_by_handle_at socket accept accept4 eventfd eventfd2
    epoll_create epoll_create1 inotify_init inotify_init1 signalfd signalfd4 timerfd_create
    memfd_create memfd_secret userfaultfd fanotify_init perf_event_open open_tree fsopen
    fspick fsmount open_tree_attr mq_open pidfd_open pidfd_getfd io_uring_setup landlock_create_ruleset bpf
    seccomp pipe pipe2 socketpair close dup dup2 dup3 fcntl fcntl64 ioctl close_range
    recvmsg recvmmsg clone clone3
";

fn set(
    list: &'static str,
    cell: &'static OnceLock<HashSet<&'static str>>,
) -> &'static HashSet<&'static str> {
    cell.get_or_init(|| list.split_ascii_whitespace().collect())
}

/// Whether `name` is a known call with no table effect.
pub fn is_known_plain(name: &str) -> bool {
    static S: OnceLock<HashSet<&'static str>> = OnceLock::new();
    set(KNOWN_PLAIN, &S).contains(name)
}

/// The name of a call strace printed by number (`syscall_0x1c3`): strace 6.1 knows the
/// x86_64 calls up to 450; later kernels added these.
pub fn canonical(name: &str) -> &str {
    const LATER: &[&str] = &[
        "cachestat",
        "fchmodat2",
        "map_shadow_stack",
        "futex_wake",
        "futex_wait",
        "futex_requeue",
        "statmount",
        "listmount",
        "lsm_get_self_attr",
        "lsm_set_self_attr",
        "lsm_list_modules",
        "mseal",
        "setxattrat",
        "getxattrat",
        "listxattrat",
        "removexattrat",
        "open_tree_attr",
        "file_getattr",
        "file_setattr",
    ];
    let Some(hex) = name.strip_prefix("syscall_0x") else {
        return name;
    };
    match usize::from_str_radix(hex, 16) {
        Ok(n) if (451..451 + LATER.len()).contains(&n) => LATER[n - 451],
        _ => name,
    }
}

/// Whether a call of this name can change a table (it may have to be pulled forward by the
/// search, and while it is in flight the table's history must be kept).
pub fn may_touch_table(name: &str) -> bool {
    static S: OnceLock<HashSet<&'static str>> = OnceLock::new();
    set(TOUCH_TABLE, &S).contains(canonical(name))
}

/// Positions of descriptor arguments of plain calls (P15). `*at` calls are handled by
/// `decode::uses_at`: their dirfd counts only with a relative or empty path.
pub fn fd_positions(name: &str) -> Option<&'static [usize]> {
    fd_call(name).map(|c| c.pos)
}

/// What a plain call does with its descriptor arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdCall {
    /// Positions of the descriptor arguments (100 + i: a dirfd at i, see `decode::uses_at`).
    pub pos: &'static [usize],
    /// How the kernel looks them up.
    pub lookup: Lookup,
    /// What EBADF means.
    pub ebadf: Ebadf,
    /// Whether every errno outside [`crate::decode::EARLY`] comes after the lookups (so such a
    /// failure proves the descriptors were found).
    pub proves: bool,
}

const fn call(pos: &'static [usize], lookup: Lookup, ebadf: Ebadf, proves: bool) -> FdCall {
    FdCall {
        pos,
        lookup,
        ebadf,
        proves,
    }
}

/// The descriptor arguments of plain calls and how the kernel treats them (fs/file.c's
/// `fdget` refuses O_PATH files, `fdget_raw` and path walks take them; the sources in the
/// comments are those of Linux 6.18).
pub fn fd_call(name: &str) -> Option<FdCall> {
    use Ebadf::{Other, Strict};
    use Lookup::{NoPath, Raw};
    Some(match name {
        // fs/read_write.c: `fdget_pos`/`fdget`, then FMODE_READ/FMODE_WRITE (EBADF too).
        "read" | "write" | "pread64" | "pwrite64" | "readv" | "writev" | "preadv" | "pwritev"
        | "preadv2" | "pwritev2" => call(&[0], NoPath, Other(ACCESS_MODE), true),
        "lseek" | "_llseek" | "getdents" | "getdents64" | "fsync" | "fdatasync" | "syncfs"
        | "ftruncate" | "fchmod" | "fchown" | "fadvise64" | "sync_file_range" => {
            call(&[0], NoPath, Strict, true)
        }
        // vfs_fstat, fd_statfs and fchdir use `fdget_raw`: O_PATH will do.
        "fstat" | "fstatfs" | "fchdir" => call(&[0], Raw, Strict, true),
        // flock: neither FMODE_READ nor FMODE_WRITE (an O_ACCMODE open) is EBADF; fallocate
        // and readahead check the access mode.
        "flock" | "fallocate" | "readahead" => call(&[0], NoPath, Other(ACCESS_MODE), true),
        "fgetxattr" | "fsetxattr" | "flistxattr" | "fremovexattr" => {
            call(&[0], NoPath, Strict, true)
        }
        // net/socket.c: `sockfd_lookup_light` (fdget), then ENOTSOCK. (accept and recvmsg
        // are decoded with their table effects.)
        "sendto" | "recvfrom" | "connect" | "bind" | "listen" | "getsockname" | "getpeername"
        | "getsockopt" | "shutdown" => call(&[0], NoPath, Strict, true),
        // SCM_RIGHTS descriptors; BPF program descriptors in socket options.
        "sendmsg" | "sendmmsg" | "setsockopt" => call(&[0], NoPath, Other(INNER_FD), true),
        "epoll_wait" | "epoll_pwait" | "epoll_pwait2" | "inotify_add_watch"
        | "inotify_rm_watch" | "timerfd_settime" | "timerfd_gettime" | "setns" => {
            call(&[0], NoPath, Strict, true)
        }
        // Both descriptors are looked up before any other check (the event is copied first).
        "epoll_ctl" => call(&[0, 2], NoPath, Strict, true),
        "splice" | "copy_file_range" => call(&[0, 2], NoPath, Other(ACCESS_MODE), false),
        "tee" | "sendfile" => call(&[0, 1], NoPath, Other(ACCESS_MODE), false),
        // IORING_ENTER_REGISTERED_RING: the argument is an index, not a descriptor.
        "io_uring_enter" | "io_uring_register" => call(&[0], NoPath, Other(IO_URING), false),
        // pidfd_pid: a descriptor that is no pidfd is EBADF.
        "pidfd_send_signal" | "process_madvise" | "process_mrelease" => {
            call(&[0], NoPath, Other(NOT_PIDFD), true)
        }
        // The mark's dirfd is looked up too (EBADF).
        "fanotify_mark" => call(&[0], NoPath, Other(INNER_FD), true),
        "quotactl_fd" | "cachestat" => call(&[0], Raw, Other(UNMODELLED), false),
        // Path walks start at the dirfd with `fdget_raw` (fs/namei.c path_init).
        "newfstatat" | "fstatat64" | "statx" | "faccessat" | "faccessat2" | "fchmodat"
        | "fchmodat2" | "fchownat" | "mkdirat" | "mknodat" | "unlinkat" | "readlinkat"
        | "utimensat" | "futimesat" | "name_to_handle_at" => call(&[100], Raw, Strict, true),
        "symlinkat" => call(&[101], Raw, Strict, true),
        // Two walks: the first one's errors come before the second dirfd is looked up.
        "renameat" | "renameat2" | "linkat" => call(&[100, 102], Raw, Strict, false),
        "move_mount" => call(&[100, 102], Raw, Strict, false),
        // With an empty path these look the descriptor itself up; not modelled.
        "setxattrat" | "getxattrat" | "listxattrat" | "removexattrat" | "file_getattr"
        | "file_setattr" => call(&[100], Raw, Other(UNMODELLED), false),
        _ => return None,
    })
}

/// EBADF may come from the open file's access mode (`read` on a write-only file).
pub const ACCESS_MODE: &str = "EBADF may come from the file's access mode";
/// EBADF may come from a descriptor inside the arguments (SCM_RIGHTS, a BPF program, a mark's
/// dirfd, an ioctl's argument).
pub const INNER_FD: &str = "EBADF may come from a descriptor inside the arguments";
/// EBADF may mean the descriptor is not a pidfd.
pub const NOT_PIDFD: &str = "EBADF may mean the descriptor is no pidfd";
/// io_uring calls may name a registered ring by index.
pub const IO_URING: &str = "io_uring: the argument may be a registered ring's index";
/// The call's lookup is not modelled.
pub const UNMODELLED: &str = "the call's descriptor lookup is not modelled";
/// An ioctl command whose driver may answer EBADF itself.
pub const DRIVER: &str = "EBADF may come from the ioctl command's driver";
/// fcntl commands that answer EBADF for other reasons (lock type vs access mode, not a pipe).
pub const FCNTL_OTHER: &str = "EBADF may come from the fcntl command (lock type, not a pipe)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists() {
        assert!(is_known_plain("futex") && is_known_plain("mmap"));
        assert!(!is_known_plain("openat") && !is_known_plain("syscall_0x1b8"));
        assert!(may_touch_table("openat") && may_touch_table("recvmsg"));
        assert!(!may_touch_table("read"));
        assert_eq!(fd_positions("epoll_ctl"), Some(&[0, 2][..]));
        let fstat = fd_call("fstat").unwrap();
        assert_eq!((fstat.lookup, fstat.ebadf), (Lookup::Raw, Ebadf::Strict));
        let read = fd_call("read").unwrap();
        assert_eq!(
            (read.lookup, read.ebadf, read.proves),
            (Lookup::NoPath, Ebadf::Other(ACCESS_MODE), true)
        );
        assert!(!fd_call("splice").unwrap().proves);
        assert_eq!(fd_call("renameat2").unwrap().pos, &[100, 102]);
        assert_eq!(canonical("syscall_0x1c3"), "cachestat");
        assert_eq!(canonical("syscall_0x1d3"), "open_tree_attr");
        assert_eq!(canonical("syscall_0x1b8"), "syscall_0x1b8");
        assert!(may_touch_table("syscall_0x1d3") && is_known_plain(canonical("syscall_0x1d5")));
    }
}

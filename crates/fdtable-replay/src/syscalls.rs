//! Syscall names the replay knows, by what they can do to a descriptor table.
//!
//! Three lists: calls that never change a table ([`is_known_plain`]; anything not here and not
//! decoded by [`crate::decode`] is *unsupported*, because it might create descriptors the
//! replay cannot see), calls that may change one ([`may_touch_table`]: while one is in flight
//! on a shared table, the table's history is kept for the search), and where plain calls
//! take descriptor arguments ([`fd_positions`], for the cross-check of P15).

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
    Some(match name {
        "read" | "write" | "pread64" | "pwrite64" | "readv" | "writev" | "preadv" | "pwritev"
        | "preadv2" | "pwritev2" | "lseek" | "_llseek" | "fstat" | "fstatfs" | "fsync"
        | "fdatasync" | "ftruncate" | "fchmod" | "fchown" | "fchdir" | "getdents"
        | "getdents64" | "flock" | "fadvise64" | "fallocate" | "readahead" | "syncfs"
        | "sync_file_range" | "fgetxattr" | "fsetxattr" | "flistxattr" | "fremovexattr"
        | "sendto" | "recvfrom" | "sendmsg" | "sendmmsg" | "connect" | "bind" | "listen"
        | "getsockname" | "getpeername" | "setsockopt" | "getsockopt" | "shutdown"
        | "epoll_wait" | "epoll_pwait" | "epoll_pwait2" | "inotify_add_watch"
        | "inotify_rm_watch" | "timerfd_settime" | "timerfd_gettime" | "io_uring_enter"
        | "io_uring_register" | "pidfd_send_signal" | "fanotify_mark" | "setns" | "quotactl_fd" => {
            &[0]
        }
        "epoll_ctl" | "splice" | "copy_file_range" => &[0, 2],
        "tee" | "sendfile" => &[0, 1],
        "newfstatat" | "fstatat64" | "statx" | "faccessat" | "faccessat2" | "fchmodat"
        | "fchmodat2" | "fchownat" | "mkdirat" | "mknodat" | "unlinkat" | "readlinkat"
        | "utimensat" | "futimesat" | "name_to_handle_at" | "setxattrat" | "getxattrat"
        | "listxattrat" | "removexattrat" | "file_getattr" | "file_setattr" => &[100],
        "renameat" | "renameat2" | "linkat" => &[100, 102],
        "symlinkat" => &[101],
        _ => return None,
    })
}

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
        assert_eq!(canonical("syscall_0x1c3"), "cachestat");
        assert_eq!(canonical("syscall_0x1d3"), "open_tree_attr");
        assert_eq!(canonical("syscall_0x1b8"), "syscall_0x1b8");
        assert!(may_touch_table("syscall_0x1d3") && is_known_plain(canonical("syscall_0x1d5")));
    }
}

//! The flag values the catalogue and its readers need, from the kernel's UAPI headers (so
//! that no reader depends on a libc recent enough to have them).

/// `O_CLOEXEC` (and `SOCK_CLOEXEC`, `EFD_CLOEXEC`, `TFD_CLOEXEC`, `SFD_CLOEXEC`,
/// `IN_CLOEXEC`, `EPOLL_CLOEXEC`, `OPEN_TREE_CLOEXEC`: the same bit on x86_64).
pub const O_CLOEXEC: u64 = 0o2_000_000;
/// `O_PATH`.
pub const O_PATH: u64 = 0o10_000_000;
/// `MFD_CLOEXEC`, `FAN_CLOEXEC`, `FSOPEN_CLOEXEC`, `FSPICK_CLOEXEC`, `FSMOUNT_CLOEXEC`.
pub const BIT0_CLOEXEC: u64 = 1;
/// `PERF_FLAG_FD_CLOEXEC`.
pub const PERF_FLAG_FD_CLOEXEC: u64 = 8;
/// `MSG_CMSG_CLOEXEC`.
pub const MSG_CMSG_CLOEXEC: u64 = 0x4000_0000;
/// `FD_CLOEXEC`.
pub const FD_CLOEXEC: u64 = 1;

/// `F_SETOWN`: the owner of a file's `SIGIO`/`SIGURG`, a pid (a process group if negative).
pub const F_SETOWN: u32 = 8;
/// `F_SETOWN_EX`: the owner, in a `struct f_owner_ex` in memory.
pub const F_SETOWN_EX: u32 = 15;

/// `AT_FDCWD`.
pub const AT_FDCWD: i32 = -100;

/// `CLONE_FILES`.
pub const CLONE_FILES: u64 = 0x400;
/// `CLONE_PIDFD`.
pub const CLONE_PIDFD: u64 = 0x1000;
/// `CLONE_VFORK`.
pub const CLONE_VFORK: u64 = 0x4000;
/// `CLONE_THREAD`.
pub const CLONE_THREAD: u64 = 0x10000;
/// `CLONE_UNTRACED`.
pub const CLONE_UNTRACED: u64 = 0x0080_0000;

/// `CLOSE_RANGE_UNSHARE`.
pub const CLOSE_RANGE_UNSHARE: u64 = 1 << 1;
/// `CLOSE_RANGE_CLOEXEC`.
pub const CLOSE_RANGE_CLOEXEC: u64 = 1 << 2;

/// `RLIMIT_NOFILE`.
pub const RLIMIT_NOFILE: u64 = 7;

/// `SOL_SOCKET`.
pub const SOL_SOCKET: u64 = 1;
/// `SO_PEERPIDFD` (Linux 6.5): `getsockopt` installs a pidfd of the peer.
pub const SO_PEERPIDFD: u64 = 77;
/// `AF_UNIX`: the only family whose messages carry descriptors.
pub const AF_UNIX: i32 = 1;

/// `SECCOMP_FILTER_FLAG_NEW_LISTENER`.
pub const SECCOMP_FILTER_FLAG_NEW_LISTENER: u64 = 1 << 3;

/// `LANDLOCK_CREATE_RULESET_VERSION`, `LANDLOCK_CREATE_RULESET_ERRATA`: queries, no
/// descriptor.
pub const LANDLOCK_CREATE_RULESET_QUERIES: u64 = 0b11;

/// fanotify_init's class bits (`FAN_CLASS_NOTIF` 0, `FAN_CLASS_CONTENT` 4,
/// `FAN_CLASS_PRE_CONTENT` 8).
pub const FAN_CLASS_MASK: u64 = 0xc;
/// `FAN_REPORT_PIDFD`: every event read installs a pidfd.
pub const FAN_REPORT_PIDFD: u64 = 0x80;
/// `FAN_REPORT_FID`, `FAN_REPORT_DIR_FID`, `FAN_REPORT_NAME`, `FAN_REPORT_TARGET_FID`,
/// `FAN_REPORT_MNT`: events carry file handles or mount ids instead of descriptors.
pub const FAN_REPORT_INFO: u64 = 0x200 | 0x400 | 0x800 | 0x1000 | 0x4000;

/// Whether `read()` of a fanotify group made with these `fanotify_init` flags installs
/// descriptors: a group whose events carry file handles (or mount ids) and no pidfd, of the
/// notification class, reads events whose path is never opened (fs/notify/fanotify:
/// `copy_event_to_user` opens only the path of path events).
pub const fn fanotify_read_installs(flags: u64) -> bool {
    flags & FAN_REPORT_INFO == 0 || flags & FAN_CLASS_MASK != 0 || flags & FAN_REPORT_PIDFD != 0
}

/// `UFFD_FEATURE_EVENT_FORK`: `read()` of the userfaultfd installs one per fork.
pub const UFFD_FEATURE_EVENT_FORK: u64 = 1 << 1;

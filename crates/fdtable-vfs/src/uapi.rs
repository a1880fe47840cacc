//! The kernel's ABI numbers this layer speaks: open flags, `f_mode` bits, file types, ioctl and
//! fcntl commands, poll bits (include/uapi/linux/*.h, include/linux/fs.h).
//!
//! Every number is Linux's (the x86-64 / asm-generic ABI: x86, arm64, riscv), whatever the host
//! the layer runs on; on a Linux host a test checks them against the C library's.

use fdtable::Errno;

// === open(2) flags (include/uapi/asm-generic/fcntl.h) ===

/// `O_ACCMODE`: the access-mode bits.
pub const O_ACCMODE: u32 = 3;
/// `O_RDONLY`.
pub const O_RDONLY: u32 = 0;
/// `O_WRONLY`.
pub const O_WRONLY: u32 = 1;
/// `O_RDWR`.
pub const O_RDWR: u32 = 2;
/// `O_CREAT`.
pub const O_CREAT: u32 = 0o100;
/// `O_EXCL`.
pub const O_EXCL: u32 = 0o200;
/// `O_NOCTTY`.
pub const O_NOCTTY: u32 = 0o400;
/// `O_TRUNC`.
pub const O_TRUNC: u32 = 0o1000;
/// `O_APPEND`.
pub const O_APPEND: u32 = 0o2000;
/// `O_NONBLOCK` (`O_NDELAY` is the same bit on every architecture this builds for).
pub const O_NONBLOCK: u32 = 0o4000;
/// `O_DSYNC`.
pub const O_DSYNC: u32 = 0o10000;
/// `O_SYNC` (`__O_SYNC | O_DSYNC`).
pub const O_SYNC: u32 = 0o4010000;
/// `FASYNC` / `O_ASYNC`.
pub const O_ASYNC: u32 = 0o20000;
/// `O_DIRECT`.
pub const O_DIRECT: u32 = 0o40000;
/// `O_LARGEFILE` as the kernel stores it in `f_flags` (a 64-bit kernel forces it on every
/// `open`, and `F_GETFL` shows it; glibc defines it as 0 for 64-bit programs).
#[cfg(any(target_arch = "aarch64", target_arch = "arm"))]
pub const O_LARGEFILE: u32 = 0o400000;
/// `O_LARGEFILE` as the kernel stores it in `f_flags` (a 64-bit kernel forces it on every
/// `open`, and `F_GETFL` shows it; glibc defines it as 0 for 64-bit programs).
#[cfg(not(any(target_arch = "aarch64", target_arch = "arm")))]
pub const O_LARGEFILE: u32 = 0o100000;
/// `O_DIRECTORY`.
pub const O_DIRECTORY: u32 = 0o200000;
/// `O_NOFOLLOW`.
pub const O_NOFOLLOW: u32 = 0o400000;
/// `O_NOATIME`.
pub const O_NOATIME: u32 = 0o1000000;
/// `O_CLOEXEC`.
pub const O_CLOEXEC: u32 = 0o2000000;
/// `O_PATH`.
pub const O_PATH: u32 = 0o10000000;
/// `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`).
pub const O_TMPFILE: u32 = 0o20200000;
/// `__O_TMPFILE`, the bit that is not `O_DIRECTORY`.
pub const __O_TMPFILE: u32 = O_TMPFILE & !O_DIRECTORY;
/// `__O_SYNC`.
pub const __O_SYNC: u32 = O_SYNC & !O_DSYNC;

/// `VALID_OPEN_FLAGS`: everything `open` looks at; other bits are silently dropped.
pub const VALID_OPEN_FLAGS: u32 = O_ACCMODE
    | O_CREAT
    | O_EXCL
    | O_NOCTTY
    | O_TRUNC
    | O_APPEND
    | O_NONBLOCK
    | O_SYNC
    | O_DSYNC
    | O_ASYNC
    | O_DIRECT
    | O_LARGEFILE
    | O_DIRECTORY
    | O_NOFOLLOW
    | O_NOATIME
    | O_CLOEXEC
    | O_PATH
    | __O_TMPFILE;

/// `O_PATH_FLAGS`: the flags `O_PATH` keeps.
pub const O_PATH_FLAGS: u32 = O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC;

/// `SETFL_MASK`: the status flags `F_SETFL` may change. `O_ASYNC` changes only through the
/// file's `fasync` (fs/fcntl.c `setfl`).
pub const SETFL_MASK: u32 = O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME;

/// `AT_FDCWD`: "relative to the current directory" for the `*at` calls.
pub const AT_FDCWD: i32 = -100;
/// `AT_REMOVEDIR`: `unlinkat` removes a directory.
pub const AT_REMOVEDIR: u32 = 512;

/// `PATH_MAX`, counting the terminating NUL.
pub const PATH_MAX: usize = 4096;
/// `NAME_MAX`: the longest path component.
pub const NAME_MAX: usize = 255;

// === f_mode (include/linux/fs.h) ===

/// `FMODE_READ`: open for reading.
pub const FMODE_READ: u32 = 0x1;
/// `FMODE_WRITE`: open for writing.
pub const FMODE_WRITE: u32 = 0x2;
/// `FMODE_LSEEK`: `lseek` is meaningful (the file has `->llseek`); `ESPIPE` otherwise.
pub const FMODE_LSEEK: u32 = 0x4;
/// `FMODE_PREAD`: `pread` is allowed; `ESPIPE` otherwise.
pub const FMODE_PREAD: u32 = 0x8;
/// `FMODE_PWRITE`: `pwrite` is allowed; `ESPIPE` otherwise.
pub const FMODE_PWRITE: u32 = 0x10;
/// `FMODE_PATH`: an `O_PATH` file: hidden from `fdget` (read, write, ioctl... get `EBADF`).
pub const FMODE_PATH: u32 = 0x4000;
/// `FMODE_ATOMIC_POS`: position updates are serialised by `f_pos_lock` when the file is
/// shared (regular files and directories).
pub const FMODE_ATOMIC_POS: u32 = 0x8000;
/// `FMODE_CAN_READ`: the file has a read operation.
pub const FMODE_CAN_READ: u32 = 0x20000;
/// `FMODE_CAN_WRITE`: the file has a write operation.
pub const FMODE_CAN_WRITE: u32 = 0x40000;
/// `FMODE_OPENED`: the file was opened (always set on files this layer makes).
pub const FMODE_OPENED: u32 = 0x80000;
/// `FMODE_CREATED`: the open created the file (`F_CREATED_QUERY`).
pub const FMODE_CREATED: u32 = 0x100000;
/// `FMODE_STREAM`: no position at all (`stream_open`): read and write get no `pos`.
pub const FMODE_STREAM: u32 = 0x200000;
/// `FMODE_CAN_ODIRECT`: the file accepts `O_DIRECT`.
pub const FMODE_CAN_ODIRECT: u32 = 0x400000;
/// Not a kernel bit: the file can be the *input* of `sendfile` (the kernel asks for
/// `->splice_read`; this layer asks the implementation to declare it).
pub const FMODE_CAN_SPLICE_READ: u32 = 0x4000_0000;

/// The capability bits a [`FileOperations`](crate::FileOperations) implementation declares in
/// [`fmode`](crate::FileOperations::fmode); the rest of `f_mode` is derived from the open flags.
pub const FMODE_CAPS: u32 = FMODE_LSEEK
    | FMODE_PREAD
    | FMODE_PWRITE
    | FMODE_ATOMIC_POS
    | FMODE_CAN_READ
    | FMODE_CAN_WRITE
    | FMODE_STREAM
    | FMODE_CAN_ODIRECT
    | FMODE_CAN_SPLICE_READ;

// === file types (include/uapi/linux/stat.h) ===

/// `S_IFMT`: the file-type bits of a mode.
pub const S_IFMT: u32 = 61440;
/// `S_IFREG`: regular file.
pub const S_IFREG: u32 = 32768;
/// `S_IFDIR`: directory.
pub const S_IFDIR: u32 = 16384;
/// `S_IFCHR`: character device.
pub const S_IFCHR: u32 = 8192;
/// `S_IFBLK`: block device.
pub const S_IFBLK: u32 = 24576;
/// `S_IFIFO`: pipe.
pub const S_IFIFO: u32 = 4096;
/// `S_IFSOCK`: socket.
pub const S_IFSOCK: u32 = 49152;
/// `S_IFLNK`: symbolic link.
pub const S_IFLNK: u32 = 40960;
/// `S_IALLUGO`: every permission bit, setuid/setgid/sticky included.
pub const S_IALLUGO: u32 = 0o7777;

// === ioctl (include/uapi/asm-generic/ioctls.h, include/uapi/linux/fs.h) ===

/// `FIONREAD` (`TIOCINQ`, `SIOCINQ`): bytes readable now, as an `int`.
pub const FIONREAD: u32 = 0x541B;
/// `FIONBIO`: set or clear `O_NONBLOCK` from an `int`.
pub const FIONBIO: u32 = 0x5421;
/// `FIONCLEX`: clear close-on-exec.
pub const FIONCLEX: u32 = 0x5450;
/// `FIOCLEX`: set close-on-exec.
pub const FIOCLEX: u32 = 0x5451;
/// `FIOASYNC`: set or clear `O_ASYNC` through the file's `fasync`.
pub const FIOASYNC: u32 = 0x5452;
/// `FIOQSIZE`: bytes used by a directory, regular file or symlink, as a `loff_t`.
#[cfg(any(target_arch = "arm", target_arch = "s390x"))]
pub const FIOQSIZE: u32 = 0x545E;
/// `FIOQSIZE`: bytes used by a directory, regular file or symlink, as a `loff_t`.
#[cfg(not(any(target_arch = "arm", target_arch = "s390x")))]
pub const FIOQSIZE: u32 = 0x5460;
/// `FIBMAP` (`_IO(0x00, 1)`).
pub const FIBMAP: u32 = 1;
/// `FIGETBSZ` (`_IO(0x00, 2)`): the file system's block size, as an `int`.
pub const FIGETBSZ: u32 = 2;

/// `_IOC(dir, type, nr, size)` with the asm-generic layout.
pub const fn ioc(dir: u32, ty: u8, nr: u8, size: usize) -> u32 {
    (dir << 30) | ((size as u32 & 0x3FFF) << 16) | ((ty as u32) << 8) | nr as u32
}
/// `_IO(type, nr)`.
pub const fn io(ty: u8, nr: u8) -> u32 {
    ioc(0, ty, nr, 0)
}
/// `_IOR(type, nr, size)`: the driver writes `size` bytes to the argument.
pub const fn ior(ty: u8, nr: u8, size: usize) -> u32 {
    ioc(2, ty, nr, size)
}
/// `_IOW(type, nr, size)`: the driver reads `size` bytes from the argument.
pub const fn iow(ty: u8, nr: u8, size: usize) -> u32 {
    ioc(1, ty, nr, size)
}

/// `ENOIOCTLCMD` (515): a driver's "not my command". Never reaches user space: the ioctl
/// layer turns it into `ENOTTY`.
pub const ENOIOCTLCMD: Errno = Errno::new(515);
/// `ERESTARTSYS` (512), which `close` reports as `EINTR` (the slot is already gone).
pub const ERESTARTSYS: Errno = Errno::new(512);
/// `ERESTARTNOINTR` (513).
pub const ERESTARTNOINTR: Errno = Errno::new(513);
/// `ERESTARTNOHAND` (514).
pub const ERESTARTNOHAND: Errno = Errno::new(514);
/// `ERESTART_RESTARTBLOCK` (516).
pub const ERESTART_RESTARTBLOCK: Errno = Errno::new(516);

// === fcntl (include/uapi/linux/fcntl.h) ===

/// `F_DUPFD`.
pub const F_DUPFD: i32 = 0;
/// `F_GETFD`.
pub const F_GETFD: i32 = 1;
/// `F_SETFD`.
pub const F_SETFD: i32 = 2;
/// `F_GETFL`.
pub const F_GETFL: i32 = 3;
/// `F_SETFL`.
pub const F_SETFL: i32 = 4;
/// `F_LINUX_SPECIFIC_BASE`.
pub const F_LINUX_SPECIFIC_BASE: i32 = 1024;
/// `F_DUPFD_QUERY` (6.10): does `arg` refer to the same open file?
pub const F_DUPFD_QUERY: i32 = F_LINUX_SPECIFIC_BASE + 3;
/// `F_CREATED_QUERY` (6.12): did the open that made this file create it?
pub const F_CREATED_QUERY: i32 = F_LINUX_SPECIFIC_BASE + 4;
/// `F_DUPFD_CLOEXEC`.
pub const F_DUPFD_CLOEXEC: i32 = F_LINUX_SPECIFIC_BASE + 6;
/// `F_SETPIPE_SZ`.
pub const F_SETPIPE_SZ: i32 = F_LINUX_SPECIFIC_BASE + 7;
/// `F_GETPIPE_SZ`.
pub const F_GETPIPE_SZ: i32 = F_LINUX_SPECIFIC_BASE + 8;
/// `FD_CLOEXEC`.
pub const FD_CLOEXEC: u32 = fdtable::FD_CLOEXEC;

// === lseek ===

/// `SEEK_SET`.
pub const SEEK_SET: i32 = 0;
/// `SEEK_CUR`.
pub const SEEK_CUR: i32 = 1;
/// `SEEK_END`.
pub const SEEK_END: i32 = 2;
/// `SEEK_DATA`.
pub const SEEK_DATA: i32 = 3;
/// `SEEK_HOLE`.
pub const SEEK_HOLE: i32 = 4;
/// `SEEK_MAX`.
pub const SEEK_MAX: i32 = SEEK_HOLE;

// === poll (include/uapi/asm-generic/poll.h) ===

/// `POLLIN`.
pub const POLLIN: u16 = 0x001;
/// `POLLPRI`.
pub const POLLPRI: u16 = 0x002;
/// `POLLOUT`.
pub const POLLOUT: u16 = 0x004;
/// `POLLERR`.
pub const POLLERR: u16 = 0x008;
/// `POLLHUP`.
pub const POLLHUP: u16 = 0x010;
/// `POLLNVAL`.
pub const POLLNVAL: u16 = 0x020;
/// `POLLRDNORM`.
pub const POLLRDNORM: u16 = 0x040;
/// `POLLWRNORM`.
pub const POLLWRNORM: u16 = 0x100;
/// `POLLRDHUP`.
pub const POLLRDHUP: u16 = 0x2000;
/// `DEFAULT_POLLMASK`: what a file without `->poll` reports.
pub const DEFAULT_POLLMASK: u16 = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM;

// === sizes ===

/// `PAGE_SIZE` of the model (4 KiB).
pub const PAGE_SIZE: usize = 4096;
/// `MAX_RW_COUNT`: one read or write moves at most `INT_MAX & PAGE_MASK` bytes.
pub const MAX_RW_COUNT: usize = (i32::MAX as usize) & !(PAGE_SIZE - 1);
/// `UIO_MAXIOV`: the most iovecs one `readv`/`writev` takes.
pub const UIO_MAXIOV: usize = 1024;
/// `MAX_LFS_FILESIZE` on 64-bit: the largest file offset.
pub const MAX_LFS_FILESIZE: i64 = i64::MAX;

// === clone / unshare ===

/// `CLONE_FS`: share the current directory and umask.
pub const CLONE_FS: u64 = 512;
/// `CLONE_FILES`: share the descriptor table.
pub const CLONE_FILES: u64 = 1024;
/// `CLONE_THREAD`: same thread group (so the same rlimits).
pub const CLONE_THREAD: u64 = 65536;
/// `CLONE_SIGHAND`: required by `CLONE_THREAD`.
pub const CLONE_SIGHAND: u64 = 2048;
/// `CLONE_VM`: required by `CLONE_SIGHAND`.
pub const CLONE_VM: u64 = 256;

// === pipes, sockets, eventfd ===

/// `PIPE_BUF`: writes up to this size are atomic.
pub const PIPE_BUF: usize = 4096;
/// `PIPE_DEF_BUFFERS`: a new pipe has 16 page slots (64 KiB).
pub const PIPE_DEF_BUFFERS: usize = 16;
/// `pipe-max-size` (`/proc/sys/fs/pipe-max-size`), the unprivileged `F_SETPIPE_SZ` ceiling.
pub const PIPE_MAX_SIZE: usize = 1024 * 1024;
/// `O_NOTIFICATION_PIPE` (`O_EXCL`), accepted by `pipe2` on kernels with watch queues.
pub const O_NOTIFICATION_PIPE: u32 = O_EXCL;

/// `AF_UNIX`.
pub const AF_UNIX: i32 = 1;
/// `AF_INET`.
pub const AF_INET: i32 = 2;
/// `AF_INET6`.
pub const AF_INET6: i32 = 10;
/// `AF_MAX` on 6.x kernels.
pub const AF_MAX: i32 = 46;
/// `SOCK_STREAM`.
pub const SOCK_STREAM: i32 = 1;
/// `SOCK_DGRAM`.
pub const SOCK_DGRAM: i32 = 2;
/// `SOCK_SEQPACKET`.
pub const SOCK_SEQPACKET: i32 = 5;
/// `SOCK_RAW`.
pub const SOCK_RAW: i32 = 3;
/// `SOCK_MAX`: types at or above are `EINVAL`.
pub const SOCK_MAX: i32 = 11;
/// `SOCK_TYPE_MASK`.
pub const SOCK_TYPE_MASK: i32 = 0xf;
/// `SOCK_NONBLOCK`.
pub const SOCK_NONBLOCK: i32 = 2048;
/// `SOCK_CLOEXEC`.
pub const SOCK_CLOEXEC: i32 = 524288;

/// `EFD_SEMAPHORE`.
pub const EFD_SEMAPHORE: u32 = 1;
/// `EFD_NONBLOCK`.
pub const EFD_NONBLOCK: u32 = 2048;
/// `EFD_CLOEXEC`.
pub const EFD_CLOEXEC: u32 = 524288;

#[cfg(all(test, target_os = "linux", target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn ioctl_numbers_match_the_host_headers() {
        // Every constant above is Linux's number, checked against this Linux host's libc.
        assert_eq!(AF_INET, libc::AF_INET);
        assert_eq!(AF_INET6, libc::AF_INET6);
        assert_eq!(SOCK_RAW, libc::SOCK_RAW);
        assert_eq!(O_ACCMODE as i64, libc::O_ACCMODE as i64, "O_ACCMODE");
        assert_eq!(O_RDONLY as i64, libc::O_RDONLY as i64, "O_RDONLY");
        assert_eq!(O_WRONLY as i64, libc::O_WRONLY as i64, "O_WRONLY");
        assert_eq!(O_RDWR as i64, libc::O_RDWR as i64, "O_RDWR");
        assert_eq!(O_CREAT as i64, libc::O_CREAT as i64, "O_CREAT");
        assert_eq!(O_EXCL as i64, libc::O_EXCL as i64, "O_EXCL");
        assert_eq!(O_NOCTTY as i64, libc::O_NOCTTY as i64, "O_NOCTTY");
        assert_eq!(O_TRUNC as i64, libc::O_TRUNC as i64, "O_TRUNC");
        assert_eq!(O_APPEND as i64, libc::O_APPEND as i64, "O_APPEND");
        assert_eq!(O_NONBLOCK as i64, libc::O_NONBLOCK as i64, "O_NONBLOCK");
        assert_eq!(O_DSYNC as i64, libc::O_DSYNC as i64, "O_DSYNC");
        assert_eq!(O_SYNC as i64, libc::O_SYNC as i64, "O_SYNC");
        assert_eq!(O_ASYNC as i64, libc::O_ASYNC as i64, "O_ASYNC");
        assert_eq!(O_DIRECT as i64, libc::O_DIRECT as i64, "O_DIRECT");
        assert_eq!(O_DIRECTORY as i64, libc::O_DIRECTORY as i64, "O_DIRECTORY");
        assert_eq!(O_NOFOLLOW as i64, libc::O_NOFOLLOW as i64, "O_NOFOLLOW");
        assert_eq!(O_NOATIME as i64, libc::O_NOATIME as i64, "O_NOATIME");
        assert_eq!(O_CLOEXEC as i64, libc::O_CLOEXEC as i64, "O_CLOEXEC");
        assert_eq!(O_PATH as i64, libc::O_PATH as i64, "O_PATH");
        assert_eq!(O_TMPFILE as i64, libc::O_TMPFILE as i64, "O_TMPFILE");
        assert_eq!(AT_FDCWD as i64, libc::AT_FDCWD as i64, "AT_FDCWD");
        assert_eq!(
            AT_REMOVEDIR as i64,
            libc::AT_REMOVEDIR as i64,
            "AT_REMOVEDIR"
        );
        assert_eq!(S_IFMT as i64, libc::S_IFMT as i64, "S_IFMT");
        assert_eq!(S_IFREG as i64, libc::S_IFREG as i64, "S_IFREG");
        assert_eq!(S_IFDIR as i64, libc::S_IFDIR as i64, "S_IFDIR");
        assert_eq!(S_IFCHR as i64, libc::S_IFCHR as i64, "S_IFCHR");
        assert_eq!(S_IFBLK as i64, libc::S_IFBLK as i64, "S_IFBLK");
        assert_eq!(S_IFIFO as i64, libc::S_IFIFO as i64, "S_IFIFO");
        assert_eq!(S_IFSOCK as i64, libc::S_IFSOCK as i64, "S_IFSOCK");
        assert_eq!(S_IFLNK as i64, libc::S_IFLNK as i64, "S_IFLNK");
        assert_eq!(CLONE_FS as i64, libc::CLONE_FS as i64, "CLONE_FS");
        assert_eq!(CLONE_FILES as i64, libc::CLONE_FILES as i64, "CLONE_FILES");
        assert_eq!(
            CLONE_THREAD as i64,
            libc::CLONE_THREAD as i64,
            "CLONE_THREAD"
        );
        assert_eq!(
            CLONE_SIGHAND as i64,
            libc::CLONE_SIGHAND as i64,
            "CLONE_SIGHAND"
        );
        assert_eq!(CLONE_VM as i64, libc::CLONE_VM as i64, "CLONE_VM");
        assert_eq!(AF_UNIX as i64, libc::AF_UNIX as i64, "AF_UNIX");
        assert_eq!(SOCK_STREAM as i64, libc::SOCK_STREAM as i64, "SOCK_STREAM");
        assert_eq!(SOCK_DGRAM as i64, libc::SOCK_DGRAM as i64, "SOCK_DGRAM");
        assert_eq!(
            SOCK_SEQPACKET as i64,
            libc::SOCK_SEQPACKET as i64,
            "SOCK_SEQPACKET"
        );
        assert_eq!(
            SOCK_NONBLOCK as i64,
            libc::SOCK_NONBLOCK as i64,
            "SOCK_NONBLOCK"
        );
        assert_eq!(
            SOCK_CLOEXEC as i64,
            libc::SOCK_CLOEXEC as i64,
            "SOCK_CLOEXEC"
        );
        assert_eq!(
            EFD_SEMAPHORE as i64,
            libc::EFD_SEMAPHORE as i64,
            "EFD_SEMAPHORE"
        );
        assert_eq!(
            EFD_NONBLOCK as i64,
            libc::EFD_NONBLOCK as i64,
            "EFD_NONBLOCK"
        );
        assert_eq!(EFD_CLOEXEC as i64, libc::EFD_CLOEXEC as i64, "EFD_CLOEXEC");
        assert_eq!(FIONREAD as libc::Ioctl, libc::FIONREAD);
        assert_eq!(FIONBIO as libc::Ioctl, libc::FIONBIO);
        assert_eq!(FIOCLEX as libc::Ioctl, libc::FIOCLEX);
        assert_eq!(FIONCLEX as libc::Ioctl, libc::FIONCLEX);
        assert_eq!(FIOASYNC as libc::Ioctl, libc::FIOASYNC);
        assert_eq!(FIOQSIZE as libc::Ioctl, libc::FIOQSIZE);
        assert_eq!(F_DUPFD_CLOEXEC, libc::F_DUPFD_CLOEXEC);
        assert_eq!(F_GETPIPE_SZ, libc::F_GETPIPE_SZ);
        assert_eq!(F_SETPIPE_SZ, libc::F_SETPIPE_SZ);
        // _IOR('T', 1, int) as a driver would spell it.
        assert_eq!(ior(b'T', 1, 4), 0x8004_5401);
        assert_eq!(iow(b'T', 2, 8), 0x4008_5402);
        assert_eq!(io(0, 2), FIGETBSZ);
    }

    #[test]
    fn setfl_mask_is_linuxs() {
        assert_eq!(SETFL_MASK & O_ASYNC, 0);
        assert_eq!(SETFL_MASK & O_ACCMODE, 0);
        assert_ne!(VALID_OPEN_FLAGS & O_LARGEFILE, 0);
    }
}

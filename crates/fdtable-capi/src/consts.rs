//! The kernel's constants, with the kernel's values (x86-64 and the generic Linux ABI), under
//! an `FDT_` prefix so that the header can be included together with `<fcntl.h>`: the values
//! are the same, so a caller may pass either spelling.
//!
//! The literals are spelled out because cbindgen copies them into the header; the tests check
//! each against the value the Rust layer uses.

use std::ffi::{c_int, c_short, c_uint, c_ulong};

/// `O_RDONLY`: open for reading only.
pub const FDT_O_RDONLY: c_uint = 0;
/// `O_WRONLY`: open for writing only.
pub const FDT_O_WRONLY: c_uint = 1;
/// `O_RDWR`: open for reading and writing.
pub const FDT_O_RDWR: c_uint = 2;
/// `O_APPEND` (a status flag, `F_GETFL`/`F_SETFL`).
pub const FDT_O_APPEND: c_uint = 0x400;
/// `O_NONBLOCK` (a status flag, `F_GETFL`/`F_SETFL`, `FIONBIO`).
pub const FDT_O_NONBLOCK: c_uint = 0x800;
/// `O_CLOEXEC`: the close-on-exec flag of `fdt_install`, `fdt_get_unused_fd` and `fdt_dup3`.
pub const FDT_O_CLOEXEC: c_uint = 0x80000;
/// `O_PATH`: a file that is only a location. `fdt_fdget2`, `fdt_fget2`, read, write, lseek and
/// ioctl refuse it with `EBADF`, as Linux's `fdget` does; fcntl's descriptor commands and
/// `fdt_fstat` work.
pub const FDT_O_PATH: c_uint = 0x200000;

/// `FD_CLOEXEC`: the bit of `F_GETFD` / `F_SETFD`.
pub const FDT_FD_CLOEXEC: c_int = 1;

/// `F_DUPFD`: duplicate onto the lowest free fd `>= arg` (`EINVAL` if `arg` is at or past
/// the soft `RLIMIT_NOFILE`).
pub const FDT_F_DUPFD: c_int = 0;
/// `F_GETFD`: the close-on-exec bit.
pub const FDT_F_GETFD: c_int = 1;
/// `F_SETFD`: set or clear the close-on-exec bit (`FD_CLOEXEC` in `arg`).
pub const FDT_F_SETFD: c_int = 2;
/// `F_GETFL`: the access mode and status flags.
pub const FDT_F_GETFL: c_int = 3;
/// `F_SETFL`: set `O_APPEND`, `O_NONBLOCK`, `O_DIRECT`, `O_NOATIME`.
pub const FDT_F_SETFL: c_int = 4;
/// `F_DUPFD_QUERY`: 1 if `arg` refers to the same open file as the fd, 0 if not.
pub const FDT_F_DUPFD_QUERY: c_int = 1027;
/// `F_DUPFD_CLOEXEC`: `F_DUPFD` with close-on-exec set on the new fd.
pub const FDT_F_DUPFD_CLOEXEC: c_int = 1030;

/// `CLOSE_RANGE_UNSHARE`: unshare the table first (`fdt_close_range`).
pub const FDT_CLOSE_RANGE_UNSHARE: c_uint = 2;
/// `CLOSE_RANGE_CLOEXEC`: set close-on-exec over the range instead of closing.
pub const FDT_CLOSE_RANGE_CLOEXEC: c_uint = 4;

/// `FIONREAD`: passed to the file's `ioctl` callback, unless its `getattr` callback says it
/// is a regular file (`FDT_S_IFREG`): then the answer is its size minus the position.
pub const FDT_FIONREAD: c_uint = 0x541B;
/// `FIONBIO`: `arg` points to an `int`; sets or clears `O_NONBLOCK`.
pub const FDT_FIONBIO: c_uint = 0x5421;
/// `FIONCLEX`: clear close-on-exec on the fd.
pub const FDT_FIONCLEX: c_uint = 0x5450;
/// `FIOCLEX`: set close-on-exec on the fd.
pub const FDT_FIOCLEX: c_uint = 0x5451;
/// `FIOASYNC`: `arg` points to an `int`; the files made here have no `fasync`, so turning
/// `O_ASYNC` on is `ENOTTY`.
pub const FDT_FIOASYNC: c_uint = 0x5452;

/// `S_IFMT`: the file-type bits of `struct fdt_stat`'s `mode` (since 0.3). A `getattr`
/// callback sets one type: `st->mode = FDT_S_IFREG | 0644`.
pub const FDT_S_IFMT: u32 = 0o170000;
/// `S_IFSOCK`: a socket.
pub const FDT_S_IFSOCK: u32 = 0o140000;
/// `S_IFLNK`: a symbolic link.
pub const FDT_S_IFLNK: u32 = 0o120000;
/// `S_IFREG`: a regular file (`FDT_FIONREAD` and `FIOQSIZE` are answered from `getattr`).
pub const FDT_S_IFREG: u32 = 0o100000;
/// `S_IFBLK`: a block device.
pub const FDT_S_IFBLK: u32 = 0o060000;
/// `S_IFDIR`: a directory.
pub const FDT_S_IFDIR: u32 = 0o040000;
/// `S_IFCHR`: a character device.
pub const FDT_S_IFCHR: u32 = 0o020000;
/// `S_IFIFO`: a pipe (FIFO).
pub const FDT_S_IFIFO: u32 = 0o010000;

/// `SEEK_SET` (`fdt_lseek`).
pub const FDT_SEEK_SET: c_int = 0;
/// `SEEK_CUR`.
pub const FDT_SEEK_CUR: c_int = 1;
/// `SEEK_END`.
pub const FDT_SEEK_END: c_int = 2;

/// The soft `RLIMIT_NOFILE` of a table made by `fdt_files_new`.
pub const FDT_NOFILE_SOFT_DEFAULT: c_ulong = 1024;
/// The hard `RLIMIT_NOFILE` of a table made by `fdt_files_new`.
pub const FDT_NOFILE_HARD_DEFAULT: c_ulong = 4096;

/// `FDPUT_FPUT`: in `struct fdt_fd`'s `flags`, the lookup took a reference that `fdt_fdput`
/// drops.
pub const FDT_FDPUT_FPUT: c_uint = 1;
/// In `struct fdt_fd`'s `flags`: the lookup (`fdt_fdget_rcu`) holds an RCU read-side section
/// of the calling thread open, which `fdt_fdput` ends on that thread.
pub const FDT_FDPUT_RCU: c_uint = 2;

/// `POLLIN`: data to read (`fdt_poll`, the `poll` callback).
pub const FDT_POLLIN: c_short = 0x001;
/// `POLLPRI`: urgent data to read.
pub const FDT_POLLPRI: c_short = 0x002;
/// `POLLOUT`: writing would not block.
pub const FDT_POLLOUT: c_short = 0x004;
/// `POLLERR`: an error condition (always reported, asked for or not).
pub const FDT_POLLERR: c_short = 0x008;
/// `POLLHUP`: hung up (always reported).
pub const FDT_POLLHUP: c_short = 0x010;
/// `POLLNVAL`: the descriptor is not open (set by `fdt_poll`, never by a callback).
pub const FDT_POLLNVAL: c_short = 0x020;
/// `POLLRDNORM`: normal data to read.
pub const FDT_POLLRDNORM: c_short = 0x040;
/// `POLLRDBAND`: priority-band data to read.
pub const FDT_POLLRDBAND: c_short = 0x080;
/// `POLLWRNORM`: normal data may be written.
pub const FDT_POLLWRNORM: c_short = 0x100;
/// `POLLWRBAND`: priority-band data may be written.
pub const FDT_POLLWRBAND: c_short = 0x200;
/// `POLLRDHUP`: the peer closed its writing end (a stream socket).
pub const FDT_POLLRDHUP: c_short = 0x2000;

/// In `struct fdt_file_ops`'s `flags`: the file has no position (a pipe, a socket, a
/// character stream; the kernel's `stream_open`). `read`/`write` get `pos == NULL`,
/// `fdt_pread`/`fdt_pwrite` fail with `ESPIPE`, and `llseek` (if any) gets position 0.
pub const FDT_FILE_STREAM: c_uint = 1;
/// (Since 0.5.) In `struct fdt_file_ops`'s `flags`: no callback of the file ever waits (an
/// in-memory file, `/dev/null`), so `fdt_fdget_rcu` may lend it on a shared table without a
/// reference once it is looked up often. Without it the file is always looked up with a
/// reference, and a close never waits for lookups on other threads.
pub const FDT_FILE_NEVER_BLOCKS: c_uint = 2;

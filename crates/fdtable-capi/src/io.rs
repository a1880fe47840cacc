//! I/O through descriptors: read, write, pread, pwrite, lseek, ioctl, compat_ioctl, fstat and
//! poll, with the kernel's checks in the kernel's order before the file's callback runs.

use crate::file::{CFile, fdt_stat};
use crate::files::{CTask, fdt_files, handle};
use crate::guard::{PANICKED, guard, ret_i64, ret_size};
use fdtable::Errno;
use fdtable_vfs::uapi::{
    FMODE_CAN_READ, FMODE_CAN_WRITE, FMODE_PREAD, FMODE_PWRITE, FMODE_READ, FMODE_WRITE,
    MAX_RW_COUNT,
};
use fdtable_vfs::{HostMemory, NoMemory, PollFd};
use std::ffi::{c_int, c_long, c_short, c_uint, c_ulong, c_void};

/// Which transfer a NULL buffer was given to.
#[derive(Clone, Copy)]
enum Dir {
    Read,
    Write,
}

/// The answer for a NULL buffer with a non-zero count: the kernel's checks up to
/// `access_ok`, in its order (`EBADF` for the fd, `ESPIPE` for positional I/O on a stream,
/// `EBADF` for the access mode, `EINVAL` for a missing operation), then `EFAULT`.
fn null_buffer(task: &CTask, fd: i32, dir: Dir, offset: Option<i64>) -> Result<usize, Errno> {
    if offset.is_some_and(|o| o < 0) {
        return Err(Errno::EINVAL);
    }
    let f = task.fdget(fd)?;
    let m = f.f_mode();
    let (access, can, positional) = match dir {
        Dir::Read => (FMODE_READ, FMODE_CAN_READ, FMODE_PREAD),
        Dir::Write => (FMODE_WRITE, FMODE_CAN_WRITE, FMODE_PWRITE),
    };
    if offset.is_some() && m & positional == 0 {
        return Err(Errno::ESPIPE);
    }
    if m & access == 0 {
        return Err(Errno::EBADF);
    }
    if m & can == 0 {
        return Err(Errno::EINVAL);
    }
    Err(Errno::EFAULT)
}

/// Runs `op` over the caller's buffer as a mutable byte slice, clamped to `MAX_RW_COUNT` as
/// the kernel clamps every transfer (which keeps it far below `isize::MAX`). A zero count
/// with a NULL buffer becomes an empty slice that points at a real (local) byte, so callbacks
/// never see NULL.
///
/// # Safety
///
/// `buf` is non-NULL and valid for writes of `count` bytes (it may be uninitialised: the
/// slice is only handed to the file's `read` callback, which writes it through the raw
/// pointer, and nothing on the Rust side reads it), or `count` is 0.
unsafe fn with_buf_mut<R>(buf: *mut c_void, count: usize, op: impl FnOnce(&mut [u8]) -> R) -> R {
    let n = count.min(MAX_RW_COUNT);
    let mut local = [0u8; 1];
    let slice = if n == 0 || buf.is_null() {
        &mut local[..0]
    } else {
        // SAFETY: the caller's contract; `n <= count`.
        unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), n) }
    };
    op(slice)
}

/// As [`with_buf_mut`], for reads of the caller's buffer.
///
/// # Safety
///
/// `buf` is non-NULL and valid for reads of `count` initialised bytes, or `count` is 0.
unsafe fn with_buf<R>(buf: *const c_void, count: usize, op: impl FnOnce(&[u8]) -> R) -> R {
    let n = count.min(MAX_RW_COUNT);
    let local = [0u8; 1];
    let slice = if n == 0 || buf.is_null() {
        &local[..0]
    } else {
        // SAFETY: the caller's contract; `n <= count`.
        unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) }
    };
    op(slice)
}

/// `read(fd, buf, count)`: reads at the file's position and advances it (the position is
/// locked only while the file is shared). At most 0x7ffff000 bytes are read.
///
/// Returns the bytes read (0: end of file), `-EBADF` if `fd` is not open for reading (or is
/// `FDT_O_PATH`), `-EINVAL` if the file has no `read` callback or `files` is NULL, `-EFAULT`
/// for a NULL `buf` with a non-zero `count`, or the callback's `-errno`.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `buf` is NULL or valid for
/// writes of `count` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_read(
    files: *mut fdt_files,
    fd: c_int,
    buf: *mut c_void,
    count: usize,
) -> libc::ssize_t {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg() as isize;
    };
    guard(PANICKED.neg() as isize, || {
        if buf.is_null() && count != 0 {
            return ret_size(null_buffer(task, fd, Dir::Read, None));
        }
        // SAFETY: non-NULL and valid for `count` bytes, or `count` is 0 (the contract).
        ret_size(unsafe { with_buf_mut(buf, count, |b| task.read(fd, b)) })
    })
}

/// `write(fd, buf, count)`: writes at the file's position and advances it. Returns the bytes
/// written or `-errno`, with the errors of `fdt_read` (`-EBADF` if not open for writing).
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `buf` is NULL or valid for
/// reads of `count` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_write(
    files: *mut fdt_files,
    fd: c_int,
    buf: *const c_void,
    count: usize,
) -> libc::ssize_t {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg() as isize;
    };
    guard(PANICKED.neg() as isize, || {
        if buf.is_null() && count != 0 {
            return ret_size(null_buffer(task, fd, Dir::Write, None));
        }
        // SAFETY: non-NULL and valid for `count` bytes, or `count` is 0 (the contract).
        ret_size(unsafe { with_buf(buf, count, |b| task.write(fd, b)) })
    })
}

/// `pread64(fd, buf, count, offset)`: reads at `offset`; the file's position does not move.
/// Returns as `fdt_read`, and `-EINVAL` for a negative `offset` (checked first), `-ESPIPE`
/// for an `FDT_FILE_STREAM` file.
///
/// # Safety
///
/// As `fdt_read`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_pread(
    files: *mut fdt_files,
    fd: c_int,
    buf: *mut c_void,
    count: usize,
    offset: i64,
) -> libc::ssize_t {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg() as isize;
    };
    guard(PANICKED.neg() as isize, || {
        if buf.is_null() && count != 0 {
            return ret_size(null_buffer(task, fd, Dir::Read, Some(offset)));
        }
        // SAFETY: non-NULL and valid for `count` bytes, or `count` is 0 (the contract).
        ret_size(unsafe { with_buf_mut(buf, count, |b| task.pread64(fd, b, offset)) })
    })
}

/// `pwrite64(fd, buf, count, offset)`: writes at `offset`; the file's position does not
/// move. Returns as `fdt_write`, plus `fdt_pread`'s `-EINVAL` and `-ESPIPE`.
///
/// # Safety
///
/// As `fdt_write`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_pwrite(
    files: *mut fdt_files,
    fd: c_int,
    buf: *const c_void,
    count: usize,
    offset: i64,
) -> libc::ssize_t {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg() as isize;
    };
    guard(PANICKED.neg() as isize, || {
        if buf.is_null() && count != 0 {
            return ret_size(null_buffer(task, fd, Dir::Write, Some(offset)));
        }
        // SAFETY: non-NULL and valid for `count` bytes, or `count` is 0 (the contract).
        ret_size(unsafe { with_buf(buf, count, |b| task.pwrite64(fd, b, offset)) })
    })
}

/// `lseek(fd, offset, whence)`: the file's `llseek` callback computes the new position,
/// which becomes the file's.
///
/// Returns the new position, `-EBADF`, `-EINVAL` for `whence` above `SEEK_HOLE` (4) or NULL
/// `files`, `-ESPIPE` if the file has no `llseek` callback, or the callback's `-errno`.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_lseek(
    files: *mut fdt_files,
    fd: c_int,
    offset: i64,
    whence: c_int,
) -> i64 {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return i64::from(Errno::EINVAL.neg());
    };
    guard(i64::from(PANICKED.neg()), || {
        ret_i64(task.lseek(fd, offset, whence))
    })
}

/// `ioctl(fd, cmd, arg)`. The generic commands are answered here: `FDT_FIOCLEX`,
/// `FDT_FIONCLEX`, and those whose `arg` is a pointer in this process — `FDT_FIONBIO`,
/// `FDT_FIOASYNC` (read an `int`), `FIOQSIZE` (a `long long`: the blocks of a regular file,
/// directory or symlink, as the `getattr` callback reports them; `-ENOTTY` for other types or
/// without `getattr`), `FIGETBSZ` (an `int`: `getattr`'s `blksize`; `-EINVAL` when it is 0)
/// and, on a file whose `getattr` reports a regular file, `FDT_FIONREAD` (an `int`: its size
/// minus the position). Every other command goes to the file's `ioctl` callback with `arg`
/// unchanged.
///
/// Returns the result (a callback's value in -4095..-1 is `-errno`), `-EBADF` for a bad or
/// `FDT_O_PATH` fd, `-ENOTTY` if the file has no `ioctl` callback, `-EFAULT` if a generic
/// command's `arg` is NULL, or `-EINVAL` if `files` is NULL.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread. For `FDT_FIONBIO` and
/// `FDT_FIOASYNC`, `arg` is 0 or the address of an `int`; for `FIOQSIZE` and `FIGETBSZ`, and
/// for `FDT_FIONREAD` on a file whose `getattr` reports a regular file, it is 0 or valid for
/// writes of 8 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_ioctl(
    files: *mut fdt_files,
    fd: c_int,
    cmd: c_uint,
    arg: c_ulong,
) -> c_long {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return c_long::from(Errno::EINVAL.neg());
    };
    guard(c_long::from(PANICKED.neg()), || {
        // SAFETY: the contract above is `HostMemory`'s: the only addresses it is given are
        // the `arg` of a generic pointer command, NULL or valid for the command's size.
        let mut mem = unsafe { HostMemory::new() };
        ret_i64(task.ioctl(fd, cmd, arg as usize, &mut mem)) as c_long
    })
}

/// `compat_ioctl(fd, cmd, arg)`, for a 32-bit caller: the generic commands as `fdt_ioctl`,
/// then the file's `compat_ioctl` callback with the low 32 bits of `arg`. A 32-bit argument
/// is not an address in this process, so the generic commands that read or write through
/// `arg` (`FDT_FIONBIO`, `FDT_FIOASYNC`, ...) fail with `-EFAULT`; translate those to
/// `fdt_ioctl` with a host pointer. Returns as `fdt_ioctl`.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_compat_ioctl(
    files: *mut fdt_files,
    fd: c_int,
    cmd: c_uint,
    arg: c_ulong,
) -> c_long {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return c_long::from(Errno::EINVAL.neg());
    };
    guard(c_long::from(PANICKED.neg()), || {
        ret_i64(task.compat_ioctl(fd, cmd, arg as u32, &mut NoMemory)) as c_long
    })
}

/// `fstat(fd, st)`: the attributes of the file at `fd`, from its `getattr` callback (all zeros
/// without one). `FDT_O_PATH` files are answered too, as Linux answers them.
///
/// Returns 0; `-EBADF` if `fd` is not open; `-EFAULT` if `st` is NULL (after the descriptor
/// check, in the kernel's order); the callback's `-errno`; `-EINVAL` if `files` is NULL. `*st`
/// is written only on success.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `st` is NULL or valid for a
/// write of a `struct fdt_stat`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fstat(files: *mut fdt_files, fd: c_int, st: *mut fdt_stat) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        let f = match task.fdget_raw(fd) {
            Ok(f) => f,
            Err(e) => return e.neg(),
        };
        if st.is_null() {
            return Errno::EFAULT.neg();
        }
        // Every file made through this ABI is a `CFile`, whose callback's error is reported;
        // another file (none today) answers what its `getattr` says.
        let r = match f.ops_as::<CFile>() {
            Some(c) => c.stat(),
            None => Ok(fdt_stat::from(f.ops().getattr())),
        };
        match r {
            Ok(v) => {
                // SAFETY: `st` is non-NULL and valid for a write (the caller's contract).
                unsafe { st.write(v) };
                0
            }
            Err(e) => e.neg(),
        }
    })
}

/// One entry of `fdt_poll`: `struct pollfd`, with the same layout, so an array of `struct
/// pollfd` may be passed as one of these.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct fdt_pollfd {
    /// The descriptor; a negative one is skipped (`revents` 0).
    pub fd: c_int,
    /// The events asked for (`FDT_POLLIN`, `FDT_POLLOUT`, ...).
    pub events: c_short,
    /// The events ready: those asked for, plus `FDT_POLLERR` and `FDT_POLLHUP` always, or
    /// `FDT_POLLNVAL` alone for a descriptor that is not open (or is `FDT_O_PATH`).
    pub revents: c_short,
}

// `fdt_pollfd` is read as the layer's `PollFd` in place.
const _: () = {
    assert!(size_of::<fdt_pollfd>() == size_of::<PollFd>());
    assert!(align_of::<fdt_pollfd>() == align_of::<PollFd>());
    assert!(std::mem::offset_of!(fdt_pollfd, events) == std::mem::offset_of!(PollFd, events));
    assert!(std::mem::offset_of!(fdt_pollfd, revents) == std::mem::offset_of!(PollFd, revents));
};

/// `poll(fds, nfds, 0)`: the readiness of each descriptor now, from its file's `poll`
/// callback. Never waits: this layer has no wait queues (a runtime waits on its host's
/// objects, then asks again).
///
/// Returns the number of entries whose `revents` is not zero; `-EINVAL` if `nfds` is above
/// the soft `RLIMIT_NOFILE` (checked first, as Linux does) or `files` is NULL; `-EFAULT` if
/// `fds` is NULL and `nfds` is not 0.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `fds` is NULL or valid for
/// reads and writes of `nfds` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_poll(
    files: *mut fdt_files,
    fds: *mut fdt_pollfd,
    nfds: usize,
) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        if nfds as u64 > task.nofile() {
            return Errno::EINVAL.neg();
        }
        if nfds == 0 {
            return 0;
        }
        if fds.is_null() {
            return Errno::EFAULT.neg();
        }
        // SAFETY: non-NULL and valid for `nfds` entries (the caller's contract); `PollFd` has
        // `fdt_pollfd`'s layout (checked above) and every bit pattern is valid for both.
        let entries = unsafe { std::slice::from_raw_parts_mut(fds.cast::<PollFd>(), nfds) };
        // `nfds` is at most the soft limit, which `nr_open` bounds below `i32::MAX`.
        ret_size(task.poll(entries)) as c_int
    })
}

//! `struct fdt_files`: a task's handle on a descriptor table, its lifecycle (new, fork,
//! share, unshare, exec, put) and its limits.

use crate::guard::{PANICKED, guard, ret_unit, ulong};
use fdtable::Errno;
use fdtable_vfs::uapi::CLONE_FILES;
use fdtable_vfs::{DEFAULT_NOFILE, File, Namespace, OpenHow, Opened, Task};
use std::ffi::{c_int, c_ulong};
use std::ptr;
use std::sync::Arc;

/// The per-fd payload of a C table: a `uint64_t` beside each descriptor's close-on-exec bit
/// (see PAYLOAD in the header's introduction).
pub(crate) type Payload = u64;

/// A task whose table keeps a [`Payload`] per descriptor.
pub(crate) type CTask = Task<Payload>;

/// A descriptor table handle: one task's view of a table (the kernel's `current->files`),
/// with that task's own `RLIMIT_NOFILE`. Opaque; made by `fdt_files_new`, `fdt_files_fork2`
/// or `fdt_files_share2`, freed by `fdt_files_put`.
pub struct fdt_files {
    pub(crate) task: CTask,
}

/// The namespace of a C table: nothing can be opened by path; C callers make their files
/// with `fdt_file_new2` and install them.
struct NoPaths;

impl Namespace for NoPaths {
    fn open(&self, _at: Option<&File>, _path: &[u8], _how: &OpenHow) -> Result<Opened, Errno> {
        Err(Errno::ENOENT)
    }
}

fn boxed(task: CTask) -> *mut fdt_files {
    Box::into_raw(Box::new(fdt_files { task }))
}

/// Sets the C `errno` (only for the legacy calls that report failure with NULL). The
/// [`errno`] crate finds this thread's `errno` on every libc: `__errno_location` (glibc, musl),
/// `__error` (macOS, FreeBSD), `__errno` (OpenBSD, NetBSD, Android), `___errno` (illumos).
fn set_errno(e: Errno) {
    errno::set_errno(errno::Errno(e.raw()));
}

/// NULL with `errno` set to `e`.
fn null_with(e: Errno) -> *mut fdt_files {
    set_errno(e);
    ptr::null_mut()
}

/// Stores `value` in `*out` if `out` is not NULL.
///
/// # Safety
///
/// `out` is NULL or valid for a write of a `T`.
#[inline(always)]
pub(crate) unsafe fn put_out<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: non-NULL, so valid for a write (the caller's contract); `T` is `Copy` data
        // (a pointer or a plain struct), so nothing is dropped.
        unsafe { out.write(value) }
    }
}

/// The handle behind `files`, shared.
///
/// # Safety
///
/// `files` is NULL or a live handle not used mutably elsewhere for `'a`.
#[inline(always)]
pub(crate) unsafe fn handle<'a>(files: *const fdt_files) -> Option<&'a CTask> {
    // SAFETY: the caller's contract.
    unsafe { files.as_ref() }.map(|h| &h.task)
}

/// The handle behind `files`, exclusive.
///
/// # Safety
///
/// `files` is NULL or a live handle not used elsewhere for `'a`.
#[inline(always)]
pub(crate) unsafe fn handle_mut<'a>(files: *mut fdt_files) -> Option<&'a mut CTask> {
    // SAFETY: the caller's contract.
    unsafe { files.as_mut() }.map(|h| &mut h.task)
}

/// Makes a new, empty descriptor table and returns the caller's handle on it.
///
/// The table has no descriptors open; its soft/hard `RLIMIT_NOFILE` is 1024/4096
/// (`FDT_NOFILE_SOFT_DEFAULT`, `FDT_NOFILE_HARD_DEFAULT`).
///
/// Ownership: the caller owns the returned handle and frees it with `fdt_files_put`.
/// Cannot fail, so it returns the handle directly: like every allocation of a fixed size in
/// this library, running out of memory aborts the process (Rust's global allocator).
/// Allocations that grow with the table (its arrays and bitmaps) are fallible instead and
/// report `-ENOMEM`.
#[unsafe(no_mangle)]
pub extern "C" fn fdt_files_new() -> *mut fdt_files {
    guard(ptr::null_mut(), || {
        boxed(Task::with_fd_payload(Arc::new(NoPaths), DEFAULT_NOFILE))
    })
}

/// Frees a handle (`put_files_struct` for this task). If it was the table's last handle, every
/// descriptor still open is closed: each file's `flush` runs, and its `release` if that was
/// its last reference. (A live `struct fdt_reservation` holds a handle too: the table then
/// closes when the reservation ends.)
///
/// Ownership: consumes `files`. NULL is ignored.
///
/// # Safety
///
/// `files` is NULL or a live handle that no other thread is using, and it is not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_files_put(files: *mut fdt_files) {
    if files.is_null() {
        return;
    }
    guard((), || {
        // SAFETY: non-NULL, a handle from `boxed` (the caller's contract), freed once here.
        drop(unsafe { Box::from_raw(files) })
    })
}

/// `fork()`: makes a new table holding a copy of `files`'s descriptors (each open file gains
/// one reference; close-on-exec bits and payloads copied; reserved descriptors are not
/// copied), with a copy of its `RLIMIT_NOFILE`, and stores the caller's handle on it in
/// `*child`.
///
/// Ownership: `files` stays the caller's; the caller owns `*child` (free it with
/// `fdt_files_put`).
///
/// Returns 0; `-EINVAL` if `files` or `child` is NULL, `-EMFILE` if the copy would need a
/// table larger than `nr_open` allows (see `fdt_set_nr_open`), `-ENOMEM` if the copy's arrays
/// could not be allocated. On failure `*child` is set to NULL (if `child` is not NULL).
///
/// # Safety
///
/// `files` is NULL or a live handle that no other thread is using; `child` is NULL or valid
/// for a write of a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_files_fork2(
    files: *mut fdt_files,
    child: *mut *mut fdt_files,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { put_out(child, ptr::null_mut()) };
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    if child.is_null() {
        return Errno::EINVAL.neg();
    }
    guard(PANICKED.neg(), || match task.fork() {
        Ok(t) => {
            // SAFETY: `child` is non-NULL and valid for a write (the caller's contract).
            unsafe { child.write(boxed(t)) };
            0
        }
        Err(e) => e.neg(),
    })
}

/// Legacy form of `fdt_files_fork2` (deprecated): returns the new handle, or NULL with
/// `errno` set to what `fdt_files_fork2` returns negated (`EINVAL`, `EMFILE`, `ENOMEM`).
///
/// # Safety
///
/// `files` is NULL or a live handle that no other thread is using.
#[deprecated(note = "use fdt_files_fork2, which returns -errno")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_files_fork(files: *mut fdt_files) -> *mut fdt_files {
    let mut child = ptr::null_mut();
    // SAFETY: the caller's contract; `child` is a local.
    match unsafe { fdt_files_fork2(files, &mut child) } {
        0 => child,
        e => null_with(Errno::new(-e)),
    }
}

/// `clone(CLONE_FILES)`: makes another handle on the same table, for another task (or thread),
/// and stores it in `*handle`. Both handles see every change the other makes. The new handle
/// gets its own copy of `RLIMIT_NOFILE`, as a separate process sharing the table would have.
///
/// After this call, light lookups on either handle take a reference (`FDT_FDPUT_FPUT`), and
/// the two handles may be used from two threads at the same time.
///
/// Ownership: `files` stays the caller's; the caller owns `*handle` (free it with
/// `fdt_files_put`).
///
/// Returns 0, or `-EINVAL` if `files` or `handle` is NULL (`*handle` is then set to NULL if
/// `handle` is not NULL). Sharing itself cannot fail.
///
/// # Safety
///
/// `files` is NULL or a live handle that no other thread is using; `handle` is NULL or valid
/// for a write of a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_files_share2(
    files: *mut fdt_files,
    handle: *mut *mut fdt_files,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { put_out(handle, ptr::null_mut()) };
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle_mut(files) }) else {
        return Errno::EINVAL.neg();
    };
    if handle.is_null() {
        return Errno::EINVAL.neg();
    }
    guard(PANICKED.neg(), || match task.clone(CLONE_FILES) {
        Ok(t) => {
            // SAFETY: `handle` is non-NULL and valid for a write (the caller's contract).
            unsafe { handle.write(boxed(t)) };
            0
        }
        Err(e) => e.neg(),
    })
}

/// Legacy form of `fdt_files_share2` (deprecated): returns the new handle, or NULL with
/// `errno` set to `EINVAL` if `files` is NULL.
///
/// # Safety
///
/// `files` is NULL or a live handle that no other thread is using.
#[deprecated(note = "use fdt_files_share2, which returns -errno")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_files_share(files: *mut fdt_files) -> *mut fdt_files {
    let mut h = ptr::null_mut();
    // SAFETY: the caller's contract; `h` is a local.
    match unsafe { fdt_files_share2(files, &mut h) } {
        0 => h,
        e => null_with(Errno::new(-e)),
    }
}

/// `unshare(CLONE_FILES)`: if the table behind `*files` is shared with other handles, gives
/// this handle a private copy of it (as `fdt_files_fork2` copies). Does nothing to an unshared
/// table.
///
/// Reserved descriptors are free in the copy, as in the kernel's `dup_fd` (an open in
/// progress belongs to the table it was reserved in), and stay reserved in the shared table.
/// So install or give back, first, what was reserved through this handle
/// (`fdt_get_unused_fd`, or an `fdt_reservation`, which counts as a sharer): afterwards this
/// handle's `fdt_fd_install2`/`fdt_put_unused_fd2` of that number answer `-EBADF`.
///
/// Ownership: `*files` stays the caller's; use the value in `*files` after the call (this
/// implementation keeps the same handle address).
///
/// Returns 0, `-EINVAL` if `files` or `*files` is NULL, `-ENOMEM` or `-EMFILE` (the copy
/// needs more than `nr_open` slots).
///
/// # Safety
///
/// `files` is NULL or points to NULL or to a live handle that no other thread is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_unshare(files: *mut *mut fdt_files) -> c_int {
    // SAFETY: the caller's contract: `files` is NULL or valid for reads.
    let Some(&inner) = (unsafe { files.as_ref() }) else {
        return Errno::EINVAL.neg();
    };
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle_mut(inner) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || ret_unit(task.unshare(CLONE_FILES)))
}

/// The descriptor part of `execve`: unshares the table (as `fdt_unshare`), then closes every
/// close-on-exec descriptor (each file is flushed; released if that was its last reference).
/// Reserved descriptors are not closed; what `fdt_unshare` says of them holds here too (a
/// table copied for the exec has them free).
///
/// As in the kernel's `de_thread`, free the handles of the other threads of the exec'ing
/// process first, so that a table shared only with them is not copied.
///
/// Ownership: `files` stays the caller's.
///
/// Returns 0, `-EINVAL` if `files` is NULL, `-ENOMEM` / `-EMFILE` if the unshare failed
/// (nothing was closed then).
///
/// # Safety
///
/// `files` is NULL or a live handle that no other thread is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_exec(files: *mut fdt_files) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle_mut(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || ret_unit(task.exec()))
}

/// `setrlimit(RLIMIT_NOFILE)` for this handle: allocation (`fdt_install`, `fdt_dup`,
/// `F_DUPFD`, `fdt_get_unused_fd`) stays below `soft`, and `fdt_dup2`/`fdt_dup3` refuse
/// `newfd >= soft`. Other handles sharing the table keep their own limits.
///
/// Returns 0, `-EINVAL` if `files` is NULL or `soft > hard`, `-EPERM` if `hard` is above
/// `nr_open` (see `fdt_set_nr_open`; `RLIM_INFINITY` is above it). There are no credentials:
/// raising the hard limit is allowed.
///
/// # Safety
///
/// `files` is NULL or a live handle that no other thread is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_set_nofile(
    files: *mut fdt_files,
    soft: c_ulong,
    hard: c_ulong,
) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        ret_unit(task.setrlimit_nofile(ulong(soft), ulong(hard)))
    })
}

/// `getrlimit(RLIMIT_NOFILE)`: stores this handle's soft and hard limits in `*soft` and
/// `*hard` (either may be NULL if not wanted).
///
/// Returns 0, or `-EINVAL` if `files` is NULL.
///
/// # Safety
///
/// `files` is NULL or a live handle that no other thread is using; `soft` and `hard` are NULL
/// or valid for a write of an `unsigned long`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_get_nofile(
    files: *const fdt_files,
    soft: *mut c_ulong,
    hard: *mut c_ulong,
) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    let (cur, max) = task.getrlimit_nofile();
    // SAFETY: NULL or valid for a write (the caller's contract).
    if let Some(s) = unsafe { soft.as_mut() } {
        *s = cur as c_ulong;
    }
    // SAFETY: as above.
    if let Some(h) = unsafe { hard.as_mut() } {
        *h = max as c_ulong;
    }
    0
}

/// Sets `nr_open` (the kernel's `fs.nr_open` sysctl) for the whole process: no table grows
/// to hold a descriptor at or above it, and no hard `RLIMIT_NOFILE` may exceed it. The
/// default is 1048576.
///
/// Returns 0, or `-EINVAL` outside 64..=2147483584 (Linux's bounds on 64-bit).
#[unsafe(no_mangle)]
pub extern "C" fn fdt_set_nr_open(nr_open: c_ulong) -> c_int {
    guard(PANICKED.neg(), || {
        ret_unit(usize::try_from(nr_open).map_or(Err(Errno::EINVAL), fdtable::set_nr_open))
    })
}

/// The current `nr_open` (see `fdt_set_nr_open`).
#[unsafe(no_mangle)]
pub extern "C" fn fdt_get_nr_open() -> c_ulong {
    fdtable::nr_open() as c_ulong
}

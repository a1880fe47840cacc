//! Descriptor calls: install (one step, at a chosen fd, or reserve then install), close, the
//! dup family and the atomic renumber, fcntl, close_range, the lookups (light `fdt_fdget2`,
//! counted `fdt_fget2`) and the listing (`fdt_next_open_fd`).

use crate::consts::{FDT_FDPUT_FPUT, FDT_FDPUT_RCU};
use crate::file::{fdt_file, from_c, into_c};
use crate::files::{CTask, fdt_files, handle, handle_mut, put_out};
use crate::guard::{PANICKED, guard, ret_int, ret_unit, ulong};
use crate::payload::{fdt_fd_install_with, fdt_install_at_with, fdt_install_with};
use fdtable::{Errno, FdState, RcuFdEnd};
use fdtable_vfs::uapi::{FMODE_PATH, O_CLOEXEC};
use std::ffi::{c_int, c_uint, c_ulong};
use std::mem::MaybeUninit;
use std::ptr;

/// The result of a light lookup (`fdt_fdget2`), the kernel's `struct fd`: the file, and
/// whether the lookup took a reference that `fdt_fdput` must drop (`FDT_FDPUT_FPUT` in
/// `flags`). Use `fdt_fd_file` to read the file; pass the whole value to `fdt_fdput`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct fdt_fd {
    /// The file, NULL if the descriptor was not open.
    pub file: *mut fdt_file,
    /// `FDT_FDPUT_FPUT` if a reference was taken, `FDT_FDPUT_RCU` if an RCU read-side
    /// section is held (`fdt_fdget_rcu`); 0 otherwise.
    pub flags: c_uint,
}

impl fdt_fd {
    pub(crate) const EMPTY: fdt_fd = fdt_fd {
        file: ptr::null_mut(),
        flags: 0,
    };
}

/// Installs `file` at the lowest free descriptor below the soft `RLIMIT_NOFILE` (the kernel's
/// `FD_ADD`: `get_unused_fd_flags` + `fd_install`). `FDT_O_CLOEXEC` in `flags` sets
/// close-on-exec; other bits are ignored. The descriptor's payload is 0 (`fdt_install_with`
/// gives one).
///
/// Ownership: consumes the caller's reference to `file`, also on failure (the file is put
/// then, and released if that was its last reference).
///
/// Returns the descriptor, `-EMFILE` if none is free, `-ENOMEM`, or `-EINVAL` if `files` or
/// `file` is NULL.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `file` is NULL or a file on
/// which the caller owns a reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_install(
    files: *mut fdt_files,
    file: *mut fdt_file,
    flags: c_uint,
) -> c_int {
    // SAFETY: the caller's contract, which is `fdt_install_with`'s.
    unsafe { fdt_install_with(files, file, flags, 0) }
}

/// Installs `file` at the descriptor `fd` the caller chose (the kernel's `replace_fd`, as
/// seccomp's `SECCOMP_ADDFD_FLAG_SETFD` uses it; WAMR's `fd_table_insert_existing`, a
/// checkpoint or journal restore). If `fd` was open, what it referred to is closed first, as
/// `fdt_dup2` closes it (flushed, error ignored). `FDT_O_CLOEXEC` in `flags` sets
/// close-on-exec, else it is clear. The descriptor's payload is 0 (`fdt_install_at_with`
/// gives one).
///
/// Ownership: consumes the caller's reference to `file`, also on failure (the file is put
/// then, and released if that was its last reference).
///
/// Returns `fd`; `-EINVAL` if `files` or `file` is NULL or `flags` has a bit other than
/// `FDT_O_CLOEXEC`; `-EBADF` if `fd` is negative or at or past the soft `RLIMIT_NOFILE`;
/// `-EMFILE` if `fd` is at or past `nr_open` (the table cannot grow there; possible after
/// `fdt_set_nr_open` lowered it); `-ENOMEM` if the table could not grow; `-EBUSY` if `fd` is
/// reserved (`fdt_get_unused_fd`, `fdt_reserve_owned`). On failure the table is unchanged.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `file` is NULL or a file on
/// which the caller owns a reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_install_at(
    files: *mut fdt_files,
    fd: c_int,
    file: *mut fdt_file,
    flags: c_uint,
) -> c_int {
    // SAFETY: the caller's contract, which is `fdt_install_at_with`'s.
    unsafe { fdt_install_at_with(files, fd, file, flags, 0) }
}

/// Reserves the lowest free descriptor below the soft `RLIMIT_NOFILE` (the kernel's
/// `get_unused_fd_flags`, the first step of an open): the descriptor is taken, so other
/// allocations skip it and `fdt_dup2` onto it fails with `-EBUSY`, but it refers to nothing
/// yet. `FDT_O_CLOEXEC` in `flags` sets close-on-exec; other bits are ignored.
///
/// Then either `fdt_fd_install2` a file there, or give it back with `fdt_put_unused_fd2` (a
/// failed open), on this handle. A fork does not copy reserved descriptors. For an open that
/// completes on another thread, `fdt_reserve_owned` gives a reservation that can travel.
///
/// Returns the descriptor, `-EMFILE`, `-ENOMEM`, or `-EINVAL` if `files` is NULL.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_get_unused_fd(files: *mut fdt_files, flags: c_uint) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        ret_int(
            task.files()
                .alloc_fd(0, task.nofile(), flags & O_CLOEXEC)
                .map(|fd| fd as c_int),
        )
    })
}

/// Gives back a descriptor reserved by `fdt_get_unused_fd` (the kernel's `put_unused_fd`, the
/// failed open's way out): it is free again.
///
/// Returns 0; `-EBADF` if `fd` is not reserved (free, installed, negative, out of range;
/// nothing changes), `-EINVAL` if `files` is NULL. Any reserved number is taken, one held by
/// an `fdt_reservation` (`fdt_reserve_owned`) too, as in the kernel: that is a misuse, which
/// the reservation's `fdt_reservation_install` then reports (`-EBADF`).
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_put_unused_fd2(files: *mut fdt_files, fd: c_int) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        // The reservation is the caller's: no other call frees or installs it meanwhile
        // (dup2 onto it is EBUSY, close is EBADF, close_range and exec skip it).
        if task.files().fd_state(fd as u32) != FdState::Reserved {
            return Errno::EBADF.neg();
        }
        task.files().put_unused_fd(fd as u32);
        0
    })
}

/// Legacy form of `fdt_put_unused_fd2` (deprecated): the same, silent about a descriptor
/// that was not reserved (or NULL `files`).
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[deprecated(note = "use fdt_put_unused_fd2, which returns -errno")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_put_unused_fd(files: *mut fdt_files, fd: c_int) {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return;
    };
    guard((), || task.files().put_unused_fd(fd as u32))
}

/// Installs `file` at `fd`, which `fdt_get_unused_fd` reserved (the kernel's `fd_install`).
/// The descriptor's payload is 0 (`fdt_fd_install_with` gives one).
///
/// Ownership: consumes the caller's reference to `file` in every case. On failure nothing is
/// installed and the reference is put (the file is released if that was its last reference).
///
/// Returns 0; `-EBADF` if `fd` is not reserved (free, installed, negative, out of range; it
/// stays as it was), `-EINVAL` if `files` or `file` is NULL. As with `fdt_put_unused_fd`, a
/// number an `fdt_reservation` holds is taken too (a misuse its install reports).
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `file` is NULL or a file on
/// which the caller owns a reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fd_install2(
    files: *mut fdt_files,
    fd: c_int,
    file: *mut fdt_file,
) -> c_int {
    // SAFETY: the caller's contract, which is `fdt_fd_install_with`'s.
    unsafe { fdt_fd_install_with(files, fd, file, 0) }
}

/// Legacy form of `fdt_fd_install2` (deprecated): the same, silent about its failures (the
/// reference is put all the same). NULL `file` is ignored.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `file` is NULL or a file on
/// which the caller owns a reference.
#[deprecated(note = "use fdt_fd_install2, which returns -errno")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fd_install(files: *mut fdt_files, fd: c_int, file: *mut fdt_file) {
    // SAFETY: the caller's contract.
    unsafe { fdt_fd_install2(files, fd, file) };
}

/// `close(fd)`: the descriptor is freed, the file flushed (its `flush` callback), and the
/// table's reference dropped (the file is released if that was its last reference).
///
/// Returns 0, the flush's `-errno` (the descriptor is closed anyway), `-EBADF` if `fd` is not
/// open (a reserved descriptor stays reserved), or `-EINVAL` if `files` is NULL.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_close(files: *mut fdt_files, fd: c_int) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle_mut(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || ret_unit(task.close(fd)))
}

/// `dup(fd)`: the lowest free descriptor now refers to `fd`'s file, close-on-exec clear, with
/// a copy of `fd`'s payload.
///
/// Returns the new descriptor, `-EBADF`, `-EMFILE`, or `-EINVAL` if `files` is NULL.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_dup(files: *mut fdt_files, fd: c_int) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || ret_int(task.dup(fd)))
}

/// `dup2(oldfd, newfd)`: `newfd` now refers to `oldfd`'s file, close-on-exec clear, with a
/// copy of `oldfd`'s payload; what `newfd` referred to is closed first (flushed, error
/// ignored). `dup2(fd, fd)` returns `fd` if it is open.
///
/// Returns `newfd`, `-EBADF` if `oldfd` is not open or `newfd` is negative or at or past the
/// soft `RLIMIT_NOFILE`, `-EBUSY` if `newfd` is reserved (`fdt_get_unused_fd`,
/// `fdt_reserve_owned`), `-ENOMEM`, or `-EINVAL` if `files` is NULL.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_dup2(files: *mut fdt_files, oldfd: c_int, newfd: c_int) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle_mut(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || ret_int(task.dup2(oldfd, newfd)))
}

/// `dup3(oldfd, newfd, flags)`: `fdt_dup2` with `FDT_O_CLOEXEC` as the only allowed flag
/// (sets close-on-exec on `newfd`).
///
/// Returns `newfd`, `-EINVAL` for another flag or `oldfd == newfd` (or `files` NULL), else as
/// `fdt_dup2`.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_dup3(
    files: *mut fdt_files,
    oldfd: c_int,
    newfd: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle_mut(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        ret_int(task.dup3(oldfd, newfd, flags as u32))
    })
}

/// Moves the file at `from` to `to` in one step (WASI's `fd_renumber`; `dup2(from, to)`
/// then `close(from)` under one lock hold): no other handle ever sees the file at both
/// numbers, or at neither. Its per-fd payload moves with it; `to`'s close-on-exec bit is clear
/// (as after `fdt_dup2`); what `to` referred to is closed first, as `fdt_dup2` closes it
/// (flushed, error ignored). The moved file is not flushed: no descriptor to it is closed.
/// `fdt_renumber(files, fd, fd)` returns `fd` if it is open.
///
/// Returns `to`; `-EBADF` if `from` is not open or `to` is negative or at or past the soft
/// `RLIMIT_NOFILE`; `-EBUSY` if `to` is reserved (`fdt_get_unused_fd`, `fdt_reserve_owned`);
/// `-ENOMEM`; `-EINVAL` if `files` is NULL. On failure nothing changes.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_renumber(files: *mut fdt_files, from: c_int, to: c_int) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle_mut(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        let nofile = task.nofile();
        // Negative descriptors are huge `unsigned int`s, past any limit: `EBADF`.
        ret_int(
            task.files_mut()
                .renumber(from as u32, to as u32, nofile)
                .map(|fd| fd as c_int),
        )
    })
}

/// `fdt_renumber` onto a descriptor that must already be open, as WASI preview 1's
/// `fd_renumber` requires (it replaces an open descriptor and never creates one); the check
/// and the move are one step, so no other handle can close `to` in between.
///
/// Returns `to`; `-EBADF` if `from` or `to` is not open — free, negative, at or past the
/// limit, or reserved (an open still in progress has not returned its number, so it is not an
/// open descriptor yet: WASI's answer; `fdt_renumber` says `-EBUSY` there, as `dup2` does);
/// `-EINVAL` if `files` is NULL. On failure nothing changes (a reservation stays).
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_renumber_onto(files: *mut fdt_files, from: c_int, to: c_int) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle_mut(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        let nofile = task.nofile();
        ret_int(
            task.files_mut()
                .renumber_onto(from as u32, to as u32, nofile)
                .map(|fd| fd as c_int),
        )
    })
}

/// `fcntl(fd, cmd, arg)`:
///
/// - `FDT_F_DUPFD` / `FDT_F_DUPFD_CLOEXEC`: the lowest free descriptor `>= arg`, with a copy
///   of `fd`'s payload; `-EINVAL` if `arg` is at or past the soft `RLIMIT_NOFILE`, `-EMFILE`
///   if none is free.
/// - `FDT_F_GETFD` / `FDT_F_SETFD`: the close-on-exec bit (`FDT_FD_CLOEXEC`).
/// - `FDT_F_GETFL` / `FDT_F_SETFL`: access mode and status flags (`O_APPEND`, `O_NONBLOCK`
///   change; `O_DIRECT` is `-EINVAL` on these files).
/// - `FDT_F_DUPFD_QUERY`: 1 if `arg` refers to the same open file, 0 if not.
/// - Anything else: `-EINVAL`. On an `FDT_O_PATH` file, only the dup, query, `F_GETFD`,
///   `F_SETFD` and `F_GETFL` commands work (others: `-EBADF`).
///
/// `arg` is used as an `int` (its low 32 bits), as Linux does for these commands.
///
/// Returns the command's result, `-EBADF` if `fd` is not open, or `-EINVAL` if `files` is
/// NULL.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fcntl(
    files: *mut fdt_files,
    fd: c_int,
    cmd: c_int,
    arg: c_ulong,
) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        ret_int(task.fcntl(fd, cmd, ulong(arg)).map(|v| v as c_int))
    })
}

/// `close_range(first, last, flags)`: closes every open descriptor in `first..=last` (`last`
/// may be `~0U`: to the end), or with `FDT_CLOSE_RANGE_CLOEXEC` marks them close-on-exec;
/// `FDT_CLOSE_RANGE_UNSHARE` first gives this handle a private copy of a shared table.
/// Reserved descriptors are left alone. Flush errors are ignored.
///
/// Returns 0, `-EINVAL` for other flags, `first > last` or NULL `files`; with
/// `FDT_CLOSE_RANGE_UNSHARE` on a shared table, the copy's errors, as `fdt_unshare`: `-EMFILE`
/// when what it must keep does not fit below `nr_open`, `-ENOMEM`.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_close_range(
    files: *mut fdt_files,
    first: c_uint,
    last: c_uint,
    flags: c_uint,
) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle_mut(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        ret_unit(task.close_range(first, last, flags))
    })
}

/// The light lookup itself (`Task::fdget`, spelled out so that both entry points inline the
/// table's fast path: with two callers LLVM keeps `Task::fdget` out of line).
#[inline(always)]
fn light_lookup(task: &CTask, fd: c_int) -> Result<fdt_fd, Errno> {
    let f = task.files().fdget(fd as u32).ok_or(Errno::EBADF)?;
    if f.f_mode() & FMODE_PATH != 0 {
        return Err(Errno::EBADF);
    }
    // A borrowed result stays valid while the slot holds the file, which the documented rule
    // guarantees; an owned one carries its reference to `fdt_fdput`.
    let (file, owned) = f.into_raw();
    Ok(fdt_fd {
        file: file.cast_mut().cast(),
        flags: if owned { FDT_FDPUT_FPUT } else { 0 },
    })
}

/// The light lookup (the kernel's `fdget`): the file at `fd`, for the duration of one
/// operation, stored in `*f`. Always pair a successful one with `fdt_fdput(*f)`, and read
/// the file with `fdt_fd_file(*f)`.
///
/// If this handle is its table's only handle, no lock is taken and no reference is counted:
/// the file is *borrowed* from the table, and the result is valid only until the next call on
/// this handle that could close the descriptor or share the table (`fdt_close`, `fdt_dup2`,
/// `fdt_dup3`, `fdt_renumber`, `fdt_renumber_onto`, `fdt_install_at` and its `_with` form,
/// `fdt_close_range`, `fdt_exec`, `fdt_unshare`, `fdt_files_share2`, `fdt_reserve_owned`,
/// `fdt_files_put`); `fdt_fdput` it before any of those. To keep the
/// file longer, take a reference with `fdt_file_get`. If the table is shared, the lookup
/// takes a reference (`FDT_FDPUT_FPUT`), which `fdt_fdput` drops.
///
/// Returns 0; `-EBADF` if `fd` is not open (free, reserved, negative, out of range) or is an
/// `FDT_O_PATH` file; `-EINVAL` if `files` or `f` is NULL. On failure `*f` is the empty
/// result (NULL file, no flags; `fdt_fdput` of it does nothing).
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `f` is NULL or valid for a
/// write of a `struct fdt_fd`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fdget2(files: *mut fdt_files, fd: c_int, f: *mut fdt_fd) -> c_int {
    // SAFETY: the caller's contract, forwarded.
    unsafe { lookup_entry(files, fd, f, fdget2_shared) }
}

/// A lookup entry point: the arguments checked once, the light path inline (a light
/// handle's lookups of every kind are its light one), `shared` out of line for the rest.
///
/// # Safety
///
/// As the entry points: `files` is NULL or a live handle not in use by another thread; `f`
/// is NULL or valid for a write of a `struct fdt_fd`.
#[inline(always)]
unsafe fn lookup_entry(
    files: *mut fdt_files,
    fd: c_int,
    f: *mut fdt_fd,
    shared: fn(&CTask, c_int, &mut MaybeUninit<fdt_fd>) -> c_int,
) -> c_int {
    // SAFETY: the caller's contract, forwarded.
    let Some((task, out)) = (unsafe { lookup_args(files, f) }) else {
        return bad_lookup_args(f);
    };
    if task.files().is_light() {
        return light_into(task, fd, out);
    }
    shared(task, fd, out)
}

/// `fdt_fdget2` on a handle that is not light, out of line (see `lookup_args`).
#[inline(never)]
fn fdget2_shared(task: &CTask, fd: c_int, out: &mut MaybeUninit<fdt_fd>) -> c_int {
    store_lookup(out, guard(Err(PANICKED), || light_lookup(task, fd)))
}

/// A lookup's arguments: the handle and the result's place, or `None` if either is NULL.
///
/// The lookups (`fdt_fdget2`, `fdt_fdget_rcu`) take the light path inline and every other
/// one out of line with the arguments checked once, so that the light path has no call and
/// nothing to save: in one body with the others, `fdt_fdget2` measured 57 instructions per
/// unshared lookup in `bench/fdget.c`, most of them registers saved for the other paths'
/// calls, against 42 now.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `f` is NULL or valid for a
/// write of a `struct fdt_fd`.
#[inline(always)]
unsafe fn lookup_args<'a>(
    files: *mut fdt_files,
    f: *mut fdt_fd,
) -> Option<(&'a CTask, &'a mut MaybeUninit<fdt_fd>)> {
    // SAFETY: the caller's contract: NULL or valid for a write.
    let out = unsafe { f.cast::<MaybeUninit<fdt_fd>>().as_mut() }?;
    // SAFETY: the caller's contract.
    let task = unsafe { handle(files) }?;
    Some((task, out))
}

/// A lookup with a NULL argument: `-EINVAL`, and the empty result in `*f` if `f` is not NULL.
#[cold]
#[inline(never)]
fn bad_lookup_args(f: *mut fdt_fd) -> c_int {
    // SAFETY: the lookup's contract: `f` is NULL or valid for a write.
    if let Some(out) = unsafe { f.cast::<MaybeUninit<fdt_fd>>().as_mut() } {
        out.write(fdt_fd::EMPTY);
    }
    Errno::EINVAL.neg()
}

/// The light lookup (the handle is light), stored: with no call (see `lookup_args`).
#[inline(always)]
fn light_into(task: &CTask, fd: c_int, out: &mut MaybeUninit<fdt_fd>) -> c_int {
    store_lookup(out, light_lookup(task, fd))
}

/// A lookup's result in `*out` (the empty one on failure), and 0 or `-errno`.
#[inline(always)]
fn store_lookup(out: &mut MaybeUninit<fdt_fd>, r: Result<fdt_fd, Errno>) -> c_int {
    let (r, v) = match r {
        Ok(v) => (0, v),
        Err(e) => (e.neg(), fdt_fd::EMPTY),
    };
    out.write(v);
    r
}

/// Legacy form of `fdt_fdget2` (deprecated): returns the result, whose file is NULL where
/// `fdt_fdget2` fails (the error is then `-EBADF`, or `-EINVAL` for NULL `files`). It stays
/// for the life of SONAME 0, and returning the result in registers makes it the cheaper of
/// the two (25 instructions per unshared lookup and its `fdt_fdput` against `fdt_fdget2`'s
/// 42, bench/fdget.c under callgrind): a hot loop may keep it.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[deprecated(note = "use fdt_fdget2, which returns -errno")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fdget(files: *mut fdt_files, fd: c_int) -> fdt_fd {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return fdt_fd::EMPTY;
    };
    if task.files().is_light() {
        return light_lookup(task, fd).unwrap_or(fdt_fd::EMPTY);
    }
    fdget_shared(task, fd)
}

/// `fdt_fdget` on a handle that is not light, out of line (as `fdget2_shared`).
#[inline(never)]
fn fdget_shared(task: &CTask, fd: c_int) -> fdt_fd {
    guard(fdt_fd::EMPTY, || {
        light_lookup(task, fd).unwrap_or(fdt_fd::EMPTY)
    })
}

/// The file of a light lookup, or NULL if the descriptor was not open.
///
/// Ownership: borrowed from `fd` (valid until `fdt_fdput(fd)`, and, for a lookup that took no
/// reference, under `fdt_fdget2`'s rule).
#[unsafe(no_mangle)]
pub extern "C" fn fdt_fd_file(fd: fdt_fd) -> *mut fdt_file {
    fd.file
}

/// The lookup for hot paths on a shared table (the kernel's `fdget` under `rcu_read_lock`):
/// the file at `fd` stored in `*f`, as `fdt_fdget2`, but on a shared table with no reference
/// and no lock: the calling thread enters an RCU read-side section (`FDT_FDPUT_RCU` in
/// `f->flags`) that keeps the file from being released until `fdt_fdput(*f)` ends it. On a
/// table only this handle uses it borrows as `fdt_fdget2` does. A reference
/// (`FDT_FDPUT_FPUT`) comes instead for a file whose operations lack
/// `FDT_FILE_NEVER_BLOCKS`, for one looked up only a few times so far, and on a thread the
/// library cannot register.
///
/// While the section is open: call `fdt_fdput(*f)` **on the same thread**, from code built
/// with the 0.5 header or later (an older header's inline `fdt_fdput` does not know the flag
/// and would leave the section open); do not block (every release of a lent file, on any
/// thread, waits for the section to end); other calls may be made, sections nest, and a file
/// closed meanwhile (by any handle) stays valid until the `fdt_fdput`, which may then run its
/// release (and wait for other threads' sections). To keep the file longer, or across
/// something that may block, take a reference with `fdt_fd_get_file` (not `fdt_file_get`,
/// which cannot tell a file whose last reference has gone) and `fdt_fdput` at once.
///
/// Returns 0; `-EBADF` if `fd` is not open (free, reserved, negative, out of range) or is an
/// `FDT_O_PATH` file; `-EINVAL` if `files` or `f` is NULL. On failure `*f` is the empty
/// result and no section is open.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `f` is NULL or valid for a
/// write of a `struct fdt_fd`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fdget_rcu(files: *mut fdt_files, fd: c_int, f: *mut fdt_fd) -> c_int {
    // SAFETY: the caller's contract, forwarded.
    unsafe { lookup_entry(files, fd, f, fdget_rcu_shared) }
}

/// `fdt_fdget_rcu` on a handle that is not light, out of line (see `lookup_args`).
#[inline(never)]
fn fdget_rcu_shared(task: &CTask, fd: c_int, out: &mut MaybeUninit<fdt_fd>) -> c_int {
    store_lookup(out, guard(Err(PANICKED), || rcu_lookup(task, fd)))
}

/// The RCU lookup itself: the kernel's `O_PATH` refusal, then the borrow split into the
/// C result.
#[inline(always)]
fn rcu_lookup(task: &CTask, fd: c_int) -> Result<fdt_fd, Errno> {
    let l = task.files().fdget_rcu(fd as u32).ok_or(Errno::EBADF)?;
    if l.f_mode() & FMODE_PATH != 0 {
        return Err(Errno::EBADF);
    }
    let (file, end) = l.into_raw();
    let flags = match end {
        RcuFdEnd::Light => 0,
        RcuFdEnd::Counted => FDT_FDPUT_FPUT,
        RcuFdEnd::Section => FDT_FDPUT_RCU,
    };
    Ok(fdt_fd {
        file: file.cast_mut().cast(),
        flags,
    })
}

/// A reference to the file of a lookup's result (`fdt_fdget2`, `fdt_fdget_rcu`,
/// `fdt_fdget_with_payload`), to keep it past `fdt_fdput(f)` or across something that may
/// block: the kernel's `get_file_rcu`. Call it before `fdt_fdput(f)`, on the thread that made
/// an `FDT_FDPUT_RCU` result. Use it instead of `fdt_file_get` on a lent result: a file lent
/// without a reference may have lost its last reference since (closed by another handle),
/// and then cannot be kept.
///
/// Ownership: the caller owns `*file` (give it back with `fdt_file_put`).
///
/// Returns 0; `-EBADF` if the result is empty or its file's last reference has gone
/// (`*file` is then NULL); `-EINVAL` if `file` is NULL.
///
/// # Safety
///
/// `f` is the unchanged result of a lookup not yet ended by `fdt_fdput` (for
/// `FDT_FDPUT_RCU`: on this thread); `file` is NULL or valid for a write of a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fd_get_file(f: fdt_fd, file: *mut *mut fdt_file) -> c_int {
    if file.is_null() {
        return Errno::EINVAL.neg();
    }
    let end = if f.flags & FDT_FDPUT_RCU != 0 {
        RcuFdEnd::Section
    } else {
        RcuFdEnd::Counted
    };
    let got = (!f.file.is_null())
        .then(|| {
            guard(None, || {
                // SAFETY: the contract: a live lookup's file (the value pointer the C ABI
                // hands out) and how it is held.
                unsafe {
                    fdtable::RcuFd::<fdtable_vfs::File>::upgrade_raw(
                        f.file.cast_const().cast(),
                        end,
                    )
                }
            })
        })
        .flatten();
    let (r, p) = match got {
        Some(r) => (0, into_c(r)),
        None => (Errno::EBADF.neg(), ptr::null_mut()),
    };
    // SAFETY: non-NULL and valid for a write (the contract).
    unsafe { file.write(p) };
    r
}

/// Ends an `fdt_fdget_rcu` result's section (`FDT_FDPUT_RCU`), on the thread that made it.
/// Out of line, as `fput_lookup`: `fdt_fdput` then saves no register for either.
#[inline(never)]
fn end_rcu() {
    guard((), || {
        // SAFETY: `fdt_fdput`'s contract: a section this thread opened for a split lookup,
        // ended once. On another thread it finds no split section of its own and ends
        // nothing (false): the section stays open, releases wait, nothing is freed early.
        let _ = unsafe { fdtable::RcuFd::<fdtable_vfs::File>::end_raw_section() };
    })
}

/// Ends a light lookup (the kernel's `fdput`): drops the reference it took, if it took one
/// (the file may be released here, if every descriptor to it was closed meanwhile by another
/// handle), or ends the RCU section `fdt_fdget_rcu` opened. Does nothing for an empty result
/// or a borrowing lookup.
///
/// # Safety
///
/// `fd` is the unchanged result of one `fdt_fdget2`, `fdt_fdget_rcu` (on this thread: on a
/// thread that made no such lookup it ends nothing, and the section stays open) or
/// `fdt_fdget`, passed to `fdt_fdput` once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fdput(fd: fdt_fd) {
    if fd.flags & FDT_FDPUT_RCU != 0 {
        return end_rcu();
    }
    if fd.flags & FDT_FDPUT_FPUT == 0 || fd.file.is_null() {
        return;
    }
    // SAFETY: the caller's contract, forwarded.
    unsafe { fput_lookup(fd.file) }
}

/// Drops the reference an owned lookup result carries (`FDT_FDPUT_FPUT`).
///
/// # Safety
///
/// `file` is the non-NULL file of such a result, handed back once.
#[inline(never)]
unsafe fn fput_lookup(file: *mut fdt_file) {
    guard((), || {
        // SAFETY: an owned lookup carries one reference, handed back once (the contract).
        drop(unsafe { from_c(file) })
    })
}

/// The counted lookup (the kernel's `fget`): a new reference to the file at `fd`, stored in
/// `*file`; lock-free on a shared table.
///
/// Ownership: the caller owns `*file`; give it back with `fdt_file_put` (or to a call that
/// consumes one).
///
/// Returns 0; `-EBADF` if `fd` is not open or is an `FDT_O_PATH` file; `-EINVAL` if `files`
/// or `file` is NULL. On failure `*file` is set to NULL (if `file` is not NULL).
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `file` is NULL or valid for
/// a write of a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fget2(
    files: *mut fdt_files,
    fd: c_int,
    file: *mut *mut fdt_file,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { put_out(file, ptr::null_mut()) };
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    if file.is_null() {
        return Errno::EINVAL.neg();
    }
    guard(PANICKED.neg(), || match task.files().fget(fd as u32) {
        Some(f) if f.f_mode() & FMODE_PATH == 0 => {
            // SAFETY: `file` is non-NULL and valid for a write (the caller's contract).
            unsafe { file.write(into_c(f)) };
            0
        }
        _ => Errno::EBADF.neg(),
    })
}

/// Legacy form of `fdt_fget2` (deprecated): returns the reference, or NULL where `fdt_fget2`
/// fails.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[deprecated(note = "use fdt_fget2, which returns -errno")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fget(files: *mut fdt_files, fd: c_int) -> *mut fdt_file {
    let mut f = ptr::null_mut();
    // SAFETY: the caller's contract; `f` is a local.
    unsafe { fdt_fget2(files, fd, &mut f) };
    f
}

/// The lowest open descriptor at or above `fd` (installed: reserved ones are skipped), what
/// `/proc/<pid>/fd` lists and `close_range` walks. A runtime lists its descriptors without
/// probing every number up to the limit:
///
/// ```c
/// for (int fd = fdt_next_open_fd(files, 0); fd >= 0; fd = fdt_next_open_fd(files, fd + 1))
/// ```
///
/// Descriptors at or past the soft `RLIMIT_NOFILE` (left open when it was lowered) are found
/// too. On a shared table another
/// handle may open or close descriptors meanwhile; each answer was true when it was made.
///
/// Returns the descriptor; `-ENOENT` if no descriptor at or above `fd` is open; `-EINVAL` if
/// `files` is NULL or `fd` is negative.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_next_open_fd(files: *const fdt_files, fd: c_int) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    let Ok(from) = u32::try_from(fd) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        match task.files().next_open_fd(from) {
            // Descriptors are below `nr_open`, at most 2147483584: they fit an `int`.
            Some(n) => n as c_int,
            None => Errno::ENOENT.neg(),
        }
    })
}

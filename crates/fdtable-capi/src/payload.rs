//! The per-fd payload: a `uint64_t` the table keeps beside each descriptor's close-on-exec bit
//! (rights, flags, a key into the caller's own table), given at install, read, set,
//! compared-and-swapped, and looked up together with the file in one snapshot.

use crate::consts::FDT_FDPUT_FPUT;
use crate::fd::fdt_fd;
use crate::file::{fdt_file, from_c};
use crate::files::{CTask, Payload, fdt_files, handle, handle_mut, put_out};
use crate::guard::{PANICKED, guard, ret_int, ret_unit};
use fdtable::Errno;
use fdtable_vfs::uapi::{FMODE_PATH, O_CLOEXEC};
use std::ffi::{c_int, c_uint};

/// `fdt_install` with `payload` as the new descriptor's payload (instead of 0): the file,
/// its close-on-exec bit and its payload appear together, so no lookup ever sees the file
/// without its payload.
///
/// Ownership, results and errors: as `fdt_install` (the reference to `file` is consumed,
/// also on failure).
///
/// # Safety
///
/// As `fdt_install`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_install_with(
    files: *mut fdt_files,
    file: *mut fdt_file,
    flags: c_uint,
    payload: u64,
) -> c_int {
    if file.is_null() {
        return Errno::EINVAL.neg();
    }
    // SAFETY: the caller hands over one reference.
    let file = unsafe { from_c(file) };
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        drop(file);
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        ret_int(
            task.files()
                .install_with(file, flags & O_CLOEXEC, payload, task.nofile())
                .map(|fd| fd as c_int),
        )
    })
}

/// `fdt_install_at` with `payload` as `fd`'s payload (instead of 0).
///
/// Ownership, results and errors: as `fdt_install_at` (the reference to `file` is consumed,
/// also on failure; on failure the table, payloads included, is unchanged).
///
/// # Safety
///
/// As `fdt_install_at`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_install_at_with(
    files: *mut fdt_files,
    fd: c_int,
    file: *mut fdt_file,
    flags: c_uint,
    payload: u64,
) -> c_int {
    if file.is_null() {
        return Errno::EINVAL.neg();
    }
    // SAFETY: the caller hands over one reference.
    let file = unsafe { from_c(file) };
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle_mut(files) }) else {
        drop(file);
        return Errno::EINVAL.neg();
    };
    if flags & !O_CLOEXEC != 0 {
        drop(file);
        return Errno::EINVAL.neg();
    }
    guard(PANICKED.neg(), || {
        let nofile = task.nofile();
        // A negative `fd` is a huge `unsigned int`, at or past any limit: `EBADF`.
        ret_int(
            task.files_mut()
                .replace_fd_with(fd as u32, file, flags, payload, nofile)
                .map(|fd| fd as c_int),
        )
    })
}

/// `fdt_fd_install2` with `payload` as `fd`'s payload (instead of 0).
///
/// Ownership, results and errors: as `fdt_fd_install2` (the reference to `file` is consumed
/// in every case; on failure nothing is installed).
///
/// # Safety
///
/// As `fdt_fd_install2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fd_install_with(
    files: *mut fdt_files,
    fd: c_int,
    file: *mut fdt_file,
    payload: u64,
) -> c_int {
    if file.is_null() {
        return Errno::EINVAL.neg();
    }
    // SAFETY: the caller hands over one reference.
    let file = unsafe { from_c(file) };
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        drop(file);
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        ret_unit(task.files().fd_install_with(fd as u32, file, payload))
    })
}

/// The payload of the open descriptor `fd`, stored in `*payload`.
///
/// Returns 0; `-EBADF` if `fd` is not open (free, reserved, negative, out of range);
/// `-EINVAL` if `files` or `payload` is NULL. On failure `*payload` is set to 0 (if `payload`
/// is not NULL).
///
/// To check a payload before using the file (a rights check), use `fdt_fdget_with_payload`,
/// which reads both at once: this call and a lookup made after it may see two different
/// files if another handle renumbers or `dup2`s onto `fd` in between.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `payload` is NULL or valid
/// for a write of a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fd_payload(
    files: *const fdt_files,
    fd: c_int,
    payload: *mut u64,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { put_out(payload, 0) };
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    if payload.is_null() {
        return Errno::EINVAL.neg();
    }
    guard(PANICKED.neg(), || {
        match task.files().fd_payload(fd as u32) {
            Ok(p) => {
                // SAFETY: non-NULL and valid for a write (the caller's contract).
                unsafe { payload.write(p) };
                0
            }
            Err(e) => e.neg(),
        }
    })
}

/// Replaces the payload of the open descriptor `fd` with `payload`. Other descriptors keep
/// theirs, including those that refer to the same file (a payload is per descriptor, as the
/// close-on-exec bit is).
///
/// Returns 0; `-EBADF` if `fd` is not open; `-EINVAL` if `files` is NULL.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_set_fd_payload(
    files: *mut fdt_files,
    fd: c_int,
    payload: u64,
) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        ret_unit(task.files().set_fd_payload(fd as u32, payload))
    })
}

/// Compare-and-swap on the payload of the open descriptor `fd`, with C11's
/// `atomic_compare_exchange_strong` convention: if the payload is `*expected`, it becomes
/// `desired` and the call returns 1; otherwise nothing changes, the payload found is stored
/// in `*expected`, and the call returns 0. For payloads that several threads update, such as
/// rights that may only narrow:
///
/// ```c
/// uint64_t rights;
/// int r = fdt_fd_payload(files, fd, &rights);
/// while (r >= 0 && (r = fdt_cmpxchg_fd_payload(files, fd, &rights, rights & ~RIGHT_WRITE)) == 0)
///   ;   /* another handle changed it first: retry from what it holds now */
/// ```
///
/// Returns 1 (replaced) or 0 (not replaced, `*expected` updated); `-EBADF` if `fd` is not
/// open; `-EINVAL` if `files` or `expected` is NULL.
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `expected` is NULL or valid
/// for a read and a write of a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_cmpxchg_fd_payload(
    files: *mut fdt_files,
    fd: c_int,
    expected: *mut u64,
    desired: u64,
) -> c_int {
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    // SAFETY: NULL or valid for a read and a write (the caller's contract).
    let Some(expected) = (unsafe { expected.as_mut() }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || {
        match task
            .files()
            .cmpxchg_fd_payload(fd as u32, *expected, desired)
        {
            Ok(Ok(())) => 1,
            Ok(Err(actual)) => {
                *expected = actual;
                0
            }
            Err(e) => e.neg(),
        }
    })
}

/// The lookup of a rights check: the file at `fd` and its payload, one snapshot.
#[inline(always)]
fn lookup_with_payload(task: &CTask, fd: c_int) -> Result<(fdt_fd, Payload), Errno> {
    let (f, payload) = task
        .files()
        .fdget_with_payload(fd as u32)
        .ok_or(Errno::EBADF)?;
    if f.f_mode() & FMODE_PATH != 0 {
        return Err(Errno::EBADF);
    }
    // As `fdt_fdget2`: a borrowed result stays valid under the light lookup rule, an owned one
    // carries its reference to `fdt_fdput`.
    let (file, owned) = f.into_raw();
    let f = fdt_fd {
        file: file.cast_mut().cast(),
        flags: if owned { FDT_FDPUT_FPUT } else { 0 },
    };
    Ok((f, payload))
}

/// `fdt_fdget2` and the descriptor's payload as one snapshot: `*payload` is the payload that
/// goes with *this* file at `fd` (given at its install or set since), never another
/// descriptor's or an earlier installation's, even while other handles `fdt_dup2`,
/// `fdt_renumber` or `fdt_install_at` onto `fd`. The lookup for a rights check before an
/// operation, which `fdt_fd_payload` followed by `fdt_fdget2` is not:
///
/// ```c
/// struct fdt_fd f;
/// uint64_t rights;
/// if (fdt_fdget_with_payload(files, fd, &f, &rights) < 0)
///   return -EBADF;
/// if (!(rights & RIGHT_READ)) {
///   fdt_fdput(f);
///   return -ENOTCAPABLE;
/// }
/// ... use fdt_fd_file(f) ...
/// fdt_fdput(f);
/// ```
///
/// On a handle that is its table's only handle this costs what `fdt_fdget2` costs (no lock,
/// no reference, and the payload is a plain read). On a shared table the file and its payload
/// are read under the table's lock, with a reference (`FDT_FDPUT_FPUT`). Pair every success
/// with `fdt_fdput(*f)`, under `fdt_fdget2`'s rule.
///
/// Returns 0; `-EBADF` if `fd` is not open or is an `FDT_O_PATH` file; `-EINVAL` if `files`,
/// `f` or `payload` is NULL. On failure `*f` is the empty result and `*payload` is 0 (those
/// that are not NULL).
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `f` is NULL or valid for a
/// write of a `struct fdt_fd`; `payload` is NULL or valid for a write of a `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_fdget_with_payload(
    files: *mut fdt_files,
    fd: c_int,
    f: *mut fdt_fd,
    payload: *mut u64,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        put_out(f, fdt_fd::EMPTY);
        put_out(payload, 0);
    }
    if f.is_null() || payload.is_null() {
        return Errno::EINVAL.neg();
    }
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle(files) }) else {
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || match lookup_with_payload(task, fd) {
        Ok((v, p)) => {
            // SAFETY: both are non-NULL and valid for a write (the caller's contract).
            unsafe {
                f.write(v);
                payload.write(p);
            }
            0
        }
        Err(e) => e.neg(),
    })
}

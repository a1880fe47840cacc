//! `struct fdt_reservation`: a reserved descriptor that the caller owns and may hand to another
//! thread, then install a file at or give back (`OwnedFdReservation`).

use crate::file::{fdt_file, from_c};
use crate::files::{Payload, fdt_files, handle_mut, put_out};
use crate::guard::{PANICKED, guard};
use fdtable::{Errno, OwnedFdReservation};
use fdtable_vfs::File;
use fdtable_vfs::uapi::O_CLOEXEC;
use std::ffi::{c_int, c_uint};
use std::ptr;

/// A reserved descriptor owned by the caller (`fdt_reserve_owned`): the first step of an open
/// that may finish on another thread. The number is taken — other allocations skip it,
/// `fdt_dup2` and `fdt_renumber` onto it fail with `-EBUSY`, `fdt_renumber_onto` with
/// `-EBADF` — but it refers to nothing until `fdt_reservation_install` (or `..._install_with`)
/// puts a file there; `fdt_reservation_release` gives it back instead. Each of the three ends
/// the reservation and frees this object.
///
/// Unlike a number from `fdt_get_unused_fd`, it carries its own handle on the table: it may be
/// passed to another thread and used there while other threads use the table's handles (one
/// thread at a time for the reservation itself). While it lives the table counts as shared
/// (`fdt_fdget2` takes references), and the table stays alive even if every `struct fdt_files`
/// on it was put.
pub struct fdt_reservation {
    res: OwnedFdReservation<File, Payload>,
}

/// Reserves the lowest free descriptor below `files`'s soft `RLIMIT_NOFILE`, as
/// `fdt_get_unused_fd` does, and stores a reservation the caller owns in `*res`: for a runtime
/// whose open completes on another thread or after an `await`, and whose cancelled opens must
/// give the number back. `FDT_O_CLOEXEC` in `flags` sets close-on-exec; other bits are
/// ignored.
///
/// ```c
/// struct fdt_reservation *r;
/// int fd = fdt_reserve_owned(files, FDT_O_CLOEXEC, &r);
/// if (fd < 0)
///   return fd;                                   /* -EMFILE, -ENOMEM */
/// /* ... on any thread, later: */
/// if (opened)
///   fdt_reservation_install_with(r, file, rights);  /* fd now refers to file */
/// else
///   fdt_reservation_release(r);                  /* fd is free again */
/// ```
///
/// The reservation stays on the table `files` had when it was made, also if `files` is later
/// unshared (`fdt_unshare`, `fdt_exec`); a fork does not copy it.
///
/// Ownership: `files` stays the caller's; the caller owns `*res` and ends it with exactly one
/// of `fdt_reservation_install`, `fdt_reservation_install_with`, `fdt_reservation_release`.
/// The number belongs to the reservation: do not pass it to `fdt_fd_install2` or
/// `fdt_put_unused_fd2`, which are for `fdt_get_unused_fd`'s numbers.
///
/// Returns the reserved descriptor; `-EMFILE` if none is free, `-ENOMEM`, or `-EINVAL` if
/// `files` or `res` is NULL. On failure `*res` is set to NULL (if `res` is not NULL).
///
/// # Safety
///
/// `files` is NULL or a live handle not in use by another thread; `res` is NULL or valid for
/// a write of a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_reserve_owned(
    files: *mut fdt_files,
    flags: c_uint,
    res: *mut *mut fdt_reservation,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { put_out(res, ptr::null_mut()) };
    // SAFETY: the caller's contract.
    let Some(task) = (unsafe { handle_mut(files) }) else {
        return Errno::EINVAL.neg();
    };
    if res.is_null() {
        return Errno::EINVAL.neg();
    }
    guard(PANICKED.neg(), || {
        let nofile = task.nofile();
        match task.files_mut().reserve_owned(flags & O_CLOEXEC, nofile) {
            Ok(r) => {
                let fd = r.fd() as c_int;
                let boxed = Box::into_raw(Box::new(fdt_reservation { res: r }));
                // SAFETY: `res` is non-NULL and valid for a write (the caller's contract).
                unsafe { res.write(boxed) };
                fd
            }
            Err(e) => e.neg(),
        }
    })
}

/// The descriptor `res` reserved.
///
/// Returns it, or `-EINVAL` if `res` is NULL.
///
/// # Safety
///
/// `res` is NULL or a live reservation not in use by another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_reservation_fd(res: *const fdt_reservation) -> c_int {
    // SAFETY: the caller's contract.
    match unsafe { res.as_ref() } {
        Some(r) => r.res.fd() as c_int,
        None => Errno::EINVAL.neg(),
    }
}

/// Takes the reservation back from the C side.
///
/// # Safety
///
/// `res` is non-NULL, from `fdt_reserve_owned`, and not used again.
unsafe fn take(res: *mut fdt_reservation) -> OwnedFdReservation<File, Payload> {
    // SAFETY: per the contract, a box made by `fdt_reserve_owned`, taken once.
    unsafe { Box::from_raw(res) }.res
}

/// Installs `file` at the reserved descriptor (the kernel's `fd_install`) and ends the
/// reservation. The descriptor's payload is 0 (`fdt_reservation_install_with` gives one).
///
/// Ownership: consumes `res` and the caller's reference to `file`, in every case: if `file`
/// is NULL the reservation is given back, if `res` is NULL the file is put.
///
/// Returns the descriptor; `-EINVAL` if `res` or `file` is NULL; `-EBADF` (the file put) if
/// the descriptor was taken from under the reservation: given back or installed meanwhile
/// through `fdt_put_unused_fd2`/`fdt_fd_install2`, which cannot tell a reservation's number
/// from one of their own and must not be given one.
///
/// # Safety
///
/// `res` is NULL or a live reservation not in use by another thread, not used again; `file`
/// is NULL or a file on which the caller owns a reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_reservation_install(
    res: *mut fdt_reservation,
    file: *mut fdt_file,
) -> c_int {
    // SAFETY: the caller's contract, which is `fdt_reservation_install_with`'s.
    unsafe { fdt_reservation_install_with(res, file, 0) }
}

/// `fdt_reservation_install` with `payload` as the descriptor's payload: the file and its
/// payload appear together.
///
/// Ownership, results and errors: as `fdt_reservation_install`.
///
/// # Safety
///
/// As `fdt_reservation_install`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_reservation_install_with(
    res: *mut fdt_reservation,
    file: *mut fdt_file,
    payload: u64,
) -> c_int {
    let file = (!file.is_null()).then(|| {
        // SAFETY: the caller hands over one reference.
        unsafe { from_c(file) }
    });
    if res.is_null() {
        drop(file);
        return Errno::EINVAL.neg();
    }
    // SAFETY: non-NULL, the caller's reservation, handed over.
    let r = unsafe { take(res) };
    let Some(file) = file else {
        guard((), || r.release());
        return Errno::EINVAL.neg();
    };
    guard(PANICKED.neg(), || match r.try_install_with(file, payload) {
        Ok(fd) => fd as c_int,
        Err(e) => e.neg(),
    })
}

/// Gives the reserved descriptor back without installing anything (the kernel's
/// `put_unused_fd`: a failed or cancelled open) and ends the reservation.
///
/// Ownership: consumes `res`. NULL is ignored.
///
/// # Safety
///
/// `res` is NULL or a live reservation not in use by another thread, and it is not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fdt_reservation_release(res: *mut fdt_reservation) {
    if res.is_null() {
        return;
    }
    // SAFETY: non-NULL, the caller's reservation, handed over.
    let r = unsafe { take(res) };
    guard((), || r.release())
}

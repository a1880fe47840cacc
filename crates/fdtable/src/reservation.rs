//! [`FdReservation`]: a reserved descriptor that is given back when dropped.

use crate::file_ref::FileRef;
use crate::files::{FileLike, Files};

/// A descriptor reserved by [`Files::get_unused_fd_flags`]: the slot is marked open but holds
/// no file, so concurrent allocations skip it and `dup2` onto it fails with `EBUSY`.
///
/// [`install`](FdReservation::install) publishes a file there (`fd_install`); dropping the
/// reservation instead gives the fd back at once (`put_unused_fd`) — the cheap end of a failed
/// open (seed 2).
#[must_use = "dropping a reservation gives the fd back"]
pub struct FdReservation<'a, F: FileLike> {
    files: &'a Files<F>,
    fd: u32,
}

impl<'a, F: FileLike> FdReservation<'a, F> {
    pub(crate) fn new(files: &'a Files<F>, fd: u32) -> Self {
        FdReservation { files, fd }
    }

    /// The reserved descriptor number.
    pub fn fd(&self) -> u32 {
        self.fd
    }

    /// Publishes `file` at the reserved fd, consuming the reference; returns the fd.
    pub fn install(self, file: FileRef<F>) -> u32 {
        let this = std::mem::ManuallyDrop::new(self);
        // Only a raw `put_unused_fd`/`fd_install` on this fd through another handle can make
        // this fail (a misuse: the reservation owns the fd); then the file is dropped and the
        // fd is whatever that call made it. Debug builds say so.
        let r = this.files.fd_install(this.fd, file);
        debug_assert!(
            r.is_ok(),
            "fd {} was taken from under its reservation: {r:?}",
            this.fd
        );
        this.fd
    }

    /// Gives the reserved fd back without installing anything (the same as dropping).
    pub fn release(self) {}
}

impl<F: FileLike> Drop for FdReservation<'_, F> {
    fn drop(&mut self) {
        self.files.put_unused_fd(self.fd);
    }
}

impl<F: FileLike> std::fmt::Debug for FdReservation<'_, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FdReservation")
            .field("fd", &self.fd)
            .finish()
    }
}

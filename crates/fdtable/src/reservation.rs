//! Reserved descriptors that are given back when dropped: [`FdReservation`] (borrowing the
//! handle, the kernel's `get_unused_fd_flags` + `fd_install` / `put_unused_fd`) and
//! [`OwnedFdReservation`] (owned and `Send`, for a reservation held across an `.await`).

use crate::file_ref::FileRef;
use crate::files::{FdPayload, FileLike, Files};
use crate::lock::RawSpinLock;
use core::mem::ManuallyDrop;

/// A descriptor reserved by [`Files::get_unused_fd_flags`]: the slot is marked open but holds
/// no file, so concurrent allocations skip it and `dup2` onto it fails with `EBUSY`.
///
/// [`install`](FdReservation::install) publishes a file there (`fd_install`); dropping the
/// reservation instead gives the fd back at once (`put_unused_fd`) — the cheap end of a failed
/// open (`fput_badopen`).
#[must_use = "dropping a reservation gives the fd back"]
pub struct FdReservation<
    'a,
    F: ?Sized + FileLike,
    P: FdPayload = (),
    L: lock_api::RawMutex = RawSpinLock,
> {
    files: &'a Files<F, P, L>,
    fd: u32,
}

impl<'a, F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> FdReservation<'a, F, P, L> {
    pub(crate) fn new(files: &'a Files<F, P, L>, fd: u32) -> Self {
        FdReservation { files, fd }
    }

    /// The reserved descriptor number.
    pub fn fd(&self) -> u32 {
        self.fd
    }

    /// Publishes `file` at the reserved fd, consuming the reference; returns the fd.
    ///
    /// Only a raw [`Files::put_unused_fd`] or [`Files::fd_install`] of this fd (a misuse: the
    /// reservation owns it) can make this fail; then the file is dropped, the fd is whatever
    /// that call made it, and debug builds panic. [`try_install`](FdReservation::try_install)
    /// says so instead.
    pub fn install(self, file: FileRef<F>) -> u32 {
        let fd = self.fd;
        let r = self.try_install(file);
        debug_assert!(
            r.is_ok(),
            "fd {fd} was taken from under its reservation: {r:?}"
        );
        fd
    }

    /// [`install`](FdReservation::install), reporting the misuse: `EBADF` (the file dropped)
    /// if the fd was given back or installed through a raw call meanwhile.
    pub fn try_install(self, file: FileRef<F>) -> Result<u32, crate::Errno> {
        let this = ManuallyDrop::new(self);
        this.files.fd_install(this.fd, file).map(|()| this.fd)
    }

    /// As [`FdReservation::install`], setting the fd's payload too.
    pub fn install_with(self, file: FileRef<F>, payload: P) -> u32 {
        let fd = self.fd;
        let r = self.try_install_with(file, payload);
        debug_assert!(
            r.is_ok(),
            "fd {fd} was taken from under its reservation: {r:?}"
        );
        fd
    }

    /// As [`FdReservation::try_install`], setting the fd's payload too.
    pub fn try_install_with(self, file: FileRef<F>, payload: P) -> Result<u32, crate::Errno> {
        let this = ManuallyDrop::new(self);
        this.files
            .fd_install_with(this.fd, file, payload)
            .map(|()| this.fd)
    }

    /// Gives the reserved fd back without installing anything (the same as dropping).
    pub fn release(self) {}
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Drop
    for FdReservation<'_, F, P, L>
{
    fn drop(&mut self) {
        self.files.put_unused_fd(self.fd);
    }
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> core::fmt::Debug
    for FdReservation<'_, F, P, L>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FdReservation")
            .field("fd", &self.fd)
            .finish()
    }
}

/// A reserved descriptor that owns its way back to the table ([`Files::reserve_owned`]).
///
/// It is `Send` and borrows nothing, so an async host call can reserve, `.await` the open,
/// and install — on whichever thread the future resumes — and a cancelled future, which
/// drops it, gives the fd back: nothing stays reserved forever.
///
/// ```
/// use fdtable::{Files, FileLike, FileRef};
/// struct File;
/// impl FileLike for File {}
/// fn assert_send<T: Send>(_: &T) {}
///
/// let mut files: Files<File> = Files::new();
/// let r = files.reserve_owned(0, 1024)?;
/// assert_send(&r);
/// let fd = std::thread::spawn(move || r.install(FileRef::new(File))).join().unwrap();
/// assert!(files.fdget(fd).is_some());
/// # Ok::<(), fdtable::Errno>(())
/// ```
///
/// It holds a handle on the table, so while it lives the table counts as shared (lookups of
/// the handle it came from take the shared path).
#[must_use = "dropping a reservation gives the fd back"]
pub struct OwnedFdReservation<
    F: ?Sized + FileLike,
    P: FdPayload = (),
    L: lock_api::RawMutex = RawSpinLock,
> {
    files: ManuallyDrop<Files<F, P, L>>,
    fd: u32,
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> OwnedFdReservation<F, P, L> {
    pub(crate) fn new(files: Files<F, P, L>, fd: u32) -> Self {
        OwnedFdReservation {
            files: ManuallyDrop::new(files),
            fd,
        }
    }

    /// The reserved descriptor number.
    pub fn fd(&self) -> u32 {
        self.fd
    }

    /// Publishes `file` at the reserved fd, consuming the reference; returns the fd.
    ///
    /// A misuse (a raw call on this fd meanwhile) is as in [`FdReservation::install`];
    /// [`try_install`](OwnedFdReservation::try_install) reports it.
    pub fn install(self, file: FileRef<F>) -> u32 {
        let fd = self.fd;
        let r = self.try_install(file);
        debug_assert!(
            r.is_ok(),
            "fd {fd} was taken from under its reservation: {r:?}"
        );
        fd
    }

    /// [`install`](OwnedFdReservation::install), reporting the misuse: `EBADF` (the file
    /// dropped) if the fd was given back or installed through a raw call meanwhile.
    pub fn try_install(self, file: FileRef<F>) -> Result<u32, crate::Errno> {
        let mut this = ManuallyDrop::new(self);
        let r = this.files.fd_install(this.fd, file);
        // SAFETY: taken once; `this` is not dropped.
        drop(unsafe { ManuallyDrop::take(&mut this.files) });
        r.map(|()| this.fd)
    }

    /// As [`OwnedFdReservation::install`], setting the fd's payload too.
    pub fn install_with(self, file: FileRef<F>, payload: P) -> u32 {
        let fd = self.fd;
        let r = self.try_install_with(file, payload);
        debug_assert!(
            r.is_ok(),
            "fd {fd} was taken from under its reservation: {r:?}"
        );
        fd
    }

    /// As [`OwnedFdReservation::try_install`], setting the fd's payload too.
    pub fn try_install_with(self, file: FileRef<F>, payload: P) -> Result<u32, crate::Errno> {
        let mut this = ManuallyDrop::new(self);
        let r = this.files.fd_install_with(this.fd, file, payload);
        // SAFETY: taken once; `this` is not dropped.
        drop(unsafe { ManuallyDrop::take(&mut this.files) });
        r.map(|()| this.fd)
    }

    /// Gives the reserved fd back without installing anything (the same as dropping).
    pub fn release(self) {}
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Drop
    for OwnedFdReservation<F, P, L>
{
    fn drop(&mut self) {
        self.files.put_unused_fd(self.fd);
        // SAFETY: taken once, here.
        drop(unsafe { ManuallyDrop::take(&mut self.files) });
    }
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> core::fmt::Debug
    for OwnedFdReservation<F, P, L>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OwnedFdReservation")
            .field("fd", &self.fd)
            .finish()
    }
}

//! Opening: reserving a descriptor, installing a file, installing at a chosen number.

use super::{FdPayload, FileLike, Files, filp_close};
use crate::errno::Errno;
use crate::file_ref::FileRef;
use crate::flags::O_CLOEXEC;
use crate::reservation::{FdReservation, OwnedFdReservation};

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Files<F, P, L> {
    /// `get_unused_fd_flags`: reserves the lowest free fd below `nofile` (`EMFILE` if there is
    /// none, `ENOMEM` if the table cannot grow). Dropping the reservation gives the fd back
    /// (`put_unused_fd`) at once; [`FdReservation::install`] publishes a file there
    /// (`fd_install`).
    ///
    /// This is the first step of an open (`fput_badopen`): reserve, then build the file, then
    /// install; a failed open just drops the reservation and the never-installed file, and
    /// nothing is deferred.
    #[inline]
    pub fn get_unused_fd_flags(
        &self,
        flags: u32,
        nofile: u64,
    ) -> Result<FdReservation<'_, F, P, L>, Errno> {
        let fd = self.alloc_fd(0, nofile, flags)?;
        Ok(FdReservation::new(self, fd))
    }

    /// An owned reservation of the lowest free fd below `nofile`: `Send`, not tied to a borrow
    /// of this handle, so it can be held across an `.await` and installed or dropped on any
    /// thread; dropping it (a cancelled future) gives the fd back. It holds a handle on the
    /// table ([`Files::share`]), so while it lives the table counts as shared.
    ///
    /// The reservation belongs to the table it was made in, as an open in flight on another
    /// thread does in Linux. If this handle gets a private copy meanwhile ([`Files::unshare`],
    /// [`Files::exec`], `close_range` with `CLOSE_RANGE_UNSHARE`: the copy has the number
    /// free), installing still succeeds, into the old table, which the reservation may then be
    /// the last to hold: the file is closed when the reservation's handle goes. A host that
    /// unshares while its own opens are in flight installs or drops those reservations first.
    ///
    /// `EMFILE` / `ENOMEM` as [`Files::get_unused_fd_flags`].
    pub fn reserve_owned(
        &mut self,
        flags: u32,
        nofile: u64,
    ) -> Result<OwnedFdReservation<F, P, L>, Errno> {
        let handle = self.share();
        let fd = handle.alloc_fd(0, nofile, flags)?;
        Ok(OwnedFdReservation::new(handle, fd))
    }

    /// `alloc_fd(start, end, flags)`: reserves the lowest free fd in `start..end`, writing its
    /// close-on-exec bit from `O_CLOEXEC` in `flags` and a default payload. `EMFILE` if there
    /// is none (or the table cannot grow past `nr_open`), `ENOMEM` if growth fails. The fd
    /// stays reserved until [`Files::fd_install`] or [`Files::put_unused_fd`].
    #[inline]
    pub fn alloc_fd(&self, start: u32, end: u64, flags: u32) -> Result<u32, Errno> {
        let end = end.min(u32::MAX as u64 + 1) as usize;
        let cloexec = flags & O_CLOEXEC != 0;
        if let Some(r) = self
            .lock()
            .alloc_fd_fast(start as usize, end, cloexec, P::default())
        {
            return r.map(|fd| fd as u32);
        }
        self.alloc_fd_slow(start as usize, end, cloexec)
    }

    #[cold]
    #[inline(never)]
    fn alloc_fd_slow(&self, start: usize, end: usize, cloexec: bool) -> Result<u32, Errno> {
        self.lock()
            .alloc_fd(start, end, cloexec, P::default())
            .map(|fd| fd as u32)
    }

    /// `put_unused_fd`: gives back a reserved fd. Does nothing to a free or installed fd.
    #[inline]
    pub fn put_unused_fd(&self, fd: u32) {
        self.lock().put_unused_fd(fd as usize)
    }

    /// `fd_install`: publishes `file` at the reserved `fd`, consuming the reference.
    /// `EBADF` (and the reference is dropped) if `fd` is not reserved.
    ///
    /// # Kernel
    ///
    /// Linux installs without the lock and copes with a concurrent resize through
    /// `resize_in_progress` and `synchronize_rcu`; here a shared table installs under the lock
    /// (an unshared one takes no lock at all). See [`crate::docs::divergences`].
    #[inline]
    pub fn fd_install(&self, fd: u32, file: FileRef<F>) -> Result<(), Errno> {
        let p = FileRef::into_inner(file);
        let r = self.lock().install_reserved(fd as usize, p);
        if r.is_err() {
            // SAFETY: the slot did not take the reference; it is still ours to drop.
            drop(unsafe { FileRef::from_inner(p) });
        }
        r
    }

    /// As [`Files::fd_install`], replacing the reserved fd's payload too.
    pub fn fd_install_with(&self, fd: u32, file: FileRef<F>, payload: P) -> Result<(), Errno> {
        let p = FileRef::into_inner(file);
        let r = self.locked(|l| {
            l.install_reserved(fd as usize, p)?;
            l.set_payload(fd as usize, payload);
            Ok(())
        });
        if r.is_err() {
            // SAFETY: the slot did not take the reference; it is still ours to drop.
            drop(unsafe { FileRef::from_inner(p) });
        }
        r
    }

    /// Allocates the lowest free fd below `nofile` and installs `file` there in one step
    /// (`FD_ADD`). `EMFILE` if full; the reference is dropped on failure.
    pub fn install(&self, file: FileRef<F>, flags: u32, nofile: u64) -> Result<u32, Errno> {
        self.install_with(file, flags, P::default(), nofile)
    }

    /// As [`Files::install`], with the fd's payload.
    pub fn install_with(
        &self,
        file: FileRef<F>,
        flags: u32,
        payload: P,
        nofile: u64,
    ) -> Result<u32, Errno> {
        let end = nofile.min(u32::MAX as u64 + 1) as usize;
        let cloexec = flags & O_CLOEXEC != 0;
        let p = FileRef::into_inner(file);
        let r = self.locked(|l| {
            let fd = l.alloc_fd(0, end, cloexec, payload)?;
            l.install_reserved(fd, p)?;
            Ok(fd as u32)
        });
        if r.is_err() {
            // SAFETY: no slot took the reference; it is still ours to drop.
            drop(unsafe { FileRef::from_inner(p) });
        }
        r
    }

    /// `replace_fd(fd, file, flags)` — installs `file` at the chosen `fd`, as a checkpoint or
    /// journal restore, or a runtime inserting at a known number, needs. What was at `fd` is
    /// closed as `dup2` closes it (flushed, error ignored); close-on-exec is set from
    /// `O_CLOEXEC` in `flags`; the payload is the default. Returns `fd`.
    ///
    /// - `fd >= nofile`: `EBADF`.
    /// - `fd` at or past `nr_open`: `EMFILE` (the table cannot grow there); `ENOMEM` if it
    ///   cannot grow for lack of memory.
    /// - `fd` reserved by an open in progress: `EBUSY`.
    ///
    /// On error the reference is dropped and the table is unchanged.
    ///
    /// # Kernel
    ///
    /// `replace_fd` in fs/file.c (used by `receive_fd_replace`, seccomp's addfd with
    /// `SECCOMP_ADDFD_FLAG_SETFD`).
    pub fn replace_fd(
        &mut self,
        fd: u32,
        file: FileRef<F>,
        flags: u32,
        nofile: u64,
    ) -> Result<u32, Errno> {
        self.replace_fd_with(fd, file, flags, P::default(), nofile)
    }

    /// As [`Files::replace_fd`], with the fd's payload.
    pub fn replace_fd_with(
        &mut self,
        fd: u32,
        file: FileRef<F>,
        flags: u32,
        payload: P,
        nofile: u64,
    ) -> Result<u32, Errno> {
        if fd as u64 >= nofile {
            return Err(Errno::EBADF);
        }
        let cloexec = flags & O_CLOEXEC != 0;
        let p = FileRef::into_inner(file);
        let r = self.locked(|l| {
            if let Err(e) = l.expand_files(fd as usize) {
                // SAFETY: the reference is still ours.
                return Err((e, Some(unsafe { FileRef::from_inner(p) })));
            }
            match l.do_dup2(p, fd as usize, cloexec, payload) {
                Ok(displaced) => Ok(displaced),
                Err(file) => Err((Errno::EBUSY, Some(file))),
            }
        });
        match r {
            Ok(displaced) => {
                if let Some(f) = displaced {
                    let _ = filp_close(f);
                }
                Ok(fd)
            }
            Err((e, file)) => {
                drop(file);
                Err(e)
            }
        }
    }
}

//! Iterating over open descriptors (`/proc/<pid>/fd`, preopen listings, checkpoints).

use super::{FdPayload, FileLike, Files};
use crate::Errno;
use crate::file_ref::FileRef;
use alloc::vec::Vec;

/// One installed descriptor, as [`Files::iter`] yields it.
pub struct OpenFd<F: ?Sized, P> {
    /// The descriptor number.
    pub fd: u32,
    /// Its close-on-exec bit.
    pub cloexec: bool,
    /// Its payload.
    pub payload: P,
    /// A counted reference to its file.
    pub file: FileRef<F>,
}

impl<F: ?Sized + core::fmt::Debug, P: core::fmt::Debug> core::fmt::Debug for OpenFd<F, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OpenFd")
            .field("fd", &self.fd)
            .field("cloexec", &self.cloexec)
            .field("payload", &self.payload)
            .field("file", &self.file)
            .finish()
    }
}

/// The installed descriptors of a table in ascending order ([`Files::iter`]).
///
/// Each step finds the next installed fd above the previous one under the table lock (no
/// lock when the table is unshared) and takes a reference on its file, as the kernel's
/// `fget_task_next` does: nothing is allocated, and other handles may open, close and dup
/// meanwhile. An fd closed before the iterator reaches it is not yielded; one opened behind
/// it is not either; each yielded fd was installed, with that file, bit and payload, at the
/// moment of its step.
pub struct FdIter<'a, F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> {
    files: &'a Files<F, P, L>,
    next: usize,
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Iterator for FdIter<'_, F, P, L> {
    type Item = OpenFd<F, P>;

    fn next(&mut self) -> Option<OpenFd<F, P>> {
        let from = self.next;
        let item = self.files.locked(|l| {
            let (fd, f) = l.next_installed(from)?;
            Some(OpenFd {
                fd: fd as u32,
                cloexec: l.cloexec(fd),
                payload: l.payload(fd),
                // SAFETY: `get` took a reference for the result.
                file: unsafe { FileRef::from_inner(f.get()) },
            })
        });
        match &item {
            Some(o) => self.next = o.fd as usize + 1,
            None => self.next = usize::MAX,
        }
        item
    }
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Files<F, P, L> {
    /// Every installed fd in ascending order, with its close-on-exec bit, payload and a
    /// reference to its file; see [`FdIter`] for what a concurrent change does.
    pub fn iter(&self) -> FdIter<'_, F, P, L> {
        self.iter_from(0)
    }

    /// As [`Files::iter`], starting at `fd`.
    pub fn iter_from(&self, fd: u32) -> FdIter<'_, F, P, L> {
        FdIter {
            files: self,
            next: fd as usize,
        }
    }

    /// The lowest installed fd at or above `fd`, if any (what `close_range` and `/proc`
    /// listings walk by).
    pub fn next_open_fd(&self, fd: u32) -> Option<u32> {
        self.locked(|l| l.next_installed(fd as usize).map(|(n, _)| n as u32))
    }

    /// The lowest reserved fd (allocated, nothing installed yet) at or above `fd`, if any.
    pub fn next_reserved_fd(&self, fd: u32) -> Option<u32> {
        self.locked(|l| {
            let mut at = fd as usize;
            loop {
                let n = l.next_open(at)?;
                if l.lookup(n).is_none() {
                    return Some(n as u32);
                }
                at = n + 1;
            }
        })
    }

    /// Every installed fd in ascending order, with its close-on-exec bit and a reference to
    /// its file, collected into a vector ([`Files::iter`] allocates nothing).
    ///
    /// # Errors
    ///
    /// `ENOMEM` if the vector cannot grow; the references taken so far are dropped.
    pub fn snapshot(&self) -> Result<Vec<(u32, bool, FileRef<F>)>, Errno> {
        let mut out = Vec::new();
        for o in self.iter() {
            out.try_reserve(1).map_err(|_| Errno::ENOMEM)?;
            out.push((o.fd, o.cloexec, o.file));
        }
        Ok(out)
    }

    /// Every reserved fd in ascending order ([`Files::next_reserved_fd`] allocates nothing).
    ///
    /// # Errors
    ///
    /// `ENOMEM` if the vector cannot grow.
    pub fn reserved_fds(&self) -> Result<Vec<u32>, Errno> {
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(fd) = self.next_reserved_fd(from) {
            out.try_reserve(1).map_err(|_| Errno::ENOMEM)?;
            out.push(fd);
            match fd.checked_add(1) {
                Some(next) => from = next,
                None => break,
            }
        }
        Ok(out)
    }
}

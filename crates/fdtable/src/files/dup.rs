//! The dup family, `fd_renumber`, and per-fd state (close-on-exec, payload).

use super::{FdPayload, FileLike, Files, OpenFd, clamp_end, filp_close};
use crate::errno::Errno;
use crate::file_ref::FileRef;
use crate::flags::O_CLOEXEC;

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Files<F, P, L> {
    /// `dup(fd)` — the lowest free fd below `nofile` now refers to the same file, with
    /// close-on-exec clear and a copy of `fd`'s payload. `EBADF` if `fd` is not installed,
    /// `EMFILE` if the table is full.
    ///
    /// Lowest-free is only meaningful if no other thread allocates at the same time.
    ///
    /// # References
    ///
    /// [dup(2)](https://man7.org/linux/man-pages/man2/dup.2.html)
    #[inline(always)]
    pub fn dup(&self, fd: u32, nofile: u64) -> Result<u32, Errno> {
        let end = clamp_end(nofile);
        {
            let mut l = self.lock();
            let file = l.lookup(fd as usize).ok_or(Errno::EBADF)?;
            let payload = l.payload(fd as usize);
            if let Some(r) = l.alloc_fd_fast(0, end, false, payload) {
                let new = r?;
                l.publish(new, file.get());
                return Ok(new as u32);
            }
        }
        self.dup_slow(fd, end)
    }

    #[cold]
    #[inline(never)]
    fn dup_slow(&self, fd: u32, end: usize) -> Result<u32, Errno> {
        self.dup_from(fd, 0, end, false, None)
    }

    /// The table part of `dup` and `F_DUPFD`: the lowest free fd in `start..end` gets `fd`'s
    /// file. `EBADF` if `fd` is not installed; `EINVAL` if `einval_from` is given and not
    /// below `nofile` (checked after `EBADF`, as `f_dupfd` does).
    ///
    /// The file's reference is counted *before* the allocation, as the kernel's `dup` takes
    /// `fget` first: growing the table drops the lock around the new array's allocation, and
    /// another thread may close `fd` meanwhile, dropping the slot's reference. If the
    /// allocation fails, the reference is dropped after the lock.
    fn dup_from(
        &self,
        fd: u32,
        start: usize,
        end: usize,
        cloexec: bool,
        einval_from: Option<(u32, u64)>,
    ) -> Result<u32, Errno> {
        let mut held = None;
        let r = self.locked(|l| {
            let file = l.lookup(fd as usize).ok_or(Errno::EBADF)?;
            if let Some((from, nofile)) = einval_from
                && from as u64 >= nofile
            {
                return Err(Errno::EINVAL);
            }
            let payload = l.payload(fd as usize);
            let file = file.get();
            match l.alloc_fd(start, end, cloexec, payload) {
                Ok(new) => {
                    // For the loom model only: did a close run while the table grew?
                    #[cfg(loom)]
                    if l.lookup(fd as usize).map(|f| f as *const _)
                        != Some(file.as_ptr().cast_const())
                    {
                        crate::events::note(crate::events::Event::DupSourceClosed);
                    }
                    l.publish(new, file);
                    Ok(new as u32)
                }
                Err(e) => {
                    held = Some(file);
                    Err(e)
                }
            }
        });
        if let Some(p) = held {
            // SAFETY: no slot took the reference counted above; ours to drop, outside the lock
            // (it may be the file's last, if `fd` was closed while the table grew).
            drop(unsafe { FileRef::from_inner(p) });
        }
        r
    }

    /// `fcntl(fd, F_DUPFD / F_DUPFD_CLOEXEC, from)` — like [`Files::dup`] but the lowest free
    /// fd `>= from`. `EBADF` if `fd` is not installed, `EINVAL` if `from >= nofile`, `EMFILE`
    /// if nothing is free in `from..nofile`.
    ///
    /// `from` is the kernel's `f_dupfd(unsigned int from, ...)`. A system call layer holding
    /// fcntl's raw `unsigned long` argument passes it to [`Files::fcntl_dupfd`] instead, which
    /// narrows it exactly as Linux does.
    pub fn dupfd(&self, fd: u32, from: u32, cloexec: bool, nofile: u64) -> Result<u32, Errno> {
        let end = clamp_end(nofile);
        self.dup_from(fd, from as usize, end, cloexec, Some((from, nofile)))
    }

    /// `fcntl(fd, F_DUPFD / F_DUPFD_CLOEXEC, arg)` with `arg` as the system call received it
    /// (an `unsigned long`): [`Files::dupfd`] from the number Linux makes of it.
    ///
    /// Linux's `do_fcntl` reads the argument as an `int` (`argi = (int)arg`) and `f_dupfd` takes
    /// that as an `unsigned int`, so only the low 32 bits count: `0x1_0000_0003` asks for the
    /// lowest fd `>= 3`, `1 << 40` for the lowest fd `>= 0`, while `0xffff_ffff` and
    /// `0x8000_0000` (negative as an `int`) are `EINVAL`, as any value `>= nofile` is. The
    /// kernel-differential tests of the syscall layer check these against the running kernel.
    ///
    /// ```
    /// # use fdtable::{Errno, FileLike, FileRef, Files};
    /// # struct F; impl FileLike for F {}
    /// let files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024)?;
    /// assert_eq!(files.fcntl_dupfd(fd, 0x1_0000_0010, false, 1024), Ok(16));
    /// assert_eq!(files.fcntl_dupfd(fd, 0xffff_ffff, false, 1024), Err(Errno::EINVAL));
    /// # Ok::<(), Errno>(())
    /// ```
    pub fn fcntl_dupfd(&self, fd: u32, arg: u64, cloexec: bool, nofile: u64) -> Result<u32, Errno> {
        self.dupfd(fd, arg as u32, cloexec, nofile)
    }

    /// `dup2(oldfd, newfd)` — makes `newfd` refer to `oldfd`'s file (with a copy of its
    /// payload), closing what it referred to (flushed, error ignored) and clearing its
    /// close-on-exec bit.
    ///
    /// - `oldfd == newfd`: returns it if installed, else `EBADF`; changes nothing.
    /// - `newfd >= nofile`: `EBADF` (not `EMFILE`, unlike `F_DUPFD`'s `EINVAL`).
    /// - `oldfd` not installed: `EBADF`.
    /// - `newfd` reserved by an open in progress: `EBUSY`.
    ///
    /// # References
    ///
    /// [dup2(2)](https://man7.org/linux/man-pages/man2/dup2.2.html)
    pub fn dup2(&mut self, oldfd: u32, newfd: u32, nofile: u64) -> Result<u32, Errno> {
        if oldfd == newfd {
            return match self.fget(oldfd) {
                Some(_) => Ok(oldfd),
                None => Err(Errno::EBADF),
            };
        }
        self.do_dup3(oldfd, newfd, false, nofile)
    }

    /// `dup3(oldfd, newfd, flags)` — [`Files::dup2`] with `O_CLOEXEC` as the only flag
    /// (`EINVAL` for any other), and `EINVAL` when `oldfd == newfd`.
    pub fn dup3(&mut self, oldfd: u32, newfd: u32, flags: u32, nofile: u64) -> Result<u32, Errno> {
        if flags & !O_CLOEXEC != 0 {
            return Err(Errno::EINVAL);
        }
        if oldfd == newfd {
            return Err(Errno::EINVAL);
        }
        self.do_dup3(oldfd, newfd, flags & O_CLOEXEC != 0, nofile)
    }

    fn do_dup3(
        &mut self,
        oldfd: u32,
        newfd: u32,
        cloexec: bool,
        nofile: u64,
    ) -> Result<u32, Errno> {
        if newfd as u64 >= nofile {
            return Err(Errno::EBADF);
        }
        let r = self.locked(|l| {
            let expanded = l.expand_files(newfd as usize);
            let file = l.lookup(oldfd as usize).ok_or(Errno::EBADF)?;
            match expanded {
                Err(Errno::EMFILE) => return Err(Errno::EBADF),
                Err(e) => return Err(e),
                Ok(()) => {}
            }
            if l.is_open(newfd as usize) && l.lookup(newfd as usize).is_none() {
                return Err(Errno::EBUSY);
            }
            let payload = l.payload(oldfd as usize);
            // `file` was looked up after `expand_files`, which may drop the lock: its slot
            // holds it for as long as we hold the lock.
            match l.do_dup2(file.get(), newfd as usize, cloexec, payload) {
                Ok(displaced) => Ok(displaced),
                Err(_) => unreachable!("`newfd` was checked not to be reserved"),
            }
        })?;
        if let Some(f) = r {
            let _ = filp_close(f);
        }
        Ok(newfd)
    }

    /// `fd_renumber(from, to)` — moves the file at `from` to `to` in one step, as `dup2(from,
    /// to)` followed by `close(from)` under one lock hold, so no other thread sees the file
    /// at both numbers or at neither: what WASI's `fd_renumber` needs. The payload moves with
    /// the file; `to`'s close-on-exec bit is clear (as after `dup2`); what was at `to` is
    /// closed as `dup2` closes it. The moved file is not flushed: no descriptor referring to
    /// it is closed. Returns `to`.
    ///
    /// - `from == to`: returns it if installed, else `EBADF`; changes nothing.
    /// - `to >= nofile`: `EBADF`; `from` not installed: `EBADF`.
    /// - `to` reserved by an open in progress: `EBUSY`.
    ///
    /// On error nothing changes.
    pub fn renumber(&mut self, from: u32, to: u32, nofile: u64) -> Result<u32, Errno> {
        self.do_renumber(from, to, nofile, false)
    }

    /// As [`Files::renumber`], but `to` must already be installed: WASI preview 1's
    /// `fd_renumber`, which replaces an open descriptor and never creates one. The check and
    /// the move happen under one lock hold, so no other handle can close `to` in between.
    ///
    /// - `to` free, past the table or `>= nofile`: `EBADF`.
    /// - `to` reserved (an open in progress, [`Files::get_unused_fd_flags`] or
    ///   [`Files::reserve_owned`]): `EBADF` too, not [`renumber`](Files::renumber)'s `EBUSY`.
    ///   The open has not returned the number yet, so to the caller it is not an open
    ///   descriptor, and WASI answers `EBADF` for any `to` that is not one (wasmtime's preview 1
    ///   checks `to` against its open descriptors first). The reservation is left as it was.
    /// - `from` not installed: `EBADF`; `from == to`: returns it if installed, else `EBADF`.
    ///
    /// On error nothing changes.
    ///
    /// ```
    /// # use fdtable::{Errno, FileLike, FileRef, Files};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let a = files.install(FileRef::new(F), 0, 1024)?;
    /// let pending = files.reserve_owned(0, 1024)?; // a path_open awaiting its file
    /// assert_eq!(files.renumber_onto(a, pending.fd(), 1024), Err(Errno::EBADF));
    /// assert_eq!(files.renumber_onto(a, 9, 1024), Err(Errno::EBADF)); // free
    /// let b = pending.install(FileRef::new(F));
    /// assert_eq!(files.renumber_onto(a, b, 1024), Ok(b));
    /// # Ok::<(), Errno>(())
    /// ```
    pub fn renumber_onto(&mut self, from: u32, to: u32, nofile: u64) -> Result<u32, Errno> {
        self.do_renumber(from, to, nofile, true)
    }

    fn do_renumber(
        &mut self,
        from: u32,
        to: u32,
        nofile: u64,
        to_must_be_open: bool,
    ) -> Result<u32, Errno> {
        if from == to {
            return match self.fget(from) {
                Some(_) => Ok(from),
                None => Err(Errno::EBADF),
            };
        }
        if to as u64 >= nofile {
            return Err(Errno::EBADF);
        }
        let displaced = self.locked(|l| {
            if to_must_be_open && l.lookup(to as usize).is_none() {
                // Free, reserved, or beyond the table (checked before any growth): not an open
                // descriptor.
                return Err(Errno::EBADF);
            }
            let expanded = l.expand_files(to as usize);
            l.lookup(from as usize).ok_or(Errno::EBADF)?;
            match expanded {
                Err(Errno::EMFILE) => return Err(Errno::EBADF),
                Err(e) => return Err(e),
                Ok(()) => {}
            }
            if l.is_open(to as usize) && l.lookup(to as usize).is_none() {
                return Err(Errno::EBUSY);
            }
            let payload = l.payload(from as usize);
            let Some(file) = l.file_close_fd_locked(from as usize) else {
                unreachable!("`from` was installed above, under the same lock hold")
            };
            match l.do_dup2(FileRef::into_inner(file), to as usize, false, payload) {
                Ok(displaced) => Ok(displaced),
                Err(_) => unreachable!("`to` was checked not to be reserved"),
            }
        })?;
        if let Some(f) = displaced {
            let _ = filp_close(f);
        }
        Ok(to)
    }

    /// `fcntl(fd, F_GETFD)`: the close-on-exec bit. `EBADF` if `fd` is not installed.
    pub fn get_close_on_exec(&self, fd: u32) -> Result<bool, Errno> {
        let fd = fd as usize;
        self.locked(|l| {
            if l.lookup(fd).is_none() {
                return Err(Errno::EBADF);
            }
            Ok(l.cloexec(fd))
        })
    }

    /// `fcntl(fd, F_SETFD)` / `ioctl(FIOCLEX / FIONCLEX)`: sets or clears close-on-exec.
    /// `EBADF` if `fd` is not installed.
    pub fn set_close_on_exec(&self, fd: u32, cloexec: bool) -> Result<(), Errno> {
        let fd = fd as usize;
        self.locked(|l| {
            if l.lookup(fd).is_none() {
                return Err(Errno::EBADF);
            }
            l.set_cloexec(fd, cloexec);
            Ok(())
        })
    }

    /// The payload of `fd`. `EBADF` if `fd` is not installed.
    pub fn fd_payload(&self, fd: u32) -> Result<P, Errno> {
        let fd = fd as usize;
        self.locked(|l| {
            if l.lookup(fd).is_none() {
                return Err(Errno::EBADF);
            }
            Ok(l.payload(fd))
        })
    }

    /// Replaces the payload of `fd`. `EBADF` if `fd` is not installed.
    pub fn set_fd_payload(&self, fd: u32, payload: P) -> Result<(), Errno> {
        let fd = fd as usize;
        self.locked(|l| {
            if l.lookup(fd).is_none() {
                return Err(Errno::EBADF);
            }
            l.set_payload(fd, payload);
            Ok(())
        })
    }

    /// Sets the payload of `fd` to `new` if it is still `current`, under the table lock (no
    /// lock when unshared): `Ok(Ok(()))` if it was replaced, `Ok(Err(actual))` if another
    /// handle changed it first, `EBADF` if `fd` is not installed. For payloads several
    /// threads update, such as rights that may only narrow.
    ///
    /// The comparison (`P`'s `PartialEq`) runs under the table lock: it must not call into
    /// this table.
    pub fn cmpxchg_fd_payload(&self, fd: u32, current: P, new: P) -> Result<Result<(), P>, Errno>
    where
        P: PartialEq,
    {
        let fd = fd as usize;
        self.locked(|l| {
            if l.lookup(fd).is_none() {
                return Err(Errno::EBADF);
            }
            let actual = l.payload(fd);
            if actual != current {
                return Ok(Err(actual));
            }
            l.set_payload(fd, new);
            Ok(Ok(()))
        })
    }

    /// Everything the table holds for `fd` — a counted reference to its file, its
    /// close-on-exec bit and its payload — read under one lock hold (no lock when the table
    /// is unshared), so the three belong together. `EBADF` if `fd` is not installed.
    pub fn fd_entry(&self, fd: u32) -> Result<OpenFd<F, P>, Errno> {
        let n = fd;
        let fd = fd as usize;
        self.locked(|l| {
            let f = l.lookup(fd).ok_or(Errno::EBADF)?;
            Ok(OpenFd {
                fd: n,
                cloexec: l.cloexec(fd),
                payload: l.payload(fd),
                // SAFETY: `get` took a reference for the result.
                file: unsafe { FileRef::from_inner(f.get()) },
            })
        })
    }

    /// A counted reference to the file at `fd` together with its payload, read under one lock
    /// hold (no lock when the table is unshared). `EBADF` if `fd` is not installed.
    pub fn fget_with_payload(&self, fd: u32) -> Result<(FileRef<F>, P), Errno> {
        let fd = fd as usize;
        self.locked(|l| {
            let f = l.lookup(fd).ok_or(Errno::EBADF)?;
            // SAFETY: `get` took a reference for the result.
            Ok((unsafe { FileRef::from_inner(f.get()) }, l.payload(fd)))
        })
    }

    /// `fcntl(fd, F_DUPFD_QUERY, other)`: whether `other` refers to the same open file as
    /// `fd`. `EBADF` if either is not installed.
    pub fn dupfd_query(&self, fd: u32, other: u32) -> Result<bool, Errno> {
        let a = self.fget(fd).ok_or(Errno::EBADF)?;
        let b = self.fget(other).ok_or(Errno::EBADF)?;
        Ok(FileRef::ptr_eq(&a, &b))
    }
}

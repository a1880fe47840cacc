//! Closing: `close`, `close_range`, and the close-on-exec pass of `execve`.

use super::{FdPayload, FileLike, Files, filp_close};
use crate::bitmap::{BITS_PER_LONG, Long};
use crate::errno::Errno;
use crate::file_ref::FileRef;
use crate::flags::{CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE};

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Files<F, P, L> {
    /// `close(fd)` — `file_close_fd` then `filp_close`: empties the slot and releases the fd
    /// under the lock, then, outside it, flushes the file and drops the table's reference
    /// (which releases the file if it was the last, before this returns).
    ///
    /// `EBADF` if `fd` is free or reserved (a reserved fd stays reserved). Otherwise returns
    /// the file's flush result; the fd is closed either way, so a request to restart the call
    /// (the kernel-internal `ERESTARTSYS` 512, `ERESTARTNOINTR` 513, `ERESTARTNOHAND` 514,
    /// `ERESTART_RESTARTBLOCK` 516) becomes `EINTR`, as in `close(2)`: a restarted close would
    /// find the fd gone, or close another file opened there since.
    #[inline(always)]
    pub fn close_fd(&mut self, fd: u32) -> Result<(), Errno> {
        let file = self.file_close_fd(fd)?;
        filp_close(file).map_err(no_restart)
    }

    /// `file_close_fd`: empties the slot and releases the fd, returning the table's reference
    /// to the caller without flushing it. `EBADF` if `fd` is not installed.
    #[inline(always)]
    pub fn file_close_fd(&mut self, fd: u32) -> Result<FileRef<F>, Errno> {
        let mut l = self.lock();
        let f = l.file_close_fd_locked(fd as usize);
        drop(l);
        f.ok_or(Errno::EBADF)
    }

    /// `close_range(first, last, flags)`.
    ///
    /// - `EINVAL` for flags other than `CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC`, or
    ///   `first > last`. `last` is clamped to the table, so `~0U` means "to the end".
    /// - `CLOSE_RANGE_UNSHARE` on a shared table first gives this handle a private copy that
    ///   leaves out the range (everything is copied with `CLOSE_RANGE_CLOEXEC`).
    ///   The copy's errors are [`Files::unshare`]'s: `EMFILE` when what it keeps does not fit
    ///   below `nr_open`, `ENOMEM`.
    /// - `CLOSE_RANGE_CLOEXEC` sets the bit over the whole range, empty and reserved slots
    ///   included; otherwise every installed fd in the range is closed (flush errors ignored)
    ///   and reserved fds are left alone.
    ///
    /// # References
    ///
    /// [close_range(2)](https://man7.org/linux/man-pages/man2/close_range.2.html)
    pub fn close_range(&mut self, first: u32, last: u32, flags: u32) -> Result<(), Errno> {
        if flags & !(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) != 0 {
            return Err(Errno::EINVAL);
        }
        if first > last {
            return Err(Errno::EINVAL);
        }
        let (first, last) = (first as usize, last as usize);
        // The table this handle used before unsharing; put after the range is done, as the
        // kernel does.
        let mut _old = None;
        if flags & CLOSE_RANGE_UNSHARE != 0 && self.is_shared() {
            let hole = if flags & CLOSE_RANGE_CLOEXEC != 0 {
                None
            } else {
                Some((first, last))
            };
            let copy = self.locked(|l| l.dup_fd(hole))?;
            _old = Some(core::mem::replace(self, Files::from_box(copy)));
        }
        if flags & CLOSE_RANGE_CLOEXEC != 0 {
            self.locked(|l| l.set_cloexec_range(first, last));
        } else {
            self.range_close(first, last);
        }
        Ok(())
    }

    /// `__range_close`: closes installed fds in `first..=last` one at a time, dropping the
    /// lock around each `filp_close`.
    fn range_close(&mut self, first: usize, last: usize) {
        let mut fd = first;
        loop {
            let file = self.locked(|l| {
                while fd <= last {
                    let next = l.next_open(fd)?;
                    if next > last {
                        return None;
                    }
                    fd = next + 1;
                    if let Some(f) = l.file_close_fd_locked(next) {
                        return Some(f);
                    }
                }
                None
            });
            match file {
                Some(f) => {
                    let _ = filp_close(f);
                }
                None => return,
            }
        }
    }

    /// The table's part of `execve`: unshare, then close every close-on-exec fd
    /// (`do_close_on_exec`). Each close-on-exec word is snapshotted and zeroed under the lock;
    /// reserved fds lose the bit and stay reserved.
    ///
    /// The caller must drop the handles of the other threads of the exec'ing process first
    /// (`de_thread`), so that a table shared only by those threads is not copied.
    pub fn exec(&mut self) -> Result<(), Errno> {
        self.unshare()?;
        let mut word = 0usize;
        let mut pending: Long = 0;
        loop {
            let file = self.locked(|l| {
                loop {
                    if pending == 0 {
                        loop {
                            match l.take_cloexec_word(word) {
                                None => return None,
                                Some(0) => word += 1,
                                Some(w) => {
                                    pending = w;
                                    word += 1;
                                    break;
                                }
                            }
                        }
                    }
                    let bit = pending.trailing_zeros() as usize;
                    pending &= pending - 1;
                    let fd = (word - 1) * BITS_PER_LONG + bit;
                    if let Some(f) = l.file_close_fd_locked(fd) {
                        return Some(f);
                    }
                }
            });
            match file {
                Some(f) => {
                    let _ = filp_close(f);
                }
                None => return Ok(()),
            }
        }
    }
}

/// `close(2)`'s last step: the flush's restart requests become `EINTR` (fs/open.c: "can't
/// restart close syscall because file table entry was cleared").
#[cold]
fn no_restart(e: Errno) -> Errno {
    // ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND, ERESTART_RESTARTBLOCK (include/linux/errno.h).
    match e.raw() {
        512 | 513 | 514 | 516 => Errno::EINTR,
        _ => e,
    }
}

//! [`File`]: the open file description (`struct file`, include/linux/fs.h): access mode and
//! status flags, the position and its lock, and the implementation's operations.

use crate::ops::FileOperations;
use crate::uapi::{
    FMODE_ATOMIC_POS, FMODE_CAN_READ, FMODE_CAN_WRITE, FMODE_CAPS, FMODE_CREATED, FMODE_OPENED,
    FMODE_PATH, FMODE_READ, FMODE_STREAM, FMODE_WRITE, O_ACCMODE, O_CLOEXEC, O_CREAT, O_EXCL,
    O_NOCTTY, O_PATH, O_TRUNC, S_IFMT,
};
use fdtable::{Errno, FileLike};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};

/// `f_pos_lock`: held only around one read or write of a regular file or directory, so the
/// table's spinlock ([`fdtable::RawSpinLock`]: one locked instruction to take, a plain store to
/// release; waiters spin briefly, then yield) rather than a sleeping mutex (two locked
/// instructions).
type PosLock = lock_api::Mutex<fdtable::RawSpinLock, ()>;
type PosLockGuard<'a> = lock_api::MutexGuard<'a, fdtable::RawSpinLock, ()>;

/// An open file description: what `open`, `pipe`, `socket`... create and what fds refer to.
/// `dup` and `fork` share one `File` (and so its position and status flags) between fds and
/// tasks; it lives in a [`FileRef`](fdtable::FileRef), whose last drop releases it.
///
/// # The position (`fdget_pos`)
///
/// `f_pos` is read and written by `read`, `write`, `lseek` and friends. When the file is
/// shared (more than one reference: another fd after `dup`, another task after `fork`, or a
/// shared table) and it has `FMODE_ATOMIC_POS` (regular files, directories), each of those
/// calls holds `f_pos_lock` around its read-modify-write of the position, so two of them never
/// use the same offset. When the file is not shared, nobody else can reach it, so the common
/// path takes no lock at all. See [`File::pos_lock`].
pub struct File {
    f_mode: u32,
    /// The file type (`i_mode & S_IFMT`), fixed for the file's life.
    f_type: u32,
    /// Status flags (`O_APPEND`, `O_NONBLOCK`, ... and the access mode), changed by `F_SETFL`,
    /// `FIONBIO` and `FIOASYNC`.
    f_flags: AtomicU32,
    f_pos: AtomicI64,
    f_pos_lock: PosLock,
    f_op: Arc<dyn FileOperations>,
}

impl File {
    /// A file opened with `flags` (`O_RDWR | O_APPEND`...) whose operations are `ops`.
    ///
    /// - `f_mode` gets `FMODE_READ`/`FMODE_WRITE` from the access mode (`O_ACCMODE` 3 gives
    ///   neither, as in Linux), plus the capabilities `ops` declares, with `FMODE_CAN_READ`
    ///   only if readable and `FMODE_CAN_WRITE` only if writable.
    /// - With `O_PATH` the file is only a location: `FMODE_PATH` and nothing else, so
    ///   `fdget`-style lookups (read, write, ioctl, lseek...) refuse it with `EBADF`.
    /// - `f_flags` keeps the flags minus the open-time-only ones (`O_CREAT`, `O_EXCL`,
    ///   `O_NOCTTY`, `O_TRUNC`, `O_CLOEXEC`).
    pub fn new(flags: u32, ops: Arc<dyn FileOperations>) -> File {
        let f_type = ops.getattr().mode & S_IFMT;
        let f_mode = if flags & O_PATH != 0 {
            FMODE_PATH | FMODE_OPENED
        } else {
            let acc = (flags.wrapping_add(1)) & O_ACCMODE; // OPEN_FMODE
            let mut m = acc | FMODE_OPENED | (ops.fmode() & FMODE_CAPS);
            if m & FMODE_READ == 0 {
                m &= !FMODE_CAN_READ;
            }
            if m & FMODE_WRITE == 0 {
                m &= !FMODE_CAN_WRITE;
            }
            m
        };
        File {
            f_mode,
            f_type,
            f_flags: AtomicU32::new(flags & !(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC)),
            f_pos: AtomicI64::new(0),
            f_pos_lock: PosLock::new(()),
            f_op: ops,
        }
    }

    /// Marks the file as created by its open (`FMODE_CREATED`, seen by `F_CREATED_QUERY`).
    pub fn set_created(mut self) -> File {
        self.f_mode |= FMODE_CREATED;
        self
    }

    /// `f_mode`.
    #[inline]
    pub fn f_mode(&self) -> u32 {
        self.f_mode
    }

    /// The status flags (`f_flags`, what `F_GETFL` returns).
    #[inline]
    pub fn flags(&self) -> u32 {
        // ORDERING: Relaxed; the flags guard no other data, and readers take whichever value
        // a concurrent F_SETFL left, as the kernel's unlocked `f_flags` reads do.
        self.f_flags.load(Ordering::Relaxed)
    }

    /// Replaces the bits of `mask` in the status flags with those of `value` (under the
    /// kernel's `f_lock`; here one atomic update).
    pub(crate) fn update_flags(&self, mask: u32, value: u32) {
        // ORDERING: Relaxed both; see `flags`. The update is one atomic read-modify-write so
        // concurrent updates of different bits are not lost.
        let _ = self
            .f_flags
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |f| {
                Some((f & !mask) | (value & mask))
            });
    }

    /// The file type (`S_IFREG`, `S_IFIFO`...; 0 for anonymous inodes such as eventfd).
    #[inline]
    pub fn file_type(&self) -> u32 {
        self.f_type
    }

    /// The implementation's operations.
    #[inline]
    pub fn ops(&self) -> &dyn FileOperations {
        &*self.f_op
    }

    /// The operations, shared.
    pub fn ops_arc(&self) -> &Arc<dyn FileOperations> {
        &self.f_op
    }

    /// The operations as their concrete type, if they are a `T` (how a file system recognises
    /// its own directories given as `dirfd`, or how `fcntl` finds a pipe).
    pub fn ops_as<T: FileOperations>(&self) -> Option<&T> {
        let any: &dyn std::any::Any = &*self.f_op;
        any.downcast_ref::<T>()
    }

    /// The position now, read without the position lock (as `FIONREAD` and `sendfile` read
    /// `f_pos`).
    #[inline]
    pub fn pos(&self) -> i64 {
        // ORDERING: Relaxed; see `PosGuard::get`.
        self.f_pos.load(Ordering::Relaxed)
    }

    /// Sets the position without the lock (`sendfile` does this).
    #[inline]
    pub(crate) fn set_pos_unlocked(&self, pos: i64) {
        // ORDERING: Relaxed; see `PosGuard::set`.
        self.f_pos.store(pos, Ordering::Relaxed)
    }

    /// `file_ppos`'s test: whether read and write use a position at all.
    #[inline]
    pub fn is_stream(&self) -> bool {
        self.f_mode & FMODE_STREAM != 0
    }

    /// `fdget_pos`'s locking rule: takes `f_pos_lock` if the file has `FMODE_ATOMIC_POS` and
    /// `file_count` (the references on it now, from [`fdtable::Fd::file_count`]) is above 1.
    ///
    /// With one reference the caller's is the only one: the file is in an unshared table and
    /// in no other fd, so no other task can reach it until this caller shares it, and the
    /// position needs no lock.
    #[inline]
    pub fn pos_lock(&self, file_count: usize) -> PosGuard<'_> {
        let lock = if self.f_mode & FMODE_ATOMIC_POS != 0 && file_count > 1 {
            Some(self.pos_lock_slow())
        } else {
            None
        };
        PosGuard {
            file: self,
            _lock: lock,
        }
    }

    #[cold]
    fn pos_lock_slow(&self) -> PosLockGuard<'_> {
        self.f_pos_lock.lock()
    }
}

/// The file position, held across one syscall as `fdget_pos` holds it: locked if the file is
/// shared (see [`File::pos_lock`]), free otherwise. Dropping it unlocks (`fdput_pos`).
pub struct PosGuard<'a> {
    file: &'a File,
    _lock: Option<PosLockGuard<'a>>,
}

impl PosGuard<'_> {
    /// The position.
    #[inline]
    pub fn get(&self) -> i64 {
        // ORDERING: Relaxed; when the file is shared the Mutex orders this against the other
        // holders' stores (its unlock/lock pair is Release/Acquire); when it is not, this task
        // is the only user. Files without FMODE_ATOMIC_POS race as they do in the kernel, but
        // on an atomic, so a racing reader sees some stored position, never a torn one.
        self.file.f_pos.load(Ordering::Relaxed)
    }

    /// Stores the position.
    #[inline]
    pub fn set(&self, pos: i64) {
        // ORDERING: Relaxed; see `get`.
        self.file.f_pos.store(pos, Ordering::Relaxed)
    }
}

impl FileLike for File {
    /// `filp_flush`: `->flush` on every close. An `O_PATH` file has no operations to flush.
    fn flush(&self) -> Result<(), Errno> {
        if self.f_mode & FMODE_PATH != 0 {
            return Ok(());
        }
        self.f_op.flush(self)
    }

    /// Only a file whose operations never wait ([`FileOperations::never_blocks`]) is lent
    /// without a reference: any other would be upgraded to a counted one for every call.
    fn may_lend(&self) -> bool {
        self.f_mode & FMODE_PATH == 0 && self.f_op.never_blocks()
    }

    /// A file whose ioctls never wait ([`FileOperations::ioctl_never_blocks`]: a pipe, a
    /// socket) is lent to [`Task::ioctl`](crate::Task::ioctl), which uses the non-blocking
    /// borrow, even if its reads may wait.
    fn may_lend_nonblocking(&self) -> bool {
        self.f_mode & FMODE_PATH == 0 && self.f_op.ioctl_never_blocks()
    }
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("f_mode", &format_args!("{:#x}", self.f_mode))
            .field("f_flags", &format_args!("{:#o}", self.flags()))
            .field("f_type", &format_args!("{:#o}", self.f_type))
            .field("f_pos", &self.pos())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Kstat;
    use crate::uapi::*;

    struct Plain;
    impl FileOperations for Plain {
        fn fmode(&self) -> u32 {
            FMODE_CAN_READ | FMODE_CAN_WRITE | FMODE_LSEEK | FMODE_ATOMIC_POS
        }
        fn getattr(&self) -> Kstat {
            Kstat {
                mode: S_IFREG | 0o644,
                ..Kstat::default()
            }
        }
    }

    #[test]
    fn fmode_from_access_mode() {
        let ops: Arc<dyn FileOperations> = Arc::new(Plain);
        let r = File::new(O_RDONLY, ops.clone());
        assert_eq!(r.f_mode() & (FMODE_READ | FMODE_WRITE), FMODE_READ);
        assert_eq!(r.f_mode() & FMODE_CAN_WRITE, 0);
        assert_ne!(r.f_mode() & FMODE_CAN_READ, 0);
        let w = File::new(O_WRONLY, ops.clone());
        assert_eq!(w.f_mode() & (FMODE_READ | FMODE_WRITE), FMODE_WRITE);
        assert_eq!(w.f_mode() & FMODE_CAN_READ, 0);
        let rw = File::new(
            O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND,
            ops.clone(),
        );
        assert_eq!(rw.f_mode() & 3, FMODE_READ | FMODE_WRITE);
        assert_eq!(rw.flags(), O_RDWR | O_APPEND);
        let neither = File::new(3, ops.clone());
        assert_eq!(neither.f_mode() & 3, 0);
        let p = File::new(O_PATH, ops);
        assert_eq!(p.f_mode(), FMODE_PATH | FMODE_OPENED);
        assert_eq!(p.file_type(), S_IFREG);
        assert!(p.set_created().f_mode() & FMODE_CREATED != 0);
    }

    #[test]
    fn pos_lock_only_when_shared() {
        let f = File::new(O_RDWR, Arc::new(Plain));
        {
            let g = f.pos_lock(1);
            assert!(g._lock.is_none());
            g.set(7);
        }
        {
            let g = f.pos_lock(2);
            assert!(g._lock.is_some());
            assert_eq!(g.get(), 7);
            // The lock is really held.
            assert!(f.f_pos_lock.try_lock().is_none());
        }
        assert!(f.f_pos_lock.try_lock().is_some());
        f.update_flags(O_NONBLOCK, O_NONBLOCK);
        assert_eq!(f.flags(), O_RDWR | O_NONBLOCK);
        assert!(f.ops_as::<Plain>().is_some());
    }
}

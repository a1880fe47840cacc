//! `eventfd` (fs/eventfd.c): a 64-bit counter read and written in 8-byte units, with
//! `EFD_SEMAPHORE` and `EFD_NONBLOCK`.

use crate::file::File;
use crate::iov::IovIterMut;
use crate::ops::{FileOperations, Kstat, noop_llseek};
use crate::task::Task;
use crate::uapi::*;
use fdtable::{Errno, FdPayload, FileRef};
use std::io::IoSliceMut;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The largest count (`ULLONG_MAX - 1`); a write that would pass it waits.
const EVENTFD_MAX: u64 = u64::MAX - 1;

struct State {
    count: u64,
    rd_waiters: usize,
    wr_waiters: usize,
}

/// An eventfd's context (`struct eventfd_ctx`), the operations of an eventfd file.
pub struct EventFd {
    state: Mutex<State>,
    /// Readers wait for a non-zero count, writers for room; one queue, as `ctx->wqh`.
    wqh: Condvar,
    semaphore: bool,
    ino: u64,
}

static EVENTFD_INO: AtomicU64 = AtomicU64::new(1);

/// `do_eventfd`'s file: `O_RDWR` plus `O_NONBLOCK` from `EFD_NONBLOCK`.
pub fn eventfd_file(initval: u32, flags: u32) -> File {
    let ctx = EventFd {
        state: Mutex::new(State {
            count: initval as u64,
            rd_waiters: 0,
            wr_waiters: 0,
        }),
        wqh: Condvar::new(),
        semaphore: flags & EFD_SEMAPHORE != 0,
        // ORDERING: Relaxed; a unique counter.
        ino: EVENTFD_INO.fetch_add(1, Ordering::Relaxed),
    };
    File::new(O_RDWR | (flags & O_NONBLOCK), Arc::new(ctx))
}

impl EventFd {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.wqh.wait(st).unwrap_or_else(|p| p.into_inner())
    }

    /// The counter now.
    pub fn count(&self) -> u64 {
        self.lock().count
    }
}

impl FileOperations for EventFd {
    fn fmode(&self) -> u32 {
        FMODE_CAN_READ | FMODE_CAN_WRITE | FMODE_LSEEK
    }

    /// An anonymous inode: no file-type bits, mode 0600.
    fn getattr(&self) -> Kstat {
        Kstat {
            mode: 0o600,
            ino: self.ino,
            nlink: 1,
            size: 0,
            blksize: PAGE_SIZE as u32,
            blocks: 0,
            rdev: 0,
        }
    }

    /// `eventfd_read`: `EINVAL` below 8 bytes; the count (or 1 in semaphore mode), which is
    /// then reset (or decremented); `EAGAIN` or wait while it is 0.
    fn read(&self, file: &File, buf: &mut [u8], _pos: Option<&mut i64>) -> Result<usize, Errno> {
        if buf.len() < 8 {
            return Err(Errno::EINVAL);
        }
        let mut st = self.lock();
        while st.count == 0 {
            if file.flags() & O_NONBLOCK != 0 {
                return Err(Errno::EAGAIN);
            }
            st.rd_waiters += 1;
            st = self.wait(st);
            st.rd_waiters -= 1;
        }
        let v = if self.semaphore { 1 } else { st.count };
        st.count -= v;
        if st.wr_waiters > 0 {
            self.wqh.notify_all();
        }
        buf[..8].copy_from_slice(&v.to_ne_bytes());
        Ok(8)
    }

    /// `eventfd_read` is a `read_iter`: the 8 bytes may span several buffers.
    fn readv(
        &self,
        file: &File,
        bufs: &mut [IoSliceMut<'_>],
        _pos: Option<&mut i64>,
    ) -> Result<usize, Errno> {
        let mut to = IovIterMut::new(bufs);
        if to.count() < 8 {
            return Err(Errno::EINVAL);
        }
        let mut b = [0u8; 8];
        let n = self.read(file, &mut b, None)?;
        to.copy_in(&b[..n]);
        Ok(n)
    }

    /// `eventfd_write`: `EINVAL` below 8 bytes or for `u64::MAX`; adds, waiting (or `EAGAIN`)
    /// while the sum would pass `u64::MAX - 1`.
    fn write(&self, file: &File, buf: &[u8], _pos: Option<&mut i64>) -> Result<usize, Errno> {
        if buf.len() < 8 {
            return Err(Errno::EINVAL);
        }
        let v = u64::from_ne_bytes(buf[..8].try_into().expect("8 bytes"));
        if v == u64::MAX {
            return Err(Errno::EINVAL);
        }
        let mut st = self.lock();
        while EVENTFD_MAX - st.count < v {
            if file.flags() & O_NONBLOCK != 0 {
                return Err(Errno::EAGAIN);
            }
            st.wr_waiters += 1;
            st = self.wait(st);
            st.wr_waiters -= 1;
        }
        st.count += v;
        if st.rd_waiters > 0 && v > 0 {
            self.wqh.notify_all();
        }
        Ok(8)
    }

    /// `noop_llseek`.
    fn llseek(&self, _file: &File, cur: i64, _offset: i64, _whence: i32) -> Result<i64, Errno> {
        noop_llseek(cur)
    }

    /// `eventfd_poll`.
    fn poll(&self, _file: &File) -> u16 {
        let c = self.lock().count;
        let mut mask = 0;
        if c > 0 {
            mask |= POLLIN | POLLRDNORM;
        }
        if c == u64::MAX {
            mask |= POLLERR;
        }
        if c < EVENTFD_MAX {
            mask |= POLLOUT | POLLWRNORM;
        }
        mask
    }
}

impl<P: FdPayload> Task<P> {
    /// `eventfd2(initval, flags)` — `flags`: `EFD_CLOEXEC`, `EFD_NONBLOCK`,
    /// `EFD_SEMAPHORE`; `EINVAL` for anything else. `EMFILE`.
    ///
    /// # References
    ///
    /// [eventfd(2)](https://man7.org/linux/man-pages/man2/eventfd.2.html)
    pub fn eventfd2(&self, initval: u32, flags: u32) -> Result<i32, Errno> {
        if flags & !(EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE) != 0 {
            return Err(Errno::EINVAL);
        }
        let slot = self
            .files
            .get_unused_fd_flags(flags & EFD_CLOEXEC, self.nofile())?;
        Ok(slot.install(FileRef::new(eventfd_file(initval, flags))) as i32)
    }

    /// `eventfd(initval)` — `eventfd2(initval, 0)`.
    pub fn eventfd(&self, initval: u32) -> Result<i32, Errno> {
        self.eventfd2(initval, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rd(f: &File) -> Result<u64, Errno> {
        let mut b = [0u8; 8];
        f.ops().read(f, &mut b, None).map(|_| u64::from_ne_bytes(b))
    }

    fn wr(f: &File, v: u64) -> Result<usize, Errno> {
        f.ops().write(f, &v.to_ne_bytes(), None)
    }

    #[test]
    fn counter_and_semaphore() {
        let f = eventfd_file(3, EFD_NONBLOCK);
        assert_eq!(f.flags(), O_RDWR | O_NONBLOCK);
        assert_eq!(f.file_type(), 0);
        assert_eq!(rd(&f), Ok(3));
        assert_eq!(rd(&f), Err(Errno::EAGAIN));
        assert_eq!(wr(&f, 2), Ok(8));
        assert_eq!(wr(&f, u64::MAX), Err(Errno::EINVAL));
        assert_eq!(f.ops().read(&f, &mut [0; 7], None), Err(Errno::EINVAL));
        assert_eq!(f.ops().write(&f, &[0; 4], None), Err(Errno::EINVAL));
        assert_eq!(wr(&f, EVENTFD_MAX), Err(Errno::EAGAIN));
        assert_eq!(rd(&f), Ok(2));
        assert_eq!(wr(&f, EVENTFD_MAX), Ok(8));
        assert_eq!(f.ops().poll(&f) & POLLOUT, 0);

        let s = eventfd_file(2, EFD_SEMAPHORE | EFD_NONBLOCK);
        assert_eq!(rd(&s), Ok(1));
        assert_eq!(rd(&s), Ok(1));
        assert_eq!(rd(&s), Err(Errno::EAGAIN));
    }

    #[test]
    fn blocking_read_wakes() {
        let f = Arc::new(eventfd_file(0, 0));
        let g = f.clone();
        let t = std::thread::spawn(move || rd(&g));
        wr(&f, 9).unwrap();
        assert_eq!(t.join().unwrap(), Ok(9));
    }
}

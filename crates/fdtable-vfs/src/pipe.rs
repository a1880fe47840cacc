//! Anonymous pipes (fs/pipe.c): a ring of page-sized buffers, 16 slots (64 KiB) by default,
//! with Linux's merge rule for small writes, `PIPE_BUF` atomicity, packet mode (`O_DIRECT`),
//! blocking and `O_NONBLOCK` reads and writes, `EPIPE` without readers, end of file without
//! writers, `FIONREAD`, poll readiness and `F_GETPIPE_SZ` / `F_SETPIPE_SZ`.
//!
//! Locking: one mutex per pipe (`pipe->mutex`) and two condition variables (`rd_wait`,
//! `wr_wait`); waiters are counted so that the common, uncontended path makes no wake-up call.
//! No signals: a write without readers returns `EPIPE` and sends no `SIGPIPE`, and a blocked
//! read or write is not interruptible.

use crate::file::File;
use crate::iov::{IovIter, IovIterMut};
use crate::ops::{FileOperations, Kstat};
use crate::task::Task;
use crate::uaccess::{UserMemory, put_user_i32};
use crate::uapi::*;
use fdtable::{Errno, FdPayload};
use std::collections::VecDeque;
use std::io::{IoSlice, IoSliceMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

type Page = [u8; PAGE_SIZE];

/// `PIPE_BUF_FLAG_CAN_MERGE`: later small writes may append to this buffer.
const CAN_MERGE: u8 = 1;
/// `PIPE_BUF_FLAG_PACKET`: one write, read as one packet (`O_DIRECT` pipes).
const PACKET: u8 = 2;

/// `struct pipe_buffer`: a page holding `len` bytes from `offset`.
struct PipeBuffer {
    page: Box<Page>,
    offset: usize,
    len: usize,
    flags: u8,
}

/// The state under `pipe->mutex`.
struct PipeState {
    bufs: VecDeque<PipeBuffer>,
    /// `max_usage`: slots in use at most (the capacity is this many pages).
    max_usage: usize,
    readers: usize,
    writers: usize,
    rd_waiters: usize,
    wr_waiters: usize,
    /// `tmp_page`: one freed page kept for the next write.
    spare: Option<Box<Page>>,
}

impl PipeState {
    fn is_full(&self) -> bool {
        self.bufs.len() >= self.max_usage
    }

    fn take_page(&mut self) -> Box<Page> {
        self.spare
            .take()
            .unwrap_or_else(|| Box::new([0; PAGE_SIZE]))
    }

    fn nr_bytes(&self) -> usize {
        self.bufs.iter().map(|b| b.len).sum()
    }
}

/// `struct pipe_inode_info`, shared by both ends.
pub struct Pipe {
    state: Mutex<PipeState>,
    rd_wait: Condvar,
    wr_wait: Condvar,
    ino: u64,
}

static PIPE_INO: AtomicU64 = AtomicU64::new(1);

impl Pipe {
    fn new() -> Arc<Pipe> {
        Arc::new(Pipe {
            state: Mutex::new(PipeState {
                bufs: VecDeque::with_capacity(PIPE_DEF_BUFFERS),
                max_usage: PIPE_DEF_BUFFERS,
                readers: 1,
                writers: 1,
                rd_waiters: 0,
                wr_waiters: 0,
                spare: None,
            }),
            rd_wait: Condvar::new(),
            wr_wait: Condvar::new(),
            // ORDERING: Relaxed; a unique counter.
            ino: PIPE_INO.fetch_add(1, Ordering::Relaxed),
        })
    }

    fn lock(&self) -> MutexGuard<'_, PipeState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `create_pipe_files`: the two ends of a new pipe as files, read end first. `flags` may hold
/// `O_NONBLOCK` (both ends) and `O_DIRECT` (the write end: packet mode).
pub fn create_pipe_files(flags: u32) -> (File, File) {
    let pipe = Pipe::new();
    let r = File::new(
        O_RDONLY | (flags & O_NONBLOCK),
        Arc::new(PipeEnd {
            pipe: pipe.clone(),
            mode: FMODE_READ,
        }),
    );
    let w = File::new(
        O_WRONLY | (flags & (O_NONBLOCK | O_DIRECT)),
        Arc::new(PipeEnd {
            pipe,
            mode: FMODE_WRITE,
        }),
    );
    (r, w)
}

/// One open end of a pipe (the operations of a pipe file). Dropping it (the file's release)
/// drops a reader or a writer and wakes the other side.
pub struct PipeEnd {
    pipe: Arc<Pipe>,
    /// `FMODE_READ` and/or `FMODE_WRITE`: which count this end holds.
    mode: u32,
}

impl PipeEnd {
    /// `anon_pipe_read`.
    fn pipe_read(&self, file: &File, to: &mut IovIterMut<'_, '_>) -> Result<usize, Errno> {
        let mut total_len = to.count();
        if total_len == 0 {
            return Ok(0);
        }
        let mut st = self.pipe.lock();
        let mut ret = 0usize;
        let mut freed = false;
        loop {
            if let Some(buf) = st.bufs.front_mut() {
                let chars = buf.len.min(total_len);
                let copied = to.copy_in(&buf.page[buf.offset..buf.offset + chars]);
                debug_assert_eq!(copied, chars);
                ret += chars;
                buf.offset += chars;
                buf.len -= chars;
                if buf.flags & PACKET != 0 {
                    // The rest of a packet is dropped.
                    total_len = chars;
                    buf.len = 0;
                }
                if buf.len == 0 {
                    let b = st.bufs.pop_front().expect("front exists");
                    st.spare.get_or_insert(b.page);
                    freed = true;
                }
                total_len -= chars;
                if total_len == 0 {
                    break;
                }
                if !st.bufs.is_empty() {
                    continue;
                }
            }
            if st.writers == 0 || ret > 0 {
                break;
            }
            if file.flags() & O_NONBLOCK != 0 {
                return Err(Errno::EAGAIN);
            }
            st.rd_waiters += 1;
            st = self
                .pipe
                .rd_wait
                .wait(st)
                .unwrap_or_else(|p| p.into_inner());
            st.rd_waiters -= 1;
        }
        if freed && st.wr_waiters > 0 {
            self.pipe.wr_wait.notify_all();
        }
        Ok(ret)
    }

    /// `anon_pipe_write`.
    fn pipe_write(&self, file: &File, from: &mut IovIter<'_, '_>) -> Result<usize, Errno> {
        let total_len = from.count();
        if total_len == 0 {
            return Ok(0);
        }
        let mut st = self.pipe.lock();
        if st.readers == 0 {
            return Err(Errno::EPIPE);
        }
        let packet = file.flags() & O_DIRECT != 0;
        let mut ret = 0usize;
        // Merge the head of a write that is not a whole number of pages into the last buffer.
        let chars = total_len & (PAGE_SIZE - 1);
        if chars != 0
            && let Some(buf) = st.bufs.back_mut()
            && buf.flags & CAN_MERGE != 0
            && buf.offset + buf.len + chars <= PAGE_SIZE
        {
            let at = buf.offset + buf.len;
            let n = from.copy_out(&mut buf.page[at..at + chars]);
            buf.len += n;
            ret = n;
        }
        while from.count() > 0 {
            if st.readers == 0 {
                if ret == 0 {
                    return Err(Errno::EPIPE);
                }
                break;
            }
            if !st.is_full() {
                let mut page = st.take_page();
                let copied = from.copy_out(&mut page[..]);
                st.bufs.push_back(PipeBuffer {
                    page,
                    offset: 0,
                    len: copied,
                    flags: if packet { PACKET } else { CAN_MERGE },
                });
                ret += copied;
                continue;
            }
            if file.flags() & O_NONBLOCK != 0 {
                if ret == 0 {
                    return Err(Errno::EAGAIN);
                }
                break;
            }
            if ret > 0 && st.rd_waiters > 0 {
                self.pipe.rd_wait.notify_all();
            }
            st.wr_waiters += 1;
            st = self
                .pipe
                .wr_wait
                .wait(st)
                .unwrap_or_else(|p| p.into_inner());
            st.wr_waiters -= 1;
        }
        if ret > 0 && st.rd_waiters > 0 {
            self.pipe.rd_wait.notify_all();
        }
        Ok(ret)
    }

    /// `F_GETPIPE_SZ`: the capacity in bytes.
    pub fn pipe_size(&self) -> usize {
        self.pipe.lock().max_usage * PAGE_SIZE
    }

    /// `F_SETPIPE_SZ` (`pipe_set_size`): rounds `arg` up to a power of two of at least a page;
    /// `EINVAL` past 2 GiB, `EPERM` past `pipe-max-size` (1 MiB, unprivileged), `EBUSY` if the
    /// data in the pipe does not fit. Returns the new capacity in bytes.
    pub fn set_pipe_size(&self, arg: u32) -> Result<usize, Errno> {
        let size = if arg > 1 << 31 {
            0
        } else if (arg as usize) < PAGE_SIZE {
            PAGE_SIZE
        } else {
            (arg as usize).next_power_of_two()
        };
        let nr_slots = size / PAGE_SIZE;
        if nr_slots == 0 {
            return Err(Errno::EINVAL);
        }
        let mut st = self.pipe.lock();
        if nr_slots > st.max_usage && size > PIPE_MAX_SIZE {
            return Err(Errno::EPERM);
        }
        if nr_slots < st.bufs.len() {
            return Err(Errno::EBUSY);
        }
        st.max_usage = nr_slots;
        if st.wr_waiters > 0 {
            self.pipe.wr_wait.notify_all();
        }
        Ok(nr_slots * PAGE_SIZE)
    }
}

impl Drop for PipeEnd {
    /// `pipe_release`.
    fn drop(&mut self) {
        let mut st = self.pipe.lock();
        if self.mode & FMODE_READ != 0 {
            st.readers -= 1;
        }
        if self.mode & FMODE_WRITE != 0 {
            st.writers -= 1;
        }
        if st.rd_waiters > 0 {
            self.pipe.rd_wait.notify_all();
        }
        if st.wr_waiters > 0 {
            self.pipe.wr_wait.notify_all();
        }
    }
}

impl FileOperations for PipeEnd {
    fn fmode(&self) -> u32 {
        FMODE_CAN_READ | FMODE_CAN_WRITE | FMODE_STREAM
    }

    /// Reads and writes may wait for the peer; `FIONREAD` (the only ioctl) reads a count
    /// under the lock, and `fasync` waits for nothing.
    fn ioctl_never_blocks(&self) -> bool {
        true
    }

    fn getattr(&self) -> Kstat {
        Kstat {
            mode: S_IFIFO | 0o600,
            ino: self.pipe.ino,
            nlink: 1,
            size: 0,
            blksize: PAGE_SIZE as u32,
            blocks: 0,
            rdev: 0,
        }
    }

    fn read(&self, file: &File, buf: &mut [u8], _pos: Option<&mut i64>) -> Result<usize, Errno> {
        let mut one = [IoSliceMut::new(buf)];
        self.pipe_read(file, &mut IovIterMut::new(&mut one))
    }

    fn write(&self, file: &File, buf: &[u8], _pos: Option<&mut i64>) -> Result<usize, Errno> {
        let one = [IoSlice::new(buf)];
        self.pipe_write(file, &mut IovIter::new(&one))
    }

    fn readv(
        &self,
        file: &File,
        bufs: &mut [IoSliceMut<'_>],
        _pos: Option<&mut i64>,
    ) -> Result<usize, Errno> {
        self.pipe_read(file, &mut IovIterMut::new(bufs))
    }

    fn writev(
        &self,
        file: &File,
        bufs: &[IoSlice<'_>],
        _pos: Option<&mut i64>,
    ) -> Result<usize, Errno> {
        self.pipe_write(file, &mut IovIter::new(bufs))
    }

    /// `pipe_ioctl`: `FIONREAD` is the bytes in the pipe.
    fn unlocked_ioctl(
        &self,
        _file: &File,
        cmd: u32,
        arg: usize,
        mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        match cmd {
            FIONREAD => {
                let n = self.pipe.lock().nr_bytes();
                put_user_i32(mem, arg, n as i32)?;
                Ok(0)
            }
            _ => Err(ENOIOCTLCMD),
        }
    }

    /// `pipe_poll`.
    fn poll(&self, file: &File) -> u16 {
        let st = self.pipe.lock();
        let mut mask = 0;
        if file.f_mode() & FMODE_READ != 0 {
            if !st.bufs.is_empty() {
                mask |= POLLIN | POLLRDNORM;
            }
            if st.writers == 0 {
                mask |= POLLHUP;
            }
        }
        if file.f_mode() & FMODE_WRITE != 0 {
            if !st.is_full() {
                mask |= POLLOUT | POLLWRNORM;
            }
            if st.readers == 0 {
                mask |= POLLERR;
            }
        }
        mask
    }

    /// `pipe_fasync`: registration is recorded in `O_ASYNC` (no signals are sent).
    fn fasync(&self, _file: &File, _on: bool) -> Option<Result<(), Errno>> {
        Some(Ok(()))
    }
}

impl<P: FdPayload> Task<P> {
    /// `pipe2(flags)` — a new pipe: `[read end, write end]`, the two lowest free fds.
    /// `flags`: `O_CLOEXEC` (both fds), `O_NONBLOCK` (both ends), `O_DIRECT` (packet mode);
    /// `EINVAL` for anything else (`O_NOTIFICATION_PIPE` included: no watch queues here).
    /// `EMFILE` if two fds are not free.
    ///
    /// # References
    ///
    /// [pipe(2)](https://man7.org/linux/man-pages/man2/pipe.2.html)
    pub fn pipe2(&self, flags: u32) -> Result<[i32; 2], Errno> {
        if flags & !(O_CLOEXEC | O_NONBLOCK | O_DIRECT) != 0 {
            return Err(Errno::EINVAL);
        }
        self.install_pair(flags, || create_pipe_files(flags))
    }

    /// `pipe()` — `pipe2(0)`.
    pub fn pipe(&self) -> Result<[i32; 2], Errno> {
        self.pipe2(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(f: &File) -> &dyn FileOperations {
        f.ops()
    }

    #[test]
    fn capacity_and_merge_rule() {
        let (r, w) = create_pipe_files(O_NONBLOCK);
        let big = vec![1u8; 70000];
        assert_eq!(rw(&w).write(&w, &big, None), Ok(65536));
        assert_eq!(rw(&w).write(&w, b"x", None), Err(Errno::EAGAIN));
        let mut buf = vec![0u8; 100000];
        assert_eq!(rw(&r).read(&r, &mut buf, None), Ok(65536));
        assert_eq!(rw(&r).read(&r, &mut buf, None), Err(Errno::EAGAIN));
        // One byte takes a slot; a whole-page write cannot merge, so 15 pages fit after it.
        assert_eq!(rw(&w).write(&w, b"a", None), Ok(1));
        assert_eq!(rw(&w).write(&w, &big[..65536], None), Ok(61440));
        assert_eq!(rw(&r).read(&r, &mut buf, None), Ok(61441));
        // Small writes merge into the last page.
        for _ in 0..100 {
            assert_eq!(rw(&w).write(&w, b"abc", None), Ok(3));
        }
        let mut mem_bytes = [0u8; 4];
        let mut mem = crate::uaccess::LinearMemory::new(8, &mut mem_bytes);
        assert_eq!(rw(&r).unlocked_ioctl(&r, FIONREAD, 8, &mut mem), Ok(0));
        assert_eq!(crate::uaccess::get_user_i32(&mut mem, 8), Ok(300));
    }

    #[test]
    fn atomic_small_writes_wait_for_a_whole_slot() {
        let (_r, w) = create_pipe_files(O_NONBLOCK);
        // Fill 15 slots with whole pages and the last with 4000 bytes.
        assert_eq!(rw(&w).write(&w, &vec![0u8; 15 * 4096], None), Ok(61440));
        assert_eq!(rw(&w).write(&w, &[0u8; 4000], None), Ok(4000));
        // 96 bytes still merge; 97 do not fit and the ring is full: EAGAIN, nothing written.
        assert_eq!(rw(&w).write(&w, &[0u8; 97], None), Err(Errno::EAGAIN));
        assert_eq!(rw(&w).write(&w, &[0u8; 96], None), Ok(96));
    }

    #[test]
    fn eof_and_epipe() {
        let (r, w) = create_pipe_files(0);
        rw(&w).write(&w, b"hi", None).unwrap();
        drop(w);
        let mut buf = [0u8; 8];
        assert_eq!(rw(&r).read(&r, &mut buf, None), Ok(2));
        assert_eq!(rw(&r).read(&r, &mut buf, None), Ok(0));
        assert_eq!(rw(&r).poll(&r) & POLLHUP, POLLHUP);
        let (r, w) = create_pipe_files(0);
        drop(r);
        assert_eq!(rw(&w).write(&w, b"x", None), Err(Errno::EPIPE));
        assert_eq!(rw(&w).write(&w, b"", None), Ok(0));
        assert_eq!(rw(&w).poll(&w) & POLLERR, POLLERR);
    }

    #[test]
    fn packet_mode() {
        let (r, w) = create_pipe_files(O_DIRECT | O_NONBLOCK);
        rw(&w).write(&w, b"hello", None).unwrap();
        rw(&w).write(&w, b"world", None).unwrap();
        let mut buf = [0u8; 3];
        assert_eq!(rw(&r).read(&r, &mut buf, None), Ok(3));
        assert_eq!(&buf, b"hel");
        let mut buf = [0u8; 16];
        assert_eq!(rw(&r).read(&r, &mut buf, None), Ok(5));
        assert_eq!(&buf[..5], b"world");
    }

    #[test]
    fn blocking_read_wakes_on_write_and_on_close() {
        let (r, w) = create_pipe_files(0);
        let t = std::thread::spawn(move || {
            let mut buf = [0u8; 4];
            let a = r.ops().read(&r, &mut buf, None);
            let b = r.ops().read(&r, &mut buf, None);
            (a, b, buf)
        });
        w.ops().write(&w, b"ping", None).unwrap();
        drop(w);
        let (a, b, buf) = t.join().unwrap();
        assert_eq!(a, Ok(4));
        assert_eq!(&buf, b"ping");
        assert_eq!(b, Ok(0));
    }

    #[test]
    fn blocking_write_waits_for_room() {
        let (r, w) = create_pipe_files(0);
        let t = std::thread::spawn(move || w.ops().write(&w, &vec![5u8; 200_000], None));
        let mut got = 0;
        let mut buf = vec![0u8; 10_000];
        while got < 200_000 {
            got += r.ops().read(&r, &mut buf, None).unwrap();
        }
        assert_eq!(t.join().unwrap(), Ok(200_000));
    }

    #[test]
    fn set_pipe_size_rules() {
        let (r, w) = create_pipe_files(O_NONBLOCK);
        let end = r.ops_as::<PipeEnd>().unwrap();
        assert_eq!(end.pipe_size(), 65536);
        assert_eq!(end.set_pipe_size(1), Ok(4096));
        assert_eq!(end.set_pipe_size(5000), Ok(8192));
        assert_eq!(end.set_pipe_size(u32::MAX), Err(Errno::EINVAL));
        assert_eq!(end.set_pipe_size(4 << 20), Err(Errno::EPERM));
        w.ops().write(&w, &[0u8; 8192], None).unwrap();
        assert_eq!(end.set_pipe_size(4096), Err(Errno::EBUSY));
        assert_eq!(w.ops().write(&w, b"x", None), Err(Errno::EAGAIN));
    }
}

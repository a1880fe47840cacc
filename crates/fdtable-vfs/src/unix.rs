//! Connected `AF_UNIX` `SOCK_STREAM` socket pairs (net/unix/af_unix.c): a byte stream each
//! way, blocking or `O_NONBLOCK`, end of file after the peer closes or shuts down,
//! `ECONNRESET` once if the peer closed with data unread, `EPIPE` on writes after that,
//! `shutdown`, `FIONREAD` (`SIOCINQ`) and poll readiness.
//!
//! Each direction holds at most [`UNIX_STREAM_CAPACITY`] bytes (the default `SO_SNDBUF`;
//! Linux counts socket-buffer overhead too, so it fits fewer small messages). One mutex per
//! connection; waiters are counted so an uncontended write makes no wake-up call. No signals:
//! `EPIPE` comes without `SIGPIPE`.

use crate::file::File;
use crate::iov::{IovIter, IovIterMut};
use crate::ops::{FileOperations, Kstat};
use crate::task::Task;
use crate::uaccess::{UserMemory, put_user_i32};
use crate::uapi::*;
use fdtable::{Errno, FdPayload, FileRef};
use std::collections::VecDeque;
use std::io::{IoSlice, IoSliceMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Bytes one direction of a socket pair buffers before a writer blocks (`wmem_default`).
pub const UNIX_STREAM_CAPACITY: usize = 212_992;

/// `RCV_SHUTDOWN`.
const RCV_SHUTDOWN: u8 = 1;
/// `SEND_SHUTDOWN`.
const SEND_SHUTDOWN: u8 = 2;
/// `SHUTDOWN_MASK`.
const SHUTDOWN_MASK: u8 = 3;

/// One endpoint's socket state (`struct sock`).
#[derive(Default)]
struct Sock {
    /// `sk_receive_queue`.
    rcv: VecDeque<u8>,
    /// `sk_shutdown`.
    shutdown: u8,
    /// `sk_err`, reported once by a read that finds no data.
    err: Option<Errno>,
    /// Readers waiting for data on this end.
    rd_waiters: usize,
    /// Writers waiting for room in this end's receive queue.
    wr_waiters: usize,
}

/// Both endpoints of a connection, under one lock.
struct Conn {
    socks: Mutex<[Sock; 2]>,
    /// `[i]`: readers of end `i` wait here.
    rd_wait: [Condvar; 2],
    /// `[i]`: writers into end `i`'s receive queue wait here.
    wr_wait: [Condvar; 2],
}

static SOCK_INO: AtomicU64 = AtomicU64::new(1);

/// One end of a connected stream socket pair (the operations of a socket file). Dropping it
/// (the file's release) is `unix_release_sock`: the peer sees end of file, and `ECONNRESET`
/// first if this end left data unread.
pub struct UnixStream {
    conn: Arc<Conn>,
    me: usize,
    ino: u64,
}

/// `unix_stream_connect` for a pair (`socketpair`): the two ends as files, `O_RDWR` plus
/// `O_NONBLOCK` if asked.
pub fn unix_stream_pair(nonblock: bool) -> (File, File) {
    let conn = Arc::new(Conn {
        socks: Mutex::new([Sock::default(), Sock::default()]),
        rd_wait: [Condvar::new(), Condvar::new()],
        wr_wait: [Condvar::new(), Condvar::new()],
    });
    let flags = O_RDWR | if nonblock { O_NONBLOCK } else { 0 };
    let end = |me| {
        File::new(
            flags,
            Arc::new(UnixStream {
                conn: conn.clone(),
                me,
                // ORDERING: Relaxed; a unique counter.
                ino: SOCK_INO.fetch_add(1, Ordering::Relaxed),
            }),
        )
    };
    (end(0), end(1))
}

impl UnixStream {
    fn lock(&self) -> MutexGuard<'_, [Sock; 2]> {
        self.conn.socks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `unix_stream_read_generic`.
    fn recv(&self, file: &File, to: &mut IovIterMut<'_, '_>) -> Result<usize, Errno> {
        // sock_read_iter: "Match SYS5 behaviour".
        if to.count() == 0 {
            return Ok(0);
        }
        let me = self.me;
        let mut socks = self.lock();
        loop {
            let s = &mut socks[me];
            if !s.rcv.is_empty() {
                let mut copied = 0;
                while to.count() > 0 && !s.rcv.is_empty() {
                    let (a, _) = s.rcv.as_slices();
                    let n = to.copy_in(a);
                    s.rcv.drain(..n);
                    copied += n;
                }
                if s.wr_waiters > 0 {
                    self.conn.wr_wait[me].notify_all();
                }
                return Ok(copied);
            }
            // "POSIX 1003.1g mandates this order."
            if let Some(e) = s.err.take() {
                return Err(e);
            }
            if s.shutdown & RCV_SHUTDOWN != 0 {
                return Ok(0);
            }
            if file.flags() & O_NONBLOCK != 0 {
                return Err(Errno::EAGAIN);
            }
            s.rd_waiters += 1;
            socks = self.conn.rd_wait[me]
                .wait(socks)
                .unwrap_or_else(|p| p.into_inner());
            socks[me].rd_waiters -= 1;
        }
    }

    /// `unix_stream_sendmsg`.
    fn send(&self, file: &File, from: &mut IovIter<'_, '_>) -> Result<usize, Errno> {
        let (me, peer) = (self.me, 1 - self.me);
        let mut socks = self.lock();
        if socks[me].shutdown & SEND_SHUTDOWN != 0 {
            return Err(Errno::EPIPE);
        }
        let mut sent = 0;
        while from.count() > 0 {
            if socks[peer].shutdown & RCV_SHUTDOWN != 0 {
                if sent == 0 {
                    return Err(Errno::EPIPE);
                }
                break;
            }
            let room = UNIX_STREAM_CAPACITY - socks[peer].rcv.len();
            if room > 0 {
                let chunk = from.next_chunk(room);
                socks[peer].rcv.extend(chunk);
                let n = chunk.len();
                from.advance(n);
                sent += n;
                continue;
            }
            if file.flags() & O_NONBLOCK != 0 {
                if sent == 0 {
                    return Err(Errno::EAGAIN);
                }
                break;
            }
            if socks[peer].rd_waiters > 0 {
                self.conn.rd_wait[peer].notify_all();
            }
            socks[peer].wr_waiters += 1;
            socks = self.conn.wr_wait[peer]
                .wait(socks)
                .unwrap_or_else(|p| p.into_inner());
            socks[peer].wr_waiters -= 1;
        }
        if sent > 0 && socks[peer].rd_waiters > 0 {
            self.conn.rd_wait[peer].notify_all();
        }
        Ok(sent)
    }

    /// `unix_shutdown`: `how` is `SHUT_RD` (0), `SHUT_WR` (1) or `SHUT_RDWR` (2); the peer
    /// gets the mirror image. `EINVAL` for anything else.
    pub fn shutdown(&self, how: i32) -> Result<(), Errno> {
        if !(0..=2).contains(&how) {
            return Err(Errno::EINVAL);
        }
        let mode = ((how + 1) as u8) & SHUTDOWN_MASK;
        let peer_mode = (if mode & RCV_SHUTDOWN != 0 {
            SEND_SHUTDOWN
        } else {
            0
        }) | (if mode & SEND_SHUTDOWN != 0 {
            RCV_SHUTDOWN
        } else {
            0
        });
        let (me, peer) = (self.me, 1 - self.me);
        let mut socks = self.lock();
        socks[me].shutdown |= mode;
        socks[peer].shutdown |= peer_mode;
        self.wake_all(&socks);
        Ok(())
    }

    fn wake_all(&self, socks: &[Sock; 2]) {
        for (i, s) in socks.iter().enumerate() {
            if s.rd_waiters > 0 {
                self.conn.rd_wait[i].notify_all();
            }
            if s.wr_waiters > 0 {
                self.conn.wr_wait[i].notify_all();
            }
        }
    }
}

impl Drop for UnixStream {
    /// `unix_release_sock`.
    fn drop(&mut self) {
        let (me, peer) = (self.me, 1 - self.me);
        let mut socks = self.lock();
        socks[me].shutdown = SHUTDOWN_MASK;
        socks[peer].shutdown = SHUTDOWN_MASK;
        if !socks[me].rcv.is_empty() {
            socks[peer].err = Some(Errno::ECONNRESET);
        }
        socks[me].rcv.clear();
        self.wake_all(&socks);
    }
}

impl FileOperations for UnixStream {
    fn fmode(&self) -> u32 {
        FMODE_CAN_READ | FMODE_CAN_WRITE | FMODE_STREAM | FMODE_CAN_SPLICE_READ
    }

    /// Reads and writes may wait for the peer; `FIONREAD` (the only ioctl) reads a count
    /// under the lock, and `fasync` waits for nothing.
    fn ioctl_never_blocks(&self) -> bool {
        true
    }

    fn getattr(&self) -> Kstat {
        Kstat {
            mode: S_IFSOCK | 0o777,
            ino: self.ino,
            nlink: 1,
            size: 0,
            blksize: PAGE_SIZE as u32,
            blocks: 0,
            rdev: 0,
        }
    }

    fn read(&self, file: &File, buf: &mut [u8], _pos: Option<&mut i64>) -> Result<usize, Errno> {
        let mut one = [IoSliceMut::new(buf)];
        self.recv(file, &mut IovIterMut::new(&mut one))
    }

    fn write(&self, file: &File, buf: &[u8], _pos: Option<&mut i64>) -> Result<usize, Errno> {
        let one = [IoSlice::new(buf)];
        self.send(file, &mut IovIter::new(&one))
    }

    fn readv(
        &self,
        file: &File,
        bufs: &mut [IoSliceMut<'_>],
        _pos: Option<&mut i64>,
    ) -> Result<usize, Errno> {
        self.recv(file, &mut IovIterMut::new(bufs))
    }

    fn writev(
        &self,
        file: &File,
        bufs: &[IoSlice<'_>],
        _pos: Option<&mut i64>,
    ) -> Result<usize, Errno> {
        self.send(file, &mut IovIter::new(bufs))
    }

    /// `unix_ioctl`: `SIOCINQ` (`FIONREAD`) is the bytes waiting in this end's queue.
    fn unlocked_ioctl(
        &self,
        _file: &File,
        cmd: u32,
        arg: usize,
        mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        match cmd {
            FIONREAD => {
                let n = self.lock()[self.me].rcv.len();
                put_user_i32(mem, arg, n as i32)?;
                Ok(0)
            }
            _ => Err(ENOIOCTLCMD),
        }
    }

    /// `unix_poll`.
    fn poll(&self, _file: &File) -> u16 {
        let socks = self.lock();
        let (s, p) = (&socks[self.me], &socks[1 - self.me]);
        // (`p.rcv` holds what this end sent and the peer has not read: its `sk_wmem_alloc`.)
        let mut mask = 0;
        if s.err.is_some() {
            mask |= POLLERR;
        }
        if s.shutdown == SHUTDOWN_MASK {
            mask |= POLLHUP;
        }
        if s.shutdown & RCV_SHUTDOWN != 0 {
            mask |= POLLRDHUP | POLLIN | POLLRDNORM;
        }
        if !s.rcv.is_empty() {
            mask |= POLLIN | POLLRDNORM;
        }
        // unix_writable: a quarter of the send buffer or less in use, shut down or not ("this
        // prevents stuck sockets").
        if p.rcv.len() * 4 <= UNIX_STREAM_CAPACITY {
            mask |= POLLOUT | POLLWRNORM;
        }
        mask
    }

    /// `sock_fasync`: recorded in `O_ASYNC` only (no signals).
    fn fasync(&self, _file: &File, _on: bool) -> Option<Result<(), Errno>> {
        Some(Ok(()))
    }
}

impl<P: FdPayload> Task<P> {
    /// `socketpair(domain, type, protocol)` — two connected sockets, `[a, b]`.
    ///
    /// `type` may carry `SOCK_NONBLOCK` and `SOCK_CLOEXEC`; other flag bits are `EINVAL`.
    /// The fds are reserved first (`EMFILE`), then: `EAFNOSUPPORT` for a domain outside
    /// `0..AF_MAX` or one this layer does not have, `EOPNOTSUPP` for `AF_INET`/`AF_INET6`
    /// (no `socketpair` there, as in Linux), `EINVAL` for a type outside `0..SOCK_MAX`,
    /// `EPROTONOSUPPORT` for a protocol other than 0 or `AF_UNIX`. Only `SOCK_STREAM` exists
    /// here: `SOCK_DGRAM`, `SOCK_SEQPACKET` and `SOCK_RAW` give `EOPNOTSUPP` (Linux supports
    /// them), other types `ESOCKTNOSUPPORT`.
    ///
    /// # References
    ///
    /// [socketpair(2)](https://man7.org/linux/man-pages/man2/socketpair.2.html)
    pub fn socketpair(&self, domain: i32, ty: i32, protocol: i32) -> Result<[i32; 2], Errno> {
        let flags = ty & !SOCK_TYPE_MASK;
        if flags & !(SOCK_CLOEXEC | SOCK_NONBLOCK) != 0 {
            return Err(Errno::EINVAL);
        }
        let ty = ty & SOCK_TYPE_MASK;
        let nofile = self.nofile();
        let cloexec = if flags & SOCK_CLOEXEC != 0 {
            O_CLOEXEC
        } else {
            0
        };
        let a = self.files.get_unused_fd_flags(cloexec, nofile)?;
        let b = self.files.get_unused_fd_flags(cloexec, nofile)?;
        if !(0..AF_MAX).contains(&domain) {
            return Err(Errno::EAFNOSUPPORT);
        }
        if !(0..SOCK_MAX).contains(&ty) {
            return Err(Errno::EINVAL);
        }
        if domain == AF_INET || domain == AF_INET6 {
            return Err(Errno::EOPNOTSUPP);
        }
        if domain != AF_UNIX {
            return Err(Errno::EAFNOSUPPORT);
        }
        if protocol != 0 && protocol != AF_UNIX {
            return Err(Errno::EPROTONOSUPPORT);
        }
        match ty {
            SOCK_STREAM => {}
            SOCK_DGRAM | SOCK_SEQPACKET | SOCK_RAW => return Err(Errno::EOPNOTSUPP),
            _ => return Err(Errno::ESOCKTNOSUPPORT),
        }
        let (fa, fb) = unix_stream_pair(flags & SOCK_NONBLOCK != 0);
        Ok([
            a.install(FileRef::new(fa)) as i32,
            b.install(FileRef::new(fb)) as i32,
        ])
    }

    /// `shutdown(fd, how)` — `EBADF`, `ENOTSOCK` for a file that is not a socket, `EINVAL`
    /// for a bad `how`.
    pub fn shutdown(&self, fd: i32, how: i32) -> Result<(), Errno> {
        let f = self.fdget(fd)?;
        let sock = f.ops_as::<UnixStream>().ok_or(Errno::ENOTSOCK)?;
        sock.shutdown(how)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_directions_and_eof() {
        let (a, b) = unix_stream_pair(true);
        assert_eq!(a.ops().write(&a, b"ping", None), Ok(4));
        assert_eq!(b.ops().write(&b, b"pong!", None), Ok(5));
        let mut buf = [0u8; 16];
        assert_eq!(b.ops().read(&b, &mut buf, None), Ok(4));
        assert_eq!(&buf[..4], b"ping");
        assert_eq!(b.ops().read(&b, &mut buf, None), Err(Errno::EAGAIN));
        assert_eq!(a.ops().read(&a, &mut buf, None), Ok(5));
        assert_eq!(a.ops().read(&a, &mut [], None), Ok(0));
        drop(a);
        assert_eq!(b.ops().read(&b, &mut buf, None), Ok(0));
        assert_eq!(b.ops().write(&b, b"x", None), Err(Errno::EPIPE));
        assert_eq!(b.ops().write(&b, b"", None), Err(Errno::EPIPE));
    }

    #[test]
    fn reset_when_the_peer_left_data_unread() {
        let (a, b) = unix_stream_pair(true);
        b.ops().write(&b, b"unread", None).unwrap();
        a.ops().write(&a, b"for b", None).unwrap();
        drop(a);
        let mut buf = [0u8; 16];
        assert_eq!(b.ops().read(&b, &mut buf, None), Ok(5));
        assert_eq!(b.ops().read(&b, &mut buf, None), Err(Errno::ECONNRESET));
        assert_eq!(b.ops().read(&b, &mut buf, None), Ok(0));
    }

    #[test]
    fn shutdown_write_gives_peer_eof() {
        let (a, b) = unix_stream_pair(true);
        let ua = a.ops_as::<UnixStream>().unwrap();
        a.ops().write(&a, b"last", None).unwrap();
        ua.shutdown(libc::SHUT_WR).unwrap();
        assert_eq!(ua.shutdown(7), Err(Errno::EINVAL));
        assert_eq!(a.ops().write(&a, b"x", None), Err(Errno::EPIPE));
        let mut buf = [0u8; 8];
        assert_eq!(b.ops().read(&b, &mut buf, None), Ok(4));
        assert_eq!(b.ops().read(&b, &mut buf, None), Ok(0));
        assert_eq!(b.ops().write(&b, b"back", None), Ok(4));
        assert_eq!(a.ops().read(&a, &mut buf, None), Ok(4));
    }

    #[test]
    fn full_queue_blocks_or_eagains() {
        let (a, b) = unix_stream_pair(true);
        let big = vec![1u8; UNIX_STREAM_CAPACITY + 10];
        assert_eq!(a.ops().write(&a, &big, None), Ok(UNIX_STREAM_CAPACITY));
        assert_eq!(a.ops().write(&a, b"x", None), Err(Errno::EAGAIN));
        assert_eq!(a.ops().poll(&a) & POLLOUT, 0);
        assert_ne!(b.ops().poll(&b) & POLLIN, 0);
        let (a, b) = unix_stream_pair(false);
        let t = std::thread::spawn(move || a.ops().write(&a, &vec![2u8; 500_000], None));
        let mut got = 0;
        let mut buf = vec![0u8; 65536];
        while got < 500_000 {
            got += b.ops().read(&b, &mut buf, None).unwrap();
        }
        assert_eq!(t.join().unwrap(), Ok(500_000));
    }

    #[test]
    fn ping_pong_across_threads() {
        let (a, b) = unix_stream_pair(false);
        let t = std::thread::spawn(move || {
            let mut buf = [0u8; 100];
            for _ in 0..1000 {
                let n = b.ops().read(&b, &mut buf, None).unwrap();
                assert_eq!(b.ops().write(&b, &buf[..n], None), Ok(n));
            }
        });
        let mut buf = [0u8; 100];
        for i in 0..1000u32 {
            let msg = [i as u8; 100];
            assert_eq!(a.ops().write(&a, &msg, None), Ok(100));
            let mut got = 0;
            while got < 100 {
                got += a.ops().read(&a, &mut buf[got..], None).unwrap();
            }
            assert_eq!(buf, msg);
        }
        t.join().unwrap();
    }
}

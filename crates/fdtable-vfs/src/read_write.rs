//! read, write and friends (fs/read_write.c, fs/open.c, fs/stat.c): `ksys_read` →
//! `fdget_pos` → `vfs_read` → the file's `read`, with the kernel's checks in the kernel's
//! order.
//!
//! Buffers are slices, so there is no `access_ok` (`EFAULT`) case: a slice is always valid.

use crate::file::File;
use crate::ops::Kstat;
use crate::task::Task;
use crate::uapi::*;
use fdtable::{Errno, FdPayload};
use std::io::{IoSlice, IoSliceMut};

/// `rw_verify_area`: `EINVAL` for a negative position or one where `pos + count` overflows.
#[inline]
fn rw_verify_area(pos: Option<&i64>, count: usize) -> Result<(), Errno> {
    if let Some(&p) = pos
        && (p < 0 || p.checked_add(count as i64).is_none())
    {
        return Err(Errno::EINVAL);
    }
    Ok(())
}

/// `vfs_read`: `EBADF` if not open for reading, `EINVAL` if the file cannot read, then
/// `rw_verify_area`, the `MAX_RW_COUNT` clamp and the file's `read`.
#[inline]
pub fn vfs_read(file: &File, buf: &mut [u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
    let m = file.f_mode();
    if m & FMODE_READ == 0 {
        return Err(Errno::EBADF);
    }
    if m & FMODE_CAN_READ == 0 {
        return Err(Errno::EINVAL);
    }
    rw_verify_area(pos.as_deref(), buf.len())?;
    let n = buf.len().min(MAX_RW_COUNT);
    file.ops().read(file, &mut buf[..n], pos)
}

/// `vfs_write`: the mirror of [`vfs_read`].
#[inline]
pub fn vfs_write(file: &File, buf: &[u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
    let m = file.f_mode();
    if m & FMODE_WRITE == 0 {
        return Err(Errno::EBADF);
    }
    if m & FMODE_CAN_WRITE == 0 {
        return Err(Errno::EINVAL);
    }
    rw_verify_area(pos.as_deref(), buf.len())?;
    let n = buf.len().min(MAX_RW_COUNT);
    file.ops().write(file, &buf[..n], pos)
}

fn iov_total<T: std::ops::Deref<Target = [u8]>>(bufs: &[T]) -> Result<usize, Errno> {
    // import_iovec
    if bufs.len() > UIO_MAXIOV {
        return Err(Errno::EINVAL);
    }
    Ok(bufs
        .iter()
        .fold(0usize, |a, b| a.saturating_add(b.len()))
        .min(MAX_RW_COUNT))
}

/// `vfs_readv`.
pub fn vfs_readv(
    file: &File,
    bufs: &mut [IoSliceMut<'_>],
    pos: Option<&mut i64>,
) -> Result<usize, Errno> {
    let m = file.f_mode();
    if m & FMODE_READ == 0 {
        return Err(Errno::EBADF);
    }
    if m & FMODE_CAN_READ == 0 {
        return Err(Errno::EINVAL);
    }
    let total = iov_total(bufs)?;
    if total == 0 {
        return Ok(0);
    }
    rw_verify_area(pos.as_deref(), total)?;
    file.ops().readv(file, bufs, pos)
}

/// `vfs_writev`.
pub fn vfs_writev(
    file: &File,
    bufs: &[IoSlice<'_>],
    pos: Option<&mut i64>,
) -> Result<usize, Errno> {
    let m = file.f_mode();
    if m & FMODE_WRITE == 0 {
        return Err(Errno::EBADF);
    }
    if m & FMODE_CAN_WRITE == 0 {
        return Err(Errno::EINVAL);
    }
    let total = iov_total(bufs)?;
    if total == 0 {
        return Ok(0);
    }
    rw_verify_area(pos.as_deref(), total)?;
    file.ops().writev(file, bufs, pos)
}

impl<P: FdPayload> Task<P> {
    /// Runs `op` with the file at `fd` and its position as `ksys_read` does: `fdget_pos`
    /// (locking `f_pos` only if the file is shared), a local copy of the position, written
    /// back if `op` succeeded. Stream files get no position.
    #[inline]
    fn with_fdget_pos<R>(
        &self,
        fd: i32,
        op: impl FnOnce(&File, Option<&mut i64>) -> Result<R, Errno>,
    ) -> Result<R, Errno> {
        self.with_file(
            fd,
            #[inline(always)]
            |f, shared| {
                if f.is_stream() {
                    return op(f, None);
                }
                let guard = f.pos_lock(if shared { 2 } else { 1 });
                let mut pos = guard.get();
                let r = op(f, Some(&mut pos));
                if r.is_ok() {
                    guard.set(pos);
                }
                r
            },
        )
    }

    /// Runs `op` with the file at `fd` (not `O_PATH`: `EBADF`) and whether another holder
    /// may use it meanwhile (`file_count > 1`, `fdget_pos`'s locking rule). The file is looked
    /// up with `fdget_rcu`: on a shared table a file that never blocks and is used often is
    /// lent without a reference (no locked instruction; see
    /// [`File::may_lend`](fdtable::FileLike::may_lend)), and since another task may then be
    /// using it with no reference of its own either, it counts as shared; any other file
    /// comes with a reference, as Linux's `fdget`.
    #[inline]
    pub(crate) fn with_file<R>(
        &self,
        fd: i32,
        op: impl FnOnce(&File, bool) -> Result<R, Errno>,
    ) -> Result<R, Errno> {
        self.files().with_fdget_rcu(
            fd as u32,
            #[inline(always)]
            |b| match b {
                // A lent file is never `O_PATH` (`File::may_lend`): on that path the test of
                // `f_mode` folds away.
                Some(b) if b.is_rcu() || b.f_mode() & FMODE_PATH == 0 => op(b, b.shared_file()),
                _ => Err(Errno::EBADF),
            },
        )
    }

    /// [`with_file`](Task::with_file) for an `op` that does not wait (an ioctl of a file
    /// whose ioctls never wait, [`FileOperations::ioctl_never_blocks`]): the file is looked
    /// up with `with_fdget_rcu_nonblocking`, so a pipe or a socket ioctl'd often is lent
    /// without a reference too.
    ///
    /// [`FileOperations::ioctl_never_blocks`]: crate::FileOperations::ioctl_never_blocks
    #[inline]
    pub(crate) fn with_file_nonblocking<R>(
        &self,
        fd: i32,
        op: impl FnOnce(&File, bool) -> Result<R, Errno>,
    ) -> Result<R, Errno> {
        self.files().with_fdget_rcu_nonblocking(
            fd as u32,
            #[inline(always)]
            |b| match b {
                // As in `with_file`: a lent file is never `O_PATH` (`File::may_lend` and
                // `File::may_lend_nonblocking`). Written out again rather than shared: a
                // function of both taking `op` stopped the inlining of these hot paths
                // (ioctl-generic 208 -> 247 instructions, dd-pair-shared 468.9 -> 525.9).
                Some(b) if b.is_rcu() || b.f_mode() & FMODE_PATH == 0 => op(b, b.shared_file()),
                _ => Err(Errno::EBADF),
            },
        )
    }

    /// `read(fd, buf)` — reads at the file position and advances it. `EBADF` if `fd` is not
    /// open for reading (or is `O_PATH`), `EINVAL` if the file cannot be read, `EISDIR` for a
    /// directory, `EAGAIN` for an empty non-blocking pipe or socket; 0 at end of file.
    ///
    /// # References
    ///
    /// [read(2)](https://man7.org/linux/man-pages/man2/read.2.html)
    #[inline]
    pub fn read(&self, fd: i32, buf: &mut [u8]) -> Result<usize, Errno> {
        self.with_fdget_pos(fd, |f, pos| vfs_read(f, buf, pos))
    }

    /// `write(fd, buf)` — writes at the file position (at the end with `O_APPEND`) and
    /// advances it. `EBADF` if not open for writing, `EPIPE` without readers, `EAGAIN` for a
    /// full non-blocking pipe or socket.
    ///
    /// # References
    ///
    /// [write(2)](https://man7.org/linux/man-pages/man2/write.2.html)
    #[inline]
    pub fn write(&self, fd: i32, buf: &[u8]) -> Result<usize, Errno> {
        self.with_fdget_pos(fd, |f, pos| vfs_write(f, buf, pos))
    }

    /// `pread64(fd, buf, offset)` — reads at `offset`, position untouched. `EINVAL` for a
    /// negative offset (checked before the fd), `ESPIPE` for pipes, sockets and other files
    /// without positional reads.
    pub fn pread64(&self, fd: i32, buf: &mut [u8], offset: i64) -> Result<usize, Errno> {
        if offset < 0 {
            return Err(Errno::EINVAL);
        }
        let f = self.fdget(fd)?;
        if f.f_mode() & FMODE_PREAD == 0 {
            return Err(Errno::ESPIPE);
        }
        let mut pos = offset;
        vfs_read(&f, buf, Some(&mut pos))
    }

    /// `pwrite64(fd, buf, offset)` — writes at `offset` (Linux writes at the end anyway if the
    /// file has `O_APPEND`), position untouched.
    pub fn pwrite64(&self, fd: i32, buf: &[u8], offset: i64) -> Result<usize, Errno> {
        if offset < 0 {
            return Err(Errno::EINVAL);
        }
        let f = self.fdget(fd)?;
        if f.f_mode() & FMODE_PWRITE == 0 {
            return Err(Errno::ESPIPE);
        }
        let mut pos = offset;
        vfs_write(&f, buf, Some(&mut pos))
    }

    /// `readv(fd, iov)` — `read` into several buffers in order. `EINVAL` for more than
    /// `UIO_MAXIOV` buffers; 0 without calling the file if they hold no bytes.
    pub fn readv(&self, fd: i32, bufs: &mut [IoSliceMut<'_>]) -> Result<usize, Errno> {
        self.with_fdget_pos(fd, |f, pos| vfs_readv(f, bufs, pos))
    }

    /// `writev(fd, iov)` — `write` from several buffers in order.
    pub fn writev(&self, fd: i32, bufs: &[IoSlice<'_>]) -> Result<usize, Errno> {
        self.with_fdget_pos(fd, |f, pos| vfs_writev(f, bufs, pos))
    }

    /// `preadv(fd, iov, offset)`.
    pub fn preadv(
        &self,
        fd: i32,
        bufs: &mut [IoSliceMut<'_>],
        offset: i64,
    ) -> Result<usize, Errno> {
        if offset < 0 {
            return Err(Errno::EINVAL);
        }
        let f = self.fdget(fd)?;
        if f.f_mode() & FMODE_PREAD == 0 {
            return Err(Errno::ESPIPE);
        }
        let mut pos = offset;
        vfs_readv(&f, bufs, Some(&mut pos))
    }

    /// `pwritev(fd, iov, offset)`.
    pub fn pwritev(&self, fd: i32, bufs: &[IoSlice<'_>], offset: i64) -> Result<usize, Errno> {
        if offset < 0 {
            return Err(Errno::EINVAL);
        }
        let f = self.fdget(fd)?;
        if f.f_mode() & FMODE_PWRITE == 0 {
            return Err(Errno::ESPIPE);
        }
        let mut pos = offset;
        vfs_writev(&f, bufs, Some(&mut pos))
    }

    /// `lseek(fd, offset, whence)` — the new position. `EBADF`, then `EINVAL` for `whence`
    /// above `SEEK_HOLE`, then `ESPIPE` for files without `llseek` (pipes, sockets), then the
    /// file's answer (`EINVAL` for a negative result, `ENXIO` for `SEEK_DATA`/`SEEK_HOLE` past
    /// the end).
    ///
    /// # References
    ///
    /// [lseek(2)](https://man7.org/linux/man-pages/man2/lseek.2.html)
    pub fn lseek(&self, fd: i32, offset: i64, whence: i32) -> Result<i64, Errno> {
        let f = self.fdget(fd)?;
        let guard = f.pos_lock(f.file_count());
        if whence as u32 > SEEK_MAX as u32 {
            return Err(Errno::EINVAL);
        }
        if f.f_mode() & FMODE_LSEEK == 0 {
            return Err(Errno::ESPIPE);
        }
        if f.is_stream() {
            return f.ops().llseek(&f, 0, offset, whence);
        }
        let new = f.ops().llseek(&f, guard.get(), offset, whence)?;
        guard.set(new);
        Ok(new)
    }

    /// `sendfile(out_fd, in_fd, offset, count)` — copies up to `count` bytes from `in_fd`
    /// (at `*offset`, advancing it, or at its position) to `out_fd` at its position.
    ///
    /// `EBADF` for an input not open for reading or an output not open for writing,
    /// `ESPIPE` for an `offset` on an input without positional reads, `EINVAL` for an input
    /// that cannot be spliced from (pipes, eventfd) or an `O_APPEND` output.
    ///
    /// The copy goes through a bounce buffer. With a positional input, a short write leaves
    /// the unsent bytes in the input; with a stream input (a socket) they are lost, where the
    /// kernel would keep them in its splice pipe.
    pub fn sendfile(
        &self,
        out_fd: i32,
        in_fd: i32,
        offset: Option<&mut i64>,
        count: usize,
    ) -> Result<usize, Errno> {
        let input = self.fdget(in_fd)?;
        if input.f_mode() & FMODE_READ == 0 {
            return Err(Errno::EBADF);
        }
        let mut pos = match &offset {
            None => input.pos(),
            Some(p) => {
                if input.f_mode() & FMODE_PREAD == 0 {
                    return Err(Errno::ESPIPE);
                }
                **p
            }
        };
        rw_verify_area(Some(&pos), count)?;
        let count = count.min(MAX_RW_COUNT);
        let output = self.fdget(out_fd)?;
        if output.f_mode() & FMODE_WRITE == 0 {
            return Err(Errno::EBADF);
        }
        let mut out_pos = output.pos();
        // The kernel's `EOVERFLOW` for `pos + count > s_maxbytes` cannot happen here: the
        // limit is `i64::MAX` and `rw_verify_area` already refused an overflowing sum.
        if input.f_mode() & FMODE_CAN_SPLICE_READ == 0 || input.f_mode() & FMODE_CAN_READ == 0 {
            return Err(Errno::EINVAL);
        }
        // do_splice_direct's check: a pipe output takes the splice_file_to_pipe path, which
        // does not look at O_APPEND.
        if output.flags() & O_APPEND != 0 && output.file_type() != S_IFIFO {
            return Err(Errno::EINVAL);
        }
        if output.f_mode() & FMODE_CAN_WRITE == 0 {
            return Err(Errno::EINVAL);
        }
        rw_verify_area(Some(&out_pos), count)?;

        let mut buf = vec![0u8; count.min(64 * 1024)];
        let (in_stream, out_stream) = (input.is_stream(), output.is_stream());
        let mut done = 0usize;
        let mut err = None;
        while done < count {
            let want = (count - done).min(buf.len());
            let mut rpos = pos;
            let got =
                match input
                    .ops()
                    .read(&input, &mut buf[..want], (!in_stream).then_some(&mut rpos))
                {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                };
            let mut sent = 0;
            while sent < got {
                let mut wpos = out_pos;
                match output.ops().write(
                    &output,
                    &buf[sent..got],
                    (!out_stream).then_some(&mut wpos),
                ) {
                    Ok(0) => break,
                    Ok(k) => {
                        sent += k;
                        out_pos = wpos;
                    }
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                }
            }
            pos += sent as i64;
            done += sent;
            if sent < got || got < want || err.is_some() {
                break;
            }
        }
        if done == 0
            && let Some(e) = err
        {
            return Err(e);
        }
        if done > 0 {
            if !out_stream {
                output.set_pos_unlocked(out_pos);
            }
            match offset {
                Some(p) => *p = pos,
                None if !in_stream => input.set_pos_unlocked(pos),
                None => {}
            }
        }
        Ok(done)
    }

    /// `ftruncate(fd, length)` — `EINVAL` for a negative length (before the fd), `EBADF`, then
    /// `EINVAL` unless `fd` is a regular file open for writing.
    pub fn ftruncate(&self, fd: i32, length: i64) -> Result<(), Errno> {
        if length < 0 {
            return Err(Errno::EINVAL);
        }
        let f = self.fdget(fd)?;
        if f.file_type() != S_IFREG || f.f_mode() & FMODE_WRITE == 0 {
            return Err(Errno::EINVAL);
        }
        f.ops().truncate(&f, length)
    }

    /// `fstat(fd)` — the file's attributes (`O_PATH` files included).
    pub fn fstat(&self, fd: i32) -> Result<Kstat, Errno> {
        let f = self.fdget_raw(fd)?;
        Ok(f.ops().getattr())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemFs;

    fn task() -> Task {
        Task::new(MemFs::new())
    }

    fn o(f: u32) -> i32 {
        f as i32
    }

    #[test]
    fn read_write_rules() {
        let t = task();
        let fd = t.open(b"/tmp/f", o(O_CREAT | O_RDWR), 0o644).unwrap();
        assert_eq!(t.write(fd, b"hello"), Ok(5));
        assert_eq!(t.lseek(fd, 0, SEEK_CUR), Ok(5));
        assert_eq!(t.lseek(fd, 1, SEEK_SET), Ok(1));
        let mut b = [0u8; 10];
        assert_eq!(t.read(fd, &mut b), Ok(4));
        assert_eq!(&b[..4], b"ello");
        assert_eq!(t.read(fd, &mut b), Ok(0));
        let ro = t.open(b"/tmp/f", o(O_RDONLY), 0).unwrap();
        assert_eq!(t.write(ro, b"x"), Err(Errno::EBADF));
        let wo = t.open(b"/tmp/f", o(O_WRONLY), 0).unwrap();
        assert_eq!(t.read(wo, &mut b), Err(Errno::EBADF));
        assert_eq!(t.pread64(ro, &mut b, 2), Ok(3));
        assert_eq!(t.pread64(ro, &mut b, -1), Err(Errno::EINVAL));
        assert_eq!(t.pread64(-5, &mut b, -1), Err(Errno::EINVAL));
        assert_eq!(t.pread64(-5, &mut b, 0), Err(Errno::EBADF));
        assert_eq!(t.lseek(ro, 0, SEEK_CUR), Ok(0), "pread does not move");
        assert_eq!(t.pwrite64(wo, b"J", 0), Ok(1));
        assert_eq!(t.pread64(ro, &mut b[..1], 0), Ok(1));
        assert_eq!(b[0], b'J');
        assert_eq!(t.lseek(fd, i64::MAX, SEEK_SET), Ok(i64::MAX));
        assert_eq!(
            t.write(fd, b"x"),
            Err(Errno::EINVAL),
            "pos + count overflows"
        );
        assert_eq!(t.lseek(fd, 0, 5), Err(Errno::EINVAL));
        assert_eq!(t.lseek(fd, -1, SEEK_SET), Err(Errno::EINVAL));
        let d = t.open(b"/tmp", o(O_RDONLY), 0).unwrap();
        assert_eq!(t.read(d, &mut b), Err(Errno::EISDIR));
        assert_eq!(t.read(d, &mut []), Err(Errno::EISDIR));
        assert_eq!(t.readv(d, &mut []), Ok(0));
        assert_eq!(t.ftruncate(d, 0), Err(Errno::EINVAL));
        assert_eq!(t.ftruncate(ro, 0), Err(Errno::EINVAL));
        assert_eq!(t.ftruncate(fd, -1), Err(Errno::EINVAL));
        assert_eq!(t.ftruncate(wo, 2), Ok(()));
        assert_eq!(t.fstat(fd).unwrap().size, 2);
    }

    #[test]
    fn vectored() {
        let t = task();
        let fd = t.open(b"/tmp/v", o(O_CREAT | O_RDWR), 0o644).unwrap();
        let bufs = [IoSlice::new(b"ab"), IoSlice::new(b""), IoSlice::new(b"cde")];
        assert_eq!(t.writev(fd, &bufs), Ok(5));
        let (mut x, mut y) = ([0u8; 3], [0u8; 3]);
        let mut iov = [IoSliceMut::new(&mut x), IoSliceMut::new(&mut y)];
        assert_eq!(t.preadv(fd, &mut iov, 0), Ok(5));
        assert_eq!((&x, &y[..2]), (b"abc", &b"de"[..]));
        let many: Vec<IoSlice<'_>> = (0..1025).map(|_| IoSlice::new(b"")).collect();
        assert_eq!(t.writev(fd, &many), Err(Errno::EINVAL));
        assert_eq!(t.pwritev(fd, &bufs, 10), Ok(5));
        assert_eq!(t.fstat(fd).unwrap().size, 15);
    }

    #[test]
    fn position_shared_after_dup_and_fork() {
        let t = task();
        let fd = t.open(b"/tmp/p", o(O_CREAT | O_RDWR), 0o644).unwrap();
        let fd2 = t.dup(fd).unwrap();
        assert_eq!(t.write(fd, b"abc"), Ok(3));
        assert_eq!(t.lseek(fd2, 0, SEEK_CUR), Ok(3));
        let child = t.fork().unwrap();
        assert_eq!(child.write(fd, b"de"), Ok(2));
        assert_eq!(t.lseek(fd, 0, SEEK_CUR), Ok(5));
        let other = t.open(b"/tmp/p", o(O_RDWR), 0).unwrap();
        assert_eq!(
            t.lseek(other, 0, SEEK_CUR),
            Ok(0),
            "a new open has its own position"
        );
    }

    #[test]
    fn sendfile_rules() {
        let t = task();
        let src = t.open(b"/tmp/s", o(O_CREAT | O_RDWR), 0o644).unwrap();
        t.write(src, &[7u8; 100_000]).unwrap();
        t.lseek(src, 10, SEEK_SET).unwrap();
        let dst = t.open(b"/tmp/d", o(O_CREAT | O_RDWR), 0o644).unwrap();
        assert_eq!(t.sendfile(dst, src, None, 200_000), Ok(99_990));
        assert_eq!(t.lseek(src, 0, SEEK_CUR), Ok(100_000));
        assert_eq!(t.lseek(dst, 0, SEEK_CUR), Ok(99_990));
        let mut off = 5;
        assert_eq!(t.sendfile(dst, src, Some(&mut off), 10), Ok(10));
        assert_eq!(off, 15);
        assert_eq!(t.lseek(src, 0, SEEK_CUR), Ok(100_000));
        let [r, w] = t.pipe2(0).unwrap();
        assert_eq!(t.sendfile(w, src, Some(&mut 0), 5), Ok(5));
        assert_eq!(t.sendfile(dst, r, None, 5), Err(Errno::EINVAL));
        assert_eq!(t.sendfile(dst, r, Some(&mut 0), 5), Err(Errno::ESPIPE));
        assert_eq!(t.sendfile(r, src, None, 5), Err(Errno::EBADF));
        let app = t.open(b"/tmp/d", o(O_WRONLY | O_APPEND), 0).unwrap();
        assert_eq!(t.sendfile(app, src, Some(&mut 0), 5), Err(Errno::EINVAL));
        let mut max = i64::MAX;
        assert_eq!(t.sendfile(dst, src, Some(&mut max), 1), Err(Errno::EINVAL));
    }
}

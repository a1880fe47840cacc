//! [`FileOperations`]: what a file's implementation supplies (`struct file_operations` plus the
//! bits of the inode the generic code reads), and [`Kstat`].

use crate::file::File;
use crate::iov::{IovIter, IovIterMut};
use crate::uaccess::UserMemory;
use crate::uapi::{DEFAULT_POLLMASK, ENOIOCTLCMD, SEEK_CUR, SEEK_DATA, SEEK_END, SEEK_HOLE};
use crate::uapi::{MAX_LFS_FILESIZE, SEEK_SET};
use fdtable::Errno;
use std::any::Any;
use std::io::{IoSlice, IoSliceMut};

/// Inode attributes the generic code reads: the file type for ioctl dispatch, the size for
/// `FIONREAD`, the bytes used for `FIOQSIZE`, the block size for `FIGETBSZ`; and `fstat`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kstat {
    /// `st_mode`: file type (`S_IFREG`, ...) and permission bits.
    pub mode: u32,
    /// `st_ino`.
    pub ino: u64,
    /// `st_nlink`.
    pub nlink: u32,
    /// `st_size` (`i_size`).
    pub size: i64,
    /// `st_blksize`, and the file system block size `FIGETBSZ` reports (0: none, `EINVAL`).
    pub blksize: u32,
    /// `st_blocks`, in 512-byte units (`inode_get_bytes` is `blocks * 512`).
    pub blocks: u64,
    /// `st_rdev` for device files.
    pub rdev: u64,
}

impl Kstat {
    /// The file-type bits (`mode & S_IFMT`).
    pub fn file_type(&self) -> u32 {
        self.mode & crate::uapi::S_IFMT
    }
}

/// The operations of an open file: the kernel's `struct file_operations`, supplied by the
/// file's implementation (a file system, a driver, a pipe...). One value is shared by every fd
/// and every task that refers to the open file; it is dropped with the file — the kernel's
/// `->release` is this type's `Drop`, run once, when the last reference goes.
///
/// # Positions
///
/// `read`/`write` get `pos: Some(&mut offset)` to read or write at and advance, unless the file
/// declared [`FMODE_STREAM`](crate::uapi::FMODE_STREAM), in which case they get `None` (the
/// kernel passes a NULL `ppos`). The caller owns the offset: it is the file's `f_pos` for
/// `read`/`write` (taken under `f_pos_lock` when the file is shared, see
/// [`File`]) or the caller's argument for `pread`/`pwrite`.
///
/// # Defaults
///
/// Every method has the kernel's behaviour for a missing operation: `read`/`write` return
/// `EINVAL` (they are only reached if [`fmode`](Self::fmode) declared `FMODE_CAN_READ` /
/// `FMODE_CAN_WRITE`), `llseek` returns `ESPIPE`, `unlocked_ioctl`/`compat_ioctl` return
/// [`ENOIOCTLCMD`] (which the ioctl layer turns into `ENOTTY`), `poll` reports
/// `DEFAULT_POLLMASK`, `flush` succeeds, `fasync` is absent.
///
/// # Locking
///
/// The layer calls these without any lock of its own (no global lock, as `unlocked_ioctl`): an
/// implementation protects its own state, per object.
pub trait FileOperations: Any + Send + Sync {
    /// The capability bits ([`FMODE_CAPS`](crate::uapi::FMODE_CAPS)) this file has:
    /// `FMODE_CAN_READ` / `FMODE_CAN_WRITE` if it has `read` / `write`, `FMODE_LSEEK` if it has
    /// `llseek`, `FMODE_PREAD` / `FMODE_PWRITE` if positional I/O is meaningful,
    /// `FMODE_ATOMIC_POS` for regular files and directories, `FMODE_STREAM` if it has no
    /// position, `FMODE_CAN_ODIRECT`, `FMODE_CAN_SPLICE_READ`. Read once, when the file is made.
    fn fmode(&self) -> u32;

    /// Whether every operation of this file returns without waiting for anything (an
    /// in-memory file, /dev/zero, a driver answering from memory). The layer then looks such a
    /// file up on a shared table without taking a reference (`Files::fdget_rcu`: no locked
    /// instruction), since nothing can block while it is lent. False by default: a pipe, a
    /// socket or a host file may block, so they are looked up with a reference, as Linux does.
    fn never_blocks(&self) -> bool {
        false
    }

    /// Whether this file's `unlocked_ioctl` and `fasync` return without waiting for
    /// anything, whatever the command (a lock held briefly is not waiting), even if other
    /// operations may wait: a pipe's or a socket's `FIONREAD` reads a count under its lock.
    /// [`Task::ioctl`](crate::Task::ioctl) then looks such a file up without a reference once
    /// it is ioctl'd often (`Files::with_fdget_rcu_nonblocking`), while its reads and writes
    /// still take one. By default [`never_blocks`](FileOperations::never_blocks).
    fn ioctl_never_blocks(&self) -> bool {
        self.never_blocks()
    }

    /// The inode's attributes (`i_mode`, `i_size`, block size...).
    fn getattr(&self) -> Kstat;

    /// `->read`: reads into `buf` at `*pos` (advancing it), or from the stream if `pos` is
    /// `None`. Returns the bytes read; 0 is end of file.
    fn read(&self, file: &File, buf: &mut [u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
        let _ = (file, buf, pos);
        Err(Errno::EINVAL)
    }

    /// `->write`: writes `buf` at `*pos` (advancing it), or to the stream.
    fn write(&self, file: &File, buf: &[u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
        let _ = (file, buf, pos);
        Err(Errno::EINVAL)
    }

    /// `readv`: by default the kernel's `do_loop_readv_writev`: one `read` per buffer, stopping
    /// at the first short read or error (an error after progress returns the progress).
    /// Files whose `read` may block (pipes, sockets) override it so that it fills across
    /// buffers and blocks at most once, as `->read_iter` does.
    fn readv(
        &self,
        file: &File,
        bufs: &mut [IoSliceMut<'_>],
        mut pos: Option<&mut i64>,
    ) -> Result<usize, Errno> {
        let mut it = IovIterMut::new(bufs);
        let mut done = 0usize;
        while it.count() > 0 {
            let chunk = it.next_chunk(usize::MAX);
            let want = chunk.len();
            match self.read(file, chunk, pos.as_deref_mut()) {
                Ok(n) => {
                    it.advance(n);
                    done += n;
                    if n != want {
                        break;
                    }
                }
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok(done)
    }

    /// `writev`: by default one `write` per buffer, as [`readv`](Self::readv).
    fn writev(
        &self,
        file: &File,
        bufs: &[IoSlice<'_>],
        mut pos: Option<&mut i64>,
    ) -> Result<usize, Errno> {
        let mut it = IovIter::new(bufs);
        let mut done = 0usize;
        while it.count() > 0 {
            let chunk = it.next_chunk(usize::MAX);
            let want = chunk.len();
            match self.write(file, chunk, pos.as_deref_mut()) {
                Ok(n) => {
                    it.advance(n);
                    done += n;
                    if n != want {
                        break;
                    }
                }
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok(done)
    }

    /// `->llseek`: the new position for (`offset`, `whence`) given the current one `cur`
    /// (`whence` is already checked to be at most `SEEK_MAX`). The layer stores the result as
    /// the file's position. Only called if `fmode` has `FMODE_LSEEK`.
    fn llseek(&self, file: &File, cur: i64, offset: i64, whence: i32) -> Result<i64, Errno> {
        let _ = (file, cur, offset, whence);
        Err(Errno::ESPIPE)
    }

    /// `->unlocked_ioctl`: a command the generic layer did not handle. [`ENOIOCTLCMD`] means
    /// "not mine" (the caller sees `ENOTTY`). No lock is held.
    fn unlocked_ioctl(
        &self,
        file: &File,
        cmd: u32,
        arg: usize,
        mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        let _ = (file, cmd, arg, mem);
        Err(ENOIOCTLCMD)
    }

    /// `->compat_ioctl`: the same for a 32-bit guest; `arg` is passed raw (not through
    /// `compat_ptr`), so a driver can tell a number from a pointer. A driver whose commands
    /// are layout-compatible delegates to `unlocked_ioctl` (the kernel's `compat_ptr_ioctl`).
    fn compat_ioctl(
        &self,
        file: &File,
        cmd: u32,
        arg: u32,
        mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        let _ = (file, cmd, arg, mem);
        Err(ENOIOCTLCMD)
    }

    /// `->flush`: called on every close of an fd referring to this file.
    fn flush(&self, file: &File) -> Result<(), Errno> {
        let _ = file;
        Ok(())
    }

    /// `->poll` without a wait: the events ready now (`POLLIN`, `POLLOUT`, `POLLHUP`...).
    fn poll(&self, file: &File) -> u16 {
        let _ = file;
        DEFAULT_POLLMASK
    }

    /// `->check_flags`: may refuse the status flags `F_SETFL` is about to set (`arg`, before
    /// the layer masks it); its error is `F_SETFL`'s. Runs after the layer's own `O_DIRECT`
    /// check, as in `setfl`.
    fn check_flags(&self, file: &File, arg: u32) -> Result<(), Errno> {
        let _ = (file, arg);
        Ok(())
    }

    /// `->fasync`: `None` if the file has none (then `FIOASYNC` fails with `ENOTTY` and
    /// `F_SETFL` leaves `O_ASYNC` alone); otherwise whether turning async notification `on`
    /// (or off) succeeded — the layer then updates `O_ASYNC` in the file's flags. This layer
    /// has no signals: a successful registration only records the flag.
    fn fasync(&self, file: &File, on: bool) -> Option<Result<(), Errno>> {
        let _ = (file, on);
        None
    }

    /// Sets the file's size (`ftruncate`); only called for regular files open for writing.
    fn truncate(&self, file: &File, len: i64) -> Result<(), Errno> {
        let _ = (file, len);
        Err(Errno::EINVAL)
    }
}

/// `generic_file_llseek_size`: the position for (`offset`, `whence`) in a file of `eof` bytes
/// whose positions may not exceed `maxsize`, where all of the file is data.
pub fn generic_file_llseek_size(
    cur: i64,
    offset: i64,
    whence: i32,
    maxsize: i64,
    eof: i64,
) -> Result<i64, Errno> {
    let new = match whence {
        SEEK_SET => offset,
        SEEK_END => offset.wrapping_add(eof),
        SEEK_CUR => {
            if offset == 0 {
                return Ok(cur);
            }
            cur.wrapping_add(offset)
        }
        SEEK_DATA => {
            if offset as u64 >= eof as u64 {
                return Err(Errno::ENXIO);
            }
            offset
        }
        SEEK_HOLE => {
            if offset as u64 >= eof as u64 {
                return Err(Errno::ENXIO);
            }
            eof
        }
        _ => return Err(Errno::EINVAL),
    };
    vfs_setpos(new, maxsize)
}

/// `generic_file_llseek` for a file of `eof` bytes with the largest file-size limit.
pub fn generic_file_llseek(cur: i64, offset: i64, whence: i32, eof: i64) -> Result<i64, Errno> {
    generic_file_llseek_size(cur, offset, whence, MAX_LFS_FILESIZE, eof)
}

/// `vfs_setpos`'s checks: `EINVAL` for a negative position or one past `maxsize`.
pub fn vfs_setpos(pos: i64, maxsize: i64) -> Result<i64, Errno> {
    if pos < 0 || pos > maxsize {
        return Err(Errno::EINVAL);
    }
    Ok(pos)
}

/// `noop_llseek`: the position does not move (eventfd, ...).
pub fn noop_llseek(cur: i64) -> Result<i64, Errno> {
    Ok(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_llseek_rules() {
        assert_eq!(generic_file_llseek(5, 3, SEEK_SET, 10), Ok(3));
        assert_eq!(generic_file_llseek(5, -1, SEEK_SET, 10), Err(Errno::EINVAL));
        assert_eq!(generic_file_llseek(5, 2, SEEK_CUR, 10), Ok(7));
        assert_eq!(generic_file_llseek(5, 0, SEEK_CUR, 10), Ok(5));
        assert_eq!(generic_file_llseek(5, -6, SEEK_CUR, 10), Err(Errno::EINVAL));
        assert_eq!(generic_file_llseek(5, -3, SEEK_END, 10), Ok(7));
        assert_eq!(generic_file_llseek(5, 100, SEEK_END, 10), Ok(110));
        assert_eq!(
            generic_file_llseek(0, i64::MAX, SEEK_END, 10),
            Err(Errno::EINVAL)
        );
        assert_eq!(generic_file_llseek(0, 4, SEEK_DATA, 10), Ok(4));
        assert_eq!(generic_file_llseek(0, 10, SEEK_DATA, 10), Err(Errno::ENXIO));
        assert_eq!(generic_file_llseek(0, -1, SEEK_DATA, 10), Err(Errno::ENXIO));
        assert_eq!(generic_file_llseek(0, 4, SEEK_HOLE, 10), Ok(10));
        assert_eq!(generic_file_llseek(0, 4, 9, 10), Err(Errno::EINVAL));
        assert_eq!(noop_llseek(9), Ok(9));
    }
}

//! Host passthrough: [`HostFile`] wraps a real host file descriptor as a [`File`] (what a
//! sandbox hands a guest for a file it opened on the guest's behalf). Linux hosts only. Its
//! `unsafe` code is libc calls on a descriptor this module owns (the crate's only other
//! `unsafe` code is `host_memory`'s raw copies).

#![allow(unsafe_code)]

use crate::file::File;
use crate::ops::{FileOperations, Kstat};
use crate::uaccess::{UserMemory, put_user_i32};
use crate::uapi::*;
use fdtable::Errno;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// A host file descriptor as the operations of a [`File`]. It owns the descriptor and closes
/// it when the file is released (dropped).
///
/// - Regular files, directories and block devices use the layer's position: reads and writes
///   become `pread`/`pwrite` at the file's `f_pos`, so `dup` and `fork` in the layer share
///   positions exactly as the kernel shares them. An `O_APPEND` write goes through `write(2)`
///   and the position becomes the host's end of that write.
/// - Pipes, sockets, character devices and anonymous files (eventfd...) are streams:
///   `read(2)`/`write(2)` on the host descriptor, whose own position (if any) is the truth;
///   `lseek` on a character device or an anonymous file is forwarded.
/// - The layer's `O_APPEND`, `O_NONBLOCK`, `O_DIRECT` and `O_NOATIME` (`F_SETFL`, `FIONBIO`)
///   are copied to the host descriptor before the next read or write; `O_DIRECT` is accepted
///   on regular files and block devices, and the host's file system then decides.
/// - A positional file's position starts at the host descriptor's offset when it is wrapped.
/// - Every close of a guest fd flushes on the host (`close(dup(fd))`), so close-time errors
///   reach the guest. Like any close on the host it also drops the host process's POSIX
///   record locks on that file (`F_SETLK`); the host sees one process where the guest may
///   have several, so a sandbox that forwards record locks must keep its own lock owners.
/// - ioctl: `FIONREAD` is forwarded for streams (regular files are answered by the layer);
///   other commands are "not mine" (`ENOTTY`), because their arguments would be guest
///   addresses the host cannot interpret.
pub struct HostFile {
    fd: OwnedFd,
    kind: u32,
    /// The [`SYNCED`] bits last set on the host descriptor.
    host_flags: AtomicU32,
}

/// The status flags `F_SETFL` can change that the host descriptor must carry too.
const SYNCED: u32 = O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME;

/// Turns a libc return value into a result, reading `errno` on -1.
fn cvt(r: isize) -> Result<usize, Errno> {
    if r < 0 {
        Err(Errno::last_os_error())
    } else {
        Ok(r as usize)
    }
}

impl HostFile {
    /// Wraps `fd` as a file: the access mode and status flags come from the host's
    /// `F_GETFL`, the kind from `fstat`.
    pub fn wrap(fd: OwnedFd) -> Result<File, Errno> {
        let raw = fd.as_raw_fd();
        // SAFETY: `raw` is an open descriptor owned by `fd`; F_GETFL takes no pointer.
        let fl = unsafe { libc::fcntl(raw, libc::F_GETFL) };
        if fl < 0 {
            return Err(Errno::last_os_error());
        }
        let host = HostFile {
            fd,
            kind: 0,
            host_flags: AtomicU32::new(fl as u32 & SYNCED),
        };
        let kind = host.stat()?.mode & S_IFMT;
        let host = HostFile { kind, ..host };
        // The layer keeps the position of a positional file; it starts where the host's is
        // (an inherited, already-read stdin, a file seeked before it was handed over).
        let start = if host.positional() {
            host.host_lseek(0, SEEK_CUR).unwrap_or(0)
        } else {
            0
        };
        let file = File::new(fl as u32, Arc::new(host));
        file.set_pos_unlocked(start);
        Ok(file)
    }

    fn raw(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    fn positional(&self) -> bool {
        matches!(self.kind, S_IFREG | S_IFDIR | S_IFBLK)
    }

    fn stat(&self) -> Result<Kstat, Errno> {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: `st` is valid for writes of one `struct stat`; the descriptor is open.
        if unsafe { libc::fstat(self.raw(), st.as_mut_ptr()) } < 0 {
            return Err(Errno::last_os_error());
        }
        // SAFETY: fstat succeeded, so it initialised `st`.
        let st = unsafe { st.assume_init() };
        // `nlink_t` is 64 bits on x86_64, 32 on aarch64 (where the cast is the identity).
        #[allow(clippy::unnecessary_cast)]
        let nlink = st.st_nlink as u32;
        Ok(Kstat {
            mode: st.st_mode,
            ino: st.st_ino,
            nlink,
            size: st.st_size,
            blksize: st.st_blksize as u32,
            blocks: st.st_blocks as u64,
            rdev: st.st_rdev,
        })
    }

    /// Copies the layer's [`SYNCED`] flags to the host descriptor if they changed.
    fn sync_flags(&self, file: &File) -> Result<(), Errno> {
        let want = file.flags() & SYNCED;
        // ORDERING: Relaxed; a cache of the host's own state, which the host kernel orders.
        // Two racing updates both call F_SETFL; the last one wins on the host and here.
        if self.host_flags.load(Ordering::Relaxed) == want {
            return Ok(());
        }
        self.set_host_flags(want)
    }

    /// Sets the [`SYNCED`] flags of the host descriptor to `want`.
    fn set_host_flags(&self, want: u32) -> Result<(), Errno> {
        // SAFETY: F_GETFL/F_SETFL on our open descriptor; no pointers.
        let cur = unsafe { libc::fcntl(self.raw(), libc::F_GETFL) };
        if cur < 0 {
            return Err(Errno::last_os_error());
        }
        let new = (cur as u32 & !SYNCED) | want;
        // SAFETY: as above.
        if unsafe { libc::fcntl(self.raw(), libc::F_SETFL, new as i32) } < 0 {
            return Err(Errno::last_os_error());
        }
        // ORDERING: Relaxed; see the load.
        self.host_flags.store(want, Ordering::Relaxed);
        Ok(())
    }

    fn host_lseek(&self, offset: i64, whence: i32) -> Result<i64, Errno> {
        // SAFETY: lseek on our open descriptor; no pointers.
        let r = unsafe { libc::lseek(self.raw(), offset, whence) };
        if r < 0 {
            return Err(Errno::last_os_error());
        }
        Ok(r)
    }
}

impl FileOperations for HostFile {
    fn fmode(&self) -> u32 {
        let rw = FMODE_CAN_READ | FMODE_CAN_WRITE;
        // sendfile can read from what has `->splice_read`: not pipes, not anonymous inodes.
        let splice = FMODE_CAN_SPLICE_READ;
        let pos = FMODE_LSEEK | FMODE_PREAD | FMODE_PWRITE;
        match self.kind {
            // Direct I/O: what the host's file system supports; F_SETFL asks it (see `setfl`).
            S_IFREG => rw | splice | pos | FMODE_ATOMIC_POS | FMODE_CAN_ODIRECT,
            S_IFDIR => rw | splice | pos | FMODE_ATOMIC_POS,
            S_IFBLK => rw | splice | pos | FMODE_CAN_ODIRECT,
            S_IFCHR => rw | splice | pos | FMODE_STREAM,
            S_IFSOCK => rw | splice | FMODE_STREAM,
            S_IFIFO => rw | FMODE_STREAM,
            // Anonymous inodes (eventfd, timerfd...): the host decides what lseek means.
            _ => rw | FMODE_STREAM | FMODE_LSEEK,
        }
    }

    /// `F_SETFL` reaches the host at once, so the host's file system answers it (`EINVAL`
    /// for `O_DIRECT` where it cannot do direct I/O), as it would for a native fd.
    fn check_flags(&self, _file: &File, arg: u32) -> Result<(), Errno> {
        self.set_host_flags(arg & SYNCED)
    }

    /// Whether the host file has `->fasync` is the host's to say: set `O_ASYNC` on the host
    /// descriptor and see whether it stays. With no owner set (`F_SETOWN`) the host sends no
    /// signal, and this layer has none to send.
    fn fasync(&self, _file: &File, on: bool) -> Option<Result<(), Errno>> {
        // SAFETY: F_GETFL on our open descriptor; no pointers.
        let cur = unsafe { libc::fcntl(self.raw(), libc::F_GETFL) };
        if cur < 0 {
            return Some(Err(Errno::last_os_error()));
        }
        let want = (cur as u32 & !O_ASYNC) | if on { O_ASYNC } else { 0 };
        // SAFETY: F_SETFL on our open descriptor; no pointers.
        if unsafe { libc::fcntl(self.raw(), libc::F_SETFL, want as i32) } < 0 {
            return Some(Err(Errno::last_os_error()));
        }
        // SAFETY: as above.
        let now = unsafe { libc::fcntl(self.raw(), libc::F_GETFL) };
        if now < 0 {
            return Some(Err(Errno::last_os_error()));
        }
        if (now as u32 & O_ASYNC != 0) != on {
            // The host ignored O_ASYNC: the file has no fasync.
            return None;
        }
        Some(Ok(()))
    }

    fn getattr(&self) -> Kstat {
        // A descriptor we own cannot stop being fstat-able; report an empty stat of the right
        // kind if the host says otherwise.
        self.stat().unwrap_or(Kstat {
            mode: self.kind,
            ..Kstat::default()
        })
    }

    fn read(&self, file: &File, buf: &mut [u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
        self.sync_flags(file)?;
        let ptr = buf.as_mut_ptr().cast();
        match pos {
            Some(pos) => {
                // SAFETY: `buf` is valid for `buf.len()` bytes of writes.
                let n = cvt(unsafe { libc::pread(self.raw(), ptr, buf.len(), *pos) })?;
                *pos += n as i64;
                Ok(n)
            }
            // SAFETY: as above.
            None => cvt(unsafe { libc::read(self.raw(), ptr, buf.len()) }),
        }
    }

    fn write(&self, file: &File, buf: &[u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
        self.sync_flags(file)?;
        let ptr = buf.as_ptr().cast();
        match pos {
            Some(pos) if file.flags() & O_APPEND != 0 && self.positional() => {
                // SAFETY: `buf` is valid for `buf.len()` bytes of reads.
                let n = cvt(unsafe { libc::write(self.raw(), ptr, buf.len()) })?;
                *pos = self.host_lseek(0, SEEK_CUR)?;
                Ok(n)
            }
            Some(pos) => {
                // SAFETY: as above.
                let n = cvt(unsafe { libc::pwrite(self.raw(), ptr, buf.len(), *pos) })?;
                *pos += n as i64;
                Ok(n)
            }
            // SAFETY: as above.
            None => cvt(unsafe { libc::write(self.raw(), ptr, buf.len()) }),
        }
    }

    fn llseek(&self, _file: &File, cur: i64, offset: i64, whence: i32) -> Result<i64, Errno> {
        if !self.positional() {
            return self.host_lseek(offset, whence);
        }
        match whence {
            // The host's position is not ours: make SEEK_CUR absolute.
            SEEK_CUR if offset == 0 => Ok(cur),
            SEEK_CUR => self.host_lseek(cur.wrapping_add(offset), SEEK_SET),
            _ => self.host_lseek(offset, whence),
        }
    }

    fn unlocked_ioctl(
        &self,
        _file: &File,
        cmd: u32,
        arg: usize,
        mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        if cmd != FIONREAD || self.positional() {
            return Err(ENOIOCTLCMD);
        }
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int to the pointer, which is valid for that.
        if unsafe { libc::ioctl(self.raw(), libc::FIONREAD, &mut n as *mut libc::c_int) } < 0 {
            return Err(Errno::last_os_error());
        }
        put_user_i32(mem, arg, n)?;
        Ok(0)
    }

    /// Every close of a guest fd is a close on the host too (`close(dup(fd))`), so a file
    /// system that reports write-back errors at close (NFS, FUSE) reports them to the guest.
    fn flush(&self, _file: &File) -> Result<(), Errno> {
        // SAFETY: dup of our open descriptor; no pointers.
        let d = unsafe { libc::dup(self.raw()) };
        if d < 0 {
            return Err(Errno::last_os_error());
        }
        // SAFETY: `d` is the descriptor dup just made; nothing else owns it.
        if unsafe { libc::close(d) } < 0 {
            return Err(Errno::last_os_error());
        }
        Ok(())
    }

    fn poll(&self, _file: &File) -> u16 {
        let mut p = libc::pollfd {
            fd: self.raw(),
            events: (POLLIN | POLLOUT | POLLPRI | POLLRDHUP) as i16,
            revents: 0,
        };
        // SAFETY: one valid pollfd; timeout 0 never blocks.
        if unsafe { libc::poll(&mut p, 1, 0) } < 0 {
            return POLLERR;
        }
        p.revents as u16
    }

    fn truncate(&self, _file: &File, len: i64) -> Result<(), Errno> {
        // SAFETY: ftruncate on our open descriptor; no pointers.
        if unsafe { libc::ftruncate(self.raw(), len) } < 0 {
            return Err(Errno::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uaccess::get_user_i32;
    use std::os::fd::FromRawFd;

    fn host_pipe() -> (OwnedFd, OwnedFd) {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for two ints.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: pipe2 returned two fresh descriptors that nothing else owns.
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
    }

    /// A wrapped regular file starts at the host descriptor's offset; every close flushes on
    /// the host; `O_DIRECT` is the host file system's decision.
    #[test]
    fn host_file_position_flush_and_flags() {
        let path = std::env::temp_dir().join(format!("fdtable-host-{}", std::process::id()));
        std::fs::write(&path, b"0123456789").unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        let fd = OwnedFd::from(f);
        // SAFETY: lseek on an open descriptor; no pointers.
        assert_eq!(unsafe { libc::lseek(fd.as_raw_fd(), 4, libc::SEEK_SET) }, 4);
        let file = HostFile::wrap(fd).unwrap();
        assert_eq!(file.pos(), 4);
        let mut buf = [0u8; 3];
        let mut pos = file.pos();
        assert_eq!(file.ops().read(&file, &mut buf, Some(&mut pos)), Ok(3));
        assert_eq!(&buf, b"456");
        assert_eq!(file.ops().flush(&file), Ok(()));
        assert_eq!(file.ops().check_flags(&file, O_NOATIME | O_APPEND), Ok(()));
        let host = file.ops_as::<HostFile>().unwrap();
        // SAFETY: F_GETFL on an open descriptor; no pointers.
        let fl = unsafe { libc::fcntl(host.raw(), libc::F_GETFL) } as u32;
        assert_eq!(fl & (O_NOATIME | O_APPEND), O_NOATIME | O_APPEND);
        // Direct I/O: whatever the host says for this file system, the layer says too.
        let host_says = {
            // SAFETY: F_SETFL on an open descriptor; no pointers.
            let r = unsafe { libc::fcntl(host.raw(), libc::F_SETFL, libc::O_DIRECT) };
            // SAFETY: as above.
            unsafe { libc::fcntl(host.raw(), libc::F_SETFL, 0) };
            if r < 0 {
                Err(Errno::last_os_error())
            } else {
                Ok(())
            }
        };
        assert_eq!(file.ops().check_flags(&file, O_DIRECT), host_says);
    }

    #[test]
    fn host_pipe_passthrough() {
        let (r, w) = host_pipe();
        let r = HostFile::wrap(r).unwrap();
        let w = HostFile::wrap(w).unwrap();
        assert_eq!(r.file_type(), S_IFIFO);
        assert!(r.is_stream());
        assert_eq!(w.ops().write(&w, b"hello", None), Ok(5));
        let mut n = 0i32;
        // SAFETY: the only non-zero address passed through `mem` is `n`'s, valid for the
        // 4 bytes FIONREAD writes, with no reference to `n` live during the call.
        let mut mem = unsafe { crate::HostMemory::new() };
        let addr = &mut n as *mut i32 as usize;
        assert_eq!(r.ops().unlocked_ioctl(&r, FIONREAD, addr, &mut mem), Ok(0));
        assert_eq!(n, 5);
        assert_eq!(
            r.ops().unlocked_ioctl(&r, FIONREAD, 0, &mut mem),
            Err(Errno::EFAULT)
        );
        let mut buf = [0u8; 8];
        assert_eq!(r.ops().read(&r, &mut buf, None), Ok(5));
        r.update_flags(O_NONBLOCK, O_NONBLOCK);
        assert_eq!(r.ops().read(&r, &mut buf, None), Err(Errno::EAGAIN));
        let mut bytes = [0u8; 4];
        let mut lin = crate::uaccess::LinearMemory::new(16, &mut bytes);
        assert_eq!(r.ops().unlocked_ioctl(&r, FIONREAD, 16, &mut lin), Ok(0));
        assert_eq!(get_user_i32(&mut lin, 16), Ok(0));
        drop(w);
        assert_eq!(r.ops().read(&r, &mut buf, None), Ok(0));
    }
}

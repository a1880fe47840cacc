//! `ioctl` and the 32-bit `compat_ioctl` (fs/ioctl.c): the generic commands the layer answers
//! itself (`do_vfs_ioctl`), then the file's own `unlocked_ioctl` / `compat_ioctl`, with
//! "not mine" (`ENOIOCTLCMD`) turned into `ENOTTY`.
//!
//! No lock is taken by the dispatch, as since Michael S. Tsirkin's "speed up ioctls" (2004,
//! `unlocked_ioctl`): not a global one (the Big Kernel Lock that patch took off the path), not
//! the table's (`fdget` is lock-free, and reference-free when the table is unshared). A driver
//! protects its own state.

use crate::file::File;
use crate::task::Task;
use crate::uaccess::{UserMemory, get_user_i32, put_user_i32, put_user_i64};
use crate::uapi::*;
use fdtable::{Errno, FdPayload};

/// `vfs_ioctl`: the file's `unlocked_ioctl`; `ENOIOCTLCMD` becomes `ENOTTY`.
#[inline(always)]
fn vfs_ioctl(file: &File, cmd: u32, arg: usize, mem: &mut dyn UserMemory) -> Result<i64, Errno> {
    match file.ops().unlocked_ioctl(file, cmd, arg, mem) {
        Err(e) if e == ENOIOCTLCMD => Err(Errno::ENOTTY),
        r => r,
    }
}

impl<P: FdPayload> Task<P> {
    /// `ioctl(fd, cmd, arg)` — `EBADF` for a bad or `O_PATH` fd; the generic commands
    /// (`FIOCLEX`, `FIONCLEX`, `FIONBIO`, `FIOASYNC`, `FIOQSIZE`, `FIGETBSZ`, `FIONREAD` on
    /// regular files, `FIBMAP`) are answered here; anything else goes to the file's
    /// `unlocked_ioctl`, and `ENOTTY` if it has none or says "not mine".
    ///
    /// `arg` is the raw argument; commands that take a pointer read or write guest memory
    /// through `mem` (`EFAULT` if unmapped).
    ///
    /// # References
    ///
    /// [ioctl(2)](https://man7.org/linux/man-pages/man2/ioctl.2.html),
    /// [ioctl_fs(2)](https://man7.org/linux/man-pages/man2/ioctl_fs.2.html)
    #[inline]
    pub fn ioctl(
        &self,
        fd: i32,
        cmd: u32,
        arg: usize,
        mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        // A file is lent to this borrow only if its ioctls never wait (`File`'s
        // `may_lend_nonblocking`), and the generic commands answered here do not wait either.
        self.with_file_nonblocking(
            fd,
            #[inline(always)]
            |f, _| match self.fd_ioctl(fd, cmd) {
                Some(r) => r,
                None => file_ioctl(f, cmd, arg, mem),
            },
        )
    }

    /// `compat_ioctl(fd, cmd, arg)` for a 32-bit guest: the generic commands with the
    /// argument widened as a pointer (`compat_ptr`), then the file's `compat_ioctl` with the
    /// argument raw; `ENOTTY` if the file has none or says "not mine".
    pub fn compat_ioctl(
        &self,
        fd: i32,
        cmd: u32,
        arg: u32,
        mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        let f = self.fdget(fd)?;
        if let Some(r) = self.fd_ioctl(fd, cmd) {
            return r;
        }
        match do_file_ioctl(&f, cmd, arg as usize, mem) {
            Err(e) if e == ENOIOCTLCMD => match f.ops().compat_ioctl(&f, cmd, arg, mem) {
                Err(e) if e == ENOIOCTLCMD => Err(Errno::ENOTTY),
                r => r,
            },
            r => r,
        }
    }

    /// The generic commands that act on the descriptor rather than the file.
    #[inline]
    fn fd_ioctl(&self, fd: i32, cmd: u32) -> Option<Result<i64, Errno>> {
        match cmd {
            FIOCLEX | FIONCLEX => {
                // set_close_on_exec cannot fail in the kernel; a racing close of `fd` by a
                // sibling thread is not an error here either.
                let _ = self.files.set_close_on_exec(fd as u32, cmd == FIOCLEX);
                Some(Ok(0))
            }
            _ => None,
        }
    }
}

/// `ioctl` on an open file already looked up: the generic commands that act on the file
/// (`FIONBIO`, `FIOASYNC`, `FIOQSIZE`, `FIGETBSZ`, `FIONREAD` on regular files, `FIBMAP`),
/// else the file's `unlocked_ioctl` (`ENOTTY` if it has none or says "not mine"). What
/// [`Task::ioctl`] runs after `fdget`, for callers that keep their own descriptor table.
///
/// Inlined into its caller: the common case is then a few compares and the call through the
/// file's operations, with no frame of its own.
#[inline(always)]
pub fn file_ioctl(
    file: &File,
    cmd: u32,
    arg: usize,
    mem: &mut dyn UserMemory,
) -> Result<i64, Errno> {
    if !answers_itself(file, cmd) {
        // The common case, a driver's or a file type's own command (`FIONREAD` on a pipe
        // included): straight to the file, with no generic dispatch to go through first.
        return vfs_ioctl(file, cmd, arg, mem);
    }
    match do_file_ioctl(file, cmd, arg, mem) {
        Err(e) if e == ENOIOCTLCMD => vfs_ioctl(file, cmd, arg, mem),
        r => r,
    }
}

/// Whether [`do_file_ioctl`] answers `cmd` on `file` rather than the file's `unlocked_ioctl`
/// (`FIONREAD` and `FIBMAP` only on regular files): a few compares, inlined, so that other
/// commands skip its frame.
#[inline(always)]
fn answers_itself(file: &File, cmd: u32) -> bool {
    match cmd {
        FIONBIO | FIOASYNC | FIOQSIZE | FIGETBSZ => true,
        FIONREAD | FIBMAP => file.file_type() == S_IFREG,
        _ => false,
    }
}

/// `do_vfs_ioctl` without the descriptor commands: `ENOIOCTLCMD` for a command that is not
/// generic.
#[inline(never)]
fn do_file_ioctl(
    file: &File,
    cmd: u32,
    arg: usize,
    mem: &mut dyn UserMemory,
) -> Result<i64, Errno> {
    let ty = file.file_type();
    match cmd {
        FIONBIO => {
            let on = get_user_i32(mem, arg)?;
            file.update_flags(O_NONBLOCK, if on != 0 { O_NONBLOCK } else { 0 });
            Ok(0)
        }
        FIOASYNC => {
            let on = get_user_i32(mem, arg)? != 0;
            let flag = if on { O_ASYNC } else { 0 };
            if (flag ^ file.flags()) & O_ASYNC != 0 {
                match file.ops().fasync(file, on) {
                    None => return Err(Errno::ENOTTY),
                    Some(Err(e)) => return Err(e),
                    Some(Ok(())) => file.update_flags(O_ASYNC, flag),
                }
            }
            Ok(0)
        }
        FIOQSIZE => {
            if matches!(ty, S_IFDIR | S_IFREG | S_IFLNK) {
                let bytes = file.ops().getattr().blocks.saturating_mul(512);
                put_user_i64(mem, arg, bytes as i64)?;
                return Ok(0);
            }
            Err(Errno::ENOTTY)
        }
        FIGETBSZ => {
            let bs = file.ops().getattr().blksize;
            if bs == 0 {
                return Err(Errno::EINVAL);
            }
            put_user_i32(mem, arg, bs as i32)?;
            Ok(0)
        }
        FIONREAD => {
            if ty != S_IFREG {
                return vfs_ioctl(file, cmd, arg, mem);
            }
            let left = file.ops().getattr().size.wrapping_sub(file.pos());
            // put_user into an `int`: the kernel truncates too.
            put_user_i32(mem, arg, left as i32)?;
            Ok(0)
        }
        // file_ioctl: FIBMAP needs CAP_SYS_RAWIO, which a guest does not have.
        FIBMAP if ty == S_IFREG => Err(Errno::EPERM),
        _ => Err(ENOIOCTLCMD),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::{TESTDEV_IOC_ECHO, TESTDEV_IOC_GET, TESTDEV_IOC_SET, TestDevice};
    use crate::uaccess::{LinearMemory, NoMemory, get_user_u64};
    use crate::{MemFs, Task};
    use std::sync::Arc;

    const BASE: usize = 0x1000;

    /// A pipe ioctl'd often on a shared table is lent to `ioctl` without a reference (its
    /// ioctls never wait), while its reads and writes, which may, still take one; its close
    /// still releases it (the reader sees end of file), and every ioctl answers as before.
    #[test]
    fn a_pipe_ioctld_often_is_lent_to_ioctl_only() {
        let mut t = Task::new(MemFs::new());
        let mut thread = t.clone_thread();
        let mut raw = [0u8; 8];
        let mut m = LinearMemory::new(BASE, &mut raw);
        let [r, w] = t.pipe2(0).unwrap();
        t.write(w, b"abcd").unwrap();
        for _ in 0..=2 * fdtable::LEND_AFTER {
            assert_eq!(t.ioctl(r, FIONREAD, BASE, &mut m), Ok(0));
            assert_eq!(get_user_i32(&mut m, BASE), Ok(4));
        }
        let files = t.files();
        let lent = |fd: i32| files.with_fdget_rcu_nonblocking(fd as u32, |f| f.unwrap().is_rcu());
        assert!(lent(r), "a pipe ioctl'd often is lent to ioctl");
        assert!(!lent(w), "its other end was not ioctl'd");
        assert!(!files.with_fdget_rcu(r as u32, |f| f.unwrap().is_rcu()));
        let mut buf = [0u8; 2];
        assert_eq!(t.read(r, &mut buf), Ok(2));
        assert_eq!(t.ioctl(r, FIONREAD, BASE, &mut m), Ok(0));
        assert_eq!(get_user_i32(&mut m, BASE), Ok(2));
        // The generic commands on the lent file.
        put_user_i32(&mut m, BASE, 1).unwrap();
        assert_eq!(t.ioctl(r, FIONBIO, BASE, &mut m), Ok(0));
        assert_eq!(t.read(r, &mut buf), Ok(2));
        assert_eq!(t.read(r, &mut buf), Err(Errno::EAGAIN));
        assert_eq!(t.ioctl(r, FIOCLEX, 0, &mut NoMemory), Ok(0));
        assert_eq!(t.fcntl(r, F_GETFD, 0), Ok(1));
        assert_eq!(t.ioctl(r, 0x1234, 0, &mut m), Err(Errno::ENOTTY));
        // The write end's close through the other task: its release is not held back.
        thread.close(w).unwrap();
        assert_eq!(
            t.read(r, &mut buf),
            Ok(0),
            "end of file: the writer was released"
        );
        // And the lent read end's own close.
        thread.close(r).unwrap();
        assert_eq!(t.ioctl(r, FIONREAD, BASE, &mut m), Err(Errno::EBADF));
        assert!(t.files().snapshot().unwrap().is_empty());
    }

    #[test]
    fn generic_commands() {
        let t = Task::new(MemFs::new());
        let mut raw = [0u8; 64];
        let mut m = LinearMemory::new(BASE, &mut raw);
        let fd = t.open(b"/tmp/f", (O_CREAT | O_RDWR) as i32, 0o644).unwrap();
        t.write(fd, &[1u8; 5000]).unwrap();
        t.lseek(fd, 1000, SEEK_SET).unwrap();
        assert_eq!(t.ioctl(fd, FIONREAD, BASE, &mut m), Ok(0));
        assert_eq!(get_user_i32(&mut m, BASE), Ok(4000));
        assert_eq!(t.ioctl(fd, FIOQSIZE, BASE, &mut m), Ok(0));
        assert_eq!(get_user_u64(&mut m, BASE), Ok(8192));
        assert_eq!(t.ioctl(fd, FIGETBSZ, BASE + 8, &mut m), Ok(0));
        assert_eq!(get_user_i32(&mut m, BASE + 8), Ok(4096));
        assert_eq!(t.ioctl(fd, FIONREAD, 0, &mut m), Err(Errno::EFAULT));
        assert_eq!(t.ioctl(fd, 0x1234, 0, &mut m), Err(Errno::ENOTTY));
        assert_eq!(t.ioctl(fd, FIBMAP, BASE, &mut m), Err(Errno::EPERM));
        assert_eq!(t.ioctl(fd, FIOCLEX, 0, &mut NoMemory), Ok(0));
        assert_eq!(t.fcntl(fd, F_GETFD, 0), Ok(1));
        assert_eq!(t.ioctl(fd, FIONCLEX, 0, &mut NoMemory), Ok(0));
        assert_eq!(t.fcntl(fd, F_GETFD, 0), Ok(0));
        put_user_i32(&mut m, BASE, 1).unwrap();
        assert_eq!(t.ioctl(fd, FIONBIO, BASE, &mut m), Ok(0));
        assert_eq!(
            t.fcntl(fd, F_GETFL, 0),
            Ok((O_RDWR | O_LARGEFILE | O_NONBLOCK) as i64)
        );
        assert_eq!(t.ioctl(fd, FIONBIO, 0, &mut m), Err(Errno::EFAULT));
        assert_eq!(t.ioctl(fd, FIOASYNC, BASE, &mut m), Err(Errno::ENOTTY));
        put_user_i32(&mut m, BASE, 0).unwrap();
        assert_eq!(
            t.ioctl(fd, FIOASYNC, BASE, &mut m),
            Ok(0),
            "no state change"
        );
        assert_eq!(t.ioctl(99, FIOCLEX, 0, &mut m), Err(Errno::EBADF));
        let p = t.open(b"/tmp/f", O_PATH as i32, 0).unwrap();
        assert_eq!(t.ioctl(p, FIOCLEX, 0, &mut m), Err(Errno::EBADF));
        let null = t.open(b"/dev/null", 0, 0).unwrap();
        assert_eq!(t.ioctl(null, FIONREAD, BASE, &mut m), Err(Errno::ENOTTY));
        assert_eq!(t.ioctl(null, FIOQSIZE, BASE, &mut m), Err(Errno::ENOTTY));
    }

    #[test]
    fn pipe_fionread_and_fioasync() {
        let t = Task::new(MemFs::new());
        let mut raw = [0u8; 8];
        let mut m = LinearMemory::new(BASE, &mut raw);
        let [r, w] = t.pipe2(0).unwrap();
        t.write(w, b"12345").unwrap();
        assert_eq!(t.ioctl(r, FIONREAD, BASE, &mut m), Ok(0));
        assert_eq!(get_user_i32(&mut m, BASE), Ok(5));
        assert_eq!(t.compat_ioctl(r, FIONREAD, BASE as u32, &mut m), Ok(0));
        put_user_i32(&mut m, BASE, 1).unwrap();
        assert_eq!(t.ioctl(r, FIOASYNC, BASE, &mut m), Ok(0));
        assert_eq!(t.fcntl(r, F_GETFL, 0), Ok(O_ASYNC as i64));
    }

    /// `file_ioctl`'s shortcut (straight to the file when the generic layer would not answer)
    /// gives what the whole dispatch gives, on every kind of file, for the generic commands
    /// and for others: the same result and the same bytes written.
    #[test]
    fn the_shortcut_to_the_file_answers_as_the_whole_dispatch() {
        let fs = MemFs::new();
        fs.mknod_chr(b"/dev/testdev", 0o666, Arc::new(TestDevice::new()))
            .unwrap();
        let t = Task::new(fs);
        let reg = t.open(b"/tmp/f", (O_CREAT | O_RDWR) as i32, 0o644).unwrap();
        t.write(reg, &[7u8; 3000]).unwrap();
        t.lseek(reg, 100, SEEK_SET).unwrap();
        let [r, w] = t.pipe2(0).unwrap();
        t.write(w, b"abc").unwrap();
        let null = t.open(b"/dev/null", O_RDWR as i32, 0).unwrap();
        let dev = t.open(b"/dev/testdev", O_RDWR as i32, 0).unwrap();
        let dir = t.open(b"/tmp", O_RDONLY as i32, 0).unwrap();
        let cmds = [
            FIONREAD,
            FIONBIO,
            FIOASYNC,
            FIOQSIZE,
            FIGETBSZ,
            FIBMAP,
            TESTDEV_IOC_GET,
            0x5401, // TCGETS
            0x1234,
        ];
        for fd in [reg, r, w, null, dev, dir] {
            let f = t.fdget(fd).unwrap();
            for cmd in cmds {
                let mut a = [0u8; 16];
                let mut b = [0u8; 16];
                let got = file_ioctl(&f, cmd, BASE, &mut LinearMemory::new(BASE, &mut a));
                let mut m = LinearMemory::new(BASE, &mut b);
                let want = match do_file_ioctl(&f, cmd, BASE, &mut m) {
                    Err(e) if e == ENOIOCTLCMD => vfs_ioctl(&f, cmd, BASE, &mut m),
                    r => r,
                };
                assert_eq!((got, a), (want, b), "fd {fd}, cmd {cmd:#x}");
            }
        }
    }

    #[test]
    fn driver_ioctl_native_and_compat() {
        let fs = MemFs::new();
        fs.mknod_chr(b"/dev/testdev", 0o666, Arc::new(TestDevice::new()))
            .unwrap();
        let t = Task::new(fs);
        let fd = t.open(b"/dev/testdev", O_RDWR as i32, 0).unwrap();
        let mut raw = [0u8; 16];
        let mut m = LinearMemory::new(BASE, &mut raw);
        m.copy_to_user(BASE, &9u64.to_ne_bytes()).unwrap();
        assert_eq!(t.ioctl(fd, TESTDEV_IOC_SET, BASE, &mut m), Ok(0));
        assert_eq!(t.ioctl(fd, TESTDEV_IOC_GET, BASE + 8, &mut m), Ok(0));
        assert_eq!(get_user_u64(&mut m, BASE + 8), Ok(9));
        assert_eq!(
            t.compat_ioctl(fd, TESTDEV_IOC_ECHO, 0xFFFF_FFFF, &mut m),
            Ok(0xFFFF_FFFF)
        );
        assert_eq!(t.ioctl(fd, io(b'q', 99), 0, &mut m), Err(Errno::ENOTTY));
        assert_eq!(
            t.compat_ioctl(fd, io(b'q', 99), 0, &mut m),
            Err(Errno::ENOTTY)
        );
        // A file without compat_ioctl: ENOTTY for a 32-bit caller.
        let [r, _w] = t.pipe2(0).unwrap();
        assert_eq!(t.compat_ioctl(r, 0x4242, 0, &mut m), Err(Errno::ENOTTY));
    }
}

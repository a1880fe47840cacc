//! `open`, `close` and the path calls (fs/open.c, fs/namei.c): `do_sys_openat2`'s order —
//! check the flags, copy the name, **reserve the fd**, then ask the namespace, then install.
//!
//! Failed opens are cheap, as since Mateusz Guzik's "vfs: shave work on failed file open"
//! (2023, the patch that added `fput_badopen`): an open that fails — most often `ENOENT` —
//! finds the fd reserved and no file built. It gives the fd back (`put_unused_fd`, dropping
//! the [`FdReservation`](fdtable::FdReservation)) and returns: no file object to free,
//! nothing deferred, nothing leaked. A table that is full fails with
//! `EMFILE` before the namespace is asked at all.

use crate::file::File;
use crate::namespace::{MAY_APPEND, MAY_READ, MAY_WRITE, OpenHow};
use crate::task::Task;
use crate::uapi::*;
use fdtable::{Errno, FdPayload, FileRef};

/// `build_open_how` + `build_open_flags` for `open`/`openat` (not `openat2`, which rejects
/// unknown flags): unknown flags are dropped, `O_PATH` keeps only `O_PATH_FLAGS`, the mode is
/// kept only for creating opens; `EINVAL` for `O_CREAT | O_DIRECTORY` and for an `O_TMPFILE`
/// without write access. `O_LARGEFILE` is forced first, as a 64-bit kernel does.
pub fn build_open_how(flags: u32, mode: u32, umask: u32) -> Result<OpenHow, Errno> {
    let mut flags = (flags | O_LARGEFILE) & VALID_OPEN_FLAGS;
    let mut mode = mode & S_IALLUGO;
    // O_PATH beats everything else.
    if flags & O_PATH != 0 {
        flags &= O_PATH_FLAGS;
    }
    if flags & (O_CREAT | __O_TMPFILE) == 0 {
        mode = 0;
    }
    let mut acc_mode = match flags & O_ACCMODE {
        0 => MAY_READ,
        1 => MAY_WRITE,
        _ => MAY_READ | MAY_WRITE,
    };
    if flags & (O_DIRECTORY | O_CREAT) == (O_DIRECTORY | O_CREAT) {
        return Err(Errno::EINVAL);
    }
    if flags & __O_TMPFILE != 0 && (flags & O_DIRECTORY == 0 || acc_mode & MAY_WRITE == 0) {
        return Err(Errno::EINVAL);
    }
    if flags & O_PATH != 0 {
        acc_mode = 0;
    }
    if flags & __O_SYNC != 0 {
        flags |= O_DSYNC;
    }
    if flags & O_TRUNC != 0 {
        acc_mode |= MAY_WRITE;
    }
    if flags & O_APPEND != 0 {
        acc_mode |= MAY_APPEND;
    }
    Ok(OpenHow {
        flags,
        mode: mode & !umask,
        acc_mode,
    })
}

/// `getname`: the path up to its first NUL (a C string ends there). `ENOENT` if empty,
/// `ENAMETOOLONG` if it does not fit in `PATH_MAX` with its NUL.
pub fn getname(path: &[u8]) -> Result<&[u8], Errno> {
    let path = match path.iter().position(|&c| c == 0) {
        Some(n) => &path[..n],
        None => path,
    };
    if path.is_empty() {
        return Err(Errno::ENOENT);
    }
    if path.len() >= PATH_MAX {
        return Err(Errno::ENAMETOOLONG);
    }
    Ok(path)
}

impl<P: FdPayload> Task<P> {
    /// `open(path, flags, mode)` — `openat(AT_FDCWD, ...)`.
    pub fn open(&self, path: &[u8], flags: i32, mode: u32) -> Result<i32, Errno> {
        self.openat(AT_FDCWD, path, flags, mode)
    }

    /// `openat(dirfd, path, flags, mode)` — opens `path` (relative to `dirfd`, or to the
    /// current directory for `AT_FDCWD`) and returns the lowest free descriptor.
    ///
    /// Order, as `do_sys_openat2`: `EINVAL` for bad flag combinations; `ENOENT` /
    /// `ENAMETOOLONG` for the name itself; `EMFILE` when no descriptor is free below
    /// `RLIMIT_NOFILE` (before the namespace is asked); then `EBADF` / `ENOTDIR` for `dirfd`
    /// (relative paths only) and the namespace's errors. A failure gives the reserved fd back
    /// and leaves nothing behind.
    ///
    /// # References
    ///
    /// [open(2)](https://man7.org/linux/man-pages/man2/open.2.html)
    pub fn openat(&self, dirfd: i32, path: &[u8], flags: i32, mode: u32) -> Result<i32, Errno> {
        let how = build_open_how(flags as u32, mode, self.fs.umask())?;
        let path = getname(path)?;
        let slot = self
            .files
            .get_unused_fd_flags(how.flags & O_CLOEXEC, self.nofile())?;
        // On error `slot` drops here: put_unused_fd, and no file was ever made.
        let opened = self.path_at(dirfd, path, |at| self.ns.open(at, path, &how))?;
        let mut file = File::new(how.flags, opened.ops);
        if opened.created {
            file = file.set_created();
        }
        Ok(slot.install(FileRef::new(file)) as i32)
    }

    /// `creat(path, mode)` — `open(path, O_CREAT | O_WRONLY | O_TRUNC, mode)`.
    pub fn creat(&self, path: &[u8], mode: u32) -> Result<i32, Errno> {
        self.open(path, (O_CREAT | O_WRONLY | O_TRUNC) as i32, mode)
    }

    /// Runs `f` with where a relative `path` starts (`path_init`): nothing for an absolute
    /// path (`dirfd` is then ignored, even if invalid), the current directory for `AT_FDCWD`,
    /// else the directory `dirfd` refers to (`O_PATH` allowed; `EBADF`, `ENOTDIR`).
    pub(crate) fn path_at<R>(
        &self,
        dirfd: i32,
        path: &[u8],
        f: impl FnOnce(Option<&File>) -> Result<R, Errno>,
    ) -> Result<R, Errno> {
        if path.first() == Some(&b'/') {
            return f(None);
        }
        if dirfd == AT_FDCWD {
            let cwd = self.fs.cwd.read().unwrap_or_else(|p| p.into_inner());
            return f(cwd.as_deref());
        }
        let dir = self.fdget_raw(dirfd)?;
        if dir.file_type() != S_IFDIR {
            return Err(Errno::ENOTDIR);
        }
        f(Some(&dir))
    }

    /// `close(fd)` — removes `fd` from the table, then flushes the file and drops the
    /// table's reference (the last one releases the file). `EBADF` if `fd` is not open. A
    /// flush error is returned but the fd is closed regardless; a restart request from the
    /// flush becomes `EINTR`, since the fd cannot be restored.
    ///
    /// # References
    ///
    /// [close(2)](https://man7.org/linux/man-pages/man2/close.2.html)
    pub fn close(&mut self, fd: i32) -> Result<(), Errno> {
        // `Files::close_fd` turns a restart request into `EINTR`.
        self.files.close_fd(fd as u32)
    }

    /// `mkdirat(dirfd, path, mode)`; the mode is masked by the umask.
    pub fn mkdirat(&self, dirfd: i32, path: &[u8], mode: u32) -> Result<(), Errno> {
        let path = getname(path)?;
        let mode = mode & 0o1777 & !self.fs.umask();
        self.path_at(dirfd, path, |at| self.ns.mkdir(at, path, mode))
    }

    /// `mkdir(path, mode)`.
    pub fn mkdir(&self, path: &[u8], mode: u32) -> Result<(), Errno> {
        self.mkdirat(AT_FDCWD, path, mode)
    }

    /// `unlinkat(dirfd, path, flags)`: `AT_REMOVEDIR` makes it `rmdir`; `EINVAL` for other
    /// flags.
    pub fn unlinkat(&self, dirfd: i32, path: &[u8], flags: u32) -> Result<(), Errno> {
        if flags & !AT_REMOVEDIR != 0 {
            return Err(Errno::EINVAL);
        }
        let path = getname(path)?;
        self.path_at(dirfd, path, |at| {
            if flags & AT_REMOVEDIR != 0 {
                self.ns.rmdir(at, path)
            } else {
                self.ns.unlink(at, path)
            }
        })
    }

    /// `unlink(path)`.
    pub fn unlink(&self, path: &[u8]) -> Result<(), Errno> {
        self.unlinkat(AT_FDCWD, path, 0)
    }

    /// `rmdir(path)`.
    pub fn rmdir(&self, path: &[u8]) -> Result<(), Errno> {
        self.unlinkat(AT_FDCWD, path, AT_REMOVEDIR)
    }

    /// `chdir(path)`: `ENOTDIR` if it is not a directory.
    pub fn chdir(&self, path: &[u8]) -> Result<(), Errno> {
        let path = getname(path)?;
        let how = build_open_how(O_PATH | O_DIRECTORY, 0, 0)?;
        let opened = self.path_at(AT_FDCWD, path, |at| self.ns.open(at, path, &how))?;
        self.set_cwd(FileRef::new(File::new(how.flags, opened.ops)));
        Ok(())
    }

    /// `fchdir(fd)`: `EBADF`, or `ENOTDIR` if `fd` is not a directory (`O_PATH` allowed).
    pub fn fchdir(&self, fd: i32) -> Result<(), Errno> {
        let f = self.fdget_raw(fd)?;
        if f.file_type() != S_IFDIR {
            return Err(Errno::ENOTDIR);
        }
        self.set_cwd(f.to_file_ref());
        Ok(())
    }

    fn set_cwd(&self, dir: FileRef<File>) {
        let old = self
            .fs
            .cwd
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .replace(dir);
        // The old directory is put outside the lock.
        drop(old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemFs;

    fn task() -> Task {
        Task::new(MemFs::new())
    }

    #[test]
    fn open_flag_rules() {
        let h = build_open_how(O_RDONLY, 0o777, 0o022).unwrap();
        assert_eq!(h.flags, O_LARGEFILE);
        assert_eq!(h.mode, 0, "mode only for creating opens");
        assert_eq!(h.acc_mode, MAY_READ);
        let h = build_open_how(O_CREAT | O_WRONLY | O_TRUNC, 0o777, 0o022).unwrap();
        assert_eq!(h.mode, 0o755);
        assert_eq!(h.acc_mode, MAY_WRITE);
        let h = build_open_how(O_PATH | O_RDWR | O_CREAT | O_CLOEXEC, 0o777, 0).unwrap();
        assert_eq!(h.flags, O_PATH | O_CLOEXEC);
        assert_eq!(h.acc_mode, 0);
        assert_eq!(
            build_open_how(O_CREAT | O_DIRECTORY, 0, 0),
            Err(Errno::EINVAL)
        );
        assert_eq!(build_open_how(O_TMPFILE, 0, 0), Err(Errno::EINVAL));
        assert_eq!(
            build_open_how(__O_TMPFILE | O_RDWR, 0, 0),
            Err(Errno::EINVAL)
        );
        assert!(build_open_how(O_TMPFILE | O_RDWR, 0, 0).is_ok());
        assert_eq!(
            build_open_how(O_SYNC, 0, 0).unwrap().flags & O_DSYNC,
            O_DSYNC
        );
        assert_eq!(
            build_open_how(0x8000_0000, 0, 0).unwrap().flags,
            O_LARGEFILE
        );
    }

    #[test]
    fn names() {
        assert_eq!(getname(b""), Err(Errno::ENOENT));
        assert_eq!(getname(b"\0abc"), Err(Errno::ENOENT));
        assert_eq!(getname(b"ab\0c"), Ok(&b"ab"[..]));
        assert_eq!(getname(&[b'a'; 4096]), Err(Errno::ENAMETOOLONG));
        assert_eq!(getname(&[b'a'; 4095]).map(|p| p.len()), Ok(4095));
    }

    #[test]
    fn failed_open_gives_the_fd_back() {
        let t = task();
        assert_eq!(t.open(b"/nonexistent", 0, 0), Err(Errno::ENOENT));
        assert_eq!(t.files().next_reserved_fd(0), None);
        assert_eq!(t.open(b"/dev/null", 0, 0), Ok(0));
        assert_eq!(t.open(b"/nonexistent", 0, 0), Err(Errno::ENOENT));
        assert_eq!(t.open(b"/dev/zero", 0, 0), Ok(1));
    }

    #[test]
    fn emfile_before_the_namespace_is_asked() {
        let t = Task::with_rlimit(MemFs::new(), (2, 2));
        t.open(b"/dev/null", 0, 0).unwrap();
        t.open(b"/dev/null", 0, 0).unwrap();
        assert_eq!(t.open(b"/nonexistent", 0, 0), Err(Errno::EMFILE));
        assert_eq!(
            t.open(b"", 0, 0),
            Err(Errno::ENOENT),
            "the name is checked first"
        );
        assert_eq!(
            t.open(b"/x", (O_CREAT | O_DIRECTORY) as i32, 0),
            Err(Errno::EINVAL)
        );
    }

    #[test]
    fn dirfd_and_cwd() {
        let mut t = task();
        t.mkdir(b"/tmp/d", 0o755).unwrap();
        let d = t.open(b"/tmp/d", (O_PATH | O_DIRECTORY) as i32, 0).unwrap();
        let f = t.openat(d, b"f", (O_CREAT | O_RDWR) as i32, 0o600).unwrap();
        assert!(t.open(b"/tmp/d/f", 0, 0).is_ok());
        assert_eq!(t.openat(f, b"x", 0, 0), Err(Errno::ENOTDIR));
        assert_eq!(t.openat(99, b"x", 0, 0), Err(Errno::EBADF));
        assert!(
            t.openat(99, b"/tmp/d/f", 0, 0).is_ok(),
            "absolute ignores dirfd"
        );
        assert_eq!(t.open(b"f", 0, 0), Err(Errno::ENOENT));
        t.chdir(b"/tmp/d").unwrap();
        assert!(t.open(b"f", 0, 0).is_ok());
        assert_eq!(t.chdir(b"/tmp/d/f"), Err(Errno::ENOTDIR));
        assert_eq!(t.fchdir(f), Err(Errno::ENOTDIR));
        t.fchdir(d).unwrap();
        assert!(t.open(b"./f", 0, 0).is_ok());
        t.chdir(b"/").unwrap();
        assert_eq!(t.unlink(b"tmp/d/f"), Ok(()));
        assert_eq!(t.unlinkat(AT_FDCWD, b"tmp/d", 1), Err(Errno::EINVAL));
        assert_eq!(t.rmdir(b"tmp/d"), Ok(()));
        t.close(d).unwrap();
        assert_eq!(t.close(d), Err(Errno::EBADF));
        assert_eq!(t.close(-1), Err(Errno::EBADF));
    }

    #[test]
    fn created_and_umask() {
        let t = task();
        assert_eq!(t.umask(0o077), 0o022);
        let fd = t.open(b"/tmp/n", (O_CREAT | O_RDWR) as i32, 0o666).unwrap();
        assert_eq!(t.fstat(fd).unwrap().mode, S_IFREG | 0o600);
        assert_eq!(t.fcntl(fd, F_CREATED_QUERY, 0), Ok(1));
        let fd2 = t.open(b"/tmp/n", (O_CREAT | O_RDWR) as i32, 0o666).unwrap();
        assert_eq!(t.fcntl(fd2, F_CREATED_QUERY, 0), Ok(0));
        assert_eq!(t.creat(b"/tmp/c", 0o644).map(|_| ()), Ok(()));
    }
}

//! `fcntl` and the dup family, `close_range` (fs/fcntl.c, fs/file.c). The descriptor-table
//! commands are the core table's; this layer adds the open-file ones (`F_GETFL`, `F_SETFL`,
//! `F_CREATED_QUERY`, the pipe sizes) and the `O_PATH` rule.

use crate::file::File;
use crate::pipe::PipeEnd;
use crate::task::Task;
use crate::uapi::*;
use fdtable::{Errno, FdPayload};

/// `check_fcntl_cmd`: the commands an `O_PATH` descriptor allows; others are `EBADF`.
fn check_fcntl_cmd(cmd: i32) -> bool {
    matches!(
        cmd,
        F_DUPFD | F_DUPFD_CLOEXEC | F_DUPFD_QUERY | F_CREATED_QUERY | F_GETFD | F_SETFD | F_GETFL
    )
}

/// `setfl`: only `SETFL_MASK` (`O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME`) changes;
/// `O_ASYNC` changes through the file's `fasync`, and only if it has one. `EINVAL` for
/// `O_DIRECT` on a file that cannot do it (pipes can: packet mode).
fn setfl(file: &File, arg: u32) -> Result<(), Errno> {
    if file.file_type() != S_IFIFO && arg & O_DIRECT != 0 && file.f_mode() & FMODE_CAN_ODIRECT == 0
    {
        return Err(Errno::EINVAL);
    }
    file.ops().check_flags(file, arg)?;
    let mut mask = SETFL_MASK;
    if (arg ^ file.flags()) & O_ASYNC != 0
        && let Some(r) = file.ops().fasync(file, arg & O_ASYNC != 0)
    {
        r?;
        mask |= O_ASYNC;
    }
    file.update_flags(mask, arg);
    Ok(())
}

impl<P: FdPayload> Task<P> {
    /// `fcntl(fd, cmd, arg)`.
    ///
    /// - `F_DUPFD` / `F_DUPFD_CLOEXEC`: the lowest free fd `>= arg`; `EINVAL` if `arg` is at
    ///   or past `RLIMIT_NOFILE`, `EMFILE` if none is free.
    /// - `F_GETFD` / `F_SETFD`: the close-on-exec bit (`FD_CLOEXEC`; other bits ignored).
    /// - `F_GETFL`: access mode and status flags. `F_SETFL`: see `setfl` (Linux's
    ///   `SETFL_MASK`).
    /// - `F_DUPFD_QUERY`: 1 if `arg` refers to the same open file, 0 if not, `EBADF` if `arg`
    ///   is not open. `F_CREATED_QUERY`: 1 if the open that made the file created it.
    /// - `F_GETPIPE_SZ` / `F_SETPIPE_SZ`: pipes only (`EBADF` otherwise).
    /// - Any other command: `EINVAL`. On an `O_PATH` fd, anything but the dup, query, `F_GETFD`,
    ///   `F_SETFD` and `F_GETFL` commands is `EBADF`.
    ///
    /// `arg` is an `unsigned long`; the commands above use its low 32 bits as an `int`.
    ///
    /// # References
    ///
    /// [fcntl(2)](https://man7.org/linux/man-pages/man2/fcntl.2.html)
    pub fn fcntl(&self, fd: i32, cmd: i32, arg: u64) -> Result<i64, Errno> {
        let f = self.fdget_raw(fd)?;
        if f.f_mode() & FMODE_PATH != 0 && !check_fcntl_cmd(cmd) {
            return Err(Errno::EBADF);
        }
        let argi = arg as u32;
        let fdu = fd as u32;
        match cmd {
            F_DUPFD | F_DUPFD_CLOEXEC => self
                .files
                .fcntl_dupfd(fdu, arg, cmd == F_DUPFD_CLOEXEC, self.nofile())
                .map(i64::from),
            F_DUPFD_QUERY => self.files.dupfd_query(fdu, argi).map(i64::from),
            F_CREATED_QUERY => Ok(i64::from(f.f_mode() & FMODE_CREATED != 0)),
            F_GETFD => self.files.get_close_on_exec(fdu).map(i64::from),
            F_SETFD => self
                .files
                .set_close_on_exec(fdu, argi & FD_CLOEXEC != 0)
                .map(|()| 0),
            F_GETFL => Ok(i64::from(f.flags())),
            F_SETFL => setfl(&f, argi).map(|()| 0),
            F_GETPIPE_SZ | F_SETPIPE_SZ => {
                let pipe = f.ops_as::<PipeEnd>().ok_or(Errno::EBADF)?;
                if cmd == F_GETPIPE_SZ {
                    Ok(pipe.pipe_size() as i64)
                } else {
                    pipe.set_pipe_size(argi).map(|n| n as i64)
                }
            }
            _ => Err(Errno::EINVAL),
        }
    }

    /// `dup(fd)` — the lowest free fd now refers to `fd`'s open file (`O_PATH` allowed),
    /// close-on-exec clear. `EBADF`, `EMFILE`.
    ///
    /// # References
    ///
    /// [dup(2)](https://man7.org/linux/man-pages/man2/dup.2.html)
    pub fn dup(&self, fd: i32) -> Result<i32, Errno> {
        self.files.dup(fd as u32, self.nofile()).map(|fd| fd as i32)
    }

    /// `dup2(oldfd, newfd)` — `newfd` now refers to `oldfd`'s file; what `newfd` referred to
    /// is closed (flushed, error ignored). `dup2(fd, fd)` checks `fd` and returns it. `EBADF`
    /// for a bad `oldfd` or a `newfd` at or past `RLIMIT_NOFILE`; `EBUSY` if `newfd` is
    /// reserved by an open in progress on another thread.
    pub fn dup2(&mut self, oldfd: i32, newfd: i32) -> Result<i32, Errno> {
        let nofile = self.nofile();
        self.files
            .dup2(oldfd as u32, newfd as u32, nofile)
            .map(|fd| fd as i32)
    }

    /// `dup3(oldfd, newfd, flags)` — [`dup2`](Self::dup2) with `O_CLOEXEC` as the only flag
    /// (`EINVAL` otherwise) and `EINVAL` when `oldfd == newfd`.
    pub fn dup3(&mut self, oldfd: i32, newfd: i32, flags: u32) -> Result<i32, Errno> {
        let nofile = self.nofile();
        self.files
            .dup3(oldfd as u32, newfd as u32, flags, nofile)
            .map(|fd| fd as i32)
    }

    /// `close_range(first, last, flags)` — closes (or, with `CLOSE_RANGE_CLOEXEC`, marks
    /// close-on-exec) every fd in `first..=last`; `CLOSE_RANGE_UNSHARE` first gives this task
    /// a private table. `EINVAL` for other flags or `first > last`.
    ///
    /// # References
    ///
    /// [close_range(2)](https://man7.org/linux/man-pages/man2/close_range.2.html)
    pub fn close_range(&mut self, first: u32, last: u32, flags: u32) -> Result<(), Errno> {
        self.files.close_range(first, last, flags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemFs;

    fn o(f: u32) -> i32 {
        f as i32
    }

    #[test]
    fn getfl_setfl() {
        let t = Task::new(MemFs::new());
        let fd = t
            .open(
                b"/tmp/f",
                o(O_CREAT | O_WRONLY | O_CLOEXEC | O_TRUNC),
                0o644,
            )
            .unwrap();
        assert_eq!(t.fcntl(fd, F_GETFL, 0), Ok((O_WRONLY | O_LARGEFILE) as i64));
        assert_eq!(t.fcntl(fd, F_GETFD, 0), Ok(1));
        assert_eq!(
            t.fcntl(
                fd,
                F_SETFL,
                u64::from(O_RDWR | O_APPEND | O_NONBLOCK | O_SYNC | O_ASYNC)
            ),
            Ok(0)
        );
        assert_eq!(
            t.fcntl(fd, F_GETFL, 0),
            Ok((O_WRONLY | O_LARGEFILE | O_APPEND | O_NONBLOCK) as i64),
            "only SETFL_MASK changes"
        );
        assert_eq!(
            t.fcntl(fd, F_SETFL, u64::from(O_DIRECT)),
            Ok(0),
            "tmpfs-like"
        );
        let null = t.open(b"/dev/null", 0, 0).unwrap();
        assert_eq!(
            t.fcntl(null, F_SETFL, u64::from(O_DIRECT)),
            Err(Errno::EINVAL)
        );
        assert_eq!(t.fcntl(fd, F_SETFL, 0), Ok(0));
        assert_eq!(t.fcntl(fd, F_GETFL, 0), Ok((O_WRONLY | O_LARGEFILE) as i64));
        assert_eq!(t.fcntl(fd, 9999, 0), Err(Errno::EINVAL));
        assert_eq!(t.fcntl(fd, F_SETFD, 0xFF), Ok(0));
        assert_eq!(t.fcntl(fd, F_GETFD, 0), Ok(1));
        assert_eq!(t.fcntl(fd, F_GETPIPE_SZ, 0), Err(Errno::EBADF));
    }

    #[test]
    fn dup_family_and_queries() {
        let mut t = Task::with_rlimit(MemFs::new(), (16, 16));
        let fd = t.open(b"/dev/null", 0, 0).unwrap();
        assert_eq!(t.fcntl(fd, F_DUPFD, 5), Ok(5));
        assert_eq!(t.fcntl(fd, F_DUPFD_CLOEXEC, 5), Ok(6));
        assert_eq!(t.fcntl(6, F_GETFD, 0), Ok(1));
        assert_eq!(t.fcntl(fd, F_DUPFD, 16), Err(Errno::EINVAL));
        assert_eq!(t.fcntl(fd, F_DUPFD, u64::MAX), Err(Errno::EINVAL));
        assert_eq!(t.fcntl(fd, F_DUPFD_QUERY, 5), Ok(1));
        let other = t.open(b"/dev/null", 0, 0).unwrap();
        assert_eq!(t.fcntl(fd, F_DUPFD_QUERY, other as u64), Ok(0));
        assert_eq!(t.fcntl(fd, F_DUPFD_QUERY, 15), Err(Errno::EBADF));
        assert_eq!(t.dup2(fd, 15), Ok(15));
        assert_eq!(t.dup2(fd, 16), Err(Errno::EBADF));
        assert_eq!(t.dup2(fd, fd), Ok(fd));
        assert_eq!(t.dup3(fd, fd, 0), Err(Errno::EINVAL));
        assert_eq!(t.dup3(fd, 14, O_CLOEXEC), Ok(14));
        assert_eq!(t.dup3(fd, 13, 1), Err(Errno::EINVAL));
        assert_eq!(t.dup(-1), Err(Errno::EBADF));
        t.close_range(5, u32::MAX, 0).unwrap();
        assert_eq!(t.fcntl(5, F_GETFD, 0), Err(Errno::EBADF));
        assert_eq!(t.close_range(3, 2, 0), Err(Errno::EINVAL));
    }

    #[test]
    fn o_path_rules() {
        let mut t = Task::new(MemFs::new());
        let p = t.open(b"/tmp", o(O_PATH | O_RDWR | O_APPEND), 0).unwrap();
        assert_eq!(t.fcntl(p, F_GETFL, 0), Ok(O_PATH as i64));
        assert_eq!(t.fcntl(p, F_SETFL, 0), Err(Errno::EBADF));
        assert_eq!(t.fcntl(p, 9999, 0), Err(Errno::EBADF));
        assert_eq!(t.fcntl(p, F_SETFD, 1), Ok(0));
        assert_eq!(t.fcntl(p, F_GETFD, 0), Ok(1));
        let d = t.fcntl(p, F_DUPFD, 0).unwrap() as i32;
        assert_eq!(t.read(d, &mut [0; 4]), Err(Errno::EBADF));
        assert_eq!(t.lseek(d, 0, SEEK_SET), Err(Errno::EBADF));
        assert!(t.fstat(d).is_ok());
        assert_eq!(t.dup(p).map(|_| ()), Ok(()));
        assert_eq!(t.close(p), Ok(()));
    }

    #[test]
    fn pipe_sizes() {
        let t = Task::new(MemFs::new());
        let [r, w] = t.pipe2(0).unwrap();
        assert_eq!(t.fcntl(r, F_GETPIPE_SZ, 0), Ok(65536));
        assert_eq!(t.fcntl(w, F_SETPIPE_SZ, 100_000), Ok(131072));
        assert_eq!(t.fcntl(r, F_GETPIPE_SZ, 0), Ok(131072));
        assert_eq!(
            t.fcntl(w, F_SETFL, u64::from(O_DIRECT)),
            Ok(0),
            "packet mode"
        );
    }
}

//! [`Task`]: the process context the syscalls run in — its descriptor table handle
//! (`current->files`), its process-wide resource limits (`current->signal->rlim`), its current
//! directory and umask (`current->fs`) and its file-system [`Namespace`] — and the process
//! operations: fork, clone, unshare, exec (kernel/fork.c, fs/exec.c).
//!
//! The syscalls themselves are `impl Task` blocks in the modules named after where the kernel
//! keeps them: [`open`](crate::open) (fs/open.c, fs/namei.c), [`read_write`](crate::read_write)
//! (fs/read_write.c), [`ioctl`](crate::ioctl) (fs/ioctl.c), [`fcntl`](crate::fcntl)
//! (fs/fcntl.c, fs/file.c), [`pipe`](crate::pipe), [`unix`](crate::unix),
//! [`eventfd`](crate::eventfd), [`select`](crate::select).

use crate::file::File;
use crate::namespace::Namespace;
use crate::uapi::*;
use fdtable::{Errno, Fd, FdPayload, FileRef, Files};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// The default `RLIMIT_NOFILE`: soft 1024, hard 4096, as Linux starts `init`.
pub const DEFAULT_NOFILE: (u64, u64) = (1024, 4096);

/// `signal_struct`'s part this layer needs: the process's `RLIMIT_NOFILE`, shared by its
/// threads.
#[derive(Debug)]
pub struct SignalStruct {
    nofile_cur: AtomicU64,
    nofile_max: AtomicU64,
    /// Serialises `setrlimit` (the kernel's `task_lock(group_leader)`); readers do not take it.
    update: Mutex<()>,
}

impl SignalStruct {
    fn new((cur, max): (u64, u64)) -> Arc<SignalStruct> {
        Arc::new(SignalStruct {
            nofile_cur: AtomicU64::new(cur),
            nofile_max: AtomicU64::new(max),
            update: Mutex::new(()),
        })
    }

    fn get(&self) -> (u64, u64) {
        // ORDERING: Relaxed both; limits are independent values read at the start of a call,
        // as the kernel's `rlimit()` reads them with READ_ONCE.
        (
            self.nofile_cur.load(Ordering::Relaxed),
            self.nofile_max.load(Ordering::Relaxed),
        )
    }
}

/// `fs_struct`: the current directory and the umask, shared by `CLONE_FS`.
#[derive(Debug)]
pub(crate) struct FsStruct {
    /// `None`: the namespace's root.
    pub(crate) cwd: RwLock<Option<FileRef<File>>>,
    umask: AtomicU32,
}

impl FsStruct {
    fn copy(&self) -> Arc<FsStruct> {
        Arc::new(FsStruct {
            cwd: RwLock::new(self.cwd.read().unwrap_or_else(|p| p.into_inner()).clone()),
            umask: AtomicU32::new(self.umask()),
        })
    }

    pub(crate) fn umask(&self) -> u32 {
        // ORDERING: Relaxed; a plain value, read at the start of a create.
        self.umask.load(Ordering::Relaxed)
    }
}

/// A task: one thread of a guest process, as the syscalls see it.
///
/// A `Task` is `Send` but not `Sync`, like its [`Files`] handle: each thread of a guest
/// process has its own `Task` ([`Task::clone_thread`]) sharing the table, limits and current
/// directory with its siblings. Calls that can close a descriptor or share the table take
/// `&mut self`; the rest take `&self`.
///
/// Descriptor arguments are `i32` as in C; a negative one is a huge `unsigned int` to the
/// kernel and gets `EBADF`.
///
/// `P` is the per-fd payload of its table ([`FdPayload`]: rights, a tag of the embedder's,
/// copied by `dup` and `fork` as the kernel copies per-fd state), none by default. Make a
/// task with one through [`Task::with_fd_payload`], and read or set it through
/// [`Task::files`] ([`Files::fd_payload`], [`Files::fdget_with_payload`],
/// [`Files::install_with`], ...): every syscall here works the same whatever `P` is.
///
/// ```compile_fail
/// fn shared_between_threads<T: Sync>() {}
/// shared_between_threads::<fdtable_vfs::Task>(); // a Task is one thread's
/// ```
pub struct Task<P: FdPayload = ()> {
    pub(crate) files: Files<File, P>,
    pub(crate) signal: Arc<SignalStruct>,
    pub(crate) fs: Arc<FsStruct>,
    pub(crate) ns: Arc<dyn Namespace>,
}

impl Task {
    /// A new process with an empty descriptor table, [`DEFAULT_NOFILE`], umask 022, its
    /// current directory at the root of `ns`.
    pub fn new(ns: Arc<dyn Namespace>) -> Task {
        Task::with_rlimit(ns, DEFAULT_NOFILE)
    }

    /// As [`Task::new`] with `RLIMIT_NOFILE` = (`soft`, `hard`).
    pub fn with_rlimit(ns: Arc<dyn Namespace>, nofile: (u64, u64)) -> Task {
        Task::with_fd_payload(ns, nofile)
    }
}

impl<P: FdPayload> Task<P> {
    /// As [`Task::with_rlimit`], for a table that keeps a `P` beside each descriptor
    /// (`Task::<u64>::with_fd_payload(ns, DEFAULT_NOFILE)`); a new descriptor's is
    /// `P::default()` unless installed with one.
    pub fn with_fd_payload(ns: Arc<dyn Namespace>, nofile: (u64, u64)) -> Task<P> {
        Task {
            files: Files::new(),
            signal: SignalStruct::new(nofile),
            fs: Arc::new(FsStruct {
                cwd: RwLock::new(None),
                umask: AtomicU32::new(0o022),
            }),
            ns,
        }
    }

    /// The descriptor table handle (for the table's own operations and introspection).
    pub fn files(&self) -> &Files<File, P> {
        &self.files
    }

    /// The descriptor table handle, exclusively: for the table's `&mut` operations that have
    /// no syscall of their own here ([`Files::replace_fd`], [`Files::renumber`]). The handle
    /// may be used like any other; replacing it with another `Files` gives this task that
    /// table.
    pub fn files_mut(&mut self) -> &mut Files<File, P> {
        &mut self.files
    }

    /// The namespace paths resolve in.
    pub fn namespace(&self) -> &Arc<dyn Namespace> {
        &self.ns
    }

    /// The soft `RLIMIT_NOFILE` now: the bound every descriptor allocation uses.
    #[inline]
    pub fn nofile(&self) -> u64 {
        // ORDERING: Relaxed; see `SignalStruct::get`.
        self.signal.nofile_cur.load(Ordering::Relaxed)
    }

    /// `getrlimit(RLIMIT_NOFILE)`: (soft, hard).
    pub fn getrlimit_nofile(&self) -> (u64, u64) {
        self.signal.get()
    }

    /// `setrlimit(RLIMIT_NOFILE)` for the whole process: `EINVAL` if `soft > hard`, `EPERM`
    /// if `hard > nr_open`. The layer has no credentials, so raising the hard limit is allowed
    /// (the embedder decides who may call this).
    pub fn setrlimit_nofile(&self, soft: u64, hard: u64) -> Result<(), Errno> {
        if soft > hard {
            return Err(Errno::EINVAL);
        }
        if hard > fdtable::nr_open() as u64 {
            return Err(Errno::EPERM);
        }
        let _g = self.signal.update.lock().unwrap_or_else(|p| p.into_inner());
        // ORDERING: Relaxed both; see `SignalStruct::get`. The mutex keeps two setrlimits from
        // interleaving their stores.
        self.signal.nofile_cur.store(soft, Ordering::Relaxed);
        self.signal.nofile_max.store(hard, Ordering::Relaxed);
        Ok(())
    }

    /// `umask(mask)`: sets the creation mask, returns the old one.
    pub fn umask(&self, mask: u32) -> u32 {
        // ORDERING: Relaxed; a plain value.
        self.fs.umask.swap(mask & 0o777, Ordering::Relaxed)
    }

    /// `fork()`: a new process with a copy of the table (`dup_fd`: the same open files, one
    /// more reference each, so positions and status flags are shared), a copy of the limits and
    /// of the current directory, and the same namespace.
    pub fn fork(&self) -> Result<Task<P>, Errno> {
        Ok(Task {
            files: self.files.fork()?,
            signal: SignalStruct::new(self.signal.get()),
            fs: self.fs.copy(),
            ns: self.ns.clone(),
        })
    }

    /// A new thread of this process: `clone(CLONE_VM | CLONE_FS | CLONE_FILES |
    /// CLONE_SIGHAND | CLONE_THREAD)`.
    pub fn clone_thread(&mut self) -> Task<P> {
        Task {
            files: self.files.share(),
            signal: self.signal.clone(),
            fs: self.fs.clone(),
            ns: self.ns.clone(),
        }
    }

    /// `clone(flags)`: `CLONE_FILES` shares the table (otherwise it is copied),
    /// `CLONE_FS` the current directory and umask, `CLONE_THREAD` the limits. `EINVAL` for
    /// `CLONE_THREAD` without `CLONE_SIGHAND`, or `CLONE_SIGHAND` without `CLONE_VM`, as
    /// `copy_process`. Other flags are accepted and mean nothing here.
    pub fn clone(&mut self, flags: u64) -> Result<Task<P>, Errno> {
        if flags & CLONE_THREAD != 0 && flags & CLONE_SIGHAND == 0 {
            return Err(Errno::EINVAL);
        }
        if flags & CLONE_SIGHAND != 0 && flags & CLONE_VM == 0 {
            return Err(Errno::EINVAL);
        }
        let files = if flags & CLONE_FILES != 0 {
            self.files.share()
        } else {
            self.files.fork()?
        };
        Ok(Task {
            files,
            signal: if flags & CLONE_THREAD != 0 {
                self.signal.clone()
            } else {
                SignalStruct::new(self.signal.get())
            },
            fs: if flags & CLONE_FS != 0 {
                self.fs.clone()
            } else {
                self.fs.copy()
            },
            ns: self.ns.clone(),
        })
    }

    /// `unshare(flags)`: `CLONE_FILES` gives this task a private copy of a shared table,
    /// `CLONE_FS` a private current directory and umask. `EINVAL` for any other flag (other
    /// namespaces are not modelled).
    pub fn unshare(&mut self, flags: u64) -> Result<(), Errno> {
        if flags & !(CLONE_FILES | CLONE_FS) != 0 {
            return Err(Errno::EINVAL);
        }
        if flags & CLONE_FILES != 0 {
            self.files.unshare()?;
        }
        if flags & CLONE_FS != 0 && Arc::strong_count(&self.fs) > 1 {
            self.fs = self.fs.copy();
        }
        Ok(())
    }

    /// The descriptor part of `execve`: unshare the table, then close every close-on-exec
    /// descriptor (flushing each). Drop the other threads' tasks first (`de_thread`), so a
    /// table shared only with them is not copied needlessly.
    pub fn exec(&mut self) -> Result<(), Errno> {
        self.files.exec()
    }

    /// `fdget`: the file at `fd`, `EBADF` if there is none or it is an `O_PATH` file.
    #[inline]
    pub fn fdget(&self, fd: i32) -> Result<Fd<'_, File>, Errno> {
        let f = self.files.fdget(fd as u32).ok_or(Errno::EBADF)?;
        if f.f_mode() & FMODE_PATH != 0 {
            return Err(Errno::EBADF);
        }
        Ok(f)
    }

    /// `fdget_raw`: the file at `fd`, `O_PATH` files included; `EBADF` if there is none.
    #[inline]
    pub fn fdget_raw(&self, fd: i32) -> Result<Fd<'_, File>, Errno> {
        self.files.fdget(fd as u32).ok_or(Errno::EBADF)
    }

    /// `FD_ADD`: installs `file` at the lowest free descriptor (`O_CLOEXEC` in `flags` sets
    /// close-on-exec). `EMFILE` if the table is full (and `file` is released).
    pub fn install(&self, file: File, flags: u32) -> Result<i32, Errno> {
        let slot = self
            .files
            .get_unused_fd_flags(flags & O_CLOEXEC, self.nofile())?;
        Ok(slot.install(FileRef::new(file)) as i32)
    }

    /// Reserves two descriptors, builds two files, installs both: the shape of `pipe2`,
    /// `socketpair`. On `EMFILE` nothing is built.
    pub(crate) fn install_pair(
        &self,
        flags: u32,
        make: impl FnOnce() -> (File, File),
    ) -> Result<[i32; 2], Errno> {
        let nofile = self.nofile();
        let a = self.files.get_unused_fd_flags(flags & O_CLOEXEC, nofile)?;
        let b = self.files.get_unused_fd_flags(flags & O_CLOEXEC, nofile)?;
        let (fa, fb) = make();
        Ok([
            a.install(FileRef::new(fa)) as i32,
            b.install(FileRef::new(fb)) as i32,
        ])
    }
}

impl<P: FdPayload> std::fmt::Debug for Task<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task")
            .field("files", &self.files)
            .field("nofile", &self.getrlimit_nofile())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{FileOperations, Kstat};
    use crate::{File, MemFs};
    use std::sync::atomic::AtomicUsize;

    /// A file that counts its flushes (every close) and its release (the last reference).
    struct Counted {
        flushes: Arc<AtomicUsize>,
        releases: Arc<AtomicUsize>,
    }

    impl FileOperations for Counted {
        fn fmode(&self) -> u32 {
            0
        }
        fn getattr(&self) -> Kstat {
            Kstat::default()
        }
        fn flush(&self, _file: &File) -> Result<(), Errno> {
            // ORDERING: Relaxed; a test counter read after the closes returned.
            self.flushes.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            // ORDERING: Relaxed; see `flush`.
            self.releases.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counted(t: &Task, flags: u32) -> (i32, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let (f, r) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let ops = Counted {
            flushes: f.clone(),
            releases: r.clone(),
        };
        let fd = t.install(File::new(O_RDWR, Arc::new(ops)), flags).unwrap();
        (fd, f, r)
    }

    fn n(c: &AtomicUsize) -> usize {
        // ORDERING: Relaxed; see `Counted::flush`.
        c.load(Ordering::Relaxed)
    }

    #[test]
    fn flush_on_every_close_release_on_the_last() {
        let mut t = Task::new(MemFs::new());
        let (fd, flushes, releases) = counted(&t, 0);
        let d1 = t.dup(fd).unwrap();
        let d2 = t.dup(fd).unwrap();
        let d3 = t.dup(fd).unwrap();
        t.close(d1).unwrap();
        assert_eq!((n(&flushes), n(&releases)), (1, 0));
        let null = t.open(b"/dev/null", 0, 0).unwrap();
        t.dup2(null, d2).unwrap(); // displaces a reference: flushed
        assert_eq!((n(&flushes), n(&releases)), (2, 0));
        t.close_range(d3 as u32, d3 as u32, 0).unwrap();
        assert_eq!((n(&flushes), n(&releases)), (3, 0));
        t.fcntl(fd, F_SETFD, 1).unwrap();
        t.exec().unwrap(); // close-on-exec
        assert_eq!((n(&flushes), n(&releases)), (4, 1));
        assert_eq!(t.fcntl(fd, F_GETFD, 0), Err(Errno::EBADF));
        assert_eq!(t.fcntl(null, F_GETFD, 0), Ok(0), "kept across exec");
    }

    #[test]
    fn clone_shares_or_copies_the_table() {
        let mut t = Task::new(MemFs::new());
        let mut sib = t
            .clone(CLONE_VM | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD)
            .unwrap();
        let fd = sib.open(b"/dev/null", 0, 0).unwrap();
        assert!(
            t.fcntl(fd, F_GETFD, 0).is_ok(),
            "CLONE_FILES shares the table"
        );
        let child = t.clone(0).unwrap();
        let fd2 = t.open(b"/dev/null", 0, 0).unwrap();
        assert_eq!(
            child.fcntl(fd2, F_GETFD, 0),
            Err(Errno::EBADF),
            "copied at clone"
        );
        assert!(child.fcntl(fd, F_GETFD, 0).is_ok());
        sib.unshare(CLONE_FILES).unwrap();
        let fd3 = t.open(b"/dev/null", 0, 0).unwrap();
        assert_eq!(sib.fcntl(fd3, F_GETFD, 0), Err(Errno::EBADF), "unshared");
        assert_eq!(t.clone(CLONE_THREAD).map(|_| ()), Err(Errno::EINVAL));
        assert_eq!(t.clone(CLONE_SIGHAND).map(|_| ()), Err(Errno::EINVAL));
        assert_eq!(t.unshare(CLONE_VM), Err(Errno::EINVAL));
    }

    #[test]
    fn rlimit_belongs_to_the_process() {
        let mut t = Task::new(MemFs::new());
        let sib = t.clone_thread();
        let child = t.fork().unwrap();
        assert_eq!(t.setrlimit_nofile(2, 2), Ok(()));
        assert_eq!(sib.getrlimit_nofile(), (2, 2), "threads share it");
        assert_eq!(child.getrlimit_nofile(), DEFAULT_NOFILE, "a fork copied it");
        t.open(b"/dev/null", 0, 0).unwrap();
        sib.open(b"/dev/null", 0, 0).unwrap();
        assert_eq!(t.open(b"/dev/null", 0, 0), Err(Errno::EMFILE));
        assert_eq!(sib.pipe2(0), Err(Errno::EMFILE));
        assert_eq!(t.fcntl(0, F_DUPFD, 2), Err(Errno::EINVAL));
        assert_eq!(t.setrlimit_nofile(5, 4), Err(Errno::EINVAL));
        assert_eq!(t.setrlimit_nofile(5, u64::MAX), Err(Errno::EPERM));
        assert!(child.open(b"/dev/null", 0, 0).is_ok());
    }

    #[test]
    fn files_mut_reaches_the_tables_mut_operations() {
        let mut t = Task::new(MemFs::new());
        let (fd, flushes, releases) = counted(&t, 0);
        let null = t.open(b"/dev/null", 0, 0).unwrap();
        let file = t.files().fget(null as u32).unwrap();
        let nofile = t.nofile();
        // replace_fd over an open fd closes what was there, as dup2 does.
        assert_eq!(
            t.files_mut().replace_fd(fd as u32, file, O_CLOEXEC, nofile),
            Ok(fd as u32)
        );
        assert_eq!((n(&flushes), n(&releases)), (1, 1));
        assert_eq!(t.fcntl(fd, F_GETFD, 0), Ok(1));
        assert_eq!(t.files_mut().renumber(fd as u32, 9, nofile), Ok(9));
        assert_eq!(t.fcntl(fd, F_GETFD, 0), Err(Errno::EBADF));
    }

    #[test]
    fn cwd_and_umask_follow_clone_fs() {
        let mut t = Task::new(MemFs::new());
        let mut shared = t.clone(CLONE_FS | CLONE_FILES).unwrap();
        let copy = t.fork().unwrap();
        t.chdir(b"/tmp").unwrap();
        t.umask(0o077);
        assert!(shared.open(b"x", (O_CREAT | O_RDWR) as i32, 0o666).is_ok());
        assert_eq!(
            t.fstat(t.open(b"/tmp/x", 0, 0).unwrap()).unwrap().mode & 0o777,
            0o600
        );
        assert_eq!(
            copy.open(b"x", 0, 0),
            Err(Errno::ENOENT),
            "fork copied the old cwd"
        );
        shared.unshare(CLONE_FS).unwrap();
        t.chdir(b"/dev").unwrap();
        assert!(shared.open(b"x", 0, 0).is_ok(), "unshared: still in /tmp");
    }

    /// A task with a per-fd payload: every syscall runs as on a task without one, and the
    /// payload follows the kernel's rules for per-fd state (copied by dup, F_DUPFD, dup2 and
    /// fork, moved by renumber, 0 for a new descriptor).
    #[test]
    fn syscalls_carry_the_payload() {
        let mut t = Task::<u64>::with_fd_payload(MemFs::new(), DEFAULT_NOFILE);
        let fd = t.open(b"/dev/null", O_RDWR as i32, 0).unwrap();
        assert_eq!(t.files().fd_payload(fd as u32), Ok(0));
        t.files().set_fd_payload(fd as u32, 0b101).unwrap();
        let d = t.dup(fd).unwrap();
        let f = t.fcntl(fd, F_DUPFD, 10).unwrap() as i32;
        assert_eq!(t.dup2(fd, 7), Ok(7));
        let child = t.fork().unwrap();
        for x in [fd, d, f, 7] {
            assert_eq!(t.files().fd_payload(x as u32), Ok(0b101), "fd {x}");
            assert_eq!(
                child.files().fd_payload(x as u32),
                Ok(0b101),
                "fork, fd {x}"
            );
        }
        assert_eq!(t.write(d, b"x"), Ok(1));
        assert_eq!(
            t.files_mut().renumber(d as u32, 20, DEFAULT_NOFILE.0),
            Ok(20)
        );
        assert_eq!(t.files().fd_payload(20), Ok(0b101));
        let (file, rights) = t.files().fdget_with_payload(20).unwrap();
        assert_eq!(rights, 0b101);
        drop(file);
        t.close(20).unwrap();
        assert_eq!(t.files().fd_payload(20), Err(Errno::EBADF));
    }
}

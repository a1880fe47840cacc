//! Tasks and the descriptor syscalls, written the way fs/open.c, fs/file.c and fs/fcntl.c
//! write them, over [`fdtable::Files`].
//!
//! Each task holds its own handle on a table (`current->files`): `fork` gives the child a copy,
//! `clone(CLONE_FILES)` another handle on the same table. Descriptor arguments are `u32`, as
//! the kernel's `unsigned int fd`; [`Task::syscall`] shows how raw register values become those
//! (the low 32 bits, so a C `-1` is `0xffffffff` and gets `EBADF`). Every error is a Linux
//! errno with Linux's number.

use crate::files::{
    Console, FMODE_READ, FMODE_WRITE, KFile, Null, PipeEnd, PipeInode, fmode_from_flags,
};
use crate::spinlock::SpinLock;
use crate::{ConsoleDev, FdRights};
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt::Write as _;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use fdtable::{Errno, FileRef, Files, O_CLOEXEC};

/// A process id.
pub type Pid = u32;

/// A task's descriptor table: trait-object files, per-fd rights, the kernel's spinlock.
pub type FileTable = Files<dyn KFile, FdRights, SpinLock>;

/// `O_RDONLY`.
pub const O_RDONLY: u32 = 0;
/// `O_WRONLY`.
pub const O_WRONLY: u32 = 1;
/// `O_RDWR`.
pub const O_RDWR: u32 = 2;
/// `O_NONBLOCK`.
pub const O_NONBLOCK: u32 = 0o4000;
/// `O_DIRECT`.
pub const O_DIRECT: u32 = 0o40000;

/// `F_DUPFD` (the `fcntl` commands [`Task::fcntl`] handles follow).
pub const F_DUPFD: u32 = 0;
/// `F_GETFD`.
pub const F_GETFD: u32 = 1;
/// `F_SETFD`.
pub const F_SETFD: u32 = 2;
/// `F_GETFL`.
pub const F_GETFL: u32 = 3;
/// `F_DUPFD_CLOEXEC` (`F_LINUX_SPECIFIC_BASE + 6`).
pub const F_DUPFD_CLOEXEC: u32 = 1030;

/// `clone(2)`'s `CLONE_FILES`.
pub const CLONE_FILES: u64 = 0x400;

/// `INR_OPEN_CUR`: the default `RLIMIT_NOFILE`.
pub const DEFAULT_NOFILE: u64 = 1024;

/// x86-64 system call numbers of the calls [`Task::syscall`] dispatches.
pub mod nr {
    /// `close`.
    pub const CLOSE: usize = 3;
    /// `dup`.
    pub const DUP: usize = 32;
    /// `dup2`.
    pub const DUP2: usize = 33;
    /// `fcntl`.
    pub const FCNTL: usize = 72;
    /// `dup3`.
    pub const DUP3: usize = 292;
    /// `close_range`.
    pub const CLOSE_RANGE: usize = 436;
}

/// The kernel: its devices and its id counters.
#[derive(Debug)]
pub struct Kernel {
    console: Arc<ConsoleDev>,
    next_pid: AtomicU32,
    next_ino: AtomicU64,
}

impl Kernel {
    /// A kernel with a console and no tasks.
    pub fn new() -> Arc<Kernel> {
        Arc::new(Kernel {
            console: Arc::new(ConsoleDev::default()),
            next_pid: AtomicU32::new(1),
            next_ino: AtomicU64::new(1),
        })
    }

    /// The console device.
    pub fn console(&self) -> &ConsoleDev {
        &self.console
    }

    fn alloc_pid(&self) -> Pid {
        // ORDERING: Relaxed; a unique number is all that is needed.
        self.next_pid.fetch_add(1, Ordering::Relaxed)
    }

    /// `init`: the first task, with the console open at 0, 1 and 2 — `open("/dev/console",
    /// O_RDWR)`, then `dup(0)` twice, as init/main.c's `console_on_rootfs` does.
    pub fn spawn_init(self: &Arc<Self>) -> Result<Task, Errno> {
        let task = Task {
            pid: self.alloc_pid(),
            files: Files::try_new()?,
            nofile: DEFAULT_NOFILE,
            kernel: self.clone(),
        };
        task.open("/dev/console", O_RDWR)?;
        task.dup(0)?;
        task.dup(0)?;
        Ok(task)
    }

    /// Path lookup and `->open`: builds the open file description for `path`.
    fn open_file(&self, path: &str, flags: u32) -> Result<FileRef<dyn KFile>, Errno> {
        let fmode = fmode_from_flags(flags);
        match path {
            "/dev/console" => FileRef::<dyn KFile>::try_new_unsize(
                Console {
                    dev: self.console.clone(),
                    fmode,
                },
                |f| f,
            ),
            "/dev/null" => FileRef::<dyn KFile>::try_new_unsize(Null { fmode }, |f| f),
            _ => Err(Errno::ENOENT),
        }
    }
}

/// A task: its pid, its handle on a descriptor table, its `RLIMIT_NOFILE`.
pub struct Task {
    pid: Pid,
    files: FileTable,
    nofile: u64,
    kernel: Arc<Kernel>,
}

impl core::fmt::Debug for Task {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Task")
            .field("pid", &self.pid)
            .field("nofile", &self.nofile)
            .field("shared", &self.files.is_shared())
            .finish()
    }
}

impl Task {
    /// The task's pid.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// The task's table (for inspection).
    pub fn files(&self) -> &FileTable {
        &self.files
    }

    /// Whether this task and `other` use the same table (`CLONE_FILES`).
    pub fn shares_table_with(&self, other: &Task) -> bool {
        FileTable::same_table(&self.files, &other.files)
    }

    /// `setrlimit(RLIMIT_NOFILE)`: `EPERM` above `nr_open`, as the kernel answers.
    pub fn set_nofile(&mut self, nofile: u64) -> Result<(), Errno> {
        if nofile > fdtable::nr_open() as u64 {
            return Err(Errno::EPERM);
        }
        self.nofile = nofile;
        Ok(())
    }

    /// `open(path, flags)` — `do_sys_openat2`: reserve the lowest free fd (`EMFILE` first, so
    /// a missing file in a full table is `EMFILE`, as on Linux), build the file (`ENOENT`,
    /// `ENOMEM`), install it. A failed open drops the reservation and gives the fd back; the
    /// half-built file, if any, is released at once.
    pub fn open(&self, path: &str, flags: u32) -> Result<u32, Errno> {
        let slot = self.files.get_unused_fd_flags(flags, self.nofile)?;
        let file = self.kernel.open_file(path, flags)?;
        Ok(slot.install(file))
    }

    /// `open` with rights limited from the start (Capsicum's `openat` + `cap_rights_limit`,
    /// done atomically): the fd is installed with `rights` as its payload, so no other thread
    /// ever sees it with more.
    pub fn open_limited(&self, path: &str, flags: u32, rights: FdRights) -> Result<u32, Errno> {
        let slot = self.files.get_unused_fd_flags(flags, self.nofile)?;
        let file = self.kernel.open_file(path, flags)?;
        Ok(slot.install_with(file, rights))
    }

    /// `pipe2(flags)` — `do_pipe2`: build both ends, reserve two fds, install both; on any
    /// failure nothing stays reserved and both ends are released.
    pub fn pipe2(&self, flags: u32) -> Result<[u32; 2], Errno> {
        if flags & !(O_CLOEXEC | O_NONBLOCK | O_DIRECT) != 0 {
            return Err(Errno::EINVAL);
        }
        // ORDERING: Relaxed; a unique inode number is all that is needed.
        let ino = self.kernel.next_ino.fetch_add(1, Ordering::Relaxed);
        let inode = Arc::new(PipeInode::new(ino));
        let r =
            FileRef::<dyn KFile>::try_new_unsize(PipeEnd::new(inode.clone(), FMODE_READ), |f| f)?;
        let w = FileRef::<dyn KFile>::try_new_unsize(PipeEnd::new(inode, FMODE_WRITE), |f| f)?;
        let r_slot = self.files.get_unused_fd_flags(flags, self.nofile)?;
        let w_slot = self.files.get_unused_fd_flags(flags, self.nofile)?;
        Ok([r_slot.install(r), w_slot.install(w)])
    }

    /// `read(fd, buf)` — the file and the fd's rights in one lookup, then `vfs_read`'s check
    /// (`EBADF` if the file was not opened for reading), then `->read` through the trait
    /// object. A right the fd lacks is `EBADF` too: on Linux, an fd that may not read is
    /// `EBADF` to `read`.
    pub fn read(&self, fd: u32, buf: &mut [u8]) -> Result<usize, Errno> {
        let (file, rights) = self.files.fget_with_payload(fd)?;
        if file.fmode() & FMODE_READ == 0 || !rights.contains(FdRights::READ) {
            return Err(Errno::EBADF);
        }
        file.read(buf)
    }

    /// `write(fd, buf)`, as [`Task::read`].
    pub fn write(&self, fd: u32, buf: &[u8]) -> Result<usize, Errno> {
        let (file, rights) = self.files.fget_with_payload(fd)?;
        if file.fmode() & FMODE_WRITE == 0 || !rights.contains(FdRights::WRITE) {
            return Err(Errno::EBADF);
        }
        file.write(buf)
    }

    /// `close(fd)`: `EBADF` for a free fd; the flush result otherwise (the fd is closed
    /// either way).
    pub fn close(&mut self, fd: u32) -> Result<(), Errno> {
        self.files.close_fd(fd)
    }

    /// `dup(fd)`: the lowest free fd, close-on-exec clear, rights copied.
    pub fn dup(&self, fd: u32) -> Result<u32, Errno> {
        self.files.dup(fd, self.nofile)
    }

    /// `dup2(old, new)`.
    pub fn dup2(&mut self, old: u32, new: u32) -> Result<u32, Errno> {
        self.files.dup2(old, new, self.nofile)
    }

    /// `dup3(old, new, flags)`.
    pub fn dup3(&mut self, old: u32, new: u32, flags: u32) -> Result<u32, Errno> {
        self.files.dup3(old, new, flags, self.nofile)
    }

    /// `fcntl(fd, cmd, arg)` for the descriptor commands. `EBADF` before `EINVAL`: the kernel
    /// looks the fd up before it looks at the command.
    pub fn fcntl(&self, fd: u32, cmd: u32, arg: u64) -> Result<u32, Errno> {
        // `fdget_raw`: the light lookup (no lock, no refcount while the table is unshared).
        let file = self.files.fdget(fd).ok_or(Errno::EBADF)?;
        // `int argi = (int)arg`: the commands below read the low 32 bits.
        let argi = arg as u32;
        match cmd {
            F_DUPFD | F_DUPFD_CLOEXEC => {
                drop(file);
                // The raw `unsigned long`: the table narrows it as Linux's `do_fcntl` does.
                self.files
                    .fcntl_dupfd(fd, arg, cmd == F_DUPFD_CLOEXEC, self.nofile)
            }
            F_GETFD => {
                drop(file);
                Ok(self.files.get_close_on_exec(fd)? as u32 * fdtable::FD_CLOEXEC)
            }
            F_SETFD => {
                drop(file);
                self.files
                    .set_close_on_exec(fd, argi & fdtable::FD_CLOEXEC != 0)?;
                Ok(0)
            }
            F_GETFL => Ok(match file.fmode() {
                FMODE_READ => O_RDONLY,
                FMODE_WRITE => O_WRONLY,
                m if m == FMODE_READ | FMODE_WRITE => O_RDWR,
                _ => 3,
            }),
            _ => Err(Errno::EINVAL),
        }
    }

    /// `close_range(first, last, flags)` (`CLOSE_RANGE_UNSHARE`, `CLOSE_RANGE_CLOEXEC`).
    pub fn close_range(&mut self, first: u32, last: u32, flags: u32) -> Result<(), Errno> {
        self.files.close_range(first, last, flags)
    }

    /// `fork()`: a child with a copy of the table (every file's count goes up, close-on-exec
    /// bits and rights are copied, an open in progress stays the parent's).
    pub fn fork(&self) -> Result<Task, Errno> {
        Ok(Task {
            pid: self.kernel.alloc_pid(),
            files: self.files.fork()?,
            nofile: self.nofile,
            kernel: self.kernel.clone(),
        })
    }

    /// `clone(flags)`: with `CLONE_FILES` the child shares this task's table (another handle
    /// on it), without it the child gets a copy, as [`Task::fork`].
    pub fn clone_task(&mut self, flags: u64) -> Result<Task, Errno> {
        if flags & CLONE_FILES == 0 {
            return self.fork();
        }
        Ok(Task {
            pid: self.kernel.alloc_pid(),
            files: self.files.share(),
            nofile: self.nofile,
            kernel: self.kernel.clone(),
        })
    }

    /// `unshare(CLONE_FILES)`.
    pub fn unshare_files(&mut self) -> Result<(), Errno> {
        self.files.unshare()
    }

    /// `execve`'s descriptor work: a private table (`unshare_files`), then every close-on-exec
    /// fd closed. (A multi-threaded process kills its other threads first, `de_thread`; a table
    /// shared with another *process* through `CLONE_FILES` is copied.)
    pub fn execve(&mut self) -> Result<(), Errno> {
        self.files.exec()
    }

    /// `dup` with fewer rights (Fuchsia's `zx_handle_duplicate(handle, rights)`): the lowest
    /// free fd refers to `fd`'s file with `rights`, which must be a subset of `fd`'s (`EPERM`
    /// otherwise: rights only ever shrink). Close-on-exec is clear, as after `dup`.
    ///
    /// Done as an open is — reserve, then install the file *with* its rights in one step — so
    /// no thread ever sees the new fd with more rights than `rights`.
    pub fn dup_limited(&self, fd: u32, rights: FdRights) -> Result<u32, Errno> {
        let (file, old) = self.files.fget_with_payload(fd)?;
        if !old.contains(rights) {
            return Err(Errno::EPERM);
        }
        let slot = self.files.get_unused_fd_flags(0, self.nofile)?;
        Ok(slot.install_with(file, rights))
    }

    /// `cap_rights_limit(fd, rights)`: narrows `fd`'s rights in place to those in `rights`
    /// (`ENOTCAPABLE`'s stand-in `EPERM` if that would add any). A compare-and-set loop on the
    /// payload, so a concurrent narrowing by another task sharing the table is never undone.
    /// (A task that closes `fd` and opens another file there meanwhile makes the limit apply
    /// to the new file, as `cap_rights_limit` racing `close` + `open` does on FreeBSD.)
    pub fn cap_rights_limit(&self, fd: u32, rights: FdRights) -> Result<(), Errno> {
        let mut cur = self.files.fd_payload(fd)?;
        loop {
            if !cur.contains(rights) {
                return Err(Errno::EPERM);
            }
            match self.files.cmpxchg_fd_payload(fd, cur, rights)? {
                Ok(()) => return Ok(()),
                Err(actual) => cur = actual,
            }
        }
    }

    /// `cap_rights_get(fd)`.
    pub fn cap_rights_get(&self, fd: u32) -> Result<FdRights, Errno> {
        self.files.fd_payload(fd)
    }

    /// `readlink("/proc/self/fd/<fd>")`: a light lookup and the file's `d_path`.
    pub fn fd_path(&self, fd: u32) -> Result<String, Errno> {
        let file = self.files.fdget(fd).ok_or(Errno::EBADF)?;
        let mut s = String::new();
        file.path(&mut s);
        Ok(s)
    }

    /// `ls -l /proc/self/fd`: every open fd and what it links to, by iterating the table
    /// (`fget_task_next`). Reservations (opens in progress) are not listed.
    pub fn proc_fd(&self) -> Vec<(u32, String)> {
        self.files
            .iter()
            .map(|o| {
                let mut s = String::new();
                o.file.path(&mut s);
                (o.fd, s)
            })
            .collect()
    }

    /// `cat /proc/self/fdinfo/<fd>`: flags (`O_CLOEXEC` and the access mode, in octal, as
    /// Linux prints them) and this kernel's rights, read in one step of the iterator so they
    /// belong to the same instant.
    pub fn proc_fdinfo(&self, fd: u32) -> Result<String, Errno> {
        let o = self
            .files
            .iter_from(fd)
            .next()
            .filter(|o| o.fd == fd)
            .ok_or(Errno::ENOENT)?;
        let mut flags = match o.file.fmode() {
            FMODE_READ => O_RDONLY,
            FMODE_WRITE => O_WRONLY,
            m if m == FMODE_READ | FMODE_WRITE => O_RDWR,
            _ => 3,
        };
        if o.cloexec {
            flags |= O_CLOEXEC;
        }
        let mut s = String::new();
        let _ = write!(s, "flags:\t0{flags:o}\nrights:\t{:?}\n", o.payload);
        Ok(s)
    }

    /// The raw system call entry for the descriptor calls that take only integers: arguments
    /// as the registers hold them, the result as the kernel returns it (`-errno` on failure).
    /// `ENOSYS` for any other number.
    pub fn syscall(&mut self, nr: usize, args: [u64; 3]) -> i64 {
        // `unsigned int` parameters take the register's low 32 bits.
        let u = |a: u64| a as u32;
        let r = match nr {
            nr::CLOSE => self.close(u(args[0])).map(|()| 0),
            nr::DUP => self.dup(u(args[0])),
            nr::DUP2 => self.dup2(u(args[0]), u(args[1])),
            nr::DUP3 => self.dup3(u(args[0]), u(args[1]), u(args[2])),
            nr::FCNTL => self.fcntl(u(args[0]), u(args[1]), args[2]),
            nr::CLOSE_RANGE => self
                .close_range(u(args[0]), u(args[1]), u(args[2]))
                .map(|()| 0),
            _ => Err(Errno::ENOSYS),
        };
        match r {
            Ok(v) => v as i64,
            Err(e) => e.neg() as i64,
        }
    }
}

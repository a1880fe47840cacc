//! The benchmark workloads of `fdtable bench`, as small public entry points over the syscall API, so the
//! benchmark suite measures exactly what the tests exercise. Timing is the caller's job.
//!
//! | Benchmark | Entry points |
//! |---|---|
//! | **dd** (`fget_light`) | [`Dd::open`], then [`Dd::pair`] in a loop (or [`Dd::run`]); for the "shared table" variant keep a [`Task::clone_thread`] alive |
//! | **openneg** (`fput_badopen`) | [`Task::open`] of a missing path (fast path); [`NaiveOpen::open`] is the baseline that builds the file first and defers its release |
//! | **ioctl** (`unlocked_ioctl`) | [`Task::ioctl`] with [`FIONREAD`] on a pipe ([`ioctl_fionread`]); a driver's own ioctl on [`TestDevice`] ([`bench_task`] registers `/dev/testdev`); [`Bkl`] wraps either in one global lock for the baseline |
//! | **chat** (the RCU fd table) | [`ChatPair`]: one socketpair, an echo side and a client side, each on its own thread sharing one table; [`run_chat`] runs K pairs |

use crate::devices::{CharDevice, TestDevice};
use crate::file::File;
use crate::memfs::MemFs;
use crate::open::{build_open_how, getname};
use crate::ops::{FileOperations, Kstat};
use crate::task::Task;
use crate::uaccess::{LinearMemory, UserMemory, get_user_i32};
use crate::uapi::*;
use fdtable::{Errno, FileRef};
use std::sync::{Arc, Mutex};

/// A task on a fresh [`MemFs`] (`/dev/null`, `/dev/zero`, `/tmp`) with a [`TestDevice`] at
/// `/dev/testdev`; `RLIMIT_NOFILE` 1024.
pub fn bench_task() -> Task {
    let fs = MemFs::new();
    let dev: Arc<dyn CharDevice> = Arc::new(TestDevice::new());
    fs.mknod_chr(b"/dev/testdev", 0o666, dev)
        .expect("a fresh file system has /dev");
    Task::new(fs)
}

/// `dd if=/dev/zero of=FILE bs=1`: the loop Dipankar Sarma timed for `fget_light`
/// ("reducing overheads in fget/fput", 2003).
#[derive(Clone, Copy, Debug)]
pub struct Dd {
    /// `/dev/zero`, read-only.
    pub zero: i32,
    /// The output file, write-only, created and truncated.
    pub out: i32,
}

impl Dd {
    /// Opens `/dev/zero` and creates (or truncates) `out_path` for writing.
    pub fn open(task: &Task, out_path: &[u8]) -> Result<Dd, Errno> {
        let zero = task.open(b"/dev/zero", O_RDONLY as i32, 0)?;
        let out = task.open(out_path, (O_CREAT | O_WRONLY | O_TRUNC) as i32, 0o644)?;
        Ok(Dd { zero, out })
    }

    /// One pair: read 1 byte from `/dev/zero`, write it to the file. Always inlined, so
    /// that every caller measures the syscall layer as a caller of `Task::read` / `write`
    /// would compile it, not a call to this helper (a call added 21 instructions to a
    /// pair's 432: registers saved and restored).
    #[inline(always)]
    pub fn pair(&self, task: &Task) -> Result<(), Errno> {
        let mut b = [0u8; 1];
        task.read(self.zero, &mut b)?;
        task.write(self.out, &b)?;
        Ok(())
    }

    /// `pairs` pairs.
    pub fn run(&self, task: &Task, pairs: u64) -> Result<(), Errno> {
        for _ in 0..pairs {
            self.pair(task)?;
        }
        Ok(())
    }
}

/// Operations of a file object that was built but never opened (`alloc_empty_file`).
struct EmptyFile;

impl FileOperations for EmptyFile {
    fn never_blocks(&self) -> bool {
        true
    }

    fn fmode(&self) -> u32 {
        0
    }
    fn getattr(&self) -> Kstat {
        Kstat::default()
    }
}

/// The openneg baseline: an open that builds the file object *before* the path lookup (as
/// Linux did until 2023), and on failure hands it to deferred work (`fput` → `task_work`)
/// that runs when the call returns, instead of freeing it in place. The deferral here is a
/// per-task list with no atomics, cheaper than the kernel's task_work, so the comparison
/// favours the baseline.
#[derive(Default)]
pub struct NaiveOpen {
    task_work: Vec<FileRef<File>>,
}

impl NaiveOpen {
    /// A baseline opener with an empty deferred-work list.
    pub fn new() -> NaiveOpen {
        NaiveOpen::default()
    }

    /// `open(path, flags)` the old way. Same results as [`Task::open`].
    pub fn open(&mut self, task: &Task, path: &[u8], flags: i32) -> Result<i32, Errno> {
        let how = build_open_how(flags as u32, 0, 0)?;
        let path = getname(path)?;
        let slot = task
            .files()
            .get_unused_fd_flags(how.flags & O_CLOEXEC, task.nofile())?;
        let empty = FileRef::new(File::new(how.flags, Arc::new(EmptyFile)));
        let r = task.path_at(AT_FDCWD, path, |at| task.namespace().open(at, path, &how));
        // fput: the file goes to task_work either way (it is replaced on success), which runs
        // on the way back to user space.
        self.task_work.push(empty);
        let r = r.map(|opened| slot.install(FileRef::new(File::new(how.flags, opened.ops))));
        self.task_work_run();
        r.map(|fd| fd as i32)
    }

    fn task_work_run(&mut self) {
        for f in self.task_work.drain(..) {
            drop(f);
        }
    }
}

/// `ioctl(fd, FIONREAD, &n)` through the layer with a scratch guest memory; returns `n`.
#[inline]
pub fn ioctl_fionread(task: &Task, fd: i32) -> Result<i32, Errno> {
    let mut raw = [0u8; 4];
    let mut mem = LinearMemory::new(0x1000, &mut raw);
    task.ioctl(fd, FIONREAD, 0x1000, &mut mem)?;
    get_user_i32(&mut mem, 0x1000)
}

/// The ioctl baseline's Big Kernel Lock: one lock taken around every ioctl it dispatches, as
/// `sys_ioctl` did before the 2004 patch (`unlocked_ioctl`). Not used by the layer itself.
#[derive(Debug, Default)]
pub struct Bkl {
    lock: Mutex<()>,
}

impl Bkl {
    /// A new lock.
    pub fn new() -> Bkl {
        Bkl::default()
    }

    /// [`Task::ioctl`] under the lock.
    pub fn ioctl(
        &self,
        task: &Task,
        fd: i32,
        cmd: u32,
        arg: usize,
        mem: &mut dyn UserMemory,
    ) -> Result<i64, Errno> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        task.ioctl(fd, cmd, arg, mem)
    }
}

/// Reads exactly `buf.len()` bytes (a short count only at end of file).
pub fn read_full(task: &Task, fd: i32, buf: &mut [u8]) -> Result<usize, Errno> {
    let mut got = 0;
    while got < buf.len() {
        match task.read(fd, &mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// Writes all of `buf`.
pub fn write_all(task: &Task, fd: i32, buf: &[u8]) -> Result<(), Errno> {
    let mut put = 0;
    while put < buf.len() {
        put += task.write(fd, &buf[put..])?;
    }
    Ok(())
}

/// One chat pair: a connected socketpair; [`ChatPair::client`] sends messages and reads each
/// echo, [`ChatPair::echo`] sends every message back. Run them on two threads whose tasks share
/// one table ([`Task::clone_thread`]).
#[derive(Clone, Copy, Debug)]
pub struct ChatPair {
    /// The client's socket.
    pub client_fd: i32,
    /// The echo side's socket.
    pub echo_fd: i32,
}

impl ChatPair {
    /// `socketpair(AF_UNIX, SOCK_STREAM)`.
    pub fn new(task: &Task) -> Result<ChatPair, Errno> {
        let [a, b] = task.socketpair(AF_UNIX, SOCK_STREAM, 0)?;
        Ok(ChatPair {
            client_fd: a,
            echo_fd: b,
        })
    }

    /// Sends `msgs` messages of `size` bytes, reading each one back.
    pub fn client(&self, task: &Task, msgs: u64, size: usize) -> Result<(), Errno> {
        let out = vec![0x5Au8; size];
        let mut back = vec![0u8; size];
        for _ in 0..msgs {
            write_all(task, self.client_fd, &out)?;
            if read_full(task, self.client_fd, &mut back)? != size {
                return Err(Errno::ECONNRESET);
            }
        }
        Ok(())
    }

    /// Echoes `msgs` messages of `size` bytes.
    pub fn echo(&self, task: &Task, msgs: u64, size: usize) -> Result<(), Errno> {
        let mut buf = vec![0u8; size];
        for _ in 0..msgs {
            if read_full(task, self.echo_fd, &mut buf)? != size {
                return Err(Errno::ECONNRESET);
            }
            write_all(task, self.echo_fd, &buf)?;
        }
        Ok(())
    }
}

/// Runs `pairs` chat pairs at once, each side on its own thread, all threads sharing
/// `task`'s table; every pair exchanges `msgs` messages of `size` bytes. Closes the sockets.
pub fn run_chat(task: &mut Task, pairs: usize, msgs: u64, size: usize) -> Result<(), Errno> {
    let chats: Vec<ChatPair> = (0..pairs)
        .map(|_| ChatPair::new(task))
        .collect::<Result<_, _>>()?;
    let mut threads = Vec::new();
    for c in &chats {
        let (c, echo_task, client_task) = (*c, task.clone_thread(), task.clone_thread());
        threads.push(std::thread::spawn(move || c.echo(&echo_task, msgs, size)));
        threads.push(std::thread::spawn(move || {
            c.client(&client_task, msgs, size)
        }));
    }
    let mut result = Ok(());
    for t in threads {
        let r = t.join().unwrap_or(Err(Errno::EIO));
        if result.is_ok() {
            result = r;
        }
    }
    for c in chats {
        task.close(c.client_fd)?;
        task.close(c.echo_fd)?;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::{TESTDEV_IOC_GET, TESTDEV_IOC_NOP};

    #[test]
    fn dd_writes_one_byte_per_pair() {
        let t = bench_task();
        let dd = Dd::open(&t, b"/tmp/dd.out").unwrap();
        dd.run(&t, 10_000).unwrap();
        assert_eq!(t.fstat(dd.out).unwrap().size, 10_000);
        let mut t = t;
        let sibling = t.clone_thread();
        dd.run(&t, 100).unwrap();
        drop(sibling);
        assert_eq!(t.fstat(dd.out).unwrap().size, 10_100);
    }

    #[test]
    fn openneg_paths_agree() {
        let t = bench_task();
        let mut naive = NaiveOpen::new();
        for _ in 0..100 {
            assert_eq!(t.open(b"/tmp/nonexistent", 0, 0), Err(Errno::ENOENT));
            assert_eq!(naive.open(&t, b"/tmp/nonexistent", 0), Err(Errno::ENOENT));
        }
        assert_eq!(t.files().reserved_fds(), Ok(vec![]));
        assert_eq!(t.files().iter().count(), 0);
        assert_eq!(naive.open(&t, b"/dev/null", 0), Ok(0));
        assert_eq!(t.open(b"/dev/null", 0, 0), Ok(1));
    }

    #[test]
    fn ioctl_workloads() {
        let t = bench_task();
        let [r, w] = t.pipe2(0).unwrap();
        t.write(w, b"abc").unwrap();
        assert_eq!(ioctl_fionread(&t, r), Ok(3));
        let dev = t.open(b"/dev/testdev", O_RDWR as i32, 0).unwrap();
        let mut raw = [0u8; 8];
        let mut mem = LinearMemory::new(0x1000, &mut raw);
        let bkl = Bkl::new();
        assert_eq!(bkl.ioctl(&t, dev, TESTDEV_IOC_NOP, 0, &mut mem), Ok(0));
        assert_eq!(t.ioctl(dev, TESTDEV_IOC_GET, 0x1000, &mut mem), Ok(0));
    }

    #[test]
    fn chat_pairs_share_one_table() {
        let mut t = bench_task();
        run_chat(&mut t, 2, 200, 100).unwrap();
        assert!(t.files().snapshot().unwrap().is_empty());
    }
}

//! The two sides of a differential test: [`Kernel`] (real syscalls through libc, on real
//! files, pipes and sockets under a fresh temporary directory) and [`Layer`] (the same calls
//! through `fdtable_vfs::Task` on a `MemFs`). Both implement [`Sys`], so a scenario is written
//! once and run on each side; the logs of results and errnos must be equal.
//!
//! The kernel side prefers a directory on tmpfs (`/dev/shm`), which `MemFs` models, so that
//! block counts and SEEK_DATA/SEEK_HOLE can be compared too ([`Kernel::on_tmpfs`]).

#![allow(dead_code)]

use fdtable::Errno;
use fdtable_vfs::uaccess::{LinearMemory, get_user_i32, put_user_i32};
use fdtable_vfs::{MemFs, PollFd, Task};
use std::ffi::CString;
use std::io::{IoSlice, IoSliceMut};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A result as both sides report it.
pub type R = Result<i64, Errno>;

/// The attributes a scenario compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct St {
    pub mode: u32,
    pub size: i64,
    pub blocks: u64,
    pub blksize: u32,
    pub nlink: u32,
}

/// What a forked child does before it exits.
#[derive(Clone, Debug)]
pub enum ChildOp {
    Write(i32, Vec<u8>),
    Lseek(i32, i64, i32),
    Close(i32),
}

/// The syscalls the scenarios use. Paths not starting with `/` are relative to the side's
/// scratch directory; absolute ones (`/dev/null`) are used as they are.
pub trait Sys {
    fn name(&self) -> &'static str;
    fn open(&mut self, path: &str, flags: i32, mode: u32) -> R;
    fn close(&mut self, fd: i32) -> R;
    fn read(&mut self, fd: i32, len: usize) -> Result<Vec<u8>, Errno>;
    fn write(&mut self, fd: i32, data: &[u8]) -> R;
    fn pread(&mut self, fd: i32, len: usize, off: i64) -> Result<Vec<u8>, Errno>;
    fn pwrite(&mut self, fd: i32, data: &[u8], off: i64) -> R;
    fn readv(&mut self, fd: i32, lens: &[usize]) -> Result<Vec<Vec<u8>>, Errno>;
    fn writev(&mut self, fd: i32, parts: &[&[u8]]) -> R;
    fn lseek(&mut self, fd: i32, off: i64, whence: i32) -> R;
    fn dup(&mut self, fd: i32) -> R;
    fn dup2(&mut self, old: i32, new: i32) -> R;
    fn dup3(&mut self, old: i32, new: i32, flags: i32) -> R;
    fn fcntl(&mut self, fd: i32, cmd: i32, arg: i64) -> R;
    /// An ioctl that writes an `int` at its argument; the value read back.
    fn ioctl_get_int(&mut self, fd: i32, cmd: u32) -> R;
    /// An ioctl that writes a 64-bit value at its argument.
    fn ioctl_get_i64(&mut self, fd: i32, cmd: u32) -> R;
    /// An ioctl that reads an `int` from its argument.
    fn ioctl_set_int(&mut self, fd: i32, cmd: u32, v: i32) -> R;
    /// An ioctl with a raw numeric argument (0 is a NULL pointer).
    fn ioctl_raw(&mut self, fd: i32, cmd: u32, arg: usize) -> R;
    fn ftruncate(&mut self, fd: i32, len: i64) -> R;
    fn fstat(&mut self, fd: i32) -> Result<St, Errno>;
    fn pipe2(&mut self, flags: i32) -> Result<[i32; 2], Errno>;
    fn socketpair(&mut self, domain: i32, ty: i32, proto: i32) -> Result<[i32; 2], Errno>;
    fn eventfd(&mut self, init: u32, flags: i32) -> R;
    fn mkdir(&mut self, path: &str, mode: u32) -> R;
    fn unlink(&mut self, path: &str) -> R;
    fn rmdir(&mut self, path: &str) -> R;
    fn sendfile(&mut self, out: i32, inp: i32, off: Option<i64>, count: usize) -> (R, Option<i64>);
    fn shutdown(&mut self, fd: i32, how: i32) -> R;
    fn poll1(&mut self, fd: i32, events: u16) -> R;
    /// `fork()`, the child runs `ops` and exits; returns once it has.
    fn fork_child(&mut self, ops: &[ChildOp]);
    /// `close_range(fd, fd, flags)` on one fd this side owns.
    fn close_range1(&mut self, fd: i32, flags: u32) -> R;
}

fn cstr(s: &str) -> CString {
    CString::new(s).expect("no NUL in test paths")
}

fn ret(r: i64) -> R {
    if r < 0 {
        Err(Errno::last_os_error())
    } else {
        Ok(r)
    }
}

// === the kernel ===

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// Real syscalls. Owns every fd it returned (closed on drop), and a scratch directory.
pub struct Kernel {
    root: String,
    owned: Vec<i32>,
    tmpfs: bool,
}

const TMPFS_MAGIC: libc::c_long = 0x0102_1994;

fn is_tmpfs(dir: &str) -> bool {
    let p = cstr(dir);
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `p` is a valid C string and `st` is valid for writes of one statfs.
    let r = unsafe { libc::statfs(p.as_ptr(), st.as_mut_ptr()) };
    // SAFETY: statfs succeeded when r == 0, so `st` is initialised.
    r == 0 && unsafe { st.assume_init() }.f_type == TMPFS_MAGIC
}

impl Kernel {
    pub fn new() -> Kernel {
        let base = if is_tmpfs("/dev/shm") {
            "/dev/shm".to_string()
        } else {
            std::env::temp_dir().to_string_lossy().into_owned()
        };
        // ORDERING: Relaxed (`SEQ`); a unique counter, publishes nothing.
        let root = format!(
            "{base}/fdtable-vfs-diff-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        std::fs::create_dir_all(&root).expect("scratch directory");
        let tmpfs = is_tmpfs(&root);
        Kernel {
            root,
            owned: Vec::new(),
            tmpfs,
        }
    }

    /// Whether the scratch directory is on tmpfs (what `MemFs` models byte for byte).
    pub fn on_tmpfs(&self) -> bool {
        self.tmpfs
    }

    fn path(&self, p: &str) -> CString {
        if p.starts_with('/') || p.is_empty() {
            cstr(p)
        } else {
            cstr(&format!("{}/{}", self.root, p))
        }
    }

    fn own(&mut self, r: R) -> R {
        if let Ok(fd) = r {
            self.owned.push(fd as i32);
        }
        r
    }

    fn disown(&mut self, fd: i32) {
        self.owned.retain(|&f| f != fd);
    }

    /// Whether `fd` is one this side may touch.
    fn mine(&self, fd: i32) -> bool {
        self.owned.contains(&fd)
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        for fd in std::mem::take(&mut self.owned) {
            // SAFETY: `fd` was returned to this side and not closed since.
            unsafe { libc::close(fd) };
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A fd no test process has open: far above anything in use, below the limit.
pub const BAD_FD: i32 = 1_000_000 - 7;

impl Sys for Kernel {
    fn name(&self) -> &'static str {
        "kernel"
    }
    fn open(&mut self, path: &str, flags: i32, mode: u32) -> R {
        let p = self.path(path);
        // SAFETY: `p` is a valid C string; open takes no other pointer.
        let r = ret(unsafe { libc::open(p.as_ptr(), flags, mode) } as i64);
        self.own(r)
    }
    fn close(&mut self, fd: i32) -> R {
        // Never close a descriptor of the test harness.
        if !self.mine(fd) && fd >= 0 && fd != BAD_FD {
            return Err(Errno::EBADF);
        }
        self.disown(fd);
        // SAFETY: `fd` is ours (or invalid, which close reports).
        ret(unsafe { libc::close(fd) } as i64)
    }
    fn read(&mut self, fd: i32, len: usize) -> Result<Vec<u8>, Errno> {
        let mut b = vec![0u8; len];
        // SAFETY: `b` is valid for `len` bytes of writes.
        let n = ret(unsafe { libc::read(fd, b.as_mut_ptr().cast(), len) } as i64)?;
        b.truncate(n as usize);
        Ok(b)
    }
    fn write(&mut self, fd: i32, data: &[u8]) -> R {
        // SAFETY: `data` is valid for its length.
        ret(unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) } as i64)
    }
    fn pread(&mut self, fd: i32, len: usize, off: i64) -> Result<Vec<u8>, Errno> {
        let mut b = vec![0u8; len];
        // SAFETY: `b` is valid for `len` bytes of writes.
        let n = ret(unsafe { libc::pread(fd, b.as_mut_ptr().cast(), len, off) } as i64)?;
        b.truncate(n as usize);
        Ok(b)
    }
    fn pwrite(&mut self, fd: i32, data: &[u8], off: i64) -> R {
        // SAFETY: `data` is valid for its length.
        ret(unsafe { libc::pwrite(fd, data.as_ptr().cast(), data.len(), off) } as i64)
    }
    fn readv(&mut self, fd: i32, lens: &[usize]) -> Result<Vec<Vec<u8>>, Errno> {
        let mut bufs: Vec<Vec<u8>> = lens.iter().map(|&l| vec![0u8; l]).collect();
        let iov: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: every iovec points into a live buffer of its length.
        let n = ret(unsafe { libc::readv(fd, iov.as_ptr(), iov.len() as i32) } as i64)?;
        let mut left = n as usize;
        for b in &mut bufs {
            let k = left.min(b.len());
            b.truncate(k);
            left -= k;
        }
        Ok(bufs)
    }
    fn writev(&mut self, fd: i32, parts: &[&[u8]]) -> R {
        let iov: Vec<libc::iovec> = parts
            .iter()
            .map(|b| libc::iovec {
                iov_base: b.as_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: every iovec points into a live buffer of its length; writev only reads.
        ret(unsafe { libc::writev(fd, iov.as_ptr(), iov.len() as i32) } as i64)
    }
    fn lseek(&mut self, fd: i32, off: i64, whence: i32) -> R {
        // SAFETY: no pointers.
        ret(unsafe { libc::lseek(fd, off, whence) })
    }
    fn dup(&mut self, fd: i32) -> R {
        // SAFETY: no pointers.
        let r = ret(unsafe { libc::dup(fd) } as i64);
        self.own(r)
    }
    fn dup2(&mut self, old: i32, new: i32) -> R {
        assert!(self.mine(new) || new == old, "dup2 onto a harness fd");
        // SAFETY: no pointers; `new` is ours.
        ret(unsafe { libc::dup2(old, new) } as i64)
    }
    fn dup3(&mut self, old: i32, new: i32, flags: i32) -> R {
        assert!(self.mine(new) || new == old, "dup3 onto a harness fd");
        // SAFETY: no pointers; `new` is ours.
        ret(unsafe { libc::dup3(old, new, flags) } as i64)
    }
    fn fcntl(&mut self, fd: i32, cmd: i32, arg: i64) -> R {
        // SAFETY: the commands used take integer arguments.
        let r = ret(unsafe { libc::fcntl(fd, cmd, arg) } as i64);
        if matches!(cmd, libc::F_DUPFD | libc::F_DUPFD_CLOEXEC) {
            return self.own(r);
        }
        r
    }
    fn ioctl_get_int(&mut self, fd: i32, cmd: u32) -> R {
        let mut v: libc::c_int = -12345;
        // SAFETY: the command writes at most one int through the pointer.
        ret(unsafe { libc::ioctl(fd, cmd as libc::Ioctl, &mut v as *mut libc::c_int) } as i64)?;
        Ok(v as i64)
    }
    fn ioctl_get_i64(&mut self, fd: i32, cmd: u32) -> R {
        let mut v: i64 = -12345;
        // SAFETY: the command writes at most 8 bytes through the pointer.
        ret(unsafe { libc::ioctl(fd, cmd as libc::Ioctl, &mut v as *mut i64) } as i64)?;
        Ok(v)
    }
    fn ioctl_set_int(&mut self, fd: i32, cmd: u32, v: i32) -> R {
        let v: libc::c_int = v;
        // SAFETY: the command reads one int through the pointer.
        ret(unsafe { libc::ioctl(fd, cmd as libc::Ioctl, &v as *const libc::c_int) } as i64)
    }
    fn ioctl_raw(&mut self, fd: i32, cmd: u32, arg: usize) -> R {
        // SAFETY: callers pass commands that take no pointer, or NULL to see EFAULT.
        ret(unsafe { libc::ioctl(fd, cmd as libc::Ioctl, arg) } as i64)
    }
    fn ftruncate(&mut self, fd: i32, len: i64) -> R {
        // SAFETY: no pointers.
        ret(unsafe { libc::ftruncate(fd, len) } as i64)
    }
    fn fstat(&mut self, fd: i32) -> Result<St, Errno> {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: `st` is valid for writes of one stat.
        ret(unsafe { libc::fstat(fd, st.as_mut_ptr()) } as i64)?;
        // SAFETY: fstat succeeded.
        let st = unsafe { st.assume_init() };
        Ok(St {
            mode: st.st_mode,
            size: st.st_size,
            blocks: st.st_blocks as u64,
            blksize: st.st_blksize as u32,
            nlink: st.st_nlink as u32,
        })
    }
    fn pipe2(&mut self, flags: i32) -> Result<[i32; 2], Errno> {
        let mut fds = [-1; 2];
        // SAFETY: `fds` has room for two ints.
        ret(unsafe { libc::pipe2(fds.as_mut_ptr(), flags) } as i64)?;
        self.owned.extend(fds);
        Ok(fds)
    }
    fn socketpair(&mut self, domain: i32, ty: i32, proto: i32) -> Result<[i32; 2], Errno> {
        let mut fds = [-1; 2];
        // SAFETY: `fds` has room for two ints.
        ret(unsafe { libc::socketpair(domain, ty, proto, fds.as_mut_ptr()) } as i64)?;
        self.owned.extend(fds);
        Ok(fds)
    }
    fn eventfd(&mut self, init: u32, flags: i32) -> R {
        // SAFETY: no pointers.
        let r = ret(unsafe { libc::eventfd(init, flags) } as i64);
        self.own(r)
    }
    fn mkdir(&mut self, path: &str, mode: u32) -> R {
        let p = self.path(path);
        // SAFETY: valid C string.
        ret(unsafe { libc::mkdir(p.as_ptr(), mode) } as i64)
    }
    fn unlink(&mut self, path: &str) -> R {
        let p = self.path(path);
        // SAFETY: valid C string.
        ret(unsafe { libc::unlink(p.as_ptr()) } as i64)
    }
    fn rmdir(&mut self, path: &str) -> R {
        let p = self.path(path);
        // SAFETY: valid C string.
        ret(unsafe { libc::rmdir(p.as_ptr()) } as i64)
    }
    fn sendfile(&mut self, out: i32, inp: i32, off: Option<i64>, count: usize) -> (R, Option<i64>) {
        match off {
            Some(mut o) => {
                // SAFETY: `o` is valid for reads and writes of one off_t.
                let r = ret(unsafe { libc::sendfile(out, inp, &mut o, count) } as i64);
                (r, Some(o))
            }
            // SAFETY: a NULL offset is allowed.
            None => (
                ret(unsafe { libc::sendfile(out, inp, std::ptr::null_mut(), count) } as i64),
                None,
            ),
        }
    }
    fn shutdown(&mut self, fd: i32, how: i32) -> R {
        // SAFETY: no pointers.
        ret(unsafe { libc::shutdown(fd, how) } as i64)
    }
    fn poll1(&mut self, fd: i32, events: u16) -> R {
        let mut p = libc::pollfd {
            fd,
            events: events as i16,
            revents: 0,
        };
        // SAFETY: one valid pollfd; timeout 0.
        ret(unsafe { libc::poll(&mut p, 1, 0) } as i64)?;
        Ok(p.revents as u16 as i64)
    }
    fn fork_child(&mut self, ops: &[ChildOp]) {
        // SAFETY: the child only makes raw syscalls on memory prepared before the fork, then
        // _exits; it touches no lock another thread could hold.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            for op in ops {
                match op {
                    // SAFETY: the data was allocated before the fork and is valid.
                    ChildOp::Write(fd, d) => unsafe {
                        libc::write(*fd, d.as_ptr().cast(), d.len());
                    },
                    // SAFETY: no pointers.
                    ChildOp::Lseek(fd, o, w) => unsafe {
                        libc::lseek(*fd, *o, *w);
                    },
                    // SAFETY: no pointers; the child's copy of the fd.
                    ChildOp::Close(fd) => unsafe {
                        libc::close(*fd);
                    },
                }
            }
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: `status` is valid for writes; `pid` is our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
    fn close_range1(&mut self, fd: i32, flags: u32) -> R {
        assert!(self.mine(fd), "close_range on a harness fd");
        if flags & libc::CLOSE_RANGE_CLOEXEC == 0 {
            self.disown(fd);
        }
        // SAFETY: no pointers; the range is one fd of ours.
        ret(unsafe { libc::syscall(libc::SYS_close_range, fd as u32, fd as u32, flags) })
    }
}

// === the layer ===

/// The same calls through a [`Task`] on a fresh [`MemFs`]; the scratch directory is `/tmp`.
///
/// In host mode ([`Layer::host`]) every file is a real host file wrapped by
/// [`HostFile`](fdtable_vfs::HostFile) and installed in the task: opens, pipes, socket pairs
/// and eventfds are made on the host (in a kernel-side scratch directory), and every other call
/// goes through the layer — the passthrough a sandbox uses.
pub struct Layer {
    pub task: Task,
    host: Option<Kernel>,
}

const ADDR: usize = 0x1000;

impl Layer {
    pub fn new() -> Layer {
        Layer {
            task: Task::new(MemFs::new()),
            host: None,
        }
    }

    /// Host mode.
    pub fn host() -> Layer {
        Layer {
            task: Task::new(MemFs::new()),
            host: Some(Kernel::new()),
        }
    }

    /// Wraps a host fd just made (or the host's error) and installs it with `cloexec`.
    fn adopt(&self, r: R, cloexec: bool) -> R {
        use std::os::fd::{FromRawFd, OwnedFd};
        let raw = r? as i32;
        // SAFETY: `raw` is a descriptor the host just returned to us and nothing else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(raw) };
        let file = fdtable_vfs::HostFile::wrap(owned)?;
        let flags = if cloexec { libc::O_CLOEXEC as u32 } else { 0 };
        self.task.install(file, flags).map(i64::from)
    }

    fn adopt_pair(&self, r: Result<[i32; 2], Errno>, cloexec: bool) -> Result<[i32; 2], Errno> {
        let [a, b] = r?;
        Ok([
            self.adopt(Ok(a as i64), cloexec)? as i32,
            self.adopt(Ok(b as i64), cloexec)? as i32,
        ])
    }

    fn path(p: &str) -> Vec<u8> {
        if p.starts_with('/') || p.is_empty() {
            p.as_bytes().to_vec()
        } else {
            format!("/tmp/{p}").into_bytes()
        }
    }
}

fn l<T: Into<i64>>(r: Result<T, Errno>) -> R {
    r.map(Into::into)
}

impl Sys for Layer {
    fn name(&self) -> &'static str {
        if self.host.is_some() {
            "host layer"
        } else {
            "layer"
        }
    }
    fn open(&mut self, path: &str, flags: i32, mode: u32) -> R {
        if let Some(k) = &self.host {
            let p = k.path(path);
            // SAFETY: `p` is a valid C string.
            let r = ret(unsafe { libc::open(p.as_ptr(), flags | libc::O_CLOEXEC, mode) } as i64);
            return self.adopt(r, flags & libc::O_CLOEXEC != 0);
        }
        l(self.task.open(&Self::path(path), flags, mode))
    }
    fn close(&mut self, fd: i32) -> R {
        self.task.close(fd).map(|()| 0)
    }
    fn read(&mut self, fd: i32, len: usize) -> Result<Vec<u8>, Errno> {
        let mut b = vec![0u8; len];
        let n = self.task.read(fd, &mut b)?;
        b.truncate(n);
        Ok(b)
    }
    fn write(&mut self, fd: i32, data: &[u8]) -> R {
        self.task.write(fd, data).map(|n| n as i64)
    }
    fn pread(&mut self, fd: i32, len: usize, off: i64) -> Result<Vec<u8>, Errno> {
        let mut b = vec![0u8; len];
        let n = self.task.pread64(fd, &mut b, off)?;
        b.truncate(n);
        Ok(b)
    }
    fn pwrite(&mut self, fd: i32, data: &[u8], off: i64) -> R {
        self.task.pwrite64(fd, data, off).map(|n| n as i64)
    }
    fn readv(&mut self, fd: i32, lens: &[usize]) -> Result<Vec<Vec<u8>>, Errno> {
        let mut bufs: Vec<Vec<u8>> = lens.iter().map(|&l| vec![0u8; l]).collect();
        let n = {
            let mut iov: Vec<IoSliceMut<'_>> =
                bufs.iter_mut().map(|b| IoSliceMut::new(b)).collect();
            self.task.readv(fd, &mut iov)?
        };
        let mut left = n;
        for b in &mut bufs {
            let k = left.min(b.len());
            b.truncate(k);
            left -= k;
        }
        Ok(bufs)
    }
    fn writev(&mut self, fd: i32, parts: &[&[u8]]) -> R {
        let iov: Vec<IoSlice<'_>> = parts.iter().map(|b| IoSlice::new(b)).collect();
        self.task.writev(fd, &iov).map(|n| n as i64)
    }
    fn lseek(&mut self, fd: i32, off: i64, whence: i32) -> R {
        self.task.lseek(fd, off, whence)
    }
    fn dup(&mut self, fd: i32) -> R {
        l(self.task.dup(fd))
    }
    fn dup2(&mut self, old: i32, new: i32) -> R {
        l(self.task.dup2(old, new))
    }
    fn dup3(&mut self, old: i32, new: i32, flags: i32) -> R {
        l(self.task.dup3(old, new, flags as u32))
    }
    fn fcntl(&mut self, fd: i32, cmd: i32, arg: i64) -> R {
        self.task.fcntl(fd, cmd, arg as u64)
    }
    fn ioctl_get_int(&mut self, fd: i32, cmd: u32) -> R {
        let mut raw = [0u8; 8];
        let mut m = LinearMemory::new(ADDR, &mut raw);
        put_user_i32(&mut m, ADDR, -12345).unwrap();
        self.task.ioctl(fd, cmd, ADDR, &mut m)?;
        get_user_i32(&mut m, ADDR).map(i64::from)
    }
    fn ioctl_get_i64(&mut self, fd: i32, cmd: u32) -> R {
        let mut raw = (-12345i64).to_ne_bytes();
        self.task
            .ioctl(fd, cmd, ADDR, &mut LinearMemory::new(ADDR, &mut raw))?;
        Ok(i64::from_ne_bytes(raw))
    }
    fn ioctl_set_int(&mut self, fd: i32, cmd: u32, v: i32) -> R {
        let mut raw = v.to_ne_bytes();
        let mut m = LinearMemory::new(ADDR, &mut raw);
        self.task.ioctl(fd, cmd, ADDR, &mut m)
    }
    fn ioctl_raw(&mut self, fd: i32, cmd: u32, arg: usize) -> R {
        let mut raw = [0u8; 8];
        let mut m = LinearMemory::new(ADDR, &mut raw);
        self.task.ioctl(fd, cmd, arg, &mut m)
    }
    fn ftruncate(&mut self, fd: i32, len: i64) -> R {
        self.task.ftruncate(fd, len).map(|()| 0)
    }
    fn fstat(&mut self, fd: i32) -> Result<St, Errno> {
        let k = self.task.fstat(fd)?;
        Ok(St {
            mode: k.mode,
            size: k.size,
            blocks: k.blocks,
            blksize: k.blksize,
            nlink: k.nlink,
        })
    }
    fn pipe2(&mut self, flags: i32) -> Result<[i32; 2], Errno> {
        if self.host.is_some() {
            let mut fds = [-1; 2];
            // SAFETY: `fds` has room for two ints.
            let r = ret(unsafe { libc::pipe2(fds.as_mut_ptr(), flags | libc::O_CLOEXEC) } as i64);
            return self.adopt_pair(r.map(|_| fds), flags & libc::O_CLOEXEC != 0);
        }
        self.task.pipe2(flags as u32)
    }
    fn socketpair(&mut self, domain: i32, ty: i32, proto: i32) -> Result<[i32; 2], Errno> {
        if self.host.is_some() {
            let mut fds = [-1; 2];
            let ty2 = ty | libc::SOCK_CLOEXEC;
            // SAFETY: `fds` has room for two ints.
            let r = ret(unsafe { libc::socketpair(domain, ty2, proto, fds.as_mut_ptr()) } as i64);
            return self.adopt_pair(r.map(|_| fds), ty & libc::SOCK_CLOEXEC != 0);
        }
        self.task.socketpair(domain, ty, proto)
    }
    fn eventfd(&mut self, init: u32, flags: i32) -> R {
        if self.host.is_some() {
            // SAFETY: no pointers.
            let r = ret(unsafe { libc::eventfd(init, flags | libc::EFD_CLOEXEC) } as i64);
            return self.adopt(r, flags & libc::EFD_CLOEXEC != 0);
        }
        l(self.task.eventfd2(init, flags as u32))
    }
    fn mkdir(&mut self, path: &str, mode: u32) -> R {
        if let Some(k) = &mut self.host {
            return k.mkdir(path, mode);
        }
        self.task.mkdir(&Self::path(path), mode).map(|()| 0)
    }
    fn unlink(&mut self, path: &str) -> R {
        if let Some(k) = &mut self.host {
            return k.unlink(path);
        }
        self.task.unlink(&Self::path(path)).map(|()| 0)
    }
    fn rmdir(&mut self, path: &str) -> R {
        if let Some(k) = &mut self.host {
            return k.rmdir(path);
        }
        self.task.rmdir(&Self::path(path)).map(|()| 0)
    }
    fn sendfile(&mut self, out: i32, inp: i32, off: Option<i64>, count: usize) -> (R, Option<i64>) {
        match off {
            Some(mut o) => {
                let r = self.task.sendfile(out, inp, Some(&mut o), count);
                (r.map(|n| n as i64), Some(o))
            }
            None => (
                self.task.sendfile(out, inp, None, count).map(|n| n as i64),
                None,
            ),
        }
    }
    fn shutdown(&mut self, fd: i32, how: i32) -> R {
        self.task.shutdown(fd, how).map(|()| 0)
    }
    fn poll1(&mut self, fd: i32, events: u16) -> R {
        let mut p = [PollFd {
            fd,
            events,
            revents: 0,
        }];
        self.task.poll(&mut p)?;
        Ok(p[0].revents as i64)
    }
    fn fork_child(&mut self, ops: &[ChildOp]) {
        let mut child = self.task.fork().expect("fork");
        for op in ops {
            match op {
                ChildOp::Write(fd, d) => {
                    let _ = child.write(*fd, d);
                }
                ChildOp::Lseek(fd, o, w) => {
                    let _ = child.lseek(*fd, *o, *w);
                }
                ChildOp::Close(fd) => {
                    let _ = child.close(*fd);
                }
            }
        }
    }
    fn close_range1(&mut self, fd: i32, flags: u32) -> R {
        self.task
            .close_range(fd as u32, fd as u32, flags)
            .map(|()| 0)
    }
}

/// A log of what a scenario saw, compared between the two sides.
#[derive(Default, Debug)]
pub struct Log {
    pub lines: Vec<String>,
}

impl Log {
    /// Records any value under a label.
    pub fn val<T: std::fmt::Debug>(&mut self, what: &str, v: T) {
        let mut text = format!("{v:?}");
        if text.len() > 200 {
            // Long values (bytes read) are compared by length and hash, to keep reports short.
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            text.hash(&mut h);
            text = format!(
                "{}... ({} chars, hash {:016x})",
                &text[..60],
                text.len(),
                h.finish()
            );
        }
        self.lines.push(format!("{what}: {text}"));
    }

    /// Records a call that returns a new fd: only whether it succeeded (fd numbers differ
    /// between the sides); returns the fd or -1.
    pub fn fd(&mut self, what: &str, r: R) -> i32 {
        self.lines.push(format!("{what}: {:?}", r.map(|_| "fd")));
        r.map(|f| f as i32).unwrap_or(-1)
    }

    /// Records a pair of new fds.
    pub fn fds(&mut self, what: &str, r: Result<[i32; 2], Errno>) -> [i32; 2] {
        self.lines.push(format!("{what}: {:?}", r.map(|_| "fds")));
        r.unwrap_or([-1, -1])
    }
}

/// Forked children inherit every fd of the test process, including other tests' pipe ends,
/// which would then see a writer that is not theirs until the child exits. Scenarios that
/// fork hold this exclusively; all others hold it shared.
static FORK_LOCK: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Runs `scenario` on a fresh kernel side and a fresh layer side; panics with both logs,
/// line by line, if they differ. The scenario must not fork (see [`diff_forking`]).
pub fn diff(name: &str, scenario: impl Fn(&mut dyn Sys, &mut Log, bool)) {
    let _g = FORK_LOCK.read().unwrap_or_else(|p| p.into_inner());
    diff_unlocked(name, scenario);
}

/// [`diff`] for a scenario that forks: runs alone in this test process.
pub fn diff_forking(name: &str, scenario: impl Fn(&mut dyn Sys, &mut Log, bool)) {
    let _g = FORK_LOCK.write().unwrap_or_else(|p| p.into_inner());
    diff_unlocked(name, scenario);
}

/// [`diff`] with the layer in host mode ([`Layer::host`]): checks the host-fd
/// adapter and the layer's generic code against real files.
pub fn diff_host(name: &str, scenario: impl Fn(&mut dyn Sys, &mut Log, bool)) {
    let _g = FORK_LOCK.read().unwrap_or_else(|p| p.into_inner());
    run_both(name, scenario, Layer::host());
}

/// [`diff_host`] for a scenario that forks: runs alone in this test process.
pub fn diff_host_forking(name: &str, scenario: impl Fn(&mut dyn Sys, &mut Log, bool)) {
    let _g = FORK_LOCK.write().unwrap_or_else(|p| p.into_inner());
    run_both(name, scenario, Layer::host());
}

fn diff_unlocked(name: &str, scenario: impl Fn(&mut dyn Sys, &mut Log, bool)) {
    run_both(name, scenario, Layer::new());
}

fn run_both(name: &str, scenario: impl Fn(&mut dyn Sys, &mut Log, bool), mut layer: Layer) {
    let mut k = Kernel::new();
    let tmpfs = k.on_tmpfs();
    let mut kl = Log::default();
    scenario(&mut k, &mut kl, tmpfs);
    drop(k);
    let mut ll = Log::default();
    scenario(&mut layer, &mut ll, tmpfs);
    if kl.lines != ll.lines {
        let mut report = format!("{name}: the layer differs from the kernel\n");
        for i in 0..kl.lines.len().max(ll.lines.len()) {
            let a = kl.lines.get(i).map(String::as_str).unwrap_or("-");
            let b = ll.lines.get(i).map(String::as_str).unwrap_or("-");
            let mark = if a == b { "  " } else { "!!" };
            report.push_str(&format!("{mark} kernel {a}\n   layer  {b}\n"));
        }
        panic!("{report}");
    }
    assert!(!kl.lines.is_empty(), "{name}: the scenario logged nothing");
}

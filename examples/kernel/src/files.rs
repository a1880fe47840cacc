//! Open file descriptions: the `KFile` trait the table stores as `dyn KFile`, and three
//! implementations — the console, `/dev/null` and pipes.
//!
//! The table knows nothing of these types beyond [`FileLike`]: it calls `flush` on every close
//! of a descriptor and drops the value (the file's release) when the last reference goes. Each
//! file keeps its access mode (`FMODE_READ` / `FMODE_WRITE`), as `struct file` does; the
//! syscall layer checks it.

use crate::spinlock::SpinLock;
use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt::Write as _;
use fdtable::{Errno, FileLike};

/// A spinlock-protected value (the kernel's `spinlock_t` around a structure).
pub type SpinMutex<T> = lock_api::Mutex<SpinLock, T>;

/// `FMODE_READ`.
pub const FMODE_READ: u8 = 1;
/// `FMODE_WRITE`.
pub const FMODE_WRITE: u8 = 2;

/// `O_ACCMODE` → `f_mode` (`OPEN_FMODE`): 0 read, 1 write, 2 both, 3 neither.
pub fn fmode_from_flags(flags: u32) -> u8 {
    match flags & 3 {
        0 => FMODE_READ,
        1 => FMODE_WRITE,
        2 => FMODE_READ | FMODE_WRITE,
        _ => 0,
    }
}

/// An open file description of this kernel. `read`/`write` are the file operations
/// (`f_op->read`/`->write`); the access-mode checks are the syscall layer's, as in `vfs_read`.
pub trait KFile: FileLike {
    /// `f_mode`'s access bits ([`FMODE_READ`], [`FMODE_WRITE`]).
    fn fmode(&self) -> u8;
    /// `->read`. `EAGAIN` where Linux would block (this kernel has no scheduler).
    fn read(&self, buf: &mut [u8]) -> Result<usize, Errno>;
    /// `->write`.
    fn write(&self, buf: &[u8]) -> Result<usize, Errno>;
    /// What `/proc/<pid>/fd/<n>` links to (`d_path`).
    fn path(&self, out: &mut String);
}

/// The console device: what was written to it, and input waiting to be read.
#[derive(Debug, Default)]
pub struct ConsoleDev {
    output: SpinMutex<Vec<u8>>,
    input: SpinMutex<VecDeque<u8>>,
}

impl ConsoleDev {
    /// Everything written to the console so far.
    pub fn output(&self) -> Vec<u8> {
        self.output.lock().clone()
    }

    /// Types `bytes` at the keyboard.
    pub fn feed(&self, bytes: &[u8]) -> Result<(), Errno> {
        let mut input = self.input.lock();
        input.try_reserve(bytes.len()).map_err(|_| Errno::ENOMEM)?;
        input.extend(bytes);
        Ok(())
    }
}

/// An open of `/dev/console`.
pub struct Console {
    pub(crate) dev: Arc<ConsoleDev>,
    pub(crate) fmode: u8,
}

impl FileLike for Console {}

impl KFile for Console {
    fn fmode(&self) -> u8 {
        self.fmode
    }
    fn read(&self, buf: &mut [u8]) -> Result<usize, Errno> {
        let mut input = self.dev.input.lock();
        if input.is_empty() && !buf.is_empty() {
            return Err(Errno::EAGAIN);
        }
        let n = buf.len().min(input.len());
        for (dst, src) in buf.iter_mut().zip(input.drain(..n)) {
            *dst = src;
        }
        Ok(n)
    }
    fn write(&self, buf: &[u8]) -> Result<usize, Errno> {
        let mut out = self.dev.output.lock();
        out.try_reserve(buf.len()).map_err(|_| Errno::ENOMEM)?;
        out.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn path(&self, out: &mut String) {
        out.push_str("/dev/console");
    }
}

/// An open of `/dev/null`.
pub struct Null {
    pub(crate) fmode: u8,
}

impl FileLike for Null {}

impl KFile for Null {
    fn fmode(&self) -> u8 {
        self.fmode
    }
    fn read(&self, _buf: &mut [u8]) -> Result<usize, Errno> {
        Ok(0)
    }
    fn write(&self, buf: &[u8]) -> Result<usize, Errno> {
        Ok(buf.len())
    }
    fn path(&self, out: &mut String) {
        out.push_str("/dev/null");
    }
}

/// `PIPE_DEF_BUFFERS * PAGE_SIZE`: a pipe's capacity.
pub const PIPE_CAPACITY: usize = 65536;

/// The pipe's buffer and its ends' counts (`struct pipe_inode_info`).
#[derive(Debug)]
pub struct PipeInode {
    ino: u64,
    state: SpinMutex<PipeState>,
}

#[derive(Debug, Default)]
struct PipeState {
    data: VecDeque<u8>,
    readers: usize,
    writers: usize,
}

impl PipeInode {
    pub(crate) fn new(ino: u64) -> PipeInode {
        PipeInode {
            ino,
            state: SpinMutex::new(PipeState::default()),
        }
    }
}

/// One end of a pipe. Its release (drop) is `pipe_release`: the last writer's release makes
/// reads return end-of-file, the last reader's makes writes fail with `EPIPE`.
pub struct PipeEnd {
    inode: Arc<PipeInode>,
    fmode: u8,
}

impl PipeEnd {
    /// An end opened with `fmode` (`FMODE_READ` for the read end, `FMODE_WRITE` for the write
    /// end), counted in the pipe.
    pub(crate) fn new(inode: Arc<PipeInode>, fmode: u8) -> PipeEnd {
        {
            let mut st = inode.state.lock();
            if fmode & FMODE_READ != 0 {
                st.readers += 1;
            }
            if fmode & FMODE_WRITE != 0 {
                st.writers += 1;
            }
        }
        PipeEnd { inode, fmode }
    }
}

impl Drop for PipeEnd {
    fn drop(&mut self) {
        let mut st = self.inode.state.lock();
        if self.fmode & FMODE_READ != 0 {
            st.readers -= 1;
        }
        if self.fmode & FMODE_WRITE != 0 {
            st.writers -= 1;
        }
    }
}

impl FileLike for PipeEnd {}

impl KFile for PipeEnd {
    fn fmode(&self) -> u8 {
        self.fmode
    }
    /// `pipe_read`: what is buffered; end-of-file once every writer is gone; `EAGAIN` (where
    /// Linux would sleep) while a writer may still write.
    fn read(&self, buf: &mut [u8]) -> Result<usize, Errno> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut st = self.inode.state.lock();
        if st.data.is_empty() {
            return if st.writers == 0 {
                Ok(0)
            } else {
                Err(Errno::EAGAIN)
            };
        }
        let n = buf.len().min(st.data.len());
        for (dst, src) in buf.iter_mut().zip(st.data.drain(..n)) {
            *dst = src;
        }
        Ok(n)
    }
    /// `pipe_write`: `EPIPE` once every reader is gone (Linux also sends `SIGPIPE`), a partial
    /// write when the buffer fills, `EAGAIN` when it is full.
    fn write(&self, buf: &[u8]) -> Result<usize, Errno> {
        let mut st = self.inode.state.lock();
        if st.readers == 0 {
            return Err(Errno::EPIPE);
        }
        let room = PIPE_CAPACITY - st.data.len();
        if room == 0 && !buf.is_empty() {
            return Err(Errno::EAGAIN);
        }
        let n = buf.len().min(room);
        st.data.try_reserve(n).map_err(|_| Errno::ENOMEM)?;
        st.data.extend(&buf[..n]);
        Ok(n)
    }
    fn path(&self, out: &mut String) {
        let _ = write!(out, "pipe:[{}]", self.inode.ino);
    }
}

//! `before`: the same table with the kernel's later fast paths taken out (fget_light, the RCU fd table, fput_badopen, find_next_fd, unlocked_ioctl) — Linux 2.4's `files_struct`
//! (fs/file_table.c, fs/open.c, fs/fcntl.c before 2003), re-expressed.
//!
//! - **Lookup** (`fget` before fget_light and the RCU fd table): `read_lock(&files->file_lock)`, `fcheck`,
//!   `get_file` (an atomic increment), `read_unlock`; the put (`fput`) is an atomic
//!   decrement. Shared table or not, every lookup pays the lock and the reference.
//! - **Allocation** (`get_unused_fd` / `locate_fd` before find_next_fd's two-level bitmaps): under the write lock, a
//!   one-level linear scan of `open_fds` from the `next_fd` hint (`find_next_zero_bit`), the
//!   array doubled when full.
//! - **Install** (`fd_install`) takes the write lock again; **close** clears the slot and the
//!   bits under the write lock and puts the file after unlocking (`filp_close`).

use super::{AllocTable, BenchFile, Table};
use fdtable::bitmap::{self, find_next_fd_linear};
use std::sync::{Arc, RwLock};

/// The rwlock-protected part: `fd[]`, `open_fds`, `close_on_exec`, `next_fd`.
struct Inner<R> {
    fd: Vec<Option<R>>,
    open_fds: Vec<u64>,
    close_on_exec: Vec<u64>,
    next_fd: usize,
}

impl<R: Clone> Inner<R> {
    fn new() -> Self {
        Inner {
            fd: vec![None; 64],
            open_fds: vec![0; 1],
            close_on_exec: vec![0; 1],
            next_fd: 0,
        }
    }

    /// `get_unused_fd` / `locate_fd`: lowest free fd at or above `next_fd`, by a linear scan.
    fn alloc(&mut self) -> usize {
        loop {
            let max = self.fd.len();
            let fd = find_next_fd_linear(&self.open_fds, max, self.next_fd);
            if fd < max {
                bitmap::set_bit(&mut self.open_fds, fd);
                bitmap::clear_bit(&mut self.close_on_exec, fd);
                self.next_fd = fd + 1;
                return fd;
            }
            // expand_files: double the array and the bitmaps.
            self.fd.resize(max * 2, None);
            self.open_fds.resize(max * 2 / 64, 0);
            self.close_on_exec.resize(max * 2 / 64, 0);
        }
    }

    /// `__put_unused_fd`.
    fn put_unused_fd(&mut self, fd: usize) {
        bitmap::clear_bit(&mut self.open_fds, fd);
        if fd < self.next_fd {
            self.next_fd = fd;
        }
    }
}

/// `files_struct` with its `file_lock`, over any counted file reference `R` (`Arc<F>`,
/// `FileRef<F>`: cloning is `get_file`, dropping is `fput`).
pub struct BeforeFiles<R> {
    file_lock: RwLock<Inner<R>>,
}

impl<R: Clone> Default for BeforeFiles<R> {
    fn default() -> Self {
        BeforeFiles {
            file_lock: RwLock::new(Inner::new()),
        }
    }
}

impl<R: Clone> BeforeFiles<R> {
    /// `fget`: read lock, `fcheck`, `get_file`, read unlock.
    #[inline(always)]
    pub fn fget(&self, fd: u32) -> Option<R> {
        let files = self.file_lock.read().unwrap();
        files.fd.get(fd as usize)?.clone()
    }

    /// `get_unused_fd` then `fd_install` (two write-lock holds, as in 2.4).
    pub fn install(&self, file: R) -> u32 {
        let fd = self.file_lock.write().unwrap().alloc();
        self.file_lock.write().unwrap().fd[fd] = Some(file);
        fd as u32
    }

    /// `sys_close`: under the write lock take the file and free the fd; the caller puts it.
    #[inline(always)]
    pub fn close(&self, fd: u32) -> Option<R> {
        let mut files = self.file_lock.write().unwrap();
        let file = files.fd.get_mut(fd as usize).and_then(Option::take)?;
        bitmap::clear_bit(&mut files.close_on_exec, fd as usize);
        files.put_unused_fd(fd as usize);
        Some(file)
    }
}

/// The pre-2003 table of [`BenchFile`]s.
pub struct Before;

impl Table for Before {
    const NAME: &'static str = "before";
    type Handle = Arc<BeforeFiles<Arc<BenchFile>>>;

    fn new_table() -> Self::Handle {
        Arc::default()
    }
    fn share(h: &mut Self::Handle) -> Self::Handle {
        h.clone()
    }
    fn open(h: &mut Self::Handle, file: BenchFile) -> u32 {
        h.install(Arc::new(file))
    }
    #[inline(always)]
    fn lookup(h: &Self::Handle, fd: u32) -> Option<u64> {
        let file = h.fget(fd)?;
        Some(file.id)
        // fput: the Arc's drop.
    }
}

impl AllocTable for Before {
    /// `sys_dup`: `fget`, then `dupfd` (allocate under the write lock), `fd_install`.
    #[inline(always)]
    fn dup(h: &Self::Handle, fd: u32) -> Option<u32> {
        let file = h.fget(fd)?;
        Some(h.install(file))
    }
    /// `sys_close`, then `filp_close` (the put) after unlocking.
    #[inline(always)]
    fn close(h: &mut Self::Handle, fd: u32) -> bool {
        h.close(fd).is_some()
    }
}

//! `mutex` and `rwlock` in front of the syscall layer's open files: what a runtime that keeps
//! its descriptors in a `Mutex` / `RwLock` around `Vec<Option<Arc<File>>>` does on every
//! read, write or ioctl (wasi-common, WASIX, Starnix, Gramine; see shared/PEERS.md).
//!
//! [`BeforeFiles`] (the 2.4 table, read lock + reference per lookup) implements the same
//! interface, so `before` rows of these workloads run the same loop.
//!
//! The files are the layer's own (`FileRef<File>` is an `Arc`-like reference), so a row
//! differs from fdtable's only in how the descriptor is looked up: lock, clone the
//! reference, unlock; the put is the reference's drop.

use super::before::BeforeFiles;
use super::locked::alloc;
use fdtable::FileRef;
use fdtable_vfs::File;
use std::sync::{Mutex, RwLock};

type Slots = Vec<Option<FileRef<File>>>;

/// A lock-protected descriptor table in front of the layer's files.
pub trait LockedFiles: Default + Send + Sync + 'static {
    /// The implementation's name in the output (`mutex`, `rwlock`).
    const NAME: &'static str;
    /// Installs `file` at the lowest free slot (linear scan from 0) and returns the fd.
    fn install(&self, file: FileRef<File>) -> i32;
    /// Lock, clone the reference, unlock.
    fn fget(&self, fd: i32) -> Option<FileRef<File>>;
}

fn get_in(slots: &Slots, fd: i32) -> Option<FileRef<File>> {
    slots.get(usize::try_from(fd).ok()?)?.clone()
}

/// `Mutex<Vec<Option<FileRef<File>>>>`.
#[derive(Default)]
pub struct MutexFiles(Mutex<Slots>);

impl LockedFiles for MutexFiles {
    const NAME: &'static str = "mutex";
    fn install(&self, file: FileRef<File>) -> i32 {
        alloc(&mut self.0.lock().unwrap(), file) as i32
    }
    #[inline(always)]
    fn fget(&self, fd: i32) -> Option<FileRef<File>> {
        get_in(&self.0.lock().unwrap(), fd)
    }
}

/// `RwLock<Vec<Option<FileRef<File>>>>`.
#[derive(Default)]
pub struct RwLockFiles(RwLock<Slots>);

impl LockedFiles for RwLockFiles {
    const NAME: &'static str = "rwlock";
    fn install(&self, file: FileRef<File>) -> i32 {
        alloc(&mut self.0.write().unwrap(), file) as i32
    }
    #[inline(always)]
    fn fget(&self, fd: i32) -> Option<FileRef<File>> {
        get_in(&self.0.read().unwrap(), fd)
    }
}

/// [`BeforeFiles`], Linux 2.4's table, which the fast paths replaced, in front of the same files.
impl LockedFiles for BeforeFiles<FileRef<File>> {
    const NAME: &'static str = "before";
    fn install(&self, file: FileRef<File>) -> i32 {
        BeforeFiles::install(self, file) as i32
    }
    #[inline(always)]
    fn fget(&self, fd: i32) -> Option<FileRef<File>> {
        BeforeFiles::fget(self, u32::try_from(fd).ok()?)
    }
}

/// The locked tables' dd paths of `fdtable bench --instructions` (`dd-pair-rwlock`,
/// `dd-pair-mutex`; see [`crate::instructions`]): a shared table's dd pair through the lock.
/// (Here rather than in `dd`, so that the instantiations do not change how the compiler
/// treats the other paths' loops.)
pub fn dd_instructions(
    path: &str,
    n: u64,
    run: fn(u64, &mut dyn FnMut(u64)),
) -> Result<(), String> {
    fn locked<L: LockedFiles>(n: u64, run: fn(u64, &mut dyn FnMut(u64))) -> Result<(), String> {
        let (task, sibling, dd) = crate::workloads::dd::setup(true)?;
        let (table, z, o) = crate::workloads::dd::locked_table::<L>(&task, &dd)?;
        run(n, &mut |k| {
            for _ in 0..k {
                crate::workloads::dd::locked_pair(&table, z, o).expect("dd pair");
            }
        });
        drop((sibling, task));
        Ok(())
    }
    match path {
        "dd-pair-rwlock" => locked::<RwLockFiles>(n, run),
        "dd-pair-mutex" => locked::<MutexFiles>(n, run),
        _ => Err(format!("not a locked dd path: {path}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdtable_vfs::workloads::bench_task;

    fn lowest_free<L: LockedFiles>() {
        let task = bench_task();
        let [r, w] = task.pipe2(0).unwrap();
        let t = L::default();
        let (a, b) = (
            t.install(task.files().fget(r as u32).unwrap()),
            t.install(task.files().fget(w as u32).unwrap()),
        );
        assert_eq!((a, b), (0, 1));
        assert!(t.fget(0).is_some() && t.fget(1).is_some());
        assert!(t.fget(2).is_none() && t.fget(-1).is_none());
    }

    #[test]
    fn both_tables_install_lowest_free_and_look_up() {
        lowest_free::<MutexFiles>();
        lowest_free::<RwLockFiles>();
        lowest_free::<BeforeFiles<FileRef<File>>>();
    }
}

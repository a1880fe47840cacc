//! `mutex` and `rwlock`: a `Mutex` / `RwLock` around `Vec<Option<Arc<BenchFile>>>`, what most
//! runtimes do (wasi-common, Wasmer WASIX, Starnix, Gramine; see shared/PEERS.md).
//!
//! A lookup takes the lock, clones the `Arc` and unlocks; the put is the `Arc`'s drop. `dup`
//! allocates the lowest free fd by a linear scan of the slots from 0, under one lock hold;
//! `close` takes the file out under the lock and drops it after.

use super::{AllocTable, BenchFile, Table};
use std::sync::{Arc, Mutex, RwLock};

type Slots = Vec<Option<Arc<BenchFile>>>;

/// Lowest free slot by linear scan, growing the vector when it is full (also the
/// [`locked_files`](super::locked_files) tables' allocation).
pub(crate) fn alloc<T>(slots: &mut Vec<Option<T>>, file: T) -> u32 {
    match slots.iter().position(Option::is_none) {
        Some(fd) => {
            slots[fd] = Some(file);
            fd as u32
        }
        None => {
            slots.push(Some(file));
            (slots.len() - 1) as u32
        }
    }
}

/// `Mutex<Vec<Option<Arc<File>>>>`.
pub struct MutexTable;

impl Table for MutexTable {
    const NAME: &'static str = "mutex";
    type Handle = Arc<Mutex<Slots>>;

    fn new_table() -> Self::Handle {
        Arc::default()
    }
    fn share(h: &mut Self::Handle) -> Self::Handle {
        h.clone()
    }
    fn open(h: &mut Self::Handle, file: BenchFile) -> u32 {
        alloc(&mut h.lock().unwrap(), Arc::new(file))
    }
    #[inline(always)]
    fn lookup(h: &Self::Handle, fd: u32) -> Option<u64> {
        let file = h.lock().unwrap().get(fd as usize)?.clone()?;
        Some(file.id)
    }
}

impl AllocTable for MutexTable {
    #[inline(always)]
    fn dup(h: &Self::Handle, fd: u32) -> Option<u32> {
        let mut slots = h.lock().unwrap();
        let file = slots.get(fd as usize)?.clone()?;
        Some(alloc(&mut slots, file))
    }
    #[inline(always)]
    fn close(h: &mut Self::Handle, fd: u32) -> bool {
        let file = h
            .lock()
            .unwrap()
            .get_mut(fd as usize)
            .and_then(Option::take);
        file.is_some()
    }
    fn fill(h: &mut Self::Handle, n: usize) {
        let mut slots = h.lock().unwrap();
        let file = slots[0].clone();
        slots.resize(n, file);
    }
}

/// `RwLock<Vec<Option<Arc<File>>>>`.
pub struct RwLockTable;

impl Table for RwLockTable {
    const NAME: &'static str = "rwlock";
    type Handle = Arc<RwLock<Slots>>;

    fn new_table() -> Self::Handle {
        Arc::default()
    }
    fn share(h: &mut Self::Handle) -> Self::Handle {
        h.clone()
    }
    fn open(h: &mut Self::Handle, file: BenchFile) -> u32 {
        alloc(&mut h.write().unwrap(), Arc::new(file))
    }
    #[inline(always)]
    fn lookup(h: &Self::Handle, fd: u32) -> Option<u64> {
        let file = h.read().unwrap().get(fd as usize)?.clone()?;
        Some(file.id)
    }
}

impl AllocTable for RwLockTable {
    #[inline(always)]
    fn dup(h: &Self::Handle, fd: u32) -> Option<u32> {
        let mut slots = h.write().unwrap();
        let file = slots.get(fd as usize)?.clone()?;
        Some(alloc(&mut slots, file))
    }
    #[inline(always)]
    fn close(h: &mut Self::Handle, fd: u32) -> bool {
        let file = h
            .write()
            .unwrap()
            .get_mut(fd as usize)
            .and_then(Option::take);
        file.is_some()
    }
    fn fill(h: &mut Self::Handle, n: usize) {
        let mut slots = h.write().unwrap();
        let file = slots[0].clone();
        slots.resize(n, file);
    }
}

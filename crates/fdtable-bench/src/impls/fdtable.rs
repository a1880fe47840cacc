//! `fdtable`: the library's `Files<BenchFile>`.
//!
//! Lookups go through [`Files::fdget`], the path every syscall takes: a light borrow (no
//! lock, no atomic read-modify-write) while the handle is the table's only user, a lock-free
//! counted reference (`fget`) once the table is shared.

use super::{AllocTable, BenchFile, NOFILE, Table};
use fdtable::{FileRef, Files};

/// The library.
pub struct FdTable;

impl Table for FdTable {
    const NAME: &'static str = "fdtable";
    type Handle = Files<BenchFile>;

    fn new_table() -> Self::Handle {
        Files::new()
    }
    fn share(h: &mut Self::Handle) -> Self::Handle {
        h.share()
    }
    fn open(h: &mut Self::Handle, file: BenchFile) -> u32 {
        h.install(FileRef::new(file), 0, NOFILE)
            .expect("installing a file")
    }
    #[inline(always)]
    fn lookup(h: &Self::Handle, fd: u32) -> Option<u64> {
        h.fdget(fd).map(|f| f.id)
    }
}

impl AllocTable for FdTable {
    #[inline(always)]
    fn dup(h: &Self::Handle, fd: u32) -> Option<u32> {
        h.dup(fd, NOFILE).ok()
    }
    #[inline(always)]
    fn close(h: &mut Self::Handle, fd: u32) -> bool {
        h.close_fd(fd).is_ok()
    }
}

/// The library's zero-locked-instruction lookup ([`Files::fdget_rcu`]): on a shared table the
/// file is lent under an RCU section instead of a reference (for operations that do not
/// block); on an unshared one it is the light lookup.
pub struct FdTableRcu;

impl Table for FdTableRcu {
    const NAME: &'static str = "fdtable-rcu";
    type Handle = Files<BenchFile>;

    fn new_table() -> Self::Handle {
        Files::new()
    }
    fn share(h: &mut Self::Handle) -> Self::Handle {
        h.share()
    }
    fn open(h: &mut Self::Handle, file: BenchFile) -> u32 {
        FdTable::open(h, file)
    }
    #[inline(always)]
    fn lookup(h: &Self::Handle, fd: u32) -> Option<u64> {
        h.fdget_rcu(fd).map(|f| f.id)
    }
}

/// [`FdTableRcu`] through the closure form, [`Files::with_fdget_rcu`]: the same lookup, with
/// the light and the lent borrow on paths of their own (nothing to test to end them).
pub struct FdTableRcuWith;

impl Table for FdTableRcuWith {
    const NAME: &'static str = "fdtable-rcu-with";
    type Handle = Files<BenchFile>;

    fn new_table() -> Self::Handle {
        Files::new()
    }
    fn share(h: &mut Self::Handle) -> Self::Handle {
        h.share()
    }
    fn open(h: &mut Self::Handle, file: BenchFile) -> u32 {
        FdTable::open(h, file)
    }
    #[inline(always)]
    fn lookup(h: &Self::Handle, fd: u32) -> Option<u64> {
        h.with_fdget_rcu(fd, |f| f.map(|f| f.id))
    }
}

//! The descriptor tables under test, behind one small interface.
//!
//! Every table stores [`BenchFile`]s (a stand-in open file whose lookups read one field) and
//! is reached through a per-thread *handle*, as a task reaches `current->files`:
//! [`Table::share`] makes another handle on the same table (`CLONE_FILES`).
//!
//! - [`fdtable`]: the library (`Files<BenchFile>`).
//! - [`before`]: Linux 2.4's table, before its fast paths (fget_light, the RCU fd table, find_next_fd), re-expressed: an rwlock-protected table where
//!   every lookup takes the lock and a reference, allocation by a one-level linear bitmap scan.
//! - [`locked`]: `Mutex` / `RwLock` around `Vec<Option<Arc<BenchFile>>>`, lowest-free by a
//!   linear scan of the slots (what most runtimes do).
//! - [`locked_files`]: the same two locks in front of the syscall layer's open files (dd,
//!   ioctl, chat).
//! - [`floor`]: a plain `Vec` index with no synchronisation (lookups only).
//! - [`kernel`]: the same loops through real syscalls.
//! - [`gvisor`]: gVisor's sentry `FDTable`, through the Go harness in bench/gvisor.

pub mod before;
pub mod fdtable;
pub mod floor;
pub mod gvisor;
pub mod kernel;
pub mod locked;
pub mod locked_files;

/// The open file every table stores. Aligned to a cache line so that two files (and their
/// reference counts, for `Arc`) never share one.
#[repr(align(64))]
#[derive(Debug)]
pub struct BenchFile {
    /// Read by every lookup so that nothing is optimised away.
    pub id: u64,
}

impl BenchFile {
    /// A file with this id.
    pub fn new(id: u64) -> Self {
        BenchFile { id }
    }
}

impl ::fdtable::FileLike for BenchFile {}

/// RLIMIT_NOFILE for the in-process tables: above the largest table the workloads build.
pub const NOFILE: u64 = 1 << 20;

/// A descriptor table reached through per-thread handles.
pub trait Table {
    /// The implementation's name in the output.
    const NAME: &'static str;
    /// One thread's (task's) handle on a table.
    type Handle: Send;
    /// A new, empty table.
    fn new_table() -> Self::Handle;
    /// Another handle on the same table (`CLONE_FILES`).
    fn share(h: &mut Self::Handle) -> Self::Handle;
    /// Installs `file` at the lowest free fd and returns the fd.
    fn open(h: &mut Self::Handle, file: BenchFile) -> u32;
    /// Looks up `fd`, reads the file's id and puts the file again (`fdget` … `fdput`).
    fn lookup(h: &Self::Handle, fd: u32) -> Option<u64>;
}

/// A table that can also allocate and close (not the floor).
pub trait AllocTable: Table {
    /// `dup(fd)`: the lowest free fd now refers to `fd`'s file.
    fn dup(h: &Self::Handle, fd: u32) -> Option<u32>;
    /// `close(fd)`; false if `fd` was not open.
    fn close(h: &mut Self::Handle, fd: u32) -> bool;
    /// Setup: makes fds `1..n` refer to fd 0's file (fd 0 open, nothing else). By default
    /// `n - 1` dups; tables whose allocation is a scan from 0 override it to stay linear.
    fn fill(h: &mut Self::Handle, n: usize) {
        for _ in 1..n {
            Self::dup(h, 0).expect("filling the table");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks lowest-free allocation, lookups and close on one implementation.
    fn lowest_free<T: AllocTable>() {
        let mut h = T::new_table();
        for i in 0..70 {
            assert_eq!(T::open(&mut h, BenchFile::new(i)), i as u32, "{}", T::NAME);
        }
        assert_eq!(T::lookup(&h, 5), Some(5));
        assert!(T::close(&mut h, 5));
        assert!(T::close(&mut h, 66));
        assert!(!T::close(&mut h, 66));
        assert_eq!(T::lookup(&h, 5), None);
        assert_eq!(T::dup(&h, 7), Some(5), "{}: lowest free", T::NAME);
        assert_eq!(T::lookup(&h, 5), Some(7));
        assert_eq!(T::dup(&h, 7), Some(66), "{}: lowest free", T::NAME);
        assert_eq!(
            T::dup(&h, 7),
            Some(70),
            "{}: next after the full ones",
            T::NAME
        );
        assert_eq!(T::dup(&h, 1000), None);
        let h2 = T::share(&mut h);
        assert_eq!(T::lookup(&h2, 70), Some(7));
        assert_eq!(T::dup(&h2, 0), Some(71));
        assert_eq!(T::lookup(&h, 71), Some(0));
    }

    #[test]
    fn fdtable_allocates_lowest_free() {
        lowest_free::<self::fdtable::FdTable>();
    }
    #[test]
    fn before_allocates_lowest_free() {
        lowest_free::<before::Before>();
    }
    #[test]
    fn mutex_allocates_lowest_free() {
        lowest_free::<locked::MutexTable>();
    }
    #[test]
    fn rwlock_allocates_lowest_free() {
        lowest_free::<locked::RwLockTable>();
    }
    #[test]
    fn floor_looks_up() {
        let mut h = floor::Floor::new_table();
        assert_eq!(floor::Floor::open(&mut h, BenchFile::new(9)), 0);
        let h2 = floor::Floor::share(&mut h);
        assert_eq!(floor::Floor::lookup(&h2, 0), Some(9));
        assert_eq!(floor::Floor::lookup(&h2, 1), None);
    }
}

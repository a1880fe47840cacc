//! The seeds' fast paths, checked by what they must not do: a failed open builds no file
//! object (seed 2), the generic and driver ioctl paths and the dd loop allocate nothing
//! (seed 5, seed 1). A counting allocator records each thread's allocations.

use fdtable::Errno;
use fdtable_vfs::devices::{TESTDEV_IOC_GET, TESTDEV_IOC_NOP};
use fdtable_vfs::uaccess::LinearMemory;
use fdtable_vfs::uapi::*;
use fdtable_vfs::workloads::{Dd, NaiveOpen, bench_task, ioctl_fionread};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a thread-local `Cell` with a const
// initialiser, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, i.e. from the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by this thread while running `f`.
fn allocations<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = ALLOCS.with(Cell::get);
    let r = f();
    (ALLOCS.with(Cell::get) - before, r)
}

#[test]
fn failed_open_builds_nothing() {
    let t = bench_task();
    // Warm up: the table and everything lazily made on first use.
    assert_eq!(t.open(b"/tmp/nonexistent", 0, 0), Err(Errno::ENOENT));
    let (n, ()) = allocations(|| {
        for _ in 0..1000 {
            assert_eq!(t.open(b"/tmp/nonexistent", 0, 0), Err(Errno::ENOENT));
            assert_eq!(t.open(b"/tmp/a/b/c", 0, 0), Err(Errno::ENOENT));
            assert_eq!(t.open(b"/dev/null/x", 0, 0), Err(Errno::ENOTDIR));
        }
    });
    assert_eq!(n, 0, "a failed open allocated");
    assert_eq!(t.files().reserved_fds(), Ok(vec![]));

    // The baseline builds a file object per call: the counter sees it.
    let mut naive = NaiveOpen::new();
    let _ = naive.open(&t, b"/tmp/nonexistent", 0);
    let (n, ()) = allocations(|| {
        for _ in 0..100 {
            assert_eq!(naive.open(&t, b"/tmp/nonexistent", 0), Err(Errno::ENOENT));
        }
    });
    assert!(n >= 100, "the baseline should allocate per call, saw {n}");
}

#[test]
fn emfile_asks_nothing_and_builds_nothing() {
    let t = fdtable_vfs::Task::with_rlimit(fdtable_vfs::MemFs::new(), (1, 1));
    assert_eq!(t.open(b"/dev/null", 0, 0), Ok(0));
    let (n, ()) = allocations(|| {
        for _ in 0..100 {
            assert_eq!(t.open(b"/dev/null", 0, 0), Err(Errno::EMFILE));
        }
    });
    assert_eq!(n, 0);
}

#[test]
fn ioctl_paths_allocate_nothing() {
    let t = bench_task();
    let [r, w] = t.pipe2(0).unwrap();
    t.write(w, b"xyz").unwrap();
    let dev = t.open(b"/dev/testdev", O_RDWR as i32, 0).unwrap();
    let mut raw = [0u8; 8];
    let mut mem = LinearMemory::new(0x1000, &mut raw);
    assert_eq!(ioctl_fionread(&t, r), Ok(3));
    let (n, ()) = allocations(|| {
        for _ in 0..1000 {
            assert_eq!(ioctl_fionread(&t, r), Ok(3));
            assert_eq!(t.ioctl(dev, TESTDEV_IOC_NOP, 0, &mut mem), Ok(0));
            assert_eq!(t.ioctl(dev, TESTDEV_IOC_GET, 0x1000, &mut mem), Ok(0));
            assert_eq!(t.ioctl(r, 0x1234, 0, &mut mem), Err(Errno::ENOTTY));
        }
    });
    assert_eq!(n, 0);
}

#[test]
fn dd_loop_allocates_only_new_pages() {
    let t = bench_task();
    let dd = Dd::open(&t, b"/tmp/out").unwrap();
    dd.pair(&t).unwrap(); // the first byte allocates page 0
    let (n, ()) = allocations(|| dd.run(&t, 4095).unwrap());
    assert_eq!(n, 0, "writes within a page allocate nothing");
    let (n, ()) = allocations(|| dd.run(&t, 1).unwrap());
    assert_eq!(n, 1, "one new page");
}

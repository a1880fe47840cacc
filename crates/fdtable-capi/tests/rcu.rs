//! The 0.5 call `fdt_fdget_rcu` from Rust: its errors and empty results, the kind of borrow
//! it takes on unshared and shared tables, and what its RCU section holds back: a close on
//! another thread waits for `fdt_fdput`, a close on the same thread releases the file at
//! `fdt_fdput`, and sections nest; `fdt_fd_get_file` keeps a file past its lookup, and
//! refuses one whose last reference has gone. `tests/c/test_threads.c` runs it from C under
//! TSan.

mod support;

use fdtable_capi::*;
use std::ffi::c_int;
use std::ptr::{dangling_mut, null_mut};
use std::sync::Arc;
use std::time::Duration;
use support::probe::*;

const ALL: u16 = K_READ
    | K_WRITE
    | K_IOCTL
    | K_COMPAT
    | K_FLUSH
    | K_LLSEEK
    | K_POLL
    | K_GETATTR
    | K_NEVER_BLOCKS;

/// Two handles on one table (the second made by `fdt_files_share2`), freed at the end.
struct Shared(*mut fdt_files, *mut fdt_files);

impl Shared {
    fn new() -> Shared {
        let a = fdt_files_new();
        let mut b = null_mut();
        // SAFETY: a live handle; `b` is a local.
        assert_eq!(unsafe { fdt_files_share2(a, &mut b) }, 0);
        Shared(a, b)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: our handles, put once.
        unsafe {
            fdt_files_put(self.0);
            fdt_files_put(self.1);
        }
    }
}

/// `fdt_install` of a new file for `p` on `h`.
///
/// # Safety
///
/// `h` is a live handle.
unsafe fn install(h: *mut fdt_files, p: &Arc<Probe>) -> c_int {
    // SAFETY: the caller's contract; a reference we own, handed over.
    let fd = unsafe { fdt_install(h, c_file(p, FDT_O_RDWR), 0) };
    assert!(fd >= 0, "install: {fd}");
    fd
}

/// Looks `fd` up until the file is lent without a reference: the result (`FDT_FDPUT_RCU`).
///
/// # Safety
///
/// `h` is a live handle on a shared table.
unsafe fn lent(h: *mut fdt_files, fd: c_int) -> fdt_fd {
    for _ in 0..=fdtable::LEND_AFTER + 1 {
        let mut l = fdt_fd::default_empty();
        // SAFETY: the caller's contract; `l` is a local.
        assert_eq!(unsafe { fdt_fdget_rcu(h, fd, &mut l) }, 0);
        if l.flags == FDT_FDPUT_RCU {
            return l;
        }
        assert_eq!(l.flags, FDT_FDPUT_FPUT, "not lendable yet: a reference");
        // SAFETY: the result just made, on this thread.
        unsafe { fdt_fdput(l) };
    }
    panic!("the file was never lent");
}

/// `fdt_close(fd)` on the second handle of `s`, on a thread of its own: the handle is that
/// thread's until it is joined.
fn close_elsewhere(s: &Shared, fd: c_int) -> std::thread::JoinHandle<c_int> {
    let other = s.1 as usize;
    std::thread::spawn(move || {
        // SAFETY: the second handle, used by this thread alone until it is joined.
        unsafe { fdt_close(other as *mut fdt_files, fd) }
    })
}

trait Empty {
    fn default_empty() -> Self;
}

impl Empty for fdt_fd {
    fn default_empty() -> fdt_fd {
        fdt_fd {
            file: dangling_mut(),
            flags: 9,
        }
    }
}

#[test]
fn errors_give_the_empty_result_and_no_section() {
    let h = fdt_files_new();
    let p = Probe::new(0, ALL);
    // SAFETY: a live handle; results put once.
    unsafe {
        let fd = install(h, &p);
        let mut l = fdt_fd::default_empty();
        for bad in [77, -1, c_int::MAX] {
            assert_eq!(fdt_fdget_rcu(h, bad, &mut l), -libc::EBADF);
            assert!(l.file.is_null() && l.flags == 0, "the empty result");
            fdt_fdput(l);
        }
        assert_eq!(fdt_fdget_rcu(null_mut(), fd, &mut l), -libc::EINVAL);
        assert!(l.file.is_null() && l.flags == 0);
        assert_eq!(fdt_fdget_rcu(h, fd, null_mut()), -libc::EINVAL);
        let q = Probe::new(1, ALL);
        let pf = fdt_install(h, c_file(&q, FDT_O_PATH), 0);
        assert_eq!(fdt_fdget_rcu(h, pf, &mut l), -libc::EBADF, "O_PATH");
        assert!(l.file.is_null() && l.flags == 0);
        // Unshared: a borrow as fdt_fdget2's, however often the file is looked up.
        for _ in 0..=fdtable::LEND_AFTER + 1 {
            assert_eq!(fdt_fdget_rcu(h, fd, &mut l), 0);
            assert_eq!(l.flags, 0, "unshared: borrowed");
            assert_eq!(c_probe(fdt_fd_file(l)).id, 0);
            fdt_fdput(l);
        }
        fdt_files_put(h);
    }
    assert_eq!(p.releases(), 1);
}

#[test]
fn a_shared_table_lends_after_a_few_lookups_and_the_file_is_the_slots() {
    let s = Shared::new();
    let p = Probe::new(7, ALL);
    // SAFETY: live handles; results put once, on this thread.
    unsafe {
        let fd = install(s.0, &p);
        let mut l = fdt_fd::default_empty();
        assert_eq!(fdt_fdget_rcu(s.1, fd, &mut l), 0);
        assert_eq!(l.flags, FDT_FDPUT_FPUT, "a file not lent yet: a reference");
        assert_eq!(fdt_file_count(fdt_fd_file(l)), 2);
        let mut k = null_mut();
        assert_eq!(fdt_fd_get_file(l, &mut k), 0);
        assert_eq!(fdt_file_count(k), 3);
        fdt_file_put(k);
        fdt_fdput(l);
        // The empty result has no file to keep.
        let mut e = fdt_fd::default_empty();
        assert_eq!(fdt_fdget_rcu(s.1, 99, &mut e), -libc::EBADF);
        assert_eq!(fdt_fd_get_file(e, &mut k), -libc::EBADF);
        assert!(k.is_null());
        let l = lent(s.1, fd);
        assert_eq!(c_probe(fdt_fd_file(l)).id, 7);
        assert_eq!(fdt_file_count(fdt_fd_file(l)), 1, "no reference taken");
        // A reference taken inside the section keeps the file past it.
        let mut kept = null_mut();
        assert_eq!(fdt_fd_get_file(l, null_mut()), -libc::EINVAL);
        assert_eq!(fdt_fd_get_file(l, &mut kept), 0);
        assert_eq!(kept, fdt_fd_file(l));
        assert_eq!(fdt_file_count(kept), 2);
        fdt_fdput(l);
        assert_eq!(fdt_close(s.0, fd), 0);
        assert_eq!(p.releases(), 0);
        fdt_file_put(kept);
    }
    assert_eq!(p.releases(), 1);
}

#[test]
fn a_file_that_may_block_is_always_looked_up_with_a_reference() {
    let s = Shared::new();
    let p = Probe::new(6, ALL & !K_NEVER_BLOCKS);
    // SAFETY: live handles; results put once, on this thread.
    unsafe {
        let fd = install(s.0, &p);
        for _ in 0..=2 * fdtable::LEND_AFTER {
            let mut l = fdt_fd::default_empty();
            assert_eq!(fdt_fdget_rcu(s.1, fd, &mut l), 0);
            assert_eq!(l.flags, FDT_FDPUT_FPUT);
            fdt_fdput(l);
        }
    }
}

#[test]
fn a_close_on_another_thread_waits_for_fdput() {
    let s = Shared::new();
    let p = Probe::new(3, ALL);
    // SAFETY: a live handle; the result is put below, on this thread.
    let (fd, l) = unsafe {
        let fd = install(s.0, &p);
        (fd, lent(s.0, fd))
    };
    let closer = close_elsewhere(&s, fd);
    // SAFETY: the first handle, used by this thread alone; `l` is put once.
    unsafe {
        // The close has removed the descriptor and is waiting in the release for the
        // section: the file is still whole.
        // Polled with nested RCU lookups, which take no reference (a counted one could
        // make this thread's put the last, and the close would then not wait).
        loop {
            let mut x = fdt_fd::default_empty();
            let r = fdt_fdget_rcu(s.0, fd, &mut x);
            assert!(r != 0 || x.flags == FDT_FDPUT_RCU, "lent: no reference");
            fdt_fdput(x);
            if r != 0 {
                break;
            }
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !closer.is_finished(),
            "the close did not wait for the section"
        );
        assert_eq!(p.releases(), 0, "released under a lent lookup");
        assert_eq!(c_probe(fdt_fd_file(l)).id, 3);
        // Its last reference has gone: it cannot be kept any more.
        let mut kept = dangling_mut();
        assert_eq!(fdt_fd_get_file(l, &mut kept), -libc::EBADF);
        assert!(kept.is_null());
        fdt_fdput(l);
        assert_eq!(closer.join().unwrap(), 0);
    }
    assert_eq!(p.releases(), 1);
}

#[test]
fn a_close_on_the_same_thread_releases_at_fdput_and_sections_nest() {
    let s = Shared::new();
    let (p, q) = (Probe::new(4, ALL), Probe::new(5, ALL));
    // SAFETY: live handles; results put once, on this thread.
    unsafe {
        let (a, b) = (install(s.0, &p), install(s.0, &q));
        let la = lent(s.0, a);
        let lb = lent(s.0, b);
        assert_eq!(fdt_close(s.0, a), 0);
        assert_eq!(fdt_close(s.0, b), 0);
        assert_eq!((p.releases(), q.releases()), (0, 0));
        // Ended in the order they began: the outer first; both files stay until the last.
        fdt_fdput(la);
        assert_eq!(c_probe(fdt_fd_file(lb)).id, 5);
        assert_eq!((p.releases(), q.releases()), (0, 0));
        fdt_fdput(lb);
    }
    assert_eq!((p.releases(), q.releases()), (1, 1));
}

#[test]
fn an_fdput_on_another_thread_ends_nothing() {
    let s = Shared::new();
    let p = Probe::new(8, ALL);
    // SAFETY: a live handle; the result is put (again) below, on this thread.
    let (fd, l) = unsafe {
        let fd = install(s.0, &p);
        (fd, lent(s.0, fd))
    };
    // Misuse: the result put on a thread that holds no split section. Nothing ends there.
    let stray = l;
    let (file, flags) = (stray.file as usize, stray.flags);
    std::thread::spawn(move || {
        let f = fdt_fd {
            file: file as *mut fdt_file,
            flags,
        };
        // SAFETY: a contract violation the library detects: no section of this thread.
        unsafe { fdt_fdput(f) };
    })
    .join()
    .unwrap();
    // The section is still this thread's and open: a close elsewhere waits for it.
    let closer = close_elsewhere(&s, fd);
    std::thread::sleep(Duration::from_millis(50));
    assert!(!closer.is_finished(), "the stray fdput ended the section");
    assert_eq!(p.releases(), 0);
    // SAFETY: the result, put once more on the thread that made it: this one ends it.
    unsafe {
        assert_eq!(c_probe(fdt_fd_file(l)).id, 8);
        fdt_fdput(l);
    }
    assert_eq!(closer.join().unwrap(), 0);
    assert_eq!(p.releases(), 1);
}

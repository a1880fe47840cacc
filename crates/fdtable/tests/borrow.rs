//! `fdget_rcu`: files lent under an RCU section, no reference count. The file is never released
//! while lent; the release that must wait does so before the close that dropped the last
//! reference returns (or, on the borrowing thread itself, when its borrow ends).

#![cfg(not(loom))]

use fdtable::{Errno, FileLike, FileRef, Files, LEND_AFTER};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

mod common;
use common::{CloseElsewhere, Probe, blocking_probe, probe, released};

/// Looks `fd` up often enough that its file is lent without a reference from then on.
fn make_lendable(files: &Files<Probe>, fd: u32) {
    for _ in 0..=LEND_AFTER + 2 {
        if files.fdget_rcu(fd).unwrap().is_rcu() {
            return;
        }
    }
    panic!("fd {fd} not lent after {} lookups", LEND_AFTER + 3);
}

#[test]
fn a_file_is_lent_without_a_reference_once_looked_up_often() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(probe(9, &r), 0, 1024).unwrap();
    let mut other = files.share();
    // The first lookups take a reference, as fget: a file opened, read a few times and
    // closed never makes its close wait for borrowers.
    // (A thread's very first borrow registers it and takes a reference without counting; the
    // lookup that makes the file lendable takes one too.)
    let mut counted = 0;
    let f = loop {
        let f = files.fdget_rcu(0).unwrap();
        if f.is_rcu() {
            break f;
        }
        assert_eq!(f.file_count(), 2, "a counted lookup holds a reference");
        counted += 1;
        assert!(
            counted <= LEND_AFTER + 2,
            "still not lent after {counted} lookups"
        );
    };
    assert!(counted > LEND_AFTER, "lent after only {counted} lookups");
    assert_eq!(f.file_count(), 1, "a lent file: no reference taken");
    drop(f);
    // Another file of the same table is not lendable because this one is.
    files.install(probe(10, &r), 0, 1024).unwrap();
    assert!(!files.fdget_rcu(1).unwrap().is_rcu());
    other.close_fd(0).unwrap();
    other.close_fd(1).unwrap();
    assert_eq!(released(&r), 2);
}

/// Looks `fd` up through the non-blocking borrow until it is lent there.
fn make_lendable_nonblocking(files: &Files<Probe>, fd: u32) -> u32 {
    for n in 0..=LEND_AFTER + 2 {
        if files.with_fdget_rcu_nonblocking(fd, |f| f.unwrap().is_rcu()) {
            return n;
        }
    }
    panic!("fd {fd} not lent after {} lookups", LEND_AFTER + 3);
}

#[test]
fn a_file_that_may_block_is_lent_to_non_blocking_borrows_only() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(blocking_probe(4, &r), 0, 1024).unwrap();
    let mut other = files.share();
    // Blocking borrows never lend it, however often: each takes a reference.
    for _ in 0..3 * LEND_AFTER + 3 {
        files.with_fdget_rcu(0, |f| {
            let f = f.unwrap();
            assert!(!f.is_rcu());
            assert_eq!(f.file_count(), 2, "a counted lookup holds a reference");
        });
    }
    // Non-blocking ones lend it once looked up often through them, although the blocking
    // ones counted past `LEND_AFTER`: the two are counted apart.
    let counted = make_lendable_nonblocking(&files, 0);
    assert!(counted > LEND_AFTER, "lent after only {counted} lookups");
    files.with_fdget_rcu_nonblocking(0, |f| {
        let f = f.unwrap();
        assert!(f.is_rcu());
        assert_eq!(f.file_count(), 1, "a lent file: no reference taken");
        assert_eq!(f.check(), 4);
    });
    // Blocking borrows and `fdget_rcu` still count it.
    assert!(!files.with_fdget_rcu(0, |f| f.unwrap().is_rcu()));
    assert!(!files.fdget_rcu(0).unwrap().is_rcu());
    // A file that may be lent to every borrow and is looked up through the non-blocking one
    // is lent to both.
    files.install(probe(5, &r), 0, 1024).unwrap();
    make_lendable_nonblocking(&files, 1);
    assert!(files.fdget_rcu(1).unwrap().is_rcu());
    assert!(files.with_fdget_rcu(1, |f| f.unwrap().is_rcu()));
    // Free and reserved fds, and fds past the table.
    assert!(files.with_fdget_rcu_nonblocking(2, |f| f.is_none()));
    assert!(files.with_fdget_rcu_nonblocking(u32::MAX, |f| f.is_none()));
    other.close_fd(0).unwrap();
    other.close_fd(1).unwrap();
    assert_eq!(released(&r), 2);
}

#[test]
fn a_close_on_another_thread_waits_for_a_non_blocking_borrow() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(blocking_probe(8, &r), 0, 1024).unwrap();
    let other = files.share();
    make_lendable_nonblocking(&files, 0);
    let close = files.with_fdget_rcu_nonblocking(0, |f| {
        let borrowed = f.unwrap();
        assert!(borrowed.is_rcu());
        let close = CloseElsewhere::start(other, 0);
        // The release waits for this borrow, as for a file lent to every borrow.
        for _ in 0..1000 {
            assert_eq!(borrowed.check(), 8);
            std::thread::yield_now();
        }
        assert_eq!(released(&r), 0);
        assert!(
            !close.closed(),
            "the close returned while the file was lent"
        );
        // The borrow ends when the closure returns: the close is joined after that.
        close
    });
    let (other, closed) = close.join();
    // Released exactly once, before the close returned.
    assert!(closed);
    assert_eq!(released(&r), 1);
    drop(other);
    assert!(files.with_fdget_rcu_nonblocking(0, |f| f.is_none()));
}

#[test]
fn unshared_tables_lend_light_borrows() {
    let r = Arc::new(AtomicUsize::new(0));
    let files: Files<Probe> = Files::new();
    files.install(probe(1, &r), 0, 1024).unwrap();
    let f = files.fdget_rcu(0).unwrap();
    assert!(!f.is_rcu());
    assert_eq!(f.check(), 1);
    let counted = f.upgrade().unwrap();
    assert_eq!(FileRef::count(&counted), 2);
    assert!(files.fdget_rcu(1).is_none());
    assert!(files.fdget_rcu(u32::MAX).is_none());
}

#[test]
fn a_close_on_another_thread_waits_for_the_borrow() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(probe(7, &r), 0, 1024).unwrap();
    let other = files.share();
    make_lendable(&files, 0);
    let borrowed = files.fdget_rcu(0).unwrap();
    assert!(borrowed.is_rcu());
    // The table's reference and this fget's: the borrow took none.
    assert_eq!(
        FileRef::count(&files.fget(0).unwrap()),
        2,
        "no reference taken"
    );
    let close = CloseElsewhere::start(other, 0);
    // The close cannot complete (its release waits for this borrow), whatever the scheduling:
    // the file is alive and usable until the borrow ends.
    for _ in 0..1000 {
        assert_eq!(borrowed.check(), 7);
        std::thread::yield_now();
    }
    assert_eq!(released(&r), 0);
    assert!(
        !close.closed(),
        "the close returned while the file was lent"
    );
    drop(borrowed);
    let (other, closed) = close.join();
    // Released exactly once, before the close returned.
    assert!(closed);
    assert_eq!(released(&r), 1);
    assert!(files.fdget_rcu(0).is_none());
    drop(other);
}

#[test]
fn a_release_on_the_borrowing_thread_runs_when_its_borrow_ends() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(probe(3, &r), 0, 1024).unwrap();
    let mut other = files.share();
    make_lendable(&files, 0);
    {
        let borrowed = files.fdget_rcu(0).unwrap();
        assert!(borrowed.is_rcu());
        // The same thread closes the file through another handle: its release cannot wait for
        // this thread's own borrow, so it runs when the borrow ends.
        other.close_fd(0).unwrap();
        assert_eq!(released(&r), 0);
        assert_eq!(borrowed.check(), 3);
        // A lent file whose last reference is gone cannot be upgraded.
        assert!(borrowed.upgrade().is_none());
    }
    assert_eq!(released(&r), 1);
    drop(other);
}

#[test]
fn upgrade_keeps_the_file_past_the_borrow() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(probe(4, &r), 0, 1024).unwrap();
    let mut other = files.share();
    make_lendable(&files, 0);
    let kept = files.fdget_rcu(0).unwrap().upgrade().unwrap();
    other.close_fd(0).unwrap();
    assert_eq!(released(&r), 0);
    assert_eq!(kept.check(), 4);
    drop(kept);
    assert_eq!(released(&r), 1);
}

#[test]
fn borrowers_and_closers_race() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    let created = Arc::new(AtomicUsize::new(0));
    for i in 0..8 {
        files.install(probe(i, &r), 0, 1024).unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let ready = Arc::new(AtomicUsize::new(0));
    // Lookups that lent a file, published as they happen: the closes go on until at least
    // one did, so that lending overlaps with closes however the threads are scheduled (a
    // slow reader, under a sanitizer on a busy machine, could see every file replaced
    // before its 64th lookup).
    let lent_so_far = Arc::new(AtomicUsize::new(0));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let h = files.share();
            let (stop, ready, lent_so_far) = (stop.clone(), ready.clone(), lent_so_far.clone());
            std::thread::spawn(move || {
                // The first borrow, before the closes start, counts: the race is exercised by
                // whatever overlaps after it.
                assert!(h.fdget_rcu(0).is_some_and(|f| f.check() == 0));
                let (mut seen, mut lent) = (1usize, 0usize);
                // ORDERING: Relaxed; a start signal.
                ready.fetch_add(1, Ordering::Relaxed);
                // ORDERING: Relaxed; a stop signal.
                while !stop.load(Ordering::Relaxed) {
                    for fd in 0..8 {
                        // Each file is looked up in bursts, so that some become lendable.
                        for k in 0..16 {
                            // Half through the closure form, which ends its borrows on paths
                            // of their own.
                            let had_lent = lent > 0;
                            if k % 2 == 0 {
                                lent += h.with_fdget_rcu(fd, |f| {
                                    f.map_or(0, |f| {
                                        f.check();
                                        usize::from(f.is_rcu())
                                    })
                                });
                            } else if let Some(f) = h.fdget_rcu(fd) {
                                f.check();
                                seen += 1;
                                lent += usize::from(f.is_rcu());
                                if seen.is_multiple_of(7) {
                                    drop(f.upgrade());
                                }
                            }
                            if lent > 0 && !had_lent {
                                // ORDERING: Relaxed; a progress signal.
                                lent_so_far.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                }
                (seen, lent)
            })
        })
        .collect();
    let lent_any = || lent_so_far.load(Ordering::Relaxed) > 0;
    // ORDERING: Relaxed; a start signal.
    while ready.load(Ordering::Relaxed) < 2 {
        std::thread::yield_now();
    }
    // ORDERING (in `lent_any`): Relaxed; a progress signal.
    let mut i = 0;
    while i < 3000 || (!lent_any() && i < 3_000_000) {
        let fd = (i % 8) as u32;
        let _ = files.close_fd(fd);
        // ORDERING: Relaxed; a counter read after the joins.
        created.fetch_add(1, Ordering::Relaxed);
        assert_eq!(files.replace_fd(fd, probe(100 + i, &r), 0, 1024), Ok(fd));
        i += 1;
    }
    // ORDERING: Relaxed; a stop signal.
    stop.store(true, Ordering::Relaxed);
    let (seen, lent) = readers
        .into_iter()
        .map(|t| t.join().unwrap())
        .fold((0, 0), |(s, l), (a, b)| (s + a, l + b));
    assert!(seen > 0);
    assert!(
        lent > 0,
        "no lookup lent a file without a reference ({seen} lookups)"
    );
    drop(files);
    // ORDERING: Relaxed; the threads are joined.
    assert_eq!(released(&r), 8 + created.load(Ordering::Relaxed));
    let _ = Errno::EBADF;
}

/// `with_fdget_rcu`: a light borrow on an unshared table, a counted reference for a file not
/// lent yet, a file lent in a section once it is, `None` for free fds and fds past the table.
#[test]
fn with_fdget_rcu_takes_every_kind_of_borrow() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    let fd = files.install(probe(5, &r), 0, 1024).unwrap();
    let kind = |files: &Files<Probe>, fd| {
        files.with_fdget_rcu(fd, |f| {
            f.map(|f| {
                assert_eq!(f.check(), 5);
                (f.is_rcu(), f.shared_file())
            })
        })
    };
    assert_eq!(
        kind(&files, fd),
        Some((false, false)),
        "light, one reference"
    );
    assert_eq!(kind(&files, fd + 1), None);
    assert_eq!(kind(&files, 100_000), None);
    let other = files.share();
    assert_eq!(
        kind(&files, fd),
        Some((false, true)),
        "counted: the table's reference and ours"
    );
    make_lendable(&files, fd);
    assert_eq!(kind(&files, fd), Some((true, true)), "lent in a section");
    assert_eq!(kind(&files, fd + 1), None);
    assert_eq!(kind(&files, 100_000), None);
    drop(other);
    drop(files);
    assert_eq!(released(&r), 1);
}

/// Borrows nest and end in any order: a close on another thread waits for the last of this
/// thread's borrows that could hold the file, not for the first to end.
#[test]
fn nested_borrows_end_in_any_order() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(probe(6, &r), 0, 1024).unwrap();
    files.install(probe(7, &r), 0, 1024).unwrap();
    let mut other = files.share();
    make_lendable(&files, 0);
    make_lendable(&files, 1);
    let outer = files.fdget_rcu(0).unwrap();
    let inner = files.fdget_rcu(1).unwrap();
    assert!(outer.is_rcu() && inner.is_rcu());
    // The outer borrow ends first; the inner one still holds file 7.
    drop(outer);
    let closed = Arc::new(AtomicBool::new(false));
    let closer = {
        let closed = closed.clone();
        std::thread::spawn(move || {
            other.close_fd(1).unwrap();
            // ORDERING: SeqCst (more than needed); read after the borrow below.
            closed.store(true, Ordering::SeqCst);
            other
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(50));
    // ORDERING: SeqCst; see above. The close may not return while the inner borrow lives:
    // its release waits for it.
    assert!(!closed.load(Ordering::SeqCst), "released under a borrow");
    assert_eq!(inner.check(), 7);
    assert_eq!(released(&r), 0);
    drop(inner);
    let other = closer.join().unwrap();
    assert_eq!(released(&r), 1);
    drop(other);
    drop(files);
    assert_eq!(released(&r), 2);
}

/// Two releases wait for this thread's borrow; the first to run panics (a file's `Drop`):
/// the other stays queued and runs at the next borrow's end instead of being lost.
#[test]
fn a_panicking_release_at_a_borrows_end_leaves_the_others_queued() {
    struct Bomb;
    impl FileLike for Bomb {}
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("a file's release panicked");
        }
    }
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(probe(31, &r), 0, 1024).unwrap();
    files.install(probe(32, &r), 0, 1024).unwrap();
    let mut other = files.share();
    make_lendable(&files, 0);
    make_lendable(&files, 1);
    let mut bombs: Files<Bomb> = Files::new();
    bombs.install(FileRef::new(Bomb), 0, 1024).unwrap();
    let mut bomb_other = bombs.share();
    for _ in 0..=LEND_AFTER + 2 {
        drop(bombs.fdget_rcu(0));
    }
    assert!(bombs.fdget_rcu(0).unwrap().is_rcu());
    let borrowed = files.fdget_rcu(1).unwrap();
    assert!(borrowed.is_rcu());
    // Both releases wait for the borrow: the probe's queued first, the bomb's last (run
    // first).
    other.close_fd(0).unwrap();
    bomb_other.close_fd(0).unwrap();
    assert_eq!(released(&r), 0);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(borrowed)));
    assert!(caught.is_err());
    assert_eq!(released(&r), 0, "queued behind the panicking release");
    // The next borrow's end runs it.
    drop(files.fdget_rcu(1));
    assert_eq!(released(&r), 1);
    drop((other, bomb_other, bombs, files));
}

/// A borrow kept in a thread-local of a `'static` table, destroyed after the library's own
/// exit handler: the thread's record stays its own until the borrow ends (debug builds check
/// that a borrow's end finds its record in use).
#[test]
fn a_borrow_left_in_a_thread_local_ends_on_its_own_record() {
    struct Kept(Option<fdtable::RcuFd<'static, Probe>>);
    impl Drop for Kept {
        fn drop(&mut self) {
            let f = self.0.take().unwrap();
            assert_eq!(f.check(), 41);
            drop(f);
        }
    }
    std::thread_local! {
        static KEPT: std::cell::RefCell<Option<Kept>> = const { std::cell::RefCell::new(None) };
    }
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(probe(41, &r), 0, 1024).unwrap();
    let handle = files.share();
    let raw = std::thread::spawn(move || {
        // Registered before the library's exit handler, so destroyed after it.
        KEPT.with(|_| ());
        let raw = Box::into_raw(Box::new(handle));
        // SAFETY: freed below only after this thread (the only user of the reference, up to
        // its last thread-local destructor) has exited.
        let shared: &'static Files<Probe> = unsafe { &*raw };
        make_lendable(shared, 0);
        let f = shared.fdget_rcu(0).unwrap();
        assert!(f.is_rcu());
        KEPT.with(|c| *c.borrow_mut() = Some(Kept(Some(f))));
        raw as usize
    })
    .join()
    .unwrap();
    // SAFETY: from `Box::into_raw` above; its thread, the only user, has exited (`join`
    // returns after its thread-local destructors ran).
    drop(unsafe { Box::from_raw(raw as *mut Files<Probe>) });
    // The exited thread's borrow is over: this release (the table is shared with the leaked
    // handle, so the close drops the last reference) does not wait for it.
    files.close_fd(0).unwrap();
    assert_eq!(released(&r), 1);
}

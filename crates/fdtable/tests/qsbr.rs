//! `fdget_qsbr`: files lent to a QSBR reader ([`QsbrThread`]) with no section and no reference
//! count. A release waits for every online reader's next quiescent state; one that happens
//! on an online reader runs at its own; an offline or exited reader holds nothing back.
//!
//! The tests of this binary run in parallel, and a release in one waits for the readers of
//! all: like any user, each goes offline before it blocks.

#![cfg(not(loom))]

use fdtable::rcu::QsbrThread;
use fdtable::{Errno, FileLike, FileRef, Files, LEND_AFTER};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

mod common;
use common::{CloseElsewhere, Probe, probe, released};

/// Looks `fd` up until its file is lent without a reference.
fn make_lendable(files: &Files<Probe>, me: &QsbrThread, fd: u32) {
    for _ in 0..=LEND_AFTER + 2 {
        if files.fdget_qsbr(me, fd).unwrap().is_rcu() {
            return;
        }
    }
    panic!("fd {fd} not lent after {} lookups", LEND_AFTER + 3);
}

#[test]
fn one_reader_per_thread_and_lookups_lend_after_a_few() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(probe(1, &r), 0, 1024).unwrap();
    let mut me = QsbrThread::online().unwrap();
    assert_eq!(QsbrThread::online().unwrap_err(), Errno::EBUSY);
    // Unshared: light borrows.
    let f = files.fdget_qsbr(&me, 0).unwrap();
    assert!(!f.is_rcu());
    assert_eq!(f.check(), 1);
    drop(f);
    assert!(files.fdget_qsbr(&me, 1).is_none());
    assert!(files.fdget_qsbr(&me, u32::MAX).is_none());
    // Shared: counted first, then lent.
    let other = files.share();
    let mut counted = 0;
    loop {
        let f = other.fdget_qsbr(&me, 0).unwrap();
        if f.is_rcu() {
            assert_eq!(f.file_count(), 1, "a lent file: no reference taken");
            break;
        }
        assert_eq!(f.file_count(), 2, "a counted lookup holds a reference");
        counted += 1;
        assert!(counted <= LEND_AFTER + 1, "not lent after {counted}");
    }
    me.quiescent_state();
    assert!(other.fdget_qsbr(&me, 5).is_none());
    assert!(other.fdget_qsbr(&me, u32::MAX).is_none());
    drop(me);
    // Online again once the first is gone.
    let me = QsbrThread::online().unwrap();
    assert!(other.fdget_qsbr(&me, 0).unwrap().is_rcu());
    drop(other);
    // The last reference goes on this online thread: the release waits for its quiescent
    // state (here, the reader's drop).
    drop(files);
    assert_eq!(released(&r), 0);
    drop(me);
    assert_eq!(released(&r), 1);
}

#[test]
fn a_close_on_another_thread_waits_for_the_readers_quiescent_state() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(probe(7, &r), 0, 1024).unwrap();
    let other = files.share();
    let mut me = QsbrThread::online().unwrap();
    make_lendable(&files, &me, 0);
    {
        let lent = files.fdget_qsbr(&me, 0).unwrap();
        assert!(lent.is_rcu());
        let close = CloseElsewhere::start(other, 0);
        // The close cannot complete while this thread is online without a quiescent state,
        // whether or not the lent file is still in use.
        for _ in 0..1000 {
            assert_eq!(lent.check(), 7);
            std::thread::yield_now();
        }
        drop(lent);
        for _ in 0..100 {
            std::thread::yield_now();
        }
        assert_eq!(released(&r), 0);
        assert!(!close.closed(), "the close did not wait");
        me.quiescent_state();
        // Offline while blocked (the protocol): a release elsewhere may wait for this thread.
        let (other, closed) = me.offline(|| close.join());
        assert!(closed);
        assert_eq!(released(&r), 1);
        drop(other);
    }
    assert!(files.fdget_qsbr(&me, 0).is_none());
}

#[test]
fn a_release_on_the_reader_runs_at_its_quiescent_state() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(probe(3, &r), 0, 1024).unwrap();
    let mut other = files.share();
    let mut me = QsbrThread::online().unwrap();
    make_lendable(&files, &me, 0);
    let lent = files.fdget_qsbr(&me, 0).unwrap();
    // The same thread closes it through another handle: the release cannot wait for this
    // thread's own quiescent state, so it runs there.
    other.close_fd(0).unwrap();
    assert_eq!(lent.check(), 3);
    assert!(lent.upgrade().is_none(), "its last reference is gone");
    drop(lent);
    assert_eq!(released(&r), 0);
    // A borrow section that ends meanwhile does not run it either.
    files.install(probe(4, &r), 0, 1024).unwrap();
    drop(files.fdget_rcu(0));
    assert_eq!(released(&r), 0);
    me.quiescent_state();
    assert_eq!(released(&r), 1);
    // Going offline runs what waits too.
    make_lendable(&files, &me, 0);
    other.close_fd(0).unwrap();
    assert_eq!(released(&r), 1);
    let during = me.offline(|| released(&r));
    assert_eq!(during, 2, "offline ran the release before `f`");
    drop(me);
    drop(other);
}

#[test]
fn an_offline_reader_holds_nothing_back() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    files.install(probe(5, &r), 0, 1024).unwrap();
    let mut other = files.share();
    let mut me = QsbrThread::online().unwrap();
    make_lendable(&files, &me, 0);
    me.offline(|| {
        // A close on another thread completes while this one is offline.
        let t = std::thread::spawn(move || {
            other.close_fd(0).unwrap();
            other
        });
        drop(t.join().unwrap());
    });
    assert_eq!(released(&r), 1);
    assert!(files.fdget_qsbr(&me, 0).is_none());
}

/// A reader kept in a thread-local, with a table handle, whose destructor looks a file up:
/// whichever of it and the library's own exit runs first, the lookup is covered and the
/// thread's record goes back; afterwards the exited reader holds no release back.
#[test]
fn a_reader_left_in_a_thread_local_does_not_stall_grace_periods() {
    struct Kept {
        me: QsbrThread,
        files: Files<Probe>,
    }
    impl Drop for Kept {
        fn drop(&mut self) {
            // Perhaps after the library's exit handler: the record is still this thread's.
            assert_eq!(
                self.files.fdget_qsbr(&self.me, 0).map(|f| f.check()),
                Some(8)
            );
        }
    }
    std::thread_local! {
        static KEPT: std::cell::RefCell<Option<Kept>> = const { std::cell::RefCell::new(None) };
    }
    for touch_first in [false, true] {
        let r = Arc::new(AtomicUsize::new(0));
        let mut files: Files<Probe> = Files::new();
        files.install(probe(8, &r), 0, 1024).unwrap();
        let other = files.share();
        std::thread::spawn(move || {
            if touch_first {
                // Registered before the library's exit handler, so destroyed after it: the
                // handler leaves the record to the reader's drop.
                KEPT.with(|_| ());
            }
            let me = QsbrThread::online().unwrap();
            make_lendable(&other, &me, 0);
            assert!(other.fdget_qsbr(&me, 0).unwrap().is_rcu());
            KEPT.with(|c| *c.borrow_mut() = Some(Kept { me, files: other }));
        })
        .join()
        .unwrap();
        // The exited reader is gone: this release (of a lent file) does not wait for it.
        files.close_fd(0).unwrap();
        assert_eq!(released(&r), 1);
    }
}

#[test]
fn a_second_reader_is_refused_even_while_the_first_is_offline() {
    let mut me = QsbrThread::online().unwrap();
    assert_eq!(QsbrThread::online().unwrap_err(), Errno::EBUSY);
    let second = me.offline(QsbrThread::online);
    assert_eq!(second.unwrap_err(), Errno::EBUSY);
    drop(me);
    let again = QsbrThread::online().unwrap();
    drop(again);
}

/// A file whose `Drop` panics, released at a quiescent state: the reader comes back online
/// (its lookups stay covered) and the releases queued behind it still run.
#[test]
fn a_panicking_release_at_a_quiescent_state_leaves_the_reader_online() {
    struct Bomb(Arc<AtomicUsize>);
    impl FileLike for Bomb {}
    impl Drop for Bomb {
        fn drop(&mut self) {
            // ORDERING: SeqCst (more than needed); a test counter.
            self.0.fetch_add(1, Ordering::SeqCst);
            panic!("a file's release panicked");
        }
    }
    let r = Arc::new(AtomicUsize::new(0));
    let bombs = Arc::new(AtomicUsize::new(0));
    let mut bomb_files: Files<Bomb> = Files::new();
    bomb_files
        .install(FileRef::new(Bomb(bombs.clone())), 0, 1024)
        .unwrap();
    let mut bomb_other = bomb_files.share();
    let mut files: Files<Probe> = Files::new();
    files.install(probe(21, &r), 0, 1024).unwrap();
    files.install(probe(22, &r), 0, 1024).unwrap();
    let mut other = files.share();
    let mut me = QsbrThread::online().unwrap();
    make_lendable(&files, &me, 0);
    for _ in 0..=LEND_AFTER + 2 {
        drop(bomb_files.fdget_qsbr(&me, 0));
    }
    assert!(bomb_files.fdget_qsbr(&me, 0).unwrap().is_rcu());
    // Both releases wait for this thread: the probe's first, the bomb's last (run first).
    other.close_fd(0).unwrap();
    bomb_other.close_fd(0).unwrap();
    assert_eq!(released(&r), 0);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| me.quiescent_state()));
    assert!(caught.is_err());
    // ORDERING: SeqCst (more than needed); a test counter.
    assert_eq!(bombs.load(Ordering::SeqCst), 1);
    // Back online: a file lent now is not released under the lookup by another thread.
    make_lendable(&files, &me, 1);
    let f = files.fdget_qsbr(&me, 1).unwrap();
    assert!(f.is_rcu());
    let t = std::thread::spawn(move || {
        other.close_fd(1).unwrap();
        other
    });
    for _ in 0..200 {
        std::thread::yield_now();
    }
    assert_eq!(f.check(), 22, "released under an online reader");
    drop(f);
    // The probe queued behind the bomb runs at the next quiescent state.
    me.quiescent_state();
    assert!(released(&r) >= 1);
    let other = me.offline(|| t.join().unwrap());
    assert_eq!(released(&r), 2);
    drop((other, bomb_other, bomb_files, files));
}

#[test]
fn readers_and_closers_race() {
    // Each close of a lent file waits for a quiescent state of every reader: with more busy
    // threads than CPUs, that is a scheduler slice, so the test stays small.
    const THREADS: usize = 1;
    const ROUNDS: usize = 300;
    let r = Arc::new(AtomicUsize::new(0));
    let mut files: Files<Probe> = Files::new();
    for i in 0..8 {
        files.install(probe(100 + i, &r), 0, 1024).unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..THREADS)
        .map(|_| {
            let h = files.share();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut me = QsbrThread::online().unwrap();
                let mut seen = 0usize;
                let mut passes = 0;
                // ORDERING: Relaxed; a stop flag.
                while passes < 100 || !stop.load(Ordering::Relaxed) {
                    passes += 1;
                    for fd in 0..8 {
                        if let Some(f) = h.fdget_qsbr(&me, fd) {
                            f.check();
                            seen += 1;
                        }
                    }
                    me.quiescent_state();
                }
                seen
            })
        })
        .collect();
    let mut closer = files.share();
    for round in 0..ROUNDS {
        let fd = (round % 8) as u32;
        let _ = closer.close_fd(fd);
        closer.install(probe(1000 + round, &r), 0, 1024).unwrap();
    }
    // ORDERING: Relaxed; a stop flag.
    stop.store(true, Ordering::Relaxed);
    let seen: usize = readers.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(seen > 0);
    drop(closer);
    drop(files);
    fdtable::reclaim_drain();
    assert_eq!(released(&r), 8 + ROUNDS, "every file released exactly once");
}

#[test]
fn try_unwrap_waits_for_offline() {
    let r = Arc::new(AtomicUsize::new(0));
    let mut me = QsbrThread::online().unwrap();
    let f = probe(11, &r);
    // Online, as inside a borrow: the reference comes back.
    let Err(f) = FileRef::try_unwrap(f) else {
        panic!("unwrapped while online");
    };
    let v = me.offline(|| FileRef::try_unwrap(f).ok().expect("offline: the value"));
    assert_eq!(v.check(), 11);
    drop(v);
    assert_eq!(released(&r), 1);
}

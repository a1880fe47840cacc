//! loom models of every race the table handles.
//!
//! Run with `ci/loom` (`RUSTFLAGS="--cfg loom" cargo test -p fdtable --test loom --release`).
//! Under loom the table starts with 2 slots (`NR_OPEN_DEFAULT`), so a model reaches growth in
//! a couple of steps.
//!
//! Each file carries a loom `UnsafeCell` that its release (drop) writes and every user reads:
//! if a lookup could hand out a file whose release is not ordered after the use, loom reports
//! the racing accesses. Every model also counts releases: each file is released exactly once,
//! after every handle and reference is gone.

#![cfg(loom)]

use fdtable::{Errno, FdState, FileLike, FileRef, Files};
use loom::cell::UnsafeCell;
use loom::thread;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const NOFILE: u64 = 1024;

struct Probe {
    id: usize,
    /// Written by the release, read by every use.
    alive: UnsafeCell<usize>,
    releases: Arc<AtomicUsize>,
    /// Like a pipe: lent to non-blocking borrows only.
    blocking: bool,
}

impl FileLike for Probe {
    fn may_lend(&self) -> bool {
        !self.blocking
    }

    fn may_lend_nonblocking(&self) -> bool {
        true
    }
}

// SAFETY: `alive` is only read by users and written once by the release; loom checks that the
// write is ordered after every read, which is exactly the property under test.
unsafe impl Sync for Probe {}

impl Probe {
    /// A use of the file: must happen-before its release.
    fn touch(&self) -> usize {
        self.alive.with(|p| {
            // SAFETY: loom checks this read against the release's write.
            let v = unsafe { *p };
            assert_eq!(v, self.id, "file used after its release");
            v
        })
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.alive.with_mut(|p| {
            // SAFETY: loom checks this write against every use.
            unsafe { *p = usize::MAX }
        });
        if LOOKUP_THREAD.with(|c| c.get()) {
            saw("released by the lookup");
        }
        // ORDERING: SeqCst; a std counter loom does not model, read after every thread of
        // the execution is joined (which orders it); any ordering would do.
        self.releases.fetch_add(1, Ordering::SeqCst);
    }
}

fn probe(id: usize, releases: &Arc<AtomicUsize>) -> FileRef<Probe> {
    FileRef::new(Probe {
        id,
        alive: UnsafeCell::new(id),
        releases: releases.clone(),
        blocking: false,
    })
}

/// A probe lent to non-blocking borrows only (`Files::with_fdget_rcu_nonblocking`).
fn blocking_probe(id: usize, releases: &Arc<AtomicUsize>) -> FileRef<Probe> {
    FileRef::new(Probe {
        id,
        alive: UnsafeCell::new(id),
        releases: releases.clone(),
        blocking: true,
    })
}

/// The outcomes the executions of the current model reached (models run one at a time).
static SEEN: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Records that this execution reached `outcome`.
fn saw(outcome: &'static str) {
    SEEN.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(outcome);
}

loom::thread_local! {
    /// Set on the thread that looks up, so a release can tell who ran it.
    static LOOKUP_THREAD: std::cell::Cell<bool> = std::cell::Cell::new(false);
}

/// [`model`], then checks that the executions reached every outcome in `expected`: a model
/// whose racy branch no execution took proves nothing about it.
fn model_reaching(expected: &[&'static str], f: impl Fn() + Sync + Send + 'static) {
    model_reaching_bounded(3, expected, f)
}

/// [`model_reaching`] with a default preemption bound of `bound`.
fn model_reaching_bounded(
    bound: usize,
    expected: &[&'static str],
    f: impl Fn() + Sync + Send + 'static,
) {
    model_bounded(bound, f);
    let seen = SEEN.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for e in expected {
        assert!(
            seen.contains(e),
            "no execution reached {e:?}; reached {seen:?}"
        );
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    model_bounded(3, f)
}

/// [`model`] with a default preemption bound of `bound` (`LOOM_MAX_PREEMPTIONS` still wins).
fn model_bounded(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    // The reclamation model's state is process-wide: one model at a time.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    SEEN.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(bound);
    }
    let iterations = Arc::new(AtomicUsize::new(0));
    let it = iterations.clone();
    b.check(move || {
        // ORDERING: Relaxed; counts executions, read after `check` returns.
        it.fetch_add(1, Ordering::Relaxed);
        f();
        fdtable::reclaim_drain();
    });
    // A model that explores a single interleaving checks nothing.
    // ORDERING: Relaxed; counts executions, read after `check` returns.
    let n = iterations.load(Ordering::Relaxed);
    assert!(n > 1, "loom explored only {n} execution(s)");
    if std::env::var_os("LOOM_REPORT").is_some() {
        eprintln!("explored {n} executions");
    }
}

/// A lock-free lookup races with a close of the same fd: it gets the file (and may use it until
/// it drops its reference) or nothing; the file is released exactly once.
#[test]
fn lookup_vs_close() {
    model_reaching(&["lookup got the file", "lookup found it closed"], || {
        let rel = Arc::new(AtomicUsize::new(0));
        let mut a: Files<Probe> = Files::new();
        assert_eq!(a.install(probe(7, &rel), 0, NOFILE), Ok(0));
        let b = a.share();
        let t = thread::spawn(move || {
            match b.fget(0) {
                Some(f) => {
                    f.touch();
                    saw("lookup got the file");
                }
                None => saw("lookup found it closed"),
            }
            drop(b);
        });
        a.close_fd(0).unwrap();
        t.join().unwrap();
        drop(a);
        // ORDERING: SeqCst; the release counter, read after the threads are joined.
        assert_eq!(rel.load(Ordering::SeqCst), 1);
    });
}

/// The light lookup of the surviving handle races with the other handle going away. The
/// sibling closes fd 1 (releasing its file) and exits; the survivor looks up fd 0, then fd 1.
/// Once a lookup sees the handle alone it borrows without a reference, and then everything the
/// sibling did before leaving must be visible: fd 1 must be gone, never a stale pointer to the
/// released file (loom would report the use racing with the release's write).
///
/// The survivor runs on the spawned thread: loom's default schedule runs the main thread
/// (here the sibling) first, so the light path is among the executions explored.
#[test]
fn light_lookup_vs_sharer_exit() {
    model_reaching(
        &[
            "shared lookup (reference)",
            "light lookup (no reference)",
            "shared lookup of fd 1 got the file",
            "fd 1 closed first",
        ],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(3, &rel), 0, NOFILE), Ok(0));
            assert_eq!(a.install(probe(4, &rel), 0, NOFILE), Ok(1));
            let mut b = a.share();
            let t = thread::spawn(move || {
                let light = {
                    let f = a.fdget(0).expect("fd 0 stays open");
                    assert_eq!(f.touch(), 3);
                    let light = !f.needs_put();
                    saw(if light {
                        "light lookup (no reference)"
                    } else {
                        "shared lookup (reference)"
                    });
                    light
                };
                match a.fdget(1) {
                    Some(f) => {
                        assert!(!light, "alone, yet fd 1 was still there");
                        assert_eq!(f.touch(), 4);
                        saw("shared lookup of fd 1 got the file");
                    }
                    None => saw("fd 1 closed first"),
                }
                a
            });
            // The sibling closes fd 1 and exits.
            b.close_fd(1).unwrap();
            drop(b);
            let a = t.join().unwrap();
            assert!(a.fdget(1).is_none());
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 1);
            drop(a);
            // ORDERING: SeqCst; as above.
            assert_eq!(rel.load(Ordering::SeqCst), 2);
        },
    );
}

/// A lookup races with dup2 replacing the file at its fd: it sees the old or the new file,
/// never a released one.
#[test]
fn lookup_vs_dup2_replace() {
    model_reaching(
        &["lookup saw the old file", "lookup saw the new file"],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(10, &rel), 0, NOFILE), Ok(0));
            assert_eq!(a.install(probe(11, &rel), 0, NOFILE), Ok(1));
            let b = a.share();
            let t = thread::spawn(move || {
                let id = b.fget(1).map(|f| f.touch());
                match id {
                    Some(11) => saw("lookup saw the old file"),
                    Some(10) => saw("lookup saw the new file"),
                    other => panic!("{other:?}"),
                }
            });
            assert_eq!(a.dup2(0, 1, NOFILE), Ok(1));
            t.join().unwrap();
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 1, "file 11 released once");
            drop(a);
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 2);
        },
    );
}

/// An install into a reserved slot races with another task growing the table (an alloc past
/// `max_fds`): the install is never lost in the retired array.
#[test]
fn install_vs_grow() {
    model(|| {
        let rel = Arc::new(AtomicUsize::new(0));
        let mut a: Files<Probe> = Files::new();
        assert_eq!(a.install(probe(0, &rel), 0, NOFILE), Ok(0));
        let reserved = a.alloc_fd(0, NOFILE, 0).unwrap();
        assert_eq!(reserved, 1);
        let b = a.share();
        let f1 = probe(1, &rel);
        let t = thread::spawn(move || {
            b.fd_install(1, f1).unwrap();
            drop(b);
        });
        // Slots 0 and 1 are taken: this allocation grows the 2-slot table.
        assert_eq!(a.install(probe(2, &rel), 0, NOFILE), Ok(2));
        t.join().unwrap();
        assert_eq!(a.fget(1).map(|f| f.touch()), Some(1));
        assert_eq!(a.fget(2).map(|f| f.touch()), Some(2));
        drop(a);
        // ORDERING: SeqCst; the release counter, read after the threads are joined.
        assert_eq!(rel.load(Ordering::SeqCst), 3);
    });
}

/// A lock-free lookup races with growth: it may read the retired array, and must still find
/// the file (or retry into the new array), and the retired array must outlive it.
#[test]
fn lookup_vs_grow() {
    model(|| {
        let rel = Arc::new(AtomicUsize::new(0));
        let mut a: Files<Probe> = Files::new();
        assert_eq!(a.install(probe(5, &rel), 0, NOFILE), Ok(0));
        assert_eq!(a.install(probe(6, &rel), 0, NOFILE), Ok(1));
        let b = a.share();
        let t = thread::spawn(move || {
            assert_eq!(b.fget(1).map(|f| f.touch()), Some(6));
        });
        assert_eq!(a.install(probe(8, &rel), 0, NOFILE), Ok(2));
        t.join().unwrap();
        drop(a);
        // ORDERING: SeqCst; the release counter, read after the threads are joined.
        assert_eq!(rel.load(Ordering::SeqCst), 3);
    });
}

/// A `dup` that must grow the table races with a close of its source fd on another handle.
/// Growth drops the lock around the new array's allocation, so the close can run inside the
/// dup: the dup counted its reference before allocating (as the kernel's `dup` takes `fget`
/// first), so it installs a live file, or it finds the fd closed (EBADF); the file is released
/// exactly once, after its last use. Without the counted reference the dup installed a file
/// whose last reference the close had dropped.
#[test]
fn dup_growing_vs_close() {
    model_reaching_events(
        &["dup installed the file", "dup found the fd closed"],
        &[fdtable::events::Event::DupSourceClosed],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(1, &rel), 0, NOFILE), Ok(0));
            assert_eq!(a.install(probe(2, &rel), 0, NOFILE), Ok(1));
            let mut b = a.share();
            let t = thread::spawn(move || {
                let r = b.close_fd(0);
                drop(b);
                r
            });
            // Slots 0 and 1 are taken: the dup grows the 2-slot table.
            let d = a.dup(0, NOFILE);
            assert_eq!(t.join().unwrap(), Ok(()));
            match d {
                Ok(fd) => {
                    // 2, or 0 when the close freed it while the table grew (the lowest free
                    // fd after the growth, as in the kernel).
                    assert!(fd == 2 || fd == 0, "{fd}");
                    saw("dup installed the file");
                    assert_eq!(a.fget(fd).map(|f| f.touch()), Some(1));
                    // ORDERING: SeqCst; the release counter, read after the join.
                    assert_eq!(rel.load(Ordering::SeqCst), 0, "released while installed");
                }
                Err(e) => {
                    assert_eq!(e, Errno::EBADF);
                    saw("dup found the fd closed");
                }
            }
            drop(a);
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 2);
        },
    );
}

/// Two tasks close the same fd: exactly one succeeds, the other gets EBADF, one release.
#[test]
fn close_vs_close() {
    model_reaching(&["first closer won", "second closer won"], || {
        let rel = Arc::new(AtomicUsize::new(0));
        let mut a: Files<Probe> = Files::new();
        assert_eq!(a.install(probe(1, &rel), 0, NOFILE), Ok(0));
        let mut b = a.share();
        let t = thread::spawn(move || b.close_fd(0));
        let mine = a.close_fd(0);
        let theirs = t.join().unwrap();
        assert!(
            matches!(
                (mine, theirs),
                (Ok(()), Err(Errno::EBADF)) | (Err(Errno::EBADF), Ok(()))
            ),
            "{mine:?} {theirs:?}"
        );
        saw(if mine.is_ok() {
            "first closer won"
        } else {
            "second closer won"
        });
        // ORDERING: SeqCst; the release counter, read after the threads are joined.
        assert_eq!(rel.load(Ordering::SeqCst), 1);
    });
}

/// A fork copies the table while another task of the parent allocates, installs and closes:
/// the child sees a consistent table (an in-progress open is not copied), takes its own
/// reference on every file it copied, and every file is released exactly once at the end.
#[test]
fn fork_vs_alloc_and_close() {
    model_reaching(
        &[
            "child copied fd 0",
            "child saw fd 0 closed",
            "child copied the new file",
        ],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(0, &rel), 0, NOFILE), Ok(0));
            assert_eq!(a.install(probe(1, &rel), 0, NOFILE), Ok(1));
            let b = a.share();
            let t = thread::spawn(move || {
                let child = b.fork().unwrap();
                saw(match child.fd_state(0) {
                    FdState::Installed { .. } if child.fget(0).map(|f| f.touch()) == Some(0) => {
                        "child copied fd 0"
                    }
                    _ => "child saw fd 0 closed",
                });
                for fd in 0..4 {
                    match child.fd_state(fd) {
                        FdState::Free => {}
                        FdState::Installed { .. } => {
                            let id = child.fget(fd).unwrap().touch();
                            if id == 2 {
                                saw("child copied the new file");
                            }
                        }
                        FdState::Reserved => panic!("reserved fd {fd} copied into the child"),
                    }
                }
                drop(child);
                drop(b);
            });
            a.close_fd(0).unwrap();
            let r = a.alloc_fd(0, NOFILE, 0).unwrap();
            a.fd_install(r, probe(2, &rel)).unwrap();
            t.join().unwrap();
            drop(a);
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 3);
        },
    );
}

/// dup2 onto a slot another task has reserved but not installed yet fails with EBUSY and
/// never loses the install.
#[test]
fn dup2_vs_open_in_progress() {
    model_reaching(
        &[
            "dup2 first",
            "dup2 hit the reservation (EBUSY)",
            "dup2 displaced the install",
        ],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(0, &rel), 0, NOFILE), Ok(0));
            let b = a.share();
            let f1 = probe(1, &rel);
            let t = thread::spawn(move || {
                let fd = b.alloc_fd(0, NOFILE, 0).unwrap();
                b.fd_install(fd, f1).unwrap();
                fd
            });
            let r = a.dup2(0, 1, NOFILE);
            let fd = t.join().unwrap();
            match r {
                // dup2 first: the open got the next fd.
                Ok(1) if fd == 2 => saw("dup2 first"),
                // The open reserved fd 1 first; dup2 either hit the reservation or displaced the
                // installed file.
                Err(Errno::EBUSY) if fd == 1 => saw("dup2 hit the reservation (EBUSY)"),
                Ok(1) if fd == 1 => saw("dup2 displaced the install"),
                other => panic!("dup2 {other:?}, open got {fd}"),
            }
            drop(a);
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 2);
        },
    );
}

/// The last reference of a file is dropped by a lookup that lost the re-check race: the lookup
/// itself runs the release.
#[test]
fn lookup_may_release() {
    model_reaching(
        &["released by the lookup", "lookup found it closed"],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(4, &rel), 0, NOFILE), Ok(0));
            let b = a.share();
            let t = thread::spawn(move || {
                LOOKUP_THREAD.with(|c| c.set(true));
                let f = b.fget(0);
                match &f {
                    Some(f) => {
                        f.touch();
                    }
                    None => saw("lookup found it closed"),
                }
                drop(f);
                drop(b);
            });
            let f = a.file_close_fd(0).unwrap();
            drop(f);
            t.join().unwrap();
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 1);
            drop(a);
        },
    );
}

/// [`model_reaching`], and also requires the core to have recorded each of `events` in some
/// execution.
fn model_reaching_events(
    expected: &[&'static str],
    events: &[fdtable::events::Event],
    f: impl Fn() + Sync + Send + 'static,
) {
    let before: Vec<usize> = events.iter().map(|e| fdtable::events::count(*e)).collect();
    model_reaching(expected, f);
    for (e, b) in events.iter().zip(before) {
        assert!(
            fdtable::events::count(*e) > b,
            "no execution reached the core's {e:?}"
        );
    }
}

/// Iteration on one handle races with a close on another: every step yields a file that was
/// installed at its fd, with a reference of its own (used after the close, never after the
/// release); a file closed first is not yielded; one release.
#[test]
fn iteration_vs_close() {
    model_reaching(
        &[
            "iterator got fd 1",
            "fd 1 closed before the iterator reached it",
        ],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(0, &rel), 0, NOFILE), Ok(0));
            assert_eq!(a.install(probe(1, &rel), 0, NOFILE), Ok(1));
            let mut b = a.share();
            let t = thread::spawn(move || {
                b.close_fd(1).unwrap();
                drop(b);
            });
            let mut seen_1 = false;
            for o in a.iter() {
                assert_eq!(o.file.touch(), o.fd as usize);
                seen_1 |= o.fd == 1;
            }
            saw(if seen_1 {
                "iterator got fd 1"
            } else {
                "fd 1 closed before the iterator reached it"
            });
            t.join().unwrap();
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 1);
            drop(a);
        },
    );
}

/// An owned reservation is dropped on another thread while this thread allocates: the fd is
/// given back exactly once, and the allocation gets the lowest fd free at its moment.
#[test]
fn owned_reservation_dropped_on_another_thread() {
    model_reaching(
        &[
            "allocation skipped the reservation",
            "allocation after the give-back",
        ],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(0, &rel), 0, NOFILE), Ok(0));
            let r = a.reserve_owned(0, NOFILE).unwrap();
            assert_eq!(r.fd(), 1);
            let t = thread::spawn(move || drop(r));
            let fd = a.alloc_fd(0, NOFILE, 0).unwrap();
            t.join().unwrap();
            saw(match fd {
                2 => "allocation skipped the reservation",
                1 => "allocation after the give-back",
                other => panic!("allocated {other}"),
            });
            // Exactly one of fds 1 and 2 is reserved (ours); the other is free.
            let reserved = a.reserved_fds().unwrap();
            assert_eq!(reserved, vec![fd]);
            a.put_unused_fd(fd);
            assert!(a.reserved_fds().unwrap().is_empty());
            drop(a);
        },
    );
}

/// Two handles grow the table at once: each allocates the larger array without the lock; the
/// one that relocks second finds the table already grown and frees its own. No fd is lost,
/// nothing leaks (the arrays are counted by the model's reclamation).
#[test]
fn grow_vs_grow() {
    model_reaching_events(
        &["both installed"],
        &[fdtable::events::Event::GrowthDiscarded],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(0, &rel), 0, NOFILE), Ok(0));
            assert_eq!(a.install(probe(1, &rel), 0, NOFILE), Ok(1));
            let b = a.share();
            let f = probe(2, &rel);
            let t = thread::spawn(move || {
                let fd = b.install(f, 0, NOFILE).unwrap();
                drop(b);
                fd
            });
            let mine = a.install(probe(3, &rel), 0, NOFILE).unwrap();
            let theirs = t.join().unwrap();
            let mut fds = [mine, theirs];
            fds.sort();
            assert_eq!(fds, [2, 3]);
            assert_eq!(a.fget(mine).map(|f| f.touch()), Some(3));
            assert_eq!(a.fget(theirs).map(|f| f.touch()), Some(2));
            saw("both installed");
            drop(a);
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 4);
        },
    );
}

/// `replace_fd` on one handle races with a lookup of that fd on another: the lookup gets the
/// old file or the new one, never a released one; the old file is released once.
#[test]
fn lookup_vs_replace_fd() {
    model_reaching(
        &["lookup saw the old file", "lookup saw the new file"],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(20, &rel), 0, NOFILE), Ok(0));
            let b = a.share();
            let t = thread::spawn(move || match b.fget(0).map(|f| f.touch()) {
                Some(20) => saw("lookup saw the old file"),
                Some(21) => saw("lookup saw the new file"),
                other => panic!("{other:?}"),
            });
            assert_eq!(a.replace_fd(0, probe(21, &rel), 0, NOFILE), Ok(0));
            t.join().unwrap();
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 1);
            drop(a);
        },
    );
}

/// `renumber` moves a file while another handle looks both numbers up: the file is never at
/// both numbers at once (and never released while looked up).
#[test]
fn lookup_vs_renumber() {
    model_reaching(
        &[
            "seen at the source",
            "seen at the target",
            "moved between the lookups",
        ],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(30, &rel), 0, NOFILE), Ok(0));
            assert_eq!(a.install(probe(31, &rel), 0, NOFILE), Ok(1));
            let b = a.share();
            let t = thread::spawn(move || {
                // Target first, then source: a non-atomic dup2 + close could show the file at
                // both (dup2 done, close not yet).
                let at_target = b.fget(1).map(|f| f.touch());
                let at_source = b.fget(0).map(|f| f.touch());
                match (at_target, at_source) {
                    (Some(30), _) => {
                        assert_eq!(at_source, None, "the file at both numbers");
                        saw("seen at the target");
                    }
                    (Some(31), Some(30)) => saw("seen at the source"),
                    (Some(31), None) => saw("moved between the lookups"),
                    other => panic!("{other:?}"),
                }
            });
            assert_eq!(a.renumber(0, 1, NOFILE), Ok(1));
            t.join().unwrap();
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 1, "the displaced file, once");
            drop(a);
        },
    );
}

/// The window of a last put: a reference from a lookup is dropped (the count goes to zero)
/// while another lookup that loaded the pointer before the close increments it again. The
/// reviving lookup owns the file then (its re-check fails and it releases it), the putter's
/// compare-and-swap fails, and the putter must not touch freed memory: its put window is an
/// RCU section.
#[test]
fn last_put_vs_reviving_lookup() {
    model_reaching_events(
        &["the lookup got the file", "the lookup found it closed"],
        &[
            fdtable::events::Event::Revived,
            fdtable::events::Event::LastPutLost,
        ],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(40, &rel), 0, NOFILE), Ok(0));
            let holder = a.share();
            let looker = a.share();
            let held = holder.fget(0).unwrap();
            let t1 = thread::spawn(move || {
                // The holder's reference is the last once the close is done.
                drop(held);
                drop(holder);
            });
            let t2 = thread::spawn(move || {
                match looker.fget(0) {
                    Some(f) => {
                        f.touch();
                        saw("the lookup got the file");
                    }
                    None => saw("the lookup found it closed"),
                }
                drop(looker);
            });
            a.close_fd(0).unwrap();
            t1.join().unwrap();
            t2.join().unwrap();
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 1);
            drop(a);
        },
    );
}

/// A borrow under an RCU section (no reference) races with the close that drops the file's
/// last reference: the release waits for the borrow — every use of the lent file
/// happens-before the release (loom checks the file's cell) — and runs exactly once, before
/// the close returns.
#[test]
fn borrow_vs_close() {
    model_reaching(
        &["borrowed before the close", "closed before the borrow"],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(50, &rel), 0, NOFILE), Ok(0));
            let b = a.share();
            // The table starts lending before the race (its files are marked).
            drop(b.fdget_rcu(0));
            let t = thread::spawn(move || {
                match b.fdget_rcu(0) {
                    Some(f) => {
                        assert!(f.is_rcu());
                        f.touch();
                        saw("borrowed before the close");
                    }
                    None => saw("closed before the borrow"),
                }
                drop(b);
            });
            a.close_fd(0).unwrap();
            // ORDERING: SeqCst; the release counter: the close released the file before
            // returning (the only reference was the table's).
            assert_eq!(rel.load(Ordering::SeqCst), 1);
            t.join().unwrap();
            drop(a);
        },
    );
}

/// A lock-free lookup races with a growth followed by a close of the fd it looks up, while
/// another reference keeps the file alive (so the lookup's increment succeeds whatever the
/// order). The lookup does not re-check `files->fdt` as the kernel does: growth clears the
/// slots of the array it retires before it lets go of the lock, so a lookup that read the old
/// array either re-checks a slot the close (made after the growth) has already emptied, or
/// reads an empty slot there and retries in the new array. Both must happen in some
/// execution; in every one, a lookup whose increment came after the close's put gets nothing,
/// and the file is released exactly once.
#[test]
fn lookup_vs_grow_and_close() {
    model_reaching_events(
        &["the lookup got the file", "the lookup found it closed"],
        &[
            fdtable::events::Event::RetiredSlotCleared,
            fdtable::events::Event::SlotChanged,
        ],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(60, &rel), 0, NOFILE), Ok(0));
            assert_eq!(a.install(probe(61, &rel), 0, NOFILE), Ok(1));
            let keep = a.fget(1).unwrap();
            let b = a.share();
            let t = thread::spawn(move || {
                match b.fget(1) {
                    Some(f) => {
                        assert_eq!(f.touch(), 61);
                        saw("the lookup got the file");
                    }
                    None => saw("the lookup found it closed"),
                }
                drop(b);
            });
            // Slots 0 and 1 are taken: this install grows the 2-slot table, then fd 1 is
            // closed in the new array.
            assert_eq!(a.install(probe(62, &rel), 0, NOFILE), Ok(2));
            a.close_fd(1).unwrap();
            t.join().unwrap();
            assert_eq!(a.fget(1).map(|f| f.touch()), None);
            drop(keep);
            drop(a);
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 3);
        },
    );
}

/// The borrow that makes a file lendable (its announcement, a barrier, a re-check of the slot)
/// races with the close that drops the file's last reference, whose release reads the
/// announcement after a barrier of its own: either the release sees it and waits for the
/// borrow, or the borrower's re-check sees the slot emptied and gives up (then it must not
/// lend the file: it takes a reference, or finds the fd closed). Every use of a lent file
/// happens-before its release (loom checks the file's cell); one release, before the close
/// returns.
#[test]
fn first_lend_vs_close() {
    lend_vs_close(false);
}

/// The same race for a file lent to non-blocking borrows only (a pipe looked up through
/// `with_fdget_rcu_nonblocking`): the same handshake makes it lendable, at the other level.
#[test]
fn first_nonblocking_lend_vs_close() {
    lend_vs_close(true);
}

/// [`first_lend_vs_close`] through `fdget_rcu` on a file that may be lent to every borrow,
/// or through `with_fdget_rcu_nonblocking` on one lent to non-blocking borrows only.
fn lend_vs_close(nonblocking: bool) {
    model_reaching_events(
        &["lent without a reference", "closed before the borrow"],
        &[fdtable::events::Event::LendAbandoned],
        move || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            let file = if nonblocking {
                blocking_probe(70, &rel)
            } else {
                probe(70, &rel)
            };
            assert_eq!(a.install(file, 0, NOFILE), Ok(0));
            let b = a.share();
            let t = thread::spawn(move || {
                // Under loom a file is due at once: the first lookup (with a reference) makes
                // it lendable, the second is lent.
                for _ in 0..2 {
                    let look = |f: Option<&fdtable::RcuFd<'_, Probe>>| match f {
                        Some(f) => {
                            f.touch();
                            saw(if f.is_rcu() {
                                "lent without a reference"
                            } else {
                                "lent a counted reference"
                            });
                        }
                        None => saw("closed before the borrow"),
                    };
                    if nonblocking {
                        b.with_fdget_rcu_nonblocking(0, look);
                    } else {
                        look(b.fdget_rcu(0).as_ref());
                    }
                }
                if nonblocking {
                    // A blocking borrow of a file lent to non-blocking ones only: counted.
                    if let Some(f) = b.fdget_rcu(0) {
                        assert!(!f.is_rcu());
                        f.touch();
                    }
                }
                drop(b);
            });
            a.close_fd(0).unwrap();
            // ORDERING: SeqCst; the release counter: the close released the file before
            // returning (the only reference was the table's), or the borrower's counted
            // reference did.
            let now = rel.load(Ordering::SeqCst);
            t.join().unwrap();
            assert!(now <= 1);
            drop(a);
            // ORDERING: SeqCst; as above, after the join.
            assert_eq!(rel.load(Ordering::SeqCst), 1);
        },
    );
}

/// A rights check races with a `renumber` onto the fd it checks. Read in two calls — the
/// payload, then the file — the check can pair the file that moved in with the rights of the
/// one it displaced (the time-of-check/time-of-use hole a capability check must not have);
/// `fdget_with_payload` reads both as one snapshot, so the file and its rights always belong
/// together.
#[test]
fn rights_check_vs_renumber() {
    // Files 80 and 81 carry rights 80 and 81: a pair is consistent when they are equal.
    fn pair(file: Option<usize>, rights: Option<u32>) -> Option<(usize, usize)> {
        Some((file?, rights? as usize))
    }
    model_reaching(
        &[
            "two calls: file and rights of different fds",
            "one snapshot: before the move",
            "one snapshot: after the move",
        ],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe, u32> = Files::new();
            assert_eq!(a.install_with(probe(80, &rel), 0, 80, NOFILE), Ok(0));
            assert_eq!(a.install_with(probe(81, &rel), 0, 81, NOFILE), Ok(1));
            let b = a.share();
            let t = thread::spawn(move || {
                // The old pattern: rights first, then the file.
                let rights = b.fd_payload(1).ok();
                let file = b.fget(1).map(|f| f.touch());
                if let Some((f, r)) = pair(file, rights)
                    && f != r
                {
                    saw("two calls: file and rights of different fds");
                }
                // The snapshot.
                match b.fdget_with_payload(1) {
                    Some((f, r)) => {
                        let f = f.touch();
                        assert_eq!(f, r as usize, "file {f} checked against rights {r}");
                        saw(if f == 81 {
                            "one snapshot: before the move"
                        } else {
                            "one snapshot: after the move"
                        });
                    }
                    None => panic!("fd 1 is never free"),
                }
            });
            assert_eq!(a.renumber(0, 1, NOFILE), Ok(1));
            t.join().unwrap();
            // ORDERING: SeqCst; the release counter, read after the threads are joined.
            assert_eq!(rel.load(Ordering::SeqCst), 1, "the displaced file, once");
            drop(a);
        },
    );
}

/// An async host takes a file out of a shared table and unwraps it while another thread looks
/// it up, with a counted reference or lent without one: `try_unwrap` hands the value over only
/// when no reference is left (else it gives the reference back) and only after every borrower
/// that could still use it is done (loom checks each use against the drop of the value).
#[test]
fn try_unwrap_vs_borrow() {
    // Two preemptions: at three, the model's `synchronize` (a spin with `yield_now`) exceeds
    // loom's branch limit; two already reach every outcome below.
    model_reaching_bounded(
        2,
        &[
            "unwrapped",
            "a lookup held it: given back",
            "lent without a reference",
        ],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(90, &rel), 0, NOFILE), Ok(0));
            let b = a.share();
            let t = thread::spawn(move || {
                // Under loom a file is due at once: the first lookup (with a reference) makes
                // it lendable, the second is lent.
                for _ in 0..2 {
                    if let Some(f) = b.fdget_rcu(0) {
                        f.touch();
                        if f.is_rcu() {
                            saw("lent without a reference");
                        }
                    }
                }
                drop(b);
            });
            let f = a.file_close_fd(0).unwrap();
            match FileRef::try_unwrap(f) {
                Ok(value) => {
                    saw("unwrapped");
                    // ORDERING: SeqCst; the release counter (std, not modelled): unwrapping is
                    // not a release.
                    assert_eq!(rel.load(Ordering::SeqCst), 0);
                    drop(value);
                }
                // The lookup's reference keeps it: the last put releases it, as usual.
                Err(back) => {
                    saw("a lookup held it: given back");
                    drop(back);
                }
            }
            t.join().unwrap();
            // ORDERING: SeqCst; as above, after the join.
            assert_eq!(rel.load(Ordering::SeqCst), 1);
            drop(a);
        },
    );
}

/// A QSBR reader's lookup races with the close that drops a lent file's last reference: the
/// reader gets the file (lent, no section, no count) or nothing, and the release waits for
/// the reader's next quiescent state — every use of the lent file happens-before the release
/// (loom checks the file's cell), which runs exactly once, before the close returns.
#[test]
fn qsbr_lookup_vs_close() {
    model_reaching(
        &["lent before the close", "closed before the lookup"],
        || {
            let rel = Arc::new(AtomicUsize::new(0));
            let mut a: Files<Probe> = Files::new();
            assert_eq!(a.install(probe(60, &rel), 0, NOFILE), Ok(0));
            let b = a.share();
            let t = thread::spawn(move || {
                let mut me = fdtable::rcu::QsbrThread::online().unwrap();
                // The file becomes lendable before the race (a counted first lookup).
                drop(b.fdget_qsbr(&me, 0));
                me.quiescent_state();
                match b.fdget_qsbr(&me, 0) {
                    Some(f) => {
                        assert!(f.is_rcu());
                        f.touch();
                        saw("lent before the close");
                    }
                    None => saw("closed before the lookup"),
                }
                me.quiescent_state();
                drop(me);
                drop(b);
            });
            a.close_fd(0).unwrap();
            t.join().unwrap();
            // ORDERING: SeqCst; the release counter, read after the join.
            assert_eq!(rel.load(Ordering::SeqCst), 1);
            drop(a);
        },
    );
}

/// A QSBR reader's lookups race with a growth of the table (which retires the array the
/// reader may be reading) and a close that drops the file's last reference on the reader's
/// own thread, through another handle, while the file is lent: the retired array is not
/// freed before the reader's quiescent state (loom checks every access to it), and the
/// release made on the online thread runs at that quiescent state, not before.
#[test]
fn qsbr_lookup_vs_grow_and_own_close() {
    model_reaching(&["lent", "retired slot cleared"], || {
        let rel = Arc::new(AtomicUsize::new(0));
        let mut a: Files<Probe> = Files::new();
        assert_eq!(a.install(probe(61, &rel), 0, NOFILE), Ok(0));
        let mut own = a.share();
        let b = a.share();
        let me0 = fdtable::rcu::QsbrThread::online().unwrap();
        // Lendable before the race.
        drop(b.fdget_qsbr(&me0, 0));
        drop(me0);
        let rel2 = rel.clone();
        let t = thread::spawn(move || {
            // Grows the table (2 slots under loom): the array the reader read is retired.
            assert_eq!(a.replace_fd(2, probe(62, &rel2), 0, NOFILE), Ok(2));
            drop(a);
        });
        let mut me = fdtable::rcu::QsbrThread::online().unwrap();
        let before = fdtable::events::count(fdtable::events::Event::RetiredSlotCleared);
        if let Some(f) = b.fdget_qsbr(&me, 0) {
            f.touch();
            // The last reference is dropped on this thread while the file is lent:
            // `own` and `b` share the table, and `t`'s handle goes away on its own.
            let _ = own.close_fd(0);
            f.touch();
            saw("lent");
        }
        if fdtable::events::count(fdtable::events::Event::RetiredSlotCleared) > before {
            saw("retired slot cleared");
        }
        me.quiescent_state();
        t.join().unwrap();
        drop(me);
        drop(own);
        drop(b);
        // ORDERING: SeqCst; the release counter, read after every handle is gone.
        assert_eq!(rel.load(Ordering::SeqCst), 2);
    });
}

//! Allocation failure, injected: every allocation a table operation makes is failed in turn,
//! and each failure must give `ENOMEM` with the table unchanged and nothing leaked — and no
//! allocation may happen while the table lock is held (a kernel's spinlock forbids it).
//!
//! A test binary of its own: it installs a global allocator that fails on demand and counts
//! allocations made while a table lock (the test's checking `RawMutex`) is held.

use fdtable::{
    CLOSE_RANGE_UNSHARE, Errno, FdState, FileLike, FileRef, Files, O_CLOEXEC, RawSpinLock,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Failing;

thread_local! {
    /// -1: allocate normally; n >= 0: fail the allocation after `n` more succeed.
    static COUNTDOWN: Cell<isize> = const { Cell::new(-1) };
    /// Whether a failure was injected since the last reset.
    static INJECTED: Cell<bool> = const { Cell::new(false) };
    /// Depth of table locks held by this thread.
    static LOCKED: Cell<usize> = const { Cell::new(0) };
}

/// Allocations made while a table lock was held (any thread).
static UNDER_LOCK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to `System`, or returns null (a valid answer of `alloc`).
unsafe impl GlobalAlloc for Failing {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if LOCKED.with(|l| l.get()) > 0 {
            // ORDERING: Relaxed; a counter read after the operations, on the same thread.
            UNDER_LOCK.fetch_add(1, Ordering::Relaxed);
        }
        let c = COUNTDOWN.with(|c| c.get());
        if c == 0 {
            COUNTDOWN.with(|c| c.set(-1));
            INJECTED.with(|i| i.set(true));
            return std::ptr::null_mut();
        }
        if c > 0 {
            COUNTDOWN.with(|cd| cd.set(c - 1));
        }
        // SAFETY: forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Failing = Failing;

/// The table lock of these tests: the default spinlock, marking the thread while held.
struct CheckingLock(RawSpinLock);

// SAFETY: delegates to `RawSpinLock`; the flag is per thread and only counts.
unsafe impl lock_api::RawMutex for CheckingLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = CheckingLock(<RawSpinLock as lock_api::RawMutex>::INIT);
    type GuardMarker = lock_api::GuardSend;
    fn lock(&self) {
        self.0.lock();
        LOCKED.with(|l| l.set(l.get() + 1));
    }
    fn try_lock(&self) -> bool {
        let ok = self.0.try_lock();
        if ok {
            LOCKED.with(|l| l.set(l.get() + 1));
        }
        ok
    }
    unsafe fn unlock(&self) {
        LOCKED.with(|l| l.set(l.get() - 1));
        // SAFETY: forwarded; the caller holds the lock.
        unsafe { self.0.unlock() }
    }
}

struct Probe {
    id: usize,
    releases: Arc<AtomicUsize>,
}
impl FileLike for Probe {}
impl Drop for Probe {
    fn drop(&mut self) {
        // ORDERING: Relaxed; a test counter, read on this thread.
        self.releases.fetch_add(1, Ordering::Relaxed);
    }
}

type T = Files<Probe, u16, CheckingLock>;

fn file(id: usize, r: &Arc<AtomicUsize>) -> FileRef<Probe> {
    FileRef::new(Probe {
        id,
        releases: r.clone(),
    })
}

/// One fd as seen from outside: number, state, file id, payload.
type FdView = (u32, FdState, Option<usize>, Option<u16>);

/// What a table looks like from outside: size, every fd's state, file, payload, hint.
fn state(t: &T) -> (usize, Vec<FdView>, Vec<u32>, usize) {
    let max = t.max_fds();
    let fds = (0..max as u32 + 64)
        .map(|fd| {
            (
                fd,
                t.fd_state(fd),
                t.fget(fd).map(|f| f.id),
                t.fd_payload(fd).ok(),
            )
        })
        .collect();
    (max, fds, t.reserved_fds().unwrap(), t.next_fd_hint())
}

/// Runs `op` with the k-th allocation failing, for k = 0, 1, … until it needs no more
/// allocations; `check(result, injected)` is called after each run.
fn each_failure<R>(mut op: impl FnMut() -> R, check: impl FnMut(R, bool)) -> usize {
    each_failure_with(|| (), |()| op(), check)
}

/// As [`each_failure`], with `setup` run before each attempt, without failures (what the
/// operation consumes: a file, say).
fn each_failure_with<S, R>(
    mut setup: impl FnMut() -> S,
    mut op: impl FnMut(S) -> R,
    mut check: impl FnMut(R, bool),
) -> usize {
    for k in 0.. {
        let s = setup();
        INJECTED.with(|i| i.set(false));
        COUNTDOWN.with(|c| c.set(k));
        let r = op(s);
        COUNTDOWN.with(|c| c.set(-1));
        let injected = INJECTED.with(|i| i.get());
        check(r, injected);
        if !injected {
            return k as usize;
        }
    }
    unreachable!()
}

/// A shared table (so every operation takes the lock) with fds 0..n open.
fn shared_table(n: usize, r: &Arc<AtomicUsize>) -> (T, T) {
    let mut t = T::new();
    for i in 0..n {
        t.install_with(
            file(i, r),
            if i % 3 == 0 { O_CLOEXEC } else { 0 },
            i as u16,
            1 << 20,
        )
        .unwrap();
    }
    let other = t.share();
    (t, other)
}

#[test]
fn growth_fails_with_enomem_and_changes_nothing() {
    let r = Arc::new(AtomicUsize::new(0));
    let (mut t, other) = shared_table(64, &r);
    let before = state(&t);
    let n = each_failure_with(
        || file(1000, &r),
        |f| t.install(f, 0, 4096),
        |res, injected| {
            if injected {
                assert_eq!(res, Err(Errno::ENOMEM));
            } else {
                assert_eq!(res, Ok(64));
            }
        },
    );
    assert!(n >= 1, "growth allocates");
    // Every failed attempt released its file; the table was unchanged until the success.
    t.close_fd(64).unwrap();
    // (The table grew on the last attempt, so compare the fds that existed before.)
    assert_eq!(state(&t).1[..before.1.len()], before.1[..]);
    // ORDERING: Relaxed; read on this thread.
    assert_eq!(r.load(Ordering::Relaxed), n + 1);
    drop((t, other));
}

#[test]
fn every_growing_call_reports_enomem() {
    let r = Arc::new(AtomicUsize::new(0));
    let (mut t, _other) = shared_table(10, &r);
    let before = state(&t);
    let expect_enomem = |res: Result<u32, Errno>, injected: bool| {
        if injected {
            assert_eq!(res, Err(Errno::ENOMEM));
        }
    };
    each_failure(|| t.dup2(1, 5000, 1 << 20), expect_enomem);
    t.close_fd(5000).unwrap();
    each_failure(|| t.dupfd(1, 3000, false, 1 << 20), expect_enomem);
    t.close_fd(3000).unwrap();
    each_failure(|| t.alloc_fd(2000, 1 << 20, 0), expect_enomem);
    t.put_unused_fd(2000);
    each_failure_with(
        || file(1, &r),
        |f| t.replace_fd(7000, f, 0, 1 << 20),
        expect_enomem,
    );
    t.close_fd(7000).unwrap();
    each_failure(|| t.renumber(2, 9000, 1 << 20), expect_enomem);
    assert_eq!(t.renumber(9000, 2, 1 << 20), Ok(2));
    t.set_fd_payload(2, 2).unwrap();
    let after = state(&t);
    assert_eq!(
        after.1.iter().take(70).collect::<Vec<_>>(),
        before.1.iter().take(70).collect::<Vec<_>>()
    );
}

#[test]
fn copies_fail_with_enomem_and_leak_nothing() {
    let r = Arc::new(AtomicUsize::new(0));
    let (mut t, other) = shared_table(200, &r);
    let before = state(&t);
    each_failure(
        || t.fork().map(|c| c.max_fds()),
        |res, injected| {
            if injected {
                assert_eq!(res, Err(Errno::ENOMEM));
            } else {
                assert_eq!(res, Ok(256));
            }
        },
    );
    assert_eq!(state(&t), before);
    // Every file is held by the table alone again: the failed copies took no references.
    assert!(t.iter().all(|o| FileRef::count(&o.file) == 2));
    each_failure(
        || {
            let res = t.close_range(100, u32::MAX, CLOSE_RANGE_UNSHARE);
            (res, t.is_shared())
        },
        |(res, shared), injected| {
            if injected {
                assert_eq!(res, Err(Errno::ENOMEM));
                assert!(shared, "still on the shared table");
            }
        },
    );
    assert!(!t.is_shared());
    assert_eq!(t.iter().count(), 100);
    // exec on a shared table unshares first.
    let mut again = other;
    let mut third = again.share();
    each_failure(
        || third.exec(),
        |res, injected| {
            if injected {
                assert_eq!(res, Err(Errno::ENOMEM));
            }
        },
    );
    // exec closed the close-on-exec fds in its private copy only.
    assert_eq!(third.iter().count(), 133);
    assert_eq!(again.iter().count(), 200);
    each_failure(
        || again.unshare(),
        |res, injected| {
            if injected {
                assert_eq!(res, Err(Errno::ENOMEM));
            }
        },
    );
    drop((t, again, third));
    // ORDERING: Relaxed; read on this thread.
    assert_eq!(r.load(Ordering::Relaxed), 200);
}

#[test]
fn new_tables_and_files_report_enomem() {
    let r = Arc::new(AtomicUsize::new(0));
    let n = each_failure(T::try_new, |res, injected| {
        assert_eq!(res.is_err(), injected);
        if let Err(e) = res {
            assert_eq!(e, Errno::ENOMEM);
        }
    });
    assert!(n >= 2, "a table and its array");
    let a = each_failure_with(
        || Probe {
            id: 0,
            releases: r.clone(),
        },
        |p| FileRef::try_new(p).map(|f| f.id),
        |res, injected| assert_eq!(res.is_err(), injected),
    );
    let b = each_failure_with(
        || Probe {
            id: 0,
            releases: r.clone(),
        },
        |p| FileRef::<dyn FileLike>::try_new_unsize(p, |p| p).map(|_| ()),
        |res, injected| assert_eq!(res.is_err(), injected),
    );
    assert_eq!((a, b), (1, 1));
    // Each failed construction dropped its value; each success released it.
    // ORDERING: Relaxed; read on this thread.
    assert_eq!(r.load(Ordering::Relaxed), 4);
}

#[test]
fn lookups_work_when_rcu_records_cannot_be_allocated() {
    // A new thread whose first shared lookup fails to allocate its records takes the
    // anonymous path, and still finds its files.
    let r = Arc::new(AtomicUsize::new(0));
    let (t, mut other) = shared_table(5, &r);
    let third = other.share();
    std::thread::spawn(move || {
        COUNTDOWN.with(|c| c.set(0));
        let found = third.fget(3).map(|f| f.id);
        COUNTDOWN.with(|c| c.set(-1));
        assert_eq!(found, Some(3));
        assert_eq!(third.fdget(4).map(|f| f.id), Some(4));
    })
    .join()
    .unwrap();
    drop((t, other));
}

#[test]
fn nothing_allocates_under_the_table_lock() {
    let r = Arc::new(AtomicUsize::new(0));
    // ORDERING: Relaxed; read and reset on this thread (other tests' allocations are on their
    // own threads, where LOCKED is theirs).
    let start = UNDER_LOCK.load(Ordering::Relaxed);
    let (mut t, mut other) = shared_table(10, &r);
    // Growth by every path, copies, closes, iteration and listings.
    t.install(file(1, &r), 0, 1 << 20).unwrap();
    t.dup2(0, 3000, 1 << 20).unwrap();
    t.dupfd(0, 9000, true, 1 << 20).unwrap();
    t.replace_fd(20000, file(2, &r), 0, 1 << 20).unwrap();
    t.renumber(20000, 40000, 1 << 20).unwrap();
    let child = t.fork().unwrap();
    other.unshare().unwrap();
    let mut third = t.share();
    third.close_range(0, 100, CLOSE_RANGE_UNSHARE).unwrap();
    third.exec().unwrap();
    assert!(t.iter().count() > 10);
    let _reserved = t.alloc_fd(0, 1 << 20, 0).unwrap();
    assert!(t.snapshot().unwrap().len() > 10);
    assert_eq!(t.reserved_fds().unwrap().len(), 1);
    t.close_range(0, u32::MAX, 0).unwrap();
    drop((t, other, third, child));
    // ORDERING: Relaxed; see above.
    assert_eq!(
        UNDER_LOCK.load(Ordering::Relaxed),
        start,
        "allocated under the table lock"
    );
}

#[test]
fn listings_report_enomem_and_leak_nothing() {
    let r = Arc::new(AtomicUsize::new(0));
    let (t, other) = shared_table(100, &r);
    for fd in [100, 150, 151] {
        assert_eq!(t.alloc_fd(fd, 1 << 20, 0), Ok(fd));
    }
    let before = state(&t);
    let n =
        each_failure(
            || t.snapshot(),
            |res, injected| match res {
                Err(e) => {
                    assert!(injected);
                    assert_eq!(e, Errno::ENOMEM);
                }
                Ok(snap) => {
                    assert!(!injected);
                    let fds: Vec<u32> = snap.iter().map(|s| s.0).collect();
                    assert_eq!(fds, (0..100).collect::<Vec<_>>());
                    assert!(snap.iter().all(|(fd, cloexec, f)| {
                        f.id == *fd as usize && *cloexec == (fd % 3 == 0)
                    }));
                }
            },
        );
    assert!(n >= 2, "the vector grows more than once");
    let m = each_failure(
        || t.reserved_fds(),
        |res, injected| {
            assert_eq!(res.is_err(), injected);
            match res {
                Err(e) => assert_eq!(e, Errno::ENOMEM),
                Ok(fds) => assert_eq!(fds, [100, 150, 151]),
            }
        },
    );
    assert!(m >= 1);
    assert_eq!(t.next_reserved_fd(0), Some(100));
    assert_eq!(t.next_reserved_fd(101), Some(150));
    assert_eq!(t.next_reserved_fd(152), None);
    // Nothing changed, and every reference a failed snapshot took was given back: each file
    // is held by the table and the iterator's item alone.
    assert_eq!(state(&t), before);
    assert!(t.iter().all(|o| FileRef::count(&o.file) == 2));
    // ORDERING: Relaxed; read on this thread.
    assert_eq!(r.load(Ordering::Relaxed), 0);
    for fd in [100, 150, 151] {
        t.put_unused_fd(fd);
    }
    drop((t, other));
    // ORDERING: Relaxed; read on this thread.
    assert_eq!(r.load(Ordering::Relaxed), 100);
}

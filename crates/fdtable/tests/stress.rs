//! Many threads churning one shared table; every file must be released exactly once and,
//! with the `leak-check` feature, every array and file allocation must be freed.
//!
//! Also run under ThreadSanitizer by `ci/sanitize`.

#![cfg(not(loom))]

use fdtable::rcu::QsbrThread;
use fdtable::{CLOSE_RANGE_CLOEXEC, Errno, FileLike, FileRef, Files, O_CLOEXEC};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

struct Counted {
    id: usize,
    payload: Box<usize>,
    released: AtomicBool,
    stats: Arc<Stats>,
    /// Like a pipe: lent to non-blocking borrows only.
    blocking: bool,
}

#[derive(Default)]
struct Stats {
    created: AtomicUsize,
    released: AtomicUsize,
    flushed: AtomicUsize,
    /// Lookups of QSBR readers that found the file lent (no reference).
    lent: AtomicUsize,
    /// Non-blocking borrows (`with_fdget_rcu_nonblocking`) of files lent to those only.
    lent_nonblocking: AtomicUsize,
}

impl FileLike for Counted {
    fn flush(&self) -> Result<(), Errno> {
        self.check();
        // ORDERING: Relaxed; a statistic read after the threads are joined.
        self.stats.flushed.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn may_lend(&self) -> bool {
        !self.blocking
    }

    fn may_lend_nonblocking(&self) -> bool {
        true
    }
}

impl Counted {
    /// A use of the file: reads its heap payload (a use-after-free shows under sanitizers) and
    /// checks it was not released.
    fn check(&self) -> usize {
        assert!(
            // ORDERING: Relaxed; the library orders every use before the release (file_ref's
            // Release puts and Acquire last put); this flag only reports a use it let through.
            !self.released.load(Ordering::Relaxed),
            "file {} used after release",
            self.id
        );
        assert_eq!(*self.payload, self.id);
        *self.payload
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        assert!(
            // ORDERING: Relaxed; as in `check`: a second release is caught whatever the order.
            !self.released.swap(true, Ordering::Relaxed),
            "file {} released twice",
            self.id
        );
        // ORDERING: Relaxed; a statistic read after the threads are joined.
        self.stats.released.fetch_add(1, Ordering::Relaxed);
    }
}

/// A file; one in three (by `id`) is lent to non-blocking borrows only, as a pipe.
fn file(stats: &Arc<Stats>, id: usize) -> FileRef<Counted> {
    new_file(stats, id, id.is_multiple_of(3))
}

fn new_file(stats: &Arc<Stats>, id: usize, blocking: bool) -> FileRef<Counted> {
    // ORDERING: Relaxed; a statistic read after the threads are joined.
    stats.created.fetch_add(1, Ordering::Relaxed);
    FileRef::new(Counted {
        id,
        payload: Box::new(id),
        released: AtomicBool::new(false),
        stats: stats.clone(),
        blocking,
    })
}

/// xorshift64*: deterministic per thread, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The leak check reads process-wide counters: the tests of this file run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn iterations() -> usize {
    std::env::var("FDTABLE_STRESS_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000)
}

/// Above every fd `churn` picks (it spans 0..300, `close_range` at most 8 beyond): only
/// looked up, so QSBR readers reliably make its file lendable.
const STABLE_FD: u32 = 400;

fn churn(files: Files<Counted>, stats: Arc<Stats>, seed: u64, iters: usize) {
    churn_as(files, stats, seed, iters, None)
}

/// [`churn`] on a thread online as a QSBR reader: its lookups are `with_fdget_qsbr`, it
/// reports a quiescent state every few operations and goes offline now and then.
fn churn_qsbr(files: Files<Counted>, stats: Arc<Stats>, seed: u64, iters: usize) {
    let me = QsbrThread::online().expect("a QSBR reader");
    churn_as(files, stats, seed, iters, Some(me))
}

fn churn_as(
    mut files: Files<Counted>,
    stats: Arc<Stats>,
    seed: u64,
    iters: usize,
    mut qsbr: Option<QsbrThread>,
) {
    let mut rng = Rng(seed | 1);
    // Spread fds so the table grows past 64 and 256 slots now and then.
    let span = 300;
    for i in 0..iters {
        let fd = rng.below(span) as u32;
        match rng.below(19) {
            0..=2 => {
                let _ = files.install(file(&stats, i), 0, 4096);
            }
            3 => {
                if let Ok(r) = files.get_unused_fd_flags(O_CLOEXEC, 4096) {
                    if rng.below(3) == 0 {
                        drop(r); // a failed open
                    } else {
                        r.install(file(&stats, i));
                    }
                }
            }
            4..=5 => {
                let _ = files.close_fd(fd);
            }
            6 => {
                let _ = files.dup(fd, 4096);
            }
            7 => {
                let _ = files.dup2(fd, rng.below(span) as u32, 4096);
            }
            8 => {
                let _ = files.dupfd(fd, rng.below(span) as u32, true, 4096);
            }
            9..=11 => {
                if let Some(f) = files.fget(fd) {
                    f.check();
                }
            }
            12 => match &mut qsbr {
                Some(me) => {
                    // Fds looked up often enough to be lent (`LEND_AFTER`): the low ones,
                    // which the others keep changing, and one they never touch.
                    let fd = if rng.below(2) == 0 { STABLE_FD } else { fd % 4 };
                    files.with_fdget_qsbr(me, fd, |f| f.map(|f| f.check()));
                    let keep = rng.below(8) == 0;
                    let held = match files.fdget_qsbr(me, fd) {
                        Some(f) => {
                            f.check();
                            if f.is_rcu() {
                                // ORDERING: Relaxed; a statistic read after the joins.
                                stats.lent.fetch_add(1, Ordering::Relaxed);
                            }
                            // Kept past the quiescent state by a counted reference.
                            if keep { f.upgrade() } else { None }
                        }
                        None => None,
                    };
                    if let Some(h) = held {
                        me.quiescent_state();
                        h.check();
                    }
                }
                None => {
                    if let Some(f) = files.fdget(fd) {
                        f.check();
                    }
                    // Borrows of the low fds and the stable one, often enough to lend them,
                    // at either level.
                    let fd = if rng.below(2) == 0 { STABLE_FD } else { fd % 4 };
                    let look = |f: Option<&fdtable::RcuFd<'_, Counted>>| {
                        f.map(|f| {
                            f.check();
                            f.is_rcu() && f.blocking
                        })
                    };
                    if rng.below(2) == 0 {
                        let lent = files.with_fdget_rcu_nonblocking(fd, look);
                        if lent == Some(true) {
                            // ORDERING: Relaxed; a statistic read after the joins.
                            stats.lent_nonblocking.fetch_add(1, Ordering::Relaxed);
                        }
                    } else {
                        let lent = files.with_fdget_rcu(fd, look);
                        assert_ne!(lent, Some(true), "a blocking file lent to any borrow");
                    }
                }
            },
            13 => {
                if rng.below(20) == 0 {
                    let child = files.fork().unwrap();
                    for (_, _, f) in child.snapshot().unwrap() {
                        f.check();
                    }
                    drop(child);
                } else {
                    let _ = files.set_close_on_exec(fd, rng.below(2) == 0);
                }
            }
            14 => {
                let first = fd;
                let last = first + rng.below(8) as u32;
                let flags = if rng.below(2) == 0 {
                    CLOSE_RANGE_CLOEXEC
                } else {
                    0
                };
                files.close_range(first, last, flags).unwrap();
            }
            15 => {
                let _ = files.dupfd_query(fd, rng.below(span) as u32);
            }
            16 => {
                let _ = files.replace_fd(fd, file(&stats, i), 0, 4096);
            }
            17 => {
                let _ = files.renumber(fd, rng.below(span) as u32, 4096);
            }
            _ => {
                for o in files.iter_from(fd).take(4) {
                    o.file.check();
                }
            }
        }
        if let Some(me) = &mut qsbr {
            match rng.below(16) {
                0..=3 => me.quiescent_state(),
                4 => me.offline(std::thread::yield_now),
                _ => {}
            }
        }
    }
    drop(files);
    drop(qsbr);
}

#[test]
fn shared_table_churn_releases_every_file_once() {
    let _serial = serial();
    let stats = Arc::new(Stats::default());
    let mut root: Files<Counted> = Files::new();
    for i in 0..3 {
        root.install(file(&stats, i), 0, 4096).unwrap();
    }
    // A file like a pipe that the threads never close: lent to non-blocking borrows.
    root.replace_fd(STABLE_FD, new_file(&stats, 3, true), 0, 4096)
        .unwrap();
    let threads = 4;
    let iters = iterations();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let h = root.share();
            let s = stats.clone();
            std::thread::spawn(move || churn(h, s, 0x9E37_79B9 * (t as u64 + 1), iters))
        })
        .collect();
    // The root handle also takes part, and sometimes unshares mid-way.
    churn(root.share(), stats.clone(), 7, iters / 2);
    root.unshare().unwrap();
    for h in handles {
        h.join().unwrap();
    }
    drop(root);
    // ORDERING: Relaxed (here and below); the threads are joined, which orders their counts.
    let created = stats.created.load(Ordering::Relaxed);
    assert!(created > 1000);
    assert_eq!(
        stats.released.load(Ordering::Relaxed),
        created,
        "every file released exactly once"
    );
    assert!(
        stats.lent_nonblocking.load(Ordering::Relaxed) > 0,
        "no file lent to non-blocking borrows only"
    );
    assert_no_leaks();
}

/// As [`shared_table_churn_releases_every_file_once`], with two of the threads QSBR readers:
/// their lookups take no section, the others' releases of lent files wait for their quiescent
/// states, theirs run at them.
#[test]
fn shared_table_churn_with_qsbr_readers() {
    let _serial = serial();
    let stats = Arc::new(Stats::default());
    let mut root: Files<Counted> = Files::new();
    for i in 0..3 {
        root.install(file(&stats, i), 0, 4096).unwrap();
    }
    root.replace_fd(STABLE_FD, new_file(&stats, 3, false), 0, 4096)
        .unwrap();
    let iters = iterations();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let h = root.share();
            let s = stats.clone();
            let seed = 0x51_7CC1_B727 * (t as u64 + 1);
            std::thread::spawn(move || {
                if t % 2 == 0 {
                    churn_qsbr(h, s, seed, iters)
                } else {
                    churn(h, s, seed, iters)
                }
            })
        })
        .collect();
    drop(root);
    for h in handles {
        h.join().unwrap();
    }
    // ORDERING: Relaxed (here and below); the threads are joined, which orders their counts.
    let created = stats.created.load(Ordering::Relaxed);
    assert!(created > 1000);
    assert_eq!(
        stats.released.load(Ordering::Relaxed),
        created,
        "every file released exactly once"
    );
    assert!(stats.lent.load(Ordering::Relaxed) > 0, "no file was lent");
    assert_no_leaks();
}

/// With the `leak-check` feature: once every table is gone and the grace periods have passed,
/// no array and no file is still allocated (retired arrays and files are freed, never leaked).
fn assert_no_leaks() {
    #[cfg(feature = "leak-check")]
    {
        // Deferred frees of retired arrays and files run after grace periods.
        for _ in 0..100 {
            fdtable::reclaim_drain();
            if fdtable::live_allocations() == (0, 0) {
                break;
            }
            std::thread::yield_now();
        }
        assert_eq!(
            fdtable::live_allocations(),
            (0, 0),
            "(arrays, files) still allocated"
        );
    }
}

#[test]
fn unshared_tables_in_parallel() {
    let _serial = serial();
    let stats = Arc::new(Stats::default());
    let iters = iterations();
    let handles: Vec<_> = (0..3)
        .map(|t| {
            let s = stats.clone();
            std::thread::spawn(move || churn(Files::new(), s, 99 + t, iters))
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // ORDERING: Relaxed; the threads are joined, which orders their counts.
    assert_eq!(
        stats.released.load(Ordering::Relaxed),
        stats.created.load(Ordering::Relaxed)
    );
    assert_no_leaks();
}

/// Lookups on one fd from several threads while another thread keeps replacing the file there
/// (dup2) and closing it: every lookup returns a live file.
#[test]
fn lookups_vs_replacement() {
    let _serial = serial();
    let stats = Arc::new(Stats::default());
    let mut root: Files<Counted> = Files::new();
    root.install(file(&stats, 0), 0, 4096).unwrap();
    root.install(file(&stats, 1), 0, 4096).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let ready = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Lookups that found the file, counted as they happen, so the replacing loop can go on
    // until the race really ran (on a loaded machine the readers may get no CPU for a while).
    let found = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let h = root.share();
            let (stop, ready, found) = (stop.clone(), ready.clone(), found.clone());
            std::thread::spawn(move || {
                let mut seen = 0usize;
                // ORDERING: Relaxed (all three counters/flags here); start and stop signals and
                // a progress count that publish nothing (the table's own operations are what
                // is under test).
                ready.fetch_add(1, Ordering::Relaxed);
                while !stop.load(Ordering::Relaxed) {
                    if let Some(f) = h.fget(1) {
                        f.check();
                        seen += 1;
                        found.fetch_add(1, Ordering::Relaxed);
                    }
                    if let Some(f) = h.fdget(1) {
                        f.check();
                    }
                }
                seen
            })
        })
        .collect();
    let iters = iterations();
    // The replacements start once both readers are looking up.
    // ORDERING: Relaxed; a start signal, see the readers.
    while ready.load(Ordering::Relaxed) < 2 {
        std::thread::yield_now();
    }
    let mut i = 0;
    // ORDERING: Relaxed; a progress count, see the readers.
    while i < iters || found.load(Ordering::Relaxed) < 100 {
        if i % 3 == 0 {
            let _ = root.close_fd(1);
        }
        let f = file(&stats, i + 2);
        let fd = root.get_unused_fd_flags(0, 4096).unwrap().install(f);
        let _ = root.dup2(fd, 1, 4096);
        let _ = root.close_fd(fd);
        i += 1;
        if i % 1024 == 0 {
            std::thread::yield_now();
        }
    }
    // ORDERING: Relaxed; a stop signal, see the readers.
    stop.store(true, Ordering::Relaxed);
    let seen: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(seen > 0, "no lookup ran while the file was being replaced");
    drop(root);
    // ORDERING: Relaxed; the threads are joined, which orders their counts.
    assert_eq!(
        stats.released.load(Ordering::Relaxed),
        stats.created.load(Ordering::Relaxed)
    );
    assert_no_leaks();
}

/// Threads come and go on one table: each takes a handle, looks files up, closes, replaces
/// and moves them, hands references and an owned reservation to the next thread, and exits.
/// Thread exits give their RCU records back and leave their retired memory to others; every
/// file is still released exactly once and nothing leaks.
#[test]
fn threads_come_and_go() {
    let _serial = serial();
    let stats = Arc::new(Stats::default());
    let mut root: Files<Counted> = Files::new();
    for i in 0..40 {
        root.install(file(&stats, i), 0, 4096).unwrap();
    }
    let rounds = (iterations() / 200).max(20);
    let mut carried: Vec<FileRef<Counted>> = Vec::new();
    for round in 0..rounds {
        let mut handles = Vec::new();
        for t in 0..3u64 {
            let mut h = root.share();
            let s = stats.clone();
            let passed = std::mem::take(&mut carried);
            let r = if t == 0 {
                root.reserve_owned(0, 4096).ok()
            } else {
                None
            };
            handles.push(std::thread::spawn(move || {
                let mut rng = Rng((round as u64 * 7 + t) | 1);
                for f in &passed {
                    f.check();
                }
                drop(passed);
                let mut keep = Vec::new();
                for i in 0..200 {
                    let fd = rng.below(64) as u32;
                    match rng.below(6) {
                        0 => {
                            if let Some(f) = h.fget(fd) {
                                f.check();
                                keep.push(f);
                            }
                        }
                        1 => {
                            let _ = h.close_fd(fd);
                        }
                        2 => {
                            let _ = h.replace_fd(fd, file(&s, i), 0, 4096);
                        }
                        3 => {
                            let _ = h.renumber(fd, rng.below(64) as u32, 4096);
                        }
                        4 => {
                            let _ = h.install(file(&s, i), 0, 4096);
                        }
                        _ => {
                            if let Some(f) = h.fdget(fd) {
                                f.check();
                            }
                        }
                    }
                }
                if let Some(r) = r
                    && rng.below(2) == 0
                {
                    r.install(file(&s, 0));
                }
                keep.truncate(8);
                keep
            }));
        }
        for h in handles {
            carried.extend(h.join().unwrap());
        }
    }
    for f in &carried {
        f.check();
    }
    drop(carried);
    drop(root);
    // ORDERING: Relaxed; the threads are joined, which orders their counts.
    assert_eq!(
        stats.released.load(Ordering::Relaxed),
        stats.created.load(Ordering::Relaxed),
        "every file released exactly once"
    );
    assert_no_leaks();
}

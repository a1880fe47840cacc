//! The default `file_lock`: a spinlock whose unlock is a plain store, as the kernel's.
//!
//! The table holds its lock only for bitmap and slot updates: never while allocating, never
//! while running the embedder's code (`flush`, a file's release, a payload's clone — payloads
//! are `Copy`). So a spinlock is what fits, as in the kernel: taking it is one atomic
//! read-modify-write, releasing it one ordinary store. Any [`lock_api::RawMutex`] can replace
//! it (`Files<F, P, MyLock>`): a kernel plugs in its own spinlock, a program that would rather
//! sleep than spin plugs in `parking_lot::RawMutex`.
//!
//! # Waiting
//!
//! A waiter spins on a read of the lock word (so the holder's cache line is not stolen by
//! failed read-modify-writes), backing off exponentially; with `std`, after a bounded number of
//! rounds it yields the processor between attempts, so a holder that was preempted gets to run.

use core::sync::atomic::{AtomicBool, Ordering};

/// A test-and-test-and-set spinlock for [`lock_api`]; the default table lock.
#[derive(Debug)]
pub struct RawSpinLock {
    locked: AtomicBool,
}

// SAFETY: `lock` returns only after this thread changed `locked` from false to true with
// Acquire, `unlock` stores false with Release, so at most one holder exists and each holder's
// critical section happens-before the next one's.
unsafe impl lock_api::RawMutex for RawSpinLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: RawSpinLock = RawSpinLock {
        locked: AtomicBool::new(false),
    };

    type GuardMarker = lock_api::GuardSend;

    #[inline(always)]
    fn lock(&self) {
        // ORDERING: Acquire on success; pairs with the Release store in `unlock`: the previous
        // holder's writes are visible to this one. Failure: Relaxed, nothing was taken.
        if self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_slow();
        }
    }

    #[inline(always)]
    fn try_lock(&self) -> bool {
        // ORDERING: as in `lock`.
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[inline(always)]
    unsafe fn unlock(&self) {
        // ORDERING: Release; pairs with the Acquire of the next `lock`: this critical section
        // happens-before the next one.
        self.locked.store(false, Ordering::Release);
    }

    #[inline]
    fn is_locked(&self) -> bool {
        // ORDERING: Relaxed; an instantaneous, racy answer, as `lock_api` documents.
        self.locked.load(Ordering::Relaxed)
    }
}

impl RawSpinLock {
    #[cold]
    #[inline(never)]
    fn lock_slow(&self) {
        let mut spins: u32 = 1;
        loop {
            // ORDERING: Relaxed; only a hint that the lock looks free. The compare-and-swap
            // below acquires.
            while self.locked.load(Ordering::Relaxed) {
                if spins <= 64 {
                    for _ in 0..spins {
                        core::hint::spin_loop();
                    }
                    spins *= 2;
                } else {
                    relax();
                }
            }
            if lock_api::RawMutex::try_lock(self) {
                return;
            }
        }
    }
}

/// What a waiter does once spinning has gone on long enough.
#[inline]
fn relax() {
    #[cfg(feature = "std")]
    std::thread::yield_now();
    #[cfg(not(feature = "std"))]
    core::hint::spin_loop();
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use lock_api::RawMutex;
    use std::sync::Arc;

    #[test]
    fn mutual_exclusion() {
        let lock: Arc<lock_api::Mutex<RawSpinLock, u64>> = Arc::new(lock_api::Mutex::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        *lock.lock() += 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*lock.lock(), 80_000);
    }

    #[test]
    fn try_lock_and_is_locked() {
        let l = RawSpinLock::INIT;
        assert!(!l.is_locked());
        assert!(l.try_lock());
        assert!(l.is_locked());
        assert!(!l.try_lock());
        // SAFETY: locked above by this thread.
        unsafe { l.unlock() };
        assert!(l.try_lock());
        // SAFETY: as above.
        unsafe { l.unlock() };
    }
}

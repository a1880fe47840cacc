//! The kernel's own spinlock, plugged into the table as its `file_lock`
//! (`Files<dyn KFile, FdRights, SpinLock>`).
//!
//! A test-and-test-and-set lock: taking it is one atomic read-modify-write, releasing it one
//! plain store; a waiter spins on an ordinary load (so it does not steal the holder's cache
//! line with failed read-modify-writes) and backs off exponentially. The table's critical
//! sections are short — it never allocates, sleeps or runs our code (flush, release, payload
//! copies) while holding its lock — so a spinlock is right, as in the kernel.
//!
//! Why not a ticket lock, which is fairer: a ticket lock hands the lock to the *next waiter in
//! line*, so when that waiter is not running, every other waiter spins until it runs again. A
//! kernel holds and waits for spinlocks with preemption disabled, so that cannot happen there;
//! but this crate's logic also runs as host tests, on threads the host preempts at will, and
//! a ticket lock there turns every preemption of a waiter into a convoy (the first version of
//! this example took a minute for a test that now takes well under a second).

use core::sync::atomic::{AtomicBool, Ordering};

/// A test-and-test-and-set spinlock implementing [`lock_api::RawMutex`].
#[derive(Debug)]
pub struct SpinLock {
    locked: AtomicBool,
}

// SAFETY: `lock`/`try_lock` return holding the lock only after this thread changed `locked`
// from false to true with a successful compare-and-swap, so at most one thread holds it;
// `unlock` (called only by the holder) stores false. The compare-and-swap is Acquire and the
// store Release, so each critical section happens-before the next one.
unsafe impl lock_api::RawMutex for SpinLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: SpinLock = SpinLock {
        locked: AtomicBool::new(false),
    };

    // The lock does not care which CPU releases it.
    type GuardMarker = lock_api::GuardSend;

    #[inline]
    fn lock(&self) {
        if !self.try_lock() {
            self.lock_contended();
        }
    }

    #[inline]
    fn try_lock(&self) -> bool {
        // ORDERING: Acquire on success; pairs with the Release store in `unlock`: the previous
        // holder's critical section happens-before ours. Relaxed on failure: nothing is taken.
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[inline]
    unsafe fn unlock(&self) {
        // ORDERING: Release; pairs with the Acquire compare-and-swap in `try_lock` of the next
        // holder: our critical section happens-before theirs.
        self.locked.store(false, Ordering::Release);
    }

    #[inline]
    fn is_locked(&self) -> bool {
        // ORDERING: Relaxed; an instantaneous, racy answer, as `lock_api` documents.
        self.locked.load(Ordering::Relaxed)
    }
}

impl SpinLock {
    #[cold]
    fn lock_contended(&self) {
        let mut spins = 1u32;
        loop {
            // ORDERING: Relaxed; only a hint that the lock looks free: the compare-and-swap in
            // `try_lock` is what acquires (and pairs with `unlock`).
            while self.locked.load(Ordering::Relaxed) {
                for _ in 0..spins {
                    core::hint::spin_loop();
                }
                spins = (spins * 2).min(64);
            }
            if lock_api::RawMutex::try_lock(self) {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lock_api::RawMutex;
    use std::sync::Arc;

    #[test]
    fn mutual_exclusion() {
        let m: Arc<lock_api::Mutex<SpinLock, u64>> = Arc::new(lock_api::Mutex::new(0));
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        *m.lock() += 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*m.lock(), 30_000);
    }

    #[test]
    fn try_lock_and_is_locked() {
        let l = SpinLock::INIT;
        assert!(!l.is_locked());
        assert!(l.try_lock());
        assert!(l.is_locked());
        assert!(!l.try_lock());
        // SAFETY: locked above by this thread.
        unsafe { l.unlock() };
        assert!(!l.is_locked());
        l.lock();
        assert!(!l.try_lock());
        // SAFETY: locked just above by this thread.
        unsafe { l.unlock() };
    }
}

//! The std/loom shim: every atomic, lock and interior-mutable cell the core uses comes from here,
//! so `RUSTFLAGS="--cfg loom"` swaps the whole core onto loom's model checker.
//!
//! Nothing outside this module names `std::sync::atomic` or `std::cell::UnsafeCell` directly.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering, fence};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicUsize, Ordering, fence};

/// An `UnsafeCell` with loom's closure API, so loom can check every access made through it.
#[derive(Debug)]
pub(crate) struct UnsafeCell<T> {
    #[cfg(not(loom))]
    inner: std::cell::UnsafeCell<T>,
    #[cfg(loom)]
    inner: loom::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            #[cfg(not(loom))]
            inner: std::cell::UnsafeCell::new(value),
            #[cfg(loom)]
            inner: loom::cell::UnsafeCell::new(value),
        }
    }

    /// Runs `f` with a mutable raw pointer to the contents. The caller must hold whatever grants
    /// exclusive access (the table lock, or sole ownership of the table).
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(not(loom))]
        {
            f(self.inner.get())
        }
        #[cfg(loom)]
        {
            self.inner.with_mut(f)
        }
    }

    /// Consumes the cell.
    pub(crate) fn into_inner(self) -> T {
        #[cfg(not(loom))]
        {
            self.inner.into_inner()
        }
        #[cfg(loom)]
        {
            self.inner.into_inner()
        }
    }
}

/// The table's `file_lock`: a plain mutual-exclusion lock with no data of its own (the data it
/// protects lives in an [`UnsafeCell`] beside it, because an unshared table is used without it).
#[derive(Debug, Default)]
pub(crate) struct Lock {
    #[cfg(not(loom))]
    inner: std::sync::Mutex<()>,
    #[cfg(loom)]
    inner: loom::sync::Mutex<()>,
}

/// Held while the lock is held.
pub(crate) struct LockGuard<'a> {
    #[cfg(not(loom))]
    _inner: std::sync::MutexGuard<'a, ()>,
    #[cfg(loom)]
    _inner: loom::sync::MutexGuard<'a, ()>,
}

impl Lock {
    #[inline]
    pub(crate) fn lock(&self) -> LockGuard<'_> {
        #[cfg(not(loom))]
        {
            // A panic while the lock is held cannot leave the protected data half-updated in a
            // way the poison flag would help with (no code path under the lock panics), so a
            // poisoned lock is simply taken.
            LockGuard {
                _inner: self.inner.lock().unwrap_or_else(|e| e.into_inner()),
            }
        }
        #[cfg(loom)]
        {
            LockGuard {
                _inner: self.inner.lock().unwrap(),
            }
        }
    }
}

/// A busy-wait hint; under loom a yield, so the model lets the other thread make progress.
#[allow(dead_code)]
pub(crate) fn spin_loop() {
    #[cfg(not(loom))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

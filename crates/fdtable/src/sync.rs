//! The std/loom shim: every atomic, lock and interior-mutable cell the core uses comes from here,
//! so `RUSTFLAGS="--cfg loom"` swaps the whole core onto loom's model checker.
//!
//! Nothing outside this module names `core::sync::atomic` or `core::cell::UnsafeCell` for the
//! table's shared state directly.

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicUsize, Ordering, fence,
};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicUsize, Ordering, fence,
};

/// An `UnsafeCell` with loom's closure API, so loom can check every access made through it.
#[derive(Debug)]
pub(crate) struct UnsafeCell<T> {
    #[cfg(not(loom))]
    inner: core::cell::UnsafeCell<T>,
    #[cfg(loom)]
    inner: loom::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            #[cfg(not(loom))]
            inner: core::cell::UnsafeCell::new(value),
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
}

/// The table's `file_lock`: the embedder's [`lock_api::RawMutex`] (a spinlock by default,
/// see [`crate::RawSpinLock`]); under loom, loom's own mutex so the model checker sees it.
pub(crate) struct TableLock<L> {
    #[cfg(not(loom))]
    raw: L,
    #[cfg(loom)]
    inner: loom::sync::Mutex<()>,
    #[cfg(loom)]
    _raw: core::marker::PhantomData<L>,
}

impl<L: lock_api::RawMutex> TableLock<L> {
    /// Takes the lock without a guard; [`TableLock::raw_unlock`] releases it.
    #[inline(always)]
    pub(crate) fn raw_lock(&self) -> RawHeld<'_> {
        #[cfg(not(loom))]
        {
            self.raw.lock();
            RawHeld {
                _p: core::marker::PhantomData,
            }
        }
        #[cfg(loom)]
        {
            let g = self.inner.lock().unwrap();
            RawHeld { _guard: Some(g) }
        }
    }

    /// Releases the lock taken by [`TableLock::raw_lock`].
    #[inline(always)]
    pub(crate) fn raw_unlock(&self, held: RawHeld<'_>) {
        #[cfg(not(loom))]
        {
            let _ = held;
            // SAFETY: `held` proves `raw_lock` took the lock in this context.
            unsafe { self.raw.unlock() }
        }
        #[cfg(loom)]
        drop(held);
    }
}

/// Proof that [`TableLock::raw_lock`] took the lock (the loom guard, under loom).
pub(crate) struct RawHeld<'a> {
    #[cfg(not(loom))]
    _p: core::marker::PhantomData<&'a ()>,
    #[cfg(loom)]
    _guard: Option<loom::sync::MutexGuard<'a, ()>>,
}

impl<L: lock_api::RawMutex> TableLock<L> {
    pub(crate) fn new() -> Self {
        TableLock {
            #[cfg(not(loom))]
            raw: L::INIT,
            #[cfg(loom)]
            inner: loom::sync::Mutex::new(()),
            #[cfg(loom)]
            _raw: core::marker::PhantomData,
        }
    }
}

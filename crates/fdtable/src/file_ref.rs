//! Reference-counted open files: the kernel's `file_ref_t` (include/linux/file_ref.h, 6.13)
//! around a user-supplied value.
//!
//! # The count
//!
//! The word stores *count − 1*, so one reference is 0. A lock-free lookup increments it
//! unconditionally (one `lock xadd`, never a compare-and-swap loop, which is O(N²) under
//! contention) and reads the sign of the result:
//!
//! ```text
//!  0x0000_0000_0000_0000  ONEREF      one reference
//!  0x7FFF_FFFF_FFFF_FFFF  MAXREF      largest valid count
//!  0x8000_0000_0000_0000  ┐
//!  0xA000_0000_0000_0000  │ SATURATED  saturation zone: never released again (leaks, safely)
//!  0xBFFF_FFFF_FFFF_FFFF  ┘
//!  0xC000_0000_0000_0000  RELEASED   ┐ dead zone: a lookup's increment lands here and fails
//!  0xE000_0000_0000_0000  DEAD       │
//!  0xFFFF_FFFF_FFFF_FFFF  NOREF      ┘ the last put in progress (one cmpxchg from DEAD)
//! ```
//!
//! The last put takes the count from ONEREF to NOREF and then tries one compare-and-swap
//! NOREF → DEAD. A lookup that incremented in between took the count back to ONEREF, owns the
//! object and will release it itself; the putter's cmpxchg then fails and it does nothing.
//!
//! # Memory
//!
//! The kernel's `struct file` lives in a `SLAB_TYPESAFE_BY_RCU` cache: a lookup may touch a
//! recycled file, which is why it re-checks the slot. Here a file that was ever installed in a
//! table is freed only after an epoch grace period ([`crate::reclaim`]), so a pinned reader's
//! pointer never refers to recycled memory; the release itself (dropping the value: the kernel's
//! `__fput`) still runs synchronously at the last put. A file that was never installed — an open
//! that failed after the object was built — cannot have been seen by any reader and is freed at
//! once, with no deferred work (seed 2, `fput_badopen`).

use crate::reclaim;
use crate::sync::{AtomicUsize, Ordering};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::ptr::NonNull;

const ONEREF: usize = 0;
const MAXREF: usize = isize::MAX as usize;
const SATURATED: usize = 0xA000_0000_0000_0000;
const RELEASED: usize = 0xC000_0000_0000_0000;
const DEAD: usize = 0xE000_0000_0000_0000;
const NOREF: usize = usize::MAX;

/// Set once the file has been visible through a table, so its memory needs a grace period.
const RCU_VISIBLE: usize = 1;

/// The heap object behind a [`FileRef`].
///
/// # Invariants
///
/// - `value` is initialised until the `refcnt` word reaches DEAD through a successful
///   NOREF → DEAD cmpxchg; exactly one thread performs that cmpxchg and then drops `value`.
/// - The allocation itself lives until that drop, and if `flags` has `RCU_VISIBLE`, until a
///   grace period after it.
/// - Aligned to a cache line so that lookups of different files from different threads do not
///   bounce one line between them.
#[repr(C, align(64))]
pub(crate) struct FileInner<F> {
    refcnt: AtomicUsize,
    flags: AtomicUsize,
    value: ManuallyDrop<F>,
}

#[cfg(feature = "leak-check")]
pub(crate) static FILES_LIVE: std::sync::atomic::AtomicIsize =
    std::sync::atomic::AtomicIsize::new(0);

impl<F> FileInner<F> {
    /// `file_ref_get`: takes a reference on a file reached without one (through a table slot,
    /// under a [`reclaim::Guard`]). Returns false if the file is already dead.
    ///
    /// # Safety
    ///
    /// `this` must point to a `FileInner` whose memory is kept alive by the guard: it was read
    /// from a table slot after the guard was pinned.
    #[inline]
    pub(crate) unsafe fn try_get_rcu(this: *const Self, _guard: &reclaim::Guard) -> bool {
        reclaim::assert_live(this);
        // SAFETY: the caller guarantees the memory is valid for the guard's lifetime.
        let refcnt = unsafe { &(*this).refcnt };
        // ORDERING: Acquire, so the caller's re-check of the slot and of `files.fdt` cannot be
        // satisfied before this increment (see `Files::fget`). The file's contents are already
        // visible through the Acquire load of the slot, which pairs with the Release store in
        // `fd_install`/`do_dup2`.
        let old = refcnt.fetch_add(1, Ordering::Acquire);
        reclaim::assert_live(this);
        let new = old.wrapping_add(1);
        if (new as isize) >= 0 {
            return true;
        }
        Self::get_slow(refcnt, new)
    }

    #[cold]
    fn get_slow(refcnt: &AtomicUsize, new: usize) -> bool {
        if new >= RELEASED {
            // Dead zone: the last reference is gone. Memory here is never recycled while the
            // reader is pinned, so pinning the value back to DEAD cannot hit another file.
            // ORDERING: Relaxed; only keeps the count in the middle of the dead zone.
            refcnt.store(DEAD, Ordering::Relaxed);
            return false;
        }
        // Saturation zone: the reference is taken, the file can never be released again.
        // ORDERING: Relaxed; the count is leaked either way.
        refcnt.store(SATURATED, Ordering::Relaxed);
        true
    }

    /// `file_ref_inc`: takes another reference on a file the caller already holds one on.
    #[inline]
    fn inc(&self) {
        // ORDERING: Relaxed; the caller's own reference keeps the file alive, and nothing is
        // published by taking another (as for `Arc::clone`).
        let old = self.refcnt.fetch_add(1, Ordering::Relaxed);
        if old >= MAXREF {
            self.inc_slow(old);
        }
    }

    #[cold]
    fn inc_slow(&self, old: usize) {
        if old < RELEASED {
            // ORDERING: Relaxed; saturated counts are never released.
            self.refcnt.store(SATURATED, Ordering::Relaxed);
        }
    }

    /// `file_ref_put`: drops one reference. Returns true if this was the last one and the
    /// caller must release the file.
    ///
    /// A put that leaves other references is one compare-and-swap that never takes the count
    /// below ONEREF. Only a put that finds the count at ONEREF (or in a special zone) goes to
    /// `put_slow`, which pins *before* decrementing: between its decrement to NOREF and its
    /// NOREF → DEAD cmpxchg, a lock-free lookup may revive the count, drop it again, release
    /// the file and retire its memory; the pin keeps that memory alive until our cmpxchg is done
    /// (the kernel's `file_ref_put` disables preemption for the same window).
    #[inline]
    fn put(&self) -> bool {
        // ORDERING: Relaxed; only a first guess for the compare-and-swap below.
        let mut c = self.refcnt.load(Ordering::Relaxed);
        loop {
            if c == ONEREF || c > MAXREF {
                return self.put_slow();
            }
            // ORDERING: Release on success; everything this holder did with the file
            // happens-before the release, which acquires in `put_slow` (the cmpxchg there reads
            // a value in this RMW's release sequence). Failure: Relaxed, we only retry.
            match self
                .refcnt
                .compare_exchange_weak(c, c - 1, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return false,
                Err(actual) => c = actual,
            }
        }
    }

    #[cold]
    fn put_slow(&self) -> bool {
        let _pinned = reclaim::pin();
        // ORDERING: Release; as in `put`.
        let new = self.refcnt.fetch_sub(1, Ordering::Release).wrapping_sub(1);
        // (Under loom: each access to memory that can be retired is checked right after it
        // happens, with no model switch point in between.)
        reclaim::assert_live(self);
        if (new as isize) >= 0 {
            // Another reference appeared since `put` looked.
            return false;
        }
        if new == NOREF {
            // That was the last reference. A concurrent lookup may have raised the count back
            // to ONEREF; then it owns the file and this put must not release.
            // ORDERING: AcqRel on success; Acquire pairs with the Release decrements of every
            // earlier holder, so their uses of the value happen-before its drop. Failure needs
            // no ordering: the caller does nothing.
            let won = self
                .refcnt
                .compare_exchange(NOREF, DEAD, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok();
            reclaim::assert_live(self);
            return won;
        }
        if new >= RELEASED {
            // Imbalanced put on a dead file: keep it dead, never release twice.
            // ORDERING: Relaxed; no data is published by a dead count.
            self.refcnt.store(DEAD, Ordering::Relaxed);
            return false;
        }
        // A put on a saturated count.
        // ORDERING: Relaxed; saturated counts are never released.
        self.refcnt.store(SATURATED, Ordering::Relaxed);
        false
    }

    /// Marks the file as reachable by lock-free readers: its memory will need a grace period.
    #[inline]
    pub(crate) fn mark_rcu_visible(&self) {
        // ORDERING: Relaxed both; the flag is read by whoever releases the file, which acquires
        // every holder's Release decrement (see `put`), and the installing thread's later
        // Release store of the slot orders this store before any reader's access.
        if self.flags.load(Ordering::Relaxed) & RCU_VISIBLE == 0 {
            self.flags.store(RCU_VISIBLE, Ordering::Relaxed);
        }
    }

    /// Drops the value and frees (or schedules freeing of) the allocation.
    ///
    /// # Safety
    ///
    /// Called exactly once, by the thread whose `put` returned true.
    #[cold]
    unsafe fn release(this: NonNull<Self>) {
        let ptr = this.as_ptr();
        // SAFETY: `put` returned true, so the count is DEAD and no holder remains; lock-free
        // readers can only touch `refcnt`, never `value`.
        unsafe { ManuallyDrop::drop(&mut (*ptr).value) };
        // ORDERING: Relaxed; see `mark_rcu_visible`.
        // SAFETY: the allocation is still live (freed below at the earliest).
        let visible = unsafe { (*ptr).flags.load(Ordering::Relaxed) } & RCU_VISIBLE != 0;
        if visible {
            let guard = reclaim::pin();
            // SAFETY: the file is no longer in any slot (the table's reference was dropped
            // before the count could reach zero), so readers pinning from now on cannot reach
            // it; `dealloc` frees the allocation exactly once.
            unsafe { guard.defer_free(ptr, Self::dealloc) };
        } else {
            // SAFETY: never installed, so no lock-free reader ever saw the pointer.
            unsafe { Self::dealloc(ptr) };
        }
    }

    /// # Safety
    ///
    /// `ptr` came from `Box::into_raw` in [`FileRef::new`] and its value is already dropped.
    unsafe fn dealloc(ptr: *mut Self) {
        #[cfg(feature = "leak-check")]
        // ORDERING: Relaxed; the leak counter of `FileRef::new`.
        FILES_LIVE.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: per the contract; `ManuallyDrop` keeps the value from being dropped twice.
        drop(unsafe { Box::from_raw(ptr) });
    }
}

/// A counted reference to an open file: the kernel's `struct file *` with a reference held.
///
/// Cloning takes a reference (`get_file`); dropping puts one (`fput`). Dropping the last one
/// drops the value — the file's release — exactly once, on the dropping thread, and never
/// under a table lock.
pub struct FileRef<F> {
    ptr: NonNull<FileInner<F>>,
    _owns: PhantomData<FileInner<F>>,
}

// SAFETY: a `FileRef` hands out `&F` to whichever thread holds it and drops `F` on whichever
// thread drops the last one, exactly like `Arc<F>`.
unsafe impl<F: Send + Sync> Send for FileRef<F> {}
// SAFETY: as above.
unsafe impl<F: Send + Sync> Sync for FileRef<F> {}

impl<F> FileRef<F> {
    /// Creates a file with one reference, held by the returned value.
    pub fn new(value: F) -> Self {
        let inner = Box::new(FileInner {
            refcnt: AtomicUsize::new(ONEREF),
            flags: AtomicUsize::new(0),
            value: ManuallyDrop::new(value),
        });
        #[cfg(feature = "leak-check")]
        // ORDERING: Relaxed; a leak counter, read by tests after the threads are joined and
        // the grace periods drained, which order it.
        FILES_LIVE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        FileRef {
            ptr: NonNull::from(Box::leak(inner)),
            _owns: PhantomData,
        }
    }

    /// Whether two references name the same open file (the identity `F_DUPFD_QUERY` and
    /// `kcmp` compare).
    #[inline]
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        a.ptr == b.ptr
    }

    /// `file_count`: the number of references, racy by nature.
    pub fn count(this: &Self) -> usize {
        this.inner().count()
    }

    /// Gives up this reference as a raw pointer to the value (for the C ABI).
    pub fn into_raw(this: Self) -> *const F {
        let this = ManuallyDrop::new(this);
        // SAFETY: the pointer is valid; `addr_of!` creates no reference to the value.
        unsafe { &raw const (*this.ptr.as_ptr()).value as *const F }
    }

    /// Takes back a reference given up by [`FileRef::into_raw`].
    ///
    /// # Safety
    ///
    /// `ptr` must come from `into_raw` on a `FileRef<F>` of the same `F`, and the reference it
    /// carries must not be reclaimed twice.
    pub unsafe fn from_raw(ptr: *const F) -> Self {
        let offset = std::mem::offset_of!(FileInner<F>, value);
        // SAFETY: `ptr` points at the `value` field of a live `FileInner<F>`.
        let inner = unsafe { (ptr as *const u8).sub(offset) } as *mut FileInner<F>;
        FileRef {
            // SAFETY: derived from a non-null pointer to a live allocation.
            ptr: unsafe { NonNull::new_unchecked(inner) },
            _owns: PhantomData,
        }
    }

    /// Takes a new reference through a raw pointer without consuming one (`get_file` in C).
    ///
    /// # Safety
    ///
    /// `ptr` must come from [`FileRef::into_raw`] or [`FileRef::as_ptr`] and the file must
    /// still be held by some reference.
    pub unsafe fn increment_raw(ptr: *const F) {
        // SAFETY: per the contract, reconstructing without dropping.
        let r = ManuallyDrop::new(unsafe { Self::from_raw(ptr) });
        r.inner().inc();
    }

    /// The value's address, without giving up the reference.
    pub fn as_ptr(this: &Self) -> *const F {
        // SAFETY: a `FileRef` keeps the file alive; the result keeps the provenance of the whole
        // allocation (`from_raw` steps back to the header).
        unsafe { FileInner::value_ptr(this.ptr.as_ptr()) }
    }

    #[inline]
    pub(crate) fn inner(&self) -> &FileInner<F> {
        // SAFETY: a `FileRef` holds a reference, so the allocation and value are live.
        unsafe { self.ptr.as_ref() }
    }

    /// Takes ownership of a reference already counted in `ptr` (a slot's reference, or one
    /// taken by `try_get_rcu`).
    ///
    /// # Safety
    ///
    /// The caller transfers one counted reference on `ptr` to the result.
    #[inline]
    pub(crate) unsafe fn from_inner(ptr: NonNull<FileInner<F>>) -> Self {
        FileRef {
            ptr,
            _owns: PhantomData,
        }
    }

    /// Gives up the reference as the raw inner pointer (to store it in a slot).
    #[inline]
    pub(crate) fn into_inner(this: Self) -> NonNull<FileInner<F>> {
        let this = ManuallyDrop::new(this);
        this.ptr
    }
}

impl<F> FileInner<F> {
    /// The value's address, derived from `this` without creating a reference (so it keeps the
    /// provenance of the whole allocation).
    ///
    /// # Safety
    ///
    /// `this` points to a live `FileInner`.
    #[inline(always)]
    pub(crate) unsafe fn value_ptr(this: *const Self) -> *const F {
        // SAFETY: per the contract; `ManuallyDrop<F>` is `repr(transparent)`.
        unsafe { &raw const (*this).value as *const F }
    }

    #[inline]
    pub(crate) fn value(&self) -> &F {
        &self.value
    }

    pub(crate) fn count(&self) -> usize {
        // ORDERING: Relaxed; an instantaneous, racy reading, as `file_count` is.
        let c = self.refcnt.load(Ordering::Relaxed);
        if c >= RELEASED { 0 } else { c.wrapping_add(1) }
    }

    /// Takes another reference through a pointer the caller keeps alive otherwise.
    #[inline]
    pub(crate) fn get(&self) -> NonNull<FileInner<F>> {
        self.inc();
        NonNull::from(self)
    }
}

impl<F> Clone for FileRef<F> {
    #[inline]
    fn clone(&self) -> Self {
        self.inner().inc();
        FileRef {
            ptr: self.ptr,
            _owns: PhantomData,
        }
    }
}

impl<F> Drop for FileRef<F> {
    #[inline]
    fn drop(&mut self) {
        if self.inner().put() {
            // SAFETY: `put` returned true: this is the one releasing thread.
            unsafe { FileInner::release(self.ptr) };
        }
    }
}

impl<F> Deref for FileRef<F> {
    type Target = F;
    #[inline]
    fn deref(&self) -> &F {
        &self.inner().value
    }
}

impl<F: std::fmt::Debug> std::fmt::Debug for FileRef<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileRef")
            .field("ptr", &self.ptr)
            .field("count", &FileRef::count(self))
            .field("value", &**self)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize as StdAtomic;

    struct Probe(Arc<StdAtomic>);
    impl Drop for Probe {
        fn drop(&mut self) {
            // ORDERING: SeqCst; single-threaded tests, any ordering would do.
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn release_exactly_once() {
        let n = Arc::new(StdAtomic::new(0));
        let a = FileRef::new(Probe(n.clone()));
        let b = a.clone();
        assert_eq!(FileRef::count(&a), 2);
        drop(a);
        // ORDERING: SeqCst; single-threaded test.
        assert_eq!(n.load(std::sync::atomic::Ordering::SeqCst), 0);
        drop(b);
        // ORDERING: SeqCst; single-threaded test.
        assert_eq!(n.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn raw_round_trip() {
        let n = Arc::new(StdAtomic::new(0));
        let a = FileRef::new(Probe(n.clone()));
        let p = FileRef::into_raw(a);
        // SAFETY: `p` came from `into_raw` and still carries its reference.
        unsafe { FileRef::increment_raw(p) };
        // SAFETY: two references are carried by `p` now; reclaim both.
        let (x, y) = unsafe { (FileRef::from_raw(p), FileRef::from_raw(p)) };
        assert!(FileRef::ptr_eq(&x, &y));
        drop(x);
        drop(y);
        // ORDERING: SeqCst; single-threaded test.
        assert_eq!(n.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn dead_count_refuses_lookup() {
        let f = FileRef::new(5u32);
        let inner = f.ptr;
        f.inner().mark_rcu_visible();
        let guard = reclaim::pin();
        // Simulate the reader's window: hold the memory by the guard, drop the last reference.
        drop(f);
        // SAFETY: the file was marked visible, so its memory outlives `guard`.
        assert!(!unsafe { FileInner::try_get_rcu(inner.as_ptr(), &guard) });
        // SAFETY: as above.
        assert!(!unsafe { FileInner::try_get_rcu(inner.as_ptr(), &guard) });
    }
}

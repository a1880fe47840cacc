//! Reference-counted open files: the kernel's `file_ref_t` (include/linux/file_ref.h, 6.13)
//! around a value of the embedder's type — sized, or a trait object (`FileRef<dyn MyFile>`)
//! with the same single count.
//!
//! # The count
//!
//! The word stores *count − 1*, so one reference is 0. A lock-free lookup increments it
//! unconditionally (one `lock xadd`, never a compare-and-swap loop, which is O(N²) under
//! contention) and reads the sign of the result; a put decrements it unconditionally:
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
//! object and will release it itself; the putter's cmpxchg then fails and it does nothing. The
//! putter runs that window inside an RCU read-side section (the kernel disables preemption),
//! because the lookup that revived the file may release it and retire its memory before the
//! putter's cmpxchg. A close, which usually holds the last reference, uses the kernel's
//! `file_ref_put_close` instead: a compare-and-swap straight from ONEREF to DEAD, no window.
//!
//! # Memory
//!
//! ```text
//!   allocation (64-byte aligned):  [ pad | FileInner<F> header | value ]
//!                                                               ^ FileRef derefs here
//! ```
//!
//! The header sits immediately before the value, whatever the value's alignment, so a value
//! pointer handed to C finds its header again. A file that was visible to lock-free readers
//! (installed in a table that is or was shared) is freed through [`crate::rcu::call_rcu`]
//! after its release; a file that never was — an unshared process's files, the object of an
//! open that failed — is freed at once (as `fput_badopen` makes it). The release itself (dropping
//! the value: the kernel's `__fput`) always runs synchronously, at the last put.

use crate::errno::Errno;
use crate::rcu::{self, RcuHead};
use crate::sync::{AtomicBool, AtomicU8, AtomicU32, AtomicUsize, Ordering};
use core::alloc::Layout;
use core::marker::PhantomData;
use core::mem::{self, ManuallyDrop};
use core::ops::Deref;
use core::ptr::{self, NonNull};

const ONEREF: usize = 0;
const MAXREF: usize = isize::MAX as usize;
const SATURATED: usize = 0xA000_0000_0000_0000;
const RELEASED: usize = 0xC000_0000_0000_0000;
const DEAD: usize = 0xE000_0000_0000_0000;
const NOREF: usize = usize::MAX;

/// The alignment of every file allocation: files never share a cache line.
const FILE_ALIGN: usize = 64;

/// What the header needs to know about the concrete value type, whatever `F` it is seen as.
struct FileVtable {
    /// Drops the value in place.
    drop_value: unsafe fn(NonNull<u8>),
    /// Frees the allocation; the value is already dropped.
    dealloc: unsafe fn(NonNull<u8>),
    /// The value is exactly the `F` the file is seen as (made by [`FileRef::new`]), not a
    /// larger value coerced to it: only then can [`FileRef::try_unwrap`] move it out whole.
    exact: bool,
}

/// The header in front of every file value.
///
/// # Invariants
///
/// - The value lives at `self as *const u8 + size_of::<FileInner<F>>()`, and `this` points to
///   it (carrying the metadata of an unsized `F`).
/// - The value is initialised until the count reaches DEAD through a successful last put
///   (`put`'s NOREF → DEAD cmpxchg, or `put_close`'s ONEREF → DEAD); exactly one thread does
///   that and then drops the value, then frees the allocation — through RCU if `visible`.
/// - `rcu` is the first field (the RCU model under loom identifies objects by it).
#[repr(C)]
pub(crate) struct FileInner<F: ?Sized> {
    rcu: RcuHead,
    refcnt: AtomicUsize,
    vtable: &'static FileVtable,
    /// Set once the file was installed where a lock-free reader could see it.
    visible: AtomicBool,
    /// Whether the file may be lent without a reference ([`crate::Files::fdget_rcu`]):
    /// [`LEND_NO`], [`LEND_MARKING`] (a borrower is making it lendable, or gave up),
    /// [`LEND_NONBLOCKING`] (lent to non-blocking borrows only) or [`LEND_YES`]. Its release
    /// waits for borrowers unless it is `LEND_NO`.
    lend: AtomicU8,
    /// As `lookups`, for the lookups of [`crate::Files::with_fdget_rcu_nonblocking`] (which
    /// may make the file lendable to non-blocking borrows only). It fits in the padding
    /// before `lookups`.
    nb_lookups: AtomicU8,
    /// Shared-table `fdget_rcu` lookups that took a reference because the file was not
    /// lendable yet: at [`LEND_AFTER`] the next one makes it lendable. Racy on purpose (a
    /// plain load and store): a heuristic, not a count.
    lookups: AtomicU32,
    this: *const F,
}

/// `FileInner::lend`: never lent.
const LEND_NO: u8 = 0;
/// `FileInner::lend`: a borrower announced it, and is making sure no release missed that.
const LEND_MARKING: u8 = 1;
/// `FileInner::lend`: lent without a reference from now on, but only to borrows that do not
/// block ([`crate::Files::with_fdget_rcu_nonblocking`]); others take a reference.
const LEND_NONBLOCKING: u8 = 2;
/// `FileInner::lend`: lent without a reference from now on.
const LEND_YES: u8 = 3;

/// How many shared-table [`crate::Files::fdget_rcu`] lookups of a file take a counted
/// reference (as [`crate::Files::fget`]) before the file is lent without one. Making a file
/// lendable costs one asymmetric barrier (a `membarrier` system call with the built-in RCU),
/// and so does its release afterwards (a close that drops a lendable file's last reference
/// waits for borrowers): a file looked up a few times, then closed, never pays that; a file
/// looked up often pays it once.
#[cfg(not(loom))]
pub const LEND_AFTER: u32 = 64;
/// Under loom: at once, so that the models reach lending in a few steps.
#[cfg(loom)]
pub const LEND_AFTER: u32 = 0;

// `FileInner::nb_lookups` counts to `LEND_AFTER + 1` in a byte.
const _: () = assert!(LEND_AFTER < u8::MAX as u32);

#[cfg(feature = "leak-check")]
pub(crate) static FILES_LIVE: core::sync::atomic::AtomicIsize =
    core::sync::atomic::AtomicIsize::new(0);

/// The layout of an allocation holding a `FileInner<U>` header and a `V`, and the offsets of
/// the header and the value in it.
fn file_layout<V, U: ?Sized>() -> Option<(Layout, usize, usize)> {
    let h = Layout::new::<FileInner<U>>();
    let v = Layout::new::<V>();
    let value_off = h.size().checked_next_multiple_of(v.align())?;
    let header_off = value_off - h.size();
    let size = value_off.checked_add(v.size())?;
    let align = FILE_ALIGN.max(v.align()).max(h.align());
    Some((
        Layout::from_size_align(size, align).ok()?.pad_to_align(),
        header_off,
        value_off,
    ))
}

/// The vtable entries for a value of type `V` behind a header of `FileInner<U>`.
#[allow(clippy::type_complexity)]
struct Vt<V, U: ?Sized>(PhantomData<(fn(V), fn(*const U))>);

impl<V, U: ?Sized> Vt<V, U> {
    const VTABLE: FileVtable = FileVtable {
        drop_value: Self::drop_value,
        dealloc: Self::dealloc,
        exact: false,
    };
    /// For a value made as the type it is seen as (`V` is `U`).
    const EXACT: FileVtable = FileVtable {
        exact: true,
        ..Self::VTABLE
    };

    /// # Safety
    ///
    /// `header` is the header of a live allocation made for `V` behind `FileInner<U>`, whose
    /// value is initialised and dropped only here.
    unsafe fn drop_value(header: NonNull<u8>) {
        // SAFETY: per the contract, the value follows the header.
        unsafe {
            let v = header.as_ptr().add(mem::size_of::<FileInner<U>>()) as *mut V;
            ptr::drop_in_place(v);
        }
    }

    /// # Safety
    ///
    /// As `drop_value`, after it ran; called once.
    unsafe fn dealloc(header: NonNull<u8>) {
        let Some((layout, header_off, _)) = file_layout::<V, U>() else {
            unreachable!("the layout was valid when the file was made")
        };
        #[cfg(feature = "leak-check")]
        // ORDERING: Relaxed; a leak counter read after threads are joined.
        FILES_LIVE.fetch_sub(1, core::sync::atomic::Ordering::Relaxed);
        // SAFETY: the allocation starts `header_off` bytes before the header and was made with
        // `layout`.
        unsafe { alloc::alloc::dealloc(header.as_ptr().sub(header_off), layout) };
    }
}

impl<F: ?Sized> FileInner<F> {
    /// The value's address, derived from the header's (so it keeps the provenance of the
    /// whole allocation) when `F` is sized, read from `this` when it is not.
    ///
    /// # Safety
    ///
    /// `this` points to a live header.
    #[inline(always)]
    pub(crate) unsafe fn value_ptr(this: *const Self) -> *const F {
        if mem::size_of::<*const F>() == mem::size_of::<*const u8>() {
            // A thin pointer: `F` is sized, and its value follows the header.
            // SAFETY: per the type's invariant the value is at this offset in the allocation.
            let p = unsafe { (this as *const u8).add(mem::size_of::<Self>()) };
            // SAFETY: `*const F` is a thin pointer here, with the same representation as
            // `*const u8`.
            unsafe { mem::transmute_copy::<*const u8, *const F>(&p) }
        } else {
            // SAFETY: per the contract; `this` is written once, before the file is shared.
            unsafe { (*this).this }
        }
    }

    /// The header of the value at `value`.
    ///
    /// # Safety
    ///
    /// `value` is the value pointer of a live file (from [`FileInner::value_ptr`]).
    #[inline(always)]
    pub(crate) unsafe fn from_value_ptr(value: *const F) -> *const Self {
        // SAFETY: per the type's invariant the header sits immediately before the value.
        unsafe { (value as *const u8).sub(mem::size_of::<Self>()) as *const Self }
    }

    /// `file_ref_get` under an RCU read-side section: takes a reference on a file reached
    /// without one (through a table slot). False if it is already dead.
    ///
    /// # Safety
    ///
    /// `this` was read from a table slot inside the current RCU read-side section, which is
    /// still open: the memory cannot be freed before the section ends.
    #[inline(always)]
    pub(crate) unsafe fn try_get_rcu(this: *const Self) -> bool {
        rcu::assert_live(this);
        // SAFETY: the caller guarantees the memory is valid for the section.
        let refcnt = unsafe { &(*this).refcnt };
        // ORDERING: Acquire, so the caller's re-check of the slot and of `files.fdt` cannot be
        // satisfied before this increment (see `Files::fget`). The file's contents are already
        // visible through the Acquire load of the slot, which pairs with the Release store in
        // `fd_install`/`do_dup2`.
        let old = refcnt.fetch_add(1, Ordering::Acquire);
        let negative = (old.wrapping_add(1) as isize) < 0;
        rcu::assert_live(this);
        #[cfg(loom)]
        if old == NOREF {
            crate::events::note(crate::events::Event::Revived);
        }
        if !negative {
            return true;
        }
        Self::get_slow(refcnt)
    }

    /// The increment took the count negative: it was dead (the lookup fails) or saturated (it
    /// succeeds, and the file can never be released again). The zones are 2^61 wide, so the
    /// count read now is still in the zone the increment landed in.
    #[cold]
    fn get_slow(refcnt: &AtomicUsize) -> bool {
        // ORDERING: Relaxed; only the zone matters, and no other thread moves a count out of
        // its zone (see above).
        if refcnt.load(Ordering::Relaxed) >= RELEASED {
            // Dead zone: the last reference is gone. The memory is not freed while the reader
            // is in its section, so pinning the value back to DEAD cannot hit another file.
            // ORDERING: Relaxed; only keeps the count in the middle of the dead zone.
            refcnt.store(DEAD, Ordering::Relaxed);
            return false;
        }
        // Saturation zone: the reference is taken, the file can never be released again.
        // ORDERING: Relaxed; the count is leaked either way.
        refcnt.store(SATURATED, Ordering::Relaxed);
        true
    }

    /// `file_ref_inc` / `get_file`: another reference on a file the caller holds one on.
    #[inline(always)]
    pub(crate) fn inc(&self) {
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

    /// `file_ref_put`: drops one reference with one unconditional decrement. True if this was
    /// the last and the caller must release the file.
    #[inline(always)]
    fn put(&self) -> bool {
        let Some(section) = rcu::put_try_begin() else {
            return self.put_unregistered();
        };
        let last = self.dec_in_window();
        rcu::put_end_fast(section);
        last
    }

    /// [`FileInner::put`] with the window opened where `w` says (the put of an `Fd` from a
    /// shared lookup: on the record its lookup used, no thread-local access).
    #[inline(always)]
    pub(crate) fn put_in(&self, w: rcu::PutWindow) -> bool {
        let Some(section) = w.begin() else {
            return self.put_unregistered();
        };
        let last = self.dec_in_window();
        rcu::put_end_fast(section);
        last
    }

    /// Drops a reference with the window opened where `w` says; releases the file if it was
    /// the last.
    ///
    /// # Safety
    ///
    /// The caller owns one counted reference on `this`, given up here.
    #[inline(always)]
    pub(crate) unsafe fn put_ref_in(this: NonNull<Self>, w: rcu::PutWindow) {
        // SAFETY: the caller's reference keeps the header alive until the put.
        if unsafe { this.as_ref() }.put_in(w) {
            // SAFETY: the last put: this is the one releasing thread.
            unsafe { Self::release(this) };
        }
    }

    /// [`FileInner::put`] on a thread whose RCU section is not cheap yet (its first, or one
    /// that is exiting).
    #[cold]
    #[inline(never)]
    fn put_unregistered(&self) -> bool {
        let section = rcu::put_begin();
        let last = self.dec_in_window();
        rcu::put_end(section);
        last
    }

    /// The decrement of a put, inside its window: one `lock dec`, and the sign of the result
    /// (the slow path reads the count again, so that the compiler need not keep the result).
    #[inline(always)]
    fn dec_in_window(&self) -> bool {
        // ORDERING: Release; everything this holder did with the file happens-before the
        // release, which acquires in `put_slow` (its cmpxchg reads a value in this RMW's
        // release sequence).
        let old = self.refcnt.fetch_sub(1, Ordering::Release);
        // Written as a test of the old value against zero, which the compiler turns into the
        // flags of a `lock dec` (the new value is not kept: `put_slow` reads the count again).
        if old as isize > 0 {
            return false;
        }
        rcu::assert_live(self);
        self.put_slow()
    }

    /// The decrement took the count negative: to NOREF (the last reference, unless a lookup
    /// revives the file first), or further into the dead or saturation zone. Reads the count
    /// again: whatever happened since, the zone tells what to do — NOREF: try to mark it dead
    /// (a revived file is its reviver's to release, and a reviver that put it back to NOREF
    /// tries too: exactly one compare-and-swap wins); dead: someone else released it (or an
    /// imbalanced put); saturated: never released.
    #[cold]
    #[inline(never)]
    fn put_slow(&self) -> bool {
        // ORDERING: Relaxed; only the zone matters, and the compare-and-swap below orders.
        let now = self.refcnt.load(Ordering::Relaxed);
        if now == NOREF {
            // ORDERING: AcqRel on success; Acquire pairs with the Release decrements of every
            // earlier holder, so their uses of the value happen-before its drop. Failure needs
            // no ordering: the caller does nothing.
            let won = self
                .refcnt
                .compare_exchange(NOREF, DEAD, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok();
            rcu::assert_live(self);
            if !won {
                crate::events::note(crate::events::Event::LastPutLost);
            }
            return won;
        }
        if now <= MAXREF {
            // A lookup revived the file after our decrement: it owns the release now.
            crate::events::note(crate::events::Event::LastPutLost);
            return false;
        }
        if now >= RELEASED {
            // Released by a reviver, or an imbalanced put on a dead file: keep it dead, never
            // release twice.
            // ORDERING: Relaxed; no data is published by a dead count.
            self.refcnt.store(DEAD, Ordering::Relaxed);
            return false;
        }
        // A put on a saturated count.
        // ORDERING: Relaxed; saturated counts are never released.
        self.refcnt.store(SATURATED, Ordering::Relaxed);
        false
    }

    /// `file_ref_put_close`: the put of a close, which usually holds the last reference: one
    /// compare-and-swap, from ONEREF straight to DEAD when it is the last (no window in which
    /// a lookup can revive the file, so no read-side section), or from n to n − 1 otherwise
    /// (which cannot reach zero, so needs no section either). If that one attempt loses a
    /// race, the plain put: one unconditional decrement — never a compare-and-swap loop, which
    /// is quadratic under contention.
    #[inline]
    fn put_close(&self) -> bool {
        // ORDERING: Relaxed; only a first guess for the compare-and-swap.
        let old = self.refcnt.load(Ordering::Relaxed);
        if old <= MAXREF {
            let new = if old == ONEREF { DEAD } else { old - 1 };
            // ORDERING: AcqRel on success: Release as any put (this holder's uses happen-before
            // the release), Acquire when it is the last (every earlier holder's Release
            // decrement happens-before the drop). Failure: Relaxed, the plain put follows.
            if self
                .refcnt
                .compare_exchange(old, new, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return new == DEAD;
            }
        }
        self.put()
    }

    /// Marks the file as reachable by lock-free readers: its memory will need a grace period.
    #[inline(always)]
    pub(crate) fn mark_visible(&self) {
        // ORDERING: Relaxed both; the flag is read by whoever releases the file, after the
        // Acquire of its last put, which every holder's Release decrement precedes; and the
        // installing thread's later Release store of the slot orders this store before any
        // lock-free reader's access. Racing stores write the same value; nothing clears it.
        if !self.visible.load(Ordering::Relaxed) {
            self.visible.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the file is lent without a reference: the fast path of a shared-table
    /// [`crate::Files::fdget_rcu`].
    #[inline(always)]
    pub(crate) fn lendable(&self) -> bool {
        // ORDERING: Acquire; pairs with the Release store of `LEND_YES` in `make_lendable`,
        // which follows the barrier that makes every later release see the file marked (see
        // there), so a borrower that sees `LEND_YES` needs no barrier of its own.
        self.lend.load(Ordering::Acquire) == LEND_YES
    }

    /// Whether a shared-table lookup that found the file not lendable must count itself
    /// ([`FileInner::lend_due`]): only the first `LEND_AFTER + 1` do.
    #[inline(always)]
    pub(crate) fn lend_counting(&self) -> bool {
        // ORDERING: Relaxed; as in `lend_due`.
        self.lookups.load(Ordering::Relaxed) <= LEND_AFTER
    }

    /// A shared-table `fdget_rcu` found the file not lendable: counts the lookup, and says
    /// whether this one should make it lendable.
    #[inline]
    pub(crate) fn lend_due(&self) -> bool {
        // ORDERING: Relaxed both; a heuristic (lost updates only delay lending). The count
        // moves by one from a value read, so it cannot pass `LEND_AFTER` without a lookup
        // that read `LEND_AFTER` itself: that lookup (or, with racing ones, each of them) is
        // the one that asks `may_lend`, once, as `FileLike::may_lend` promises. Past it the
        // count is never written again: a file that may not be lent (a pipe, a socket) costs
        // its later lookups one load and a branch here, not a call to `may_lend` each.
        let n = self.lookups.load(Ordering::Relaxed);
        if n > LEND_AFTER {
            return false;
        }
        self.lookups.store(n + 1, Ordering::Relaxed);
        // ORDERING: Relaxed; `LEND_MARKING` means another borrower is at it or gave up (the
        // file was closed under it): either way not ours to do.
        n == LEND_AFTER && self.lend.load(Ordering::Relaxed) == LEND_NO
    }

    /// Whether the file is lent to borrows that do not block: the fast path of
    /// [`crate::Files::with_fdget_rcu_nonblocking`]. True for a file lent to every borrow too.
    #[inline(always)]
    pub(crate) fn lendable_nonblocking(&self) -> bool {
        // ORDERING: Acquire; as in `lendable` (the Release store of `make_lendable` is the
        // pair, whichever level it stores).
        self.lend.load(Ordering::Acquire) >= LEND_NONBLOCKING
    }

    /// [`FileInner::lend_counting`] for the lookups of a non-blocking borrow, which have
    /// their own count (a file read through blocking borrows a thousand times can still be
    /// lent to its non-blocking ones).
    #[inline(always)]
    pub(crate) fn lend_counting_nonblocking(&self) -> bool {
        // ORDERING: Relaxed; as in `lend_due`.
        self.nb_lookups.load(Ordering::Relaxed) as u32 <= LEND_AFTER
    }

    /// [`FileInner::lend_due`] for the lookups of a non-blocking borrow.
    #[inline]
    pub(crate) fn lend_due_nonblocking(&self) -> bool {
        // ORDERING: Relaxed both; as in `lend_due` (the count stops at `LEND_AFTER + 1`,
        // which the assertion beside `LEND_AFTER` keeps within the byte).
        let n = self.nb_lookups.load(Ordering::Relaxed);
        if n as u32 > LEND_AFTER {
            return false;
        }
        self.nb_lookups.store(n + 1, Ordering::Relaxed);
        // ORDERING: Relaxed; as in `lend_due`.
        n as u32 == LEND_AFTER && self.lend.load(Ordering::Relaxed) == LEND_NO
    }

    /// Makes the file lendable (to every borrow if `all`, else to non-blocking ones only):
    /// announces it, then a barrier, then checks that `slot`, where the caller read the file
    /// inside its borrow section (still open), still holds it. True: the file is lendable
    /// (later lookups lend it); false: it was closed meanwhile (its release may not wait for
    /// borrowers), so it must not be lent. The two levels differ only in which lookups lend
    /// the file; the release waits for borrowers after either.
    ///
    /// This is a store-load handshake (Dekker) with [`FileInner::release`], which loads `lend`
    /// after a barrier of its own, the last put being ordered after the slot was emptied:
    /// either the release sees the announcement (and waits for every borrow section), or this
    /// check sees the slot emptied. With the built-in RCU the barrier here is a `membarrier`
    /// and the release's only a compiler barrier, as for the read-side sections.
    ///
    /// # Safety
    ///
    /// The caller is inside a borrow section in which it read `this` from `slot`.
    #[cold]
    #[inline(never)]
    pub(crate) unsafe fn make_lendable(
        this: NonNull<Self>,
        slot: &crate::sync::AtomicPtr<Self>,
        all: bool,
    ) -> bool {
        // SAFETY: the section keeps the header alive.
        let f = unsafe { this.as_ref() };
        // ORDERING: Relaxed; ordered before the slot's re-check by the barrier.
        f.lend.store(LEND_MARKING, Ordering::Relaxed);
        rcu::lend_barrier();
        // ORDERING: Acquire; after the barrier (see above).
        if slot.load(Ordering::Acquire) != this.as_ptr() {
            crate::events::note(crate::events::Event::LendAbandoned);
            return false;
        }
        // ORDERING: Release; pairs with the Acquire loads in `lendable` and
        // `lendable_nonblocking`.
        let level = if all { LEND_YES } else { LEND_NONBLOCKING };
        f.lend.store(level, Ordering::Release);
        true
    }

    /// The release: for a file that may be borrowed without a reference, first waits until
    /// no borrow section that could still hold it remains (`synchronize_rcu`) — or, if this
    /// thread is itself inside a borrow section, runs when that ends; then drops the value and
    /// frees (or schedules freeing of) the allocation.
    ///
    /// # Safety
    ///
    /// Called exactly once, by the thread whose last put returned true.
    #[cold]
    unsafe fn release(this: NonNull<Self>) {
        // SAFETY: forwarded: the header is live until the release frees it.
        if unsafe { Self::was_lent(this) } {
            if rcu::in_borrow() {
                // SAFETY: the head is unused until the allocation is retired, which only this
                // deferred release does.
                unsafe { rcu::defer_until_borrows_end(this.cast(), Self::release_later) };
                return;
            }
            rcu::synchronize();
        }
        // SAFETY: forwarded.
        unsafe { Self::release_now(this) }
    }

    /// Whether the file may have been lent without a reference, so that its release must
    /// first wait for borrowers (`synchronize`). The release's half of the handshake in
    /// `make_lendable`: called after the last put (which followed the emptying of the last
    /// slot), it reads the announcement after a barrier.
    ///
    /// # Safety
    ///
    /// The count is DEAD through this thread's last put; the header is live.
    #[inline]
    unsafe fn was_lent(this: NonNull<Self>) -> bool {
        rcu::release_barrier();
        // ORDERING: Relaxed; ordered by the barrier (see `make_lendable`).
        // SAFETY: per the contract.
        unsafe { (*this.as_ptr()).lend.load(Ordering::Relaxed) != LEND_NO }
    }

    /// `try_unwrap`'s last put: one compare-and-swap from one reference straight to DEAD (as
    /// `put_close`'s last put), which fails, changing nothing, if another reference exists.
    fn try_put_unique(&self) -> bool {
        // ORDERING: Acquire on success: every earlier holder's Release decrement (and every
        // use before it) happens-before the value is taken out. Failure: Relaxed, nothing
        // changed and nothing is read.
        self.refcnt
            .compare_exchange(ONEREF, DEAD, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// A release deferred until this thread's borrow sections ended.
    ///
    /// # Safety
    ///
    /// `head` is the `rcu` field of a file whose last put succeeded, passed once.
    unsafe fn release_later(head: NonNull<RcuHead>) {
        rcu::synchronize();
        // SAFETY: the head is the header's first field.
        unsafe { Self::release_now(head.cast()) }
    }

    /// Drops the value and frees (or schedules freeing of) the allocation.
    ///
    /// # Safety
    ///
    /// As [`FileInner::release`], and no borrower can reach the value any more.
    unsafe fn release_now(this: NonNull<Self>) {
        /// Frees the allocation when dropped: after the value's drop, also if it unwinds (a
        /// panicking `Drop` of the value must not leak the file's memory; Rust drops a
        /// `Box`'s allocation the same way).
        struct FreeHeader<F: ?Sized>(NonNull<FileInner<F>>);
        impl<F: ?Sized> Drop for FreeHeader<F> {
            fn drop(&mut self) {
                // SAFETY: the value is gone (dropped, or its drop unwound, which Rust treats
                // as dropped); as `release_now`'s contract.
                unsafe { FileInner::free_header(self.0) }
            }
        }
        let p = this.as_ptr();
        // SAFETY: the last put succeeded, so the count is DEAD and no holder remains;
        // lock-free readers can only touch `refcnt`, never the value.
        let vtable = unsafe { (*p).vtable };
        let _free = FreeHeader(this);
        // SAFETY: as above; `drop_value` matches the allocation (its vtable).
        unsafe { (vtable.drop_value)(this.cast()) };
    }

    /// Frees (or schedules freeing of) the allocation of a file whose value is gone (dropped
    /// or moved out).
    ///
    /// # Safety
    ///
    /// The count is DEAD (through this thread), no borrower can reach the value, and the value
    /// was dropped or moved out.
    unsafe fn free_header(this: NonNull<Self>) {
        let p = this.as_ptr();
        // SAFETY: the header outlives the value until this frees it.
        let (vtable, visible) = unsafe { ((*p).vtable, (*p).visible.load(Ordering::Relaxed)) };
        if visible {
            // SAFETY: the file is in no slot any more (a slot holds a reference, and the count
            // reached zero), so sections that begin from now on cannot reach it; the head is
            // the header's first field, untouched until `free_rcu` runs.
            unsafe { rcu::call_rcu(this.cast::<RcuHead>(), Self::free_rcu) };
        } else {
            // SAFETY: never visible, so no lock-free reader ever saw the pointer.
            unsafe { (vtable.dealloc)(this.cast()) };
        }
    }

    /// The RCU callback of [`FileInner::release`].
    ///
    /// # Safety
    ///
    /// `head` is the `rcu` field of a released file's header, passed once.
    unsafe fn free_rcu(head: NonNull<RcuHead>) {
        // SAFETY: `rcu` is the first field, so the header is at the head's address; its
        // vtable is still intact (only the value was dropped).
        unsafe {
            let vtable = (*head.cast::<Self>().as_ptr()).vtable;
            (vtable.dealloc)(head.cast());
        }
    }

    /// Whether the count is one right now (racy by nature, as `file_count(file) == 1`).
    #[inline(always)]
    pub(crate) fn has_one_ref(&self) -> bool {
        // ORDERING: Relaxed; an instantaneous reading, as `file_count` is.
        self.refcnt.load(Ordering::Relaxed) == ONEREF
    }

    /// `file_count`: the number of references, racy by nature.
    pub(crate) fn count(&self) -> usize {
        // ORDERING: Relaxed; an instantaneous, racy reading, as `file_count` is.
        let c = self.refcnt.load(Ordering::Relaxed);
        if c >= RELEASED { 0 } else { c.wrapping_add(1) }
    }

    /// Takes another reference through a pointer the caller keeps alive otherwise.
    #[inline(always)]
    pub(crate) fn get(&self) -> NonNull<Self> {
        self.inc();
        NonNull::from(self)
    }

    /// The value.
    #[inline(always)]
    pub(crate) fn value(&self) -> &F {
        // SAFETY: the header is live (we have `&self`), and a caller holding `&self` from a
        // reference or a slot keeps the value alive.
        unsafe { &*Self::value_ptr(self) }
    }
}

/// A counted reference to an open file: the kernel's `struct file *` with a reference held.
///
/// Cloning takes a reference (`get_file`); dropping puts one (`fput`). Dropping the last one
/// drops the value — the file's release — exactly once, on the dropping thread, and never
/// under a table lock.
///
/// `F` may be unsized: `FileRef<dyn MyFile>` holds any type implementing `MyFile` behind one
/// count, made with [`FileRef::new_unsize`].
pub struct FileRef<F: ?Sized> {
    ptr: NonNull<FileInner<F>>,
    _owns: PhantomData<F>,
}

// SAFETY: a `FileRef` hands out `&F` to whichever thread holds it and drops `F` on whichever
// thread drops the last one, exactly like `Arc<F>`.
unsafe impl<F: ?Sized + Send + Sync> Send for FileRef<F> {}
// SAFETY: as above.
unsafe impl<F: ?Sized + Send + Sync> Sync for FileRef<F> {}

impl<F> FileRef<F> {
    /// Creates a file with one reference, held by the returned value. Aborts if memory runs
    /// out, as `Box::new` does; see [`FileRef::try_new`].
    pub fn new(value: F) -> Self {
        match Self::try_new_inner(value) {
            Ok(f) => f,
            Err((_, layout)) => alloc::alloc::handle_alloc_error(layout),
        }
    }

    /// Creates a file with one reference; `ENOMEM` if the allocator refuses (the value is
    /// dropped).
    pub fn try_new(value: F) -> Result<Self, Errno> {
        Self::try_new_inner(value).map_err(|_| Errno::ENOMEM)
    }

    /// Takes the value out of the file if this is its only reference: the file's release
    /// without dropping the value (`Arc::try_unwrap`). An async host takes a file out of the
    /// table ([`Files::file_close_fd`](crate::Files::file_close_fd), which returns the
    /// table's reference), unwraps it, and `.await`s its flush or close in the value's own
    /// terms instead of in a synchronous `Drop`:
    ///
    /// ```
    /// # use fdtable::{Files, FileRef, FileLike};
    /// struct Stream { pending: Vec<u8> }
    /// impl FileLike for Stream {}
    /// let mut files: Files<Stream> = Files::new();
    /// let fd = files.install(FileRef::new(Stream { pending: b"tail".to_vec() }), 0, 1024).unwrap();
    /// let file = files.file_close_fd(fd).unwrap();
    /// match FileRef::try_unwrap(file) {
    ///     Ok(stream) => assert_eq!(stream.pending, b"tail"),   // flush it, `.await` it...
    ///     Err(shared) => drop(shared),   // a dup or another lookup still holds it
    /// }
    /// ```
    ///
    /// `Err(this)`, with nothing changed, for a file made by
    /// [`new_unsize`](FileRef::new_unsize) (its value is larger than the `F` it is seen as);
    /// when another reference exists — another fd (a dup,
    /// another table after a fork), another `FileRef`, or a lookup on another thread that
    /// holds the file right now — and when this thread is itself inside a
    /// [`Files::fdget_rcu`](crate::Files::fdget_rcu) borrow (a file that was lent without a
    /// reference must first wait for its borrowers, which this thread's own borrow would
    /// block): drop the borrow first, or drop `this` and let the release run as usual. The
    /// same holds while this thread is online as a QSBR reader (`rcu::QsbrThread`, with
    /// `std`): call it inside `QsbrThread::offline`.
    ///
    /// Like the release, a file that was lent without a reference first waits until no borrow
    /// that could still hold it remains (see [`Files::fdget_rcu`](crate::Files::fdget_rcu));
    /// without `std` that is the embedder's `synchronize_rcu`, so call this outside
    /// read-side sections.
    pub fn try_unwrap(this: Self) -> Result<F, Self> {
        if !this.inner().vtable.exact || rcu::in_borrow() || !this.inner().try_put_unique() {
            return Err(this);
        }
        let this = ManuallyDrop::new(this);
        let p = this.ptr;
        // SAFETY: the count is DEAD through our compare-and-swap; the header is live.
        if unsafe { FileInner::was_lent(p) } {
            rcu::synchronize();
        }
        // SAFETY: the count is DEAD and we are the thread that killed it: no holder remains,
        // lock-free readers touch only `refcnt`, and no borrower can reach the value any more
        // (waited for above). The value is initialised and read out once; the allocation is
        // then freed without dropping it.
        unsafe {
            let value = ptr::read(FileInner::value_ptr(p.as_ptr()));
            FileInner::free_header(p);
            Ok(value)
        }
    }

    fn try_new_inner(value: F) -> Result<Self, (F, Layout)> {
        // SAFETY: the identity is a valid coercion: same address, same (no) metadata.
        unsafe { FileRef::<F>::alloc_with(value, |p| p, true) }
    }
}

impl<F: ?Sized> FileRef<F> {
    /// Creates a file of an unsized type — typically a trait object — from a sized value,
    /// with one reference count and no extra allocation:
    ///
    /// ```
    /// use fdtable::{FileLike, FileRef};
    /// trait MyFile: FileLike { fn name(&self) -> &str; }
    /// struct Pipe;
    /// impl FileLike for Pipe {}
    /// impl MyFile for Pipe { fn name(&self) -> &str { "pipe" } }
    ///
    /// let f = FileRef::<dyn MyFile>::new_unsize(Pipe, |p| p);
    /// assert_eq!(f.name(), "pipe");
    /// ```
    ///
    /// `coerce` turns a reference to the value into a reference to `F` — the unsizing
    /// coercion `|v| v`. It must return a reference to the value itself, at the value's own
    /// address (a reference to a field at offset zero is accepted too; the value is still
    /// dropped whole, as `V`); anything else panics. Aborts if memory runs out.
    ///
    /// `V` is `Send + 'static` because the file may be released — `V` dropped — on any thread
    /// and at any time, whatever part of it `coerce` exposes as `F`:
    ///
    /// ```compile_fail
    /// use fdtable::{FileLike, FileRef};
    /// struct Pipe;
    /// impl FileLike for Pipe {}
    /// struct Borrowing<'a> { pipe: Pipe, name: &'a str }
    /// let name = String::from("x");
    /// // error: `name` does not live long enough (`V: 'static`)
    /// let f = FileRef::<dyn FileLike>::new_unsize(Borrowing { pipe: Pipe, name: &name }, |v| &v.pipe);
    /// ```
    ///
    /// ```compile_fail
    /// use fdtable::{FileLike, FileRef};
    /// struct Pipe;
    /// impl FileLike for Pipe {}
    /// struct NotSend { pipe: Pipe, rc: std::rc::Rc<u8> }
    /// // error: `Rc<u8>` cannot be sent between threads safely (`V: Send`)
    /// let f = FileRef::<dyn FileLike>::new_unsize(NotSend { pipe: Pipe, rc: 1.into() }, |v| &v.pipe);
    /// ```
    pub fn new_unsize<V: Send + 'static>(value: V, coerce: impl FnOnce(&V) -> &F) -> Self {
        match Self::try_new_unsize(value, coerce) {
            Ok(f) => f,
            Err(_) => match file_layout::<V, F>() {
                Some((layout, _, _)) => alloc::alloc::handle_alloc_error(layout),
                None => panic!("fdtable: a file of this size cannot be allocated"),
            },
        }
    }

    /// As [`FileRef::new_unsize`], with `ENOMEM` instead of aborting.
    pub fn try_new_unsize<V: Send + 'static>(
        value: V,
        coerce: impl FnOnce(&V) -> &F,
    ) -> Result<Self, Errno> {
        // SAFETY: `coerce` is checked below to return a pointer at the value's address whose
        // referent lies inside the value (it is derived from `&V` for the same lifetime); the
        // metadata it carries is used only for `&F`, never for dropping or freeing.
        let r = unsafe {
            FileRef::<F>::alloc_with(
                value,
                |p: *const V| {
                    // SAFETY: `alloc_with` passes a pointer to the initialised value, valid (and
                    // not mutated) for as long as the file lives.
                    coerce(&*p) as *const F
                },
                false,
            )
        };
        r.map_err(|_| Errno::ENOMEM)
    }

    /// Allocates a file holding `value`, seen as `F` through `coerce`.
    ///
    /// # Safety
    ///
    /// `coerce(p)` must return a pointer whose metadata is valid for a referent at `p`, inside
    /// the value, for as long as the value lives (its address is checked to be `p`'s; if not,
    /// or if `coerce` panics, the value is dropped, the memory freed, and this panics).
    unsafe fn alloc_with<V>(
        value: V,
        coerce: impl FnOnce(*const V) -> *const F,
        exact: bool,
    ) -> Result<Self, (V, Layout)> {
        let Some((layout, header_off, value_off)) = file_layout::<V, F>() else {
            return Err((value, Layout::new::<u8>()));
        };
        // SAFETY: the layout is non-zero-sized (it holds the header).
        let base = unsafe { alloc::alloc::alloc(layout) };
        if base.is_null() {
            return Err((value, layout));
        }
        /// Drops the value and frees the allocation if `coerce` panics or is refused.
        struct Unwind<V> {
            base: *mut u8,
            layout: Layout,
            value: *mut V,
        }
        impl<V> Drop for Unwind<V> {
            fn drop(&mut self) {
                // SAFETY: the value was written and not yet handed out; the allocation was made
                // with `layout`.
                unsafe {
                    ptr::drop_in_place(self.value);
                    alloc::alloc::dealloc(self.base, self.layout);
                }
            }
        }
        // SAFETY: fresh allocation of `layout`; the header and the value fit at their offsets
        // with their alignments (`file_layout`).
        unsafe {
            let v = base.add(value_off) as *mut V;
            v.write(value);
            let unwind = Unwind {
                base,
                layout,
                value: v,
            };
            let this = coerce(v);
            if this as *const u8 != v as *const u8 {
                drop(unwind);
                panic!("fdtable: FileRef::new_unsize's coercion must return the value itself");
            }
            mem::forget(unwind);
            let header = base.add(header_off) as *mut FileInner<F>;
            header.write(FileInner {
                rcu: RcuHead::new(),
                refcnt: AtomicUsize::new(ONEREF),
                vtable: if exact {
                    &const { Vt::<V, F>::EXACT }
                } else {
                    &const { Vt::<V, F>::VTABLE }
                },
                visible: AtomicBool::new(false),
                lend: AtomicU8::new(LEND_NO),
                nb_lookups: AtomicU8::new(0),
                lookups: AtomicU32::new(0),
                this,
            });
            #[cfg(feature = "leak-check")]
            // ORDERING: Relaxed; a leak counter read after threads are joined.
            FILES_LIVE.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
            Ok(FileRef {
                ptr: NonNull::new_unchecked(header),
                _owns: PhantomData,
            })
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

    /// Gives up this reference as a raw pointer to the value (for a C ABI).
    pub fn into_raw(this: Self) -> *const F {
        let this = ManuallyDrop::new(this);
        FileRef::as_ptr(&this)
    }

    /// Takes back a reference given up by [`FileRef::into_raw`].
    ///
    /// # Safety
    ///
    /// `ptr` must come from `into_raw` (or [`FileRef::as_ptr`], with a reference counted for
    /// it by [`FileRef::increment_raw`]) on a `FileRef<F>` of the same `F`, and the reference
    /// it carries must not be taken back twice.
    pub unsafe fn from_raw(ptr: *const F) -> Self {
        // SAFETY: per the contract `ptr` is the value pointer of a live file.
        let inner = unsafe { FileInner::from_value_ptr(ptr) };
        FileRef {
            // SAFETY: derived from a non-null pointer to a live allocation.
            ptr: unsafe { NonNull::new_unchecked(inner as *mut FileInner<F>) },
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
        // SAFETY: a `FileRef` keeps the file alive.
        unsafe { FileInner::value_ptr(this.ptr.as_ptr()) }
    }

    #[inline(always)]
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
    #[inline(always)]
    pub(crate) unsafe fn from_inner(ptr: NonNull<FileInner<F>>) -> Self {
        FileRef {
            ptr,
            _owns: PhantomData,
        }
    }

    /// Gives up the reference as the raw header pointer (to store it in a slot).
    #[inline(always)]
    pub(crate) fn into_inner(this: Self) -> NonNull<FileInner<F>> {
        let this = ManuallyDrop::new(this);
        this.ptr
    }

    /// Drops this reference the way a close does (`fput_close`): one compare-and-swap, and
    /// the release on the spot if it was the last.
    #[inline]
    pub(crate) fn put_close(this: Self) {
        let this = ManuallyDrop::new(this);
        if this.inner().put_close() {
            // SAFETY: the last put: this is the one releasing thread.
            unsafe { FileInner::release(this.ptr) };
        }
    }
}

impl<F: ?Sized> Clone for FileRef<F> {
    #[inline]
    fn clone(&self) -> Self {
        self.inner().inc();
        FileRef {
            ptr: self.ptr,
            _owns: PhantomData,
        }
    }
}

impl<F: ?Sized> Drop for FileRef<F> {
    #[inline]
    fn drop(&mut self) {
        if self.inner().put() {
            // SAFETY: the last put: this is the one releasing thread.
            unsafe { FileInner::release(self.ptr) };
        }
    }
}

impl<F: ?Sized> Deref for FileRef<F> {
    type Target = F;
    #[inline(always)]
    fn deref(&self) -> &F {
        self.inner().value()
    }
}

impl<F: ?Sized + core::fmt::Debug> core::fmt::Debug for FileRef<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FileRef")
            .field("ptr", &self.ptr)
            .field("count", &FileRef::count(self))
            .field("value", &&**self)
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

    fn released(n: &StdAtomic) -> usize {
        // ORDERING: SeqCst; single-threaded test.
        n.load(std::sync::atomic::Ordering::SeqCst)
    }

    #[test]
    fn release_exactly_once() {
        let n = Arc::new(StdAtomic::new(0));
        let a = FileRef::new(Probe(n.clone()));
        let b = a.clone();
        assert_eq!(FileRef::count(&a), 2);
        drop(a);
        assert_eq!(released(&n), 0);
        drop(b);
        assert_eq!(released(&n), 1);
    }

    #[test]
    fn put_close_releases_at_the_last() {
        let n = Arc::new(StdAtomic::new(0));
        let a = FileRef::new(Probe(n.clone()));
        let b = a.clone();
        FileRef::put_close(a);
        assert_eq!(released(&n), 0);
        FileRef::put_close(b);
        assert_eq!(released(&n), 1);
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
        assert_eq!(released(&n), 1);
    }

    #[test]
    fn dead_count_refuses_lookup() {
        let f = FileRef::new(5u32);
        let inner = f.ptr;
        f.inner().mark_visible();
        let section = rcu::lookup_begin();
        // The reader's window: the memory is held by the section; drop the last reference.
        drop(f);
        // SAFETY: the file was visible, so its memory outlives the section.
        assert!(!unsafe { FileInner::try_get_rcu(inner.as_ptr()) });
        // SAFETY: as above.
        assert!(!unsafe { FileInner::try_get_rcu(inner.as_ptr()) });
        rcu::lookup_end(section);
    }

    trait Named: Send + Sync {
        fn name(&self) -> &'static str;
    }
    #[repr(align(128))]
    struct Big(u8, #[allow(dead_code)] Probe);
    impl Named for Big {
        fn name(&self) -> &'static str {
            if self.0 == 7 { "big" } else { "?" }
        }
    }
    impl Named for Probe {
        fn name(&self) -> &'static str {
            "probe"
        }
    }

    #[test]
    fn trait_objects_one_count() {
        let n = Arc::new(StdAtomic::new(0));
        let a = FileRef::<dyn Named>::new_unsize(Probe(n.clone()), |p| p);
        let b = FileRef::<dyn Named>::new_unsize(Big(7, Probe(n.clone())), |p| p);
        assert_eq!(a.name(), "probe");
        assert_eq!(b.name(), "big");
        assert_eq!((FileRef::as_ptr(&b) as *const u8).align_offset(128), 0);
        let c = b.clone();
        assert_eq!(FileRef::count(&b), 2);
        let raw = FileRef::into_raw(c);
        // SAFETY: from `into_raw` above.
        let c = unsafe { FileRef::<dyn Named>::from_raw(raw) };
        assert!(FileRef::ptr_eq(&b, &c));
        drop((a, b, c));
        assert_eq!(released(&n), 2);
    }

    #[test]
    fn unsized_slices() {
        let f = FileRef::<[u8]>::new_unsize([1u8, 2, 3], |a| a);
        assert_eq!(&*f, &[1, 2, 3]);
        let z = FileRef::<dyn Send>::new_unsize((), |a| a);
        drop((f, z));
    }

    #[test]
    #[should_panic(expected = "must return the value itself")]
    fn a_coercion_elsewhere_panics() {
        static OTHER: u32 = 0;
        let _f: FileRef<u32> = FileRef::new_unsize(5u32, |_| &OTHER);
    }
}

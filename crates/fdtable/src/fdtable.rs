//! `struct fdtable`: one allocation holding `max_fds`, the slots lock-free readers load, and
//! the bitmaps and per-fd payloads the lock protects (as the kernel's `alloc_fdtable` makes
//! it, with the payloads added).
//!
//! ```text
//!   FdTable ──► [ rcu head | max_fds | slot 0 … slot N-1 | open_fds | close_on_exec |
//!                 full_fds_bits | payload 0 … payload N-1 ]
//!                              │
//!                              └─► FileInner<F>   (null: free or reserved)
//! ```
//!
//! A reader gets `max_fds` and the slots from the same snapshot with one pointer load. Slots
//! are written only with the table lock held (or by the table's only user); bitmaps and
//! payloads are read and written only so. An allocation is never resized: growth copies into
//! a new one, publishes it with a Release store of `files.fdt`, and retires the old one
//! through RCU (or frees it at once when the table has one user).

use crate::bitmap::{BITS_PER_LONG, Long, words_for};
use crate::errno::Errno;
use crate::file_ref::FileInner;
use crate::rcu::RcuHead;
use crate::sync::AtomicPtr;
use core::alloc::Layout;
use core::marker::PhantomData;
use core::mem::{self, MaybeUninit};
#[cfg(loom)]
use core::ptr;
use core::ptr::NonNull;

/// Header of the allocation; the arrays follow it.
///
/// # Invariants
///
/// `rcu` is the first field (the loom RCU model identifies objects by it); the slots start
/// right after the header (`size_of::<FdTable>()` is a multiple of a slot's alignment).
#[repr(C)]
pub(crate) struct FdTable<F: ?Sized, P> {
    rcu: RcuHead,
    max_fds: usize,
    /// Byte offsets of the arrays after the slots (computed once, at allocation).
    open_fds: usize,
    close_on_exec: usize,
    full_fds_bits: usize,
    payload: usize,
    _marker: PhantomData<(*const FileInner<F>, P)>,
}

pub(crate) type Slot<F> = AtomicPtr<FileInner<F>>;

#[cfg(feature = "leak-check")]
pub(crate) static ARRAYS_LIVE: core::sync::atomic::AtomicIsize =
    core::sync::atomic::AtomicIsize::new(0);

/// Where each array starts in an allocation of a given `max_fds`.
#[derive(Clone, Copy)]
struct Offsets {
    layout: Layout,
    open_fds: usize,
    close_on_exec: usize,
    full_fds_bits: usize,
    payload: usize,
}

impl<F: ?Sized, P> FdTable<F, P> {
    fn offsets(max_fds: usize) -> Option<Offsets> {
        let words = words_for(max_fds, BITS_PER_LONG);
        let full_words = words_for(words, BITS_PER_LONG);
        let (l, _) = Layout::new::<Self>()
            .extend(Layout::array::<Slot<F>>(max_fds).ok()?)
            .ok()?;
        let (l, open_fds) = l.extend(Layout::array::<Long>(words).ok()?).ok()?;
        let (l, close_on_exec) = l.extend(Layout::array::<Long>(words).ok()?).ok()?;
        let (l, full_fds_bits) = l.extend(Layout::array::<Long>(full_words).ok()?).ok()?;
        let (l, payload) = l
            .extend(Layout::array::<MaybeUninit<P>>(max_fds).ok()?)
            .ok()?;
        Some(Offsets {
            layout: l.pad_to_align(),
            open_fds,
            close_on_exec,
            full_fds_bits,
            payload,
        })
    }

    /// `alloc_fdtable`: an allocation of `max_fds` empty slots, clear bitmaps and
    /// uninitialised payloads. `ENOMEM` if the allocator refuses (or the size overflows).
    pub(crate) fn alloc(max_fds: usize) -> Result<NonNull<Self>, Errno> {
        let off = Self::offsets(max_fds).ok_or(Errno::ENOMEM)?;
        // SAFETY: the layout is non-zero-sized (it has the header). Zeroed memory is a valid
        // array of null `AtomicPtr`s and of clear bitmap words outside loom (loom's atomics are
        // written below instead).
        let raw = unsafe { alloc::alloc::alloc_zeroed(off.layout) };
        let Some(base) = NonNull::new(raw) else {
            return Err(Errno::ENOMEM);
        };
        let header = base.as_ptr() as *mut Self;
        // SAFETY: `raw` is a fresh allocation of `layout`, which holds the header at offset 0
        // and the slots after it; each is initialised before any read.
        unsafe {
            header.write(FdTable {
                rcu: RcuHead::new(),
                max_fds,
                open_fds: off.open_fds,
                close_on_exec: off.close_on_exec,
                full_fds_bits: off.full_fds_bits,
                payload: off.payload,
                _marker: PhantomData,
            });
            #[cfg(loom)]
            {
                let slots = raw.add(mem::size_of::<Self>()) as *mut Slot<F>;
                for i in 0..max_fds {
                    slots.add(i).write(AtomicPtr::new(ptr::null_mut()));
                }
            }
        }
        #[cfg(feature = "leak-check")]
        // ORDERING: Relaxed; a leak counter, read by tests after the threads are joined and
        // the grace periods drained, which order it.
        ARRAYS_LIVE.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        Ok(base.cast())
    }

    /// Frees an allocation. The files its slots point to and its payloads are not touched:
    /// they belong to whichever allocation is current (or were moved out by the caller).
    ///
    /// # Safety
    ///
    /// `this` came from [`FdTable::alloc`], is freed once, and no reader can reach it any more.
    pub(crate) unsafe fn free(this: NonNull<Self>) {
        // SAFETY: per the contract the header is initialised.
        let max_fds = unsafe { (*this.as_ptr()).max_fds };
        let Some(off) = Self::offsets(max_fds) else {
            unreachable!("the layout was valid at alloc")
        };
        // SAFETY: the slots were initialised in `alloc`; dropping them (a no-op outside loom)
        // and then deallocating with the same layout is sound.
        unsafe {
            #[cfg(loom)]
            {
                let slots = (this.as_ptr() as *mut u8).add(mem::size_of::<Self>()) as *mut Slot<F>;
                for i in 0..max_fds {
                    ptr::drop_in_place(slots.add(i));
                }
            }
            alloc::alloc::dealloc(this.as_ptr() as *mut u8, off.layout);
        }
        #[cfg(feature = "leak-check")]
        // ORDERING: Relaxed; the leak counter of `alloc`.
        ARRAYS_LIVE.fetch_sub(1, core::sync::atomic::Ordering::Relaxed);
    }

    /// The RCU callback that frees a retired allocation.
    ///
    /// # Safety
    ///
    /// `head` is the `rcu` field of an allocation retired once through `call_rcu`.
    pub(crate) unsafe fn free_rcu(head: NonNull<RcuHead>) {
        // SAFETY: `rcu` is the first field; the grace period has elapsed.
        unsafe { Self::free(head.cast()) }
    }
}

/// A borrowed allocation, kept as a raw pointer so every access derives from the pointer to
/// the whole allocation (a `&FdTable` would cover only the header, and stepping past it is not
/// allowed under Stacked Borrows).
pub(crate) struct TableRef<'a, F: ?Sized, P> {
    ptr: NonNull<FdTable<F, P>>,
    _lt: PhantomData<&'a FdTable<F, P>>,
}

impl<F: ?Sized, P> Clone for TableRef<'_, F, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F: ?Sized, P> Copy for TableRef<'_, F, P> {}

impl<'a, F: ?Sized, P> TableRef<'a, F, P> {
    /// # Safety
    ///
    /// `ptr` points to an allocation from [`FdTable::alloc`] that stays allocated for `'a`.
    #[inline(always)]
    pub(crate) unsafe fn new(ptr: *const FdTable<F, P>) -> Self {
        crate::rcu::assert_live(ptr);
        TableRef {
            // SAFETY: allocations are never null (the caller passes one from `alloc`).
            ptr: unsafe { NonNull::new_unchecked(ptr as *mut FdTable<F, P>) },
            _lt: PhantomData,
        }
    }

    /// The allocation, for retiring it.
    #[inline(always)]
    pub(crate) fn as_non_null(self) -> NonNull<FdTable<F, P>> {
        self.ptr
    }

    /// `fdt->max_fds`.
    #[inline(always)]
    pub(crate) fn max_fds(self) -> usize {
        // SAFETY: live for `'a` by construction.
        unsafe { (*self.ptr.as_ptr()).max_fds }
    }

    /// The slot for `fd`, or `None` past `max_fds`.
    #[inline(always)]
    pub(crate) fn slot(self, fd: usize) -> Option<&'a Slot<F>> {
        if fd < self.max_fds() {
            // SAFETY: `fd < max_fds`.
            Some(unsafe { self.slot_unchecked(fd) })
        } else {
            None
        }
    }

    /// # Safety
    ///
    /// `fd < self.max_fds()`.
    #[inline(always)]
    pub(crate) unsafe fn slot_unchecked(self, fd: usize) -> &'a Slot<F> {
        const { assert!(mem::size_of::<FdTable<(), ()>>().is_multiple_of(mem::align_of::<Slot<()>>())) };
        let base = self.ptr.as_ptr() as *const u8;
        // SAFETY: the caller bounds `fd`; the slots were initialised in `alloc` and start right
        // after the header; `base` carries the provenance of the whole allocation.
        unsafe { &*(base.add(mem::size_of::<FdTable<F, P>>()) as *const Slot<F>).add(fd) }
    }

    /// The header, read through the allocation pointer.
    #[inline(always)]
    fn header(self) -> &'a FdTable<F, P> {
        // SAFETY: live for `'a`; the header fields are never written after `alloc`.
        unsafe { &*self.ptr.as_ptr() }
    }

    /// A word of `open_fds`, by raw pointer (the hot paths skip slice bounds checks).
    ///
    /// # Safety
    ///
    /// `w < self.words()`; the caller has exclusive access to the locked state while it uses
    /// the pointer.
    #[inline(always)]
    pub(crate) unsafe fn open_word(self, w: usize) -> *mut Long {
        let off = self.header().open_fds;
        // SAFETY: per the contract the word is inside the allocation.
        unsafe { ((self.ptr.as_ptr() as *mut u8).add(off) as *mut Long).add(w) }
    }

    /// A word of `close_on_exec`, by raw pointer.
    ///
    /// # Safety
    ///
    /// As [`TableRef::open_word`].
    #[inline(always)]
    pub(crate) unsafe fn cloexec_word(self, w: usize) -> *mut Long {
        let off = self.header().close_on_exec;
        // SAFETY: per the contract the word is inside the allocation.
        unsafe { ((self.ptr.as_ptr() as *mut u8).add(off) as *mut Long).add(w) }
    }

    /// A word of `full_fds_bits`, by raw pointer.
    ///
    /// # Safety
    ///
    /// `w < words_for(self.words(), BITS_PER_LONG)`; exclusive access as above.
    #[inline(always)]
    pub(crate) unsafe fn full_word(self, w: usize) -> *mut Long {
        let off = self.header().full_fds_bits;
        // SAFETY: per the contract the word is inside the allocation.
        unsafe { ((self.ptr.as_ptr() as *mut u8).add(off) as *mut Long).add(w) }
    }

    /// The number of bitmap words (`BITS_TO_LONGS(max_fds)`).
    #[inline(always)]
    pub(crate) fn words(self) -> usize {
        words_for(self.max_fds(), BITS_PER_LONG)
    }

    /// `fdt->open_fds`.
    ///
    /// # Safety
    ///
    /// The caller has exclusive access to the table's locked state (the lock, or sole
    /// ownership) for `'b`, and holds no other reference into this bitmap.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn open_fds<'b>(self) -> &'b mut [Long] {
        let off = self.header().open_fds;
        // SAFETY: per the contract; the words are initialised (zeroed at alloc).
        unsafe { self.words_at(off, self.words()) }
    }

    /// `fdt->close_on_exec`.
    ///
    /// # Safety
    ///
    /// As [`TableRef::open_fds`].
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn close_on_exec<'b>(self) -> &'b mut [Long] {
        let off = self.header().close_on_exec;
        // SAFETY: as in `open_fds`.
        unsafe { self.words_at(off, self.words()) }
    }

    /// `fdt->full_fds_bits`.
    ///
    /// # Safety
    ///
    /// As [`TableRef::open_fds`].
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn full_fds_bits<'b>(self) -> &'b mut [Long] {
        let off = self.header().full_fds_bits;
        // SAFETY: as in `open_fds`.
        unsafe { self.words_at(off, words_for(self.words(), BITS_PER_LONG)) }
    }

    /// A copy of the payload of `fd`, an installed fd.
    ///
    /// # Safety
    ///
    /// `fd < max_fds` and `fd` is installed (its payload is initialised); no write to the
    /// payloads can run concurrently (the caller holds the lock, or is the table's only user).
    #[inline(always)]
    pub(crate) unsafe fn payload_of(self, fd: usize) -> P
    where
        P: Copy,
    {
        let off = self.header().payload;
        // SAFETY: per the contract: in bounds, initialised, no concurrent write; a read through
        // a raw pointer creates no reference that could alias a `Locked`'s.
        unsafe {
            ((self.ptr.as_ptr() as *const u8).add(off) as *const P)
                .add(fd)
                .read()
        }
    }

    /// The per-fd payloads (initialised exactly for open fds).
    ///
    /// # Safety
    ///
    /// As [`TableRef::open_fds`].
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn payloads<'b>(self) -> &'b mut [MaybeUninit<P>] {
        let off = self.header().payload;
        // SAFETY: per the contract; `MaybeUninit` needs no initialisation.
        unsafe {
            core::slice::from_raw_parts_mut(
                (self.ptr.as_ptr() as *mut u8).add(off) as *mut MaybeUninit<P>,
                self.max_fds(),
            )
        }
    }

    /// # Safety
    ///
    /// `off` and `n` describe initialised words inside the allocation; exclusive access.
    #[inline(always)]
    unsafe fn words_at<'b>(self, off: usize, n: usize) -> &'b mut [Long] {
        // SAFETY: per the contract.
        unsafe {
            core::slice::from_raw_parts_mut((self.ptr.as_ptr() as *mut u8).add(off) as *mut Long, n)
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::Ordering;

    #[test]
    fn alloc_free() {
        let a = FdTable::<u8, u32>::alloc(128).unwrap();
        // SAFETY: freshly allocated, freed below.
        let r = unsafe { TableRef::new(a.as_ptr()) };
        assert_eq!(r.max_fds(), 128);
        // ORDERING: Relaxed; single-threaded test.
        assert!(r.slot(127).unwrap().load(Ordering::Relaxed).is_null());
        assert!(r.slot(128).is_none());
        // SAFETY: sole owner.
        unsafe {
            assert_eq!(r.open_fds().len(), 2);
            assert!(r.open_fds().iter().all(|w| *w == 0));
            assert_eq!(r.close_on_exec().len(), 2);
            assert_eq!(r.full_fds_bits().len(), 1);
            assert_eq!(r.payloads().len(), 128);
            r.open_fds()[1] = !0;
            r.payloads()[127].write(7);
            assert_eq!(r.close_on_exec()[1], 0);
            assert_eq!(r.full_fds_bits()[0], 0);
        }
        // SAFETY: allocated above, never shared.
        unsafe { FdTable::free(a) };
    }

    #[test]
    fn absurd_size_is_enomem() {
        assert_eq!(
            FdTable::<u8, ()>::alloc(usize::MAX / 4).err(),
            Some(Errno::ENOMEM)
        );
    }
}

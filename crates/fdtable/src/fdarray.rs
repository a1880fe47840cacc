//! The RCU-published part of the table: `max_fds` and the slot array, in one allocation so a
//! reader gets both from the same snapshot with one pointer load (trap 4 of REFERENCE.md).
//!
//! ```text
//!   FdArray ──► [ max_fds | slot 0 | slot 1 | ... | slot max_fds-1 ]
//!                            │
//!                            └─► FileInner<F>   (null: free or reserved)
//! ```
//!
//! Slots are written only with the table lock held (or by the table's only user) and read
//! locklessly. An array is never resized: growth copies into a new array, publishes it with a
//! Release store of `files.fdt`, and retires the old one through [`crate::reclaim`].

use crate::errno::Errno;
use crate::file_ref::FileInner;
use crate::sync::AtomicPtr;
use std::alloc::Layout;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

/// Header of the array allocation; the slots follow it.
#[repr(C)]
pub(crate) struct FdArray<F> {
    max_fds: usize,
    _marker: PhantomData<*const FileInner<F>>,
}

type Slot<F> = AtomicPtr<FileInner<F>>;

#[cfg(feature = "leak-check")]
pub(crate) static ARRAYS_LIVE: std::sync::atomic::AtomicIsize =
    std::sync::atomic::AtomicIsize::new(0);

impl<F> FdArray<F> {
    fn layout(max_fds: usize) -> Option<(Layout, usize)> {
        let (layout, offset) = Layout::new::<Self>()
            .extend(Layout::array::<Slot<F>>(max_fds).ok()?)
            .ok()?;
        Some((layout.pad_to_align(), offset))
    }

    /// Allocates an array of `max_fds` empty slots. `ENOMEM` if the allocator refuses.
    pub(crate) fn alloc(max_fds: usize) -> Result<NonNull<Self>, Errno> {
        let (layout, offset) = Self::layout(max_fds).ok_or(Errno::ENOMEM)?;
        // SAFETY: the layout is non-zero-sized (it has the header). Zeroed memory is a valid
        // array of null `AtomicPtr`s outside loom (loom's atomics are written below instead).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let Some(base) = NonNull::new(raw) else {
            return Err(Errno::ENOMEM);
        };
        let header = base.as_ptr() as *mut Self;
        // SAFETY: `raw` is a fresh allocation of `layout`, which holds the header at offset 0
        // and `max_fds` slots at `offset`; each is initialised before any read.
        unsafe {
            header.write(FdArray {
                max_fds,
                _marker: PhantomData,
            });
            #[cfg(loom)]
            {
                let slots = raw.add(offset) as *mut Slot<F>;
                for i in 0..max_fds {
                    slots.add(i).write(AtomicPtr::new(ptr::null_mut()));
                }
            }
            #[cfg(not(loom))]
            let _ = offset;
        }
        #[cfg(feature = "leak-check")]
        // ORDERING: Relaxed; a leak counter, read by tests after the threads are joined and
        // the grace periods drained, which order it.
        ARRAYS_LIVE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: `header` is non-null (derived from `base`).
        Ok(unsafe { NonNull::new_unchecked(header) })
    }

    /// Frees an array. The files its slots point to are not touched: their references belong
    /// to whichever array is current.
    ///
    /// # Safety
    ///
    /// `this` came from [`FdArray::alloc`], is freed once, and no reader can reach it any more.
    pub(crate) unsafe fn free(this: *mut Self) {
        // SAFETY: per the contract the header is initialised.
        let max_fds = unsafe { (*this).max_fds };
        let (layout, offset) = Self::layout(max_fds).expect("layout was valid at alloc");
        // SAFETY: the slots were initialised in `alloc`; dropping them (a no-op outside loom)
        // and then deallocating with the same layout is sound.
        unsafe {
            let slots = (this as *mut u8).add(offset) as *mut Slot<F>;
            for i in 0..max_fds {
                ptr::drop_in_place(slots.add(i));
            }
            std::alloc::dealloc(this as *mut u8, layout);
        }
        #[cfg(feature = "leak-check")]
        // ORDERING: Relaxed; the leak counter of `alloc`.
        ARRAYS_LIVE.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// `fdt->max_fds`, read through a raw pointer.
    ///
    /// # Safety
    ///
    /// `this` points to a live array.
    #[inline(always)]
    unsafe fn max_fds_raw(this: *const Self) -> usize {
        // SAFETY: per the contract.
        unsafe { (*this).max_fds }
    }
}

/// A borrowed array, kept as a raw pointer so the slot accesses derive from the pointer to the
/// whole allocation (a `&FdArray` would cover only the header, and stepping past it is not
/// allowed under Stacked Borrows).
pub(crate) struct ArrayRef<'a, F> {
    ptr: NonNull<FdArray<F>>,
    _lt: PhantomData<&'a FdArray<F>>,
}

impl<F> Clone for ArrayRef<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for ArrayRef<'_, F> {}

impl<'a, F> ArrayRef<'a, F> {
    /// # Safety
    ///
    /// `ptr` points to an array from [`FdArray::alloc`] that stays allocated for `'a`.
    #[inline(always)]
    pub(crate) unsafe fn new(ptr: *const FdArray<F>) -> Self {
        crate::reclaim::assert_live(ptr);
        ArrayRef {
            // SAFETY: arrays are never null (the caller passes one from `alloc`).
            ptr: unsafe { NonNull::new_unchecked(ptr as *mut FdArray<F>) },
            _lt: PhantomData,
        }
    }

    /// The array's address.
    #[inline(always)]
    pub(crate) fn as_ptr(self) -> *mut FdArray<F> {
        self.ptr.as_ptr()
    }

    /// `fdt->max_fds`.
    #[inline(always)]
    pub(crate) fn max_fds(self) -> usize {
        // SAFETY: live for `'a` by construction.
        unsafe { FdArray::max_fds_raw(self.ptr.as_ptr()) }
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
        // The offset of the slots is the header size rounded up to the slot alignment; both
        // are pointer-sized here, so it is simply the header size.
        const {
            assert!(
                std::mem::size_of::<FdArray<()>>().is_multiple_of(std::mem::align_of::<Slot<()>>())
            )
        };
        let base = self.ptr.as_ptr() as *const u8;
        // SAFETY: the caller bounds `fd`; the slots were initialised in `alloc`, and `base`
        // carries the provenance of the whole allocation.
        unsafe { &*(base.add(std::mem::size_of::<FdArray<F>>()) as *const Slot<F>).add(fd) }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::Ordering;

    #[test]
    fn alloc_free() {
        let a = FdArray::<u8>::alloc(128).unwrap();
        // SAFETY: freshly allocated, freed below.
        let r = unsafe { ArrayRef::new(a.as_ptr()) };
        assert_eq!(r.max_fds(), 128);
        // ORDERING: Relaxed; single-threaded test.
        assert!(r.slot(127).unwrap().load(Ordering::Relaxed).is_null());
        assert!(r.slot(128).is_none());
        // SAFETY: allocated above, never shared.
        unsafe { FdArray::free(a.as_ptr()) };
    }

    #[test]
    fn absurd_size_is_enomem() {
        assert_eq!(
            FdArray::<u8>::alloc(usize::MAX / 4).err(),
            Some(Errno::ENOMEM)
        );
    }
}

//! [`Fd`]: the result of a light lookup, the kernel's `struct fd`.

use crate::file_ref::{FileInner, FileRef};
use crate::rcu::HandleReader;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ops::Deref;
use core::ptr::NonNull;

/// A file looked up by [`Files::fdget`](crate::Files::fdget): either *borrowed* from an
/// unshared table (no reference taken) or *owned* (a reference taken, `FDPUT_FPUT`, put when
/// this is dropped — `fdput`).
///
/// The lifetime ties it to the `&Files` it came from, so it cannot outlive the call and the
/// handle cannot close the fd or share the table while it lives.
pub struct Fd<'a, F: ?Sized> {
    ptr: NonNull<FileInner<F>>,
    /// For an owned `Fd`, the handle's RCU state its put uses; `None` for a borrow.
    reader: Option<&'a HandleReader>,
    _borrow: PhantomData<&'a FileInner<F>>,
}

impl<'a, F: ?Sized> Fd<'a, F> {
    /// # Safety
    ///
    /// The file must stay installed (so alive) for `'a`.
    #[inline(always)]
    pub(crate) unsafe fn borrowed(ptr: NonNull<FileInner<F>>) -> Self {
        Fd {
            ptr,
            reader: None,
            _borrow: PhantomData,
        }
    }

    /// # Safety
    ///
    /// `ptr` carries one counted reference, which the result takes over; `reader` is the RCU
    /// state of the handle it was looked up through.
    #[inline(always)]
    pub(crate) unsafe fn owned(ptr: NonNull<FileInner<F>>, reader: &'a HandleReader) -> Self {
        Fd {
            ptr,
            reader: Some(reader),
            _borrow: PhantomData,
        }
    }

    /// Whether dropping this puts a reference (`FDPUT_FPUT`): false for a light borrow.
    #[inline]
    pub fn needs_put(&self) -> bool {
        self.reader.is_some()
    }

    /// A counted reference to the file, to keep it past this lookup (`get_file`).
    pub fn to_file_ref(&self) -> FileRef<F> {
        // SAFETY: the file is alive for as long as `self`; `get` takes a new reference.
        unsafe { FileRef::from_inner(self.ptr.as_ref().get()) }
    }

    /// `file_count`.
    pub fn file_count(&self) -> usize {
        // SAFETY: alive for as long as `self`.
        unsafe { self.ptr.as_ref() }.count()
    }

    /// The file's address, the identity the C ABI hands out.
    pub fn as_ptr(&self) -> *const F {
        // SAFETY: alive for as long as `self`; `&raw const` creates no reference, so the
        // result keeps the provenance of the whole allocation (the C ABI steps back to the
        // header from it).
        unsafe { FileInner::value_ptr(self.ptr.as_ptr()) }
    }

    /// Splits into the raw parts the C ABI carries (`struct fdt_fd`): the file pointer and
    /// whether a reference must be put.
    pub fn into_raw(self) -> (*const F, bool) {
        let this = ManuallyDrop::new(self);
        (this.as_ptr(), this.reader.is_some())
    }
}

impl<F: ?Sized> Deref for Fd<'_, F> {
    type Target = F;
    #[inline(always)]
    fn deref(&self) -> &F {
        // SAFETY: borrowed: kept alive by the slot for `'a`; owned: by our reference.
        unsafe { self.ptr.as_ref() }.value()
    }
}

impl<F: ?Sized> Drop for Fd<'_, F> {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(reader) = self.reader {
            // SAFETY: an owned `Fd` carries one reference, dropped here (`fdput`).
            unsafe { FileInner::put_ref_on(self.ptr, reader) };
        }
    }
}

impl<F: ?Sized + core::fmt::Debug> core::fmt::Debug for Fd<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Fd")
            .field("owned", &self.reader.is_some())
            .field("file", &&**self)
            .finish()
    }
}

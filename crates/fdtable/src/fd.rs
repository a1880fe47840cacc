//! [`Fd`]: the result of a light lookup, the kernel's `struct fd`.

use crate::file_ref::{FileInner, FileRef};
use crate::rcu::PutWindow;
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
    /// For an owned `Fd`, where its put opens its window; `None` for a borrow.
    put: Option<PutWindow>,
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
            put: None,
            _borrow: PhantomData,
        }
    }

    /// # Safety
    ///
    /// `ptr` carries one counted reference, which the result takes over; `put` is where its
    /// put opens its window (a record of the handle it was looked up through, which outlives
    /// `'a`, or the general path).
    #[inline(always)]
    pub(crate) unsafe fn owned(ptr: NonNull<FileInner<F>>, put: PutWindow) -> Self {
        Fd {
            ptr,
            put: Some(put),
            _borrow: PhantomData,
        }
    }

    /// Whether dropping this puts a reference (`FDPUT_FPUT`): false for a light borrow.
    #[inline]
    pub fn needs_put(&self) -> bool {
        self.put.is_some()
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
        (this.as_ptr(), this.put.is_some())
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
        if let Some(w) = self.put {
            // SAFETY: an owned `Fd` carries one reference, dropped here (`fdput`).
            unsafe { FileInner::put_ref_in(self.ptr, w) };
        }
    }
}

impl<F: ?Sized + core::fmt::Debug> core::fmt::Debug for Fd<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Fd")
            .field("owned", &self.put.is_some())
            .field("file", &&**self)
            .finish()
    }
}

/// A file lent by [`Files::fdget_rcu`](crate::Files::fdget_rcu) without a reference count.
///
/// On an unshared table it is a light borrow, as [`Fd`]. On a shared table it holds an RCU
/// read-side section open instead of a reference: no locked instruction to take it, none to
/// drop it. While it lives the file cannot be released (a release waits for such sections to
/// end), and memory retired meanwhile is not freed — so do not block while holding it:
/// [`RcuFd::upgrade`] to a counted reference first (one locked instruction). (Where no
/// section can be had — a thread without an RCU record — it holds a counted reference.)
pub struct RcuFd<'a, F: ?Sized> {
    ptr: NonNull<FileInner<F>>,
    mode: ModeWord,
    _borrow: PhantomData<&'a FileInner<F>>,
}

/// What an [`RcuFd`] holds: a light borrow (unshared table), an RCU section held open (on
/// this thread: `RcuFd` is not `Send`), or a counted reference.
enum Mode {
    Light,
    Section(crate::rcu::BorrowToken),
    Counted,
}

/// [`Mode`] in one word, so that an `RcuFd` is two and travels in registers: 0 is a light
/// borrow, 1 a counted reference, anything else the record of the section (aligned, so
/// never 0 or 1). Only with the built-in RCU, whose section token is a record; an embedder's
/// token may be any value, and is kept as [`Mode`] itself.
#[cfg(all(feature = "std", not(loom)))]
#[derive(Clone, Copy)]
struct ModeWord(usize);

#[cfg(all(feature = "std", not(loom)))]
impl ModeWord {
    const LIGHT: usize = 0;
    const COUNTED: usize = 1;

    #[inline(always)]
    fn new(m: Mode) -> Self {
        ModeWord(match m {
            Mode::Light => Self::LIGHT,
            Mode::Counted => Self::COUNTED,
            Mode::Section(t) => {
                let r = t.into_raw();
                // SAFETY: a record's address (aligned, never 0 or 1). Said here, where the
                // mode is made, so that the tests of it in `is_section` and in the drop fold
                // away where the compiler sees both.
                unsafe { core::hint::assert_unchecked(r > Self::COUNTED) };
                r
            }
        })
    }

    #[inline(always)]
    fn get(self) -> Mode {
        match self.0 {
            Self::LIGHT => Mode::Light,
            Self::COUNTED => Mode::Counted,
            // SAFETY: any other value was made by `new` from a section's token.
            r => Mode::Section(unsafe { crate::rcu::BorrowToken::from_raw(r) }),
        }
    }

    #[inline(always)]
    fn is_section(self) -> bool {
        self.0 > Self::COUNTED
    }
}

#[cfg(not(all(feature = "std", not(loom))))]
struct ModeWord(Mode);

#[cfg(not(all(feature = "std", not(loom))))]
impl ModeWord {
    #[inline(always)]
    fn new(m: Mode) -> Self {
        ModeWord(m)
    }

    #[inline(always)]
    fn get(&self) -> Mode {
        match &self.0 {
            Mode::Light => Mode::Light,
            Mode::Counted => Mode::Counted,
            Mode::Section(t) => Mode::Section(t.copy()),
        }
    }

    #[inline(always)]
    fn is_section(&self) -> bool {
        matches!(self.0, Mode::Section(..))
    }
}

impl<'a, F: ?Sized> RcuFd<'a, F> {
    /// # Safety
    ///
    /// The file stays installed for `'a` (light borrow).
    #[inline(always)]
    pub(crate) unsafe fn light(ptr: NonNull<FileInner<F>>) -> Self {
        RcuFd {
            ptr,
            mode: ModeWord::new(Mode::Light),
            _borrow: PhantomData,
        }
    }

    /// # Safety
    ///
    /// `ptr` was read from a slot inside the borrow section `token`, which the result ends;
    /// the file's release waits for that section.
    #[inline(always)]
    pub(crate) unsafe fn in_section(
        ptr: NonNull<FileInner<F>>,
        token: crate::rcu::BorrowToken,
    ) -> Self {
        RcuFd {
            ptr,
            mode: ModeWord::new(Mode::Section(token)),
            _borrow: PhantomData,
        }
    }

    /// A counted reference, lent as an `RcuFd`.
    pub(crate) fn counted(file: FileRef<F>) -> Self {
        RcuFd {
            ptr: FileRef::into_inner(file),
            mode: ModeWord::new(Mode::Counted),
            _borrow: PhantomData,
        }
    }

    /// A counted reference to the file (`get_file`), to keep it across something that may
    /// block, or past the borrow. `None` if the file was closed and its last reference dropped
    /// since it was lent (its release is waiting for this borrow to end).
    pub fn upgrade(&self) -> Option<FileRef<F>> {
        match self.mode.get() {
            Mode::Light | Mode::Counted => {
                // SAFETY: held by its slot for `'a`, or by our reference.
                Some(unsafe { FileRef::from_inner(self.ptr.as_ref().get()) })
            }
            Mode::Section(..) => {
                // SAFETY: inside the borrow section, which keeps the memory (and the value)
                // alive.
                if unsafe { FileInner::try_get_rcu(self.ptr.as_ptr()) } {
                    // SAFETY: `try_get_rcu` took a reference for the result.
                    Some(unsafe { FileRef::from_inner(self.ptr) })
                } else {
                    None
                }
            }
        }
    }

    /// `file_count`: the references on the file now (a lent file's are its holders', none
    /// of them this borrow's).
    pub fn file_count(&self) -> usize {
        // SAFETY: alive for as long as `self`.
        unsafe { self.ptr.as_ref() }.count()
    }

    /// Whether someone else may be using the file at the same time: `file_count(file) > 1`,
    /// what `fdget_pos` asks before it locks the position. Always for a file lent in a
    /// section, whose holders are not counted.
    #[inline(always)]
    pub fn shared_file(&self) -> bool {
        // SAFETY: alive for as long as `self`.
        self.mode.is_section() || !unsafe { self.ptr.as_ref() }.has_one_ref()
    }

    /// Whether this holds an RCU section (the table is shared) rather than a light borrow or
    /// a reference.
    pub fn is_rcu(&self) -> bool {
        self.mode.is_section()
    }
}

/// How to end an [`RcuFd`] split into raw parts by [`RcuFd::into_raw`].
#[cfg(all(feature = "std", not(loom)))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcuFdEnd {
    /// A light borrow: nothing to end (valid while the slot holds the file, as [`Fd`]'s).
    Light,
    /// A counted reference, given up as [`FileRef::into_raw`] gives one up (take it back with
    /// [`FileRef::from_raw`]).
    Counted,
    /// A borrow section of the calling thread: end it with [`RcuFd::end_raw_section`] on
    /// that thread.
    Section,
}

#[cfg(all(feature = "std", not(loom)))]
impl<F: ?Sized> RcuFd<'_, F> {
    /// Splits into the raw parts a caller that cannot hold an `RcuFd` carries (the C ABI's
    /// `struct fdt_fd`): the file's address (as [`Fd::as_ptr`]) and what ends the borrow.
    /// With the built-in RCU only, whose sections a thread can end without their token.
    #[must_use = "the borrow ends only through the parts: a dropped section stays open"]
    pub fn into_raw(self) -> (*const F, RcuFdEnd) {
        let this = ManuallyDrop::new(self);
        let end = if let Mode::Section(t) = this.mode.get() {
            crate::rcu::split_borrow(&t);
            RcuFdEnd::Section
        } else if let Mode::Counted = this.mode.get() {
            RcuFdEnd::Counted
        } else {
            RcuFdEnd::Light
        };
        // SAFETY: alive for as long as the borrow; `&raw const` keeps the allocation's
        // provenance (as in `Fd::as_ptr`).
        (unsafe { FileInner::value_ptr(this.ptr.as_ptr()) }, end)
    }

    /// A counted reference to the file of an `RcuFd` split by [`into_raw`](RcuFd::into_raw),
    /// as [`upgrade`](RcuFd::upgrade) gives one: `None` if the file was lent in a section
    /// and its last reference has gone since (its release is waiting for the section).
    ///
    /// # Safety
    ///
    /// `file` and `end` came from one `into_raw` whose borrow has not ended (for
    /// [`RcuFdEnd::Section`]: called on the thread that made it, inside that section).
    pub unsafe fn upgrade_raw(file: *const F, end: RcuFdEnd) -> Option<FileRef<F>> {
        match end {
            RcuFdEnd::Light | RcuFdEnd::Counted => {
                // SAFETY: kept alive by its slot (light) or by the borrow's reference; the
                // increment is the reference the result takes over.
                unsafe {
                    FileRef::increment_raw(file);
                    Some(FileRef::from_raw(file))
                }
            }
            RcuFdEnd::Section => {
                // SAFETY: the value pointer of a live file header (the section keeps its
                // memory); `try_get_rcu` runs inside that section, as it requires.
                let got = unsafe { FileInner::try_get_rcu(FileInner::from_value_ptr(file)) };
                // SAFETY: `try_get_rcu` took the reference the result takes over.
                got.then(|| unsafe { FileRef::from_raw(file) })
            }
        }
    }

    /// Ends one borrow section of the calling thread split by [`into_raw`](RcuFd::into_raw)
    /// (with [`RcuFdEnd::Section`]). False, ending nothing, if the thread holds no such
    /// section: called on another thread than the one that split it, or once too often. (Such
    /// a section stays open, and releases of lent files wait for it.)
    ///
    /// # Safety
    ///
    /// Called on the thread that made that `RcuFd`, once for it; its file pointer is not used
    /// after (the file's release may run here, or in another thread once this returns). The
    /// sections of a thread nest and are counted, so split sections may end in any order.
    #[inline]
    pub unsafe fn end_raw_section() -> bool {
        crate::rcu::end_split_borrow()
    }
}

impl<F: ?Sized> Deref for RcuFd<'_, F> {
    type Target = F;
    #[inline(always)]
    fn deref(&self) -> &F {
        // SAFETY: a light borrow: kept alive by the slot for `'a`; a section: the release waits
        // for it; counted: our reference.
        unsafe { self.ptr.as_ref() }.value()
    }
}

impl<F: ?Sized> Drop for RcuFd<'_, F> {
    #[inline(always)]
    fn drop(&mut self) {
        // A section first, tested alone (one comparison on the path that matters most).
        if self.mode.is_section() {
            if let Mode::Section(token) = self.mode.get() {
                crate::rcu::borrow_end(token);
            }
        } else if let Mode::Counted = self.mode.get() {
            // SAFETY: the reference `counted` took over.
            drop(unsafe { FileRef::from_inner(self.ptr) });
        }
    }
}

impl<F: ?Sized + core::fmt::Debug> core::fmt::Debug for RcuFd<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RcuFd")
            .field("rcu", &self.is_rcu())
            .field("file", &&**self)
            .finish()
    }
}

/// A file lent by [`Files::fdget_qsbr`](crate::Files::fdget_qsbr) to a thread online as a
/// [`QsbrThread`](crate::rcu::QsbrThread).
///
/// On a shared table it holds nothing at all — no reference, no read-side section: the
/// thread's being online keeps the file from being released until its next quiescent state,
/// which this borrow of the `QsbrThread` keeps away. On an unshared table it is a light
/// borrow, as [`Fd`]; a file not lendable yet comes with a counted reference. Before anything
/// that may block, [`QsbrFd::upgrade`] to a counted reference (then drop this and go
/// offline).
#[cfg(any(feature = "std", loom))]
pub struct QsbrFd<'a, F: ?Sized> {
    ptr: NonNull<FileInner<F>>,
    kind: QsbrKind,
    _borrow: PhantomData<&'a FileInner<F>>,
    /// Not `Send`: the protection is this thread's.
    _thread: PhantomData<*const ()>,
}

/// What a [`QsbrFd`] holds.
#[cfg(any(feature = "std", loom))]
#[derive(Clone, Copy, PartialEq, Eq)]
enum QsbrKind {
    /// Lent to the online thread (shared table).
    Lent,
    /// A light borrow (unshared table).
    Light,
    /// A counted reference.
    Counted,
}

#[cfg(any(feature = "std", loom))]
impl<'a, F: ?Sized> QsbrFd<'a, F> {
    /// # Safety
    ///
    /// `ptr` was read from a slot while this thread was online as a QSBR reader, which it
    /// stays for `'a`; the file is lendable (its release waits for the reader's next
    /// quiescent state).
    #[inline(always)]
    pub(crate) unsafe fn lent(ptr: NonNull<FileInner<F>>) -> Self {
        Self::new(ptr, QsbrKind::Lent)
    }

    /// # Safety
    ///
    /// The file stays installed for `'a` (light borrow).
    #[inline(always)]
    pub(crate) unsafe fn light(ptr: NonNull<FileInner<F>>) -> Self {
        Self::new(ptr, QsbrKind::Light)
    }

    /// A counted reference, lent as a `QsbrFd`.
    pub(crate) fn counted(file: FileRef<F>) -> Self {
        Self::new(FileRef::into_inner(file), QsbrKind::Counted)
    }

    #[inline(always)]
    fn new(ptr: NonNull<FileInner<F>>, kind: QsbrKind) -> Self {
        QsbrFd {
            ptr,
            kind,
            _borrow: PhantomData,
            _thread: PhantomData,
        }
    }

    /// A counted reference to the file (`get_file`), to keep it across something that may
    /// block, or past the thread's next quiescent state. `None` if the file was closed and
    /// its last reference dropped since it was lent (its release is waiting for this thread).
    pub fn upgrade(&self) -> Option<FileRef<F>> {
        if self.kind == QsbrKind::Lent {
            // SAFETY: the thread is online, which keeps the memory (and the value) alive.
            return if unsafe { FileInner::try_get_rcu(self.ptr.as_ptr()) } {
                // SAFETY: `try_get_rcu` took a reference for the result.
                Some(unsafe { FileRef::from_inner(self.ptr) })
            } else {
                None
            };
        }
        // SAFETY: held by its slot for `'a`, or by our reference.
        Some(unsafe { FileRef::from_inner(self.ptr.as_ref().get()) })
    }

    /// `file_count`: the references on the file now (a lent file's are its holders', none
    /// of them this borrow's).
    pub fn file_count(&self) -> usize {
        // SAFETY: alive for as long as `self`.
        unsafe { self.ptr.as_ref() }.count()
    }

    /// Whether someone else may be using the file at the same time (`file_count > 1`, what
    /// `fdget_pos` asks). Always for a lent file, whose holders are not counted.
    #[inline(always)]
    pub fn shared_file(&self) -> bool {
        // SAFETY: alive for as long as `self`.
        self.kind == QsbrKind::Lent || !unsafe { self.ptr.as_ref() }.has_one_ref()
    }

    /// Whether the file is lent without a reference (the table is shared), rather than a
    /// light borrow or a counted reference.
    #[inline(always)]
    pub fn is_rcu(&self) -> bool {
        self.kind == QsbrKind::Lent
    }
}

#[cfg(any(feature = "std", loom))]
impl<F: ?Sized> Deref for QsbrFd<'_, F> {
    type Target = F;
    #[inline(always)]
    fn deref(&self) -> &F {
        // SAFETY: lent: the release waits for the thread's next quiescent state, which the
        // borrow of its `QsbrThread` for `'a` keeps away; a light borrow: kept alive by the
        // slot for `'a`; counted: our reference.
        unsafe { self.ptr.as_ref() }.value()
    }
}

#[cfg(any(feature = "std", loom))]
impl<F: ?Sized> Drop for QsbrFd<'_, F> {
    #[inline(always)]
    fn drop(&mut self) {
        if self.kind == QsbrKind::Counted {
            // SAFETY: the reference `counted` took over.
            drop(unsafe { FileRef::from_inner(self.ptr) });
        }
    }
}

#[cfg(any(feature = "std", loom))]
impl<F: ?Sized + core::fmt::Debug> core::fmt::Debug for QsbrFd<'_, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("QsbrFd")
            .field("rcu", &self.is_rcu())
            .field("file", &&**self)
            .finish()
    }
}

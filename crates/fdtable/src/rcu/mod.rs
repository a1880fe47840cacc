//! Read-copy-update: how lock-free readers and the memory they read are kept apart.
//!
//! A lookup on a shared table reads the published fd array and a file's reference count
//! without any lock. Memory such a reader may be touching — an array replaced by growth, a
//! released file that was visible in a shared table — is not freed at once but handed to
//! `call_rcu`, which frees it after a *grace period*: once every read-side section that was
//! running when it was called has ended. This is the kernel's RCU; the table needs three
//! things from it, as the kernel's fd layer does:
//!
//! - a read-side section around each lock-free lookup (`rcu_read_lock` in `__fget_files`);
//! - a read-side section around the window of a file's last put, between the decrement that
//!   takes the count to zero and the compare-and-swap that marks it dead (`file_ref_put` runs
//!   with preemption disabled, which is an RCU read-side section);
//! - `call_rcu` for the memory (the kernel's `free_fdtable_rcu`; its files are
//!   `SLAB_TYPESAFE_BY_RCU`).
//!
//! # Who supplies it
//!
//! - **With `std` (default)**: an epoch scheme whose read side costs no atomic
//!   read-modify-write and no fence — two ordinary stores to a per-thread record — because the
//!   reclaimer pays for both sides with `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` on
//!   Linux (liburcu's urcu-memb); elsewhere both sides use a full fence. As liburcu does, the
//!   library registers for `membarrier` when it is loaded, while the process normally has
//!   one thread: registering a process that already runs several threads costs an RCU grace
//!   period in the kernel (milliseconds), which the first release would otherwise pay.
//!   A thread with a natural quiescent state (a dispatch loop between requests) can go
//!   further and become a `QsbrThread`: its lookups (`Files::fdget_qsbr`)
//!   need no section at all, as the kernel's need none without preemption, and it reports
//!   its quiescent states itself (liburcu's QSBR flavour).
//! - **Without `std`**: the embedder's own RCU, through the [`Rcu`] trait and the
//!   [`set_rcu!`](crate::set_rcu) macro — a kernel maps it to its `rcu_read_lock`,
//!   `rcu_read_unlock` and `call_rcu`. [`PortableRcu`] is a ready-made one that needs nothing
//!   but atomics (reader counts in two phases, as SRCU), for bring-up or tests.
//! - **Under `--cfg loom`**: a model that reclaims at the earliest moment RCU allows and checks
//!   every access to memory that can be reclaimed.
//!
//! Where the table calls `read_lock`, `call_rcu` and `synchronize_rcu` (never with the table
//! lock held), and who runs the callbacks, is part of the [`Rcu`] trait's contract: see there.

use core::ptr::NonNull;

#[cfg(all(feature = "std", not(loom)))]
mod epoch;
#[cfg(loom)]
mod loom_model;
mod portable;
#[cfg(any(feature = "std", loom))]
mod qsbr;

pub use portable::PortableRcu;
#[cfg(any(feature = "std", loom))]
pub use qsbr::QsbrThread;

/// The link a deferred free is queued by, embedded in every object the table retires (the
/// kernel's `struct rcu_head`). Between [`Rcu::call_rcu`] and the callback, its fields belong
/// to the RCU implementation.
#[repr(C)]
#[derive(Debug)]
pub struct RcuHead {
    /// Queue link.
    pub next: *mut RcuHead,
    /// The callback to run after the grace period.
    pub func: Option<unsafe fn(NonNull<RcuHead>)>,
    /// One word for the implementation (the built-in one stores the retirement epoch).
    pub data: usize,
}

impl RcuHead {
    /// An unlinked head.
    pub const fn new() -> Self {
        RcuHead {
            next: core::ptr::null_mut(),
            func: None,
            data: 0,
        }
    }
}

impl Default for RcuHead {
    fn default() -> Self {
        Self::new()
    }
}

/// An RCU implementation, for embedders without `std` (a kernel supplies its own).
///
/// # Where the table calls it
///
/// - [`read_lock`](Rcu::read_lock) / [`read_unlock`](Rcu::read_unlock): around each lock-free
///   lookup on a shared table ([`Files::fget`](crate::Files::fget), and
///   [`Files::fdget`](crate::Files::fdget) when the table is shared); for the life of an
///   [`RcuFd`](crate::RcuFd) from [`Files::fdget_rcu`](crate::Files::fdget_rcu), so a section
///   then spans your use of the file; and around the few instructions of a put that may be the
///   last (dropping a [`FileRef`](crate::FileRef) or a counted [`Fd`](crate::Fd)), on the
///   thread that drops it. Never with the table lock held. Sections nest: a put made while an
///   `RcuFd` is alive opens one inside the borrow's.
/// - [`call_rcu`](Rcu::call_rcu): (1) at the end of a table operation that replaced the fd
///   array of a shared table (it grew), after the table lock was released; (2) at the last put
///   of a file that was installed in a table while it was shared, on the thread that dropped
///   the last reference, after the file's `Drop` ran and after the put's own section ended.
///   So never with the table lock held and never from one of its own callbacks, but possibly
///   inside one of *your* read-side sections: a thread that holds an `RcuFd` and meanwhile
///   drops a reference, or calls a table operation through another handle. Linux's `call_rcu`
///   may be called there too; it must not block or wait for a grace period.
/// - [`synchronize_rcu`](Rcu::synchronize_rcu): only at the last put of a file that
///   `fdget_rcu` lent without a reference (its release first waits for borrowers; see
///   [`LEND_AFTER`](crate::LEND_AFTER)) and in [`FileRef::try_unwrap`](crate::FileRef::try_unwrap)
///   of such a file, on the thread dropping it, without the table lock. It may not run inside
///   a section, so without `std` do not drop what may be the last reference to a lent file
///   while an `RcuFd` is alive on the same thread (the built-in RCU defers such a release to
///   the end of the borrow instead).
///
/// # Who runs the callbacks
///
/// Your implementation, in whatever context it runs deferred work (a kernel's softirq or its
/// RCU callback threads), on any CPU, in any order. The table's callbacks only return memory
/// to the global allocator (an fd array replaced by growth; the header and storage of a file
/// whose value was already dropped): they take no lock of the table, run none of your code (a
/// file's `Drop` runs synchronously at its last put, never from a callback), and call nothing
/// of the RCU. They may therefore run anywhere the global allocator may be called, including
/// from inside `call_rcu` or `read_unlock` themselves, as [`PortableRcu`] runs them (in the
/// `call_rcu` or `synchronize_rcu` that finds the grace period over, or in the `read_unlock`
/// of the last reader of the old phase).
///
/// With `std`, the built-in RCU runs them on the thread that retired the memory: each thread
/// queues its retirements, and every 256th one tries to advance the epoch and frees what is
/// two epochs old, its own and what exited threads left; a thread's exit hands its queue over,
/// and [`reclaim_drain`](crate::reclaim_drain) frees what can be freed now. There is no
/// background thread.
///
/// # Safety
///
/// Implementations must provide RCU's guarantee: a callback passed to
/// [`call_rcu`](Rcu::call_rcu) runs only after every read-side section that had begun when
/// `call_rcu` was called has ended (a section begins with [`read_lock`](Rcu::read_lock) and
/// ends with the [`read_unlock`](Rcu::read_unlock) given its token), and it runs exactly once.
/// Sections nest. Memory effects made before `call_rcu` must be visible to the callback, and a
/// section's loads must happen-before the callback (the ordering the kernel's RCU gives).
/// `read_lock` and `read_unlock` must not block, must not allocate, and may be called from
/// any thread, inside a table operation or a file's release.
pub unsafe trait Rcu {
    /// Begins a read-side section (`rcu_read_lock`); the token goes to the matching
    /// [`read_unlock`](Rcu::read_unlock) (a kernel's RCU can ignore it; SRCU needs it).
    fn read_lock() -> usize;
    /// Ends the section begun by the `read_lock` that returned `token`.
    fn read_unlock(token: usize);
    /// Runs `func(head)` once, after a grace period (`call_rcu`). Must not allocate: the head
    /// is embedded in the object.
    ///
    /// # Safety
    ///
    /// `head` stays valid and untouched by the caller until `func` runs.
    unsafe fn call_rcu(head: NonNull<RcuHead>, func: unsafe fn(NonNull<RcuHead>));
    /// Waits until every read-side section begun before the call has ended
    /// (`synchronize_rcu`). Must not be called inside a section.
    fn synchronize_rcu();
}

/// Installs `$t` ([`Rcu`]) as the RCU of every table in the program, for builds without the
/// `std` feature (with `std` the built-in one is used and this macro is not needed). Call it
/// once, in the crate that builds the final binary or kernel image:
///
/// ```ignore
/// struct KernelRcu;
/// unsafe impl fdtable::rcu::Rcu for KernelRcu { /* rcu_read_lock, call_rcu, ... */ }
/// fdtable::set_rcu!(KernelRcu);
/// // or, with no RCU of your own: fdtable::set_rcu!(fdtable::rcu::PortableRcu);
/// ```
///
/// # Link errors
///
/// The macro defines four unmangled functions, `__fdtable_set_rcu_read_lock`,
/// `__fdtable_set_rcu_read_unlock`, `__fdtable_set_rcu_call_rcu` and
/// `__fdtable_set_rcu_synchronize_rcu`, which a `no_std` build of the table calls. Hence:
///
/// - **Not called** anywhere in the image: the final link fails with
///   `undefined symbol: __fdtable_set_rcu_read_lock` (and its three siblings), referenced
///   from `fdtable::rcu`. Add `fdtable::set_rcu!(YourRcu);` (or
///   `fdtable::set_rcu!(fdtable::rcu::PortableRcu);`) to the crate that builds the image.
/// - **Called twice** (by your kernel and by a library crate of yours, say): the link fails
///   with `duplicate symbol: __fdtable_set_rcu_read_lock`. Keep the call in one crate, the one
///   that builds the image.
/// - With the `std` feature, which brings its own RCU, the symbols are never referenced:
///   calling the macro there is harmless and useless.
#[doc(alias = "__fdtable_set_rcu_read_lock")]
#[doc(alias = "__fdtable_set_rcu_read_unlock")]
#[doc(alias = "__fdtable_set_rcu_call_rcu")]
#[doc(alias = "__fdtable_set_rcu_synchronize_rcu")]
#[doc(alias = "__fdtable_rcu_read_lock")]
#[doc(alias = "__fdtable_call_rcu")]
#[macro_export]
macro_rules! set_rcu {
    ($t:ty) => {
        const _: () = {
            #[unsafe(no_mangle)]
            fn __fdtable_set_rcu_read_lock() -> usize {
                <$t as $crate::rcu::Rcu>::read_lock()
            }
            #[unsafe(no_mangle)]
            fn __fdtable_set_rcu_read_unlock(token: usize) {
                <$t as $crate::rcu::Rcu>::read_unlock(token)
            }
            #[unsafe(no_mangle)]
            unsafe fn __fdtable_set_rcu_call_rcu(
                head: ::core::ptr::NonNull<$crate::rcu::RcuHead>,
                func: unsafe fn(::core::ptr::NonNull<$crate::rcu::RcuHead>),
            ) {
                // SAFETY: forwarded from the table, which upholds `call_rcu`'s contract.
                unsafe { <$t as $crate::rcu::Rcu>::call_rcu(head, func) }
            }
            #[unsafe(no_mangle)]
            fn __fdtable_set_rcu_synchronize_rcu() {
                <$t as $crate::rcu::Rcu>::synchronize_rcu()
            }
        };
    };
}

/// The embedder's RCU, through the functions [`set_rcu!`](crate::set_rcu) defines.
///
/// A link error that names `__fdtable_set_rcu_read_lock` (or `..._read_unlock`,
/// `..._call_rcu`, `..._synchronize_rcu`) and points at the lines below means the image has no
/// `fdtable::set_rcu!(YourRcu);` (undefined symbol) or has two (duplicate symbol): call the
/// macro exactly once, in the crate that builds the final image (see [`set_rcu!`](crate::set_rcu)).
#[cfg(all(not(feature = "std"), not(loom)))]
mod hooks {
    use super::RcuHead;
    use core::ptr::NonNull;

    // Defined by `fdtable::set_rcu!(YourRcu)`, once per image: "undefined symbol" here means
    // it was not called, "duplicate symbol" that it was called twice.
    unsafe extern "Rust" {
        fn __fdtable_set_rcu_read_lock() -> usize;
        fn __fdtable_set_rcu_read_unlock(token: usize);
        fn __fdtable_set_rcu_call_rcu(head: NonNull<RcuHead>, func: unsafe fn(NonNull<RcuHead>));
        fn __fdtable_set_rcu_synchronize_rcu();
    }

    #[inline(always)]
    pub(crate) fn read_lock() -> usize {
        // SAFETY: defined by `set_rcu!` with a safe body; the declaration matches it.
        unsafe { __fdtable_set_rcu_read_lock() }
    }

    #[inline(always)]
    pub(crate) fn read_unlock(token: usize) {
        // SAFETY: as above.
        unsafe { __fdtable_set_rcu_read_unlock(token) }
    }

    #[inline(always)]
    pub(crate) unsafe fn call_rcu(head: NonNull<RcuHead>, func: unsafe fn(NonNull<RcuHead>)) {
        // SAFETY: as above; the caller upholds `call_rcu`'s contract.
        unsafe { __fdtable_set_rcu_call_rcu(head, func) }
    }

    #[inline(always)]
    pub(crate) fn synchronize_rcu() {
        // SAFETY: as above.
        unsafe { __fdtable_set_rcu_synchronize_rcu() }
    }
}

/// A read-side section in progress; ended by the matching `*_end` (not by drop, so that the
/// hot paths stay free of drop glue).
#[must_use]
pub(crate) struct Section {
    #[cfg_attr(loom, allow(dead_code))]
    token: usize,
}

/// A borrow section in progress (see [`borrow_begin`]).
#[must_use]
#[derive(Debug)]
pub(crate) struct BorrowToken {
    #[cfg(all(feature = "std", not(loom)))]
    rec: NonNull<epoch::Record>,
    #[cfg(not(all(feature = "std", not(loom))))]
    #[cfg_attr(loom, allow(dead_code))]
    token: usize,
}

impl BorrowToken {
    /// The token as one word: the record's address (never 0 or 1: records are aligned).
    #[cfg(all(feature = "std", not(loom)))]
    #[inline(always)]
    pub(crate) fn into_raw(self) -> usize {
        self.rec.as_ptr() as usize
    }

    /// The token [`BorrowToken::into_raw`] made.
    ///
    /// # Safety
    ///
    /// `raw` came from `into_raw`, and the token is used once.
    #[cfg(all(feature = "std", not(loom)))]
    #[inline(always)]
    pub(crate) unsafe fn from_raw(raw: usize) -> Self {
        BorrowToken {
            // SAFETY: a record's address, not null.
            rec: unsafe { NonNull::new_unchecked(raw as *mut epoch::Record) },
        }
    }

    /// A copy of the token, for reading the mode without consuming it (the embedder's tokens
    /// are plain values).
    #[cfg(not(all(feature = "std", not(loom))))]
    pub(crate) fn copy(&self) -> Self {
        BorrowToken { token: self.token }
    }
}

/// Begins a borrow section: a read-side section that may last across a whole operation on a
/// lent file, on this thread (sections nest, and end in any order). `None` if it cannot be
/// begun on the fast path now (the thread is inside another borrow section, or has no RCU
/// record yet): call [`borrow_begin_slow`].
#[inline(always)]
pub(crate) fn borrow_begin() -> Option<BorrowToken> {
    #[cfg(all(feature = "std", not(loom)))]
    {
        epoch::borrow_begin().map(|rec| BorrowToken { rec })
    }
    #[cfg(all(not(feature = "std"), not(loom)))]
    {
        Some(BorrowToken {
            token: hooks::read_lock(),
        })
    }
    #[cfg(loom)]
    {
        loom_model::pin();
        Some(BorrowToken { token: 0 })
    }
}

/// Ends a borrow section (on the thread that began it).
#[inline(always)]
pub(crate) fn borrow_end(t: BorrowToken) {
    #[cfg(all(feature = "std", not(loom)))]
    epoch::borrow_end(t.rec);
    #[cfg(all(not(feature = "std"), not(loom)))]
    hooks::read_unlock(t.token);
    #[cfg(loom)]
    {
        let _ = t;
        loom_model::unpin();
    }
}

/// Counts the borrow section `t` (open on this thread) as split from its `RcuFd`.
#[cfg(all(feature = "std", not(loom)))]
#[inline]
pub(crate) fn split_borrow(t: &BorrowToken) {
    epoch::split_borrow(t.rec);
}

/// Ends one split borrow section of this thread; false if it has none.
#[cfg(all(feature = "std", not(loom)))]
#[inline]
pub(crate) fn end_split_borrow() -> bool {
    epoch::end_split_borrow()
}

/// Begins a borrow section where [`borrow_begin`] could not (the thread is inside another
/// borrow section, or has no RCU record yet: it gets one if it can). `None` if no section can
/// be had (take a reference instead).
#[cold]
pub(crate) fn borrow_begin_slow() -> Option<BorrowToken> {
    #[cfg(all(feature = "std", not(loom)))]
    {
        epoch::borrow_begin_slow().map(|rec| BorrowToken { rec })
    }
    #[cfg(not(all(feature = "std", not(loom))))]
    {
        borrow_begin()
    }
}

/// Waits until every borrow section that had begun when it was called has ended (the
/// embedder's `synchronize_rcu` without `std`). The caller must be outside every section (see
/// [`in_borrow`]).
pub(crate) fn synchronize() {
    #[cfg(all(feature = "std", not(loom)))]
    epoch::synchronize_borrows();
    #[cfg(all(not(feature = "std"), not(loom)))]
    hooks::synchronize_rcu();
    #[cfg(loom)]
    loom_model::synchronize();
}

/// The announcing side of the handshake that makes a file lendable (see
/// `FileInner::make_lendable`): with the built-in RCU a `membarrier` (a full barrier on every
/// CPU running a thread of this process), so that the release side needs none; a full fence
/// elsewhere.
pub(crate) fn lend_barrier() {
    #[cfg(all(feature = "std", not(loom)))]
    epoch::heavy_barrier();
    #[cfg(not(all(feature = "std", not(loom))))]
    crate::sync::fence(crate::sync::Ordering::SeqCst);
}

/// The releasing side of that handshake: a compiler barrier where [`lend_barrier`] is a
/// `membarrier`, a full fence otherwise.
#[inline(always)]
pub(crate) fn release_barrier() {
    #[cfg(all(feature = "std", not(loom)))]
    epoch::light_barrier();
    #[cfg(not(all(feature = "std", not(loom))))]
    crate::sync::fence(crate::sync::Ordering::SeqCst);
}

/// Whether this thread is inside a borrow section or online as a QSBR reader (with the
/// built-in RCU, and a QSBR reader under loom; elsewhere the embedder's rule applies: no
/// `synchronize_rcu` inside a read-side section).
pub(crate) fn in_borrow() -> bool {
    #[cfg(all(feature = "std", not(loom)))]
    {
        epoch::in_borrow()
    }
    #[cfg(loom)]
    {
        loom_model::in_qsbr()
    }
    #[cfg(all(not(feature = "std"), not(loom)))]
    {
        false
    }
}

/// Runs `func(head)` when this thread's outermost borrow section ends (and, on a QSBR
/// reader, at its next quiescent state or when it goes offline).
///
/// # Safety
///
/// As [`call_rcu`], and this thread is inside a borrow section ([`in_borrow`]).
pub(crate) unsafe fn defer_until_borrows_end(
    head: NonNull<RcuHead>,
    func: unsafe fn(NonNull<RcuHead>),
) {
    #[cfg(all(feature = "std", not(loom)))]
    // SAFETY: forwarded contract.
    unsafe {
        epoch::defer_until_borrows_end(head, func)
    }
    #[cfg(loom)]
    // SAFETY: forwarded contract.
    unsafe {
        loom_model::defer_until_quiescent(head, func)
    }
    #[cfg(all(not(feature = "std"), not(loom)))]
    {
        let _ = (head, func);
        unreachable!("in_borrow() is false outside the built-in RCU");
    }
}

/// A section begun on the fast path (see [`HandleReader::lookup_try_begin`]).
#[must_use]
#[derive(Clone, Copy)]
pub(crate) struct FastSection {
    #[cfg(all(feature = "std", not(loom)))]
    inner: epoch::FastSection,
    #[cfg(not(all(feature = "std", not(loom))))]
    token: usize,
}

/// Where the put of a counted `Fd` opens its window: on the record of the handle it was
/// looked up through (known to exist: the lookup's own section was on it), or through the
/// general path ([`put_try_begin`] / [`put_begin`]), marked by an odd address (records are
/// aligned). A non-null pointer, so that `Option<PutWindow>` is one word whose `None` is a
/// light borrow.
#[derive(Clone, Copy)]
pub(crate) struct PutWindow(
    #[cfg_attr(not(all(feature = "std", not(loom))), allow(dead_code))] NonNull<u8>,
);

/// The low bit of a [`PutWindow`] that marks the general path.
const GENERAL_BIT: usize = 1;

impl PutWindow {
    /// A put through the thread's path.
    pub(crate) const GENERAL: PutWindow = PutWindow(NonNull::without_provenance(
        core::num::NonZeroUsize::new(GENERAL_BIT).unwrap(),
    ));

    /// Opens the window: on the record if there is one, else through the general path.
    #[inline(always)]
    pub(crate) fn begin(self) -> Option<FastSection> {
        #[cfg(all(feature = "std", not(loom)))]
        if self.0.addr().get() & GENERAL_BIT == 0 {
            // SAFETY: a value without the bit is only made by `FastSection::put_window` from a
            // record, and records are never freed.
            return Some(FastSection {
                inner: epoch::put_begin_on(self.0.cast()),
            });
        }
        put_try_begin()
    }
}

impl FastSection {
    /// The window a put of a reference taken in this section should use: the same record.
    #[inline(always)]
    pub(crate) fn put_window(self) -> PutWindow {
        #[cfg(all(feature = "std", not(loom)))]
        {
            let r = self.inner.record();
            // SAFETY: records are aligned to more than two bytes. Said here, on the value the
            // window carries, the compiler drops the test of the bit in `begin` when it sees
            // both (the common lookup's put).
            unsafe { core::hint::assert_unchecked(r.addr().get() & GENERAL_BIT == 0) };
            PutWindow(r.cast())
        }
        #[cfg(not(all(feature = "std", not(loom))))]
        {
            PutWindow::GENERAL
        }
    }
}

/// The RCU state a table handle carries: with the built-in RCU, a record of its own, so that
/// lookups and puts made through the handle skip thread-local storage.
pub(crate) struct HandleReader {
    #[cfg(all(feature = "std", not(loom)))]
    inner: epoch::HandleRecord,
}

impl HandleReader {
    pub(crate) const fn new() -> Self {
        HandleReader {
            #[cfg(all(feature = "std", not(loom)))]
            inner: epoch::HandleRecord::new(),
        }
    }

    /// Begins a lookup's section if that is cheap now (with the built-in RCU: the handle
    /// has its record); `None` sends the caller to its slow path, which uses [`lookup_begin`].
    #[inline(always)]
    pub(crate) fn lookup_try_begin(&self) -> Option<FastSection> {
        #[cfg(all(feature = "std", not(loom)))]
        {
            self.inner
                .lookup_try_begin()
                .map(|inner| FastSection { inner })
        }
        #[cfg(not(all(feature = "std", not(loom))))]
        {
            Some(FastSection {
                token: lookup_begin().token,
            })
        }
    }

    /// Gives the handle its record, if it can have one and has none yet.
    #[cold]
    pub(crate) fn register(&self) {
        #[cfg(all(feature = "std", not(loom)))]
        self.inner.register();
    }

    /// The handle is going away (outside every section).
    pub(crate) fn release(&self) {
        #[cfg(all(feature = "std", not(loom)))]
        self.inner.release();
    }
}

/// Ends a section begun by [`HandleReader::lookup_try_begin`].
#[inline(always)]
pub(crate) fn lookup_end_fast(s: FastSection) {
    #[cfg(all(feature = "std", not(loom)))]
    epoch::lookup_end_fast(s.inner);
    #[cfg(not(all(feature = "std", not(loom))))]
    lookup_end(Section { token: s.token });
}

/// Opens a put window if that is cheap now; `None`: use [`put_begin`].
#[inline(always)]
pub(crate) fn put_try_begin() -> Option<FastSection> {
    #[cfg(all(feature = "std", not(loom)))]
    {
        epoch::put_try_begin().map(|inner| FastSection { inner })
    }
    #[cfg(not(all(feature = "std", not(loom))))]
    {
        Some(FastSection {
            token: put_begin().token,
        })
    }
}

/// Closes a window opened by [`put_try_begin`].
#[inline(always)]
pub(crate) fn put_end_fast(s: FastSection) {
    #[cfg(all(feature = "std", not(loom)))]
    epoch::put_end_fast(s.inner);
    #[cfg(not(all(feature = "std", not(loom))))]
    put_end(Section { token: s.token });
}

/// Begins the read-side section of a lock-free lookup.
#[inline(always)]
pub(crate) fn lookup_begin() -> Section {
    #[cfg(all(feature = "std", not(loom)))]
    {
        Section {
            token: epoch::lookup_begin(),
        }
    }
    #[cfg(all(not(feature = "std"), not(loom)))]
    {
        Section {
            token: hooks::read_lock(),
        }
    }
    #[cfg(loom)]
    {
        loom_model::pin();
        Section { token: 0 }
    }
}

/// Ends a lookup's section.
#[inline(always)]
pub(crate) fn lookup_end(s: Section) {
    #[cfg(all(feature = "std", not(loom)))]
    epoch::lookup_end(s.token);
    #[cfg(all(not(feature = "std"), not(loom)))]
    hooks::read_unlock(s.token);
    #[cfg(loom)]
    {
        let _ = s;
        loom_model::unpin();
    }
}

/// Begins the section around a put that may be the last (the kernel's preemption-disabled
/// window in `file_ref_put`).
#[inline(always)]
pub(crate) fn put_begin() -> Section {
    #[cfg(all(feature = "std", not(loom)))]
    {
        Section {
            token: epoch::put_begin(),
        }
    }
    #[cfg(all(not(feature = "std"), not(loom)))]
    {
        Section {
            token: hooks::read_lock(),
        }
    }
    #[cfg(loom)]
    {
        loom_model::pin();
        Section { token: 0 }
    }
}

/// Ends a put's section.
#[inline(always)]
pub(crate) fn put_end(s: Section) {
    #[cfg(all(feature = "std", not(loom)))]
    epoch::put_end(s.token);
    #[cfg(all(not(feature = "std"), not(loom)))]
    hooks::read_unlock(s.token);
    #[cfg(loom)]
    {
        let _ = s;
        loom_model::unpin();
    }
}

/// Schedules `func(head)` after a grace period (`call_rcu`).
///
/// # Safety
///
/// The object holding `head` is unreachable for sections that begin after this call; `head`
/// stays valid until `func` runs; running `func(head)` once, on any thread, is sound.
#[inline]
pub(crate) unsafe fn call_rcu(head: NonNull<RcuHead>, func: unsafe fn(NonNull<RcuHead>)) {
    #[cfg(all(feature = "std", not(loom)))]
    // SAFETY: forwarded contract.
    unsafe {
        epoch::call_rcu(head, func)
    }
    #[cfg(all(not(feature = "std"), not(loom)))]
    // SAFETY: forwarded contract.
    unsafe {
        hooks::call_rcu(head, func)
    }
    #[cfg(loom)]
    // SAFETY: forwarded contract.
    unsafe {
        loom_model::call_rcu(head, func)
    }
}

/// Under loom: panics if `ptr` was reclaimed, i.e. the caller touches memory that RCU already
/// allowed to be freed. A no-op otherwise.
#[inline(always)]
pub(crate) fn assert_live<T: ?Sized>(ptr: *const T) {
    #[cfg(loom)]
    loom_model::assert_live(ptr as *const u8);
    #[cfg(not(loom))]
    let _ = ptr;
}

/// Runs every deferred free that is safe to run now (in a quiescent program: all of them).
/// For leak checks in tests; never needed for correctness.
pub fn drain() {
    #[cfg(all(feature = "std", not(loom)))]
    epoch::drain();
    #[cfg(loom)]
    loom_model::drain();
    #[cfg(all(not(feature = "std"), not(loom)))]
    hooks::synchronize_rcu();
}

//! [`Locked`]: exclusive access to a table's mutable state, and the operations that need it
//! (the kernel's functions called with `file_lock` held).

use super::{FD_ALIGN, FdPayload, FdState, FilesStruct, Inner, NR_OPEN_DEFAULT, table_size};
use crate::bitmap::{self, BITS_PER_LONG, Long};
use crate::errno::Errno;
use crate::fdtable::{FdTable, TableRef};
use crate::file_ref::{FileInner, FileRef};
use crate::limits::nr_open;
use crate::rcu;
use crate::sync::{Ordering, RawHeld};
use alloc::boxed::Box;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};

/// What to do with an allocation once the lock is dropped.
enum Deferred<F: ?Sized, P, L> {
    /// Never published, or the table has one user: free it.
    Free(NonNull<FdTable<F, P>>),
    /// Unpublished from a shared table: free it after a grace period.
    Retire(NonNull<FdTable<F, P>>),
    /// A fork copy that was not used (its allocation is empty).
    Copy(Box<FilesStruct<F, P, L>>),
}

impl<F: ?Sized, P, L> Deferred<F, P, L> {
    /// Frees or retires the allocation.
    ///
    /// # Safety
    ///
    /// As stated by the variant: never published (or one user), or unpublished.
    unsafe fn run(self) {
        match self {
            // SAFETY: per the contract.
            Deferred::Free(p) => unsafe { FdTable::free(p) },
            // SAFETY: unpublished, so sections that begin from now on cannot reach it; the
            // head is the allocation's first field.
            Deferred::Retire(p) => unsafe { rcu::call_rcu(p.cast(), FdTable::<F, P>::free_rcu) },
            Deferred::Copy(b) => {
                // ORDERING: Relaxed; the copy was never shared.
                let arr = b.hot.fdt.load(Ordering::Relaxed);
                // SAFETY: never published; its slots hold nothing.
                unsafe { FdTable::free(NonNull::new_unchecked(arr)) };
                drop(b);
            }
        }
    }
}

/// Exclusive access to a table's mutable state: `file_lock` is held, or the caller is the
/// table's only user (`exclusive`, no lock taken).
///
/// The lock can be dropped and taken again around an allocation ([`Locked::unlock`],
/// [`Locked::relock`]): nothing is allocated while it is held. Allocations unpublished or not
/// used are freed (or retired) when this is dropped, after the lock.
pub(super) struct Locked<'a, F: ?Sized, P, L: lock_api::RawMutex> {
    fs: &'a FilesStruct<F, P, L>,
    /// The handle's light-lookup cache, set again on drop for an exclusive table.
    light: &'a core::cell::Cell<*const FdTable<F, P>>,
    /// Set while this context holds `file_lock`.
    held: Option<RawHeld<'a>>,
    exclusive: bool,
    /// The current allocation (`files->fdt`), kept up to date by this context (only a context
    /// with exclusive access changes it, and this one reloads it after retaking the lock).
    t: TableRef<'a, F, P>,
    /// How many of `deferred` are set (the rest are uninitialised).
    n_deferred: u8,
    deferred: [MaybeUninit<Deferred<F, P, L>>; 2],
}

impl<F: ?Sized, P, L: lock_api::RawMutex> Drop for Locked<'_, F, P, L> {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(h) = self.held.take() {
            self.fs.cold.file_lock.raw_unlock(h);
        }
        if self.n_deferred != 0 {
            // Moved out to a temporary: the call then takes the address of that, not of this
            // context, whose other fields the compiler can keep in registers.
            let n = core::mem::take(&mut self.n_deferred);
            let d = core::mem::replace(&mut self.deferred, [const { MaybeUninit::uninit() }; 2]);
            run_deferred(d, n);
        }
        if self.exclusive {
            self.light.set(self.t.as_non_null().as_ptr());
        }
    }
}

/// Runs the first `n` of a context's deferred frees (taken out of it).
#[cold]
#[inline(never)]
fn run_deferred<F: ?Sized, P, L: lock_api::RawMutex>(
    mut deferred: [MaybeUninit<Deferred<F, P, L>>; 2],
    n: u8,
) {
    for d in &mut deferred[..n as usize] {
        // SAFETY: the first `n` entries were written by `defer`, and are read once (the
        // context's count was taken with them); the callers of `defer` stated the variant's
        // condition.
        unsafe { d.assume_init_read().run() };
    }
}

impl<'a, F: ?Sized, P: FdPayload, L: lock_api::RawMutex> Locked<'a, F, P, L> {
    #[inline(always)]
    pub(super) fn new(
        fs: &'a FilesStruct<F, P, L>,
        exclusive: bool,
        light: &'a core::cell::Cell<*const FdTable<F, P>>,
    ) -> Self {
        let held = if exclusive {
            None
        } else {
            Some(fs.cold.file_lock.raw_lock())
        };
        // ORDERING: Relaxed; every store to `fdt` is made with exclusive access, which this
        // context now has, so program order or the lock already orders it before us.
        let p = fs.hot.fdt.load(Ordering::Relaxed);
        Locked {
            fs,
            light,
            held,
            exclusive,
            // SAFETY: the current allocation is only retired by growth, which needs the
            // exclusive access this context holds, and which retires through `deferred`
            // (freed after this context's uses end).
            t: unsafe { TableRef::new(p) },
            n_deferred: 0,
            deferred: [const { MaybeUninit::uninit() }; 2],
        }
    }

    /// The handle found itself alone (it did not know before): no other handle can be inside
    /// a lock-free lookup any more (rule 2).
    #[cold]
    pub(super) fn became_exclusive(&self) {
        self.inner().shared = false;
    }

    /// The lock-protected scalars.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    fn inner(&self) -> &mut Inner {
        // SAFETY: exclusive access (the lock is held or we are the only user), and no other
        // reference to `Inner` is live: each access makes a fresh, short-lived one.
        self.fs.cold.inner.with_mut(|p| unsafe { &mut *p })
    }

    /// `files->next_fd`.
    pub(super) fn next_fd(&self) -> usize {
        self.inner().next_fd
    }

    /// `files_fdtable(files)` under the lock.
    #[inline(always)]
    pub(super) fn fdt(&self) -> TableRef<'a, F, P> {
        self.t
    }

    /// Reloads `fdt` (after the lock was retaken: another context may have grown the table).
    fn reload_fdt(&mut self) {
        // ORDERING: Relaxed; as in `new`.
        let p = self.fs.hot.fdt.load(Ordering::Relaxed);
        // SAFETY: as in `new`.
        self.t = unsafe { TableRef::new(p) };
    }

    /// Drops the lock (around an allocation). No-op for an exclusive table.
    fn unlock(&mut self) {
        if let Some(h) = self.held.take() {
            self.fs.cold.file_lock.raw_unlock(h);
        }
    }

    /// Takes the lock again (and reloads `fdt`, which may have changed meanwhile).
    fn relock(&mut self) {
        if !self.exclusive {
            self.held = Some(self.fs.cold.file_lock.raw_lock());
            self.reload_fdt();
        }
    }

    /// Frees or retires `d` once the lock is dropped (at once if two are already waiting,
    /// which only a table that keeps changing under a retried growth can cause: freeing is
    /// not allocating).
    fn defer(&mut self, d: Deferred<F, P, L>) {
        let n = self.n_deferred as usize;
        if n < self.deferred.len() {
            self.deferred[n].write(d);
            self.n_deferred += 1;
            return;
        }
        // SAFETY: the callers state the variant's condition.
        unsafe { d.run() };
    }

    // === bits ===

    #[inline(always)]
    pub(super) fn is_open(&self, fd: usize) -> bool {
        let t = self.fdt();
        // SAFETY: exclusive access; `fd` is checked against `max_fds` first.
        fd < t.max_fds()
            && (unsafe { *t.open_word(fd / BITS_PER_LONG) } >> (fd % BITS_PER_LONG)) & 1 != 0
    }

    #[inline(always)]
    pub(super) fn cloexec(&self, fd: usize) -> bool {
        // SAFETY: exclusive access; callers pass an fd below `max_fds`.
        (unsafe { *self.fdt().cloexec_word(fd / BITS_PER_LONG) } >> (fd % BITS_PER_LONG)) & 1 != 0
    }

    /// `__set_open_fd` plus the close-on-exec write every allocation path must make, and the
    /// fd's payload.
    #[inline(always)]
    fn set_open_fd(&self, fd: usize, cloexec: bool, payload: P) {
        let t = self.fdt();
        let w = fd / BITS_PER_LONG;
        // SAFETY: exclusive access; callers pass an fd below `max_fds`, so `w` is a word of
        // `open_fds` and `w / BITS_PER_LONG` one of `full_fds_bits`.
        unsafe {
            let word = t.open_word(w);
            *word |= 1 << (fd % BITS_PER_LONG);
            if *word == !0 {
                *t.full_word(w / BITS_PER_LONG) |= 1 << (w % BITS_PER_LONG);
            }
            self.set_cloexec(fd, cloexec);
            if core::mem::size_of::<P>() != 0 {
                t.payloads().get_unchecked_mut(fd).write(payload);
            }
        }
    }

    #[inline(always)]
    pub(super) fn set_cloexec(&self, fd: usize, cloexec: bool) {
        // SAFETY: exclusive access; callers pass an fd below `max_fds`.
        let word = unsafe { &mut *self.fdt().cloexec_word(fd / BITS_PER_LONG) };
        let bit: Long = 1 << (fd % BITS_PER_LONG);
        if cloexec {
            *word |= bit;
        } else if *word & bit != 0 {
            *word &= !bit;
        }
    }

    /// `__put_unused_fd`: clears the open bit and lowers the `next_fd` hint.
    #[inline(always)]
    fn put_unused_fd_locked(&self, fd: usize) {
        let t = self.fdt();
        let w = fd / BITS_PER_LONG;
        // SAFETY: exclusive access; callers pass an fd below `max_fds` (see `set_open_fd`).
        unsafe {
            let word = t.open_word(w);
            let was_full = *word == !0;
            *word &= !(1 << (fd % BITS_PER_LONG));
            if was_full {
                *t.full_word(w / BITS_PER_LONG) &= !(1 << (w % BITS_PER_LONG));
            }
        }
        let inner = self.inner();
        if fd < inner.next_fd {
            inner.next_fd = fd;
        }
    }

    /// The payload of an open fd.
    #[inline(always)]
    pub(super) fn payload(&self, fd: usize) -> P {
        // SAFETY: exclusive access; callers pass an open fd, whose payload is initialised.
        unsafe { self.fdt().payloads().get_unchecked(fd).assume_init() }
    }

    /// Replaces the payload of an open fd.
    #[inline(always)]
    pub(super) fn set_payload(&self, fd: usize, payload: P) {
        // SAFETY: exclusive access; callers pass an fd below `max_fds`.
        unsafe { self.fdt().payloads().get_unchecked_mut(fd).write(payload) };
    }

    // === slots ===

    /// `files_lookup_fd_locked`: the file installed at `fd`, if any.
    #[inline(always)]
    pub(super) fn lookup(&self, fd: usize) -> Option<&'a FileInner<F>> {
        let slot = self.fdt().slot(fd)?;
        // ORDERING: Relaxed; slot stores are made with exclusive access, ordered before us by
        // the lock or by program order.
        let p = slot.load(Ordering::Relaxed);
        // SAFETY: an installed slot holds a reference, which cannot be dropped while we hold
        // exclusive access.
        NonNull::new(p).map(|p| unsafe { &*p.as_ptr() })
    }

    /// Publishes `file` (whose reference the slot takes over) at `fd`, which is below
    /// `max_fds`.
    #[inline(always)]
    pub(super) fn publish(&self, fd: usize, file: NonNull<FileInner<F>>) {
        if self.inner().shared {
            // SAFETY: `file` carries a reference the caller hands to the slot.
            let f = unsafe { file.as_ref() };
            f.mark_visible();
        }
        // SAFETY: callers pass `fd < max_fds`.
        let slot = unsafe { self.fdt().slot_unchecked(fd) };
        // ORDERING: Release; pairs with the Acquire slot loads in `Files::fget`: a reader that
        // sees the pointer sees the initialised file (and its visibility mark).
        slot.store(file.as_ptr(), Ordering::Release);
    }

    /// `alloc_fd(start, end, flags)`: the lowest free fd `>= start` and `< end`, marked open
    /// (reserved) with its close-on-exec bit and payload written. Grows the table as needed
    /// (allocating without the lock).
    #[inline(never)]
    pub(super) fn alloc_fd(
        &mut self,
        start: usize,
        end: usize,
        cloexec: bool,
        payload: P,
    ) -> Result<usize, Errno> {
        loop {
            let t = self.fdt();
            let max = t.max_fds();
            let next_fd = self.inner().next_fd;
            let mut fd = start.max(next_fd);
            if fd < max {
                // find_next_fd's fast path: the open_fds word holding `fd`.
                // SAFETY: exclusive access; `fd < max`, so its word exists.
                let word = unsafe { *t.open_word(fd / BITS_PER_LONG) };
                let free = !word & (!0 << (fd % BITS_PER_LONG));
                fd = if free != 0 {
                    (fd & !(BITS_PER_LONG - 1) | free.trailing_zeros() as usize).min(max)
                } else {
                    // SAFETY: exclusive access.
                    unsafe { bitmap::find_next_fd(t.open_fds(), t.full_fds_bits(), max, fd) }
                };
            }
            // For tables shared between processes this limits their total.
            if fd >= end {
                return Err(Errno::EMFILE);
            }
            if fd >= max {
                self.expand_files(fd)?;
                continue;
            }
            if start <= next_fd {
                self.inner().next_fd = fd + 1;
            }
            self.set_open_fd(fd, cloexec, payload);
            debug_assert!(self.lookup(fd).is_none(), "alloc_fd: slot {fd} not empty");
            return Ok(fd);
        }
    }

    /// The fast path of [`Locked::alloc_fd`]: the lowest free fd is in the `open_fds` word
    /// holding `max(start, next_fd)`, below `max_fds`. `None` when it is not (a full word, or
    /// the table must grow): the caller drops this context and takes the slow path, so that
    /// this one stays in registers.
    #[inline(always)]
    pub(super) fn alloc_fd_fast(
        &mut self,
        start: usize,
        end: usize,
        cloexec: bool,
        payload: P,
    ) -> Option<Result<usize, Errno>> {
        let t = self.t;
        let max = t.max_fds();
        let next_fd = self.inner().next_fd;
        let from = start.max(next_fd);
        if from >= max {
            return None;
        }
        // SAFETY: exclusive access; `from < max`, so its word exists.
        let word = unsafe { *t.open_word(from / BITS_PER_LONG) };
        let free = !word & (!0 << (from % BITS_PER_LONG));
        if free == 0 {
            return None;
        }
        let fd = from & !(BITS_PER_LONG - 1) | free.trailing_zeros() as usize;
        if fd >= end {
            // `fd` is the lowest free fd at or above `start`.
            return Some(Err(Errno::EMFILE));
        }
        if fd >= max {
            return None;
        }
        if start <= next_fd {
            self.inner().next_fd = fd + 1;
        }
        self.set_open_fd(fd, cloexec, payload);
        Some(Ok(fd))
    }

    /// `expand_files`: makes room for `nr`. `EMFILE` at or past `nr_open`, `ENOMEM` if the
    /// allocator refuses (the table is unchanged then). The allocation is made without the
    /// lock; another thread may grow the table meanwhile, which is checked afterwards.
    pub(super) fn expand_files(&mut self, nr: usize) -> Result<(), Errno> {
        loop {
            if nr < self.fdt().max_fds() {
                return Ok(());
            }
            if nr >= nr_open() {
                return Err(Errno::EMFILE);
            }
            let new_max = table_size(nr + 1)?;
            if new_max <= nr {
                return Err(Errno::EMFILE);
            }
            self.unlock();
            let new = FdTable::<F, P>::alloc(new_max);
            self.relock();
            let new = new?;
            let cur = self.fdt();
            if cur.max_fds() >= new_max {
                // Grown by someone else while the lock was dropped.
                crate::events::note(crate::events::Event::GrowthDiscarded);
                self.defer(Deferred::Free(new));
                continue;
            }
            self.copy_fdtable(new, cur);
            // ORDERING: Release; pairs with the Acquire loads of `fdt` in `Files::fget`:
            // publishes the copied slots together with `max_fds`.
            self.fs.hot.fdt.store(new.as_ptr(), Ordering::Release);
            self.reload_fdt();
            if self.exclusive {
                // One user, this thread, which holds no pointer into the old allocation.
                self.defer(Deferred::Free(cur.as_non_null()));
            } else {
                Self::clear_retired(cur);
                self.defer(Deferred::Retire(cur.as_non_null()));
            }
            return Ok(());
        }
    }

    /// Empties every slot of an array that growth has just replaced, before the lock is let
    /// go: from then on any change to a slot is made in the new array, and a lock-free reader
    /// still holding the old one sees the slot it re-checks empty, as if the change had been
    /// made there (see `Files::fget`). The slots' references moved to the new array.
    #[cold]
    fn clear_retired(old: TableRef<'a, F, P>) {
        for fd in 0..old.max_fds() {
            // SAFETY: `fd < max_fds`.
            let slot = unsafe { old.slot_unchecked(fd) };
            // ORDERING: Release; pairs with the Acquire slot loads of the lock-free lookups: one
            // that reads this empty slot also sees the new array's publication (the Release
            // store of `fdt` before it), and re-checks `fdt`.
            slot.store(ptr::null_mut(), Ordering::Release);
        }
    }

    /// `copy_fdtable`: copies slots, bitmaps and payloads of `cur` into the larger `new`.
    #[cold]
    fn copy_fdtable(&self, new: NonNull<FdTable<F, P>>, cur: TableRef<'a, F, P>) {
        // SAFETY: `new` is not yet published; we are its only user.
        let new = unsafe { TableRef::new(new.as_ptr()) };
        let n = cur.max_fds();
        for fd in 0..n {
            // SAFETY: `fd < cur.max_fds() < new.max_fds()`.
            let (o, d) = unsafe { (cur.slot_unchecked(fd), new.slot_unchecked(fd)) };
            // ORDERING: Relaxed both: we have exclusive access to the old slots, and the new
            // allocation is published by the caller's Release store.
            d.store(o.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        // SAFETY: exclusive access to both; the new arrays are at least as long.
        unsafe {
            let w = cur.words();
            new.open_fds()[..w].copy_from_slice(cur.open_fds());
            new.close_on_exec()[..w].copy_from_slice(cur.close_on_exec());
            let fw = cur.full_fds_bits().len();
            new.full_fds_bits()[..fw].copy_from_slice(cur.full_fds_bits());
            ptr::copy_nonoverlapping(cur.payloads().as_ptr(), new.payloads().as_mut_ptr(), n);
        }
    }

    /// `fd_install` into a reserved slot. `EBADF` if `fd` is not reserved.
    #[inline]
    pub(super) fn install_reserved(
        &mut self,
        fd: usize,
        file: NonNull<FileInner<F>>,
    ) -> Result<(), Errno> {
        if !self.is_open(fd) || self.lookup(fd).is_some() {
            return Err(Errno::EBADF);
        }
        self.publish(fd, file);
        Ok(())
    }

    /// `put_unused_fd` on a reserved fd; nothing for a free or installed one.
    pub(super) fn put_unused_fd(&mut self, fd: usize) {
        if self.is_open(fd) && self.lookup(fd).is_none() {
            self.put_unused_fd_locked(fd);
        }
    }

    /// `file_close_fd_locked`: empties an installed slot and releases the fd.
    #[inline(always)]
    pub(super) fn file_close_fd_locked(&mut self, fd: usize) -> Option<FileRef<F>> {
        let slot = self.fdt().slot(fd)?;
        // ORDERING: Relaxed; see `lookup`.
        let p = NonNull::new(slot.load(Ordering::Relaxed))?;
        // ORDERING: Relaxed; a reader that still sees the old pointer takes a reference and
        // re-checks (see `Files::fget`); nothing is published by emptying a slot.
        slot.store(ptr::null_mut(), Ordering::Relaxed);
        self.put_unused_fd_locked(fd);
        // SAFETY: the slot's reference moves to the caller.
        Some(unsafe { FileRef::from_inner(p) })
    }

    /// `do_dup2`: puts `file` (whose counted reference the slot takes) at `fd`, which
    /// `expand_files` made room for, returning the displaced file. `EBUSY` if `fd` is
    /// reserved; then `file`'s reference is handed back.
    pub(super) fn do_dup2(
        &mut self,
        file: NonNull<FileInner<F>>,
        fd: usize,
        cloexec: bool,
        payload: P,
    ) -> Result<Option<FileRef<F>>, FileRef<F>> {
        let t = self.fdt();
        // SAFETY: `expand_files(fd)` succeeded, so `fd < max_fds`.
        let slot = unsafe { t.slot_unchecked(fd) };
        // ORDERING: Relaxed; see `lookup`.
        let tofree = NonNull::new(slot.load(Ordering::Relaxed));
        if tofree.is_none() && self.is_open(fd) {
            // SAFETY: the reference is the caller's; handed back.
            return Err(unsafe { FileRef::from_inner(file) });
        }
        self.publish(fd, file);
        self.set_open_fd(fd, cloexec, payload);
        // SAFETY: the slot's reference on the displaced file moves to the caller.
        Ok(tofree.map(|p| unsafe { FileRef::from_inner(p) }))
    }

    pub(super) fn state(&self, fd: usize) -> FdState {
        if !self.is_open(fd) {
            return FdState::Free;
        }
        if self.lookup(fd).is_none() {
            return FdState::Reserved;
        }
        FdState::Installed {
            cloexec: self.cloexec(fd),
        }
    }

    /// A second handle is about to exist: from now on lock-free readers may load any slot, so
    /// every installed file is marked visible (and every file published later, while the flag
    /// stays set).
    pub(super) fn mark_shared(&mut self) {
        if self.inner().shared {
            return;
        }
        self.inner().shared = true;
        let mut fd = 0;
        while let Some((n, f)) = self.next_installed(fd) {
            f.mark_visible();
            fd = n + 1;
        }
    }

    /// The first installed fd at or above `from`, with its file.
    pub(super) fn next_installed(&self, from: usize) -> Option<(usize, &'a FileInner<F>)> {
        let t = self.fdt();
        let max = t.max_fds();
        let mut fd = from;
        loop {
            // SAFETY: exclusive access.
            fd = bitmap::find_next_bit(unsafe { t.open_fds() }, max, fd);
            if fd >= max {
                return None;
            }
            if let Some(f) = self.lookup(fd) {
                return Some((fd, f));
            }
            fd += 1;
        }
    }

    /// The first open (reserved or installed) fd at or above `from`.
    pub(super) fn next_open(&self, from: usize) -> Option<usize> {
        let t = self.fdt();
        let max = t.max_fds();
        // SAFETY: exclusive access.
        let fd = bitmap::find_next_bit(unsafe { t.open_fds() }, max, from);
        (fd < max).then_some(fd)
    }

    /// Sets close-on-exec over `first..=last` (clamped to the table): `CLOSE_RANGE_CLOEXEC`.
    pub(super) fn set_cloexec_range(&self, first: usize, last: usize) {
        let t = self.fdt();
        let last = last.min(t.max_fds() - 1);
        if first <= last {
            // SAFETY: exclusive access.
            bitmap::bitmap_set(unsafe { t.close_on_exec() }, first, last - first + 1);
        }
    }

    /// Takes (and clears) close-on-exec word `w`, if the table has it.
    pub(super) fn take_cloexec_word(&self, w: usize) -> Option<Long> {
        let t = self.fdt();
        // SAFETY: exclusive access.
        let words = unsafe { t.close_on_exec() };
        words.get_mut(w).map(core::mem::take)
    }

    /// `sane_fdtable_size`, with close_range's punch hole.
    fn sane_fdtable_size(&self, punch_hole: Option<(usize, usize)>) -> usize {
        let t = self.fdt();
        let max = t.max_fds();
        // SAFETY: exclusive access.
        let open = unsafe { t.open_fds() };
        let mut last = bitmap::find_last_bit(open, max);
        if last == max {
            return NR_OPEN_DEFAULT;
        }
        if let Some((from, to)) = punch_hole
            && to >= last
            && from <= last
        {
            last = bitmap::find_last_bit(open, from);
            if last == from {
                return NR_OPEN_DEFAULT;
            }
        }
        (last + 1).next_multiple_of(FD_ALIGN)
    }

    /// `dup_fd`: a private copy for a child (fork) or for unshare. Reserved slots are not
    /// copied: an open in progress in the parent belongs to the parent. The copy is allocated
    /// without the lock (and again if the table grew meanwhile).
    pub(super) fn dup_fd(
        &mut self,
        punch_hole: Option<(usize, usize)>,
    ) -> Result<Box<FilesStruct<F, P, L>>, Errno> {
        let mut new: Option<Box<FilesStruct<F, P, L>>> = None;
        let (open_files, new) = loop {
            let open_files = self.sane_fdtable_size(punch_hole).min(self.fdt().max_fds());
            let new_max = if open_files <= NR_OPEN_DEFAULT {
                NR_OPEN_DEFAULT
            } else {
                let n = table_size(open_files)?;
                if n < open_files {
                    return Err(Errno::EMFILE);
                }
                n
            };
            if let Some(b) = new.take() {
                // ORDERING: Relaxed; our own unpublished copy.
                let arr = b.hot.fdt.load(Ordering::Relaxed);
                // SAFETY: our own unpublished allocation.
                if unsafe { TableRef::new(arr) }.max_fds() == new_max {
                    break (open_files, b);
                }
                self.defer(Deferred::Copy(b));
            }
            self.unlock();
            let b = FdTable::<F, P>::alloc(new_max).and_then(FilesStruct::boxed);
            self.relock();
            new = Some(b?);
        };
        let old = self.fdt();
        // ORDERING: Relaxed; our own unpublished copy.
        // SAFETY: unpublished; we are its only user.
        let copy = unsafe { TableRef::new(new.hot.fdt.load(Ordering::Relaxed)) };
        // SAFETY: exclusive access to both; `open_files <= min(old, copy) max_fds`.
        unsafe {
            copy_bits(copy.open_fds(), old.open_fds(), open_files);
            copy_bits(copy.close_on_exec(), old.close_on_exec(), open_files);
            ptr::copy_nonoverlapping(
                old.payloads().as_ptr(),
                copy.payloads().as_mut_ptr(),
                open_files,
            );
        }
        for fd in 0..open_files {
            // SAFETY: `fd < open_files <= min(old.max_fds, copy.max_fds)`.
            let (o, n) = unsafe { (old.slot_unchecked(fd), copy.slot_unchecked(fd)) };
            // ORDERING: Relaxed; see `lookup`.
            match NonNull::new(o.load(Ordering::Relaxed)) {
                Some(p) => {
                    // SAFETY: an installed slot's file is alive while we hold the lock.
                    let p = unsafe { p.as_ref() }.get();
                    // ORDERING: Relaxed; the copy is published to its user by handing over
                    // the `Files` value, which synchronises.
                    n.store(p.as_ptr(), Ordering::Relaxed);
                }
                // SAFETY: exclusive access to the unpublished copy.
                None => bitmap::clear_bit(unsafe { copy.open_fds() }, fd),
            }
        }
        // SAFETY: exclusive access to the unpublished copy.
        unsafe {
            let open = copy.open_fds();
            let full = copy.full_fds_bits();
            for (w, word) in open.iter().enumerate() {
                if *word == !0 {
                    bitmap::set_bit(full, w);
                }
            }
        }
        Ok(new)
    }
}

/// Copies the first `nbits` bits of `src` into `dst` (the rest of `dst` stays clear).
fn copy_bits(dst: &mut [Long], src: &[Long], nbits: usize) {
    let full = nbits / BITS_PER_LONG;
    dst[..full].copy_from_slice(&src[..full]);
    let rest = nbits % BITS_PER_LONG;
    if rest != 0 {
        dst[full] = src[full] & ((1 << rest) - 1);
    }
}

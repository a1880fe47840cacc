//! Lookups: the light `fdget` (`fget_light`) and the lock-free `fget` (the RCU fd table).

use super::{FdPayload, FileLike, Files};
#[cfg(any(feature = "std", loom))]
use crate::fd::QsbrFd;
use crate::fd::{Fd, RcuFd};
use crate::fdtable::TableRef;
use crate::file_ref::{FileInner, FileRef};
use crate::rcu;
use crate::sync::Ordering;
use core::ptr::NonNull;

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Files<F, P, L> {
    /// `fdget` — the light lookup (`fget_light`).
    ///
    /// If this handle is the table's only user, the result *borrows* the file: no lock, no
    /// atomic read-modify-write, no reference count. Otherwise it takes a reference
    /// (`FDPUT_FPUT`) through the lock-free [`Files::fget`]. Either way, `Fd` derefs to the
    /// file and drops what it took.
    ///
    /// The borrow ties the result to `&self`: it cannot outlive the call that made it, and
    /// while it lives this handle cannot close that fd or share the table — every operation
    /// that can remove a file from a slot ([`close_fd`](Files::close_fd), `dup2`, `dup3`,
    /// [`renumber`](Files::renumber), [`replace_fd`](Files::replace_fd), `close_range`, `exec`,
    /// `unshare`) or add a sharer ([`share`](Files::share),
    /// [`reserve_owned`](Files::reserve_owned)) takes `&mut self`:
    ///
    /// ```compile_fail
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// let file = files.fdget(fd).unwrap();
    /// files.close_fd(fd).unwrap(); // error: `files` is borrowed by `file`
    /// drop(file);
    /// ```
    ///
    /// and likewise for the other operations named above (each of these fails to compile):
    ///
    /// ```compile_fail
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// let file = files.fdget(fd).unwrap();
    /// let other = files.share(); // error: `files` is borrowed by `file`
    /// drop(file);
    /// ```
    /// ```compile_fail
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// let file = files.fdget(fd).unwrap();
    /// files.dup2(fd, 5, 1024).unwrap(); // error: `files` is borrowed by `file`
    /// drop(file);
    /// ```
    /// ```compile_fail
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// let file = files.fdget(fd).unwrap();
    /// files.dup3(fd, 5, 0, 1024).unwrap(); // error: `files` is borrowed by `file`
    /// drop(file);
    /// ```
    /// ```compile_fail
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// let file = files.fdget(fd).unwrap();
    /// files.renumber(fd, 5, 1024).unwrap(); // error: `files` is borrowed by `file`
    /// drop(file);
    /// ```
    /// ```compile_fail
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// let file = files.fdget(fd).unwrap();
    /// files.replace_fd(fd, FileRef::new(F), 0, 1024).unwrap(); // error: borrowed
    /// drop(file);
    /// ```
    /// ```compile_fail
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// let file = files.fdget(fd).unwrap();
    /// let r = files.reserve_owned(0, 1024).unwrap(); // error: borrowed
    /// drop(file);
    /// ```
    /// ```compile_fail
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// let file = files.fdget(fd).unwrap();
    /// files.close_range(0, 10, 0).unwrap(); // error: `files` is borrowed by `file`
    /// drop(file);
    /// ```
    /// ```compile_fail
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// let file = files.fdget(fd).unwrap();
    /// files.exec().unwrap(); // error: `files` is borrowed by `file`
    /// drop(file);
    /// ```
    /// ```compile_fail
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// let file = files.fdget(fd).unwrap();
    /// files.unshare().unwrap(); // error: `files` is borrowed by `file`
    /// drop(file);
    /// ```
    ///
    /// while the same calls compile once the borrow is gone:
    ///
    /// ```
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// let file = files.fdget(fd).unwrap();
    /// drop(file);
    /// files.dup2(fd, 5, 1024).unwrap();
    /// files.dup3(fd, 6, 0, 1024).unwrap();
    /// files.renumber(6, 7, 1024).unwrap();
    /// files.replace_fd(7, FileRef::new(F), 0, 1024).unwrap();
    /// let r = files.reserve_owned(0, 1024).unwrap();
    /// drop(r);
    /// let other = files.share();
    /// files.unshare().unwrap();
    /// files.close_range(5, 5, 0).unwrap();
    /// files.exec().unwrap();
    /// files.close_fd(fd).unwrap();
    /// drop(other);
    /// ```
    ///
    /// Returns `None` for a free or reserved fd (callers answer `EBADF`).
    ///
    /// # Kernel
    ///
    /// `fdget` in fs/file.c, which reads `files->count == 1` each time; this handle caches the
    /// answer (it can only change through its own `share`), so the light path is one load of
    /// the cached array, a bounds check and one load of the slot.
    #[inline(always)]
    pub fn fdget(&self, fd: u32) -> Option<Fd<'_, F>> {
        if let Some(p) = self.light_lookup(fd) {
            // SAFETY: the slot's reference keeps the file alive for as long as the slot holds
            // it, which is at least the borrow of `self` (see `light_lookup`).
            return p.map(|p| unsafe { Fd::borrowed(p) });
        }
        self.fdget_slow(fd)
    }

    /// `fdget` together with the fd's payload, as one snapshot: the payload is the one that
    /// was installed with (or last set on) *this* file at `fd`, never another fd's or another
    /// installation's. Use it for a rights check before an operation: a payload read with
    /// [`fd_payload`](Files::fd_payload) and a file looked up with [`fdget`](Files::fdget)
    /// in two calls can pair one file with another fd's rights on a shared table, when a
    /// `dup2` or [`renumber`](Files::renumber) lands between them.
    ///
    /// If this handle is the table's only user, this is the light lookup: no lock, no atomic
    /// read-modify-write, and a plain copy of the payload. On a shared table the file and its
    /// payload are read under the table lock (the lock the writers of both hold), with a
    /// counted reference, as [`fget_with_payload`](Files::fget_with_payload).
    ///
    /// ```
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// const READ: u64 = 1 << 1;
    /// let mut files: Files<F, u64> = Files::new();
    /// let fd = files.install_with(FileRef::new(F), 0, READ, 1024).unwrap();
    /// let (file, rights) = files.fdget_with_payload(fd).unwrap();
    /// assert_eq!(rights & READ, READ);
    /// drop(file);
    /// assert!(files.fdget_with_payload(fd + 1).is_none());
    /// ```
    ///
    /// Returns `None` for a free or reserved fd (callers answer `EBADF`).
    #[inline(always)]
    pub fn fdget_with_payload(&self, fd: u32) -> Option<(Fd<'_, F>, P)> {
        let arr = self.light.get();
        if !arr.is_null() {
            // SAFETY: as in `light_lookup`: the cached array is current while this handle is
            // the table's only user, and only this handle (borrowed now) could retire it.
            let arr = unsafe { TableRef::new(arr) };
            let slot = arr.slot(fd as usize)?;
            // ORDERING: Relaxed; as in `light_lookup`.
            let p = NonNull::new(slot.load(Ordering::Relaxed))?;
            // SAFETY: `fd` is below `max_fds` and installed (its slot holds a file), so its
            // payload is initialised; with one user, the payload writers all run on this
            // thread, none of them now.
            let payload = unsafe { arr.payload_of(fd as usize) };
            // SAFETY: as in `fdget`: the slot keeps the file alive for the borrow of `self`.
            return Some((unsafe { Fd::borrowed(p) }, payload));
        }
        self.fdget_with_payload_shared(fd)
    }

    /// [`Files::fdget_with_payload`] on a table that may be shared: both under the lock.
    #[inline(never)]
    fn fdget_with_payload_shared(&self, fd: u32) -> Option<(Fd<'_, F>, P)> {
        let (file, payload) = self.fget_with_payload(fd).ok()?;
        // SAFETY: the reference `fget_with_payload` took is handed over to the `Fd`, whose put
        // takes the general path.
        let fd = unsafe { Fd::owned(FileRef::into_inner(file), crate::rcu::PutWindow::GENERAL) };
        Some((fd, payload))
    }

    /// The light path of every lookup: `None` if this handle may not be the table's only user;
    /// otherwise the file at `fd`, if any, which stays installed while `self` is borrowed
    /// (every call that could remove it takes `&mut self`).
    #[inline(always)]
    fn light_lookup(&self, fd: u32) -> Option<Option<NonNull<FileInner<F>>>> {
        let arr = self.light.get();
        if arr.is_null() {
            return None;
        }
        // SAFETY: `light` is non-null only while this handle is the table's only user, and
        // then it is the current allocation, which only this handle (not borrowed mutably now)
        // can retire.
        let arr = unsafe { TableRef::new(arr) };
        // ORDERING: Relaxed; with one user, every slot store was made by this thread or
        // ordered before us by the Acquire that established `light`.
        Some(
            arr.slot(fd as usize)
                .and_then(|slot| NonNull::new(slot.load(Ordering::Relaxed))),
        )
    }

    /// `fdget` when this handle has not (yet) seen itself alone: the table may be shared.
    /// The lock-free lookup of [`Files::fget`], inlined, with every path but the common one
    /// out of line, so that the common one returns its own `Fd` (whose put is known to be on
    /// this handle's record) rather than joining the others. (This repeats `fget_inner` on
    /// purpose: sharing one generic body, with the `Fd` built after the slow paths' calls,
    /// measured 43 instructions instead of 35.)
    #[inline(always)]
    fn fdget_slow(&self, fd: u32) -> Option<Fd<'_, F>> {
        // One load of the handle's table pointer: the section's store below could otherwise
        // make the compiler load it again.
        let hot = &self.fs().hot;
        // ORDERING: Acquire; pairs with the Release decrement in `Drop for Files`.
        if hot.count.load(Ordering::Acquire) == 1 {
            return self.become_light(fd);
        }
        let Some(section) = self.reader.lookup_try_begin() else {
            return self.fdget_retry(fd, None);
        };
        // ORDERING: Acquire; as in `fget_inner`.
        let arr_ptr = hot.fdt.load(Ordering::Acquire);
        // SAFETY: as in `fget_inner`.
        let arr = unsafe { TableRef::new(arr_ptr) };
        let Some(slot) = arr.slot(fd as usize) else {
            rcu::lookup_end_fast(section);
            return None;
        };
        // ORDERING: Acquire; as in `fget_inner`.
        let Some(p) = NonNull::new(slot.load(Ordering::Acquire)) else {
            rcu::lookup_end_fast(section);
            return self.fdget_empty(fd, arr_ptr);
        };
        // SAFETY: as in `fget_inner`.
        let got = unsafe { FileInner::try_get_rcu(p.as_ptr()) };
        // ORDERING: Acquire; as in `fget_inner`.
        if got && slot.load(Ordering::Acquire) == p.as_ptr() {
            rcu::lookup_end_fast(section);
            // SAFETY: `try_get_rcu` took a reference, which the `Fd` takes over; its put opens
            // its window on this handle's record, as the section did.
            return Some(unsafe { Fd::owned(p, section.put_window()) });
        }
        rcu::lookup_end_fast(section);
        if got {
            crate::events::note(crate::events::Event::SlotChanged);
        }
        // SAFETY: if `got`, `try_get_rcu` took a reference, handed over.
        self.fdget_retry(fd, got.then(|| unsafe { FileRef::from_inner(p) }))
    }

    /// [`Files::fdget_slow`] after its lookup lost a race, or could not begin its section.
    #[cold]
    #[inline(never)]
    fn fdget_retry(&self, fd: u32, held: Option<FileRef<F>>) -> Option<Fd<'_, F>> {
        let (p, w) = self.fget_slow(fd, held)?;
        // SAFETY: `fget_slow` took a counted reference, which `Fd::owned` takes over; `w` is
        // the general path.
        Some(unsafe { Fd::owned(p, w) })
    }

    /// [`Files::fdget_slow`] found an empty slot: see [`Files::fget_empty`].
    #[cold]
    #[inline(never)]
    fn fdget_empty(
        &self,
        fd: u32,
        arr_ptr: *mut crate::fdtable::FdTable<F, P>,
    ) -> Option<Fd<'_, F>> {
        let (p, w) = self.fget_empty(fd, arr_ptr)?;
        // SAFETY: as in `fdget_retry`.
        Some(unsafe { Fd::owned(p, w) })
    }

    /// The other handles are gone: cache the array and take the light path from now on.
    #[cold]
    fn become_light(&self, fd: u32) -> Option<Fd<'_, F>> {
        // ORDERING: Relaxed; the Acquire load of `count` that brought us here ordered every
        // other handle's stores of `fdt` before this load, and only we can store it from now on.
        self.light.set(self.fs().hot.fdt.load(Ordering::Relaxed));
        self.fdget(fd)
    }

    /// `fget_raw` — a counted reference to the file at `fd`, without taking any lock
    /// (`__fget_files_rcu`).
    ///
    /// Inside an RCU read-side section (two plain stores with the built-in RCU), and safe
    /// against every writer racing with it:
    ///
    /// 1. *The file's count already reached zero* (a close dropped the last reference after we
    ///    loaded the pointer): the increment lands in the dead zone and fails; retry, and the
    ///    slot reads as empty or as a new file.
    /// 2. *The slot changed* (close, dup2 replacing the file) after we loaded it: the re-check
    ///    after the increment sees it; drop the reference (outside the section: it may release
    ///    the file, here) and retry.
    /// 3. *The table grew* after we loaded the array: growth publishes the new array and
    ///    clears the slots of the old one before it lets go of the lock, so a change made in
    ///    the new array (necessarily after that) shows in the old one as an empty slot: the
    ///    re-check of the slot fails as in (2), and an empty slot is retried when the array
    ///    has changed. (The kernel re-checks `files->fdt` instead; this saves the load.)
    ///
    /// So the returned file was installed at `fd` at some instant after the reference was
    /// taken. The section keeps the array and the file's memory from being freed while we
    /// touch them: both are freed through RCU once no section can see them.
    ///
    /// Costs two locked instructions in all: the increment here and the decrement of the
    /// returned reference's drop.
    #[inline(always)]
    pub fn fget(&self, fd: u32) -> Option<FileRef<F>> {
        // SAFETY: `fget_inner` took a counted reference, which the result takes over (its drop
        // puts it through the thread's own path).
        self.fget_inner(fd)
            .map(|(p, _)| unsafe { FileRef::from_inner(p) })
    }

    /// [`Files::fget`]: the file with a counted reference, and where its put should open its
    /// window (the record this lookup's section used).
    #[inline(always)]
    fn fget_inner(&self, fd: u32) -> Option<(NonNull<FileInner<F>>, rcu::PutWindow)> {
        let fdt = &self.fs().hot.fdt;
        let Some(section) = self.reader.lookup_try_begin() else {
            return self.fget_slow(fd, None);
        };
        // ORDERING: Acquire; pairs with the Release store in `expand_files`: the array's
        // slots and `max_fds` are those that were published with it.
        let arr_ptr = fdt.load(Ordering::Acquire);
        // SAFETY: allocations are retired only through RCU (or freed at once when there is a
        // single user, which then is not running this), and we are in a section.
        let arr = unsafe { TableRef::new(arr_ptr) };
        let Some(slot) = arr.slot(fd as usize) else {
            // `fd` was past the end of the table when we loaded it: it was not open then.
            rcu::lookup_end_fast(section);
            return None;
        };
        // ORDERING: Acquire; pairs with the Release store in `Locked::publish` (the file is
        // initialised before we touch it) and with the Release stores that clear a retired
        // array (an empty slot read from one orders the new array's publication before the
        // re-check of `fdt` in the slow path).
        let Some(p) = NonNull::new(slot.load(Ordering::Acquire)) else {
            rcu::lookup_end_fast(section);
            return self.fget_empty(fd, arr_ptr);
        };
        // SAFETY: `p` was read from a slot inside the section, which is still open.
        let got = unsafe { FileInner::try_get_rcu(p.as_ptr()) };
        // ORDERING: Acquire; ordered after the increment (which is Acquire), so it observes
        // the slot as it was after our reference existed: a close (or a growth followed by a
        // close) whose put our increment came after has emptied it.
        if got && slot.load(Ordering::Acquire) == p.as_ptr() {
            rcu::lookup_end_fast(section);
            return Some((p, section.put_window()));
        }
        rcu::lookup_end_fast(section);
        if got {
            crate::events::note(crate::events::Event::SlotChanged);
        }
        // SAFETY: if `got`, `try_get_rcu` took a reference, handed over.
        let held = got.then(|| unsafe { FileRef::from_inner(p) });
        self.fget_slow(fd, held)
    }

    /// An empty slot in the array a lookup loaded: the fd is not open — unless the table grew
    /// meanwhile and the empty slot is a retired array's, cleared by the growth; then retry.
    #[cold]
    #[inline(never)]
    fn fget_empty(
        &self,
        fd: u32,
        arr_ptr: *mut crate::fdtable::FdTable<F, P>,
    ) -> Option<(NonNull<FileInner<F>>, rcu::PutWindow)> {
        // ORDERING: Acquire; after the Acquire load of the slot (see `fget_inner`).
        if self.fs().hot.fdt.load(Ordering::Acquire) == arr_ptr {
            return None;
        }
        crate::events::note(crate::events::Event::RetiredSlotCleared);
        self.fget_slow(fd, None)
    }

    /// `fget` after a first attempt lost a race — (1) the count had reached zero, (2) the slot
    /// changed, (3) the array was retired; `held` is the reference the attempt took in case
    /// (2), dropped here, outside the section (it may release the file) — or could not begin
    /// its section cheaply (this thread's first lookup). Then retry.
    #[cold]
    #[inline(never)]
    fn fget_slow(
        &self,
        fd: u32,
        held: Option<FileRef<F>>,
    ) -> Option<(NonNull<FileInner<F>>, rcu::PutWindow)> {
        drop(held);
        // A first shared lookup through this handle: give it a record (if it can have one).
        self.reader.register();
        let fd = fd as usize;
        let fdt = &self.fs().hot.fdt;
        loop {
            let section = rcu::lookup_begin();
            // ORDERING: Acquire; as in `fget_inner`.
            let arr_ptr = fdt.load(Ordering::Acquire);
            // SAFETY: as in `fget_inner`.
            let arr = unsafe { TableRef::new(arr_ptr) };
            let Some(slot) = arr.slot(fd) else {
                rcu::lookup_end(section);
                return None;
            };
            // ORDERING: Acquire; as in `fget_inner`.
            let Some(p) = NonNull::new(slot.load(Ordering::Acquire)) else {
                // ORDERING: Acquire; as in `fget_empty`.
                let grown = fdt.load(Ordering::Acquire) != arr_ptr;
                rcu::lookup_end(section);
                if grown {
                    crate::events::note(crate::events::Event::RetiredSlotCleared);
                    continue;
                }
                return None;
            };
            // SAFETY: as in `fget_inner`.
            if !unsafe { FileInner::try_get_rcu(p.as_ptr()) } {
                rcu::lookup_end(section);
                continue;
            }
            // ORDERING: Acquire; as in `fget_inner`.
            let changed = slot.load(Ordering::Acquire) != p.as_ptr();
            rcu::lookup_end(section);
            if changed {
                crate::events::note(crate::events::Event::SlotChanged);
                // SAFETY: `try_get_rcu` took a reference for us, dropped here.
                drop(unsafe { FileRef::from_inner(p) });
                continue;
            }
            return Some((p, rcu::PutWindow::GENERAL));
        }
    }

    /// A lookup that takes **no locked instruction** on a shared table: the file is lent
    /// under an RCU read-side section (two plain stores with the built-in RCU) instead of a
    /// reference count. For the operations that do not block — a read from a pipe's buffer, a
    /// `fstat`, an ioctl answered from memory — this is cheaper than any counted lookup, Linux's
    /// included. Before anything that may block, [`RcuFd::upgrade`] to a counted reference.
    ///
    /// On an unshared table this is the light lookup of [`Files::fdget`].
    ///
    /// The price is paid by the file's release, and only by files looked up often: a file's
    /// first [`LEND_AFTER`](crate::LEND_AFTER) lookups through `fdget_rcu` on a shared table
    /// take a counted reference, as [`Files::fget`] (the result's
    /// [`is_rcu`](RcuFd::is_rcu) is false); the next one makes the file lendable (one
    /// `membarrier` with the built-in RCU, once per file) and lends it, as do all later ones.
    /// The release of a file that was made lendable first waits until no borrow that could
    /// hold it remains — with the built-in RCU one `membarrier` and a scan when no borrow is
    /// in progress anywhere (about a microsecond), two epoch advances otherwise; without
    /// `std`, the embedder's `synchronize_rcu` — still before the close that dropped its last
    /// reference returns. A file opened, read a few times and closed pays nothing of this;
    /// nor do closes that do not drop the last reference (a dup's), nor files never looked up
    /// this way. A release that happens on a thread while it is itself inside a borrow section
    /// runs when that section ends.
    ///
    /// A thread with a natural quiescent state (a dispatch loop) can drop the section too:
    /// see `Files::fdget_qsbr` (with `std`).
    ///
    /// Returns `None` for a free or reserved fd.
    #[inline(always)]
    pub fn fdget_rcu(&self, fd: u32) -> Option<RcuFd<'_, F>> {
        if let Some(p) = self.light_lookup(fd) {
            // SAFETY: as in `fdget`: the slot holds the file for the borrow of `self`.
            return p.map(|p| unsafe { RcuFd::light(p) });
        }
        let Some(token) = rcu::borrow_begin() else {
            return self.fdget_rcu_slow(fd);
        };
        self.fdget_rcu_in(fd, token)
    }

    /// [`fdget_rcu`](Files::fdget_rcu) around `f`: runs `f` on the file at `fd` (`None` for a
    /// free or reserved fd: answer `EBADF`) and ends the borrow. The same lookup, but a light
    /// borrow (unshared table), a file lent in a section (shared table) and the rest reach
    /// `f` on paths of their own, so on the first two the compiler knows what it holds:
    /// nothing to test to end it, and `f`'s own tests of it ([`RcuFd::is_rcu`],
    /// [`RcuFd::shared_file`]) fold away. For a syscall layer's hot paths: `f` is inlined on
    /// each path (mark a large closure `#[inline(always)]`).
    ///
    /// ```
    /// # use fdtable::{Errno, Files, FileRef, FileLike};
    /// # struct F(u64); impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F(7)), 0, 1024).unwrap();
    /// let read = |fd| files.with_fdget_rcu(fd, |f| f.map(|f| f.0).ok_or(Errno::EBADF));
    /// assert_eq!(read(fd), Ok(7));
    /// assert_eq!(read(fd + 1), Err(Errno::EBADF));
    /// ```
    #[inline(always)]
    pub fn with_fdget_rcu<R>(&self, fd: u32, f: impl FnOnce(Option<&RcuFd<'_, F>>) -> R) -> R {
        self.with_fdget_rcu_as::<false, R>(fd, f)
    }

    /// [`with_fdget_rcu`](Files::with_fdget_rcu) for a borrow that does not block: `f` must
    /// not wait (for I/O, a peer, a sleeping lock), or must
    /// [`upgrade`](RcuFd::upgrade) first. In exchange, a file that may not be lent to every
    /// borrow but may be lent to these ([`FileLike::may_lend_nonblocking`]: a pipe whose
    /// `FIONREAD` only reads a count) is lent here without a reference once looked up often
    /// through this entry, as [`fdget_rcu`](Files::fdget_rcu) lends a file that may be: no
    /// locked instruction where [`fget`](Files::fget) takes two. A file that is lent to
    /// every borrow is lent here too; any other comes with a counted reference.
    ///
    /// ```
    /// # use fdtable::{Errno, Files, FileRef, FileLike};
    /// struct Pipe(u64);
    /// impl FileLike for Pipe {
    ///     fn may_lend(&self) -> bool { false } // its reads may block
    ///     fn may_lend_nonblocking(&self) -> bool { true } // its FIONREAD does not
    /// }
    /// let mut files: Files<Pipe> = Files::new();
    /// let fd = files.install(FileRef::new(Pipe(7)), 0, 1024).unwrap();
    /// let shared = files.share();
    /// let fionread = |fd| shared.with_fdget_rcu_nonblocking(fd, |f| f.map(|f| f.0));
    /// for _ in 0..100 {
    ///     assert_eq!(fionread(fd), Some(7));
    /// }
    /// // Lent by now, to this entry only.
    /// assert!(shared.with_fdget_rcu_nonblocking(fd, |f| f.unwrap().is_rcu()));
    /// assert!(!shared.with_fdget_rcu(fd, |f| f.unwrap().is_rcu()));
    /// ```
    #[inline(always)]
    pub fn with_fdget_rcu_nonblocking<R>(
        &self,
        fd: u32,
        f: impl FnOnce(Option<&RcuFd<'_, F>>) -> R,
    ) -> R {
        self.with_fdget_rcu_as::<true, R>(fd, f)
    }

    /// [`with_fdget_rcu`](Files::with_fdget_rcu) (`NONBLOCKING` false) and
    /// [`with_fdget_rcu_nonblocking`](Files::with_fdget_rcu_nonblocking) (true): they differ
    /// in the level of lending that lends the file, and in which count a file not lent yet
    /// goes up.
    #[inline(always)]
    fn with_fdget_rcu_as<const NONBLOCKING: bool, R>(
        &self,
        fd: u32,
        f: impl FnOnce(Option<&RcuFd<'_, F>>) -> R,
    ) -> R {
        if let Some(p) = self.light_lookup(fd) {
            return match p {
                // SAFETY: as in `fdget`: the slot holds the file for the borrow of `self`.
                Some(p) => f(Some(&unsafe { RcuFd::light(p) })),
                None => f(None),
            };
        }
        let b = match rcu::borrow_begin() {
            None => self.fdget_rcu_slow(fd),
            Some(token) => {
                let hot = &self.fs().hot;
                // ORDERING: Acquire; as in `fget_inner`.
                let arr_ptr = hot.fdt.load(Ordering::Acquire);
                // SAFETY: as in `fget_inner`: we are in a section.
                let arr = unsafe { TableRef::new(arr_ptr) };
                if let Some(slot) = arr.slot(fd as usize)
                    // ORDERING: Acquire; as in `fget_inner`.
                    && let Some(p) = NonNull::new(slot.load(Ordering::Acquire))
                {
                    // SAFETY: read from a slot inside the section, which keeps the header
                    // alive.
                    let inner = unsafe { p.as_ref() };
                    let lent = if NONBLOCKING {
                        inner.lendable_nonblocking()
                    } else {
                        inner.lendable()
                    };
                    if lent {
                        // SAFETY: as in `fdget_rcu_in`; a file lent to non-blocking borrows
                        // only is lent to this one, whose caller promised not to block.
                        return f(Some(&unsafe { RcuFd::in_section(p, token) }));
                    }
                    // A file that is not lent (yet): a counted reference, as `fget`.
                    // SAFETY: `p` was read from `slot` in the section `token`.
                    unsafe { self.fdget_rcu_unlent::<NONBLOCKING>(fd, slot, p, token) }
                } else {
                    // Past the table, or an empty slot (perhaps of a retired array).
                    self.fdget_rcu_in_cold(fd, token)
                }
            }
        };
        f(b.as_ref())
    }

    /// The lookup of a QSBR reader ([`QsbrThread`](crate::rcu::QsbrThread)): on a shared
    /// table, a file lent with **no read-side section and no reference count** — what the
    /// kernel's `fget` costs under `rcu_read_lock` on a kernel without preemption. The
    /// thread's being online is the section: the result borrows `reader`, so it cannot
    /// survive the thread's next quiescent state, which the file's release waits for.
    ///
    /// ```
    /// use fdtable::rcu::QsbrThread;
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F(u64); impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F(7)), 0, 1024).unwrap();
    /// let shared = files.share();
    /// let mut me = QsbrThread::online().unwrap();
    /// assert_eq!(shared.fdget_qsbr(&me, fd).map(|f| f.0), Some(7));
    /// assert!(shared.fdget_qsbr(&me, fd + 1).is_none());
    /// me.quiescent_state();
    /// ```
    ///
    /// Otherwise as [`fdget_rcu`](Files::fdget_rcu): on an unshared table the light lookup;
    /// a file's first [`LEND_AFTER`](crate::LEND_AFTER) lookups on a shared table take a
    /// counted reference and the next makes it lendable; a release of a file that was made
    /// lendable waits for every online thread's next quiescent state, and one that happens
    /// on an online thread runs at its own next quiescent state (or when it goes offline).
    /// Before anything that may block, [`QsbrFd::upgrade`] to a counted reference, or drop
    /// the file and go [`offline`](crate::rcu::QsbrThread::offline).
    ///
    /// Returns `None` for a free or reserved fd.
    ///
    /// ```compile_fail
    /// # use fdtable::rcu::QsbrThread;
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// # let mut files: Files<F> = Files::new();
    /// # let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// # let shared = files.share();
    /// let mut me = QsbrThread::online().unwrap();
    /// let f = shared.fdget_qsbr(&me, fd).unwrap();
    /// me.quiescent_state(); // error: `me` is borrowed by `f`
    /// drop(f);
    /// ```
    #[cfg(any(feature = "std", loom))]
    #[inline(always)]
    pub fn fdget_qsbr<'a>(
        &'a self,
        reader: &'a crate::rcu::QsbrThread,
        fd: u32,
    ) -> Option<QsbrFd<'a, F>> {
        // SAFETY: `reader` is online for `'a`.
        match unsafe { self.qsbr_look(reader, fd) } {
            // SAFETY: as `QsbrLook` says, for `'a`.
            QsbrLook::Lent(p) => Some(unsafe { QsbrFd::lent(p) }),
            // SAFETY: as above.
            QsbrLook::Light(p) => p.map(|p| unsafe { QsbrFd::light(p) }),
            QsbrLook::Slow(arr) => self.fdget_qsbr_slow(fd, arr),
        }
    }

    /// The fast path of [`Files::fdget_qsbr`] and [`Files::with_fdget_qsbr`]: one read of
    /// the array and of the slot.
    ///
    /// # Safety
    ///
    /// `reader` is this thread's, online for as long as the result's files are used.
    #[cfg(any(feature = "std", loom))]
    #[inline(always)]
    unsafe fn qsbr_look(&self, reader: &crate::rcu::QsbrThread, fd: u32) -> QsbrLook<F, P> {
        let _ = reader;
        let hot = &self.fs().hot;
        // ORDERING: Acquire; as in `fget_inner`.
        let arr_ptr = hot.fdt.load(Ordering::Acquire);
        // SAFETY: the thread is online (`reader` exists): an array retired since its last
        // quiescent state is not freed before the next, as for a section.
        let arr = unsafe { TableRef::new(arr_ptr) };
        let p = match arr.slot(fd as usize) {
            // ORDERING: Acquire; as in `fget_inner`.
            Some(slot) => slot.load(Ordering::Acquire),
            None => core::ptr::null_mut(),
        };
        if let Some(p) = NonNull::new(p)
            // SAFETY: read from a slot while online, which keeps the header alive.
            && unsafe { p.as_ref() }.lendable()
        {
            return QsbrLook::Lent(p);
        }
        if !self.light.get().is_null() {
            return QsbrLook::Light(NonNull::new(p));
        }
        QsbrLook::Slow(arr_ptr)
    }

    /// [`fdget_qsbr`](Files::fdget_qsbr) around `f`, as [`with_fdget_rcu`](Files::with_fdget_rcu)
    /// is `fdget_rcu`'s: the lent file, the light borrow and the rest reach `f` on paths of
    /// their own, so on the first two nothing is tested to end the borrow and `f`'s own tests
    /// of it ([`QsbrFd::is_rcu`], [`QsbrFd::shared_file`]) fold away. For a syscall layer's
    /// hot paths.
    ///
    /// ```
    /// use fdtable::rcu::QsbrThread;
    /// # use fdtable::{Errno, Files, FileRef, FileLike};
    /// # struct F(u64); impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F(7)), 0, 1024).unwrap();
    /// let shared = files.share();
    /// let me = QsbrThread::online().unwrap();
    /// let read = |fd| shared.with_fdget_qsbr(&me, fd, |f| f.map(|f| f.0).ok_or(Errno::EBADF));
    /// assert_eq!(read(fd), Ok(7));
    /// assert_eq!(read(fd + 1), Err(Errno::EBADF));
    /// ```
    #[cfg(any(feature = "std", loom))]
    #[inline(always)]
    pub fn with_fdget_qsbr<'a, R>(
        &'a self,
        reader: &'a crate::rcu::QsbrThread,
        fd: u32,
        f: impl FnOnce(Option<&QsbrFd<'a, F>>) -> R,
    ) -> R {
        // SAFETY: `reader` is online for `'a`.
        match unsafe { self.qsbr_look(reader, fd) } {
            // SAFETY: as `QsbrLook` says, for `'a`.
            QsbrLook::Lent(p) => f(Some(&unsafe { QsbrFd::lent(p) })),
            // SAFETY: as above.
            QsbrLook::Light(Some(p)) => f(Some(&unsafe { QsbrFd::light(p) })),
            QsbrLook::Light(None) => f(None),
            QsbrLook::Slow(arr) => {
                let b = self.fdget_qsbr_slow(fd, arr);
                f(b.as_ref())
            }
        }
    }

    /// [`Files::fdget_qsbr`] on a shared table (or one this handle has not yet seen alone)
    /// when the fast path found no lendable file: an empty slot, perhaps of a retired array;
    /// a file not lendable yet (a counted reference, and perhaps the file made lendable).
    #[cfg(any(feature = "std", loom))]
    #[cold]
    #[inline(never)]
    fn fdget_qsbr_slow(
        &self,
        fd: u32,
        mut seen: *mut crate::fdtable::FdTable<F, P>,
    ) -> Option<QsbrFd<'_, F>> {
        let hot = &self.fs().hot;
        // ORDERING: Acquire; as in `fdget_slow`.
        if hot.count.load(Ordering::Acquire) == 1 {
            // ORDERING: Relaxed; as in `become_light`.
            self.light.set(hot.fdt.load(Ordering::Relaxed));
            // SAFETY: as in `fdget`: the slot holds the file for the borrow of `self`.
            return self
                .light_lookup(fd)
                .flatten()
                .map(|p| unsafe { QsbrFd::light(p) });
        }
        loop {
            // ORDERING: Acquire; as in `fget_inner`.
            let arr_ptr = hot.fdt.load(Ordering::Acquire);
            if arr_ptr != seen {
                // The fast path read an array that growth has retired since (and perhaps
                // an empty slot of it, cleared by the growth): this reads the new one.
                crate::events::note(crate::events::Event::RetiredSlotCleared);
                seen = arr_ptr;
            }
            // SAFETY: the caller is online (see `fdget_qsbr`).
            let arr = unsafe { TableRef::new(arr_ptr) };
            let slot = arr.slot(fd as usize)?;
            // ORDERING: Acquire; as in `fget_inner`.
            let Some(p) = NonNull::new(slot.load(Ordering::Acquire)) else {
                // ORDERING: Acquire; as in `fget_empty`: an empty slot of a retired array.
                if hot.fdt.load(Ordering::Acquire) != arr_ptr {
                    continue;
                }
                return None;
            };
            // SAFETY: read from a slot while online, which keeps the header alive.
            if unsafe { p.as_ref() }.lendable() {
                // SAFETY: as in `fdget_qsbr`.
                return Some(unsafe { QsbrFd::lent(p) });
            }
            // SAFETY: as above.
            let got = unsafe { FileInner::try_get_rcu(p.as_ptr()) };
            // ORDERING: Acquire; as in `fget_inner`.
            if !got || slot.load(Ordering::Acquire) != p.as_ptr() {
                if got {
                    crate::events::note(crate::events::Event::SlotChanged);
                }
                // SAFETY: if `got`, `try_get_rcu` took a reference, dropped here (a release
                // of a lent file on this online thread waits for its quiescent state).
                drop(got.then(|| unsafe { FileRef::from_inner(p) }));
                continue;
            }
            // SAFETY: `try_get_rcu` took a reference, which the result takes over.
            let file = unsafe { FileRef::from_inner(p) };
            if file.inner().lend_counting() {
                // SAFETY: `p` was read from `slot` while online, which counts as a borrow
                // section for the release's wait (it waits for every online thread).
                unsafe { Self::count_lookup::<false>(&file, p, slot) };
            }
            return Some(QsbrFd::counted(file));
        }
    }

    /// [`Files::fdget_rcu_in`], out of line: for the rare paths of [`Files::with_fdget_rcu`].
    #[cold]
    #[inline(never)]
    fn fdget_rcu_in_cold(&self, fd: u32, token: rcu::BorrowToken) -> Option<RcuFd<'_, F>> {
        self.fdget_rcu_in(fd, token)
    }

    /// The lookup of [`Files::fdget_rcu`] on a shared table, inside the borrow section
    /// `token`, which the result ends (or which is ended here).
    #[inline(always)]
    fn fdget_rcu_in(&self, fd: u32, token: rcu::BorrowToken) -> Option<RcuFd<'_, F>> {
        let hot = &self.fs().hot;
        // ORDERING: Acquire; as in `fget_inner`.
        let arr_ptr = hot.fdt.load(Ordering::Acquire);
        // SAFETY: as in `fget_inner`: we are in a section.
        let arr = unsafe { TableRef::new(arr_ptr) };
        let Some(slot) = arr.slot(fd as usize) else {
            rcu::borrow_end(token);
            return None;
        };
        // ORDERING: Acquire; as in `fget_inner`.
        let Some(p) = NonNull::new(slot.load(Ordering::Acquire)) else {
            rcu::borrow_end(token);
            // ORDERING: Acquire; as in `fget_empty`: an empty slot of a retired array.
            if hot.fdt.load(Ordering::Acquire) != arr_ptr {
                return self.fdget_rcu_retry(fd);
            }
            return None;
        };
        // SAFETY: read from a slot inside the section, which keeps the header alive.
        if unsafe { p.as_ref() }.lendable() {
            // SAFETY: read from a slot inside the section, which the result ends; the file is
            // lendable, so its release waits for the section.
            return Some(unsafe { RcuFd::in_section(p, token) });
        }
        // SAFETY: as above.
        unsafe { self.fdget_rcu_unlent::<false>(fd, slot, p, token) }
    }

    /// `fdget_rcu` on a shared table found a file that is not lendable (yet): takes a
    /// counted reference, as [`Files::fget`] does, and makes the file lendable for the next
    /// lookups if it is due (see [`LEND_AFTER`](crate::LEND_AFTER)) and
    /// [`may_lend`](FileLike::may_lend) says so. Out of line, so that the lent path around
    /// it keeps its registers, and small, so that the call saves few of them: for a file that
    /// is never lent (a pipe, a socket) this is the common path; its rare parts are out of
    /// line again.
    ///
    /// # Safety
    ///
    /// `p` was read from `slot` inside the borrow section `token`, still open.
    #[inline(never)]
    unsafe fn fdget_rcu_unlent<const NONBLOCKING: bool>(
        &self,
        fd: u32,
        slot: &crate::fdtable::Slot<F>,
        p: NonNull<FileInner<F>>,
        token: rcu::BorrowToken,
    ) -> Option<RcuFd<'_, F>> {
        // SAFETY: per the contract (a borrow section is a read-side section).
        let got = unsafe { FileInner::try_get_rcu(p.as_ptr()) };
        // ORDERING: Acquire; as in `fget_inner`.
        if !got || slot.load(Ordering::Acquire) != p.as_ptr() {
            return self.fdget_rcu_unlent_raced(fd, p, got, token);
        }
        // SAFETY: `try_get_rcu` took a reference, which the result takes over.
        let file = unsafe { FileRef::from_inner(p) };
        let counting = if NONBLOCKING {
            file.inner().lend_counting_nonblocking()
        } else {
            file.inner().lend_counting()
        };
        if counting {
            // SAFETY: `p` was read from `slot` in the section, still open.
            unsafe { Self::count_lookup::<NONBLOCKING>(&file, p, slot) };
        }
        rcu::borrow_end(token);
        Some(RcuFd::counted(file))
    }

    /// [`Files::fdget_rcu_unlent`] lost a race (the file was dying, or its slot changed
    /// under the lookup): drops what it took and looks up again the counted way.
    #[cold]
    #[inline(never)]
    fn fdget_rcu_unlent_raced(
        &self,
        fd: u32,
        p: NonNull<FileInner<F>>,
        got: bool,
        token: rcu::BorrowToken,
    ) -> Option<RcuFd<'_, F>> {
        rcu::borrow_end(token);
        // SAFETY: if `got`, `try_get_rcu` took a reference, dropped here, outside the
        // section (it may release the file).
        drop(got.then(|| unsafe { FileRef::from_inner(p) }));
        self.fget(fd).map(RcuFd::counted)
    }

    /// One of a file's first lookups ([`FileInner::lend_counting`]): counts it, and makes
    /// the file lendable if this is the one that is due and the file may be lent.
    ///
    /// # Safety
    ///
    /// `p` (the file of `file`) was read from `slot` inside a borrow section, still open.
    #[cold]
    #[inline(never)]
    unsafe fn count_lookup<const NONBLOCKING: bool>(
        file: &FileRef<F>,
        p: NonNull<FileInner<F>>,
        slot: &crate::fdtable::Slot<F>,
    ) {
        if !NONBLOCKING {
            if file.inner().lend_due() && file.may_lend() {
                // SAFETY: per the contract.
                unsafe { FileInner::make_lendable(p, slot, true) };
            }
            return;
        }
        if file.inner().lend_due_nonblocking() {
            // A file that may be lent to every borrow is; else perhaps to these only.
            let all = file.may_lend();
            if all || file.may_lend_nonblocking() {
                // SAFETY: per the contract.
                unsafe { FileInner::make_lendable(p, slot, all) };
            }
        }
    }

    /// `fdget_rcu` read an empty slot of an array that growth retired (and cleared): again,
    /// in the new one (out of line, so that `fdget_rcu` is not recursive and stays inlined).
    #[cold]
    #[inline(never)]
    fn fdget_rcu_retry(&self, fd: u32) -> Option<RcuFd<'_, F>> {
        crate::events::note(crate::events::Event::RetiredSlotCleared);
        self.fdget_rcu(fd)
    }

    /// `fdget_rcu` when this thread cannot begin a borrow section on the fast path (it is
    /// inside another borrow, or has no RCU record yet): becomes light if the handle is alone
    /// now; else begins the section the slow way (nested, or registering the thread), or, if
    /// the thread can have no record, lends a counted reference.
    #[cold]
    #[inline(never)]
    fn fdget_rcu_slow(&self, fd: u32) -> Option<RcuFd<'_, F>> {
        // ORDERING: Acquire; as in `fdget_slow`.
        if self.fs().hot.count.load(Ordering::Acquire) == 1 {
            // ORDERING: Relaxed; as in `become_light`.
            self.light.set(self.fs().hot.fdt.load(Ordering::Relaxed));
            return self.fdget_rcu(fd);
        }
        match rcu::borrow_begin_slow() {
            Some(token) => self.fdget_rcu_in(fd, token),
            None => self.fget(fd).map(RcuFd::counted),
        }
    }
}

/// What the fast path of a QSBR reader's lookup found (`Files::qsbr_look`).
#[cfg(any(feature = "std", loom))]
enum QsbrLook<F: ?Sized, P> {
    /// A lendable file, read while online: its release waits for the reader's next
    /// quiescent state.
    Lent(NonNull<FileInner<F>>),
    /// The handle is the table's only user (`light` is the array read): the slot's file,
    /// held by the slot for the borrow of the handle, or none.
    Light(Option<NonNull<FileInner<F>>>),
    /// Anything else: the slow path, with the array the fast one read.
    Slow(*mut crate::fdtable::FdTable<F, P>),
}

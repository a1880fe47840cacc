//! `files_struct` and the per-task handle [`Files`]: allocation, install, close, the dup
//! family, close-on-exec, `close_range`, fork/share/unshare/exec and teardown
//! (fs/file.c, fs/fcntl.c, fs/open.c, kernel/fork.c, fs/exec.c).
//!
//! # Invariants
//!
//! - A slot is *free* (open bit 0, null), *reserved* (open bit 1, null) or *installed*
//!   (open bit 1, non-null). An installed slot holds one counted reference on its file.
//! - `full_fds_bits` bit `w` is set exactly when `open_fds` word `w` is all ones.
//! - `Inner::max_fds` equals the current array's `max_fds`; both change only together, under
//!   the lock (or by the table's only user).
//! - `count` is the number of live [`Files`] handles. It goes up only through
//!   [`Files::share`], which takes `&mut self`; so a handle that observes `count == 1` (with
//!   Acquire) stays the only user until it shares. Such a handle works without the lock and
//!   caches the array pointer in `light` (see [`crate::docs::locking`]).

use crate::bitmap::{self, BITS_PER_LONG, Long};
use crate::errno::Errno;
use crate::fd::Fd;
use crate::fdarray::{ArrayRef, FdArray};
use crate::file_ref::{FileInner, FileRef};
use crate::flags::{CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE, O_CLOEXEC};
use crate::limits::nr_open;
use crate::reclaim;
use crate::reservation::FdReservation;
use crate::sync::{AtomicPtr, AtomicUsize, Lock, Ordering, UnsafeCell, fence};
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

/// What a table holds: an open file description. The table calls `flush` on every close of a
/// descriptor that refers to it (`filp_flush`); the file's release is its `Drop`, run when the
/// last [`FileRef`] goes.
pub trait FileLike: Send + Sync {
    /// `->flush`, called on every close of an fd referring to this file (close, dup2's
    /// displaced file, close_range, exec, teardown). `close(2)` returns its error; the fd is
    /// gone either way.
    fn flush(&self) -> Result<(), Errno> {
        Ok(())
    }
}

/// `NR_OPEN_DEFAULT`: the size of a new table. Tiny under loom so models reach growth.
pub const NR_OPEN_DEFAULT: usize = if cfg!(loom) { 2 } else { BITS_PER_LONG };

/// The granularity of table sizes after a fork copy (`ALIGN(.., BITS_PER_LONG)`).
const FD_ALIGN: usize = NR_OPEN_DEFAULT;

/// The state of one descriptor number, for introspection and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FdState {
    /// Not in use.
    Free,
    /// Allocated but not yet installed (an `open` in progress).
    Reserved,
    /// Refers to a file.
    Installed {
        /// The close-on-exec bit.
        cloexec: bool,
    },
}

/// The lock-protected part of the table: the kernel's bitmaps and `next_fd`.
struct Inner {
    next_fd: usize,
    max_fds: usize,
    open_fds: Vec<Long>,
    close_on_exec: Vec<Long>,
    full_fds_bits: Vec<Long>,
}

impl Inner {
    fn with_max_fds(max_fds: usize) -> Result<Self, Errno> {
        let words = bitmap::words_for(max_fds, BITS_PER_LONG);
        Ok(Inner {
            next_fd: 0,
            max_fds,
            open_fds: zeroed_words(words)?,
            close_on_exec: zeroed_words(words)?,
            full_fds_bits: zeroed_words(bitmap::words_for(words, BITS_PER_LONG))?,
        })
    }

    /// Grows the bitmaps to cover `max_fds` bits (never shrinks).
    fn grow(&mut self, max_fds: usize) -> Result<(), Errno> {
        let words = bitmap::words_for(max_fds, BITS_PER_LONG);
        let full_words = bitmap::words_for(words, BITS_PER_LONG);
        for (v, n) in [
            (&mut self.open_fds, words),
            (&mut self.close_on_exec, words),
            (&mut self.full_fds_bits, full_words),
        ] {
            if v.len() < n {
                v.try_reserve_exact(n - v.len())
                    .map_err(|_| Errno::ENOMEM)?;
                v.resize(n, 0);
            }
        }
        self.max_fds = max_fds;
        Ok(())
    }

    #[inline]
    fn is_open(&self, fd: usize) -> bool {
        bitmap::test_bit(&self.open_fds, fd)
    }

    /// `__set_open_fd` plus the close-on-exec write every allocation path must make.
    #[inline]
    fn set_open_fd(&mut self, fd: usize, cloexec: bool) {
        bitmap::set_bit(&mut self.open_fds, fd);
        let w = fd / BITS_PER_LONG;
        if self.open_fds[w] == !0 {
            bitmap::set_bit(&mut self.full_fds_bits, w);
        }
        self.set_cloexec(fd, cloexec);
    }

    #[inline]
    fn set_cloexec(&mut self, fd: usize, cloexec: bool) {
        if cloexec {
            bitmap::set_bit(&mut self.close_on_exec, fd);
        } else if bitmap::test_bit(&self.close_on_exec, fd) {
            bitmap::clear_bit(&mut self.close_on_exec, fd);
        }
    }

    /// `__clear_open_fd`.
    #[inline]
    fn clear_open_fd(&mut self, fd: usize) {
        bitmap::clear_bit(&mut self.open_fds, fd);
        let w = fd / BITS_PER_LONG;
        if bitmap::test_bit(&self.full_fds_bits, w) {
            bitmap::clear_bit(&mut self.full_fds_bits, w);
        }
    }

    /// `__put_unused_fd`.
    #[inline]
    fn put_unused_fd(&mut self, fd: usize) {
        self.clear_open_fd(fd);
        if fd < self.next_fd {
            self.next_fd = fd;
        }
    }
}

fn zeroed_words(n: usize) -> Result<Vec<Long>, Errno> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Errno::ENOMEM)?;
    v.resize(n, 0);
    Ok(v)
}

/// `alloc_fdtable`'s size rule: the smallest power of two holding `slots_wanted`, clamped to
/// `nr_open` rounded down to a word; `EMFILE` if that is too small.
fn table_size(slots_wanted: usize) -> Result<usize, Errno> {
    let nr = slots_wanted.max(NR_OPEN_DEFAULT).next_power_of_two();
    let cap = nr_open();
    if nr > cap {
        let nr = cap & !(BITS_PER_LONG - 1);
        if nr < slots_wanted {
            return Err(Errno::EMFILE);
        }
        return Ok(nr);
    }
    Ok(nr)
}

/// `files_struct`.
pub(crate) struct FilesStruct<F> {
    /// Read-mostly: touched by every lookup.
    hot: CachePadded<Hot<F>>,
    /// Written under the lock; on its own cache line, like the kernel's `file_lock` section.
    cold: CachePadded<Cold>,
}

struct Hot<F> {
    /// Live [`Files`] handles.
    count: AtomicUsize,
    /// The current array (`files->fdt`).
    fdt: AtomicPtr<FdArray<F>>,
}

struct Cold {
    file_lock: Lock,
    inner: UnsafeCell<Inner>,
}

/// Exclusive access to the table's mutable state: the lock is held, or the caller is the
/// table's only user.
struct Locked<'a, F> {
    fs: &'a FilesStruct<F>,
    inner: &'a mut Inner,
    /// Whether the table has one user (no lock was taken; retired arrays can be freed at once).
    exclusive: bool,
}

impl<'a, F> Locked<'a, F> {
    /// `files_fdtable(files)` under the lock.
    #[inline]
    fn fdt(&self) -> ArrayRef<'a, F> {
        // ORDERING: Relaxed; every store to `fdt` is made with exclusive access, which this
        // context also has, so program order or the lock already orders it before us.
        let p = self.fs.hot.fdt.load(Ordering::Relaxed);
        // SAFETY: the current array is only retired by growth, which needs the exclusive
        // access this context holds (and which does not use an `ArrayRef` past the swap).
        unsafe { ArrayRef::new(p) }
    }

    /// `files_lookup_fd_locked`: the file installed at `fd`, if any.
    #[inline]
    fn lookup(&self, fd: usize) -> Option<&'a FileInner<F>> {
        let slot = self.fdt().slot(fd)?;
        // ORDERING: Relaxed; slot stores are made with exclusive access, ordered before us by
        // the lock or by program order.
        let p = slot.load(Ordering::Relaxed);
        // SAFETY: an installed slot holds a reference, which cannot be dropped while we hold
        // exclusive access.
        NonNull::new(p).map(|p| unsafe { &*p.as_ptr() })
    }

    /// Publishes `file` (whose reference the slot takes over) at `fd`.
    #[inline]
    fn publish(&self, fd: usize, file: NonNull<FileInner<F>>) {
        // SAFETY: `file` carries a reference the caller hands to the slot.
        unsafe { file.as_ref() }.mark_rcu_visible();
        let slot = self.fdt().slot(fd).expect("publish within max_fds");
        // ORDERING: Release; pairs with the Acquire slot loads in `Files::fget` and
        // `fget_rcu`: a reader that sees the pointer sees the initialised file.
        slot.store(file.as_ptr(), Ordering::Release);
    }

    /// `alloc_fd(start, end, flags)`: the lowest free fd `>= start` and `< end`, marked open
    /// (reserved) with its close-on-exec bit written.
    #[inline]
    fn alloc_fd(&mut self, start: usize, end: usize, cloexec: bool) -> Result<usize, Errno> {
        let mut fd = start.max(self.inner.next_fd);
        if fd < self.inner.max_fds {
            fd = bitmap::find_next_fd(
                &self.inner.open_fds,
                &self.inner.full_fds_bits,
                self.inner.max_fds,
                fd,
            );
        }
        // For tables shared between processes this limits their total.
        if fd >= end {
            return Err(Errno::EMFILE);
        }
        self.expand_files(fd)?;
        if start <= self.inner.next_fd {
            self.inner.next_fd = fd + 1;
        }
        self.inner.set_open_fd(fd, cloexec);
        debug_assert!(self.lookup(fd).is_none(), "alloc_fd: slot {fd} not empty");
        Ok(fd)
    }

    /// `expand_files`: makes room for `nr`. `EMFILE` at or past `nr_open`, `ENOMEM` if the
    /// allocator refuses.
    #[inline]
    fn expand_files(&mut self, nr: usize) -> Result<(), Errno> {
        if nr < self.inner.max_fds {
            return Ok(());
        }
        if nr >= nr_open() {
            return Err(Errno::EMFILE);
        }
        self.expand_fdtable(nr)
    }

    /// `expand_fdtable`: copy into a larger array, publish it, retire the old one.
    #[cold]
    fn expand_fdtable(&mut self, nr: usize) -> Result<(), Errno> {
        let new_max = table_size(nr + 1)?;
        if new_max <= nr {
            return Err(Errno::EMFILE);
        }
        let new = FdArray::<F>::alloc(new_max)?;
        if let Err(e) = self.inner.grow(new_max) {
            // SAFETY: allocated above and never published.
            unsafe { FdArray::free(new.as_ptr()) };
            return Err(e);
        }
        let old = self.fdt();
        // SAFETY: `new` is not yet published; we are its only user.
        let new_ref = unsafe { ArrayRef::new(new.as_ptr()) };
        for fd in 0..old.max_fds() {
            // SAFETY: `fd < old.max_fds() <= new_max`.
            let (o, n) = unsafe { (old.slot_unchecked(fd), new_ref.slot_unchecked(fd)) };
            // ORDERING: Relaxed both: we have exclusive access to the old slots, and the new
            // array is published by the Release store below.
            n.store(o.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        let old_ptr = old.as_ptr();
        // ORDERING: Release; pairs with the Acquire loads of `fdt` in `Files::fget` and in the
        // fork path of other handles: publishes the copied slots together with `max_fds`.
        self.fs.hot.fdt.store(new.as_ptr(), Ordering::Release);
        if self.exclusive {
            // SAFETY: the table has one user, this thread, which holds no reference into the
            // old array; no lock-free reader of another handle can exist.
            unsafe { FdArray::free(old_ptr) };
        } else {
            let guard = reclaim::pin();
            // SAFETY: unpublished above; readers that pin from now on load the new array, and
            // `FdArray::free` frees once.
            unsafe { guard.defer_free(old_ptr, |p| FdArray::free(p)) };
        }
        Ok(())
    }

    /// `fd_install` into a reserved slot. `EBADF` if `fd` is not reserved.
    #[inline]
    fn install_reserved(&mut self, fd: usize, file: NonNull<FileInner<F>>) -> Result<(), Errno> {
        if fd >= self.inner.max_fds || !self.inner.is_open(fd) || self.lookup(fd).is_some() {
            return Err(Errno::EBADF);
        }
        self.publish(fd, file);
        Ok(())
    }

    /// `file_close_fd_locked`: empties an installed slot and releases the fd.
    #[inline]
    fn file_close_fd_locked(&mut self, fd: usize) -> Option<FileRef<F>> {
        let slot = self.fdt().slot(fd)?;
        // ORDERING: Relaxed; see `lookup`.
        let p = NonNull::new(slot.load(Ordering::Relaxed))?;
        // ORDERING: Relaxed; a reader that still sees the old pointer takes a reference and
        // re-checks (see `Files::fget`); nothing is published by emptying a slot.
        slot.store(ptr::null_mut(), Ordering::Relaxed);
        self.inner.put_unused_fd(fd);
        // SAFETY: the slot's reference moves to the caller.
        Some(unsafe { FileRef::from_inner(p) })
    }

    /// `do_dup2`: puts `file` at `fd` (which `expand_files` made room for), returning the
    /// displaced file. `EBUSY` if `fd` is reserved.
    fn do_dup2(
        &mut self,
        file: &FileInner<F>,
        fd: usize,
        cloexec: bool,
    ) -> Result<Option<FileRef<F>>, Errno> {
        let slot = self.fdt().slot(fd).expect("expand_files made room");
        // ORDERING: Relaxed; see `lookup`.
        let tofree = NonNull::new(slot.load(Ordering::Relaxed));
        if tofree.is_none() && self.inner.is_open(fd) {
            return Err(Errno::EBUSY);
        }
        let new = file.get();
        self.publish(fd, new);
        self.inner.set_open_fd(fd, cloexec);
        // SAFETY: the slot's reference on the displaced file moves to the caller.
        Ok(tofree.map(|p| unsafe { FileRef::from_inner(p) }))
    }

    /// Allocates `>= start` and installs a new reference on `file` there (one lock hold:
    /// `alloc_fd` + `fd_install`).
    #[inline]
    fn alloc_and_install(
        &mut self,
        file: &FileInner<F>,
        start: usize,
        end: usize,
        cloexec: bool,
    ) -> Result<usize, Errno> {
        let fd = self.alloc_fd(start, end, cloexec)?;
        self.publish(fd, file.get());
        Ok(fd)
    }

    fn state(&self, fd: usize) -> FdState {
        if fd >= self.inner.max_fds || !self.inner.is_open(fd) {
            return FdState::Free;
        }
        if self.lookup(fd).is_none() {
            return FdState::Reserved;
        }
        FdState::Installed {
            cloexec: bitmap::test_bit(&self.inner.close_on_exec, fd),
        }
    }

    /// `sane_fdtable_size`, with close_range's punch hole.
    fn sane_fdtable_size(&self, punch_hole: Option<(usize, usize)>) -> usize {
        let max = self.inner.max_fds;
        let mut last = bitmap::find_last_bit(&self.inner.open_fds, max);
        if last == max {
            return NR_OPEN_DEFAULT;
        }
        if let Some((from, to)) = punch_hole
            && to >= last
            && from <= last
        {
            last = bitmap::find_last_bit(&self.inner.open_fds, from);
            if last == from {
                return NR_OPEN_DEFAULT;
            }
        }
        (last + 1).next_multiple_of(FD_ALIGN)
    }

    /// `dup_fd`: a private copy for a child (fork) or for unshare. Reserved slots are not
    /// copied: an open in progress in the parent belongs to the parent.
    fn dup_fd(&self, punch_hole: Option<(usize, usize)>) -> Result<Box<FilesStruct<F>>, Errno> {
        let open_files = self.sane_fdtable_size(punch_hole).min(self.inner.max_fds);
        let new_max = if open_files <= NR_OPEN_DEFAULT {
            NR_OPEN_DEFAULT
        } else {
            let n = table_size(open_files)?;
            if n < open_files {
                return Err(Errno::EMFILE);
            }
            n
        };
        let arr = FdArray::<F>::alloc(new_max)?;
        let mut inner = match Inner::with_max_fds(new_max) {
            Ok(i) => i,
            Err(e) => {
                // SAFETY: allocated above, never published.
                unsafe { FdArray::free(arr.as_ptr()) };
                return Err(e);
            }
        };
        copy_bits(&mut inner.open_fds, &self.inner.open_fds, open_files);
        copy_bits(
            &mut inner.close_on_exec,
            &self.inner.close_on_exec,
            open_files,
        );
        let old = self.fdt();
        // SAFETY: `arr` is unpublished; we are its only user.
        let new = unsafe { ArrayRef::new(arr.as_ptr()) };
        for fd in 0..open_files {
            // SAFETY: `fd < open_files <= min(old.max_fds, new_max)`.
            let (o, n) = unsafe { (old.slot_unchecked(fd), new.slot_unchecked(fd)) };
            // ORDERING: Relaxed; see `lookup`.
            match NonNull::new(o.load(Ordering::Relaxed)) {
                Some(p) => {
                    // SAFETY: an installed slot's file is alive while we hold the lock.
                    let p = unsafe { p.as_ref() }.get();
                    // ORDERING: Relaxed; the new table is published to its user by handing
                    // over the `Files` value, which synchronises.
                    n.store(p.as_ptr(), Ordering::Relaxed);
                }
                None => bitmap::clear_bit(&mut inner.open_fds, fd),
            }
        }
        for w in 0..inner.open_fds.len() {
            if inner.open_fds[w] == !0 {
                bitmap::set_bit(&mut inner.full_fds_bits, w);
            }
        }
        Ok(Box::new(FilesStruct::from_parts(arr, inner)))
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

impl<F> FilesStruct<F> {
    fn from_parts(arr: NonNull<FdArray<F>>, inner: Inner) -> Self {
        FilesStruct {
            hot: CachePadded::new(Hot {
                count: AtomicUsize::new(1),
                fdt: AtomicPtr::new(arr.as_ptr()),
            }),
            cold: CachePadded::new(Cold {
                file_lock: Lock::default(),
                inner: UnsafeCell::new(inner),
            }),
        }
    }

    fn new() -> Result<Self, Errno> {
        let arr = FdArray::alloc(NR_OPEN_DEFAULT)?;
        match Inner::with_max_fds(NR_OPEN_DEFAULT) {
            Ok(inner) => Ok(Self::from_parts(arr, inner)),
            Err(e) => {
                // SAFETY: allocated above, never published.
                unsafe { FdArray::free(arr.as_ptr()) };
                Err(e)
            }
        }
    }
}

/// A task's handle on a descriptor table: the kernel's `current->files`.
///
/// Each thread (task) that uses a table holds its own handle; [`Files::share`] makes another
/// (`clone(CLONE_FILES)`), [`Files::fork`] makes a copy. A handle is `Send` but not `Sync`:
/// one thread uses it at a time, which is what lets a handle that is its table's only user skip
/// the lock and every atomic read-modify-write on lookups (see [`Files::fdget`]).
///
/// Descriptor arguments are `u32`, as the kernel's `unsigned int fd`: a negative C `int`
/// converts to a huge number and gets `EBADF`. `nofile` arguments are the caller's
/// `RLIMIT_NOFILE`: the limit belongs to the process, not to the table, so two processes
/// sharing one table may pass different ones.
pub struct Files<F: FileLike> {
    fs: NonNull<FilesStruct<F>>,
    /// The current array when this handle is known to be the table's only user; null
    /// otherwise. Only this handle can change the array while that holds.
    light: Cell<*const FdArray<F>>,
    _marker: PhantomData<(FilesStruct<F>, Cell<()>)>,
}

// SAFETY: a handle may move to another thread; the table it points to is shared state guarded
// by the lock and atomics, and files are `Send + Sync` by `FileLike`.
unsafe impl<F: FileLike> Send for Files<F> {}

impl<F: FileLike> Default for Files<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: FileLike> Files<F> {
    /// An empty table of `NR_OPEN_DEFAULT` (64) slots, with no descriptors open.
    pub fn new() -> Self {
        Self::try_new().expect("allocating a 64-slot table")
    }

    /// As [`Files::new`], reporting `ENOMEM` instead of aborting.
    pub fn try_new() -> Result<Self, Errno> {
        Ok(Self::from_box(Box::new(FilesStruct::new()?)))
    }

    fn from_box(fs: Box<FilesStruct<F>>) -> Self {
        let fs = NonNull::from(Box::leak(fs));
        // SAFETY: just created: count 1, this handle is the only user.
        // ORDERING: Relaxed; the table was created by this thread and no other can see it yet.
        let arr = unsafe { fs.as_ref() }.hot.fdt.load(Ordering::Relaxed);
        Files {
            fs,
            light: Cell::new(arr),
            _marker: PhantomData,
        }
    }

    #[inline(always)]
    fn fs(&self) -> &FilesStruct<F> {
        // SAFETY: the handle holds one of the table's `count` references.
        unsafe { self.fs.as_ref() }
    }

    /// Runs `f` with exclusive access to the table's mutable state: without the lock if this
    /// handle is the table's only user, under `file_lock` otherwise.
    #[inline]
    fn locked<R>(&self, f: impl FnOnce(&mut Locked<'_, F>) -> R) -> R {
        let fs = self.fs();
        // ORDERING: Acquire; pairs with the Release decrement in `Drop for Files`: if the other
        // handles are gone, everything they did to the table is visible before we touch it
        // without the lock.
        let exclusive = !self.light.get().is_null() || fs.hot.count.load(Ordering::Acquire) == 1;
        // `f` may grow the table and free the cached array; forget it until `f` is done.
        self.light.set(ptr::null());
        let guard = if exclusive {
            None
        } else {
            Some(fs.cold.file_lock.lock())
        };
        let r = fs.cold.inner.with_mut(|inner| {
            let mut l = Locked {
                fs,
                // SAFETY: exclusive access: the lock is held, or this handle is the table's
                // only user and `Files` is not `Sync`.
                inner: unsafe { &mut *inner },
                exclusive,
            };
            f(&mut l)
        });
        drop(guard);
        if exclusive {
            // ORDERING: Relaxed; we are the only writer of `fdt` (program order).
            self.light.set(fs.hot.fdt.load(Ordering::Relaxed));
        }
        r
    }

    /// `fdget` — the light lookup (seed 1, `fget_light`).
    ///
    /// If this handle is the table's only user, the result *borrows* the file: no lock, no
    /// atomic read-modify-write, no reference count. Otherwise it takes a reference
    /// (`FDPUT_FPUT`) through the lock-free [`Files::fget`]. Either way, `Fd` derefs to the
    /// file and drops what it took.
    ///
    /// The borrow ties the result to `&self`: it cannot outlive the call that made it, and
    /// while it lives this handle cannot close that fd or share the table — every operation
    /// that can remove a file from a slot ([`close_fd`](Files::close_fd), `dup2`, `dup3`,
    /// `close_range`, `exec`, `unshare`) or add a sharer ([`share`](Files::share)) takes
    /// `&mut self`:
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
        let arr = self.light.get();
        if !arr.is_null() {
            // SAFETY: `light` is non-null only while this handle is the table's only user, and
            // then it is the current array, which only this handle (not borrowed mutably now)
            // can retire.
            let arr = unsafe { ArrayRef::new(arr) };
            let slot = arr.slot(fd as usize)?;
            // ORDERING: Relaxed; with one user, every slot store was made by this thread or
            // ordered before us by the Acquire that established `light`.
            let p = NonNull::new(slot.load(Ordering::Relaxed))?;
            // SAFETY: the slot's reference keeps the file alive for as long as the slot holds
            // it, which is at least the borrow of `self` (see above).
            return Some(unsafe { Fd::borrowed(p) });
        }
        self.fdget_slow(fd)
    }

    /// `fdget` when this handle has not (yet) seen itself alone: the table may be shared.
    /// Kept out of line so the light path in [`Files::fdget`] stays a handful of instructions
    /// wherever it is inlined.
    #[inline(never)]
    fn fdget_slow(&self, fd: u32) -> Option<Fd<'_, F>> {
        // ORDERING: Acquire; pairs with the Release decrement in `Drop for Files`.
        if self.fs().hot.count.load(Ordering::Acquire) == 1 {
            return self.become_light(fd);
        }
        // SAFETY: `fget` returns a counted reference, which `Fd::owned` takes over.
        self.fget(fd)
            .map(|f| unsafe { Fd::owned(FileRef::into_inner(f)) })
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
    /// (seed 3, `__fget_files_rcu`).
    ///
    /// Safe against every writer racing with it:
    ///
    /// 1. *The file's count already reached zero* (a close dropped the last reference after we
    ///    loaded the pointer): the increment lands in the dead zone and fails; retry, and the
    ///    slot reads as empty or as a new file.
    /// 2. *The slot or the table changed* (close, dup2 replacing the file, growth to a new
    ///    array) after we loaded it: the re-check after the increment sees it; drop the
    ///    reference (which may release the file, here) and retry.
    ///
    /// So the returned file was installed at `fd` in the current array at some instant after
    /// the reference was taken. Memory is never recycled under the reader: arrays and files are
    /// freed after an epoch grace period.
    #[inline]
    pub fn fget(&self, fd: u32) -> Option<FileRef<F>> {
        let fd = fd as usize;
        let fs = self.fs();
        let guard = reclaim::pin();
        loop {
            // ORDERING: Acquire; pairs with the Release store in `expand_fdtable`: the array's
            // slots and `max_fds` are those that were published with it.
            let arr_ptr = fs.hot.fdt.load(Ordering::Acquire);
            // SAFETY: arrays are retired only through the epoch (or freed at once when there is
            // a single user, which then is not running this), and we are pinned.
            let arr = unsafe { ArrayRef::new(arr_ptr) };
            let slot = arr.slot(fd)?;
            // ORDERING: Acquire; pairs with the Release store in `Locked::publish`: the file is
            // initialised before we touch it.
            let p = NonNull::new(slot.load(Ordering::Acquire))?;
            // SAFETY: `p` was read from a slot while pinned; its memory outlives the guard.
            if !unsafe { FileInner::try_get_rcu(p.as_ptr(), &guard) } {
                // (1) the count already reached zero.
                continue;
            }
            // SAFETY: `try_get_rcu` took a reference for us.
            let file = unsafe { FileRef::from_inner(p) };
            // ORDERING: Acquire both; ordered after the increment (which is Acquire), so they
            // observe the table as it was after our reference existed.
            if fs.hot.fdt.load(Ordering::Acquire) != arr_ptr
                || slot.load(Ordering::Acquire) != p.as_ptr()
            {
                // (2) the table or the slot changed under us.
                drop(file);
                continue;
            }
            return Some(file);
        }
    }

    /// `get_unused_fd_flags`: reserves the lowest free fd below `nofile` (`EMFILE` if there is
    /// none). Dropping the reservation gives the fd back (`put_unused_fd`) at once;
    /// [`FdReservation::install`] publishes a file there (`fd_install`).
    ///
    /// This is the first step of an open (seed 2): reserve, then build the file, then
    /// install; a failed open just drops the reservation and the never-installed file, and
    /// nothing is deferred.
    pub fn get_unused_fd_flags(
        &self,
        flags: u32,
        nofile: u64,
    ) -> Result<FdReservation<'_, F>, Errno> {
        let fd = self.alloc_fd(0, nofile, flags)?;
        Ok(FdReservation::new(self, fd))
    }

    /// `alloc_fd(start, end, flags)`: reserves the lowest free fd in `start..end`, writing its
    /// close-on-exec bit from `O_CLOEXEC` in `flags`. `EMFILE` if there is none (or the table
    /// cannot grow past `nr_open`), `ENOMEM` if growth fails. The fd stays reserved until
    /// [`Files::fd_install`] or [`Files::put_unused_fd`].
    pub fn alloc_fd(&self, start: u32, end: u64, flags: u32) -> Result<u32, Errno> {
        let end = end.min(u32::MAX as u64 + 1) as usize;
        let cloexec = flags & O_CLOEXEC != 0;
        self.locked(|l| l.alloc_fd(start as usize, end, cloexec))
            .map(|fd| fd as u32)
    }

    /// `put_unused_fd`: gives back a reserved fd. Does nothing to a free or installed fd.
    pub fn put_unused_fd(&self, fd: u32) {
        let fd = fd as usize;
        self.locked(|l| {
            if fd < l.inner.max_fds && l.inner.is_open(fd) && l.lookup(fd).is_none() {
                l.inner.put_unused_fd(fd);
            }
        })
    }

    /// `fd_install`: publishes `file` at the reserved `fd`, consuming the reference.
    /// `EBADF` (and the reference is dropped) if `fd` is not reserved.
    ///
    /// # Kernel
    ///
    /// Linux installs without the lock and copes with a concurrent resize through
    /// `resize_in_progress` and `synchronize_rcu`; here a shared table installs under the lock
    /// (an unshared one takes no lock at all). See [`crate::docs::divergences`].
    pub fn fd_install(&self, fd: u32, file: FileRef<F>) -> Result<(), Errno> {
        let p = FileRef::into_inner(file);
        let r = self.locked(|l| l.install_reserved(fd as usize, p));
        if r.is_err() {
            // SAFETY: the slot did not take the reference; it is still ours to drop.
            drop(unsafe { FileRef::from_inner(p) });
        }
        r
    }

    /// Allocates the lowest free fd below `nofile` and installs `file` there in one step
    /// (`FD_ADD`). `EMFILE` if full; the reference is dropped on failure.
    pub fn install(&self, file: FileRef<F>, flags: u32, nofile: u64) -> Result<u32, Errno> {
        let r = self.get_unused_fd_flags(flags, nofile)?;
        Ok(r.install(file))
    }

    /// `close(fd)` — `file_close_fd` then `filp_close`: empties the slot and releases the fd
    /// under the lock, then, outside it, flushes the file and drops the table's reference
    /// (which releases the file if it was the last).
    ///
    /// `EBADF` if `fd` is free or reserved (a reserved fd stays reserved). Otherwise returns
    /// the file's flush result; the fd is closed either way.
    pub fn close_fd(&mut self, fd: u32) -> Result<(), Errno> {
        let file = self.file_close_fd(fd)?;
        filp_close(file)
    }

    /// `file_close_fd`: empties the slot and releases the fd, returning the table's reference
    /// to the caller without flushing it. `EBADF` if `fd` is not installed.
    pub fn file_close_fd(&mut self, fd: u32) -> Result<FileRef<F>, Errno> {
        self.locked(|l| l.file_close_fd_locked(fd as usize))
            .ok_or(Errno::EBADF)
    }

    /// `dup(fd)` — the lowest free fd below `nofile` now refers to the same file, with
    /// close-on-exec clear. `EBADF` if `fd` is not installed, `EMFILE` if the table is full.
    ///
    /// Lowest-free is only meaningful if no other thread allocates at the same time.
    ///
    /// # References
    ///
    /// [dup(2)](https://man7.org/linux/man-pages/man2/dup.2.html)
    pub fn dup(&self, fd: u32, nofile: u64) -> Result<u32, Errno> {
        let end = clamp_end(nofile);
        self.locked(|l| {
            let file = l.lookup(fd as usize).ok_or(Errno::EBADF)?;
            l.alloc_and_install(file, 0, end, false)
        })
        .map(|fd| fd as u32)
    }

    /// `fcntl(fd, F_DUPFD / F_DUPFD_CLOEXEC, from)` — like [`Files::dup`] but the lowest free
    /// fd `>= from`. `EBADF` if `fd` is not installed, `EINVAL` if `from >= nofile`, `EMFILE`
    /// if nothing is free in `from..nofile`.
    pub fn dupfd(&self, fd: u32, from: u32, cloexec: bool, nofile: u64) -> Result<u32, Errno> {
        let end = clamp_end(nofile);
        self.locked(|l| {
            let file = l.lookup(fd as usize).ok_or(Errno::EBADF)?;
            if from as u64 >= nofile {
                return Err(Errno::EINVAL);
            }
            l.alloc_and_install(file, from as usize, end, cloexec)
        })
        .map(|fd| fd as u32)
    }

    /// `dup2(oldfd, newfd)` — makes `newfd` refer to `oldfd`'s file, closing what it referred
    /// to (flushed, error ignored) and clearing its close-on-exec bit.
    ///
    /// - `oldfd == newfd`: returns it if installed, else `EBADF`; changes nothing.
    /// - `newfd >= nofile`: `EBADF` (not `EMFILE`, unlike `F_DUPFD`'s `EINVAL`).
    /// - `oldfd` not installed: `EBADF`.
    /// - `newfd` reserved by an open in progress: `EBUSY`.
    ///
    /// # References
    ///
    /// [dup2(2)](https://man7.org/linux/man-pages/man2/dup2.2.html)
    pub fn dup2(&mut self, oldfd: u32, newfd: u32, nofile: u64) -> Result<u32, Errno> {
        if oldfd == newfd {
            return match self.fget(oldfd) {
                Some(_) => Ok(oldfd),
                None => Err(Errno::EBADF),
            };
        }
        self.do_dup3(oldfd, newfd, false, nofile)
    }

    /// `dup3(oldfd, newfd, flags)` — [`Files::dup2`] with `O_CLOEXEC` as the only flag
    /// (`EINVAL` for any other), and `EINVAL` when `oldfd == newfd`.
    pub fn dup3(&mut self, oldfd: u32, newfd: u32, flags: u32, nofile: u64) -> Result<u32, Errno> {
        if flags & !O_CLOEXEC != 0 {
            return Err(Errno::EINVAL);
        }
        if oldfd == newfd {
            return Err(Errno::EINVAL);
        }
        self.do_dup3(oldfd, newfd, flags & O_CLOEXEC != 0, nofile)
    }

    fn do_dup3(
        &mut self,
        oldfd: u32,
        newfd: u32,
        cloexec: bool,
        nofile: u64,
    ) -> Result<u32, Errno> {
        if newfd as u64 >= nofile {
            return Err(Errno::EBADF);
        }
        let displaced = self.locked(|l| {
            let expanded = l.expand_files(newfd as usize);
            let file = l.lookup(oldfd as usize).ok_or(Errno::EBADF)?;
            match expanded {
                Err(Errno::EMFILE) => return Err(Errno::EBADF),
                Err(e) => return Err(e),
                Ok(()) => {}
            }
            l.do_dup2(file, newfd as usize, cloexec)
        })?;
        if let Some(f) = displaced {
            let _ = filp_close(f);
        }
        Ok(newfd)
    }

    /// `fcntl(fd, F_GETFD)`: the close-on-exec bit. `EBADF` if `fd` is not installed.
    pub fn get_close_on_exec(&self, fd: u32) -> Result<bool, Errno> {
        let fd = fd as usize;
        self.locked(|l| match l.state(fd) {
            FdState::Installed { cloexec } => Ok(cloexec),
            _ => Err(Errno::EBADF),
        })
    }

    /// `fcntl(fd, F_SETFD)` / `ioctl(FIOCLEX / FIONCLEX)`: sets or clears close-on-exec.
    /// `EBADF` if `fd` is not installed.
    pub fn set_close_on_exec(&self, fd: u32, cloexec: bool) -> Result<(), Errno> {
        let fd = fd as usize;
        self.locked(|l| {
            if l.lookup(fd).is_none() {
                return Err(Errno::EBADF);
            }
            l.inner.set_cloexec(fd, cloexec);
            Ok(())
        })
    }

    /// `fcntl(fd, F_DUPFD_QUERY, other)`: whether `other` refers to the same open file as
    /// `fd`. `EBADF` if either is not installed.
    pub fn dupfd_query(&self, fd: u32, other: u32) -> Result<bool, Errno> {
        let a = self.fget(fd).ok_or(Errno::EBADF)?;
        let b = self.fget(other).ok_or(Errno::EBADF)?;
        Ok(FileRef::ptr_eq(&a, &b))
    }

    /// `close_range(first, last, flags)`.
    ///
    /// - `EINVAL` for flags other than `CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC`, or
    ///   `first > last`. `last` is clamped to the table, so `~0U` means "to the end".
    /// - `CLOSE_RANGE_UNSHARE` on a shared table first gives this handle a private copy that
    ///   leaves out the range (everything is copied with `CLOSE_RANGE_CLOEXEC`).
    /// - `CLOSE_RANGE_CLOEXEC` sets the bit over the whole range, empty and reserved slots
    ///   included; otherwise every installed fd in the range is closed (flush errors ignored)
    ///   and reserved fds are left alone.
    ///
    /// # References
    ///
    /// [close_range(2)](https://man7.org/linux/man-pages/man2/close_range.2.html)
    pub fn close_range(&mut self, first: u32, last: u32, flags: u32) -> Result<(), Errno> {
        if flags & !(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) != 0 {
            return Err(Errno::EINVAL);
        }
        if first > last {
            return Err(Errno::EINVAL);
        }
        let (first, last) = (first as usize, last as usize);
        // The table this handle used before unsharing; put after the range is done, as the
        // kernel does.
        let mut _old = None;
        if flags & CLOSE_RANGE_UNSHARE != 0 && self.is_shared() {
            let hole = if flags & CLOSE_RANGE_CLOEXEC != 0 {
                None
            } else {
                Some((first, last))
            };
            let copy = self.locked(|l| l.dup_fd(hole))?;
            _old = Some(std::mem::replace(self, Files::from_box(copy)));
        }
        if flags & CLOSE_RANGE_CLOEXEC != 0 {
            self.locked(|l| {
                let last = last.min(l.inner.max_fds - 1);
                if first <= last {
                    bitmap::bitmap_set(&mut l.inner.close_on_exec, first, last - first + 1);
                }
            });
        } else {
            self.range_close(first, last);
        }
        Ok(())
    }

    /// `__range_close`: closes installed fds in `first..=last` one at a time, dropping the
    /// lock around each `filp_close`.
    fn range_close(&mut self, first: usize, last: usize) {
        let mut fd = first;
        let mut max = None;
        loop {
            let file = self.locked(|l| {
                let max = *max.get_or_insert_with(|| last.min(l.inner.max_fds - 1));
                loop {
                    if fd > max {
                        return None;
                    }
                    let next = bitmap::find_next_bit(&l.inner.open_fds, max + 1, fd);
                    if next > max {
                        fd = next;
                        return None;
                    }
                    fd = next + 1;
                    if let Some(f) = l.file_close_fd_locked(next) {
                        return Some(f);
                    }
                }
            });
            match file {
                Some(f) => {
                    let _ = filp_close(f);
                }
                None => return,
            }
        }
    }

    /// `fork()` without `CLONE_FILES` — `dup_fd`: a private copy with one more reference on
    /// every installed file, the close-on-exec bits, `next_fd` reset, and every *reserved* fd
    /// free (an open in progress belongs to the parent). Sized to the last open fd.
    /// `ENOMEM`, or `EMFILE` if `nr_open` was lowered below what the copy needs.
    pub fn fork(&self) -> Result<Files<F>, Errno> {
        let copy = self.locked(|l| l.dup_fd(None))?;
        Ok(Files::from_box(copy))
    }

    /// `clone(CLONE_FILES)`: another handle on the same table, for another task.
    ///
    /// Takes `&mut self` because a light [`Fd`] borrowed from this handle relies on the table
    /// having no other user.
    pub fn share(&mut self) -> Files<F> {
        self.light.set(ptr::null());
        // ORDERING: Relaxed; we hold a handle, so the table is alive, and the new handle
        // reaches its thread through whatever hands it over (which synchronises).
        self.fs().hot.count.fetch_add(1, Ordering::Relaxed);
        Files {
            fs: self.fs,
            light: Cell::new(ptr::null()),
            _marker: PhantomData,
        }
    }

    /// `unshare(CLONE_FILES)`: if the table is shared, replace this handle's table with a
    /// private copy (as [`Files::fork`] makes). `ENOMEM` / `EMFILE` as for fork.
    pub fn unshare(&mut self) -> Result<(), Errno> {
        if self.is_shared() {
            let copy = self.locked(|l| l.dup_fd(None))?;
            *self = Files::from_box(copy);
        }
        Ok(())
    }

    /// The table's part of `execve`: unshare, then close every close-on-exec fd
    /// (`do_close_on_exec`). Each close-on-exec word is snapshotted and zeroed under the lock;
    /// reserved fds lose the bit and stay reserved.
    ///
    /// The caller must drop the handles of the other threads of the exec'ing process first
    /// (`de_thread`), so that a table shared only by those threads is not copied.
    pub fn exec(&mut self) -> Result<(), Errno> {
        self.unshare()?;
        let mut word = 0usize;
        let mut pending: Long = 0;
        loop {
            let file = self.locked(|l| {
                loop {
                    if pending == 0 {
                        let words = l.inner.max_fds.div_ceil(BITS_PER_LONG);
                        while word < words && l.inner.close_on_exec[word] == 0 {
                            word += 1;
                        }
                        if word >= words {
                            return None;
                        }
                        pending = std::mem::take(&mut l.inner.close_on_exec[word]);
                        word += 1;
                    }
                    let bit = pending.trailing_zeros() as usize;
                    pending &= pending - 1;
                    let fd = (word - 1) * BITS_PER_LONG + bit;
                    if let Some(f) = l.file_close_fd_locked(fd) {
                        return Some(f);
                    }
                }
            });
            match file {
                Some(f) => {
                    let _ = filp_close(f);
                }
                None => return Ok(()),
            }
        }
    }

    /// Whether another handle shares this table (`files->count > 1`).
    pub fn is_shared(&self) -> bool {
        // ORDERING: Acquire; pairs with the Release decrement in `Drop for Files`, as in
        // `locked`.
        self.fs().hot.count.load(Ordering::Acquire) > 1
    }

    /// Whether two handles refer to the same table.
    pub fn same_table(a: &Files<F>, b: &Files<F>) -> bool {
        a.fs == b.fs
    }

    /// The table's current size (`max_fds`).
    pub fn max_fds(&self) -> usize {
        self.locked(|l| l.inner.max_fds)
    }

    /// The state of `fd`: free, reserved, or installed with its close-on-exec bit.
    pub fn fd_state(&self, fd: u32) -> FdState {
        self.locked(|l| l.state(fd as usize))
    }

    /// Every installed fd in ascending order, with its close-on-exec bit and a reference to
    /// its file (taken under the lock, handed out after it).
    pub fn snapshot(&self) -> Vec<(u32, bool, FileRef<F>)> {
        self.locked(|l| {
            let mut out = Vec::new();
            let max = l.inner.max_fds;
            let mut fd = bitmap::find_next_bit(&l.inner.open_fds, max, 0);
            while fd < max {
                if let Some(f) = l.lookup(fd) {
                    let cloexec = bitmap::test_bit(&l.inner.close_on_exec, fd);
                    // SAFETY: `get` took a reference for the result.
                    out.push((fd as u32, cloexec, unsafe { FileRef::from_inner(f.get()) }));
                }
                fd = bitmap::find_next_bit(&l.inner.open_fds, max, fd + 1);
            }
            out
        })
    }

    /// Every reserved fd in ascending order.
    pub fn reserved_fds(&self) -> Vec<u32> {
        self.locked(|l| {
            let max = l.inner.max_fds;
            (0..max)
                .filter(|&fd| l.inner.is_open(fd) && l.lookup(fd).is_none())
                .map(|fd| fd as u32)
                .collect()
        })
    }

    /// The `next_fd` hint, for tests of the allocation rule.
    #[doc(hidden)]
    pub fn next_fd_hint(&self) -> usize {
        self.locked(|l| l.inner.next_fd)
    }
}

#[inline]
fn clamp_end(nofile: u64) -> usize {
    nofile.min(u32::MAX as u64 + 1) as usize
}

/// `filp_close`: flush, then drop the reference (the release runs here if it was the last).
fn filp_close<F: FileLike>(file: FileRef<F>) -> Result<(), Errno> {
    let r = file.flush();
    drop(file);
    r
}

impl<F: FileLike> Drop for Files<F> {
    /// `put_files_struct`: the last handle closes every installed file (`close_files`, each
    /// flushed and put) and frees the table.
    fn drop(&mut self) {
        let fs = self.fs();
        // ORDERING: Release; pairs with the Acquire in `locked`/`fdget_slow`/`is_shared` of
        // the surviving handle, and with the fence below for the last one: all of this handle's
        // table accesses happen-before the table is used without the lock or torn down.
        if fs.hot.count.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        // ORDERING: Acquire; pairs with the Release decrements of every other handle.
        fence(Ordering::Acquire);
        // SAFETY: this was the last handle: no other thread can reach the table.
        let fs = unsafe { Box::from_raw(self.fs.as_ptr()) };
        // ORDERING: Relaxed; we are the only user (the fence above ordered everything else).
        let arr = fs.hot.fdt.load(Ordering::Relaxed);
        let mut files = Vec::new();
        {
            // SAFETY: the last handle's array is alive until freed below.
            let arr_ref = unsafe { ArrayRef::new(arr) };
            for fd in 0..arr_ref.max_fds() {
                // SAFETY: `fd < max_fds`.
                let slot = unsafe { arr_ref.slot_unchecked(fd) };
                // ORDERING: Relaxed; sole user.
                let p = slot.swap(ptr::null_mut(), Ordering::Relaxed);
                if let Some(p) = NonNull::new(p) {
                    // SAFETY: the slot's reference moves to us.
                    files.push(unsafe { FileRef::from_inner(p) });
                }
            }
        }
        // SAFETY: no reader can reach the array: every handle is gone.
        unsafe { FdArray::free(arr) };
        let FilesStruct { hot: _, cold } = *fs;
        drop(CachePadded::into_inner(cold).inner.into_inner());
        for f in files {
            let _ = filp_close(f);
        }
    }
}

impl<F: FileLike> std::fmt::Debug for Files<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Files")
            .field("table", &self.fs)
            .field("shared", &self.is_shared())
            .field("max_fds", &self.max_fds())
            .finish()
    }
}

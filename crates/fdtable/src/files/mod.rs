//! `files_struct` and the per-task handle [`Files`]: allocation, install, close, the dup
//! family, close-on-exec, `close_range`, fork/share/unshare/exec and teardown
//! (fs/file.c, fs/fcntl.c, fs/open.c, kernel/fork.c, fs/exec.c).
//!
//! # Invariants
//!
//! - A slot is *free* (open bit 0, null), *reserved* (open bit 1, null) or *installed*
//!   (open bit 1, non-null). An installed slot holds one counted reference on its file. The
//!   payload of an open (reserved or installed) fd is initialised.
//! - `full_fds_bits` bit `w` is set exactly when `open_fds` word `w` is all ones.
//! - `count` is the number of live [`Files`] handles. It goes up only through
//!   [`Files::share`], which takes `&mut self`; so a handle that observes `count == 1` (with
//!   Acquire) stays the only user until it shares. Such a handle works without the lock and
//!   caches the array pointer in `light` (see [`crate::docs::locking`]).
//! - `Inner::shared` is true whenever a lock-free reader other than the calling handle may
//!   load a slot: set by `share` (which marks every installed file visible), cleared when a
//!   handle finds itself alone. A file published while it is true is marked visible.

mod close;
mod dup;
mod fork;
mod iter;
mod locked;
mod lookup;
mod open;
mod shared;

pub use iter::{FdIter, OpenFd};
pub use shared::SharedFiles;

use crate::bitmap::BITS_PER_LONG;
use crate::errno::Errno;
use crate::fdtable::{FdTable, TableRef};
use crate::file_ref::FileRef;
use crate::lock::RawSpinLock;
use crate::sync::{AtomicPtr, AtomicUsize, Ordering, TableLock, UnsafeCell, fence};
use core::cell::Cell;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};
use crossbeam_utils::CachePadded;
use locked::Locked;

/// What a table holds: an open file description. The table calls `flush` on every close of a
/// descriptor that refers to it (`filp_flush`); the file's release is its `Drop`, run when the
/// last [`FileRef`] goes.
///
/// A trait of your own with `FileLike` as a supertrait makes `Files<dyn MyFile>` a table of
/// trait objects (see [`FileRef::new_unsize`]).
pub trait FileLike: Send + Sync {
    /// `->flush`, called on every close of an fd referring to this file (close, dup2's
    /// displaced file, close_range, exec, teardown). `close(2)` returns its error; the fd is
    /// gone either way.
    fn flush(&self) -> Result<(), Errno> {
        Ok(())
    }

    /// Whether [`Files::fdget_rcu`] may lend this file without a reference once it is
    /// looked up often (see [`LEND_AFTER`](crate::LEND_AFTER)). A file that is lent is never
    /// released while a borrow could hold it, so the close that drops its last reference
    /// waits for borrowers; answer `false` for files whose users would upgrade every borrow
    /// to a counted reference anyway (operations that may block: a pipe, a socket), so that
    /// their closes never wait. Asked once per file by the lookups of `fdget_rcu` and once by
    /// those of [`Files::with_fdget_rcu_nonblocking`] (they are counted apart), with a
    /// reference held.
    fn may_lend(&self) -> bool {
        true
    }

    /// Whether [`Files::with_fdget_rcu_nonblocking`] may lend this file without a reference
    /// once it is looked up often through it. Those borrows promise not to block, so a file
    /// whose other operations may block (a pipe, a socket), but whose quick ones (an `ioctl`
    /// that reads a count, `fstat`) are called often, can answer `true` here and `false` to
    /// [`may_lend`](FileLike::may_lend): its quick operations then take no reference, its
    /// others still do, and its release waits for borrowers, as a lent file's does. Asked
    /// once per file, with a reference held, after `may_lend` answered `false`; by default
    /// the same answer as `may_lend`. Say `true` only if every operation your callers run
    /// inside a non-blocking borrow returns without waiting.
    fn may_lend_nonblocking(&self) -> bool {
        self.may_lend()
    }
}

/// Per-fd state kept beside the close-on-exec bit ([`Files`]'s `P`): plain data, copied by
/// `dup`/`fork` as the kernel copies per-fd state, reset to its default when an fd is
/// allocated. It is `Copy` so that the table never runs code of yours under its lock (no
/// clone, no drop); keep anything that needs more in the file. `()` (the default) costs
/// nothing.
pub trait FdPayload: Copy + Default + Send + 'static {}
impl<T: Copy + Default + Send + 'static> FdPayload for T {}

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

/// The lock-protected scalars of the table (the bitmaps live in the [`FdTable`] allocation).
struct Inner {
    next_fd: usize,
    /// Whether lock-free readers other than the calling handle may exist (see the module's
    /// invariants).
    shared: bool,
}

/// `files_struct`.
pub(crate) struct FilesStruct<F: ?Sized, P, L> {
    /// Read-mostly: touched by every lookup.
    hot: CachePadded<Hot<F, P>>,
    /// Written under the lock; on its own cache line, like the kernel's `file_lock` section.
    cold: CachePadded<Cold<L>>,
}

struct Hot<F: ?Sized, P> {
    /// Live [`Files`] handles.
    count: AtomicUsize,
    /// The current allocation (`files->fdt`).
    fdt: AtomicPtr<FdTable<F, P>>,
}

struct Cold<L> {
    file_lock: TableLock<L>,
    inner: UnsafeCell<Inner>,
}

/// `alloc_fdtable`'s size rule: the smallest power of two holding `slots_wanted`, clamped to
/// `nr_open` rounded down to a word; `EMFILE` if that is too small.
fn table_size(slots_wanted: usize) -> Result<usize, Errno> {
    let nr = slots_wanted
        .max(NR_OPEN_DEFAULT)
        .checked_next_power_of_two()
        .ok_or(Errno::EMFILE)?;
    let cap = crate::limits::nr_open();
    if nr > cap {
        let nr = cap & !(BITS_PER_LONG - 1);
        if nr < slots_wanted {
            return Err(Errno::EMFILE);
        }
        return Ok(nr);
    }
    Ok(nr)
}

/// Moves `value` to the heap; `ENOMEM` (and `value` dropped) if the allocator refuses.
fn try_box<T>(value: T) -> Result<alloc::boxed::Box<T>, Errno> {
    let layout = core::alloc::Layout::new::<T>();
    if layout.size() == 0 {
        return Ok(alloc::boxed::Box::new(value));
    }
    // SAFETY: the layout is not zero-sized.
    let p = unsafe { alloc::alloc::alloc(layout) } as *mut T;
    if p.is_null() {
        return Err(Errno::ENOMEM);
    }
    // SAFETY: `p` is a fresh allocation for a `T`; `Box` frees it with the same layout.
    unsafe {
        p.write(value);
        Ok(alloc::boxed::Box::from_raw(p))
    }
}

impl<F: ?Sized, P, L: lock_api::RawMutex> FilesStruct<F, P, L> {
    fn from_parts(arr: NonNull<FdTable<F, P>>, next_fd: usize) -> Self {
        FilesStruct {
            hot: CachePadded::new(Hot {
                count: AtomicUsize::new(1),
                fdt: AtomicPtr::new(arr.as_ptr()),
            }),
            cold: CachePadded::new(Cold {
                file_lock: TableLock::new(),
                inner: UnsafeCell::new(Inner {
                    next_fd,
                    shared: false,
                }),
            }),
        }
    }

    /// A boxed table around `arr`; on `ENOMEM` the array is freed.
    fn boxed(arr: NonNull<FdTable<F, P>>) -> Result<alloc::boxed::Box<Self>, Errno> {
        try_box(Self::from_parts(arr, 0)).inspect_err(|_| {
            // SAFETY: allocated by the caller, never published.
            unsafe { FdTable::free(arr) }
        })
    }
}

/// A task's handle on a descriptor table: the kernel's `current->files`.
///
/// - `F`: the open file description type, sized or a trait object (`Files<dyn MyFile>`).
/// - `P`: per-fd payload beside the close-on-exec bit ([`FdPayload`]; none by default).
/// - `L`: the table lock, any [`lock_api::RawMutex`] ([`RawSpinLock`] by default).
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
pub struct Files<F: ?Sized + FileLike, P: FdPayload = (), L: lock_api::RawMutex = RawSpinLock> {
    fs: NonNull<FilesStruct<F, P, L>>,
    /// The current allocation when this handle is known to be the table's only user; null
    /// otherwise. Only this handle can change the allocation while that holds.
    light: Cell<*const FdTable<F, P>>,
    /// The handle's RCU state (its own record with the built-in RCU).
    reader: crate::rcu::HandleReader,
    _marker: PhantomData<(FilesStruct<F, P, L>, Cell<()>)>,
}

// SAFETY: a handle may move to another thread; the table it points to is shared state guarded
// by the lock and atomics, files are `Send + Sync` by `FileLike`, payloads are `Send` and only
// touched under the lock, and the lock is `Send + Sync`.
unsafe impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex + Send + Sync> Send
    for Files<F, P, L>
{
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Default for Files<F, P, L> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Files<F, P, L> {
    /// An empty table of `NR_OPEN_DEFAULT` (64) slots, with no descriptors open. Aborts if
    /// memory runs out, as `Box::new` does; see [`Files::try_new`].
    pub fn new() -> Self {
        match Self::try_new() {
            Ok(f) => f,
            Err(_) => {
                alloc::alloc::handle_alloc_error(core::alloc::Layout::new::<FilesStruct<F, P, L>>())
            }
        }
    }

    /// As [`Files::new`], reporting `ENOMEM` instead of aborting.
    pub fn try_new() -> Result<Self, Errno> {
        let arr = FdTable::alloc(NR_OPEN_DEFAULT)?;
        Ok(Self::from_box(FilesStruct::boxed(arr)?))
    }

    fn from_box(fs: alloc::boxed::Box<FilesStruct<F, P, L>>) -> Self {
        let fs = NonNull::from(alloc::boxed::Box::leak(fs));
        // SAFETY: just created: count 1, this handle is the only user.
        // ORDERING: Relaxed; the table was created by this thread and no other can see it yet.
        let arr = unsafe { fs.as_ref() }.hot.fdt.load(Ordering::Relaxed);
        Files {
            fs,
            light: Cell::new(arr),
            reader: crate::rcu::HandleReader::new(),
            _marker: PhantomData,
        }
    }

    #[inline(always)]
    fn fs(&self) -> &FilesStruct<F, P, L> {
        // SAFETY: the handle holds one of the table's `count` references.
        unsafe { self.fs.as_ref() }
    }

    /// Exclusive access to the table's mutable state until the result is dropped: without
    /// the lock if this handle is the table's only user, under `file_lock` otherwise. Whatever
    /// is retired or freed meanwhile is handed over after the lock is dropped.
    #[inline(always)]
    fn lock(&self) -> Locked<'_, F, P, L> {
        let fs = self.fs();
        let was_light = !self.light.get().is_null();
        // ORDERING: Acquire; pairs with the Release decrement in `Drop for Files`: if the other
        // handles are gone, everything they did to the table is visible before we touch it
        // without the lock.
        let exclusive = was_light || fs.hot.count.load(Ordering::Acquire) == 1;
        // The table may grow (and the cached array be freed) meanwhile: the `Locked` sets the
        // cache again when dropped, for an exclusive table. Nothing reads it until then (this
        // thread is inside this table operation, and no other thread can use the handle).
        let l = Locked::new(fs, exclusive, &self.light);
        if exclusive && !was_light {
            l.became_exclusive();
        }
        l
    }

    /// Runs `f` under [`Files::lock`].
    #[inline(always)]
    fn locked<R>(&self, f: impl FnOnce(&mut Locked<'_, F, P, L>) -> R) -> R {
        f(&mut self.lock())
    }

    /// Whether this handle's lookups are light now: it has seen itself its table's only user,
    /// so [`fdget`](Files::fdget) and [`fdget_rcu`](Files::fdget_rcu) take no lock, no
    /// reference and no read-side section (the kernel's `files->count == 1` test in
    /// `__fget_light`). `false` does not mean shared: a handle whose sharers have gone
    /// becomes light at its next lookup. For an entry point that wants the light lookup on a
    /// path of its own, with everything else out of line:
    ///
    /// ```
    /// # use fdtable::{Files, FileRef, FileLike};
    /// # struct F; impl FileLike for F {}
    /// let mut files: Files<F> = Files::new();
    /// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
    /// assert!(files.is_light());
    /// let other = files.share();
    /// assert!(!files.is_light());
    /// drop(other);
    /// assert!(files.fdget(fd).is_some());
    /// assert!(files.is_light());
    /// ```
    #[inline(always)]
    pub fn is_light(&self) -> bool {
        !self.light.get().is_null()
    }

    /// Whether another handle shares this table (`files->count > 1`).
    pub fn is_shared(&self) -> bool {
        // ORDERING: Acquire; pairs with the Release decrement in `Drop for Files`, as in
        // `locked`.
        self.fs().hot.count.load(Ordering::Acquire) > 1
    }

    /// Whether two handles refer to the same table.
    pub fn same_table(a: &Self, b: &Self) -> bool {
        a.fs == b.fs
    }

    /// The table's current size (`max_fds`).
    pub fn max_fds(&self) -> usize {
        self.locked(|l| l.fdt().max_fds())
    }

    /// The state of `fd`: free, reserved, or installed with its close-on-exec bit.
    pub fn fd_state(&self, fd: u32) -> FdState {
        self.locked(|l| l.state(fd as usize))
    }

    /// The `next_fd` hint, for tests of the allocation rule.
    #[doc(hidden)]
    pub fn next_fd_hint(&self) -> usize {
        self.locked(|l| l.next_fd())
    }
}

#[inline]
fn clamp_end(nofile: u64) -> usize {
    nofile.min(u32::MAX as u64 + 1) as usize
}

/// `filp_close`: flush, then drop the reference the way a close does (the release runs here
/// if it was the last).
fn filp_close<F: ?Sized + FileLike>(file: FileRef<F>) -> Result<(), Errno> {
    let r = file.flush();
    FileRef::put_close(file);
    r
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Drop for Files<F, P, L> {
    /// `put_files_struct`: the last handle closes every installed file (`close_files`, each
    /// flushed and put, one at a time: nothing is allocated) and frees the table.
    fn drop(&mut self) {
        self.reader.release();
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
        let fs = unsafe { alloc::boxed::Box::from_raw(self.fs.as_ptr()) };
        // ORDERING: Relaxed; we are the only user (the fence above ordered everything else).
        let arr = fs.hot.fdt.load(Ordering::Relaxed);
        // SAFETY: the last handle's allocation is alive until freed below.
        let t = unsafe { TableRef::new(arr) };
        let max = t.max_fds();
        let mut fd = 0;
        loop {
            // SAFETY: sole owner of the table.
            fd = crate::bitmap::find_next_bit(unsafe { t.open_fds() }, max, fd);
            if fd >= max {
                break;
            }
            // SAFETY: `fd < max`.
            let slot = unsafe { t.slot_unchecked(fd) };
            // ORDERING: Relaxed; sole user.
            let p = slot.swap(ptr::null_mut(), Ordering::Relaxed);
            if let Some(p) = NonNull::new(p) {
                // SAFETY: the slot's reference moves to us.
                let _ = filp_close(unsafe { FileRef::from_inner(p) });
            }
            fd += 1;
        }
        // SAFETY: no reader can reach the allocation: every handle is gone.
        unsafe { FdTable::free(t.as_non_null()) };
        drop(fs);
    }
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> core::fmt::Debug
    for Files<F, P, L>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Files")
            .field("table", &self.fs)
            .field("shared", &self.is_shared())
            .field("max_fds", &self.max_fds())
            .finish()
    }
}

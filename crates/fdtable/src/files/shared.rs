//! [`SharedFiles`]: a `Sync` reference to a shared table, which makes handles from `&self`.

use super::{FdPayload, FileLike, Files};
use crate::sync::Ordering;
use core::cell::Cell;
use core::marker::PhantomData;
use core::ptr;

/// A reference to a shared table from which any thread makes new handles through `&self`:
/// what an async host keeps in its `Arc`'d context to give each spawned task a handle of its
/// own, instead of a master [`Files`] behind a mutex (whose [`share`](Files::share) needs
/// `&mut`).
///
/// It counts as one of the table's users (the kernel's `files->count`), so while it lives
/// the table is shared: handles take the lock-free paths, never the light ones that rely on a
/// single user (which is why `share` needs `&mut`: a light borrow from the handle being
/// shared must not outlive the sharing). It does no lookups itself. When it is dropped last,
/// it closes the table's files as the last handle would.
///
/// ```
/// # use fdtable::{FileLike, FileRef, Files, SharedFiles};
/// # struct F; impl FileLike for F {}
/// use std::sync::Arc;
/// let mut files: Files<F> = Files::new();
/// let fd = files.install(FileRef::new(F), 0, 1024).unwrap();
/// let table = Arc::new(SharedFiles::new(&mut files));
/// let tasks: Vec<_> = (0..4)
///     .map(|_| {
///         let table = table.clone();
///         std::thread::spawn(move || {
///             let mine = table.handle(); // a task's own handle, made through `&self`
///             assert!(mine.fdget(fd).is_some());
///         })
///     })
///     .collect();
/// for t in tasks {
///     t.join().unwrap();
/// }
/// ```
pub struct SharedFiles<
    F: ?Sized + FileLike,
    P: FdPayload = (),
    L: lock_api::RawMutex = crate::RawSpinLock,
> {
    /// A handle that is never used for lookups: only its table pointer is read through
    /// `&self`, and it is dropped (as a handle) with this.
    files: Files<F, P, L>,
}

// SAFETY: through `&SharedFiles` only the table pointer (immutable) and the table's atomic
// `count` are touched (`handle`, `clone`); the inner handle's `Cell`s are touched only by
// `Drop`, which has `&mut`. The table itself is `Sync` state (lock and atomics), and what a
// new handle carries to its thread is `Send` (as `Files` is).
unsafe impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex + Send + Sync> Sync
    for SharedFiles<F, P, L>
{
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> SharedFiles<F, P, L> {
    /// A `SharedFiles` on `files`' table (`files` stays a handle of it, and, like every
    /// handle, stops taking the light path: the table is shared from now on).
    pub fn new(files: &mut Files<F, P, L>) -> Self {
        SharedFiles {
            files: files.share(),
        }
    }

    /// `clone(CLONE_FILES)` from `&self`: a new handle on the table, for a task of its own.
    pub fn handle(&self) -> Files<F, P, L> {
        // ORDERING: Relaxed; as in `Files::share`: we hold a reference, so the table is
        // alive, and the handle reaches its thread through whatever hands it over.
        self.files.fs().hot.count.fetch_add(1, Ordering::Relaxed);
        Files {
            fs: self.files.fs,
            light: Cell::new(ptr::null()),
            reader: crate::rcu::HandleReader::new(),
            _marker: PhantomData,
        }
    }
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Clone for SharedFiles<F, P, L> {
    fn clone(&self) -> Self {
        SharedFiles {
            files: self.handle(),
        }
    }
}

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> core::fmt::Debug
    for SharedFiles<F, P, L>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SharedFiles")
            .field("table", &self.files.fs)
            .finish()
    }
}

//! Fork, `CLONE_FILES`, unshare.

use super::{FdPayload, FileLike, Files};
use crate::errno::Errno;
use crate::sync::Ordering;
use core::cell::Cell;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};

impl<F: ?Sized + FileLike, P: FdPayload, L: lock_api::RawMutex> Files<F, P, L> {
    /// `fork()` without `CLONE_FILES` — `dup_fd`: a private copy with one more reference on
    /// every installed file, the close-on-exec bits and payloads, `next_fd` reset, and every
    /// *reserved* fd free (an open in progress belongs to the parent). Sized to the last open
    /// fd. `ENOMEM` (nothing changed), or `EMFILE` if `nr_open` was lowered below what the
    /// copy needs.
    pub fn fork(&self) -> Result<Files<F, P, L>, Errno> {
        let copy = self.locked(|l| l.dup_fd(None))?;
        Ok(Files::from_box(copy))
    }

    /// `clone(CLONE_FILES)`: another handle on the same table, for another task.
    ///
    /// Takes `&mut self` because a light [`Fd`](crate::Fd) borrowed from this handle relies on
    /// the table having no other user. The first share of a table marks its installed files
    /// as visible to lock-free readers (their memory then waits for a grace period when they
    /// are released).
    pub fn share(&mut self) -> Files<F, P, L> {
        self.locked(|l| l.mark_shared());
        self.light.set(ptr::null());
        // ORDERING: Relaxed; we hold a handle, so the table is alive, and the new handle
        // reaches its thread through whatever hands it over (which synchronises).
        self.fs().hot.count.fetch_add(1, Ordering::Relaxed);
        Files {
            fs: self.fs,
            light: Cell::new(ptr::null()),
            reader: crate::rcu::HandleReader::new(),
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

    /// The handle's table, as an opaque identity (for tests and debugging).
    #[doc(hidden)]
    pub fn table_id(&self) -> NonNull<()> {
        self.fs.cast()
    }
}

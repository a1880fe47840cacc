//! # fdtable
//!
//! The Linux kernel's file-descriptor table — `files_struct` from fs/file.c — as a library,
//! generic over the open-file type, with Linux's numbers, errnos and fast paths. It builds
//! with `std` (the default) or with only `core` and `alloc`, for kernels and unikernels.
//!
//! ```
//! use fdtable::{Errno, FileLike, FileRef, Files, O_CLOEXEC};
//!
//! struct Pipe; // an open file description of yours
//! impl FileLike for Pipe {}
//!
//! const NOFILE: u64 = 1024; // the caller's RLIMIT_NOFILE
//! let mut files: Files<Pipe> = Files::new();
//!
//! // open: reserve the lowest free fd, build the file, install it.
//! let slot = files.get_unused_fd_flags(O_CLOEXEC, NOFILE)?;
//! let fd = slot.install(FileRef::new(Pipe));
//! assert_eq!(fd, 0);
//!
//! // read(fd, ...): a light lookup; no lock and no refcount while the table is unshared.
//! {
//!     let file = files.fdget(fd).ok_or(Errno::EBADF)?;
//!     let _pipe: &Pipe = &file;
//! }
//!
//! assert_eq!(files.dup2(fd, 10, NOFILE)?, 10);
//! assert_eq!(files.dup3(fd, fd, 0, NOFILE), Err(Errno::EINVAL));
//! assert_eq!(files.dup2(fd, 5000, NOFILE), Err(Errno::EBADF));
//! files.close_fd(fd)?;
//! assert_eq!(files.close_fd(fd), Err(Errno::EBADF));
//! # Ok::<(), Errno>(())
//! ```
//!
//! ## What it is
//!
//! - **Slots and allocation** ([`Files::alloc_fd`], [`Files::get_unused_fd_flags`]): lowest
//!   free fd, with the `next_fd` hint and two-level bitmaps (`open_fds`, `full_fds_bits`)
//!   searched by the 2024 `find_next_fd` fast path ([`bitmap::find_next_fd`]).
//! - **Light lookups** ([`Files::fdget`]): when the handle is the table's only user, a lookup
//!   takes no lock and performs no atomic read-modify-write; the borrow checker enforces the
//!   rules the kernel only documents.
//! - **Lock-free shared lookups** ([`Files::fget`]): an RCU read-side section (two plain stores
//!   with the built-in RCU), one increment, a re-check; the put is one decrement — two locked
//!   instructions in all, as in Linux.
//! - **The whole descriptor layer**: dup/dup2/dup3, `F_DUPFD[_CLOEXEC]`, `F_GETFD`/`F_SETFD`,
//!   `F_DUPFD_QUERY`, `close_range` (UNSHARE, CLOEXEC), fork, `CLONE_FILES`, unshare, exec,
//!   `RLIMIT_NOFILE` per caller, `nr_open` system-wide; and for embedders: install at a chosen
//!   fd ([`Files::replace_fd`]), an atomic move ([`Files::renumber`]), iteration
//!   ([`Files::iter`]), per-fd payloads ([`FdPayload`]), trait-object files
//!   ([`FileRef::new_unsize`]), an owned `Send` reservation ([`Files::reserve_owned`]).
//!
//! ## Features and embedding
//!
//! - `std` (default): the built-in RCU ([`rcu`]) and conversions between [`Errno`] and
//!   `std::io::Error`. Without it the crate is `#![no_std]` (`core` + `alloc`); the embedder
//!   supplies an RCU with [`set_rcu!`] (its own, or [`rcu::PortableRcu`]).
//! - The table lock is a type parameter: any [`lock_api::RawMutex`] (a kernel's spinlock);
//!   [`RawSpinLock`] by default. Nothing is allocated while it is held, and no code of the
//!   embedder runs under it.
//! - Errnos and flags are Linux's numbers on every host.
//! - `leak-check`: counts array and file allocations, for tests: `live_allocations()`, an item
//!   only this feature compiles (docs.rs documents the crate with it).
//!
//! Design notes: [`docs::design`], [`docs::locking`], [`docs::ordering`],
//! [`docs::divergences`].

#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

extern crate alloc;

pub mod bitmap;
mod errno;
#[doc(hidden)]
pub mod events;
mod fd;
mod fdtable;
mod file_ref;
mod files;
mod flags;
mod limits;
mod lock;
pub mod rcu;
mod reservation;
mod sync;

pub mod docs;

pub use errno::Errno;
#[cfg(any(feature = "std", loom))]
pub use fd::QsbrFd;
#[cfg(all(feature = "std", not(loom)))]
pub use fd::RcuFdEnd;
pub use fd::{Fd, RcuFd};
pub use file_ref::{FileRef, LEND_AFTER};
pub use files::{
    FdIter, FdPayload, FdState, FileLike, Files, NR_OPEN_DEFAULT, OpenFd, SharedFiles,
};
pub use flags::{CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE, FD_CLOEXEC, O_CLOEXEC};
pub use limits::{NR_OPEN_DEFAULT_CAP, NR_OPEN_MAX, NR_OPEN_MIN, nr_open, set_nr_open};
pub use lock::RawSpinLock;
pub use reservation::{FdReservation, OwnedFdReservation};

/// Runs the deferred frees that can run now: under loom, every one queued in this model
/// iteration (call after joining the model's threads); otherwise, in a quiescent program,
/// everything this thread and exited threads retired. For leak checks in tests; never needed
/// for correctness.
pub fn reclaim_drain() {
    rcu::drain()
}

/// Live array and file allocations, for leak checks (feature `leak-check`).
#[cfg(feature = "leak-check")]
pub fn live_allocations() -> (isize, isize) {
    use core::sync::atomic::Ordering::Relaxed;
    (
        // ORDERING: Relaxed; counters read after threads are joined and grace periods drained.
        fdtable::ARRAYS_LIVE.load(Relaxed),
        // ORDERING: Relaxed; as above.
        file_ref::FILES_LIVE.load(Relaxed),
    )
}

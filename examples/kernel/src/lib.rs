//! # A `no_std` kernel's descriptor layer on `fdtable`
//!
//! What a Rust kernel or unikernel writes to get Linux's file-descriptor semantics from
//! `fdtable` built without `std` (`default-features = false`):
//!
//! - **Its own lock**: [`SpinLock`], a test-and-test-and-set spinlock implementing
//!   [`lock_api::RawMutex`], is the table's `file_lock`. The table never allocates, sleeps or
//!   runs our code while holding it, so an IRQ-unsafe spinlock is right.
//! - **Trait-object files**: [`KFile`] (with [`FileLike`](fdtable::FileLike) as supertrait) is
//!   what the table stores, `Files<dyn KFile, ..>`; [`files`] has the console, `/dev/null` and
//!   pipes. One reference count per file, no newtype.
//! - **A per-fd payload**: [`FdRights`], Capsicum-style rights kept beside the close-on-exec
//!   bit (FreeBSD's `filedescent` keeps `fde_rights` there). `dup`, `fork` and `F_DUPFD` copy
//!   them; a new fd starts with [`FdRights::ALL`] unless opened limited; they only ever narrow,
//!   in place by [`Task::cap_rights_limit`] (a compare-and-set on the payload).
//! - **An RCU**: lock-free lookups on shared tables need one. This kernel has none of its own,
//!   so it installs [`fdtable::rcu::PortableRcu`] — reader counts in two phases, correct on any
//!   number of CPUs, needing only atomics — with `fdtable::set_rcu!` below. A kernel with an
//!   RCU of its own implements [`fdtable::rcu::Rcu`] over its `rcu_read_lock`/`call_rcu`
//!   instead (see `fdtable::docs::embedding`). The macro defines the four hook symbols the core
//!   calls, in this crate, so any image that links this crate links.
//! - **The syscalls**: [`Task`] implements open, pipe2, read, write, close, dup/dup2/dup3,
//!   fcntl (`F_DUPFD`, `F_DUPFD_CLOEXEC`, `F_GETFD`, `F_SETFD`, `F_GETFL`), fork,
//!   `clone(CLONE_FILES)`, unshare, execve's close-on-exec pass, close_range, `open_limited`
//!   and `dup_limited` (an fd with fewer rights), and `/proc/self/fd` by iterating the table,
//!   with Linux's errnos; [`Task::syscall`] is the raw entry (registers in, `-errno` out).
//!
//! ## What the embedding kernel provides
//!
//! A `#[global_allocator]`: the crate uses `alloc` (the table's arrays, files, pipe buffers).
//! Allocation failures inside the table and the files are `ENOMEM`, never a panic. The `image`
//! example (`--features image`) is a stand-in image with a bump allocator and a panic handler,
//! linked for `x86_64-unknown-none` by `ci/examples`.
//!
//! ## Building
//!
//! ```sh
//! cargo +nightly build -Zbuild-std=core,alloc --target x86_64-unknown-none \
//!     --manifest-path examples/kernel/Cargo.toml
//! cargo test --manifest-path examples/kernel/Cargo.toml   # the same logic on the host
//! ```
//!
//! Under `cargo test` the crate itself links `std` (for the test harness); the core is built
//! without `std` either way, and the integration tests (`tests/`) use the crate exactly as the
//! `no_std` build compiles it.

#![cfg_attr(not(test), no_std)]
#![warn(missing_docs)]

extern crate alloc;

pub mod files;
/// The scenario shared with the std build's test: a fixed sequence of table calls written out
/// as a transcript, compared with `tests/golden.txt` here (core without `std`) and in
/// `examples/wasi/tests/std_transcript.rs` (core with `std`).
pub mod scenario;
mod spinlock;
mod task;

pub use files::{ConsoleDev, KFile};
pub use spinlock::SpinLock;
pub use task::{
    CLONE_FILES, DEFAULT_NOFILE, F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_GETFL, F_SETFD, FileTable,
    Kernel, O_DIRECT, O_NONBLOCK, O_RDONLY, O_RDWR, O_WRONLY, Pid, Task, nr,
};

// The core's RCU hooks, defined here: `__fdtable_set_rcu_read_lock`, `..._read_unlock`,
// `..._call_rcu`, `..._synchronize_rcu`. They are unmangled symbols, one set per
// image: a kernel linking this crate must not call `set_rcu!` again (it would get duplicate
// symbols); one with its own RCU would move this line into its own crate.
fdtable::set_rcu!(fdtable::rcu::PortableRcu);

/// Per-fd rights (the table's payload `P`): Capsicum-style, checked by `read` and `write`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FdRights(u8);

impl FdRights {
    /// May `read`.
    pub const READ: FdRights = FdRights(1);
    /// May `write`.
    pub const WRITE: FdRights = FdRights(2);
    /// No rights.
    pub const NONE: FdRights = FdRights(0);
    /// Every right: what a new fd gets.
    pub const ALL: FdRights = FdRights(3);

    /// Whether every right in `other` is in `self`.
    pub const fn contains(self, other: FdRights) -> bool {
        self.0 & other.0 == other.0
    }

    /// The rights in either.
    pub const fn union(self, other: FdRights) -> FdRights {
        FdRights(self.0 | other.0)
    }
}

impl Default for FdRights {
    /// A fresh fd may do everything its file's mode allows.
    fn default() -> Self {
        FdRights::ALL
    }
}

impl core::fmt::Debug for FdRights {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match (
            self.contains(FdRights::READ),
            self.contains(FdRights::WRITE),
        ) {
            (true, true) => f.write_str("read|write"),
            (true, false) => f.write_str("read"),
            (false, true) => f.write_str("write"),
            (false, false) => f.write_str("none"),
        }
    }
}

//! # fdtable-capi
//!
//! The C ABI of fdtable: every `extern "C"` function and `#[repr(C)]` type of `libfdtable`
//! (`include/fdtable.h`, generated from this crate by cbindgen). The `fdtable-ffi` crate links
//! these into `libfdtable.a` and `libfdtable.so`; this crate is an rlib so that Rust tests and
//! the fuzz target can call the same functions.
//!
//! ## Model
//!
//! - `struct fdt_files` is a task's handle on a descriptor table: an
//!   [`fdtable_vfs::Task`] (the table handle, its own `RLIMIT_NOFILE`, and a namespace with
//!   nothing in it — C callers open their files themselves and install them) whose table keeps
//!   a `u64` payload per descriptor (the `fdt_*payload*` calls).
//! - `struct fdt_reservation` is an [`fdtable::OwnedFdReservation`]: a reserved fd with its own
//!   handle on the table, which C may hand to another thread.
//! - `struct fdt_file` is an open file description, an [`fdtable_vfs::File`] inside a
//!   [`fdtable::FileRef`]: a `struct fdt_file *` is the address `FileRef::into_raw` hands out,
//!   and each reference the C side owns is one count on it.
//! - `struct fdt_file_ops` are C callbacks; [`file`](mod@file) adapts them to
//!   [`fdtable_vfs::FileOperations`], and `release` runs from the adapter's `Drop`, so exactly
//!   once, when the last reference goes.
//!
//! ## Rules at the boundary
//!
//! - One error convention: a call that can fail returns `-errno` (Linux values); objects come
//!   back through out-parameters. The legacy calls that return NULL or nothing on failure
//!   (`fdt_files_fork`, `fdt_fd_install`, ...) stay, deprecated, each beside its `...2` form.
//! - NULL handles and garbage descriptors never crash: NULL object pointers are `-EINVAL`
//!   (NULL for the legacy pointer results, nothing for release calls), bad descriptors are
//!   what Linux answers (`EBADF` mostly). Non-NULL pointers must be valid, as for any C API.
//! - `errno` is only written by the two legacy calls documented to set it, through the
//!   [`errno`] crate (`__errno_location`, `__error`, `__errno`: whichever the target libc
//!   has), never read.
//! - No panic crosses the boundary: each entry point runs inside
//!   [`std::panic::catch_unwind`] (the `guard` module) and reports `-EIO` (or NULL / nothing). No
//!   panic is expected on any input; the guard is the proof that none escapes.

// The C names of the ABI's types (`struct fdt_files`, ...).
#![allow(non_camel_case_types)]

// The order of the modules is the order of the header's sections (cbindgen follows it).
pub mod consts;
pub mod version;
// Tables.
pub mod files;
// Files.
pub mod file;
// Descriptors.
pub mod fd;
// Per-fd payloads.
pub mod payload;
// Owned reservations.
pub mod reservation;
// I/O.
pub mod io;

mod guard;

pub use consts::*;
pub use fd::*;
pub use file::*;
pub use files::*;
pub use io::*;
pub use payload::*;
pub use reservation::*;
pub use version::*;

//! # A WASI preview 1 descriptor layer on `fdtable`
//!
//! What a WebAssembly runtime (wasmtime-wasi, wasmer-wasix, Lind) writes to keep its guests'
//! descriptors in an `fdtable` table:
//!
//! - **Its own descriptor type as trait objects**: [`WasiFile`], stored as `dyn WasiFile`
//!   (`Files<dyn WasiFile, FdEntry>`), with stdio streams, directories and regular files over
//!   an in-memory file system ([`fs`]).
//! - **Per-fd rights and flags as the payload**: [`FdEntry`] (`rights_base`,
//!   `rights_inheriting`, `fdflags`, a `Copy` struct), installed with the file in one step and
//!   read with it in one step (`install_with`, `fget_with_payload`).
//! - **stdio at 0–2, preopens at 3 and up**, sequential ([`WasiCtxBuilder`]).
//! - **The calls**: `fd_read`, `fd_write`, `fd_close`, `fd_fdstat_get`,
//!   `fd_fdstat_set_flags`, `fd_fdstat_set_rights`, `fd_prestat_get`, `fd_prestat_dir_name`
//!   (and [`WasiCtx::preopens`], by iterating the table), `fd_renumber` (through the core's
//!   atomic [`fdtable::Files::renumber`]), `path_open` (reserve → open → install with rights
//!   handed down from the directory), and [`WasiCtx::path_open_async`], an async host call
//!   that holds the core's `Send` [`fdtable::OwnedFdReservation`] across an `.await` and gives
//!   the fd back if cancelled.
//! - **Errors**: WASI's own numbering ([`WasiErrno`]), mapped by meaning from the core's Linux
//!   errnos; rights failures are `Notcapable`.
//!
//! The crate is a member of the repository's workspace; its tests also run the scenario shared
//! with the `no_std` kernel example against the core built with `std`
//! (`tests/std_transcript.rs`).

#![warn(missing_docs)]

mod ctx;
pub mod fs;
mod types;

pub use ctx::{
    DEFAULT_NOFILE, PathOpen, STDIN_RIGHTS, STDOUT_RIGHTS, WasiCtx, WasiCtxBuilder, WasiTable,
};
pub use fs::{Dir, DirNode, WasiFile};
pub use types::{
    Fd, FdEntry, Fdflags, Fdstat, Filetype, LOOKUP_SYMLINK_FOLLOW, Oflags, Prestat, Rights,
    WasiErrno,
};

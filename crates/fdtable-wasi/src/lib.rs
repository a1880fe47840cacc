//! # `fdtable wasi`: a WASI preview 1 runtime whose descriptor table is `fdtable::Files`
//!
//! wasmtime is the engine; the `wasi_snapshot_preview1` imports are this crate's own
//! ([`add_to_linker`]), and every descriptor a guest holds lives in an
//! [`fdtable::Files`] ([`WasiTable`]) with its rights and flags as the per-fd payload
//! ([`FdEntry`]):
//!
//! - standard streams at 0–2, preopened directories at 3, 4, … in order ([`WasiCtxBuilder`]);
//! - new descriptors get the lowest free number, as on Linux (wasmtime's own host reuses the
//!   highest freed one);
//! - `path_open` reserves its fd before it opens anything (`get_unused_fd_flags`) and gives it
//!   back if the open fails, so a full table (`mfile`) never opens, let alone leaks, a host
//!   file;
//! - `fd_renumber` is one table operation (`renumber_onto`): the file, its rights and flags
//!   move together, what was at the target is closed, and a target that is not open is
//!   `badf`;
//! - paths resolve beneath their directory with cap-std: absolute paths, `..` past the
//!   directory and symbolic links leading out are `notcapable`;
//! - rights are enforced: a descriptor's base rights gate every call, its inheriting rights
//!   bound what `path_open` may grant, and `fd_fdstat_set_rights` can only drop them;
//! - errors are WASI errnos, mapped from Linux's ([`fdtable::Errno`], and host I/O errors
//!   through it) by one table ([`errno::LINUX_TO_WASI`]); a bad guest pointer traps with a
//!   message, as witx prescribes; nothing a guest passes makes the host panic.
//!
//! The design, the differences from wasmtime's host and the measurements are in the
//! repository's docs/WASI.md.

#![warn(missing_docs)]

pub mod cli;
#[cfg(unix)]
mod ctx;
#[cfg(unix)]
pub mod desc;
#[cfg(unix)]
pub mod errno;
#[cfg(unix)]
mod host;
#[cfg(unix)]
pub mod memory;
#[cfg(unix)]
pub mod run;
pub mod types;

#[cfg(unix)]
pub use ctx::{DEFAULT_NOFILE, PREOPEN_RIGHTS, WasiCtx, WasiCtxBuilder, WasiTable};
#[cfg(unix)]
pub use desc::{Desc, FdEntry, Input, Output};
#[cfg(unix)]
pub use host::{ExitCode, MODULE, add_to_linker};
pub use types::{Rights, WasiErrno};

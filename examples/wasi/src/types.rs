//! WASI preview 1 types: the witx numbering (errno, rights, flags, file types) and the
//! Linux-to-WASI errno mapping come from `fdtable-wasi-types`, their one home in this
//! repository (the `fdtable wasi` runtime uses the same crate); here are this layer's own
//! shapes of them: typed flag sets, `fdstat`, `prestat`, and the per-fd payload [`FdEntry`]
//! the table keeps beside each descriptor.
//!
//! [`WasiErrno`] is WASI's own numbering, not Linux's (`badf` is 8, `mfile` 33, `notcapable`
//! 76). The descriptor layer reports [`fdtable::Errno`] values with Linux's numbers;
//! `From<Errno>` maps them by meaning (`EBADF` → [`WasiErrno::Badf`], `EMFILE` →
//! [`WasiErrno::Mfile`], …), as wasmtime maps the host's `std::io::Error`s. Rights failures are
//! WASI's own [`WasiErrno::Notcapable`], which Linux has no number for: see
//! [`WasiErrno::to_linux`].

pub use fdtable_wasi_types::{Filetype, LOOKUP_SYMLINK_FOLLOW, Rights, WasiErrno};
use fdtable_wasi_types::{fdflags, oflags};

/// A WASI file descriptor (`fd`, a `u32` in the ABI: a C `-1` arrives as `u32::MAX`).
pub type Fd = u32;

/// `fdflags`, as a typed set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fdflags(pub u16);

#[allow(missing_docs)]
impl Fdflags {
    pub const APPEND: Fdflags = Fdflags(fdflags::APPEND);
    pub const DSYNC: Fdflags = Fdflags(fdflags::DSYNC);
    pub const NONBLOCK: Fdflags = Fdflags(fdflags::NONBLOCK);
    pub const RSYNC: Fdflags = Fdflags(fdflags::RSYNC);
    pub const SYNC: Fdflags = Fdflags(fdflags::SYNC);
    /// Every flag witx defines.
    pub const ALL: Fdflags = Fdflags(fdflags::ALL);

    /// Whether every flag in `other` is in `self`.
    pub const fn contains(self, other: Fdflags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// `oflags` (`path_open`), as a typed set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Oflags(pub u16);

#[allow(missing_docs)]
impl Oflags {
    pub const CREAT: Oflags = Oflags(oflags::CREAT);
    pub const DIRECTORY: Oflags = Oflags(oflags::DIRECTORY);
    pub const EXCL: Oflags = Oflags(oflags::EXCL);
    pub const TRUNC: Oflags = Oflags(oflags::TRUNC);
    /// Every flag witx defines.
    pub const ALL: Oflags = Oflags(oflags::ALL);

    /// Whether every flag in `other` is in `self`.
    pub const fn contains(self, other: Oflags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// `fdstat`, as `fd_fdstat_get` returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fdstat {
    /// The file's type.
    pub fs_filetype: Filetype,
    /// The fd's flags.
    pub fs_flags: Fdflags,
    /// The fd's rights.
    pub fs_rights_base: Rights,
    /// The rights fds opened through this one may have.
    pub fs_rights_inheriting: Rights,
}

/// `prestat`, as `fd_prestat_get` returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prestat {
    /// A preopened directory, whose guest path is `pr_name_len` bytes long.
    Dir {
        /// The length of the name `fd_prestat_dir_name` returns.
        pr_name_len: u32,
    },
}

/// The table's per-fd payload: what wasmer keeps per slot (`Fd { rights, rights_inheriting,
/// flags, .. }`), beside the file. Plain `Copy` data: the table copies it without running our
/// code under its lock. The default (no rights, no flags) is what a bare allocation gets; every
/// install here passes the real entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FdEntry {
    /// `fs_rights_base`.
    pub rights_base: Rights,
    /// `fs_rights_inheriting`.
    pub rights_inheriting: Rights,
    /// `fs_flags`.
    pub flags: Fdflags,
}

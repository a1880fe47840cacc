//! WASI preview 1 types (`wasi_snapshot_preview1.witx`), with the witx numbering: errno,
//! rights, fd flags, open flags, file types, `fdstat`, `prestat` — and the per-fd payload
//! [`FdEntry`] the table keeps beside each descriptor.

use fdtable::Errno;

/// A WASI file descriptor (`fd`, a `u32` in the ABI: a C `-1` arrives as `u32::MAX`).
pub type Fd = u32;

/// WASI's `errno` (its own numbering, not Linux's: `badf` is 8, `mfile` 33, `notcapable` 76).
///
/// The descriptor layer reports [`fdtable::Errno`] values with Linux's numbers; `From<Errno>`
/// maps them by meaning (`EBADF` → [`WasiErrno::Badf`], `EMFILE` → [`WasiErrno::Mfile`], …),
/// as wasmtime maps the host's `std::io::Error`s. Rights failures are WASI's own
/// [`WasiErrno::Notcapable`], which Linux has no number for: see [`WasiErrno::to_linux`].
#[repr(u16)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum WasiErrno {
    Success = 0,
    TooBig = 1,
    Acces = 2,
    Again = 6,
    Badf = 8,
    Busy = 10,
    Exist = 20,
    Fault = 21,
    Fbig = 22,
    Intr = 27,
    Inval = 28,
    Io = 29,
    Isdir = 31,
    Loop = 32,
    Mfile = 33,
    Nametoolong = 37,
    Nfile = 41,
    Noent = 44,
    Nomem = 48,
    Nospc = 51,
    Nosys = 52,
    Notdir = 54,
    Notempty = 55,
    Notsup = 58,
    Overflow = 61,
    Perm = 63,
    Pipe = 64,
    Range = 68,
    Rofs = 69,
    Spipe = 70,
    Xdev = 75,
    /// Extension: capabilities insufficient (a right the fd lacks, or a path escaping its
    /// directory).
    Notcapable = 76,
}

/// (Linux errno, WASI errno) pairs, by meaning. Any other Linux errno maps to `Io`, as
/// wasmtime maps an unknown host error.
const MAP: &[(Errno, WasiErrno)] = &[
    (Errno::E2BIG, WasiErrno::TooBig),
    (Errno::EACCES, WasiErrno::Acces),
    (Errno::EAGAIN, WasiErrno::Again),
    (Errno::EBADF, WasiErrno::Badf),
    (Errno::EBUSY, WasiErrno::Busy),
    (Errno::EEXIST, WasiErrno::Exist),
    (Errno::EFAULT, WasiErrno::Fault),
    (Errno::EFBIG, WasiErrno::Fbig),
    (Errno::EINTR, WasiErrno::Intr),
    (Errno::EINVAL, WasiErrno::Inval),
    (Errno::EIO, WasiErrno::Io),
    (Errno::EISDIR, WasiErrno::Isdir),
    (Errno::ELOOP, WasiErrno::Loop),
    (Errno::EMFILE, WasiErrno::Mfile),
    (Errno::ENAMETOOLONG, WasiErrno::Nametoolong),
    (Errno::ENFILE, WasiErrno::Nfile),
    (Errno::ENOENT, WasiErrno::Noent),
    (Errno::ENOMEM, WasiErrno::Nomem),
    (Errno::ENOSPC, WasiErrno::Nospc),
    (Errno::ENOSYS, WasiErrno::Nosys),
    (Errno::ENOTDIR, WasiErrno::Notdir),
    (Errno::ENOTEMPTY, WasiErrno::Notempty),
    (Errno::EOPNOTSUPP, WasiErrno::Notsup),
    (Errno::EOVERFLOW, WasiErrno::Overflow),
    (Errno::EPERM, WasiErrno::Perm),
    (Errno::EPIPE, WasiErrno::Pipe),
    (Errno::ERANGE, WasiErrno::Range),
    (Errno::EROFS, WasiErrno::Rofs),
    (Errno::ESPIPE, WasiErrno::Spipe),
    (Errno::EXDEV, WasiErrno::Xdev),
];

impl From<Errno> for WasiErrno {
    fn from(e: Errno) -> WasiErrno {
        MAP.iter()
            .find(|(l, _)| *l == e)
            .map_or(WasiErrno::Io, |(_, w)| *w)
    }
}

impl WasiErrno {
    /// The raw `errno` value a guest sees.
    pub fn raw(self) -> u16 {
        self as u16
    }

    /// The Linux errno for this WASI errno, for a host that reports Linux numbers (a WASIX or
    /// POSIX-emulating runtime). The inverse of `From<Errno>` for every mapped value; `Success`
    /// has none (`None`).
    ///
    /// `Notcapable` has no Linux counterpart. It becomes `EBADF`: what Linux answers when a
    /// descriptor exists but may not be used for the call — `read` on an fd opened `O_WRONLY`,
    /// `write` on one opened `O_RDONLY` (fs/read_write.c checks `FMODE_READ`/`FMODE_WRITE` and
    /// returns `-EBADF`), `fchmod` on an `O_PATH` fd. This layer also reports a path escaping
    /// its directory as `Notcapable` (as WASI runtimes do); Linux's `openat2(RESOLVE_BENEATH)`
    /// says `EXDEV` there, so the reverse mapping is lossy for that case.
    pub fn to_linux(self) -> Option<Errno> {
        match self {
            WasiErrno::Success => None,
            WasiErrno::Notcapable => Some(Errno::EBADF),
            w => MAP.iter().find(|(_, x)| *x == w).map(|(l, _)| *l),
        }
    }
}

impl core::fmt::Display for WasiErrno {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{self:?} ({})", self.raw())
    }
}

impl std::error::Error for WasiErrno {}

/// `rights`: what an fd may be used for. Bit positions are witx's.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Rights(pub u64);

#[allow(missing_docs)]
impl Rights {
    pub const NONE: Rights = Rights(0);
    pub const FD_DATASYNC: Rights = Rights(1 << 0);
    pub const FD_READ: Rights = Rights(1 << 1);
    pub const FD_SEEK: Rights = Rights(1 << 2);
    pub const FD_FDSTAT_SET_FLAGS: Rights = Rights(1 << 3);
    pub const FD_SYNC: Rights = Rights(1 << 4);
    pub const FD_TELL: Rights = Rights(1 << 5);
    pub const FD_WRITE: Rights = Rights(1 << 6);
    pub const FD_ADVISE: Rights = Rights(1 << 7);
    pub const FD_ALLOCATE: Rights = Rights(1 << 8);
    pub const PATH_CREATE_DIRECTORY: Rights = Rights(1 << 9);
    pub const PATH_CREATE_FILE: Rights = Rights(1 << 10);
    pub const PATH_LINK_SOURCE: Rights = Rights(1 << 11);
    pub const PATH_LINK_TARGET: Rights = Rights(1 << 12);
    pub const PATH_OPEN: Rights = Rights(1 << 13);
    pub const FD_READDIR: Rights = Rights(1 << 14);
    pub const PATH_READLINK: Rights = Rights(1 << 15);
    pub const PATH_RENAME_SOURCE: Rights = Rights(1 << 16);
    pub const PATH_RENAME_TARGET: Rights = Rights(1 << 17);
    pub const PATH_FILESTAT_GET: Rights = Rights(1 << 18);
    pub const PATH_FILESTAT_SET_SIZE: Rights = Rights(1 << 19);
    pub const PATH_FILESTAT_SET_TIMES: Rights = Rights(1 << 20);
    pub const FD_FILESTAT_GET: Rights = Rights(1 << 21);
    pub const FD_FILESTAT_SET_SIZE: Rights = Rights(1 << 22);
    pub const FD_FILESTAT_SET_TIMES: Rights = Rights(1 << 23);
    pub const PATH_SYMLINK: Rights = Rights(1 << 24);
    pub const PATH_REMOVE_DIRECTORY: Rights = Rights(1 << 25);
    pub const PATH_UNLINK_FILE: Rights = Rights(1 << 26);
    pub const POLL_FD_READWRITE: Rights = Rights(1 << 27);
    pub const SOCK_SHUTDOWN: Rights = Rights(1 << 28);
    pub const SOCK_ACCEPT: Rights = Rights(1 << 29);
    /// Every right witx defines.
    pub const ALL: Rights = Rights((1 << 30) - 1);

    /// The rights that make sense on a regular file (or a stream).
    pub const FILE: Rights = Rights(
        Self::FD_DATASYNC.0
            | Self::FD_READ.0
            | Self::FD_SEEK.0
            | Self::FD_FDSTAT_SET_FLAGS.0
            | Self::FD_SYNC.0
            | Self::FD_TELL.0
            | Self::FD_WRITE.0
            | Self::FD_ADVISE.0
            | Self::FD_ALLOCATE.0
            | Self::FD_FILESTAT_GET.0
            | Self::FD_FILESTAT_SET_SIZE.0
            | Self::FD_FILESTAT_SET_TIMES.0
            | Self::POLL_FD_READWRITE.0,
    );

    /// The rights that make sense on a directory.
    pub const DIRECTORY: Rights = Rights(
        Self::FD_FDSTAT_SET_FLAGS.0
            | Self::FD_SYNC.0
            | Self::FD_ADVISE.0
            | Self::PATH_CREATE_DIRECTORY.0
            | Self::PATH_CREATE_FILE.0
            | Self::PATH_LINK_SOURCE.0
            | Self::PATH_LINK_TARGET.0
            | Self::PATH_OPEN.0
            | Self::FD_READDIR.0
            | Self::PATH_READLINK.0
            | Self::PATH_RENAME_SOURCE.0
            | Self::PATH_RENAME_TARGET.0
            | Self::PATH_FILESTAT_GET.0
            | Self::PATH_FILESTAT_SET_SIZE.0
            | Self::PATH_FILESTAT_SET_TIMES.0
            | Self::FD_FILESTAT_GET.0
            | Self::FD_FILESTAT_SET_TIMES.0
            | Self::PATH_SYMLINK.0
            | Self::PATH_REMOVE_DIRECTORY.0
            | Self::PATH_UNLINK_FILE.0,
    );

    /// Whether every right in `other` is in `self`.
    pub const fn contains(self, other: Rights) -> bool {
        self.0 & other.0 == other.0
    }

    /// Both sets.
    pub const fn union(self, other: Rights) -> Rights {
        Rights(self.0 | other.0)
    }

    /// The rights in both.
    pub const fn intersect(self, other: Rights) -> Rights {
        Rights(self.0 & other.0)
    }

    /// Whether only rights witx defines are set.
    pub const fn is_valid(self) -> bool {
        Self::ALL.contains(self)
    }
}

impl core::fmt::Debug for Rights {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Rights({:#x})", self.0)
    }
}

/// `fdflags`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fdflags(pub u16);

#[allow(missing_docs)]
impl Fdflags {
    pub const APPEND: Fdflags = Fdflags(1 << 0);
    pub const DSYNC: Fdflags = Fdflags(1 << 1);
    pub const NONBLOCK: Fdflags = Fdflags(1 << 2);
    pub const RSYNC: Fdflags = Fdflags(1 << 3);
    pub const SYNC: Fdflags = Fdflags(1 << 4);
    /// Every flag witx defines.
    pub const ALL: Fdflags = Fdflags((1 << 5) - 1);

    /// Whether every flag in `other` is in `self`.
    pub const fn contains(self, other: Fdflags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// `oflags` (`path_open`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Oflags(pub u16);

#[allow(missing_docs)]
impl Oflags {
    pub const CREAT: Oflags = Oflags(1 << 0);
    pub const DIRECTORY: Oflags = Oflags(1 << 1);
    pub const EXCL: Oflags = Oflags(1 << 2);
    pub const TRUNC: Oflags = Oflags(1 << 3);
    /// Every flag witx defines.
    pub const ALL: Oflags = Oflags((1 << 4) - 1);

    /// Whether every flag in `other` is in `self`.
    pub const fn contains(self, other: Oflags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// `lookupflags`: `SYMLINK_FOLLOW` is the only one (this file system has no symlinks).
pub const LOOKUP_SYMLINK_FOLLOW: u32 = 1;

/// `filetype`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Filetype {
    Unknown = 0,
    BlockDevice = 1,
    CharacterDevice = 2,
    Directory = 3,
    RegularFile = 4,
    SocketDgram = 5,
    SocketStream = 6,
    SymbolicLink = 7,
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

//! WASI preview 1 types, kept in one place for every WASI layer in this repository (the
//! `fdtable wasi` runtime and the embedding example): `wasi_snapshot_preview1.witx`'s numbering
//! and layouts (the errno values, rights, flags, file types, and the byte layout of the
//! structures the calls read and write in guest memory: wasm32, little-endian, 32-bit
//! pointers), and the one mapping between Linux errnos and WASI's.
//!
//! The descriptor table reports [`fdtable::Errno`] (Linux's numbers on every host); host I/O
//! reports `std::io::Error`, which [`fdtable::Errno::from_io_error`] turns into the same Linux
//! errno whatever the host (macOS's `EAGAIN` 35 becomes Linux's 11 first). Both then go through
//! [`LINUX_TO_WASI`]: one table, by meaning. A Linux errno WASI has no name for becomes `Io`,
//! as wasmtime maps an unknown host error.
//!
//! One error has no errno of its own: cap-std refuses a path that leaves its directory (an
//! absolute path, too many `..`, a symbolic link pointing out) with an `io::Error` of kind
//! `PermissionDenied` that carries no OS error. That is [`WasiErrno::Notcapable`]: the
//! capability model refused it, not the file's permission bits (a real `EACCES` carries its
//! OS error and is `Acces`).

#![warn(missing_docs)]

use fdtable::Errno;

/// A WASI `errno` (its own numbering: `badf` is 8, `mfile` 33, `notcapable` 76).
#[repr(u16)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum WasiErrno {
    Success = 0,
    TooBig = 1,
    Acces = 2,
    Addrinuse = 3,
    Addrnotavail = 4,
    Afnosupport = 5,
    Again = 6,
    Already = 7,
    Badf = 8,
    Badmsg = 9,
    Busy = 10,
    Canceled = 11,
    Child = 12,
    Connaborted = 13,
    Connrefused = 14,
    Connreset = 15,
    Deadlk = 16,
    Destaddrreq = 17,
    Dom = 18,
    Dquot = 19,
    Exist = 20,
    Fault = 21,
    Fbig = 22,
    Hostunreach = 23,
    Idrm = 24,
    Ilseq = 25,
    Inprogress = 26,
    Intr = 27,
    Inval = 28,
    Io = 29,
    Isconn = 30,
    Isdir = 31,
    Loop = 32,
    Mfile = 33,
    Mlink = 34,
    Msgsize = 35,
    Multihop = 36,
    Nametoolong = 37,
    Netdown = 38,
    Netreset = 39,
    Netunreach = 40,
    Nfile = 41,
    Nobufs = 42,
    Nodev = 43,
    Noent = 44,
    Noexec = 45,
    Nolck = 46,
    Nolink = 47,
    Nomem = 48,
    Nomsg = 49,
    Noprotoopt = 50,
    Nospc = 51,
    Nosys = 52,
    Notconn = 53,
    Notdir = 54,
    Notempty = 55,
    Notrecoverable = 56,
    Notsock = 57,
    Notsup = 58,
    Notty = 59,
    Nxio = 60,
    Overflow = 61,
    Ownerdead = 62,
    Perm = 63,
    Pipe = 64,
    Proto = 65,
    Protonosupport = 66,
    Prototype = 67,
    Range = 68,
    Rofs = 69,
    Spipe = 70,
    Srch = 71,
    Stale = 72,
    Timedout = 73,
    Txtbsy = 74,
    Xdev = 75,
    /// Capabilities insufficient: a right the descriptor lacks, or a path that leaves its
    /// directory.
    Notcapable = 76,
}

impl WasiErrno {
    /// The value the guest sees.
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
            w => LINUX_TO_WASI.iter().find(|(_, x)| *x == w).map(|(l, _)| *l),
        }
    }
}

impl core::fmt::Display for WasiErrno {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{self:?} ({})", self.raw())
    }
}

impl std::error::Error for WasiErrno {}

/// `rights`: what a descriptor may be used for. Bit positions are witx's.
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

    /// The rights that make sense on a regular file.
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

    /// The rights of the standard streams (a character device or a pipe).
    pub const STDIO: Rights = Rights(
        Self::FD_READ.0
            | Self::FD_WRITE.0
            | Self::FD_FDSTAT_SET_FLAGS.0
            | Self::FD_FILESTAT_GET.0
            | Self::POLL_FD_READWRITE.0,
    );

    /// Whether every right in `other` is in `self`.
    #[inline]
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
#[allow(missing_docs)]
pub mod fdflags {
    pub const APPEND: u16 = 1 << 0;
    pub const DSYNC: u16 = 1 << 1;
    pub const NONBLOCK: u16 = 1 << 2;
    pub const RSYNC: u16 = 1 << 3;
    pub const SYNC: u16 = 1 << 4;
    pub const ALL: u16 = (1 << 5) - 1;
}

/// `oflags` (`path_open`).
#[allow(missing_docs)]
pub mod oflags {
    pub const CREAT: u16 = 1 << 0;
    pub const DIRECTORY: u16 = 1 << 1;
    pub const EXCL: u16 = 1 << 2;
    pub const TRUNC: u16 = 1 << 3;
    pub const ALL: u16 = (1 << 4) - 1;
}

/// `lookupflags`.
pub const LOOKUP_SYMLINK_FOLLOW: u32 = 1;

/// `fstflags` (`*_filestat_set_times`).
#[allow(missing_docs)]
pub mod fstflags {
    pub const ATIM: u16 = 1 << 0;
    pub const ATIM_NOW: u16 = 1 << 1;
    pub const MTIM: u16 = 1 << 2;
    pub const MTIM_NOW: u16 = 1 << 3;
    pub const ALL: u16 = (1 << 4) - 1;
}

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

/// `whence`.
#[allow(missing_docs)]
pub mod whence {
    pub const SET: u8 = 0;
    pub const CUR: u8 = 1;
    pub const END: u8 = 2;
}

/// `clockid`.
#[allow(missing_docs)]
pub mod clockid {
    pub const REALTIME: u32 = 0;
    pub const MONOTONIC: u32 = 1;
    pub const PROCESS_CPUTIME_ID: u32 = 2;
    pub const THREAD_CPUTIME_ID: u32 = 3;
}

/// `eventtype`.
#[allow(missing_docs)]
pub mod eventtype {
    pub const CLOCK: u8 = 0;
    pub const FD_READ: u8 = 1;
    pub const FD_WRITE: u8 = 2;
}

/// `subclockflags`: the timeout is an absolute time.
pub const SUBSCRIPTION_CLOCK_ABSTIME: u16 = 1;

/// `eventrwflags`: the peer hung up (end of file).
pub const EVENT_FD_READWRITE_HANGUP: u16 = 1;

/// `advice` values run from `normal` (0) to `noreuse` (5).
pub const ADVICE_MAX: u8 = 5;

/// `sdflags`: `rd` | `wr`.
pub const SDFLAGS_ALL: u8 = 3;

/// `preopentype::dir`.
pub const PREOPENTYPE_DIR: u8 = 0;

/// Byte layouts (size, and field offsets) of the witx structures on wasm32.
pub mod layout {
    /// `iovec` / `ciovec`: `buf: u32` at 0, `buf_len: u32` at 4.
    pub const IOVEC_SIZE: u32 = 8;
    /// `fdstat`: filetype u8 @0, flags u16 @2, rights_base u64 @8, rights_inheriting u64 @16.
    pub const FDSTAT_SIZE: u32 = 24;
    /// `filestat`: dev @0, ino @8, filetype u8 @16, nlink @24, size @32, atim @40, mtim @48,
    /// ctim @56.
    pub const FILESTAT_SIZE: u32 = 64;
    /// `prestat`: tag u8 @0, pr_name_len u32 @4.
    pub const PRESTAT_SIZE: u32 = 8;
    /// `dirent`: d_next u64 @0, d_ino u64 @8, d_namlen u32 @16, d_type u8 @20.
    pub const DIRENT_SIZE: u32 = 24;
    /// `subscription`: userdata u64 @0, tag u8 @8, union @16 (clock: id u32 @16, timeout u64
    /// @24, precision u64 @32, flags u16 @40; fd_readwrite: fd u32 @16).
    pub const SUBSCRIPTION_SIZE: u32 = 48;
    /// `event`: userdata u64 @0, error u16 @8, type u8 @10, nbytes u64 @16, flags u16 @24.
    pub const EVENT_SIZE: u32 = 32;
}

/// Linux errno → WASI errno, by meaning.
pub const LINUX_TO_WASI: &[(Errno, WasiErrno)] = &[
    (Errno::E2BIG, WasiErrno::TooBig),
    (Errno::EACCES, WasiErrno::Acces),
    (Errno::EADDRINUSE, WasiErrno::Addrinuse),
    (Errno::EADDRNOTAVAIL, WasiErrno::Addrnotavail),
    (Errno::EAFNOSUPPORT, WasiErrno::Afnosupport),
    (Errno::EAGAIN, WasiErrno::Again),
    (Errno::EALREADY, WasiErrno::Already),
    (Errno::EBADF, WasiErrno::Badf),
    (Errno::EBADMSG, WasiErrno::Badmsg),
    (Errno::EBUSY, WasiErrno::Busy),
    (Errno::ECANCELED, WasiErrno::Canceled),
    (Errno::ECHILD, WasiErrno::Child),
    (Errno::ECONNABORTED, WasiErrno::Connaborted),
    (Errno::ECONNREFUSED, WasiErrno::Connrefused),
    (Errno::ECONNRESET, WasiErrno::Connreset),
    (Errno::EDEADLK, WasiErrno::Deadlk),
    (Errno::EDESTADDRREQ, WasiErrno::Destaddrreq),
    (Errno::EDOM, WasiErrno::Dom),
    (Errno::EDQUOT, WasiErrno::Dquot),
    (Errno::EEXIST, WasiErrno::Exist),
    (Errno::EFAULT, WasiErrno::Fault),
    (Errno::EFBIG, WasiErrno::Fbig),
    (Errno::EHOSTUNREACH, WasiErrno::Hostunreach),
    (Errno::EIDRM, WasiErrno::Idrm),
    (Errno::EILSEQ, WasiErrno::Ilseq),
    (Errno::EINPROGRESS, WasiErrno::Inprogress),
    (Errno::EINTR, WasiErrno::Intr),
    (Errno::EINVAL, WasiErrno::Inval),
    (Errno::EIO, WasiErrno::Io),
    (Errno::EISCONN, WasiErrno::Isconn),
    (Errno::EISDIR, WasiErrno::Isdir),
    (Errno::ELOOP, WasiErrno::Loop),
    (Errno::EMFILE, WasiErrno::Mfile),
    (Errno::EMLINK, WasiErrno::Mlink),
    (Errno::EMSGSIZE, WasiErrno::Msgsize),
    (Errno::EMULTIHOP, WasiErrno::Multihop),
    (Errno::ENAMETOOLONG, WasiErrno::Nametoolong),
    (Errno::ENETDOWN, WasiErrno::Netdown),
    (Errno::ENETRESET, WasiErrno::Netreset),
    (Errno::ENETUNREACH, WasiErrno::Netunreach),
    (Errno::ENFILE, WasiErrno::Nfile),
    (Errno::ENOBUFS, WasiErrno::Nobufs),
    (Errno::ENODEV, WasiErrno::Nodev),
    (Errno::ENOENT, WasiErrno::Noent),
    (Errno::ENOEXEC, WasiErrno::Noexec),
    (Errno::ENOLCK, WasiErrno::Nolck),
    (Errno::ENOLINK, WasiErrno::Nolink),
    (Errno::ENOMEM, WasiErrno::Nomem),
    (Errno::ENOMSG, WasiErrno::Nomsg),
    (Errno::ENOPROTOOPT, WasiErrno::Noprotoopt),
    (Errno::ENOSPC, WasiErrno::Nospc),
    (Errno::ENOSYS, WasiErrno::Nosys),
    (Errno::ENOTCONN, WasiErrno::Notconn),
    (Errno::ENOTDIR, WasiErrno::Notdir),
    (Errno::ENOTEMPTY, WasiErrno::Notempty),
    (Errno::ENOTRECOVERABLE, WasiErrno::Notrecoverable),
    (Errno::ENOTSOCK, WasiErrno::Notsock),
    (Errno::EOPNOTSUPP, WasiErrno::Notsup),
    (Errno::ENOTTY, WasiErrno::Notty),
    (Errno::ENXIO, WasiErrno::Nxio),
    (Errno::EOVERFLOW, WasiErrno::Overflow),
    (Errno::EOWNERDEAD, WasiErrno::Ownerdead),
    (Errno::EPERM, WasiErrno::Perm),
    (Errno::EPIPE, WasiErrno::Pipe),
    (Errno::EPROTO, WasiErrno::Proto),
    (Errno::EPROTONOSUPPORT, WasiErrno::Protonosupport),
    (Errno::EPROTOTYPE, WasiErrno::Prototype),
    (Errno::ERANGE, WasiErrno::Range),
    (Errno::EROFS, WasiErrno::Rofs),
    (Errno::ESPIPE, WasiErrno::Spipe),
    (Errno::ESRCH, WasiErrno::Srch),
    (Errno::ESTALE, WasiErrno::Stale),
    (Errno::ETIMEDOUT, WasiErrno::Timedout),
    (Errno::ETXTBSY, WasiErrno::Txtbsy),
    (Errno::EXDEV, WasiErrno::Xdev),
];

impl From<Errno> for WasiErrno {
    fn from(e: Errno) -> WasiErrno {
        LINUX_TO_WASI
            .iter()
            .find(|(l, _)| *l == e)
            .map_or(WasiErrno::Io, |(_, w)| *w)
    }
}

impl From<std::io::Error> for WasiErrno {
    fn from(e: std::io::Error) -> WasiErrno {
        WasiErrno::from(&e)
    }
}

impl From<&std::io::Error> for WasiErrno {
    fn from(e: &std::io::Error) -> WasiErrno {
        if e.raw_os_error().is_none()
            && e.kind() == std::io::ErrorKind::PermissionDenied
            && e.get_ref().is_some_and(|inner| !inner.is::<Errno>())
        {
            // cap-std's "a path led outside of the filesystem".
            return WasiErrno::Notcapable;
        }
        Errno::from_io_error(e).into()
    }
}

impl From<core::num::TryFromIntError> for WasiErrno {
    fn from(_: core::num::TryFromIntError) -> WasiErrno {
        WasiErrno::Overflow
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn table_is_a_function_and_injective() {
        for (i, (l, w)) in LINUX_TO_WASI.iter().enumerate() {
            for (l2, w2) in &LINUX_TO_WASI[i + 1..] {
                assert_ne!(l, l2, "{l:?} mapped twice");
                assert_ne!(w, w2, "{w:?} is the image of two errnos");
            }
        }
        // Every WASI errno but success and notcapable has a Linux counterpart.
        assert_eq!(LINUX_TO_WASI.len(), 76 - 1);
    }

    #[test]
    fn core_errnos_map_by_meaning() {
        assert_eq!(WasiErrno::from(Errno::EBADF), WasiErrno::Badf);
        assert_eq!(WasiErrno::from(Errno::EMFILE), WasiErrno::Mfile);
        assert_eq!(WasiErrno::from(Errno::ENOMEM), WasiErrno::Nomem);
        assert_eq!(WasiErrno::from(Errno::EBUSY), WasiErrno::Busy);
        // A Linux errno WASI does not name.
        assert_eq!(WasiErrno::from(Errno::new(200)), WasiErrno::Io);
    }

    #[test]
    fn io_errors_map_through_the_same_table() {
        let e = io::Error::from(Errno::ENOTEMPTY);
        assert_eq!(WasiErrno::from(&e), WasiErrno::Notempty);
        let escape = io::Error::new(
            io::ErrorKind::PermissionDenied,
            "a path led outside of the filesystem",
        );
        assert_eq!(WasiErrno::from(&escape), WasiErrno::Notcapable);
        let eacces = io::Error::from(Errno::EACCES);
        assert_eq!(WasiErrno::from(&eacces), WasiErrno::Acces);
    }
}

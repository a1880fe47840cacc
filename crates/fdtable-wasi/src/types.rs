//! WASI preview 1 types with `wasi_snapshot_preview1.witx`'s numbering and layouts: the errno
//! values, rights, flags, file types, and the byte layout of the structures the calls read and
//! write in guest memory (wasm32: little-endian, 32-bit pointers).

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

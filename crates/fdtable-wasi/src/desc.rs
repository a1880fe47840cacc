//! What a descriptor refers to (the table's open file description), and the per-fd payload
//! kept beside it.

use crate::types::{Filetype, Rights};
use fdtable::FileLike;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The per-fd payload: WASI's rights and `fdflags`, kept by the table beside each descriptor
/// (plain `Copy` data, moved with the file by `fd_renumber`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FdEntry {
    /// `fs_rights_base`: what this descriptor may be used for.
    pub base: Rights,
    /// `fs_rights_inheriting`: what descriptors opened through it may be given.
    pub inheriting: Rights,
    /// `fs_flags` (`fdflags`).
    pub flags: u16,
}

/// Where the guest's standard input comes from.
#[derive(Debug, Default)]
pub enum Input {
    /// The host process's standard input.
    #[default]
    Inherit,
    /// These bytes, then end of file.
    Bytes(Mutex<VecDeque<u8>>),
}

/// Where the guest's standard output or error goes.
#[derive(Debug, Default, Clone)]
pub enum Output {
    /// The host process's own stream (unbuffered: the guest buffers).
    #[default]
    Inherit,
    /// Kept in memory (tests, benchmarks).
    Capture(Arc<Mutex<Vec<u8>>>),
    /// Discarded.
    Null,
}

/// One of the three standard streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdioKind {
    /// Standard input (fd 0 at start).
    In,
    /// Standard output (fd 1 at start).
    Out,
    /// Standard error (fd 2 at start).
    Err,
}

/// An open host file (regular file, or anything else that is not a directory).
#[derive(Debug)]
pub struct HostFile {
    /// The host file; reads, writes and seeks use its own offset, and `APPEND` is the host's
    /// `O_APPEND`, so the guest sees the kernel's file-position semantics.
    pub file: std::fs::File,
    /// The file's type, fixed at open.
    pub filetype: Filetype,
}

/// An open host directory: a capability for the tree below it.
#[derive(Debug)]
pub struct HostDir {
    /// Every path operation resolves beneath it (cap-std: no `..` past it, no absolute paths,
    /// no symbolic links leading out).
    pub dir: cap_std::fs::Dir,
    /// The guest path of a preopened directory (`fd_prestat_*`), `None` for one opened later.
    pub preopen: Option<String>,
    /// `fd_readdir`'s state: its cookies and the host descriptor it lists through.
    #[cfg(target_os = "linux")]
    pub(crate) listing: std::sync::Mutex<Listing>,
}

impl HostDir {
    /// The host directory `dir`, opened by the guest (`preopen`: `None`) or preopened as the
    /// guest path `preopen`.
    pub fn new(dir: cap_std::fs::Dir, preopen: Option<String>) -> HostDir {
        HostDir {
            dir,
            preopen,
            #[cfg(target_os = "linux")]
            listing: Default::default(),
        }
    }
}

/// What `fd_readdir` keeps for one open directory.
///
/// A cookie names a host directory offset (`getdents64`'s `d_off`, where `lseek` resumes a
/// listing), so that entries removed or added while the guest reads do not shift the others.
/// The host's offsets use 64 bits (ext4's are hashes), and wasi-libc keeps a `telldir`
/// position in a 32-bit `long`, so the guest sees small numbers instead: cookie `n` ≥ 1 is the
/// `n`-th distinct offset this directory handed out, 0 the start.
#[cfg(target_os = "linux")]
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// Host offsets by cookie - 1.
    offsets: Vec<u64>,
    /// Cookies by host offset.
    cookies: std::collections::HashMap<u64, u64>,
    /// A host descriptor of the directory that can be read (the directory's own may be an
    /// `O_PATH` one), opened by a listing's first `fd_readdir` and kept until a call reaches
    /// the end, so a listing read in several calls opens it once. Only [`ListingFd::MAX`]
    /// listings of the process keep one at a time; the others open it again at each call
    /// (the cookie says where to read on).
    pub(crate) fd: Option<ListingFd>,
}

/// A listing's host descriptor, counted while a listing keeps it: the descriptors the guest's
/// table holds are capped (`--nofile`), and these come on top, so they are capped too: a guest
/// that leaves many listings part-read never makes the host run out.
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub(crate) struct ListingFd {
    pub(crate) fd: std::os::fd::OwnedFd,
    counted: bool,
}

/// Listings' host descriptors kept in this process now.
#[cfg(target_os = "linux")]
static LISTING_FDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[cfg(target_os = "linux")]
impl ListingFd {
    /// At most this many listings keep a host descriptor at once, in the whole process (the
    /// default `--nofile` leaves 64 of the host's descriptors to the host).
    pub(crate) const MAX: usize = 16;

    /// A descriptor opened for one call, not counted.
    pub(crate) fn new(fd: std::os::fd::OwnedFd) -> ListingFd {
        ListingFd { fd, counted: false }
    }

    /// Whether the listing may keep this descriptor for its next call: it already does, or
    /// fewer than [`ListingFd::MAX`] are kept now (it is then counted).
    pub(crate) fn keep(&mut self) -> bool {
        use std::sync::atomic::Ordering;
        if !self.counted {
            // ORDERING: Relaxed; a count of descriptors, which publishes no memory, and its
            // decrement in `drop` needs no order with it either.
            self.counted = LISTING_FDS
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                    (n < Self::MAX).then_some(n + 1)
                })
                .is_ok();
        }
        self.counted
    }
}

#[cfg(target_os = "linux")]
impl Drop for ListingFd {
    fn drop(&mut self) {
        if self.counted {
            // ORDERING: Relaxed; see `keep`: the count pairs with nothing.
            LISTING_FDS.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

#[cfg(target_os = "linux")]
impl Listing {
    /// Past this many offsets, a listing that starts again from cookie 0 forgets them (a
    /// directory whose entries keep changing, listed again and again, would grow it without
    /// end); cookies from before then name nothing, and a listing resumed at one ends.
    const FORGET_AFTER: usize = 1 << 20;

    /// The host offset `cookie` names: `Some(0)` for 0, `None` for a cookie never handed out.
    pub(crate) fn offset(&mut self, cookie: u64) -> Option<u64> {
        if cookie == 0 {
            if self.offsets.len() > Self::FORGET_AFTER {
                self.offsets = Vec::new();
                self.cookies = Default::default();
            }
            return Some(0);
        }
        self.offsets.get(usize::try_from(cookie - 1).ok()?).copied()
    }

    /// The cookie for the host offset `offset`, the same one each time it is asked.
    pub(crate) fn cookie(&mut self, offset: u64) -> u64 {
        let next = self.offsets.len() as u64 + 1;
        let c = *self.cookies.entry(offset).or_insert(next);
        if c == next {
            self.offsets.push(offset);
        }
        c
    }
}

/// An open file description: what an fd refers to.
#[derive(Debug)]
pub enum Desc {
    /// Standard input.
    Stdin(Input),
    /// Standard output or error.
    Stdout(StdioKind, Output),
    /// A file.
    File(HostFile),
    /// A directory.
    Dir(HostDir),
}

impl FileLike for Desc {
    /// Files that may block (standard input) are never lent without a reference.
    fn may_lend(&self) -> bool {
        !matches!(self, Desc::Stdin(Input::Inherit))
    }
}

impl Desc {
    /// The directory, if this is one.
    #[inline]
    pub fn as_dir(&self) -> Option<&HostDir> {
        match self {
            Desc::Dir(d) => Some(d),
            _ => None,
        }
    }
}

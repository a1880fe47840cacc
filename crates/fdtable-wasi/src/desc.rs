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

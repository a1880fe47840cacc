//! [`Namespace`]: the pluggable file system a task's paths resolve in (the mount namespace and
//! the path walk, fs/namei.c), and the open request it receives ([`OpenHow`]).

use crate::file::File;
use crate::ops::FileOperations;
use fdtable::Errno;
use std::sync::Arc;

/// `MAY_WRITE` in [`OpenHow::acc_mode`].
pub const MAY_WRITE: u32 = 2;
/// `MAY_READ` in [`OpenHow::acc_mode`].
pub const MAY_READ: u32 = 4;
/// `MAY_APPEND` in [`OpenHow::acc_mode`].
pub const MAY_APPEND: u32 = 8;

/// An open request after the layer's `build_open_flags`: unknown flags dropped, `O_PATH`
/// reduced to the flags it keeps, `O_LARGEFILE` forced, the creation mode masked by `umask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenHow {
    /// The open flags (`O_CREAT`, `O_TRUNC`, the access mode...), `O_CLOEXEC` included.
    pub flags: u32,
    /// The mode for a file `O_CREAT` makes (permission bits only; 0 without `O_CREAT`).
    pub mode: u32,
    /// The access the open needs (`MAY_READ | MAY_WRITE | MAY_APPEND`); `O_TRUNC` adds
    /// `MAY_WRITE`; 0 for `O_PATH`. A file system refuses a directory with `MAY_WRITE`
    /// (`EISDIR`).
    pub acc_mode: u32,
}

/// What a successful open hands back: the operations of the new file, and whether the open
/// created it. The layer makes the [`File`] from it, after the fd was reserved.
pub struct Opened {
    /// The new file's operations.
    pub ops: Arc<dyn FileOperations>,
    /// Whether `O_CREAT` created the file (`FMODE_CREATED`).
    pub created: bool,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("created", &self.created)
            .finish_non_exhaustive()
    }
}

/// A file-system namespace: resolves paths and opens, creates and removes what they name.
///
/// `at` is where a relative path starts: `None` for the namespace's root (a task with no
/// current directory), or a directory [`File`] the namespace opened earlier (the task's
/// current directory or the `dirfd` of an `*at` call; the layer has checked it is a directory).
/// Absolute paths ignore `at`. `path` is non-empty, shorter than `PATH_MAX` and contains no NUL.
///
/// Errors are the kernel's: `ENOENT`, `ENOTDIR`, `EISDIR`, `EEXIST`, `ENAMETOOLONG`, ...
/// A failed open must not have made anything that needs releasing later: return the error
/// before building the file's state, or drop what was built (`fput_badopen`).
pub trait Namespace: Send + Sync {
    /// Resolves `path` and opens it as `how` says (`do_filp_open`).
    fn open(&self, at: Option<&File>, path: &[u8], how: &OpenHow) -> Result<Opened, Errno>;

    /// `mkdir`. `EROFS` by default.
    fn mkdir(&self, at: Option<&File>, path: &[u8], mode: u32) -> Result<(), Errno> {
        let _ = (at, path, mode);
        Err(Errno::EROFS)
    }

    /// `unlink` (not for directories). `EROFS` by default.
    fn unlink(&self, at: Option<&File>, path: &[u8]) -> Result<(), Errno> {
        let _ = (at, path);
        Err(Errno::EROFS)
    }

    /// `rmdir`. `EROFS` by default.
    fn rmdir(&self, at: Option<&File>, path: &[u8]) -> Result<(), Errno> {
        let _ = (at, path);
        Err(Errno::EROFS)
    }
}

//! `path_*`: calls that resolve a path beneath a directory descriptor.
//!
//! Every path is resolved by cap-std beneath the directory's handle: an absolute path, a `..`
//! that climbs above it or a symbolic link that points out is refused (`Notcapable`), whatever
//! the host's own permissions would allow. The directory fd must be open (`Badf`), be a
//! directory (`Notdir`) and hold the call's rights (`Notcapable`).

use crate::ctx::WasiCtx;
use crate::desc::{Desc, FdEntry, HostDir, HostFile};
use crate::host::stat::filetype_of;
use crate::memory::{CallError, CallResult, GuestMemory};
use crate::types::{Filetype, LOOKUP_SYMLINK_FOLLOW, Rights, WasiErrno, fdflags, oflags};
use cap_fs_ext::{
    DirExt, FollowSymlinks, OpenOptionsFollowExt, OpenOptionsMaybeDirExt, OpenOptionsSyncExt,
};
use cap_std::fs::OpenOptionsExt;
use fdtable::FileRef;

/// The directory behind a descriptor `ctx.dir` checked.
fn host_dir(d: &Desc) -> CallResult<&cap_std::fs::Dir> {
    d.as_dir()
        .map(|d| &d.dir)
        .ok_or(CallError::Errno(WasiErrno::Notdir))
}

/// `path` without its trailing slashes, and whether it had any. In the kernel's lookup a
/// trailing slash asks for a directory (and follows a symbolic link in the last component to
/// one): `f/` of a file is ENOTDIR, `l/` of a link to a directory is the directory. cap-std
/// drops the slashes, so the calls that would otherwise act on the wrong file check them
/// here. A path of slashes alone is left as it is.
pub(crate) fn trailing_slash(path: &str) -> (&str, bool) {
    let base = path.trim_end_matches('/');
    if base.is_empty() || base.len() == path.len() {
        (path, false)
    } else {
        (base, true)
    }
}

pub(super) fn path_create_directory(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    path: u32,
    len: u32,
) -> CallResult {
    let (file, _) = ctx.dir(fd, Rights::PATH_CREATE_DIRECTORY)?;
    let p = mem.path(path, len)?;
    host_dir(&file)?.create_dir(p)?;
    Ok(())
}

pub(super) fn path_remove_directory(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    path: u32,
    len: u32,
) -> CallResult {
    let (file, _) = ctx.dir(fd, Rights::PATH_REMOVE_DIRECTORY)?;
    let p = mem.path(path, len)?;
    // rmdir("d/") removes d (and is ENOTDIR for a link to a directory: the host's rmdir of
    // the link says so).
    host_dir(&file)?.remove_dir(trailing_slash(p).0)?;
    Ok(())
}

pub(super) fn path_unlink_file(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    path: u32,
    len: u32,
) -> CallResult {
    let (file, _) = ctx.dir(fd, Rights::PATH_UNLINK_FILE)?;
    let p = mem.path(path, len)?;
    let (base, slash) = trailing_slash(p);
    if slash {
        // unlink("x/") unlinks nothing: EISDIR for a directory, ENOTDIR for anything else
        // (a link to a directory included), as do_unlinkat answers.
        let m = host_dir(&file)?.symlink_metadata(base)?;
        return Err(if m.is_dir() {
            WasiErrno::Isdir
        } else {
            WasiErrno::Notdir
        }
        .into());
    }
    host_dir(&file)?.remove_file_or_symlink(p)?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(super) fn path_link(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    flags: u32,
    path: u32,
    len: u32,
    to_fd: u32,
    to: u32,
    to_len: u32,
) -> CallResult {
    if flags & !LOOKUP_SYMLINK_FOLLOW != 0 {
        return Err(WasiErrno::Inval.into());
    }
    let (src, _) = ctx.dir(fd, Rights::PATH_LINK_SOURCE)?;
    let (dst, _) = ctx.dir(to_fd, Rights::PATH_LINK_TARGET)?;
    if flags & LOOKUP_SYMLINK_FOLLOW != 0 {
        // linkat(AT_SYMLINK_FOLLOW) cannot be confined portably: refused, as wasmtime does.
        return Err(WasiErrno::Inval.into());
    }
    let p = mem.path(path, len)?;
    let q = mem.path(to, to_len)?;
    host_dir(&src)?.hard_link(p, host_dir(&dst)?, q)?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(super) fn path_rename(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    path: u32,
    len: u32,
    to_fd: u32,
    to: u32,
    to_len: u32,
) -> CallResult {
    let (src, _) = ctx.dir(fd, Rights::PATH_RENAME_SOURCE)?;
    let (dst, _) = ctx.dir(to_fd, Rights::PATH_RENAME_TARGET)?;
    let p = mem.path(path, len)?;
    let q = mem.path(to, to_len)?;
    let ((p0, p_slash), (q0, q_slash)) = (trailing_slash(p), trailing_slash(q));
    if p_slash || q_slash {
        // A trailing slash on either name is only for a directory: renaming anything else so
        // is ENOTDIR (renameat2), never a rename of `a` over the file `b` for `b/`.
        if !host_dir(&src)?.symlink_metadata(p0)?.is_dir() {
            return Err(WasiErrno::Notdir.into());
        }
    }
    host_dir(&src)?.rename(p0, host_dir(&dst)?, q0)?;
    Ok(())
}

pub(super) fn path_symlink(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    target: u32,
    target_len: u32,
    fd: u32,
    path: u32,
    len: u32,
) -> CallResult {
    let (file, _) = ctx.dir(fd, Rights::PATH_SYMLINK)?;
    let t = mem.path(target, target_len)?;
    let p = mem.path(path, len)?;
    symlink(host_dir(&file)?, t, p)
}

/// A link whose target would lead out of the sandbox (an absolute path, too many `..`) is
/// refused when it is made (`Notcapable`), not only when it is followed.
fn symlink(dir: &cap_std::fs::Dir, target: &str, path: &str) -> CallResult {
    dir.symlink(target, path)?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(super) fn path_readlink(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    path: u32,
    len: u32,
    buf: u32,
    buf_len: u32,
    out: u32,
) -> CallResult {
    mem.check(out, 4, 4)?;
    mem.slice(buf, buf_len)?;
    let (file, _) = ctx.dir(fd, Rights::PATH_READLINK)?;
    let p = mem.path(path, len)?;
    let link = host_dir(&file)?.read_link_contents(p)?;
    drop(file);
    let bytes = link.as_os_str().as_encoded_bytes();
    let n = bytes.len().min(buf_len as usize);
    mem.write_bytes(buf, &bytes[..n])?;
    mem.write_u32(out, n as u32)?;
    Ok(())
}

/// `path_open`, the kernel's way: check the arguments and the directory's rights, reserve the
/// lowest free fd (`Mfile` if there is none), open the file, install it with its rights in one
/// step. A failed open drops the reservation: the fd is free again and nothing was ever visible
/// at it. The new fd's rights are those asked for (every one of which the directory must be
/// able to hand down: `Notcapable` otherwise), kept where they apply to the file's type.
#[allow(clippy::too_many_arguments)]
pub(super) fn path_open(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    dirflags: u32,
    path: u32,
    len: u32,
    oflags: u32,
    base: u64,
    inheriting: u64,
    fdflags: u32,
    out: u32,
) -> CallResult {
    let (base, inheriting) = (Rights(base), Rights(inheriting));
    if dirflags & !LOOKUP_SYMLINK_FOLLOW != 0
        || oflags & !(oflags::ALL as u32) != 0
        || fdflags & !(fdflags::ALL as u32) != 0
        || !Rights::ALL.contains(base)
        || !Rights::ALL.contains(inheriting)
    {
        return Err(WasiErrno::Inval.into());
    }
    let (oflags, fdflags) = (oflags as u16, fdflags as u16);
    // O_DIRECTORY | O_CREAT is EINVAL (Linux 6.4 on); with O_TRUNC the open itself answers
    // (EISDIR for a directory, ENOTDIR for anything else), and O_EXCL without O_CREAT means
    // nothing, as in the kernel's open.
    if oflags & oflags::DIRECTORY != 0 && oflags & oflags::CREAT != 0 {
        return Err(WasiErrno::Inval.into());
    }
    // The result is written last: check it can be before anything is opened.
    mem.check(out, 4, 4)?;
    let mut need = Rights::PATH_OPEN;
    if oflags & oflags::CREAT != 0 {
        need = need.union(Rights::PATH_CREATE_FILE);
    }
    // O_TRUNC: the directory's `PATH_FILESTAT_SET_SIZE`, unless the new descriptor asks for
    // `FD_FILESTAT_SET_SIZE`, with which it could truncate the file itself as soon as it is
    // open (the directory must still hand that right down). Go's `os.Root` opens its
    // directory without the first and creates files with `O_TRUNC` and the second.
    if oflags & oflags::TRUNC != 0 && !base.contains(Rights::FD_FILESTAT_SET_SIZE) {
        need = need.union(Rights::PATH_FILESTAT_SET_SIZE);
    }
    let (dir, entry) = ctx.dir(fd, need)?;
    if !entry.inheriting.contains(base.union(inheriting)) {
        return Err(WasiErrno::Notcapable.into());
    }
    let p = mem.path(path, len)?;

    let mut opts = cap_std::fs::OpenOptions::new();
    opts.maybe_dir(true);
    if oflags & oflags::DIRECTORY != 0 {
        // O_DIRECTORY: anything else is `notdir` before it is opened, as in the kernel's
        // open; opening first would block on a FIFO with no writer, or open a device.
        opts.custom_flags(rustix::fs::OFlags::DIRECTORY.bits() as i32);
    }
    opts.follow(if dirflags & LOOKUP_SYMLINK_FOLLOW != 0 {
        FollowSymlinks::Yes
    } else {
        FollowSymlinks::No
    });
    let mut write = base.contains(Rights::FD_WRITE);
    if oflags & oflags::CREAT != 0 {
        write = true;
        if oflags & oflags::EXCL != 0 {
            opts.create_new(true);
        } else {
            opts.create(true);
        }
    }
    if oflags & oflags::TRUNC != 0 {
        write = true;
        opts.truncate(true);
    }
    // APPEND is set on the host file once it is open (std refuses to truncate and append in
    // one open; the kernel does not).
    let append = fdflags & fdflags::APPEND != 0;
    write |= append;
    opts.write(write);
    // Read unless the fd is for writing only: the host lets us open it, rights do the rest.
    opts.read(base.contains(Rights::FD_READ) || !write);
    opts.dsync(fdflags & fdflags::DSYNC != 0);
    opts.sync(fdflags & fdflags::SYNC != 0);
    opts.rsync(fdflags & fdflags::RSYNC != 0);
    opts.nonblock(fdflags & fdflags::NONBLOCK != 0);

    // Reserve first: a full table fails here, before any host file is opened (and so before
    // one could leak); every failure below gives the fd back when `slot` drops.
    let slot = ctx.files.get_unused_fd_flags(0, ctx.nofile)?;
    let opened = host_dir(&dir)?.open_with(p, &opts)?.into_std();
    let ft = filetype_of(cap_std::fs::Metadata::from_file(&opened)?.file_type());
    let (desc, mask) = if ft == Filetype::Directory {
        let d = cap_std::fs::Dir::from_std_file(opened);
        (Desc::Dir(HostDir::new(d, None)), Rights::DIRECTORY)
    } else if oflags & oflags::DIRECTORY != 0 {
        return Err(WasiErrno::Notdir.into());
    } else {
        if append {
            super::fd::set_status_flags(&opened, fdflags)?;
        }
        let file = HostFile {
            file: opened,
            filetype: ft,
        };
        (Desc::File(file), Rights::FILE)
    };
    let entry = FdEntry {
        base: base.intersect(mask),
        inheriting,
        flags: fdflags,
    };
    let new = slot.install_with(FileRef::try_new(desc)?, entry);
    drop(dir);
    mem.write_u32(out, new)?;
    Ok(())
}

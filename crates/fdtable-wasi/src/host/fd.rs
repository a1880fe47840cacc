//! `fd_*`: descriptor calls.
//!
//! Order of checks, as Linux checks `FMODE_READ` before a file's type: the fd must be open
//! (`Badf`), must hold the call's rights (`Notcapable`), then the file must be of a kind the
//! call applies to (`Isdir`, `Spipe`, `Badf`).

use crate::ctx::WasiCtx;
use crate::desc::{Desc, FdEntry, Input, Output, StdioKind};
use crate::host::stat::stdio_filetype;
use crate::memory::{CallError, CallResult, GuestMemory};
use crate::types::{Filetype, Rights, WasiErrno, fdflags, layout, whence};
use std::io::{IoSlice, Read, Seek, SeekFrom, Write};

/// Iovecs gathered on the stack for one `writev`; more are written in further calls.
const MAX_IOV: usize = 16;

/// An iovec array longer than the kernel's `UIO_MAXIOV` (1,024) is `inval`, as `readv` and
/// `writev` answer once the descriptor has been checked.
fn iov_count(n: u32) -> CallResult {
    const UIO_MAXIOV: u32 = 1024;
    if n > UIO_MAXIOV {
        return Err(CallError::Errno(WasiErrno::Inval));
    }
    Ok(())
}

fn badf<T>() -> CallResult<T> {
    Err(CallError::Errno(WasiErrno::Badf))
}

/// The first non-empty buffer of an iovec array (a read fills one buffer per call, as
/// wasmtime's host does: a second read could block after the first filled its buffer).
fn first_nonempty(mem: &GuestMemory<'_>, iovs: u32, n: u32) -> CallResult<(u32, u32)> {
    Ok(mem
        .iovecs(iovs, n)?
        .find(|&(_, len)| len > 0)
        .unwrap_or((0, 0)))
}

pub(super) fn fd_read(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    out: u32,
) -> CallResult {
    mem.check(out, 4, 4)?;
    let (file, _) = ctx.get(fd, Rights::FD_READ)?;
    iov_count(n)?;
    let mut total = 0usize;
    match &*file {
        Desc::File(f) if f.filetype == Filetype::RegularFile => {
            // A regular file never blocks: fill the buffers in turn until a short read.
            let bufs: Vec<(u32, u32)> = mem.iovecs(iovs, n)?.collect();
            for (ptr, len) in bufs {
                let buf = mem.slice_mut(ptr, len)?;
                let got = (&f.file).read(buf)?;
                total += got;
                if got < len as usize {
                    break;
                }
            }
        }
        Desc::File(f) => {
            let (ptr, len) = first_nonempty(mem, iovs, n)?;
            total = (&f.file).read(mem.slice_mut(ptr, len)?)?;
        }
        Desc::Stdin(input) => {
            let (ptr, len) = first_nonempty(mem, iovs, n)?;
            let buf = mem.slice_mut(ptr, len)?;
            total = match input {
                Input::Bytes(q) => {
                    let mut q = q.lock().unwrap_or_else(|p| p.into_inner());
                    let k = q.len().min(buf.len());
                    for (dst, src) in buf.iter_mut().zip(q.drain(..k)) {
                        *dst = src;
                    }
                    k
                }
                Input::Inherit => read_host_stdin(buf)?,
            };
        }
        Desc::Dir(_) => return Err(WasiErrno::Isdir.into()),
        Desc::Stdout(..) => return badf(),
    }
    drop(file);
    mem.write_u32(out, u32::try_from(total)?)?;
    Ok(())
}

fn read_host_stdin(buf: &mut [u8]) -> std::io::Result<usize> {
    // Unbuffered: std's Stdin would read ahead into a buffer the guest never sees.
    Ok(rustix::io::read(std::io::stdin(), buf)?)
}

pub(super) fn fd_write(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    out: u32,
) -> CallResult {
    mem.check(out, 4, 4)?;
    let (file, _) = ctx.get(fd, Rights::FD_WRITE)?;
    iov_count(n)?;
    let total = match &*file {
        Desc::File(f) => gather_write(mem, iovs, n, |b| (&f.file).write_vectored(b))?,
        Desc::Stdout(kind, output) => match output {
            Output::Inherit => gather_write(mem, iovs, n, |b| write_host_stdio(*kind, b))?,
            Output::Capture(buf) => {
                let mut v = buf.lock().unwrap_or_else(|p| p.into_inner());
                let mut total = 0usize;
                for (ptr, len) in mem.iovecs(iovs, n)? {
                    v.extend_from_slice(mem.slice(ptr, len)?);
                    total += len as usize;
                }
                total
            }
            Output::Null => {
                let mut total = 0usize;
                for (ptr, len) in mem.iovecs(iovs, n)? {
                    mem.slice(ptr, len)?;
                    total += len as usize;
                }
                total
            }
        },
        Desc::Dir(_) => return Err(WasiErrno::Isdir.into()),
        Desc::Stdin(_) => return badf(),
    };
    drop(file);
    mem.write_u32(out, u32::try_from(total)?)?;
    Ok(())
}

/// Writes the iovecs with as few `writev` calls as the stack array allows, stopping at a
/// short write; every buffer is bounds-checked before anything is written.
fn gather_write(
    mem: &GuestMemory<'_>,
    iovs: u32,
    n: u32,
    mut write: impl FnMut(&[IoSlice<'_>]) -> std::io::Result<usize>,
) -> CallResult<usize> {
    let mut it = mem.iovecs(iovs, n)?.peekable();
    let mut total = 0usize;
    loop {
        let mut slices: [IoSlice<'_>; MAX_IOV] = [IoSlice::new(&[]); MAX_IOV];
        let mut k = 0;
        let mut want = 0usize;
        while k < MAX_IOV {
            let Some((ptr, len)) = it.next() else { break };
            slices[k] = IoSlice::new(mem.slice(ptr, len)?);
            want += len as usize;
            k += 1;
        }
        if k == 0 {
            return Ok(total);
        }
        let wrote = match write(&slices[..k]) {
            Ok(w) => w,
            // Some bytes went out: report them, as writev would have.
            Err(_) if total > 0 => return Ok(total),
            Err(e) => return Err(e.into()),
        };
        total += wrote;
        if wrote < want || it.peek().is_none() {
            return Ok(total);
        }
    }
}

fn write_host_stdio(kind: StdioKind, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
    // Unbuffered, straight to the host's fd 1 or 2: the guest does its own buffering.
    Ok(match kind {
        StdioKind::Err => rustix::io::writev(std::io::stderr(), bufs)?,
        _ => rustix::io::writev(std::io::stdout(), bufs)?,
    })
}

pub(super) fn fd_pread(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    offset: u64,
    out: u32,
) -> CallResult {
    mem.check(out, 4, 4)?;
    let (file, _) = ctx.get(fd, Rights::FD_READ.union(Rights::FD_SEEK))?;
    iov_count(n)?;
    let f = match &*file {
        Desc::File(f) => f,
        Desc::Dir(_) => return Err(WasiErrno::Isdir.into()),
        Desc::Stdin(_) | Desc::Stdout(..) => return Err(WasiErrno::Spipe.into()),
    };
    let bufs: Vec<(u32, u32)> = mem.iovecs(iovs, n)?.collect();
    let mut total = 0u64;
    for (ptr, len) in bufs {
        let at = offset.checked_add(total).ok_or(WasiErrno::Overflow)?;
        let got = read_at(&f.file, mem.slice_mut(ptr, len)?, at)?;
        total += got as u64;
        if got < len as usize {
            break;
        }
    }
    drop(file);
    mem.write_u32(out, u32::try_from(total)?)?;
    Ok(())
}

pub(super) fn fd_pwrite(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    iovs: u32,
    n: u32,
    offset: u64,
    out: u32,
) -> CallResult {
    mem.check(out, 4, 4)?;
    let (file, _) = ctx.get(fd, Rights::FD_WRITE.union(Rights::FD_SEEK))?;
    iov_count(n)?;
    let f = match &*file {
        Desc::File(f) => f,
        Desc::Dir(_) => return Err(WasiErrno::Isdir.into()),
        Desc::Stdin(_) | Desc::Stdout(..) => return Err(WasiErrno::Spipe.into()),
    };
    let mut total = 0u64;
    for (ptr, len) in mem.iovecs(iovs, n)? {
        let at = offset.checked_add(total).ok_or(WasiErrno::Overflow)?;
        let put = write_at(&f.file, mem.slice(ptr, len)?, at)?;
        total += put as u64;
        if put < len as usize {
            break;
        }
    }
    drop(file);
    mem.write_u32(out, u32::try_from(total)?)?;
    Ok(())
}

fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(f, buf, at)
}

fn write_at(f: &std::fs::File, buf: &[u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::write_at(f, buf, at)
}

pub(super) fn fd_seek(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    offset: u64,
    whence: u32,
    out: u32,
) -> CallResult {
    mem.check(out, 8, 8)?;
    let offset = offset as i64;
    let pos = match whence {
        w if w == whence::SET as u32 => {
            SeekFrom::Start(u64::try_from(offset).map_err(|_| WasiErrno::Inval)?)
        }
        w if w == whence::CUR as u32 => SeekFrom::Current(offset),
        w if w == whence::END as u32 => SeekFrom::End(offset),
        _ => return Err(WasiErrno::Inval.into()),
    };
    // A seek that only reads the position needs FD_TELL; any other, FD_SEEK.
    let need = if pos == SeekFrom::Current(0) {
        Rights::FD_TELL
    } else {
        Rights::FD_SEEK
    };
    let (file, _) = ctx.get(fd, need)?;
    let now = match &*file {
        Desc::File(f) => (&f.file).seek(pos)?,
        Desc::Dir(_) => return Err(WasiErrno::Isdir.into()),
        Desc::Stdin(_) | Desc::Stdout(..) => return Err(WasiErrno::Spipe.into()),
    };
    drop(file);
    mem.write_u64(out, now)?;
    Ok(())
}

pub(super) fn fd_tell(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    out: u32,
) -> CallResult {
    mem.check(out, 8, 8)?;
    let (file, _) = ctx.get(fd, Rights::FD_TELL)?;
    let now = match &*file {
        Desc::File(f) => (&f.file).stream_position()?,
        Desc::Dir(_) => return Err(WasiErrno::Isdir.into()),
        Desc::Stdin(_) | Desc::Stdout(..) => return Err(WasiErrno::Spipe.into()),
    };
    drop(file);
    mem.write_u64(out, now)?;
    Ok(())
}

pub(super) fn fd_close(ctx: &mut WasiCtx, _mem: &mut GuestMemory<'_>, fd: u32) -> CallResult {
    // The slot is emptied and the fd freed; the host file is closed when the reference drops.
    let file = ctx.files.file_close_fd(fd)?;
    drop(file);
    Ok(())
}

pub(super) fn fd_renumber(
    ctx: &mut WasiCtx,
    _mem: &mut GuestMemory<'_>,
    from: u32,
    to: u32,
) -> CallResult {
    // Atomic: the file, its rights and flags move to `to` under one table operation, and what
    // was at `to` is closed. `to` must be open: a free or reserved `to` is `Badf`.
    ctx.files.renumber_onto(from, to, ctx.nofile)?;
    Ok(())
}

pub(super) fn fd_fdstat_get(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    out: u32,
) -> CallResult {
    mem.check(out, layout::FDSTAT_SIZE, 8)?;
    let (file, e) = ctx.get(fd, Rights::NONE)?;
    let filetype = match &*file {
        Desc::File(f) => f.filetype,
        Desc::Dir(_) => Filetype::Directory,
        Desc::Stdin(input) => match input {
            Input::Inherit => stdio_filetype(StdioKind::In),
            Input::Bytes(_) => Filetype::Unknown,
        },
        Desc::Stdout(kind, output) => match output {
            Output::Inherit => stdio_filetype(*kind),
            _ => Filetype::Unknown,
        },
    };
    drop(file);
    let mut b = [0u8; layout::FDSTAT_SIZE as usize];
    b[0] = filetype as u8;
    b[2..4].copy_from_slice(&e.flags.to_le_bytes());
    b[8..16].copy_from_slice(&e.base.0.to_le_bytes());
    b[16..24].copy_from_slice(&e.inheriting.0.to_le_bytes());
    mem.write_bytes(out, &b)?;
    Ok(())
}

pub(super) fn fd_fdstat_set_flags(
    ctx: &mut WasiCtx,
    _mem: &mut GuestMemory<'_>,
    fd: u32,
    flags: u32,
) -> CallResult {
    let flags = u16::try_from(flags).map_err(|_| WasiErrno::Inval)?;
    if flags & !fdflags::ALL != 0 {
        return Err(WasiErrno::Inval.into());
    }
    let (file, e) = ctx.get(fd, Rights::FD_FDSTAT_SET_FLAGS)?;
    let sync = fdflags::DSYNC | fdflags::RSYNC | fdflags::SYNC;
    if (flags ^ e.flags) & sync != 0 {
        // The synchronised-I/O flags are chosen at open; no host changes them afterwards
        // (Linux's F_SETFL ignores O_DSYNC and O_SYNC).
        return Err(WasiErrno::Notsup.into());
    }
    // APPEND and NONBLOCK are the host file's own status flags (F_SETFL): a FIFO cleared of
    // NONBLOCK blocks again, as on Linux. The host's standard streams are left as they are
    // (they may be shared with other processes); the guest's flags record what it asked.
    if let Desc::File(f) = &*file
        && (flags ^ e.flags) & (fdflags::APPEND | fdflags::NONBLOCK) != 0
    {
        set_status_flags(&f.file, flags)?;
    }
    drop(file);
    ctx.files.set_fd_payload(fd, FdEntry { flags, ..e })?;
    Ok(())
}

/// Sets the host file's `O_APPEND` and `O_NONBLOCK` to WASI's `APPEND` and `NONBLOCK` in
/// `flags`, leaving its other status flags alone.
pub(super) fn set_status_flags(f: &std::fs::File, flags: u16) -> std::io::Result<()> {
    use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
    let mut fl = fcntl_getfl(f)?;
    fl.set(OFlags::APPEND, flags & fdflags::APPEND != 0);
    fl.set(OFlags::NONBLOCK, flags & fdflags::NONBLOCK != 0);
    Ok(fcntl_setfl(f, fl)?)
}

pub(super) fn fd_fdstat_set_rights(
    ctx: &mut WasiCtx,
    _mem: &mut GuestMemory<'_>,
    fd: u32,
    base: u64,
    inheriting: u64,
) -> CallResult {
    let (base, inheriting) = (Rights(base), Rights(inheriting));
    if !Rights::ALL.contains(base) || !Rights::ALL.contains(inheriting) {
        return Err(WasiErrno::Inval.into());
    }
    let (file, e) = ctx.get(fd, Rights::NONE)?;
    drop(file);
    // Rights may only be dropped.
    if !e.base.contains(base) || !e.inheriting.contains(inheriting) {
        return Err(WasiErrno::Notcapable.into());
    }
    ctx.files.set_fd_payload(
        fd,
        FdEntry {
            base,
            inheriting,
            ..e
        },
    )?;
    Ok(())
}

pub(super) fn fd_prestat_get(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    out: u32,
) -> CallResult {
    mem.check(out, layout::PRESTAT_SIZE, 4)?;
    let (file, _) = ctx.get(fd, Rights::NONE)?;
    let len = match file.as_dir().and_then(|d| d.preopen.as_deref()) {
        Some(name) => u32::try_from(name.len())?,
        None => return badf(),
    };
    drop(file);
    let mut b = [0u8; layout::PRESTAT_SIZE as usize];
    b[0] = crate::types::PREOPENTYPE_DIR;
    b[4..8].copy_from_slice(&len.to_le_bytes());
    mem.write_bytes(out, &b)?;
    Ok(())
}

pub(super) fn fd_prestat_dir_name(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    path: u32,
    len: u32,
) -> CallResult {
    let (file, _) = ctx.get(fd, Rights::NONE)?;
    let Some(name) = file.as_dir().and_then(|d| d.preopen.as_deref()) else {
        return badf();
    };
    if name.len() > len as usize {
        return Err(WasiErrno::Nametoolong.into());
    }
    mem.write_bytes(path, name.as_bytes())?;
    Ok(())
}

pub(super) fn fd_advise(
    ctx: &mut WasiCtx,
    _mem: &mut GuestMemory<'_>,
    fd: u32,
    offset: u64,
    len: u64,
    advice: u32,
) -> CallResult {
    if advice > crate::types::ADVICE_MAX as u32 {
        return Err(WasiErrno::Inval.into());
    }
    let (file, _) = ctx.get(fd, Rights::FD_ADVISE)?;
    match &*file {
        Desc::File(f) => advise(std::os::fd::AsFd::as_fd(&f.file), offset, len, advice),
        // Linux's posix_fadvise(2) takes a directory too, and does nothing with it. (The
        // host's directory handle may be an O_PATH one, which fadvise would call EBADF.)
        Desc::Dir(_) => Ok(()),
        _ => Err(WasiErrno::Spipe.into()),
    }
}

#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn advise(f: std::os::fd::BorrowedFd<'_>, offset: u64, len: u64, advice: u32) -> CallResult {
    use rustix::fs::Advice;
    let a = match advice {
        0 => Advice::Normal,
        1 => Advice::Sequential,
        2 => Advice::Random,
        3 => Advice::WillNeed,
        4 => Advice::DontNeed,
        _ => Advice::NoReuse,
    };
    let len = std::num::NonZeroU64::new(len);
    rustix::fs::fadvise(f, offset, len, a).map_err(|e| std::io::Error::from(e).into())
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn advise(_: std::os::fd::BorrowedFd<'_>, _: u64, _: u64, _: u32) -> CallResult {
    // Advice is advisory; hosts without posix_fadvise (macOS) ignore it.
    Ok(())
}

pub(super) fn fd_allocate(
    ctx: &mut WasiCtx,
    _mem: &mut GuestMemory<'_>,
    fd: u32,
    offset: u64,
    len: u64,
) -> CallResult {
    let (file, _) = ctx.get(fd, Rights::FD_ALLOCATE)?;
    // `vfs_fallocate`'s order: a negative offset (as the kernel's signed `loff_t`) or a length
    // that is not positive is EINVAL, an end past the largest size EFBIG, then the file's type.
    let (Ok(start), Ok(count)) = (i64::try_from(offset), i64::try_from(len)) else {
        return Err(WasiErrno::Inval.into());
    };
    if count == 0 {
        return Err(WasiErrno::Inval.into());
    }
    let end = start.checked_add(count).ok_or(WasiErrno::Fbig)? as u64;
    let f = match &*file {
        Desc::File(f) => f,
        Desc::Dir(_) => return Err(WasiErrno::Isdir.into()),
        _ => return Err(WasiErrno::Spipe.into()),
    };
    // posix_fallocate's visible effect: the file is at least offset + len bytes long.
    if f.file.metadata()?.len() < end {
        f.file.set_len(end)?;
    }
    Ok(())
}

pub(super) fn fd_datasync(ctx: &mut WasiCtx, _mem: &mut GuestMemory<'_>, fd: u32) -> CallResult {
    let (file, _) = ctx.get(fd, Rights::FD_DATASYNC)?;
    match &*file {
        Desc::File(f) => Ok(f.file.sync_data()?),
        Desc::Dir(d) => sync_dir(&d.dir),
        _ => Err(WasiErrno::Inval.into()),
    }
}

pub(super) fn fd_sync(ctx: &mut WasiCtx, _mem: &mut GuestMemory<'_>, fd: u32) -> CallResult {
    let (file, _) = ctx.get(fd, Rights::FD_SYNC)?;
    match &*file {
        Desc::File(f) => Ok(f.file.sync_all()?),
        Desc::Dir(d) => sync_dir(&d.dir),
        _ => Err(WasiErrno::Inval.into()),
    }
}

fn sync_dir(d: &cap_std::fs::Dir) -> CallResult {
    rustix::fs::fsync(d).map_err(|e| std::io::Error::from(e).into())
}

pub(super) fn fd_readdir(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    buf: u32,
    buf_len: u32,
    cookie: u64,
    out: u32,
) -> CallResult {
    mem.check(out, 4, 4)?;
    mem.slice(buf, buf_len)?;
    let (file, _) = ctx.get(fd, Rights::FD_READDIR)?;
    let Some(dir) = file.as_dir() else {
        return Err(WasiErrno::Notdir.into());
    };
    let used = crate::host::stat::readdir(dir, mem, buf, buf_len, cookie)?;
    drop(file);
    mem.write_u32(out, used)?;
    Ok(())
}

//! File attributes (`*_filestat_*`) and directory listings (`fd_readdir`).

use crate::ctx::WasiCtx;
use crate::desc::{Desc, StdioKind};
use crate::memory::{CallResult, GuestMemory};
use crate::types::{Filetype, LOOKUP_SYMLINK_FOLLOW, Rights, WasiErrno, fstflags, layout};
use cap_fs_ext::{DirExt, FileTypeExt, Metadata, OsMetadataExt, SystemTimeSpec};
use std::time::{Duration, SystemTime};

/// A `filestat`, as the guest reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filestat {
    dev: u64,
    ino: u64,
    filetype: u8,
    nlink: u64,
    size: u64,
    atim: u64,
    mtim: u64,
    ctim: u64,
}

impl Filestat {
    fn bytes(&self) -> [u8; layout::FILESTAT_SIZE as usize] {
        let mut b = [0u8; layout::FILESTAT_SIZE as usize];
        b[0..8].copy_from_slice(&self.dev.to_le_bytes());
        b[8..16].copy_from_slice(&self.ino.to_le_bytes());
        b[16] = self.filetype;
        b[24..32].copy_from_slice(&self.nlink.to_le_bytes());
        b[32..40].copy_from_slice(&self.size.to_le_bytes());
        b[40..48].copy_from_slice(&self.atim.to_le_bytes());
        b[48..56].copy_from_slice(&self.mtim.to_le_bytes());
        b[56..64].copy_from_slice(&self.ctim.to_le_bytes());
        b
    }
}

/// Nanoseconds since the epoch (0 before it).
fn ns(sec: i64, nsec: i64) -> u64 {
    u64::try_from(sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(nsec).unwrap_or(0))
}

/// The WASI file type of a host file type.
pub(crate) fn filetype_of(ft: cap_std::fs::FileType) -> Filetype {
    if ft.is_dir() {
        Filetype::Directory
    } else if ft.is_file() {
        Filetype::RegularFile
    } else if ft.is_symlink() {
        Filetype::SymbolicLink
    } else if ft.is_char_device() {
        Filetype::CharacterDevice
    } else if ft.is_block_device() {
        Filetype::BlockDevice
    } else if ft.is_socket() {
        Filetype::SocketStream
    } else {
        Filetype::Unknown
    }
}

fn filestat(m: &Metadata) -> Filestat {
    Filestat {
        dev: m.dev(),
        ino: m.ino(),
        filetype: filetype_of(m.file_type()) as u8,
        nlink: m.nlink(),
        size: m.size(),
        atim: ns(m.atime(), m.atime_nsec()),
        mtim: ns(m.mtime(), m.mtime_nsec()),
        ctim: ns(m.ctime(), m.ctime_nsec()),
    }
}

/// The type of the host's standard stream: a terminal is a character device, a redirected
/// file a regular file, a pipe or socket `Unknown` (WASI has no FIFO type).
pub(crate) fn stdio_filetype(kind: StdioKind) -> Filetype {
    use rustix::fs::FileType as T;
    let st = match kind {
        StdioKind::In => rustix::fs::fstat(std::io::stdin()),
        StdioKind::Out => rustix::fs::fstat(std::io::stdout()),
        StdioKind::Err => rustix::fs::fstat(std::io::stderr()),
    };
    match st.map(|st| T::from_raw_mode(st.st_mode)) {
        Ok(T::CharacterDevice) => Filetype::CharacterDevice,
        Ok(T::RegularFile) => Filetype::RegularFile,
        Ok(T::BlockDevice) => Filetype::BlockDevice,
        _ => Filetype::Unknown,
    }
}

pub(super) fn fd_filestat_get(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    out: u32,
) -> CallResult {
    mem.check(out, layout::FILESTAT_SIZE, 8)?;
    let (file, _) = ctx.get(fd, Rights::FD_FILESTAT_GET)?;
    let st = match &*file {
        Desc::File(f) => filestat(&Metadata::from_file(&f.file)?),
        Desc::Dir(d) => filestat(&d.dir.dir_metadata()?),
        Desc::Stdin(_) => Filestat {
            filetype: stdio_filetype(StdioKind::In) as u8,
            ..Filestat::default()
        },
        Desc::Stdout(kind, _) => Filestat {
            filetype: stdio_filetype(*kind) as u8,
            ..Filestat::default()
        },
    };
    drop(file);
    mem.write_bytes(out, &st.bytes())?;
    Ok(())
}

pub(super) fn fd_filestat_set_size(
    ctx: &mut WasiCtx,
    _mem: &mut GuestMemory<'_>,
    fd: u32,
    size: u64,
) -> CallResult {
    let (file, _) = ctx.get(fd, Rights::FD_FILESTAT_SET_SIZE)?;
    if i64::try_from(size).is_err() {
        return Err(WasiErrno::Fbig.into());
    }
    match &*file {
        Desc::File(f) => Ok(f.file.set_len(size)?),
        Desc::Dir(_) => Err(WasiErrno::Isdir.into()),
        _ => Err(WasiErrno::Inval.into()),
    }
}

/// `fstflags` and the two timestamps as the host's (time, time) specs; `Inval` for a time
/// asked both given and "now", or an unknown flag.
fn times(
    atim: u64,
    mtim: u64,
    fst: u32,
) -> CallResult<(Option<SystemTimeSpec>, Option<SystemTimeSpec>)> {
    let fst = u16::try_from(fst).map_err(|_| WasiErrno::Inval)?;
    if fst & !fstflags::ALL != 0 {
        return Err(WasiErrno::Inval.into());
    }
    let one = |set: u16, now: u16, t: u64| -> CallResult<Option<SystemTimeSpec>> {
        match (fst & set != 0, fst & now != 0) {
            (true, true) => Err(WasiErrno::Inval.into()),
            (false, true) => Ok(Some(SystemTimeSpec::SymbolicNow)),
            (true, false) => {
                let at = SystemTime::UNIX_EPOCH
                    .checked_add(Duration::from_nanos(t))
                    .ok_or(WasiErrno::Overflow)?;
                Ok(Some(SystemTimeSpec::from_std(at.into())))
            }
            (false, false) => Ok(None),
        }
    };
    Ok((
        one(fstflags::ATIM, fstflags::ATIM_NOW, atim)?,
        one(fstflags::MTIM, fstflags::MTIM_NOW, mtim)?,
    ))
}

pub(super) fn fd_filestat_set_times(
    ctx: &mut WasiCtx,
    _mem: &mut GuestMemory<'_>,
    fd: u32,
    atim: u64,
    mtim: u64,
    fst: u32,
) -> CallResult {
    let (a, m) = times(atim, mtim, fst)?;
    let (file, _) = ctx.get(fd, Rights::FD_FILESTAT_SET_TIMES)?;
    use fs_set_times::SetTimes;
    let (a, m) = (
        a.map(SystemTimeSpec::into_std),
        m.map(SystemTimeSpec::into_std),
    );
    match &*file {
        Desc::File(f) => Ok(SetTimes::set_times(&f.file, a, m)?),
        Desc::Dir(d) => Ok(SetTimes::set_times(&d.dir, a, m)?),
        _ => Err(WasiErrno::Inval.into()),
    }
}

pub(super) fn path_filestat_get(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    flags: u32,
    path: u32,
    len: u32,
    out: u32,
) -> CallResult {
    if flags & !LOOKUP_SYMLINK_FOLLOW != 0 {
        return Err(WasiErrno::Inval.into());
    }
    mem.check(out, layout::FILESTAT_SIZE, 8)?;
    let (file, _) = ctx.dir(fd, Rights::PATH_FILESTAT_GET)?;
    let dir = &file.as_dir().ok_or(WasiErrno::Notdir)?.dir;
    let p = mem.str(path, len)?;
    let m = if flags & LOOKUP_SYMLINK_FOLLOW != 0 {
        dir.metadata(p)?
    } else {
        dir.symlink_metadata(p)?
    };
    drop(file);
    mem.write_bytes(out, &filestat(&m).bytes())?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(super) fn path_filestat_set_times(
    ctx: &mut WasiCtx,
    mem: &mut GuestMemory<'_>,
    fd: u32,
    flags: u32,
    path: u32,
    len: u32,
    atim: u64,
    mtim: u64,
    fst: u32,
) -> CallResult {
    if flags & !LOOKUP_SYMLINK_FOLLOW != 0 {
        return Err(WasiErrno::Inval.into());
    }
    let (a, m) = times(atim, mtim, fst)?;
    let (file, _) = ctx.dir(fd, Rights::PATH_FILESTAT_SET_TIMES)?;
    let dir = &file.as_dir().ok_or(WasiErrno::Notdir)?.dir;
    let p = mem.str(path, len)?;
    if flags & LOOKUP_SYMLINK_FOLLOW != 0 {
        dir.set_times(p, a, m)?;
    } else {
        dir.set_symlink_times(p, a, m)?;
    }
    Ok(())
}

/// Writes `dir`'s entries from index `cookie` into `buf`: `.` and `..` first, then the
/// entries in the host's order, each a `dirent` followed by its name, the last one cut at the
/// end of the buffer (a full buffer tells the guest to call again). Returns the bytes used.
pub(crate) fn readdir(
    dir: &cap_std::fs::Dir,
    mem: &mut GuestMemory<'_>,
    buf: u32,
    buf_len: u32,
    cookie: u64,
) -> CallResult<u32> {
    // u64: a buffer may end at the 4 GiB end of a 32-bit memory.
    let mut at = u64::from(buf);
    let end = at + u64::from(buf_len);
    let mut put = |mem: &mut GuestMemory<'_>,
                   next: u64,
                   ino: u64,
                   ft: Filetype,
                   name: &[u8]|
     -> CallResult<bool> {
        let mut d = [0u8; layout::DIRENT_SIZE as usize];
        d[0..8].copy_from_slice(&next.to_le_bytes());
        d[8..16].copy_from_slice(&ino.to_le_bytes());
        d[16..20].copy_from_slice(&u32::try_from(name.len())?.to_le_bytes());
        d[20] = ft as u8;
        for part in [&d[..], name] {
            let room = (end - at) as usize;
            let k = part.len().min(room);
            mem.write_bytes(at as u32, &part[..k])?;
            at += k as u64;
            if at == end {
                return Ok(false);
            }
        }
        Ok(true)
    };
    let self_ino = dir.dir_metadata()?.ino();
    let mut index = 0u64;
    if cookie <= index && !put(mem, 1, self_ino, Filetype::Directory, b".")? {
        return Ok(buf_len);
    }
    index += 1;
    if cookie <= index {
        // `..` of a preopened directory is outside the sandbox: report the directory itself.
        let parent = dir.metadata("..").map(|m| m.ino()).unwrap_or(self_ino);
        if !put(mem, 2, parent, Filetype::Directory, b"..")? {
            return Ok(buf_len);
        }
    }
    index += 1;
    for entry in dir.entries()? {
        let entry = entry?;
        if cookie <= index {
            let ft = filetype_of(entry.file_type()?);
            let name = entry.file_name();
            let name = name.as_encoded_bytes();
            use std::os::unix::fs::DirEntryExt;
            if !put(mem, index + 1, entry.ino(), ft, name)? {
                return Ok(buf_len);
            }
        }
        index += 1;
    }
    Ok((at - u64::from(buf)) as u32)
}

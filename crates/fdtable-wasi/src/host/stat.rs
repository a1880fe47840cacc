//! File attributes (`*_filestat_*`) and directory listings (`fd_readdir`).

use crate::ctx::WasiCtx;
use crate::desc::{Desc, HostDir, StdioKind};
#[cfg(target_os = "linux")]
use crate::desc::{Listing, ListingFd};
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

/// The type of an inherited standard stream that stays a stream (one [`stdio_as_file`] did
/// not make a file), as a guest sees it: a terminal is a character device; a pipe, a socket
/// or a non-terminal character device is `Unknown` (WASI has no FIFO type), as wasmtime's
/// host answers. wasi-libc's `isatty` is "a character device without `FD_SEEK` or `FD_TELL`
/// rights", and no stream has those rights, so only a terminal may be a character device
/// here. (A regular file or block device is reported as one, should its duplicate fail.)
pub(crate) fn stdio_filetype(kind: StdioKind) -> Filetype {
    use std::os::fd::AsFd;
    match kind {
        StdioKind::In => host_stream_filetype(std::io::stdin().as_fd()),
        StdioKind::Out => host_stream_filetype(std::io::stdout().as_fd()),
        StdioKind::Err => host_stream_filetype(std::io::stderr().as_fd()),
    }
}

/// The host's standard stream `kind` as a file the guest may seek, stat and sync as on Linux,
/// when it is one: a regular file (`< input`, `> output`), a block device, or a character
/// device that is not a terminal (`/dev/null`, shown as the character device it is: with its
/// seek rights, wasi-libc's `isatty` says no). A terminal, a pipe or a socket stays a stream
/// ([`stdio_filetype`]). The file is a duplicate of the host's descriptor (its offset is
/// shared with it, as a child's is with its parent's); with it come the guest's `APPEND` and
/// `NONBLOCK` flags, read from the host's, and its rights: a file's, less `FD_WRITE` if the
/// host opened it for reading only, or `FD_READ` for writing only (wasi-libc's `F_GETFL`
/// derives the access mode from them).
pub(crate) fn stdio_as_file(kind: StdioKind) -> Option<(crate::desc::HostFile, Rights, u16)> {
    use rustix::fs::{FileType as T, OFlags};
    let fd = match kind {
        StdioKind::In => rustix::stdio::stdin(),
        StdioKind::Out => rustix::stdio::stdout(),
        StdioKind::Err => rustix::stdio::stderr(),
    };
    let st = rustix::fs::fstat(fd).ok()?;
    let filetype = match T::from_raw_mode(st.st_mode) {
        T::RegularFile => Filetype::RegularFile,
        T::BlockDevice => Filetype::BlockDevice,
        T::CharacterDevice if !rustix::termios::isatty(fd) => Filetype::CharacterDevice,
        _ => return None,
    };
    let status = rustix::fs::fcntl_getfl(fd).ok()?;
    let mut flags = 0;
    if status.contains(OFlags::APPEND) {
        flags |= crate::types::fdflags::APPEND;
    }
    if status.contains(OFlags::NONBLOCK) {
        flags |= crate::types::fdflags::NONBLOCK;
    }
    let rights = match status & OFlags::RWMODE {
        OFlags::RDONLY => Rights(Rights::FILE.0 & !Rights::FD_WRITE.0),
        OFlags::WRONLY => Rights(Rights::FILE.0 & !Rights::FD_READ.0),
        _ => Rights::FILE,
    };
    let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
    Some((crate::desc::HostFile { file, filetype }, rights, flags))
}

/// [`stdio_filetype`] of one host descriptor.
fn host_stream_filetype(fd: std::os::fd::BorrowedFd<'_>) -> Filetype {
    use rustix::fs::FileType as T;
    match rustix::fs::fstat(fd).map(|st| T::from_raw_mode(st.st_mode)) {
        Ok(T::CharacterDevice) if rustix::termios::isatty(fd) => Filetype::CharacterDevice,
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
    // `ftruncate`: a negative length (as the kernel's signed `loff_t`), or anything but a
    // regular file, is EINVAL.
    if i64::try_from(size).is_err() {
        return Err(WasiErrno::Inval.into());
    }
    match &*file {
        Desc::File(f) => Ok(f.file.set_len(size)?),
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
    let p = mem.path(path, len)?;
    let (base, slash) = super::path::trailing_slash(p);
    let m = if slash {
        // `d/`: a directory, through a symbolic link too, whatever the flags; else ENOTDIR.
        let m = dir.metadata(base)?;
        if !m.is_dir() {
            return Err(WasiErrno::Notdir.into());
        }
        m
    } else if flags & LOOKUP_SYMLINK_FOLLOW != 0 {
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
    let p = mem.path(path, len)?;
    if flags & LOOKUP_SYMLINK_FOLLOW != 0 {
        dir.set_times(p, a, m)?;
    } else {
        dir.set_symlink_times(p, a, m)?;
    }
    Ok(())
}

/// Where `dirent`s go: the guest's buffer, filled from its start.
struct DirentWriter {
    /// u64: a buffer may end at the 4 GiB end of a 32-bit memory.
    at: u64,
    end: u64,
}

impl DirentWriter {
    /// Writes one `dirent` and its name; false once the buffer is full (the last entry cut at
    /// its end, which tells the guest to call again from that entry's cookie).
    fn put(
        &mut self,
        mem: &mut GuestMemory<'_>,
        next: u64,
        ino: u64,
        ft: Filetype,
        name: &[u8],
    ) -> CallResult<bool> {
        let mut d = [0u8; layout::DIRENT_SIZE as usize];
        d[0..8].copy_from_slice(&next.to_le_bytes());
        d[8..16].copy_from_slice(&ino.to_le_bytes());
        d[16..20].copy_from_slice(&u32::try_from(name.len())?.to_le_bytes());
        d[20] = ft as u8;
        for part in [&d[..], name] {
            let room = (self.end - self.at) as usize;
            let k = part.len().min(room);
            mem.write_bytes(self.at as u32, &part[..k])?;
            self.at += k as u64;
            if self.at == self.end {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Writes `dir`'s entries from `cookie` on into `buf`, each a `dirent` followed by its name,
/// the last one cut at the end of the buffer (a full buffer tells the guest to call again).
/// Returns the bytes used.
///
/// On Linux a cookie names the host's own directory offset (`getdents64`'s `d_off`, where
/// `lseek` resumes; [`Listing`]): as with `telldir`/`seekdir`, entries removed or added while
/// a listing is read do not make the entries after them be skipped or repeated (`rm -r`
/// removes each entry as it lists it), and each call reads on from its cookie instead of from
/// the start. Elsewhere a cookie is an entry's index: `.` and `..` first, then the host's
/// order.
pub(crate) fn readdir(
    host: &HostDir,
    mem: &mut GuestMemory<'_>,
    buf: u32,
    buf_len: u32,
    cookie: u64,
) -> CallResult<u32> {
    let dir = &host.dir;
    let mut out = DirentWriter {
        at: u64::from(buf),
        end: u64::from(buf) + u64::from(buf_len),
    };
    let self_ino = dir.dir_metadata()?.ino();
    // `..` of a preopened directory is outside the sandbox: report the directory itself.
    let parent_ino = || dir.metadata("..").map(|m| m.ino()).unwrap_or(self_ino);
    #[cfg(target_os = "linux")]
    let complete = readdir_from_offset(host, mem, &mut out, cookie, parent_ino)?;
    #[cfg(not(target_os = "linux"))]
    let complete = readdir_from_index(dir, mem, &mut out, cookie, self_ino, parent_ino)?;
    Ok(if complete {
        (out.at - u64::from(buf)) as u32
    } else {
        buf_len
    })
}

/// [`readdir`] on Linux: `getdents64` from the host offset `cookie` names, on the listing's
/// own descriptor. False if the buffer filled up.
#[cfg(target_os = "linux")]
fn readdir_from_offset(
    host: &HostDir,
    mem: &mut GuestMemory<'_>,
    out: &mut DirentWriter,
    cookie: u64,
    parent_ino: impl Fn() -> u64,
) -> CallResult<bool> {
    use rustix::fs::{Mode, OFlags};
    let mut listing = host
        .listing
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // A cookie never handed out (a guest's guess, or one forgotten) is the end of the
    // listing, as a `seekdir` past the end would be.
    let Some(start) = listing.offset(cookie) else {
        return Ok(true);
    };
    let mut fd = match listing.fd.take() {
        Some(fd) => fd,
        None => ListingFd::new(
            rustix::fs::openat(
                &host.dir,
                c".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(std::io::Error::from)?,
        ),
    };
    let r = read_entries(&host.dir, &fd.fd, start, &mut listing, mem, out, parent_ino);
    // Kept while the guest is expected to read on (its buffer filled up), if few listings
    // keep one ([`ListingFd`]); closed once the listing has reached its end: a directory held
    // open costs no second host descriptor.
    if matches!(r, Ok(false)) && fd.keep() {
        listing.fd = Some(fd);
    }
    r
}

/// [`readdir_from_offset`]'s reading: the entries of `fd` from the host offset `start` on.
#[cfg(target_os = "linux")]
fn read_entries(
    dir: &cap_std::fs::Dir,
    fd: &std::os::fd::OwnedFd,
    start: u64,
    listing: &mut Listing,
    mem: &mut GuestMemory<'_>,
    out: &mut DirentWriter,
    parent_ino: impl Fn() -> u64,
) -> CallResult<bool> {
    use rustix::fs::{FileType as T, RawDir, SeekFrom};
    use std::mem::MaybeUninit;
    match rustix::fs::seek(fd, SeekFrom::Start(start)) {
        Ok(_) => {}
        Err(rustix::io::Errno::INVAL) => return Ok(true),
        Err(e) => return Err(std::io::Error::from(e).into()),
    }
    let mut buf = vec![MaybeUninit::<u8>::uninit(); 16 * 1024];
    let mut entries = RawDir::new(fd, &mut buf);
    while let Some(entry) = entries.next() {
        let entry = entry.map_err(std::io::Error::from)?;
        let name = entry.file_name().to_bytes();
        let ino = if name == b".." {
            parent_ino()
        } else {
            entry.ino()
        };
        let ft = match entry.file_type() {
            T::Directory => Filetype::Directory,
            T::RegularFile => Filetype::RegularFile,
            T::Symlink => Filetype::SymbolicLink,
            T::CharacterDevice => Filetype::CharacterDevice,
            T::BlockDevice => Filetype::BlockDevice,
            T::Socket => Filetype::SocketStream,
            T::Fifo => Filetype::Unknown,
            // DT_UNKNOWN: the file system does not say in its listing; ask the file.
            _ => {
                use std::os::unix::ffi::OsStrExt;
                dir.symlink_metadata(std::ffi::OsStr::from_bytes(name))
                    .map(|m| filetype_of(m.file_type()))
                    .unwrap_or(Filetype::Unknown)
            }
        };
        let next = listing.cookie(entry.next_entry_cookie());
        if !out.put(mem, next, ino, ft, name)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// [`readdir`] where the host has no directory offsets to hand out: a cookie is an index.
#[cfg(not(target_os = "linux"))]
fn readdir_from_index(
    dir: &cap_std::fs::Dir,
    mem: &mut GuestMemory<'_>,
    out: &mut DirentWriter,
    cookie: u64,
    self_ino: u64,
    parent_ino: impl Fn() -> u64,
) -> CallResult<bool> {
    let mut index = 0u64;
    if cookie <= index && !out.put(mem, 1, self_ino, Filetype::Directory, b".")? {
        return Ok(false);
    }
    index += 1;
    if cookie <= index && !out.put(mem, 2, parent_ino(), Filetype::Directory, b"..")? {
        return Ok(false);
    }
    index += 1;
    for entry in dir.entries()? {
        let entry = entry?;
        if cookie <= index {
            let ft = filetype_of(entry.file_type()?);
            let name = entry.file_name();
            use std::os::unix::fs::DirEntryExt;
            if !out.put(mem, index + 1, entry.ino(), ft, name.as_encoded_bytes())? {
                return Ok(false);
            }
        }
        index += 1;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_standard_stream_is_a_character_device_only_on_a_terminal() {
        let null = std::fs::File::open("/dev/null").unwrap();
        assert_eq!(host_stream_filetype(null.as_fd()), Filetype::Unknown);
        let (r, w) = std::io::pipe().unwrap();
        assert_eq!(host_stream_filetype(r.as_fd()), Filetype::Unknown);
        assert_eq!(host_stream_filetype(w.as_fd()), Filetype::Unknown);
        let file = tempfile::tempfile().unwrap();
        assert_eq!(host_stream_filetype(file.as_fd()), Filetype::RegularFile);
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/ptmx")
            .unwrap();
        assert_eq!(host_stream_filetype(tty.as_fd()), Filetype::CharacterDevice);
    }
}

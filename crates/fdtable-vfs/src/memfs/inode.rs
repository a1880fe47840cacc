//! The in-memory file system's inodes: directories, sparse regular files in 4 KiB pages (like
//! tmpfs), and character-device nodes. An [`Inode`] is itself the [`FileOperations`] of the
//! files opened on it (regular files and directories keep no per-open state).

use crate::devices::CharDevice;
use crate::file::File;
use crate::iov::{IovIter, IovIterMut};
use crate::ops::{FileOperations, Kstat, generic_file_llseek_size, vfs_setpos};
use crate::uapi::*;
use fdtable::Errno;
use std::collections::BTreeMap;
use std::io::{IoSlice, IoSliceMut};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};

type Page = [u8; PAGE_SIZE];

/// tmpfs's `BOGO_DIRENT_SIZE`: a directory's size grows by this per entry.
const BOGO_DIRENT_SIZE: i64 = 20;

/// Per-file-system state: inode numbers and the space limit (tmpfs's `size=`).
#[derive(Debug)]
pub(crate) struct SuperBlock {
    next_ino: AtomicU64,
    max_pages: u64,
    used_pages: AtomicU64,
}

impl SuperBlock {
    pub(crate) fn new(max_bytes: u64) -> Arc<SuperBlock> {
        Arc::new(SuperBlock {
            next_ino: AtomicU64::new(1),
            max_pages: max_bytes / PAGE_SIZE as u64,
            used_pages: AtomicU64::new(0),
        })
    }

    fn new_ino(&self) -> u64 {
        // ORDERING: Relaxed; a unique counter, publishes nothing.
        self.next_ino.fetch_add(1, Ordering::Relaxed)
    }

    /// Charges one page; `ENOSPC` at the limit.
    fn charge_page(&self) -> Result<(), Errno> {
        // ORDERING: Relaxed both; a counter that publishes nothing (the page itself is
        // published by the inode's lock).
        self.used_pages
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                (u < self.max_pages).then_some(u + 1)
            })
            .map(|_| ())
            .map_err(|_| Errno::ENOSPC)
    }

    fn uncharge_pages(&self, n: u64) {
        // ORDERING: Relaxed; see `charge_page`.
        self.used_pages.fetch_sub(n, Ordering::Relaxed);
    }

    pub(crate) fn used_bytes(&self) -> u64 {
        // ORDERING: Relaxed; a statistic.
        self.used_pages.load(Ordering::Relaxed) * PAGE_SIZE as u64
    }
}

/// A directory's entries.
pub(crate) struct DirData {
    pub(crate) entries: BTreeMap<Box<[u8]>, Arc<Inode>>,
    /// `..`. The root's parent is itself. Weak: children do not keep their parent alive.
    pub(crate) parent: Weak<Inode>,
    /// Removed by `rmdir`: nothing can be created in it any more.
    pub(crate) dead: bool,
}

/// A regular file's contents: a sparse map of pages, and the size.
#[derive(Default)]
pub(crate) struct RegData {
    size: i64,
    pages: BTreeMap<u64, Box<Page>>,
}

pub(crate) enum InodeKind {
    Dir(RwLock<DirData>),
    Reg(RwLock<RegData>),
    Chr(Arc<dyn CharDevice>),
}

/// An inode of the in-memory file system.
pub struct Inode {
    ino: u64,
    mode: u32,
    nlink: AtomicU32,
    sb: Arc<SuperBlock>,
    pub(crate) kind: InodeKind,
}

/// Takes a read lock, shrugging off poisoning (the data is bytes and maps, always consistent
/// between statements).
pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

/// Takes a write lock, shrugging off poisoning.
pub(crate) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

impl Inode {
    pub(crate) fn new_root(sb: Arc<SuperBlock>) -> Arc<Inode> {
        Arc::new_cyclic(|me| Inode {
            ino: sb.new_ino(),
            mode: S_IFDIR | 0o755,
            nlink: AtomicU32::new(2),
            sb,
            kind: InodeKind::Dir(RwLock::new(DirData {
                entries: BTreeMap::new(),
                parent: me.clone(),
                dead: false,
            })),
        })
    }

    pub(crate) fn new_dir(parent: &Arc<Inode>, mode: u32) -> Arc<Inode> {
        Arc::new(Inode {
            ino: parent.sb.new_ino(),
            mode: S_IFDIR | (mode & S_IALLUGO),
            nlink: AtomicU32::new(2),
            sb: parent.sb.clone(),
            kind: InodeKind::Dir(RwLock::new(DirData {
                entries: BTreeMap::new(),
                parent: Arc::downgrade(parent),
                dead: false,
            })),
        })
    }

    pub(crate) fn new_reg(parent: &Inode, mode: u32) -> Arc<Inode> {
        Arc::new(Inode {
            ino: parent.sb.new_ino(),
            mode: S_IFREG | (mode & S_IALLUGO),
            nlink: AtomicU32::new(1),
            sb: parent.sb.clone(),
            kind: InodeKind::Reg(RwLock::new(RegData::default())),
        })
    }

    pub(crate) fn new_chr(parent: &Inode, mode: u32, dev: Arc<dyn CharDevice>) -> Arc<Inode> {
        Arc::new(Inode {
            ino: parent.sb.new_ino(),
            mode: S_IFCHR | (mode & S_IALLUGO),
            nlink: AtomicU32::new(1),
            sb: parent.sb.clone(),
            kind: InodeKind::Chr(dev),
        })
    }

    pub(crate) fn same_sb(&self, sb: &Arc<SuperBlock>) -> bool {
        Arc::ptr_eq(&self.sb, sb)
    }

    pub(crate) fn is_dir(&self) -> bool {
        matches!(self.kind, InodeKind::Dir(_))
    }

    pub(crate) fn dir(&self) -> Option<&RwLock<DirData>> {
        match &self.kind {
            InodeKind::Dir(d) => Some(d),
            _ => None,
        }
    }

    pub(crate) fn drop_nlink(&self) {
        // ORDERING: Relaxed; a statistic for fstat, changed under the parent's lock.
        self.nlink.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn inc_nlink(&self) {
        // ORDERING: Relaxed; see `drop_nlink`.
        self.nlink.fetch_add(1, Ordering::Relaxed);
    }

    fn reg(&self) -> Result<&RwLock<RegData>, Errno> {
        match &self.kind {
            InodeKind::Reg(r) => Ok(r),
            InodeKind::Dir(_) => Err(Errno::EISDIR),
            InodeKind::Chr(_) => Err(Errno::EINVAL),
        }
    }

    /// Sets the size (`shmem_setattr`): pages wholly past the end are freed and the tail of
    /// the last page is zeroed, so growing again shows zeros.
    pub(crate) fn truncate_to(&self, len: i64) -> Result<(), Errno> {
        let mut d = write(self.reg()?);
        let keep = (len as u64).div_ceil(PAGE_SIZE as u64);
        let gone = d.pages.split_off(&keep);
        self.sb.uncharge_pages(gone.len() as u64);
        let tail = len as usize % PAGE_SIZE;
        if tail != 0
            && let Some(p) = d.pages.get_mut(&(len as u64 / PAGE_SIZE as u64))
        {
            p[tail..].fill(0);
        }
        d.size = len;
        Ok(())
    }

    /// Copies the file's bytes at `p` into `buf` (zeros for holes); returns how many, short
    /// only at the end of the file.
    fn read_locked(d: &RegData, buf: &mut [u8], p: i64) -> usize {
        if p >= d.size {
            return 0;
        }
        let n = buf.len().min((d.size - p) as usize);
        let mut done = 0;
        while done < n {
            let off = p as u64 + done as u64;
            let (idx, in_page) = (off / PAGE_SIZE as u64, off as usize % PAGE_SIZE);
            let c = (PAGE_SIZE - in_page).min(n - done);
            match d.pages.get(&idx) {
                Some(page) => buf[done..done + c].copy_from_slice(&page[in_page..in_page + c]),
                None => buf[done..done + c].fill(0),
            }
            done += c;
        }
        n
    }

    /// Copies `buf` into the file at `p`, allocating pages; grows the size. Short (or
    /// `ENOSPC` if nothing fit) when the file system is full. `p + buf.len()` must not pass
    /// `MAX_LFS_FILESIZE`.
    fn write_locked(&self, d: &mut RegData, buf: &[u8], p: i64) -> Result<usize, Errno> {
        let mut done = 0;
        while done < buf.len() {
            let off = p as u64 + done as u64;
            let (idx, in_page) = (off / PAGE_SIZE as u64, off as usize % PAGE_SIZE);
            let c = (PAGE_SIZE - in_page).min(buf.len() - done);
            let page = match d.pages.entry(idx) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    if let Err(err) = self.sb.charge_page() {
                        if done == 0 {
                            return Err(err);
                        }
                        break;
                    }
                    e.insert(Box::new([0; PAGE_SIZE]))
                }
            };
            page[in_page..in_page + c].copy_from_slice(&buf[done..done + c]);
            done += c;
        }
        let end = p + done as i64;
        if end > d.size {
            d.size = end;
        }
        Ok(done)
    }

    /// `generic_write_checks`: where a write of `count` bytes goes (the end for `O_APPEND`,
    /// under the inode lock) and how much of it fits below `MAX_LFS_FILESIZE` (`EFBIG` if
    /// nothing does).
    fn write_checks(
        file: &File,
        d: &RegData,
        pos: i64,
        count: usize,
    ) -> Result<(i64, usize), Errno> {
        let p = if file.flags() & O_APPEND != 0 {
            d.size
        } else {
            pos
        };
        // The layer never passes a negative position (`rw_verify_area`); a direct caller of
        // the operations might.
        if p < 0 {
            return Err(Errno::EINVAL);
        }
        // `p > MAX_LFS_FILESIZE` cannot happen: it is `i64::MAX`.
        if p == MAX_LFS_FILESIZE {
            return Err(Errno::EFBIG);
        }
        Ok((p, count.min((MAX_LFS_FILESIZE - p) as usize)))
    }

    fn read_at(&self, buf: &mut [u8], pos: &mut i64) -> Result<usize, Errno> {
        let d = read(self.reg()?);
        if *pos < 0 {
            return Err(Errno::EINVAL);
        }
        let n = Self::read_locked(&d, buf, *pos);
        *pos += n as i64;
        Ok(n)
    }

    fn write_at(&self, file: &File, buf: &[u8], pos: &mut i64) -> Result<usize, Errno> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut d = write(self.reg()?);
        let (p, n) = Self::write_checks(file, &d, *pos, buf.len())?;
        let done = self.write_locked(&mut d, &buf[..n], p)?;
        *pos = p + done as i64;
        Ok(done)
    }

    /// `shmem_file_read_iter`: all buffers under one hold of the inode lock.
    fn readv_at(&self, to: &mut IovIterMut<'_, '_>, pos: &mut i64) -> Result<usize, Errno> {
        let d = read(self.reg()?);
        if *pos < 0 {
            return Err(Errno::EINVAL);
        }
        let mut done = 0;
        while to.count() > 0 {
            let chunk = to.next_chunk(usize::MAX);
            let want = chunk.len();
            let n = Self::read_locked(&d, chunk, *pos + done as i64);
            to.advance(n);
            done += n;
            if n < want {
                break;
            }
        }
        *pos += done as i64;
        Ok(done)
    }

    /// `generic_perform_write` over several buffers: one position, one hold of the lock, so
    /// an `O_APPEND` writev lands in one piece.
    fn writev_at(
        &self,
        file: &File,
        from: &mut IovIter<'_, '_>,
        pos: &mut i64,
    ) -> Result<usize, Errno> {
        let mut d = write(self.reg()?);
        let (p, mut left) = Self::write_checks(file, &d, *pos, from.count())?;
        let mut done = 0;
        while left > 0 {
            let chunk = from.next_chunk(left);
            let want = chunk.len();
            let n = match self.write_locked(&mut d, chunk, p + done as i64) {
                Ok(n) => n,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            };
            from.advance(n);
            done += n;
            left -= n;
            if n < want {
                break;
            }
        }
        *pos = p + done as i64;
        Ok(done)
    }

    /// `shmem_file_llseek`: SEEK_DATA / SEEK_HOLE at page granularity, the rest generic.
    fn reg_llseek(&self, cur: i64, offset: i64, whence: i32) -> Result<i64, Errno> {
        let d = read(self.reg()?);
        if whence != SEEK_DATA && whence != SEEK_HOLE {
            return generic_file_llseek_size(cur, offset, whence, MAX_LFS_FILESIZE, d.size);
        }
        if offset < 0 || offset >= d.size {
            return Err(Errno::ENXIO);
        }
        let first = offset as u64 / PAGE_SIZE as u64;
        let found = if whence == SEEK_DATA {
            match d.pages.range(first..).next() {
                Some((&idx, _)) => (idx * PAGE_SIZE as u64).max(offset as u64),
                None => return Err(Errno::ENXIO),
            }
        } else {
            let mut idx = first;
            for (&i, _) in d.pages.range(first..) {
                if i != idx {
                    break;
                }
                idx += 1;
            }
            (idx * PAGE_SIZE as u64).max(offset as u64)
        };
        if found >= d.size as u64 {
            if whence == SEEK_DATA {
                return Err(Errno::ENXIO);
            }
            return vfs_setpos(d.size, MAX_LFS_FILESIZE);
        }
        vfs_setpos(found as i64, MAX_LFS_FILESIZE)
    }
}

impl Drop for Inode {
    fn drop(&mut self) {
        if let InodeKind::Reg(r) = &self.kind {
            let n = read(r).pages.len() as u64;
            self.sb.uncharge_pages(n);
        }
    }
}

impl FileOperations for Inode {
    fn never_blocks(&self) -> bool {
        true
    }

    fn fmode(&self) -> u32 {
        match self.kind {
            InodeKind::Reg(_) => {
                FMODE_CAN_READ
                    | FMODE_CAN_WRITE
                    | FMODE_LSEEK
                    | FMODE_PREAD
                    | FMODE_PWRITE
                    | FMODE_ATOMIC_POS
                    | FMODE_CAN_SPLICE_READ
                    // tmpfs accepts O_DIRECT (since 6.6); memory has no cache to bypass.
                    | FMODE_CAN_ODIRECT
            }
            InodeKind::Dir(_) => {
                FMODE_CAN_READ | FMODE_LSEEK | FMODE_PREAD | FMODE_PWRITE | FMODE_ATOMIC_POS
            }
            // Only reached for O_PATH files: an open device uses the device's operations.
            InodeKind::Chr(_) => 0,
        }
    }

    fn getattr(&self) -> Kstat {
        let (size, blocks, rdev) = match &self.kind {
            InodeKind::Reg(r) => {
                let d = read(r);
                (d.size, d.pages.len() as u64 * (PAGE_SIZE as u64 / 512), 0)
            }
            // tmpfs counts BOGO_DIRENT_SIZE (20) per entry, `.` and `..` included.
            InodeKind::Dir(d) => (BOGO_DIRENT_SIZE * (2 + read(d).entries.len() as i64), 0, 0),
            InodeKind::Chr(dev) => (0, 0, dev.rdev()),
        };
        Kstat {
            mode: self.mode,
            ino: self.ino,
            // ORDERING: Relaxed; see `drop_nlink`.
            nlink: self.nlink.load(Ordering::Relaxed),
            size,
            blksize: PAGE_SIZE as u32,
            blocks,
            rdev,
        }
    }

    fn read(&self, _file: &File, buf: &mut [u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
        let mut scratch = 0;
        self.read_at(buf, pos.unwrap_or(&mut scratch))
    }

    fn write(&self, file: &File, buf: &[u8], pos: Option<&mut i64>) -> Result<usize, Errno> {
        let mut scratch = 0;
        self.write_at(file, buf, pos.unwrap_or(&mut scratch))
    }

    fn readv(
        &self,
        _file: &File,
        bufs: &mut [IoSliceMut<'_>],
        pos: Option<&mut i64>,
    ) -> Result<usize, Errno> {
        let mut scratch = 0;
        self.readv_at(&mut IovIterMut::new(bufs), pos.unwrap_or(&mut scratch))
    }

    fn writev(
        &self,
        file: &File,
        bufs: &[IoSlice<'_>],
        pos: Option<&mut i64>,
    ) -> Result<usize, Errno> {
        let mut scratch = 0;
        self.writev_at(file, &mut IovIter::new(bufs), pos.unwrap_or(&mut scratch))
    }

    fn llseek(&self, _file: &File, cur: i64, offset: i64, whence: i32) -> Result<i64, Errno> {
        match self.kind {
            InodeKind::Reg(_) => self.reg_llseek(cur, offset, whence),
            // dcache_dir_lseek: SEEK_SET and SEEK_CUR only.
            InodeKind::Dir(_) => {
                let new = match whence {
                    SEEK_SET => offset,
                    SEEK_CUR => cur.wrapping_add(offset),
                    _ => return Err(Errno::EINVAL),
                };
                if new < 0 {
                    return Err(Errno::EINVAL);
                }
                Ok(new)
            }
            InodeKind::Chr(_) => Err(Errno::ESPIPE),
        }
    }

    fn truncate(&self, _file: &File, len: i64) -> Result<(), Errno> {
        self.truncate_to(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_on(ino: &Arc<Inode>, flags: u32) -> File {
        File::new(flags, ino.clone())
    }

    #[test]
    fn sparse_writes_and_holes() {
        let sb = SuperBlock::new(1 << 30);
        let root = Inode::new_root(sb.clone());
        let f = Inode::new_reg(&root, 0o644);
        let file = file_on(&f, O_RDWR);
        let mut pos = 3 * PAGE_SIZE as i64 + 10;
        assert_eq!(f.write(&file, b"abc", Some(&mut pos)), Ok(3));
        assert_eq!(pos, 3 * PAGE_SIZE as i64 + 13);
        assert_eq!(f.getattr().size, pos);
        assert_eq!(f.getattr().blocks, 8);
        assert_eq!(sb.used_bytes(), PAGE_SIZE as u64);
        let mut buf = [9u8; 16];
        let mut rpos = 3 * PAGE_SIZE as i64 + 5;
        assert_eq!(f.read(&file, &mut buf, Some(&mut rpos)), Ok(8));
        assert_eq!(&buf[..8], &[0, 0, 0, 0, 0, b'a', b'b', b'c']);
        assert_eq!(f.llseek(&file, 0, 0, SEEK_DATA), Ok(3 * PAGE_SIZE as i64));
        assert_eq!(f.llseek(&file, 0, 0, SEEK_HOLE), Ok(0));
        assert_eq!(
            f.llseek(&file, 0, 3 * PAGE_SIZE as i64, SEEK_HOLE),
            Ok(pos),
            "virtual hole at EOF"
        );
        assert_eq!(f.llseek(&file, 0, pos, SEEK_DATA), Err(Errno::ENXIO));
        f.truncate_to(2).unwrap();
        assert_eq!(sb.used_bytes(), 0);
        f.truncate_to(100).unwrap();
        let mut rpos = 0;
        assert_eq!(f.read(&file, &mut buf, Some(&mut rpos)), Ok(16));
        assert_eq!(buf, [0; 16]);
        drop(file);
        drop(f);
        assert_eq!(sb.used_bytes(), 0);
    }

    #[test]
    fn truncate_zeroes_the_tail() {
        let sb = SuperBlock::new(1 << 30);
        let root = Inode::new_root(sb);
        let f = Inode::new_reg(&root, 0o644);
        let file = file_on(&f, O_RDWR);
        let mut pos = 0;
        f.write(&file, b"hello world", Some(&mut pos)).unwrap();
        f.truncate_to(5).unwrap();
        f.truncate_to(11).unwrap();
        let mut buf = [1u8; 11];
        let mut rpos = 0;
        assert_eq!(f.read(&file, &mut buf, Some(&mut rpos)), Ok(11));
        assert_eq!(&buf, b"hello\0\0\0\0\0\0");
    }

    #[test]
    fn space_limit_gives_enospc_and_partial_writes() {
        let sb = SuperBlock::new(2 * PAGE_SIZE as u64);
        let root = Inode::new_root(sb);
        let f = Inode::new_reg(&root, 0o644);
        let file = file_on(&f, O_RDWR);
        let big = vec![7u8; 3 * PAGE_SIZE];
        let mut pos = 0;
        assert_eq!(f.write(&file, &big, Some(&mut pos)), Ok(2 * PAGE_SIZE));
        assert_eq!(f.write(&file, &big, Some(&mut pos)), Err(Errno::ENOSPC));
        let mut p = MAX_LFS_FILESIZE;
        assert_eq!(f.write(&file, b"x", Some(&mut p)), Err(Errno::EFBIG));
        let mut neg = -1;
        assert_eq!(f.write(&file, b"x", Some(&mut neg)), Err(Errno::EINVAL));
        assert_eq!(
            f.read(&file, &mut [0; 1], Some(&mut neg)),
            Err(Errno::EINVAL)
        );
    }

    #[test]
    fn append_writes_at_the_end() {
        let sb = SuperBlock::new(1 << 20);
        let root = Inode::new_root(sb);
        let f = Inode::new_reg(&root, 0o644);
        let file = file_on(&f, O_WRONLY | O_APPEND);
        let mut pos = 0;
        f.write(&file, b"ab", Some(&mut pos)).unwrap();
        let mut pos = 0;
        f.write(&file, b"cd", Some(&mut pos)).unwrap();
        assert_eq!(pos, 4);
        let mut p0 = 0;
        assert_eq!(f.write(&file, b"", Some(&mut p0)), Ok(0));
        assert_eq!(p0, 0, "an empty write does not move an O_APPEND position");
    }

    #[test]
    fn directories_refuse_io() {
        let sb = SuperBlock::new(1 << 20);
        let root = Inode::new_root(sb);
        let file = file_on(&root, O_RDONLY);
        let mut pos = 0;
        assert_eq!(
            root.read(&file, &mut [0; 4], Some(&mut pos)),
            Err(Errno::EISDIR)
        );
        assert_eq!(root.llseek(&file, 5, 3, SEEK_CUR), Ok(8));
        assert_eq!(root.llseek(&file, 5, 0, SEEK_END), Err(Errno::EINVAL));
        assert_eq!(root.llseek(&file, 5, -6, SEEK_CUR), Err(Errno::EINVAL));
    }
}

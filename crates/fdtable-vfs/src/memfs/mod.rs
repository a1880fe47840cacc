//! [`MemFs`]: an in-memory file system (tmpfs-like) and [`Namespace`]: directories, sparse
//! regular files, character-device nodes; create, open (`O_CREAT`, `O_EXCL`, `O_TRUNC`,
//! `O_APPEND`, `O_DIRECTORY`, `O_PATH`), read, write, seek with holes, truncate, mkdir, unlink,
//! rmdir, with the kernel's errnos.
//!
//! Locking: one `RwLock` per inode (the kernel's `i_rwsem`), nothing file-system-wide. A path
//! walk holds one directory's lock at a time; `rmdir` takes the parent's then the child's, the
//! only nesting, always in that order.
//!
//! Not modelled: symbolic links, hard links, rename, permissions and ownership (everything is
//! accessible, as for root), timestamps, `O_TMPFILE` (`EOPNOTSUPP`, as on a file system
//! without `->tmpfile`).

mod inode;

pub use inode::Inode;

use crate::devices::{CharDevice, DevNull, DevZero};
use crate::file::File;
use crate::namespace::{MAY_WRITE, Namespace, OpenHow, Opened};
use crate::uapi::*;
use fdtable::Errno;
use inode::{InodeKind, SuperBlock, read, write};
use std::borrow::Cow;
use std::sync::Arc;

/// The default space limit: 1 GiB of file data (tmpfs `size=1g`).
pub const MEMFS_DEFAULT_LIMIT: u64 = 1 << 30;

/// An in-memory file system; also the [`Namespace`] of the tasks that use it.
pub struct MemFs {
    root: Arc<Inode>,
    sb: Arc<SuperBlock>,
}

/// The last component of a path, after the walk (`nd->last_type`).
enum Last<'p> {
    /// No component at all: `/`, or an empty relative walk (`LAST_ROOT`).
    Root,
    /// `.` (`LAST_DOT`).
    Dot,
    /// `..` (`LAST_DOTDOT`).
    DotDot,
    /// A name (`LAST_NORM`).
    Norm(&'p [u8]),
}

/// Where a walk stopped: the directory holding the last component (borrowed when it is the
/// root, so an absolute one-level lookup takes no reference).
struct Walk<'a, 'p> {
    dir: Cow<'a, Arc<Inode>>,
    last: Last<'p>,
    /// The path ended in `/`: the target must be a directory.
    trailing_slash: bool,
}

impl MemFs {
    /// A file system with `/dev/null`, `/dev/zero` and an empty `/tmp`, limited to
    /// [`MEMFS_DEFAULT_LIMIT`] bytes of data.
    pub fn new() -> Arc<MemFs> {
        let fs = Self::with_limit(MEMFS_DEFAULT_LIMIT);
        for d in [&b"/dev"[..], b"/tmp"] {
            fs.mkdir(None, d, 0o755).expect("fresh file system");
        }
        fs.mknod_chr(b"/dev/null", 0o666, Arc::new(DevNull))
            .expect("fresh file system");
        fs.mknod_chr(b"/dev/zero", 0o666, Arc::new(DevZero))
            .expect("fresh file system");
        fs
    }

    /// An empty file system (only `/`) holding at most `max_bytes` of file data (`ENOSPC`
    /// past it).
    pub fn with_limit(max_bytes: u64) -> Arc<MemFs> {
        let sb = SuperBlock::new(max_bytes);
        Arc::new(MemFs {
            root: Inode::new_root(sb.clone()),
            sb,
        })
    }

    /// Bytes of file data in use (whole pages).
    pub fn used_bytes(&self) -> u64 {
        self.sb.used_bytes()
    }

    /// `mknod(path, S_IFCHR | mode)` for the driver `dev`: opening the node opens the device.
    pub fn mknod_chr(&self, path: &[u8], mode: u32, dev: Arc<dyn CharDevice>) -> Result<(), Errno> {
        let w = self.walk(None, path)?;
        let Last::Norm(name) = w.last else {
            return Err(Errno::EEXIST);
        };
        check_name(name)?;
        self.create_in(&w.dir, name, |dir| Inode::new_chr(dir, mode, dev))
            .map(|_| ())
    }

    /// The inode a directory file refers to, if it is one of ours.
    fn dir_of(&self, at: Option<&File>) -> Result<Arc<Inode>, Errno> {
        let Some(f) = at else {
            return Ok(self.root.clone());
        };
        // The file's operations are its inode (see `Inode`); anything else is another file
        // system's directory, which paths here cannot start from.
        match arc_of_ops(f) {
            Some(i) if i.same_sb(&self.sb) && i.is_dir() => Ok(i),
            Some(i) if i.same_sb(&self.sb) => Err(Errno::ENOTDIR),
            _ => Err(Errno::EXDEV),
        }
    }

    /// `link_path_walk`: resolves every component but the last.
    fn walk<'p>(&self, at: Option<&File>, path: &'p [u8]) -> Result<Walk<'_, 'p>, Errno> {
        let mut dir = if path.first() == Some(&b'/') || at.is_none() {
            Cow::Borrowed(&self.root)
        } else {
            Cow::Owned(self.dir_of(at)?)
        };
        let trailing_slash = path.last() == Some(&b'/');
        let mut comps = path.split(|&c| c == b'/').filter(|c| !c.is_empty());
        let mut cur = comps.next();
        let Some(mut name) = cur else {
            return Ok(Walk {
                dir,
                last: Last::Root,
                trailing_slash: false,
            });
        };
        loop {
            cur = comps.next();
            let Some(next) = cur else { break };
            dir = Cow::Owned(step(&dir, name)?);
            name = next;
        }
        let last = match name {
            b"." => Last::Dot,
            b".." => Last::DotDot,
            n => Last::Norm(n),
        };
        Ok(Walk {
            dir,
            last,
            trailing_slash,
        })
    }

    /// Inserts a new inode made by `make` as `name` in `dir`. `EEXIST` if taken, `ENOENT` if
    /// `dir` was removed.
    fn create_in(
        &self,
        dir: &Arc<Inode>,
        name: &[u8],
        make: impl FnOnce(&Arc<Inode>) -> Arc<Inode>,
    ) -> Result<Arc<Inode>, Errno> {
        let lock = dir.dir().ok_or(Errno::ENOTDIR)?;
        let mut d = write(lock);
        if d.dead {
            return Err(Errno::ENOENT);
        }
        if d.entries.contains_key(name) {
            return Err(Errno::EEXIST);
        }
        let new = make(dir);
        if new.is_dir() {
            dir.inc_nlink();
        }
        d.entries.insert(name.into(), new.clone());
        Ok(new)
    }
}

/// The `Arc<Inode>` behind a file whose operations are an `Inode`.
fn arc_of_ops(f: &File) -> Option<Arc<Inode>> {
    let any: Arc<dyn std::any::Any + Send + Sync> = f.ops_arc().clone();
    any.downcast::<Inode>().ok()
}

/// `NAME_MAX` check for a component about to be looked up or created.
fn check_name(name: &[u8]) -> Result<(), Errno> {
    if name.len() > NAME_MAX {
        return Err(Errno::ENAMETOOLONG);
    }
    Ok(())
}

/// One step of the walk: `name` in `dir`, which must lead to a directory.
fn step(dir: &Arc<Inode>, name: &[u8]) -> Result<Arc<Inode>, Errno> {
    match name {
        b"." => Ok(dir.clone()),
        b".." => parent(dir),
        _ => {
            let child = lookup(dir, name)?;
            if !child.is_dir() {
                return Err(Errno::ENOTDIR);
            }
            Ok(child)
        }
    }
}

fn parent(dir: &Arc<Inode>) -> Result<Arc<Inode>, Errno> {
    let d = read(dir.dir().ok_or(Errno::ENOTDIR)?);
    d.parent.upgrade().ok_or(Errno::ENOENT)
}

/// `lookup`: `name` in `dir`. `ENAMETOOLONG`, `ENOENT`.
fn lookup(dir: &Arc<Inode>, name: &[u8]) -> Result<Arc<Inode>, Errno> {
    check_name(name)?;
    let d = read(dir.dir().ok_or(Errno::ENOTDIR)?);
    d.entries.get(name).cloned().ok_or(Errno::ENOENT)
}

impl Namespace for MemFs {
    /// `path_openat` → `open_last_lookups` → `do_open`, with the checks in the kernel's order.
    fn open(&self, at: Option<&File>, path: &[u8], how: &OpenHow) -> Result<Opened, Errno> {
        let flags = how.flags;
        let w = self.walk(at, path)?;
        let (target, created) = match w.last {
            Last::Norm(name) if flags & O_CREAT != 0 => {
                check_name(name)?;
                // "trailing slashes?" on the create side.
                if w.trailing_slash {
                    return Err(Errno::EISDIR);
                }
                let lock = w.dir.dir().ok_or(Errno::ENOTDIR)?;
                let mut d = write(lock);
                if d.dead {
                    return Err(Errno::ENOENT);
                }
                match d.entries.get(name) {
                    Some(t) => (t.clone(), false),
                    None => {
                        let new = Inode::new_reg(&w.dir, how.mode);
                        d.entries.insert(name.into(), new.clone());
                        (new, true)
                    }
                }
            }
            Last::Norm(name) => (lookup(&w.dir, name)?, false),
            Last::Root | Last::Dot => (w.dir.into_owned(), false),
            Last::DotDot => (parent(&w.dir)?, false),
        };
        if flags & O_CREAT != 0 {
            if flags & O_EXCL != 0 && !created {
                return Err(Errno::EEXIST);
            }
            if target.is_dir() {
                return Err(Errno::EISDIR);
            }
        }
        if (flags & O_DIRECTORY != 0 || w.trailing_slash) && !target.is_dir() {
            return Err(Errno::ENOTDIR);
        }
        if flags & O_PATH != 0 {
            return Ok(Opened {
                ops: target,
                created,
            });
        }
        if flags & __O_TMPFILE != 0 {
            return Err(Errno::EOPNOTSUPP);
        }
        // may_open, with no write-permission check or truncation for a file just created.
        let acc_mode = if created { 0 } else { how.acc_mode };
        let ops: Arc<dyn crate::FileOperations> = match &target.kind {
            InodeKind::Dir(_) => {
                if acc_mode & MAY_WRITE != 0 {
                    return Err(Errno::EISDIR);
                }
                target
            }
            InodeKind::Reg(_) => {
                if flags & O_TRUNC != 0 && !created {
                    target.truncate_to(0)?;
                }
                target
            }
            InodeKind::Chr(dev) => dev.open(flags)?,
        };
        Ok(Opened { ops, created })
    }

    fn mkdir(&self, at: Option<&File>, path: &[u8], mode: u32) -> Result<(), Errno> {
        let w = self.walk(at, path)?;
        let Last::Norm(name) = w.last else {
            return Err(Errno::EEXIST);
        };
        check_name(name)?;
        self.create_in(&w.dir, name, |dir| Inode::new_dir(dir, mode))
            .map(|_| ())
    }

    fn unlink(&self, at: Option<&File>, path: &[u8]) -> Result<(), Errno> {
        let w = self.walk(at, path)?;
        let Last::Norm(name) = w.last else {
            return Err(Errno::EISDIR);
        };
        check_name(name)?;
        let mut d = write(w.dir.dir().ok_or(Errno::ENOTDIR)?);
        let child = d.entries.get(name).ok_or(Errno::ENOENT)?;
        if child.is_dir() {
            return Err(Errno::EISDIR);
        }
        if w.trailing_slash {
            return Err(Errno::ENOTDIR);
        }
        let child = d.entries.remove(name).expect("present");
        drop(d);
        child.drop_nlink();
        Ok(())
    }

    fn rmdir(&self, at: Option<&File>, path: &[u8]) -> Result<(), Errno> {
        let w = self.walk(at, path)?;
        let name = match w.last {
            Last::Norm(n) => n,
            Last::Dot => return Err(Errno::EINVAL),
            Last::DotDot => return Err(Errno::ENOTEMPTY),
            Last::Root => return Err(Errno::EBUSY),
        };
        check_name(name)?;
        let mut d = write(w.dir.dir().ok_or(Errno::ENOTDIR)?);
        let child = d.entries.get(name).ok_or(Errno::ENOENT)?.clone();
        let child_lock = child.dir().ok_or(Errno::ENOTDIR)?;
        {
            // Lock order: parent, then child.
            let mut c = write(child_lock);
            if !c.entries.is_empty() {
                return Err(Errno::ENOTEMPTY);
            }
            c.dead = true;
        }
        d.entries.remove(name);
        drop(d);
        w.dir.drop_nlink();
        child.drop_nlink();
        child.drop_nlink();
        Ok(())
    }
}

impl std::fmt::Debug for MemFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemFs")
            .field("used_bytes", &self.used_bytes())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::MAY_READ;

    fn how(flags: u32) -> OpenHow {
        let acc = match flags & O_ACCMODE {
            0 => MAY_READ,
            1 => MAY_WRITE,
            _ => MAY_READ | MAY_WRITE,
        };
        OpenHow {
            flags,
            mode: 0o644,
            acc_mode: acc | if flags & O_TRUNC != 0 { MAY_WRITE } else { 0 },
        }
    }

    fn err(r: Result<Opened, Errno>) -> Errno {
        r.expect_err("expected an error")
    }

    #[test]
    fn open_errors() {
        let fs = MemFs::new();
        assert_eq!(err(fs.open(None, b"/nope", &how(0))), Errno::ENOENT);
        assert_eq!(err(fs.open(None, b"/nope/x", &how(0))), Errno::ENOENT);
        assert_eq!(err(fs.open(None, b"/tmp", &how(O_WRONLY))), Errno::EISDIR);
        assert_eq!(err(fs.open(None, b"/tmp", &how(O_TRUNC))), Errno::EISDIR);
        assert_eq!(err(fs.open(None, b"/tmp", &how(O_CREAT))), Errno::EISDIR);
        assert_eq!(
            err(fs.open(None, b"/tmp", &how(O_CREAT | O_EXCL))),
            Errno::EEXIST
        );
        assert_eq!(err(fs.open(None, b"/tmp/a/", &how(O_CREAT))), Errno::EISDIR);
        let o = fs.open(None, b"/tmp/a", &how(O_CREAT | O_RDWR)).unwrap();
        assert!(o.created);
        assert!(!fs.open(None, b"/tmp/a", &how(O_CREAT)).unwrap().created);
        assert_eq!(
            err(fs.open(None, b"/tmp/a", &how(O_CREAT | O_EXCL))),
            Errno::EEXIST
        );
        assert_eq!(err(fs.open(None, b"/tmp/a/", &how(0))), Errno::ENOTDIR);
        assert_eq!(err(fs.open(None, b"/tmp/a/b", &how(0))), Errno::ENOTDIR);
        assert_eq!(
            err(fs.open(None, b"/tmp/a", &how(O_DIRECTORY))),
            Errno::ENOTDIR
        );
        let long = [b'x'; 256];
        let mut p = b"/tmp/".to_vec();
        p.extend_from_slice(&long);
        assert_eq!(err(fs.open(None, &p, &how(0))), Errno::ENAMETOOLONG);
        assert_eq!(err(fs.open(None, &p, &how(O_CREAT))), Errno::ENAMETOOLONG);
        assert!(fs.open(None, &p[..p.len() - 1], &how(O_CREAT)).is_ok());
        assert!(fs.open(None, b"/", &how(O_DIRECTORY)).is_ok());
        assert!(fs.open(None, b"/tmp/../tmp/./a", &how(0)).is_ok());
        assert!(fs.open(None, b"/..", &how(O_DIRECTORY)).is_ok());
        assert_eq!(
            err(fs.open(None, b"/tmp", &how(O_TMPFILE | O_RDWR))),
            Errno::EOPNOTSUPP
        );
    }

    #[test]
    fn relative_to_a_directory_file() {
        let fs = MemFs::new();
        let tmp = fs.open(None, b"/tmp", &how(O_DIRECTORY)).unwrap();
        let dirf = File::new(O_RDONLY, tmp.ops);
        fs.open(Some(&dirf), b"x", &how(O_CREAT | O_WRONLY))
            .unwrap();
        assert!(fs.open(None, b"/tmp/x", &how(0)).is_ok());
        let x = File::new(O_RDONLY, fs.open(None, b"/tmp/x", &how(0)).unwrap().ops);
        assert_eq!(err(fs.open(Some(&x), b"y", &how(0))), Errno::ENOTDIR);
        let other = MemFs::new();
        assert_eq!(err(other.open(Some(&dirf), b"x", &how(0))), Errno::EXDEV);
    }

    #[test]
    fn mkdir_unlink_rmdir() {
        let fs = MemFs::new();
        assert_eq!(fs.mkdir(None, b"/tmp", 0o755), Err(Errno::EEXIST));
        assert_eq!(fs.mkdir(None, b"/", 0o755), Err(Errno::EEXIST));
        assert_eq!(fs.mkdir(None, b"/no/d", 0o755), Err(Errno::ENOENT));
        fs.mkdir(None, b"/tmp/d/", 0o755).unwrap();
        fs.open(None, b"/tmp/d/f", &how(O_CREAT)).unwrap();
        assert_eq!(fs.rmdir(None, b"/tmp/d"), Err(Errno::ENOTEMPTY));
        assert_eq!(fs.rmdir(None, b"/tmp/d/f"), Err(Errno::ENOTDIR));
        assert_eq!(fs.rmdir(None, b"/tmp/d/."), Err(Errno::EINVAL));
        assert_eq!(fs.rmdir(None, b"/tmp/d/.."), Err(Errno::ENOTEMPTY));
        assert_eq!(fs.rmdir(None, b"/"), Err(Errno::EBUSY));
        assert_eq!(fs.unlink(None, b"/tmp/d"), Err(Errno::EISDIR));
        assert_eq!(fs.unlink(None, b"/tmp/d/f/"), Err(Errno::ENOTDIR));
        assert_eq!(fs.unlink(None, b"/tmp/d/g"), Err(Errno::ENOENT));
        fs.unlink(None, b"/tmp/d/f").unwrap();
        let d = File::new(
            O_RDONLY,
            fs.open(None, b"/tmp/d", &how(O_DIRECTORY)).unwrap().ops,
        );
        fs.rmdir(None, b"/tmp/d").unwrap();
        assert_eq!(
            err(fs.open(Some(&d), b"new", &how(O_CREAT))),
            Errno::ENOENT,
            "nothing can be created in a removed directory"
        );
        assert_eq!(fs.mkdir(Some(&d), b"new", 0o755), Err(Errno::ENOENT));
    }

    #[test]
    fn unlinked_file_lives_while_open() {
        let fs = MemFs::new();
        let o = fs.open(None, b"/tmp/u", &how(O_CREAT | O_RDWR)).unwrap();
        let f = File::new(O_RDWR, o.ops);
        let mut pos = 0;
        f.ops().write(&f, &[1; 5000], Some(&mut pos)).unwrap();
        assert_eq!(fs.used_bytes(), 8192);
        fs.unlink(None, b"/tmp/u").unwrap();
        assert_eq!(f.ops().getattr().nlink, 0);
        assert_eq!(fs.used_bytes(), 8192);
        drop(f);
        assert_eq!(fs.used_bytes(), 0);
    }
}

//! The descriptor type [`WasiFile`] (stored as `dyn WasiFile`) and its implementations —
//! stdio streams, directories, regular files — over a small in-memory file system.

use crate::types::{Filetype, Oflags, WasiErrno};
use fdtable::FileLike;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Locks a mutex, ignoring poisoning (a panicking test thread must not wedge the others).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The longest path `path_open` accepts (Linux's `PATH_MAX`).
pub const PATH_MAX: usize = 4096;
/// The longest path component (Linux's `NAME_MAX`).
pub const NAME_MAX: usize = 255;

/// What the table stores: an open WASI descriptor's file. `read`/`write` default to `Badf`
/// (a directory cannot be read as a stream, as wasmtime answers).
pub trait WasiFile: FileLike {
    /// The file's type, for `fd_fdstat_get`.
    fn filetype(&self) -> Filetype;
    /// `fd_read`.
    fn read(&self, buf: &mut [u8]) -> Result<usize, WasiErrno> {
        let _ = buf;
        Err(WasiErrno::Badf)
    }
    /// `fd_write`; `append` is the fd's `APPEND` flag.
    fn write(&self, buf: &[u8], append: bool) -> Result<usize, WasiErrno> {
        let _ = (buf, append);
        Err(WasiErrno::Badf)
    }
    /// The directory, if this is one (`path_open`'s `fd` must be).
    fn as_dir(&self) -> Option<&Dir> {
        None
    }
}

/// A node of the in-memory file system.
#[derive(Clone, Debug)]
pub enum Node {
    /// A regular file.
    File(Arc<FileNode>),
    /// A directory.
    Dir(Arc<DirNode>),
}

/// A regular file's contents.
#[derive(Debug, Default)]
pub struct FileNode {
    data: Mutex<Vec<u8>>,
}

impl FileNode {
    /// The file's contents.
    pub fn contents(&self) -> Vec<u8> {
        lock(&self.data).clone()
    }
}

/// A directory: names to nodes.
#[derive(Debug, Default)]
pub struct DirNode {
    entries: Mutex<BTreeMap<String, Node>>,
}

impl DirNode {
    /// An empty directory.
    pub fn new() -> Arc<DirNode> {
        Arc::new(DirNode::default())
    }

    /// Adds (or replaces) a regular file holding `contents`; returns it.
    pub fn add_file(&self, name: &str, contents: &[u8]) -> Arc<FileNode> {
        let f = Arc::new(FileNode {
            data: Mutex::new(contents.to_vec()),
        });
        lock(&self.entries).insert(name.into(), Node::File(f.clone()));
        f
    }

    /// Adds (or replaces) an empty subdirectory; returns it.
    pub fn add_dir(&self, name: &str) -> Arc<DirNode> {
        let d = DirNode::new();
        lock(&self.entries).insert(name.into(), Node::Dir(d.clone()));
        d
    }

    /// The entry called `name`, if any.
    pub fn get(&self, name: &str) -> Option<Node> {
        lock(&self.entries).get(name).cloned()
    }
}

/// Where a path leads, relative to a directory: an existing node, or a name in a directory.
enum Walk {
    Node(Node),
    Entry(Arc<DirNode>, String),
}

/// Resolves `path` beneath `root`, never above it. `Notcapable` for an absolute path or one
/// whose `..` climbs out of `root` (a sandbox escape; Linux's `openat2(RESOLVE_BENEATH)` says
/// `EXDEV`), `Noent` for an empty path or a missing directory on the way, `Notdir` for a file
/// used as a directory, `Nametoolong` past `PATH_MAX`/`NAME_MAX`.
fn walk(root: &Arc<DirNode>, path: &str) -> Result<Walk, WasiErrno> {
    if path.is_empty() {
        return Err(WasiErrno::Noent);
    }
    if path.len() > PATH_MAX {
        return Err(WasiErrno::Nametoolong);
    }
    if path.starts_with('/') {
        return Err(WasiErrno::Notcapable);
    }
    let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    let mut stack = vec![root.clone()];
    for (i, c) in comps.iter().enumerate() {
        let last = i + 1 == comps.len();
        let top = stack.last().cloned().ok_or(WasiErrno::Notcapable)?;
        match *c {
            "." => {}
            ".." => {
                if stack.len() == 1 {
                    return Err(WasiErrno::Notcapable);
                }
                stack.pop();
            }
            name if name.len() > NAME_MAX => return Err(WasiErrno::Nametoolong),
            name if last => return Ok(Walk::Entry(top, name.into())),
            name => match top.get(name) {
                Some(Node::Dir(d)) => stack.push(d),
                Some(Node::File(_)) => return Err(WasiErrno::Notdir),
                None => return Err(WasiErrno::Noent),
            },
        }
    }
    // The path ended in `.` or `..`: the directory reached.
    let top = stack.pop().ok_or(WasiErrno::Notcapable)?;
    Ok(Walk::Node(Node::Dir(top)))
}

/// `path_open`'s file-system half: finds or creates the node `path` names beneath `root`,
/// honouring `oflags`. The caller has checked the rights.
pub(crate) fn open_node(
    root: &Arc<DirNode>,
    path: &str,
    oflags: Oflags,
) -> Result<Node, WasiErrno> {
    let creat = oflags.contains(Oflags::CREAT);
    let node = match walk(root, path)? {
        Walk::Node(n) => n,
        Walk::Entry(dir, name) => {
            let mut entries = lock(&dir.entries);
            match entries.get(&name) {
                Some(n) => n.clone(),
                None if creat => {
                    let f = Node::File(Arc::new(FileNode::default()));
                    entries.insert(name, f.clone());
                    return Ok(f);
                }
                None => return Err(WasiErrno::Noent),
            }
        }
    };
    if creat && oflags.contains(Oflags::EXCL) {
        return Err(WasiErrno::Exist);
    }
    match &node {
        Node::File(_) if oflags.contains(Oflags::DIRECTORY) => return Err(WasiErrno::Notdir),
        Node::Dir(_) if oflags.contains(Oflags::TRUNC) => return Err(WasiErrno::Isdir),
        Node::File(f) if oflags.contains(Oflags::TRUNC) => lock(&f.data).clear(),
        _ => {}
    }
    Ok(node)
}

/// An open directory; `preopen` is the guest path it was preopened as (`None` for one opened
/// with `path_open`), which `fd_prestat_dir_name` reports.
pub struct Dir {
    /// The directory.
    pub node: Arc<DirNode>,
    /// Its preopen name.
    pub preopen: Option<String>,
}

impl FileLike for Dir {}

impl WasiFile for Dir {
    fn filetype(&self) -> Filetype {
        Filetype::Directory
    }
    fn as_dir(&self) -> Option<&Dir> {
        Some(self)
    }
}

/// An open regular file: the node and the open file description's position.
pub struct OpenFile {
    node: Arc<FileNode>,
    pos: Mutex<usize>,
}

impl OpenFile {
    pub(crate) fn new(node: Arc<FileNode>) -> OpenFile {
        OpenFile {
            node,
            pos: Mutex::new(0),
        }
    }
}

impl FileLike for OpenFile {}

impl WasiFile for OpenFile {
    fn filetype(&self) -> Filetype {
        Filetype::RegularFile
    }
    fn read(&self, buf: &mut [u8]) -> Result<usize, WasiErrno> {
        let mut pos = lock(&self.pos);
        let data = lock(&self.node.data);
        let start = (*pos).min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        *pos = start + n;
        Ok(n)
    }
    fn write(&self, buf: &[u8], append: bool) -> Result<usize, WasiErrno> {
        let mut pos = lock(&self.pos);
        let mut data = lock(&self.node.data);
        if append {
            *pos = data.len();
        }
        let end = pos.checked_add(buf.len()).ok_or(WasiErrno::Fbig)?;
        let len = data.len();
        if len < end {
            data.try_reserve(end - len).map_err(|_| WasiErrno::Nomem)?;
            data.resize(end, 0);
        }
        data[*pos..end].copy_from_slice(buf);
        *pos = end;
        Ok(buf.len())
    }
}

/// A stdio stream: stdin reads from a queue, stdout and stderr append to a buffer the host
/// reads back.
pub enum Stdio {
    /// fd 0.
    In(Mutex<VecDeque<u8>>),
    /// fd 1 or 2.
    Out(Arc<Mutex<Vec<u8>>>),
}

impl FileLike for Stdio {}

impl WasiFile for Stdio {
    fn filetype(&self) -> Filetype {
        Filetype::CharacterDevice
    }
    fn read(&self, buf: &mut [u8]) -> Result<usize, WasiErrno> {
        match self {
            Stdio::In(q) => {
                let mut q = lock(q);
                let n = buf.len().min(q.len());
                for (dst, src) in buf.iter_mut().zip(q.drain(..n)) {
                    *dst = src;
                }
                Ok(n)
            }
            Stdio::Out(_) => Err(WasiErrno::Badf),
        }
    }
    fn write(&self, buf: &[u8], _append: bool) -> Result<usize, WasiErrno> {
        match self {
            Stdio::Out(b) => {
                lock(b).extend_from_slice(buf);
                Ok(buf.len())
            }
            Stdio::In(_) => Err(WasiErrno::Badf),
        }
    }
}

//! The WASI context: a descriptor table and the preview 1 calls that use it.

use crate::fs::{Dir, DirNode, Node, OpenFile, Stdio, WasiFile, open_node};
use crate::types::{
    Fd, FdEntry, Fdflags, Fdstat, LOOKUP_SYMLINK_FOLLOW, Oflags, Prestat, Rights, WasiErrno,
};
use fdtable::{FileRef, Files};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The descriptor table: `dyn WasiFile` descriptors with an [`FdEntry`] (rights and flags)
/// per fd, and the core's default spinlock.
pub type WasiTable = Files<dyn WasiFile, FdEntry>;

/// The default `RLIMIT_NOFILE`-style cap on descriptor numbers.
pub const DEFAULT_NOFILE: u64 = 1024;

/// Rights of stdin: read and poll.
pub const STDIN_RIGHTS: Rights = Rights(Rights::FD_READ.0 | Rights::POLL_FD_READWRITE.0);
/// Rights of stdout and stderr: write and poll.
pub const STDOUT_RIGHTS: Rights = Rights(Rights::FD_WRITE.0 | Rights::POLL_FD_READWRITE.0);

/// `path_open`'s arguments after the directory fd.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathOpen {
    /// `dirflags` (`lookupflags`).
    pub dirflags: u32,
    /// The path, relative to the directory.
    pub path: String,
    /// `oflags`.
    pub oflags: Oflags,
    /// `fs_rights_base`: the rights the new fd asks for.
    pub rights_base: Rights,
    /// `fs_rights_inheriting`.
    pub rights_inheriting: Rights,
    /// `fdflags`.
    pub fdflags: Fdflags,
}

impl PathOpen {
    /// Open `path` for reading.
    pub fn read(path: &str) -> PathOpen {
        PathOpen {
            dirflags: LOOKUP_SYMLINK_FOLLOW,
            path: path.into(),
            oflags: Oflags::default(),
            rights_base: Rights(Rights::FD_READ.0 | Rights::FD_SEEK.0 | Rights::FD_TELL.0),
            rights_inheriting: Rights::NONE,
            fdflags: Fdflags::default(),
        }
    }

    /// Open `path` for writing, creating it if missing.
    pub fn create(path: &str) -> PathOpen {
        PathOpen {
            oflags: Oflags::CREAT,
            rights_base: Rights(Rights::FD_WRITE.0 | Rights::FD_READ.0 | Rights::FD_SEEK.0),
            ..PathOpen::read(path)
        }
    }

    /// Open the directory `path`, asking for directory rights for it and for what is opened
    /// through it.
    pub fn dir(path: &str) -> PathOpen {
        PathOpen {
            oflags: Oflags::DIRECTORY,
            rights_base: Rights::DIRECTORY,
            rights_inheriting: Rights::DIRECTORY.union(Rights::FILE),
            ..PathOpen::read(path)
        }
    }
}

/// A `path_open` whose arguments and directory passed the checks: what is left is the
/// file-system work and the install.
struct Prepared {
    dir: Arc<DirNode>,
    req: PathOpen,
}

impl Prepared {
    /// Looks the path up (creating it for `CREAT`) and builds the descriptor's file and entry.
    /// The rights asked for are kept only where they make sense for the file's type.
    fn open(&self) -> Result<(FileRef<dyn WasiFile>, FdEntry), WasiErrno> {
        let node = open_node(&self.dir, &self.req.path, self.req.oflags)?;
        let (file, mask) = match node {
            Node::File(f) => (
                FileRef::<dyn WasiFile>::try_new_unsize(OpenFile::new(f), |f| f)?,
                Rights::FILE,
            ),
            Node::Dir(d) => (
                FileRef::<dyn WasiFile>::try_new_unsize(
                    Dir {
                        node: d,
                        preopen: None,
                    },
                    |f| f,
                )?,
                Rights::DIRECTORY,
            ),
        };
        let entry = FdEntry {
            rights_base: self.req.rights_base.intersect(mask),
            rights_inheriting: self.req.rights_inheriting,
            flags: self.req.fdflags,
        };
        Ok((file, entry))
    }
}

/// Builds a [`WasiCtx`]: stdio at 0–2, then the preopened directories at 3, 4, … in the order
/// given (wasi-libc finds preopens by probing 3, 4, … until `fd_prestat_get` fails, so they
/// must be sequential: WebAssembly/WASI#10).
pub struct WasiCtxBuilder {
    stdin: Vec<u8>,
    preopens: Vec<(String, Arc<DirNode>, Rights, Rights)>,
    nofile: u64,
}

impl Default for WasiCtxBuilder {
    fn default() -> Self {
        WasiCtxBuilder {
            stdin: Vec::new(),
            preopens: Vec::new(),
            nofile: DEFAULT_NOFILE,
        }
    }
}

impl WasiCtxBuilder {
    /// What stdin will read.
    pub fn stdin(mut self, bytes: &[u8]) -> Self {
        self.stdin = bytes.to_vec();
        self
    }

    /// Preopens `dir` as `guest_path`, with every directory right and, inherited, every
    /// directory and file right.
    pub fn preopen(self, guest_path: &str, dir: Arc<DirNode>) -> Self {
        self.preopen_with_rights(
            guest_path,
            dir,
            Rights::DIRECTORY,
            Rights::DIRECTORY.union(Rights::FILE),
        )
    }

    /// Preopens `dir` as `guest_path` with the given rights.
    pub fn preopen_with_rights(
        mut self,
        guest_path: &str,
        dir: Arc<DirNode>,
        base: Rights,
        inheriting: Rights,
    ) -> Self {
        self.preopens
            .push((guest_path.into(), dir, base, inheriting));
        self
    }

    /// The cap on descriptor numbers (`Mfile` at it).
    pub fn nofile(mut self, nofile: u64) -> Self {
        self.nofile = nofile;
        self
    }

    /// The context. `Mfile` if `nofile` leaves no room for stdio and the preopens; `Nomem` if
    /// memory runs out.
    pub fn build(self) -> Result<WasiCtx, WasiErrno> {
        let files: WasiTable = Files::try_new()?;
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let stdio: [(Stdio, Rights); 3] = [
            (
                Stdio::In(Mutex::new(VecDeque::from(self.stdin))),
                STDIN_RIGHTS,
            ),
            (Stdio::Out(stdout.clone()), STDOUT_RIGHTS),
            (Stdio::Out(stderr.clone()), STDOUT_RIGHTS),
        ];
        for (want, (s, rights)) in (0..).zip(stdio) {
            let file = FileRef::<dyn WasiFile>::try_new_unsize(s, |f| f)?;
            let entry = FdEntry {
                rights_base: rights,
                rights_inheriting: rights,
                flags: Fdflags::default(),
            };
            let fd = files.install_with(file, 0, entry, self.nofile)?;
            debug_assert_eq!(fd, want, "a fresh table hands out 0, 1, 2");
        }
        for (want, (name, node, base, inheriting)) in (3..).zip(self.preopens) {
            let file = FileRef::<dyn WasiFile>::try_new_unsize(
                Dir {
                    node,
                    preopen: Some(name),
                },
                |f| f,
            )?;
            let entry = FdEntry {
                rights_base: base,
                rights_inheriting: inheriting,
                flags: Fdflags::default(),
            };
            // Lowest-free in a table holding exactly 0..want: the preopens are sequential.
            let fd = files.install_with(file, 0, entry, self.nofile)?;
            debug_assert_eq!(fd, want, "preopens are sequential from 3");
        }
        Ok(WasiCtx {
            files,
            nofile: self.nofile,
            fd_lock: Arc::new(Mutex::new(())),
            stdout,
            stderr,
        })
    }
}

/// Takes the fd lock (see [`WasiCtx::fd_fdstat_set_flags`]), ignoring poisoning.
fn guard(m: &Mutex<()>) -> MutexGuard<'_, ()> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A WASI instance's descriptor state: its handle on the table, and stdout/stderr as the host
/// sees them. Each thread of an instance (wasi-threads) uses its own handle, made by
/// [`WasiCtx::share`].
pub struct WasiCtx {
    files: WasiTable,
    nofile: u64,
    /// Serialises the payload read-modify-writes (`fd_fdstat_set_flags`,
    /// `fd_fdstat_set_rights`) against the calls that can change which file an open fd refers
    /// to (`fd_close`, `fd_renumber`): see [`WasiCtx::fd_fdstat_set_flags`]. Shared by every
    /// handle on the table.
    fd_lock: Arc<Mutex<()>>,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl WasiCtx {
    /// A builder: no stdin, no preopens, [`DEFAULT_NOFILE`].
    pub fn builder() -> WasiCtxBuilder {
        WasiCtxBuilder::default()
    }

    /// Another handle on the same table, for another thread of the instance.
    pub fn share(&mut self) -> WasiCtx {
        WasiCtx {
            files: self.files.share(),
            nofile: self.nofile,
            fd_lock: self.fd_lock.clone(),
            stdout: self.stdout.clone(),
            stderr: self.stderr.clone(),
        }
    }

    /// The table (for inspection).
    pub fn table(&self) -> &WasiTable {
        &self.files
    }

    /// What the guest wrote to stdout.
    pub fn stdout(&self) -> Vec<u8> {
        self.stdout
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// What the guest wrote to stderr.
    pub fn stderr(&self) -> Vec<u8> {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The file at `fd` and its entry, read in one step. `Badf` for anything not open
    /// (including an fd reserved by an open still in progress).
    fn entry(&self, fd: Fd) -> Result<(FileRef<dyn WasiFile>, FdEntry), WasiErrno> {
        Ok(self.files.fget_with_payload(fd)?)
    }

    /// `fd_read`: needs `FD_READ` (`Notcapable` without).
    pub fn fd_read(&self, fd: Fd, buf: &mut [u8]) -> Result<usize, WasiErrno> {
        let (file, e) = self.entry(fd)?;
        if !e.rights_base.contains(Rights::FD_READ) {
            return Err(WasiErrno::Notcapable);
        }
        file.read(buf)
    }

    /// `fd_write`: needs `FD_WRITE`; appends if the fd has `APPEND`.
    pub fn fd_write(&self, fd: Fd, buf: &[u8]) -> Result<usize, WasiErrno> {
        let (file, e) = self.entry(fd)?;
        if !e.rights_base.contains(Rights::FD_WRITE) {
            return Err(WasiErrno::Notcapable);
        }
        file.write(buf, e.flags.contains(Fdflags::APPEND))
    }

    /// `fd_close`: `Badf` if `fd` is not open. Preopens and stdio may be closed too.
    ///
    /// The slot is emptied under [`WasiCtx`]'s fd lock; the file is flushed and its reference
    /// dropped after it is released (`file_close_fd`, then the flush), so no file code runs
    /// under it.
    pub fn fd_close(&mut self, fd: Fd) -> Result<(), WasiErrno> {
        let file = {
            let _g = guard(&self.fd_lock);
            self.files.file_close_fd(fd)?
        };
        let r = file.flush();
        drop(file);
        Ok(r?)
    }

    /// `fd_fdstat_get`: the file's type, and the fd's flags and rights from its entry.
    pub fn fd_fdstat_get(&self, fd: Fd) -> Result<Fdstat, WasiErrno> {
        let (file, e) = self.entry(fd)?;
        Ok(Fdstat {
            fs_filetype: file.filetype(),
            fs_flags: e.flags,
            fs_rights_base: e.rights_base,
            fs_rights_inheriting: e.rights_inheriting,
        })
    }

    /// `fd_fdstat_set_flags`: needs `FD_FDSTAT_SET_FLAGS`; `Inval` for bits witx does not
    /// define.
    ///
    /// A read-modify-write of the fd's entry: the table reads and writes a payload in two
    /// separate calls (it has no atomic update), so between them another thread could close
    /// the fd and open another file at the same number, and the entry computed from the old
    /// file — its rights — would land on the new one. Holding the fd lock, which `fd_close`
    /// and `fd_renumber` take too, keeps the fd on the same file meanwhile (`path_open`
    /// installs only on free numbers, so it need not take it).
    pub fn fd_fdstat_set_flags(&self, fd: Fd, flags: Fdflags) -> Result<(), WasiErrno> {
        if !Fdflags::ALL.contains(flags) {
            return Err(WasiErrno::Inval);
        }
        let _g = guard(&self.fd_lock);
        let mut e = self.files.fd_payload(fd)?;
        if !e.rights_base.contains(Rights::FD_FDSTAT_SET_FLAGS) {
            return Err(WasiErrno::Notcapable);
        }
        e.flags = flags;
        Ok(self.files.set_fd_payload(fd, e)?)
    }

    /// `fd_fdstat_set_rights`: rights may only be dropped (`Notcapable` for any not held);
    /// as [`WasiCtx::fd_fdstat_set_flags`] for the locking.
    pub fn fd_fdstat_set_rights(
        &self,
        fd: Fd,
        base: Rights,
        inheriting: Rights,
    ) -> Result<(), WasiErrno> {
        let _g = guard(&self.fd_lock);
        let mut e = self.files.fd_payload(fd)?;
        if !e.rights_base.contains(base) || !e.rights_inheriting.contains(inheriting) {
            return Err(WasiErrno::Notcapable);
        }
        e.rights_base = base;
        e.rights_inheriting = inheriting;
        Ok(self.files.set_fd_payload(fd, e)?)
    }

    /// `fd_prestat_get`: `Badf` if `fd` is not open or is not a preopened directory (as
    /// wasmtime answers; wasi-libc stops probing at the first error).
    pub fn fd_prestat_get(&self, fd: Fd) -> Result<Prestat, WasiErrno> {
        let file = self.files.fget(fd).ok_or(WasiErrno::Badf)?;
        let name = file
            .as_dir()
            .and_then(|d| d.preopen.as_ref())
            .ok_or(WasiErrno::Badf)?;
        let pr_name_len = u32::try_from(name.len()).map_err(|_| WasiErrno::Overflow)?;
        Ok(Prestat::Dir { pr_name_len })
    }

    /// `fd_prestat_dir_name`: copies the preopen's name into `buf`. `Badf` if `fd` is not
    /// open, `Notdir` if it is not a preopened directory, `Nametoolong` if `buf` is shorter than
    /// the name (wasmtime's answers).
    pub fn fd_prestat_dir_name(&self, fd: Fd, buf: &mut [u8]) -> Result<(), WasiErrno> {
        let file = self.files.fget(fd).ok_or(WasiErrno::Badf)?;
        let name = file
            .as_dir()
            .and_then(|d| d.preopen.as_ref())
            .ok_or(WasiErrno::Notdir)?;
        let dst = buf.get_mut(..name.len()).ok_or(WasiErrno::Nametoolong)?;
        dst.copy_from_slice(name.as_bytes());
        Ok(())
    }

    /// Every open preopened directory and its name, in fd order, by iterating the table (what
    /// a runtime lists for its users, or what a guest's probe of 3, 4, … finds when nothing
    /// was closed or renumbered).
    pub fn preopens(&self) -> Vec<(Fd, String)> {
        self.files
            .iter()
            .filter_map(|o| {
                let name = o.file.as_dir()?.preopen.clone()?;
                Some((o.fd, name))
            })
            .collect()
    }

    /// `fd_renumber(from, to)`: atomically moves the descriptor at `from` to `to`, closing
    /// what was at `to`; `from` is closed. Through [`Files::renumber`], so no other thread sees
    /// the file at both numbers or at neither, and the entry (rights, flags) moves with it.
    ///
    /// WASI's rule, as wasmtime's preview 1 applies it (`crates/wasi/src/p1.rs`): **both fds
    /// must be open**, else `Badf` — unlike `dup2`, `to` cannot be a free number. An fd
    /// reserved by an async `path_open` still in progress is not open to the guest, so
    /// renumbering onto it is `Badf` too, as the core's `renumber_onto` answers. `from == to`
    /// with `from` open changes nothing.
    ///
    /// Through the core's [`Files::renumber_onto`], which checks that `to` is installed and
    /// moves the entry under one lock hold, so no other handle can close `to` in between. (The
    /// fd lock still serialises this with `fd_close`; the displaced file's flush runs inside
    /// the call, and these files' flushes do nothing.)
    pub fn fd_renumber(&mut self, from: Fd, to: Fd) -> Result<(), WasiErrno> {
        let _g = guard(&self.fd_lock);
        self.files
            .renumber_onto(from, to, self.nofile)
            .map(|_| ())
            .map_err(WasiErrno::from)
    }

    /// The checks `path_open` makes before it touches the file system or the table:
    /// `Inval` for undefined flag or rights bits or `CREAT|DIRECTORY`, `Badf` if `dirfd` is not
    /// open, `Notdir` if it is not a directory, `Notcapable` if it lacks `PATH_OPEN` (or
    /// `PATH_CREATE_FILE` for `CREAT`, `PATH_FILESTAT_SET_SIZE` for `TRUNC`) or if the rights
    /// asked for are not all among its inheriting rights.
    fn prepare_open(&self, dirfd: Fd, req: &PathOpen) -> Result<Prepared, WasiErrno> {
        if !Oflags::ALL.contains(req.oflags)
            || !Fdflags::ALL.contains(req.fdflags)
            || req.dirflags & !LOOKUP_SYMLINK_FOLLOW != 0
            || !req.rights_base.is_valid()
            || !req.rights_inheriting.is_valid()
            || req
                .oflags
                .contains(Oflags(Oflags::CREAT.0 | Oflags::DIRECTORY.0))
        {
            return Err(WasiErrno::Inval);
        }
        let (file, e) = self.entry(dirfd)?;
        let dir = file.as_dir().ok_or(WasiErrno::Notdir)?;
        let mut needed = Rights::PATH_OPEN;
        if req.oflags.contains(Oflags::CREAT) {
            needed = needed.union(Rights::PATH_CREATE_FILE);
        }
        if req.oflags.contains(Oflags::TRUNC) {
            needed = needed.union(Rights::PATH_FILESTAT_SET_SIZE);
        }
        if !e.rights_base.contains(needed)
            || !e.rights_inheriting.contains(req.rights_base)
            || !e.rights_inheriting.contains(req.rights_inheriting)
        {
            return Err(WasiErrno::Notcapable);
        }
        Ok(Prepared {
            dir: dir.node.clone(),
            req: req.clone(),
        })
    }

    /// `path_open(dirfd, …)`, the kernel's way: check, reserve the lowest free fd (`Mfile` if
    /// none), open, install the file with its entry in one step. A failed open (`Noent`,
    /// `Exist`, `Notdir`, `Isdir`, `Notcapable` for a path escaping the directory, …) drops
    /// the reservation: the fd is free again and nothing was ever visible at it.
    ///
    /// The new fd's rights are those asked for (all of which `dirfd` must be able to hand
    /// down), kept where they make sense for the file's type. Lowest-free numbering, as Linux
    /// and wasmer; wasmtime's preview 1 reuses the highest freed number instead.
    pub fn path_open(&self, dirfd: Fd, req: &PathOpen) -> Result<Fd, WasiErrno> {
        let prepared = self.prepare_open(dirfd, req)?;
        let slot = self.files.get_unused_fd_flags(0, self.nofile)?;
        let (file, entry) = prepared.open()?;
        Ok(slot.install_with(file, entry))
    }

    /// `path_open` as an async host call (wasmtime's `add_to_linker_async` needs `Send`
    /// futures): the checks and the reservation happen now, then the returned future awaits
    /// `io` — the slow part of a real open (a host file system, a network mount) — holding the
    /// reservation, and installs.
    ///
    /// The reservation is an [`fdtable::OwnedFdReservation`]: `Send`, borrowing nothing, so
    /// the future is `Send + 'static` and may be resumed on any thread. While it is pending the
    /// fd is reserved: not open to the guest (`Badf` to every call), skipped by other opens,
    /// `Badf` as a renumber target. If the future is dropped before it completes — the guest's
    /// call cancelled — the reservation's drop gives the fd back; if the open fails, the same.
    pub fn path_open_async<W>(
        &mut self,
        dirfd: Fd,
        req: PathOpen,
        io: W,
    ) -> impl Future<Output = Result<Fd, WasiErrno>> + Send + 'static
    where
        W: Future<Output = ()> + Send + 'static,
    {
        let ready = self.prepare_open(dirfd, &req).and_then(|prepared| {
            let slot = self.files.reserve_owned(0, self.nofile)?;
            Ok((prepared, slot))
        });
        async move {
            let (prepared, slot) = ready?;
            io.await;
            let (file, entry) = prepared.open()?;
            Ok(slot.install_with(file, entry))
        }
    }
}

//! A guest's WASI state: its descriptor table (`fdtable::Files`), arguments and environment.

use crate::desc::{Desc, FdEntry, HostDir, Input, Output, StdioKind};
use crate::host::stdio_as_file;
use crate::memory::{CallError, CallResult};
use crate::types::{Rights, WasiErrno};
use fdtable::{Fd, Files};
use std::path::Path;

/// The descriptor table: [`Desc`] files with an [`FdEntry`] (rights and flags) per fd.
pub type WasiTable = Files<Desc, FdEntry>;

/// The default cap on descriptor numbers, as `RLIMIT_NOFILE` (`Mfile` at it): Linux's
/// `nr_open` default.
pub const DEFAULT_NOFILE: u64 = 1 << 20;

/// Rights of a preopened directory: every directory right, and, inherited, every directory and
/// file right.
pub const PREOPEN_RIGHTS: (Rights, Rights) =
    (Rights::DIRECTORY, Rights::DIRECTORY.union(Rights::FILE));

/// Builds a [`WasiCtx`]: standard streams at 0–2, then preopened directories at 3, 4, … in the
/// order given (wasi-libc finds preopens by probing 3, 4, … until `fd_prestat_get` fails).
#[derive(Debug, Default)]
pub struct WasiCtxBuilder {
    args: Vec<String>,
    env: Vec<(String, String)>,
    stdin: Input,
    stdout: Output,
    stderr: Output,
    preopens: Vec<(HostDir, Rights, Rights)>,
    nofile: Option<u64>,
}

impl WasiCtxBuilder {
    /// No arguments, no environment, the host's standard streams, no preopens.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an argument (the first is the program's name).
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds an environment variable.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Standard input.
    pub fn stdin(mut self, input: Input) -> Self {
        self.stdin = input;
        self
    }

    /// Standard output.
    pub fn stdout(mut self, output: Output) -> Self {
        self.stdout = output;
        self
    }

    /// Standard error.
    pub fn stderr(mut self, output: Output) -> Self {
        self.stderr = output;
        self
    }

    /// Preopens the host directory `host` as `guest` (the name `fd_prestat_dir_name` gives),
    /// with [`PREOPEN_RIGHTS`]. Fails if `host` cannot be opened as a directory.
    pub fn preopen_dir(
        self,
        host: impl AsRef<Path>,
        guest: impl Into<String>,
    ) -> std::io::Result<Self> {
        let (base, inheriting) = PREOPEN_RIGHTS;
        self.preopen_dir_with_rights(host, guest, base, inheriting)
    }

    /// As [`WasiCtxBuilder::preopen_dir`], with the given rights.
    pub fn preopen_dir_with_rights(
        mut self,
        host: impl AsRef<Path>,
        guest: impl Into<String>,
        base: Rights,
        inheriting: Rights,
    ) -> std::io::Result<Self> {
        let dir = cap_std::fs::Dir::open_ambient_dir(host, cap_std::ambient_authority())?;
        self.preopens.push((
            HostDir::new(dir, Some(guest.into())),
            base.intersect(Rights::DIRECTORY),
            inheriting,
        ));
        Ok(self)
    }

    /// The cap on descriptor numbers ([`DEFAULT_NOFILE`] by default).
    pub fn nofile(mut self, nofile: u64) -> Self {
        self.nofile = Some(nofile);
        self
    }

    /// The context: `Mfile` if `nofile` leaves no room for the streams and preopens, `Nomem`
    /// if memory runs out.
    pub fn build(self) -> Result<WasiCtx, WasiErrno> {
        let nofile = self.nofile.unwrap_or(DEFAULT_NOFILE);
        let files: WasiTable = Files::try_new()?;
        let stdio = [
            (StdioKind::In, Desc::Stdin(self.stdin)),
            (StdioKind::Out, Desc::Stdout(StdioKind::Out, self.stdout)),
            (StdioKind::Err, Desc::Stdout(StdioKind::Err, self.stderr)),
        ];
        for (kind, desc) in stdio {
            let stream = FdEntry {
                base: Rights::STDIO,
                inheriting: Rights::NONE,
                flags: 0,
            };
            // An inherited stream that is a file on the host (`< input`, `> output`,
            // `/dev/null`) is that file to the guest, as to a native program: it seeks, stats
            // and syncs it. A terminal, a pipe or a socket stays a stream.
            let inherited = matches!(
                desc,
                Desc::Stdin(Input::Inherit) | Desc::Stdout(_, Output::Inherit)
            );
            let (desc, entry) = match inherited.then(|| stdio_as_file(kind)).flatten() {
                Some((file, base, flags)) => (
                    Desc::File(file),
                    FdEntry {
                        base,
                        flags,
                        ..stream
                    },
                ),
                None => (desc, stream),
            };
            files.install_with(fdtable::FileRef::try_new(desc)?, 0, entry, nofile)?;
        }
        for (dir, base, inheriting) in self.preopens {
            let entry = FdEntry {
                base,
                inheriting,
                flags: 0,
            };
            // Lowest-free in a table holding exactly 0..n: the preopens are sequential.
            files.install_with(fdtable::FileRef::try_new(Desc::Dir(dir))?, 0, entry, nofile)?;
        }
        let mut args = self.args;
        if args.is_empty() {
            args.push("main.wasm".into());
        }
        Ok(WasiCtx {
            files,
            nofile,
            args,
            env: self
                .env
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
            memory: None,
        })
    }
}

/// A guest's WASI state: what every `wasi_snapshot_preview1` import works on.
pub struct WasiCtx {
    pub(crate) files: WasiTable,
    pub(crate) nofile: u64,
    pub(crate) args: Vec<String>,
    /// `KEY=VALUE` strings.
    pub(crate) env: Vec<String>,
    /// The instance's exported memory, recorded by [`crate::run::instantiate`] (`None` for an
    /// instance made otherwise, whose calls look the export up).
    pub(crate) memory: Option<wasmtime::Memory>,
}

impl std::fmt::Debug for WasiCtx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasiCtx")
            .field("files", &self.files)
            .field("nofile", &self.nofile)
            .field("args", &self.args)
            .finish_non_exhaustive()
    }
}

impl WasiCtx {
    /// A builder.
    pub fn builder() -> WasiCtxBuilder {
        WasiCtxBuilder::new()
    }

    /// The descriptor table (for inspection).
    pub fn table(&self) -> &WasiTable {
        &self.files
    }

    /// The file at `fd` and its payload, read as one snapshot (`fdget_with_payload`: the
    /// table is this guest's alone, so no lock and no reference count), if the fd has every
    /// right in `need`: `Badf` if `fd` is not open, `Notcapable` if a right is missing.
    #[inline]
    pub(crate) fn get(&self, fd: u32, need: Rights) -> CallResult<(Fd<'_, Desc>, FdEntry)> {
        let (file, entry) = self.files.fdget_with_payload(fd).ok_or(WasiErrno::Badf)?;
        if !entry.base.contains(need) {
            return Err(CallError::Errno(WasiErrno::Notcapable));
        }
        Ok((file, entry))
    }

    /// The directory at `fd` if it has every right in `need`: `Badf` if `fd` is not open,
    /// `Notdir` if it is not a directory, `Notcapable` if a right is missing.
    #[inline]
    pub(crate) fn dir(&self, fd: u32, need: Rights) -> CallResult<(Fd<'_, Desc>, FdEntry)> {
        let (file, entry) = self.files.fdget_with_payload(fd).ok_or(WasiErrno::Badf)?;
        if file.as_dir().is_none() {
            return Err(CallError::Errno(WasiErrno::Notdir));
        }
        if !entry.base.contains(need) {
            return Err(CallError::Errno(WasiErrno::Notcapable));
        }
        Ok((file, entry))
    }
}

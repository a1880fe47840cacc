//! `fdtable bench --workload wasi`: fdtable's WASI preview 1 host (`fdtable-wasi`) beside
//! wasmtime's own (`wasmtime-wasi`'s preview 1), on one engine, running one guest module whose
//! loops make descriptor-heavy calls. Each row is one loop iteration of the guest (its note
//! says which calls), so the two hosts' rows differ only in the host: the engine, the guest
//! code and the file system are shared.
//!
//! [`register`] adds the workload to `fdtable bench`; see docs/WASI.md for what the figures
//! show.

use fdtable_bench::framework::{Measurement, Opts, measure_here};
use fdtable_bench::output::Key;
use fdtable_bench::suite::{Case, Workload};
use std::path::Path;
use wasmtime::{Engine, Instance, Linker, Module, Store};

/// The workload's name.
pub const WORKLOAD: &str = "wasi";
/// The baseline's implementation name.
pub const WASMTIME_WASI: &str = "wasmtime-wasi";

/// Registers the workload with `fdtable bench` (call before `fdtable_bench::cli::bench`).
pub fn register() {
    fdtable_bench::suite::register(workloads, &["fdtable", WASMTIME_WASI]);
}

/// The workloads this crate adds.
pub fn workloads() -> Vec<Workload> {
    vec![Workload {
        name: WORKLOAD,
        about: "WASI preview 1 calls from a wasm guest: fdtable's host vs wasmtime-wasi's (same engine, same guest)",
        cases,
        finish: |_| {},
    }]
}

/// Rights the guest asks for: read; write; a directory it lists.
const FD_READ: i64 = 1 << 1;
const FD_WRITE: i64 = 1 << 6;
const DIR_RIGHTS: i64 = (1 << 1) | (1 << 13) | (1 << 14);

/// Files held open by the many-descriptor rows (with stdio and the preopen: 1024 fds).
const MANY: i32 = 1020;
/// Entries of the directory `readdir` lists.
const DIR_ENTRIES: usize = 16;

/// The guest: each exported loop makes `n` iterations and returns how many calls did not
/// answer as expected (0 when all is well), so a host that fails a call is caught.
const GUEST: &str = r#"
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_renumber" (func $fd_renumber (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_readdir"
    (func $fd_readdir (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_get" (func $fd_fdstat_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; 0: the fd path_open returns; 8: nwritten; 16: an fdstat; 48: readdir's bufused;
  ;; 64: an iovec of the byte at 128; 256: "f"; 264: "missing"; 280: "dir"; 512: readdir buffer
  (data (i32.const 64) "\80\00\00\00\01\00\00\00")
  (data (i32.const 128) "x")
  (data (i32.const 256) "f")
  (data (i32.const 264) "missing")
  (data (i32.const 280) "dir")

  (func $open (param $p i32) (param $len i32) (param $oflags i32) (param $rights i64) (result i32)
    (call $path_open (i32.const 3) (i32.const 1) (local.get $p) (local.get $len)
      (local.get $oflags) (local.get $rights) (i64.const 0) (i32.const 0) (i32.const 0)))

  ;; Opens "f" (oflags, rights): the fd, or -errno.
  (func (export "open_file") (param $oflags i32) (param $rights i64) (result i32)
    (local $e i32)
    (local.set $e (call $open (i32.const 256) (i32.const 1) (local.get $oflags) (local.get $rights)))
    (if (result i32) (local.get $e)
      (then (i32.sub (i32.const 0) (local.get $e)))
      (else (i32.load (i32.const 0)))))

  ;; Opens the directory "dir": the fd, or -errno.
  (func (export "open_dir") (param $rights i64) (result i32)
    (local $e i32)
    (local.set $e (call $open (i32.const 280) (i32.const 3) (i32.const 2) (local.get $rights)))
    (if (result i32) (local.get $e)
      (then (i32.sub (i32.const 0) (local.get $e)))
      (else (i32.load (i32.const 0)))))

  (func (export "open_close") (param $n i32) (result i32)
    (local $bad i32)
    (block $done (loop $l
      (br_if $done (i32.eqz (local.get $n)))
      (local.set $bad (i32.add (local.get $bad)
        (i32.ne (call $open (i32.const 256) (i32.const 1) (i32.const 0) (i64.const 2)) (i32.const 0))))
      (local.set $bad (i32.add (local.get $bad)
        (i32.ne (call $fd_close (i32.load (i32.const 0))) (i32.const 0))))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $l)))
    (local.get $bad))

  ;; noent is 44.
  (func (export "open_missing") (param $n i32) (result i32)
    (local $bad i32)
    (block $done (loop $l
      (br_if $done (i32.eqz (local.get $n)))
      (local.set $bad (i32.add (local.get $bad)
        (i32.ne (call $open (i32.const 264) (i32.const 7) (i32.const 0) (i64.const 2)) (i32.const 44))))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $l)))
    (local.get $bad))

  (func (export "open_renumber") (param $to i32) (param $n i32) (result i32)
    (local $bad i32)
    (block $done (loop $l
      (br_if $done (i32.eqz (local.get $n)))
      (local.set $bad (i32.add (local.get $bad)
        (i32.ne (call $open (i32.const 256) (i32.const 1) (i32.const 0) (i64.const 2)) (i32.const 0))))
      (local.set $bad (i32.add (local.get $bad)
        (i32.ne (call $fd_renumber (i32.load (i32.const 0)) (local.get $to)) (i32.const 0))))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $l)))
    (local.get $bad))

  (func (export "write1") (param $fd i32) (param $n i32) (result i32)
    (local $bad i32)
    (block $done (loop $l
      (br_if $done (i32.eqz (local.get $n)))
      (local.set $bad (i32.add (local.get $bad)
        (i32.ne (call $fd_write (local.get $fd) (i32.const 64) (i32.const 1) (i32.const 8)) (i32.const 0))))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $l)))
    (local.get $bad))

  (func (export "readdir") (param $fd i32) (param $n i32) (result i32)
    (local $bad i32)
    (block $done (loop $l
      (br_if $done (i32.eqz (local.get $n)))
      (local.set $bad (i32.add (local.get $bad)
        (i32.ne (call $fd_readdir (local.get $fd) (i32.const 512) (i32.const 4096) (i64.const 0) (i32.const 48))
                (i32.const 0))))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $l)))
    (local.get $bad))

  (func (export "fdstat") (param $first i32) (param $count i32) (param $n i32) (result i32)
    (local $bad i32) (local $i i32)
    (block $done (loop $l
      (br_if $done (i32.eqz (local.get $n)))
      (local.set $bad (i32.add (local.get $bad)
        (i32.ne (call $fd_fdstat_get
                  (i32.add (local.get $first) (i32.rem_u (local.get $i) (local.get $count)))
                  (i32.const 16))
                (i32.const 0))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $l)))
    (local.get $bad))
)
"#;

/// Which host a guest runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// `fdtable-wasi`.
    Fdtable,
    /// `wasmtime-wasi`'s preview 1.
    WasmtimeWasi,
}

impl Host {
    fn name(self) -> &'static str {
        match self {
            Host::Fdtable => "fdtable",
            Host::WasmtimeWasi => WASMTIME_WASI,
        }
    }
}

/// A guest instance on either host, with its scratch directory (preopened as `/`, fd 3).
pub struct Guest {
    run: Box<dyn Runner>,
    _dir: tempfile::TempDir,
}

trait Runner {
    fn call(&mut self, name: &str, args: &[wasmtime::Val]) -> Result<i32, String>;
}

struct On<T: 'static> {
    store: Store<T>,
    instance: Instance,
}

impl<T: 'static> Runner for On<T> {
    fn call(&mut self, name: &str, args: &[wasmtime::Val]) -> Result<i32, String> {
        let f = self
            .instance
            .get_func(&mut self.store, name)
            .ok_or_else(|| format!("the guest has no {name}"))?;
        let mut out = [wasmtime::Val::I32(0)];
        f.call(&mut self.store, args, &mut out)
            .map_err(|e| format!("{name}: {e:#}"))?;
        Ok(out[0].unwrap_i32())
    }
}

fn instantiate<T: 'static>(
    engine: &Engine,
    module: &Module,
    linker: &Linker<T>,
    data: T,
) -> Result<Box<dyn Runner>, String> {
    let mut store = Store::new(engine, data);
    let instance = linker
        .instantiate(&mut store, module)
        .map_err(|e| format!("{e:#}"))?;
    Ok(Box::new(On { store, instance }))
}

impl Guest {
    /// The guest on `host`, in a fresh directory holding "f", "dir/" with 16
    /// files, nothing named "missing".
    pub fn new(host: Host) -> Result<Guest, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let e = |e: std::io::Error| e.to_string();
        std::fs::write(dir.path().join("f"), b"0123456789").map_err(e)?;
        std::fs::create_dir(dir.path().join("dir")).map_err(e)?;
        for i in 0..DIR_ENTRIES {
            std::fs::write(dir.path().join("dir").join(format!("entry-{i:02}")), b"").map_err(e)?;
        }
        let engine = Engine::default();
        let wasm = wat::parse_str(GUEST).map_err(|e| e.to_string())?;
        let module = Module::from_binary(&engine, &wasm).map_err(|e| format!("{e:#}"))?;
        let run = match host {
            Host::Fdtable => fdtable_guest(&engine, &module, dir.path())?,
            Host::WasmtimeWasi => wasmtime_guest(&engine, &module, dir.path())?,
        };
        Ok(Guest { run, _dir: dir })
    }

    fn call_vals(&mut self, name: &str, args: &[wasmtime::Val]) -> Result<i32, String> {
        self.run.call(name, args)
    }

    /// Opens "f" with `rights`: the new fd.
    pub fn open_file(&mut self, rights: i64) -> Result<i32, String> {
        let fd = self.call_vals(
            "open_file",
            &[wasmtime::Val::I32(0), wasmtime::Val::I64(rights)],
        )?;
        if fd < 0 {
            return Err(format!("path_open(\"f\"): errno {}", -fd));
        }
        Ok(fd)
    }

    /// Opens "dir": the new fd.
    pub fn open_dir(&mut self) -> Result<i32, String> {
        let fd = self.call_vals("open_dir", &[wasmtime::Val::I64(DIR_RIGHTS)])?;
        if fd < 0 {
            return Err(format!("path_open(\"dir\"): errno {}", -fd));
        }
        Ok(fd)
    }

    /// Runs the loop `name` (whose last argument is the iteration count) for `n` iterations;
    /// an error if any call answered otherwise than expected.
    pub fn run_loop(&mut self, name: &str, args: &[i32], n: u64) -> Result<(), String> {
        let mut left = n;
        while left > 0 {
            let k = left.min(i32::MAX as u64);
            let mut vals: Vec<wasmtime::Val> =
                args.iter().map(|&a| wasmtime::Val::I32(a)).collect();
            vals.push(wasmtime::Val::I32(k as i32));
            let bad = self.call_vals(name, &vals)?;
            if bad != 0 {
                return Err(format!("{name}: {bad} of {k} calls failed"));
            }
            left -= k;
        }
        Ok(())
    }
}

fn fdtable_guest(engine: &Engine, module: &Module, dir: &Path) -> Result<Box<dyn Runner>, String> {
    let ctx = fdtable_wasi::WasiCtx::builder()
        .stdout(fdtable_wasi::Output::Null)
        .stderr(fdtable_wasi::Output::Null)
        .preopen_dir(dir, "/")
        .map_err(|e| e.to_string())?
        .build()
        .map_err(|e| e.to_string())?;
    let linker = fdtable_wasi::run::linker(engine).map_err(|e| e.to_string())?;
    let mut store = Store::new(engine, ctx);
    let instance =
        fdtable_wasi::run::instantiate(&linker, module, &mut store).map_err(|e| e.to_string())?;
    Ok(Box::new(On { store, instance }))
}

fn wasmtime_guest(engine: &Engine, module: &Module, dir: &Path) -> Result<Box<dyn Runner>, String> {
    let mut b = wasmtime_wasi::WasiCtxBuilder::new();
    // Its best configuration for a synchronous embedding: file operations run on the calling
    // thread. (The default hands each one to a Tokio blocking thread and waits for it: 10 to
    // 20 µs more per call.)
    b.allow_blocking_current_thread(true);
    b.preopened_dir(dir, "/", wasmtime_wasi::FsPerms::ReadWrite)
        .map_err(|e| format!("{e:#}"))?;
    let ctx = b.build_p1();
    let mut linker: Linker<wasmtime_wasi::p1::WasiP1Ctx> = Linker::new(engine);
    wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |t| t).map_err(|e| format!("{e:#}"))?;
    instantiate(engine, module, &linker, ctx)
}

/// A row's setup: prepares the guest, returns the loop's name and leading arguments.
type Setup = fn(&mut Guest) -> Result<(&'static str, Vec<i32>), String>;

/// One row: what it runs, per host.
struct Row {
    variant: &'static str,
    fds: usize,
    note: &'static str,
    setup: Setup,
}

const ROWS: &[Row] = &[
    Row {
        variant: "open+close",
        fds: 4,
        note: "path_open of an existing file + fd_close (2 calls)",
        setup: |_| Ok(("open_close", vec![])),
    },
    Row {
        variant: "open-missing",
        fds: 4,
        note: "path_open of a missing file: noent (1 call)",
        setup: |_| Ok(("open_missing", vec![])),
    },
    Row {
        variant: "open+renumber",
        fds: 5,
        note: "path_open + fd_renumber onto an open fd, closing its file (2 calls)",
        setup: |g| Ok(("open_renumber", vec![g.open_file(FD_READ)?])),
    },
    Row {
        variant: "write-1B",
        fds: 5,
        note: "fd_write of 1 byte to a file (1 call)",
        setup: |g| Ok(("write1", vec![g.open_file(FD_WRITE)?])),
    },
    Row {
        variant: "readdir",
        fds: 5,
        note: "fd_readdir of a 16-entry directory from cookie 0 (1 call)",
        setup: |g| Ok(("readdir", vec![g.open_dir()?])),
    },
    Row {
        variant: "fdstat",
        fds: 1024,
        note: "fd_fdstat_get round-robin over 1020 open files (1 call)",
        setup: |g| {
            let first = open_many(g)?;
            Ok(("fdstat", vec![first, MANY]))
        },
    },
    Row {
        variant: "open+close",
        fds: 1024,
        note: "path_open + fd_close with 1020 other files open (2 calls)",
        setup: |g| {
            open_many(g)?;
            Ok(("open_close", vec![]))
        },
    },
];

/// Opens [`MANY`] files; returns the lowest of their fds (both hosts number them 4..=1023).
fn open_many(g: &mut Guest) -> Result<i32, String> {
    let mut lowest = i32::MAX;
    for _ in 0..MANY {
        lowest = lowest.min(g.open_file(FD_READ)?);
    }
    Ok(lowest)
}

/// Measures `row` on `host`.
fn measure(row: &Row, host: Host, opts: &Opts) -> Result<Measurement, String> {
    let mut g = Guest::new(host)?;
    let (name, args) = (row.setup)(&mut g)?;
    g.run_loop(name, &args, 1)?;
    let mut failed = None;
    let m = measure_here(opts, |n| {
        if failed.is_none()
            && let Err(e) = g.run_loop(name, &args, n)
        {
            failed = Some(e);
        }
    });
    match failed {
        Some(e) => Err(format!("{} on {}: {e}", row.variant, host.name())),
        None => Ok(m),
    }
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (i, _) in ROWS.iter().enumerate() {
        for host in [Host::Fdtable, Host::WasmtimeWasi] {
            let row = &ROWS[i];
            let key = Key {
                workload: WORKLOAD,
                threads: 1,
                fds: row.fds,
                variant: Some(row.variant),
            };
            out.push(Case::measure_noted(
                key,
                host.name(),
                Some(row.note),
                move |opts| measure(&ROWS[i], host, opts),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row runs on both hosts, every call answering as expected.
    #[test]
    fn every_row_runs_on_both_hosts() {
        for row in ROWS {
            for host in [Host::Fdtable, Host::WasmtimeWasi] {
                let mut g = Guest::new(host).unwrap();
                let (name, args) = (row.setup)(&mut g).unwrap();
                g.run_loop(name, &args, 50)
                    .unwrap_or_else(|e| panic!("{} on {host:?}: {e}", row.variant));
            }
        }
    }
}

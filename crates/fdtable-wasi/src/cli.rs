//! `fdtable wasi`: the command line.

use std::path::PathBuf;

/// Arguments of `fdtable wasi`.
#[derive(clap::Args, Debug, Default)]
#[command(trailing_var_arg = true)]
pub struct WasiArgs {
    /// Preopen the host directory HOST as the guest path GUEST (`HOST` alone: the same path
    /// in both). Preopens get fds 3, 4, ... in the order given.
    #[arg(long = "dir", value_name = "HOST[::GUEST]")]
    pub dirs: Vec<String>,
    /// Set an environment variable of the guest (the host's environment is not passed).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// The cap on descriptor numbers, as RLIMIT_NOFILE: opens past it fail with `mfile`.
    /// Default: this process's soft RLIMIT_NOFILE less 64 kept for the host (each guest
    /// descriptor holds a host one), at most 1048576
    #[arg(long, value_name = "N")]
    pub nofile: Option<u64>,
    /// The wasm32-wasip1 program (a binary module).
    #[arg(value_name = "PROG.wasm")]
    pub program: PathBuf,
    /// Its arguments.
    #[arg(value_name = "ARGS", allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// The guest's cap on descriptor numbers when `--nofile` is not given: the host's soft
/// `RLIMIT_NOFILE` less 64 for the host's own descriptors (the engine's, a directory's
/// listing), never less than half of it, and at most [`DEFAULT_NOFILE`](crate::DEFAULT_NOFILE).
/// Each guest descriptor holds a host one, so a guest that fills its table meets `mfile` from
/// its own, as a native program meets EMFILE at its limit, before the host runs out and
/// calls that open nothing for the guest (a listing, a path walked through a subdirectory)
/// fail.
#[cfg(unix)]
pub fn default_nofile() -> u64 {
    const HOST_RESERVE: u64 = 64;
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX);
    soft.saturating_sub(HOST_RESERVE)
        .max(soft / 2)
        .min(crate::DEFAULT_NOFILE)
}

/// Exit status of a trapped guest: the shell's status for SIGABRT, as wasmtime's command uses.
pub const TRAP_STATUS: i32 = 128 + 6;

/// Runs `fdtable wasi`; returns the process exit status: the guest's, 134 if it trapped, 1 if
/// it could not be run, 2 for bad arguments.
#[cfg(unix)]
pub fn wasi(args: WasiArgs) -> i32 {
    use crate::run::Outcome;
    let nofile = args.nofile.unwrap_or_else(default_nofile);
    let mut b = crate::WasiCtx::builder().nofile(nofile);
    b = b.arg(args.program.display().to_string());
    for a in &args.args {
        b = b.arg(a.clone());
    }
    for kv in &args.env {
        let Some((k, v)) = kv.split_once('=') else {
            eprintln!("fdtable wasi: --env {kv:?}: expected KEY=VALUE");
            return 2;
        };
        b = b.env(k, v);
    }
    for d in &args.dirs {
        let (host, guest) = d.split_once("::").unwrap_or((d, d));
        b = match b.preopen_dir(host, guest) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("fdtable wasi: --dir {d}: cannot open {host:?} as a directory: {e}");
                return 1;
            }
        };
    }
    let ctx = match b.build() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fdtable wasi: cannot set up the descriptor table: {e}");
            return 1;
        }
    };
    let bytes = match std::fs::read(&args.program) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("fdtable wasi: {}: {e}", args.program.display());
            return 1;
        }
    };
    // The guest runs on a thread of its own, whose stack holds the wasm stack the engine
    // allows (`GUEST_WASM_STACK`) and the host's frames around it.
    let program = args.program.clone();
    let guest = std::thread::Builder::new()
        .name("wasi guest".into())
        .stack_size(GUEST_THREAD_STACK)
        .spawn(move || {
            let engine = crate::run::engine_with_stack(GUEST_WASM_STACK)?;
            let m = crate::run::compile(&engine, &bytes)?;
            crate::run::run(&crate::run::linker(&engine)?, &m, ctx)
        });
    let loaded = match guest.map(|t| t.join()) {
        Ok(Ok(r)) => r,
        Ok(Err(_)) => {
            eprintln!("fdtable wasi: {}: the host panicked", program.display());
            return 1;
        }
        Err(e) => {
            eprintln!("fdtable wasi: cannot start the guest's thread: {e}");
            return 1;
        }
    };
    match loaded {
        Ok(Outcome::Exit(code)) if code < 126 => code as i32,
        Ok(Outcome::Exit(code)) => {
            eprintln!(
                "fdtable wasi: {}: exit status {code} is outside WASI's [0, 126)",
                args.program.display()
            );
            1
        }
        Ok(Outcome::Trap(e)) => {
            eprintln!("fdtable wasi: {}: trapped: {e:?}", args.program.display());
            TRAP_STATUS
        }
        Err(e) => {
            eprintln!("fdtable wasi: {}: {e}", args.program.display());
            1
        }
    }
}

/// The wasm stack a guest may use: 8 MiB, what Go's runner for `wasip1` asks of wasmtime
/// (`-W max-wasm-stack=8388608`; the engine's default, 512 KiB, stops Go's deep-recursion
/// tests: "wasm call stack exhausted").
#[cfg(unix)]
pub const GUEST_WASM_STACK: usize = 8 << 20;

/// The native stack of the guest's thread: the wasm stack and room for the host's frames.
#[cfg(unix)]
const GUEST_THREAD_STACK: usize = GUEST_WASM_STACK + (8 << 20);

/// `fdtable wasi` needs a Unix host (Linux, macOS, the BSDs).
#[cfg(not(unix))]
pub fn wasi(args: WasiArgs) -> i32 {
    let _ = args;
    eprintln!("fdtable wasi: this host is not supported (Unix hosts only)");
    1
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_default_nofile_leaves_the_host_room_below_its_own_limit() {
        let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX);
        let n = default_nofile();
        assert!(n <= crate::DEFAULT_NOFILE);
        if soft <= crate::DEFAULT_NOFILE {
            assert!(
                n < soft,
                "{n} descriptors for the guest, {soft} for the process"
            );
            assert!(n >= soft / 2);
        }
    }
}

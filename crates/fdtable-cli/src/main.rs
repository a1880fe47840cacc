//! The `fdtable` command: `bench`, `replay`, `record`, `run`, `wasi`.
//!
//! `bench` and `replay` work on every host the library builds for (Linux, macOS, on x86_64 and
//! aarch64). `record` runs the command under strace, so it needs Linux. `run` is a ptrace and
//! seccomp supervisor that reads x86_64 registers, so it needs Linux on x86_64; elsewhere the
//! `fdtable-run` crate is not built at all, and both commands say what they need. `wasi` runs
//! on Unix hosts.

#![forbid(unsafe_code)]

use clap::{Parser, Subcommand};

/// fdtable: the Linux kernel's file-descriptor layer in user space.
#[derive(Parser, Debug)]
#[command(name = "fdtable", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the kernel fast paths' experiments beside the kernel, the naive "before", lock-based
    /// tables and gVisor.
    Bench(fdtable_bench::cli::BenchArgs),
    /// Replay strace logs through fdtable and compare every descriptor-layer result.
    Replay(fdtable_replay::cli::ReplayArgs),
    /// Run a command under strace from a clean descriptor set, then replay the log (Linux).
    Record(fdtable_replay::cli::RecordArgs),
    /// Run a command with fdtable as the descriptor table of every process it starts (Linux on
    /// x86_64).
    Run(RunArgs),
    /// Run a WASI preview 1 program (wasm32-wasip1) on wasmtime with fdtable as its
    /// descriptor table.
    Wasi(fdtable_wasi::cli::WasiArgs),
}

/// Where `fdtable run` works: its supervisor traces system calls through x86_64 registers.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
use fdtable_run::cli::RunArgs;

/// `fdtable run`'s arguments where it cannot run: taken as they come, to say so.
#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
#[derive(clap::Args, Debug)]
struct RunArgs {
    /// The command and its arguments (and any option of `fdtable run`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    _args: Vec<std::ffi::OsString>,
}

/// What `fdtable run` needs, for hosts that lack it.
#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
const RUN_NEEDS: &str = "fdtable run needs Linux on x86_64 (a ptrace and seccomp supervisor \
    that reads x86_64 registers; aarch64 is not supported yet)";

/// What `fdtable record` needs, for hosts that lack it.
const RECORD_NEEDS: &str = "fdtable record needs Linux (it runs the command under strace); \
    `fdtable replay` replays logs recorded there on any host";

/// This host, as `RUN_NEEDS` and `RECORD_NEEDS` name hosts.
fn host() -> String {
    let os = match std::env::consts::OS {
        "macos" => "macOS",
        "linux" => "Linux",
        other => other,
    };
    format!("{os} on {}", std::env::consts::ARCH)
}

fn run(args: RunArgs) -> i32 {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    return fdtable_run::cli::run(args);
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    {
        let _ = args;
        eprintln!("{RUN_NEEDS}; this is {}", host());
        // As `fdtable run` when its supervisor cannot run.
        125
    }
}

fn record(args: fdtable_replay::cli::RecordArgs) -> i32 {
    if cfg!(target_os = "linux") {
        return fdtable_replay::cli::record(args);
    }
    eprintln!("{RECORD_NEEDS}; this is {}", host());
    2
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Bench(a) => {
            fdtable_wasi_bench::register();
            fdtable_bench::cli::bench(a)
        }
        Command::Replay(a) => fdtable_replay::cli::replay(a),
        Command::Record(a) => record(a),
        Command::Run(a) => run(a),
        Command::Wasi(a) => fdtable_wasi::cli::wasi(a),
    };
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_name_what_is_needed_and_the_host() {
        #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
        assert!(RUN_NEEDS.contains("Linux on x86_64"));
        assert!(RECORD_NEEDS.contains("needs Linux"));
        let h = host();
        assert!(h.contains(" on "), "{h}");
        assert!(h.ends_with(std::env::consts::ARCH));
    }

    #[test]
    fn every_command_parses() {
        for args in [
            &["fdtable", "bench", "--list"][..],
            &["fdtable", "replay", "x.strace"],
            &["fdtable", "record", "--", "true"],
            &["fdtable", "run", "--", "true"],
            &["fdtable", "run", "--nofile", "64", "ls", "-l"],
        ] {
            Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        }
    }
}

//! The `fdtable` command: `bench`, `replay`, `record`, `run`.

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
    /// Run a command under strace from a clean descriptor set, then replay the log.
    Record(fdtable_replay::cli::RecordArgs),
    /// Run a command with fdtable as the descriptor table of every process it starts.
    Run(fdtable_run::cli::RunArgs),
    /// Run a WASI preview 1 program (wasm32-wasip1) on wasmtime with fdtable as its
    /// descriptor table.
    Wasi(fdtable_wasi::cli::WasiArgs),
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Bench(a) => {
            fdtable_wasi_bench::register();
            fdtable_bench::cli::bench(a)
        }
        Command::Replay(a) => fdtable_replay::cli::replay(a),
        Command::Record(a) => fdtable_replay::cli::record(a),
        Command::Run(a) => fdtable_run::cli::run(a),
        Command::Wasi(a) => fdtable_wasi::cli::wasi(a),
    };
    std::process::exit(code);
}

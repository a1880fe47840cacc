//! `fdtable-run`: the `fdtable run` subcommand as a binary of its own (the crate's tests run
//! it; `fdtable run` is the same code).

#![forbid(unsafe_code)]

use clap::Parser;

/// Runs a command with fdtable as the descriptor table of every process it starts.
#[derive(Parser, Debug)]
#[command(name = "fdtable-run", version)]
struct Cli {
    #[command(flatten)]
    args: fdtable_run::cli::RunArgs,
}

fn main() {
    let cli = Cli::parse();
    std::process::exit(fdtable_run::cli::run(cli.args));
}

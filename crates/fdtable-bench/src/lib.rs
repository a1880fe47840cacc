//! `fdtable bench` (under construction).

pub mod cli {
    //! Command-line entry point used by the `fdtable` binary.

    /// Arguments of `fdtable bench`.
    #[derive(clap::Args, Debug)]
    pub struct BenchArgs {
        /// Print one JSON array of rows instead of tables.
        #[arg(long)]
        pub json: bool,
        /// The whole suite in under a minute.
        #[arg(long)]
        pub quick: bool,
        /// Write SVG charts into this directory.
        #[arg(long)]
        pub charts: Option<std::path::PathBuf>,
    }

    /// Runs `fdtable bench`; returns the process exit code.
    pub fn bench(_args: BenchArgs) -> i32 {
        eprintln!("fdtable bench: not built yet");
        2
    }
}

//! `fdtable replay` and `fdtable record` (under construction).

pub mod cli {
    //! Command-line entry points used by the `fdtable` binary.

    /// Arguments of `fdtable replay`.
    #[derive(clap::Args, Debug)]
    pub struct ReplayArgs {
        /// One JSON object per log on stdout.
        #[arg(long)]
        pub json: bool,
        /// strace logs to replay.
        #[arg(required = true)]
        pub logs: Vec<std::path::PathBuf>,
    }

    /// Arguments of `fdtable record`.
    #[derive(clap::Args, Debug)]
    pub struct RecordArgs {
        /// Where to write the log.
        #[arg(long)]
        pub out: Option<std::path::PathBuf>,
        /// The command to run under strace.
        #[arg(last = true, required = true)]
        pub cmd: Vec<String>,
    }

    /// Runs `fdtable replay`; returns the process exit code.
    pub fn replay(_args: ReplayArgs) -> i32 {
        eprintln!("fdtable replay: not built yet");
        2
    }

    /// Runs `fdtable record`; returns the process exit code.
    pub fn record(_args: RecordArgs) -> i32 {
        eprintln!("fdtable record: not built yet");
        2
    }
}

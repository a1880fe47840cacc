//! Command-line entry points used by the `fdtable` binary: `fdtable replay` and
//! `fdtable record`.
//!
//! Exit codes: 0 when every log replayed without a mismatch (and every line could be read),
//! 1 when a log has a mismatch or an unreadable line, 2 when a log or its meta file could not
//! be read at all (or, for `record`, strace could not run).

use crate::meta;
use crate::parse::Source;
use crate::record;
use crate::replay::{Options, Report, replay as replay_one};
use crate::report;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Arguments of `fdtable replay`.
#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// One JSON object per log on stdout.
    #[arg(long)]
    pub json: bool,
    /// Descriptors open at the start, overriding the meta file (e.g. `0,1,2`).
    #[arg(long, value_delimiter = ',')]
    pub fds: Option<Vec<u32>>,
    /// RLIMIT_NOFILE at the start, overriding the meta file.
    #[arg(long)]
    pub nofile: Option<u64>,
    /// strace logs to replay (plain or gzip; `NAME.meta.json` beside each is read).
    #[arg(required = true)]
    pub logs: Vec<std::path::PathBuf>,
}

/// Arguments of `fdtable record`.
#[derive(clap::Args, Debug)]
pub struct RecordArgs {
    /// Where to write the log (default: `NAME.strace` in the current directory, after the
    /// command's name); the meta file goes beside it.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Print the replay's report as JSON.
    #[arg(long)]
    pub json: bool,
    /// The command to run under strace.
    #[arg(last = true, required = true)]
    pub cmd: Vec<String>,
}

/// Runs `fdtable replay`; returns the process exit code.
pub fn replay(args: ReplayArgs) -> i32 {
    replay_to(args, &mut std::io::stdout().lock())
}

/// Runs `fdtable replay` with its reports written to `out`; returns the exit code.
pub fn replay_to(args: ReplayArgs, out: &mut dyn Write) -> i32 {
    let opts = Options {
        initial_fds: args.fds.clone(),
        nofile: args.nofile,
    };
    let mut code = 0;
    for log in &args.logs {
        match run_one(log, &opts) {
            Ok(r) => {
                print_report(out, &r, args.json);
                if !r.clean() {
                    code = code.max(1);
                }
            }
            Err(e) => {
                eprintln!("fdtable replay: {}: {e}", log.display());
                if args.json {
                    // Its object too, so that a consumer of the JSON sees the failure.
                    let _ = writeln!(out, "{}", report::failure_json(log, &e));
                }
                code = 2;
            }
        }
    }
    code
}

fn print_report(out: &mut dyn Write, r: &Report, json: bool) {
    // A closed stdout is not the replay's failure.
    let _ = if json {
        writeln!(out, "{}", report::json(r))
    } else {
        write!(out, "{}", report::text(r))
    };
}

/// Replays one log file with its meta file, showing a progress bar on a terminal.
pub fn run_one(log: &Path, opts: &Options) -> Result<Report, String> {
    let meta = meta::load(log)?;
    let spooled = Spooled::if_needed(log).map_err(|e| format!("copying the log: {e}"))?;
    let src = Source::path(spooled.as_ref().map_or(log, |s| s.0.as_path()));
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = ProgressBar::new(0);
        b.set_style(
            ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} lines ({per_sec})")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b.set_message(
            log.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        b
    });
    let mut tick = |pos: u64, len: u64| {
        if let Some(b) = &bar {
            b.set_length(len);
            b.set_position(pos);
        }
    };
    let r = replay_one(&src, meta.as_ref(), opts, &mut tick).map_err(|e| e.to_string());
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    r
}

/// A log that cannot be read twice (a pipe, `/dev/stdin`, a FIFO, a process substitution),
/// copied to a private temporary file, which is removed when this is dropped: the replay
/// reads its log twice (the pre-pass, then the replay), so [`Source::open`] refuses what
/// cannot be read again, and `fdtable replay <(zcat log.gz)` replays the copy.
struct Spooled(PathBuf);

impl Spooled {
    /// `None` for a regular file (or anything that is not there to copy: opening it then
    /// reports the error).
    fn if_needed(log: &Path) -> std::io::Result<Option<Spooled>> {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        match std::fs::metadata(log) {
            Ok(m) if !m.is_file() && !m.is_dir() => {}
            _ => return Ok(None),
        }
        // ORDERING: Relaxed; a counter for unique names, which publishes nothing.
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("fdtable-replay-{}-{n}.log", std::process::id()));
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        let mut out = o.open(&path)?;
        let spooled = Spooled(path);
        std::io::copy(&mut std::fs::File::open(log)?, &mut out)?;
        Ok(Some(spooled))
    }
}

impl Drop for Spooled {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs `fdtable record`; returns the process exit code.
pub fn record(args: RecordArgs) -> i32 {
    let out = args.out.clone().unwrap_or_else(|| default_out(&args.cmd));
    let rec = match record::record(&args.cmd, &out) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fdtable record: {e}");
            return 2;
        }
    };
    eprintln!(
        "fdtable record: {} exited with {}; log {} ({} lines), meta {}",
        args.cmd.join(" "),
        rec.exit_status,
        out.display(),
        rec.lines,
        meta::meta_path(&out).display()
    );
    match run_one(&out, &Options::default()) {
        Ok(r) => {
            print_report(&mut std::io::stdout().lock(), &r, args.json);
            if r.clean() { 0 } else { 1 }
        }
        Err(e) => {
            eprintln!("fdtable record: replaying {}: {e}", out.display());
            2
        }
    }
}

fn default_out(cmd: &[String]) -> PathBuf {
    let base = cmd
        .first()
        .and_then(|c| Path::new(c).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "record".into());
    PathBuf::from(format!("{base}.strace"))
}

//! Helpers shared by the tests that replay small logs written in the test.

use fdtable_replay::parse::Source;
use fdtable_replay::replay::{Options, Report, replay};

/// The known initial state: 0, 1, 2 open, RLIMIT_NOFILE 1024.
pub fn known() -> Options {
    Options {
        initial_fds: Some(vec![0, 1, 2]),
        nofile: Some(1024),
    }
}

/// Replays an in-memory log.
pub fn run_bytes(data: Vec<u8>, opts: &Options) -> Report {
    replay(&Source::bytes("test", data), None, opts, &mut |_, _| {}).expect("in-memory log")
}

/// Replays a log written in a test: one call per line, indentation and blank lines dropped.
pub fn run_opts(log: &str, opts: &Options) -> Report {
    let text: String = log
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    run_bytes(text.into_bytes(), opts)
}

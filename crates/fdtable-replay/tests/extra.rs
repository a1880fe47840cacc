//! Logs recorded with `fdtable record` beyond the 25-log corpus (tests/data/extra, sources
//! of the probe and the small programs in tests/data/extra/src): ptys through TIOCGPTPEER
//! (script, tmux, Python's pty), namespace and KVM ioctls, O_PATH descriptors, every
//! table errno of the edge-case probe under RLIMIT_NOFILE 10, Go's os/exec with
//! CLONE_PIDFD|CLONE_VFORK beside goroutines, a Java thread pool, Node's libuv pool and
//! child processes, asyncio subprocesses; the forkserver's SCM_RIGHTS traffic recorded with
//! `-X raw` and `-X verbose` (every constant a number). Each must replay with zero mismatches and nothing
//! unsupported.

use fdtable_replay::meta;
use fdtable_replay::parse::Source;
use fdtable_replay::replay::{Options, replay};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/extra")
}

/// (log, minimum values checked, minimum reordered calls)
const LOGS: &[(&str, u64, u64)] = &[
    ("go-test", 1000, 1),
    ("java-threads", 800, 1),
    ("node-misc", 250, 0),
    ("probe-edges", 6000, 1),
    ("python-asyncio-subprocess", 2000, 0),
    ("python-forkserver-xraw", 900, 0),
    ("python-forkserver-xverbose", 900, 0),
    ("python-misc", 2000, 0),
    ("script-pty", 80, 0),
    ("tmux", 300, 0),
];

#[test]
fn every_extra_log_replays_clean() {
    for &(name, min_checked, min_reordered) in LOGS {
        let path = dir().join(format!("{name}.strace.gz"));
        let m = meta::load(&path).expect("meta readable");
        assert!(m.is_some(), "{name}: meta file missing");
        let r = replay(
            &Source::path(&path),
            m.as_ref(),
            &Options::default(),
            &mut |_, _| {},
        )
        .expect("log readable");
        let s = &r.stats;
        let t = s.total();
        assert_eq!(t.mismatched, 0, "{name}: {:#?}", s.first_mismatches);
        assert_eq!(s.errors, 0, "{name}: {:?}", s.first_errors);
        assert_eq!(s.unsupported_calls(), 0, "{name}: {:?}", s.unsupported);
        assert_eq!(s.resyncs, 0, "{name}: resyncs");
        assert!(
            t.checked >= min_checked,
            "{name}: only {} checked",
            t.checked
        );
        assert!(
            s.reordered >= min_reordered,
            "{name}: {} reordered",
            s.reordered
        );
        assert!(r.clean(), "{name}");
    }
}

#[test]
fn every_extra_log_is_listed() {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            n.strip_suffix(".strace.gz").map(str::to_string)
        })
        .collect();
    names.sort();
    let listed: Vec<String> = LOGS.iter().map(|l| l.0.to_string()).collect();
    assert_eq!(names, listed);
}

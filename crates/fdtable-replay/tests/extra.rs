//! Logs recorded with `fdtable record` beyond the 25-log corpus (tests/data/extra, sources
//! of the probe and the small programs in tests/data/extra/src): ptys through TIOCGPTPEER
//! (script, tmux, Python's pty), namespace and KVM ioctls, O_PATH descriptors, every
//! table errno of the edge-case probe under RLIMIT_NOFILE 10, Go's os/exec with
//! CLONE_PIDFD|CLONE_VFORK beside goroutines, a Java thread pool, Node's libuv pool and
//! child processes, asyncio subprocesses; the forkserver's SCM_RIGHTS traffic recorded with
//! `-X raw` and `-X verbose` (every constant a number); the descriptor arguments of failed
//! calls (probe-args: negative, closed and O_PATH descriptors, errnos after the lookup,
//! pidfd_getfd's target table). Each must replay with zero mismatches and nothing
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
    ("probe-args", 100, 0),
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

/// probe-args (tests/data/extra/src/probe_args.c): every failed call's descriptor arguments
/// are judged as the source says.
#[test]
fn probe_args_checks_the_descriptor_arguments_of_failed_calls() {
    let path = dir().join("probe-args.strace.gz");
    let m = meta::load(&path).expect("meta readable");
    let r = replay(
        &Source::path(&path),
        m.as_ref(),
        &Options::default(),
        &mut |_, _| {},
    )
    .expect("log readable");
    let s = &r.stats;
    assert!(r.clean(), "{:#?}", s.first_mismatches);
    // 72 EBADF answers explained by a closed, negative or O_PATH argument (29 of them by
    // O_PATH: read, write, fchmod, mmap, ioctl, fgetxattr, fcntl(F_GETLK), utimensat(fd,
    // NULL)...), two of them by the pidfd_getfd target's table; 2 more (O_PATH too) by
    // accept's and the TIOCGPTPEER ioctl's steps.
    assert_eq!(s.ebadf_args, 72);
    assert_eq!(s.ebadf_opath, 29);
    // ENOTTY, ESPIPE, EAGAIN, ENOTDIR, ENOENT from a dirfd's walk, ENOTSOCK, ENODATA, ESRCH...
    assert_eq!(s.failed_fd_uses, 15);
    // pidfd_getfd: two successes and two EBADFs decided in the child's table (and -1, which
    // no table holds).
    assert_eq!(s.remote_fd_args, 4);
    let unchecked: Vec<(&str, u64)> = s
        .fd_args_unchecked
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        unchecked,
        vec![
            ("EBADF may come from the file's access mode", 2),
            ("EBADF may mean the descriptor is no pidfd", 1),
            ("the errno may come before the descriptor lookup", 3),
        ]
    );
    assert_eq!((s.processes, s.resyncs, s.drift), (2, 0, 0));
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

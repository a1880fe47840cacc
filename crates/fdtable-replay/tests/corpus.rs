//! The acceptance test of issue 4: every log of the corpus (`shared/traces/corpus`, carried
//! here gzip-compressed in `tests/data` with its meta file) replays with zero mismatches, and
//! the replay finds what REPORT.md says about each: the tasks it rebuilds, the descriptors it
//! predicts, the reorderings and the io_uring drift.

use fdtable_replay::meta;
use fdtable_replay::parse::Source;
use fdtable_replay::replay::{Options, Report, replay};
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(format!("{name}.strace.gz"))
}

fn run(name: &str) -> Report {
    let path = data(name);
    let m = meta::load(&path).expect("meta file readable");
    assert!(m.is_some(), "{name}: meta file missing");
    replay(
        &Source::path(&path),
        m.as_ref(),
        &Options::default(),
        &mut |_, _| {},
    )
    .expect("log readable")
}

/// Expected: (processes, threads, descriptors predicted, reordered calls, drift events).
///
/// - Processes and threads: README.md's table.
/// - Descriptors predicted: REPORT.md §4's "fds predicted" for the real logs. The probes'
///   counts are this replay's own: REPORT counts probe-fdcalls' invisible io_uring install,
///   and the churn probe's 8,002 descriptors are 1,600 iterations of open, dup, pipe2 and
///   F_DUPFD_CLOEXEC plus the two opens of the dynamic loader.
/// - Reordered calls: REPORT.md §1 — among the real logs only go-workers (2) and
///   rust-threads (6) need another order than the result lines'; the churn probe thousands.
/// - Drift: the one io_uring install of probe-fdcalls.
fn check(
    name: &str,
    procs: u64,
    threads: u64,
    fds: u64,
    reordered: std::ops::RangeInclusive<u64>,
    drift: u64,
) {
    let r = run(name);
    let s = &r.stats;
    let t = s.total();
    assert_eq!(
        t.mismatched, 0,
        "{name}: mismatches {:#?}",
        s.first_mismatches
    );
    assert_eq!(s.errors, 0, "{name}: unreadable lines {:?}", s.first_errors);
    assert_eq!(t.matched, t.checked, "{name}");
    assert!(t.checked > 0, "{name}: nothing checked");
    assert_eq!(s.unsupported_calls(), 0, "{name}: {:?}", s.unsupported);
    assert_eq!((s.processes, s.threads), (procs, threads), "{name}: tasks");
    assert_eq!(s.fds_predicted, fds, "{name}: descriptors predicted");
    assert!(
        reordered.contains(&s.reordered),
        "{name}: {} reordered calls",
        s.reordered
    );
    assert_eq!(s.drift, drift, "{name}: drift {:?}", s.first_drift);
    assert_eq!(s.inherited, 0, "{name}: inherited");
    assert!(r.clean());
}

macro_rules! corpus {
    ($($test:ident: $name:literal => ($p:expr, $t:expr, $fds:expr, $re:expr, $drift:expr);)*) => {
        $(
            #[test]
            fn $test() {
                check($name, $p, $t, $fds, $re, $drift);
            }
        )*

        /// Every log in the data directory is covered by a test above.
        #[test]
        fn every_log_has_a_test() {
            let mut names: Vec<String> = std::fs::read_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data"))
                .unwrap()
                .filter_map(|e| {
                    let n = e.unwrap().file_name().to_string_lossy().into_owned();
                    n.strip_suffix(".strace.gz").map(str::to_string)
                })
                .collect();
            names.sort();
            let mut listed = vec![$($name.to_string()),*];
            listed.sort();
            assert_eq!(names, listed);
        }
    };
}

corpus! {
    bash_script: "bash-script" => (21, 0, 327, 0..=0, 0);
    bash_script_yy: "bash-script-yy" => (21, 0, 327, 0..=0, 0);
    cargo_build: "cargo-build" => (14, 28, 407, 0..=0, 0);
    cat_single: "cat-single" => (1, 0, 18, 0..=0, 0);
    coreutils_misc: "coreutils-misc" => (16, 1, 315, 0..=0, 0);
    find_xargs_grep: "find-xargs-grep" => (8, 0, 1049, 0..=0, 0);
    git_commit: "git-commit" => (7, 0, 212, 0..=0, 0);
    go_workers: "go-workers" => (6, 5, 222, 2..=2, 0);
    java_version: "java-version" => (1, 17, 70, 0..=0, 0);
    make_gcc: "make-gcc" => (16, 0, 288, 0..=0, 0);
    node_io_uring: "node-io-uring" => (1, 6, 36, 0..=0, 0);
    perl_io: "perl-io" => (6, 0, 103, 0..=0, 0);
    probe_fdcalls: "probe-fdcalls" => (2, 0, 61, 0..=0, 1);
    probe_process: "probe-process" => (10, 5, 24, 0..=0, 0);
    probe_thread_churn: "probe-thread-churn" => (1, 8, 8002, 1000..=u64::MAX, 0);
    python_asyncio_net: "python-asyncio-net" => (1, 0, 179, 0..=0, 0);
    python_forkserver: "python-forkserver" => (5, 3, 461, 0..=0, 0);
    python_imports: "python-imports" => (1, 0, 189, 0..=0, 0);
    python_subprocess: "python-subprocess" => (12, 0, 233, 0..=0, 0);
    python_threads: "python-threads" => (1, 8, 311, 0..=0, 0);
    rust_threads: "rust-threads" => (4, 5, 122, 6..=6, 0);
    sh_stderr_format: "sh-stderr-format" => (4, 0, 64, 0..=0, 0);
    sort_uniq: "sort-uniq" => (5, 0, 121, 0..=0, 0);
    ssh_closefrom: "ssh-closefrom" => (4, 0, 63, 0..=0, 0);
    tar_gzip: "tar-gzip" => (10, 0, 193, 0..=0, 0);
}

/// A plain copy of the log without its meta file: same numbers, initial state assumed.
#[test]
fn without_meta_file_the_initial_state_is_assumed() {
    let path = data("python-imports");
    let bytes = std::fs::read(&path).unwrap();
    let r = replay(
        &Source::bytes("python-imports", bytes),
        None,
        &Options::default(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(r.init_from, "assumed");
    assert!(r.init.assumed);
    assert_eq!(r.stats.total().mismatched, 0);
    assert_eq!(r.stats.fds_predicted, 189);
}

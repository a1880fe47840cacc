//! The descriptor-argument probe (tests/data/extra/src/probe_args.c) built with the C
//! compiler and recorded with `fdtable record` on the running kernel: whatever kernel runs
//! the tests, the replay's rules for failed calls' descriptor arguments (EBADF from closed,
//! negative and O_PATH descriptors; errnos after the lookup; pidfd_getfd's target table) must
//! agree with it. The log recorded when the probe was written is carried in tests/data/extra
//! (tests/extra.rs).
//!
//! Needs strace and a C compiler (`$CC`, else `cc`); where ptrace is forbidden the test is
//! skipped, unless FDTABLE_REQUIRE_STRACE is set (as CI does), which makes either missing a
//! failure.

use fdtable_replay::cli::run_one;
use fdtable_replay::record::record;
use fdtable_replay::replay::Options;
use std::path::{Path, PathBuf};
use std::process::Command;

fn required() -> bool {
    std::env::var_os("FDTABLE_REQUIRE_STRACE").is_some()
}

/// Whether strace can trace here (ptrace may be forbidden in a container).
fn strace_works() -> bool {
    Command::new("strace")
        .args(["-o", "/dev/null", "--", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

fn compile(src: &Path, out: &Path) -> Result<(), String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let st = Command::new(&cc)
        .args(["-O1", "-Wall", "-o"])
        .arg(out)
        .arg(src)
        .status()
        .map_err(|e| format!("cannot run {cc}: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("{cc} failed on {}: {st}", src.display()))
    }
}

#[test]
fn the_probe_recorded_here_replays_clean() {
    if !strace_works() {
        assert!(
            !required(),
            "strace cannot trace here, and FDTABLE_REQUIRE_STRACE is set"
        );
        eprintln!("strace cannot trace here; skipping the probe");
        return;
    }
    let dir = std::env::temp_dir().join(format!("fdtable-replay-probe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/extra/src/probe_args.c");
    let bin = dir.join("probe-args");
    if let Err(e) = compile(&src, &bin) {
        assert!(!required(), "{e}, and FDTABLE_REQUIRE_STRACE is set");
        eprintln!("{e}; skipping the probe");
        return;
    }
    let log = dir.join("probe-args.strace");
    let rec = record(&[bin.display().to_string()], &log).expect("recorded");
    assert_eq!(rec.exit_status, 0);
    let r = run_one(&log, &Options::default()).expect("replayed");
    let s = &r.stats;
    assert!(
        r.clean(),
        "{:#?}\n{}",
        s.first_mismatches,
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert_eq!(r.init_from, "meta file");
    // Whoever runs it: the EBADFs of closed, negative and O_PATH descriptors need no
    // privilege.
    assert!(s.ebadf_args >= 60, "{} EBADF explained", s.ebadf_args);
    assert!(s.ebadf_opath >= 25, "{} by O_PATH", s.ebadf_opath);
    assert!(
        s.failed_fd_uses >= 8,
        "{} found by the lookup",
        s.failed_fd_uses
    );
    // pidfd_getfd reaches the target's table unless ptrace is restricted (EPERM first).
    let text = std::fs::read_to_string(&log).unwrap();
    let got_one = text
        .lines()
        .any(|l| l.contains("pidfd_getfd(") && !l.contains("= -1"));
    if got_one {
        assert!(
            s.remote_fd_args >= 4,
            "{} targets checked",
            s.remote_fd_args
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

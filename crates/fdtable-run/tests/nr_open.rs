//! `fs.nr_open` lowered below a process's `RLIMIT_NOFILE` (root only): the dup family fails
//! at numbers the limit allows but no table can grow to (round 11 of the red team: the
//! library recorded them as done). A test binary of its own: the probe changes a system-wide
//! setting for a moment, and cargo runs test binaries one at a time.

mod support;

use support::{build_dir, cc, native, same, scratch};

/// Puts `fs.nr_open` back as it was, even if the test fails.
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/sys/fs/nr_open", &self.0);
    }
}

#[test]
fn numbers_beyond_nr_open_fail_as_natively() {
    let Some(p) = cc("probe_nr_open.c", &build_dir()) else {
        return;
    };
    let Ok(old) = std::fs::read_to_string("/proc/sys/fs/nr_open") else {
        return;
    };
    let _restore = Restore(old.trim().to_string());
    let p = p.to_str().unwrap();
    let n = native(&[p, "20000", "19968"], &scratch("nr-open-native"), &[]);
    if n.stdout.starts_with("unsupported") {
        // Not root, or a read-only /proc/sys: nothing to check here.
        eprintln!("skipped: {}", n.stdout.trim());
        return;
    }
    let r = same("nr-open", &[p, "20000", "19968"], &[], |_| {});
    assert!(
        r.stdout.starts_with(
            "dup2(0, 19978) -> -1 EBADF\nF_GETFD of it -> -1 EBADF\n\
             dup3(0, 19968, O_CLOEXEC) -> -1 EBADF\nF_GETFD of it -> -1 EBADF\n\
             F_DUPFD(0, 19973) -> -1 EMFILE\nF_DUPFD(0, 19967) -> 19967 \n\
             the same again -> -1 EMFILE\n"
        ),
        "{}",
        r.stdout
    );
}

//! `openneg` (the failed-open fast path, `fput_badopen`; Mateusz Guzik's will-it-scale
//! `openneg`): `open` of a missing path in a loop, on an unshared table
//! (`openneg_processes -t 1`).
//!
//! - `fdtable`: `Task::open` — reserve the fd, ask the namespace, give the fd back on
//!   `ENOENT`; no file object is built, nothing is deferred.
//! - `before`: [`NaiveOpen`] — build the file object first, look the path up, and hand the
//!   object to deferred work (a task-work-like list drained when the call returns), as Linux
//!   did before 2023.
//! - `kernel`: `open(2)` of a missing path under /tmp, in a forked single-threaded child.

use super::no_finish;
use crate::framework::{self, Opts};
use crate::impls::kernel;
use crate::output::Key;
use crate::suite::{Case, Workload};
use fdtable::Errno;
use fdtable_vfs::workloads::{NaiveOpen, bench_task};
use std::hint::black_box;

/// `openneg`.
pub const OPENNEG: Workload = Workload {
    name: "openneg",
    about: "open of a missing path in a loop (ENOENT), unshared table (fput_badopen)",
    cases,
    finish: no_finish,
};

const MISSING: &[u8] = b"/tmp/nonexistent";
const KERNEL_MISSING: &str = "/tmp/fdtable-bench-nonexistent";

fn key() -> Key {
    Key::new("openneg", 1, 0)
}

fn fdtable_case() -> Case {
    Case::measure(key(), "fdtable", |opts: &Opts| {
        let task = bench_task();
        if task.open(MISSING, 0, 0) != Err(Errno::ENOENT) {
            return Err("openneg: the path exists".into());
        }
        Ok(framework::measure(
            opts,
            vec![Box::new(move |n| {
                for _ in 0..n {
                    black_box(task.open(black_box(MISSING), 0, 0)).expect_err("ENOENT");
                }
            })],
        ))
    })
}

fn before_case() -> Case {
    Case::measure_noted(
        key(),
        "before",
        Some("build file first, deferred release"),
        |opts| {
            let task = bench_task();
            let mut naive = NaiveOpen::new();
            if naive.open(&task, MISSING, 0) != Err(Errno::ENOENT) {
                return Err("openneg: the path exists".into());
            }
            Ok(framework::measure(
                opts,
                vec![Box::new(move |n| {
                    for _ in 0..n {
                        black_box(naive.open(&task, black_box(MISSING), 0)).expect_err("ENOENT");
                    }
                })],
            ))
        },
    )
}

fn kernel_case() -> Case {
    Case::measure_noted(key(), "kernel", Some("open(2) → ENOENT"), |opts| {
        kernel::in_child(opts, |opts, buf| {
            let path = std::ffi::CString::new(KERNEL_MISSING).map_err(|e| e.to_string())?;
            let try_open = || {
                // SAFETY: a valid NUL-terminated path.
                let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY) };
                fd < 0 && kernel::errno() == libc::ENOENT
            };
            if !try_open() {
                return Err(format!("openneg: {KERNEL_MISSING} exists"));
            }
            kernel::sample_here(opts, buf, |n| (0..n).all(|_| try_open()))
        })
    })
}

fn cases() -> Vec<Case> {
    vec![fdtable_case(), before_case(), kernel_case()]
}

//! `open1` (will-it-scale open1): `open(O_RDWR)` + `close` of an existing file, one file per
//! thread. 1 thread: an unshared table (`open1_processes -t 1`); 2 threads: one shared table
//! (`open1_threads -t 2`).
//!
//! - `fdtable`: `Task::open` + `Task::close` on a file of the in-memory file system.
//! - `before`: [`NaiveOpen`] (the file object built before the path walk, a throw-away object
//!   released through deferred work) + `Task::close`.
//! - `kernel`: `open(2)` + `close(2)` of a file under the system temp directory.
//! - `gvisor`: the harness's open1 — the table part only (a fresh eventfd file installed and
//!   closed), no path walk.

use super::no_finish;
use crate::framework::{self, Measurement, Opts, Worker};
use crate::impls::kernel;
use crate::output::Key;
use crate::suite::{Case, Workload};
use fdtable_vfs::Task;
use fdtable_vfs::uapi::{O_CREAT, O_RDWR};
use fdtable_vfs::workloads::{NaiveOpen, bench_task};
use std::ffi::CString;

/// `open1`.
pub const OPEN1: Workload = Workload {
    name: "open1",
    about: "open(O_RDWR) + close of an existing per-thread file (will-it-scale open1); 1 thread: unshared table, 2 threads: one shared table",
    cases,
    finish: no_finish,
};

fn key(threads: usize) -> Key {
    Key::new("open1", threads, 0)
}

fn path(i: usize) -> Vec<u8> {
    format!("/tmp/open1.{i}").into_bytes()
}

/// A task with one file per thread created, and one task handle per thread.
fn tasks(threads: usize) -> Result<Vec<Task>, String> {
    let mut task = bench_task();
    for i in 0..threads {
        let fd = task
            .open(&path(i), (O_CREAT | O_RDWR) as i32, 0o644)
            .map_err(|e| format!("open1 create: {e:?}"))?;
        task.close(fd).map_err(|e| format!("{e:?}"))?;
    }
    let mut v: Vec<Task> = (1..threads).map(|_| task.clone_thread()).collect();
    v.insert(0, task);
    Ok(v)
}

fn fdtable_case(threads: usize) -> Case {
    Case::measure(key(threads), "fdtable", move |opts: &Opts| {
        let workers: Vec<Worker<'static>> = tasks(threads)?
            .into_iter()
            .enumerate()
            .map(|(i, mut t)| {
                let p = path(i);
                Box::new(move |n: u64| {
                    for _ in 0..n {
                        let fd = t.open(&p, O_RDWR as i32, 0).expect("open1 open");
                        t.close(fd).expect("open1 close");
                    }
                }) as Worker<'static>
            })
            .collect();
        Ok(framework::measure(opts, workers))
    })
}

fn before_case(threads: usize) -> Case {
    Case::measure_noted(
        key(threads),
        "before",
        Some("build file first, deferred release"),
        move |opts| {
            let workers: Vec<Worker<'static>> = tasks(threads)?
                .into_iter()
                .enumerate()
                .map(|(i, mut t)| {
                    let p = path(i);
                    let mut naive = NaiveOpen::new();
                    Box::new(move |n: u64| {
                        for _ in 0..n {
                            let fd = naive.open(&t, &p, O_RDWR as i32).expect("open1 open");
                            t.close(fd).expect("open1 close");
                        }
                    }) as Worker<'static>
                })
                .collect();
            Ok(framework::measure(opts, workers))
        },
    )
}

/// Per-thread files under the temp directory, removed on drop.
struct TempFiles(Vec<CString>);

impl TempFiles {
    fn new(n: usize) -> Result<Self, String> {
        let dir = std::env::temp_dir();
        let files = (0..n)
            .map(|i| {
                let p = dir.join(format!("fdtable-bench-open1.{}.{i}", std::process::id()));
                std::fs::write(&p, b"").map_err(|e| format!("{}: {e}", p.display()))?;
                CString::new(p.into_os_string().into_encoded_bytes()).map_err(|e| e.to_string())
            })
            .collect::<Result<_, _>>()?;
        Ok(TempFiles(files))
    }
}

impl Drop for TempFiles {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p.to_string_lossy().as_ref());
        }
    }
}

#[inline(always)]
fn open_close(path: &CString) -> bool {
    // SAFETY: a valid NUL-terminated path; the fd is closed at once.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDWR);
        fd >= 0 && libc::close(fd) == 0
    }
}

fn kernel_run(opts: &Opts, threads: usize) -> Result<Measurement, String> {
    let files = TempFiles::new(threads)?;
    if threads == 1 {
        let p = &files.0[0];
        return kernel::in_child(opts, |opts, buf| {
            kernel::sample_here(opts, buf, |n| (0..n).all(|_| open_close(p)))
        });
    }
    let workers: Vec<Worker<'_>> = files
        .0
        .iter()
        .map(|p| {
            Box::new(move |n: u64| {
                for _ in 0..n {
                    assert!(open_close(p), "{}", kernel::syscall_error("open1"));
                }
            }) as Worker<'_>
        })
        .collect();
    Ok(framework::measure(opts, workers))
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for threads in [1, 2] {
        v.extend([
            fdtable_case(threads),
            before_case(threads),
            Case::measure(key(threads), "kernel", move |opts| {
                kernel_run(opts, threads)
            }),
        ]);
    }
    v.push(Case::gvisor("open1"));
    v
}

//! Instruction counts: a fixed number of iterations of one hot path, for
//! `valgrind --tool=callgrind` (see ci/instructions).
//!
//! `fdtable bench --instructions PATH --iters N` sets the path up, warms it up, then runs
//! exactly `N` iterations inside [`measured`], the one function ci/instructions tells
//! callgrind to count (`--collect-atstart=no --toggle-collect=*instructions::measured*`), so
//! `Ir / N` is instructions per operation, setup excluded.

use crate::impls::before::Before;
use crate::impls::fdtable::{FdTable, FdTableRcu, FdTableRcuWith};
use crate::impls::floor::Floor;
use crate::impls::locked::{MutexTable, RwLockTable};
use crate::impls::{AllocTable, BenchFile, NOFILE, Table};
use crate::workloads::dup::{dup_close_loop, find_next_fd_table};
use crate::workloads::lookup::lookup_loop;
use fdtable::{FileRef, Files};
use std::hint::black_box;

/// Every path, with what one iteration does.
pub const PATHS: &[(&str, &str)] = &[
    (
        "light-lookup",
        "fdtable: fdget + put, unshared table (light: fget_light)",
    ),
    (
        "shared-lookup",
        "fdtable: fdget + put, shared table (fget inside: the RCU fd table)",
    ),
    ("shared-fget", "fdtable: fget + drop, shared table"),
    (
        "shared-borrow",
        "fdtable: fdget_rcu + drop, shared table (lent under an RCU section, no reference)",
    ),
    (
        "shared-borrow-with",
        "fdtable: with_fdget_rcu, shared table (the same borrow in its closure form)",
    ),
    (
        "shared-qsbr",
        "fdtable: with_fdget_qsbr, shared table (lent to an online QSBR thread: no section)",
    ),
    (
        "shared-qsbr-qs",
        "fdtable: with_fdget_qsbr + quiescent_state, shared table (a quiescent state per lookup)",
    ),
    ("alloc-close", "fdtable: dup + close, unshared table"),
    (
        "alloc-close-64",
        "fdtable: dup + close, fds 0-63 open (find-next-fd)",
    ),
    (
        "alloc-close-1000",
        "fdtable: dup + close, fds 0-999 open (find-next-fd)",
    ),
    (
        "alloc-close-100000",
        "fdtable: dup + close, fds 0-99999 open (find-next-fd)",
    ),
    (
        "alloc-close-fragmented",
        "fdtable: dup + close, 1000 fds, 10 % closed (find-next-fd)",
    ),
    (
        "alloc-close-shared",
        "fdtable: dup + close, shared table (file_lock)",
    ),
    (
        "open-close",
        "fdtable: reserve + FileRef::new + install + close (last ref)",
    ),
    (
        "reserve-put",
        "fdtable: get_unused_fd_flags + drop (a failed open's table part: fput_badopen)",
    ),
    (
        "dd-pair",
        "fdtable-vfs: dd read + write pair, unshared table",
    ),
    (
        "dd-pair-shared",
        "fdtable-vfs: dd read + write pair, shared table (fget + f_pos lock)",
    ),
    (
        "dd-pair-qsbr",
        "fdtable-vfs: dd pair, shared table, fdget_qsbr (an online QSBR thread, a quiescent state per pair)",
    ),
    (
        "dd-floor",
        "dd pair on the file objects directly (no lookup)",
    ),
    (
        "dd-pair-rwlock",
        "rwlock: dd pair, each fd through RwLock<Vec<Option<FileRef>>> (+ f_pos lock)",
    ),
    (
        "dd-pair-mutex",
        "mutex: dd pair, each fd through Mutex<Vec<Option<FileRef>>> (+ f_pos lock)",
    ),
    (
        "openneg",
        "fdtable-vfs: open of a missing path (reserve first)",
    ),
    (
        "openneg-before",
        "fdtable-vfs NaiveOpen: build the file first, deferred release",
    ),
    (
        "ioctl-generic",
        "fdtable-vfs: Task::ioctl FIONREAD on a pipe, shared table",
    ),
    (
        "ioctl-generic-rwlock",
        "rwlock: table lookup + file_ioctl FIONREAD on a pipe",
    ),
    (
        "ioctl-generic-floor",
        "floor: the pipe's unlocked_ioctl FIONREAD, called directly",
    ),
    (
        "ioctl-driver",
        "fdtable-vfs: Task::ioctl TESTDEV_IOC_GET, shared table",
    ),
    ("floor-lookup", "floor: Vec index + read"),
    (
        "before-lookup",
        "before: read lock + Arc clone + unlock + drop",
    ),
    (
        "rwlock-lookup",
        "rwlock: read lock + Arc clone + unlock + drop",
    ),
    ("mutex-lookup", "mutex: lock + Arc clone + unlock + drop"),
    (
        "before-alloc-close",
        "before: dup + close (rwlock, linear scan from next_fd)",
    ),
    (
        "before-alloc-close-100000",
        "before: dup + close, fds 0-99999 open",
    ),
    (
        "rwlock-alloc-close",
        "rwlock: dup + close (write lock, linear slot scan)",
    ),
    (
        "mutex-alloc-close",
        "mutex: dup + close (lock, linear slot scan)",
    ),
];

/// The counted region: callgrind collects only while this function runs.
#[inline(never)]
pub fn measured(f: &mut dyn FnMut(u64), n: u64) {
    f(black_box(n))
}

fn run(n: u64, mut f: impl FnMut(u64)) {
    run_dyn(n, &mut f)
}

fn run_dyn(n: u64, f: &mut dyn FnMut(u64)) {
    f(n.min(1000)); // warm-up: first epoch pin, lazy allocations, page faults
    measured(f, n);
}

fn lookups<T: Table>(n: u64, shared: bool) {
    let mut h = T::new_table();
    for i in 0..4 {
        T::open(&mut h, BenchFile::new(i));
    }
    let other = shared.then(|| T::share(&mut h));
    run(n, |k| {
        lookup_loop::<T>(&h, 3, k);
    });
    drop(other);
}

fn alloc_close<T: AllocTable>(n: u64, shared: bool) {
    let mut h = T::new_table();
    for i in 0..4 {
        T::open(&mut h, BenchFile::new(i));
    }
    let other = shared.then(|| T::share(&mut h));
    run(n, |k| dup_close_loop::<T>(&mut h, 3, k));
    drop(other);
}

fn sized<T: AllocTable>(n: u64, fds: usize, fragmented: bool) {
    let (mut h, _) = find_next_fd_table::<T>(fds, fragmented);
    run(n, |k| dup_close_loop::<T>(&mut h, 0, k));
}

/// Runs `n` iterations of `path`; `Err` for an unknown path.
pub fn run_path(path: &str, n: u64) -> Result<(), String> {
    match path {
        "light-lookup" => lookups::<FdTable>(n, false),
        "shared-lookup" => lookups::<FdTable>(n, true),
        "shared-borrow" => lookups::<FdTableRcu>(n, true),
        "shared-borrow-with" => lookups::<FdTableRcuWith>(n, true),
        "shared-qsbr" | "shared-qsbr-qs" => {
            crate::workloads::qsbr::lookup_instructions(path == "shared-qsbr-qs", n, run_dyn)
        }
        "shared-fget" => {
            let mut h: Files<BenchFile> = Files::new();
            for i in 0..4 {
                FdTable::open(&mut h, BenchFile::new(i));
            }
            let _other = h.share();
            run(n, |k| {
                for _ in 0..k {
                    black_box(h.fget(black_box(3)).map(|f| f.id));
                }
            });
        }
        "alloc-close" => alloc_close::<FdTable>(n, false),
        "alloc-close-shared" => alloc_close::<FdTable>(n, true),
        "alloc-close-64" => sized::<FdTable>(n, 64, false),
        "alloc-close-1000" => sized::<FdTable>(n, 1000, false),
        "alloc-close-100000" => sized::<FdTable>(n, 100_000, false),
        "alloc-close-fragmented" => sized::<FdTable>(n, 1000, true),
        "before-alloc-close-100000" => sized::<Before>(n, 100_000, false),
        "open-close" => {
            let mut h: Files<BenchFile> = Files::new();
            for i in 0..3 {
                FdTable::open(&mut h, BenchFile::new(i));
            }
            run(n, |k| {
                for i in 0..k {
                    let fd = {
                        let r = h.get_unused_fd_flags(0, NOFILE).expect("a free fd");
                        r.install(FileRef::new(BenchFile::new(i)))
                    };
                    h.close_fd(fd).expect("closing");
                }
            });
        }
        "reserve-put" => {
            let mut h: Files<BenchFile> = Files::new();
            for i in 0..3 {
                FdTable::open(&mut h, BenchFile::new(i));
            }
            run(n, |k| {
                for _ in 0..k {
                    black_box(h.get_unused_fd_flags(0, NOFILE).expect("a free fd").fd());
                }
            });
        }
        "dd-pair-rwlock" | "dd-pair-mutex" => {
            crate::impls::locked_files::dd_instructions(path, n, run_dyn)?
        }
        "dd-pair" | "dd-pair-shared" | "dd-pair-qsbr" | "dd-floor" => {
            crate::workloads::dd::instructions(path, n, run_dyn)?
        }
        "openneg" => {
            let task = fdtable_vfs::workloads::bench_task();
            run(n, |k| {
                for _ in 0..k {
                    black_box(task.open(black_box(b"/tmp/nonexistent"), 0, 0)).expect_err("ENOENT");
                }
            });
        }
        "openneg-before" => {
            let task = fdtable_vfs::workloads::bench_task();
            let mut naive = fdtable_vfs::workloads::NaiveOpen::new();
            run(n, |k| {
                for _ in 0..k {
                    black_box(naive.open(&task, black_box(b"/tmp/nonexistent"), 0))
                        .expect_err("ENOENT");
                }
            });
        }
        "ioctl-generic" | "ioctl-generic-rwlock" | "ioctl-generic-floor" => {
            crate::workloads::ioctl::instructions(path, n, run_dyn)?
        }
        "ioctl-driver" => {
            use fdtable_vfs::devices::TESTDEV_IOC_GET;
            let mut task = fdtable_vfs::workloads::bench_task();
            let fd = task
                .open(b"/dev/testdev", fdtable_vfs::uapi::O_RDWR as i32, 0)
                .map_err(|e| format!("{e:?}"))?;
            let _other = task.clone_thread();
            let mut raw = [0u8; 8];
            let mut mem = fdtable_vfs::LinearMemory::new(0x1000, &mut raw);
            run(n, |k| {
                for _ in 0..k {
                    black_box(task.ioctl(black_box(fd), TESTDEV_IOC_GET, 0x1000, &mut mem))
                        .expect("ioctl");
                }
            });
        }
        "floor-lookup" => lookups::<Floor>(n, false),
        "before-lookup" => lookups::<Before>(n, false),
        "rwlock-lookup" => lookups::<RwLockTable>(n, false),
        "mutex-lookup" => lookups::<MutexTable>(n, false),
        "before-alloc-close" => alloc_close::<Before>(n, false),
        "rwlock-alloc-close" => alloc_close::<RwLockTable>(n, false),
        "mutex-alloc-close" => alloc_close::<MutexTable>(n, false),
        other => {
            return Err(format!(
                "unknown path {other:?}; paths: {}",
                PATHS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_runs() {
        for (p, _) in PATHS {
            run_path(p, 10).unwrap();
        }
        assert!(run_path("nope", 1).is_err());
    }
}

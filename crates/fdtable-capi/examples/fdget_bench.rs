//! The Rust light lookup the C one (`bench/fdget.c`) is compared with: `Files::fdget` on the
//! same kind of table (8 open `fdtable_vfs::File`s, the handle unshared, then shared), and
//! `Task::fdget` (the same call plus the `O_PATH` check, exactly what `fdt_fdget` runs).
//!
//!   cargo run --release -p fdtable-capi --example fdget_bench -- [iters-per-sample [samples [case]]]
//!
//! `Files::fdget_rcu` on the shared table is what `fdt_fdget_rcu` runs (the files' operations
//! never block, so they are lent without a reference).
//!
//! Prints one line per case: the median ns per lookup. With a case (`files-unshared`,
//! `task-unshared`, `files-shared`, `files-rcu-shared`), runs only that loop once, without
//! warm-up (but for the lookups that make the file lendable, outside the loop), so that
//! callgrind with `--toggle-collect=*measured_*` counts exactly `iters` lookups (see
//! `bench/run`).

use fdtable::{FileRef, Files};
use fdtable_vfs::uapi::O_RDWR;
use fdtable_vfs::{File, FileOperations, Kstat, MemFs, Task};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

struct Nop;

impl FileOperations for Nop {
    fn never_blocks(&self) -> bool {
        true
    }
    fn fmode(&self) -> u32 {
        0
    }
    fn getattr(&self) -> Kstat {
        Kstat::default()
    }
}

/// One lookup per iteration: look up, use the file's address, drop (`fdput`). `black_box` on
/// the handle keeps the lookup from being hoisted out of the loop.
#[inline(never)]
fn measured_rust_files_fdget(files: &Files<File>, fd: u32, iters: u64) -> usize {
    let mut acc = 0usize;
    for _ in 0..iters {
        let f = black_box(files).fdget(fd);
        acc = acc.wrapping_add(f.as_ref().map_or(0, |f| f.as_ptr() as usize));
        drop(f);
    }
    acc
}

#[inline(never)]
fn measured_rust_task_fdget(task: &Task, fd: i32, iters: u64) -> usize {
    let mut acc = 0usize;
    for _ in 0..iters {
        let f = black_box(task).fdget(fd);
        acc = acc.wrapping_add(f.as_ref().map_or(0, |f| f.as_ptr() as usize));
        drop(f);
    }
    acc
}

#[inline(never)]
fn measured_rust_files_fdget_rcu(files: &Files<File>, fd: u32, iters: u64) -> usize {
    let mut acc = 0usize;
    for _ in 0..iters {
        let f = black_box(files).fdget_rcu(fd);
        acc = acc.wrapping_add(f.as_ref().map_or(0, |f| &**f as *const File as usize));
        drop(f);
    }
    acc
}

/// Looks `fd` up until the file is lent without a reference.
fn make_lendable(files: &Files<File>, fd: u32) {
    for _ in 0..=fdtable::LEND_AFTER + 1 {
        drop(files.fdget_rcu(fd));
    }
    assert!(files.fdget_rcu(fd).expect("open").is_rcu(), "lent");
}

fn median(iters: u64, samples: usize, mut run: impl FnMut(u64) -> usize) -> f64 {
    black_box(run(iters / 4 + 1));
    let mut s: Vec<f64> = (0..samples)
        .map(|_| {
            let t = Instant::now();
            black_box(run(iters));
            t.elapsed().as_nanos() as f64 / iters as f64
        })
        .collect();
    s.sort_by(f64::total_cmp);
    s[samples / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let iters: u64 = args
        .next()
        .map_or(10_000_000, |a| a.parse().expect("iters"));
    let samples: usize = args.next().map_or(15, |a| a.parse().expect("samples"));
    assert!(iters > 0 && samples > 0);

    let mut task = Task::new(MemFs::new());
    for i in 0..8 {
        let ops: Arc<dyn FileOperations> = Arc::new(Nop);
        let fd = task
            .files()
            .install(FileRef::new(File::new(O_RDWR, ops)), 0, 1024);
        assert_eq!(fd, Ok(i));
    }
    let fd = 5;
    assert!(!task.files().fdget(fd).expect("open").needs_put());

    if let Some(case) = args.next() {
        let r = match case.as_str() {
            "files-unshared" => measured_rust_files_fdget(task.files(), fd, iters),
            "task-unshared" => measured_rust_task_fdget(&task, fd as i32, iters),
            "files-shared" => {
                let sib = task.clone_thread();
                let r = measured_rust_files_fdget(task.files(), fd, iters);
                drop(sib);
                r
            }
            "files-rcu-shared" => {
                let sib = task.clone_thread();
                make_lendable(task.files(), fd);
                let r = measured_rust_files_fdget_rcu(task.files(), fd, iters);
                drop(sib);
                r
            }
            _ => panic!("unknown case {case}"),
        };
        println!("{r}");
        return;
    }
    let m = median(iters, samples, |n| {
        measured_rust_files_fdget(task.files(), fd, n)
    });
    println!("rust-files-fdget-unshared {m:.3}");
    let m = median(iters, samples, |n| {
        measured_rust_task_fdget(&task, fd as i32, n)
    });
    println!("rust-task-fdget-unshared {m:.3}");
    let sib = task.clone_thread();
    let m = median(iters, samples, |n| {
        measured_rust_files_fdget(task.files(), fd, n)
    });
    println!("rust-files-fdget-shared {m:.3}");
    make_lendable(task.files(), fd);
    let m = median(iters, samples, |n| {
        measured_rust_files_fdget_rcu(task.files(), fd, n)
    });
    println!("rust-files-fdget-rcu-shared {m:.3}");
    drop(sib);
}

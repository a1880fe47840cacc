//! `dd` (`fget_light`'s benchmark): `dd if=/dev/zero of=FILE bs=1 count=1M` — read 1 byte from /dev/zero, write
//! it to an in-memory file — through the syscall layer, on an unshared table and on a shared
//! one (a second handle alive).
//!
//! One operation is one *pair* (read + write). Every implementation but the kernel runs
//! **interleaved** with the others ([`framework::measure_interleaved`]): blocks of about
//! 2 ms (0.4 ms with `--quick`) of each in turn, so the layer targets compare each row with
//! the floor block by block, measured within milliseconds of each other. The kernel's rows
//! keep whole `count=1M` samples (1,048,576 pairs) in the full run.
//!
//! - `fdtable`: `Task::read` / `Task::write` (`fdget_pos` → `vfs_read` / `vfs_write`).
//! - `before`: the pre-2003 lookup: every pair looks both fds up in a [`BeforeFiles`] (read
//!   lock + reference), then calls the same `vfs_read` / `vfs_write`. Like 2.5.66 it has no
//!   `f_pos` lock.
//! - `mutex`, `rwlock`: the same loop with the lookups through a `Mutex` / `RwLock` around
//!   `Vec<Option<FileRef<File>>>` (what most runtimes do).
//! - `floor`: the same `vfs_read` / `vfs_write` on the two file objects, held directly: no
//!   descriptor lookup at all. The gap between a row and the floor is the descriptor layer's
//!   share, noted on the fdtable, before, mutex and rwlock rows.
//! - `kernel`: `read(2)` from /dev/zero and `write(2)` to a memfd (the kernel's in-memory
//!   file); unshared in a forked single-threaded child, shared on a thread of this process.

use crate::framework::{self, Opts, Worker};
use crate::impls::before::BeforeFiles;
use crate::impls::kernel;
use crate::impls::locked_files::{LockedFiles, MutexFiles, RwLockFiles};
use crate::output::{Key, Row};
use crate::suite::{Case, Workload};
use fdtable::{Errno, FileRef};
use fdtable_vfs::read_write::{vfs_read, vfs_write};
use fdtable_vfs::workloads::{Dd, bench_task};
use fdtable_vfs::{File, Task};
use std::hint::black_box;
use std::os::fd::{AsRawFd, OwnedFd};

/// `dd`.
pub const DD: Workload = Workload {
    name: "dd",
    about: "1M × (read 1 byte from /dev/zero + write it to an in-memory file), ns per pair; unshared and shared table (fget_light)",
    cases,
    finish,
};

const OUT: &[u8] = b"/tmp/dd.out";

pub(crate) fn key(shared: bool) -> Key {
    Key::new("dd", 1, 2).variant(if shared { "shared" } else { "unshared" })
}

/// dd's sample settings: a whole `count=1M` run per sample in the full run.
fn dd_opts(opts: &Opts) -> Opts {
    if opts.dd_pairs > 0 && opts.fixed_iters == 0 {
        Opts {
            fixed_iters: opts.dd_pairs,
            ..*opts
        }
    } else {
        *opts
    }
}

/// A task with dd's two files open, and a second handle on its table if `shared`.
pub(crate) fn setup(shared: bool) -> Result<(Task, Option<Task>, Dd), String> {
    let mut task = bench_task();
    let dd = Dd::open(&task, OUT).map_err(|e| format!("dd open: {e:?}"))?;
    let sibling = shared.then(|| task.clone_thread());
    Ok((task, sibling, dd))
}

/// `fdget_pos` … `fdput_pos` around `op`, with the position lock decided by `count` (the
/// references on the file as `fdget` would see them).
#[inline(always)]
pub(crate) fn with_pos(
    f: &File,
    count: usize,
    op: impl FnOnce(&File, Option<&mut i64>) -> Result<usize, Errno>,
) -> Result<usize, Errno> {
    if f.is_stream() {
        return op(f, None);
    }
    let g = f.pos_lock(count);
    let mut pos = g.get();
    let r = op(f, Some(&mut pos));
    if r.is_ok() {
        g.set(pos);
    }
    r
}

/// One pair on two file objects, with the positions handled as on an unshared table.
#[inline(always)]
fn pair_direct(zero: &File, out: &File) -> Result<(), Errno> {
    let mut b = [0u8; 1];
    with_pos(zero, 1, |f, pos| vfs_read(f, &mut b, pos))?;
    with_pos(out, 1, |f, pos| vfs_write(f, &b, pos))?;
    Ok(())
}

/// What a worker's case keeps alive beside the loop, on its own thread: the second handle
/// that makes a table shared, the task whose files a locked table holds.
pub(crate) type Keep = Vec<Task>;

/// `fdtable`: `Task::read` / `Task::write`.
fn fdtable_worker(shared: bool) -> Result<(Worker<'static>, Keep), String> {
    let (task, sibling, dd) = setup(shared)?;
    let w: Worker<'static> = Box::new(move |n| {
        for _ in 0..n {
            dd.pair(&task).expect("dd pair");
        }
    });
    Ok((w, sibling.into_iter().collect()))
}

fn files(task: &Task, dd: &Dd) -> Result<(FileRef<File>, FileRef<File>), String> {
    let get = |fd: i32| task.files().fget(fd as u32).ok_or("dd: fd vanished");
    Ok((get(dd.zero)?, get(dd.out)?))
}

/// One pair through a lock-protected table: each fd looked up (lock, reference, unlock), the
/// position handled by `fdget_pos`'s rule for the reference held — the file is counted by
/// the table and by the lookup, so `f_pos` is locked, as the kernel locks it for `fget`'s
/// references — then the same `vfs_read` / `vfs_write`.
#[inline(always)]
pub(crate) fn locked_pair<L: LockedFiles>(table: &L, z: i32, o: i32) -> Result<(), Errno> {
    let mut b = [0u8; 1];
    let zero = table.fget(black_box(z)).ok_or(Errno::EBADF)?;
    with_pos(&zero, FileRef::count(&zero), |f, pos| {
        vfs_read(f, &mut b, pos)
    })?;
    drop(zero);
    let out = table.fget(black_box(o)).ok_or(Errno::EBADF)?;
    with_pos(&out, FileRef::count(&out), |f, pos| vfs_write(f, &b, pos))?;
    Ok(())
}

/// A lock-protected table holding the two files of `dd`, and their fds in it.
pub(crate) fn locked_table<L: LockedFiles>(task: &Task, dd: &Dd) -> Result<(L, i32, i32), String> {
    let (zero, out) = files(task, dd)?;
    let table = L::default();
    let (z, o) = (table.install(zero), table.install(out));
    Ok((table, z, o))
}

/// `before`, `mutex`, `rwlock`: both fds looked up through a lock-protected table (lock,
/// reference, unlock) on every pair, then the same `vfs_read` / `vfs_write`.
fn locked_worker<L: LockedFiles + Send + 'static>(
    shared: bool,
) -> Result<(Worker<'static>, Keep), String> {
    let (task, sibling, dd) = setup(shared)?;
    let (table, z, o) = locked_table::<L>(&task, &dd)?;
    let w: Worker<'static> = Box::new(move |n| {
        for _ in 0..n {
            locked_pair(&table, z, o).expect("dd pair");
        }
    });
    Ok((w, sibling.into_iter().chain([task]).collect()))
}

/// `floor`: the file objects called directly.
fn floor_worker(shared: bool) -> Result<(Worker<'static>, Keep), String> {
    let (task, sibling, dd) = setup(shared)?;
    let (zero, out) = files(&task, &dd)?;
    let w: Worker<'static> = Box::new(move |n| {
        for _ in 0..n {
            pair_direct(black_box(&zero), black_box(&out)).expect("dd pair");
        }
    });
    Ok((w, sibling.into_iter().chain([task]).collect()))
}

/// The implementations measured interleaved, in the order of [`interleaved_case`]'s groups.
const MEMBERS: &[(&str, Option<&str>)] = &[
    ("fdtable", None),
    (
        "fdtable-qsbr",
        Some("fdget_qsbr: an online QSBR thread, a quiescent state per pair"),
    ),
    ("before", Some("lock + ref per lookup")),
    ("mutex", Some("Mutex<Vec<Option<FileRef>>>")),
    ("rwlock", Some("RwLock<Vec<Option<FileRef>>>")),
    ("floor", Some("file objects called directly")),
];

/// Every implementation but the kernel's, measured interleaved on one pinned thread
/// ([`framework::measure_interleaved`]): the layer targets compare each row with the floor
/// block by block. Each implementation has its own task, files and table.
fn interleaved_case(shared: bool) -> Case {
    Case::interleaved(key(shared), MEMBERS, move |opts| {
        let made = [
            fdtable_worker(shared)?,
            super::qsbr::qsbr_worker(shared)?,
            locked_worker::<BeforeFiles<FileRef<File>>>(shared)?,
            locked_worker::<MutexFiles>(shared)?,
            locked_worker::<RwLockFiles>(shared)?,
            floor_worker(shared)?,
        ];
        let (groups, kept): (Vec<_>, Vec<_>) = made.into_iter().map(|(w, k)| (vec![w], k)).unzip();
        let ms = framework::measure_interleaved(opts, groups);
        drop(kept);
        Ok(ms)
    })
}

/// `/dev/zero` and a memfd (a temporary file off Linux), opened in the calling process.
fn kernel_files() -> Result<(OwnedFd, OwnedFd), String> {
    let zero = kernel::open("/dev/zero", libc::O_RDONLY)?;
    Ok((zero, kernel::anon_file(c"dd.out")?))
}

#[inline(always)]
fn kernel_pair(zero: i32, out: i32) -> bool {
    let mut b = [0u8; 1];
    // SAFETY: reads into and writes from a live 1-byte buffer.
    unsafe {
        libc::read(zero, b.as_mut_ptr().cast(), 1) == 1
            && libc::write(out, b.as_ptr().cast(), 1) == 1
    }
}

fn kernel_case(shared: bool) -> Case {
    Case::measure_noted(
        key(shared),
        "kernel",
        Some("read(2) + write(2) to a memfd"),
        move |opts| {
            let opts = dd_opts(opts);
            if !shared {
                return kernel::in_child(&opts, |opts, buf| {
                    let (zero, out) = kernel_files()?;
                    let (z, o) = (zero.as_raw_fd(), out.as_raw_fd());
                    kernel::sample_here(opts, buf, |n| (0..n).all(|_| kernel_pair(z, o)))
                });
            }
            let (zero, out) = kernel_files()?;
            let (z, o) = (zero.as_raw_fd(), out.as_raw_fd());
            let m = framework::measure(
                &opts,
                vec![Box::new(move |n| {
                    for _ in 0..n {
                        assert!(kernel_pair(z, o), "{}", kernel::syscall_error("dd"));
                    }
                })],
            );
            Ok(m)
        },
    )
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for shared in [false, true] {
        v.extend([interleaved_case(shared), kernel_case(shared)]);
    }
    v
}

/// The dd paths of `fdtable bench --instructions` (see [`crate::instructions`]): sets up,
/// then hands a loop of `n` pairs to `run`.
pub fn instructions(path: &str, n: u64, run: fn(u64, &mut dyn FnMut(u64))) -> Result<(), String> {
    let (task, sibling, dd) = setup(matches!(path, "dd-pair-shared" | "dd-pair-qsbr"))?;
    if path == "dd-pair-qsbr" {
        super::qsbr::instructions(&task, &dd, n, run);
    } else if path == "dd-floor" {
        let (zero, out) = files(&task, &dd)?;
        run(n, &mut |k| {
            for _ in 0..k {
                pair_direct(black_box(&zero), black_box(&out)).expect("dd pair");
            }
        });
    } else {
        run(n, &mut |k| {
            for _ in 0..k {
                dd.pair(&task).expect("dd pair");
            }
        });
    }
    drop(sibling);
    Ok(())
}

/// Notes the descriptor layer's share (layer / row) on the fdtable and locked rows: the
/// layer is row − floor, cycle by cycle for interleaved rows.
fn finish(rows: &mut [Row]) {
    let floors: Vec<Row> = rows
        .iter()
        .filter(|r| r.impl_name == "floor")
        .cloned()
        .collect();
    for r in rows.iter_mut() {
        if !matches!(
            r.impl_name.as_str(),
            "fdtable" | "fdtable-qsbr" | "before" | "mutex" | "rwlock"
        ) {
            continue;
        }
        if let Some(f) = floors.iter().find(|f| f.same_case(r))
            && r.ns_per_op > 0.0
        {
            // Interleaved rows: the median of the cycles' differences (what the targets use).
            let layer = (r.interleaved && f.interleaved)
                .then(|| framework::paired_median(&r.samples, &f.samples, |a, b| a - b))
                .flatten()
                .unwrap_or(r.ns_per_op - f.ns_per_op);
            let share = (layer / r.ns_per_op).max(0.0) * 100.0;
            let note = format!("layer {share:.0} % ({layer:.1} ns of {:.1})", r.ns_per_op);
            r.note = Some(match r.note.take() {
                Some(n) => format!("{n}; {note}"),
                None => note,
            });
        }
    }
}

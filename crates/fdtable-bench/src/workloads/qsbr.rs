//! The benchmarks of an online QSBR reader ([`fdtable::rcu::QsbrThread`]): the dd workload's
//! case and two instruction paths, in a module of their own so that their code does not
//! change how the compiler lays out the other paths (their instruction counts are baselines).

use super::dd::{Keep, setup, with_pos};
use crate::framework::Worker;
use crate::impls::fdtable::FdTable;
use crate::impls::{BenchFile, Table};
use fdtable::rcu::QsbrThread;
use fdtable::{Errno, Files};
use fdtable_vfs::read_write::{vfs_read, vfs_write};
use fdtable_vfs::uapi::FMODE_PATH;
use fdtable_vfs::workloads::Dd;
use fdtable_vfs::{File, Task};
use std::hint::black_box;

/// The fdtable case with the lookups of an online QSBR reader ([`fdtable::rcu::QsbrThread`]):
/// the pair as `Task::read` and `Task::write` make it, with `with_fdget_qsbr` in place of
/// `with_fdget_rcu` (no read-side section); a quiescent state after every pair, as a dispatch loop
/// would report one after every request.
pub(crate) fn qsbr_worker(shared: bool) -> Result<(Worker<'static>, Keep), String> {
    let (task, sibling, dd) = setup(shared)?;
    let w: Worker<'static> = Box::new(move |n| {
        let mut me = QsbrThread::online().expect("a QSBR reader");
        for _ in 0..n {
            qsbr_pair(&task, &me, dd.zero, dd.out).expect("dd pair");
            me.quiescent_state();
        }
    });
    Ok((w, sibling.into_iter().collect()))
}

/// `with_file` of `Task` (`fdtable-vfs`) on `with_fdget_qsbr`: `EBADF` for a free fd or an
/// `O_PATH` one (never lent, so the test folds away on the lent path).
#[inline(always)]
fn qsbr_file<R>(
    task: &Task,
    me: &QsbrThread,
    fd: i32,
    op: impl FnOnce(&File, bool) -> Result<R, Errno>,
) -> Result<R, Errno> {
    task.files().with_fdget_qsbr(
        me,
        fd as u32,
        #[inline(always)]
        |f| match f {
            Some(f) if f.is_rcu() || f.f_mode() & FMODE_PATH == 0 => op(f, f.shared_file()),
            _ => Err(Errno::EBADF),
        },
    )
}

/// One dd pair through `fdget_qsbr` (see [`qsbr_worker`]).
#[inline(always)]
fn qsbr_pair(task: &Task, me: &QsbrThread, z: i32, o: i32) -> Result<(), Errno> {
    let mut b = [0u8; 1];
    qsbr_file(
        task,
        me,
        black_box(z),
        #[inline(always)]
        |f, shared| {
            with_pos(
                f,
                if shared { 2 } else { 1 },
                #[inline(always)]
                |f, pos| vfs_read(f, &mut b, pos),
            )
        },
    )?;
    qsbr_file(
        task,
        me,
        black_box(o),
        #[inline(always)]
        |f, shared| {
            with_pos(
                f,
                if shared { 2 } else { 1 },
                #[inline(always)]
                |f, pos| vfs_write(f, &b, pos),
            )
        },
    )?;
    Ok(())
}

/// The `dd-pair-qsbr` path of `fdtable bench --instructions`: `n` pairs, a quiescent state
/// after each.
pub(crate) fn instructions(task: &Task, dd: &Dd, n: u64, run: fn(u64, &mut dyn FnMut(u64))) {
    let mut me = QsbrThread::online().expect("a QSBR reader on this thread");
    run(n, &mut |k| {
        for _ in 0..k {
            qsbr_pair(task, &me, dd.zero, dd.out).expect("dd pair");
            me.quiescent_state();
        }
    });
}

/// The `shared-qsbr` and `shared-qsbr-qs` paths of `fdtable bench --instructions`: lookups of
/// fd 3 on a shared table of 4 files, with a quiescent state after each (`qs`) or none.
pub(crate) fn lookup_instructions(qs: bool, n: u64, run: fn(u64, &mut dyn FnMut(u64))) {
    let mut h: Files<BenchFile> = Files::new();
    for i in 0..4 {
        FdTable::open(&mut h, BenchFile::new(i));
    }
    let _other = h.share();
    let mut me = QsbrThread::online().expect("a QSBR reader on this thread");
    if qs {
        run(n, &mut |k| {
            qsbr_qs_loop(&h, &mut me, 3, k);
        });
    } else {
        run(n, &mut |k| {
            qsbr_loop(&h, &me, 3, k);
        });
    }
}

/// `lookup_loop`'s shape for a QSBR reader: `n` lookups of `fd`, summing the ids read.
#[inline(never)]
fn qsbr_loop(h: &Files<BenchFile>, me: &QsbrThread, fd: u32, n: u64) -> u64 {
    let mut sum = 0u64;
    for _ in 0..n {
        sum = sum.wrapping_add(h.with_fdget_qsbr(me, black_box(fd), |f| f.map_or(0, |f| f.id)));
    }
    black_box(sum)
}

/// [`qsbr_loop`] with a quiescent state after every lookup (one lookup per request, the
/// protocol's worst case).
#[inline(never)]
fn qsbr_qs_loop(h: &Files<BenchFile>, me: &mut QsbrThread, fd: u32, n: u64) -> u64 {
    let mut sum = 0u64;
    for _ in 0..n {
        sum = sum.wrapping_add(h.with_fdget_qsbr(me, black_box(fd), |f| f.map_or(0, |f| f.id)));
        me.quiescent_state();
    }
    black_box(sum)
}

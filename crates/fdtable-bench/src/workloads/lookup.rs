//! `lookup-light` (`fget_light`) and `lookup-shared` (the RCU fd table, `fget` lock-free):
//! lookup + put, reading one field of the file, on an unshared and on a shared table.

use super::{STDIO_FDS, no_finish};
use crate::framework::{self, Measurement, Opts, Worker};
use crate::impls::before::Before;
use crate::impls::fdtable::{FdTable, FdTableRcu};
use crate::impls::floor::Floor;
use crate::impls::kernel;
use crate::impls::locked::{MutexTable, RwLockTable};
use crate::impls::{BenchFile, Table};
use crate::output::Key;
use crate::suite::{Case, Workload};
use std::hint::black_box;
use std::os::fd::AsRawFd;

/// `lookup-light`.
pub const LIGHT: Workload = Workload {
    name: "lookup-light",
    about: "lookup + put on an unshared table, reading one field of the file (fget_light)",
    cases: light_cases,
    finish: no_finish,
};

/// `lookup-shared`.
pub const SHARED: Workload = Workload {
    name: "lookup-shared",
    about: "lookup + put on a shared table; fds=1: every thread on one fd, fds=2: one fd each (the RCU fd table)",
    cases: shared_cases,
    finish: no_finish,
};

const KERNEL_NOTE: &str = "fcntl(F_GETFL)";

/// `n` lookups of `fd`, summing the ids read.
#[inline(never)]
pub fn lookup_loop<T: Table>(h: &T::Handle, fd: u32, n: u64) -> u64 {
    let mut sum = 0u64;
    for _ in 0..n {
        sum = sum.wrapping_add(T::lookup(h, black_box(fd)).unwrap_or(0));
    }
    black_box(sum)
}

/// A table with the stdio fds and then `fds` files of their own at 3, 4, ….
fn table_with<T: Table>(fds: u32) -> T::Handle {
    let mut h = T::new_table();
    for i in 0..STDIO_FDS + fds {
        let fd = T::open(&mut h, BenchFile::new(u64::from(i) + 1));
        debug_assert_eq!(fd, i);
    }
    h
}

/// `threads` threads on one table; thread `i` looks up fd `3 + i % fds`. With `keep`, this
/// thread holds another handle during the measurement, so even one thread sees a shared
/// table; without it, a single thread owns the table's only handle.
pub fn measure_lookups<T: Table>(opts: &Opts, threads: usize, fds: u32, keep: bool) -> Measurement
where
    T::Handle: 'static,
{
    let mut main = table_with::<T>(fds);
    let mut handles: Vec<T::Handle> = (1..threads).map(|_| T::share(&mut main)).collect();
    let kept = if keep {
        Some(T::share(&mut main))
    } else {
        None
    };
    handles.insert(0, main);
    let workers: Vec<Worker<'static>> = handles
        .into_iter()
        .enumerate()
        .map(|(i, h)| {
            let fd = STDIO_FDS + (i as u32 % fds);
            Box::new(move |n: u64| {
                lookup_loop::<T>(&h, fd, n);
            }) as Worker<'static>
        })
        .collect();
    let m = framework::measure(opts, workers);
    drop(kept);
    m
}

fn light<T: Table>() -> Case
where
    T::Handle: 'static,
{
    Case::measure(Key::new("lookup-light", 1, 1), T::NAME, |opts| {
        Ok(measure_lookups::<T>(opts, 1, 1, false))
    })
}

fn shared<T: Table>(threads: usize, fds: usize) -> Case
where
    T::Handle: 'static,
{
    Case::measure(
        Key::new("lookup-shared", threads, fds),
        T::NAME,
        move |opts| Ok(measure_lookups::<T>(opts, threads, fds as u32, true)),
    )
}

fn light_cases() -> Vec<Case> {
    vec![
        light::<FdTable>(),
        light::<Before>(),
        light::<MutexTable>(),
        light::<RwLockTable>(),
        Case::measure_noted(
            Key::new("lookup-light", 1, 1),
            "kernel",
            Some(KERNEL_NOTE),
            |opts| {
                kernel::in_child(opts, |opts, buf| {
                    let f = kernel::open("/dev/null", libc::O_RDONLY)?;
                    let fd = f.as_raw_fd();
                    kernel::sample_here(opts, buf, |n| {
                        (0..n).all(|_| kernel::lookup(black_box(fd)) >= 0)
                    })
                })
            },
        ),
        Case::gvisor("lookup-light"),
        light::<Floor>(),
    ]
}

/// The kernel's shared-table lookups: this process's threads, each on its own or one fd.
fn kernel_shared(opts: &Opts, threads: usize, fds: usize) -> Result<Measurement, String> {
    let files = (0..fds)
        .map(|_| kernel::open("/dev/null", libc::O_RDONLY))
        .collect::<Result<Vec<_>, _>>()?;
    let workers: Vec<Worker<'_>> = (0..threads)
        .map(|i| {
            let fd = files[i % fds].as_raw_fd();
            Box::new(move |n: u64| {
                for _ in 0..n {
                    black_box(kernel::lookup(black_box(fd)));
                }
            }) as Worker<'_>
        })
        .collect();
    Ok(framework::measure(opts, workers))
}

fn shared_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (threads, fds) in [(1, 1), (2, 1), (2, 2)] {
        cases.extend([
            shared::<FdTable>(threads, fds),
            shared::<FdTableRcu>(threads, fds),
            shared::<Before>(threads, fds),
            shared::<MutexTable>(threads, fds),
            shared::<RwLockTable>(threads, fds),
            Case::measure_noted(
                Key::new("lookup-shared", threads, fds),
                "kernel",
                Some(KERNEL_NOTE),
                move |opts| kernel_shared(opts, threads, fds),
            ),
            shared::<Floor>(threads, fds),
        ]);
    }
    cases.push(Case::gvisor("lookup-shared"));
    cases
}

//! `dup1` (will-it-scale dup1) and `find-next-fd` (Yu Ma's "fs/file.c: add fast path in
//! find_next_fd()", 2024): dup + close.

use super::{STDIO_FDS, no_finish};
use crate::framework::{self, Measurement, Opts, Worker};
use crate::impls::before::Before;
use crate::impls::fdtable::FdTable;
use crate::impls::kernel;
use crate::impls::locked::{MutexTable, RwLockTable};
use crate::impls::{AllocTable, BenchFile};
use crate::output::Key;
use crate::suite::{Case, Workload};
use std::hint::black_box;
use std::os::fd::AsRawFd;

/// `dup1`.
pub const DUP1: Workload = Workload {
    name: "dup1",
    about: "dup + close of a per-thread file that never reaches its last reference (will-it-scale dup1); 1 thread: unshared table, 2 threads: one shared table",
    cases: dup1_cases,
    finish: no_finish,
};

/// `find-next-fd`.
pub const FIND_NEXT_FD: Workload = Workload {
    name: "find-next-fd",
    about: "dup + close with fds 0..N-1 open (the dup lands on N), and a 1,000-fd table with 10 % closed at random (find_next_fd)",
    cases: find_next_fd_cases,
    finish: no_finish,
};

/// The open-fd counts of find-next-fd.
pub const FIND_NEXT_FD_SIZES: [usize; 4] = [3, 64, 1000, 100_000];

/// The random seed (splitmix64) that chooses the fragmented table's holes.
pub const FRAG_SEED: u64 = 42;

/// `n` × (dup `src` + close the new fd).
#[inline(never)]
pub fn dup_close_loop<T: AllocTable>(h: &mut T::Handle, src: u32, n: u64) {
    for _ in 0..n {
        match T::dup(h, black_box(src)) {
            Some(fd) => {
                T::close(h, fd);
            }
            None => panic!("{}: dup({src}) failed", T::NAME),
        }
    }
}

/// The fds a fragmented table of `n` fds closes: `n / 10` of `3..n`, chosen by a
/// Fisher–Yates shuffle driven by splitmix64 seeded with [`FRAG_SEED`].
pub fn fragment_holes(n: usize) -> Vec<usize> {
    let mut state = FRAG_SEED;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut fds: Vec<usize> = (STDIO_FDS as usize..n).collect();
    let k = n / 10;
    for i in 0..k {
        let j = i + (next() % (fds.len() - i) as u64) as usize;
        fds.swap(i, j);
    }
    fds.truncate(k);
    fds
}

/// dup1 on one of our tables: stdio at 0–2, thread `i`'s file at `3 + i`. One thread owns
/// the table's only handle; several share it.
fn dup1_table<T: AllocTable>(opts: &Opts, threads: usize) -> Measurement
where
    T::Handle: 'static,
{
    let mut main = T::new_table();
    for i in 0..STDIO_FDS as usize + threads {
        T::open(&mut main, BenchFile::new(i as u64));
    }
    let mut handles: Vec<T::Handle> = (1..threads).map(|_| T::share(&mut main)).collect();
    handles.insert(0, main);
    let workers: Vec<Worker<'static>> = handles
        .into_iter()
        .enumerate()
        .map(|(i, mut h)| {
            let src = STDIO_FDS + i as u32;
            Box::new(move |n: u64| dup_close_loop::<T>(&mut h, src, n)) as Worker<'static>
        })
        .collect();
    framework::measure(opts, workers)
}

fn dup1<T: AllocTable>(threads: usize) -> Case
where
    T::Handle: 'static,
{
    Case::measure(Key::new("dup1", threads, threads), T::NAME, move |opts| {
        Ok(dup1_table::<T>(opts, threads))
    })
}

fn dup1_kernel(opts: &Opts, threads: usize) -> Result<Measurement, String> {
    if threads == 1 {
        return kernel::in_child(opts, |opts, buf| {
            let f = kernel::open("/dev/null", libc::O_RDONLY)?;
            let fd = f.as_raw_fd();
            kernel::sample_here(opts, buf, |n| (0..n).all(|_| kernel::dup_close(fd)))
        });
    }
    let files = (0..threads)
        .map(|_| kernel::open("/dev/null", libc::O_RDONLY))
        .collect::<Result<Vec<_>, _>>()?;
    let workers: Vec<Worker<'_>> = files
        .iter()
        .map(|f| {
            let fd = f.as_raw_fd();
            Box::new(move |n: u64| {
                for _ in 0..n {
                    assert!(kernel::dup_close(fd), "dup/close failed");
                }
            }) as Worker<'_>
        })
        .collect();
    Ok(framework::measure(opts, workers))
}

fn dup1_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for threads in [1, 2] {
        cases.extend([
            dup1::<FdTable>(threads),
            dup1::<Before>(threads),
            dup1::<MutexTable>(threads),
            dup1::<RwLockTable>(threads),
            Case::measure(Key::new("dup1", threads, threads), "kernel", move |opts| {
                dup1_kernel(opts, threads)
            }),
        ]);
    }
    cases.push(Case::gvisor("dup1"));
    cases
}

/// A table with fds `0..n` open (all one file), then the fragmented holes closed if asked.
/// Returns it with the fd the next dup must land on.
pub fn find_next_fd_table<T: AllocTable>(n: usize, fragmented: bool) -> (T::Handle, u32) {
    let mut h = T::new_table();
    T::open(&mut h, BenchFile::new(7));
    T::fill(&mut h, n);
    let mut expect = n as u32;
    if fragmented {
        for fd in fragment_holes(n) {
            assert!(T::close(&mut h, fd as u32));
            expect = expect.min(fd as u32);
        }
    }
    (h, expect)
}

fn find_next_fd<T: AllocTable>(n: usize, fragmented: bool) -> Case
where
    T::Handle: 'static,
{
    Case::measure(key(n, fragmented), T::NAME, move |opts| {
        let (mut h, expect) = find_next_fd_table::<T>(n, fragmented);
        let got = T::dup(&h, 0);
        if got != Some(expect) {
            return Err(format!("{}: dup(0) = {got:?}, want {expect}", T::NAME));
        }
        T::close(&mut h, expect);
        let w: Worker<'static> = Box::new(move |iters| dup_close_loop::<T>(&mut h, 0, iters));
        Ok(framework::measure(opts, vec![w]))
    })
}

fn key(n: usize, fragmented: bool) -> Key {
    let k = Key::new("find-next-fd", 1, n);
    if fragmented {
        k.variant("fragmented")
    } else {
        k
    }
}

/// find-next-fd in a forked child: fds `0..n` open (stdio as inherited, the rest dup2'd from
/// one file kept above `n`), holes closed if fragmented, then dup + close.
fn find_next_fd_kernel(opts: &Opts, n: usize, fragmented: bool) -> Result<Measurement, String> {
    kernel::in_child(opts, move |opts, buf| {
        kernel::raise_nofile((n as u64 + 1024).max(2048))?;
        let f = kernel::open("/dev/null", libc::O_RDONLY)?;
        // Keep the source above the filled range.
        // SAFETY: F_DUPFD with an int argument acts on the fd table only.
        let src = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_DUPFD, (n + 16) as i32) };
        if src < 0 {
            return Err(kernel::syscall_error("F_DUPFD"));
        }
        drop(f);
        for fd in 0..n as i32 {
            if !kernel::is_open(fd) && !kernel::dup2(src, fd) {
                return Err(kernel::syscall_error("dup2"));
            }
        }
        let mut expect = n as i32;
        if fragmented {
            for fd in fragment_holes(n) {
                kernel::close(fd as i32);
                expect = expect.min(fd as i32);
            }
        }
        let got = kernel::dup(src);
        if got != expect {
            return Err(format!("kernel: dup = {got}, want {expect}"));
        }
        kernel::close(got);
        kernel::sample_here(opts, buf, |iters| {
            (0..iters).all(|_| kernel::dup_close(src))
        })
    })
}

/// The kernel's case; if this process cannot hold `n` fds (hard RLIMIT_NOFILE without
/// CAP_SYS_RESOURCE), the largest thousand it can, with a note.
fn kernel_find_next_fd(n: usize, frag: bool) -> Case {
    let max = kernel::max_nofile();
    if (n as u64 + 2048) <= max {
        return Case::measure(key(n, frag), "kernel", move |opts| {
            find_next_fd_kernel(opts, n, frag)
        });
    }
    let m = ((max.saturating_sub(1100) / 1000) * 1000).max(64) as usize;
    let note = format!("{m} fds: the hard RLIMIT_NOFILE is {max} and cannot be raised here");
    Case::measure_noted(key(m, frag), "kernel", Some(&note), move |opts| {
        find_next_fd_kernel(opts, m, frag)
    })
}

fn find_next_fd_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let configs = FIND_NEXT_FD_SIZES
        .iter()
        .map(|&n| (n, false))
        .chain([(1000, true)]);
    for (n, frag) in configs {
        cases.extend([
            find_next_fd::<FdTable>(n, frag),
            find_next_fd::<Before>(n, frag),
            find_next_fd::<MutexTable>(n, frag),
            find_next_fd::<RwLockTable>(n, frag),
            kernel_find_next_fd(n, frag),
        ]);
    }
    cases.push(Case::gvisor("find-next-fd"));
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_fixed_distinct_and_in_range() {
        let a = fragment_holes(1000);
        assert_eq!(a, fragment_holes(1000));
        assert_eq!(a.len(), 100);
        let mut s = a.clone();
        s.sort();
        s.dedup();
        assert_eq!(s.len(), 100);
        assert!(s.iter().all(|&fd| (3..1000).contains(&fd)));
    }

    #[test]
    fn fragmented_tables_land_on_the_lowest_hole() {
        let lowest = *fragment_holes(1000).iter().min().unwrap() as u32;
        let (h, e) = find_next_fd_table::<FdTable>(1000, true);
        assert_eq!(e, lowest);
        assert_eq!(FdTable::dup(&h, 0), Some(lowest));
        let (h, _) = find_next_fd_table::<Before>(1000, true);
        assert_eq!(Before::dup(&h, 0), Some(lowest));
        let (h, _) = find_next_fd_table::<MutexTable>(1000, true);
        assert_eq!(MutexTable::dup(&h, 0), Some(lowest));
    }
}

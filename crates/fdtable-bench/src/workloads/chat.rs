//! `chat` (the RCU fd table's benchmark): K = 1, 2, 4 pairs of threads in one process ping-ponging
//! 100-byte messages over AF_UNIX stream socketpairs, every thread on one shared table.
//!
//! One operation is one message sent and one received by a thread (the client writes then
//! reads the echo; the echo side reads then writes back), so `ops_per_sec` is messages per
//! second over all pairs.
//!
//! - `fdtable`: [`ChatPair`] through `Task::write` / `Task::read` (lock-free `fget` on the
//!   shared table).
//! - `before`: the same sockets and the same `vfs_read` / `vfs_write`, but every lookup goes
//!   through the 2.4.2 `files_struct` the RCU patch replaced (read lock, reference, unlock).
//! - `mutex`, `rwlock`: the same through a `Mutex` / `RwLock` around
//!   `Vec<Option<FileRef<File>>>` (what most runtimes do).
//! - `kernel`: real `socketpair(AF_UNIX, SOCK_STREAM)` and `write(2)` / `read(2)`.

use super::no_finish;
use crate::framework::{self, Measurement, Opts, Worker};
use crate::impls::before::BeforeFiles;
use crate::impls::kernel;
use crate::impls::locked_files::{LockedFiles, MutexFiles, RwLockFiles};
use crate::output::Key;
use crate::suite::{Case, Workload};
use fdtable::{Errno, FileRef};
use fdtable_vfs::read_write::{vfs_read, vfs_write};
use fdtable_vfs::workloads::{ChatPair, bench_task};
use fdtable_vfs::{File, Task};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;

/// `chat`.
pub const CHAT: Workload = Workload {
    name: "chat",
    about: "K pairs of threads ping-ponging 100-byte messages over socketpairs on one shared table; ns per message per thread (the RCU fd table)",
    cases,
    finish: no_finish,
};

/// Bytes per message.
pub const MSG: usize = 100;

/// The pair counts.
pub const PAIRS: [usize; 3] = [1, 2, 4];

fn key(pairs: usize) -> Key {
    Key::new("chat", 2 * pairs, 2 * pairs)
}

fn fdtable_run(opts: &Opts, pairs: usize) -> Result<Measurement, String> {
    let mut task = bench_task();
    let mut workers: Vec<Worker<'static>> = Vec::new();
    for _ in 0..pairs {
        let c = ChatPair::new(&task).map_err(|e| format!("socketpair: {e:?}"))?;
        let (client, echo) = (task.clone_thread(), task.clone_thread());
        workers.push(Box::new(move |n| {
            c.client(&client, n, MSG).expect("client")
        }));
        workers.push(Box::new(move |n| c.echo(&echo, n, MSG).expect("echo")));
    }
    let m = framework::measure(opts, workers);
    drop(task);
    Ok(m)
}

fn locked_write_all<L: LockedFiles>(t: &L, fd: i32, buf: &[u8]) -> Result<(), Errno> {
    let mut put = 0;
    while put < buf.len() {
        let f = t.fget(fd).ok_or(Errno::EBADF)?;
        put += vfs_write(&f, &buf[put..], None)?;
    }
    Ok(())
}

fn locked_read_full<L: LockedFiles>(t: &L, fd: i32, buf: &mut [u8]) -> Result<usize, Errno> {
    let mut got = 0;
    while got < buf.len() {
        let f = t.fget(fd).ok_or(Errno::EBADF)?;
        match vfs_read(&f, &mut buf[got..], None)? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// `before`, `mutex`, `rwlock`: the same sockets and `vfs_read` / `vfs_write`, every lookup
/// through one lock-protected table shared by all the threads.
fn locked_run<L: LockedFiles>(opts: &Opts, pairs: usize) -> Result<Measurement, String> {
    let task: Task = bench_task();
    let table: Arc<L> = Arc::default();
    let mut workers: Vec<Worker<'static>> = Vec::new();
    for _ in 0..pairs {
        let c = ChatPair::new(&task).map_err(|e| format!("socketpair: {e:?}"))?;
        let mut fds = [0; 2];
        for (i, fd) in [c.client_fd, c.echo_fd].into_iter().enumerate() {
            let f = task.files().fget(fd as u32).ok_or("socket fd vanished")?;
            fds[i] = table.install(f);
        }
        let [client_fd, echo_fd] = fds;
        let t = table.clone();
        workers.push(Box::new(move |n| {
            let (out, mut back) = ([0x5Au8; MSG], [0u8; MSG]);
            for _ in 0..n {
                locked_write_all(&*t, client_fd, &out).expect("client write");
                assert_eq!(locked_read_full(&*t, client_fd, &mut back), Ok(MSG));
            }
        }));
        let t = table.clone();
        workers.push(Box::new(move |n| {
            let mut buf = [0u8; MSG];
            for _ in 0..n {
                assert_eq!(locked_read_full(&*t, echo_fd, &mut buf), Ok(MSG));
                locked_write_all(&*t, echo_fd, &buf).expect("echo write");
            }
        }));
    }
    let m = framework::measure(opts, workers);
    drop(task);
    Ok(m)
}

fn k_write_all(fd: i32, buf: &[u8]) {
    let mut put = 0;
    while put < buf.len() {
        // SAFETY: writes from a live buffer.
        let n = unsafe { libc::write(fd, buf[put..].as_ptr().cast(), buf.len() - put) };
        assert!(n > 0, "{}", kernel::syscall_error("chat write"));
        put += n as usize;
    }
}

fn k_read_full(fd: i32, buf: &mut [u8]) {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: reads into a live buffer.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        assert!(n > 0, "{}", kernel::syscall_error("chat read"));
        got += n as usize;
    }
}

fn kernel_run(opts: &Opts, pairs: usize) -> Result<Measurement, String> {
    let mut socks: Vec<(OwnedFd, OwnedFd)> = Vec::new();
    for _ in 0..pairs {
        socks.push(kernel::socketpair_cloexec()?);
    }
    let mut workers: Vec<Worker<'_>> = Vec::new();
    for (a, b) in &socks {
        let (a, b) = (a.as_raw_fd(), b.as_raw_fd());
        workers.push(Box::new(move |n| {
            let (out, mut back) = ([0x5Au8; MSG], [0u8; MSG]);
            for _ in 0..n {
                k_write_all(a, &out);
                k_read_full(a, &mut back);
            }
        }));
        workers.push(Box::new(move |n| {
            let mut buf = [0u8; MSG];
            for _ in 0..n {
                k_read_full(b, &mut buf);
                k_write_all(b, &buf);
            }
        }));
    }
    Ok(framework::measure(opts, workers))
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for pairs in PAIRS {
        v.extend([
            Case::measure(key(pairs), "fdtable", move |opts| fdtable_run(opts, pairs)),
            Case::measure(key(pairs), "before", move |opts| {
                locked_run::<BeforeFiles<FileRef<File>>>(opts, pairs)
            }),
            Case::measure(key(pairs), "mutex", move |opts| {
                locked_run::<MutexFiles>(opts, pairs)
            }),
            Case::measure(key(pairs), "rwlock", move |opts| {
                locked_run::<RwLockFiles>(opts, pairs)
            }),
            Case::measure(key(pairs), "kernel", move |opts| kernel_run(opts, pairs)),
        ]);
    }
    v
}

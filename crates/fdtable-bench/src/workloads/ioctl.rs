//! `ioctl` (Michael S. Tsirkin's "speed up ioctls", 2004: `unlocked_ioctl`): a generic ioctl (`FIONREAD` on a pipe) and a
//! driver's own ioctl, 1 and 2 threads on one shared table, each thread on its own file.
//!
//! - `fdtable`: `Task::ioctl` — lock-free `fdget`, the generic switch, the file's
//!   `unlocked_ioctl` with no lock held. The driver is the layer's `TestDevice`
//!   (`/dev/testdev`, `TESTDEV_IOC_GET`: copy this open file's value to guest memory).
//! - `before`: the same call inside one global lock ([`Bkl`], the Big Kernel Lock that
//!   `sys_ioctl` took before 2004).
//! - `mutex`, `rwlock`: the descriptor looked up through a `Mutex` / `RwLock` around
//!   `Vec<Option<FileRef<File>>>` (lock, reference, unlock), then the same generic switch and
//!   `unlocked_ioctl` ([`file_ioctl`]).
//! - `floor`: the file's `unlocked_ioctl` called directly on the file object (no lookup, no
//!   dispatch): the scaling the machine itself allows for the same work.
//! - `kernel`: generic: `ioctl(FIONREAD)` on a pipe; driver: `ioctl(TCGETS)` on a pty master
//!   (the tty driver's ioctl). Threads of this process (a shared table).

use super::no_finish;
use crate::framework::{self, Measurement, Opts, Worker};
use crate::impls::kernel;
use crate::impls::locked_files::{LockedFiles, MutexFiles, RwLockFiles};
use crate::output::Key;
use crate::suite::{Case, Workload};
use fdtable_vfs::devices::TESTDEV_IOC_GET;
use fdtable_vfs::ioctl::file_ioctl;
use fdtable_vfs::uapi::{FIONREAD, O_RDWR};
use fdtable_vfs::workloads::{Bkl, bench_task};
use fdtable_vfs::{LinearMemory, Task};
use std::hint::black_box;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

/// `ioctl`.
pub const IOCTL: Workload = Workload {
    name: "ioctl",
    about: "a generic ioctl (FIONREAD on a pipe) and a driver ioctl, 1 and 2 threads on one shared table, each thread on its own file (unlocked_ioctl)",
    cases,
    finish: no_finish,
};

const ARG: usize = 0x1000;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Generic,
    Driver,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Generic => "generic",
            Kind::Driver => "driver",
        }
    }
}

fn key(kind: Kind, threads: usize) -> Key {
    Key::new("ioctl", threads, threads).variant(kind.name())
}

/// One table: the kept handle (so even one thread is on a shared table), each thread's
/// handle and fd, and the command.
struct Setup {
    main: Task,
    per: Vec<(Task, i32)>,
    cmd: u32,
}

fn setup(kind: Kind, threads: usize) -> Result<Setup, String> {
    let mut main = bench_task();
    let mut per = Vec::new();
    for _ in 0..threads {
        let fd = match kind {
            Kind::Generic => {
                let [r, w] = main.pipe2(0).map_err(|e| format!("pipe2: {e:?}"))?;
                main.write(w, b"abc").map_err(|e| format!("write: {e:?}"))?;
                r
            }
            Kind::Driver => main
                .open(b"/dev/testdev", O_RDWR as i32, 0)
                .map_err(|e| format!("open /dev/testdev: {e:?}"))?,
        };
        per.push((main.clone_thread(), fd));
    }
    let cmd = match kind {
        Kind::Generic => FIONREAD,
        Kind::Driver => TESTDEV_IOC_GET,
    };
    Ok(Setup { main, per, cmd })
}

/// How `layer_workers` dispatches.
#[derive(Clone, Copy, PartialEq)]
enum Via {
    /// `Task::ioctl`.
    Layer,
    /// `Task::ioctl` inside the global lock.
    Bkl,
    /// The file's `unlocked_ioctl` on a file object held directly: no descriptor lookup, no
    /// generic switch — what the machine allows when threads share nothing.
    Floor,
}

/// The threads' loops of `fdtable`, `before` or `floor` (by `via`) on a table of their own,
/// and the task that keeps it.
fn layer_workers(kind: Kind, threads: usize, via: Via) -> Result<Members, String> {
    let Setup { main, per, cmd } = setup(kind, threads)?;
    let lock = Arc::new(Bkl::new());
    let workers: Vec<Worker<'static>> = per
        .into_iter()
        .map(|(t, fd)| {
            let lock = lock.clone();
            let file = t.files().fget(fd as u32).expect("the thread's file");
            Box::new(move |n: u64| {
                let mut raw = [0u8; 8];
                let mut mem = LinearMemory::new(ARG, &mut raw);
                for _ in 0..n {
                    let r = match via {
                        Via::Layer => t.ioctl(black_box(fd), cmd, ARG, &mut mem),
                        Via::Bkl => lock.ioctl(&t, black_box(fd), cmd, ARG, &mut mem),
                        Via::Floor => {
                            let f = black_box(&file);
                            f.ops().unlocked_ioctl(f, cmd, ARG, &mut mem)
                        }
                    };
                    black_box(r.expect("ioctl"));
                }
            }) as Worker<'static>
        })
        .collect();
    Ok((workers, main))
}

/// `mutex`, `rwlock`: each thread's file installed in one lock-protected table shared by the
/// threads; every ioctl looks its fd up there, then runs the same dispatch as `Task::ioctl`.
fn locked_workers<L: LockedFiles + Send + Sync + 'static>(
    kind: Kind,
    threads: usize,
) -> Result<Members, String> {
    let Setup { main, per, cmd } = setup(kind, threads)?;
    let table = Arc::new(L::default());
    let workers: Vec<Worker<'static>> = per
        .into_iter()
        .map(|(t, fd)| {
            let file = t.files().fget(fd as u32).expect("the thread's file");
            let lfd = table.install(file);
            let table = table.clone();
            drop(t);
            Box::new(move |n: u64| {
                let mut raw = [0u8; 8];
                let mut mem = LinearMemory::new(ARG, &mut raw);
                for _ in 0..n {
                    let f = table.fget(black_box(lfd)).expect("the thread's fd");
                    black_box(file_ioctl(&f, cmd, ARG, &mut mem).expect("ioctl"));
                }
            }) as Worker<'static>
        })
        .collect();
    Ok((workers, main))
}

/// One implementation's loops, one per thread, and the task that keeps its table.
type Members = (Vec<Worker<'static>>, Task);

/// The implementations measured interleaved, in the order of [`interleaved_case`]'s groups.
const MEMBERS: &[(&str, Option<&str>)] = &[
    ("fdtable", None),
    ("before", Some("one global lock (BKL)")),
    ("mutex", None),
    ("rwlock", None),
    ("floor", Some("the file's unlocked_ioctl, called directly")),
];

/// Every implementation but the kernel's, measured interleaved
/// ([`framework::measure_interleaved`]): each on a table and files of its own, the same
/// threads running one block of each in turn.
fn interleaved_case(kind: Kind, threads: usize) -> Case {
    Case::interleaved(key(kind, threads), MEMBERS, move |opts| {
        let made = [
            layer_workers(kind, threads, Via::Layer)?,
            layer_workers(kind, threads, Via::Bkl)?,
            locked_workers::<MutexFiles>(kind, threads)?,
            locked_workers::<RwLockFiles>(kind, threads)?,
            layer_workers(kind, threads, Via::Floor)?,
        ];
        let (groups, kept): (Vec<_>, Vec<_>) = made.into_iter().unzip();
        let ms = framework::measure_interleaved(opts, groups);
        drop(kept);
        Ok(ms)
    })
}

/// The terminal's "get attributes" ioctl: Linux's `TCGETS`, macOS's and the BSDs' `TIOCGETA`.
#[cfg(target_os = "linux")]
const TCGETS: libc::Ioctl = libc::TCGETS;
#[cfg(not(target_os = "linux"))]
const TCGETS: libc::c_ulong = libc::TIOCGETA;

/// `posix_openpt`'s flags: close-on-exec where it takes `O_CLOEXEC` (Linux).
#[cfg(target_os = "linux")]
const OPENPT_FLAGS: libc::c_int = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
#[cfg(not(target_os = "linux"))]
const OPENPT_FLAGS: libc::c_int = libc::O_RDWR | libc::O_NOCTTY;

fn kernel_files(kind: Kind, threads: usize) -> Result<Vec<OwnedFd>, String> {
    let mut v = Vec::new();
    for _ in 0..threads {
        match kind {
            Kind::Generic => {
                let (r, w) = kernel::pipe_cloexec()?;
                // SAFETY: writes 3 bytes from a live buffer.
                unsafe { libc::write(w.as_raw_fd(), b"abc".as_ptr().cast(), 3) };
                v.push(r);
                v.push(w);
            }
            Kind::Driver => {
                // SAFETY: posix_openpt returns a new fd or -1.
                let fd = unsafe { libc::posix_openpt(OPENPT_FLAGS) };
                if fd < 0 {
                    return Err(kernel::syscall_error("posix_openpt"));
                }
                // SAFETY: a new fd nothing else owns.
                v.push(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    Ok(v)
}

fn kernel_run(opts: &Opts, kind: Kind, threads: usize) -> Result<Measurement, String> {
    let files = kernel_files(kind, threads)?;
    let step = if kind == Kind::Generic { 2 } else { 1 };
    let workers: Vec<Worker<'_>> = (0..threads)
        .map(|i| {
            let fd = files[i * step].as_raw_fd();
            Box::new(move |n: u64| {
                for _ in 0..n {
                    let ok = match kind {
                        Kind::Generic => {
                            let mut v: libc::c_int = 0;
                            // SAFETY: FIONREAD writes one int.
                            unsafe { libc::ioctl(fd, libc::FIONREAD, &mut v) == 0 }
                        }
                        Kind::Driver => {
                            // SAFETY: a zeroed termios is valid; TCGETS writes one.
                            let mut t: libc::termios = unsafe { std::mem::zeroed() };
                            // SAFETY: TCGETS (TIOCGETA off Linux) writes one termios.
                            unsafe { libc::ioctl(fd, TCGETS, &mut t) == 0 }
                        }
                    };
                    assert!(ok, "{}", kernel::syscall_error("ioctl"));
                }
            }) as Worker<'_>
        })
        .collect();
    Ok(framework::measure(opts, workers))
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for kind in [Kind::Generic, Kind::Driver] {
        for threads in [1, 2] {
            let note = match kind {
                Kind::Generic => "FIONREAD on a pipe",
                Kind::Driver => "TCGETS on a pty",
            };
            v.extend([
                interleaved_case(kind, threads),
                Case::measure_noted(key(kind, threads), "kernel", Some(note), move |opts| {
                    kernel_run(opts, kind, threads)
                }),
            ]);
        }
    }
    v
}

/// The generic ioctl paths of `fdtable bench --instructions` (see [`crate::instructions`]):
/// `FIONREAD` on a pipe (a file that is never lent) on a shared table through `Task::ioctl`,
/// through an `RwLock` table and `file_ioctl`, or the pipe's own `unlocked_ioctl` (the
/// floor); sets up, then hands a loop of `n` calls to `run`. (Here rather than beside the other paths, so that the setup's
/// code does not change how the compiler treats theirs.)
pub fn instructions(path: &str, n: u64, run: fn(u64, &mut dyn FnMut(u64))) -> Result<(), String> {
    let Setup { main, per, cmd } = setup(Kind::Generic, 1)?;
    let (task, fd) = per.into_iter().next().ok_or("no thread")?;
    let mut raw = [0u8; 8];
    let mut mem = LinearMemory::new(ARG, &mut raw);
    match path {
        "ioctl-generic-rwlock" => {
            let table = RwLockFiles::default();
            let lfd = table.install(task.files().fget(fd as u32).ok_or("no file")?);
            run(n, &mut |k| {
                for _ in 0..k {
                    let f = table.fget(black_box(lfd)).expect("the fd");
                    black_box(file_ioctl(&f, cmd, ARG, &mut mem)).expect("ioctl");
                }
            });
        }
        "ioctl-generic-floor" => {
            let file = task.files().fget(fd as u32).ok_or("no file")?;
            run(n, &mut |k| {
                for _ in 0..k {
                    let f = black_box(&file);
                    black_box(f.ops().unlocked_ioctl(f, cmd, ARG, &mut mem)).expect("ioctl");
                }
            });
        }
        _ => run(n, &mut |k| {
            for _ in 0..k {
                black_box(task.ioctl(black_box(fd), cmd, ARG, &mut mem)).expect("ioctl");
            }
        }),
    }
    drop(main);
    Ok(())
}

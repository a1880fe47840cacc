//! # fdtable-vfs
//!
//! Open file descriptions and a syscall-shaped layer over [`fdtable`]: what a sandbox, a WASI
//! runtime, a library OS or an emulator calls on behalf of a guest process, with the Linux
//! kernel's semantics and errnos (fs/open.c, fs/read_write.c, fs/ioctl.c, fs/fcntl.c,
//! fs/file_table.c).
//!
//! ```
//! use fdtable_vfs::{MemFs, Task, uapi::*};
//! use fdtable::Errno;
//!
//! let mut task = Task::new(MemFs::new()); // /dev/null, /dev/zero, /tmp
//! let fd = task.open(b"/tmp/log", (O_CREAT | O_WRONLY | O_APPEND) as i32, 0o644)?;
//! assert_eq!(task.write(fd, b"hello\n")?, 6);
//! assert_eq!(task.read(fd, &mut [0; 4]), Err(Errno::EBADF)); // not open for reading
//! assert_eq!(task.open(b"/tmp/missing", 0, 0), Err(Errno::ENOENT));
//!
//! let [r, w] = task.pipe2(O_NONBLOCK)?;
//! assert_eq!(task.lseek(r, 0, SEEK_SET), Err(Errno::ESPIPE));
//! assert_eq!(task.read(r, &mut [0; 4]), Err(Errno::EAGAIN));
//! task.close(w)?;
//! assert_eq!(task.read(r, &mut [0; 4]), Ok(0)); // no writer: end of file
//! # Ok::<(), Errno>(())
//! ```
//!
//! ## What it holds
//!
//! - **[`File`]**, the open file description (`struct file`): `f_mode` (read/write, the
//!   `FMODE_*` capabilities), status flags (`F_GETFL`), the position with `fdget_pos`'s rule
//!   (locked only while the file is shared; [`File::pos_lock`]), and the implementation's
//!   [`FileOperations`] (read, write, readv/writev, llseek, ioctl, compat_ioctl, flush on every
//!   close, poll, fasync, release = `Drop`). It implements [`fdtable::FileLike`], so a
//!   [`Files<File>`](fdtable::Files) is a real descriptor table.
//! - **[`Task`]**, the process context: its table handle, its `RLIMIT_NOFILE` (shared by its
//!   threads), its current directory and umask, its [`Namespace`]; and the syscalls:
//!   [open](Task::openat)/[close](Task::close), [read](Task::read)/[write](Task::write),
//!   [pread64](Task::pread64)/[pwrite64](Task::pwrite64), [readv](Task::readv)/
//!   [writev](Task::writev), [lseek](Task::lseek), [sendfile](Task::sendfile),
//!   [ioctl](Task::ioctl)/[compat_ioctl](Task::compat_ioctl), [fcntl](Task::fcntl), the dup
//!   family, [close_range](Task::close_range), [pipe2](Task::pipe2),
//!   [socketpair](Task::socketpair), [eventfd2](Task::eventfd2), [poll](Task::poll),
//!   [fork](Task::fork)/[clone](Task::clone)/[unshare](Task::unshare)/[exec](Task::exec), and
//!   path calls (mkdir, unlink, rmdir, chdir, ftruncate, fstat).
//! - **Built-in files**: [`MemFs`] (an in-memory file system and namespace), `/dev/null` and
//!   `/dev/zero` ([`devices`]), pipes ([`pipe`]), `AF_UNIX` stream socket pairs ([`unix`]),
//!   [`eventfd`], and [`HostFile`], a real host descriptor wrapped as a file.
//! - **Guest memory** for ioctl arguments: [`UserMemory`], with [`LinearMemory`] (a guest
//!   address space in a byte slice), [`NoMemory`] and [`HostMemory`].
//!
//! ## The kernel's fast paths
//!
//! - **Failed open (`fput_badopen`)**: `openat` reserves the fd first, asks the namespace, and installs
//!   last; a failure drops the reservation and returns — no file object was built, nothing is
//!   deferred ([`open`]). `EMFILE` comes before the namespace is asked.
//! - **ioctl without a global lock (`unlocked_ioctl`)**: [`Task::ioctl`] looks the fd up lock-free (and
//!   reference-free while the table is unshared), answers the generic commands, and calls the
//!   file's `unlocked_ioctl` with no lock held ([`ioctl`]).
//! - **Light lookups (`fget_light`)**: every syscall uses the core's `fdget`; with an unshared table
//!   a `read` or `write` takes no lock and no reference, and its position needs no lock either.
//!
//! ## Benchmark entry points
//!
//! The [`workloads`] module holds what the benchmark suite drives, over this public API:
//!
//! - **dd**: [`workloads::Dd`] — `Dd::open(&task, b"/tmp/out")`, then `dd.pair(&task)` (read 1
//!   byte from `/dev/zero`, write it to the file) per iteration. For the shared-table variant
//!   keep `task.clone_thread()` alive while looping.
//! - **openneg**: `task.open(b"/tmp/nonexistent", 0, 0)` (returns `ENOENT`) for the fast path;
//!   [`workloads::NaiveOpen`] for the build-first, defer-the-release baseline.
//! - **ioctl**: [`workloads::ioctl_fionread`] (FIONREAD on a pipe from `task.pipe2(0)`), and
//!   the driver ioctls of [`devices::TestDevice`] at `/dev/testdev` in
//!   [`workloads::bench_task`] (`TESTDEV_IOC_NOP`, `_GET`, `_SET`) via [`Task::ioctl`]; give
//!   each thread its own fd (its own pipe or its own open of the device) so threads share no
//!   file. [`workloads::Bkl`] wraps the same call in one global lock for the baseline.
//! - **chat**: [`workloads::ChatPair`] (`new`, then `echo` and `client` on two threads whose
//!   tasks come from `task.clone_thread()`), or [`workloads::run_chat`] for K pairs.
//!
//! ## How it is checked
//!
//! - `tests/differential.rs`: scenarios written once against a small syscall trait and run on
//!   the real kernel (libc on real files, pipes, sockets and eventfds under a scratch
//!   directory, on tmpfs when `/dev/shm` is one) and on the layer; the logs of return values,
//!   errnos and bytes must be equal. File-centric scenarios run a third time with every file a
//!   real host file wrapped by [`HostFile`].
//! - `tests/sequences.rs`: the same comparison over random syscall sequences (proptest) on
//!   regular files with shared and separate descriptions, forks included; on pipes (capacity,
//!   merging, packet mode, `F_SETPIPE_SZ`); on socket pairs.
//! - `tests/fast_paths.rs`: a counting allocator shows that a failed open, an `EMFILE`, the
//!   generic and driver ioctl paths and the dd loop allocate nothing.
//! - `tests/threads.rs`: shared positions under concurrent writers, blocking pipes and sockets
//!   across threads of one table, a close racing a blocked read.
//!
//! ## Differences from Linux
//!
//! See [`docs::divergences`]. In short: no signals (`EPIPE` without `SIGPIPE`; blocking calls
//! cannot be interrupted), no credentials or permissions, no symlinks, `poll` never waits,
//! only `SOCK_STREAM` socket pairs, pipe capacity and merging as Linux but socket buffers
//! counted in bytes.

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod devices;
pub mod docs;
pub mod eventfd;
pub mod fcntl;
mod file;
#[cfg(all(feature = "host", target_os = "linux"))]
mod host;
#[cfg(feature = "host")]
mod host_memory;
pub mod ioctl;
pub mod iov;
pub mod memfs;
mod namespace;
pub mod open;
mod ops;
pub mod pipe;
pub mod read_write;
pub mod select;
mod task;
pub mod uaccess;
pub mod uapi;
pub mod unix;
pub mod workloads;

pub use devices::{CharDevice, DevNull, DevZero, TestDevice};
pub use file::{File, PosGuard};
#[cfg(all(feature = "host", target_os = "linux"))]
pub use host::HostFile;
#[cfg(feature = "host")]
pub use host_memory::HostMemory;
pub use memfs::MemFs;
pub use namespace::{MAY_APPEND, MAY_READ, MAY_WRITE, Namespace, OpenHow, Opened};
pub use ops::{
    FileOperations, Kstat, generic_file_llseek, generic_file_llseek_size, noop_llseek, vfs_setpos,
};
pub use select::PollFd;
pub use task::{DEFAULT_NOFILE, SignalStruct, Task};
pub use uaccess::{LinearMemory, NoMemory, UserMemory};

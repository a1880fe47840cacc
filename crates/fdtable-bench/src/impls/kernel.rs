//! `kernel`: the same loops through real syscalls on the running Linux.
//!
//! Two ways to run, matching will-it-scale's two modes (shared/REFERENCE.md §3):
//!
//! - **Unshared table** ([`in_child`]): the loop runs in a forked, single-threaded child, so
//!   its `files_struct` has one user and `fdget` takes the light path, as in
//!   `X_processes -t 1`. The child closes every inherited fd above 2, so lowest-free starts
//!   at 3 as in a fresh process, and reports its samples through a pipe.
//! - **Shared table**: the loop runs on the benchmark's own pinned threads, which share the
//!   process's table (`X_threads`): every lookup takes a reference and allocation takes
//!   `file_lock`.
//!
//! The lookup is `fcntl(fd, F_GETFL)`: `fdget_raw` plus one read of `file->f_flags`, the
//! smallest syscall that looks a file up and touches it. (`lseek(fd, 0, SEEK_CUR)` would take
//! `f_pos_lock` whenever the file's count is above one, i.e. on every shared-table lookup,
//! and measure a mutex instead of the table.)
//!
//! On other Unixes (macOS) the same loops run on the host's kernel: the few Linux-only calls
//! of the setup have portable stand-ins here ([`pipe_cloexec`], [`socketpair_cloexec`],
//! [`anon_file`], closing a range one fd at a time), and threads are not pinned (there is no
//! `sched_setaffinity`). Those rows measure that kernel, not Linux's.

use crate::framework::{self, Measurement, Opts};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Where a forked child keeps its result pipe: above every fd the small workloads open, and
/// below the default soft RLIMIT_NOFILE of 1024.
const CHILD_PIPE_FD: RawFd = 1023;

/// Reads the errno of the last failed call.
pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A failed syscall as a message.
pub fn syscall_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// `open(path, flags)` as an owned fd.
pub fn open(path: &str, flags: i32) -> Result<OwnedFd, String> {
    let c = std::ffi::CString::new(path).map_err(|e| e.to_string())?;
    // SAFETY: `c` is a valid NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o600) };
    if fd < 0 {
        return Err(syscall_error(&format!("open {path}")));
    }
    // SAFETY: `open` returned a new fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The lookup: `fcntl(fd, F_GETFL)`, returning the flags (or -1).
#[inline(always)]
pub fn lookup(fd: RawFd) -> i32 {
    // SAFETY: F_GETFL takes no argument and touches no memory of ours.
    unsafe { libc::fcntl(fd, libc::F_GETFL) }
}

/// Two new fds from `make` (which fills a two-element array, as `pipe` does), owned.
fn pair(what: &str, make: impl FnOnce(&mut [i32; 2]) -> i32) -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0; 2];
    if make(&mut fds) != 0 {
        return Err(syscall_error(what));
    }
    // SAFETY: both are new fds that nothing else owns.
    let pair = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    #[cfg(not(target_os = "linux"))]
    {
        set_cloexec(pair.0.as_raw_fd())?;
        set_cloexec(pair.1.as_raw_fd())?;
    }
    Ok(pair)
}

/// Sets `FD_CLOEXEC` (where the creating call has no `O_CLOEXEC` of its own).
#[cfg(not(target_os = "linux"))]
fn set_cloexec(fd: RawFd) -> Result<(), String> {
    // SAFETY: F_SETFD takes an int.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
        return Err(syscall_error("fcntl(F_SETFD)"));
    }
    Ok(())
}

/// `pipe2(O_CLOEXEC)`: (read end, write end). Elsewhere `pipe`, then close-on-exec.
pub fn pipe_cloexec() -> Result<(OwnedFd, OwnedFd), String> {
    pair("pipe", |fds| {
        #[cfg(target_os = "linux")]
        // SAFETY: room for both ends.
        let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
        #[cfg(not(target_os = "linux"))]
        // SAFETY: room for both ends.
        let r = unsafe { libc::pipe(fds.as_mut_ptr()) };
        r
    })
}

/// `socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC)`. Elsewhere without `SOCK_CLOEXEC`, then
/// close-on-exec.
pub fn socketpair_cloexec() -> Result<(OwnedFd, OwnedFd), String> {
    #[cfg(target_os = "linux")]
    let ty = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
    #[cfg(not(target_os = "linux"))]
    let ty = libc::SOCK_STREAM;
    // SAFETY: room for both ends.
    pair("socketpair", |fds| unsafe {
        libc::socketpair(libc::AF_UNIX, ty, 0, fds.as_mut_ptr())
    })
}

/// An anonymous regular file: `memfd_create(name, MFD_CLOEXEC)`; elsewhere a temporary file,
/// unlinked at once.
pub fn anon_file(name: &std::ffi::CStr) -> Result<OwnedFd, String> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a NUL-terminated name; memfd_create returns a new fd or -1.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(syscall_error("memfd_create"));
        }
        // SAFETY: a new fd nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let path = std::env::temp_dir().join(format!(
            "fdtable-bench-{}-{}",
            std::process::id(),
            name.to_string_lossy()
        ));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let _ = std::fs::remove_file(&path);
        Ok(f.into())
    }
}

/// Closes every fd in `first..=last` (`close_range`; elsewhere one `close` per fd, up to the
/// soft RLIMIT_NOFILE).
fn close_fds(first: RawFd, last: RawFd) {
    #[cfg(target_os = "linux")]
    // SAFETY: closes fds of this child's copy of the table, which nothing here uses.
    unsafe {
        libc::close_range(first as u32, last as u32, 0);
    }
    #[cfg(not(target_os = "linux"))]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `lim` is a valid, writable rlimit.
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
        let end = (lim.rlim_cur.min(1 << 20) as RawFd).min(last.saturating_add(1));
        for fd in first..end {
            // SAFETY: as above.
            unsafe { libc::close(fd) };
        }
    }
}

/// `dup(fd)` then `close` of the new fd; false if either failed.
#[inline(always)]
pub fn dup_close(fd: RawFd) -> bool {
    // SAFETY: dup and close act on the fd table only.
    unsafe {
        let nfd = libc::dup(fd);
        nfd >= 0 && libc::close(nfd) == 0
    }
}

/// `dup(fd)`: the new fd, or -1.
pub fn dup(fd: RawFd) -> RawFd {
    // SAFETY: dup acts on the fd table only.
    unsafe { libc::dup(fd) }
}

/// `close(fd)`.
pub fn close(fd: RawFd) -> bool {
    // SAFETY: closes an fd the caller owns and no longer uses.
    unsafe { libc::close(fd) == 0 }
}

/// `dup2(old, new)`.
pub fn dup2(old: RawFd, new: RawFd) -> bool {
    // SAFETY: dup2 acts on the fd table only; `new` is an fd the caller is filling.
    unsafe { libc::dup2(old, new) == new }
}

/// Whether `fd` is open in this process.
pub fn is_open(fd: RawFd) -> bool {
    // SAFETY: F_GETFD takes no argument.
    unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
}

/// Sets RLIMIT_NOFILE (soft and hard) to at least `n`: raising the hard limit needs
/// CAP_SYS_RESOURCE (root).
pub fn raise_nofile(n: u64) -> Result<(), String> {
    let mut cur = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `cur` is a valid, writable rlimit.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut cur) };
    if cur.rlim_cur >= n {
        return Ok(());
    }
    let want = libc::rlimit {
        rlim_cur: n,
        rlim_max: cur.rlim_max.max(n),
    };
    // SAFETY: `want` is a valid rlimit.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &want) } != 0 {
        return Err(syscall_error(&format!(
            "setrlimit(RLIMIT_NOFILE, {n}) (hard limit {}; raising it needs CAP_SYS_RESOURCE)",
            cur.rlim_max
        )));
    }
    Ok(())
}

/// `CAP_SYS_RESOURCE` (linux/capability.h).
const CAP_SYS_RESOURCE: u32 = 24;

/// The most fds a child of this process can hold: unlimited (`u64::MAX`) with
/// CAP_SYS_RESOURCE (the hard RLIMIT_NOFILE can be raised, up to `nr_open`), else the hard
/// limit.
pub fn max_nofile() -> u64 {
    let cap_sys_resource = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let hex = s
                .lines()
                .find_map(|l| l.strip_prefix("CapEff:"))?
                .trim()
                .to_string();
            u64::from_str_radix(&hex, 16).ok()
        })
        .is_some_and(|caps| caps & (1 << CAP_SYS_RESOURCE) != 0);
    if cap_sys_resource {
        return u64::MAX;
    }
    let mut cur = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `cur` is a valid, writable rlimit.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut cur) };
    cur.rlim_max
}

/// Runs `body` in a forked, single-threaded child (an unshared fd table) and returns its
/// measurement. `body` sets up with syscalls, then calls [`framework::sample_with`] on the
/// buffer it is given and returns the iteration count. The buffer holds `2 × samples`
/// values: wall ns/op per sample, then CPU ns/op per sample ([`sample_here`] fills both).
///
/// In the child, fds 0–2 stay as inherited, every other inherited fd is closed, and the result
/// pipe sits at fd 1023. The child leaves with `_exit`, running no destructors or atexit
/// handlers of the parent's state.
pub fn in_child(
    opts: &Opts,
    body: impl FnOnce(&Opts, &mut [f64]) -> Result<u64, String>,
) -> Result<Measurement, String> {
    let (rd, wr) = pipe_cloexec()?;
    let mut buf = vec![0.0f64; 2 * opts.samples];
    let cpus = framework::allowed_cpus();

    // SAFETY: the child only makes syscalls, runs `body` (syscalls and arithmetic; glibc's
    // malloc is fork-safe) and leaves with `_exit`; it never returns into the parent's code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(syscall_error("fork"));
    }
    if pid == 0 {
        let code = child_main(opts, wr.as_raw_fd(), &cpus, &mut buf, body);
        // SAFETY: leaves the child at once.
        unsafe { libc::_exit(code) };
    }
    drop(wr);
    let mut out = Vec::new();
    let read = std::fs::File::from(rd).read_to_end(&mut out);
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    read.map_err(|e| e.to_string())?;
    parse_child(&out, opts.samples)
}

fn child_main(
    opts: &Opts,
    wr: RawFd,
    cpus: &[usize],
    buf: &mut [f64],
    body: impl FnOnce(&Opts, &mut [f64]) -> Result<u64, String>,
) -> i32 {
    framework::pin_to(cpus.first().copied());
    // SAFETY: fd-table operations only.
    if unsafe { libc::dup2(wr, CHILD_PIPE_FD) } != CHILD_PIPE_FD {
        return 3;
    }
    // The fds closed belong to the parent's copy of state that this child never uses.
    close_fds(3, CHILD_PIPE_FD - 1);
    close_fds(CHILD_PIPE_FD + 1, RawFd::MAX);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(opts, buf)))
        .unwrap_or_else(|_| Err("the child panicked".into()));
    let mut msg = Vec::new();
    match result {
        Ok(iters) => {
            msg.push(0u8);
            msg.extend_from_slice(&iters.to_le_bytes());
            for s in buf.iter() {
                msg.extend_from_slice(&s.to_le_bytes());
            }
        }
        Err(e) => {
            msg.push(1u8);
            msg.extend_from_slice(e.as_bytes());
        }
    }
    let mut off = 0;
    while off < msg.len() {
        // SAFETY: writes initialised bytes of `msg` to the pipe.
        let n = unsafe { libc::write(CHILD_PIPE_FD, msg[off..].as_ptr().cast(), msg.len() - off) };
        if n <= 0 {
            return 4;
        }
        off += n as usize;
    }
    0
}

fn parse_child(out: &[u8], samples: usize) -> Result<Measurement, String> {
    match out.split_first() {
        Some((0, rest)) if rest.len() == 8 + 16 * samples => {
            let iters = u64::from_le_bytes(rest[..8].try_into().unwrap());
            let mut all: Vec<f64> = rest[8..]
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let mut cpu = all.split_off(samples);
            if cpu.iter().all(|&c| c == 0.0) {
                cpu.clear();
            }
            Ok(Measurement {
                samples: all,
                iters,
                cpu,
                par: Vec::new(),
            })
        }
        Some((1, rest)) => Err(String::from_utf8_lossy(rest).into_owned()),
        _ => Err("the child died without a result".into()),
    }
}

/// Runs `op(n)` on the calling thread, timed, as the body of [`in_child`] does: wall ns/op
/// into the first half of `buf`, CPU ns/op into the second.
pub fn sample_here(
    opts: &Opts,
    buf: &mut [f64],
    mut op: impl FnMut(u64) -> bool,
) -> Result<u64, String> {
    let (wall, cpu) = buf.split_at_mut(buf.len() / 2);
    let mut ok = true;
    let mut cpu_runs: Vec<f64> = Vec::with_capacity(64);
    let iters = framework::sample_with(opts, wall, |n| {
        let c0 = framework::thread_cpu_ns();
        let t = std::time::Instant::now();
        ok &= op(n);
        let d = t.elapsed();
        cpu_runs.push((framework::thread_cpu_ns() - c0) as f64 / n as f64);
        d
    });
    // The last runs are the samples; the rest were warm-up.
    let skip = cpu_runs.len() - cpu.len();
    cpu.copy_from_slice(&cpu_runs[skip..]);
    if ok {
        Ok(iters)
    } else {
        Err(syscall_error("the loop's syscall failed"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_reports_its_samples() {
        let m = in_child(&Opts::TEST, |opts, buf| {
            // Only 0-2 and the pipe are open: the first open gets 3.
            let f = open("/dev/null", libc::O_RDONLY)?;
            if f.as_raw_fd() != 3 {
                return Err(format!("got fd {}", f.as_raw_fd()));
            }
            sample_here(opts, buf, |n| (0..n).all(|_| lookup(f.as_raw_fd()) >= 0))
        })
        .unwrap();
        assert_eq!(m.samples.len(), Opts::TEST.samples);
        assert_eq!(m.iters, Opts::TEST.fixed_iters);
        assert_eq!(m.cpu.len(), Opts::TEST.samples);
    }

    #[test]
    fn a_child_reports_its_error() {
        let e = in_child(&Opts::TEST, |_, _| Err("nope".into())).unwrap_err();
        assert_eq!(e, "nope");
    }
}

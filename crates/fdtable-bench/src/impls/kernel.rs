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
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two pipe ends.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(syscall_error("pipe2"));
    }
    // SAFETY: both ends are new fds owned by nothing else.
    let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
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
    // SAFETY: fd-table operations only; the fds closed belong to the parent's copy of state
    // that this child never uses.
    unsafe {
        if libc::dup2(wr, CHILD_PIPE_FD) != CHILD_PIPE_FD {
            return 3;
        }
        libc::close_range(3, (CHILD_PIPE_FD - 1) as u32, 0);
        libc::close_range((CHILD_PIPE_FD + 1) as u32, u32::MAX, 0);
    }
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

//! What the supervisor reads about its tracees from /proc: their real descriptor tables
//! (listed from the private range up only: a procfs fd directory can be seeked to a number),
//! where a real descriptor points, a pidfd's process, a task's capabilities.
//!
//! Every file opened here is closed before the function returns.

use nix::dir::Dir;
use nix::fcntl::{OFlag, open};
use nix::sys::stat::Mode;
use nix::unistd::{Whence, lseek};

fn fd_dir(tid: i32) -> String {
    format!("/proc/{tid}/fd")
}

/// The open descriptors `>= from` of task `tid`'s real table, ascending.
pub fn list_fds(tid: i32, from: i32) -> Vec<i32> {
    let Ok(fd) = open(
        fd_dir(tid).as_str(),
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return Vec::new();
    };
    // procfs positions an fd directory at `fd + 2` ("." and ".." come first).
    if lseek(&fd, from as i64 + 2, Whence::SeekSet).is_err() {
        return Vec::new();
    }
    let Ok(mut dir) = Dir::from_fd(fd) else {
        return Vec::new();
    };
    let mut out: Vec<i32> = dir
        .iter()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().ok()?.parse::<i32>().ok())
        .filter(|&n| n >= from)
        .collect();
    out.sort_unstable();
    out
}

/// How many descriptors below `below` task `tid` has (the placeholders), counted.
pub fn count_fds_below(tid: i32, below: i32) -> Option<usize> {
    let fd = open(
        fd_dir(tid).as_str(),
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut dir = Dir::from_fd(fd).ok()?;
    Some(
        dir.iter()
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str().ok()?.parse::<i32>().ok())
            .filter(|&n| n < below)
            .count(),
    )
}

/// Where real descriptor `real` of task `tid` points (`readlink /proc/tid/fd/real`).
pub fn fd_target(tid: i32, real: i32) -> Option<String> {
    std::fs::read_link(format!("/proc/{tid}/fd/{real}"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// The target of a symbolic link (under /proc), as bytes.
pub fn read_link(path: &str) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStringExt;
    std::fs::read_link(path)
        .ok()
        .map(|p| p.into_os_string().into_vec())
}

/// A field of `/proc/tid/fdinfo/real` (`Pid:` of a pidfd).
pub fn fdinfo_field(tid: i32, real: i32, field: &str) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/fdinfo/{real}")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .map(|v| v.trim().to_string())
}

/// Whether task `tid` has capability `cap` in its effective set.
pub fn has_capability(tid: i32, cap: u32) -> bool {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{tid}/status")) else {
        return false;
    };
    text.lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|bits| bits & (1 << cap) != 0)
}

/// The descriptors of the calling process that are open and not close-on-exec: what a
/// program started from here inherits. A standard descriptor (0, 1, 2) that was closed when
/// the process started is left out: what is there now is the `/dev/null` Rust's runtime
/// opened in its place (see [`crate::sys::std_fds_closed_at_start`]), which the program
/// must not get.
pub fn inherited_fds() -> Vec<i32> {
    let closed = crate::sys::std_fds_closed_at_start().unwrap_or([false; 3]);
    let mut out = open_inheritable_fds();
    out.retain(|&fd| !(0..3).contains(&fd) || !closed[fd as usize]);
    out
}

fn open_inheritable_fds() -> Vec<i32> {
    let Ok(fd) = open(
        "/proc/self/fd",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return vec![0, 1, 2];
    };
    let Ok(mut dir) = Dir::from_fd(fd) else {
        return vec![0, 1, 2];
    };
    let own = std::os::fd::AsRawFd::as_raw_fd(&dir);
    let mut out: Vec<i32> = dir
        .iter()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().ok()?.parse::<i32>().ok())
        .filter(|&n| n != own)
        .collect();
    drop(dir);
    out.retain(|&fd| crate::sys::getfd(fd).is_some_and(|f| f & libc::FD_CLOEXEC == 0));
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_own_descriptors_from_a_number() {
        let me = std::process::id() as i32;
        let f = std::fs::File::open("/dev/null").unwrap();
        let n = std::os::fd::AsRawFd::as_raw_fd(&f);
        assert!(list_fds(me, 0).contains(&n));
        assert!(!list_fds(me, n + 1).contains(&n));
        assert_eq!(fd_target(me, n).as_deref(), Some("/dev/null"));
        assert!(count_fds_below(me, n + 1).unwrap() >= 1);
    }
}

//! What the supervisor reads about the program's tasks from /proc: the kernel's descriptor
//! table (`/proc/<tid>/fd`), a descriptor's flags (`fdinfo`), where it points, and the
//! descriptors `fdtable run` inherited.
//!
//! Every file opened here is closed before the function returns.

use nix::dir::Dir;
use nix::fcntl::{OFlag, open};
use nix::sys::stat::Mode;

/// The installed descriptors of task `tid`'s table, ascending; `None` if the task cannot be
/// read (gone, or not ours to inspect).
pub fn list_fds(tid: i32) -> Option<Vec<u32>> {
    let fd = open(
        format!("/proc/{tid}/fd").as_str(),
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut dir = Dir::from_fd(fd).ok()?;
    let mut out: Vec<u32> = Vec::new();
    for e in dir.iter() {
        let e = e.ok()?;
        if let Some(n) = e.file_name().to_str().ok().and_then(|s| s.parse().ok()) {
            out.push(n);
        }
    }
    out.sort_unstable();
    Some(out)
}

/// The text of `/proc/<tid>/fdinfo/<fd>`.
pub fn fdinfo(tid: i32, fd: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{tid}/fdinfo/{fd}")).ok()
}

/// The `flags:` of descriptor `fd` of task `tid` (the open flags, with `O_CLOEXEC` for the
/// descriptor's close-on-exec bit).
pub fn fd_flags(tid: i32, fd: u32) -> Option<u64> {
    let text = fdinfo(tid, fd)?;
    let v = field(&text, "flags:")?;
    u64::from_str_radix(v, 8).ok()
}

/// The value of `name` in an fdinfo text.
pub fn field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .map(str::trim)
}

/// Where descriptor `fd` of task `tid` points (`readlink /proc/tid/fd/fd`).
pub fn fd_target(tid: i32, fd: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{tid}/fd/{fd}"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// What descriptor `fd` of task `tid` (0: this process) is, if its `read()` installs
/// descriptors inside the kernel, where no call the supervisor sees announces them: a
/// fanotify group whose events carry descriptors (its `fanotify flags:`, as
/// `fanotify_init` took them; [`fdtable_syscalls::consts::fanotify_read_installs`]), or a
/// userfaultfd with fork events (the features of its `API:` line). `None` for any other
/// file, or one that cannot be read.
pub fn installs_on_read(tid: i32, fd: u32) -> Option<&'static str> {
    let dir = if tid == 0 {
        "self".to_string()
    } else {
        tid.to_string()
    };
    let link = std::fs::read_link(format!("/proc/{dir}/fd/{fd}")).ok()?;
    let kind = link.to_str()?.strip_prefix("anon_inode:")?.to_string();
    if kind != "[fanotify]" && kind != "[userfaultfd]" {
        return None;
    }
    let text = std::fs::read_to_string(format!("/proc/{dir}/fdinfo/{fd}")).ok()?;
    if kind == "[fanotify]" {
        let flags = field(&text, "fanotify flags:")?.split_whitespace().next()?;
        let flags = u64::from_str_radix(flags, 16).ok()?;
        fdtable_syscalls::consts::fanotify_read_installs(flags)
            .then_some("a fanotify group whose events carry descriptors")
    } else {
        let features = field(&text, "API:")?.split(':').nth(1)?;
        let features = u64::from_str_radix(features, 16).ok()?;
        (features & fdtable_syscalls::consts::UFFD_FEATURE_EVENT_FORK != 0)
            .then_some("a userfaultfd with fork events (UFFD_FEATURE_EVENT_FORK)")
    }
}

/// The thread-group id of task `tid` (`Tgid:` of its status).
pub fn tgid_of(tid: i32) -> Option<i32> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    field(&text, "Tgid:")?.parse().ok()
}

/// Whether task `tid` is gone or exiting (`PF_EXITING` in its `stat` flags: killed while it
/// waited, its table may already be released).
pub fn exiting(tid: i32) -> bool {
    const PF_EXITING: u64 = 0x4;
    let Ok(text) = std::fs::read_to_string(format!("/proc/{tid}/stat")) else {
        return true;
    };
    // After the command's closing parenthesis: state, ppid, pgrp, session, tty, tpgid, flags.
    let Some(rest) = text.rsplit_once(')').map(|(_, r)| r) else {
        return true;
    };
    let mut f = rest.split_whitespace();
    let state = f.next().unwrap_or("X");
    let flags: u64 = f.nth(5).and_then(|v| v.parse().ok()).unwrap_or(0);
    matches!(state, "Z" | "X" | "x") || flags & PF_EXITING != 0
}

/// Whether task `tid` of process `tgid` is dying: it or its group leader exiting, or
/// `SIGKILL` pending for it (what `exit_group` sends the other threads).
pub fn dying(tid: i32, tgid: i32) -> bool {
    if exiting(tid) || exiting(tgid) {
        return true;
    }
    let Ok(text) = std::fs::read_to_string(format!("/proc/{tid}/status")) else {
        return true;
    };
    const SIGKILL_BIT: u64 = 1 << 8;
    ["SigPnd:", "ShdPnd:"].iter().any(|f| {
        field(&text, f)
            .and_then(|v| u64::from_str_radix(v, 16).ok())
            .is_some_and(|m| m & SIGKILL_BIT != 0)
    })
}

/// Whether task `tid` is in this process's pid and user namespaces (the ones its pid and
/// user id arguments are read in).
pub fn same_namespaces(tid: i32) -> bool {
    ["pid", "user"]
        .iter()
        .all(|ns| same_namespace(tid, ns) == Some(true))
}

/// Whether task `tid` is in this process's namespace of kind `ns` (`pid`: its pid's, the
/// one it sees other processes in); `None` when either cannot be read.
pub fn same_namespace(tid: i32, ns: &str) -> Option<bool> {
    let theirs = std::fs::read_link(format!("/proc/{tid}/ns/{ns}")).ok()?;
    let ours = std::fs::read_link(format!("/proc/self/ns/{ns}")).ok()?;
    Some(theirs == ours)
}

/// The effective capabilities of task `tid` (`CapEff`); `tid` 0: this process.
pub fn cap_eff(tid: i32) -> Option<u64> {
    let path = if tid == 0 {
        "/proc/self/status".to_string()
    } else {
        format!("/proc/{tid}/status")
    };
    let text = std::fs::read_to_string(path).ok()?;
    u64::from_str_radix(field(&text, "CapEff:")?, 16).ok()
}

/// Whether task `tid` sleeps waiting for the supervisor's answer to a notification (its
/// `wchan`): its previous call is over.
pub fn waits_for_answer(tid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{tid}/wchan"))
        .is_ok_and(|w| w.starts_with("seccomp_do_user_notification"))
}

/// Task `tid`'s time on a CPU so far, in nanoseconds (`schedstat`).
pub fn cpu_ns(tid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/schedstat")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The real and effective user ids of task `tid`.
pub fn uids(tid: i32) -> Option<(u32, u32)> {
    all_uids(tid).map(|(r, e, _)| (r, e))
}

/// The real, effective and saved user ids of task `tid`.
pub fn all_uids(tid: i32) -> Option<(u32, u32, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let mut ids = field(&text, "Uid:")?
        .split_whitespace()
        .map(|v| v.parse().ok());
    Some((ids.next()??, ids.next()??, ids.next()??))
}

/// The call task `tid` is blocked in (the first field of `/proc/<tid>/syscall`): `Some(nr)`,
/// `Some(-1)` when it is blocked outside a call, `None` when it is running or gone.
pub fn current_syscall(tid: i32) -> Option<i64> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/syscall")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The threads of process `tgid`.
pub fn tasks_of(tgid: i32) -> Vec<i32> {
    std::fs::read_dir(format!("/proc/{tgid}/task")).map_or_else(
        |_| Vec::new(),
        |d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        },
    )
}

/// The children of thread `tid` of process `tgid`.
pub fn children_of(tgid: i32, tid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{tgid}/task/{tid}/children")).map_or_else(
        |_| Vec::new(),
        |t| {
            t.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect()
        },
    )
}

/// The numeric entries of /proc: every process.
pub fn pids() -> Vec<i32> {
    pids_iter().collect()
}

/// [`pids`], read as they are used (a search that stops early reads less of `/proc`).
pub fn pids_iter() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
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

/// The number of descriptors the calling process holds.
pub fn own_fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count().saturating_sub(1))
}

/// The state letter and the parent's process id of task `tid` (its `stat`, cheaper to make
/// than `status`).
pub fn state_of(tid: i32) -> Option<(char, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/stat")).ok()?;
    let rest = text.rsplit_once(')')?.1;
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    Some((state, f.next()?.parse().ok()?))
}

/// Whether a task may be inside a clone call ([`may_be_cloning`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cloning {
    /// Gone, a zombie, or blocked in another call.
    No,
    /// Blocked or stopped in `clone`, `clone3`, `fork` or `vfork`.
    Yes,
    /// Running, with this much user time so far (clock ticks): what it runs is not shown (and
    /// asking would wait for it to stop), but user time that grew since an earlier look says
    /// it left the kernel meanwhile.
    Running(u64),
}

/// Whether task `tid` may be inside a clone call.
pub fn may_be_cloning(tid: i32) -> Cloning {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{tid}/stat")) else {
        return Cloning::No;
    };
    let Some(rest) = text.rsplit_once(')').map(|(_, r)| r) else {
        return Cloning::No;
    };
    let mut f = rest.split_whitespace();
    match f.next().and_then(|s| s.chars().next()) {
        None | Some('Z' | 'X' | 'x') => return Cloning::No,
        Some('R') => {
            // After the state: ppid, pgrp, session, tty, tpgid, flags, four fault counts,
            // then utime.
            return Cloning::Running(f.nth(10).and_then(|v| v.parse().ok()).unwrap_or(0));
        }
        Some(_) => {}
    }
    let Ok(text) = std::fs::read_to_string(format!("/proc/{tid}/syscall")) else {
        return Cloning::No;
    };
    match text.split_whitespace().next() {
        Some("running") => Cloning::Running(0),
        Some(nr)
            if nr.parse::<i64>().is_ok_and(|nr| {
                [
                    libc::SYS_clone,
                    libc::SYS_clone3,
                    libc::SYS_fork,
                    libc::SYS_vfork,
                ]
                .contains(&nr)
            }) =>
        {
            Cloning::Yes
        }
        _ => Cloning::No,
    }
}

/// The task tracing task `tid` (`TracerPid:`; 0 when none); `None` when it is gone.
pub fn tracer_of(tid: i32) -> Option<i32> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    field(&text, "TracerPid:")?.parse().ok()
}

/// The size of task `tid`'s descriptor table (`FDSize:`, the kernel's `max_fds`); `None`
/// when it is gone.
pub fn fd_size(tid: i32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    field(&text, "FDSize:")?.parse().ok()
}

/// `fs.nr_open`: no descriptor table grows to hold a number at or above it.
pub fn nr_open() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Task `tid`'s signal masks from its `status`: pending to the thread (`SigPnd`) and to the
/// process (`ShdPnd`), blocked, ignored and caught; bit `s - 1` is signal `s`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SignalMasks {
    /// `SigPnd | ShdPnd`.
    pub pending: u64,
    /// `SigBlk`.
    pub blocked: u64,
    /// `SigIgn`.
    pub ignored: u64,
    /// `SigCgt`.
    pub caught: u64,
}

/// Task `tid`'s [`SignalMasks`]; `None` when it is gone.
pub fn signal_masks(tid: i32) -> Option<SignalMasks> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let mask = |name| u64::from_str_radix(field(&text, name)?, 16).ok();
    Some(SignalMasks {
        pending: mask("SigPnd:")? | mask("ShdPnd:")?,
        blocked: mask("SigBlk:")?,
        ignored: mask("SigIgn:")?,
        caught: mask("SigCgt:")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_table() {
        let me = std::process::id() as i32;
        let f = std::fs::File::open("/dev/null").unwrap();
        let n = std::os::fd::AsRawFd::as_raw_fd(&f) as u32;
        assert!(list_fds(me).unwrap().contains(&n));
        assert_eq!(fd_target(me, n).as_deref(), Some("/dev/null"));
        // Rust opens files close-on-exec.
        let flags = fd_flags(me, n).unwrap();
        assert_ne!(flags & libc::O_CLOEXEC as u64, 0);
        assert_eq!(tgid_of(me), Some(me));
        assert!(pids().contains(&me));
        assert!(list_fds(i32::MAX).is_none());
    }
}

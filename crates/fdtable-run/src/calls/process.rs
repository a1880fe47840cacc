//! Calls about processes rather than single descriptors: table sharing (`unshare`),
//! `RLIMIT_NOFILE`, the signals and checks that keep the supervisor out of the program's
//! reach (`kill(-1)`, `pidfd_send_signal`), `PR_SET_DUMPABLE` kept for the program, and
//! `UFFDIO_API`.

use crate::sup::settle::{Known, Settle};
use crate::sup::{Reply, State};
use crate::{procfs, sys};
use fdtable_syscalls::Rlimit;

/// `unshare(CLONE_FILES)`: on a table only the caller uses, the kernel (as the library)
/// copies nothing; on a shared one the caller gets a copy if the call succeeds, read from
/// the kernel when the caller is back.
pub fn unshare(st: &mut State, tid: i32) -> Reply {
    if st.shared(tid) {
        st.in_flight(tid, Settle::Unshare, Vec::new());
    }
    Reply::Continue
}

/// `setrlimit`/`prlimit64` of `RLIMIT_NOFILE` with a new value: the kernel validates and
/// applies it; the library reads the kernel's limit while the call is in flight and after.
pub fn rlimit(st: &mut State, tid: i32, r: Rlimit, args: &[u64; 6]) -> Reply {
    let caller = st.tasks.get(&tid).map_or(tid, |t| t.tgid);
    let pid = match r.pid.map(|a| args[a as usize] as u32 as i32) {
        None | Some(0) => caller,
        Some(p) => st.tasks.get(&p).map_or(p, |t| t.tgid),
    };
    if let Some(p) = st.procs.get_mut(&pid) {
        p.rlimit_pending += 1;
        st.in_flight(tid, Settle::Rlimit { pid }, Vec::new());
    }
    Reply::Continue
}

/// `kill(-1, sig)`: every process the caller may signal but init, the caller and the
/// supervisor's processes, with the kernel's result (`kill_something_info`: the last error
/// other than EPERM, ESRCH if there was nobody).
pub fn kill_all(st: &mut State, tid: i32, args: &[u64; 6]) -> Reply {
    let sig = args[1] as i32;
    if !(0..=64).contains(&sig) {
        return Reply::Errno(libc::EINVAL);
    }
    let caller = st.tasks.get(&tid).map_or(tid, |t| t.tgid);
    let (mut count, mut ret) = (0, 0);
    for p in procfs::pids() {
        if p <= 1 || p == caller || st.outside.contains(&p) {
            continue;
        }
        count += 1;
        match sys::kill(p, sig) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {}
            Err(e) => ret = e.raw_os_error().unwrap_or(0),
        }
    }
    if count == 0 {
        Reply::Errno(libc::ESRCH)
    } else if ret != 0 {
        Reply::Errno(ret)
    } else {
        Reply::Value(0)
    }
}

/// `pidfd_send_signal(fd, ...)`: a pidfd cannot name the supervisor (`pidfd_open` of it is
/// refused), but a `/proc/<pid>` directory can; the target is checked, and the number may
/// not change until the call is over.
pub fn pidfd_send_signal(st: &mut State, tid: i32, args: &[u64; 6]) -> Reply {
    let fd = args[0] as u32;
    if st.resolve(tid, fd) != Known::Installed {
        return Reply::Continue;
    }
    let target = match procfs::fdinfo(tid, fd) {
        Some(text) if procfs::field(&text, "Pid:").is_some() => {
            procfs::field(&text, "Pid:").and_then(|p| p.parse::<i32>().ok())
        }
        _ => proc_dir_pid(st, tid, fd),
    };
    if target.is_some_and(|p| st.outside.contains(&p)) {
        st.stats.refused += 1;
        return Reply::Errno(libc::EPERM);
    }
    st.in_flight(tid, Settle::Pinned { fd }, Vec::new());
    Reply::Continue
}

/// The process a `/proc/<pid>` directory descriptor names (its `stat`'s first field).
fn proc_dir_pid(st: &State, tid: i32, fd: u32) -> Option<i32> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let tgid = st.tasks.get(&tid)?.tgid;
    let pidfd = sys::pidfd_open(tgid).ok()?;
    let dir = sys::pidfd_getfd(&pidfd, fd).ok()?;
    let path = format!("/proc/self/fd/{}/stat", dir.as_raw_fd());
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Waits (briefly) until no other task's checked call uses number `n` of `tid`'s table.
pub fn wait_unpinned(st: &State, tid: i32, n: u32) {
    let Some(key) = st.key(tid) else {
        return;
    };
    let pinned: Vec<i32> = st
        .tasks
        .values()
        .filter(|t| t.tid != tid && crate::sup::key_of(&t.files) == key)
        .filter(|t| {
            t.inflight
                .as_ref()
                .is_some_and(|f| f.settle == Settle::Pinned { fd: n })
        })
        .map(|t| t.tid)
        .collect();
    let nr = libc::SYS_pidfd_send_signal;
    for t in pinned {
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(50) {
            match procfs::current_syscall(t) {
                Some(x) if x == nr => {}
                Some(_) => break,
                // Running, or gone.
                None if procfs::tgid_of(t).is_none() => break,
                None => {}
            }
            sys::yield_now();
        }
    }
}

/// `prctl(PR_SET_DUMPABLE)` and `prctl(PR_GET_DUMPABLE)`, kept for the program by a
/// supervisor without `CAP_SYS_PTRACE` (which could not inspect a non-dumpable process).
pub fn prctl_dumpable(st: &mut State, tid: i32, args: &[u64; 6]) -> Reply {
    let tgid = st.tasks.get(&tid).map_or(tid, |t| t.tgid);
    match args[0] as i32 {
        libc::PR_GET_DUMPABLE => {
            Reply::Value(st.procs.get(&tgid).is_none_or(|p| p.dumpable) as i64)
        }
        libc::PR_SET_DUMPABLE => {
            let v = args[1];
            if v > 1 {
                return Reply::Errno(libc::EINVAL);
            }
            st.note(
                "prctl(PR_SET_DUMPABLE) is kept by the supervisor: the process stays readable by processes of its user".into(),
            );
            if let Some(p) = st.procs.get_mut(&tgid) {
                p.dumpable = v == 1;
            }
            Reply::Value(0)
        }
        _ => Reply::Continue,
    }
}

/// `ioctl(uffd, UFFDIO_API, &api)`: `UFFD_FEATURE_EVENT_FORK` would make `read()` install
/// descriptors. The request is in memory, which the supervisor does not read (the page may be
/// served by the program itself): the features the kernel enabled are read from `fdinfo`
/// when the call is over, and a process that enabled fork events is killed with a note.
pub fn uffdio_api(st: &mut State, tid: i32, args: &[u64; 6]) -> Reply {
    st.in_flight(tid, Settle::UffdApi { fd: args[0] as u32 }, Vec::new());
    Reply::Continue
}

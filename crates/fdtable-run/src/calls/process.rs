//! Calls about processes rather than single descriptors: table sharing (`unshare`),
//! `RLIMIT_NOFILE`, the signals and checks that keep the supervisor out of the program's
//! reach (`kill(-1)`, `pidfd_send_signal`, the owners of `SIGIO` named in memory),
//! `PR_SET_DUMPABLE` kept for the program, and `UFFDIO_API`.

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
        Some(_) if !procfs::same_namespaces(tid) => {
            // The pid is the caller's namespace's: which process it names is not known here.
            // The kernel applies the limit, and the process it names meets the new limit
            // at its next decision that depends on it, as one changed from outside
            // (`State::nofile`).
            return Reply::Continue;
        }
        Some(p) => st.tasks.get(&p).map_or(p, |t| t.tgid),
    };
    if let Some(p) = st.procs.get_mut(&pid) {
        p.rlimit_pending += 1;
        // A call of the process already let run with no number reserved (no room under the
        // old limit) may find room under the new one: its tables are read when they settle.
        let keys: Vec<_> = st
            .tasks
            .values()
            .filter(|t| t.tgid == pid && t.inflight.is_some())
            .map(|t| crate::sup::key_of(&t.files))
            .collect();
        for k in keys {
            if let Some(t) = st.tables.get_mut(&k) {
                t.unbounded = true;
            }
        }
        let alone = caller == pid && st.tasks.values().filter(|t| t.tgid == pid).count() == 1;
        st.in_flight(tid, Settle::Rlimit { pid, alone }, Vec::new());
        if !alone {
            // Another task's change: from now on the process's dup family may race it, and a
            // call it decided before may run under the new limit, which is not known yet (it
            // is in memory). So its results are probed from now on, and its tables, with
            // every close-on-exec bit, are read from the kernel as soon as nothing is in
            // flight on them (its next call, on a table of its own); the settle does it again.
            let cached = st.procs.get(&pid).map_or(0, |p| p.nofile.0);
            st.limit_changed(pid, 0, cached);
        }
    }
    Reply::Continue
}

/// `waitid(P_PIDFD, fd, info, options)` that does not wait: with `WNOHANG`, or on a
/// non-blocking pidfd (`PIDFD_NONBLOCK`, or `O_NONBLOCK` set with `F_SETFL`), where the
/// kernel acts as with `WNOHANG` but fails with EAGAIN when the child has not exited.
/// Natively a child's pidfd is readable exactly when the child can be reaped, and programs
/// wait this way once `poll` says so. A traced child's exit reaches the supervisor first,
/// and until the supervisor has collected it the parent finds no child (ECHILD, `si_pid` 0
/// or EAGAIN). So the child the pidfd names, if it is a zombie the supervisor still traces,
/// is collected before the call runs.
pub fn waitid_pidfd(st: &mut State, tid: i32, args: &[u64; 6]) -> Reply {
    if args[0] as u32 != P_PIDFD {
        return Reply::Continue;
    }
    let Some(info) = procfs::fdinfo(tid, args[1] as u32) else {
        return Reply::Continue;
    };
    let nonblocking = procfs::field(&info, "flags:")
        .and_then(|v| u64::from_str_radix(v, 8).ok())
        .is_some_and(|f| f & libc::O_NONBLOCK as u64 != 0);
    if args[3] as u32 & libc::WNOHANG as u32 == 0 && !nonblocking {
        return Reply::Continue;
    }
    // The pid in the supervisor's pid namespace (its /proc): 0 in none it sees, -1 once gone.
    let pid = procfs::field(&info, "Pid:").and_then(|v| v.parse::<i32>().ok());
    if let Some(pid) = pid.filter(|&p| p > 0)
        && st.tasks.contains_key(&pid)
    {
        st.release_zombie(pid);
    }
    Reply::Continue
}

/// `waitid`'s `P_PIDFD` (`idtype_t`).
pub const P_PIDFD: u32 = 3;

/// `kill(-1, sig)`: every process the caller may signal but init, the caller and the
/// supervisor's processes, with the kernel's result (`kill_something_info`: the last error
/// other than EPERM, ESRCH if there was nobody).
pub fn kill_all(st: &mut State, tid: i32, args: &[u64; 6]) -> Reply {
    let sig = args[1] as i32;
    if !(0..=64).contains(&sig) {
        return Reply::Errno(libc::EINVAL);
    }
    if procfs::same_namespace(tid, "pid") == Some(false) {
        // A pid namespace of the program's (every namespace a program task is in descends
        // from the supervisor's, where its pid lives): the kernel signals only the processes
        // it sees there, which the supervisor is not.
        return Reply::Continue;
    }
    if !procfs::same_namespaces(tid) {
        st.stats.refused += 1;
        st.note(
            "refused kill(-1) from a user namespace of the program's: the supervisor carries it out, and would act with its own credentials (EPERM)".into(),
        );
        return Reply::Errno(libc::EPERM);
    }
    let caller = st.tasks.get(&tid).map_or(tid, |t| t.tgid);
    let others = |p: i32| p > 1 && p != caller && !st.outside.contains(&p);
    if sig == 0 {
        // The kernel's answer counts processes, refused ones included, and a check signal
        // fails only with EPERM, which it does not report: whether there is anybody else.
        return if procfs::pids_iter().any(others) {
            Reply::Value(0)
        } else {
            Reply::Errno(libc::ESRCH)
        };
    }
    // The supervisor signals with its own credentials: for a caller that has not the same,
    // it signals only the processes the caller may (the kernel's `kill_ok_by_cred`: one of
    // the caller's real and effective user ids is the target's real or saved one), and
    // counts the others as the kernel counts a refusal, silently.
    const CAP_KILL: u64 = 1 << 5;
    let same = acts_as(tid);
    let caller_ids = procfs::uids(tid);
    let caller_kill = procfs::cap_eff(tid).is_some_and(|c| c & CAP_KILL != 0);
    let may = |p: i32| {
        same || caller_kill
            || matches!((caller_ids, procfs::all_uids(p)), (Some((r, e)), Some((tr, _, ts)))
                if [r, e].iter().any(|&u| u == tr || u == ts))
    };
    let (mut count, mut ret) = (0, 0);
    for p in procfs::pids() {
        if !others(p) {
            continue;
        }
        // Its pidfd first: its ids are read from `/proc/<p>` and the signal goes through the
        // pidfd, so neither can be of another process that took the number after this one
        // was reaped. One reaped since the listing is not counted, as the kernel's walk
        // would not have met it; one that has exited meanwhile is counted and not signalled.
        let fd = match sys::pidfd_open(p) {
            Ok(fd) => Some(fd),
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => continue,
            // No descriptor to spare: by number, as before pidfds.
            Err(_) => None,
        };
        count += 1;
        let allowed = may(p);
        if fd.as_ref().is_some_and(sys::pidfd_exited) || !allowed {
            continue;
        }
        let sent = match &fd {
            Some(f) => sys::pidfd_kill(f, sig),
            None => sys::kill(p, sig),
        };
        // As `kill_something_info`: the last answer other than EPERM is the call's; a
        // process reaped since its check (ESRCH) was not there to answer.
        match sent {
            Ok(()) => ret = 0,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::ESRCH)) => {}
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
/// refused), but a `/proc/<pid>` directory can, and so can a pidfd another process passed.
/// The kernel's file at `fd` is checked, and the number may not change until the call is
/// over. A number another thread's call in flight may be changing (a `dup2` onto it, a
/// creation that may land there) is checked once that call has left the kernel: until
/// then the file the kernel will look up is not known; a call that stays there (50 ms) gets
/// `EBUSY`, with a note.
pub fn pidfd_send_signal(st: &mut State, tid: i32, args: &[u64; 6]) -> Reply {
    let fd = args[0] as u32;
    if st.resolve(tid, fd) != Known::Installed && !others_left(st, tid, fd) {
        st.stats.refused += 1;
        st.note(format!(
            "pidfd_send_signal on descriptor {fd}, which another thread's call in flight may be changing: refused (EBUSY)"
        ));
        return Reply::Errno(libc::EBUSY);
    }
    let target = match procfs::fdinfo(tid, fd) {
        Some(text) if procfs::field(&text, "Pid:").is_some() => {
            procfs::field(&text, "Pid:").and_then(|p| p.parse::<i32>().ok())
        }
        _ => match proc_dir_pid(st, tid, fd) {
            Ok(pid) => pid,
            Err(()) => {
                st.stats.refused += 1;
                st.note(format!(
                    "pidfd_send_signal: the supervisor cannot read descriptor {fd}: refused (EPERM)"
                ));
                return Reply::Errno(libc::EPERM);
            }
        },
    };
    if target.is_some_and(|p| st.outside.contains(&p)) {
        st.stats.refused += 1;
        return Reply::Errno(libc::EPERM);
    }
    let cpu_ns = procfs::cpu_ns(tid).unwrap_or(0);
    st.in_flight(tid, Settle::Pinned { fd, cpu_ns }, Vec::new());
    Reply::Continue
}

/// Whether every other task on `tid`'s table whose call in flight may change number `n`
/// (its own numbers include `n`, or it installs at the lowest free numbers) has left that
/// call, waiting up to 50 ms. Calls decided later cannot start meanwhile: the caller holds
/// the state.
fn others_left(st: &State, tid: i32, n: u32) -> bool {
    let Some(key) = st.key(tid) else {
        return true;
    };
    let busy: Vec<(i32, i64)> = st
        .tasks
        .values()
        .filter(|t| t.tid != tid && crate::sup::key_of(&t.files) == key)
        .filter(|t| {
            t.inflight.as_ref().is_some_and(|f| {
                f.touched.contains(&n)
                    || matches!(f.settle, Settle::Unbounded { .. } | Settle::Anywhere)
            }) || st
                .tables
                .get(&key)
                .and_then(|tab| tab.uncertain.get(&n))
                .is_some_and(|e| e.pending.contains(&t.tid))
        })
        .map(|t| (t.tid, t.call))
        .collect();
    let start = std::time::Instant::now();
    busy.into_iter()
        .all(|(t, nr)| left_call(t, nr, None, start))
}

/// Waits until task `t` has left call `nr` (it sleeps elsewhere, is gone, or, runnable, has
/// had [`PAST_THE_CALL_NS`] on a CPU since `cpu_then` or since it was first seen here: the
/// calls waited for take microseconds of it), or until 50 ms after `start`: whether it left.
/// (A runnable task reads as "running" in `/proc/<tid>/syscall`, before its call as after.)
fn left_call(t: i32, nr: i64, cpu_then: Option<u64>, start: std::time::Instant) -> bool {
    let mut cpu_then = cpu_then;
    loop {
        match procfs::current_syscall(t) {
            // Asleep in the call, or already in the queue with a new one of the same number,
            // or stopped (a group stop, a ptrace stop) on its way out of the call, whose
            // number `/proc` still shows: a stop happens only as a task returns to user space
            // (a call a stop interrupts is restarted as a new call, notified again), or at a
            // clone or exec event, after the table changed.
            Some(x) if x == nr => {
                if procfs::waits_for_answer(t)
                    || procfs::state_of(t).is_some_and(|(s, _)| matches!(s, 'T' | 't'))
                {
                    return true;
                }
            }
            // Asleep in another call, or outside one.
            Some(_) => return true,
            None if procfs::tgid_of(t).is_none() => return true,
            None => {
                let now = procfs::cpu_ns(t).unwrap_or(0);
                let then = *cpu_then.get_or_insert(now);
                if now > then + PAST_THE_CALL_NS {
                    return true;
                }
            }
        }
        if start.elapsed() > std::time::Duration::from_millis(50) {
            return false;
        }
        sys::yield_now();
    }
}

/// `fcntl(fd, F_SETOWN_EX, &owner)`, `ioctl(fd, FIOSETOWN, &pid)` and
/// `ioctl(fd, SIOCSPGRP, &pid)`: the process, thread or group that `SIGIO` and `SIGURG` of
/// the file go to (`F_SETSIG` picks the signal: `SIGSTOP` or `SIGKILL` too), named in
/// memory. (`F_SETOWN`, whose owner is in a register, is refused by the filter when it names
/// the supervisor.) The supervisor reads the owner once and refuses one that names its own
/// processes or threads (`EPERM`, as `kill` of them); otherwise it makes the call itself,
/// with what it read, on a copy of the program's descriptor (the same open file, whose owner
/// this is), so another thread rewriting the memory after the check changes nothing. The
/// kernel records the caller's user ids with the owner (they decide whom the signal may
/// reach) and reads the pid in the caller's pid namespace: a caller whose user ids,
/// namespaces or `CAP_KILL` are not the supervisor's is refused with a note, as is one whose
/// memory cannot be read in time.
pub fn set_owner(st: &mut State, tid: i32, args: &[u64; 6], fcntl: bool) -> Reply {
    let (fd, cmd, addr) = (args[0] as u32, args[1] as u32, args[2]);
    let name = match (fcntl, cmd) {
        (true, _) => "fcntl(F_SETOWN_EX)",
        (false, 0x8901) => "ioctl(FIOSETOWN)",
        _ => "ioctl(SIOCSPGRP)",
    };
    // The kernel looks the descriptor up before it reads the owner.
    if matches!(st.resolve(tid, fd), Known::Free | Known::Reserved) {
        return Reply::Errno(libc::EBADF);
    }
    let len = if fcntl { 8 } else { 4 };
    let pid = nix::unistd::Pid::from_raw(tid);
    let bytes = match crate::mem::read_timed_or(
        pid,
        addr,
        len,
        std::time::Duration::from_millis(20),
    ) {
        Ok(b) => b,
        Err(false) => return Reply::Errno(libc::EFAULT),
        Err(true) => {
            st.stats.refused += 1;
            st.note(format!(
                "{name}: its argument was not readable in time (a page the program serves itself?): refused (EFAULT)"
            ));
            return Reply::Errno(libc::EFAULT);
        }
    };
    let mut arg = [0u8; 8];
    arg[..len].copy_from_slice(&bytes);
    let word = |i: usize| i32::from_ne_bytes([arg[i], arg[i + 1], arg[i + 2], arg[i + 3]]);
    // `struct f_owner_ex { int type; pid_t pid; }`, or a pid (a group if negative).
    let who = if fcntl { word(4) } else { word(0) };
    if who != 0 && st.outside.contains(&(who.unsigned_abs() as i32)) {
        st.stats.refused += 1;
        return Reply::Errno(libc::EPERM);
    }
    if !acts_as(tid) {
        st.stats.refused += 1;
        st.note(format!(
            "{name} by a process whose user ids, namespaces or CAP_KILL are not the supervisor's: refused (EPERM)"
        ));
        return Reply::Errno(libc::EPERM);
    }
    let copy = st.tasks.get(&tid).map(|t| sys::task_getfd(tid, t.tgid, fd));
    match copy {
        Some(Ok(copy)) => match sys::owner_call(&copy, fcntl, cmd, arg) {
            Ok(v) => Reply::Value(v),
            Err(e) => Reply::Errno(e),
        },
        Some(Err(e)) if e.raw_os_error() == Some(libc::EBADF) => Reply::Errno(libc::EBADF),
        _ => {
            st.stats.refused += 1;
            st.note(format!(
                "{name}: the supervisor cannot reach the descriptor: refused (EPERM)"
            ));
            Reply::Errno(libc::EPERM)
        }
    }
}

/// `setpriority(PRIO_USER, uid, ...)` and `ioprio_set(IOPRIO_WHO_USER, uid, ...)` (the
/// filter notifies no other form): every process of a user, the supervisor's too if it is
/// the supervisor's user (`uid` 0 is the caller's). Those are refused with a note; other
/// users' run.
pub fn user_priority(st: &mut State, tid: i32, name: &str, args: &[u64; 6]) -> Reply {
    let who = args[1] as u32;
    if !procfs::same_namespaces(tid) {
        // Its user ids map to others here: which user it names is not known.
        st.stats.refused += 1;
        st.note(format!(
            "refused {name} of every process of a user, from another user or pid namespace: it may be the supervisor's user (EPERM)"
        ));
        return Reply::Errno(libc::EPERM);
    }
    let uid = if who == 0 {
        procfs::uids(tid).map(|(real, _)| real)
    } else {
        Some(who)
    };
    if uid.is_some_and(|u| u != sys::uids().0) {
        return Reply::Continue;
    }
    st.stats.refused += 1;
    st.note(format!(
        "refused {name} of every process of the supervisor's user: it would reach the supervisor (EPERM)"
    ));
    Reply::Errno(libc::EPERM)
}

/// Whether the supervisor, making a call for task `tid`, acts as the task would: the same
/// real and effective user ids, the same pid and user namespaces (in which pids and user ids
/// are read), and `CAP_KILL` only if the task has it too.
fn acts_as(tid: i32) -> bool {
    const CAP_KILL: u64 = 1 << 5;
    let sup_kill = procfs::cap_eff(0).is_none_or(|c| c & CAP_KILL != 0);
    let task_kill = procfs::cap_eff(tid).is_some_and(|c| c & CAP_KILL != 0);
    procfs::uids(tid) == Some(sys::uids())
        && procfs::same_namespaces(tid)
        && (task_kill || !sup_kill)
}

/// The process a `/proc/<pid>` directory at `tid`'s number `fd` names (`sys::proc_dir_pid`):
/// `Ok(None)` for another file, or none (the kernel answers EBADF); `Err` when the
/// supervisor cannot look (the call must not run unchecked).
fn proc_dir_pid(st: &State, tid: i32, fd: u32) -> Result<Option<i32>, ()> {
    let tgid = st.tasks.get(&tid).ok_or(())?.tgid;
    match sys::task_getfd(tid, tgid, fd) {
        Ok(dir) => Ok(sys::proc_dir_pid(&dir)),
        Err(e) if e.raw_os_error() == Some(libc::EBADF) => Ok(None),
        Err(_) => Err(()),
    }
}

/// For a call of `tid` that would change number `n` of its table: `None` once no other
/// task's checked `pidfd_send_signal` can still look `n` up (waiting up to 50 ms for them to
/// leave the kernel); else the refusal (EBUSY, with a note): the number must not change
/// under a call the supervisor checked against what it held.
pub fn pinned(st: &mut State, tid: i32, n: u32, name: &str) -> Option<Reply> {
    if wait_unpinned(st, tid, n) {
        return None;
    }
    st.stats.refused += 1;
    st.note(format!(
        "refused {name} of descriptor {n} while another thread's pidfd_send_signal on it is still in the kernel (EBUSY)"
    ));
    Some(Reply::Errno(libc::EBUSY))
}

/// CPU time after which a task let run into a call that does not block is past it (such a
/// call takes a few microseconds of it).
pub const PAST_THE_CALL_NS: u64 = 200_000;

/// Waits (briefly) until no other task's checked call uses number `n` of `tid`'s table:
/// whether none does.
fn wait_unpinned(st: &State, tid: i32, n: u32) -> bool {
    let Some(key) = st.key(tid) else {
        return true;
    };
    let pinned: Vec<(i32, u64)> = st
        .tasks
        .values()
        .filter(|t| t.tid != tid && crate::sup::key_of(&t.files) == key)
        .filter_map(|t| match t.inflight.as_ref()?.settle {
            Settle::Pinned { fd, cpu_ns } if fd == n => Some((t.tid, cpu_ns)),
            _ => None,
        })
        .collect();
    let start = std::time::Instant::now();
    pinned
        .into_iter()
        .all(|(t, cpu)| left_call(t, libc::SYS_pidfd_send_signal, Some(cpu), start))
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

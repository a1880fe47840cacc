//! `fdtable run`: arguments, the three processes (the waiter, the supervisor, the program),
//! and the exit status.
//!
//! The process the caller started is the **waiter**: it forks the supervisor (which leaves
//! the caller's session) and the program (which stays in the caller's process group), waits
//! for both, and exits as the program did. Exit status: the program's. A program killed by a
//! signal is reported the way a native run reports it: the waiter restores the signal's
//! default action and kills itself with it, so the caller's `wait` sees `WIFSIGNALED` with the
//! same signal (the core-dump bit is not reproduced). When the program cannot be started: 127
//! if it is not found, 126 if it cannot be executed (as shells do), 125 if `fdtable run`
//! itself cannot run.

use crate::filter;
use crate::procfs;
use crate::sup::{self, Config, State, Stats};
use crate::sys::{self, ProgramPlan, Status, Step};
use nix::sys::ptrace;
use std::ffi::{CString, OsString};
use std::io::{BufRead, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Arguments of `fdtable run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// RLIMIT_NOFILE (soft and hard) of the program; default: the caller's.
    #[arg(long)]
    pub nofile: Option<u64>,
    /// When each process exits, list on stderr the descriptors it still holds and the call
    /// that created each (as `valgrind --track-fds=yes`).
    #[arg(long)]
    pub track_fds: bool,
    /// Compare every process's table in the library with the kernel's after each notified
    /// call (slow); differences are printed and counted.
    #[arg(long)]
    pub check_tables: bool,
    /// Write the supervisor's counters as JSON to this file at the end (for tests and the
    /// benchmark).
    #[arg(long)]
    pub stats: Option<PathBuf>,
    /// For measurement only: the same filter, processes and ptrace events, but the
    /// supervisor lets every call run and keeps no table (no library semantics, nothing
    /// sealed). The floor of the design, which `bench/run/targets.py` measures against.
    #[arg(long, hide_short_help = true)]
    pub floor: bool,
    /// For measurement only: `--floor` without ptrace. The process calls (fork, clone,
    /// execve) are notified instead of traced, as a supervisor that does not trace would
    /// have them; nothing follows the processes. What such a design would start from.
    #[arg(long, hide_short_help = true)]
    pub floor_untraced: bool,
    /// The command and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub cmd: Vec<OsString>,
}

fn say(msg: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "fdtable run: {msg}");
}

/// Finds `cmd` as `execvp` would.
fn resolve(cmd: &OsString) -> Option<PathBuf> {
    let p = Path::new(cmd);
    if cmd.as_bytes().contains(&b'/') {
        return Some(p.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    let mut found_not_exec = None;
    for dir in std::env::split_paths(&path) {
        let cand = dir.join(p);
        if let Ok(m) = std::fs::metadata(&cand)
            && m.is_file()
        {
            use std::os::unix::fs::PermissionsExt;
            if m.permissions().mode() & 0o111 != 0 {
                return Some(cand);
            }
            found_not_exec.get_or_insert(cand);
        }
    }
    found_not_exec
}

/// Runs `fdtable run`; returns the exit code (or does not return: dies of the program's
/// signal).
pub fn run(args: RunArgs) -> i32 {
    let signals = sys::CallerSignals::capture();
    let inherited = procfs::inherited_fds();
    let host_fds_start = procfs::own_fd_count();
    let (code, stats) = run_inner(&args, &inherited, signals);
    if let Some(path) = &args.stats {
        let mut v = stats.unwrap_or(serde_json::json!({}));
        v["host_fds_start"] = host_fds_start.into();
        v["host_fds_end"] = procfs::own_fd_count().into();
        let _ = std::fs::write(path, v.to_string());
    }
    match code {
        Ok(c) => c,
        Err(sig) => sys::reraise(sig),
    }
}

type Outcome = (Result<i32, i32>, Option<serde_json::Value>);

fn run_inner(args: &RunArgs, inherited: &[i32], signals: sys::CallerSignals) -> Outcome {
    let fail = |code: i32| (Ok(code), None);
    if !sys::is_single_threaded() {
        say("fdtable run must be single-threaded to fork");
        return fail(125);
    }
    let Some(path) = resolve(&args.cmd[0]) else {
        say(format!(
            "{}: No such file or directory",
            args.cmd[0].to_string_lossy()
        ));
        return fail(127);
    };
    // What the program needs, prepared before any fork.
    let to_c = |s: &[u8]| CString::new(s).ok();
    let Some(cpath) = to_c(path.as_os_str().as_bytes()) else {
        say("the command contains a NUL byte");
        return fail(125);
    };
    let mut strings = Vec::new();
    for a in &args.cmd {
        match to_c(a.as_bytes()) {
            Some(c) => strings.push(c),
            None => {
                say("an argument contains a NUL byte");
                return fail(125);
            }
        }
    }
    let argc = strings.len();
    for (k, v) in std::env::vars_os() {
        let mut e = k.as_bytes().to_vec();
        e.push(b'=');
        e.extend_from_slice(v.as_bytes());
        if let Some(c) = to_c(&e) {
            strings.push(c);
        }
    }
    let mut argv: Vec<*const libc::c_char> = strings[..argc].iter().map(|s| s.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = strings[argc..].iter().map(|s| s.as_ptr()).collect();
    envp.push(std::ptr::null());

    // Two channels, so that `fdtable run` fits in a table as small as the program's may be
    // (`ulimit -n 8`): the waiter and the supervisor (the supervisor's ids, the program's
    // pid, a failed setup step, the counters), the program and the supervisor (the
    // listener's number or a failed step, then "go"). Both close-on-exec.
    // They need four descriptors: below a soft limit of 16 this process raises its own to the
    // hard limit, and the program gets the caller's back before it executes.
    let caller_nofile = sys::raise_soft_nofile(16);
    let pair = || {
        std::os::unix::net::UnixStream::pair().map(|(a, b)| (OwnedFd::from(a), OwnedFd::from(b)))
    };
    let (Ok((ws_w, ws_s)), Ok((cs_c, cs_s))) = (pair(), pair()) else {
        say(
            "cannot create the supervisor's channels: RLIMIT_NOFILE leaves no room for their four descriptors",
        );
        return fail(125);
    };
    let cfg = Config {
        track_fds: args.track_fds,
        check_tables: args.check_tables,
        floor: args.floor || args.floor_untraced,
        untraced: args.floor_untraced,
        emulate_dumpable: !sys::has_capability(sys::CAP_SYS_PTRACE),
    };
    let waiter = std::process::id() as i32;
    let sup_pid = match sys::fork() {
        Err(e) => {
            say(format!("fork: {e}"));
            return fail(125);
        }
        Ok(None) => {
            // The supervisor.
            let mut keep = vec![2, ws_s.as_raw_fd(), cs_s.as_raw_fd()];
            keep.sort_unstable();
            keep.dedup();
            sys::close_all_but(&keep);
            std::mem::forget((ws_w, cs_c));
            let code = supervise(cfg, waiter, ws_s, cs_s);
            std::process::exit(code);
        }
        Ok(Some(p)) => p.as_raw(),
    };
    drop((ws_s, cs_s));
    let mut ws = std::io::BufReader::new(std::fs::File::from(ws_w));
    let mut ids = String::new();
    let _ = ws.read_line(&mut ids);
    let supervisor: Vec<i32> = ids
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if supervisor.is_empty() {
        say("the supervisor did not start");
        let _ = sys::wait(sup_pid, 0);
        return fail(125);
    }
    let ctx = filter::Context {
        supervisor: supervisor.clone(),
        dumpable: cfg.emulate_dumpable,
        notify_processes: cfg.untraced,
    };
    let plan = ProgramPlan {
        path: cpath,
        argv,
        envp,
        strings,
        keep: {
            let mut k = inherited.to_vec();
            k.push(cs_c.as_raw_fd());
            k.sort_unstable();
            k
        },
        nofile: args.nofile,
        caller_nofile,
        filter: filter::program(&ctx),
        channel: cs_c.as_raw_fd(),
        supervisor: supervisor[0],
        signals,
    };
    let child = match sys::spawn_program(&plan) {
        Ok(p) => p,
        Err(e) => {
            say(format!("fork: {e}"));
            drop(ws);
            let _ = sys::wait(sup_pid, 0);
            return fail(125);
        }
    };
    drop(cs_c);
    let _ = ws
        .get_mut()
        .write_all(format!("{}\n", child.as_raw()).as_bytes());
    sys::forward_signals_to(child);

    let exit = sys::wait(child.as_raw(), 0);
    // The supervisor ends when every traced process has: a failed setup step, then its
    // counters.
    let mut rest = String::new();
    let _ = ws.read_to_string(&mut rest);
    let _ = sys::wait(sup_pid, 0);
    let mut stats = None;
    let mut failed = None;
    for line in rest.lines() {
        if let Some(v) = line.strip_prefix("stats ") {
            stats = serde_json::from_str(v).ok();
        } else if let Some(v) = line.strip_prefix("failed ") {
            let v: Vec<i32> = v
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            if let [step, errno] = v[..] {
                failed = Some((step as u32, errno));
            }
        }
    }
    if let Some((step, errno)) = failed {
        let e = nix::errno::Errno::from_raw(errno).desc();
        let code = match Step::from_u32(step) {
            Some(Step::Exec) => {
                say(format!("{}: {e}", args.cmd[0].to_string_lossy()));
                if errno == libc::ENOENT { 127 } else { 126 }
            }
            s => {
                let what = s.map_or("setting up the program", Step::what);
                say(format!("cannot start the program: {what}: {e}"));
                125
            }
        };
        return (Ok(code), stats);
    }
    let r = match exit {
        Ok(Status::Exited(_, c)) => Ok(c),
        Ok(Status::Signaled(_, s)) => Err(s),
        _ => Ok(125),
    };
    (r, stats)
}

/// The supervisor's process: leaves the caller's session, attaches to the program, takes
/// its seccomp listener, and supervises until every traced process is gone. Returns its exit
/// code.
fn supervise(cfg: Config, waiter: i32, ws: OwnedFd, cs: OwnedFd) -> i32 {
    let _ = sys::setsid();
    // The waiter is the process the caller knows: if it is killed (`kill -9` of its pid, a
    // service manager stopping it), the supervisor goes too, and with it (`PTRACE_O_EXITKILL`)
    // the program, as the program itself would have been killed natively.
    if !sys::die_with_parent(waiter) {
        return 125;
    }
    let _ = sys::set_dumpable(false);
    sys::ignore_forwarded();
    sys::raise_nofile();
    let me = std::process::id() as i32;
    // The listener is shared with the notification thread: the thread may finish first (once
    // no task carries the filter), and the descriptor must stay open until this thread has
    // counted its own descriptors at the end.
    type Handover = (std::sync::Arc<OwnedFd>, std::sync::Arc<sup::Shared>);
    let (tx, rx) = std::sync::mpsc::channel::<Handover>();
    let (tid_tx, tid_rx) = std::sync::mpsc::channel::<i32>();
    crate::mem::start_readers();
    let notifier = std::thread::Builder::new()
        .name("notifications".into())
        .spawn(move || {
            let _ = tid_tx.send(sys::gettid());
            if let Ok((listener, state)) = rx.recv() {
                sup::notifications(&state, &listener);
            }
        });
    let Ok(notifier) = notifier else {
        return 125;
    };
    let Ok(ntid) = tid_rx.recv() else {
        return 125;
    };
    // Every thread of this process exists before its ids go to the filter (the readers were
    // started with the notification thread).
    let readers = crate::mem::reader_ids();
    let mut ws = std::io::BufReader::new(std::fs::File::from(ws));
    // Each message in one write, so that the peer's read wakes once.
    let ids: Vec<String> = [me, ntid]
        .iter()
        .chain(&readers)
        .map(|t| t.to_string())
        .collect();
    let _ = ws
        .get_mut()
        .write_all(format!("{}\n", ids.join(" ")).as_bytes());
    let mut line = String::new();
    let _ = ws.read_line(&mut line);
    let Ok(child) = line.trim().parse::<i32>() else {
        return 125;
    };
    let exit_events = cfg.track_fds || cfg.check_tables;
    let untraced = cfg.untraced;
    let options = sup::events::options(exit_events, !cfg.floor);
    let mut cs = std::fs::File::from(cs);
    let mut outside = vec![me, ntid];
    outside.extend(&readers);
    let state = State::new(cfg, child, outside, waiter);
    let state = std::sync::Arc::new(sup::Shared::new(state));
    let mut failed = None;
    let mut kept = None;
    match sys::read_message(&mut cs) {
        // The program has named this process its tracer (`PR_SET_PTRACER`, which Yama's
        // ptrace_scope 1 requires of a tracer that is not an ancestor) and waits for "go":
        // attached only now, and before it can execute anything.
        Some(sys::Message::Listener(n)) => {
            if !untraced && let Err(e) = ptrace::seize(nix::unistd::Pid::from_raw(child), options) {
                say(format!("cannot trace the program (ptrace: {e})"));
                let _ = sys::kill(child, libc::SIGKILL);
                return 125;
            }
            let listener = sys::pidfd_open(child).and_then(|p| sys::pidfd_getfd(&p, n as u32));
            let Ok(listener) = listener else {
                say("cannot take the program's seccomp listener");
                let _ = sys::kill(child, libc::SIGKILL);
                return 125;
            };
            let _ = sys::notif_set_flags(
                listener.as_raw_fd(),
                sys::SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
            );
            let listener = std::sync::Arc::new(listener);
            kept = Some(listener.clone());
            if tx.send((listener, state.clone())).is_err() {
                return 125;
            }
            let _ = cs.write_all(b"g");
        }
        Some(sys::Message::Failed(step, errno)) => failed = Some((step, errno)),
        None => {}
    }
    let fds_start = procfs::own_fd_count();
    if untraced {
        // Nothing is traced: the notification thread ends when no task carries the filter.
        drop(tx);
        let _ = notifier.join();
    } else {
        sup::events::run(&state);
        // Every tracee is gone: the notification thread is answering the last notifications
        // (of tasks killed while they waited) and ends once no task carries the filter. Its
        // descriptors are counted after that (briefly waited for: a task the supervisor
        // never saw could keep it).
        let t = std::time::Instant::now();
        while !notifier.is_finished() && t.elapsed() < std::time::Duration::from_millis(200) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    // An exec that failed said so before the program exited; one that succeeded closed the
    // channel.
    if failed.is_none()
        && let Some(sys::Message::Failed(step, errno)) = sys::read_message(&mut cs)
    {
        failed = Some((step, errno));
    }
    let fds_end = procfs::own_fd_count();
    drop(kept);
    drop(cs);
    if let Some((step, errno)) = failed {
        let _ = ws
            .get_mut()
            .write_all(format!("failed {step} {errno}\n").as_bytes());
    }
    let stats: Stats = state.stats();
    let v = serde_json::json!({
        "notifications": stats.notifications,
        "continued": stats.continued,
        "answered": stats.answered,
        "refused": stats.refused,
        "probes": stats.probes,
        "fdinfo": stats.fdinfo,
        "listings": stats.listings,
        "adopted": stats.adopted,
        "uncertain_max": stats.uncertain_max,
        "tasks": stats.tasks,
        "events": stats.events,
        "signals": stats.signals,
        "checks": stats.checks,
        "table_mismatches": stats.table_mismatches,
        "early": stats.early,
        "early_checks": stats.early_checks,
        "restarted": stats.restarted,
        "claimed": stats.claimed,
        "supervisor_fds_start": fds_start,
        "supervisor_fds_end": fds_end,
    });
    // One write: the waiter reads the line as it comes.
    let _ = ws.get_mut().write_all(format!("stats {v}\n").as_bytes());
    0
}

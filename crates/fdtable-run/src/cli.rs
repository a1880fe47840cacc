//! `fdtable run`: arguments, the supervisor's process, and the program.
//!
//! The process the caller started becomes the program: it starts the supervisor (a
//! grandchild that leaves the caller's session, so that the program has no child it did not
//! make), waits for it to attach, and executes the program in place, as `strace -D` does.
//! The program keeps the process id, the parent, the process group and the session the
//! caller gave `fdtable run`, so its exit status, its signals, job control and `getppid()`
//! are native. When the program cannot be started: 127 if it is not found, 126 if it cannot
//! be executed (as shells do), 125 if `fdtable run` itself cannot run.

use crate::filter;
use crate::procfs;
use crate::sup::{self, Config, State};
use crate::sys::{self, ProgramPlan, Step};
use nix::sys::ptrace;
use std::ffi::{CString, OsString};
use std::io::{Read, Write};
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

/// Runs `fdtable run`: on success this process becomes the program (`execve`) and does not
/// return; otherwise returns the exit code (125: `fdtable run` itself could not run; 126:
/// the program cannot be executed; 127: it is not found).
pub fn run(args: RunArgs) -> i32 {
    let signals = sys::CallerSignals::capture();
    let inherited = procfs::inherited_fds();
    // A descriptor whose read() installs descriptors unseen (`sup::foreign`) cannot be
    // kept identical from the start.
    for &fd in &inherited {
        if let Some(what) = procfs::installs_on_read(0, fd as u32) {
            say(format!(
                "descriptor {fd} is {what}: its read() would install descriptors the supervisor cannot see; close it (or make it close-on-exec) before fdtable run"
            ));
            return 125;
        }
    }
    if !sys::is_single_threaded() {
        say("fdtable run must be single-threaded to fork");
        return 125;
    }
    let Some(path) = resolve(&args.cmd[0]) else {
        say(format!(
            "{}: No such file or directory",
            args.cmd[0].to_string_lossy()
        ));
        return 127;
    };
    // What the program needs, prepared before any fork.
    let to_c = |s: &[u8]| CString::new(s).ok();
    let Some(cpath) = to_c(path.as_os_str().as_bytes()) else {
        say("the command contains a NUL byte");
        return 125;
    };
    let mut strings = Vec::new();
    for a in &args.cmd {
        match to_c(a.as_bytes()) {
            Some(c) => strings.push(c),
            None => {
                say("an argument contains a NUL byte");
                return 125;
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
    // The supervisor may change its directory; the counters' file is named from here.
    let stats = args
        .stats
        .as_ref()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()));

    // One channel between this process (the program to be) and the supervisor: the
    // supervisor's ids, then the listener's number, then "go". Close-on-exec. Its two
    // descriptors must fit in a table as small as the program's may be (`ulimit -n 2`):
    // below a soft limit of 16 this process raises its own to the hard limit, and the
    // program gets the caller's back before it executes.
    let caller_nofile = sys::raise_soft_nofile(16);
    let Ok((cs_c, cs_s)) = std::os::unix::net::UnixStream::pair() else {
        say(
            "cannot create the supervisor's channel: RLIMIT_NOFILE leaves no room for its two descriptors",
        );
        return 125;
    };
    let (cs_c, cs_s) = (OwnedFd::from(cs_c), OwnedFd::from(cs_s));
    let cfg = Config {
        track_fds: args.track_fds,
        check_tables: args.check_tables,
        floor: args.floor || args.floor_untraced,
        untraced: args.floor_untraced,
        emulate_dumpable: !sys::has_capability(sys::CAP_SYS_PTRACE),
        stats: stats.is_some(),
    };
    let me = std::process::id() as i32;
    // The supervisor is a grandchild that the middle process leaves at once: the program
    // (this process, after `execve`) has no child it did not make, and the caller waits
    // for the program itself.
    match sys::fork() {
        Err(e) => {
            say(format!("fork: {e}"));
            return 125;
        }
        Ok(None) => {
            if let Ok(None) = sys::fork() {
                let keep = [2, cs_s.as_raw_fd()];
                sys::close_all_but(&keep);
                std::mem::forget(cs_c);
                let code = supervise(cfg, me, stats, cs_s);
                std::process::exit(code);
            }
            sys::exit_now(0);
        }
        Ok(Some(middle)) => {
            let _ = sys::wait(middle.as_raw(), 0);
        }
    }
    drop(cs_s);
    let mut cs = std::fs::File::from(cs_c);
    let Some(supervisor) = read_ids(&mut cs) else {
        say("the supervisor did not start");
        return 125;
    };
    let ctx = filter::Context {
        supervisor: supervisor.clone(),
        dumpable: cfg.emulate_dumpable,
        notify_processes: cfg.untraced,
    };
    let cs = OwnedFd::from(cs);
    let plan = ProgramPlan {
        path: cpath,
        argv,
        envp,
        strings,
        keep: {
            let mut k = inherited.to_vec();
            k.push(cs.as_raw_fd());
            k.sort_unstable();
            k
        },
        nofile: args.nofile,
        caller_nofile,
        filter: filter::program(&ctx),
        channel: cs.as_raw_fd(),
        supervisor: supervisor[0],
        signals,
    };
    let cmd = args.cmd[0].to_string_lossy().into_owned();
    sys::become_program(&plan, |step, errno| {
        let e = nix::errno::Errno::from_raw(errno).desc();
        match step {
            Step::Exec => {
                say(format!("{cmd}: {e}"));
                if errno == libc::ENOENT { 127 } else { 126 }
            }
            s => {
                say(format!("cannot start the program: {}: {e}", s.what()));
                125
            }
        }
    })
}

/// The supervisor's ids (its process and its threads), the first line on the channel; read
/// a byte at a time, so that nothing after it is taken from the channel.
fn read_ids(cs: &mut std::fs::File) -> Option<Vec<i32>> {
    let mut line = Vec::new();
    let mut b = [0u8];
    loop {
        match cs.read(&mut b) {
            Ok(1) if b[0] == b'\n' => break,
            Ok(1) => line.push(b[0]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            _ => return None,
        }
    }
    let ids: Vec<i32> = std::str::from_utf8(&line)
        .ok()?
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    (!ids.is_empty()).then_some(ids)
}

/// The supervisor's process: leaves the caller's session, attaches to the program, takes
/// its seccomp listener, and supervises until every traced process is gone. Returns its exit
/// code.
fn supervise(cfg: Config, child: i32, stats_file: Option<PathBuf>, cs: OwnedFd) -> i32 {
    let _ = sys::setsid();
    // Holding the caller's directory would keep its mount busy (the program could not
    // unmount it); the counters' file was named from there already.
    let _ = std::env::set_current_dir("/");
    let _ = sys::set_dumpable(false);
    sys::ignore_job_signals();
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
    let mut cs = std::fs::File::from(cs);
    // One write, so that the program's reads see the whole line.
    let ids: Vec<String> = [me, ntid]
        .iter()
        .chain(&readers)
        .map(|t| t.to_string())
        .collect();
    if cs
        .write_all(format!("{}\n", ids.join(" ")).as_bytes())
        .is_err()
    {
        return 125;
    }
    // The counters are written when the last traced task reaches its exit (before the
    // caller's `wait` for the program can return, when the program's process is the last),
    // so they need exit events.
    let exit_events = cfg.exit_events();
    let untraced = cfg.untraced;
    let options = sup::events::options(exit_events, !cfg.floor);
    let mut outside = vec![me, ntid];
    outside.extend(&readers);
    let state = State::new(cfg, child, outside);
    let state = std::sync::Arc::new(sup::Shared::new(state));
    let mut kept = None;
    // The program has named this process its tracer (`PR_SET_PTRACER`, which Yama's
    // ptrace_scope 1 requires of a tracer that is not an ancestor) and waits for "go":
    // attached only now, and before it can execute anything. Anything else (the end of the
    // channel) is a setup step that failed, which the program reports itself.
    if let Some(sys::Message::Listener(n)) = sys::read_message(&mut cs) {
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
    drop(cs);
    let fds_start = procfs::own_fd_count();
    if let Some(path) = stats_file {
        state.lock().stats_file = Some((path, fds_start));
    }
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
    // Not written yet: no exit event came last (`--floor`, or the last task was killed
    // without one).
    let pending = state.lock().stats_file.take();
    if let Some((path, fds_start)) = pending {
        sup::write_stats(&path, &state.stats(), fds_start, procfs::own_fd_count());
    }
    drop(kept);
    0
}

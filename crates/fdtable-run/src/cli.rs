//! `fdtable run`: arguments, starting the first process, and the exit status.
//!
//! Exit status: the program's. A program killed by a signal is reported the way a native
//! run reports it: the supervisor restores the signal's default action and kills itself with
//! it, so the caller's `wait` sees `WIFSIGNALED` with the same signal (a shell prints the same
//! "Killed" or "Segmentation fault" and sets `$?` to 128+N). The core-dump bit is not
//! reproduced (the supervisor does not dump core for the program). When the program cannot be
//! started: 127 if it is not found, 126 if it cannot be executed (as shells do), 125 if the
//! supervisor itself cannot run.

use crate::filter;
use crate::procfs;
use crate::sup::{Config, Exit, Supervisor};
use crate::sys::{self, ChildPlan, Step};
use nix::sys::ptrace;
use nix::unistd::Pid;
use std::ffi::{CString, OsString};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Arguments of `fdtable run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The virtual RLIMIT_NOFILE (soft and hard) of the first process; default: the caller's.
    #[arg(long)]
    pub nofile: Option<u64>,
    /// When each process exits, list on stderr the descriptors it still holds and the call
    /// that created each (as `valgrind --track-fds=yes`).
    #[arg(long)]
    pub track_fds: bool,
    /// Write the supervisor's counters as JSON to this file at the end (for tests and the
    /// benchmark): traced calls, exit stops, injections, host descriptors at start and end.
    #[arg(long, hide = true)]
    pub stats: Option<PathBuf>,
    /// At every process exit, compare its real descriptor table with the library's and
    /// count the differences (slow; for tests).
    #[arg(long, hide = true)]
    pub check_tables: bool,
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

fn host_fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count().saturating_sub(1))
}

/// Runs `fdtable run`; returns the exit code (or does not return: dies of the program's
/// signal).
pub fn run(args: RunArgs) -> i32 {
    let inherited = procfs::inherited_fds();
    let host_fds_start = host_fd_count();
    let code = run_inner(&args, &inherited);
    if let Some(path) = &args.stats
        && let Some((stats, _)) = &code.1
    {
        let v = serde_json::json!({
            "seccomp_stops": stats.seccomp_stops,
            "exit_stops": stats.exit_stops,
            "emulated": stats.emulated,
            "injected": stats.injected,
            "refused": stats.refused,
            "tasks": stats.tasks,
            "signals": stats.signals,
            "table_mismatches": stats.table_mismatches,
            "orphans_closed": stats.orphans_closed,
            "placeholders": stats.placeholders,
            "placeholders_retired": stats.placeholders_retired,
            "host_fds_start": host_fds_start,
            "host_fds_end": host_fd_count(),
        });
        let _ = std::fs::write(path, v.to_string());
    }
    match code {
        (Ok(c), _) => c,
        (Err(sig), _) => sys::reraise(sig),
    }
}

type Outcome = (Result<i32, i32>, Option<(crate::sup::Stats, ())>);

fn run_inner(args: &RunArgs, inherited: &[i32]) -> Outcome {
    let fail = |code: i32| (Ok(code), None);
    if !sys::is_single_threaded() {
        say("the supervisor must be single-threaded to fork");
        return fail(125);
    }
    let Some(path) = resolve(&args.cmd[0]) else {
        say(format!(
            "{}: No such file or directory",
            args.cmd[0].to_string_lossy()
        ));
        return fail(127);
    };
    let (soft, hard) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .unwrap_or((1024, 4096));
    let nofile = args.nofile.map_or((soft, hard), |n| (n, n));
    // A control buffer the kernel accepts must fit what the supervisor translates.
    let optmem: usize = std::fs::read_to_string("/proc/sys/net/core/optmem_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    if optmem > crate::handlers::MAX_CONTROL {
        say(format!(
            "net.core.optmem_max ({optmem}) is above the {} bytes of control messages the supervisor translates",
            crate::handlers::MAX_CONTROL
        ));
        return fail(125);
    }
    let nr_open: u64 = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1 << 20);
    // The real limit: as high as the supervisor may go.
    let res = nix::sys::resource::Resource::RLIMIT_NOFILE;
    let real_limit = if nix::sys::resource::setrlimit(res, nr_open, nr_open).is_ok() {
        nr_open
    } else {
        let _ = nix::sys::resource::setrlimit(res, hard, hard);
        hard
    };
    // Placeholders fill the bottom of every real table (see `docs/RUN.md`), as many as fit
    // beside the program's own descriptors: the real table must hold one real descriptor
    // for each of the program's (its virtual soft limit, and what it inherits), with some
    // slack, or the program would run out before its limit says. Without room (a real limit
    // that cannot be raised above the virtual one) there are none, and the program's real
    // descriptors may take any number below the real limit.
    let n = inherited.len() as u64;
    let want = nofile.1.clamp(64, 65536);
    let room = real_limit
        .saturating_sub(nofile.0.saturating_add(n) + crate::sup::SLACK)
        .min(real_limit.saturating_sub(2 * n + 8));
    let placeholders = want.min(room) as i32;
    let cfg = Config {
        nofile,
        track_fds: args.track_fds,
        placeholders,
        real_limit,
        check_tables: args.check_tables,
        nr_open,
    };

    // What the child needs, prepared before fork.
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

    let pipe = || nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC);
    let (Ok((go_r, go_w)), Ok((err_r, err_w))) = (pipe(), pipe()) else {
        say("cannot create pipes");
        return fail(125);
    };
    // The descriptor the placeholders copy, when there are any.
    let placeholder: Option<OwnedFd> = if placeholders > 0 {
        match nix::fcntl::open(
            "/dev/null",
            nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        ) {
            Ok(fd) => Some(fd),
            Err(e) => {
                say(format!("cannot open /dev/null: {e}"));
                return fail(125);
            }
        }
    } else {
        None
    };
    // Without placeholders the inherited descriptors keep their numbers in the real table;
    // with them the i-th moves to `placeholders + i`.
    let initial: Vec<(u32, i32)> = inherited
        .iter()
        .enumerate()
        .map(|(i, &f)| {
            let real = if placeholders > 0 {
                placeholders + i as i32
            } else {
                f
            };
            (f as u32, real)
        })
        .collect();
    let plan = ChildPlan {
        path: cpath,
        argv,
        envp,
        strings,
        inherited: inherited.to_vec(),
        placeholders,
        keep: {
            let mut k = inherited.to_vec();
            k.extend([go_r.as_raw_fd(), err_w.as_raw_fd()]);
            k.sort_unstable();
            k
        },
        real_limit,
        placeholder: placeholder.as_ref().map_or(-1, |p| p.as_raw_fd()),
        go: go_r.as_raw_fd(),
        err: err_w.as_raw_fd(),
        filter: filter::program(),
    };
    let child = match sys::spawn(&plan) {
        Ok(p) => p,
        Err(e) => {
            say(format!("fork: {e}"));
            return fail(125);
        }
    };
    drop((go_r, err_w, placeholder));
    let opts = ptrace::Options::PTRACE_O_TRACESECCOMP
        | ptrace::Options::PTRACE_O_TRACEFORK
        | ptrace::Options::PTRACE_O_TRACEVFORK
        | ptrace::Options::PTRACE_O_TRACECLONE
        | ptrace::Options::PTRACE_O_TRACEEXEC
        | ptrace::Options::PTRACE_O_TRACEEXIT
        | ptrace::Options::PTRACE_O_TRACESYSGOOD
        | ptrace::Options::PTRACE_O_EXITKILL;
    if let Err(e) = ptrace::seize(child, opts) {
        say(format!("cannot trace the program (ptrace: {e})"));
        let _ = nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGKILL);
        let _ = nix::sys::wait::waitpid(child, None);
        return fail(125);
    }
    let mut go_w = std::fs::File::from(go_w);
    let _ = go_w.write_all(b"g");
    drop(go_w);
    sys::forward_signals_to(child);

    let mut sup = Supervisor::new(cfg, child.as_raw(), &initial);
    let exit = sup.run();
    let stats = sup.stats.clone();
    drop(sup);

    // A setup or exec failure is reported through the error pipe.
    let mut err = std::fs::File::from(err_r);
    let mut msg = Vec::new();
    let _ = err.read_to_end(&mut msg);
    drop(err);
    if msg.len() >= 8 {
        let step = u32::from_ne_bytes(msg[..4].try_into().unwrap());
        let errno = i32::from_ne_bytes(msg[4..8].try_into().unwrap());
        let e = nix::errno::Errno::from_raw(errno).desc();
        let code = match Step::from_u32(step) {
            Some(Step::Exec) => {
                say(format!("{}: {e}", args.cmd[0].to_string_lossy()));
                if errno == libc::ENOENT { 127 } else { 126 }
            }
            s => {
                say(format!("setting up the program failed ({s:?}): {e}"));
                125
            }
        };
        return (Ok(code), Some((stats, ())));
    }
    let _ = Pid::this();
    let r = match exit {
        Some(Exit::Code(c)) => Ok(c),
        Some(Exit::Signal(s)) => Err(s),
        None => Ok(125),
    };
    (r, Some((stats, ())))
}

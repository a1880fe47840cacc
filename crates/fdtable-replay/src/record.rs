//! `fdtable record`: runs a command under strace as REPORT.md §2 recommends
//! (`strace -f -s 256 -o LOG -- CMD`), from a clean descriptor set, and writes the meta file.
//! `-s` limits printed arrays as well as strings: 256 prints every descriptor of an
//! SCM_RIGHTS message (at most `SCM_MAX_FD`, 253).
//!
//! The descriptor set must be clean because strace passes every inherited descriptor to the
//! tracee (P10): a shell may leak some (here fds 10 and 251). Before spawning, every
//! descriptor of this process from 3 up is marked close-on-exec, so strace, and through it
//! the command, starts with exactly the standard descriptors this process has open; those
//! (and RLIMIT_NOFILE) are written to `NAME.meta.json`.

use crate::meta::meta_path;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::process::Command;

/// The strace options used (before `-o LOG -- CMD`).
pub const STRACE_OPTS: [&str; 3] = ["-f", "-s", "256"];

/// `SCM_MAX_FD`: the most descriptors one SCM_RIGHTS message carries.
pub const SCM_MAX_FD: usize = 253;

/// A status as a shell gives it: the exit code, or 128 + the signal that killed strace
/// (strace itself dies by the signal that killed the command).
fn exit_status(s: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code()
        .or_else(|| s.signal().map(|n| 128 + n))
        .unwrap_or(-1)
}

/// What a recording produced.
#[derive(Debug)]
pub struct Recording {
    /// The command's exit status as strace reported it (128 + N for a command killed by
    /// signal N).
    pub exit_status: i32,
    /// Lines in the log.
    pub lines: u64,
}

/// Records `cmd` into `out` and writes `out`'s meta file.
pub fn record(cmd: &[String], out: &Path) -> Result<Recording, String> {
    if cmd.is_empty() {
        return Err("no command given".into());
    }
    let version = Command::new("strace").arg("-V").output().map_err(|e| {
        format!("cannot run strace ({e}); install it (e.g. apt-get install strace)")
    })?;
    let version = String::from_utf8_lossy(&version.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    // Nothing but 0, 1 and 2 may reach the tracee.
    close_fds::set_fds_cloexec(3, &[]);
    let initial = standard_fds();
    let (soft, hard) = nofile_limits().unwrap_or((1024, 1024));
    let status = Command::new("strace")
        .args(STRACE_OPTS)
        .arg("-o")
        .arg(out)
        .arg("--")
        .args(cmd)
        .status()
        .map_err(|e| format!("cannot run strace: {e}"))?;
    let exit_status = exit_status(status);
    let data = std::fs::read(out).map_err(|e| format!("{}: {e}", out.display()))?;
    if data.is_empty() {
        return Err(format!(
            "strace wrote nothing to {} (is ptrace allowed here?)",
            out.display()
        ));
    }
    let lines = data.iter().filter(|&&b| b == b'\n').count() as u64;
    let mut fds = Map::new();
    for (fd, what) in &initial {
        fds.insert(fd.to_string(), Value::String(what.clone()));
    }
    let mut argv: Vec<String> = vec!["strace".into()];
    argv.extend(STRACE_OPTS.iter().map(|s| s.to_string()));
    argv.extend(["-o".into(), "NAME.strace".into(), "--".into()]);
    let meta = json!({
        "name": out.file_stem().map(|s| s.to_string_lossy().into_owned()),
        "command": cmd,
        "strace_argv": argv,
        "cwd": std::env::current_dir().ok().map(|p| p.display().to_string()),
        "initial_fds": fds,
        "rlimit_nofile": [soft, hard],
        "exit_status": exit_status,
        "bytes": data.len(),
        "lines": lines,
        "strace_version": version,
        "kernel": std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).ok(),
        "recorded_by": "fdtable record",
    });
    let mp = meta_path(out);
    let text = serde_json::to_string_pretty(&meta).map_err(|e| e.to_string())?;
    std::fs::write(&mp, text + "\n").map_err(|e| format!("{}: {e}", mp.display()))?;
    Ok(Recording { exit_status, lines })
}

/// The standard descriptors (0, 1, 2) this process has open, with what they refer to.
fn standard_fds() -> Vec<(u32, String)> {
    (0..3u32)
        .filter_map(|fd| {
            std::fs::read_link(format!("/proc/self/fd/{fd}"))
                .ok()
                .map(|p| (fd, p.display().to_string()))
        })
        .collect()
}

/// RLIMIT_NOFILE of this process (inherited by strace and the command), from
/// `/proc/self/limits`.
pub fn nofile_limits() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    let mut nums = line["Max open files".len()..].split_whitespace().map(|w| {
        if w == "unlimited" {
            Some(u64::MAX)
        } else {
            w.parse().ok()
        }
    });
    Some((nums.next()??, nums.next()??))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strace_prints_every_descriptor_of_an_scm_rights_message() {
        let s = STRACE_OPTS
            .iter()
            .position(|&o| o == "-s")
            .and_then(|i| STRACE_OPTS.get(i + 1))
            .and_then(|v| v.parse::<usize>().ok())
            .expect("-s N in STRACE_OPTS");
        assert!(s >= SCM_MAX_FD, "-s {s}");
    }

    #[test]
    fn a_command_killed_by_a_signal_has_the_shells_status() {
        use std::os::unix::process::ExitStatusExt;
        let killed = std::process::ExitStatus::from_raw(9);
        assert_eq!(exit_status(killed), 137);
        let exited = std::process::ExitStatus::from_raw(3 << 8);
        assert_eq!(exit_status(exited), 3);
    }
}

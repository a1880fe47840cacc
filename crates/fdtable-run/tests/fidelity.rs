//! The corners where a run under `fdtable run` once differed from a native run: programs
//! started with closed standard streams, tables filled up to RLIMIT_NOFILE (at the caller's
//! limit, which the supervisor cannot raise here, and below it), the procfs spellings that
//! name descriptor tables, `/dev/stdin` as a symbolic link, and calls that carry a
//! descriptor inside another number (clock ids, keyctl). Each runs natively and under the
//! supervisor and requires the same exit status, stdout and stderr.

mod support;

use std::path::Path;
use support::{have, same, same_in};

fn copy(name: &str) -> impl Fn(&Path) {
    let name = name.to_string();
    move |d: &Path| {
        std::fs::copy(support::programs().join(&name), d.join(&name)).unwrap();
    }
}

#[test]
fn closed_standard_streams_stay_closed() {
    // The auditor's cases: a write to a closed stdout fails, a read from a closed stdin
    // fails with EBADF, and a closed stderr swallows the shell's own error message.
    for (name, wrap, cmd) in [
        (
            "closed-stdout-echo",
            "exec \"$@\" >&-",
            &["sh", "-c", "echo hi"][..],
        ),
        ("closed-stdin-cat", "exec \"$@\" <&-", &["cat"][..]),
        (
            "closed-stderr-echo",
            "exec \"$@\" 2>&-",
            &["sh", "-c", "echo err >&2"][..],
        ),
        (
            "closed-stdin-shell",
            "exec \"$@\" <&-",
            &["sh", "-c", "read x; echo read $?; ls /proc/self/fd"][..],
        ),
    ] {
        let r = same_in(name, Some(wrap), cmd, &[], |_| {});
        if name != "closed-stdin-shell" {
            assert_ne!(r.code, Some(0), "{name}: {r:#?}");
        } else {
            // read fails, and ls's directory takes descriptor 0.
            assert_eq!(r.stdout, "read 1\n0\n1\n2\n");
        }
    }
    if !have("python3") {
        return;
    }
    // Which descriptors the program has, and which numbers its opens get (the lowest free:
    // a closed standard descriptor first), for each closed set.
    for (name, wrap) in [
        ("closed-0", "exec \"$@\" <&-"),
        ("closed-1", "exec \"$@\" >&-"),
        ("closed-2", "exec \"$@\" 2>&-"),
        ("closed-0-2", "exec \"$@\" <&- 2>&-"),
        ("closed-all", "exec \"$@\" <&- >&- 2>&-"),
    ] {
        let r = same_in(
            name,
            Some(wrap),
            &["python3", "std_streams.py"],
            &[],
            copy("std_streams.py"),
        );
        if name == "closed-0" {
            assert_eq!(r.code, Some(17), "{r:#?}");
            assert!(
                r.stdout
                    .starts_with("['Bad file descriptor', True, True] [0, 3, 4]"),
                "{r:#?}"
            );
        }
    }
    let r = same(
        "closed-none",
        &["python3", "std_streams.py"],
        &[],
        copy("std_streams.py"),
    );
    assert_eq!(r.code, Some(16), "{r:#?}");
    assert!(
        r.stdout.starts_with("[True, True, True] [3, 4, 5]"),
        "{r:#?}"
    );
}

#[test]
fn the_table_fills_up_exactly_where_getrlimit_says() {
    if !have("python3") {
        return;
    }
    let setup = &copy("exhaust.py");
    // At the caller's limit (which the supervisor cannot raise without CAP_SYS_RESOURCE),
    // and under `ulimit -n` set before the supervisor starts: the real limit is then the
    // program's, and there is no room for placeholders.
    let r = same("exhaust-default", &["python3", "exhaust.py"], &[], setup);
    assert!(r.stdout.contains("Too many open files"), "{r:#?}");
    for n in [1024, 64, 8] {
        let wrap = format!("ulimit -n {n} && exec \"$@\"");
        let r = same_in(
            &format!("exhaust-{n}"),
            Some(&wrap),
            &["python3", "exhaust.py"],
            &[],
            setup,
        );
        assert!(
            r.stdout.starts_with(&format!("({n}, {n}) {} ", n - 3)),
            "{r:#?}"
        );
    }
    // A soft limit below the hard one leaves room for placeholders; a program that raises
    // its soft limit gets every descriptor it asks for (the placeholders in the way go).
    let r = same_in(
        "exhaust-raised",
        Some("ulimit -Sn 256 && exec \"$@\""),
        &["python3", "exhaust.py", "raise"],
        &[],
        setup,
    );
    assert!(r.stdout.starts_with("soft was 256\n"), "{r:#?}");
}

#[test]
fn inside_the_supervisor_the_limit_is_the_programs_own() {
    // `ulimit -n 8` run by the program itself is virtual: the supervisor's real limit is
    // untouched and the probe still fills exactly 5 (3 standard streams are open).
    if !have("python3") {
        return;
    }
    let r = same(
        "exhaust-inner-8",
        &["sh", "-c", "ulimit -n 8 && exec python3 exhaust.py"],
        &[],
        copy("exhaust.py"),
    );
    assert_eq!(r.stdout, "(8, 8) 5 Too many open files\n");
}

#[test]
fn every_spelling_of_a_descriptor_path_is_the_programs() {
    if !have("python3") {
        return;
    }
    // /proc/self, /proc/<pid>, /proc/thread-self, /proc/self/task/<tid>, /proc/<pid>/task/<tid>,
    // /dev/fd, `..`, `//`, /proc/self/root, directory descriptors of /proc/self and of an fd
    // directory, a working directory in /proc/self and in its fd directory, fdinfo, a second
    // thread: listings, reads, writes, readlink, stat, lstat, missing numbers.
    let r = same(
        "proc-paths",
        &["python3", "proc_paths.py"],
        &[],
        copy("proc_paths.py"),
    );
    assert!(
        r.stdout
            .contains("list /proc/self/task/TID/fd ['0', '1', '2', '3', '4']"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("read /proc/self/task/TID/../../fd/3 contents of data"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("written through /proc/thread-self/fd/1"));
    // With placeholders below the private range (a soft limit below the hard one).
    same_in(
        "proc-paths-placeholders",
        Some("ulimit -Sn 256 && exec \"$@\""),
        &["python3", "proc_paths.py"],
        &[],
        copy("proc_paths.py"),
    );
}

#[test]
fn the_standard_stream_links_read_as_links() {
    if !have("python3") {
        return;
    }
    // readlink /dev/stdin gives the link's text; opening it opens the program's fd 0.
    let r = same(
        "std-links",
        &["sh", "-c", "sh std_links.sh < in.txt"],
        &[],
        |d| {
            copy("std_links.sh")(d);
            std::fs::write(d.join("in.txt"), "input line\n").unwrap();
        },
    );
    assert!(
        r.stdout.starts_with(
            "/proc/self/fd/0\n/proc/self/fd/1\n/proc/self/fd/2\n/dev/stdin -> /proc/self/fd/0\n"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("\ninput line\nto stdout\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn clock_ids_and_keyctl_carry_translated_descriptors() {
    if !have("python3") {
        return;
    }
    // Dynamic clock ids (FD_TO_CLOCKID) of a file, of a closed number and of stdin in the
    // clock_* calls, ordinary and CPU clocks, keyctl(KEYCTL_WATCH_KEY): the kernel's errnos
    // (this kernel has no PTP device and no watch queues), with and without placeholders.
    let r = same(
        "clock-keyctl",
        &["python3", "clock_keyctl.py"],
        &[],
        copy("clock_keyctl.py"),
    );
    assert!(
        r.stdout.contains("monotonic ok\nown cpu clock ok\n"),
        "{}",
        r.stdout
    );
    same_in(
        "clock-keyctl-placeholders",
        Some("ulimit -Sn 256 && exec \"$@\""),
        &["python3", "clock_keyctl.py"],
        &[],
        copy("clock_keyctl.py"),
    );
}

#[test]
fn killing_fdtable_run_kills_the_program() {
    // `kill -9` of `fdtable run`'s own pid (what a service manager or `timeout -s KILL`
    // does) once left the supervisor and the program running until the program ended. The
    // program is that process now: it dies as natively, and its child `sleep` (which holds
    // the pipe until it ends, as natively) never sees "survived" written. The pipe reaches
    // its end when both are gone.
    use std::io::{BufRead, Read};
    let dir = support::scratch("kill-run");
    let mut run = std::process::Command::new(support::bin())
        .args(["--", "sh", "-c", "echo started; sleep 5; echo survived"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("fdtable-run starts");
    let mut out = std::io::BufReader::new(run.stdout.take().expect("a pipe"));
    let mut line = String::new();
    out.read_line(&mut line).expect("the program writes");
    assert_eq!(line, "started\n");
    run.kill().expect("SIGKILL to fdtable-run");
    let status = run.wait().expect("wait");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    let mut rest = String::new();
    out.read_to_string(&mut rest).expect("the pipe's end");
    assert_eq!(rest, "", "the program outlived fdtable run");
}

#[test]
fn the_program_is_the_process_the_caller_started() {
    // No process stands between the caller and the program: its pid is the one the caller
    // got, its parent is the caller, and it is in the caller's process group.
    let dir = support::scratch("same-pid");
    let child = std::process::Command::new(support::bin())
        .args([
            "--",
            "sh",
            "-c",
            "echo $$ $PPID $(cut -d' ' -f5 /proc/$$/stat)",
        ])
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("fdtable-run starts");
    let id = child.id();
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<u32> = text
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let pgrp = nix::unistd::getpgrp().as_raw() as u32;
    assert_eq!(v, [id, std::process::id(), pgrp], "{text}");
}

#[test]
fn a_signal_to_the_programs_parent_reaches_the_parent() {
    // `kill(getppid(), sig)` names the caller, as natively: it once reached a process
    // between them, which sent it back to the program (here: killed by SIGUSR1).
    let bin = support::bin();
    let inner = "kill -USR1 $PPID; echo sent";
    let script = |wrap: &str| {
        format!("trap 'echo parent got USR1' USR1; {wrap} sh -c '{inner}'; echo status $?")
    };
    let dir = support::scratch("sig-parent");
    let n = support::native(&["sh", "-c", &script("")], &dir, &[]);
    let r = support::native(
        &["sh", "-c", &script(&format!("{} --", bin.display()))],
        &dir,
        &[],
    );
    assert_eq!(n.stdout, "sent\nparent got USR1\nstatus 0\n", "{n:?}");
    assert_eq!(r.stdout, n.stdout, "{r:?}");
}

#[test]
fn a_signal_to_the_programs_process_group_arrives_once() {
    // The program alone in its process group (as a shell's job): `kill 0` reaches it once.
    // A process between the caller and the program was in the group too, and sent it again.
    use std::os::unix::process::CommandExt;
    let dir = support::scratch("sig-group");
    let script = "n=0; trap 'n=$((n+1))' USR1; kill -USR1 0; \
                  i=0; while [ $i -lt 200 ]; do i=$((i+1)); done; echo $n";
    let out = std::process::Command::new(support::bin())
        .args(["--", "sh", "-c", script])
        .current_dir(&dir)
        .process_group(0)
        .output()
        .expect("fdtable-run runs");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n", "{out:?}");
}

#[test]
fn the_counters_are_written_when_the_callers_wait_returns() {
    // `--stats` is complete once the program's process has been reaped (the supervisor,
    // which outlives it, writes the file at the last exit): nothing here waits for the
    // supervisor (no pipe it holds).
    let dir = support::scratch("stats-at-exit");
    for round in 0..20 {
        let stats = dir.join(format!("stats{round}.json"));
        let status = std::process::Command::new(support::bin())
            .args(["--stats", stats.to_str().unwrap(), "--"])
            .args(["sh", "-c", "true | cat; exit 7"])
            .current_dir(&dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("fdtable-run runs");
        assert_eq!(status.code(), Some(7));
        let s = support::stats_json(&stats);
        assert!(s["tasks"].as_u64().unwrap() >= 3, "{s}");
        assert_eq!(s["supervisor_fds_start"], s["supervisor_fds_end"], "{s}");
    }
}

#[test]
fn the_supervisor_does_not_hold_the_callers_directory() {
    // The supervisor kept the directory `fdtable run` was started in, so the program could
    // not unmount it (EBUSY; round 12 of the red team). The program names its tracer and
    // waits; its directory is read from outside (root only: the supervisor is not dumpable).
    use std::io::{BufRead, Write};
    let dir = support::scratch("sup-cwd");
    let mut run = std::process::Command::new(support::bin())
        .args([
            "--",
            "sh",
            "-c",
            "sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$$/status; read x",
        ])
        .current_dir(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("fdtable-run starts");
    let mut out = std::io::BufReader::new(run.stdout.take().expect("a pipe"));
    let mut line = String::new();
    out.read_line(&mut line).expect("the program writes");
    let sup: i32 = line.trim().parse().expect("a tracer");
    let cwd = std::fs::read_link(format!("/proc/{sup}/cwd"));
    let _ = run.stdin.take().expect("a pipe").write_all(b"\n");
    assert!(run.wait().expect("wait").success());
    match cwd {
        Ok(cwd) => assert_eq!(cwd, std::path::Path::new("/")),
        Err(e) => eprintln!("skipped: the supervisor's directory cannot be read here: {e}"),
    }
}

#[test]
fn the_programs_speculation_controls_are_its_native_ones() {
    // The supervisor's filter must not switch the speculative store bypass mitigation on for
    // the program (`SECCOMP_FILTER_FLAG_SPEC_ALLOW`): on kernels booted with
    // `spec_store_bypass_disable=seccomp` (the default until 5.16) every filtered task would
    // otherwise run "force mitigated", slower in all its work, where natively it is not. On a
    // kernel in `prctl` mode both runs read the same line whatever the flag.
    let r = same(
        "speculation",
        &["sh", "-c", "grep '^Specul' /proc/self/status || echo none"],
        &[],
        |_| {},
    );
    if r.stdout.trim() == "none" {
        eprintln!("skipped: this kernel reports no speculation controls");
    }
}

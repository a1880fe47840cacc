//! Hostile programs, one per way a program once escaped a translating supervisor: the kernel
//! reporting numbers back (`siginfo.si_fd`, `/proc/<tid>/syscall`, the program's own seccomp
//! filter), paths to descriptors (`/proc/<pid>/fd`, `/proc/thread-self`, `openat2` resolve
//! flags, a procfs of its own, `open_tree`, `chroot("/proc")`, a non-dumpable program),
//! another thread rewriting a path mid-call, a path in memory the supervisor cannot read
//! (`memfd_secret`), descriptors inside structures (`NS_MNT_GET_NEXT`, `TIOCGPTPEER`),
//! descriptors made outside whose `read()` installs descriptors (a userfaultfd with fork
//! events, a fanotify group), and
//! the supervisor itself, also from threads whose table is not their leader's. Each runs natively and under `fdtable run --check-tables` with the
//! same output, or, where the supervisor is concerned, every attempt refused.

mod support;

use support::{build_dir, cc, native, same, scratch, stats_json, under};

/// The probe, compiled once for every test of this file (they run in parallel).
fn probe() -> Option<String> {
    static P: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    P.get_or_init(|| cc("probe_hostile.c", &build_dir()).map(|p| p.to_str().unwrap().to_string()))
        .clone()
}

#[test]
fn numbers_the_kernel_reports_are_the_programs() {
    let Some(p) = probe() else { return };
    let r = same("hostile-report", &[&p, "report"], &[], |_| {});
    assert!(
        r.stdout.contains("si_fd is the program's number: 1"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("syscall shows read(50): 1"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("dup2 onto 60: Permission denied; dup2 onto 61: ok"),
        "{}",
        r.stdout
    );
}

#[test]
fn every_path_to_a_descriptor_is_the_kernels() {
    let Some(p) = probe() else { return };
    let r = same("hostile-paths", &[&p, "paths"], &[], |_| {});
    for line in [
        "/proc/self/fd/N: 1",
        "/proc/PID/fd/N: 1",
        "/proc/thread-self/fd/N: 1",
    ] {
        assert!(r.stdout.contains(line), "{line}: {}", r.stdout);
    }
    assert!(r.stdout.contains("non-dumpable exec: 0"), "{}", r.stdout);
}

#[test]
fn a_path_rewritten_mid_call_changes_nothing() {
    let Some(p) = probe() else { return };
    let r = same("hostile-race", &[&p, "race"], &[], |_| {});
    assert!(
        r.stdout.contains("2000 in all; next descriptor"),
        "{}",
        r.stdout
    );
}

#[test]
fn memory_the_supervisor_cannot_read() {
    let Some(p) = probe() else { return };
    same("hostile-memory", &[&p, "memory"], &[], |_| {});
}

#[test]
fn a_task_clone3_made_untraced_is_killed_with_what_it_made() {
    let Some(p) = cc("probe_untraced3.c", &build_dir()) else {
        return;
    };
    let p = p.to_str().unwrap();
    // clone3 reads CLONE_UNTRACED from memory the supervisor does not read: the new task is
    // found when the caller's next call settles the clone3, and killed. A stray that forked
    // at once ran on: only the caller's threads and their children were searched. One made a
    // child of the caller's parent (CLONE_PARENT) is not searched for among that parent's
    // other children (they are not the program's): it is killed at its first call that
    // reaches the supervisor (the probe's strays open /dev/null every 100 ms).
    for v in ["plain", "fork", "parent"] {
        let dir = scratch(&format!("hostile-untraced3-{v}"));
        let n = native(&[p, v], &dir, &[]);
        assert_eq!(n.stdout, "stray: running\n", "{v}: {n:?}");
        let r = under(&[], &[p, v], &dir, &[]);
        assert_eq!(r.stdout, "stray: killed\n", "{v}: {}", r.stderr);
        assert!(
            r.notes().iter().any(|l| l.contains("was created untraced")),
            "{v}: {}",
            r.stderr
        );
    }
}

#[test]
fn descriptors_inside_structures_and_untraced_clones() {
    let Some(p) = probe() else { return };
    let dir = scratch("hostile-hidden");
    let n = native(&[&p, "hidden"], &dir, &[]);
    let stats = dir.join("stats.json");
    let r = under(
        &["--check-tables", "--stats", stats.to_str().unwrap()],
        &[&p, "hidden"],
        &dir,
        &[],
    );
    // The same, but CLONE_UNTRACED, which is refused by name.
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with("clone(CLONE_UNTRACED)"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&n.stdout), strip(&r.stdout), "{}", r.stderr);
    assert!(
        n.stdout.contains("clone(CLONE_UNTRACED): ok"),
        "{}",
        n.stdout
    );
    assert!(
        r.stdout
            .contains("clone(CLONE_UNTRACED): Operation not permitted"),
        "{}",
        r.stdout
    );
    assert!(
        r.notes()
            .iter()
            .any(|l| l.contains("refused clone(CLONE_UNTRACED)")),
        "{}",
        r.stderr
    );
    assert_eq!(stats_json(&stats)["table_mismatches"], 0);
}

#[test]
fn the_supervisor_is_out_of_reach() {
    let Some(p) = probe() else { return };
    let dir = scratch("hostile-supervisor");
    let n = native(&[&p, "supervisor"], &dir, &[]);
    assert_eq!(n.stdout, "supervisors found: 0; kill(-1, 0): ok\n");
    let r = under(&[], &[&p, "supervisor"], &dir, &[]);
    assert_eq!(r.code, Some(0), "{r:#?}");
    assert_eq!(
        r.stdout,
        "kill SIGSTOP: Operation not permitted\n\
         kill group: Operation not permitted\n\
         tgkill: Operation not permitted\n\
         pidfd_open: Operation not permitted\n\
         process_vm_readv: Operation not permitted\n\
         prlimit: Operation not permitted\n\
         its descriptors opened through /proc: 0\n\
         its memory: Permission denied\n\
         pidfd_send_signal on /proc/PID: Operation not permitted\n\
         pidfd_send_signal on a number another thread just dup2'd: Operation not permitted\n\
         F_SETOWN: Operation not permitted\n\
         F_SETOWN group: Operation not permitted\n\
         F_SETOWN_EX: Operation not permitted\n\
         FIOSETOWN: Operation not permitted\n\
         SIOCSPGRP: Operation not permitted\n\
         its threads reached by tkill or prlimit64: 0\n\
         setpriority(PRIO_USER): Operation not permitted\n\
         supervisors found: 1; kill(-1, 0): ok\n",
        "{}",
        r.stderr
    );
}

#[test]
fn the_programs_parent_may_be_signalled_through_a_pidfd_as_by_kill() {
    let Some(p) = probe() else { return };
    let r = same("hostile-parent", &[&p, "parent"], &[], |_| {});
    assert_eq!(
        r.stdout,
        "pidfd_send_signal to the parent: ok\nthrough /proc/<parent>: ok\nkill of the parent: ok\n"
    );
}

#[test]
fn look_alikes_and_bits_the_kernel_sets_itself() {
    let Some(p) = probe() else { return };
    let r = same("hostile-lookalike", &[&p, "lookalike"], &[], |_| {});
    assert!(
        r.stdout
            .contains("pidfd_send_signal on a directory with a FIFO stat: Bad file descriptor"),
        "{}",
        r.stdout
    );
}

#[test]
fn an_owner_named_in_a_pid_namespace_of_the_programs_is_refused() {
    let Some(p) = probe() else { return };
    let dir = scratch("hostile-pidns");
    let n = native(&[&p, "pidns"], &dir, &[]);
    if n.stdout.starts_with("unshare:") {
        eprintln!("SKIPPED: no user namespaces here: {}", n.stdout);
        return;
    }
    assert_eq!(
        n.stdout,
        "F_SETOWN_EX of pid 1 in a pid namespace: ok, owner 1\n\
         kill(-1) in a pid namespace: ok, its other process killed: 1\n"
    );
    let r = under(&["--check-tables"], &[&p, "pidns"], &dir, &[]);
    // The supervisor would have set its own pid 1 (init) as the owner: refused by name.
    assert_eq!(
        r.stdout,
        "F_SETOWN_EX of pid 1 in a pid namespace: Operation not permitted, owner 0\n\
         kill(-1) in a pid namespace: ok, its other process killed: 1\n",
        "{}",
        r.stderr
    );
    assert!(
        r.notes().iter().any(|l| l.contains("F_SETOWN_EX")),
        "{}",
        r.stderr
    );
}

/// Threads whose table is not their leader's (an unshared one; a leader that has exited):
/// what the supervisor looks up for them is read from their own table.
fn thread_table_probe() -> Option<String> {
    static P: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        cc("probe_thread_table.c", &build_dir()).map(|p| p.to_str().unwrap().to_string())
    })
    .clone()
}

#[test]
fn a_thread_with_a_table_of_its_own_cannot_signal_the_supervisor() {
    let Some(p) = thread_table_probe() else {
        return;
    };
    let dir = scratch("thread-table-signal");
    // Through the leader's table the number was /dev/null (or nothing, the leader gone),
    // so SIGKILL reached the supervisor.
    for (mode, fd, after) in [
        ("signal", 3, "leader: open after: 4"),
        ("zombie-signal", 4, "open after: 5"),
    ] {
        let n = native(&[&p, mode, "9"], &dir, &[]);
        assert_eq!(
            n.stdout,
            format!("pidfd_send_signal at {fd}: sent\n{after}\n")
        );
        let r = under(&["--check-tables"], &[&p, mode, "9"], &dir, &[]);
        assert_eq!(r.code, Some(0), "{r:#?}");
        assert_eq!(
            r.stdout,
            format!("pidfd_send_signal at {fd}: Operation not permitted\n{after}\n"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn owners_and_received_descriptors_of_a_thread_with_a_table_of_its_own() {
    let Some(p) = thread_table_probe() else {
        return;
    };
    // The owner was set on the leader's socket at the same number (or refused with the
    // leader gone); descriptors received on the thread's Unix socket went unrecorded where
    // the leader's number was a UDP socket.
    for mode in ["owner", "zombie-owner", "recv"] {
        same(&format!("thread-table-{mode}"), &[&p, mode], &[], |_| {});
    }
}

#[test]
fn a_clone3_that_made_nothing_leaves_the_callers_other_children_alone() {
    // A clone3 that returns without a clone event sends the supervisor looking for a task it
    // made untraced. Once the program was the caller's own child, the caller's other
    // children were taken for strays and killed: any of them (`sleep`), then those under a
    // seccomp filter of their own (a sandboxed job), whatever their owner (round 12 of the
    // red team). Only the program's own processes are searched now.
    let Some(p) = cc("probe_clone3_fail.c", &build_dir()) else {
        return;
    };
    let dir = scratch("clone3-fail");
    for job in [
        "sh -c 'echo ready; exec sleep 60'",
        &format!("{} sandboxed", p.display()),
    ] {
        let script = format!(
            "rm -f ready; {job} > ready & bg=$!; while [ ! -s ready ] && kill -0 $bg 2>/dev/null; do :; done; \
             {} -- {}; \
             if kill -0 $bg 2>/dev/null; then echo alive; else echo killed; fi; kill $bg; wait",
            support::bin().display(),
            p.display()
        );
        let r = native(&["sh", "-c", &script], &dir, &[]);
        assert_eq!(
            r.stdout,
            "clone3(NULL, 0) = -1 EINVAL\nclone3(NULL, 8) = -1 EINVAL\n\
             clone3(NULL, 64) = -1 EFAULT\ndone\nalive\n",
            "{job}: {r:#?}"
        );
        assert!(!r.stderr.contains("killed"), "{job}: {}", r.stderr);
    }
}

#[test]
fn a_descriptor_whose_read_installs_descriptors_from_outside_is_refused() {
    // read() of a userfaultfd with fork events, or of a fanotify group whose events carry
    // descriptors, installs descriptors in the reader's table, and read() runs unseen. The
    // program cannot make either (refused), but one made outside reached it: inherited at
    // start, or sent at run time by an unsupervised process, its read() put numbers the
    // library never gave in the table (round 17 of the red team). One inherited is now
    // refused by `fdtable run` (125, naming it); one received kills the processes using the
    // table, with a note, when the library adopts its number (the receiving task's next
    // call, or the table read whole from the kernel), and a child that copied the table.
    let Some(p) = cc("probe_foreign.c", &build_dir()) else {
        return;
    };
    let p = p.to_str().unwrap().to_string();
    let bin = support::bin();
    let bin = bin.to_str().unwrap();
    let dir = scratch("foreign");
    for kind in ["uffd", "fanotify"] {
        let r = native(&[&p, "outer", kind, bin, "--", &p, "receive"], &dir, &[]);
        if r.stdout.starts_with("unsupported") {
            // fanotify groups of this kind need CAP_SYS_ADMIN.
            assert!(kind == "fanotify" || !support::strict(), "{kind}: {r:#?}");
            continue;
        }
        assert_eq!(r.code, Some(125), "{kind}: {r:#?}");
        assert!(
            r.stderr.contains("descriptor 3 is a ") && r.stderr.contains("close it"),
            "{kind}: {}",
            r.stderr
        );
        let n = native(&[&p, "sender", kind, &p, "receive"], &dir, &[]);
        assert_eq!(n.stdout, "received 4\nopen: 5\nexit 0\n", "{kind}: {n:#?}");
        let r = native(&[&p, "sender", kind, bin, "--", &p, "receive"], &dir, &[]);
        assert_eq!(
            r.stdout, "received 4\nkilled by signal 9\n",
            "{kind}: {r:#?}"
        );
        assert!(
            r.stderr.contains("refused descriptor 4 received by task"),
            "{kind}: {}",
            r.stderr
        );
        // Another thread executes as soon as it is installed, while the receiving thread's
        // call is not settled yet: the exec's table, read from the kernel, has it (round 18:
        // the new image ran and read it).
        let n = native(&[&p, "sender", kind, &p, "receive-exec"], &dir, &[]);
        assert_eq!(n.stdout, "executed, open: 5\nexit 0\n", "{kind}: {n:#?}");
        let r = native(
            &[&p, "sender", kind, bin, "--", &p, "receive-exec"],
            &dir,
            &[],
        );
        assert_eq!(r.stdout, "killed by signal 9\n", "{kind}: {r:#?}");
        // A fork right after receiving it (the fork's event settles the receive): the child,
        // with a copy of the table, ran and could read it (round 18); it is killed too.
        let n = native(&[&p, "sender", kind, &p, "receive-fork"], &dir, &[]);
        assert_eq!(
            n.stdout, "child open: 5\nchild exit 0\nexit 0\n",
            "{kind}: {n:#?}"
        );
        let r = native(
            &[&p, "sender", kind, bin, "--", &p, "receive-fork"],
            &dir,
            &[],
        );
        assert_eq!(r.stdout, "killed by signal 9\n", "{kind}: {r:#?}");
        assert!(
            r.stderr.contains("holding a refused descriptor; killed"),
            "{kind}: {}",
            r.stderr
        );
        // Another thread forks as soon as it is installed, while the receiving thread's call
        // is not settled: the child's copy is read from the kernel and refused, and the
        // parent, whose table holds the same description at that number, was left running
        // until its own receive settled (round 19); it is killed with the child now.
        let n = native(&[&p, "sender", kind, &p, "receive-thread-fork"], &dir, &[]);
        assert_eq!(
            n.stdout, "child open: 5\nchild exit 0\nexit 0\n",
            "{kind}: {n:#?}"
        );
        let r = native(
            &[&p, "sender", kind, bin, "--", &p, "receive-thread-fork"],
            &dir,
            &[],
        );
        assert_eq!(r.stdout, "killed by signal 9\n", "{kind}: {r:#?}");
    }
}

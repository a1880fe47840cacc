use super::*;
use fdtable_syscalls::consts;

fn prog() -> Vec<Insn> {
    program(&Context {
        supervisor: vec![4242, 4243],
        dumpable: false,
        notify_processes: false,
    })
}

fn ev(p: &[Insn], nr: i64, args: [u64; 6]) -> u32 {
    evaluate(p, AUDIT_ARCH_X86_64, nr as u32, args)
}

#[test]
fn every_number_gets_what_the_catalogue_says() {
    let p = prog();
    assert!(p.len() < 4096, "{} instructions", p.len());
    for nr in 0..600u32 {
        let r = evaluate(&p, AUDIT_ARCH_X86_64, nr, [0; 6]);
        let Some(s) = cat::by_nr(nr as u64) else {
            assert_eq!(r, RET_NOTIFY, "unknown {nr}");
            continue;
        };
        let want = match s.effect {
            Effect::None | Effect::Obsolete | Effect::Fork | Effect::Vfork => RET_ALLOW,
            // An exec is settled at the task's next stop unless it has exec events.
            Effect::Clone3 | Effect::Exec => RET_NOTIFY,
            _ => continue,
        };
        if policy::notified(s)
            || matches!(
                s.name,
                "kill" | "prctl" | "pidfd_open" | "setpriority" | "ioprio_set"
            )
        {
            continue;
        }
        assert_eq!(r, want, "{}", s.name);
    }
    // Calls that change or report a table reach the supervisor.
    for nr in [
        libc::SYS_openat,
        libc::SYS_close,
        libc::SYS_dup,
        libc::SYS_dup2,
        libc::SYS_dup3,
        libc::SYS_pipe2,
        libc::SYS_socket,
        libc::SYS_accept4,
        libc::SYS_recvmsg,
        libc::SYS_close_range,
        libc::SYS_io_uring_setup,
        libc::SYS_ptrace,
        libc::SYS_pidfd_getfd,
    ] {
        assert_eq!(ev(&p, nr, [0; 6]), RET_NOTIFY, "{nr}");
    }
    // Calls that only use descriptors or paths, and the process lifecycle, run untraced.
    for nr in [
        libc::SYS_read,
        libc::SYS_write,
        libc::SYS_fstat,
        libc::SYS_newfstatat,
        libc::SYS_getdents64,
        libc::SYS_mmap,
        libc::SYS_poll,
        libc::SYS_sendmsg,
        libc::SYS_epoll_ctl,
        libc::SYS_fork,
        libc::SYS_io_setup,
        libc::SYS_io_submit,
        libc::SYS_getpid,
        libc::SYS_kcmp,
    ] {
        assert_eq!(ev(&p, nr, [0; 6]), RET_ALLOW, "{nr}");
    }
    // clone3 reaches the supervisor (its flags are in memory); so do other ABIs' calls,
    // which it refuses with a note (their numbers mean other calls), even those whose
    // x86_64 number is allowed (i386's 20 is getpid, x86_64's 20 writev).
    assert_eq!(ev(&p, libc::SYS_clone3, [0; 6]), RET_NOTIFY);
    assert_eq!(
        evaluate(&p, AUDIT_ARCH_X86_64, 0x4000_0000 | 2, [0; 6]),
        RET_NOTIFY
    );
    assert_eq!(evaluate(&p, 0x4000_0003, 20, [0; 6]), RET_NOTIFY);
    assert_eq!(evaluate(&p, AUDIT_ARCH_X86_64, 20, [0; 6]), RET_ALLOW);
}

#[test]
fn commands_and_arguments() {
    let p = prog();
    let f = libc::SYS_fcntl;
    for (cmd, want) in [
        (libc::F_DUPFD, RET_NOTIFY),
        (libc::F_DUPFD_CLOEXEC, RET_NOTIFY),
        (libc::F_GETFD, RET_NOTIFY),
        (libc::F_SETFD, RET_NOTIFY),
        (libc::F_GETFL, RET_ALLOW),
        (libc::F_SETLK, RET_ALLOW),
        (1027, RET_ALLOW),
    ] {
        assert_eq!(ev(&p, f, [3, cmd as u64, 0, 0, 0, 0]), want, "fcntl {cmd}");
    }
    let i = libc::SYS_ioctl;
    for (cmd, want) in [
        (0x5401u64, RET_ALLOW),     // TCGETS
        (0x541b, RET_ALLOW),        // FIONREAD
        (0x5451, RET_NOTIFY),       // FIOCLEX
        (0x5450, RET_NOTIFY),       // FIONCLEX
        (0x5441, RET_NOTIFY),       // TIOCGPTPEER
        (0x8010_b70b, RET_NOTIFY),  // NS_MNT_GET_NEXT
        (0x4004_9409, RET_ALLOW),   // FICLONE
        (0x2405, RET_ALLOW),        // PERF_EVENT_IOC_SET_OUTPUT
        (0xae80, RET_ALLOW),        // KVM_RUN
        (0xae01, RET_NOTIFY),       // KVM_CREATE_VM
        (0xc010_642d, RET_NOTIFY),  // a DRM command: may install descriptors
        (0x8912, RET_ALLOW),        // SIOCGIFCONF
        (0x89df, RET_ALLOW),        // below SIOCPROTOPRIVATE
        (0x89e0, RET_NOTIFY),       // SIOCPROTOPRIVATE (KCM's SIOCKCMATTACH)
        (0x89e2, RET_NOTIFY),       // SIOCKCMCLONE: installs a descriptor
        (0x89ff, RET_NOTIFY),       // the last of SIOCDEVPRIVATE
        (0x1_0000_5401, RET_ALLOW), // high bits are not the command's
    ] {
        assert_eq!(ev(&p, i, [3, cmd, 0, 0, 0, 0]), want, "ioctl {cmd:#x}");
    }
    // RLIMIT_NOFILE with a new value.
    let pl = libc::SYS_prlimit64;
    assert_eq!(ev(&p, pl, [0, 7, 0x7ffe_0000, 0, 0, 0]), RET_NOTIFY);
    assert_eq!(ev(&p, pl, [0, 7, 0x7ffe_0000_0000, 0, 0, 0]), RET_NOTIFY);
    assert_eq!(ev(&p, pl, [0, 7, 0, 0x7ffe, 0, 0]), RET_ALLOW);
    assert_eq!(ev(&p, pl, [0, 3, 0x7ffe, 0, 0, 0]), RET_ALLOW);
    assert_eq!(
        ev(&p, pl, [4242, 7, 0, 0x7ffe, 0, 0]),
        ret_errno(libc::EPERM)
    );
    assert_eq!(ev(&p, libc::SYS_setrlimit, [7, 1, 0, 0, 0, 0]), RET_NOTIFY);
    assert_eq!(ev(&p, libc::SYS_setrlimit, [3, 1, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(ev(&p, libc::SYS_getrlimit, [7, 1, 0, 0, 0, 0]), RET_ALLOW);
    // clone: CLONE_PIDFD and CLONE_UNTRACED reach the supervisor.
    let c = libc::SYS_clone;
    assert_eq!(ev(&p, c, [0x11, 0, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(
        ev(&p, c, [consts::CLONE_PIDFD | 0x11, 0, 0, 0, 0, 0]),
        RET_NOTIFY
    );
    assert_eq!(
        ev(&p, c, [consts::CLONE_UNTRACED | 0x11, 0, 0, 0, 0, 0]),
        RET_NOTIFY
    );
    assert_eq!(
        ev(&p, libc::SYS_unshare, [0x400, 0, 0, 0, 0, 0]),
        RET_NOTIFY
    );
    assert_eq!(
        ev(&p, libc::SYS_unshare, [0x20000, 0, 0, 0, 0, 0]),
        RET_ALLOW
    );
    // Conditional creations from the catalogue.
    let sock = libc::SYS_getsockopt;
    assert_eq!(ev(&p, sock, [3, 1, 77, 0, 0, 0]), RET_NOTIFY);
    assert_eq!(ev(&p, sock, [3, 1, 4, 0, 0, 0]), RET_ALLOW);
    assert_eq!(ev(&p, sock, [3, 6, 77, 0, 0, 0]), RET_ALLOW);
    assert_eq!(
        ev(&p, libc::SYS_signalfd4, [u32::MAX as u64, 0, 8, 0, 0, 0]),
        RET_NOTIFY
    );
    assert_eq!(ev(&p, libc::SYS_signalfd4, [5, 0, 8, 0, 0, 0]), RET_ALLOW);
    assert_eq!(ev(&p, libc::SYS_bpf, [0, 0, 0, 0, 0, 0]), RET_NOTIFY);
    assert_eq!(ev(&p, libc::SYS_bpf, [1, 0, 0, 0, 0, 0]), RET_ALLOW);
    // BPF_PROG_TEST_RUN: a syscall program may create and close descriptors.
    assert_eq!(ev(&p, libc::SYS_bpf, [10, 0, 0, 0, 0, 0]), RET_NOTIFY);
    assert_eq!(ev(&p, libc::SYS_seccomp, [1, 8, 0, 0, 0, 0]), RET_NOTIFY);
    assert_eq!(ev(&p, libc::SYS_seccomp, [1, 0, 0, 0, 0, 0]), RET_ALLOW);
    let ll = libc::SYS_landlock_create_ruleset;
    assert_eq!(ev(&p, ll, [0, 0, 1, 0, 0, 0]), RET_ALLOW);
    assert_eq!(ev(&p, ll, [0x7ffe, 16, 0, 0, 0, 0]), RET_NOTIFY);
}

#[test]
fn the_supervisor_is_out_of_reach() {
    let p = prog();
    let deny = ret_errno(libc::EPERM);
    for (nr, args) in [
        (libc::SYS_kill, [4242, 19, 0, 0, 0, 0]),
        (libc::SYS_kill, [(-4242i64) as u64, 9, 0, 0, 0, 0]),
        (libc::SYS_tkill, [4243, 19, 0, 0, 0, 0]),
        (libc::SYS_tgkill, [4242, 4243, 9, 0, 0, 0]),
        (libc::SYS_tgkill, [1, 4243, 9, 0, 0, 0]),
        (libc::SYS_rt_sigqueueinfo, [4242, 9, 0, 0, 0, 0]),
        (libc::SYS_rt_tgsigqueueinfo, [4242, 4242, 9, 0, 0, 0]),
        (libc::SYS_pidfd_open, [4242, 0, 0, 0, 0, 0]),
        (libc::SYS_process_vm_readv, [4242, 0, 0, 0, 0, 0]),
        (libc::SYS_process_vm_writev, [4242, 0, 0, 0, 0, 0]),
        (libc::SYS_prlimit64, [4242, 7, 0, 0, 0, 0]),
        (libc::SYS_sched_setaffinity, [4243, 0, 0, 0, 0, 0]),
        (libc::SYS_setpriority, [0, 4242, 19, 0, 0, 0]),
    ] {
        assert_eq!(ev(&p, nr, args), deny, "{nr} {args:?}");
    }
    assert_eq!(
        ev(&p, libc::SYS_kill, [u32::MAX as u64, 15, 0, 0, 0, 0]),
        RET_NOTIFY
    );
    assert_eq!(ev(&p, libc::SYS_kill, [4000, 15, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(ev(&p, libc::SYS_kill, [0, 15, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(
        ev(&p, libc::SYS_pidfd_open, [4000, 0, 0, 0, 0, 0]),
        RET_NOTIFY
    );
    assert_eq!(
        ev(&p, libc::SYS_tgkill, [4000, 4001, 9, 0, 0, 0]),
        RET_ALLOW
    );
    // The dumpable flag reaches the supervisor only when it keeps it.
    let d = program(&Context {
        supervisor: vec![1],
        dumpable: true,
        notify_processes: false,
    });
    assert_eq!(ev(&d, libc::SYS_prctl, [4, 0, 0, 0, 0, 0]), RET_NOTIFY);
    assert_eq!(ev(&p, libc::SYS_prctl, [4, 0, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(ev(&d, libc::SYS_prctl, [15, 0, 0, 0, 0, 0]), RET_ALLOW);
}

#[test]
fn fork_calls_are_notified_only_for_the_untraced_floor() {
    let p = prog();
    let u = program(&Context {
        supervisor: vec![1],
        dumpable: false,
        notify_processes: true,
    });
    for nr in [
        libc::SYS_fork,
        libc::SYS_vfork,
        libc::SYS_clone,
        libc::SYS_clone3,
        libc::SYS_execve,
        libc::SYS_execveat,
    ] {
        assert_eq!(ev(&u, nr, [0; 6]), RET_NOTIFY, "{nr}");
    }
    assert_eq!(ev(&p, libc::SYS_fork, [0; 6]), RET_ALLOW);
    assert_eq!(ev(&p, libc::SYS_vfork, [0; 6]), RET_ALLOW);
    // Exec is notified in both: the supervisor settles it without a ptrace event.
    assert_eq!(ev(&p, libc::SYS_execve, [0; 6]), RET_NOTIFY);
    assert_eq!(ev(&p, libc::SYS_execveat, [0; 6]), RET_NOTIFY);
    assert_eq!(
        ev(&p, libc::SYS_clone, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]),
        RET_ALLOW
    );
    // Everything else is decided as in the real filter.
    assert_eq!(
        ev(&u, libc::SYS_read, [0; 6]),
        ev(&p, libc::SYS_read, [0; 6])
    );
    assert_eq!(ev(&u, libc::SYS_dup, [0; 6]), ev(&p, libc::SYS_dup, [0; 6]));
}

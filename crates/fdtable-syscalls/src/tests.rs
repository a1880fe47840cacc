use crate::*;

#[test]
fn every_number_once_ascending() {
    assert!(SYSCALLS.windows(2).all(|w| w[0].nr < w[1].nr));
    let mut want = (0..=336).chain(424..NR_END);
    for s in SYSCALLS {
        assert_eq!(Some(s.nr), want.next(), "{}", s.name);
    }
    assert_eq!(want.next(), None);
    assert_eq!(by_nr(0).map(|s| s.name), Some("read"));
    assert_eq!(by_nr(469).map(|s| s.name), Some("file_setattr"));
    assert_eq!(by_nr(470).map(|s| s.name), Some("listns"));
    assert!(by_nr(400).is_none() && by_nr(471).is_none());
    assert_eq!(by_name("openat").map(|s| s.nr), Some(257));
    // Names are unique.
    for (i, a) in SYSCALLS.iter().enumerate() {
        assert!(
            SYSCALLS[i + 1..].iter().all(|b| b.name != a.name),
            "{}",
            a.name
        );
    }
}

#[test]
fn conditions() {
    let sig = by_name("signalfd4").unwrap();
    let Effect::CreateIf(conds, _) = sig.effect else {
        panic!()
    };
    assert!(all_hold(conds, &[u32::MAX as u64, 0, 8, 0, 0, 0]));
    assert!(all_hold(conds, &[u64::MAX, 0, 8, 0, 0, 0]));
    assert!(!all_hold(conds, &[3, 0, 8, 0, 0, 0]));
    let Effect::CreateIf(conds, c) = by_name("getsockopt").unwrap().effect else {
        panic!()
    };
    assert!(all_hold(conds, &[3, 1, 77, 0, 0, 0]));
    assert!(!all_hold(conds, &[3, 6, 77, 0, 0, 0]));
    assert!(!all_hold(conds, &[3, 1, 4, 0, 0, 0]));
    assert_eq!(c.count, Count::OneAt(3));
    let Effect::CreateIf(conds, _) = by_name("bpf").unwrap().effect else {
        panic!()
    };
    assert!(all_hold(conds, &[0, 0, 0, 0, 0, 0]));
    assert!(!all_hold(conds, &[1, 0, 0, 0, 0, 0]));
    assert!(bpf::creates(36) && !bpf::creates(6) && bpf::creates_named("BPF_PROG_LOAD"));
    assert!(bpf::runs_program(10) && !bpf::runs_program(0) && !bpf::creates(10));
    let Effect::CreateIf(conds, _) = by_name("landlock_create_ruleset").unwrap().effect else {
        panic!()
    };
    assert!(all_hold(conds, &[1, 16, 0, 0, 0, 0]));
    assert!(!all_hold(conds, &[0, 0, 1, 0, 0, 0]));
    assert!(!all_hold(conds, &[0, 0, 2, 0, 0, 0]));
}

#[test]
fn commands() {
    assert!(fcntl::touches_table(0) && fcntl::touches_table(1030) && fcntl::touches_table(1));
    assert!(!fcntl::touches_table(3) && !fcntl::touches_table(1027) && !fcntl::touches_table(999));
    assert_eq!(fcntl::by_name("F_DUPFD_QUERY").map(|c| c.cmd), Some(1027));
    for (i, a) in fcntl::COMMANDS.iter().enumerate() {
        assert!(
            fcntl::COMMANDS[i + 1..]
                .iter()
                .all(|b| b.cmd != a.cmd && b.name != a.name)
        );
    }
    for (i, a) in ioctl::COMMANDS.iter().enumerate() {
        assert!(
            ioctl::COMMANDS[i + 1..]
                .iter()
                .all(|b| b.cmd != a.cmd && b.name != a.name)
        );
    }
    // Terminal ioctls only use their descriptor, except the ones that create or change
    // close-on-exec bits.
    assert!(ioctl::use_only(0x5401) && ioctl::use_only(0x541b) && ioctl::use_only(0x4004_9409));
    assert!(!ioctl::use_only(0x5441) && !ioctl::use_only(0x5451) && !ioctl::use_only(0x894c));
    assert!(ioctl::use_only(0xae80) && !ioctl::use_only(0xae01));
    // SIOCKCMCLONE and the rest of the protocol- and device-private socket commands.
    assert!(!ioctl::use_only(0x89e2) && !ioctl::use_only(0x89f0) && ioctl::use_only(0x8912));
    // An unknown type (DRM) may create descriptors.
    assert!(!ioctl::use_only(0xc010_642d));
    assert_eq!(ioctl::type_of(0x8010_b70b), 0xb7);
}

#[test]
fn fanotify_groups() {
    use consts::*;
    // FAN_CLASS_NOTIF | FAN_REPORT_FID: file handles, no descriptors.
    assert!(!fanotify_read_installs(0x200));
    assert!(!fanotify_read_installs(0x200 | 0x400 | 0x800 | 1));
    // No info mode, a content class, or pidfds: descriptors.
    assert!(fanotify_read_installs(0));
    assert!(fanotify_read_installs(0x200 | 0x4));
    assert!(fanotify_read_installs(0x200 | 0x80));
}

#[test]
fn creating_calls_say_where_their_close_on_exec_bit_comes_from() {
    for s in SYSCALLS {
        let c = match s.effect {
            Effect::Create(c) | Effect::CreateIf(_, c) => c,
            _ => continue,
        };
        match c.cloexec {
            Cloexec::Flag { arg, bit, name } => {
                assert!(
                    arg < 6 && bit != 0 && name.ends_with("CLOEXEC"),
                    "{}",
                    s.name
                )
            }
            Cloexec::Field { arg, .. } => assert!(arg < 6, "{}", s.name),
            Cloexec::Never | Cloexec::Always => {}
        }
    }
}

#[test]
fn numbers_match_libc() {
    for (n, name) in [
        (libc::SYS_read, "read"),
        (libc::SYS_openat, "openat"),
        (libc::SYS_close_range, "close_range"),
        (libc::SYS_pidfd_getfd, "pidfd_getfd"),
        (libc::SYS_clone3, "clone3"),
        (libc::SYS_io_uring_setup, "io_uring_setup"),
        (libc::SYS_fchmodat2, "fchmodat2"),
        (libc::SYS_mseal, "mseal"),
        (libc::SYS_recvmmsg, "recvmmsg"),
        (libc::SYS_epoll_pwait2, "epoll_pwait2"),
        (libc::SYS_memfd_secret, "memfd_secret"),
        (libc::SYS_futex_waitv, "futex_waitv"),
        (libc::SYS_landlock_create_ruleset, "landlock_create_ruleset"),
        (libc::SYS_process_mrelease, "process_mrelease"),
        (libc::SYS_seccomp, "seccomp"),
        (libc::SYS_userfaultfd, "userfaultfd"),
    ] {
        assert_eq!(by_nr(n as u64).map(|s| s.name), Some(name));
    }
}

//! Cases found by recording programs outside the 25-log corpus (`fdtable record` on ptys,
//! namespaces, KVM, `go build`, valgrind, cmake): each is a small log written here in the
//! shape strace 6.1 printed, and each test also shows the replay failing when the rule is
//! broken, so none can pass by accident.

use fdtable_replay::parse::Source;
use fdtable_replay::replay::{Options, replay};
use fdtable_replay::stats::Stats;

fn run(log: &str) -> Stats {
    let text: String = log
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    let opts = Options {
        initial_fds: Some(vec![0, 1, 2]),
        nofile: Some(1024),
    };
    replay(
        &Source::bytes("test", text.into_bytes()),
        None,
        &opts,
        &mut |_, _| {},
    )
    .expect("in-memory log")
    .stats
}

fn clean(s: &Stats) {
    assert_eq!(s.total().mismatched, 0, "{:#?}", s.first_mismatches);
    assert_eq!(s.errors, 0, "{:?}", s.first_errors);
    assert!(s.unsupported.is_empty(), "{:?}", s.unsupported);
}

/// glibc's `openpty` and Python's `pty.openpty` get the slave through `TIOCGPTPEER`, which
/// returns a new descriptor with the flags passed as its argument; namespace, pidfd, KVM and
/// VFIO ioctls return close-on-exec descriptors.
const IOCTL_FDS: &str = r#"
    openat(AT_FDCWD, "/dev/ptmx", O_RDWR) = 3
    ioctl(3, TIOCGPTN, [0]) = 0
    ioctl(3, TIOCSPTLCK, [0]) = 0
    ioctl(3, TIOCGPTPEER, 0x80102) = 4
    fcntl(4, F_GETFD) = 0x1 (flags FD_CLOEXEC)
    ioctl(3, TIOCGPTPEER, O_RDWR|O_NOCTTY) = 5
    fcntl(5, F_GETFD) = 0
    ioctl(0, TIOCGPTPEER, 0x102) = -1 ENOTTY (Inappropriate ioctl for device)
    ioctl(9, TIOCGPTPEER, 0x102) = -1 EBADF (Bad file descriptor)
    openat(AT_FDCWD, "/proc/self/ns/net", O_RDONLY|O_CLOEXEC) = 6
    ioctl(6, NS_GET_USERNS) = 7
    fcntl(7, F_GETFD) = 0x1 (flags FD_CLOEXEC)
    ioctl(6, _IOC(_IOC_NONE, 0xb7, 0x2, 0)) = -1 EPERM (Operation not permitted)
    openat(AT_FDCWD, "/dev/kvm", O_RDWR|O_CLOEXEC) = 8
    ioctl(8, KVM_CREATE_VM, 0) = 9
    ioctl(9, KVM_CREATE_VCPU, 0) = 10
    close(10) = 0
    close(9) = 0
    openat(AT_FDCWD, "/etc/hostname", O_RDONLY) = 9
    ioctl(9, TCGETS, 0x7ffd) = -1 ENOTTY (Inappropriate ioctl for device)
"#;

#[test]
fn ioctls_that_return_descriptors_install_them() {
    let s = run(IOCTL_FDS);
    clean(&s);
    let ioctl = &s.by_syscall["ioctl"];
    // Five new descriptors and one EBADF checked; the rest is the driver's business.
    assert_eq!(ioctl.checked, 6, "{ioctl:?}");
    assert_eq!(ioctl.matched, 6);
    assert_eq!(s.cloexec_bits, 3);
    // A wrong number is caught...
    let wrong = IOCTL_FDS.replace("TIOCGPTPEER, 0x80102) = 4", "TIOCGPTPEER, 0x80102) = 5");
    assert!(run(&wrong).total().mismatched > 0);
    // ...and so is a close-on-exec bit the argument did not ask for.
    let bit = IOCTL_FDS.replace(
        "fcntl(5, F_GETFD) = 0",
        "fcntl(5, F_GETFD) = 0x1 (flags FD_CLOEXEC)",
    );
    assert!(run(&bit).total().mismatched > 0);
}

/// Go's os/exec (and posix_spawn with pidfds) clone with CLONE_PIDFD|CLONE_VFORK: the pidfd
/// is installed in the parent's table before the child runs, and the clone's result line only
/// comes after the child's execve. A sibling thread allocating meanwhile skips the pidfd's
/// number; the child's copy never had it.
const VFORK_PIDFD: &str = r#"
    100 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, exit_signal=0, stack=0x7f, stack_size=0x7fff80} => {parent_tid=[101]}, 88) = 101
    101 clone(child_stack=NULL, flags=CLONE_VM|CLONE_PIDFD|CLONE_VFORK|SIGCHLD <unfinished ...>
    102 openat(AT_FDCWD, "/dev/null", O_RDONLY) = 3
    102 dup2(3, 0) = 0
    100 pipe2([4, 5], O_CLOEXEC) = 0
    102 execve("/bin/true", ["true"], 0x7ffc /* 1 var */ <unfinished ...>
    100 openat(AT_FDCWD, "/etc/hostname", O_RDONLY|O_CLOEXEC) = 6
    102 <... execve resumed>) = 0
    101 <... clone resumed>, parent_tid=[3]) = 102
    101 fcntl(3, F_GETFD) = 0x1 (flags FD_CLOEXEC)
    102 openat(AT_FDCWD, "/etc/passwd", O_RDONLY) = 4
    102 exit_group(0) = ?
    102 +++ exited with 0 +++
    100 close(3) = 0
    100 openat(AT_FDCWD, "/etc/group", O_RDONLY) = 3
"#;

#[test]
fn a_vfork_pidfd_in_flight_holds_its_number_for_sibling_threads() {
    let s = run(VFORK_PIDFD);
    clean(&s);
    assert!(s.reordered >= 1, "the pidfd must be pulled forward");
    // Without CLONE_PIDFD nothing holds 3: the sibling's pipe2 is then wrong.
    let no_pidfd = VFORK_PIDFD
        .replace("CLONE_VM|CLONE_PIDFD|CLONE_VFORK", "CLONE_VM|CLONE_VFORK")
        .replace(", parent_tid=[3]) = 102", ") = 102")
        .replace("101 fcntl(3, F_GETFD) = 0x1 (flags FD_CLOEXEC)\n", "");
    assert!(run(&no_pidfd).total().mismatched > 0);
}

/// A task killed at exit_group inside a call strace cannot name prints `???( ... ) = ?`; a
/// call strace 6.1 knows only by number (`syscall_0x1d3`, open_tree_attr) is still decoded.
#[test]
fn unnamed_calls_of_dying_tasks_and_calls_newer_than_strace() {
    let s = run(r#"
        100 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, exit_signal=0, stack=0x7f, stack_size=0x7fff80} => {parent_tid=[101]}, 88) = 101
        101 ???( <unfinished ...>
        100 syscall_0x1d3(AT_FDCWD, "/mnt", 0x80001, NULL, 0) = 3
        100 fcntl(3, F_GETFD) = 0x1 (flags FD_CLOEXEC)
        100 syscall_0x1c3(3, 0x7ffc, 0x7ffd, 0) = 0
        100 exit_group(0) = ?
        101 <... ??? resumed>) = ?
        101 +++ exited with 0 +++
        100 +++ exited with 0 +++
    "#);
    clean(&s);
    assert_eq!(s.cloexec_bits, 1);
    // A number strace 6.1 did not know and nothing else does stays unsupported.
    let s = run("syscall_0x1ff(1, 2) = 3\n");
    assert_eq!(s.unsupported.get("syscall_0x1ff"), Some(&1));
}

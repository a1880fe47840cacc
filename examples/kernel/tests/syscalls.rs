//! The kernel example's syscalls, run on the host through the crate as the `no_std` build
//! compiles it (the core without `std`, the crate's spinlock and RCU hooks).

use fdtable::{CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE, Errno, FdState, O_CLOEXEC};
use fdtable_example_kernel::files::PIPE_CAPACITY;
use fdtable_example_kernel::{
    CLONE_FILES, F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_GETFL, F_SETFD, FdRights, Kernel, O_RDONLY,
    O_RDWR, O_WRONLY, nr,
};

fn listing(t: &fdtable_example_kernel::Task) -> Vec<(u32, String)> {
    t.proc_fd()
}

fn l(v: &[(u32, &str)]) -> Vec<(u32, String)> {
    v.iter().map(|(fd, s)| (*fd, s.to_string())).collect()
}

#[test]
fn init_has_the_console_at_0_1_2_and_writes_reach_it() {
    let k = Kernel::new();
    let init = k.spawn_init().unwrap();
    assert_eq!(
        listing(&init),
        l(&[
            (0, "/dev/console"),
            (1, "/dev/console"),
            (2, "/dev/console")
        ])
    );
    assert_eq!(init.write(1, b"hello "), Ok(6));
    assert_eq!(init.write(2, b"world"), Ok(5));
    assert_eq!(k.console().output(), b"hello world");
    // The three fds are one open file description (dup'd), as the kernel's console_on_rootfs.
    assert_eq!(init.files().dupfd_query(0, 2), Ok(true));
    // Reading an empty console: EAGAIN (no scheduler to sleep on); then typed input.
    let mut buf = [0u8; 8];
    assert_eq!(init.read(0, &mut buf), Err(Errno::EAGAIN));
    k.console().feed(b"ls\n").unwrap();
    assert_eq!(init.read(0, &mut buf), Ok(3));
    assert_eq!(&buf[..3], b"ls\n");
}

#[test]
fn open_reserves_then_builds_then_installs_and_a_failed_open_leaves_nothing() {
    let k = Kernel::new();
    let mut t = k.spawn_init().unwrap();
    assert_eq!(t.open("/dev/null", O_RDWR), Ok(3));
    assert_eq!(t.open("/no/such/file", O_RDONLY), Err(Errno::ENOENT));
    assert_eq!(t.files().fd_state(4), FdState::Free);
    assert!(t.files().next_reserved_fd(0).is_none());
    assert_eq!(t.open("", O_RDONLY), Err(Errno::ENOENT));
    // The fd is reserved before the path is looked up: a full table answers EMFILE even for a
    // file that does not exist, as Linux does.
    t.set_nofile(4).unwrap();
    assert_eq!(t.open("/no/such/file", O_RDONLY), Err(Errno::EMFILE));
    assert_eq!(t.open("/dev/null", O_RDONLY), Err(Errno::EMFILE));
    t.set_nofile(1024).unwrap();
    assert_eq!(t.set_nofile(u64::MAX), Err(Errno::EPERM));
    // O_CLOEXEC goes to the table.
    let fd = t.open("/dev/null", O_RDONLY | O_CLOEXEC).unwrap();
    assert_eq!(fd, 4);
    assert_eq!(t.fcntl(fd, F_GETFD, 0), Ok(1));
    assert_eq!(t.close(fd), Ok(()));
    assert_eq!(t.close(fd), Err(Errno::EBADF));
}

#[test]
fn access_modes_and_rights_are_checked_by_read_and_write() {
    let k = Kernel::new();
    let t = k.spawn_init().unwrap();
    let ro = t.open("/dev/null", O_RDONLY).unwrap();
    let wo = t.open("/dev/null", O_WRONLY).unwrap();
    let none = t.open("/dev/null", 3).unwrap();
    let mut buf = [0u8; 4];
    assert_eq!(t.read(ro, &mut buf), Ok(0));
    assert_eq!(t.write(ro, b"x"), Err(Errno::EBADF));
    assert_eq!(t.read(wo, &mut buf), Err(Errno::EBADF));
    assert_eq!(t.write(wo, b"xy"), Ok(2));
    assert_eq!(t.read(none, &mut buf), Err(Errno::EBADF));
    assert_eq!(t.write(none, b"x"), Err(Errno::EBADF));
    assert_eq!(t.fcntl(ro, F_GETFL, 0), Ok(O_RDONLY));
    assert_eq!(t.fcntl(wo, F_GETFL, 0), Ok(O_WRONLY));
    assert_eq!(t.fcntl(0, F_GETFL, 0), Ok(O_RDWR));
    assert_eq!(t.fcntl(none, F_GETFL, 0), Ok(3));

    // Per-fd rights: an fd that may only read, over a file opened read-write.
    let r = t.dup_limited(1, FdRights::READ).unwrap();
    assert_eq!(t.cap_rights_get(r), Ok(FdRights::READ));
    assert_eq!(t.cap_rights_get(1), Ok(FdRights::ALL));
    assert_eq!(t.write(r, b"no"), Err(Errno::EBADF));
    assert_eq!(t.write(1, b"yes"), Ok(3));
    // Rights only shrink; dup and F_DUPFD copy them.
    assert_eq!(t.dup_limited(r, FdRights::ALL), Err(Errno::EPERM));
    assert_eq!(t.dup_limited(99, FdRights::NONE), Err(Errno::EBADF));
    let d = t.dup(r).unwrap();
    assert_eq!(t.cap_rights_get(d), Ok(FdRights::READ));
    let d2 = t.fcntl(r, F_DUPFD, 50).unwrap();
    assert_eq!((d2, t.cap_rights_get(d2)), (50, Ok(FdRights::READ)));
    let n = t.dup_limited(d, FdRights::NONE).unwrap();
    assert_eq!(t.read(n, &mut buf), Err(Errno::EBADF));
    // Narrowed in place: never widened, and not on a closed fd.
    let c = t.dup(1).unwrap();
    assert_eq!(t.cap_rights_limit(c, FdRights::WRITE), Ok(()));
    assert_eq!(t.cap_rights_get(c), Ok(FdRights::WRITE));
    assert_eq!(t.read(c, &mut buf), Err(Errno::EBADF));
    assert_eq!(t.cap_rights_limit(c, FdRights::ALL), Err(Errno::EPERM));
    assert_eq!(t.cap_rights_get(c), Ok(FdRights::WRITE));
    assert_eq!(
        t.cap_rights_get(1),
        Ok(FdRights::ALL),
        "the dup's source keeps its rights"
    );
    assert_eq!(t.cap_rights_limit(99, FdRights::NONE), Err(Errno::EBADF));
    // Opened limited from the start.
    let w = t
        .open_limited("/dev/console", O_RDWR, FdRights::WRITE)
        .unwrap();
    assert_eq!(t.read(w, &mut buf), Err(Errno::EBADF));
    assert_eq!(t.write(w, b"!"), Ok(1));
    assert_eq!(
        t.proc_fdinfo(w).unwrap(),
        "flags:\t02\nrights:\twrite\n",
        "fdinfo shows the access mode and the rights"
    );
    assert_eq!(k.console().output(), b"yes!");
}

#[test]
fn pipes_end_of_file_epipe_and_a_failed_pipe2_leaves_nothing() {
    let k = Kernel::new();
    let mut t = k.spawn_init().unwrap();
    let [r, w] = t.pipe2(0).unwrap();
    assert_eq!((r, w), (3, 4));
    assert_eq!(t.fd_path(r), Ok("pipe:[1]".to_string()));
    let mut buf = [0u8; 16];
    assert_eq!(t.read(r, &mut buf), Err(Errno::EAGAIN));
    assert_eq!(t.write(w, b"ping"), Ok(4));
    assert_eq!(
        t.write(r, b"x"),
        Err(Errno::EBADF),
        "the read end is not writable"
    );
    assert_eq!(t.read(r, &mut buf), Ok(4));
    // A fork holds both ends too; end-of-file only once every writer is closed.
    let mut child = t.fork().unwrap();
    t.close(w).unwrap();
    assert_eq!(t.read(r, &mut buf), Err(Errno::EAGAIN));
    child.close(w).unwrap();
    assert_eq!(t.read(r, &mut buf), Ok(0));
    // Every reader gone: EPIPE.
    let [r2, w2] = t.pipe2(O_CLOEXEC).unwrap();
    assert_eq!(t.fcntl(r2, F_GETFD, 0), Ok(1));
    t.close(r2).unwrap();
    assert_eq!(t.write(w2, b"x"), Err(Errno::EPIPE));
    // A full pipe: a partial write, then EAGAIN.
    let [r3, w3] = t.pipe2(0).unwrap();
    let big = vec![7u8; PIPE_CAPACITY + 10];
    assert_eq!(t.write(w3, &big), Ok(PIPE_CAPACITY));
    assert_eq!(t.write(w3, b"x"), Err(Errno::EAGAIN));
    assert_eq!(t.read(r3, &mut buf), Ok(16));
    // Bad flags, and a table with room for one fd only: nothing stays reserved or open.
    assert_eq!(t.pipe2(1), Err(Errno::EINVAL));
    let before = listing(&t);
    t.set_nofile(before.last().unwrap().0 as u64 + 2).unwrap();
    assert_eq!(t.pipe2(0), Err(Errno::EMFILE));
    assert_eq!(listing(&t), before);
    assert!(t.files().next_reserved_fd(0).is_none());
    drop(child);
}

#[test]
fn dup_family_and_fcntl() {
    let k = Kernel::new();
    let mut t = k.spawn_init().unwrap();
    assert_eq!(t.dup(0), Ok(3));
    assert_eq!(t.dup(77), Err(Errno::EBADF));
    assert_eq!(t.dup2(0, 10), Ok(10));
    assert_eq!(t.dup2(10, 10), Ok(10));
    assert_eq!(t.dup2(11, 11), Err(Errno::EBADF));
    assert_eq!(
        t.dup2(0, 1024),
        Err(Errno::EBADF),
        "newfd past RLIMIT_NOFILE"
    );
    assert_eq!(t.dup3(0, 0, 0), Err(Errno::EINVAL));
    assert_eq!(t.dup3(0, 12, 0o4000), Err(Errno::EINVAL));
    assert_eq!(t.dup3(0, 12, O_CLOEXEC), Ok(12));
    assert_eq!(t.fcntl(12, F_GETFD, 0), Ok(1));
    assert_eq!(t.fcntl(12, F_SETFD, 0), Ok(0));
    assert_eq!(t.fcntl(12, F_GETFD, 0), Ok(0));
    // F_SETFD looks at FD_CLOEXEC only; the argument's high bits are ignored.
    assert_eq!(t.fcntl(12, F_SETFD, 0xffff_ffff_0000_0001), Ok(0));
    assert_eq!(t.fcntl(12, F_GETFD, 0), Ok(1));
    assert_eq!(t.fcntl(0, F_DUPFD, 5), Ok(5));
    assert_eq!(t.fcntl(0, F_DUPFD_CLOEXEC, 5), Ok(6));
    assert_eq!(t.fcntl(6, F_GETFD, 0), Ok(1));
    assert_eq!(t.fcntl(0, F_DUPFD, 1024), Err(Errno::EINVAL));
    // `(int)arg` then `unsigned int from`: -1 is huge, so EINVAL.
    assert_eq!(t.fcntl(0, F_DUPFD, u64::MAX), Err(Errno::EINVAL));
    // The fd is looked up before the command: EBADF beats EINVAL.
    assert_eq!(t.fcntl(99, 12345, 0), Err(Errno::EBADF));
    assert_eq!(t.fcntl(0, 12345, 0), Err(Errno::EINVAL));
    assert_eq!(t.fcntl(u32::MAX, F_GETFD, 0), Err(Errno::EBADF));
}

#[test]
fn fork_copies_clone_files_shares_and_unshare_separates() {
    let k = Kernel::new();
    let mut parent = k.spawn_init().unwrap();
    let null = parent.open("/dev/null", O_RDWR).unwrap();
    let mut child = parent.fork().unwrap();
    assert!(!child.shares_table_with(&parent));
    assert_ne!(child.pid(), parent.pid());
    child.close(null).unwrap();
    assert_eq!(parent.fd_path(null), Ok("/dev/null".into()));
    assert_eq!(child.fd_path(null), Err(Errno::EBADF));

    let mut thread = parent.clone_task(CLONE_FILES).unwrap();
    assert!(thread.shares_table_with(&parent));
    let fd = thread.open("/dev/console", O_WRONLY).unwrap();
    assert_eq!(parent.fd_path(fd), Ok("/dev/console".into()));
    parent.close(fd).unwrap();
    assert_eq!(thread.close(fd), Err(Errno::EBADF));
    // clone without CLONE_FILES copies.
    let copy = parent.clone_task(0).unwrap();
    assert!(!copy.shares_table_with(&parent));
    assert_eq!(listing(&copy), listing(&parent));
    thread.unshare_files().unwrap();
    assert!(!thread.shares_table_with(&parent));
    assert_eq!(listing(&thread), listing(&parent));
}

#[test]
fn execve_closes_close_on_exec_fds_in_the_execing_table_only() {
    let k = Kernel::new();
    let mut parent = k.spawn_init().unwrap();
    let keep = parent.open("/dev/null", O_RDONLY).unwrap();
    let gone = parent.open("/dev/null", O_RDONLY | O_CLOEXEC).unwrap();
    let [pr, pw] = parent.pipe2(O_CLOEXEC).unwrap();
    // A task sharing the table with another process (CLONE_FILES, not a thread): execve
    // copies the table first, so the other keeps its close-on-exec fds.
    let mut sharer = parent.clone_task(CLONE_FILES).unwrap();
    sharer.execve().unwrap();
    assert!(!sharer.shares_table_with(&parent));
    let fds: Vec<u32> = listing(&sharer).into_iter().map(|(fd, _)| fd).collect();
    assert_eq!(fds, vec![0, 1, 2, keep]);
    let fds: Vec<u32> = listing(&parent).into_iter().map(|(fd, _)| fd).collect();
    assert_eq!(fds, vec![0, 1, 2, keep, gone, pr, pw]);
    parent.execve().unwrap();
    let fds: Vec<u32> = listing(&parent).into_iter().map(|(fd, _)| fd).collect();
    assert_eq!(fds, vec![0, 1, 2, keep]);
}

#[test]
fn close_range_and_the_proc_listing() {
    let k = Kernel::new();
    let mut t = k.spawn_init().unwrap();
    let [r, w] = t.pipe2(0).unwrap();
    let n = t.open("/dev/null", O_RDONLY).unwrap();
    t.dup2(n, 40).unwrap();
    assert_eq!(
        listing(&t),
        l(&[
            (0, "/dev/console"),
            (1, "/dev/console"),
            (2, "/dev/console"),
            (r, "pipe:[1]"),
            (w, "pipe:[1]"),
            (n, "/dev/null"),
            (40, "/dev/null"),
        ])
    );
    assert_eq!(t.close_range(5, 4, 0), Err(Errno::EINVAL));
    assert_eq!(t.close_range(0, 10, 1), Err(Errno::EINVAL));
    assert_eq!(t.close_range(3, 4, CLOSE_RANGE_CLOEXEC), Ok(()));
    assert_eq!(
        t.proc_fdinfo(3).unwrap(),
        "flags:\t02000000\nrights:\tread|write\n"
    );
    assert_eq!(
        t.proc_fdinfo(4).unwrap(),
        "flags:\t02000001\nrights:\tread|write\n"
    );
    assert_eq!(t.proc_fdinfo(7), Err(Errno::ENOENT));
    assert_eq!(t.proc_fdinfo(u32::MAX), Err(Errno::ENOENT));
    assert_eq!(t.close_range(3, u32::MAX, 0), Ok(()));
    assert_eq!(listing(&t).len(), 3);
    // UNSHARE on a shared table: this task gets a copy without the range.
    let mut other = t.clone_task(CLONE_FILES).unwrap();
    assert_eq!(other.close_range(1, 2, CLOSE_RANGE_UNSHARE), Ok(()));
    assert_eq!(listing(&other), l(&[(0, "/dev/console")]));
    assert_eq!(listing(&t).len(), 3);
}

#[test]
fn the_raw_syscall_entry_takes_the_low_32_bits_and_returns_minus_errno() {
    let k = Kernel::new();
    let mut t = k.spawn_init().unwrap();
    let minus_one = u64::MAX; // a C `-1` in a 64-bit register
    assert_eq!(t.syscall(nr::CLOSE, [minus_one, 0, 0]), -9);
    assert_eq!(t.syscall(nr::DUP, [0, 0, 0]), 3);
    // 0x1_0000_0003 is fd 3 to `unsigned int fd`.
    assert_eq!(t.syscall(nr::CLOSE, [0x1_0000_0003, 0, 0]), 0);
    assert_eq!(t.syscall(nr::DUP2, [0, 100, 0]), 100);
    assert_eq!(t.syscall(nr::DUP2, [0, minus_one, 0]), -9);
    assert_eq!(t.syscall(nr::DUP3, [0, 0, 0]), -22);
    assert_eq!(t.syscall(nr::DUP3, [0, 101, O_CLOEXEC as u64]), 101);
    assert_eq!(t.syscall(nr::FCNTL, [101, F_GETFD as u64, 0]), 1);
    assert_eq!(t.syscall(nr::FCNTL, [0, F_DUPFD as u64, minus_one]), -22);
    assert_eq!(t.syscall(nr::CLOSE_RANGE, [100, minus_one, 0]), 0);
    assert_eq!(t.syscall(nr::CLOSE_RANGE, [0, 0, minus_one]), -22);
    assert_eq!(t.syscall(9999, [0, 0, 0]), -38);
    assert_eq!(listing(&t).len(), 3);
}

#[test]
fn bad_input_never_panics() {
    let k = Kernel::new();
    let mut t = k.spawn_init().unwrap();
    let values = [
        0u64,
        1,
        2,
        3,
        63,
        64,
        1023,
        1024,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_fffe,
        0xffff_ffff,
        0x1_0000_0000,
        u64::MAX,
    ];
    let calls = [
        nr::CLOSE,
        nr::DUP,
        nr::DUP2,
        nr::DUP3,
        nr::FCNTL,
        nr::CLOSE_RANGE,
    ];
    for &call in &calls {
        for &a in &values {
            for &b in &values {
                for &c in &values[..4] {
                    let r = t.syscall(call, [a, b, c]);
                    assert!(
                        (-4095..=i64::from(u32::MAX)).contains(&r),
                        "{call} {a} {b} {c}"
                    );
                }
            }
        }
    }
    let mut buf = [0u8; 4];
    for &fd in &values {
        let fd = fd as u32;
        let _ = t.read(fd, &mut buf);
        let _ = t.write(fd, b"x");
        let _ = t.fd_path(fd);
        let _ = t.proc_fdinfo(fd);
        let _ = t.dup_limited(fd, FdRights::READ);
    }
}

#[test]
fn tasks_sharing_a_table_on_two_threads() {
    let k = Kernel::new();
    let mut parent = k.spawn_init().unwrap();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let mut t = parent.clone_task(CLONE_FILES).unwrap();
            std::thread::spawn(move || {
                for _ in 0..2000 {
                    let [r, w] = t.pipe2(0).unwrap();
                    assert_eq!(t.write(w, b"x"), Ok(1));
                    let mut b = [0u8; 1];
                    assert_eq!(t.read(r, &mut b), Ok(1));
                    let d = t.dup(r).unwrap();
                    t.close(r).unwrap();
                    t.close(w).unwrap();
                    t.close(d).unwrap();
                }
            })
        })
        .collect();
    for _ in 0..2000 {
        // Lookups through the parent's handle race with the workers' opens and closes.
        for (fd, _) in parent.proc_fd() {
            let _ = parent.fd_path(fd);
        }
    }
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(listing(&parent).len(), 3);
    assert!(parent.files().next_reserved_fd(0).is_none());
    parent.close(0).unwrap();
}

#[test]
fn concurrent_narrowing_never_widens() {
    // Two tasks sharing a table narrow the same fd at once, one to READ and one to WRITE.
    // Exactly one wins; the other then sees the winner's rights, which do not contain its
    // own, and fails: the fd never ends with rights neither asked for, and never with both.
    let k = Kernel::new();
    let mut parent = k.spawn_init().unwrap();
    for _ in 0..500 {
        let fd = parent.dup(0).unwrap();
        let results: Vec<_> = [FdRights::READ, FdRights::WRITE]
            .into_iter()
            .map(|want| {
                let t = parent.clone_task(CLONE_FILES).unwrap();
                std::thread::spawn(move || (want, t.cap_rights_limit(fd, want)))
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect();
        let won: Vec<_> = results.iter().filter(|(_, r)| r.is_ok()).collect();
        assert_eq!(won.len(), 1, "{results:?}");
        assert!(results.iter().any(|(_, r)| *r == Err(Errno::EPERM)));
        assert_eq!(parent.cap_rights_get(fd), Ok(won[0].0));
        parent.close(fd).unwrap();
    }
}

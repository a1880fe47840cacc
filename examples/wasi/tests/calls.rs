//! Every call of the WASI example, with good and bad input.

use fdtable::{Errno, FdState};
use fdtable_example_wasi::{
    DirNode, FdEntry, Fdflags, Fdstat, Filetype, Oflags, PathOpen, Prestat, Rights, STDIN_RIGHTS,
    STDOUT_RIGHTS, WasiCtx, WasiErrno,
};
use std::sync::Arc;

/// Bad fd numbers: closed, never opened, past the cap, "negative".
const BAD_FDS: [u32; 6] = [9, 100, 1023, 1024, 1 << 31, u32::MAX];

struct World {
    ctx: WasiCtx,
    sandbox: Arc<DirNode>,
    tmp: Arc<DirNode>,
}

/// stdin "hi", `/sandbox` at 3 (a file and a subdirectory), `/tmp` at 4.
fn world() -> World {
    let sandbox = DirNode::new();
    sandbox.add_file("hello.txt", b"hello, world");
    let sub = sandbox.add_dir("sub");
    sub.add_file("deep.txt", b"deep");
    let tmp = DirNode::new();
    let ctx = WasiCtx::builder()
        .stdin(b"hi")
        .preopen("/sandbox", sandbox.clone())
        .preopen("/tmp", tmp.clone())
        .build()
        .unwrap();
    World { ctx, sandbox, tmp }
}

#[test]
fn stdio_at_0_1_2_and_preopens_sequential_from_3() {
    let w = world();
    let c = &w.ctx;
    for fd in 0..3 {
        assert_eq!(
            c.fd_fdstat_get(fd).unwrap().fs_filetype,
            Filetype::CharacterDevice
        );
    }
    assert_eq!(c.fd_fdstat_get(0).unwrap().fs_rights_base, STDIN_RIGHTS);
    assert_eq!(c.fd_fdstat_get(1).unwrap().fs_rights_base, STDOUT_RIGHTS);
    assert_eq!(
        c.preopens(),
        vec![(3, "/sandbox".to_string()), (4, "/tmp".to_string())]
    );
    // What wasi-libc does at startup: probe 3, 4, ... until fd_prestat_get fails; it finds
    // the same list only because the preopens are sequential.
    let mut probed = Vec::new();
    for fd in 3.. {
        match c.fd_prestat_get(fd) {
            Ok(Prestat::Dir { pr_name_len }) => {
                let mut name = vec![0u8; pr_name_len as usize];
                c.fd_prestat_dir_name(fd, &mut name).unwrap();
                probed.push((fd, String::from_utf8(name).unwrap()));
            }
            Err(e) => {
                assert_eq!(e, WasiErrno::Badf);
                break;
            }
        }
    }
    assert_eq!(probed, c.preopens());
    // Many preopens: still 3, 4, 5, ...
    let mut b = WasiCtx::builder();
    for i in 0..70 {
        b = b.preopen(&format!("/p{i}"), DirNode::new());
    }
    let c = b.build().unwrap();
    let got: Vec<u32> = c.preopens().into_iter().map(|(fd, _)| fd).collect();
    assert_eq!(got, (3..73).collect::<Vec<u32>>());
    // No room for them: Mfile.
    let r = WasiCtx::builder()
        .preopen("/a", DirNode::new())
        .nofile(3)
        .build();
    assert!(matches!(r, Err(WasiErrno::Mfile)));
}

#[test]
fn fd_read_and_fd_write() {
    let w = world();
    let c = &w.ctx;
    let mut buf = [0u8; 8];
    assert_eq!(c.fd_read(0, &mut buf), Ok(2));
    assert_eq!(&buf[..2], b"hi");
    assert_eq!(c.fd_read(0, &mut buf), Ok(0));
    assert_eq!(c.fd_write(1, b"out"), Ok(3));
    assert_eq!(c.fd_write(2, b"err"), Ok(3));
    assert_eq!((c.stdout(), c.stderr()), (b"out".to_vec(), b"err".to_vec()));
    // Missing rights: Notcapable.
    assert_eq!(c.fd_write(0, b"x"), Err(WasiErrno::Notcapable));
    assert_eq!(c.fd_read(1, &mut buf), Err(WasiErrno::Notcapable));
    // A directory is not a stream.
    assert_eq!(c.fd_read(3, &mut buf), Err(WasiErrno::Notcapable));
    for fd in BAD_FDS {
        assert_eq!(c.fd_read(fd, &mut buf), Err(WasiErrno::Badf));
        assert_eq!(c.fd_write(fd, b"x"), Err(WasiErrno::Badf));
    }
}

#[test]
fn path_open_reads_creates_and_hands_rights_down() {
    let w = world();
    let c = &w.ctx;
    let fd = c.path_open(3, &PathOpen::read("hello.txt")).unwrap();
    assert_eq!(fd, 5, "the lowest free fd after the preopens");
    let mut buf = [0u8; 5];
    assert_eq!(c.fd_read(fd, &mut buf), Ok(5));
    assert_eq!(&buf, b"hello");
    assert_eq!(
        c.fd_write(fd, b"x"),
        Err(WasiErrno::Notcapable),
        "opened read-only"
    );
    let st = c.fd_fdstat_get(fd).unwrap();
    assert_eq!(
        st,
        Fdstat {
            fs_filetype: Filetype::RegularFile,
            fs_flags: Fdflags::default(),
            fs_rights_base: PathOpen::read("").rights_base,
            fs_rights_inheriting: Rights::NONE,
        }
    );
    // Create, with APPEND.
    let mut req = PathOpen::create("new.txt");
    req.fdflags = Fdflags::APPEND;
    let n = c.path_open(4, &req).unwrap();
    assert_eq!(c.fd_write(n, b"ab"), Ok(2));
    assert_eq!(c.fd_write(n, b"cd"), Ok(2));
    match w.tmp.get("new.txt") {
        Some(fdtable_example_wasi::fs::Node::File(f)) => assert_eq!(f.contents(), b"abcd"),
        other => panic!("{other:?}"),
    }
    // A subdirectory, and a path through it; `..` that stays inside is fine.
    let sub = c.path_open(3, &PathOpen::dir("sub")).unwrap();
    assert_eq!(
        c.fd_fdstat_get(sub).unwrap().fs_filetype,
        Filetype::Directory
    );
    let deep = c.path_open(sub, &PathOpen::read("deep.txt")).unwrap();
    let deep2 = c
        .path_open(3, &PathOpen::read("sub/../sub/./deep.txt"))
        .unwrap();
    assert_eq!(c.fd_read(deep2, &mut buf), Ok(4));
    // Not a preopen: no prestat.
    assert_eq!(c.fd_prestat_get(sub), Err(WasiErrno::Badf));
    assert_eq!(c.fd_prestat_dir_name(sub, &mut buf), Err(WasiErrno::Notdir));
    // Rights asked for beyond the directory's type are dropped; a file gets no path rights.
    let mut req = PathOpen::read("hello.txt");
    req.rights_base = Rights::FD_READ.union(Rights::PATH_OPEN);
    let f = c.path_open(3, &req).unwrap();
    assert_eq!(c.fd_fdstat_get(f).unwrap().fs_rights_base, Rights::FD_READ);
    let _ = (deep, w.sandbox);
}

#[test]
fn path_open_errors_leave_no_fd_behind() {
    let w = world();
    let c = &w.ctx;
    let before: Vec<u32> = c.table().iter().map(|o| o.fd).collect();
    let cases: Vec<(u32, PathOpen, WasiErrno)> = vec![
        (3, PathOpen::read("missing"), WasiErrno::Noent),
        (3, PathOpen::read(""), WasiErrno::Noent),
        (3, PathOpen::read("missing/x"), WasiErrno::Noent),
        (3, PathOpen::read("hello.txt/x"), WasiErrno::Notdir),
        (3, PathOpen::dir("hello.txt"), WasiErrno::Notdir),
        (3, PathOpen::read("/etc/passwd"), WasiErrno::Notcapable),
        (3, PathOpen::read("../x"), WasiErrno::Notcapable),
        (3, PathOpen::read("sub/../../x"), WasiErrno::Notcapable),
        (3, PathOpen::read(&"a".repeat(300)), WasiErrno::Nametoolong),
        (
            3,
            PathOpen::read(&"a/".repeat(3000)),
            WasiErrno::Nametoolong,
        ),
        (
            3,
            PathOpen {
                oflags: Oflags(Oflags::CREAT.0 | Oflags::EXCL.0),
                ..PathOpen::create("hello.txt")
            },
            WasiErrno::Exist,
        ),
        (
            3,
            PathOpen {
                oflags: Oflags::TRUNC,
                ..PathOpen::dir("sub")
            },
            WasiErrno::Isdir,
        ),
        // Bad arguments.
        (
            3,
            PathOpen {
                oflags: Oflags(1 << 9),
                ..PathOpen::read("hello.txt")
            },
            WasiErrno::Inval,
        ),
        (
            3,
            PathOpen {
                oflags: Oflags(Oflags::CREAT.0 | Oflags::DIRECTORY.0),
                ..PathOpen::read("d")
            },
            WasiErrno::Inval,
        ),
        (
            3,
            PathOpen {
                fdflags: Fdflags(1 << 12),
                ..PathOpen::read("hello.txt")
            },
            WasiErrno::Inval,
        ),
        (
            3,
            PathOpen {
                rights_base: Rights(1 << 40),
                ..PathOpen::read("hello.txt")
            },
            WasiErrno::Inval,
        ),
        (
            3,
            PathOpen {
                dirflags: 2,
                ..PathOpen::read("hello.txt")
            },
            WasiErrno::Inval,
        ),
        // Bad directory fds.
        (0, PathOpen::read("hello.txt"), WasiErrno::Notdir),
        (9, PathOpen::read("hello.txt"), WasiErrno::Badf),
        (u32::MAX, PathOpen::read("hello.txt"), WasiErrno::Badf),
    ];
    for (dirfd, req, want) in cases {
        assert_eq!(c.path_open(dirfd, &req), Err(want), "{dirfd} {req:?}");
        let now: Vec<u32> = c.table().iter().map(|o| o.fd).collect();
        assert_eq!(now, before, "{req:?} left an fd behind");
        assert!(c.table().next_reserved_fd(0).is_none());
    }
    // Mfile: the reservation comes first, so a missing file in a full table is Mfile.
    let mut small = WasiCtx::builder()
        .preopen("/s", DirNode::new())
        .nofile(5)
        .build()
        .unwrap();
    let f = small.path_open(3, &PathOpen::create("a")).unwrap();
    assert_eq!(f, 4);
    assert_eq!(
        small.path_open(3, &PathOpen::create("b")),
        Err(WasiErrno::Mfile)
    );
    assert_eq!(
        small.path_open(3, &PathOpen::read("missing")),
        Err(WasiErrno::Mfile)
    );
    small.fd_close(f).unwrap();
    assert_eq!(small.path_open(3, &PathOpen::read("a")), Ok(4));
}

#[test]
fn path_open_rights_checks() {
    let ro = DirNode::new();
    ro.add_file("f", b"x");
    let noopen = DirNode::new();
    let c = WasiCtx::builder()
        // May open, hands down only read rights, may not create or truncate.
        .preopen_with_rights(
            "/ro",
            ro,
            Rights::PATH_OPEN,
            Rights(Rights::FD_READ.0 | Rights::FD_SEEK.0 | Rights::FD_TELL.0),
        )
        // May not open at all.
        .preopen_with_rights("/no", noopen, Rights::FD_READDIR, Rights::ALL)
        .build()
        .unwrap();
    assert_eq!(c.path_open(3, &PathOpen::read("f")), Ok(5));
    let mut w = PathOpen::read("f");
    w.rights_base = Rights::FD_WRITE;
    assert_eq!(c.path_open(3, &w), Err(WasiErrno::Notcapable));
    let mut inh = PathOpen::read("f");
    inh.rights_inheriting = Rights::FD_WRITE;
    assert_eq!(c.path_open(3, &inh), Err(WasiErrno::Notcapable));
    let mut create = PathOpen::read("g");
    create.oflags = Oflags::CREAT;
    assert_eq!(c.path_open(3, &create), Err(WasiErrno::Notcapable));
    let mut trunc = PathOpen::read("f");
    trunc.oflags = Oflags::TRUNC;
    assert_eq!(c.path_open(3, &trunc), Err(WasiErrno::Notcapable));
    assert_eq!(
        c.path_open(4, &PathOpen::read("f")),
        Err(WasiErrno::Notcapable)
    );
    assert_eq!(c.table().iter().count(), 6);
}

#[test]
fn fd_close() {
    let mut w = world();
    let c = &mut w.ctx;
    let fd = c.path_open(3, &PathOpen::read("hello.txt")).unwrap();
    assert_eq!(c.fd_close(fd), Ok(()));
    assert_eq!(c.fd_close(fd), Err(WasiErrno::Badf));
    for fd in BAD_FDS {
        assert_eq!(c.fd_close(fd), Err(WasiErrno::Badf));
    }
    // Preopens and stdio can be closed; the probe then stops at the gap.
    assert_eq!(c.fd_close(3), Ok(()));
    assert_eq!(c.fd_prestat_get(3), Err(WasiErrno::Badf));
    assert_eq!(c.preopens(), vec![(4, "/tmp".to_string())]);
    assert_eq!(c.fd_close(1), Ok(()));
    assert_eq!(c.fd_write(1, b"x"), Err(WasiErrno::Badf));
    // The lowest free number is reused.
    assert_eq!(c.path_open(4, &PathOpen::create("x")), Ok(1));
}

#[test]
fn fd_fdstat_get_and_set() {
    let w = world();
    let c = &w.ctx;
    let fd = c.path_open(4, &PathOpen::create("f")).unwrap();
    let st = c.fd_fdstat_get(fd).unwrap();
    assert_eq!(st.fs_flags, Fdflags::default());
    // FD_FDSTAT_SET_FLAGS is not among PathOpen::create's rights: Notcapable.
    assert_eq!(
        c.fd_fdstat_set_flags(fd, Fdflags::APPEND),
        Err(WasiErrno::Notcapable)
    );
    let mut req = PathOpen::create("g");
    req.rights_base = req.rights_base.union(Rights::FD_FDSTAT_SET_FLAGS);
    let g = c.path_open(4, &req).unwrap();
    assert_eq!(c.fd_fdstat_set_flags(g, Fdflags::APPEND), Ok(()));
    assert_eq!(c.fd_fdstat_get(g).unwrap().fs_flags, Fdflags::APPEND);
    assert_eq!(c.fd_write(g, b"12"), Ok(2));
    assert_eq!(
        c.fd_fdstat_set_flags(g, Fdflags(1 << 7)),
        Err(WasiErrno::Inval)
    );
    // Rights only shrink.
    assert_eq!(
        c.fd_fdstat_set_rights(g, Rights::FD_READ, Rights::NONE),
        Ok(())
    );
    assert_eq!(c.fd_write(g, b"x"), Err(WasiErrno::Notcapable));
    assert_eq!(
        c.fd_fdstat_set_rights(g, Rights::FD_WRITE, Rights::NONE),
        Err(WasiErrno::Notcapable)
    );
    assert_eq!(
        c.fd_fdstat_set_rights(g, Rights::FD_READ, Rights::FD_READ),
        Err(WasiErrno::Notcapable)
    );
    for fd in BAD_FDS {
        assert_eq!(c.fd_fdstat_get(fd), Err(WasiErrno::Badf));
        assert_eq!(
            c.fd_fdstat_set_flags(fd, Fdflags::APPEND),
            Err(WasiErrno::Badf)
        );
        assert_eq!(
            c.fd_fdstat_set_rights(fd, Rights::NONE, Rights::NONE),
            Err(WasiErrno::Badf)
        );
    }
}

#[test]
fn fd_prestat_get_and_dir_name() {
    let w = world();
    let c = &w.ctx;
    assert_eq!(c.fd_prestat_get(3), Ok(Prestat::Dir { pr_name_len: 8 }));
    let mut buf = [0u8; 8];
    assert_eq!(c.fd_prestat_dir_name(3, &mut buf), Ok(()));
    assert_eq!(&buf, b"/sandbox");
    let mut short = [0u8; 7];
    assert_eq!(
        c.fd_prestat_dir_name(3, &mut short),
        Err(WasiErrno::Nametoolong)
    );
    let mut long = [b'.'; 12];
    assert_eq!(c.fd_prestat_dir_name(4, &mut long), Ok(()));
    assert_eq!(&long, b"/tmp........");
    // stdio: open, not a preopen.
    assert_eq!(c.fd_prestat_get(1), Err(WasiErrno::Badf));
    assert_eq!(c.fd_prestat_dir_name(1, &mut buf), Err(WasiErrno::Notdir));
    for fd in BAD_FDS {
        assert_eq!(c.fd_prestat_get(fd), Err(WasiErrno::Badf));
        assert_eq!(c.fd_prestat_dir_name(fd, &mut buf), Err(WasiErrno::Badf));
    }
}

#[test]
fn fd_renumber_moves_atomically_and_needs_both_fds_open() {
    let mut w = world();
    let c = &mut w.ctx;
    let a = c.path_open(3, &PathOpen::read("hello.txt")).unwrap();
    let mut req = PathOpen::create("b");
    req.fdflags = Fdflags::APPEND;
    let b = c.path_open(4, &req).unwrap();
    let a_stat = c.fd_fdstat_get(a).unwrap();
    // Move a onto b: b's old file is closed, a is free, the entry moved with the file.
    assert_eq!(c.fd_renumber(a, b), Ok(()));
    assert_eq!(c.fd_fdstat_get(b), Ok(a_stat));
    assert_eq!(c.fd_fdstat_get(a), Err(WasiErrno::Badf));
    let mut buf = [0u8; 5];
    assert_eq!(c.fd_read(b, &mut buf), Ok(5));
    assert_eq!(&buf, b"hello");
    // `to` must be open: a free number is Badf (unlike dup2), and nothing moves.
    assert_eq!(c.fd_renumber(b, 50), Err(WasiErrno::Badf));
    assert_eq!(c.fd_renumber(b, a), Err(WasiErrno::Badf));
    assert!(c.fd_fdstat_get(b).is_ok());
    // `from` must be open.
    assert_eq!(c.fd_renumber(a, 1), Err(WasiErrno::Badf));
    assert_eq!(c.fd_write(1, b"still here"), Ok(10));
    // Same fd: fine if open.
    assert_eq!(c.fd_renumber(b, b), Ok(()));
    assert_eq!(c.fd_renumber(a, a), Err(WasiErrno::Badf));
    for fd in BAD_FDS {
        assert_eq!(c.fd_renumber(fd, 1), Err(WasiErrno::Badf));
        assert_eq!(c.fd_renumber(1, fd), Err(WasiErrno::Badf));
        assert_eq!(c.fd_renumber(fd, fd), Err(WasiErrno::Badf));
    }
    // Onto stdout: a common guest move (dup2 emulation). The preopen listing follows a
    // renumbered preopen.
    assert_eq!(c.fd_renumber(b, 1), Ok(()));
    assert_eq!(
        c.fd_write(1, b"x"),
        Err(WasiErrno::Notcapable),
        "fd 1 is hello.txt now"
    );
    assert_eq!(c.fd_renumber(4, 3), Ok(()));
    assert_eq!(c.preopens(), vec![(3, "/tmp".to_string())]);
}

#[test]
fn fd_renumber_onto_a_reserved_fd_is_badf() {
    let mut w = world();
    let c = &mut w.ctx;
    // An open in progress on another thread holds a reservation (as the core's own tests
    // model it, a raw `alloc_fd`): the guest cannot see the fd. (`path_open_async`'s pending
    // reservation is tested in tests/async_open.rs.)
    let fd = c.table().alloc_fd(0, 1024, 0).unwrap();
    assert_eq!(fd, 5);
    assert_eq!(c.table().fd_state(fd), FdState::Reserved);
    assert_eq!(c.fd_renumber(0, fd), Err(WasiErrno::Badf));
    assert_eq!(c.fd_renumber(fd, 0), Err(WasiErrno::Badf));
    assert_eq!(c.fd_close(fd), Err(WasiErrno::Badf));
    assert_eq!(c.fd_fdstat_get(fd), Err(WasiErrno::Badf));
    assert_eq!(c.table().fd_state(fd), FdState::Reserved);
    c.table().put_unused_fd(fd);
    assert_eq!(c.table().fd_state(fd), FdState::Free);
}

#[test]
fn errno_mapping() {
    assert_eq!(WasiErrno::from(Errno::EBADF), WasiErrno::Badf);
    assert_eq!(WasiErrno::from(Errno::EMFILE), WasiErrno::Mfile);
    assert_eq!(WasiErrno::from(Errno::EBUSY), WasiErrno::Busy);
    assert_eq!(WasiErrno::from(Errno::ENOMEM), WasiErrno::Nomem);
    assert_eq!(WasiErrno::from(Errno::ECHILD), WasiErrno::Child);
    assert_eq!(WasiErrno::from(Errno::new(200)), WasiErrno::Io, "unmapped");
    assert_eq!(WasiErrno::Badf.raw(), 8);
    assert_eq!(WasiErrno::Mfile.raw(), 33);
    assert_eq!(WasiErrno::Notcapable.raw(), 76);
    assert_eq!(WasiErrno::Badf.to_linux(), Some(Errno::EBADF));
    assert_eq!(WasiErrno::Notcapable.to_linux(), Some(Errno::EBADF));
    assert_eq!(WasiErrno::Success.to_linux(), None);
    for w in [
        WasiErrno::Mfile,
        WasiErrno::Noent,
        WasiErrno::Xdev,
        WasiErrno::Perm,
    ] {
        assert_eq!(w.to_linux().map(WasiErrno::from), Some(w));
    }
}

#[test]
fn threads_of_one_instance_share_the_table() {
    let mut w = world();
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let mut c = w.ctx.share();
            std::thread::spawn(move || {
                for j in 0..500 {
                    let name = format!("t{i}-{j}");
                    let fd = c.path_open(4, &PathOpen::create(&name)).unwrap();
                    assert_eq!(c.fd_write(fd, b"x"), Ok(1));
                    let moved = c.path_open(3, &PathOpen::read("hello.txt")).unwrap();
                    c.fd_renumber(moved, fd).unwrap();
                    let mut b = [0u8; 1];
                    assert_eq!(c.fd_read(fd, &mut b), Ok(1));
                    assert_eq!(&b, b"h");
                    c.fd_close(fd).unwrap();
                }
            })
        })
        .collect();
    for _ in 0..500 {
        for (fd, _) in w.ctx.preopens() {
            assert!(w.ctx.fd_prestat_get(fd).is_ok());
        }
    }
    for t in workers {
        t.join().unwrap();
    }
    let fds: Vec<u32> = w.ctx.table().iter().map(|o| o.fd).collect();
    assert_eq!(fds, vec![0, 1, 2, 3, 4]);
    let entry: FdEntry = w.ctx.table().fd_payload(3).unwrap();
    assert_eq!(entry.rights_base, Rights::DIRECTORY);
}

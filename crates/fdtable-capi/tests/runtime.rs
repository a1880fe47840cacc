//! The 0.2 calls from Rust: the `...2` forms that follow the one error convention, the calls C
//! runtimes need (`fdt_next_open_fd`, `fdt_install_at`, `fdt_file_has_ops`, `fdt_poll`,
//! `fdt_fstat`), the sized `struct fdt_file_ops`, and the version. `tests/c/test_fdtable.c`
//! covers the same from C.

mod support;

use fdtable_capi::*;
use std::ffi::{c_int, c_uint, c_ulong, c_void};
use std::mem::offset_of;
use std::ptr::{dangling_mut, null, null_mut};
use std::sync::Arc;
use support::probe::*;

const ALL: u16 = K_READ | K_WRITE | K_IOCTL | K_COMPAT | K_FLUSH | K_LLSEEK | K_POLL | K_GETATTR;

fn e(errno: c_int) -> c_int {
    -errno
}

/// A table handle freed at the end of the test.
struct H(*mut fdt_files);

impl H {
    fn new() -> H {
        H(fdt_files_new())
    }
    fn file(&self, p: &Arc<Probe>, open: u32) -> c_int {
        // SAFETY: a live handle; a reference we own, handed over.
        let fd = unsafe { fdt_install(self.0, c_file(p, open), 0) };
        assert!(fd >= 0, "install: {fd}");
        fd
    }
}

impl Drop for H {
    fn drop(&mut self) {
        // SAFETY: our handle, put once.
        unsafe { fdt_files_put(self.0) }
    }
}

/// `fdt_fget2`, which must succeed.
///
/// # Safety
///
/// `h` is a live handle.
unsafe fn fget(h: *mut fdt_files, fd: c_int) -> *mut fdt_file {
    let mut f = null_mut();
    // SAFETY: the caller's contract; `f` is a local.
    assert_eq!(unsafe { fdt_fget2(h, fd, &mut f) }, 0);
    f
}

#[test]
fn version_is_the_packages() {
    assert_eq!(fdt_version(), FDT_VERSION);
    assert_eq!(
        FDT_VERSION,
        (FDT_VERSION_MAJOR << 16) | (FDT_VERSION_MINOR << 8) | FDT_VERSION_PATCH
    );
    // The `fdtable-ffi` package (which names the SONAME) has its own test against these.
    const { assert!(FDT_VERSION >= 0x0200, "0.2 added the calls tested here") };
}

#[test]
fn layouts_are_the_headers() {
    // The header's FDT_FILE_OPS_SIZE_VER0 is offsetof(poll); the 0.1 struct was that big.
    let ptr = size_of::<*const c_void>();
    assert_eq!(offset_of!(fdt_file_ops, poll), 7 * ptr + ptr.max(4));
    assert_eq!(
        size_of::<fdt_file_ops>(),
        offset_of!(fdt_file_ops, getattr) + ptr
    );
    assert_eq!(size_of::<fdt_stat>(), 128);
    assert_eq!(size_of::<fdt_pollfd>(), 8);
    assert_eq!(size_of::<fdt_pollfd>(), size_of::<libc::pollfd>());
    assert_eq!(
        offset_of!(fdt_pollfd, revents),
        offset_of!(libc::pollfd, revents)
    );
}

#[test]
fn poll_constants_are_the_kernels() {
    use fdtable_vfs::uapi;
    for (c, k, l) in [
        (FDT_POLLIN, uapi::POLLIN, libc::POLLIN),
        (FDT_POLLPRI, uapi::POLLPRI, libc::POLLPRI),
        (FDT_POLLOUT, uapi::POLLOUT, libc::POLLOUT),
        (FDT_POLLERR, uapi::POLLERR, libc::POLLERR),
        (FDT_POLLHUP, uapi::POLLHUP, libc::POLLHUP),
        (FDT_POLLNVAL, uapi::POLLNVAL, libc::POLLNVAL),
        (FDT_POLLRDNORM, uapi::POLLRDNORM, libc::POLLRDNORM),
        (FDT_POLLWRNORM, uapi::POLLWRNORM, libc::POLLWRNORM),
        (FDT_POLLRDHUP, uapi::POLLRDHUP, libc::POLLRDHUP),
    ] {
        assert_eq!(c as u16, k);
        assert_eq!(c, l);
    }
    assert_eq!(FDT_POLLRDBAND, libc::POLLRDBAND);
    assert_eq!(FDT_POLLWRBAND, libc::POLLWRBAND);
}

#[test]
fn file_type_constants_are_the_kernels() {
    use fdtable_vfs::uapi;
    for (c, k, l) in [
        (FDT_S_IFMT, uapi::S_IFMT, libc::S_IFMT),
        (FDT_S_IFSOCK, uapi::S_IFSOCK, libc::S_IFSOCK),
        (FDT_S_IFLNK, uapi::S_IFLNK, libc::S_IFLNK),
        (FDT_S_IFREG, uapi::S_IFREG, libc::S_IFREG),
        (FDT_S_IFBLK, uapi::S_IFBLK, libc::S_IFBLK),
        (FDT_S_IFDIR, uapi::S_IFDIR, libc::S_IFDIR),
        (FDT_S_IFCHR, uapi::S_IFCHR, libc::S_IFCHR),
        (FDT_S_IFIFO, uapi::S_IFIFO, libc::S_IFIFO),
    ] {
        assert_eq!(c, k);
        assert_eq!(c, l);
        assert_eq!(c & FDT_S_IFMT, c, "a type is within FDT_S_IFMT");
    }
}

#[test]
fn fork2_share2_report_errnos_through_their_result() {
    let h = H::new();
    let p = Probe::new(0, ALL);
    let fd = h.file(&p, FDT_O_RDWR);
    let mut out = dangling_mut();
    // SAFETY: live handles, each put once; `out` is a local.
    unsafe {
        assert_eq!(fdt_files_fork2(null_mut(), &mut out), e(libc::EINVAL));
        assert!(out.is_null(), "set to NULL on failure");
        assert_eq!(fdt_files_fork2(h.0, null_mut()), e(libc::EINVAL));
        assert_eq!(fdt_files_share2(null_mut(), &mut out), e(libc::EINVAL));
        assert_eq!(fdt_files_share2(h.0, null_mut()), e(libc::EINVAL));
        assert_eq!(fdt_files_fork2(h.0, &mut out), 0);
        assert_eq!(fdt_close(out, fd), 0, "the child's copy");
        fdt_files_put(out);
        assert_eq!(fdt_files_share2(h.0, &mut out), 0);
        assert_eq!(fdt_close(out, fd), 0, "the same table");
        assert_eq!(fdt_close(h.0, fd), e(libc::EBADF));
        fdt_files_put(out);
    }
    assert_eq!((p.flushes(), p.releases()), (2, 1));
}

#[test]
fn file_new2_reads_the_callers_struct_size() {
    let ver0 = offset_of!(fdt_file_ops, poll);
    let known = size_of::<fdt_file_ops>();
    let p = Probe::new(3, ALL);
    let pd: *mut c_void = Arc::as_ptr(&p).cast_mut().cast();
    let ops = static_ops(ALL);
    let mut f = dangling_mut();
    // SAFETY: `ops` is valid for `known` bytes; the larger buffers for their sizes. No file
    // is made except where the result is 0, and those are put.
    unsafe {
        assert_eq!(fdt_file_new2(null(), known, pd, 0, &mut f), e(libc::EINVAL));
        assert!(f.is_null());
        assert_eq!(
            fdt_file_new2(ops, known, pd, 0, null_mut()),
            e(libc::EINVAL)
        );
        for bad in [0, 1, ver0 - 1, ver0 + 1, known - 1] {
            assert_eq!(
                fdt_file_new2(ops, bad, pd, 0, &mut f),
                e(libc::EINVAL),
                "{bad}"
            );
        }
        assert_eq!(fdt_file_new2(ops, 4097, pd, 0, &mut f), e(libc::E2BIG));
        // A newer header's struct: unknown members zero are fine, set ones are refused.
        let mut newer = vec![0u8; known + 16];
        std::ptr::copy_nonoverlapping(
            ops as *const fdt_file_ops as *const u8,
            newer.as_mut_ptr(),
            known,
        );
        let r = fdt_file_new2(newer.as_ptr().cast(), newer.len(), pd, 0, &mut f);
        assert_eq!(r, 0);
        // `private_data` is the probe's without a reference of its own: forget it on release.
        std::mem::forget(p.clone());
        fdt_file_put(f);
        assert_eq!(p.releases(), 1);
        newer[known + 9] = 1;
        let q = Probe::new(4, ALL);
        let qd: *mut c_void = Arc::as_ptr(&q).cast_mut().cast();
        assert_eq!(
            fdt_file_new2(newer.as_ptr().cast(), newer.len(), qd, 0, &mut f),
            e(libc::E2BIG)
        );
        assert!(f.is_null());
        assert_eq!(q.releases(), 0, "nothing made, nothing released");
        // An unknown `flags` bit.
        let mut bad = c_ops(ALL);
        bad.flags = 0x80;
        assert_eq!(fdt_file_new2(&bad, known, qd, 0, &mut f), e(libc::EINVAL));
        assert_eq!(q.releases(), 0);
    }
}

#[test]
fn a_version_0_struct_has_no_poll_or_getattr() {
    let h = H::new();
    // Made from the 0.1 members only (legacy fdt_file_new, or fdt_file_new2 with VER0): the
    // poll and getattr members of the same struct are not read.
    let p = Probe::new(2, ALL);
    let q = Probe::new(2, ALL);
    let fd = h.file(&p, FDT_O_RDWR);
    let old = {
        let mut f = null_mut();
        let pd = Arc::into_raw(q.clone()) as *mut c_void;
        // SAFETY: a valid struct; the version-0 prefix of it.
        let r = unsafe {
            fdt_file_new2(
                static_ops(ALL),
                offset_of!(fdt_file_ops, poll),
                pd,
                FDT_O_RDWR,
                &mut f,
            )
        };
        assert_eq!(r, 0);
        // SAFETY: a live handle; our reference handed over.
        unsafe { fdt_install(h.0, f, 0) }
    };
    let mut fds = [
        fdt_pollfd {
            fd,
            events: FDT_POLLIN | FDT_POLLOUT,
            revents: 0,
        },
        fdt_pollfd {
            fd: old,
            events: FDT_POLLIN | FDT_POLLOUT,
            revents: 0,
        },
    ];
    let mut st = fdt_stat::default();
    // SAFETY: a live handle; valid arrays and structs.
    unsafe {
        assert_eq!(fdt_poll(h.0, fds.as_mut_ptr(), 2), 2);
        assert_eq!(fds[0].revents, FDT_POLLIN | FDT_POLLHUP, "id 2's mask");
        assert_eq!(fds[1].revents, FDT_POLLIN | FDT_POLLOUT, "the default mask");
        assert_eq!(fdt_fstat(h.0, old, &mut st), 0);
        assert_eq!(st, fdt_stat::default(), "no getattr: zeros");
        assert_eq!(fdt_fstat(h.0, fd, &mut st), 0);
        assert_eq!(st.mode, libc::S_IFCHR | 0o666);
    }
}

#[test]
fn errno_forms_of_the_descriptor_calls() {
    let h = H::new();
    let p = Probe::new(0, ALL);
    let fd = h.file(&p, FDT_O_RDWR);
    // SAFETY: a live handle; references handed over or put once.
    unsafe {
        // fdt_fget2
        let mut f = dangling_mut();
        assert_eq!(fdt_fget2(h.0, 77, &mut f), e(libc::EBADF));
        assert!(f.is_null());
        assert_eq!(fdt_fget2(h.0, -1, &mut f), e(libc::EBADF));
        assert_eq!(fdt_fget2(null_mut(), fd, &mut f), e(libc::EINVAL));
        assert_eq!(fdt_fget2(h.0, fd, null_mut()), e(libc::EINVAL));
        assert_eq!(fdt_fget2(h.0, fd, &mut f), 0);
        assert_eq!(fdt_file_count(f), 2);
        fdt_file_put(f);
        // fdt_fdget2
        let mut l = fdt_fd {
            file: dangling_mut(),
            flags: 9,
        };
        assert_eq!(fdt_fdget2(h.0, 77, &mut l), e(libc::EBADF));
        assert!(l.file.is_null() && l.flags == 0, "the empty result");
        fdt_fdput(l);
        assert_eq!(fdt_fdget2(null_mut(), fd, &mut l), e(libc::EINVAL));
        assert_eq!(fdt_fdget2(h.0, fd, null_mut()), e(libc::EINVAL));
        assert_eq!(fdt_fdget2(h.0, fd, &mut l), 0);
        assert_eq!(l.flags, 0, "unshared: borrowed");
        assert_eq!(c_probe(fdt_fd_file(l)).id, 0);
        fdt_fdput(l);
        let q = Probe::new(1, ALL);
        let pf = h.file(&q, FDT_O_PATH);
        assert_eq!(fdt_fdget2(h.0, pf, &mut l), e(libc::EBADF), "O_PATH");
        assert_eq!(fdt_fget2(h.0, pf, &mut f), e(libc::EBADF), "O_PATH");
        // fdt_put_unused_fd2 / fdt_fd_install2
        let r = fdt_get_unused_fd(h.0, 0);
        assert_eq!(fdt_put_unused_fd2(h.0, fd), e(libc::EBADF), "installed");
        assert_eq!(fdt_put_unused_fd2(h.0, 500), e(libc::EBADF), "free");
        assert_eq!(fdt_put_unused_fd2(h.0, -3), e(libc::EBADF));
        assert_eq!(fdt_put_unused_fd2(null_mut(), r), e(libc::EINVAL));
        assert_eq!(fdt_put_unused_fd2(h.0, r), 0);
        assert_eq!(
            fdt_put_unused_fd2(h.0, r),
            e(libc::EBADF),
            "given back already"
        );
        let s = Probe::new(2, ALL);
        assert_eq!(
            fdt_fd_install2(h.0, r, c_file(&s, FDT_O_RDWR)),
            e(libc::EBADF)
        );
        assert_eq!(s.releases(), 1, "the reference is put on failure");
        let r = fdt_get_unused_fd(h.0, FDT_O_CLOEXEC);
        let s = Probe::new(3, ALL);
        assert_eq!(
            fdt_fd_install2(null_mut(), r, c_file(&s, FDT_O_RDWR)),
            e(libc::EINVAL)
        );
        assert_eq!(s.releases(), 1);
        assert_eq!(fdt_fd_install2(h.0, r, null_mut()), e(libc::EINVAL));
        let s = Probe::new(4, ALL);
        assert_eq!(fdt_fd_install2(h.0, r, c_file(&s, FDT_O_RDWR)), 0);
        assert_eq!(fdt_fcntl(h.0, r, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
        let t = Probe::new(5, ALL);
        assert_eq!(
            fdt_fd_install2(h.0, r, c_file(&t, FDT_O_RDWR)),
            e(libc::EBADF),
            "installed"
        );
        assert_eq!((s.releases(), t.releases()), (0, 1));
    }
}

#[test]
fn next_open_fd_lists_installed_descriptors() {
    let h = H::new();
    let p = Probe::new(0, ALL);
    let fd = h.file(&p, FDT_O_RDWR);
    // SAFETY: a live handle throughout.
    unsafe {
        assert_eq!(fdt_dup2(h.0, fd, 5), 5);
        assert_eq!(fdt_dup2(h.0, fd, 900), 900);
        let reserved = fdt_get_unused_fd(h.0, 0);
        assert_eq!(reserved, 1);
        let mut seen = vec![];
        let mut at = fdt_next_open_fd(h.0, 0);
        while at >= 0 {
            seen.push(at);
            at = fdt_next_open_fd(h.0, at + 1);
        }
        assert_eq!(at, e(libc::ENOENT));
        assert_eq!(seen, [0, 5, 900], "the reserved fd 1 is not open");
        assert_eq!(fdt_next_open_fd(h.0, 6), 900);
        assert_eq!(fdt_next_open_fd(h.0, c_int::MAX), e(libc::ENOENT));
        assert_eq!(fdt_next_open_fd(h.0, -1), e(libc::EINVAL));
        assert_eq!(fdt_next_open_fd(null(), 0), e(libc::EINVAL));
        // Above a lowered soft limit, still listed (as /proc lists them).
        assert_eq!(fdt_set_nofile(h.0, 10, 10), 0);
        assert_eq!(fdt_next_open_fd(h.0, 6), 900);
        fdt_put_unused_fd2(h.0, reserved);
    }
}

#[test]
fn install_at_is_replace_fd() {
    let h = H::new();
    let a = Probe::new(0, ALL);
    let fd = h.file(&a, FDT_O_RDWR);
    // SAFETY: a live handle; references handed over.
    unsafe {
        // At a free fd far up, close-on-exec.
        let b = Probe::new(1, ALL);
        assert_eq!(
            fdt_install_at(h.0, 700, c_file(&b, FDT_O_RDWR), FDT_O_CLOEXEC),
            700
        );
        assert_eq!(fdt_fcntl(h.0, 700, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
        let f = fget(h.0, 700);
        assert_eq!(c_probe(f).id, 1);
        fdt_file_put(f);
        // Over an open fd: what was there is flushed and closed.
        let c = Probe::new(2, ALL);
        assert_eq!(fdt_install_at(h.0, fd, c_file(&c, FDT_O_RDWR), 0), fd);
        assert_eq!((a.flushes(), a.releases()), (1, 1));
        assert_eq!(fdt_fcntl(h.0, fd, FDT_F_GETFD, 0), 0);
        // The kernel's errnos; the reference is put each time.
        let mut n = 10;
        let mut try_at = |fd: c_int, flags: c_uint| {
            n += 1;
            let d = Probe::new(n, ALL);
            let r = fdt_install_at(h.0, fd, c_file(&d, FDT_O_RDWR), flags);
            assert_eq!(
                (d.flushes(), d.releases()),
                (0, 1),
                "fd {fd}: put, not flushed"
            );
            r
        };
        assert_eq!(try_at(1024, 0), e(libc::EBADF), "at the soft limit");
        assert_eq!(try_at(-1, 0), e(libc::EBADF));
        assert_eq!(try_at(c_int::MAX, 0), e(libc::EBADF));
        assert_eq!(try_at(3, FDT_O_RDWR), e(libc::EINVAL), "flags");
        assert_eq!(try_at(3, 1 << 30), e(libc::EINVAL));
        let r = fdt_get_unused_fd(h.0, 0);
        assert_eq!(try_at(r, 0), e(libc::EBUSY), "reserved");
        assert_eq!(fdt_put_unused_fd2(h.0, r), 0, "still reserved, unchanged");
        let d = Probe::new(99, ALL);
        assert_eq!(
            fdt_install_at(null_mut(), 3, c_file(&d, FDT_O_RDWR), 0),
            e(libc::EINVAL)
        );
        assert_eq!(d.releases(), 1);
        assert_eq!(fdt_install_at(h.0, 3, null_mut(), 0), e(libc::EINVAL));
        // The same file again at its own fd: the old reference is closed (flushed) as dup2's.
        let f = fget(h.0, fd);
        assert_eq!(fdt_install_at(h.0, fd, f, 0), fd);
        assert_eq!((c.flushes(), c.releases()), (1, 0));
        // On a shared table the sharer sees it.
        let mut sib = null_mut();
        assert_eq!(fdt_files_share2(h.0, &mut sib), 0);
        let g = Probe::new(50, ALL);
        assert_eq!(fdt_install_at(sib, 8, c_file(&g, FDT_O_RDWR), 0), 8);
        assert_eq!(fdt_next_open_fd(h.0, 1), 8);
        fdt_files_put(sib);
    }
}

#[test]
fn has_ops_compares_the_ops_address() {
    let h = H::new();
    let p = Probe::new(0, ALL);
    let fd = h.file(&p, FDT_O_RDWR);
    let copy = *static_ops(ALL);
    // SAFETY: a live handle; the reference from fget is put.
    unsafe {
        let f = fget(h.0, fd);
        assert_eq!(fdt_file_has_ops(f, static_ops(ALL)), 1);
        assert_eq!(fdt_file_has_ops(f, static_ops(K_READ)), 0);
        assert_eq!(
            fdt_file_has_ops(f, &copy),
            0,
            "the address, not the contents"
        );
        assert_eq!(fdt_file_has_ops(f, null()), e(libc::EINVAL));
        assert_eq!(fdt_file_has_ops(null(), &copy), e(libc::EINVAL));
        fdt_file_put(f);
    }
}

#[test]
fn poll_reports_readiness_now() {
    let h = H::new();
    let ps: Vec<_> = (0..5).map(|i| Probe::new(i, ALL)).collect();
    let fds: Vec<c_int> = ps.iter().map(|p| h.file(p, FDT_O_RDWR)).collect();
    let nop = Probe::new(7, ALL & !K_POLL);
    let nopfd = h.file(&nop, FDT_O_RDWR);
    let pathfd = h.file(&Probe::new(8, ALL), FDT_O_PATH);
    let all = FDT_POLLIN | FDT_POLLOUT | FDT_POLLPRI | FDT_POLLRDNORM | FDT_POLLWRNORM;
    let mut v: Vec<fdt_pollfd> = fds
        .iter()
        .chain([&nopfd, &pathfd, &-1, &333])
        .map(|&fd| fdt_pollfd {
            fd,
            events: all,
            revents: 0x77,
        })
        .collect();
    // SAFETY: a live handle; `v` valid for its length.
    unsafe {
        assert_eq!(fdt_poll(h.0, v.as_mut_ptr(), v.len()), 7);
        let got: Vec<_> = v.iter().map(|p| p.revents).collect();
        assert_eq!(
            got,
            [
                FDT_POLLIN | FDT_POLLRDNORM,
                FDT_POLLOUT | FDT_POLLWRNORM,
                FDT_POLLIN | FDT_POLLHUP,
                FDT_POLLERR | FDT_POLLOUT,
                0,
                FDT_POLLIN | FDT_POLLOUT | FDT_POLLRDNORM | FDT_POLLWRNORM,
                FDT_POLLNVAL,
                0,
                FDT_POLLNVAL,
            ]
        );
        // Only the events asked for, and POLLERR / POLLHUP always.
        v[2].events = FDT_POLLOUT;
        v[3].events = 0;
        assert_eq!(fdt_poll(h.0, v[2..4].as_mut_ptr(), 2), 2);
        assert_eq!((v[2].revents, v[3].revents), (FDT_POLLHUP, FDT_POLLERR));
        // nfds against RLIMIT_NOFILE first, then the buffer.
        assert_eq!(fdt_poll(h.0, null_mut(), 0), 0);
        assert_eq!(fdt_poll(h.0, null_mut(), 3), e(libc::EFAULT));
        assert_eq!(fdt_poll(h.0, null_mut(), 1025), e(libc::EINVAL));
        assert_eq!(fdt_poll(null_mut(), v.as_mut_ptr(), 1), e(libc::EINVAL));
        // A `struct pollfd` array is accepted as is.
        let mut raw = [libc::pollfd {
            fd: fds[0],
            events: libc::POLLIN,
            revents: 0,
        }];
        assert_eq!(fdt_poll(h.0, raw.as_mut_ptr().cast(), 1), 1);
        assert_eq!(raw[0].revents, libc::POLLIN);
    }
}

/// A `getattr` that fails.
unsafe extern "C" fn failing_getattr(_pd: *mut c_void, _st: *mut fdt_stat) -> c_int {
    -libc::EIO
}

#[test]
fn fstat_reports_getattr() {
    let h = H::new();
    let reg = Probe::new(0, ALL); // id 0: a regular file of 100 bytes, blksize 4096
    let fd = h.file(&reg, FDT_O_RDWR);
    let pathfd = h.file(&Probe::new(1, ALL), FDT_O_PATH); // id 1: a pipe
    let plain = h.file(&Probe::new(2, ALL & !K_GETATTR), FDT_O_RDWR);
    let mut st = fdt_stat::default();
    // SAFETY: a live handle; valid structs.
    unsafe {
        assert_eq!(fdt_fstat(h.0, fd, &mut st), 0);
        assert_eq!(
            st,
            fdt_stat {
                mode: libc::S_IFREG | 0o644,
                nlink: 1,
                ino: 1000,
                size: 100,
                blocks: 0,
                rdev: 0,
                blksize: 4096,
                ..fdt_stat::default()
            }
        );
        assert_eq!(fdt_fstat(h.0, pathfd, &mut st), 0, "O_PATH files too");
        assert_eq!(st.mode, libc::S_IFIFO | 0o600);
        assert_eq!(fdt_fstat(h.0, plain, &mut st), 0);
        assert_eq!(st, fdt_stat::default());
        assert_eq!(fdt_fstat(h.0, 99, &mut st), e(libc::EBADF));
        assert_eq!(
            fdt_fstat(h.0, 99, null_mut()),
            e(libc::EBADF),
            "EBADF before EFAULT"
        );
        assert_eq!(fdt_fstat(h.0, fd, null_mut()), e(libc::EFAULT));
        assert_eq!(fdt_fstat(null_mut(), fd, &mut st), e(libc::EINVAL));
        // A regular file answers FIONREAD (size - position) and FIGETBSZ from its attributes.
        let mut n: c_int = -1;
        assert_eq!(fdt_lseek(h.0, fd, 30, FDT_SEEK_SET), 30);
        assert_eq!(fdt_ioctl(h.0, fd, FDT_FIONREAD, &raw mut n as c_ulong), 0);
        assert_eq!(n, 70);
        let mut bs: i64 = 0;
        assert_eq!(fdt_ioctl(h.0, fd, 2, &raw mut bs as c_ulong), 0, "FIGETBSZ");
        assert_eq!(bs as c_int, 4096);
        // The callback's error.
        let mut ops = c_ops(ALL);
        ops.getattr = Some(failing_getattr);
        let q = Probe::new(5, ALL);
        let mut f = null_mut();
        let pd = Arc::into_raw(q.clone()) as *mut c_void;
        assert_eq!(
            fdt_file_new2(&ops, size_of::<fdt_file_ops>(), pd, FDT_O_RDWR, &mut f),
            0
        );
        let bad = fdt_install(h.0, f, 0);
        assert_eq!(fdt_fstat(h.0, bad, &mut st), e(libc::EIO));
        assert_eq!(fdt_close(h.0, bad), 0);
        assert_eq!(q.releases(), 1);
    }
}

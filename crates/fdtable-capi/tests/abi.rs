//! The C ABI called from Rust: each function's errno cases (mirroring Linux), ownership
//! (release exactly once), the light lookup's flags, fork/share/unshare/exec, I/O through
//! callbacks. The C tests (`tests/c`, run by `ci/ctest`) cover the same ground from C.

// The legacy calls are tested here, beside their `...2` forms.
#![allow(deprecated)]

mod support;

use fdtable_capi::*;
use std::ffi::{c_int, c_long, c_ulong};
use std::ptr::null_mut;
use support::probe::*;

const ALL: u16 = K_READ | K_WRITE | K_IOCTL | K_COMPAT | K_FLUSH | K_LLSEEK;

fn e(errno: c_int) -> c_int {
    -errno
}

/// A table handle freed at the end of the test.
struct H(*mut fdt_files);

impl H {
    fn new() -> H {
        let p = fdt_files_new();
        assert!(!p.is_null());
        H(p)
    }
    /// Installs a new probe file of `kind`; returns the fd and its probe.
    fn file(&self, kind: u16, open: u32, flags: u32) -> (c_int, std::sync::Arc<Probe>) {
        let p = Probe::new(0, kind);
        // SAFETY: a live handle; a reference we own, handed over.
        let fd = unsafe { fdt_install(self.0, c_file(&p, open), flags) };
        assert!(fd >= 0, "install: {fd}");
        (fd, p)
    }
}

impl Drop for H {
    fn drop(&mut self) {
        // SAFETY: our handle, put once.
        unsafe { fdt_files_put(self.0) }
    }
}

#[test]
fn constants_are_the_kernels() {
    use fdtable_vfs::uapi;
    assert_eq!(FDT_O_RDONLY, uapi::O_RDONLY);
    assert_eq!(FDT_O_WRONLY, uapi::O_WRONLY);
    assert_eq!(FDT_O_RDWR, uapi::O_RDWR);
    assert_eq!(FDT_O_APPEND, uapi::O_APPEND);
    assert_eq!(FDT_O_NONBLOCK, uapi::O_NONBLOCK);
    assert_eq!(FDT_O_CLOEXEC, uapi::O_CLOEXEC);
    assert_eq!(FDT_O_CLOEXEC, libc::O_CLOEXEC as u32);
    assert_eq!(FDT_O_PATH, uapi::O_PATH);
    assert_eq!(FDT_FD_CLOEXEC, libc::FD_CLOEXEC);
    assert_eq!(FDT_F_DUPFD, libc::F_DUPFD);
    assert_eq!(FDT_F_GETFD, libc::F_GETFD);
    assert_eq!(FDT_F_SETFD, libc::F_SETFD);
    assert_eq!(FDT_F_GETFL, libc::F_GETFL);
    assert_eq!(FDT_F_SETFL, libc::F_SETFL);
    assert_eq!(FDT_F_DUPFD_CLOEXEC, libc::F_DUPFD_CLOEXEC);
    assert_eq!(FDT_F_DUPFD_QUERY, uapi::F_DUPFD_QUERY);
    assert_eq!(FDT_CLOSE_RANGE_UNSHARE, fdtable::CLOSE_RANGE_UNSHARE);
    assert_eq!(FDT_CLOSE_RANGE_CLOEXEC, fdtable::CLOSE_RANGE_CLOEXEC);
    assert_eq!(FDT_FIOCLEX, uapi::FIOCLEX);
    assert_eq!(FDT_FIONCLEX, uapi::FIONCLEX);
    assert_eq!(FDT_FIONBIO, uapi::FIONBIO);
    assert_eq!(FDT_FIOASYNC, uapi::FIOASYNC);
    assert_eq!(FDT_FIONREAD, uapi::FIONREAD);
    assert_eq!(FDT_FIOCLEX as c_ulong, libc::FIOCLEX);
    assert_eq!(FDT_SEEK_SET, libc::SEEK_SET);
    assert_eq!(FDT_SEEK_CUR, libc::SEEK_CUR);
    assert_eq!(FDT_SEEK_END, libc::SEEK_END);
    let (soft, hard) = fdtable_vfs::DEFAULT_NOFILE;
    assert_eq!(FDT_NOFILE_SOFT_DEFAULT, c_ulong::try_from(soft).unwrap());
    assert_eq!(FDT_NOFILE_HARD_DEFAULT, c_ulong::try_from(hard).unwrap());
}

#[test]
fn null_handles_and_files() {
    let n = null_mut();
    let mut nn: *mut fdt_files = null_mut();
    // SAFETY: every call is given NULL where a handle or file goes, which each must refuse.
    unsafe {
        fdt_files_put(n);
        assert!(fdt_files_fork(n).is_null());
        assert!(fdt_files_share(n).is_null());
        assert_eq!(fdt_unshare(null_mut()), e(libc::EINVAL));
        assert_eq!(fdt_unshare(&mut nn), e(libc::EINVAL));
        assert_eq!(fdt_exec(n), e(libc::EINVAL));
        assert_eq!(fdt_set_nofile(n, 1, 1), e(libc::EINVAL));
        assert_eq!(fdt_get_nofile(n, null_mut(), null_mut()), e(libc::EINVAL));
        assert!(fdt_file_new(std::ptr::null(), null_mut(), 0).is_null());
        fdt_file_get(null_mut());
        fdt_file_put(null_mut());
        assert!(fdt_file_private_data(std::ptr::null()).is_null());
        assert_eq!(fdt_file_count(std::ptr::null()), e(libc::EINVAL) as c_long);
        assert_eq!(fdt_install(n, null_mut(), 0), e(libc::EINVAL));
        assert_eq!(fdt_get_unused_fd(n, 0), e(libc::EINVAL));
        fdt_put_unused_fd(n, 0);
        fdt_fd_install(n, 0, null_mut());
        assert_eq!(fdt_close(n, 0), e(libc::EINVAL));
        assert_eq!(fdt_dup(n, 0), e(libc::EINVAL));
        assert_eq!(fdt_dup2(n, 0, 1), e(libc::EINVAL));
        assert_eq!(fdt_dup3(n, 0, 1, 0), e(libc::EINVAL));
        assert_eq!(fdt_fcntl(n, 0, FDT_F_GETFD, 0), e(libc::EINVAL));
        assert_eq!(fdt_close_range(n, 0, 10, 0), e(libc::EINVAL));
        let f = fdt_fdget(n, 0);
        assert!(fdt_fd_file(f).is_null());
        assert_eq!(f.flags, 0);
        fdt_fdput(f);
        assert!(fdt_fget(n, 0).is_null());
        let mut b = [0u8; 4];
        assert_eq!(
            fdt_read(n, 0, b.as_mut_ptr().cast(), 4),
            -(libc::EINVAL as isize)
        );
        assert_eq!(
            fdt_write(n, 0, b.as_ptr().cast(), 4),
            -(libc::EINVAL as isize)
        );
        assert_eq!(
            fdt_pread(n, 0, b.as_mut_ptr().cast(), 4, 0),
            -(libc::EINVAL as isize)
        );
        assert_eq!(
            fdt_pwrite(n, 0, b.as_ptr().cast(), 4, 0),
            -(libc::EINVAL as isize)
        );
        assert_eq!(fdt_lseek(n, 0, 0, 0), -(libc::EINVAL as i64));
        assert_eq!(fdt_ioctl(n, 0, FDT_FIOCLEX, 0), -(libc::EINVAL as c_long));
        assert_eq!(
            fdt_compat_ioctl(n, 0, FDT_FIOCLEX, 0),
            -(libc::EINVAL as c_long)
        );
    }
}

#[test]
fn install_consumes_the_reference_also_on_failure() {
    let p = Probe::new(0, ALL);
    let f = c_file(&p, FDT_O_RDWR);
    // SAFETY: NULL handle; our reference, handed over.
    assert_eq!(unsafe { fdt_install(null_mut(), f, 0) }, e(libc::EINVAL));
    assert_eq!(p.releases(), 1, "released by the failed install");

    let h = H::new();
    // SAFETY: a live handle.
    assert_eq!(unsafe { fdt_set_nofile(h.0, 1, 1) }, 0);
    let (fd, p0) = h.file(ALL, FDT_O_RDWR, 0);
    assert_eq!(fd, 0);
    let p = Probe::new(1, ALL);
    // SAFETY: a live handle; our reference, handed over.
    let r = unsafe { fdt_install(h.0, c_file(&p, FDT_O_RDWR), 0) };
    assert_eq!(r, e(libc::EMFILE));
    assert_eq!(p.releases(), 1, "released by the EMFILE install");
    assert_eq!(p0.releases(), 0);
    drop(h);
    assert_eq!(
        (p0.flushes(), p0.releases()),
        (1, 1),
        "the last put closes fd 0"
    );
}

#[test]
fn reserve_then_install() {
    let h = H::new();
    // SAFETY: a live handle throughout; references handed over.
    unsafe {
        let fd = fdt_get_unused_fd(h.0, FDT_O_CLOEXEC);
        assert_eq!(fd, 0);
        assert!(
            fdt_fd_file(fdt_fdget(h.0, fd)).is_null(),
            "reserved: not open"
        );
        assert_eq!(
            fdt_close(h.0, fd),
            e(libc::EBADF),
            "reserved: close is EBADF"
        );
        let (other, _po) = h.file(ALL, FDT_O_RDWR, 0);
        assert_eq!(other, 1, "reserved fds are skipped");
        assert_eq!(fdt_dup2(h.0, other, fd), e(libc::EBUSY));
        let p = Probe::new(0, ALL);
        fdt_fd_install(h.0, fd, c_file(&p, FDT_O_RDWR));
        assert_eq!(fdt_fcntl(h.0, fd, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
        // Installing on a free fd drops the reference.
        let q = Probe::new(1, ALL);
        fdt_fd_install(h.0, 7, c_file(&q, FDT_O_RDWR));
        assert_eq!(q.releases(), 1);
        assert_eq!(fdt_fcntl(h.0, 7, FDT_F_GETFD, 0), e(libc::EBADF));
        // Giving a reservation back.
        let r = fdt_get_unused_fd(h.0, 0);
        assert_eq!(r, 2);
        fdt_put_unused_fd(h.0, r);
        fdt_put_unused_fd(h.0, -1);
        fdt_put_unused_fd(h.0, 1 << 30);
        fdt_put_unused_fd(h.0, fd); // installed: untouched
        assert_eq!(fdt_fcntl(h.0, fd, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
        assert_eq!(fdt_get_unused_fd(h.0, 0), 2, "given back");
        // EMFILE when full.
        assert_eq!(fdt_set_nofile(h.0, 3, 3), 0);
        assert_eq!(fdt_get_unused_fd(h.0, 0), e(libc::EMFILE));
    }
}

#[test]
fn dup_family_errnos() {
    let h = H::new();
    let (fd, p) = h.file(ALL, FDT_O_RDWR, 0);
    // SAFETY: a live handle throughout.
    unsafe {
        assert_eq!(fdt_dup(h.0, fd), 1);
        assert_eq!(fdt_dup(h.0, 55), e(libc::EBADF));
        assert_eq!(fdt_dup(h.0, -1), e(libc::EBADF));
        assert_eq!(fdt_dup2(h.0, fd, 1023), 1023);
        assert_eq!(
            fdt_dup2(h.0, fd, 1024),
            e(libc::EBADF),
            "dup2 past the limit"
        );
        assert_eq!(fdt_dup2(h.0, fd, -5), e(libc::EBADF));
        assert_eq!(fdt_dup2(h.0, 77, 5), e(libc::EBADF));
        assert_eq!(fdt_dup2(h.0, fd, fd), fd);
        assert_eq!(fdt_dup2(h.0, 77, 77), e(libc::EBADF));
        assert_eq!(fdt_dup3(h.0, fd, fd, 0), e(libc::EINVAL));
        assert_eq!(fdt_dup3(h.0, fd, 5, 1), e(libc::EINVAL), "dup3 flags");
        assert_eq!(fdt_dup3(h.0, fd, 5, FDT_O_CLOEXEC as c_int), 5);
        assert_eq!(fdt_fcntl(h.0, 5, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
        assert_eq!(
            fdt_fcntl(h.0, fd, FDT_F_DUPFD, 1024),
            e(libc::EINVAL),
            "F_DUPFD past it"
        );
        assert_eq!(fdt_fcntl(h.0, fd, FDT_F_DUPFD, 1000), 1000);
        assert_eq!(fdt_fcntl(h.0, fd, FDT_F_DUPFD_CLOEXEC, 1000), 1001);
        assert_eq!(fdt_fcntl(h.0, 1001, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
        assert_eq!(fdt_fcntl(h.0, fd, FDT_F_DUPFD_QUERY, 1001), 1);
        assert_eq!(fdt_fcntl(h.0, fd, 9999, 0), e(libc::EINVAL));
        assert_eq!(fdt_fcntl(h.0, 9999, FDT_F_GETFD, 0), e(libc::EBADF));
        assert_eq!(fdt_fcntl(h.0, fd, FDT_F_GETFL, 0), FDT_O_RDWR as c_int);
        assert_eq!(
            fdt_fcntl(
                h.0,
                fd,
                FDT_F_SETFL,
                (FDT_O_NONBLOCK | FDT_O_APPEND) as c_ulong
            ),
            0
        );
        assert_eq!(
            fdt_fcntl(h.0, fd, FDT_F_GETFL, 0),
            (FDT_O_RDWR | FDT_O_NONBLOCK | FDT_O_APPEND) as c_int
        );
        // dup2 over an open fd flushes what it displaces.
        let (other, q) = h.file(ALL, FDT_O_RDWR, 0);
        assert_eq!(fdt_dup2(h.0, fd, other), other);
        assert_eq!((q.flushes(), q.releases()), (1, 1));
        assert_eq!(fdt_close(h.0, 1000), 0);
        assert_eq!(fdt_close(h.0, 1000), e(libc::EBADF));
        assert_eq!(p.releases(), 0);
        // Fill the table: EMFILE from dup, F_DUPFD.
        assert_eq!(fdt_set_nofile(h.0, 8, 8), 0);
        while fdt_dup(h.0, fd) >= 0 {}
        assert_eq!(fdt_dup(h.0, fd), e(libc::EMFILE));
        assert_eq!(fdt_fcntl(h.0, fd, FDT_F_DUPFD, 0), e(libc::EMFILE));
        assert_eq!(fdt_fcntl(h.0, fd, FDT_F_DUPFD, 8), e(libc::EINVAL));
    }
    drop(h);
    assert_eq!(p.releases(), 1);
}

#[test]
fn close_flush_error_and_close_range() {
    let h = H::new();
    let (fd, p) = h.file(ALL | K_FLUSH_FAILS, FDT_O_RDWR, 0);
    // SAFETY: a live handle throughout.
    unsafe {
        assert_eq!(fdt_close(h.0, fd), e(libc::EIO), "flush's error");
        assert_eq!(fdt_close(h.0, fd), e(libc::EBADF), "closed anyway");
        assert_eq!((p.flushes(), p.releases()), (1, 1));

        let (a, q) = h.file(ALL, FDT_O_RDWR, 0);
        for i in 1..10 {
            assert_eq!(fdt_dup2(h.0, a, i), i);
        }
        assert_eq!(fdt_close_range(h.0, 5, 4, 0), e(libc::EINVAL));
        assert_eq!(fdt_close_range(h.0, 0, 10, 8), e(libc::EINVAL));
        assert_eq!(fdt_close_range(h.0, 3, 5, FDT_CLOSE_RANGE_CLOEXEC), 0);
        assert_eq!(fdt_fcntl(h.0, 4, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
        assert_eq!(fdt_close_range(h.0, 6, u32::MAX, 0), 0);
        assert_eq!(fdt_fcntl(h.0, 9, FDT_F_GETFD, 0), e(libc::EBADF));
        assert_eq!(q.flushes(), 4);
        assert_eq!(fdt_exec(h.0), 0);
        assert_eq!(fdt_fcntl(h.0, 4, FDT_F_GETFD, 0), e(libc::EBADF));
        assert_eq!(fdt_fcntl(h.0, 2, FDT_F_GETFD, 0), 0, "kept across exec");
        assert_eq!(q.releases(), 0);
        assert_eq!(
            fdt_close_range(h.0, 0, u32::MAX, FDT_CLOSE_RANGE_UNSHARE),
            0
        );
        assert_eq!(q.releases(), 1);
    }
}

#[test]
fn light_lookup_borrows_until_shared() {
    let h = H::new();
    let (fd, p) = h.file(ALL, FDT_O_RDWR, 0);
    // SAFETY: a live handle throughout; each lookup put once, before any closing call.
    unsafe {
        let f = fdt_fdget(h.0, fd);
        assert!(!fdt_fd_file(f).is_null());
        assert_eq!(f.flags, 0, "unshared: borrowed");
        assert_eq!(fdt_file_count(fdt_fd_file(f)), 1);
        assert_eq!(c_probe(fdt_fd_file(f)).id, p.id);
        fdt_fdput(f);
        for bad in [-1, 1, 64, 1 << 20, c_int::MAX] {
            let f = fdt_fdget(h.0, bad);
            assert!(fdt_fd_file(f).is_null());
            fdt_fdput(f);
        }
        let sib = fdt_files_share(h.0);
        assert!(!sib.is_null());
        let f = fdt_fdget(h.0, fd);
        assert_eq!(f.flags, FDT_FDPUT_FPUT, "shared: a reference");
        assert_eq!(fdt_file_count(fdt_fd_file(f)), 2);
        // The sibling closes it; our lookup keeps the file alive until fdput.
        assert_eq!(fdt_close(sib, fd), 0);
        assert_eq!(p.releases(), 0);
        fdt_fdput(f);
        assert_eq!(p.releases(), 1, "released by fdput");
        fdt_files_put(sib);
        // Unshared again: borrowed.
        let (fd2, _q) = h.file(ALL, FDT_O_RDWR, 0);
        let f = fdt_fdget(h.0, fd2);
        assert_eq!(f.flags, 0);
        fdt_fdput(f);
        // An O_PATH file is refused by fdget and fget.
        let (pf, _r) = h.file(ALL, FDT_O_PATH, 0);
        assert!(fdt_fd_file(fdt_fdget(h.0, pf)).is_null());
        assert!(fdt_fget(h.0, pf).is_null());
        assert_eq!(fdt_fcntl(h.0, pf, FDT_F_GETFL, 0), FDT_O_PATH as c_int);
    }
}

#[test]
fn fget_and_file_refs() {
    let h = H::new();
    let (fd, p) = h.file(ALL, FDT_O_RDWR, 0);
    // SAFETY: a live handle; every reference we take is put once.
    unsafe {
        let f = fdt_fget(h.0, fd);
        assert!(!f.is_null());
        assert_eq!(fdt_file_count(f), 2);
        fdt_file_get(f);
        assert_eq!(fdt_file_count(f), 3);
        assert_eq!(fdt_close(h.0, fd), 0);
        assert!(fdt_fget(h.0, fd).is_null());
        fdt_file_put(f);
        assert_eq!(p.releases(), 0);
        // Install the reference again elsewhere.
        assert_eq!(fdt_install(h.0, f, 0), 0);
        assert_eq!(p.releases(), 0);
        assert_eq!(fdt_close(h.0, 0), 0);
        assert_eq!(p.releases(), 1);
    }
    // An unknown ops flag makes fdt_file_new fail without calling release.
    let q = Probe::new(9, ALL);
    let mut ops = c_ops(ALL);
    ops.flags = 0x80;
    // SAFETY: a valid ops struct; private data is ours again on failure.
    let f = unsafe { fdt_file_new(&ops, std::sync::Arc::as_ptr(&q).cast_mut().cast(), 0) };
    assert!(f.is_null());
    assert_eq!(q.releases(), 0);
}

#[test]
fn fork_share_unshare_exec() {
    let h = H::new();
    let (fd, p) = h.file(ALL, FDT_O_RDWR, 0);
    let (cx, q) = h.file(ALL, FDT_O_RDWR, FDT_O_CLOEXEC);
    // SAFETY: live handles throughout, each put once.
    unsafe {
        let r = fdt_get_unused_fd(h.0, 0);
        let child = fdt_files_fork(h.0);
        assert!(!child.is_null());
        let f = fdt_fget(child, fd);
        assert_eq!(fdt_file_count(f), 3, "parent, child, and ours");
        fdt_file_put(f);
        assert!(
            fdt_fd_file(fdt_fdget(child, r)).is_null(),
            "reservation not copied"
        );
        assert_eq!(fdt_get_unused_fd(child, 0), r, "free in the child");
        assert_eq!(fdt_fcntl(child, cx, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
        assert_eq!(fdt_close(h.0, fd), 0);
        assert_eq!(fdt_fcntl(child, fd, FDT_F_GETFD, 0), 0, "a copy");
        // The child's own limit.
        assert_eq!(fdt_set_nofile(child, 2, 2), 0);
        let (mut s, mut hh) = (0, 0);
        assert_eq!(fdt_get_nofile(h.0, &mut s, &mut hh), 0);
        assert_eq!((s, hh), (1024, 4096));
        assert_eq!(fdt_exec(child), 0);
        assert_eq!(q.flushes(), 1);
        assert_eq!(fdt_fcntl(child, cx, FDT_F_GETFD, 0), e(libc::EBADF));
        fdt_files_put(child);
        assert_eq!(p.releases(), 1);

        // CLONE_FILES: both see changes; own rlimits.
        let sib = fdt_files_share(h.0);
        assert_eq!(fdt_set_nofile(sib, 4, 4), 0);
        assert_eq!(fdt_get_nofile(h.0, &mut s, null_mut()), 0);
        assert_eq!(s, 1024, "rlimit copied, not shared");
        let d = fdt_dup(h.0, cx);
        assert_eq!(fdt_fcntl(sib, d, FDT_F_GETFD, 0), 0);
        let mut sp = sib;
        assert_eq!(fdt_unshare(&mut sp), 0);
        assert_eq!(sp, sib);
        assert_eq!(fdt_close(h.0, d), 0);
        assert_eq!(
            fdt_fcntl(sib, d, FDT_F_GETFD, 0),
            0,
            "unshared: its own copy"
        );
        // exec on a shared table unshares first.
        let sib2 = fdt_files_share(sib);
        assert_eq!(fdt_exec(sib), 0);
        assert_eq!(
            fdt_fcntl(sib2, cx, FDT_F_GETFD, 0),
            FDT_FD_CLOEXEC,
            "the sharer keeps it"
        );
        assert_eq!(fdt_fcntl(sib, cx, FDT_F_GETFD, 0), e(libc::EBADF));
        fdt_files_put(sib);
        fdt_files_put(sib2);
    }
    drop(h);
    assert_eq!(q.releases(), 1);
}

#[test]
fn nofile_limits() {
    let h = H::new();
    // SAFETY: a live handle.
    unsafe {
        assert_eq!(fdt_set_nofile(h.0, 5, 4), e(libc::EINVAL));
        assert_eq!(fdt_set_nofile(h.0, 5, c_ulong::MAX), e(libc::EPERM));
        assert_eq!(fdt_set_nofile(h.0, 0, 0), 0);
        assert_eq!(fdt_get_unused_fd(h.0, 0), e(libc::EMFILE));
    }
}

#[test]
fn read_write_lseek_through_callbacks() {
    let h = H::new();
    let (fd, _p) = h.file(ALL, FDT_O_RDWR, 0);
    let (ro, _q) = h.file(ALL, FDT_O_RDONLY, 0);
    let (nop, _r) = h.file(K_FLUSH, FDT_O_RDWR, 0);
    let (st, _s) = h.file(ALL | K_STREAM, FDT_O_RDWR, 0);
    let mut b = [0u8; 8];
    // SAFETY: a live handle; buffers valid for their lengths.
    unsafe {
        assert_eq!(fdt_read(h.0, fd, b.as_mut_ptr().cast(), 8), 5);
        assert_eq!(b[..5], [0, 1, 2, 3, 4]);
        assert_eq!(fdt_lseek(h.0, fd, 0, FDT_SEEK_CUR), 5);
        assert_eq!(fdt_write(h.0, fd, b.as_ptr().cast(), 8), 3);
        assert_eq!(fdt_lseek(h.0, fd, 0, FDT_SEEK_CUR), 8);
        assert_eq!(fdt_pread(h.0, fd, b.as_mut_ptr().cast(), 2, 100), 2);
        assert_eq!(b[..2], [100, 101]);
        assert_eq!(
            fdt_lseek(h.0, fd, 0, FDT_SEEK_CUR),
            8,
            "pread leaves the position"
        );
        assert_eq!(
            fdt_pread(h.0, fd, b.as_mut_ptr().cast(), 2, -1),
            -(libc::EINVAL as isize)
        );
        assert_eq!(fdt_pwrite(h.0, fd, b.as_ptr().cast(), 2, 3), 2);
        assert_eq!(fdt_lseek(h.0, fd, -1, FDT_SEEK_SET), -(libc::EINVAL as i64));
        assert_eq!(fdt_lseek(h.0, fd, 0, 9), -(libc::EINVAL as i64));
        assert_eq!(fdt_lseek(h.0, fd, 1, FDT_SEEK_END), 101);
        assert_eq!(fdt_lseek(h.0, nop, 0, FDT_SEEK_SET), -(libc::ESPIPE as i64));
        assert_eq!(
            fdt_write(h.0, ro, b.as_ptr().cast(), 1),
            -(libc::EBADF as isize)
        );
        assert_eq!(
            fdt_read(h.0, nop, b.as_mut_ptr().cast(), 1),
            -(libc::EINVAL as isize),
            "no read op"
        );
        assert_eq!(
            fdt_write(h.0, nop, b.as_ptr().cast(), 1),
            -(libc::EINVAL as isize),
            "no write op"
        );
        assert_eq!(fdt_read(h.0, fd, null_mut(), 4), -(libc::EFAULT as isize));
        assert_eq!(fdt_read(h.0, 99, null_mut(), 4), -(libc::EBADF as isize));
        assert_eq!(fdt_read(h.0, nop, null_mut(), 4), -(libc::EINVAL as isize));
        assert_eq!(
            fdt_write(h.0, fd, std::ptr::null(), 4),
            -(libc::EFAULT as isize)
        );
        assert_eq!(fdt_read(h.0, fd, null_mut(), 0), 0);
        assert_eq!(
            fdt_pread(h.0, st, b.as_mut_ptr().cast(), 1, 0),
            -(libc::ESPIPE as isize)
        );
        assert_eq!(
            fdt_pwrite(h.0, st, std::ptr::null(), 1, 0),
            -(libc::ESPIPE as isize)
        );
        assert_eq!(
            fdt_read(h.0, st, b.as_mut_ptr().cast(), 8),
            5,
            "a stream reads at 0"
        );
        assert_eq!(b[..5], [0, 1, 2, 3, 4]);
        assert_eq!(fdt_read(h.0, st, b.as_mut_ptr().cast(), 8), 5);
        assert_eq!(b[..5], [0, 1, 2, 3, 4], "and has no position");
    }
}

#[test]
fn ioctls() {
    let h = H::new();
    let (fd, _p) = h.file(ALL, FDT_O_RDWR, 0);
    let (nop, _q) = h.file(0, FDT_O_RDWR, 0);
    let mut on: c_int = 1;
    // SAFETY: a live handle; pointer arguments are NULL or valid ints.
    unsafe {
        assert_eq!(fdt_ioctl(h.0, fd, PROBE_IOC, 41), 42);
        assert_eq!(fdt_ioctl(h.0, fd, 0x7777, 0), -(libc::ENOTTY as c_long));
        assert_eq!(fdt_ioctl(h.0, nop, PROBE_IOC, 0), -(libc::ENOTTY as c_long));
        assert_eq!(fdt_ioctl(h.0, 55, PROBE_IOC, 0), -(libc::EBADF as c_long));
        assert_eq!(fdt_ioctl(h.0, fd, FDT_FIOCLEX, 0), 0);
        assert_eq!(fdt_fcntl(h.0, fd, FDT_F_GETFD, 0), FDT_FD_CLOEXEC);
        assert_eq!(fdt_ioctl(h.0, fd, FDT_FIONCLEX, 0), 0);
        assert_eq!(fdt_fcntl(h.0, fd, FDT_F_GETFD, 0), 0);
        assert_eq!(fdt_ioctl(h.0, fd, FDT_FIONBIO, &raw mut on as c_ulong), 0);
        assert_eq!(
            fdt_fcntl(h.0, fd, FDT_F_GETFL, 0),
            (FDT_O_RDWR | FDT_O_NONBLOCK) as c_int
        );
        assert_eq!(
            fdt_ioctl(h.0, fd, FDT_FIONBIO, 0),
            -(libc::EFAULT as c_long)
        );
        assert_eq!(
            fdt_ioctl(h.0, fd, FDT_FIOASYNC, &raw mut on as c_ulong),
            -(libc::ENOTTY as c_long)
        );
        assert_eq!(
            fdt_ioctl(h.0, fd, FDT_FIONREAD, 7),
            -(libc::ENOTTY as c_long),
            "to the callback"
        );
        // A callback's value outside -4095..-1 is a value.
        assert_eq!(fdt_ioctl(h.0, fd, PROBE_IOC, (-5000i64) as c_ulong), -4999);
        assert_eq!(
            fdt_ioctl(h.0, fd, PROBE_IOC, (-6i64) as c_ulong),
            -5,
            "-EIO"
        );
        // compat: the low 32 bits; pointer commands fault.
        assert_eq!(fdt_compat_ioctl(h.0, fd, 0x9, 0x1_0000_0007), 7);
        assert_eq!(
            fdt_compat_ioctl(h.0, fd, FDT_FIONBIO, &raw mut on as c_ulong),
            -(libc::EFAULT as c_long)
        );
        assert_eq!(fdt_compat_ioctl(h.0, fd, FDT_FIOCLEX, 0), 0);
        assert_eq!(
            fdt_compat_ioctl(h.0, nop, 0x9, 0),
            -(libc::ENOTTY as c_long)
        );
    }
}

#[test]
fn private_data_round_trips() {
    let h = H::new();
    let (fd, p) = h.file(ALL, FDT_O_RDWR, 0);
    // SAFETY: a live handle; the lookup is put before anything closes.
    unsafe {
        let f = fdt_fdget(h.0, fd);
        assert_eq!(
            fdt_file_private_data(fdt_fd_file(f)),
            std::sync::Arc::as_ptr(&p).cast_mut().cast()
        );
        fdt_fdput(f);
    }
}

//! The 0.4 calls from Rust: the atomic renumber (`fdt_renumber`, `fdt_renumber_onto`), the
//! per-fd payload (install with one, read, set, compare-and-swap, the lookup that returns it
//! with the file), and the owned reservation (`fdt_reserve_owned`), each with its errors and
//! NULL arguments, and the rights check racing renumbers on a shared table.
//! `tests/c/test_parity.c` covers the same from C.

mod support;

use fdtable_capi::*;
use std::ffi::c_int;
use std::ptr::{dangling_mut, null, null_mut};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use support::probe::*;

const NOFILE: c_int = FDT_NOFILE_SOFT_DEFAULT as c_int;

fn e(errno: c_int) -> c_int {
    -errno
}

/// A table handle freed at the end of the test.
struct H(*mut fdt_files);

// SAFETY: a handle may move to another thread (the header's THREADS rule); each test uses one
// handle on one thread at a time.
unsafe impl Send for H {}

impl H {
    fn new() -> H {
        H(fdt_files_new())
    }
    /// A new file for `p` installed with `payload`.
    fn file(&self, p: &Arc<Probe>, payload: u64) -> c_int {
        // SAFETY: a live handle; a reference we own, handed over.
        let fd = unsafe { fdt_install_with(self.0, c_file(p, FDT_O_RDWR), 0, payload) };
        assert!(fd >= 0, "install: {fd}");
        fd
    }
    fn payload(&self, fd: c_int) -> Result<u64, c_int> {
        let mut p = 0xdead;
        // SAFETY: a live handle; `p` is a local.
        match unsafe { fdt_fd_payload(self.0, fd, &mut p) } {
            0 => Ok(p),
            r => {
                assert_eq!(p, 0, "0 on failure");
                Err(r)
            }
        }
    }
    /// The file id and payload `fdt_fdget_with_payload` finds, and whether it took a
    /// reference.
    fn lookup(&self, fd: c_int) -> Result<(usize, u64, bool), c_int> {
        let mut f = fdt_fd {
            file: dangling_mut(),
            flags: 7,
        };
        let mut p = 0xdead;
        // SAFETY: a live handle; locals.
        let r = unsafe { fdt_fdget_with_payload(self.0, fd, &mut f, &mut p) };
        if r != 0 {
            assert!(
                f.file.is_null() && f.flags == 0 && p == 0,
                "the empty result"
            );
            return Err(r);
        }
        // SAFETY: the lookup's file is live until `fdt_fdput`.
        let id = unsafe { c_probe(f.file) }.id;
        let owned = f.flags == FDT_FDPUT_FPUT;
        // SAFETY: the unchanged result, put once.
        unsafe { fdt_fdput(f) };
        Ok((id, p, owned))
    }
}

impl Drop for H {
    fn drop(&mut self) {
        // SAFETY: our handle, put once.
        unsafe { fdt_files_put(self.0) }
    }
}

#[test]
fn renumber_moves_the_file_and_its_payload_in_one_step() {
    let h = H::new();
    let (a, b) = (Probe::new(1, K_FLUSH), Probe::new(2, K_FLUSH));
    let fa = h.file(&a, 0xa);
    let fb = h.file(&b, 0xb);
    // SAFETY: a live handle throughout.
    unsafe {
        assert_eq!(fdt_fcntl(h.0, fa, FDT_F_SETFD, FDT_FD_CLOEXEC as _), 0);
        assert_eq!(fdt_renumber(h.0, fa, 40), 40);
        assert_eq!(fdt_fcntl(h.0, 40, FDT_F_GETFD, 0), 0, "close-on-exec clear");
    }
    assert_eq!(h.payload(40), Ok(0xa));
    assert_eq!(h.payload(fa), Err(e(libc::EBADF)));
    assert_eq!(a.flushes(), 0, "the moved file is not flushed");
    // Onto an open fd: what was there is closed (flushed, released).
    // SAFETY: a live handle.
    assert_eq!(unsafe { fdt_renumber_onto(h.0, 40, fb) }, fb);
    assert_eq!(h.lookup(fb), Ok((1, 0xa, false)));
    assert_eq!((b.flushes(), b.releases()), (1, 1));
    // SAFETY: a live handle (and NULL).
    unsafe {
        assert_eq!(fdt_renumber(h.0, fb, fb), fb, "same fd, open");
        assert_eq!(fdt_renumber(h.0, 40, 40), e(libc::EBADF), "same fd, closed");
        assert_eq!(fdt_renumber(h.0, 40, 41), e(libc::EBADF), "from closed");
        assert_eq!(fdt_renumber(h.0, fb, -1), e(libc::EBADF));
        assert_eq!(fdt_renumber(h.0, fb, NOFILE), e(libc::EBADF));
        assert_eq!(fdt_renumber(h.0, -1, 5), e(libc::EBADF));
        assert_eq!(fdt_renumber(null_mut(), fb, 5), e(libc::EINVAL));
        assert_eq!(fdt_renumber_onto(null_mut(), fb, fb), e(libc::EINVAL));
        // renumber_onto needs an open target.
        assert_eq!(fdt_renumber_onto(h.0, fb, 7), e(libc::EBADF));
        assert_eq!(fdt_renumber_onto(h.0, fb, c_int::MAX), e(libc::EBADF));
    }
    assert_eq!(h.lookup(fb), Ok((1, 0xa, false)), "failures change nothing");
    assert_eq!(h.lookup(7), Err(e(libc::EBADF)));
}

#[test]
fn a_reserved_target_is_ebusy_for_renumber_and_ebadf_for_renumber_onto() {
    let h = H::new();
    let a = Probe::new(1, 0);
    let fa = h.file(&a, 1);
    // SAFETY: a live handle; a local out-parameter.
    unsafe {
        let r = fdt_get_unused_fd(h.0, 0);
        assert_eq!(fdt_renumber(h.0, fa, r), e(libc::EBUSY));
        assert_eq!(fdt_renumber_onto(h.0, fa, r), e(libc::EBADF));
        assert_eq!(fdt_put_unused_fd2(h.0, r), 0, "still reserved");
        let mut res = null_mut();
        let o = fdt_reserve_owned(h.0, 0, &mut res);
        assert!(o >= 0);
        assert_eq!(fdt_renumber(h.0, fa, o), e(libc::EBUSY));
        assert_eq!(fdt_renumber_onto(h.0, fa, o), e(libc::EBADF));
        fdt_reservation_release(res);
        assert_eq!(fdt_renumber(h.0, fa, o), o, "given back: free");
    }
    assert_eq!(a.releases(), 0);
}

#[test]
fn payloads_are_per_descriptor_and_copied_as_the_kernel_copies_per_fd_state() {
    let h = H::new();
    let probes: std::cell::RefCell<Vec<Arc<Probe>>> = Default::default();
    // A new file (its own probe: each is released once), with one reference for the caller.
    let new = |flags| {
        let p = Probe::new(probes.borrow().len(), 0);
        probes.borrow_mut().push(p.clone());
        c_file(&p, flags)
    };
    // SAFETY: a live handle; references handed over.
    let fd = unsafe { fdt_install(h.0, new(FDT_O_RDWR), 0) };
    assert_eq!(h.payload(fd), Ok(0), "0 unless installed with one");
    // SAFETY: a live handle throughout.
    unsafe {
        assert_eq!(fdt_set_fd_payload(h.0, fd, u64::MAX), 0);
        let d = fdt_dup(h.0, fd);
        let f = fdt_fcntl(h.0, fd, FDT_F_DUPFD, 30);
        assert_eq!(fdt_dup2(h.0, fd, 20), 20);
        assert_eq!(fdt_dup3(h.0, fd, 21, FDT_O_CLOEXEC as c_int), 21);
        for x in [d, f, 20, 21] {
            assert_eq!(h.payload(x), Ok(u64::MAX), "copied to fd {x}");
        }
        // Per descriptor: setting one leaves the others (same file) alone.
        assert_eq!(fdt_set_fd_payload(h.0, d, 7), 0);
        assert_eq!(h.payload(fd), Ok(u64::MAX));
        let mut child = null_mut();
        assert_eq!(fdt_files_fork2(h.0, &mut child), 0);
        let child = H(child);
        assert_eq!(child.payload(d), Ok(7), "fork copies payloads");
        assert_eq!(fdt_close(h.0, d), 0);
        assert_eq!(h.payload(d), Err(e(libc::EBADF)));
        // A new descriptor at the same number starts from 0 again.
        let again = fdt_install(h.0, new(FDT_O_RDWR), 0);
        assert_eq!((again, h.payload(again)), (d, Ok(0)));
        // install_at_with and fd_install_with.
        assert_eq!(fdt_install_at_with(h.0, 50, new(FDT_O_RDWR), 0, 5), 50);
        assert_eq!(h.payload(50), Ok(5));
        assert_eq!(
            fdt_install_at_with(h.0, 50, new(FDT_O_RDWR), FDT_O_RDWR, 6),
            e(libc::EINVAL),
            "flags other than O_CLOEXEC"
        );
        assert_eq!(h.payload(50), Ok(5), "unchanged on failure");
        let r = fdt_get_unused_fd(h.0, 0);
        assert_eq!(fdt_fd_install_with(h.0, r, new(FDT_O_RDWR), 9), 0);
        assert_eq!(h.payload(r), Ok(9));
        assert_eq!(
            fdt_fd_install_with(h.0, r, new(FDT_O_RDWR), 9),
            e(libc::EBADF),
            "not reserved any more"
        );
        // Errors and NULL arguments.
        assert_eq!(h.payload(-1), Err(e(libc::EBADF)));
        assert_eq!(h.payload(999), Err(e(libc::EBADF)));
        let g = fdt_get_unused_fd(h.0, 0);
        assert_eq!(h.payload(g), Err(e(libc::EBADF)), "reserved: not open");
        assert_eq!(fdt_set_fd_payload(h.0, g, 1), e(libc::EBADF));
        assert_eq!(fdt_fd_payload(h.0, fd, null_mut()), e(libc::EINVAL));
        let mut v = 3;
        assert_eq!(fdt_fd_payload(null(), fd, &mut v), e(libc::EINVAL));
        assert_eq!(v, 0);
        assert_eq!(fdt_set_fd_payload(null_mut(), fd, 1), e(libc::EINVAL));
        assert_eq!(fdt_install_with(null_mut(), new(0), 0, 1), e(libc::EINVAL));
        assert_eq!(fdt_install_with(h.0, null_mut(), 0, 1), e(libc::EINVAL));
        assert_eq!(fdt_fd_install_with(h.0, g, null_mut(), 1), e(libc::EINVAL));
        assert_eq!(
            fdt_install_at_with(h.0, 5, null_mut(), 0, 1),
            e(libc::EINVAL)
        );
    }
    drop(h);
    for p in probes.borrow().iter() {
        assert_eq!(p.releases(), 1, "file {}: every reference given back", p.id);
    }
}

#[test]
fn cmpxchg_follows_c11_compare_exchange() {
    let h = H::new();
    let p = Probe::new(1, 0);
    let fd = h.file(&p, 0b111);
    let mut expected = 0b111;
    // SAFETY: a live handle and locals throughout.
    unsafe {
        assert_eq!(fdt_cmpxchg_fd_payload(h.0, fd, &mut expected, 0b101), 1);
        assert_eq!(expected, 0b111, "untouched when replaced");
        assert_eq!(fdt_cmpxchg_fd_payload(h.0, fd, &mut expected, 0), 0);
        assert_eq!(expected, 0b101, "what was found");
        assert_eq!(h.payload(fd), Ok(0b101));
        assert_eq!(fdt_cmpxchg_fd_payload(h.0, fd, &mut expected, 0), 1);
        assert_eq!(h.payload(fd), Ok(0));
        assert_eq!(
            fdt_cmpxchg_fd_payload(h.0, 77, &mut expected, 0),
            e(libc::EBADF)
        );
        assert_eq!(
            fdt_cmpxchg_fd_payload(h.0, fd, null_mut(), 0),
            e(libc::EINVAL)
        );
        assert_eq!(
            fdt_cmpxchg_fd_payload(null_mut(), fd, &mut expected, 0),
            e(libc::EINVAL)
        );
    }
}

/// Rights that only narrow, from several threads at once, each through its own handle: no
/// update is lost.
#[test]
fn cmpxchg_loops_on_a_shared_table_lose_no_update() {
    let h = H::new();
    let p = Probe::new(1, 0);
    let fd = h.file(&p, u64::MAX);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let mut mine = null_mut();
            // SAFETY: a live handle; a local out-parameter.
            assert_eq!(unsafe { fdt_files_share2(h.0, &mut mine) }, 0);
            let mine = H(mine);
            std::thread::spawn(move || {
                for bit in (t..64).step_by(4) {
                    let mut cur = mine.payload(fd).unwrap();
                    // SAFETY: this thread's handle; a local.
                    while unsafe {
                        fdt_cmpxchg_fd_payload(mine.0, fd, &mut cur, cur & !(1u64 << bit))
                    } == 0
                    {}
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(h.payload(fd), Ok(0));
}

#[test]
fn fdget_with_payload_is_light_alone_and_counted_when_shared() {
    let h = H::new();
    let (a, path) = (Probe::new(1, 0), Probe::new(2, 0));
    let fd = h.file(&a, 42);
    assert_eq!(
        h.lookup(fd),
        Ok((1, 42, false)),
        "no reference on an unshared table"
    );
    // SAFETY: a live handle; a reference handed over.
    let pfd = unsafe { fdt_install_with(h.0, c_file(&path, FDT_O_PATH), 0, 1) };
    assert_eq!(h.lookup(pfd), Err(e(libc::EBADF)), "O_PATH, as fdt_fdget2");
    assert_eq!(h.lookup(-5), Err(e(libc::EBADF)));
    let mut other = null_mut();
    // SAFETY: a live handle; a local out-parameter.
    assert_eq!(unsafe { fdt_files_share2(h.0, &mut other) }, 0);
    let other = H(other);
    assert_eq!(
        h.lookup(fd),
        Ok((1, 42, true)),
        "a reference on a shared table"
    );
    assert_eq!(other.lookup(fd), Ok((1, 42, true)));
    let mut f = fdt_fd {
        file: dangling_mut(),
        flags: 3,
    };
    let mut p = 9;
    // SAFETY: NULL arguments, refused; locals.
    unsafe {
        assert_eq!(
            fdt_fdget_with_payload(null_mut(), fd, &mut f, &mut p),
            e(libc::EINVAL)
        );
        assert!(f.file.is_null() && p == 0);
        assert_eq!(
            fdt_fdget_with_payload(h.0, fd, null_mut(), &mut p),
            e(libc::EINVAL)
        );
        assert_eq!(
            fdt_fdget_with_payload(h.0, fd, &mut f, null_mut()),
            e(libc::EINVAL)
        );
        assert!(f.file.is_null() && f.flags == 0);
    }
}

/// The rights check against a writer that moves files between numbers: every file is
/// installed with its own id as its payload, so a lookup that pairs a file with another
/// installation's payload shows as a mismatch.
#[test]
fn the_rights_check_never_pairs_a_file_with_another_fds_payload() {
    let h = H::new();
    let probes: Vec<_> = (1..=3).map(|id| Probe::new(id, 0)).collect();
    let fds: Vec<c_int> = probes.iter().map(|p| h.file(p, p.id as u64)).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let mut mine = null_mut();
            // SAFETY: a live handle; a local out-parameter.
            assert_eq!(unsafe { fdt_files_share2(h.0, &mut mine) }, 0);
            let mine = H(mine);
            let (stop, seen) = (stop.clone(), seen.clone());
            std::thread::spawn(move || {
                // ORDERING: Relaxed; a stop flag, nothing is published through it.
                while !stop.load(Ordering::Relaxed) {
                    for fd in [10, 11] {
                        if let Ok((id, payload, _)) = mine.lookup(fd) {
                            assert_eq!(
                                id as u64, payload,
                                "fd {fd}: file {id} with rights {payload}"
                            );
                            // ORDERING: Relaxed; a counter the writer polls to know the
                            // readers run, and reads again after joining them.
                            seen.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    // Until the readers have checked many lookups (the threads may start late), within bounds.
    let mut i = 0;
    // ORDERING: Relaxed; see the readers.
    while i < 20_000 || (seen.load(Ordering::Relaxed) < 20_000 && i < 2_000_000) {
        let src = fds[i % 3];
        // SAFETY: the test's handle, used by this thread only.
        unsafe {
            assert_eq!(fdt_dup2(h.0, src, 10), 10);
            assert_eq!(fdt_renumber(h.0, 10, 11), 11);
            assert_eq!(fdt_dup2(h.0, fds[(i + 1) % 3], 10), 10);
            assert_eq!(fdt_renumber_onto(h.0, 10, 11), 11);
        }
        i += 1;
    }
    // ORDERING: Relaxed; see the readers.
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    // ORDERING: Relaxed; the readers were joined.
    assert!(seen.load(Ordering::Relaxed) > 0, "the readers found files");
    drop(h);
    for p in &probes {
        assert_eq!(p.releases(), 1);
    }
}

#[test]
fn an_owned_reservation_installs_from_another_thread() {
    let h = H::new();
    let p = Probe::new(1, 0);
    let mut res = null_mut();
    // SAFETY: a live handle; a local out-parameter.
    let fd = unsafe { fdt_reserve_owned(h.0, FDT_O_CLOEXEC, &mut res) };
    assert_eq!(fd, 0);
    // SAFETY: a live reservation.
    assert_eq!(unsafe { fdt_reservation_fd(res) }, 0);
    // Taken: the next allocation skips it; lookups on the handle take references now.
    let other = h.file(&Probe::new(2, 0), 0);
    assert_eq!(other, 1);
    assert_eq!(
        h.lookup(other).map(|l| l.2),
        Ok(true),
        "the table counts as shared"
    );
    // SAFETY: a live handle.
    let closed = unsafe { fdt_close(h.0, fd) };
    assert_eq!(closed, e(libc::EBADF), "reserved, not open");
    struct Send(*mut fdt_reservation, *mut fdt_file);
    // SAFETY: the reservation and the reference move to the other thread, which alone uses
    // them.
    unsafe impl std::marker::Send for Send {}
    let job = Send(res, c_file(&p, FDT_O_RDWR));
    let installed = std::thread::spawn(move || {
        let job = job;
        // SAFETY: ours, ended once.
        unsafe { fdt_reservation_install_with(job.0, job.1, 0x77) }
    })
    .join()
    .unwrap();
    assert_eq!(installed, fd);
    // The handle is alone again: after one locked call notices, lookups are light.
    assert_eq!(h.lookup(fd).map(|l| (l.0, l.1)), Ok((1, 0x77)));
    assert_eq!(h.lookup(fd), Ok((1, 0x77, false)), "alone again: light");
    // SAFETY: a live handle.
    let getfd = unsafe { fdt_fcntl(h.0, fd, FDT_F_GETFD, 0) };
    assert_eq!(getfd, FDT_FD_CLOEXEC);
}

#[test]
fn an_owned_reservation_gives_its_fd_back_and_is_null_safe() {
    let h = H::new();
    let p = Probe::new(1, 0);
    // SAFETY: a live handle and NULL arguments, refused; locals.
    unsafe {
        let mut res = dangling_mut();
        assert_eq!(fdt_reserve_owned(null_mut(), 0, &mut res), e(libc::EINVAL));
        assert!(res.is_null());
        assert_eq!(fdt_reserve_owned(h.0, 0, null_mut()), e(libc::EINVAL));
        assert_eq!(fdt_reservation_fd(null()), e(libc::EINVAL));
        fdt_reservation_release(null_mut());
        assert_eq!(
            fdt_reservation_install(null_mut(), c_file(&p, 0)),
            e(libc::EINVAL)
        );
        assert_eq!(
            p.releases(),
            1,
            "the file given with a NULL reservation is put"
        );

        // Released: the number is free again.
        let fd = fdt_reserve_owned(h.0, 0, &mut res);
        assert_eq!(fd, 0);
        fdt_reservation_release(res);
        let q = Probe::new(2, 0);
        assert_eq!(fdt_install(h.0, c_file(&q, 0), 0), 0);

        // A NULL file gives the reservation back too.
        let fd = fdt_reserve_owned(h.0, 0, &mut res);
        assert_eq!(fd, 1);
        assert_eq!(fdt_reservation_install(res, null_mut()), e(libc::EINVAL));
        assert_eq!(fdt_get_unused_fd(h.0, 0), 1, "free again");

        // The limit applies: EMFILE.
        assert_eq!(fdt_set_nofile(h.0, 2, 2), 0);
        assert_eq!(fdt_reserve_owned(h.0, 0, &mut res), e(libc::EMFILE));
        assert!(res.is_null());
    }
}

/// A reservation holds the table: putting every handle first leaves the table alive, and it
/// closes (every file released once) when the reservation ends.
#[test]
fn a_reservation_outlives_the_handles() {
    let (a, b) = (Probe::new(1, K_FLUSH), Probe::new(2, 0));
    let h = fdt_files_new();
    let mut res = null_mut();
    // SAFETY: a live handle, then put; the reservation is ours, ended once.
    unsafe {
        assert_eq!(fdt_install(h, c_file(&a, 0), 0), 0);
        assert_eq!(fdt_reserve_owned(h, 0, &mut res), 1);
        fdt_files_put(h);
        assert_eq!(a.releases(), 0, "the reservation keeps the table");
        assert_eq!(fdt_reservation_install(res, c_file(&b, 0)), 1);
    }
    assert_eq!((a.flushes(), a.releases(), b.releases()), (1, 1, 1));
}

//! Sequential semantics of the table, case by case, against what Linux does.

use fdtable::{
    CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE, Errno, FdState, FileLike, FileRef, Files, O_CLOEXEC,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const NOFILE: u64 = 1024;

/// A file that counts its flushes and its release.
#[derive(Debug)]
struct Probe {
    id: usize,
    flushes: Arc<AtomicUsize>,
    releases: Arc<AtomicUsize>,
}

impl FileLike for Probe {
    fn flush(&self) -> Result<(), Errno> {
        // ORDERING: SeqCst (more than needed); a test counter, bumped and read on the
        // test's own thread, so program order orders it; pairs with nothing.
        self.flushes.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        // ORDERING: SeqCst (more than needed); see `flush` (the last put drops the file
        // synchronously, on the test's thread).
        self.releases.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Default, Clone)]
struct Counters {
    flushes: Arc<AtomicUsize>,
    releases: Arc<AtomicUsize>,
}

impl Counters {
    fn file(&self, id: usize) -> FileRef<Probe> {
        FileRef::new(Probe {
            id,
            flushes: self.flushes.clone(),
            releases: self.releases.clone(),
        })
    }
    fn released(&self) -> usize {
        // ORDERING: SeqCst (more than needed); see `Probe::flush`: program order.
        self.releases.load(Ordering::SeqCst)
    }
    fn flushed(&self) -> usize {
        // ORDERING: SeqCst (more than needed); see `Probe::flush`: program order.
        self.flushes.load(Ordering::SeqCst)
    }
}

fn table_with_std(c: &Counters) -> Files<Probe> {
    let files = Files::new();
    for i in 0..3 {
        assert_eq!(files.install(c.file(i), 0, NOFILE).unwrap(), i as u32);
    }
    files
}

#[test]
fn lowest_free_and_reuse() {
    let c = Counters::default();
    let mut f = table_with_std(&c);
    assert_eq!(f.install(c.file(3), 0, NOFILE), Ok(3));
    assert_eq!(f.install(c.file(4), 0, NOFILE), Ok(4));
    f.close_fd(1).unwrap();
    assert_eq!(f.install(c.file(5), 0, NOFILE), Ok(1));
    assert_eq!(f.install(c.file(6), 0, NOFILE), Ok(5));
    assert_eq!(c.released(), 1);
    assert_eq!(c.flushed(), 1);
}

#[test]
fn close_errors() {
    let c = Counters::default();
    let mut f = table_with_std(&c);
    assert_eq!(f.close_fd(3), Err(Errno::EBADF));
    assert_eq!(f.close_fd(u32::MAX), Err(Errno::EBADF));
    assert_eq!(f.close_fd(1 << 30), Err(Errno::EBADF));
    let r = f.get_unused_fd_flags(0, NOFILE).unwrap();
    assert_eq!(r.fd(), 3);
    let fd = r.fd();
    std::mem::forget(r);
    // A reserved fd is not closable and stays reserved.
    assert_eq!(f.close_fd(fd), Err(Errno::EBADF));
    assert_eq!(f.fd_state(fd), FdState::Reserved);
    f.put_unused_fd(fd);
    assert_eq!(f.fd_state(fd), FdState::Free);
}

/// A file whose flush fails with a given errno.
struct FlushFails(i32);

impl FileLike for FlushFails {
    fn flush(&self) -> Result<(), Errno> {
        Err(Errno::new(self.0))
    }
}

/// `close(2)` cannot be restarted (the fd is already gone): the kernel-internal restart codes
/// a flush may return become `EINTR`; other errors pass through; the fd is closed each time.
#[test]
fn close_turns_restart_requests_into_eintr() {
    let mut f: Files<FlushFails> = Files::new();
    for (flush, close) in [
        (512, Errno::EINTR),
        (513, Errno::EINTR),
        (514, Errno::EINTR),
        (516, Errno::EINTR),
        (515, Errno::new(515)),
        (Errno::EIO.raw(), Errno::EIO),
        (Errno::EINTR.raw(), Errno::EINTR),
    ] {
        let fd = f
            .install(FileRef::new(FlushFails(flush)), 0, NOFILE)
            .unwrap();
        assert_eq!(f.close_fd(fd), Err(close), "flush {flush}");
        assert_eq!(f.fd_state(fd), FdState::Free, "flush {flush}");
    }
}

#[test]
fn emfile_at_limit() {
    let c = Counters::default();
    let f = table_with_std(&c);
    assert_eq!(f.install(c.file(9), 0, 4), Ok(3));
    assert_eq!(f.install(c.file(9), 0, 4), Err(Errno::EMFILE));
    assert_eq!(f.get_unused_fd_flags(0, 4).err(), Some(Errno::EMFILE));
    assert_eq!(f.dup(0, 4), Err(Errno::EMFILE));
    assert_eq!(f.dup(7, 4), Err(Errno::EBADF));
    // The rejected file was released at once.
    assert_eq!(c.released(), 1);
}

#[test]
fn reservation_drop_gives_fd_back() {
    let c = Counters::default();
    let f = table_with_std(&c);
    {
        let r = f.get_unused_fd_flags(0, NOFILE).unwrap();
        assert_eq!(r.fd(), 3);
        assert_eq!(f.fd_state(3), FdState::Reserved);
        // A concurrent allocation skips it.
        let r2 = f.get_unused_fd_flags(0, NOFILE).unwrap();
        assert_eq!(r2.fd(), 4);
    }
    assert_eq!(f.fd_state(3), FdState::Free);
    assert_eq!(f.fd_state(4), FdState::Free);
    assert_eq!(f.install(c.file(3), 0, NOFILE), Ok(3));
}

#[test]
fn dup_family_errnos() {
    let c = Counters::default();
    let mut f = table_with_std(&c);
    assert_eq!(f.dup(0, NOFILE), Ok(3));
    assert_eq!(f.dup2(0, 0, NOFILE), Ok(0));
    assert_eq!(f.dup2(9, 9, NOFILE), Err(Errno::EBADF));
    assert_eq!(f.dup3(0, 0, 0, NOFILE), Err(Errno::EINVAL));
    assert_eq!(f.dup3(0, 5, 1, NOFILE), Err(Errno::EINVAL));
    assert_eq!(f.dup2(0, 1024, NOFILE), Err(Errno::EBADF));
    assert_eq!(f.dup2(0, u32::MAX, NOFILE), Err(Errno::EBADF));
    assert_eq!(f.dup2(42, 5, NOFILE), Err(Errno::EBADF));
    assert_eq!(f.dup3(0, 7, O_CLOEXEC, NOFILE), Ok(7));
    assert_eq!(f.get_close_on_exec(7), Ok(true));
    // dup2 clears close-on-exec on the target.
    assert_eq!(f.dup2(1, 7, NOFILE), Ok(7));
    assert_eq!(f.get_close_on_exec(7), Ok(false));
    // The displaced dup of fd 0 was flushed, not released (fd 0 still holds it).
    assert_eq!(c.flushed(), 1);
    assert_eq!(c.released(), 0);
    assert_eq!(f.dupfd_query(1, 7), Ok(true));
    assert_eq!(f.dupfd_query(0, 7), Ok(false));
    assert_eq!(f.dupfd_query(0, 99), Err(Errno::EBADF));
    // F_DUPFD
    assert_eq!(f.dupfd(0, 100, false, NOFILE), Ok(100));
    assert_eq!(f.dupfd(0, 100, true, NOFILE), Ok(101));
    assert_eq!(f.get_close_on_exec(101), Ok(true));
    assert_eq!(f.dupfd(0, 1024, false, NOFILE), Err(Errno::EINVAL));
    assert_eq!(f.dupfd(50, 5, false, NOFILE), Err(Errno::EBADF));
    assert_eq!(f.dupfd(0, 1023, false, 1024), Ok(1023));
    assert_eq!(f.dupfd(0, 1023, false, 1024), Err(Errno::EMFILE));
}

/// `fcntl(F_DUPFD)`'s `unsigned long` argument: Linux keeps its low 32 bits (`(int)arg` in
/// `do_fcntl`, then `f_dupfd`'s `unsigned int`). The values are what Linux 6.18 answers for
/// `fcntl(0, F_DUPFD, arg)` with fds 0-2 open and a soft limit of 1024.
#[test]
fn fcntl_dupfd_keeps_the_low_32_bits_of_its_argument() {
    let c = Counters::default();
    let f = table_with_std(&c);
    let cases: [(u64, Result<u32, Errno>); 7] = [
        (3, Ok(3)),
        (0x1_0000_0003, Ok(4)),
        (1 << 40, Ok(5)),
        (0xffff_ffff_0000_0005, Ok(6)),
        (0x1_0000_0400, Err(Errno::EINVAL)),
        (0xffff_ffff, Err(Errno::EINVAL)),
        (0x8000_0000, Err(Errno::EINVAL)),
    ];
    for (arg, want) in cases {
        assert_eq!(f.fcntl_dupfd(0, arg, false, NOFILE), want, "arg {arg:#x}");
    }
    assert_eq!(f.fcntl_dupfd(0, u64::MAX, true, NOFILE), Err(Errno::EINVAL));
    assert_eq!(f.fcntl_dupfd(42, 3, false, NOFILE), Err(Errno::EBADF));
}

#[test]
fn dup2_onto_reserved_is_ebusy() {
    let c = Counters::default();
    let mut f = table_with_std(&c);
    let fd = f.alloc_fd(0, NOFILE, 0).unwrap();
    assert_eq!(fd, 3);
    assert_eq!(f.dup2(0, 3, NOFILE), Err(Errno::EBUSY));
    assert_eq!(f.dup3(0, 3, O_CLOEXEC, NOFILE), Err(Errno::EBUSY));
    f.fd_install(3, c.file(3)).unwrap();
    assert_eq!(f.dup2(0, 3, NOFILE), Ok(3));
    // Installing into a slot that is not reserved fails and drops the file.
    assert_eq!(f.fd_install(3, c.file(4)), Err(Errno::EBADF));
    assert_eq!(f.fd_install(40, c.file(5)), Err(Errno::EBADF));
    assert_eq!(c.released(), 3);
}

#[test]
fn cloexec_written_on_every_allocation() {
    let c = Counters::default();
    let mut f = table_with_std(&c);
    // Mark a whole range close-on-exec, empty slots included.
    f.close_range(3, 200, CLOSE_RANGE_CLOEXEC).unwrap();
    let fd = f.install(c.file(3), 0, NOFILE).unwrap();
    assert_eq!(fd, 3);
    assert_eq!(
        f.get_close_on_exec(3),
        Ok(false),
        "alloc_fd must clear a stale bit"
    );
    assert_eq!(f.dup2(0, 10, NOFILE), Ok(10));
    assert_eq!(f.get_close_on_exec(10), Ok(false));
    assert_eq!(f.dupfd(0, 20, false, NOFILE), Ok(20));
    assert_eq!(f.get_close_on_exec(20), Ok(false));
    assert_eq!(f.get_close_on_exec(99), Err(Errno::EBADF));
    assert_eq!(f.set_close_on_exec(99, true), Err(Errno::EBADF));
}

#[test]
fn close_range_semantics() {
    let c = Counters::default();
    let mut f = table_with_std(&c);
    for _ in 0..10 {
        f.install(c.file(9), 0, NOFILE).unwrap();
    }
    let reserved = f.alloc_fd(0, NOFILE, 0).unwrap();
    assert_eq!(reserved, 13);
    assert_eq!(f.close_range(5, 4, 0), Err(Errno::EINVAL));
    assert_eq!(f.close_range(0, 1, 1), Err(Errno::EINVAL));
    assert_eq!(f.close_range(0, 1, 1 << 3), Err(Errno::EINVAL));
    f.close_range(5, 7, 0).unwrap();
    assert_eq!(f.fd_state(4), FdState::Installed { cloexec: false });
    assert_eq!(f.fd_state(5), FdState::Free);
    assert_eq!(f.fd_state(7), FdState::Free);
    assert_eq!(f.fd_state(8), FdState::Installed { cloexec: false });
    f.close_range(10, u32::MAX, 0).unwrap();
    assert_eq!(f.fd_state(12), FdState::Free);
    assert_eq!(
        f.fd_state(13),
        FdState::Reserved,
        "reserved fds are left alone"
    );
    assert_eq!(c.released(), 6);
    // Lowest free after the holes.
    assert_eq!(f.install(c.file(9), 0, NOFILE), Ok(5));
}

#[test]
fn exec_closes_cloexec_only() {
    let c = Counters::default();
    let mut f = table_with_std(&c);
    assert_eq!(f.install(c.file(3), O_CLOEXEC, NOFILE), Ok(3));
    assert_eq!(f.install(c.file(4), 0, NOFILE), Ok(4));
    assert_eq!(f.dupfd(4, 70, true, NOFILE), Ok(70));
    f.set_close_on_exec(1, true).unwrap();
    f.exec().unwrap();
    assert_eq!(f.fd_state(1), FdState::Free);
    assert_eq!(f.fd_state(3), FdState::Free);
    assert_eq!(f.fd_state(70), FdState::Free);
    assert_eq!(f.fd_state(4), FdState::Installed { cloexec: false });
    assert_eq!(c.released(), 2);
    assert_eq!(c.flushed(), 3);
}

#[test]
fn fork_copies_and_drops_reservations() {
    let c = Counters::default();
    let parent = table_with_std(&c);
    assert_eq!(parent.install(c.file(3), O_CLOEXEC, NOFILE), Ok(3));
    let r = parent.alloc_fd(0, NOFILE, 0).unwrap();
    assert_eq!(r, 4);
    let mut child = parent.fork().unwrap();
    assert!(!Files::same_table(&parent, &child));
    assert_eq!(child.fd_state(3), FdState::Installed { cloexec: true });
    assert_eq!(
        child.fd_state(4),
        FdState::Free,
        "reserved fd is free in the child"
    );
    assert_eq!(parent.fd_state(4), FdState::Reserved);
    // The files are shared between the tables: closing in the child releases nothing.
    child.close_fd(3).unwrap();
    assert_eq!(c.released(), 0);
    assert_eq!(child.install(c.file(5), 0, NOFILE), Ok(3));
    drop(child);
    assert_eq!(c.released(), 1);
    parent.put_unused_fd(4);
    drop(parent);
    assert_eq!(c.released(), 5);
}

/// An owned reservation stays with the table it was made in, as an open in flight on another
/// thread does when this one unshares: the copy has the number free, the install goes to the
/// old table, and the file is released with the reservation's handle.
#[test]
fn owned_reservation_installs_into_its_table_after_unshare_and_exec() {
    for how in ["unshare", "exec", "close_range"] {
        let c = Counters::default();
        let mut files = table_with_std(&c);
        let r = files.reserve_owned(O_CLOEXEC, NOFILE).unwrap();
        assert_eq!(r.fd(), 3);
        assert_eq!(files.fd_state(3), FdState::Reserved, "{how}");
        match how {
            "unshare" => files.unshare().unwrap(),
            "exec" => files.exec().unwrap(),
            _ => files.close_range(10, !0, CLOSE_RANGE_UNSHARE).unwrap(),
        }
        assert_eq!(
            files.fd_state(3),
            FdState::Free,
            "{how}: the copy has it free"
        );
        assert_eq!(files.install(c.file(9), 0, NOFILE), Ok(3), "{how}");
        assert_eq!(r.try_install(c.file(4)), Ok(3), "{how}: into the old table");
        assert_eq!(
            c.released(),
            1,
            "{how}: the old table's last handle went with it"
        );
        drop(files);
        assert_eq!(c.released(), 5, "{how}");
    }
}

#[test]
fn fork_is_sized_to_last_open_fd() {
    let c = Counters::default();
    let parent = table_with_std(&c);
    assert_eq!(parent.dupfd(0, 1000, false, NOFILE), Ok(1000));
    assert_eq!(parent.max_fds(), 1024);
    let child = parent.fork().unwrap();
    assert_eq!(child.max_fds(), 1024);
    let mut parent = parent;
    parent.close_fd(1000).unwrap();
    let child2 = parent.fork().unwrap();
    assert_eq!(child2.max_fds(), 64);
    assert_eq!(parent.max_fds(), 1024, "tables never shrink in place");
    drop((child, child2));
}

#[test]
fn share_and_unshare() {
    let c = Counters::default();
    let mut a = table_with_std(&c);
    let mut b = a.share();
    assert!(a.is_shared() && b.is_shared());
    assert!(Files::same_table(&a, &b));
    assert_eq!(b.install(c.file(3), 0, NOFILE), Ok(3));
    assert!(
        a.fdget(3).is_some(),
        "the install is visible through the other handle"
    );
    assert!(
        a.fdget(3).unwrap().needs_put(),
        "shared: the lookup takes a reference"
    );
    b.unshare().unwrap();
    assert!(!a.is_shared() && !b.is_shared());
    assert!(!a.fdget(3).unwrap().needs_put(), "unshared: a light borrow");
    b.close_fd(3).unwrap();
    assert!(a.fdget(3).is_some());
    assert_eq!(c.released(), 0);
    drop(a);
    drop(b);
    assert_eq!(c.released(), 4);
}

#[test]
fn close_range_unshare_leaves_the_other_sharer_alone() {
    let c = Counters::default();
    let mut a = table_with_std(&c);
    let b = a.share();
    a.close_range(1, u32::MAX, CLOSE_RANGE_UNSHARE).unwrap();
    assert!(!Files::same_table(&a, &b));
    assert_eq!(a.fd_state(1), FdState::Free);
    assert_eq!(a.fd_state(0), FdState::Installed { cloexec: false });
    assert_eq!(b.fd_state(2), FdState::Installed { cloexec: false });
    // With CLOEXEC everything is copied and marked.
    let mut b = b;
    let _c2 = b.share();
    b.close_range(0, u32::MAX, CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)
        .unwrap();
    assert_eq!(b.fd_state(2), FdState::Installed { cloexec: true });
    assert_eq!(_c2.fd_state(2), FdState::Installed { cloexec: false });
}

#[test]
fn growth_and_nr_open() {
    let c = Counters::default();
    let f = table_with_std(&c);
    assert_eq!(f.max_fds(), 64);
    for i in 3..200u32 {
        assert_eq!(f.install(c.file(i as usize), 0, 100_000), Ok(i));
    }
    assert_eq!(f.max_fds(), 256);
    let file = f.fdget(150).unwrap();
    assert_eq!(file.id, 150);
    assert!(f.fget(199).is_some());
    assert!(f.fget(200).is_none());
    drop(file);
    let mut f = f;
    // Past nr_open (1 << 20): dup2 reports EBADF, F_DUPFD EMFILE.
    let big = 1u64 << 30;
    assert_eq!(f.dup2(0, 1 << 20, big), Err(Errno::EBADF));
    assert_eq!(f.dupfd(0, 1 << 20, false, big), Err(Errno::EMFILE));
    assert_eq!(f.dup2(0, (1 << 20) - 1, big), Ok((1 << 20) - 1));
    assert_eq!(f.max_fds(), 1 << 20);
}

#[test]
fn next_fd_hint_rules() {
    let c = Counters::default();
    let mut f = table_with_std(&c);
    assert_eq!(f.next_fd_hint(), 3);
    // dup2 leaves the hint alone.
    f.dup2(0, 5, NOFILE).unwrap();
    assert_eq!(f.next_fd_hint(), 3);
    assert_eq!(f.dupfd(0, 10, false, NOFILE), Ok(10));
    assert_eq!(
        f.next_fd_hint(),
        3,
        "start > next_fd: the hint is not advanced"
    );
    assert_eq!(f.dup(0, NOFILE), Ok(3));
    assert_eq!(f.dup(0, NOFILE), Ok(4));
    assert_eq!(f.dup(0, NOFILE), Ok(6));
    assert_eq!(f.next_fd_hint(), 7);
    f.close_fd(1).unwrap();
    assert_eq!(f.next_fd_hint(), 1);
}

#[test]
fn teardown_flushes_and_releases_everything_once() {
    let c = Counters::default();
    let f = table_with_std(&c);
    f.dup(0, NOFILE).unwrap();
    let kept = f.fget(1).unwrap();
    drop(f);
    assert_eq!(c.flushed(), 4);
    assert_eq!(c.released(), 2);
    drop(kept);
    assert_eq!(c.released(), 3);
}

//! The calls embedders asked for: install at a chosen fd (`replace_fd`), the atomic move
//! (`renumber`), iteration, per-fd payloads, trait-object files and the owned, `Send`
//! reservation. Each against the kernel's rules where the kernel has the operation.

use fdtable::{
    CLOSE_RANGE_CLOEXEC, Errno, FdState, FileLike, FileRef, Files, O_CLOEXEC, OwnedFdReservation,
    SharedFiles,
};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

const NOFILE: u64 = 1024;

/// A file that counts its flushes and its release.
struct Probe {
    id: usize,
    c: Counters,
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
            c: self.clone(),
        })
    }
    fn released(&self) -> usize {
        // ORDERING: SeqCst (more than needed); a test counter read on the test's thread after
        // the release ran on it (or after a join).
        self.releases.load(Ordering::SeqCst)
    }
    fn flushed(&self) -> usize {
        // ORDERING: SeqCst (more than needed); as in `released`.
        self.flushes.load(Ordering::SeqCst)
    }
}

impl FileLike for Probe {
    fn flush(&self) -> Result<(), Errno> {
        // ORDERING: SeqCst (more than needed); a test counter (see `Counters::released`).
        self.c.flushes.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        // ORDERING: SeqCst (more than needed); a test counter (see `Counters::released`).
        self.c.releases.fetch_add(1, Ordering::SeqCst);
    }
}

fn id<P: fdtable::FdPayload>(files: &Files<Probe, P>, fd: u32) -> Option<usize> {
    files.fdget(fd).map(|f| f.id)
}

#[test]
fn replace_fd_installs_at_the_chosen_number() {
    let c = Counters::default();
    let mut files: Files<Probe> = Files::new();
    // An empty table: fd 7 directly, fds below it stay free; lowest-free still starts at 0.
    assert_eq!(files.replace_fd(7, c.file(1), 0, NOFILE), Ok(7));
    assert_eq!(files.fd_state(7), FdState::Installed { cloexec: false });
    assert_eq!(files.fd_state(0), FdState::Free);
    assert_eq!(files.install(c.file(2), 0, NOFILE), Ok(0));
    // Past the current table (it grows), with O_CLOEXEC.
    assert_eq!(files.replace_fd(5000, c.file(3), O_CLOEXEC, 8192), Ok(5000));
    assert_eq!(files.fd_state(5000), FdState::Installed { cloexec: true });
    // Replacing an open fd closes what was there, as dup2 does: flushed, released if last.
    assert_eq!(files.replace_fd(7, c.file(4), O_CLOEXEC, NOFILE), Ok(7));
    assert_eq!(id(&files, 7), Some(4));
    assert_eq!((c.flushed(), c.released()), (1, 1));
    // Replacing with the same file again: the old reference is closed, the file lives on.
    let same = files.fget(7).unwrap();
    assert_eq!(files.replace_fd(7, same, 0, NOFILE), Ok(7));
    assert_eq!(files.fd_state(7), FdState::Installed { cloexec: false });
    assert_eq!((c.flushed(), c.released()), (2, 1));
}

#[test]
fn replace_fd_errors_leave_the_table_unchanged() {
    let c = Counters::default();
    let mut files: Files<Probe> = Files::new();
    files.install(c.file(0), 0, NOFILE).unwrap();
    // EBADF at or past RLIMIT_NOFILE (the file is dropped: released, never flushed).
    assert_eq!(
        files.replace_fd(NOFILE as u32, c.file(1), 0, NOFILE),
        Err(Errno::EBADF)
    );
    assert_eq!(
        files.replace_fd(u32::MAX, c.file(2), 0, NOFILE),
        Err(Errno::EBADF)
    );
    assert_eq!((c.flushed(), c.released()), (0, 2));
    // EBUSY on a slot reserved by an open in progress (a raw `alloc_fd`, as an open on
    // another thread would hold it); the reservation stays and nothing grows.
    let fd = files.alloc_fd(0, NOFILE, 0).unwrap();
    let before = files.max_fds();
    let mut other = files.share();
    assert_eq!(
        other.replace_fd(fd, c.file(3), 0, NOFILE),
        Err(Errno::EBUSY)
    );
    assert_eq!(files.fd_state(fd), FdState::Reserved);
    assert_eq!(files.max_fds(), before);
    assert_eq!(c.released(), 3);
    files.put_unused_fd(fd);
    assert_eq!(files.fd_state(fd), FdState::Free);
    assert_eq!(other.replace_fd(fd, c.file(4), 0, NOFILE), Ok(fd));
    drop(other);
    drop(files);
    assert_eq!(c.released(), 5);
}

#[test]
fn renumber_moves_atomically_with_dup2_then_close_results() {
    let c = Counters::default();
    let mut files: Files<Probe, u32> = Files::new();
    let a = files
        .install_with(c.file(10), O_CLOEXEC, 7, NOFILE)
        .unwrap();
    let b = files.install_with(c.file(11), 0, 9, NOFILE).unwrap();
    assert_eq!((a, b), (0, 1));
    // Move 0 onto 1: 1's old file is closed (flushed and released), 0 becomes free.
    assert_eq!(files.renumber(a, b, NOFILE), Ok(b));
    assert_eq!(files.fd_state(a), FdState::Free);
    // As after dup2, close-on-exec is clear at the target; the payload moved with the file.
    assert_eq!(files.fd_state(b), FdState::Installed { cloexec: false });
    assert_eq!(files.fd_payload(b), Ok(7));
    assert_eq!(files.fdget(b).map(|f| f.id), Some(10));
    assert_eq!((c.flushed(), c.released()), (1, 1));
    // To an empty fd beyond the table.
    assert_eq!(files.renumber(b, 300, NOFILE), Ok(300));
    assert_eq!(files.fd_payload(300), Ok(7));
    assert_eq!(files.fd_state(b), FdState::Free);
    // The lowest-free hint follows the freed fd.
    assert_eq!(files.install(c.file(12), 0, NOFILE), Ok(0));
    // Same fd: returns it, changes nothing; errors as dup2's.
    assert_eq!(files.renumber(300, 300, NOFILE), Ok(300));
    assert_eq!(files.renumber(5, 5, NOFILE), Err(Errno::EBADF));
    assert_eq!(files.renumber(5, 6, NOFILE), Err(Errno::EBADF));
    assert_eq!(
        files.renumber(300, NOFILE as u32, NOFILE),
        Err(Errno::EBADF)
    );
    assert_eq!(files.fd_state(300), FdState::Installed { cloexec: false });
    // EBUSY onto a reservation; nothing moves.
    let fd = files.alloc_fd(0, NOFILE, 0).unwrap();
    assert_eq!(files.renumber(300, fd, NOFILE), Err(Errno::EBUSY));
    assert_eq!(files.fd_state(300), FdState::Installed { cloexec: false });
    assert_eq!(files.fd_state(fd), FdState::Reserved);
    files.put_unused_fd(fd);
    drop(files);
    assert_eq!(c.released(), 3);
}

#[test]
fn payloads_follow_the_kernel_per_fd_rules() {
    #[derive(Clone, Copy, Default, Debug, PartialEq)]
    struct Rights(u64);
    let c = Counters::default();
    let mut files: Files<Probe, Rights> = Files::new();
    let fd = files
        .install_with(c.file(0), 0, Rights(0b101), NOFILE)
        .unwrap();
    assert_eq!(files.fd_payload(fd), Ok(Rights(0b101)));
    // dup, F_DUPFD, dup2 copy it; fork copies it.
    let d = files.dup(fd, NOFILE).unwrap();
    assert_eq!(files.fd_payload(d), Ok(Rights(0b101)));
    let e = files.dupfd(fd, 10, true, NOFILE).unwrap();
    assert_eq!(files.fd_payload(e), Ok(Rights(0b101)));
    assert_eq!(files.dup2(fd, 20, NOFILE), Ok(20));
    assert_eq!(files.fd_payload(20), Ok(Rights(0b101)));
    files.set_fd_payload(d, Rights(1)).unwrap();
    let child = files.fork().unwrap();
    assert_eq!(child.fd_payload(d), Ok(Rights(1)));
    assert_eq!(child.fd_payload(fd), Ok(Rights(0b101)));
    drop(child);
    // A fresh allocation starts from the default, whatever the slot held before.
    files.close_fd(d).unwrap();
    let r = files.get_unused_fd_flags(0, NOFILE).unwrap();
    assert_eq!(r.fd(), d);
    let again = r.install(c.file(1));
    assert_eq!(files.fd_payload(again), Ok(Rights::default()));
    // Growth keeps every payload.
    assert_eq!(
        files.replace_fd_with(900, c.file(2), 0, Rights(9), NOFILE),
        Ok(900)
    );
    assert_eq!(files.fd_payload(fd), Ok(Rights(0b101)));
    assert_eq!(files.fd_payload(900), Ok(Rights(9)));
    // EBADF for anything not installed.
    assert_eq!(files.fd_payload(3), Err(Errno::EBADF));
    assert_eq!(files.set_fd_payload(u32::MAX, Rights(1)), Err(Errno::EBADF));
    let (f, p) = files.fget_with_payload(900).unwrap();
    assert_eq!((f.id, p), (2, Rights(9)));
    // fd_entry: file, close-on-exec bit and payload of one fd, read together.
    assert_eq!(files.set_close_on_exec(900, true), Ok(()));
    let o = files.fd_entry(900).unwrap();
    assert_eq!(
        (o.fd, o.cloexec, o.payload, o.file.id),
        (900, true, Rights(9), 2)
    );
    assert_eq!(files.fd_entry(3).map(|o| o.fd), Err(Errno::EBADF));
    assert_eq!(files.fd_entry(u32::MAX).map(|o| o.fd), Err(Errno::EBADF));
    // cmpxchg_fd_payload: replaced only if unchanged; the actual value otherwise.
    assert_eq!(
        files.cmpxchg_fd_payload(900, Rights(1), Rights(2)),
        Ok(Err(Rights(9)))
    );
    assert_eq!(files.fd_payload(900), Ok(Rights(9)));
    assert_eq!(
        files.cmpxchg_fd_payload(900, Rights(9), Rights(2)),
        Ok(Ok(()))
    );
    assert_eq!(files.fd_payload(900), Ok(Rights(2)));
    assert_eq!(
        files.cmpxchg_fd_payload(3, Rights(0), Rights(1)),
        Err(Errno::EBADF)
    );
    let r = files.get_unused_fd_flags(0, NOFILE).unwrap();
    let reserved = r.fd();
    assert_eq!(
        files.cmpxchg_fd_payload(reserved, Rights(0), Rights(1)),
        Err(Errno::EBADF),
        "a reservation has no payload yet"
    );
    drop(r);
}

#[test]
fn concurrent_payload_updates_through_cmpxchg_lose_nothing() {
    // Two handles of one table each add 1000 to one fd's payload by compare-and-set loops:
    // the total is exact, which separate fd_payload + set_fd_payload calls would not give.
    let c = Counters::default();
    let mut files: Files<Probe, u64> = Files::new();
    let fd = files.install(c.file(0), 0, NOFILE).unwrap();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let h = files.share();
            std::thread::spawn(move || {
                let mut retries = 0u64;
                for _ in 0..1000 {
                    let mut cur = h.fd_payload(fd).unwrap();
                    loop {
                        match h.cmpxchg_fd_payload(fd, cur, cur + 1).unwrap() {
                            Ok(()) => break,
                            Err(actual) => {
                                retries += 1;
                                cur = actual;
                            }
                        }
                    }
                }
                retries
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(files.fd_payload(fd), Ok(2000));
}

#[test]
fn renumber_onto_needs_an_installed_target() {
    let c = Counters::default();
    let mut files: Files<Probe, u32> = Files::new();
    let a = files.install_with(c.file(1), 0, 5, NOFILE).unwrap();
    let b = files.install_with(c.file(2), O_CLOEXEC, 6, NOFILE).unwrap();
    // Onto a free number: EBADF, nothing moves (renumber would create fd 7).
    assert_eq!(files.renumber_onto(a, 7, NOFILE), Err(Errno::EBADF));
    assert_eq!(files.fd_state(a), FdState::Installed { cloexec: false });
    assert_eq!(files.fd_state(7), FdState::Free);
    // Onto a number beyond the table, or past nofile: EBADF too.
    let size = files.max_fds();
    assert_eq!(files.renumber_onto(a, 5000, 1 << 20), Err(Errno::EBADF));
    assert_eq!(
        files.max_fds(),
        size,
        "a failed renumber_onto does not grow the table"
    );
    assert_eq!(
        files.renumber_onto(a, NOFILE as u32, NOFILE),
        Err(Errno::EBADF)
    );
    // From a free number: EBADF.
    assert_eq!(files.renumber_onto(9, b, NOFILE), Err(Errno::EBADF));
    // Onto a reservation: EBADF (not an open descriptor), where renumber says EBUSY.
    let r = files.alloc_fd(0, NOFILE, 0).unwrap();
    assert_eq!(files.renumber_onto(a, r, NOFILE), Err(Errno::EBADF));
    assert_eq!(files.fd_state(r), FdState::Reserved);
    assert_eq!(files.renumber(a, r, NOFILE), Err(Errno::EBUSY));
    files.put_unused_fd(r);
    // Onto an installed fd: the move, with renumber's results.
    assert_eq!(files.renumber_onto(a, b, NOFILE), Ok(b));
    assert_eq!(files.fd_state(a), FdState::Free);
    assert_eq!(files.fd_state(b), FdState::Installed { cloexec: false });
    assert_eq!(files.fd_payload(b), Ok(5));
    assert_eq!(files.fdget(b).map(|f| f.id), Some(1));
    assert_eq!((c.flushed(), c.released()), (1, 1));
    // Same fd: returns it when installed.
    assert_eq!(files.renumber_onto(b, b, NOFILE), Ok(b));
    assert_eq!(files.renumber_onto(a, a, NOFILE), Err(Errno::EBADF));
    drop(files);
    assert_eq!(c.released(), 2);
}

/// WASI preview 1's `fd_renumber(from, to)` as a host builds it on `renumber_onto`: both fds
/// must be open, else `Badf` (wasmtime's preview 1 checks `to` first). Here a `path_open` is in
/// flight on another thread, holding the fd it will return as an owned reservation: to the
/// guest that number is not open yet, so renumbering onto it is `Badf` and changes nothing,
/// and the open completes afterwards as if nothing had happened.
#[test]
fn wasi_fd_renumber_onto_a_pending_open_is_badf() {
    const FD_READ: u64 = 1 << 1;
    const FD_WRITE: u64 = 1 << 6;
    let c = Counters::default();
    let mut files: Files<Probe, u64> = Files::new();
    // stdin, stdout, stderr, a preopened directory.
    for id in 0..4 {
        files.install_with(c.file(id), 0, FD_READ, NOFILE).unwrap();
    }
    let from = files.install_with(c.file(4), 0, FD_READ, NOFILE).unwrap();
    let open = files.reserve_owned(0, NOFILE).unwrap();
    let to = open.fd();
    assert_eq!((from, to), (4, 5));
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let c2 = c.clone();
    let opener = std::thread::spawn(move || {
        wait.recv().unwrap();
        open.install_with(c2.file(5), FD_WRITE)
    });

    assert_eq!(files.renumber_onto(from, to, NOFILE), Err(Errno::EBADF));
    assert_eq!(files.fd_state(from), FdState::Installed { cloexec: false });
    assert_eq!(files.fd_state(to), FdState::Reserved);
    assert_eq!(files.fd_payload(from), Ok(FD_READ));
    // A free number and a number past the table are not open either.
    assert_eq!(files.renumber_onto(from, 6, NOFILE), Err(Errno::EBADF));
    assert_eq!(files.renumber_onto(from, 900, NOFILE), Err(Errno::EBADF));
    assert_eq!(files.fd_state(6), FdState::Free);
    // dup2's rule, `renumber`, says EBUSY for the reservation, as Linux's dup2 does.
    assert_eq!(files.renumber(from, to, NOFILE), Err(Errno::EBUSY));
    assert_eq!((c.flushed(), c.released()), (0, 0));

    // The open completes with its own rights, then the renumber replaces it.
    go.send(()).unwrap();
    assert_eq!(opener.join().unwrap(), to);
    assert_eq!(files.fd_payload(to), Ok(FD_WRITE));
    assert_eq!(files.renumber_onto(from, to, NOFILE), Ok(to));
    assert_eq!(files.fd_state(from), FdState::Free);
    assert_eq!(
        files.fd_payload(to),
        Ok(FD_READ),
        "the rights move with the file"
    );
    assert_eq!(files.fdget(to).map(|f| f.id), Some(4));
    assert_eq!(
        (c.flushed(), c.released()),
        (1, 1),
        "the opened file was closed"
    );
    // fd_renumber(fd, fd) on an open fd changes nothing; on a closed one it is Badf.
    assert_eq!(files.renumber_onto(to, to, NOFILE), Ok(to));
    assert_eq!(files.renumber_onto(from, from, NOFILE), Err(Errno::EBADF));
    drop(files);
    assert_eq!(c.released(), 6);
}

#[test]
fn iteration_yields_installed_fds_in_order_and_skips_reservations() {
    let c = Counters::default();
    let mut files: Files<Probe, u8> = Files::new();
    for i in 0..5 {
        files
            .install_with(
                c.file(i),
                if i % 2 == 0 { O_CLOEXEC } else { 0 },
                i as u8,
                NOFILE,
            )
            .unwrap();
    }
    files.close_fd(2).unwrap();
    assert_eq!(
        files.replace_fd_with(700, c.file(7), 0, 70, NOFILE),
        Ok(700)
    );
    let r = files.get_unused_fd_flags(0, NOFILE).unwrap();
    assert_eq!(r.fd(), 2);
    let seen: Vec<(u32, bool, u8, usize)> = files
        .iter()
        .map(|o| (o.fd, o.cloexec, o.payload, o.file.id))
        .collect();
    assert_eq!(
        seen,
        vec![
            (0, true, 0, 0),
            (1, false, 1, 1),
            (3, false, 3, 3),
            (4, true, 4, 4),
            (700, false, 70, 7)
        ]
    );
    assert_eq!(
        files.iter_from(4).map(|o| o.fd).collect::<Vec<_>>(),
        vec![4, 700]
    );
    assert_eq!(files.next_open_fd(5), Some(700));
    assert_eq!(files.next_open_fd(701), None);
    assert_eq!(files.next_open_fd(u32::MAX), None);
    drop(r);
    // A file closed while the iterator holds a reference stays alive until that goes.
    let mut it = files.iter();
    let first = it.next().unwrap();
    files.close_fd(0).unwrap();
    assert_eq!(c.released(), 1, "only fd 2's file so far");
    assert_eq!(first.file.id, 0);
    drop(first);
    assert_eq!(c.released(), 2);
    // The close-on-exec range write shows through iteration too.
    files.close_range(0, u32::MAX, CLOSE_RANGE_CLOEXEC).unwrap();
    assert!(files.iter().all(|o| o.cloexec));
}

#[test]
fn iteration_on_a_shared_table_while_another_handle_closes() {
    let c = Counters::default();
    let mut files: Files<Probe> = Files::new();
    for i in 0..200 {
        files.install(c.file(i), 0, NOFILE).unwrap();
    }
    let mut other = files.share();
    let closer = std::thread::spawn(move || {
        for fd in (0..200).rev().step_by(2) {
            other.close_fd(fd).unwrap();
        }
    });
    let mut last = None;
    for o in files.iter() {
        // Ascending, each the file installed there, never a freed one.
        assert!(last.is_none_or(|l| o.fd > l));
        assert_eq!(o.file.id, o.fd as usize);
        last = Some(o.fd);
    }
    closer.join().unwrap();
    assert_eq!(files.iter().count(), 100);
    assert!(files.iter().all(|o| o.fd % 2 == 0));
    drop(files);
    assert_eq!(c.released(), 200);
}

trait MyFile: FileLike {
    fn name(&self) -> String;
}

struct Pipe(Counters);
impl FileLike for Pipe {}
impl MyFile for Pipe {
    fn name(&self) -> String {
        "pipe".into()
    }
}
impl Drop for Pipe {
    fn drop(&mut self) {
        // ORDERING: SeqCst (more than needed); a test counter (see `Counters::released`).
        self.0.releases.fetch_add(1, Ordering::SeqCst);
    }
}

#[repr(align(256))]
struct Aligned(u32, Counters);
impl FileLike for Aligned {
    fn flush(&self) -> Result<(), Errno> {
        Err(Errno::EIO)
    }
}
impl MyFile for Aligned {
    fn name(&self) -> String {
        format!("aligned {}", self.0)
    }
}
impl Drop for Aligned {
    fn drop(&mut self) {
        // ORDERING: SeqCst (more than needed); a test counter (see `Counters::released`).
        self.1.releases.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn trait_object_tables() {
    let c = Counters::default();
    let mut files: Files<dyn MyFile> = Files::new();
    let p = FileRef::<dyn MyFile>::new_unsize(Pipe(c.clone()), |p| p);
    let a = FileRef::<dyn MyFile>::new_unsize(Aligned(3, c.clone()), |a| a);
    assert_eq!(files.install(p, 0, NOFILE), Ok(0));
    assert_eq!(files.install(a, 0, NOFILE), Ok(1));
    assert_eq!(files.fdget(0).unwrap().name(), "pipe");
    assert_eq!(files.fdget(1).unwrap().name(), "aligned 3");
    // Hand the file to someone else with one more count, no newtype, no second Arc.
    let held: FileRef<dyn MyFile> = files.fget(1).unwrap();
    assert_eq!(FileRef::count(&held), 2);
    let mut other = files.share();
    assert_eq!(other.fdget(1).unwrap().name(), "aligned 3");
    // Flush errors surface on close, as close(2) returns them.
    assert_eq!(other.close_fd(1), Err(Errno::EIO));
    assert_eq!(c.released(), 0);
    drop(held);
    assert_eq!(c.released(), 1);
    let child = files.fork().unwrap();
    drop((files, other));
    assert_eq!(c.released(), 1);
    assert_eq!(child.fdget(0).unwrap().name(), "pipe");
    drop(child);
    assert_eq!(c.released(), 2);
}

#[test]
fn the_owned_reservation_is_send_and_gives_the_fd_back() {
    fn assert_send<T: Send + 'static>(_: &T) {}
    let c = Counters::default();
    let mut files: Files<Probe> = Files::new();
    files.install(c.file(0), 0, NOFILE).unwrap();
    let r = files.reserve_owned(O_CLOEXEC, NOFILE).unwrap();
    assert_send(&r);
    assert_eq!(r.fd(), 1);
    assert_eq!(files.fd_state(1), FdState::Reserved);
    // Lowest-free skips it; dup2 onto it is EBUSY.
    assert_eq!(files.dup(0, NOFILE), Ok(2));
    assert_eq!(files.dup2(0, 1, NOFILE), Err(Errno::EBUSY));
    // Dropped on another thread: the fd comes back.
    std::thread::spawn(move || drop(r)).join().unwrap();
    assert_eq!(files.fd_state(1), FdState::Free);
    // Installed on another thread.
    let r = files.reserve_owned(0, NOFILE).unwrap();
    let f = c.file(5);
    let fd = std::thread::spawn(move || r.install(f)).join().unwrap();
    assert_eq!(fd, 1);
    assert_eq!(files.fdget(1).map(|f| f.id), Some(5));
    assert!(!files.is_shared(), "the reservation's handle is gone");
    // EMFILE when nothing is free below the limit.
    assert!(files.reserve_owned(0, 3).is_err());
}

/// A future that is pending once.
struct YieldOnce(bool);
impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

async fn open_async(r: OwnedFdReservation<Probe>, file: FileRef<Probe>) -> Result<u32, Errno> {
    // The host call: the reservation lives across the await.
    YieldOnce(false).await;
    Ok(r.install(file))
}

fn poll_once<F: Future>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn a_cancelled_future_gives_its_fd_back() {
    fn assert_send<T: Send>(_: &T) {}
    let c = Counters::default();
    let mut files: Files<Probe> = Files::new();
    // Cancelled: the future is dropped while pending.
    let r = files.reserve_owned(0, NOFILE).unwrap();
    let mut fut = Box::pin(open_async(r, c.file(1)));
    assert_send(&fut);
    assert!(poll_once(fut.as_mut()).is_pending());
    assert_eq!(files.fd_state(0), FdState::Reserved);
    drop(fut);
    assert_eq!(files.fd_state(0), FdState::Free);
    assert_eq!(c.released(), 1, "the file built for the open is released");
    // Completed, resumed on another thread.
    let r = files.reserve_owned(0, NOFILE).unwrap();
    let mut fut = Box::pin(open_async(r, c.file(2)));
    assert!(poll_once(fut.as_mut()).is_pending());
    let fd = std::thread::spawn(move || match poll_once(fut.as_mut()) {
        Poll::Ready(r) => r,
        Poll::Pending => panic!("still pending"),
    })
    .join()
    .unwrap();
    assert_eq!(fd, Ok(0));
    assert_eq!(files.fdget(0).map(|f| f.id), Some(2));
}

#[test]
fn bad_input_gets_the_kernel_errnos() {
    let c = Counters::default();
    let mut files: Files<Probe> = Files::new();
    for fd in [u32::MAX, u32::MAX - 1, 1 << 31, NOFILE as u32] {
        assert_eq!(
            files.replace_fd(fd, c.file(0), 0, NOFILE),
            Err(Errno::EBADF)
        );
        assert_eq!(files.renumber(fd, 0, NOFILE), Err(Errno::EBADF));
        assert_eq!(files.renumber(0, fd, NOFILE), Err(Errno::EBADF));
        assert_eq!(files.fd_payload(fd), Err(Errno::EBADF));
        assert_eq!(files.next_open_fd(fd), None);
        assert_eq!(files.iter_from(fd).count(), 0);
    }
    assert_eq!(files.max_fds(), 64);
    assert_eq!(c.released(), 4);
}

/// `fdget_with_payload`: the light lookup and the payload on an unshared table; a counted
/// reference and the payload, read together, on a shared one; `None` for free and reserved
/// fds.
#[test]
fn fdget_with_payload_pairs_file_and_payload() {
    let c = Counters::default();
    let mut files: Files<Probe, u64> = Files::new();
    let a = files.install_with(c.file(1), 0, 0b01, NOFILE).unwrap();
    let b = files.install_with(c.file(2), 0, 0b10, NOFILE).unwrap();
    {
        let (f, p) = files.fdget_with_payload(a).unwrap();
        assert!(!f.needs_put(), "light on an unshared table");
        assert_eq!((f.id, p), (1, 0b01));
    }
    let r = files.get_unused_fd_flags(0, NOFILE).unwrap();
    assert!(files.fdget_with_payload(r.fd()).is_none(), "reserved");
    drop(r);
    assert!(files.fdget_with_payload(100).is_none(), "free");
    let other = files.share();
    {
        let (f, p) = files.fdget_with_payload(b).unwrap();
        assert!(f.needs_put(), "counted on a shared table");
        assert_eq!((f.id, p), (2, 0b10));
    }
    files.renumber(a, b, NOFILE).unwrap();
    let (f, p) = other.fdget_with_payload(b).unwrap();
    assert_eq!((f.id, p), (1, 0b01), "the payload moved with the file");
    drop(f);
    assert!(other.fdget_with_payload(a).is_none());
    drop(other);
    drop(files);
    assert_eq!(c.released(), 2);
}

/// `FileRef::try_unwrap`: the value comes out of a file whose reference is the only one,
/// without its release; any other reference (a dup in the table, a clone) gives it back.
#[test]
fn try_unwrap_takes_the_value_of_the_last_reference() {
    let c = Counters::default();
    let mut files: Files<Probe> = Files::new();
    let fd = files.install(c.file(7), 0, NOFILE).unwrap();
    let dup = files.dup(fd, NOFILE).unwrap();
    let f = files.file_close_fd(fd).unwrap();
    let f = given_back(FileRef::try_unwrap(f), "the dup holds it too");
    let clone = f.clone();
    files.close_fd(dup).unwrap();
    let f = given_back(FileRef::try_unwrap(f), "the clone holds it too");
    drop(clone);
    let Ok(probe) = FileRef::try_unwrap(f) else {
        panic!("the last reference")
    };
    assert_eq!(probe.id, 7);
    assert_eq!(c.released(), 0, "unwrapping is not a release");
    drop(probe);
    assert_eq!(c.released(), 1);

    // On a shared table (the file's memory then waits for a grace period).
    let other = files.share();
    let fd = files.install(c.file(8), 0, NOFILE).unwrap();
    assert_eq!(other.fget(fd).map(|f| f.id), Some(8));
    let probe = FileRef::try_unwrap(files.file_close_fd(fd).unwrap())
        .ok()
        .expect("the last reference");
    assert_eq!(probe.id, 8);
    drop(probe);
    drop(other);
    assert_eq!(c.released(), 2);
}

/// A file made by `new_unsize` holds a value larger than (or other than) the `F` it is seen
/// as: `try_unwrap` cannot move it out whole and gives the reference back.
#[test]
fn try_unwrap_refuses_coerced_files() {
    trait Named: FileLike {
        fn name(&self) -> &'static str;
    }
    impl Named for Probe {
        fn name(&self) -> &'static str {
            "probe"
        }
    }
    let c = Counters::default();
    let f = FileRef::<dyn Named>::new_unsize(
        Probe {
            id: 1,
            c: c.clone(),
        },
        |p| p,
    );
    assert_eq!(f.name(), "probe");
    let sized = FileRef::<Probe>::new_unsize(
        Probe {
            id: 2,
            c: c.clone(),
        },
        |p| p,
    );
    let sized = given_back(FileRef::try_unwrap(sized), "made by new_unsize");
    drop((f, sized));
    assert_eq!(c.released(), 2);
}

/// `SharedFiles`: tasks make their own handles through `&self` (from an `Arc`), use the
/// table concurrently, and whoever drops last closes the files.
#[test]
fn shared_files_makes_handles_from_a_shared_reference() {
    let c = Counters::default();
    let mut files: Files<Probe> = Files::new();
    let fd = files.install(c.file(1), 0, NOFILE).unwrap();
    let table = Arc::new(SharedFiles::new(&mut files));
    drop(files);
    let tasks: Vec<_> = (0..4)
        .map(|i| {
            let table = table.clone();
            let c = c.clone();
            std::thread::spawn(move || {
                let mine = table.handle();
                assert!(mine.is_shared());
                assert_eq!(mine.fdget(fd).map(|f| f.id), Some(1));
                let own = mine.install(c.file(10 + i), 0, NOFILE).unwrap();
                mine.fdget(own).map(|f| f.id)
            })
        })
        .collect();
    let mut seen: Vec<_> = tasks.into_iter().map(|t| t.join().unwrap()).collect();
    seen.sort();
    assert_eq!(seen, [Some(10), Some(11), Some(12), Some(13)]);
    let Ok(last) = Arc::try_unwrap(table) else {
        panic!("every task is done")
    };
    let copy = last.clone();
    drop(last);
    assert_eq!(c.released(), 0, "the clone keeps the table");
    drop(copy);
    fdtable::reclaim_drain();
    assert_eq!(c.released(), 5, "the last reference closed every file");
}

/// The reference `try_unwrap` gave back; panics with `why` if it took the value instead.
fn given_back<T, F: ?Sized>(r: Result<T, FileRef<F>>, why: &str) -> FileRef<F> {
    match r {
        Ok(_) => panic!("unwrapped, but {why}"),
        Err(f) => f,
    }
}

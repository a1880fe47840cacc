//! A file that knows when it is used after its release, and a close made on another thread,
//! shared by the tests of lent files (`borrow.rs`, `qsbr.rs`).

use fdtable::{FileLike, FileRef, Files};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A file whose every use checks it was not released, and whose release is counted.
pub struct Probe {
    id: usize,
    released: AtomicBool,
    releases: Arc<AtomicUsize>,
    /// Like a pipe: some operations may block, so it may be lent to non-blocking borrows
    /// only.
    blocking: bool,
}

impl FileLike for Probe {
    fn may_lend(&self) -> bool {
        !self.blocking
    }

    fn may_lend_nonblocking(&self) -> bool {
        true
    }
}

impl Probe {
    /// A use of the file: panics if it was released.
    pub fn check(&self) -> usize {
        // ORDERING: SeqCst (more than needed); a use must never see its file released.
        assert!(
            !self.released.load(Ordering::SeqCst),
            "file {} used after release",
            self.id
        );
        self.id
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        // ORDERING: SeqCst (more than needed); test flags, read after joins or on this thread.
        assert!(!self.released.swap(true, Ordering::SeqCst));
        self.releases.fetch_add(1, Ordering::SeqCst);
    }
}

/// A probe numbered `id` whose release adds one to `r`.
pub fn probe(id: usize, r: &Arc<AtomicUsize>) -> FileRef<Probe> {
    FileRef::new(Probe {
        id,
        released: AtomicBool::new(false),
        releases: r.clone(),
        blocking: false,
    })
}

/// A probe as [`probe`] that may be lent to non-blocking borrows only (as a pipe).
#[allow(dead_code)] // not every test crate that includes this module uses it
pub fn blocking_probe(id: usize, r: &Arc<AtomicUsize>) -> FileRef<Probe> {
    FileRef::new(Probe {
        id,
        released: AtomicBool::new(false),
        releases: r.clone(),
        blocking: true,
    })
}

/// The releases counted in `r`.
pub fn released(r: &AtomicUsize) -> usize {
    // ORDERING: SeqCst (more than needed); see `Drop for Probe`.
    r.load(Ordering::SeqCst)
}

/// `close_fd(fd)` through another handle, on a thread of its own: started, and known to have
/// begun, by [`CloseElsewhere::start`]; whether it has returned by [`CloseElsewhere::closed`].
pub struct CloseElsewhere {
    closed: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Files<Probe>>,
}

impl CloseElsewhere {
    /// Closes `fd` through `handle` on a new thread; returns once the close has begun.
    pub fn start(mut handle: Files<Probe>, fd: u32) -> CloseElsewhere {
        let closing = Arc::new(AtomicBool::new(false));
        let closed = Arc::new(AtomicBool::new(false));
        let thread = {
            let (closing, closed) = (closing.clone(), closed.clone());
            std::thread::spawn(move || {
                // ORDERING: SeqCst (more than needed); test flags.
                closing.store(true, Ordering::SeqCst);
                handle.close_fd(fd).unwrap();
                closed.store(true, Ordering::SeqCst);
                handle
            })
        };
        // ORDERING: SeqCst (more than needed); test flags.
        while !closing.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        CloseElsewhere { closed, thread }
    }

    /// Whether the close has returned.
    pub fn closed(&self) -> bool {
        // ORDERING: SeqCst (more than needed); test flags.
        self.closed.load(Ordering::SeqCst)
    }

    /// Waits for the thread; gives the handle back, and whether the close had returned.
    pub fn join(self) -> (Files<Probe>, bool) {
        let handle = self.thread.join().unwrap();
        // ORDERING: SeqCst (more than needed); test flags, read after the join.
        (handle, self.closed.load(Ordering::SeqCst))
    }
}

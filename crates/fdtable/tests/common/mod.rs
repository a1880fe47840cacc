//! A file that knows when it is used after its release, shared by the tests of lent files
//! (`borrow.rs`, `qsbr.rs`).

use fdtable::{FileLike, FileRef};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A file whose every use checks it was not released, and whose release is counted.
pub struct Probe {
    id: usize,
    released: AtomicBool,
    releases: Arc<AtomicUsize>,
}

impl FileLike for Probe {}

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
    })
}

/// The releases counted in `r`.
pub fn released(r: &AtomicUsize) -> usize {
    // ORDERING: SeqCst (more than needed); see `Drop for Probe`.
    r.load(Ordering::SeqCst)
}

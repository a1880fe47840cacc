//! Deferred reclamation: the kernel's RCU, supplied by crossbeam-epoch.
//!
//! A lock-free reader *pins* before it loads a pointer that a writer may retire (the published
//! fd array, a file in a slot) and stays pinned while it dereferences it. A writer that unlinks
//! such a pointer hands it to [`Guard::defer_free`]; crossbeam runs the free only after every
//! thread that was pinned at that moment has unpinned — a grace period.
//!
//! Under `--cfg loom` crossbeam is not used: deferred frees are queued and run by
//! [`drain`] at the end of each model iteration, after every model thread has joined. The loom
//! models therefore check everything except the length of the grace period, which is
//! crossbeam's business; that readers are pinned where they must be is enforced by the types
//! (every lock-free load of the array takes a `&Guard`).

/// Proof that the current thread is pinned (inside a read-side critical section).
pub(crate) struct Guard {
    #[cfg(not(loom))]
    inner: crossbeam_epoch::Guard,
    #[cfg(loom)]
    _private: (),
}

/// Enters a read-side critical section (`rcu_read_lock`).
#[inline]
pub(crate) fn pin() -> Guard {
    #[cfg(not(loom))]
    {
        Guard {
            inner: crossbeam_epoch::pin(),
        }
    }
    #[cfg(loom)]
    {
        Guard { _private: () }
    }
}

impl Guard {
    /// Schedules `free(ptr)` to run once no reader pinned before this call can still see `ptr`
    /// (`call_rcu`).
    ///
    /// # Safety
    ///
    /// `ptr` must already be unreachable for readers that pin after this call, and calling
    /// `free(ptr)` once, from any thread, must be sound.
    pub(crate) unsafe fn defer_free<T>(&self, ptr: *mut T, free: unsafe fn(*mut T)) {
        #[cfg(not(loom))]
        {
            let ptr = SendPtr(ptr);
            // SAFETY: the caller guarantees `ptr` is unlinked, so after the grace period no
            // reader holds it, and that `free` may run once on any thread.
            unsafe {
                self.inner.defer_unchecked(move || {
                    let ptr = ptr;
                    free(ptr.0)
                });
            }
        }
        #[cfg(loom)]
        {
            // SAFETY: `unsafe fn(*mut T)` and `unsafe fn(*mut ())` are ABI-compatible (raw
            // pointers to sized types are), and the erased function is only ever called with
            // the pointer it was queued with.
            let free: unsafe fn(*mut ()) = unsafe { std::mem::transmute(free) };
            let erased = Deferred {
                ptr: ptr as *mut (),
                free,
            };
            deferred_queue().lock().unwrap().push(erased);
        }
    }
}

#[cfg(not(loom))]
struct SendPtr<T>(*mut T);

#[cfg(loom)]
struct Deferred {
    ptr: *mut (),
    free: unsafe fn(*mut ()),
}

// SAFETY: the entry only frees memory that nobody else references any more; it is moved to
// the draining thread exactly once.
#[cfg(loom)]
unsafe impl Send for Deferred {}

#[cfg(loom)]
fn deferred_queue() -> &'static std::sync::Mutex<Vec<Deferred>> {
    static QUEUE: std::sync::OnceLock<std::sync::Mutex<Vec<Deferred>>> = std::sync::OnceLock::new();
    QUEUE.get_or_init(|| std::sync::Mutex::new(Vec::new()))
}

/// Runs every deferred free queued so far. Loom models call this at the end of each iteration,
/// after joining their threads.
#[cfg(loom)]
pub fn drain() {
    let queued = std::mem::take(&mut *deferred_queue().lock().unwrap());
    for d in queued {
        // SAFETY: queued by `defer_free`, whose contract makes this call sound once; every
        // model thread has joined, so no reader remains.
        unsafe { (d.free)(d.ptr) };
    }
}

/// Pushes this thread's deferred frees to the global queue and helps collect; repeated calls
/// from a quiescent program eventually free everything retired so far. For leak checks in
/// tests; never needed for correctness.
#[cfg(not(loom))]
pub fn drain() {
    for _ in 0..256 {
        crossbeam_epoch::pin().flush();
    }
}

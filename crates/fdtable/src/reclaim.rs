//! Deferred reclamation: the kernel's RCU, supplied by crossbeam-epoch.
//!
//! A lock-free reader *pins* before it loads a pointer that a writer may retire (the published
//! fd array, a file in a slot) and stays pinned while it dereferences it. A writer that unlinks
//! such a pointer hands it to [`Guard::defer_free`]; crossbeam runs the free only after every
//! thread that was pinned at that moment has unpinned — a grace period.
//!
//! Under `--cfg loom` crossbeam is not used. A deferred free is *reclaimed* at the earliest
//! moment EBR allows — as soon as no model thread is pinned — which records its address in a
//! side table; every access the core makes to memory that can be retired (a file's refcount,
//! an array) asserts it is not reclaimed ([`assert_live`]). So a thread that touches such
//! memory without being pinned (the bug class of an unpinned last put) fails the model. The
//! memory itself is freed by [`drain`] at the end of each iteration, after every model thread
//! has joined.

/// Proof that the current thread is pinned (inside a read-side critical section).
#[must_use]
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
        loom_state()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pinned += 1;
        // Synchronise with every reclamation before us (crossbeam's pin is a SeqCst RMW, and
        // its epoch advance publishes what was unlinked before the retirement).
        // ORDERING: AcqRel; pairs with the AcqRel RMWs of `Guard::drop` and `defer_free`.
        EPOCH.fetch_add(0, loom::sync::atomic::Ordering::AcqRel);
        Guard { _private: () }
    }
}

#[cfg(loom)]
impl Drop for Guard {
    fn drop(&mut self) {
        let now_zero = {
            let mut st = loom_state().lock().unwrap_or_else(|e| e.into_inner());
            st.pinned -= 1;
            st.pinned == 0
        };
        if now_zero {
            // The grace period: publish it to later pins (a model switch point).
            // ORDERING: AcqRel; pairs with the AcqRel RMW of every later `pin`.
            EPOCH.fetch_add(1, loom::sync::atomic::Ordering::AcqRel);
            let mut st = loom_state().lock().unwrap_or_else(|e| e.into_inner());
            if st.pinned == 0 {
                // Nobody is pinned: everything retired so far may be freed now.
                let retired = std::mem::take(&mut st.retired);
                for d in &retired {
                    st.reclaimed.insert(d.ptr as usize);
                }
                st.to_free.extend(retired);
            }
        }
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
            // Order the caller's unlinking before the reclamation that will free this.
            // ORDERING: AcqRel; pairs with the AcqRel RMW of the `Guard::drop` that frees it.
            EPOCH.fetch_add(0, loom::sync::atomic::Ordering::AcqRel);
            loom_state()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retired
                .push(erased);
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
#[derive(Default)]
struct LoomState {
    /// Model threads pinned right now.
    pinned: usize,
    /// Retired while someone was pinned: not yet reclaimable.
    retired: Vec<Deferred>,
    /// Reclaimed (no thread could legally hold them any more), freed at `drain`.
    to_free: Vec<Deferred>,
    reclaimed: std::collections::HashSet<usize>,
}

#[cfg(loom)]
loom::lazy_static! {
    /// The model's epoch: an RMW chain through retirements, grace periods and pins.
    static ref EPOCH: loom::sync::atomic::AtomicUsize = loom::sync::atomic::AtomicUsize::new(0);
}

#[cfg(loom)]
fn loom_state() -> &'static std::sync::Mutex<LoomState> {
    static STATE: std::sync::OnceLock<std::sync::Mutex<LoomState>> = std::sync::OnceLock::new();
    STATE.get_or_init(Default::default)
}

/// Under loom: panics if `ptr` was reclaimed, i.e. the caller touches retired memory while
/// not protected by a pin that predates the retirement. A no-op otherwise.
#[inline(always)]
pub(crate) fn assert_live<T>(ptr: *const T) {
    #[cfg(loom)]
    assert!(
        !loom_state()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .reclaimed
            .contains(&(ptr as usize)),
        "access to reclaimed memory at {ptr:p}"
    );
    #[cfg(not(loom))]
    let _ = ptr;
}

/// Runs every deferred free queued so far. Loom models call this at the end of each iteration,
/// after joining their threads.
#[cfg(loom)]
pub fn drain() {
    let mut st = loom_state().lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(st.pinned, 0, "a guard outlived its model iteration");
    let mut all = std::mem::take(&mut st.to_free);
    all.append(&mut st.retired);
    st.reclaimed.clear();
    drop(st);
    for d in all {
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

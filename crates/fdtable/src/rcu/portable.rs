//! [`PortableRcu`]: an RCU that needs nothing but atomics and a spinlock, for embedders
//! without one of their own (`fdtable::set_rcu!(fdtable::rcu::PortableRcu)`).
//!
//! Readers are counted in two phases, as the kernel's SRCU counts them: a reader increments
//! the counter of the current phase (and re-checks that the phase did not flip under it); a
//! grace period flips the phase and waits for the old phase's counter to drain. Callbacks are
//! batched: those queued while no grace period runs start the next one, and run when its old
//! phase drains — checked by the next `call_rcu` or by the last reader of that phase leaving.
//!
//! Every read-side section costs two sequentially consistent read-modify-writes on a counter
//! shared by all threads, so readers on different processors contend for its cache line: this
//! is for bring-up, tests and single-processor kernels. A kernel with an RCU of its own should
//! plug that in instead.

use super::{Rcu, RcuHead};
use crate::lock::RawSpinLock;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;
use lock_api::Mutex;

/// The portable RCU: readers are counted in two phases, as the kernel's SRCU counts them; a
/// grace period flips the phase and waits for the old phase's count to drain; callbacks are
/// batched and run when their grace period ends. Every read-side section costs two
/// sequentially consistent read-modify-writes on a counter shared by all threads: for
/// bring-up, tests and single-processor kernels; plug in a kernel's own RCU where there is one.
#[derive(Debug)]
pub struct PortableRcu;

static PHASE: AtomicUsize = AtomicUsize::new(0);
static READERS: [CachePadded<AtomicUsize>; 2] = [
    CachePadded::new(AtomicUsize::new(0)),
    CachePadded::new(AtomicUsize::new(0)),
];
/// Set while a grace period waits for its old phase to drain.
static IN_FLIGHT: AtomicBool = AtomicBool::new(false);
static STATE: Mutex<RawSpinLock, State> = Mutex::const_new(
    <RawSpinLock as lock_api::RawMutex>::INIT,
    State {
        next: ptr::null_mut(),
        waiting: ptr::null_mut(),
        old_phase: 0,
    },
);

struct State {
    /// Callbacks queued since the current grace period started (a LIFO list).
    next: *mut RcuHead,
    /// Callbacks of the grace period in flight.
    waiting: *mut RcuHead,
    /// The phase the grace period in flight waits on.
    old_phase: usize,
}

// SAFETY: only queued heads, whose objects are unreachable, touched under the lock.
unsafe impl Send for State {}

/// Completes the grace period in flight if its old phase drained, and starts the next one if
/// callbacks wait. Returns the callbacks that may run now.
fn advance(st: &mut State) -> *mut RcuHead {
    let mut ready = ptr::null_mut();
    // ORDERING: SeqCst loads and stores here pair with the readers' SeqCst read-modify-writes
    // (the Dekker pairing of "flip, then check the old counter" against "increment, then
    // re-check the phase").
    if IN_FLIGHT.load(Ordering::SeqCst) && READERS[st.old_phase].load(Ordering::SeqCst) == 0 {
        ready = core::mem::replace(&mut st.waiting, ptr::null_mut());
        IN_FLIGHT.store(false, Ordering::SeqCst);
    }
    if !IN_FLIGHT.load(Ordering::SeqCst) && !st.next.is_null() {
        st.waiting = core::mem::replace(&mut st.next, ptr::null_mut());
        // ORDERING: SeqCst; see above.
        let old = PHASE.fetch_add(1, Ordering::SeqCst) & 1;
        st.old_phase = old;
        IN_FLIGHT.store(true, Ordering::SeqCst);
        if READERS[old].load(Ordering::SeqCst) == 0 {
            // Nobody was reading: this grace period is already over.
            let more = core::mem::replace(&mut st.waiting, ptr::null_mut());
            IN_FLIGHT.store(false, Ordering::SeqCst);
            ready = concat(ready, more);
        }
    }
    ready
}

fn concat(a: *mut RcuHead, b: *mut RcuHead) -> *mut RcuHead {
    if a.is_null() {
        return b;
    }
    let mut t = a;
    // SAFETY: queued heads are valid until their callbacks run.
    unsafe {
        while !(*t).next.is_null() {
            t = (*t).next;
        }
        (*t).next = b;
    }
    a
}

/// Runs a list of callbacks whose grace period has elapsed.
///
/// # Safety
///
/// As stated.
unsafe fn run(mut h: *mut RcuHead) {
    while !h.is_null() {
        // SAFETY: queued and valid; the link is read before the callback frees it.
        unsafe {
            let next = (*h).next;
            if let Some(f) = (*h).func {
                f(NonNull::new_unchecked(h));
            }
            h = next;
        }
    }
}

fn poll() {
    if let Some(mut st) = STATE.try_lock() {
        let ready = advance(&mut st);
        drop(st);
        // SAFETY: `advance` returns only callbacks whose grace period elapsed.
        unsafe { run(ready) };
    }
}

// SAFETY: a grace period flips the phase and completes only when the old phase's counter reads
// zero; a reader counted in a phase re-checked (SeqCst) that the phase had not flipped after it
// incremented, so every reader that began before the flip is counted in the old phase and is
// waited for. Callbacks queued before a flip run only after that flip's grace period.
unsafe impl Rcu for PortableRcu {
    fn read_lock() -> usize {
        loop {
            // ORDERING: SeqCst; see `advance`.
            let p = PHASE.load(Ordering::SeqCst) & 1;
            READERS[p].fetch_add(1, Ordering::SeqCst);
            if PHASE.load(Ordering::SeqCst) & 1 == p {
                return p;
            }
            Self::read_unlock(p);
        }
    }

    fn read_unlock(token: usize) {
        // ORDERING: SeqCst; see `advance` (and Release for the section's accesses).
        if READERS[token & 1].fetch_sub(1, Ordering::SeqCst) == 1
            && IN_FLIGHT.load(Ordering::SeqCst)
        {
            poll();
        }
    }

    unsafe fn call_rcu(head: NonNull<RcuHead>, func: unsafe fn(NonNull<RcuHead>)) {
        let mut st = STATE.lock();
        // SAFETY: the caller hands `head` over until `func` runs.
        unsafe {
            (*head.as_ptr()).func = Some(func);
            (*head.as_ptr()).next = st.next;
        }
        st.next = head.as_ptr();
        let ready = advance(&mut st);
        drop(st);
        // SAFETY: see `poll`.
        unsafe { run(ready) };
    }

    fn synchronize_rcu() {
        // Two grace periods: the first may have been in flight before the call (and so not
        // wait for readers that began after its flip); the second starts after the first
        // completed, so after the call.
        for _ in 0..2 {
            let target = {
                let mut st = STATE.lock();
                let ready = advance(&mut st);
                // ORDERING: SeqCst; see `advance`.
                if !IN_FLIGHT.load(Ordering::SeqCst) {
                    st.waiting = core::mem::replace(&mut st.next, ptr::null_mut());
                    st.old_phase = PHASE.fetch_add(1, Ordering::SeqCst) & 1;
                    IN_FLIGHT.store(true, Ordering::SeqCst);
                }
                let target = st.old_phase;
                drop(st);
                // SAFETY: see `poll`.
                unsafe { run(ready) };
                target
            };
            // ORDERING: SeqCst; see `advance`.
            while READERS[target].load(Ordering::SeqCst) != 0 {
                core::hint::spin_loop();
            }
            let ready = advance(&mut STATE.lock());
            // SAFETY: see `poll`.
            unsafe { run(ready) };
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::boxed::Box;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize as Counter;

    #[repr(C)]
    struct Obj {
        head: RcuHead,
        freed: Arc<Counter>,
    }

    unsafe fn free_obj(h: NonNull<RcuHead>) {
        // SAFETY: `head` is the first field of an `Obj` made by `Box::into_raw`.
        let o = unsafe { Box::from_raw(h.as_ptr() as *mut Obj) };
        // ORDERING: Relaxed; a test counter.
        o.freed.fetch_add(1, Ordering::Relaxed);
    }

    fn retire(freed: &Arc<Counter>) {
        let o = Box::into_raw(Box::new(Obj {
            head: RcuHead::new(),
            freed: freed.clone(),
        }));
        // SAFETY: never published; freed once by the callback.
        unsafe { PortableRcu::call_rcu(NonNull::new_unchecked(o as *mut RcuHead), free_obj) };
    }

    // The portable RCU's state is global: one test drives it.
    #[test]
    fn grace_periods_wait_for_readers_and_complete() {
        let freed = Arc::new(Counter::new(0));
        let t = PortableRcu::read_lock();
        retire(&freed);
        for _ in 0..4 {
            poll();
        }
        // ORDERING: Relaxed; a test counter.
        assert_eq!(freed.load(Ordering::Relaxed), 0, "freed under a reader");
        PortableRcu::read_unlock(t);
        PortableRcu::synchronize_rcu();
        // ORDERING: Relaxed; a test counter.
        assert_eq!(freed.load(Ordering::Relaxed), 1);

        // Many threads reading and retiring: everything is freed once, after the readers.
        let threads: std::vec::Vec<_> = (0..4)
            .map(|_| {
                let freed = freed.clone();
                std::thread::spawn(move || {
                    for i in 0..2000 {
                        let t = PortableRcu::read_lock();
                        if i % 3 == 0 {
                            retire(&freed);
                        }
                        PortableRcu::read_unlock(t);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        PortableRcu::synchronize_rcu();
        // ORDERING: Relaxed; a test counter.
        assert_eq!(freed.load(Ordering::Relaxed), 1 + 4 * 667);
    }
}

//! Quiescent-state-based readers ([`QsbrThread`]).

use crate::Errno;
use core::marker::PhantomData;
#[cfg(all(feature = "std", not(loom)))]
use core::ptr::NonNull;

/// This thread as a QSBR reader: lookups with no read-side section at all.
///
/// The kernel's `rcu_read_lock` costs nothing on a kernel without preemption: a CPU is known
/// to hold no RCU-protected pointer whenever it passes through a context switch, so readers
/// announce nothing and the grace period waits for every CPU to pass through one. liburcu's
/// QSBR flavour does the same in user space: a registered thread reports its quiescent
/// states itself, and goes offline before it blocks.
///
/// A `QsbrThread` is that for this library. While a thread holds one, it is *online*:
/// [`Files::fdget_qsbr`](crate::Files::fdget_qsbr) lends it files with no section to begin
/// or end and no reference count, and memory retired meanwhile (a replaced fd array, a
/// released file's header) is not freed until the thread reports a quiescent state
/// ([`QsbrThread::quiescent_state`]) or goes offline ([`QsbrThread::offline`], or dropping
/// it). A natural place to report is where an embedder's dispatch loop finishes a request: a
/// user-space kernel between two system calls, a WASI host between two host calls.
///
/// The borrow checker enforces the protocol: every file lent through a `QsbrThread` borrows
/// it, and reporting a quiescent state or going offline takes it mutably, so no lent file
/// survives either.
///
/// The price is on the other side. Every grace period waits for every online thread's next
/// quiescent state, so a thread that stays online without reporting (blocked in a system
/// call, or busy in a loop) holds back the reclamation of every thread, and the last close
/// of a lent file on any thread waits for it. Go offline around anything that may block.
///
/// While online, this thread's releases of lent files wait for its next quiescent state, and
/// [`FileRef::try_unwrap`](crate::FileRef::try_unwrap) gives the reference back (as inside a
/// borrow section): unwrap inside [`QsbrThread::offline`].
///
/// Not `Send`: it is this thread's state. Dropping it takes the thread offline; leaking it
/// (`mem::forget`) leaves the thread online for good, which stalls every grace period of the
/// process. Drop it before the thread returns: one kept in a thread-local stays online
/// through the thread's exit until that thread-local is destroyed (its lookups stay safe), so
/// a thread-local destructor that blocks meanwhile can hold a release on another thread.
///
/// ```
/// use fdtable::rcu::QsbrThread;
/// use fdtable::{FileLike, FileRef, Files};
/// struct F(u32);
/// impl FileLike for F {}
///
/// let mut files: Files<F> = Files::new();
/// let fd = files.install(FileRef::new(F(7)), 0, 1024).unwrap();
/// let shared = files.share();
/// let mut me = QsbrThread::online().unwrap();
/// for _request in 0..3 {
///     // A request: any number of lookups, no section, no reference count.
///     let f = shared.fdget_qsbr(&me, fd).unwrap();
///     assert_eq!(f.0, 7);
///     drop(f);
///     // Between requests: nothing lent survives this (it borrows `me` mutably).
///     me.quiescent_state();
/// }
/// // Around a call that may block, offline: grace periods do not wait for this thread.
/// me.offline(|| std::thread::sleep(std::time::Duration::from_millis(1)));
/// ```
pub struct QsbrThread {
    #[cfg(all(feature = "std", not(loom)))]
    rec: NonNull<super::epoch::Record>,
    _not_send: PhantomData<*const ()>,
}

impl QsbrThread {
    /// Makes this thread a QSBR reader (liburcu's `rcu_register_thread` followed by
    /// `rcu_thread_online`).
    ///
    /// # Errors
    ///
    /// - `EBUSY`: this thread already has a `QsbrThread` (one per thread, online or inside
    ///   [`offline`](QsbrThread::offline)).
    /// - `ENOMEM`: no memory for the thread's RCU record, or the thread is exiting.
    /// - `ENOSYS`: the host cannot give the built-in RCU its asymmetric barrier (Linux before
    ///   4.14, or `membarrier` refused by a seccomp filter); lookups then use
    ///   [`Files::fdget_rcu`](crate::Files::fdget_rcu).
    pub fn online() -> Result<Self, Errno> {
        #[cfg(all(feature = "std", not(loom)))]
        {
            let rec = super::epoch::qsbr_online()?;
            Ok(QsbrThread {
                rec,
                _not_send: PhantomData,
            })
        }
        #[cfg(loom)]
        {
            if !super::loom_model::qsbr_register() {
                return Err(Errno::EBUSY);
            }
            Ok(QsbrThread {
                _not_send: PhantomData,
            })
        }
    }

    /// Reports a quiescent state (`rcu_quiescent_state`): nothing this thread read through
    /// the table before it is used after it. Releases of files lent to this thread that
    /// were waiting for it run here, on this thread (a file's `Drop` may run).
    ///
    /// Cheap when nothing waits (a test, a load and a store: no fence, no read-modify-write);
    /// call it between requests.
    #[inline(always)]
    pub fn quiescent_state(&mut self) {
        #[cfg(all(feature = "std", not(loom)))]
        super::epoch::qsbr_quiescent(self.rec);
        #[cfg(loom)]
        super::loom_model::qsbr_quiescent();
    }

    /// Runs `f` with this thread offline (`rcu_thread_offline` … `rcu_thread_online`):
    /// grace periods do not wait for it meanwhile. For anything that may block. Back online
    /// when `f` returns or unwinds.
    pub fn offline<R>(&mut self, f: impl FnOnce() -> R) -> R {
        #[cfg(all(feature = "std", not(loom)))]
        {
            super::epoch::qsbr_store_offline(self.rec);
            // Back online however `f` (or a release run below) ends.
            let _back = super::epoch::BackOnline(self.rec);
            super::epoch::qsbr_run_pending(self.rec);
            f()
        }
        #[cfg(loom)]
        {
            super::loom_model::qsbr_offline();
            struct Back;
            impl Drop for Back {
                fn drop(&mut self) {
                    super::loom_model::qsbr_back_online();
                }
            }
            let _back = Back;
            f()
        }
    }
}

impl Drop for QsbrThread {
    fn drop(&mut self) {
        #[cfg(all(feature = "std", not(loom)))]
        super::epoch::qsbr_drop(self.rec);
        #[cfg(loom)]
        super::loom_model::qsbr_unregister();
    }
}

impl core::fmt::Debug for QsbrThread {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("QsbrThread").finish_non_exhaustive()
    }
}

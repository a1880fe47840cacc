//! The RCU model under `--cfg loom`.
//!
//! A retired object is *reclaimed* at the earliest moment RCU allows — as soon as no model
//! thread is inside a read-side section — which records its address in a side table; every
//! access the core makes to memory that can be retired (a file's count, an array) asserts it
//! was not reclaimed ([`assert_live`]). So a thread that touches such memory outside a section
//! that predates the retirement fails the model. The memory itself is freed by [`drain`] at
//! the end of each iteration, after every model thread has joined.
//!
//! Sections and retirements synchronise through one read-modify-write chain (`EPOCH`),
//! standing in for the ordering the real implementations give (a section's loads
//! happen-before the reclamation that follows it; an unlink happens-before a section that
//! begins after the reclamation).

use super::RcuHead;
use core::ptr::NonNull;

struct Deferred {
    head: NonNull<RcuHead>,
    func: unsafe fn(NonNull<RcuHead>),
    /// The object's address (its head is its first field), as `assert_live` checks it.
    addr: usize,
}

// SAFETY: the entry only frees memory that nobody else references any more; it is moved to
// the draining thread exactly once.
unsafe impl Send for Deferred {}

#[derive(Default)]
struct LoomState {
    /// Model threads inside a section right now.
    pinned: usize,
    /// Retired while someone was inside a section: not yet reclaimable.
    retired: Vec<Deferred>,
    /// Reclaimed (no thread could legally hold them any more), freed at `drain`.
    to_free: Vec<Deferred>,
    reclaimed: std::collections::HashSet<usize>,
}

loom::lazy_static! {
    /// The model's RMW chain through sections and retirements.
    static ref EPOCH: loom::sync::atomic::AtomicUsize = loom::sync::atomic::AtomicUsize::new(0);
    /// Threads inside a section, as loom sees it (for `synchronize`).
    static ref ACTIVE: loom::sync::atomic::AtomicUsize = loom::sync::atomic::AtomicUsize::new(0);
}

fn state() -> std::sync::MutexGuard<'static, LoomState> {
    static STATE: std::sync::OnceLock<std::sync::Mutex<LoomState>> = std::sync::OnceLock::new();
    STATE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

pub(super) fn pin() {
    state().pinned += 1;
    // ORDERING: AcqRel; the RMW chain `synchronize` reads (see there).
    ACTIVE.fetch_add(1, loom::sync::atomic::Ordering::AcqRel);
    // ORDERING: AcqRel; pairs with the AcqRel RMWs of `unpin` and `call_rcu`: reclamations
    // before this section are ordered before it.
    EPOCH.fetch_add(0, loom::sync::atomic::Ordering::AcqRel);
}

pub(super) fn unpin() {
    // ORDERING: AcqRel; a `synchronize` that reads the count this leaves synchronises with the
    // end of this section (the RMWs form one release sequence).
    ACTIVE.fetch_sub(1, loom::sync::atomic::Ordering::AcqRel);
    let now_zero = {
        let mut st = state();
        st.pinned -= 1;
        st.pinned == 0
    };
    if now_zero {
        // The grace period: publish it to later sections (a model switch point).
        // ORDERING: AcqRel; pairs with the AcqRel RMW of every later `pin`.
        EPOCH.fetch_add(1, loom::sync::atomic::Ordering::AcqRel);
        let mut st = state();
        if st.pinned == 0 {
            let retired = std::mem::take(&mut st.retired);
            for d in &retired {
                st.reclaimed.insert(d.addr);
            }
            st.to_free.extend(retired);
        }
    }
}

/// # Safety
///
/// As [`super::call_rcu`].
pub(super) unsafe fn call_rcu(head: NonNull<RcuHead>, func: unsafe fn(NonNull<RcuHead>)) {
    // Every object the table retires has its head as its first field (`FileInner`,
    // `FdTable`), so the head's address is the address `assert_live` checks.
    let addr = head.as_ptr() as usize;
    // Order the caller's unlinking before the reclamation that will free this.
    // ORDERING: AcqRel; pairs with the AcqRel RMW of the `unpin` that reclaims it.
    EPOCH.fetch_add(0, loom::sync::atomic::Ordering::AcqRel);
    let mut st = state();
    let d = Deferred { head, func, addr };
    if st.pinned == 0 {
        st.reclaimed.insert(d.addr);
        st.to_free.push(d);
    } else {
        st.retired.push(d);
    }
}

pub(super) fn assert_live(ptr: *const u8) {
    assert!(
        !state().reclaimed.contains(&(ptr as usize)),
        "access to reclaimed memory at {ptr:p}"
    );
}

/// Runs every deferred free queued so far. Models call this at the end of each iteration,
/// after joining their threads.
pub(super) fn drain() {
    let mut st = state();
    assert_eq!(st.pinned, 0, "a section outlived its model iteration");
    let mut all = std::mem::take(&mut st.to_free);
    all.append(&mut st.retired);
    st.reclaimed.clear();
    drop(st);
    for d in all {
        // SAFETY: queued by `call_rcu`, whose contract makes this call sound once; every model
        // thread has joined, so no reader remains.
        unsafe { (d.func)(d.head) };
    }
}

/// `synchronize_rcu` in the model: waits until no model thread is inside a section (the
/// caller is outside every section), then synchronises with the last section's end.
pub(super) fn synchronize() {
    // The grace period's start: sections that begin after it (their `pin` RMW reads this or
    // later) see everything the caller did before (the unlink of what it will free).
    // ORDERING: AcqRel; pairs with the AcqRel RMW of every later `pin`.
    EPOCH.fetch_add(0, loom::sync::atomic::Ordering::AcqRel);
    // ORDERING: Acquire; reads the RMW chain of `pin`/`unpin`: a zero read synchronises with
    // every section's end before it (stronger than RCU needs: it waits for later sections too).
    while ACTIVE.load(loom::sync::atomic::Ordering::Acquire) != 0 {
        loom::thread::yield_now();
    }
}

loom::thread_local! {
    /// Whether this model thread is a QSBR reader (its section held open between
    /// quiescent states).
    static ONLINE: core::cell::Cell<bool> = core::cell::Cell::new(false);
    /// Whether a `QsbrThread` of this model thread exists (online or offline).
    static READER: core::cell::Cell<bool> = core::cell::Cell::new(false);
    /// Releases waiting for this QSBR reader's next quiescent state.
    static PENDING: core::cell::RefCell<Vec<Deferred>> = core::cell::RefCell::new(Vec::new());
}

/// A new QSBR reader on this model thread, online. False if it already has one.
pub(super) fn qsbr_register() -> bool {
    if READER.with(|r| r.replace(true)) {
        return false;
    }
    qsbr_back_online();
    true
}

/// The reader goes (back) online: a section that stays open until its next quiescent state.
pub(super) fn qsbr_back_online() {
    if !ONLINE.with(|o| o.replace(true)) {
        pin();
    }
}

/// A quiescent state: the section ends (the model's grace period may complete here), what
/// waited for it runs, and a new one begins.
pub(super) fn qsbr_quiescent() {
    qsbr_offline();
    qsbr_back_online();
}

/// Offline: the section ends and what waited for it runs.
pub(super) fn qsbr_offline() {
    if !ONLINE.with(|o| o.replace(false)) {
        return;
    }
    unpin();
    while let Some(d) = PENDING.with(|p| p.borrow_mut().pop()) {
        // SAFETY: queued by `defer_until_quiescent`, whose contract makes one call sound.
        unsafe { (d.func)(d.head) };
    }
}

/// The reader is dropped.
pub(super) fn qsbr_unregister() {
    // As the built-in RCU: the reader is gone once its releases have run.
    qsbr_offline();
    READER.with(|r| r.set(false));
}

/// Whether this model thread is a QSBR reader.
pub(super) fn in_qsbr() -> bool {
    ONLINE.with(|o| o.get())
}

/// Runs `func(head)` at this QSBR reader's next quiescent state.
///
/// # Safety
///
/// As [`super::defer_until_borrows_end`].
pub(super) unsafe fn defer_until_quiescent(
    head: NonNull<RcuHead>,
    func: unsafe fn(NonNull<RcuHead>),
) {
    let addr = head.as_ptr() as usize;
    PENDING.with(|p| p.borrow_mut().push(Deferred { head, func, addr }));
}

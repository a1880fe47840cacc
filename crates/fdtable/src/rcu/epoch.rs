//! The built-in RCU (feature `std`): epochs whose read side is two ordinary stores.
//!
//! # The scheme
//!
//! Each thread that reads owns a [`Record`] (cache-line aligned, linked into a global registry
//! once and reused after the thread exits). A lookup's section stores the global epoch into
//! the record's `lookup` word on entry and zero on exit; the window of a put stores one and
//! zero into its `put` word. Neither store is a read-modify-write, and on Linux neither is
//! followed by a fence: only a compiler barrier.
//!
//! Retired objects go into the retiring thread's *bag*, tagged with the epoch read after they
//! were unlinked (and after a full fence: the unlink must be visible before the tag is read).
//! Every [`BATCH`] retirements the thread tries to *advance* the epoch from `e`
//! to `e + 1`, which succeeds only if every record is quiescent (both words zero) or in a
//! lookup section entered during `e`, with no put window open; an object tagged `t` is freed
//! once the epoch reaches `t + 2` (crossbeam-epoch's rule).
//!
//! # Asymmetric fences
//!
//! The classic scheme needs a full fence between a reader's store of its epoch and its first
//! load of a shared pointer, paired with a fence in the advancer before it reads the records
//! (a store-load, Dekker-style pairing). Here the advancer first runs
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which executes a full barrier on every CPU
//! running a thread of this process (or the CPU passes through a context switch, a full barrier
//! too): so a reader's compiler barrier acts as a full fence at the moment it matters
//! (urcu-memb, `smp_mb_master`). The fence moves from every lookup to one system call per
//! [`BATCH`] retirements.
//!
//! Where `membarrier` is not available (Linux before 4.14, or filtered by seccomp), records
//! are not used: readers take the *anonymous* path, a sequentially consistent increment and
//! decrement of one global counter, and an advance waits until that counter is zero. On hosts
//! other than Linux records are used with a full fence on both sides. Threads that are exiting
//! (their record already returned) and threads whose record could not be allocated take the
//! anonymous path too.
//!
//! # Why a put window needs no epoch
//!
//! A put window blocks any advance while it is open, whatever the epoch. It lasts a handful of
//! instructions, so this cannot starve reclamation; and it is enough: the object a put window
//! protects can only be retired *after* the window opened (its count must first reach zero
//! through this put), so both advances that must pass before it is freed start after the
//! window opened and see it open (after their `membarrier`) until it closes.

use super::RcuHead;
use crate::lock::RawSpinLock;
use core::cell::{Cell, UnsafeCell};
use core::ptr::{self, NonNull};
#[cfg(target_os = "linux")]
use core::sync::atomic::compiler_fence;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};
use crossbeam_utils::CachePadded;
use lock_api::Mutex;

/// Retirements between two attempts to advance the epoch (each attempt costs one
/// `membarrier` call, some microseconds, so this amortises it to a few nanoseconds each).
const BATCH: usize = 256;

/// The global epoch. Starts at 1: a `lookup` word of 0 means "not in a section".
static EPOCH: CachePadded<AtomicUsize> = CachePadded::new(AtomicUsize::new(1));

/// Readers on the anonymous path (no record, see the module docs).
static ANON: CachePadded<AtomicUsize> = CachePadded::new(AtomicUsize::new(0));

/// Every record ever created, and the retirements of threads that exited.
static REGISTRY: Mutex<RawSpinLock, Registry> = Mutex::const_new(
    <RawSpinLock as lock_api::RawMutex>::INIT,
    Registry {
        head: ptr::null(),
        orphans: Queue::new(),
    },
);

struct Registry {
    /// The records, newest first; a record is never freed, only reused.
    head: *const Record,
    /// Retirements left by exited threads (and by threads without a record).
    orphans: Queue,
}

// SAFETY: the registry only holds pointers to records (which are `Sync`: every field another
// thread reads is atomic) and queued heads whose objects are already unreachable; it is only
// touched under its lock.
unsafe impl Send for Registry {}

/// `Record::borrow_slow`: a release waits in `pending` for the outermost borrow to end.
const PENDING: usize = 1 << (usize::BITS - 1);
/// `Record::borrow_slow`: the thread's exit ran while a borrow section was open (one kept in
/// a thread-local destroyed later): the end of the outermost one gives the record back.
const EXITING: usize = 1 << (usize::BITS - 2);

/// The record every thread's [`BORROW`] starts at (and returns to when it may not have one):
/// its `borrow` word is never zero and never written, so a borrow's fast path, which begins
/// only on a record outside every borrow section, always leaves it for the slow path, which
/// registers the thread. Never linked into the registry.
static SENTINEL: Record = Record {
    lookup: AtomicUsize::new(0),
    put: AtomicUsize::new(0),
    borrow: AtomicUsize::new(usize::MAX),
    borrow_slow: Cell::new(0),
    pending: Cell::new(ptr::null_mut()),
    current: AtomicUsize::new(0),
    online: AtomicUsize::new(0),
    reader: Cell::new(false),
    exit_deferred: Cell::new(false),
    in_use: AtomicBool::new(true),
    next: ptr::null(),
    bag: UnsafeCell::new(Queue::new()),
    since: Cell::new(0),
    split: Cell::new(0),
};

/// Value of `LOCAL` for a thread that may not register (exiting, or no record could be
/// made): it takes the anonymous path.
const NO_RECORD: *const Record = ptr::without_provenance(1);
/// Token of a section on the anonymous path.
const ANON_TOKEN: usize = 0;

std::thread_local! {
    /// This thread's record; null until the first section or retirement.
    static LOCAL: Cell<*const Record> = const { Cell::new(ptr::null()) };
    /// This thread's record as borrows see it: [`SENTINEL`] until the thread has a record of
    /// its own (and again after it gave it back), so that a borrow needs no null check.
    static BORROW: Cell<*const Record> = const { Cell::new(&raw const SENTINEL) };
    /// Gives the record back when the thread exits; touched once, at registration.
    static EXIT: ExitGuard = const { ExitGuard };
}

/// One thread's side of the protocol.
///
/// # Invariants
///
/// - `lookup`, `put` are written only by the owner (a thread, or the thread using the table
///   handle that owns the record); the advancer only reads them.
/// - `bag` and `since` are touched only by the owning thread (or, after it gave the record
///   back, by nobody: the bag is moved to the orphans first).
/// - `next` is written once, before the record is published in the registry.
#[repr(align(128))]
pub(crate) struct Record {
    /// The epoch a lookup section began in, or 0.
    lookup: AtomicUsize,
    /// 1 while a put window is open.
    put: AtomicUsize,
    /// The epoch the outermost borrow section began in, or 0.
    borrow: AtomicUsize,
    /// What a borrow's end must do besides storing 0 in `borrow` (owner-only): the number of
    /// borrow sections open beyond one (sections nest, and end in any order), and
    /// [`PENDING`] when releases wait in `pending`. Zero on the fast path, so that an end is
    /// one comparison and one store.
    borrow_slow: Cell<usize>,
    /// Releases waiting for this thread's borrow sections to end (owner-only), linked through
    /// their heads.
    pending: Cell<*mut RcuHead>,
    /// The epoch as the last advance published it to this record (readers announce this
    /// rather than load the global: one load from a line they own instead of two from a
    /// shared one; a stale value only makes the next advance wait for the section).
    current: AtomicUsize,
    /// While the owner is a QSBR reader (`super::qsbr`): the epoch of its last quiescent
    /// state; 0 otherwise. An advance treats it as a lookup section that began then.
    online: AtomicUsize,
    /// A `QsbrThread` of the owner exists (owner-only): one per thread, online or offline.
    reader: Cell<bool>,
    /// The owner thread exited while a `QsbrThread` of it was alive: its drop, later in the
    /// thread's exit, gives the record back (owner-only).
    exit_deferred: Cell<bool>,
    /// Owned by a live thread.
    in_use: AtomicBool,
    next: *const Record,
    bag: UnsafeCell<Queue>,
    /// Retirements since the last collection (owner-only).
    since: Cell<usize>,
    /// Borrow sections of the owner split from their `RcuFd` (`RcuFd::into_raw`), which end
    /// without their token (owner-only): only that many may be ended so.
    split: Cell<usize>,
}

// SAFETY: see the invariants: other threads read only the atomics and `next` (immutable once
// published); `bag` and `since` are owner-only.
unsafe impl Sync for Record {}

/// A FIFO of retired heads, linked through `RcuHead::next`, tags in `RcuHead::data`.
struct Queue {
    head: *mut RcuHead,
    tail: *mut RcuHead,
    len: usize,
}

impl Queue {
    const fn new() -> Self {
        Queue {
            head: ptr::null_mut(),
            tail: ptr::null_mut(),
            len: 0,
        }
    }

    /// # Safety
    ///
    /// `h` is valid and not queued anywhere.
    unsafe fn push(&mut self, h: NonNull<RcuHead>) {
        let h = h.as_ptr();
        // SAFETY: per the contract; `tail`, if non-null, is a queued head.
        unsafe {
            (*h).next = ptr::null_mut();
            if self.tail.is_null() {
                self.head = h;
            } else {
                (*self.tail).next = h;
            }
        }
        self.tail = h;
        self.len += 1;
    }

    /// Appends `other` (emptying it).
    fn append(&mut self, other: &mut Queue) {
        if other.head.is_null() {
            return;
        }
        if self.tail.is_null() {
            self.head = other.head;
        } else {
            // SAFETY: `tail` is a queued head.
            unsafe { (*self.tail).next = other.head };
        }
        self.tail = other.tail;
        self.len += other.len;
        *other = Queue::new();
    }

    /// Removes and returns the prefix of heads tagged at most `max_tag`.
    fn take_ready(&mut self, max_tag: usize) -> Queue {
        let mut ready = Queue::new();
        // SAFETY: every linked head is valid until its callback runs.
        unsafe {
            while !self.head.is_null() && (*self.head).data <= max_tag {
                let h = self.head;
                self.head = (*h).next;
                self.len -= 1;
                if self.head.is_null() {
                    self.tail = ptr::null_mut();
                }
                ready.push(NonNull::new_unchecked(h));
            }
        }
        ready
    }

    /// Runs every callback in the queue.
    ///
    /// # Safety
    ///
    /// The grace period of every queued head has elapsed.
    unsafe fn run(self) {
        let mut h = self.head;
        while !h.is_null() {
            // SAFETY: `h` is queued and valid; read its link before the callback frees it.
            unsafe {
                let next = (*h).next;
                if let Some(f) = (*h).func {
                    f(NonNull::new_unchecked(h));
                }
                h = next;
            }
        }
    }
}

/// The reader's half of the fence pair.
#[inline(always)]
pub(super) fn light_barrier() {
    #[cfg(target_os = "linux")]
    compiler_fence(Ordering::SeqCst);
    #[cfg(not(target_os = "linux"))]
    fence(Ordering::SeqCst);
}

/// The advancer's half: a full barrier on every CPU running a thread of this process.
pub(super) fn heavy_barrier() {
    #[cfg(test)]
    tests::HEAVY_BARRIERS.with(|n| n.set(n.get() + 1));
    #[cfg(target_os = "linux")]
    {
        if membarrier::ready() {
            membarrier::private_expedited();
            return;
        }
    }
    fence(Ordering::SeqCst);
}

#[cfg(target_os = "linux")]
mod membarrier {
    use core::sync::atomic::{AtomicU8, Ordering};

    const MEMBARRIER_CMD_QUERY: libc::c_long = 0;
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    /// 0: not probed, 1: registered, 2: unavailable.
    static STATE: AtomicU8 = AtomicU8::new(0);

    fn membarrier(cmd: libc::c_long) -> libc::c_long {
        // SAFETY: membarrier(2) takes no pointers; an unsupported command fails with EINVAL
        // or ENOSYS.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        }
    }

    /// Whether private expedited membarrier is registered for this process (probing and
    /// registering on first use).
    pub(super) fn ready() -> bool {
        // ORDERING: Acquire; pairs with the Release store below: a thread that sees 1 sees
        // the registration (a syscall, ordered by the store anyway).
        match STATE.load(Ordering::Acquire) {
            1 => true,
            2 => false,
            _ => {
                let q = membarrier(MEMBARRIER_CMD_QUERY);
                let ok = q >= 0
                    && q & MEMBARRIER_CMD_PRIVATE_EXPEDITED != 0
                    && membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
                // ORDERING: Release; pairs with the Acquire above. Racing probes store the
                // same answer.
                STATE.store(if ok { 1 } else { 2 }, Ordering::Release);
                ok
            }
        }
    }

    /// Registers when the library is loaded, while the process normally has one thread:
    /// the kernel registers a process with several threads only after a grace period
    /// (`synchronize_rcu` in `sync_runqueues_membarrier_state`), measured at 14-26 ms on a
    /// 2-vCPU VM against 2 µs alone, which the first reclaim would otherwise pay. liburcu's
    /// memb flavour registers from its constructor for the same reason. A library loaded
    /// into a running multi-threaded process registers at first use, as before.
    #[used]
    #[unsafe(link_section = ".init_array")]
    static REGISTER_AT_LOAD: extern "C" fn() = register_at_load;

    extern "C" fn register_at_load() {
        let _ = ready();
    }

    pub(super) fn private_expedited() {
        // Registered, so this cannot fail; if it ever did, the caller would still have issued
        // a full fence of its own below.
        if membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 {
            core::sync::atomic::fence(Ordering::SeqCst);
        }
    }
}

/// Whether records may be used (on Linux: only with membarrier).
fn records_allowed() -> bool {
    #[cfg(target_os = "linux")]
    {
        membarrier::ready()
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

#[inline(always)]
fn local() -> *const Record {
    LOCAL.with(|c| c.get())
}

/// A section begun on this thread's record (never the anonymous path).
#[derive(Clone, Copy)]
pub(super) struct FastSection(NonNull<Record>);

impl FastSection {
    /// The record the section is on.
    #[inline(always)]
    pub(super) fn record(self) -> NonNull<Record> {
        self.0
    }
}

/// Opens a put window on `r`, a record of a table handle the caller uses.
#[inline(always)]
pub(super) fn put_begin_on(r: NonNull<Record>) -> FastSection {
    begin_put_on(r);
    FastSection(r)
}

/// This thread's record, if it has one (the fast path of every section).
#[inline(always)]
fn record() -> Option<NonNull<Record>> {
    let r = local();
    if (r as usize) <= NO_RECORD as usize {
        None
    } else {
        // SAFETY: checked non-null above.
        Some(unsafe { NonNull::new_unchecked(r as *mut Record) })
    }
}

/// Begins a lookup section on this thread's record; `None` if it has none yet (the caller
/// then takes its slow path, which uses [`lookup_begin`]).
#[inline(always)]
pub(super) fn lookup_try_begin() -> Option<FastSection> {
    let r = record()?;
    begin_lookup_on(r);
    Some(FastSection(r))
}

#[inline(always)]
fn begin_lookup_on(r: NonNull<Record>) {
    // SAFETY: a record of this thread or of a handle it uses; records live forever.
    let rec = unsafe { r.as_ref() };
    // ORDERING: Acquire on `current`; pairs with the Release store of it in `try_advance`: a
    // reader that sees epoch e+1 there sees every unlink made visible by that advance's
    // membarrier. Release on the record (a plain store on x86): pairs with the Acquire load in
    // `try_advance`, so an advancer that reads this value also synchronises with the end of
    // our previous section; against the section's own loads the store is ordered by the
    // advancer's membarrier (module docs), not by this ordering.
    rec.lookup
        .store(rec.current.load(Ordering::Acquire), Ordering::Release);
    light_barrier();
}

/// Ends a section begun by [`lookup_try_begin`].
#[inline(always)]
pub(super) fn lookup_end_fast(s: FastSection) {
    // SAFETY: this thread's record (from `lookup_try_begin`).
    let rec = unsafe { s.0.as_ref() };
    // ORDERING: Release; pairs with the Acquire load in `try_advance`: every access the
    // section made happens-before a free that follows the advancer seeing 0.
    rec.lookup.store(0, Ordering::Release);
}

/// Opens a put window on this thread's record; `None` if it has none yet.
#[inline(always)]
pub(super) fn put_try_begin() -> Option<FastSection> {
    let r = record()?;
    begin_put_on(r);
    Some(FastSection(r))
}

#[inline(always)]
fn begin_put_on(r: NonNull<Record>) {
    // SAFETY: as in `begin_lookup_on`.
    let rec = unsafe { r.as_ref() };
    // ORDERING: Release (a plain store on x86); as in `begin_lookup_on`.
    rec.put.store(1, Ordering::Release);
    light_barrier();
}

/// Closes a window opened by [`put_try_begin`].
#[inline(always)]
pub(super) fn put_end_fast(s: FastSection) {
    // SAFETY: as in `lookup_end_fast`.
    let rec = unsafe { s.0.as_ref() };
    // ORDERING: Release; as in `lookup_end_fast`.
    rec.put.store(0, Ordering::Release);
}

/// Begins a lookup section, registering this thread if needed; returns its token (the
/// record's address, or [`ANON_TOKEN`]).
#[inline]
pub(super) fn lookup_begin() -> usize {
    match lookup_try_begin() {
        Some(s) => s.0.as_ptr() as usize,
        None => begin_slow(true),
    }
}

/// Ends a section begun by [`lookup_begin`].
#[inline]
pub(super) fn lookup_end(token: usize) {
    if token == ANON_TOKEN {
        return anon_end();
    }
    // SAFETY: a non-anonymous token is a record (from `lookup_begin`).
    lookup_end_fast(FastSection(unsafe {
        NonNull::new_unchecked(token as *mut Record)
    }));
}

/// Opens a put window, registering this thread if needed.
#[inline]
pub(super) fn put_begin() -> usize {
    match put_try_begin() {
        Some(s) => s.0.as_ptr() as usize,
        None => begin_slow(false),
    }
}

/// Closes a window opened by [`put_begin`].
#[inline]
pub(super) fn put_end(token: usize) {
    if token == ANON_TOKEN {
        return anon_end();
    }
    // SAFETY: as in `lookup_end`.
    put_end_fast(FastSection(unsafe {
        NonNull::new_unchecked(token as *mut Record)
    }));
}

#[cold]
#[inline(never)]
fn begin_slow(lookup: bool) -> usize {
    if local().is_null() && register() {
        return if lookup { lookup_begin() } else { put_begin() };
    }
    // ORDERING: SeqCst; a full fence against the advancer's SeqCst load of `ANON` (the
    // anonymous path is the classic fence-on-both-sides protocol).
    ANON.fetch_add(1, Ordering::SeqCst);
    ANON_TOKEN
}

#[cold]
#[inline(never)]
fn anon_end() {
    // ORDERING: Release; the section's accesses happen-before an advance that reads 0.
    ANON.fetch_sub(1, Ordering::Release);
}

/// Gives this thread a record. False if it may not have one (then `LOCAL` is [`NO_RECORD`]).
#[cold]
fn register() -> bool {
    if EXIT.try_with(|_| ()).is_err() {
        LOCAL.with(|c| c.set(NO_RECORD));
        return false;
    }
    match claim_record() {
        Some(r) => {
            LOCAL.with(|c| c.set(r.as_ptr()));
            BORROW.with(|c| c.set(r.as_ptr()));
            true
        }
        None => {
            LOCAL.with(|c| c.set(NO_RECORD));
            false
        }
    }
}

/// A record for a new owner (a thread, or a table handle): one given back earlier, or a new
/// one linked into the registry. `None` if records may not be used (no membarrier) or memory
/// ran out.
#[cold]
fn claim_record() -> Option<NonNull<Record>> {
    if !records_allowed() {
        return None;
    }
    let mut reg = REGISTRY.lock();
    // Reuse a record given back by an exited thread or a dropped handle.
    let mut r = reg.head;
    while !r.is_null() {
        // SAFETY: registry records are never freed.
        let rec = unsafe { &*r };
        // ORDERING: Acquire on success; pairs with the Release store in `release_record`:
        // the previous owner's uses of the record happen-before ours. Relaxed on failure.
        if rec
            .in_use
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            // ORDERING: Relaxed both; advances store the epoch and every record's `current`
            // under the registry lock, which we hold: this is the epoch, and the owner's
            // first section is ordered after the lock (as for a new record).
            rec.current
                .store(EPOCH.load(Ordering::Relaxed), Ordering::Relaxed);
            // Owner-only; a record is given back offline (`online` is 0) and without a
            // reader.
            rec.reader.set(false);
            rec.exit_deferred.set(false);
            return NonNull::new(r as *mut Record);
        }
        r = rec.next;
    }
    let layout = core::alloc::Layout::new::<Record>();
    // SAFETY: `Record` is not zero-sized.
    let p = unsafe { std::alloc::alloc(layout) } as *mut Record;
    let p = NonNull::new(p)?;
    // SAFETY: `p` is a fresh allocation for a `Record`.
    unsafe {
        p.as_ptr().write(Record {
            lookup: AtomicUsize::new(0),
            put: AtomicUsize::new(0),
            borrow: AtomicUsize::new(0),
            borrow_slow: Cell::new(0),
            pending: Cell::new(ptr::null_mut()),
            current: AtomicUsize::new(EPOCH.load(Ordering::Acquire)),
            online: AtomicUsize::new(0),
            reader: Cell::new(false),
            exit_deferred: Cell::new(false),
            in_use: AtomicBool::new(true),
            next: reg.head,
            bag: UnsafeCell::new(Queue::new()),
            since: Cell::new(0),
            split: Cell::new(0),
        })
    };
    // The advancer reads the list under this lock, so the record is seen by every advance
    // that starts after the unlock, before the owner's first section.
    reg.head = p.as_ptr();
    Some(p)
}

/// Gives a record back for reuse; its owner is outside every section and its bag is empty.
fn release_record(rec: &Record) {
    // ORDERING: Release; pairs with the Acquire compare-and-swap in `claim_record`.
    rec.in_use.store(false, Ordering::Release);
}

/// A table handle's own record (the handle is used by one thread at a time, so it can carry
/// one): the lookups and puts made through the handle use it without touching thread-local
/// storage. Null until the handle's first shared lookup.
pub(super) struct HandleRecord(Cell<*const Record>);

impl HandleRecord {
    pub(super) const fn new() -> Self {
        HandleRecord(Cell::new(ptr::null()))
    }

    #[inline(always)]
    fn get(&self) -> Option<NonNull<Record>> {
        NonNull::new(self.0.get() as *mut Record)
    }

    /// Begins a lookup section on the handle's record; `None` if it has none yet.
    #[inline(always)]
    pub(super) fn lookup_try_begin(&self) -> Option<FastSection> {
        let r = self.get()?;
        begin_lookup_on(r);
        Some(FastSection(r))
    }

    /// Gives the handle a record if it has none (records may be unavailable: then its
    /// sections keep taking the thread's path).
    #[cold]
    pub(super) fn register(&self) {
        if self.0.get().is_null()
            && let Some(r) = claim_record()
        {
            self.0.set(r.as_ptr());
        }
    }

    /// The handle is dropped: gives its record back.
    pub(super) fn release(&self) {
        if let Some(r) = self.get() {
            self.0.set(ptr::null());
            // SAFETY: registry records are never freed.
            release_record(unsafe { r.as_ref() });
        }
    }
}

/// Begins a borrow section on this thread's record if it is outside every borrow section
/// (the fast path: one load to test, one load and one store to announce); `None` otherwise —
/// a nested borrow, or a thread without a record yet (its [`BORROW`] is the sentinel) — for
/// [`borrow_begin_slow`]. The result is the record, to end the section on.
#[inline(always)]
pub(super) fn borrow_begin() -> Option<NonNull<Record>> {
    let r = BORROW.with(|c| c.get());
    // SAFETY: a registered record of this thread (alive forever) or the sentinel (static).
    let rec = unsafe { &*r };
    // A plain read: only this thread writes its record's `borrow` (nobody writes the
    // sentinel's), so it races with no write — other threads only read it — and the compiler
    // may fold it into the comparison.
    // SAFETY: as said; the pointer is valid and aligned.
    if unsafe { *rec.borrow.as_ptr() } != 0 {
        return None;
    }
    // ORDERING: as in `begin_lookup_on`.
    rec.borrow
        .store(rec.current.load(Ordering::Acquire), Ordering::Release);
    light_barrier();
    // SAFETY: not null (a reference's address).
    Some(unsafe { NonNull::new_unchecked(r as *mut Record) })
}

/// A borrow section that [`borrow_begin`] could not begin: nested in another of this thread's
/// (then it only counts itself), or on a thread that has no record yet (registers it). `None`
/// if the thread cannot have a record (the caller takes a reference instead).
#[cold]
#[inline(never)]
pub(super) fn borrow_begin_slow() -> Option<NonNull<Record>> {
    let r = BORROW.with(|c| c.get());
    if ptr::eq(r, &raw const SENTINEL) {
        if local().is_null() {
            register();
        }
        return if ptr::eq(BORROW.with(|c| c.get()), &raw const SENTINEL) {
            None
        } else {
            borrow_begin().or_else(borrow_begin_slow)
        };
    }
    // SAFETY: this thread's record, alive forever.
    let rec = unsafe { &*r };
    // Nested: the outermost section's announcement covers this one.
    rec.borrow_slow.set(rec.borrow_slow.get() + 1);
    // SAFETY: not null.
    Some(unsafe { NonNull::new_unchecked(r as *mut Record) })
}

/// Ends a borrow section begun by [`borrow_begin`] or [`borrow_begin_slow`] (on this thread,
/// which owns `r`): the last one open stores 0 — unless a nested one remains open or releases
/// wait, which [`borrow_end_slow`] handles.
#[inline(always)]
pub(super) fn borrow_end(r: NonNull<Record>) {
    // SAFETY: this thread's record (from `borrow_begin`).
    let rec = unsafe { r.as_ref() };
    // ORDERING: Relaxed; a debug check that the record was not given back under the borrow.
    debug_assert!(
        rec.in_use.load(Ordering::Relaxed),
        "a borrow outlived its record"
    );
    if rec.borrow_slow.get() != 0 {
        return borrow_end_slow(rec);
    }
    // ORDERING: Release; as in `lookup_end_fast`.
    rec.borrow.store(0, Ordering::Release);
}

#[cold]
#[inline(never)]
fn borrow_end_slow(rec: &Record) {
    let slow = rec.borrow_slow.get();
    if slow & !(PENDING | EXITING) != 0 {
        // Another borrow section of this thread is still open.
        rec.borrow_slow.set(slow - 1);
        return;
    }
    rec.borrow_slow.set(0);
    // ORDERING: Release; as in `lookup_end_fast`.
    rec.borrow.store(0, Ordering::Release);
    // ORDERING: Relaxed; the owner's own word.
    if rec.online.load(Ordering::Relaxed) != 0 {
        // A QSBR reader: what waits runs at its next quiescent state (a release from here
        // would wait for this thread's own quiescent state).
        if !rec.pending.get().is_null() {
            rec.borrow_slow.set(PENDING);
        }
    } else {
        run_pending_releases(rec);
    }
    if slow & EXITING != 0 {
        finish_deferred_exit(rec);
    }
}

/// Whether this thread is inside a borrow section, or a QSBR reader (whose borrows last
/// until its next quiescent state).
pub(super) fn in_borrow() -> bool {
    record().is_some_and(|r| {
        // SAFETY: this thread's record.
        let rec = unsafe { r.as_ref() };
        // ORDERING: Relaxed both; the owner's own words.
        rec.borrow.load(Ordering::Relaxed) != 0 || rec.online.load(Ordering::Relaxed) != 0
    })
}

/// This thread's record if it is inside a borrow section (the token every borrow section of
/// the thread has), else `None`.
#[inline]
pub(super) fn current_borrow() -> Option<NonNull<Record>> {
    record().filter(|r| {
        // SAFETY: this thread's record.
        let rec = unsafe { r.as_ref() };
        // ORDERING: Relaxed; the owner's own word.
        rec.borrow.load(Ordering::Relaxed) != 0
    })
}

/// Counts the borrow section of record `r` (this thread's, inside a borrow section) as
/// split from its `RcuFd` (to be ended by [`end_split_borrow`]).
#[inline]
pub(super) fn split_borrow(r: NonNull<Record>) {
    // SAFETY: this thread's record (the token of one of its open sections).
    let rec = unsafe { r.as_ref() };
    rec.split.set(rec.split.get() + 1);
}

/// Ends one split borrow section of this thread; false, ending nothing, if it has none (an
/// end called on the wrong thread, or twice).
#[inline]
pub(super) fn end_split_borrow() -> bool {
    let Some(r) = current_borrow() else {
        return false;
    };
    // SAFETY: this thread's record.
    let rec = unsafe { r.as_ref() };
    let n = rec.split.get();
    if n == 0 {
        return false;
    }
    rec.split.set(n - 1);
    borrow_end(r);
    true
}

/// Queues `func(head)` to run when this thread's outermost borrow section ends.
///
/// # Safety
///
/// `head` is valid and unused until `func` runs; running `func(head)` then is sound; this
/// thread is inside a borrow section ([`in_borrow`]).
pub(super) unsafe fn defer_until_borrows_end(
    head: NonNull<RcuHead>,
    func: unsafe fn(NonNull<RcuHead>),
) {
    let Some(r) = record() else {
        unreachable!("in_borrow() is true only with a record")
    };
    // SAFETY: this thread's record; the caller hands the head over.
    unsafe {
        let rec = r.as_ref();
        (*head.as_ptr()).func = Some(func);
        (*head.as_ptr()).next = rec.pending.get();
        rec.pending.set(head.as_ptr());
        rec.borrow_slow.set(rec.borrow_slow.get() | PENDING);
    }
}

#[cold]
fn run_pending_releases(rec: &Record) {
    loop {
        let h = rec.pending.get();
        if h.is_null() {
            // Called with no borrow open: only the flag can be set.
            rec.borrow_slow.set(rec.borrow_slow.get() & !PENDING);
            return;
        }
        // One at a time, unlinked before it runs, the flag kept while others wait: if a
        // release unwinds (a file's `Drop` panicked), the others stay queued, and the next
        // borrow's end (or quiescent state, or the thread's exit) runs them.
        // SAFETY: queued by `defer_until_borrows_end`; the link is read before the callback
        // reuses the head.
        unsafe {
            let next = (*h).next;
            rec.pending.set(next);
            if !next.is_null() {
                rec.borrow_slow.set(rec.borrow_slow.get() | PENDING);
            }
            if let Some(f) = (*h).func {
                f(NonNull::new_unchecked(h));
            }
        }
    }
}

/// Returns once every borrow section that had begun when it was called has ended — what a
/// release of a lent file waits for (lookups and put windows never touch a file's value).
/// With no borrow section open anywhere (the common case), one `membarrier` and a scan;
/// otherwise a full [`synchronize`]. The caller must be outside every section.
pub(super) fn synchronize_borrows() {
    {
        let reg = REGISTRY.lock();
        heavy_barrier();
        let mut r = reg.head;
        let mut open = false;
        while !r.is_null() {
            // SAFETY: registry records are never freed.
            let rec = unsafe { &*r };
            // ORDERING: Acquire; pairs with the Release store that ends a borrow section: what
            // a finished section did with the file happens-before its release. A section whose
            // begin store this scan (after the membarrier) does not see cannot see the file
            // (module docs: the Dekker pairing).
            // A QSBR reader lends until its next quiescent state: an open borrow.
            if rec.borrow.load(Ordering::Acquire) != 0 || rec.online.load(Ordering::Acquire) != 0 {
                open = true;
                break;
            }
            r = rec.next;
        }
        if !open {
            return;
        }
    }
    synchronize();
}

/// `synchronize_rcu`: returns once every section that had begun when it was called has
/// ended (two epoch advances after the call). The caller must be outside every section.
///
/// An advance that a reader holds back is not retried at once: each attempt costs a
/// `membarrier`, an interrupt on every other CPU running this process, and a reader preempted
/// inside its section (more threads than CPUs) cannot end it while those interrupts and this
/// thread's spinning keep the CPUs busy. So the waiter watches the reader that held the advance
/// back, with plain loads and no barrier, until that reader may have moved on, then tries
/// again (urcu's `wait_for_readers` waits the same way): spinning briefly, then yielding, then
/// sleeping, which frees this CPU for the preempted reader. The watch is only a hint; every
/// advance still rests on the barrier and scan of [`advance`].
pub(super) fn synchronize() {
    // ORDERING: Acquire; pairs with the Release epoch store of an advance.
    let start = EPOCH.load(Ordering::Acquire);
    let mut wait = Wait::default();
    loop {
        let attempt = advance(&REGISTRY.lock());
        match attempt {
            // Two advances since the call, by this thread or others (`e` was read under the
            // registry lock): done, whoever holds the next one back.
            Ok(e) | Err((e, _)) if e >= start + 2 => return,
            Ok(_) => wait = Wait::default(),
            Err((e, blocker)) => while blocker.holds(e) && wait.step() {},
        }
    }
}

/// What held an advance back: the anonymous readers, or one record.
#[derive(Clone, Copy)]
enum Blocker {
    Anon,
    Record(*const Record),
}

impl Blocker {
    /// Whether it may still hold back the advance from `e` (a hint: plain loads, no
    /// barrier; [`advance`] decides).
    fn holds(self, e: usize) -> bool {
        // ORDERING: Relaxed (every load here); a hint to wait on, not a decision: the next
        // `advance` reads the same words after its barrier.
        if EPOCH.load(Ordering::Relaxed) != e {
            return false;
        }
        match self {
            Blocker::Anon => ANON.load(Ordering::Relaxed) != 0,
            // SAFETY: registry records are never freed.
            Blocker::Record(r) => unsafe { &*r }.blocks(e, Ordering::Relaxed),
        }
    }
}

/// Back-off between the polls of a [`Blocker`]: spinning, then yielding, then sleeping from
/// 20 µs, doubling, up to [`Wait::MAX_SLEEP`].
#[derive(Default)]
struct Wait {
    steps: u32,
}

impl Wait {
    const SPINS: u32 = 64;
    const YIELDS: u32 = 8;
    const MAX_SLEEP: std::time::Duration = std::time::Duration::from_millis(1);

    /// Waits once; false after a sleep of the longest length, so that the caller tries the
    /// advance again even if the hint never clears (it can only err towards waiting).
    fn step(&mut self) -> bool {
        self.steps = self.steps.saturating_add(1);
        if self.steps <= Self::SPINS {
            core::hint::spin_loop();
            return true;
        }
        if self.steps <= Self::SPINS + Self::YIELDS {
            std::thread::yield_now();
            return true;
        }
        let n = self.steps - Self::SPINS - Self::YIELDS;
        let sleep = std::time::Duration::from_micros(10u64 << n.min(7)).min(Self::MAX_SLEEP);
        std::thread::sleep(sleep);
        sleep < Self::MAX_SLEEP
    }
}

/// Returns the thread's record at exit.
struct ExitGuard;

impl Drop for ExitGuard {
    fn drop(&mut self) {
        let r = local();
        if (r as usize) > NO_RECORD as usize {
            // SAFETY: this thread's record.
            let rec = unsafe { &*r };
            // ORDERING: Relaxed; the owner's own word.
            let borrowing = rec.borrow.load(Ordering::Relaxed) != 0;
            if rec.reader.get() || borrowing {
                // A `QsbrThread` of this thread, or a borrow section (an `RcuFd` of a
                // `'static` table), is still alive in a thread-local whose destructor runs
                // later: it needs the record, so the last of them gives it back.
                rec.exit_deferred.set(true);
                if borrowing {
                    rec.borrow_slow.set(rec.borrow_slow.get() | EXITING);
                }
                return;
            }
            // Releases left waiting by one that unwound.
            run_pending_releases(rec);
        }
        exit_record();
    }
}

/// The thread's exit was deferred (see `ExitGuard`) and what held the record may be gone:
/// if nothing holds it any more, runs what waits and gives it back.
fn finish_deferred_exit(rec: &Record) {
    // ORDERING: Relaxed; the owner's own word.
    if rec.exit_deferred.get() && !rec.reader.get() && rec.borrow.load(Ordering::Relaxed) == 0 {
        run_pending_releases(rec);
        exit_record();
    }
}

/// The thread is exiting: gives its record back (its bag to the orphans).
fn exit_record() {
    let r = LOCAL.with(|c| c.replace(NO_RECORD));
    BORROW.with(|c| c.set(&raw const SENTINEL));
    if (r as usize) <= NO_RECORD as usize {
        return;
    }
    // SAFETY: this thread's record.
    let rec = unsafe { &*r };
    // SAFETY: owner-only bag; the record is still ours.
    let bag = unsafe { &mut *rec.bag.get() };
    REGISTRY.lock().orphans.append(bag);
    release_record(rec);
}

/// Makes this thread a QSBR reader (`super::qsbr`): its record's `online` word announces
/// the epoch from now on, until [`qsbr_store_offline`].
pub(super) fn qsbr_online() -> Result<NonNull<Record>, crate::Errno> {
    let r = match record() {
        Some(r) => r,
        None => {
            if !records_allowed() {
                return Err(crate::Errno::ENOSYS);
            }
            if !local().is_null() || !register() {
                // Exiting, or no memory for a record.
                return Err(crate::Errno::ENOMEM);
            }
            record().ok_or(crate::Errno::ENOMEM)?
        }
    };
    // SAFETY: this thread's record, alive forever.
    let rec = unsafe { r.as_ref() };
    // One reader per thread, online or not (a second, made while the first is offline,
    // would take the first offline when dropped).
    if rec.reader.replace(true) {
        return Err(crate::Errno::EBUSY);
    }
    qsbr_go_online(rec);
    Ok(r)
}

/// Announces the epoch in `online`: as a section's begin, a store then the reader's half
/// of the fence pair (the advancer must see it before this thread's next loads).
fn qsbr_go_online(rec: &Record) {
    // ORDERING: as in `begin_lookup_on`.
    rec.online
        .store(rec.current.load(Ordering::Acquire), Ordering::Release);
    light_barrier();
}

/// A quiescent state of the QSBR reader on `r` (this thread's record): nothing it read
/// before is used after. Runs the releases that waited for it.
#[inline(always)]
pub(super) fn qsbr_quiescent(r: NonNull<Record>) {
    // SAFETY: this thread's record (from `qsbr_online`), alive forever.
    let rec = unsafe { r.as_ref() };
    debug_assert_eq!(
        local(),
        r.as_ptr().cast_const(),
        "a reader on another record"
    );
    if !rec.pending.get().is_null() {
        return qsbr_quiescent_pending(r);
    }
    // ORDERING: Release; pairs with the Acquire load in `try_advance`: every use before
    // this point happens-before a free the advance allows. Acquire on `current`, as in
    // `begin_lookup_on`. No barrier: the word stays non-zero, and a stale value only makes
    // the next advance wait.
    rec.online
        .store(rec.current.load(Ordering::Acquire), Ordering::Release);
}

/// [`qsbr_quiescent`] with releases waiting: offline (which runs them), then online again.
#[cold]
#[inline(never)]
fn qsbr_quiescent_pending(r: NonNull<Record>) {
    qsbr_store_offline(r);
    // Back online however the releases end: one that unwinds (a file's `Drop` panicked)
    // must not leave a live `QsbrThread` offline.
    let _back = BackOnline(r);
    qsbr_run_pending(r);
}

/// Goes back online when dropped (see [`qsbr_quiescent_pending`]).
pub(super) struct BackOnline(pub(super) NonNull<Record>);

impl Drop for BackOnline {
    fn drop(&mut self) {
        // SAFETY: this thread's record (from `qsbr_online`), alive forever.
        qsbr_go_online(unsafe { self.0.as_ref() });
    }
}

/// The QSBR reader on `r` goes offline (it blocks, or stops being a reader): advances no
/// longer wait for it. Then [`qsbr_run_pending`].
pub(super) fn qsbr_store_offline(r: NonNull<Record>) {
    // SAFETY: as in `qsbr_quiescent`.
    let rec = unsafe { r.as_ref() };
    // ORDERING: Release; as in `qsbr_quiescent`.
    rec.online.store(0, Ordering::Release);
}

/// Runs the releases that waited for the (now offline) reader on `r`, unless a borrow
/// section is open (its end runs them).
pub(super) fn qsbr_run_pending(r: NonNull<Record>) {
    // SAFETY: as in `qsbr_quiescent`.
    let rec = unsafe { r.as_ref() };
    // ORDERING: Relaxed; the owner's own word.
    if rec.borrow.load(Ordering::Relaxed) == 0 && !rec.pending.get().is_null() {
        run_pending_releases(rec);
    }
}

/// The `QsbrThread` on `r` is dropped: offline, and if the thread's exit already ran (see
/// `ExitGuard`), the record goes back.
pub(super) fn qsbr_drop(r: NonNull<Record>) {
    debug_assert_eq!(
        local(),
        r.as_ptr().cast_const(),
        "a reader on another record"
    );
    if local() != r.as_ptr().cast_const() {
        return;
    }
    // SAFETY: as in `qsbr_quiescent`.
    let rec = unsafe { r.as_ref() };
    qsbr_store_offline(r);
    {
        /// The reader is gone once its releases have run (or unwound): until then a
        /// release's `Drop` cannot make a second reader on this record.
        struct ClearReader<'a>(&'a Record);
        impl Drop for ClearReader<'_> {
            fn drop(&mut self) {
                self.0.reader.set(false);
            }
        }
        let _clear = ClearReader(rec);
        qsbr_run_pending(r);
    }
    finish_deferred_exit(rec);
}

/// `call_rcu`: queue `head` on this thread's bag, tagged with the current epoch.
///
/// # Safety
///
/// As [`super::call_rcu`].
pub(super) unsafe fn call_rcu(head: NonNull<RcuHead>, func: unsafe fn(NonNull<RcuHead>)) {
    let mut r = local();
    if r.is_null() && register() {
        r = local();
    }
    // ORDERING: SeqCst fence, then Relaxed; pairs with the advancer's `membarrier` and its
    // Release stores of the epoch and `current`. The caller's unlink must be visible before
    // the tag is read: without the fence the unlink's store could still sit in this CPU's
    // store buffer when an advance to e+1 completes (its `membarrier` ran before the store
    // executed), a reader announcing e+1 could then still load the object, and a tag of e
    // would let the advance to e+2 free it under that reader (crossbeam-epoch fences here
    // for the same reason). A tag read too early after the fence only delays the free.
    fence(Ordering::SeqCst);
    let tag = EPOCH.load(Ordering::Relaxed);
    // SAFETY: the caller hands `head` over until `func` runs.
    unsafe {
        (*head.as_ptr()).func = Some(func);
        (*head.as_ptr()).data = tag;
    }
    if (r as usize) <= NO_RECORD as usize {
        let mut reg = REGISTRY.lock();
        // SAFETY: `head` is ours to queue (see above).
        unsafe { reg.orphans.push(head) };
        return;
    }
    // SAFETY: this thread's record; the bag is owner-only.
    let rec = unsafe { &*r };
    // SAFETY: as above.
    unsafe { (*rec.bag.get()).push(head) };
    let n = rec.since.get() + 1;
    if n >= BATCH {
        rec.since.set(0);
        collect(rec);
    } else {
        rec.since.set(n);
    }
}

/// Tries to advance the epoch, then frees what is old enough in this thread's bag and in the
/// orphans.
fn collect(rec: &Record) {
    let (epoch, orphans) = {
        let mut reg = REGISTRY.lock();
        let e = try_advance(&reg);
        let ready = reg.orphans.take_ready(e.saturating_sub(2));
        (e, ready)
    };
    // SAFETY: tags at most epoch − 2: their grace periods have elapsed.
    unsafe { orphans.run() };
    // SAFETY: owner-only bag.
    let bag = unsafe { &mut *rec.bag.get() };
    let ready = bag.take_ready(epoch.saturating_sub(2));
    // SAFETY: as above.
    unsafe { ready.run() };
}

/// Advances the epoch if every reader allows it; returns the epoch after the attempt.
fn try_advance(reg: &Registry) -> usize {
    match advance(reg) {
        Ok(e) | Err((e, _)) => e,
    }
}

/// Advances the epoch from `e` to `e + 1` if every reader allows it: `Ok(e + 1)`, or
/// `Err((e, what held it back))`.
fn advance(reg: &Registry) -> Result<usize, (usize, Blocker)> {
    heavy_barrier();
    // ORDERING: Relaxed; only the advancer (under the registry lock) stores the epoch.
    let e = EPOCH.load(Ordering::Relaxed);
    // ORDERING: SeqCst; pairs with the SeqCst increment of the anonymous path.
    if ANON.load(Ordering::SeqCst) != 0 {
        return Err((e, Blocker::Anon));
    }
    let mut r = reg.head;
    while !r.is_null() {
        // SAFETY: registry records are never freed.
        let rec = unsafe { &*r };
        // ORDERING: Acquire; pairs with the Release stores that end sections and of
        // quiescent states (see `Record::blocks`).
        if rec.blocks(e, Ordering::Acquire) {
            return Err((e, Blocker::Record(r)));
        }
        r = rec.next;
    }
    // ORDERING: Release; pairs with the Acquire epoch loads of `synchronize`, `claim_record`
    // and `call_rcu`'s tag.
    EPOCH.store(e + 1, Ordering::Release);
    let mut r = reg.head;
    while !r.is_null() {
        // SAFETY: registry records are never freed.
        let rec = unsafe { &*r };
        // ORDERING: Release; pairs with the Acquire load of `current` that begins a section
        // (`begin_lookup_on`, `borrow_begin`): a section announcing e+1 sees every unlink this
        // advance's membarrier made visible.
        rec.current.store(e + 1, Ordering::Release);
        r = rec.next;
    }
    Ok(e + 1)
}

impl Record {
    /// Whether this record holds back an advance from `e`: a lookup or borrow section, or a
    /// QSBR reader's last quiescent state, from an older epoch, or an open put window.
    /// `order` is Acquire for [`advance`]'s decision (pairing with the Release stores that end
    /// sections and of quiescent states or going offline: what a finished section did
    /// happens-before the frees the advance allows), Relaxed for [`Blocker::holds`]'s hint.
    fn blocks(&self, e: usize, order: Ordering) -> bool {
        // ORDERING: `order`, see above (all four loads).
        let l = self.lookup.load(order);
        let b = self.borrow.load(order);
        let q = self.online.load(order);
        (l != 0 && l != e) || (b != 0 && b != e) || (q != 0 && q != e) || self.put.load(order) != 0
    }
}

/// Frees everything whose grace period can be completed now: in a quiescent program (every
/// thread outside its sections), everything retired so far by this thread and by threads that
/// exited. Retirements still in the bags of other live threads are theirs to free.
pub(super) fn drain() {
    let r = local();
    for _ in 0..3 {
        let ready = {
            let mut reg = REGISTRY.lock();
            let e = try_advance(&reg);
            reg.orphans.take_ready(e.saturating_sub(2))
        };
        // SAFETY: grace periods elapsed (see `collect`).
        unsafe { ready.run() };
    }
    if (r as usize) > NO_RECORD as usize {
        // SAFETY: this thread's record.
        collect(unsafe { &*r });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize as Counter;

    std::thread_local! {
        /// Heavy barriers issued by this thread.
        pub(super) static HEAVY_BARRIERS: Cell<u64> = const { Cell::new(0) };
    }

    /// A synchronize held back by a reader inside its section waits for that reader without
    /// a barrier per poll: a handful of `membarrier`s over 30 ms, not one per spin (which
    /// kept the CPUs busy with interrupts while a preempted reader could not run).
    #[test]
    fn a_held_back_synchronize_waits_without_a_barrier_per_poll() {
        let (entered_tx, entered_rx) = std::sync::mpsc::channel();
        let ended = Arc::new(AtomicBool::new(false));
        let reader = {
            let ended = ended.clone();
            std::thread::spawn(move || {
                let t = lookup_begin();
                entered_tx.send(()).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(30));
                // ORDERING: Release; pairs with the Acquire load after `synchronize`.
                ended.store(true, Ordering::Release);
                lookup_end(t);
            })
        };
        entered_rx.recv().unwrap();
        let before = HEAVY_BARRIERS.with(Cell::get);
        let t0 = std::time::Instant::now();
        synchronize();
        let ms = t0.elapsed().as_millis() as u64;
        let barriers = HEAVY_BARRIERS.with(Cell::get) - before;
        // ORDERING: Acquire; pairs with the reader's Release store before its section ended.
        assert!(
            ended.load(Ordering::Acquire),
            "synchronize returned inside the reader's section"
        );
        // Two advances, and one more attempt per wait that ran to its longest sleep (1 ms)
        // or saw the reader (or another test's) move on: about one per millisecond waited
        // (the bound allows two). Retrying at once, as before, made thousands.
        assert!(
            barriers >= 2 && barriers <= 8 + 2 * ms,
            "{barriers} barriers for one synchronize held back {ms} ms"
        );
        reader.join().unwrap();
    }

    #[test]
    fn sections_nest_only_across_kinds() {
        let t = lookup_begin();
        let p = put_begin();
        put_end(p);
        lookup_end(t);
        // SAFETY: the sections above registered this thread's record, which lives forever.
        let rec = unsafe { &*local() };
        // ORDERING: Relaxed (both loads); single-threaded check of our own record.
        assert_eq!(rec.lookup.load(Ordering::Relaxed), 0);
        assert_eq!(rec.put.load(Ordering::Relaxed), 0);
    }

    /// Borrow sections nest and end in any order: the record stays announced until the last
    /// one ends, and a release deferred inside them runs then, once.
    #[test]
    fn borrows_nest_in_any_order_and_run_pending_releases_last() {
        std::thread::spawn(|| {
            // The first borrow of a thread finds the sentinel and registers.
            assert!(ptr::eq(BORROW.with(|c| c.get()), &raw const SENTINEL));
            assert!(
                borrow_begin().is_none(),
                "the sentinel never begins a section"
            );
            let a = borrow_begin_slow().expect("registered");
            assert!(!ptr::eq(BORROW.with(|c| c.get()), &raw const SENTINEL));
            // SAFETY: this thread's record.
            let rec = unsafe { a.as_ref() };
            assert!(in_borrow());
            assert!(borrow_begin().is_none(), "nested: the slow path");
            let b = borrow_begin_slow().expect("nested");
            let c = borrow_begin_slow().expect("nested");
            static RAN: Counter = Counter::new(0);
            unsafe fn ran(_: NonNull<RcuHead>) {
                // ORDERING: Relaxed; a test counter.
                RAN.fetch_add(1, Ordering::Relaxed);
            }
            let mut head = RcuHead::new();
            // SAFETY: the head outlives the last `borrow_end` below, which runs `ran` (which
            // only counts).
            unsafe { defer_until_borrows_end(NonNull::from(&mut head), ran) };
            // End the outermost first, then the others.
            borrow_end(a);
            borrow_end(c);
            // ORDERING: Relaxed (all loads); this thread's own record and a test counter.
            assert_ne!(
                rec.borrow.load(Ordering::Relaxed),
                0,
                "one borrow still open"
            );
            assert_eq!(RAN.load(Ordering::Relaxed), 0, "not before the last end");
            borrow_end(b);
            assert_eq!(rec.borrow.load(Ordering::Relaxed), 0);
            assert_eq!(rec.borrow_slow.get(), 0);
            assert_eq!(RAN.load(Ordering::Relaxed), 1);
            assert!(!in_borrow());
            // The fast path again.
            let d = borrow_begin().expect("outside every borrow");
            borrow_end(d);
        })
        .join()
        .unwrap();
    }

    /// A section announces the epoch its record was last told of; an advance tells every
    /// record, so sections that begin after it announce the new epoch.
    #[test]
    fn advances_publish_the_epoch_to_every_record() {
        std::thread::spawn(|| {
            let t = lookup_begin();
            lookup_end(t);
            // SAFETY: registered by the section above.
            let rec = unsafe { &*local() };
            let e = try_advance(&REGISTRY.lock());
            // ORDERING: Relaxed; read under no race that matters (a later advance only raises
            // it).
            assert!(rec.current.load(Ordering::Relaxed) >= e);
        })
        .join()
        .unwrap();
    }

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

    #[test]
    fn retired_objects_are_freed_after_two_advances() {
        let freed = Arc::new(Counter::new(0));
        for _ in 0..(3 * BATCH) {
            let o = Box::into_raw(Box::new(Obj {
                head: RcuHead::new(),
                freed: freed.clone(),
            }));
            // SAFETY: never published, freed once by the callback.
            unsafe { call_rcu(NonNull::new_unchecked(o as *mut RcuHead), free_obj) };
        }
        drain();
        drain();
        // ORDERING: Relaxed; a test counter.
        assert_eq!(freed.load(Ordering::Relaxed), 3 * BATCH);
    }

    #[test]
    fn an_open_section_blocks_reclamation() {
        let freed = Arc::new(Counter::new(0));
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let reader = std::thread::spawn(move || {
            let s = lookup_begin();
            tx.send(()).unwrap();
            done_rx.recv().unwrap();
            lookup_end(s);
        });
        rx.recv().unwrap();
        let o = Box::into_raw(Box::new(Obj {
            head: RcuHead::new(),
            freed: freed.clone(),
        }));
        // SAFETY: never published, freed once by the callback.
        unsafe { call_rcu(NonNull::new_unchecked(o as *mut RcuHead), free_obj) };
        for _ in 0..4 {
            drain();
        }
        // ORDERING: Relaxed; a test counter.
        assert_eq!(freed.load(Ordering::Relaxed), 0, "freed under a reader");
        done_tx.send(()).unwrap();
        reader.join().unwrap();
        for _ in 0..2 {
            drain();
        }
        // ORDERING: Relaxed; a test counter.
        assert_eq!(freed.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn an_online_reader_blocks_reclamation_until_its_quiescent_state() {
        let freed = Arc::new(Counter::new(0));
        let (tx, rx) = std::sync::mpsc::channel();
        let (step_tx, step_rx) = std::sync::mpsc::channel::<u8>();
        let reader = std::thread::spawn(move || {
            let r = qsbr_online().unwrap();
            assert_eq!(qsbr_online().unwrap_err(), crate::Errno::EBUSY);
            tx.send(()).unwrap();
            // 1: a quiescent state; 2: offline for good.
            while let Ok(step) = step_rx.recv() {
                if step == 1 {
                    qsbr_quiescent(r);
                } else {
                    qsbr_drop(r);
                }
                tx.send(()).unwrap();
            }
        });
        rx.recv().unwrap();
        let o = Box::into_raw(Box::new(Obj {
            head: RcuHead::new(),
            freed: freed.clone(),
        }));
        // SAFETY: never published, freed once by the callback.
        unsafe { call_rcu(NonNull::new_unchecked(o as *mut RcuHead), free_obj) };
        for _ in 0..4 {
            drain();
        }
        // ORDERING: Relaxed; a test counter.
        assert_eq!(
            freed.load(Ordering::Relaxed),
            0,
            "freed under an online reader"
        );
        // Each quiescent state lets one advance through: two are needed (more if another
        // test of this binary holds a section meanwhile).
        for _ in 0..10_000 {
            // ORDERING: Relaxed; a test counter.
            if freed.load(Ordering::Relaxed) == 1 {
                break;
            }
            step_tx.send(1).unwrap();
            rx.recv().unwrap();
            drain();
        }
        // ORDERING: Relaxed; a test counter.
        assert_eq!(
            freed.load(Ordering::Relaxed),
            1,
            "quiescent states let it go"
        );
        // Offline, it holds nothing back.
        step_tx.send(2).unwrap();
        rx.recv().unwrap();
        let o = Box::into_raw(Box::new(Obj {
            head: RcuHead::new(),
            freed: freed.clone(),
        }));
        // SAFETY: as above.
        unsafe { call_rcu(NonNull::new_unchecked(o as *mut RcuHead), free_obj) };
        for _ in 0..10_000 {
            // ORDERING: Relaxed; a test counter.
            if freed.load(Ordering::Relaxed) == 2 {
                break;
            }
            drain();
            std::thread::yield_now();
        }
        // ORDERING: Relaxed; a test counter.
        assert_eq!(freed.load(Ordering::Relaxed), 2);
        drop(step_tx);
        reader.join().unwrap();
    }
}

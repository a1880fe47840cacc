//! Rare interleavings the loom models must show they reached (under `--cfg loom` only; the
//! calls compile to nothing otherwise).

/// An interleaving the core handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(loom), allow(dead_code))]
pub enum Event {
    /// A growth allocated without the lock and, relocked, found the table already grown.
    GrowthDiscarded,
    /// A lookup's increment revived a count that a last put had just taken to zero.
    Revived,
    /// A last put's NOREF → DEAD compare-and-swap lost to a reviving lookup.
    LastPutLost,
    /// A lock-free lookup read an empty slot in an array that growth had retired and cleared,
    /// and retried in the new one.
    RetiredSlotCleared,
    /// A lock-free lookup's re-check found the slot changed after its increment (a close or
    /// a replacement, in the array it read or, through the clearing, in a newer one).
    SlotChanged,
    /// A borrower making a file lendable found it closed after its barrier, and gave up.
    LendAbandoned,
    /// A `dup` whose allocation grew the table (dropping the lock around it) found its source
    /// fd closed when it relocked: the reference it counted first kept the file alive.
    DupSourceClosed,
}

#[cfg(loom)]
static COUNTS: [std::sync::atomic::AtomicUsize; 7] =
    [const { std::sync::atomic::AtomicUsize::new(0) }; 7];

/// Records that `e` happened.
#[inline(always)]
pub(crate) fn note(e: Event) {
    #[cfg(loom)]
    // ORDERING: Relaxed; a statistic read by the model after its threads are joined (std
    // atomics, which loom does not model).
    COUNTS[e as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(loom))]
    let _ = e;
}

/// How many times `e` happened (under loom; always 0 otherwise).
pub fn count(e: Event) -> usize {
    #[cfg(loom)]
    {
        // ORDERING: Relaxed; see `note`.
        COUNTS[e as usize].load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(loom))]
    {
        let _ = e;
        0
    }
}

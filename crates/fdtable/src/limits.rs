//! The system-wide cap on table size: the kernel's `fs.nr_open` sysctl.

use crate::errno::Errno;
use core::sync::atomic::{AtomicUsize, Ordering};

/// `sysctl_nr_open_min`: `BITS_PER_LONG`.
pub const NR_OPEN_MIN: usize = 64;
/// `sysctl_nr_open_max` on 64-bit: `min(INT_MAX, SIZE_MAX / sizeof(void *))` rounded down to
/// a multiple of `BITS_PER_LONG`.
pub const NR_OPEN_MAX: usize = (i32::MAX as usize) & !(64 - 1);
/// The default, 1024 × 1024.
pub const NR_OPEN_DEFAULT_CAP: usize = 1024 * 1024;

// ORDERING (both uses below): Relaxed. The value is a tunable read at the start of each growth
// decision; like the kernel's `sysctl_nr_open`, a concurrent change may or may not be seen by
// an allocation already under way, and the growth code re-checks what it allocated.
static NR_OPEN: AtomicUsize = AtomicUsize::new(NR_OPEN_DEFAULT_CAP);

/// The current `nr_open`: no table may grow to hold an fd at or above it.
#[inline]
pub fn nr_open() -> usize {
    // ORDERING: Relaxed; a lone configuration value that publishes nothing else (see above).
    NR_OPEN.load(Ordering::Relaxed)
}

/// Sets `nr_open` (as `sysctl -w fs.nr_open=N`). `EINVAL` outside
/// [`NR_OPEN_MIN`]`..=`[`NR_OPEN_MAX`].
pub fn set_nr_open(n: usize) -> Result<(), Errno> {
    if !(NR_OPEN_MIN..=NR_OPEN_MAX).contains(&n) {
        return Err(Errno::EINVAL);
    }
    // ORDERING: Relaxed; pairs with nothing: `nr_open` readers need only the value itself.
    NR_OPEN.store(n, Ordering::Relaxed);
    Ok(())
}

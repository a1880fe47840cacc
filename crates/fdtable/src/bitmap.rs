//! Word bitmaps, the kernel's way: "bits in an array of unsigned long", bit `n` in word
//! `n / BITS`, at position `n % BITS`.
//!
//! The helpers are generic over the word type so unit tests can run the same logic on `u8`
//! words (where a "full word" takes eight fds instead of sixty-four) and reach every edge case
//! with small tables. The table itself uses [`Long`] (`u64`), the kernel's `BITS_PER_LONG` on
//! 64-bit.

/// The word type of the table's bitmaps.
pub type Long = u64;

/// `BITS_PER_LONG`.
pub const BITS_PER_LONG: usize = Long::BITS as usize;

/// A machine word usable as a bitmap word.
pub trait Word: Copy + Eq + core::fmt::Debug {
    /// Bits per word.
    const BITS: usize;
    /// All bits clear.
    const ZERO: Self;
    /// All bits set.
    const ONES: Self;
    /// Whether bit `i` is set.
    fn test(self, i: usize) -> bool;
    /// `self` with bit `i` set.
    fn with(self, i: usize) -> Self;
    /// `self` with bit `i` clear.
    fn without(self, i: usize) -> Self;
    /// Index of the lowest set bit at or above `i`, if any (`i < BITS`).
    fn next_set(self, i: usize) -> Option<usize>;
    /// Index of the highest set bit, if any.
    fn last_set(self) -> Option<usize>;
    /// Mask of bits `lo..hi` (`lo <= hi <= BITS`).
    fn range(lo: usize, hi: usize) -> Self;
    /// Bitwise or.
    fn or(self, other: Self) -> Self;
    /// Bitwise not.
    fn not(self) -> Self;
}

macro_rules! impl_word {
    ($t:ty) => {
        impl Word for $t {
            const BITS: usize = <$t>::BITS as usize;
            const ZERO: Self = 0;
            const ONES: Self = !0;
            #[inline(always)]
            fn test(self, i: usize) -> bool {
                self >> i & 1 != 0
            }
            #[inline(always)]
            fn with(self, i: usize) -> Self {
                self | (1 << i)
            }
            #[inline(always)]
            fn without(self, i: usize) -> Self {
                self & !(1 << i)
            }
            #[inline(always)]
            fn next_set(self, i: usize) -> Option<usize> {
                let masked = self & (<$t>::MAX << i);
                if masked == 0 {
                    None
                } else {
                    Some(masked.trailing_zeros() as usize)
                }
            }
            #[inline(always)]
            fn last_set(self) -> Option<usize> {
                if self == 0 {
                    None
                } else {
                    Some(<Self as Word>::BITS - 1 - self.leading_zeros() as usize)
                }
            }
            #[inline(always)]
            fn range(lo: usize, hi: usize) -> Self {
                debug_assert!(lo <= hi && hi <= <Self as Word>::BITS);
                if lo == hi {
                    return 0;
                }
                let upper = if hi == <Self as Word>::BITS {
                    <$t>::MAX
                } else {
                    (1 << hi) - 1
                };
                upper & (<$t>::MAX << lo)
            }
            #[inline(always)]
            fn or(self, other: Self) -> Self {
                self | other
            }
            #[inline(always)]
            fn not(self) -> Self {
                !self
            }
        }
    };
}

impl_word!(u8);
impl_word!(u64);

/// Words needed for `nbits` bits (`BITS_TO_LONGS`).
#[inline]
pub const fn words_for(nbits: usize, bits: usize) -> usize {
    nbits.div_ceil(bits)
}

/// Whether bit `n` is set.
#[inline]
pub fn test_bit<W: Word>(map: &[W], n: usize) -> bool {
    map[n / W::BITS].test(n % W::BITS)
}

/// Sets bit `n`.
#[inline]
pub fn set_bit<W: Word>(map: &mut [W], n: usize) {
    let w = &mut map[n / W::BITS];
    *w = w.with(n % W::BITS);
}

/// Clears bit `n`.
#[inline]
pub fn clear_bit<W: Word>(map: &mut [W], n: usize) {
    let w = &mut map[n / W::BITS];
    *w = w.without(n % W::BITS);
}

/// The lowest set bit in `start..size`, or `size` if there is none (`find_next_bit`).
pub fn find_next_bit<W: Word>(map: &[W], size: usize, start: usize) -> usize {
    find_next(map, size, start, false)
}

/// The lowest clear bit in `start..size`, or `size` if there is none (`find_next_zero_bit`).
pub fn find_next_zero_bit<W: Word>(map: &[W], size: usize, start: usize) -> usize {
    find_next(map, size, start, true)
}

#[inline]
fn find_next<W: Word>(map: &[W], size: usize, start: usize, invert: bool) -> usize {
    if start >= size {
        return size;
    }
    let mut idx = start / W::BITS;
    let mut bit = start % W::BITS;
    let last = (size - 1) / W::BITS;
    loop {
        let w = if invert { map[idx].not() } else { map[idx] };
        if let Some(b) = w.next_set(bit) {
            let n = idx * W::BITS + b;
            return n.min(size);
        }
        if idx == last {
            return size;
        }
        idx += 1;
        bit = 0;
    }
}

/// The highest set bit below `size`, or `size` if none is set (`find_last_bit`).
pub fn find_last_bit<W: Word>(map: &[W], size: usize) -> usize {
    if size == 0 {
        return 0;
    }
    let mut idx = (size - 1) / W::BITS;
    let tail = size - idx * W::BITS;
    let mut mask = W::range(0, tail);
    loop {
        let w = map[idx];
        // mask the tail of the first word examined
        let w = if mask == W::ONES { w } else { and(w, mask) };
        if let Some(b) = w.last_set() {
            return idx * W::BITS + b;
        }
        if idx == 0 {
            return size;
        }
        idx -= 1;
        mask = W::ONES;
    }
}

#[inline]
fn and<W: Word>(a: W, b: W) -> W {
    a.not().or(b.not()).not()
}

/// Sets bits `start..start + len` (`bitmap_set`).
pub fn bitmap_set<W: Word>(map: &mut [W], start: usize, len: usize) {
    let end = start + len;
    let mut n = start;
    while n < end {
        let idx = n / W::BITS;
        let lo = n % W::BITS;
        let hi = (end - idx * W::BITS).min(W::BITS);
        map[idx] = map[idx].or(W::range(lo, hi));
        n = idx * W::BITS + hi;
    }
}

/// Whether any bit is set in `map` (`!bitmap_empty`).
pub fn any_set<W: Word>(map: &[W]) -> bool {
    map.iter().any(|w| *w != W::ZERO)
}

/// The kernel's `find_next_fd` with Yu Ma's fast path (2024): the lowest clear bit of
/// `open_fds` at or above `start`, or `max_fds` when every fd in `start..max_fds` is open.
///
/// 1. Scan only the `open_fds` word that holds `start`; most allocations end here, because fds
///    are handed out lowest-first and the hint keeps `start` near the first hole.
/// 2. Otherwise find the first word at or after `start`'s word whose `full_fds_bits` bit is
///    clear, and scan `open_fds` from the later of that word and `start`.
///
/// `full_fds_bits` has one bit per `open_fds` word, set exactly when that word is all ones.
#[inline]
pub fn find_next_fd<W: Word>(
    open_fds: &[W],
    full_fds_bits: &[W],
    max_fds: usize,
    start: usize,
) -> usize {
    if start >= max_fds {
        return max_fds;
    }
    let word = start / W::BITS;
    // Fast path: the word holding `start`.
    if let Some(b) = open_fds[word].not().next_set(start % W::BITS) {
        let fd = word * W::BITS + b;
        return fd.min(max_fds);
    }
    find_next_fd_slow(open_fds, full_fds_bits, max_fds, word + 1)
}

#[cold]
fn find_next_fd_slow<W: Word>(
    open_fds: &[W],
    full_fds_bits: &[W],
    max_fds: usize,
    from_word: usize,
) -> usize {
    let nwords = words_for(max_fds, W::BITS);
    let word = find_next_zero_bit(full_fds_bits, nwords, from_word);
    if word >= nwords {
        return max_fds;
    }
    find_next_zero_bit(open_fds, max_fds, word * W::BITS)
}

/// The pre-2024 search, kept for the benchmark's "before": one level, a linear scan of
/// `open_fds` from `start`.
pub fn find_next_fd_linear<W: Word>(open_fds: &[W], max_fds: usize, start: usize) -> usize {
    find_next_zero_bit(open_fds, max_fds, start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A reference model: a plain vector of booleans.
    fn model_next_zero(bits: &[bool], start: usize) -> usize {
        (start..bits.len())
            .find(|&i| !bits[i])
            .unwrap_or(bits.len())
    }

    fn build<W: Word>(bits: &[bool]) -> (Vec<W>, Vec<W>) {
        let n = bits.len();
        let mut open = vec![W::ZERO; words_for(n, W::BITS)];
        for (i, &b) in bits.iter().enumerate() {
            if b {
                set_bit(&mut open, i);
            }
        }
        let mut full = vec![W::ZERO; words_for(open.len(), W::BITS)];
        for (i, w) in open.iter().enumerate() {
            if *w == W::ONES {
                set_bit(&mut full, i);
            }
        }
        (open, full)
    }

    #[test]
    fn word_ranges() {
        assert_eq!(<u8 as Word>::range(0, 8), 0xff);
        assert_eq!(<u8 as Word>::range(2, 5), 0b0001_1100);
        assert_eq!(<u8 as Word>::range(3, 3), 0);
        assert_eq!(<u64 as Word>::range(0, 64), u64::MAX);
        assert_eq!(<u64 as Word>::range(63, 64), 1 << 63);
    }

    #[test]
    fn fast_path_word_at_start() {
        // u8 words: fds 0..8 full, 8..16 has a hole at 12, 16..24 empty.
        let mut bits = vec![true; 24];
        bits[12] = false;
        for b in &mut bits[16..] {
            *b = false;
        }
        let (open, full) = build::<u8>(&bits);
        assert_eq!(find_next_fd(&open, &full, 24, 0), 12);
        assert_eq!(find_next_fd(&open, &full, 24, 9), 12);
        assert_eq!(find_next_fd(&open, &full, 24, 13), 16);
        assert_eq!(find_next_fd(&open, &full, 24, 23), 23);
        assert_eq!(find_next_fd(&open, &full, 24, 24), 24);
    }

    #[test]
    fn full_table_returns_max() {
        let bits = vec![true; 32];
        let (open, full) = build::<u8>(&bits);
        assert_eq!(find_next_fd(&open, &full, 32, 0), 32);
        assert_eq!(find_next_fd(&open, &full, 32, 31), 32);
    }

    #[test]
    fn partial_last_word_is_bounded() {
        // max_fds = 10 with u8 words: bits 10..16 do not exist even though the word has room.
        let bits = vec![true; 10];
        let (open, full) = build::<u8>(&bits);
        assert_eq!(find_next_fd(&open, &full, 10, 0), 10);
        assert_eq!(find_next_fd(&open, &full, 10, 9), 10);
    }

    #[test]
    fn last_bit_and_set_range() {
        let mut m = vec![0u8; 3];
        assert_eq!(find_last_bit(&m, 24), 24);
        bitmap_set(&mut m, 5, 9);
        assert_eq!(m, vec![0b1110_0000, 0b0011_1111, 0]);
        assert_eq!(find_last_bit(&m, 24), 13);
        assert_eq!(find_last_bit(&m, 13), 12);
        assert_eq!(find_last_bit(&m, 5), 5);
        assert_eq!(find_next_bit(&m, 24, 0), 5);
        assert_eq!(find_next_bit(&m, 24, 14), 24);
        bitmap_set(&mut m, 0, 24);
        assert_eq!(m, vec![0xff; 3]);
    }

    proptest! {
        #[test]
        fn find_next_fd_matches_model_u8(bits in proptest::collection::vec(any::<bool>(), 1..80), start in 0usize..90) {
            let (open, full) = build::<u8>(&bits);
            prop_assert_eq!(find_next_fd(&open, &full, bits.len(), start), model_next_zero(&bits, start.min(bits.len())));
            prop_assert_eq!(find_next_fd_linear(&open, bits.len(), start), model_next_zero(&bits, start.min(bits.len())));
        }

        #[test]
        fn find_next_fd_matches_model_u64(bits in proptest::collection::vec(prop_oneof![3 => Just(true), 1 => Just(false)], 1..400), start in 0usize..420) {
            let (open, full) = build::<u64>(&bits);
            prop_assert_eq!(find_next_fd(&open, &full, bits.len(), start), model_next_zero(&bits, start.min(bits.len())));
        }

        #[test]
        fn find_last_matches_model(bits in proptest::collection::vec(any::<bool>(), 0..80), cut in 0usize..80) {
            let size = cut.min(bits.len());
            let (open, _) = build::<u8>(&bits);
            let expect = (0..size).rev().find(|&i| bits[i]).unwrap_or(size);
            prop_assert_eq!(find_last_bit(&open, size), expect);
        }
    }
}

//! What the supervisor keeps beside each table of the library: how many tasks use it, how
//! many of their `CONTINUE`d calls are in flight, and the **uncertain numbers**: numbers the
//! library holds reserved because the kernel's state of them may differ from the library's
//! until those calls have finished (see `docs/RUN.md`, *Threads sharing a table*).
//!
//! The rules that keep the two tables equal, checked by the model below over random
//! interleavings of concurrent calls:
//!
//! 1. every allocation reserves the lowest number the library has free (at or above its
//!    lower bound) and makes it uncertain;
//! 2. a close (or a dup's target) makes its number uncertain;
//! 3. uncertain numbers are released only when no call of the table is in flight, after the
//!    kernel's table was probed; a number the kernel shows installed may be adopted at any
//!    time, unless a close (or dup) of it is still in flight: the kernel may not have run it;
//! 4. a `dup2` onto an uncertain number also makes the lowest number the library has free
//!    above it uncertain: if the kernel has the target free when the dup runs (an
//!    allocation in flight has not reached it yet, or a close has run), the dup takes it,
//!    and the allocation that would have taken it lands on the lowest number the kernel has
//!    free above it instead.
//!
//! Then each kernel allocation of a call in flight lands on an uncertain number: the library
//! never treats a number the kernel may have given out as free.

use super::Desc;
use fdtable::FileRef;
use std::collections::BTreeMap;

/// What the library expects at an uncertain number if the kernel shows it installed.
#[derive(Clone, Debug, Default)]
pub struct Expect {
    /// The open file description (a dup's source), if known.
    pub file: Option<FileRef<Desc>>,
    /// Its close-on-exec bit, if known (else it is read from `fdinfo`).
    pub cloexec: Option<bool>,
    /// Whether it is an `O_PATH` descriptor, if known.
    pub opath: Option<bool>,
    /// The creating call (`--track-fds`).
    pub origin: u32,
    /// The tasks whose calls in flight (a close, a dup onto it) may not have changed the
    /// kernel's entry yet: until they are back, an installed entry may be the old one.
    pub pending: Vec<i32>,
    /// The descriptor may come from another process (`SCM_RIGHTS`, `pidfd_getfd`): what it
    /// is gets checked when it is adopted ([`crate::procfs::installs_on_read`]).
    pub foreign: bool,
}

/// The record of one table.
#[derive(Debug, Default)]
pub struct Table {
    /// Tasks that use it.
    pub members: usize,
    /// Their calls in flight (`CONTINUE`d, not yet known finished).
    pub inflight: usize,
    /// Uncertain numbers (reserved in the library), and what each is expected to hold.
    pub uncertain: BTreeMap<u32, Expect>,
    /// A call that installs an unknown number of descriptors was in flight on the shared
    /// table: any free number may be taken, and quiescence lists the kernel's table.
    pub unbounded: bool,
    /// Several allocations were in flight at once: which got which number is the kernel's
    /// order, so close-on-exec bits are read from the kernel.
    pub contended: bool,
    /// The library's copy is not known to match (a table copied while others changed it):
    /// rebuilt from the kernel's before its next use.
    pub stale: bool,
    /// Notified calls, for `--check-tables`' periodic full comparisons.
    pub calls: u64,
    /// The numbers calls in flight may change, with how many such calls there are for each
    /// (left out of `--check-tables`).
    pub busy: std::collections::HashMap<u32, u32>,
    /// Numbers whose close-on-exec bit a call changed while another call of the table that
    /// may change it was in flight, or that were adopted from the kernel while a call in
    /// flight names them (an `F_SETFD` may run after the adoption read the bit): the kernel
    /// may run the two in the other order, so the bit is the kernel's (`F_GETFD` runs in the
    /// kernel; read from `fdinfo` when the table is quiet).
    pub bits: std::collections::BTreeSet<u32>,
    /// `close_range(CLOSE_RANGE_CLOEXEC)` calls in flight: (task, first, last). A number in
    /// such a range that another call installs while it is in flight (a `dup2` onto a number
    /// free when the `close_range` was decided) may be installed before the `close_range`
    /// runs, which then sets its bit: the bit is the kernel's. Entries whose task has no such
    /// call in flight any more are dropped when the list is read.
    pub cloexec_ranges: Vec<(i32, u32, u32)>,
    /// The kernel's table size (`FDSize:`, its `max_fds`) as last read: a number below it
    /// needs no growth, which `fs.nr_open` could refuse ([`crate::sup::State::kernel_has_room`]).
    pub kernel_size: u32,
}

impl Table {
    /// A table used by one task.
    pub fn new() -> Table {
        Table {
            members: 1,
            ..Table::default()
        }
    }
}

#[cfg(test)]
mod model {
    //! A model of the kernel's allocator against the library's rules: calls of several
    //! threads of one table in flight, their allocations made by the "kernel" at random
    //! moments, some failing, closes taking effect late.

    use std::collections::BTreeSet;

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum K {
        Free,
        Reserved,
        Installed,
    }

    struct Call {
        /// Lower bound of the allocation (F_DUPFD's argument), or a close of this number.
        from: u32,
        close: bool,
        /// A `dup2` onto `from`, a number the library holds uncertain.
        dup: bool,
        /// Allocated in the kernel.
        got: Option<u32>,
        /// The kernel is done with it.
        done: bool,
        /// The supervisor knows it is done (its task made its next call).
        back: bool,
        fails: bool,
    }

    /// xorshift.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    const N: usize = 24;

    /// Runs one random interleaving; returns the first violation of the invariant (a kernel
    /// allocation on a number the library has free), if any. `spare`: a `dup2` onto an
    /// uncertain number also reserves a spare uncertain number (rule 4).
    fn run(seed: u64, bounds: bool, dups: bool, spare: bool) -> Result<(), String> {
        let mut rng = Rng(seed | 1);
        let mut kernel = [K::Free; N];
        // The library: installed numbers, and uncertain ones (reserved).
        let mut lib_installed: BTreeSet<u32> = BTreeSet::new();
        let mut uncertain: BTreeSet<u32> = BTreeSet::new();
        for (n, k) in kernel.iter_mut().enumerate().take(4) {
            *k = K::Installed;
            lib_installed.insert(n as u32);
        }
        let mut calls: Vec<Call> = Vec::new();
        for _ in 0..400 {
            match rng.below(if spare || dups { 8 } else { 7 }) {
                // A thread starts an allocation (the supervisor's decision).
                0 | 1 => {
                    let from = if bounds && rng.below(3) == 0 {
                        rng.below(N as u64 / 2) as u32
                    } else {
                        0
                    };
                    let r = (from..N as u32)
                        .find(|n| !lib_installed.contains(n) && !uncertain.contains(n));
                    let Some(r) = r else { continue };
                    uncertain.insert(r);
                    calls.push(Call {
                        from,
                        close: false,
                        dup: false,
                        got: None,
                        done: false,
                        back: false,
                        fails: rng.below(4) == 0,
                    });
                }
                // A thread closes a number the library has installed.
                2 => {
                    let v: Vec<u32> = lib_installed.iter().copied().collect();
                    if v.is_empty() {
                        continue;
                    }
                    let n = v[rng.below(v.len() as u64) as usize];
                    lib_installed.remove(&n);
                    uncertain.insert(n);
                    calls.push(Call {
                        from: n,
                        close: true,
                        dup: false,
                        got: None,
                        done: false,
                        back: false,
                        fails: false,
                    });
                }
                // A thread dup2s onto a number the library holds uncertain (reserved by an
                // allocation in flight, or closed): only the kernel knows whether it is free
                // there, so the call runs; if it is, the dup takes the number an allocation
                // in flight may have been counting on.
                7 => {
                    let v: Vec<u32> = uncertain.iter().copied().collect();
                    if v.is_empty() {
                        continue;
                    }
                    let n = v[rng.below(v.len() as u64) as usize];
                    if spare {
                        let r = (n + 1..N as u32)
                            .find(|n| !lib_installed.contains(n) && !uncertain.contains(n));
                        if let Some(r) = r {
                            uncertain.insert(r);
                        }
                    }
                    calls.push(Call {
                        from: n,
                        close: false,
                        dup: true,
                        got: None,
                        done: false,
                        back: false,
                        fails: false,
                    });
                }
                // The kernel runs a step of some call in flight.
                3 | 4 => {
                    let open: Vec<usize> = (0..calls.len()).filter(|&i| !calls[i].done).collect();
                    if open.is_empty() {
                        continue;
                    }
                    let c = &mut calls[open[rng.below(open.len() as u64) as usize]];
                    if c.dup {
                        // Free: installed; reserved by an allocation: EBUSY; installed:
                        // replaced.
                        if kernel[c.from as usize] == K::Free {
                            kernel[c.from as usize] = K::Installed;
                        }
                        c.done = true;
                    } else if c.close {
                        kernel[c.from as usize] = K::Free;
                        c.done = true;
                    } else if let Some(g) = c.got {
                        kernel[g as usize] = if c.fails { K::Free } else { K::Installed };
                        c.done = true;
                    } else {
                        let g = (c.from as usize..N).find(|&n| kernel[n] == K::Free);
                        match g {
                            Some(g) => {
                                // The invariant: the kernel gives out only uncertain numbers.
                                if !uncertain.contains(&(g as u32)) {
                                    return Err(format!(
                                        "seed {seed}: kernel took {g}, library free"
                                    ));
                                }
                                kernel[g] = K::Reserved;
                                c.got = Some(g as u32);
                            }
                            None => c.done = true,
                        }
                    }
                }
                // A task comes back: its call is known finished.
                5 if rng.below(2) == 0 => {
                    let done: Vec<usize> = (0..calls.len())
                        .filter(|&i| calls[i].done && !calls[i].back)
                        .collect();
                    if !done.is_empty() {
                        calls[done[rng.below(done.len() as u64) as usize]].back = true;
                    }
                }
                // Quiescence: every call finished; probe and release.
                _ => {
                    if calls.iter().any(|c| !c.back) {
                        // A number the kernel shows installed may be adopted any time,
                        // unless a close of it may not have run yet.
                        let closing: BTreeSet<u32> = calls
                            .iter()
                            .filter(|c| (c.close || c.dup) && !c.back)
                            .map(|c| c.from)
                            .collect();
                        let adopt: Vec<u32> = uncertain
                            .iter()
                            .copied()
                            .filter(|&n| kernel[n as usize] == K::Installed)
                            .filter(|n| !closing.contains(n))
                            .collect();
                        for n in adopt {
                            uncertain.remove(&n);
                            lib_installed.insert(n);
                        }
                        continue;
                    }
                    calls.clear();
                    for n in std::mem::take(&mut uncertain) {
                        if kernel[n as usize] == K::Installed {
                            lib_installed.insert(n);
                        }
                    }
                    for (n, k) in kernel.iter().enumerate() {
                        if (*k == K::Installed) != lib_installed.contains(&(n as u32)) {
                            return Err(format!("seed {seed}: {n} differs at quiescence"));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn concurrent_lowest_free_allocations_land_on_uncertain_numbers() {
        for seed in 1..3000 {
            run(seed, false, false, false).unwrap();
        }
    }

    #[test]
    fn allocations_with_lower_bounds_too() {
        for seed in 1..3000 {
            run(seed * 7919, true, false, false).unwrap();
        }
    }

    #[test]
    fn dup2_onto_uncertain_numbers_needs_a_spare() {
        // Without rule 4 the model reaches the race: a dup2 takes a number an allocation
        // in flight was reserved at, and the allocation lands on a number the library has
        // free (what `fdtable run --check-tables` reported under 2,000 threads).
        let broken = (1..3000)
            .filter(|&s| run(s, false, true, false).is_err())
            .count();
        assert!(broken > 0, "the model never reached the race");
        for seed in 1..3000 {
            run(seed, false, true, true).unwrap();
            run(seed * 7919, true, true, true).unwrap();
        }
    }
}

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
//!    time, unless a close (or dup) of it is still in flight: the kernel may not have run it.
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

    fn run(seed: u64, bounds: bool) {
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
            match rng.below(7) {
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
                    if c.close {
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
                                assert!(
                                    uncertain.contains(&(g as u32)),
                                    "seed {seed}: kernel took {g}, library free"
                                );
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
                            .filter(|c| c.close && !c.back)
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
                        assert_eq!(
                            *k == K::Installed,
                            lib_installed.contains(&(n as u32)),
                            "seed {seed}: {n}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn concurrent_lowest_free_allocations_land_on_uncertain_numbers() {
        for seed in 1..3000 {
            run(seed, false);
        }
    }

    #[test]
    fn allocations_with_lower_bounds_too() {
        for seed in 1..3000 {
            run(seed * 7919, true);
        }
    }
}

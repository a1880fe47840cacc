//! The measurement framework: warm-up and calibration, then N samples of a fixed iteration
//! count, with every thread pinned to a CPU and started together on a barrier.
//!
//! A *sample* is `iters` operations on every thread; its time is the wall time from the first
//! thread leaving the start barrier to the last thread finishing, so one sample gives
//! `wall / iters` = nanoseconds per operation per thread (the same definition as the gVisor
//! harness in bench/gvisor, so the two are comparable).

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long each measurement runs.
#[derive(Clone, Copy, Debug)]
pub struct Opts {
    /// Warm-up and calibration time per measurement.
    pub warmup: Duration,
    /// Rounds: the suite runs every case of a workload once per round, in order, and pools
    /// the samples, so that a slow drift in the machine's load is spread over every
    /// implementation instead of landing on whichever ran at the wrong moment.
    pub rounds: usize,
    /// Samples per measurement (per round).
    pub samples: usize,
    /// Target wall time of one sample.
    pub sample_time: Duration,
    /// If non-zero: this many iterations per sample and thread, no calibration (tests).
    pub fixed_iters: u64,
    /// Pairs per dd sample (`count=1M`, as `fget_light`'s benchmark); 0: calibrate like
    /// everything else.
    pub dd_pairs: u64,
}

impl Opts {
    /// The full run: 3 rounds of (100 ms warm-up, 4 samples of 100 ms).
    pub const FULL: Opts = Opts {
        warmup: Duration::from_millis(100),
        rounds: 3,
        samples: 4,
        sample_time: Duration::from_millis(100),
        fixed_iters: 0,
        dd_pairs: 1 << 20,
    };
    /// `--quick`: 2 rounds of (30 ms warm-up, 3 samples of 20 ms).
    pub const QUICK: Opts = Opts {
        warmup: Duration::from_millis(30),
        rounds: 2,
        samples: 3,
        sample_time: Duration::from_millis(20),
        fixed_iters: 0,
        dd_pairs: 0,
    };
    /// Unit tests: a handful of iterations, no calibration.
    pub const TEST: Opts = Opts {
        warmup: Duration::ZERO,
        rounds: 1,
        samples: 3,
        sample_time: Duration::ZERO,
        fixed_iters: 8,
        dd_pairs: 0,
    };

    /// Measured time per measurement (what the gVisor harness calls `-duration`).
    pub fn duration(&self) -> Duration {
        self.sample_time * self.samples as u32
    }
}

/// The result of one measurement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measurement {
    /// Nanoseconds per operation per thread, one per sample (wall time).
    pub samples: Vec<f64>,
    /// Iterations per sample and thread.
    pub iters: u64,
    /// CPU nanoseconds per operation (each thread's own CPU time, averaged over the threads),
    /// one per sample; empty when not measured. Unlike wall time, this does not grow when the
    /// machine is busy and a thread waits for a CPU — but it does grow with contention
    /// (cache-line transfers, spinning).
    pub cpu: Vec<f64>,
    /// Per sample, the threads' CPU time over the wall time: how many of them had a CPU on
    /// average (2.0 = two threads ran side by side all along; about 1.0 with two threads =
    /// the machine time-sliced them on one CPU). Empty when not measured.
    pub par: Vec<f64>,
}

impl Measurement {
    /// Median of the samples.
    pub fn median(&self) -> f64 {
        median(&self.samples)
    }
    /// Fastest sample.
    pub fn min(&self) -> f64 {
        self.samples.iter().copied().fold(f64::INFINITY, f64::min)
    }
    /// Slowest sample.
    pub fn max(&self) -> f64 {
        self.samples.iter().copied().fold(0.0, f64::max)
    }
    /// Median CPU ns/op, if measured.
    pub fn cpu_median(&self) -> Option<f64> {
        (!self.cpu.is_empty()).then(|| median(&self.cpu))
    }
}

/// CPU time of the calling thread, in ns (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The median of `xs` (the mean of the middle two for an even count); 0 for none.
pub fn median(xs: &[f64]) -> f64 {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// Warms up, calibrates and samples. `run(n)` performs `n` iterations (on every thread) and
/// returns the wall time. Writes ns/op per sample into `out` and returns the iteration count.
/// Allocates nothing, so a forked child may call it.
pub fn sample_with(opts: &Opts, out: &mut [f64], mut run: impl FnMut(u64) -> Duration) -> u64 {
    let iters = if opts.fixed_iters > 0 {
        run(opts.fixed_iters);
        opts.fixed_iters
    } else {
        // Double the count until one run is long enough to time and the warm-up is spent.
        let (mut n, mut spent) = (1u64, Duration::ZERO);
        let floor = (opts.sample_time / 4).max(Duration::from_micros(200));
        let last = loop {
            let t = run(n);
            spent += t;
            if spent >= opts.warmup && t >= floor {
                break t;
            }
            if t < floor || t < opts.warmup / 4 {
                n = n.saturating_mul(2);
            }
        };
        let per_op = last.as_nanos() as f64 / n as f64;
        ((opts.sample_time.as_nanos() as f64 / per_op.max(0.01)) as u64).max(1)
    };
    for slot in out.iter_mut() {
        *slot = run(iters).as_nanos() as f64 / iters as f64;
    }
    iters
}

/// Measures `op` on the calling thread alone (pinned to the first allowed CPU).
pub fn measure_here(opts: &Opts, mut op: impl FnMut(u64)) -> Measurement {
    let cpus = allowed_cpus();
    pin_to(cpus.first().copied());
    let mut samples = vec![0.0; opts.samples];
    let iters = sample_with(opts, &mut samples, |n| {
        let t = Instant::now();
        op(n);
        t.elapsed()
    });
    unpin(&cpus);
    Measurement {
        samples,
        iters,
        cpu: Vec::new(),
        par: Vec::new(),
    }
}

/// One thread's loop: runs `n` iterations of the workload's operation.
pub type Worker<'a> = Box<dyn FnMut(u64) + Send + 'a>;

/// A per-thread timestamp pair on its own cache line.
#[repr(align(128))]
#[derive(Default)]
struct Stamp {
    t0: AtomicU64,
    t1: AtomicU64,
    cpu: AtomicU64,
}

/// Measures `workers.len()` threads, each pinned to CPU `i mod ncpus`, started together.
pub fn measure(opts: &Opts, workers: Vec<Worker<'_>>) -> Measurement {
    assert!(
        !workers.is_empty(),
        "a measurement needs at least one thread"
    );
    let per_thread = workers.into_iter().map(|w| vec![w]).collect();
    with_crew(per_thread, |block| {
        let mut samples = vec![0.0; opts.samples];
        let mut cpu = Vec::new();
        let mut par = Vec::new();
        let iters = sample_with(opts, &mut samples, |n| {
            let (wall, c, p) = block(0, n);
            cpu.push(c);
            par.push(p);
            wall
        });
        // The last `samples` runs are the samples; the rest were warm-up.
        let cpu = cpu.split_off(cpu.len() - samples.len());
        let par = par.split_off(par.len() - samples.len());
        Measurement {
            samples,
            iters,
            cpu,
            par,
        }
    })
}

/// One block of a crew's group: the wall time from the first thread's start to the last
/// one's end, the CPU time per operation per thread (ns), and the parallelism (CPU time
/// over wall time).
type Block = (Duration, f64, f64);

/// Runs `body` with a crew of threads: thread `t` (pinned to CPU `t mod ncpus`) holds the
/// loops `per_thread[t]`, one per group. `body` gets `block(g, n)`, which starts every
/// thread's loop of group `g` together for `n` iterations and returns when all are done.
fn with_crew<'w, R>(
    per_thread: Vec<Vec<Worker<'w>>>,
    body: impl FnOnce(&dyn Fn(usize, u64) -> Block) -> R,
) -> R {
    let threads = per_thread.len();
    let cpus = allowed_cpus();
    let base = Instant::now();
    let stamps: Vec<Stamp> = (0..threads).map(|_| Stamp::default()).collect();
    let start = Barrier::new(threads + 1);
    let end = Barrier::new(threads + 1);
    let cmd = AtomicU64::new(0);
    let which = AtomicUsize::new(0);
    let arrived = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let now = || base.elapsed().as_nanos() as u64;

    std::thread::scope(|s| {
        for (tid, mut works) in per_thread.into_iter().enumerate() {
            let (stamps, start, end, cmd, which, arrived, stop, cpus) =
                (&stamps, &start, &end, &cmd, &which, &arrived, &stop, &cpus);
            std::thread::Builder::new()
                .name(format!("bench-{tid}"))
                .spawn_scoped(s, move || {
                    if !cpus.is_empty() {
                        pin_to(Some(cpus[tid % cpus.len()]));
                    }
                    loop {
                        start.wait();
                        // ORDERING: Acquire (all three); pair with the Release stores of
                        // `block` and of the end of the crew, which the `start` Barrier (a
                        // Mutex) already orders before us.
                        if stop.load(Ordering::Acquire) {
                            break;
                        }
                        let n = cmd.load(Ordering::Acquire);
                        let g = which.load(Ordering::Acquire);
                        // Spinning barrier: leave together. Yield now and then, in case
                        // there are more threads than CPUs.
                        // ORDERING: AcqRel; pairs with the other workers' increments and the
                        // Acquire loads below. The spin barrier only times the start; it
                        // publishes nothing.
                        arrived.fetch_add(1, Ordering::AcqRel);
                        let mut spins = 0u32;
                        // ORDERING: Acquire; pairs with the other workers' AcqRel increments
                        // (timing only); the reset to 0 is ordered before us by `start`.
                        while arrived.load(Ordering::Acquire) < threads {
                            spins += 1;
                            if spins.is_multiple_of(256) {
                                std::thread::yield_now();
                            } else {
                                std::hint::spin_loop();
                            }
                        }
                        let c0 = thread_cpu_ns();
                        // ORDERING: Relaxed (the three stamps); read by the main thread after
                        // `end.wait()`, a Barrier (a Mutex) that orders them; they pair with
                        // nothing.
                        stamps[tid].t0.store(now(), Ordering::Relaxed);
                        works[g](n);
                        stamps[tid].t1.store(now(), Ordering::Relaxed);
                        stamps[tid]
                            .cpu
                            .store(thread_cpu_ns() - c0, Ordering::Relaxed);
                        end.wait();
                    }
                })
                .expect("spawning a benchmark thread");
        }

        let block = |g: usize, n: u64| -> Block {
            // ORDERING: Release (all three); pair with the workers' Acquire loads, though
            // `start.wait()` already orders them (every worker left the spin loop before the
            // previous `end.wait()`).
            cmd.store(n, Ordering::Release);
            which.store(g, Ordering::Release);
            arrived.store(0, Ordering::Release);
            start.wait();
            end.wait();
            // ORDERING: Relaxed (all three); the workers' stamp stores are ordered before us
            // by `end.wait()`, a Barrier (a Mutex); they pair with nothing.
            let t0 = stamps.iter().map(|s| s.t0.load(Ordering::Relaxed)).min();
            let t1 = stamps.iter().map(|s| s.t1.load(Ordering::Relaxed)).max();
            let c: u64 = stamps.iter().map(|s| s.cpu.load(Ordering::Relaxed)).sum();
            let wall = (t1.unwrap_or(0) - t0.unwrap_or(0)).max(1);
            (
                Duration::from_nanos(wall),
                c as f64 / (threads as u64 * n) as f64,
                c as f64 / wall as f64,
            )
        };
        let r = body(&block);
        // ORDERING: Release; pairs with the workers' Acquire load of `stop`, which the
        // `start.wait()` below already orders.
        stop.store(true, Ordering::Release);
        start.wait();
        r
    })
}

/// Blocks per sample's worth of time in [`measure_interleaved`]: a sample of `sample_time`
/// becomes this many blocks of `sample_time / BLOCKS_PER_SAMPLE` for every group.
pub const BLOCKS_PER_SAMPLE: u32 = 50;

/// Measures several implementations of one case *interleaved*: `groups[g][t]` is thread
/// `t`'s loop for implementation `g` (every group has the same number of threads). Each
/// group is calibrated to blocks of about `sample_time / BLOCKS_PER_SAMPLE` (at least
/// 200 µs), then the groups run one block each, in an order rotated every cycle, for
/// `samples × BLOCKS_PER_SAMPLE` cycles: every group spends about `samples × sample_time`
/// measured, as [`measure`] would, but spread over the same stretch of time as the others.
///
/// On a guest whose speed changes under it for a second at a time (a busy sibling
/// hyperthread, the host's own work: a 2× swing on the AMD guests of issue 21), one sample
/// per implementation in turn compares implementations measured in different states of
/// the machine; here every cycle measures them all within a few milliseconds, so sample
/// `i` of every group is from the same state and the groups' samples can be compared pair
/// by pair ([`paired_median`]).
///
/// Returns one [`Measurement`] per group, each with one sample per cycle, in cycle order.
pub fn measure_interleaved(opts: &Opts, groups: Vec<Vec<Worker<'_>>>) -> Vec<Measurement> {
    let ngroups = groups.len();
    assert!(ngroups > 0, "an interleaved measurement needs a group");
    let threads = groups[0].len();
    assert!(
        threads > 0 && groups.iter().all(|g| g.len() == threads),
        "every group needs the same, non-zero, number of threads"
    );
    // Thread t's loops, one per group.
    let mut per_thread: Vec<Vec<Worker<'_>>> = (0..threads).map(|_| Vec::new()).collect();
    for g in groups {
        for (t, w) in g.into_iter().enumerate() {
            per_thread[t].push(w);
        }
    }
    with_crew(per_thread, |block| {
        // Calibrate each group to its block length (this is also its warm-up).
        let (iters, cycles): (Vec<u64>, usize) = if opts.fixed_iters > 0 {
            for g in 0..ngroups {
                block(g, opts.fixed_iters);
            }
            (vec![opts.fixed_iters; ngroups], opts.samples)
        } else {
            let target = (opts.sample_time / BLOCKS_PER_SAMPLE).max(Duration::from_micros(200));
            let warm = opts.warmup / ngroups as u32;
            let iters = (0..ngroups)
                .map(|g| {
                    let (mut n, mut spent) = (1u64, Duration::ZERO);
                    let last = loop {
                        let (t, _, _) = block(g, n);
                        spent += t;
                        if spent >= warm && t >= target {
                            break t;
                        }
                        if t < target {
                            n = n.saturating_mul(2);
                        }
                    };
                    let per_op = last.as_nanos() as f64 / n as f64;
                    ((target.as_nanos() as f64 / per_op.max(0.01)) as u64).max(1)
                })
                .collect();
            (iters, opts.samples * BLOCKS_PER_SAMPLE as usize)
        };

        let mut out: Vec<Measurement> = iters
            .iter()
            .map(|&n| Measurement {
                samples: Vec::with_capacity(cycles),
                iters: n,
                cpu: Vec::with_capacity(cycles),
                par: Vec::with_capacity(cycles),
            })
            .collect();
        for c in 0..cycles {
            for k in 0..ngroups {
                let g = (c + k) % ngroups;
                let (wall, cpu, par) = block(g, iters[g]);
                let m = &mut out[g];
                m.samples.push(wall.as_nanos() as f64 / iters[g] as f64);
                m.cpu.push(cpu);
                m.par.push(par);
            }
        }
        out
    })
}

/// The median over `i` of `f(a[i], b[i])`: a comparison of two interleaved measurements
/// sample by sample, each pair from the same stretch of time ([`measure_interleaved`]).
/// `None` if the two do not have the same number of samples.
pub fn paired_median(a: &[f64], b: &[f64], f: impl Fn(f64, f64) -> f64) -> Option<f64> {
    (a.len() == b.len() && !a.is_empty())
        .then(|| median(&a.iter().zip(b).map(|(x, y)| f(*x, *y)).collect::<Vec<_>>()))
}

/// The CPUs this process may run on (empty if that cannot be read).
#[cfg(target_os = "linux")]
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let r = unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, the size of `set`.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Pins the calling thread to `cpu` (`sched_setaffinity`); failures are ignored (the
/// measurement stays valid, only noisier).
pub fn pin_to(cpu: Option<usize>) {
    if let Some(cpu) = cpu {
        set_affinity(&[cpu]);
    }
}

/// Lets the calling thread run on every CPU in `cpus` again.
pub fn unpin(cpus: &[usize]) {
    if !cpus.is_empty() {
        set_affinity(cpus);
    }
}

/// The CPUs this process may run on: off Linux, all of them (there is no affinity mask to
/// read).
#[cfg(not(target_os = "linux"))]
pub fn allowed_cpus() -> Vec<usize> {
    (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
}

/// Off Linux threads are not pinned (macOS has no `sched_setaffinity`): measurements are
/// noisier, not wrong.
#[cfg(not(target_os = "linux"))]
fn set_affinity(_cpus: &[usize]) {}

#[cfg(target_os = "linux")]
fn set_affinity(cpus: &[usize]) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: CPU_SET writes inside `set`; `allowed_cpus` only yields cpus < CPU_SETSIZE.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; 0 is the calling thread.
    unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn every_thread_runs_every_sample() {
        let counts: Vec<AtomicU64> = (0..3).map(|_| AtomicU64::new(0)).collect();
        let workers: Vec<Worker<'_>> = counts
            .iter()
            .map(|c| {
                Box::new(move |n: u64| {
                    // ORDERING: Relaxed; a test counter, read only after the thread scope in
                    // `measure` joined every worker, which orders it.
                    c.fetch_add(n, Ordering::Relaxed);
                }) as Worker<'_>
            })
            .collect();
        let m = measure(&Opts::TEST, workers);
        assert_eq!(m.samples.len(), 3);
        assert_eq!(m.iters, 8);
        for c in &counts {
            // One warm-up run and three samples.
            // ORDERING: Relaxed; a counter read after `measure` joined its threads.
            assert_eq!(c.load(Ordering::Relaxed), 4 * 8);
        }
    }

    #[test]
    fn interleaved_groups_run_every_cycle_in_step() {
        // Two groups of two threads: each counts its iterations and records the order in
        // which blocks ran.
        let counts: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(0)).collect();
        let order = std::sync::Mutex::new(Vec::new());
        let groups: Vec<Vec<Worker<'_>>> = (0..2)
            .map(|g| {
                let (counts, order) = (&counts, &order);
                (0..2)
                    .map(move |t| {
                        Box::new(move |n: u64| {
                            // ORDERING: Relaxed; a test counter read after `measure_interleaved`
                            // joined its threads.
                            counts[g * 2 + t].fetch_add(n, Ordering::Relaxed);
                            if t == 0 {
                                order.lock().unwrap().push(g);
                            }
                        }) as Worker<'_>
                    })
                    .collect()
            })
            .collect();
        let ms = measure_interleaved(&Opts::TEST, groups);
        assert_eq!(ms.len(), 2);
        for m in &ms {
            assert_eq!((m.samples.len(), m.cpu.len(), m.par.len()), (3, 3, 3));
            assert_eq!(m.iters, 8);
        }
        for c in &counts {
            // One warm-up block and three cycles.
            // ORDERING: Relaxed; read after the threads were joined.
            assert_eq!(c.load(Ordering::Relaxed), 4 * 8);
        }
        // Warm-up 0, 1; then cycles rotate: 0 1, 1 0, 0 1.
        assert_eq!(*order.lock().unwrap(), [0, 1, 0, 1, 1, 0, 0, 1]);
    }

    #[test]
    fn paired_median_compares_sample_by_sample() {
        // b is a twice slower "state" in the middle: paired differences still see 1.
        let a = [10.0, 20.0, 20.0, 10.0, 10.0];
        let b = [11.0, 21.0, 21.0, 11.0, 11.0];
        assert_eq!(paired_median(&b, &a, |x, y| x - y), Some(1.0));
        assert_eq!(paired_median(&a, &b[..4], |x, y| x - y), None);
        assert_eq!(paired_median(&[], &[], |x, y| x - y), None);
    }

    #[test]
    fn calibration_reaches_a_fixed_count() {
        let opts = Opts {
            warmup: Duration::from_millis(2),
            rounds: 1,
            samples: 2,
            sample_time: Duration::from_millis(1),
            fixed_iters: 0,
            dd_pairs: 0,
        };
        let m = measure_here(&opts, |n| {
            for i in 0..n {
                std::hint::black_box(i);
            }
        });
        assert!(m.iters > 1);
        assert_eq!(m.samples.len(), 2);
    }
}

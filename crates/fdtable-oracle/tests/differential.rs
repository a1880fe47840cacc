//! The differential run: random operation sequences through the live kernel and through
//! fdtable, at least 100,000 operations per run, with a check that every operation, error
//! path, limit, fork/clone/exec and close_range flavour was actually exercised.
//!
//! A divergence fails the test with the shrunk sequence, both sides' results, and the fds
//! open after every operation. Set `PROPTEST_RNG_SEED` to replay a run,
//! `FDTABLE_ORACLE_OPS` to run more (or fewer) operations, `FDTABLE_ORACLE_MAX_LEN` for longer
//! sequences.

use fdtable_oracle::interp::{NOT_RUN, SKIPPED};
use fdtable_oracle::program::{FdArg, Rec};
use fdtable_oracle::{CheckError, Checked, KernelExecutor, check, strategy};
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Operations (records) run through both sides per test run, at least.
const TARGET_OPS: usize = 100_000;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
/// Worker threads, each with its own kernel executor and proptest runner.
const WORKERS: usize = 2;
/// Top-level operations per case, at most.
const MAX_LEN: usize = 48;

fn probe() -> &'static std::path::Path {
    env!("CARGO_BIN_EXE_fdtable-oracle-probe").as_ref()
}

#[derive(Default)]
struct Stats {
    cases: usize,
    ops: usize,
    features: BTreeMap<String, usize>,
}

fn errno_name(v: i64) -> String {
    if v == SKIPPED {
        return "skipped".into();
    }
    if v >= 0 {
        return "ok".into();
    }
    fdtable::Errno::new(-v as i32)
        .name()
        .unwrap_or("errno?")
        .to_string()
}

fn kind_name(k: u64) -> &'static str {
    [
        "?",
        "open",
        "open_many",
        "close",
        "dup",
        "dup2",
        "dup3",
        "dupfd",
        "getfd",
        "setfd",
        "dupfd_query",
        "close_range",
        "setrlimit",
        "fdsize",
        "fork",
        "clone_files",
        "unshare",
        "exec",
        "reserve_begin",
        "reserve_end",
        "reserve_abort",
        "replace_fd",
        "renumber",
    ]
    .get(k as usize)
    .copied()
    .unwrap_or("?")
}

impl Stats {
    fn hit(&mut self, f: String) {
        *self.features.entry(f).or_default() += 1;
    }

    fn add(&mut self, c: &Checked) {
        self.cases += 1;
        for (i, rec) in c.program.recs.iter().enumerate() {
            let r = c.kernel.results[i];
            if r[0] == NOT_RUN {
                continue;
            }
            self.ops += 1;
            let name = kind_name(rec.kind);
            self.hit(format!("{name}:{}", errno_name(r[0])));
            self.derived(rec, r, c.kernel.args[i]);
        }
        self.hit(format!("hi>{}", bucket(c.kernel.hi)));
    }

    /// The edges each operation must reach.
    fn derived(&mut self, rec: &Rec, r: [i64; 2], args: [u64; 2]) {
        let name = kind_name(rec.kind);
        let res = errno_name(r[0]);
        match name {
            "dup2" | "dup3" | "replace_fd" | "renumber" if args[0] == args[1] => {
                self.hit(format!("{name}:same-fd:{res}"))
            }
            _ => {}
        }
        if matches!(
            name,
            "dup2" | "dup3" | "dupfd" | "close" | "replace_fd" | "renumber"
        ) {
            if args[1] >= 0x8000_0000 || args[0] >= 0x8000_0000 {
                self.hit(format!("{name}:negative-fd:{res}"));
            }
            if FdArg::decode(rec.b) == FdArg::Limit(0) {
                self.hit(format!("{name}:at-limit:{res}"));
            }
        }
        match name {
            "close_range" => {
                let f = rec.c as u32;
                let known = f & !(fdtable::CLOSE_RANGE_UNSHARE | fdtable::CLOSE_RANGE_CLOEXEC);
                let label = if known != 0 {
                    "unknown-flags".to_string()
                } else {
                    format!("flags={f}")
                };
                self.hit(format!("close_range:{label}:{res}"));
                if args[0] > args[1] {
                    self.hit(format!("close_range:first>last:{res}"));
                }
                if args[1] == u32::MAX as u64 {
                    self.hit(format!("close_range:~0U:{res}"));
                }
            }
            "fdsize" if r[0] >= 0 => self.hit(format!("fdsize={}", r[0].min(4096))),
            "dupfd_query" if r[0] >= 0 => self.hit(
                if r[0] == 1 {
                    "dupfd_query:same-file"
                } else {
                    "dupfd_query:other-file"
                }
                .into(),
            ),
            "open_many" if r[1] != NOT_RUN => self.hit(format!("open_many:{}", errno_name(r[1]))),
            "reserve_end" if r[1] >= 0 => self.hit("reserve_end:installed".into()),
            "setrlimit" if args[0] == 0 => self.hit("setrlimit:zero".into()),
            _ => {}
        }
    }

    fn merge(&mut self, o: Stats) {
        self.cases += o.cases;
        self.ops += o.ops;
        for (k, v) in o.features {
            *self.features.entry(k).or_default() += v;
        }
    }
}

fn bucket(hi: u64) -> u64 {
    match hi {
        0..=64 => 0,
        65..=128 => 64,
        129..=1024 => 128,
        _ => 1024,
    }
}

fn worker(index: usize, target: usize, max_len: usize) -> Result<Stats, String> {
    let exec = RefCell::new(KernelExecutor::new(probe()).map_err(|e| e.to_string())?);
    let stats = RefCell::new(Stats::default());
    let config = Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    };
    // A runner counts its cases over its lifetime; each batch gets a new one, seeded from
    // the first (so PROPTEST_RNG_SEED still fixes the whole run).
    let mut seeds = TestRunner::new(config.clone());
    for _ in 0..index {
        seeds.new_rng(); // a fixed PROPTEST_RNG_SEED still gives each worker its own cases
    }
    let strategy = strategy::case(max_len);
    while stats.borrow().ops < target {
        TestRunner::new_with_rng(config.clone(), seeds.new_rng())
            .run(&strategy, |case| {
                match check(&mut exec.borrow_mut(), &case) {
                    Ok(c) => {
                        stats.borrow_mut().add(&c);
                        Ok(())
                    }
                    Err(CheckError::Divergence(d)) => Err(TestCaseError::fail(d.to_string())),
                    // Not a finding about the library; the message says so.
                    Err(CheckError::Harness(e)) => Err(TestCaseError::fail(format!(
                        "harness failure (not a divergence): {e}"
                    ))),
                }
            })
            .map_err(|e| e.to_string())?;
    }
    Ok(stats.into_inner())
}

/// Every feature a run must have exercised. Each is hit hundreds of times in a normal run, so
/// a miss means the generator or the harness lost coverage.
const REQUIRED: &[&str] = &[
    "open:ok",
    "open:EMFILE",
    "open_many:ok",
    "open_many:EMFILE",
    "close:ok",
    "close:EBADF",
    "close:negative-fd:EBADF",
    "dup:ok",
    "dup:EBADF",
    "dup:EMFILE",
    "dup2:ok",
    "dup2:EBADF",
    "dup2:EBUSY",
    "dup2:same-fd:ok",
    "dup2:same-fd:EBADF",
    "dup2:at-limit:EBADF",
    "dup2:negative-fd:EBADF",
    "dup3:ok",
    "dup3:EBADF",
    "dup3:EINVAL",
    "dup3:same-fd:EINVAL",
    "dup3:at-limit:EBADF",
    "dupfd:ok",
    "dupfd:EBADF",
    "dupfd:EINVAL",
    "dupfd:EMFILE",
    "dupfd:at-limit:EINVAL",
    "dupfd:negative-fd:EINVAL",
    "getfd:ok",
    "getfd:EBADF",
    "setfd:ok",
    "setfd:EBADF",
    "dupfd_query:ok",
    "dupfd_query:EBADF",
    "dupfd_query:same-file",
    "dupfd_query:other-file",
    "close_range:flags=0:ok",
    "close_range:flags=2:ok",
    "close_range:flags=4:ok",
    "close_range:flags=6:ok",
    "close_range:unknown-flags:EINVAL",
    "close_range:first>last:EINVAL",
    "close_range:~0U:ok",
    "setrlimit:ok",
    "setrlimit:zero",
    "fdsize=64",
    "fdsize=128",
    "fdsize=256",
    "fdsize=2048",
    "fork:ok",
    "clone_files:ok",
    "unshare:ok",
    "exec:ok",
    "reserve_begin:ok",
    "reserve_begin:EMFILE",
    "reserve_end:ok",
    "reserve_end:installed",
    "reserve_abort:ok",
    "replace_fd:ok",
    "replace_fd:EBADF",
    "replace_fd:EBUSY",
    "replace_fd:same-fd:ok",
    "replace_fd:at-limit:EBADF",
    "replace_fd:negative-fd:EBADF",
    "renumber:ok",
    "renumber:EBADF",
    "renumber:EBUSY",
    "renumber:same-fd:ok",
    "renumber:same-fd:EBADF",
    "renumber:at-limit:EBADF",
    "renumber:negative-fd:EBADF",
    "hi>64",
    "hi>1024",
];

#[test]
fn kernel_and_library_agree_on_100k_random_operations() {
    let target = env_or("FDTABLE_ORACLE_OPS", TARGET_OPS);
    let max_len = env_or("FDTABLE_ORACLE_MAX_LEN", MAX_LEN);
    let handles: Vec<_> = (0..WORKERS)
        .map(|i| std::thread::spawn(move || worker(i, target.div_ceil(WORKERS), max_len)))
        .collect();
    let mut total = Stats::default();
    for h in handles {
        match h.join().expect("worker thread") {
            Ok(s) => total.merge(s),
            Err(e) => panic!("{e}"),
        }
    }
    println!(
        "{} cases, {} operations through both the kernel and fdtable",
        total.cases, total.ops
    );
    for (k, v) in &total.features {
        println!("  {k:<40} {v}");
    }
    assert!(total.ops >= target, "only {} operations ran", total.ops);
    let missing: Vec<_> = REQUIRED
        .iter()
        .filter(|f| !total.features.contains_key(**f))
        .collect();
    assert!(missing.is_empty(), "never exercised: {missing:?}");
}

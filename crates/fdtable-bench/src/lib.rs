//! `fdtable bench`: the experiments of the kernel patches this layer reproduces (`fget_light`,
//! the RCU fd table, the failed-open fast path, `find_next_fd`'s fast path, `unlocked_ioctl`),
//! side by side with the kernel, the naive "before", lock-based tables and gVisor. See
//! docs/BENCHMARKS.md.
//!
//! - [`framework`]: warm-up, calibration, pinned threads started on a barrier, samples.
//! - [`impls`]: the tables under test.
//! - [`workloads`]: one module per experiment.
//! - [`suite`]: workloads as lists of cases, run in order in one process.
//! - [`output`], [`charts`], [`progress`]: tables, JSON, SVG, stderr progress.
//! - [`targets`]: the performance targets, checked against a run's rows.
//! - [`instructions`]: fixed-count hot paths for callgrind (ci/instructions).

pub mod charts;
pub mod cli;
pub mod framework;
pub mod impls;
pub mod instructions;
pub mod output;
pub mod progress;
pub mod suite;
pub mod targets;
pub mod workloads;

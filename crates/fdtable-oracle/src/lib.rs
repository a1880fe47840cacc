//! # fdtable-oracle
//!
//! Differential testing of [`fdtable`] against the running Linux kernel: the same operation
//! sequence runs through real system calls in a fresh process tree and through
//! [`fdtable::Files`], and every returned fd, errno, close-on-exec bit, file identity and
//! table size must be the same.
//!
//! - [`program`]: the operation language ([`Op`], [`Case`]) and its flat form.
//! - [`interp`]: the interpreter both sides share, generic over the system ([`interp::Sys`]).
//! - [`kernel`]: the kernel executor (the crate's only `unsafe` code): a child process with
//!   its own `RLIMIT_NOFILE` and only fds 0–2, raw system calls, results in shared memory,
//!   `fork`/`clone(CLONE_FILES)` children, `execve` of the `fdtable-oracle-probe` binary,
//!   reservations made by an `open` blocked on a FIFO.
//! - [`library`]: the library executor, one `Files` handle per process.
//! - [`outcome`]: what each side observed and the comparison.
//! - [`strategy`]: proptest generators.
//!
//! ```no_run
//! use fdtable_oracle::{Case, FdArg, KernelExecutor, Op, check};
//!
//! // In this crate's integration tests: env!("CARGO_BIN_EXE_fdtable-oracle-probe").
//! let probe = std::path::Path::new("target/debug/fdtable-oracle-probe");
//! let mut kernel = KernelExecutor::new(probe)?;
//! let case = Case::new(
//!     64,
//!     vec![Op::Open { cloexec: true }, Op::Dup2(FdArg::Recent(0), FdArg::Lit(64))],
//! );
//! check(&mut kernel, &case)?; // Err(CheckError::Divergence(..)) prints both sides
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod interp;
pub mod kernel;
pub mod library;
pub mod outcome;
pub mod program;
pub mod strategy;

pub use kernel::{HarnessError, KernelExecutor};
pub use outcome::{Divergence, Outcome, compare};
pub use program::{Case, FdArg, LimitArg, Op, Program};

/// Why [`check`] failed.
#[derive(Debug)]
pub enum CheckError {
    /// The kernel side could not be run (not a finding about the library).
    Harness(HarnessError),
    /// The library disagrees with the kernel.
    Divergence(Box<Divergence>),
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::Harness(e) => write!(f, "harness failure: {e}"),
            CheckError::Divergence(d) => write!(f, "kernel and library diverge: {d}"),
        }
    }
}

impl std::error::Error for CheckError {}

/// Both observations of one case.
#[derive(Debug)]
pub struct Checked {
    /// The flattened case.
    pub program: Program,
    /// What the kernel did (the same as the library, since the check passed).
    pub kernel: Outcome,
}

/// Runs `case` on the kernel and on the library and compares everything observed.
pub fn check(kernel: &mut KernelExecutor, case: &Case) -> Result<Checked, CheckError> {
    let program = case.program();
    let k = kernel.run(&program).map_err(CheckError::Harness)?;
    let l = library::run(&program);
    compare(&program, &k, &l).map_err(|d| CheckError::Divergence(Box::new(d)))?;
    Ok(Checked { program, kernel: k })
}

//! # fdtable-run
//!
//! `fdtable run [--nofile N] [--track-fds] [--] CMD [ARGS...]`: runs a real program, and
//! every process and thread it starts, with `fdtable::Files` as the authoritative descriptor
//! table of each process.
//!
//! A ptrace supervisor with a seccomp-bpf filter: the filter stops only the calls that take
//! or return a descriptor or a path (and exec, fork, clone, rlimits, io_uring, unknown
//! numbers); the supervisor runs each table operation through the library, which chooses
//! every fd number and table errno, and keeps the real descriptors in a private range of the
//! tracee's real table that the program never sees: every number the program passes is
//! translated there, every number it gets back is the library's. See `docs/RUN.md` for the
//! design, what is refused and the limits.
//!
//! Modules: [`cli`] (arguments, the first process, exit status), [`sup`] (tasks, stops,
//! injection, tables following fork/clone/exec), [`handlers`] (each call), [`syscalls`] and
//! [`filter`] (which calls stop), [`paths`] (`/dev/fd/N` and friends), [`table`] (what is
//! kept beside each table), [`mem`] and [`procfs`] (the tracee's memory and /proc), and
//! [`sys`], the only module with `unsafe` code.

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod cli;
pub mod filter;
pub mod handlers;
pub mod mem;
pub mod paths;
pub mod procfs;
pub mod sup;
#[allow(unsafe_code)]
pub mod sys;
pub mod syscalls;
pub mod table;

//! # fdtable-run
//!
//! `fdtable run [--nofile N] [--track-fds] [--] CMD [ARGS...]`: runs a real program, and
//! every process and thread it starts, with `fdtable::Files` as the authoritative descriptor
//! table of each process, kept identical to the kernel's: real descriptor N is the library's
//! descriptor N. See `docs/RUN.md` for the design.
//!
//! Modules: [`cli`] (arguments, the supervisor's process, and this process becoming the
//! program), [`filter`] (the seccomp filter, from the `fdtable-syscalls` catalogue and
//! [`policy`]), [`sup`] (the supervisor: tables, settling, checks, process events),
//! [`calls`] (each notified call, by family), [`procfs`] and [`mem`] (what is read from
//! /proc and, for display, from memory), and [`sys`], the only module with `unsafe` code.

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod calls;
pub mod cli;
pub mod filter;
pub mod mem;
pub mod policy;
pub mod procfs;
pub mod sup;
#[allow(unsafe_code)]
pub mod sys;

//! The binary the kernel executor `execve`s for an `Exec` operation: it re-attaches the
//! run's shared memory, reports the fd table it finds and runs the rest of the process's
//! operations (see `fdtable_oracle::kernel`).
//!
//! It is built without Rust's usual `main`: the standard runtime's start-up opens
//! `/dev/null` on any of fds 0–2 that is closed, which would change the table under test.
//! `std::env::args` still works (glibc hands `argv` to `.init_array` functions).

#![no_main]

use std::ffi::{c_char, c_int};

// The C entry point; no `unsafe` block, only the attribute that exports the symbol.
#[unsafe(no_mangle)]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    fdtable_oracle::kernel::probe_main()
}

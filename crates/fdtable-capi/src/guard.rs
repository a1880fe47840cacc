//! The boundary: panics are caught, results become `-errno`.

use fdtable::Errno;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What an entry point reports if a panic was caught (a bug in the library: no input is
/// expected to panic).
pub(crate) const PANICKED: Errno = Errno::EIO;

/// Runs `f`, returning `fallback` if it panics. The panic message goes to the panic hook
/// (stderr by default); nothing unwinds into C.
#[inline(always)]
pub(crate) fn guard<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            // Dropping a panic payload can itself panic (a payload whose `Drop` panics);
            // forget it rather than risk unwinding out of here.
            std::mem::forget(payload);
            fallback
        }
    }
}

/// `Result<i32>` as the kernel returns it from an `int` syscall.
#[inline(always)]
pub(crate) fn ret_int(r: Result<i32, Errno>) -> i32 {
    match r {
        Ok(v) => v,
        Err(e) => e.neg(),
    }
}

/// `Result<()>` as `0` or `-errno`.
#[inline(always)]
pub(crate) fn ret_unit(r: Result<(), Errno>) -> i32 {
    match r {
        Ok(()) => 0,
        Err(e) => e.neg(),
    }
}

/// A byte count as `ssize_t`.
#[inline(always)]
pub(crate) fn ret_size(r: Result<usize, Errno>) -> isize {
    match r {
        Ok(n) => n as isize,
        Err(e) => e.neg() as isize,
    }
}

/// A 64-bit result (`lseek`, `ioctl`) as `int64_t` / `long`.
#[inline(always)]
pub(crate) fn ret_i64(r: Result<i64, Errno>) -> i64 {
    match r {
        Ok(v) => v,
        Err(e) => i64::from(e.neg()),
    }
}

/// The kernel's `IS_ERR_VALUE` for a callback's `long` result: `-4095..=-1` is `-errno`,
/// anything else is a value.
#[inline(always)]
pub(crate) fn from_callback(r: i64) -> Result<i64, Errno> {
    if (-4095..0).contains(&r) {
        Err(Errno::new(-(r as i32)))
    } else {
        Ok(r)
    }
}

/// `unsigned long` as `u64` (the same type on LP64 targets, narrower elsewhere).
#[inline(always)]
#[allow(clippy::useless_conversion)]
pub(crate) fn ulong(v: std::ffi::c_ulong) -> u64 {
    u64::from(v)
}

/// `long` as `i64` (the same type on LP64 targets, narrower elsewhere).
#[inline(always)]
#[allow(clippy::useless_conversion)]
pub(crate) fn long(v: std::ffi::c_long) -> i64 {
    i64::from(v)
}

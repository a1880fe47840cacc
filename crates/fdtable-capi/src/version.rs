//! The C library's version: in the header at compile time, from `fdt_version` at run time.
//!
//! `FDT_VERSION_MAJOR` is the number in the shared library's SONAME (`libfdtable.so.0`) and
//! changes only with an ABI break; `FDT_VERSION_MINOR` grows when calls, constants or ops
//! members are added; `FDT_VERSION_PATCH` counts releases without interface changes. The
//! numbers are those of the `fdtable-ffi` package (its own version, independent of the Rust
//! crates'), which builds the library; a test keeps the two equal. `docs/C-ABI.md` has the
//! policy.

use std::ffi::c_uint;

/// The library's major version: the `N` of its SONAME `libfdtable.so.N`. Changes only when
/// the ABI breaks (a removed or changed call, a changed struct layout or constant).
pub const FDT_VERSION_MAJOR: c_uint = 0;
/// The minor version: grows when calls, constants or `struct fdt_file_ops` members are added
/// (programs built against it may need those).
pub const FDT_VERSION_MINOR: c_uint = 5;
/// The patch version: releases without interface changes.
pub const FDT_VERSION_PATCH: c_uint = 0;
/// The version as one number, `(MAJOR << 16) | (MINOR << 8) | PATCH`, ordered as versions
/// are: compare it with `FDT_VERSION_NUMBER(major, minor, patch)`.
pub const FDT_VERSION: c_uint =
    (FDT_VERSION_MAJOR << 16) | (FDT_VERSION_MINOR << 8) | FDT_VERSION_PATCH;

/// The version of the library the program is running with, encoded as `FDT_VERSION` is
/// (`FDT_VERSION` is the header's the program was built with). A program runs with any
/// library of its SONAME at least as new as its header; this tells which one it got, for
/// reports, or before using something added after the version the program requires.
///
/// Cannot fail.
#[unsafe(no_mangle)]
pub extern "C" fn fdt_version() -> c_uint {
    FDT_VERSION
}

//! `libfdtable.a` / `libfdtable.so` (SONAME `libfdtable.so.0`): the C library. Every symbol
//! is defined in [`fdtable_capi`]; this crate only links them into C-loadable artifacts. Its
//! version is the C library's (`FDT_VERSION_*`); `build.rs` sets the SONAME and the version
//! script, `abi/` holds the ABI baseline `ci/cabi` checks (docs/C-ABI.md).

pub use fdtable_capi::*;

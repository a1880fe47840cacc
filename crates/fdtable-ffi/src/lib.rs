//! `libfdtable.a` / `libfdtable.so`: the C library. Every symbol is defined in
//! [`fdtable_capi`]; this crate only links them into C-loadable artifacts.

pub use fdtable_capi::*;

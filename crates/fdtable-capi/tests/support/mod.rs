//! Shared by the Rust tests of the C ABI and by the fuzz target (which includes these files
//! with `#[path]`).

#![allow(dead_code)]
// The legacy calls are tested too, beside their `...2` forms.
#![allow(deprecated)]
// `unsigned long` is `u64` on the targets the tests run on; the casts keep them portable.
#![allow(clippy::unnecessary_cast, clippy::useless_conversion)]

pub mod probe;
pub mod sequence;

//! Design notes, kept with the code they describe.

#[doc = include_str!("divergences.md")]
pub mod divergences {}

//! Design notes, kept with the code they describe.

#[doc = include_str!("design.md")]
pub mod design {}

#[doc = include_str!("locking.md")]
pub mod locking {}

#[doc = include_str!("ordering.md")]
pub mod ordering {}

#[doc = include_str!("divergences.md")]
pub mod divergences {}

#[doc = include_str!("embedding.md")]
pub mod embedding {}

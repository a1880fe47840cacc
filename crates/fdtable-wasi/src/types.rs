//! WASI preview 1 types: `fdtable-wasi-types`, the one home of the witx numbering, the wasm32
//! layouts and the Linux-to-WASI errno table, shared with the embedding example.

pub use fdtable_wasi_types::*;

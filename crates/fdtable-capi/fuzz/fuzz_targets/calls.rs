//! Call sequences through the C ABI: the input decodes into calls (NULL handles, garbage
//! descriptors, unknown flags and commands, NULL buffers included), each checked against the
//! same call on a mirror `fdtable_vfs::Task`; at the end every file must have been released
//! exactly once, and nothing may leak (LeakSanitizer). The decoder and the checks are
//! `tests/support/sequence.rs`, which the proptest `tests/sequences.rs` runs on stable.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/mod.rs"]
mod support;

fuzz_target!(|data: &[u8]| {
    support::sequence::run(data);
});

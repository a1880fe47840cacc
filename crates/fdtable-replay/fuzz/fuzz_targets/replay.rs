//! Any bytes as a log: the parser and the replay must never panic.
#![no_main]

use fdtable_replay::parse::Source;
use fdtable_replay::replay::{Options, replay};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = Source::bytes("fuzz", data.to_vec());
    if let Ok(r) = replay(&src, None, &Options::default(), &mut |_, _| {}) {
        let t = r.stats.total();
        assert_eq!(t.checked, t.matched + t.mismatched);
    }
});

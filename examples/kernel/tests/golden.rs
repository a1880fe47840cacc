//! "The no_std build's logic on the host gives the same calls the same results as the std
//! build": the shared scenario (`src/scenario.rs`), run through this crate — `fdtable` built
//! without `std`, with the RCU hooks this crate defines — must write exactly
//! `tests/golden.txt`. `examples/wasi/tests/std_transcript.rs` runs the same source against
//! `fdtable` with `std` and compares it with the same file.
//!
//! To regenerate the file after a deliberate change: `FDTABLE_BLESS=1 cargo test --manifest-path
//! examples/kernel/Cargo.toml --test golden`, then review the diff.

use fdtable_example_kernel::{SpinLock, scenario};

const GOLDEN_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden.txt");

fn check(got: &str) {
    if std::env::var_os("FDTABLE_BLESS").is_some() {
        std::fs::write(GOLDEN_PATH, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(GOLDEN_PATH).unwrap();
    if got == want {
        return;
    }
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    let at = g
        .iter()
        .zip(&w)
        .position(|(a, b)| a != b)
        .unwrap_or(g.len().min(w.len()));
    panic!(
        "the no_std build's transcript differs from tests/golden.txt at line {}:\n  got:  {:?}\n  want: {:?}\n(got {} lines, want {})",
        at + 1,
        g.get(at),
        w.get(at),
        g.len(),
        w.len()
    );
}

#[test]
fn no_std_build_matches_the_golden_transcript_with_the_kernel_spinlock() {
    check(&scenario::run::<SpinLock>());
}

#[test]
fn no_std_build_matches_the_golden_transcript_with_the_default_lock() {
    check(&scenario::run::<fdtable::RawSpinLock>());
}

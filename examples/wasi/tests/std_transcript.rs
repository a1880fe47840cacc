//! "The no_std build's logic on the host gives the same calls the same results as the std
//! build", the std half: the scenario shared with the kernel example
//! (`examples/kernel/src/scenario.rs`), compiled here against `fdtable` *with* `std` (the
//! built-in RCU and the default features this workspace builds it with), must write exactly
//! the transcript the `no_std` build is checked against, `examples/kernel/tests/golden.txt`.

extern crate alloc;

#[allow(dead_code)]
mod scenario {
    include!("../../kernel/src/scenario.rs");
}

const GOLDEN: &str = include_str!("../../kernel/tests/golden.txt");

#[test]
fn the_core_builds_with_std_here() {
    // The point of this test file: the same scenario against the other build of the core.
    // `Errno` converts to and from `std::io::Error` only with the `std` feature: this file
    // would not compile against the kernel example's build of the core.
    let e: std::io::Error = fdtable::Errno::EBADF.into();
    assert_eq!(fdtable::Errno::from(&e), fdtable::Errno::EBADF);
}

#[test]
fn std_build_matches_the_golden_transcript() {
    let got = scenario::run::<fdtable::RawSpinLock>();
    if got == GOLDEN {
        return;
    }
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), GOLDEN.lines().collect());
    let at = g
        .iter()
        .zip(&w)
        .position(|(a, b)| a != b)
        .unwrap_or(g.len().min(w.len()));
    panic!(
        "the std build's transcript differs from examples/kernel/tests/golden.txt at line {}:\n  got:  {:?}\n  want: {:?}\n(got {} lines, want {})",
        at + 1,
        g.get(at),
        w.get(at),
        g.len(),
        w.len()
    );
}

//! The fuzz target's call-sequence generator, run deterministically by proptest so that CI
//! exercises it without nightly: random bytes decode into calls through the C ABI (invalid
//! arguments included), each compared with the same call on a mirror `Task`, and at the end
//! every file must have been released exactly once.

mod support;

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        // Deterministic: the same cases on every run (the fuzz target explores further).
        rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn call_sequences_match_the_rust_layer(data in proptest::collection::vec(any::<u8>(), 0..3000)) {
        support::sequence::run(&data);
    }
}

/// Hand-picked inputs that reach the interesting states quickly (kept as regression seeds).
#[test]
fn seeds() {
    // new file (kind all callbacks, RDWR), install, dup2 far, share, fdget on both, exec.
    let seeds: [&[u8]; 5] = [
        &[
            7, 0xff, 2, 10, 0, 1, 0, 16, 0, 0, 10, 0, 3, 0, 20, 0, 10, 20, 1, 10, 5, 0,
        ],
        &[
            7, 0x3f, 2, 7, 0x40, 6, 11, 0, 1, 13, 0, 0, 0, 14, 0, 0, 22, 0, 0, 3, 0, 9,
        ],
        &[
            6, 0, 3, 3, 7, 1, 2, 10, 0, 0, 0, 15, 0, 0, 15, 0, 0, 15, 0, 0, 15, 0, 0,
        ],
        &[
            7, 0xff, 2, 10, 0, 0, 0, 3, 0, 19, 1, 0, 0, 0, 2, 14, 0, 0, 1, 0, 1, 1,
        ],
        // The 0.4 calls: install_with (payload 1), reserve_owned, a second file installed
        // through the reservation with payload 3, renumber_onto over it, fdget_with_payload,
        // cmpxchg of the payload 1 -> 2, renumber onto a free number.
        &[
            7, 0xff, 2, 38, 0, 0, 0, 2, 1, 0, 42, 0, 0, 7, 0xff, 2, 43, 2, 2, 3, 0, 0, 36, 0, 0, 1,
            1, 41, 0, 1, 37, 0, 1, 2, 2, 2, 1, 2, 1, 36, 0, 1, 9, 0, 41, 0, 9,
        ],
    ];
    for s in seeds {
        support::sequence::run(s);
    }
    // The 0.5 call: a file whose operations never block (file 0), installed at fd 0, the
    // table shared, then fdt_fdget_rcu of fd 0 on both handles until it is lent without a
    // reference (and kept with fdt_fd_get_file), then closed on the second handle.
    let mut lend = vec![7, 0xff, 2, 10, 0, 0, 0, 3, 0];
    for i in 0..=2 * fdtable::LEND_AFTER {
        lend.extend([44, (i % 2) as u8, 0]);
    }
    lend.extend([14, 1, 0, 44, 0, 0]);
    support::sequence::run(&lend);
}

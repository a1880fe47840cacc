//! Replay throughput on the corpus: `cargo bench -p fdtable-replay --bench throughput`.
//!
//! Decompresses the 25 logs of `tests/data` into memory once, then replays all of them
//! `ROUNDS` times (env `FDTABLE_BENCH_ROUNDS`, default 5), both passes included, and prints
//! lines per second and per minute overall and for the slowest log. The target of issue 4 is
//! 1,000,000 lines per minute.

use fdtable_replay::meta;
use fdtable_replay::parse::Source;
use fdtable_replay::replay::{Options, replay};
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut logs = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/data")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".strace.gz"))
        .collect();
    names.sort();
    for p in names {
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&p).expect("log"))
            .read_to_end(&mut text)
            .expect("gzip");
        let m = meta::load(&p).expect("meta");
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        logs.push((Source::bytes(name, text), m));
    }
    let rounds: u32 = std::env::var("FDTABLE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let mut total_lines = 0u64;
    let mut slowest = (String::new(), f64::INFINITY);
    let t0 = Instant::now();
    for _ in 0..rounds {
        for (src, m) in &logs {
            let t = Instant::now();
            let r = replay(src, m.as_ref(), &Options::default(), &mut |_, _| {}).expect("replay");
            let dt = t.elapsed().as_secs_f64();
            assert_eq!(r.stats.total().mismatched, 0, "{}", r.log);
            total_lines += r.stats.lines;
            let rate = r.stats.lines as f64 / dt;
            if rate < slowest.1 {
                slowest = (r.log.clone(), rate);
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let rate = total_lines as f64 / secs;
    println!(
        "replayed {} logs x {rounds} rounds: {total_lines} lines in {secs:.2} s",
        logs.len()
    );
    println!(
        "throughput: {:.0} lines/s = {:.1} M lines/min (target 1 M lines/min)",
        rate,
        rate * 60.0 / 1e6
    );
    println!(
        "slowest log: {} at {:.0} lines/s = {:.1} M lines/min",
        slowest.0,
        slowest.1,
        slowest.1 * 60.0 / 1e6
    );
}

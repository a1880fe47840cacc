//! Writes a large log for the memory and throughput measurement of BENCHMARKS.md:
//! `cargo run --release -p fdtable-replay --example big_log -- OUT.strace [MB]`.
//!
//! A root task forks one process per copy of the 8-thread churn probe (tids shifted so every
//! copy has its own tasks) until the log reaches MB megabytes (default 100), and writes the
//! meta file beside it.

use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(args.next().unwrap_or_else(|| "big.strace".into()));
    let mb: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(
        data.join("probe-thread-churn.strace.gz"),
    )?)
    .read_to_string(&mut text)?;
    let lines: Vec<(u32, &str)> = text
        .lines()
        .filter_map(|l| {
            let (t, rest) = l.split_once(' ')?;
            Some((t.parse().ok()?, rest))
        })
        .collect();
    let mut tids: Vec<u32> = lines.iter().map(|(t, _)| *t).collect();
    tids.sort_unstable();
    tids.dedup();
    let base = tids[0];
    let mut w = BufWriter::new(std::fs::File::create(&out)?);
    writeln!(w, "1 execve(\"/bin/sh\", [\"sh\"], 0x1 /* 1 var */) = 0")?;
    let mut size = 0u64;
    let mut copy = 0u32;
    while size < mb << 20 {
        let shift = 100_000 + copy * 100 - base;
        let map = |t: u32| if tids.contains(&t) { t + shift } else { t };
        writeln!(
            w,
            "1 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, \
             child_tidptr=0x7f) = {}",
            map(base)
        )?;
        for (t, rest) in &lines {
            // Thread ids appear in clone3 results: `=> {parent_tid=[N]}, 88) = N`.
            let rest = if rest.contains("clone3") || rest.starts_with("<... clone3") {
                let mut r = rest.to_string();
                for &old in &tids {
                    r = r.replace(&format!("[{old}]"), &format!("[{}]", map(old)));
                    if let Some(stripped) = r.strip_suffix(&format!("= {old}")) {
                        r = format!("{stripped}= {}", map(old));
                    }
                }
                r
            } else {
                rest.to_string()
            };
            let line = format!("{} {rest}\n", map(*t));
            size += line.len() as u64;
            w.write_all(line.as_bytes())?;
        }
        writeln!(w, "1 wait4(-1, NULL, 0, NULL) = {}", map(base))?;
        copy += 1;
    }
    writeln!(w, "1 exit_group(0) = ?\n1 +++ exited with 0 +++")?;
    w.flush()?;
    let meta = out.with_file_name(format!(
        "{}.meta.json",
        out.file_stem().unwrap_or_default().to_string_lossy()
    ));
    std::fs::write(
        &meta,
        "{\"initial_fds\": [0, 1, 2], \"rlimit_nofile\": [20000, 20000]}\n",
    )?;
    eprintln!(
        "{}: {copy} copies, {} MB; meta {}",
        out.display(),
        size >> 20,
        meta.display()
    );
    Ok(())
}

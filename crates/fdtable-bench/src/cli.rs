//! Command-line entry point used by the `fdtable` binary.

use crate::framework::Opts;
use crate::impls::gvisor::Gvisor;
use crate::output::{self, Row};
use crate::progress::Progress;
use crate::suite::{self, Env, Measured};
use std::time::Instant;

/// Arguments of `fdtable bench`.
#[derive(clap::Args, Debug, Default)]
pub struct BenchArgs {
    /// Print one JSON array of rows instead of tables.
    #[arg(long)]
    pub json: bool,
    /// The whole suite in under a minute (fewer, shorter samples; nothing left out).
    #[arg(long)]
    pub quick: bool,
    /// Write SVG charts into this directory.
    #[arg(long, value_name = "DIR")]
    pub charts: Option<std::path::PathBuf>,
    /// Run only these workloads (comma-separated or repeated).
    #[arg(long = "workload", value_name = "NAME", value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// Run only these implementations (comma-separated or repeated).
    #[arg(long = "impl", value_name = "NAME", value_delimiter = ',')]
    pub impls: Vec<String>,
    /// Also write the JSON array of rows to this file (the tables still go to stdout).
    #[arg(long, value_name = "FILE")]
    pub save: Option<std::path::PathBuf>,
    /// Do not run anything: print the tables, the targets (and --charts) of a run saved with
    /// --save.
    #[arg(long, value_name = "FILE")]
    pub from: Option<std::path::PathBuf>,
    /// Samples per measurement and round (default 4, 3 with --quick).
    #[arg(long)]
    pub samples: Option<usize>,
    /// Rounds: every case of a workload runs once per round and the samples are pooled
    /// (default 3, 2 with --quick).
    #[arg(long)]
    pub rounds: Option<usize>,
    /// Print the workloads and implementations and exit.
    #[arg(long)]
    pub list: bool,
    /// Instruction-count mode (for callgrind; see ci/instructions): run this hot path.
    #[arg(long, hide = true, value_name = "PATH")]
    pub instructions: Option<String>,
    /// Iterations for --instructions.
    #[arg(long, hide = true, default_value_t = 1_000_000)]
    pub iters: u64,
}

/// Runs `fdtable bench`; returns the process exit code.
pub fn bench(args: BenchArgs) -> i32 {
    if let Some(path) = &args.instructions {
        return match crate::instructions::run_path(path, args.iters) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("fdtable bench: {e}");
                2
            }
        };
    }
    let workloads = suite::all();
    if args.list {
        // Written whole, then once: a reader that stops early (`| head`) ends the listing
        // without a panic (println! panics on a closed pipe).
        let mut text = String::new();
        for w in &workloads {
            text += &format!("{:<14} {}\n", w.name, w.about);
        }
        text += &format!("\nimplementations: {}\n", suite::impls().join(", "));
        text += "\ninstruction paths (--instructions PATH --iters N, see ci/instructions):\n";
        for (p, what) in crate::instructions::PATHS {
            text += &format!("  {p:<20} {what}\n");
        }
        let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
        return 0;
    }
    for w in &args.workloads {
        if !workloads.iter().any(|x| x.name == w) {
            eprintln!("fdtable bench: unknown workload {w:?} (see --list)");
            return 2;
        }
    }
    for i in &args.impls {
        if !suite::impls().contains(&i.as_str()) {
            eprintln!("fdtable bench: unknown implementation {i:?} (see --list)");
            return 2;
        }
    }
    let mut opts = if args.quick { Opts::QUICK } else { Opts::FULL };
    if let Some(s) = args.samples {
        opts.samples = s.max(1);
    }
    if let Some(r) = args.rounds {
        opts.rounds = r.max(1);
    }
    let t0 = Instant::now();
    let rows = match &args.from {
        Some(path) => match load(path) {
            Ok(rows) => {
                for w in &workloads {
                    if rows.iter().any(|r| r.workload == w.name) && !args.json {
                        print!("{}", output::table(w.name, w.about, &rows));
                    }
                }
                rows
            }
            Err(e) => {
                eprintln!("fdtable bench: --from {}: {e}", path.display());
                return 1;
            }
        },
        None => run(&args, opts, false),
    };
    if args.json {
        match serde_json::to_string_pretty(&rows) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("fdtable bench: {e}");
                return 1;
            }
        }
    }
    if let Some(path) = &args.save {
        let written = serde_json::to_string_pretty(&rows)
            .map_err(|e| e.to_string())
            .and_then(|s| std::fs::write(path, s + "\n").map_err(|e| e.to_string()));
        if let Err(e) = written {
            eprintln!("fdtable bench: --save {}: {e}", path.display());
            return 1;
        }
    }
    let targets = crate::targets::table(&crate::targets::evaluate(&rows));
    if args.json {
        eprint!("{targets}");
    } else {
        print!("{targets}");
    }
    if let Some(dir) = &args.charts {
        let names: Vec<&str> = workloads.iter().map(|w| w.name).collect();
        match crate::charts::write_all(dir, &rows, &names) {
            Ok(files) => eprintln!("wrote {} charts to {}", files.len(), dir.display()),
            Err(e) => {
                eprintln!("fdtable bench: charts: {e}");
                return 1;
            }
        }
    }
    eprintln!(
        "fdtable bench: {} rows in {:.1} s ({})",
        rows.len(),
        t0.elapsed().as_secs_f64(),
        if args.from.is_some() {
            "loaded"
        } else if args.quick {
            "--quick"
        } else {
            "full run"
        }
    );
    0
}

/// Reads rows saved with `--save`.
fn load(path: &std::path::Path) -> Result<Vec<Row>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// Runs the selected workloads and implementations; prints a table per workload unless
/// `args.json`; returns every row.
pub fn run(args: &BenchArgs, opts: Opts, quiet: bool) -> Vec<Row> {
    let selected: Vec<_> = suite::all()
        .into_iter()
        .filter(|w| args.workloads.is_empty() || args.workloads.iter().any(|x| x == w.name))
        .collect();
    let wanted = |imp: &str| args.impls.is_empty() || args.impls.iter().any(|x| x == imp);
    let plans: Vec<_> = selected
        .iter()
        .map(|w| {
            let cases: Vec<_> = (w.cases)()
                .into_iter()
                .filter(|c| c.members.iter().any(|m| wanted(m)))
                .collect();
            (w, cases)
        })
        .collect();
    let total = plans.iter().map(|(_, c)| c.len()).sum::<usize>() * opts.rounds;
    let mut progress = Progress::new(total, quiet);
    let mut env = Env {
        opts,
        gvisor: Gvisor::default(),
    };
    let mut all = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for (w, cases) in plans {
        let mut pooled: Vec<Measured> = Vec::new();
        for round in 0..opts.rounds {
            for case in &cases {
                let label = if opts.rounds > 1 {
                    format!("{} (round {}/{})", case.label, round + 1, opts.rounds)
                } else {
                    case.label.clone()
                };
                progress.start(&label);
                match case.run(&mut env) {
                    Ok(ms) => {
                        let summary = ms
                            .iter()
                            .map(|m| output::fmt_ns_unit(m.m.median()))
                            .collect::<Vec<_>>()
                            .join(", ");
                        progress.finish(&label, &summary);
                        for m in ms.into_iter().filter(|m| wanted(&m.impl_name)) {
                            match pooled.iter_mut().find(|p| p.same(&m)) {
                                Some(p) => p.merge(m),
                                None => pooled.push(m),
                            }
                        }
                    }
                    Err(e) => {
                        progress.finish(&label, "failed");
                        progress.warn(&format!("{label}: {e}"));
                        if !failed.contains(&case.label) {
                            failed.push(case.label.clone());
                        }
                    }
                }
            }
        }
        let mut rows: Vec<Row> = pooled.iter().map(Measured::row).collect();
        (w.finish)(&mut rows);
        output::fill_ratios(&mut rows);
        if !args.json && !quiet {
            progress.print(&output::table(w.name, w.about, &rows));
        }
        all.extend(rows);
    }
    if !failed.is_empty() {
        progress.warn(&format!(
            "{} case(s) failed and are missing from the results: {}",
            failed.len(),
            failed.join("; ")
        ));
    }
    progress.close();
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::IMPLS;

    /// Rounds pool their samples into one row per case and implementation.
    #[test]
    fn rounds_pool_samples() {
        let args = BenchArgs {
            workloads: vec!["lookup-light".into()],
            impls: vec!["fdtable".into(), "floor".into()],
            ..Default::default()
        };
        let opts = Opts {
            rounds: 2,
            ..Opts::TEST
        };
        let rows = run(&args, opts, true);
        assert_eq!(rows.len(), 2, "{rows:?}");
        for r in &rows {
            assert_eq!(r.samples.len(), 2 * Opts::TEST.samples);
        }
    }

    /// Every workload × implementation runs a few iterations and gives well-formed rows.
    #[test]
    fn every_case_produces_rows() {
        let args = BenchArgs {
            impls: IMPLS
                .iter()
                .filter(|i| **i != "gvisor")
                .map(|s| s.to_string())
                .collect(),
            ..Default::default()
        };
        let rows = run(&args, Opts::TEST, true);
        for w in suite::all() {
            let n = rows.iter().filter(|r| r.workload == w.name).count();
            assert!(n > 0, "{} produced no rows", w.name);
        }
        for imp in IMPLS.iter().filter(|i| **i != "gvisor") {
            assert!(
                rows.iter().any(|r| r.impl_name == *imp),
                "{imp} produced no rows"
            );
        }
        // Which implementations each workload runs (gvisor, which needs Go, aside). `floor`
        // is missing where no lookup-free equivalent exists (allocation, open, messages);
        // mutex/rwlock where the runtimes they stand for would not do the same operation
        // (openneg: they walk the path before touching the table, so a full table reports
        // ENOENT instead of Linux's EMFILE; open1: they have no path walk of their own).
        let expected: &[(&str, &[&str])] = &[
            (
                "lookup-light",
                &["fdtable", "before", "mutex", "rwlock", "kernel", "floor"],
            ),
            (
                "lookup-shared",
                &[
                    "fdtable",
                    "fdtable-rcu",
                    "before",
                    "mutex",
                    "rwlock",
                    "kernel",
                    "floor",
                ],
            ),
            (
                "dd",
                &["fdtable", "before", "mutex", "rwlock", "kernel", "floor"],
            ),
            ("openneg", &["fdtable", "before", "kernel"]),
            ("open1", &["fdtable", "before", "kernel"]),
            ("dup1", &["fdtable", "before", "mutex", "rwlock", "kernel"]),
            (
                "find-next-fd",
                &["fdtable", "before", "mutex", "rwlock", "kernel"],
            ),
            (
                "ioctl",
                &["fdtable", "before", "mutex", "rwlock", "kernel", "floor"],
            ),
            ("chat", &["fdtable", "before", "mutex", "rwlock", "kernel"]),
        ];
        assert_eq!(expected.len(), suite::all().len());
        for (w, imps) in expected {
            let mut got: Vec<&str> = rows
                .iter()
                .filter(|r| r.workload == *w)
                .map(|r| r.impl_name.as_str())
                .collect();
            got.sort_unstable();
            got.dedup();
            let mut want = imps.to_vec();
            want.sort_unstable();
            assert_eq!(got, want, "{w}");
        }
        for r in &rows {
            assert!(r.ns_per_op > 0.0 && r.ops_per_sec > 0.0, "{r:?}");
            assert_eq!(
                r.samples.len(),
                Opts::TEST.samples * Opts::TEST.rounds,
                "{r:?}"
            );
            assert!(IMPLS.contains(&r.impl_name.as_str()), "{r:?}");
            if r.impl_name == "fdtable" {
                assert_eq!(r.ratio_to_fdtable, Some(1.0));
            }
        }
    }
}

//! Rows, the per-workload tables and the JSON array.

use crate::framework::Measurement;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// What a measurement measured, apart from the implementation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    /// Workload name.
    pub workload: &'static str,
    /// Every thread that runs the loop.
    pub threads: usize,
    /// Open fds (find-next-fd), distinct fds used (lookups, dup1), or 0.
    pub fds: usize,
    /// A sub-case (`fragmented`, `shared`, `generic`, …), if the workload has several.
    pub variant: Option<&'static str>,
}

impl Key {
    /// A key without a variant.
    pub fn new(workload: &'static str, threads: usize, fds: usize) -> Self {
        Key {
            workload,
            threads,
            fds,
            variant: None,
        }
    }
    /// The same key with a variant.
    pub fn variant(mut self, v: &'static str) -> Self {
        self.variant = Some(v);
        self
    }
    /// For progress lines.
    pub fn label(&self) -> String {
        let mut s = format!(
            "{} threads={} fds={}",
            self.workload, self.threads, self.fds
        );
        if let Some(v) = self.variant {
            let _ = write!(s, " {v}");
        }
        s
    }
}

/// One result row; `--json` prints an array of these.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// Workload name (`lookup-light`, `dd`, ...).
    pub workload: String,
    /// Implementation name (`fdtable`, `kernel`, `before`, ...).
    #[serde(rename = "impl")]
    pub impl_name: String,
    /// Every thread that runs the loop.
    pub threads: usize,
    /// Open fds (find-next-fd), distinct fds used (lookups, dup1), or 0.
    pub fds: usize,
    /// A sub-case of the workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Median nanoseconds per operation per thread.
    pub ns_per_op: f64,
    /// Total operations per second over all threads.
    pub ops_per_sec: f64,
    /// Fastest sample, ns/op.
    pub min_ns: f64,
    /// Slowest sample, ns/op.
    pub max_ns: f64,
    /// `ns_per_op` over fdtable's on the same workload, threads, fds and variant (> 1: slower
    /// than fdtable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_to_fdtable: Option<f64>,
    /// Median CPU ns per operation (each thread's CPU time, averaged over the threads): what
    /// an operation costs while it runs, whether or not the machine let the threads run at
    /// once. Absent for forked-child and gVisor measurements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns_per_op: Option<f64>,
    /// Iterations per sample and thread (0 when measured by another harness).
    pub iters: u64,
    /// ns/op of every sample.
    pub samples: Vec<f64>,
    /// Per sample: the threads' CPU time over the wall time (how many had a CPU on average);
    /// empty when not measured (forked children, gVisor).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parallelism: Vec<f64>,
    /// A note on the row (what the operation is, a derived figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Measured interleaved with the case's other interleaved rows: their samples pair up by
    /// index, each pair from the same few milliseconds (`framework::measure_interleaved`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interleaved: bool,
}

impl Row {
    /// A row from a measurement.
    pub fn new(key: &Key, impl_name: &str, m: &Measurement) -> Self {
        let ns = m.median();
        Row {
            workload: key.workload.to_string(),
            impl_name: impl_name.to_string(),
            threads: key.threads,
            fds: key.fds,
            variant: key.variant.map(str::to_string),
            ns_per_op: round2(ns),
            ops_per_sec: if ns > 0.0 {
                (key.threads as f64 * 1e9 / ns).round()
            } else {
                0.0
            },
            min_ns: round2(m.min()),
            max_ns: round2(m.max()),
            ratio_to_fdtable: None,
            cpu_ns_per_op: m.cpu_median().map(round2),
            iters: m.iters,
            samples: m.samples.iter().map(|&s| round2(s)).collect(),
            parallelism: m.par.iter().map(|&p| round2(p)).collect(),
            note: None,
            interleaved: false,
        }
    }

    /// Median parallelism (see [`Row::parallelism`]), if measured.
    pub fn cpus(&self) -> Option<f64> {
        (!self.parallelism.is_empty()).then(|| crate::framework::median(&self.parallelism))
    }

    /// The median ns/op over the samples in which every thread had a CPU (parallelism at
    /// least 90 % of the thread count), with how many samples that was; all samples when
    /// parallelism was not measured. `None` if fewer than 3 samples qualify.
    pub fn on_cpu(&self) -> Option<(f64, usize)> {
        if self.parallelism.len() != self.samples.len() {
            return Some((self.ns_per_op, self.samples.len()));
        }
        let want = 0.9 * self.threads as f64;
        let kept: Vec<f64> = self
            .samples
            .iter()
            .zip(&self.parallelism)
            .filter(|(_, p)| **p >= want)
            .map(|(s, _)| *s)
            .collect();
        (kept.len() >= 3).then(|| (crate::framework::median(&kept), kept.len()))
    }

    /// Whether two rows measure the same case.
    pub fn same_case(&self, other: &Row) -> bool {
        self.workload == other.workload
            && self.threads == other.threads
            && self.fds == other.fds
            && self.variant == other.variant
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Fills `ratio_to_fdtable` on every row that has an fdtable row for the same case.
pub fn fill_ratios(rows: &mut [Row]) {
    let base: Vec<Row> = rows
        .iter()
        .filter(|r| r.impl_name == "fdtable")
        .cloned()
        .collect();
    for r in rows.iter_mut() {
        r.ratio_to_fdtable = base
            .iter()
            .find(|b| b.same_case(r) && b.ns_per_op > 0.0)
            .map(|b| (r.ns_per_op / b.ns_per_op * 100.0).round() / 100.0);
    }
}

/// Human-readable ns.
pub fn fmt_ns(ns: f64) -> String {
    if ns >= 100_000.0 {
        format!("{:.0} µs", ns / 1000.0)
    } else if ns >= 10_000.0 {
        format!("{:.1} µs", ns / 1000.0)
    } else if ns >= 100.0 {
        format!("{ns:.0}")
    } else {
        format!("{ns:.1}")
    }
}

/// Human-readable ns with its unit.
pub fn fmt_ns_unit(ns: f64) -> String {
    let s = fmt_ns(ns);
    if s.ends_with('s') {
        s
    } else {
        format!("{s} ns")
    }
}

/// Human-readable ops/s.
pub fn fmt_rate(r: f64) -> String {
    if r >= 1e9 {
        format!("{:.2} G", r / 1e9)
    } else if r >= 1e6 {
        format!("{:.2} M", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1} k", r / 1e3)
    } else {
        format!("{r:.0}")
    }
}

/// The table of one workload's rows, grouped by case, fdtable first in each.
pub fn table(workload: &str, about: &str, rows: &[Row]) -> String {
    let mut rows: Vec<&Row> = rows.iter().filter(|r| r.workload == workload).collect();
    let mut out = String::new();
    let _ = writeln!(out, "\n## {workload} — {about}\n");
    if rows.is_empty() {
        let _ = writeln!(out, "(no rows)");
        return out;
    }
    // Stable order: by case in first-seen order, fdtable first inside a case.
    let mut cases: Vec<&Row> = Vec::new();
    for r in &rows {
        if !cases.iter().any(|c| c.same_case(r)) {
            cases.push(r);
        }
    }
    rows.sort_by_key(|r| {
        let case = cases.iter().position(|c| c.same_case(r)).unwrap_or(0);
        (case, r.impl_name != "fdtable")
    });
    const RIGHT: [bool; 11] = [
        false, true, true, false, true, true, true, true, true, true, false,
    ];
    let header = [
        "impl",
        "threads",
        "fds",
        "variant",
        "ns/op",
        "min–max",
        "cpu ns/op",
        "on CPU",
        "ops/s",
        "× fdtable",
        "note",
    ];
    let cells: Vec<[String; 11]> = rows
        .iter()
        .map(|r| {
            [
                r.impl_name.clone(),
                r.threads.to_string(),
                r.fds.to_string(),
                r.variant.clone().unwrap_or_default(),
                fmt_ns(r.ns_per_op),
                format!("{}–{}", fmt_ns(r.min_ns), fmt_ns(r.max_ns)),
                r.cpu_ns_per_op.map(fmt_ns).unwrap_or_else(|| "-".into()),
                r.cpus()
                    .map(|p| format!("{p:.2}"))
                    .unwrap_or_else(|| "-".into()),
                fmt_rate(r.ops_per_sec),
                r.ratio_to_fdtable
                    .map(|x| format!("{x:.2}"))
                    .unwrap_or_else(|| "-".into()),
                r.note.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..11)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |c: &[String]| {
        let mut s = String::from("|");
        for (i, cell) in c.iter().enumerate() {
            let pad = " ".repeat(widths[i] - cell.chars().count());
            if RIGHT[i] {
                let _ = write!(s, " {pad}{cell} |");
            } else {
                let _ = write!(s, " {cell}{pad} |");
            }
        }
        s
    };
    let _ = writeln!(out, "{}", line(&header.map(str::to_string)));
    let sep: Vec<String> = widths
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if RIGHT[i] {
                format!(" {}: ", "-".repeat(w.saturating_sub(1).max(2)))
            } else {
                format!(" {} ", "-".repeat((*w).max(3)))
            }
        })
        .collect();
    let _ = writeln!(out, "|{}|", sep.join("|"));
    for c in &cells {
        let _ = writeln!(out, "{}", line(c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(ns: &[f64]) -> Measurement {
        Measurement {
            samples: ns.to_vec(),
            iters: 10,
            cpu: Vec::new(),
            par: Vec::new(),
        }
    }

    #[test]
    fn json_rows_have_the_issue_fields() {
        let key = Key::new("dup1", 2, 2);
        let mut rows = vec![
            Row::new(&key, "fdtable", &m(&[10.0, 12.0, 11.0])),
            Row::new(&key, "rwlock", &m(&[33.0, 30.0, 36.0])),
        ];
        fill_ratios(&mut rows);
        let v: serde_json::Value = serde_json::to_value(&rows).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a.len(), 2);
        for r in a {
            for f in [
                "workload",
                "impl",
                "threads",
                "fds",
                "ns_per_op",
                "ops_per_sec",
            ] {
                assert!(r.get(f).is_some(), "missing {f}");
            }
        }
        assert_eq!(a[0]["ns_per_op"], 11.0);
        // Two threads at 11 ns per op each.
        assert_eq!(a[0]["ops_per_sec"], (2e9f64 / 11.0).round());
        assert_eq!(a[1]["ratio_to_fdtable"], 3.0);
        assert!(a[0].get("variant").is_none());
    }

    #[test]
    fn tables_put_fdtable_first() {
        let key = Key::new("lookup-light", 1, 1);
        let rows = vec![
            Row::new(&key, "rwlock", &m(&[30.0])),
            Row::new(&key, "fdtable", &m(&[1.0])),
        ];
        let t = table("lookup-light", "x", &rows);
        let f = t.find("| fdtable").unwrap();
        let r = t.find("| rwlock").unwrap();
        assert!(f < r, "{t}");
    }
}

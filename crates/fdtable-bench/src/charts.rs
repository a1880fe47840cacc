//! SVG charts (plotters, SVG backend only: text is emitted as SVG `<text>`, so no system
//! fonts are needed).
//!
//! - `<workload>.svg`: per workload, ns/op bars per implementation, grouped by case, log scale.
//! - `find-next-fd-scaling.svg`: ns/op against open fds, one line per implementation.
//! - `lookup-shared-throughput.svg`, `chat-throughput.svg`: total ops/s against threads.

use crate::output::Row;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// One colour per implementation, stable across charts.
fn colour(impl_name: &str) -> RGBColor {
    match impl_name {
        "fdtable" => RGBColor(0x1f, 0x77, 0xb4),
        "before" => RGBColor(0xd6, 0x27, 0x28),
        "mutex" => RGBColor(0xff, 0x7f, 0x0e),
        "rwlock" => RGBColor(0x94, 0x67, 0xbd),
        "kernel" => RGBColor(0x2c, 0xa0, 0x2c),
        "gvisor" => RGBColor(0x8c, 0x56, 0x4b),
        "floor" => RGBColor(0x7f, 0x7f, 0x7f),
        _ => RGBColor(0x17, 0xbe, 0xcf),
    }
}

fn impls_of<'a>(rows: &[&'a Row]) -> Vec<&'a str> {
    let mut v: Vec<&str> = Vec::new();
    for r in rows {
        if !v.contains(&r.impl_name.as_str()) {
            v.push(&r.impl_name);
        }
    }
    v
}

fn case_label(r: &Row) -> String {
    let mut s = format!("{}t {}fd", r.threads, r.fds);
    if let Some(v) = &r.variant {
        s.push(' ');
        s.push_str(v);
    }
    s
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Writes every chart for `rows` into `dir`; returns the files written.
pub fn write_all(dir: &Path, rows: &[Row], workloads: &[&str]) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(err)?;
    let mut out = Vec::new();
    for w in workloads {
        let wr: Vec<&Row> = rows.iter().filter(|r| r.workload == *w).collect();
        if wr.is_empty() {
            continue;
        }
        let p = dir.join(format!("{w}.svg"));
        bars(&p, w, &wr)?;
        out.push(p);
        match *w {
            "find-next-fd" => {
                let p = dir.join("find-next-fd-scaling.svg");
                scaling(&p, &wr)?;
                out.push(p);
            }
            "lookup-shared" | "chat" => {
                let p = dir.join(format!("{w}-throughput.svg"));
                throughput(&p, w, &wr)?;
                out.push(p);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Grouped bars: one group per case, one bar per implementation, log-scale ns/op.
fn bars(path: &Path, workload: &str, rows: &[&Row]) -> Result<(), String> {
    let impls = impls_of(rows);
    let mut cases: Vec<&Row> = Vec::new();
    for r in rows {
        if !cases.iter().any(|c| c.same_case(r)) {
            cases.push(r);
        }
    }
    let slot = impls.len() + 1;
    let width = (160 + cases.len() * slot * 16).max(640) as u32;
    let lo = rows
        .iter()
        .map(|r| r.ns_per_op)
        .fold(f64::INFINITY, f64::min)
        .max(0.01)
        / 2.0;
    let hi = rows
        .iter()
        .map(|r| r.max_ns.max(r.ns_per_op))
        .fold(0.0, f64::max)
        * 2.0;
    let root = SVGBackend::new(path, (width, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let n = (cases.len() * slot) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{workload}: ns per operation per thread (lower is better)"),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n, (lo..hi).log_scale())
        .map_err(err)?;
    let labels: Vec<String> = cases.iter().map(|c| case_label(c)).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(cases.len() * slot * 2)
        .x_label_formatter(&|x| {
            let g = (*x / slot as f64).floor() as usize;
            let centre = g as f64 * slot as f64 + (slot - 1) as f64 / 2.0;
            if (x - centre).abs() < 0.26 {
                labels.get(g).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc("ns/op (log)")
        .y_label_formatter(&|y| crate::output::fmt_ns_unit(*y))
        .draw()
        .map_err(err)?;
    for (i, imp) in impls.iter().enumerate() {
        let c = colour(imp);
        let bars: Vec<Rectangle<(f64, f64)>> = cases
            .iter()
            .enumerate()
            .filter_map(|(g, case)| {
                let r = rows
                    .iter()
                    .find(|r| r.impl_name == *imp && r.same_case(case))?;
                let x = (g * slot + i) as f64;
                Some(Rectangle::new(
                    [(x + 0.05, lo), (x + 0.95, r.ns_per_op)],
                    c.filled(),
                ))
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(*imp)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// find-next-fd: ns/op against open fds (log x), the fragmented rows as separate points.
fn scaling(path: &Path, rows: &[&Row]) -> Result<(), String> {
    let impls = impls_of(rows);
    let lo = rows
        .iter()
        .map(|r| r.ns_per_op)
        .fold(f64::INFINITY, f64::min)
        .max(0.01)
        / 2.0;
    let hi = rows.iter().map(|r| r.ns_per_op).fold(0.0, f64::max) * 2.0;
    let root = SVGBackend::new(path, (720, 440)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "find-next-fd: dup + close against open fds (× = fragmented 1,000)",
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((2f64..200_000f64).log_scale(), (lo..hi).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("open fds (log)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc("ns/op (log)")
        .y_label_formatter(&|y| crate::output::fmt_ns_unit(*y))
        .y_label_formatter(&|y| crate::output::fmt_ns_unit(*y))
        .draw()
        .map_err(err)?;
    for imp in impls {
        let c = colour(imp);
        let mut pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.impl_name == imp && r.variant.is_none())
            .map(|r| (r.fds as f64, r.ns_per_op))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
            .map_err(err)?
            .label(imp)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], c.stroke_width(2)));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
            .map_err(err)?;
        let frag = rows
            .iter()
            .filter(|r| r.impl_name == imp && r.variant.is_some())
            .map(|r| Cross::new((r.fds as f64, r.ns_per_op), 5, c.stroke_width(2)));
        chart.draw_series(frag).map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Total throughput against threads, one line per implementation (and per fd pattern for
/// lookup-shared: solid = one fd for all threads, dashed points = one fd each).
fn throughput(path: &Path, workload: &str, rows: &[&Row]) -> Result<(), String> {
    let impls = impls_of(rows);
    let max_t = rows.iter().map(|r| r.threads).max().unwrap_or(1) as f64;
    let hi = rows.iter().map(|r| r.ops_per_sec).fold(0.0, f64::max) * 1.15;
    let lo = rows
        .iter()
        .map(|r| r.ops_per_sec)
        .fold(f64::INFINITY, f64::min)
        .max(1.0)
        / 2.0;
    let root = SVGBackend::new(path, (720, 440)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let caption = if workload == "lookup-shared" {
        "lookup-shared: total lookups/s against threads (○ one fd for all, △ one fd each)"
            .to_string()
    } else {
        format!("{workload}: total operations/s against threads (higher is better)")
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0.5f64..max_t + 0.5, (lo..hi).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc("ops/s (log)")
        .x_labels(max_t as usize + 1)
        .x_label_formatter(&|x| {
            if (x - x.round()).abs() < 1e-6 && *x >= 1.0 {
                format!("{}", x.round())
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y| crate::output::fmt_rate(*y))
        .draw()
        .map_err(err)?;
    for imp in impls {
        let c = colour(imp);
        // Series: for lookup-shared, the same-fd line (fds == 1) and the different-fds line
        // (fds == threads); for chat, one line.
        let same: Vec<(f64, f64)> =
            series(rows, imp, |r| workload != "lookup-shared" || r.fds == 1);
        let diff: Vec<(f64, f64)> = if workload == "lookup-shared" {
            series(rows, imp, |r| r.fds == r.threads)
        } else {
            Vec::new()
        };
        chart
            .draw_series(LineSeries::new(same.clone(), c.stroke_width(2)))
            .map_err(err)?
            .label(imp)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], c.stroke_width(2)));
        chart
            .draw_series(same.iter().map(|&p| Circle::new(p, 4, c.filled())))
            .map_err(err)?;
        if !diff.is_empty() {
            chart
                .draw_series(LineSeries::new(diff.clone(), c.stroke_width(1)))
                .map_err(err)?;
            chart
                .draw_series(diff.iter().map(|&p| TriangleMarker::new(p, 5, c.filled())))
                .map_err(err)?;
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

fn series(rows: &[&Row], imp: &str, keep: impl Fn(&Row) -> bool) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.impl_name == imp && r.variant.is_none() && keep(r))
        .map(|r| (r.threads as f64, r.ops_per_sec))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Measurement;
    use crate::output::Key;

    #[test]
    fn charts_are_svg_with_text() {
        let m = |ns: f64| Measurement {
            samples: vec![ns],
            iters: 1,
            cpu: Vec::new(),
            par: Vec::new(),
        };
        let mut rows = Vec::new();
        for (imp, f) in [("fdtable", 1.0), ("rwlock", 20.0)] {
            for n in [3, 64, 1000] {
                rows.push(Row::new(&Key::new("find-next-fd", 1, n), imp, &m(30.0 * f)));
            }
            rows.push(Row::new(&Key::new("lookup-shared", 1, 1), imp, &m(f)));
            rows.push(Row::new(&Key::new("lookup-shared", 2, 1), imp, &m(f)));
            rows.push(Row::new(&Key::new("lookup-shared", 2, 2), imp, &m(f)));
        }
        let dir = std::env::temp_dir().join(format!("fdtable-bench-charts-{}", std::process::id()));
        let files = write_all(&dir, &rows, &["find-next-fd", "lookup-shared"]).unwrap();
        assert_eq!(files.len(), 4);
        for f in &files {
            let s = std::fs::read_to_string(f).unwrap();
            assert!(s.starts_with("<svg"), "{}", f.display());
            assert!(s.contains("<text"), "{} has no text", f.display());
            assert!(s.contains("fdtable"), "{} has no legend", f.display());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! `gvisor`: gVisor's sentry `FDTable`, measured by the Go harness in bench/gvisor.
//!
//! The harness (`fdtable-gvisor`) is built with `go build` on first use into the directory of
//! the running executable (the cargo target directory) and rebuilt when a `.go`, `go.mod` or
//! `go.sum` file is newer than the binary. It is run once per workload with this run's
//! sample settings and prints one JSON line per measurement. If Go or the gVisor module is
//! unavailable, [`Gvisor::run`] returns an error that the suite prints as a warning, and the
//! gvisor rows are omitted.

use crate::framework::{Measurement, Opts};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

/// The workloads the harness knows.
pub const WORKLOADS: &[&str] = &[
    "lookup-light",
    "lookup-shared",
    "dup1",
    "find-next-fd",
    "open1",
];

/// One line of the harness's output.
#[derive(Debug, Deserialize)]
pub struct Line {
    /// Workload name.
    pub workload: String,
    /// Always `gvisor`.
    #[serde(rename = "impl")]
    pub impl_name: String,
    /// Threads.
    pub threads: usize,
    /// Fds (as in our rows).
    pub fds: usize,
    /// `fragmented` or absent.
    #[serde(default)]
    pub variant: Option<String>,
    /// Median ns/op per thread.
    pub ns_per_op: f64,
    /// ns/op of each sample.
    #[serde(default)]
    pub samples: Vec<f64>,
}

impl Line {
    /// The line as a measurement (its samples; the median alone if it has none).
    pub fn measurement(&self) -> Measurement {
        let samples = if self.samples.is_empty() {
            vec![self.ns_per_op]
        } else {
            self.samples.clone()
        };
        Measurement {
            samples,
            iters: 0,
            cpu: Vec::new(),
            par: Vec::new(),
        }
    }
}

/// The harness: where it is and whether it built.
#[derive(Default)]
pub struct Gvisor {
    /// The built binary, or why there is none.
    bin: Option<Result<PathBuf, String>>,
}

impl Gvisor {
    /// Runs the harness for `workload` and returns its lines.
    pub fn run(&mut self, workload: &str, opts: &Opts) -> Result<Vec<Line>, String> {
        let bin = self
            .bin
            .get_or_insert_with(build)
            .clone()
            .map_err(|e| format!("gvisor rows omitted: {e}"))?;
        let mut cmd = Command::new(&bin);
        cmd.arg("-workload").arg(workload);
        if opts.fixed_iters > 0 {
            cmd.arg("-iters").arg(opts.fixed_iters.to_string());
        } else {
            cmd.arg("-duration")
                .arg(format!("{}us", opts.duration().as_micros()))
                .arg("-warmup")
                .arg(format!("{}us", opts.warmup.as_micros()));
        }
        cmd.arg("-samples").arg(opts.samples.to_string());
        let out = cmd
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("running {}: {e}", bin.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} -workload {workload} failed ({}): {}",
                bin.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str::<Line>(l).map_err(|e| format!("bad line {l:?}: {e}")))
            .collect()
    }
}

/// The harness's source directory: `$FDTABLE_GVISOR_DIR`, else bench/gvisor of this
/// repository, else ./bench/gvisor.
pub fn source_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FDTABLE_GVISOR_DIR") {
        return d.into();
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/gvisor");
    if repo.join("go.mod").exists() {
        return repo;
    }
    PathBuf::from("bench/gvisor")
}

fn go_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/local/go/bin")])
        .map(|d| d.join("go"))
        .find(|p| p.is_file())
}

fn newest_source(dir: &Path) -> Option<SystemTime> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.ends_with(".go") || n == "go.mod" || n == "go.sum"
        })
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max()
}

/// Builds the harness if it is missing or stale; returns its path.
fn build() -> Result<PathBuf, String> {
    let src = source_dir();
    if !src.join("go.mod").exists() {
        return Err(format!("no Go harness at {}", src.display()));
    }
    let out_dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(std::env::temp_dir);
    let bin = out_dir.join("fdtable-gvisor");
    let built = std::fs::metadata(&bin).and_then(|m| m.modified()).ok();
    if let (Some(b), Some(s)) = (built, newest_source(&src))
        && b >= s
    {
        return Ok(bin);
    }
    let go = go_binary().ok_or("Go is not installed (no `go` in PATH or /usr/local/go/bin)")?;
    eprintln!(
        "building the gVisor harness: go build -o {} ({})",
        bin.display(),
        src.display()
    );
    let out = Command::new(go)
        .arg("build")
        .arg("-o")
        .arg(&bin)
        .arg(".")
        .current_dir(&src)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running go build: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "go build failed (is the gvisor.dev/gvisor module reachable?): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_harness_line() {
        let l: Line = serde_json::from_str(
            r#"{"workload":"find-next-fd","impl":"gvisor","threads":1,"fds":1000,"variant":"fragmented","ns_per_op":812.5,"ops_per_sec":1230769,"samples":[800,812.5,830]}"#,
        )
        .unwrap();
        assert_eq!(l.variant.as_deref(), Some("fragmented"));
        assert_eq!(l.measurement().samples.len(), 3);
    }
}

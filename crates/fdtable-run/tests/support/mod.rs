//! Running a program natively and under `fdtable run`, and comparing what each gave.

#![allow(dead_code)]

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The `fdtable-run` binary of this crate.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fdtable-run"))
}

/// A fresh, empty directory for one test (under the target directory).
pub fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("run-{name}"));
    fresh(&d);
    d
}

/// Empties `d` (creating it).
pub fn fresh(d: &Path) {
    let _ = std::fs::remove_dir_all(d);
    std::fs::create_dir_all(d).unwrap();
}

/// Where the test programs live.
pub fn programs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// What a run gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Out {
    /// Exit code, if it exited.
    pub code: Option<i32>,
    /// Signal, if it was killed.
    pub signal: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Out {
    /// stderr without the supervisor's own notes.
    pub fn program_stderr(&self) -> String {
        self.stderr
            .lines()
            .filter(|l| !l.starts_with("fdtable run: "))
            .map(|l| format!("{l}\n"))
            .collect()
    }

    /// The supervisor's notes.
    pub fn notes(&self) -> Vec<String> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("fdtable run: "))
            .map(str::to_string)
            .collect()
    }
}

fn exec(mut c: Command) -> Out {
    // Both runs start from the standard descriptors only, whatever the test runner inherited.
    close_fds::set_fds_cloexec(3, &[]);
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let o = c.output().expect("spawn");
    Out {
        code: o.status.code(),
        signal: o.status.signal(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs `cmd` natively in `dir`.
pub fn native(cmd: &[&str], dir: &Path, env: &[(&str, &str)]) -> Out {
    let mut c = Command::new(cmd[0]);
    c.args(&cmd[1..]).current_dir(dir).envs(env.iter().copied());
    exec(c)
}

/// Runs `cmd` under `fdtable run` with the supervisor's options `opts`, in `dir`.
pub fn under(opts: &[&str], cmd: &[&str], dir: &Path, env: &[(&str, &str)]) -> Out {
    let mut c = Command::new(bin());
    c.args(opts)
        .arg("--")
        .args(cmd)
        .current_dir(dir)
        .envs(env.iter().copied());
    exec(c)
}

/// Runs `cmd` natively and under `fdtable run --check-tables` (each in a fresh `dir`,
/// prepared by `setup`), and requires the same exit status, stdout and stderr (the
/// supervisor's notes aside), and no difference between any process's real table and the
/// library's. Returns the run under the supervisor.
pub fn same(name: &str, cmd: &[&str], env: &[(&str, &str)], setup: impl Fn(&Path)) -> Out {
    same_in(name, None, cmd, env, setup)
}

/// [`same`], with both runs started by `sh -c WRAP sh CMD...` when `wrap` is given: a shell
/// snippet that ends by executing `"$@"` (natively the command, otherwise `fdtable run`
/// with the command), such as `exec "$@" >&-` (the program starts with its standard output
/// closed) or `ulimit -n 64 && exec "$@"` (and the supervisor with that real limit).
pub fn same_in(
    name: &str,
    wrap: Option<&str>,
    cmd: &[&str],
    env: &[(&str, &str)],
    setup: impl Fn(&Path),
) -> Out {
    let dir = scratch(name);
    setup(&dir);
    let wrapped = |inner: Vec<String>| -> Vec<String> {
        match wrap {
            None => inner,
            Some(w) => ["sh", "-c", w, "sh"]
                .iter()
                .map(|s| s.to_string())
                .chain(inner)
                .collect(),
        }
    };
    let strs = |v: &[String]| v.iter().map(String::as_str).collect::<Vec<_>>().join(" ");
    let n_cmd = wrapped(cmd.iter().map(|s| s.to_string()).collect());
    let n = native(
        &n_cmd.iter().map(String::as_str).collect::<Vec<_>>(),
        &dir,
        env,
    );
    fresh(&dir);
    setup(&dir);
    let stats = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("run-{name}.stats"));
    let _ = std::fs::remove_file(&stats);
    let stats_s = stats.to_str().unwrap().to_string();
    let opts = ["--check-tables", "--stats", &stats_s];
    let r = match wrap {
        None => under(&opts, cmd, &dir, env),
        Some(_) => {
            let mut inner = vec![bin().to_str().unwrap().to_string()];
            inner.extend(opts.iter().map(|s| s.to_string()));
            inner.push("--".into());
            inner.extend(cmd.iter().map(|s| s.to_string()));
            let r_cmd = wrapped(inner);
            native(
                &r_cmd.iter().map(String::as_str).collect::<Vec<_>>(),
                &dir,
                env,
            )
        }
    };
    assert_eq!(
        (n.code, n.signal),
        (r.code, r.signal),
        "{name}: exit status differs ({})\nnative: {n:#?}\nunder fdtable run: {r:#?}",
        strs(&n_cmd)
    );
    assert_eq!(
        n.stdout, r.stdout,
        "{name}: stdout differs (stderr: {})",
        r.stderr
    );
    assert_eq!(n.stderr, r.program_stderr(), "{name}: stderr differs");
    let s = stats_json(&stats);
    assert_eq!(s["table_mismatches"], 0, "{name}: {s}\n{}", r.stderr);
    assert_eq!(
        s["supervisor_fds_start"], s["supervisor_fds_end"],
        "{name}: supervisor descriptors leaked: {s}"
    );
    assert!(
        s["notifications"].as_u64().unwrap() > 0,
        "{name}: nothing reached the supervisor"
    );
    r
}

/// The supervisor's counters.
pub fn stats_json(p: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

/// Whether the tests run under CI (`CI` set and not `false` or `0`, or `FDTABLE_CI=1`, which
/// `.ci/run` exports), where no test is skipped: `ci/setup` installs every tool they need.
pub fn strict() -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    ci || std::env::var("FDTABLE_CI").is_ok_and(|v| v == "1")
}

/// Whether `tool` is on PATH. If not, the test is skipped (the caller returns) with a note,
/// except under CI, where a missing tool fails the test, unless `FDTABLE_RUN_SKIP_TOOLS`
/// (comma-separated) names it: the escape hatch for a machine where it cannot be installed.
pub fn have(tool: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()));
    if !found {
        let excused = std::env::var("FDTABLE_RUN_SKIP_TOOLS")
            .is_ok_and(|v| v.split(',').any(|t| t.trim() == tool));
        assert!(
            !strict() || excused,
            "{tool} is not installed, and CI skips no test (ci/setup installs it; \
             FDTABLE_RUN_SKIP_TOOLS={tool} excuses a machine where it cannot be)"
        );
        eprintln!("SKIPPED: {tool} is not installed on this machine");
    }
    found
}

/// Compiles the C file `src` (in tests/programs) into `dir` with gcc; `None` (and a note) if
/// gcc is missing.
pub fn cc(src: &str, dir: &Path) -> Option<PathBuf> {
    if !have("gcc") {
        return None;
    }
    let out = dir.join(src.trim_end_matches(".c"));
    let st = Command::new("gcc")
        .args(["-O1", "-pthread", "-o"])
        .arg(&out)
        .arg(programs().join(src))
        .status()
        .expect("gcc");
    assert!(st.success(), "gcc {src} failed");
    Some(out)
}

/// A directory for compiled probes, kept for the whole test binary.
pub fn build_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("run-build");
    std::fs::create_dir_all(&d).unwrap();
    d
}

//! Printing a [`Report`]: a text summary for people, one JSON object per log for programs.

use crate::replay::Report;
use crate::stats::Row;
use serde_json::{Value, json};
use std::fmt::Write;

/// How many mismatches the text report lists.
pub const SHOW: usize = 10;

/// The text summary of one log.
pub fn text(r: &Report) -> String {
    let s = &r.stats;
    let total = s.total();
    let mut o = String::new();
    let verdict = if r.clean() {
        "OK".to_string()
    } else if total.mismatched > 0 {
        format!("{} MISMATCHED", total.mismatched)
    } else {
        format!("{} UNREADABLE LINES", s.errors)
    };
    let _ = writeln!(o, "{}: {verdict}", r.log);
    let _ = writeln!(
        o,
        "  {} lines, {} calls, {} processes, {} threads; {:.2} s ({:.0} lines/s)",
        s.lines,
        s.calls,
        s.processes,
        s.threads,
        r.seconds,
        s.lines as f64 / r.seconds.max(1e-9)
    );
    let fds: Vec<String> = r.init.fds.iter().map(u32::to_string).collect();
    let _ = writeln!(
        o,
        "  initial state ({}): fds {{{}}}, RLIMIT_NOFILE {}",
        r.init_from,
        fds.join(","),
        r.init.nofile
    );
    let _ = writeln!(
        o,
        "  {:<18} {:>9} {:>8} {:>8} {:>10} {:>8}",
        "syscall", "replayed", "checked", "matched", "mismatched", "skipped"
    );
    let line = |o: &mut String, name: &str, r: &Row| {
        let _ = writeln!(
            o,
            "  {:<18} {:>9} {:>8} {:>8} {:>10} {:>8}",
            name, r.replayed, r.checked, r.matched, r.mismatched, r.skipped
        );
    };
    for (name, row) in &s.by_syscall {
        if *row != Row::default() {
            line(&mut o, name, row);
        }
    }
    line(&mut o, "total", &total);
    let _ = writeln!(
        o,
        "  results: {} exact, {} consistent (held reservations), {} reordered calls; \
         {} fds predicted, {} close-on-exec bits, {} EBADF",
        s.exact, s.consistent, s.reordered, s.fds_predicted, s.cloexec_bits, s.ebadf
    );
    let _ = writeln!(
        o,
        "  descriptor arguments checked open: {}; closed at execve: {}",
        s.fd_uses, s.closed_on_exec
    );
    let unchecked: u64 = s.fd_args_unchecked.values().sum();
    if s.ebadf_args + s.failed_fd_uses + s.remote_fd_args + unchecked > 0 {
        let _ = writeln!(
            o,
            "  failed calls' descriptor arguments: {} EBADF explained ({} by O_PATH), {} found \
             by their lookup (errno after it); pidfd_getfd targets checked: {}; unchecked: {}",
            s.ebadf_args, s.ebadf_opath, s.failed_fd_uses, s.remote_fd_args, unchecked
        );
        for (why, n) in &s.fd_args_unchecked {
            let _ = writeln!(o, "    unchecked ×{n}: {why}");
        }
    }
    if s.drifting_tables > 0 || s.drift > 0 {
        let _ = writeln!(
            o,
            "  drift: {} tables with io_uring (or unprinted descriptors), {} disagreements there \
             (reported, not counted)",
            s.drifting_tables, s.drift
        );
        for d in s.first_drift.iter().take(3) {
            let _ = writeln!(
                o,
                "    line {} (tid {}) {}: log {}, library {}",
                d.line, d.tid, d.call, d.log, d.library
            );
        }
    }
    if s.undecided > 0 {
        let _ = writeln!(
            o,
            "  undecided: {} disagreements on shared tables the bounded search could not decide \
             (reported, not counted)",
            s.undecided
        );
        for d in s.first_undecided.iter().take(3) {
            let _ = writeln!(
                o,
                "    line {} (tid {}) {}: log {}, library {}",
                d.line, d.tid, d.call, d.log, d.library
            );
        }
    }
    if s.inherited > 0 {
        let _ = writeln!(o, "  inherited descriptors assumed: {}", s.inherited);
    }
    if s.injected > 0 {
        let _ = writeln!(
            o,
            "  calls injected by strace (never run, skipped): {}",
            s.injected
        );
    }
    if s.resyncs > 0 {
        let _ = writeln!(o, "  resyncs of the model to the log: {}", s.resyncs);
    }
    if !s.unsupported.is_empty() {
        let names: Vec<String> = s
            .unsupported
            .iter()
            .map(|(n, c)| format!("{n} ×{c}"))
            .collect();
        let _ = writeln!(o, "  unsupported syscalls: {}", names.join(", "));
    }
    if !s.first_mismatches.is_empty() {
        let _ = writeln!(o, "  first mismatches:");
        for m in s.first_mismatches.iter().take(SHOW) {
            let _ = writeln!(
                o,
                "    line {} (tid {}) {}: log {}, library {}",
                m.line, m.tid, m.call, m.log, m.library
            );
        }
    }
    if !s.first_errors.is_empty() {
        let _ = writeln!(o, "  unreadable lines ({}):", s.errors);
        for (l, m) in s.first_errors.iter().take(SHOW) {
            let _ = writeln!(o, "    line {l}: {m}");
        }
    }
    for n in s.notes.iter().take(SHOW) {
        let _ = writeln!(o, "  note: {n}");
    }
    o
}

/// The JSON object of a log that could not be replayed at all (unreadable, a bad meta
/// file): `ok` false and the error.
pub fn failure_json(log: &std::path::Path, error: &str) -> Value {
    json!({
        "log": log.display().to_string(),
        "ok": false,
        "error": error,
    })
}

/// The JSON object of one log.
pub fn json(r: &Report) -> Value {
    let s = &r.stats;
    let t = s.total();
    let mut v = json!({
        "log": r.log,
        "ok": r.clean(),
        "lines": s.lines,
        "calls": s.calls,
        "replayed": t.replayed,
        "checked": t.checked,
        "matched": t.matched,
        "mismatched": t.mismatched,
        "skipped": t.skipped,
        "unsupported": s.unsupported_calls(),
        "exact": s.exact,
        "consistent": s.consistent,
        "reordered": s.reordered,
        "search_nodes": s.search_nodes,
        "fds_predicted": s.fds_predicted,
        "cloexec_bits": s.cloexec_bits,
        "ebadf": s.ebadf,
        "drift": s.drift,
        "drifting_tables": s.drifting_tables,
        "resyncs": s.resyncs,
        "inherited": s.inherited,
        "fd_uses": s.fd_uses,
        "closed_on_exec": s.closed_on_exec,
        "processes": s.processes,
        "threads": s.threads,
        "errors": s.errors,
        "initial_fds": r.init.fds,
        "rlimit_nofile": r.init.nofile,
        "initial_state_from": r.init_from,
        "seconds": r.seconds,
        "by_syscall": s.by_syscall,
        "unsupported_syscalls": s.unsupported,
        "first_mismatches": s.first_mismatches,
        "first_drift": s.first_drift,
        "first_errors": s.first_errors.iter().map(|(l, m)| json!({"line": l, "error": m})).collect::<Vec<_>>(),
        "notes": s.notes,
    });
    // The failed calls' descriptor arguments (one macro call would exceed its recursion limit).
    if let Value::Object(m) = &mut v {
        m.insert("ebadf_args".into(), json!(s.ebadf_args));
        m.insert("ebadf_opath".into(), json!(s.ebadf_opath));
        m.insert("failed_fd_uses".into(), json!(s.failed_fd_uses));
        m.insert("remote_fd_args".into(), json!(s.remote_fd_args));
        m.insert("fd_args_unchecked".into(), json!(s.fd_args_unchecked));
        m.insert("injected".into(), json!(s.injected));
        m.insert("undecided".into(), json!(s.undecided));
        m.insert("first_undecided".into(), json!(s.first_undecided));
    }
    v
}

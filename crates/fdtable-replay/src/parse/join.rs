//! Joins `<unfinished ...>` / `<... resumed>` halves into whole calls and resolves which task
//! every line belongs to (P1, P2, P7).
//!
//! The joiner is the only stateful part of parsing, and its state is small: at most one
//! pending call per task, the set of live tasks (needed only for lines without a prefix), and
//! a carried line fragment in stderr mode. It turns physical lines into [`Event`]s in line
//! order; a call becomes an [`Event::Call`] at its result line, carrying its entry line.
//!
//! - **Split calls**: `name(partial <unfinished ...>` is kept per tid; `<... name resumed>rest`
//!   is glued to it (`partial` + `rest`, with a leading ` <unfinished ...>` of a task killed
//!   inside its call removed) and the whole is parsed again.
//! - **Non-leader execve** (P7): `+++ superseded by execve in pid N +++` on the leader's line
//!   moves N's pending `execve` to the leader, whose tid then prints its result.
//! - **stderr mode**: strace's `Process N attached` notice can land inside a syscall line; the
//!   part before it is carried and glued to the next physical line (to at most
//!   [`MAX_GLUES`] of them, then it is a truncated line). Lines without a prefix
//!   belong to the only live task; the first task's id is learnt when a prefixed line names a
//!   task that is neither a known child nor an attached one ([`Event::Rename`]).

use super::line::{Body, LineError, UNFINISHED, parse_line, split_tail};
use super::ret::{Ret, parse_ret};
use super::scan;
use super::source::MAX_LINE_BYTES;
use std::collections::{HashMap, HashSet};

/// The tid given to the first task until its real id is known (no `-f`, or stderr mode).
pub const PLACEHOLDER_TID: u32 = 0;

/// A whole syscall, joined if it was split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// A unique id (shared with the [`Event::Enter`] of a split call).
    pub id: u64,
    /// The task that printed the result.
    pub tid: u32,
    /// The task that entered the call (differs only for an execve that superseded its leader).
    pub entry_tid: u32,
    /// Line of the entry (equal to `line` for a call printed on one line).
    pub entry_line: u64,
    /// Line of the result.
    pub line: u64,
    /// Syscall name.
    pub name: String,
    /// The whole argument text.
    pub args: String,
    /// The return value.
    pub ret: Ret,
    /// strace's fault injection (`-e inject=`) replaced the call (` (INJECTED)`): the kernel
    /// never ran it, so it changed nothing.
    pub injected: bool,
}

impl Call {
    /// The arguments split at top-level commas (empty if they do not split cleanly).
    pub fn arg_list(&self) -> Vec<&str> {
        scan::split_top(&self.args).unwrap_or_default()
    }
}

/// What the joiner reports, in line order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A call's entry line (`<unfinished ...>`); its [`Event::Call`] comes later.
    Enter {
        /// Id of the call.
        id: u64,
        /// Task.
        tid: u32,
        /// Line number.
        line: u64,
        /// Syscall name.
        name: String,
        /// Argument text printed at entry.
        partial: String,
    },
    /// A whole call, at its result line.
    Call(Call),
    /// `+++ exited` / `+++ killed`: the task is gone.
    Exit {
        /// Task.
        tid: u32,
        /// Line number.
        line: u64,
    },
    /// `+++ superseded by execve in pid by +++` on the leader `tid`.
    Superseded {
        /// The leader being replaced.
        tid: u32,
        /// The thread whose execve replaces it.
        by: u32,
        /// Line number.
        line: u64,
    },
    /// A signal line (skipped by the replay, counted).
    Signal {
        /// Task.
        tid: u32,
        /// Line number.
        line: u64,
    },
    /// The task known as `from` (the placeholder) is `to`.
    Rename {
        /// The placeholder tid.
        from: u32,
        /// The real tid.
        to: u32,
    },
    /// A call that never finished: its task left (exit, kill, exec) with it pending.
    Abandoned {
        /// Id of the call.
        id: u64,
        /// Task.
        tid: u32,
    },
    /// A line that could not be read, or does not fit the log.
    Error {
        /// Line number.
        line: u64,
        /// What is wrong.
        msg: String,
    },
}

#[derive(Debug)]
struct Pending {
    id: u64,
    tid: u32,
    line: u64,
    name: String,
    partial: String,
}

/// The joiner; feed it lines with [`Joiner::push`], then call [`Joiner::finish`].
#[derive(Debug, Default)]
pub struct Joiner {
    pending: HashMap<u32, Pending>,
    next_id: u64,
    /// Tasks alive now (only needed for unprefixed lines).
    live: Vec<u32>,
    /// Tasks known to be children (clone results, `attached` notices).
    children: HashSet<u32>,
    /// Whether the placeholder stands for a task whose id is not known yet.
    placeholder_live: bool,
    /// The last task named by a prefix (for unprefixed lines when several tasks live).
    last_tid: Option<u32>,
    /// stderr mode: the start of a line interrupted by a notice, with its line number, the
    /// task it belongs to (resolved before the notice's task became live) and how many
    /// physical lines were glued to it.
    carry: Option<(u64, String, u32, u32)>,
}

/// How many physical lines a carried fragment takes in before it is given up as a
/// truncated line (a real line is interrupted by one notice, rarely by two); this bounds the
/// work per byte of the log.
pub const MAX_GLUES: u32 = 4;

const CLONES: [&str; 4] = ["clone", "clone3", "fork", "vfork"];

impl Joiner {
    /// A joiner with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads physical line `no` (1-based) and appends its events to `out`.
    pub fn push(&mut self, no: u64, text: &str, out: &mut Vec<Event>) {
        let text = text.trim_end_matches(['\n', '\r']);
        // `-k`: a frame of the stack trace printed after a call.
        if text.starts_with(" > ") {
            return;
        }
        let owned;
        let (no, text, tid, glued) = match self.carry.take() {
            Some((first, mut carried, tid, glued)) => {
                carried.push_str(text);
                owned = carried;
                (first, owned.as_str(), Some(tid), glued + 1)
            }
            None => (no, text, None, 0),
        };
        // A notice inside a line (stderr mode): keep the part before it for the next line.
        if let Some(pos) = text.find("strace: Process ")
            && pos > 0
            && (text.ends_with(" attached") || text.ends_with(" detached"))
        {
            let (before, notice) = text.split_at(pos);
            let complete = parse_line(before).is_ok();
            if complete {
                self.line(no, before, tid, out);
            } else if glued >= MAX_GLUES {
                out.push(Event::Error {
                    line: no,
                    msg: format!("truncated line `{}`", shorten(before)),
                });
            } else {
                // The task of the fragment, resolved before the new task counts as live.
                let t = match tid {
                    Some(t) => t,
                    None => {
                        let prefix = parse_prefix_tid(before);
                        self.resolve(prefix, out)
                    }
                };
                self.carry = Some((no, before.to_string(), t, glued));
            }
            if let Ok(line) = parse_line(notice)
                && let Body::Notice(Some(pid)) = line.body
            {
                self.note_child(pid);
            }
            return;
        }
        self.line(no, text, tid, out);
    }

    /// Physical line `no` was longer than [`MAX_LINE_BYTES`] and skipped: an error, and the
    /// end of a fragment carried into it.
    pub fn push_too_long(&mut self, no: u64, out: &mut Vec<Event>) {
        self.finish_carry(out);
        out.push(Event::Error {
            line: no,
            msg: format!("longer than {MAX_LINE_BYTES} bytes (skipped)"),
        });
    }

    /// Reports a carried fragment as a truncated line.
    fn finish_carry(&mut self, out: &mut Vec<Event>) {
        if let Some((no, text, _, _)) = self.carry.take() {
            out.push(Event::Error {
                line: no,
                msg: format!("truncated line `{}`", shorten(&text)),
            });
        }
    }

    fn line(&mut self, no: u64, text: &str, known: Option<u32>, out: &mut Vec<Event>) {
        if text.trim().is_empty() {
            return;
        }
        let line = match parse_line(text) {
            Ok(l) => l,
            Err(LineError(msg)) => {
                out.push(Event::Error { line: no, msg });
                return;
            }
        };
        if let Body::Notice(pid) = line.body {
            if let Some(pid) = pid {
                self.note_child(pid);
            }
            return;
        }
        let tid = match known {
            Some(t) => t,
            None => self.resolve(line.tid, out),
        };
        match line.body {
            Body::Complete { name, args, ret } => match parse_ret(ret) {
                Ok(r) => {
                    let id = self.id();
                    let whole = (args.to_string(), r, injected(ret));
                    self.finish_call(tid, tid, no, no, id, name, whole, out);
                }
                Err(LineError(msg)) => out.push(Event::Error { line: no, msg }),
            },
            Body::Unfinished { name, partial } => {
                if let Some(old) = self.pending.remove(&tid) {
                    out.push(Event::Error {
                        line: no,
                        msg: format!(
                            "task {tid} starts `{name}` while `{}` from line {} is unfinished",
                            old.name, old.line
                        ),
                    });
                    out.push(Event::Abandoned {
                        id: old.id,
                        tid: old.tid,
                    });
                }
                let id = self.id();
                out.push(Event::Enter {
                    id,
                    tid,
                    line: no,
                    name: name.to_string(),
                    partial: partial.to_string(),
                });
                self.pending.insert(
                    tid,
                    Pending {
                        id,
                        tid,
                        line: no,
                        name: name.to_string(),
                        partial: partial.to_string(),
                    },
                );
            }
            Body::Resumed { name, rest } => {
                let Some(p) = self.pending.remove(&tid) else {
                    out.push(Event::Error {
                        line: no,
                        msg: format!("`<... {name} resumed>` of task {tid} without its entry"),
                    });
                    return;
                };
                if p.name != name {
                    out.push(Event::Error {
                        line: no,
                        msg: format!(
                            "`<... {name} resumed>` of task {tid} but `{}` from line {} is pending",
                            p.name, p.line
                        ),
                    });
                    out.push(Event::Abandoned {
                        id: p.id,
                        tid: p.tid,
                    });
                    return;
                }
                let rest = rest.strip_prefix(UNFINISHED).unwrap_or(rest);
                let mut whole = p.partial;
                whole.push_str(rest);
                let tail =
                    split_tail(&whole).and_then(|(a, r)| Ok((a.len(), parse_ret(r)?, injected(r))));
                match tail {
                    Ok((args_len, ret, inj)) => {
                        whole.truncate(args_len);
                        let whole = (whole, ret, inj);
                        self.finish_call(tid, p.tid, p.line, no, p.id, name, whole, out);
                    }
                    Err(LineError(msg)) => out.push(Event::Error { line: no, msg }),
                }
            }
            Body::Signal => out.push(Event::Signal { tid, line: no }),
            Body::Exited(_) | Body::Killed => {
                if let Some(p) = self.pending.remove(&tid) {
                    out.push(Event::Abandoned {
                        id: p.id,
                        tid: p.tid,
                    });
                }
                self.live.retain(|&t| t != tid);
                if tid == PLACEHOLDER_TID {
                    self.placeholder_live = false;
                }
                out.push(Event::Exit { tid, line: no });
            }
            Body::Superseded(by) => {
                if let Some(p) = self.pending.remove(&tid) {
                    out.push(Event::Abandoned {
                        id: p.id,
                        tid: p.tid,
                    });
                }
                if let Some(p) = self.pending.remove(&by) {
                    self.pending.insert(tid, p);
                }
                self.live.retain(|&t| t != by);
                out.push(Event::Superseded { tid, by, line: no });
            }
            Body::Notice(_) => {}
        }
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_call(
        &mut self,
        tid: u32,
        entry_tid: u32,
        entry_line: u64,
        line: u64,
        id: u64,
        name: &str,
        (args, ret, injected): (String, Ret, bool),
        out: &mut Vec<Event>,
    ) {
        if CLONES.contains(&name)
            && let Ret::Val(child) = ret
            && let Ok(child) = u32::try_from(child)
            && child > 0
        {
            self.note_child(child);
        }
        out.push(Event::Call(Call {
            id,
            tid,
            entry_tid,
            entry_line,
            line,
            name: name.to_string(),
            args,
            ret,
            injected,
        }));
    }

    fn note_child(&mut self, tid: u32) {
        self.children.insert(tid);
        if !self.live.contains(&tid) {
            self.live.push(tid);
        }
    }

    /// The task a line belongs to.
    fn resolve(&mut self, tid: Option<u32>, out: &mut Vec<Event>) -> u32 {
        match tid {
            Some(t) => {
                if !self.live.contains(&t) {
                    if self.placeholder_live && !self.children.contains(&t) {
                        self.rename(PLACEHOLDER_TID, t, out);
                    } else {
                        self.live.push(t);
                    }
                }
                self.last_tid = Some(t);
                t
            }
            None => {
                if self.live.len() == 1 {
                    return self.live[0];
                }
                if self.live.is_empty() {
                    self.placeholder_live = true;
                    self.live.push(PLACEHOLDER_TID);
                    return PLACEHOLDER_TID;
                }
                if self.placeholder_live {
                    return PLACEHOLDER_TID;
                }
                self.last_tid.unwrap_or(self.live[0])
            }
        }
    }

    fn rename(&mut self, from: u32, to: u32, out: &mut Vec<Event>) {
        self.placeholder_live = false;
        for t in &mut self.live {
            if *t == from {
                *t = to;
            }
        }
        if let Some(mut p) = self.pending.remove(&from) {
            if p.tid == from {
                p.tid = to;
            }
            self.pending.insert(to, p);
        }
        out.push(Event::Rename { from, to });
    }

    /// Ends the log: every call still pending is reported as abandoned, and a carried fragment
    /// as a truncated line.
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        self.finish_carry(out);
        let mut left: Vec<Pending> = self.pending.drain().map(|(_, p)| p).collect();
        left.sort_by_key(|p| p.line);
        for p in left {
            out.push(Event::Abandoned {
                id: p.id,
                tid: p.tid,
            });
        }
    }
}

/// Whether a result text carries strace's fault-injection mark.
fn injected(ret: &str) -> bool {
    ret.trim_end().ends_with("(INJECTED)")
}

/// The task prefix of a line fragment (`[pid N] ...` or `N ...`), if any.
fn parse_prefix_tid(s: &str) -> Option<u32> {
    if let Some(r) = s.strip_prefix("[pid") {
        return r.split(']').next()?.trim().parse().ok();
    }
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && s.as_bytes().get(digits) == Some(&b' ') {
        return s[..digits].parse().ok();
    }
    None
}

/// The first 60 characters of `s`, for messages.
pub fn shorten(s: &str) -> String {
    let mut t: String = s.chars().take(60).collect();
    if t.len() < s.len() {
        t.push_str("...");
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Vec<Event> {
        let mut j = Joiner::new();
        let mut out = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            j.push(i as u64 + 1, l, &mut out);
        }
        j.finish(&mut out);
        out
    }

    fn calls(ev: &[Event]) -> Vec<&Call> {
        ev.iter()
            .filter_map(|e| match e {
                Event::Call(c) => Some(c),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn joins_split_calls() {
        let ev = run(&[
            "1 pipe2( <unfinished ...>",
            "2 close(3) = 0",
            "1 <... pipe2 resumed>[3, 4], O_CLOEXEC) = 0",
        ]);
        let c = calls(&ev);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].args, "[3, 4], O_CLOEXEC");
        assert_eq!((c[1].entry_line, c[1].line), (1, 3));
    }

    #[test]
    fn injected_results_are_marked() {
        let ev = run(&[
            "1 close(3) = -1 EBADF (Bad file descriptor) (INJECTED)",
            "1 dup2(3, 5 <unfinished ...>",
            "1 <... dup2 resumed>) = 42 (INJECTED)",
            "1 close(4) = 0",
        ]);
        let c = calls(&ev);
        let marks: Vec<bool> = c.iter().map(|c| c.injected).collect();
        assert_eq!(marks, vec![true, true, false]);
        assert_eq!(c[1].ret, Ret::Val(42));
    }

    #[test]
    fn superseded_moves_the_execve() {
        let ev = run(&[
            "5 pause( <unfinished ...>",
            "6 execve(\"/bin/true\", [\"true\"], 0x1 /* 8 vars */ <unfinished ...>",
            "5 <... pause resumed>) = ?",
            "5 +++ superseded by execve in pid 6 +++",
            "5 <... execve resumed>) = 0",
        ]);
        let c = calls(&ev);
        let exec = c.iter().find(|c| c.name == "execve").unwrap();
        assert_eq!((exec.tid, exec.entry_tid, exec.ret), (5, 6, Ret::Val(0)));
    }

    #[test]
    fn stderr_mode_glues_and_renames() {
        let ev = run(&[
            "pipe2([3, 4], 0) = 0",
            "clone(child_stack=NULL, flags=SIGCHLDstrace: Process 11 attached",
            ", child_tidptr=0x1) = 11",
            "[pid 11] close(3) = 0",
            "[pid 10] close(4) = 0",
        ]);
        let c = calls(&ev);
        assert_eq!(
            c[1].args,
            "child_stack=NULL, flags=SIGCHLD, child_tidptr=0x1"
        );
        assert_eq!(c[1].line, 2);
        assert!(ev.contains(&Event::Rename { from: 0, to: 10 }));
        assert_eq!(c[3].tid, 10);
    }

    #[test]
    fn a_fragment_is_glued_to_a_bounded_number_of_lines() {
        let lines = vec!["x( strace: Process 5 attached"; 20];
        let errs: Vec<u64> = run(&lines)
            .iter()
            .filter_map(|e| match e {
                Event::Error { line, .. } => Some(*line),
                _ => None,
            })
            .collect();
        // Each fragment takes in MAX_GLUES more lines, then is given up.
        assert_eq!(errs, vec![1, 6, 11, 16]);
    }

    #[test]
    fn errors_name_lines() {
        let ev = run(&["1 close(3) = 0", "1 <... read resumed>) = 0", "1 open("]);
        let errs: Vec<u64> = ev
            .iter()
            .filter_map(|e| match e {
                Event::Error { line, .. } => Some(*line),
                _ => None,
            })
            .collect();
        assert_eq!(errs, vec![2, 3]);
    }
}

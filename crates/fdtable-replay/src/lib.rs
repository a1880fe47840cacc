//! # fdtable-replay
//!
//! `fdtable replay` and `fdtable record`: hold the fdtable library against the real kernel by
//! replaying strace logs of real programs. Every descriptor-layer result the kernel returned
//! — fd numbers, EBADF, EMFILE, EINVAL, EBUSY, close-on-exec bits — is computed again by the
//! library and compared with the log; errors only the kernel's other layers can know (ENOENT,
//! ECONNREFUSED, ...) are taken from the log. Every call's descriptor arguments are held
//! against its result too ([`engine::args`]): a success needs them valid, an EBADF needs one
//! bad (closed, negative, or an O_PATH file where the kernel's `fdget` refuses it; for
//! pidfd_getfd, absent from the target process's table), an errno the kernel answers after
//! the lookup needs them valid.
//!
//! ```no_run
//! use fdtable_replay::{parse::Source, replay::{Options, replay}};
//! let report = replay(&Source::path("trace.strace"), None, &Options::default(), &mut |_, _| {})?;
//! assert_eq!(report.stats.total().mismatched, 0);
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! ## Design
//!
//! The pitfalls P1–P15 are those of `shared/traces/REPORT.md` §7.
//!
//! 1. **Parsing** ([`parse`]) streams the log line by line with one reused buffer. A
//!    structure-aware scanner ([`parse::scan`]) finds the end of the argument list through
//!    strings, comments, nested brackets and `-y` decorations (P1). The [`parse::Joiner`]
//!    glues `<unfinished ...>` / `<... resumed>` halves per task (P2), moves an execve that
//!    superseded its leader (P7), and resolves tasks of unprefixed lines (stderr mode, no
//!    `-f`). Its state is the calls in flight, so memory stays flat on any log. A bad line
//!    is an error naming its line number, never a panic.
//! 2. **Decoding** ([`decode`], with the name lists of [`syscalls`]) says what each call
//!    does to a descriptor table, and [`engine::plan`] turns its logged result into library
//!    steps ([`engine::step`]), injecting the errors the library cannot know in the kernel's
//!    order of checks (P9, P13).
//! 3. **The engine** ([`engine`]) rebuilds tasks, thread groups and tables from clone flags
//!    (P4–P8, P11), with children found by a pre-pass over the log (P5), and replays each
//!    call through the library (`fdtable::Files`). Tables shared by several tasks keep their
//!    recent linearization; when a result disagrees, a bounded search reorders the calls
//!    their entry/result windows allow, first atomically ("exact"), then with held
//!    reservations ("consistent") (P3; [`engine::lin`], [`engine::search`]). Disagreements
//!    ([`engine::check`]) in tables holding an io_uring are drift (P12); unexplained
//!    descriptors with an assumed initial state are inherited (P10); those the search could
//!    not decide (its node budget, the calls it can order or the look-ahead ran out) are
//!    undecided, and so are the table's next ones until its calls in flight have returned;
//!    the rest are mismatches. Every disagreement resynchronises the model to the log. Descriptor
//!    arguments ([`engine::args`]) are checked against successes (P15) and failures; what the
//!    log cannot decide (EBADF a file's access mode may explain, errnos that may precede the
//!    lookup, descriptors the replay never saw opened, a shared or target table changing
//!    during the call) is counted as unchecked, by reason, never as a mismatch.
//!
//! The pre-pass and the bounded look-ahead that gives the search the results of calls
//! still in flight are in [`replay`]. Memory stays flat: a 100 MB log replays in a few MB
//! (see `BENCHMARKS.md`).
//!
//! Not checked: object identity. With `-y`, decorations name each descriptor's object; the
//! replay reads past them but does not compare them with what the model's descriptors refer
//! to (paths change with renames, socket decorations with connects).
//! 4. **Reporting** ([`stats`], [`report`]): per-syscall counters, the first mismatches with
//!    line numbers and both values, as text or one JSON object per log.
//! 5. **Recording** ([`record`]): strace as REPORT.md recommends, from a clean descriptor
//!    set, with the meta file ([`meta`]) the replay reads.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cli;
pub mod decode;
pub mod engine;
pub mod meta;
pub mod parse;
pub mod record;
pub mod replay;
pub mod report;
pub mod stats;
pub mod syscalls;

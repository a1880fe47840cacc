//! Fuzzing the parser and the engine with proptest, in the normal test suite: random bytes,
//! real corpus lines mutated (truncated, bytes inserted, deleted or swapped), and random but
//! well-formed logs of table calls across tasks. Nothing may panic; every unreadable line is
//! reported with a line number inside the log.

use fdtable_replay::parse::line::parse_line;
use fdtable_replay::parse::ret::parse_ret;
use fdtable_replay::parse::scan;
use fdtable_replay::parse::{Event, Joiner, Source};
use fdtable_replay::replay::{Options, replay};
use proptest::prelude::*;
use std::io::Read;
use std::sync::OnceLock;

/// Lines of two real logs (stderr mode with glued lines, and the process probe).
fn corpus_lines() -> &'static [String] {
    static LINES: OnceLock<Vec<String>> = OnceLock::new();
    LINES.get_or_init(|| {
        let mut out = Vec::new();
        for name in ["sh-stderr-format", "probe-process", "probe-fdcalls"] {
            let path = format!("{}/tests/data/{name}.strace.gz", env!("CARGO_MANIFEST_DIR"));
            let f = std::fs::File::open(path).expect("corpus data");
            let mut text = String::new();
            flate2::read::GzDecoder::new(f)
                .read_to_string(&mut text)
                .expect("gzip");
            out.extend(text.lines().map(str::to_string));
        }
        out
    })
}

fn replay_text(text: &str) -> fdtable_replay::stats::Stats {
    let r = replay(
        &Source::bytes("fuzz", text.as_bytes().to_vec()),
        None,
        &Options::default(),
        &mut |_, _| {},
    )
    .expect("in-memory");
    r.stats
}

#[derive(Clone, Debug)]
enum Mutation {
    Truncate(usize),
    Insert(usize, char),
    Delete(usize),
    Swap(usize, usize),
}

fn mutate(line: &str, m: &Mutation) -> String {
    let mut c: Vec<char> = line.chars().collect();
    let n = c.len().max(1);
    match *m {
        Mutation::Truncate(i) => c.truncate(i % n),
        Mutation::Insert(i, ch) => c.insert(i % (c.len() + 1), ch),
        Mutation::Delete(i) => {
            if !c.is_empty() {
                c.remove(i % c.len());
            }
        }
        Mutation::Swap(i, j) => {
            if !c.is_empty() {
                let (a, b) = (i % c.len(), j % c.len());
                c.swap(a, b);
            }
        }
    }
    c.into_iter().collect()
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let special = prop::sample::select(vec![
        '(', ')', '[', ']', '{', '}', '<', '>', '"', '\\', ',', '=', ' ', '?', '-', '0', '9', '/',
        '*', '\n', 'x', '\u{e9}',
    ]);
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), special).prop_map(|(i, c)| Mutation::Insert(i, c)),
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Mutation::Swap(i, j)),
    ]
}

/// A random table call of task `tid` (a small grammar of what the replay models).
fn call_line() -> impl Strategy<Value = String> {
    let fd = 0u32..12;
    let tid = 1u32..5;
    prop_oneof![
        (tid.clone(), fd.clone()).prop_map(|(t, f)| format!("{t} openat(AT_FDCWD, \"/x\", O_RDONLY) = {f}")),
        tid.clone().prop_map(|t| format!("{t} openat(AT_FDCWD, \"/x\", O_RDONLY) = -1 ENOENT (No such file or directory)")),
        (tid.clone(), fd.clone()).prop_map(|(t, f)| format!("{t} close({f}) = 0")),
        (tid.clone(), fd.clone()).prop_map(|(t, f)| format!("{t} close({f}) = -1 EBADF (Bad file descriptor)")),
        (tid.clone(), fd.clone(), fd.clone()).prop_map(|(t, a, b)| format!("{t} dup({a}) = {b}")),
        (tid.clone(), fd.clone(), fd.clone()).prop_map(|(t, a, b)| format!("{t} dup2({a}, {b}) = {b}")),
        (tid.clone(), fd.clone(), fd.clone()).prop_map(|(t, a, b)| format!("{t} pipe2([{a}, {b}], O_CLOEXEC) = 0")),
        (tid.clone(), fd.clone()).prop_map(|(t, f)| format!("{t} fcntl({f}, F_GETFD) = 0x1 (flags FD_CLOEXEC)")),
        (tid.clone(), fd.clone(), fd.clone()).prop_map(|(t, a, b)| format!("{t} fcntl({a}, F_DUPFD_CLOEXEC, 0) = {b}")),
        (tid.clone(), fd.clone()).prop_map(|(t, f)| format!("{t} close_range({f}, 4294967295, CLOSE_RANGE_UNSHARE) = 0")),
        (tid.clone(), tid.clone()).prop_map(|(t, c)| format!("{t} clone3({{flags=CLONE_VM|CLONE_FILES|CLONE_THREAD|CLONE_SIGHAND, exit_signal=0}}, 88) = {c}")),
        (tid.clone(), tid.clone()).prop_map(|(t, c)| format!("{t} clone(child_stack=NULL, flags=CLONE_FILES|SIGCHLD) = {c}")),
        (tid.clone(), tid.clone()).prop_map(|(t, c)| format!("{t} vfork() = {c}")),
        tid.clone().prop_map(|t| format!("{t} execve(\"/bin/true\", [\"true\"], 0x1 /* 1 var */) = 0")),
        tid.clone().prop_map(|t| format!("{t} unshare(CLONE_FILES) = 0")),
        tid.clone().prop_map(|t| format!("{t} openat(AT_FDCWD, \"/x\", O_RDONLY <unfinished ...>")),
        (tid.clone(), fd.clone()).prop_map(|(t, f)| format!("{t} <... openat resumed>) = {f}")),
        tid.clone().prop_map(|t| format!("{t} +++ exited with 0 +++")),
        (tid.clone(), tid.clone()).prop_map(|(t, n)| format!("{t} +++ superseded by execve in pid {n} +++")),
        (tid.clone(), 0u64..8).prop_map(|(t, n)| format!("{t} prlimit64(0, RLIMIT_NOFILE, {{rlim_cur={n}, rlim_max={n}}}, NULL) = 0")),
        (tid, fd).prop_map(|(t, f)| format!("{t} io_uring_setup(4, {{flags=0}}) = {f}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(s in "\\PC{0,200}") {
        let _ = parse_line(&s);
        let _ = parse_ret(&s);
        let _ = scan::split_top(&s);
        let _ = scan::find_call_end(&s);
        let _ = scan::fields(&s, "cmsg_data");
        let _ = scan::fd_array(&s);
        let mut j = Joiner::new();
        let mut out = Vec::new();
        j.push(1, &s, &mut out);
        j.finish(&mut out);
    }

    #[test]
    fn mutated_corpus_logs_never_panic_and_errors_name_real_lines(
        start in 0usize..2000,
        len in 1usize..60,
        muts in prop::collection::vec((0usize..60, mutation()), 1..8),
    ) {
        let lines = corpus_lines();
        let start = start % lines.len();
        let mut chunk: Vec<String> = lines.iter().cycle().skip(start).take(len).cloned().collect();
        for (i, m) in &muts {
            let i = i % chunk.len();
            chunk[i] = mutate(&chunk[i], m);
        }
        let text = chunk.join("\n");
        let physical = text.lines().count() as u64;
        let s = replay_text(&text);
        for (line, msg) in &s.first_errors {
            prop_assert!(*line >= 1 && *line <= physical.max(1), "line {line}: {msg}");
            prop_assert!(!msg.is_empty());
        }
        // The joiner alone agrees on the lines it rejects.
        let mut j = Joiner::new();
        let mut out = Vec::new();
        for (i, l) in text.lines().enumerate() {
            j.push(i as u64 + 1, l, &mut out);
        }
        j.finish(&mut out);
        let errors = out.iter().filter(|e| matches!(e, Event::Error { .. })).count() as u64;
        prop_assert_eq!(errors, s.errors);
    }

    #[test]
    fn random_well_formed_logs_never_panic(lines in prop::collection::vec(call_line(), 1..80)) {
        let text = lines.join("\n");
        let s = replay_text(&text);
        let t = s.total();
        prop_assert_eq!(t.checked, t.matched + t.mismatched);
        prop_assert!(s.calls <= lines.len() as u64);
    }
}

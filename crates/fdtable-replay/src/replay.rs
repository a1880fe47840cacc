//! One replay, end to end: the pre-pass (P5), then the replay proper with a bounded
//! look-ahead (P3), both streaming the log.
//!
//! - **Pre-pass**: reads the log once, keeping only the children announced by clone results
//!   (child tid → parent, flags, line; a list per tid for pid reuse) and the line count.
//! - **Replay**: reads it again; events go to the [`Engine`] in line order. When the search
//!   needs the result of a call still in flight, [`Stream`] reads ahead (at most
//!   [`LOOKAHEAD_LINES`] lines, [`LOOKAHEAD_BYTES`] bytes) and keeps the events it read for
//!   later. Memory is bounded by the tasks, the calls in flight and that window, never by the
//!   log's length.

use crate::decode::{Op, decode};
use crate::engine::{Birth, Births, Engine, InitState, Lookahead};
use crate::meta::Meta;
use crate::parse::{Call, Event, Joiner, Line, LineReader, Source};
use crate::stats::Stats;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::time::Instant;

/// How far the replay reads ahead for the result of a call in flight.
pub const LOOKAHEAD_LINES: u64 = 50_000;
/// The most bytes of events the look-ahead keeps (long lines fill it before
/// [`LOOKAHEAD_LINES`] do).
pub const LOOKAHEAD_BYTES: usize = 64 << 20;

/// Flags that override the meta file.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Initial descriptors.
    pub initial_fds: Option<Vec<u32>>,
    /// Initial RLIMIT_NOFILE.
    pub nofile: Option<u64>,
}

/// The outcome of one log.
#[derive(Clone, Debug)]
pub struct Report {
    /// The log's name.
    pub log: String,
    /// What was found.
    pub stats: Stats,
    /// The initial state used.
    pub init: InitState,
    /// Where it came from ("meta file", "flags", "assumed").
    pub init_from: &'static str,
    /// Wall time of the replay (both passes), in seconds.
    pub seconds: f64,
}

impl Report {
    /// Whether the log replayed without a mismatch (and every line could be read).
    pub fn clean(&self) -> bool {
        self.stats.total().mismatched == 0 && self.stats.errors == 0
    }
}

/// What the pre-pass learns.
#[derive(Debug, Default)]
pub struct Prepass {
    /// Children by tid.
    pub births: Births,
    /// Lines in the log.
    pub lines: u64,
}

/// Reads the log once for its clone results (P5).
pub fn prepass(src: &Source) -> io::Result<Prepass> {
    let mut r = src.open()?;
    let mut j = Joiner::new();
    let mut out = Vec::new();
    let mut p = Prepass::default();
    while let Some((no, line)) = r.next_line()? {
        match line {
            Line::Text(t) => j.push(no, &t, &mut out),
            Line::TooLong => j.push_too_long(no, &mut out),
        }
        for ev in out.drain(..) {
            if let Event::Call(c) = ev {
                note_birth(&mut p.births, &c);
            }
        }
    }
    j.finish(&mut out);
    p.lines = r.lines_read();
    Ok(p)
}

fn note_birth(births: &mut Births, c: &Call) {
    if !matches!(c.name.as_str(), "clone" | "clone3" | "fork" | "vfork") {
        return;
    }
    let Some(child) = c.ret.ok().and_then(|v| u32::try_from(v).ok()) else {
        return;
    };
    if child == 0 {
        return;
    }
    if let Op::Clone { flags, .. } = decode(c).op {
        births.entry(child).or_default().push_back(Birth {
            parent: c.entry_tid,
            flags,
            line: c.line,
        });
    }
}

/// The replay's reader: events in line order, with a look-ahead for calls in flight.
pub struct Stream {
    reader: LineReader,
    joiner: Joiner,
    queue: VecDeque<Event>,
    calls: HashMap<u64, Call>,
    /// Bytes held by `queue` and `calls` (roughly).
    held: usize,
    eof: bool,
    /// The line of the last event handed out.
    pub current: u64,
    scratch: Vec<Event>,
}

impl Stream {
    /// A stream over `src`.
    pub fn new(src: &Source) -> io::Result<Self> {
        Ok(Stream {
            reader: src.open()?,
            joiner: Joiner::new(),
            queue: VecDeque::new(),
            calls: HashMap::new(),
            held: 0,
            eof: false,
            current: 0,
            scratch: Vec::new(),
        })
    }

    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        match self.reader.next_line()? {
            Some((no, Line::Text(t))) => self.joiner.push(no, &t, &mut self.scratch),
            Some((no, Line::TooLong)) => self.joiner.push_too_long(no, &mut self.scratch),
            None => {
                self.eof = true;
                self.joiner.finish(&mut self.scratch);
            }
        }
        for ev in self.scratch.drain(..) {
            self.held += size(&ev);
            if let Event::Call(c) = &ev {
                self.held += size(&ev);
                self.calls.insert(c.id, c.clone());
            }
            self.queue.push_back(ev);
        }
        Ok(true)
    }

    /// The next event.
    pub fn next_event(&mut self) -> io::Result<Option<Event>> {
        while self.queue.is_empty() {
            if !self.fill()? {
                return Ok(None);
            }
        }
        let ev = self.queue.pop_front();
        if let Some(ev) = &ev {
            self.held = self.held.saturating_sub(size(ev));
            match ev {
                Event::Call(c) => {
                    if self.calls.remove(&c.id).is_some() {
                        self.held = self.held.saturating_sub(size(ev));
                    }
                    self.current = c.line;
                }
                Event::Enter { line, .. }
                | Event::Exit { line, .. }
                | Event::Superseded { line, .. }
                | Event::Signal { line, .. }
                | Event::Error { line, .. } => self.current = *line,
                _ => {}
            }
        }
        Ok(ev)
    }

    /// Lines read so far (including look-ahead).
    pub fn lines_read(&self) -> u64 {
        self.reader.lines_read()
    }
}

impl Lookahead for Stream {
    fn peek(&mut self, id: u64) -> Option<Call> {
        loop {
            if let Some(c) = self.calls.get(&id) {
                return Some(c.clone());
            }
            if self.eof
                || self.reader.lines_read() > self.current + LOOKAHEAD_LINES
                || self.held > LOOKAHEAD_BYTES
            {
                return None;
            }
            // An I/O error ends the look-ahead; the main loop will see it again.
            if !self.fill().unwrap_or(false) {
                return None;
            }
        }
    }

    fn gave_up(&self) -> bool {
        !self.eof
    }
}

/// About the memory an event holds.
fn size(ev: &Event) -> usize {
    64 + match ev {
        Event::Call(c) => c.name.len() + c.args.len(),
        Event::Enter { name, partial, .. } => name.len() + partial.len(),
        Event::Error { msg, .. } => msg.len(),
        _ => 0,
    }
}

/// Decides the initial state: flags, else the meta file, else {0,1,2} and 1024.
pub fn initial_state(meta: Option<&Meta>, opts: &Options) -> (InitState, &'static str) {
    let mut init = InitState::default();
    let mut from = "assumed";
    if let Some(m) = meta {
        if let Some(f) = &m.initial_fds {
            init.fds.clone_from(f);
            init.assumed = false;
            from = "meta file";
        }
        if let Some(n) = m.nofile {
            init.nofile = n;
            from = "meta file";
        }
    }
    if let Some(f) = &opts.initial_fds {
        init.fds.clone_from(f);
        init.assumed = false;
        from = "flags";
    }
    if let Some(n) = opts.nofile {
        init.nofile = n;
        from = "flags";
    }
    (init, from)
}

/// Replays one log. `progress` is called now and then with the number of lines read.
pub fn replay(
    src: &Source,
    meta: Option<&Meta>,
    opts: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> io::Result<Report> {
    let t0 = Instant::now();
    let pre = prepass(src)?;
    let (init, init_from) = initial_state(meta, opts);
    let mut engine = Engine::new(init.clone(), pre.births);
    let mut stream = Stream::new(src)?;
    let mut next_tick = 0u64;
    while let Some(ev) = stream.next_event()? {
        engine.handle(ev, &mut stream);
        if stream.current >= next_tick {
            progress(stream.current, pre.lines);
            next_tick = stream.current + 8192;
        }
    }
    if stream.lines_read() != pre.lines {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "the log changed between the two passes ({} lines, then {})",
                pre.lines,
                stream.lines_read()
            ),
        ));
    }
    progress(pre.lines, pre.lines);
    let mut stats = engine.finish();
    stats.lines = pre.lines;
    Ok(Report {
        log: src.name(),
        stats,
        init,
        init_from,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

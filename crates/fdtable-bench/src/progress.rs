//! Progress on stderr: an indicatif bar when stderr is a terminal, plain lines otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// Reports each measurement as it starts and ends.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    quiet: bool,
}

impl Progress {
    /// Progress over `total` measurements; `quiet` prints nothing (tests).
    pub fn new(total: usize, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            b
        });
        Progress {
            bar,
            total,
            done: 0,
            quiet,
        }
    }

    /// A measurement starts.
    pub fn start(&self, what: &str) {
        if let Some(b) = &self.bar {
            b.set_message(what.to_string());
        }
    }

    /// A measurement ended with `result` (a short summary or an error).
    pub fn finish(&mut self, what: &str, result: &str) {
        self.done += 1;
        match &self.bar {
            Some(b) => b.inc(1),
            None if !self.quiet => {
                eprintln!("[{}/{}] {what}: {result}", self.done, self.total)
            }
            None => {}
        }
    }

    /// Prints a line on stderr without breaking the bar.
    pub fn warn(&self, msg: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(b) => b.suspend(|| eprintln!("warning: {msg}")),
            None => eprintln!("warning: {msg}"),
        }
    }

    /// Prints `text` on stdout without breaking the bar.
    pub fn print(&self, text: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| print!("{text}")),
            None => print!("{text}"),
        }
    }

    /// Removes the bar.
    pub fn close(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

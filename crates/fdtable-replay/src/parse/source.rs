//! Where a log comes from (a file, plain or gzip-compressed, or bytes in memory) and the
//! line reader over it: one reused buffer, so memory stays flat however long the log is.

use flate2::read::MultiGzDecoder;
use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A log that can be read from the start as many times as needed (the replay reads it twice:
/// the pre-pass, then the replay).
#[derive(Clone, Debug)]
pub enum Source {
    /// A file; gzip is recognised by its magic bytes.
    Path(PathBuf),
    /// Bytes in memory (plain or gzip), with a name for reports.
    Bytes {
        /// Name shown in reports.
        name: String,
        /// The content.
        data: Arc<[u8]>,
    },
}

impl Source {
    /// A file source.
    pub fn path(p: impl AsRef<Path>) -> Self {
        Source::Path(p.as_ref().to_path_buf())
    }

    /// An in-memory source.
    pub fn bytes(name: impl Into<String>, data: impl Into<Arc<[u8]>>) -> Self {
        Source::Bytes {
            name: name.into(),
            data: data.into(),
        }
    }

    /// The name shown in reports.
    pub fn name(&self) -> String {
        match self {
            Source::Path(p) => p.display().to_string(),
            Source::Bytes { name, .. } => name.clone(),
        }
    }

    /// Opens the log for reading from the start, decompressing gzip.
    pub fn open(&self) -> io::Result<LineReader> {
        let raw: Box<dyn Read> = match self {
            Source::Path(p) => Box::new(File::open(p)?),
            Source::Bytes { data, .. } => Box::new(io::Cursor::new(data.clone())),
        };
        let mut r = BufReader::with_capacity(1 << 16, raw);
        let gz = r.fill_buf()?.starts_with(&[0x1f, 0x8b]);
        let r: Box<dyn BufRead> = if gz {
            Box::new(BufReader::with_capacity(1 << 16, MultiGzDecoder::new(r)))
        } else {
            Box::new(r)
        };
        Ok(LineReader {
            r,
            buf: Vec::with_capacity(512),
            no: 0,
        })
    }
}

/// Reads a log line by line, numbering lines from 1.
pub struct LineReader {
    r: Box<dyn BufRead>,
    buf: Vec<u8>,
    no: u64,
}

impl LineReader {
    /// The next line (without its newline) and its number; `None` at the end. Bytes that are
    /// not UTF-8 (a program's own output in stderr mode) are replaced, never rejected.
    pub fn next_line(&mut self) -> io::Result<Option<(u64, Cow<'_, str>)>> {
        self.buf.clear();
        if self.r.read_until(b'\n', &mut self.buf)? == 0 {
            return Ok(None);
        }
        self.no += 1;
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        Ok(Some((self.no, String::from_utf8_lossy(&self.buf))))
    }

    /// Lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.no
    }
}

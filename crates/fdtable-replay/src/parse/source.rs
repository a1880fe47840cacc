//! Where a log comes from (a file, plain or gzip-compressed, or bytes in memory) and the
//! line reader over it: one reused buffer of at most [`MAX_LINE_BYTES`], so memory stays
//! flat however long the log, or any of its lines, is.

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

    /// Opens the log for reading from the start, decompressing gzip. A path must name a
    /// regular file: a pipe, FIFO or terminal cannot be read a second time.
    pub fn open(&self) -> io::Result<LineReader> {
        let raw: Box<dyn Read> = match self {
            Source::Path(p) => {
                if !std::fs::metadata(p)?.is_file() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "not a regular file: the replay reads a log twice, so a pipe or FIFO \
                         must be saved to a file first",
                    ));
                }
                Box::new(File::open(p)?)
            }
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
            max: MAX_LINE_BYTES,
        })
    }
}

/// The longest line kept (16 MiB): far beyond a real strace line, even with a large `-s`
/// (a 1 MiB write printed with `-x` is about 4 MiB). The bytes of a longer line past it are
/// read and dropped, never buffered.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// One line of a log.
#[derive(Debug)]
pub enum Line<'a> {
    /// The text, without its newline.
    Text(Cow<'a, str>),
    /// A line longer than [`MAX_LINE_BYTES`]: its bytes were skipped.
    TooLong,
}

/// Reads a log line by line, numbering lines from 1.
pub struct LineReader {
    r: Box<dyn BufRead>,
    buf: Vec<u8>,
    no: u64,
    max: usize,
}

impl LineReader {
    /// The next line and its number; `None` at the end. Bytes that are not UTF-8 (a
    /// program's own output in stderr mode) are replaced, never rejected; a line longer
    /// than [`MAX_LINE_BYTES`] is [`Line::TooLong`].
    pub fn next_line(&mut self) -> io::Result<Option<(u64, Line<'_>)>> {
        self.buf.clear();
        let mut any = false;
        let mut too_long = false;
        loop {
            let chunk = match self.r.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, end) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if !too_long {
                let room = self.max - self.buf.len();
                if take - usize::from(end) > room {
                    too_long = true;
                    self.buf.clear();
                } else {
                    self.buf.extend_from_slice(&chunk[..take]);
                }
            }
            self.r.consume(take);
            if end {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        self.no += 1;
        if too_long {
            self.buf = Vec::with_capacity(512);
            return Ok(Some((self.no, Line::TooLong)));
        }
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        Ok(Some((
            self.no,
            Line::Text(String::from_utf8_lossy(&self.buf)),
        )))
    }

    /// Lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.no
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_past_the_cap_is_skipped_without_buffering_it() {
        let mut text = b"1 close(3) = 0\n".to_vec();
        text.extend(std::iter::repeat_n(b'a', 1 << 20));
        text.extend(b"\n1 close(4) = 0\n");
        let mut r = Source::bytes("t", text).open().unwrap();
        r.max = 1000;
        assert!(
            matches!(r.next_line().unwrap(), Some((1, Line::Text(t))) if t == "1 close(3) = 0")
        );
        assert!(matches!(r.next_line().unwrap(), Some((2, Line::TooLong))));
        assert!(r.buf.capacity() <= 1000, "{}", r.buf.capacity());
        assert!(
            matches!(r.next_line().unwrap(), Some((3, Line::Text(t))) if t == "1 close(4) = 0")
        );
        assert!(r.next_line().unwrap().is_none());
    }

    #[test]
    fn a_line_of_exactly_the_cap_is_kept() {
        let mut text = vec![b'b'; 1000];
        text.extend(b"\n");
        text.extend(vec![b'c'; 1001]);
        let mut r = Source::bytes("t", text).open().unwrap();
        r.max = 1000;
        assert!(matches!(r.next_line().unwrap(), Some((1, Line::Text(t))) if t.len() == 1000));
        assert!(matches!(r.next_line().unwrap(), Some((2, Line::TooLong))));
        assert!(r.next_line().unwrap().is_none());
    }
}

//! `iov_iter` over Rust slices: a vector of buffers seen as one stream, for `readv`/`writev`
//! and for files that move bytes in chunks (pipes, sockets).

use crate::uapi::MAX_RW_COUNT;
use std::io::{IoSlice, IoSliceMut};

/// A destination iterator (`ITER_DEST`): bytes are copied *into* the buffers, in order.
pub struct IovIterMut<'a, 'b> {
    bufs: &'a mut [IoSliceMut<'b>],
    idx: usize,
    off: usize,
    left: usize,
}

impl<'a, 'b> IovIterMut<'a, 'b> {
    /// Over `bufs`, at most [`MAX_RW_COUNT`] bytes in all (as `import_iovec` truncates).
    pub fn new(bufs: &'a mut [IoSliceMut<'b>]) -> Self {
        let total = bufs.iter().fold(0usize, |a, b| a.saturating_add(b.len()));
        IovIterMut {
            bufs,
            idx: 0,
            off: 0,
            left: total.min(MAX_RW_COUNT),
        }
    }

    /// Bytes still to fill (`iov_iter_count`).
    pub fn count(&self) -> usize {
        self.left
    }

    /// Copies as much of `src` as fits; returns how much was copied.
    pub fn copy_in(&mut self, mut src: &[u8]) -> usize {
        let mut done = 0;
        while !src.is_empty() && self.left > 0 {
            let buf = &mut self.bufs[self.idx];
            let room = (buf.len() - self.off).min(self.left);
            if room == 0 {
                self.idx += 1;
                self.off = 0;
                continue;
            }
            let n = room.min(src.len());
            buf[self.off..self.off + n].copy_from_slice(&src[..n]);
            self.off += n;
            self.left -= n;
            done += n;
            src = &src[n..];
        }
        done
    }

    /// Writes `n` zero bytes (or as many as fit); returns how many.
    pub fn zero(&mut self, mut n: usize) -> usize {
        const ZEROS: [u8; 512] = [0; 512];
        let mut done = 0;
        while n > 0 && self.left > 0 {
            let c = self.copy_in(&ZEROS[..n.min(ZEROS.len())]);
            done += c;
            n -= c;
        }
        done
    }

    /// The next contiguous destination chunk, at most `max` bytes, to fill in place; call
    /// [`advance`](Self::advance) with how much was filled.
    pub fn next_chunk(&mut self, max: usize) -> &mut [u8] {
        while self.left > 0 && self.off == self.bufs[self.idx].len() {
            self.idx += 1;
            self.off = 0;
        }
        if self.left == 0 {
            return &mut [];
        }
        let n = (self.bufs[self.idx].len() - self.off)
            .min(self.left)
            .min(max);
        let off = self.off;
        &mut self.bufs[self.idx][off..off + n]
    }

    /// Marks `n` bytes of the last [`next_chunk`](Self::next_chunk) as filled.
    pub fn advance(&mut self, n: usize) {
        self.off += n;
        self.left -= n;
    }
}

/// A source iterator (`ITER_SOURCE`): bytes are copied *out of* the buffers, in order.
pub struct IovIter<'a, 'b> {
    bufs: &'a [IoSlice<'b>],
    idx: usize,
    off: usize,
    left: usize,
}

impl<'a, 'b> IovIter<'a, 'b> {
    /// Over `bufs`, at most [`MAX_RW_COUNT`] bytes in all.
    pub fn new(bufs: &'a [IoSlice<'b>]) -> Self {
        let total = bufs.iter().fold(0usize, |a, b| a.saturating_add(b.len()));
        IovIter {
            bufs,
            idx: 0,
            off: 0,
            left: total.min(MAX_RW_COUNT),
        }
    }

    /// Bytes still to consume.
    pub fn count(&self) -> usize {
        self.left
    }

    /// Copies up to `dst.len()` bytes out; returns how many.
    pub fn copy_out(&mut self, dst: &mut [u8]) -> usize {
        let mut done = 0;
        while done < dst.len() && self.left > 0 {
            let buf = &self.bufs[self.idx];
            let avail = (buf.len() - self.off).min(self.left);
            if avail == 0 {
                self.idx += 1;
                self.off = 0;
                continue;
            }
            let n = avail.min(dst.len() - done);
            dst[done..done + n].copy_from_slice(&buf[self.off..self.off + n]);
            self.off += n;
            self.left -= n;
            done += n;
        }
        done
    }

    /// The next contiguous source chunk, at most `max` bytes; call
    /// [`advance`](Self::advance) with how much was consumed.
    pub fn next_chunk(&mut self, max: usize) -> &'a [u8] {
        while self.left > 0 && self.off == self.bufs[self.idx].len() {
            self.idx += 1;
            self.off = 0;
        }
        if self.left == 0 {
            return &[];
        }
        let bufs: &'a [IoSlice<'b>] = self.bufs;
        let buf: &'a [u8] = &bufs[self.idx];
        let n = (buf.len() - self.off).min(self.left).min(max);
        &buf[self.off..self.off + n]
    }

    /// Marks `n` bytes of the last chunk as consumed.
    pub fn advance(&mut self, n: usize) {
        self.off += n;
        self.left -= n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_across_buffers() {
        let (mut a, mut b, mut c) = ([0u8; 2], [0u8; 0], [0u8; 3]);
        let mut bufs = [
            IoSliceMut::new(&mut a),
            IoSliceMut::new(&mut b),
            IoSliceMut::new(&mut c),
        ];
        let mut it = IovIterMut::new(&mut bufs);
        assert_eq!(it.count(), 5);
        assert_eq!(it.copy_in(b"xyz"), 3);
        assert_eq!(it.zero(9), 2);
        assert_eq!(it.copy_in(b"q"), 0);
        assert_eq!(it.count(), 0);
        assert_eq!((a, c), (*b"xy", [b'z', 0, 0]));
    }

    #[test]
    fn source_chunks() {
        let bufs = [IoSlice::new(b"ab"), IoSlice::new(b""), IoSlice::new(b"cde")];
        let mut it = IovIter::new(&bufs);
        assert_eq!(it.next_chunk(1), b"a");
        it.advance(1);
        assert_eq!(it.next_chunk(10), b"b");
        it.advance(1);
        assert_eq!(it.next_chunk(10), b"cde");
        let mut out = [0u8; 2];
        assert_eq!(it.copy_out(&mut out), 2);
        assert_eq!(&out, b"cd");
        assert_eq!(it.count(), 1);
    }

    #[test]
    fn dest_chunks() {
        let (mut a, mut b) = ([0u8; 1], [0u8; 2]);
        {
            let mut bufs = [IoSliceMut::new(&mut a), IoSliceMut::new(&mut b)];
            let mut it = IovIterMut::new(&mut bufs);
            it.next_chunk(9).copy_from_slice(b"1");
            it.advance(1);
            let c = it.next_chunk(1);
            c[0] = b'2';
            it.advance(1);
            assert_eq!(it.count(), 1);
        }
        assert_eq!((a, b), (*b"1", [b'2', 0]));
    }
}

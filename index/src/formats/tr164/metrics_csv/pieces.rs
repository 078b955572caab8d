//! Reading a metrics.csv in pieces of a few hundred kilobytes, each split while it is still in the processor's
//! cache: the source of the plain split's chunks when a file is read for its cells only and is not mapped (on
//! Linux `index/src/storage/mapped.rs` maps it instead, which also spares this copy).
//!
//! Read whole, a 25 MB file is copied into a buffer far larger than the cache and then read back from memory;
//! in pieces, the copy lands in the cache and the split reads it from there. Measured on this project's 2-core
//! machine (two threads reading the 69 masters of the `--scale 34` data and passing over every byte): 150–180 ms
//! whole, 83–103 ms in pieces.

use std::cell::RefCell;
use std::io;

/// Bytes readable at any offset: a file (positioned reads, which threads may share) or bytes in memory (the
/// tests and the fuzz target, which compare the reading in pieces with the reading of the whole).
pub(crate) trait Source: Sync {
    /// Reads into `buffer` from `offset`, as `pread` does: fewer bytes than asked only at the end.
    fn read_at(&self, buffer: &mut [u8], offset: u64) -> io::Result<usize>;
}

#[cfg(unix)]
impl Source for std::fs::File {
    fn read_at(&self, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buffer, offset)
    }
}

impl Source for &[u8] {
    fn read_at(&self, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        let count = (self.len() - start).min(buffer.len());
        buffer[..count].copy_from_slice(&self[start..start + count]);
        Ok(count)
    }
}

thread_local! {
    /// Each thread's piece buffer, kept between chunks: a fresh one would be faulted in and zeroed every time.
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The bytes of a source from some offset on, a piece at a time: `buffer[..filled]` holds the source's bytes from
/// `position`.
pub(super) struct PieceReader<'s> {
    source: &'s dyn Source,
    /// Where the source ends: its size when reading began.
    end: u64,
    /// The source offset of `buffer[0]`.
    pub position: u64,
    /// Its whole length is usable (zeroed once, when it grows); `filled` says how much holds the source's bytes.
    pub buffer: Vec<u8>,
    pub filled: usize,
    piece_bytes: usize,
}

impl<'s> PieceReader<'s> {
    pub(super) fn new(source: &'s dyn Source, position: u64, end: u64, piece_bytes: usize) -> Self {
        let piece_bytes = piece_bytes.max(1);
        let mut buffer = BUFFER
            .with(|kept| {
                kept.try_borrow_mut()
                    .map(|mut kept| std::mem::take(&mut *kept))
            })
            .unwrap_or_default();
        if buffer.len() < piece_bytes {
            buffer.resize(piece_bytes, 0);
        }
        PieceReader {
            source,
            end,
            position,
            buffer,
            filled: 0,
            piece_bytes,
        }
    }

    /// Reads one more piece after the buffered bytes (moving the buffered ones to the front first when that
    /// makes room, growing the buffer when a line is longer than it). `Ok(false)` at the end of the source; an
    /// error when the source is shorter than it was (a file truncated while read).
    pub(super) fn fill(&mut self) -> io::Result<bool> {
        let at = self.position + self.filled as u64;
        if at >= self.end {
            return Ok(false);
        }
        let want = usize::try_from(self.end - at)
            .unwrap_or(usize::MAX)
            .min(self.piece_bytes);
        if self.buffer.len() - self.filled < want {
            self.buffer.resize(self.filled + want, 0);
        }
        let mut read = 0;
        while read < want {
            let count = self.source.read_at(
                &mut self.buffer[self.filled + read..self.filled + want],
                at + read as u64,
            )?;
            if count == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the file became shorter while it was read",
                ));
            }
            read += count;
        }
        self.filled += want;
        Ok(true)
    }

    /// Forgets the first `count` buffered bytes: the rest moves to the front.
    pub(super) fn consume(&mut self, count: usize) {
        let count = count.min(self.filled);
        self.buffer.copy_within(count..self.filled, 0);
        self.filled -= count;
        self.position += count as u64;
    }
}

impl Drop for PieceReader<'_> {
    fn drop(&mut self) {
        let buffer = std::mem::take(&mut self.buffer);
        BUFFER.with(|kept| {
            if let Ok(mut kept) = kept.try_borrow_mut() {
                *kept = buffer;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_hands_out_the_source_piece_by_piece_and_says_when_it_is_short() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let source: &[u8] = &bytes;
        let mut reader = PieceReader::new(&source, 10, 1000, 64);
        let mut seen = Vec::new();
        while reader.fill().unwrap() {
            seen.extend_from_slice(&reader.buffer[..reader.filled]);
            let filled = reader.filled;
            reader.consume(filled);
        }
        assert_eq!(seen, bytes[10..]);
        // A source that ends before the size it had when reading began.
        let mut short = PieceReader::new(&source, 900, 1200, 64);
        while let Ok(true) = short.fill() {
            let filled = short.filled;
            short.consume(filled);
        }
        assert_eq!(
            short.fill().unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }
}

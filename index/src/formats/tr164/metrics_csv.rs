//! Parses one `metrics.csv` into per-cell row censuses and request statistics.
//!
//! Columns are found by header name (any order, unknown columns ignored); CRLF or LF, a UTF-8 BOM and RFC 4180
//! quoting are accepted. A malformed row is reported with its line and left out; the rest of the file still
//! counts. Only `ok` rows that are not skip sentinels enter statistics.

use crate::run::bytes::without_boms;
use crate::run::parsed::{FileRejected, IdCount, ParsedCell, ParsedMetrics};
use cellscope_model::api::Warning;
use cellscope_model::key::CellCoordinates;
use cellscope_model::requests::RowClass;
use cellscope_model::stats::{CellAccumulator, RequestSample};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

mod number;
mod pieces;
pub(crate) use number::parse_number;
#[cfg(test)]
use number::plain_decimal;
use pieces::PieceReader;
pub(crate) use pieces::Source;

/// Columns without which a file cannot be indexed.
pub(crate) const REQUIRED_COLUMNS: [&str; 17] = [
    "run_id",
    "suite",
    "phase",
    "backend",
    "model",
    "workload",
    "n_agents",
    "rep",
    "agent_id",
    "request_id",
    "request_sequence",
    "wall_ms",
    "prompt_tokens",
    "completion_tokens",
    "submit_time_s",
    "complete_time_s",
    "status",
];

/// Detailed per-row warnings per file; further problems are summarised in one line so a broken file cannot
/// drown the report.
const MAX_ROW_WARNINGS: usize = 20;

struct Columns {
    key: [usize; 7],
    run_id: usize,
    agent_id: usize,
    request_id: usize,
    request_sequence: usize,
    wall_ms: usize,
    prompt_tokens: usize,
    completion_tokens: usize,
    submit_time_s: usize,
    complete_time_s: usize,
    status: usize,
    ttft_ms: Option<usize>,
}

/// Statuses a benchmark writes; anything else is still counted as a failed request, with a warning.
fn is_known_status(status: &[u8]) -> bool {
    matches!(status, b"ok" | b"err" | b"error" | b"timeout")
        || (status.len() == 8
            && status.starts_with(b"http_")
            && status[5..].iter().all(u8::is_ascii_digit))
}

pub(crate) fn parse_count(field: &[u8]) -> Option<u32> {
    std::str::from_utf8(field).ok()?.trim().parse::<u32>().ok()
}

struct Accumulating {
    cell: ParsedCell,
    accumulator: CellAccumulator,
}

/// Splits a file into records. Files without any `"` (what Python's csv writer produces for these columns) take
/// a plain split on `,` and `\n`, several times faster than a general CSV state machine and exactly equivalent
/// for quote-free input; anything else goes through the `csv` crate. The plain split notes every `"` it passes
/// ([`PlainCursor::quotes_seen`]), so a file is not scanned for quotes before it is split: a file that turns out to
/// hold one is split again by the `csv` crate.
enum Splitter<'a> {
    Plain {
        bytes: &'a [u8],
        cursor: PlainCursor,
    },
    Quoted {
        bytes: &'a [u8],
        reader: csv::Reader<&'a [u8]>,
        record: csv::ByteRecord,
    },
    /// The plain split of a source read in pieces (`metrics_csv/pieces.rs`).
    Pieces(Box<PieceSplit<'a>>),
}

/// The plain split of one chunk of a source read a piece at a time: the lines that start in the chunk, whole.
struct PieceSplit<'a> {
    reader: PieceReader<'a>,
    cursor: PlainCursor,
    /// `reader.buffer[..parse_end]` ends with a whole line: the split runs up to there, then reads on.
    parse_end: usize,
    /// The chunk's lines start before this offset of the source; the line holding the byte before it is the
    /// chunk's last.
    limit: u64,
    /// Whether `parse_end` is the end of the chunk's last line.
    last: bool,
    /// The byte-order marks at the start of the source: offsets count from after them.
    marks: u64,
    /// Reading stopped early (the file changed while read): this reading of it is thrown away.
    failed: bool,
}

impl<'a> PieceSplit<'a> {
    /// The chunk of `source` (of `size` bytes) whose lines start in `[start, limit)`; `first_line` is the line at
    /// `start` when `start` is known to be a line's start (the first chunk), else the chunk starts after the
    /// first line feed at or after `start - 1` and counts lines from 0.
    fn new(
        source: &'a dyn Source,
        (start, limit, size): (u64, u64, u64),
        first_line: Option<u64>,
        marks: u64,
        piece_bytes: usize,
    ) -> PieceSplit<'a> {
        let from = if first_line.is_some() {
            start
        } else {
            start.saturating_sub(1)
        };
        let mut split = PieceSplit {
            reader: PieceReader::new(source, from, size, piece_bytes),
            cursor: PlainCursor::at(&[], 0, first_line.unwrap_or(0)),
            parse_end: 0,
            limit,
            last: false,
            marks,
            failed: false,
        };
        if first_line.is_none() {
            // The line that holds the byte before the chunk is the previous chunk's.
            loop {
                if let Some(at) = memchr::memchr(b'\n', &split.reader.buffer[..split.reader.filled])
                {
                    split.reader.consume(at + 1);
                    break;
                }
                let filled = split.reader.filled;
                split.reader.consume(filled);
                match split.reader.fill() {
                    Ok(true) => {}
                    Ok(false) => {
                        split.last = true;
                        return split;
                    }
                    Err(_) => {
                        split.failed = true;
                        split.last = true;
                        return split;
                    }
                }
            }
        }
        split
    }

    /// Makes the next whole lines of the chunk available to the split, reading on as needed; false when none is
    /// left (or reading failed).
    fn advance(&mut self) -> bool {
        if self.last {
            return false;
        }
        self.reader.consume(self.cursor.position);
        let parse_end = loop {
            let filled = self.reader.filled;
            let limit_at = usize::try_from(self.limit.saturating_sub(self.reader.position))
                .unwrap_or(usize::MAX);
            if limit_at == 0 {
                // The next line starts at or after the limit: the next chunk's.
                self.last = true;
                return false;
            }
            // The line holding the byte before the limit is the chunk's last; it ends at the first line feed at or
            // after that byte.
            if limit_at <= filled
                && let Some(at) = memchr::memchr(b'\n', &self.reader.buffer[limit_at - 1..filled])
            {
                self.last = true;
                break limit_at + at;
            }
            if let Some(at) = memchr::memrchr(b'\n', &self.reader.buffer[..filled]) {
                break at + 1;
            }
            match self.reader.fill() {
                Ok(true) => {}
                Ok(false) => {
                    // The end of the source: what is left is its last line, without a terminator.
                    self.last = true;
                    if filled == 0 {
                        return false;
                    }
                    break filled;
                }
                Err(_) => {
                    self.failed = true;
                    self.last = true;
                    return false;
                }
            }
        };
        self.parse_end = parse_end;
        let quotes_seen = self.cursor.quotes_seen;
        self.cursor = PlainCursor::at(&self.reader.buffer[..parse_end], 0, self.cursor.line);
        self.cursor.quotes_seen |= quotes_seen;
        true
    }
}

/// What [`plain_record`] found at the cursor.
enum Scanned {
    /// A record: its first byte, its line, and whether a line feed ends it.
    Record(usize, u64, bool),
    /// A blank line, skipped as the csv crate does.
    Blank,
    /// No bytes left.
    End,
}

/// The plain split's next record of `bytes` at the cursor, its fields into `fields`.
#[inline(always)]
fn plain_record(bytes: &[u8], cursor: &mut PlainCursor, fields: &mut Fields) -> Scanned {
    if cursor.position >= bytes.len() {
        return Scanned::End;
    }
    let start = cursor.position;
    let record_line = cursor.line;
    fields.gap = 1;
    fields.count = 0;
    fields.starts[0] = start;
    let (mut line_end, next_position) = cursor.scan_line(bytes, fields);
    cursor.position = next_position;
    cursor.line += 1;
    let terminated = next_position > line_end;
    let last_start = fields.starts[fields.count];
    if line_end > last_start && bytes[line_end - 1] == b'\r' {
        line_end -= 1;
    }
    if fields.count == 0 && line_end <= start {
        return Scanned::Blank;
    }
    fields.count += 1;
    fields.starts[fields.count] = line_end.max(last_start) + 1;
    Scanned::Record(start, record_line, terminated)
}

/// Most fields a record keeps; a line with more is ragged whatever the header says (real headers have ~30).
const MAX_FIELDS: usize = 4096;

/// Bytes scanned for delimiters at a time: the width of one mask.
const BLOCK_BYTES: usize = 64;

/// The fields of one record: field `i` is `base[starts[i]..starts[i + 1] - gap]`, where `base` is the slice the
/// splitter handed out with the record.
///
/// Field boundaries are kept as one offset each rather than a range each: the plain split writes the offset
/// after every comma straight from its delimiter mask, several at a time.
pub(crate) struct Fields {
    /// The start of each field, then the end of the last one plus `gap`. Longer than any record needs, so that the
    /// scan can write a few spare offsets past the last one instead of testing for the end after each.
    starts: Vec<usize>,
    /// Fields in the record.
    count: usize,
    /// Bytes between one field's end and the next one's start: 1 (the comma) in a plain split; 0 in the csv
    /// crate's record buffer, where unquoted fields sit end to end.
    gap: usize,
}

impl Fields {
    fn new() -> Fields {
        Fields {
            // One more than the most fields, and room for a whole block's spare writes past them.
            starts: vec![0; MAX_FIELDS + 2 + BLOCK_BYTES],
            count: 0,
            gap: 1,
        }
    }

    fn len(&self) -> usize {
        self.count
    }

    fn range(&self, index: usize) -> Range<usize> {
        self.starts[index]..self.starts[index + 1] - self.gap
    }

    /// From the start of field `first` to the end of field `last`, the delimiters between them included.
    fn span(&self, first: usize, last: usize) -> Range<usize> {
        self.starts[first]..self.starts[last + 1] - self.gap
    }

    fn ranges(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        (0..self.count).map(|index| self.range(index))
    }

    /// Appends the field that starts after each delimiter set in `mask` (bit `k`: the byte at `base + k`). Up to
    /// [`MAX_FIELDS`] are kept (`count` is then one short of the fields a final call of [`Fields::close`] adds);
    /// the rest of a longer line is skipped, not kept: a damaged file of one huge line would otherwise need an
    /// offset per comma, several times its own size.
    #[inline(always)]
    fn push_after(&mut self, base: usize, mask: u64) {
        let found = mask.count_ones() as usize;
        if self.count + found > MAX_FIELDS {
            let mut mask = mask;
            while mask != 0 && self.count < MAX_FIELDS {
                self.count += 1;
                self.starts[self.count] = base + mask.trailing_zeros() as usize + 1;
                mask &= mask - 1;
            }
            return;
        }
        // Four offsets per step, without testing for the last bit in between: once the mask is empty the spare
        // writes land past the new count (inside `starts`, which has a block's room to spare) and are overwritten
        // by the next record.
        let mut mask = mask;
        let out = &mut self.starts[self.count + 1..self.count + 1 + BLOCK_BYTES];
        for quad in out.chunks_exact_mut(4) {
            if mask == 0 {
                break;
            }
            for slot in quad {
                *slot = base + mask.trailing_zeros() as usize + 1;
                mask &= mask.wrapping_sub(1);
            }
        }
        self.count += found;
    }
}

/// One bit per byte of each 64-byte block of a file: where the commas and the line feeds are; and whether it
/// holds a quote (not where: any quote sends the file to the csv crate).
#[derive(Clone, Copy, Default)]
struct BlockMasks {
    commas: u64,
    line_feeds: u64,
    /// Not zero when the block holds a `"`.
    quotes: u64,
}

/// The masks of the block of `bytes` starting at `base` (zero-padded past the end). One pass over the file
/// finds every delimiter this way, and the splitter then hops from one set bit to the next instead of looking
/// at every byte of a field.
fn block_masks(bytes: &[u8], base: usize) -> BlockMasks {
    match bytes.get(base..base + BLOCK_BYTES) {
        Some(full) => full_block_masks(full),
        None => {
            let mut block = [0u8; BLOCK_BYTES];
            let tail = bytes.get(base..).unwrap_or_default();
            block[..tail.len()].copy_from_slice(tail);
            full_block_masks(&block)
        }
    }
}

/// [`block_masks`] of exactly [`BLOCK_BYTES`] bytes, with SSE2 (part of every x86-64 processor): 16-byte
/// compares against each byte sought, their byte masks gathered into bits.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(unsafe_code)] // SSE2 intrinsics; see the SAFETY comments.
fn full_block_masks(block: &[u8]) -> BlockMasks {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_setzero_si128,
    };
    assert_eq!(block.len(), BLOCK_BYTES);
    let mut masks = BlockMasks::default();
    // SAFETY: SSE2 is part of the x86-64 baseline, so these instructions exist on every processor this build
    // runs on; the zeroed vector is a plain value.
    let mut quotes = unsafe { _mm_setzero_si128() };
    for (index, lane) in block.chunks_exact(16).enumerate() {
        // SAFETY: as above; `lane` is 16 readable bytes (`chunks_exact`), and an unaligned load asks nothing more.
        let (commas, line_feeds) = unsafe {
            let vector = _mm_loadu_si128(lane.as_ptr().cast::<__m128i>());
            quotes = _mm_or_si128(quotes, _mm_cmpeq_epi8(vector, _mm_set1_epi8(b'"' as i8)));
            (
                _mm_movemask_epi8(_mm_cmpeq_epi8(vector, _mm_set1_epi8(b',' as i8))),
                _mm_movemask_epi8(_mm_cmpeq_epi8(vector, _mm_set1_epi8(b'\n' as i8))),
            )
        };
        // Each move yields 16 bits in an i32; as u16 keeps exactly those.
        masks.commas |= u64::from(commas as u16) << (index * 16);
        masks.line_feeds |= u64::from(line_feeds as u16) << (index * 16);
    }
    // SAFETY: as above.
    masks.quotes = u64::from(unsafe { _mm_movemask_epi8(quotes) } as u16);
    masks
}

/// [`block_masks`] of exactly [`BLOCK_BYTES`] bytes, one byte at a time, where SSE2 is not available.
#[cfg(not(target_arch = "x86_64"))]
fn full_block_masks(block: &[u8]) -> BlockMasks {
    let mut masks = BlockMasks::default();
    for (bit, byte) in block.iter().enumerate() {
        masks.commas |= u64::from(*byte == b',') << bit;
        masks.line_feeds |= u64::from(*byte == b'\n') << bit;
        masks.quotes |= u64::from(*byte == b'"') << bit;
    }
    masks
}

/// Where the quote-free split stands: the next record's start, its line, and the delimiters not yet consumed.
struct PlainCursor {
    position: usize,
    /// The 1-based line at `position`.
    line: u64,
    /// Start of the block `masks` describes.
    block_base: usize,
    /// Commas and line feeds of the block at or after the scan, one bit per byte.
    masks: BlockMasks,
    /// Not zero once any block scanned held a `"`: then the plain split is not the file's reading. (Gathered
    /// with `|` per block rather than tested: the test is needed once a record.)
    quotes_seen: u64,
}

impl PlainCursor {
    fn new(bytes: &[u8]) -> PlainCursor {
        PlainCursor::at(bytes, 0, 1)
    }

    /// A cursor at `position` (the start of a line) counting lines from `line`.
    fn at(bytes: &[u8], position: usize, line: u64) -> PlainCursor {
        let masks = block_masks(bytes, position);
        PlainCursor {
            position,
            line,
            block_base: position,
            masks,
            quotes_seen: masks.quotes,
        }
    }

    /// Scans the line at `position`: the fields go into `fields` (the end of the last one still open), and the
    /// result is `(end of the line's last byte before its line feed, start of the next line)`.
    #[inline(always)]
    fn scan_line(&mut self, bytes: &[u8], fields: &mut Fields) -> (usize, usize) {
        loop {
            let BlockMasks {
                commas, line_feeds, ..
            } = self.masks;
            if line_feeds != 0 {
                let line_feed = line_feeds & line_feeds.wrapping_neg();
                let below = line_feed - 1;
                fields.push_after(self.block_base, commas & below);
                // The commas after the line feed stay for the next line.
                self.masks.commas = commas & !(below | line_feed);
                self.masks.line_feeds = line_feeds ^ line_feed;
                let at = self.block_base + line_feed.trailing_zeros() as usize;
                return (at, at + 1);
            }
            fields.push_after(self.block_base, commas);
            self.block_base += BLOCK_BYTES;
            if self.block_base >= bytes.len() {
                self.masks = BlockMasks::default();
                return (bytes.len(), bytes.len());
            }
            self.masks = block_masks(bytes, self.block_base);
            self.quotes_seen |= self.masks.quotes;
        }
    }
}

/// A record: the bytes its fields point into, the offset of its start, the 1-based line it starts on, and (for
/// the plain split) whether a line feed ends it.
type Record<'s> = (&'s [u8], u64, u64, Option<bool>);

impl<'a> Splitter<'a> {
    /// The plain split, unless `general` asks for the csv crate whatever the bytes.
    fn new(bytes: &'a [u8], general: bool) -> Splitter<'a> {
        if general {
            let reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .from_reader(bytes);
            Splitter::Quoted {
                bytes,
                reader,
                record: csv::ByteRecord::new(),
            }
        } else {
            Splitter::Plain {
                bytes,
                cursor: PlainCursor::new(bytes),
            }
        }
    }

    /// The line the plain split has reached (counted from where it started); the csv crate's path reports 0,
    /// as its records carry their own lines and it is never split into chunks.
    fn line(&self) -> u64 {
        match self {
            Splitter::Plain { cursor, .. } => cursor.line,
            Splitter::Pieces(split) => split.cursor.line,
            Splitter::Quoted { .. } => 0,
        }
    }

    /// Whether records are split without quoting rules, so a field's bytes sit between delimiters in the file.
    fn is_plain(&self) -> bool {
        matches!(self, Splitter::Plain { .. } | Splitter::Pieces(_))
    }

    /// Whether the plain split has passed a `"`, so its reading of the bytes is not the file's.
    fn saw_quote(&self) -> bool {
        match self {
            Splitter::Plain { cursor, .. } => cursor.quotes_seen != 0,
            Splitter::Pieces(split) => split.cursor.quotes_seen != 0,
            Splitter::Quoted { .. } => false,
        }
    }

    /// Whether reading the source failed (it changed while read): the records given are not the file's.
    fn read_failed(&self) -> bool {
        matches!(self, Splitter::Pieces(split) if split.failed)
    }

    /// The next record as `(field bytes base, record start offset, 1-based line of its start)`, its fields into
    /// `fields`.
    #[inline(always)]
    fn next<'s>(&'s mut self, fields: &mut Fields) -> Result<Option<Record<'s>>, csv::Error> {
        match self {
            Splitter::Plain { bytes, cursor } => loop {
                match plain_record(bytes, cursor, fields) {
                    Scanned::Record(start, line, terminated) => {
                        return Ok(Some((bytes, start as u64, line, Some(terminated))));
                    }
                    Scanned::Blank => continue,
                    Scanned::End => return Ok(None),
                }
            },
            Splitter::Pieces(split) => {
                let (start, line, terminated) = loop {
                    if split.cursor.position >= split.parse_end {
                        if !split.advance() {
                            return Ok(None);
                        }
                        continue;
                    }
                    let bytes = &split.reader.buffer[..split.parse_end];
                    match plain_record(bytes, &mut split.cursor, fields) {
                        Scanned::Record(start, line, terminated) => {
                            break (start, line, terminated);
                        }
                        Scanned::Blank | Scanned::End => continue,
                    }
                };
                let offset = split.reader.position + start as u64 - split.marks;
                Ok(Some((
                    &split.reader.buffer[..split.parse_end],
                    offset,
                    line,
                    Some(terminated),
                )))
            }
            Splitter::Quoted {
                bytes,
                reader,
                record,
            } => {
                if !reader.read_byte_record(record)? {
                    return Ok(None);
                }
                fields.gap = 0;
                fields.count = 0;
                fields.starts[0] = 0;
                for range in (0..record.len()).filter_map(|index| record.range(index)) {
                    if fields.count == MAX_FIELDS + 1 {
                        break;
                    }
                    fields.starts[fields.count] = range.start;
                    fields.count += 1;
                    fields.starts[fields.count] = range.end;
                }
                let (offset, line) = record
                    .position()
                    .map_or((0, 0), |position| (position.byte(), position.line()));
                // The reader reports the position where it started reading, before the blank lines and the
                // line feed of a CRLF it skipped; the record's own line counts those too.
                let skipped = bytes
                    .get(offset as usize..record_start(bytes, offset))
                    .unwrap_or_default()
                    .iter()
                    .filter(|byte| **byte == b'\n')
                    .count() as u64;
                // The record's own first byte, as the plain split gives it: one offset for both paths.
                let start = record_start(bytes, offset) as u64;
                Ok(Some((record.as_slice(), start, line + skipped, None)))
            }
        }
    }
}

/// Parses `bytes` (a whole metrics.csv). `warnings` receives row-level findings without run/file; the caller
/// adds those.
pub(crate) fn parse(bytes: &[u8], warnings: &mut Vec<Warning>) -> Result<ParsedMetrics, FileRejected> {
    parse_as(bytes, warnings, Reading::default())
}

/// How [`parse_as`] reads a file. [`parse`] takes the default; the other readings exist so that the tests and
/// the fuzz target can check that every way of reading a file gives the same result.
#[derive(Clone, Copy)]
pub(crate) struct Reading {
    /// Through the csv crate even where the plain split would be taken.
    pub general: bool,
    /// A quote-free file's rows are parsed in chunks of about this many bytes (tiny ones in the fuzz target).
    pub chunk_bytes: usize,
    /// With [`parse_rows_portably`] even where the processor has the bit instructions [`parse_rows`] would use
    /// (a test run exercises only one of them otherwise).
    pub portable: bool,
}

impl Default for Reading {
    fn default() -> Reading {
        Reading {
            general: false,
            chunk_bytes: CHUNK_BYTES,
            portable: false,
        }
    }
}

/// A quote-free file's rows are parsed in chunks of about this many bytes, split at line ends, on every core
/// rayon has (cells, counts and value lists merged in file order, so the result is the same as one pass).
const CHUNK_BYTES: usize = 8 << 20;

/// How a file read in pieces is read: a piece at a time, this many bytes (a quarter of a core's cache on this
/// project's machines), and for its header the first piece of this many.
const PIECE_BYTES: usize = 256 << 10;
const HEADER_PIECE_BYTES: usize = 64 << 10;

/// [`parse`] of a source of `size` bytes read in pieces (`metrics_csv/pieces.rs`), its chunks on every core as
/// with the whole file, and the same result: the file is never held whole. `None` when the file is not for this
/// reading, which the caller then reads whole: its header is not a whole line in the first piece, it holds a
/// quote (it is the csv crate's to read), or it changed while it was read.
pub(crate) fn parse_source(
    source: &dyn Source,
    size: u64,
    warnings: &mut Vec<Warning>,
) -> Option<Result<ParsedMetrics, FileRejected>> {
    parse_source_in(source, size, warnings, CHUNK_BYTES, PIECE_BYTES)
}

/// [`parse_source`] with chunks and pieces of the given sizes: the fuzz target reads its inputs in tiny ones.
pub(crate) fn parse_source_in(
    source: &dyn Source,
    size: u64,
    warnings: &mut Vec<Warning>,
    chunk_bytes: usize,
    piece_bytes: usize,
) -> Option<Result<ParsedMetrics, FileRejected>> {
    let before = warnings.len();
    let parsed = read_pieces(
        source,
        size,
        warnings,
        chunk_bytes.max(1),
        piece_bytes.max(1),
    );
    if parsed.is_none() {
        // What this reading warned about is said again by the reading of the whole file.
        warnings.truncate(before);
    }
    parsed
}

fn read_pieces(
    source: &dyn Source,
    size: u64,
    warnings: &mut Vec<Warning>,
    chunk_bytes: usize,
    piece_bytes: usize,
) -> Option<Result<ParsedMetrics, FileRejected>> {
    // The header, a whole line of the first piece with something besides blanks in it (an empty file or one
    // of blanks, a header longer than the piece, and bare carriage returns are for the reading of the whole).
    let (header, data_start, first_line, marks) = {
        let mut head = PieceReader::new(source, 0, size, HEADER_PIECE_BYTES);
        head.fill().ok()?;
        let first = &head.buffer[..head.filled];
        if let Some(rejected) = header_too_long(first, size) {
            return Some(Err(rejected));
        }
        let data = without_boms(first);
        let marks = (first.len() - data.len()) as u64;
        let mut splitter = Splitter::new(data, false);
        let mut fields = Fields::new();
        let header: Vec<String> = match splitter.next(&mut fields) {
            Ok(Some((base, _, _, Some(true)))) => fields
                .ranges()
                .map(|range| String::from_utf8_lossy(&base[range]).trim().to_string())
                .collect(),
            _ => return None,
        };
        if splitter.saw_quote() || header.iter().all(String::is_empty) {
            return None;
        }
        let Splitter::Plain { cursor, .. } = splitter else {
            return None;
        };
        (header, marks + cursor.position as u64, cursor.line, marks)
    };
    let columns = match find_columns(&header, warnings) {
        Ok(columns) => columns,
        Err(rejected) => return Some(Err(rejected)),
    };
    let mut last = [0u8; 1];
    let ends_with_newline = match source.read_at(&mut last, size.checked_sub(1)?) {
        Ok(1) => last[0] == b'\n' || last[0] == b'\r',
        _ => return None,
    };
    let context = RowContext {
        bytes: &[],
        base_offset: 0,
        columns: &columns,
        width: header.len(),
        ends_with_newline,
        portable: false,
    };
    let chunk_count = size
        .saturating_sub(data_start)
        .div_ceil(chunk_bytes as u64)
        .max(1);
    use rayon::prelude::*;
    let chunks: Vec<RowsOut> = (0..chunk_count)
        .into_par_iter()
        .map(|chunk| {
            let start = data_start + chunk * chunk_bytes as u64;
            let limit = if chunk + 1 == chunk_count {
                size
            } else {
                start + chunk_bytes as u64
            };
            // The first chunk starts at a line's start and counts lines from the header's end; the others from
            // 0, made absolute when the chunks are merged.
            let first = (chunk == 0).then_some(first_line);
            let split = PieceSplit::new(source, (start, limit, size), first, marks, piece_bytes);
            parse_rows(&context, Splitter::Pieces(Box::new(split)))
        })
        .collect();
    if chunks
        .iter()
        .any(|chunk| chunk.saw_quote || chunk.read_failed)
    {
        return None;
    }
    Some(Ok(merged_parse(header, chunks, &[], warnings)))
}

/// The longest header line read: the contract's columns take about 300 bytes, and a file without a line break
/// in its first 64 KiB (a binary file, a file of NULs) is not a metrics table.
pub(crate) const MAX_HEADER_BYTES: usize = HEADER_PIECE_BYTES;

/// The rejection of a file of `size` bytes whose first line is longer than [`MAX_HEADER_BYTES`] (`first` is at
/// least its first bytes): decided on the head alone, so such a file is never held whole.
pub(crate) fn header_too_long(first: &[u8], size: u64) -> Option<FileRejected> {
    let head = &first[..first.len().min(MAX_HEADER_BYTES)];
    if size <= MAX_HEADER_BYTES as u64 || memchr::memchr2(b'\n', b'\r', head).is_some() {
        return None;
    }
    let start = String::from_utf8_lossy(&head[..head.len().min(256)]).into_owned();
    Some(FileRejected {
        kind: "line_too_long",
        line: Some(1),
        message: format!(
            "the first line is longer than {MAX_HEADER_BYTES} bytes (it starts {:?}); expected a header line \
             naming the metrics columns; the file is not read",
            cellscope_model::facts::excerpt(&start, 60)
        ),
    })
}

/// [`parse`] the way `reading` says.
pub(crate) fn parse_as(
    bytes: &[u8],
    warnings: &mut Vec<Warning>,
    reading: Reading,
) -> Result<ParsedMetrics, FileRejected> {
    let bytes = without_boms(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(FileRejected {
            kind: "empty_file",
            line: None,
            message: "the file is empty: expected a header line naming the metrics columns".into(),
        });
    }
    if let Some(rejected) = header_too_long(bytes, bytes.len() as u64) {
        return Err(rejected);
    }
    if memchr::memchr(b'\n', bytes).is_none() && memchr::memchr(b'\r', bytes).is_some() {
        // Read as one line, such a file gave one warning per field; it is one fault, said once.
        return Err(FileRejected {
            kind: "bare_cr_line_endings",
            line: None,
            message: "lines end with a bare carriage return (CR, as classic Mac OS wrote them), never a line feed; \
                      expected LF or CRLF line endings; the file is not read (`tr '\\r' '\\n'` converts it)"
                .into(),
        });
    }
    // The plain split notes any quote it passes; a file holding one is read again by the csv crate, from the start
    // (what the first reading warned about is taken back, as the second says it again).
    let warnings_before = warnings.len();
    let mut reading = reading;
    loop {
        let splitter = Splitter::new(bytes, reading.general);
        match parse_records(bytes, warnings, splitter, reading)? {
            Some(parsed) => return Ok(parsed),
            None => {
                warnings.truncate(warnings_before);
                reading.general = true;
            }
        }
    }
}

/// Parses the header and the records `splitter` gives. `None` when the plain split passed a quote: then the file
/// is the csv crate's to read.
fn parse_records(
    bytes: &[u8],
    warnings: &mut Vec<Warning>,
    mut splitter: Splitter<'_>,
    reading: Reading,
) -> Result<Option<ParsedMetrics>, FileRejected> {
    let chunk_bytes = reading.chunk_bytes;
    let mut fields = Fields::new();
    let header: Vec<String> = match splitter.next(&mut fields) {
        Ok(Some((base, _, _, _))) => fields
            .ranges()
            .map(|range| String::from_utf8_lossy(&base[range]).trim().to_string())
            .collect(),
        Ok(None) => {
            return Err(FileRejected {
                kind: "empty_file",
                line: None,
                message: "the file has no header line".into(),
            });
        }
        Err(error) => {
            return Err(FileRejected {
                kind: "unreadable_header",
                line: Some(1),
                message: format!("cannot read the header line: {error}"),
            });
        }
    };
    if splitter.saw_quote() {
        return Ok(None);
    }
    let columns = find_columns(&header, warnings)?;
    let width = header.len();
    let ends_with_newline = bytes
        .last()
        .is_some_and(|byte| *byte == b'\n' || *byte == b'\r');

    let context = RowContext {
        bytes,
        base_offset: 0,
        columns: &columns,
        width,
        ends_with_newline,
        portable: reading.portable,
    };
    let chunks: Vec<RowsOut> = match splitter {
        Splitter::Plain { cursor, .. } if bytes.len() - cursor.position > chunk_bytes => {
            let bounds = chunk_bounds(bytes, cursor.position, chunk_bytes);
            use rayon::prelude::*;
            bounds
                .par_iter()
                .enumerate()
                .map(|(chunk, range)| {
                    // The first chunk counts lines from the header's end; the others from 0, made absolute below.
                    let line = if chunk == 0 { cursor.line } else { 0 };
                    let splitter = Splitter::Plain {
                        bytes: &bytes[..range.end],
                        cursor: PlainCursor::at(bytes, range.start, line),
                    };
                    parse_rows(&context, splitter)
                })
                .collect()
        }
        splitter => vec![parse_rows(&context, splitter)],
    };
    if chunks.iter().any(|chunk| chunk.saw_quote) {
        return Ok(None);
    }
    Ok(Some(merged_parse(header, chunks, bytes, warnings)))
}

/// The parse of a file from its header and its chunks' rows (in file order): merged, with the file's warnings
/// about rows, and each cell's statistics. `bytes` is the whole file when any chunk was read by the csv crate
/// (its cells' first lines are found by their offsets), else it is not read.
fn merged_parse(
    header: Vec<String>,
    chunks: Vec<RowsOut>,
    bytes: &[u8],
    warnings: &mut Vec<Warning>,
) -> ParsedMetrics {
    let mut parsed = ParsedMetrics {
        header,
        ..ParsedMetrics::default()
    };
    let Merged {
        cells,
        row_warnings,
        unknown_statuses,
        lines_counted,
    } = merge(chunks, &mut parsed, warnings);

    if row_warnings > MAX_ROW_WARNINGS {
        warnings.push(Warning::error(
            "more_malformed_rows",
            format!(
                "{} further malformed rows are left out (only the first {MAX_ROW_WARNINGS} are listed)",
                row_warnings - MAX_ROW_WARNINGS
            ),
        ));
    }
    for (status, (first_line, count)) in unknown_statuses {
        warnings.push(
            Warning::warn(
                "unknown_status",
                format!(
                    "status `{}` is not a known value (ok, err, error, timeout, http_<code>); its {count} row(s) count \
                     as failed requests",
                    // Escaped, so an invisible `\r` or an escape sequence shows as what it is.
                    String::from_utf8_lossy(&status).escape_debug()
                ),
            )
            .line(first_line),
        );
    }

    // Each cell's quantiles need a selection over its values: a tenth of a cold index, spread over the cores.
    use rayon::prelude::*;
    parsed.cells = cells
        .into_par_iter()
        .map(|(key, accumulating)| {
            let mut cell = accumulating.cell;
            cell.stats = accumulating.accumulator.finish();
            // Kept only for the rare cells a warning will name. The csv crate's reading held the byte offset:
            // counting lines is a scan of the file, so it is done only for those cells.
            cell.first_line = match (cell.skip_rows > 0 && cell.rows > 0, lines_counted) {
                (false, _) => 0,
                (true, true) => cell.first_line,
                (true, false) => LazyLine {
                    bytes,
                    offset: cell.first_line,
                }
                .get(),
            };
            (key, cell)
        })
        .collect();
    parsed
}

/// What [`parse_rows`] shares between chunks: the bytes the chunks are in and its columns.
struct RowContext<'a> {
    /// The bytes the splitters read from: the whole file, or (read in pieces) a piece of it.
    bytes: &'a [u8],
    /// Where `bytes` starts in the file (counted after its byte-order marks): row offsets are the file's.
    base_offset: u64,
    columns: &'a Columns,
    width: usize,
    ends_with_newline: bool,
    /// Take [`parse_rows_portably`] whatever the processor (see [`Reading::portable`]).
    portable: bool,
}

/// The rows of one chunk (or the whole file): its cells in order of first appearance, counts and warnings.
/// `lines` is the splitter's line count at the chunk's end: absolute for the first chunk, from 0 for the others.
struct RowsOut {
    cells: Vec<(CellCoordinates, Accumulating)>,
    records: u64,
    malformed_rows: u64,
    warnings: Vec<Warning>,
    row_warnings: usize,
    unknown_statuses: BTreeMap<Vec<u8>, (u64, u64)>,
    lines: u64,
    /// The plain split passed a `"`: these rows are not the file's reading (see [`Splitter`]).
    saw_quote: bool,
    /// Whether lines were counted by the plain split (warnings, unknown statuses and the cells' `first_line`
    /// hold lines, from 0 at a later chunk's start) rather than by the csv crate (whose records are found by
    /// counting the line feeds before their offset, and a cell's `first_line` holds its offset until the end).
    lines_counted: bool,
    /// Reading the source in pieces failed: these rows are not the file's.
    read_failed: bool,
}

struct Merged {
    cells: Vec<(CellCoordinates, Accumulating)>,
    row_warnings: usize,
    unknown_statuses: BTreeMap<Vec<u8>, (u64, u64)>,
    /// Every chunk's [`RowsOut::lines_counted`].
    lines_counted: bool,
}

/// Chunks of `bytes[start..]` of about `chunk_bytes`, each ending just after a line feed (the last at the end).
fn chunk_bounds(bytes: &[u8], start: usize, chunk_bytes: usize) -> Vec<Range<usize>> {
    let mut bounds = Vec::new();
    let mut from = start;
    while from < bytes.len() {
        let target = (from + chunk_bytes.max(1)).min(bytes.len());
        let end = memchr::memchr(b'\n', &bytes[target.saturating_sub(1)..])
            .map_or(bytes.len(), |at| target.saturating_sub(1) + at + 1)
            .max(from + 1);
        bounds.push(from..end);
        from = end;
    }
    bounds
}

/// The chunks' results in file order as one: a cell first seen in a later chunk goes after those of earlier
/// ones, and a cell's rows, offsets and values are appended in chunk order, so the merge equals one pass.
fn merge(chunks: Vec<RowsOut>, parsed: &mut ParsedMetrics, warnings: &mut Vec<Warning>) -> Merged {
    let mut merged = Merged {
        cells: Vec::new(),
        row_warnings: 0,
        unknown_statuses: BTreeMap::new(),
        lines_counted: chunks.iter().all(|chunk| chunk.lines_counted),
    };
    let single = chunks.len() == 1;
    let mut position: foldhash::HashMap<CellCoordinates, usize> = HashMap::default();
    let mut line_base = 0u64;
    for (chunk_index, chunk) in chunks.into_iter().enumerate() {
        parsed.records += chunk.records;
        parsed.malformed_rows += chunk.malformed_rows;
        // Each chunk listed at most the first MAX_ROW_WARNINGS of its own; together they are cut to as many.
        // (A single chunk's list is taken whole: the csv crate's path adds one uncounted warning when it stops.)
        let room = if single {
            usize::MAX
        } else {
            MAX_ROW_WARNINGS.saturating_sub(merged.row_warnings)
        };
        // The first chunk counted absolute lines; a later one counted from 0 at its start.
        let offset_lines = if chunk_index == 0 { 0 } else { line_base };
        warnings.extend(chunk.warnings.into_iter().take(room).map(|mut warning| {
            if let Some(line) = &mut warning.line {
                *line += offset_lines;
            }
            warning
        }));
        merged.row_warnings += chunk.row_warnings;
        for (status, (line, count)) in chunk.unknown_statuses {
            let entry = merged
                .unknown_statuses
                .entry(status)
                .or_insert((line + offset_lines, 0));
            entry.1 += count;
        }
        for (coordinates, mut accumulating) in chunk.cells {
            // Set only by a kept row (a cell whose rows were all left out keeps 0, as in one pass).
            if !accumulating.cell.row_offsets.is_empty() {
                accumulating.cell.first_row_line += offset_lines;
            }
            if chunk.lines_counted {
                accumulating.cell.first_line += offset_lines;
            }
            if single {
                merged.cells.push((coordinates, accumulating));
                continue;
            }
            match position.get(&coordinates) {
                Some(&at) => merged.cells[at].1.absorb(accumulating),
                None => {
                    position.insert(coordinates.clone(), merged.cells.len());
                    merged.cells.push((coordinates, accumulating));
                }
            }
        }
        line_base = offset_lines + chunk.lines;
    }
    merged
}

impl Accumulating {
    /// Adds the rows of a later chunk of the same cell.
    fn absorb(&mut self, later: Accumulating) {
        let cell = &mut self.cell;
        let other = later.cell;
        // The first kept row's line; `first_line` stays that of the row that made the cell, kept or not.
        if cell.row_offsets.is_empty() && !other.row_offsets.is_empty() {
            cell.first_row_line = other.first_row_line;
        }
        cell.rows += other.rows;
        cell.ok_rows += other.ok_rows;
        cell.failed_rows += other.failed_rows;
        cell.skip_rows += other.skip_rows;
        cell.malformed_rows += other.malformed_rows;
        for (status, count) in other.failed_by_status {
            *cell.failed_by_status.entry(status).or_default() += count;
        }
        for (id, count) in other.row_run_ids {
            let entry = cell.row_run_ids.entry(id).or_insert(IdCount {
                rows: 0,
                first_offset: count.first_offset,
            });
            entry.rows += count.rows;
        }
        cell.row_offsets.extend(other.row_offsets);
        self.accumulator.append(later.accumulator);
    }
}

/// Parses the records `splitter` gives, up to its end.
///
/// The plain split counts and walks the set bits of its delimiter masks, for which x86-64's baseline has no
/// instructions (a population count is a dozen instructions without `popcnt`, clearing the lowest bit two
/// without `blsr`). Where the processor has them (every x86-64 processor since about 2013), the same code is
/// compiled a second time with them enabled and taken instead.
#[allow(unsafe_code)] // a call of a `target_feature` function; see the SAFETY comment.
fn parse_rows(context: &RowContext<'_>, splitter: Splitter<'_>) -> RowsOut {
    #[cfg(target_arch = "x86_64")]
    if !context.portable
        && std::arch::is_x86_feature_detected!("popcnt")
        && std::arch::is_x86_feature_detected!("bmi1")
    {
        // SAFETY: the processor has both features, as just checked.
        return unsafe { parse_rows_with_bit_instructions(context, splitter) };
    }
    parse_rows_portably(context, splitter)
}

/// [`parse_rows_portably`] compiled with `popcnt` and `bmi1`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1")]
fn parse_rows_with_bit_instructions(context: &RowContext<'_>, splitter: Splitter<'_>) -> RowsOut {
    parse_rows_portably(context, splitter)
}

/// The body of [`parse_rows`], inlined into each of its two compilations: each record the splitter gives, until
/// its end (or a quote, which hands the file to the csv crate: the rest of this reading would be thrown away).
#[inline(always)]
fn parse_rows_portably(context: &RowContext<'_>, mut splitter: Splitter<'_>) -> RowsOut {
    let mut parse = RowParse::new(context, splitter.is_plain());
    let mut fields = Fields::new();
    while !splitter.saw_quote() {
        let (base, offset, record_line, terminated) = match splitter.next(&mut fields) {
            Ok(Some(next)) => next,
            Ok(None) => break,
            Err(error) => {
                parse.unreadable(&error);
                break;
            }
        };
        parse.row(&Row {
            base,
            fields: &fields,
            offset,
            record_line,
            terminated,
        });
    }
    parse.finish(&splitter)
}

/// One record as a splitter gives it: its fields' bytes in `base`, its offset, the line the plain split counted
/// and whether a line terminator ended it (`None`: the csv crate does not say).
struct Row<'r> {
    base: &'r [u8],
    fields: &'r Fields,
    offset: u64,
    record_line: u64,
    terminated: Option<bool>,
}

impl<'r> Row<'r> {
    #[inline(always)]
    fn field(&self, index: usize) -> &'r [u8] {
        &self.base[self.fields.range(index)]
    }

    #[inline(always)]
    fn number(&self, index: usize) -> Option<f64> {
        parse_number(self.field(index))
    }
}

/// A run of consecutive rows of one cell carrying one run id: the cell, the id, how many rows, the offset of the
/// first. Run ids are counted per cell in such runs, flushed into the cell's map when they change.
type PendingRun = (usize, Vec<u8>, u32, u64);

/// What parsing one chunk's rows keeps from one row to the next.
struct RowParse<'c> {
    context: &'c RowContext<'c>,
    plain: bool,
    /// The first and last key column: in a plain split the bytes between them are one slice of the file.
    key_span_columns: (usize, usize),
    /// What the chunk gives; its cells are gathered here too.
    out: RowsOut,
    index_by_key: foldhash::HashMap<Vec<u8>, usize>,
    index_by_coordinates: foldhash::HashMap<CellCoordinates, usize>,
    /// The key fields of the row being looked up, joined.
    composite: Vec<u8>,
    /// The previous row's key fields and cell: consecutive rows almost always share a cell, so a field-by-field
    /// comparison usually replaces the hash lookup.
    last_key: Vec<Vec<u8>>,
    last_cell: Option<usize>,
    last_key_span: Vec<u8>,
    pending_run: Option<PendingRun>,
}

impl<'c> RowParse<'c> {
    #[inline(always)]
    fn new(context: &'c RowContext<'c>, plain: bool) -> Self {
        let columns = context.columns;
        RowParse {
            context,
            plain,
            key_span_columns: (
                columns.key.iter().copied().min().unwrap_or(0),
                columns.key.iter().copied().max().unwrap_or(0),
            ),
            out: RowsOut {
                cells: Vec::new(),
                records: 0,
                malformed_rows: 0,
                warnings: Vec::new(),
                row_warnings: 0,
                unknown_statuses: BTreeMap::new(),
                lines: 0,
                saw_quote: false,
                lines_counted: plain,
                read_failed: false,
            },
            index_by_key: HashMap::default(),
            index_by_coordinates: HashMap::default(),
            composite: Vec::with_capacity(128),
            last_key: vec![Vec::new(); columns.key.len()],
            last_cell: None,
            last_key_span: Vec::with_capacity(256),
            pending_run: None,
        }
    }

    /// A row-level warning, kept while there are at most [`MAX_ROW_WARNINGS`].
    #[inline(always)]
    fn report(&mut self, warning: Warning) {
        self.out.row_warnings += 1;
        if self.out.row_warnings <= MAX_ROW_WARNINGS {
            self.out.warnings.push(warning);
        }
    }

    /// The splitter could go no further: the rows before are kept, and the error is said at its line.
    #[cold]
    fn unreadable(&mut self, error: &csv::Error) {
        let line = error.position().map(|position| {
            LazyLine {
                bytes: self.context.bytes,
                offset: position.byte(),
            }
            .get()
        });
        let mut warning = Warning::error(
            "unreadable_row",
            format!(
                "cannot read the file past this point: {error}; the rows before it are indexed"
            ),
        );
        warning.line = line;
        self.out.warnings.push(warning);
    }

    /// One record: left out when malformed, else counted in its cell, and an `ok` row's numbers taken into the
    /// cell's statistics.
    #[inline(always)]
    fn row(&mut self, row: &Row<'_>) {
        self.out.records += 1;
        // The record's line: counted by the plain split as it went (from 0 at a later chunk's start, made
        // absolute when the chunks are merged), else found by counting the line feeds before it.
        let line = RecordLine {
            counted: self.plain.then_some(row.record_line),
            lazy: LazyLine {
                bytes: self.context.bytes,
                offset: row.offset,
            },
        };
        if self.is_misshapen(row, line) {
            return;
        }
        let Some(cell_index) = self.cell_of(row, line) else {
            return;
        };
        let Some(same_run_id) = self.run_id_checked(row, cell_index, line) else {
            return;
        };
        let columns = self.context.columns;
        let status = row.field(columns.status);
        let wall_ms = row.number(columns.wall_ms);
        let class = RowClass::classify(status, wall_ms, || {
            [
                columns.agent_id,
                columns.request_id,
                columns.request_sequence,
            ]
            .map(|column| row.number(column))
        });
        let sample = if class == RowClass::Ok {
            match self.sample(row, wall_ms, cell_index, line) {
                Some(sample) => Some(sample),
                None => return,
            }
        } else {
            None
        };
        self.count(row, cell_index, same_run_id, (class, status, sample), line);
    }

    /// Whether the record is left out for its shape (with a warning): a quote that swallowed the lines after it,
    /// or another number of fields than the header has.
    #[inline(always)]
    fn is_misshapen(&mut self, row: &Row<'_>, line: RecordLine<'_>) -> bool {
        let width = self.context.width;
        // A plain split ends every record at a line feed, so only the quoted path can hold one in a field.
        let swallowed = if self.plain {
            0
        } else {
            swallowed_lines(row, width)
        };
        if swallowed > 0 {
            self.out.malformed_rows += swallowed as u64 + 1;
            self.report(
                Warning::error(
                    "unclosed_quote",
                    format!(
                        "a quote opened on this line is not closed on it, so the next {swallowed} line(s) were read \
                         into this one row; all {} lines are left out",
                        swallowed + 1
                    ),
                )
                .line(line.get()),
            );
            return true;
        }
        if row.fields.len() != width {
            self.out.malformed_rows += 1;
            let warning = self.ragged_row(row);
            self.report(warning.line(line.get()));
            return true;
        }
        false
    }

    /// The warning for a row of another width than the header's.
    #[cold]
    fn ragged_row(&self, row: &Row<'_>) -> Warning {
        let (bytes, width, count) = (self.context.bytes, self.context.width, row.fields.len());
        // A short final line without a terminator is what a run that is still writing looks like. (Only the
        // file's last line can lack one; the csv crate does not say, so its record is looked for.)
        let is_last_line = row.terminated.map_or_else(
            || {
                let start = record_start(bytes, row.offset);
                !bytes.get(start..).unwrap_or_default().contains(&b'\n')
            },
            |terminated| !terminated,
        );
        let found = if count >= MAX_FIELDS {
            format!("more than {MAX_FIELDS}")
        } else {
            count.to_string()
        };
        if is_last_line && !self.context.ends_with_newline && count < width {
            Warning::error(
                "truncated_last_line",
                format!(
                    "the last line is incomplete ({found} of {width} fields, no line terminator): the run may \
                     still be writing; the line is left out"
                ),
            )
        } else {
            Warning::error(
                "ragged_row",
                format!(
                    "expected {width} fields as in the header, found {found}; the row is left out"
                ),
            )
        }
    }

    /// The row's cell (its place in `out.cells`), remembered for the next row; `None` when its key fields are not
    /// a cell's (the row is left out with a warning).
    #[inline(always)]
    fn cell_of(&mut self, row: &Row<'_>, line: RecordLine<'_>) -> Option<usize> {
        let columns = self.context.columns;
        // In a plain split the bytes from the first key column to the last, delimiters included, are one slice
        // of the file; when it equals the previous row's, every key field does (the same bytes split at the same
        // commas), so one comparison usually decides. Otherwise the key fields are compared one by one (the
        // columns between them may differ while the key does not).
        let key_span = if self.plain {
            &row.base[row
                .fields
                .span(self.key_span_columns.0, self.key_span_columns.1)]
        } else {
            &[][..]
        };
        let same_cell = self.last_cell.is_some()
            && ((self.plain && key_span == self.last_key_span.as_slice())
                || columns
                    .key
                    .iter()
                    .zip(&self.last_key)
                    .all(|(&column, previous)| row.field(column) == previous.as_slice()));
        let cell_index = if same_cell {
            self.last_cell?
        } else {
            self.look_up_cell(row, line)?
        };
        if !same_cell || key_span != self.last_key_span.as_slice() {
            for (&column, previous) in columns.key.iter().zip(self.last_key.iter_mut()) {
                previous.clear();
                previous.extend_from_slice(row.field(column));
            }
            self.last_key_span.clear();
            self.last_key_span.extend_from_slice(key_span);
            self.last_cell = Some(cell_index);
        }
        Some(cell_index)
    }

    /// The cell of a row whose key is not the previous row's: by its key's bytes, else by its coordinates (a cell
    /// made for it when it is the first of its cell).
    #[inline(always)]
    fn look_up_cell(&mut self, row: &Row<'_>, line: RecordLine<'_>) -> Option<usize> {
        let columns = self.context.columns;
        self.composite.clear();
        for (position, &column) in columns.key.iter().enumerate() {
            if position > 0 {
                self.composite.push(0x1f);
            }
            self.composite.extend_from_slice(row.field(column));
        }
        if let Some(index) = self.index_by_key.get(&self.composite).copied() {
            return Some(index);
        }
        match row_cell_key(&|index| row.field(index), columns) {
            // Other bytes can name a cell already seen (`01` and `1` are both N = 1; found by comparing chunked
            // and one-pass parsing): the cell is found by its coordinates, not its bytes.
            Ok(key) => {
                let index = match self.index_by_coordinates.get(&key) {
                    Some(&index) => index,
                    None => self.new_cell(key, row),
                };
                self.index_by_key.insert(self.composite.clone(), index);
                Some(index)
            }
            Err(message) => {
                self.out.malformed_rows += 1;
                self.report(Warning::error("bad_key_field", message).line(line.get()));
                None
            }
        }
    }

    /// A cell first met at `row`.
    fn new_cell(&mut self, key: CellCoordinates, row: &Row<'_>) -> usize {
        let index = self.out.cells.len();
        self.index_by_coordinates.insert(key.clone(), index);
        self.out.cells.push((
            key,
            Accumulating {
                cell: ParsedCell {
                    first_line: if self.plain {
                        row.record_line
                    } else {
                        row.offset
                    },
                    ..ParsedCell::default()
                },
                accumulator: CellAccumulator::new(),
            },
        ));
        index
    }

    /// Whether the row's run id is the pending run's (`Some(true)`); `None` when it is not UTF-8, and the row is
    /// left out with a warning.
    #[inline(always)]
    fn run_id_checked(
        &mut self,
        row: &Row<'_>,
        cell_index: usize,
        line: RecordLine<'_>,
    ) -> Option<bool> {
        let run_id = row.field(self.context.columns.run_id);
        // The id of the previous row (the usual case) was checked when it was first seen.
        let same_run_id =
            self.pending_run
                .as_ref()
                .is_some_and(|(pending_cell, pending_id, _, _)| {
                    *pending_cell == cell_index && pending_id.as_slice() == run_id
                });
        if !same_run_id && std::str::from_utf8(run_id).is_err() {
            self.out.malformed_rows += 1;
            self.out.cells[cell_index].1.cell.malformed_rows += 1;
            self.report(
                Warning::error(
                    "invalid_utf8",
                    "column `run_id` is not valid UTF-8; the row is left out",
                )
                .line(line.get()),
            );
            return None;
        }
        Some(same_run_id)
    }

    /// An `ok` row's numbers; `None` when one is not a number (the row is left out with a warning).
    #[inline(always)]
    fn sample(
        &mut self,
        row: &Row<'_>,
        wall_ms: Option<f64>,
        cell_index: usize,
        line: RecordLine<'_>,
    ) -> Option<RequestSample> {
        let columns = self.context.columns;
        let field = |index| row.field(index);
        let number = |index| row.number(index);
        let sample = usual_sample(&field, &number, columns, wall_ms)
            .map_or_else(|| request_sample(&field, &number, columns, wall_ms), Ok);
        match sample {
            Ok(sample) => Some(sample),
            Err(message) => {
                self.out.malformed_rows += 1;
                self.out.cells[cell_index].1.cell.malformed_rows += 1;
                self.report(Warning::error("bad_number", message).line(line.get()));
                None
            }
        }
    }

    /// Counts a kept row in its cell: its run id, its offset, and as a skip sentinel, an `ok` row (its `sample`
    /// into the statistics) or a failed one by status.
    #[inline(always)]
    fn count(
        &mut self,
        row: &Row<'_>,
        cell_index: usize,
        same_run_id: bool,
        (class, status, sample): (RowClass, &[u8], Option<RequestSample>),
        line: RecordLine<'_>,
    ) {
        let offset = self.context.base_offset + row.offset;
        match &mut self.pending_run {
            Some((_, _, count, _)) if same_run_id => *count += 1,
            _ => {
                let run_id = row.field(self.context.columns.run_id).to_vec();
                let previous = self.pending_run.replace((cell_index, run_id, 1, offset));
                flush_run(&mut self.out.cells, previous);
            }
        }
        let (_, accumulating) = &mut self.out.cells[cell_index];
        let cell = &mut accumulating.cell;
        if cell.row_offsets.is_empty() {
            cell.first_row_line = row.record_line;
        }
        cell.row_offsets.push(offset);
        if class == RowClass::Skip {
            cell.skip_rows += 1;
        } else if let Some(sample) = sample {
            cell.rows += 1;
            cell.ok_rows += 1;
            accumulating.accumulator.push(&sample);
        } else {
            cell.rows += 1;
            cell.failed_rows += 1;
            let status_text = String::from_utf8_lossy(status).into_owned();
            *cell.failed_by_status.entry(status_text).or_default() += 1;
            if !is_known_status(status) {
                let entry = self
                    .out
                    .unknown_statuses
                    .entry(status.to_vec())
                    .or_insert_with(|| (line.get(), 0));
                entry.1 += 1;
            }
        }
    }

    /// The chunk's rows, once the splitter has given its last.
    #[inline(always)]
    fn finish(mut self, splitter: &Splitter<'_>) -> RowsOut {
        flush_run(&mut self.out.cells, self.pending_run.take());
        self.out.lines = splitter.line();
        self.out.saw_quote = splitter.saw_quote();
        self.out.read_failed = splitter.read_failed();
        self.out
    }
}

/// The lines after its first that a quote left open read into the record's fields: 0 for a record without a line
/// break in a field, and for one whose line breaks are its data.
///
/// RFC 4180 lets a quoted field hold line breaks (an error text, a run directory's name written as its run id),
/// so a line break alone says nothing. A quote left open reads whole lines into one field until a later quote
/// closes it or the file ends: the record then has another width than the header's, or its fields hold the
/// `width - 1` commas of every line they swallowed whole (and at least one line's worth), which text a benchmark
/// writes into a field does not.
fn swallowed_lines(row: &Row<'_>, width: usize) -> usize {
    let (mut line_breaks, mut whole_lines, mut commas) = (0, 0, 0);
    for range in row.fields.ranges() {
        let field = &row.base[range];
        let breaks = memchr::memchr_iter(b'\n', field).count();
        if breaks > 0 {
            line_breaks += breaks;
            // The lines between the field's first and last line break.
            whole_lines += breaks - 1;
            commas += memchr::memchr_iter(b',', field).count();
        }
    }
    let swallowed =
        row.fields.len() != width || commas >= width.saturating_sub(1) * whole_lines.max(1);
    if line_breaks > 0 && swallowed {
        line_breaks
    } else {
        0
    }
}

/// Adds a run of rows with one run id to its cell's count of that id.
#[inline(always)]
fn flush_run(cells: &mut [(CellCoordinates, Accumulating)], pending: Option<PendingRun>) {
    if let Some((cell_index, run_id, count, first_offset)) = pending {
        let text = String::from_utf8_lossy(&run_id).into_owned();
        let entry = cells[cell_index]
            .1
            .cell
            .row_run_ids
            .entry(text)
            .or_insert(IdCount {
                rows: 0,
                first_offset,
            });
        entry.rows += count;
    }
}

/// The 1-based line of the record that the parser reports at byte `offset` of `bytes` (the file without its BOM).
pub(crate) fn line_at(bytes: &[u8], offset: u64) -> u64 {
    LazyLine { bytes, offset }.get()
}

/// The 1-based line of a record: the one the plain split counted, or computed from its offset on demand.
#[derive(Clone, Copy)]
struct RecordLine<'a> {
    counted: Option<u64>,
    lazy: LazyLine<'a>,
}

impl RecordLine<'_> {
    fn get(self) -> u64 {
        self.counted.unwrap_or_else(|| self.lazy.get())
    }
}

/// A 1-based line number computed from a byte offset on demand.
#[derive(Clone, Copy)]
struct LazyLine<'a> {
    bytes: &'a [u8],
    offset: u64,
}

impl LazyLine<'_> {
    fn get(self) -> u64 {
        let end = record_start(self.bytes, self.offset);
        self.bytes[..end]
            .iter()
            .filter(|byte| **byte == b'\n')
            .count() as u64
            + 1
    }
}

/// The first byte of a record whose csv position is `offset`. After a CRLF terminator the reader reports the
/// record as starting at the `\n` it has not consumed yet, so leading terminator bytes are skipped.
pub(crate) fn record_start(bytes: &[u8], offset: u64) -> usize {
    let mut start = (offset as usize).min(bytes.len());
    while bytes
        .get(start)
        .is_some_and(|byte| *byte == b'\r' || *byte == b'\n')
    {
        start += 1;
    }
    start
}

fn find_columns(header: &[String], warnings: &mut Vec<Warning>) -> Result<Columns, FileRejected> {
    let mut positions: HashMap<&str, usize> = HashMap::new();
    for (position, name) in header.iter().enumerate() {
        if positions.insert(name.as_str(), position).is_some() {
            warnings.push(
                Warning::warn(
                    "duplicate_column",
                    format!("column `{name}` appears twice; the first one is used"),
                )
                .line(1),
            );
        }
    }
    // `insert` above kept the last duplicate; restore the first one.
    for (position, name) in header.iter().enumerate().rev() {
        positions.insert(name.as_str(), position);
    }
    let missing: Vec<&str> = REQUIRED_COLUMNS
        .iter()
        .copied()
        .filter(|name| !positions.contains_key(name))
        .collect();
    if !missing.is_empty() {
        return Err(FileRejected {
            kind: "missing_column",
            line: Some(1),
            message: format!(
                "missing required column(s) {}; expected a header with {} (found: {})",
                missing
                    .iter()
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                REQUIRED_COLUMNS.join(", "),
                header.join(", ")
            ),
        });
    }
    let at = |name: &str| positions[name];
    Ok(Columns {
        key: [
            at("suite"),
            at("phase"),
            at("backend"),
            at("model"),
            at("workload"),
            at("n_agents"),
            at("rep"),
        ],
        run_id: at("run_id"),
        agent_id: at("agent_id"),
        request_id: at("request_id"),
        request_sequence: at("request_sequence"),
        wall_ms: at("wall_ms"),
        prompt_tokens: at("prompt_tokens"),
        completion_tokens: at("completion_tokens"),
        submit_time_s: at("submit_time_s"),
        complete_time_s: at("complete_time_s"),
        status: at("status"),
        ttft_ms: positions.get("ttft_ms").copied(),
    })
}

fn row_cell_key<'a>(
    field: &impl Fn(usize) -> &'a [u8],
    columns: &Columns,
) -> Result<CellCoordinates, String> {
    let text = |position: usize, name: &str| -> Result<String, String> {
        let field = field(columns.key[position]);
        match std::str::from_utf8(field) {
            Ok(text) if !text.trim().is_empty() => Ok(text.trim().to_string()),
            Ok(_) => Err(format!(
                "column `{name}` is empty; expected a cell key value; the row is left out"
            )),
            Err(error) => Err(format!(
                "column `{name}` is not valid UTF-8 (invalid byte 0x{:02x} at offset {}); the row is left out",
                field[error.valid_up_to()],
                error.valid_up_to()
            )),
        }
    };
    let count = |position: usize, name: &str| -> Result<u32, String> {
        let field = field(columns.key[position]);
        parse_count(field).ok_or_else(|| {
            format!(
                "column `{name}` is `{}`; expected a non-negative integer; the row is left out",
                String::from_utf8_lossy(field)
            )
        })
    };
    Ok(CellCoordinates {
        suite: text(0, "suite")?,
        phase: text(1, "phase")?,
        backend: text(2, "backend")?,
        model: text(3, "model")?,
        workload: text(4, "workload")?,
        config: cellscope_model::config::Config::new(),
        load: cellscope_model::Load::Concurrency(count(5, "n_agents")?),
        rep: count(6, "rep")?,
    })
}

/// [`request_sample`] of a row whose fields are all as expected, without building the messages for those that
/// are not; `None` for any other row, which [`request_sample`] then reads and names the first faulty field of.
/// This is the path of every usual row, and its checks are [`request_sample`]'s, in a form that costs nothing
/// when they pass.
#[inline(always)]
fn usual_sample<'a>(
    field: &impl Fn(usize) -> &'a [u8],
    parsed: &impl Fn(usize) -> Option<f64>,
    columns: &Columns,
    wall_ms: Option<f64>,
) -> Option<RequestSample> {
    let is_duration = |value: &f64| cellscope_model::stats::is_latency_ms(*value);
    let is_tokens = |value: &f64| cellscope_model::stats::is_token_count(*value);
    let ttft_ms = match columns.ttft_ms {
        Some(column) if !field(column).iter().all(u8::is_ascii_whitespace) => {
            Some(parsed(column).filter(is_duration)?)
        }
        _ => None,
    };
    let wall_ms = wall_ms.filter(is_duration)?;
    let submit_time_s = parsed(columns.submit_time_s).filter(|value| value.is_finite())?;
    let complete_time_s = parsed(columns.complete_time_s).filter(|value| value.is_finite())?;
    if complete_time_s < submit_time_s {
        return None;
    }
    Some(RequestSample {
        wall_ms,
        ttft_ms,
        prompt_tokens: parsed(columns.prompt_tokens).filter(is_tokens)?,
        completion_tokens: parsed(columns.completion_tokens).filter(is_tokens)?,
        submit_time_s,
        complete_time_s,
    })
}

/// The statistics fields of an ok row, or the message naming its first faulty field. `field` gives a column's
/// bytes, `parsed` its number (as [`parse_number`] reads it).
fn request_sample<'a>(
    field: &impl Fn(usize) -> &'a [u8],
    parsed: &impl Fn(usize) -> Option<f64>,
    columns: &Columns,
    wall_ms: Option<f64>,
) -> Result<RequestSample, String> {
    let number =
        |column: usize, name: &str| -> Result<f64, String> {
            parsed(column).filter(|value| value.is_finite()).ok_or_else(|| {
            format!(
                "column `{name}` is `{}`; expected a number in an ok row; the row is left out",
                String::from_utf8_lossy(field(column))
            )
        })
        };
    // A latency is a duration: a negative one (or one of days) is not a measurement.
    let duration = |value: f64, name: &str| -> Result<f64, String> {
        if cellscope_model::stats::is_latency_ms(value) {
            Ok(value)
        } else {
            Err(format!(
                "column `{name}` is `{value}`; expected a latency from 0 to {} ms; the row is left out",
                cellscope_model::stats::MAX_LATENCY_MS
            ))
        }
    };
    // A token count is a whole number that fits the counters tokenizers use (u32); anything else, such as a
    // negative count or 1e26, would be taken as a measurement and carried into every throughput.
    let tokens = |column: usize, name: &str| -> Result<f64, String> {
        let value = number(column, name)?;
        // In range, a value is whole exactly when it survives the round trip through u32 (which truncates);
        // `fract` calls libm's `trunc` on baseline x86-64, once for each of the two counts of every ok row.
        if cellscope_model::stats::is_token_count(value) {
            Ok(value)
        } else {
            Err(format!(
                "column `{name}` is `{}`; expected a whole number of tokens from 0 to {}; the row is left out",
                String::from_utf8_lossy(field(column)),
                u32::MAX
            ))
        }
    };
    let ttft_ms = match columns.ttft_ms {
        Some(column) if !field(column).iter().all(u8::is_ascii_whitespace) => {
            Some(duration(number(column, "ttft_ms")?, "ttft_ms")?)
        }
        _ => None,
    };
    // The caller parsed wall_ms already (for the sentinel test); only a failure is re-reported here.
    let wall_ms = match wall_ms.filter(|value| value.is_finite()) {
        Some(value) => duration(value, "wall_ms")?,
        None => number(columns.wall_ms, "wall_ms")?,
    };
    let submit_time_s = number(columns.submit_time_s, "submit_time_s")?;
    let complete_time_s = number(columns.complete_time_s, "complete_time_s")?;
    if complete_time_s < submit_time_s {
        return Err(format!(
            "complete_time_s ({complete_time_s}) is before submit_time_s ({submit_time_s}); the row is left out"
        ));
    }
    Ok(RequestSample {
        wall_ms,
        ttft_ms,
        prompt_tokens: tokens(columns.prompt_tokens, "prompt_tokens")?,
        completion_tokens: tokens(columns.completion_tokens, "completion_tokens")?,
        submit_time_s,
        complete_time_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded xorshift generator: each call gives a number below `bound`.
    pub(super) fn xorshift(mut state: u64) -> impl FnMut(u64) -> u64 {
        move |bound| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        }
    }

    /// Records, each a placeholder (lines are checked inside) and its fields.
    type Records = Vec<(u64, Vec<Vec<u8>>)>;

    /// Every record of `bytes` as the plain splitter and as the `csv` crate see it, field by field.
    fn records_both_ways(bytes: &[u8]) -> (Records, Records) {
        let mut plain = Splitter::Plain {
            bytes,
            cursor: PlainCursor::new(bytes),
        };
        let mut fields = Fields::new();
        let mut ours = Vec::new();
        while let Some((base, offset, line, _)) = plain.next(&mut fields).unwrap() {
            // The line is what counting line feeds before the record's first byte gives.
            let counted = 1 + memchr::memchr_iter(b'\n', &bytes[..offset as usize]).count() as u64;
            assert_eq!(line, counted, "line of the record at byte {offset}");
            ours.push((
                0,
                fields.ranges().map(|range| base[range].to_vec()).collect(),
            ));
        }
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(bytes);
        let theirs = reader
            .byte_records()
            .map(|record| (0, record.unwrap().iter().map(<[u8]>::to_vec).collect()))
            .collect();
        (ours, theirs)
    }

    #[test]
    fn each_cell_knows_the_line_of_its_first_row_in_both_splitters() {
        // Line 1 header, 2 the N=1 row, 3 blank, 4 and 5 the N=2 rows; CRLF endings, and a quoted status in the
        // second file so it takes the csv crate's path.
        let plain = format!(
            "{HEADER}\r\n{}\r\n\r\n{}\r\n{}\r\n",
            row("r", 1, 1, "10.0", "ok"),
            row("r", 2, 1, "11.0", "ok"),
            row("r", 2, 2, "12.0", "ok")
        );
        let quoted = plain.replacen(",ok,", ",\"ok\",", 2);
        assert_ne!(plain, quoted);
        for text in [plain, quoted] {
            let parsed = parse(text.as_bytes(), &mut Vec::new()).unwrap();
            let lines: Vec<(u32, u64)> = parsed
                .cells
                .iter()
                .map(|(key, cell)| (key.n().unwrap(), cell.first_row_line))
                .collect();
            assert_eq!(lines, [(1, 2), (2, 4)], "{text:?}");
        }
    }

    #[test]
    fn plain_decimals_read_exactly_what_the_standard_parser_reads() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut texts: Vec<String> = [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "1033.93",
            "1781297070.152552",
            "9007199254740992",
            "9007199254740993",
            "900719925474099.3",
            "0.9007199254740993",
            "123.79948352402967",
            "9999999999999999999",
            "1.",
            ".5",
            "-",
            "1e5",
            "+1",
            "1.2.3",
            "00012.500",
            "18446744073709551615",
            "1234567/",
            "12345678:",
            "1234:5678.5",
            "12345678.1234567:",
            "99999999.99999999",
            "00000000",
        ]
        .map(String::from)
        .to_vec();
        for _ in 0..200_000 {
            let length = 1 + next(19) as usize;
            let mut text: String = (0..length)
                .map(|_| char::from(b'0' + next(10) as u8))
                .collect();
            if next(4) > 0 {
                let point = next(length as u64 + 1) as usize;
                text.insert(point, '.');
            }
            if next(3) == 0 {
                text.insert(0, '-');
            }
            // Now and then a byte that is not a digit, often one next to the digits in ASCII (`/` and `:`).
            if next(8) == 0 {
                let at = next(text.len() as u64) as usize;
                let stray = ['/', ':', 'a', ' ', 'e', '+', '.', '-', '\u{7f}'][next(9) as usize];
                text.replace_range(at..at + 1, &stray.to_string());
            }
            texts.push(text);
        }
        let mut fast = 0;
        for text in &texts {
            let expected: Option<f64> = text.parse().ok();
            let ours = plain_decimal(text.as_bytes());
            if let Some(value) = ours {
                fast += 1;
                assert_eq!(
                    Some(value.to_bits()),
                    expected.map(f64::to_bits),
                    "{text:?}"
                );
            }
            assert_eq!(
                parse_number(text.as_bytes()).map(f64::to_bits),
                // parse_number trims surrounding ASCII blanks first.
                fast_float2::parse::<f64, _>(text.as_bytes().trim_ascii())
                    .ok()
                    .map(f64::to_bits),
                "{text:?}"
            );
        }
        // Most of the generated numbers take the direct path, so the comparison above tested it.
        assert!(fast > texts.len() / 2, "{fast} of {}", texts.len());
    }

    #[test]
    fn the_plain_splitter_agrees_with_the_csv_crate_on_quote_free_input() {
        // Fields of every length around the 64-byte blocks the scan reads, empty fields and lines, LF and CRLF
        // endings, with and without a final terminator (bare CRs are not covered: the csv crate ends a record
        // there and the plain split does not, as before).
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        for _ in 0..2_000 {
            let mut text = Vec::new();
            for _ in 0..next(6) {
                let fields = next(12);
                for field in 0..fields {
                    if field > 0 {
                        text.push(b',');
                    }
                    for _ in 0..next(19) {
                        text.push(b"abc019._-x "[next(11) as usize]);
                    }
                }
                if next(3) == 0 {
                    text.push(b'\r');
                }
                text.push(b'\n');
            }
            if next(2) == 0 {
                text.pop();
                if text.last() == Some(&b'\r') {
                    text.pop();
                }
            }
            let (ours, theirs) = records_both_ways(&text);
            assert_eq!(ours, theirs, "input {:?}", String::from_utf8_lossy(&text));
        }
    }

    const HEADER: &str = "run_id,suite,phase,backend,model,workload,n_agents,rep,agent_id,request_id,request_sequence,wall_ms,prompt_tokens,completion_tokens,submit_time_s,complete_time_s,status,ttft_ms";

    fn row(run: &str, n: u32, agent: u32, wall: &str, status: &str) -> String {
        format!(
            "{run},local_core,scaling,pytorch_direct,llama3.2-1b,short_decode,{n},0,{agent},{agent},{agent},{wall},256,128,100.0,101.0,{status},50.0"
        )
    }

    #[test]
    fn columns_are_found_by_name_in_any_order_with_bom_and_crlf() {
        let text = "\u{feff}status,wall_ms,extra,run_id,suite,phase,backend,model,workload,n_agents,rep,agent_id,request_id,request_sequence,prompt_tokens,completion_tokens,submit_time_s,complete_time_s\r\n\
                    ok,1000.0,\"x,y\",r1,local_core,scaling,pytorch_direct,llama3.2-1b,short_decode,1,0,1,1,1,256,128,100.0,101.0\r\n";
        let mut warnings = Vec::new();
        let parsed = parse(text.as_bytes(), &mut warnings).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(parsed.cells.len(), 1);
        let (key, cell) = &parsed.cells[0];
        assert_eq!(
            (key.model.as_str(), key.n().unwrap(), key.rep),
            ("llama3.2-1b", 1, 0)
        );
        assert_eq!((cell.rows, cell.ok_rows), (1, 1));
        assert_eq!(cell.stats.p95_wall_ms, Some(1000.0));
        assert_eq!(cell.stats.aggregate_tps, Some(128.0));
        assert_eq!(cell.stats.p50_ttft_ms, None);
    }

    #[test]
    fn rows_are_classified_as_ok_failed_or_skip_sentinel() {
        let text = format!(
            "{HEADER}\n{}\n{}\n{}\n{}\n",
            row("r1", 2, 1, "900.5", "ok"),
            row("r1", 2, 2, "12.0", "http_400"),
            row("r2", 2, 3, "950.0", "ok"),
            "r1,local_core,scaling,pytorch_direct,llama3.2-1b,short_decode,16,0,0,0,0,0,0,0,0,0,ok,"
        );
        let mut warnings = Vec::new();
        let parsed = parse(text.as_bytes(), &mut warnings).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let (_, cell) = &parsed.cells[0];
        assert_eq!(
            (cell.rows, cell.ok_rows, cell.failed_rows, cell.skip_rows),
            (3, 2, 1, 0)
        );
        assert_eq!(cell.failed_by_status.get("http_400"), Some(&1));
        assert_eq!(cell.row_run_ids.get("r2").map(|ids| ids.rows), Some(1));
        let (skip_key, skip) = &parsed.cells[1];
        assert_eq!(skip_key.n().unwrap(), 16);
        assert_eq!((skip.rows, skip.skip_rows, skip.stats.ok_rows), (0, 1, 0));
    }

    #[test]
    fn the_quote_free_fast_path_and_the_csv_reader_agree() {
        let rows: Vec<String> = (1..=6)
            .map(|agent| row("r1", 2, agent, &format!("{}.25", 900 + agent), "ok"))
            .collect();
        let plain = format!(
            "{HEADER},note\r\n{}\r\n\r\n",
            rows.iter()
                .map(|row| format!("{row},x"))
                .collect::<Vec<_>>()
                .join("\r\n")
        );
        // The same content with one quoted field sends the whole file through the csv crate.
        let quoted = plain.replacen(",x\r\n", ",\"x\"\r\n", 1);
        let (mut plain_warnings, mut quoted_warnings) = (Vec::new(), Vec::new());
        let plain = parse(plain.as_bytes(), &mut plain_warnings).unwrap();
        let quoted = parse(quoted.as_bytes(), &mut quoted_warnings).unwrap();
        assert!(plain_warnings.is_empty() && quoted_warnings.is_empty());
        assert_eq!(plain.records, 6);
        assert_eq!(plain.cells.len(), quoted.cells.len());
        for ((plain_key, plain_cell), (quoted_key, quoted_cell)) in
            plain.cells.iter().zip(&quoted.cells)
        {
            assert_eq!(plain_key, quoted_key);
            assert_eq!(plain_cell.stats, quoted_cell.stats);
            assert_eq!(
                (plain_cell.rows, plain_cell.ok_rows),
                (quoted_cell.rows, quoted_cell.ok_rows)
            );
            assert_eq!(plain_cell.row_offsets.len(), 6);
        }
    }

    #[test]
    fn numbers_parse_like_the_standard_library() {
        for text in [
            "0",
            "12",
            "1780243468.123456",
            "0.30000000000000004",
            "1e-05",
            " 7 ",
            "1446.67",
            "00012",
        ] {
            assert_eq!(
                parse_number(text.as_bytes()),
                text.trim().parse::<f64>().ok(),
                "{text}"
            );
        }
        assert_eq!(parse_number(b""), None);
        assert_eq!(parse_number(b"abc"), None);
    }

    #[test]
    fn a_file_read_in_pieces_gives_what_the_whole_file_gives() {
        // Rows of several cells with what a file can hold that is not a plain ok row: a blank line, CRLF, a
        // ragged row, a bad number, a skip sentinel beside real rows, an unknown status, byte-order marks, and a
        // last line without its terminator.
        let mut rows = Vec::new();
        for n in [1, 2, 4] {
            for agent in 1..=5 {
                rows.push(row("r1", n, agent, &format!("{}.5", 1000 + agent), "ok"));
            }
        }
        rows.insert(3, String::new());
        rows.insert(7, "r1,local_core,scaling".to_string());
        rows.insert(9, row("r1", 2, 9, "abc", "ok"));
        rows.insert(11, row("r1", 2, 0, "0", "ok"));
        rows.insert(12, row("r1", 4, 7, "1200.0", "overloaded"));
        let body = rows.join("\n");
        let texts = [
            format!("{HEADER}\n{body}\n"),
            format!("\u{feff}\u{feff}{HEADER}\r\n{}\r\n", rows.join("\r\n")),
            format!(
                "{HEADER}\n{body}\n{}",
                "r1,local_core,scaling,pytorch_direct"
            ),
            format!("{HEADER}\n"),
        ];
        for text in &texts {
            let bytes = text.as_bytes();
            let mut whole_warnings = Vec::new();
            let whole = parse(bytes, &mut whole_warnings);
            for (chunk_bytes, piece_bytes) in [
                (1, 1),
                (7, 3),
                (64, 5),
                (100, 100),
                (333, 64),
                (usize::MAX, 1 << 20),
            ] {
                let mut warnings = Vec::new();
                let pieces = parse_source_in(
                    &bytes,
                    bytes.len() as u64,
                    &mut warnings,
                    chunk_bytes,
                    piece_bytes,
                )
                .unwrap_or_else(|| panic!("not read in pieces: {text:?}"));
                assert_eq!(
                    format!("{whole:?}"),
                    format!("{pieces:?}"),
                    "chunks of {chunk_bytes}, pieces of {piece_bytes}: {text:?}"
                );
                assert_eq!(
                    whole_warnings, warnings,
                    "chunks of {chunk_bytes}, pieces of {piece_bytes}"
                );
            }
        }
        // The first text warns about what it should, so the comparison above compared warnings.
        let mut warnings = Vec::new();
        parse(texts[0].as_bytes(), &mut warnings).unwrap();
        let kinds: Vec<&str> = warnings
            .iter()
            .map(|warning| warning.kind.as_str())
            .collect();
        assert!(
            kinds.contains(&"ragged_row") && kinds.contains(&"bad_number"),
            "{kinds:?}"
        );
        // What the reading in pieces leaves to the reading of the whole file: a quote, no whole header line, a
        // file that ends before its size.
        for text in [
            format!("{HEADER}\n{}\n", row("r1", 1, 1, "\"1.5\"", "ok")),
            HEADER.to_string(),
        ] {
            let bytes = text.as_bytes();
            assert!(parse_source_in(&bytes, bytes.len() as u64, &mut Vec::new(), 64, 16).is_none());
        }
        let bytes = texts[0].as_bytes();
        let mut warnings = Vec::new();
        assert!(parse_source_in(&bytes, bytes.len() as u64 + 10, &mut warnings, 64, 16).is_none());
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn malformed_rows_are_named_by_line_and_left_out() {
        let text = format!(
            "{HEADER}\n{}\nr1,local_core,scaling\n{}\n{}",
            row("r1", 1, 1, "1000.0", "ok"),
            row("r1", 1, 2, "abc", "ok"),
            "r1,local_core,scaling,pytorch_direct,llama3.2-1b"
        );
        let mut warnings = Vec::new();
        let parsed = parse(text.as_bytes(), &mut warnings).unwrap();
        let kinds: Vec<(&str, Option<u64>)> =
            warnings.iter().map(|w| (w.kind.as_str(), w.line)).collect();
        assert_eq!(
            kinds,
            vec![
                ("ragged_row", Some(3)),
                ("bad_number", Some(4)),
                ("truncated_last_line", Some(5))
            ]
        );
        assert_eq!(parsed.malformed_rows, 3);
        assert_eq!(parsed.cells[0].1.ok_rows, 1);
    }

    #[test]
    fn an_unclosed_quote_says_how_many_lines_it_swallowed() {
        // Line 3 opens a quote in its workload field; it closes in line 5's, so lines 3–5 read as one record.
        let text = format!(
            "{HEADER}\n{}\n{}\n{}\n{}\n{}\n",
            row("r1", 1, 1, "1000.0", "ok"),
            row("r1", 1, 2, "1000.0", "ok").replace("short_decode", "\"short_decode"),
            row("r1", 1, 3, "1000.0", "ok"),
            row("r1", 1, 4, "1000.0", "ok").replace("short_decode", "short_decode\""),
            row("r1", 1, 5, "1000.0", "ok"),
        );
        let mut warnings = Vec::new();
        let parsed = parse(text.as_bytes(), &mut warnings).unwrap();
        let kinds: Vec<(&str, Option<u64>)> =
            warnings.iter().map(|w| (w.kind.as_str(), w.line)).collect();
        assert_eq!(kinds, vec![("unclosed_quote", Some(3))]);
        assert!(
            warnings[0]
                .message
                .contains("the next 2 line(s) were read into this one row")
                && warnings[0].message.contains("all 3 lines are left out"),
            "{}",
            warnings[0].message
        );
        // The census counts every line that was lost, not one row.
        assert_eq!(parsed.malformed_rows, 3);
        assert_eq!(parsed.cells[0].1.ok_rows, 2);
    }

    #[test]
    fn a_quoted_field_may_hold_line_breaks_and_later_rows_keep_their_physical_lines() {
        // An `error` column after the contract's: line 3's text goes on to line 4 (LF), line 6's to line 8 (CRLF
        // inside, with a comma and a doubled quote); line 9's wall time is not a number.
        let text = format!(
            "{HEADER},error\n{},\n{},\"upstream timeout\nafter 30 s\"\n{},\n{},\"retried, \"\"429\"\" twice\r\nthen\r\nok\"\n{},\n",
            row("r1", 1, 1, "1000.0", "ok"),
            row("r1", 1, 2, "30000.0", "timeout"),
            row("r1", 2, 1, "1100.0", "ok"),
            row("r1", 2, 2, "1300.0", "ok"),
            row("r1", 2, 3, "abc", "ok"),
        );
        let mut warnings = Vec::new();
        let parsed = parse(text.as_bytes(), &mut warnings).unwrap();
        let kinds: Vec<(&str, Option<u64>)> =
            warnings.iter().map(|w| (w.kind.as_str(), w.line)).collect();
        assert_eq!(kinds, vec![("bad_number", Some(9))]);
        assert_eq!((parsed.records, parsed.malformed_rows), (5, 1));
        let (n1, n2) = (&parsed.cells[0].1, &parsed.cells[1].1);
        assert_eq!((n1.rows, n1.ok_rows, n1.failed_rows), (2, 1, 1));
        assert_eq!(n1.failed_by_status.get("timeout"), Some(&1));
        assert_eq!(n1.stats.p95_wall_ms, Some(1000.0));
        assert_eq!((n2.rows, n2.ok_rows, n2.first_row_line), (2, 2, 5));
        assert_eq!(n2.stats.mean_wall_ms, Some(1200.0));
        // The same rows with the texts on one line give the same cells: the line breaks are data.
        let flat = text
            .replace("\r\nthen\r\n", " then ")
            .replace("timeout\nafter", "timeout after");
        let flat = parse(flat.as_bytes(), &mut Vec::new()).unwrap();
        assert_eq!(flat.cells.len(), parsed.cells.len());
        for ((flat_key, flat_cell), (key, cell)) in flat.cells.iter().zip(&parsed.cells) {
            assert_eq!(flat_key, key);
            assert_eq!(flat_cell.stats, cell.stats);
            assert_eq!(
                (flat_cell.rows, flat_cell.ok_rows, flat_cell.failed_rows),
                (cell.rows, cell.ok_rows, cell.failed_rows)
            );
        }
        // Every reading gives the one of the whole file: the quotes send each to the csv crate, whole.
        for reading in [
            Reading {
                general: true,
                ..Reading::default()
            },
            Reading {
                chunk_bytes: 7,
                ..Reading::default()
            },
            Reading {
                portable: true,
                ..Reading::default()
            },
        ] {
            let mut other_warnings = Vec::new();
            let other = parse_as(text.as_bytes(), &mut other_warnings, reading).unwrap();
            assert_eq!(format!("{parsed:?}"), format!("{other:?}"));
            assert_eq!(warnings, other_warnings);
        }
        let bytes = text.as_bytes();
        for (chunk_bytes, piece_bytes) in [(1, 1), (64, 5), (usize::MAX, 1 << 20)] {
            let mut piece_warnings = Vec::new();
            assert!(
                parse_source_in(
                    &bytes,
                    bytes.len() as u64,
                    &mut piece_warnings,
                    chunk_bytes,
                    piece_bytes
                )
                .is_none()
            );
            assert!(piece_warnings.is_empty(), "{piece_warnings:?}");
        }
    }

    #[test]
    fn a_run_id_may_hold_a_line_break_but_a_quote_left_open_in_it_still_swallows_lines() {
        // A run directory named with a line break, written as its rows' run id by a CSV writer.
        let named = format!(
            "{HEADER}\n{}\n{}\n",
            row("\"run\nx\"", 1, 1, "1000.0", "ok"),
            row("\"run\nx\"", 1, 2, "1000.0", "ok"),
        );
        let mut warnings = Vec::new();
        let parsed = parse(named.as_bytes(), &mut warnings).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let cell = &parsed.cells[0].1;
        assert_eq!((cell.rows, cell.first_row_line), (2, 2));
        assert_eq!(cell.row_run_ids.get("run\nx").map(|ids| ids.rows), Some(2));
        // A quote opened in line 3's run id and closed in line 5's reads lines 3 to 5 into one record of the
        // header's width; one left open to the end of the file reads every line after it.
        let closed_later = format!(
            "{HEADER}\n{}\n{}\n{}\n{}\n{}\n",
            row("r1", 1, 1, "1000.0", "ok"),
            row("\"r1", 1, 2, "1000.0", "ok"),
            row("r1", 1, 3, "1000.0", "ok"),
            row("r1\"", 1, 4, "1000.0", "ok"),
            row("r1", 1, 5, "1000.0", "ok"),
        );
        let left_open = format!(
            "{HEADER}\n{}\n{}\n{}\n{}\n",
            row("r1", 1, 1, "1000.0", "ok"),
            row("r1", 1, 2, "1000.0", "ok"),
            row("r1", 1, 3, "1000.0", "ok"),
            row("r1", 1, 4, "1000.0", "ok"),
        )
        .replace(
            ",50.0\nr1,local_core,scaling,pytorch_direct,llama3.2-1b,short_decode,1,0,3,",
            ",\"50.0\nr1,local_core,scaling,pytorch_direct,llama3.2-1b,short_decode,1,0,3,",
        );
        for (text, ok_rows) in [(&closed_later, 2), (&left_open, 1)] {
            let mut warnings = Vec::new();
            let parsed = parse(text.as_bytes(), &mut warnings).unwrap();
            let kinds: Vec<(&str, Option<u64>)> =
                warnings.iter().map(|w| (w.kind.as_str(), w.line)).collect();
            assert_eq!(kinds, vec![("unclosed_quote", Some(3))], "{text}");
            assert_eq!(parsed.cells[0].1.ok_rows, ok_rows, "{text}");
        }
        let mut warnings = Vec::new();
        parse(closed_later.as_bytes(), &mut warnings).unwrap();
        assert!(
            warnings[0].message.contains("all 3 lines are left out"),
            "{}",
            warnings[0].message
        );
    }

    #[test]
    fn a_missing_required_column_rejects_the_file_naming_it() {
        let text = HEADER.replace(",wall_ms", "") + "\n";
        let rejected = parse(text.as_bytes(), &mut Vec::new()).unwrap_err();
        assert_eq!(rejected.kind, "missing_column");
        assert!(
            rejected.message.contains("`wall_ms`"),
            "{}",
            rejected.message
        );
    }

    #[test]
    fn unknown_statuses_count_as_failures_with_one_warning_per_value() {
        let text = format!(
            "{HEADER}\n{}\n{}\n",
            row("r1", 1, 1, "1.0", "banana"),
            row("r1", 1, 2, "1.0", "banana")
        );
        let mut warnings = Vec::new();
        let parsed = parse(text.as_bytes(), &mut warnings).unwrap();
        assert_eq!(parsed.cells[0].1.failed_rows, 2);
        assert_eq!(warnings.len(), 1);
        assert_eq!(
            (warnings[0].kind.as_str(), warnings[0].line),
            ("unknown_status", Some(2))
        );
        assert!(is_known_status(b"http_503") && !is_known_status(b"http_5x3"));
    }
}

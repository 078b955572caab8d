//! A TR164 run's metrics file read and parsed: for the cells alone, on a local disk, through a map or in pieces on
//! every core; otherwise whole, into a buffer each thread keeps between files (and decompressed when it is stored
//! compressed). Warnings that name a line read the file again for it.

use super::RunDir;
use super::metrics_csv;
use crate::run::bytes::{decompressed, digest, is_compressed};
use crate::run::parsed::{FileRejected, ParsedMetrics};
use crate::run::{IndexOptions, Progress};
use crate::storage::{self, Storage};
use cellscope_model::api::{FileDigest, Warning};

/// Largest buffer a thread keeps between files; a larger file's buffer is given back after use.
const KEPT_BUFFER_BYTES: usize = 256 << 20;

/// A thread's read buffer grows in steps of this size.
const BUFFER_STEP_BYTES: usize = 8 << 20;

/// Reads a whole file into this thread's reusable buffer and hands the bytes to `use_bytes`.
///
/// Indexing reads files of tens of megabytes one after another on each thread. A fresh buffer per file made
/// the kernel fault in and zero every page of it again, a fifth of the cold index's time at the 10-million-row
/// scale; a reused buffer is faulted in once per thread.
fn with_file_bytes<R>(
    storage: &dyn Storage,
    path: &str,
    use_bytes: impl FnOnce(Result<&[u8], std::io::Error>) -> R,
) -> R {
    use std::cell::RefCell;
    thread_local! {
        static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    BUFFER.with(|buffer| {
        let Ok(mut buffer) = buffer.try_borrow_mut() else {
            // `use_bytes` read another file on this thread: that one gets a buffer of its own.
            return match storage.read(path) {
                Ok(bytes) => use_bytes(Ok(&bytes)),
                Err(error) => use_bytes(Err(error)),
            };
        };
        buffer.clear();
        // Growing the buffer with `reserve` would have the allocator copy the old capacity's stale bytes
        // (`realloc` knows no length): a larger file gets a fresh buffer instead. The extra byte lets the read see
        // the end of the file without growing it.
        let size = storage.stat(path).map_or(0, |meta| meta.bytes as usize);
        // Rounded up to whole 8 MB, so that files of about one size (the masters of a sweep differ by a few
        // hundred KB) all fit the buffer the first of them made, and the next index faults in no new pages.
        if buffer.capacity() <= size {
            *buffer = Vec::with_capacity((size + 1).next_multiple_of(BUFFER_STEP_BYTES));
        }
        let read = storage.read_into(path, &mut buffer);
        let result = use_bytes(read.map(|_| buffer.as_slice()));
        if buffer.capacity() > KEPT_BUFFER_BYTES {
            *buffer = Vec::new();
        }
        result
    })
}

/// What reading a metrics.csv for its cells gives: the file's size, its parse and the warnings about its rows.
type CellsReading = (u64, Result<ParsedMetrics, FileRejected>, Vec<Warning>);

/// A metrics.csv on a local disk read for its cells without copying it whole into memory: through a map where the
/// system allows (`storage/mapped.rs`), else in pieces (`metrics_csv::parse_source`). `None` when it cannot be
/// read that way (another backend, or the file changed while it was read), and it is read whole.
fn read_for_cells(storage: &dyn Storage, path: &str) -> Option<CellsReading> {
    let file = storage.local_file(path)?.ok()?;
    let metadata = file.metadata().ok()?;
    if !metadata.is_file() {
        return None;
    }
    let size = metadata.len();
    #[cfg(target_os = "linux")]
    if let Some(mapped) = crate::storage::mapped::Mapped::new(&file, size) {
        return parse_mapped(&mapped, size);
    }
    #[cfg(unix)]
    {
        let mut row_warnings = Vec::new();
        let parsed = metrics_csv::parse_source(&file, size, &mut row_warnings)?;
        Some((size, parsed, row_warnings))
    }
    // Positioned reads of a file are implemented for Unix.
    #[cfg(not(unix))]
    {
        let _ = (file, size);
        None
    }
}

/// The parse of a mapped metrics.csv of `size` bytes, as [`read_for_cells`] gives it; `None` when the map was
/// damaged while it was read (the file was cut short, or a page could not be read): that reading is thrown away,
/// and the reading of the whole file says what is left of it.
#[cfg(target_os = "linux")]
fn parse_mapped(mapped: &crate::storage::mapped::Mapped, size: u64) -> Option<CellsReading> {
    let mut row_warnings = Vec::new();
    let parsed = metrics_csv::parse(mapped.bytes(), &mut row_warnings);
    (!mapped.damaged()).then_some((size, parsed, row_warnings))
}

/// A metrics.csv read whole (and decompressed, for a compressed one) and parsed: the parse and the file's digest;
/// `warnings` receive what reading it found, `unread` is set when it could not be read or decompressed.
fn read_whole(
    storage: &dyn Storage,
    dir: &RunDir,
    run_id: &str,
    metrics_relative: &str,
    options: &IndexOptions,
    warnings: &mut Vec<Warning>,
    unread: &mut bool,
) -> (Result<ParsedMetrics, FileRejected>, FileDigest) {
    if let Some(rejected) = rejected_by_head(storage, dir, metrics_relative, options) {
        return rejected;
    }
    with_file_bytes(storage, metrics_relative, |read| {
        let read_failed = read.is_err();
        let bytes = read.unwrap_or_else(|error| {
            *unread = true;
            warnings.push(crate::storage::unreadable_warning(&error, metrics_relative).run(run_id));
            &[]
        });
        // A compressed file is parsed from its decompressed bytes; its checksums are those of the file as stored.
        let inflated = decompressed(dir.metrics_name, bytes).unwrap_or_else(|error| {
            *unread = true;
            warnings.push(
                Warning::error(
                    "unreadable_file",
                    format!("cannot decompress the file: {error}; none of it is read"),
                )
                .run(run_id)
                .file(metrics_relative),
            );
            Some(Vec::new())
        });
        let text = inflated.as_deref().unwrap_or(bytes);
        let mut row_warnings = Vec::new();
        let metrics = metrics_csv::parse(text, &mut row_warnings);
        for warning in row_warnings {
            warnings.push(warning.run(run_id).file(metrics_relative));
        }
        // A file that could not be read has no checksums: those of no bytes would be taken for its content (and
        // a cached read would be checked against them).
        (
            metrics,
            digest(
                metrics_relative.to_string(),
                bytes,
                options.hashes && !read_failed,
            ),
        )
    })
}

/// A plain metrics file whose first line is too long to be a header is rejected on its head and hashed a piece at
/// a time: a large file that is not a table (NULs, a binary) never costs its size in memory.
fn rejected_by_head(
    storage: &dyn Storage,
    dir: &RunDir,
    metrics_relative: &str,
    options: &IndexOptions,
) -> Option<(Result<ParsedMetrics, FileRejected>, FileDigest)> {
    if is_compressed(dir.metrics_name) {
        return None;
    }
    let size = storage.stat(metrics_relative).ok()?.bytes;
    let head = storage
        .read_range(metrics_relative, 0..metrics_csv::MAX_HEADER_BYTES as u64)
        .ok()?;
    let rejected = metrics_csv::header_too_long(&head, size)?;
    let digest =
        crate::run::bytes::streamed_digest(storage, metrics_relative, size, options.hashes)?;
    Some((Err(rejected), digest))
}

/// A TR164 run's metrics.csv read and parsed, with what reading it found.
pub(super) fn read_run_metrics(
    storage: &dyn Storage,
    dir: &RunDir,
    run_id: &str,
    options: &IndexOptions,
    progress: &dyn Progress,
) -> (
    Result<ParsedMetrics, FileRejected>,
    FileDigest,
    Vec<Warning>,
) {
    let metrics_relative = dir.metrics_relative();
    let mut warnings = Vec::new();
    // A file that could not be read or decompressed has its warning already; it is not also called empty.
    let mut unread = false;
    // For the cells only (no checksums to take of the whole file), an uncompressed file is mapped or read in
    // pieces; a file that reading leaves (a quote, a changed file, a header not found) is read whole, as are the
    // others.
    let for_cells = (!options.hashes && !is_compressed(dir.metrics_name))
        .then(|| read_for_cells(storage, &metrics_relative))
        .flatten();
    let (metrics, digest) = match for_cells {
        Some((size, parsed, row_warnings)) => {
            for warning in row_warnings {
                warnings.push(warning.run(run_id).file(&metrics_relative));
            }
            (
                parsed,
                FileDigest {
                    path: metrics_relative.clone(),
                    bytes: size,
                    md5: None,
                    sha256: None,
                },
            )
        }
        None => read_whole(
            storage,
            dir,
            run_id,
            &metrics_relative,
            options,
            &mut warnings,
            &mut unread,
        ),
    };
    match &metrics {
        Err(_) if unread => {}
        Err(rejected) => warnings.push(
            Warning::error(rejected.kind, rejected.message.clone())
                .run(run_id)
                .file(&metrics_relative)
                .at_line(rejected.line),
        ),
        Ok(parsed) if parsed.records == 0 => warnings.push(
            Warning::warn(
                "header_only",
                "the file has a header but no rows; no cell of this run has data",
            )
            .run(run_id)
            .file(&metrics_relative),
        ),
        Ok(_) => {}
    }
    progress.file_done(digest.bytes);
    (metrics, digest, warnings)
}

/// A metrics file's bytes (`path` relative to the data root) as the index parses them: decompressed when it is
/// stored compressed.
pub(crate) fn metrics_bytes(storage: &dyn Storage, path: &str) -> std::io::Result<Vec<u8>> {
    let stored = storage.read(path)?;
    Ok(decompressed(storage::file_name(path), &stored)?.unwrap_or(stored))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file truncated after it was mapped and before it was parsed: the parse runs into the pages past the new
    /// end, the guard catches the fault, and the reading is thrown away instead of taken for the file or killing
    /// the process. The file read again gives the rows it still has.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_metrics_file_cut_short_under_its_map_is_read_again_not_taken() {
        let header = "run_id,suite,phase,backend,model,workload,n_agents,rep,agent_id,request_id,\
                      request_sequence,wall_ms,prompt_tokens,completion_tokens,submit_time_s,complete_time_s,status";
        let mut text = format!("{header}\n");
        for request in 0..40_000u32 {
            text.push_str(&format!(
                "r1,s,scaling,b,m,w,4,0,{},{request},{request},100.5,10,20,1.0,2.5,ok\n",
                request % 4
            ));
        }
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("metrics.csv");
        std::fs::write(&path, &text).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let size = file.metadata().unwrap().len();
        let mapped = crate::storage::mapped::Mapped::new(&file, size).unwrap();
        // A tenth is left: every page after it faults when the parse reaches it.
        let kept = size / 10;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(kept)
            .unwrap();
        assert!(parse_mapped(&mapped, size).is_none());
        assert!(mapped.damaged());
        drop(mapped);
        // Read again, the file is what is left of it: its whole lines, and a warning for the cut one.
        let disk = crate::storage::LocalDisk::new(directory.path());
        let (read_size, parsed, warnings) = read_for_cells(&disk, "metrics.csv").unwrap();
        assert_eq!(read_size, kept);
        let parsed = parsed.unwrap();
        let whole_lines = text.as_bytes()[..kept as usize]
            .iter()
            .filter(|byte| **byte == b'\n')
            .count() as u64;
        assert_eq!(parsed.records, whole_lines);
        assert!(
            warnings
                .iter()
                .any(|warning| warning.kind == "truncated_last_line"),
            "{warnings:?}"
        );
    }
}

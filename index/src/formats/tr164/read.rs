//! Reads one TR164 run directory (its metrics file and side files) or one backup, each on its own.

use super::environment;
use super::metrics_csv;
use super::run_files;
use super::splice;
use crate::run::bytes::{decompressed, digest, is_compressed, without_boms};
use crate::run::expected::{Manifest, Plan};
use crate::run::found::{BackupDir, RunDir};
use crate::run::parsed::{FileRejected, ParsedMetrics};
use crate::run::{BackupRead, IndexOptions, Progress, RunRead};
use crate::storage::{self, EntryKind, Storage};
use cellscope_model::api::{FileDigest, Warning};
use std::collections::{BTreeMap, BTreeSet};

/// The names in a run directory (relative to the data root), sorted, sub-directories ending with `/`.
pub(crate) fn list_files(storage: &dyn Storage, directory: &str) -> Vec<String> {
    let Ok(entries) = storage.list(directory) else {
        return Vec::new();
    };
    let mut files: Vec<String> = entries
        .into_iter()
        .map(|entry| {
            if entry.kind == EntryKind::Directory {
                format!("{}/", entry.name)
            } else {
                entry.name
            }
        })
        .collect();
    files.sort();
    files
}

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
    with_file_bytes(storage, metrics_relative, |read| {
        let bytes = read.unwrap_or_else(|error| {
            *unread = true;
            warnings.push(
                Warning::error("unreadable_file", format!("cannot read the file: {error}"))
                    .run(run_id)
                    .file(metrics_relative),
            );
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
        (
            metrics,
            digest(metrics_relative.to_string(), bytes, options.hashes),
        )
    })
}

pub fn read_run(
    storage: &dyn Storage,
    dir: RunDir,
    options: &IndexOptions,
    progress: &dyn Progress,
) -> RunRead {
    let run_id = dir.run_id.clone();
    // The side files (manifest, plan, note, config; about a megabyte of JSON per TR164 run) are read and parsed
    // beside the metrics, not after them: the last run's were a serial tail of a cold index. Each half keeps its
    // own warnings, joined in the order one pass after the other gave.
    let ((metrics, digest, mut warnings), side) = rayon::join(
        || read_run_metrics(storage, &dir, &run_id, options, progress),
        || read_side_files(storage, &dir, &run_id),
    );
    let SideFiles {
        manifest,
        plan,
        note_bytes,
        config,
        warnings: side_warnings,
    } = side;
    warnings.extend(side_warnings);
    let backends: BTreeSet<String> = metrics
        .as_ref()
        .map(|parsed| {
            parsed
                .cells
                .iter()
                .map(|(coordinates, _)| coordinates.backend.clone())
                .collect()
        })
        .unwrap_or_default();
    let environment = environment::environment(
        manifest
            .as_ref()
            .and_then(|manifest| manifest.environment.as_ref()),
        manifest
            .as_ref()
            .and_then(|manifest| manifest.max_model_len.as_ref()),
        config.as_ref(),
        &backends,
    );
    let refill_note = note_bytes.map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let note_names = refill_note.as_deref().map(run_ids_in).unwrap_or_default();
    let files = list_files(storage, &dir.relative);
    RunRead {
        dir,
        metrics,
        digest,
        manifest,
        plan,
        refill_note,
        note_names,
        files,
        environment,
        warnings,
        format: "tr164",
    }
}

/// A TR164 run's metrics.csv read and parsed, with what reading it found.
fn read_run_metrics(
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

/// What a TR164 run's side files hold, parsed, with what reading them found (in the order the files are read).
struct SideFiles {
    manifest: Option<Manifest>,
    plan: Option<Plan>,
    note_bytes: Option<Vec<u8>>,
    config: Option<serde_json::Value>,
    warnings: Vec<Warning>,
}

/// A TR164 run's manifest, plan, refill note and config, each left out with a warning when it cannot be read or
/// parsed.
fn read_side_files(storage: &dyn Storage, dir: &RunDir, run_id: &str) -> SideFiles {
    let mut warnings = Vec::new();
    let mut read_side_file = |name: &str| -> Option<Vec<u8>> {
        let path = storage::join(&dir.relative, name);
        // The entry itself, not what a link points to: a link is not followed out of the data root.
        let entry = storage.stat(&path);
        if !entry.as_ref().is_ok_and(storage::Meta::is_file) {
            // A directory, FIFO, device or link under a side file's name is said, not taken as "no such file".
            if let Ok(meta) = entry {
                warnings.push(
                    Warning::error(
                        "not_a_file",
                        format!(
                            "`{name}` is {}, not a regular file; it is not read",
                            match meta.kind {
                                EntryKind::Directory => "a directory",
                                EntryKind::Symlink => "a symbolic link (links are not followed)",
                                _ => "a FIFO, socket or device",
                            }
                        ),
                    )
                    .run(run_id)
                    .file(&format!("{}/{name}", dir.relative)),
                );
            }
            return None;
        }
        match storage.read(&path) {
            Ok(bytes) => Some(bytes),
            Err(error) => {
                warnings.push(
                    Warning::error("unreadable_file", format!("cannot read the file: {error}"))
                        .run(run_id)
                        .file(&format!("{}/{name}", dir.relative)),
                );
                None
            }
        }
    };
    let manifest_bytes = read_side_file("manifest.json");
    let plan_bytes = read_side_file("execution_plan.json");
    let note_bytes = read_side_file("REFILL_NOTE.md");
    let config_bytes = read_side_file("config.yaml");
    // An invalid side file is reported with its position and left out; the run is indexed without it.
    let mut invalid = |kind: &str, name: &str, what: &str, problem: run_files::JsonProblem| {
        warnings.push(
            Warning::error(
                kind,
                format!(
                    "{name} is not a valid {what} (column {}): {}; the run is indexed without it",
                    problem.column, problem.message
                ),
            )
            .run(run_id)
            .file(&format!("{}/{name}", dir.relative))
            .line(problem.line),
        );
    };
    let manifest = manifest_bytes.and_then(|bytes| {
        run_files::parse_manifest(&bytes)
            .map_err(|problem| invalid("invalid_manifest", "manifest.json", "manifest", problem))
            .ok()
    });
    let plan = plan_bytes.and_then(|bytes| {
        run_files::parse_plan(&bytes)
            .map_err(|problem| invalid("invalid_plan", "execution_plan.json", "plan", problem))
            .ok()
    });
    for (scope, status, count) in manifest
        .as_ref()
        .map(run_files::unknown_statuses)
        .unwrap_or_default()
    {
        let known = if scope == "run" {
            run_files::RUN_STATUSES.join(", ")
        } else {
            run_files::CELL_STATUSES.join(", ")
        };
        let whose = if scope == "run" {
            "the run's status".to_string()
        } else {
            format!("the status of {count} cell(s)")
        };
        warnings.push(
            Warning::warn(
                "unknown_manifest_status",
                format!(
                    "{whose} is `{}`, not one of {known}; it is shown as written and does not change how rows are \
                     counted",
                    status.escape_debug()
                ),
            )
            .run(run_id)
            .file(&format!("{}/manifest.json", dir.relative)),
        );
    }
    let config = config_bytes.and_then(|bytes| {
        environment::parse_config(&bytes)
            .map_err(|problem| {
                warnings.push(
                    Warning::warn(
                        "invalid_config",
                        format!(
                            "config.yaml is not valid YAML: {}; the run's max model length and extra \
                             arguments are taken as not stated",
                            problem.message
                        ),
                    )
                    .run(run_id)
                    .file(&format!("{}/config.yaml", dir.relative))
                    .at_line(problem.line),
                );
            })
            .ok()
    });
    SideFiles {
        manifest,
        plan,
        note_bytes,
        config,
        warnings,
    }
}

pub fn read_backup(
    storage: &dyn Storage,
    dir: BackupDir,
    master: Option<&RunDir>,
    options: &IndexOptions,
    progress: &dyn Progress,
) -> BackupRead {
    let relative = format!("{}/metrics.csv", dir.relative);
    // Neither a hash nor the comparison is wanted (`--cells-only`): the backup's bytes are not needed at all.
    let bytes = if options.hashes || options.backup_diff {
        storage.read(&relative).unwrap_or_default()
    } else {
        Vec::new()
    };
    let mut digest = digest(relative, &bytes, options.hashes);
    if bytes.is_empty() {
        digest.bytes = storage.stat(&digest.path).map_or(0, |meta| meta.bytes);
    }
    let diff = match master {
        Some(master) if options.backup_diff => Some(
            metrics_bytes(storage, &master.metrics_relative())
                .map_err(|error| format!("cannot read the master {}: {error}", master.metrics_name))
                .and_then(|master_bytes| splice::diff(&master_bytes, &bytes)),
        ),
        _ => None,
    };
    let parsed = options
        .backup_diff
        .then(|| metrics_csv::parse(&bytes, &mut Vec::new()).ok())
        .flatten();
    progress.file_done(digest.bytes);
    BackupRead {
        dir,
        digest,
        diff,
        parsed,
    }
}

/// Run ids (`YYYYMMDD_HHMMSS_ffffff` or `YYYYMMDD_HHMMSS`) a note mentions, each with the 1-based line of its
/// first mention.
pub fn run_ids_in(text: &str) -> BTreeMap<String, u64> {
    let mut found = BTreeMap::new();
    for (line_index, line) in text.lines().enumerate() {
        let bytes = line.as_bytes();
        let digits = |start: usize, count: usize| {
            bytes
                .get(start..start + count)
                .is_some_and(|slice| slice.iter().all(u8::is_ascii_digit))
        };
        let mut start = 0;
        while start + 15 <= bytes.len() {
            let boundary_before = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
            if boundary_before
                && digits(start, 8)
                && bytes[start + 8] == b'_'
                && digits(start + 9, 6)
            {
                let mut end = start + 15;
                if bytes.get(end) == Some(&b'_') && digits(end + 1, 6) {
                    end += 7;
                }
                found
                    .entry(line[start..end].to_string())
                    .or_insert(line_index as u64 + 1);
                start = end;
            } else {
                start += 1;
            }
        }
    }
    found
}

/// A metrics file's bytes (`path` relative to the data root) as the index parses them: decompressed when it is
/// stored compressed.
pub fn metrics_bytes(storage: &dyn Storage, path: &str) -> std::io::Result<Vec<u8>> {
    let stored = storage.read(path)?;
    Ok(decompressed(storage::file_name(path), &stored)?.unwrap_or(stored))
}

/// The 1-based lines of the records at byte `offsets` of a metrics.csv (offsets as the parser reports them),
/// read again from the file: only warnings need them, so indexing does not count lines.
pub fn lines_in_file(storage: &dyn Storage, path: &str, offsets: &[u64]) -> Vec<Option<u64>> {
    let Ok(bytes) = metrics_bytes(storage, path) else {
        return vec![None; offsets.len()];
    };
    let bytes = without_boms(&bytes);
    offsets
        .iter()
        .map(|offset| Some(metrics_csv::line_at(bytes, *offset)))
        .collect()
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

    #[test]
    fn note_mentions_carry_their_line() {
        let note = "# Refill\n\nRun 20260613_055519_963364 refilled master 20260612_212816_266127.\n\
                    Again 20260613_055519_963364; not an id: x20260613_055519_963364, 2026061_055519.\n";
        let names = run_ids_in(note);
        assert_eq!(
            names,
            BTreeMap::from([
                ("20260612_212816_266127".to_string(), 3),
                ("20260613_055519_963364".to_string(), 3),
            ])
        );
    }

    #[test]
    fn a_run_directory_is_read_with_its_side_files() {
        let root = tempfile::tempdir().unwrap();
        let run = root.path().join("r1");
        std::fs::create_dir(&run).unwrap();
        std::fs::write(
            run.join("metrics.csv"),
            "run_id,suite,phase,backend,model,workload,n_agents,rep,agent_id,request_id,request_sequence,wall_ms,prompt_tokens,completion_tokens,submit_time_s,complete_time_s,status\n\
             r1,s,p,b,m,w,1,0,1,1,1,10.0,5,5,1.0,2.0,ok\n",
        )
        .unwrap();
        std::fs::write(run.join("manifest.json"), "{ not json").unwrap();
        std::fs::write(
            run.join("REFILL_NOTE.md"),
            "refill 20260613_055519_963364\n",
        )
        .unwrap();
        let dir = RunDir {
            run_id: "r1".into(),
            relative: "r1".into(),
            metrics_name: "metrics.csv",
        };
        let disk = crate::storage::LocalDisk::new(root.path());
        let read = read_run(&disk, dir, &IndexOptions::default(), &crate::run::Quiet);
        let parsed = read.metrics.as_ref().unwrap();
        assert_eq!(parsed.cells.len(), 1);
        assert_eq!(
            read.digest.bytes,
            std::fs::metadata(run.join("metrics.csv")).unwrap().len()
        );
        assert!(read.digest.md5.is_some());
        assert!(read.manifest.is_none());
        assert_eq!(read.warnings.len(), 1);
        assert_eq!(
            (
                read.warnings[0].kind.as_str(),
                read.warnings[0].file.as_deref(),
                read.warnings[0].line
            ),
            ("invalid_manifest", Some("r1/manifest.json"), Some(1))
        );
        assert_eq!(read.note_names["20260613_055519_963364"], 1);
        assert_eq!(
            read.files,
            ["REFILL_NOTE.md", "manifest.json", "metrics.csv"]
        );
        let offset = parsed.cells[0].1.row_offsets[0];
        assert_eq!(lines_in_file(&disk, "r1/metrics.csv", &[offset]), [Some(2)]);
    }
}

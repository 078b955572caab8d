//! The run-format half of the ingest seam: every input format is a [`RunFormat`] that finds its runs (by content,
//! or by the names in a directory), reads them into the stage-2 product ([`RunRead`]: cells with request statistics
//! and row locators) and reads one cell's rows back; [`BY_NAME`] and [`BY_CONTENT`] are the registry of them all,
//! and [`Registry`] is what discovery asks.
//!
//! Most formats only say what is in their files: one [`RunRecord`] per measured cell (key parts as read,
//! per-request rows, the tool's own aggregates), and everything else is done once for all of them in `records/`. A
//! format whose files are a run directory with parts of its own (side files, backups) reads them itself through
//! the trait's hooks. A new format is one sibling module plus one line in the registry.

use crate::discover::Recognise;
use crate::mapping::Mapping;
use crate::parse::{HEAD_BYTES, outline};
use crate::records::{self, verdict};
use crate::run::found::{DetectedRun, Listed, Offered};
use crate::run::record::{FileAt, RunRecord};
use crate::run::rows::{CellRows, RowsError};
use crate::run::{BackupRead, Inputs, ReadContext, RunRead};
use crate::storage::{Entry, Storage};
use cellscope_model::api::Warning;
use cellscope_model::requests::RequestRow;

pub(crate) use records::verdict::Verdict;

/// One input format.
pub(crate) trait RunFormat: Sync {
    /// A stable name, shown in the audit and the inspector (`tr164`, `vllm-bench`, …).
    fn name(&self) -> &'static str;

    /// What this format makes of `file`: it reads it, knows it as a side file of a run, or declines it and says
    /// why. Decided by content (tools let users rename their files), from the head, and where a format needs it
    /// from the files beside it or `cellscope.toml`.
    fn examine(&self, file: &FileAt<'_>) -> Verdict;

    /// The directory whose detected files together form one run (the sweep), relative to the data root.
    fn run_root(&self, path: &str) -> String {
        records::default_run_root(path)
    }

    /// The run records (one per measured cell) of one detected file. Problems go to `warnings` with the file
    /// and line or record they are about; a file that cannot be read gives no records, never a panic.
    fn records(&self, file: &FileAt<'_>, warnings: &mut Vec<Warning>) -> Vec<RunRecord>;

    /// Reads one run: by default the records of every file, made into cells by [`records::read_records`].
    fn read_run(&self, context: &ReadContext<'_>, run: &DetectedRun) -> RunRead {
        records::read_records(
            self.name(),
            &|file, warnings| self.records(file, warnings),
            context,
            run,
        )
    }

    /// The request rows of one cell, read back from its file: by default its record read again.
    fn read_rows(
        &self,
        storage: &dyn Storage,
        rows: &CellRows,
    ) -> Result<Vec<RequestRow>, RowsError> {
        records::read_record_rows(
            &|file, warnings| self.records(file, warnings),
            storage,
            rows,
        )
    }

    /// What the names in one directory's listing show, for a format in [`BY_NAME`]: the run or backup the
    /// directory is (its files are then not offered to the formats one by one), the names it deals with, whether
    /// everything under it is a run's, and what is wrong in it. By default nothing.
    fn listing(&self, directory: &str, entries: &[Entry]) -> Listed {
        let _ = (directory, entries);
        Listed::default()
    }

    /// What a read of `run` depends on besides the code: the files it opens, each required or not, and whether
    /// `cellscope.toml`. The cache keys a read on them and uses it only while each file is as it was. For a
    /// backup, `master` is the run it is a backup of. By default the run's own files and `cellscope.toml`.
    fn inputs(&self, run: &DetectedRun, master: Option<&DetectedRun>) -> Inputs {
        let _ = master;
        Inputs::of(&run.files)
    }

    /// Reads a backup (a run as it was before a refill changed it, which [`RunFormat::listing`] found) and
    /// compares it with `master`, the run it is a backup of when that was found. By default a format keeps no
    /// backups: only the backup's size is read, and nothing is compared.
    fn read_backup(
        &self,
        context: &ReadContext<'_>,
        backup: &DetectedRun,
        master: Option<&DetectedRun>,
    ) -> BackupRead {
        let _ = master;
        let path = backup.files.first().cloned().unwrap_or_default();
        let bytes = context.storage.stat(&path).map_or(0, |meta| meta.bytes);
        let of = backup.backup_of.clone().unwrap_or_default();
        BackupRead {
            of: of.run,
            label: of.label,
            root: backup.root.clone(),
            digest: cellscope_model::api::FileDigest {
                path,
                bytes,
                md5: None,
                sha256: None,
            },
            diff: None,
            parsed: None,
        }
    }

    /// How the format's files give every key dimension when they state them all (its rows' columns), which
    /// `cellscope index --explain` says in place of each record's key; `None` for a format keyed record by record.
    fn keys_stated(&self) -> Option<&'static str> {
        None
    }
}

/// Declares each format's module and lists it in the registry, each module naming its format `FORMAT`: those
/// `by_name` find their runs by the names in a directory's listing ([`RunFormat::listing`]) and are not offered
/// files one by one; those `by_content` are offered each file that may be a result, in the order written. A module
/// marked `[fuzzing]` has fuzz targets of its own in that child module, which `crate::fuzzing` re-exports.
macro_rules! formats {
    (
        by_name: $($named:ident $([$named_fuzzing:ident])?),* ;
        by_content: $($content:ident $([$content_fuzzing:ident])?),* $(,)?
    ) => {
        $(mod $named;)*
        $(mod $content;)*

        /// The formats that find their runs by the names in a directory's listing.
        pub(crate) static BY_NAME: &[&dyn RunFormat] = &[$($named::FORMAT),*];

        /// The formats offered each file that may be a result, in detection order.
        pub(crate) static BY_CONTENT: &[&dyn RunFormat] = &[$($content::FORMAT),*];

        /// The fuzz targets of the formats that have their own.
        #[cfg(feature = "fuzzing")]
        pub(crate) mod fuzz_entry_points {
            $($(pub use super::$named::$named_fuzzing::*;)?)*
            $($(pub use super::$content::$content_fuzzing::*;)?)*
        }
    };
}

// The generic table comes last, so every specific format wins a file it recognises.
formats! {
    by_name: tr164 [fuzzing];
    by_content: vllm, sglang, aiperf, genai_perf, llmperf, guidellm, inferencex, perf_csv, llmd_report,
        inference_perf, mlperf, console_log, table,
}

/// Every format: those found by name, then those found by content.
pub(crate) fn all() -> impl Iterator<Item = &'static dyn RunFormat> {
    BY_NAME.iter().chain(BY_CONTENT).copied()
}

/// The format called `name`.
pub(crate) fn by_name(name: &str) -> Option<&'static dyn RunFormat> {
    all().find(|format| format.name() == name)
}

/// What discovery asks of the formats: [`BY_NAME`]'s listings, and [`BY_CONTENT`]'s verdicts on each file.
pub(crate) struct Registry;

impl Recognise for Registry {
    fn listing(&self, directory: &str, entries: &[Entry]) -> Listed {
        let mut all = Listed::default();
        for format in BY_NAME {
            let listed = format.listing(directory, entries);
            all.runs.extend(listed.runs);
            all.names.extend(listed.names);
            all.owns_subtree |= listed.owns_subtree;
            all.warnings.extend(listed.warnings);
        }
        all
    }

    /// The format of [`BY_CONTENT`] whose content the file at `path` has, looking at its first [`HEAD_BYTES`]
    /// only (of its outline, for a longer JSON file: see `parse/outline.rs`), and the root of its run; or, when
    /// no format reads it, why. The first format that reads the file takes it.
    fn file(&self, storage: &dyn Storage, mapping: &Mapping, path: &str) -> Offered {
        let head = match storage
            .read_range(path, 0..HEAD_BYTES)
            .and_then(|head| outline::head(storage, path, head, HEAD_BYTES))
        {
            Ok(head) => head,
            Err(error) => return Offered::Unread(verdict::unreadable(&error)),
        };
        let file = FileAt {
            storage,
            mapping,
            path,
            head: &head,
        };
        let mut verdicts = Vec::new();
        for format in BY_CONTENT {
            let verdict = format.examine(&file);
            if verdict.reads() {
                return Offered::Run {
                    format: format.name(),
                    root: format.run_root(path),
                };
            }
            verdicts.push((format.name(), verdict));
        }
        Offered::Unread(verdict::unread_file(path, &head, &verdicts))
    }
}

/// What `format` makes of the file at `path` under `data/fixtures/formats` (with the files beside it there, and no
/// `cellscope.toml`) when its first bytes are `head`.
#[cfg(test)]
pub(crate) fn examine_head(format: &dyn RunFormat, path: &str, head: &[u8]) -> Verdict {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/formats");
    format.examine(&FileAt {
        storage: &crate::storage::LocalDisk::new(&fixtures),
        mapping: &Mapping::default(),
        path,
        head,
    })
}

/// Whether `format` reads the file at `path` under `data/fixtures/formats` ([`examine_head`]).
#[cfg(test)]
pub(crate) fn detect(format: &dyn RunFormat, path: &str, head: &[u8]) -> bool {
    examine_head(format, path, head).reads()
}

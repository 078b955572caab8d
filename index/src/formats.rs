//! The run-format half of the ingest seam: every input format is a [`RunFormat`] that detects its files by
//! content, reads them into the stage-2 product ([`RunRead`]: cells with request statistics and row locators)
//! and reads one cell's rows back; [`FORMATS`] is the registry of them all.
//!
//! TR164 run directories ([`tr164`]) read their side files, backups and lineage evidence themselves. The other
//! tools' formats only say what is in their files: one [`RunRecord`] per measured cell (key parts as read,
//! per-request rows, the tool's own aggregates); everything else is done once for all of them in `records/`, so a
//! new format is one sibling module plus one line in [`FORMATS`].

pub mod aiperf;
pub mod console_log;
pub mod genai_perf;
pub mod guidellm;
pub mod inference_perf;
pub mod inferencex;
pub mod llmd_report;
pub mod llmperf;
pub mod mlperf;
pub mod perf_csv;
pub mod sglang;
pub mod table;
pub mod tr164;
pub mod vllm;

use crate::mapping::Mapping;
use crate::parse::{HEAD_BYTES, outline};
use crate::records::{self, verdict};
use crate::run::found::{DetectedRun, Offered};
use crate::run::record::{FileAt, RunRecord};
use crate::run::rows::{CellRows, RowsError};
use crate::run::{ReadContext, RunRead};
use crate::storage::Storage;
use cellscope_model::api::Warning;
use cellscope_model::requests::RequestRow;

pub use records::verdict::{Nearness, Verdict};

/// One input format.
pub trait RunFormat: Sync {
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
}

/// Every format, in detection order (TR164 first: its `metrics.csv` is recognised by name and header; the
/// generic table last, so every specific format wins a file it recognises).
pub static FORMATS: &[&dyn RunFormat] = &[
    &tr164::Tr164,
    &vllm::VllmBench,
    &sglang::SglangBench,
    &aiperf::Aiperf,
    &genai_perf::GenaiPerf,
    &llmperf::Llmperf,
    &guidellm::Guidellm,
    &inferencex::InferencexAggregate,
    &perf_csv::PerfCsv,
    &llmd_report::LlmdReport,
    &inference_perf::InferencePerf,
    &mlperf::MlperfLoadgen,
    &console_log::ConsoleLog,
    &table::Table,
];

/// The other tool's format whose content the file at `path` has, looking at its first [`HEAD_BYTES`] only (of its
/// outline, for a longer JSON file: see `parse/outline.rs`), and the root of its run; or, when no format reads
/// it, why (TR164 run directories are found by discovery, by their metrics file's name). The first format in
/// [`FORMATS`] that reads the file takes it.
pub fn recognise(storage: &dyn Storage, mapping: &Mapping, path: &str) -> Offered {
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
    for format in FORMATS
        .iter()
        .filter(|format| format.name() != tr164::Tr164.name())
    {
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

/// The format called `name`.
pub fn by_name(name: &str) -> Option<&'static dyn RunFormat> {
    FORMATS.iter().copied().find(|format| format.name() == name)
}

/// What `format` makes of the file at `path` under `data/fixtures/formats` (with the files beside it there, and no
/// `cellscope.toml`) when its first bytes are `head`.
#[cfg(test)]
pub(crate) fn examine_head(format: &dyn RunFormat, path: &str, head: &[u8]) -> Verdict {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/formats");
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

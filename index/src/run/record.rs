//! What a format hands the record machinery for each file it reads: the file it is given ([`FileAt`]), and one
//! [`RunRecord`] per measured cell, with the key parts ([`Part`]) and deployment settings ([`Setting`]) it states,
//! its requests in cellscope's units and the tool's own figures.

use crate::mapping::Mapping;
use crate::storage::Storage;
use cellscope_model::api::EnvironmentField;
use cellscope_model::config;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// A file of the data root as a format is handed it: where it is, what detection read of it, and what reading it
/// may need besides (the files beside it, `cellscope.toml`).
#[derive(Clone, Copy)]
pub(crate) struct FileAt<'a> {
    pub storage: &'a dyn Storage,
    pub mapping: &'a Mapping,
    /// The file, relative to the data root.
    pub path: &'a str,
    /// Its first bytes as detection sees them (64 KiB, of its outline for a long JSON file); empty where the
    /// file is read whole.
    pub head: &'a [u8],
}

impl<'a> FileAt<'a> {
    /// The file at `path` for reading whole (no head).
    pub(crate) fn whole(
        storage: &'a dyn Storage,
        mapping: &'a Mapping,
        path: &'a str,
    ) -> FileAt<'a> {
        FileAt {
            storage,
            mapping,
            path,
            head: &[],
        }
    }
}

/// A key part and how it was obtained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    pub value: String,
    pub how: How,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum How {
    /// Read from the named field or place of the file.
    Read(String),
    /// Inferred by the named rule.
    Inferred(String),
}

impl Part {
    pub(crate) fn read(value: impl Into<String>, field: impl Into<String>) -> Option<Part> {
        Some(Part {
            value: value.into(),
            how: How::Read(field.into()),
        })
    }

    pub(crate) fn inferred(value: impl Into<String>, rule: impl Into<String>) -> Option<Part> {
        Some(Part {
            value: value.into(),
            how: How::Inferred(rule.into()),
        })
    }
}

/// The key parts a record states; `None` leaves the dimension to `cellscope.toml` or the default rule.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyParts {
    /// Suite and phase are stated only by files that have them (a table's columns).
    pub suite: Option<Part>,
    pub phase: Option<Part>,
    pub backend: Option<Part>,
    pub model: Option<Part>,
    pub workload: Option<Part>,
    /// The load: a concurrency `n`, else an offered request rate (`rate`, req/s, `inf` allowed).
    pub n: Option<Part>,
    pub rate: Option<Part>,
    pub rep: Option<Part>,
}

/// One parameter found for a record: canonical name, normalised value and where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Setting {
    /// The canonical name ([`config::canonical_name`]).
    pub name: String,
    /// The value, normalised for its parameter ([`config::normalise_value`]).
    pub value: String,
    /// Read from a field of the file, or inferred from a path component by a named rule.
    pub how: How,
}

impl Setting {
    pub(crate) fn new(name: &str, value: &str, how: How) -> Setting {
        Setting {
            name: config::canonical_name(name),
            value: config::normalise_value(name, value),
            how,
        }
    }
}

/// One request as a tool recorded it, in cellscope's units (ms, tokens, seconds). Missing values stay `None`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Request {
    pub wall_ms: Option<f64>,
    pub ttft_ms: Option<f64>,
    /// The inter-token gaps in order, ms, when the file records them per request.
    pub itl_ms: Option<Vec<f64>>,
    pub prompt_tokens: Option<f64>,
    pub completion_tokens: Option<f64>,
    /// Start and end on one clock, in seconds (epoch or monotonic); both or neither.
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    /// `Some` for a failed request: the tool's error text (may be empty when only a code is known).
    pub error: Option<String>,
}

/// When a file says its run started: RFC 3339 in UTC to the second, and the key or line it was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Started {
    pub at: String,
    pub key: String,
}

/// One measured cell of another tool's file.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunRecord {
    /// Which record of the file, from 0 (object, line, benchmark, experiment).
    pub record: u32,
    /// 1-based line where the record starts, for line-oriented files.
    pub line: Option<u64>,
    /// The record's own fields, for `{field}` templates in `cellscope.toml`.
    pub fields: Json,
    pub key: KeyParts,
    /// Per-request rows; empty when the file holds aggregates only.
    pub requests: Vec<Request>,
    /// The file has per-request rows (even if none survived).
    pub has_requests: bool,
    /// Requests the tool sent, when it says (vLLM `num_prompts`): the expected rows.
    pub expected_rows: Option<u32>,
    /// Succeeded and failed requests known only as counts (aggregate-only records).
    pub completed: Option<u32>,
    pub failed: Option<u32>,
    /// The tool's measured duration in seconds: the throughput span when requests carry no timestamps.
    pub duration_s: Option<f64>,
    /// The tool's own aggregates by cells-table column name (ms, tokens, tok/s).
    pub reported: BTreeMap<String, f64>,
    /// Every number the tool reports for the record, under its own key (`records/figures.rs`), whether or not a
    /// cells-table column corresponds to it.
    pub reported_figures: BTreeMap<String, f64>,
    /// Wall latency was rebuilt (TTFT + Σ ITL) rather than read.
    pub wall_derived: bool,
    pub notes: Vec<String>,
    /// Figures the reader computed from the tool's (a per-GPU throughput times the GPUs it was divided by), by
    /// cells-table column; shown marked derived, and only where neither the requests nor `reported` give one.
    pub derived: BTreeMap<String, f64>,
    /// Deployment parameters the record states in its own structure (a stack description, a name field), each
    /// with the field it was read from; they join those `records/config.rs` finds.
    pub settings: Vec<Setting>,
    /// The tool judged the whole record invalid (an MLPerf `INVALID` result): the status word its requests are
    /// counted under as failed, and why. Its figures stay, marked reported, but never as a clean cell's.
    pub rejected: Option<(String, String)>,
    /// Requests left out because a number of theirs is not a measurement (`records/census.rs`).
    pub malformed: u32,
    /// Settings the record states that are neither measurements, times nor ids, nor already part of its key (a
    /// wrapper script's serve parameter, a run label), by name: records that would share a key but differ in one
    /// are kept apart by it rather than taken as repetitions (`records/key.rs`, `records_differ`).
    pub recorded: BTreeMap<String, String>,
    /// When the record's measurement started, as the file records it; the run's start is its records' earliest.
    pub started: Option<Started>,
    /// How the run was made, as the file records it (the engine's version and commit).
    pub environment: BTreeMap<EnvironmentField, String>,
}

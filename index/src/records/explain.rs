//! What `cellscope index --explain` says of the records of one file: the run they are read into, and for each its
//! cell with, for every dimension, the field it was read from or the rule (or `cellscope.toml` entry) that
//! inferred it, its notes and its configuration.

use super::key;
use crate::mapping::Mapping;
use crate::run::record::RunRecord;
use cellscope_model::api::Warning;
use std::fmt::Write as _;

/// The lines about `records`, the records a `format` reader found in `relative`, read into the run `run_id`;
/// then every warning reading and keying them gave (`warnings` holds those of reading them).
pub(crate) fn records_text(
    format: &'static str,
    relative: &str,
    run_id: &str,
    records: Vec<RunRecord>,
    mapping: &Mapping,
    mut warnings: Vec<Warning>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "  run id: {run_id}");
    let keyed = key::resolve(
        format,
        mapping,
        run_id,
        records
            .into_iter()
            .map(|record| (relative.to_string(), record))
            .collect(),
        &mut warnings,
    );
    for record in &keyed {
        let _ = writeln!(
            out,
            "  record {}{}: {} requests{}",
            record.record.record,
            record
                .record
                .line
                .map(|line| format!(" (line {line})"))
                .unwrap_or_default(),
            record.record.requests.len(),
            if record.record.has_requests {
                ""
            } else {
                " (aggregates only: figures are the tool's, reported)"
            }
        );
        for (dimension, value, how) in key::explain_rules(record) {
            let _ = writeln!(out, "    {dimension:<9}= {value:<28} {how}");
        }
        for note in &record.record.notes {
            let _ = writeln!(out, "    note: {note}");
        }
        for line in record.config.explain_lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    for warning in &warnings {
        let _ = writeln!(out, "  {warning}");
    }
    out
}

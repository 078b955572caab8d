//! `cellscope audit`: the per-run census and breakdown table, as text or JSON, and `--strict`'s exit code.

use super::{CacheArgs, DataRoot, load_root};
use anyhow::Context;
use cellscope::audit;
use cellscope::terminal::printable;
use cellscope_index::IndexOptions;
use cellscope_model::Criterion;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub(super) struct AuditArgs {
    /// The data root holding run directories (directories with a metrics.csv): a directory, or object
    /// storage as `s3://bucket/prefix`, `gs://…`, `az://…` or `file://…` (every command takes either).
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Exit 1 when request-level failures remain that no refill or exclusion accounts for, or when a claim of
    /// a REFILL_NOTE.md does not hold.
    #[arg(long)]
    strict: bool,
    /// Breakdown criterion: v1 (efficiency < 0.65 or p95 multiplier > 2.0) or v3 (efficiency < 0.65).
    #[arg(long, default_value = "v1", value_parser = ["v1", "v3"])]
    criterion: String,
    #[command(flatten)]
    cache: CacheArgs,
}

pub(super) fn run(arguments: AuditArgs) -> anyhow::Result<ExitCode> {
    let AuditArgs {
        data_dir,
        json,
        strict,
        criterion,
        cache,
    } = arguments;
    let root = DataRoot::open(data_dir, &cache)?;
    let named =
        Criterion::named(&criterion).with_context(|| format!("unknown criterion {criterion}"))?;
    let index = load_root(&root, &cache, &IndexOptions::default())?;
    let mut report = audit::report(&index, &named);
    report.root = root.shown.clone();
    let mut stdout = std::io::stdout().lock();
    if json {
        let with_figures = AuditJson {
            report: &report,
            reported_figures: reported_figures(&index),
        };
        serde_json::to_writer_pretty(&mut stdout, &with_figures).context("writing JSON")?;
        writeln!(stdout)?;
    } else {
        stdout.write_all(printable(&audit::render_text(&report)).as_bytes())?;
    }
    if strict && !report.strict_ok() {
        explain_strict_failure(&report);
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The audit as `--json` writes it: the report, then every number the tools reported for their cells.
#[derive(serde::Serialize)]
struct AuditJson<'a> {
    #[serde(flatten)]
    report: &'a audit::AuditReport<'a>,
    /// Absent for a root of TR164 runs only, whose figures are all recomputed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    reported_figures: Vec<CellFigures<'a>>,
}

/// Every number another tool reported for one cell, under the tool's own names.
#[derive(serde::Serialize)]
struct CellFigures<'a> {
    key: String,
    format: &'a str,
    file: &'a str,
    record: u32,
    figures: &'a std::collections::BTreeMap<String, f64>,
}

/// The reported figures of every cell of another tool's file, in key order.
fn reported_figures(index: &cellscope_index::Index) -> Vec<CellFigures<'_>> {
    index
        .provenance
        .iter()
        .filter_map(|(key, provenance)| {
            let origin = provenance.origin.as_ref()?;
            (!origin.reported_figures.is_empty()).then(|| CellFigures {
                key: key.to_string(),
                format: &origin.format,
                file: &origin.file,
                record: origin.record,
                figures: &origin.reported_figures,
            })
        })
        .collect()
}

/// Says on standard error why `--strict` fails.
fn explain_strict_failure(report: &audit::AuditReport<'_>) {
    if !report.unaccounted_failures.is_empty() {
        eprintln!(
            "audit --strict: {} cells with {} failed rows are not accounted for by a refill or exclusion",
            report.unaccounted_failures.len(),
            report.unaccounted_failed_rows
        );
    }
    if report.note_mismatches > 0 {
        eprintln!(
            "audit --strict: {} REFILL_NOTE claims are contradicted by the files",
            report.note_mismatches
        );
    }
}

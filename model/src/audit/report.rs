//! The whole audit of an index, as `cellscope audit` prints it (text, or the report as JSON): per-run census,
//! hashes, warnings, refill and exclusion summary, the REFILL_NOTE claims checked against the files, the breakdown
//! table, and the request-level failures nothing accounts for. Built and laid out here, so the CLI only reads the
//! index and writes the result.

use super::{NOTE_MISMATCH, join_parts, note_warnings, run_lines, run_role, warnings_value};
use crate::api::{LedgerEntry, RunFacts, Warning};
use crate::audit::{NoteClaim, check_refill_note, thousands};
use crate::curve::{Breakdown, CurveOptions, series_curves};
use crate::exclusions::ExclusionScope;
use crate::key::{CellKey, SeriesKey};
use crate::load::{Load, LoadKind};
use crate::scaling::Criterion;
use crate::summary::CellSummary;
use serde::Serialize;
use std::fmt::Write as _;

/// The criterion the breakdown table uses, as the report states it.
#[derive(Clone, Debug, Serialize)]
pub struct CriterionInfo {
    /// `v1`, `v3` or `custom`.
    pub name: String,
    /// Efficiency below this is a breakdown.
    pub efficiency_below: f64,
    /// A p95 multiplier above this is a breakdown (none under v3).
    pub p95_multiplier_above: Option<f64>,
}

/// One curve of the breakdown table.
#[derive(Clone, Debug, Serialize)]
pub struct BreakdownRow {
    /// The series the curve draws.
    #[serde(flatten)]
    pub series: SeriesKey,
    /// First N at which the criterion holds on rep means; `null` = never within the measured N or no data.
    pub breakdown_n: Option<u32>,
    /// The breakdown with the difference between "never within the measured N" and "no data".
    pub breakdown: Breakdown,
    /// The efficiency at the breakdown N.
    pub efficiency_at_breakdown: Option<f64>,
    /// The p95 multiplier at the breakdown N.
    pub p95_multiplier_at_breakdown: Option<f64>,
    /// N values with data, ascending.
    pub measured_n: Vec<u32>,
    /// N values where cells are skipped (sentinel only): the curve ends there.
    pub skipped_n: Vec<u32>,
}

/// A cell whose failed rows no refill and no `all`-scope exclusion accounts for.
#[derive(Clone, Debug, Serialize)]
pub struct UnaccountedCell {
    /// The cell.
    pub key: CellKey,
    /// Its failed rows.
    pub failed_rows: u32,
    /// All its rows.
    pub rows: u32,
}

/// One run's block of the audit.
#[derive(Clone, Debug, Serialize)]
pub struct RunAudit<'a> {
    /// The run's facts, as `/api/index` lists them.
    #[serde(flatten)]
    pub run: &'a RunFacts,
    /// The indexer's warnings of the run, then one per REFILL_NOTE claim the files contradict.
    pub warnings: Vec<Warning>,
    /// The claims of the run's `REFILL_NOTE.md` checked against the files (empty without a note).
    pub note_claims: Vec<NoteClaim>,
}

/// The audit of an index.
#[derive(Clone, Debug, Serialize)]
pub struct AuditReport<'a> {
    /// The data root, as the user named it.
    pub root: String,
    /// The breakdown criterion.
    pub criterion: CriterionInfo,
    /// How many cells the index holds.
    pub cells: usize,
    /// One block per run.
    pub runs: Vec<RunAudit<'a>>,
    /// Warnings not tied to one run (ledgers, orphans).
    pub warnings: Vec<&'a Warning>,
    /// The exclusion ledger's entries and what each matched.
    pub exclusions: &'a [LedgerEntry],
    /// One row per series.
    pub breakdown: Vec<BreakdownRow>,
    /// Cells with failed rows nothing accounts for.
    pub unaccounted_failures: Vec<UnaccountedCell>,
    /// Their failed rows together.
    pub unaccounted_failed_rows: u64,
    /// Every warning of the report: the indexer's and the contradicted note claims.
    pub warning_count: usize,
    /// The REFILL_NOTE claims the files contradict, over every run.
    pub note_mismatches: usize,
}

/// What an audit reads of an index: its runs, warnings, cells and ledger entries.
#[derive(Clone, Copy, Debug)]
pub struct Audited<'a> {
    /// Every run.
    pub runs: &'a [RunFacts],
    /// Every warning of the index.
    pub warnings: &'a [Warning],
    /// Every cell.
    pub cells: &'a [CellSummary],
    /// The exclusion ledger's entries.
    pub exclusions: &'a [LedgerEntry],
}

impl AuditReport<'_> {
    /// No request-level failure unaccounted for and no REFILL_NOTE claim contradicted by the files.
    pub fn strict_ok(&self) -> bool {
        self.unaccounted_failures.is_empty() && self.note_mismatches == 0
    }
}

/// Each run's block: its warnings and its note's claims, checked with checksums and backup comparisons (the CLI
/// indexes with both, so everything a note claims can be checked).
fn run_audits<'a>(index: Audited<'a>) -> Vec<RunAudit<'a>> {
    index
        .runs
        .iter()
        .map(|run| {
            let note_claims = check_refill_note(run, index.runs, true);
            let mut warnings: Vec<Warning> = index
                .warnings
                .iter()
                .filter(|warning| warning.run.as_deref() == Some(&run.run_id))
                .cloned()
                .collect();
            warnings.extend(note_warnings(run, &note_claims));
            RunAudit {
                run,
                note_claims,
                warnings,
            }
        })
        .collect()
}

/// One curve per series under the default inclusion (partial cells in, `all`-scope exclusions out): the same
/// engine and breakdown rule as every view of the app.
fn breakdown_rows(cells: &[CellSummary], criterion: &Criterion) -> Vec<BreakdownRow> {
    series_curves(cells, &CurveOptions::default())
        .into_iter()
        .map(|curve| {
            let breakdown = curve.breakdown(criterion);
            let at = breakdown.load().and_then(|load| curve.point(load));
            let n_where = |keep: fn(&crate::curve::CurvePoint) -> bool| {
                curve
                    .points
                    .iter()
                    .filter(|point| keep(point))
                    .filter_map(|point| point.load.concurrency())
                    .collect()
            };
            BreakdownRow {
                series: curve.group.clone(),
                breakdown_n: breakdown.n(),
                breakdown,
                efficiency_at_breakdown: at
                    .and_then(|point| point.efficiency())
                    .map(|band| band.value),
                p95_multiplier_at_breakdown: at
                    .and_then(|point| point.p95_multiplier())
                    .map(|band| band.value),
                measured_n: n_where(|point| point.cells > 0),
                skipped_n: n_where(|point| point.skipped > 0),
            }
        })
        .collect()
}

/// The audit of an index of the data root `root` under a breakdown criterion.
pub fn report<'a>(root: String, index: Audited<'a>, criterion: &Criterion) -> AuditReport<'a> {
    let runs = run_audits(index);
    let note_mismatches = runs
        .iter()
        .flat_map(|audit| &audit.warnings)
        .filter(|warning| warning.kind == NOTE_MISMATCH)
        .count();
    let unaccounted_failures: Vec<UnaccountedCell> = index
        .cells
        .iter()
        .filter(|cell| cell.failed_rows > 0 && cell.exclusion_scope != Some(ExclusionScope::All))
        .map(|cell| UnaccountedCell {
            key: cell.key.clone(),
            failed_rows: cell.failed_rows,
            rows: cell.rows,
        })
        .collect();
    AuditReport {
        warning_count: index.warnings.len() + note_mismatches,
        note_mismatches,
        root,
        criterion: CriterionInfo {
            name: criterion.name().to_string(),
            efficiency_below: criterion.efficiency_below(),
            p95_multiplier_above: criterion.p95_multiplier_above(),
        },
        cells: index.cells.len(),
        runs,
        // Warnings naming no run, and those naming a run the index does not hold (a directory set aside before
        // it became a run): listed here, so that every warning is printed once.
        warnings: index
            .warnings
            .iter()
            .filter(|warning| {
                warning
                    .run
                    .as_deref()
                    .is_none_or(|run_id| !index.runs.iter().any(|run| run.run_id == run_id))
            })
            .collect(),
        exclusions: index.exclusions,
        breakdown: breakdown_rows(index.cells, criterion),
        unaccounted_failed_rows: unaccounted_failures
            .iter()
            .map(|cell| u64::from(cell.failed_rows))
            .sum(),
        unaccounted_failures,
    }
}

fn optional(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "—".to_string(), |value| format!("{value:.decimals$}"))
}

/// The report as the terminal prints it.
pub fn render_text(report: &AuditReport<'_>) -> String {
    let mut out = String::new();
    write_heading(&mut out, report);
    for audit in &report.runs {
        write_run(&mut out, audit);
    }
    if !report.warnings.is_empty() {
        let _ = writeln!(out, "\nwarnings outside runs");
        for warning in &report.warnings {
            let _ = writeln!(out, "  {warning}");
        }
    }
    write_exclusions(&mut out, report.exclusions);
    write_breakdown(&mut out, report);
    let _ = writeln!(out);
    write_failures(&mut out, report);
    out
}

fn write_heading(out: &mut String, report: &AuditReport<'_>) {
    let criterion = &report.criterion;
    let _ = writeln!(
        out,
        "cellscope audit of {} — {} runs, {} cells, {} warnings",
        report.root,
        report.runs.len(),
        report.cells,
        report.warning_count
    );
    let _ = writeln!(
        out,
        "criterion {}: efficiency < {}{}",
        criterion.name,
        criterion.efficiency_below,
        criterion
            .p95_multiplier_above
            .map(|value| format!(" or p95 multiplier > {value}"))
            .unwrap_or_default()
    );
}

fn write_run(out: &mut String, audit: &RunAudit<'_>) {
    let run = audit.run;
    let _ = writeln!(out);
    let role = run_role(run)
        .map(|role| format!(" — {role}"))
        .unwrap_or_default();
    let _ = writeln!(out, "run {} ({}){role}", run.run_id, run.path);
    for line in run_lines(run) {
        let _ = writeln!(out, "  {:<9} {}", line.label, line.value());
        // The note's claims sit under the refill line they document, aligned with its value.
        if line.label == "refill" {
            for claim in &audit.note_claims {
                let _ = writeln!(out, "  {:<9} {}", "", join_parts(&claim.parts()));
            }
        }
    }
    let _ = writeln!(
        out,
        "  {:<9} {}",
        "warnings",
        warnings_value(audit.warnings.len())
    );
    for warning in &audit.warnings {
        let _ = writeln!(out, "    {warning}");
    }
}

fn write_exclusions(out: &mut String, exclusions: &[LedgerEntry]) {
    if exclusions.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nexclusion ledger");
    for entry in exclusions {
        let _ = writeln!(
            out,
            "  {} [{}] {} cells · selects {} · {} ({})",
            entry.entry.id,
            entry.entry.scope.as_str(),
            entry.matched_cells,
            entry.entry.describe_select(),
            entry.entry.reason,
            entry.file
        );
    }
    // Each scope the ledger uses, said once in words.
    let scopes: std::collections::BTreeSet<ExclusionScope> =
        exclusions.iter().map(|entry| entry.entry.scope).collect();
    for scope in scopes {
        let _ = writeln!(out, "  {}", scope.meaning());
    }
}

fn write_breakdown(out: &mut String, report: &AuditReport<'_>) {
    let _ = writeln!(
        out,
        "\nbreakdown N (criterion {}; rep means; — = never within the measured N)",
        report.criterion.name
    );
    let _ = writeln!(
        out,
        "  {:<24} {:<8} {:<15} {:<13} {:<16} {:>4} {:>8} {:>8}  notes",
        "run", "phase", "backend", "model", "workload", "N*", "eff@N*", "p95x@N*"
    );
    for row in &report.breakdown {
        let mut notes = Vec::new();
        if row.breakdown == Breakdown::NoData {
            notes.push("no data".to_string());
        }
        if row.series.load_kind != LoadKind::Concurrency {
            notes.push(format!("load: {}", row.series.load_kind.name()));
        }
        if !row.skipped_n.is_empty() {
            let skipped: Vec<String> = row.skipped_n.iter().map(u32::to_string).collect();
            notes.push(format!("skipped at N={}", skipped.join(",")));
        }
        let _ = writeln!(
            out,
            "  {:<24} {:<8} {:<15} {:<13} {:<16} {:>4} {:>8} {:>8}  {}",
            row.series.run_id,
            row.series.phase,
            row.series.backend,
            row.series.model,
            row.series.workload,
            match row.breakdown {
                Breakdown::At {
                    load: Load::Concurrency(n),
                } => n.to_string(),
                Breakdown::At { load } => load.to_string(),
                Breakdown::Never { .. } => "—".to_string(),
                Breakdown::NoData => "n/a".to_string(),
            },
            optional(row.efficiency_at_breakdown, 3),
            optional(row.p95_multiplier_at_breakdown, 3),
            notes.join("; ")
        );
    }
}

fn write_failures(out: &mut String, report: &AuditReport<'_>) {
    if report.note_mismatches > 0 {
        let _ = writeln!(
            out,
            "REFILL_NOTE claims contradicted by the files: {} (listed under their runs' warnings)",
            report.note_mismatches
        );
    }
    if report.unaccounted_failures.is_empty() {
        let _ = writeln!(out, "request-level failures: none unaccounted for");
        return;
    }
    let _ = writeln!(
        out,
        "request-level failures not accounted for by a refill or an `all`-scope exclusion: {} cells, {} rows",
        report.unaccounted_failures.len(),
        thousands(report.unaccounted_failed_rows)
    );
    for cell in &report.unaccounted_failures {
        let _ = writeln!(
            out,
            "  {} — {} of {} rows failed",
            cell.key, cell.failed_rows, cell.rows
        );
    }
}

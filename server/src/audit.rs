//! `cellscope audit`: per-run census, hashes, warnings, refill and exclusion summary (worded by
//! `cellscope_model::audit`, like the app's Audit page), the REFILL_NOTE claims checked against the files, the
//! breakdown table, and the strict check for request-level failures that nothing accounts for.

use cellscope_index::Index;
use cellscope_model::api::{LedgerEntry, RunFacts, Warning};
use cellscope_model::audit::{self as model_audit, NoteClaim, thousands};
use cellscope_model::curve::{Breakdown, CurveOptions, series_curves};
use cellscope_model::exclusions::ExclusionScope;
use cellscope_model::{CellKey, Criterion, SeriesKey};
use serde::Serialize;
use std::fmt::Write as _;

#[derive(Clone, Debug, Serialize)]
pub struct CriterionInfo {
    pub name: String,
    pub efficiency_below: f64,
    pub p95_multiplier_above: Option<f64>,
}

/// One curve of the breakdown table.
#[derive(Clone, Debug, Serialize)]
pub struct BreakdownRow {
    #[serde(flatten)]
    pub series: SeriesKey,
    /// First N at which the criterion holds on rep means; `null` = never within the measured N or no data.
    pub breakdown_n: Option<u32>,
    /// The breakdown with the difference between "never within the measured N" and "no data".
    pub breakdown: Breakdown,
    pub efficiency_at_breakdown: Option<f64>,
    pub p95_multiplier_at_breakdown: Option<f64>,
    /// N values with data, ascending.
    pub measured_n: Vec<u32>,
    /// N values where cells are skipped (sentinel only): the curve ends there.
    pub skipped_n: Vec<u32>,
}

/// A cell whose failed rows no refill and no `all`-scope exclusion accounts for.
#[derive(Clone, Debug, Serialize)]
pub struct UnaccountedCell {
    pub key: CellKey,
    pub failed_rows: u32,
    pub rows: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunAudit<'a> {
    #[serde(flatten)]
    pub run: &'a RunFacts,
    /// The indexer's warnings of the run, then one per REFILL_NOTE claim the files contradict.
    pub warnings: Vec<Warning>,
    /// The claims of the run's `REFILL_NOTE.md` checked against the files (empty without a note).
    pub note_claims: Vec<NoteClaim>,
}

#[derive(Clone, Debug, Serialize)]
pub struct AuditReport<'a> {
    pub root: String,
    pub criterion: CriterionInfo,
    pub cells: usize,
    pub runs: Vec<RunAudit<'a>>,
    /// Warnings not tied to one run (ledgers, orphans).
    pub warnings: Vec<&'a Warning>,
    pub exclusions: &'a [LedgerEntry],
    pub breakdown: Vec<BreakdownRow>,
    pub unaccounted_failures: Vec<UnaccountedCell>,
    pub unaccounted_failed_rows: u64,
    /// Every warning of the report: the indexer's and the contradicted note claims.
    pub warning_count: usize,
    /// The REFILL_NOTE claims the files contradict, over every run.
    pub note_mismatches: usize,
}

impl AuditReport<'_> {
    /// No request-level failure unaccounted for and no REFILL_NOTE claim contradicted by the files.
    pub fn strict_ok(&self) -> bool {
        self.unaccounted_failures.is_empty() && self.note_mismatches == 0
    }
}

pub fn report<'a>(index: &'a Index, criterion: &Criterion) -> AuditReport<'a> {
    let runs: Vec<RunAudit<'a>> = index
        .runs
        .iter()
        .map(|run| {
            // The CLI indexes with checksums and backup comparisons, so everything the note claims can be checked.
            let note_claims = model_audit::check_refill_note(run, &index.runs, true);
            let mut warnings: Vec<Warning> = index
                .warnings
                .iter()
                .filter(|warning| warning.run.as_deref() == Some(&run.run_id))
                .cloned()
                .collect();
            warnings.extend(model_audit::note_warnings(run, &note_claims));
            RunAudit {
                run,
                note_claims,
                warnings,
            }
        })
        .collect();
    let note_mismatches = runs
        .iter()
        .flat_map(|audit| &audit.warnings)
        .filter(|warning| warning.kind == model_audit::NOTE_MISMATCH)
        .count();
    // One curve per series under the default inclusion (partial cells in, `all`-scope exclusions out): the same
    // engine and breakdown rule as every view of the app.
    let breakdown = series_curves(&index.cells, &CurveOptions::default())
        .into_iter()
        .map(|curve| {
            let breakdown = curve.breakdown(criterion);
            let at = breakdown.n().and_then(|n| curve.point(n));
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
                measured_n: curve
                    .points
                    .iter()
                    .filter(|point| point.cells > 0)
                    .map(|point| point.n)
                    .collect(),
                skipped_n: curve
                    .points
                    .iter()
                    .filter(|point| point.skipped > 0)
                    .map(|point| point.n)
                    .collect(),
            }
        })
        .collect();
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
        root: index.root.display().to_string(),
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
                    .is_none_or(|run_id| index.run(run_id).is_none())
            })
            .collect(),
        exclusions: &index.exclusions,
        breakdown,
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

/// The human-readable report.
pub fn render_text(report: &AuditReport<'_>) -> String {
    let mut out = String::new();
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
    for audit in &report.runs {
        let run = audit.run;
        let _ = writeln!(out);
        let role = model_audit::run_role(run)
            .map(|role| format!(" — {role}"))
            .unwrap_or_default();
        let _ = writeln!(out, "run {} ({}){role}", run.run_id, run.path);
        for line in model_audit::run_lines(run) {
            let _ = writeln!(out, "  {:<9} {}", line.label, line.value());
            // The note's claims sit under the refill line they document, aligned with its value.
            if line.label == "refill" {
                for claim in &audit.note_claims {
                    let _ = writeln!(
                        out,
                        "  {:<9} {}",
                        "",
                        model_audit::join_parts(&claim.parts())
                    );
                }
            }
        }
        let _ = writeln!(
            out,
            "  {:<9} {}",
            "warnings",
            model_audit::warnings_value(audit.warnings.len())
        );
        for warning in &audit.warnings {
            let _ = writeln!(out, "    {warning}");
        }
    }
    if !report.warnings.is_empty() {
        let _ = writeln!(out, "\nwarnings outside runs");
        for warning in &report.warnings {
            let _ = writeln!(out, "  {warning}");
        }
    }
    if !report.exclusions.is_empty() {
        let _ = writeln!(out, "\nexclusion ledger");
        for entry in report.exclusions {
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
        let scopes: std::collections::BTreeSet<ExclusionScope> = report
            .exclusions
            .iter()
            .map(|entry| entry.entry.scope)
            .collect();
        for scope in scopes {
            let _ = writeln!(out, "  {}", scope.meaning());
        }
    }
    let _ = writeln!(
        out,
        "\nbreakdown N (criterion {}; rep means; — = never within the measured N)",
        criterion.name
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
        if !row.skipped_n.is_empty() {
            notes.push(format!(
                "skipped at N={}",
                row.skipped_n
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ));
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
                Breakdown::At { n } => n.to_string(),
                Breakdown::Never { .. } => "—".to_string(),
                Breakdown::NoData => "n/a".to_string(),
            },
            optional(row.efficiency_at_breakdown, 3),
            optional(row.p95_multiplier_at_breakdown, 3),
            notes.join("; ")
        );
    }
    let _ = writeln!(out);
    if report.note_mismatches > 0 {
        let _ = writeln!(
            out,
            "REFILL_NOTE claims contradicted by the files: {} (listed under their runs' warnings)",
            report.note_mismatches
        );
    }
    if report.unaccounted_failures.is_empty() {
        let _ = writeln!(out, "request-level failures: none unaccounted for");
    } else {
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
    out
}

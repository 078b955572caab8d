//! The wording of the per-run audit, shared by `cellscope audit` and the app's Audit page: the census, rows,
//! metrics hashes, manifest, refill, backup and exclusion lines of a run, and the claims of its `REFILL_NOTE.md`
//! checked against the files ([`note`]). Both print these lines from here, so the terminal and the browser say
//! the same words; each only lays them out (padding in the terminal, monospace checksums in the browser).

pub mod note;
pub mod report;

use crate::api::{
    BackupComparison, BackupFacts, CellFailures, Census, FileDigest, IndexBody, RefillFacts,
    RunFacts, RunRole, Warning,
};
use std::collections::BTreeMap;

pub use note::{ClaimKind, HashAlgorithm, NoteClaim, NoteFile, Verdict, check_refill_note};

/// A piece of an audit line: words, or a value shown verbatim (a checksum: monospace and selectable in the
/// browser).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Words.
    Text(String),
    /// A value shown verbatim (a checksum).
    Code(String),
}

/// One labelled line of a run's audit (`cells`, `rows`, `metrics`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditLine {
    /// The line's label (`cells`, `rows`, `metrics`, …).
    pub label: &'static str,
    /// Its value, in pieces.
    pub parts: Vec<Part>,
}

impl AuditLine {
    fn text(label: &'static str, text: String) -> AuditLine {
        AuditLine {
            label,
            parts: vec![Part::Text(text)],
        }
    }

    /// The line's value as plain text (what the terminal prints after the label).
    pub fn value(&self) -> String {
        join_parts(&self.parts)
    }
}

/// Parts as plain text.
pub fn join_parts(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|part| match part {
            Part::Text(text) | Part::Code(text) => text.as_str(),
        })
        .collect()
}

pub use crate::metric::thousands;

/// What a run is when it is not an ordinary run: a refill run spliced into a master, or a copy set aside.
pub fn run_role(run: &RunFacts) -> Option<String> {
    match (run.role, &run.refill_of, &run.copy_of) {
        (RunRole::Refill, Some(master), _) => Some(format!(
            "refill run spliced into {master}; its spliced cells are counted there"
        )),
        (RunRole::Copy, _, Some(original)) => Some(format!(
            "a copy of run {original}; set aside, its cells are not indexed"
        )),
        _ => None,
    }
}

/// `360: clean 345, failed 0, … · refilled 0 · fallback 3 · excluded 0`.
pub fn cells_line(census: &Census) -> AuditLine {
    let statuses: Vec<String> = census
        .cells_by_status
        .iter()
        .map(|(status, count)| format!("{status} {count}"))
        .collect();
    AuditLine::text(
        "cells",
        format!(
            "{}: {} · refilled {} · fallback {} · excluded {}",
            census.cells,
            statuses.join(", "),
            census.refilled_cells,
            census.fallback_cells,
            census.excluded_cells
        ),
    )
}

/// `status 1,234, status 5` of a count map, or `None` when it is empty.
fn by_status(counts: &BTreeMap<String, u64>) -> Option<String> {
    (!counts.is_empty()).then(|| {
        counts
            .iter()
            .map(|(status, count)| format!("{status} {}", thousands(*count)))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// `23,916 real: ok 23,916, non-ok 0 · skip sentinels 14 · expected 26,784 / observed 23,916`. The expected and
/// observed counts cover only the cells that have an expected count: said so when other cells have rows too, and
/// left out when no cell has one, since `expected 0 / observed 0` beside real rows would read as a contradiction.
pub fn rows_line(census: &Census) -> AuditLine {
    let expected = if census.expected_rows == 0 && census.observed_rows == 0 {
        String::new()
    } else if census.observed_rows < census.rows {
        format!(
            " · expected {} / observed {} (cells with an expected count)",
            thousands(census.expected_rows),
            thousands(census.observed_rows)
        )
    } else {
        format!(
            " · expected {} / observed {}",
            thousands(census.expected_rows),
            thousands(census.observed_rows)
        )
    };
    AuditLine::text(
        "rows",
        format!(
            "{} real: ok {}, non-ok {}{} · skip sentinels {}{expected}{}",
            thousands(census.rows),
            thousands(census.ok_rows),
            thousands(census.failed_rows),
            by_status(&census.failed_by_status)
                .map(|statuses| format!(" ({statuses})"))
                .unwrap_or_default(),
            census.skip_rows,
            if census.malformed_rows > 0 {
                format!(" · malformed {}", census.malformed_rows)
            } else {
                String::new()
            }
        ),
    )
}

/// A checksum, or `—` before it is computed.
fn checksum(value: Option<&str>) -> Part {
    match value {
        Some(value) => Part::Code(value.to_string()),
        None => Part::Text("—".to_string()),
    }
}

/// `6,611,360 bytes · md5 … · sha256 …`.
pub fn metrics_line(metrics: &FileDigest) -> AuditLine {
    AuditLine {
        label: "metrics",
        parts: vec![
            Part::Text(format!("{} bytes · md5 ", thousands(metrics.bytes))),
            checksum(metrics.md5.as_deref()),
            Part::Text(" · sha256 ".to_string()),
            checksum(metrics.sha256.as_deref()),
        ],
    }
}

/// `2026-06-12 20:42 UTC · recorded in a/r.json (date)`: when the run started and where that was read; `None`
/// when nothing says.
pub fn started_line(run: &RunFacts) -> Option<AuditLine> {
    run.started.as_ref().map(|started| {
        AuditLine::text(
            "started",
            format!("{} · {}", started.label(), started.source_text()),
        )
    })
}

/// `complete · plan yes`.
pub fn manifest_line(run: &RunFacts) -> AuditLine {
    AuditLine::text(
        "manifest",
        format!(
            "{} · plan {}",
            run.manifest_status.as_deref().unwrap_or("none"),
            if run.has_plan { "yes" } else { "no" }
        ),
    )
}

/// `36 cells refilled from R (3,780 rows carry the refill run id) · REFILL_NOTE.md present`.
pub fn refill_line(refill: &RefillFacts) -> AuditLine {
    AuditLine::text(
        "refill",
        format!(
            "{} cells refilled from {} ({} rows carry the refill run id){}",
            refill.refilled_cells,
            if refill.refill_runs.is_empty() {
                "an unnamed run".to_string()
            } else {
                refill.refill_runs.join(", ")
            },
            thousands(refill.refill_rows),
            if refill.note.is_some() {
                " · REFILL_NOTE.md present"
            } else {
                ""
            }
        ),
    )
}

/// `3,780 rows replaced (were http_400 3,780) · only non-ok rows were replaced`.
pub fn backup_comparison(diff: &BackupComparison) -> String {
    format!(
        "{} rows replaced ({}) · {}",
        thousands(diff.replaced_rows),
        by_status(&diff.replaced_backup_status)
            .map_or_else(|| "none".to_string(), |statuses| format!("were {statuses}")),
        if diff.problem_count == 0 {
            "only non-ok rows were replaced".to_string()
        } else {
            format!("{} PROBLEMS, see warnings", diff.problem_count)
        }
    )
}

/// `<backup path> · md5 … · <comparison>` (the comparison once it is made).
pub fn backup_line(backup: &BackupFacts) -> AuditLine {
    let mut parts = vec![
        Part::Text(format!("{} · md5 ", backup.path)),
        checksum(backup.metrics.md5.as_deref()),
    ];
    if let Some(diff) = &backup.diff {
        parts.push(Part::Text(format!(" · {}", backup_comparison(diff))));
    }
    AuditLine {
        label: "backup",
        parts,
    }
}

/// `id (36 cells), …`, or `None` when no ledger entry matches the run.
pub fn exclusions_line(exclusions: &BTreeMap<String, u32>) -> Option<AuditLine> {
    (!exclusions.is_empty()).then(|| {
        AuditLine::text(
            "excluded",
            exclusions
                .iter()
                .map(|(id, count)| format!("{id} ({count} cells)"))
                .collect::<Vec<_>>()
                .join(", "),
        )
    })
}

/// Every line of a run's audit in order: its start, cells, rows, metrics, manifest, refill, each backup, exclusions. The
/// note's claims belong under the `refill` line and the warnings after the last line; callers place them.
pub fn run_lines(run: &RunFacts) -> Vec<AuditLine> {
    let mut lines: Vec<AuditLine> = started_line(run).into_iter().collect();
    lines.extend([
        cells_line(&run.census),
        rows_line(&run.census),
        metrics_line(&run.metrics),
        manifest_line(run),
    ]);
    lines.extend(run.refill.as_ref().map(refill_line));
    lines.extend(run.backups.iter().map(backup_line));
    lines.extend(exclusions_line(&run.exclusions));
    lines.extend(inferred_line(&run.inferred));
    lines
}

/// `inferred`: the key values of another tool's files that were not read but inferred, each with its rule and
/// how many cells carry it (`backend = vllm on 12 cells (cellscope.toml [[map]] 1: backend = "vllm")`).
pub fn inferred_line(inferred: &[crate::origin::InferredCount]) -> Option<AuditLine> {
    if inferred.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    for (index, count) in inferred.iter().enumerate() {
        if index > 0 {
            parts.push(Part::Text("; ".into()));
        }
        parts.push(Part::Text(format!("{} = ", count.dimension)));
        parts.push(Part::Code(count.value.clone()));
        parts.push(Part::Text(format!(
            " on {} cell{} ({})",
            count.cells,
            if count.cells == 1 { "" } else { "s" },
            count.rule
        )));
    }
    Some(AuditLine {
        label: "inferred",
        parts,
    })
}

/// The kind of the warning a contradicted `REFILL_NOTE.md` claim gives its run.
pub const NOTE_MISMATCH: &str = "refill_note_mismatch";

/// One warning per claim of the run's `REFILL_NOTE.md` that the files contradict (`MISMATCH`), on the note's
/// line: a note that misstates a checksum or a count is a problem of the run, counted and listed like the
/// indexer's warnings and failing `audit --strict`.
pub fn note_warnings(run: &RunFacts, claims: &[NoteClaim]) -> Vec<Warning> {
    let file = if run.path.is_empty() {
        "REFILL_NOTE.md".to_string()
    } else {
        format!("{}/REFILL_NOTE.md", run.path.trim_end_matches('/'))
    };
    claims
        .iter()
        .filter(|claim| claim.verdict == Verdict::Mismatch)
        .map(|claim| {
            let found = match (&claim.found, &claim.source) {
                (Some(found), Some(source)) => format!("found {found} in {source}"),
                (Some(found), None) => format!("found {found}"),
                _ => "the files contradict it".to_string(),
            };
            Warning::warn(
                NOTE_MISMATCH,
                format!(
                    "a claim of REFILL_NOTE.md does not hold: {}: the note says {}; {found}",
                    claim.what(),
                    claim.claimed
                ),
            )
            .run(&run.run_id)
            .file(&file)
            .line(claim.line)
        })
        .collect()
}

/// Every warning of a snapshot as the audit counts them: the indexer's, then one per contradicted note claim of
/// each run (checked against the checksums only once `index.complete`).
pub fn warnings(index: &IndexBody) -> Vec<Warning> {
    let mut warnings = index.warnings.clone();
    for run in &index.runs {
        let claims = check_refill_note(run, &index.runs, index.complete);
        warnings.extend(note_warnings(run, &claims));
    }
    warnings
}

/// What a cell's non-ok rows were, for the evidence of its audit row: `failed rows: http_400 105`, and for a
/// refilled cell `before the refill: http_400 105`; empty when it has had none.
pub fn failures_evidence(failures: &CellFailures) -> Vec<String> {
    let statuses = |counts: &BTreeMap<String, u32>| {
        counts
            .iter()
            .map(|(status, count)| format!("{status} {}", thousands(u64::from(*count))))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !failures.failed_by_status.is_empty() {
        parts.push(format!(
            "failed rows: {}",
            statuses(&failures.failed_by_status)
        ));
    }
    if !failures.pre_refill_failed_by_status.is_empty() {
        parts.push(format!(
            "before the refill: {}",
            statuses(&failures.pre_refill_failed_by_status)
        ));
    }
    parts
}

/// The warnings count line: `none` or how many (each warning follows on its own line).
pub fn warnings_value(count: usize) -> String {
    if count == 0 {
        "none".to_string()
    } else {
        count.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_by_three() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(3780), "3,780");
        assert_eq!(thousands(25_486_394), "25,486,394");
    }

    #[test]
    fn the_backup_comparison_says_what_the_replaced_rows_were() {
        let diff = BackupComparison {
            replaced_rows: 3780,
            replaced_backup_status: [("http_400".to_string(), 3780)].into_iter().collect(),
            ..BackupComparison::default()
        };
        assert_eq!(
            backup_comparison(&diff),
            "3,780 rows replaced (were http_400 3,780) · only non-ok rows were replaced"
        );
        let troubled = BackupComparison {
            problem_count: 2,
            ..BackupComparison::default()
        };
        assert_eq!(
            backup_comparison(&troubled),
            "0 rows replaced (none) · 2 PROBLEMS, see warnings"
        );
    }

    #[test]
    fn a_cells_failures_are_named_by_status_now_and_before_the_refill() {
        let key: crate::CellKey = "r/s/scaling/sglang/m/w/n=1/rep=0".parse().unwrap();
        let failures = CellFailures {
            key,
            failed_by_status: [("timeout".to_string(), 2)].into_iter().collect(),
            pre_refill_failed_by_status: [("http_400".to_string(), 1050)].into_iter().collect(),
        };
        assert_eq!(
            failures_evidence(&failures),
            [
                "failed rows: timeout 2",
                "before the refill: http_400 1,050"
            ]
        );
    }

    #[test]
    fn the_rows_line_states_expected_rows_only_where_some_cell_expects_any() {
        let census = |rows: u64, expected_rows: u64, observed_rows: u64| Census {
            rows,
            ok_rows: rows,
            expected_rows,
            observed_rows,
            ..Census::default()
        };
        // 100 rows of cells none of which says how many it expects: nothing to set them against.
        assert_eq!(
            rows_line(&census(100, 0, 0)).value(),
            "100 real: ok 100, non-ok 0 · skip sentinels 0"
        );
        // 23,916 rows against 26,784 expected, every cell with an expected count.
        assert_eq!(
            rows_line(&census(23_916, 26_784, 23_916)).value(),
            "23,916 real: ok 23,916, non-ok 0 · skip sentinels 0 · expected 26,784 / observed 23,916"
        );
        // 40 of 100 rows are in cells with an expected count (of 48): the counts say whose they are.
        assert_eq!(
            rows_line(&census(100, 48, 40)).value(),
            "100 real: ok 100, non-ok 0 · skip sentinels 0 · expected 48 / observed 40 (cells with an expected count)"
        );
        // Cells that expected no rows and have none: nothing wrong, and nothing to say.
        assert_eq!(
            rows_line(&census(0, 0, 0)).value(),
            "0 real: ok 0, non-ok 0 · skip sentinels 0"
        );
    }

    #[test]
    fn checksums_are_code_and_missing_ones_a_dash() {
        let line = metrics_line(&FileDigest {
            path: "r/metrics.csv".into(),
            bytes: 1_057_675,
            md5: Some("a8d5e7efe500e850aa76c41cc131edfd".into()),
            sha256: None,
        });
        assert_eq!(
            line.value(),
            "1,057,675 bytes · md5 a8d5e7efe500e850aa76c41cc131edfd · sha256 —"
        );
        assert_eq!(
            line.parts[1],
            Part::Code("a8d5e7efe500e850aa76c41cc131edfd".into())
        );
    }
}

//! Stage 3 of indexing: relate runs to each other. Which runs are refills spliced into a master and which are
//! copies (the rule is `cellscope_model::lineage`; this stage gathers its evidence from the files and turns its
//! findings into warnings with file and line), and what each master's backup comparison found.

use crate::run::parsed::ParsedMetrics;
use crate::run::rows::CellRows;
use crate::run::{BackupRead, RunRead, SpliceDiff};
use crate::storage::Storage;
use cellscope_model::api::{BackupFacts, Warning};
use cellscope_model::key::CellCoordinates;
use cellscope_model::lineage::{self, Finding, IdRows, Lineage, RunEvidence};
use std::collections::{BTreeMap, BTreeSet};

/// A master's backup file (relative to the data root), its length, and the byte offsets of the rows a refill
/// replaced, per cell.
pub(crate) type ReplacedRows = (String, u64, BTreeMap<CellCoordinates, Vec<u64>>);

/// What this stage decided and found.
pub(crate) struct Relations {
    pub lineage: Lineage,
    /// Master run id → its backups with their comparisons.
    pub backups: BTreeMap<String, Vec<BackupFacts>>,
    /// Master run id → where the replaced rows are in its backup.
    pub replaced: BTreeMap<String, ReplacedRows>,
    /// Master run id → the backup's own parse, for the pre-refill cells.
    pub backup_cells: BTreeMap<String, ParsedMetrics>,
    pub warnings: Vec<Warning>,
}

/// The lineage evidence of one run: its rows by run id per cell, its note's mentions, whether it has a backup.
pub(crate) fn evidence(read: &RunRead, backed_up: &BTreeSet<&str>) -> RunEvidence {
    // Each id's cells are gathered in a list and made into their map at once (sorted, then built in one pass),
    // not inserted one by one: a master's own id alone has a row in every one of its cells.
    /// One id's rows per cell, and the offset of its first row.
    type Gathered<'a> = (Vec<(&'a CellCoordinates, u32)>, u64);
    let mut gathered: BTreeMap<&str, Gathered<'_>> = BTreeMap::new();
    if let Ok(parsed) = &read.metrics {
        for (coordinates, cell) in &parsed.cells {
            for (id, count) in &cell.row_run_ids {
                let (cells, first_offset) = gathered
                    .entry(id.as_str())
                    .or_insert_with(|| (Vec::new(), count.first_offset));
                *first_offset = (*first_offset).min(count.first_offset);
                cells.push((coordinates, count.rows));
            }
        }
    }
    let rows_by_id: BTreeMap<String, IdRows> = gathered
        .into_iter()
        .map(|(id, (mut cells, first_offset))| {
            // Another tool's parse can name a cell twice: its counts are added, as the map's entries were.
            cells.sort_by(|left, right| left.0.cmp(right.0));
            let mut summed: Vec<(CellCoordinates, u32)> = Vec::with_capacity(cells.len());
            for (coordinates, rows) in cells {
                match summed.last_mut() {
                    Some((last, total)) if last == coordinates => *total += rows,
                    _ => summed.push((coordinates.clone(), rows)),
                }
            }
            (
                id.to_string(),
                IdRows {
                    cells: summed.into_iter().collect(),
                    first_offset,
                },
            )
        })
        .collect();
    RunEvidence {
        run_id: read.id.clone(),
        rows_by_id,
        note_names: read
            .note
            .as_ref()
            .map(|note| note.names.clone())
            .unwrap_or_default(),
        has_backup: backed_up.contains(read.id.as_str()),
    }
}

/// Decides lineage and folds in the backup comparisons; `storage` is read only for the lines warnings name.
pub(crate) fn relate(
    storage: &dyn Storage,
    runs: &[RunRead],
    backups: Vec<BackupRead>,
) -> Relations {
    let backed_up: BTreeSet<&str> = backups.iter().map(|backup| backup.of.as_str()).collect();
    // Each run's evidence is its own (a master's is a walk over its 900 cells): the runs are taken in parallel.
    use rayon::prelude::*;
    let evidence: Vec<RunEvidence> = runs
        .par_iter()
        .map(|read| evidence(read, &backed_up))
        .collect();
    let lineage = lineage::decide(&evidence);
    let by_id: BTreeMap<&str, &RunRead> =
        runs.iter().map(|read| (read.id.as_str(), read)).collect();
    let mut warnings: Vec<Warning> = lineage
        .findings
        .iter()
        .map(|finding| finding_warning(storage, finding, &by_id))
        .collect();
    // A note is the account of a splice and a backup its evidence; each without the other is worth a word.
    for read in runs {
        if let Some(note) = &read.note
            && !backed_up.contains(read.id.as_str())
        {
            warnings.push(
                Warning::warn(
                    "note_without_backup",
                    format!(
                        "REFILL_NOTE.md describes a splice, but no backup of this run (`{}_BACKUP_<label>/`) is under \
                         the data root, so the rows the splice replaced can be neither shown nor checked",
                        read.id
                    ),
                )
                .run(&read.id)
                .file(&note.path),
            );
        }
    }
    for backup in &backups {
        let master = backup.of.as_str();
        if by_id.get(master).is_some_and(|read| read.note.is_none()) {
            warnings.push(
                Warning::warn(
                    "backup_without_note",
                    format!(
                        "this is a backup of run {master}, which has no REFILL_NOTE.md saying what was spliced and \
                         why; the master is compared with the backup all the same"
                    ),
                )
                .run(master)
                .file(&backup.digest.path),
            );
        }
    }
    let (backups, replaced, backup_cells) = fold_backups(backups, &by_id, &mut warnings);
    Relations {
        lineage,
        backups,
        replaced,
        backup_cells,
        warnings,
    }
}

/// The line of the first row of `cell` carrying `id` in `read`'s rows file, as its format reads that row back.
fn first_line_of(
    storage: &dyn Storage,
    read: &RunRead,
    cell: Option<&CellCoordinates>,
    id: &str,
) -> Option<u64> {
    let parsed = read.metrics.as_ref().ok()?;
    let offset = parsed
        .cells
        .iter()
        .filter(|(coordinates, _)| cell.is_none_or(|cell| cell == coordinates))
        .filter_map(|(_, parsed_cell)| parsed_cell.row_run_ids.get(id))
        .map(|count| count.first_offset)
        .min()?;
    let first = CellRows {
        format: read.format,
        file: read.rows_file.clone(),
        file_bytes: read.digest.bytes,
        offsets: vec![offset],
        ..CellRows::default()
    };
    let rows = crate::formats::by_name(read.format)?
        .read_rows(storage, &first)
        .ok()?;
    rows.first().map(|row| row.line)
}

fn finding_warning(
    storage: &dyn Storage,
    finding: &Finding,
    runs: &BTreeMap<&str, &RunRead>,
) -> Warning {
    let path = |run: &str| {
        runs.get(run)
            .map_or(run.to_string(), |read| read.root.clone())
    };
    let metrics = |run: &str| {
        runs.get(run)
            .map_or(run.to_string(), |read| read.rows_file.clone())
    };
    let note = |run: &str| {
        runs.get(run)
            .and_then(|read| read.note.as_ref())
            .map_or(run.to_string(), |note| note.path.clone())
    };
    match finding {
        Finding::ForeignRows {
            run,
            id,
            rows,
            id_is_run,
            why_not_refill,
            ..
        } => {
            let message = if *id_is_run {
                format!(
                    "{rows} rows carry run_id `{id}`, the run directory {}, but they are not taken as its refill \
                     ({}); they count for run {run}",
                    path(id),
                    why_not_refill.unwrap_or("no evidence of a splice"),
                )
            } else {
                format!(
                    "{rows} rows carry run_id `{id}`, which is neither this directory's name nor a run directory \
                     under the data root; they count for run {run}"
                )
            };
            Warning::warn("foreign_run_id", message)
                .run(run)
                .file(&metrics(run))
                .at_line(runs.get(run.as_str()).and_then(|read| first_line_of(storage, read, None, id)))
        }
        Finding::NoteWithoutRows { run, named, line } => Warning::warn(
            "refill_note_without_rows",
            format!(
                "REFILL_NOTE.md names run {named} ({}), but no row of this run carries that id, so {named} is \
                 not taken as a refill of this run and keeps its own cells (if its rows were spliced here under \
                 this run's id, they are counted in both runs)",
                path(named)
            ),
        )
        .run(run)
        .file(&note(run))
        .line(*line),
        Finding::CopyOf { copy, original } => Warning::error(
            "copy_of_run",
            format!(
                "no row of {} carries its own run id {copy}; its rows are those of run {original} ({}), so this \
                 directory is taken as a copy and set aside, so that no cell is counted twice (rename or remove \
                 the copy, or give its rows their own run_id, to index it as a run)",
                metrics(copy),
                path(original)
            ),
        )
        .run(copy)
        .file(&metrics(copy)),
        Finding::PartialSplice {
            master,
            refill,
            cell,
            rows_in_master,
            rows_in_refill,
        } => Warning::error(
            "partial_splice",
            format!(
                "cell {cell} holds {rows_in_master} rows of refill run {refill}, whose own cell has \
                 {rows_in_refill}; the cell is not taken as refilled and the rows count for {master}"
            ),
        )
        .run(master)
        .file(&metrics(master))
        .at_line(runs.get(master.as_str()).and_then(|read| first_line_of(storage, read, Some(cell), refill))),
        Finding::NotSpliced {
            refill,
            master,
            cells,
        } => Warning::error(
            "refill_not_spliced",
            format!(
                "{} cell(s) of this refill run are not spliced into master {master} (first: {}); they stay this \
                 run's own cells",
                cells.len(),
                cells[0]
            ),
        )
        .run(refill)
        .file(&metrics(refill))
        .at_line(runs.get(refill.as_str()).and_then(|read| {
            first_line_of(storage, read, cells.first(), refill)
        })),
        Finding::ClaimedTwice {
            refill,
            kept,
            other,
        } => Warning::error(
            "refill_claimed_twice",
            format!(
                "rows of refill run {refill} are spliced into both {kept} and {other}; it is taken as the refill of \
                 {kept}, and its rows count for {other} as they are"
            ),
        )
        .run(other)
        .file(&metrics(other))
        .at_line(runs.get(other.as_str()).and_then(|read| first_line_of(storage, read, None, refill))),
    }
}

type FoldedBackups = (
    BTreeMap<String, Vec<BackupFacts>>,
    BTreeMap<String, ReplacedRows>,
    BTreeMap<String, ParsedMetrics>,
);

/// Backup comparisons per master, with their problems as warnings on the master's file and line.
fn fold_backups(
    backups: Vec<BackupRead>,
    runs: &BTreeMap<&str, &RunRead>,
    warnings: &mut Vec<Warning>,
) -> FoldedBackups {
    let mut facts: BTreeMap<String, Vec<BackupFacts>> = BTreeMap::new();
    let mut replaced: BTreeMap<String, ReplacedRows> = BTreeMap::new();
    let mut backup_cells = BTreeMap::new();
    for mut backup in backups {
        let master = backup.of.clone();
        if let Some(parsed) = backup.parsed.take() {
            backup_cells.insert(master.clone(), parsed);
        }
        let file = backup.digest.path.clone();
        let master_file = runs.get(master.as_str()).map(|read| read.rows_file.clone());
        if master_file.is_none() {
            warnings.push(
                Warning::warn(
                    "orphan_backup",
                    format!(
                        "backup of run {master}, but no run directory {master} exists under the data root"
                    ),
                )
                .file(&file),
            );
        }
        let diff = match backup.diff {
            Some(Ok(SpliceDiff {
                comparison,
                replaced_offsets,
                ..
            })) => {
                for (line, message) in &comparison.problems {
                    let warning = Warning::error(
                        "splice_problem",
                        format!("splice audit against the backup {file}: {message}"),
                    )
                    .run(&master);
                    warnings.push(match (*line, &master_file) {
                        (0, _) => warning.file(&file),
                        (line, Some(master_file)) => warning.file(master_file).line(line),
                        (_, None) => warning.file(&file),
                    });
                }
                if comparison.problem_count > comparison.problems.len() as u64 {
                    warnings.push(
                        Warning::error(
                            "splice_problem",
                            format!(
                                "{} further splice problems (only the first {} are listed)",
                                comparison.problem_count - comparison.problems.len() as u64,
                                comparison.problems.len()
                            ),
                        )
                        .run(&master)
                        .file(&file),
                    );
                }
                replaced.insert(
                    master.clone(),
                    (file.clone(), backup.digest.bytes, replaced_offsets),
                );
                Some(comparison)
            }
            Some(Err(message)) => {
                warnings.push(
                    Warning::error(
                        "splice_unreadable",
                        format!("cannot compare the master with this backup: {message}"),
                    )
                    .run(&master)
                    .file(&file),
                );
                None
            }
            None => None,
        };
        facts.entry(master).or_default().push(BackupFacts {
            path: backup.root,
            label: backup.label,
            metrics: backup.digest,
            diff,
        });
    }
    (facts, replaced, backup_cells)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::IndexOptions;

    const HEADER: &str = "run_id,suite,phase,backend,model,workload,n_agents,rep,agent_id,request_id,request_sequence,wall_ms,prompt_tokens,completion_tokens,submit_time_s,complete_time_s,status";

    /// Writes the run `id` under `root`: one row per run id in `rows`, and its refill note.
    fn run(root: &std::path::Path, id: &str, rows: &[&str], note: Option<&str>) {
        let dir = root.join(id);
        std::fs::create_dir_all(&dir).unwrap();
        let body: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(agent, row_id)| {
                format!(
                    "{row_id},s,scaling,b,m,w,1,0,{a},{a},{a},100.0,10,10,1.0,2.0,ok",
                    a = agent + 1
                )
            })
            .collect();
        std::fs::write(
            dir.join("metrics.csv"),
            format!("{HEADER}\n{}\n", body.join("\n")),
        )
        .unwrap();
        if let Some(note) = note {
            std::fs::write(dir.join("REFILL_NOTE.md"), note).unwrap();
        }
    }

    #[test]
    fn evidence_counts_rows_by_id_and_findings_become_warnings_with_lines() {
        let root = tempfile::tempdir().unwrap();
        run(
            root.path(),
            "20260101_000000",
            &["20260101_000000", "20260101_000000", "stray"],
            Some("# note\n\nsee 20260102_000000\n"),
        );
        run(root.path(), "20260102_000000", &["20260102_000000"], None);
        let reads = crate::read::read_root(root.path(), &IndexOptions::default());
        let evidence = evidence(&reads.runs[0], &BTreeSet::new());
        assert_eq!(evidence.rows_by_id["20260101_000000"].rows(), 2);
        assert_eq!(evidence.rows_by_id["stray"].rows(), 1);
        assert_eq!(evidence.note_names["20260102_000000"], 3);
        let disk = crate::storage::LocalDisk::new(root.path());
        let relations = relate(&disk, &reads.runs, Vec::new());
        assert!(relations.lineage.refill_of.is_empty());
        let kinds: Vec<(&str, Option<&str>, Option<u64>)> = relations
            .warnings
            .iter()
            .map(|warning| (warning.kind.as_str(), warning.file.as_deref(), warning.line))
            .collect();
        assert_eq!(
            kinds,
            [
                (
                    "foreign_run_id",
                    Some("20260101_000000/metrics.csv"),
                    Some(4)
                ),
                (
                    "refill_note_without_rows",
                    Some("20260101_000000/REFILL_NOTE.md"),
                    Some(3)
                ),
                // The note has no backup beside it either.
                (
                    "note_without_backup",
                    Some("20260101_000000/REFILL_NOTE.md"),
                    None
                ),
            ]
        );
    }
}

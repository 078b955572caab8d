//! Refill lineage: which run directories are targeted re-runs whose rows were spliced into another run (a
//! refill and its master), and which are copies of another run. Decided on evidence only.
//!
//! Rows of one run's `metrics.csv` that carry another run's id are not, by themselves, a refill: a directory
//! copied under another name (`run (1)`, `run.bak`) carries the original's id in every row, and a stray row can
//! carry any id. A run R counts as a refill of master M only when all of these hold:
//! 1. M holds rows of its own (carrying M's id) besides the ones carrying R's id — otherwise M is a copy of R;
//! 2. M documents a refill: its `REFILL_NOTE.md` names R, or M has a pre-refill backup directory;
//! 3. at least one cell of R was spliced whole: M's cell holds exactly as many rows carrying R's id as R's own
//!    cell holds.
//!
//! Only the cells of R that were spliced whole belong to M; R's other cells stay R's own. A run whose rows all
//! carry other ids, most of them one existing run's, is a copy of that run. Everything short of the rule is a
//! [`Finding`] the indexer reports with file and line; nothing is dropped silently.

use crate::key::CellCoordinates;
use std::collections::{BTreeMap, BTreeSet};

/// Rows of a run that carry one run id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdRows {
    /// Rows per cell.
    pub cells: BTreeMap<CellCoordinates, u32>,
    /// Byte offset of the first such row, so a warning can name its line.
    pub first_offset: u64,
}

impl IdRows {
    /// How many rows carry the id, over every cell.
    pub fn rows(&self) -> u64 {
        self.cells.values().map(|rows| u64::from(*rows)).sum()
    }
}

/// What one run directory shows about its lineage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunEvidence {
    /// The run's own id, which its own rows carry in their `run_id` column.
    pub run_id: String,
    /// Rows by the id in their `run_id` column (this run's own id included), skip sentinels counted.
    pub rows_by_id: BTreeMap<String, IdRows>,
    /// Run ids named in the run's `REFILL_NOTE.md`, with the 1-based line of their first mention.
    pub note_names: BTreeMap<String, u64>,
    /// The run has a pre-refill backup directory (`<run id>_BACKUP_<label>`).
    pub has_backup: bool,
}

impl RunEvidence {
    fn own_rows(&self) -> u64 {
        self.rows_by_id.get(&self.run_id).map_or(0, IdRows::rows)
    }

    /// Rows per cell over every id: a cell's whole content.
    fn cell_rows(&self) -> BTreeMap<&CellCoordinates, u32> {
        let mut cells: BTreeMap<&CellCoordinates, u32> = BTreeMap::new();
        for rows in self.rows_by_id.values() {
            for (cell, count) in &rows.cells {
                *cells.entry(cell).or_default() += count;
            }
        }
        cells
    }
}

/// Something about lineage that the indexer reports; none of these moves data between runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// `rows` rows of `run` carry `id`, which is not recognised as a refill of `run`; they count for `run`.
    /// `id_is_run` says whether a run directory of that name exists.
    ForeignRows {
        /// The run whose metrics.csv holds the rows.
        run: String,
        /// The other run id the rows carry.
        id: String,
        /// How many of `run`'s rows carry `id`.
        rows: u64,
        /// Byte offset of the first such row in `run`'s metrics.csv, so the warning can name its line.
        first_offset: u64,
        /// Whether a run directory named `id` exists.
        id_is_run: bool,
        /// Why it is not a refill, when `id` is a run directory.
        why_not_refill: Option<&'static str>,
    },
    /// `run`'s REFILL_NOTE.md names `named` (a run directory), but no row of `run` carries that id.
    NoteWithoutRows {
        /// The run whose REFILL_NOTE.md names the other run.
        run: String,
        /// The run directory the note names.
        named: String,
        /// 1-based line of the note's first mention of `named`.
        line: u64,
    },
    /// Every row of `copy` carries other runs' ids, most of them `original`'s: `copy` is set aside.
    CopyOf {
        /// The run directory set aside as a copy.
        copy: String,
        /// The run whose id most of `copy`'s rows carry.
        original: String,
    },
    /// A cell of the master holds some, but not all, of the refill's rows of that cell.
    PartialSplice {
        /// The master the rows were spliced into.
        master: String,
        /// The refill run the rows come from.
        refill: String,
        /// The cell spliced only in part.
        cell: CellCoordinates,
        /// Rows of the master's cell that carry the refill's id.
        rows_in_master: u32,
        /// Rows the refill run's cell holds, over every id.
        rows_in_refill: u32,
    },
    /// Cells of the refill run that are not spliced into its master: they stay the refill run's own cells.
    NotSpliced {
        /// The refill run.
        refill: String,
        /// The master the refill's other cells were spliced into.
        master: String,
        /// The refill run's cells not spliced whole into `master`.
        cells: Vec<CellCoordinates>,
    },
    /// Two masters have spliced rows of the same refill; the first one keeps it.
    ClaimedTwice {
        /// The refill run both masters claim.
        refill: String,
        /// The master that keeps the refill: the first to claim it.
        kept: String,
        /// The other master, whose claim is reported and not followed.
        other: String,
    },
}

/// The lineage of a data root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lineage {
    /// Refill run → its master.
    pub refill_of: BTreeMap<String, String>,
    /// Refill run → its cells spliced whole into the master (those belong to the master).
    pub spliced: BTreeMap<String, BTreeSet<CellCoordinates>>,
    /// Copy → the run it copies (copies are set aside).
    pub copy_of: BTreeMap<String, String>,
    /// What the indexer reports about lineage, in the order it was found.
    pub findings: Vec<Finding>,
}

impl Lineage {
    /// The refill runs of `master`.
    pub fn refills_of<'a>(&'a self, master: &'a str) -> impl Iterator<Item = &'a String> + 'a {
        self.refill_of
            .iter()
            .filter(move |(_, of)| of.as_str() == master)
            .map(|(refill, _)| refill)
    }

    /// Whether `cell` of run `run` was spliced into a master (so it belongs there, not to `run`).
    pub fn is_spliced(&self, run: &str, cell: &CellCoordinates) -> bool {
        self.spliced
            .get(run)
            .is_some_and(|cells| cells.contains(cell))
    }
}

/// Decides the lineage of every run from its evidence. `runs` is in discovery order, which breaks ties.
pub fn decide(runs: &[RunEvidence]) -> Lineage {
    let by_id: BTreeMap<&str, &RunEvidence> =
        runs.iter().map(|run| (run.run_id.as_str(), run)).collect();
    let mut lineage = Lineage::default();

    // Copies first: a run with no rows of its own is not a master, whatever its rows say.
    for run in runs {
        let total: u64 = run.rows_by_id.values().map(IdRows::rows).sum();
        if total == 0 || run.own_rows() > 0 {
            continue;
        }
        // The original is the run whose rows, counted by id, account for most of this one's: for an exact
        // copy of a spliced master that is the master, not its refill.
        let overlap = |original: &RunEvidence| -> u64 {
            run.rows_by_id
                .iter()
                .map(|(id, rows)| {
                    original
                        .rows_by_id
                        .get(id)
                        .map_or(0, |theirs| rows.rows().min(theirs.rows()))
                })
                .sum()
        };
        let original = runs
            .iter()
            .filter(|other| other.run_id != run.run_id && other.own_rows() > 0)
            .map(|other| (overlap(other), other))
            .filter(|(overlap, _)| *overlap > 0)
            // Reversed, so that of equal candidates the first in discovery order wins.
            .rev()
            .max_by(|(left, _), (right, _)| left.cmp(right));
        if let Some((_, original)) = original {
            lineage
                .copy_of
                .insert(run.run_id.clone(), original.run_id.clone());
            lineage.findings.push(Finding::CopyOf {
                copy: run.run_id.clone(),
                original: original.run_id.clone(),
            });
        }
    }

    for master in runs {
        if lineage.copy_of.contains_key(&master.run_id) {
            continue;
        }
        let has_own_rows = master.own_rows() > 0;
        for (id, rows) in &master.rows_by_id {
            if id == &master.run_id {
                continue;
            }
            let foreign = |why: Option<&'static str>| Finding::ForeignRows {
                run: master.run_id.clone(),
                id: id.clone(),
                rows: rows.rows(),
                first_offset: rows.first_offset,
                id_is_run: by_id.contains_key(id.as_str()),
                why_not_refill: why,
            };
            let Some(refill) = by_id.get(id.as_str()) else {
                lineage.findings.push(foreign(None));
                continue;
            };
            if lineage.copy_of.contains_key(id) {
                lineage
                    .findings
                    .push(foreign(Some("that directory is itself a copy")));
                continue;
            }
            if !has_own_rows {
                lineage
                    .findings
                    .push(foreign(Some("this run holds no rows of its own")));
                continue;
            }
            if !master.note_names.contains_key(id) && !master.has_backup {
                lineage.findings.push(foreign(Some(
                    "this run documents no refill (no REFILL_NOTE.md naming it, no pre-refill backup)",
                )));
                continue;
            }
            let refill_cells = refill.cell_rows();
            let mut whole = BTreeSet::new();
            let mut partial = Vec::new();
            for (cell, in_master) in &rows.cells {
                match refill_cells.get(cell) {
                    Some(in_refill) if in_refill == in_master => {
                        whole.insert(cell.clone());
                    }
                    Some(in_refill) => partial.push((cell.clone(), *in_master, *in_refill)),
                    None => {}
                }
            }
            if whole.is_empty() {
                lineage.findings.push(foreign(Some(
                    "no cell of that run is spliced whole into this one",
                )));
                continue;
            }
            if let Some(kept) = lineage.refill_of.get(id) {
                lineage.findings.push(Finding::ClaimedTwice {
                    refill: id.clone(),
                    kept: kept.clone(),
                    other: master.run_id.clone(),
                });
                continue;
            }
            for (cell, rows_in_master, rows_in_refill) in partial {
                lineage.findings.push(Finding::PartialSplice {
                    master: master.run_id.clone(),
                    refill: id.clone(),
                    cell,
                    rows_in_master,
                    rows_in_refill,
                });
            }
            let not_spliced: Vec<CellCoordinates> = refill_cells
                .keys()
                .filter(|cell| !whole.contains(*cell))
                .map(|cell| (*cell).clone())
                .collect();
            if !not_spliced.is_empty() {
                lineage.findings.push(Finding::NotSpliced {
                    refill: id.clone(),
                    master: master.run_id.clone(),
                    cells: not_spliced,
                });
            }
            lineage.refill_of.insert(id.clone(), master.run_id.clone());
            lineage.spliced.insert(id.clone(), whole);
        }
        for (named, line) in &master.note_names {
            let carried = master.rows_by_id.contains_key(named);
            if named != &master.run_id && by_id.contains_key(named.as_str()) && !carried {
                lineage.findings.push(Finding::NoteWithoutRows {
                    run: master.run_id.clone(),
                    named: named.clone(),
                    line: *line,
                });
            }
        }
    }
    lineage
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(model: &str, n: u32) -> CellCoordinates {
        CellCoordinates {
            suite: "cloud_core".into(),
            phase: "scaling".into(),
            backend: "sglang".into(),
            model: model.into(),
            workload: "long_prefill_8k".into(),
            config: Default::default(),
            load: crate::Load::Concurrency(n),
            rep: 0,
        }
    }

    fn rows(cells: &[(CellCoordinates, u32)]) -> IdRows {
        IdRows {
            cells: cells.iter().cloned().collect(),
            first_offset: 100,
        }
    }

    /// The V3 SGLang master with the Mistral refill spliced in, its note and backup, and the refill run.
    fn v3() -> Vec<RunEvidence> {
        let master = RunEvidence {
            run_id: "master".into(),
            rows_by_id: BTreeMap::from([
                (
                    "master".into(),
                    rows(&[(cell("phi-4", 1), 10), (cell("phi-4", 2), 20)]),
                ),
                (
                    "refill".into(),
                    rows(&[(cell("mistral-7b", 1), 10), (cell("mistral-7b", 2), 20)]),
                ),
            ]),
            note_names: BTreeMap::from([("refill".into(), 3)]),
            has_backup: true,
        };
        let refill = RunEvidence {
            run_id: "refill".into(),
            rows_by_id: BTreeMap::from([(
                "refill".into(),
                rows(&[(cell("mistral-7b", 1), 10), (cell("mistral-7b", 2), 20)]),
            )]),
            ..RunEvidence::default()
        };
        vec![master, refill]
    }

    #[test]
    fn a_documented_whole_cell_splice_is_a_refill() {
        let lineage = decide(&v3());
        assert_eq!(lineage.refill_of["refill"], "master");
        assert_eq!(lineage.spliced["refill"].len(), 2);
        assert!(lineage.findings.is_empty(), "{:?}", lineage.findings);
        assert_eq!(lineage.refills_of("master").collect::<Vec<_>>(), ["refill"]);
    }

    #[test]
    fn a_copy_of_a_run_is_a_copy_not_a_master() {
        let mut runs = v3();
        let mut copy = runs[0].clone();
        copy.run_id = "master (1)".into();
        runs.push(copy);
        let lineage = decide(&runs);
        assert_eq!(lineage.copy_of["master (1)"], "master");
        assert_eq!(lineage.refill_of["refill"], "master");
        assert!(lineage.findings.contains(&Finding::CopyOf {
            copy: "master (1)".into(),
            original: "master".into()
        }));
        // A copy of a plain run whose rows carry the original's id: the original stays a run.
        let plain = RunEvidence {
            run_id: "vllm".into(),
            rows_by_id: BTreeMap::from([("vllm".into(), rows(&[(cell("phi-4", 1), 10)]))]),
            ..RunEvidence::default()
        };
        let mut copy = plain.clone();
        copy.run_id = "vllm.bak".into();
        let lineage = decide(&[plain, copy]);
        assert!(lineage.refill_of.is_empty());
        assert_eq!(lineage.copy_of["vllm.bak"], "vllm");
    }

    #[test]
    fn stray_rows_and_a_mere_mention_are_not_refills() {
        let mut runs = v3();
        // The refill run's rows in the master without a note or a backup: not documented.
        runs[0].note_names.clear();
        runs[0].has_backup = false;
        let lineage = decide(&runs);
        assert!(lineage.refill_of.is_empty());
        assert!(matches!(
            &lineage.findings[0],
            Finding::ForeignRows { id, rows: 30, id_is_run: true, why_not_refill: Some(_), .. } if id == "refill"
        ));
        // One stray row of another run in a documented master: that run's cells are not spliced whole.
        let mut runs = v3();
        let other = RunEvidence {
            run_id: "vllm".into(),
            rows_by_id: BTreeMap::from([("vllm".into(), rows(&[(cell("phi-4", 1), 10)]))]),
            ..RunEvidence::default()
        };
        runs[0]
            .rows_by_id
            .insert("vllm".into(), rows(&[(cell("phi-4", 1), 1)]));
        runs.push(other);
        let lineage = decide(&runs);
        assert_eq!(lineage.refill_of.len(), 1);
        assert!(!lineage.refill_of.contains_key("vllm"));
        // A note that mentions a run whose rows are nowhere in the master.
        let mut runs = v3();
        runs[0].note_names.insert("vllm".into(), 7);
        runs.push(RunEvidence {
            run_id: "vllm".into(),
            rows_by_id: BTreeMap::from([("vllm".into(), rows(&[(cell("phi-4", 1), 10)]))]),
            ..RunEvidence::default()
        });
        let lineage = decide(&runs);
        assert!(!lineage.refill_of.contains_key("vllm"));
        assert!(lineage.findings.contains(&Finding::NoteWithoutRows {
            run: "master".into(),
            named: "vllm".into(),
            line: 7
        }));
    }

    #[test]
    fn unspliced_refill_cells_stay_with_the_refill_run() {
        let mut runs = v3();
        runs[1]
            .rows_by_id
            .get_mut("refill")
            .unwrap()
            .cells
            .insert(cell("mistral-7b", 4), 40);
        let lineage = decide(&runs);
        assert_eq!(lineage.refill_of["refill"], "master");
        assert!(!lineage.is_spliced("refill", &cell("mistral-7b", 4)));
        assert!(lineage.is_spliced("refill", &cell("mistral-7b", 2)));
        assert_eq!(
            lineage.findings,
            vec![Finding::NotSpliced {
                refill: "refill".into(),
                master: "master".into(),
                cells: vec![cell("mistral-7b", 4)]
            }]
        );
    }
}

//! Refill lineage on copies of the V3 demo data: a refill is recognised only with evidence, copies of runs are
//! set aside with a warning naming both directories, and nothing a stray row or a note says moves another run's
//! cells. Every warning names its file, and its line where there is one.

use crate::common;

use cellscope_index::{Index, IndexOptions, Quiet, build};
use cellscope_model::CellStatus;
use cellscope_model::api::{RunRole, Warning};
use common::{copy_tree, demo_root};
use std::path::Path;

const VLLM: &str = "20260612_204254_036590";
const SGLANG: &str = "20260612_212816_266127";
const REFILL: &str = "20260613_055519_963364";

fn v3_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&demo_root().join("tr164-v3"), dir.path());
    dir
}

fn index(root: &Path) -> Index {
    build(root, &IndexOptions::default(), &Quiet).unwrap()
}

fn cells_of(index: &Index, run: &str) -> usize {
    index
        .cells
        .iter()
        .filter(|cell| cell.key.run_id == run)
        .count()
}

fn warnings<'a>(index: &'a Index, kind: &str) -> Vec<&'a Warning> {
    index
        .warnings
        .iter()
        .filter(|warning| warning.kind == kind)
        .collect()
}

/// The 1-based line of the first line of `path` containing `needle`.
fn line_containing(path: &Path, needle: &str) -> u64 {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .position(|line| line.contains(needle))
        .expect("the needle is in the file") as u64
        + 1
}

fn assert_refill_intact(index: &Index) {
    assert_eq!(cells_of(index, VLLM), 900);
    assert_eq!(cells_of(index, SGLANG), 900);
    assert_eq!(
        cells_of(index, REFILL),
        0,
        "the refill's cells stand in its master"
    );
    let refilled: Vec<_> = index.cells.iter().filter(|cell| cell.refilled).collect();
    assert_eq!(refilled.len(), 36);
    assert!(refilled.iter().all(|cell| cell.key.run_id == SGLANG
        && cell.key.model == "mistral-7b"
        && cell.key.workload == "long_prefill_8k"
        && cell.source_run_id.as_deref() == Some(REFILL)));
    assert_eq!(index.run(REFILL).unwrap().role, RunRole::Refill);
}

#[test]
fn the_demo_refill_is_recognised_from_its_evidence() {
    let root = v3_copy();
    let index = index(root.path());
    assert_refill_intact(&index);
    let lineage_kinds = [
        "copy_of_run",
        "foreign_run_id",
        "refill_note_without_rows",
        "refill_not_spliced",
        "partial_splice",
        "splice_problem",
    ];
    for kind in lineage_kinds {
        assert!(
            warnings(&index, kind).is_empty(),
            "{kind}: {:?}",
            warnings(&index, kind)
        );
    }
}

#[test]
fn copied_runs_are_set_aside_and_the_originals_keep_every_cell() {
    let root = v3_copy();
    // As people copy runs: a numbered copy of the spliced master and a backup-style copy of the vLLM run.
    for (from, to) in [(SGLANG, "20260612_212816_266127 (1)"), (VLLM, "vllm.bak")] {
        let target = root.path().join(to);
        std::fs::create_dir(&target).unwrap();
        copy_tree(&root.path().join(from), &target);
    }
    let index = index(root.path());
    assert_refill_intact(&index);
    assert_eq!(index.cells.len(), 1800, "no cell counted twice");
    for (copy, original) in [("20260612_212816_266127 (1)", SGLANG), ("vllm.bak", VLLM)] {
        let run = index.run(copy).unwrap();
        assert_eq!(
            (run.role, run.copy_of.as_deref()),
            (RunRole::Copy, Some(original))
        );
        assert_eq!(run.census.cells, 0);
        let warning = warnings(&index, "copy_of_run")
            .into_iter()
            .find(|warning| warning.run.as_deref() == Some(copy))
            .unwrap();
        assert_eq!(
            warning.file.as_deref(),
            Some(format!("{copy}/metrics.csv").as_str())
        );
        assert!(warning.message.contains(original), "{}", warning.message);
        assert!(warning.message.contains(copy), "{}", warning.message);
    }
    // The audit as `cellscope audit` prints it: the model's report of the index.
    use cellscope_model::audit::report::{Audited, render_text, report};
    let audited = Audited {
        runs: &index.runs,
        warnings: &index.warnings,
        cells: &index.cells,
        exclusions: &index.exclusions,
    };
    let report = render_text(&report(
        index.root.display().to_string(),
        audited,
        &cellscope_model::Criterion::V1,
    ));
    assert!(
        !report.contains("refill run spliced into 20260612_212816_266127 (1)"),
        "{report}"
    );
    assert!(
        report.contains("a copy of run 20260612_212816_266127; set aside"),
        "{report}"
    );
}

fn mention_in_note(root: &Path, run: &str) -> std::path::PathBuf {
    let note = root.join(SGLANG).join("REFILL_NOTE.md");
    let mut text = std::fs::read_to_string(&note).unwrap();
    text.push_str(&format!("\nCompare with the vLLM run {run}.\n"));
    std::fs::write(&note, &text).unwrap();
    note
}

#[test]
fn a_stray_row_moves_no_cells_even_when_the_note_names_its_run() {
    let root = v3_copy();
    let master = root.path().join(SGLANG).join("metrics.csv");
    let text = std::fs::read_to_string(&master).unwrap();
    // One row of a qwen cell carries the vLLM run's id, as a stray row would.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let stray_line = 501;
    lines[stray_line - 1] = lines[stray_line - 1].replacen(SGLANG, VLLM, 1);
    std::fs::write(&master, lines.join("\n") + "\n").unwrap();
    mention_in_note(root.path(), VLLM);

    let index = index(root.path());
    assert_refill_intact(&index);
    assert_eq!(index.run(VLLM).unwrap().role, RunRole::Run);
    let foreign = warnings(&index, "foreign_run_id");
    assert_eq!(foreign.len(), 1, "{foreign:?}");
    assert_eq!(foreign[0].run.as_deref(), Some(SGLANG));
    assert_eq!(
        foreign[0].file.as_deref(),
        Some(format!("{SGLANG}/metrics.csv").as_str())
    );
    assert_eq!(foreign[0].line, Some(stray_line as u64));
    assert!(
        foreign[0].message.contains("1 rows carry run_id")
            && foreign[0].message.contains("spliced whole"),
        "{}",
        foreign[0].message
    );
}

#[test]
fn a_note_that_merely_mentions_a_run_moves_no_cells() {
    let root = v3_copy();
    let note = mention_in_note(root.path(), VLLM);
    let index = index(root.path());
    assert_refill_intact(&index);
    assert_eq!(index.run(VLLM).unwrap().role, RunRole::Run);
    let mention = warnings(&index, "refill_note_without_rows");
    assert_eq!(mention.len(), 1, "{mention:?}");
    assert_eq!(
        mention[0].file.as_deref(),
        Some(format!("{SGLANG}/REFILL_NOTE.md").as_str())
    );
    assert_eq!(
        mention[0].line,
        Some(line_containing(&note, "Compare with the vLLM run"))
    );
}

#[test]
fn a_damaged_backup_row_is_a_splice_problem_at_its_line_not_a_refill() {
    let root = v3_copy();
    let backup = root
        .path()
        .join(format!("{SGLANG}_BACKUP_preRefill"))
        .join("metrics.csv");
    let text = std::fs::read_to_string(&backup).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Line 92 is an ok qwen row the refill never touched; one digit of its wall_ms changes in the backup.
    let damaged = 92;
    assert!(
        lines[damaged - 1].ends_with(",ok,"),
        "{}",
        lines[damaged - 1]
    );
    let mut fields: Vec<String> = lines[damaged - 1].split(',').map(str::to_string).collect();
    fields[18] = format!("{}1", fields[18]);
    lines[damaged - 1] = fields.join(",");
    std::fs::write(&backup, lines.join("\n") + "\n").unwrap();

    let index = index(root.path());
    assert_refill_intact(&index);
    let problems = warnings(&index, "splice_problem");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].line, Some(damaged as u64));
    assert_eq!(
        problems[0].file.as_deref(),
        Some(format!("{SGLANG}/metrics.csv").as_str())
    );
    assert!(
        problems[0].message.contains("was `ok`"),
        "{}",
        problems[0].message
    );
}

#[test]
fn a_refill_cell_missing_from_the_master_stays_with_the_refill_run_and_is_named() {
    let root = v3_copy();
    let refill = root.path().join(REFILL).join("metrics.csv");
    let text = std::fs::read_to_string(&refill).unwrap();
    // Rows of one more cell (N=64) that the splice never put into the master.
    let extra: Vec<String> = text
        .lines()
        .skip(1)
        .filter(|line| line.contains(",scaling,") && line.contains(",long_prefill_8k,8704,64,1,0,"))
        .map(|line| {
            line.replacen(
                ",long_prefill_8k,8704,64,1,0,",
                ",long_prefill_8k,8704,64,64,0,",
                1,
            )
        })
        .collect();
    assert_eq!(extra.len(), 10);
    let first_extra_line = text.lines().count() as u64 + 1;
    std::fs::write(&refill, format!("{text}{}\n", extra.join("\n"))).unwrap();

    let index = index(root.path());
    assert_eq!(cells_of(&index, SGLANG), 900);
    assert_eq!(index.cells.iter().filter(|cell| cell.refilled).count(), 36);
    // The unspliced cell is the refill run's own, in the main table; its data is not lost.
    let own: Vec<_> = index
        .cells
        .iter()
        .filter(|cell| cell.key.run_id == REFILL)
        .collect();
    assert_eq!(own.len(), 1);
    assert_eq!(
        (own[0].key.n().expect("a concurrency"), own[0].rows),
        (64, 10)
    );
    assert_ne!(own[0].status, CellStatus::NotRun);
    let named = warnings(&index, "refill_not_spliced");
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(
        named[0].file.as_deref(),
        Some(format!("{REFILL}/metrics.csv").as_str())
    );
    assert_eq!(named[0].line, Some(first_extra_line));
}

//! Bad-input fixtures (`data/fixtures/`): each yields its specific warning, and the good run beside it keeps
//! exactly the same numbers. The fixtures read by the binary as a user without read permission are the server's suite's.

use crate::common::{copy_tree, fixtures};
use cellscope_index::{self as index, Index, IndexOptions, Quiet};
use cellscope_model::schema::cells_to_batch;
use std::path::Path;

/// Indexes `good/` plus the named fixture cases in a fresh temporary data root.
fn index_with(cases: &[&str]) -> (tempfile::TempDir, Index) {
    let root = tempfile::tempdir().unwrap();
    for case in std::iter::once(&"good").chain(cases) {
        copy_tree(&fixtures().join(case), &root.path().join(case));
    }
    let index = index::build(root.path(), &IndexOptions::default(), &Quiet).unwrap();
    (root, index)
}

fn good_cells(index: &Index) -> Vec<cellscope_model::CellSummary> {
    index
        .cells
        .iter()
        .filter(|cell| cell.key.run_id == "20260101_000000_000001")
        .cloned()
        .collect()
}

#[test]
fn the_good_fixture_is_clean_and_its_numbers_follow_the_definitions() {
    let (_root, index) = index_with(&[]);
    assert!(index.warnings.is_empty(), "{:#?}", index.warnings);
    let cells = good_cells(&index);
    assert_eq!(cells.len(), 4);
    assert!(
        cells
            .iter()
            .all(|cell| cell.status == cellscope_model::CellStatus::Clean)
    );
    // N=1 rep 0: two requests of 1011.25 and 1048.75 ms, the second submitted 0.25 s after the first completed
    // (timestamps rounded to the millisecond as written in the file).
    let n1 = &cells[0];
    assert_eq!(
        (
            n1.key.n().expect("a concurrency"),
            n1.key.rep,
            n1.expected_rows,
            n1.rows
        ),
        (1, 0, Some(2), 2)
    );
    assert_eq!(n1.stats.p50_wall_ms, Some(1030.0));
    assert_eq!(n1.stats.p95_wall_ms, Some(1046.875));
    let span_s = 1780243470.31 - 1780243468.0;
    assert!((n1.stats.aggregate_tps.unwrap() - 256.0 / span_s).abs() < 1e-9);
    assert_eq!(n1.efficiency, Some(1.0));
    let n2 = &cells[2];
    assert_eq!(
        (n2.key.n().expect("a concurrency"), n2.key.rep, n2.rows),
        (2, 0, 4)
    );
    let expected_efficiency =
        n2.stats.aggregate_tps.unwrap() / (2.0 * n1.stats.aggregate_tps.unwrap());
    assert_eq!(n2.efficiency, Some(expected_efficiency));
    assert_eq!(
        n2.p95_multiplier,
        Some(n2.stats.p95_wall_ms.unwrap() / n1.stats.p95_wall_ms.unwrap())
    );
}

/// `(case, warning kind, relative file, line, whether the warning names a run)`. A warning about something that
/// never became a run (a directory without metrics, a ledger) names the file alone.
type Case = (&'static str, &'static str, &'static str, Option<u64>, bool);

const CASES: [Case; 34] = [
    (
        "ragged-row",
        "ragged_row",
        "ragged-row/20260102_000000_000002/metrics.csv",
        Some(5),
        true,
    ),
    (
        "missing-column",
        "missing_column",
        "missing-column/20260103_000000_000003/metrics.csv",
        Some(1),
        true,
    ),
    (
        "non-utf8",
        "bad_key_field",
        "non-utf8/20260104_000000_000004/metrics.csv",
        Some(3),
        true,
    ),
    (
        "truncated-last-line",
        "truncated_last_line",
        "truncated-last-line/20260105_000000_000005/metrics.csv",
        Some(13),
        true,
    ),
    (
        "invalid-manifest",
        "invalid_manifest",
        "invalid-manifest/20260106_000000_000006/manifest.json",
        Some(5),
        true,
    ),
    (
        "unknown-status",
        "unknown_status",
        "unknown-status/20260107_000000_000007/metrics.csv",
        Some(5),
        true,
    ),
    (
        "empty-file",
        "empty_file",
        "empty-file/20260108_000000_000008/metrics.csv",
        None,
        true,
    ),
    (
        "header-only",
        "header_only",
        "header-only/20260109_000000_000009/metrics.csv",
        None,
        true,
    ),
    (
        "duplicate-run",
        "duplicate_run",
        "duplicate-run/b/20260110_000000_000010/metrics.csv",
        None,
        true,
    ),
    (
        "implausible-values",
        "bad_number",
        "implausible-values/20260113_000000_000013/metrics.csv",
        Some(7),
        true,
    ),
    (
        "unknown-manifest-status",
        "unknown_manifest_status",
        "unknown-manifest-status/20260114_000000_000014/manifest.json",
        None,
        true,
    ),
    (
        "invalid-config",
        "invalid_config",
        "invalid-config/20260111_000000_000011/config.yaml",
        Some(5),
        true,
    ),
    (
        "latin1-status",
        "unknown_status",
        "latin1-status/20260203_000000_000003/metrics.csv",
        Some(3),
        true,
    ),
    (
        "nan-inf",
        "bad_number",
        "nan-inf/20260204_000000_000004/metrics.csv",
        Some(3),
        true,
    ),
    (
        "overflowing-number",
        "bad_number",
        "overflowing-number/20260205_000000_000005/metrics.csv",
        Some(3),
        true,
    ),
    (
        "duplicate-header-column",
        "duplicate_column",
        "duplicate-header-column/20260206_000000_000006/metrics.csv",
        Some(1),
        true,
    ),
    (
        "metrics-is-directory",
        "not_a_file",
        "metrics-is-directory/20260208_000000_000008/metrics.csv",
        None,
        false,
    ),
    (
        "no-metrics-file",
        "no_metrics_file",
        "no-metrics-file/20260209_000000_000009",
        None,
        false,
    ),
    (
        "zero-byte-manifest",
        "invalid_manifest",
        "zero-byte-manifest/20260210_000000_000010/manifest.json",
        Some(1),
        true,
    ),
    (
        "exclusions-syntax-error",
        "invalid_exclusions",
        "exclusions-syntax-error/exclusions.toml",
        Some(3),
        false,
    ),
    (
        "ledger-unknown-key",
        "unknown_exclusion_dimension",
        "ledger-unknown-key/exclusions.toml",
        Some(9),
        false,
    ),
    (
        "note-without-backup",
        "note_without_backup",
        "note-without-backup/20260213_000000_000013/REFILL_NOTE.md",
        None,
        true,
    ),
    (
        "backup-without-note",
        "backup_without_note",
        "backup-without-note/20260214_000000_000014_BACKUP_preRefill/metrics.csv",
        None,
        true,
    ),
    (
        "bare-cr",
        "bare_cr_line_endings",
        "bare-cr/20260217_000000_000017/metrics.csv",
        None,
        true,
    ),
    (
        "unclosed-quote",
        "unclosed_quote",
        "unclosed-quote/20260218_000000_000018/metrics.csv",
        Some(3),
        true,
    ),
    (
        "ansi-status",
        "unknown_status",
        "ansi-status/20260219_000000_000019/metrics.csv",
        Some(3),
        true,
    ),
    (
        "whitespace-only",
        "empty_file",
        "whitespace-only/20260220_000000_000020/metrics.csv",
        None,
        true,
    ),
    (
        "invalid-plan",
        "invalid_plan",
        "invalid-plan/20260221_000000_000021/execution_plan.json",
        Some(3),
        true,
    ),
    (
        "manifest-is-directory",
        "not_a_file",
        "manifest-is-directory/20260222_000000_000022/manifest.json",
        None,
        true,
    ),
    // The truncated backup is named as such, under the master's run.
    (
        "truncated-backup",
        "splice_problem",
        "truncated-backup/20260223_000000_000023_BACKUP_preRefill/metrics.csv",
        None,
        true,
    ),
    (
        "duplicate-exclusion-id",
        "duplicate_exclusion_id",
        "duplicate-exclusion-id/exclusions.toml",
        Some(8),
        false,
    ),
    (
        "ttft-negative",
        "bad_number",
        "ttft-negative/20260225_000000_000025/metrics.csv",
        Some(5),
        true,
    ),
    (
        "ledger-invalid-entry",
        "invalid_exclusion",
        "ledger-invalid-entry/exclusions.toml",
        Some(13),
        false,
    ),
    (
        "unplanned-cells",
        "unplanned_cells",
        "unplanned-cells/20260226_000000_000026/metrics.csv",
        Some(6),
        true,
    ),
];

/// Variants of the good run that are not faults: the same numbers, no warning.
const CLEAN_VARIANTS: [(&str, &str); 6] = [
    ("bom", "20260201_000000_000001"),
    ("lf-endings", "20260202_000000_000002"),
    ("extra-columns", "20260207_000000_000007"),
    ("quoted-newline", "20260227_000000_000027"),
    ("compressed-gz", "20260215_000000_000015"),
    ("compressed-zst", "20260216_000000_000016"),
];

/// Checks that `index` holds the case's warning and the good run's numbers of `baseline`.
fn assert_case(index: &Index, baseline: &[cellscope_model::CellSummary], case: Case) {
    let (name, kind, file, line, names_run) = case;
    let warning = index
        .warnings
        .iter()
        .find(|warning| warning.kind == kind && warning.file.as_deref() == Some(file))
        .unwrap_or_else(|| {
            panic!(
                "{name}: no `{kind}` warning on {file} in {:#?}",
                index.warnings
            )
        });
    assert_eq!(warning.line, line, "{name}: {warning}");
    assert_eq!(warning.run.is_some(), names_run, "{name}: {warning}");
    assert_eq!(
        good_cells(index),
        baseline,
        "{name} changed the good run's numbers"
    );
}

#[test]
fn each_bad_input_yields_its_warning_and_leaves_the_good_run_unchanged() {
    let (_root, alone) = index_with(&[]);
    let baseline = good_cells(&alone);
    for case in CASES {
        let (_root, index) = index_with(&[case.0]);
        assert_case(&index, &baseline, case);
    }
}

#[test]
fn clean_variants_of_the_good_run_give_its_numbers_without_a_warning() {
    let (_root, alone) = index_with(&[]);
    let baseline = good_cells(&alone);
    for (case, run_id) in CLEAN_VARIANTS {
        let (_root, index) = index_with(&[case]);
        assert!(index.warnings.is_empty(), "{case}: {:#?}", index.warnings);
        let mut cells: Vec<_> = index
            .cells
            .iter()
            .filter(|cell| cell.key.run_id == run_id)
            .cloned()
            .collect();
        for cell in &mut cells {
            cell.key.run_id = baseline[0].key.run_id.clone();
        }
        assert_eq!(cells, baseline, "{case}");
    }
}

/// An AIPerf summary at `aiperf/c8/` under `root`, without its per-request file.
fn aiperf_summary_in(root: &Path) {
    let directory = root.join("aiperf/c8");
    std::fs::create_dir_all(&directory).unwrap();
    std::fs::copy(
        fixtures().join(
            "formats/aiperf-v010/artifacts/qwen3-8b-openai-chat-concurrency8/profile_export_aiperf.json",
        ),
        directory.join("profile_export_aiperf.json"),
    )
    .unwrap();
}

/// Cases that cannot be committed as files (FIFOs, links, a 16 MB line, a 400 KB mapping), made in the test's own
/// root. Reading a FIFO would block the index for ever: each is refused at once, under every name any reader
/// opens.
#[test]
fn generated_bad_inputs_yield_their_warnings_and_leave_the_good_run_unchanged() {
    let (_root, alone) = index_with(&[]);
    let baseline = good_cells(&alone);
    let good_metrics =
        std::fs::read(fixtures().join("good/20260101_000000_000001/metrics.csv")).unwrap();
    let header_line = good_metrics
        .split(|byte| *byte == b'\n')
        .next()
        .unwrap()
        .to_vec();
    type Make = fn(&Path, &[u8]);
    let generated: [(Make, Case); 10] = [
        (
            |root, _| {
                std::fs::create_dir_all(root.join("fifo/20260301_000000_000001")).unwrap();
                crate::common::mkfifo(&root.join("fifo/20260301_000000_000001/metrics.csv"));
            },
            (
                "fifo",
                "not_a_file",
                "fifo/20260301_000000_000001/metrics.csv",
                None,
                false,
            ),
        ),
        (
            |root, _| {
                std::fs::create_dir_all(root.join("linked-run")).unwrap();
                std::os::unix::fs::symlink(
                    fixtures().join("good/20260101_000000_000001"),
                    root.join("linked-run/20260302_000000_000002"),
                )
                .unwrap();
            },
            (
                "linked run",
                "symlink_ignored",
                "linked-run/20260302_000000_000002",
                None,
                false,
            ),
        ),
        (
            |root, _| {
                std::fs::create_dir_all(root.join("loop/20260303_000000_000003")).unwrap();
                std::os::unix::fs::symlink("..", root.join("loop/20260303_000000_000003/up"))
                    .unwrap();
            },
            (
                "symlink loop",
                "symlink_ignored",
                "loop/20260303_000000_000003/up",
                None,
                false,
            ),
        ),
        (
            |root, _| {
                std::fs::create_dir_all(root.join("outside/20260304_000000_000004")).unwrap();
                std::os::unix::fs::symlink(
                    "/etc/hostname",
                    root.join("outside/20260304_000000_000004/metrics.csv"),
                )
                .unwrap();
            },
            (
                "link out of the root",
                "symlink_ignored",
                "outside/20260304_000000_000004/metrics.csv",
                None,
                false,
            ),
        ),
        (
            |root, _| std::fs::create_dir_all(root.join("empty/20260305_000000_000005")).unwrap(),
            (
                "empty run directory",
                "no_metrics_file",
                "empty/20260305_000000_000005",
                None,
                false,
            ),
        ),
        (
            |root, header| {
                let directory = root.join("long-line/20260306_000000_000006");
                std::fs::create_dir_all(&directory).unwrap();
                let mut text = header.to_vec();
                text.push(b'\n');
                // 16 MB on one line, a comma every other byte.
                text.extend(b"a,".repeat(8 * 1024 * 1024));
                std::fs::write(directory.join("metrics.csv"), text).unwrap();
            },
            (
                "16 MB line",
                "ragged_row",
                "long-line/20260306_000000_000006/metrics.csv",
                Some(2),
                true,
            ),
        ),
        (
            |root, _| {
                aiperf_summary_in(root);
                crate::common::mkfifo(&root.join("aiperf/c8/profile_export.jsonl"));
            },
            // Named by discovery (no run) as a FIFO named like a result, and by the summary's reader.
            (
                "FIFO beside a summary",
                "not_a_file",
                "aiperf/c8/profile_export.jsonl",
                None,
                false,
            ),
        ),
        (
            |root, _| {
                aiperf_summary_in(root);
                std::os::unix::fs::symlink(
                    "/etc/hostname",
                    root.join("aiperf/c8/profile_export.jsonl"),
                )
                .unwrap();
            },
            (
                "link beside a summary",
                "not_a_file",
                "aiperf/c8/profile_export.jsonl",
                None,
                true,
            ),
        ),
        (
            |root, _| crate::common::mkfifo(&root.join("cellscope.toml")),
            ("FIFO mapping", "not_a_file", "cellscope.toml", None, false),
        ),
        (
            |root, _| {
                let mut text = String::from("[[map]]\nglob = \"**\"\nbackend = \"vllm\"\n");
                text.push_str(&"# padding\n".repeat(40_000));
                std::fs::write(root.join("cellscope.toml"), text).unwrap();
            },
            (
                "400 KB mapping",
                "file_too_large",
                "cellscope.toml",
                None,
                false,
            ),
        ),
    ];
    for (make, case) in generated {
        let (root, _) = index_with(&[]);
        make(root.path(), &header_line);
        let index = index::build(root.path(), &IndexOptions::default(), &Quiet).unwrap();
        assert_case(&index, &baseline, case);
    }
}

#[test]
fn malformed_rows_are_left_out_but_the_rest_of_the_run_counts() {
    let (_root, index) = index_with(&[
        "ragged-row",
        "non-utf8",
        "truncated-last-line",
        "unknown-status",
        "duplicate-run",
    ]);
    let rows = |run: &str| index.run(run).unwrap().census.clone();
    // 2 reps × (2 + 4) = 12 rows per fixture run; one row lost in each malformed case.
    assert_eq!(
        (
            rows("20260102_000000_000002").rows,
            rows("20260102_000000_000002").malformed_rows
        ),
        (11, 1)
    );
    assert_eq!(
        (
            rows("20260104_000000_000004").rows,
            rows("20260104_000000_000004").malformed_rows
        ),
        (11, 1)
    );
    assert_eq!(
        (
            rows("20260105_000000_000005").rows,
            rows("20260105_000000_000005").malformed_rows
        ),
        (11, 1)
    );
    let unknown = rows("20260107_000000_000007");
    assert_eq!(
        (unknown.rows, unknown.ok_rows, unknown.failed_rows),
        (12, 10, 2)
    );
    assert_eq!(unknown.failed_by_status.get("banana"), Some(&2));
    // The duplicate run counts once.
    assert_eq!(
        index
            .runs
            .iter()
            .filter(|run| run.run_id == "20260110_000000_000010")
            .count(),
        1
    );
    assert_eq!(
        index
            .cells
            .iter()
            .filter(|cell| cell.key.run_id == "20260110_000000_000010")
            .count(),
        4
    );
    // A short cell is partial (it lost a row), not clean.
    let partial = index
        .cells
        .iter()
        .filter(|cell| cell.status == cellscope_model::CellStatus::Partial)
        .count();
    assert_eq!(partial, 3);
}

#[test]
fn fixture_index_snapshot() {
    let cases: Vec<&str> = CASES.iter().map(|(case, ..)| *case).collect();
    let cases: Vec<&str> = cases
        .into_iter()
        .chain(CLEAN_VARIANTS.map(|(case, _)| case))
        .collect();
    let (_root, index) = index_with(&cases);
    let warnings: Vec<String> = index.warnings.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!("fixture_warnings", warnings.join("\n"));
    let batch = cells_to_batch(&index.cells).unwrap();
    let table = arrow_cast::pretty::pretty_format_batches(&[batch])
        .unwrap()
        .to_string();
    insta::assert_snapshot!("fixture_cells", table);
}

#[test]
fn an_invalid_ledger_entry_is_refused_alone_and_the_valid_one_still_applies() {
    let (_root, alone) = index_with(&[]);
    let (_root, index) = index_with(&["ledger-invalid-entry"]);
    let refused: Vec<(Option<u64>, &str)> = index
        .warnings
        .iter()
        .filter(|warning| warning.kind == "invalid_exclusion")
        .map(|warning| {
            assert_eq!(
                warning.file.as_deref(),
                Some("ledger-invalid-entry/exclusions.toml")
            );
            (warning.line, warning.message.as_str())
        })
        .collect();
    assert_eq!(refused.len(), 2, "{:#?}", index.warnings);
    // Each warning sits at the line of the key at fault (scope, select) and names its entry.
    assert_eq!(refused[0].0, Some(13));
    assert!(
        refused[0]
            .1
            .contains("exclusion entry `everything` is left out"),
        "{}",
        refused[0].1
    );
    assert_eq!(refused[1].0, Some(18));
    assert!(
        refused[1]
            .1
            .contains("exclusion entry `string-select` is left out"),
        "{}",
        refused[1].1
    );
    assert!(
        !index
            .warnings
            .iter()
            .any(|warning| warning.kind == "invalid_exclusions"),
        "the file as a whole is read"
    );
    // The valid entry takes the run's N = 2 cells out, and only those.
    let run: Vec<_> = index
        .cells
        .iter()
        .filter(|cell| cell.key.run_id == "20260112_000000_000012")
        .collect();
    assert_eq!(run.len(), 4);
    for cell in &run {
        let expected: &[&str] = if cell.key.n().expect("a concurrency") == 2 {
            &["drop-n2"]
        } else {
            &[]
        };
        assert_eq!(cell.excluded, expected, "{}", cell.key);
    }
    // The ledger sits in the fixture's directory: the good run beside it is untouched.
    assert_eq!(good_cells(&index), good_cells(&alone));
}

#[test]
fn rows_left_out_as_malformed_do_not_lower_what_the_other_cells_are_expected_to_have() {
    // nan-inf: each N = 1 cell planned 2 requests and lost one to NaN or inf; the N = 2 cells have their 4.
    // Before, the two damaged cells voted "1 request per agent", so the intact N = 2 cells were told they had
    // "more rows than expected" and the damaged ones were called clean.
    let (_root, index) = index_with(&["nan-inf"]);
    let run = "20260204_000000_000004";
    let by_n: Vec<(u32, u32, Option<u32>, &str)> = index
        .cells
        .iter()
        .filter(|cell| cell.key.run_id == run)
        .map(|cell| {
            (
                cell.key.n().expect("a concurrency"),
                cell.rows,
                cell.expected_rows,
                cell.status.as_str(),
            )
        })
        .collect();
    assert_eq!(
        by_n,
        [
            (1, 1, Some(2), "partial"),
            (1, 1, Some(2), "partial"),
            (2, 4, Some(4), "clean"),
            (2, 4, Some(4), "clean"),
        ]
    );
    assert!(
        !index
            .warnings
            .iter()
            .any(|warning| warning.kind == "more_rows_than_expected"),
        "{:#?}",
        index.warnings
    );
}

#[test]
fn impossible_measurements_in_ok_rows_are_left_out_with_their_line() {
    let (_root, index) = index_with(&["implausible-values"]);
    let found: Vec<(Option<u64>, &str)> = index
        .warnings
        .iter()
        .filter(|warning| warning.run.as_deref() == Some("20260113_000000_000013"))
        .map(|warning| (warning.line, warning.message.as_str()))
        .collect();
    // Exactly the three rows, nothing else about the run.
    assert_eq!(found.len(), 3, "{found:#?}");
    assert_eq!(found[0].0, Some(7));
    assert!(
        found[0]
            .1
            .contains("expected a latency from 0 to 1000000000 ms"),
        "{}",
        found[0].1
    );
    assert_eq!(found[1].0, Some(8));
    assert!(
        found[1].1.contains("`completion_tokens` is `1e26`"),
        "{}",
        found[1].1
    );
    assert_eq!(found[2].0, Some(9));
    assert!(
        found[2].1.contains("is before submit_time_s"),
        "{}",
        found[2].1
    );
    let census = &index.run("20260113_000000_000013").unwrap().census;
    assert_eq!((census.rows, census.malformed_rows), (9, 3));
    // What is left is measured as before: no negative latency, no 1e26 tokens in any figure.
    for cell in index
        .cells
        .iter()
        .filter(|cell| cell.key.run_id == "20260113_000000_000013")
    {
        assert!(
            cell.stats.p50_wall_ms.is_some_and(|p50| p50 > 0.0),
            "{}",
            cell.key
        );
        assert!(
            cell.stats.aggregate_tps.is_some_and(|tps| tps < 1e6),
            "{}",
            cell.key
        );
    }
}

#[test]
fn cellscope_file_names_that_are_not_regular_files_are_named_never_read() {
    let (root, alone) = index_with(&[]);
    let base = root.path();
    // A directory named metrics.csv, a ledger that is a directory, a FIFO named metrics.csv (reading it would
    // block the index forever), a metrics file in a codec cellscope does not read, and a gzip file cut short.
    std::fs::create_dir_all(base.join("a/metrics.csv")).unwrap();
    std::fs::create_dir_all(base.join("b/exclusions.toml")).unwrap();
    std::fs::create_dir_all(base.join("c")).unwrap();
    crate::common::mkfifo(&base.join("c/metrics.csv"));
    std::fs::create_dir_all(base.join("d")).unwrap();
    std::fs::write(base.join("d/metrics.csv.bz2"), b"BZh9").unwrap();
    std::fs::create_dir_all(base.join("e")).unwrap();
    std::fs::write(base.join("e/metrics.csv.gz"), [0x1f, 0x8b, 8, 0]).unwrap();
    let index = index::build(base, &IndexOptions::default(), &Quiet).unwrap();
    let named: Vec<(&str, &str)> = index
        .warnings
        .iter()
        .filter(|warning| {
            ["not_a_file", "compressed_metrics", "unreadable_file"].contains(&warning.kind.as_str())
        })
        .map(|warning| (warning.kind.as_str(), warning.file.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(
        named,
        [
            ("not_a_file", "a/metrics.csv"),
            ("not_a_file", "b/exclusions.toml"),
            ("not_a_file", "c/metrics.csv"),
            ("compressed_metrics", "d/metrics.csv.bz2"),
            ("unreadable_file", "e/metrics.csv.gz"),
        ],
        "{:#?}",
        index.warnings
    );
    assert_eq!(good_cells(&index), good_cells(&alone));
}

#[test]
fn unknown_manifest_statuses_are_named_escaped_and_change_no_number() {
    let (_root, index) = index_with(&["unknown-manifest-status"]);
    let messages: Vec<&str> = index
        .warnings
        .iter()
        .filter(|warning| warning.kind == "unknown_manifest_status")
        .map(|warning| warning.message.as_str())
        .collect();
    assert_eq!(messages.len(), 3, "{:#?}", index.warnings);
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("the run's status is `banana`")),
        "{messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("the status of 1 cell(s) is `banana`")),
        "{messages:#?}"
    );
    // The escape is shown, never carried raw into a warning.
    assert!(
        messages.iter().any(|m| m.contains("`\\u{1b}[2Jcompleted`")),
        "{messages:#?}"
    );
    assert!(messages.iter().all(|m| !m.contains('\u{1b}')));
    // The rows count as they would without the manifest's words: every cell clean, 2 or 4 rows.
    for cell in index
        .cells
        .iter()
        .filter(|cell| cell.key.run_id == "20260114_000000_000014")
    {
        assert_eq!(
            cell.status,
            cellscope_model::CellStatus::Clean,
            "{}",
            cell.key
        );
        assert_eq!(
            cell.rows,
            2 * cell.key.n().expect("a concurrency"),
            "{}",
            cell.key
        );
    }
}

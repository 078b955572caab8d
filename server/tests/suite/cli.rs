//! The `cellscope` binary end to end: exports, audit output, `--strict`, and clear failures on bad roots.

use crate::common;

use common::{copy_tree, demo_root};
use std::path::Path;

fn cellscope(args: &[&str]) -> std::process::Output {
    common::cellscope_command()
        .args(args)
        .output()
        .expect("cellscope runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn cells_csv_has_the_contract_header_and_one_row_per_cell() {
    let root = demo_root().to_string_lossy().into_owned();
    let output = cellscope(&["cells", &root, "--format", "csv"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let csv = text(&output.stdout);
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with(
        "run_id,suite,phase,backend,model,workload,n,rep,status,refilled,fallback,excluded,expected_rows,rows,ok_rows,\
         failed_rows,skip_rows,mean_wall_ms,p50_wall_ms,p95_wall_ms,p99_wall_ms,p50_ttft_ms,p95_ttft_ms,\
         mean_prompt_tokens,mean_completion_tokens,aggregate_tps,efficiency,p95_multiplier"
    ));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2160);
    // A skipped V1 cell: no numbers, `false` flags, status skipped.
    let skipped = rows
        .iter()
        .find(|row| row.contains(",scaling,pytorch_direct,llama3.2-3b,long_decode,16,0,"))
        .unwrap();
    assert!(
        skipped.contains(",skipped,false,false,,192,0,0,0,1,,,,"),
        "{skipped}"
    );
    // A refilled, excluded SGLang cell.
    let refilled = rows
        .iter()
        .find(|row| row.contains(",sglang,mistral-7b,long_prefill_8k,32,0,"))
        .unwrap();
    assert!(
        refilled.contains(",clean,true,false,mistral-long-prefill-tokenizer,320,320,320,0,0,"),
        "{refilled}"
    );
}

/// A data root of one run whose directory name holds a right-to-left override and whose workload holds an
/// escape sequence, a bell, a carriage return and the same override.
fn root_with_control_characters() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("batch-\u{202e}lave");
    std::fs::create_dir(&run).unwrap();
    let good = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/fixtures/good/20260101_000000_000001/metrics.csv");
    let metrics = std::fs::read_to_string(good).unwrap().replace(
        ",short_decode,",
        ",\"short\u{1b}[31m\u{7}\r\u{202e}decode\",",
    );
    std::fs::write(run.join("metrics.csv"), metrics).unwrap();
    root
}

#[test]
fn cells_csv_into_a_pipe_is_the_export_itself_control_characters_included() {
    let root = root_with_control_characters();
    let root_arg = root.path().to_string_lossy().into_owned();
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("cells.csv");
    let written = cellscope(&[
        "cells",
        &root_arg,
        "--format",
        "csv",
        "--no-cache",
        "-o",
        &file.to_string_lossy(),
    ]);
    assert!(written.status.success(), "{}", text(&written.stderr));
    // `output` reads standard output through a pipe: not a terminal.
    let piped = cellscope(&["cells", &root_arg, "--format", "csv", "--no-cache"]);
    assert!(piped.status.success(), "{}", text(&piped.stderr));
    assert_eq!(piped.stdout, std::fs::read(&file).unwrap());
    let csv = text(&piped.stdout);
    assert!(
        csv.contains("\"short\u{1b}[31m\u{7}\r\u{202e}decode\""),
        "{csv:?}"
    );
}

/// `cellscope cells --format csv` of a run whose model is named like a spreadsheet formula and whose workload is
/// a negative number: read back by an RFC 4180 reader, the model is behind a `'`, and the workload and every
/// statistic read as numbers.
#[test]
fn cells_csv_guards_formula_like_names_and_keeps_numbers_numeric() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("20260101_000000_000001");
    std::fs::create_dir(&run).unwrap();
    let good = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/fixtures/good/20260101_000000_000001/metrics.csv");
    let metrics = std::fs::read_to_string(good)
        .unwrap()
        .replace(",llama3.2-1b,", ",@SUM(A1:A9),")
        .replace(",short_decode,", ",-1.5e-3,");
    std::fs::write(run.join("metrics.csv"), metrics).unwrap();
    let output = cellscope(&[
        "cells",
        &root.path().to_string_lossy(),
        "--format",
        "csv",
        "--no-cache",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let mut reader = csv::Reader::from_reader(output.stdout.as_slice());
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|column| column == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let guarded: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|row| &row[column("model")] == "'@SUM(A1:A9)")
        .collect();
    assert!(!guarded.is_empty(), "{}", text(&output.stdout));
    let numeric: Vec<&&csv::StringRecord> = guarded
        .iter()
        .filter(|row| &row[column("workload")] == "-1.5e-3")
        .collect();
    assert!(!numeric.is_empty(), "{}", text(&output.stdout));
    for row in numeric {
        for name in ["mean_wall_ms", "p95_wall_ms", "aggregate_tps"] {
            let field = &row[column(name)];
            assert!(field.parse::<f64>().is_ok(), "{name} = {field:?}");
        }
    }
}

#[test]
fn audit_text_shows_bidirectional_and_other_control_characters_as_escapes() {
    let root = root_with_control_characters();
    let output = cellscope(&["audit", &root.path().to_string_lossy(), "--no-cache"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report = text(&output.stdout);
    // The run's directory name, in its heading and in the warning that names it.
    assert!(
        report.contains("run batch-\\u{202e}lave (batch-\\u{202e}lave)"),
        "{report}"
    );
    assert!(
        report.contains("warning[foreign_run_id] run batch-\\u{202e}lave"),
        "{report}"
    );
    assert!(
        report.contains("short\\u{1b}[31m\\u{7}\\r\\u{202e}decode"),
        "{report}"
    );
    for raw in ['\u{202e}', '\u{1b}', '\u{7}', '\r'] {
        assert!(!report.contains(raw), "{raw:?} in {report:?}");
    }
}

/// Names of run directories with a control character in them, and the plain name each is compared with.
const CONTROL_NAMES: [&str; 5] = ["run\nx", "run\rx", "run\tx", "run\u{1b}x", "run\u{7f}x"];

/// A data root holding the good fixture's run under the directory `name` (see [`add_run_named`]).
fn root_with_run_named(name: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    add_run_named(root.path(), name);
    root
}

/// The good fixture's run under the directory `name` of `root`, its rows carrying `name` as their run id the way a
/// CSV writer writes it (quoted when it holds a line break or a carriage return).
fn add_run_named(root: &Path, name: &str) {
    let run = root.join(name);
    std::fs::create_dir(&run).unwrap();
    let good = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/fixtures/good/20260101_000000_000001/metrics.csv");
    let written = if name.contains(['\n', '\r']) {
        format!("\"{name}\"")
    } else {
        name.to_string()
    };
    let metrics = std::fs::read_to_string(good)
        .unwrap()
        .replace("20260101_000000_000001", &written);
    std::fs::write(run.join("metrics.csv"), metrics).unwrap();
}

#[test]
fn a_run_directory_named_with_a_control_character_keeps_its_rows() {
    use cellscope_index::cache::{RunCache, Trust};
    use cellscope_index::{IndexOptions, Quiet};
    let plain_root = root_with_run_named("runx");
    let plain =
        cellscope_index::build(plain_root.path(), &IndexOptions::default(), &Quiet).unwrap();
    assert!(plain.warnings.is_empty(), "{:#?}", plain.warnings);
    assert_eq!(plain.cells.iter().map(|cell| cell.rows).sum::<u32>(), 12);
    let plain_disk = cellscope_index::storage::LocalDisk::new(plain_root.path());
    for name in CONTROL_NAMES {
        let root = root_with_run_named(name);
        let cache_dir = tempfile::tempdir().unwrap();
        let cache = RunCache::in_directory(cache_dir.path().to_path_buf());
        let disk = cellscope_index::storage::LocalDisk::new(root.path());
        // Read from the files and written to the cache, then taken from it: both keep every row.
        for pass in ["cold", "warm"] {
            let index = cellscope_index::build_cached(
                root.path(),
                &IndexOptions::default(),
                &Quiet,
                &cache,
                Trust::Contents,
            )
            .unwrap();
            let used = index.cache.as_ref().unwrap().used;
            assert_eq!(used, u32::from(pass == "warm"), "{name:?} {pass}");
            assert!(
                index.warnings.is_empty(),
                "{name:?} {pass}: {:#?}",
                index.warnings
            );
            assert_eq!(index.runs.len(), 1);
            assert_eq!(index.runs[0].run_id, name);
            let cells: Vec<_> = index
                .cells
                .iter()
                .cloned()
                .map(|mut cell| {
                    assert_eq!(cell.key.run_id, name);
                    cell.key.run_id = "runx".into();
                    cell
                })
                .collect();
            assert_eq!(cells, plain.cells, "{name:?} {pass}");
            // Each cell's rows read back are the plain run's, on their own lines: a run id holding a line break
            // makes each row two lines long.
            let lines_per_row = if name.contains('\n') { 2 } else { 1 };
            let mut rows_read = 0;
            for (key, locator) in &index.rows {
                let mut plain_key = key.clone();
                plain_key.run_id = "runx".into();
                let expected: Vec<_> =
                    cellscope_index::read_rows(&plain_disk, &plain.rows[&plain_key])
                        .unwrap()
                        .into_iter()
                        .map(|mut row| {
                            row.source_run_id = name.to_string();
                            row.line = 2 + (row.line - 2) * lines_per_row;
                            row
                        })
                        .collect();
                let rows = cellscope_index::read_rows(&disk, locator).unwrap();
                assert_eq!(rows, expected, "{name:?} {pass} {key}");
                rows_read += rows.len();
            }
            assert_eq!(rows_read, 12, "{name:?} {pass}");
        }
    }
    // The CLI counts the rows of every such run and shows each control character but the line feed and the tab
    // (which `printable` keeps) as its escape.
    let root = tempfile::tempdir().unwrap();
    for name in CONTROL_NAMES {
        add_run_named(root.path(), name);
    }
    let output = cellscope(&["audit", &root.path().to_string_lossy(), "--no-cache"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report = text(&output.stdout);
    assert_eq!(
        report.matches("rows      12 real: ok 12").count(),
        CONTROL_NAMES.len(),
        "{report}"
    );
    for shown in ["run\\rx", "run\\u{1b}x", "run\\u{7f}x"] {
        assert!(
            report.contains(&format!("run {shown} ({shown})")),
            "{shown} in {report}"
        );
    }
    for raw in ['\r', '\u{1b}', '\u{7f}'] {
        assert!(!report.contains(raw), "{raw:?} in {report:?}");
    }
}

#[test]
fn arrow_and_json_exports_carry_the_same_cells() {
    let dir = tempfile::tempdir().unwrap();
    let root = demo_root().to_string_lossy().into_owned();
    let arrow_path = dir.path().join("cells.arrow");
    let json_path = dir.path().join("cells.json");
    assert!(
        cellscope(&[
            "cells",
            &root,
            "--format",
            "arrow",
            "-o",
            &arrow_path.to_string_lossy()
        ])
        .status
        .success()
    );
    assert!(
        cellscope(&[
            "cells",
            &root,
            "--format",
            "json",
            "-o",
            &json_path.to_string_lossy()
        ])
        .status
        .success()
    );
    let from_arrow =
        cellscope_model::schema::cells_from_ipc(&std::fs::read(&arrow_path).unwrap()).unwrap();
    let json: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    assert_eq!(from_arrow.len(), 2160);
    assert_eq!(json.len(), 2160);
    for (cell, object) in from_arrow.iter().zip(&json) {
        assert_eq!(object["run_id"], cell.key.run_id.as_str());
        assert_eq!(object["n"], cell.key.n().expect("a concurrency"));
        assert_eq!(object["status"], cell.status.as_str());
        assert_eq!(object["efficiency"].as_f64(), cell.efficiency);
        assert_eq!(object["p95_wall_ms"].as_f64(), cell.stats.p95_wall_ms);
    }
}

#[test]
fn audit_strict_fails_on_the_demo_notes_hash_mismatches_and_passes_once_the_note_holds() {
    // The demo note's two md5 prefixes are the documented TR164 values, not what this tree's files hash to.
    let root = demo_root().to_string_lossy().into_owned();
    let output = cellscope(&["audit", &root, "--strict", "--criterion", "v3"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("2 REFILL_NOTE claims are contradicted by the files"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("failed rows are not accounted"),
        "{stderr}"
    );
    let report = text(&output.stdout);
    let note = "tr164-v3/20260612_212816_266127/REFILL_NOTE.md";
    let flagged: Vec<&str> = report
        .lines()
        .filter(|line| line.contains("warning[refill_note_mismatch] run 20260612_212816_266127"))
        .collect();
    assert_eq!(flagged.len(), 2, "{report}");
    assert!(flagged[0].contains(&format!("{note}:30:")), "{report}");
    assert!(flagged[1].contains(&format!("{note}:31:")), "{report}");
    // The header counts them with the indexer's warnings, which `--json` lists on their own.
    let json = cellscope(&["audit", &root, "--json"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let indexer = cellscope_index_warnings(&value);
    assert!(
        report.contains(&format!("cells, {} warnings", indexer + 2)),
        "{report}"
    );
    assert_eq!(value["note_mismatches"], 2);

    // The same tree with a note that makes no checksum claim: nothing contradicts it and strict passes.
    let dir = tempfile::tempdir().unwrap();
    copy_tree(demo_root(), dir.path());
    let note_path = dir.path().join(note);
    let written = std::fs::read_to_string(&note_path).unwrap();
    let holding = written
        .replace("`5fd15755...`", "not recorded")
        .replace("`e0400837...`", "not recorded");
    assert_ne!(holding, written);
    std::fs::write(&note_path, holding).unwrap();
    let output = cellscope(&[
        "audit",
        &dir.path().to_string_lossy(),
        "--strict",
        "--criterion",
        "v3",
    ]);
    assert!(
        output.status.success(),
        "{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let report = text(&output.stdout);
    assert!(!report.contains("refill_note_mismatch"), "{report}");
    assert!(
        report.contains("request-level failures: none unaccounted for"),
        "{report}"
    );
    assert!(
        report
            .contains("3,780 rows replaced (were http_400 3,780) · only non-ok rows were replaced"),
        "{report}"
    );
    let json = cellscope(&["audit", &root, "--json"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["cells"], 2160);
    assert_eq!(value["breakdown"].as_array().unwrap().len(), 24 + 100);
}

/// The indexer's warnings in an `audit --json` report: those of the runs that are not note claims, and those
/// outside runs.
fn cellscope_index_warnings(report: &serde_json::Value) -> usize {
    let in_runs: usize = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|run| run["warnings"].as_array().unwrap())
        .filter(|warning| warning["kind"] != "refill_note_mismatch")
        .count();
    in_runs + report["warnings"].as_array().unwrap().len()
}

#[test]
fn the_audit_writes_the_ledger_selector_in_words_and_says_what_its_scope_means() {
    let root = demo_root().to_string_lossy().into_owned();
    let report = text(&cellscope(&["audit", &root]).stdout);
    assert!(
        report.contains(
            "mistral-long-prefill-tokenizer [comparison] 72 cells · selects model = mistral-7b and workload = long_prefill_8k ·"
        ),
        "{report}"
    );
    assert!(
        report.contains("scope comparison: the cells are left out on every side"),
        "{report}"
    );
}

#[test]
fn audit_checks_the_refill_note_claims_and_flags_the_hash_mismatches() {
    let root = demo_root().to_string_lossy().into_owned();
    let output = cellscope(&["audit", &root]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report = text(&output.stdout);
    // The claims sit under the master's refill line, before its backup line.
    let master = report
        .split("\nrun ")
        .find(|block| block.starts_with("20260612_212816_266127 "))
        .expect("the master's block");
    let lines: Vec<&str> = master.lines().collect();
    let refill = lines
        .iter()
        .position(|line| line.starts_with("  refill    "))
        .expect("a refill line");
    let claims: Vec<&str> = lines[refill + 1..]
        .iter()
        .take_while(|line| line.starts_with("            note line "))
        .copied()
        .collect();
    assert_eq!(claims.len(), 9, "{master}");
    assert!(
        lines[refill + 1 + claims.len()].starts_with("  backup    "),
        "{master}"
    );
    // The documented hash prefixes are not what this tree's files hash to: flagged, with the file and its md5.
    let mismatches: Vec<&&str> = claims
        .iter()
        .filter(|line| line.contains("MISMATCH"))
        .collect();
    assert_eq!(mismatches.len(), 2, "{master}");
    assert!(
        mismatches[0].contains(
            "note line 30: md5 of the original master's metrics.csv: 5fd15755... — MISMATCH \
             (tr164-v3/20260612_212816_266127_BACKUP_preRefill/metrics.csv: "
        ),
        "{master}"
    );
    assert!(
        mismatches[1].contains("md5 of the refill run's metrics.csv: e0400837... — MISMATCH"),
        "{master}"
    );
    assert!(
        claims.contains(
            &"            note line 22: http_400 rows replaced: 3,780 — matches (the backup comparison: 3,780)"
        ),
        "{master}"
    );
    assert!(
        claims
            .iter()
            .any(|line| line.contains("md5 of the spliced master's metrics.csv: not recorded")),
        "{master}"
    );
    // `--json` carries the same claims.
    let json = cellscope(&["audit", &root, "--json"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let run = value["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|run| run["run_id"] == "20260612_212816_266127")
        .unwrap();
    let verdicts: Vec<&str> = run["note_claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|claim| claim["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        [
            "matches",
            "matches",
            "matches",
            "matches",
            "matches",
            "matches",
            "mismatch",
            "mismatch",
            "not_recorded"
        ]
    );
}

#[test]
fn swapping_the_backup_in_as_master_fails_strict_naming_36_cells_and_3780_rows() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&demo_root().join("tr164-v3"), dir.path());
    let master = dir.path().join("20260612_212816_266127/metrics.csv");
    std::fs::copy(
        dir.path()
            .join("20260612_212816_266127_BACKUP_preRefill/metrics.csv"),
        &master,
    )
    .unwrap();
    let output = cellscope(&["audit", &dir.path().to_string_lossy(), "--strict"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
    let report = text(&output.stdout);
    assert!(
        report.contains(
            "not accounted for by a refill or an `all`-scope exclusion: 36 cells, 3,780 rows"
        ),
        "{report}"
    );
    let named = report
        .lines()
        .filter(|line| {
            line.contains("/sglang/mistral-7b/long_prefill_8k/") && line.contains("rows failed")
        })
        .count();
    assert_eq!(named, 36);
    assert!(text(&output.stderr).contains("36 cells with 3780 failed rows"));
    // The note still names the refill run, but no row of the master carries its id any more: a mention alone is
    // no evidence of a splice, so the refill run keeps its 36 cells as its own run, and the note is reported.
    assert!(report.contains("refill_note_without_rows"), "{report}");
    assert!(report.contains("3 runs, 1836 cells"), "{report}");
}

#[test]
fn a_missing_or_empty_data_directory_fails_clearly() {
    let missing = cellscope(&["audit", "/nonexistent/cellscope-data"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing.stderr).contains("data directory /nonexistent/cellscope-data does not exist")
    );
    let empty = tempfile::tempdir().unwrap();
    let output = cellscope(&["cells", &empty.path().to_string_lossy(), "--format", "csv"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("no run directories under"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn nothing_under_the_data_root_is_written() {
    fn listing(dir: &std::path::Path) -> Vec<(String, u64, std::time::SystemTime)> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let metadata = entry.metadata().unwrap();
            if metadata.is_dir() {
                entries.extend(listing(&entry.path()));
            }
            entries.push((
                entry.path().display().to_string(),
                metadata.len(),
                metadata.modified().unwrap(),
            ));
        }
        entries.sort();
        entries
    }
    let before = listing(demo_root());
    let root = demo_root().to_string_lossy().into_owned();
    assert!(cellscope(&["audit", &root, "--json"]).status.success());
    assert!(
        cellscope(&["cells", &root, "--format", "csv"])
            .status
            .success()
    );
    assert_eq!(listing(demo_root()), before);
}

#[test]
fn serve_refuses_a_cache_directory_inside_the_data_root() {
    let root = tempfile::tempdir().unwrap();
    copy_tree(&demo_root().join("tr164-v1"), root.path());
    let child = common::cellscope_command()
        .args([
            "serve",
            &root.path().to_string_lossy(),
            "--addr",
            "127.0.0.1:0",
            "--cache",
        ])
        .arg(root.path().join("cache"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (code, stderr) = exit_and_stderr(child);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("is inside the data root"), "{stderr}");
    assert!(
        !root.path().join("cache").exists(),
        "nothing was created under the data root"
    );
}

#[test]
fn compare_prints_the_head_to_head_and_refuses_bad_parameters() {
    let root = common::demo_root().to_str().unwrap();
    compare_text_pairs_groups_and_names_the_confounders(root);
    compare_json_with_exclusions_put_back(root);
    compare_without_a_phase_averages_the_phases(root);
    compare_an_absolute_metric_shows_its_unit(root);
    compare_refuses_bad_parameters(root);
}

/// The text report on the scaling phase: pairs per workload, what the ledger dropped, and the confounders above
/// the table.
fn compare_text_pairs_groups_and_names_the_confounders(root: &str) {
    let output = cellscope(&[
        "compare", root, "--a", "vllm", "--b", "sglang", "--phase", "scaling",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let row = |workload: &str| {
        text.lines()
            .find(|line| line.trim_start().starts_with(workload))
            .unwrap_or_else(|| panic!("no {workload} row in\n{text}"))
            .to_string()
    };
    // 25 pairs on four workloads, 20 on long_prefill_8k where the ledger drops Mistral on both sides.
    assert!(
        row("short_decode").split_whitespace().nth(1) == Some("25"),
        "{text}"
    );
    assert!(
        row("long_prefill_8k").split_whitespace().nth(1) == Some("20"),
        "{text}"
    );
    assert!(text.contains("pairs dropped: 5"), "{text}");
    assert!(text.contains("excluded by the ledger (mistral-long-prefill-tokenizer) on both sides"));
    // Above the table: what else differs between the runs behind the sides, each value with its runs.
    let (confounders, table) = text.split_once("\ncompare backend = vllm").unwrap();
    assert!(
        confounders.starts_with("What else differs between vllm and sglang:\n"),
        "{text}"
    );
    let lines: Vec<&str> = confounders.lines().collect();
    let block = |label: &str| -> (String, String) {
        let at = lines
            .iter()
            .position(|line| line.starts_with(&format!("  {label}  ")))
            .unwrap_or_else(|| panic!("no {label} in\n{text}"));
        (
            lines[at][2 + label.len()..].trim().into(),
            lines[at + 1].trim().into(),
        )
    };
    const VLLM: &str = "20260612_204254_036590";
    const SGLANG: &str = "20260612_212816_266127";
    assert_eq!(
        block("driver"),
        (
            format!("vllm: 580.159 ({VLLM})"),
            format!("sglang: 575.57 ({SGLANG})")
        )
    );
    assert_eq!(
        block("backend version"),
        (
            format!("vllm: 0.10.2 ({VLLM})"),
            format!("sglang: 0.5.12.post1 ({SGLANG})")
        )
    );
    assert_eq!(
        block("torch"),
        (
            format!("vllm: 2.8.0+cu128 ({VLLM})"),
            format!("sglang: 2.11.0+cu130 ({SGLANG})")
        )
    );
    // The same GPU (and, with the refill's cells left out by the ledger, the same context ceiling) is counted,
    // not listed.
    assert!(
        confounders.contains("\n  4 fields equal on both sides\n"),
        "{confounders}"
    );
    assert!(
        !confounders.contains("GPU") && !confounders.contains("max model length"),
        "{confounders}"
    );
    assert!(table.contains("long_prefill_8k"));
}

/// JSON carries the same groups, with every pair's cells, and the confounders with the refill run behind a side.
fn compare_json_with_exclusions_put_back(root: &str) {
    let output = cellscope(&[
        "compare",
        root,
        "--a",
        "vllm",
        "--b",
        "sglang",
        "--phase",
        "scaling",
        "--include",
        "excluded",
        "--json",
    ]);
    assert!(output.status.success());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let groups = json["groups"].as_array().unwrap();
    let long_prefill = groups
        .iter()
        .find(|group| group["group"] == "long_prefill_8k")
        .unwrap();
    assert_eq!(long_prefill["n_pairs"], 25);
    assert_eq!(
        long_prefill["pairs"][0]["a_cells"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // With the Mistral cells in, the refill run stands behind the sglang side with its own context ceiling.
    let confounders = &json["confounders"];
    assert_eq!(
        confounders["b_runs"],
        serde_json::json!([
            {"run_id": "20260612_212816_266127", "refill_of": null},
            {"run_id": "20260613_055519_963364", "refill_of": "20260612_212816_266127"},
        ])
    );
    let field = |list: &str, name: &str| -> serde_json::Value {
        confounders[list]
            .as_array()
            .unwrap()
            .iter()
            .find(|contrast| contrast["field"] == name)
            .unwrap_or_else(|| panic!("no {name} in {list}: {confounders}"))
            .clone()
    };
    let ceiling = field("differing", "max_model_len");
    assert_eq!(ceiling["label"], "max model length");
    assert_eq!(
        ceiling["a"],
        serde_json::json!([{"value": "8768", "runs": ["20260612_204254_036590"]}])
    );
    assert_eq!(
        ceiling["b"],
        serde_json::json!([
            {"value": "8768", "runs": ["20260612_212816_266127"]},
            {"value": "11264", "runs": ["20260613_055519_963364"]},
        ])
    );
    assert_eq!(
        field("equal", "gpu")["b"][0]["value"],
        "NVIDIA A100 80GB PCIe"
    );
}

/// Without a phase filter each (model, workload, N) is one pair of a group, its phases averaged.
fn compare_without_a_phase_averages_the_phases(root: &str) {
    let output = cellscope(&["compare", root, "--a", "sglang", "--b", "vllm", "--json"]);
    assert!(output.status.success());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    for group in json["groups"].as_array().unwrap() {
        let mut seen = std::collections::BTreeSet::new();
        for pair in group["pairs"].as_array().unwrap() {
            let coordinates = pair["coordinates"].to_string();
            assert!(!coordinates.contains("\"phase\""), "{coordinates}");
            assert!(
                seen.insert(coordinates.clone()),
                "{coordinates} twice in {}",
                group["group"]
            );
            assert_eq!(
                pair["a_cells"].as_array().unwrap().len(),
                6,
                "2 phases × 3 reps"
            );
        }
        assert!(!seen.is_empty());
    }
    let output = cellscope(&["compare", root, "--a", "sglang", "--b", "vllm"]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("\neach pair: mean of phase scaling, ttft × rep 0, 1, 2 per side\n"),
        "{text}"
    );
}

/// An absolute metric's differences carry its unit, beside the ratio a / b.
fn compare_an_absolute_metric_shows_its_unit(root: &str) {
    let output = cellscope(&[
        "compare",
        root,
        "--a",
        "vllm",
        "--b",
        "sglang",
        "--phase",
        "scaling",
        "--metric",
        "p95_wall_ms",
    ]);
    let text = String::from_utf8(output.stdout).unwrap();
    let long_decode = text
        .lines()
        .find(|line| line.trim_start().starts_with("long_decode"))
        .unwrap_or_else(|| panic!("no long_decode row in\n{text}"));
    assert!(
        long_decode.contains(" ms ") && long_decode.contains("×1.0"),
        "{long_decode}"
    );
}

/// Bad parameters: exit 2 and a message naming the parameter and the choices.
fn compare_refuses_bad_parameters(root: &str) {
    for (args, message) in [
        (
            vec!["--a", "VLLM", "--b", "sglang"],
            "`a` = `VLLM` is not a backend in the data (did you mean `vllm`?)",
        ),
        (
            vec!["--a", "vllm", "--b", "tgi"],
            "the backend values are pytorch_direct, sglang, vllm",
        ),
        (
            vec!["--a", "vllm", "--b", "vllm"],
            "`a` and `b` are both `vllm`",
        ),
        (
            vec!["--a", "vllm", "--b", "sglang", "--metric", "ok_rate"],
            "`metric` must be one of efficiency",
        ),
        (
            vec!["--a", "vllm", "--b", "sglang", "--by", "rep"],
            "`by=rep`: expected one of backend, model, run, suite, phase, workload",
        ),
    ] {
        let mut full = vec!["compare", root];
        full.extend(args);
        let output = cellscope(&full);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{stderr}");
    }
}

/// Waits for `child` to exit (killing it after 20 s) and returns its exit code and standard error.
fn exit_and_stderr(mut child: std::process::Child) -> (Option<i32>, String) {
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("serve kept running");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (status.code(), stderr)
}

#[test]
fn serve_answers_on_as_many_threads_as_asked_and_refuses_none() {
    let root = demo_root().join("tr164-v1");
    let serve = |threads: &str| {
        common::cellscope_command()
            .args([
                "serve",
                &root.to_string_lossy(),
                "--addr",
                "127.0.0.1:0",
                "--no-cache",
                "--http-threads",
                threads,
            ])
            .env("CELLSCOPE_LOG", "info")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (code, stderr) = exit_and_stderr(serve("0"));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--http-threads"), "{stderr}");

    let mut child = serve("3");
    let seen = log_until_serving(&mut child);
    let _ = child.kill();
    let _ = child.wait();
    // The runtime's own count of its workers (see `serve`).
    assert!(
        seen.iter().any(|line| line.contains("http_threads=3")),
        "{seen:#?}"
    );
    assert!(
        seen.last()
            .is_some_and(|line| line.contains("cellscope serving")),
        "{seen:#?}"
    );
}

/// The log lines of a `serve` started with `CELLSCOPE_LOG=info` and its stderr piped, up to the one that says
/// it serves (or to its end).
fn log_until_serving(child: &mut std::process::Child) -> Vec<String> {
    let lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    let mut seen = Vec::new();
    for line in lines.map_while(Result::ok) {
        let serving = line.contains("cellscope serving");
        seen.push(line);
        if serving {
            break;
        }
    }
    seen
}

/// `cellscope serve ROOT --cache CACHE` on a free port: the child, and its log lines up to `cellscope serving`.
fn serve_until_serving(root: &Path, cache: &Path) -> (std::process::Child, Vec<String>) {
    let mut child = common::cellscope_command()
        .arg("serve")
        .arg(root)
        .args(["--addr", "127.0.0.1:0", "--cache"])
        .arg(cache)
        .env("CELLSCOPE_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let seen = log_until_serving(&mut child);
    (child, seen)
}

/// The fingerprints of data-root files the cache remembers a snapshot for.
fn remembered_inputs(cache: &Path) -> Vec<std::path::PathBuf> {
    let Ok(roots) = std::fs::read_dir(cache.join("snapshots")) else {
        return Vec::new();
    };
    roots
        .flatten()
        .filter_map(|root| std::fs::read_dir(root.path().join("inputs")).ok())
        .flat_map(|entries| entries.flatten().map(|entry| entry.path()))
        .filter(|path| path.extension().is_none())
        .collect()
}

#[test]
fn a_restart_on_unchanged_files_answers_from_the_kept_snapshot_and_a_touched_file_stops_it() {
    let root = tempfile::tempdir().unwrap();
    copy_tree(&demo_root().join("tr164-v1"), root.path());
    let cache = tempfile::tempdir().unwrap();
    let kept_line = "the app's first requests are answered from it while the index is built";

    let (mut first, seen) = serve_until_serving(root.path(), cache.path());
    assert!(
        !seen.iter().any(|line| line.contains(kept_line)),
        "{seen:#?}"
    );
    // The complete snapshot (second stage) is kept and remembered for these files beside serving.
    let started = std::time::Instant::now();
    while remembered_inputs(cache.path()).is_empty() {
        assert!(started.elapsed().as_secs() < 60, "nothing remembered");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = first.kill();
    let _ = first.wait();

    let (mut second, seen) = serve_until_serving(root.path(), cache.path());
    let _ = second.kill();
    let _ = second.wait();
    let kept = seen
        .iter()
        .find(|line| line.contains(kept_line))
        .unwrap_or_else(|| panic!("no kept answer on a restart: {seen:#?}"));
    // The kept snapshot is the one the restart indexed to.
    let id = kept.split("snapshot=").nth(1).unwrap().trim();
    assert!(
        !seen
            .iter()
            .any(|line| line.contains("is not the one the files index to")),
        "{seen:#?}"
    );
    assert!(
        cache
            .path()
            .join("snapshots")
            .read_dir()
            .unwrap()
            .flatten()
            .any(|root| root.path().join(id).is_dir()),
        "{id} is kept"
    );

    // A file touched since: the restart indexes before answering, as a cold one does.
    let metrics = root.path().join(
        std::fs::read_dir(root.path())
            .unwrap()
            .flatten()
            .find(|entry| entry.path().join("metrics.csv").is_file())
            .unwrap()
            .path()
            .join("metrics.csv"),
    );
    std::fs::File::options()
        .append(true)
        .open(&metrics)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
        .unwrap();
    let (mut third, seen) = serve_until_serving(root.path(), cache.path());
    let _ = third.kill();
    let _ = third.wait();
    assert!(
        seen.iter().any(|line| line.contains("cellscope serving")),
        "{seen:#?}"
    );
    assert!(
        !seen.iter().any(|line| line.contains(kept_line)),
        "{seen:#?}"
    );
}

/// `cellscope compare --by tp` contrasts two deployments, and `--param` filters on a parameter, as the API does.
#[test]
fn compare_contrasts_and_filters_deployment_parameters() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../data/fixtures/formats/vllm-sweep-config"
    );
    let json = |args: &[&str]| -> serde_json::Value {
        let mut full = vec!["compare", root, "--no-cache", "--json", "--per", "none"];
        full.extend(args);
        let output = cellscope(&full);
        assert!(output.status.success(), "{}", text(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let both = json(&[
        "--by",
        "max_num_seqs",
        "--a",
        "4",
        "--b",
        "8",
        "--metric",
        "p95_wall_ms",
    ]);
    assert_eq!(both["spec"]["by"], "max_num_seqs");
    assert_eq!(both["groups"][0]["n_pairs"], 2, "{both}");
    let at_2 = json(&[
        "--by",
        "max-num-seqs",
        "--a",
        "4",
        "--b",
        "8",
        "--metric",
        "p95_wall_ms",
        "--param",
        "max_num_seqs=4,8",
        "--load",
        "2",
    ]);
    assert_eq!(at_2["groups"][0]["n_pairs"], 1, "{at_2}");
    let absent = cellscope(&[
        "compare",
        root,
        "--no-cache",
        "--by",
        "tp",
        "--a",
        "4",
        "--b",
        "8",
    ]);
    assert_eq!(absent.status.code(), Some(2));
    assert!(
        text(&absent.stderr).contains("is not a tp in the data"),
        "{}",
        text(&absent.stderr)
    );
}

/// `cellscope compare --metric slo_capacity --slo …` pairs each configuration's two sides across their loads:
/// under p99 TTFT ≤ 70 ms, max_num_seqs=4 holds at N = 2 and fails at 4, and so does 8; each capacity is the
/// linear crossing of 70 ms between the two loads, from the numpy oracle's p99 TTFTs of the fixture. An SLO the
/// command cannot read is refused with its reason.
#[test]
fn compare_on_slo_capacity_pairs_configurations_over_their_loads() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/fixtures/formats");
    let root = format!("{fixtures}/vllm-sweep-config");
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{fixtures}/vllm-sweep-config.expected.json")).unwrap(),
    )
    .unwrap();
    let p99 = |seqs: &str, n: u64| -> f64 {
        expected["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|cell| cell["config"]["max_num_seqs"] == seqs && cell["n"] == n)
            .and_then(|cell| cell["p99_ttft_ms"].as_f64())
            .unwrap()
    };
    let capacity = |seqs: &str| {
        let (low, high) = (p99(seqs, 2), p99(seqs, 4));
        2.0 + (70.0 - low) / (high - low) * 2.0
    };
    let args = [
        "compare",
        root.as_str(),
        "--no-cache",
        "--json",
        "--per",
        "none",
        "--by",
        "max_num_seqs",
        "--a",
        "4",
        "--b",
        "8",
        "--metric",
        "slo_capacity",
        "--slo",
        "p99_ttft_ms<=70",
    ];
    let output = cellscope(&args);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let body: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(body["spec"]["slo"], "p99_ttft_ms<=70");
    let pairs = body["groups"][0]["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "{body}");
    for (side, seqs) in [("a", "4"), ("b", "8")] {
        let got = pairs[0][side].as_f64().unwrap();
        assert!(
            (got - capacity(seqs)).abs() < 1e-9,
            "{side}: {got} vs {}",
            capacity(seqs)
        );
    }
    let mut bad = args.to_vec();
    bad.pop();
    bad.push("p99_ttft<=70");
    let refused = cellscope(&bad);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("p99_ttft"),
        "{}",
        text(&refused.stderr)
    );
}

/// The status line `cellscope serve` gives a request addressed to `host` (raw HTTP/1.1 on loopback).
fn status_for_host(port: u16, host: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET /api/index HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply.lines().next().unwrap_or_default().to_string()
}

/// On a loopback address `serve` answers requests addressed to a loopback name or an `--allow-host` name, and
/// refuses any other name with 421 (a rebound DNS name of another site reaches 127.0.0.1 with its own `Host`).
#[test]
fn serve_on_loopback_refuses_requests_addressed_to_other_hosts() {
    let root = demo_root().join("tr164-v1");
    let mut child = common::cellscope_command()
        .args([
            "serve",
            &root.to_string_lossy(),
            "--addr",
            "127.0.0.1:0",
            "--no-cache",
            "--allow-host",
            "Bench.Local",
        ])
        .env("CELLSCOPE_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let seen = log_until_serving(&mut child);
    let port: u16 = seen
        .last()
        .and_then(|line| line.split("url=http://127.0.0.1:").nth(1))
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("no port in {seen:#?}"));
    let answers: Vec<(String, String)> = [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        "bench.local".to_string(),
        "evil.example".to_string(),
        format!("rebound.example:{port}"),
    ]
    .into_iter()
    .map(|host| {
        let status = status_for_host(port, &host);
        (host, status)
    })
    .collect();
    let _ = child.kill();
    let _ = child.wait();
    for (host, status) in &answers[..4] {
        assert!(status.contains(" 200 "), "{host}: {status}");
    }
    for (host, status) in &answers[4..] {
        assert!(status.contains(" 421 "), "{host}: {status}");
    }
}

/// The demo's cells table as `cellscope cells --format csv` writes it: the header and the rows, by column name.
fn cells_csv(args: &[&str]) -> Vec<std::collections::BTreeMap<String, String>> {
    let output = cellscope(&[&["cells", "--format", "csv", "--no-cache"], args].concat());
    assert!(output.status.success(), "{}", text(&output.stderr));
    let mut reader = csv::Reader::from_reader(output.stdout.as_slice());
    let header = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|record| {
            header
                .iter()
                .map(String::from)
                .zip(record.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

#[test]
fn cells_filters_keep_exactly_the_rows_whose_columns_match() {
    let root = demo_root().to_str().unwrap();
    let all = cells_csv(&[root]);
    let sliced = cells_csv(&[
        root,
        "--backend",
        "vllm,sglang",
        "--load",
        "4",
        "--status",
        "clean,partial",
        "--rep",
        "1",
    ]);
    let expected: Vec<_> = all
        .into_iter()
        .filter(|row| {
            ["vllm", "sglang"].contains(&row["backend"].as_str())
                && row["n"] == "4"
                && ["clean", "partial"].contains(&row["status"].as_str())
                && row["rep"] == "1"
        })
        .collect();
    assert!(expected.len() > 10, "{} rows", expected.len());
    assert_eq!(sliced, expected);
}

/// Each query flag is the API parameter of its name: repeated, it adds values as a comma list does, and `--n` is
/// the load as `n=` is in a link.
#[test]
fn cells_flags_repeat_and_take_the_parameters_other_names() {
    let root = demo_root().to_str().unwrap();
    let listed = cells_csv(&[root, "--backend", "vllm,sglang", "--load", "4,8"]);
    let repeated = cells_csv(&[
        root,
        "--backend",
        "vllm",
        "--backend",
        "sglang",
        "--n",
        "4",
        "--load",
        "8",
    ]);
    let expected: Vec<_> = cells_csv(&[root])
        .into_iter()
        .filter(|row| {
            ["vllm", "sglang"].contains(&row["backend"].as_str())
                && ["4", "8"].contains(&row["n"].as_str())
        })
        .collect();
    assert!(expected.len() > 10, "{} rows", expected.len());
    assert_eq!(listed, expected);
    assert_eq!(repeated, expected);
}

#[test]
fn cells_filters_refuse_what_the_api_refuses_with_its_reason() {
    let root = demo_root().to_str().unwrap();
    for (args, said) in [
        (
            vec!["--backend", "vlm"],
            "backend has no value `vlm` in this data (did you mean `vllm`?)",
        ),
        (
            vec!["--status", "done"],
            "`status=done`: expected one of clean",
        ),
        (
            vec!["--include", "excluded"],
            "of the toggles only pre_refill changes it",
        ),
        (vec!["--rep", "one"], "rep"),
        (
            vec!["--param", "colour=red"],
            "no cell of this data states the deployment parameter `colour`",
        ),
    ] {
        let output =
            cellscope(&[&["cells", root, "--format", "csv", "--no-cache"], &args[..]].concat());
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = text(&output.stderr);
        assert!(
            stderr.starts_with("error: ") && stderr.contains(said),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn requests_of_a_refilled_cell_are_its_current_and_replaced_rows_by_key_or_dimensions() {
    let root = demo_root().to_str().unwrap();
    let key =
        "20260612_212816_266127/cloud_core/scaling/sglang/mistral-7b/long_prefill_8k/n=32/rep=1";
    let by_key = cellscope(&[
        "requests",
        root,
        "--cell",
        key,
        "--format",
        "json",
        "--no-cache",
    ]);
    assert!(by_key.status.success(), "{}", text(&by_key.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&by_key.stdout).unwrap();
    let count = |lineage: &str| rows.iter().filter(|row| row["lineage"] == lineage).count();
    // Each side of the refill holds N = 32 agents' 10 requests.
    assert_eq!(
        (rows.len(), count("current"), count("replaced")),
        (640, 320, 320)
    );
    let by_dimensions = cellscope(&[
        "requests",
        root,
        "--run",
        "20260612_212816_266127",
        "--phase",
        "scaling",
        "--model",
        "mistral-7b",
        "--workload",
        "long_prefill_8k",
        "--load",
        "32",
        "--rep",
        "1",
        "--format",
        "json",
        "--no-cache",
    ]);
    assert_eq!(text(&by_dimensions.stdout), text(&by_key.stdout));
    let unknown = cellscope(&[
        "requests",
        root,
        "--cell",
        &key.replace("n=32", "n=33"),
        "--no-cache",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        text(&unknown.stderr).contains("no cell with this run, phase, model, workload, n and rep")
    );
    let missing = cellscope(&[
        "requests",
        root,
        "--run",
        "20260612_212816_266127",
        "--no-cache",
    ]);
    assert!(
        text(&missing.stderr).contains("missing phase, model, workload, load, rep"),
        "{}",
        text(&missing.stderr)
    );
}

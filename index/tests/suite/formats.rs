//! Golden tests of the other tools' formats: every fixture under `data/fixtures/formats/` is indexed and its
//! cells are checked against `<name>.expected.json`, which `oracle.py` computed from the fixture files with
//! numpy (not from this code). Bad-input fixtures must give a warning naming the file (and the line where the
//! oracle knows it) while the good run beside them keeps its numbers. What `cellscope index --explain` prints of
//! them is tested with the binary, in the server's suite.

use crate::common::{check, close, expected, format_fixtures as fixtures, index, reported_name};
use cellscope_index::{Index, IndexOptions, Quiet, build};
use cellscope_model::{CellSummary, Load};
use serde_json::Value as Json;

#[test]
fn vllm_results_match_the_oracle() {
    for name in [
        "vllm-detailed",
        "vllm-plain",
        "vllm-append",
        "vllm-legacy",
        "vllm-sweep",
        "vllm-bad",
    ] {
        check(name);
    }
}

/// The TPOT and ITL recomputed from a vLLM file's per-request arrays agree with the means vLLM itself wrote in
/// the same file, and every number the file reports is kept under vLLM's own key.
#[test]
fn vllm_tpot_and_itl_agree_with_the_tools_own_means_and_every_figure_is_kept() {
    let name = "vllm-detailed";
    let index = index(name);
    let mut checked = 0;
    for (key, provenance) in &index.provenance {
        let Some(origin) = &provenance.origin else {
            continue;
        };
        let text = std::fs::read_to_string(fixtures().join(name).join(&origin.file)).expect("file");
        let file: Json = serde_json::from_str(&text).expect("one result object");
        let cell = index
            .cells
            .iter()
            .find(|cell| &cell.key == key)
            .expect("cell");
        for (column, tool_key) in [
            ("mean_tpot_ms", "mean_tpot_ms"),
            ("mean_itl_ms", "mean_itl_ms"),
        ] {
            let tool = file[tool_key].as_f64().expect("the tool's mean");
            let ours = cell.stats.column(column).expect("recomputed");
            assert!(
                close(tool, ours),
                "{}: {column} {ours} != vLLM's {tool}",
                origin.file
            );
            assert!(
                !cell.origin.is_reported(column),
                "{}: {column} is recomputed",
                origin.file
            );
        }
        for (file_key, value) in file.as_object().expect("object") {
            if let Some(value) = value.as_f64() {
                assert_eq!(
                    origin.reported_figures.get(file_key),
                    Some(&value),
                    "{}: {file_key}",
                    origin.file
                );
            }
        }
        assert!(origin.reported_figures.contains_key("request_throughput"));
        checked += 1;
    }
    assert_eq!(checked, 3);
}

/// Where the file has no per-request TTFT, tokens or gaps, the serving figures are vLLM's own, marked reported.
#[test]
fn without_per_request_arrays_the_serving_figures_are_the_tools_and_marked() {
    let index = index("vllm-plain");
    for cell in index.cells.iter().filter(|cell| cell.ok_rows > 0) {
        for column in ["p99_tpot_ms", "mean_itl_ms", "p99_ttft_ms"] {
            if cell.stats.column(column).is_some() {
                assert!(cell.origin.is_reported(column), "{}: {column}", cell.key);
            }
        }
        assert!(cell.stats.p50_interactivity_tps.is_none(), "{}", cell.key);
    }
}

#[test]
fn sglang_results_match_the_oracle() {
    for name in [
        "sglang-detailed",
        "sglang-plain",
        "sglang-legacy",
        "sglang-bad",
    ] {
        check(name);
    }
}

#[test]
fn aiperf_results_match_the_oracle() {
    for name in [
        "aiperf-v01",
        "aiperf-v010",
        "aiperf-sweep",
        "aiperf-bad",
        "aiperf-jsonl-only",
    ] {
        check(name);
    }
}

#[test]
fn aiperf_records_without_a_summary_are_recomputed_and_say_what_was_inferred() {
    let index = index("aiperf-jsonl-only");
    // Both artifact directories are one run (the directory above them), one cell each.
    assert_eq!(index.runs.len(), 1, "{:#?}", index.runs);
    assert_eq!(index.cells.len(), 2);
    for cell in &index.cells {
        // Nothing is the tool's: no summary, so every figure is recomputed.
        assert!(cell.origin.reported.is_empty(), "{}", cell.key);
        assert!(
            cell.origin.inferred.contains(&"n".to_string())
                && cell.origin.inferred.contains(&"model".to_string()),
            "{}: {:?}",
            cell.key,
            cell.origin.inferred
        );
    }
    let warned: Vec<&str> = index
        .warnings
        .iter()
        .filter(|warning| warning.kind == "no_summary")
        .filter_map(|warning| warning.file.as_deref())
        .collect();
    assert_eq!(warned.len(), 2, "{:#?}", index.warnings);
    assert!(
        warned
            .iter()
            .all(|file| file.ends_with("profile_export.jsonl"))
    );
    // The inferred parts carry their rules, for the inspector and the audit.
    let (_, provenance) = index.provenance.iter().next().expect("a cell");
    let origin = provenance.origin.as_ref().expect("origin");
    assert!(
        origin
            .inferred
            .iter()
            .any(|part| part.dimension == "model" && part.rule.contains("artifact directory")),
        "{:#?}",
        origin.inferred
    );
}

#[test]
fn an_aiperf_sweep_is_one_run_with_trials_as_reps() {
    let index = index("aiperf-sweep");
    assert_eq!(index.runs.len(), 1, "{:#?}", index.runs);
    assert!(index.runs[0].run_id.ends_with("qwen3-sweep"));
    assert_eq!(index.cells.len(), 4);
    // The warm-up records of the v0.10 run are dropped and said to be.
    let index = self::index("aiperf-v010");
    let (_, provenance) = index.provenance.iter().next().expect("one cell");
    let origin = provenance.origin.as_ref().expect("origin");
    assert!(
        origin.notes.iter().any(|note| note.contains("warm-up")),
        "{:#?}",
        origin.notes
    );
}

#[test]
fn genai_perf_results_match_the_oracle() {
    check("genai-perf");
    // The summary beside the raw export is read for its model and figures, never as a second cell.
    let good = index("genai-perf");
    assert_eq!(good.runs.len(), 1, "{:#?}", good.runs);
    assert!(good.warnings.is_empty(), "{:#?}", good.warnings);
    // A request without a timestamp is left out at its record; a cut summary leaves its cell without model and
    // tool figures; the good run beside them is the same as alone.
    check("genai-perf-bad");
    let bad = index("genai-perf-bad");
    let kinds: Vec<&str> = bad
        .warnings
        .iter()
        .map(|warning| warning.kind.as_str())
        .collect();
    assert_eq!(
        kinds,
        ["invalid_request", "invalid_json"],
        "{:#?}",
        bad.warnings
    );
    assert!(
        bad.warnings[0]
            .message
            .contains("request 2 has no `timestamp`")
    );
}

#[test]
fn llmperf_results_match_the_oracle() {
    for name in ["llmperf", "llmperf-bad"] {
        check(name);
    }
    // The bad elements are reported at their element and line; the summary's count is kept as the expected.
    let index = index("llmperf-bad");
    let lines: Vec<Option<u64>> = index
        .warnings
        .iter()
        .filter(|warning| {
            warning.file.as_deref().is_some_and(|file| {
                file.ends_with(
                    "n4/meta-llama-Llama-3-1-8B-Instruct_256_64_individual_responses.json",
                )
            })
        })
        .map(|warning| warning.line)
        .collect();
    assert_eq!(lines.len(), 2, "{:#?}", index.warnings);
    assert!(lines.iter().all(Option::is_some), "{lines:?}");
}

#[test]
fn guidellm_results_match_the_oracle() {
    for name in [
        "guidellm-v05",
        "guidellm-bad",
        "guidellm-v03",
        "guidellm-v03-bad",
    ] {
        check(name);
    }
    // Warm-up and cool-down requests are left out and said to be.
    let index = index("guidellm-v05");
    assert!(
        index
            .provenance
            .values()
            .all(
                |provenance| provenance.origin.as_ref().is_some_and(|origin| origin
                    .notes
                    .iter()
                    .any(|note| note.contains("measurement window")))
            ),
        "{:#?}",
        index.provenance
    );
    let index = self::index("guidellm-bad");
    assert!(
        index
            .warnings
            .iter()
            .any(|warning| warning.kind == "unknown_version"),
        "{:#?}",
        index.warnings
    );
}

#[test]
fn a_guidellm_03_report_is_read_and_a_bad_benchmark_leaves_the_others_unchanged() {
    let good = index("guidellm-v03");
    assert!(good.warnings.is_empty(), "{:#?}", good.warnings);
    // The model comes from the benchmark's worker and n from its `args.strategy`, both read.
    for cell in &good.cells {
        assert_eq!(cell.key.model, "Qwen3-8B");
        assert!(
            !cell.origin.inferred.contains(&"n".to_string()),
            "{:?}",
            cell.origin.inferred
        );
    }
    let bad = index("guidellm-v03-bad");
    let warning = bad
        .warnings
        .iter()
        .find(|warning| warning.kind == "invalid_result")
        .unwrap_or_else(|| panic!("{:#?}", bad.warnings));
    assert_eq!(warning.file.as_deref(), Some("benchmarks.json"));
    assert!(
        warning.message.contains("benchmark 1") && warning.message.contains("a list"),
        "{}",
        warning.message
    );
    // The same report with benchmark 1 damaged: benchmarks 0 and 2 give the same cells as in the good one.
    assert_eq!(bad.cells.len(), 2);
    for cell in &bad.cells {
        let twin = good
            .cells
            .iter()
            .find(|other| {
                other.key.n().expect("a concurrency") == cell.key.n().expect("a concurrency")
            })
            .expect("the same benchmark in the good report");
        assert_eq!(
            twin.stats,
            cell.stats,
            "n={}",
            cell.key.n().expect("a concurrency")
        );
        assert_eq!(twin.rows, cell.rows);
        assert_eq!(twin.failed_rows, cell.failed_rows);
    }
    assert!(
        bad.cells
            .iter()
            .all(|cell| cell.key.n().expect("a concurrency") != 2)
    );
}

#[test]
fn generic_tables_match_the_oracle() {
    for name in [
        "table-requests",
        "table-cells",
        "table-parquet",
        "table-bad",
        "seed-tr131",
        "seed-cold-start",
        "seed-serving-log",
    ] {
        check(name);
        // Every figure the table gives beside the cells-table columns is kept with the cell, as the table's own.
        let index = index(name);
        let want = expected(name);
        for cell in want["cells"].as_array().expect("cells") {
            let origin = index
                .provenance
                .values()
                .filter_map(|provenance| provenance.origin.as_ref())
                .find(|origin| {
                    Some(origin.file.as_str()) == cell["source"].as_str()
                        && u64::from(origin.record) == cell["record"].as_u64().unwrap_or(u64::MAX)
                })
                .expect("origin");
            assert_eq!(origin.format, "table");
            for (key, value) in cell["reported"].as_object().expect("reported") {
                let got = origin.reported.get(key).copied();
                assert!(
                    got.is_some_and(|got| close(got, value.as_f64().expect("number"))),
                    "{name} {}#{}: reported {key} {got:?} != {value}",
                    origin.file,
                    origin.record
                );
            }
        }
    }
}

#[test]
fn a_bad_table_is_reported_at_its_lines_and_the_good_run_is_unchanged() {
    let index = index("table-bad");
    let at = |file: &str, line: u64, kind: &str| {
        index.warnings.iter().any(|warning| {
            warning
                .file
                .as_deref()
                .is_some_and(|path| path.ends_with(file))
                && warning.line == Some(line)
                && warning.kind == kind
        })
    };
    assert!(
        at("bad/requests.csv", 4, "invalid_row"),
        "{:#?}",
        index.warnings
    );
    assert!(
        at("bad/requests.csv", 9, "invalid_row"),
        "{:#?}",
        index.warnings
    );
    assert!(
        at("bad/no-users.csv", 1, "missing_column"),
        "{:#?}",
        index.warnings
    );
    // The good run alone gives the same cells as beside the bad one.
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("good")).expect("dir");
    for file in ["cellscope.toml", "good/requests.csv"] {
        std::fs::copy(
            fixtures().join("table-bad").join(file),
            dir.path().join(file),
        )
        .expect("copy");
    }
    let alone = build(dir.path(), &IndexOptions::default(), &Quiet).expect("indexes");
    assert!(alone.warnings.is_empty(), "{:#?}", alone.warnings);
    let good: Vec<&CellSummary> = index
        .cells
        .iter()
        .filter(|cell| cell.key.run_id == "good")
        .collect();
    assert_eq!(good.len(), alone.cells.len());
    for (left, right) in good.iter().zip(&alone.cells) {
        assert_eq!(left.key, right.key);
        assert_eq!(left.stats, right.stats);
        assert_eq!(left.status, right.status);
    }
}

#[test]
fn rows_read_back_from_the_sibling_files_match_the_cells() {
    use cellscope_index::read_rows;
    use cellscope_index::storage::LocalDisk;
    for name in [
        "aiperf-v010",
        "aiperf-bad",
        "genai-perf",
        "genai-perf-bad",
        "llmperf-bad",
        "guidellm-v05",
        "guidellm-v03",
        "aiperf-jsonl-only",
        "table-requests",
        "table-parquet",
        "table-bad",
    ] {
        let index = index(name);
        let disk = LocalDisk::new(&fixtures().join(name));
        for cell in &index.cells {
            let locator = index.rows.get(&cell.key).expect("row locator");
            let rows = read_rows(&disk, locator).expect("rows read back");
            assert_eq!(rows.len(), cell.rows as usize, "{name} {}", cell.key);
            let ok = rows
                .iter()
                .filter(|row| row.class == cellscope_model::requests::RowClass::Ok)
                .count();
            assert_eq!(ok, cell.ok_rows as usize, "{name} {}", cell.key);
            if name.starts_with("table-") {
                // Each row of a table says its own line (a Parquet file's row), for the inspector.
                let lines: std::collections::BTreeSet<u64> =
                    rows.iter().map(|row| row.line).collect();
                assert_eq!(lines.len(), rows.len(), "{name} {}", cell.key);
                assert!(!lines.contains(&0), "{name} {}", cell.key);
            }
        }
    }
}

/// Two deployments of one model in one folder (InferenceX at TP4 and TP8; a `vllm bench sweep` over
/// `max_num_seqs`) are cells of their own, each rep 0, keyed by the configuration its path states.
#[test]
fn each_deployment_is_its_own_cell_with_the_configuration_its_path_states() {
    for (name, configurations) in [("vllm-inferencex", 2), ("vllm-sweep-config", 2)] {
        check(name);
        let index = index(name);
        assert!(index.cells.iter().all(|cell| cell.key.rep == 0), "{name}");
        let distinct = cellscope_model::order::sorted_distinct(
            index.cells.iter().map(|cell| cell.key.config.text()),
        );
        assert_eq!(distinct.len(), configurations, "{name}: {distinct:?}");
        assert!(
            !index
                .warnings
                .iter()
                .any(|warning| warning.kind == "duplicate_cell"),
            "{name}: {:#?}",
            index.warnings
        );
    }
    let index = index("vllm-inferencex");
    let tp: Vec<&str> = index
        .cells
        .iter()
        .filter_map(|cell| cell.key.config.get("tp"))
        .collect();
    assert_eq!(tp, ["4", "8"]);
}

#[test]
fn a_sweep_is_one_run_and_its_side_files_are_not_cells() {
    let index = index("vllm-sweep");
    assert_eq!(index.runs.len(), 1, "{:#?}", index.runs);
    assert!(index.runs[0].run_id.ends_with("20260301_101500"));
    // The failed third run of one combination is reported, not silently missing.
    assert!(
        index
            .warnings
            .iter()
            .any(|warning| warning.kind == "sweep_run_failed"),
        "{:#?}",
        index.warnings
    );
    // N = 1 is in the sweep, so efficiency is computed against it.
    assert!(index.cells.iter().all(|cell| cell.efficiency.is_some()));
}

/// A data root with `files` copied from fixtures (`(fixture file, destination)`) and an optional
/// `cellscope.toml`.
fn root_with(files: &[(&str, &str)], mapping: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (from, to) in files {
        let to = dir.path().join(to);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("dir");
        std::fs::copy(fixtures().join(from), to).expect("copy");
    }
    if let Some(mapping) = mapping {
        std::fs::write(dir.path().join("cellscope.toml"), mapping).expect("mapping");
    }
    dir
}

#[test]
fn two_runs_given_one_run_id_are_kept_apart_with_a_warning() {
    // `cellscope.toml` gives the same `run` to two directories holding the same kind of result: without care
    // their cells have the same key and one hides the other.
    let vllm = "vllm-detailed/openai-infqps-concurrency1-Qwen3-8B-20260301-101500.json";
    let dir = root_with(
        &[(vllm, "a/result.json"), (vllm, "b/result.json")],
        Some("[[map]]\nglob = \"**\"\nrun = \"bench\"\n"),
    );
    let index = build(dir.path(), &IndexOptions::default(), &Quiet).expect("indexes");
    let ids: Vec<&str> = index.runs.iter().map(|run| run.run_id.as_str()).collect();
    assert_eq!(ids, ["bench", "bench@b"], "{:#?}", index.warnings);
    assert_eq!(index.cells.len(), 2);
    assert_ne!(index.cells[0].key, index.cells[1].key);
    assert_eq!(index.provenance.len(), 2);
    assert_eq!(index.cells[0].stats, index.cells[1].stats);
    let warning = index
        .warnings
        .iter()
        .find(|warning| warning.kind == "duplicate_run_id")
        .unwrap_or_else(|| panic!("{:#?}", index.warnings));
    assert!(
        warning.message.contains("`a`")
            && warning.message.contains("`b`")
            && warning.message.contains("bench@b"),
        "{}",
        warning.message
    );
    assert_eq!(warning.run.as_deref(), Some("bench@b"));
    // Rows read back from the renamed run's cell come from its own file.
    let disk = cellscope_index::storage::LocalDisk::new(dir.path());
    for cell in &index.cells {
        let locator = index.rows.get(&cell.key).expect("row locator");
        let rows = cellscope_index::read_rows(&disk, locator).expect("rows");
        assert_eq!(rows.len(), cell.rows as usize);
    }

    // Two formats' files in one directory are two runs with the directory's id: the second is told apart by
    // its format.
    let dir = root_with(
        &[
            (vllm, "results/result.json"),
            ("guidellm-v03/benchmarks.json", "results/benchmarks.json"),
        ],
        None,
    );
    let index = build(dir.path(), &IndexOptions::default(), &Quiet).expect("indexes");
    // Runs are taken in (root, format name) order: the GuideLLM run keeps the id.
    let mut ids: Vec<&str> = index.runs.iter().map(|run| run.run_id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        ["results", "results@vllm-bench"],
        "{:#?}",
        index.warnings
    );
    assert_eq!(index.cells.len(), 4);
    assert!(
        index
            .warnings
            .iter()
            .any(|warning| warning.kind == "duplicate_run_id"),
        "{:#?}",
        index.warnings
    );
}

/// The rate sweeps: every record is its own cell at its offered rate (never a rep of another load), and the
/// scaling figures of a rate series are the oracle's: achieved/offered, the p95 multiplier against the lowest
/// rate, and where the series saturates.
#[test]
fn rate_sweeps_match_the_oracle() {
    for name in ["vllm-rate", "sglang-rate", "guidellm-rate"] {
        check(name);
        let index = index(name);
        let expected = expected(name);
        let loads: std::collections::BTreeSet<_> = index
            .cells
            .iter()
            .map(|cell| (cell.key.series(), cell.key.load))
            .collect();
        assert_eq!(
            loads.len(),
            index.cells.len(),
            "{name}: two records at one load are reps of one cell"
        );
        let curves = cellscope_model::curve::series_curves(&index.cells, &Default::default());
        for want in expected["cells"].as_array().unwrap() {
            if want.get("rate_rps").is_none() {
                continue;
            }
            let source = want["source"].as_str().unwrap();
            let record = want["record"].as_u64().unwrap() as u32;
            let key = index
                .provenance
                .iter()
                .find_map(|(key, provenance)| {
                    provenance
                        .origin
                        .as_ref()
                        .filter(|origin| origin.file == source && origin.record == record)
                        .map(|_| key)
                })
                .unwrap();
            let cell = index.cells.iter().find(|cell| &cell.key == key).unwrap();
            let label = format!("{name} {source}#{record} ({key})");
            match (want["achieved_over_offered"].as_f64(), cell.efficiency) {
                (Some(want), Some(got)) => assert!(
                    close(want, got),
                    "{label}: achieved/offered {got} != {want}"
                ),
                (None, None) => {}
                (want, got) => panic!("{label}: achieved/offered {got:?}, expected {want:?}"),
            }
            match (want["p95_multiplier"].as_f64(), cell.p95_multiplier) {
                (Some(want), Some(got)) => {
                    assert!(close(want, got), "{label}: p95 multiplier {got} != {want}")
                }
                (None, None) => {}
                (want, got) => panic!("{label}: p95 multiplier {got:?}, expected {want:?}"),
            }
            let curve = curves
                .iter()
                .find(|curve| curve.group == key.series())
                .unwrap();
            let saturation = match &want["saturation_rps"] {
                Json::Null => None,
                Json::String(inf) if inf == "inf" => Load::rate(f64::INFINITY),
                rate => Load::rate(rate.as_f64().unwrap()),
            };
            assert_eq!(
                curve.breakdown(&cellscope_model::Criterion::V1).load(),
                saturation,
                "{label}: saturation"
            );
            assert_eq!(
                cell.baseline_load.map(|load| load.kind()),
                Some(cellscope_model::LoadKind::Rate)
            );
        }
    }
}

/// GuideLLM's strategies: synchronous is N = 1, throughput an unbounded rate, constant and poisson their rate,
/// and the arrival process is kept in the cell's notes.
#[test]
fn guidellm_strategies_give_their_loads_and_keep_the_arrival_process() {
    let index = index("guidellm-rate");
    let loads: Vec<String> = index
        .cells
        .iter()
        .map(|cell| cell.key.load.to_string())
        .collect();
    assert_eq!(loads, ["n=1", "rate=2", "rate=4", "rate=inf"]);
    let notes: Vec<String> = index
        .provenance
        .values()
        .filter_map(|provenance| provenance.origin.as_ref())
        .flat_map(|origin| origin.notes.clone())
        .collect();
    for kind in ["constant", "poisson"] {
        assert!(
            notes
                .iter()
                .any(|note| note.contains(&format!("strategy `{kind}`"))),
            "{kind}: {notes:#?}"
        );
    }
}

/// A record without any load, per-request rows or request count is kept: unstated load, no expectation, not
/// partial, and an `info` finding names it.
#[test]
fn a_record_without_a_load_is_kept_with_its_load_unstated() {
    check("sglang-no-load");
    let index = index("sglang-no-load");
    let [cell] = index.cells.as_slice() else {
        panic!("{:#?}", index.cells);
    };
    assert_eq!(cell.key.load, Load::Unstated);
    assert_eq!(
        cell.key.to_string().split('/').rev().nth(1),
        Some("load=unstated")
    );
    assert_eq!(cell.expected_rows, None);
    assert_ne!(cell.status, cellscope_model::CellStatus::Partial);
    assert_eq!((cell.efficiency, cell.p95_multiplier), (None, None));
    let info = index
        .warnings
        .iter()
        .find(|warning| warning.kind == "load_unstated")
        .expect("a load_unstated finding");
    assert_eq!(info.severity, cellscope_model::api::Severity::Info);
    assert!(
        info.file
            .as_deref()
            .is_some_and(|file| file.ends_with("sglang_aggregates.jsonl"))
    );
    assert!(
        !index
            .warnings
            .iter()
            .any(|warning| warning.kind == "no_concurrency")
    );
}

#[test]
fn inferencex_aggregates_match_the_oracle() {
    for name in ["inferencex-agg", "inferencex-agg-bad"] {
        check(name);
    }
}

/// `agg_<name>.json` beside the result `<name>.json` it was made from is that result's figures again: the result
/// (with its requests) is the cell, and the aggregate adds none.
#[test]
fn an_inferencex_aggregate_beside_its_result_adds_no_cell() {
    let name = "dsr1_1k1k_fp4_sglang_tp4_ep1_dpa_false_conc4_b200.json";
    let aggregate =
        std::fs::read_to_string(fixtures().join("inferencex-agg-bad/good/agg_bmk.json"))
            .expect("aggregate");
    let row = serde_json::from_str::<Json>(&aggregate).expect("rows")[0].to_string();
    let dir = root_with(&[(&format!("vllm-inferencex/{name}"), name)], None);
    std::fs::write(dir.path().join(format!("agg_{name}")), row).expect("aggregate written");
    let index = build(dir.path(), &IndexOptions::default(), &Quiet).expect("indexes");
    assert_eq!(index.cells.len(), 1, "{:#?}", index.cells);
    assert_eq!(index.cells[0].rows, 10);
    assert!(
        index
            .warnings
            .iter()
            .all(|warning| warning.kind != "not_recognised"),
        "{:#?}",
        index.warnings
    );
}

/// With the JSON of its run beside it, a CSV export is no cell of its own: the JSON is read, and a figure of
/// the export that differs from it beyond its two printed decimals is a warning naming both files.
#[test]
fn a_csv_export_beside_its_json_is_checked_against_it() {
    let directory =
        "aiperf-v01/artifacts/meta-llama_Llama-3.1-8B-Instruct-openai-chat-concurrency4";
    let files = [
        "profile_export_aiperf.json",
        "profile_export.jsonl",
        "profile_export_aiperf.csv",
    ];
    let copies: Vec<(String, String)> = files
        .iter()
        .map(|file| (format!("{directory}/{file}"), format!("run/{file}")))
        .collect();
    let pairs: Vec<(&str, &str)> = copies
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = root_with(&pairs, None);
    let index = build(dir.path(), &IndexOptions::default(), &Quiet).expect("indexes");
    assert_eq!(index.cells.len(), 1);
    let kinds: Vec<&str> = index.warnings.iter().map(|w| w.kind.as_str()).collect();
    assert!(
        !kinds.contains(&"export_disagrees"),
        "{:#?}",
        index.warnings
    );
    assert!(!kinds.contains(&"not_recognised"), "{:#?}", index.warnings);
    // The same export with the TTFT p50 changed from 106.92 to 116.92 ms.
    let csv_path = dir.path().join("run/profile_export_aiperf.csv");
    let text = std::fs::read_to_string(&csv_path).expect("export");
    std::fs::write(&csv_path, text.replace(",106.92,", ",116.92,")).expect("edited");
    let index = build(dir.path(), &IndexOptions::default(), &Quiet).expect("indexes");
    assert_eq!(index.cells.len(), 1);
    let warning = index
        .warnings
        .iter()
        .find(|warning| warning.kind == "export_disagrees")
        .unwrap_or_else(|| panic!("{:#?}", index.warnings));
    assert_eq!(
        warning.file.as_deref(),
        Some("run/profile_export_aiperf.json")
    );
    assert!(
        warning.message.contains("p50_ttft_ms 116.92 (CSV)"),
        "{}",
        warning.message
    );
}

/// A path or a field that contradicts what the content says is a warning naming both; the content's value keys
/// the cell.
#[test]
fn a_path_or_a_field_that_contradicts_the_content_is_a_warning_and_the_content_wins() {
    let raw = "vllm-inferencex/dsr1_1k1k_fp4_sglang_tp4_ep1_dpa_false_conc4_b200.json";
    let dir = root_with(
        &[(
            raw,
            "gptoss_1k1k_fp4_sglang_tp4_ep1_dpa_false_conc4_b200.json",
        )],
        None,
    );
    let index = build(dir.path(), &IndexOptions::default(), &Quiet).expect("indexes");
    assert_eq!(index.cells[0].key.model, "DeepSeek-R1-0528");
    let warning = index
        .warnings
        .iter()
        .find(|warning| warning.kind == "path_disagrees")
        .unwrap_or_else(|| panic!("{:#?}", index.warnings));
    assert!(
        warning.message.contains("`gptoss`") && warning.message.contains("DeepSeek-R1-0528"),
        "{}",
        warning.message
    );
    // SGLang's client told to speak vLLM's protocol to an SGLang server.
    let source = "sglang-plain/sglang_0302_16_1024_128.jsonl";
    let dir = root_with(&[(source, "run/results.jsonl")], None);
    let path = dir.path().join("run/results.jsonl");
    let text = std::fs::read_to_string(&path).expect("results");
    std::fs::write(
        &path,
        text.replacen("\"backend\": \"sglang\"", "\"backend\": \"vllm\"", 1),
    )
    .expect("edited");
    let index = build(dir.path(), &IndexOptions::default(), &Quiet).expect("indexes");
    assert!(index.cells.iter().all(|cell| cell.key.backend == "sglang"));
    let warning = index
        .warnings
        .iter()
        .find(|warning| warning.kind == "backend_disagrees")
        .unwrap_or_else(|| panic!("{:#?}", index.warnings));
    assert_eq!(warning.line, Some(1));
}

/// Every figure the oracle reads from an aggregate-only report is a column of the cell, marked reported.
fn check_reported_figures_are_all_read(name: &str) {
    let index = index(name);
    let expected = expected(name);
    for want in expected["cells"].as_array().expect("cells") {
        let source = want["source"].as_str().expect("source");
        let (key, _) = index
            .provenance
            .iter()
            .find(|(_, provenance)| {
                provenance
                    .origin
                    .as_ref()
                    .is_some_and(|origin| origin.file == source)
            })
            .unwrap_or_else(|| panic!("{name}: no cell from {source}"));
        let cell = index
            .cells
            .iter()
            .find(|cell| &cell.key == key)
            .expect("cell");
        for column in cellscope_model::origin::STAT_COLUMNS {
            let tool = reported_name(column)
                .and_then(|key| want["reported"][key].as_f64())
                .or_else(|| want["reported"][column].as_f64());
            if let Some(tool) = tool {
                let got = cell
                    .stats
                    .column(column)
                    .unwrap_or_else(|| panic!("{name} {source}: {column} not read ({tool})"));
                assert!(
                    close(tool, got),
                    "{name} {source}: {column} {got} != {tool}"
                );
                assert!(cell.origin.is_reported(column), "{name} {source}: {column}");
            }
        }
    }
}

#[test]
fn llmd_benchmark_reports_match_the_oracle() {
    for name in ["llmd-report-v01", "llmd-report-v02", "llmd-report-bad"] {
        check(name);
        check_reported_figures_are_all_read(name);
    }
    // Two experiments gathered in one folder: one run, their cells kept apart by the experiment id.
    let index = index("llmd-report-v01");
    assert_eq!(index.runs.len(), 1, "{:#?}", index.runs);
    let eids = cellscope_model::order::sorted_distinct(
        index
            .cells
            .iter()
            .filter_map(|cell| cell.key.config.get("eid").map(str::to_string)),
    );
    assert_eq!(eids.len(), 2, "{eids:?}");
    assert!(index.cells.iter().all(|cell| cell.key.rep == 0));
    assert!(
        !index
            .warnings
            .iter()
            .any(|warning| warning.kind == "duplicate_cell"),
        "{:#?}",
        index.warnings
    );
    // The schema 0.1 copy of a result read in its 0.2 report is neither a cell nor a finding.
    let index = self::index("llmd-report-v02");
    assert_eq!(index.cells.len(), 6);
    assert!(
        index.warnings.iter().all(|warning| warning.severity
            != cellscope_model::api::Severity::Error
            && warning.kind != "not_recognised"),
        "{:#?}",
        index.warnings
    );
    let loads: Vec<String> = index
        .cells
        .iter()
        .map(|cell| cell.key.load.to_string())
        .collect();
    for load in ["n=8", "n=16", "rate=2.5", "rate=5", "rate=10", "rate=inf"] {
        assert!(loads.contains(&load.to_string()), "{load}: {loads:?}");
    }
    // Each broken report is named with what is wrong; the good stage keeps its figures.
    let bad = self::index("llmd-report-bad");
    let kinds: std::collections::BTreeSet<&str> = bad
        .warnings
        .iter()
        .map(|warning| warning.kind.as_str())
        .collect();
    for kind in [
        "invalid_yaml",
        "invalid_metric",
        "missing_units",
        "unknown_unit",
        "empty_file",
        "unknown_version",
    ] {
        assert!(kinds.contains(kind), "{kind}: {:#?}", bad.warnings);
    }
    let unit = bad
        .warnings
        .iter()
        .find(|warning| warning.kind == "unknown_unit")
        .expect("unknown unit");
    assert!(
        unit.message
            .contains("results.request_performance.aggregate.latency.time_to_first_token.units")
            && unit.message.contains("minutes"),
        "{}",
        unit.message
    );
    let good = bad
        .cells
        .iter()
        .find(|cell| cell.key.load.to_string() == "rate=1")
        .expect("the good stage");
    assert!(good.stats.p50_ttft_ms.is_some() && good.stats.p95_wall_ms.is_some());
}

#[test]
fn inference_perf_stage_reports_match_the_oracle() {
    for name in ["inference-perf", "inference-perf-bad"] {
        check(name);
        check_reported_figures_are_all_read(name);
    }
    // One run of three stages; the summary over all stages and the configuration are side files, in silence.
    let index = index("inference-perf");
    assert_eq!(index.runs.len(), 1, "{:#?}", index.runs);
    assert!(index.warnings.is_empty(), "{:#?}", index.warnings);
    assert!(index.cells.iter().all(|cell| cell.key.backend == "vllm"));
    // The achieved rate is kept as the tool's figure, the requested rate is the load.
    let (_, provenance) = index.provenance.iter().next().expect("a cell");
    let origin = provenance.origin.as_ref().expect("origin");
    assert!(
        origin
            .reported_figures
            .contains_key("load_summary.achieved_rate")
    );
    assert!(
        origin
            .notes
            .iter()
            .any(|note| note.contains("achieved_rate")),
        "{:#?}",
        origin.notes
    );
    // A stage without its load summary takes its stage's configured rate, inferred and said.
    let bad = self::index("inference-perf-bad");
    let stage3 = bad
        .provenance
        .values()
        .filter_map(|provenance| provenance.origin.as_ref())
        .find(|origin| origin.file.ends_with("stage_3_lifecycle_metrics.json"))
        .expect("stage 3 kept");
    assert!(
        stage3
            .inferred
            .iter()
            .any(|part| part.dimension == "rate" && part.rule.contains("load.stages[3].rate")),
        "{:#?}",
        stage3.inferred
    );
    let messages: Vec<&str> = bad
        .warnings
        .iter()
        .map(|warning| warning.message.as_str())
        .collect();
    assert!(
        messages
            .iter()
            .any(|message| message.contains("`successes.latency.time_to_first_token.mean`")),
        "{messages:#?}"
    );
}

#[test]
fn mlperf_loadgen_logs_match_the_oracle() {
    for name in ["mlperf-server", "mlperf-summary-only", "mlperf-bad"] {
        check(name);
    }
    // The summary beside a detail log and the accuracy logs are side files: two cells, no findings.
    let server = index("mlperf-server");
    assert_eq!(server.cells.len(), 2);
    assert!(server.warnings.is_empty(), "{:#?}", server.warnings);
    // An INVALID result is the tool's rejection, never a clean cell; the interactive variant keeps its scenario.
    let summaries = index("mlperf-summary-only");
    let invalid = summaries
        .warnings
        .iter()
        .find(|warning| warning.kind == "mlperf_invalid")
        .expect("an mlperf_invalid warning");
    assert!(
        invalid
            .message
            .contains("Performance constraints satisfied: NO")
    );
    assert!(
        summaries
            .cells
            .iter()
            .any(|cell| cell.key.phase == "Interactive")
    );
    let bad = index("mlperf-bad");
    let disagree = bad
        .warnings
        .iter()
        .find(|warning| warning.kind == "logs_disagree")
        .expect("a logs_disagree warning");
    assert!(disagree.message.contains("mlperf_log_summary.txt"));
    assert!(disagree.message.contains("Tokens per second"));
}

#[test]
fn console_logs_match_the_oracle() {
    for name in [
        "console-vllm",
        "console-sglang",
        "console-trtllm",
        "console-bad",
    ] {
        check(name);
    }
    // A dead run and a cut block are warnings at their lines, never cells; the good log beside them is unchanged.
    let bad = index("console-bad");
    let kinds = |file: &str| -> Vec<&str> {
        bad.warnings
            .iter()
            .filter(|warning| {
                warning
                    .file
                    .as_deref()
                    .is_some_and(|path| path == file || path.ends_with(&format!("/{file}")))
            })
            .map(|warning| warning.kind.as_str())
            .collect()
    };
    assert_eq!(kinds("dead.log"), ["dead_run"]);
    assert_eq!(kinds("cut.log"), ["block_cut"]);
    assert_eq!(kinds("sweep_with_dead.log"), ["dead_run"]);
    assert_eq!(kinds("garbled.txt"), ["invalid_figure", "invalid_figure"]);
    assert!(kinds("good.log").is_empty());
}

/// The warnings of `kind` in an index, with the files they name.
fn findings<'a>(index: &'a Index, kind: &str) -> Vec<&'a cellscope_model::api::Warning> {
    index
        .warnings
        .iter()
        .filter(|warning| warning.kind == kind)
        .collect()
}

/// vLLM `--metadata` deployments in one JSON Lines file are configurations of their own (3 × 3 rates: 9 cells, no
/// reps), the accelerator string read by the table; records that differ in a setting vLLM does not write are kept
/// apart by it with a `records_differ` warning, and records alike in every setting are repetitions.
#[test]
fn every_record_is_its_own_cell_unless_it_repeats_another_in_every_setting() {
    check("vllm-metadata");
    let index = index("vllm-metadata");
    assert_eq!(index.cells.len(), 9);
    let configs = cellscope_model::order::sorted_distinct(
        index.cells.iter().map(|cell| cell.key.config.text()),
    );
    assert_eq!(
        configs,
        [
            "accelerator=l40s,accelerators=4,deployment=baseline,gateway=none",
            "accelerator=l40s,accelerators=4,deployment=kv-aware,gateway=envoy",
            "accelerator=l40s,accelerators=4,deployment=prefix-cache,gateway=envoy",
        ]
    );
    assert!(
        index
            .cells
            .iter()
            .all(|cell| cell.key.rep == 0 && cell.key.workload == "random_1024x128")
    );
    for kind in ["records_differ", "duplicate_cell"] {
        assert!(findings(&index, kind).is_empty(), "{:#?}", index.warnings);
    }

    check("vllm-records-differ");
    let index = self::index("vllm-records-differ");
    let differ = findings(&index, "records_differ");
    assert_eq!(differ.len(), 1, "{:#?}", index.warnings);
    assert_eq!(differ[0].file.as_deref(), Some("bench.jsonl"));
    assert_eq!(differ[0].line, Some(1));
    for text in [
        "`gpu_memory_utilization`",
        "`0.85`",
        "`0.95`",
        "record 0 (line 1)",
    ] {
        assert!(differ[0].message.contains(text), "{}", differ[0].message);
    }
    let mut keys: Vec<(String, u32)> = index
        .cells
        .iter()
        .map(|cell| (cell.key.config.text(), cell.key.rep))
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            ("gpu_memory_utilization=0.85".to_string(), 0),
            ("gpu_memory_utilization=0.9".to_string(), 0),
            ("gpu_memory_utilization=0.9".to_string(), 1),
            ("gpu_memory_utilization=0.95".to_string(), 0),
        ]
    );
}

/// A console log is keyed by the lengths it sent (vLLM's dataset line, else its token totals), not by the defaults
/// its argument dump shows, and a warning names both.
#[test]
fn a_console_log_is_keyed_by_the_workload_it_measured() {
    check("console-measured");
    let index = index("console-measured");
    let workload_of = |file: &str| {
        let (key, _) = index
            .provenance
            .iter()
            .find(|(_, provenance)| {
                provenance
                    .origin
                    .as_ref()
                    .is_some_and(|origin| origin.file == file)
            })
            .expect("a cell of the file");
        key.workload.clone()
    };
    assert_eq!(workload_of("long_prompts.log"), "random_20000x256");
    assert_eq!(workload_of("totals_only.log"), "random_8192x128");
    let differs = findings(&index, "workload_differs");
    assert_eq!(differs.len(), 2, "{:#?}", index.warnings);
    let sampled = differs
        .iter()
        .find(|warning| warning.file.as_deref() == Some("long_prompts.log"))
        .expect("the sampled log's warning");
    assert_eq!(sampled.line, Some(3));
    for text in [
        "line 2 says random_1024x128",
        "Sampling input_len from [20000, 20000]",
        "random_20000x256",
    ] {
        assert!(sampled.message.contains(text), "{}", sampled.message);
    }
    let totals = differs
        .iter()
        .find(|warning| warning.file.as_deref() == Some("totals_only.log"))
        .expect("the totals log's warning");
    assert!(
        totals.message.contains("8192.0 per prompt") && totals.message.contains("random_8192x128"),
        "{}",
        totals.message
    );
}

/// GenAI-Perf folders of one sweep are one run: a renamed export is read with the folder's summary, a summary whose
/// export was not kept is read alone, and each CSV is only checked against its summary, never a cell.
#[test]
fn genai_perf_folders_are_one_sweep_and_their_csvs_only_checked() {
    check("genai-perf-folders");
    let index = index("genai-perf-folders");
    assert_eq!(index.runs.len(), 1, "{:#?}", index.runs);
    assert!(findings(&index, "duplicate_run_id").is_empty());
    assert_eq!(index.cells.len(), 2);
    for cell in &index.cells {
        assert_eq!(cell.key.model, "Llama-3.1-8B-Instruct", "{}", cell.key);
    }
    // The renamed export's cell has the summary's figures beside its recomputed ones; the summary alone, only them.
    for origin in index
        .provenance
        .values()
        .filter_map(|provenance| provenance.origin.as_ref())
    {
        assert!(
            origin
                .reported_figures
                .contains_key("time_to_first_token.avg"),
            "{}: {:?}",
            origin.file,
            origin.reported_figures
        );
    }
    let alone = index
        .cells
        .iter()
        .find(|cell| cell.key.load == Load::Concurrency(10))
        .expect("the summary read alone");
    assert!(alone.origin.is_reported("p99_ttft_ms"));
    assert_eq!(alone.rows, 0);
    let formats: Vec<&str> = index
        .provenance
        .values()
        .filter_map(|provenance| provenance.origin.as_ref())
        .map(|origin| origin.format.as_str())
        .collect();
    assert_eq!(formats, ["genai-perf", "genai-perf"]);
    let disagree = findings(&index, "export_disagrees");
    assert_eq!(disagree.len(), 1, "{:#?}", index.warnings);
    assert!(
        disagree[0]
            .file
            .as_deref()
            .is_some_and(|file| file.ends_with("concurrency10/profile_export_genai_perf.json")),
        "{:#?}",
        disagree[0]
    );
    assert!(
        disagree[0].message.contains("p50_ttft_ms") || disagree[0].message.contains("mean_ttft_ms")
    );
    assert!(
        findings(&index, "not_recognised").is_empty(),
        "{:#?}",
        index.warnings
    );
}

/// Benchmark output saved as text that no reader reads is named with the tool it resembles; other texts are not.
#[test]
fn text_that_resembles_a_tools_output_is_named() {
    check("text-outputs");
    let index = index("text-outputs");
    let named: Vec<(String, String)> = findings(&index, "not_recognised")
        .into_iter()
        .map(|warning| {
            (
                warning.file.clone().unwrap_or_default(),
                warning.message.clone(),
            )
        })
        .collect();
    assert_eq!(named.len(), 3, "{named:#?}");
    for (file, resembles) in [
        ("llama-bench.txt", "llama.cpp's `llama-bench`"),
        ("guidellm.log", "GuideLLM's console summary"),
        ("vllm-serve-run.log", "vLLM's console output"),
    ] {
        assert!(
            named
                .iter()
                .any(|(named, message)| named == file && message.contains(resembles)),
            "{file}: {named:#?}"
        );
    }
    assert!(
        index
            .warnings
            .iter()
            .all(|warning| warning.file.as_deref() != Some("notes.txt"))
    );
}

/// AIPerf's per-request records under the summary's prefix are read; others beside a summary are named, not read,
/// and the file a summary reads is never named.
#[test]
fn aiperf_request_files_are_read_by_the_summarys_name_and_others_named() {
    check("aiperf-names");
    let index = index("aiperf-names");
    let named: Vec<&str> = findings(&index, "not_recognised")
        .into_iter()
        .filter_map(|warning| warning.file.as_deref())
        .collect();
    assert_eq!(
        named,
        ["artifacts/qwen3-8b-openai-chat-concurrency4/requests-rerun.jsonl"],
        "{:#?}",
        index.warnings
    );
    assert!(
        findings(&index, "no_request_file").is_empty(),
        "{:#?}",
        index.warnings
    );
    assert!(
        findings(&index, "duplicate_run_id").is_empty(),
        "{:#?}",
        index.warnings
    );
}

/// The engine's version and build a tool records reach the run's environment: SGLang's `server_info.version`, and
/// the image an llm-d report's engine component ran from (both as the fixture files write them).
#[test]
fn the_engines_version_and_build_are_the_runs_environment() {
    use cellscope_model::api::EnvironmentField;
    let sglang = index("sglang-detailed");
    assert!(!sglang.runs.is_empty());
    for run in &sglang.runs {
        assert_eq!(
            run.environment
                .get(&EnvironmentField::BackendVersion)
                .map(String::as_str),
            Some("0.5.5"),
            "{}",
            run.run_id
        );
    }
    let llmd = index("llmd-report-v02");
    assert!(!llmd.runs.is_empty());
    for run in &llmd.runs {
        assert_eq!(
            run.environment
                .get(&EnvironmentField::BackendCommit)
                .map(String::as_str),
            Some("ghcr.io/llm-d/llm-d-cuda:0.3.1"),
            "{}",
            run.run_id
        );
    }
}

//! Test support shared by the index's and the server's suites (the server's includes this file by its path, since
//! the two are separate crates and a support crate for a few helpers would be one more workspace member): the
//! fixture roots, copies of them, a FIFO, the generated demo data, and the numpy oracle of the format fixtures.

use cellscope_index::{Index, IndexOptions, Quiet, build};
use cellscope_model::{CellSummary, Load};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The bad-input fixtures, `data/fixtures/`.
pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures")
}

/// Copies every file and directory under `from` to the same place under `to`, which is made when missing.
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// A FIFO at `path`, by `mkfifo` (the tests have no libc of their own).
pub(crate) fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// The demo data root (default seed, scale 1), generated on first use under cargo's per-target temporary
/// directory (inside `target/`). A static is never dropped, so each binary instead removes what earlier test
/// processes that have ended left behind.
pub(crate) fn demo_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let parent = Path::new(env!("CARGO_TARGET_TMPDIR"));
        remove_stale_dirs(parent);
        let dir = parent.join(format!("demo-{}", std::process::id()));
        cellscope_demo::generate(
            &dir,
            &cellscope_demo::Options {
                seed: 164,
                scale: 1,
            },
        )
        .expect("demo data generates");
        dir
    })
}

/// Removes `demo-<pid>` and `cache-home-<pid>` directories of processes that no longer run.
pub(crate) fn remove_stale_dirs(parent: &Path) {
    // Without /proc (not Linux) liveness is unknown: leave everything.
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    if !Path::new("/proc/self").exists() {
        return;
    }
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name
            .strip_prefix("demo-")
            .or_else(|| name.strip_prefix("nightly-"))
            .or_else(|| name.strip_prefix("cache-home-"))
            && pid.parse::<u32>().is_ok()
            && !Path::new("/proc").join(pid).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The index of the demo data (hashes and backup diff included).
pub(crate) fn demo_index() -> &'static cellscope_index::Index {
    static INDEX: OnceLock<cellscope_index::Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        cellscope_index::build(
            demo_root(),
            &cellscope_index::IndexOptions::default(),
            &cellscope_index::Quiet,
        )
        .expect("demo data indexes")
    })
}

/// The files of `data/fixtures/not-recognised/` that no reader reads, with words each finding must carry: the
/// reader it came nearest to and what that reader looks for, written from the files and the readers' rules.
pub(crate) const NOT_RECOGNISED_FILES: [(&str, &[&str]); 4] = [
    (
        "chats/conversations.jsonl",
        &[
            "the nearest, vllm-bench, finds a JSON object without the keys of a vLLM result",
            "`model_id` and `num_prompts`",
        ],
    ),
    (
        "exports/host_metrics.csv",
        &[
            "the nearest, table, finds a table whose CSV header (`timestamp`, `host`, `cpu_percent`, `mem_mb`, \
             `gpu_util`) has none of the canonical columns",
            "no `[[table]]` entry of cellscope.toml names it",
        ],
    ),
    (
        "notes/summary.json",
        &[
            "it is a vLLM sweep's summary, its runs again, but no vllm-bench run was found at `notes`",
        ],
    ),
    (
        "unknown-tool/report.json",
        &["the nearest, vllm-bench, finds a JSON object without the keys of a vLLM result"],
    ),
];

/// The other tools' fixtures, `data/fixtures/formats/`.
pub(crate) fn format_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/formats")
}

/// The index of the format fixture `name`.
pub(crate) fn index(name: &str) -> Index {
    build(
        &format_fixtures().join(name),
        &IndexOptions::default(),
        &Quiet,
    )
    .expect("fixture indexes")
}

/// The numpy oracle's `<name>.expected.json`.
pub(crate) fn expected(name: &str) -> Json {
    let text = std::fs::read_to_string(format_fixtures().join(format!("{name}.expected.json")))
        .expect("expected file");
    serde_json::from_str(&text).expect("expected JSON")
}

/// The oracle's name for the tool's figure behind a cells-table column.
pub(crate) fn reported_name(column: &str) -> Option<&'static str> {
    Some(match column {
        "mean_wall_ms" => "mean_e2el_ms",
        "p50_wall_ms" => "median_e2el_ms",
        "p95_wall_ms" => "p95_e2el_ms",
        "p99_wall_ms" => "p99_e2el_ms",
        "p50_ttft_ms" => "median_ttft_ms",
        "p95_ttft_ms" => "p95_ttft_ms",
        "aggregate_tps" => "output_throughput",
        "mean_ttft_ms" => "mean_ttft_ms",
        "p99_ttft_ms" => "p99_ttft_ms",
        "mean_tpot_ms" => "mean_tpot_ms",
        "p50_tpot_ms" => "median_tpot_ms",
        "p95_tpot_ms" => "p95_tpot_ms",
        "p99_tpot_ms" => "p99_tpot_ms",
        "mean_itl_ms" => "mean_itl_ms",
        "p50_itl_ms" => "median_itl_ms",
        "p95_itl_ms" => "p95_itl_ms",
        "p99_itl_ms" => "p99_itl_ms",
        "request_throughput_rps" => "request_throughput",
        _ => return None,
    })
}

/// The value of a cells-table column, by the model's own column names.
pub(crate) fn column(cell: &CellSummary, name: &str) -> Option<f64> {
    cell.stats.column(name)
}

/// Equal to within a relative 1e-9 (absolute near zero).
pub(crate) fn close(left: f64, right: f64) -> bool {
    (left - right).abs() <= 1e-9 * left.abs().max(right.abs()).max(1.0)
}

/// Checks every expected cell of fixture `name` and that the index has no other cell.
pub(crate) fn check(name: &str) {
    let index = index(name);
    let expected = expected(name);
    let cells = expected["cells"].as_array().expect("cells");
    assert_eq!(
        index.cells.len(),
        cells.len(),
        "{name}: cells {:#?}\nwarnings {:#?}",
        index
            .cells
            .iter()
            .map(|cell| cell.key.to_string())
            .collect::<Vec<_>>(),
        index.warnings
    );
    let mut starts: std::collections::BTreeMap<String, Option<String>> = Default::default();
    for want in cells {
        let source = want["source"].as_str().expect("source");
        let record = want["record"].as_u64().expect("record") as u32;
        let (key, origin) = index
            .provenance
            .iter()
            .find_map(|(key, provenance)| {
                provenance
                    .origin
                    .as_ref()
                    .filter(|origin| origin.file == source && origin.record == record)
                    .map(|origin| (key, origin))
            })
            .unwrap_or_else(|| panic!("{name}: no cell from {source} record {record}"));
        let cell = index
            .cells
            .iter()
            .find(|cell| &cell.key == key)
            .expect("cell of the provenance key");
        let label = format!("{name} {source}#{record} ({key})");
        // A run starts at its records' earliest recorded time.
        let start = starts.entry(cell.key.run_id.clone()).or_default();
        if let Some(at) = want["started"].as_str()
            && start.as_deref().is_none_or(|earliest| at < earliest)
        {
            *start = Some(at.to_string());
        }
        if let Some(n) = want["n"].as_u64() {
            assert_eq!(cell.key.load, Load::Concurrency(n as u32), "{label}: n");
        } else if want.get("n").is_some_and(Json::is_null) {
            // No concurrency: the offered rate the oracle read, else no load at all.
            let load = match &want["rate_rps"] {
                Json::String(inf) if inf == "inf" => Load::rate(f64::INFINITY),
                rate => rate.as_f64().and_then(Load::rate),
            };
            assert_eq!(
                cell.key.load,
                load.unwrap_or(Load::Unstated),
                "{label}: load"
            );
        }
        if let Some(rep) = want["rep"].as_u64() {
            assert_eq!(u64::from(cell.key.rep), rep, "{label}: rep");
        }
        if let Some(config) = want["config"].as_object() {
            let want: Vec<(&str, &str)> = config
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str().expect("config value")))
                .collect::<std::collections::BTreeMap<_, _>>()
                .into_iter()
                .collect();
            let got: Vec<(&str, &str)> = cell.key.config.iter().collect();
            assert_eq!(got, want, "{label}: config");
        }
        assert_eq!(
            cell.key.model,
            want["model"].as_str().unwrap_or("unknown"),
            "{label}: model"
        );
        for (field, value) in [
            ("rows", cell.rows),
            ("ok_rows", cell.ok_rows),
            ("failed_rows", cell.failed_rows),
        ] {
            assert_eq!(
                u64::from(value),
                want[field].as_u64().expect(field),
                "{label}: {field}"
            );
        }
        for name in cellscope_model::origin::STAT_COLUMNS {
            let got = column(cell, name);
            match (want[name].as_f64(), got) {
                (Some(want), Some(got)) => {
                    assert!(close(want, got), "{label}: {name} {got} != {want}");
                }
                (None, None) => {}
                (None, Some(got)) => {
                    // A figure the requests cannot give is the tool's, and says so.
                    assert!(
                        cell.origin.is_reported(name),
                        "{label}: {name} = {got} is neither recomputed by the oracle nor marked reported"
                    );
                    // The tool's name for the figure, or (a table's) the cells-table column itself.
                    if let Some(reported) = reported_name(name)
                        .and_then(|key| want["reported"][key].as_f64())
                        .or_else(|| want["reported"][name].as_f64())
                    {
                        assert!(
                            close(reported, got),
                            "{label}: reported {name} {got} != {reported}"
                        );
                    }
                }
                (Some(want), None) => panic!("{label}: {name} missing, expected {want}"),
            }
        }
        let derived = want["wall_derived"].as_bool().unwrap_or(false) && cell.ok_rows > 0;
        assert_eq!(
            cell.origin.is_derived("p95_wall_ms"),
            derived,
            "{label}: wall derived"
        );
        if want["reported_only"].as_bool() == Some(true) {
            assert!(
                !cell.origin.reported.is_empty(),
                "{label}: an aggregate-only record shows reported figures"
            );
        }
        assert!(!origin.format.is_empty());
    }
    check_starts(name, &index, &starts);
    for bad in expected["bad"].as_array().into_iter().flatten() {
        let file = bad["file"].as_str().expect("file");
        let found = index.warnings.iter().any(|warning| {
            warning
                .file
                .as_deref()
                .is_some_and(|path| path.ends_with(file))
                && bad["line"]
                    .as_u64()
                    .is_none_or(|line| warning.line == Some(line))
        });
        assert!(
            found,
            "{name}: no warning for {file} ({}) among {:#?}",
            bad["problem"], index.warnings
        );
    }
}

/// Each run's start is the earliest its cells' records state by the oracle (Python's `datetime` on the file), read
/// from the file that states it; a run whose records state none has a start that does not claim to be recorded.
fn check_starts(
    name: &str,
    index: &Index,
    starts: &std::collections::BTreeMap<String, Option<String>>,
) {
    use cellscope_model::api::RunStartSource;
    for (run_id, want) in starts {
        let run = index
            .runs
            .iter()
            .find(|run| &run.run_id == run_id)
            .unwrap_or_else(|| panic!("{name}: no run {run_id}"));
        let started = run
            .started
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: run {run_id} has no start"));
        match want {
            Some(at) => {
                assert_eq!(&started.at, at, "{name}: run {run_id} start");
                assert!(
                    matches!(started.source, RunStartSource::Recorded { .. }),
                    "{name}: run {run_id}: {:?}",
                    started.source
                );
            }
            None => assert!(
                !matches!(started.source, RunStartSource::Recorded { .. }),
                "{name}: run {run_id} states no start, yet {started:?}"
            ),
        }
    }
}

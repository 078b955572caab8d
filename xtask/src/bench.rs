//! `cargo xtask bench …`: benchmarks that compare cellscope with a peer in the same run.
//!
//! `bench index` times the cold index of the V3 demo data (until `/api/cells` could answer) against pandas,
//! polars and DuckDB doing the same per-cell aggregation on the same two 94,500-row files, and checks that all
//! four agree on every number; then (`bench/vllm.rs`) the same against pandas and polars on a large vLLM sweep.
//!
//! `bench start` (`bench/start.rs`) times `serve` from start to its first `/api/cells`, cold and warm.
//!
//! `bench compare` times the Compare view's computation in headless Chromium (all cells, vllm vs sglang per
//! workload, five 10,000-resample bootstraps) against pandas + SciPy computing the same table, in alternating
//! runs, and checks that the peer's pair counts, means and p-values equal cellscope's.

mod scale;
mod start;
mod vllm;

use crate::demo::ensure_demo_data;
use crate::paired::{self, measured, median, number};
use crate::process::{self, output};
use crate::workspace_root;
use anyhow::{Context, bail};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Subcommand)]
pub(crate) enum Which {
    /// Cold index vs pandas, polars and DuckDB (TR164 CSV), then vs pandas and polars on a large vLLM sweep.
    Index {
        /// Paired runs (cellscope, pandas, polars, …, cellscope, …), each contender a fresh process.
        #[arg(long, default_value_t = 7)]
        runs: u32,
        /// Only one of the two benchmarks.
        #[arg(long, value_enum)]
        only: Option<IndexPart>,
    },
    /// The 10-million-row scale (`demo-data --scale 34`, generated once): cold index against the dataframe
    /// peers in paired runs, then a release server's first answer, peak RSS, `/api/cells` and `/api/requests`
    /// under load, and a restart.
    Scale {
        /// Paired runs of the cold index (cellscope, pandas, polars, duckdb, cellscope, …).
        #[arg(long, default_value_t = 7)]
        runs: u32,
        #[arg(long, default_value_t = 10)]
        seconds: u32,
        #[arg(long, default_value_t = 64)]
        connections: u32,
    },
    /// `/api/cells` under load (wrk), beside the same bytes served as a static file.
    Http {
        /// Rounds over every target (each target once per round, in the same order); the verdict is on the
        /// median p99, and every round's figures are printed.
        #[arg(long, default_value_t = 3)]
        runs: u32,
        #[arg(long, default_value_t = 10)]
        seconds: u32,
        #[arg(long, default_value_t = 64)]
        connections: u32,
        /// The server's `--http-threads` (default: the server's own default), to compare thread counts.
        #[arg(long)]
        http_threads: Option<u16>,
        /// wrk's threads (default: the cores the server's answering threads leave, at least one).
        #[arg(long)]
        wrk_threads: Option<u32>,
    },
    /// `serve` from start to its first `/api/cells` answer, cold and warm (the cache of read results).
    Start {
        /// Alternating cold and warm starts.
        #[arg(long, default_value_t = 7)]
        runs: u32,
        /// The data root (default: the demo data).
        #[arg(long)]
        data: Option<PathBuf>,
        /// Also time a warm restart to the app's first chart in headless Chromium, with and without the answers
        /// kept for a start.
        #[arg(long)]
        chart: bool,
    },
    /// The Compare view's computation in the browser vs pandas + SciPy.
    Compare {
        /// Alternating runs of each contender (browser, peer, browser, peer, …).
        #[arg(long, default_value_t = 7)]
        runs: u32,
        /// Computations timed within each run.
        #[arg(long, default_value_t = 11)]
        repeat: u32,
    },
}

/// The two halves of `bench index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum IndexPart {
    /// The V3 demo's TR164 CSV files against pandas, polars and DuckDB.
    Tr164,
    /// The large vLLM detailed-JSON sweep against pandas and polars.
    Vllm,
}

/// The dataframe peers of the TR164 benchmarks, in the order each pair runs them.
pub(crate) const PEERS: [&str; 3] = ["pandas", "polars", "duckdb"];
const PYTHON_PACKAGES: [&str; 6] = ["pandas", "polars", "duckdb", "pyarrow", "scipy", "orjson"];

pub(crate) fn run(which: Which) -> anyhow::Result<()> {
    match which {
        Which::Index { runs, only } => {
            if only != Some(IndexPart::Vllm) {
                index(runs)?;
            }
            if only != Some(IndexPart::Tr164) {
                vllm::index(runs)?;
            }
            Ok(())
        }
        Which::Http {
            runs,
            seconds,
            connections,
            http_threads,
            wrk_threads,
        } => http(runs, seconds, connections, http_threads, wrk_threads),
        Which::Scale {
            runs,
            seconds,
            connections,
        } => scale::scale(runs, seconds, connections),
        Which::Compare { runs, repeat } => compare_view(runs, repeat),
        Which::Start { runs, data, chart } => start::start(runs, data, chart),
    }
}

/// `bench compare`: the browser's Compare computation against pandas + SciPy, in alternating runs.
fn compare_view(runs: u32, repeat: u32) -> anyhow::Result<()> {
    let data = ensure_demo_data()?;
    crate::web::build(false)?;
    let bin = crate::e2e::release_server()?;
    crate::browser::ensure_installed()?;
    process::run(
        "cargo",
        &[
            "build",
            "--release",
            "-p",
            "cellscope-e2e",
            "--example",
            "bench_compare",
        ],
    )?;
    let example = crate::target_dir().join("release/examples/bench_compare");
    let python = python_with_peers()?;
    let out_dir = workspace_root().join("target/bench");
    std::fs::create_dir_all(&out_dir)?;
    let data_text = data.to_string_lossy().into_owned();
    let bin_text = bin.to_string_lossy().into_owned();
    let cells_csv = out_dir.join("compare-cells.csv");
    process::run(
        &bin_text,
        &[
            "cells",
            &data_text,
            "--format",
            "csv",
            "-o",
            &cells_csv.to_string_lossy(),
            "--no-cache",
        ],
    )?;
    // cellscope's own numbers for the same question, from the CLI (the same model code the browser runs).
    let ours: Value = serde_json::from_str(&output(
        &bin_text,
        &[
            "compare",
            &data_text,
            "--by",
            "backend",
            "--a",
            "vllm",
            "--b",
            "sglang",
            "--json",
            "--no-cache",
        ],
    )?)
    .context("reading `cellscope compare --json`")?;
    let env = crate::e2e::test_env(&bin, &data);
    let script = workspace_root().join("xtask/bench/compare_peer.py");
    let (browser_json, peer_json) = (
        out_dir.join("compare-browser.json"),
        out_dir.join("compare-peer.json"),
    );
    let repeat_text = repeat.to_string();
    let mut rows = Vec::new();
    let mut peer_version = String::new();
    let mut cells_text = String::new();
    for run in 1..=runs {
        process::run_with_env(
            &example.to_string_lossy(),
            &[&browser_json.to_string_lossy(), &repeat_text],
            &env,
        )?;
        process::run(
            &python.to_string_lossy(),
            &[
                &script.to_string_lossy(),
                &cells_csv.to_string_lossy(),
                &peer_json.to_string_lossy(),
                &repeat_text,
            ],
        )?;
        let browser: Value = serde_json::from_slice(&std::fs::read(&browser_json)?)?;
        let peer: Value = serde_json::from_slice(&std::fs::read(&peer_json)?)?;
        if run == 1 {
            check_peer_numbers(&ours, &peer)?;
        }
        let list = |value: &Value, key: &str, factor: f64| -> anyhow::Result<Vec<f64>> {
            value
                .get(key)
                .and_then(Value::as_array)
                .with_context(|| format!("`{key}` missing"))?
                .iter()
                .map(|x| x.as_f64().map(|x| x * factor).context("not a number"))
                .collect()
        };
        let mut browser_ms = list(&browser, "ms", 1.0)?;
        let mut peer_ms = list(&peer, "seconds", 1e3)?;
        peer_version = peer
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        cells_text = browser
            .get("cells")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        rows.push((
            browser_ms.clone(),
            peer_ms.clone(),
            median(&mut browser_ms),
            median(&mut peer_ms),
        ));
    }
    let mut table = format!(
        "Compare view computation, all {cells_text} cells (vllm vs sglang, efficiency, per workload: pairing, rep means, Wilcoxon, Holm, 5 × 10,000 bootstrap resamples)

| run | browser (cellscope, wasm) median of {repeat} | pandas + SciPy ({peer_version}) median of {repeat} | ratio | browser raw (ms) | peer raw (ms) |\n|---|---|---|---|---|---|\n"
    );
    let raw = |values: &[f64]| {
        values
            .iter()
            .map(|v| format!("{v:.1}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut ratios = Vec::new();
    let mut browser_medians = Vec::new();
    let mut peer_medians = Vec::new();
    for (index, (browser, peer, browser_median, peer_median)) in rows.iter().enumerate() {
        let ratio = browser_median / peer_median;
        ratios.push(ratio);
        browser_medians.push(*browser_median);
        peer_medians.push(*peer_median);
        table.push_str(&format!(
            "| {} | {browser_median:.1} ms | {peer_median:.1} ms | {ratio:.2} | {} | {} |\n",
            index + 1,
            raw(browser),
            raw(peer)
        ));
    }
    let browser_all = median(&mut browser_medians);
    table.push_str(&format!(
        "\nMedian over runs: browser {browser_all:.1} ms, peer {:.1} ms, ratio browser / peer {:.2}. Budget: ≤ 30 ms in the browser → {}.\n",
        median(&mut peer_medians),
        median(&mut ratios),
        if browser_all <= 30.0 { "met" } else { "not met" }
    ));
    std::fs::write(out_dir.join("compare.md"), &table)?;
    println!("{table}\n(written to target/bench/compare.md)");
    Ok(())
}

/// The peer must compute the same table: pair counts equal, means and p-values to 1e-9 relative.
fn check_peer_numbers(ours: &Value, peer: &Value) -> anyhow::Result<()> {
    let groups = ours
        .get("groups")
        .and_then(Value::as_array)
        .context("cellscope's groups")?;
    let theirs = peer
        .get("groups")
        .and_then(Value::as_array)
        .context("the peer's groups")?;
    anyhow::ensure!(
        groups.len() == theirs.len(),
        "{} groups vs the peer's {}",
        groups.len(),
        theirs.len()
    );
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300);
    for (group, peer) in groups.iter().zip(theirs) {
        let name = group.get("group").and_then(Value::as_str).unwrap_or("?");
        anyhow::ensure!(
            peer.get("group").and_then(Value::as_str) == Some(name),
            "group {name} vs the peer's {peer}"
        );
        anyhow::ensure!(
            group.get("n_pairs") == peer.get("n_pairs"),
            "{name}: n_pairs {:?} vs the peer's {:?}",
            group.get("n_pairs"),
            peer.get("n_pairs")
        );
        let p_value = group.pointer("/wilcoxon/p_value").and_then(Value::as_f64);
        for (what, ours, theirs) in [
            (
                "mean_delta",
                number(group, "mean_delta")?,
                number(peer, "mean_delta")?,
            ),
            (
                "median_delta",
                number(group, "median_delta")?,
                number(peer, "median_delta")?,
            ),
            (
                "p_value",
                p_value.context("p_value")?,
                number(peer, "p_value")?,
            ),
            ("holm_p", number(group, "holm_p")?, number(peer, "holm_p")?),
        ] {
            anyhow::ensure!(
                close(ours, theirs),
                "{name}: {what} {ours} vs the peer's {theirs}"
            );
        }
    }
    Ok(())
}

/// A Python virtual environment under `target/` with the peers installed from the package registry.
pub(crate) fn python_with_peers() -> anyhow::Result<PathBuf> {
    process::python_venv("bench-venv", &PYTHON_PACKAGES, &PYTHON_PACKAGES)
}

/// cellscope's cells keyed like the peers' (`run|suite|phase|backend|model|workload|n|rep`).
fn cells_by_key(ours: &[Value]) -> BTreeMap<String, &Value> {
    let mut by_key = BTreeMap::new();
    for cell in ours {
        let text = |name: &str| {
            cell.get(name)
                .map(|value| value.to_string().trim_matches('"').to_string())
                .unwrap_or_default()
        };
        let mut key = vec![text("run_id")];
        key.extend(
            ["suite", "phase", "backend", "model", "workload", "n", "rep"]
                .iter()
                .map(|name| text(name)),
        );
        by_key.insert(key.join("|"), cell);
    }
    by_key
}

/// The per-cell figures cellscope computes from TR164 rows that every peer computes too (`FIGURES` in
/// `bench/peers.py`), named as in cellscope's cells. ITL (not in these files), accelerator throughput (no
/// configuration) and the cross-cell efficiency and p95 multiplier are left out.
const TR164_FIGURES: [&str; 19] = [
    "mean_wall_ms",
    "p50_wall_ms",
    "p95_wall_ms",
    "p99_wall_ms",
    "mean_ttft_ms",
    "p50_ttft_ms",
    "p95_ttft_ms",
    "p99_ttft_ms",
    "mean_tpot_ms",
    "p50_tpot_ms",
    "p95_tpot_ms",
    "p99_tpot_ms",
    "mean_prompt_tokens",
    "mean_completion_tokens",
    "p50_interactivity_tps",
    "aggregate_tps",
    "total_tps",
    "request_throughput_rps",
    "goodput_rps",
];

/// Checks a peer's cells against cellscope's: every peer cell is one of cellscope's, with the same ok-row count
/// and every one of [`TR164_FIGURES`] within 1e-9 relative (missing in both, as null, is equal; missing in one
/// only is a mismatch); the peer has every cellscope cell of the files it read. Returns the largest relative
/// difference.
fn check_tr164(
    ours: &BTreeMap<String, &Value>,
    run_ids: &[String],
    peer: &Value,
) -> anyhow::Result<f64> {
    let cells = peer
        .get("cells")
        .and_then(Value::as_array)
        .context("peer cells")?;
    let mut worst: f64 = 0.0;
    for cell in cells {
        let file = cell
            .get("file")
            .and_then(Value::as_u64)
            .context("peer file index")? as usize;
        let mut key = vec![run_ids.get(file).context("peer file index")?.clone()];
        key.extend(
            cell.get("key")
                .and_then(Value::as_array)
                .context("peer key")?
                .iter()
                .map(|value| value.as_str().unwrap_or_default().to_string()),
        );
        let key = key.join("|");
        let Some(mine) = ours.get(&key) else {
            bail!("peer cell {key} is not in cellscope's cells");
        };
        // A missing figure is a null; a figure that is absent altogether is a fault of the output.
        let figure = |source: &Value, name: &str, whose: &str| -> anyhow::Result<Option<f64>> {
            match source.get(name) {
                Some(Value::Null) => Ok(None),
                Some(value) => value
                    .as_f64()
                    .map(Some)
                    .with_context(|| format!("{key}: {name} is {value} in {whose}")),
                None => bail!("{key}: {name} absent in {whose}"),
            }
        };
        for name in TR164_FIGURES {
            match (
                figure(mine, name, "cellscope")?,
                figure(cell, name, "the peer")?,
            ) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    let difference = (a - b).abs() / a.abs().max(b.abs()).max(1e-300);
                    if difference > 1e-9 {
                        bail!("{key}: {name} {a} in cellscope, {b} in the peer");
                    }
                    worst = worst.max(difference);
                }
                (a, b) => bail!("{key}: {name} {a:?} in cellscope, {b:?} in the peer"),
            }
        }
        if number(mine, "ok_rows")? != number(cell, "ok_rows")? {
            bail!("ok_rows differ for {key}");
        }
    }
    let expected = ours
        .values()
        .filter(|cell| {
            cell.get("run_id")
                .and_then(Value::as_str)
                .is_some_and(|run| run_ids.iter().any(|id| id == run))
                && number(cell, "ok_rows").is_ok_and(|rows| rows > 0.0)
        })
        .count();
    if cells.len() != expected {
        bail!(
            "the peer made {} cells, cellscope has {expected} with ok rows in the same runs",
            cells.len()
        );
    }
    Ok(worst)
}

/// The TR164 runs under `root` whose cells are in cellscope's main table, each with its metrics.csv: what the
/// peers read. (A refill run's rows are already spliced into its master's file, and a cells-only index does
/// not read backups.)
fn tr164_files(root: &Path, ours: &[Value]) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let run_ids: std::collections::BTreeSet<&str> = ours
        .iter()
        .filter_map(|cell| cell.get("run_id").and_then(Value::as_str))
        .collect();
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))?
        {
            let path = entry?.path();
            if !path.is_dir() {
                continue;
            }
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            if run_ids.contains(name.as_str()) && path.join("metrics.csv").is_file() {
                found.push((name, path.join("metrics.csv")));
            } else {
                pending.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// What a paired TR164 benchmark measured.
pub(crate) struct Tr164Report {
    pub table: String,
    /// Wall times of the full index (hashes and backup comparison), one per pair, when asked for.
    pub full_index_s: Vec<f64>,
    /// Median of cellscope's cells-only index, spawn to exit.
    pub median_cellscope_s: f64,
    pub median_ratio: f64,
    pub files: usize,
    pub bytes: u64,
    pub cells: usize,
}

/// cellscope's cells of `root` as JSON objects, written to `out_json` by a fresh `cellscope cells` process
/// without the cache (the checks compare every peer's numbers with these).
pub(crate) fn cellscope_cells(
    binary: &str,
    root: &str,
    out_json: &Path,
) -> anyhow::Result<Vec<Value>> {
    let out_text = out_json.to_string_lossy();
    process::run(
        binary,
        &[
            "cells",
            root,
            "--format",
            "json",
            "-o",
            &out_text,
            "--no-cache",
        ],
    )?;
    serde_json::from_slice(&std::fs::read(out_json)?)
        .with_context(|| format!("reading cellscope's cells from {}", out_json.display()))
}

/// `runs` paired runs on `root`: cellscope's cells-only index (spawn to exit), then each of `peers`
/// (`xtask/bench/peers.py`, a fresh Python process each), every peer run checked against cellscope's cells.
pub(crate) fn paired_tr164(
    binary: &str,
    root: &Path,
    peers: &[&str],
    runs: u32,
    full: bool,
    timed: u32,
) -> anyhow::Result<Tr164Report> {
    let out_dir = workspace_root().join("target/bench");
    std::fs::create_dir_all(&out_dir)?;
    let root_text = root.to_string_lossy().into_owned();
    let ours = cellscope_cells(binary, &root_text, &out_dir.join("tr164-cells.json"))?;
    let by_key = cells_by_key(&ours);
    let files = tr164_files(root, &ours)?;
    let run_ids: Vec<String> = files.iter().map(|(run, _)| run.clone()).collect();
    let bytes: u64 = files
        .iter()
        .filter_map(|(_, path)| std::fs::metadata(path).ok())
        .map(|metadata| metadata.len())
        .sum();
    let python = python_with_peers()?.to_string_lossy().into_owned();
    let script = workspace_root()
        .join("xtask/bench/peers.py")
        .to_string_lossy()
        .into_owned();
    let mut versions = vec![String::new(); peers.len()];
    let mut pairs = Vec::new();
    let mut full_index_s = Vec::new();
    for run in 1..=runs {
        eprintln!("paired run {run} of {runs}");
        let (mut pair, report) = paired::cellscope_index(binary, &root_text, timed)?;
        if number(&report, "cells")? as usize != ours.len() {
            bail!("cellscope index found {report}, `cells` {}", ours.len());
        }
        if full {
            full_index_s
                .push(measured(binary, &["index", &root_text, "--json", "--no-cache"])?.wall_s);
        }
        for (position, peer) in peers.iter().enumerate() {
            let peer_json = out_dir.join(format!("tr164-{peer}.json"));
            let peer_json_text = peer_json.to_string_lossy().into_owned();
            let timed_text = timed.to_string();
            let mut args = vec![
                script.as_str(),
                "--timed",
                &timed_text,
                peer,
                peer_json_text.as_str(),
            ];
            args.extend(files.iter().filter_map(|(_, path)| path.to_str()));
            let ran = paired::run_peer(&python, &args, &peer_json)?;
            check_tr164(&by_key, &run_ids, &ran.result)
                .with_context(|| format!("checking {peer}'s figures (run {run})"))?;
            versions[position] = ran.version;
            pair.peers.push((ran.seconds, ran.max_rss_kb));
            pair.peers_each.push(ran.seconds_each);
        }
        pairs.push(pair);
    }
    let peer_names: Vec<(String, String)> = peers
        .iter()
        .zip(versions)
        .map(|(peer, version)| (peer.to_string(), version))
        .collect();
    let (table, median_ratio) = paired::table(&peer_names, &pairs, 0.5);
    let mut cellscope_s: Vec<f64> = pairs.iter().map(|pair| pair.cellscope_wall_s).collect();
    Ok(Tr164Report {
        table,
        full_index_s,
        median_cellscope_s: median(&mut cellscope_s),
        median_ratio,
        files: files.len(),
        bytes,
        cells: ours.len(),
    })
}

/// How many times `bench index` times each side of a pair after its warm-up; the pair's figures are the medians.
/// One timed run each let a single slow moment of this shared machine decide a pair (single ratios of the same
/// code ranged from 0.35 to 0.51 in one invocation); the median of three on both sides keeps it like for like.
const INDEX_TIMED: u32 = 3;

fn index(runs: u32) -> anyhow::Result<()> {
    let demo = ensure_demo_data()?;
    let v3 = demo.join("tr164-v3");
    process::run("cargo", &["build", "--release", "-p", "cellscope"])?;
    let binary = workspace_root()
        .join("target/release/cellscope")
        .to_string_lossy()
        .into_owned();
    let report = paired_tr164(&binary, &v3, &PEERS, runs, true, INDEX_TIMED)?;
    let mut full = report.full_index_s.clone();
    let table = format!(
        "TR164 V3 demo data: cellscope indexes the run directories under `{}` (cells only: discover, parse, \
         statuses, metrics, efficiency, until /api/cells could answer); the peers read the {} metrics.csv files \
         whose cells are in the table ({:.1} MB), every per-cell figure checked against cellscope's to 1e-9.\n\n{}\n\
         The full index (the above + md5/sha256 of every metrics.csv + row-by-row backup comparison) took a median \
         of {:.1} ms (spawn to exit) over the same runs.\n",
        v3.strip_prefix(workspace_root()).unwrap_or(&v3).display(),
        report.files,
        report.bytes as f64 / 1e6,
        report.table,
        median(&mut full) * 1e3,
    );
    let out_dir = workspace_root().join("target/bench");
    std::fs::write(out_dir.join("index.md"), &table)?;
    println!(
        "{table}\n(written to target/bench/index.md; {} cells)",
        report.cells
    );
    Ok(())
}

/// A free loopback port (bound, then released for the server to take).
pub(crate) fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Installs Debian's `wrk` when missing (the load generator; nothing is downloaded at run time otherwise).
pub(crate) fn ensure_wrk() -> anyhow::Result<()> {
    if std::process::Command::new("wrk")
        .arg("--version")
        .output()
        .is_ok()
    {
        return Ok(());
    }
    process::run("apt-get", &["update"])?;
    process::run("apt-get", &["install", "-y", "wrk"])
}

/// wrk's threads by default: the cores the server's answering threads (`--http-threads`, by default one fewer
/// than the cores) leave, at least one. On this machine's 2 cores that is one each. Two wrk threads beside the
/// server's one put three busy threads on two cores, and the p99 then measures how long the scheduler leaves one
/// of them waiting (about a time slice) more than the server, which hides changes of the server's own cost. (The server's default is its own rule, `default_http_threads`; the xtask links no workspace crate.)
pub(crate) fn default_wrk_threads(http_threads: Option<u16>) -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let answering = http_threads.map_or(cores.saturating_sub(1).max(1), usize::from);
    u32::try_from(cores.saturating_sub(answering).max(1)).unwrap_or(1)
}

/// wrk's figures: requests/s, p50 and p99 latency in ms, errors (socket errors + non-2xx). `script` is a Lua
/// file that chooses each request.
pub(crate) fn wrk(
    url: &str,
    accept_encoding: Option<&str>,
    (threads, seconds, connections): (u32, u32, u32),
    script: Option<&str>,
) -> anyhow::Result<(f64, f64, f64, u64, String)> {
    let duration = format!("{seconds}s");
    let connections_text = connections.to_string();
    let threads_text = threads.to_string();
    let header = accept_encoding.map(|encoding| format!("Accept-Encoding: {encoding}"));
    let mut args = vec![
        "--latency",
        "-t",
        &threads_text,
        "-c",
        &connections_text,
        "-d",
        &duration,
    ];
    if let Some(header) = &header {
        args.extend(["-H", header]);
    }
    if let Some(script) = script {
        args.extend(["-s", script]);
    }
    args.push(url);
    let text = output("wrk", &args)?;
    let mut requests_per_s = 0.0;
    let (mut p50, mut p99, mut errors) = (0.0, 0.0, 0u64);
    let to_ms = |value: &str| -> f64 {
        let (number, unit) = value.split_at(
            value
                .find(|c: char| c.is_ascii_alphabetic())
                .unwrap_or(value.len()),
        );
        let number: f64 = number.parse().unwrap_or(f64::NAN);
        match unit {
            "us" => number / 1000.0,
            "ms" => number,
            "s" => number * 1000.0,
            _ => f64::NAN,
        }
    };
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["Requests/sec:", value] => requests_per_s = value.parse().unwrap_or(0.0),
            ["50%", value] => p50 = to_ms(value),
            ["99%", value] => p99 = to_ms(value),
            ["Non-2xx", "or", "3xx", "responses:", count] => {
                errors += count.parse::<u64>().unwrap_or(0)
            }
            ["Socket", "errors:", rest @ ..] => {
                errors += rest
                    .iter()
                    .filter_map(|word| word.trim_end_matches(',').parse::<u64>().ok())
                    .sum::<u64>();
            }
            _ => {}
        }
    }
    Ok((requests_per_s, p50, p99, errors, text))
}

/// The targets of `bench http`: (label, path, `Accept-Encoding`).
const HTTP_TARGETS: [(&str, &str, Option<&str>); 5] = [
    ("GET /api/cells, identity", "/api/cells", None),
    (
        "same bytes as a static file (tower-http ServeDir), identity",
        "/bench-static/cells.arrow",
        None,
    ),
    ("GET /api/cells, zstd", "/api/cells", Some("zstd")),
    (
        "same bytes as a static file (tower-http ServeDir), zstd",
        "/bench-static/cells.arrow",
        Some("zstd"),
    ),
    // A slice: built and compressed on its first request, then served from the snapshot's bodies.
    (
        "GET /api/cells?backend=vllm&workload=long_decode, zstd",
        "/api/cells?backend=vllm&workload=long_decode",
        Some("zstd"),
    ),
];

/// One wrk round of one target: requests/s, p50 (ms), p99 (ms) and errors.
type Round = (f64, f64, f64, u64);

/// How `bench http` loads the server: rounds, seconds per target and round, connections, the server's answering
/// threads (its default when `None`) and wrk's threads.
#[derive(Clone, Copy)]
struct HttpLoad {
    runs: u32,
    seconds: u32,
    connections: u32,
    http_threads: Option<u16>,
    wrk_threads: u32,
}

/// `/api/cells` (V3 demo data, 1,800 cells) under 64 connections for 10 s, beside the same bytes served as a
/// static file by the same server; `runs` rounds over every target, the verdict on the median.
fn http(
    runs: u32,
    seconds: u32,
    connections: u32,
    http_threads: Option<u16>,
    wrk_threads: Option<u32>,
) -> anyhow::Result<()> {
    let load = HttpLoad {
        runs: runs.max(1),
        seconds,
        connections,
        http_threads,
        wrk_threads: wrk_threads.unwrap_or_else(|| default_wrk_threads(http_threads)),
    };
    let demo = ensure_demo_data()?;
    let v3 = demo.join("tr164-v3");
    ensure_wrk()?;
    process::run("cargo", &["build", "--release", "-p", "cellscope"])?;
    let binary = workspace_root().join("target/release/cellscope");
    let out_dir = workspace_root().join("target/bench");
    let static_dir = out_dir.join("static");
    std::fs::create_dir_all(&static_dir)?;
    let port = free_port()?;
    let addr = format!("127.0.0.1:{port}");
    let mut server = std::process::Command::new(&binary)
        .args([
            "serve",
            &v3.to_string_lossy(),
            "--addr",
            &addr,
            "--bench-static",
            &static_dir.to_string_lossy(),
            "--no-cache",
        ])
        .args(
            http_threads
                .map(|threads| vec!["--http-threads".to_string(), threads.to_string()])
                .unwrap_or_default(),
        )
        .env("CELLSCOPE_LOG", "warn")
        .spawn()
        .context("starting cellscope serve")?;
    let result = http_table(&addr, &static_dir, load);
    let _ = server.kill();
    let _ = server.wait();
    let table = result?;
    std::fs::write(out_dir.join("http.md"), &table)?;
    println!("{table}\n(written to target/bench/http.md)");
    Ok(())
}

/// Waits for the server at `addr` to settle, copies its cells table into `static_dir` for the static-file peer,
/// and measures every target: the table of `bench http`.
fn http_table(addr: &str, static_dir: &Path, load: HttpLoad) -> anyhow::Result<String> {
    // Wait for the server, and for its second indexing stage, so the load test measures a settled server.
    let started = std::time::Instant::now();
    loop {
        if let Ok(body) = output("curl", &["-sf", &format!("http://{addr}/api/index")])
            && body.contains("\"complete\":true")
        {
            break;
        }
        if started.elapsed().as_secs() > 60 {
            bail!("the server did not come up within 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let cells_file = static_dir.join("cells.arrow");
    process::run(
        "curl",
        &[
            "-sf",
            "-o",
            &cells_file.to_string_lossy(),
            &format!("http://{addr}/api/cells"),
        ],
    )?;
    let bytes = std::fs::metadata(&cells_file)?.len();
    let zstd_bytes = output(
        "sh",
        &[
            "-c",
            &format!("curl -sf -H 'Accept-Encoding: zstd' http://{addr}/api/cells | wc -c"),
        ],
    )?
    .trim()
    .to_string();
    let mut table = http_table_head(load, bytes, &zstd_bytes);
    let rounds = http_rounds(addr, load)?;
    for ((label, path, encoding), figures) in HTTP_TARGETS.iter().zip(&rounds) {
        table.push_str(&http_table_row(label, path, encoding.is_some(), figures));
    }
    Ok(table)
}

/// The sentence above the table (the command, the load, the body sizes) and the table's header.
fn http_table_head(load: HttpLoad, bytes: u64, zstd_bytes: &str) -> String {
    let HttpLoad {
        runs,
        seconds,
        connections,
        http_threads,
        wrk_threads,
    } = load;
    let threads_flag = http_threads
        .map(|threads| format!(" --http-threads {threads}"))
        .unwrap_or_default()
        + &if wrk_threads == default_wrk_threads(http_threads) {
            String::new()
        } else {
            format!(" --wrk-threads {wrk_threads}")
        };
    let threads_text = http_threads.map_or_else(
        || "its default answering threads".to_string(),
        |threads| format!("{threads} answering threads"),
    );
    format!(
        "`cargo xtask bench http --runs {runs}{threads_flag}`: wrk -t {wrk_threads} -c {connections} -d {seconds}s --latency, server ({threads_text}) and wrk on this machine's 2 cores, body {bytes} bytes (1,800 cells, Arrow IPC); `zstd` rows send `Accept-Encoding: zstd` (cellscope answers from its per-snapshot precompressed body, {zstd_bytes} bytes; the static file is compressed per request by tower-http). {runs} rounds, each target once per round in the order below; medians over the rounds, every round's p99 in the last column but one.\n\n| target | requests/s | p50 | p99 | errors | p99 of each round | budget |\n|---|---|---|---|---|---|---|\n"
    )
}

/// Every round of every target, each target once per round in the order of [`HTTP_TARGETS`].
fn http_rounds(addr: &str, load: HttpLoad) -> anyhow::Result<Vec<Vec<Round>>> {
    let mut rounds: Vec<Vec<Round>> = vec![Vec::new(); HTTP_TARGETS.len()];
    for round in 1..=load.runs {
        for ((label, path, encoding), figures) in HTTP_TARGETS.iter().zip(&mut rounds) {
            eprintln!("round {round} of {}: {label}", load.runs);
            let (requests_per_s, p50, p99, errors, raw) = wrk(
                &format!("http://{addr}{path}"),
                *encoding,
                (load.wrk_threads, load.seconds, load.connections),
                None,
            )?;
            eprintln!("{raw}");
            figures.push((requests_per_s, p50, p99, errors));
        }
    }
    Ok(rounds)
}

/// One target's row: the medians over its rounds, the errors of all, every round's p99 and the verdict.
fn http_table_row(label: &str, path: &str, compressed: bool, figures: &[Round]) -> String {
    let column =
        |pick: fn(&Round) -> f64| median(&mut figures.iter().map(pick).collect::<Vec<f64>>());
    let (requests_per_s, p50, p99) = (
        column(|figure| figure.0),
        column(|figure| figure.1),
        column(|figure| figure.2),
    );
    let errors: u64 = figures.iter().map(|figure| figure.3).sum();
    let each = figures
        .iter()
        .map(|figure| format!("{:.2}", figure.2))
        .collect::<Vec<_>>()
        .join(", ");
    // The budget (median p99 ≤ 5 ms, no errors in any round) is for the API's compressed bodies, not the
    // static-file peer.
    let budget = if path.starts_with("/api/") && compressed {
        if p99 <= 5.0 && errors == 0 {
            "median p99 ≤ 5 ms, 0 errors: met"
        } else {
            "median p99 ≤ 5 ms, 0 errors: **not met**"
        }
    } else {
        "—"
    };
    format!(
        "| {label} | {requests_per_s:.0} | {p50:.2} ms | {p99:.2} ms | {errors} | {each} ms | {budget} |\n"
    )
}

//! `cargo xtask bench …`: benchmarks that compare cellscope with a peer in the same run.
//!
//! `bench index` times the cold index of the V3 demo data (until `/api/cells` could answer) against pandas,
//! polars and DuckDB doing the same per-cell aggregation on the same two 94,500-row files, and checks that all
//! four agree on every number; then (`bench_vllm.rs`) the same against pandas and polars on a large vLLM sweep.
//!
//! `bench start` (`bench_start.rs`) times `serve` from start to its first `/api/cells`, cold and warm.
//!
//! `bench compare` times the Compare view's computation in headless Chromium (all cells, vllm vs sglang per
//! workload, five 10,000-resample bootstraps) against pandas + SciPy computing the same table, in alternating
//! runs, and checks that the peer's pair counts, means and p-values equal cellscope's.

use crate::process::{self, output};
use crate::workspace_root;
use anyhow::{Context, bail};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Subcommand)]
pub enum Which {
    /// Cold index vs pandas, polars and DuckDB (TR164 CSV), then vs pandas and polars on a large vLLM sweep.
    Index {
        /// Repetitions per contender on the TR164 data (the median and the fastest are reported).
        #[arg(long, default_value_t = 7)]
        repeat: u32,
        /// Paired runs on the vLLM sweep (cellscope, pandas, polars, cellscope, …), each in a fresh process.
        #[arg(long, default_value_t = 7)]
        runs: u32,
        /// Only one of the two benchmarks.
        #[arg(long, value_enum)]
        only: Option<IndexPart>,
    },
    /// `/api/cells` under load (wrk), beside the same bytes served as a static file.
    Http {
        #[arg(long, default_value_t = 10)]
        seconds: u32,
        #[arg(long, default_value_t = 64)]
        connections: u32,
    },
    /// `serve` from start to its first `/api/cells` answer, cold and warm (the cache of read results).
    Start {
        /// Alternating cold and warm starts.
        #[arg(long, default_value_t = 7)]
        runs: u32,
        /// The data root (default: the demo data).
        #[arg(long)]
        data: Option<PathBuf>,
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
pub enum IndexPart {
    /// The V3 demo's TR164 CSV files against pandas, polars and DuckDB.
    Tr164,
    /// The large vLLM detailed-JSON sweep against pandas and polars.
    Vllm,
}

const V3_RUNS: [&str; 2] = ["20260612_204254_036590", "20260612_212816_266127"];
const PYTHON_PACKAGES: [&str; 6] = ["pandas", "polars", "duckdb", "pyarrow", "scipy", "orjson"];

pub fn run(which: Which) -> anyhow::Result<()> {
    match which {
        Which::Index { repeat, runs, only } => {
            if only != Some(IndexPart::Vllm) {
                index(repeat)?;
            }
            if only != Some(IndexPart::Tr164) {
                crate::bench_vllm::index(runs)?;
            }
            Ok(())
        }
        Which::Http {
            seconds,
            connections,
        } => http(seconds, connections),
        Which::Compare { runs, repeat } => compare_view(runs, repeat),
        Which::Start { runs, data } => crate::bench_start::start(runs, data),
    }
}

pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
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
        "\nMedian over runs: browser {browser_all:.1} ms, peer {:.1} ms, ratio browser / peer {:.2}. Budget (issue 10): ≤ 30 ms in the browser → {}.\n",
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

/// The demo data root, generated when absent.
pub fn ensure_demo_data() -> anyhow::Result<PathBuf> {
    let demo = workspace_root().join("data/demo");
    if !demo
        .join("tr164-v3")
        .join(V3_RUNS[1])
        .join("metrics.csv")
        .is_file()
    {
        crate::demo_data(Path::new("data/demo"), 164, 1)?;
    }
    Ok(demo)
}

/// A Python virtual environment under `target/` with the peers installed from the package registry.
pub(crate) fn python_with_peers() -> anyhow::Result<PathBuf> {
    let venv = workspace_root().join("target/bench-venv");
    let python = venv.join("bin/python");
    if !python.is_file() {
        process::run("python3", &["-m", "venv", &venv.to_string_lossy()])?;
    }
    let python_text = python.to_string_lossy().into_owned();
    let check = format!("import {}", PYTHON_PACKAGES.join(", "));
    if output(&python_text, &["-c", &check]).is_err() {
        let mut args = vec!["-m", "pip", "install", "--quiet"];
        args.extend(PYTHON_PACKAGES);
        process::run(&python_text, &args)?;
    }
    Ok(python)
}

fn cellscope_index(
    binary: &str,
    root: &str,
    repeat: u32,
    cells_only: bool,
) -> anyhow::Result<Value> {
    let repeat = repeat.to_string();
    // Cold: the cache of read results would time a warm start instead, and the user's cache is left alone.
    let mut args = vec!["index", root, "--repeat", &repeat, "--json", "--no-cache"];
    if cells_only {
        args.push("--cells-only");
    }
    let text = output(binary, &args)?;
    serde_json::from_str(text.trim()).context("reading `cellscope index --json`")
}

pub(crate) fn number(value: &Value, key: &str) -> anyhow::Result<f64> {
    value
        .get(key)
        .and_then(Value::as_f64)
        .with_context(|| format!("`{key}` missing in {value}"))
}

/// Largest relative difference between cellscope's cells and a peer's, over the cells both have.
fn compare(ours: &[Value], peer: &Value) -> anyhow::Result<(usize, f64)> {
    let key_of = |run: &str, key: &[String]| format!("{run}|{}", key.join("|"));
    let mut by_key: BTreeMap<String, &Value> = BTreeMap::new();
    for cell in ours {
        let text = |name: &str| {
            cell.get(name)
                .map(|value| value.to_string().trim_matches('"').to_string())
                .unwrap_or_default()
        };
        let key: Vec<String> = ["suite", "phase", "backend", "model", "workload", "n", "rep"]
            .iter()
            .map(|name| text(name))
            .collect();
        by_key.insert(key_of(&text("run_id"), &key), cell);
    }
    let mut matched = 0;
    let mut worst: f64 = 0.0;
    for cell in peer
        .get("cells")
        .and_then(Value::as_array)
        .context("peer cells")?
    {
        let file = cell
            .get("file")
            .and_then(Value::as_u64)
            .context("peer file index")? as usize;
        let key: Vec<String> = cell
            .get("key")
            .and_then(Value::as_array)
            .context("peer key")?
            .iter()
            .map(|value| value.as_str().unwrap_or_default().to_string())
            .collect();
        let Some(ours) = by_key.get(&key_of(V3_RUNS[file], &key)) else {
            bail!(
                "peer cell {key:?} of {} is not in cellscope's cells",
                V3_RUNS[file]
            );
        };
        for name in ["p50_wall_ms", "p95_wall_ms", "p99_wall_ms", "aggregate_tps"] {
            let (a, b) = (number(ours, name)?, number(cell, name)?);
            worst = worst.max((a - b).abs() / b.abs().max(1e-300));
        }
        if number(ours, "ok_rows")? != number(cell, "ok_rows")? {
            bail!("ok_rows differ for {key:?}");
        }
        matched += 1;
    }
    Ok((matched, worst))
}

fn index(repeat: u32) -> anyhow::Result<()> {
    let demo = ensure_demo_data()?;
    let v3 = demo.join("tr164-v3");
    let files: Vec<String> = V3_RUNS
        .iter()
        .map(|run| {
            v3.join(run)
                .join("metrics.csv")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    process::run("cargo", &["build", "--release", "-p", "cellscope"])?;
    let binary = workspace_root()
        .join("target/release/cellscope")
        .to_string_lossy()
        .into_owned();
    let python = python_with_peers()?;
    let out_dir = workspace_root().join("target/bench");
    std::fs::create_dir_all(&out_dir)?;
    let peers_json = out_dir.join("peers.json");
    let script = workspace_root().join("xtask/bench/peers.py");
    let repeat_text = repeat.to_string();
    let mut args = vec![
        script.to_string_lossy().into_owned(),
        peers_json.to_string_lossy().into_owned(),
        repeat_text,
    ];
    args.extend(files.iter().cloned());
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    process::run(&python.to_string_lossy(), &arg_refs)?;
    let peers: Value =
        serde_json::from_slice(&std::fs::read(&peers_json)?).context("reading peers.json")?;

    let v3_text = v3.to_string_lossy().into_owned();
    let cells_only = cellscope_index(&binary, &v3_text, repeat, true)?;
    let full = cellscope_index(&binary, &v3_text, repeat, false)?;
    let cells_json = out_dir.join("cells.json");
    process::run(
        &binary,
        &[
            "cells",
            &v3_text,
            "--format",
            "json",
            "-o",
            &cells_json.to_string_lossy(),
            "--no-cache",
        ],
    )?;
    let ours: Vec<Value> =
        serde_json::from_slice(&std::fs::read(&cells_json)?).context("reading cells.json")?;

    let mut table = String::from(
        "| contender | what it does | median | fastest | cells | max rel. diff vs cellscope |\n|---|---|---|---|---|---|\n",
    );
    let ms = |seconds: f64| format!("{:.1} ms", seconds * 1e3);
    table.push_str(&format!(
        "| cellscope (cells only) | index until /api/cells can answer: discover, parse 2 masters + refill run, statuses, metrics, efficiency | {} | {} | {} | — |\n",
        ms(number(&cells_only, "median_s")?),
        ms(number(&cells_only, "min_s")?),
        number(&cells_only, "cells")?
    ));
    table.push_str(&format!(
        "| cellscope (full) | the above + md5/sha256 of every metrics.csv + row-by-row backup diff (94,500 more rows) | {} | {} | {} | — |\n",
        ms(number(&full, "median_s")?),
        ms(number(&full, "min_s")?),
        number(&full, "cells")?
    ));
    let mut fastest_peer = f64::INFINITY;
    for (name, peer) in peers
        .get("peers")
        .and_then(Value::as_object)
        .context("peers")?
    {
        let (matched, worst) =
            compare(&ours, peer).with_context(|| format!("checking {name}'s numbers"))?;
        let median = number(peer, "median_s")?;
        fastest_peer = fastest_peer.min(median);
        table.push_str(&format!(
            "| {name} {} | read both CSVs, filter ok non-sentinel rows, group by cell, p50/p95/p99 wall_ms + aggregate tps | {} | {} | {matched} | {worst:.1e} |\n",
            peer.get("version").and_then(Value::as_str).unwrap_or("?"),
            ms(median),
            ms(number(peer, "min_s")?)
        ));
    }
    let ours_median = number(&cells_only, "median_s")?;
    let verdict = format!(
        "\nBudget (product.md): cellscope ≤ half the fastest peer. Fastest peer median {}, half {}; cellscope (cells only) median {} → {}.\n",
        ms(fastest_peer),
        ms(fastest_peer / 2.0),
        ms(ours_median),
        if ours_median <= fastest_peer / 2.0 {
            "within budget"
        } else {
            "over budget"
        }
    );
    table.push_str(&verdict);
    std::fs::write(out_dir.join("index.md"), &table)?;
    println!("{table}\n(written to target/bench/index.md)");
    Ok(())
}

/// A free loopback port (bound, then released for the server to take).
fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Installs Debian's `wrk` when missing (the load generator; nothing is downloaded at run time otherwise).
fn ensure_wrk() -> anyhow::Result<()> {
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

/// wrk's figures: requests/s, p50 and p99 latency in ms, errors (socket errors + non-2xx).
fn wrk(
    url: &str,
    accept_encoding: Option<&str>,
    seconds: u32,
    connections: u32,
) -> anyhow::Result<(f64, f64, f64, u64, String)> {
    let duration = format!("{seconds}s");
    let connections_text = connections.to_string();
    let header = accept_encoding.map(|encoding| format!("Accept-Encoding: {encoding}"));
    let mut args = vec![
        "--latency",
        "-t",
        "2",
        "-c",
        &connections_text,
        "-d",
        &duration,
    ];
    if let Some(header) = &header {
        args.extend(["-H", header]);
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

/// `/api/cells` (V3 demo data, 1,800 cells) under 64 connections for 10 s, beside the same bytes served as a
/// static file by the same server.
fn http(seconds: u32, connections: u32) -> anyhow::Result<()> {
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
        .env("CELLSCOPE_LOG", "warn")
        .spawn()
        .context("starting cellscope serve")?;
    let result = (|| -> anyhow::Result<String> {
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
        let mut table = format!(
            "`cargo xtask bench http`: wrk -t 2 -c {connections} -d {seconds}s --latency, server and wrk on this machine's 2 cores, body {bytes} bytes (1,800 cells, Arrow IPC); `zstd` rows send `Accept-Encoding: zstd` (cellscope answers from its per-snapshot precompressed body, {zstd_bytes} bytes; the static file is compressed per request by tower-http).\n\n| target | requests/s | p50 | p99 | errors |\n|---|---|---|---|---|\n"
        );
        for (label, path, encoding) in [
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
        ] {
            let (requests_per_s, p50, p99, errors, raw) = wrk(
                &format!("http://{addr}{path}"),
                encoding,
                seconds,
                connections,
            )?;
            eprintln!("{raw}");
            table.push_str(&format!(
                "| {label} | {requests_per_s:.0} | {p50:.2} ms | {p99:.2} ms | {errors} |\n"
            ));
        }
        Ok(table)
    })();
    let _ = server.kill();
    let _ = server.wait();
    let table = result?;
    std::fs::write(out_dir.join("http.md"), &table)?;
    println!("{table}\n(written to target/bench/http.md)");
    Ok(())
}

//! `cargo xtask bench index`, second half: cellscope's cold index of a large `vllm bench serve --save-detailed`
//! sweep (over a million requests in 144 one-line JSON files, generated once under `target/bench/vllm-large/`)
//! against pandas and polars computing the same per-file figures from the same files.
//!
//! Runs alternate (cellscope, pandas, polars, cellscope, …), each a fresh process: cellscope's is
//! `cellscope index ROOT --cells-only --json`, timed from spawn to exit; the peers' (`xtask/bench/peers_vllm.py`)
//! are timed inside the process after their imports. Every run of every peer is checked, cell by cell, against
//! cellscope's `cells --format json` to 1e-9 relative. Peak RSS comes from the kernel's accounting of each child.

use crate::bench::python_with_peers;
use crate::paired;
use crate::paired::number;
use crate::process;
use crate::workspace_root;
use anyhow::{Context, bail};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The demo seed the sweep is generated from.
const SEED: u64 = 164;
const PEERS: [&str; 2] = ["pandas", "polars"];
/// Largest relative difference accepted between a peer's figure and cellscope's.
const TOLERANCE: f64 = 1e-9;

/// The generated sweep: its data root and, per file, the cell it holds.
struct Sweep {
    root: PathBuf,
    files: Vec<Value>,
}

impl Sweep {
    fn total(&self, field: &str) -> u64 {
        self.files
            .iter()
            .filter_map(|file| file.get(field).and_then(Value::as_u64))
            .sum()
    }
}

/// The sweep under `target/bench/vllm-large/`, generated when its file list is absent (written last, so an
/// interrupted generation is redone).
fn ensure_sweep() -> anyhow::Result<Sweep> {
    let dir = workspace_root().join("target/bench/vllm-large");
    let root = dir.join("data");
    let list = dir.join("files.json");
    if !list.is_file() || !root.is_dir() {
        eprintln!(
            "generating the vLLM sweep in {} (once; about a gigabyte)",
            root.display()
        );
        let _ = std::fs::remove_file(&list);
        crate::demo::vllm_sweep(&root, &list, SEED)?;
    }
    let files: Vec<Value> = serde_json::from_slice(&std::fs::read(&list)?)
        .with_context(|| format!("reading {}", list.display()))?;
    Ok(Sweep { root, files })
}

/// The cell key of a file of the sweep (as listed when it was generated) or of a cellscope cell.
fn key_of(value: &Value) -> String {
    let text = |name: &str| match value.get(name) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    ["backend", "model", "workload", "n", "rep"]
        .map(text)
        .join("|")
}

/// The statistics of a cell of cellscope's `cells --format json`: its columns that carry a unit in their name
/// (`_ms`, `_tokens`, `_tps`, `_rps`), which are exactly the figures computed from request rows; the counts,
/// concurrency and ratios (`rows`, `n`, `efficiency`, …) carry none. Taken from cellscope's own output, so a
/// statistic added to the cells table is checked against every peer without a list here to keep in step. A
/// statistic cellscope left empty is still named, so that the check requires the peer to leave it empty too
/// rather than passing it over.
fn statistics(cell: &Value) -> Vec<&str> {
    cell.as_object()
        .into_iter()
        .flatten()
        .map(|(name, _)| name.as_str())
        .filter(|name| {
            ["_ms", "_tokens", "_tps", "_rps"]
                .iter()
                .any(|unit| name.ends_with(unit))
        })
        .collect()
}

/// A figure of a cell: `None` where it is null; an error where it is absent or not a number.
fn nullable(cell: &Value, name: &str) -> anyhow::Result<Option<f64>> {
    match cell.get(name) {
        Some(Value::Null) => Ok(None),
        _ => number(cell, name).map(Some),
    }
}

/// Checks a peer's cells against cellscope's: every file of the sweep once, the same request counts, every figure
/// within [`TOLERANCE`] (empty in both, as null, is equal; empty in one only is a mismatch). Returns the largest
/// relative difference.
fn check(sweep: &Sweep, ours: &BTreeMap<String, &Value>, peer: &Value) -> anyhow::Result<f64> {
    let by_path: BTreeMap<&str, &Value> = sweep
        .files
        .iter()
        .filter_map(|file| Some((file.get("path")?.as_str()?, file)))
        .collect();
    let cells = peer
        .get("cells")
        .and_then(Value::as_array)
        .context("the peer's cells")?;
    if cells.len() != sweep.files.len() {
        bail!(
            "{} cells from the peer, {} files in the sweep",
            cells.len(),
            sweep.files.len()
        );
    }
    let mut worst: f64 = 0.0;
    for cell in cells {
        let path = cell
            .get("path")
            .and_then(Value::as_str)
            .context("a peer cell without its path")?;
        let file = by_path
            .get(path)
            .with_context(|| format!("the peer read {path}, which is not in the sweep"))?;
        let key = key_of(file);
        let mine = ours
            .get(&key)
            .with_context(|| format!("cellscope has no cell {key} ({path})"))?;
        for count in ["rows", "ok_rows"] {
            let (a, b) = (number(mine, count)?, number(cell, count)?);
            if a != b {
                bail!("{path}: {count} {a} in cellscope, {b} in the peer");
            }
        }
        // Every statistic cellscope's cell carries, besides the request counts; one it cannot compute from these
        // files (throughput per accelerator, with no accelerator count) is null, and the peer must say so too.
        for figure in statistics(mine) {
            match (nullable(mine, figure)?, nullable(cell, figure)?) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    let difference = (a - b).abs() / a.abs().max(b.abs()).max(1e-300);
                    if difference > TOLERANCE {
                        bail!("{path}: {figure} {a} in cellscope, {b} in the peer");
                    }
                    worst = worst.max(difference);
                }
                (a, b) => bail!("{path}: {figure} {a:?} in cellscope, {b:?} in the peer"),
            }
        }
    }
    Ok(worst)
}

pub(super) fn index(runs: u32) -> anyhow::Result<()> {
    let sweep = ensure_sweep()?;
    process::run("cargo", &["build", "--release", "-p", "cellscope"])?;
    let binary = workspace_root()
        .join("target/release/cellscope")
        .to_string_lossy()
        .into_owned();
    let python = python_with_peers()?.to_string_lossy().into_owned();
    let script = workspace_root()
        .join("xtask/bench/peers_vllm.py")
        .to_string_lossy()
        .into_owned();
    let out_dir = workspace_root().join("target/bench");
    std::fs::create_dir_all(&out_dir)?;
    let root = sweep.root.to_string_lossy().into_owned();

    // cellscope's figures, once (the checks compare every peer run with them).
    let cells = super::cellscope_cells(&binary, &root, &out_dir.join("vllm-large-cells.json"))?;
    let ours: BTreeMap<String, &Value> = cells.iter().map(|cell| (key_of(cell), cell)).collect();
    if ours.len() != sweep.files.len() || cells.len() != sweep.files.len() {
        bail!(
            "cellscope made {} cells ({} distinct keys) of the sweep's {} files",
            cells.len(),
            ours.len(),
            sweep.files.len()
        );
    }

    let mut pairs = Vec::new();
    let mut versions = vec![String::new(); PEERS.len()];
    let mut worst = vec![0.0f64; PEERS.len()];
    for run in 1..=runs {
        eprintln!("paired run {run} of {runs}");
        let (mut pair, report) = paired::cellscope_index(&binary, &root, 1)?;
        if number(&report, "cells")? as usize != sweep.files.len() {
            bail!("cellscope index found {report}");
        }
        for (position, peer) in PEERS.into_iter().enumerate() {
            let peer_json = out_dir.join(format!("vllm-large-{peer}.json"));
            let ran = paired::run_peer(
                &python,
                &[&script, peer, &root, &peer_json.to_string_lossy()],
                &peer_json,
            )?;
            let difference = check(&sweep, &ours, &ran.result)
                .with_context(|| format!("checking {peer}'s figures (run {run})"))?;
            worst[position] = worst[position].max(difference);
            versions[position] = ran.version;
            pair.peers.push((ran.seconds, ran.max_rss_kb));
            pair.peers_each.push(ran.seconds_each);
        }
        pairs.push(pair);
    }

    let bytes = sweep.total("bytes");
    let peer_names: Vec<(String, String)> = PEERS
        .iter()
        .zip(&versions)
        .map(|(peer, version)| (peer.to_string(), version.clone()))
        .collect();
    let (runs_table, _) = paired::table(&peer_names, &pairs, 0.5);
    let table = format!(
        "vLLM detailed-JSON sweep: {} files, {} requests ({} failed), {:.0} MB; every figure of every peer run equal \
         to cellscope's within {TOLERANCE:.0e} relative (largest difference: {}).\n\n{runs_table}",
        sweep.files.len(),
        sweep.total("requests"),
        sweep.total("failed"),
        bytes as f64 / 1e6,
        PEERS
            .iter()
            .zip(&worst)
            .map(|(peer, worst)| format!("{peer} {worst:.1e}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    std::fs::write(out_dir.join("index-vllm.md"), &table)?;
    println!("{table}\n(written to target/bench/index-vllm.md)");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statistics_are_the_columns_with_a_unit() {
        // A cell as `cellscope cells --format json` writes it (TR164 V3, vLLM, N=1), abridged to one of each kind
        // of column.
        let cell = serde_json::json!({
            "run_id": "20260612_204254_036590", "backend": "vllm", "n": 1, "rep": 0, "status": "clean",
            "expected_rows": 10, "rows": 10, "ok_rows": 10, "failed_rows": 0, "skip_rows": 0,
            "mean_wall_ms": 3495.6528, "p50_wall_ms": 3353.6225, "p95_wall_ms": 4951.07835, "p99_wall_ms": 5366.01327,
            "p50_ttft_ms": 76.5595, "p95_ttft_ms": 113.36745, "mean_prompt_tokens": 1030.7,
            "mean_completion_tokens": 512.0, "aggregate_tps": 146.3, "request_throughput_rps": 0.29,
            "efficiency": 1.0, "p95_multiplier": 1.0,
            "expected_source": "plan", "exclusion_scope": null, "reported_metrics": "",
        });
        let mut names = statistics(&cell);
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "aggregate_tps",
                "mean_completion_tokens",
                "mean_prompt_tokens",
                "mean_wall_ms",
                "p50_ttft_ms",
                "p50_wall_ms",
                "p95_ttft_ms",
                "p95_wall_ms",
                "p99_wall_ms",
                "request_throughput_rps",
            ]
        );
        // An empty statistic is still one to compare (the peer's must be empty too).
        assert_eq!(
            statistics(&serde_json::json!({"p95_ttft_ms": null, "status": "clean"})),
            ["p95_ttft_ms"]
        );
    }
}

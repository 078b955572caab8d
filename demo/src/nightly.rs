//! The nightly demo root: 30 nights of the same small TR164 sweep, one run per engine per night, with four
//! stories told by its numbers and manifests (each stated in `data/README.md`):
//!
//! - SGLang is upgraded from 0.5.2 to 0.5.3 before night 12 (its run's `environment.sglang`), and from that night
//!   its time to first token is 25% higher: a regression after an engine upgrade, long enough ago not to be
//!   flagged by the default rule.
//! - vLLM serving llama3.1-8b gets 30% slower to first token from night 28 with nothing recorded as changed: a
//!   recent regression, flagged.
//! - The NVIDIA driver goes from 570.133.20 to 575.57.08 before night 20 on both engines' machines, and nothing
//!   moves: a benign change, shown as a confounder on the axis and found as no change point.
//! - vLLM serving qwen2.5-7b stays flat.
//!
//! Every night's numbers carry noise (per night and per request), drawn from a seeded stream, so the files are
//! byte-identical for one seed.

use crate::DemoError;
use crate::calendar::{UTC, epoch, iso, run_id};
use crate::catalog::{Model, V3_MODELS, V3_WORKLOADS, Workload};
use crate::random::DemoRng;
use crate::rows::{CellIdentity, Measurement, MetricsRow, RowBody, metrics_csv};
use crate::tree::Tree;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

/// Nights of the series.
pub const NIGHTS: u32 = 30;
/// The first night (1-based) SGLang runs as 0.5.3.
pub const ENGINE_UPGRADE_NIGHT: u32 = 12;
/// The first night on the newer driver.
pub const DRIVER_CHANGE_NIGHT: u32 = 20;
/// The first night of vLLM · llama3.1-8b's recent regression.
pub const RECENT_REGRESSION_NIGHT: u32 = 28;
/// The loads of every night's sweep.
const LOADS: [u32; 2] = [1, 8];
/// Reps of every cell.
const REPS: u32 = 2;
/// Requests each agent sends.
const REQUESTS_PER_AGENT: u32 = 5;

/// What one engine's nightly run serves.
struct Engine {
    name: &'static str,
    models: &'static [&'static str],
    version_key: &'static str,
    /// Its version on a night.
    version: fn(u32) -> &'static str,
    /// Seconds after 02:00 UTC the run starts.
    offset_s: f64,
}

const ENGINES: [Engine; 2] = [
    Engine {
        name: "vllm",
        models: &["llama3.1-8b", "qwen2.5-7b"],
        version_key: "vllm",
        version: |_| "0.11.0",
        offset_s: 0.0,
    },
    Engine {
        name: "sglang",
        models: &["llama3.1-8b"],
        version_key: "sglang",
        version: |night| {
            if night < ENGINE_UPGRADE_NIGHT {
                "0.5.2"
            } else {
                "0.5.3"
            }
        },
        offset_s: 2_400.0,
    },
];

/// How much slower than its baseline a configuration is on a night: the injected steps.
fn slowdown(engine: &str, model: &str, night: u32) -> f64 {
    match (engine, model) {
        ("sglang", _) if night >= ENGINE_UPGRADE_NIGHT => 1.25,
        ("vllm", "llama3.1-8b") if night >= RECENT_REGRESSION_NIGHT => 1.30,
        _ => 1.0,
    }
}

/// What was written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NightlySummary {
    /// Run directories.
    pub runs: usize,
    /// Request rows over every metrics.csv.
    pub rows: u64,
}

/// Writes the nightly root at `out_dir`, replacing what is there (through a staging directory).
pub fn generate_nightly(out_dir: &Path, seed: u64) -> Result<NightlySummary, DemoError> {
    let mut tree = Tree::stage(out_dir)?;
    let mut summary = NightlySummary::default();
    for night in 1..=NIGHTS {
        for engine in &ENGINES {
            let mut rng = DemoRng::new(seed, &format!("nightly/{}/{night}", engine.name));
            let start_s = epoch(UTC, (2026, 11, night), (2, 0, 0.0)) + engine.offset_s;
            let id = run_id(UTC, start_s + rng.range(0.0, 0.999_999));
            let (rows, end_s) = run_rows(&id, engine, night, start_s, &mut rng);
            summary.rows += rows.len() as u64;
            summary.runs += 1;
            let dir = format!("nightly/{id}");
            tree.write(
                &format!("{dir}/metrics.csv"),
                metrics_csv(&rows, false).as_bytes(),
            )?;
            let manifest = manifest(&id, engine, night, start_s, end_s);
            tree.write(
                &format!("{dir}/manifest.json"),
                &serde_json::to_vec_pretty(&manifest)?,
            )?;
        }
    }
    tree.write("README.md", README.as_bytes())?;
    tree.commit(out_dir)?;
    Ok(summary)
}

const README: &str = "Thirty nights of one small sweep, one TR164 run per engine per night, made by `cargo xtask \
demo-data`. What was injected, and where, is listed in the repository's data/README.md.\n";

fn catalog_model(name: &str) -> Model {
    V3_MODELS
        .into_iter()
        .find(|model| model.name == name)
        .unwrap_or(V3_MODELS[0])
}

fn workload() -> Workload {
    V3_WORKLOADS[0]
}

/// Every request row of one engine's run on one night, and the time its last request completed.
fn run_rows(
    id: &str,
    engine: &Engine,
    night: u32,
    start_s: f64,
    rng: &mut DemoRng,
) -> (Vec<MetricsRow>, f64) {
    let mut rows = Vec::new();
    let mut clock_s = start_s + 30.0;
    for model in engine.models {
        // The whole night's machine is a little faster or slower than usual.
        let night_factor = 1.0 + 0.015 * rng.normal();
        for n in LOADS {
            for rep in 0..REPS {
                let cell = Arc::new(CellIdentity {
                    run_id: Arc::from(id),
                    suite: "nightly",
                    phase: "scaling",
                    backend: engine.name,
                    model: catalog_model(model),
                    workload: workload(),
                    n_agents: n,
                    rep,
                });
                let factor = night_factor * slowdown(engine.name, model, night);
                let measured = cell_requests(n, factor, clock_s, rng);
                clock_s = measured
                    .iter()
                    .map(|m| m.complete_time_s)
                    .fold(clock_s, f64::max)
                    + 5.0;
                rows.extend(measured.into_iter().map(|measurement| MetricsRow {
                    cell: Arc::clone(&cell),
                    body: RowBody::Request(measurement),
                }));
            }
        }
    }
    (rows, clock_s)
}

/// `n` agents each sending [`REQUESTS_PER_AGENT`] requests back to back; times to first token grow with the
/// load and with `factor`.
fn cell_requests(n: u32, factor: f64, start_s: f64, rng: &mut DemoRng) -> Vec<Measurement> {
    let workload = workload();
    let mut out = Vec::new();
    for agent in 0..n {
        let mut submit_s = start_s + rng.range(0.0, 0.05);
        for sequence in 0..REQUESTS_PER_AGENT {
            let ttft_ms = round3(
                60.0 * (1.0 + 0.35 * f64::from(n - 1)) * factor * (0.08 * rng.normal()).exp(),
            );
            let completion_tokens = workload.max_new_tokens - rng.int_range(0, 6);
            let tpot_ms = 9.0 * (1.0 + 0.04 * f64::from(n - 1)) * (0.03 * rng.normal()).exp();
            let decode_ms = round3(tpot_ms * f64::from(completion_tokens - 1));
            let wall_ms = round3(ttft_ms + decode_ms);
            let complete_s = round6(submit_s + wall_ms / 1000.0);
            out.push(Measurement {
                agent_id: agent + 1,
                request_id: agent * REQUESTS_PER_AGENT + sequence + 1,
                request_sequence: 0,
                in_flight_at_submit: n,
                wall_ms,
                prompt_tokens: workload.prompt_target_tokens + rng.int_range(0, 8),
                completion_tokens,
                prefill_ms: Some(ttft_ms),
                decode_ms: Some(decode_ms),
                effective_tps: f64::from(completion_tokens) / (wall_ms / 1000.0),
                gpu_tokens_per_s: Some(f64::from(completion_tokens) / (decode_ms / 1000.0)),
                ttft_ms: Some(ttft_ms),
                submit_time_s: round6(submit_s),
                complete_time_s: complete_s,
                status: "ok",
                error: None,
            });
            submit_s = complete_s + 0.002;
        }
    }
    out.sort_by(|a, b| {
        a.submit_time_s
            .total_cmp(&b.submit_time_s)
            .then(a.request_id.cmp(&b.request_id))
    });
    for (rank, measurement) in out.iter_mut().enumerate() {
        measurement.request_sequence = rank as u32 + 1;
    }
    out
}

fn round3(value: f64) -> f64 {
    (value * 1e3).round() / 1e3
}

fn round6(value: f64) -> f64 {
    (value * 1e6).round() / 1e6
}

/// The run's manifest: its start and end, its engine's version and the machine's driver, and every cell
/// completed.
fn manifest(id: &str, engine: &Engine, night: u32, start_s: f64, end_s: f64) -> Value {
    let driver = if night < DRIVER_CHANGE_NIGHT {
        "570.133.20"
    } else {
        "575.57.08"
    };
    let mut cells = Vec::new();
    for model in engine.models {
        for n in LOADS {
            for rep in 0..REPS {
                cells.push(json!({
                    "backend": engine.name,
                    "expected_rows": n * REQUESTS_PER_AGENT,
                    "fallback": false,
                    "model": model,
                    "n_agents": n,
                    "phase": "scaling",
                    "rep": rep,
                    "rows_written": n * REQUESTS_PER_AGENT,
                    "status": "completed",
                    "suite": "nightly",
                    "workload": workload().name,
                }));
            }
        }
    }
    let mut environment = json!({
        "gpu": {
            "cuda_version": "12.8",
            "driver_version": driver,
            "memory_total_mib": 81559,
            "name": "NVIDIA H100 80GB HBM3"
        },
        "install": "native venv",
        "python": "3.12.3",
        "torch": "2.8.0+cu128"
    });
    environment[engine.version_key] = json!((engine.version)(night));
    json!({
        "backend": engine.name,
        "cells": cells,
        "completed_at": iso(UTC, end_s),
        "environment": environment,
        "requests_per_agent": REQUESTS_PER_AGENT,
        "run_id": id,
        "started_at": iso(UTC, start_s),
        "status": "complete",
        "suite": "nightly",
    })
}

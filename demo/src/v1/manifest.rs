//! V1 provenance files: manifest.json (cells with multi-event histories, environment capture, nsys config and
//! capture inventory), execution_plan.json (1,800 entries, pytorch_direct the only selected backend), config.yaml
//! and tr164_report.md.

use super::traces::CaptureEntry;
use super::{BACKEND, PLANNED_BACKENDS, PlanCell, SUITE};
use crate::calendar::{self, EDT};
use crate::catalog::{PHASES, REPS, V1_MODELS, V1_NS, V1_WORKLOADS};
use cellscope_model::CellStatus;
use cellscope_model::summary::CellSummary;
use serde::Serialize;
use serde_json::{Value, json};

/// One dispatcher generation of the V1 timeline.
#[derive(Clone, Debug, Serialize)]
pub(super) struct Generation {
    pub generation: &'static str,
    pub pid: Option<u32>,
    #[serde(skip)]
    pub launched: f64,
    pub launched_at: String,
    pub ended_at: String,
    pub outcome: String,
}

impl Generation {
    pub(super) fn new(generation: &'static str, pid: Option<u32>, launched: f64) -> Generation {
        Generation {
            generation,
            pid,
            launched,
            launched_at: calendar::iso(EDT, launched),
            ended_at: String::new(),
            outcome: String::new(),
        }
    }

    pub(super) fn finish(&mut self, ended: f64, outcome: &str) {
        self.ended_at = calendar::iso(EDT, ended);
        self.outcome = outcome.to_string();
    }
}

/// One entry of a cell's history.
#[derive(Clone, Debug, Serialize)]
pub(super) struct Event {
    pub at: String,
    pub event: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub detail: String,
}

impl Event {
    pub(super) fn new(
        at: f64,
        event: &'static str,
        generation: Option<&Generation>,
        detail: String,
    ) -> Event {
        Event {
            at: calendar::iso(EDT, at),
            event,
            generation: generation.map(|g| g.generation),
            pid: generation.and_then(|g| g.pid),
            detail,
        }
    }
}

#[derive(Serialize)]
struct ManifestCell<'a> {
    suite: &'static str,
    phase: &'static str,
    backend: &'static str,
    model: &'static str,
    workload: &'static str,
    n_agents: u32,
    rep: u32,
    status: &'static str,
    expected_rows: u32,
    rows_written: u32,
    fallback: bool,
    history: &'a [Event],
}

pub(super) fn manifest(
    plan: &[PlanCell],
    histories: &[Vec<Event>],
    rows_written: &[u32],
    generations: &[Generation],
    captures: &[CaptureEntry],
    run_id: &str,
    launch: f64,
) -> Value {
    let cells: Vec<ManifestCell> = plan
        .iter()
        .map(|cell| ManifestCell {
            suite: SUITE,
            phase: cell.phase,
            backend: BACKEND,
            model: cell.model.name,
            workload: cell.workload.name,
            n_agents: cell.n,
            rep: cell.rep,
            status: if cell.kind() == super::Kind::Skip {
                "skip-marked"
            } else {
                "completed"
            },
            expected_rows: cell.expected_rows(),
            rows_written: rows_written[cell.index],
            fallback: cell.fallback(),
            history: &histories[cell.index],
        })
        .collect();
    json!({
        "run_id": run_id,
        "status": "complete",
        "suite": SUITE,
        "phases": PHASES,
        "backends": [BACKEND],
        "requests_per_agent": 12,
        "started_at": calendar::iso(EDT, launch),
        "command": "python -m research.tr164.run --suite local_core --phase all --backends pytorch_direct --nsys --resume",
        "environment": environment(),
        "nsys": {
            "capture_rule": "peak_load_only",
            "capture_workloads": ["balanced_2k", "long_decode", "repeated_prefix"],
            "capture_n_agents": [8, 16],
            "reps_per_capture": 1,
            "budget_gb": 50,
            "estimated_gb": 45,
            "subprocess_timeout_s": 1800,
            "nsys_version": "2025.5.1",
        },
        "nsys_captures": captures,
        "generations": generations,
        "cells": cells,
    })
}

/// `capture_environment()` at dispatcher startup: the Windows PROCESSOR_ARCHITECTURE fallback of commit
/// 2d339c4d, the nvidia-smi `cuda_version` error, docker/ollama output. Package versions are not published; the
/// values here are plausible placeholders.
fn environment() -> Value {
    json!({
        "platform": {
            "system": "Windows",
            "release": "11",
            "version": "10.0.26200",
            "edition": "Windows 11 Home",
            "machine": "AMD64",
            "machine_source": "os.environ['PROCESSOR_ARCHITECTURE'] (os.name == 'nt' guard, commit 2d339c4d)",
        },
        "python": "3.13.1 (tags/v3.13.1:0671451, Dec  3 2024, 19:06:28) [MSC v.1942 64 bit (AMD64)]",
        "cpu": { "name": "13th Gen Intel(R) Core(TM) i9-13980HX", "cores": 24, "logical_processors": 32 },
        "memory_gb": 64,
        "gpu": {
            "name": "NVIDIA GeForce RTX 4080 Laptop GPU",
            "memory_total_mib": 12282,
            "driver_version": "576.02",
            "cuda_version": { "error": "Field \"cuda_version\" is not a valid field to query." },
        },
        "packages": { "torch": "2.7.1+cu128", "transformers": "4.52.4", "accelerate": "1.7.0", "torchao": "0.11.0" },
        "nsys": "NVIDIA Nsight Systems version 2025.5.1.121-255136380782v0",
        "docker": "Docker version 28.1.1, build 4eba377",
        "ollama": "ollama version is 0.9.0",
        "vendor_images": {
            "vllm": "vllm/vllm-openai@sha256:d9a5c1c1614c959fde8d2a4d68449db184572528a6055afdd0caf1e66fb51504",
            "sglang": "lmsysorg/sglang@sha256:8df56b542526f4fffd5372f7f65a583c7852e50442c1f43c9c3feddfd93944a4",
            "tgi": "ghcr.io/huggingface/text-generation-inference@sha256:e6b0af6e0bf65337b84a19f15d74660c7892192f555fb0b68d3f3d62bf0c1e9a",
        },
    })
}

/// The 1,800-cell plan: 5 backends × 2 phases × 3 models × 4 workloads × 5 N × 3 reps; only pytorch_direct selected.
pub(super) fn execution_plan(run_id: &str) -> Value {
    let mut cells = Vec::with_capacity(1800);
    for backend in PLANNED_BACKENDS {
        for model in V1_MODELS {
            for phase in PHASES {
                for workload in V1_WORKLOADS {
                    for n in V1_NS {
                        for rep in REPS {
                            cells.push(json!({
                                "suite": SUITE, "phase": phase, "backend": backend, "model": model.name,
                                "workload": workload.name, "n_agents": n, "rep": rep,
                                "selected": backend == BACKEND, "expected_rows": 12 * n,
                            }));
                        }
                    }
                }
            }
        }
    }
    json!({
        "run_id": run_id,
        "suite": SUITE,
        "requests_per_agent": 12,
        "backends_selected": [BACKEND],
        "order": "backend, model, phase, workload, n_agents, rep",
        "cells": cells,
    })
}

pub(super) const CONFIG_YAML: &str = "\
# TR164 local_core configuration (V1 run 20260531_120428_552237)
version: 0.1_local_core
seed: 164
suite: local_core
phases: [scaling, ttft]
backends: [pytorch_direct, ollama, vllm, sglang, tgi]
models:
  - {name: llama3.2-1b, hf_id: unsloth/Llama-3.2-1B-Instruct, params_b: 1.24, tier: small}
  - {name: qwen2.5-1.5b, hf_id: Qwen/Qwen2.5-1.5B-Instruct, params_b: 1.54, tier: small}
  - {name: llama3.2-3b, hf_id: unsloth/Llama-3.2-3B-Instruct, params_b: 3.21, tier: small_plus}
workloads:
  short_decode: {prompt_target_tokens: 256, max_new_tokens: 128}
  balanced_2k: {prompt_target_tokens: 1024, max_new_tokens: 512}
  long_decode: {prompt_target_tokens: 1024, max_new_tokens: 512}
  repeated_prefix: {prompt_target_tokens: 2048, max_new_tokens: 128, shared_prefix_tokens: 128}
n_agents: [1, 2, 4, 8, 16]
reps: 3
requests_per_agent: 12
generation:
  torch_dtype: float16
  device_map: auto
  temperature: 0.0
  do_sample: false
max_model_len: 2432
max_input_tokens: 4096
subprocess_timeout_s: 1800  # raised from 360 by commit 911cd328 (2026-06-01)
nsys:
  enabled: true
  capture_rule: peak_load_only  # {balanced_2k, long_decode, repeated_prefix} x N in {8, 16}, one rep per cell
  budget_gb: 50
analysis:
  efficiency_breakdown_threshold: 0.65
  p95_multiplier_breakdown_threshold: 2.0
vendor_images:  # digest-pinned by commit 2bb70d2d (2026-06-03); not used by pytorch_direct
  vllm: vllm/vllm-openai@sha256:d9a5c1c1614c959fde8d2a4d68449db184572528a6055afdd0caf1e66fb51504
  sglang: lmsysorg/sglang@sha256:8df56b542526f4fffd5372f7f65a583c7852e50442c1f43c9c3feddfd93944a4
  tgi: ghcr.io/huggingface/text-generation-inference@sha256:e6b0af6e0bf65337b84a19f15d74660c7892192f555fb0b68d3f3d62bf0c1e9a
";

/// A short generated report in the spirit of `generate_report`: counts and the breakdown table.
pub(super) fn report(run_id: &str, cells: &[CellSummary], completed: f64) -> String {
    let real = cells.iter().filter(|c| c.has_data()).count();
    let skipped = cells
        .iter()
        .filter(|c| c.status == CellStatus::Skipped)
        .count();
    let partial = cells
        .iter()
        .filter(|c| c.status == CellStatus::Partial)
        .count();
    let fallback = cells.iter().filter(|c| c.fallback).count();
    let mut text = format!(
        "# TR164 local_core report\n\nRun `{run_id}`, completed {}.\n\n\
         - Planned cells: {}\n- Real cells: {real}\n- Skip-marked cells: {skipped}\n- Partial cells: {partial}\n\
         - Fallback-completed cells: {fallback}\n\n## Breakdown boundaries (efficiency < 0.65 or p95x > 2.0)\n\n\
         | phase | model | workload | N | efficiency | p95x |\n|---|---|---|---|---|---|\n",
        calendar::iso(EDT, completed),
        cells.len()
    );
    let curves = cellscope_model::curve::series_curves(
        cells,
        &cellscope_model::curve::CurveOptions::default(),
    );
    for curve in curves {
        let n = curve.breakdown(&cellscope_model::Criterion::V1).n();
        let point = n.and_then(|n| curve.point(cellscope_model::Load::Concurrency(n)));
        let fmt = |value: Option<f64>| value.map_or("-".to_string(), |v| format!("{v:.3}"));
        text.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            curve.group.phase,
            curve.group.model,
            curve.group.workload,
            n.map_or("-".into(), |n| n.to_string()),
            fmt(point.and_then(|p| p.efficiency().map(|a| a.value))),
            fmt(point.and_then(|p| p.p95_multiplier().map(|a| a.value))),
        ));
    }
    text
}

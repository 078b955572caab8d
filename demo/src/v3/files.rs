//! The files of the V3 run directories: metrics.csv, manifest.json, execution_plan.json, config.yaml,
//! analysis.json, cell_summary.csv, and for the SGLang master REFILL_NOTE.md and the `_BACKUP_preRefill` sibling.

use super::{
    DEFAULT_MAX_MODEL_LEN, PlanCell, REFILL_MAX_MODEL_LEN, REQUESTS_PER_AGENT, Runner, SUITE,
};
use crate::DemoError;
use crate::analysis;
use crate::calendar::{self, UTC};
use crate::catalog::V3_MODELS;
use crate::rows::metrics_csv;
use crate::tree::Tree;
use cellscope_model::summary::CellSummary;
use serde_json::{Value, json};

/// Where the refill rows of the master came from.
pub(super) struct RefillInfo<'a> {
    pub refill_id: &'a str,
    pub refill_end: f64,
    pub rows: usize,
}

fn json_bytes(value: &Value) -> Result<Vec<u8>, DemoError> {
    analysis::pretty(value).map_err(DemoError::Json)
}

/// The V3 run config; the refill config differs only in `default_max_model_len`. Per-backend extra
/// arguments and Mistral's `backend_extra_args.vllm` are as the V3 report quotes them; the
/// Mistral ones sit in its model entry, where that key path puts them. The indexer reads the ceiling and the
/// arguments as confounders of a comparison (docs/run-format.md).
pub(super) fn config_yaml(max_model_len: u32) -> String {
    let models: String = V3_MODELS
        .iter()
        .map(|m| {
            // vLLM reads Mistral's own tokenizer (mistral_common); SGLang the HF one (the published token asymmetry).
            let extra = if m.name == "mistral-7b" {
                ", backend_extra_args: {vllm: [--tokenizer-mode, mistral]}"
            } else {
                ""
            };
            format!("  - {{name: {}, hf_id: {}{extra}}}\n", m.name, m.hf_id)
        })
        .collect();
    format!(
        "# config_cloud_5model_3rep.yaml\nversion: 0.2_cloud5_3rep\nseed: 164\nsuite: cloud_core\nphases: [scaling, ttft]\n\
         backends: [vllm, sglang]\nmodels:\n{models}workloads:\n  short_decode: {{prompt_target_tokens: 256, max_new_tokens: 128}}\n\
         \x20 balanced_2k: {{prompt_target_tokens: 1024, max_new_tokens: 512}}\n\
         \x20 long_prefill_8k: {{prompt_target_tokens: 8704, max_new_tokens: 64, chars_per_token: 1.3}}\n\
         \x20 long_decode: {{prompt_target_tokens: 1024, max_new_tokens: 512}}\n\
         \x20 repeated_prefix: {{prompt_target_tokens: 2048, max_new_tokens: 128}}\n\
         n_agents: [1, 2, 4, 8, 16, 32]\nreps: 3\nrequests_per_agent: {REQUESTS_PER_AGENT}\n\
         default_max_model_len: {max_model_len}\nserver_startup_timeout_s: 1200\n\
         backend_extra_args:\n  vllm: [--dtype, float16, --gpu-memory-utilization, \"0.86\"]\n\
         \x20 sglang: [--dtype, float16, --mem-fraction-static, \"0.82\", --cuda-graph-max-bs, \"32\"]\n\
         suites:\n  cloud_full:\n    vllm_extra_args: [--enable-prefix-caching]\n\
         analysis:\n  efficiency_breakdown_threshold: 0.65\n"
    )
}

fn environment(backend: &str) -> Value {
    if backend == "vllm" {
        json!({
            "gpu": {"name": "NVIDIA A100 80GB PCIe", "memory_total_mib": 81920, "driver_version": "580.159", "cuda_version": "13.0"},
            "python": "3.12.3", "torch": "2.8.0+cu128", "vllm": "0.10.2", "install": "native venv",
        })
    } else {
        json!({
            "gpu": {"name": "NVIDIA A100 80GB PCIe", "memory_total_mib": 81920, "driver_version": "575.57", "cuda_version": "12.9"},
            "python": "3.12.3", "torch": "2.11.0+cu130", "sglang": "0.5.12.post1", "kernels": "<0.15",
            "cuda_compat": "cuda-compat-13-0 (580.159 forward-compat libs)",
            "LD_LIBRARY_PATH": "/usr/local/cuda-13.0/compat:/usr/local/lib/python3.12/dist-packages/nvidia/cu13/lib",
            "install": "native launcher (vendor Docker image bypassed)",
        })
    }
}

fn cell_entry(
    cell: &PlanCell,
    backend: &str,
    span: (f64, f64),
    history_extra: Option<Value>,
) -> Value {
    let mut history = vec![
        json!({"at": calendar::iso(UTC, span.0), "event": "started", "detail": format!("{backend} server, {} agents", cell.n)}),
        json!({"at": calendar::iso(UTC, span.1), "event": "completed", "detail": format!("rows_written={}", cell.expected_rows())}),
    ];
    history.extend(history_extra);
    json!({
        "suite": SUITE, "phase": cell.phase, "backend": backend, "model": cell.model.name, "workload": cell.workload.name,
        "n_agents": cell.n, "rep": cell.rep, "status": "completed", "expected_rows": cell.expected_rows(),
        "rows_written": cell.expected_rows(), "fallback": false, "history": history,
    })
}

fn manifest(
    run_id: &str,
    backend: &str,
    plan: &[PlanCell],
    runner: &Runner,
    refill: Option<&RefillInfo>,
    max_model_len: u32,
) -> Value {
    let cells: Vec<Value> = plan
        .iter()
        .zip(&runner.spans)
        .map(|(cell, span)| {
            let extra = refill.filter(|_| cell.is_mistral_long_prefill()).map(|info| {
                json!({"at": calendar::iso(UTC, info.refill_end), "event": "refilled",
                       "detail": format!("{} http_400 rows replaced in place by rows of refill run {} (REFILL_NOTE.md)", cell.expected_rows(), info.refill_id)})
            });
            cell_entry(cell, backend, *span, extra)
        })
        .collect();
    let first = runner.spans.first().map(|s| s.0).unwrap_or(runner.clock);
    json!({
        "run_id": run_id,
        "status": "complete",
        "suite": SUITE,
        "backend": backend,
        "requests_per_agent": REQUESTS_PER_AGENT,
        "started_at": calendar::iso(UTC, first),
        "completed_at": calendar::iso(UTC, runner.clock),
        "default_max_model_len": max_model_len,
        "environment": environment(backend),
        "cells": cells,
    })
}

fn execution_plan(run_id: &str, backend: &str) -> Value {
    let cells: Vec<Value> = super::plan()
        .iter()
        .map(|cell| {
            json!({"suite": SUITE, "phase": cell.phase, "backend": backend, "model": cell.model.name,
                "workload": cell.workload.name, "n_agents": cell.n, "rep": cell.rep, "selected": true,
                "expected_rows": REQUESTS_PER_AGENT * cell.n})
        })
        .collect();
    json!({"run_id": run_id, "suite": SUITE, "requests_per_agent": REQUESTS_PER_AGENT, "backends_selected": [backend],
           "order": "model, phase, workload, n_agents, rep", "cells": cells})
}

fn coverage(backend: &str) -> Value {
    json!({
        "observed_backends": [backend],
        "observed_model_tiers": ["production_small", "upper_single_gpu"],
        "observed_suites": [SUITE],
        "planned_cells": 900,
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) fn write_main_run(
    tree: &mut Tree,
    dir: &str,
    run_id: &str,
    backend: &str,
    plan: &[PlanCell],
    runner: &Runner,
    summaries: &[CellSummary],
    refill: Option<&RefillInfo>,
) -> Result<(), DemoError> {
    tree.write(
        &format!("{dir}/metrics.csv"),
        metrics_csv(&runner.rows, false).as_bytes(),
    )?;
    tree.write(
        &format!("{dir}/manifest.json"),
        &json_bytes(&manifest(
            run_id,
            backend,
            plan,
            runner,
            refill,
            DEFAULT_MAX_MODEL_LEN,
        ))?,
    )?;
    tree.write(
        &format!("{dir}/execution_plan.json"),
        &json_bytes(&execution_plan(run_id, backend))?,
    )?;
    write_derived(tree, dir, run_id, backend, summaries)?;
    if let Some(info) = refill {
        tree.write(
            &format!("{dir}/REFILL_NOTE.md"),
            refill_note(run_id, info).as_bytes(),
        )?;
    }
    Ok(())
}

/// The files a run's pipeline writes after the sweep: config.yaml, analysis.json and cell_summary.csv.
fn write_derived(
    tree: &mut Tree,
    dir: &str,
    run_id: &str,
    backend: &str,
    summaries: &[CellSummary],
) -> Result<(), DemoError> {
    tree.write(
        &format!("{dir}/config.yaml"),
        config_yaml(DEFAULT_MAX_MODEL_LEN).as_bytes(),
    )?;
    tree.write(
        &format!("{dir}/analysis.json"),
        &json_bytes(&analysis::analysis_json(
            run_id,
            summaries,
            "v3",
            None,
            coverage(backend),
        ))?,
    )?;
    tree.write(
        &format!("{dir}/cell_summary.csv"),
        analysis::cell_summary_csv(summaries).as_bytes(),
    )?;
    Ok(())
}

/// The pre-refill state, untouched: metrics.csv with the http_400 rows and the extra `error` column (the report
/// documents no error column).
pub(super) fn write_backup(
    tree: &mut Tree,
    dir: &str,
    run_id: &str,
    plan: &[PlanCell],
    original: &Runner,
    summaries: &[CellSummary],
) -> Result<(), DemoError> {
    tree.write(
        &format!("{dir}/metrics.csv"),
        metrics_csv(&original.rows, true).as_bytes(),
    )?;
    tree.write(
        &format!("{dir}/manifest.json"),
        &json_bytes(&manifest(
            run_id,
            "sglang",
            plan,
            original,
            None,
            DEFAULT_MAX_MODEL_LEN,
        ))?,
    )?;
    write_derived(tree, dir, run_id, "sglang", summaries)?;
    Ok(())
}

pub(super) fn write_refill_run(
    tree: &mut Tree,
    dir: &str,
    run_id: &str,
    master_id: &str,
    plan: &[PlanCell],
    refill: &Runner,
) -> Result<(), DemoError> {
    tree.write(
        &format!("{dir}/metrics.csv"),
        metrics_csv(&refill.rows, false).as_bytes(),
    )?;
    let mut document = manifest(run_id, "sglang", plan, refill, None, REFILL_MAX_MODEL_LEN);
    if let Some(object) = document.as_object_mut() {
        object.insert("refill_of".into(), json!(master_id));
        object.insert(
            "scope".into(),
            json!({"model": "mistral-7b", "workload": "long_prefill_8k"}),
        );
    }
    tree.write(&format!("{dir}/manifest.json"), &json_bytes(&document)?)?;
    tree.write(
        &format!("{dir}/config.yaml"),
        config_yaml(REFILL_MAX_MODEL_LEN)
            .replace(
                "# config_cloud_5model_3rep.yaml",
                "# config_mistral_refill.yaml",
            )
            .as_bytes(),
    )?;
    Ok(())
}

/// REFILL_NOTE.md with the content a faithful copy should carry (the refill's run ids, row counts and md5 prefixes;
/// the real text is not published).
fn refill_note(master_id: &str, info: &RefillInfo) -> String {
    format!(
        "# Refill note: Mistral-7B x long_prefill_8k (SGLang)\n\n\
         The master metrics.csv of run `{master_id}` was spliced on {} with the rows of the targeted refill run\n\
         `{refill}` (`results/{refill}/`).\n\n\
         ## Why\n\n\
         All 3,780 requests of Mistral-7B x long_prefill_8k (36 cells: 6 N x 3 reps x 2 phases, N=1..32) returned\n\
         `http_400` in the original run: the char-matched ~8,704-token prompts tokenize to up to ~10,039 tokens under the\n\
         HF AutoTokenizer, above the `default_max_model_len` ceiling of {DEFAULT_MAX_MODEL_LEN} (8,704 prompt-high + 64 max-new).\n\
         The cell-level manifest still reported 900/900 complete because the rows were written.\n\n\
         ## Refill\n\n\
         - Scope: mistral-7b x long_prefill_8k only, both phases, all N and reps (36 cells).\n\
         - Override: `default_max_model_len: {DEFAULT_MAX_MODEL_LEN} -> {REFILL_MAX_MODEL_LEN}` (`config_mistral_refill.yaml`); otherwise identical\n\
         \x20 to `config_cloud_5model_3rep.yaml`. The ceiling governs admission, not execution.\n\
         - Result: {rows} / 3,780 ok, including N=32 at 320/320.\n\n\
         ## Splice\n\n\
         - The 3,780 `http_400` rows of the master were replaced **in place** (same positions, same cell keys, same\n\
         \x20 count per cell) by the 3,780 ok rows; the spliced rows keep the refill run id `{refill}`.\n\
         - Every other row is unchanged.\n\
         - The pre-refill state is preserved untouched in `results/{master_id}_BACKUP_preRefill/`.\n\
         - `analysis.json` and `cell_summary.csv` were regenerated from the spliced master.\n\n\
         ## Hashes (md5, local = pod)\n\n\
         - original master metrics.csv: `5fd15755...`\n\
         - refill metrics.csv: `e0400837...`\n\
         - spliced master: not recorded.\n\n\
         (Hash prefixes are the documented values of TR164 V3; this demo tree's files do not hash to them.)\n",
        calendar::iso(UTC, info.refill_end + 1500.0),
        refill = info.refill_id,
        rows = info.rows,
    )
}

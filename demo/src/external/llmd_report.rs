//! A small llm-d benchmark experiment in the mixed demo root: `external/llm-d/<experiment>/` with one schema 0.2
//! Benchmark Report per stage (`benchmark_report_v0.2,_stage_<i>_lifecycle_metrics.json.json`, the harness's name
//! for the JSON export), each stating its stack (one vLLM engine at TP2 on two H100s), its stage's request rate
//! and the stage's aggregates with their units. The figures come from a simple queueing model of the deployment.

use super::{Counts, Files};
use serde_json::{Value, json};

/// The experiment's directory, relative to the data root.
pub(crate) const DIRECTORY: &str = "external/llm-d/inference-perf-1786024743-qwen";

/// The experiment id the harness derives (a UUID5 of the experiment name), shared by every stage.
const EID: &str = "4f0c9a52-6e1b-5d7a-9c3e-21b8f0d4a6e7";

/// The requested rates of the stages, req/s.
const RATES: [f64; 3] = [2.0, 5.0, 10.0];
const CAPACITY_RPS: f64 = 14.0;
const TTFT_MS: f64 = 38.0;
const TPOT_MS: f64 = 9.5;
const OUTPUT_TOKENS: f64 = 200.0;
const PROMPT_TOKENS: f64 = 1000.0;
const STAGE_S: f64 = 50.0;

/// A statistics block in `units` around `mean`.
fn statistics(units: &str, mean: f64) -> Value {
    json!({
        "units": units, "mean": mean, "min": mean * 0.6, "p10": mean * 0.8, "p50": mean * 0.96,
        "p90": mean * 1.25, "p95": mean * 1.4, "p99": mean * 1.75, "max": mean * 2.0
    })
}

fn report(stage: usize, rate: f64) -> (Value, u32) {
    let utilisation = rate / CAPACITY_RPS;
    let ttft_s = TTFT_MS / 1000.0 / (1.0 - utilisation);
    let tpot_s = TPOT_MS / 1000.0 * (1.0 + utilisation);
    let latency_s = ttft_s + tpot_s * (OUTPUT_TOKENS - 1.0);
    let total = (rate * STAGE_S).round() as u32;
    let duration = STAGE_S + latency_s;
    let ok = f64::from(total);
    let value = json!({
        "version": "0.2",
        "run": {
            "uid": format!("{EID}-{stage}"), "eid": EID,
            "time": {"duration": format!("PT{duration}S")},
            "description": "Qwen/Qwen3-8B [inference-perf-1786024743-qwen]"
        },
        "scenario": {
            "stack": [{
                "metadata": {"schema_version": "0.0.1", "label": "vllm-0", "cfg_id": "5b1e0c9d"},
                "standardized": {
                    "kind": "inference_engine", "tool": "vllm", "tool_version": "vllm/vllm-openai:v0.11.0",
                    "role": "replica", "replicas": 1, "model": {"name": "Qwen/Qwen3-8B"},
                    "accelerator": {"model": "H100", "count": 2,
                                    "parallelism": {"tp": 2, "dp": 1, "dp_local": 1, "workers": 1, "ep": 1, "pp": 1}}
                },
                "native": {"args": {"--tensor-parallel-size": 2}}
            }],
            "load": {
                "metadata": {"schema_version": "0.0.1", "cfg_id": "a4e18f26"},
                "standardized": {
                    "tool": "inference-perf", "tool_version": "0.3.0", "source": "random", "stage": stage,
                    "input_seq_len": {"distribution": "fixed", "value": PROMPT_TOKENS},
                    "output_seq_len": {"distribution": "fixed", "value": OUTPUT_TOKENS},
                    "rate_qps": rate
                },
                "native": {}
            }
        },
        "results": {"request_performance": {"aggregate": {
            "requests": {"total": total, "failures": 0,
                         "input_length": statistics("count", PROMPT_TOKENS),
                         "output_length": statistics("count", OUTPUT_TOKENS)},
            "latency": {
                "time_to_first_token": statistics("s", ttft_s),
                "time_per_output_token": statistics("s/token", tpot_s),
                "inter_token_latency": statistics("s/token", tpot_s),
                "request_latency": statistics("s", latency_s)
            },
            "throughput": {
                "output_token_rate": {"units": "tokens/s", "mean": ok * OUTPUT_TOKENS / duration},
                "total_token_rate": {"units": "tokens/s", "mean": ok * (OUTPUT_TOKENS + PROMPT_TOKENS) / duration},
                "request_rate": {"units": "queries/s", "mean": ok / duration}
            }
        }}}
    });
    (value, total)
}

/// Every report of the experiment, with its cell and request counts.
pub(crate) fn files() -> (Files, Counts) {
    let mut out = Files::new();
    let mut counts = Counts::default();
    for (stage, rate) in RATES.into_iter().enumerate() {
        let (value, total) = report(stage, rate);
        counts.cells += 1;
        counts.requests += total as usize;
        out.push((
            format!("{DIRECTORY}/benchmark_report_v0.2,_stage_{stage}_lifecycle_metrics.json.json"),
            serde_json::to_vec_pretty(&value).unwrap_or_default(),
        ));
    }
    (out, counts)
}

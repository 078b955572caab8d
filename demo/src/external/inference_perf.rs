//! A small inference-perf run in the mixed demo root: `external/inference-perf/reports-20260706-140000/` with
//! the run's `config.yaml`, one `stage_<i>_lifecycle_metrics.json` per requested rate and the summary over all
//! stages, laid out and keyed as inference-perf's report generator writes them (`json.dumps(indent=2)`,
//! latencies in seconds). The figures come from a simple queueing model of one server: latency grows with the
//! offered load as the server's utilisation does.

use super::{Counts, Files};
use serde_json::{Value, json};

/// The directory of the run, relative to the data root.
pub(crate) const DIRECTORY: &str = "external/inference-perf/reports-20260706-140000";

/// The requested rates of the stages, req/s, and how long each stage sends.
const RATES: [f64; 4] = [1.0, 2.0, 4.0, 6.0];
const STAGE_S: f64 = 60.0;

/// The server's capacity in requests per second, and its unloaded TTFT and TPOT (s).
const CAPACITY_RPS: f64 = 8.0;
const TTFT_S: f64 = 0.045;
const TPOT_S: f64 = 0.011;
const PROMPT_TOKENS: f64 = 512.0;
const OUTPUT_TOKENS: f64 = 128.0;

/// Statistics of a metric with mean `mean`: the tool's keys, spread around the mean by a fixed shape.
fn summary(mean: f64) -> Value {
    let at = |factor: f64| mean * factor;
    json!({
        "mean": mean, "min": at(0.62), "max": at(2.1), "p0.1": at(0.63), "p1": at(0.66), "p5": at(0.72),
        "p10": at(0.78), "p25": at(0.88), "median": at(0.97), "p75": at(1.08), "p90": at(1.26),
        "p95": at(1.41), "p99": at(1.78), "p99.9": at(2.02)
    })
}

/// One stage's report at `rate` req/s.
fn stage(rate: f64) -> (Value, u32) {
    let utilisation = rate / CAPACITY_RPS;
    let slowdown = 1.0 / (1.0 - utilisation);
    let ttft = TTFT_S * slowdown;
    let tpot = TPOT_S * (1.0 + utilisation);
    let latency = ttft + tpot * (OUTPUT_TOKENS - 1.0);
    let count = (rate * STAGE_S).round() as u32;
    let duration = STAGE_S + latency;
    let ok = f64::from(count);
    let report = json!({
        "benchmark_time_seconds": duration,
        "load_summary": {
            "count": count, "schedule_delay": summary(0.0004), "send_duration": STAGE_S - 1.0 / rate,
            "requested_rate": rate, "achieved_rate": (ok - 1.0) / (STAGE_S - 1.0 / rate)
        },
        "successes": {
            "count": count,
            "latency": {
                "request_latency": summary(latency),
                "normalized_time_per_output_token": summary(latency / OUTPUT_TOKENS),
                "time_per_output_token": summary(tpot),
                "time_to_first_token": summary(ttft),
                "inter_token_latency": summary(tpot)
            },
            "throughput": {
                "input_tokens_per_sec": ok * PROMPT_TOKENS / duration,
                "output_tokens_per_sec": ok * OUTPUT_TOKENS / duration,
                "total_tokens_per_sec": ok * (PROMPT_TOKENS + OUTPUT_TOKENS) / duration,
                "requests_per_sec": ok / duration
            },
            "prompt_tokens": {"total": ok * PROMPT_TOKENS, "cached": 0.0, "uncached": ok * PROMPT_TOKENS, "mean": PROMPT_TOKENS},
            "output_len": summary(OUTPUT_TOKENS),
            "token_count_mismatches": 0
        },
        "failures": {"count": 0, "request_latency": null, "by_label": {}}
    });
    (report, count)
}

const CONFIG_YAML: &str = "api:\n  type: completion\n  streaming: true\ndata:\n  type: random\n  input_distribution:\n    \
mean: 512\n  output_distribution:\n    mean: 128\nload:\n  type: constant\n  stages:\n  - rate: 1.0\n    duration: 60\n  \
- rate: 2.0\n    duration: 60\n  - rate: 4.0\n    duration: 60\n  - rate: 6.0\n    duration: 60\nserver:\n  type: vllm\n  \
model_name: meta-llama/Llama-3.1-8B-Instruct\n  base_url: http://0.0.0.0:8000\ntokenizer:\n  \
pretrained_model_name_or_path: meta-llama/Llama-3.1-8B-Instruct\n";

/// Every file of the run, with its cell and request counts.
pub(crate) fn files() -> (Files, Counts) {
    let mut out: Files = vec![(
        format!("{DIRECTORY}/config.yaml"),
        CONFIG_YAML.as_bytes().to_vec(),
    )];
    let mut counts = Counts::default();
    let mut total = 0u32;
    for (index, rate) in RATES.into_iter().enumerate() {
        let (report, count) = stage(rate);
        total += count;
        counts.cells += 1;
        counts.requests += count as usize;
        out.push((
            format!("{DIRECTORY}/stage_{index}_lifecycle_metrics.json"),
            serde_json::to_vec_pretty(&report).unwrap_or_default(),
        ));
    }
    let summary = json!({
        "benchmark_time_seconds": STAGE_S * RATES.len() as f64,
        "load_summary": {"count": total, "schedule_delay": summary(0.0004)},
        "successes": {"count": total},
        "failures": {"count": 0}
    });
    out.push((
        format!("{DIRECTORY}/summary_lifecycle_metrics.json"),
        serde_json::to_vec_pretty(&summary).unwrap_or_default(),
    ));
    (out, counts)
}

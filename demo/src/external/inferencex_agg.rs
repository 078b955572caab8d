//! InferenceX's own aggregate of a sweep on other hardware: `external/inferencex-agg/agg_bmk.json`, the array its
//! collector writes (one row per configuration, keys sorted, `indent=2`), for one model served by SGLang on MI355X
//! at TP4 and TP8 over three concurrencies. As InferenceX writes it, each row holds latencies in seconds under the
//! vLLM names without `_ms`, `1000 / TPOT` as interactivity, and throughput per GPU; no request counts. The figures
//! come from a simple model of one deployment: TPOT grows with the batch, TTFT with the queue.

use super::{Counts, Files};
use serde_json::{Map, Value, json};

/// The file, relative to the data root.
pub(crate) const FILE: &str = "external/inferencex-agg/agg_bmk.json";

const CONCURRENCIES: [u32; 3] = [4, 16, 64];
const TENSOR_PARALLEL: [u32; 2] = [4, 8];
const INPUT_TOKENS: f64 = 1024.0;
const OUTPUT_TOKENS: f64 = 1024.0;

/// One configuration's row, as `process_result.py` derives it from a benchmark result.
fn row(tp: u32, conc: u32) -> Value {
    let c = f64::from(conc);
    // A wider deployment decodes faster per step and fills its batch later.
    let tpot_ms = 9.0 * (4.0 / f64::from(tp)).sqrt() * (1.0 + c / (24.0 * f64::from(tp)));
    let ttft_ms = 60.0 + 4.0 * c * 8.0 / f64::from(tp);
    let e2el_ms = ttft_ms + tpot_ms * (OUTPUT_TOKENS - 1.0);
    let output_tps = c * OUTPUT_TOKENS / (e2el_ms / 1000.0);
    let total_tps = output_tps * (INPUT_TOKENS + OUTPUT_TOKENS) / OUTPUT_TOKENS;
    let gpus = f64::from(tp);
    let mut fields = Map::new();
    let mut put = |key: &str, value: Value| {
        fields.insert(key.to_string(), value);
    };
    for (stem, ms) in [
        ("ttft", ttft_ms),
        ("tpot", tpot_ms),
        ("itl", tpot_ms * 0.98),
        ("e2el", e2el_ms),
    ] {
        for (stat, factor) in [
            ("mean", 1.0),
            ("median", 0.97),
            ("p90", 1.22),
            ("p99", 1.55),
            ("std", 0.18),
        ] {
            put(&format!("{stat}_{stem}"), json!(ms * factor / 1000.0));
            if stem == "tpot" {
                put(&format!("{stat}_intvty"), json!(1000.0 / (ms * factor)));
            }
        }
    }
    for (key, value) in [
        ("conc", json!(conc)),
        ("dcp_size", json!(1)),
        ("disagg", json!(false)),
        ("dp_attention", json!("false")),
        ("ep", json!(1)),
        ("framework", json!("sglang")),
        ("hw", json!("mi355x")),
        ("image", json!("lmsysorg/sglang:v0.5.4-rocm700-mi35x")),
        ("infmax_model_prefix", json!("llama70b")),
        ("input_tput_per_gpu", json!((total_tps - output_tps) / gpus)),
        ("is_multinode", json!(false)),
        ("isl", json!(INPUT_TOKENS as u32)),
        ("model", json!("meta-llama/Llama-3.3-70B-Instruct")),
        ("osl", json!(OUTPUT_TOKENS as u32)),
        ("output_tput_per_gpu", json!(output_tps / gpus)),
        ("pcp_size", json!(1)),
        ("pp", json!(1)),
        ("precision", json!("fp8")),
        ("recipe_fingerprint", json!("")),
        ("spec_decoding", json!("none")),
        ("tp", json!(tp)),
        ("tput_per_gpu", json!(total_tps / gpus)),
    ] {
        put(key, value);
    }
    // `serde_json::Map` keeps keys sorted, as the collector writes them.
    Value::Object(fields)
}

/// The aggregate file, with its cell count (it has no request counts).
pub(crate) fn files() -> (Files, Counts) {
    let rows: Vec<Value> = TENSOR_PARALLEL
        .iter()
        .flat_map(|tp| CONCURRENCIES.iter().map(move |conc| row(*tp, *conc)))
        .collect();
    let counts = Counts {
        cells: rows.len(),
        requests: 0,
    };
    let bytes = serde_json::to_vec_pretty(&Value::Array(rows)).unwrap_or_default();
    (vec![(FILE.to_string(), bytes)], counts)
}

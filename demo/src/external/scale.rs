//! A large vLLM sweep for `cargo xtask bench index`: what a shell loop of `vllm bench serve --save-result
//! --save-detailed --max-concurrency N --metadata workload=<name>` leaves behind when pointed at three engines
//! serving two models, N ∈ {1, 2, 4, …, 128}, three reps, with `--num-prompts` growing with N: over a million
//! requests in 144 files.
//!
//! Each file is written by the demo's vLLM writer ([`vllm::result`]) exactly as `main_async` dumps it
//! (`json.dump(result_json, f)`: one line, no indent), with every per-request time a difference of
//! `time.perf_counter()` floats as the tool computes it, so the files are as large as the tool's: one ITL per
//! output token after the first (the random dataset streams one token per chunk), the generated texts, and the
//! failed requests the tool records (the traceback of a dropped connection, TTFT 0, latency 0, no ITLs).
//!
//! The requests are synthetic: a closed loop of N clients (the tool's semaphore) against a server whose time to
//! first token and time per output token grow with N, with jitter and occasional stalls.

use super::pyjson::{Json, PYTHON_LINE};
use super::vllm::{self, Times};
use super::{Cell, Outcome, Request, epoch_ns, model, pause_ns, seconds};
use crate::catalog::Workload;
use crate::random::DemoRng;
use crate::tree::Tree;
use crate::{DemoError, calendar};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

/// The engines served (each benchmarked with the same `vllm bench serve` client, `--backend openai`), with their
/// latency relative to vLLM's.
pub(crate) const ENGINES: [(&str, f64); 3] = [("vllm", 1.0), ("sglang", 0.93), ("tgi", 1.18)];
/// V3 models (served under these names), with their latency relative to the first.
pub(crate) const MODELS: [(&str, f64); 2] = [("qwen2.5-7b", 1.0), ("llama3.1-8b", 1.09)];
pub(crate) const NS: [u32; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
pub(crate) const REPS: u32 = 3;
/// `--dataset-name random --random-input-len 256 --random-output-len 32 --random-range-ratio 0.25`.
pub(crate) const WORKLOAD: Workload = Workload {
    name: "chat_256x32",
    prompt_target_tokens: 256,
    max_new_tokens: 32,
    early_stop: 0.0,
};
const RANGE_RATIO: f64 = 0.25;

/// `--num-prompts` of a run at concurrency `n`: enough for every client to send a few hundred requests.
pub(crate) fn num_prompts(n: u32) -> u32 {
    1000 + 200 * n
}

/// The sweep started on this UTC wall-clock time, on a client up for this long (`time.perf_counter()` counts from
/// boot).
const SWEEP_START: ((i64, u32, u32), (u32, u32, u32)) = ((2026, 9, 7), (13, 2, 41));
const UPTIME_AT_START_NS: i64 = 1_208_331_774_018_532;

/// One file of the sweep and the cell it holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SweepFile {
    /// Relative to the data root.
    pub path: String,
    pub backend: String,
    pub model: String,
    pub workload: String,
    pub n: u32,
    pub rep: u32,
    pub requests: usize,
    pub failed: usize,
    pub bytes: u64,
}

/// The `cellscope.toml` of the sweep's root: the engine is the top directory (the files only say `openai`, the
/// client's protocol); model, workload, N are the files' own fields and rep the order of the runs.
const CELLSCOPE_TOML: &str = r#"# `vllm bench serve` results, one directory per engine and model; rep = the order of the runs.
[[map]]
glob = "**"
suite = "vllm-large"
phase = "scaling"

[[map]]
glob = "vllm/**"
backend = "vllm"

[[map]]
glob = "sglang/**"
backend = "sglang"

[[map]]
glob = "tgi/**"
backend = "tgi"
"#;

/// Writes the sweep to `out_dir` (through a staging directory, replacing what is there) and lists its files.
pub(crate) fn generate(out_dir: &Path, seed: u64) -> Result<Vec<SweepFile>, DemoError> {
    let mut tree = Tree::stage(out_dir)?;
    let result = write(&mut tree, seed);
    match result {
        Ok(files) => {
            tree.commit(out_dir)?;
            Ok(files)
        }
        Err(error) => {
            let _ = std::fs::remove_dir_all(&tree.root);
            Err(error)
        }
    }
}

fn write(tree: &mut Tree, seed: u64) -> Result<Vec<SweepFile>, DemoError> {
    tree.write("cellscope.toml", CELLSCOPE_TOML.as_bytes())?;
    let start_ns = epoch_ns(SWEEP_START.0, SWEEP_START.1);
    let boot_ns = start_ns - UPTIME_AT_START_NS;
    let mut clock_ns = start_ns;
    let mut files = Vec::new();
    for (engine, engine_factor) in ENGINES {
        for (model_name, model_factor) in MODELS {
            // A new server for each (engine, model): loading weights, warming up, passing the health check.
            let mut rng = DemoRng::new(seed, &format!("external/scale/{engine}/{model_name}"));
            clock_ns += pause_ns(&mut rng, 70.0, 140.0);
            for n in NS {
                for rep in 0..REPS {
                    let cell = Cell {
                        model: model(model_name)?,
                        workload: WORKLOAD,
                        n,
                        rep,
                        requests: requests(n, engine_factor * model_factor, &mut rng),
                        warmup: Vec::new(),
                    };
                    // Each run is a `vllm bench serve` process: imports, tokenizer, dataset and a test prompt.
                    clock_ns += pause_ns(&mut rng, 8.0, 14.0);
                    let (result, end_ns) = vllm::result(
                        &cell,
                        &cell.requests,
                        clock_ns,
                        boot_ns,
                        Times::PerfCounter,
                        &mut rng,
                    );
                    clock_ns = end_ns;
                    // `compute_result_filename`: `{label or backend}-{request_rate}qps-concurrency{N}-{model}-{dt}`.
                    let date = calendar::compact_stamp(calendar::UTC, seconds(end_ns));
                    let path = format!(
                        "{engine}/{model_name}/openai-infqps-concurrency{n}-{model_name}-{date}.json"
                    );
                    let text = Json::from(result).to_text(PYTHON_LINE).into_bytes();
                    tree.write(&path, &text)?;
                    files.push(SweepFile {
                        path,
                        backend: engine.to_string(),
                        model: model_name.to_string(),
                        workload: WORKLOAD.name.to_string(),
                        n,
                        rep,
                        requests: cell.requests.len(),
                        failed: cell.requests.iter().filter(|r| !r.is_ok()).count(),
                        bytes: text.len() as u64,
                    });
                }
            }
        }
    }
    Ok(files)
}

/// A log-normal factor with median 1.
fn jitter(rng: &mut DemoRng, sigma: f64) -> f64 {
    (sigma * rng.normal()).exp()
}

/// One run's requests at concurrency `n` in dispatch order: each of the `n` clients sends its next request as soon
/// as its previous one is answered (the tool's semaphore with `--request-rate inf`).
fn requests(n: u32, factor: f64, rng: &mut DemoRng) -> Vec<Request> {
    let count = num_prompts(n) as usize;
    let load = f64::from(n);
    let mut free: BinaryHeap<Reverse<i64>> = (0..n).map(|_| Reverse(0i64)).collect();
    let mut out = Vec::with_capacity(count);
    let (input_low, input_high) = range(WORKLOAD.prompt_target_tokens);
    let (output_low, output_high) = range(WORKLOAD.max_new_tokens);
    let failure_rate = 0.0015 * (1.0 + load / 32.0);
    for _ in 0..count {
        let Reverse(free_at) = free.pop().unwrap_or(Reverse(0));
        // The task wakes on the semaphore and builds its payload before sending.
        let start_ns = free_at + (rng.range(20e-6, 150e-6) * 1e9) as i64;
        let prompt_tokens = rng.int_range(input_low, input_high);
        let completion_tokens = rng.int_range(output_low, output_high);
        let ttft_s = (0.012 + 0.000_045 * f64::from(prompt_tokens))
            * factor
            * (1.0 + load / 24.0)
            * jitter(rng, 0.25);
        let tpot_s = 0.0072 * factor * (1.0 + load / 40.0);
        let outcome = if rng.chance(failure_rate) {
            // The server drops the connection part of the way in (the writer records the tool's traceback).
            let typical_ns = (ttft_s + tpot_s * f64::from(completion_tokens)) * 1e9;
            Outcome::Failed {
                after_ns: (typical_ns * rng.range(0.2, 0.5)).round() as i64,
            }
        } else {
            let itls_ns = (1..completion_tokens)
                .map(|_| {
                    let stall = if rng.chance(0.004) {
                        rng.range(3.0, 9.0)
                    } else {
                        1.0
                    };
                    (tpot_s * jitter(rng, 0.18) * stall * 1e9).round() as i64
                })
                .collect();
            Outcome::Ok {
                ttft_ns: (ttft_s * 1e9).round() as i64,
                itls_ns,
            }
        };
        let request = Request {
            start_ns,
            prompt_tokens,
            completion_tokens,
            outcome,
        };
        free.push(Reverse(request.end_ns()));
        out.push(request);
    }
    out
}

/// The random dataset's length range for `--random-range-ratio`.
fn range(target: u32) -> (u32, u32) {
    let target = f64::from(target);
    (
        (target * (1.0 - RANGE_RATIO)).round() as u32,
        (target * (1.0 + RANGE_RATIO)).round() as u32,
    )
}

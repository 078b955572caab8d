//! The two deployments of the request-rate sweep as InferenceX (formerly InferenceMAX) benchmarks them: one
//! `benchmark_serving.py` run per (tensor parallel size, concurrency), each against its own `vllm serve
//! --tensor-parallel-size T --max-num-seqs C`, saved under InferenceX's result name in `external/inferencex/`:
//! `llama8b_1k1k_bf16_vllm_tp<T>_ep1_dpa_false_conc<C>_h100.json` (model, input and output lengths in thousands,
//! precision, engine, tensor and expert parallel sizes, data-parallel attention, concurrency, GPU).
//!
//! The client command is InferenceX's: `--backend vllm --dataset-name random --random-input-len 1024
//! --random-output-len 1024 --random-range-ratio 0.8 --num-prompts $((C * 10)) --max-concurrency C --request-rate
//! inf --ignore-eos --save-result --percentile-metrics ttft,tpot,itl,e2el`. So a file is the vLLM writer's result
//! (`vllm.rs`) on one line (`json.dump(result_json, f)`), without the per-request lists that only `--save-detailed`
//! keeps (`latencies` and `queue_times` stay) and without a `workload` (no `--metadata`): only the file name says
//! which deployment and workload it measured. The requests come from the rate sweep's queueing model with a
//! closed loop of C clients, all of them in the server's batch.

use super::pyjson::{Json, PYTHON_LINE};
use super::rate_sweep::{self, DEPLOYMENTS, MODEL, ns};
use super::vllm::{self, Times};
use super::{Cell, Counts, Files, Request, epoch_ns, pause_ns};
use crate::catalog::Workload;
use crate::random::DemoRng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The directory of the set, relative to the data root.
pub(crate) const DIRECTORY: &str = "external/inferencex";

/// InferenceX's concurrency levels.
pub(crate) const CONCURRENCIES: [u32; 5] = [4, 8, 16, 32, 64];

/// Input and output lengths (`1k1k`); with `--ignore-eos` every request generates its sampled output length.
const WORKLOAD: Workload = Workload {
    name: "1k1k",
    prompt_target_tokens: 1024,
    max_new_tokens: 1024,
    early_stop: 0.0,
};
const RANGE_RATIO: f64 = 0.8;

/// The lists `main_async` drops from the result without `--save-detailed`.
const DETAILED_ONLY: [&str; 7] = [
    "input_lens",
    "output_lens",
    "start_times",
    "ttfts",
    "itls",
    "generated_texts",
    "errors",
];

/// The first job started on this UTC wall-clock time, on a runner up for this long.
const START: ((i64, u32, u32), (u32, u32, u32)) = ((2026, 7, 6), (1, 12, 9));
const UPTIME_AT_START_NS: i64 = 88_412_730_551_260;

/// The result file name of a deployment at a concurrency, relative to the data root.
pub(crate) fn file_name(tensor_parallel_size: u32, concurrency: u32) -> String {
    format!(
        "{DIRECTORY}/llama8b_1k1k_bf16_vllm_tp{tensor_parallel_size}_ep1_dpa_false_conc{concurrency}_h100.json"
    )
}

/// Every file of the set, in the order the jobs ran, with its cell and request counts.
pub(crate) fn files(seed: u64) -> (Files, Counts) {
    let start_ns = epoch_ns(START.0, START.1);
    let boot_ns = start_ns - UPTIME_AT_START_NS;
    let mut clock_ns = start_ns;
    let mut clock = DemoRng::new(seed, DIRECTORY);
    let mut out = Vec::new();
    let mut counts = Counts::default();
    for deployment in DEPLOYMENTS.iter().rev() {
        for concurrency in CONCURRENCIES {
            // Each job starts its own server and waits for its health check, then runs the client once.
            clock_ns += pause_ns(&mut clock, 70.0, 140.0);
            let path = file_name(deployment.tensor_parallel_size, concurrency);
            let mut rng = DemoRng::new(seed, &path);
            let requests = requests(deployment, concurrency, &mut rng);
            let cell = Cell {
                model: MODEL,
                workload: WORKLOAD,
                n: concurrency,
                rep: 0,
                requests: Vec::new(),
                warmup: Vec::new(),
            };
            let (mut result, end_ns) =
                vllm::result(&cell, &requests, clock_ns, boot_ns, Times::Exact, &mut rng);
            clock_ns = end_ns;
            result
                .set("endpoint_type", "vllm")
                .set("backend", "vllm")
                .remove("workload");
            for key in DETAILED_ONLY {
                result.remove(key);
            }
            counts.cells += 1;
            counts.requests += requests.len();
            out.push((path, Json::from(result).to_text(PYTHON_LINE).into_bytes()));
        }
    }
    (out, counts)
}

/// One run's requests in dispatch order: each of the `concurrency` clients sends its next request as soon as its
/// previous one is answered, and the server (`--max-num-seqs` = the concurrency) batches every one at once.
fn requests(
    deployment: &rate_sweep::Deployment,
    concurrency: u32,
    rng: &mut DemoRng,
) -> Vec<Request> {
    let count = 10 * concurrency as usize;
    let lengths = [
        range(WORKLOAD.prompt_target_tokens),
        range(WORKLOAD.max_new_tokens),
    ];
    let mut free: BinaryHeap<Reverse<i64>> = (0..concurrency).map(|_| Reverse(0)).collect();
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let Reverse(free_ns) = free.pop().unwrap_or(Reverse(0));
        // The task wakes on the semaphore and builds its payload before sending.
        let start_ns = free_ns + ns(rng.range(0.000_02, 0.000_15));
        let busy = free.iter().filter(|Reverse(end)| *end > start_ns).count() + 1;
        let request = rate_sweep::serve(deployment, lengths, (start_ns, start_ns), busy, rng);
        free.push(Reverse(request.end_ns()));
        out.push(request);
    }
    out
}

/// The random dataset's length range for `--random-range-ratio 0.8`: [0.8 × target, target].
fn range(target: u32) -> (u32, u32) {
    ((f64::from(target) * RANGE_RATIO).round() as u32, target)
}

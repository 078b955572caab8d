//! A request-rate sweep of one model on two deployments, as `vllm bench sweep serve` leaves it: where the other
//! vLLM tree sweeps `--max-concurrency`, this one sweeps `--request-rate` (1, 2, 4, 8, 16 req/s and `inf`, every
//! prompt sent at once) with `--max-concurrency` unset, over two `vllm serve` deployments of
//! meta-llama/Llama-3.1-8B-Instruct on H100s, tensor parallel 1 and 2, so that saturation and SLO capacity differ
//! visibly between the deployments of one folder.
//!
//! Layout (`_get_comb_base_path`, `_get_comb_run_path` and `ParameterSweepItem.name` in vLLM's
//! `vllm/benchmarks/sweep/`): `external/vllm-rate-sweep/llama3.1-8b-h100/` is the experiment, with one
//! `SERVE--tensor_parallel_size=<T>-BENCH--request_rate=<R>/` directory per combination holding `run=<i>.json` and
//! `summary.json` (the JSON array of its runs). The experiment was filled by two invocations: TP 2 with
//! `--num-runs 1`, then `--resume --num-runs 2` with TP 1 as the only serve parameters, so only TP 1 has two runs
//! per rate. Each run file is the vLLM writer's result (`vllm.rs`, `--metadata workload=chat_512x64`) as a
//! rate-driven run writes it (`max_concurrency` null, no semaphore to queue on) with the sweep's merge of
//! `run_number`, the serve overrides and the bench overrides (the JSON value of `request_rate`: an integer or the
//! string `"inf"`). The servers stream 16 tokens per chunk (`--stream-interval 16` in the serve command, not swept,
//! so not in the path). The sweep's `summary.csv` and `--warmup-num-prompts` runs are left out, as in `vllm.rs`.
//!
//! The requests come from a small queueing model rather than the V3 demo: one arrival at a uniformly random
//! point of each `1/rate` interval (a smoothed Poisson process, so that a run below capacity achieves its offered
//! rate), a server with a fixed number of batch slots serving first come first served, a prefill that slows a
//! little as the batch fills and a time per output token that grows mildly with it. Past a deployment's capacity
//! (slots over service time: about 6 req/s at TP 1 and 12 at TP 2) requests wait for a slot, so the time to first
//! token grows with the backlog and the achieved rate stays at the capacity.

use super::pyjson::{Json, Obj, PYTHON_INDENT_4};
use super::vllm::{self, Times};
use super::{Cell, Counts, Files, Outcome, Request, STREAM_INTERVAL_TOKENS, epoch_ns, pause_ns};
use crate::catalog::{Model, Workload};
use crate::random::DemoRng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The experiment directory, relative to the data root.
pub(crate) const EXPERIMENT: &str = "external/vllm-rate-sweep/llama3.1-8b-h100";

/// Offered request rates in req/s, in sweep order; `None` is `inf`.
pub(crate) const RATES: [Option<u32>; 6] = [Some(1), Some(2), Some(4), Some(8), Some(16), None];

/// Each finite rate sends this many seconds of traffic (`--num-prompts` = rate × 30); `inf` sends as many prompts
/// as the top finite rate.
pub(crate) const TRAFFIC_S: u32 = 30;

/// `--model meta-llama/Llama-3.1-8B-Instruct` without `--served-model-name`: the Hugging Face id is the model id.
pub(super) const MODEL: Model = Model {
    name: "meta-llama/Llama-3.1-8B-Instruct",
    hf_id: "meta-llama/Llama-3.1-8B-Instruct",
    tier: "production_small",
    params_b: "8.03",
    long_prefill_tokens: 0,
    prefill_cost: 0.0,
};

/// `--dataset-name random --random-input-len 512 --random-output-len 64 --random-range-ratio 0.25`.
const WORKLOAD: Workload = Workload {
    name: "chat_512x64",
    prompt_target_tokens: 512,
    max_new_tokens: 64,
    early_stop: 0.0,
};
const RANGE_RATIO: f64 = 0.25;

/// One `vllm serve` deployment and the queueing model of its server.
pub(crate) struct Deployment {
    pub tensor_parallel_size: u32,
    /// Runs per rate (`--num-runs`).
    pub runs: u32,
    /// When its invocation of the sweep started (UTC).
    start: ((i64, u32, u32), (u32, u32, u32)),
    /// Requests the server batches at once; the rest wait.
    slots: usize,
    prefill_s_per_token: f64,
    /// Time per output token with one request in the batch, and its growth at a full batch (× (1 + growth)).
    tpot_s: f64,
    tpot_growth: f64,
}

/// The deployments in the order the sweep ran them.
pub(crate) const DEPLOYMENTS: [Deployment; 2] = [
    Deployment {
        tensor_parallel_size: 2,
        runs: 1,
        start: ((2026, 7, 2), (14, 3, 17)),
        slots: 12,
        prefill_s_per_token: 0.000_07,
        tpot_s: 0.012,
        tpot_growth: 0.3,
    },
    Deployment {
        tensor_parallel_size: 1,
        runs: 2,
        start: ((2026, 7, 3), (9, 26, 40)),
        slots: 10,
        prefill_s_per_token: 0.000_12,
        tpot_s: 0.018,
        tpot_growth: 0.35,
    },
];

/// A few requests dropped by the overloaded TP 1 server at 16 req/s in its second run: (TP, rate, run, positions).
const FAILURES: (u32, Option<u32>, u32, [usize; 3]) = (1, Some(16), 1, [301, 327, 355]);

/// The client had been up this long when the first invocation started (`time.perf_counter()` counts from boot).
pub(super) const UPTIME_AT_START_NS: i64 = 517_903_441_276_094;

/// `--num-prompts` of a rate.
pub(crate) fn num_prompts(rate: Option<u32>) -> u32 {
    TRAFFIC_S * rate.unwrap_or(16)
}

/// The rate as the directory name and `str()` of the bench parameter write it.
pub(crate) fn rate_text(rate: Option<u32>) -> String {
    rate.map_or_else(|| "inf".to_string(), |rate| rate.to_string())
}

/// The combination directory of a deployment and rate, relative to the data root.
pub(crate) fn combination_dir(tensor_parallel_size: u32, rate: Option<u32>) -> String {
    format!(
        "{EXPERIMENT}/SERVE--tensor_parallel_size={tensor_parallel_size}-BENCH--request_rate={}",
        rate_text(rate)
    )
}

/// Every file of the sweep (paths relative to the data root) in sweep order, with its run and request counts.
pub(crate) fn files(seed: u64) -> (Files, Counts) {
    let boot_ns = epoch_ns(DEPLOYMENTS[0].start.0, DEPLOYMENTS[0].start.1) - UPTIME_AT_START_NS;
    let mut out = Vec::new();
    let mut counts = Counts::default();
    for deployment in &DEPLOYMENTS {
        let tp = deployment.tensor_parallel_size;
        let mut clock = DemoRng::new(seed, &format!("{EXPERIMENT}/tp{tp}"));
        // The invocation starts the server once and waits for its health check.
        let mut clock_ns =
            epoch_ns(deployment.start.0, deployment.start.1) + pause_ns(&mut clock, 70.0, 140.0);
        for rate in RATES {
            let dir = combination_dir(tp, rate);
            let mut summary = Vec::new();
            for run in 0..deployment.runs {
                // Each run is a `vllm bench serve` subprocess: imports, tokenizer, dataset and its test prompt first.
                clock_ns += pause_ns(&mut clock, 8.0, 14.0);
                let mut rng = DemoRng::new(seed, &format!("{dir}/run={run}"));
                let requests = requests(deployment, rate, run, &mut rng);
                let (result, end_ns) = run_result(
                    deployment,
                    rate,
                    run,
                    &requests,
                    (clock_ns, boot_ns),
                    &mut rng,
                );
                clock_ns = end_ns;
                counts.cells += 1;
                counts.requests += requests.len();
                out.push((
                    format!("{dir}/run={run}.json"),
                    text(&result.clone().into()),
                ));
                summary.push(Json::from(result));
            }
            out.push((format!("{dir}/summary.json"), text(&Json::Array(summary))));
        }
    }
    (out, counts)
}

/// `json.dump(run_data, f, indent=4)`: no trailing newline.
fn text(value: &Json) -> Vec<u8> {
    value.to_text(PYTHON_INDENT_4).into_bytes()
}

/// One run's result dict as the sweep leaves it, and when the run ended. `clocks` is the benchmark's start and
/// the epoch at which `time.perf_counter()` read 0.
fn run_result(
    deployment: &Deployment,
    rate: Option<u32>,
    run: u32,
    requests: &[Request],
    clocks: (i64, i64),
    rng: &mut DemoRng,
) -> (Obj, i64) {
    let cell = Cell {
        model: MODEL,
        workload: WORKLOAD,
        n: 0,
        rep: run,
        requests: Vec::new(),
        warmup: Vec::new(),
    };
    let (mut result, end_ns) = vllm::result(&cell, requests, clocks.0, clocks.1, Times::Exact, rng);
    // Each request's task is created at its arrival and sends at once: no semaphore, only the event loop's delay.
    let queue_times: Vec<Json> = requests
        .iter()
        .map(|_| Json::from(rng.range(0.000_02, 0.000_15)))
        .collect();
    result
        .set("max_concurrency", Json::Null)
        .set("queue_times", Json::Array(queue_times))
        .set("run_number", run)
        .set("tensor_parallel_size", deployment.tensor_parallel_size)
        .set(
            "request_rate",
            rate.map_or_else(|| Json::from("inf"), Json::from),
        );
    (result, end_ns)
}

/// A log-normal factor with median 1.
pub(super) fn jitter(rng: &mut DemoRng, sigma: f64) -> f64 {
    (sigma * rng.normal()).exp()
}

pub(super) fn ns(seconds: f64) -> i64 {
    (seconds * 1e9).round() as i64
}

/// One run's requests in arrival order, from the deployment's queueing model.
fn requests(
    deployment: &Deployment,
    rate: Option<u32>,
    run: u32,
    rng: &mut DemoRng,
) -> Vec<Request> {
    let count = num_prompts(rate) as usize;
    let mut free: BinaryHeap<Reverse<i64>> = (0..deployment.slots).map(|_| Reverse(0)).collect();
    let mut out = Vec::with_capacity(count);
    for index in 0..count {
        let arrival_ns = match rate {
            Some(rate) => ns((index as f64 + rng.uniform()) / f64::from(rate)),
            // `inf`: the tasks are created back to back, each building its payload before sending.
            None => index as i64 * 40_000 + ns(rng.range(0.0, 0.000_02)),
        };
        let Reverse(free_ns) = free.pop().unwrap_or(Reverse(0));
        let begin_ns = arrival_ns.max(free_ns);
        let busy = free.iter().filter(|Reverse(end)| *end > begin_ns).count() + 1;
        let lengths = [
            range(WORKLOAD.prompt_target_tokens),
            range(WORKLOAD.max_new_tokens),
        ];
        let request = serve(deployment, lengths, (arrival_ns, begin_ns), busy, rng);
        free.push(Reverse(request.end_ns()));
        out.push(request);
    }
    let (tp, failing_rate, failing_run, positions) = FAILURES;
    if tp == deployment.tensor_parallel_size && failing_rate == rate && failing_run == run {
        for position in positions {
            if let Some(request) = out.get_mut(position) {
                // The connection drops part of the way into what would have been the request's time.
                let after_ns = (request.duration_ns() as f64 * rng.range(0.2, 0.5)).round() as i64;
                request.outcome = Outcome::Failed { after_ns };
            }
        }
    }
    out
}

/// A request with token counts drawn from `lengths` (prompt, output) sent at `arrival_ns` that gets a batch slot
/// at `begin_ns`, with `busy` requests in the batch (itself included): prefill and decode slow down with the batch
/// as a fraction of the deployment's slots.
pub(super) fn serve(
    deployment: &Deployment,
    lengths: [(u32, u32); 2],
    (arrival_ns, begin_ns): (i64, i64),
    busy: usize,
    rng: &mut DemoRng,
) -> Request {
    let fill = busy as f64 / deployment.slots as f64;
    let prompt_tokens = rng.int_range(lengths[0].0, lengths[0].1);
    let completion_tokens = rng.int_range(lengths[1].0, lengths[1].1);
    let prefill_s = f64::from(prompt_tokens)
        * deployment.prefill_s_per_token
        * (1.0 + 0.5 * fill)
        * jitter(rng, 0.15);
    let tpot_s = deployment.tpot_s * (1.0 + deployment.tpot_growth * fill) * jitter(rng, 0.06);
    let after_first = completion_tokens - 1;
    let itls_ns = (0..after_first.div_ceil(STREAM_INTERVAL_TOKENS))
        .map(|chunk| {
            let tokens = (after_first - chunk * STREAM_INTERVAL_TOKENS).min(STREAM_INTERVAL_TOKENS);
            ns(f64::from(tokens) * tpot_s * rng.range(0.9, 1.1))
        })
        .collect();
    Request {
        start_ns: arrival_ns,
        prompt_tokens,
        completion_tokens,
        outcome: Outcome::Ok {
            ttft_ns: begin_ns - arrival_ns + ns(prefill_s),
            itls_ns,
        },
    }
}

/// The random dataset's length range for `--random-range-ratio`.
fn range(target: u32) -> (u32, u32) {
    let target = f64::from(target);
    (
        (target * (1.0 - RANGE_RATIO)).round() as u32,
        (target * (1.0 + RANGE_RATIO)).round() as u32,
    )
}

//! The SGLang engine as `python -m sglang.bench_serving` JSONL with `--output-details`: one file per (model,
//! workload), `external/sglang/<model>-<workload>.jsonl`, holding one line per benchmark run in N-then-rep order
//! (a shell loop over `--max-concurrency` with `--output-file` fixed, three runs each, appending).
//!
//! Each line is the `result | result_details` dict of `benchmark()` in `sglang/benchmark/serving.py`, written with
//! `json.dumps` (so `request_rate` is the bare `Infinity` literal), with the aggregates of `calculate_metrics` in ms.
//! The line has no model key: the model is in `server_info` (`model_path`, and `served_model_name` set to the V3
//! name). There is no per-request latency array; a request's wall time is `ttfts[i] + sum(itls[i])`, which equals
//! the V3 wall time here. The tool's own `*_e2e_latency_ms` also count the final `[DONE]` line, a fraction of a
//! millisecond later, so reported and recomputed latencies differ slightly, as they do in real files.

use super::pyjson::{Json, Obj, PYTHON_LINE};
use super::{
    Cell, Outcome, STREAM_INTERVAL_TOKENS, Stats, epoch_ns, generated_text, pause_ns, seconds,
};
use crate::random::DemoRng;

/// The first server launch of the SGLang runs (UTC).
const RUNS_START: ((i64, u32, u32), (u32, u32, u32)) = ((2026, 6, 17), (10, 2, 41));

/// A request the server rejected mid-run: the current client's `reason + ": " + body`.
const ABORTED: &str = "Internal Server Error: {\"object\": \"error\", \"message\": \"The request was aborted: it was retracted because the KV cache ran out and it timed out waiting to be scheduled again.\", \"type\": \"InternalServerError\", \"param\": null, \"code\": 500}";

/// Every file of the SGLang tree.
pub(super) fn files(cells: &[Cell], seed: u64) -> super::Files {
    let mut rng = DemoRng::new(seed, "external/sglang/runs");
    let mut clock_ns = epoch_ns(RUNS_START.0, RUNS_START.1);
    let mut out = Vec::new();
    for series in cells.chunk_by(|a, b| a.series_name() == b.series_name()) {
        // One server per (model, workload) file: launch, weights, CUDA graphs, health check.
        clock_ns += pause_ns(&mut rng, 110.0, 240.0);
        let mut text = String::new();
        for cell in series {
            // Each run is a new `bench_serving` process: tokenizer, dataset, one unrecorded warm-up request.
            clock_ns += pause_ns(&mut rng, 6.0, 12.0);
            let (line, end_ns) = line(cell, clock_ns, &mut rng);
            text.push_str(&Json::from(line).to_text(PYTHON_LINE));
            text.push('\n');
            clock_ns = end_ns;
        }
        out.push((
            format!("external/sglang/{}.jsonl", series[0].series_name()),
            text.into_bytes(),
        ));
    }
    out
}

/// A successful request as `calculate_metrics` uses it: start (s, relative), ttft (s), chunk gaps (s), latency
/// (s, including the `[DONE]` line) and output tokens.
struct Done {
    start_s: f64,
    ttft_s: f64,
    gaps_s: Vec<f64>,
    latency_s: f64,
    output_tokens: u32,
}

/// The requests of one run as the benchmark client saw them: the line's per-request lists, the successful
/// requests, the re-tokenized output count and when the last request ended.
#[derive(Default)]
struct Seen {
    input_lens: Vec<Json>,
    output_lens: Vec<Json>,
    ttfts: Vec<Json>,
    itls: Vec<Json>,
    texts: Vec<Json>,
    errors: Vec<Json>,
    done: Vec<Done>,
    retokenized: u32,
    last_end_ns: i64,
}

/// One benchmark run starting at `bench_start_ns` (epoch): its JSONL line and when it ended.
fn line(cell: &Cell, bench_start_ns: i64, rng: &mut DemoRng) -> (Obj, i64) {
    let first_ns = bench_start_ns + pause_ns(rng, 0.0005, 0.0012);
    let seen = seen(cell, first_ns, rng);
    let done = &seen.done;
    let bench_end_ns = seen.last_end_ns + pause_ns(rng, 0.0002, 0.0009);
    let duration_s = seconds(bench_end_ns - bench_start_ns);
    let completed = done.len() as i64;
    let total_input: i64 = cell
        .requests
        .iter()
        .filter(|r| r.is_ok())
        .map(|r| i64::from(r.prompt_tokens))
        .sum();
    let total_output: i64 = done.iter().map(|d| i64::from(d.output_tokens)).sum();
    let (peak_tokens, peak_concurrency) = peaks(done);
    let workload = cell.workload;

    let mut result = Obj::new();
    result
        .put("tag", Json::Null)
        .put("backend", "sglang")
        .put("dataset_name", "random")
        .put("request_rate", f64::INFINITY)
        .put("max_concurrency", cell.n)
        .put("sharegpt_output_len", Json::Null)
        .put("random_input_len", workload.prompt_target_tokens)
        .put("random_output_len", workload.max_new_tokens)
        .put("random_range_ratio", 1.0)
        .put("server_info", server_info(cell, total_output, duration_s))
        .put("duration", duration_s)
        .put("completed", completed)
        .put("total_input_tokens", total_input)
        .put("total_input_text_tokens", total_input)
        .put("total_input_vision_tokens", 0i64)
        .put("total_output_tokens", total_output)
        .put(
            "total_output_tokens_retokenized",
            i64::from(seen.retokenized),
        )
        .put("request_throughput", completed as f64 / duration_s)
        .put("input_throughput", total_input as f64 / duration_s)
        .put("output_throughput", total_output as f64 / duration_s)
        .put(
            "total_throughput",
            (total_input + total_output) as f64 / duration_s,
        );
    let latency_sum_s = put_latency_stats(&mut result, done);
    result
        .put("concurrency", latency_sum_s / duration_s)
        .put("accept_length", Json::Null)
        .put("max_output_tokens_per_s", peak_tokens)
        .put("max_concurrent_requests", peak_concurrency)
        .put("input_lens", Json::Array(seen.input_lens))
        .put("output_lens", Json::Array(seen.output_lens))
        .put("ttfts", Json::Array(seen.ttfts))
        .put("itls", Json::Array(seen.itls))
        .put("generated_texts", Json::Array(seen.texts))
        .put("errors", Json::Array(seen.errors));
    (result, bench_end_ns)
}

/// Replays the cell's requests from `first_ns` (epoch), taking each success's latency overhead, generated text
/// and re-tokenized count from `rng` in request order.
fn seen(cell: &Cell, first_ns: i64, rng: &mut DemoRng) -> Seen {
    let mut seen = Seen {
        last_end_ns: first_ns,
        ..Seen::default()
    };
    for request in &cell.requests {
        let start_ns = first_ns + request.start_ns;
        seen.input_lens.push(Json::from(request.prompt_tokens));
        match &request.outcome {
            Outcome::Ok { ttft_ns, itls_ns } => {
                let latency_ns = request.duration_ns() + pause_ns(rng, 0.00008, 0.0004);
                let gaps_s: Vec<f64> = itls_ns.iter().map(|gap| seconds(*gap)).collect();
                seen.output_lens.push(Json::from(request.completion_tokens));
                seen.ttfts.push(Json::from(seconds(*ttft_ns)));
                seen.itls.push(Json::from(gaps_s.clone()));
                seen.texts
                    .push(Json::from(generated_text(request.completion_tokens, rng)));
                seen.errors.push(Json::from(""));
                // Re-tokenizing the generated text rarely gives back exactly the server's count.
                seen.retokenized += request
                    .completion_tokens
                    .saturating_sub(rng.int_range(0, 2));
                seen.done.push(Done {
                    start_s: seconds(start_ns - first_ns),
                    ttft_s: seconds(*ttft_ns),
                    gaps_s,
                    latency_s: seconds(latency_ns),
                    output_tokens: request.completion_tokens,
                });
                seen.last_end_ns = seen.last_end_ns.max(start_ns + latency_ns);
            }
            Outcome::Failed { after_ns } => {
                seen.output_lens.push(Json::from(0u32));
                seen.ttfts.push(Json::from(0.0));
                seen.itls.push(Json::Array(Vec::new()));
                seen.texts.push(Json::from(""));
                seen.errors.push(Json::from(ABORTED));
                seen.last_end_ns = seen.last_end_ns.max(start_ns + after_ns);
            }
        }
    }
    seen
}

/// Mean, median, standard deviation, p90, p95 and p99 (ms) of end-to-end latency, TTFT, TPOT and ITL; returns
/// the sum of the end-to-end latencies (s).
fn put_latency_stats(result: &mut Obj, done: &[Done]) -> f64 {
    let e2e = Stats::of(done.iter().map(|d| d.latency_s));
    let ttft = Stats::of(done.iter().map(|d| d.ttft_s));
    let tpot = Stats::of(
        done.iter()
            .filter(|d| d.output_tokens > 1)
            .map(|d| (d.latency_s - d.ttft_s) / f64::from(d.output_tokens - 1)),
    );
    let itl = Stats::of(done.iter().flat_map(|d| d.gaps_s.iter().copied()));
    for (name, stats) in [
        ("e2e_latency", &e2e),
        ("ttft", &ttft),
        ("tpot", &tpot),
        ("itl", &itl),
    ] {
        stats.put_ms(result, name, &[90, 95, 99]);
    }
    e2e.sum()
}

/// The line's `server_info`: the launch arguments of `sglang.launch_server` and the last generation throughput.
fn server_info(cell: &Cell, total_output: i64, duration_s: f64) -> Obj {
    let mut server_info = Obj::new();
    server_info
        .put("model_path", cell.model.hf_id)
        .put("tokenizer_path", cell.model.hf_id)
        .put("tokenizer_mode", "auto")
        .put("load_format", "auto")
        .put("trust_remote_code", false)
        .put("dtype", "auto")
        .put("context_length", Json::Null)
        .put("served_model_name", cell.model.name)
        .put("host", "0.0.0.0")
        .put("port", 30000u32)
        .put("mem_fraction_static", 0.88)
        .put("max_running_requests", Json::Null)
        .put("chunked_prefill_size", 8192u32)
        .put("max_prefill_tokens", 16384u32)
        .put("schedule_policy", "fcfs")
        .put("schedule_conservativeness", 1.0)
        .put("tp_size", 1u32)
        .put("dp_size", 1u32)
        .put("stream_interval", STREAM_INTERVAL_TOKENS)
        .put("stream_output", false)
        .put("random_seed", 893_402_116i64)
        .put("attention_backend", "flashinfer")
        .put("sampling_backend", "flashinfer")
        .put("disable_radix_cache", false)
        .put("enable_torch_compile", false)
        .put(
            "internal_states",
            vec![{
                let mut state = Obj::new();
                state.put(
                    "last_gen_throughput",
                    (total_output as f64 / duration_s * 100.0).round() / 100.0,
                );
                Json::from(state)
            }],
        )
        .put("version", "0.5.1");
    server_info
}

/// `max_output_tokens_per_s` and `max_concurrent_requests` as SGLang's `calculate_metrics` computes them: both from
/// one-second buckets counted from the earliest start (each streamed chunk counts as one token; a request counts
/// in every bucket from its start's to its end's, inclusive).
fn peaks(done: &[Done]) -> (f64, i64) {
    if done.is_empty() {
        return (0.0, 0);
    }
    let min_start = done.iter().map(|d| d.start_s).fold(f64::INFINITY, f64::min);
    let max_end = done
        .iter()
        .map(|d| d.start_s + d.latency_s)
        .fold(f64::NEG_INFINITY, f64::max);
    let buckets = (max_end - min_start).ceil() as usize + 1;
    let mut tokens = vec![0.0f64; buckets];
    let mut concurrent = vec![0i64; buckets];
    for d in done {
        let mut time = d.start_s + d.ttft_s;
        let mut add = |time: f64| {
            let bucket = (time - min_start).trunc();
            if bucket >= 0.0 && (bucket as usize) < buckets {
                tokens[bucket as usize] += 1.0;
            }
        };
        add(time);
        for gap in &d.gaps_s {
            time += gap;
            add(time);
        }
        let first = (d.start_s - min_start).trunc() as usize;
        let last = (d.start_s + d.latency_s - min_start).trunc() as usize;
        for slot in concurrent.iter_mut().take(last + 1).skip(first) {
            *slot += 1;
        }
    }
    (
        tokens.into_iter().fold(0.0, f64::max),
        concurrent.into_iter().max().unwrap_or(0),
    )
}

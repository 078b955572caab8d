//! The vLLM engine as `vllm bench sweep serve` experiments, one per (model, workload):
//! `external/vllm-sweep/<model>-<workload>/SERVE--stream_interval=16-BENCH--max_concurrency=<N>/` holding
//! `warmup.json`, `run=0.json` … `run=2.json` (the reps) and `summary.json`.
//!
//! Each run file is what `vllm bench serve --save-result --save-detailed --percentile-metrics ttft,tpot,itl,e2el
//! --metadata workload=<name>` writes (`main_async` and `benchmark` in `vllm/benchmarks/serve.py`: setup keys, the
//! metadata as strings, traffic keys, then the result in `benchmark`'s order, then the aggregates of
//! `process_one_metric` in ms), re-written by the sweep with `indent=4` and `run_number` plus the serve and bench
//! overrides merged in (`_update_run_data` in `vllm/benchmarks/sweep/serve.py`). The sweep's `warmup.json` is a
//! whole benchmark run of `--warmup-num-prompts` requests with `run_number` −1, and `summary.json` is the JSON
//! array of the three run dicts. The experiment-level `summary.csv` is left out: it is derived from the same runs.
//!
//! `model_id` is the V3 model name, as when the server runs with `--served-model-name` and the benchmark is given
//! the same `--model` (the Hugging Face id goes to `--tokenizer`), so `{model_id}` maps straight onto the V3 names.

use super::pyjson::{Json, Obj, PYTHON_INDENT_4};
use super::{
    Cell, Outcome, Request, STREAM_INTERVAL_TOKENS, Stats, epoch_ns, generated_text, pause_ns,
    seconds,
};
use crate::calendar::{UTC, compact_stamp};
use crate::random::DemoRng;

/// The sweep started on this UTC wall-clock time.
const SWEEP_START: ((i64, u32, u32), (u32, u32, u32)) = ((2026, 6, 16), (9, 14, 5));
/// `time.perf_counter()` counts from boot on Linux: the client machine had been up this long at the sweep start.
const UPTIME_AT_START_NS: i64 = 264_437_118_503_221;

/// What a request that never got a response leaves in `errors`: the traceback `async_request_openai_completions`
/// formats when the server drops the connection.
const DISCONNECTED: &str = "Traceback (most recent call last):\n  File \"/usr/local/lib/python3.12/dist-packages/vllm/benchmarks/lib/endpoint_request_func.py\", line 146, in async_request_openai_completions\n    async with session.post(url=api_url, json=payload, headers=headers) as response:\n               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/usr/local/lib/python3.12/dist-packages/aiohttp/client.py\", line 1425, in __aenter__\n    self._resp: _RetType = await self._coro\n                           ^^^^^^^^^^^^^^^^\n  File \"/usr/local/lib/python3.12/dist-packages/aiohttp/client.py\", line 730, in _request\n    await resp.start(conn)\n  File \"/usr/local/lib/python3.12/dist-packages/aiohttp/client_reqrep.py\", line 1059, in start\n    message, payload = await protocol.read()  # type: ignore[union-attr]\n                       ^^^^^^^^^^^^^^^^^^^^^\n  File \"/usr/local/lib/python3.12/dist-packages/aiohttp/streams.py\", line 672, in read\n    await self._waiter\naiohttp.client_exceptions.ServerDisconnectedError: Server disconnected\n";

/// Every file of the vLLM tree, in sweep order.
pub(super) fn files(cells: &[Cell], seed: u64) -> super::Files {
    let mut rng = DemoRng::new(seed, "external/vllm/sweep");
    let start_ns = epoch_ns(SWEEP_START.0, SWEEP_START.1);
    let boot_ns = start_ns - UPTIME_AT_START_NS;
    let mut clock_ns = start_ns;
    let mut out = Vec::new();
    for series in cells.chunk_by(|a, b| a.series_name() == b.series_name()) {
        // One `vllm bench sweep serve` per (model, workload): the server starts once and passes its health check.
        clock_ns += pause_ns(&mut rng, 70.0, 140.0);
        let experiment = format!("external/vllm-sweep/{}", series[0].series_name());
        for same_n in series.chunk_by(|a, b| a.n == b.n) {
            let n = same_n[0].n;
            let dir = format!(
                "{experiment}/SERVE--stream_interval={STREAM_INTERVAL_TOKENS}-BENCH--max_concurrency={n}"
            );
            // Each run is a `vllm bench serve` subprocess: imports, tokenizer, dataset and its test prompt first.
            clock_ns += pause_ns(&mut rng, 8.0, 14.0);
            let (mut warmup, end_ns) = result(
                &same_n[0],
                &same_n[0].warmup,
                clock_ns,
                boot_ns,
                Times::Exact,
                &mut rng,
            );
            sweep_merge(&mut warmup, &same_n[0], -1);
            out.push((format!("{dir}/warmup.json"), text(&warmup.into())));
            clock_ns = end_ns;
            let mut summary = Vec::with_capacity(same_n.len());
            for cell in same_n {
                clock_ns += pause_ns(&mut rng, 8.0, 14.0);
                let (mut result, end_ns) = result(
                    cell,
                    &cell.requests,
                    clock_ns,
                    boot_ns,
                    Times::Exact,
                    &mut rng,
                );
                sweep_merge(&mut result, cell, i64::from(cell.rep));
                out.push((
                    format!("{dir}/run={}.json", cell.rep),
                    text(&result.clone().into()),
                ));
                summary.push(Json::from(result));
                clock_ns = end_ns;
            }
            out.push((format!("{dir}/summary.json"), text(&Json::Array(summary))));
        }
    }
    out
}

/// `json.dump(run_data, f, indent=4)`: no trailing newline.
fn text(value: &Json) -> Vec<u8> {
    value.to_text(PYTHON_INDENT_4).into_bytes()
}

/// How the per-request times of a result are turned into the floats the file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Times {
    /// Each interval in seconds from its exact nanoseconds (`0.011874916`): short, readable demo files.
    Exact,
    /// As `endpoint_request_func.py` computes them: differences of `time.perf_counter()` readings as floats
    /// (`0.011874916031956673`), so the text is as long as the tool's.
    PerfCounter,
}

/// The sweep's merge into a run's dict: `run_number` first, then the serve overrides, then the bench overrides
/// (dict updates, `_update_run_data` in `vllm/benchmarks/sweep/serve.py`).
fn sweep_merge(result: &mut Obj, cell: &Cell, run_number: i64) {
    result
        .set("run_number", run_number)
        .set("stream_interval", STREAM_INTERVAL_TOKENS)
        .set("max_concurrency", cell.n);
}

/// A successful request as `calculate_metrics` sees it: start (s since boot), TTFT (s), inter-token gaps (s),
/// latency (s) and output tokens.
type OkRequest = (f64, f64, Vec<f64>, f64, u32);

/// The per-request lists of the result dict, in request order.
#[derive(Default)]
struct Columns {
    input_lens: Vec<Json>,
    output_lens: Vec<Json>,
    ttfts: Vec<Json>,
    itls: Vec<Json>,
    latencies: Vec<Json>,
    start_times: Vec<Json>,
    queue_times: Vec<Json>,
    texts: Vec<Json>,
    errors: Vec<Json>,
}

/// The clocks of one run: when its first request went out, the earliest planned start, and the epochs of the
/// benchmark's start and of `time.perf_counter()`'s 0.
#[derive(Clone, Copy)]
struct RunClock {
    first_ns: i64,
    origin_ns: i64,
    bench_start_ns: i64,
    boot_ns: i64,
}

impl RunClock {
    /// When `request` went out (epoch ns).
    fn start_epoch(&self, request: &Request) -> i64 {
        self.first_ns + request.start_ns - self.origin_ns
    }
}

/// One `vllm bench serve --save-result --save-detailed` run starting at `bench_start_ns` (epoch): the result dict
/// as `main_async` writes it, and when the run ended. `boot_ns` is the epoch at which `time.perf_counter()` read 0.
pub(super) fn result(
    cell: &Cell,
    requests: &[Request],
    bench_start_ns: i64,
    boot_ns: i64,
    times: Times,
    rng: &mut DemoRng,
) -> (Obj, i64) {
    // The first request goes out once its task gets the semaphore, a moment after `benchmark_start_time`.
    let first_ns = bench_start_ns + pause_ns(rng, 0.0006, 0.0012);
    let origin_ns = requests.iter().map(|r| r.start_ns).min().unwrap_or(0);
    let clock = RunClock {
        first_ns,
        origin_ns,
        bench_start_ns,
        boot_ns,
    };
    let last_end_ns = requests
        .iter()
        .map(|r| first_ns - origin_ns + r.end_ns())
        .max()
        .unwrap_or(first_ns);
    let bench_end_ns = last_end_ns + pause_ns(rng, 0.0002, 0.0009);
    let duration_s = seconds(bench_end_ns - bench_start_ns);

    let (columns, ok) = columns(requests, clock, times, rng);
    let completed = ok.len() as i64;
    let failed = requests.len() as i64 - completed;
    let total_input: i64 = requests
        .iter()
        .filter(|r| r.is_ok())
        .map(|r| i64::from(r.prompt_tokens))
        .sum();
    let total_output: i64 = ok.iter().map(|o| i64::from(o.4)).sum();
    let (peak_tokens, peak_concurrency) = peaks(&ok);

    let mut result = Obj::new();
    result
        .put("date", compact_stamp(UTC, seconds(bench_end_ns)))
        .put("endpoint_type", "openai")
        .put("backend", "openai")
        .put("label", Json::Null)
        .put("model_id", cell.model.name)
        .put("tokenizer_id", cell.model.hf_id)
        .put("num_prompts", requests.len() as i64)
        .put("workload", cell.workload.name)
        .put("request_rate", "inf")
        .put("burstiness", 1.0)
        .put("max_concurrency", cell.n)
        .put("duration", duration_s)
        .put("completed", completed)
        .put("failed", failed)
        .put("total_input_tokens", total_input)
        .put("total_output_tokens", total_output)
        .put("request_throughput", completed as f64 / duration_s)
        .put("request_goodput", Json::Null)
        .put("output_throughput", total_output as f64 / duration_s)
        .put(
            "total_token_throughput",
            (total_input + total_output) as f64 / duration_s,
        );
    put_columns(&mut result, columns);
    result
        .put("max_output_tokens_per_s", peak_tokens)
        .put("max_concurrent_requests", peak_concurrency)
        .put("rtfx", 0.0);
    put_metric_stats(&mut result, &ok);
    (result, bench_end_ns)
}

/// The result dict's per-request lists and the successful requests, taking each success's generated text from
/// `rng` in request order.
fn columns(
    requests: &[Request],
    clock: RunClock,
    times: Times,
    rng: &mut DemoRng,
) -> (Columns, Vec<OkRequest>) {
    let mut columns = Columns::default();
    let mut ok: Vec<OkRequest> = Vec::new();
    for (index, request) in requests.iter().enumerate() {
        let start_s = seconds(clock.start_epoch(request) - clock.boot_ns);
        // All tasks are created at once (request rate inf) and wait for the semaphore: the wait is the queue time.
        let arrival_ns = clock.bench_start_ns + 18_000 * index as i64;
        columns.input_lens.push(Json::from(request.prompt_tokens));
        columns.start_times.push(Json::from(start_s));
        columns.queue_times.push(Json::from(seconds(
            (clock.start_epoch(request) - arrival_ns).max(1_000),
        )));
        match &request.outcome {
            Outcome::Ok { ttft_ns, itls_ns } => {
                let (ttft_s, gaps, latency_s) =
                    ok_times(request, clock, times, start_s, *ttft_ns, itls_ns);
                columns
                    .output_lens
                    .push(Json::from(request.completion_tokens));
                columns.ttfts.push(Json::from(ttft_s));
                columns.itls.push(Json::from(gaps.clone()));
                columns.latencies.push(Json::from(latency_s));
                columns
                    .texts
                    .push(Json::from(generated_text(request.completion_tokens, rng)));
                columns.errors.push(Json::from(""));
                ok.push((start_s, ttft_s, gaps, latency_s, request.completion_tokens));
            }
            Outcome::Failed { .. } => {
                columns.output_lens.push(Json::from(0u32));
                columns.ttfts.push(Json::from(0.0));
                columns.itls.push(Json::Array(Vec::new()));
                columns.latencies.push(Json::from(0.0));
                columns.texts.push(Json::from(""));
                columns.errors.push(Json::from(DISCONNECTED));
            }
        }
    }
    (columns, ok)
}

/// A successful request's TTFT, inter-token gaps and latency (s), exact or as `time.perf_counter()` reads them.
fn ok_times(
    request: &Request,
    clock: RunClock,
    times: Times,
    start_s: f64,
    ttft_ns: i64,
    itls_ns: &[i64],
) -> (f64, Vec<f64>, f64) {
    match times {
        Times::Exact => (
            seconds(ttft_ns),
            itls_ns
                .iter()
                .map(|gap| seconds(*gap))
                .collect::<Vec<f64>>(),
            seconds(request.duration_ns()),
        ),
        Times::PerfCounter => {
            // `st = time.perf_counter()`, then `timestamp - st` for the first chunk, `timestamp -
            // most_recent_timestamp` for each later one, and `most_recent_timestamp - st` at the end.
            let sent_ns = clock.start_epoch(request) - clock.boot_ns;
            let mut previous = seconds(sent_ns + ttft_ns);
            let mut at_ns = sent_ns + ttft_ns;
            let gaps = itls_ns
                .iter()
                .map(|gap| {
                    at_ns += gap;
                    let now = seconds(at_ns);
                    let gap = now - previous;
                    previous = now;
                    gap
                })
                .collect::<Vec<f64>>();
            (
                seconds(sent_ns + ttft_ns) - start_s,
                gaps,
                previous - start_s,
            )
        }
    }
}

/// The per-request lists, from `input_lens` to `errors`.
fn put_columns(result: &mut Obj, columns: Columns) {
    result
        .put("input_lens", Json::Array(columns.input_lens))
        .put("output_lens", Json::Array(columns.output_lens))
        .put("ttfts", Json::Array(columns.ttfts))
        .put("itls", Json::Array(columns.itls))
        .put("latencies", Json::Array(columns.latencies))
        .put("start_times", Json::Array(columns.start_times))
        .put("queue_times", Json::Array(columns.queue_times))
        .put("generated_texts", Json::Array(columns.texts))
        .put("errors", Json::Array(columns.errors));
}

/// Mean, median, standard deviation and p99 (ms) of TTFT, TPOT, ITL and end-to-end latency.
fn put_metric_stats(result: &mut Obj, ok: &[OkRequest]) {
    let tpots = ok
        .iter()
        .filter(|o| o.4 > 1)
        .map(|o| (o.3 - o.1) / f64::from(o.4 - 1));
    let metrics: [(&str, Stats); 4] = [
        ("ttft", Stats::of(ok.iter().map(|o| o.1))),
        ("tpot", Stats::of(tpots)),
        (
            "itl",
            Stats::of(ok.iter().flat_map(|o| o.2.iter().copied())),
        ),
        ("e2el", Stats::of(ok.iter().map(|o| o.3))),
    ];
    for (name, stats) in metrics {
        stats.put_ms(result, name, &[99]);
    }
}

/// `max_output_tokens_per_s` (each streamed chunk counts as one token in one-second buckets from the first start)
/// and `max_concurrent_requests` (the sweep line over half-open [start, end) intervals, ends first on ties), as
/// `calculate_metrics` computes them over the successful requests.
fn peaks(ok: &[OkRequest]) -> (f64, i64) {
    if ok.is_empty() {
        return (0.0, 0);
    }
    let min_start = ok.iter().map(|o| o.0).fold(f64::INFINITY, f64::min);
    let max_end = ok
        .iter()
        .map(|o| o.0 + o.3)
        .fold(f64::NEG_INFINITY, f64::max);
    let buckets = (max_end - min_start).ceil() as usize + 1;
    let mut tokens = vec![0.0f64; buckets];
    for (start, ttft, gaps, _, _) in ok {
        let mut time = start + ttft;
        let mut add = |time: f64| {
            let bucket = (time - min_start).trunc();
            if bucket >= 0.0 && (bucket as usize) < buckets {
                tokens[bucket as usize] += 1.0;
            }
        };
        add(time);
        for gap in gaps {
            time += gap;
            add(time);
        }
    }
    let mut events: Vec<(f64, i64)> = ok
        .iter()
        .flat_map(|o| [(o.0, 1), (o.0 + o.3, -1)])
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut current = 0;
    let mut peak = 0;
    for (_, delta) in events {
        current += delta;
        peak = peak.max(current);
    }
    (tokens.into_iter().fold(0.0, f64::max), peak)
}

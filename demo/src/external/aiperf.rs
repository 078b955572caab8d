//! The TGI engine as AIPerf (v0.10) multi-trial concurrency sweeps in the default "repeated" mode, one per (model,
//! workload): `external/aiperf-sweep/<model>-<workload>/profile_runs/trial_000<k>/concurrency_<N>/` holding
//! `profile_export.jsonl` (one record per request) and `profile_export_aiperf.json` (the summary), for trials 1–3
//! (the reps 0–2 of the V3 rows) and N = 1 … 16.
//!
//! Layout and the trials-outer, concurrency-inner order follow AIPerf's sweep documentation
//! (`docs/api/sweep-aggregates.md`) and its orchestrator, which also runs the warm-up phase only in the first
//! trial of each concurrency; the derived `aggregate/` and `sweep_aggregate/` files and the summary CSV are left
//! out. Records use the metric tags of October 2025 onwards (`time_to_first_token`, `time_to_second_token`), values
//! in ms, metadata timestamps in epoch ns; warm-up records carry `benchmark_phase: "warmup"` and must be dropped.
//! The summary has the v0.10 shape (`schema_version` 1.3, metric objects with count and sum, `input_config` with
//! `models.items` and `phases`); its statistics are numpy's (linear percentiles, population std) over the
//! profiling phase's successful records. Model names are the Hugging Face ids, as an AIPerf user passes them.

use super::pyjson::{Json, Obj, PYDANTIC_INDENT_2, PYDANTIC_LINE};
use super::{Cell, NS, Outcome, Request, Stats, epoch_ns, hex, pause_ns, uuid4};
use crate::calendar::{UTC, iso_naive_micros};
use crate::random::DemoRng;

/// The first TGI launch of the sweeps (UTC).
const SWEEPS_START: ((i64, u32, u32), (u32, u32, u32)) = ((2026, 6, 18), (8, 31, 17));

/// The error TGI returns when generation fails on the server, as AIPerf records it (status, reason, body).
const FAILED_CODE: i64 = 424;
const FAILED_TYPE: &str = "Failed Dependency";
const FAILED_MESSAGE: &str = "{\"error\":\"Request failed during generation: Server error: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.25 GiB of which 12.75 MiB is free.\",\"error_type\":\"generation\"}";

/// Every file of the AIPerf trees.
pub(super) fn files(cells: &[Cell], seed: u64) -> super::Files {
    let mut rng = DemoRng::new(seed, "external/aiperf/sweeps");
    let mut clock_ns = epoch_ns(SWEEPS_START.0, SWEEPS_START.1);
    let mut out = Vec::new();
    for series in cells.chunk_by(|a, b| a.series_name() == b.series_name()) {
        // One TGI server per (model, workload) sweep: launch, weights, warm-up of its own, health check.
        clock_ns += pause_ns(&mut rng, 60.0, 150.0);
        let base = format!("external/aiperf-sweep/{}", series[0].series_name());
        for rep in super::REPS {
            let trial = rep + 1;
            for n in NS {
                let Some(cell) = series.iter().find(|c| c.n == n && c.rep == rep) else {
                    continue;
                };
                // Each (trial, concurrency) run is a subprocess: config, tokenizer, dataset, then its phases.
                clock_ns += pause_ns(&mut rng, 6.0, 12.0);
                let (records, summary, end_ns) =
                    run(cell, trial, clock_ns, &series[0].series_name(), &mut rng);
                let dir = format!("{base}/profile_runs/trial_{trial:04}/concurrency_{n}");
                out.push((format!("{dir}/profile_export.jsonl"), records.into_bytes()));
                out.push((
                    format!("{dir}/profile_export_aiperf.json"),
                    Json::from(summary).to_text(PYDANTIC_INDENT_2).into_bytes(),
                ));
                clock_ns = end_ns;
            }
        }
    }
    out
}

/// Ids that stay the same for every record of one run.
struct RunIds {
    workers: Vec<String>,
    processors: Vec<String>,
}

/// One (trial, concurrency) run from `run_start_ns` (epoch): its JSONL, its summary and when it ended.
fn run(
    cell: &Cell,
    trial: u32,
    run_start_ns: i64,
    series: &str,
    rng: &mut DemoRng,
) -> (String, Obj, i64) {
    let ids = RunIds {
        workers: (0..(cell.n / 2).clamp(1, 8))
            .map(|_| format!("worker_{}", hex(rng, 8)))
            .collect(),
        processors: (0..2)
            .map(|_| format!("record_processor_{}", hex(rng, 8)))
            .collect(),
    };
    let mut text = String::new();
    let mut session = 0usize;
    // The orchestrator runs the warm-up phase in the first trial only.
    let warmup = trial == 1;
    let profile_start_ns = if warmup {
        let (records, end_ns) = phase(
            &cell.warmup,
            run_start_ns,
            "warmup",
            &ids,
            &mut session,
            rng,
        );
        for record in records {
            text.push_str(&record.to_text(PYDANTIC_LINE));
            text.push('\n');
        }
        end_ns + pause_ns(rng, 0.3, 1.0)
    } else {
        run_start_ns
    };
    let (records, profile_end_ns) = phase(
        &cell.requests,
        profile_start_ns,
        "profiling",
        &ids,
        &mut session,
        rng,
    );
    for record in &records {
        text.push_str(&record.to_text(PYDANTIC_LINE));
        text.push('\n');
    }
    let summary = summary(cell, trial, series, &records, warmup, rng);
    (text, summary, profile_end_ns + pause_ns(rng, 0.05, 0.2))
}

/// The records of one phase placed from `first_ns` (epoch), in completion order, and when its last request ended.
fn phase(
    requests: &[Request],
    first_ns: i64,
    name: &str,
    ids: &RunIds,
    session: &mut usize,
    rng: &mut DemoRng,
) -> (Vec<Json>, i64) {
    let origin_ns = requests.iter().map(|r| r.start_ns).min().unwrap_or(0);
    let mut placed: Vec<(i64, Json)> = Vec::with_capacity(requests.len());
    for request in requests {
        let start_ns = first_ns + request.start_ns - origin_ns;
        let end_ns = start_ns + request.duration_ns();
        let (ack_ns, metrics, error) = match &request.outcome {
            Outcome::Ok { ttft_ns, itls_ns } => {
                // Response headers arrive part of the way into prefill, before the first token.
                let ack_ns = start_ns + (*ttft_ns as f64 * rng.range(0.3, 0.6)).round() as i64;
                (ack_ns, ok_metrics(request, *ttft_ns, itls_ns), Json::Null)
            }
            Outcome::Failed { .. } => {
                let mut metrics = Obj::new();
                metrics.put(
                    "error_isl",
                    measure(Json::from(request.prompt_tokens), "tokens"),
                );
                let mut error = Obj::new();
                error
                    .put("code", FAILED_CODE)
                    .put("type", FAILED_TYPE)
                    .put("message", FAILED_MESSAGE);
                (end_ns, metrics, Json::from(error))
            }
        };
        let mut metadata = Obj::new();
        metadata
            .put("session_num", *session as i64)
            .put("x_request_id", uuid4(rng))
            .put("x_correlation_id", uuid4(rng))
            .put("conversation_id", uuid4(rng))
            .put("turn_index", 0i64)
            .put("request_start_ns", start_ns)
            .put("request_ack_ns", ack_ns)
            .put("request_end_ns", end_ns)
            .put(
                "worker_id",
                ids.workers[*session % ids.workers.len()].as_str(),
            )
            .put(
                "record_processor_id",
                ids.processors[*session % ids.processors.len()].as_str(),
            )
            .put("benchmark_phase", name)
            .put("was_cancelled", false)
            .put("cancellation_time_ns", Json::Null);
        *session += 1;
        let mut record = Obj::new();
        record
            .put("metadata", metadata)
            .put("metrics", metrics)
            .put("error", error);
        placed.push((end_ns, record.into()));
    }
    // Records are exported as their responses complete.
    placed.sort_by_key(|(end_ns, _)| *end_ns);
    let last_end_ns = placed.last().map_or(first_ns, |(end_ns, _)| *end_ns);
    (
        placed.into_iter().map(|(_, record)| record).collect(),
        last_end_ns,
    )
}

/// `{"value": …, "unit": …}`.
fn measure(value: Json, unit: &str) -> Json {
    let mut object = Obj::new();
    object.put("value", value).put("unit", unit);
    object.into()
}

/// The per-record metrics of a successful streamed request, in the display units AIPerf exports.
fn ok_metrics(request: &Request, ttft_ns: i64, itls_ns: &[i64]) -> Obj {
    let ms = |ns: i64| ns as f64 / 1e6;
    let latency_ms = ms(request.duration_ns());
    let ttft_ms = ms(ttft_ns);
    let tokens = request.completion_tokens;
    let mut metrics = Obj::new();
    metrics
        .put(
            "input_sequence_length",
            measure(Json::from(request.prompt_tokens), "tokens"),
        )
        .put("time_to_first_token", measure(Json::from(ttft_ms), "ms"))
        .put("request_latency", measure(Json::from(latency_ms), "ms"))
        .put("output_token_count", measure(Json::from(tokens), "tokens"));
    if let Some(first_gap) = itls_ns.first() {
        metrics
            .put(
                "time_to_second_token",
                measure(Json::from(ms(*first_gap)), "ms"),
            )
            .put(
                "inter_chunk_latency",
                measure(
                    Json::from(itls_ns.iter().map(|gap| ms(*gap)).collect::<Vec<f64>>()),
                    "ms",
                ),
            );
    }
    metrics.put(
        "output_sequence_length",
        measure(Json::from(tokens), "tokens"),
    );
    if tokens > 1 {
        let itl_ms = (latency_ms - ttft_ms) / f64::from(tokens - 1);
        metrics
            .put("inter_token_latency", measure(Json::from(itl_ms), "ms"))
            .put(
                "output_token_throughput_per_user",
                measure(Json::from(1000.0 / itl_ms), "tokens/sec/user"),
            );
    }
    metrics
}

/// A metric object of the summary: unit, mean, percentiles, extremes, std, count and sum.
fn distribution(unit: &str, values: &[f64]) -> Json {
    let stats = Stats::of(values.iter().copied());
    let mut object = Obj::new();
    object.put("unit", unit).put("avg", stats.mean());
    for p in [1u32, 5, 10, 25, 50, 75, 90, 95, 99] {
        object.put(&format!("p{p}"), stats.percentile(f64::from(p)));
    }
    object
        .put("min", stats.min())
        .put("max", stats.max())
        .put("std", stats.std())
        .put("count", values.len() as i64)
        .put("sum", stats.sum());
    object.into()
}

/// A scalar metric object: unit and value.
fn scalar(unit: &str, value: f64) -> Json {
    let mut object = Obj::new();
    object.put("unit", unit).put("avg", value);
    object.into()
}

/// A number read back from a record this module wrote.
fn number(record: &Json, path: &[&str]) -> Option<f64> {
    let mut value = record;
    for key in path {
        value = match value {
            Json::Object(object) => object.get(key)?,
            _ => return None,
        };
    }
    match value {
        Json::Int(number) => Some(*number as f64),
        Json::Float(number) => Some(*number),
        _ => None,
    }
}

/// An integer read back from a record this module wrote (the epoch-ns timestamps, which a float would round).
fn integer(record: &Json, path: &[&str]) -> Option<i64> {
    let mut value = record;
    for key in path {
        value = match value {
            Json::Object(object) => object.get(key)?,
            _ => return None,
        };
    }
    match value {
        Json::Int(number) => Some(*number),
        _ => None,
    }
}

fn numbers(record: &Json, path: &[&str]) -> Vec<f64> {
    let mut value = record;
    for key in path {
        value = match value {
            Json::Object(object) => match object.get(key) {
                Some(inner) => inner,
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        };
    }
    match value {
        Json::Array(items) => items
            .iter()
            .filter_map(|item| match item {
                Json::Float(number) => Some(*number),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `profile_export_aiperf.json` of one run, computed from its profiling records.
fn summary(
    cell: &Cell,
    trial: u32,
    series: &str,
    records: &[Json],
    warmup: bool,
    rng: &mut DemoRng,
) -> Obj {
    let ok: Vec<&Json> = records
        .iter()
        .filter(|r| matches!(r, Json::Object(o) if o.get("error") == Some(&Json::Null)))
        .collect();
    let errors = records.len() - ok.len();
    // The profiling phase runs from its first request sent to its last response (failures included).
    let first_ns = records
        .iter()
        .filter_map(|r| integer(r, &["metadata", "request_start_ns"]))
        .min()
        .unwrap_or(0);
    let last_ns = records
        .iter()
        .filter_map(|r| integer(r, &["metadata", "request_end_ns"]))
        .max()
        .unwrap_or(first_ns);
    let duration_s = (last_ns - first_ns) as f64 / 1e9;
    let benchmark_id = hex(rng, 12);

    let mut summary = Obj::new();
    let total_tokens = put_metrics(&mut summary, &ok, errors, duration_s, &benchmark_id);
    summary
        .put("input_config", input_config(cell, series, warmup))
        .put("run_info", run_info(&benchmark_id, trial, series))
        .put("was_cancelled", false)
        .put("error_summary", error_summary(errors))
        .put("start_time", iso_naive_micros(UTC, first_ns as f64 / 1e9))
        .put("end_time", iso_naive_micros(UTC, last_ns as f64 / 1e9))
        .put(
            "total_token_throughput",
            scalar("tokens/sec", total_tokens / duration_s),
        );
    summary
}

/// The values of metric `name` over the successful records.
fn metric(ok: &[&Json], name: &str) -> Vec<f64> {
    ok.iter()
        .filter_map(|r| number(r, &["metrics", name, "value"]))
        .collect()
}

/// The summary's versions and metrics, from `schema_version` to `total_osl`; returns the input and output tokens
/// of the successful records together.
fn put_metrics(
    summary: &mut Obj,
    ok: &[&Json],
    errors: usize,
    duration_s: f64,
    benchmark_id: &str,
) -> f64 {
    let osl = metric(ok, "output_sequence_length");
    let isl = metric(ok, "input_sequence_length");
    let total_osl: f64 = osl.iter().sum();
    let total_isl: f64 = isl.iter().sum();
    let chunks: Vec<f64> = ok
        .iter()
        .flat_map(|r| numbers(r, &["metrics", "inter_chunk_latency", "value"]))
        .collect();
    summary
        .put("schema_version", "1.3")
        .put("aiperf_version", "0.10.0")
        .put("benchmark_id", benchmark_id)
        .put(
            "request_throughput",
            scalar("requests/sec", ok.len() as f64 / duration_s),
        )
        .put(
            "request_latency",
            distribution("ms", &metric(ok, "request_latency")),
        )
        .put("request_count", scalar("requests", ok.len() as f64));
    if errors > 0 {
        summary.put("error_request_count", scalar("requests", errors as f64));
    }
    summary
        .put(
            "time_to_first_token",
            distribution("ms", &metric(ok, "time_to_first_token")),
        )
        .put(
            "time_to_second_token",
            distribution("ms", &metric(ok, "time_to_second_token")),
        )
        .put(
            "inter_token_latency",
            distribution("ms", &metric(ok, "inter_token_latency")),
        )
        .put(
            "output_token_throughput",
            scalar("tokens/sec", total_osl / duration_s),
        )
        .put(
            "output_token_throughput_per_user",
            distribution(
                "tokens/sec/user",
                &metric(ok, "output_token_throughput_per_user"),
            ),
        )
        .put("output_sequence_length", distribution("tokens", &osl))
        .put("input_sequence_length", distribution("tokens", &isl))
        .put(
            "output_token_count",
            distribution("tokens", &metric(ok, "output_token_count")),
        )
        .put("inter_chunk_latency", distribution("ms", &chunks))
        .put("total_output_tokens", scalar("tokens", total_osl))
        .put("benchmark_duration", scalar("sec", duration_s))
        .put("total_isl", scalar("tokens", total_isl))
        .put("total_osl", scalar("tokens", total_osl));
    total_isl + total_osl
}

/// The summary's `input_config`: model, endpoint, dataset, phases, artifacts, tokenizer and runtime.
fn input_config(cell: &Cell, series: &str, warmup: bool) -> Obj {
    let model = cell.model.hf_id;
    let mut item = Obj::new();
    item.put("name", model);
    let mut models = Obj::new();
    models.put("items", vec![Json::from(item)]);
    let mut endpoint = Obj::new();
    endpoint
        .put("urls", vec!["http://localhost:8080"])
        .put("type", "chat")
        .put("streaming", true);
    let mut isl_config = Obj::new();
    isl_config.put("mean", cell.workload.prompt_target_tokens);
    let mut osl_config = Obj::new();
    osl_config.put("mean", cell.workload.max_new_tokens);
    let mut prompts = Obj::new();
    prompts.put("isl", isl_config).put("osl", osl_config);
    let mut dataset = Obj::new();
    dataset
        .put("name", "main")
        .put("type", "synthetic")
        .put("entries", cell.requests.len() as i64)
        .put("random_seed", 42i64)
        .put("prompts", prompts);
    let mut artifacts = Obj::new();
    artifacts
        .put("dir", format!("artifacts/tgi-{series}"))
        .put("records", vec!["jsonl"])
        .put("auto_plot", false)
        .put("plot_required", false);
    let mut tokenizer = Obj::new();
    tokenizer.put("name", model);
    let mut runtime = Obj::new();
    runtime.put("ui", "none");
    let mut input_config = Obj::new();
    input_config
        .put("models", models)
        .put("endpoint", endpoint)
        .put("datasets", vec![Json::from(dataset)])
        .put("phases", phases(cell, warmup))
        .put("artifacts", artifacts)
        .put("tokenizer", tokenizer)
        .put("runtime", runtime);
    input_config
}

/// The configured phases: the warm-up (first trial only), then profiling.
fn phases(cell: &Cell, warmup: bool) -> Vec<Json> {
    let mut phases = Vec::new();
    if warmup {
        let mut phase = Obj::new();
        phase
            .put("name", "warmup")
            .put("type", "concurrency")
            .put("exclude_from_results", true)
            .put("requests", cell.warmup.len() as i64)
            .put("concurrency", cell.n);
        phases.push(Json::from(phase));
    }
    let mut profiling = Obj::new();
    profiling
        .put("name", "profiling")
        .put("type", "concurrency")
        .put("requests", cell.requests.len() as i64)
        .put("concurrency", cell.n);
    phases.push(profiling.into());
    phases
}

/// The summary's `run_info`: the benchmark, seed, trial (0-based) and command line.
fn run_info(benchmark_id: &str, trial: u32, series: &str) -> Obj {
    let mut run_info = Obj::new();
    run_info
        .put("benchmark_id", benchmark_id)
        .put("random_seed", 42i64)
        .put("trial", i64::from(trial - 1))
        .put(
            "cli_command",
            format!("aiperf profile --config-file 'sweeps/tgi-{series}.yaml'"),
        );
    run_info
}

/// The summary's `error_summary`: one entry for the failed requests, if any.
fn error_summary(errors: usize) -> Vec<Json> {
    let mut error_summary = Vec::new();
    if errors > 0 {
        let mut details = Obj::new();
        details
            .put("code", FAILED_CODE)
            .put("type", FAILED_TYPE)
            .put("message", FAILED_MESSAGE);
        let mut entry = Obj::new();
        entry
            .put("error_details", details)
            .put("count", errors as i64);
        error_summary.push(Json::from(entry));
    }
    error_summary
}

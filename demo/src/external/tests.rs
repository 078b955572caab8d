//! Tests of the external sweep: every file parses the way its format says, the per-request arrays agree, the
//! warm-up and failure conventions hold, the numbers stay close to the V3 demo's, and the bytes are deterministic.

use super::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The files for seed 164, generated once for all tests.
fn generated() -> &'static BTreeMap<String, Vec<u8>> {
    static FILES: OnceLock<BTreeMap<String, Vec<u8>>> = OnceLock::new();
    FILES.get_or_init(|| {
        let recipe = Recipe::load().expect("recipe");
        let (files, counts) = files(164, &recipe).expect("external files");
        assert_eq!(
            counts,
            Counts {
                cells: 180,
                requests: 3 * 4 * 3 * 4 * 31
            }
        );
        let count = files.len();
        let map: BTreeMap<String, Vec<u8>> = files.into_iter().collect();
        assert_eq!(map.len(), count, "no path is written twice");
        map
    })
}

fn text(path: &str) -> &'static str {
    let bytes = generated()
        .get(path)
        .unwrap_or_else(|| panic!("{path} was not written"));
    std::str::from_utf8(bytes).expect("utf-8")
}

fn json(path: &str) -> Value {
    serde_json::from_str(text(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn series() -> Vec<String> {
    let mut names = Vec::new();
    for model in MODELS {
        for workload in WORKLOADS {
            names.push(format!("{model}-{workload}"));
        }
    }
    names
}

fn floats(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .expect("array")
        .iter()
        .map(|v| v.as_f64().expect("number"))
        .collect()
}

#[test]
fn the_tree_has_the_documented_layout() {
    let files = generated();
    // vLLM: 4 experiments × 5 N × (warm-up, 3 runs, summary); SGLang: 4 files; AIPerf: 4 × 3 trials × 5 N × 2.
    assert_eq!(files.len(), 4 * 5 * 5 + 4 + 4 * 3 * 5 * 2 + 1);
    assert!(files.contains_key("cellscope.toml"));
    for name in series() {
        for n in NS {
            let dir = format!(
                "external/vllm-sweep/{name}/SERVE--stream_interval=16-BENCH--max_concurrency={n}"
            );
            for file in [
                "warmup.json",
                "run=0.json",
                "run=1.json",
                "run=2.json",
                "summary.json",
            ] {
                assert!(files.contains_key(&format!("{dir}/{file}")), "{dir}/{file}");
            }
            for trial in 1..=3 {
                let dir = format!(
                    "external/aiperf-sweep/{name}/profile_runs/trial_{trial:04}/concurrency_{n}"
                );
                for file in ["profile_export.jsonl", "profile_export_aiperf.json"] {
                    assert!(files.contains_key(&format!("{dir}/{file}")), "{dir}/{file}");
                }
            }
        }
        assert!(files.contains_key(&format!("external/sglang/{name}.jsonl")));
    }
}

#[test]
fn vllm_runs_are_indented_sweep_results_with_equal_length_arrays() {
    let mut failed = 0;
    for name in series() {
        for n in NS {
            let dir = format!(
                "external/vllm-sweep/{name}/SERVE--stream_interval=16-BENCH--max_concurrency={n}"
            );
            let summary = json(&format!("{dir}/summary.json"));
            let summary = summary.as_array().expect("summary.json is an array");
            assert_eq!(summary.len(), 3);
            for rep in REPS {
                let path = format!("{dir}/run={rep}.json");
                assert!(
                    text(&path).starts_with("{\n    \"date\": \""),
                    "{path}: indent=4"
                );
                let run = json(&path);
                assert_eq!(
                    &summary[rep as usize], &run,
                    "summary.json holds the run dicts"
                );
                assert_eq!(run["run_number"], rep);
                assert_eq!(run["max_concurrency"], n);
                assert_eq!(run["stream_interval"], 16);
                assert_eq!(run["request_rate"], "inf");
                assert_eq!(run["num_prompts"], 4 * n);
                assert!(MODELS.contains(&run["model_id"].as_str().expect("model_id")));
                assert!(WORKLOADS.contains(&run["workload"].as_str().expect("workload")));
                let len = (4 * n) as usize;
                for key in [
                    "input_lens",
                    "output_lens",
                    "ttfts",
                    "itls",
                    "latencies",
                    "start_times",
                    "queue_times",
                    "generated_texts",
                    "errors",
                ] {
                    assert_eq!(run[key].as_array().expect(key).len(), len, "{path} {key}");
                }
                let ttfts = floats(&run["ttfts"]);
                let latencies = floats(&run["latencies"]);
                let starts = floats(&run["start_times"]);
                let mut ok = 0;
                for i in 0..len {
                    let error = run["errors"][i].as_str().expect("error text");
                    if error.is_empty() {
                        ok += 1;
                        let itls = floats(&run["itls"][i]);
                        let rebuilt = ttfts[i] + itls.iter().sum::<f64>();
                        assert!((rebuilt - latencies[i]).abs() < 1e-9, "{path} request {i}");
                        assert!(!itls.is_empty());
                    } else {
                        failed += 1;
                        assert!(error.contains("ServerDisconnectedError"));
                        assert_eq!(latencies[i], 0.0);
                        assert_eq!(run["output_lens"][i], 0);
                        assert_eq!(run["itls"][i], Value::Array(Vec::new()));
                    }
                    if i > 0 {
                        assert!(starts[i] >= starts[i - 1], "dispatch order");
                    }
                }
                assert_eq!(run["completed"], ok);
                assert_eq!(run["failed"], len as i64 - ok);
                let duration = run["duration"].as_f64().expect("duration");
                let span = (0..len)
                    .filter(|i| latencies[*i] > 0.0)
                    .map(|i| starts[i] + latencies[i])
                    .fold(f64::NEG_INFINITY, f64::max)
                    - starts.iter().copied().fold(f64::INFINITY, f64::min);
                assert!(
                    duration > span && duration - span < 0.01,
                    "{path}: duration {duration} span {span}"
                );
            }
            let warmup = json(&format!("{dir}/warmup.json"));
            assert_eq!(warmup["run_number"], -1);
            assert_eq!(warmup["num_prompts"], n);
            assert_eq!(warmup["ttfts"].as_array().expect("ttfts").len(), n as usize);
        }
    }
    assert_eq!(failed, 1, "one failed vLLM request");
}

#[test]
fn sglang_lines_carry_a_bare_infinity_and_parse_after_substituting_it() {
    let mut failed = 0;
    for name in series() {
        let path = format!("external/sglang/{name}.jsonl");
        let file = text(&path);
        assert!(file.ends_with('\n'));
        let lines: Vec<&str> = file.lines().collect();
        assert_eq!(lines.len(), NS.len() * REPS.len());
        for (index, line) in lines.iter().enumerate() {
            assert!(
                line.contains("\"request_rate\": Infinity, "),
                "{path}:{}",
                index + 1
            );
            assert!(
                serde_json::from_str::<Value>(line).is_err(),
                "strict JSON refuses the bare Infinity"
            );
            let record: Value = serde_json::from_str(&line.replace(": Infinity,", ": null,"))
                .expect("lenient parse");
            let n = NS[index / REPS.len()];
            assert_eq!(record["max_concurrency"], n, "N-then-rep order");
            assert_eq!(record["dataset_name"], "random");
            assert!(
                record["server_info"]["model_path"]
                    .as_str()
                    .is_some_and(|p| p.contains('/'))
            );
            assert!(record.get("model_id").is_none(), "no model key of its own");
            let len = (4 * n) as usize;
            for key in [
                "input_lens",
                "output_lens",
                "ttfts",
                "itls",
                "generated_texts",
                "errors",
            ] {
                assert_eq!(
                    record[key].as_array().expect(key).len(),
                    len,
                    "{path} {key}"
                );
            }
            let errors = record["errors"].as_array().expect("errors");
            let ok = errors.iter().filter(|e| e.as_str() == Some("")).count();
            failed += len - ok;
            assert_eq!(record["completed"], ok);
            for (i, error) in errors.iter().enumerate() {
                if error.as_str() != Some("") {
                    assert!(
                        error
                            .as_str()
                            .is_some_and(|e| e.starts_with("Internal Server Error: "))
                    );
                    assert_eq!(record["ttfts"][i], 0.0);
                    assert_eq!(record["output_lens"][i], 0);
                }
            }
        }
    }
    assert_eq!(failed, 1, "one failed SGLang request");
}

#[test]
fn aiperf_warmup_records_are_marked_and_only_in_the_first_trial() {
    let mut failed = 0;
    for name in series() {
        for trial in 1..=3u32 {
            for n in NS {
                let dir = format!(
                    "external/aiperf-sweep/{name}/profile_runs/trial_{trial:04}/concurrency_{n}"
                );
                let records: Vec<Value> = text(&format!("{dir}/profile_export.jsonl"))
                    .lines()
                    .map(|line| serde_json::from_str(line).expect("record"))
                    .collect();
                let phase = |r: &Value| {
                    r["metadata"]["benchmark_phase"]
                        .as_str()
                        .unwrap_or("")
                        .to_string()
                };
                let warmup = records.iter().filter(|r| phase(r) == "warmup").count();
                let profiling: Vec<&Value> =
                    records.iter().filter(|r| phase(r) == "profiling").collect();
                assert_eq!(warmup, if trial == 1 { n as usize } else { 0 }, "{dir}");
                assert_eq!(profiling.len(), (4 * n) as usize);
                assert_eq!(warmup + profiling.len(), records.len());
                assert!(
                    records[..warmup].iter().all(|r| phase(r) == "warmup"),
                    "warm-up first"
                );
                let summary = json(&format!("{dir}/profile_export_aiperf.json"));
                assert_eq!(summary["schema_version"], "1.3");
                assert_eq!(summary["run_info"]["trial"], trial - 1);
                let phases = summary["input_config"]["phases"]
                    .as_array()
                    .expect("phases");
                let last = phases.last().expect("profiling phase");
                assert_eq!(last["name"], "profiling");
                assert_eq!(last["concurrency"], n);
                let mut ok = 0;
                for record in &profiling {
                    let metadata = &record["metadata"];
                    let start = metadata["request_start_ns"].as_i64().expect("start");
                    let end = metadata["request_end_ns"].as_i64().expect("end");
                    if record["error"].is_null() {
                        ok += 1;
                        let metrics = &record["metrics"];
                        let latency = metrics["request_latency"]["value"]
                            .as_f64()
                            .expect("latency");
                        let ttft = metrics["time_to_first_token"]["value"]
                            .as_f64()
                            .expect("ttft");
                        let chunks = floats(&metrics["inter_chunk_latency"]["value"]);
                        assert!((ttft + chunks.iter().sum::<f64>() - latency).abs() < 1e-6);
                        assert!(((end - start) as f64 / 1e6 - latency).abs() < 1e-6);
                        assert_eq!(metrics["request_latency"]["unit"], "ms");
                        assert!(metrics.get("ttft").is_none(), "the October 2025 tags");
                    } else {
                        failed += 1;
                        assert!(record["metrics"]["error_isl"]["value"].is_u64());
                        assert_eq!(record["error"]["code"], 424);
                    }
                }
                assert_eq!(summary["request_count"]["avg"], ok as f64);
                assert_eq!(summary["request_latency"]["count"], ok);
            }
        }
    }
    assert_eq!(failed, 1, "one failed AIPerf request");
}

/// Aggregate throughput over a cell's requests, from (start, wall, output tokens) triples in seconds.
fn tps(requests: &[(f64, f64, f64)]) -> f64 {
    let first = requests.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
    let last = requests
        .iter()
        .map(|r| r.0 + r.1)
        .fold(f64::NEG_INFINITY, f64::max);
    requests.iter().map(|r| r.2).sum::<f64>() / (last - first)
}

#[test]
fn recomputed_efficiency_and_tail_stay_close_to_the_v3_demo() {
    let recipe = Recipe::load().expect("recipe");
    let targets = &recipe.v3.vllm;
    for (model, workload) in MODELS
        .iter()
        .flat_map(|m| WORKLOADS.iter().map(move |w| (*m, *w)))
    {
        let name = format!("{model}-{workload}");
        let target = targets.cell(model, workload).expect("recipe cell");
        // (aggregate tps, p95 wall) of one vLLM run, recomputed from its arrays the way cellscope reads them.
        let measure = |n: u32, rep: u32| {
            let run = json(&format!(
                "external/vllm-sweep/{name}/SERVE--stream_interval=16-BENCH--max_concurrency={n}/run={rep}.json"
            ));
            let starts = floats(&run["start_times"]);
            let walls = floats(&run["latencies"]);
            let tokens = floats(&run["output_lens"]);
            let ok: Vec<usize> = (0..starts.len()).filter(|i| walls[*i] > 0.0).collect();
            let requests: Vec<(f64, f64, f64)> = ok
                .iter()
                .map(|i| (starts[*i], walls[*i], tokens[*i]))
                .collect();
            (
                tps(&requests),
                Stats::of(ok.iter().map(|i| walls[*i])).percentile(95.0),
            )
        };
        for (index, n) in NS.iter().enumerate().skip(1) {
            let mut efficiency = 0.0;
            let mut multiplier = 0.0;
            for rep in REPS {
                let (tps_n, p95_n) = measure(*n, rep);
                let (tps_1, p95_1) = measure(1, rep);
                efficiency += tps_n / (f64::from(*n) * tps_1) / 3.0;
                multiplier += p95_n / p95_1 / 3.0;
            }
            // The V3 cells hold 10 requests per agent; the 4 kept per agent keep the rep means close.
            assert!(
                (efficiency - target.efficiency[index]).abs() < 0.015,
                "{name} N={n}: efficiency {efficiency} vs {}",
                target.efficiency[index]
            );
            assert!(
                (multiplier / target.p95_multiplier[index] - 1.0).abs() < 0.05,
                "{name} N={n}: p95 multiplier {multiplier} vs {}",
                target.p95_multiplier[index]
            );
        }
    }
}

/// The SGLang and TGI cells, built once.
fn sglang_and_tgi() -> &'static (Vec<Cell>, Vec<Cell>) {
    static CELLS: OnceLock<(Vec<Cell>, Vec<Cell>)> = OnceLock::new();
    CELLS.get_or_init(|| {
        let rows = v3::backend_rows(164, &Recipe::load().expect("recipe"), "sglang", MODELS[1])
            .expect("rows");
        (
            cells(Engine::Sglang, 164, &rows).expect("sglang cells"),
            cells(Engine::Tgi, 164, &rows).expect("tgi cells"),
        )
    })
}

#[test]
fn sglang_cells_keep_the_v3_efficiency() {
    let recipe = Recipe::load().expect("recipe");
    let (sglang, _) = sglang_and_tgi();
    let tps_of = |cell: &Cell| {
        let requests: Vec<(f64, f64, f64)> = cell
            .requests
            .iter()
            .filter(|r| r.is_ok())
            .map(|r| {
                (
                    r.start_ns as f64 / 1e9,
                    r.duration_ns() as f64 / 1e9,
                    f64::from(r.completion_tokens),
                )
            })
            .collect();
        tps(&requests)
    };
    for cell in sglang.iter().filter(|c| c.n > 1) {
        let baseline = sglang
            .iter()
            .find(|c| c.n == 1 && c.rep == cell.rep && c.series_name() == cell.series_name())
            .expect("N=1 cell");
        let efficiency = tps_of(cell) / (f64::from(cell.n) * tps_of(baseline));
        let target = recipe
            .v3
            .sglang
            .cell(cell.model.name, cell.workload.name)
            .expect("recipe cell");
        let index = crate::catalog::n_index(&crate::catalog::V3_NS, cell.n);
        // One rep against the rep mean: the V3 reps themselves spread by about ±0.01.
        assert!(
            (efficiency - target.efficiency[index]).abs() < 0.04,
            "{} N={} rep {}: {efficiency} vs {}",
            cell.series_name(),
            cell.n,
            cell.rep,
            target.efficiency[index]
        );
    }
}

#[test]
fn tgi_requests_are_the_sglang_requests_made_slower() {
    let (sglang, tgi) = sglang_and_tgi();
    for (s, t) in sglang.iter().zip(tgi) {
        assert_eq!(
            (s.model.name, s.workload.name, s.n, s.rep),
            (t.model.name, t.workload.name, t.n, t.rep)
        );
        let ratio = t.span_ns() as f64 / s.span_ns() as f64;
        assert!((ratio - TGI_LATENCY_FACTOR).abs() < 1e-6, "{ratio}");
        for (a, b) in s.requests.iter().zip(&t.requests) {
            assert_eq!(a.completion_tokens, b.completion_tokens);
            if a.is_ok() && b.is_ok() {
                let ratio = b.duration_ns() as f64 / a.duration_ns() as f64;
                assert!((ratio - TGI_LATENCY_FACTOR).abs() < 1e-4, "{ratio}");
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let recipe = Recipe::load().expect("recipe");
    let (again, _) = files(164, &recipe).expect("external files");
    let again: BTreeMap<String, Vec<u8>> = again.into_iter().collect();
    assert!(again == *generated(), "regenerating changed a file");
    let (other, _) = files(165, &recipe).expect("external files");
    let changed = other
        .iter()
        .filter(|(path, bytes)| generated().get(path) != Some(bytes))
        .count();
    assert!(
        changed > 200,
        "another seed changes the data ({changed} files differ)"
    );
}

//! Oracles of the two-deployment sweeps: every vLLM request-rate run file read back with `serde_json` and its
//! levels recomputed from the per-request arrays with numpy's arithmetic (`np.median`, `np.percentile` with linear
//! interpolation), checking the file's own aggregates and the generator's intent: each deployment follows its
//! offered rate until it saturates, TP 2 saturates and meets the SLO at a higher rate than TP 1, and one level has
//! failed requests. The InferenceX-named runs of the same deployments are checked for their names, their
//! aggregates-only contents and their concurrency trends.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const EXPERIMENT: &str = "external/vllm-rate-sweep/llama3.1-8b-h100";
const RATES: [&str; 6] = ["1", "2", "4", "8", "16", "inf"];
/// (tensor parallel size, runs per rate).
const DEPLOYMENTS: [(u32, u32); 2] = [(1, 2), (2, 1)];
const SLO_P99_TTFT_MS: f64 = 2000.0;
const SLO_P99_TPOT_MS: f64 = 100.0;

fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cellscope-demo-rate-sweep");
        cellscope_demo::generate_deployment_sweeps(&root, 164)
            .expect("generate the deployment sweeps");
        root
    })
}

fn directory(tp: u32, rate: &str) -> PathBuf {
    root().join(format!(
        "{EXPERIMENT}/SERVE--tensor_parallel_size={tp}-BENCH--request_rate={rate}"
    ))
}

fn read(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// `np.percentile(values, p)` (linear interpolation between closest ranks), written out independently of the
/// generator's statistics.
fn np_percentile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let position = p / 100.0 * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    sorted[below] + (sorted[above] - sorted[below]) * (position - below as f64)
}

fn numbers(value: &Value, key: &str) -> Vec<f64> {
    value[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is not an array"))
        .iter()
        .map(|item| item.as_f64().unwrap_or_else(|| panic!("{key}: {item}")))
        .collect()
}

/// One run of one level, recomputed from its per-request arrays.
#[derive(Clone, Debug)]
struct Level {
    tp: u32,
    rate: &'static str,
    run: u32,
    prompts: usize,
    completed: usize,
    failed: usize,
    median_ttft_ms: f64,
    p99_ttft_ms: f64,
    p99_tpot_ms: f64,
    achieved_rps: f64,
}

impl Level {
    fn offered_rps(&self) -> f64 {
        self.rate.parse().unwrap_or(f64::INFINITY)
    }

    fn meets_slo(&self) -> bool {
        self.p99_ttft_ms <= SLO_P99_TTFT_MS && self.p99_tpot_ms <= SLO_P99_TPOT_MS
    }
}

fn close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= 1e-9 * expected.abs().max(1.0),
        "{what}: the file says {actual}, recomputed {expected}"
    );
}

/// The level of one run file, after checking the file's own counts and aggregates against its arrays.
fn level(tp: u32, rate: &'static str, run: u32, file: &Value) -> Level {
    let what = |name: &str| format!("tp{tp} rate {rate} run {run}: {name}");
    let errors: Vec<&str> = file["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| e.as_str().expect("text"))
        .collect();
    let ok: Vec<bool> = errors.iter().map(|error| error.is_empty()).collect();
    let pick = |values: Vec<f64>| -> Vec<f64> {
        values
            .into_iter()
            .zip(&ok)
            .filter(|(_, ok)| **ok)
            .map(|(v, _)| v)
            .collect()
    };
    let ttfts = pick(numbers(file, "ttfts"));
    let latencies = pick(numbers(file, "latencies"));
    let outputs = pick(numbers(file, "output_lens"));
    let tpots: Vec<f64> = (0..ttfts.len())
        .filter(|index| outputs[*index] > 1.0)
        .map(|index| (latencies[index] - ttfts[index]) / (outputs[index] - 1.0))
        .collect();
    let prompts = file["num_prompts"].as_u64().expect("num_prompts") as usize;
    assert_eq!(errors.len(), prompts, "{}", what("one entry per prompt"));
    assert_eq!(
        file["completed"].as_u64(),
        Some(ttfts.len() as u64),
        "{}",
        what("completed")
    );
    assert_eq!(
        file["failed"].as_u64(),
        Some((prompts - ttfts.len()) as u64),
        "{}",
        what("failed")
    );
    let duration_s = file["duration"].as_f64().expect("duration");
    let level = Level {
        tp,
        rate,
        run,
        prompts,
        completed: ttfts.len(),
        failed: prompts - ttfts.len(),
        median_ttft_ms: np_percentile(&ttfts, 50.0) * 1000.0,
        p99_ttft_ms: np_percentile(&ttfts, 99.0) * 1000.0,
        p99_tpot_ms: np_percentile(&tpots, 99.0) * 1000.0,
        achieved_rps: ttfts.len() as f64 / duration_s,
    };
    close(
        file["median_ttft_ms"].as_f64().expect("median_ttft_ms"),
        level.median_ttft_ms,
        &what("median_ttft_ms"),
    );
    close(
        file["p99_ttft_ms"].as_f64().expect("p99_ttft_ms"),
        level.p99_ttft_ms,
        &what("p99_ttft_ms"),
    );
    close(
        file["p99_tpot_ms"].as_f64().expect("p99_tpot_ms"),
        level.p99_tpot_ms,
        &what("p99_tpot_ms"),
    );
    close(
        file["p99_e2el_ms"].as_f64().expect("p99_e2el_ms"),
        np_percentile(&latencies, 99.0) * 1000.0,
        &what("p99_e2el_ms"),
    );
    close(
        file["request_throughput"]
            .as_f64()
            .expect("request_throughput"),
        level.achieved_rps,
        &what("request_throughput"),
    );
    level
}

/// Every run of every level, read once, in (TP, rate, run) order.
fn levels() -> &'static [Level] {
    static LEVELS: OnceLock<Vec<Level>> = OnceLock::new();
    LEVELS.get_or_init(|| {
        let mut levels = Vec::new();
        for (tp, runs) in DEPLOYMENTS {
            for rate in RATES {
                for run in 0..runs {
                    let file = read(&directory(tp, rate).join(format!("run={run}.json")));
                    levels.push(level(tp, rate, run, &file));
                }
            }
        }
        print_table(&levels);
        levels
    })
}

fn print_table(levels: &[Level]) {
    eprintln!(
        "tp  rate  run  prompts  ok   failed  median_ttft_ms  p99_ttft_ms  p99_tpot_ms  achieved_rps  achieved/offered  slo"
    );
    for level in levels {
        eprintln!(
            "{:<3} {:<5} {:<4} {:<8} {:<4} {:<7} {:<15.1} {:<12.1} {:<12.2} {:<13.3} {:<17.3} {}",
            level.tp,
            level.rate,
            level.run,
            level.prompts,
            level.completed,
            level.failed,
            level.median_ttft_ms,
            level.p99_ttft_ms,
            level.p99_tpot_ms,
            level.achieved_rps,
            level.achieved_rps / level.offered_rps(),
            if level.meets_slo() { "met" } else { "missed" }
        );
    }
}

/// The first offered rate at which any run achieves less than 0.9 of it.
fn saturation(tp: u32) -> &'static str {
    RATES
        .into_iter()
        .find(|rate| {
            levels()
                .iter()
                .any(|l| l.tp == tp && l.rate == *rate && l.achieved_rps < 0.9 * l.offered_rps())
        })
        .expect("every deployment saturates by inf")
}

/// The highest finite offered rate up to which every run meets the SLO, if any.
fn slo_capacity(tp: u32) -> Option<f64> {
    let mut capacity = None;
    for rate in RATES {
        let runs: Vec<&Level> = levels()
            .iter()
            .filter(|l| l.tp == tp && l.rate == rate)
            .collect();
        if !runs.iter().all(|l| l.meets_slo()) {
            break;
        }
        capacity = Some(runs[0].offered_rps());
    }
    capacity
}

#[test]
fn the_tree_has_the_sweep_layout() {
    for (tp, runs) in DEPLOYMENTS {
        for rate in RATES {
            let dir = directory(tp, rate);
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
                .map(|entry| {
                    entry
                        .expect("entry")
                        .file_name()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            names.sort();
            let mut expected: Vec<String> =
                (0..runs).map(|run| format!("run={run}.json")).collect();
            expected.push("summary.json".to_string());
            assert_eq!(names, expected, "{}", dir.display());
            // summary.json is the array of the run dicts, in run order.
            let summary = read(&dir.join("summary.json"));
            let runs_read: Vec<Value> = (0..runs)
                .map(|run| read(&dir.join(format!("run={run}.json"))))
                .collect();
            assert_eq!(summary, Value::Array(runs_read), "{}", dir.display());
        }
    }
    let experiments: Vec<_> = std::fs::read_dir(root().join(EXPERIMENT))
        .expect("experiment")
        .collect();
    assert_eq!(experiments.len(), RATES.len() * DEPLOYMENTS.len());
}

#[test]
fn run_files_state_the_rate_the_deployment_and_the_run() {
    for (tp, runs) in DEPLOYMENTS {
        for rate in RATES {
            for run in 0..runs {
                let file = read(&directory(tp, rate).join(format!("run={run}.json")));
                let stated = match &file["request_rate"] {
                    Value::String(text) => text.clone(),
                    other => other.as_u64().expect("a whole rate").to_string(),
                };
                assert_eq!(stated, rate);
                assert_eq!(file["max_concurrency"], Value::Null);
                assert_eq!(file["run_number"].as_u64(), Some(u64::from(run)));
                assert_eq!(file["tensor_parallel_size"].as_u64(), Some(u64::from(tp)));
                assert_eq!(file["model_id"], "meta-llama/Llama-3.1-8B-Instruct");
                // Each request's TTFT and inter-chunk gaps add up to its latency.
                let itls = file["itls"].as_array().expect("itls");
                for (index, latency) in numbers(&file, "latencies").iter().enumerate() {
                    let gaps: f64 = itls[index]
                        .as_array()
                        .expect("gaps")
                        .iter()
                        .filter_map(Value::as_f64)
                        .sum();
                    if *latency > 0.0 {
                        let ttft = numbers(&file, "ttfts")[index];
                        assert!(
                            (ttft + gaps - latency).abs() < 1e-6,
                            "tp{tp} rate {rate} request {index}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn achieved_rate_follows_the_offered_rate_until_saturation() {
    let levels = levels();
    for level in levels.iter().filter(|l| l.rate != "inf") {
        let ratio = level.achieved_rps / level.offered_rps();
        let below_saturation = match level.tp {
            1 => level.offered_rps() <= 4.0,
            _ => level.offered_rps() <= 8.0,
        };
        if below_saturation {
            assert!(ratio >= 0.95, "{level:?}: achieved/offered {ratio:.3}");
        } else {
            assert!(ratio < 0.9, "{level:?}: achieved/offered {ratio:.3}");
        }
    }
    assert_eq!(saturation(1), "8");
    assert_eq!(saturation(2), "16");
    // With every prompt sent at once, each deployment serves at its capacity: TP 2's is higher.
    let inf = |tp: u32| {
        levels
            .iter()
            .filter(|l| l.tp == tp && l.rate == "inf")
            .map(|l| l.achieved_rps)
            .fold(f64::INFINITY, f64::min)
    };
    assert!(
        inf(2) > 1.5 * inf(1),
        "inf: TP 1 {:.2} req/s, TP 2 {:.2} req/s",
        inf(1),
        inf(2)
    );
}

#[test]
fn ttft_grows_sharply_past_saturation_and_tpot_mildly() {
    for (tp, _) in DEPLOYMENTS {
        let runs: Vec<&Level> = levels().iter().filter(|l| l.tp == tp).collect();
        let lowest = runs.iter().find(|l| l.rate == "1").expect("rate 1");
        let top = runs.iter().find(|l| l.rate == "inf").expect("inf");
        assert!(
            top.median_ttft_ms > 50.0 * lowest.median_ttft_ms,
            "tp{tp}: {lowest:?} → {top:?}"
        );
        let tpot_growth = top.p99_tpot_ms / lowest.p99_tpot_ms;
        assert!(
            (1.05..2.0).contains(&tpot_growth),
            "tp{tp}: p99 TPOT × {tpot_growth:.2}"
        );
    }
}

#[test]
fn slo_capacity_differs_between_the_deployments() {
    // p99 TTFT ≤ 2 s and p99 TPOT ≤ 100 ms: met at the lowest rate, missed at the top ones, TP 2 going further.
    assert_eq!(slo_capacity(1), Some(4.0));
    assert_eq!(slo_capacity(2), Some(8.0));
    for level in levels()
        .iter()
        .filter(|l| l.rate == "16" || l.rate == "inf")
    {
        assert!(!level.meets_slo(), "{level:?}");
    }
}

#[test]
fn one_level_has_failed_requests() {
    let failing: Vec<&Level> = levels().iter().filter(|l| l.failed > 0).collect();
    assert_eq!(failing.len(), 1, "{failing:?}");
    let level = failing[0];
    assert_eq!(
        (level.tp, level.rate, level.run, level.failed),
        (1, "16", 1, 3)
    );
    let file = read(&directory(1, "16").join("run=1.json"));
    let errors: BTreeMap<usize, &str> = file["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .enumerate()
        .filter_map(|(index, error)| error.as_str().filter(|e| !e.is_empty()).map(|e| (index, e)))
        .collect();
    assert_eq!(errors.len(), 3);
    assert!(
        errors
            .values()
            .all(|error| error.contains("ServerDisconnectedError"))
    );
}

const INFERENCEX: &str = "external/inferencex";
const CONCURRENCIES: [u32; 5] = [4, 8, 16, 32, 64];

fn inferencex(tp: u32, concurrency: u32) -> Value {
    read(&root().join(format!(
        "{INFERENCEX}/llama8b_1k1k_bf16_vllm_tp{tp}_ep1_dpa_false_conc{concurrency}_h100.json"
    )))
}

#[test]
fn inferencex_runs_are_named_by_deployment_and_keep_only_the_aggregates() {
    let names = std::fs::read_dir(root().join(INFERENCEX))
        .expect("inferencex")
        .count();
    assert_eq!(names, DEPLOYMENTS.len() * CONCURRENCIES.len());
    eprintln!("tp  conc  prompts  median_ttft_ms  median_tpot_ms  output_tok_s");
    for (tp, _) in DEPLOYMENTS {
        let mut previous: Option<(f64, f64)> = None;
        for concurrency in CONCURRENCIES {
            let file = inferencex(tp, concurrency);
            assert_eq!(file["request_rate"], "inf");
            assert_eq!(
                file["max_concurrency"].as_u64(),
                Some(u64::from(concurrency))
            );
            assert_eq!(
                file["num_prompts"].as_u64(),
                Some(u64::from(10 * concurrency))
            );
            assert_eq!(file["completed"], file["num_prompts"]);
            assert_eq!(file["backend"], "vllm");
            for detailed in [
                "ttfts",
                "itls",
                "output_lens",
                "generated_texts",
                "errors",
                "workload",
            ] {
                assert!(file.get(detailed).is_none(), "{detailed}");
            }
            // The kept latencies are the reported end-to-end latencies.
            let latencies = numbers(&file, "latencies");
            close(
                file["median_e2el_ms"].as_f64().expect("median_e2el_ms"),
                np_percentile(&latencies, 50.0) * 1000.0,
                "median_e2el_ms",
            );
            let tpot = file["median_tpot_ms"].as_f64().expect("median_tpot_ms");
            let throughput = file["output_throughput"]
                .as_f64()
                .expect("output_throughput");
            eprintln!(
                "{tp:<3} {concurrency:<5} {:<8} {:<15.1} {tpot:<15.2} {throughput:.0}",
                latencies.len(),
                file["median_ttft_ms"].as_f64().unwrap_or(f64::NAN)
            );
            // More concurrency: more output tokens per second, slower tokens for each request.
            if let Some((previous_tpot, previous_throughput)) = previous {
                assert!(tpot > previous_tpot, "tp{tp} conc{concurrency}");
                assert!(throughput > previous_throughput, "tp{tp} conc{concurrency}");
            }
            previous = Some((tpot, throughput));
        }
    }
    for concurrency in CONCURRENCIES {
        let tpot = |tp| {
            inferencex(tp, concurrency)["median_tpot_ms"]
                .as_f64()
                .unwrap_or(f64::NAN)
        };
        assert!(
            tpot(2) < tpot(1),
            "conc{concurrency}: TP 2 is the faster deployment"
        );
    }
}

//! An MLPerf Inference results tree as LoadGen leaves it for a submission: one system (`8xH100-SXM-80GB_TRT`),
//! two LLM benchmarks (`llama3.1-8b` and `llama2-70b-99`), and per benchmark a `Server` and an `Offline` run (the
//! 70B one also an `Interactive` run, which LoadGen logs as Server under tighter bounds), each
//! `results/<system>/<benchmark>/<scenario>/performance/run_1/mlperf_log_summary.txt` as `LogSummary` writes it
//! (loadgen/results.cc and test_settings_internal.cc). The 70B Interactive run misses its TTFT bound, so its result
//! is `INVALID` with LoadGen's recommendation.
//!
//! The figures come from a simple model of one deployment per benchmark: a capacity in samples per second, a
//! TTFT and a TPOT that grow with the load's share of that capacity, log-normal spreads for the percentiles, and
//! a fixed mean output length; Offline runs at capacity with every sample issued at once.

use super::{Counts, Files};
use crate::random::{DemoRng, normal_quantile};
use std::fmt::Write as _;

/// The tree, relative to the data root.
pub(crate) const DIRECTORY: &str = "external/mlperf/closed/Demo/results/8xH100-SXM-80GB_TRT";

/// One benchmark's deployment: capacity (samples/s), unloaded TTFT and TPOT (ms), mean output tokens, and its
/// Server bounds (ms).
struct Benchmark {
    name: &'static str,
    capacity: f64,
    ttft_ms: f64,
    tpot_ms: f64,
    output_tokens: f64,
    bounds_ms: (f64, f64),
}

const BENCHMARKS: [Benchmark; 2] = [
    Benchmark {
        name: "llama3.1-8b",
        capacity: 62.0,
        ttft_ms: 140.0,
        tpot_ms: 24.0,
        output_tokens: 210.0,
        bounds_ms: (2000.0, 100.0),
    },
    Benchmark {
        name: "llama2-70b-99",
        capacity: 38.0,
        ttft_ms: 260.0,
        tpot_ms: 48.0,
        output_tokens: 290.0,
        bounds_ms: (2000.0, 200.0),
    },
];

/// (scenario, share of capacity offered, TTFT/TPOT bounds override for the interactive variant).
type Run = (&'static str, f64, Option<(f64, f64)>);

fn runs(benchmark: &Benchmark) -> Vec<Run> {
    let mut runs = vec![("Server", 0.75, None), ("Offline", 1.0, None)];
    if benchmark.name == "llama2-70b-99" {
        runs.push(("Interactive", 0.55, Some((450.0, 40.0))));
    }
    runs
}

/// Every summary of the tree, with the cells and samples they count.
pub(crate) fn files(seed: u64) -> (Files, Counts) {
    let mut out = Vec::new();
    let mut counts = Counts::default();
    for benchmark in &BENCHMARKS {
        for (scenario, share, interactive) in runs(benchmark) {
            let path = format!(
                "{DIRECTORY}/{}/{scenario}/performance/run_1/mlperf_log_summary.txt",
                benchmark.name
            );
            let mut rng = DemoRng::new(seed, &path);
            let (text, samples) = summary(benchmark, scenario, share, interactive, &mut rng);
            counts.cells += 1;
            counts.requests += samples;
            // Server runs keep their detail log too (only it counts the queries); Offline runs their summary alone.
            if scenario != "Offline" {
                let detail_path = path.replace("mlperf_log_summary.txt", "mlperf_log_detail.txt");
                out.push((detail_path, detail(&text, samples).into_bytes()));
            }
            out.push((path, text.into_bytes()));
        }
    }
    (out, counts)
}

/// A latency's percentile in ns: the median scaled by a log-normal spread.
fn percentile_ns(median_ms: f64, sigma: f64, p: f64) -> u64 {
    (median_ms * (sigma * normal_quantile(p)).exp() * 1e6).round() as u64
}

/// A Server (or Interactive) run's summary as `LogSummary` lays it out; `{name}` stands for a figure of the run and
/// `{recommendations}` for the lines an invalid run gets.
const SERVER_SUMMARY: &str = "\
================================================
MLPerf Results Summary
================================================
SUT name : PySUT
Scenario : Server
Mode     : PerformanceOnly
Completed samples per second    : {samples_per_s}
Completed tokens per second: {tokens_per_s}
Result is : {result}
  Performance constraints satisfied : {constraints_met}
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
{recommendations}TTFT Early Stopping Result:
 * Run successful.
TPOT Early Stopping Result:
 * Run successful.

================================================
Additional Stats
================================================
Scheduled samples per second : {scheduled_per_s}
{latency}
Completed tokens per second                 : {tokens_per_s}
{first_token_latency}
{time_to_output_token}
================================================
Test Parameters Used
================================================
{parameters}";

/// An Offline run's summary, laid out as [`SERVER_SUMMARY`] is.
const OFFLINE_SUMMARY: &str = "\
================================================
MLPerf Results Summary
================================================
SUT name : PySUT
Scenario : Offline
Mode     : PerformanceOnly
Samples per second: {samples_per_s}
Tokens per second: {tokens_per_s}
Result is : {result}
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
{recommendations}
================================================
Additional Stats
================================================
{latency}
================================================
Test Parameters Used
================================================
{parameters}";

/// The test parameters every summary ends with, after its own `{samples_per_query}`, `{target_qps}` and bounds.
const PARAMETERS: &str = "\
samples_per_query : {samples_per_query}
target_qps : {target_qps}
ttft_latency (ns): {ttft_bound_ns}
tpot_latency (ns): {tpot_bound_ns}
max_async_queries : 0
min_duration (ms): 600000
max_duration (ms): 0
min_query_count : 100
max_query_count : 0
performance_sample_count : 13368

No warnings encountered during test.

No errors encountered during test.
";

/// What LoadGen recommends when a run misses a latency bound.
const RECOMMENDATIONS: &str = "\
Recommendations:
 * TTFT constrain not met: Reduce target QPS to improve latency.
";

/// The percentiles every latency block lists, as LoadGen labels them.
const PERCENTILES: [(&str, f64); 6] = [
    ("50.00", 0.5),
    ("90.00", 0.9),
    ("95.00", 0.95),
    ("97.00", 0.97),
    ("99.00", 0.99),
    ("99.90", 0.999),
];

/// `template` with every `{name}` of `values` replaced by its value.
fn fill(template: &str, values: &[(&str, String)]) -> String {
    values
        .iter()
        .fold(template.to_string(), |text, (name, value)| {
            text.replace(&format!("{{{name}}}"), value)
        })
}

/// One latency's block of the additional stats: min, max, mean and the percentiles, in ns, each on its line.
fn latency_block(name: &str, label: &str, median_ms: f64, sigma: f64) -> String {
    let mut text = String::new();
    let pad = 32 - name.len() - 9;
    let _ = writeln!(
        text,
        "Min {name} (ns){:>pad$}: {}",
        "",
        percentile_ns(median_ms, sigma, 0.001)
    );
    let _ = writeln!(
        text,
        "Max {name} (ns){:>pad$}: {}",
        "",
        percentile_ns(median_ms, sigma, 0.9999)
    );
    let _ = writeln!(
        text,
        "Mean {name} (ns){:>pad$}: {}",
        "",
        (median_ms * (sigma * sigma / 2.0).exp() * 1e6).round() as u64,
        pad = pad - 1
    );
    for (label_p, p) in PERCENTILES {
        let _ = writeln!(
            text,
            "{label_p} percentile {label} (ns)   : {}",
            percentile_ns(median_ms, sigma, p)
        );
    }
    text
}

/// One run's summary and the number of samples it completed.
fn summary(
    benchmark: &Benchmark,
    scenario: &str,
    share: f64,
    interactive: Option<(f64, f64)>,
    rng: &mut DemoRng,
) -> (String, usize) {
    let offline = scenario == "Offline";
    let load = if offline { 0.97 } else { share };
    // Queueing: the first token waits longer, and each output token a little longer, as the load nears capacity.
    let ttft_ms = benchmark.ttft_ms * (1.0 + 2.5 * load * load) * rng.range(0.97, 1.03);
    let tpot_ms = benchmark.tpot_ms * (1.0 + 0.6 * load) * rng.range(0.98, 1.02);
    let target_qps = (benchmark.capacity * share * 10.0).round() / 10.0;
    let samples_per_s = if offline {
        benchmark.capacity * rng.range(0.97, 1.0)
    } else {
        target_qps * rng.range(0.985, 0.998)
    };
    let duration_s = 600.0 + rng.range(5.0, 40.0);
    let samples = (samples_per_s * duration_s).round() as usize;
    let tokens_per_s = samples_per_s * benchmark.output_tokens * rng.range(0.98, 1.02);
    let wall_ms = ttft_ms + tpot_ms * (benchmark.output_tokens - 1.0);
    let (ttft_bound, tpot_bound) = interactive.unwrap_or(benchmark.bounds_ms);
    let ttft_p99_ns = percentile_ns(ttft_ms, 0.45, 0.99);
    let tpot_p99_ns = percentile_ns(tpot_ms, 0.12, 0.99);
    let constraints_met = offline
        || (ttft_p99_ns as f64 <= ttft_bound * 1e6 && tpot_p99_ns as f64 <= tpot_bound * 1e6);
    let parameters = fill(
        PARAMETERS,
        &[
            (
                "samples_per_query",
                (if offline { samples } else { 1 }).to_string(),
            ),
            (
                "target_qps",
                g6(if offline {
                    benchmark.capacity
                } else {
                    target_qps
                }),
            ),
            ("ttft_bound_ns", ((ttft_bound * 1e6) as u64).to_string()),
            ("tpot_bound_ns", ((tpot_bound * 1e6) as u64).to_string()),
        ],
    );
    let mut values = vec![
        (
            "result",
            (if constraints_met { "VALID" } else { "INVALID" }).to_string(),
        ),
        (
            "recommendations",
            (if constraints_met { "" } else { RECOMMENDATIONS }).to_string(),
        ),
        ("parameters", parameters),
    ];
    let text = if offline {
        values.extend([
            ("samples_per_s", g6(samples_per_s)),
            ("tokens_per_s", g6(tokens_per_s)),
            (
                "latency",
                latency_block("latency", "latency", duration_s * 500.0, 0.5),
            ),
        ]);
        fill(OFFLINE_SUMMARY, &values)
    } else {
        values.extend([
            ("samples_per_s", format!("{samples_per_s:.2}")),
            ("tokens_per_s", format!("{tokens_per_s:.2}")),
            (
                "constraints_met",
                (if constraints_met { "Yes" } else { "NO" }).to_string(),
            ),
            (
                "scheduled_per_s",
                format!("{:.2}", target_qps * rng.range(0.995, 1.005)),
            ),
            (
                "latency",
                latency_block("latency", "latency", wall_ms, 0.35),
            ),
            (
                "first_token_latency",
                latency_block("First Token latency", "first token latency", ttft_ms, 0.45),
            ),
            (
                "time_to_output_token",
                latency_block(
                    "Time to Output Token",
                    "time to output token",
                    tpot_ms,
                    0.12,
                ),
            ),
        ]);
        fill(SERVER_SUMMARY, &values)
    };
    (text, samples)
}

/// The detail log of a run whose summary is `summary`: LoadGen logs the same figures once more as `:::MLLOG`
/// records (`LogDetail`, `LogEffectiveSettings`), under its own keys, with the query count the summary omits.
fn detail(summary: &str, samples: usize) -> String {
    let mut records: Vec<(String, serde_json::Value)> =
        vec![("loadgen_version".to_string(), "5.1 @ 0b0b4b1".into())];
    let mut samples_per_query = 1;
    for line in summary.lines() {
        let Some((label, value)) = line.split_once(':') else {
            continue;
        };
        let (label, value) = (label.trim(), value.trim());
        let number = || -> serde_json::Value {
            value
                .parse::<u64>()
                .map(serde_json::Value::from)
                .or_else(|_| value.parse::<f64>().map(serde_json::Value::from))
                .unwrap_or(serde_json::Value::Null)
        };
        let key = match label {
            "Scenario" => {
                records.push(("requested_scenario".to_string(), value.into()));
                records.push(("effective_scenario".to_string(), value.into()));
                continue;
            }
            "Mode" => {
                records.push(("effective_test_mode".to_string(), value.into()));
                continue;
            }
            "Result is" => {
                records.push(("result_validity".to_string(), value.into()));
                continue;
            }
            "Performance constraints satisfied" => {
                records.push((
                    "result_perf_constraints_met".to_string(),
                    (value == "Yes").into(),
                ));
                continue;
            }
            "samples_per_query" => {
                samples_per_query = value.parse::<usize>().unwrap_or(1).max(1);
                "effective_samples_per_query".to_string()
            }
            "target_qps" => "effective_target_qps".to_string(),
            "ttft_latency (ns)" => "requested_server_ttft_latency".to_string(),
            "tpot_latency (ns)" => "requested_server_tpot_latency".to_string(),
            "Completed samples per second" => "result_completed_samples_per_sec".to_string(),
            "Scheduled samples per second" => "result_scheduled_samples_per_sec".to_string(),
            "Completed tokens per second" => "result_completed_tokens_per_second".to_string(),
            _ => match detail_key(label) {
                Some(key) => key,
                None => continue,
            },
        };
        if !records.iter().any(|(known, _)| *known == key) {
            records.push((key, number()));
        }
    }
    records.push((
        "result_query_count".to_string(),
        (samples / samples_per_query).into(),
    ));
    records
        .into_iter()
        .map(|(key, value)| {
            let record = serde_json::json!({
                "key": key,
                "value": value,
                "time_ms": 0.0,
                "namespace": "mlperf::logging",
                "event_type": "POINT_IN_TIME",
                "metadata": {"is_error": false, "is_warning": false, "file": "results.cc", "line_no": 0},
            });
            format!(":::MLLOG {record}\n")
        })
        .collect()
}

/// The detail log's key of a summary's latency line.
fn detail_key(label: &str) -> Option<String> {
    let (stat, rest) = label.split_once(' ')?;
    let what = rest.strip_suffix(" (ns)")?;
    let percentile = stat.contains('.').then_some(stat);
    Some(match (what, percentile) {
        ("latency", None) => format!("result_{}_latency_ns", stat.to_ascii_lowercase()),
        ("percentile latency", Some(p)) => format!("result_{p}_percentile_latency_ns"),
        ("First Token latency", None) => {
            format!(
                "result_first_token_{}_latency_ns",
                stat.to_ascii_lowercase()
            )
        }
        ("percentile first token latency", Some(p)) => {
            format!("result_first_token_{p}_percentile_latency_ns")
        }
        ("Time to Output Token", None) => {
            format!("result_time_to_output_token_{}", stat.to_ascii_lowercase())
        }
        ("percentile time to output token", Some(p)) => {
            format!("result_time_per_output_token_{p}_percentile_ns")
        }
        _ => return None,
    })
}

/// A double as C++ streams print it by default (six significant digits, `%g`).
fn g6(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let exponent = value.abs().log10().floor() as i32;
    if !(-5..6).contains(&exponent) {
        let mantissa = value / 10f64.powi(exponent);
        let digits = format!("{mantissa:.5}");
        let digits = digits.trim_end_matches('0').trim_end_matches('.');
        return format!(
            "{digits}e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        );
    }
    let decimals = (5 - exponent).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_cpp_streams_print_them() {
        assert_eq!(g6(1042110.0), "1.04211e+06");
        assert_eq!(g6(80.15), "80.15");
        assert_eq!(g6(23514.8), "23514.8");
    }

    #[test]
    fn the_interactive_run_misses_its_bound_and_the_others_are_valid() {
        let (files, counts) = files(164);
        assert_eq!(counts.cells, 5);
        assert_eq!(
            files.len(),
            8,
            "Server and Interactive runs keep their detail log"
        );
        let text = |run: &str| {
            let path = format!("{DIRECTORY}/{run}/performance/run_1/mlperf_log_summary.txt");
            let (_, bytes) = files.iter().find(|(name, _)| *name == path).expect("file");
            String::from_utf8(bytes.clone()).expect("utf-8")
        };
        assert!(text("llama2-70b-99/Interactive").contains("Result is : INVALID"));
        assert!(text("llama2-70b-99/Interactive").contains("Scenario : Server"));
        for run in [
            "llama3.1-8b/Server",
            "llama3.1-8b/Offline",
            "llama2-70b-99/Server",
        ] {
            assert!(text(run).contains("Result is : VALID"), "{run}");
        }
    }
}

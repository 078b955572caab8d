//! Console logs kept instead of result files: a `vllm bench serve` concurrency sweep run in one shell loop and
//! saved with `tee` (`external/console/vllm-qwen3-8b-sweep.log`: each run's command echoed by `set -x`, its
//! argument dump, vLLM's progress lines, a tqdm bar redrawn with carriage returns, and the `Serving Benchmark
//! Result` block as vLLM's `benchmark()` prints it), and one trtllm-bench `throughput` report
//! (`external/console/trtllm-llama3.1-8b-c64.log`, `report_statistics` of `tensorrt_llm/bench/dataclasses/
//! reporting.py`). The figures come from a simple model: TTFT and TPOT grow with the concurrency, the duration is
//! the requests' total latency spread over the concurrency.

use super::{Counts, Files};
use crate::random::DemoRng;
use std::fmt::Write as _;

/// The directory of the logs, relative to the data root.
pub(crate) const DIRECTORY: &str = "external/console";

const CONCURRENCIES: [u32; 4] = [1, 4, 16, 64];
const INPUT_TOKENS: u32 = 1024;
const OUTPUT_TOKENS: u32 = 128;

/// The two logs, with the cells and requests they hold.
pub(crate) fn files(seed: u64) -> (Files, Counts) {
    let mut counts = Counts::default();
    let path = format!("{DIRECTORY}/vllm-qwen3-8b-sweep.log");
    let mut rng = DemoRng::new(seed, &path);
    let mut log = String::new();
    for concurrency in CONCURRENCIES {
        let requests = 8 * concurrency.max(4);
        vllm_run(&mut log, concurrency, requests, &mut rng);
        counts.cells += 1;
        counts.requests += requests as usize;
    }
    let report_path = format!("{DIRECTORY}/trtllm-llama3.1-8b-c64.log");
    let mut report_rng = DemoRng::new(seed, &report_path);
    let report = trtllm_report(512, 64, &mut report_rng);
    counts.cells += 1;
    counts.requests += 512;
    (
        vec![(path, log.into_bytes()), (report_path, report.into_bytes())],
        counts,
    )
}

/// Per-request figures of one run at `concurrency`: TTFT, TPOT and end-to-end latency in ms, output tokens.
struct Figures {
    ttft_ms: Vec<f64>,
    tpot_ms: Vec<f64>,
    e2el_ms: Vec<f64>,
    output_tokens: Vec<f64>,
    input_tokens: f64,
    duration_s: f64,
}

fn simulate(concurrency: u32, requests: u32, rng: &mut DemoRng) -> Figures {
    let load = f64::from(concurrency);
    let mut figures = Figures {
        ttft_ms: Vec::new(),
        tpot_ms: Vec::new(),
        e2el_ms: Vec::new(),
        output_tokens: Vec::new(),
        input_tokens: 0.0,
        duration_s: 0.0,
    };
    for _ in 0..requests {
        let ttft = 28.0 * (1.0 + load / 12.0) * (0.25 * rng.normal()).exp();
        let tpot = 7.5 * (1.0 + load / 40.0) * (0.08 * rng.normal()).exp();
        let output = f64::from(rng.int_range(OUTPUT_TOKENS * 3 / 4, OUTPUT_TOKENS));
        figures.input_tokens += f64::from(rng.int_range(INPUT_TOKENS * 3 / 4, INPUT_TOKENS));
        figures.ttft_ms.push(ttft);
        figures.tpot_ms.push(tpot);
        figures.e2el_ms.push(ttft + tpot * (output - 1.0));
        figures.output_tokens.push(output);
    }
    figures.duration_s = figures.e2el_ms.iter().sum::<f64>() / 1000.0 / load * 1.03;
    figures
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// `np.percentile` (linear interpolation between closest ranks).
fn percentile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let position = p / 100.0 * (sorted.len() - 1) as f64;
    let (below, above) = (position.floor() as usize, position.ceil() as usize);
    sorted[below] + (sorted[above] - sorted[below]) * (position - below as f64)
}

/// One run of the loop: the echoed command, the argument dump, progress and the result block.
fn vllm_run(log: &mut String, concurrency: u32, requests: u32, rng: &mut DemoRng) {
    let figures = simulate(concurrency, requests, rng);
    let _ = writeln!(
        log,
        "+ vllm bench serve --model Qwen/Qwen3-8B --dataset-name random --random-input-len {INPUT_TOKENS} \
         --random-output-len {OUTPUT_TOKENS} --num-prompts {requests} --max-concurrency {concurrency} \
         --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,95,99"
    );
    let _ = writeln!(
        log,
        "INFO 07-08 09:{:02}:11 [__init__.py:244] Automatically detected platform cuda.",
        concurrency % 60
    );
    let _ = writeln!(
        log,
        "Namespace(subparser='bench', bench_type='serve', seed=0, num_prompts={requests}, \
         dataset_name='random', dataset_path=None, random_input_len={INPUT_TOKENS}, \
         random_output_len={OUTPUT_TOKENS}, random_range_ratio=0.25, backend='vllm', base_url=None, \
         host='127.0.0.1', port=8000, endpoint='/v1/completions', max_concurrency={concurrency}, \
         model='Qwen/Qwen3-8B', tokenizer=None, request_rate=inf, burstiness=1.0, \
         percentile_metrics='ttft,tpot,itl,e2el', metric_percentiles='50,95,99', goodput=None)"
    );
    for line in [
        "Starting initial single prompt test run...",
        "Initial test run completed. Starting main benchmark run...",
        "Traffic request rate: inf",
        "Burstiness factor: 1.0 (Poisson process)",
    ] {
        let _ = writeln!(log, "{line}");
    }
    let _ = writeln!(log, "Maximum request concurrency: {concurrency}");
    let bar = |done: u32| {
        format!(
            "{:3}%|{:<10}| {done}/{requests}",
            100 * done / requests,
            "#".repeat((10 * done / requests) as usize)
        )
    };
    let _ = writeln!(log, "{}\r{}\r{}", bar(0), bar(requests / 2), bar(requests));
    let completed = figures.e2el_ms.len();
    let total_output: f64 = figures.output_tokens.iter().sum();
    let duration = figures.duration_s;
    let row = |log: &mut String, label: &str, value: String| {
        let _ = writeln!(log, "{label:<40} {value:<10}");
    };
    let _ = writeln!(log, "{:=^50}", " Serving Benchmark Result ");
    row(log, "Successful requests:", completed.to_string());
    row(log, "Failed requests:", "0".to_string());
    row(log, "Maximum request concurrency:", concurrency.to_string());
    row(log, "Benchmark duration (s):", format!("{duration:.2}"));
    row(
        log,
        "Total input tokens:",
        format!("{}", figures.input_tokens),
    );
    row(log, "Total generated tokens:", format!("{total_output}"));
    row(
        log,
        "Request throughput (req/s):",
        format!("{:.2}", completed as f64 / duration),
    );
    row(
        log,
        "Output token throughput (tok/s):",
        format!("{:.2}", total_output / duration),
    );
    row(
        log,
        "Total Token throughput (tok/s):",
        format!("{:.2}", (figures.input_tokens + total_output) / duration),
    );
    for (values, name, header) in [
        (&figures.ttft_ms, "TTFT", "Time to First Token"),
        (
            &figures.tpot_ms,
            "TPOT",
            "Time per Output Token (excl. 1st token)",
        ),
        (&figures.e2el_ms, "E2EL", "End-to-end Latency"),
    ] {
        let _ = writeln!(log, "{header:-^50}");
        row(
            log,
            &format!("Mean {name} (ms):"),
            format!("{:.2}", mean(values)),
        );
        row(
            log,
            &format!("Median {name} (ms):"),
            format!("{:.2}", percentile(values, 50.0)),
        );
        for p in [50, 95, 99] {
            row(
                log,
                &format!("P{p} {name} (ms):"),
                format!("{:.2}", percentile(values, f64::from(p))),
            );
        }
    }
    let _ = writeln!(log, "{}", "=".repeat(50));
    let _ = writeln!(log);
}

/// A trtllm-bench `throughput --streaming --concurrency C` report, after its echoed command.
fn trtllm_report(requests: u32, concurrency: u32, rng: &mut DemoRng) -> String {
    let figures = simulate(concurrency, requests, rng);
    let total_output: f64 = figures.output_tokens.iter().sum();
    let duration = figures.duration_s * 0.85;
    let mut log = String::new();
    let rule = "===========================================================";
    let _ = writeln!(
        log,
        "+ trtllm-bench --model meta-llama/Llama-3.1-8B-Instruct throughput --dataset /data/synthetic_1k_128.txt \
         --backend pytorch --streaming --concurrency {concurrency} --num_requests {requests}"
    );
    for line in [
        "[07/08/2026-10:02:11] [TRT-LLM] [I] Setting up throughput benchmark.",
        "",
        rule,
        "= PYTORCH BACKEND",
        rule,
        "Model:\t\t\tmeta-llama/Llama-3.1-8B-Instruct",
        "Model Path:\t\tNone",
        "TensorRT LLM Version:\t1.1.0",
        "Dtype:\t\t\tbfloat16",
        "KV Cache Dtype:\t\tFP8",
        "Quantization:\t\tFP8",
        "",
        rule,
        "= WORLD + RUNTIME INFORMATION ",
        rule,
        "TP Size:                1",
        "PP Size:                1",
        "EP Size:                None",
        "Max Runtime Batch Size: 2048",
        "Max Runtime Tokens:     8192",
        "Scheduling Policy:      GUARANTEED_NO_EVICT",
        "KV Memory Percentage:   90.00%",
        "Issue Rate (req/sec):   3.1417E+13",
        "",
        rule,
        "= REQUEST DETAILS ",
        rule,
    ] {
        let _ = writeln!(log, "{line}");
    }
    let count = f64::from(requests);
    let _ = writeln!(log, "Number of requests:             {requests}");
    let _ = writeln!(
        log,
        "Number of concurrent requests:  {:.4}",
        f64::from(concurrency) * 0.96
    );
    let _ = writeln!(
        log,
        "Average Input Length (tokens):  {:.4}",
        figures.input_tokens / count
    );
    let _ = writeln!(
        log,
        "Average Output Length (tokens): {:.4}",
        total_output / count
    );
    for line in [rule, "= PERFORMANCE OVERVIEW ", rule] {
        let _ = writeln!(log, "{line}");
    }
    let pairs = [
        ("Request Throughput (req/sec):", count / duration),
        (
            "Total Output Throughput (tokens/sec):",
            total_output / duration,
        ),
        (
            "Total Token Throughput (tokens/sec):",
            (figures.input_tokens + total_output) / duration,
        ),
        ("Total Latency (ms):", duration * 1000.0),
        ("Average request latency (ms):", mean(&figures.e2el_ms)),
        (
            "Average time-to-first-token [TTFT] (ms):",
            mean(&figures.ttft_ms),
        ),
        (
            "Average time-per-output-token [TPOT] (ms):",
            mean(&figures.tpot_ms),
        ),
    ];
    for (label, value) in pairs {
        let _ = writeln!(log, "{label:<50}{value:.4}");
    }
    for (tag, title, values) in [
        (
            "TPOT",
            "Per-Request Time-per-Output-Token [TPOT] Breakdown (ms)",
            &figures.tpot_ms,
        ),
        (
            "TTFT",
            "Per-Request Time-to-First-Token [TTFT] Breakdown (ms) ",
            &figures.ttft_ms,
        ),
        (
            "Latency",
            "Request Latency Breakdown (ms) -----------------------",
            &figures.e2el_ms,
        ),
    ] {
        let _ = writeln!(log, "\n-- {title}\n");
        let stats = [
            ("MINIMUM", percentile(values, 0.0)),
            ("MAXIMUM", percentile(values, 100.0)),
            ("AVERAGE", mean(values)),
            ("P50", percentile(values, 50.0)),
            ("P90", percentile(values, 90.0)),
            ("P95", percentile(values, 95.0)),
            ("P99", percentile(values, 99.0)),
        ];
        for (key, value) in stats {
            let _ = writeln!(log, "[{tag}] {key:<7}: {value:.4}");
        }
    }
    let _ = writeln!(log, "\n{rule}");
    log
}

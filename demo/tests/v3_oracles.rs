//! TR164 V3 oracles (the published V3 tables of `cellscope_demo::published`), checked on rows read back from the generated files.

mod support;

use cellscope_model::summary::CellSummary;
use cellscope_model::{CellStatus, Criterion};
use std::collections::BTreeMap;
use support::*;

const MODELS: [&str; 5] = [
    "qwen2.5-7b",
    "llama3.1-8b",
    "mistral-7b",
    "qwen2.5-14b",
    "phi-4",
];
const WORKLOADS: [&str; 5] = [
    "short_decode",
    "balanced_2k",
    "long_prefill_8k",
    "long_decode",
    "repeated_prefix",
];

/// per_model_efficiency_curves at N = 2, 4, 8, 16 and the 4-dp N=32 table.
fn per_model_curves(backend: &str) -> [(&'static str, [f64; 5]); 5] {
    if backend == "vllm" {
        [
            ("qwen2.5-7b", [0.961, 0.905, 0.806, 0.686, 0.4997]),
            ("llama3.1-8b", [0.971, 0.918, 0.805, 0.644, 0.4876]),
            ("mistral-7b", [0.953, 0.885, 0.787, 0.572, 0.4701]),
            ("qwen2.5-14b", [0.976, 0.936, 0.859, 0.696, 0.6118]),
            ("phi-4", [0.983, 0.941, 0.850, 0.718, 0.6189]),
        ]
    } else {
        [
            ("qwen2.5-7b", [0.973, 0.928, 0.823, 0.687, 0.5290]),
            ("llama3.1-8b", [0.959, 0.897, 0.795, 0.648, 0.4777]),
            ("mistral-7b", [0.961, 0.889, 0.796, 0.641, 0.4713]),
            ("qwen2.5-14b", [0.980, 0.938, 0.860, 0.722, 0.6000]),
            ("phi-4", [0.981, 0.937, 0.848, 0.729, 0.5952]),
        ]
    }
}

/// first_n_below_0.65, rows in MODELS × WORKLOADS order; 0 = never (null).
const FIRST_N_VLLM: [u32; 25] = [
    16, 32, 16, 0, 32, 16, 32, 16, 0, 32, 16, 16, 16, 16, 16, 32, 32, 16, 0, 32, 32, 0, 16, 0, 32,
];
const FIRST_N_SGLANG: [u32; 25] = [
    32, 32, 8, 0, 32, 32, 32, 8, 0, 32, 16, 16, 16, 32, 32, 32, 32, 16, 0, 32, 32, 32, 16, 0, 32,
];

fn cells(run: &str) -> &'static [CellSummary] {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<BTreeMap<String, &'static [CellSummary]>>> =
        std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut guard = cache
        .lock()
        .expect("no test panics while holding the cache");
    guard
        .entry(run.to_string())
        .or_insert_with(|| Box::leak(summaries(run, 10).into_boxed_slice()))
}

/// Mean efficiency over cells matching the filter at N (rep means of rep means = plain mean here: 3 reps each).
fn mean_eff(cells: &[CellSummary], n: u32, filter: impl Fn(&CellSummary) -> bool) -> f64 {
    let values: Vec<f64> = cells
        .iter()
        .filter(|c| c.key.n().expect("a concurrency") == n && filter(c))
        .filter_map(|c| c.efficiency)
        .collect();
    values.iter().sum::<f64>() / values.len() as f64
}

#[test]
fn counts_match_the_final_state_audit() {
    for run in [VLLM_RUN, SGLANG_RUN] {
        let cells = cells(run);
        assert_eq!(cells.len(), 900, "{run}");
        assert_eq!(
            cells.iter().map(|c| c.ok_rows).sum::<u32>(),
            94_500,
            "{run} ok rows"
        );
        assert!(
            cells.iter().all(|c| c.status == CellStatus::Clean
                && c.rows == 10 * c.key.n().expect("a concurrency")),
            "{run}"
        );
        for n in [1, 2, 4, 8, 16, 32] {
            let rows: u32 = cells
                .iter()
                .filter(|c| c.key.n().expect("a concurrency") == n)
                .map(|c| c.rows)
                .sum();
            assert_eq!(rows, 1_500 * n, "{run} rows at N={n}");
        }
    }
    let backup = read_rows(BACKUP_RUN);
    assert_eq!(backup.len(), 94_500);
    assert_eq!(
        backup
            .iter()
            .filter(|r| r.get("status") == "http_400")
            .count(),
        3_780
    );
    assert_eq!(
        backup.iter().filter(|r| r.get("status") == "ok").count(),
        90_720
    );
    assert!(
        backup
            .iter()
            .filter(|r| r.get("status") == "http_400")
            .all(|r| r.get("model") == "mistral-7b"
                && r.get("workload") == "long_prefill_8k"
                && r.get("completion_tokens") == "0"
                && r.get("ttft_ms").is_empty()
                && r.get("error").contains("8768"))
    );
    let refill = read_rows(REFILL_RUN);
    assert_eq!(refill.len(), 3_780);
    assert!(
        refill
            .iter()
            .all(|r| r.get("status") == "ok" && r.get("run_id") == "20260613_055519_963364")
    );
    // N=32 "320/320": six cells (2 phases × 3 reps) of 320 rows.
    assert_eq!(
        refill.iter().filter(|r| r.get("n_agents") == "32").count(),
        6 * 320
    );
}

#[test]
fn the_splice_replaced_exactly_the_http_400_rows_in_place() {
    let dir = data_root();
    let master = std::fs::read_to_string(dir.join(SGLANG_RUN).join("metrics.csv")).unwrap();
    let backup = std::fs::read_to_string(dir.join(BACKUP_RUN).join("metrics.csv")).unwrap();
    let refill = std::fs::read_to_string(dir.join(REFILL_RUN).join("metrics.csv")).unwrap();
    let master_lines: Vec<&str> = master.split_terminator("\r\n").collect();
    let backup_lines: Vec<&str> = backup.split_terminator("\r\n").collect();
    assert_eq!(master_lines.len(), backup_lines.len());
    assert_eq!(format!("{},error", master_lines[0]), backup_lines[0]);
    let refill_lines: std::collections::HashSet<&str> =
        refill.split_terminator("\r\n").skip(1).collect();
    let master_rows = read_rows(SGLANG_RUN);
    let backup_rows = read_rows(BACKUP_RUN);
    let mut replaced = 0;
    for (index, (m, b)) in master_lines.iter().zip(&backup_lines).enumerate().skip(1) {
        if b.starts_with(m) && b.len() == m.len() + 1 {
            continue; // identical apart from the empty error field
        }
        replaced += 1;
        let (mr, br) = (&master_rows[index - 1], &backup_rows[index - 1]);
        assert_eq!(
            br.get("status"),
            "http_400",
            "line {index} changed but was not a failure"
        );
        assert_eq!(mr.key("x"), br.key("x"), "line {index}: cell key changed");
        assert_eq!(mr.get("run_id"), "20260613_055519_963364");
        assert!(refill_lines.contains(m), "line {index} is not a refill row");
    }
    assert_eq!(replaced, 3_780);
}

#[test]
fn per_model_curves_match_the_published_tables() {
    let mut worst32: f64 = 0.0;
    let mut worst: f64 = 0.0;
    for (backend, run) in [("vllm", VLLM_RUN), ("sglang", SGLANG_RUN)] {
        let cells = cells(run);
        for (model, values) in per_model_curves(backend) {
            for (position, n) in [2, 4, 8, 16, 32].into_iter().enumerate() {
                let got = mean_eff(cells, n, |c| c.key.model == model);
                let error = (got - values[position]).abs();
                if n == 32 {
                    worst32 = worst32.max(error);
                    assert!(
                        error < 0.01,
                        "{backend} {model} N=32: {got} vs {}",
                        values[position]
                    );
                } else {
                    worst = worst.max(error);
                    assert!(
                        error < 0.0035,
                        "{backend} {model} N={n}: {got} vs {}",
                        values[position]
                    );
                }
            }
        }
    }
    eprintln!("per-model curves max |error|: N=2..16 {worst:.2e}, N=32 {worst32:.2e}");
}

#[test]
fn workload_means_at_n32_match_workload_boundary() {
    // workload_boundary mean_efficiency_at_n32 and mean_p95x_at_n32 (2 dp).
    let published = [
        (
            "vllm",
            VLLM_RUN,
            [0.4493, 0.5733, 0.3875, 0.7151, 0.5629],
            [2.43, 1.81, 2.64, 1.41, 1.80],
        ),
        (
            "sglang",
            SGLANG_RUN,
            [0.5388, 0.5514, 0.2812, 0.7231, 0.5788],
            [1.96, 1.85, 3.50, 1.40, 1.76],
        ),
    ];
    for (backend, run, efficiency, p95x) in published {
        let cells = cells(run);
        for (index, workload) in WORKLOADS.into_iter().enumerate() {
            let got = mean_eff(cells, 32, |c| c.key.workload == workload);
            assert!(
                (got - efficiency[index]).abs() < 0.005,
                "{backend} {workload}: {got} vs {}",
                efficiency[index]
            );
            let values: Vec<f64> = cells
                .iter()
                .filter(|c| c.key.n().expect("a concurrency") == 32 && c.key.workload == workload)
                .filter_map(|c| c.p95_multiplier)
                .collect();
            let got = values.iter().sum::<f64>() / values.len() as f64;
            assert!(
                (got - p95x[index]).abs() < 0.06,
                "{backend} {workload} p95x: {got} vs {}",
                p95x[index]
            );
        }
    }
}

#[test]
fn first_n_below_065_table_is_exact_in_each_phase() {
    for (backend, run, table) in [
        ("vllm", VLLM_RUN, FIRST_N_VLLM),
        ("sglang", SGLANG_RUN, FIRST_N_SGLANG),
    ] {
        let curves = support::curves_by_series(cells(run));
        let mut matches = 0;
        for phase in ["scaling", "ttft"] {
            for (m, model) in MODELS.into_iter().enumerate() {
                for (w, workload) in WORKLOADS.into_iter().enumerate() {
                    let curve =
                        &curves[&(phase.to_string(), model.to_string(), workload.to_string())];
                    let expected = table[m * 5 + w];
                    let got = curve.breakdown(&Criterion::V3).n().unwrap_or(0);
                    assert_eq!(got, expected, "{backend} {phase} {model}|{workload}");
                    matches += 1;
                }
            }
        }
        assert_eq!(matches, 50);
    }
}

#[test]
fn stated_boundary_matrix_values_are_followed() {
    // Individually stated N=32 values of the V3 report, pooled over both phases and reps.
    let stated = [
        ("vllm", "qwen2.5-7b", "long_decode", 0.681),
        ("vllm", "qwen2.5-7b", "long_prefill_8k", 0.3539),
        ("vllm", "llama3.1-8b", "short_decode", 0.3071),
        ("vllm", "llama3.1-8b", "long_decode", 0.686),
        ("vllm", "mistral-7b", "long_decode", 0.651),
        ("vllm", "mistral-7b", "long_prefill_8k", 0.311),
        ("vllm", "qwen2.5-14b", "long_decode", 0.780),
        ("vllm", "qwen2.5-14b", "long_prefill_8k", 0.448),
        ("vllm", "phi-4", "long_decode", 0.778),
        ("vllm", "phi-4", "long_prefill_8k", 0.466),
        ("sglang", "qwen2.5-7b", "balanced_2k", 0.55),
        ("sglang", "qwen2.5-7b", "long_decode", 0.758),
        ("sglang", "qwen2.5-7b", "long_prefill_8k", 0.252),
        ("sglang", "llama3.1-8b", "long_decode", 0.668),
        ("sglang", "llama3.1-8b", "long_prefill_8k", 0.222),
        ("sglang", "mistral-7b", "long_decode", 0.645),
        ("sglang", "mistral-7b", "long_prefill_8k", 0.297),
        ("sglang", "qwen2.5-14b", "long_decode", 0.774),
        ("sglang", "qwen2.5-14b", "long_prefill_8k", 0.320),
        ("sglang", "phi-4", "long_decode", 0.770),
        ("sglang", "phi-4", "long_prefill_8k", 0.315),
    ];
    for (backend, model, workload, value) in stated {
        let run = if backend == "vllm" {
            VLLM_RUN
        } else {
            SGLANG_RUN
        };
        let got = mean_eff(cells(run), 32, |c| {
            c.key.model == model && c.key.workload == workload
        });
        assert!(
            (got - value).abs() < 0.006,
            "{backend} {model}|{workload}: {got} vs {value}"
        );
    }
    // Stated p95x_at_n32.
    for (run, model, workload, value) in [
        (VLLM_RUN, "phi-4", "long_decode", 1.28),
        (VLLM_RUN, "mistral-7b", "long_prefill_8k", 3.24),
        (SGLANG_RUN, "llama3.1-8b", "long_prefill_8k", 4.40),
        (SGLANG_RUN, "qwen2.5-7b", "long_prefill_8k", 3.79),
    ] {
        let values: Vec<f64> = cells(run)
            .iter()
            .filter(|c| {
                c.key.n().expect("a concurrency") == 32
                    && c.key.model == model
                    && c.key.workload == workload
            })
            .filter_map(|c| c.p95_multiplier)
            .collect();
        let got = values.iter().sum::<f64>() / values.len() as f64;
        assert!(
            (got - value).abs() < 0.05,
            "{model}|{workload} p95x {got} vs {value}"
        );
    }
}

#[test]
fn mistral_prompt_tokens_follow_the_tokenizer_statistics_per_phase() {
    // The published tokenizer asymmetry: min / mean / max over n = 1,890 per backend.
    for (run, (min, mean, max)) in [
        (VLLM_RUN, (7629.0, 8148.0, 8644.0)),
        (SGLANG_RUN, (8860.0, 9465.0, 10039.0)),
    ] {
        let rows = read_rows(run);
        for phase in ["scaling", "ttft"] {
            let tokens: Vec<f64> = rows
                .iter()
                .filter(|r| {
                    r.get("model") == "mistral-7b"
                        && r.get("workload") == "long_prefill_8k"
                        && r.get("phase") == phase
                })
                .map(|r| r.num("prompt_tokens"))
                .collect();
            assert_eq!(tokens.len(), 1_890);
            let got_mean = tokens.iter().sum::<f64>() / tokens.len() as f64;
            assert_eq!(tokens.iter().copied().fold(f64::INFINITY, f64::min), min);
            assert_eq!(tokens.iter().copied().fold(0.0, f64::max), max);
            assert!(
                (got_mean - mean).abs() < 0.5,
                "{run} {phase}: mean {got_mean}"
            );
        }
    }
}

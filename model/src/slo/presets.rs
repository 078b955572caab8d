//! SLO presets: the latency constraints of MLPerf Inference's Server scenario for its LLM benchmarks.
//!
//! MLPerf Inference v6.0 Server constraints (LoadGen 6.0 `mlperf.conf`, `ttft_latency` and `tpot_latency`): the
//! configuration writes them in milliseconds and LoadGen compares them in nanoseconds against the 99th percentile
//! (`*.Server.target_latency_percentile = 99`) of each request's time to first token and time per output token.
//! The `-interactive` entries are the benchmarks' interactive variants, which carry tighter Server constraints.

/// One benchmark's constraints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preset {
    /// The benchmark, as MLPerf names it (`llama3.1-8b` for the configuration's `llama3_1-8b`).
    pub name: &'static str,
    /// The bound on the 99th percentile of time to first token, in ms.
    pub p99_ttft_ms: f64,
    /// The bound on the 99th percentile of time per output token, in ms.
    pub p99_tpot_ms: f64,
}

/// The MLPerf Inference round the constraints are taken from.
pub const MLPERF_VERSION: &str = "v6.0";

/// Every LLM benchmark's Server constraints, in MLPerf's configuration order.
pub const MLPERF_SERVER: [Preset; 11] = [
    preset("llama2-70b", 2000.0, 200.0),
    preset("llama2-70b-interactive", 450.0, 40.0),
    preset("mixtral-8x7b", 2000.0, 200.0),
    preset("llama3.1-405b", 6000.0, 175.0),
    preset("llama3.1-405b-interactive", 4500.0, 80.0),
    preset("llama3.1-8b", 2000.0, 100.0),
    preset("llama3.1-8b-interactive", 500.0, 30.0),
    preset("deepseek-r1", 2000.0, 80.0),
    preset("deepseek-r1-interactive", 1500.0, 15.0),
    preset("gpt-oss-120b", 3000.0, 80.0),
    preset("gpt-oss-120b-interactive", 2000.0, 15.0),
];

const fn preset(name: &'static str, p99_ttft_ms: f64, p99_tpot_ms: f64) -> Preset {
    Preset {
        name,
        p99_ttft_ms,
        p99_tpot_ms,
    }
}

/// The benchmarks whose Server bound is on each request's whole latency rather than on its tokens (MLPerf's
/// `target_latency` at the 99th percentile), with that bound in ms.
pub const MLPERF_SERVER_LATENCY: [(&str, f64); 1] = [("gptj", 20000.0)];

/// The preset names, in table order (token bounds, then whole-latency bounds).
pub fn names() -> Vec<&'static str> {
    MLPERF_SERVER
        .iter()
        .map(|preset| preset.name)
        .chain(MLPERF_SERVER_LATENCY.iter().map(|(name, _)| *name))
        .collect()
}

/// The preset name a benchmark resolves to as MLPerf's configuration or results tree writes it: trimmed and in
/// lowercase, `llama3_1` read as `llama3.1`, without the accuracy target that results directories append
/// (`llama2-70b-99.9` is `llama2-70b`).
pub fn preset_name(benchmark: &str) -> String {
    let lowered = benchmark.trim().to_ascii_lowercase().replace("3_1", "3.1");
    ["-99.9", "-99"]
        .iter()
        .find_map(|suffix| lowered.strip_suffix(suffix))
        .map_or(lowered.clone(), str::to_string)
}

/// The preset of the interactive variant of a benchmark (`llama2-70b-99` run in the Interactive scenario is
/// `llama2-70b-interactive`).
pub fn interactive_name(benchmark: &str) -> String {
    let name = preset_name(benchmark);
    if name.ends_with("-interactive") {
        name
    } else {
        format!("{name}-interactive")
    }
}

/// Whether `name` (after [`preset_name`]) is a preset of either table.
pub fn is_preset(name: &str) -> bool {
    let wanted = preset_name(name);
    names().contains(&wanted.as_str())
}

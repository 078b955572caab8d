//! What AIPerf and GenAI-Perf share: the metric objects of their summaries and CSV exports (`{"unit": "ms",
//! "avg": …, "p50": …}` under a tag), read into cells-table columns by one set of rules, and the artifact directory
//! name AIPerf and GenAI-Perf give a run by default.

use super::json::{self, field_number};
use super::model_name;
use crate::run::record::Part;
use cellscope_model::stat::Stat;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Milliseconds per unit of a time metric (`{"unit": "ms"}`), `None` for a unit that is not a time.
pub(crate) fn ms_per_unit(unit: &str) -> Option<f64> {
    Some(match unit {
        "ms" => 1.0,
        "s" | "sec" | "seconds" => 1000.0,
        "us" | "µs" => 1e-3,
        "ns" => 1e-6,
        _ => return None,
    })
}

/// Metric tags per figure: AIPerf's current names, its pre-October-2025 ones and early GenAI-Perf's.
pub(crate) const TTFT_TAGS: [&str; 2] = ["time_to_first_token", "ttft"];
const ITL_TAGS: [&str; 2] = ["inter_token_latency", "itl"];
const PROMPT_TAGS: [&str; 2] = ["input_sequence_length", "num_input_token"];
const COMPLETION_TAGS: [&str; 2] = ["output_sequence_length", "num_output_token"];

/// The tool's aggregates as cells-table columns, from AIPerf's or GenAI-Perf's metric objects (`{"unit",
/// "avg", "p50", …}`): times converted to ms by their `unit`, token counts and throughput as written (values
/// written as strings, as early GenAI-Perf did, are read too).
pub(crate) fn reported(metrics: &Json) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let time = |tags: &[&str], stat: &str| -> Option<f64> {
        let metric = tags.iter().find_map(|tag| metrics.get(*tag))?;
        let factor = ms_per_unit(json::field_text(metric, "unit").unwrap_or("ms"))?;
        field_number(metric, stat).map(|value| value * factor)
    };
    let plain = |tags: &[&str], stat: &str| -> Option<f64> {
        let metric = tags.iter().find_map(|tag| metrics.get(*tag))?;
        field_number(metric, stat)
    };
    let figures = [
        (Stat::MeanWallMs, time(&["request_latency"], "avg")),
        (Stat::P50WallMs, time(&["request_latency"], "p50")),
        (Stat::P95WallMs, time(&["request_latency"], "p95")),
        (Stat::P99WallMs, time(&["request_latency"], "p99")),
        (Stat::P50TtftMs, time(&TTFT_TAGS, "p50")),
        (Stat::P95TtftMs, time(&TTFT_TAGS, "p95")),
        (Stat::MeanPromptTokens, plain(&PROMPT_TAGS, "avg")),
        (Stat::MeanCompletionTokens, plain(&COMPLETION_TAGS, "avg")),
        (
            Stat::AggregateTps,
            plain(&["output_token_throughput"], "avg"),
        ),
        (Stat::MeanTtftMs, time(&TTFT_TAGS, "avg")),
        (Stat::P99TtftMs, time(&TTFT_TAGS, "p99")),
        // The tool's per-request inter-token latency is (latency − TTFT) / (output tokens − 1): a TPOT.
        (Stat::MeanTpotMs, time(&ITL_TAGS, "avg")),
        (Stat::P50TpotMs, time(&ITL_TAGS, "p50")),
        (Stat::P95TpotMs, time(&ITL_TAGS, "p95")),
        (Stat::P99TpotMs, time(&ITL_TAGS, "p99")),
        (
            Stat::P50InteractivityTps,
            plain(&["output_token_throughput_per_user"], "p50"),
        ),
        (
            Stat::RequestThroughputRps,
            plain(&["request_throughput"], "avg"),
        ),
    ];
    for (column, value) in figures {
        if let Some(value) = value.filter(|value| value.is_finite()) {
            out.insert(column.name().to_string(), value);
        }
    }
    out
}

/// The model of AIPerf's default artifact directory name `<model>-<service kind>-<endpoint type>-<stimulus>`
/// (`meta-llama_Llama-3.1-8B-Instruct-openai-chat-concurrency4`): the text before `-openai-` (the one service
/// kind AIPerf has), where AIPerf wrote the model's `/` as `_`; the first `_` is taken for it, and the name is
/// reduced to its last component like a recorded one.
pub(crate) fn directory_model(directory: &str) -> Option<Part> {
    let (model, _) = directory.split_once("-openai-")?;
    if model.is_empty() {
        return None;
    }
    let name = model.replacen('_', "/", 1);
    Part::inferred(
        model_name(&name),
        format!(
            "the artifact directory `{directory}` (AIPerf names it `<model>-openai-<endpoint>-…`, `/` written as \
             `_`)"
        ),
    )
}

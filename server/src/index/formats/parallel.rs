//! The per-request parallel arrays that vLLM's and SGLang's result objects share (`ttfts`, `itls`,
//! `latencies`, `input_lens`, `output_lens`, `start_times`, `errors`; times in seconds), read into
//! [`Request`]s, and the aggregate keys both write (`mean_ttft_ms`, `p99_e2el_ms`, …) read as reported figures.

use super::Request;
use super::json::{field_number, number};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// The arrays found in one result object.
pub struct Arrays<'a> {
    pub count: usize,
    latencies: Option<&'a Vec<Json>>,
    ttfts: Option<&'a Vec<Json>>,
    itls: Option<&'a Vec<Json>>,
    input_lens: Option<&'a Vec<Json>>,
    output_lens: Option<&'a Vec<Json>>,
    start_times: Option<&'a Vec<Json>>,
    errors: Option<&'a Vec<Json>>,
}

/// Why the arrays of an object cannot be used.
pub enum ArraysProblem {
    /// `key` is present but is not an array.
    NotAnArray(&'static str),
    /// The arrays disagree on the number of requests.
    Lengths(Vec<(&'static str, usize)>),
}

impl ArraysProblem {
    pub fn message(&self) -> String {
        match self {
            ArraysProblem::NotAnArray(key) => {
                format!("`{key}` is not an array of per-request values")
            }
            ArraysProblem::Lengths(lengths) => format!(
                "the per-request arrays have different lengths ({})",
                lengths
                    .iter()
                    .map(|(key, length)| format!("{key}: {length}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

const KEYS: [&str; 7] = [
    "latencies",
    "ttfts",
    "itls",
    "input_lens",
    "output_lens",
    "start_times",
    "errors",
];

/// The arrays of `object`; `Ok(None)` when it has none (an aggregate-only result).
pub fn arrays(object: &Json) -> Result<Option<Arrays<'_>>, ArraysProblem> {
    let mut found: BTreeMap<&'static str, &Vec<Json>> = BTreeMap::new();
    for key in KEYS {
        match object.get(key) {
            None | Some(Json::Null) => {}
            Some(Json::Array(values)) => {
                found.insert(key, values);
            }
            Some(_) => return Err(ArraysProblem::NotAnArray(key)),
        }
    }
    // `latencies` and `queue_times` alone (vLLM without --save-detailed) still give wall latencies.
    if !found.contains_key("latencies") && !found.contains_key("ttfts") {
        return Ok(None);
    }
    let lengths: Vec<(&'static str, usize)> = found
        .iter()
        .map(|(key, values)| (*key, values.len()))
        .collect();
    let count = lengths[0].1;
    if lengths.iter().any(|(_, length)| *length != count) {
        return Err(ArraysProblem::Lengths(lengths));
    }
    Ok(Some(Arrays {
        count,
        latencies: found.get("latencies").copied(),
        ttfts: found.get("ttfts").copied(),
        itls: found.get("itls").copied(),
        input_lens: found.get("input_lens").copied(),
        output_lens: found.get("output_lens").copied(),
        start_times: found.get("start_times").copied(),
        errors: found.get("errors").copied(),
    }))
}

impl Arrays<'_> {
    /// Whether wall latency has to be rebuilt as TTFT + Σ ITL (no `latencies` array).
    pub fn wall_derived(&self) -> bool {
        self.latencies.is_none() && self.ttfts.is_some() && self.itls.is_some()
    }

    /// The requests, in cellscope's units. A request fails when its error text is non-empty; without an
    /// `errors` array, a latency of exactly 0.0 is how vLLM marks a failed request.
    pub fn requests(&self) -> Vec<Request> {
        let at = |values: Option<&Vec<Json>>, index: usize| -> Option<f64> {
            values.and_then(|values| values.get(index)).and_then(number)
        };
        (0..self.count)
            .map(|index| {
                let ttft_s = at(self.ttfts, index);
                let itl_sum_s = self
                    .itls
                    .and_then(|values| values.get(index))
                    .and_then(Json::as_array)
                    .map(|gaps| gaps.iter().filter_map(number).sum::<f64>());
                let latency_s = at(self.latencies, index);
                let wall_s = match (latency_s, ttft_s, itl_sum_s) {
                    (Some(latency), _, _) => Some(latency),
                    (None, Some(ttft), Some(gaps)) => Some(ttft + gaps),
                    _ => None,
                };
                let error = match self.errors {
                    Some(errors) => errors
                        .get(index)
                        .and_then(Json::as_str)
                        .filter(|text| !text.is_empty())
                        .map(str::to_string),
                    None if latency_s == Some(0.0) => {
                        Some("latency 0.0 (how the tool marks a failed request)".to_string())
                    }
                    None => None,
                };
                let start_s = at(self.start_times, index);
                Request {
                    wall_ms: wall_s.map(|seconds| seconds * 1000.0),
                    ttft_ms: ttft_s.map(|seconds| seconds * 1000.0),
                    prompt_tokens: at(self.input_lens, index),
                    completion_tokens: at(self.output_lens, index),
                    start_s: start_s.filter(|_| latency_s.is_some()),
                    end_s: start_s
                        .zip(latency_s)
                        .map(|(start, latency)| start + latency),
                    error,
                }
            })
            .collect()
    }
}

/// The tool's aggregates as cells-table columns: `(column, keys to try in order)`. vLLM's end-to-end latency
/// is `*_e2el_ms` (older files `*_latency_ms`), SGLang's `*_e2e_latency_ms`.
const REPORTED: [(&str, &[&str]); 6] = [
    (
        "mean_wall_ms",
        &["mean_e2el_ms", "mean_e2e_latency_ms", "mean_latency_ms"],
    ),
    (
        "p50_wall_ms",
        &[
            "median_e2el_ms",
            "median_e2e_latency_ms",
            "median_latency_ms",
        ],
    ),
    (
        "p95_wall_ms",
        &["p95_e2el_ms", "p95_e2e_latency_ms", "p95_latency_ms"],
    ),
    (
        "p99_wall_ms",
        &["p99_e2el_ms", "p99_e2e_latency_ms", "p99_latency_ms"],
    ),
    ("p50_ttft_ms", &["median_ttft_ms"]),
    ("p95_ttft_ms", &["p95_ttft_ms"]),
];

/// The reported aggregates of a vLLM or SGLang result object, by cells-table column. Means of tokens are the
/// totals over the completed requests; throughput is the tool's `output_throughput` (its output tokens over its
/// duration, the same definition cellscope uses when requests carry no timestamps).
pub fn reported(object: &Json) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for (column, keys) in REPORTED {
        if let Some(value) = keys.iter().find_map(|key| field_number(object, key)) {
            out.insert(column.to_string(), value);
        }
    }
    if let Some(value) = field_number(object, "output_throughput") {
        out.insert("aggregate_tps".to_string(), value);
    }
    if let Some(completed) = field_number(object, "completed").filter(|count| *count > 0.0) {
        for (column, key) in [
            ("mean_prompt_tokens", "total_input_tokens"),
            ("mean_completion_tokens", "total_output_tokens"),
        ] {
            if let Some(total) = field_number(object, key) {
                out.insert(column.to_string(), total / completed);
            }
        }
    }
    out
}

//! Every number a tool reports for a record, under its own key: top-level values, the members of metric objects,
//! and nested objects down to a depth.

use crate::parse::json;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Every number among an object's top-level values, under its key: the tool's figures as it names them (a
/// number written as text, as LLMPerf writes numpy integers, is read too).
pub(crate) fn top_level_figures(object: &Json) -> BTreeMap<String, f64> {
    let Some(object) = object.as_object() else {
        return BTreeMap::new();
    };
    object
        .iter()
        .filter_map(|(key, value)| Some((key.clone(), figure(value)?)))
        .collect()
}

/// Every number among the members of an object's metric objects (those with a `unit`, `avg` or `mean`), as
/// `metric.stat`: the statistics of AIPerf's and GenAI-Perf's metric objects (`{"unit": "ms", "avg": …}`).
pub(crate) fn metric_figures(metrics: &Json) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for (metric, stats) in metrics.as_object().into_iter().flatten() {
        let Some(stats) = stats.as_object() else {
            continue;
        };
        // A metric object says its unit or has a mean; a configuration block is not a metric.
        if !["unit", "avg", "mean"]
            .iter()
            .any(|key| stats.contains_key(*key))
        {
            continue;
        }
        for (stat, value) in stats {
            if let Some(value) = figure(value) {
                out.insert(format!("{metric}.{stat}"), value);
            }
        }
    }
    out
}

/// Every number under `value`, down to `depth` levels of objects, under its dotted path from `prefix`
/// (arrays are per-request data or distributions, not figures).
pub(crate) fn nested_figures(
    value: &Json,
    prefix: &str,
    depth: u32,
    out: &mut BTreeMap<String, f64>,
) {
    match value {
        Json::Object(members) if depth > 0 => {
            for (key, member) in members {
                nested_figures(member, &format!("{prefix}.{key}"), depth - 1, out);
            }
        }
        _ => {
            if let Some(number) = figure(value) {
                out.insert(prefix.to_string(), number);
            }
        }
    }
}

/// A finite number, or text that is one.
fn figure(value: &Json) -> Option<f64> {
    match value {
        Json::Number(_) | Json::String(_) => json::number(value).filter(|value| value.is_finite()),
        _ => None,
    }
}

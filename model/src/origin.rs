//! Where a cell's key and figures came from when another tool wrote the file: which key parts were inferred
//! (and by which rule), which figures are the tool's own *reported* aggregates rather than recomputed from
//! request rows, and which were computed from a reconstructed quantity (*derived*).
//!
//! TR164 cells have an empty [`FigureOrigin`]: every figure is recomputed and every key part is read.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The per-cell marks that travel in the cells table (three text columns, `;`-separated names).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FigureOrigin {
    /// Cells-table columns whose value is the tool's reported figure (no request rows to recompute it from).
    #[serde(default)]
    pub reported: Vec<String>,
    /// Cells-table columns computed from a reconstructed per-request value (e.g. wall latency rebuilt as
    /// TTFT + Σ inter-token latencies when the file has no end-to-end latency).
    #[serde(default)]
    pub derived: Vec<String>,
    /// Key dimensions whose value was inferred (a default rule or `cellscope.toml`) rather than read.
    #[serde(default)]
    pub inferred: Vec<String>,
}

impl FigureOrigin {
    pub fn is_empty(&self) -> bool {
        self.reported.is_empty() && self.derived.is_empty() && self.inferred.is_empty()
    }

    /// Whether the value shown for a cells-table `column` is the tool's figure. Scaling metrics are reported
    /// when the figure they are computed from is.
    pub fn is_reported(&self, column: &str) -> bool {
        let source = scaling_source(column);
        self.reported
            .iter()
            .any(|name| name == column || name == source)
    }

    /// Whether the value shown for `column` rests on a reconstructed per-request value.
    pub fn is_derived(&self, column: &str) -> bool {
        let source = scaling_source(column);
        self.derived
            .iter()
            .any(|name| name == column || name == source)
    }

    /// `a;b;c` for the cells table.
    pub fn join(names: &[String]) -> String {
        names.join(";")
    }

    /// The inverse of [`FigureOrigin::join`].
    pub fn split(text: &str) -> Vec<String> {
        if text.is_empty() {
            Vec::new()
        } else {
            text.split(';').map(str::to_string).collect()
        }
    }
}

/// Efficiency is computed from aggregate throughput and the p95 multiplier from p95 wall latency, so they carry
/// the mark of their source.
fn scaling_source(column: &str) -> &str {
    match column {
        "efficiency" => "aggregate_tps",
        "p95_multiplier" => "p95_wall_ms",
        other => other,
    }
}

/// One inferred key part with the rule that produced it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InferredPart {
    pub dimension: String,
    pub value: String,
    pub rule: String,
}

/// Everything known about where one cell of another tool's file came from (in `/api/provenance` and the
/// inspector).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CellOrigin {
    /// The format name (`vllm-bench`, `sglang-bench`, `aiperf`, …).
    pub format: String,
    /// The file, relative to the data root.
    pub file: String,
    /// Which run record of the file (object, line, benchmark or experiment), from 0.
    pub record: u32,
    /// 1-based line of the record when the file is line-oriented (JSONL, appended objects).
    pub line: Option<u64>,
    pub inferred: Vec<InferredPart>,
    /// The tool's own aggregates, by cells-table column name (times in ms, throughput in tok/s), shown next to
    /// the recomputed values with their difference.
    pub reported: BTreeMap<String, f64>,
    /// How figures were obtained where it is not the plain rule (a derived wall latency, the span used for
    /// throughput, requests dropped as warm-up).
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_metrics_carry_the_mark_of_their_source() {
        let origin = FigureOrigin {
            reported: vec!["aggregate_tps".into()],
            derived: vec!["p95_wall_ms".into()],
            inferred: vec![],
        };
        assert!(origin.is_reported("aggregate_tps"));
        assert!(origin.is_reported("efficiency"));
        assert!(!origin.is_reported("p95_multiplier"));
        assert!(origin.is_derived("p95_multiplier"));
        assert!(!origin.is_derived("p50_ttft_ms"));
        assert_eq!(
            FigureOrigin::split(&FigureOrigin::join(&origin.reported)),
            origin.reported
        );
        assert!(FigureOrigin::split("").is_empty());
    }
}

//! Cell keys and the dimensions a user can slice by.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The identity of one benchmark cell: `(run_id, suite, phase, backend, model, workload, n, rep)`.
///
/// Within one run directory `run_id` is constant; across runs it keeps cells of different sweeps apart.
/// For a cell whose rows were refilled by a targeted re-run, `run_id` is the master run the cell belongs to,
/// not the refill run (the refill run id is kept on the summary as `source_run_id`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CellKey {
    pub run_id: String,
    pub suite: String,
    pub phase: String,
    pub backend: String,
    pub model: String,
    pub workload: String,
    /// Concurrency N (`n_agents` in metrics.csv).
    pub n: u32,
    pub rep: u32,
}

/// A curve: every cell of one `(run, suite, phase, backend, model, workload)` across N and reps.
///
/// Efficiency and p95 multipliers are normalised within a series against its N=1 cells.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SeriesKey {
    pub run_id: String,
    pub suite: String,
    pub phase: String,
    pub backend: String,
    pub model: String,
    pub workload: String,
}

impl CellKey {
    pub fn series(&self) -> SeriesKey {
        SeriesKey {
            run_id: self.run_id.clone(),
            suite: self.suite.clone(),
            phase: self.phase.clone(),
            backend: self.backend.clone(),
            model: self.model.clone(),
            workload: self.workload.clone(),
        }
    }

    /// The value of one dimension, as the text a filter or an exclusion selector compares against.
    pub fn value(&self, dimension: Dimension) -> DimensionValue<'_> {
        match dimension {
            Dimension::Run => DimensionValue::Text(&self.run_id),
            Dimension::Suite => DimensionValue::Text(&self.suite),
            Dimension::Phase => DimensionValue::Text(&self.phase),
            Dimension::Backend => DimensionValue::Text(&self.backend),
            Dimension::Model => DimensionValue::Text(&self.model),
            Dimension::Workload => DimensionValue::Text(&self.workload),
            Dimension::N => DimensionValue::Number(self.n),
            Dimension::Rep => DimensionValue::Number(self.rep),
        }
    }
}

impl fmt::Display for CellKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}/{}/{}/{}/n={}/rep={}",
            self.run_id,
            self.suite,
            self.phase,
            self.backend,
            self.model,
            self.workload,
            self.n,
            self.rep
        )
    }
}

impl fmt::Display for SeriesKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}/{}/{}/{}",
            self.run_id, self.suite, self.phase, self.backend, self.model, self.workload
        )
    }
}

/// The dimensions of the cell key, with the readable names used in URLs, filters and exclusion selectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    Run,
    Suite,
    Phase,
    Backend,
    Model,
    Workload,
    N,
    Rep,
}

impl Dimension {
    pub const ALL: [Dimension; 8] = [
        Dimension::Run,
        Dimension::Suite,
        Dimension::Phase,
        Dimension::Backend,
        Dimension::Model,
        Dimension::Workload,
        Dimension::N,
        Dimension::Rep,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Dimension::Run => "run",
            Dimension::Suite => "suite",
            Dimension::Phase => "phase",
            Dimension::Backend => "backend",
            Dimension::Model => "model",
            Dimension::Workload => "workload",
            Dimension::N => "n",
            Dimension::Rep => "rep",
        }
    }

    /// Parses a dimension name. `run_id` and `n_agents` (the metrics.csv column names) are accepted as aliases.
    pub fn parse(name: &str) -> Option<Dimension> {
        Some(match name {
            "run" | "run_id" => Dimension::Run,
            "suite" => Dimension::Suite,
            "phase" => Dimension::Phase,
            "backend" => Dimension::Backend,
            "model" => Dimension::Model,
            "workload" => Dimension::Workload,
            "n" | "n_agents" => Dimension::N,
            "rep" => Dimension::Rep,
            _ => return None,
        })
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One dimension value of a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimensionValue<'a> {
    Text(&'a str),
    Number(u32),
}

impl DimensionValue<'_> {
    /// Whether this value equals `text` as written in a URL or a ledger (`"16"` matches N=16).
    pub fn matches_text(&self, text: &str) -> bool {
        match self {
            DimensionValue::Text(value) => *value == text,
            DimensionValue::Number(value) => text
                .trim()
                .parse::<u32>()
                .is_ok_and(|parsed| parsed == *value),
        }
    }
}

impl fmt::Display for DimensionValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DimensionValue::Text(value) => f.write_str(value),
            DimensionValue::Number(value) => write!(f, "{value}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CellKey {
        CellKey {
            run_id: "20260531_120428_552237".into(),
            suite: "local_core".into(),
            phase: "ttft".into(),
            backend: "pytorch_direct".into(),
            model: "llama3.2-3b".into(),
            workload: "balanced_2k".into(),
            n: 16,
            rep: 0,
        }
    }

    #[test]
    fn numeric_dimensions_match_their_decimal_text() {
        let key = key();
        assert!(key.value(Dimension::N).matches_text("16"));
        assert!(!key.value(Dimension::N).matches_text("1"));
        assert!(!key.value(Dimension::N).matches_text("sixteen"));
        assert!(key.value(Dimension::Model).matches_text("llama3.2-3b"));
    }

    #[test]
    fn dimension_names_round_trip_and_accept_csv_aliases() {
        for dimension in Dimension::ALL {
            assert_eq!(Dimension::parse(dimension.name()), Some(dimension));
        }
        assert_eq!(Dimension::parse("n_agents"), Some(Dimension::N));
        assert_eq!(Dimension::parse("run_id"), Some(Dimension::Run));
        assert_eq!(Dimension::parse("tier"), None);
    }
}

//! `[[table]]` entries of `cellscope.toml`: which columns of a generic long table (CSV or Parquet) hold the cell
//! key and the figures, in which units, and whether a row is one request or one cell.
//!
//! Every key a `[[table]]` entry does not name falls back to the canonical column name (`model`, `wall_ms`,
//! `p95_wall_ms`, …) when the file has it, so an entry only has to say what differs.

use serde::Deserialize;

/// What one row of the table is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Grain {
    /// One request: every figure is recomputed from the rows.
    #[default]
    Request,
    /// One cell: the figures are the table's own, kept as reported.
    Cell,
}

/// A time unit of a column; figures are converted to ms (latencies) or s (timestamps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Unit {
    Ns,
    Us,
    Ms,
    S,
}

impl Unit {
    /// Milliseconds per unit.
    pub(crate) fn to_ms(self) -> f64 {
        match self {
            Unit::Ns => 1e-6,
            Unit::Us => 1e-3,
            Unit::Ms => 1.0,
            Unit::S => 1e3,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Us => "us",
            Unit::Ms => "ms",
            Unit::S => "s",
        }
    }
}

/// Where a key dimension or a count comes from: a column (`model = "model_name"`) or a constant
/// (`backend = { value = "ollama" }`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum Source {
    Column(String),
    Constant { value: toml::Value },
}

impl Source {
    /// The constant as text (`1`, `ollama`), or `None` for a column.
    pub(crate) fn constant(&self) -> Option<String> {
        match self {
            Source::Column(_) => None,
            Source::Constant { value } => Some(match value {
                toml::Value::String(text) => text.clone(),
                other => other.to_string(),
            }),
        }
    }
}

/// A constant (`run = { value = "tr131" }`): the run id cannot be a column, since a run is a file or a
/// directory of files.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Constant {
    pub value: toml::Value,
}

/// One `[[table]]` entry as written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTable {
    pub glob: String,
    #[serde(default)]
    pub grain: Grain,
    pub run: Option<Constant>,
    pub suite: Option<Source>,
    pub phase: Option<Source>,
    pub backend: Option<Source>,
    pub model: Option<Source>,
    pub workload: Option<Source>,
    pub n: Option<Source>,
    pub rep: Option<Source>,
    // Request grain.
    pub wall: Option<String>,
    pub wall_unit: Option<Unit>,
    pub ttft: Option<String>,
    pub ttft_unit: Option<Unit>,
    pub prompt_tokens: Option<String>,
    pub completion_tokens: Option<String>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub time_unit: Option<Unit>,
    pub status: Option<String>,
    /// Status values that count as a successful request (default `ok`, `success`, `200`).
    pub ok: Option<Vec<String>>,
    pub error: Option<String>,
    // Cell grain (times in `wall_unit` / `ttft_unit`).
    pub mean_wall: Option<String>,
    pub p50_wall: Option<String>,
    pub p95_wall: Option<String>,
    pub p99_wall: Option<String>,
    pub mean_ttft: Option<String>,
    pub p50_ttft: Option<String>,
    pub p95_ttft: Option<String>,
    pub p99_ttft: Option<String>,
    pub tps: Option<String>,
    pub efficiency: Option<String>,
    pub mean_prompt_tokens: Option<String>,
    pub mean_completion_tokens: Option<String>,
    pub requests: Option<Source>,
    pub ok_requests: Option<Source>,
    pub failed_requests: Option<Source>,
    /// Other columns kept beside each cell as the table's own figures, under their column names.
    #[serde(default)]
    pub keep: Vec<String>,
}

/// A `[[table]]` entry with its place in the file and compiled glob.
#[derive(Clone, Debug)]
pub(crate) struct TableEntry {
    /// 1-based among the `[[table]]` entries, for the rule text.
    pub number: usize,
    pub glob_text: String,
    pub glob: globset::GlobMatcher,
    pub spec: RawTable,
}

impl TableEntry {
    /// `cellscope.toml [[table]] #2 (glob `tr131/*.csv`)`, the start of every rule text this entry gives.
    pub(crate) fn rule(&self) -> String {
        format!(
            "cellscope.toml [[table]] #{} (glob `{}`)",
            self.number, self.glob_text
        )
    }
}

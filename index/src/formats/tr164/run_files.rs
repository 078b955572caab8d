//! The JSON side files of a run directory: `manifest.json` and `execution_plan.json` (formats in
//! docs/run-format.md). Both are optional; an invalid one is reported with its line and column and ignored.

use crate::run::expected::{Manifest, ManifestCell, Plan};
use cellscope_model::api::HistoryEvent;
use cellscope_model::key::CellCoordinates;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One cell object of a manifest or an execution plan: its coordinates field by field, and what either file
/// says of it. (With `#[serde(flatten)]` of `CellCoordinates` it would read the same, but serde buffers every
/// field of an object holding a flattened struct, history included, and reads it again: a third of the time of a
/// 540 KB manifest.)
#[derive(Clone, Debug, Deserialize)]
struct RawCell {
    suite: String,
    phase: String,
    backend: String,
    model: String,
    workload: String,
    /// `n_agents` in metrics.csv, manifests and plans.
    #[serde(alias = "n_agents")]
    n: u32,
    rep: u32,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    expected_rows: Option<u32>,
    #[serde(default)]
    rows_written: Option<u32>,
    #[serde(default)]
    fallback: Option<bool>,
    #[serde(default)]
    history: Vec<HistoryEvent>,
    /// Plans only: whether this run runs the cell.
    #[serde(default)]
    selected: Option<bool>,
}

impl RawCell {
    fn coordinates(&mut self) -> CellCoordinates {
        CellCoordinates {
            suite: std::mem::take(&mut self.suite),
            phase: std::mem::take(&mut self.phase),
            backend: std::mem::take(&mut self.backend),
            model: std::mem::take(&mut self.model),
            workload: std::mem::take(&mut self.workload),
            config: cellscope_model::config::Config::new(),
            load: cellscope_model::Load::Concurrency(self.n),
            rep: self.rep,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
struct RawManifest {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    requests_per_agent: Option<u32>,
    #[serde(default)]
    cells: Vec<RawCell>,
    #[serde(default)]
    environment: Option<serde_json::Value>,
    /// The context ceiling, under either name; any shape (read leniently by `environment`).
    #[serde(default)]
    default_max_model_len: Option<serde_json::Value>,
    #[serde(default)]
    max_model_len: Option<serde_json::Value>,
    #[serde(default)]
    started_at: Option<serde_json::Value>,
}

/// A JSON file that could not be read, with the position serde_json reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JsonProblem {
    pub line: u64,
    pub column: u64,
    pub message: String,
}

fn json_problem(error: &serde_json::Error) -> JsonProblem {
    JsonProblem {
        line: error.line() as u64,
        column: error.column() as u64,
        message: error.to_string(),
    }
}

/// Run statuses a TR164 dispatcher writes (`complete`, and the states before it).
pub(crate) const RUN_STATUSES: [&str; 6] = [
    "complete",
    "completed",
    "running",
    "in_progress",
    "failed",
    "aborted",
];

/// Cell statuses a TR164 manifest holds (planned, in_progress, completed, skip-marked; run.py's `group_failed` when
/// the server never came up).
pub(crate) const CELL_STATUSES: [&str; 5] = [
    "planned",
    "in_progress",
    "completed",
    "skip-marked",
    "group_failed",
];

/// Statuses outside the vocabulary: `(where, status, how many)`, `where` being `run` or `cells`. They are kept
/// and shown as written; the caller warns, so a typo or a new dispatcher state is never taken in silence.
pub(crate) fn unknown_statuses(manifest: &Manifest) -> Vec<(&'static str, String, usize)> {
    let mut unknown = Vec::new();
    if let Some(status) = &manifest.status
        && !RUN_STATUSES.contains(&status.as_str())
    {
        unknown.push(("run", status.clone(), 1));
    }
    let mut cells: BTreeMap<&str, usize> = BTreeMap::new();
    for cell in manifest.cells.values() {
        if let Some(status) = &cell.status
            && !CELL_STATUSES.contains(&status.as_str())
        {
            *cells.entry(status).or_default() += 1;
        }
    }
    unknown.extend(
        cells
            .into_iter()
            .map(|(status, count)| ("cells", status.to_string(), count)),
    );
    unknown
}

pub(crate) fn parse_manifest(bytes: &[u8]) -> Result<Manifest, JsonProblem> {
    let raw: RawManifest = serde_json::from_slice(bytes).map_err(|error| json_problem(&error))?;
    let cells = raw
        .cells
        .into_iter()
        .map(|mut cell| {
            let key = cell.coordinates();
            let fallback = cell.fallback.unwrap_or(false)
                || cell
                    .history
                    .iter()
                    .any(|event| event.event == "fallback_completed");
            let expected_rows = cell.expected_rows.or_else(|| {
                raw.requests_per_agent
                    .map(|per_agent| per_agent * key.load.concurrency().unwrap_or(0))
            });
            (
                key,
                ManifestCell {
                    status: cell.status,
                    expected_rows,
                    rows_written: cell.rows_written,
                    fallback,
                    history: cell.history,
                },
            )
        })
        .collect();
    Ok(Manifest {
        status: raw.status,
        environment: raw.environment,
        max_model_len: raw.default_max_model_len.or(raw.max_model_len),
        started_at: raw.started_at,
        cells,
    })
}

#[derive(Clone, Debug, Deserialize)]
struct RawPlan {
    #[serde(default)]
    requests_per_agent: Option<u32>,
    #[serde(default)]
    cells: Vec<RawCell>,
}

pub(crate) fn parse_plan(bytes: &[u8]) -> Result<Plan, JsonProblem> {
    let raw: RawPlan = serde_json::from_slice(bytes).map_err(|error| json_problem(&error))?;
    let mut plan = Plan::default();
    for mut cell in raw.cells {
        if cell.selected == Some(false) {
            plan.unselected += 1;
            continue;
        }
        let expected = cell
            .expected_rows
            .or_else(|| raw.requests_per_agent.map(|per_agent| per_agent * cell.n));
        plan.cells.insert(cell.coordinates(), expected);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_cells_carry_expectations_fallback_and_history() {
        let text = br#"{"status":"complete","requests_per_agent":12,"cells":[
            {"suite":"local_core","phase":"ttft","backend":"pytorch_direct","model":"llama3.2-3b",
             "workload":"repeated_prefix","n_agents":8,"rep":0,"status":"completed",
             "history":[{"event":"subprocess_timeout"},{"event":"fallback_completed","generation":"V7"}]},
            {"suite":"local_core","phase":"ttft","backend":"pytorch_direct","model":"llama3.2-3b",
             "workload":"balanced_2k","n_agents":16,"rep":1,"status":"skip-marked","expected_rows":192}]}"#;
        let manifest = parse_manifest(text).unwrap();
        let cells: Vec<&ManifestCell> = manifest.cells.values().collect();
        assert_eq!(cells.len(), 2);
        let fallback = manifest.cells.values().find(|cell| cell.fallback).unwrap();
        assert_eq!(fallback.expected_rows, Some(96));
        assert_eq!(fallback.history.len(), 2);
        assert!(
            manifest
                .cells
                .values()
                .any(|cell| cell.status.as_deref() == Some("skip-marked"))
        );
    }

    #[test]
    fn invalid_json_reports_line_and_column() {
        let problem = parse_manifest(b"{\n  \"cells\": [\n    {,\n  ]\n}").unwrap_err();
        assert_eq!((problem.line, problem.column), (3, 6));
    }

    #[test]
    fn unselected_plan_entries_are_not_planned() {
        let text = br#"{"requests_per_agent":12,"cells":[
            {"suite":"local_core","phase":"scaling","backend":"pytorch_direct","model":"m","workload":"w","n_agents":2,"rep":0,"selected":true},
            {"suite":"local_core","phase":"scaling","backend":"vllm","model":"m","workload":"w","n_agents":2,"rep":0,"selected":false}]}"#;
        let plan = parse_plan(text).unwrap();
        assert_eq!(plan.cells.len(), 1);
        assert_eq!(plan.unselected, 1);
        assert_eq!(plan.cells.values().next(), Some(&Some(24)));
    }
}

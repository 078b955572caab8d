//! One configuration × workload × load across runs: its points in run-time order (reps as a band), the change
//! points of the per-run means, what else changed between consecutive runs, and whether it regressed.

use super::changepoint::{ChangePoint, Shift};
use super::choice::HistoryChoice;
use super::regression::{Regression, regression};
use crate::config::Config;
use crate::facts::{EnvironmentField, RunFacts, RunStartSource};
use crate::key::CellKey;
use crate::load::Load;
use crate::metric::Metric;
use crate::summary::CellSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one History follows: a cell key without its run and rep.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(
    into = "BTreeMap<String, String>",
    try_from = "BTreeMap<String, String>"
)]
pub struct HistoryKey {
    /// The suite.
    pub suite: String,
    /// The phase.
    pub phase: String,
    /// The serving backend.
    pub backend: String,
    /// The model served.
    pub model: String,
    /// The workload sent.
    pub workload: String,
    /// The deployment's configuration.
    pub config: Config,
    /// The load.
    pub load: Load,
}

impl HistoryKey {
    /// The History a cell belongs to.
    pub fn of(key: &CellKey) -> HistoryKey {
        HistoryKey {
            suite: key.suite.clone(),
            phase: key.phase.clone(),
            backend: key.backend.clone(),
            model: key.model.clone(),
            workload: key.workload.clone(),
            config: key.config.clone(),
            load: key.load,
        }
    }

    /// Whether `key` is a cell of this History (any run, any rep).
    pub fn holds(&self, key: &CellKey) -> bool {
        self.suite == key.suite
            && self.phase == key.phase
            && self.backend == key.backend
            && self.model == key.model
            && self.workload == key.workload
            && self.config == key.config
            && self.load == key.load
    }

    /// `vllm · llama3.1-8b · tp=4 · chat · N=16`: what varies least first, the suite and phase left out.
    pub fn label(&self) -> String {
        let mut parts = vec![self.backend.clone(), self.model.clone()];
        if !self.config.is_empty() {
            parts.push(self.config.to_string());
        }
        parts.push(self.workload.clone());
        parts.push(self.load.label());
        parts.join(" · ")
    }

    /// The dimension filters that select exactly this History's cells, as a link or the CLI writes them.
    pub fn filter_pairs(&self) -> Vec<(String, String)> {
        BTreeMap::<String, String>::from(self.clone())
            .into_iter()
            .map(|(name, value)| (name, crate::query::encode(&value, false)))
            .collect()
    }
}

impl From<HistoryKey> for BTreeMap<String, String> {
    /// `{suite, phase, backend, model, workload, load, and each deployment parameter}`, the load in its text form
    /// (`n=16`, `rate=2.5`).
    fn from(key: HistoryKey) -> BTreeMap<String, String> {
        let mut map = BTreeMap::from([
            ("suite".to_string(), key.suite),
            ("phase".to_string(), key.phase),
            ("backend".to_string(), key.backend),
            ("model".to_string(), key.model),
            ("workload".to_string(), key.workload),
            ("load".to_string(), key.load.to_string()),
        ]);
        for (name, value) in key.config.iter() {
            map.insert(name.to_string(), value.to_string());
        }
        map
    }
}

impl TryFrom<BTreeMap<String, String>> for HistoryKey {
    type Error = String;

    fn try_from(mut map: BTreeMap<String, String>) -> Result<HistoryKey, String> {
        let mut take = |name: &str| {
            map.remove(name)
                .ok_or_else(|| format!("the key has no `{name}`"))
        };
        let (suite, phase, backend, model, workload) = (
            take("suite")?,
            take("phase")?,
            take("backend")?,
            take("model")?,
            take("workload")?,
        );
        let load = take("load")?
            .parse::<Load>()
            .map_err(|error| error.to_string())?;
        let mut config = Config::new();
        for (name, value) in &map {
            config
                .insert(name, value)
                .map_err(|error| error.to_string())?;
        }
        Ok(HistoryKey {
            suite,
            phase,
            backend,
            model,
            workload,
            config,
            load,
        })
    }
}

/// How a run's time is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeSource {
    /// A time the run's files record.
    Recorded,
    /// The `YYYYMMDD_HHMMSS` its id starts with.
    RunId,
    /// A file's modification time: the run ended no later than that.
    FileModified,
}

impl TimeSource {
    /// `recorded`, `run_id` or `file_modified`, as the API writes it.
    pub fn name(self) -> &'static str {
        match self {
            TimeSource::Recorded => "recorded",
            TimeSource::RunId => "run_id",
            TimeSource::FileModified => "file_modified",
        }
    }

    /// What the table says beside a start time not recorded by the run's files.
    pub fn note(self) -> Option<&'static str> {
        match self {
            TimeSource::Recorded => None,
            TimeSource::RunId => Some("from the run's id"),
            TimeSource::FileModified => {
                Some("from a file's modification time (the run ended by then)")
            }
        }
    }
}

/// When a run started, RFC 3339 in UTC, and how that is known, as the index read it (the time its files record,
/// else its id's, else a file's modification time); for a run the index does not list, its id's; `None` when
/// nothing says.
pub fn run_time(run_id: &str, runs: &[RunFacts]) -> Option<(String, TimeSource)> {
    let Some(facts) = runs.iter().find(|run| run.run_id == run_id) else {
        return crate::runs::id_time(run_id).map(|at| (at, TimeSource::RunId));
    };
    let started = facts.started.as_ref()?;
    let source = match started.source {
        RunStartSource::Recorded { .. } => TimeSource::Recorded,
        RunStartSource::RunId { .. } => TimeSource::RunId,
        RunStartSource::FileModified { .. } => TimeSource::FileModified,
    };
    Some((started.at.clone(), source))
}

/// One environment field that differs from the run before in the History.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvironmentChange {
    /// The field.
    pub field: EnvironmentField,
    /// Its value in the run before (`None`: not stated).
    pub before: Option<String>,
    /// Its value in this run.
    pub after: Option<String>,
}

impl EnvironmentChange {
    /// `driver 575.57 → 580.65`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} → {}",
            self.field.label(),
            self.before.as_deref().unwrap_or("—"),
            self.after.as_deref().unwrap_or("—")
        )
    }
}

/// One run of a History.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryPoint {
    /// The run.
    pub run: String,
    /// When it started (RFC 3339, UTC).
    pub time: Option<String>,
    /// How that is known.
    pub time_source: Option<TimeSource>,
    /// The mean over the run's reps that have a value and are not excluded from every aggregate; `None` when none
    /// has.
    pub value: Option<f64>,
    /// The lowest rep's value (the band's lower edge).
    pub low: Option<f64>,
    /// The highest rep's value.
    pub high: Option<f64>,
    /// How many reps the value is the mean of.
    pub reps: usize,
    /// The run's first cell of this History, to link to.
    pub cell: CellKey,
    /// Every rep of this run is excluded by the ledger, so the run counts as missing.
    pub excluded: bool,
    /// What differs from the run before in the History: the confounders of this step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<EnvironmentChange>,
}

/// A change point of a History, named by its run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryChangePoint {
    /// The first run after the change.
    pub run: String,
    /// That run's time.
    pub time: Option<String>,
    /// Its position among the History's points.
    pub index: usize,
    /// The two-sided p-value of the t-test of the two pieces.
    pub p_value: f64,
    /// The mean of the piece before.
    pub mean_before: f64,
    /// The mean of the piece from the change on.
    pub mean_after: f64,
    /// mean after / mean before − 1.
    pub relative_change: Option<f64>,
    /// Worse or better by the metric's sense; `None` when the means are equal.
    pub direction: Option<Shift>,
    /// "worse by 25.0% since run r21 (p = 3.2e-7; mean 812 ms → 1,015 ms)".
    pub sentence: String,
}

/// One configuration × workload × load across runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistorySeries {
    /// What it follows.
    pub key: HistoryKey,
    /// `vllm · llama3.1-8b · chat · N=16`.
    pub label: String,
    /// The metric.
    pub metric: Metric,
    /// Its runs in time order.
    pub points: Vec<HistoryPoint>,
    /// Its change points, in run order.
    pub change_points: Vec<HistoryChangePoint>,
    /// Whether it regressed by the rule of [`super::regression`].
    pub regressed: bool,
    /// Why, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regression: Option<Regression>,
}

/// Every History of `cells` for `metric` (a per-cell metric), in key order.
pub fn histories(
    cells: &[CellSummary],
    runs: &[RunFacts],
    metric: Metric,
    choice: &HistoryChoice,
) -> Vec<HistorySeries> {
    let mut groups: BTreeMap<HistoryKey, BTreeMap<&str, Vec<&CellSummary>>> = BTreeMap::new();
    for cell in cells {
        groups
            .entry(HistoryKey::of(&cell.key))
            .or_default()
            .entry(cell.key.run_id.as_str())
            .or_default()
            .push(cell);
    }
    groups
        .into_iter()
        .map(|(key, by_run)| series(key, &by_run, runs, metric, choice))
        .collect()
}

/// The History of `key` from its cells grouped by run.
fn series(
    key: HistoryKey,
    by_run: &BTreeMap<&str, Vec<&CellSummary>>,
    runs: &[RunFacts],
    metric: Metric,
    choice: &HistoryChoice,
) -> HistorySeries {
    let mut points: Vec<HistoryPoint> = by_run
        .iter()
        .map(|(run, reps)| point(run, reps, runs, metric))
        .filter(|point| kept_since(point, choice.since.as_deref()))
        .collect();
    crate::order::sort_stable_by(&mut points, |a, b| {
        (&a.time, &a.run).cmp(&(&b.time, &b.run))
    });
    mark_changes(&mut points, runs);
    let values: Vec<Option<f64>> = points.iter().map(|point| point.value).collect();
    let change_points: Vec<HistoryChangePoint> = choice
        .hunter()
        .change_points(&values)
        .iter()
        .map(|change| named(change, &points, metric))
        .collect();
    let regression = regression(&points, &change_points, metric.better(), choice);
    HistorySeries {
        label: key.label(),
        key,
        metric,
        points,
        change_points,
        regressed: regression.is_some(),
        regression,
    }
}

/// A run's point: the mean and range of its reps' values, excluded reps left out.
fn point(run: &str, reps: &[&CellSummary], runs: &[RunFacts], metric: Metric) -> HistoryPoint {
    let counted: Vec<f64> = reps
        .iter()
        .filter(|cell| !excluded(cell))
        .filter_map(|cell| metric.of_cell(cell))
        .filter(|value| value.is_finite())
        .collect();
    let time = run_time(run, runs);
    let first = reps
        .iter()
        .min_by_key(|cell| cell.key.rep)
        .map(|cell| cell.key.clone());
    HistoryPoint {
        run: run.to_string(),
        time: time.as_ref().map(|(at, _)| at.clone()),
        time_source: time.map(|(_, source)| source),
        value: (!counted.is_empty()).then(|| counted.iter().sum::<f64>() / counted.len() as f64),
        low: counted.iter().copied().reduce(f64::min),
        high: counted.iter().copied().reduce(f64::max),
        reps: counted.len(),
        cell: first.unwrap_or_else(|| reps[0].key.clone()),
        excluded: reps.iter().all(|cell| excluded(cell)),
        changed: Vec::new(),
    }
}

/// Whether the ledger leaves a cell out of every aggregate (an exclusion from comparisons alone does not reach a
/// History, which compares a configuration with itself).
fn excluded(cell: &CellSummary) -> bool {
    cell.exclusion_scope == Some(crate::exclusions::ExclusionScope::All)
}

/// Whether a point is kept by `since`: runs at or after it; with `since` set, runs without a time are not.
fn kept_since(point: &HistoryPoint, since: Option<&str>) -> bool {
    match (since, &point.time) {
        (None, _) => true,
        (Some(since), Some(time)) => time.as_str() >= since,
        (Some(_), None) => false,
    }
}

/// Fills each point's `changed`: the environment fields whose values differ from the previous point's run.
fn mark_changes(points: &mut [HistoryPoint], runs: &[RunFacts]) {
    let environment = |run: &str| {
        runs.iter()
            .find(|facts| facts.run_id == run)
            .map(|facts| &facts.environment)
    };
    for position in 1..points.len() {
        let (before, after) = (
            environment(&points[position - 1].run),
            environment(&points[position].run),
        );
        let (Some(before), Some(after)) = (before, after) else {
            continue;
        };
        points[position].changed = EnvironmentField::ALL
            .into_iter()
            .filter(|field| before.get(field) != after.get(field))
            .map(|field| EnvironmentChange {
                field,
                before: before.get(&field).cloned(),
                after: after.get(&field).cloned(),
            })
            .collect();
    }
}

/// A change point named by the run it starts at.
fn named(change: &ChangePoint, points: &[HistoryPoint], metric: Metric) -> HistoryChangePoint {
    let point = &points[change.index];
    HistoryChangePoint {
        run: point.run.clone(),
        time: point.time.clone(),
        index: change.index,
        p_value: change.p_value,
        mean_before: change.mean_before,
        mean_after: change.mean_after,
        relative_change: change.relative_change,
        direction: change.shift(metric.better()),
        sentence: change.since(&point.run, metric),
    }
}

#[cfg(test)]
mod tests;

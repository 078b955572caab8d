//! The derived artifacts of a run (analysis.json, cell_summary.csv), computed from its rows with the shared
//! metric math of `cellscope-model`, the way `research.tr164.analyze` derived them from metrics.csv.

use crate::pyrepr::{csv_record, py_float};
use crate::rows::MetricsRow;
use cellscope_model::SeriesKey;
use cellscope_model::curve::{Curve, CurveOptions, CurvePoint, series_curves};
use cellscope_model::status::RowCensus;
use cellscope_model::summary::{self, CellSummary, ExpectedSource};
use cellscope_model::{CellAccumulator, CellKey, CellStatus, Criterion};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};

/// A planned cell of a run: its key, how many rows it should have, and whether the manifest calls it a fallback.
#[derive(Clone, Debug)]
pub(crate) struct PlannedCell {
    pub key: CellKey,
    pub expected_rows: u32,
    pub fallback: bool,
}

fn key_of(run_id: &str, row: &MetricsRow) -> CellKey {
    let cell = &row.cell;
    CellKey {
        run_id: run_id.to_string(),
        suite: cell.suite.to_string(),
        phase: cell.phase.to_string(),
        backend: cell.backend.to_string(),
        model: cell.model.name.to_string(),
        workload: cell.workload.name.to_string(),
        config: Default::default(),
        load: cellscope_model::Load::Concurrency(cell.n_agents),
        rep: cell.rep,
    }
}

/// One summary per planned cell, in plan order, with efficiency and p95 multipliers filled in.
pub(crate) fn summarize(
    run_id: &str,
    planned: &[PlannedCell],
    rows: &[MetricsRow],
) -> Vec<CellSummary> {
    struct Collected {
        accumulator: CellAccumulator,
        census: RowCensus,
        source_run: Option<String>,
    }
    let mut by_key: HashMap<CellKey, Collected> = HashMap::new();
    for row in rows {
        let entry = by_key
            .entry(key_of(run_id, row))
            .or_insert_with(|| Collected {
                accumulator: CellAccumulator::new(),
                census: RowCensus::default(),
                source_run: None,
            });
        match row.measurement() {
            None => entry.census.skip_rows += 1,
            Some(measurement) => {
                entry.census.rows += 1;
                if measurement.status == "ok" {
                    entry.census.ok_rows += 1;
                } else {
                    entry.census.failed_rows += 1;
                }
                if *row.cell.run_id != *run_id {
                    entry.source_run = Some(row.cell.run_id.to_string());
                }
            }
        }
        if let Some(sample) = row.sample() {
            entry.accumulator.push(&sample);
        }
    }
    let mut cells: Vec<CellSummary> = planned
        .iter()
        .map(|plan| {
            let collected = by_key.remove(&plan.key);
            let mut census = collected.as_ref().map(|c| c.census).unwrap_or_default();
            census.expected_rows = Some(plan.expected_rows);
            let mut cell = CellSummary::empty(plan.key.clone(), CellStatus::classify(census));
            cell.expected_rows = Some(plan.expected_rows);
            cell.expected_source = ExpectedSource::Plan;
            cell.fallback = plan.fallback;
            cell.rows = census.rows;
            cell.ok_rows = census.ok_rows;
            cell.failed_rows = census.failed_rows;
            cell.skip_rows = census.skip_rows;
            if let Some(collected) = collected {
                cell.refilled = collected.source_run.is_some();
                cell.source_run_id = collected.source_run;
                cell.stats = collected.accumulator.finish();
            }
            cell
        })
        .collect();
    summary::fill_scaling(&mut cells);
    cells
}

fn number(value: Option<f64>) -> Value {
    value.map_or(Value::Null, Value::from)
}

fn key_json(key: &CellKey) -> serde_json::Map<String, Value> {
    let mut object = serde_json::Map::new();
    object.insert("suite".into(), key.suite.clone().into());
    object.insert("phase".into(), key.phase.clone().into());
    object.insert("backend".into(), key.backend.clone().into());
    object.insert("model".into(), key.model.clone().into());
    object.insert("workload".into(), key.workload.clone().into());
    object
}

/// ok_rate against the expected request count, not against row statuses: every row of the report is `ok`, yet its
/// min_ok_rate is 0.95.
fn ok_rate(cell: &CellSummary) -> f64 {
    cell.expected_rows
        .filter(|expected| *expected > 0)
        .map_or(0.0, |expected| {
            f64::from(cell.ok_rows) / f64::from(expected)
        })
}

/// analysis.json: the sections the report names (cell_summary, aggregate_summary, breakdown_boundaries,
/// backend_rankings, nsys_traces, coverage accounting).
pub(crate) fn analysis_json(
    run_id: &str,
    cells: &[CellSummary],
    criterion_name: &str,
    nsys_traces: Option<Value>,
    coverage: Value,
) -> Value {
    let criterion = Criterion::named(criterion_name).unwrap_or(Criterion::V1);
    let cell_summary: Vec<Value> = cells.iter().map(cell_summary_json).collect();

    let curves = series_curves(cells, &CurveOptions::default());
    let mut aggregate_summary = Vec::new();
    let mut breakdown_boundaries = Vec::new();
    for curve in &curves {
        let series_key = CellKey {
            run_id: curve.group.run_id.clone(),
            suite: curve.group.suite.clone(),
            phase: curve.group.phase.clone(),
            backend: curve.group.backend.clone(),
            model: curve.group.model.clone(),
            workload: curve.group.workload.clone(),
            config: curve.group.config.clone(),
            load: cellscope_model::Load::Concurrency(0),
            rep: 0,
        };
        for point in &curve.points {
            aggregate_summary.push(aggregate_json(cells, curve, point, &series_key));
        }
        breakdown_boundaries.push(breakdown_json(
            curve,
            &series_key,
            &criterion,
            criterion_name,
        ));
    }
    let backend_rankings = backend_rankings(cells);

    let real: Vec<&CellSummary> = cells.iter().filter(|cell| cell.has_data()).collect();
    let min_ok_rate = real
        .iter()
        .map(|cell| ok_rate(cell))
        .fold(f64::INFINITY, f64::min);
    let mut document = json!({
        "run_id": run_id,
        "generated_by": "python -m research.tr164.analyze --run-dir <run_dir> (cellscope demo reconstruction)",
        "cell_summary": cell_summary,
        "aggregate_summary": aggregate_summary,
        "breakdown_boundaries": breakdown_boundaries,
        "backend_rankings": backend_rankings,
        "coverage": coverage,
        "min_ok_rate": if real.is_empty() { Value::Null } else { json!(min_ok_rate) },
    });
    if let (Some(traces), Some(object)) = (nsys_traces, document.as_object_mut()) {
        object.insert("nsys_traces".into(), traces);
    }
    document
}

/// One cell of `cell_summary`: its key, counts and statistics.
fn cell_summary_json(cell: &CellSummary) -> Value {
    let mut object = key_json(&cell.key);
    let stats = &cell.stats;
    for (name, value) in [
        ("n_agents", json!(cell.key.n())),
        ("rep", json!(cell.key.rep)),
        ("status", json!(cell.status.as_str())),
        ("expected_rows", json!(cell.expected_rows)),
        ("n_requests", json!(cell.rows)),
        ("n_ok", json!(cell.ok_rows)),
        ("n_skip_rows", json!(cell.skip_rows)),
        ("ok_rate", json!(ok_rate(cell))),
        ("mean_wall_ms", number(stats.mean_wall_ms)),
        ("p50_wall_ms", number(stats.p50_wall_ms)),
        ("p95_wall_ms", number(stats.p95_wall_ms)),
        ("p99_wall_ms", number(stats.p99_wall_ms)),
        ("p50_ttft_ms", number(stats.p50_ttft_ms)),
        ("p95_ttft_ms", number(stats.p95_ttft_ms)),
        ("mean_prompt_tokens", number(stats.mean_prompt_tokens)),
        (
            "mean_completion_tokens",
            number(stats.mean_completion_tokens),
        ),
        ("aggregate_decode_tps", number(stats.aggregate_tps)),
        ("parallel_efficiency", number(cell.efficiency)),
        ("p95_latency_multiplier", number(cell.p95_multiplier)),
        ("fallback", json!(cell.fallback)),
        ("refilled_from", json!(cell.source_run_id)),
    ] {
        object.insert(name.into(), value);
    }
    Value::Object(object)
}

/// One point of a series' curve in `aggregate_summary`: its reps and the mean, minimum and maximum over them.
fn aggregate_json(
    cells: &[CellSummary],
    curve: &Curve<SeriesKey>,
    point: &CurvePoint,
    series_key: &CellKey,
) -> Value {
    let tps: Vec<f64> = cells
        .iter()
        .filter(|cell| cell.key.series() == curve.group && cell.key.load == point.load)
        .filter_map(|cell| cell.stats.aggregate_tps)
        .collect();
    let mut object = key_json(series_key);
    object.insert("n_agents".into(), json!(point.load.concurrency()));
    object.insert("reps_with_data".into(), json!(point.cells));
    object.insert("reps_skipped".into(), json!(point.skipped));
    object.insert(
        "mean_parallel_efficiency".into(),
        number(point.efficiency().map(|a| a.value)),
    );
    object.insert(
        "min_parallel_efficiency".into(),
        number(point.efficiency().map(|a| a.min)),
    );
    object.insert(
        "max_parallel_efficiency".into(),
        number(point.efficiency().map(|a| a.max)),
    );
    object.insert(
        "mean_p95_latency_multiplier".into(),
        number(point.p95_multiplier().map(|a| a.value)),
    );
    object.insert(
        "mean_aggregate_decode_tps".into(),
        number((!tps.is_empty()).then(|| tps.iter().sum::<f64>() / tps.len() as f64)),
    );
    Value::Object(object)
}

/// A series' entry of `breakdown_boundaries`: the breakdown N under `criterion` and the N without data.
fn breakdown_json(
    curve: &Curve<SeriesKey>,
    series_key: &CellKey,
    criterion: &Criterion,
    criterion_name: &str,
) -> Value {
    let breakdown = curve.breakdown(criterion).n();
    let at = breakdown.and_then(|n| curve.point(cellscope_model::Load::Concurrency(n)));
    let mut object = key_json(series_key);
    object.insert("criterion".into(), json!(criterion_name));
    object.insert("n_agents".into(), json!(breakdown));
    object.insert(
        "parallel_efficiency".into(),
        number(at.and_then(|p| p.efficiency().map(|a| a.value))),
    );
    object.insert(
        "p95_latency_multiplier".into(),
        number(at.and_then(|p| p.p95_multiplier().map(|a| a.value))),
    );
    object.insert(
        "missing_n".into(),
        json!(
            curve
                .points
                .iter()
                .filter(|p| p.cells == 0)
                .filter_map(|p| p.load.concurrency())
                .collect::<Vec<_>>()
        ),
    );
    Value::Object(object)
}

/// Rankings by mean aggregate throughput per (suite, phase, model, workload, N), across the run's backends.
fn backend_rankings(cells: &[CellSummary]) -> Vec<Value> {
    let mut ranking_groups: BTreeMap<RankingKey, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    for cell in cells {
        if let Some(tps) = cell.stats.aggregate_tps {
            let key = &cell.key;
            ranking_groups
                .entry((
                    key.suite.clone(),
                    key.phase.clone(),
                    key.model.clone(),
                    key.workload.clone(),
                    key.n().unwrap_or(0),
                ))
                .or_default()
                .entry(key.backend.clone())
                .or_default()
                .push(tps);
        }
    }
    ranking_groups
        .into_iter()
        .map(|((suite, phase, model, workload, n), backends)| {
            let mut ranked: Vec<(String, f64)> =
                backends.into_iter().map(|(backend, tps)| (backend, tps.iter().sum::<f64>() / tps.len() as f64)).collect();
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
            json!({
                "suite": suite, "phase": phase, "model": model, "workload": workload, "n_agents": n,
                "best_backend": ranked.first().map(|(backend, _)| backend.clone()),
                "ranking": ranked.iter().map(|(backend, tps)| json!({"backend": backend, "aggregate_decode_tps": tps})).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// (suite, phase, model, workload, N): the unit backends are ranked within.
type RankingKey = (String, String, String, String, u32);

const SUMMARY_COLUMNS: [&str; 25] = [
    "suite",
    "phase",
    "backend",
    "model",
    "workload",
    "n_agents",
    "rep",
    "status",
    "expected_rows",
    "n_requests",
    "n_ok",
    "ok_rate",
    "mean_wall_ms",
    "p50_wall_ms",
    "p95_wall_ms",
    "p99_wall_ms",
    "p50_ttft_ms",
    "p95_ttft_ms",
    "mean_prompt_tokens",
    "mean_completion_tokens",
    "aggregate_decode_tps",
    "parallel_efficiency",
    "p95_latency_multiplier",
    "fallback",
    "refilled_from",
];

/// cell_summary.csv: one row per planned cell; cells without data are zero-valued, as analyze.py left the
/// skip-marked ones, so consumers filter on `mean_wall_ms > 0`.
pub(crate) fn cell_summary_csv(cells: &[CellSummary]) -> String {
    let mut text = csv_record(SUMMARY_COLUMNS);
    for cell in cells {
        let stats = &cell.stats;
        let zero = |value: Option<f64>| py_float(value.unwrap_or(0.0));
        let fields = [
            cell.key.suite.clone(),
            cell.key.phase.clone(),
            cell.key.backend.clone(),
            cell.key.model.clone(),
            cell.key.workload.clone(),
            cell.key.n().unwrap_or(0).to_string(),
            cell.key.rep.to_string(),
            cell.status.as_str().to_string(),
            cell.expected_rows
                .map(|n| n.to_string())
                .unwrap_or_default(),
            cell.rows.to_string(),
            cell.ok_rows.to_string(),
            py_float(ok_rate(cell)),
            zero(stats.mean_wall_ms),
            zero(stats.p50_wall_ms),
            zero(stats.p95_wall_ms),
            zero(stats.p99_wall_ms),
            zero(stats.p50_ttft_ms),
            zero(stats.p95_ttft_ms),
            zero(stats.mean_prompt_tokens),
            zero(stats.mean_completion_tokens),
            zero(stats.aggregate_tps),
            zero(cell.efficiency),
            zero(cell.p95_multiplier),
            if cell.fallback {
                "True".into()
            } else {
                "False".into()
            },
            cell.source_run_id.clone().unwrap_or_default(),
        ];
        text.push_str(&csv_record(fields.iter().map(String::as_str)));
    }
    text
}

/// Pretty JSON the way `json.dump(..., indent=2)` lays it out, with a final newline.
pub(crate) fn pretty(value: &Value) -> Result<Vec<u8>, serde_json::Error> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    Ok(bytes)
}

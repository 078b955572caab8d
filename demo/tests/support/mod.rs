//! Shared test support: one generated data root per test binary, and metrics.csv read back independently
//! (with the `csv` crate) into `cellscope-model` cell summaries.

#![allow(dead_code)]

use cellscope_model::curve::{CurveOptions, series_curves};
use cellscope_model::status::RowCensus;
use cellscope_model::summary::{self, CellSummary};

type Curve = cellscope_model::curve::Curve<cellscope_model::SeriesKey>;
use cellscope_model::{CellAccumulator, CellKey, CellStatus, RequestSample};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub(crate) const V1_RUN: &str = "tr164-v1/20260531_120428_552237";
pub(crate) const VLLM_RUN: &str = "tr164-v3/20260612_204254_036590";
pub(crate) const SGLANG_RUN: &str = "tr164-v3/20260612_212816_266127";
pub(crate) const BACKUP_RUN: &str = "tr164-v3/20260612_212816_266127_BACKUP_preRefill";
pub(crate) const REFILL_RUN: &str = "tr164-v3/20260613_055519_963364";

/// The default data set, generated once per test binary into a temporary directory.
pub(crate) fn data_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        // Under target/tmp, reused (and atomically replaced) by the next run instead of piling up in /tmp.
        let binary = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_default();
        let binary = binary.split('-').next().unwrap_or("tests").to_string();
        let root =
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cellscope-demo-{binary}"));
        let started = std::time::Instant::now();
        let summary =
            cellscope_demo::generate(&root, &cellscope_demo::Options::default()).expect("generate");
        eprintln!("generated {summary:?} in {:.2?}", started.elapsed());
        root
    })
}

/// One metrics.csv row as text fields by header name.
pub(crate) struct Row {
    pub fields: BTreeMap<String, String>,
}

impl Row {
    pub(crate) fn get(&self, name: &str) -> &str {
        self.fields.get(name).map(String::as_str).unwrap_or("")
    }
    pub(crate) fn num(&self, name: &str) -> f64 {
        self.get(name)
            .parse()
            .unwrap_or_else(|_| panic!("{name} = {:?}", self.get(name)))
    }
    pub(crate) fn is_skip(&self) -> bool {
        self.num("wall_ms") == 0.0
            && self.num("agent_id") == 0.0
            && self.num("request_id") == 0.0
            && self.num("request_sequence") == 0.0
    }
    pub(crate) fn key(&self, run_id: &str) -> CellKey {
        CellKey {
            run_id: run_id.to_string(),
            suite: self.get("suite").into(),
            phase: self.get("phase").into(),
            backend: self.get("backend").into(),
            model: self.get("model").into(),
            workload: self.get("workload").into(),
            config: Default::default(),
            load: cellscope_model::Load::Concurrency(self.num("n_agents") as u32),
            rep: self.num("rep") as u32,
        }
    }
}

pub(crate) fn read_rows(run: &str) -> Vec<Row> {
    let path = data_root().join(run).join("metrics.csv");
    let mut reader = csv::Reader::from_path(&path).expect("open metrics.csv");
    let headers: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(str::to_string)
        .collect();
    reader
        .records()
        .map(|record| {
            let record = record.expect("record");
            assert_eq!(record.len(), headers.len(), "ragged row in {run}");
            Row {
                fields: headers
                    .iter()
                    .cloned()
                    .zip(record.iter().map(str::to_string))
                    .collect(),
            }
        })
        .collect()
}

/// Cell summaries of a run recomputed from its rows (expected rows = requests per agent × N).
pub(crate) fn summaries(run: &str, requests_per_agent: u32) -> Vec<CellSummary> {
    let run_id = run.rsplit('/').next().unwrap_or(run);
    let mut cells: BTreeMap<CellKey, (RowCensus, CellAccumulator)> = BTreeMap::new();
    for row in read_rows(run) {
        let entry = cells
            .entry(row.key(run_id))
            .or_insert_with(|| (RowCensus::default(), CellAccumulator::new()));
        if row.is_skip() {
            entry.0.skip_rows += 1;
            continue;
        }
        entry.0.rows += 1;
        if row.get("status") == "ok" {
            entry.0.ok_rows += 1;
            let ttft = row.get("ttft_ms");
            entry.1.push(&RequestSample {
                wall_ms: row.num("wall_ms"),
                ttft_ms: (!ttft.is_empty()).then(|| ttft.parse().unwrap_or(0.0)),
                prompt_tokens: row.num("prompt_tokens"),
                completion_tokens: row.num("completion_tokens"),
                submit_time_s: row.num("submit_time_s"),
                complete_time_s: row.num("complete_time_s"),
            });
        } else {
            entry.0.failed_rows += 1;
        }
    }
    let mut out: Vec<CellSummary> = cells
        .into_iter()
        .map(|(key, (mut census, accumulator))| {
            census.expected_rows = Some(requests_per_agent * key.n().expect("a concurrency"));
            let mut cell = CellSummary::empty(key, CellStatus::classify(census));
            cell.expected_rows = census.expected_rows;
            cell.rows = census.rows;
            cell.ok_rows = census.ok_rows;
            cell.failed_rows = census.failed_rows;
            cell.skip_rows = census.skip_rows;
            cell.stats = accumulator.finish();
            cell
        })
        .collect();
    summary::fill_scaling(&mut out);
    out
}

pub(crate) fn curves_by_series(cells: &[CellSummary]) -> BTreeMap<(String, String, String), Curve> {
    series_curves(cells, &CurveOptions::default())
        .into_iter()
        .map(|curve| {
            (
                (
                    curve.group.phase.clone(),
                    curve.group.model.clone(),
                    curve.group.workload.clone(),
                ),
                curve,
            )
        })
        .collect()
}

/// Rep-mean value of a (phase, model, workload) at N: efficiency, or the p95 multiplier when `p95` is set.
fn rep_mean(
    curves: &BTreeMap<(String, String, String), Curve>,
    (phase, model, workload): (&str, &str, &str),
    n: u32,
    p95: bool,
) -> f64 {
    curves[&(phase.to_string(), model.to_string(), workload.to_string())]
        .point(cellscope_model::Load::Concurrency(n))
        .and_then(|point| {
            if p95 {
                point.p95_multiplier()
            } else {
                point.efficiency()
            }
        })
        .map(|aggregate| aggregate.value)
        .unwrap_or(f64::NAN)
}

/// Rep-mean efficiency of a (phase, model, workload) at N.
pub(crate) fn mean_efficiency(
    curves: &BTreeMap<(String, String, String), Curve>,
    phase: &str,
    model: &str,
    workload: &str,
    n: u32,
) -> f64 {
    rep_mean(curves, (phase, model, workload), n, false)
}

/// Rep-mean p95 multiplier of a (phase, model, workload) at N.
pub(crate) fn mean_p95x(
    curves: &BTreeMap<(String, String, String), Curve>,
    phase: &str,
    model: &str,
    workload: &str,
    n: u32,
) -> f64 {
    rep_mean(curves, (phase, model, workload), n, true)
}

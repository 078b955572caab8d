//! Tests of the views as data, one module per view, over the hand-made cells built here.

use super::*;
use crate::curve::BandSpan;
use crate::curve::Breakdown;
use crate::exclusions::ExclusionScope;
use crate::key::{CellKey, Dimension};
use crate::load::{Load, LoadKind};
use crate::metric::Metric;
use crate::pooling::Aggregation;
use crate::query::WhatIf;
use crate::reasons::ScalingAbsent;
use crate::stat::Stat;
use crate::stats::CellStats;
use crate::status::CellStatus;
use crate::summary::{CellSummary, fill_scaling};
use crate::view_state::{View, ViewState, XAxis};
use std::collections::BTreeSet;

mod curves;
mod matrix;
mod notes;
mod slice;

fn cell(backend: &str, workload: &str, n: u32, rep: u32, tps: f64, p95: f64) -> CellSummary {
    let mut cell = CellSummary::empty(
        CellKey {
            run_id: "r".into(),
            suite: "s".into(),
            phase: "scaling".into(),
            backend: backend.into(),
            model: "m".into(),
            workload: workload.into(),
            config: Default::default(),
            load: crate::Load::Concurrency(n),
            rep,
        },
        CellStatus::Clean,
    );
    cell.rows = 10 * n;
    cell.ok_rows = 10 * n;
    cell.expected_rows = Some(10 * n);
    cell.stats = CellStats {
        ok_rows: 10 * n,
        aggregate_tps: Some(tps),
        p95_wall_ms: Some(p95),
        ..CellStats::default()
    };
    cell
}

fn sweep(backend: &str, workload: &str, efficiencies: &[(u32, f64)]) -> Vec<CellSummary> {
    let mut cells = Vec::new();
    for rep in 0..3 {
        for (n, efficiency) in efficiencies {
            cells.push(cell(
                backend,
                workload,
                *n,
                rep,
                100.0 * f64::from(*n) * efficiency,
                1000.0 * f64::from(*n).sqrt(),
            ));
        }
    }
    cells
}

/// One rep of `backend` at each `(load, p99 TTFT)`, a cell per load.
fn ttft_series(backend: &str, points: &[(Load, f64)]) -> Vec<CellSummary> {
    points
        .iter()
        .map(|(load, ttft)| {
            let mut cell = cell(backend, "w", 1, 0, 100.0, 1000.0);
            cell.key.load = *load;
            cell.stats.p99_ttft_ms = Some(*ttft);
            cell
        })
        .collect()
}

/// A failed N = 1 cell: the series has an N = 1 cell, so it is normalised against N = 1 and, without data
/// there, has no scaling metrics (a series with no N = 1 cell at all is normalised against its lowest N).
fn failed_at_1(backend: &str, workload: &str) -> CellSummary {
    let mut cell = cell(backend, workload, 1, 0, 0.0, 0.0);
    cell.status = CellStatus::Failed;
    cell.ok_rows = 0;
    cell.stats = CellStats::default();
    cell
}

/// `sweep`'s cells at tensor parallelism `tp`.
fn deployment(tp: &str, efficiencies: &[(u32, f64)]) -> Vec<CellSummary> {
    let mut cells = sweep("vllm", "long_decode", efficiencies);
    for cell in &mut cells {
        cell.key.config.insert("tp", tp).unwrap();
    }
    cells
}

/// `cells` with their model set to `model`.
fn of_model(mut cells: Vec<CellSummary>, model: &str) -> Vec<CellSummary> {
    for cell in &mut cells {
        cell.key.model = model.into();
    }
    cells
}

//! TR164 V1: the single local_core run `20260531_120428_552237` of the in-process pytorch_direct
//! dispatcher, replayed through its seven dispatcher generations, their hangs and fallbacks, with the one
//! skip/partial placement that meets every count of the report's census (14 skip rows, one partial cell).

mod manifest;
mod timeline;
mod traces;

use crate::analysis::{self, PlannedCell};
use crate::calendar::{self, EDT};
use crate::catalog::{self, Model, PHASES, REPS, V1_MODELS, V1_NS, V1_WORKLOADS, Workload};
use crate::cell::{self, CellTarget, Pacing, RequestPlan, Spread};
use crate::random::DemoRng;
use crate::recipe::Recipe;
use crate::rows::{self, CellIdentity, Measurement, MetricsRow, RowBody};
use crate::tree::Tree;
use crate::{DemoError, RunCounts};
use cellscope_model::{CellAccumulator, CellKey};
use manifest::{Event, Generation};
use std::collections::HashMap;
use std::sync::Arc;

pub(crate) const SUITE: &str = "local_core";
pub(crate) const BACKEND: &str = "pytorch_direct";
/// The five backends of the 1,800-cell plan; only pytorch_direct was selected (`--backends pytorch_direct`;
/// the report does not say which of the two the plan file holds).
pub(crate) const PLANNED_BACKENDS: [&str; 5] =
    ["pytorch_direct", "ollama", "vllm", "sglang", "tgi"];

/// One of the 360 planned cells, in plan order: model → phase → workload → N → rep (so that cell 283, 1-based,
/// is scaling × long_decode × N=16 × rep 0 on llama3.2-3b, as the V1 timeline says).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlanCell {
    pub index: usize,
    pub model: Model,
    pub phase: &'static str,
    pub workload: Workload,
    pub n: u32,
    pub rep: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Real,
    /// V5's in-flight rows of ttft × balanced_2k × N=16 × rep 0.
    Partial,
    /// A single App. B sentinel row.
    Skip,
}

impl PlanCell {
    pub(crate) fn kind(&self) -> Kind {
        if self.model.name != "llama3.2-3b" || self.n != 16 {
            return Kind::Real;
        }
        match (self.phase, self.workload.name, self.rep) {
            (_, "long_decode" | "repeated_prefix", _) => Kind::Skip,
            ("ttft", "balanced_2k", 0) => Kind::Partial,
            ("ttft", "balanced_2k", _) => Kind::Skip,
            _ => Kind::Real,
        }
    }

    /// The three fallback-completed cells (the report counts three but names them only in part).
    pub(crate) fn fallback(&self) -> bool {
        self.model.name == "llama3.2-3b"
            && self.n == 8
            && matches!(
                (self.phase, self.workload.name, self.rep),
                ("ttft", "repeated_prefix", 0)
                    | ("ttft", "balanced_2k", 2)
                    | ("scaling", "balanced_2k", 0)
            )
    }

    pub(crate) fn expected_rows(&self) -> u32 {
        12 * self.n
    }

    fn label(&self) -> String {
        format!(
            "{}/{}/{}/n{}/rep{}",
            self.phase, self.model.name, self.workload.name, self.n, self.rep
        )
    }
}

pub(crate) fn plan() -> Vec<PlanCell> {
    let mut cells = Vec::with_capacity(360);
    for model in V1_MODELS {
        for phase in PHASES {
            for workload in V1_WORKLOADS {
                for n in V1_NS {
                    for rep in REPS {
                        cells.push(PlanCell {
                            index: cells.len(),
                            model,
                            phase,
                            workload,
                            n,
                            rep,
                        });
                    }
                }
            }
        }
    }
    cells
}

fn find(plan: &[PlanCell], phase: &str, workload: &str, n: u32, rep: u32) -> usize {
    plan.iter()
        .position(|c| {
            c.model.name == "llama3.2-3b"
                && c.phase == phase
                && c.workload.name == workload
                && c.n == n
                && c.rep == rep
        })
        .unwrap_or(0)
}

/// Documented wall-clock times (EDT) of the timeline; the replay shifts them later only where the published
/// cell durations do not fit (the report's narrative durations disagree with its timeline, so they are not
/// authoritative).
fn edt(month: u32, day: u32, hour: u32, minute: u32, second: f64) -> f64 {
    calendar::epoch(EDT, (2026, month, day), (hour, minute, second))
}

struct Replay<'a> {
    seed: u64,
    run_id: Arc<str>,
    recipe: &'a Recipe,
    plan: Vec<PlanCell>,
    rows: Vec<MetricsRow>,
    histories: Vec<Vec<Event>>,
    rows_written: Vec<u32>,
    /// (aggregate tps, p95 wall ms) of each N=1 cell, keyed by (phase, model, workload, rep).
    baselines: HashMap<(&'static str, &'static str, &'static str, u32), (f64, f64)>,
    clock: f64,
    last_model: &'static str,
    generations: Vec<Generation>,
    /// Rows of each cell, by plan index, for the trace sidecars.
    cell_rows: HashMap<usize, Vec<MetricsRow>>,
}

impl Replay<'_> {
    fn identity(&self, cell: &PlanCell) -> Arc<CellIdentity> {
        Arc::new(CellIdentity {
            run_id: self.run_id.clone(),
            suite: SUITE,
            phase: cell.phase,
            backend: BACKEND,
            model: cell.model,
            workload: cell.workload,
            n_agents: cell.n,
            rep: cell.rep,
        })
    }

    fn event(
        &mut self,
        index: usize,
        at: f64,
        event: &'static str,
        generation: &Generation,
        detail: String,
    ) {
        self.histories[index].push(Event::new(at, event, Some(generation), detail));
    }

    fn request_plans(cell: &PlanCell, count: u32, rng: &mut DemoRng) -> Vec<RequestPlan> {
        (0..count)
            .map(|_| {
                let workload = cell.workload;
                let spread = if workload.name == "repeated_prefix" {
                    0.01
                } else {
                    0.03
                };
                let prompt = (f64::from(workload.prompt_target_tokens)
                    * (1.0 + spread * rng.normal()))
                .round()
                .max(16.0) as u32;
                let completion = if rng.chance(workload.early_stop) {
                    rng.int_range(
                        workload.max_new_tokens * 60 / 100,
                        workload.max_new_tokens - 1,
                    )
                } else {
                    workload.max_new_tokens
                };
                // V1's pytorch_direct prefill is slow relative to decode (SS14's multi-second N=1 TTFTs).
                RequestPlan::new(prompt, completion, cell.model.prefill_cost)
            })
            .collect()
    }

    fn pacing(phase: &str) -> Pacing {
        // The ttft phase "paces requests at slightly slower intervals", in the V1 report's words.
        if phase == "ttft" {
            Pacing {
                stagger_max_s: 0.08,
                gap_min_s: 0.15,
                gap_max_s: 0.45,
            }
        } else {
            Pacing {
                stagger_max_s: 0.05,
                gap_min_s: 0.002,
                gap_max_s: 0.015,
            }
        }
    }

    fn queue_share(n: u32) -> f64 {
        // In-process agents wait behind the GIL before their first token: TTFT grows superlinearly (SS14).
        (f64::from(n) - 1.0) / (f64::from(n) + 2.0)
    }

    /// Builds a full real cell starting at `start`; returns its last completion time.
    fn real_cell(&mut self, cell: &PlanCell, start: f64) -> Result<f64, DemoError> {
        let mut rng = DemoRng::new(self.seed, &format!("v1/cell/{}", cell.label()));
        let plans = Self::request_plans(cell, cell.expected_rows(), &mut rng);
        let series =
            self.recipe
                .v1_series(cell.phase, cell.model.name, cell.workload.name, cell.rep)?;
        let completion: f64 = plans.iter().map(|p| f64::from(p.completion_tokens)).sum();
        let key = (cell.phase, cell.model.name, cell.workload.name, cell.rep);
        let (span_s, spread) = if cell.n == 1 {
            // The baseline's tail is free; choose it so every later cell's (efficiency × multiplier) is reachable.
            let products: Vec<f64> = series
                .efficiency
                .iter()
                .zip(&series.p95_multiplier)
                .map(|(e, p)| e * p)
                .collect();
            let lowest = products.iter().copied().fold(f64::INFINITY, f64::min);
            let highest = products.iter().copied().fold(0.0, f64::max);
            // Later cells need a p95/mean ratio of product × q; about 1.05–2.0 is reachable (see solve_v1.py).
            let q = ((1.06 / lowest) * (1.95 / highest)).sqrt().clamp(1.03, 2.4);
            (completion / series.tps_n1, Spread::P95OverMean(q))
        } else {
            let position = catalog::n_index(&V1_NS, cell.n) - 1;
            let (tps1, p95_1) =
                self.baselines.get(&key).copied().ok_or_else(|| {
                    DemoError::Recipe(format!("no baseline for {}", cell.label()))
                })?;
            let efficiency = series.efficiency.get(position).copied().unwrap_or(0.05);
            let multiplier = series.p95_multiplier.get(position).copied().unwrap_or(20.0);
            (
                completion / (efficiency * f64::from(cell.n) * tps1),
                Spread::P95WallMs(multiplier * p95_1),
            )
        };
        let target = CellTarget {
            n_agents: cell.n,
            requests_per_agent: 12,
            span_s,
            spread,
            pacing: Self::pacing(cell.phase),
            queue_share: Self::queue_share(cell.n),
        };
        let schedule = cell::schedule(&target, &plans, &mut rng);
        let measurements = cell::measurements(start, &target, &plans, &schedule, &mut rng);
        if cell.n == 1 {
            let mut accumulator = CellAccumulator::new();
            let identity = self.identity(cell);
            for m in &measurements {
                if let Some(sample) = (MetricsRow {
                    cell: identity.clone(),
                    body: RowBody::Request(m.clone()),
                })
                .sample()
                {
                    accumulator.push(&sample);
                }
            }
            let stats = accumulator.finish();
            self.baselines.insert(
                key,
                (
                    stats.aggregate_tps.unwrap_or(1.0),
                    stats.p95_wall_ms.unwrap_or(1.0),
                ),
            );
        }
        Ok(self.push_rows(cell, measurements))
    }

    fn push_rows(&mut self, cell: &PlanCell, measurements: Vec<Measurement>) -> f64 {
        let identity = self.identity(cell);
        let end = measurements
            .iter()
            .map(|m| m.complete_time_s)
            .fold(self.clock, f64::max);
        self.rows_written[cell.index] += measurements.len() as u32;
        let rows: Vec<MetricsRow> = measurements
            .into_iter()
            .map(|m| MetricsRow {
                cell: identity.clone(),
                body: RowBody::Request(m),
            })
            .collect();
        self.cell_rows.insert(cell.index, rows.clone());
        self.rows.extend(rows);
        end
    }

    /// V5's in-flight rows: 12 of the 16 agents' first requests completed before the fallback hung;
    /// ten after about P50 ≈ 27× the baseline, two only after hours (SS5's 1446.67× tail, SS2's 0.23 tps).
    fn partial_cell(&mut self, cell: &PlanCell, start: f64) -> Result<f64, DemoError> {
        let target = &self.recipe.v1.partial;
        let mut rng = DemoRng::new(self.seed, &format!("v1/cell/{}", cell.label()));
        let key = (cell.phase, cell.model.name, cell.workload.name, cell.rep);
        let (tps1, p95_1) = self
            .baselines
            .get(&key)
            .copied()
            .ok_or_else(|| DemoError::Recipe("no partial baseline".into()))?;
        let plans = Self::request_plans(cell, target.rows, &mut rng);
        let completion: f64 = plans.iter().map(|p| f64::from(p.completion_tokens)).sum();
        let span_s = completion / (target.efficiency * f64::from(cell.n) * tps1);
        let p95_s = target.p95_multiplier * p95_1 / 1000.0;
        // p95 of 12 values sits 45% of the way from the 11th to the 12th: solve the two long ones from it.
        let longest = span_s.max(p95_s * 1.02);
        let second = ((p95_s - 0.45 * longest) / 0.55).min(longest);
        let typical = target.p50_multiplier * p95_1 / 1000.0 / 1.15;
        let stagger: Vec<f64> = (0..cell.n)
            .map(|agent| {
                if agent == 0 {
                    0.0
                } else {
                    rng.range(0.0, 0.08)
                }
            })
            .collect();
        let mut submit_order: Vec<usize> = (0..cell.n as usize).collect();
        submit_order.sort_by(|a, b| stagger[*a].total_cmp(&stagger[*b]));
        let mut measurements = Vec::new();
        for (slot, plan) in plans.iter().enumerate() {
            let wall_s = match slot {
                0 => longest,
                1 => second,
                _ => typical * (0.12 * rng.normal()).exp(),
            };
            let submit = crate::pyrepr::round_to(start + stagger[slot], 6);
            let complete = crate::pyrepr::round_to(start + stagger[slot] + wall_s, 6);
            let wall_ms = crate::pyrepr::round_to((complete - submit) * 1000.0, 3);
            let prefill_ms = crate::pyrepr::round_to(wall_ms * plan.prefill_share * 0.2, 3);
            let ttft_ms = crate::pyrepr::round_to(wall_ms * 0.93, 3);
            let decode_ms = crate::pyrepr::round_to(wall_ms - ttft_ms, 3);
            let completion = f64::from(plan.completion_tokens);
            let sequence = submit_order
                .iter()
                .position(|agent| *agent == slot)
                .unwrap_or(slot) as u32
                + 1;
            measurements.push(Measurement {
                agent_id: slot as u32 + 1,
                request_id: slot as u32 * 12 + 1,
                request_sequence: sequence,
                in_flight_at_submit: sequence,
                wall_ms,
                prompt_tokens: plan.prompt_tokens,
                completion_tokens: plan.completion_tokens,
                prefill_ms: Some(prefill_ms),
                decode_ms: Some(decode_ms),
                effective_tps: completion / (wall_ms / 1000.0),
                gpu_tokens_per_s: Some(completion / (decode_ms / 1000.0)),
                ttft_ms: Some(ttft_ms),
                submit_time_s: submit,
                complete_time_s: complete,
                status: "ok",
                error: None,
            });
        }
        measurements.sort_by(|a, b| a.complete_time_s.total_cmp(&b.complete_time_s));
        Ok(self.push_rows(cell, measurements))
    }

    fn skip_row(&mut self, index: usize, at: f64, batch: u32, generation: &Generation) {
        let cell = self.plan[index];
        let identity = self.identity(&cell);
        self.rows.push(MetricsRow {
            cell: identity,
            body: RowBody::Skip,
        });
        self.rows_written[index] += 1;
        self.event(index, at, "skip_rows_appended", generation, format!(
            "skip-row batch {batch}: synthetic App. B row appended after the kill ceremony; verified by _load_completed_keys; SNAPSHOT_PRE_RESTART taken"
        ));
    }

    /// Runs plan cells `range` (skipping sentinel cells) under `generation`.
    fn run_cells(
        &mut self,
        indices: impl IntoIterator<Item = usize>,
        generation: &Generation,
    ) -> Result<(), DemoError> {
        for index in indices {
            let cell = self.plan[index];
            if cell.kind() == Kind::Skip {
                continue;
            }
            let mut rng = DemoRng::new(self.seed, &format!("v1/gap/{index}"));
            self.clock += rng.range(4.0, 18.0);
            if self.last_model != cell.model.name {
                self.clock += rng.range(35.0, 60.0); // model load
                self.last_model = cell.model.name;
            }
            let captured = traces::captured(&cell);
            let detail = if captured.is_some() {
                "nsys-wrapped cell_worker subprocess (capture rule peak_load_only)"
            } else {
                "in-process agent_executor"
            };
            let started = self.clock;
            self.event(index, started, "started", generation, detail.to_string());
            let mut start = started
                + if captured.is_some() {
                    rng.range(20.0, 35.0)
                } else {
                    0.0
                };
            if cell.fallback() {
                let timeout_at = started + 1800.0;
                self.event(index, timeout_at, "subprocess_timeout", generation, "nsys-wrapped subprocess exceeded subprocess_timeout_s=1800; killed; ERROR logged; partial trace left".into());
                start = timeout_at + rng.range(10.0, 25.0);
                self.event(
                    index,
                    start,
                    "fallback_started",
                    generation,
                    "re-running the cell in-process (agent_executor)".into(),
                );
            }
            let end = if cell.kind() == Kind::Partial {
                self.partial_cell(&cell, start)?
            } else {
                self.real_cell(&cell, start)?
            };
            self.clock = end;
            if cell.kind() == Kind::Real {
                if cell.fallback() {
                    self.event(
                        index,
                        end,
                        "fallback_completed",
                        generation,
                        format!("in-process fallback finished after {:.0} s", end - start),
                    );
                }
                let rows = self.rows_written[index];
                self.event(
                    index,
                    end,
                    "completed",
                    generation,
                    format!("rows_written={rows}"),
                );
            }
        }
        Ok(())
    }
}

/// Writes `tr164-v1/<run id>/` and returns its counts.
pub(crate) fn write(tree: &mut Tree, seed: u64, recipe: &Recipe) -> Result<RunCounts, DemoError> {
    let launch = edt(5, 31, 12, 4, 28.552237);
    let run_id: Arc<str> = calendar::run_id(EDT, launch).into();
    let plan = plan();
    let count = plan.len();
    let mut replay = Replay {
        seed,
        run_id: run_id.clone(),
        recipe,
        plan,
        rows: Vec::with_capacity(24_000),
        histories: vec![Vec::new(); count],
        rows_written: vec![0; count],
        baselines: HashMap::new(),
        clock: launch,
        last_model: "",
        generations: Vec::new(),
        cell_rows: HashMap::new(),
    };
    let complete = replay.replay_generations(launch)?;
    write_files(tree, &replay, launch, complete)
}

/// The planned cells with their keys, expected rows and fallback marks, for the summaries.
fn planned_cells(replay: &Replay<'_>) -> Vec<PlannedCell> {
    replay
        .plan
        .iter()
        .map(|cell| PlannedCell {
            key: CellKey {
                run_id: replay.run_id.to_string(),
                suite: SUITE.into(),
                phase: cell.phase.into(),
                backend: BACKEND.into(),
                model: cell.model.name.into(),
                workload: cell.workload.name.into(),
                config: Default::default(),
                load: cellscope_model::Load::Concurrency(cell.n),
                rep: cell.rep,
            },
            expected_rows: cell.expected_rows(),
            fallback: cell.fallback(),
        })
        .collect()
}

/// analysis.json's coverage section: what the run observed of the main track and what it left out.
fn coverage(
    count: usize,
    summaries: &[cellscope_model::summary::CellSummary],
) -> serde_json::Value {
    serde_json::json!({
        "observed_backends": [BACKEND],
        "missing_main_track_backends": ["ollama", "vllm", "sglang", "tgi"],
        "observed_model_tiers": ["small", "small_plus"],
        "missing_main_track_tiers": ["production_small", "upper_single_gpu"],
        "observed_suites": [SUITE],
        "missing_cloud_suites": ["cloud_core", "cloud_full"],
        "planned_cells": count,
        "real_cells": summaries.iter().filter(|cell| cell.has_data()).count(),
        "skip_marked_cells": summaries.iter().filter(|cell| cell.skip_rows > 0 && cell.rows == 0).count(),
    })
}

/// Writes the replayed run's files: metrics, manifest, plan, config, analysis, summaries, report and traces.
fn write_files(
    tree: &mut Tree,
    replay: &Replay<'_>,
    launch: f64,
    complete: f64,
) -> Result<RunCounts, DemoError> {
    let run_id = &replay.run_id;
    let count = replay.plan.len();
    let planned = planned_cells(replay);
    let summaries = analysis::summarize(run_id, &planned, &replay.rows);
    let captures = traces::inventory(&replay.plan);
    let dir = format!("tr164-v1/{run_id}");
    let analysis_document = analysis::analysis_json(
        run_id,
        &summaries,
        "v1",
        Some(traces::analysis_section(&captures)),
        coverage(count, &summaries),
    );
    let json = |value: &serde_json::Value| analysis::pretty(value).map_err(DemoError::Json);
    tree.write(
        &format!("{dir}/metrics.csv"),
        rows::metrics_csv(&replay.rows, false).as_bytes(),
    )?;
    let manifest = manifest::manifest(
        &replay.plan,
        &replay.histories,
        &replay.rows_written,
        &replay.generations,
        &captures,
        run_id,
        launch,
    );
    tree.write(&format!("{dir}/manifest.json"), &json(&manifest)?)?;
    tree.write(
        &format!("{dir}/execution_plan.json"),
        &json(&manifest::execution_plan(run_id))?,
    )?;
    tree.write(
        &format!("{dir}/config.yaml"),
        manifest::CONFIG_YAML.as_bytes(),
    )?;
    tree.write(&format!("{dir}/analysis.json"), &json(&analysis_document)?)?;
    tree.write(
        &format!("{dir}/cell_summary.csv"),
        analysis::cell_summary_csv(&summaries).as_bytes(),
    )?;
    tree.write(
        &format!("{dir}/tr164_report.md"),
        manifest::report(run_id, &summaries, complete).as_bytes(),
    )?;
    traces::write(tree, &dir, &captures, &replay.plan, &replay.cell_rows)?;
    Ok(RunCounts {
        runs: 1,
        metrics_rows: replay.rows.len() as u64,
    })
}

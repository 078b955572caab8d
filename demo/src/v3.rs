//! TR164 V3: the vLLM and SGLang cloud_core runs, and the SGLang Mistral × long_prefill_8k story of overflow,
//! refill and splice — 3,780 `http_400` rows in the original run, the targeted refill run, the in-place splice into
//! the master (rows keep the refill run id; the report does not say which id they carry), the untouched pre-refill
//! backup and REFILL_NOTE.md.

mod files;

use crate::analysis::{self, PlannedCell};
use crate::calendar::{self, UTC};
use crate::catalog::{Model, PHASES, REPS, V3_MODELS, V3_NS, V3_WORKLOADS, Workload};
use crate::cell::{self, CellTarget, Pacing, RequestPlan, Spread};
use crate::random::DemoRng;
use crate::recipe::{Recipe, V3Backend};
use crate::rows::{CellIdentity, Measurement, MetricsRow, RowBody};
use crate::tree::Tree;
use crate::{DemoError, RunCounts};
use cellscope_model::{CellAccumulator, CellKey};
use std::collections::HashMap;
use std::sync::Arc;

pub(crate) const SUITE: &str = "cloud_core";
pub(crate) use crate::catalog::V3_REQUESTS_PER_AGENT as REQUESTS_PER_AGENT;
const VLLM_RUN: &str = "20260612_204254_036590";
const SGLANG_RUN: &str = "20260612_212816_266127";
const REFILL_RUN: &str = "20260613_055519_963364";
pub(crate) const DEFAULT_MAX_MODEL_LEN: u32 = 8768;
pub(crate) const REFILL_MAX_MODEL_LEN: u32 = 11264;

#[derive(Clone, Copy, Debug)]
pub(crate) struct PlanCell {
    pub model: Model,
    pub phase: &'static str,
    pub workload: Workload,
    pub n: u32,
    pub rep: u32,
}

impl PlanCell {
    fn label(&self) -> String {
        format!(
            "{}/{}/{}/n{}/rep{}",
            self.phase, self.model.name, self.workload.name, self.n, self.rep
        )
    }

    pub(crate) fn is_mistral_long_prefill(&self) -> bool {
        self.model.name == "mistral-7b" && self.workload.name == "long_prefill_8k"
    }

    pub(crate) fn expected_rows(&self) -> u32 {
        REQUESTS_PER_AGENT * self.n
    }

    pub(crate) fn key(&self, run_id: &str, backend: &str) -> CellKey {
        CellKey {
            run_id: run_id.into(),
            suite: SUITE.into(),
            phase: self.phase.into(),
            backend: backend.into(),
            model: self.model.name.into(),
            workload: self.workload.name.into(),
            config: Default::default(),
            load: cellscope_model::Load::Concurrency(self.n),
            rep: self.rep,
        }
    }
}

/// The 900 cells of one backend in plan order: model → phase → workload → N → rep (one server launch per model).
pub(crate) fn plan() -> Vec<PlanCell> {
    let mut cells = Vec::with_capacity(900);
    for model in V3_MODELS {
        for phase in PHASES {
            for workload in V3_WORKLOADS {
                for n in V3_NS {
                    for rep in REPS {
                        cells.push(PlanCell {
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

/// A run id shifted by whole days (copies of the tree for `--scale`).
fn shifted(id: &str, days: u32) -> String {
    let epoch = calendar::parse_run_id(UTC, id).unwrap_or_default() + 86_400.0 * f64::from(days);
    calendar::run_id(UTC, epoch)
}

/// Prompt-token counts of the 1,890 Mistral × long_prefill_8k requests of one phase with exactly the published
/// min, mean and max (the published tokenizer asymmetry). Both phases send the same prompts, so each phase
/// reproduces the statistics.
fn exact_token_stats(rng: &mut DemoRng, count: usize, [min, mean, max]: [u32; 3]) -> Vec<u32> {
    let spread = f64::from(max - min) / 5.5;
    let mut values: Vec<u32> = (0..count)
        .map(|_| {
            (f64::from(mean) + spread * rng.normal())
                .round()
                .clamp(f64::from(min + 1), f64::from(max - 1)) as u32
        })
        .collect();
    let low = rng.int_range(0, count as u32 / 2 - 1) as usize;
    let high = count / 2 + rng.int_range(0, count as u32 / 2 - 1) as usize;
    values[low] = min;
    values[high] = max;
    let target = u64::from(mean) * count as u64;
    let mut total: u64 = values.iter().map(|v| u64::from(*v)).sum();
    while total != target {
        let index = rng.int_range(0, count as u32 - 1) as usize;
        if index == low || index == high {
            continue;
        }
        if total < target && values[index] < max - 1 {
            values[index] += 1;
            total += 1;
        } else if total > target && values[index] > min + 1 {
            values[index] -= 1;
            total -= 1;
        }
    }
    values
}

struct Backend<'a> {
    name: &'static str,
    targets: &'a V3Backend,
    /// Mistral × long_prefill_8k prompt tokens per request of one phase, in plan order (N → rep → agent → request).
    mistral_tokens: Vec<u32>,
    startup_s: (f64, f64),
}

/// Generates the rows of a sequence of cells of one backend into `rows`, starting at `clock`.
struct Runner<'a> {
    seed: u64,
    copy: u32,
    backend: &'a Backend<'a>,
    run_id: Arc<str>,
    baselines: HashMap<(&'static str, &'static str, &'static str, u32), (f64, f64)>,
    clock: f64,
    last_model: &'static str,
    rows: Vec<MetricsRow>,
    /// Per cell: (started, completed) epoch seconds, for manifest histories.
    spans: Vec<(f64, f64)>,
}

fn mistral_offset(cell: &PlanCell) -> usize {
    // Requests of one phase before this cell: Σ 10·N over earlier (N, rep) pairs.
    let before: u32 = V3_NS
        .iter()
        .filter(|n| **n < cell.n)
        .map(|n| REQUESTS_PER_AGENT * n * 3)
        .sum();
    (before + REQUESTS_PER_AGENT * cell.n * cell.rep) as usize
}

impl Runner<'_> {
    fn identity(&self, cell: &PlanCell) -> Arc<CellIdentity> {
        Arc::new(CellIdentity {
            run_id: self.run_id.clone(),
            suite: SUITE,
            phase: cell.phase,
            backend: self.backend.name,
            model: cell.model,
            workload: cell.workload,
            n_agents: cell.n,
            rep: cell.rep,
        })
    }

    fn request_plans(&self, cell: &PlanCell, rng: &mut DemoRng) -> Vec<RequestPlan> {
        let count = cell.expected_rows() as usize;
        let offset = mistral_offset(cell);
        (0..count)
            .map(|index| {
                let workload = cell.workload;
                let prompt = if cell.is_mistral_long_prefill() {
                    self.backend.mistral_tokens[offset + index]
                } else if workload.name == "long_prefill_8k" {
                    (f64::from(cell.model.long_prefill_tokens) + 70.0 * rng.normal())
                        .round()
                        .min(8704.0) as u32
                } else {
                    (f64::from(workload.prompt_target_tokens) * (1.0 + 0.03 * rng.normal())).round()
                        as u32
                };
                // The harness pins the output length; a few requests still end early on EOS.
                let completion = if rng.chance(0.04) {
                    rng.int_range(workload.max_new_tokens * 3 / 4, workload.max_new_tokens - 1)
                } else {
                    workload.max_new_tokens
                };
                RequestPlan::new(prompt, completion, cell.model.prefill_cost)
            })
            .collect()
    }

    /// Rep-level targets: the recipe's rep means plus small zero-sum rep offsets (so the rep mean stays exact).
    fn rep_targets(&self, cell: &PlanCell) -> Result<(f64, f64, f64, f64), DemoError> {
        let targets = self
            .backend
            .targets
            .cell(cell.model.name, cell.workload.name)?;
        let index = V3_NS.iter().position(|n| *n == cell.n).unwrap_or(0);
        let mut rng = DemoRng::new(
            self.seed,
            &format!(
                "v3/{}/{}/reps/{}/{}/{}/n{}",
                self.copy,
                self.backend.name,
                cell.phase,
                cell.model.name,
                cell.workload.name,
                cell.n
            ),
        );
        let raw: Vec<f64> = (0..3).map(|_| rng.normal()).collect();
        let mean = raw.iter().sum::<f64>() / 3.0;
        let offset = raw[cell.rep as usize] - mean;
        let efficiency = targets.efficiency[index] + if cell.n > 1 { 0.004 * offset } else { 0.0 };
        let multiplier =
            targets.p95_multiplier[index] * if cell.n > 1 { 1.0 + 0.01 * offset } else { 1.0 };
        let products: Vec<f64> = targets
            .efficiency
            .iter()
            .zip(&targets.p95_multiplier)
            .skip(1)
            .map(|(e, p)| e * p)
            .collect();
        let lowest = products.iter().copied().fold(f64::INFINITY, f64::min);
        let highest = products.iter().copied().fold(0.0, f64::max);
        let q1 = ((1.06 / lowest) * (1.95 / highest)).sqrt().clamp(1.03, 2.4);
        Ok((efficiency, multiplier, q1, targets.tps_n1))
    }

    fn advance(&mut self, cell: &PlanCell) {
        let mut rng = DemoRng::new(
            self.seed,
            &format!(
                "v3/{}/{}/gap/{}",
                self.copy,
                self.backend.name,
                cell.label()
            ),
        );
        self.clock += rng.range(1.0, 4.0);
        if self.last_model != cell.model.name {
            self.clock += rng.range(self.backend.startup_s.0, self.backend.startup_s.1); // server launch + health check
            self.last_model = cell.model.name;
        }
    }

    /// A successful cell: rows whose recomputed efficiency and p95 multiplier hit the targets.
    fn ok_cell(&mut self, cell: &PlanCell) -> Result<(), DemoError> {
        self.advance(cell);
        let mut rng = DemoRng::new(
            self.seed,
            &format!(
                "v3/{}/{}/cell/{}",
                self.copy,
                self.backend.name,
                cell.label()
            ),
        );
        let plans = self.request_plans(cell, &mut rng);
        let (efficiency, multiplier, q1, tps_n1) = self.rep_targets(cell)?;
        let completion: f64 = plans.iter().map(|p| f64::from(p.completion_tokens)).sum();
        let key = (cell.phase, cell.model.name, cell.workload.name, cell.rep);
        let (span_s, spread) = if cell.n == 1 {
            (completion / tps_n1, Spread::P95OverMean(q1))
        } else {
            let (tps1, p95_1) =
                self.baselines.get(&key).copied().ok_or_else(|| {
                    DemoError::Recipe(format!("no baseline for {}", cell.label()))
                })?;
            (
                completion / (efficiency * f64::from(cell.n) * tps1),
                Spread::P95WallMs(multiplier * p95_1),
            )
        };
        let pacing = if cell.phase == "ttft" {
            Pacing {
                stagger_max_s: 0.03,
                gap_min_s: 0.05,
                gap_max_s: 0.15,
            }
        } else {
            Pacing {
                stagger_max_s: 0.02,
                gap_min_s: 0.001,
                gap_max_s: 0.006,
            }
        };
        let target = CellTarget {
            n_agents: cell.n,
            requests_per_agent: REQUESTS_PER_AGENT,
            span_s,
            spread,
            pacing,
            // Continuous batching admits new requests quickly: first tokens wait only a little longer under load.
            queue_share: 0.03 * f64::from(cell.n).log2(),
        };
        let schedule = cell::schedule(&target, &plans, &mut rng);
        let start = self.clock;
        let measurements = cell::measurements(start, &target, &plans, &schedule, &mut rng);
        if cell.n == 1 {
            let mut accumulator = CellAccumulator::new();
            for m in &measurements {
                accumulator.push(&m.sample());
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
        self.push(cell, start, measurements);
        Ok(())
    }

    /// The original SGLang Mistral × long_prefill_8k cell: every request rejected at the server boundary.
    fn rejected_cell(&mut self, cell: &PlanCell) {
        self.advance(cell);
        let mut rng = DemoRng::new(
            self.seed,
            &format!(
                "v3/{}/{}/rejected/{}",
                self.copy,
                self.backend.name,
                cell.label()
            ),
        );
        let offset = mistral_offset(cell);
        let start = self.clock;
        let mut measurements = Vec::new();
        for agent in 0..cell.n {
            let mut clock = start
                + if agent == 0 {
                    0.0
                } else {
                    rng.range(0.0, 0.02)
                };
            for k in 0..REQUESTS_PER_AGENT {
                let index = (agent * REQUESTS_PER_AGENT + k) as usize;
                let prompt = self.backend.mistral_tokens[offset + index];
                clock += rng.range(0.001, 0.006);
                let submit = crate::pyrepr::round_to(clock, 6);
                let complete = crate::pyrepr::round_to(
                    clock + rng.range(0.008, 0.045) * (1.0 + 0.05 * f64::from(cell.n).log2()),
                    6,
                );
                clock = complete;
                measurements.push(Measurement {
                    agent_id: agent + 1,
                    request_id: index as u32 + 1,
                    request_sequence: 0,
                    in_flight_at_submit: 0,
                    wall_ms: crate::pyrepr::round_to((complete - submit) * 1000.0, 3),
                    prompt_tokens: prompt,
                    completion_tokens: 0,
                    prefill_ms: None,
                    decode_ms: None,
                    effective_tps: 0.0,
                    gpu_tokens_per_s: None,
                    ttft_ms: None,
                    submit_time_s: submit,
                    complete_time_s: complete,
                    status: "http_400",
                    error: Some(format!(
                        "{{\"object\":\"error\",\"message\":\"Requested token count exceeds the model's maximum context length of {DEFAULT_MAX_MODEL_LEN} tokens. You requested a total of {} tokens: {prompt} tokens from the input messages and 64 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}}",
                        prompt + 64
                    )),
                });
            }
        }
        // Sequence and in-flight counts from the schedule, as for ok rows.
        let mut order: Vec<usize> = (0..measurements.len()).collect();
        order.sort_by(|a, b| {
            measurements[*a]
                .submit_time_s
                .total_cmp(&measurements[*b].submit_time_s)
        });
        for (rank, index) in order.iter().enumerate() {
            measurements[*index].request_sequence = rank as u32 + 1;
        }
        let times: Vec<(f64, f64)> = measurements
            .iter()
            .map(|m| (m.submit_time_s, m.complete_time_s))
            .collect();
        for m in &mut measurements {
            m.in_flight_at_submit = times
                .iter()
                .filter(|(s, c)| *s <= m.submit_time_s && m.submit_time_s < *c)
                .count() as u32;
        }
        measurements.sort_by(|a, b| a.complete_time_s.total_cmp(&b.complete_time_s));
        self.push(cell, start, measurements);
    }

    fn push(&mut self, cell: &PlanCell, start: f64, measurements: Vec<Measurement>) {
        let identity = self.identity(cell);
        let end = measurements
            .iter()
            .map(|m| m.complete_time_s)
            .fold(start, f64::max);
        self.spans.push((start, end));
        self.clock = end;
        self.rows
            .extend(measurements.into_iter().map(|m| MetricsRow {
                cell: identity.clone(),
                body: RowBody::Request(m),
            }));
    }
}

fn planned(plan: &[PlanCell], run_id: &str, backend: &str) -> Vec<PlannedCell> {
    plan.iter()
        .map(|cell| PlannedCell {
            key: cell.key(run_id, backend),
            expected_rows: cell.expected_rows(),
            fallback: false,
        })
        .collect()
}

/// The two backends of one copy of the tree, with their Mistral × long_prefill_8k prompt-token counts.
fn backends(seed: u64, copy: u32, recipe: &Recipe) -> (Backend<'_>, Backend<'_>) {
    let stats = &recipe.v3.mistral_long_prefill_prompt_tokens;
    let mut token_rng = DemoRng::new(seed, &format!("v3/{copy}/mistral-tokens"));
    let vllm_tokens = exact_token_stats(&mut token_rng, stats.n as usize, stats.vllm);
    // HF counts follow the mistral_common counts prompt by prompt (same strings, denser tokenizer): pair by rank.
    let mut sglang_sorted = exact_token_stats(&mut token_rng, stats.n as usize, stats.sglang);
    sglang_sorted.sort_unstable();
    let mut by_rank: Vec<usize> = (0..vllm_tokens.len()).collect();
    by_rank.sort_by_key(|index| (vllm_tokens[*index], *index));
    let mut sglang_tokens = vec![0; vllm_tokens.len()];
    for (rank, index) in by_rank.into_iter().enumerate() {
        sglang_tokens[index] = sglang_sorted[rank];
    }
    let vllm = Backend {
        name: "vllm",
        targets: &recipe.v3.vllm,
        mistral_tokens: vllm_tokens,
        startup_s: (70.0, 140.0),
    };
    let sglang = Backend {
        name: "sglang",
        targets: &recipe.v3.sglang,
        mistral_tokens: sglang_tokens,
        startup_s: (110.0, 240.0),
    };
    (vllm, sglang)
}

/// The rows of one backend (`"vllm"`, or `"sglang"` as its original run wrote them) of the default tree, for every
/// cell in plan order up to and including the last cell of `through_model`: exactly the rows the V3 demo writes for
/// those cells (SGLang's Mistral × long_prefill_8k cells as the rejected original). The whole prefix of the plan is
/// run because every cell starts where the previous one ended, and the timestamps depend on that clock.
pub(crate) fn backend_rows(
    seed: u64,
    recipe: &Recipe,
    backend: &str,
    through_model: &str,
) -> Result<Vec<MetricsRow>, DemoError> {
    let (vllm, sglang) = backends(seed, 1, recipe);
    let (chosen, run_id) = match backend {
        "vllm" => (&vllm, VLLM_RUN),
        "sglang" => (&sglang, SGLANG_RUN),
        other => return Err(DemoError::Options(format!("no V3 backend named {other}"))),
    };
    let last_model = V3_MODELS
        .iter()
        .position(|model| model.name == through_model)
        .ok_or_else(|| DemoError::Options(format!("no V3 model named {through_model}")))?;
    let mut runner = Runner::new(seed, 1, chosen, run_id);
    for cell in plan() {
        if V3_MODELS
            .iter()
            .position(|model| model.name == cell.model.name)
            .is_none_or(|index| index > last_model)
        {
            break;
        }
        if chosen.name == "sglang" && cell.is_mistral_long_prefill() {
            runner.rejected_cell(&cell);
        } else {
            runner.ok_cell(&cell)?;
        }
    }
    Ok(runner.rows)
}

/// Writes one copy of the V3 tree (copy 1 is `tr164-v3/`, copy K is `tr164-v3-copy-00K/`, shifted K−1 days).
pub(crate) fn write(
    tree: &mut Tree,
    seed: u64,
    copy: u32,
    recipe: &Recipe,
) -> Result<RunCounts, DemoError> {
    let days = copy - 1;
    let root = if copy == 1 {
        "tr164-v3".to_string()
    } else {
        format!("tr164-v3-copy-{copy:03}")
    };
    let (vllm, sglang) = backends(seed, copy, recipe);
    let plan = plan();
    let mut counts = RunCounts::default();

    // vLLM main grid.
    let vllm_id = shifted(VLLM_RUN, days);
    let mut runner = Runner::new(seed, copy, &vllm, &vllm_id);
    for cell in &plan {
        runner.ok_cell(cell)?;
    }
    let summaries = analysis::summarize(&vllm_id, &planned(&plan, &vllm_id, "vllm"), &runner.rows);
    let dir = format!("{root}/{vllm_id}");
    files::write_main_run(
        tree, &dir, &vllm_id, "vllm", &plan, &runner, &summaries, None,
    )?;
    counts.runs += 1;
    counts.metrics_rows += runner.rows.len() as u64;

    // SGLang: the original run (Mistral × long_prefill_8k rejected), then the refill, then the splice.
    let sglang_id = shifted(SGLANG_RUN, days);
    let mut original = Runner::new(seed, copy, &sglang, &sglang_id);
    for cell in &plan {
        if cell.is_mistral_long_prefill() {
            original.rejected_cell(cell);
        } else {
            original.ok_cell(cell)?;
        }
    }
    let refill_id = shifted(REFILL_RUN, days);
    let refill_plan: Vec<PlanCell> = plan
        .iter()
        .copied()
        .filter(PlanCell::is_mistral_long_prefill)
        .collect();
    let mut refill = Runner::new(seed, copy, &sglang, &refill_id);
    for cell in &refill_plan {
        refill.ok_cell(cell)?;
    }
    // Splice: the i-th row of each Mistral × long_prefill_8k cell in the original is replaced by the i-th row of the
    // same cell in the refill run, position for position; everything else stays byte-identical.
    let mut replacements: HashMap<(&str, u32, u32), std::collections::VecDeque<MetricsRow>> =
        HashMap::new();
    for row in &refill.rows {
        replacements
            .entry((row.cell.phase, row.cell.n_agents, row.cell.rep))
            .or_default()
            .push_back(row.clone());
    }
    let mut master_rows = Vec::with_capacity(original.rows.len());
    for row in &original.rows {
        let spliced = row
            .measurement()
            .filter(|m| m.status == "http_400")
            .and_then(|_| {
                replacements
                    .get_mut(&(row.cell.phase, row.cell.n_agents, row.cell.rep))
                    .and_then(|queue| queue.pop_front())
            });
        master_rows.push(spliced.unwrap_or_else(|| row.clone()));
    }

    let backup_summaries = analysis::summarize(
        &sglang_id,
        &planned(&plan, &sglang_id, "sglang"),
        &original.rows,
    );
    let master_summaries = analysis::summarize(
        &sglang_id,
        &planned(&plan, &sglang_id, "sglang"),
        &master_rows,
    );
    let master_dir = format!("{root}/{sglang_id}");
    let refill_info = files::RefillInfo {
        refill_id: &refill_id,
        refill_end: refill.clock,
        rows: refill.rows.len(),
    };
    let master_runner = Runner {
        rows: master_rows,
        ..original.clone_meta()
    };
    files::write_main_run(
        tree,
        &master_dir,
        &sglang_id,
        "sglang",
        &plan,
        &master_runner,
        &master_summaries,
        Some(&refill_info),
    )?;
    files::write_backup(
        tree,
        &format!("{root}/{sglang_id}_BACKUP_preRefill"),
        &sglang_id,
        &plan,
        &original,
        &backup_summaries,
    )?;
    files::write_refill_run(
        tree,
        &format!("{root}/{refill_id}"),
        &refill_id,
        &sglang_id,
        &refill_plan,
        &refill,
    )?;
    counts.runs += 2;
    counts.metrics_rows +=
        (master_runner.rows.len() + original.rows.len() + refill.rows.len()) as u64;
    Ok(counts)
}

impl<'a> Runner<'a> {
    fn new(seed: u64, copy: u32, backend: &'a Backend<'a>, run_id: &str) -> Runner<'a> {
        let launch = calendar::parse_run_id(UTC, run_id).unwrap_or_default();
        Runner {
            seed,
            copy,
            backend,
            run_id: run_id.into(),
            baselines: HashMap::new(),
            clock: launch + 20.0,
            last_model: "",
            rows: Vec::with_capacity(95_000),
            spans: Vec::with_capacity(900),
        }
    }

    /// Same run metadata (id, cell spans) without the rows.
    fn clone_meta(&self) -> Runner<'a> {
        Runner {
            seed: self.seed,
            copy: self.copy,
            backend: self.backend,
            run_id: self.run_id.clone(),
            baselines: HashMap::new(),
            clock: self.clock,
            last_model: self.last_model,
            rows: Vec::new(),
            spans: self.spans.clone(),
        }
    }
}

//! A small sweep of the V3 demo written in three other benchmark tools' formats, so that a data root can show
//! TR164 runs and other tools' results side by side: vLLM as a `vllm bench sweep serve` experiment, SGLang as
//! `bench_serving` JSONL with `--output-details`, and TGI as an AIPerf multi-trial concurrency sweep.
//!
//! Shape: 2 models × 2 workloads of the V3 demo, N ∈ {1, 2, 4, 8, 16}, 3 reps, 4 requests per agent (60 cells per
//! engine). Every request is taken from the V3 demo's own rows of the same (backend, model, workload, N, rep) cell
//! with its wall time, time to first token and token counts, so the numbers recomputed per cell stay close to the
//! V3 demo's: 4 of each agent's 10 V3 requests are kept (chosen so that the cell's throughput and p95 wall time stay
//! those of all 10, see [`choose`]) and sent back to back from the agent's V3 start. Whole cells are then placed on
//! each tool's own clock, because each tool runs its sweep in its own order on its own day.
//!
//! The formats themselves (file layout, key order, units, failure conventions, aggregate arithmetic) follow the
//! producing code of each tool; `vllm.rs`, `sglang.rs` and `aiperf.rs` each say which parts.
//!
//! Beside that sweep, [`deployment_files`] writes one model on two deployments, from a queueing model rather than
//! the V3 rows: a vLLM request-rate sweep (`rate_sweep.rs`) and InferenceX-named concurrency runs
//! (`inferencex.rs`); and, from simple models of their own, a small llm-d benchmark experiment (`llmd_report.rs`),
//! an inference-perf run (`inference_perf.rs`), an InferenceX aggregate (`inferencex_agg.rs`), GenAI-Perf CSV
//! exports (`perf_csv.rs`), an MLPerf LoadGen results tree (`mlperf.rs`) and console logs of a vLLM sweep and a
//! trtllm-bench run (`console_log.rs`).

mod aiperf;
mod console_log;
mod inference_perf;
mod inferencex;
mod inferencex_agg;
mod llmd_report;
mod mlperf;
mod perf_csv;
mod pyjson;
pub(crate) mod rate_sweep;
pub(crate) mod scale;
mod sglang;
mod vllm;

use crate::catalog::{Model, V3_MODELS, V3_WORKLOADS, Workload};
use crate::random::DemoRng;
use crate::recipe::Recipe;
use crate::rows::MetricsRow;
use crate::{DemoError, v3};
use cellscope_model::quantile_linear;
use pyjson::Obj;
use std::collections::BTreeMap;

/// The two V3 models of the sweep: the first two of the V3 plan, so that regenerating their V3 rows runs only the
/// first two fifths of the plan.
pub(crate) const MODELS: [&str; 2] = ["qwen2.5-7b", "llama3.1-8b"];
/// The two V3 workloads: SGLang leads vLLM on short_decode and trails it on long_prefill_8k in the V3 head-to-head,
/// so the engines differ visibly in both directions.
pub(crate) const WORKLOADS: [&str; 2] = ["short_decode", "long_prefill_8k"];
pub(crate) const NS: [u32; 5] = [1, 2, 4, 8, 16];
pub(crate) const REPS: [u32; 3] = [0, 1, 2];
pub(crate) const REQUESTS_PER_AGENT: u32 = 4;
/// Every server streams its output in chunks of this many tokens (SGLang's and vLLM's `--stream-interval`), which
/// keeps the per-request inter-token arrays short; the first token always arrives alone.
pub(crate) const STREAM_INTERVAL_TOKENS: u32 = 16;
/// The TGI sweep reuses the SGLang rows with every latency (and so every offset within a cell) 15 % longer and
/// token counts unchanged: a third engine with its own level but the same scaling shape.
pub(crate) const TGI_LATENCY_FACTOR: f64 = 1.15;

/// The mapping of the external trees to cell keys, written at the root of the mixed data root.
pub(crate) const CELLSCOPE_TOML: &str = include_str!("external/cellscope.toml");

/// The engines of the sweep and where their requests come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    Vllm,
    Sglang,
    Tgi,
}

impl Engine {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Engine::Vllm => "vllm",
            Engine::Sglang => "sglang",
            Engine::Tgi => "tgi",
        }
    }

    /// The V3 backend whose rows this engine's requests are made from.
    fn source_backend(self) -> &'static str {
        match self {
            Engine::Vllm => "vllm",
            Engine::Sglang | Engine::Tgi => "sglang",
        }
    }

    fn latency_factor(self) -> f64 {
        match self {
            Engine::Vllm | Engine::Sglang => 1.0,
            Engine::Tgi => TGI_LATENCY_FACTOR,
        }
    }
}

/// One request failed per engine, so that the audit has a failed cell of each format to show: (engine, model,
/// workload, N, rep, position of the request in dispatch order).
const FAILURES: [(Engine, &str, &str, u32, u32, usize); 3] = [
    (Engine::Vllm, "qwen2.5-7b", "long_prefill_8k", 8, 1, 13),
    (Engine::Sglang, "llama3.1-8b", "short_decode", 16, 2, 40),
    (Engine::Tgi, "qwen2.5-7b", "short_decode", 4, 1, 6),
];

/// What happened to a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Streamed to the end: the first token after `ttft_ns`, then one chunk after each of `itls_ns`.
    Ok { ttft_ns: i64, itls_ns: Vec<i64> },
    /// Failed `after_ns` after it was sent, before any token arrived.
    Failed { after_ns: i64 },
}

/// One request, with times in nanoseconds from the first request of its run (so a writer places it on its clock
/// by adding the run's start).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Request {
    pub start_ns: i64,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub outcome: Outcome,
}

impl Request {
    pub(crate) fn is_ok(&self) -> bool {
        matches!(self.outcome, Outcome::Ok { .. })
    }

    /// Time from sending to the last chunk (or to the failure).
    pub(crate) fn duration_ns(&self) -> i64 {
        match &self.outcome {
            Outcome::Ok { ttft_ns, itls_ns } => ttft_ns + itls_ns.iter().sum::<i64>(),
            Outcome::Failed { after_ns } => *after_ns,
        }
    }

    pub(crate) fn end_ns(&self) -> i64 {
        self.start_ns + self.duration_ns()
    }
}

/// One cell of one engine: its measured requests in dispatch order and the warm-up requests a tool sends before
/// them (one per agent, from the V3 rows the 4-per-agent selection leaves out).
#[derive(Clone, Debug)]
pub(crate) struct Cell {
    pub model: Model,
    pub workload: Workload,
    pub n: u32,
    pub rep: u32,
    pub requests: Vec<Request>,
    pub warmup: Vec<Request>,
}

impl Cell {
    /// From the first request sent to the last one finished.
    #[cfg(test)]
    pub(crate) fn span_ns(&self) -> i64 {
        let first = self.requests.iter().map(|r| r.start_ns).min().unwrap_or(0);
        let last = self.requests.iter().map(Request::end_ns).max().unwrap_or(0);
        last - first
    }

    /// Directory and file stem of a (model, workload) pair in every external tree.
    pub(crate) fn series_name(&self) -> String {
        format!("{}-{}", self.model.name, self.workload.name)
    }
}

/// Files as (path relative to the data root, contents).
pub(crate) type Files = Vec<(String, Vec<u8>)>;

/// What [`files`] produced, besides the files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub cells: usize,
    pub requests: usize,
}

/// Every file of the external sweep (paths relative to the data root, `/`-separated) and `cellscope.toml`, in a
/// fixed order. Regenerates the V3 rows of the two models for both backends, which is most of the work.
pub(crate) fn files(seed: u64, recipe: &Recipe) -> Result<(Files, Counts), DemoError> {
    let vllm_rows = v3::backend_rows(seed, recipe, "vllm", MODELS[1])?;
    let sglang_rows = v3::backend_rows(seed, recipe, "sglang", MODELS[1])?;
    let mut out = Vec::new();
    let mut counts = Counts::default();
    for engine in [Engine::Vllm, Engine::Sglang, Engine::Tgi] {
        let rows = match engine.source_backend() {
            "vllm" => &vllm_rows,
            _ => &sglang_rows,
        };
        let cells = cells(engine, seed, rows)?;
        counts.cells += cells.len();
        counts.requests += cells.iter().map(|cell| cell.requests.len()).sum::<usize>();
        let written = match engine {
            Engine::Vllm => vllm::files(&cells, seed),
            Engine::Sglang => sglang::files(&cells, seed),
            Engine::Tgi => aiperf::files(&cells, seed),
        };
        out.extend(written);
    }
    out.push((
        "cellscope.toml".to_string(),
        CELLSCOPE_TOML.as_bytes().to_vec(),
    ));
    Ok((out, counts))
}

/// The files of the two-deployment sweeps (the vLLM request-rate sweep, then the InferenceX runs), with their
/// cell and request counts.
pub(crate) fn deployment_files(seed: u64) -> (Files, Counts) {
    let (mut out, mut counts) = rate_sweep::files(seed);
    for (more, more_counts) in [
        inferencex::files(seed),
        llmd_report::files(),
        inference_perf::files(),
        inferencex_agg::files(),
        perf_csv::files(),
        mlperf::files(seed),
        console_log::files(seed),
    ] {
        out.extend(more);
        counts.cells += more_counts.cells;
        counts.requests += more_counts.requests;
    }
    (out, counts)
}

/// The V3 model called `name` (the mixed demo and the large benchmark sweep both name their models).
fn model(name: &str) -> Result<Model, DemoError> {
    V3_MODELS
        .iter()
        .copied()
        .find(|model| model.name == name)
        .ok_or_else(|| DemoError::Options(format!("no V3 model named {name}")))
}

fn workload(name: &str) -> Result<Workload, DemoError> {
    V3_WORKLOADS
        .iter()
        .copied()
        .find(|workload| workload.name == name)
        .ok_or_else(|| DemoError::Options(format!("no V3 workload named {name}")))
}

/// A V3 row's measured part in integer microseconds (its timestamps are stored rounded to microseconds).
struct Source {
    agent: u32,
    /// The request's position in its agent's sequence, from 0.
    turn: u32,
    submit_us: i64,
    wall_ms: f64,
    ttft_ms: f64,
    prompt_tokens: u32,
    completion_tokens: u32,
}

/// The engine's 60 cells in (model, workload, N, rep) order.
pub(crate) fn cells(
    engine: Engine,
    seed: u64,
    rows: &[MetricsRow],
) -> Result<Vec<Cell>, DemoError> {
    let mut by_cell: BTreeMap<(&str, &str, u32, u32), Vec<Source>> = BTreeMap::new();
    for row in rows {
        let cell = &row.cell;
        if cell.phase != "scaling"
            || !MODELS.contains(&cell.model.name)
            || !WORKLOADS.contains(&cell.workload.name)
            || !NS.contains(&cell.n_agents)
        {
            continue;
        }
        let Some(m) = row.measurement().filter(|m| m.status == "ok") else {
            continue;
        };
        // V3 request ids are 1-based and agent-major: agent a's k-th request is (a − 1) · 10 + k + 1.
        let turn = (m.request_id - 1) % v3::REQUESTS_PER_AGENT;
        by_cell
            .entry((cell.model.name, cell.workload.name, cell.n_agents, cell.rep))
            .or_default()
            .push(Source {
                agent: m.agent_id,
                turn,
                submit_us: (m.submit_time_s * 1e6).round() as i64,
                wall_ms: m.wall_ms,
                ttft_ms: m.ttft_ms.unwrap_or(0.0),
                prompt_tokens: m.prompt_tokens,
                completion_tokens: m.completion_tokens,
            });
    }
    let mut cells = Vec::with_capacity(MODELS.len() * WORKLOADS.len() * NS.len() * REPS.len());
    for model_name in MODELS {
        for workload_name in WORKLOADS {
            for n in NS {
                for rep in REPS {
                    let sources = by_cell
                        .get(&(model_name, workload_name, n, rep))
                        .ok_or_else(|| {
                            DemoError::Recipe(format!(
                                "no V3 rows for {model_name}/{workload_name}/n{n}/rep{rep}"
                            ))
                        })?;
                    cells.push(cell(
                        engine,
                        seed,
                        model(model_name)?,
                        workload(workload_name)?,
                        n,
                        rep,
                        sources,
                    )?);
                }
            }
        }
    }
    Ok(cells)
}

fn cell(
    engine: Engine,
    seed: u64,
    model: Model,
    workload: Workload,
    n: u32,
    rep: u32,
    sources: &[Source],
) -> Result<Cell, DemoError> {
    let mut rng = DemoRng::new(
        seed,
        &format!(
            "external/{}/{}/{}/n{n}/rep{rep}",
            engine.name(),
            model.name,
            workload.name
        ),
    );
    let factor = engine.latency_factor();
    let cell_start_us = sources.iter().map(|s| s.submit_us).min().unwrap_or(0);
    let mut agents: Vec<Agent> = Vec::with_capacity(n as usize);
    for agent in 1..=n {
        let mut turns: Vec<&Source> = sources.iter().filter(|s| s.agent == agent).collect();
        turns.sort_by_key(|s| s.turn);
        agents.push(Agent::new(turns, cell_start_us).ok_or_else(|| {
            DemoError::Recipe(format!(
                "{}/{}/n{n}/rep{rep}: agent {agent} has too few V3 requests",
                model.name, workload.name
            ))
        })?);
    }
    let choice = choose(&agents);
    let mut placed: Vec<(i64, &Source)> = Vec::with_capacity((n * REQUESTS_PER_AGENT) as usize);
    let mut warmup_sources: Vec<(i64, &Source)> = Vec::with_capacity(n as usize);
    for (agent, candidate) in agents.iter().zip(&choice) {
        let chosen = &agent.candidates[*candidate];
        let offsets = agent.offsets(&chosen.indices);
        for (index, offset_us) in chosen.indices.iter().zip(&offsets) {
            placed.push((*offset_us, agent.turns[*index]));
        }
        // The warm-up request of each agent is its first V3 request left out, sent when its measured ones start.
        if let Some(spare) = (0..agent.turns.len()).find(|index| !chosen.indices.contains(index)) {
            warmup_sources.push((agent.first_us, agent.turns[spare]));
        }
    }
    // Offsets within the cell are stretched with the latencies, so that an agent's next request still starts after
    // its previous one ended.
    let offset_ns = |offset_us: i64| (factor * offset_us as f64 * 1000.0).round() as i64;
    placed.sort_by_key(|(offset_us, s)| (*offset_us, s.agent, s.turn));
    let mut requests: Vec<Request> = placed
        .iter()
        .map(|(offset_us, s)| request(s, offset_ns(*offset_us), factor, &mut rng))
        .collect();
    warmup_sources.sort_by_key(|(offset_us, s)| (*offset_us, s.agent));
    let warmup: Vec<Request> = warmup_sources
        .iter()
        .map(|(offset_us, s)| request(s, offset_ns(*offset_us), factor, &mut rng))
        .collect();
    for (failing, model_name, workload_name, failing_n, failing_rep, index) in FAILURES {
        if failing == engine
            && model_name == model.name
            && workload_name == workload.name
            && failing_n == n
            && failing_rep == rep
            && let Some(request) = requests.get_mut(index)
        {
            // The failure comes part of the way into what would have been the request's time.
            let after_ns = (request.duration_ns() as f64 * rng.range(0.2, 0.5)).round() as i64;
            request.outcome = Outcome::Failed { after_ns };
        }
    }
    Ok(Cell {
        model,
        workload,
        n,
        rep,
        requests,
        warmup,
    })
}

/// One agent of a V3 cell: its requests in order and every way to keep [`REQUESTS_PER_AGENT`] of them.
struct Agent<'a> {
    turns: Vec<&'a Source>,
    /// When the agent sent its first request and when its last one ended, µs from the cell's start.
    first_us: i64,
    end_us: i64,
    /// The pause before each request: 0 for the agent's first, else from the previous request's end.
    pauses_us: Vec<i64>,
    /// The subsets worth trying, best time per output token first.
    candidates: Vec<Candidate>,
}

struct Candidate {
    indices: Vec<usize>,
    /// Back to back: the kept requests' wall times plus the pauses before all but the first.
    busy_us: i64,
    tokens: u32,
    walls_ms: Vec<f64>,
}

/// How many subsets per agent the joint search considers.
const CANDIDATES: usize = 12;

fn wall_us(source: &Source) -> i64 {
    (source.wall_ms * 1000.0).round() as i64
}

impl<'a> Agent<'a> {
    fn new(turns: Vec<&'a Source>, cell_start_us: i64) -> Option<Agent<'a>> {
        let keep = REQUESTS_PER_AGENT as usize;
        if turns.len() <= keep {
            return None;
        }
        let pauses_us: Vec<i64> = (0..turns.len())
            .map(|index| match index {
                0 => 0,
                _ => (turns[index].submit_us
                    - turns[index - 1].submit_us
                    - wall_us(turns[index - 1]))
                .max(0),
            })
            .collect();
        let candidate = |indices: Vec<usize>| {
            let busy_us = indices
                .iter()
                .enumerate()
                .map(|(position, index)| {
                    wall_us(turns[*index]) + if position == 0 { 0 } else { pauses_us[*index] }
                })
                .sum();
            let tokens = indices
                .iter()
                .map(|index| turns[*index].completion_tokens)
                .sum();
            let walls_ms = indices.iter().map(|index| turns[*index].wall_ms).collect();
            Candidate {
                indices,
                busy_us,
                tokens,
                walls_ms,
            }
        };
        let all = candidate((0..turns.len()).collect());
        let per_token = |c: &Candidate| c.busy_us as f64 / f64::from(c.tokens.max(1));
        let target = per_token(&all);
        // Every subset of `keep` requests in lexicographic order, ranked by how far its time per token is from the
        // agent's; the sort is stable, so equal subsets keep the lexicographic order.
        let mut candidates = Vec::new();
        let mut subset: Vec<usize> = (0..keep).collect();
        loop {
            candidates.push(candidate(subset.clone()));
            let Some(position) = (0..keep)
                .rev()
                .find(|p| subset[*p] < turns.len() - keep + p)
            else {
                break;
            };
            subset[position] += 1;
            for later in position + 1..keep {
                subset[later] = subset[later - 1] + 1;
            }
        }
        candidates.sort_by(|a, b| {
            (per_token(a) - target)
                .abs()
                .total_cmp(&(per_token(b) - target).abs())
        });
        candidates.truncate(CANDIDATES);
        let last = turns[turns.len() - 1];
        Some(Agent {
            first_us: turns[0].submit_us - cell_start_us,
            end_us: last.submit_us - cell_start_us + wall_us(last),
            turns,
            pauses_us,
            candidates,
        })
    }

    /// Start times (µs from the cell's start) of the kept requests sent back to back from the agent's first start,
    /// each after the pause that preceded it in V3.
    fn offsets(&self, indices: &[usize]) -> Vec<i64> {
        let mut clock_us = self.first_us;
        let mut offsets = Vec::with_capacity(indices.len());
        for (position, index) in indices.iter().enumerate() {
            if position > 0 {
                clock_us += self.pauses_us[*index];
            }
            offsets.push(clock_us);
            clock_us += wall_us(self.turns[*index]);
        }
        offsets
    }
}

/// Which candidate each agent keeps.
///
/// The V3 generator builds a cell's 10 requests per agent so that the whole cell hits its efficiency and tail
/// targets; any fixed 4 of them (say the first) drift from those targets by the luck of which latencies they hold,
/// enough to push a 2-agent cell's efficiency above 1. So the kept requests are chosen, per cell, to keep the
/// cell's aggregate throughput and p95 wall time close to those of all its V3 requests (which keeps efficiency and
/// p95 multiplier close too): each agent starts from its best subset by time per output token, then agents in turn
/// switch to whichever of their candidates improves the cell, for a few rounds. Wall times, first-token times and
/// token counts stay the V3 values; only start times are repacked.
fn choose(agents: &[Agent]) -> Vec<usize> {
    let p95 = |walls: &mut Vec<f64>| {
        walls.sort_by(f64::total_cmp);
        quantile_linear(walls, 0.95).unwrap_or(0.0)
    };
    let span_us = |busy: &mut dyn Iterator<Item = (i64, i64)>| {
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        for (start, length) in busy {
            first = first.min(start);
            last = last.max(start + length);
        }
        (last - first).max(1)
    };
    let full_tps = {
        let tokens: u32 = agents
            .iter()
            .flat_map(|a| &a.turns)
            .map(|s| s.completion_tokens)
            .sum();
        let span = span_us(&mut agents.iter().map(|a| (a.first_us, a.end_us - a.first_us)));
        f64::from(tokens) / span as f64
    };
    let full_p95 = p95(&mut agents
        .iter()
        .flat_map(|a| &a.turns)
        .map(|s| s.wall_ms)
        .collect());
    let miss = |choice: &[usize]| {
        let picked = agents
            .iter()
            .zip(choice)
            .map(|(a, c)| (a, &a.candidates[*c]));
        let tokens: u32 = picked.clone().map(|(_, c)| c.tokens).sum();
        let span = span_us(&mut picked.clone().map(|(a, c)| (a.first_us, c.busy_us)));
        let tps = f64::from(tokens) / span as f64;
        let p95_ms = p95(&mut picked
            .flat_map(|(_, c)| c.walls_ms.iter().copied())
            .collect());
        (tps / full_tps - 1.0).abs() + (p95_ms / full_p95 - 1.0).abs()
    };
    let mut choice = vec![0; agents.len()];
    let mut best = miss(&choice);
    for _round in 0..3 {
        for agent in 0..agents.len() {
            for candidate in 0..agents[agent].candidates.len() {
                let previous = choice[agent];
                choice[agent] = candidate;
                let value = miss(&choice);
                if value < best {
                    best = value;
                } else {
                    choice[agent] = previous;
                }
            }
        }
    }
    choice
}

/// One request from a V3 row: its wall time and time to first token (× `factor`), the rest of the wall time split
/// into chunks of [`STREAM_INTERVAL_TOKENS`] tokens with a little jitter, summing exactly to the wall time.
fn request(source: &Source, start_ns: i64, factor: f64, rng: &mut DemoRng) -> Request {
    let wall_ns = (factor * source.wall_ms * 1e6).round() as i64;
    let ttft_ns = ((factor * source.ttft_ms * 1e6).round() as i64).min(wall_ns);
    let decode_ns = wall_ns - ttft_ns;
    let after_first = source.completion_tokens.saturating_sub(1);
    let chunks = after_first.div_ceil(STREAM_INTERVAL_TOKENS);
    let weights: Vec<f64> = (0..chunks)
        .map(|chunk| {
            let tokens = (after_first - chunk * STREAM_INTERVAL_TOKENS).min(STREAM_INTERVAL_TOKENS);
            f64::from(tokens) * rng.range(0.85, 1.15)
        })
        .collect();
    let total: f64 = weights.iter().sum();
    let mut itls_ns = Vec::with_capacity(chunks as usize);
    let mut cumulative = 0.0;
    let mut previous = 0i64;
    for weight in &weights {
        cumulative += weight;
        // Boundaries are rounded, not the gaps, so the gaps add up to the decode time to the nanosecond.
        let boundary = (decode_ns as f64 * cumulative / total).round() as i64;
        itls_ns.push(boundary - previous);
        previous = boundary;
    }
    if let Some(last) = itls_ns.last_mut() {
        *last += decode_ns - previous;
    }
    Request {
        start_ns,
        prompt_tokens: source.prompt_tokens,
        completion_tokens: source.completion_tokens,
        outcome: Outcome::Ok { ttft_ns, itls_ns },
    }
}

/// numpy's statistics of a list as the tools call them (`np.mean(x or 0)`: an empty list counts as `[0]`).
pub(crate) struct Stats {
    sorted: Vec<f64>,
}

impl Stats {
    pub(crate) fn of(values: impl IntoIterator<Item = f64>) -> Stats {
        let mut sorted: Vec<f64> = values.into_iter().collect();
        if sorted.is_empty() {
            sorted.push(0.0);
        }
        sorted.sort_by(f64::total_cmp);
        Stats { sorted }
    }

    pub(crate) fn mean(&self) -> f64 {
        self.sum() / self.sorted.len() as f64
    }

    pub(crate) fn sum(&self) -> f64 {
        self.sorted.iter().sum()
    }

    /// `np.std` (population, ddof = 0).
    pub(crate) fn std(&self) -> f64 {
        let mean = self.mean();
        let squares: f64 = self.sorted.iter().map(|v| (v - mean) * (v - mean)).sum();
        (squares / self.sorted.len() as f64).sqrt()
    }

    /// `np.percentile(x, p)` with numpy's default linear interpolation, `p` in percent.
    pub(crate) fn percentile(&self, p: f64) -> f64 {
        quantile_linear(&self.sorted, p / 100.0).unwrap_or(0.0)
    }

    /// The tools' latency block of one metric, in ms from seconds: `mean_<name>_ms`, `median_…`, `std_…`, then
    /// `p<percentile>_…` for each of `percentiles`, in that order.
    fn put_ms(&self, result: &mut Obj, name: &str, percentiles: &[u32]) {
        result
            .put(&format!("mean_{name}_ms"), self.mean() * 1000.0)
            .put(&format!("median_{name}_ms"), self.percentile(50.0) * 1000.0)
            .put(&format!("std_{name}_ms"), self.std() * 1000.0);
        for percentile in percentiles {
            result.put(
                &format!("p{percentile}_{name}_ms"),
                self.percentile(f64::from(*percentile)) * 1000.0,
            );
        }
    }

    pub(crate) fn min(&self) -> f64 {
        self.sorted.first().copied().unwrap_or(0.0)
    }

    pub(crate) fn max(&self) -> f64 {
        self.sorted.last().copied().unwrap_or(0.0)
    }
}

/// Filler output text: one short word per generated token (random-dataset outputs are gibberish anyway).
pub(crate) fn generated_text(tokens: u32, rng: &mut DemoRng) -> String {
    const WORDS: [&str; 24] = [
        " the", " of", " and", " to", " in", " a", " is", " that", " for", " it", " as", " with",
        " on", " was", " by", " at", " be", " this", " from", " or", " an", " are", " which",
        " model",
    ];
    (0..tokens)
        .map(|_| WORDS[rng.int_range(0, WORDS.len() as u32 - 1) as usize])
        .collect()
}

/// A random lower-case hex string (AIPerf ids, UUIDs).
pub(crate) fn hex(rng: &mut DemoRng, digits: usize) -> String {
    (0..digits)
        .map(|_| char::from_digit(rng.int_range(0, 15), 16).unwrap_or('0'))
        .collect()
}

/// A version-4 UUID string from the demo's random stream.
pub(crate) fn uuid4(rng: &mut DemoRng) -> String {
    let variant = char::from_digit(8 + rng.int_range(0, 3), 16).unwrap_or('8');
    format!(
        "{}-{}-4{}-{variant}{}-{}",
        hex(rng, 8),
        hex(rng, 4),
        hex(rng, 3),
        hex(rng, 3),
        hex(rng, 12)
    )
}

/// Nanoseconds since the Unix epoch of a UTC wall-clock time.
pub(crate) fn epoch_ns(date: (i64, u32, u32), time: (u32, u32, u32)) -> i64 {
    let seconds = crate::calendar::epoch(
        crate::calendar::UTC,
        date,
        (time.0, time.1, f64::from(time.2)),
    );
    seconds as i64 * 1_000_000_000
}

/// Seconds (as a float) of an epoch in nanoseconds, for the calendar helpers.
pub(crate) fn seconds(ns: i64) -> f64 {
    ns as f64 / 1e9
}

/// A random duration in nanoseconds between `low_s` and `high_s` seconds.
pub(crate) fn pause_ns(rng: &mut DemoRng, low_s: f64, high_s: f64) -> i64 {
    (rng.range(low_s, high_s) * 1e9).round() as i64
}

#[cfg(test)]
mod tests;

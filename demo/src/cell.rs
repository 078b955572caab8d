//! Builds the requests of one cell so that its recomputed metrics land on a target: a span (which fixes
//! aggregate throughput, hence parallel efficiency) and a p95 wall latency (hence the p95 multiplier).
//!
//! Agents issue their requests back to back, each after a small pacing gap. Latencies are
//! `scale × work × exp(σ z)` with stratified normal scores `z`: `σ` shapes the tail, `scale` then follows from the
//! span exactly. `σ` is found by bisection on the first crossing of the p95 target.

use crate::pyrepr::round_to;
use crate::random::{DemoRng, normal_quantile};
use crate::rows::Measurement;
use cellscope_model::quantile_linear;

/// One planned request, agent-major (agent 1's requests first).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RequestPlan {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Service demand in decode-token equivalents (prompt × prefill cost + completion): longer answers take longer.
    pub work: f64,
    /// Share of the service demand spent before the first token (shapes ttft and prefill_ms).
    pub prefill_share: f64,
}

impl RequestPlan {
    /// A request whose prefill costs `prefill_cost` decode-token equivalents per prompt token.
    pub(crate) fn new(
        prompt_tokens: u32,
        completion_tokens: u32,
        prefill_cost: f64,
    ) -> RequestPlan {
        let prefill = f64::from(prompt_tokens) * prefill_cost;
        let work = prefill + f64::from(completion_tokens);
        RequestPlan {
            prompt_tokens,
            completion_tokens,
            work,
            prefill_share: prefill / work,
        }
    }
}

/// How agents pace their requests.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pacing {
    pub stagger_max_s: f64,
    pub gap_min_s: f64,
    pub gap_max_s: f64,
}

/// The tail target of a cell.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Spread {
    /// p95 / mean of the latencies (for baselines, whose p95 is free).
    P95OverMean(f64),
    /// An absolute p95 of wall_ms.
    P95WallMs(f64),
}

pub(crate) struct CellTarget {
    pub n_agents: u32,
    pub requests_per_agent: u32,
    pub span_s: f64,
    pub spread: Spread,
    pub pacing: Pacing,
    /// Fraction of the post-prefill wait that precedes the first token under contention (0 = none).
    pub queue_share: f64,
}

struct Layout {
    z: Vec<f64>,
    stagger: Vec<f64>,
    gaps: Vec<f64>,
}

/// Relative submit and complete times (seconds from the cell start) per request, agent-major.
pub(crate) struct Schedule {
    pub times: Vec<(f64, f64)>,
}

fn layout(target: &CellTarget, rng: &mut DemoRng) -> Layout {
    let agents = target.n_agents as usize;
    let per_agent = target.requests_per_agent as usize;
    let total = agents * per_agent;
    // Stratified scores give every cell the same well-behaved latency shape; the jitter keeps them from looking
    // machine-made. Dealing them out in snake order balances the agents, the way a fair dispatcher would.
    let mut scores: Vec<f64> = (0..total)
        .map(|i| normal_quantile((i as f64 + 0.5 + rng.range(-0.35, 0.35)) / total as f64))
        .collect();
    scores.sort_by(|a, b| b.total_cmp(a));
    let mut by_agent: Vec<Vec<f64>> = vec![Vec::with_capacity(per_agent); agents];
    for (position, score) in scores.into_iter().enumerate() {
        let round = position / agents;
        let slot = position % agents;
        let agent = if round.is_multiple_of(2) {
            slot
        } else {
            agents - 1 - slot
        };
        by_agent[agent].push(score);
    }
    for scores in &mut by_agent {
        rng.shuffle(scores);
    }
    let z = by_agent.into_iter().flatten().collect();
    let stagger = (0..agents)
        .map(|agent| {
            if agent == 0 {
                0.0
            } else {
                rng.range(0.0, target.pacing.stagger_max_s)
            }
        })
        .collect();
    let gaps = (0..total)
        .map(|index| {
            if index % per_agent == 0 {
                0.0
            } else {
                rng.range(target.pacing.gap_min_s, target.pacing.gap_max_s)
            }
        })
        .collect();
    Layout { z, stagger, gaps }
}

/// Every request's service demand to the power `beta` (1 = proportional to tokens): the part of its latency
/// shape that does not depend on the tail. Computed once per `beta`, since the solver tries ~150 tails per `beta`
/// and `powf` was the largest single cost of generating the demo data.
fn demand_powers(plans: &[RequestPlan], beta: f64) -> Vec<f64> {
    plans.iter().map(|plan| plan.work.powf(beta)).collect()
}

/// Latency shape of one request: its demand power (see [`demand_powers`]) times the tail factor.
fn shape(demand_power: f64, z: f64, sigma: f64) -> f64 {
    demand_power * (sigma * z).exp()
}

/// For a shape (`demand_powers` of some `beta`, `sigma`): the latency scale that makes the span exact, and the
/// resulting p95 and mean.
fn evaluate(
    target: &CellTarget,
    demand_powers: &[f64],
    layout: &Layout,
    sigma: f64,
) -> (f64, f64, f64) {
    let per_agent = target.requests_per_agent as usize;
    let values: Vec<f64> = demand_powers
        .iter()
        .zip(&layout.z)
        .map(|(demand_power, z)| shape(*demand_power, *z, sigma))
        .collect();
    let earliest = layout.stagger.iter().copied().fold(f64::INFINITY, f64::min);
    let mut scale = f64::INFINITY;
    for (agent, stagger) in layout.stagger.iter().enumerate() {
        let range = agent * per_agent..(agent + 1) * per_agent;
        let fixed: f64 = stagger + layout.gaps[range.clone()].iter().sum::<f64>();
        let work: f64 = values[range].iter().sum();
        scale = scale.min((target.span_s + earliest - fixed) / work);
    }
    let scale = scale.max(1e-9);
    let mut sorted: Vec<f64> = values.iter().map(|value| value * scale).collect();
    // Unstable is exact here: values that compare equal under `total_cmp` are the same bits, so every order of
    // them is the same sequence (and the mean below sums it in that one order).
    sorted.sort_unstable_by(f64::total_cmp);
    let p95 = quantile_linear(&sorted, 0.95).unwrap_or(0.0);
    let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
    (scale, p95, mean)
}

fn ratio(target: &CellTarget, demand_powers: &[f64], layout: &Layout, sigma: f64) -> f64 {
    let (_, p95, mean) = evaluate(target, demand_powers, layout, sigma);
    match target.spread {
        Spread::P95OverMean(q) => p95 / mean / q,
        Spread::P95WallMs(ms) => p95 * 1000.0 / ms,
    }
}

/// Solves the tail shape and lays the requests out in time.
pub(crate) fn schedule(target: &CellTarget, plans: &[RequestPlan], rng: &mut DemoRng) -> Schedule {
    let layout = layout(target, rng);
    // Token-count differences alone already spread latencies; when the target is tighter than that, damp the
    // token dependence (beta < 1) instead of widening the tail.
    let ratio_at = |beta: f64| ratio(target, &demand_powers(plans, beta), &layout, 0.0);
    let mut beta = 1.0;
    if ratio_at(1.0) > 1.0 && ratio_at(0.0) < 1.0 {
        let (mut low, mut high) = (0.0, 1.0);
        for _ in 0..50 {
            let middle = 0.5 * (low + high);
            if ratio_at(middle) < 1.0 {
                low = middle;
            } else {
                high = middle;
            }
        }
        beta = 0.5 * (low + high);
    }
    let powers = demand_powers(plans, beta);
    // Scan for the first crossing of ratio = 1, then bisect inside it; if there is none, take the closest shape.
    let grid: Vec<(f64, f64)> = (0..=90)
        .map(|step| f64::from(step) * 0.05)
        .map(|sigma| (sigma, ratio(target, &powers, &layout, sigma)))
        .collect();
    let starts_below = grid[0].1 <= 1.0;
    let crossing = grid
        .windows(2)
        .find(|pair| (pair[1].1 >= 1.0) == starts_below && (pair[0].1 >= 1.0) != starts_below);
    let sigma = match crossing {
        Some(pair) => {
            let (mut low, mut high) = (pair[0].0, pair[1].0);
            for _ in 0..60 {
                let middle = 0.5 * (low + high);
                if (ratio(target, &powers, &layout, middle) <= 1.0) == starts_below {
                    low = middle;
                } else {
                    high = middle;
                }
            }
            0.5 * (low + high)
        }
        None => grid
            .iter()
            .min_by(|a, b| (a.1 - 1.0).abs().total_cmp(&(b.1 - 1.0).abs()))
            .map(|(sigma, _)| *sigma)
            .unwrap_or(0.0),
    };
    let (scale, _, _) = evaluate(target, &powers, &layout, sigma);
    let per_agent = target.requests_per_agent as usize;
    let mut times = Vec::with_capacity(plans.len());
    for (agent, stagger) in layout.stagger.iter().enumerate() {
        let mut clock = *stagger;
        for k in 0..per_agent {
            let index = agent * per_agent + k;
            clock += layout.gaps[index];
            let latency = scale * shape(powers[index], layout.z[index], sigma);
            times.push((clock, clock + latency));
            clock += latency;
        }
    }
    Schedule { times }
}

/// Turns a schedule into request rows (completion order, as a dispatcher appends them), with epoch timestamps
/// rounded to microseconds and every derived timing consistent with them.
pub(crate) fn measurements(
    start_epoch_s: f64,
    target: &CellTarget,
    plans: &[RequestPlan],
    schedule: &Schedule,
    rng: &mut DemoRng,
) -> Vec<Measurement> {
    let per_agent = target.requests_per_agent as usize;
    let absolute: Vec<(f64, f64)> = schedule
        .times
        .iter()
        .map(|(submit, complete)| {
            (
                round_to(start_epoch_s + submit, 6),
                round_to(start_epoch_s + complete, 6),
            )
        })
        .collect();
    let mut by_submit: Vec<usize> = (0..absolute.len()).collect();
    by_submit.sort_by(|a, b| absolute[*a].0.total_cmp(&absolute[*b].0).then(a.cmp(b)));
    let mut sequence = vec![0u32; absolute.len()];
    for (rank, index) in by_submit.iter().enumerate() {
        sequence[*index] = rank as u32 + 1;
    }
    let mut rows: Vec<Measurement> = Vec::with_capacity(absolute.len());
    for (index, (submit, complete)) in absolute.iter().copied().enumerate() {
        let plan = plans[index];
        // Requests in flight when this one was submitted, itself included (the dispatcher counts its own).
        let in_flight = absolute
            .iter()
            .filter(|(other_submit, other_complete)| {
                *other_submit <= submit && submit < *other_complete
            })
            .count();
        let wall_ms = round_to((complete - submit) * 1000.0, 3);
        let prefill_ms =
            round_to(wall_ms * plan.prefill_share * rng.range(0.9, 1.1), 3).min(wall_ms);
        let waiting = (wall_ms - prefill_ms) * target.queue_share * rng.range(0.85, 1.0);
        let ttft_ms = round_to((prefill_ms + waiting).min(wall_ms), 3);
        let decode_ms = round_to(wall_ms - ttft_ms, 3);
        let completion = f64::from(plan.completion_tokens);
        rows.push(Measurement {
            agent_id: (index / per_agent) as u32 + 1,
            request_id: index as u32 + 1,
            request_sequence: sequence[index],
            in_flight_at_submit: in_flight as u32,
            wall_ms,
            prompt_tokens: plan.prompt_tokens,
            completion_tokens: plan.completion_tokens,
            prefill_ms: Some(prefill_ms),
            decode_ms: Some(decode_ms),
            effective_tps: completion / (wall_ms / 1000.0),
            gpu_tokens_per_s: (decode_ms > 0.0).then(|| completion / (decode_ms / 1000.0)),
            ttft_ms: Some(ttft_ms),
            submit_time_s: submit,
            complete_time_s: complete,
            status: "ok",
            error: None,
        });
    }
    rows.sort_by(|a, b| {
        a.complete_time_s
            .total_cmp(&b.complete_time_s)
            .then(a.request_id.cmp(&b.request_id))
    });
    rows
}

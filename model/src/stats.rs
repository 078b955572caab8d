//! Per-cell request statistics: quantiles, means and aggregate throughput over the `ok` rows of one cell.

use serde::{Deserialize, Serialize};

/// Linear interpolation between closest ranks, numpy's default (`method="linear"`, Hyndman–Fan type 7).
///
/// `sorted` must be ascending; `q` is in `[0, 1]`. Returns `None` for an empty slice.
pub fn quantile_linear(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let position = q.clamp(0.0, 1.0) * last as f64;
    let lower = position.floor() as usize;
    let upper = (lower + 1).min(last);
    let fraction = position - lower as f64;
    Some(lerp_like_numpy(sorted[lower], sorted[upper], fraction))
}

/// [`quantile_linear`] of `values` at each of the ascending levels `qs`, found by selection instead of a sort.
///
/// Only the two order statistics around each level are put in place (`values` is reordered, not sorted), which
/// costs a few linear passes instead of a sort of every value; the figures are bit-identical to
/// `quantile_linear` on the sorted values, because `total_cmp` is a total order, so each rank holds the same
/// value however it was found. Levels must be ascending; all are `None` for an empty slice.
pub fn quantiles_linear_by_selection<const N: usize>(
    values: &mut [f64],
    qs: [f64; N],
) -> [Option<f64>; N] {
    let Some(last) = values.len().checked_sub(1) else {
        return [None; N];
    };
    // Ranks below `settled` are all at most the value at `settled - 1`, which is in its sorted place; ranks asked
    // for later are never below it (the levels ascend).
    let mut settled = 0usize;
    let mut rank_value = |rank: usize, values: &mut [f64]| -> f64 {
        if rank + 1 > settled {
            let (_, value, _) =
                values[settled..].select_nth_unstable_by(rank - settled, f64::total_cmp);
            let value = *value;
            settled = rank + 1;
            value
        } else {
            values[rank]
        }
    };
    qs.map(|q| {
        let position = q.clamp(0.0, 1.0) * last as f64;
        let lower = position.floor() as usize;
        let upper = (lower + 1).min(last);
        let low = rank_value(lower, values);
        let high = rank_value(upper, values);
        Some(lerp_like_numpy(low, high, position - lower as f64))
    })
}

/// numpy's `_lerp`: it interpolates from the nearer end (from `high` when the fraction is at least one half);
/// repeating its exact expressions keeps results bit-identical with numpy and pandas.
fn lerp_like_numpy(low: f64, high: f64, fraction: f64) -> f64 {
    let difference = high - low;
    if fraction >= 0.5 {
        high - difference * (1.0 - fraction)
    } else {
        low + difference * fraction
    }
}

/// `Σ completion_tokens / (max complete_time_s − min submit_time_s)` in tokens per second.
///
/// `None` when the span is not positive (a single instantaneous request, or broken timestamps), because a
/// throughput over a zero span is not a number a user should see.
pub fn aggregate_tps(
    sum_completion_tokens: f64,
    min_submit_time_s: f64,
    max_complete_time_s: f64,
) -> Option<f64> {
    let span_s = max_complete_time_s - min_submit_time_s;
    (span_s > 0.0 && span_s.is_finite()).then(|| sum_completion_tokens / span_s)
}

/// The longest latency taken as a measurement, in ms (about 11.6 days): longer is a unit or clock fault, and
/// one such value would dominate every mean it enters.
pub const MAX_LATENCY_MS: f64 = 1e9;

/// Whether `value` is a latency in ms: finite, not negative, at most [`MAX_LATENCY_MS`].
#[inline]
pub fn is_latency_ms(value: f64) -> bool {
    (0.0..=MAX_LATENCY_MS).contains(&value)
}

/// Whether `value` is a token count: a whole number that fits the counters tokenizers use (u32). In range, a
/// value is whole exactly when it survives the round trip through u32 (which truncates).
#[inline]
pub fn is_token_count(value: f64) -> bool {
    (0.0..=f64::from(u32::MAX)).contains(&value) && f64::from(value as u32) == value
}

/// The fields of one `ok` request row that statistics use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RequestSample {
    /// End-to-end latency of the request, ms.
    pub wall_ms: f64,
    /// Time to first token, ms; `None` when the row has none.
    pub ttft_ms: Option<f64>,
    /// Tokens in the request's prompt.
    pub prompt_tokens: f64,
    /// Tokens the request generated.
    pub completion_tokens: f64,
    /// When the request was submitted, s.
    pub submit_time_s: f64,
    /// When the request completed, s, on the clock of `submit_time_s`.
    pub complete_time_s: f64,
}

/// The statistics of one cell's `ok` rows. Every field is `None` when the cell has no `ok` row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CellStats {
    /// How many `ok` rows the statistics are over.
    pub ok_rows: u32,
    /// Mean end-to-end latency, ms.
    pub mean_wall_ms: Option<f64>,
    /// Median end-to-end latency, ms.
    pub p50_wall_ms: Option<f64>,
    /// 95th percentile of end-to-end latency, ms.
    pub p95_wall_ms: Option<f64>,
    /// 99th percentile of end-to-end latency, ms.
    pub p99_wall_ms: Option<f64>,
    /// Median time to first token, ms, over the rows that have one.
    pub p50_ttft_ms: Option<f64>,
    /// 95th percentile of time to first token, ms, over the rows that have one.
    pub p95_ttft_ms: Option<f64>,
    /// Mean prompt tokens per request.
    pub mean_prompt_tokens: Option<f64>,
    /// Mean completion tokens per request.
    pub mean_completion_tokens: Option<f64>,
    /// Completion tokens per second from the first submit to the last completion; `None` when that span is not
    /// positive.
    pub aggregate_tps: Option<f64>,
    /// Mean time to first token, ms, over the rows that have one.
    #[serde(default)]
    pub mean_ttft_ms: Option<f64>,
    /// 99th percentile of time to first token, ms.
    #[serde(default)]
    pub p99_ttft_ms: Option<f64>,
    /// Mean time per output token, ms, over the requests with a TPOT ([`tpot_ms`]).
    #[serde(default)]
    pub mean_tpot_ms: Option<f64>,
    /// Median time per output token, ms.
    #[serde(default)]
    pub p50_tpot_ms: Option<f64>,
    /// 95th percentile of time per output token, ms.
    #[serde(default)]
    pub p95_tpot_ms: Option<f64>,
    /// 99th percentile of time per output token, ms.
    #[serde(default)]
    pub p99_tpot_ms: Option<f64>,
    /// Mean inter-token latency, ms, over the gaps of all requests pooled.
    #[serde(default)]
    pub mean_itl_ms: Option<f64>,
    /// Median inter-token latency, ms.
    #[serde(default)]
    pub p50_itl_ms: Option<f64>,
    /// 95th percentile of inter-token latency, ms.
    #[serde(default)]
    pub p95_itl_ms: Option<f64>,
    /// 99th percentile of inter-token latency, ms.
    #[serde(default)]
    pub p99_itl_ms: Option<f64>,
    /// Prompt and completion tokens per second over the span of [`CellStats::aggregate_tps`].
    #[serde(default)]
    pub total_tps: Option<f64>,
    /// Median over requests of 1000 / TPOT in ms: the tokens per second one user sees while it streams.
    #[serde(default)]
    pub p50_interactivity_tps: Option<f64>,
    /// Ok requests per second over the span of [`CellStats::aggregate_tps`].
    #[serde(default)]
    pub request_throughput_rps: Option<f64>,
    /// Ok requests within [`GOODPUT_TTFT_MS`] and [`GOODPUT_TPOT_MS`] per second, over the span of
    /// [`CellStats::aggregate_tps`]; `None` when a request has no TTFT to judge.
    #[serde(default)]
    pub goodput_rps: Option<f64>,
    /// [`CellStats::aggregate_tps`] divided by the deployment's accelerator count; `None` where the count is
    /// not known.
    #[serde(default)]
    pub output_tps_per_accelerator: Option<f64>,
}

/// The TTFT bound of goodput, ms: a request counts when its TTFT is at most this (and its TPOT within
/// [`GOODPUT_TPOT_MS`]), the bounds of the default SLO.
pub const GOODPUT_TTFT_MS: f64 = 2000.0;

/// The TPOT bound of goodput, ms. A request of one output token has no TPOT and meets it, as in vLLM's rule.
pub const GOODPUT_TPOT_MS: f64 = 100.0;

/// Whether a request meets the goodput bounds; `None` when it has no TTFT to judge.
pub fn within_goodput(ttft_ms: Option<f64>, tpot_ms: Option<f64>) -> Option<bool> {
    Some(ttft_ms? <= GOODPUT_TTFT_MS && tpot_ms.unwrap_or(0.0) <= GOODPUT_TPOT_MS)
}

/// A request's time per output token after the first, `(wall − ttft) / (completion tokens − 1)`, in ms: vLLM's
/// rule, defined only for a request with a TTFT and more than one output token.
pub fn tpot_ms(wall_ms: f64, ttft_ms: Option<f64>, completion_tokens: f64) -> Option<f64> {
    let ttft_ms = ttft_ms?;
    (completion_tokens > 1.0).then(|| (wall_ms - ttft_ms) / (completion_tokens - 1.0))
}

/// The mean of `values`, summed left to right from 0.0 (as numpy's and pandas' means do for these sizes);
/// `None` for no value.
fn mean_in_order(values: &[f64]) -> Option<f64> {
    (!values.is_empty())
        .then(|| values.iter().fold(0.0, |sum, value| sum + value) / values.len() as f64)
}

impl CellStats {
    /// The mean number of requests in flight by Little's law: request throughput × mean latency in seconds.
    pub fn mean_in_flight(&self) -> Option<f64> {
        Some(self.request_throughput_rps? * self.mean_wall_ms? / 1000.0)
    }
}

/// Collects the `ok` rows of one cell in file order and turns them into [`CellStats`].
///
/// Sums are accumulated in file order, so the means equal a left-to-right sum divided by the count, the
/// same as pandas and numpy compute them for these row counts.
#[derive(Clone, Debug, Default)]
pub struct CellAccumulator {
    /// In file order: the mean sums them left to right at the end, so that accumulators of consecutive parts of
    /// a file, appended in order, give the bits one pass gives.
    wall_ms: Vec<f64>,
    ttft_ms: Vec<f64>,
    /// Per-request TPOT of the rows that have one ([`tpot_ms`]).
    tpot_ms: Vec<f64>,
    /// The inter-token gaps of every row pooled, for the files that record them.
    itl_ms: Vec<f64>,
    /// Token counts are whole numbers below 2^32: their sums are exact (below 2^53) in any grouping.
    sum_prompt_tokens: f64,
    sum_completion_tokens: f64,
    /// Rows within the goodput bounds, and rows without a TTFT to judge them by.
    good_rows: u32,
    unjudged_rows: u32,
    min_submit_time_s: f64,
    max_complete_time_s: f64,
}

impl CellAccumulator {
    /// An accumulator holding no row.
    pub fn new() -> Self {
        CellAccumulator {
            min_submit_time_s: f64::INFINITY,
            max_complete_time_s: f64::NEG_INFINITY,
            ..CellAccumulator::default()
        }
    }

    /// Adds one `ok` row, after those already pushed.
    pub fn push(&mut self, sample: &RequestSample) {
        self.wall_ms.push(sample.wall_ms);
        if let Some(ttft_ms) = sample.ttft_ms {
            self.ttft_ms.push(ttft_ms);
        }
        let tpot = tpot_ms(sample.wall_ms, sample.ttft_ms, sample.completion_tokens);
        if let Some(tpot) = tpot {
            self.tpot_ms.push(tpot);
        }
        match within_goodput(sample.ttft_ms, tpot) {
            Some(true) => self.good_rows += 1,
            Some(false) => {}
            None => self.unjudged_rows += 1,
        }
        self.sum_prompt_tokens += sample.prompt_tokens;
        self.sum_completion_tokens += sample.completion_tokens;
        self.min_submit_time_s = self.min_submit_time_s.min(sample.submit_time_s);
        self.max_complete_time_s = self.max_complete_time_s.max(sample.complete_time_s);
    }

    /// Adds the inter-token gaps of the `ok` row last pushed, in ms, in the order the file lists them.
    pub fn push_gaps(&mut self, gaps_ms: impl IntoIterator<Item = f64>) {
        self.itl_ms.extend(gaps_ms);
    }

    /// Adds the samples of `later`, which came after this accumulator's in the file.
    pub fn append(&mut self, mut later: CellAccumulator) {
        self.wall_ms.append(&mut later.wall_ms);
        self.ttft_ms.append(&mut later.ttft_ms);
        self.tpot_ms.append(&mut later.tpot_ms);
        self.itl_ms.append(&mut later.itl_ms);
        self.sum_prompt_tokens += later.sum_prompt_tokens;
        self.sum_completion_tokens += later.sum_completion_tokens;
        self.good_rows += later.good_rows;
        self.unjudged_rows += later.unjudged_rows;
        self.min_submit_time_s = self.min_submit_time_s.min(later.min_submit_time_s);
        self.max_complete_time_s = self.max_complete_time_s.max(later.max_complete_time_s);
    }

    /// How many rows were pushed.
    pub fn len(&self) -> usize {
        self.wall_ms.len()
    }

    /// Whether no row was pushed.
    pub fn is_empty(&self) -> bool {
        self.wall_ms.is_empty()
    }

    /// The statistics of the rows pushed ([`CellStats::default`] when there is none).
    pub fn finish(mut self) -> CellStats {
        let count = self.wall_ms.len();
        if count == 0 {
            return CellStats::default();
        }
        // Means first: the selections below reorder the values.
        let mean_wall_ms = mean_in_order(&self.wall_ms);
        let [p50_wall_ms, p95_wall_ms, p99_wall_ms] =
            quantiles_linear_by_selection(&mut self.wall_ms, [0.50, 0.95, 0.99]);
        let mean_ttft_ms = mean_in_order(&self.ttft_ms);
        let [p50_ttft_ms, p95_ttft_ms, p99_ttft_ms] =
            quantiles_linear_by_selection(&mut self.ttft_ms, [0.50, 0.95, 0.99]);
        let count_f = count as f64;
        let mut stats = CellStats {
            ok_rows: u32::try_from(count).unwrap_or(u32::MAX),
            mean_wall_ms,
            p50_wall_ms,
            p95_wall_ms,
            p99_wall_ms,
            p50_ttft_ms,
            p95_ttft_ms,
            mean_prompt_tokens: Some(self.sum_prompt_tokens / count_f),
            mean_completion_tokens: Some(self.sum_completion_tokens / count_f),
            aggregate_tps: aggregate_tps(
                self.sum_completion_tokens,
                self.min_submit_time_s,
                self.max_complete_time_s,
            ),
            mean_ttft_ms,
            p99_ttft_ms,
            total_tps: aggregate_tps(
                self.sum_prompt_tokens + self.sum_completion_tokens,
                self.min_submit_time_s,
                self.max_complete_time_s,
            ),
            request_throughput_rps: aggregate_tps(
                count_f,
                self.min_submit_time_s,
                self.max_complete_time_s,
            ),
            goodput_rps: (self.unjudged_rows == 0)
                .then(|| {
                    aggregate_tps(
                        f64::from(self.good_rows),
                        self.min_submit_time_s,
                        self.max_complete_time_s,
                    )
                })
                .flatten(),
            ..CellStats::default()
        };
        self.finish_serving(&mut stats);
        stats
    }

    /// TPOT, ITL and interactivity: each over its own values, `None` where there is none.
    fn finish_serving(mut self, stats: &mut CellStats) {
        // 1000 / TPOT is tokens per second; a zero TPOT (all tokens in the first chunk) has no finite rate.
        let mut interactivity: Vec<f64> = self
            .tpot_ms
            .iter()
            .filter(|tpot| **tpot > 0.0)
            .map(|tpot| 1000.0 / tpot)
            .collect();
        stats.mean_tpot_ms = mean_in_order(&self.tpot_ms);
        [stats.p50_tpot_ms, stats.p95_tpot_ms, stats.p99_tpot_ms] =
            quantiles_linear_by_selection(&mut self.tpot_ms, [0.50, 0.95, 0.99]);
        stats.mean_itl_ms = mean_in_order(&self.itl_ms);
        [stats.p50_itl_ms, stats.p95_itl_ms, stats.p99_itl_ms] =
            quantiles_linear_by_selection(&mut self.itl_ms, [0.50, 0.95, 0.99]);
        [stats.p50_interactivity_tps] = quantiles_linear_by_selection(&mut interactivity, [0.50]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_numpy_linear() {
        // Reference values from numpy.percentile(x, q) with the default linear method.
        let x = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(quantile_linear(&x, 0.5), Some(3.0));
        assert_eq!(quantile_linear(&x, 0.95), Some(8.799999999999999));
        assert_eq!(quantile_linear(&x, 0.99), Some(9.76));
        assert_eq!(quantile_linear(&x, 0.0), Some(1.0));
        assert_eq!(quantile_linear(&x, 1.0), Some(10.0));
        assert_eq!(quantile_linear(&[7.5], 0.95), Some(7.5));
        assert_eq!(quantile_linear(&[], 0.5), None);
        // Twelve rows, the V1 N=1 cell size: p95 sits 45% of the way from the 11th to the 12th value.
        let twelve: Vec<f64> = (1..=12).map(f64::from).collect();
        assert!((quantile_linear(&twelve, 0.95).unwrap() - 11.45).abs() < 1e-12);
        // A case where the two lerp forms differ in the last bit: numpy prints 0.30000000000000004 here.
        assert_eq!(
            quantile_linear(&[0.1, 0.2, 0.4], 0.75),
            Some(0.30000000000000004)
        );
    }

    #[test]
    fn selection_gives_the_quantiles_of_the_sorted_values_bit_for_bit() {
        // Sizes from 1 to 300, values with many ties, signed zeros and a wide range; every level set the index
        // asks for, and edge levels. A 64-bit xorshift keeps the test free of a random-number dependency.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for size in 1..=300usize {
            let values: Vec<f64> = (0..size)
                .map(|_| match next() % 5 {
                    0 => (next() % 7) as f64,
                    1 => -0.0,
                    2 => 0.0,
                    3 => (next() % 1_000_000) as f64 / 7.0,
                    _ => -((next() % 1000) as f64) * 1e-3,
                })
                .collect();
            let mut sorted = values.clone();
            sorted.sort_unstable_by(f64::total_cmp);
            let levels = [0.0, 0.01, 0.5, 0.95, 0.99, 1.0];
            let mut scratch = values.clone();
            let selected = quantiles_linear_by_selection(&mut scratch, levels);
            for (level, figure) in levels.iter().zip(selected) {
                let expected = quantile_linear(&sorted, *level);
                assert_eq!(
                    figure.map(f64::to_bits),
                    expected.map(f64::to_bits),
                    "size {size}, level {level}"
                );
            }
        }
        assert_eq!(
            quantiles_linear_by_selection(&mut [], [0.5, 0.9]),
            [None, None]
        );
    }

    #[test]
    fn aggregate_tps_divides_tokens_by_the_cell_span() {
        assert_eq!(aggregate_tps(1200.0, 100.0, 130.0), Some(40.0));
        assert_eq!(aggregate_tps(1200.0, 100.0, 100.0), None);
        assert_eq!(
            aggregate_tps(1200.0, f64::INFINITY, f64::NEG_INFINITY),
            None
        );
    }

    #[test]
    fn accumulator_computes_every_statistic() {
        let mut acc = CellAccumulator::new();
        // Two agents, two requests each: spans 10.0..14.0 s, 512 tokens each.
        let rows = [
            (1000.0, Some(100.0), 10.0, 11.0),
            (3000.0, Some(300.0), 11.0, 14.0),
            (2000.0, None, 10.0, 12.0),
            (1500.0, Some(150.0), 12.0, 13.5),
        ];
        for (wall_ms, ttft_ms, submit, complete) in rows {
            acc.push(&RequestSample {
                wall_ms,
                ttft_ms,
                prompt_tokens: 1024.0,
                completion_tokens: 512.0,
                submit_time_s: submit,
                complete_time_s: complete,
            });
        }
        let stats = acc.finish();
        assert_eq!(stats.ok_rows, 4);
        assert_eq!(stats.mean_wall_ms, Some(1875.0));
        assert_eq!(stats.p50_wall_ms, Some(1750.0));
        // numpy.percentile([1000, 1500, 2000, 3000], 95) prints 2849.9999999999995.
        assert_eq!(stats.p95_wall_ms, Some(2849.9999999999995));
        assert_eq!(stats.p50_ttft_ms, Some(150.0));
        assert_eq!(stats.aggregate_tps, Some(2048.0 / 4.0));
        assert_eq!(stats.mean_completion_tokens, Some(512.0));
    }

    #[test]
    fn goodput_counts_requests_within_both_bounds_as_vllm_does() {
        // (wall, ttft, completion tokens): TPOT 90 ms (good); TTFT 2500 ms (too slow); TPOT 200 ms (too slow);
        // one token with no TPOT (good, as vLLM counts it); TTFT and TPOT exactly at their bounds (good).
        let rows = [
            (1000.0, 100.0, 11.0),
            (3000.0, 2500.0, 11.0),
            (2100.0, 100.0, 11.0),
            (500.0, 500.0, 1.0),
            (3000.0, 2000.0, 11.0),
        ];
        let mut acc = CellAccumulator::new();
        for (index, (wall_ms, ttft_ms, completion_tokens)) in rows.into_iter().enumerate() {
            acc.push(&RequestSample {
                wall_ms,
                ttft_ms: Some(ttft_ms),
                prompt_tokens: 1.0,
                completion_tokens,
                submit_time_s: index as f64,
                complete_time_s: index as f64 + 4.0,
            });
        }
        // Three good requests over 0..8 s.
        assert_eq!(acc.clone().finish().goodput_rps, Some(3.0 / 8.0));
        acc.push(&RequestSample {
            wall_ms: 100.0,
            ttft_ms: None,
            prompt_tokens: 1.0,
            completion_tokens: 2.0,
            submit_time_s: 0.0,
            complete_time_s: 1.0,
        });
        assert_eq!(acc.finish().goodput_rps, None, "a request without TTFT");
    }

    #[test]
    fn serving_statistics_follow_vllms_rules() {
        let mut acc = CellAccumulator::new();
        // (wall, ttft, completion tokens, gaps): TPOTs 10, 20, 5 and 40 ms; a one-token and a TTFT-less request
        // have none; the gaps of every request are pooled.
        let rows: [(f64, Option<f64>, f64, &[f64]); 6] = [
            (1090.0, Some(100.0), 100.0, &[9.0, 11.0]),
            (2200.0, Some(200.0), 101.0, &[20.0]),
            (300.0, Some(300.0), 1.0, &[]),
            (550.0, Some(50.0), 101.0, &[5.0, 5.0, 6.0]),
            (900.0, None, 50.0, &[]),
            (840.0, Some(40.0), 21.0, &[40.0]),
        ];
        for (index, (wall_ms, ttft_ms, completion_tokens, gaps)) in rows.into_iter().enumerate() {
            acc.push(&RequestSample {
                wall_ms,
                ttft_ms,
                prompt_tokens: 10.0,
                completion_tokens,
                submit_time_s: index as f64,
                complete_time_s: index as f64 + 4.0,
            });
            acc.push_gaps(gaps.iter().copied());
        }
        let stats = acc.finish();
        assert_eq!(stats.mean_tpot_ms, Some(75.0 / 4.0));
        // numpy.percentile([5, 10, 20, 40], [50, 95, 99]) -> 15, 37, 39.4.
        assert_eq!(stats.p50_tpot_ms, Some(15.0));
        assert!((stats.p95_tpot_ms.unwrap() - 37.0).abs() < 1e-12);
        assert!((stats.p99_tpot_ms.unwrap() - 39.4).abs() < 1e-12);
        // Gaps [9, 11, 20, 5, 5, 6, 40]: mean 96 / 7, median 9.
        assert_eq!(stats.mean_itl_ms, Some(96.0 / 7.0));
        assert_eq!(stats.p50_itl_ms, Some(9.0));
        // 1000 / [10, 20, 5, 40] = [100, 50, 200, 25]: median 75.
        assert_eq!(stats.p50_interactivity_tps, Some(75.0));
        // TTFTs [100, 200, 300, 50, 40]: mean 138, p99 = 296 (numpy).
        assert_eq!(stats.mean_ttft_ms, Some(138.0));
        assert!((stats.p99_ttft_ms.unwrap() - 296.0).abs() < 1e-9);
        // (6 × 10 prompt + 374 completion tokens) over 0..9 s.
        assert_eq!(stats.total_tps, Some(434.0 / 9.0));
        assert_eq!(stats.aggregate_tps, Some(374.0 / 9.0));
        // 6 ok requests over 0..9 s; by Little's law × mean latency 5880 / 6 ms.
        assert_eq!(stats.request_throughput_rps, Some(6.0 / 9.0));
        assert!((stats.mean_in_flight().unwrap() - 6.0 / 9.0 * 0.98).abs() < 1e-12);
    }

    #[test]
    fn a_cell_without_gaps_or_tpots_has_none() {
        let mut acc = CellAccumulator::new();
        acc.push(&RequestSample {
            wall_ms: 100.0,
            ttft_ms: Some(100.0),
            prompt_tokens: 1.0,
            completion_tokens: 1.0,
            submit_time_s: 0.0,
            complete_time_s: 0.1,
        });
        let stats = acc.finish();
        assert_eq!((stats.mean_tpot_ms, stats.p99_tpot_ms), (None, None));
        assert_eq!((stats.mean_itl_ms, stats.p50_itl_ms), (None, None));
        assert_eq!(stats.p50_interactivity_tps, None);
        assert_eq!(tpot_ms(1090.0, Some(100.0), 100.0), Some(10.0));
        assert_eq!(tpot_ms(1090.0, None, 100.0), None);
    }

    #[test]
    fn appending_parts_equals_one_pass() {
        let sample = |index: u32| RequestSample {
            wall_ms: f64::from(index * 37 % 11) * 100.0 + 50.0,
            ttft_ms: Some(f64::from(index % 5) * 10.0),
            prompt_tokens: 7.0,
            completion_tokens: f64::from(index % 4),
            submit_time_s: f64::from(index),
            complete_time_s: f64::from(index) + 2.5,
        };
        let mut whole = CellAccumulator::new();
        let (mut first, mut second) = (CellAccumulator::new(), CellAccumulator::new());
        for index in 0..40 {
            let gaps = [f64::from(index) * 0.5, 3.0];
            whole.push(&sample(index));
            whole.push_gaps(gaps);
            let part = if index < 17 { &mut first } else { &mut second };
            part.push(&sample(index));
            part.push_gaps(gaps);
        }
        first.append(second);
        assert_eq!(first.finish(), whole.finish());
    }

    #[test]
    fn an_empty_cell_has_no_statistics() {
        assert_eq!(CellAccumulator::new().finish(), CellStats::default());
    }
}

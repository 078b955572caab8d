//! The statistic columns of the cells table, in one table of names, labels, units and directions: the Arrow
//! schema, the exports, the metric pickers and the readers of other tools' figures all name a statistic through
//! [`Stat`], so each name is written once (their definitions: docs/definitions.md).
//!
//! It also holds [`FigureOrigin`], the per-cell marks saying which of these columns another tool reported or a
//! reconstructed value derived, since those marks are lists of these columns.

use crate::stats::CellStats;
use serde::{Deserialize, Serialize};

/// What a statistic's or a metric's numbers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A ratio on [0, 1] (efficiency, ok rate).
    Ratio,
    /// A multiple of the N = 1 value.
    Multiple,
    /// A concurrency level.
    Concurrency,
    /// A duration in milliseconds.
    Milliseconds,
    /// A throughput in tokens per second.
    TokensPerSecond,
    /// A count of tokens.
    Tokens,
    /// A throughput one request sees, in tokens per second per user (interactivity).
    TokensPerSecondPerUser,
    /// Requests per second.
    RequestsPerSecond,
    /// A load of either kind (a concurrency N or an offered rate), as a plain number.
    Load,
}

/// Which way a value is better: the direction of frontiers, verdicts and colour scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    /// A larger value is the better one (throughput, efficiency).
    Higher,
    /// A smaller value is the better one (latencies and multipliers).
    Lower,
}

/// A statistic column of the cells table: the request statistics of a cell, the two scaling metrics computed
/// against its series' N = 1 cell, then the serving statistics (after them, so the export contract's leading
/// columns keep their order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stat {
    /// Mean wall latency of the ok requests.
    MeanWallMs,
    /// Median wall latency.
    P50WallMs,
    /// 95th percentile of wall latency.
    P95WallMs,
    /// 99th percentile of wall latency.
    P99WallMs,
    /// Median time to first token.
    P50TtftMs,
    /// 95th percentile of time to first token.
    P95TtftMs,
    /// Mean prompt tokens per request.
    MeanPromptTokens,
    /// Mean completion tokens per request.
    MeanCompletionTokens,
    /// Σ completion tokens / (max complete time − min submit time).
    AggregateTps,
    /// Parallel efficiency against the series' N = 1 cell.
    Efficiency,
    /// p95 wall latency as a multiple of the series' N = 1 value.
    P95Multiplier,
    /// Mean time to first token.
    MeanTtftMs,
    /// 99th percentile of time to first token.
    P99TtftMs,
    /// Mean time per output token after the first, over requests.
    MeanTpotMs,
    /// Median time per output token.
    P50TpotMs,
    /// 95th percentile of time per output token.
    P95TpotMs,
    /// 99th percentile of time per output token.
    P99TpotMs,
    /// Mean inter-token latency over the pooled gaps of all requests.
    MeanItlMs,
    /// Median inter-token latency.
    P50ItlMs,
    /// 95th percentile of inter-token latency.
    P95ItlMs,
    /// 99th percentile of inter-token latency.
    P99ItlMs,
    /// Σ (prompt + completion tokens) / the span of aggregate throughput.
    TotalTps,
    /// Median over requests of 1000 / TPOT ms: the tokens per second one user sees.
    P50InteractivityTps,
    /// Ok requests / the span of aggregate throughput: the request throughput achieved.
    RequestThroughputRps,
    /// Ok requests within the goodput bounds ([`crate::stats::GOODPUT_TTFT_MS`], [`crate::stats::GOODPUT_TPOT_MS`])
    /// per second, over the span of aggregate throughput.
    GoodputRps,
    /// Aggregate (output) throughput divided by the deployment's accelerator count
    /// ([`crate::config::Config::accelerator_count`]).
    OutputTpsPerAccelerator,
}

/// One row of [`TABLE`].
struct Row {
    name: &'static str,
    label: &'static str,
    unit: Unit,
    better: Better,
}

/// Every statistic's name (its cells-table column and its `metric=` value), label, unit and direction, in
/// [`Stat`] order.
const TABLE: [Row; 26] = [
    row(
        "mean_wall_ms",
        "mean latency",
        Unit::Milliseconds,
        Better::Lower,
    ),
    row(
        "p50_wall_ms",
        "p50 latency",
        Unit::Milliseconds,
        Better::Lower,
    ),
    row(
        "p95_wall_ms",
        "p95 latency",
        Unit::Milliseconds,
        Better::Lower,
    ),
    row(
        "p99_wall_ms",
        "p99 latency",
        Unit::Milliseconds,
        Better::Lower,
    ),
    row(
        "p50_ttft_ms",
        "p50 time to first token",
        Unit::Milliseconds,
        Better::Lower,
    ),
    row(
        "p95_ttft_ms",
        "p95 time to first token",
        Unit::Milliseconds,
        Better::Lower,
    ),
    row(
        "mean_prompt_tokens",
        "mean prompt tokens",
        Unit::Tokens,
        Better::Higher,
    ),
    row(
        "mean_completion_tokens",
        "mean completion tokens",
        Unit::Tokens,
        Better::Higher,
    ),
    row(
        "aggregate_tps",
        "output tok/s",
        Unit::TokensPerSecond,
        Better::Higher,
    ),
    row(
        "efficiency",
        "parallel efficiency",
        Unit::Ratio,
        Better::Higher,
    ),
    row(
        "p95_multiplier",
        "p95 latency multiplier",
        Unit::Multiple,
        Better::Lower,
    ),
    row(
        "mean_ttft_ms",
        "mean time to first token",
        Unit::Milliseconds,
        Better::Lower,
    ),
    row(
        "p99_ttft_ms",
        "p99 time to first token",
        Unit::Milliseconds,
        Better::Lower,
    ),
    row(
        "mean_tpot_ms",
        "mean TPOT",
        Unit::Milliseconds,
        Better::Lower,
    ),
    row("p50_tpot_ms", "p50 TPOT", Unit::Milliseconds, Better::Lower),
    row("p95_tpot_ms", "p95 TPOT", Unit::Milliseconds, Better::Lower),
    row("p99_tpot_ms", "p99 TPOT", Unit::Milliseconds, Better::Lower),
    row("mean_itl_ms", "mean ITL", Unit::Milliseconds, Better::Lower),
    row("p50_itl_ms", "p50 ITL", Unit::Milliseconds, Better::Lower),
    row("p95_itl_ms", "p95 ITL", Unit::Milliseconds, Better::Lower),
    row("p99_itl_ms", "p99 ITL", Unit::Milliseconds, Better::Lower),
    row(
        "total_tps",
        "total tok/s",
        Unit::TokensPerSecond,
        Better::Higher,
    ),
    row(
        "p50_interactivity_tps",
        "p50 interactivity (tok/s per user)",
        Unit::TokensPerSecondPerUser,
        Better::Higher,
    ),
    row(
        "request_throughput_rps",
        "request throughput",
        Unit::RequestsPerSecond,
        Better::Higher,
    ),
    row(
        "goodput_rps",
        "goodput (TTFT ≤ 2 s, TPOT ≤ 100 ms)",
        Unit::RequestsPerSecond,
        Better::Higher,
    ),
    row(
        "output_tps_per_accelerator",
        "output tok/s per accelerator",
        Unit::TokensPerSecond,
        Better::Higher,
    ),
];

const fn row(name: &'static str, label: &'static str, unit: Unit, better: Better) -> Row {
    Row {
        name,
        label,
        unit,
        better,
    }
}

/// The names of some statistics, in their order (for constants such as [`crate::origin::STAT_COLUMNS`]).
pub const fn names<const N: usize>(stats: [Stat; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut position = 0;
    while position < N {
        out[position] = stats[position].name();
        position += 1;
    }
    out
}

/// Some statistics without the two scaling metrics, in their order (`N` must be how many remain).
const fn without_scaling<const N: usize, const M: usize>(stats: [Stat; M]) -> [Stat; N] {
    let mut out = [Stat::MeanWallMs; N];
    let (mut from, mut to) = (0, 0);
    while from < M {
        if !matches!(stats[from], Stat::Efficiency | Stat::P95Multiplier) {
            out[to] = stats[from];
            to += 1;
        }
        from += 1;
    }
    assert!(
        to == N,
        "N is the count of the statistics that are not scaling metrics"
    );
    out
}

/// The statistics after the two scaling metrics in `stats` (the serving statistics, appended to the table).
const fn after_scaling<const N: usize, const M: usize>(stats: [Stat; M]) -> [Stat; N] {
    let mut out = [Stat::MeanWallMs; N];
    let mut from = 0;
    while !matches!(stats[from], Stat::P95Multiplier) {
        from += 1;
    }
    assert!(
        M - from - 1 == N,
        "N is the count of the statistics after the scaling metrics"
    );
    let mut to = 0;
    while to < N {
        out[to] = stats[from + 1 + to];
        to += 1;
    }
    out
}

impl Stat {
    /// Every statistic column, in cells-table order.
    pub const ALL: [Stat; 26] = [
        Stat::MeanWallMs,
        Stat::P50WallMs,
        Stat::P95WallMs,
        Stat::P99WallMs,
        Stat::P50TtftMs,
        Stat::P95TtftMs,
        Stat::MeanPromptTokens,
        Stat::MeanCompletionTokens,
        Stat::AggregateTps,
        Stat::Efficiency,
        Stat::P95Multiplier,
        Stat::MeanTtftMs,
        Stat::P99TtftMs,
        Stat::MeanTpotMs,
        Stat::P50TpotMs,
        Stat::P95TpotMs,
        Stat::P99TpotMs,
        Stat::MeanItlMs,
        Stat::P50ItlMs,
        Stat::P95ItlMs,
        Stat::P99ItlMs,
        Stat::TotalTps,
        Stat::P50InteractivityTps,
        Stat::RequestThroughputRps,
        Stat::GoodputRps,
        Stat::OutputTpsPerAccelerator,
    ];

    /// The statistics computed from a cell's own request rows (or reported by another tool in their place):
    /// every one but the two scaling metrics, in cells-table order.
    pub const REQUEST: [Stat; 24] = without_scaling(Stat::ALL);

    /// The serving statistics: TTFT mean and p99, TPOT, ITL, total throughput and interactivity. Tables written
    /// before they existed read them as absent.
    pub const SERVING: [Stat; 15] = after_scaling(Stat::ALL);

    const fn row(self) -> &'static Row {
        &TABLE[self as usize]
    }

    /// The cells-table column, as exports, `metric=` and the readers of other tools' figures write it.
    pub const fn name(self) -> &'static str {
        self.row().name
    }

    /// How a picker or an axis says it.
    pub const fn label(self) -> &'static str {
        self.row().label
    }

    /// What its numbers are.
    pub const fn unit(self) -> Unit {
        self.row().unit
    }

    /// Which way is better.
    pub const fn better(self) -> Better {
        self.row().better
    }

    /// The statistic a column name names.
    pub fn parse(name: &str) -> Option<Stat> {
        Stat::ALL.into_iter().find(|stat| stat.name() == name)
    }

    /// The request statistic a value is computed from: efficiency from aggregate throughput, the p95 multiplier
    /// from p95 wall latency, every other statistic from itself. A mark on the source carries to the value.
    pub fn source(self) -> Stat {
        match self {
            Stat::Efficiency => Stat::AggregateTps,
            Stat::P95Multiplier => Stat::P95WallMs,
            Stat::OutputTpsPerAccelerator => Stat::AggregateTps,
            other => other,
        }
    }
}

/// Implements [`CellStats::get`] and [`CellStats::get_mut`] from one list of each request statistic and its field.
macro_rules! stat_fields {
    ($($stat:ident => $field:ident,)*) => {
        impl CellStats {
            /// The value of a request statistic (`None` for the scaling metrics, which are on the summary).
            pub fn get(&self, stat: Stat) -> Option<f64> {
                match stat {
                    $(Stat::$stat => self.$field,)*
                    Stat::Efficiency | Stat::P95Multiplier => None,
                }
            }

            /// The slot of a request statistic, to fill it from a reported figure (`None` for the scaling metrics).
            pub fn get_mut(&mut self, stat: Stat) -> Option<&mut Option<f64>> {
                Some(match stat {
                    $(Stat::$stat => &mut self.$field,)*
                    Stat::Efficiency | Stat::P95Multiplier => return None,
                })
            }
        }
    };
}

stat_fields! {
    MeanWallMs => mean_wall_ms,
    P50WallMs => p50_wall_ms,
    P95WallMs => p95_wall_ms,
    P99WallMs => p99_wall_ms,
    P50TtftMs => p50_ttft_ms,
    P95TtftMs => p95_ttft_ms,
    MeanPromptTokens => mean_prompt_tokens,
    MeanCompletionTokens => mean_completion_tokens,
    AggregateTps => aggregate_tps,
    MeanTtftMs => mean_ttft_ms,
    P99TtftMs => p99_ttft_ms,
    MeanTpotMs => mean_tpot_ms,
    P50TpotMs => p50_tpot_ms,
    P95TpotMs => p95_tpot_ms,
    P99TpotMs => p99_tpot_ms,
    MeanItlMs => mean_itl_ms,
    P50ItlMs => p50_itl_ms,
    P95ItlMs => p95_itl_ms,
    P99ItlMs => p99_itl_ms,
    TotalTps => total_tps,
    P50InteractivityTps => p50_interactivity_tps,
    RequestThroughputRps => request_throughput_rps,
    GoodputRps => goodput_rps,
    OutputTpsPerAccelerator => output_tps_per_accelerator,
}

impl CellStats {
    /// The statistic a cells-table column names (`None` for a name that is not a request statistic).
    pub fn column(&self, column: &str) -> Option<f64> {
        self.get(Stat::parse(column)?)
    }

    /// The slot of a statistic by its cells-table column, to fill it from a reported figure.
    pub fn column_mut(&mut self, column: &str) -> Option<&mut Option<f64>> {
        self.get_mut(Stat::parse(column)?)
    }
}

/// The per-cell marks that travel in the cells table (three text columns, `;`-separated names).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FigureOrigin {
    /// Cells-table columns whose value is the tool's reported figure (no request rows to recompute it from).
    #[serde(default)]
    pub reported: Vec<String>,
    /// Cells-table columns computed from a reconstructed per-request value (e.g. wall latency rebuilt as
    /// TTFT + Σ inter-token latencies when the file has no end-to-end latency).
    #[serde(default)]
    pub derived: Vec<String>,
    /// Key dimensions whose value was inferred (a default rule or `cellscope.toml`) rather than read.
    #[serde(default)]
    pub inferred: Vec<String>,
}

impl FigureOrigin {
    /// Whether nothing is marked: every figure recomputed and every key part read.
    pub fn is_empty(&self) -> bool {
        self.reported.is_empty() && self.derived.is_empty() && self.inferred.is_empty()
    }

    /// Whether the value shown for a cells-table `column` is the tool's figure. Scaling metrics are reported
    /// when the figure they are computed from is.
    pub fn is_reported(&self, column: &str) -> bool {
        marked(&self.reported, column)
    }

    /// Whether the value shown for `column` rests on a reconstructed per-request value.
    pub fn is_derived(&self, column: &str) -> bool {
        marked(&self.derived, column)
    }

    /// `a;b;c` for the cells table.
    pub fn join(names: &[String]) -> String {
        names.join(";")
    }

    /// The inverse of [`FigureOrigin::join`].
    pub fn split(text: &str) -> Vec<String> {
        if text.is_empty() {
            Vec::new()
        } else {
            text.split(';').map(str::to_string).collect()
        }
    }
}

/// Whether `names` marks `column` or the statistic it is computed from.
fn marked(names: &[String], column: &str) -> bool {
    let source = Stat::parse(column).map_or(column, |stat| stat.source().name());
    names.iter().any(|name| name == column || name == source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_read_back() {
        for stat in Stat::ALL {
            assert_eq!(Stat::parse(stat.name()), Some(stat));
        }
        let mut seen: Vec<&str> = Stat::ALL.iter().map(|stat| stat.name()).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), Stat::ALL.len());
        assert_eq!(names(Stat::REQUEST).len(), 24);
        assert_eq!(Stat::Efficiency.source(), Stat::AggregateTps);
    }

    #[test]
    fn request_statistics_have_slots_and_scaling_metrics_do_not() {
        let mut stats = CellStats::default();
        for stat in Stat::REQUEST {
            *stats.get_mut(stat).unwrap() = Some(1.0);
            assert_eq!(stats.get(stat), Some(1.0));
        }
        assert!(stats.get_mut(Stat::Efficiency).is_none());
        assert_eq!(stats.column("request_goodput"), None);
    }
}

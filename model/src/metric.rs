//! What the matrix colours by and the curves plot: each metric's value for a cell, its unit, which way is
//! better, and how its numbers are written (times in ms, s or min as fits), so every view and export says a
//! number the same way.

use crate::load::LoadKind;
use crate::scaling::{Criterion, RATE_SATURATION};
pub use crate::stat::Unit;
use crate::stat::{Better, Stat};
use crate::summary::CellSummary;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A figure the views colour by, plot and compare: a statistic column of the cells ([`Stat`]), or one read over a
/// whole curve (breakdown N, SLO capacity) or its rows (the ok rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    /// A statistic column of the cells table: one value per cell, so one per curve point.
    Stat(Stat),
    /// Breakdown N under the criterion (matrix only; curves mark it on the curve of any metric).
    Breakdown,
    /// The highest load at which the view's SLO holds (matrix only), interpolated between measured loads.
    SloCapacity,
    /// Σ ok rows / Σ expected rows (matrix only).
    OkRate,
}

impl Default for Metric {
    fn default() -> Metric {
        Metric::DEFAULT
    }
}

impl From<Stat> for Metric {
    fn from(stat: Stat) -> Metric {
        Metric::Stat(stat)
    }
}

impl Metric {
    /// The metric a link that names none shows: parallel efficiency.
    pub const DEFAULT: Metric = Metric::Stat(Stat::Efficiency);

    /// Every metric, in the order the pickers list them (every statistic but mean latency, which no view
    /// offers).
    pub const ALL: [Metric; 28] = [
        Metric::Stat(Stat::Efficiency),
        Metric::Stat(Stat::P95Multiplier),
        Metric::Breakdown,
        Metric::OkRate,
        Metric::SloCapacity,
        Metric::Stat(Stat::P50WallMs),
        Metric::Stat(Stat::P95WallMs),
        Metric::Stat(Stat::P99WallMs),
        Metric::Stat(Stat::P50TtftMs),
        Metric::Stat(Stat::P95TtftMs),
        Metric::Stat(Stat::AggregateTps),
        Metric::Stat(Stat::MeanPromptTokens),
        Metric::Stat(Stat::MeanCompletionTokens),
        Metric::Stat(Stat::MeanTtftMs),
        Metric::Stat(Stat::P99TtftMs),
        Metric::Stat(Stat::MeanTpotMs),
        Metric::Stat(Stat::P50TpotMs),
        Metric::Stat(Stat::P95TpotMs),
        Metric::Stat(Stat::P99TpotMs),
        Metric::Stat(Stat::MeanItlMs),
        Metric::Stat(Stat::P50ItlMs),
        Metric::Stat(Stat::P95ItlMs),
        Metric::Stat(Stat::P99ItlMs),
        Metric::Stat(Stat::TotalTps),
        Metric::Stat(Stat::P50InteractivityTps),
        Metric::Stat(Stat::RequestThroughputRps),
        Metric::Stat(Stat::GoodputRps),
        Metric::Stat(Stat::OutputTpsPerAccelerator),
    ];

    /// The `metric=` value of every metric, in [`Metric::ALL`] order.
    const NAMES: [&'static str; 28] = {
        let mut names = [""; 28];
        let mut position = 0;
        while position < names.len() {
            names[position] = Metric::ALL[position].name();
            position += 1;
        }
        names
    };

    /// The statistic column a per-cell metric is (`None` for breakdown N, SLO capacity and the ok rate, which are
    /// read over a whole curve or its rows).
    pub const fn stat(self) -> Option<Stat> {
        match self {
            Metric::Stat(stat) => Some(stat),
            Metric::Breakdown | Metric::SloCapacity | Metric::OkRate => None,
        }
    }

    /// The `metric=` value: the statistic's column name, or `breakdown`, `slo_capacity`, `ok_rate`.
    pub const fn name(self) -> &'static str {
        match self {
            Metric::Stat(stat) => stat.name(),
            Metric::Breakdown => "breakdown",
            Metric::SloCapacity => "slo_capacity",
            Metric::OkRate => "ok_rate",
        }
    }

    /// How a picker, an axis and a heading say it.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Stat(stat) => stat.label(),
            Metric::Breakdown => "breakdown N",
            Metric::SloCapacity => "SLO capacity",
            Metric::OkRate => "ok rate",
        }
    }

    /// The metric a `metric=` value names.
    pub fn parse(text: &str) -> Option<Metric> {
        let position = Metric::NAMES.iter().position(|name| *name == text)?;
        Some(Metric::ALL[position])
    }

    /// What its numbers are.
    pub fn unit(self) -> Unit {
        match self {
            Metric::Stat(stat) => stat.unit(),
            Metric::Breakdown => Unit::Concurrency,
            Metric::SloCapacity => Unit::Load,
            Metric::OkRate => Unit::Ratio,
        }
    }

    /// Which way is better: the statistic's direction; a later breakdown, a higher SLO capacity and a higher ok
    /// rate are better.
    pub fn better(self) -> Better {
        match self {
            Metric::Stat(stat) => stat.better(),
            Metric::Breakdown | Metric::SloCapacity | Metric::OkRate => Better::Higher,
        }
    }

    /// The metrics that have a value per cell, and so a value per curve point: the statistics, not breakdown N,
    /// SLO capacity and the ok rate, which are read over a whole curve or its rows.
    pub fn per_cell(self) -> bool {
        matches!(self, Metric::Stat(_))
    }

    /// The metrics the curves view can plot against N.
    pub fn curves() -> impl Iterator<Item = Metric> {
        Metric::ALL.into_iter().filter(|metric| metric.per_cell())
    }

    /// The value of a per-cell metric for one cell (`None` for a cell without data, and for breakdown N and
    /// the ok rate, which are not per cell).
    pub fn of_cell(self, cell: &CellSummary) -> Option<f64> {
        cell.stat(self.stat()?)
    }

    /// How an axis, a heading or a picker says the metric when its points are at loads of `kind` (`None`: any
    /// kind, or no load axis): at an offered rate the efficiency column holds achieved/offered, not parallel
    /// efficiency (docs/definitions.md#efficiency).
    pub fn label_at(self, kind: Option<LoadKind>) -> &'static str {
        match (self, kind) {
            (Metric::Stat(Stat::Efficiency), Some(LoadKind::Rate)) => "achieved / offered rate",
            _ => self.label(),
        }
    }

    /// The line a chart of this metric is read against at loads of `kind`: the saturation threshold a rate
    /// series' verdict uses for achieved/offered ([`RATE_SATURATION`], docs/definitions.md#breakdown), else the
    /// criterion's own threshold of efficiency or of the p95 multiplier; `None` for a metric no criterion reads.
    pub fn threshold(self, criterion: &Criterion, kind: Option<LoadKind>) -> Option<Threshold> {
        let criterion_line = |value: f64| Threshold {
            value,
            label: format!("threshold {value}"),
        };
        match (self, kind) {
            (Metric::Stat(Stat::Efficiency), Some(LoadKind::Rate)) => Some(Threshold {
                value: RATE_SATURATION,
                label: format!("saturation: achieved < {RATE_SATURATION} × offered"),
            }),
            (Metric::Stat(Stat::Efficiency), _) => {
                Some(criterion_line(criterion.efficiency_below()))
            }
            (Metric::Stat(Stat::P95Multiplier), _) => {
                criterion.p95_multiplier_above().map(criterion_line)
            }
            _ => None,
        }
    }

    /// Whether values are measured quantities (times, throughputs, tokens) rather than ratios to a baseline, so
    /// that a ratio of two of them means something.
    pub fn is_absolute(self) -> bool {
        matches!(
            self.unit(),
            Unit::Milliseconds
                | Unit::TokensPerSecond
                | Unit::Tokens
                | Unit::TokensPerSecondPerUser
                | Unit::RequestsPerSecond
        )
    }

    /// Whether a smaller value is the better one (latencies and multipliers).
    pub fn lower_is_better(self) -> bool {
        self.better() == Better::Lower
    }

    /// Whether charts and colour scales read it on a log scale: latencies and their multiples span orders of
    /// magnitude between N = 1 and a saturated N.
    pub fn log_scale(self) -> bool {
        matches!(self.unit(), Unit::Multiple | Unit::Milliseconds)
    }

    /// One value as every view writes it: `0.482`, `3.21×`, `N=16`, `845 ms`, `1.24 s`, `2.1 min`,
    /// `1,234 tok/s`, `812.4 tokens`.
    pub fn format(self, value: f64) -> String {
        self.unit().format(value)
    }
}

/// A metric is written as its `metric=` value in every JSON body and cache, as the links write it.
impl Serialize for Metric {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Metric, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Metric::parse(&text).ok_or_else(|| serde::de::Error::unknown_variant(&text, &Metric::NAMES))
    }
}

impl Unit {
    /// The symbol written after a number of this unit (`ms`, `tok/s`, `req/s`, …); `None` for a ratio and a
    /// load, which are plain numbers.
    pub fn symbol(self) -> Option<&'static str> {
        match self {
            Unit::Ratio | Unit::Load => None,
            Unit::Multiple => Some("×"),
            Unit::Concurrency => Some("N"),
            Unit::Milliseconds => Some("ms"),
            Unit::TokensPerSecond => Some("tok/s"),
            Unit::Tokens => Some("tokens"),
            Unit::TokensPerSecondPerUser => Some("tok/s/user"),
            Unit::RequestsPerSecond => Some("req/s"),
        }
    }

    /// One value of this unit as every view writes it ([`Metric::format`]).
    pub fn format(self, value: f64) -> String {
        match self {
            Unit::Ratio => format!("{value:.3}"),
            Unit::Multiple => format!("{value:.2}×"),
            Unit::Concurrency => format!("N={value}"),
            Unit::Milliseconds => format_ms(value),
            Unit::TokensPerSecond => format!("{} tok/s", with_thousands(value, 0)),
            Unit::Tokens => format!("{} tokens", with_thousands(value, 1)),
            Unit::TokensPerSecondPerUser => format!("{} tok/s/user", with_thousands(value, 1)),
            Unit::RequestsPerSecond => format!("{} req/s", with_thousands(value, 2)),
            Unit::Load => format!("{}", (value * 100.0).round() / 100.0),
        }
    }

    /// A value with two decimals and its symbol, for a table that sets figures side by side at one precision:
    /// `3.90 req/s`, `845.12 ms`, `0.48`.
    pub fn fixed(self, value: f64) -> String {
        match self.symbol() {
            Some(symbol) => format!("{value:.2} {symbol}"),
            None => format!("{value:.2}"),
        }
    }
}

/// A horizontal line a chart is read against: its value on the metric's axis and the words beside it.
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    /// Where the line is, in the metric's unit.
    pub value: f64,
    /// What the chart writes beside it (`threshold 0.65`, `saturation: achieved < 0.9 × offered`).
    pub label: String,
}

/// A duration in the unit that fits it: `0.84 ms`, `845 ms`, `1.24 s`, `2.1 min`.
pub fn format_ms(ms: f64) -> String {
    let unit = TimeUnit::fitting(ms);
    let value = ms / unit.ms();
    let decimals = match unit {
        TimeUnit::Milliseconds if value < 10.0 => 2,
        TimeUnit::Milliseconds => 0,
        TimeUnit::Seconds => 2,
        TimeUnit::Minutes => 1,
    };
    format!("{value:.decimals$} {}", unit.symbol())
}

/// The unit a time axis or a time value is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Milliseconds, below one second.
    Milliseconds,
    /// Seconds, below one minute.
    Seconds,
    /// Minutes.
    Minutes,
}

impl TimeUnit {
    /// Milliseconds below one second, seconds below one minute, minutes from there.
    pub fn fitting(ms: f64) -> TimeUnit {
        let ms = ms.abs();
        if ms < 1000.0 {
            TimeUnit::Milliseconds
        } else if ms < 60_000.0 {
            TimeUnit::Seconds
        } else {
            TimeUnit::Minutes
        }
    }

    /// How many milliseconds one of the unit is.
    pub fn ms(self) -> f64 {
        match self {
            TimeUnit::Milliseconds => 1.0,
            TimeUnit::Seconds => 1000.0,
            TimeUnit::Minutes => 60_000.0,
        }
    }

    /// The unit's symbol (`ms`, `s`, `min`).
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Milliseconds => "ms",
            TimeUnit::Seconds => "s",
            TimeUnit::Minutes => "min",
        }
    }
}

/// `94500` → `94,500`.
pub fn thousands(value: u64) -> String {
    group_digits(&value.to_string())
}

/// Commas between groups of three digits of a whole number written in decimal.
fn group_digits(digits: &str) -> String {
    let mut out = String::new();
    for (position, digit) in digits.chars().enumerate() {
        if position > 0 && (digits.len() - position).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `1234567.8` with one decimal → `1,234,567.8`.
pub fn with_thousands(value: f64, decimals: usize) -> String {
    let text = format!("{:.decimals$}", value.abs());
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let mut out = String::new();
    if value < 0.0
        && text
            .chars()
            .any(|digit| digit.is_ascii_digit() && digit != '0')
    {
        out.push('-');
    }
    out.push_str(&group_digits(whole));
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for metric in Metric::ALL {
            assert_eq!(Metric::parse(metric.name()), Some(metric));
        }
        let mut names: Vec<&str> = Metric::ALL.iter().map(|metric| metric.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Metric::ALL.len());
        assert_eq!(Metric::curves().count(), 25);
        // Every statistic column is a metric but mean latency, which no picker offers.
        let offered: Vec<Stat> = Stat::ALL
            .into_iter()
            .filter(|stat| Metric::ALL.contains(&Metric::Stat(*stat)))
            .collect();
        assert_eq!(offered.len(), Stat::ALL.len() - 1);
        assert!(!offered.contains(&Stat::MeanWallMs));
    }

    #[test]
    fn a_metric_is_written_in_json_as_a_link_writes_it() {
        let written =
            serde_json::to_string(&[Metric::Stat(Stat::P95TtftMs), Metric::OkRate]).unwrap();
        assert_eq!(written, r#"["p95_ttft_ms","ok_rate"]"#);
        let read: Metric = serde_json::from_str(r#""slo_capacity""#).unwrap();
        assert_eq!(read, Metric::SloCapacity);
        assert!(serde_json::from_str::<Metric>(r#""mean_wall_ms""#).is_err());
        assert_eq!(Metric::default(), Metric::Stat(Stat::Efficiency));
    }

    #[test]
    fn times_are_written_in_the_unit_that_fits() {
        assert_eq!(format_ms(0.84), "0.84 ms");
        assert_eq!(format_ms(845.4), "845 ms");
        assert_eq!(format_ms(1240.0), "1.24 s");
        assert_eq!(format_ms(59_994.0), "59.99 s");
        assert_eq!(format_ms(126_000.0), "2.1 min");
        assert_eq!(Metric::Stat(Stat::P95WallMs).format(1240.0), "1.24 s");
    }

    #[test]
    fn numbers_carry_their_unit() {
        assert_eq!(Metric::Stat(Stat::Efficiency).format(0.4816), "0.482");
        assert_eq!(Metric::Stat(Stat::P95Multiplier).format(438.634), "438.63×");
        assert_eq!(Metric::Breakdown.format(16.0), "N=16");
        assert_eq!(
            Metric::Stat(Stat::AggregateTps).format(1234.4),
            "1,234 tok/s"
        );
        assert_eq!(
            Metric::Stat(Stat::MeanPromptTokens).format(8704.25),
            "8,704.2 tokens"
        );
        assert_eq!(with_thousands(-1_234_567.0, 0), "-1,234,567");
        assert_eq!(with_thousands(999.0, 0), "999");
        assert!(
            Metric::Stat(Stat::P95TtftMs).lower_is_better()
                && !Metric::Stat(Stat::AggregateTps).lower_is_better()
        );
        assert_eq!(
            Metric::Stat(Stat::P50InteractivityTps).format(41.26),
            "41.3 tok/s/user"
        );
        assert_eq!(Metric::Stat(Stat::P99TpotMs).format(8.25), "8.25 ms");
        assert!(
            Metric::Stat(Stat::P99ItlMs).lower_is_better()
                && !Metric::Stat(Stat::TotalTps).lower_is_better()
        );
        assert!(!Metric::Stat(Stat::P50InteractivityTps).lower_is_better());
        assert_eq!(Metric::Stat(Stat::P99TpotMs).label(), "p99 TPOT");
        assert_eq!(Metric::Stat(Stat::AggregateTps).label(), "output tok/s");
    }

    #[test]
    fn a_rate_axis_reads_achieved_over_offered_against_the_verdicts_saturation_line() {
        let rate = Some(LoadKind::Rate);
        let concurrency = Some(LoadKind::Concurrency);
        assert_eq!(
            Metric::Stat(Stat::Efficiency).label_at(rate),
            "achieved / offered rate"
        );
        assert_eq!(
            Metric::Stat(Stat::Efficiency).label_at(concurrency),
            "parallel efficiency"
        );
        assert_eq!(
            Metric::Stat(Stat::P99TtftMs).label_at(rate),
            "p99 time to first token"
        );
        // The definition's saturation share (docs/definitions.md#breakdown): 0.9 × offered.
        let line = Metric::Stat(Stat::Efficiency)
            .threshold(&Criterion::V1, rate)
            .unwrap();
        assert_eq!(line.value, 0.9);
        assert_eq!(line.label, "saturation: achieved < 0.9 × offered");
        // The verdict changes exactly at the line: below it a rate series saturates, on it it does not.
        assert!(Criterion::V3.saturates(Some(line.value - 1e-9), None));
        assert!(!Criterion::V3.saturates(Some(line.value), None));
        // An edited efficiency threshold moves the concurrency line, not the saturation one.
        let edited = Criterion::V3.with_efficiency_below(0.7);
        assert_eq!(
            Metric::Stat(Stat::Efficiency).threshold(&edited, concurrency),
            Some(Threshold {
                value: 0.7,
                label: "threshold 0.7".into()
            })
        );
        assert_eq!(
            Metric::Stat(Stat::Efficiency)
                .threshold(&edited, rate)
                .unwrap()
                .value,
            0.9
        );
        // The p95 multiplier's line is the criterion's on either axis; V3 has none; a latency has none.
        assert_eq!(
            Metric::Stat(Stat::P95Multiplier)
                .threshold(&Criterion::V1, rate)
                .map(|line| line.value),
            Some(2.0)
        );
        assert_eq!(
            Metric::Stat(Stat::P95Multiplier).threshold(&Criterion::V3, rate),
            None
        );
        assert_eq!(
            Metric::Stat(Stat::P99TtftMs).threshold(&Criterion::V1, rate),
            None
        );
    }
}

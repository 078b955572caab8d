//! The one curve engine: cells grouped into curves over N, reps aggregated within each series, series pooled
//! within each group, and the breakdown N of the result.
//!
//! Every curve a user sees comes from here: the audit's breakdown table (one curve per series), the curves view
//! (one per colour value and facet) and the matrix (one per square). A series is one
//! `(run, suite, phase, backend, model, workload)`; its reps at one N are aggregated first (mean or median,
//! docs/definitions.md#pooling), then the series a group pools are aggregated the same way. For a
//! group that is one series this is exactly the rep aggregate, so a matrix square and the audit row of the same
//! series always agree; for a pooled group every series weighs the same however many reps it has (TR164 V3's
//! marginals are means over models of rep-averaged values).

use crate::key::SeriesKey;
use crate::load::{Load, RateRps};
use crate::metric::Metric;
use crate::pooling::{Aggregation, Pooling};
use crate::scaling::breakdown_load;
use crate::stat::Stat;
use crate::status::CellStatus;
use crate::summary::{CellSummary, Inclusion};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the band around a curve value spans.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BandSpan {
    /// The smallest and largest value among all the cells behind the point (every pooled series and rep).
    #[default]
    Cells,
    /// Only the spread over reps: the point's value computed from each rep alone, smallest to largest. For a
    /// point of one series this is the same as `Cells`.
    Reps,
}

impl BandSpan {
    /// The name `band=` takes.
    pub fn name(self) -> &'static str {
        match self {
            BandSpan::Cells => "cells",
            BandSpan::Reps => "reps",
        }
    }
    /// The span a name names.
    pub fn parse(text: &str) -> Option<BandSpan> {
        match text {
            "cells" => Some(BandSpan::Cells),
            "reps" => Some(BandSpan::Reps),
            _ => None,
        }
    }
    /// How a chart labels the band.
    pub fn label(self) -> &'static str {
        match self {
            BandSpan::Cells => "band = min–max over the cells behind each point",
            BandSpan::Reps => "band = min–max over reps (each rep's value, pooled like the point)",
        }
    }
}

/// How cells become curve values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CurveOptions {
    /// Applied over the reps of a series, then over the series of a group.
    pub aggregation: Aggregation,
    /// Which cells are admitted.
    pub inclusion: Inclusion,
    /// What the band around each value spans.
    pub band: BandSpan,
    /// The per-cell metrics whose bands the points carry; `None` for all of them. A view that shows one or two
    /// metrics asks for those only: pooling every metric at every N is most of a large matrix's cost.
    pub metrics: Option<Vec<Metric>>,
    /// Leave each point's [`CurvePoint::pooling`] empty: the matrix describes a square's pooling over all its
    /// points at once, and describing every point's too was a fifth of its cost at scale.
    pub skip_point_pooling: bool,
}

impl CurveOptions {
    /// The per-cell metrics the points carry a band of.
    fn pooled_metrics(&self) -> Vec<Metric> {
        match &self.metrics {
            Some(metrics) => {
                let mut metrics: Vec<Metric> = metrics
                    .iter()
                    .copied()
                    .filter(|metric| metric.per_cell())
                    .collect();
                metrics.sort_unstable();
                metrics.dedup();
                metrics
            }
            None => Metric::curves().collect(),
        }
    }
}

/// An aggregated value and the band around it ([`BandSpan`]: the smallest and largest value of the cells
/// behind it, or of the value computed from each rep alone).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Band {
    /// The aggregated value.
    pub value: f64,
    /// The band's lower end.
    pub min: f64,
    /// The band's upper end.
    pub max: f64,
}

/// One load of a curve: aggregates of the admitted cells, and what is missing there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The load (concurrency N or offered rate).
    pub load: Load,
    /// The value of every per-cell metric ([`Metric::per_cell`]) that some admitted cell has here (of those
    /// [`CurveOptions::metrics`] asks for).
    pub bands: BTreeMap<Metric, Band>,
    /// Admitted cells with data at this N (reps × pooled series).
    pub cells: u32,
    /// What those cells span (empty when [`CurveOptions::skip_point_pooling`]).
    pub pooling: Pooling,
    /// Series with at least one admitted cell with data at this N.
    pub series: u32,
    /// Admitted partial cells with data (fewer rows than expected).
    pub partial: u32,
    /// Admitted failed cells with data (some rows not ok; only their ok rows enter the value).
    #[serde(default)]
    pub failed: u32,
    /// Cells at this N that are skipped (sentinel only).
    pub skipped: u32,
    /// Cells with data at this N that the inclusion policy leaves out.
    pub left_out: u32,
    /// Σ ok rows / Σ expected rows over the cells the inclusion admits, with or without data, so a failed cell
    /// shows as `0/320` rather than vanishing from the denominator.
    pub ok_rows: u64,
    /// Σ expected rows over the same cells.
    pub expected_rows: u64,
}

impl CurvePoint {
    /// The value and band of a metric here.
    pub fn band(&self, metric: Metric) -> Option<Band> {
        self.bands.get(&metric).copied()
    }
    /// The efficiency and its band here.
    pub fn efficiency(&self) -> Option<Band> {
        self.band(Metric::Stat(Stat::Efficiency))
    }
    /// The p95 multiplier and its band here.
    pub fn p95_multiplier(&self) -> Option<Band> {
        self.band(Metric::Stat(Stat::P95Multiplier))
    }
}

impl Default for CurvePoint {
    fn default() -> CurvePoint {
        CurvePoint {
            load: Load::Unstated,
            bands: BTreeMap::new(),
            cells: 0,
            pooling: Pooling::default(),
            series: 0,
            partial: 0,
            failed: 0,
            skipped: 0,
            left_out: 0,
            ok_rows: 0,
            expected_rows: 0,
        }
    }
}

/// Where a curve breaks (a concurrency series) or saturates (a rate series) under a criterion.
///
/// Serialised as `{"kind":"at","n":16}` (`"rate_rps"` for a rate) and `{"kind":"never","max_n":32}`
/// (`"max_rate_rps"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "BreakdownForm", try_from = "BreakdownForm")]
pub enum Breakdown {
    /// The first load (ascending) at which the criterion holds.
    At {
        /// The load.
        load: Load,
    },
    /// The criterion never holds at the measured loads.
    Never {
        /// The largest load with a value.
        max: Load,
    },
    /// No load has a value to test (every cell skipped, failed, excluded or without a baseline).
    NoData,
}

/// [`Breakdown`] as JSON writes it: the load under `n`/`rate_rps`, the largest under `max_n`/`max_rate_rps`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
enum BreakdownForm {
    At {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n: Option<u32>,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "crate::load::optional_rate_json"
        )]
        rate_rps: Option<RateRps>,
    },
    Never {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_n: Option<u32>,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "crate::load::optional_rate_json"
        )]
        max_rate_rps: Option<RateRps>,
    },
    NoData,
}

impl From<Breakdown> for BreakdownForm {
    fn from(breakdown: Breakdown) -> BreakdownForm {
        let rate = |load: Load| match load {
            Load::Rate(rate) => Some(rate),
            _ => None,
        };
        match breakdown {
            Breakdown::At { load } => BreakdownForm::At {
                n: load.concurrency(),
                rate_rps: rate(load),
            },
            Breakdown::Never { max } => BreakdownForm::Never {
                max_n: max.concurrency(),
                max_rate_rps: rate(max),
            },
            Breakdown::NoData => BreakdownForm::NoData,
        }
    }
}

impl TryFrom<BreakdownForm> for Breakdown {
    type Error = &'static str;

    fn try_from(form: BreakdownForm) -> Result<Breakdown, &'static str> {
        let load = |n: Option<u32>, rate: Option<RateRps>| match (n, rate) {
            (Some(n), None) => Ok(Load::Concurrency(n)),
            (None, Some(rate)) => Ok(Load::Rate(rate)),
            _ => Err("a breakdown names one load: n or rate_rps"),
        };
        Ok(match form {
            BreakdownForm::At { n, rate_rps } => Breakdown::At {
                load: load(n, rate_rps)?,
            },
            BreakdownForm::Never {
                max_n,
                max_rate_rps,
            } => Breakdown::Never {
                max: load(max_n, max_rate_rps)?,
            },
            BreakdownForm::NoData => Breakdown::NoData,
        })
    }
}

impl Breakdown {
    /// The breakdown N, when a concurrency series breaks at a measured N.
    pub fn n(self) -> Option<u32> {
        self.load().and_then(Load::concurrency)
    }

    /// The load the curve breaks or saturates at.
    pub fn load(self) -> Option<Load> {
        match self {
            Breakdown::At { load } => Some(load),
            _ => None,
        }
    }

    /// How a table cell shows it: `16`, `never within N ≤ 32`, `4 req/s`, `never within ≤ 8 req/s`, `no data`.
    pub fn label(self) -> String {
        match self {
            Breakdown::At {
                load: Load::Concurrency(n),
            } => n.to_string(),
            Breakdown::At { load } => load.label(),
            Breakdown::Never {
                max: Load::Concurrency(max_n),
            } => format!("never within N ≤ {max_n}"),
            Breakdown::Never { max } => format!("never within ≤ {}", max.label()),
            Breakdown::NoData => "no data".into(),
        }
    }
}

/// A curve: its group (what the caller grouped by) and its points in ascending N, every N that has any cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve<G> {
    /// What the caller grouped by.
    pub group: G,
    /// Every N with a cell, ascending.
    pub points: Vec<CurvePoint>,
}

impl<G> Curve<G> {
    /// Breakdown N on the aggregated values: the single definition every view and the audit use.
    pub fn breakdown(&self, criterion: &crate::Criterion) -> Breakdown {
        let measured: Vec<(Load, Option<f64>, Option<f64>)> = self
            .points
            .iter()
            .map(|point| {
                (
                    point.load,
                    point.efficiency().map(|band| band.value),
                    point.p95_multiplier().map(|band| band.value),
                )
            })
            .filter(|(_, efficiency, multiplier)| efficiency.is_some() || multiplier.is_some())
            .collect();
        match breakdown_load(&measured, criterion) {
            Some(load) => Breakdown::At { load },
            None => match measured.iter().map(|(load, _, _)| *load).max() {
                Some(max) => Breakdown::Never { max },
                None => Breakdown::NoData,
            },
        }
    }

    /// The point at a load.
    pub fn point(&self, load: Load) -> Option<&CurvePoint> {
        self.points.iter().find(|point| point.load == load)
    }
}

/// The series a cell belongs to, borrowed: cells are pooled per series without cloning keys.
type SeriesRef<'a> = crate::key::SeriesParts<'a>;

/// A curve with the cells grouped at each of its points: what a view needs to list a point's cells without
/// searching the slice again.
#[derive(Clone, Debug)]
pub struct CurveCells<'a, G> {
    /// The curve.
    pub curve: Curve<G>,
    /// `cells[i]`: every cell of the group at `curve.points[i].n` (admitted or not, with data or not), in the
    /// order they were given.
    pub cells: Vec<Vec<&'a CellSummary>>,
}

/// Groups `cells` by `group` and builds one curve per group, in the order of the group values, each with its
/// cells per point. `group` may borrow from the cell (a view groups by borrowed dimension values).
pub fn curves_with_cells<'a, G: Ord>(
    cells: impl IntoIterator<Item = &'a CellSummary>,
    group: impl Fn(&'a CellSummary) -> G,
    options: &CurveOptions,
) -> Vec<CurveCells<'a, G>> {
    // Groups in ascending order, as a sorted list: cells come sorted by key, so a cell's group is most often the
    // previous cell's, which one comparison confirms before any search.
    let mut grouped: Vec<(G, BTreeMap<Load, Vec<&'a CellSummary>>)> = Vec::new();
    let mut last: Option<usize> = None;
    for cell in cells {
        let value = group(cell);
        let index = match last {
            Some(index) if grouped[index].0 == value => index,
            _ => match grouped.binary_search_by(|(existing, _)| existing.cmp(&value)) {
                Ok(index) => index,
                Err(index) => {
                    grouped.insert(index, (value, BTreeMap::new()));
                    index
                }
            },
        };
        last = Some(index);
        grouped[index]
            .1
            .entry(cell.key.load)
            .or_default()
            .push(cell);
    }
    // The metrics to pool, settled once for every point of every curve.
    let metrics = options.pooled_metrics();
    grouped
        .into_iter()
        .map(|(group, by_n)| {
            let (points, cells) = by_n
                .into_iter()
                .map(|(load, cells)| (point(load, &cells, options, &metrics), cells))
                .unzip();
            CurveCells {
                curve: Curve { group, points },
                cells,
            }
        })
        .collect()
}

/// Groups `cells` by `group` and builds one curve per group, in the order of the group values.
pub fn curves<'a, G: Ord>(
    cells: impl IntoIterator<Item = &'a CellSummary>,
    group: impl Fn(&'a CellSummary) -> G,
    options: &CurveOptions,
) -> Vec<Curve<G>> {
    curves_with_cells(cells, group, options)
        .into_iter()
        .map(|grouped| grouped.curve)
        .collect()
}

/// One curve per series `(run, suite, phase, backend, model, workload)`: the audit's breakdown table and the
/// per-series tables of the demo generator.
pub fn series_curves<'a>(
    cells: impl IntoIterator<Item = &'a CellSummary>,
    options: &CurveOptions,
) -> Vec<Curve<SeriesKey>> {
    curves(cells, |cell| cell.key.series(), options)
}

/// One curve over all of `cells` (a single group).
pub fn curve<'a>(
    cells: impl IntoIterator<Item = &'a CellSummary>,
    options: &CurveOptions,
) -> Curve<()> {
    curves(cells, |_| (), options).pop().unwrap_or(Curve {
        group: (),
        points: Vec::new(),
    })
}

/// One series' admitted cells at one N, each with its rep, so values can be aggregated per series or per rep.
type RepCells<'a> = Vec<(u32, &'a CellSummary)>;

/// The point at `load` over `cells`, with the bands of `metrics` ([`CurveOptions::pooled_metrics`]).
fn point(
    load: Load,
    cells: &[&CellSummary],
    options: &CurveOptions,
    metrics: &[Metric],
) -> CurvePoint {
    let mut point = CurvePoint {
        load,
        ..CurvePoint::default()
    };
    let mut behind: Vec<&CellSummary> = Vec::with_capacity(cells.len());
    for cell in cells {
        let admitted = options.inclusion.admits(cell);
        point.skipped += u32::from(cell.status == CellStatus::Skipped);
        if admitted {
            point.ok_rows += u64::from(cell.ok_rows);
            point.expected_rows += cell.expected_rows.map_or(0, u64::from);
        }
        if !cell.has_data() {
            continue;
        }
        if !admitted {
            point.left_out += 1;
            continue;
        }
        point.cells += 1;
        point.partial += u32::from(cell.status == CellStatus::Partial);
        point.failed += u32::from(cell.status == CellStatus::Failed);
        behind.push(cell);
    }
    let by_series = by_series(&behind);
    point.series = by_series.len() as u32;
    if !options.skip_point_pooling {
        point.pooling = Pooling::of(behind.iter().map(|cell| &cell.key));
    }
    // One buffer for every series' values of every metric: a point pools hundreds of series on a large sweep.
    let mut buffer = Vec::new();
    for metric in metrics.iter().copied() {
        if let Some(band) = pool(&by_series, metric, options, &mut buffer) {
            point.bands.insert(metric, band);
        }
    }
    point
}

/// `cells` grouped by series in ascending series order, each series' cells with their reps in the order given.
/// Cells sorted by key (as the index and the browser keep them) arrive series by series, so each cell is
/// compared with the previous series only; any other order is grouped through a map, with the same result.
fn by_series<'a>(cells: &[&'a CellSummary]) -> Vec<(SeriesRef<'a>, RepCells<'a>)> {
    let mut grouped: Vec<(SeriesRef<'a>, RepCells<'a>)> = Vec::new();
    for cell in cells {
        let series = cell.key.series_parts();
        match grouped.last_mut() {
            Some((last, reps)) if *last == series => reps.push((cell.key.rep, cell)),
            Some((last, _)) if *last > series => {
                let mut map: BTreeMap<SeriesRef<'a>, RepCells<'a>> = BTreeMap::new();
                for cell in cells {
                    map.entry(cell.key.series_parts())
                        .or_default()
                        .push((cell.key.rep, cell));
                }
                return map.into_iter().collect();
            }
            _ => grouped.push((series, vec![(cell.key.rep, cell)])),
        }
    }
    grouped
}

/// The value of `metric` at one point: reps aggregated per series, then series aggregated; and its band.
/// `buffer` is scratch space for one series' values.
fn pool(
    by_series: &[(SeriesRef<'_>, RepCells<'_>)],
    metric: Metric,
    options: &CurveOptions,
    buffer: &mut Vec<f64>,
) -> Option<Band> {
    let aggregation = options.aggregation;
    let per_series: Vec<f64> = by_series
        .iter()
        .filter_map(|(_, reps)| {
            buffer.clear();
            buffer.extend(reps.iter().filter_map(|(_, cell)| metric.of_cell(cell)));
            aggregation.apply(buffer)
        })
        .collect();
    let value = aggregation.apply(&per_series)?;
    let (min, max) = match options.band {
        BandSpan::Cells => extremes(
            by_series
                .iter()
                .flat_map(|(_, reps)| reps)
                .filter_map(|(_, cell)| metric.of_cell(cell)),
        ),
        // Each rep alone, pooled over the series the same way as the value: the spread due to reps only.
        BandSpan::Reps => {
            let mut by_rep: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
            for (rep, cell) in by_series.iter().flat_map(|(_, reps)| reps) {
                if let Some(value) = metric.of_cell(cell) {
                    by_rep.entry(*rep).or_default().push(value);
                }
            }
            extremes(
                by_rep
                    .values()
                    .filter_map(|values| aggregation.apply(values)),
            )
        }
    };
    Some(Band { value, min, max })
}

fn extremes(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(min, max), value| {
        (min.min(value), max.max(value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Criterion;
    use crate::exclusions::ExclusionScope;
    use crate::key::CellKey;
    use crate::stats::CellStats;
    use crate::summary::fill_scaling;

    fn cell(model: &str, n: u32, rep: u32, tps: Option<f64>, status: CellStatus) -> CellSummary {
        let mut cell = CellSummary::empty(
            CellKey {
                run_id: "r".into(),
                suite: "s".into(),
                phase: "scaling".into(),
                backend: "b".into(),
                model: model.into(),
                workload: "w".into(),
                config: Default::default(),
                load: crate::Load::Concurrency(n),
                rep,
            },
            status,
        );
        cell.expected_rows = Some(10 * n);
        if let Some(tps) = tps {
            cell.rows = 10 * n;
            cell.ok_rows = 10 * n;
            cell.stats = CellStats {
                ok_rows: 10 * n,
                aggregate_tps: Some(tps),
                p95_wall_ms: Some(100.0 * f64::from(n)),
                ..CellStats::default()
            };
        }
        cell
    }

    #[test]
    fn reps_are_aggregated_per_series_before_series_are_pooled() {
        // Model a has three reps at N=2 (efficiency 0.5, 0.6, 0.7), model b one (0.9). Pooling the four cells
        // would give 0.675; the mean of the series' rep means is (0.6 + 0.9) / 2 = 0.75.
        let mut cells = vec![
            cell("a", 1, 0, Some(100.0), CellStatus::Clean),
            cell("a", 1, 1, Some(100.0), CellStatus::Clean),
            cell("a", 1, 2, Some(100.0), CellStatus::Clean),
            cell("a", 2, 0, Some(100.0), CellStatus::Clean),
            cell("a", 2, 1, Some(120.0), CellStatus::Clean),
            cell("a", 2, 2, Some(140.0), CellStatus::Clean),
            cell("b", 1, 0, Some(100.0), CellStatus::Clean),
            cell("b", 2, 0, Some(180.0), CellStatus::Clean),
        ];
        fill_scaling(&mut cells);
        let pooled = curve(&cells, &CurveOptions::default());
        let at_2 = pooled.point(crate::Load::Concurrency(2)).unwrap();
        let efficiency = at_2.efficiency().unwrap();
        assert!((efficiency.value - 0.75).abs() < 1e-12, "{efficiency:?}");
        assert_eq!((efficiency.min, efficiency.max), (0.5, 0.9));
        assert_eq!((at_2.cells, at_2.series), (4, 2));
        assert_eq!(
            at_2.pooling.describe(Aggregation::Mean),
            "mean of 4 cells over model a, b; rep 0, 1, 2 (not every combination has data)"
        );
        // Restricted to reps, the band spans each rep's pooled value: rep 0 (0.5 + 0.9) / 2 = 0.7, rep 1 0.6
        // and rep 2 0.7 (model a alone).
        let reps_only = CurveOptions {
            band: BandSpan::Reps,
            ..CurveOptions::default()
        };
        let band = curve(&cells, &reps_only)
            .point(crate::Load::Concurrency(2))
            .unwrap()
            .efficiency()
            .unwrap();
        assert!((band.value - 0.75).abs() < 1e-12);
        assert!(
            (band.min - 0.6).abs() < 1e-12 && (band.max - 0.7).abs() < 1e-12,
            "{band:?}"
        );
        // One series alone is its rep mean.
        let per_model = curves(
            &cells,
            |cell| cell.key.model.clone(),
            &CurveOptions::default(),
        );
        let a = per_model[0]
            .point(crate::Load::Concurrency(2))
            .unwrap()
            .efficiency()
            .unwrap();
        assert!((a.value - 0.6).abs() < 1e-12);
        let median = CurveOptions {
            aggregation: Aggregation::Median,
            ..CurveOptions::default()
        };
        let b = curves(&cells, |cell| cell.key.model.clone(), &median);
        assert!(
            (b[0]
                .point(crate::Load::Concurrency(2))
                .unwrap()
                .efficiency()
                .unwrap()
                .value
                - 0.6)
                .abs()
                < 1e-12
        );
    }

    #[test]
    fn cells_in_any_order_give_the_curves_of_cells_sorted_by_key() {
        // The engine groups sorted cells series by series and any other order through a map: both are the same.
        let mut cells: Vec<CellSummary> = ["a", "b", "c"]
            .into_iter()
            .flat_map(|model| {
                [1, 2, 4].into_iter().flat_map(move |n| {
                    (0..3).map(move |rep| {
                        let tps = 100.0 * f64::from(n) / (1.0 + f64::from(rep) / 10.0);
                        cell(model, n, rep, Some(tps), CellStatus::Clean)
                    })
                })
            })
            .collect();
        fill_scaling(&mut cells);
        let sorted = curves(
            &cells,
            |cell| cell.key.n().unwrap() % 2,
            &CurveOptions::default(),
        );
        let mut shuffled: Vec<&CellSummary> = cells.iter().collect();
        shuffled.reverse();
        shuffled.swap(1, 7);
        let unsorted = curves(
            shuffled,
            |cell| cell.key.n().unwrap() % 2,
            &CurveOptions::default(),
        );
        assert_eq!(sorted, unsorted);
        assert_eq!(sorted[0].points[0].series, 3);
    }

    #[test]
    fn breakdown_distinguishes_a_crossing_never_and_no_data() {
        let mut cells = vec![
            cell("a", 1, 0, Some(100.0), CellStatus::Clean),
            cell("a", 2, 0, Some(120.0), CellStatus::Clean),
            cell("a", 4, 0, Some(300.0), CellStatus::Clean),
            cell("a", 16, 0, None, CellStatus::Skipped),
        ];
        fill_scaling(&mut cells);
        let whole = curve(&cells, &CurveOptions::default());
        assert_eq!(
            whole.breakdown(&Criterion::V3),
            Breakdown::At {
                load: crate::Load::Concurrency(2)
            }
        );
        assert_eq!(
            whole.point(crate::Load::Concurrency(16)).unwrap().skipped,
            1
        );
        let above_2: Vec<CellSummary> = cells
            .iter()
            .filter(|c| c.key.n().unwrap() != 2)
            .cloned()
            .collect();
        assert_eq!(
            curve(&above_2, &CurveOptions::default()).breakdown(&Criterion::V3),
            Breakdown::Never {
                max: crate::Load::Concurrency(4)
            }
        );
        let skipped_only = [cells[3].clone()];
        assert_eq!(
            curve(&skipped_only, &CurveOptions::default()).breakdown(&Criterion::V3),
            Breakdown::NoData
        );
        assert_eq!(
            Breakdown::Never {
                max: crate::Load::Concurrency(32)
            }
            .label(),
            "never within N ≤ 32"
        );
    }

    #[test]
    fn left_out_cells_count_but_do_not_enter_the_values() {
        let mut cells = vec![
            cell("a", 1, 0, Some(100.0), CellStatus::Clean),
            cell("a", 2, 0, Some(100.0), CellStatus::Clean),
            cell("a", 2, 1, Some(160.0), CellStatus::Failed),
        ];
        cells[2].excluded = vec!["x".into()];
        cells[2].exclusion_scope = Some(ExclusionScope::All);
        cells[2].ok_rows = 0;
        fill_scaling(&mut cells);
        let point = curve(&cells, &CurveOptions::default())
            .point(crate::Load::Concurrency(2))
            .cloned()
            .unwrap();
        assert_eq!((point.cells, point.left_out), (1, 1));
        assert_eq!(point.efficiency().unwrap().value, 0.5);
        // Only the admitted cell's rows are in the denominators.
        assert_eq!((point.ok_rows, point.expected_rows), (20, 20));
    }
}

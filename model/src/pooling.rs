//! What a pooled value pools: how many cells, and over which dimensions and values they differ, written the way
//! every chart, square, table and export says it ("mean of 4 cells: tp 1, 2, 4, 8"; docs/definitions.md#pooling).

use crate::key::{CellKey, Dimension, DimensionValue};
use serde::{Deserialize, Serialize};

/// How reps (and then the series a curve pools) are aggregated into one curve value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// The arithmetic mean.
    #[default]
    Mean,
    /// The median (numpy's linear quantile at one half).
    Median,
}

impl Aggregation {
    /// The name `agg=` takes.
    pub fn name(self) -> &'static str {
        match self {
            Aggregation::Mean => "mean",
            Aggregation::Median => "median",
        }
    }
    /// The aggregation a name names.
    pub fn parse(text: &str) -> Option<Aggregation> {
        match text {
            "mean" => Some(Aggregation::Mean),
            "median" => Some(Aggregation::Median),
            _ => None,
        }
    }
    /// The aggregate of some values (`None` for none).
    pub fn apply(self, values: &[f64]) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        match self {
            Aggregation::Mean => Some(values.iter().sum::<f64>() / values.len() as f64),
            Aggregation::Median => {
                let mut sorted = values.to_vec();
                crate::order::sort_floats(&mut sorted);
                crate::stats::quantile_linear(&sorted, 0.5)
            }
        }
    }
}

/// The cells behind one value: their count and each dimension on which they differ, with its values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pooling {
    /// How many cells.
    pub cells: u32,
    /// Dimensions with more than one value among the cells: the key's own in [`ORDER`], the configuration's
    /// parameters after the workload.
    pub spans: Vec<Span>,
}

/// One dimension a pooled value spans: how many values, and the first of them by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// The dimension.
    pub dimension: Dimension,
    /// How many values the cells have of it.
    pub count: u32,
    /// The first [`NAMED_VALUES`] of them in the dimension's order, as a reader reads them (`N=4`, `2.5 req/s`).
    pub values: Vec<String>,
}

/// How many values a span names before it says how many more there are: enough for a sweep's parallel sizes
/// (`tp 1, 2, 4, 8`), few enough for a tooltip.
pub const NAMED_VALUES: usize = 4;

/// The order a description names dimensions in: what was compared first, reps last (the configuration's
/// parameters come after the workload).
const ORDER: [Dimension; 8] = [
    Dimension::Backend,
    Dimension::Model,
    Dimension::Workload,
    Dimension::Phase,
    Dimension::Suite,
    Dimension::Run,
    Dimension::Load,
    Dimension::Rep,
];

impl Span {
    /// `tp 1, 2, 4, 8`; `model a, b, c, d and 2 more`.
    pub fn text(&self) -> String {
        let mut text = format!("{} {}", self.dimension.name(), self.values.join(", "));
        let more = (self.count as usize).saturating_sub(self.values.len());
        if more > 0 {
            text.push_str(&format!(" and {more} more"));
        }
        text
    }

    /// Whether the span is of how a model was served: the backend or a deployment parameter. A square or point
    /// pooling them averages deployments, which its badge says; pooling models is how the curves read a
    /// backend by default, and the pooling text names them.
    pub fn is_deployment(&self) -> bool {
        matches!(
            self.dimension,
            Dimension::Backend | Dimension::Param(_) | Dimension::Configuration
        )
    }

    /// How many of its values are stated: a parameter one cell states and another leaves unstated is no
    /// evidence that two deployments differ (a TR164 run states none), two stated values are.
    fn stated(&self) -> u32 {
        let unstated = self
            .values
            .iter()
            .any(|value| value == crate::config::UNSTATED);
        self.count - u32::from(unstated)
    }
}

impl Pooling {
    /// The pooling of `keys` (the admitted cells with data behind a value).
    pub fn of<'a>(keys: impl IntoIterator<Item = &'a CellKey>) -> Pooling {
        let keys: Vec<&CellKey> = keys.into_iter().collect();
        let params = Dimension::params(keys.iter().copied());
        let order = ORDER[..3].iter().chain(&params).chain(&ORDER[3..]).copied();
        let mut values: Vec<DimensionValue<'_>> = Vec::with_capacity(keys.len());
        let spans = order
            .filter_map(|dimension| {
                // Most dimensions hold one value among a value's cells: one pass says so without sorting.
                let first = keys.first()?.value(dimension);
                if keys.iter().all(|key| key.value(dimension) == first) {
                    return None;
                }
                values.clear();
                values.extend(keys.iter().map(|key| key.value(dimension)));
                // Keys mostly come sorted, so equal values sit together: dropping repeats first leaves few
                // values to sort.
                values.dedup();
                values.sort_unstable();
                values.dedup();
                Some(Span {
                    dimension,
                    count: values.len() as u32,
                    values: values.iter().take(NAMED_VALUES).map(value_text).collect(),
                })
            })
            .collect();
        Pooling {
            cells: keys.len() as u32,
            spans,
        }
    }

    /// Whether the value pools more than one series (reps of one series are not "pooling" in the sense the
    /// band option and a frontier care about).
    pub fn pools_series(&self) -> bool {
        self.spans
            .iter()
            .any(|span| span.dimension != Dimension::Rep)
    }

    /// The deployments the value pools: `pools tp 4, 8`, `pools backend sglang, vllm × tp 4, 8`; `None` when its
    /// cells are of one deployment. What a matrix square or a curve's legend shows as its badge.
    pub fn configuration_badge(&self) -> Option<String> {
        let parts: Vec<String> = self
            .spans
            .iter()
            .filter(|span| span.is_deployment() && span.stated() >= 2)
            .map(Span::text)
            .collect();
        (!parts.is_empty()).then(|| format!("pools {}", parts.join(" × ")))
    }

    /// `mean of 18 cells: model a, b, c × phase scaling, ttft × rep 0, 1, 2`; `mean of 4 cells: tp 1, 2, 4, 8`;
    /// `1 cell`; when not every combination has a cell, `mean of 16 cells over model a, b, c; phase scaling, ttft;
    /// rep 0, 1, 2 (not every combination has data)`.
    pub fn describe(&self, aggregation: Aggregation) -> String {
        match self.cells {
            0 => return "no cells with data".into(),
            1 => return "1 cell".into(),
            _ => {}
        }
        let parts = self.span_parts();
        let what = format!("{} of {} cells", aggregation.name(), self.cells);
        if parts.is_empty() {
            what
        } else if self.is_complete() {
            format!("{what}: {}", parts.join(" × "))
        } else {
            format!(
                "{what} over {} (not every combination has data)",
                parts.join("; ")
            )
        }
    }

    /// Whether every combination of the spanned values has one cell.
    pub fn is_complete(&self) -> bool {
        let combinations: u64 = self
            .spans
            .iter()
            .map(|span| u64::from(span.count))
            .product();
        combinations == u64::from(self.cells)
    }

    /// The widest of several poolings, for a sentence about all of them: the most cells, and for each dimension
    /// any of them spans, its widest span, in the order [`Pooling::of`] names them.
    pub fn widest(poolings: &[Pooling]) -> Pooling {
        let mut spans: Vec<Span> = Vec::new();
        for span in poolings.iter().flat_map(|pooling| &pooling.spans) {
            match spans
                .iter_mut()
                .find(|kept| kept.dimension == span.dimension)
            {
                Some(kept) if kept.count < span.count => *kept = span.clone(),
                Some(_) => {}
                None => spans.push(span.clone()),
            }
        }
        crate::order::sort_stable_by_key(&mut spans, |span| rank(span.dimension));
        Pooling {
            cells: poolings
                .iter()
                .map(|pooling| pooling.cells)
                .max()
                .unwrap_or(0),
            spans,
        }
    }

    /// Each dimension the cells span, with its values: `phase scaling, ttft`, `rep 0, 1, 2`.
    pub fn span_parts(&self) -> Vec<String> {
        self.spans.iter().map(Span::text).collect()
    }
}

/// The values a view draws, for the sentences said once above it about what they pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drawn {
    /// The matrix's squares.
    Squares,
    /// The curves' points.
    Points,
}

impl Drawn {
    /// What the widest of `poolings` pools: `Each square pools the cells that share its row, column and grid, up
    /// to mean of 6 cells: phase scaling, ttft × rep 0, 1, 2; …`. Empty for no values.
    pub fn pooling_note<'a>(
        self,
        poolings: impl IntoIterator<Item = &'a Pooling>,
        aggregation: Aggregation,
    ) -> String {
        let (one, cells, then) = match self {
            Drawn::Squares => (
                "square",
                "the cells that share its row, column and grid",
                "",
            ),
            Drawn::Points => ("point", "the cells it stands for", ", then the series"),
        };
        match poolings.into_iter().max_by_key(|pooling| pooling.cells) {
            None => String::new(),
            Some(widest) if widest.cells <= 1 => format!("Each {one} is one cell."),
            Some(widest) => format!(
                "Each {one} pools {cells}, up to {}; reps are aggregated within each series first{then}. Hover \
                 a {one} for its own count.",
                widest.describe(aggregation)
            ),
        }
    }

    /// How many of the values pool several deployments, and how to see each on its own: `3 squares pool
    /// deployments (up to tp 4, 8), each marked "pools …": put a parameter on rows, columns or grid to split
    /// them.` `None` when none does.
    pub fn deployment_note<'a>(
        self,
        poolings: impl IntoIterator<Item = &'a Pooling>,
    ) -> Option<String> {
        let pooled: Vec<Pooling> = poolings
            .into_iter()
            .filter(|pooling| pooling.configuration_badge().is_some())
            .cloned()
            .collect();
        let widest = Pooling::widest(&pooled);
        let badge = widest.configuration_badge()?;
        let (one, split) = match self {
            Drawn::Squares => ("square", "put a parameter on rows, columns or grid"),
            Drawn::Points => ("point", "colour or facet by configuration"),
        };
        let plural = if pooled.len() == 1 { "" } else { "s" };
        Some(format!(
            "{} {one}{plural} pool{} several deployments (up to {}), each marked \"pools …\": {split} to see \
             each deployment on its own.",
            pooled.len(),
            if pooled.len() == 1 { "s" } else { "" },
            badge.trim_start_matches("pools ")
        ))
    }
}

/// Where a dimension comes in a description: [`ORDER`], with the configuration's parameters (by name) after the
/// workload.
fn rank(dimension: Dimension) -> (usize, &'static str) {
    match dimension {
        Dimension::Param(name) => (3, name.as_str()),
        other => {
            let place = ORDER.iter().position(|ordered| *ordered == other);
            (
                place.map_or(ORDER.len() + 1, |place| place + usize::from(place >= 3)),
                "",
            )
        }
    }
}

/// A value as a pooling names it: a load with its unit (`N=4`, `2.5 req/s`), anything else as written.
fn value_text(value: &DimensionValue<'_>) -> String {
    match value {
        DimensionValue::Load(load) => load.label(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(model: &str, phase: &str, rep: u32) -> CellKey {
        CellKey {
            run_id: "r".into(),
            suite: "s".into(),
            phase: phase.into(),
            backend: "pytorch_direct".into(),
            model: model.into(),
            workload: "w".into(),
            config: Default::default(),
            load: crate::Load::Concurrency(2),
            rep,
        }
    }

    #[test]
    fn says_what_a_pooled_value_pools_by_dimension_and_value() {
        let keys: Vec<CellKey> = ["a", "b", "c"]
            .into_iter()
            .flat_map(|model| {
                ["scaling", "saturation"]
                    .into_iter()
                    .flat_map(move |phase| (0..3).map(move |rep| key(model, phase, rep)))
            })
            .collect();
        let pooling = Pooling::of(&keys);
        assert_eq!(
            pooling.describe(Aggregation::Mean),
            "mean of 18 cells: model a, b, c × phase saturation, scaling × rep 0, 1, 2"
        );
        assert!(pooling.pools_series());
        assert_eq!(pooling.configuration_badge(), None);
        let ragged = Pooling::of(&keys[1..]);
        assert_eq!(
            ragged.describe(Aggregation::Median),
            "median of 17 cells over model a, b, c; phase saturation, scaling; rep 0, 1, 2 (not every \
             combination has data)"
        );
        let reps = Pooling::of(&keys[..3]);
        assert_eq!(
            reps.describe(Aggregation::Mean),
            "mean of 3 cells: rep 0, 1, 2"
        );
        assert!(!reps.pools_series());
        assert_eq!(reps.configuration_badge(), None);
        assert_eq!(
            Pooling::of(&keys[..1]).describe(Aggregation::Mean),
            "1 cell"
        );
        assert_eq!(
            Pooling::of(&[]).describe(Aggregation::Mean),
            "no cells with data"
        );
    }

    #[test]
    fn a_view_says_once_what_its_widest_value_pools_and_how_many_pool_deployments() {
        let tp = |tp: &str, rep: u32| {
            let mut config = crate::config::Config::new();
            config.insert("tp", tp).unwrap();
            CellKey {
                config,
                ..key("m", "p", rep)
            }
        };
        let reps = Pooling::of(&[tp("4", 0), tp("4", 1)]);
        let deployments = Pooling::of(&[tp("4", 0), tp("8", 0)]);
        let wider = Pooling::of(&[tp("4", 0), tp("8", 0), tp("8", 1)]);
        assert_eq!(
            Drawn::Squares.pooling_note([&reps, &deployments, &wider], Aggregation::Mean),
            "Each square pools the cells that share its row, column and grid, up to mean of 3 cells over tp 4, 8; \
             rep 0, 1 (not every combination has data); reps are aggregated within each series first. Hover a \
             square for its own count."
        );
        assert_eq!(
            Drawn::Points
                .deployment_note([&reps, &deployments, &wider])
                .as_deref(),
            Some(
                "2 points pool several deployments (up to tp 4, 8), each marked \"pools …\": colour or facet by \
                 configuration to see each deployment on its own."
            )
        );
        assert_eq!(Drawn::Squares.deployment_note([&reps]), None);
        assert_eq!(
            Drawn::Points.pooling_note([&Pooling::of(&[tp("4", 0)])], Aggregation::Mean),
            "Each point is one cell."
        );
    }

    #[test]
    fn configurations_are_named_by_parameter_and_value_and_long_lists_say_how_many_more() {
        let tp = |tp: u32, precision: &str| {
            let mut config = crate::config::Config::new();
            config.insert("tp", &tp.to_string()).unwrap();
            config.insert("precision", precision).unwrap();
            CellKey {
                config,
                ..key("m", "p", 0)
            }
        };
        let keys = [tp(8, "fp8"), tp(1, "fp8"), tp(4, "fp8"), tp(2, "fp8")];
        let pooling = Pooling::of(&keys);
        // Whole-number parameters order numerically (1, 2, 4, 8), as the dimension orders them.
        assert_eq!(
            pooling.describe(Aggregation::Mean),
            "mean of 4 cells: tp 1, 2, 4, 8"
        );
        assert!(pooling.pools_series());
        assert_eq!(
            pooling.configuration_badge().as_deref(),
            Some("pools tp 1, 2, 4, 8")
        );
        let six: Vec<CellKey> = (0..6)
            .map(|index| CellKey {
                load: crate::Load::Concurrency(1 << index),
                ..key("m", "p", 0)
            })
            .collect();
        assert_eq!(
            Pooling::of(&six).describe(Aggregation::Median),
            "median of 6 cells: load N=1, N=2, N=4, N=8 and 2 more"
        );
        assert_eq!(Pooling::of(&six).configuration_badge(), None);
        // A parameter one cell leaves unstated is named in the pooling, but is no second deployment.
        let unstated = CellKey {
            config: crate::config::Config::new(),
            ..key("m", "p", 0)
        };
        let half = Pooling::of(&[tp(4, "fp8"), unstated]);
        assert_eq!(
            half.describe(Aggregation::Mean),
            "mean of 2 cells over precision fp8, unstated; tp unstated, 4 (not every combination has data)"
        );
        assert_eq!(half.configuration_badge(), None);
    }
}

//! Where a cell's key and figures came from when another tool wrote the file: which key parts were inferred
//! (and by which rule), which figures are the tool's own *reported* aggregates rather than recomputed from
//! request rows, and which were computed from a reconstructed quantity (*derived*).
//!
//! TR164 cells have an empty [`FigureOrigin`]: every figure is recomputed and every key part is read.

pub use crate::stat::FigureOrigin;
use crate::stat::Stat;
use crate::summary::CellSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The statistics columns of the cells table a file of another tool can fill, in cells-table order: from its
/// request rows (recomputed) or, where they cannot give it, from the tool's own figure (reported).
pub const STAT_COLUMNS: [&str; Stat::REQUEST.len()] = crate::stat::names(Stat::REQUEST);

/// One inferred key part with the rule that produced it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InferredPart {
    /// The dimension it is a value of.
    pub dimension: String,
    /// The value.
    pub value: String,
    /// The rule (or `cellscope.toml` entry) that inferred it.
    pub rule: String,
}

/// Everything known about where one cell of another tool's file came from (in `/api/provenance` and the
/// inspector).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CellOrigin {
    /// The format name (`vllm-bench`, `sglang-bench`, `aiperf`, …).
    pub format: String,
    /// The file, relative to the data root.
    pub file: String,
    /// Which run record of the file (object, line, benchmark or experiment), from 0.
    pub record: u32,
    /// 1-based line of the record when the file is line-oriented (JSONL, appended objects).
    pub line: Option<u64>,
    /// The key parts that were inferred, with their rules.
    pub inferred: Vec<InferredPart>,
    /// The tool's own aggregates, by cells-table column name (times in ms, throughput in tok/s), shown next to
    /// the recomputed values with their difference.
    #[serde(deserialize_with = "exact::figures")]
    pub reported: BTreeMap<String, f64>,
    /// Every number the tool reports for the record, under the tool's own key (`p99_ttft_ms`,
    /// `request_goodput`, `time_to_first_token.p99`, …), whether or not a cells-table column corresponds to it.
    #[serde(default, deserialize_with = "exact::figures")]
    pub reported_figures: BTreeMap<String, f64>,
    /// How figures were obtained where it is not the plain rule (a derived wall latency, the span used for
    /// throughput, requests dropped as warm-up).
    pub notes: Vec<String>,
}

/// Figures read back exactly as they were written. The tools' figures are shown in full, to the last digit, and
/// compared with recomputed ones; from JSON text each is parsed by the standard library's correctly rounded
/// parser, so the browser bundle can leave out serde_json's own exact float parser (its tables are large) without
/// a digit changing. Binary formats (the cache) carry the numbers themselves.
mod exact {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer};
    use serde_json::value::RawValue;
    use std::collections::BTreeMap;

    pub(super) fn figures<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<BTreeMap<String, f64>, D::Error> {
        // JSON is the only text format these are read from.
        if !deserializer.is_human_readable() {
            return BTreeMap::deserialize(deserializer);
        }
        let written = BTreeMap::<String, Box<RawValue>>::deserialize(deserializer)?;
        written
            .into_iter()
            .map(|(name, text)| {
                let figure = text.get().trim().parse::<f64>().map_err(|_| {
                    D::Error::custom(format!("figure `{name}` is {}, not a number", text.get()))
                })?;
                Ok((name, figure))
            })
            .collect()
    }
}

/// How the figure shown for a column was obtained, as the UI marks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Recomputed from the request rows by the product's definitions: no mark.
    Recomputed,
    /// The tool's own figure: there were no request rows to recompute it from.
    Reported,
    /// Recomputed from a reconstructed per-request value (wall = TTFT + Σ inter-token latencies).
    Derived,
}

impl Mark {
    /// How the value shown for `column` was obtained.
    pub fn of(origin: &FigureOrigin, column: &str) -> Mark {
        if origin.is_reported(column) {
            Mark::Reported
        } else if origin.is_derived(column) {
            Mark::Derived
        } else {
            Mark::Recomputed
        }
    }

    /// The footnote sign the matrix, the inspector and the curves put next to a marked value.
    pub fn sign(self) -> &'static str {
        match self {
            Mark::Recomputed => "",
            Mark::Reported => "†",
            Mark::Derived => "‡",
        }
    }

    /// The signs of a group of cells (a matrix square, a curve point): `†` when any shows the tool's figure,
    /// `‡` when any rests on a derived one, both, or nothing.
    pub fn signs(reported: u32, derived: u32) -> String {
        let mut signs = String::new();
        if reported > 0 {
            signs.push_str(Mark::Reported.sign());
        }
        if derived > 0 {
            signs.push_str(Mark::Derived.sign());
        }
        signs
    }

    /// Hover lines for a group of `cells` of which `reported` and `derived` carry a sign: `† 2 of 3 cells: …`.
    pub fn group_lines(reported: u32, derived: u32, cells: u32) -> Vec<String> {
        [(reported, Mark::Reported), (derived, Mark::Derived)]
            .into_iter()
            .filter(|(count, _)| *count > 0)
            .map(|(count, mark)| {
                format!(
                    "{} {count} of {cells} cells: {}",
                    mark.sign(),
                    mark.meaning()
                )
            })
            .collect()
    }

    /// What the sign means, for hover text and legends.
    pub fn meaning(self) -> &'static str {
        match self {
            Mark::Recomputed => "recomputed from the request rows",
            Mark::Reported => {
                "reported by the tool, not recomputed (the file has no request rows for it)"
            }
            Mark::Derived => {
                "derived: wall latency rebuilt as TTFT + Σ inter-token latencies (the file has no end-to-end latency)"
            }
        }
    }
}

/// One line of the inspector's "reported by the tool vs recomputed" table.
#[derive(Clone, Debug, PartialEq)]
pub struct FigureComparison {
    /// Cells-table column (`p99_wall_ms`, `aggregate_tps`, …).
    pub column: String,
    /// What cellscope computed from the request rows; `None` when the shown value is the tool's.
    pub recomputed: Option<f64>,
    /// What the tool wrote in its file.
    pub reported: f64,
}

impl FigureComparison {
    /// recomputed − reported, when both exist.
    pub fn difference(&self) -> Option<f64> {
        self.recomputed.map(|recomputed| recomputed - self.reported)
    }

    /// The difference relative to the reported figure (`None` when either is missing or the figure is 0).
    pub fn relative_difference(&self) -> Option<f64> {
        self.difference()
            .filter(|_| self.reported != 0.0)
            .map(|difference| difference / self.reported.abs())
    }

    /// The unit of the column, from the statistics' table; `None` for a figure that is no cells-table column.
    pub fn unit(&self) -> Option<crate::stat::Unit> {
        Stat::parse(&self.column).map(Stat::unit)
    }

    /// One of the row's figures with its unit: `3.90 req/s`, `845.12 ms`.
    pub fn value_text(&self, value: f64) -> String {
        self.unit()
            .map_or_else(|| format!("{value:.2}"), |unit| unit.fixed(value))
    }

    /// What the recomputed figure is: its value, or why there is none.
    pub fn recomputed_text(&self) -> String {
        self.recomputed.map_or_else(
            || "— (no request rows: the tool's figure is shown)".to_string(),
            |recomputed| self.value_text(recomputed),
        )
    }

    /// recomputed − reported with its unit and relative to the reported figure: `+0.12 req/s (+3.08 %)`, `—`
    /// without a recomputed figure.
    pub fn difference_text(&self) -> String {
        let Some(difference) = self.difference() else {
            return "—".to_string();
        };
        let sign = if difference < 0.0 { "-" } else { "+" };
        let absolute = self.value_text(difference.abs());
        match self.relative_difference() {
            Some(relative) => format!("{sign}{absolute} ({:+.2} %)", relative * 100.0),
            None => format!("{sign}{absolute}"),
        }
    }
}

/// The tool's figures of a cell next to cellscope's own, in cells-table order, then any other reported figure
/// by name. A figure the cell shows *as* reported has no recomputed value (it is never compared with itself).
pub fn compare_figures(cell: &CellSummary, origin: &CellOrigin) -> Vec<FigureComparison> {
    let ordered = STAT_COLUMNS
        .iter()
        .copied()
        .filter(|column| origin.reported.contains_key(*column))
        .chain(
            origin
                .reported
                .keys()
                .map(String::as_str)
                .filter(|column| !STAT_COLUMNS.contains(column)),
        );
    ordered
        .map(|column| FigureComparison {
            column: column.to_string(),
            recomputed: (!cell.origin.is_reported(column))
                .then(|| cell.stats.column(column))
                .flatten(),
            reported: origin.reported[column],
        })
        .collect()
}

/// One inferred key value of a run and the cells that carry it, for the audit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InferredCount {
    /// The dimension.
    pub dimension: String,
    /// The inferred value.
    pub value: String,
    /// The rule that inferred it.
    pub rule: String,
    /// How many cells carry it.
    pub cells: u32,
}

/// Every distinct inferred (dimension, value, rule) among some cells' origins, with how many cells carry it,
/// in dimension then value order.
pub fn tally_inferred<'a>(origins: impl IntoIterator<Item = &'a CellOrigin>) -> Vec<InferredCount> {
    let mut counts: BTreeMap<(&str, &str, &str), u32> = BTreeMap::new();
    for origin in origins {
        for part in &origin.inferred {
            *counts
                .entry((&part.dimension, &part.value, &part.rule))
                .or_default() += 1;
        }
    }
    counts
        .into_iter()
        .map(|((dimension, value, rule), cells)| InferredCount {
            dimension: dimension.to_string(),
            value: value.to_string(),
            rule: rule.to_string(),
            cells,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_figures_read_back_from_json_to_the_last_bit() {
        // Doubles whose shortest form has 17 significant digits, the ones a float parser that is not correctly
        // rounded can miss by a unit in the last place, and a few plain ones.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut values = vec![
            0.1,
            38.194_622_553_884_98,
            9_007_199_254_740_992.0,
            1e-300,
            123.0,
        ];
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let value = f64::from_bits(state);
            if value.is_finite() {
                values.push(value);
            }
        }
        let origin = CellOrigin {
            reported: values
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("r{i}"), *v))
                .collect(),
            reported_figures: values
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("f{i}"), *v))
                .collect(),
            ..CellOrigin::default()
        };
        let text = serde_json::to_string(&origin).unwrap();
        let back: CellOrigin = serde_json::from_str(&text).unwrap();
        for (name, value) in &origin.reported_figures {
            assert_eq!(
                back.reported_figures[name].to_bits(),
                value.to_bits(),
                "{name}"
            );
        }
        assert_eq!(back, origin);
        let bad = text.replacen("\"f0\":", "\"f0\":\"x\",\"g\":", 1);
        assert!(serde_json::from_str::<CellOrigin>(&bad).is_err());
    }

    #[test]
    fn a_compared_figure_says_its_unit_from_the_statistics_table() {
        let figure = |column: &str, recomputed: Option<f64>, reported: f64| FigureComparison {
            column: column.into(),
            recomputed,
            reported,
        };
        // Request throughput is requests per second, not tokens: 3.9 recomputed against 4 reported.
        let throughput = figure("request_throughput_rps", Some(3.9), 4.0);
        assert_eq!(throughput.value_text(4.0), "4.00 req/s");
        assert_eq!(throughput.difference_text(), "-0.10 req/s (-2.50 %)");
        assert_eq!(
            figure("total_tps", Some(1500.0), 1200.0).difference_text(),
            "+300.00 tok/s (+25.00 %)"
        );
        assert_eq!(
            figure("p99_tpot_ms", None, 8.25).value_text(8.25),
            "8.25 ms"
        );
        assert_eq!(
            figure("p50_interactivity_tps", None, 41.0).value_text(41.0),
            "41.00 tok/s/user"
        );
        assert_eq!(
            figure("p99_tpot_ms", None, 8.25).recomputed_text(),
            "— (no request rows: the tool's figure is shown)"
        );
        assert_eq!(figure("p99_tpot_ms", None, 8.25).difference_text(), "—");
        // A figure that is no column of the cells table is a plain number.
        assert_eq!(figure("duration", Some(2.0), 0.0).value_text(12.5), "12.50");
        assert_eq!(
            figure("duration", Some(2.0), 0.0).difference_text(),
            "+2.00"
        );
    }

    #[test]
    fn scaling_metrics_carry_the_mark_of_their_source() {
        let origin = FigureOrigin {
            reported: vec!["aggregate_tps".into()],
            derived: vec!["p95_wall_ms".into()],
            inferred: vec![],
        };
        assert!(origin.is_reported("aggregate_tps"));
        assert!(origin.is_reported("efficiency"));
        assert!(!origin.is_reported("p95_multiplier"));
        assert!(origin.is_derived("p95_multiplier"));
        assert!(!origin.is_derived("p50_ttft_ms"));
        assert_eq!(
            FigureOrigin::split(&FigureOrigin::join(&origin.reported)),
            origin.reported
        );
        assert!(FigureOrigin::split("").is_empty());
    }

    fn part(dimension: &str, value: &str, rule: &str) -> InferredPart {
        InferredPart {
            dimension: dimension.into(),
            value: value.into(),
            rule: rule.into(),
        }
    }

    #[test]
    fn inferred_values_are_tallied_per_value_and_rule() {
        let origin = |parts: Vec<InferredPart>| CellOrigin {
            inferred: parts,
            ..CellOrigin::default()
        };
        let origins = [
            origin(vec![
                part("backend", "vllm", "cellscope.toml"),
                part("rep", "0", "order"),
            ]),
            origin(vec![
                part("backend", "vllm", "cellscope.toml"),
                part("rep", "1", "order"),
            ]),
            origin(vec![part("backend", "sglang", "engine name in the path")]),
        ];
        let tally = tally_inferred(&origins);
        let text: Vec<String> = tally
            .iter()
            .map(|count| {
                format!(
                    "{}={} {} ({})",
                    count.dimension, count.value, count.cells, count.rule
                )
            })
            .collect();
        assert_eq!(
            text,
            [
                "backend=sglang 1 (engine name in the path)",
                "backend=vllm 2 (cellscope.toml)",
                "rep=0 1 (order)",
                "rep=1 1 (order)"
            ]
        );
    }

    #[test]
    fn reported_figures_sit_next_to_recomputed_ones_and_never_next_to_themselves() {
        let key: crate::CellKey = "r/s/p/b/m/w/n=4/rep=0".parse().unwrap();
        let mut cell = CellSummary::empty(key, crate::CellStatus::Clean);
        cell.stats.p99_wall_ms = Some(1010.0);
        cell.stats.p50_ttft_ms = Some(80.0);
        cell.origin.reported = vec!["p50_ttft_ms".into()];
        let mut origin = CellOrigin::default();
        origin.reported.insert("p50_ttft_ms".into(), 80.0);
        origin.reported.insert("p99_wall_ms".into(), 1000.0);
        origin.reported.insert("request_goodput".into(), 3.5);
        let rows = compare_figures(&cell, &origin);
        let columns: Vec<&str> = rows.iter().map(|row| row.column.as_str()).collect();
        assert_eq!(columns, ["p99_wall_ms", "p50_ttft_ms", "request_goodput"]);
        assert_eq!(rows[0].difference(), Some(10.0));
        assert_eq!(rows[0].relative_difference(), Some(0.01));
        // The shown TTFT *is* the tool's figure: nothing recomputed to set against it.
        assert_eq!((rows[1].recomputed, rows[1].difference()), (None, None));
        assert_eq!(rows[2].recomputed, None);
        assert_eq!(Mark::of(&cell.origin, "p50_ttft_ms"), Mark::Reported);
        assert_eq!(Mark::of(&cell.origin, "p99_wall_ms"), Mark::Recomputed);
    }
}

//! Service-level objectives and the capacity they give a configuration: the highest load at which every latency
//! bound holds, interpolated between the measured load levels (definitions: docs/definitions.md, "SLO capacity").
//!
//! An SLO is a list of upper bounds on latency statistics, written `p99_ttft_ms<=2000,p99_tpot_ms<=100` in links
//! and on the command line, or named by one of the MLPerf presets ([`presets`]).

mod capacity;
pub mod presets;

pub use capacity::{Level, LoadAxis, Outcome, Placed, RepRange, RepValues};

use crate::load::LoadKind;
use crate::stat::Stat;
use crate::suggest::hint;
use crate::summary::CellSummary;
use std::fmt;
use std::str::FromStr;

/// The SLO a view judges by when its link names none: MLPerf's Server bounds for Llama 3.1 8B.
pub const DEFAULT_TEXT: &str = "p99_ttft_ms<=2000,p99_tpot_ms<=100";

/// The statistics a bound may name, as cells-table columns (all in milliseconds, all lower-is-better).
pub const COLUMNS: [&str; 11] = [
    Stat::P99TtftMs.name(),
    Stat::P99TpotMs.name(),
    Stat::P99WallMs.name(),
    Stat::P95TtftMs.name(),
    Stat::P95WallMs.name(),
    Stat::P50TtftMs.name(),
    Stat::MeanTtftMs.name(),
    Stat::MeanTpotMs.name(),
    Stat::P99ItlMs.name(),
    Stat::P50TpotMs.name(),
    Stat::P95TpotMs.name(),
];

/// One upper bound: the SLO holds on this statistic when its value is at most `max`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SloBound {
    /// The statistic, one of [`COLUMNS`].
    pub column: &'static str,
    /// The largest value that meets the bound, in the statistic's unit (ms).
    pub max: f64,
}

/// A service-level objective: bounds that must all hold at once.
#[derive(Clone, Debug, PartialEq)]
pub struct Slo {
    /// The bounds, in the order they were written; each statistic at most once.
    pub bounds: Vec<SloBound>,
}

/// Why a text is not an SLO or a name not a preset; each message names the bad part and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SloError {
    /// The text has no bound at all.
    #[error("an SLO needs at least one bound, such as `p99_ttft_ms<=2000`")]
    Empty,
    /// Two commas with nothing between them, or a comma at either end.
    #[error("an empty bound in `{text}`: write bounds separated by single commas")]
    EmptyPart {
        /// The whole text.
        text: String,
    },
    /// A part without `<=`.
    #[error("`{part}` is not a bound: write `statistic<=max`, such as `p99_ttft_ms<=2000`")]
    NotABound {
        /// The part as written.
        part: String,
    },
    /// A statistic no bound can name.
    #[error("`{part}`: `{column}` is not a statistic an SLO can bound{hint}; the statistics: {}", COLUMNS.join(", "))]
    UnknownColumn {
        /// The part as written.
        part: String,
        /// The statistic as written.
        column: String,
        /// ` (did you mean …?)` or nothing.
        hint: String,
    },
    /// A maximum that is not a finite number ≥ 0.
    #[error("`{part}`: the maximum `{value}` is not a number of milliseconds ≥ 0")]
    BadMax {
        /// The part as written.
        part: String,
        /// The maximum as written.
        value: String,
    },
    /// A statistic bounded twice.
    #[error("`{part}`: `{column}` is bounded twice; give each statistic one bound")]
    Repeated {
        /// The second part naming the statistic.
        part: String,
        /// The statistic.
        column: &'static str,
    },
    /// A preset name that is not in the table.
    #[error("no SLO preset `{name}`{hint}; the presets: {}", presets::names().join(", "))]
    UnknownPreset {
        /// The name as given.
        name: String,
        /// ` (did you mean …?)` or nothing.
        hint: String,
    },
}

impl Slo {
    /// The SLO of an MLPerf preset: its p99 TTFT and p99 TPOT bounds, or for a benchmark bounded on whole
    /// latency its p99 latency bound. The names are those of [`presets::MLPERF_SERVER`] and
    /// [`presets::MLPERF_SERVER_LATENCY`], also as MLPerf's configuration and results tree write them
    /// ([`presets::preset_name`]: `llama3_1-8b` is `llama3.1-8b`, `llama2-70b-99.9` is `llama2-70b`).
    pub fn preset(name: &str) -> Result<Slo, SloError> {
        let wanted = presets::preset_name(name);
        if let Some((_, max)) = presets::MLPERF_SERVER_LATENCY
            .iter()
            .find(|(preset, _)| *preset == wanted)
        {
            return Ok(Slo {
                bounds: vec![SloBound {
                    column: "p99_wall_ms",
                    max: *max,
                }],
            });
        }
        let preset = presets::MLPERF_SERVER
            .iter()
            .find(|preset| preset.name == wanted)
            .ok_or_else(|| SloError::UnknownPreset {
                name: name.to_string(),
                hint: hint(&wanted, presets::names()),
            })?;
        Ok(Slo {
            bounds: vec![
                SloBound {
                    column: "p99_ttft_ms",
                    max: preset.p99_ttft_ms,
                },
                SloBound {
                    column: "p99_tpot_ms",
                    max: preset.p99_tpot_ms,
                },
            ],
        })
    }
}

impl FromStr for Slo {
    type Err = SloError;

    /// Reads `statistic<=max` bounds separated by commas (spaces around the parts ignored, `≤` read as `<=`).
    fn from_str(text: &str) -> Result<Slo, SloError> {
        if text.trim().is_empty() {
            return Err(SloError::Empty);
        }
        let mut bounds: Vec<SloBound> = Vec::new();
        for part in text.split(',').map(str::trim) {
            if part.is_empty() {
                return Err(SloError::EmptyPart {
                    text: text.to_string(),
                });
            }
            let bound = parse_bound(part)?;
            if bounds.iter().any(|known| known.column == bound.column) {
                return Err(SloError::Repeated {
                    part: part.to_string(),
                    column: bound.column,
                });
            }
            bounds.push(bound);
        }
        Ok(Slo { bounds })
    }
}

/// One `statistic<=max` part.
fn parse_bound(part: &str) -> Result<SloBound, SloError> {
    let normalised = part.replace('≤', "<=");
    let Some((column, value)) = normalised.split_once("<=") else {
        return Err(SloError::NotABound {
            part: part.to_string(),
        });
    };
    let (column, value) = (column.trim(), value.trim());
    let Some(known) = COLUMNS.iter().find(|known| **known == column) else {
        return Err(SloError::UnknownColumn {
            part: part.to_string(),
            column: column.to_string(),
            hint: hint(column, COLUMNS),
        });
    };
    match value.parse::<f64>() {
        Ok(max) if max.is_finite() && max >= 0.0 => Ok(SloBound { column: known, max }),
        _ => Err(SloError::BadMax {
            part: part.to_string(),
            value: value.to_string(),
        }),
    }
}

impl fmt::Display for SloBound {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}<={}", self.column, self.max)
    }
}

/// The text form `p99_ttft_ms<=2000,p99_tpot_ms<=100`, which [`FromStr`] reads back to the same SLO.
impl fmt::Display for Slo {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, bound) in self.bounds.iter().enumerate() {
            if position > 0 {
                formatter.write_str(",")?;
            }
            write!(formatter, "{bound}")?;
        }
        Ok(())
    }
}

impl Slo {
    /// The SLO a view or a comparison judges by: `text` (as [`Slo::from_link`] reads it), else the default
    /// ([`DEFAULT_TEXT`]) when `text` is empty or no SLO.
    pub fn or_default(text: &str) -> Slo {
        let text = if text.is_empty() { DEFAULT_TEXT } else { text };
        Slo::from_link(text)
            .or_else(|_| DEFAULT_TEXT.parse())
            .unwrap_or(Slo { bounds: Vec::new() })
    }

    /// An SLO as a link or the command line gives it: bounds (`p99_ttft_ms<=2000,…`) or a preset's name.
    pub fn from_link(text: &str) -> Result<Slo, SloError> {
        if text.contains("<=") || text.contains('≤') {
            text.parse()
        } else {
            Slo::preset(text)
        }
    }

    /// What this SLO says of `cells` ([`Slo::levels`], then [`Slo::capacity`]), with the kind of load for labels:
    /// the one reading of capacity the matrix, the curves and Compare share.
    pub fn capacity_of(&self, cells: &[&CellSummary]) -> (Outcome, LoadAxis) {
        let (levels, axis) = self.levels(cells);
        (self.capacity(&levels), axis)
    }

    /// The levels `cells` give this SLO: the cells at the one kind of load most of them have, grouped by load,
    /// each cell one rep (a square that pools several series is judged on their mean). Also the kind, for labels.
    pub fn levels(&self, cells: &[&CellSummary]) -> (Vec<Level>, LoadAxis) {
        let axis = LoadAxis::most_of(cells.iter().map(|cell| cell.key.load));
        let kind = match axis {
            LoadAxis::RequestRate => LoadKind::Rate,
            LoadAxis::Concurrency => LoadKind::Concurrency,
        };
        let mut levels: Vec<Level> = Vec::new();
        for cell in cells.iter().filter(|cell| cell.key.load.kind() == kind) {
            let Some(load) = cell.key.load.value() else {
                continue;
            };
            let values = self
                .bounds
                .iter()
                .map(|bound| cell.stats.column(bound.column))
                .collect();
            let rep = RepValues {
                rep: cell.key.rep,
                values,
            };
            match levels.iter_mut().find(|level| level.load == load) {
                Some(level) => level.reps.push(rep),
                None => levels.push(Level {
                    load,
                    reps: vec![rep],
                }),
            }
        }
        (levels, axis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_form_reads_bounds_and_writes_them_back() {
        let slo: Slo = " p99_ttft_ms <= 2000 , p99_tpot_ms≤100.5".parse().unwrap();
        assert_eq!(
            slo.bounds,
            [
                SloBound {
                    column: "p99_ttft_ms",
                    max: 2000.0
                },
                SloBound {
                    column: "p99_tpot_ms",
                    max: 100.5
                },
            ]
        );
        assert_eq!(slo.to_string(), "p99_ttft_ms<=2000,p99_tpot_ms<=100.5");
    }

    #[test]
    fn each_bad_text_names_its_bad_part_and_what_was_expected() {
        let error = |text: &str| text.parse::<Slo>().unwrap_err().to_string();
        assert_eq!(
            error(""),
            "an SLO needs at least one bound, such as `p99_ttft_ms<=2000`"
        );
        assert!(error("p99_ttft_ms<=1,,p99_tpot_ms<=2").contains("empty bound"));
        assert_eq!(
            error("p99_ttft_ms<=1,p99_tpot_ms=2"),
            "`p99_tpot_ms=2` is not a bound: write `statistic<=max`, such as `p99_ttft_ms<=2000`"
        );
        let unknown = error("p99_tftt_ms<=2000");
        assert!(
            unknown.starts_with(
                "`p99_tftt_ms<=2000`: `p99_tftt_ms` is not a statistic an SLO can bound (did you mean \
                 `p99_ttft_ms`?); the statistics: p99_ttft_ms, p99_tpot_ms,"
            ),
            "{unknown}"
        );
        assert_eq!(
            error("p99_ttft_ms<=2 s"),
            "`p99_ttft_ms<=2 s`: the maximum `2 s` is not a number of milliseconds ≥ 0"
        );
        for bad in ["-1", "inf", "NaN", ""] {
            assert!(error(&format!("p99_ttft_ms<={bad}")).contains("is not a number"));
        }
        assert!(error("p99_ttft_ms<=1,p99_ttft_ms<=2").contains("bounded twice"));
    }

    #[test]
    fn presets_give_p99_ttft_and_tpot_bounds_and_unknown_names_list_the_presets() {
        assert_eq!(
            Slo::preset("llama2-70b").unwrap().to_string(),
            "p99_ttft_ms<=2000,p99_tpot_ms<=200"
        );
        assert_eq!(
            Slo::preset("llama3_1-8b").unwrap(),
            Slo::preset("llama3.1-8b").unwrap()
        );
        let error = Slo::preset("llama2-70").unwrap_err().to_string();
        assert!(
            error.starts_with(
                "no SLO preset `llama2-70` (did you mean `llama2-70b`?); the presets: llama2-70b,"
            ),
            "{error}"
        );
        // Results directories append the accuracy target; GPT-J is bounded on whole latency.
        for (results_name, preset) in [
            ("llama2-70b-99", "llama2-70b"),
            ("llama2-70b-99.9", "llama2-70b"),
            ("llama3.1-405b", "llama3.1-405b"),
            ("mixtral-8x7b", "mixtral-8x7b"),
            ("Llama3_1-8B-99", "llama3.1-8b"),
        ] {
            assert_eq!(
                Slo::preset(results_name).unwrap(),
                Slo::preset(preset).unwrap()
            );
        }
        assert_eq!(
            Slo::preset("gptj-99").unwrap().to_string(),
            "p99_wall_ms<=20000"
        );
        assert_eq!(
            presets::interactive_name("llama2-70b-99"),
            "llama2-70b-interactive"
        );
        for preset in presets::MLPERF_SERVER {
            let slo = Slo::preset(preset.name).unwrap();
            assert_eq!(slo.to_string().parse::<Slo>().unwrap(), slo);
        }
    }
}

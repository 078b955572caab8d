//! What a History is made of: one run's point (its value, the band of its reps, what changed since the run
//! before) and one change point named by its run.

use super::changepoint::Shift;
use crate::facts::EnvironmentField;
use crate::key::CellKey;
use serde::{Deserialize, Serialize};

/// How a run's time is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeSource {
    /// A time the run's files record.
    Recorded,
    /// The `YYYYMMDD_HHMMSS` its id starts with.
    RunId,
    /// A file's modification time: the run ended no later than that.
    FileModified,
}

impl TimeSource {
    /// `recorded`, `run_id` or `file_modified`, as the API writes it.
    pub fn name(self) -> &'static str {
        match self {
            TimeSource::Recorded => "recorded",
            TimeSource::RunId => "run_id",
            TimeSource::FileModified => "file_modified",
        }
    }

    /// What the table says beside a start time not recorded by the run's files.
    pub fn note(self) -> Option<&'static str> {
        match self {
            TimeSource::Recorded => None,
            TimeSource::RunId => Some("from the run's id"),
            TimeSource::FileModified => {
                Some("from a file's modification time (the run ended by then)")
            }
        }
    }
}

/// One environment field that differs from the run before in the History.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvironmentChange {
    /// The field.
    pub field: EnvironmentField,
    /// Its value in the run before (`None`: not stated).
    pub before: Option<String>,
    /// Its value in this run.
    pub after: Option<String>,
}

impl EnvironmentChange {
    /// `driver 575.57 → 580.65`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} → {}",
            self.field.label(),
            self.before.as_deref().unwrap_or("—"),
            self.after.as_deref().unwrap_or("—")
        )
    }
}

/// One run of a History.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryPoint {
    /// The run.
    pub run: String,
    /// When it started (RFC 3339, UTC).
    pub time: Option<String>,
    /// How that is known.
    pub time_source: Option<TimeSource>,
    /// The mean over the run's reps that have a value and are not excluded from every aggregate; `None` when none
    /// has.
    pub value: Option<f64>,
    /// The lowest rep's value (the band's lower edge).
    pub low: Option<f64>,
    /// The highest rep's value.
    pub high: Option<f64>,
    /// How many reps the value is the mean of.
    pub reps: usize,
    /// The run's first cell of this History, to link to.
    pub cell: CellKey,
    /// Every rep of this run is excluded by the ledger, so the run counts as missing.
    pub excluded: bool,
    /// What differs from the run before in the History: the confounders of this step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<EnvironmentChange>,
}

/// A change point of a History, named by its run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryChangePoint {
    /// The first run after the change.
    pub run: String,
    /// That run's time.
    pub time: Option<String>,
    /// Its position among the History's points.
    pub index: usize,
    /// The two-sided p-value of the t-test of the two pieces.
    pub p_value: f64,
    /// The mean of the piece before.
    pub mean_before: f64,
    /// The mean of the piece from the change on.
    pub mean_after: f64,
    /// mean after / mean before − 1.
    pub relative_change: Option<f64>,
    /// Worse or better by the metric's sense; `None` when the means are equal.
    pub direction: Option<Shift>,
    /// "worse by 25.0% since run r21 (p = 3.2e-7; mean 812 ms → 1,015 ms)".
    pub sentence: String,
}

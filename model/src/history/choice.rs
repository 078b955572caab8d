//! What a History asks besides its slice and metric: the change-point method's window and p-value threshold,
//! the regression rule's last `k` runs and its band, and the earliest run time kept (`since`). Links, the API and
//! the CLI read and write them as `window`, `pvalue`, `k`, `tolerance` (the band: `band` is the curves' reps
//! choice) and `since`.

use super::changepoint::Hunter;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The band the latest run is held against: the previous `k` runs' mean plus or minus some standard deviations
/// of them, or a fraction of their mean.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    /// Mean ± this many sample standard deviations (ddof 1) of the previous runs: `3sd`.
    Sd(f64),
    /// Mean ± this percentage of the mean: `5%` is 5 (kept as written, so a link reads back the same number).
    Percent(f64),
}

impl Band {
    /// Four standard deviations: with the previous 10 runs, a run of a flat series with normal noise falls above
    /// it about once in 500 (Student's t with 9 degrees of freedom beyond 4 / √1.1).
    pub const DEFAULT: Band = Band::Sd(4.0);

    /// The band's half-width around `mean` for the previous runs' `sd` (ddof 1).
    pub fn half_width(self, mean: f64, sd: f64) -> f64 {
        match self {
            Band::Sd(multiple) => multiple * sd,
            Band::Percent(percent) => percent / 100.0 * mean.abs(),
        }
    }
}

/// `3sd`, `5%`.
impl fmt::Display for Band {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Band::Sd(multiple) => write!(f, "{multiple}sd"),
            Band::Percent(percent) => write!(f, "{percent}%"),
        }
    }
}

impl std::str::FromStr for Band {
    type Err = String;

    /// Reads `3sd` (standard deviations, > 0) or `5%` (of the mean, > 0).
    fn from_str(text: &str) -> Result<Band, String> {
        let reason = || {
            format!(
                "`{text}` is not a band; expected standard deviations such as 3sd or a percentage such as 5%"
            )
        };
        let positive = |number: &str| {
            number
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|value| value.is_finite() && *value > 0.0)
                .ok_or_else(reason)
        };
        let text_trimmed = text.trim();
        if let Some(number) = text_trimmed.strip_suffix("sd") {
            positive(number).map(Band::Sd)
        } else if let Some(number) = text_trimmed.strip_suffix('%') {
            positive(number).map(Band::Percent)
        } else {
            Err(reason())
        }
    }
}

/// The History's own choices, with the defaults a link that names none gets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryChoice {
    /// Runs per window of the change-point split step.
    pub window: usize,
    /// The largest p-value a change point keeps.
    pub max_pvalue: f64,
    /// The regression rule looks at the last `k` runs.
    pub k: usize,
    /// The band of the previous `k` runs the latest run is held against.
    pub band: Band,
    /// Only runs that started at or after this time (`2026-11-01` or RFC 3339); runs without a time are then
    /// left out.
    pub since: Option<String>,
}

impl HistoryChoice {
    /// A window of 50 runs and p ≤ 0.001 (the reference implementation's defaults), the last 10 runs, 4
    /// standard deviations, every run.
    pub const DEFAULT: HistoryChoice = HistoryChoice {
        window: 50,
        max_pvalue: 0.001,
        k: 10,
        band: Band::DEFAULT,
        since: None,
    };

    /// The change-point method these choices ask for.
    pub fn hunter(&self) -> Hunter {
        Hunter::new(self.window, self.max_pvalue, 0.0).unwrap_or_default()
    }

    /// The parameters that differ from the defaults, as a link writes them.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let default = HistoryChoice::DEFAULT;
        let mut out = Vec::new();
        if self.window != default.window {
            out.push(("window", self.window.to_string()));
        }
        if self.max_pvalue != default.max_pvalue {
            out.push(("pvalue", self.max_pvalue.to_string()));
        }
        if self.k != default.k {
            out.push(("k", self.k.to_string()));
        }
        if self.band != default.band {
            out.push(("tolerance", self.band.to_string()));
        }
        if let Some(since) = &self.since {
            out.push(("since", since.clone()));
        }
        out
    }

    /// Sets the parameter `name` from `text`, or says why the value cannot be used; `Ok(false)` when `name` is
    /// not one of the History's.
    pub fn set(&mut self, name: &str, text: &str) -> Result<bool, String> {
        let text = text.trim();
        match name {
            "window" => {
                self.window = whole(text, 2, "a window of at least 2 runs")?;
            }
            "pvalue" => {
                self.max_pvalue = text
                    .parse::<f64>()
                    .ok()
                    .filter(|p| *p > 0.0 && *p <= 1.0)
                    .ok_or_else(|| format!("`{text}` is not a p-value threshold; expected a number above 0 and at most 1"))?;
            }
            "k" => self.k = whole(text, 1, "a number of runs, at least 1")?,
            "tolerance" => self.band = text.parse()?,
            "since" => self.since = Some(since(text)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The names [`HistoryChoice::set`] takes.
    pub const NAMES: [&'static str; 5] = ["window", "pvalue", "k", "tolerance", "since"];
}

impl Default for HistoryChoice {
    fn default() -> Self {
        HistoryChoice::DEFAULT
    }
}

/// A whole number of at least `min`.
fn whole(text: &str, min: usize, expected: &str) -> Result<usize, String> {
    text.parse::<usize>()
        .ok()
        .filter(|value| *value >= min)
        .ok_or_else(|| format!("`{text}` is not {expected}"))
}

/// A date `YYYY-MM-DD` or an RFC 3339 time in UTC (`…Z`), kept as written: RFC 3339 UTC times order as text.
fn since(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|part| part.iter().all(u8::is_ascii_digit))
    };
    let date = bytes.len() >= 10
        && digits(0..4)
        && bytes[4] == b'-'
        && digits(5..7)
        && bytes[7] == b'-'
        && digits(8..10);
    let month_day_ok = date
        && (1..=12).contains(&text[5..7].parse::<u32>().unwrap_or(0))
        && (1..=31).contains(&text[8..10].parse::<u32>().unwrap_or(0));
    let rest_ok = bytes.len() == 10
        || (bytes.len() == 20
            && bytes[10] == b'T'
            && digits(11..13)
            && bytes[13] == b':'
            && digits(14..16)
            && bytes[16] == b':'
            && digits(17..19)
            && bytes[19] == b'Z');
    if month_day_ok && rest_ok {
        Ok(text.to_string())
    } else {
        Err(format!(
            "`{text}` is not a date; expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_read_and_write_back() {
        assert_eq!("3sd".parse::<Band>(), Ok(Band::Sd(3.0)));
        assert_eq!("5%".parse::<Band>(), Ok(Band::Percent(5.0)));
        assert_eq!(
            "7%".parse::<Band>().map(|band| band.to_string()),
            Ok("7%".to_string())
        );
        assert_eq!(Band::Sd(2.5).to_string(), "2.5sd");
        assert_eq!(Band::Percent(10.0).to_string(), "10%");
        for bad in ["", "3", "-1sd", "0%", "infsd", "x%"] {
            assert!(bad.parse::<Band>().is_err(), "{bad}");
        }
        assert_eq!(Band::Sd(3.0).half_width(100.0, 2.0), 6.0);
        assert_eq!(Band::Percent(5.0).half_width(-200.0, 2.0), 10.0);
    }

    #[test]
    fn choices_are_set_by_name_and_refused_with_a_reason() {
        let mut choice = HistoryChoice::default();
        assert_eq!(choice.set("window", "30"), Ok(true));
        assert_eq!(choice.set("pvalue", "0.01"), Ok(true));
        assert_eq!(choice.set("k", "3"), Ok(true));
        assert_eq!(choice.set("tolerance", "10%"), Ok(true));
        assert_eq!(choice.set("since", "2026-11-20"), Ok(true));
        assert_eq!(choice.set("metric", "x"), Ok(false));
        assert_eq!(
            choice.pairs(),
            [
                ("window", "30".to_string()),
                ("pvalue", "0.01".to_string()),
                ("k", "3".to_string()),
                ("tolerance", "10%".to_string()),
                ("since", "2026-11-20".to_string())
            ]
        );
        assert!(HistoryChoice::default().pairs().is_empty());
        for (name, bad) in [
            ("window", "1"),
            ("pvalue", "0"),
            ("pvalue", "1.5"),
            ("k", "0"),
            ("since", "2026-13-01"),
            ("since", "yesterday"),
            ("since", "2026-11-01T00:00:00+01:00"),
        ] {
            assert!(choice.set(name, bad).is_err(), "{name}={bad}");
        }
        assert_eq!(choice.set("since", "2026-11-01T02:00:00Z"), Ok(true));
    }
}

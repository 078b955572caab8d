//! The times tools record of when a run started, each in its own clock (epoch seconds, milliseconds or
//! nanoseconds, ISO 8601 with or without a zone, vLLM's `%Y%m%d-%H%M%S`), read into one RFC 3339 UTC string to the
//! second, and a file's modification time the same way (docs/definitions.md#run-start).

use crate::run::record::Started;
use cellscope_model::api::Warning;
use cellscope_model::facts::excerpt;
use chrono::{DateTime, NaiveDateTime, Utc};
use serde_json::Value as Json;
use std::time::SystemTime;

/// How a tool writes a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Clock {
    /// Seconds since the Unix epoch (a number, or a number in a string).
    EpochS,
    /// Nanoseconds since the Unix epoch.
    EpochNs,
    /// ISO 8601: with a zone it is converted to UTC; without one it is taken as UTC.
    Iso,
    /// `%Y%m%d-%H%M%S` (vLLM's `date`), a local time without zone, taken as UTC.
    Compact,
}

impl Clock {
    fn expected(self) -> &'static str {
        match self {
            Clock::EpochS => "a number of seconds since 1970",
            Clock::EpochNs => "a number of nanoseconds since 1970",
            Clock::Iso => "an ISO 8601 date and time",
            Clock::Compact => "a date and time written YYYYMMDD-HHMMSS",
        }
    }
}

/// The earliest time a file could record and the latest: anything outside is a misread unit, not a run.
const PLAUSIBLE_S: std::ops::Range<i64> = 946_684_800..4_102_444_800;

fn rfc3339(time: DateTime<Utc>) -> Option<String> {
    PLAUSIBLE_S
        .contains(&time.timestamp())
        .then(|| time.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

fn from_epoch(value: f64, per_second: f64) -> Option<String> {
    let seconds = value / per_second;
    if !seconds.is_finite() {
        return None;
    }
    DateTime::from_timestamp(seconds.floor() as i64, 0).and_then(rfc3339)
}

/// `text` read on `clock`, as RFC 3339 UTC to the second; `None` when it is not such a time.
pub(crate) fn parse_text(text: &str, clock: Clock) -> Option<String> {
    let text = text.trim();
    match clock {
        Clock::EpochS => from_epoch(text.parse().ok()?, 1.0),
        Clock::EpochNs => from_epoch(text.parse().ok()?, 1e9),
        Clock::Compact => NaiveDateTime::parse_from_str(text, "%Y%m%d-%H%M%S")
            .ok()
            .and_then(|naive| rfc3339(naive.and_utc())),
        Clock::Iso => DateTime::parse_from_rfc3339(text)
            .map(|time| time.with_timezone(&Utc))
            .or_else(|_| {
                // Python's `isoformat()` of a naive time, with a `T` or a space, fractions optional.
                NaiveDateTime::parse_from_str(&text.replacen(' ', "T", 1), "%Y-%m-%dT%H:%M:%S%.f")
                    .map(|naive| naive.and_utc())
            })
            .ok()
            .and_then(rfc3339),
    }
}

/// `value` read on `clock`: a number for the epoch clocks (or a string holding one), a string otherwise.
pub(crate) fn parse(value: &Json, clock: Clock) -> Option<String> {
    match value {
        Json::Number(number) => match clock {
            Clock::EpochS | Clock::EpochNs => {
                // Nanoseconds overflow f64's integers: read them as an integer where they are one.
                if clock == Clock::EpochNs
                    && let Some(ns) = number.as_i64()
                {
                    return DateTime::from_timestamp(ns.div_euclid(1_000_000_000), 0)
                        .and_then(rfc3339);
                }
                parse_text(&number.to_string(), clock)
            }
            Clock::Iso | Clock::Compact => None,
        },
        Json::String(text) => parse_text(text, clock),
        _ => None,
    }
}

/// The start a file records at `key` (`value`, on `clock`): `None` when the key is absent or null, and also when
/// the value is not a time, which adds a warning naming the file and the key.
pub(crate) fn started(
    value: Option<&Json>,
    clock: Clock,
    key: &str,
    file: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Started> {
    let value = value.filter(|value| !value.is_null())?;
    match parse(value, clock) {
        Some(at) => Some(Started {
            at,
            key: key.to_string(),
        }),
        None => {
            warnings.push(unreadable(value, clock, key, file));
            None
        }
    }
}

/// The warning for a recorded time that cannot be read.
pub(crate) fn unreadable(value: &Json, clock: Clock, key: &str, file: &str) -> Warning {
    Warning::warn(
        "unreadable_time",
        format!(
            "`{key}` is {}, not {} between 2000 and 2099; the run's start is not read from it",
            excerpt(&value.to_string(), 60),
            clock.expected()
        ),
    )
    .file(file)
}

/// A modification time as RFC 3339 UTC to the second.
pub(crate) fn modified(time: SystemTime) -> Option<String> {
    rfc3339(DateTime::<Utc>::from(time))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_clock_reads_into_utc_to_the_second() {
        // 1772358900 s is 2026-03-01T09:55:00Z (date -u -d @1772358900).
        assert_eq!(
            parse(&json!(1772358900.75), Clock::EpochS).as_deref(),
            Some("2026-03-01T09:55:00Z")
        );
        assert_eq!(
            parse(&json!(1772358900750123456_i64), Clock::EpochNs).as_deref(),
            Some("2026-03-01T09:55:00Z")
        );
        assert_eq!(
            parse(&json!("20260301-101500"), Clock::Compact).as_deref(),
            Some("2026-03-01T10:15:00Z")
        );
        assert_eq!(
            parse(&json!("2026-05-31T12:04:28-04:00"), Clock::Iso).as_deref(),
            Some("2026-05-31T16:04:28Z")
        );
        assert_eq!(
            parse(&json!("2026-06-18T08:31:17.250113"), Clock::Iso).as_deref(),
            Some("2026-06-18T08:31:17Z")
        );
        assert_eq!(
            parse(&json!("2026-06-18 08:31:17"), Clock::Iso).as_deref(),
            Some("2026-06-18T08:31:17Z")
        );
    }

    #[test]
    fn what_is_not_a_time_is_refused_and_warned_of_by_file_and_key() {
        assert_eq!(parse(&json!("yesterday"), Clock::Iso), None);
        assert_eq!(parse(&json!("2026-13-01"), Clock::Compact), None);
        // Milliseconds read as seconds land centuries away: refused, not shown.
        assert_eq!(parse(&json!(1772358900750_i64), Clock::EpochS), None);
        let mut warnings = Vec::new();
        let got = started(
            Some(&json!("20260231-101500")),
            Clock::Compact,
            "date",
            "a/r.json",
            &mut warnings,
        );
        assert_eq!(got, None);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].kind, "unreadable_time");
        assert_eq!(warnings[0].file.as_deref(), Some("a/r.json"));
        assert!(
            warnings[0].message.contains("`date`"),
            "{}",
            warnings[0].message
        );
        // Absent and null say nothing.
        assert_eq!(started(None, Clock::Iso, "k", "f", &mut warnings), None);
        assert_eq!(
            started(Some(&Json::Null), Clock::Iso, "k", "f", &mut warnings),
            None
        );
        assert_eq!(warnings.len(), 1);
    }
}

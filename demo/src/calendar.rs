//! Civil dates and Unix epoch seconds without a date library: run ids, ISO timestamps with a fixed offset.

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A wall-clock time in a zone with a fixed UTC offset (EDT for TR164 V1; UTC for the V3 pods, whose zone is not
/// stated).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Zone {
    pub offset_s: i64,
}

pub(crate) const EDT: Zone = Zone {
    offset_s: -4 * 3600,
};
pub(crate) const UTC: Zone = Zone { offset_s: 0 };

/// Unix epoch seconds of a local wall-clock time.
pub(crate) fn epoch(zone: Zone, date: (i64, u32, u32), time: (u32, u32, f64)) -> f64 {
    let days = days_from_civil(date.0, date.1, date.2);
    (days * 86_400 - zone.offset_s) as f64 + f64::from(time.0 * 3600 + time.1 * 60) + time.2
}

fn split(zone: Zone, epoch_s: f64) -> (i64, u32, u32, u32, u32, u32, u32) {
    let micros_total = ((epoch_s + zone.offset_s as f64) * 1e6).round() as i64;
    let seconds_total = micros_total.div_euclid(1_000_000);
    let micros = micros_total.rem_euclid(1_000_000) as u32;
    let (year, month, day) = civil_from_days(seconds_total.div_euclid(86_400));
    let of_day = seconds_total.rem_euclid(86_400) as u32;
    (
        year,
        month,
        day,
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        micros,
    )
}

/// ISO 8601 with the zone's offset, to the second: `2026-05-31T12:04:28-04:00`.
pub(crate) fn iso(zone: Zone, epoch_s: f64) -> String {
    let (year, month, day, hour, minute, second, _) = split(zone, epoch_s);
    let sign = if zone.offset_s < 0 { '-' } else { '+' };
    let offset = zone.offset_s.unsigned_abs();
    format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{sign}{:02}:{:02}",
        offset / 3600,
        offset / 60 % 60
    )
}

/// A TR164 run id, `YYYYMMDD_HHMMSS_ffffff`: the local launch time with microseconds.
pub(crate) fn run_id(zone: Zone, epoch_s: f64) -> String {
    let (year, month, day, hour, minute, second, micros) = split(zone, epoch_s);
    format!("{year:04}{month:02}{day:02}_{hour:02}{minute:02}{second:02}_{micros:06}")
}

/// Python's `datetime.isoformat()` of a naive local time with microseconds: `2026-06-18T08:31:17.250113` (AIPerf's
/// `start_time` / `end_time`).
pub(crate) fn iso_naive_micros(zone: Zone, epoch_s: f64) -> String {
    let (year, month, day, hour, minute, second, micros) = split(zone, epoch_s);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{micros:06}")
}

/// `strftime("%Y%m%d-%H%M%S")` (the `date` field of a vLLM benchmark result).
pub(crate) fn compact_stamp(zone: Zone, epoch_s: f64) -> String {
    let (year, month, day, hour, minute, second, _) = split(zone, epoch_s.floor());
    format!("{year:04}{month:02}{day:02}-{hour:02}{minute:02}{second:02}")
}

/// Parses a run id back into epoch seconds in `zone`.
pub(crate) fn parse_run_id(zone: Zone, id: &str) -> Option<f64> {
    let digits =
        |range: std::ops::Range<usize>| id.get(range).and_then(|text| text.parse::<u32>().ok());
    let date = (i64::from(digits(0..4)?), digits(4..6)?, digits(6..8)?);
    let time = (
        digits(9..11)?,
        digits(11..13)?,
        f64::from(digits(13..15)?) + f64::from(digits(16..22)?) / 1e6,
    );
    Some(epoch(zone, date, time))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_round_trip_through_epoch_seconds() {
        let launch = epoch(EDT, (2026, 5, 31), (12, 4, 28.552237));
        assert_eq!(run_id(EDT, launch), "20260531_120428_552237");
        assert_eq!(iso(EDT, launch), "2026-05-31T12:04:28-04:00");
        assert_eq!(iso(UTC, launch), "2026-05-31T16:04:28+00:00");
        let parsed = parse_run_id(UTC, "20260613_055519_963364").unwrap_or_default();
        assert_eq!(run_id(UTC, parsed), "20260613_055519_963364");
        assert_eq!(
            run_id(UTC, parsed + 86_400.0 * 31.0),
            "20260714_055519_963364"
        );
        assert_eq!(iso_naive_micros(UTC, parsed), "2026-06-13T05:55:19.963364");
        assert_eq!(compact_stamp(UTC, parsed), "20260613-055519");
    }
}

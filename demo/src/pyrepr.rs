//! Text the way TR164's Python tooling writes it: `repr(float)` numbers and `csv.writer` lines (CRLF, minimal quoting).

use std::fmt::Write as _;

/// Formats a float exactly as Python's `repr(float)` / `str(float)` does: the shortest decimal that round-trips,
/// positional between 1e-4 and 1e16, scientific (`1e-05`, `1.5e+16`) outside, and `.0` on integral values.
///
/// Rust's `{:e}` already yields the shortest round-trip digits; only the layout differs, so this reuses its digits.
pub fn py_float(value: f64) -> String {
    if value.is_nan() {
        return "nan".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 {
            "inf".to_string()
        } else {
            "-inf".to_string()
        };
    }
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0".to_string()
        } else {
            "0.0".to_string()
        };
    }
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific
        .split_once('e')
        .unwrap_or((scientific.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if value < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exponent) {
        let point = exponent + 1; // digits before the decimal point
        let text = if point <= 0 {
            format!("0.{}{}", "0".repeat(point.unsigned_abs() as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            let (whole, fraction) = digits.split_at(point as usize);
            format!("{whole}.{fraction}")
        };
        format!("{sign}{text}")
    } else {
        let (first, rest) = digits.split_at(1);
        let mantissa = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{sign}{mantissa}e{exponent_sign}{:02}",
            exponent.unsigned_abs()
        )
    }
}

/// Rounds to `decimals` places the way a measurement is stored (`round(x, 3)` for milliseconds).
pub(crate) fn round_to(value: f64, decimals: i32) -> f64 {
    let factor = 10f64.powi(decimals);
    (value * factor).round() / factor
}

/// Appends one CSV field with Python's `QUOTE_MINIMAL` rule: quoted only when it holds a comma, a quote or a line break.
pub(crate) fn push_field(line: &mut String, field: &str) {
    if field.contains([',', '"', '\r', '\n']) {
        line.push('"');
        line.push_str(&field.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(field);
    }
}

/// Builds one CRLF-terminated CSV record from already formatted fields.
pub(crate) fn csv_record<'a>(fields: impl IntoIterator<Item = &'a str>) -> String {
    let mut line = String::new();
    for (position, field) in fields.into_iter().enumerate() {
        if position > 0 {
            line.push(',');
        }
        push_field(&mut line, field);
    }
    line.push_str("\r\n");
    line
}

/// Appends an integer without allocating.
pub(crate) fn push_int(line: &mut String, value: impl std::fmt::Display) {
    let _ = write!(line, "{value}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_match_python_repr() {
        let cases = [
            (12.0, "12.0"),
            (0.1, "0.1"),
            (1.5, "1.5"),
            (-2.25, "-2.25"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.6, "123456789012345.6"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.000012345, "1.2345e-05"),
            (1780243468.123456, "1780243468.123456"),
            (0.30000000000000004, "0.30000000000000004"),
            (100.0, "100.0"),
            (0.0, "0.0"),
            (2.5e-300, "2.5e-300"),
        ];
        for (value, expected) in cases {
            assert_eq!(py_float(value), expected, "{value:?}");
        }
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(
            csv_record(["a", "b c", "d,e", "say \"hi\""]),
            "a,b c,\"d,e\",\"say \"\"hi\"\"\"\r\n"
        );
    }
}

//! Number fields: the correctly rounded `f64` of a field's text, by a short path for the unsigned decimals
//! benchmark files write and the full parser for everything else.

/// A number field as the correctly rounded `f64`, or `None` when it is not a number.
///
/// Six of these are read for every ok row, most of them digits with one point (`249`, `1033.93`,
/// `1781297070.152552`): [`unsigned_decimal`] reads those; a field it does not take (a sign, a blank around the
/// number, an exponent, too many digits, not a number at all) is read by [`any_number`], the same value either
/// way.
#[inline]
pub(crate) fn parse_number(field: &[u8]) -> Option<f64> {
    unsigned_decimal(field).or_else(|| any_number(field))
}

/// The full reading of a number field: surrounding ASCII blanks trimmed, then [`plain_decimal`], then
/// fast-float2 (exponents, `inf`, `nan`, long mantissas; correctly rounded).
#[inline(never)]
fn any_number(field: &[u8]) -> Option<f64> {
    let field = field.trim_ascii();
    plain_decimal(field).or_else(|| fast_float2::parse(field).ok())
}

/// Exact powers of ten: every one up to 10^22 is representable in an `f64`.
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// [`plain_decimal`] of a field without a sign: digits, or digits, a point and digits, at most 19 digits in
/// all, read in two tight loops (the integer part, then the fraction). Returns `None`, deciding nothing, for
/// anything else and for a value [`plain_decimal`] leaves to the full parser (a mantissa above 2^53), so that
/// [`any_number`] reads it. Where it gives a value, the value is [`plain_decimal`]'s: the same integer, divided
/// by the same power of ten.
///
/// Number fields are most of what a row costs to read, and [`plain_decimal`]'s single loop, which tests every
/// byte for a point, a sign and the position of the point, took about 14 instructions a byte; these loops take
/// four digits at a time where they can ([`four_digits`]) and about 10 instructions for each other digit, and
/// the blanks are trimmed only when there are any.
#[inline(always)]
fn unsigned_decimal(field: &[u8]) -> Option<f64> {
    let length = field.len();
    // At most 19 digits and a point: the mantissa stays below 2^64. The sums below wrap instead of checking for
    // overflow, which a longer run of digits in a field of at most 20 bytes could reach; such a field is
    // refused before its mantissa is used.
    if length > 20 {
        return None;
    }
    let (mantissa, index) = digit_run(field, 0, 0);
    if index == length {
        if length == 0 || length > 19 || mantissa > 1 << 53 {
            return None;
        }
        return Some(mantissa as f64);
    }
    // A point needs a digit on each side, as in every number these files hold.
    if field[index] != b'.' || index == 0 || index + 1 == length {
        return None;
    }
    let fraction_digits = length - index - 1;
    let (mantissa, index) = digit_run(field, index + 1, mantissa);
    if index < length || mantissa > 1 << 53 {
        return None;
    }
    Some(mantissa as f64 / EXACT_POWERS_OF_TEN[fraction_digits])
}

/// `mantissa` followed by the digits of `field` from `index` on (four at a time where it can, the sums wrapping),
/// and the index of the first byte that is not a digit.
#[inline(always)]
fn digit_run(field: &[u8], mut index: usize, mut mantissa: u64) -> (u64, usize) {
    while let Some(four) = four_digits(field, index) {
        mantissa = mantissa.wrapping_mul(10_000).wrapping_add(four);
        index += 4;
    }
    while index < field.len() {
        let digit = field[index].wrapping_sub(b'0');
        if digit >= 10 {
            break;
        }
        mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(digit));
        index += 1;
    }
    (mantissa, index)
}

/// The value of the four bytes of `field` from `index` if all four are ASCII digits (the first the most
/// significant), read as one word: a timestamp's sixteen digits take four steps instead of sixteen.
#[inline(always)]
fn four_digits(field: &[u8], index: usize) -> Option<u64> {
    let word = u32::from_le_bytes(field.get(index..index + 4)?.try_into().ok()?);
    // A digit is 0x30–0x39: high nibble 3, and adding 6 keeps it 3. (A byte of 0xFA or more carries into the
    // next byte when 6 is added, but it fails the first test anyway.)
    if (word & 0xF0F0_F0F0) != 0x3030_3030
        || (word.wrapping_add(0x0606_0606) & 0xF0F0_F0F0) != 0x3030_3030
    {
        return None;
    }
    // Pairs (10 × first + second, in the first and third bytes), then the two pairs (100 × first + second).
    let values = word & 0x0F0F_0F0F;
    let pairs = values.wrapping_mul(10).wrapping_add(values >> 8);
    Some(u64::from(
        ((pairs & 0x00FF_00FF).wrapping_mul(1 + (100 << 16)) >> 16) & 0xFFFF,
    ))
}

/// The common shapes of this file's numbers (`249`, `1033.93`, `1781297070.152552`, an optional `-`) read
/// directly: when the digits without the point form an integer of at most 2^53 and at most 22 of them follow
/// the point, both that integer and the power of ten are exact in an `f64`, and one IEEE division gives the
/// correctly rounded value, the same as a full parser's (Clinger's fast path). Anything else is left to the full
/// parser.
pub(crate) fn plain_decimal(field: &[u8]) -> Option<f64> {
    let (negative, digits) = match field.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, field),
    };
    // Nineteen digits stay below 2^64, so the mantissa below cannot overflow.
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut mantissa = 0u64;
    let mut fraction_digits = None;
    for (position, byte) in digits.iter().enumerate() {
        match byte {
            b'0'..=b'9' => mantissa = mantissa * 10 + u64::from(byte - b'0'),
            // A point needs a digit on each side, as in every number these files hold.
            b'.' if fraction_digits.is_none() && position > 0 && position + 1 < digits.len() => {
                fraction_digits = Some(digits.len() - position - 1);
            }
            _ => return None,
        }
    }
    if mantissa > 1 << 53 {
        return None;
    }
    // A whole number returns before the division (by 1, exact either way): token counts are whole, and in a
    // profile about a quarter of this function's samples wait on the division. (A `match` on the two cases
    // compiled to one division by a looked-up power, 1 included.)
    let Some(digits) = fraction_digits else {
        let value = mantissa as f64;
        return Some(if negative { -value } else { value });
    };
    let value = mantissa as f64 / EXACT_POWERS_OF_TEN[digits];
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::super::tests::xorshift;
    use super::*;

    #[test]
    fn the_short_path_reads_what_the_full_reading_reads() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let mut decided = 0;
        let mut cases = 0;
        for _ in 0..400_000 {
            let length = 1 + next(23) as usize;
            let mut text: Vec<u8> = (0..length).map(|_| b'0' + next(10) as u8).collect();
            if next(4) > 0 {
                let point = next(length as u64 + 1) as usize;
                text.insert(point, b'.');
            }
            if next(16) == 0 {
                text.insert(next(text.len() as u64 + 1) as usize, b'.');
            }
            if next(12) == 0 {
                text.insert(0, b'-');
            }
            // Now and then a byte that is not a digit: next to the digits in ASCII, blanks, bytes whose low bits
            // are a digit's, an exponent.
            if next(6) == 0 {
                let at = next(text.len() as u64) as usize;
                text[at] = [
                    b'/', b':', b' ', b'e', b'+', b'-', 0x7f, 0xb0, 0xb9, 0xae, 0xfa, 0xff, 0x00,
                ][next(13) as usize];
            }
            if next(20) == 0 {
                text.push(b' ');
            }
            let full = any_number(&text);
            cases += 1;
            if let Some(value) = unsigned_decimal(&text) {
                decided += 1;
                assert_eq!(
                    Some(value.to_bits()),
                    full.map(f64::to_bits),
                    "{:?}",
                    String::from_utf8_lossy(&text)
                );
            }
            assert_eq!(
                parse_number(&text).map(f64::to_bits),
                full.map(f64::to_bits),
                "{:?}",
                String::from_utf8_lossy(&text)
            );
        }
        // Most generated fields take the short path, so the comparison above tested it.
        assert!(decided > cases / 3, "{decided} of {cases}");
    }

    #[test]
    fn the_files_shapes_take_the_short_path_and_the_rest_the_full_reading() {
        for (text, value) in [
            ("249", 249.0),
            ("1033.93", 1033.93),
            ("23.272", 23.272),
            ("1781297070.152552", 1781297070.152552),
            ("9007199254740992", 9007199254740992.0),
            ("0.5", 0.5),
        ] {
            assert_eq!(unsigned_decimal(text.as_bytes()), Some(value), "{text}");
        }
        for (text, value) in [
            ("-1.5", Some(-1.5)),
            ("1e5", Some(1e5)),
            (" 12 ", Some(12.0)),
            ("9007199254740993", Some(9007199254740993.0)),
            // Seventeen digits (effective_tps) make a mantissa above 2^53.
            ("123.79948352402967", Some(123.79948352402967)),
            ("12345678901234567890", Some(12345678901234567890.0)),
            ("1.", Some(1.0)),
            (".5", Some(0.5)),
            ("1.2.3", None),
            ("", None),
        ] {
            assert_eq!(unsigned_decimal(text.as_bytes()), None, "{text}");
            assert_eq!(parse_number(text.as_bytes()), value, "{text}");
        }
    }
}

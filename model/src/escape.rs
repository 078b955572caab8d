//! Percent-escaping of the characters that separate the parts of a text form (a key's `/`, a configuration's
//! `,` and `=`), shared by every text form that nests one inside another.

use std::fmt;

/// Writes `text` with each of the ASCII characters `special` (which includes `%`) percent-escaped as `%XX`.
pub(crate) fn write_escaped(
    f: &mut fmt::Formatter<'_>,
    text: &str,
    special: &[char],
) -> fmt::Result {
    for part in text.split_inclusive(special) {
        match part.chars().last() {
            Some(last) if special.contains(&last) => {
                write!(f, "{}%{:02X}", &part[..part.len() - 1], u32::from(last))?;
            }
            _ => f.write_str(part)?,
        }
    }
    Ok(())
}

/// The inverse of [`write_escaped`]: `None` for a `%` that does not start the escape of one of `special` (hex
/// digits in either case).
pub(crate) fn read_escaped(text: &str, special: &[char]) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(position) = rest.find('%') {
        out.push_str(&rest[..position]);
        let hex = rest.get(position + 1..position + 3)?;
        if !hex.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return None;
        }
        let escaped = char::from(u8::from_str_radix(hex, 16).ok()?);
        if !special.contains(&escaped) {
            return None;
        }
        out.push(escaped);
        rest = &rest[position + 3..];
    }
    out.push_str(rest);
    Some(out)
}

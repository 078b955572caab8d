//! The header above an exported chart, laid out for the image's width: each line of the view in words wrapped
//! to fit (a link, which has no spaces, breaks between characters), then the legend in as many rows as it
//! needs, so that no text runs past the image's edge.

/// CSS pixels between the image's left and right edges and the header's text.
pub const MARGIN: f64 = 10.0;
/// CSS pixels above the first line.
const TOP: f64 = 8.0;
/// CSS pixels from one line of text to the next, and from one legend row to the next.
const LINE_HEIGHT: f64 = 16.0;
/// CSS pixels from the last line to the centre of the legend's first row.
const LEGEND_GAP: f64 = 6.0;
/// CSS pixels below the centre of the legend's last row.
const BOTTOM: f64 = 16.0;
/// Font sizes in CSS pixels: the first line (the view's name) and every other line.
const TITLE_PX: f64 = 14.0;
const TEXT_PX: f64 = 11.0;
/// A legend entry: its marker, then the label this far right of the entry's left edge, then this much space.
const MARKER_WIDTH: f64 = 14.0;
const ENTRY_GAP: f64 = 10.0;

/// The header of an export, in CSS pixels.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// Each drawn line: its text, its font size and the top of its text box.
    pub lines: Vec<(String, f64, f64)>,
    /// Each legend entry, in the order given: its left edge and the centre of its row.
    pub legend: Vec<(f64, f64)>,
    /// From the image's top to the chart below the header.
    pub height: f64,
}

impl Header {
    /// The header of `lines` (the first in a larger font) and a legend of `legend` labels, `width` CSS pixels
    /// wide.
    pub fn layout(lines: &[String], legend: &[&str], width: f64) -> Header {
        let room = (width - 2.0 * MARGIN).max(TEXT_PX);
        let mut drawn = Vec::new();
        for (index, line) in lines.iter().enumerate() {
            let size = if index == 0 { TITLE_PX } else { TEXT_PX };
            for part in wrap(line, room, size) {
                let top = TOP + LINE_HEIGHT * drawn.len() as f64;
                drawn.push((part, size, top));
            }
        }
        let first_row = TOP + LINE_HEIGHT * drawn.len() as f64 + LEGEND_GAP;
        let (mut x, mut row) = (MARGIN, 0.0);
        let mut entries = Vec::new();
        for label in legend {
            let entry = MARKER_WIDTH + text_width(label, TEXT_PX);
            // An entry that would pass the right edge starts the next row (unless it is a row's first).
            if x > MARGIN && x + entry > width - MARGIN {
                x = MARGIN;
                row += 1.0;
            }
            entries.push((x, first_row + LINE_HEIGHT * row));
            x += entry + ENTRY_GAP;
        }
        Header {
            lines: drawn,
            legend: entries,
            height: first_row + LINE_HEIGHT * row + BOTTOM,
        }
    }
}

/// How wide one character is drawn at `px`, at most, in the sans-serif fonts browsers use (DejaVu Sans, the
/// widest of the common ones, then Liberation Sans and Arial): an upper bound, so that a line that fits by this
/// estimate fits on the image.
fn char_width(c: char, px: f64) -> f64 {
    let em = match c {
        ' ' => 0.32,
        'i' | 'j' | 'l' | 'f' | 't' | 'r' | 'I' | '.' | ',' | ':' | ';' | '\'' | '|' | '!'
        | '(' | ')' | '[' | ']' | '{' | '}' | '/' | '\\' | '-' | '·' | '`' => 0.42,
        'm' | 'w' | 'M' | 'W' | '@' | '%' | '&' => 1.0,
        '=' | '+' | '<' | '>' | '~' | '^' | '#' | '*' | '"' | '_' | '$' | '?' => 0.84,
        c if c.is_ascii_uppercase() => 0.8,
        c if c.is_ascii() => 0.64,
        _ => 1.0,
    };
    em * px
}

/// How wide `text` is drawn at `px`, at most ([`char_width`]).
pub fn text_width(text: &str, px: f64) -> f64 {
    text.chars().map(|c| char_width(c, px)).sum()
}

/// `text` in lines of at most `room` CSS pixels at `px`: broken at spaces, and a word longer than a line (a
/// link) broken between characters, after a `&`, `/`, `?` or `,` where one is near the end. Every character but
/// the spaces at a break is kept.
fn wrap(text: &str, room: f64, px: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0.0;
    for word in text.split_inclusive(' ') {
        let width = text_width(word.trim_end(), px);
        if used + width <= room {
            line.push_str(word);
            used += text_width(word, px);
            continue;
        }
        // A word that fits a line of its own starts the next line; a longer one (a link) goes on from here.
        if width <= room {
            if !line.trim_end().is_empty() {
                lines.push(line.trim_end().to_string());
            }
            line = String::new();
            used = 0.0;
        }
        for c in word.chars() {
            let advance = char_width(c, px);
            if !line.is_empty() && c != ' ' && used + advance > room {
                let (head, tail) = split_at_break(&line);
                lines.push(head);
                line = tail;
                used = text_width(&line, px);
            }
            line.push(c);
            used += advance;
        }
    }
    if !line.trim_end().is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// A full line of a long word split after its last `&`, `/`, `?` or `,` in its second half (the rest begins the
/// next line), or as it is.
fn split_at_break(line: &str) -> (String, String) {
    let half = line.len() / 2;
    match line
        .char_indices()
        .rfind(|(at, c)| *at >= half && matches!(c, '&' | '/' | '?' | ','))
    {
        Some((at, c)) => {
            let cut = at + c.len_utf8();
            (line[..cut].to_string(), line[cut..].to_string())
        }
        None => (line.to_string(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINK: &str = "link: http://127.0.0.1:8080/?view=compare&a=vllm&b=sglang&per=workload&metric=p95_wall_ms\
                        &model=mistral-7b,llama3.1-8b,qwen2.5-7b&include=excluded&at=c1f4de8954baf2e4";

    #[test]
    fn a_long_link_is_broken_into_lines_that_each_fit_and_keep_every_character() {
        let lines = vec![
            "cellscope compare: p95 latency".to_string(),
            LINK.to_string(),
        ];
        let header = Header::layout(&lines, &[], 400.0);
        assert!(header.lines.len() > 2, "{:?}", header.lines);
        for (text, size, _) in &header.lines {
            // 380 px of room; each character at most one em wide, so by character count too.
            assert!(text_width(text, *size) <= 380.0, "{text}");
            assert!(text.chars().count() as f64 * 0.32 * size <= 380.0, "{text}");
        }
        let joined: String = header.lines[1..]
            .iter()
            .map(|(text, ..)| text.as_str())
            .collect();
        assert_eq!(joined, LINK);
        // The link breaks after a separator where one is near the end of a line.
        assert!(
            header.lines[1]
                .0
                .starts_with("link: http://127.0.0.1:8080/"),
            "{:?}",
            header.lines
        );
        assert!(
            header.lines[1..header.lines.len() - 1]
                .iter()
                .all(|(text, ..)| text.ends_with(['&', '/', '?', ','])),
            "{:?}",
            header.lines
        );
        // Lines follow one another 16 px apart; the header ends below the last.
        let tops: Vec<f64> = header.lines.iter().map(|(.., top)| *top).collect();
        assert!(
            tops.windows(2).all(|pair| pair[1] - pair[0] == 16.0),
            "{tops:?}"
        );
        assert_eq!(header.height, tops[tops.len() - 1] + 16.0 + 6.0 + 16.0);
    }

    #[test]
    fn words_wrap_at_spaces_and_a_short_header_is_as_tall_as_before() {
        let text = "filters: model = mistral-7b; workload = long_prefill_8k; load 2–16".to_string();
        let wrapped = wrap(&text, 200.0, 11.0);
        assert!(wrapped.len() > 1, "{wrapped:?}");
        assert_eq!(wrapped.join(" "), text);
        assert!(
            wrapped
                .iter()
                .all(|line| !line.starts_with(' ') && !line.ends_with(' '))
        );
        // Three lines that fit and a one-row legend: 8 + 3 × 16 + 22 px, the header's height for one row.
        let lines: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let header = Header::layout(&lines, &["vllm", "sglang"], 800.0);
        assert_eq!(header.lines.len(), 3);
        assert_eq!(header.height, 8.0 + 3.0 * 16.0 + 22.0);
        assert_eq!(header.legend[0], (10.0, 8.0 + 48.0 + 6.0));
    }

    #[test]
    fn a_legend_wider_than_the_image_takes_more_rows() {
        let labels: Vec<String> = (0..12)
            .map(|index| format!("Llama-3.3-70B-Instruct-{index}"))
            .collect();
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        let header = Header::layout(&[], &labels, 600.0);
        let rows: std::collections::BTreeSet<u64> =
            header.legend.iter().map(|(_, y)| *y as u64).collect();
        assert!(rows.len() > 1, "{:?}", header.legend);
        for ((x, _), label) in header.legend.iter().zip(&labels) {
            assert!(
                x + MARKER_WIDTH + text_width(label, TEXT_PX) <= 590.0,
                "{label} at {x}"
            );
        }
        let last = header.legend.last().unwrap().1;
        assert_eq!(header.height, last + 16.0);
    }
}

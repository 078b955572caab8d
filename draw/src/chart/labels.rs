//! Text on the charts: estimated widths, labels placed apart, and text shortened or wrapped to fit.

/// A box in backend pixels: left, top, right, bottom.
pub(super) type Rect = (i32, i32, i32, i32);

/// The width of `text` in backend pixels at `font_px`, as the chart estimates it (a little wider than most
/// sans-serif text, so that estimated boxes that do not overlap are drawn apart).
pub(super) fn text_width(text: &str, font_px: i32) -> i32 {
    (text.chars().count() as f64 * f64::from(font_px) * 0.6).ceil() as i32
}

/// Places chart labels so none covers another or leaves its panel's plotting area: each label tries its own
/// spot, then steps up and down by its height, then to the left, until it finds room; a label with no room
/// anywhere near is left out (its point's tooltip still says it) rather than drawn over another.
pub(super) struct LabelPlacer {
    pub(super) placed: Vec<Rect>,
    /// Where labels may go (the plotting area).
    bounds: Rect,
}

impl LabelPlacer {
    pub(super) fn new(bounds: Rect) -> LabelPlacer {
        LabelPlacer {
            placed: Vec::new(),
            bounds,
        }
    }

    /// Keeps `rect` free of labels (a point's marker).
    pub(super) fn reserve(&mut self, rect: Rect) {
        self.placed.push(rect);
    }

    /// Where to put a label of `text` whose preferred left-centre point is `(x, y)` (backend pixels), and the
    /// box it takes; `None` when no spot near it is free.
    pub(super) fn place(
        &mut self,
        text: &str,
        (x, y): (i32, i32),
        font_px: i32,
    ) -> Option<((i32, i32), Rect)> {
        let width = text_width(text, font_px);
        let height = font_px + 4;
        let overlaps = |a: &Rect, b: &Rect| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
        let (left, top, right, bottom) = self.bounds;
        // Kept inside the plotting area: a label starting past its right edge moves left.
        let x = x.min(right - width).max(left);
        let rect_at = |(x, y): (i32, i32)| (x, y - height / 2, x + width, y + height / 2);
        let inside = |rect: &Rect| rect.1 >= top && rect.3 <= bottom;
        let spot = [0, -width - 12]
            .into_iter()
            .flat_map(|dx| {
                (0..9).map(move |step| {
                    (
                        dx,
                        if step % 2 == 0 {
                            step / 2
                        } else {
                            -(step + 1) / 2
                        },
                    )
                })
            })
            .map(|(dx, step)| ((x + dx).max(left), y + step * height))
            .find(|spot| {
                let rect = rect_at(*spot);
                inside(&rect) && !self.placed.iter().any(|other| overlaps(&rect, other))
            })?;
        let rect = rect_at(spot);
        self.placed.push(rect);
        Some((spot, rect))
    }
}

/// `text` shortened with `…` to fit `width` backend pixels at `font_px` (as [`text_width`] estimates it): in its
/// middle when `middle` (a run id's end tells it apart), else at its end; unchanged when it fits.
pub(super) fn fit_text(text: &str, width: i32, font_px: i32, middle: bool) -> String {
    if text_width(text, font_px) <= width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let keep = ((f64::from(width) / (f64::from(font_px) * 0.6)) as usize).saturating_sub(1);
    let head = if middle { keep.div_ceil(2) } else { keep };
    let tail = keep - head;
    let mut fitted: String = chars[..head.min(chars.len())].iter().collect();
    fitted.push('…');
    fitted.extend(&chars[chars.len() - tail.min(chars.len())..]);
    fitted
}

/// `text` broken at spaces into lines that fit `width` backend pixels at `font_px` (as [`text_width`] estimates
/// it); a word longer than a line is shortened with `…`.
pub(super) fn wrap_text(text: &str, width: i32, font_px: i32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if text_width(&format!("{line} {word}"), font_px) <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(fit_text(word, width, font_px, true)),
        }
    }
    lines
}

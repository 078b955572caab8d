//! Colours: Okabe–Ito for categories (distinguishable with every common colour-vision deficiency) and a
//! viridis ramp for the matrix scale (perceptually uniform, colour-blind safe, readable in greyscale).

/// Okabe–Ito, black last.
pub const CATEGORICAL: [(u8, u8, u8); 8] = [
    (0, 114, 178),
    (230, 159, 0),
    (0, 158, 115),
    (204, 121, 167),
    (86, 180, 233),
    (213, 94, 0),
    (240, 228, 66),
    (0, 0, 0),
];

/// A marker shape: the second channel when a dimension has more values than there are colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
}

impl Marker {
    /// The glyph a legend shows for it.
    pub fn glyph(self) -> &'static str {
        match self {
            Marker::Circle => "●",
            Marker::Square => "■",
            Marker::Triangle => "▲",
        }
    }
}

/// The colour and marker of the value at `position` among all values of its dimension in the data (not in the
/// view): the same value has the same look in every view and export, and up to eight values never share a
/// colour. Beyond eight, the marker tells values of the same colour apart.
pub fn style(position: usize) -> ((u8, u8, u8), Marker) {
    let markers = [Marker::Circle, Marker::Square, Marker::Triangle];
    (
        CATEGORICAL[position % CATEGORICAL.len()],
        markers[(position / CATEGORICAL.len()) % markers.len()],
    )
}

pub fn css((red, green, blue): (u8, u8, u8)) -> String {
    format!("rgb({red},{green},{blue})")
}

/// Viridis sampled at nine stops.
const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
];

/// The viridis colour at `t` in [0, 1].
pub fn viridis(t: f64) -> (u8, u8, u8) {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let position = t * (VIRIDIS.len() - 1) as f64;
    let lower = position.floor() as usize;
    let upper = (lower + 1).min(VIRIDIS.len() - 1);
    let fraction = position - lower as f64;
    let mix =
        |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * fraction).round() as u8;
    let (a, b) = (VIRIDIS[lower], VIRIDIS[upper]);
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Black or white, whichever reads better on `background`.
pub fn text_on((red, green, blue): (u8, u8, u8)) -> &'static str {
    let luminance = 0.2126 * f64::from(red) + 0.7152 * f64::from(green) + 0.0722 * f64::from(blue);
    if luminance > 140.0 { "#111" } else { "#fff" }
}

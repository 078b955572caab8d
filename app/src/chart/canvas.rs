//! The charts' canvas backend: plotters' drawing calls on a 2D canvas context, drawn as plotters-canvas draws
//! them, but with consecutive strokes of one style gathered into one path and consecutive filled circles of one
//! colour into one fill, and a style set on the context only when it changes.
//!
//! A chart of many panels makes thousands of small calls (mesh lines, threshold dashes, whiskers, points); each
//! `stroke()` or `fill()` and each style string the canvas parses costs far more than adding a segment to a
//! path, so gathering them is what keeps a repaint within a frame. Only consecutive calls are gathered, so what
//! is drawn over what is unchanged.

use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontTransform,
};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// What a drawing call on the canvas failed with.
#[derive(Debug)]
pub(crate) struct CanvasError(String);

impl std::fmt::Display for CanvasError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "canvas error: {}", self.0)
    }
}

impl std::error::Error for CanvasError {}

fn failed(error: JsValue) -> DrawingErrorKind<CanvasError> {
    DrawingErrorKind::DrawingError(CanvasError(
        error.as_string().unwrap_or_else(|| format!("{error:?}")),
    ))
}

/// The path being gathered: what it will be drawn with once a different call comes.
#[derive(Clone, Debug, PartialEq)]
enum Open {
    None,
    /// Stroked with the context's current stroke style and line width.
    Stroke,
    /// Filled with the context's current fill style.
    Fill,
}

/// A plotters backend drawing on a canvas (see the module documentation).
pub(crate) struct CanvasBackend {
    canvas: HtmlCanvasElement,
    context: CanvasRenderingContext2d,
    open: Open,
    /// The styles last set on the context, so an unchanged one is not set (and parsed) again.
    stroke: Option<(Color, u32)>,
    fill: Option<Color>,
    font: Option<String>,
    anchor: Option<(&'static str, &'static str)>,
}

/// A colour as the backend compares it: its channels and the bits of its opacity. It is written as CSS text
/// only when the context's style changes, not on every drawing call (formatting the opacity, a float, took a
/// few tenths of a millisecond of each chart).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Color {
    rgb: (u8, u8, u8),
    alpha_bits: u64,
}

impl Color {
    fn of(color: BackendColor) -> Color {
        Color {
            rgb: color.rgb,
            alpha_bits: color.alpha.to_bits(),
        }
    }

    fn css(self) -> String {
        let (red, green, blue) = self.rgb;
        format!(
            "rgba({red},{green},{blue},{})",
            f64::from_bits(self.alpha_bits)
        )
    }
}

impl CanvasBackend {
    pub(crate) fn with_canvas_object(canvas: HtmlCanvasElement) -> Option<CanvasBackend> {
        let context: CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
        Some(CanvasBackend {
            canvas,
            context,
            open: Open::None,
            stroke: None,
            fill: None,
            font: None,
            anchor: None,
        })
    }

    /// Draws the path gathered so far.
    fn flush(&mut self) {
        match std::mem::replace(&mut self.open, Open::None) {
            Open::None => {}
            Open::Stroke => self.context.stroke(),
            Open::Fill => self.context.fill(),
        }
    }

    /// Continues the open stroke when it has this style, else draws it and opens one with this style.
    fn stroke_with(&mut self, style: &impl BackendStyle) {
        let wanted = (Color::of(style.color()), style.stroke_width());
        if self.open == Open::Stroke && self.stroke == Some(wanted) {
            return;
        }
        self.flush();
        if self.stroke != Some(wanted) {
            self.context.set_stroke_style_str(&wanted.0.css());
            self.context.set_line_width(f64::from(wanted.1));
            self.stroke = Some(wanted);
        }
        self.context.begin_path();
        self.open = Open::Stroke;
    }

    /// Sets the fill style unless it is already the context's.
    fn set_fill(&mut self, color: BackendColor) {
        let wanted = Color::of(color);
        if self.fill != Some(wanted) {
            self.context.set_fill_style_str(&wanted.css());
            self.fill = Some(wanted);
        }
    }

    /// Continues the open fill when it has this colour, else draws it and opens one with this colour.
    fn fill_with(&mut self, color: BackendColor) {
        if self.open == Open::Fill && self.fill == Some(Color::of(color)) {
            return;
        }
        self.flush();
        self.set_fill(color);
        self.context.begin_path();
        self.open = Open::Fill;
    }
}

/// A drawing that ends without `present` (plotters does not require it) still shows its last path.
impl Drop for CanvasBackend {
    fn drop(&mut self) {
        self.flush();
    }
}

impl DrawingBackend for CanvasBackend {
    type ErrorType = CanvasError;

    fn get_size(&self) -> (u32, u32) {
        (self.canvas.width(), self.canvas.height())
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<CanvasError>> {
        Ok(())
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<CanvasError>> {
        self.flush();
        Ok(())
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if color.alpha == 0.0 {
            return Ok(());
        }
        self.flush();
        self.set_fill(color);
        self.context
            .fill_rect(f64::from(point.0), f64::from(point.1), 1.0, 1.0);
        Ok(())
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let (from, to) = fine_hor_ver_lines(from, to);
        self.stroke_with(style);
        self.context.move_to(from.0, from.1);
        self.context.line_to(to.0, to.1);
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let (x, y) = (f64::from(upper_left.0), f64::from(upper_left.1));
        let (width, height) = (
            f64::from(bottom_right.0 - upper_left.0),
            f64::from(bottom_right.1 - upper_left.1),
        );
        if fill {
            self.flush();
            self.set_fill(style.color());
            self.context.fill_rect(x, y, width, height);
        } else {
            self.stroke_with(style);
            self.context.rect(x, y, width, height);
        }
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        let mut path = path.into_iter();
        if let Some(start) = path.next() {
            self.stroke_with(style);
            self.context.move_to(f64::from(start.0), f64::from(start.1));
            for next in path {
                self.context.line_to(f64::from(next.0), f64::from(next.1));
            }
        }
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        // Polygons are filled one by one: bands of one colour may overlap, and their translucency should add.
        self.flush();
        let mut path = path.into_iter();
        self.context.begin_path();
        if let Some(start) = path.next() {
            self.set_fill(style.color());
            self.context.move_to(f64::from(start.0), f64::from(start.1));
            for next in path {
                self.context.line_to(f64::from(next.0), f64::from(next.1));
            }
            self.context.close_path();
        }
        self.context.fill();
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        if fill {
            self.fill_with(style.color());
        } else {
            self.stroke_with(style);
        }
        let (x, y, radius) = (f64::from(center.0), f64::from(center.1), f64::from(radius));
        // A sub-path of its own: no line joins it to the previous shape.
        self.context.move_to(x + radius, y);
        self.context
            .arc(x, y, radius, 0.0, std::f64::consts::PI * 2.0)
            .map_err(failed)?;
        Ok(())
    }

    /// Measured on a canvas of its own: plotters' own estimate puts each text into a `<span>` in the page and
    /// reads its size back, which made the browser lay the whole page out again for every label of every
    /// drawing (a third of a curves repaint's script time).
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<CanvasError>> {
        measure_text(&font_of(style), text)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<CanvasError>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        self.flush();
        let (mut x, mut y) = (pos.0, pos.1);
        let degrees = match style.transform() {
            FontTransform::None => 0.0,
            FontTransform::Rotate90 => 90.0,
            FontTransform::Rotate180 => 180.0,
            FontTransform::Rotate270 => 270.0,
        };
        let radians = degrees / 180.0 * std::f64::consts::PI;
        if radians != 0.0 {
            self.context.save();
            self.context
                .translate(f64::from(x), f64::from(y))
                .map_err(failed)?;
            self.context.rotate(radians).map_err(failed)?;
            x = 0;
            y = 0;
        }
        let anchor = (
            match style.anchor().v_pos {
                VPos::Top => "top",
                VPos::Center => "middle",
                VPos::Bottom => "bottom",
            },
            match style.anchor().h_pos {
                HPos::Left => "start",
                HPos::Right => "end",
                HPos::Center => "center",
            },
        );
        if self.anchor != Some(anchor) {
            self.context.set_text_baseline(anchor.0);
            self.context.set_text_align(anchor.1);
            self.anchor = Some(anchor);
        }
        self.set_fill(color);
        let font = font_of(style);
        if self.font.as_ref() != Some(&font) {
            self.context.set_font(&font);
            self.font = Some(font);
        }
        self.context
            .fill_text(text, f64::from(x), f64::from(y))
            .map_err(failed)?;
        if radians != 0.0 {
            // `restore` also brings back the styles saved with the transform: set them afresh next time.
            self.context.restore();
            self.stroke = None;
            self.fill = None;
            self.font = None;
            self.anchor = None;
        }
        Ok(())
    }
}

/// The CSS font of a text style, as the canvas context takes it.
fn font_of(style: &impl BackendTextStyle) -> String {
    format!(
        "{} {}px {}",
        style.style().as_str(),
        style.size(),
        style.family().as_str()
    )
}

/// Measured texts are kept up to this many, then forgotten all at once (axis labels repeat from one drawing to
/// the next; a long session should not grow without bound).
const MEASURED_TEXTS_KEPT: usize = 4096;

thread_local! {
    /// A 2D context of a canvas that is never put into the page (so measuring on it makes no layout), and the
    /// sizes measured so far by font and text.
    static MEASURING: std::cell::RefCell<Option<Measuring>> = const { std::cell::RefCell::new(None) };
}

struct Measuring {
    context: CanvasRenderingContext2d,
    font: String,
    sizes: std::collections::HashMap<(String, String), (u32, u32)>,
}

/// The width and height of `text` in `font`, in whole CSS pixels as the page's layout would give them: the
/// advance width rounded, and the font's ascent plus descent (the height of a line of it).
fn measure_text(font: &str, text: &str) -> Result<(u32, u32), DrawingErrorKind<CanvasError>> {
    MEASURING.with(|measuring| {
        let mut measuring = measuring.borrow_mut();
        if measuring.is_none() {
            let canvas: HtmlCanvasElement = web_sys::window()
                .and_then(|window| window.document())
                .and_then(|document| document.create_element("canvas").ok())
                .and_then(|element| element.dyn_into().ok())
                .ok_or_else(|| failed(JsValue::from_str("cannot make a canvas to measure text")))?;
            let context: CanvasRenderingContext2d = canvas
                .get_context("2d")
                .map_err(failed)?
                .and_then(|context| context.dyn_into().ok())
                .ok_or_else(|| failed(JsValue::from_str("a canvas without a 2D context")))?;
            *measuring = Some(Measuring {
                context,
                font: String::new(),
                sizes: std::collections::HashMap::new(),
            });
        }
        let Some(measuring) = measuring.as_mut() else {
            return Err(failed(JsValue::from_str("no canvas to measure text")));
        };
        let key = (font.to_string(), text.to_string());
        if let Some(size) = measuring.sizes.get(&key) {
            return Ok(*size);
        }
        if measuring.font != font {
            measuring.context.set_font(font);
            measuring.font = font.to_string();
        }
        let metrics = measuring.context.measure_text(text).map_err(failed)?;
        let height = metrics.font_bounding_box_ascent() + metrics.font_bounding_box_descent();
        let size = (metrics.width().round() as u32, height.round() as u32);
        if measuring.sizes.len() >= MEASURED_TEXTS_KEPT {
            measuring.sizes.clear();
        }
        measuring.sizes.insert(key, size);
        Ok(size)
    })
}

/// Moves a horizontal or vertical line by half a pixel so it covers whole pixels instead of blurring over two
/// (as plotters-canvas does).
fn fine_hor_ver_lines(from: BackendCoord, end: BackendCoord) -> ((f64, f64), (f64, f64)) {
    let mut from = (f64::from(from.0), f64::from(from.1));
    let mut end = (f64::from(end.0), f64::from(end.1));
    if from.0 == end.0 {
        from.0 -= 0.5;
        end.0 -= 0.5;
    }
    if from.1 == end.1 {
        from.1 -= 0.5;
        end.1 -= 0.5;
    }
    (from, end)
}

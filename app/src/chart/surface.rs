//! One drawing backend for every chart the app draws: the page's canvas or an SVG export.
//!
//! The chart code is generic over plotters' `DrawingBackend`; drawn on two backend types it was compiled twice,
//! which cost the bundle tens of kilobytes. Through this enum each chart is compiled once and picks the backend
//! at run time, one branch per drawing call.

use super::canvas::CanvasBackend;
use plotters::prelude::SVGBackend;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// The page's canvas, or an SVG document being written into a string.
pub(crate) enum Surface<'a> {
    Canvas(CanvasBackend),
    Svg(SVGBackend<'a>),
}

impl Surface<'_> {
    /// The 2D context of `canvas`, if it has one.
    pub(crate) fn canvas(canvas: web_sys::HtmlCanvasElement) -> Option<Surface<'static>> {
        CanvasBackend::with_canvas_object(canvas).map(Surface::Canvas)
    }

    /// An SVG document of `size` pixels, written into `text` when the drawing ends.
    pub(crate) fn svg(text: &mut String, size: (u32, u32)) -> Surface<'_> {
        Surface::Svg(SVGBackend::with_string(text, size))
    }
}

/// What a drawing call failed with, on either backend.
#[derive(Debug)]
pub(crate) struct SurfaceError(String);

impl std::fmt::Display for SurfaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SurfaceError {}

fn lift<E: std::error::Error + Send + Sync>(
    error: DrawingErrorKind<E>,
) -> DrawingErrorKind<SurfaceError> {
    match error {
        DrawingErrorKind::DrawingError(error) => {
            DrawingErrorKind::DrawingError(SurfaceError(error.to_string()))
        }
        DrawingErrorKind::FontError(error) => DrawingErrorKind::FontError(error),
    }
}

/// Calls the same method on whichever backend this is.
macro_rules! either {
    ($self:ident, $backend:ident => $call:expr) => {
        match $self {
            Surface::Canvas($backend) => $call.map_err(lift),
            Surface::Svg($backend) => $call.map_err(lift),
        }
    };
}

impl DrawingBackend for Surface<'_> {
    type ErrorType = SurfaceError;

    fn get_size(&self) -> (u32, u32) {
        match self {
            Surface::Canvas(backend) => backend.get_size(),
            Surface::Svg(backend) => backend.get_size(),
        }
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<SurfaceError>> {
        either!(self, backend => backend.ensure_prepared())
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<SurfaceError>> {
        either!(self, backend => backend.present())
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<SurfaceError>> {
        either!(self, backend => backend.draw_pixel(point, color))
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<SurfaceError>> {
        either!(self, backend => backend.draw_line(from, to, style))
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<SurfaceError>> {
        either!(self, backend => backend.draw_rect(upper_left, bottom_right, style, fill))
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<SurfaceError>> {
        either!(self, backend => backend.draw_path(path, style))
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<SurfaceError>> {
        either!(self, backend => backend.fill_polygon(path, style))
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<SurfaceError>> {
        either!(self, backend => backend.draw_circle(center, radius, style, fill))
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<SurfaceError>> {
        either!(self, backend => backend.estimate_text_size(text, style))
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<SurfaceError>> {
        either!(self, backend => backend.draw_text(text, style, pos))
    }
}

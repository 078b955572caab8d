//! What the app draws, as plain functions of the model's figures: the curves, distributions and Compare charts on
//! any plotters backend (the page's canvas, PNG and SVG exports), the matrix as HTML, and the colours of both.
//!
//! Nothing here touches the browser, so it builds and is tested natively without the app's web dependencies;
//! the app (`app/`) supplies the canvas, the widths and the events.

pub mod chart;
pub mod compare;
pub mod header;
pub mod history;
pub mod matrix;
pub mod palette;

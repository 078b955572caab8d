//! The curves' exports: the plotted series as CSV and the chart as PNG or SVG, each carrying the view in words
//! with the link that reopens it pinned to its snapshot (the images with the legend too). Their code is a chunk
//! of its own, loaded the first time an export is asked for, so the view's first download does not carry it.

use super::{Curves, chart_warnings, draw_on};
use crate::browser;
use cellscope_draw::chart::{ExportFrame, curves_height, export_header_height};
use cellscope_model::explore::{Facet, marks_note};
use cellscope_model::export::{describe_view, file_name, series_csv};
use leptos::prelude::*;
use leptos::wasm_split::{SplitLoaderError, wasm_split};
use plotters::prelude::*;

/// What an export button asks for.
#[derive(Clone, Copy)]
pub(super) enum Export {
    SeriesCsv,
    Png,
    Svg,
}

impl Curves {
    /// Makes `export`, once the exports' chunk is loaded.
    pub(super) fn export(self, export: Export) {
        browser::when_loaded(exports(), move |run| run(self, export));
    }
}

// A split point as in `views.rs`: the macro's `extern` declarations are its only unsafe code.
#[allow(unsafe_code)] // SAFETY: see `views.rs`.
#[wasm_split(later_curves_export, wasm_split_path = ::leptos::wasm_split, fallible)]
fn exports() -> Result<fn(Curves, Export), SplitLoaderError> {
    Ok(|curves, export| match export {
        Export::SeriesCsv => curves.export_series(),
        Export::Png => curves.export_png(),
        Export::Svg => curves.export_svg(),
    })
}

impl Curves {
    /// What an export carries: the view in words, with the link that reopens it pinned to its snapshot.
    fn export_lines(self) -> Vec<String> {
        let metric = self.chart_metric.get_untracked();
        let kind = self.load_kind();
        self.ctx
            .state
            .with_untracked(|state| describe_view(state, metric, kind, &browser::href()))
    }

    fn export_name(self, extension: &str) -> String {
        let metric = self.chart_metric.get_untracked();
        self.ctx
            .state
            .with_untracked(|state| file_name(state, metric, extension))
    }

    fn export_series(self) {
        let metric = self.chart_metric.get_untracked();
        let csv = self.facets.with_untracked(|facets| {
            self.ctx
                .state
                .with_untracked(|state| series_csv(facets, state, metric, &self.export_lines()))
        });
        browser::download(&self.export_name("csv"), "text/csv", csv.as_bytes());
    }

    /// The image exports are drawn afresh at the page's size with the description and legend above the chart,
    /// as tall as the header wrapped to that width needs.
    fn export_size(self, facets: &[Facet], lines: &[String]) -> (f64, f64) {
        let width = self.width.get_untracked();
        let header = self.colors.with_untracked(|styles| {
            export_header_height(
                lines,
                &styles.keys().map(String::as_str).collect::<Vec<_>>(),
                width,
            )
        });
        (width, curves_height(facets.len(), width) + header)
    }

    /// The images carry the note on reported and derived figures as a line of their header (the CSV as a
    /// comment, written by `series_csv`).
    fn image_lines(self) -> Vec<String> {
        let mut lines = self.export_lines();
        lines.extend(self.facets.with_untracked(|facets| marks_note(facets)));
        lines.extend(chart_warnings(self.facets, self.unequal, true));
        lines
    }

    fn export_png(self) {
        let lines = self.image_lines();
        let frame = ExportFrame { lines: &lines };
        let url = self.facets.with_untracked(|facets| {
            let (width, height) = self.export_size(facets, &lines);
            crate::chart::png_data_url(width, height, |root, scale| {
                draw_on(root, facets, &self.look(), scale, Some(&frame))
            })
        });
        if let Some(url) = url {
            browser::download_url(&self.export_name("png"), &url);
        }
    }

    fn export_svg(self) {
        let lines = self.image_lines();
        let frame = ExportFrame { lines: &lines };
        let mut svg = String::new();
        self.facets.with_untracked(|facets| {
            let (width, height) = self.export_size(facets, &lines);
            let root = crate::chart::Surface::svg(&mut svg, (width as u32, height as u32))
                .into_drawing_area();
            let _ = draw_on(&root, facets, &self.look(), 1.0, Some(&frame));
        });
        browser::download(&self.export_name("svg"), "image/svg+xml", svg.as_bytes());
    }
}

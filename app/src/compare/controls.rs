//! Compare's controls: the dimension compared and its two sides, the groups, the metric, α, and the exports of
//! the table and the forest plot, whose code is a chunk loaded the first time an export is asked for.

use super::{Compare, available_width};
use crate::browser;
use crate::controls::slice_count;
use cellscope_draw::chart::{draw_frame, export_header_height};
use cellscope_draw::compare as plot;
use cellscope_model::Dimension;
use cellscope_model::compare::{COMPARABLE, CONTRASTABLE, spec_of_view};
use cellscope_model::export::{describe_view, file_name};
use cellscope_model::view_state::ViewState;
use leptos::prelude::*;
use leptos::wasm_split::{SplitLoaderError, wasm_split};
use plotters::prelude::*;

pub(super) fn controls(compare: Compare) -> impl IntoView {
    let Compare {
        ctx, comparison, ..
    } = compare;
    // The sides as compared: the link's, or the defaults the comparison chose (once per change, for both
    // pickers and the swap).
    let sides = Memo::new(move |_| {
        ctx.working.with(|cells| {
            ctx.state
                .with(|state| spec_of_view(state, cells).map(|spec| (spec.a, spec.b)))
                .unwrap_or_default()
        })
    });
    view! {
        <section class="controls" id="compare-controls">
            {by_choice(compare)}
            <label>"a " {side_select(compare, sides, "compare-a", true)}</label>
            <button id="compare-swap" title="Swap a and b (every Δ changes sign)" on:click=move |_| {
                let (a, b) = sides.get_untracked();
                ctx.update(|state| { state.compare.a = Some(b); state.compare.b = Some(a); });
            }>"⇄"</button>
            <label>"b " {side_select(compare, sides, "compare-b", false)}</label>
            {per_choice(compare)}
            <label>"metric "
                <select id="compare-metric" on:change=move |event| {
                    if let Some(metric) = cellscope_model::metric::Metric::parse(&event_target_value(&event)) {
                        ctx.update(|state| state.metric = metric);
                    }
                }>
                    {COMPARABLE.into_iter().map(|metric| view! {
                        <option value=metric.name() selected=move || comparison.with(|result| result.as_ref().map(|c| c.spec.metric).ok()) == Some(metric)>{metric.label()}</option>
                    }).collect_view()}
                </select>
            </label>
            <Show when=move || comparison.with(|result| result.as_ref().map(|c| c.spec.metric).ok()) == Some(cellscope_model::metric::Metric::SloCapacity)>
                {crate::controls::slo_control()}
            </Show>
            <label>"α "
                <input id="compare-alpha" type="number" step="0.01" min="0.001" max="0.5"
                    prop:value=move || ctx.state.with(|state| state.compare.alpha.to_string())
                    on:change=move |event| {
                        if let Ok(alpha) = event_target_value(&event).parse::<f64>()
                            && alpha > 0.0 && alpha < 1.0
                        {
                            ctx.update(|state| state.compare.alpha = alpha);
                        }
                    }/>
            </label>
            {slice_count()}
            <span class="exports">
                <button id="export-compare-csv" title="The table, with the view in comment lines" on:click=move |_| compare.export(Export::TableCsv)
                    disabled=move || comparison.with(Result::is_err)>"table CSV"</button>
                <button id="export-png" title="The forest plot with the view and legend" on:click=move |_| compare.export(Export::Png)
                    disabled=move || comparison.with(Result::is_err)>"PNG"</button>
                <button id="export-svg" title="The forest plot with the view and legend" on:click=move |_| compare.export(Export::Svg)
                    disabled=move || comparison.with(Result::is_err)>"SVG"</button>
            </span>
        </section>
    }
}

/// The dimension whose two values are compared; a change of it forgets the sides.
fn by_choice(compare: Compare) -> impl IntoView {
    let ctx = compare.ctx;
    view! {
        <label>"compare "
            <select id="compare-by" on:change=move |event| {
                if let Some(by) = Dimension::parse(&event_target_value(&event)) {
                    ctx.update(|state| {
                        state.compare.by = by;
                        state.compare.a = None;
                        state.compare.b = None;
                        if state.compare.per == Some(by) {
                            state.compare.per = None;
                        }
                    });
                }
            }>
                {move || ctx.dimension_choices(&CONTRASTABLE).into_iter().map(|dimension| view! {
                    <option value=dimension.name() selected=move || ctx.state.with(|state| state.compare.by == dimension)>{dimension.name()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// The picker of side a (`is_a`) or b among the values of the compared dimension.
fn side_select(
    compare: Compare,
    sides: Memo<(String, String)>,
    id: &'static str,
    is_a: bool,
) -> impl IntoView {
    let ctx = compare.ctx;
    view! {
        <select id=id on:change=move |event| {
            let value = event_target_value(&event);
            ctx.update(|state| if is_a { state.compare.a = Some(value) } else { state.compare.b = Some(value) });
        }>
            {move || {
                let by = ctx.state.with(|state| state.compare.by);
                let current = sides.with(|(a, b)| if is_a { a.clone() } else { b.clone() });
                // A link's side that is not in the data stays shown as chosen, marked, rather than the
                // picker falling back to a value that is not in effect.
                let chosen = ctx.state.with(|state| if is_a { state.compare.a.clone() } else { state.compare.b.clone() });
                let values = ctx.values_of(by);
                let absent = chosen.filter(|chosen| !values.contains(chosen)).map(|chosen| view! {
                    <option value=chosen.clone() selected=true>{format!("{chosen} (not in the data)")}</option>
                });
                let options = values.into_iter().map(|value| {
                    let selected = value == current;
                    view! { <option value=value.clone() selected=selected>{value.clone()}</option> }
                }).collect_view();
                view! { {absent} {options} }
            }}
        </select>
    }
}

/// The dimension that splits the pairs into groups, or none.
fn per_choice(compare: Compare) -> impl IntoView {
    let ctx = compare.ctx;
    view! {
        <label>"per "
            <select id="compare-per" on:change=move |event| {
                let value = event_target_value(&event);
                ctx.update(|state| state.compare.per = Dimension::parse(&value));
            }>
                <option value="none" selected=move || ctx.state.with(|state| state.compare.per.is_none())>"none (one group)"</option>
                {move || ctx.dimension_choices(&CONTRASTABLE).into_iter().map(|dimension| view! {
                    <option value=dimension.name() selected=move || ctx.state.with(|state| state.compare.per == Some(dimension))>{dimension.name()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// What an export button asks for.
#[derive(Clone, Copy)]
enum Export {
    TableCsv,
    Png,
    Svg,
}

impl Compare {
    /// Makes `export`, once the exports' chunk is loaded.
    fn export(self, export: Export) {
        browser::when_loaded(exports(), move |run| run(self, export));
    }
}

// A split point as in `views.rs`: the macro's `extern` declarations are its only unsafe code.
#[allow(unsafe_code)] // SAFETY: see `views.rs`.
#[wasm_split(later_compare_export, wasm_split_path = ::leptos::wasm_split, fallible)]
fn exports() -> Result<fn(Compare, Export), SplitLoaderError> {
    Ok(|compare, export| match export {
        Export::TableCsv => compare.export_csv(),
        Export::Png => compare.export_image(false),
        Export::Svg => compare.export_image(true),
    })
}

// Exports: the forest plot with the view in words and the legend above it, and the table as CSV.
impl Compare {
    /// The view as compared, with the sides it defaulted to and its metric: what an export describes and names.
    fn exported_view(self) -> (ViewState, cellscope_model::metric::Metric) {
        let mut state = self.ctx.state.get_untracked();
        let spec = self
            .comparison
            .with_untracked(|result| result.as_ref().ok().map(|c| c.spec.clone()));
        let metric = spec.as_ref().map_or(state.metric, |spec| spec.metric);
        if let Some(spec) = spec {
            state.compare.a = Some(spec.a);
            state.compare.b = Some(spec.b);
        }
        (state, metric)
    }

    fn export_lines(self) -> Vec<String> {
        let (state, metric) = self.exported_view();
        describe_view(&state, metric, None, &browser::href())
    }

    fn export_name(self, extension: &str) -> String {
        let (state, metric) = self.exported_view();
        file_name(&state, metric, extension)
    }

    fn export_image(self, svg: bool) {
        let Ok(comparison) = self.comparison.get_untracked() else {
            return;
        };
        let mut lines = self.export_lines();
        lines.push(comparison.pair_pooling());
        let legend = plot::legend(&comparison);
        let width = self.width.get_untracked().max(available_width());
        let height = plot::forest_height(comparison.groups.len())
            + export_header_height(
                &lines,
                &legend
                    .iter()
                    .map(|(label, ..)| label.as_str())
                    .collect::<Vec<_>>(),
                width,
            );
        if svg {
            let mut text = String::new();
            {
                let root = crate::chart::Surface::svg(&mut text, (width as u32, height as u32))
                    .into_drawing_area();
                if let Ok(chart) = draw_frame(&root, &lines, &legend, 1.0) {
                    let _ = plot::draw_forest(&chart, &comparison, 1.0);
                }
            }
            browser::download(&self.export_name("svg"), "image/svg+xml", text.as_bytes());
            return;
        }
        let url = crate::chart::png_data_url(width, height, |root, scale| {
            let chart = draw_frame(root, &lines, &legend, scale)?;
            plot::draw_forest(&chart, &comparison, scale)
        });
        if let Some(url) = url {
            browser::download_url(&self.export_name("png"), &url);
        }
    }

    fn export_csv(self) {
        let Ok(comparison) = self.comparison.get_untracked() else {
            return;
        };
        let lines = self.export_lines();
        let csv = cellscope_model::export::comparison_csv(&comparison, &lines);
        browser::download(&self.export_name("csv"), "text/csv", csv.as_bytes());
    }
}

//! `performance.mark` / `measure` helpers: the browser tests read these to measure first paint and repaint.

use std::time::Duration;

thread_local! {
    /// The page's `performance`, looked up once: a lookup is two calls into JavaScript and a type check, and one
    /// change makes a few dozen marks and measures, which would otherwise add their own cost to what they time.
    static PERFORMANCE: Option<web_sys::Performance> =
        web_sys::window().and_then(|window| window.performance());
    /// Whether `first-chart` has been marked on this page (see [`mark_first_chart`]).
    static FIRST_CHART_MARKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn with_performance(work: impl FnOnce(&web_sys::Performance)) {
    PERFORMANCE.with(|performance| {
        if let Some(performance) = performance {
            work(performance);
        }
    });
}

pub(crate) fn mark(name: &str) {
    with_performance(|performance| {
        let _ = performance.mark(name);
    });
}

/// Marks `first-chart` the first time a chart is drawn on this page, and only then: a mark made on every drawing
/// would pile up in the page's timeline for as long as it stays open.
pub(crate) fn mark_first_chart() {
    if !FIRST_CHART_MARKED.with(|marked| marked.replace(true)) {
        mark("first-chart");
    }
}

/// Measures from the mark `start` to now under `name`. Without a mark `start` the browser refuses, and nothing
/// is measured. (Looking the mark up first would cost a search of the page's whole timeline on every measure.)
pub(crate) fn measure(name: &str, start: &str) {
    with_performance(|performance| {
        let _ = performance.measure_with_start_mark(name, start);
    });
}

pub(crate) fn clear(name: &str) {
    with_performance(|performance| performance.clear_marks_with_mark_name(name));
}

/// Runs `work` between the marks `<name>-start` and a measure `name`, so a profile of the page shows how long
/// each phase of a repaint took.
pub(crate) fn timed<T>(name: &str, work: impl FnOnce() -> T) -> T {
    let start = format!("{name}-start");
    clear(&start);
    mark(&start);
    let result = work();
    measure(name, &start);
    result
}

/// Measures the repaint a view-state change causes, from the mark `filter-change`:
/// - `repaint`: until every DOM update and canvas drawing it causes is done. The views update in reactive
///   effects, which Leptos runs as microtasks after the change; a zero-delay timeout set now runs after all of
///   them, so it sees the work done (and any style and layout the browser did in between).
/// - `painted`: until the first task after the next frame, which adds the wait for the display's frame.
pub(crate) fn measure_repaint() {
    leptos::prelude::set_timeout(
        || {
            measure("repaint", "filter-change");
            leptos::prelude::request_animation_frame(|| {
                leptos::prelude::set_timeout(
                    || measure("painted", "filter-change"),
                    Duration::ZERO,
                );
            });
        },
        Duration::ZERO,
    );
}

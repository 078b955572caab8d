//! `performance.mark` / `measure` helpers: the browser tests read these to measure first paint and repaint.

use std::time::Duration;

fn performance() -> Option<web_sys::Performance> {
    web_sys::window()?.performance()
}

pub fn mark(name: &str) {
    if let Some(performance) = performance() {
        let _ = performance.mark(name);
    }
}

/// Measures from the mark `start` to now under `name`, if `start` exists.
pub fn measure(name: &str, start: &str) {
    if let Some(performance) = performance()
        && performance.get_entries_by_name(start).length() > 0
    {
        let _ = performance.measure_with_start_mark(name, start);
    }
}

pub fn clear(name: &str) {
    if let Some(performance) = performance() {
        performance.clear_marks_with_mark_name(name);
    }
}

/// Runs `work` between the marks `<name>-start` and a measure `name`, so a profile of the page shows how long
/// each phase of a repaint took.
pub fn timed<T>(name: &str, work: impl FnOnce() -> T) -> T {
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
pub fn measure_repaint() {
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

//! `performance.mark` / `measure` helpers: the browser tests read these to measure first paint and repaint.

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

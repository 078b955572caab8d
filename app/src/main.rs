//! The cellscope explorer: a Leptos (CSR) app that slices the boundary matrix, overlays curves, compares two
//! sides with paired statistics, inspects cells and audits provenance. All numbers come from the model crate,
//! the same code the server and CLI use.

mod api;
mod app;
mod audit;
mod browser;
mod chart;
mod compare;
mod controls;
mod curves;
mod history;
mod inspector;
mod live;
mod matrix;
mod offline;
mod perf;
mod state;
mod views;

fn main() {
    console_error_panic_hook::set_once();
    perf::mark("app-start");
    // The static "Loading cellscope…" of index.html stands until the app takes over.
    if let Some(boot) = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.get_element_by_id("boot-loading"))
    {
        boot.remove();
    }
    leptos::mount::mount_to_body(app::App);
}

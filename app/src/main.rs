//! The cellscope explorer: a Leptos (CSR) app that slices the boundary matrix, overlays curves, inspects cells
//! and audits provenance. All numbers come from the model crate, the same code the server and CLI use.

mod api;
mod app;
mod audit;
mod browser;
mod chart;
mod controls;
mod curves;
mod inspector;
mod matrix;
mod palette;
mod perf;
mod state;

fn main() {
    console_error_panic_hook::set_once();
    perf::mark("app-start");
    leptos::mount::mount_to_body(app::App);
}

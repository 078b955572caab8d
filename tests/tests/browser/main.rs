//! The browser end-to-end tests, one module per area, built as one test binary.
//!
//! Each test binary links the WebDriver client, the HTTP stack and the harness; ten of them spent more of a CI run
//! compiling and linking than some of them spent running. Every test here holds the harness's process-wide lock
//! while it has a server and a browser, so they run one at a time exactly as they did in separate binaries. The
//! object-storage tests, which need no browser, stay a binary of their own (`tests/tests/object_storage.rs`).

mod audit;
mod chunks;
mod compare;
mod configurations;
mod connections;
mod curves_axes;
mod formats;
mod history;
mod hostile;
mod layout;
mod load_and_slo;
mod loads_drawn;
mod offline;
mod pooling;
mod serving_metrics;
mod smoke;
mod views;

//! Browser end-to-end tests for cellscope: a real `cellscope serve` on a loopback port over the demo data, driven
//! through Debian's headless Chromium by chromedriver (WebDriver, with the `fantoccini` client).
//!
//! # Running
//!
//! `cargo xtask e2e` (or the whole `cargo xtask ci`) builds what the tests need (demo data, the web bundle, a
//! server embedding it, Chromium and ChromeDriver) and runs `cargo test -p cellscope-e2e` (`ci`: `cargo test
//! --workspace`, every test in one build) with these environment variables:
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `CELLSCOPE_BIN` | a `cellscope` binary (debug or release) with the app embedded | required |
//! | `CELLSCOPE_DATA` | the data root to serve (the demo data) | required |
//! | `CELLSCOPE_MIXED_DATA` | the mixed-format demo root (TR164 demo + vLLM, SGLang, AIPerf), for `formats.rs` | required by the tests that serve it |
//! | `CELLSCOPE_SCREENSHOTS` | where screenshots go | `target/screenshots` |
//! | `CHROMIUM`, `CHROMEDRIVER` | the browser and its driver | `/usr/bin/chromium`, `/usr/bin/chromedriver` |
//! | `CELLSCOPE_SCALE_DATA` | the `--scale 34` root for the performance test at scale (ignored unless run with `--include-ignored`, as `cargo xtask e2e --scale` does) | none: that test fails without it |
//! | `CELLSCOPE_WASM_GZIP_BYTES` | the bundle's gzipped size, which the performance test records beside its figures | not recorded |
//!
//! Without the two required variables every test fails (never passes silently) with a message saying to run them
//! through `cargo xtask ci` / `cargo xtask e2e`. Pass a filter after `--`: `cargo xtask e2e -- smoke`.
//!
//! # Harness API
//!
//! ```no_run
//! use cellscope_e2e::Harness;
//!
//! // In tests/tests/*.rs, under `#[tokio::test]`:
//! async fn curves_view() -> anyhow::Result<()> {
//!     // A server on 127.0.0.1:<free port> and a Chromium session with a fresh profile, both private to this test.
//!     let page = Harness::start("curves_view").await?;
//!     // Navigates and waits until the boot module started the WASM app (fails at once with the error if it
//!     // could not).
//!     page.open("/?view=curves&metric=efficiency").await?;
//!     let _chart = page.wait_for("canvas.chart").await?; // a fantoccini Element
//!     page.wait_for_attr("main#app", "data-state", "ready").await?;
//!     assert_eq!(page.text("main#app h1").await?, "cellscope");
//!     let _cells: u64 = page.eval("document.querySelectorAll('.cell').length").await?;
//!     page.screenshot("curves").await?; // target/screenshots/curves.png
//!     let _marks = page.performance_marks().await?; // performance.mark()s, e.g. `cellscope:started`
//!     page.assert_no_console_errors().await?; // CSP violations and failed requests show up here
//!     let index = page.get("/api/index")?; // plain HTTP, no browser: status, headers, body
//!     assert_eq!(index.status, 200);
//!     page.client().find(fantoccini::Locator::Css("button.apply")).await?.click().await?; // the full client
//!     page.close().await // or drop it: dropping (e.g. on a panic) kills the browser and the server
//! }
//! ```
//!
//! - [`Harness::start`]`(name)`: server + browser; `name` prefixes the screenshot taken when a wait fails.
//! - Navigation: [`Harness::open`] (path and query; waits for the app to start), [`Harness::url`],
//!   [`Harness::client`] (the `fantoccini::Client` for clicks, keys, forms, `back()`, `current_url()`, …).
//! - Waits, all polling every 50 ms up to [`DEFAULT_TIMEOUT`] (10 s) or the `_within` variant's timeout:
//!   [`Harness::wait_for`] (a CSS selector matches), [`Harness::wait_for_attr`] (an attribute has a value),
//!   [`Harness::wait_for_text`] (an element's text has a value), [`Harness::wait_until`] (any JS expression is
//!   truthy). A wait that times out fails with the URL, the page's HTML (abridged), the browser console and the
//!   server's log, and saves `target/screenshots/<name>-failure.png`.
//! - Reading the page: [`Harness::text`], [`Harness::eval`] (a JS expression, deserialised),
//!   [`Harness::eval_async`] (a JS expression yielding a promise), [`Harness::performance_marks`],
//!   [`Harness::browser_log`] and [`Harness::assert_no_console_errors`].
//! - Artifacts: [`Harness::screenshot`]`(name)` writes `target/screenshots/<name>.png` and returns the path.
//! - HTTP without the browser: [`Harness::get`], or a [`Server`] alone ([`Server::start`]) for API-only tests.
//!
//! Processes: the server is a child process; chromedriver runs in its own process group, which is killed as a
//! whole on drop so that no Chromium outlives a test, even one that panicked. A [`Harness`] holds a process-wide
//! lock for its lifetime, so browser tests run one at a time whatever `--test-threads` says: each owns a server and
//! a browser, and two browsers on two cores make timing-sensitive waits flaky.

mod browser;
mod config;
mod harness;
mod http;
mod server;

pub use browser::{Browser, LogEntry};
pub use config::Config;
pub use harness::{DEFAULT_TIMEOUT, Harness, Mark};
pub use http::{HttpResponse, get, request};
pub use server::Server;

//! `cargo xtask e2e`: the browser end-to-end tests (crate `cellscope-e2e` in `tests/`) with everything they need:
//! demo data, the web bundle, a release server that embeds it, Chromium and ChromeDriver, and the environment
//! variables through which the tests find them.

use crate::checksum::{self, Checksum};
use crate::{browser, process, target_dir, web};
use std::path::{Path, PathBuf};

/// `cargo build --release -p cellscope` (embedding whatever `target/web/` holds); returns the binary.
pub fn release_server() -> anyhow::Result<PathBuf> {
    process::run("cargo", &["build", "--release", "-p", "cellscope"])?;
    Ok(target_dir().join("release/cellscope"))
}

/// `cargo test -p cellscope-e2e -- --test-threads=1 [extra…]` against `bin` serving `data` (Chromium must be
/// installed: [`browser::ensure_installed`]).
pub fn run_tests(bin: &Path, data: &Path, extra: &[String]) -> anyhow::Result<()> {
    let bin = bin.to_string_lossy();
    let data = data.to_string_lossy();
    let screenshots = target_dir().join("screenshots");
    let screenshots = screenshots.to_string_lossy();
    // One test at a time: each starts its own server and browser, and two browsers on two cores make timings
    // (and waits with timeouts) flaky.
    let mut args = vec!["test", "-p", "cellscope-e2e", "--", "--test-threads=1"];
    args.extend(extra.iter().map(String::as_str));
    process::run_with_env(
        "cargo",
        &args,
        &[
            ("CELLSCOPE_BIN", &bin),
            ("CELLSCOPE_DATA", &data),
            ("CELLSCOPE_SCREENSHOTS", &screenshots),
            ("CHROMIUM", browser::CHROMIUM),
            ("CHROMEDRIVER", browser::CHROMEDRIVER),
            // The harness's errors say what failed and show the page; anyhow's backtraces would bury that.
            ("RUST_LIB_BACKTRACE", "0"),
        ],
    )
}

/// Everything `cargo xtask e2e` does; `dev` skips wasm-opt.
pub fn run(dev: bool, extra: &[String]) -> anyhow::Result<()> {
    let data = crate::bench::ensure_demo_data()?;
    web::build(dev)?;
    let bin = release_server()?;
    browser::ensure_installed()?;
    let before = Checksum::of(&data)?;
    run_tests(&bin, &data, extra)?;
    checksum::verify_unchanged(&before, &data)
}

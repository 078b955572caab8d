//! `cargo xtask e2e`: the browser end-to-end tests (crate `cellscope-e2e` in `tests/`) with everything they need:
//! demo data, the web bundle, a server that embeds it, Chromium and ChromeDriver, and the environment variables
//! through which the tests find them.

use crate::checksum::{self, Checksum};
use crate::{browser, process, target_dir, web};
use std::path::{Path, PathBuf};

/// `cargo build --release -p cellscope` (embedding whatever `target/web/` holds); returns the binary.
pub(crate) fn release_server() -> anyhow::Result<PathBuf> {
    process::run("cargo", &["build", "--release", "-p", "cellscope"])?;
    Ok(target_dir().join("release/cellscope"))
}

/// The debug `cellscope` that `cargo test` builds for the CLI tests (embedding whatever `target/web/` held when
/// it was compiled).
pub(crate) fn debug_server() -> PathBuf {
    target_dir().join("debug/cellscope")
}

/// The environment through which the browser tests find the server, the data, Chromium and the screenshot folder.
pub(crate) fn test_env(bin: &Path, data: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("CELLSCOPE_BIN", bin.to_string_lossy().into_owned()),
        ("CELLSCOPE_DATA", data.to_string_lossy().into_owned()),
        // The mixed-format root beside it (TR164 demo + vLLM, SGLang and AIPerf sweeps), for the tests of
        // other tools' files; `ensure_mixed_demo_data` writes it.
        (
            "CELLSCOPE_MIXED_DATA",
            data.with_file_name("demo-mixed")
                .to_string_lossy()
                .into_owned(),
        ),
        // The nightly root beside it (one run per engine per night), for the History view's tests.
        (
            "CELLSCOPE_NIGHTLY_DATA",
            crate::demo::nightly_sibling(data)
                .to_string_lossy()
                .into_owned(),
        ),
        (
            "CELLSCOPE_SCREENSHOTS",
            target_dir()
                .join("screenshots")
                .to_string_lossy()
                .into_owned(),
        ),
        ("CHROMIUM", browser::CHROMIUM.to_string()),
        ("CHROMEDRIVER", browser::CHROMEDRIVER.to_string()),
        // The harness's errors say what failed and show the page; anyhow's backtraces would bury that.
        ("RUST_LIB_BACKTRACE", "0".to_string()),
    ]
}

/// The copies of the V3 sweep in the large data root (`cargo xtask demo-data --scale 34`: 61,560 cells).
pub(crate) const SCALE: u32 = 34;

/// The `--scale 34` data root for the browser tests at scale: `CELLSCOPE_SCALE_DATA` when it names one,
/// else `target/bench/scale-34/data`, generated once (about 2.9 GB) and marked complete by a `.complete` file so
/// an interrupted generation is never taken for data.
pub(crate) fn ensure_scale_data() -> anyhow::Result<PathBuf> {
    if let Some(root) = std::env::var_os("CELLSCOPE_SCALE_DATA").filter(|root| !root.is_empty()) {
        return Ok(PathBuf::from(root));
    }
    let bench = target_dir().join(format!("bench/scale-{SCALE}"));
    let data = bench.join("data");
    if !bench.join(".complete").is_file() {
        crate::demo::tr164(&data, 164, SCALE)?;
        std::fs::write(bench.join(".complete"), "")?;
    }
    Ok(data)
}

/// Everything `cargo xtask e2e` does; `dev` skips wasm-opt, `release` tests a release server (for the timings in
/// the README) rather than the debug one, `scale` adds the tests that need the `--scale 34` data (ignored
/// otherwise).
pub(crate) fn run(dev: bool, release: bool, scale: bool, extra: &[String]) -> anyhow::Result<()> {
    let data = crate::demo::ensure_demo_data()?;
    crate::demo::ensure_mixed_demo_data()?;
    crate::demo::ensure_nightly_demo_data()?;
    let scale_data = if scale {
        Some(ensure_scale_data()?)
    } else {
        None
    };
    let built = web::build(dev)?;
    let bin = if release {
        release_server()?
    } else {
        process::run("cargo", &["build", "-p", "cellscope"])?;
        debug_server()
    };
    browser::ensure_installed()?;
    let emulators = crate::clouds::Emulators::ensure_installed()?;
    let before = Checksum::of(&data)?;
    let mut env = test_env(&bin, &data);
    env.extend(emulators.env());
    // The performance test records the app's sizes beside its own figures.
    env.push(("CELLSCOPE_APP_SIZES", built.sizes_line()));
    let mut extra = extra.to_vec();
    if let Some(scale_data) = &scale_data {
        env.push((
            "CELLSCOPE_SCALE_DATA",
            scale_data.to_string_lossy().into_owned(),
        ));
        extra.push("--include-ignored".into());
    }
    let mut args = vec!["test", "-p", "cellscope-e2e"];
    if !extra.is_empty() {
        args.push("--");
        args.extend(extra.iter().map(String::as_str));
    }
    process::run_with_env("cargo", &args, &env)?;
    checksum::verify_unchanged(&before, &data)
}

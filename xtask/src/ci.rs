//! `cargo xtask ci`: the whole CI run, in the order that fails fastest, with each step's duration.
//!
//! Every step reuses what an earlier run left in `target/`: the wasm32 build of the app is the one `build-web`
//! needs, wasm-bindgen/wasm-opt are cached by the WASM's hash, and an unchanged bundle does not rebuild the server.

use crate::checksum::{self, Checksum};
use crate::process::{ensure_wasm_target, run as sh};
use crate::web::{WASM_PROFILE, WASM_TARGET};
use crate::{bench, browser, e2e, web};
use std::cell::RefCell;
use std::time::Instant;

/// Runs the steps in order and keeps their durations for the summary.
#[derive(Default)]
struct Steps {
    done: RefCell<Vec<(String, f64)>>,
}

impl Steps {
    fn run<T>(&self, name: &str, step: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
        let started = Instant::now();
        eprintln!("\n== {name}");
        let result = step();
        let seconds = started.elapsed().as_secs_f64();
        self.done.borrow_mut().push((name.to_string(), seconds));
        match &result {
            Ok(_) => eprintln!("== {name}: ok ({seconds:.1} s)"),
            Err(_) => {
                eprintln!("== {name}: FAILED after {seconds:.1} s");
                self.summary();
            }
        }
        result
    }

    fn summary(&self) {
        eprintln!("\nci step durations:");
        let mut total = 0.0;
        for (name, seconds) in self.done.borrow().iter() {
            eprintln!("  {seconds:>7.1} s  {name}");
            total += seconds;
        }
        eprintln!("  {total:>7.1} s  total");
    }
}

pub fn run() -> anyhow::Result<()> {
    let steps = Steps::default();
    steps.run("wasm32 target", ensure_wasm_target)?;
    steps.run("fmt", || sh("cargo", &["fmt", "--all", "--check"]))?;
    steps.run("clippy", || {
        sh(
            "cargo",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
        )
    })?;
    // The bundle's profile, so that `build-web` below finds the app already built.
    steps.run("model and app build for wasm32", || {
        sh(
            "cargo",
            &[
                "build",
                "-p",
                "cellscope-model",
                "-p",
                "cellscope-app",
                "--target",
                WASM_TARGET,
                "--profile",
                WASM_PROFILE,
            ],
        )
    })?;
    steps.run("tests", || {
        sh(
            "cargo",
            &["test", "--workspace", "--exclude", "cellscope-e2e"],
        )
    })?;
    let data = steps.run("demo data", bench::ensure_demo_data)?;
    let built = steps.run("build-web", || web::build(false))?;
    let bin = steps.run("release server build", e2e::release_server)?;
    let before = steps.run("data checksum", || {
        let checksum = Checksum::of(&data)?;
        eprintln!(
            "{}: {} entries, checksum {}",
            data.display(),
            checksum.len(),
            checksum.digest()
        );
        Ok(checksum)
    })?;
    steps.run("chromium", browser::ensure_installed)?;
    steps.run("browser tests", || e2e::run_tests(&bin, &data, &[]))?;
    steps.run("data unchanged", || {
        checksum::verify_unchanged(&before, &data)
    })?;
    steps.summary();
    eprintln!(
        "\nci: all green (WASM {:.0} KB raw, {:.0} KB gzipped)",
        built.wasm_raw as f64 / 1e3,
        built.wasm_gzip as f64 / 1e3
    );
    Ok(())
}

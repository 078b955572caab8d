//! `cargo xtask ci`: the whole CI run, in the order that fails fastest.

use crate::process::{ensure_wasm_target, run as sh};
use std::time::Instant;

pub fn run_step(name: &str, step: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<()> {
    let started = Instant::now();
    eprintln!("\n== {name}");
    step()?;
    eprintln!("== {name}: ok ({:.0} s)", started.elapsed().as_secs_f64());
    Ok(())
}

pub fn run() -> anyhow::Result<()> {
    let started = Instant::now();
    run_step("wasm32 target", ensure_wasm_target)?;
    run_step("fmt", || sh("cargo", &["fmt", "--all", "--check"]))?;
    run_step("clippy", || {
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
    run_step("model builds for wasm32", || {
        sh(
            "cargo",
            &[
                "build",
                "-p",
                "cellscope-model",
                "--target",
                "wasm32-unknown-unknown",
            ],
        )
    })?;
    run_step("tests", || sh("cargo", &["test", "--workspace"]))?;
    eprintln!(
        "\nci: all green in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

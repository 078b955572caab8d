//! `cargo xtask`: everything beyond plain cargo that this project needs, done in code rather than in a README.
//!
//! - `demo-data`: writes the synthetic TR164 data set (default `data/demo/`).
//! - `ci`: every check CI runs (fmt, clippy, native and wasm32 builds, tests).
//! - `bench index`: times the cold index side by side with pandas, polars and DuckDB.

mod bench;
mod ci;
mod process;

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate the deterministic demo data set.
    DemoData {
        /// Output directory (replaced if it exists).
        #[arg(long, default_value = "data/demo")]
        out: PathBuf,
        #[arg(long, default_value_t = 164)]
        seed: u64,
        /// Copies of the V3 sweep to write (34 ≈ 100 runs / 10 million rows), for benchmarks.
        #[arg(long, default_value_t = 1)]
        scale: u32,
    },
    /// Run everything CI checks.
    Ci,
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        which: bench::Which,
    },
}

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Generates demo data into `out` (relative paths are taken from the workspace root).
pub fn demo_data(out: &Path, seed: u64, scale: u32) -> anyhow::Result<PathBuf> {
    let out = workspace_root().join(out);
    let started = std::time::Instant::now();
    let summary = cellscope_demo::generate(&out, &cellscope_demo::Options { seed, scale })
        .with_context(|| format!("generating demo data into {}", out.display()))?;
    eprintln!(
        "demo data: {} runs, {} metrics rows, {} files, {:.1} MB in {} ({:.1} s)",
        summary.runs,
        summary.metrics_rows,
        summary.files,
        summary.bytes as f64 / 1e6,
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(out)
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    std::env::set_current_dir(workspace_root()).context("entering the workspace root")?;
    match cli.command {
        Command::DemoData { out, seed, scale } => demo_data(&out, seed, scale).map(|_| ()),
        Command::Ci => ci::run(),
        Command::Bench { which } => bench::run(which),
    }
}

//! `cellscope-demo`: the demo data generator from the command line. `cargo xtask demo-data` (and every xtask
//! command that needs demo data) runs this binary rather than linking the generator, so the xtask builds without
//! the model and the generator and CI compiles them once, in its test build.

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "cellscope-demo",
    about = "Writes the deterministic demo data roots."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The TR164 V1/V3 data root (replaced if it exists).
    Tr164 {
        out: PathBuf,
        #[arg(long, default_value_t = 164)]
        seed: u64,
        /// Copies of the V3 sweep to write (34 ≈ 100 runs / 10 million rows), for benchmarks.
        #[arg(long, default_value_t = 1)]
        scale: u32,
    },
    /// The mixed-format root (replaced if it exists): DEMO's TR164 trees hard-linked, plus a vLLM / SGLang /
    /// AIPerf sweep rebuilt from DEMO's V3 rows, which must have been generated with the same seed.
    Mixed {
        demo: PathBuf,
        out: PathBuf,
        #[arg(long, default_value_t = 164)]
        seed: u64,
    },
    /// The nightly root (replaced if it exists): 30 nights of one small sweep, one TR164 run per engine per night,
    /// with an engine upgrade that regressed, a recent regression, a benign driver change and a flat
    /// configuration.
    Nightly {
        out: PathBuf,
        #[arg(long, default_value_t = 164)]
        seed: u64,
    },
    /// The large `vllm bench serve --save-detailed` sweep of `cargo xtask bench index`, with the list of its files
    /// and the cell each holds written as JSON to LIST.
    VllmSweep {
        out: PathBuf,
        #[arg(long)]
        list: PathBuf,
        #[arg(long, default_value_t = 164)]
        seed: u64,
    },
}

fn main() -> anyhow::Result<()> {
    let started = Instant::now();
    match Cli::parse().command {
        Command::Tr164 { out, seed, scale } => {
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
        }
        Command::Mixed { demo, out, seed } => {
            let options = cellscope_demo::Options { seed, scale: 1 };
            let summary =
                cellscope_demo::generate_mixed(&demo, &out, &options).with_context(|| {
                    format!("generating the mixed demo root into {}", out.display())
                })?;
            eprintln!(
                "mixed demo: {} TR164 files linked ({} copied), {} external files ({:.1} MB, {} cells, {} \
                 requests) in {} ({:.1} s)",
                summary.linked_files,
                summary.copied_files,
                summary.external_files,
                summary.external_bytes as f64 / 1e6,
                summary.external_cells,
                summary.external_requests,
                out.display(),
                started.elapsed().as_secs_f64()
            );
        }
        Command::Nightly { out, seed } => {
            let summary = cellscope_demo::generate_nightly(&out, seed)
                .with_context(|| format!("generating the nightly root into {}", out.display()))?;
            eprintln!(
                "nightly demo: {} runs, {} rows in {} ({:.1} s)",
                summary.runs,
                summary.rows,
                out.display(),
                started.elapsed().as_secs_f64()
            );
        }
        Command::VllmSweep { out, list, seed } => {
            let files = cellscope_demo::generate_vllm_sweep(&out, seed)
                .with_context(|| format!("generating the vLLM sweep into {}", out.display()))?;
            std::fs::write(&list, serde_json::to_vec_pretty(&files)?)
                .with_context(|| format!("writing {}", list.display()))?;
            eprintln!(
                "vLLM sweep: {} files in {} ({:.0} s)",
                files.len(),
                out.display(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

//! `cargo xtask`: everything beyond plain cargo that this project needs, done in code rather than in a README.
//!
//! - `demo-data`: writes the synthetic TR164 data set (default `data/demo/`) and the mixed-format root beside it
//!   (default `data/demo-mixed/`: the TR164 trees hard-linked, plus a vLLM / SGLang / AIPerf sweep).
//! - `build-web [--dev]`: the browser bundle in `target/web/`, which the server embeds when it is compiled.
//! - `serve [--addr A] [--data DIR] [--dev]`: bundle, release server and the server itself on the mixed demo root.
//! - `e2e [--dev] [--release] [--scale] [-- TEST ARGS]`: the browser end-to-end tests with everything they need
//!   (`--scale`: also those on the `--scale 34` data, generated once under `target/bench/scale-34/`).
//! - `fuzz [--minutes N] [--target NAME]`: the libFuzzer targets of `fuzz/` for N minutes in all (installs nightly
//!   and cargo-fuzz when missing).
//! - `soak [--seconds N]`: a release server under load while a writer changes its data root; checks errors,
//!   ETag consistency, latency, memory, descriptors and the final index.
//! - `ci`: every check CI runs (fmt, tidy, clippy, native and wasm32 builds, tests, browser tests).
//! - `tidy`: no citation of documents outside the repository or of places in the source reports, and every relative
//!   Markdown link resolves.
//! - `wheel [--profile P]`: the `cellscope` wheel (binary with the app embedded, and the Python package) by maturin
//!   into `target/wheels/`.
//! - `same-output [--record] [--binary B]`: the binary's outputs and served bodies on the demo roots and every
//!   fixture, recorded as a baseline or compared with it byte for byte.
//! - `bench index`: times the cold index side by side with pandas, polars and DuckDB (TR164 CSV), then with pandas
//!   and polars on a large generated vLLM detailed-JSON sweep.

mod bench;
mod browser;
mod checksum;
mod ci;
mod clouds;
mod demo;
mod e2e;
mod fuzz;
mod paired;
mod process;
mod same_output;
mod serve;
mod soak;
mod tidy;
mod web;
mod wheel;

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
    /// Generate the deterministic demo data sets: the TR164 root, the mixed-format root beside it, and the nightly
    /// root `demo-nightly` beside them (30 nights of one sweep, for the History).
    DemoData {
        /// Output directory (replaced if it exists).
        #[arg(long, default_value = "data/demo")]
        out: PathBuf,
        #[arg(long, default_value_t = 164)]
        seed: u64,
        /// Copies of the V3 sweep to write (34 ≈ 100 runs / 10 million rows), for benchmarks.
        #[arg(long, default_value_t = 1)]
        scale: u32,
        /// Where the mixed-format root goes (replaced if it exists); default: OUT's sibling `<OUT>-mixed`
        /// (data/demo-mixed for the default OUT).
        #[arg(long)]
        mixed_out: Option<PathBuf>,
    },
    /// Build the web app into target/web/ (embedded by the next server build).
    BuildWeb {
        /// Skip wasm-opt: faster, but a larger WASM.
        #[arg(long)]
        dev: bool,
    },
    /// Build the app and a release server, then serve DATA (the demo data by default) in the foreground.
    Serve {
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: String,
        /// Data root to serve (relative to the current directory); default: data/demo-mixed (the TR164 demo and
        /// the external sweep), generated with data/demo when absent.
        #[arg(long, conflicts_with = "nightly")]
        data: Option<PathBuf>,
        /// Serve the nightly demo root instead (data/demo-nightly: 30 nights of one sweep, for the History),
        /// generated when absent.
        #[arg(long)]
        nightly: bool,
        /// Skip wasm-opt.
        #[arg(long)]
        dev: bool,
    },
    /// Run the browser end-to-end tests (builds what they need first).
    E2e {
        /// Skip wasm-opt.
        #[arg(long)]
        dev: bool,
        /// Test a release server (slower to build; what the README's browser timings use).
        #[arg(long)]
        release: bool,
        /// Also run the browser tests that need the `--scale 34` data (61,560 cells, 2.9 GB): generated once
        /// under target/bench/scale-34/data, or the root CELLSCOPE_SCALE_DATA names.
        #[arg(long)]
        scale: bool,
        /// Passed to the test binary, e.g. a test name filter.
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Run everything CI checks.
    Ci,
    /// Check that nothing cites a document outside the repository and that every relative Markdown link resolves.
    Tidy,
    /// A release server under 64 connections and 16 subscribers while a writer changes its data root.
    Soak {
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Use the debug server (what CI's short soak does): latency and memory are reported, not held to budgets.
        #[arg(long)]
        debug: bool,
    },
    /// Fuzz every reader of outside input under libFuzzer (nightly; installed when missing).
    Fuzz {
        /// Minutes of fuzzing in all, split evenly between the targets.
        #[arg(long, default_value_t = 6.0)]
        minutes: f64,
        /// Only this target (metrics_csv, run_files, exclusions, refill_note, view_state, api_query).
        #[arg(long)]
        target: Option<String>,
    },
    /// Build the `cellscope` wheel for this platform into target/wheels/: the stripped binary with the app
    /// embedded, and the Python package beside it.
    Wheel {
        /// The cargo profile of the binary (`dev` packages the binary the tests use).
        #[arg(long, default_value = "release")]
        profile: String,
    },
    /// Run the `cellscope` binary over the demo roots and every fixture root and compare its outputs (CLI and API)
    /// with the baseline in target/same-output/baseline/, byte for byte.
    SameOutput {
        /// Write the baseline instead of comparing with it.
        #[arg(long)]
        record: bool,
        /// The binary to run (default: `cargo build -p cellscope`'s debug binary).
        #[arg(long)]
        binary: Option<PathBuf>,
    },
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

/// Cargo's target directory: `CARGO_TARGET_DIR` or the workspace's `target/`.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map_or_else(
            || workspace_root().join("target"),
            |dir| workspace_root().join(dir),
        )
}

fn main() -> anyhow::Result<()> {
    // CI's test build runs this binary as the compiler wrapper of the workspace's crates (see `ci/wrapper.rs`).
    ci::wrapper::run_if_wrapping();
    let cli = Cli::parse();
    let invoked_in = std::env::current_dir().context("reading the current directory")?;
    std::env::set_current_dir(workspace_root()).context("entering the workspace root")?;
    match cli.command {
        Command::DemoData {
            out,
            seed,
            scale,
            mixed_out,
        } => {
            demo::tr164(&out, seed, scale)?;
            let mixed = mixed_out.unwrap_or_else(|| demo::mixed_sibling(&out));
            demo::mixed(&out, &mixed, seed)?;
            demo::nightly(&demo::nightly_sibling(&out), seed).map(|_| ())
        }
        Command::BuildWeb { dev } => web::build(dev).map(|_| ()),
        Command::Serve {
            addr,
            data,
            nightly,
            dev,
        } => {
            let data = match (data, nightly) {
                (Some(data), _) => Some(invoked_in.join(data)),
                (None, true) => Some(demo::ensure_nightly_demo_data()?),
                (None, false) => None,
            };
            serve::run(&addr, data, dev)
        }
        Command::E2e {
            dev,
            release,
            scale,
            args,
        } => e2e::run(dev, release, scale, &args),
        Command::Ci => ci::run(),
        Command::Tidy => tidy::run(),
        Command::Soak { seconds, debug } => {
            if debug {
                process::run("cargo", &["build", "-p", "cellscope"])?;
                soak::run_with(&e2e::debug_server(), seconds, false)
            } else {
                soak::run(seconds)
            }
        }
        Command::Fuzz { minutes, target } => fuzz::run(minutes, target.as_deref()),
        Command::Wheel { profile } => wheel::build(&profile, &[], &[]).map(|_| ()),
        Command::SameOutput { record, binary } => same_output::run(record, binary),
        Command::Bench { which } => bench::run(which),
    }
}

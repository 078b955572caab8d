//! Deterministic synthetic TR164 run directories (V1 and V3) for demos, tests and benchmarks.
//!
//! [`generate`] writes a data root that a TR164 user would recognise file by file: the V1 local_core run with its
//! skip rows, partial and fallback cells and seven dispatcher generations, and the V3 vLLM / SGLang runs with the
//! Mistral × long_prefill_8k overflow, refill, splice and backup. The numbers are not random noise: every cell is
//! built so that the metrics recomputed from its rows (with `cellscope-model`) reproduce the published tables;
//! the per-cell targets live in `data/demo-recipe.toml`.
//!
//! [`generate_mixed`] then writes a second root beside it that shows several formats at once: the TR164 trees of the
//! first root (hard-linked) plus a small sweep of the V3 demo in vLLM, SGLang and AIPerf formats with the
//! `cellscope.toml` that maps those files to cells, and one model on two deployments: a vLLM request-rate sweep and
//! InferenceX-named concurrency runs.

mod analysis;
mod calendar;
mod catalog;
mod cell;
mod external;
mod nightly;
pub mod published;
mod pyrepr;
mod random;
mod recipe;
mod rows;
mod tree;
mod v1;
mod v3;

use std::path::{Path, PathBuf};

pub use nightly::{
    DRIVER_CHANGE_NIGHT, ENGINE_UPGRADE_NIGHT, NIGHTS, NightlySummary, RECENT_REGRESSION_NIGHT,
    generate_nightly,
};
pub use pyrepr::py_float;

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Seeds every random stream; the same seed gives byte-identical files.
    pub seed: u64,
    /// How many copies of the V3 tree to write (1 = the default set; K adds K−1 day-shifted copies).
    pub scale: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seed: 164,
            scale: 1,
        }
    }
}

/// What was written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Run directories (backups are not runs).
    pub runs: usize,
    /// Data rows over every metrics.csv, backups included.
    pub metrics_rows: u64,
    pub files: usize,
    pub bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("demo recipe: {0}")]
    Recipe(String),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("invalid options: {0}")]
    Options(String),
}

/// Row and run counts of one part of the tree.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RunCounts {
    pub runs: usize,
    pub metrics_rows: u64,
}

/// The demo's exclusion ledger: Mistral × long_prefill_8k is out of cross-backend comparisons.
const EXCLUSIONS_TOML: &str = r#"[[exclude]]
id = "mistral-long-prefill-tokenizer"
select = { model = "mistral-7b", workload = "long_prefill_8k" }  # omitted dimensions match everything
scope = "comparison"        # "comparison": out of cross-backend comparisons; "all": out of every aggregate
reason = "mistral_common vs HF AutoTokenizer: 1.162x prompt-token ratio on char-matched prompts"
source = "TR164 V3 §15"
decided = "2026-06-13"
"#;

/// What [`generate_mixed`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MixedSummary {
    /// Files of the TR164 trees hard-linked from the demo root.
    pub linked_files: usize,
    /// Files copied instead because the file system would not link them.
    pub copied_files: usize,
    /// Files of the external sweeps, `cellscope.toml` included.
    pub external_files: usize,
    pub external_bytes: u64,
    /// Cells and requests of the external sweeps: the three engines' concurrency sweep and the two-deployment
    /// sweeps (one cell per run file).
    pub external_cells: usize,
    pub external_requests: usize,
}

/// The parts of the demo root that the mixed root shares.
const SHARED: [&str; 3] = ["exclusions.toml", "tr164-v1", "tr164-v3"];

/// Generates the mixed-format data root at `out_dir`, replacing what is there: `exclusions.toml`, `tr164-v1/` and
/// `tr164-v3/` hard-linked from `demo_dir` (copied where the file system cannot link), plus `external/` and
/// `cellscope.toml` (see `external.rs`). `demo_dir` must hold a demo root generated with the same `options`,
/// because the external requests are rebuilt from the V3 rows of `options.seed`. Written through a staging
/// directory like [`generate`].
pub fn generate_mixed(
    demo_dir: &Path,
    out_dir: &Path,
    options: &Options,
) -> Result<MixedSummary, DemoError> {
    for part in SHARED {
        if !demo_dir.join(part).exists() {
            return Err(DemoError::Options(format!(
                "{} has no {part}: generate the demo root first",
                demo_dir.display()
            )));
        }
    }
    let recipe = recipe::Recipe::load()?;
    let mut tree = tree::Tree::stage(out_dir)?;
    let result = (|| {
        let mut summary = MixedSummary::default();
        for part in SHARED {
            let linked = tree.link_all(&demo_dir.join(part), part)?;
            summary.linked_files += linked.linked;
            summary.copied_files += linked.copied;
        }
        // The deployment sweeps go first so that `cellscope.toml`, the last of the other files, is written last.
        let (rate_files, rate_counts) = external::deployment_files(options.seed);
        let (files, counts) = external::files(options.seed, &recipe)?;
        for (path, contents) in rate_files.iter().chain(&files) {
            tree.write(path, contents)?;
            summary.external_files += 1;
            summary.external_bytes += contents.len() as u64;
        }
        summary.external_cells = counts.cells + rate_counts.cells;
        summary.external_requests = counts.requests + rate_counts.requests;
        Ok::<MixedSummary, DemoError>(summary)
    })();
    let summary = match result {
        Ok(summary) => summary,
        Err(error) => {
            let _ = std::fs::remove_dir_all(&tree.root);
            return Err(error);
        }
    };
    tree.commit(out_dir)?;
    Ok(summary)
}

pub use external::scale::SweepFile as VllmSweepFile;

/// Writes the large vLLM sweep of `cargo xtask bench index` to `out_dir` (replacing what is there, through a
/// staging directory): `vllm bench serve --save-result --save-detailed` files of three engines × two models × N ∈
/// {1, …, 128} × 3 reps, over a million requests, plus the root's `cellscope.toml`. See `external/scale.rs`.
pub fn generate_vllm_sweep(out_dir: &Path, seed: u64) -> Result<Vec<VllmSweepFile>, DemoError> {
    external::scale::generate(out_dir, seed)
}

/// Writes only the mixed root's two-deployment sweeps (`external/vllm-rate-sweep/` and `external/inferencex/`, see
/// `external/rate_sweep.rs` and `external/inferencex.rs`) under `out_dir`, replacing what is there, through a
/// staging directory; returns the number of files. The mixed root holds the same bytes for the same seed.
pub fn generate_deployment_sweeps(out_dir: &Path, seed: u64) -> Result<usize, DemoError> {
    let mut tree = tree::Tree::stage(out_dir)?;
    let (files, _) = external::deployment_files(seed);
    for (path, contents) in &files {
        if let Err(error) = tree.write(path, contents) {
            let _ = std::fs::remove_dir_all(&tree.root);
            return Err(error);
        }
    }
    tree.commit(out_dir)?;
    Ok(files.len())
}

/// Generates the demo data root at `out_dir`, replacing what is there. Files are written into a temporary
/// sibling directory that is renamed into place at the end, so a half-written tree never looks complete.
pub fn generate(out_dir: &Path, options: &Options) -> Result<Summary, DemoError> {
    if options.scale == 0 {
        return Err(DemoError::Options("scale must be at least 1".into()));
    }
    if options.scale > 999 {
        return Err(DemoError::Options(
            "scale above 999 would overflow the copy-NNN directory names".into(),
        ));
    }
    let recipe = recipe::Recipe::load()?;
    let mut tree = tree::Tree::stage(out_dir)?;
    let result = (|| {
        tree.write("exclusions.toml", EXCLUSIONS_TOML.as_bytes())?;
        let mut counts = v1::write(&mut tree, options.seed, &recipe)?;
        for copy in 1..=options.scale {
            let part = v3::write(&mut tree, options.seed, copy, &recipe)?;
            counts.runs += part.runs;
            counts.metrics_rows += part.metrics_rows;
        }
        Ok::<RunCounts, DemoError>(counts)
    })();
    let counts = match result {
        Ok(counts) => counts,
        Err(error) => {
            let _ = std::fs::remove_dir_all(&tree.root);
            return Err(error);
        }
    };
    let summary = Summary {
        runs: counts.runs,
        metrics_rows: counts.metrics_rows,
        files: tree.files,
        bytes: tree.bytes,
    };
    tree.commit(out_dir)?;
    Ok(summary)
}

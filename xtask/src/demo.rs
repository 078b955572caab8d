//! The demo data roots, written by the demo crate's `cellscope-demo` binary. The xtask runs that binary instead
//! of linking the generator: the xtask then builds without the model and the generator (both optimised, about a
//! minute of compiling before any xtask command could start), and CI runs the binary its test build made.

use crate::{process, target_dir, workspace_root};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The generator binary, once built (or named by [`use_built_generator`]).
static GENERATOR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Where `cargo build -p cellscope-demo` and `cargo test --workspace` put the binary.
fn built_generator() -> PathBuf {
    target_dir().join("debug/cellscope-demo")
}

/// Takes the generator a `cargo test --workspace` already built, instead of building it again with another
/// feature resolution (CI, whose test build compiles the demo crate anyway).
pub(crate) fn use_built_generator() -> anyhow::Result<()> {
    let binary = built_generator();
    anyhow::ensure!(
        binary.is_file(),
        "{} is missing: the test build should have built it",
        binary.display()
    );
    *GENERATOR
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(binary);
    Ok(())
}

/// `cellscope-demo ARGS…`, building the binary first when this process has not yet.
fn run_generator(args: &[&str]) -> anyhow::Result<()> {
    let binary = {
        let mut generator = GENERATOR
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match &*generator {
            Some(binary) => binary.clone(),
            None => {
                process::run(
                    "cargo",
                    &["build", "-p", "cellscope-demo", "--bin", "cellscope-demo"],
                )?;
                generator.insert(built_generator()).clone()
            }
        }
    };
    process::run(&binary.to_string_lossy(), args)
}

/// Generates the TR164 demo root into `out` (relative paths are taken from the workspace root).
pub(crate) fn tr164(out: &Path, seed: u64, scale: u32) -> anyhow::Result<PathBuf> {
    let out = workspace_root().join(out);
    run_generator(&[
        "tr164",
        &out.to_string_lossy(),
        "--seed",
        &seed.to_string(),
        "--scale",
        &scale.to_string(),
    ])?;
    Ok(out)
}

/// Generates the mixed-format root into `mixed` from the demo root `demo` (relative paths are taken from the
/// workspace root); `seed` must be the one `demo` was generated with.
pub(crate) fn mixed(demo: &Path, mixed: &Path, seed: u64) -> anyhow::Result<PathBuf> {
    let demo = workspace_root().join(demo);
    let mixed = workspace_root().join(mixed);
    run_generator(&[
        "mixed",
        &demo.to_string_lossy(),
        &mixed.to_string_lossy(),
        "--seed",
        &seed.to_string(),
    ])?;
    Ok(mixed)
}

/// Generates the nightly root (30 nights, one run per engine per night) into `out` (relative paths are taken from
/// the workspace root).
pub(crate) fn nightly(out: &Path, seed: u64) -> anyhow::Result<PathBuf> {
    let out = workspace_root().join(out);
    run_generator(&[
        "nightly",
        &out.to_string_lossy(),
        "--seed",
        &seed.to_string(),
    ])?;
    Ok(out)
}

/// Where the nightly root goes for a demo root: `demo-nightly` beside it.
pub(crate) fn nightly_sibling(out: &Path) -> PathBuf {
    out.with_file_name("demo-nightly")
}

/// `data/demo-nightly/`, generated unless it is there (the tree only appears once complete).
pub(crate) fn ensure_nightly_demo_data() -> anyhow::Result<PathBuf> {
    let nightly = workspace_root().join("data/demo-nightly");
    if nightly.join("README.md").is_file() {
        return Ok(nightly);
    }
    crate::demo::nightly(Path::new("data/demo-nightly"), 164)
}

/// Generates the large vLLM sweep into `root` and the list of its files (and the cell each holds) into `list`.
pub(crate) fn vllm_sweep(root: &Path, list: &Path, seed: u64) -> anyhow::Result<()> {
    run_generator(&[
        "vllm-sweep",
        &root.to_string_lossy(),
        "--list",
        &list.to_string_lossy(),
        "--seed",
        &seed.to_string(),
    ])
}

/// The default mixed-format root for a demo root: its sibling `<name>-mixed`.
pub(crate) fn mixed_sibling(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map_or_else(|| "demo".into(), |name| name.to_string_lossy().into_owned());
    out.with_file_name(format!("{name}-mixed"))
}

/// The demo data root, generated when absent.
pub(crate) fn ensure_demo_data() -> anyhow::Result<PathBuf> {
    let demo = workspace_root().join("data/demo");
    if !demo
        .join("tr164-v3")
        .join("20260612_212816_266127")
        .join("metrics.csv")
        .is_file()
    {
        tr164(Path::new("data/demo"), 164, 1)?;
    }
    Ok(demo)
}

/// One path of each part of the mixed root added since it was first generated: a root missing any of them is
/// stale and regenerated, so the app shows every format the generator writes.
const MIXED_PARTS: [&str; 6] = [
    "external/vllm-rate-sweep",
    "external/inferencex-agg/agg_bmk.json",
    "external/genai-perf-csv",
    "external/llm-d",
    "external/mlperf",
    "external/console",
];

/// `data/demo-mixed/`, generated (with `data/demo/` first, when that is missing too) unless it is complete.
pub(crate) fn ensure_mixed_demo_data() -> anyhow::Result<PathBuf> {
    let mixed = crate::workspace_root().join("data/demo-mixed");
    // The tree only appears once complete, so the mapping file means the whole root is there.
    if mixed.join("cellscope.toml").is_file()
        && MIXED_PARTS.iter().all(|part| mixed.join(part).exists())
    {
        return Ok(mixed);
    }
    ensure_demo_data()?;
    crate::demo::mixed(Path::new("data/demo"), Path::new("data/demo-mixed"), 164)
}

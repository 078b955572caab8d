//! `cargo xtask build-web`: compiles the app to wasm32 and turns it into the bundle that the server embeds at
//! compile time (`target/web/`, see `server/build.rs`).
//!
//! 1. `cargo build -p cellscope-app --target wasm32-unknown-unknown --profile wasm-release`;
//! 2. the split (in process, `split.rs`) into the shell's WASM and the views' chunks, wasm-bindgen of the shell
//!    (`--target web`, in process) and `wasm-opt -Oz` of every module (npm's binaryen; skipped with `--dev`),
//!    cached in `target/web-cache/` under the hash of the compiled WASM, so an unchanged app costs no second pass;
//! 3. the bundle (`cellscope-<hash>.js` with the chunks' loaders folded in, `cellscope-<hash>_bg.wasm`,
//!    `split_<view>-<hash>.wasm` and `chunk_<n>-<hash>.wasm`, `app-<hash>.css`, `boot-<hash>.js`, `index.html`)
//!    assembled beside `target/web/` and swapped in only when it differs from what is there; it prints the
//!    gzipped size of the shell, of each view's chunks and of the first screen against their budgets, and of the
//!    chunks loaded after the first screen (split points named `split::LATER`) against the chunks' budget.

mod binaryen;
mod bindgen;
mod bundle;
mod split;

use crate::process::{self, ensure_wasm_target};
use crate::{target_dir, workspace_root};
use anyhow::Context;
use sha2::{Digest, Sha256};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub(crate) const WASM_TARGET: &str = "wasm32-unknown-unknown";
pub(crate) const WASM_PROFILE: &str = "wasm-release";

/// Marks a complete entry of the wasm-bindgen/wasm-opt cache.
const CACHE_DONE: &str = ".complete";

/// The first 16 hex digits of the SHA-256 of `bytes`: the content hash in file names (the server caches names
/// with a 16-hex-digit part for a year).
pub(crate) fn hash16(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Where the server's build script reads the bundle from (the same rule as `server/build.rs`).
pub(crate) fn web_dir() -> PathBuf {
    std::env::var_os("CELLSCOPE_WEB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/web"))
}

/// The budget of what a first screen downloads of the app's code, gzipped: the shell and its view's chunks.
pub(crate) const FIRST_SCREEN_BUDGET_BYTES: u64 = 450_000;

/// The budget of each view's chunks, gzipped: what opening the view downloads beyond the shell.
pub(crate) const VIEW_BUDGET_BYTES: u64 = 250_000;

/// What `build` produced.
pub(crate) struct Built {
    /// The shell, gzipped: the glue and the shell's WASM, which every page loads.
    pub shell_gzip: u64,
    /// Each view → its chunk files' gzipped sizes, summed.
    pub views_gzip: Vec<(String, u64)>,
    /// Each split point loaded after the first screen (`split::LATER`) → its chunk files' gzipped sizes, summed.
    pub later_gzip: Vec<(String, u64)>,
    /// Whether `target/web/` changed (so the server needs a rebuild to embed it).
    pub changed: bool,
}

impl Built {
    /// One line of the sizes for summaries: the shell, each view's chunks, and the first screens they make (a link
    /// can open any view first), against their budgets.
    pub(crate) fn sizes_line(&self) -> String {
        let kb = |bytes: u64| format!("{:.0}", bytes as f64 / 1e3);
        let views: Vec<String> = self
            .views_gzip
            .iter()
            .map(|(view, bytes)| format!("{view} {}", kb(*bytes)))
            .collect();
        let later: Vec<String> = self
            .later_gzip
            .iter()
            .map(|(name, bytes)| format!("{name} {}", kb(*bytes)))
            .collect();
        let screens = self.views_gzip.iter().map(|(_, bytes)| *bytes);
        let (smallest, largest) = (
            screens.clone().min().unwrap_or(0),
            screens.max().unwrap_or(0),
        );
        let chunks = self.views_gzip.iter().chain(&self.later_gzip);
        let largest_chunk = chunks.map(|(_, bytes)| *bytes).max().unwrap_or(0);
        format!(
            "shell {} KB + views' chunks ({} KB; after the first screen: {} KB) gzipped: first screens {}–{} KB \
             (budget {} KB), chunks ≤ {} KB (budget {} KB)",
            kb(self.shell_gzip),
            views.join(", "),
            later.join(", "),
            kb(self.shell_gzip + smallest),
            kb(self.shell_gzip + largest),
            kb(FIRST_SCREEN_BUDGET_BYTES),
            kb(largest_chunk),
            kb(VIEW_BUDGET_BYTES),
        )
    }
}

/// Where the wasm32 build goes: a target directory of its own, `target/wasm/`. Cargo locks a target directory
/// for the whole of a build, so a wasm32 build in `target/` would wait for any native build there and the other
/// way round; in its own directory it runs beside them (`ci` overlaps it with the xtask's tests). Nothing is lost:
/// a wasm32 build in the bundle's profile shares no artifact with the native builds, not even its build scripts
/// and proc-macros, which cargo keeps per profile.
pub(crate) fn wasm_target_dir() -> PathBuf {
    target_dir().join("wasm")
}

/// The arguments of the `cargo build` of `model` and `app` for wasm32 in the bundle's profile. `model` is named
/// although `app` depends on it, so that CI states it builds for wasm32 on its own; `ci` and `build` run the same
/// command, so the second finds everything built.
fn wasm_build_args() -> Vec<String> {
    [
        "build",
        "-p",
        "cellscope-model",
        "-p",
        "cellscope-app",
        "--target",
        WASM_TARGET,
        "--profile",
        WASM_PROFILE,
        "--target-dir",
    ]
    .iter()
    .map(|arg| arg.to_string())
    .chain([wasm_target_dir().to_string_lossy().into_owned()])
    .collect()
}

/// `cargo build` of `model` and `app` for wasm32 (see [`wasm_build_args`]).
pub(crate) fn compile_for_wasm(env: &[(&str, String)]) -> anyhow::Result<()> {
    let args = wasm_build_args();
    process::run_with_env(
        "cargo",
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        env,
    )
}

/// [`compile_for_wasm`] with cargo's output written to `log` instead of the terminal, for a build that runs
/// beside other steps whose output it would otherwise interleave with.
pub(crate) fn compile_for_wasm_logged(log: &Path, env: &[(&str, String)]) -> anyhow::Result<()> {
    let args = wasm_build_args();
    process::run_logged(
        "cargo",
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        env,
        log,
    )
}

/// Builds the bundle into `target/web/`; `dev` skips wasm-opt.
pub(crate) fn build(dev: bool) -> anyhow::Result<Built> {
    build_with(dev, &[])
}

/// [`build`] with `env` set for the wasm32 build: CI's, which lints while it compiles. The environment is part
/// of what cargo compares to find a build fresh, so CI passes the same one to both of its wasm32 builds.
pub(crate) fn build_with(dev: bool, env: &[(&str, String)]) -> anyhow::Result<Built> {
    let started = Instant::now();
    ensure_wasm_target()?;
    let bindgen_version = bindgen::check_pin()?;
    compile_for_wasm(env)?;
    let compiled = wasm_target_dir()
        .join(WASM_TARGET)
        .join(WASM_PROFILE)
        .join("cellscope-app.wasm");
    let processed = processed(&compiled, dev, &bindgen_version)?;
    let web = web_dir();
    let assembled = bundle::assemble(&processed, &web)?;
    let gzipped = |name: &str| -> anyhow::Result<u64> {
        let bytes = std::fs::read(web.join(name)).with_context(|| format!("reading {name}"))?;
        gzipped_len(&bytes)
    };
    let glue_gzip = gzipped(&assembled.glue)?;
    let wasm_gzip = gzipped(&assembled.wasm)?;
    let mut lines = vec![format!(
        "  shell {:.0} KB gzipped: {} {:.0} KB, {} {:.0} KB",
        (glue_gzip + wasm_gzip) as f64 / 1e3,
        assembled.glue,
        glue_gzip as f64 / 1e3,
        assembled.wasm,
        wasm_gzip as f64 / 1e3,
    )];
    let mut views_gzip = Vec::new();
    let mut later_gzip = Vec::new();
    for (view, files) in &assembled.views {
        let sizes = files
            .iter()
            .map(|file| Ok((file, gzipped(file)?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let total: u64 = sizes.iter().map(|(_, bytes)| bytes).sum();
        let first_screen = glue_gzip + wasm_gzip + total;
        let parts: Vec<String> = sizes
            .iter()
            .map(|(file, bytes)| format!("{file} {:.0} KB", *bytes as f64 / 1e3))
            .collect();
        if let Some(name) = view.strip_prefix(split::LATER) {
            // Loaded after the first screen: only the chunks' own budget applies.
            lines.push(format!(
                "  {name} (after the first screen): chunks {:.0} KB gzipped (budget {:.0} KB{}; {})",
                total as f64 / 1e3,
                VIEW_BUDGET_BYTES as f64 / 1e3,
                over(total, VIEW_BUDGET_BYTES),
                parts.join(", "),
            ));
            later_gzip.push((name.to_string(), total));
            continue;
        }
        lines.push(format!(
            "  {view}: chunks {:.0} KB gzipped (budget {:.0} KB{}; {}), first screen {:.0} KB (budget {:.0} KB{})",
            total as f64 / 1e3,
            VIEW_BUDGET_BYTES as f64 / 1e3,
            over(total, VIEW_BUDGET_BYTES),
            parts.join(", "),
            first_screen as f64 / 1e3,
            FIRST_SCREEN_BUDGET_BYTES as f64 / 1e3,
            over(first_screen, FIRST_SCREEN_BUDGET_BYTES),
        ));
        views_gzip.push((view.clone(), total));
    }
    let built = Built {
        shell_gzip: glue_gzip + wasm_gzip,
        views_gzip,
        later_gzip,
        changed: assembled.changed,
    };
    eprintln!(
        "build-web{}: {} ({}) in {:.1} s\n  {}/index.html\n  {}\n  {}\n  {}\n  {}\n{}{}",
        if dev { " --dev" } else { "" },
        web.display(),
        if built.changed {
            "updated"
        } else {
            "unchanged"
        },
        started.elapsed().as_secs_f64(),
        web.display(),
        assembled.boot,
        assembled.glue,
        assembled.wasm,
        assembled.stylesheet,
        lines.join("\n"),
        if dev { "\n  (not wasm-opt'd)" } else { "" },
    );
    Ok(built)
}

/// A note when `bytes` is over `budget`.
fn over(bytes: u64, budget: u64) -> &'static str {
    if bytes > budget { ", OVER" } else { "" }
}

/// The `.wasm` files directly in `dir`, by name.
fn wasm_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path
            .extension()
            .is_some_and(|extension| extension == "wasm")
        {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The size a browser downloads with `Content-Encoding: gzip` (best compression).
fn gzipped_len(bytes: &[u8]) -> anyhow::Result<u64> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes)?;
    Ok(encoder.finish()?.len() as u64)
}

/// wasm-bindgen's output for `compiled` (wasm-opt'd unless `dev`), from the cache when the same WASM was
/// processed the same way before.
fn processed(compiled: &Path, dev: bool, bindgen_version: &str) -> anyhow::Result<PathBuf> {
    let wasm =
        std::fs::read(compiled).with_context(|| format!("reading {}", compiled.display()))?;
    let mode = if dev { "dev" } else { "opt" };
    let recipe = format!(
        "{mode} wasm-split {} wasm-bindgen {bindgen_version} binaryen {}",
        split::VERSION,
        binaryen::recipe(),
    );
    let key = hash16(&[wasm.as_slice(), recipe.as_bytes()].concat());
    let cache = target_dir().join("web-cache");
    let entry = cache.join(format!("{mode}-{key}"));
    if entry.join(CACHE_DONE).is_file() {
        eprintln!(
            "wasm-bindgen/wasm-opt: unchanged WASM, reusing {}",
            entry.display()
        );
        return Ok(entry);
    }
    let partial = cache.join(format!("{mode}-{key}.partial-{}", std::process::id()));
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("removing {}", partial.display()))?;
    }
    let started = Instant::now();
    let chunks = partial.join(split::CHUNKS_DIR);
    split::split(compiled, &chunks)?;
    eprintln!("wasm-split: {:.1} s", started.elapsed().as_secs_f64());
    let started = Instant::now();
    bindgen::generate(&chunks.join(split::SHELL), &partial, dev)?;
    std::fs::remove_file(chunks.join(split::SHELL))?;
    eprintln!("wasm-bindgen: {:.1} s", started.elapsed().as_secs_f64());
    if !dev {
        let started = Instant::now();
        let mut modules = vec![partial.join(format!("{}_bg.wasm", bindgen::OUT_NAME))];
        modules.extend(wasm_files(&chunks)?);
        binaryen::optimize_all(&modules)?;
        eprintln!("wasm-opt: {:.1} s", started.elapsed().as_secs_f64());
    }
    std::fs::write(partial.join(CACHE_DONE), recipe)?;
    if entry.exists() {
        std::fs::remove_dir_all(&entry).with_context(|| format!("removing {}", entry.display()))?;
    }
    std::fs::rename(&partial, &entry)
        .with_context(|| format!("moving {} to {}", partial.display(), entry.display()))?;
    // One entry per mode is enough: older ones are stale builds of the app.
    for other in std::fs::read_dir(&cache)?.flatten() {
        let name = other.file_name().to_string_lossy().into_owned();
        let stale = name.starts_with(&format!("{mode}-")) && !name.contains(".partial-");
        if stale && other.path() != entry {
            let _ = std::fs::remove_dir_all(other.path());
        }
    }
    Ok(entry)
}

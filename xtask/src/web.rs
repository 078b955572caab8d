//! `cargo xtask build-web`: compiles the app to wasm32 and turns it into the bundle that the server embeds at
//! compile time (`target/web/`, see `server/build.rs`).
//!
//! 1. `cargo build -p cellscope-app --target wasm32-unknown-unknown --profile wasm-release`;
//! 2. wasm-bindgen (`--target web`, in process) and `wasm-opt -Oz` (npm's binaryen; skipped with `--dev`), cached
//!    in `target/web-cache/` under the hash of the compiled WASM, so an unchanged app costs no second pass;
//! 3. the bundle (`cellscope-<hash>.js`, `cellscope-<hash>_bg.wasm`, `app-<hash>.css`, `boot-<hash>.js`,
//!    `index.html`) assembled beside `target/web/` and swapped in only when it differs from what is there.

mod binaryen;
mod bindgen;
mod bundle;

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

/// What `build` produced.
pub(crate) struct Built {
    pub wasm_raw: u64,
    pub wasm_gzip: u64,
    /// Whether `target/web/` changed (so the server needs a rebuild to embed it).
    pub changed: bool,
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
    let wasm = std::fs::read(web.join(&assembled.wasm))
        .with_context(|| format!("reading {}", assembled.wasm))?;
    let built = Built {
        wasm_raw: wasm.len() as u64,
        wasm_gzip: gzipped_len(&wasm)?,
        changed: assembled.changed,
    };
    eprintln!(
        "build-web{}: {} ({}) in {:.1} s\n  {}/index.html\n  {}\n  {}\n  {}\n  {}\n  WASM {:.0} KB raw, {:.0} KB gzipped ({} bytes){}",
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
        built.wasm_raw as f64 / 1e3,
        built.wasm_gzip as f64 / 1e3,
        built.wasm_gzip,
        if dev { " (not wasm-opt'd)" } else { "" },
    );
    Ok(built)
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
        "{mode} wasm-bindgen {bindgen_version} binaryen {} {}",
        binaryen::VERSION,
        binaryen::FLAGS.join(" ")
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
    bindgen::generate(compiled, &partial, dev)?;
    eprintln!("wasm-bindgen: {:.1} s", started.elapsed().as_secs_f64());
    if !dev {
        let started = Instant::now();
        binaryen::optimize(&partial.join(format!("{}_bg.wasm", bindgen::OUT_NAME)))?;
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

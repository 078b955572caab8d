//! `wasm-opt` from npm's `binaryen` package, installed into `target/web-tools/` on first use.
//!
//! Not Debian's binaryen: its version 108 writes a WASM that fails at run time (`WebAssembly.Table.set` TypeError,
//! a blank page). npm's package is binaryen compiled to JS + WASM, so it runs on the machine's Node.js and needs
//! nothing but the npm registry.

use crate::process;
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};

/// The pinned npm version (binaryen's release number is its major version).
pub(super) const VERSION: &str = "132.0.0";

/// `-Oz` plus the features rustc's wasm32 target emits by default (LLVM's `generic` CPU) and wasm-bindgen's
/// output keeps: wasm-opt must be told about every feature the module already uses or it rejects it.
pub(super) const FLAGS: &[&str] = &[
    "-Oz",
    "--enable-bulk-memory",
    "--enable-bulk-memory-opt",
    "--enable-call-indirect-overlong",
    "--enable-multivalue",
    "--enable-mutable-globals",
    "--enable-nontrapping-float-to-int",
    "--enable-reference-types",
    "--enable-sign-ext",
    "--strip-debug",
    "--strip-producers",
];

fn tools_dir() -> PathBuf {
    crate::target_dir().join("web-tools")
}

fn installed_version(tools: &Path) -> Option<String> {
    let text = std::fs::read_to_string(tools.join("node_modules/binaryen/package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("version")?.as_str().map(str::to_string)
}

/// The `wasm-opt` script, installed with npm when missing or at another version.
pub(super) fn wasm_opt() -> anyhow::Result<PathBuf> {
    let tools = tools_dir();
    let script = tools.join("node_modules/binaryen/bin/wasm-opt");
    if installed_version(&tools).as_deref() != Some(VERSION) || !script.is_file() {
        std::fs::create_dir_all(&tools).with_context(|| format!("creating {}", tools.display()))?;
        let package = format!("binaryen@{VERSION}");
        process::run(
            "npm",
            &[
                "install",
                "--prefix",
                &tools.to_string_lossy(),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                &package,
            ],
        )
        .context("installing wasm-opt from npm's binaryen package (needs node and npm)")?;
        if installed_version(&tools).as_deref() != Some(VERSION) {
            bail!(
                "npm did not install binaryen {VERSION} into {}",
                tools.display()
            );
        }
    }
    Ok(script)
}

/// Optimises every module of `modules` for size in place, two at a time (wasm-opt runs on one core).
pub(super) fn optimize_all(modules: &[PathBuf]) -> anyhow::Result<()> {
    let script = wasm_opt()?;
    // The largest first, so the other lane takes the small ones meanwhile.
    let mut queue: Vec<&PathBuf> = modules.iter().collect();
    queue.sort_by_key(|module| {
        std::cmp::Reverse(std::fs::metadata(module).map_or(0, |meta| meta.len()))
    });
    let queue = std::sync::Mutex::new(queue.into_iter());
    let next = || queue.lock().ok().and_then(|mut queue| queue.next());
    std::thread::scope(|scope| {
        let lanes: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| -> anyhow::Result<()> {
                    while let Some(module) = next() {
                        optimize(&script, module)?;
                    }
                    Ok(())
                })
            })
            .collect();
        lanes.into_iter().try_for_each(|lane| {
            lane.join()
                .map_err(|_| anyhow::anyhow!("a wasm-opt lane panicked"))?
        })
    })
}

/// Optimises `wasm` for size in place.
fn optimize(script: &Path, wasm: &Path) -> anyhow::Result<()> {
    let optimized = wasm.with_extension("opt.wasm");
    let script_text = script.to_string_lossy();
    let input = wasm.to_string_lossy();
    let output = optimized.to_string_lossy();
    // Run through `node` explicitly: the script's `#!/usr/bin/env node` would also work, but this way a missing
    // Node.js is reported as such.
    let mut args = vec![script_text.as_ref()];
    args.extend(FLAGS);
    args.extend([input.as_ref(), "-o", output.as_ref()]);
    process::run("node", &args).context("wasm-opt")?;
    std::fs::rename(&optimized, wasm)
        .with_context(|| format!("replacing {} with the optimised WASM", wasm.display()))
}

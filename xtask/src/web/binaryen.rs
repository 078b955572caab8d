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

/// The features of [`FLAGS`] by their names in binaryen's JS API, for [`RUNNER`].
const FEATURES: &str = "BulkMemory,BulkMemoryOpt,CallIndirectOverlong,Multivalue,MutableGlobals,NontrappingFPToInt,ReferenceTypes,SignExt";

/// A module up to this size goes through [`RUNNER`]; a larger one through the `wasm-opt` script as before, whose
/// start-up is small beside its optimisation.
const RUNNER_MAX_BYTES: u64 = 64 * 1024;

/// `wasm-opt -Oz` with [`FLAGS`] over many modules in one Node.js process, through binaryen's JS API: the
/// `wasm-opt` script reads and compiles all of binaryen at every start, which took longer than optimising a small
/// chunk, and the split app has dozens of them.
const RUNNER: &str = r#"// Written by `cargo xtask build-web` (xtask/src/web/binaryen.rs): wasm-opt -Oz over every module named.
import binaryen from 'binaryen';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

const [features, ...paths] = process.argv.slice(2);
let enabled = 0;
for (const name of features.split(',')) {
  if (binaryen.Features[name] === undefined) throw new Error(`binaryen has no feature ${name}`);
  enabled |= binaryen.Features[name];
}
binaryen.setOptimizeLevel(2);
binaryen.setShrinkLevel(2);
binaryen.setDebugInfo(false);
for (const path of paths) {
  const module = binaryen.readBinary(readFileSync(path));
  module.setFeatures(enabled);
  if (!module.validate()) throw new Error(`${path}: binaryen finds the module invalid`);
  module.optimize();
  module.runPasses(['strip-debug', 'strip-producers']);
  writeFileSync(`${path}.opt`, module.emitBinary());
  module.dispose();
  renameSync(`${path}.opt`, path);
}
"#;

/// How this module optimises, for the cache key of `web.rs`: the version, the flags and the runner.
pub(super) fn recipe() -> String {
    format!(
        "{VERSION} {} runner {} up to {RUNNER_MAX_BYTES} bytes",
        FLAGS.join(" "),
        super::hash16(RUNNER.as_bytes())
    )
}

/// Optimises every module of `modules` for size in place, two lanes at a time (wasm-opt runs on one core): the
/// large ones one `wasm-opt` each, the small ones in one [`RUNNER`] process per lane.
pub(super) fn optimize_all(modules: &[PathBuf]) -> anyhow::Result<()> {
    let script = wasm_opt()?;
    let runner = tools_dir().join("wasm-opt-many.mjs");
    if std::fs::read_to_string(&runner).ok().as_deref() != Some(RUNNER) {
        std::fs::write(&runner, RUNNER).with_context(|| format!("writing {}", runner.display()))?;
    }
    let size = |module: &PathBuf| std::fs::metadata(module).map_or(0, |meta| meta.len());
    let (mut large, small): (Vec<&PathBuf>, Vec<&PathBuf>) = modules
        .iter()
        .partition(|module| size(module) > RUNNER_MAX_BYTES);
    // The largest first, so the other lane takes the small ones meanwhile.
    large.sort_by_key(|module| std::cmp::Reverse(size(module)));
    let mut jobs: Vec<Job> = large.into_iter().map(Job::One).collect();
    let halves = small.len().div_ceil(2).max(1);
    jobs.extend(small.chunks(halves).map(|half| Job::Many(half.to_vec())));
    let queue = std::sync::Mutex::new(jobs.into_iter());
    let next = || queue.lock().ok().and_then(|mut queue| queue.next());
    std::thread::scope(|scope| {
        let lanes: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| -> anyhow::Result<()> {
                    while let Some(job) = next() {
                        match job {
                            Job::One(module) => optimize(&script, module)?,
                            Job::Many(modules) => optimize_many(&runner, &modules)?,
                        }
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

/// What one lane runs at a time.
enum Job<'a> {
    One(&'a PathBuf),
    Many(Vec<&'a PathBuf>),
}

/// Optimises `modules` for size in place in one [`RUNNER`] process.
fn optimize_many(runner: &Path, modules: &[&PathBuf]) -> anyhow::Result<()> {
    let runner = runner.to_string_lossy();
    let paths: Vec<String> = modules
        .iter()
        .map(|module| module.to_string_lossy().into_owned())
        .collect();
    let mut args = vec![runner.as_ref(), FEATURES];
    args.extend(paths.iter().map(String::as_str));
    process::run("node", &args).context("wasm-opt through binaryen's JS API")
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

//! Embeds the built web app (`cargo xtask build-web` writes it to `target/web/`) into the binary, so the
//! server needs no files beside it. Without a build there, the server serves a page explaining how to make one.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use walk::files;

#[path = "../index/build/files.rs"]
mod walk;

fn content_type(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|extension| extension.to_str())
        .unwrap_or("")
    {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "json" => "application/json",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// A file name carrying a content hash (16 hex digits after a `-`) never changes content, so it may be cached
/// for a year.
fn is_hashed(name: &str) -> bool {
    name.split(['-', '.', '_'])
        .any(|part| part.len() == 16 && part.bytes().all(|byte| byte.is_ascii_hexdigit()))
}

/// CI starts the native test build beside the wasm32 build of the bundle this script embeds, so that cargo
/// compiles every crate that does not depend on this one while the bundle is being made. It names a file in
/// `CELLSCOPE_CI_BUNDLE_READY` that the xtask writes once the bundle is complete (`ok`) or its build failed; this
/// script waits for it before reading the bundle. The variable does not change what the script writes, so it is
/// not one cargo watches.
fn wait_for_bundle() {
    let Some(ready) = std::env::var_os("CELLSCOPE_CI_BUNDLE_READY").map(PathBuf::from) else {
        return;
    };
    let started = Instant::now();
    loop {
        match std::fs::read_to_string(&ready) {
            Ok(state) if state.trim() == "ok" => return,
            Ok(state) => {
                eprintln!(
                    "the web bundle was not built ({}: {}); see the wasm32 build's output",
                    ready.display(),
                    state.trim()
                );
                std::process::exit(1);
            }
            Err(_) if started.elapsed() > BUNDLE_WAIT => {
                eprintln!(
                    "waited {} s for {} (the web bundle) in vain",
                    BUNDLE_WAIT.as_secs(),
                    ready.display()
                );
                std::process::exit(1);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// Longer than any wasm32 build of the bundle on a slow machine, short enough that a lost xtask does not leave
/// cargo waiting for a day.
const BUNDLE_WAIT: Duration = Duration::from_secs(3600);

fn main() {
    wait_for_bundle();
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let web_dir = std::env::var_os("CELLSCOPE_WEB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir.join("../target/web"));
    // The directory is created (empty) when absent so that cargo can watch it: a later `build-web` then
    // triggers exactly one rebuild of this crate.
    let _ = std::fs::create_dir_all(&web_dir);
    println!("cargo:rerun-if-changed={}", web_dir.display());
    println!("cargo:rerun-if-env-changed=CELLSCOPE_WEB_DIR");
    let mut found = Vec::new();
    files(&web_dir, &mut found);
    found.sort();
    let mut code = String::from("pub static ASSETS: &[Asset] = &[\n");
    for path in &found {
        let Ok(relative) = path.strip_prefix(&web_dir) else {
            continue;
        };
        let relative = relative.to_string_lossy().replace('\\', "/");
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let absolute = path.canonicalize().unwrap_or_else(|_| path.clone());
        let _ = writeln!(
            code,
            "    Asset {{ path: {relative:?}, bytes: include_bytes!({:?}), content_type: {:?}, immutable: {} }},",
            absolute.display().to_string(),
            content_type(path),
            is_hashed(&name)
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("assets.rs");
    if let Err(error) = std::fs::write(&out, code) {
        println!("cargo:warning=cannot write {}: {error}", out.display());
    }
}

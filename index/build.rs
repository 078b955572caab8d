//! Names the code that reads run files (`CELLSCOPE_READ_CODE`, a hash of its sources), so that read results
//! cached by one build are never taken for another's.

use std::path::{Path, PathBuf};
use walk::files;

#[path = "build/files.rs"]
mod walk;

/// FNV-1a, 64 bits: stable across compilers and platforms (the standard library's hasher is not), which is all
/// a name for a set of source files needs.
fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A hash of everything that decides what reading a run gives: the indexer's sources, the model's and the
/// locked dependency versions. A cached read made by code with another hash is not used.
fn read_code_hash(manifest_dir: &Path) -> String {
    let workspace = manifest_dir.join("..");
    let mut paths = Vec::new();
    for directory in ["index/src", "model/src"] {
        let directory = workspace.join(directory);
        println!("cargo:rerun-if-changed={}", directory.display());
        files(&directory, &mut paths);
    }
    let lock = workspace.join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    paths.push(lock);
    paths.sort();
    let mut hash = 0xcbf2_9ce4_8422_2325;
    for path in &paths {
        let relative = path.strip_prefix(&workspace).unwrap_or(path);
        hash = fnv1a(hash, relative.to_string_lossy().as_bytes());
        hash = fnv1a(hash, &std::fs::read(path).unwrap_or_default());
    }
    format!("{hash:016x}")
}

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!(
        "cargo:rustc-env=CELLSCOPE_READ_CODE={}",
        read_code_hash(&manifest_dir)
    );
}

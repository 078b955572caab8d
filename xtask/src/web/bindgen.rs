//! wasm-bindgen, run in process through the `wasm-bindgen-cli-support` crate, and the check that it is exactly the
//! wasm-bindgen version the app was compiled against.
//!
//! The two must match to the patch level: the macro embeds a schema version in the WASM and the CLI refuses any
//! other with an error that does not say what to change. [`check_pin`] says it.

use anyhow::{Context, bail};
use std::path::Path;
use wasm_bindgen_cli_support::Bindgen;

/// The stem of the generated files: `cellscope.js` and `cellscope_bg.wasm`.
pub(super) const OUT_NAME: &str = "cellscope";

/// The one version of `name` in a Cargo.lock text; an error when it is absent or locked at several versions.
pub(super) fn locked_version(lock: &str, name: &str) -> anyhow::Result<String> {
    let wanted = format!("name = \"{name}\"");
    let mut versions = Vec::new();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() != wanted {
            continue;
        }
        // In a [[package]] entry the version follows the name on the next line.
        let version = lines
            .next()
            .and_then(|line| line.trim().strip_prefix("version = \""))
            .and_then(|rest| rest.strip_suffix('"'))
            .with_context(|| format!("Cargo.lock: no version line after `{wanted}`"))?;
        versions.push(version.to_string());
    }
    match versions.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("Cargo.lock has no package `{name}`"),
        many => bail!("Cargo.lock has several versions of `{name}`: {many:?}"),
    }
}

/// Fails with what to do when Cargo.lock's wasm-bindgen differs from the cli-support this xtask is built with;
/// returns that version.
pub(super) fn check_pin() -> anyhow::Result<String> {
    let path = crate::workspace_root().join("Cargo.lock");
    let lock =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    check_lock(&lock)
}

fn check_lock(lock: &str) -> anyhow::Result<String> {
    let library = locked_version(lock, "wasm-bindgen")?;
    let cli = locked_version(lock, "wasm-bindgen-cli-support")?;
    if library != cli {
        bail!(
            "Cargo.lock has wasm-bindgen {library} but the xtask's wasm-bindgen-cli-support is {cli}: they must be \
             the same version. Set `wasm-bindgen-cli-support = \"={library}\"` in xtask/Cargo.toml (or pin \
             wasm-bindgen back with `cargo update -p wasm-bindgen --precise {cli}`)."
        );
    }
    Ok(library)
}

/// Writes `cellscope.js` (ES module, `--target web`), `cellscope_bg.wasm` and any `snippets/` into `out_dir`.
pub(super) fn generate(input: &Path, out_dir: &Path, keep_names: bool) -> anyhow::Result<()> {
    let mut bindgen = Bindgen::new();
    bindgen
        .input_path(input)
        .out_name(OUT_NAME)
        .typescript(false)
        // The boot module always passes the hashed WASM URL, so the glue needs no default path (which would
        // point at a file that does not exist under that name).
        .omit_default_module_path(true)
        // Function names make panics and profiles readable in a dev build; wasm-opt drops them anyway.
        .remove_name_section(!keep_names)
        .remove_producers_section(true)
        // The shell's WASM exports its stack pointer, table and the other linker symbols to the views' chunks
        // (`split.rs`), which wasm-bindgen would otherwise drop; and it keeps the symbol names the chunks import
        // them by.
        .keep_lld_exports(true)
        .demangle(false);
    bindgen.web(true).context("wasm-bindgen --target web")?;
    let mut output = bindgen
        .generate_output()
        .with_context(|| format!("wasm-bindgen on {}", input.display()))?;
    output
        .emit(out_dir)
        .with_context(|| format!("writing wasm-bindgen output to {}", out_dir.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `=` pin in xtask/Cargo.toml, Cargo.lock's cli-support and Cargo.lock's wasm-bindgen agree.
    #[test]
    fn cli_support_pin_matches_the_lockfile() {
        let root = crate::workspace_root();
        let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
        let library = check_lock(&lock).unwrap();
        let manifest = std::fs::read_to_string(root.join("xtask/Cargo.toml")).unwrap();
        let pin = manifest
            .lines()
            .find_map(|line| line.trim().strip_prefix("wasm-bindgen-cli-support = \"="))
            .and_then(|rest| rest.split('"').next())
            .expect("xtask/Cargo.toml pins wasm-bindgen-cli-support with `=`");
        assert_eq!(
            pin, library,
            "xtask/Cargo.toml pins wasm-bindgen-cli-support ={pin} but Cargo.lock has wasm-bindgen {library}"
        );
    }

    #[test]
    fn a_mismatch_says_what_to_change() {
        let lock = "[[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.131\"\n\n\
                    [[package]]\nname = \"wasm-bindgen-cli-support\"\nversion = \"0.2.130\"\n";
        let error = check_lock(lock).unwrap_err().to_string();
        assert!(
            error.contains("wasm-bindgen-cli-support = \"=0.2.131\""),
            "{error}"
        );
    }
}

//! Splits the compiled app at its split points (`app/src/views.rs`) into the shell's WASM and the views' chunks,
//! in process through `wasm_split_cli_support`, the splitter cargo-leptos runs after linking. It needs the
//! linker's relocations (`--emit-relocs`, set by `app/build.rs`) to tell which function and
//! data each split point reaches: code that only one view reaches goes into that view's chunk, code that several
//! views reach but the shell does not into a chunk they share, the rest stays in the shell.

use anyhow::Context;
use std::collections::BTreeMap;
use std::path::Path;

/// The module the shell's WASM imports the chunks' loaders from: the splitter writes it, and the bundle folds it
/// into the wasm-bindgen glue (`bundle.rs`), which is why it is named here and never served.
pub(super) const LOADERS: &str = "cellscope_split.js";

/// The shell's WASM, which wasm-bindgen then processes as it did the whole app.
pub(super) const SHELL: &str = "shell.wasm";

/// Where a cache entry of `web.rs` keeps the chunks, the loaders' module and the manifest.
pub(super) const CHUNKS_DIR: &str = "chunks";

/// The splitter's version (as pinned in xtask/Cargo.toml), part of a cache entry's recipe.
pub(super) const VERSION: &str = "0.2.4";

/// The prefix of a split point that is no view: code the page loads after its first screen, when an action asks for
/// it (an export) or once the first view's data is in (what reads provenance). It counts in no first screen.
pub(crate) const LATER: &str = "later_";

/// Which chunk files each split point needs, in the order they load (JSON: name → file stems).
pub(super) const MANIFEST: &str = "chunks.json";

/// The split point's name → the stems of the chunk files it loads.
pub(super) type Manifest = BTreeMap<String, Vec<String>>;

/// Writes the shell's WASM, the chunks (`split_<name>.wasm` for a split point's own code, `chunk_<i>.wasm` for
/// code several share), the loaders' module and the [`MANIFEST`] into `out_dir`.
pub(super) fn split(compiled: &Path, out_dir: &Path) -> anyhow::Result<()> {
    let input =
        std::fs::read(compiled).with_context(|| format!("reading {}", compiled.display()))?;
    let shell = out_dir.join(SHELL);
    let loaders = format!("./{LOADERS}");
    let glue = format!("./{}.js", super::bindgen::OUT_NAME);
    let split = wasm_split_cli_support::transform({
        let mut options = wasm_split_cli_support::Options::new(&input);
        options.output_dir = out_dir;
        options.main_out_path = &shell;
        options.link_name = &loaders;
        options.main_module = &glue;
        options
    })
    .map_err(|error| {
        anyhow::anyhow!(
            "splitting {} into chunks: {error:?}\n(the split reads the linker's relocations, which \
             app/build.rs keeps with `--emit-relocs`)",
            compiled.display()
        )
    })?;
    let manifest: Manifest = split.prefetch_map.into_iter().collect();
    std::fs::write(
        out_dir.join(MANIFEST),
        serde_json::to_string_pretty(&manifest)?,
    )
    .with_context(|| format!("writing {}", out_dir.join(MANIFEST).display()))
}

/// The [`MANIFEST`] in `dir`.
pub(super) fn manifest(dir: &Path) -> anyhow::Result<Manifest> {
    let path = dir.join(MANIFEST);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
}

/// The glue's function that fetches a chunk by its file name: from the offline copy's own data when the page is
/// one (`server/src/bundle.rs`), else from beside the glue.
const FETCH_CHUNK: &str = "const cellscopeChunk = (file) =>\n  globalThis.__cellscopeOffline?.chunk(file) ?? fetch(new URL(`./${file}`, import.meta.url).href);\n";

/// The wasm-bindgen glue with the loaders' module folded in, so that the page loads one script and an offline
/// copy inlines it whole: the glue's imports of [`LOADERS`] become the loaders' own bindings, the loaders' import
/// of the glue goes, and each chunk is fetched by its content-hashed name (`hashed`: a chunk's file stem → name).
pub(super) fn fold_loaders(
    glue: &str,
    loaders: &str,
    hashed: &BTreeMap<String, String>,
) -> anyhow::Result<String> {
    let import_glue = format!(
        "import {{ initSync }} from \"./{}.js\";",
        super::bindgen::OUT_NAME
    );
    anyhow::ensure!(
        loaders.contains(&import_glue),
        "the loaders' module lacks `{import_glue}` (a splitter this xtask does not know)"
    );
    let mut body = loaders.replace(&import_glue, "");
    for (stem, file) in hashed {
        let fetch = format!("fetch(new URL(\"./{stem}.wasm\", import.meta.url))");
        anyhow::ensure!(
            body.contains(&fetch),
            "the loaders' module never fetches {stem}.wasm as `{fetch}`"
        );
        body = body.replace(&fetch, &format!("cellscopeChunk(\"{file}\")"));
    }
    anyhow::ensure!(
        !body.contains("import.meta.url"),
        "the loaders' module fetches a file that is not a chunk"
    );
    let mut folded = String::new();
    let mut exported = Vec::new();
    for line in body.lines() {
        match line.strip_prefix("export const ") {
            Some(rest) => {
                let name = rest.split([' ', '=']).next().unwrap_or_default();
                exported.push(name.to_string());
                folded.push_str("const ");
                folded.push_str(rest);
            }
            None => folded.push_str(line),
        }
        folded.push('\n');
    }
    anyhow::ensure!(
        !folded.contains("\nexport ") && !folded.contains("\nimport "),
        "the loaders' module has an import or export this xtask does not fold"
    );
    // wasm-bindgen imports the module once per loader the WASM imports from it, each as a namespace.
    let namespace = format!(" from \"./{LOADERS}\"");
    let mut out = String::new();
    let mut bindings = Vec::new();
    for line in glue.lines() {
        let binding = line
            .strip_prefix("import * as ")
            .and_then(|rest| rest.strip_suffix(&namespace))
            .or_else(|| {
                line.strip_prefix("import * as ")
                    .and_then(|rest| rest.strip_suffix(&format!("{namespace};")))
            });
        match binding {
            Some(binding) => bindings.push(binding.to_string()),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    anyhow::ensure!(
        !bindings.is_empty(),
        "the glue never imports {LOADERS}: the WASM has no split point"
    );
    anyhow::ensure!(
        !out.contains(&namespace),
        "the glue imports {LOADERS} in a way this xtask does not fold"
    );
    out.push_str("\n// The views' chunks and their loaders (`cargo xtask build-web`, `xtask/src/web/split.rs`).\n");
    out.push_str(FETCH_CHUNK);
    out.push_str(&folded);
    let object = format!("{{ __proto__: null, {} }}", exported.join(", "));
    for binding in bindings {
        out.push_str(&format!("const {binding} = {object};\n"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of the glue wasm-bindgen writes for a WASM importing two loaders from the loaders' module.
    const GLUE: &str = "import * as import1 from \"./cellscope_split.js\"\n\
        import * as import2 from \"./cellscope_split.js\"\n\
        function __wbg_get_imports() {\n\
        return { \"./cellscope_bg.js\": import0, \"./cellscope_split.js\": import1, \"./cellscope_split.js\": import2, };\n\
        }\n\
        export { initSync, __wbg_init as default };\n";

    /// The shape of the loaders' module the splitter writes: one shared chunk and two split points.
    const LOADERS_JS: &str = "import { initSync } from \"./cellscope.js\";\n\
        /* a, b */\n\
        const __chunk_2 = makeLoad(() => {\n\
        \x20   const src = fetch(new URL(\"./chunk_2.wasm\", import.meta.url));\n\
        }, []);\n\
        export const __wasm_split_load_b = wrapAsyncCb(makeLoad(() => {\n\
        \x20   const src = fetch(new URL(\"./split_b.wasm\", import.meta.url));\n\
        }, [__chunk_2]));\n\
        export const __wasm_split_load_a = wrapAsyncCb(makeLoad(() => {\n\
        \x20   const src = fetch(new URL(\"./split_a.wasm\", import.meta.url));\n\
        }, [__chunk_2]));\n";

    fn hashed() -> BTreeMap<String, String> {
        ["chunk_2", "split_a", "split_b"]
            .iter()
            .map(|stem| (stem.to_string(), format!("{stem}-0123456789abcdef.wasm")))
            .collect()
    }

    #[test]
    fn the_loaders_fold_into_the_glue_and_fetch_hashed_names() {
        let folded = fold_loaders(GLUE, LOADERS_JS, &hashed()).unwrap();
        // No module is imported any more: the page loads the glue alone.
        assert!(!folded.contains("import * as"), "{folded}");
        assert!(!folded.contains("import { initSync }"), "{folded}");
        // The WASM still names the module, now answered by the loaders' own bindings.
        assert!(folded.contains("\"./cellscope_split.js\": import1"));
        let object = "{ __proto__: null, __wasm_split_load_b, __wasm_split_load_a }";
        assert!(
            folded.contains(&format!("const import1 = {object};")),
            "{folded}"
        );
        assert!(
            folded.contains(&format!("const import2 = {object};")),
            "{folded}"
        );
        assert!(folded.contains("const __wasm_split_load_a = wrapAsyncCb("));
        assert!(!folded.contains("export const"));
        for stem in ["chunk_2", "split_a", "split_b"] {
            assert!(
                folded.contains(&format!("cellscopeChunk(\"{stem}-0123456789abcdef.wasm\")")),
                "{stem}: {folded}"
            );
        }
        assert_eq!(folded.matches("import.meta.url").count(), 1, "{folded}");
    }

    #[test]
    fn a_loaders_module_of_another_shape_is_an_error() {
        // A chunk the loaders never fetch.
        let mut more = hashed();
        more.insert("chunk_9".into(), "chunk_9-0123456789abcdef.wasm".into());
        assert!(fold_loaders(GLUE, LOADERS_JS, &more).is_err());
        // A file fetched that is not a chunk.
        let mut fewer = hashed();
        fewer.remove("split_a");
        assert!(fold_loaders(GLUE, LOADERS_JS, &fewer).is_err());
        // A glue that never imports the loaders (no split point).
        assert!(fold_loaders("export { initSync };\n", LOADERS_JS, &hashed()).is_err());
        // Loaders that do not import the glue's `initSync`.
        let other = LOADERS_JS.replace("import { initSync } from \"./cellscope.js\";", "");
        assert!(fold_loaders(GLUE, &other, &hashed()).is_err());
    }

    #[test]
    fn the_splitter_pin_is_the_locked_version() {
        let lock = std::fs::read_to_string(crate::workspace_root().join("Cargo.lock")).unwrap();
        assert_eq!(
            super::super::bindgen::locked_version(&lock, "wasm_split_cli_support").unwrap(),
            VERSION
        );
    }
}

//! The offline audit bundle: one self-contained HTML file holding the app (its script, WebAssembly and styles),
//! the API bodies a view needs (index, cells, pre-refill cells, provenance) and the request rows of the cells in
//! that view, so that it opens from disk with no server and shows exactly that view.
//!
//! The page's data rides in two `<script>` elements of non-script types (gzip in base64 text, inert), and one inline
//! module starts the app from them. The app answers its API requests from the page's data when it is there
//! (`app/src/offline.rs`); a request the copy cannot answer, such as the rows of a cell outside the view, says so.
//! Inline script is fine on a `file://` page: the Content-Security-Policy that forbids it is a header of the
//! server's responses, and `/api/bundle` sends the file as a download, never as a page of the server's origin.

use crate::export::{self, Format};
use crate::http::assets;
use crate::http::snapshot::Snapshot;
use base64::Engine as _;
use cellscope_model::api::OfflineMeta;
use cellscope_model::explore::filtered;
use cellscope_model::requests::{requests_query, requests_schema, requests_to_batch};
use cellscope_model::schema::write_ipc_stream;
use cellscope_model::view_state::ViewState;
use cellscope_model::{CellKey, CellSummary};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The most bytes of request rows (Arrow IPC, before base64) a bundle carries. Past it the remaining cells in view
/// go without their rows, and the page says how many have them: a whole sweep's rows would make a file no browser
/// opens comfortably.
pub const MAX_ROW_BYTES: usize = 48 << 20;

#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error(
        "this binary was built without the web app, so it has no app to put in a bundle; build both with `cargo xtask serve` or `cargo xtask build-web` then `cargo build --release -p cellscope`"
    )]
    NoApp,
    #[error("the app's script cannot be inlined: {0}")]
    Glue(String),
    #[error("encoding {what}: {message}")]
    Encoding { what: String, message: String },
}

/// A bundle and what it holds.
pub struct Bundle {
    pub html: String,
    pub cells_in_view: usize,
    /// Cells in view whose request rows are in the file (all of them unless [`MAX_ROW_BYTES`] was reached).
    pub cells_with_rows: usize,
    /// Cells whose rows could not be read (a file changed since indexing): named, with the reason.
    pub unreadable: Vec<(CellKey, String)>,
}

#[derive(Serialize)]
struct PageData {
    /// What the copy is of, read by the app's offline banner.
    meta: OfflineMeta,
    /// API path and query → body, base64.
    bodies: BTreeMap<String, String>,
}

/// Builds the bundle of `view_query` (a query string of the app, with or without `?`) over `snapshot`, which
/// should be complete (checksums and backup comparisons in), as the rows of refilled cells need the backups.
pub fn build(
    snapshot: &Snapshot,
    view_query: &str,
    made_at_unix_ms: u64,
) -> Result<Bundle, BundleError> {
    let app = assets::app_files().ok_or(BundleError::NoApp)?;
    let glue =
        std::str::from_utf8(app.glue).map_err(|error| BundleError::Glue(error.to_string()))?;
    // The start below calls the glue's init function by its name, and the glue must not end its own element.
    if !glue.contains("__wbg_init as default") {
        return Err(BundleError::Glue(
            "it has no `__wbg_init` (a wasm-bindgen version this bundler does not know)".into(),
        ));
    }
    if glue.contains("</script") || glue.contains("<!--") {
        return Err(BundleError::Glue(
            "it contains `</script` or `<!--`, which would end the element it is inlined in".into(),
        ));
    }
    let (mut state, _ignored) = ViewState::parse_query(view_query);
    // A copy is of one snapshot: a pinned snapshot in the link is the one bundled, or the current one.
    state.at = None;
    let view = state.to_query();

    let index = &snapshot.index;
    let encode = |what: &str, result: Result<Vec<u8>, String>| {
        result.map_err(|message| BundleError::Encoding {
            what: what.to_string(),
            message,
        })
    };
    let mut bodies: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    bodies.insert("/api/index".into(), snapshot.index_json.to_vec());
    bodies.insert("/api/cells".into(), snapshot.cells_arrow.to_vec());
    bodies.insert("/api/provenance".into(), snapshot.provenance_json.to_vec());
    bodies.insert(
        format!("/api/cells?{}", cellscope_model::query::PRE_REFILL_CELLS),
        encode(
            "the pre-refill cells",
            export::encode(&index.pre_refill_cells, Format::Arrow)
                .map_err(|error| error.to_string()),
        )?,
    );

    // The rows of the cells in view, the inspected cell first, until the budget is spent.
    let in_view: Vec<&CellSummary> = filtered(&index.cells, &state);
    let mut keys: Vec<&CellKey> = Vec::with_capacity(in_view.len() + 1);
    if let Some(inspected) = &state.cell {
        keys.push(inspected);
    }
    keys.extend(in_view.iter().map(|cell| &cell.key));
    let disk = cellscope_index::storage::LocalDisk::new(&index.root);
    let mut row_bytes = 0usize;
    let mut unreadable = Vec::new();
    let mut seen = BTreeSet::new();
    let mut with_rows: BTreeSet<&CellKey> = BTreeSet::new();
    for key in keys {
        if !seen.insert(key) || row_bytes >= MAX_ROW_BYTES {
            continue;
        }
        let Some(locator) = index.rows.get(key) else {
            continue;
        };
        let rows = match cellscope_index::read_rows(&disk, locator) {
            Ok(rows) => rows,
            Err(error) => {
                unreadable.push((key.clone(), error.to_string()));
                continue;
            }
        };
        let body = encode(
            "request rows",
            requests_to_batch(&rows)
                .and_then(|batch| write_ipc_stream(&[batch], &requests_schema()))
                .map_err(|error| error.to_string()),
        )?;
        row_bytes += body.len();
        with_rows.insert(key);
        bodies.insert(format!("/api/requests?{}", requests_query(key)), body);
    }

    // The inspected cell may lie outside the view: only the cells in view are counted.
    let cells_with_rows = in_view
        .iter()
        .filter(|cell| with_rows.contains(&cell.key))
        .count();
    let data = PageData {
        meta: OfflineMeta {
            snapshot: snapshot.id.clone(),
            made_at_unix_ms,
            view: view.clone(),
            cells_in_view: in_view.len(),
            cells_with_rows,
        },
        bodies: bodies
            .into_iter()
            .map(|(path, body)| (path, packed(&body)))
            .collect(),
    };
    let data_json = serde_json::to_string(&data).map_err(|error| BundleError::Encoding {
        what: "the page's data".into(),
        message: error.to_string(),
    })?;
    let wasm = packed(app.wasm);
    // Every view's chunk, so that each view opens offline as it does served.
    let chunks: BTreeMap<&str, String> = app
        .chunks
        .iter()
        .map(|(name, bytes)| (*name, packed(bytes)))
        .collect();
    let chunks_json = serde_json::to_string(&chunks).map_err(|error| BundleError::Encoding {
        what: "the app's chunks".into(),
        message: error.to_string(),
    })?;
    let css = String::from_utf8_lossy(app.css);
    let html = page(
        &css,
        &script_safe(&data_json),
        &App {
            wasm_base64: &wasm,
            chunks_json: &script_safe(&chunks_json),
            glue,
        },
        &snapshot.id,
    );
    Ok(Bundle {
        html,
        cells_in_view: in_view.len(),
        cells_with_rows,
        unreadable,
    })
}

/// A body as the page carries it: gzip (the browser's own `DecompressionStream` reads it back), then base64. Arrow
/// tables of request rows shrink about fourfold, the WebAssembly about half.
fn packed(body: &[u8]) -> String {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing into a `Vec` cannot fail.
    let gzipped = encoder
        .write_all(body)
        .and_then(|()| encoder.finish())
        .unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(gzipped)
}

/// JSON made safe inside a `<script>` element: no `<` at all (a view's text could hold `</script>`).
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// The app as the page inlines it: the shell's WebAssembly (gzip, base64), the views' chunks (file name → gzip,
/// base64, as JSON) and the wasm-bindgen glue.
struct App<'a> {
    wasm_base64: &'a str,
    chunks_json: &'a str,
    glue: &'a str,
}

fn page(css: &str, data_json: &str, app: &App, snapshot: &str) -> String {
    let App {
        wasm_base64,
        chunks_json,
        glue,
    } = app;
    let css = css.replace("</style", "<\\/style");
    format!(
        r#"<!doctype html>
<!-- cellscope offline copy of snapshot {snapshot}: opens from disk with no server. -->
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>cellscope: offline copy of {snapshot}</title>
<link rel="icon" href="data:,">
<style>
{css}</style>
</head>
<body>
<p id="boot-loading" class="boot-loading">Loading cellscope…</p>
<noscript>cellscope needs JavaScript and WebAssembly.</noscript>
<script type="application/json" id="cellscope-offline">{data_json}</script>
<script type="application/octet-stream" id="cellscope-wasm">{wasm_base64}</script>
<script type="application/json" id="cellscope-chunks">{chunks_json}</script>
<script type="module">
{glue}
// Starts the app from the page's own data (cellscope bundle).
performance.mark('cellscope:boot');
// Each body is gzip, then base64: back to bytes, then through the browser's own decompression.
const cellscopeUnpack = async (text) => {{
  const gzipped = Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  const stream = new Blob([gzipped]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}};
const cellscopeData = JSON.parse(document.getElementById('cellscope-offline').textContent);
const cellscopeChunks = JSON.parse(document.getElementById('cellscope-chunks').textContent);
window.__cellscopeOffline = {{
  meta: cellscopeData.meta,
  // A promise of the body of an API path and query, or `undefined` when the copy does not hold it.
  bytes: (path) => {{
    const body = cellscopeData.bodies[path];
    return body === undefined ? undefined : cellscopeUnpack(body);
  }},
  // A view's chunk of the app by its file name, answered as `fetch` would answer it (the glue asks).
  chunk: (file) => {{
    const body = cellscopeChunks[file];
    return body === undefined ? undefined : cellscopeUnpack(body).then((wasm) =>
      new Response(wasm, {{ headers: {{ 'Content-Type': 'application/wasm' }} }}));
  }},
}};
cellscopeUnpack(document.getElementById('cellscope-wasm').textContent)
  .then((wasm) => __wbg_init({{ module_or_path: wasm }}))
  .then(
  () => performance.mark('cellscope:started'),
  (error) => {{
    document.documentElement.dataset.bootError = String(error);
    console.error('cellscope failed to start', error);
  }},
);
</script>
</body>
</html>
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_in_a_script_element_cannot_close_it() {
        let json = serde_json::to_string(
            &serde_json::json!({"view": "q=</script><script>alert(1)</script>"}),
        )
        .unwrap();
        let safe = script_safe(&json);
        assert!(!safe.contains('<'));
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["view"], "q=</script><script>alert(1)</script>");
    }
}

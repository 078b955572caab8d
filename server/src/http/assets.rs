//! The web app bundle embedded at compile time (see `build.rs`), served with the right content types and
//! cache headers, and an `index.html` fallback for app routes.

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

pub struct Asset {
    pub path: &'static str,
    pub bytes: &'static [u8],
    pub content_type: &'static str,
    /// The file name carries a content hash: cache it for a year.
    pub immutable: bool,
}

include!(concat!(env!("OUT_DIR"), "/assets.rs"));

const NOT_BUILT: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cellscope: app not built</title>
<link rel="icon" href="data:,"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>cellscope</h1>
<p>This binary was built without the web app, so only the API is available
(<a href="/api/index">/api/index</a>, <a href="/api/cells?format=json">/api/cells</a>).</p>
<p>Build the app and the server together with <code>cargo xtask serve</code> (or <code>cargo xtask build-web</code>
followed by <code>cargo build --release -p cellscope</code>).</p>
</body></html>
"#;

fn find(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|asset| asset.path == path)
}

fn serve(asset: &Asset) -> Response {
    let cache = if asset.immutable {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static(asset.content_type)),
            (CACHE_CONTROL, HeaderValue::from_static(cache)),
        ],
        asset.bytes,
    )
        .into_response()
}

/// Serves `uri` from the bundle. Paths without an extension are app routes and get `index.html`; a missing
/// file with an extension is a 404. Nothing here touches the file system.
pub async fn static_file(uri: Uri) -> Response {
    if is_suspicious(uri.path()) {
        return (
            StatusCode::BAD_REQUEST,
            [(CACHE_CONTROL, "no-cache")],
            "bad path",
        )
            .into_response();
    }
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    if let Some(asset) = find(path) {
        return serve(asset);
    }
    let last = path.rsplit('/').next().unwrap_or(path);
    if last.contains('.') && path != "index.html" {
        return (
            StatusCode::NOT_FOUND,
            [(CACHE_CONTROL, "no-cache")],
            "not found",
        )
            .into_response();
    }
    match find("index.html") {
        Some(index) => serve(index),
        None => (
            [
                (CONTENT_TYPE, "text/html; charset=utf-8"),
                (CACHE_CONTROL, "no-cache"),
            ],
            NOT_BUILT,
        )
            .into_response(),
    }
}

/// Paths that try to climb out of a directory or smuggle separators. Nothing is read from disk here anyway;
/// rejecting them keeps the answer an honest 400 instead of the app page.
fn is_suspicious(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    path.starts_with("//")
        || path.contains("..")
        || path.contains('\\')
        || ["%2e", "%2f", "%5c", "%00", "%25"]
            .iter()
            .any(|encoded| lower.contains(encoded))
}

/// The app's own files, for inlining into an offline bundle: the wasm-bindgen glue, the shell's WebAssembly, the
/// views' chunks by file name and the stylesheet (`None` when the binary was built without the app).
pub struct AppFiles {
    pub glue: &'static [u8],
    pub wasm: &'static [u8],
    pub chunks: Vec<(&'static str, &'static [u8])>,
    pub css: &'static [u8],
}

pub fn app_files() -> Option<AppFiles> {
    let named = |matches: &dyn Fn(&str) -> bool| {
        ASSETS
            .iter()
            .find(|asset| matches(asset.path))
            .map(|asset| asset.bytes)
    };
    // Every other WebAssembly file is a chunk a view loads (`cargo xtask build-web` names them).
    let chunks = ASSETS
        .iter()
        .filter(|asset| asset.path.ends_with(".wasm") && !asset.path.ends_with("_bg.wasm"))
        .map(|asset| (asset.path, asset.bytes))
        .collect();
    Some(AppFiles {
        glue: named(&|path| path.starts_with("cellscope-") && path.ends_with(".js"))?,
        wasm: named(&|path| path.ends_with("_bg.wasm"))?,
        chunks,
        css: named(&|path| path.starts_with("app-") && path.ends_with(".css"))?,
    })
}

/// Whether the app bundle is embedded.
pub fn app_embedded() -> bool {
    find("index.html").is_some()
}

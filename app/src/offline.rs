//! The offline copy (`cellscope bundle`, `GET /api/bundle`): a page that carries its own data answers the app's
//! API requests from it, opens on the view it was made for, and says in a banner that it is a copy.
//!
//! The page's start-up script puts `window.__cellscopeOffline` in place before the app starts: `meta` (what the
//! copy is of) and `bytes(path)`, a promise of the body of an API path and query, or `undefined` when the copy
//! does not hold it. Without that object the app is the served one and nothing here changes anything.

use std::sync::OnceLock;
use wasm_bindgen::{JsCast, JsValue};

/// What an offline copy is of: the model's type, which the server writes into the page.
pub(crate) use cellscope_model::api::OfflineMeta as Meta;

fn handle() -> Option<JsValue> {
    let window = web_sys::window()?;
    let handle = js_sys::Reflect::get(&window, &JsValue::from_str("__cellscopeOffline")).ok()?;
    (!handle.is_undefined() && !handle.is_null()).then_some(handle)
}

/// The copy's description, or `None` for the served app.
pub(crate) fn meta() -> Option<&'static Meta> {
    // The page is one or the other for its whole life: read once. (The app is single-threaded; `OnceLock` is
    // simply the standard lazily set cell.)
    static META: OnceLock<Option<Meta>> = OnceLock::new();
    META.get_or_init(|| {
        let meta = js_sys::Reflect::get(&handle()?, &JsValue::from_str("meta")).ok()?;
        let text = js_sys::JSON::stringify(&meta).ok()?.as_string()?;
        serde_json::from_str(&text).ok()
    })
    .as_ref()
}

/// Whether this page is an offline copy.
pub(crate) fn is_offline() -> bool {
    meta().is_some()
}

/// The body the copy holds for `path` (an API path and query, as the app asks it), or `None`. Bodies are
/// stored compressed; the page's script unpacks one when asked.
pub(crate) async fn body(path: &str) -> Option<Vec<u8>> {
    let handle = handle()?;
    let bytes = js_sys::Reflect::get(&handle, &JsValue::from_str("bytes")).ok()?;
    let bytes: js_sys::Function = bytes.dyn_into().ok()?;
    let promise: js_sys::Promise = bytes
        .call1(&handle, &JsValue::from_str(path))
        .ok()?
        .dyn_into()
        .ok()?;
    let body = wasm_bindgen_futures::JsFuture::from(promise).await.ok()?;
    body.dyn_into::<js_sys::Uint8Array>()
        .ok()
        .map(|array| array.to_vec())
}

//! Small wrappers over browser APIs: the URL, history, downloads and the clipboard.

use wasm_bindgen::JsCast;

pub fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

/// The current query string, with its `?`.
pub fn search() -> String {
    window()
        .and_then(|window| window.location().search().ok())
        .unwrap_or_default()
}

pub fn href() -> String {
    window()
        .and_then(|window| window.location().href().ok())
        .unwrap_or_default()
}

/// Puts `query` into the address bar: a new history entry (`push`) or in place.
pub fn set_query(query: &str, push: bool) {
    let Some(window) = window() else { return };
    let Ok(history) = window.history() else {
        return;
    };
    let path = window.location().pathname().unwrap_or_else(|_| "/".into());
    let url = if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    };
    let _ = if push {
        history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
    } else {
        history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
    };
}

/// Offers `bytes` as a file download.
pub fn download(name: &str, mime: &str, bytes: &[u8]) {
    let array = js_sys::Uint8Array::from(bytes);
    let parts = js_sys::Array::of1(&array);
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    download_url(name, &url);
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// Follows `url` as a download named `name` (also used for canvas data URLs).
pub fn download_url(name: &str, url: &str) {
    let Some(document) = window().and_then(|window| window.document()) else {
        return;
    };
    let Ok(element) = document.create_element("a") else {
        return;
    };
    let Ok(anchor) = element.dyn_into::<web_sys::HtmlAnchorElement>() else {
        return;
    };
    anchor.set_href(url);
    anchor.set_download(name);
    anchor.click();
}

pub fn copy_to_clipboard(text: &str) {
    if let Some(window) = window() {
        let _ = window.navigator().clipboard().write_text(text);
    }
}

pub fn device_pixel_ratio() -> f64 {
    window()
        .map_or(1.0, |window| window.device_pixel_ratio())
        .max(1.0)
}

/// A unix time in milliseconds as a local date-time string.
pub fn local_time(unix_ms: f64) -> String {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(unix_ms));
    String::from(date.to_locale_string("sv-SE", &wasm_bindgen::JsValue::UNDEFINED))
}

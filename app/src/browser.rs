//! Small wrappers over browser APIs: the URL, history, downloads and the clipboard.

use wasm_bindgen::JsCast;

pub(crate) fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

/// The current query string, with its `?`. An offline copy opened without one shows the view it was made for.
pub(crate) fn search() -> String {
    let search = window()
        .and_then(|window| window.location().search().ok())
        .unwrap_or_default();
    match crate::offline::meta() {
        Some(meta) if search.is_empty() => format!("?{}", meta.view),
        _ => search,
    }
}

pub(crate) fn href() -> String {
    window()
        .and_then(|window| window.location().href().ok())
        .unwrap_or_default()
}

/// Puts `query` into the address bar: a new history entry (`push`) or in place.
pub(crate) fn set_query(query: &str, push: bool) {
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
pub(crate) fn download(name: &str, mime: &str, bytes: &[u8]) {
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
pub(crate) fn download_url(name: &str, url: &str) {
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

/// Whether "Copy link" got the text onto the clipboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Copied {
    Yes,
    /// Neither the clipboard API nor the copy command worked: the user copies by hand.
    No,
}

/// Copies `text`: through the clipboard API where the page may use it (secure origins: https, localhost),
/// otherwise (plain HTTP on a shared host) by selecting it in a hidden text field and running the copy command.
pub(crate) async fn copy_to_clipboard(text: &str) -> Copied {
    let Some(window) = window() else {
        return Copied::No;
    };
    let navigator = window.navigator();
    let has_clipboard = js_sys::Reflect::get(&navigator, &"clipboard".into())
        .is_ok_and(|clipboard| !clipboard.is_undefined() && !clipboard.is_null());
    if window.is_secure_context() && has_clipboard {
        let promise = navigator.clipboard().write_text(text);
        if wasm_bindgen_futures::JsFuture::from(promise).await.is_ok() {
            return Copied::Yes;
        }
    }
    copy_with_command(text)
}

fn copy_with_command(text: &str) -> Copied {
    let Some(document) = window()
        .and_then(|window| window.document())
        .and_then(|document| document.dyn_into::<web_sys::HtmlDocument>().ok())
    else {
        return Copied::No;
    };
    let Some(field) = document
        .create_element("textarea")
        .ok()
        .and_then(|element| element.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
    else {
        return Copied::No;
    };
    field.set_value(text);
    let _ = field.set_attribute("readonly", "");
    let _ = field.set_attribute("style", "position:fixed;top:-1000px;opacity:0");
    let Some(body) = document.body() else {
        return Copied::No;
    };
    let _ = body.append_child(&field);
    field.select();
    let copied = document.exec_command("copy").unwrap_or(false);
    field.remove();
    if copied { Copied::Yes } else { Copied::No }
}

pub(crate) fn device_pixel_ratio() -> f64 {
    window()
        .map_or(1.0, |window| window.device_pixel_ratio())
        .max(1.0)
}

/// A unix time in milliseconds as a local date-time string.
pub(crate) fn local_time(unix_ms: f64) -> String {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(unix_ms));
    String::from(date.to_locale_string("sv-SE", &wasm_bindgen::JsValue::UNDEFINED))
}

/// Gives the keyboard focus to the first element matching `css`, if there is one.
pub(crate) fn focus(css: &str) {
    use wasm_bindgen::JsCast;
    if let Some(element) = window()
        .and_then(|window| window.document())
        .and_then(|document| document.query_selector(css).ok().flatten())
        .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = element.focus();
    }
}

/// Runs `then` with what `load` gives once it is loaded: the code of an action loaded on demand (an export, a
/// decoder), whose chunk the page fetches the first time the action is asked for. `then` runs under the
/// component that asked, so it reads the app's context as the handler would have. A failed load is said in an
/// alert, since the button pressed shows nothing else.
pub(crate) fn when_loaded<T: 'static>(
    load: impl std::future::Future<Output = Result<T, leptos::wasm_split::SplitLoaderError>> + 'static,
    then: impl FnOnce(T) + 'static,
) {
    let owner = leptos::prelude::Owner::current();
    leptos::task::spawn_local(async move {
        match load.await {
            Ok(loaded) => match owner {
                Some(owner) => owner.with(|| then(loaded)),
                None => then(loaded),
            },
            Err(error) => {
                if let Some(window) = window() {
                    let _ = window.alert_with_message(&format!(
                        "Cannot load the code of this action: {error}. The server may have a newer version of \
                         the app: reloading the page loads it."
                    ));
                }
            }
        }
    });
}

//! Live updates: new snapshot ids from the server, over at most one connection per browser.
//!
//! A SharedWorker (`/events-worker.js`) holds the only `/api/events` stream for every tab of the origin and
//! relays it; the page disconnects on `pagehide` (and reconnects when the browser brings it back from its
//! back/forward cache). Where SharedWorker is missing, the page asks `/api/index` now and then instead, which
//! holds no connection open.

use crate::browser;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

/// How often a page without SharedWorker asks for the current snapshot.
const POLL_MS: i32 = 15_000;

/// Calls `on_snapshot` with every snapshot id the server announces, for as long as the page lives.
pub(crate) fn listen(on_snapshot: impl Fn(String) + 'static) {
    connect(Rc::new(on_snapshot));
}

fn connect(on_snapshot: Rc<dyn Fn(String)>) {
    let Some(window) = browser::window() else {
        return;
    };
    let port = match web_sys::SharedWorker::new("/events-worker.js") {
        Ok(worker) => worker.port(),
        Err(_) => {
            poll(on_snapshot);
            return;
        }
    };
    let relay = on_snapshot.clone();
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            if let Some(id) = event.data().as_string() {
                relay(id);
            }
        });
    port.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    port.start();
    on_message.forget();
    // Leaving the page (closing the tab, navigating away, or entering the back/forward cache) lets go of the
    // worker; coming back from that cache connects again.
    let leaving = port.clone();
    let on_pagehide = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
        let _ = leaving.post_message(&"close".into());
    });
    let _ =
        window.add_event_listener_with_callback("pagehide", on_pagehide.as_ref().unchecked_ref());
    on_pagehide.forget();
    let returning = on_snapshot.clone();
    let on_pageshow = Closure::<dyn FnMut(web_sys::PageTransitionEvent)>::new(
        move |event: web_sys::PageTransitionEvent| {
            if event.persisted() {
                connect(returning.clone());
            }
        },
    );
    let _ =
        window.add_event_listener_with_callback("pageshow", on_pageshow.as_ref().unchecked_ref());
    on_pageshow.forget();
}

/// Without SharedWorker: the snapshot id of `/api/index` every [`POLL_MS`].
fn poll(on_snapshot: Rc<dyn Fn(String)>) {
    let Some(window) = browser::window() else {
        return;
    };
    let tick = Closure::<dyn FnMut()>::new(move || {
        let on_snapshot = on_snapshot.clone();
        leptos::task::spawn_local(async move {
            if let Ok(index) = crate::api::index().await {
                on_snapshot(index.snapshot);
            }
        });
    });
    let _ = window.set_interval_with_callback_and_timeout_and_arguments_0(
        tick.as_ref().unchecked_ref(),
        POLL_MS,
    );
    tick.forget();
}

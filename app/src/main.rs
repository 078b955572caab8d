//! The cellscope explorer app (placeholder until the app issue): mounts a page that shows the snapshot.

use leptos::prelude::*;

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(|| view! { <main id="app"><h1>"cellscope"</h1></main> });
}

//! Sharing links: many tabs at once, many links one after another, and "Copy link" on a plain-HTTP host name.
//! Each page holds no connection of its own for live updates (one SharedWorker per browser does), and every
//! page load must reach its data.

use cellscope_e2e::{DEFAULT_TIMEOUT, Harness};
use std::time::Duration;

/// The data (index and cells) of the page has arrived and a view is shown.
const LOADED: &str = "document.querySelector('#cell-count') !== null && document.querySelector('#load-error') === null";

async fn loaded(page: &Harness, what: &str) -> anyhow::Result<()> {
    page.wait_until(what, LOADED, DEFAULT_TIMEOUT).await
}

#[tokio::test]
async fn eight_tabs_of_cellscope_open_at_once_all_load() -> anyhow::Result<()> {
    let page = Harness::start("eight-tabs").await?;
    let views = [
        "/",
        "/?view=curves",
        "/?view=audit",
        "/?view=curves&workload=long_decode",
        "/?metric=breakdown",
        "/?view=inspector&cell=20260531_120428_552237/local_core/scaling/pytorch_direct/llama3.2-1b/balanced_2k/n=2/rep=0",
        "/?view=curves&facet=none",
        "/?grid=run",
    ];
    page.open(views[0]).await?;
    loaded(&page, "tab 1 to load").await?;
    let mut handles = vec![page.client().window().await?];
    for (tab, view) in views.iter().enumerate().skip(1) {
        let opened = page.client().new_window(true).await?;
        page.client()
            .switch_to_window(opened.handle.clone())
            .await?;
        handles.push(opened.handle);
        page.open(view).await?;
        loaded(&page, &format!("tab {} ({view}) to load", tab + 1)).await?;
    }
    // Every tab is still alive and shows its data; a reload of the first one loads too.
    for (tab, handle) in handles.iter().enumerate() {
        page.client().switch_to_window(handle.clone()).await?;
        loaded(&page, &format!("tab {} to stay loaded", tab + 1)).await?;
    }
    page.client().switch_to_window(handles[0].clone()).await?;
    page.client().refresh().await?;
    loaded(&page, "tab 1 to load again with seven others open").await?;
    page.close().await
}

#[tokio::test]
async fn forty_links_opened_one_after_another_in_one_tab_all_load() -> anyhow::Result<()> {
    let page = Harness::start("forty-links").await?;
    let workloads = [
        "balanced_2k",
        "long_decode",
        "short_decode",
        "repeated_prefix",
        "long_prefill_8k",
    ];
    let views = ["matrix", "curves", "audit", "matrix"];
    for visit in 0..40 {
        let link = format!(
            "/?view={}&workload={}&at_n={}",
            views[visit % views.len()],
            workloads[visit % workloads.len()],
            [2, 4, 8, 16][visit % 4]
        );
        page.open(&link).await?;
        page.wait_until(
            &format!("link {} ({link}) to load", visit + 1),
            LOADED,
            Duration::from_secs(10),
        )
        .await?;
    }
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn copy_link_works_on_a_plain_http_host_name() -> anyhow::Result<()> {
    let page = Harness::start("copy-link").await?;
    // The same server under a host name that is not loopback: not a secure context, so no clipboard API.
    let url = page
        .url("/?view=audit")
        .replace("127.0.0.1", "cellscope.test");
    page.client().goto(&url).await?;
    loaded(&page, "the page on cellscope.test to load").await?;
    let secure: bool = page.eval("window.isSecureContext").await?;
    assert!(!secure);
    let clipboard: bool = page.eval("navigator.clipboard === undefined").await?;
    assert!(clipboard, "no clipboard API on a plain-HTTP host");
    page.click("#copy-link").await?;
    page.wait_for("#copy-status").await?;
    let link: String = page
        .eval("document.querySelector('#copy-status').dataset.link")
        .await?;
    let href: String = page.eval("location.href").await?;
    assert_eq!(link, href);
    assert!(link.starts_with("http://cellscope.test:"), "{link}");
    // Either copied, or shown selected to copy by hand: never a button that silently does nothing.
    let status = page.text("#copy-status").await?;
    assert!(
        status.contains("Link copied") || status.contains("Copy this link"),
        "{status}"
    );
    page.screenshot("copy-link-plain-http").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

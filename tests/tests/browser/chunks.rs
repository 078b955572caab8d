//! The app in pieces: a page downloads the shell and the chunks of the view it shows, and another view's chunk
//! only when that view is first shown, read from the page's own resource timing.

use cellscope_e2e::Harness;

/// The views whose chunk (`split_<view>-<hash>.wasm`) the page has fetched, each once per fetch, in the order
/// fetched.
const VIEWS_FETCHED: &str = "performance.getEntriesByType('resource') \
    .map((entry) => new URL(entry.name).pathname.match(/^\\/split_([a-z]+)-[0-9a-f]{16}\\.wasm$/)) \
    .filter(Boolean).map((match) => match[1])";

/// The shell's files the page has fetched: the glue and its WebAssembly.
const SHELL_FETCHED: &str = "performance.getEntriesByType('resource') \
    .map((entry) => new URL(entry.name).pathname) \
    .filter((path) => /^\\/cellscope-[0-9a-f]{16}(\\.js|_bg\\.wasm)$/.test(path))";

#[tokio::test]
async fn a_link_to_a_view_loads_its_chunk_and_no_other_views() -> anyhow::Result<()> {
    let page = Harness::start("chunks").await?;
    page.open("/?view=compare&a=vllm&b=sglang").await?;
    page.until("document.querySelectorAll('#compare-table tbody tr').length === 5")
        .await?;
    let mut shell: Vec<String> = page.eval(SHELL_FETCHED).await?;
    shell.sort();
    assert_eq!(
        shell.len(),
        2,
        "the glue and the shell's WASM once each: {shell:?}"
    );
    assert!(
        shell[0].ends_with(".js") && shell[1].ends_with("_bg.wasm"),
        "{shell:?}"
    );
    // The default view's chunk is not loaded on the way to the one the link names.
    let views: Vec<String> = page.eval(VIEWS_FETCHED).await?;
    assert_eq!(views, ["compare"]);

    // The first change to another view fetches that view's chunk, and only it.
    page.click("button.tab[data-view='curves']").await?;
    page.wait_for("#curves-canvas[data-drawn='true']").await?;
    let views: Vec<String> = page.eval(VIEWS_FETCHED).await?;
    assert_eq!(views, ["compare", "curves"]);

    // Back to a view already loaded: nothing is fetched again.
    page.click("button.tab[data-view='compare']").await?;
    page.until("document.querySelectorAll('#compare-table tbody tr').length === 5")
        .await?;
    let views: Vec<String> = page.eval(VIEWS_FETCHED).await?;
    assert_eq!(views, ["compare", "curves"]);
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn the_default_view_loads_the_matrix_chunk_alone() -> anyhow::Result<()> {
    let page = Harness::start("chunks-default").await?;
    page.open("/").await?;
    page.wait_for("table.grid td.square").await?;
    let views: Vec<String> = page.eval(VIEWS_FETCHED).await?;
    assert_eq!(views, ["matrix"]);
    page.close().await
}

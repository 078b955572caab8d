//! The app in pieces: a page downloads the shell and the chunks of the view it shows, another view's chunk only
//! when that view is first shown, and the code of provenance and of the exports after the first screen, read from
//! the page's own resource timing.

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
    let shell: Vec<String> = page.eval(SHELL_FETCHED).await?;
    let glue = shell.iter().filter(|path| path.ends_with(".js")).count();
    let wasm = shell
        .iter()
        .filter(|path| path.ends_with("_bg.wasm"))
        .count();
    assert_eq!(
        (glue, wasm),
        (1, 1),
        "the glue and the shell's WASM once each: {shell:?}"
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
    // A chunk is served as WebAssembly, compressed, and kept for a year under its content-hashed name.
    let headers: Vec<String> = page
        .eval_async(
            "(async () => { const path = performance.getEntriesByType('resource') \
             .map((entry) => new URL(entry.name).pathname).find((path) => path.startsWith('/split_matrix-')); \
             const response = await fetch(path, { cache: 'no-store' }); \
             return ['content-type', 'cache-control', 'content-encoding'] \
               .map((name) => response.headers.get(name) ?? 'none'); })()",
        )
        .await?;
    assert_eq!(
        headers[..2],
        ["application/wasm", "public, max-age=31536000, immutable"]
    );
    assert!(
        ["zstd", "br", "gzip"].contains(&headers[2].as_str()),
        "compressed as the browser accepts: {headers:?}"
    );
    page.close().await
}

/// Makes the page's first fetch of the Compare view's chunk fail, as a dropped connection would.
const FAIL_COMPARE_ONCE: &str = "(() => { const fetch = window.fetch; let failed = false; \
    window.fetch = (input, init) => { \
      if (!failed && String(input).includes('/split_compare-')) { failed = true; \
        return Promise.reject(new TypeError('the connection dropped')); } \
      return fetch(input, init); }; })()";

#[tokio::test]
async fn a_view_whose_chunk_fails_to_load_says_so_and_loads_it_on_retry() -> anyhow::Result<()> {
    let page = Harness::start("chunks-retry").await?;
    page.run_before_each_page(FAIL_COMPARE_ONCE).await?;
    page.open("/?view=compare&a=vllm&b=sglang").await?;
    page.wait_for("#view-error").await?;
    let error = page.text("#view-error p").await?;
    assert!(error.starts_with("Cannot load the Compare view"), "{error}");
    // The rest of the page works meanwhile, and the retry loads the view.
    page.wait_for("#cell-count").await?;
    page.click("#retry-view").await?;
    page.until("document.querySelectorAll('#compare-table tbody tr').length === 5")
        .await?;
    assert_eq!(page.count("#view-error").await?, 0);
    page.close().await
}

/// The split points loaded after the first screen (`split_later_<name>-<hash>.wasm`) the page has fetched, in the
/// order fetched.
const LATER_FETCHED: &str = "performance.getEntriesByType('resource') \
    .map((entry) => new URL(entry.name).pathname.match(/^\\/split_later_([a-z_]+)-[0-9a-f]{16}\\.wasm$/)) \
    .filter(Boolean).map((match) => match[1])";

#[tokio::test]
async fn reading_provenance_and_the_exports_load_after_the_first_screen() -> anyhow::Result<()> {
    let page = Harness::start("chunks-later").await?;
    page.open("/?view=compare&a=vllm&b=sglang").await?;
    page.until("document.querySelectorAll('#compare-table tbody tr').length === 5")
        .await?;
    // Provenance follows the first view's data, with the code that reads it; no export is loaded unasked.
    page.until(&format!("{LATER_FETCHED}.includes('details')"))
        .await?;
    let later: Vec<String> = page.eval(LATER_FETCHED).await?;
    assert_eq!(later, ["details"]);
    // The first export fetches the exports' chunk, and the next one nothing more.
    page.capture_downloads().await?;
    page.click("#export-svg").await?;
    page.until("window.__blobs.length === 1").await?;
    page.click("#export-png").await?;
    page.until("window.__names.length === 2").await?;
    let later: Vec<String> = page.eval(LATER_FETCHED).await?;
    assert_eq!(later, ["details", "compare_export"]);
    page.assert_no_console_errors().await?;
    page.close().await
}

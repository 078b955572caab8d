//! The offline audit bundle in a real browser: made by the server (`GET /api/bundle`, what the app's "Offline
//! copy" button downloads), then opened from disk through `file://` with the server stopped. It must show the
//! view it was made for, the inspector's histogram of a cell in that view, and the audit, and say that it is a
//! copy and what it does not hold.

use cellscope_e2e::Harness;
use fantoccini::key::Key;

/// A refilled cell (its rows come from the master and, for the replaced ones, the backup).
const SGLANG_MISTRAL_LP_N32: &str =
    "20260612_212816_266127/cloud_core/scaling/sglang/mistral-7b/long_prefill_8k/n=32/rep=0";
/// A cell outside the bundled view (another model).
const VLLM_QWEN_SD_N1: &str =
    "20260612_204254_036590/cloud_core/scaling/vllm/qwen2.5-7b/short_decode/n=1/rep=0";

/// Whether the canvas `css` was drawn on: sized by the app (a canvas starts at 300 px wide) and not blank.
fn drawn(css: &str) -> String {
    format!(
        "(() => {{ const c = document.querySelector('{css}'); if (!c || c.width <= 300) return false; \
         const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; \
         for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true; return false; }})()"
    )
}

#[tokio::test]
async fn a_bundle_opens_from_disk_with_the_server_stopped() -> anyhow::Result<()> {
    let mut page = Harness::start("offline").await?;
    let view = format!(
        "view=inspector&cell={SGLANG_MISTRAL_LP_N32}&model=mistral-7b&workload=long_prefill_8k"
    );
    let response = page.get(&format!("/api/bundle?{view}"))?;
    assert_eq!(response.status, 200, "{}", response.text());
    let disposition = response.header("content-disposition").unwrap_or_default();
    assert!(
        disposition.starts_with("attachment;") && disposition.contains(".html"),
        "{disposition}"
    );
    let served_snapshot = page.get("/api/index")?.json()?["snapshot"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The app's own button asks for the same copy of the view it shows.
    page.open(&format!("/?{view}")).await?;
    page.wait_for("#offline-copy").await?;
    page.eval::<bool>(
        "(() => { window.__downloads = []; HTMLAnchorElement.prototype.click = function () { \
         window.__downloads.push([this.href, this.download]); }; return true; })()",
    )
    .await?;
    // Reached by keyboard: Tab from "Copy link", then Enter.
    page.press_on("#copy-link", Key::Tab).await?;
    let focused: String = page.eval("document.activeElement.id").await?;
    assert_eq!(focused, "offline-copy");
    page.press(Key::Enter).await?;
    let downloads: Vec<(String, String)> = page.eval("window.__downloads").await?;
    let [(href, name)] = downloads.as_slice() else {
        anyhow::bail!("one download expected, got {downloads:?}");
    };
    assert_eq!(name, &format!("cellscope-{served_snapshot}.html"));
    let path = href
        .strip_prefix(&page.url(""))
        .unwrap_or_else(|| panic!("{href} is not on the server"));
    assert!(
        path.starts_with("/api/bundle?")
            && path.contains("view=inspector")
            && path.contains("model=mistral-7b"),
        "{path}"
    );
    let from_button = page.get(path)?;
    assert_eq!(from_button.status, 200);
    assert!(from_button.text().contains(r#"id="cellscope-offline""#));

    let dir = tempfile::tempdir()?;
    let file = dir.path().join("audit.html");
    std::fs::write(&file, &response.body)?;
    let url = format!("file://{}", file.display());

    page.stop_server();
    assert!(
        page.get("/api/index").is_err(),
        "the server still answers after being stopped"
    );

    // The view it was made for: the inspector of the refilled cell, its histogram drawn from the rows in the file.
    page.open_url(&url).await?;
    page.wait_for("#offline-banner").await?;
    let banner = page.text("#offline-banner").await?;
    assert!(banner.contains(&served_snapshot), "{banner}");
    assert!(banner.contains("Offline copy"), "{banner}");
    page.wait_for("#histogram-canvas").await?;
    page.until(&drawn("#histogram-canvas")).await?;
    assert_eq!(page.count("#reps-table tbody tr").await?, 3);
    assert!(
        page.text("#refill-lineage")
            .await?
            .contains("20260613_055519_963364")
    );
    assert_eq!(
        page.count("#offline-copy").await?,
        0,
        "no server to ask for a copy"
    );
    page.screenshot("offline-inspector").await?;
    // The copy is a working app: a tab changes the view and the address (history works on a file:// page too).
    page.click(".tab[data-view=curves]").await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let address: String = page.eval("window.location.href").await?;
    assert!(
        address.starts_with("file://") && address.contains("view=curves"),
        "{address}"
    );
    // Its exports work with no server: their code is a chunk the copy carries inline, loaded on the first press.
    page.capture_downloads().await?;
    page.click("#export-svg").await?;
    page.until("window.__blobs.length === 1").await?;
    let svg: String = page.eval_async("window.__blobs[0].text()").await?;
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(
        svg.contains("cellscope curves"),
        "the SVG describes its view"
    );

    // Every cell is in the copy, with its provenance: the audit of all runs.
    page.open_url(&format!("{url}?view=audit")).await?;
    page.wait_for("#audit-table tbody tr").await?;
    assert_eq!(page.count("#audit-runs .audit-run").await?, 4);
    page.screenshot("offline-audit").await?;

    // A cell outside the view: its figures are there, its request rows are not, and the page says why.
    page.open_url(&format!("{url}?view=inspector&cell={VLLM_QWEN_SD_N1}"))
        .await?;
    // In words: no address to read, and no "Try again", which could never succeed.
    page.wait_for("#rows-not-in-copy").await?;
    let message = page.text("#rows-not-in-copy").await?;
    assert!(
        message.starts_with("This offline copy does not hold the request rows of this cell"),
        "{message}"
    );
    assert!(!message.contains("/api/"), "{message}");
    assert_eq!(page.count("#rows-error").await?, 0);
    // No empty chart frames beside the words: the histogram and the CDF are not shown.
    assert!(
        page.eval::<bool>(
            "['#histogram-canvas', '#cdf-canvas'].every(css => getComputedStyle(document.querySelector(css)).display === 'none')"
        )
        .await?,
        "empty chart frames shown for rows the copy does not hold"
    );
    page.screenshot("offline-inspector-outside-view").await?;
    assert!(
        !page.text("#inspector").await?.contains("Try again"),
        "no retry offered"
    );
    // The copy's Compare view draws its charts from the cells it holds.
    page.open_url(&format!("{url}?view=compare&a=vllm&b=sglang&per=workload"))
        .await?;
    page.wait_for_attr("#forest-canvas", "data-drawn", "true")
        .await?;
    page.screenshot("offline-compare").await?;
    page.close().await
}

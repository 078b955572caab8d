//! Hostile content: a refill note, a ledger reason and manifest fields carrying script tags, `javascript:` links,
//! `onerror=` attributes and CSS tricks render as inert text in every view that shows them; the CSP header
//! blocks inline scripts even when something puts one into the page; crafted links open the app with a notice.

use cellscope_e2e::Harness;
use std::path::Path;

const MASTER: &str = "20260612_212816_266127";
const REFILLED_CELL: &str =
    "20260612_212816_266127/cloud_core/scaling/sglang/mistral-7b/long_prefill_8k/n=32/rep=0";

/// Each payload sets `window.__pwned` if it ever runs.
const NOTE_PAYLOAD: &str = "\n\n## Hostile\n\n<script>window.__pwned = 'note script'</script>\n\n\
<img src=x onerror=\"window.__pwned = 'note onerror'\">\n\n\
[click me](javascript:window.__pwned='note link')\n\n\
<a href=\"javascript:window.__pwned='note anchor'\">anchor</a>\n\n\
<style>body { display: none !important }</style>\n\n\
<div style=\"position:fixed;inset:0;background:red\">overlay</div>\n\n\
<iframe src=\"javascript:window.parent.__pwned='note iframe'\"></iframe>\n";
const LEDGER_REASON: &str = "<img src=x onerror=\"window.__pwned='ledger'\"><script>window.__pwned='ledger script'</script>";
const GPU_NAME: &str = "<svg onload=\"window.__pwned='gpu'\"></svg>NVIDIA A100";
const HISTORY_DETAIL: &str = "<img src=x onerror=\"window.__pwned='history'\">started";

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let path = entry?.path();
        let target = to.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            copy_dir(&path, &target)?;
        } else {
            std::fs::copy(&path, &target)?;
        }
    }
    Ok(())
}

/// The V3 demo runs with hostile text in the refill note, the ledger and the master's manifest.
fn hostile_root() -> anyhow::Result<tempfile::TempDir> {
    let config = cellscope_e2e::Config::from_env()?;
    let root = tempfile::tempdir()?;
    copy_dir(&config.data.join("tr164-v3"), &root.path().join("tr164-v3"))?;
    let master = root.path().join("tr164-v3").join(MASTER);
    let note = master.join("REFILL_NOTE.md");
    let mut text = std::fs::read_to_string(&note)?;
    text.push_str(NOTE_PAYLOAD);
    std::fs::write(&note, text)?;

    let manifest_path = master.join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path)?)?;
    manifest["environment"]["gpu"]["name"] = GPU_NAME.into();
    manifest["cells"][0]["history"][0]["detail"] = HISTORY_DETAIL.into();
    std::fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest)?)?;

    let ledger = format!(
        "[[exclude]]\nid = \"hostile-reason\"\nselect = {{ model = \"mistral-7b\", workload = \"long_prefill_8k\" }}\n\
         scope = \"comparison\"\nreason = {}\nsource = \"<a href='javascript:alert(1)'>source</a>\"\n",
        toml_string(LEDGER_REASON)
    );
    std::fs::write(root.path().join("exclusions.toml"), ledger)?;
    Ok(root)
}

/// A TOML basic string of `text` (JSON's escaping is valid TOML for these characters).
fn toml_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

async fn assert_not_pwned(page: &Harness, where_: &str) -> anyhow::Result<()> {
    // Give anything that would run (an image's error, a frame's load) the time to do so.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let pwned: Option<String> = page.eval("window.__pwned ?? null").await?;
    assert_eq!(pwned, None, "a payload ran in {where_}");
    Ok(())
}

#[tokio::test]
async fn hostile_text_in_notes_ledger_and_manifest_renders_as_inert_text() -> anyhow::Result<()> {
    let root = hostile_root()?;
    let page = Harness::start_on("hostile-content", root.path()).await?;

    // Audit: the ledger's reason and the note's source lines are text.
    page.open("/?view=audit").await?;
    let block = format!("#run-{MASTER}");
    page.wait_for(&block).await?;
    page.wait_for("#ledger-table tr[data-ledger='hostile-reason']")
        .await?;
    let reason = page
        .text("#ledger-table tr[data-ledger='hostile-reason']")
        .await?;
    assert!(
        reason.contains("<script>window.__pwned='ledger script'</script>"),
        "{reason}"
    );
    page.click(&format!("{block} .refill-note summary")).await?;
    let source = page.text(&format!("{block} .note-source")).await?;
    assert!(
        source.contains("<script>window.__pwned = 'note script'</script>"),
        "{source}"
    );
    assert_eq!(
        page.count(&format!("{block} script, {block} iframe, {block} img"))
            .await?,
        0
    );
    assert_not_pwned(&page, "the audit").await?;
    page.screenshot("hostile-audit").await?;

    // Inspector of a refilled cell: the note rendered from markdown keeps its text and loses every active part.
    page.open(&format!("/?view=inspector&cell={REFILLED_CELL}"))
        .await?;
    page.wait_for("#refill-lineage details summary").await?;
    page.click("#refill-lineage details summary").await?;
    let html: String = page
        .eval("document.querySelector('#refill-lineage .note').innerHTML")
        .await?;
    assert!(
        html.contains("Hostile"),
        "the note's own text is kept: {html}"
    );
    for active in ["<script", "onerror", "<style", "<iframe", "style="] {
        assert!(
            !html.contains(active),
            "`{active}` survived in the note: {html}"
        );
    }
    // `javascript:` may stay as words of the text, never as an address.
    let script_addresses = page
        .count("#refill-lineage .note [href^='javascript' i], #refill-lineage .note [src^='javascript' i]")
        .await?;
    assert_eq!(script_addresses, 0, "{html}");
    let shown: bool = page
        .eval("getComputedStyle(document.body).display !== 'none'")
        .await?;
    assert!(shown, "the note's style sheet hid the page");
    let exclusions = page.text("#cell-exclusions").await?;
    assert!(exclusions.contains("<img src=x onerror="), "{exclusions}");
    assert_not_pwned(&page, "the inspector").await?;
    page.screenshot("hostile-inspector").await?;

    // Compare: the GPUs differ, so the manifest's hostile name is shown as a confounder, as text.
    page.open("/?view=compare&by=backend&a=vllm&b=sglang")
        .await?;
    page.until("document.body.textContent.includes('NVIDIA A100')")
        .await?;
    let svg_count = page
        .count("main svg[onload], main [onerror], main script")
        .await?;
    assert_eq!(svg_count, 0);
    assert_not_pwned(&page, "the compare view").await?;
    page.close().await
}

#[tokio::test]
async fn the_csp_blocks_inline_scripts_and_handlers_put_into_the_page() -> anyhow::Result<()> {
    let page = Harness::start("csp").await?;
    let response = page.get("/")?;
    let csp = response
        .header("content-security-policy")
        .unwrap_or_default()
        .to_string();
    let script_src = csp
        .split(';')
        .map(str::trim)
        .find(|directive| directive.starts_with("script-src"))
        .unwrap_or_default();
    assert_eq!(script_src, "script-src 'self' 'wasm-unsafe-eval'", "{csp}");
    page.open("/").await?;
    page.wait_for("table.grid td.square").await?;
    // Whatever might one day slip past the sanitiser: a script element and an inline handler, put in by hand.
    page.eval::<bool>(
        "(() => { window.__violations = 0; \
         document.addEventListener('securitypolicyviolation', () => { window.__violations += 1; }); \
         const script = document.createElement('script'); script.textContent = \"window.__pwned = 'inline script'\"; \
         document.body.appendChild(script); \
         const holder = document.createElement('div'); \
         holder.innerHTML = \"<img src='data:,' onerror=\\\"window.__pwned = 'inline handler'\\\">\"; \
         document.body.appendChild(holder); return true; })()",
    )
    .await?;
    page.until("window.__violations >= 2").await?;
    assert_not_pwned(&page, "the page after injection").await?;
    page.close().await
}

#[tokio::test]
async fn crafted_links_open_the_app_with_a_notice_and_sane_defaults() -> anyhow::Result<()> {
    let page = Harness::start("crafted-links").await?;
    let long_junk = "y".repeat(60 * 1024);
    let cases = [
        (
            "/?view=inspector&cell=../../../../etc/passwd".to_string(),
            "cell",
        ),
        (format!("/?view=matrix&junk={long_junk}"), "junk"),
        // Past the 64 KB the HTTP library takes in a request line: the server still serves the page, and the app
        // reads the whole link from the address bar (the curves view below is its `view=`).
        (
            format!("/?view=curves&junk={}", "w".repeat(100 * 1024)),
            "junk",
        ),
        (
            "/?view=%3Cscript%3Ealert(1)%3C%2Fscript%3E".to_string(),
            "view",
        ),
        ("/?n=-1,abc,1e999&view=matrix".to_string(), "n"),
        (
            "/?at_n=99999999999999999999&view=curves".to_string(),
            "at_n",
        ),
    ];
    for (link, parameter) in cases {
        page.open(&link).await?;
        page.wait_for("#ignored-notice").await?;
        let ignored: Vec<String> = page
            .eval("Array.from(document.querySelectorAll('#ignored-notice li')).map(li => li.dataset.parameter)")
            .await?;
        assert!(
            ignored.iter().any(|name| name == parameter),
            "{}: the notice lists {ignored:?}",
            &link[..link.len().min(80)]
        );
        // The view still shows data: a matrix square or the curves' drawing or the inspector's chooser.
        page.until(
            "document.querySelector('table.grid td.square, #curves-canvas[data-drawn=true], #inspector-empty')",
        )
        .await?;
        assert_not_pwned(&page, &link[..link.len().min(80)]).await?;
    }
    page.assert_no_console_errors().await?;
    page.close().await
}

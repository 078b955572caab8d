//! The page as different readers meet it: a window 800 px wide (wide tables scroll in their own box, the audit's
//! wraps to fit), a dark operating-system theme (charts and their colour keys follow it), and assistive technology
//! (filter results announced, matrix squares named by what they are, runs counted as the run filter lists them).

use cellscope_e2e::Harness;

/// Whether the page itself scrolls sideways.
const PAGE_OVERFLOWS: &str =
    "document.documentElement.scrollWidth > document.documentElement.clientWidth + 1";

#[tokio::test]
async fn at_800_px_the_compare_and_inspector_tables_scroll_inside_their_own_box_and_the_audit_fits()
-> anyhow::Result<()> {
    let page = Harness::start("layout-narrow").await?;
    page.client().set_window_size(800, 900).await?;
    let views = [
        (
            "/?view=compare&a=vllm&b=sglang&metric=p95_wall_ms",
            "#compare-table tbody tr",
            "compare",
        ),
        (
            "/?view=inspector&cell=20260612_204254_036590/cloud_core/scaling/vllm/llama3.1-8b/long_decode/n=16/rep=0",
            "#reps-table",
            "inspector",
        ),
        // A refilled cell lists the 320 rows its refill replaced, with long error texts.
        (
            "/?view=inspector&cell=20260612_212816_266127/cloud_core/scaling/sglang/mistral-7b/long_prefill_8k/n=32/rep=0",
            "#replaced-rows tbody tr",
            "inspector-refilled",
        ),
        ("/?view=audit", "#audit-table tbody tr", "audit"),
    ];
    for (path, ready, name) in views {
        page.open(path).await?;
        page.wait_for(ready).await?;
        assert!(
            !page.eval::<bool>(PAGE_OVERFLOWS).await?,
            "{name}: the page is wider than the window"
        );
        page.screenshot(&format!("narrow-{name}")).await?;
    }
    // The audit's table fits the window itself: its keys and evidence wrap, so it does not scroll sideways in its
    // box either.
    let fits = "(() => { const t = document.querySelector('#audit-table'); \
                return t.scrollWidth <= t.clientWidth + 1 && t.getBoundingClientRect().right <= window.innerWidth; })()";
    assert!(
        page.eval::<bool>(fits).await?,
        "the audit table is wider than the window"
    );
    page.close().await
}

#[tokio::test]
async fn in_dark_mode_the_charts_and_their_colour_keys_follow_the_theme() -> anyhow::Result<()> {
    let page = Harness::start("layout-dark").await?;
    page.emulate_dark_mode(true).await?;
    page.open("/?view=compare&a=vllm&b=sglang&phase=scaling")
        .await?;
    page.wait_for_attr("#forest-canvas", "data-drawn", "true")
        .await?;
    let filter = |css: &str| format!("getComputedStyle(document.querySelector('{css}')).filter");
    for css in [
        "#forest-canvas",
        "#paired-canvas",
        "#compare-legend .swatch",
        "#compare-table td.verdict",
    ] {
        let applied: String = page.eval(&filter(css)).await?;
        assert_eq!(
            applied, "invert(1) hue-rotate(180deg) brightness(1.35)",
            "{css}"
        );
    }
    // The background behind the verdicts is the dark theme's, so an inverted black verdict reads light on it.
    let background: String = page
        .eval("getComputedStyle(document.documentElement).backgroundColor")
        .await?;
    assert_eq!(background, "rgb(21, 24, 28)");
    page.screenshot("view-compare-dark").await?;
    page.eval::<bool>(
        "(() => { document.querySelector('#compare-area').scrollIntoView(); return true; })()",
    )
    .await?;
    page.screenshot("view-compare-forest-dark").await?;
    page.open("/?view=curves").await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    page.screenshot("view-curves-dark").await?;
    page.emulate_dark_mode(false).await?;
    page.open("/?view=compare&a=vllm&b=sglang&phase=scaling")
        .await?;
    page.wait_for_attr("#forest-canvas", "data-drawn", "true")
        .await?;
    let applied: String = page.eval(&filter("#forest-canvas")).await?;
    assert_eq!(
        applied, "none",
        "the light theme draws the charts as they are"
    );
    page.close().await
}

#[tokio::test]
async fn filters_are_announced_squares_are_named_and_runs_counted_as_the_run_filter_lists_them()
-> anyhow::Result<()> {
    let page = Harness::start("layout-a11y").await?;
    page.open("/?view=matrix&metric=efficiency").await?;
    page.wait_for("td.square a.square-link").await?;
    // Three runs hold cells; the refill run's rows stand in its master's cells.
    assert_eq!(page.text("#run-count").await?, "3");
    assert_eq!(
        page.count("details.filter[data-dimension=run] input[type=checkbox]")
            .await?,
        3
    );
    assert_eq!(
        page.text("#run-others").await?,
        "(+ 1 refill run spliced in)"
    );
    let labels: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('details.filter[data-dimension=run] .run-label')).map(e => e.textContent.trim())")
        .await?;
    assert!(
        labels.contains(&"(vllm · 2026-06-12 20:42)".to_string()),
        "{labels:?}"
    );
    // The audit's run blocks carry the same label beside the id.
    page.open("/?view=audit").await?;
    page.wait_for("#audit-runs .audit-run").await?;
    assert_eq!(
        page.text("#audit-runs .audit-run[data-run='20260612_204254_036590'] .run-label")
            .await?,
        "vllm · 2026-06-12 20:42"
    );
    page.open("/?view=matrix&metric=efficiency").await?;
    page.wait_for("td.square a.square-link").await?;
    // A square's link is named by what it is and where it leads.
    let name: String = page
        .eval("document.querySelector('td.square a.square-link').getAttribute('aria-label')")
        .await?;
    assert!(
        name.contains("parallel efficiency") && name.contains("opens the"),
        "{name}"
    );
    // Ticking a model is announced in the live region.
    let announce = "document.querySelector('#filter-announcement').textContent";
    let before: String = page.eval(announce).await?;
    assert!(before.ends_with("cells match (all cells)"), "{before}");
    page.click("details.filter[data-dimension=model] summary")
        .await?;
    page.click("details.filter[data-dimension=model] input[data-value='llama3.1-8b']")
        .await?;
    page.until("document.querySelector('#filter-announcement').textContent.includes('model = llama3.1-8b')")
        .await?;
    let after: String = page.eval(announce).await?;
    assert_eq!(after, "360 of 2160 cells match (model = llama3.1-8b)");
    assert_eq!(
        page.eval::<String>(
            "document.querySelector('#filter-announcement').getAttribute('aria-live')"
        )
        .await?,
        "polite"
    );
    page.close().await
}

//! The History view over the nightly demo root, whose injected stories (data/README.md) are the oracle: SGLang's
//! upgrade at night 12 is a change point toward worse, vLLM · llama3.1-8b's step at night 28 is a regression at
//! both loads, the driver change at night 20 is marked on the axis, and vLLM · qwen2.5-7b is flat.

use cellscope_e2e::Harness;
use fantoccini::key::Key;

async fn nightly(name: &str) -> anyhow::Result<Harness> {
    let root = cellscope_e2e::Config::from_env()?.nightly_root()?;
    Harness::start_on(name, &root).await
}

/// The run ids of the chart's change points.
async fn change_runs(page: &Harness) -> anyhow::Result<Vec<String>> {
    page.eval(
        "[...document.querySelectorAll('#history-chart .change-point')].map(g => g.dataset.run)",
    )
    .await
}

#[tokio::test]
async fn a_matrix_square_opens_its_history_with_sglangs_change_point_at_night_12()
-> anyhow::Result<()> {
    let page = nightly("history-from-matrix").await?;
    page.open("/?view=matrix&metric=p50_ttft_ms").await?;
    page.wait_for("table.grid[data-grid='sglang'] a.square-history")
        .await?;
    page.press_on(
        "table.grid[data-grid='sglang'] a.square-history",
        Key::Enter,
    )
    .await?;
    page.until("location.search.includes('view=history')")
        .await?;
    page.wait_for("#history-chart svg").await?;
    let label = page.text("#history-label").await?;
    assert!(label.starts_with("sglang · llama3.1-8b"), "{label}");
    // The SGLang runs start at 02:40 UTC, night 12 being 2026-11-12.
    let runs = change_runs(&page).await?;
    assert!(
        runs.iter().any(|run| run.starts_with("20261112_0240")),
        "{runs:?}"
    );
    let marker: String = page
        .eval("document.querySelector('#history-chart .change-point text').textContent")
        .await?;
    assert!(marker.starts_with("worse +"), "{marker}");
    let sentence: String = page
        .eval("document.querySelector('#history-chart .change-point title').textContent")
        .await?;
    assert!(sentence.contains("worse by"), "{sentence}");
    // The version change is in the table's row of that run, and the driver change of night 20 on the axis.
    let changed = page
        .text("#history-table tr[data-run^='20261112_0240'] td.changed")
        .await?;
    assert!(changed.contains("0.5.2 → 0.5.3"), "{changed}");
    let axis: Vec<String> = page
        .eval("[...document.querySelectorAll('#history-chart .environment-change')].map(g => g.dataset.run)")
        .await?;
    assert!(
        axis.iter().any(|run| run.starts_with("20261120_")),
        "{axis:?}"
    );
    page.screenshot("view-history").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn a_curve_point_opens_its_history_from_its_popover() -> anyhow::Result<()> {
    let page = nightly("history-from-curves").await?;
    page.open("/?view=curves&metric=p50_ttft_ms&backend=vllm&model=qwen2.5-7b")
        .await?;
    page.wait_for("#curves-points .point-focus").await?;
    page.press_on("#curves-points .point-focus", Key::Enter)
        .await?;
    // The point pools the configuration's runs and reps: its popover links to their one History.
    page.wait_for("#point-cells #point-history").await?;
    page.press_on("#point-history", Key::Enter).await?;
    page.wait_for("#history-chart svg").await?;
    let label = page.text("#history-label").await?;
    assert!(label.starts_with("vllm · qwen2.5-7b"), "{label}");
    // Flat: no change point, no flag.
    assert!(change_runs(&page).await?.is_empty());
    page.wait_for_attr("#history", "data-regressed", "false")
        .await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn the_regressions_list_lists_vllm_llama_at_both_loads_and_links_to_each()
-> anyhow::Result<()> {
    let page = nightly("history-regressions").await?;
    page.open("/?view=history").await?;
    page.wait_for("#regressions-list li").await?;
    let listed: Vec<String> = page
        .eval(
            "[...document.querySelectorAll('#regressions-list li')].map(li => li.dataset.history)",
        )
        .await?;
    for load in ["N=1", "N=8"] {
        let label = format!("vllm · llama3.1-8b · short_decode · {load}");
        assert!(listed.contains(&label), "{label} in {listed:?}");
    }
    assert!(
        listed.iter().all(|label| !label.contains("qwen2.5-7b")),
        "{listed:?}"
    );
    page.screenshot("view-history-regressions").await?;
    // Each row is a link a keyboard reaches and follows to its History, flagged.
    page.press_on(
        "#regressions-list li[data-history$='N=8'] a.history-link",
        Key::Enter,
    )
    .await?;
    page.wait_for("#history-chart svg").await?;
    let label = page.text("#history-label").await?;
    assert_eq!(label, "vllm · llama3.1-8b · short_decode · N=8");
    page.wait_for_attr("#history", "data-regressed", "true")
        .await?;
    let runs = change_runs(&page).await?;
    assert!(
        runs.iter().any(|run| run.starts_with("20261128_0200")),
        "{runs:?}"
    );
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn a_hand_edited_k_in_the_link_changes_the_flag() -> anyhow::Result<()> {
    let page = nightly("history-link").await?;
    page.open("/?view=history").await?;
    page.wait_for("#regressions-list li").await?;
    page.click("#regressions-list li[data-history$='N=1'] a.history-link")
        .await?;
    page.wait_for_attr("#history", "data-regressed", "true")
        .await?;
    let search: String = page.eval("location.search").await?;
    assert!(search.contains("view=history"), "{search}");
    // With the last 2 runs the night-28 change (three runs back) is no longer recent, and the latest run is
    // within the band of the 2 before it.
    page.open(&format!("/{search}&k=2")).await?;
    page.wait_for_attr("#history", "data-regressed", "false")
        .await?;
    assert_eq!(
        page.eval::<String>("document.querySelector('[data-choice=k]').value")
            .await?,
        "2"
    );
    // Typed in the picker, a choice goes into the link.
    page.press_on("[data-choice=tolerance]", Key::End).await?;
    page.eval::<bool>(
        "(() => { const input = document.querySelector('[data-choice=tolerance]'); input.value = '50%'; \
         input.dispatchEvent(new Event('change')); return true; })()",
    )
    .await?;
    page.until("location.search.includes('tolerance=50')")
        .await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

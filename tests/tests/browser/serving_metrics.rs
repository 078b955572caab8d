//! The serving metrics in a real browser over the demo data: the curves' metric picker lists p99 TPOT, and
//! choosing it draws every series with it on the y axis (TR164 rows give each request a TPOT).

use cellscope_e2e::Harness;

#[tokio::test]
async fn the_curves_list_p99_tpot_and_draw_it() -> anyhow::Result<()> {
    let page = Harness::start("serving-metrics").await?;
    page.open("/?view=curves&model=llama3.1-8b&phase=scaling")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let options: Vec<(String, String)> = page
        .eval(
            "Array.from(document.querySelectorAll('#curve-metric option')).map(o => [o.value, o.textContent])",
        )
        .await?;
    assert!(
        options.contains(&("p99_tpot_ms".to_string(), "p99 TPOT".to_string())),
        "{options:?}"
    );
    let before: String = page
        .eval("document.querySelector('#curves-canvas').dataset.points")
        .await?;
    page.eval::<bool>(
        "(() => { const select = document.querySelector('#curve-metric'); select.value = 'p99_tpot_ms'; \
         select.dispatchEvent(new Event('change', { bubbles: true })); return true; })()",
    )
    .await?;
    page.until("document.querySelector('#curves-canvas').dataset.yLabel === 'p99 TPOT'")
        .await?;
    page.until(&format!(
        "document.querySelector('#curves-canvas').dataset.points !== {before:?}"
    ))
    .await?;
    let points: String = page
        .eval("document.querySelector('#curves-canvas').dataset.points")
        .await?;
    // Every point drawn is a place on the canvas with at least one cell behind it.
    let drawn: Vec<&str> = points
        .split(';')
        .filter(|point| !point.is_empty())
        .collect();
    assert!(drawn.len() >= 10, "five workloads × the backends: {points}");
    for point in drawn {
        let cells: u32 = point.rsplit(',').next().unwrap_or_default().parse()?;
        assert!(cells > 0, "{point}");
    }
    let link: String = page.eval("window.location.search").await?;
    assert!(link.contains("metric=p99_tpot_ms"), "{link}");
    page.assert_no_console_errors().await?;
    page.close().await
}

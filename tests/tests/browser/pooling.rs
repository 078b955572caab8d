//! Pooling said, absolute metrics and exports in a real browser: what a point or square pools, the band
//! restricted to reps, latencies plotted against N and coloured in the matrix (checked against the server's
//! cell table), columns = N, the chart following the window's width, and what an export carries.

use cellscope_e2e::Harness;

const V1_RUN: &str = "20260531_120428_552237";

/// Hovers the drawn point that pools `cells` cells (the first such) once the details are in, and returns the
/// tooltip's text.
async fn hover_point(page: &Harness, cells: usize) -> anyhow::Result<String> {
    page.wait_for_details().await?;
    hover_point_now(page, cells).await
}

/// [`hover_point`] without waiting for the details: what is drawn now.
async fn hover_point_now(page: &Harness, cells: usize) -> anyhow::Result<String> {
    let hovered: bool = page
        .eval(&format!(
            "(() => {{ const c = document.querySelector('#curves-canvas'); const r = c.getBoundingClientRect(); \
             const p = c.dataset.points.split(';').map(p => p.split(',').map(Number)).find(p => p[2] === {cells}); \
             if (!p) return false; \
             c.dispatchEvent(new MouseEvent('mousemove', {{ clientX: r.left + p[0], clientY: r.top + p[1], bubbles: true }})); \
             return true; }})()"
        ))
        .await?;
    anyhow::ensure!(hovered, "no drawn point pools {cells} cells");
    page.wait_for("#curves-tooltip").await?;
    page.text("#curves-tooltip").await
}

/// The band of the N=2 row of an exported series CSV: (min, max).
fn band_at_2(csv: &str) -> anyhow::Result<(f64, f64)> {
    let header = csv
        .lines()
        .find(|line| !line.starts_with('#'))
        .ok_or_else(|| anyhow::anyhow!("no header in {csv}"))?;
    let columns: Vec<&str> = header.split(',').collect();
    let column = |name: &str| columns.iter().position(|column| *column == name);
    let (n, min, max) = (
        column("n").ok_or_else(|| anyhow::anyhow!("no n column: {header}"))?,
        column("band_min").ok_or_else(|| anyhow::anyhow!("no band_min: {header}"))?,
        column("band_max").ok_or_else(|| anyhow::anyhow!("no band_max: {header}"))?,
    );
    let row: Vec<&str> = csv
        .lines()
        .filter(|line| !line.starts_with('#'))
        .skip(1)
        .map(|line| line.split(',').collect::<Vec<_>>())
        .find(|fields| fields.get(n) == Some(&"2"))
        .ok_or_else(|| anyhow::anyhow!("no N=2 row in {csv}"))?;
    Ok((row[min].parse()?, row[max].parse()?))
}

/// Holds the page's request for the provenance (and so all of the details) until `window.__releaseDetails()`.
const HOLD_DETAILS: &str = "(() => { \
     const original = window.fetch.bind(window); let release; \
     const released = new Promise((resolve) => { release = resolve; }); \
     window.__releaseDetails = () => release(); \
     window.fetch = (input, init) => { const url = typeof input === 'string' ? input : input.url; \
       return url.includes('/api/provenance') ? released.then(() => original(input, init)) : original(input, init); }; \
     })()";

/// The details (provenance, pre-refill cells) arrive after the first chart. What the reader has open then stays
/// open: the curves view is not built anew, so a point's tooltip stays and the series table keeps its rows.
#[tokio::test]
async fn a_tooltip_and_the_series_table_stay_when_the_details_arrive() -> anyhow::Result<()> {
    let page = Harness::start("details-arrive").await?;
    page.run_before_each_page(HOLD_DETAILS).await?;
    page.open("/?view=curves&backend=pytorch_direct&workload=long_decode")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let held: bool = page
        .eval(
            "typeof window.__releaseDetails === 'function' \
             && performance.getEntriesByName('details-loaded').length === 0",
        )
        .await?;
    anyhow::ensure!(held, "the details were not held back");
    // The row as it is now, marked so that a replaced row shows.
    page.eval::<bool>(
        "(() => { document.querySelector('#series-table tbody tr').dataset.before = 'yes'; return true; })()",
    )
    .await?;
    let tooltip = hover_point_now(&page, 18).await?;
    page.eval::<bool>("(window.__releaseDetails(), true)")
        .await?;
    // The mark follows the data update at once; the redraw it causes runs before the page takes the next script.
    page.wait_for_details().await?;
    assert_eq!(
        page.text("#curves-tooltip").await?,
        tooltip,
        "the tooltip stays open with the same text"
    );
    let kept: bool = page
        .eval("document.querySelector('#series-table tbody tr')?.dataset.before === 'yes'")
        .await?;
    assert!(
        kept,
        "the series table's row was replaced when the details arrived"
    );
    page.close().await
}

#[tokio::test]
async fn a_pooled_point_says_what_it_pools_and_its_band_can_span_reps_only() -> anyhow::Result<()> {
    let page = Harness::start("pooling").await?;
    // pytorch_direct × long_decode at N=2: 3 models × 2 phases × 3 reps of the V1 run.
    page.open("/?view=curves&backend=pytorch_direct&workload=long_decode")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let note = page.text("#curves-pooling").await?;
    assert!(
        note.contains("mean of 18 cells: model llama3.2-1b, llama3.2-3b, qwen2.5-1.5b × phase scaling, ttft × rep 0, 1, 2"),
        "{note}"
    );
    let hover = hover_point(&page, 18).await?;
    assert!(
        hover.contains("mean of 18 cells: model llama3.2-1b, llama3.2-3b, qwen2.5-1.5b × phase scaling, ttft × rep 0, 1, 2"),
        "{hover}"
    );
    assert!(hover.contains("over the cells"), "{hover}");

    page.capture_downloads().await?;
    // The exports' code loads on the first press, so each file arrives a moment after its click.
    page.click("#export-series-csv").await?;
    page.until("window.__blobs.length === 1").await?;
    let cells_csv: String = page.eval_async("window.__blobs[0].text()").await?;
    let (cells_min, cells_max) = band_at_2(&cells_csv)?;

    page.eval::<bool>("(() => { const s = document.querySelector('#band'); s.value = 'reps'; s.dispatchEvent(new Event('change')); return true; })()")
        .await?;
    page.until("location.search.includes('band=reps')").await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let hover = hover_point(&page, 18).await?;
    assert!(hover.contains("over reps"), "{hover}");
    page.click("#export-series-csv").await?;
    page.until("window.__blobs.length === 2").await?;
    let reps_csv: String = page.eval_async("window.__blobs[1].text()").await?;
    let (reps_min, reps_max) = band_at_2(&reps_csv)?;
    // The spread of three rep values pooled over six series is narrower than the spread of the 18 cells.
    assert!(
        reps_min >= cells_min
            && reps_max <= cells_max
            && reps_max - reps_min < cells_max - cells_min,
        "reps band {reps_min}–{reps_max} vs cells band {cells_min}–{cells_max}"
    );
    // The export carries the view: its description, snapshot and link in comment lines.
    assert!(
        reps_csv.contains("# cellscope curves: parallel efficiency vs N, colour by backend"),
        "{reps_csv}"
    );
    assert!(
        reps_csv.contains("# filters: backend = pytorch_direct; workload = long_decode"),
        "{reps_csv}"
    );
    assert!(reps_csv.contains("band = min–max over reps"), "{reps_csv}");
    let snapshot: String = page
        .eval("new URLSearchParams(location.search).get('at')")
        .await?;
    assert!(
        reps_csv.contains(&format!("# snapshot: {snapshot}")),
        "{reps_csv}"
    );
    assert!(reps_csv.contains("# link: http://"), "{reps_csv}");
    // File names say view, metric and snapshot, and two views of one snapshot do not collide.
    let names: Vec<String> = page.eval("window.__names").await?;
    let prefix = format!(
        "cellscope-curves-efficiency-{}",
        snapshot
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(8)
            .collect::<String>()
    );
    assert!(
        names
            .iter()
            .all(|name| name.starts_with(&prefix) && name.ends_with(".csv")),
        "{names:?}"
    );
    assert_ne!(names[0], names[1]);
    // The image exports carry the same description and the legend.
    page.click("#export-svg").await?;
    page.until("window.__blobs.length === 3").await?;
    let svg: String = page.eval_async("window.__blobs[2].text()").await?;
    assert!(svg.contains("link: http://"), "the SVG names its link");
    assert!(svg.contains("filters: backend = pytorch_direct; workload = long_decode"));
    page.click("#export-png").await?;
    page.until("window.__names.length === 4").await?;
    let names: Vec<String> = page.eval("window.__names").await?;
    assert!(
        names[3].ends_with(".png") && names[3].starts_with(&prefix),
        "{names:?}"
    );
    page.screenshot("view-curves-pooling").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn latencies_plot_against_n_and_colour_the_matrix_with_the_servers_numbers()
-> anyhow::Result<()> {
    let page = Harness::start("absolute-metrics").await?;
    // One cell per square: the V1 run's scaling phase at N=4, rep 0.
    page.open(&format!(
        "/?metric=p95_wall_ms&run={V1_RUN}&phase=scaling&rep=0&at_n=4"
    ))
    .await?;
    page.wait_for("table.grid td.square .value").await?;
    let legend = page.text("#matrix-legend").await?;
    assert!(legend.contains("slowest in view"), "{legend}");
    // Every square's label is the server's p95 of that cell, written in the unit that fits.
    let squares: Vec<(String, String, String)> = page
        .eval(
            "Array.from(document.querySelectorAll('table.grid td.square')).map(td => \
             [td.dataset.row, td.dataset.col, td.querySelector('.value').textContent])",
        )
        .await?;
    assert_eq!(squares.len(), 12, "3 models × 4 workloads");
    let cells = page
        .get(&format!(
            "/api/cells?format=json&run={V1_RUN}&phase=scaling&rep=0&n=4"
        ))?
        .json()?;
    let cells = cells
        .as_array()
        .ok_or_else(|| anyhow::anyhow!("cells are not an array"))?;
    for (model, workload, label) in &squares {
        let cell = cells
            .iter()
            .find(|cell| cell["model"] == model.as_str() && cell["workload"] == workload.as_str())
            .ok_or_else(|| anyhow::anyhow!("no cell for {model} × {workload}"))?;
        let p95_ms = cell["p95_wall_ms"]
            .as_f64()
            .ok_or_else(|| anyhow::anyhow!("no p95 for {model} × {workload}: {cell}"))?;
        let expected = if p95_ms < 1000.0 {
            format!("{p95_ms:.0} ms")
        } else if p95_ms < 60_000.0 {
            format!("{:.2} s", p95_ms / 1000.0)
        } else {
            format!("{:.1} min", p95_ms / 60_000.0)
        };
        assert_eq!(label, &expected, "{model} × {workload}");
    }
    page.screenshot("view-matrix-p95-latency").await?;

    // The same metric against N in the curves, one series per model, rising with N.
    page.open(&format!(
        "/?view=curves&metric=p95_wall_ms&run={V1_RUN}&phase=scaling&workload=long_decode&color=model&facet=none"
    ))
    .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let header = page.text("#series-table thead").await?;
    assert!(header.contains("p95 latency in ms"), "{header}");
    let points = page
        .text("#series-table tr[data-series='llama3.2-1b'] td.points")
        .await?;
    let values: Vec<f64> = points
        .split(" · ")
        .filter_map(|point| point.split(": ").nth(1)?.parse().ok())
        .collect();
    assert!(values.len() >= 4, "{points}");
    assert!(
        values.last() > values.first(),
        "p95 latency grows with N: {points}"
    );
    let hover = hover_point(&page, 3).await?;
    assert!(
        hover.contains("p95 latency") && (hover.contains(" ms") || hover.contains(" s")),
        "{hover}"
    );
    page.screenshot("view-curves-p95-latency").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn columns_by_n_show_every_n_and_hide_the_at_n_control() -> anyhow::Result<()> {
    let page = Harness::start("columns-n").await?;
    page.open("/?cols=n&backend=vllm&workload=long_decode&grid=backend")
        .await?;
    page.wait_for("table.grid td.square .value").await?;
    let labels: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('table.grid td.square .value')).map(v => v.textContent)")
        .await?;
    // 5 models × 6 N, every one with a value.
    assert_eq!(labels.len(), 30);
    assert!(
        labels
            .iter()
            .all(|label| label != "no data" && label != "excluded"),
        "{labels:?}"
    );
    assert!(
        page.eval::<bool>("document.querySelector('#at-n') === null")
            .await?
    );
    // Breakdown N needs the criterion; efficiency does not show it.
    assert!(
        page.eval::<bool>("document.querySelector('#criterion') === null")
            .await?
    );
    page.close().await
}

#[tokio::test]
async fn the_curves_follow_the_window_width() -> anyhow::Result<()> {
    let page = Harness::start("chart-width").await?;
    page.open("/?view=curves&workload=long_decode").await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    // The canvas and its 1 px border fill the area.
    let fits = "Math.abs(document.querySelector('#curves-canvas').getBoundingClientRect().width - \
                document.querySelector('#curves-area').clientWidth) < 2";
    if page.until(fits).await.is_err() {
        let sizes: Vec<f64> = page
            .eval("[document.querySelector('#curves-canvas').getBoundingClientRect().width, document.querySelector('#curves-area').clientWidth, window.innerWidth]")
            .await?;
        anyhow::bail!("canvas, area and window widths: {sizes:?}");
    }
    page.eval::<bool>("(() => { document.querySelector('#curves-area').style.width = '700px'; window.dispatchEvent(new Event('resize')); return true; })()")
        .await?;
    page.until("Math.abs(document.querySelector('#curves-canvas').getBoundingClientRect().width - 700) < 2",
    )
    .await?;
    page.close().await
}

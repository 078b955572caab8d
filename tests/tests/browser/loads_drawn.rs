//! Each kind of load drawn as what it is, in a real browser: SGLang's rate sweep (1, 2, 4 req/s and all at once,
//! one failed request at 2 req/s) against the numpy oracle's figures for it, the pickers that list loads with
//! their units, the SLO's bound on a latency curve with each series' capacity, and the mixed demo's matrix of
//! capacities over concurrencies and rates.

use cellscope_e2e::Harness;
use fantoccini::key::Key;

fn fixtures() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/formats")
}

/// The numpy oracle's cells of SGLang's rate sweep, in offered-rate order (all at once last).
fn oracle_rate_sweep() -> anyhow::Result<Vec<serde_json::Value>> {
    let text = std::fs::read_to_string(fixtures().join("sglang-rate.expected.json"))?;
    let expected: serde_json::Value = serde_json::from_str(&text)?;
    let mut cells = expected["cells"]
        .as_array()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("no cells in the oracle"))?;
    cells.sort_by(|a, b| rate_of(a).total_cmp(&rate_of(b)));
    Ok(cells)
}

/// An oracle cell's offered rate (`"inf"` for all at once).
fn rate_of(cell: &serde_json::Value) -> f64 {
    cell["rate_rps"].as_f64().unwrap_or(f64::INFINITY)
}

/// The canvas' description of itself.
async fn canvas_data(page: &Harness, name: &str) -> anyhow::Result<String> {
    page.eval(&format!(
        "document.querySelector('#curves-canvas').dataset.{name}"
    ))
    .await
}

/// The chart exported as SVG, its text as the download holds it.
async fn exported_svg(page: &Harness, index: usize) -> anyhow::Result<String> {
    page.click("#export-svg").await?;
    // The exports' code loads on the first press, so the file arrives a moment after the click.
    page.until(&format!("window.__blobs.length > {index}"))
        .await?;
    page.eval_async(&format!("window.__blobs[{index}].text()"))
        .await
}

#[tokio::test]
async fn a_rate_sweep_reads_achieved_over_offered_with_all_at_once_apart() -> anyhow::Result<()> {
    let oracle = oracle_rate_sweep()?;
    let page = Harness::start_on("loads-rate", &fixtures()).await?;
    page.open("/?view=curves&run=sglang-rate&metric=efficiency&facet=none")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    // The y axis is achieved/offered against the saturation line the verdict uses, the x axis offered rates.
    assert_eq!(
        canvas_data(&page, "yLabel").await?,
        "achieved / offered rate"
    );
    assert_eq!(
        canvas_data(&page, "xLabel").await?,
        "offered rate (req/s, log₂)"
    );
    assert_eq!(
        canvas_data(&page, "threshold").await?,
        "saturation: achieved < 0.9 × offered"
    );
    let header = page.text("#series-table thead").await?;
    assert!(
        header.contains("points (load: achieved / offered rate)"),
        "{header}"
    );
    // Each finite rate's achieved/offered as numpy computed it; the failed cell's point says so.
    let points = page.text("#series-table td.points").await?;
    for cell in oracle.iter().filter(|cell| rate_of(cell).is_finite()) {
        let value = cell["achieved_over_offered"]
            .as_f64()
            .ok_or_else(|| anyhow::anyhow!("no achieved/offered in {cell}"))?;
        let mut expected = format!("{}: {value:.3}", rate_of(cell));
        if cell["failed_rows"].as_u64().unwrap_or(0) > 0 {
            expected.push_str(" (✕ 1 of 1 cell failed)");
        }
        assert!(points.contains(&expected), "{expected} not in {points}");
    }
    // The oracle's saturation rate (achieved < 0.9 × offered or p95 multiplier > 2) is the table's verdict.
    let saturation = oracle[0]["saturation_rps"].as_str().unwrap_or_default();
    assert_eq!(saturation, "inf");
    let verdict: String = page
        .eval("document.querySelectorAll('#series-table tbody td')[3].textContent")
        .await?;
    assert_eq!(verdict, "∞ req/s");
    let legend = page.text("#curves-legend").await?;
    assert!(legend.contains("crossed ✕ = failed cells"), "{legend}");
    page.screenshot("curves-rate-achieved-over-offered").await?;
    // The p99 TTFT curve reaches all at once: ∞ is its own tick past a break in the axis.
    page.open("/?view=curves&run=sglang-rate&metric=p99_ttft_ms&facet=none")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    assert_eq!(canvas_data(&page, "threshold").await?, "");
    let points = page.text("#series-table td.points").await?;
    let unbounded = oracle
        .last()
        .and_then(|cell| cell["p99_ttft_ms"].as_f64())
        .ok_or_else(|| anyhow::anyhow!("no p99 TTFT all at once"))?;
    assert!(points.ends_with(&format!("∞: {unbounded:.3}")), "{points}");
    page.capture_downloads().await?;
    let svg = exported_svg(&page, 0).await?;
    let texts: Vec<&str> = svg.lines().map(str::trim).collect();
    for text in ["∞", "//", "1", "2", "4", "offered rate (req/s, log₂)"] {
        assert!(texts.contains(&text), "{text} not drawn");
    }
    page.screenshot("curves-rate-unbounded-slot").await?;
    // A concurrency sweep keeps the criterion's efficiency threshold.
    page.open("/?view=curves&run=sglang-plain&metric=efficiency&facet=none")
        .await?;
    page.until("document.querySelector('#curves-canvas')?.dataset.threshold === 'threshold 0.65'")
        .await?;
    assert_eq!(canvas_data(&page, "yLabel").await?, "parallel efficiency");
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn a_latency_curve_under_an_slo_draws_its_bound_and_lists_each_capacity() -> anyhow::Result<()>
{
    let oracle = oracle_rate_sweep()?;
    let p99 = |index: usize| oracle[index]["p99_ttft_ms"].as_f64().unwrap_or(f64::NAN);
    let page = Harness::start_on("loads-slo", &fixtures()).await?;
    page.open(
        "/?view=curves&run=sglang-rate&metric=p99_ttft_ms&facet=none&slo=p99_ttft_ms%3C%3D100",
    )
    .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    assert_eq!(
        canvas_data(&page, "sloLine").await?,
        "SLO p99_ttft_ms ≤ 100 ms"
    );
    // Every finite rate is under 100 ms and all at once is not: a lower bound, not interpolated towards ∞.
    assert!((0..3).all(|index| p99(index) <= 100.0) && p99(3) > 100.0);
    let bound = "≥ 4 req/s (fails all at once, not interpolated)";
    assert_eq!(page.text("#series-table td.slo-capacity").await?, bound);
    assert!(
        page.text("#series-table thead")
            .await?
            .contains("SLO capacity")
    );
    page.capture_downloads().await?;
    page.click("#export-series-csv").await?;
    page.until("window.__blobs.length === 1").await?;
    let csv: String = page.eval_async("window.__blobs[0].text()").await?;
    let mut rows = csv.lines().filter(|line| !line.starts_with('#'));
    let header = rows.next().unwrap_or_default();
    assert!(header.ends_with(",breakdown,slo_capacity"), "{header}");
    let rows: Vec<&str> = rows.collect();
    assert_eq!(rows.len(), 4, "{csv}");
    // The capacity's words hold a comma: the field is quoted.
    let quoted = format!("\"{bound}\"");
    assert!(rows.iter().all(|row| row.ends_with(&quoted)), "{csv}");
    // Its load column says `inf`, never a large number.
    assert!(rows[3].contains(",rate=inf,"), "{}", rows[3]);
    let svg = exported_svg(&page, 1).await?;
    assert!(
        svg.contains("SLO p99_ttft_ms ≤ 100 ms"),
        "the SVG draws the bound"
    );
    page.screenshot("curves-slo-line").await?;
    // A tighter bound falls between 1 and 2 req/s: 1 + (82.4 − p99 at 1) / (p99 at 2 − p99 at 1) req/s.
    page.open(
        "/?view=curves&run=sglang-rate&metric=p99_ttft_ms&facet=none&slo=p99_ttft_ms%3C%3D82.4",
    )
    .await?;
    let crossing = 1.0 + (82.4 - p99(0)) / (p99(1) - p99(0));
    assert!((crossing - 1.5).abs() < 0.05, "{crossing}");
    page.until("document.querySelector('#series-table td.slo-capacity')?.textContent === '≈ 1.5 req/s (1–2)'")
        .await?;
    // Tighter than every rate: never met, said as such.
    page.open(
        "/?view=curves&run=sglang-rate&metric=p99_ttft_ms&facet=none&slo=p99_ttft_ms%3C%3D50",
    )
    .await?;
    page.until("document.querySelector('#series-table td.slo-capacity')?.textContent === 'never met (fails at 1 req/s)'")
        .await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn every_picker_of_loads_says_their_units() -> anyhow::Result<()> {
    let page = Harness::start_on("loads-pickers", &fixtures()).await?;
    let options = |select: &str| {
        format!("Array.from(document.querySelectorAll('{select} option')).map(o => o.textContent)")
    };
    // The matrix's one load, over SGLang's concurrencies and rates.
    page.open("/?run=sglang-rate,sglang-plain&metric=p99_ttft_ms&at_load=rate%3D2")
        .await?;
    page.wait_for("#at-n option").await?;
    // SGLang's plain run is at N = 1 and 4, its rate sweep at 1, 2, 4 req/s and all at once; the other
    // fixtures add loads of their own, each with its unit too.
    let bare = |options: &[String]| {
        options
            .iter()
            .any(|option| option.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    let at: Vec<String> = page.eval(&options("#at-n")).await?;
    for label in ["N=1", "N=4", "1 req/s", "2 req/s", "4 req/s", "∞ req/s"] {
        assert!(at.iter().any(|option| option == label), "{label}: {at:?}");
    }
    assert!(!bare(&at), "a bare number: {at:?}");
    // The load range of the filter bar: the same loads, `inf` among them.
    let low: Vec<String> = page.eval(&options("#n-min")).await?;
    for label in ["min", "N=1", "N=4", "1 req/s", "∞ req/s"] {
        assert!(low.iter().any(|option| option == label), "{label}: {low:?}");
    }
    assert!(!bare(&low), "a bare number: {low:?}");
    page.screenshot("matrix-load-pickers").await?;
    // Choosing ∞ as the lower end keeps the cells sent all at once, and the link says `inf`.
    page.eval::<bool>("(() => { const s = document.querySelector('#n-min'); s.value = 'inf'; s.dispatchEvent(new Event('change')); return true; })()")
        .await?;
    page.until("location.search.includes('load_min=inf')")
        .await?;
    // The inspector's load picker, on the cell of the rate sweep's first point (opened from the curves).
    page.open("/?view=curves&run=sglang-rate&metric=p99_ttft_ms&facet=none")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    page.wait_for("#curves-points button.point-focus").await?;
    page.press_on(
        "#curves-points button.point-focus[data-index='0']",
        Key::Enter,
    )
    .await?;
    page.until("location.search.includes('view=inspector')")
        .await?;
    page.wait_for("#cell-picker select[data-dimension=load] option")
        .await?;
    let loads: Vec<String> = page
        .eval(&options("#cell-picker select[data-dimension=load]"))
        .await?;
    assert_eq!(
        loads,
        ["1 req/s", "2 req/s", "4 req/s", "∞ req/s"],
        "{loads:?}"
    );
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn capacities_over_both_kinds_keep_a_scale_each_and_bounds_are_hatched() -> anyhow::Result<()>
{
    let mixed = cellscope_e2e::Config::from_env()?.mixed_root()?;
    let page = Harness::start_on("loads-capacity", &mixed).await?;
    page.open("/?metric=slo_capacity&slo=p99_ttft_ms%3C%3D2000&rows=backend&cols=model&grid=tp")
        .await?;
    page.wait_for("table.grid td.square .value").await?;
    // Each kind of load's ends side by side on the ramp, and what the marks mean.
    let ends: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('#matrix-legend > span')).slice(0, 3).map(r => r.textContent)")
        .await?;
    for end in [&ends[0], &ends[2]] {
        assert!(
            end.starts_with("N=") && end.contains(" · ") && end.contains(" req/s"),
            "{ends:?}"
        );
    }
    assert!(
        page.text("#matrix-legend")
            .await?
            .contains("≥ and hatched = a lower bound")
    );
    // Every square's look follows its outcome: a bound hatched, never met dark grey, a capacity solid.
    let squares: Vec<(String, String)> = page
        .eval("Array.from(document.querySelectorAll('table.grid td.square')).filter(s => s.querySelector('.value')).map(s => [s.querySelector('.value').textContent, s.getAttribute('style')])")
        .await?;
    let mut seen = [0; 3];
    for (label, style) in &squares {
        if label.starts_with('≥') {
            seen[0] += 1;
            assert!(
                style.contains("repeating-linear-gradient"),
                "{label}: {style}"
            );
        } else if label.starts_with("never met") {
            seen[1] += 1;
            assert!(
                style.contains("background:rgb(64,64,64)"),
                "{label}: {style}"
            );
        } else if label.starts_with('≈') {
            seen[2] += 1;
            assert!(!style.contains("gradient"), "{label}: {style}");
        }
    }
    assert!(
        seen.iter().all(|count| *count > 0),
        "{seen:?} of {squares:?}"
    );
    page.screenshot("matrix-capacity-kinds").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

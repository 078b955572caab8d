//! The curves with a metric on x in a real browser over the demo data: throughput against p95 TTFT, each
//! series' Pareto frontier checked against the numbers the series table shows, the exports naming both axes and
//! the frontier, the x picker going back to N, and a hand-edited link with an x the app does not know.

use cellscope_e2e::Harness;

/// One series row of the table: its label, its points `(N, x, y)` and the Ns it lists on the frontier.
type Row = (String, Vec<(u32, f64, f64)>, Vec<u32>);

/// The series table's rows as numbers: `N: x → y` points and the frontier's Ns.
async fn table_rows(page: &Harness) -> anyhow::Result<Vec<Row>> {
    let raw: Vec<(String, String, String)> = page
        .eval(
            "Array.from(document.querySelectorAll('#series-table tbody tr')).map(tr => \
             [tr.dataset.facet + '/' + tr.dataset.series, tr.querySelector('td.points').textContent, tr.dataset.frontier ?? ''])",
        )
        .await?;
    raw.into_iter()
        .map(|(label, points, frontier)| {
            let points = points
                .split(" · ")
                .filter(|point| !point.is_empty())
                .map(|point| {
                    let (n, rest) = point
                        .split_once(": ")
                        .ok_or_else(|| anyhow::anyhow!("no N in {point}"))?;
                    let (x, y) = rest
                        .split_once(" → ")
                        .ok_or_else(|| anyhow::anyhow!("no x → y in {point}"))?;
                    Ok((n.parse()?, x.parse()?, y.parse()?))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            let frontier = frontier
                .split(',')
                .filter(|n| !n.is_empty())
                .map(str::parse)
                .collect::<Result<Vec<u32>, _>>()?;
            Ok((label, points, frontier))
        })
        .collect()
}

/// The Ns of the points no other point beats on both axes, worked out here independently of the app: lower x
/// (a latency) and higher y (a throughput) are better.
fn expected_frontier(points: &[(u32, f64, f64)]) -> Vec<u32> {
    let mut front: Vec<(u32, f64, f64)> = points
        .iter()
        .filter(|(_, x, y)| {
            !points.iter().any(|(_, other_x, other_y)| {
                other_x <= x && other_y >= y && (other_x < x || other_y > y)
            })
        })
        .copied()
        .collect();
    front.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)));
    front.into_iter().map(|(n, _, _)| n).collect()
}

#[tokio::test]
async fn throughput_against_ttft_draws_each_series_frontier_and_a_bad_x_is_reported()
-> anyhow::Result<()> {
    let page = Harness::start("curves-axes").await?;
    the_axes_and_controls_say_what_the_link_chose(&page).await?;
    let on_frontier = every_frontier_is_the_one_the_numbers_give(&page).await?;
    hovering_a_point_names_both_numbers(&page).await?;
    the_exports_carry_both_axes_and_the_frontier(&page, on_frontier).await?;
    a_narrower_view_for_the_screenshot(&page).await?;
    back_to_n_the_frontier_cannot_be_drawn(&page).await?;
    an_unknown_x_is_reported_and_n_used(&page).await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// One model and phase against p95 TTFT: the axes, the controls and the table header.
async fn the_axes_and_controls_say_what_the_link_chose(page: &Harness) -> anyhow::Result<()> {
    // One model and phase: each point is one configuration's reps, a real operating point.
    page.open("/?view=curves&x=p95_ttft_ms&metric=aggregate_tps&frontier=1&model=llama3.1-8b&phase=scaling")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    assert_eq!(page.count("#ignored-notice").await?, 0);
    // The axes say what they carry, and the controls show the link's choices.
    let (x_label, y_label, summary): (String, String, String) = page
        .eval(
            "(() => { const c = document.querySelector('#curves-canvas'); \
             return [c.dataset.xLabel, c.dataset.yLabel, c.getAttribute('aria-label')]; })()",
        )
        .await?;
    assert_eq!(x_label, "p95 time to first token");
    assert_eq!(y_label, "output tok/s");
    assert!(
        summary.starts_with("output tok/s against p95 time to first token")
            && summary.contains("Pareto frontier drawn"),
        "{summary}"
    );
    let (x, frontier, frontier_disabled): (String, String, bool) = page
        .eval(
            "[document.querySelector('#curve-x').value, document.querySelector('#curve-frontier').value, \
             document.querySelector('#curve-frontier').disabled]",
        )
        .await?;
    assert_eq!(
        (x.as_str(), frontier.as_str(), frontier_disabled),
        ("p95_ttft_ms", "1", false)
    );
    let header = page.text("#series-table thead").await?;
    assert!(
        header.contains("points (load: p95 time to first token in ms → output tok/s)")
            && header.contains("frontier (loads)"),
        "{header}"
    );
    Ok(())
}

/// Every series' frontier against its shown numbers, and the drawn counts; returns the points on a frontier.
async fn every_frontier_is_the_one_the_numbers_give(page: &Harness) -> anyhow::Result<usize> {
    // Every series lists a frontier, and it is the one the shown numbers give.
    let rows = table_rows(page).await?;
    assert!(
        rows.len() >= 10,
        "five workloads × the backends: {}",
        rows.len()
    );
    let mut on_frontier = 0;
    let mut points = 0;
    for (label, series, frontier) in &rows {
        assert_eq!(frontier, &expected_frontier(series), "{label}: {series:?}");
        on_frontier += frontier.len();
        points += series.len();
    }
    assert!(on_frontier < points, "some point is dominated somewhere");
    let (drawn_on, drawn_dominated): (String, String) = page
        .eval(
            "(() => { const c = document.querySelector('#curves-canvas'); \
             return [c.dataset.frontierPoints, c.dataset.dominatedPoints]; })()",
        )
        .await?;
    assert_eq!(drawn_on, on_frontier.to_string());
    assert_eq!(drawn_dominated, (points - on_frontier).to_string());
    let legend = page.text("#curves-legend").await?;
    assert!(legend.contains("bold line = Pareto frontier"), "{legend}");
    Ok(on_frontier)
}

/// The tooltip of a hovered point, then the screenshot.
async fn hovering_a_point_names_both_numbers(page: &Harness) -> anyhow::Result<()> {
    // Hovering a point still names its series and N, and now both numbers that place it.
    page.wait_for_details().await?;
    let hovered: bool = page
        .eval(
            "(() => { const c = document.querySelector('#curves-canvas'); const r = c.getBoundingClientRect(); \
             const p = c.dataset.points.split(';').map(p => p.split(',').map(Number))[0]; if (!p) return false; \
             c.dispatchEvent(new MouseEvent('mousemove', { clientX: r.left + p[0], clientY: r.top + p[1], bubbles: true })); \
             return true; })()",
        )
        .await?;
    assert!(hovered);
    page.wait_for("#curves-tooltip").await?;
    let tooltip = page.text("#curves-tooltip").await?;
    assert!(
        tooltip.contains(" · N=")
            && tooltip.contains("p95 time to first token")
            && tooltip.contains("output tok/s")
            && (tooltip.contains("Pareto frontier") || tooltip.contains("dominated")),
        "{tooltip}"
    );
    page.screenshot("view-curves-frontier").await?;
    Ok(())
}

/// The CSV and SVG exports with `on_frontier` frontier points.
async fn the_exports_carry_both_axes_and_the_frontier(
    page: &Harness,
    on_frontier: usize,
) -> anyhow::Result<()> {
    // The exports carry both axes and the frontier.
    page.capture_downloads().await?;
    // The exports' code loads on the first press, so each file arrives a moment after its click.
    page.click("#export-series-csv").await?;
    page.until("window.__blobs.length === 1").await?;
    let csv: String = page.eval_async("window.__blobs[0].text()").await?;
    assert!(
        csv.contains("# cellscope curves: output tok/s vs p95 time to first token"),
        "{csv}"
    );
    assert!(
        csv.contains("# frontier: each series' Pareto frontier drawn bold"),
        "{csv}"
    );
    let header = csv
        .lines()
        .find(|line| !line.starts_with('#'))
        .unwrap_or_default();
    assert!(
        header.contains(",n,p95_ttft_ms,x_band_min,x_band_max,aggregate_tps,")
            && header.ends_with(",on_frontier"),
        "{header}"
    );
    let frontier_rows = csv.lines().filter(|line| line.ends_with(",true")).count();
    assert_eq!(frontier_rows, on_frontier);
    page.click("#export-svg").await?;
    page.until("window.__blobs.length === 2").await?;
    let svg: String = page.eval_async("window.__blobs[1].text()").await?;
    assert!(
        svg.contains("frontier: each series"),
        "the SVG says the frontier"
    );
    let names: Vec<String> = page.eval("window.__names").await?;
    assert!(
        names
            .iter()
            .all(|name| name.starts_with("cellscope-curves-aggregate_tps-vs-p95_ttft_ms-")),
        "{names:?}"
    );
    Ok(())
}

/// vLLM against SGLang on one workload, for the screenshot.
async fn a_narrower_view_for_the_screenshot(page: &Harness) -> anyhow::Result<()> {
    // A narrower view reads well enough to show: vLLM against SGLang on one workload.
    page.open("/?view=curves&x=p95_ttft_ms&metric=aggregate_tps&frontier=1&backend=vllm,sglang&phase=scaling&workload=long_decode")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    assert_eq!(page.count("#series-table tbody tr").await?, 2);
    page.screenshot("view-curves-frontier-one-workload").await?;
    Ok(())
}

/// The x picker back to N.
async fn back_to_n_the_frontier_cannot_be_drawn(page: &Harness) -> anyhow::Result<()> {
    // Back to the load: the link drops x, the axis is N again and the frontier cannot be drawn.
    page.eval::<bool>("(() => { const s = document.querySelector('#curve-x'); s.value = 'load'; s.dispatchEvent(new Event('change')); return true; })()")
        .await?;
    page.until("!location.search.includes('x=p95_ttft_ms')")
        .await?;
    page.until("document.querySelector('#curves-canvas').dataset.xAxis === 'load'")
        .await?;
    page.until("document.querySelector('#curve-frontier').disabled")
        .await?;
    assert_eq!(
        page.eval::<String>("document.querySelector('#curves-canvas').dataset.frontierPoints")
            .await?,
        "0"
    );
    Ok(())
}

/// A hand-edited link with an unknown x and frontier value.
async fn an_unknown_x_is_reported_and_n_used(page: &Harness) -> anyhow::Result<()> {
    // A hand-edited link with an x (and a frontier value) the app does not know: reported, N used.
    page.open("/?view=curves&x=ttft&metric=aggregate_tps&frontier=yes&workload=long_decode")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    page.wait_for("#ignored-notice").await?;
    let ignored: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('#ignored-notice li')).map(li => li.dataset.parameter)")
        .await?;
    assert_eq!(ignored, ["x", "frontier"]);
    let notice = page.text("#ignored-notice").await?;
    assert!(
        notice.contains("expected load or one of efficiency"),
        "{notice}"
    );
    assert_eq!(
        page.eval::<String>("document.querySelector('#curves-canvas').dataset.xAxis")
            .await?,
        "load"
    );
    assert_eq!(
        page.eval::<String>("document.querySelector('#curve-x').value")
            .await?,
        "load"
    );
    Ok(())
}

/// Over points that pool several models and phases, a frontier would join means nobody can run: it is not
/// drawn, and the chart and the note above it say why.
#[tokio::test]
async fn a_view_pooling_models_draws_no_frontier_and_says_why() -> anyhow::Result<()> {
    let page = Harness::start("curves-frontier-pooled").await?;
    page.open("/?view=curves&x=p95_ttft_ms&metric=aggregate_tps&frontier=1&backend=vllm,sglang&workload=long_decode")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let (on, notes): (String, String) = page
        .eval(
            "(() => { const c = document.querySelector('#curves-canvas'); \
             return [c.dataset.frontierPoints, c.dataset.notes]; })()",
        )
        .await?;
    assert_eq!(on, "0", "no point is put on a frontier of pooled means");
    assert!(
        notes.contains(
            "no frontier through sglang, vllm: points pool model llama3.1-8b, mistral-7b, phi-4, qwen2.5-14b and 1 \
             more × phase scaling, ttft"
        ),
        "{notes}"
    );
    let warnings = page.text("#curves-warnings").await?;
    assert!(
        warnings.contains(
            "2 of 2 series pool several configurations at a point (up to model llama3.1-8b, mistral-7b, phi-4, \
             qwen2.5-14b and 1 more × phase scaling, ttft)"
        ),
        "{warnings}"
    );
    let header = page.text("#series-table thead").await?;
    assert!(!header.contains("frontier (loads)"), "{header}");
    page.screenshot("view-curves-frontier-withheld").await?;
    page.close().await
}

/// The hung partial cell (V1 llama3.2-3b × balanced_2k, ttft, N=16, rep 0: efficiency 0.00047) is the only cell
/// at its point: the table writes its value, not 0.000, and marks it partial, and the chart labels it.
#[tokio::test]
async fn a_partial_point_is_marked_and_never_written_as_zero() -> anyhow::Result<()> {
    let page = Harness::start("curves-partial").await?;
    page.open("/?view=curves&backend=pytorch_direct&model=llama3.2-3b&workload=balanced_2k&phase=ttft&facet=none")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let row = "#series-table tr[data-series='pytorch_direct']";
    let partial: String = page
        .eval(&format!(
            "document.querySelector(\"{row}\").dataset.partial"
        ))
        .await?;
    assert_eq!(partial, "16");
    let points = page.text(&format!("{row} td.points")).await?;
    assert!(
        points.contains("16: 0.00047 (◐ 1 of 1 cell partial)"),
        "{points}"
    );
    assert!(!points.contains("16: 0.000 "), "{points}");
    page.screenshot("view-curves-partial").await?;
    page.close().await
}

/// On the mixed root, vLLM against TGI on long_prefill_8k: the ledger's `comparison` entry takes mistral-7b out
/// on vLLM's side (TGI never ran it), so vLLM pools four models and TGI two. The chart says so, not only the
/// hover.
#[tokio::test]
async fn series_pooling_different_model_sets_say_so_in_the_chart() -> anyhow::Result<()> {
    let mixed = cellscope_e2e::Config::from_env()?.mixed_root()?;
    let page = Harness::start_on("curves-unequal-sets", &mixed).await?;
    page.open("/?view=curves&backend=vllm,tgi&workload=long_prefill_8k&phase=scaling&facet=none")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let notes: String = page
        .eval("document.querySelector('#curves-canvas').dataset.notes")
        .await?;
    assert!(
        notes.contains("⚠ series pool different model sets: tgi 2 models, vllm 4"),
        "{notes}"
    );
    let warnings = page.text("#curves-warnings").await?;
    assert!(
        warnings.contains("tgi pools llama3.1-8b, qwen2.5-7b; vllm pools llama3.1-8b, phi-4, qwen2.5-14b, qwen2.5-7b"),
        "{warnings}"
    );
    page.screenshot("view-curves-unequal-sets").await?;
    // Three panels whose series pool the same unequal sets say so in one sentence naming them all (five
    // sentences where one per panel and dimension would be seven).
    page.open("/?view=curves").await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let sentences: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('#curves-warnings li')).map(li => li.textContent)")
        .await?;
    // Five about the sets, and one that the InferenceX points of 1k1k pool two tensor-parallel sizes.
    assert_eq!(sentences.len(), 6, "{sentences:?}");
    assert!(
        sentences[5].starts_with("8 points pool several deployments (up to tp 4, 8)"),
        "{sentences:?}"
    );
    assert!(
        sentences[0].starts_with(
            "In balanced_2k, long_decode and repeated_prefix, the series pool different model sets"
        ),
        "{sentences:?}"
    );
    // One backend alone pools one set: nothing to say.
    page.open("/?view=curves&backend=vllm&workload=long_prefill_8k&phase=scaling&facet=none")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    assert_eq!(page.count("#curves-warnings").await?, 0);
    page.close().await
}

/// A panel with no point to draw says why inside it: mistral-7b × long_prefill_8k faceted by backend sets the
/// backends against each other, so the ledger's `comparison` entry takes every cell out of every panel; and an
/// AIPerf run measured only at concurrency 4 has no other load to scale against, so it draws no point and the
/// panel says "one load, no scaling".
#[tokio::test]
async fn an_empty_panel_says_why_inside_the_chart() -> anyhow::Result<()> {
    let page = Harness::start("curves-empty-panels").await?;
    page.open("/?view=curves&model=mistral-7b&workload=long_prefill_8k&facet=backend")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let (points, notes): (String, String) = page
        .eval(
            "(() => { const c = document.querySelector('#curves-canvas'); \
             return [c.dataset.points, c.dataset.notes]; })()",
        )
        .await?;
    assert_eq!(points, "", "nothing is drawn");
    let panels = page.count("#series-table tbody tr").await?;
    let excluded: Vec<&str> = notes
        .lines()
        .filter(|line| {
            line.starts_with("all ")
                && line.ends_with(" cells excluded by the ledger (mistral-long-prefill-tokenizer)")
        })
        .collect();
    assert_eq!(
        excluded.len() as u64,
        panels,
        "one reason per panel: {notes}"
    );
    page.screenshot("view-curves-empty-excluded").await?;
    page.close().await?;

    let fixtures =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/formats");
    let page = Harness::start_on("curves-empty-no-baseline", &fixtures).await?;
    page.open("/?view=curves&run=aiperf-v01%2Fartifacts&metric=efficiency&facet=run")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let (points, notes): (String, String) = page
        .eval(
            "(() => { const c = document.querySelector('#curves-canvas'); \
             return [c.dataset.points, c.dataset.notes]; })()",
        )
        .await?;
    assert_eq!(points, "", "a cell measured against itself is no point");
    // One load: no scaling to show, and the panel says so rather than drawing 1.000.
    assert_eq!(
        notes,
        "one load, no scaling: no parallel efficiency (its cell is the one load its series was measured at)"
    );
    page.screenshot("view-curves-empty-no-baseline").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// Where a tooltip was placed near one edge: the edge, the boxes (left, top, right, bottom) of the tooltip, the
/// canvas and the legend, and whether its lines wrap.
type Placed = (String, [f64; 4], [f64; 4], [f64; 4], bool);

/// The tooltip of a point near any edge of the chart stays inside the chart's box, flipped to the point's left
/// or above it, and never covers the legend above the chart.
#[tokio::test]
async fn a_tooltip_near_any_edge_stays_inside_the_chart() -> anyhow::Result<()> {
    let page = Harness::start("curves-tooltip-edges").await?;
    page.open("/?view=curves&phase=scaling").await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    page.wait_for_details().await?;
    // The points with the least and the most x and y, hovered one by one; each tooltip's box once placed (two
    // frames later), with the canvas's and the legend's.
    let boxes: Vec<Placed> = page
        .eval_async(
            "(async () => { const c = document.querySelector('#curves-canvas'); \
             const points = c.dataset.points.split(';').map(p => p.split(',').map(Number)); \
             const pick = (f) => points.reduce((a, b) => f(b) < f(a) ? b : a); \
             const edges = [['left', pick(p => p[0])], ['right', pick(p => -p[0])], ['top', pick(p => p[1])], \
               ['bottom', pick(p => -p[1])], ['bottom right', pick(p => -p[0] - p[1])]]; \
             const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }; \
             const frame = () => new Promise(done => requestAnimationFrame(() => done())); \
             const out = []; \
             for (const [edge, p] of edges) { const r = c.getBoundingClientRect(); \
               c.dispatchEvent(new MouseEvent('mousemove', { clientX: r.left + p[0], clientY: r.top + p[1], bubbles: true })); \
               await frame(); await frame(); await frame(); \
               const t = document.querySelector('#curves-tooltip'); if (!t) throw new Error('no tooltip at ' + edge); \
               const wrapped = Math.round((t.clientHeight - 12) / parseFloat(getComputedStyle(t).lineHeight)) > t.textContent.split('\\n').length; \
               out.push([edge, rect(t), rect(c), rect(document.querySelector('#curves-legend')), wrapped]); } \
             return out; })()",
        )
        .await?;
    assert_eq!(boxes.len(), 5);
    for (edge, tooltip, canvas, legend, wrapped) in &boxes {
        assert!(!wrapped, "{edge}: the tooltip is squeezed, its lines wrap");
        assert!(
            tooltip[0] >= canvas[0] - 0.5
                && tooltip[1] >= canvas[1] - 0.5
                && tooltip[2] <= canvas[2] + 0.5
                && tooltip[3] <= canvas[3] + 0.5,
            "{edge}: tooltip {tooltip:?} leaves the chart {canvas:?}"
        );
        assert!(
            tooltip[1] >= legend[3],
            "{edge}: tooltip {tooltip:?} covers the legend {legend:?}"
        );
    }
    page.screenshot("view-curves-tooltip-bottom-right").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// The focused element's point index and accessible name, and the tooltip's text.
async fn focused(page: &Harness) -> anyhow::Result<(String, String, String)> {
    page.eval(
        "(() => { const e = document.activeElement; const t = document.querySelector('#curves-tooltip'); \
         return [e.dataset.index ?? '', e.getAttribute('aria-label') ?? '', t ? t.textContent : '']; })()",
    )
    .await
}

/// Every point of the chart is reached with Tab: each is a button named by its tooltip in one line, its focus
/// shows the tooltip and a ring at the point, and Enter opens it as a click does: its one cell in the inspector,
/// or the list of the cells it pools, whose first link takes the focus and which Escape closes.
#[tokio::test]
async fn a_point_is_reached_and_opened_from_the_keyboard() -> anyhow::Result<()> {
    use fantoccini::key::Key;
    let page = Harness::start("curves-keyboard").await?;
    // One backend, model, workload and phase: each point pools the three reps of one configuration.
    page.open("/?view=curves&backend=pytorch_direct&model=llama3.2-3b&workload=balanced_2k&phase=scaling&facet=none")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    page.wait_for_details().await?;
    let (points, buttons): (u64, u64) = page
        .eval(
            "[document.querySelector('#curves-canvas').dataset.points.split(';').filter(p => p).length, \
             document.querySelectorAll('#curves-points button.point-focus').length]",
        )
        .await?;
    assert!(points >= 4, "{points} points");
    assert_eq!(buttons, points, "one button per drawn point");
    // Tab from the last control before the chart reaches the first point.
    page.press_on("#export-svg", Key::Tab).await?;
    page.wait_for("#curves-tooltip").await?;
    let (index, label, tooltip) = focused(&page).await?;
    assert_eq!(index, "0");
    assert!(label.starts_with("pytorch_direct · N=1"), "{label}");
    let lines: Vec<&str> = tooltip
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    assert_eq!(
        label,
        lines.join("; "),
        "the label is the tooltip in one line"
    );
    // The ring is drawn at the point itself.
    let (dx, dy, ring): (f64, f64, String) = page
        .eval(
            "(() => { const e = document.activeElement; const c = document.querySelector('#curves-canvas'); \
             const p = c.dataset.points.split(';')[0].split(',').map(Number); const r = e.getBoundingClientRect(); \
             const cr = c.getBoundingClientRect(); \
             return [r.left + r.width / 2 - cr.left - p[0], r.top + r.height / 2 - cr.top - p[1], getComputedStyle(e).outlineStyle]; })()",
        )
        .await?;
    assert!(
        dx.abs() <= 1.0 && dy.abs() <= 1.0,
        "ring off its point by {dx}, {dy}"
    );
    assert_eq!(ring, "solid");
    page.press(Key::Tab).await?;
    page.until("document.activeElement.dataset.index === '1'")
        .await?;
    let (_, label, tooltip) = focused(&page).await?;
    assert!(label.starts_with("pytorch_direct · N=2"), "{label}");
    assert!(tooltip.contains("N=2"), "{tooltip}");
    page.screenshot("view-curves-keyboard-focus").await?;

    // Enter on a point pooling three reps lists them; the focus goes to the first, Escape closes the list and
    // gives the focus back to the point.
    page.press(Key::Enter).await?;
    page.wait_for("#point-cells").await?;
    assert_eq!(page.count("#point-cells li a").await?, 3);
    page.until("document.activeElement === document.querySelector('#point-cells a')")
        .await?;
    page.screenshot("view-curves-keyboard-cells").await?;
    page.press(Key::Escape).await?;
    page.until("!document.querySelector('#point-cells')")
        .await?;
    page.until("document.activeElement.dataset.index === '1'")
        .await?;

    // With one rep, a point is one cell: Enter opens it in the inspector.
    page.open("/?view=curves&backend=pytorch_direct&model=llama3.2-3b&workload=balanced_2k&phase=scaling&facet=none&rep=0")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    page.wait_for("#curves-points button.point-focus").await?;
    page.press_on(
        "#curves-points button.point-focus[data-index='1']",
        Key::Enter,
    )
    .await?;
    page.until("location.search.includes('view=inspector')")
        .await?;
    let search: String = page.eval("decodeURIComponent(location.search)").await?;
    assert!(
        search.contains("/pytorch_direct/llama3.2-3b/balanced_2k/n=2/rep=0"),
        "{search}"
    );
    page.assert_no_console_errors().await?;
    page.close().await
}

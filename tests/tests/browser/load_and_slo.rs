//! Rate sweeps in a real browser over the format fixtures: the curves hold one kind of load per axis and say what
//! they leave out, and the matrix's SLO capacity follows the SLO typed beside it and survives its link.

use cellscope_e2e::Harness;

fn fixtures() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/formats")
}

/// SGLang's rate sweep (1, 2, 4 req/s and all at once) beside its plain run at concurrencies: the axis holds the
/// rates, most of the cells, and names the concurrency cells it leaves out; choosing concurrency swaps them.
#[tokio::test]
async fn the_load_axis_holds_one_kind_and_the_link_chooses_it() -> anyhow::Result<()> {
    let page = Harness::start_on("load-kind", &fixtures()).await?;
    page.open("/?view=curves&run=sglang-rate,sglang-plain&metric=p99_ttft_ms&facet=none")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let kind: String = page
        .eval("document.querySelector('#curve-load-kind').value")
        .await?;
    assert_eq!(kind, "rate");
    let note = page.text("#curves-off-axis").await?;
    assert!(
        note.starts_with("2 cells at a concurrency N not on this axis"),
        "{note}"
    );
    // Four rate points are drawn (1, 2, 4 req/s and ∞).
    let points: String = page
        .eval("document.querySelector('#curves-canvas').dataset.points")
        .await?;
    assert_eq!(points.split(';').count(), 4, "{points}");
    page.screenshot("curves-rate-axis").await?;
    page.eval::<bool>("(() => { const s = document.querySelector('#curve-load-kind'); s.value = 'concurrency'; s.dispatchEvent(new Event('change')); return true; })()")
        .await?;
    page.until("location.search.includes('load_kind=concurrency')")
        .await?;
    page.until("document.querySelector('#curves-off-axis')?.textContent.startsWith('4 cells at an offered rate')")
        .await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// The SGLang rate sweep's p99 TTFT is 82.2, 82.6, 83.3 ms at 1, 2, 4 req/s and 858 ms all at once: under
/// ≤ 100 ms the SLO holds at every finite rate (capacity ≥ 4 req/s, not interpolated towards ∞); under ≤ 82.4 ms
/// it holds at 1 req/s only, and the capacity is 1 + (82.4 − 82.1988) / (82.5832 − 82.1988) ≈ 1.5 req/s.
#[tokio::test]
async fn editing_the_slo_changes_the_capacity_and_the_link_keeps_it() -> anyhow::Result<()> {
    let page = Harness::start_on("slo-capacity", &fixtures()).await?;
    let square = "table.grid td.square .value";
    page.open("/?run=sglang-rate&metric=slo_capacity&slo=p99_ttft_ms%3C%3D100&grid=run&rows=backend&cols=model")
        .await?;
    page.wait_for(square).await?;
    let loose = page.text(square).await?;
    assert!(loose.starts_with("≥ 4 req/s"), "{loose}");
    // Type a tighter bound into the SLO box, as a user would.
    page.eval::<bool>("(() => { const i = document.querySelector('#slo'); i.value = 'p99_ttft_ms<=82.4'; i.dispatchEvent(new Event('change')); return true; })()")
        .await?;
    page.until("decodeURIComponent(location.search).includes('slo=p99_ttft_ms<=82.4')")
        .await?;
    let tight =
        format!("document.querySelector('{square}')?.textContent.startsWith('≈ 1.5 req/s (1–2)')");
    page.until(&tight).await?;
    let link: String = page.eval("location.href").await?;
    // A bound on a statistic an SLO cannot name is refused beside the box; the view stays.
    page.eval::<bool>("(() => { const i = document.querySelector('#slo'); i.value = 'p99_ttft<=5'; i.dispatchEvent(new Event('change')); return true; })()")
        .await?;
    page.wait_for("#slo-error").await?;
    assert!(page.text("#slo-error").await?.contains("p99_ttft"));
    assert!(page.text(square).await?.starts_with("≈ 1.5 req/s"));
    page.screenshot("matrix-slo-capacity").await?;
    // The link reopens the same capacity.
    page.open_url(&link).await?;
    page.until(&tight).await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// The mixed demo's two vLLM deployments (TP1 and TP2, swept in request rate) and its InferenceX runs: the
/// throughput–interactivity button turns the curves into output tok/s per accelerator against p50
/// interactivity, each configuration a series with its frontier, and the link it writes reopens that view.
#[tokio::test]
async fn the_throughput_interactivity_view_draws_a_frontier_per_deployment() -> anyhow::Result<()> {
    let mixed = cellscope_e2e::Config::from_env()?.mixed_root()?;
    let page = Harness::start_on("pareto", &mixed).await?;
    page.open("/?view=curves&backend=vllm&tp=1,2&facet=none")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    page.eval::<bool>(
        "(() => { document.querySelector('#curve-pareto').click(); return true; })()",
    )
    .await?;
    page.until("location.search.includes('metric=output_tps_per_accelerator') && location.search.includes('x=p50_interactivity_tps') && location.search.includes('frontier=1') && location.search.includes('color=configuration')")
        .await?;
    page.until("document.querySelector('#curves-canvas')?.dataset.yLabel === 'output tok/s per accelerator'")
        .await?;
    let canvas = "document.querySelector('#curves-canvas').dataset";
    let points: String = page.eval(&format!("{canvas}.points")).await?;
    let frontier: String = page.eval(&format!("{canvas}.frontierPoints")).await?;
    let frontier: usize = frontier.parse()?;
    let drawn = points.split(';').count();
    // Two deployments at six offered rates each (the InferenceX runs report no per-request interactivity and are
    // left out, and say so): each series has a frontier, and a sweep past saturation has dominated points.
    assert_eq!(drawn, 12, "{points}");
    assert!(frontier >= 2 && frontier < drawn, "{frontier} of {drawn}");
    page.screenshot("curves-pareto").await?;
    let link: String = page.eval("location.href").await?;
    page.open_url(&link).await?;
    page.until(
        "document.querySelector('#curves-canvas')?.dataset.xAxis === 'p50_interactivity_tps'",
    )
    .await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// The same SLO typed into the curves' box marks the capacity in the panel: SGLang's rate sweep holds p99 TTFT
/// ≤ 82.4 ms up to ≈ 1.5 req/s (between 1 and 2 req/s), as in the matrix.
#[tokio::test]
async fn the_curves_mark_each_series_capacity_under_the_slo() -> anyhow::Result<()> {
    let page = Harness::start_on("slo-curves", &fixtures()).await?;
    page.open("/?view=curves&run=sglang-rate&metric=p99_ttft_ms&facet=none")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let notes = "document.querySelector('#curves-canvas').dataset.notes";
    let before: String = page.eval(notes).await?;
    assert!(!before.contains("SLO capacity"), "{before}");
    page.eval::<bool>("(() => { const i = document.querySelector('#slo'); i.value = 'p99_ttft_ms<=82.4'; i.dispatchEvent(new Event('change')); return true; })()")
        .await?;
    page.until(&format!(
        "({notes}).includes('SLO capacity (p99_ttft_ms<=82.4): sglang ≈ 1.5 req/s (1–2)')"
    ))
    .await?;
    page.screenshot("curves-slo-capacity").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// Compare on SLO capacity: the mixed demo's TP1 and TP2 deployments, each judged over its own loads under the
/// link's SLO, form one pair; the configurations whose capacity is no number (never met, not reached) are listed
/// with the reason, and the numbers agree with `/api/compare` on the same parameters.
#[tokio::test]
async fn compare_pairs_deployments_on_slo_capacity() -> anyhow::Result<()> {
    let mixed = cellscope_e2e::Config::from_env()?.mixed_root()?;
    let page = Harness::start_on("slo-compare", &mixed).await?;
    let query = "by=tp&a=1&b=2&per=none&metric=slo_capacity&slo=p99_ttft_ms%3C%3D500";
    page.open(&format!("/?view=compare&{query}")).await?;
    page.wait_for("#compare-table tbody tr").await?;
    let row: (String, String) = page
        .eval("(() => { const r = document.querySelector('#compare-table tbody tr'); return [r.dataset.pairs, r.dataset.dropped]; })()")
        .await?;
    let api = page.get(&format!("/api/compare?{query}"))?.json()?;
    let group = &api["groups"][0];
    assert_eq!(
        row.0,
        group["pairs"].as_array().map_or(0, Vec::len).to_string()
    );
    assert_eq!(
        row.1,
        group["dropped"].as_array().map_or(0, Vec::len).to_string()
    );
    assert_eq!(
        row.0, "1",
        "one pair: TP1 against TP2 of the rate-swept model"
    );
    let delta = group["pairs"][0]["delta"].as_f64().expect("delta");
    assert!(delta < 0.0, "TP2 holds the SLO to a higher rate: {delta}");
    // The sides were judged over offered rates: Δ is a difference of rates, in req/s.
    let shown: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('#compare-table tbody tr td.num')).slice(1, 3).map(td => td.textContent)")
        .await?;
    for text in &shown {
        assert!(
            text.starts_with('-') && text.ends_with(" req/s"),
            "{shown:?}"
        );
    }
    // The dropped pairs are listed in a disclosure (closed past six of them): read its list, shown or not.
    let dropped: String = page
        .eval("document.querySelector('#compare-table td.dropped').textContent")
        .await?;
    assert!(dropped.contains("SLO never met on the 1 side"), "{dropped}");
    assert!(
        page.eval::<bool>("!!document.querySelector('#slo')")
            .await?
    );
    page.screenshot("compare-slo-capacity").await?;
    // Per workload, most groups have no pair: the pairs' chart draws no frame for them and names them instead.
    let query = "by=backend&a=vllm&b=sglang&per=workload&metric=slo_capacity";
    page.open(&format!("/?view=compare&{query}")).await?;
    page.wait_for_attr("#paired-canvas", "data-drawn", "true")
        .await?;
    let unpaired: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('#compare-table tbody tr[data-pairs=\"0\"]')).map(tr => tr.dataset.group)")
        .await?;
    let paired = page.count("#compare-table tbody tr").await? - unpaired.len() as u64;
    assert!(!unpaired.is_empty() && paired > 0, "{unpaired:?}");
    let note = page.text("#paired-note").await?;
    for group in &unpaired {
        assert!(note.contains(group.as_str()), "{group} not named in {note}");
    }
    assert_eq!(
        page.eval::<String>("document.querySelector('#paired-canvas').dataset.panels")
            .await?,
        paired.to_string(),
        "one panel per group with a pair"
    );
    // These sides were judged over concurrencies: each mean Δ is a difference of N.
    let deltas: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('#compare-table tbody tr:not([data-pairs=\"0\"])')).map(tr => tr.querySelectorAll('td.num')[1].textContent)")
        .await?;
    assert!(
        deltas.iter().all(|delta| delta.ends_with(" N")),
        "{deltas:?}"
    );
    let drawn: String = page
        .eval("document.querySelector('#paired-canvas').dataset.points")
        .await?;
    let api = page.get(&format!("/api/compare?{query}"))?.json()?;
    let pairs: usize = api["groups"]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .map(|group| group["pairs"].as_array().map_or(0, Vec::len))
                .sum()
        })
        .unwrap_or(0);
    assert_eq!(
        drawn.split(';').filter(|point| !point.is_empty()).count(),
        pairs
    );
    page.screenshot("compare-slo-per-workload").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// Two InferenceX runs at one concurrency each (TP4 and TP8): neither has a second load to scale against, so
/// neither has an efficiency, and a link without a metric opens on output tok/s and says why; the link then names
/// that metric.
#[tokio::test]
async fn single_load_results_open_on_throughput_and_say_why() -> anyhow::Result<()> {
    let page = Harness::start_on("opening", &fixtures().join("vllm-inferencex")).await?;
    page.open("/").await?;
    page.wait_for("#opening-notice").await?;
    let notice = page.text("#opening-notice").await?;
    assert!(
        notice.starts_with(
            "Opened on output tok/s: 0 of 2 cells with data have a parallel efficiency (2 are the one load their \
             series was measured at: one load, no scaling)"
        ),
        "{notice}"
    );
    page.until("location.search.includes('metric=aggregate_tps')")
        .await?;
    page.wait_for("table.grid td.square .value").await?;
    page.screenshot("opening-metric").await?;
    // A link that names a metric keeps it, and says nothing.
    page.open("/?metric=efficiency").await?;
    page.wait_for("table.grid td.square .value").await?;
    assert_eq!(page.count("#opening-notice").await?, 0);
    page.assert_no_console_errors().await?;
    page.close().await
}

/// The filter bar lists the mixed demo's tensor-parallel sizes: choosing TP2 there writes `tp=2` into the link
/// and keeps exactly the cells `/api/cells?tp=2` gives, and the colour picker offers `tp` beside the fixed
/// dimensions.
#[tokio::test]
async fn the_filter_bar_narrows_to_one_tensor_parallel_size() -> anyhow::Result<()> {
    let mixed = cellscope_e2e::Config::from_env()?.mixed_root()?;
    let page = Harness::start_on("tp-filter", &mixed).await?;
    page.open("/?view=curves&facet=none").await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    page.click("details.filter[data-dimension=tp] summary")
        .await?;
    page.click("details.filter[data-dimension=tp] input[data-value='2']")
        .await?;
    page.until("location.search.includes('tp=2')").await?;
    let api = page.get("/api/cells?tp=2&format=json")?.json()?;
    let expected = api.as_array().map_or(0, Vec::len);
    assert!(expected > 0, "the mixed demo has TP2 cells");
    page.wait_for_attr("#slice-count", "data-cells", &expected.to_string())
        .await?;
    let colours: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('#color option')).map(o => o.value)")
        .await?;
    assert!(colours.iter().any(|name| name == "tp"), "{colours:?}");
    page.assert_no_console_errors().await?;
    page.close().await
}

/// The mixed demo's InferenceX aggregate (six configurations, no request counts) is drawn like any sweep: one
/// series per TP over three concurrencies, every point marked as resting on the tool's figures; the curve's
/// points equal `/api/cells` (the tool's median TTFT in seconds × 1000).
#[tokio::test]
async fn an_aggregate_without_request_counts_is_drawn_from_the_tools_figures() -> anyhow::Result<()>
{
    let mixed = cellscope_e2e::Config::from_env()?.mixed_root()?;
    let page = Harness::start_on("aggregate-rows", &mixed).await?;
    page.open("/?view=curves&model=Llama-3.3-70B-Instruct&metric=p50_ttft_ms&facet=none&color=tp")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let points: String = page
        .eval("document.querySelector('#curves-canvas').dataset.points")
        .await?;
    assert_eq!(points.split(';').count(), 6, "{points}");
    page.until("document.body.innerText.includes('6 points rest on figures the tool reported')")
        .await?;
    let api = page
        .get("/api/cells?model=Llama-3.3-70B-Instruct&format=json")?
        .json()?;
    let cells = api.as_array().cloned().unwrap_or_default();
    assert_eq!(cells.len(), 6);
    let table: String = page
        .eval("Array.from(document.querySelectorAll('td.points')).map(td => td.textContent).join(' | ')")
        .await?;
    for cell in cells {
        assert_eq!(cell["status"], "clean", "{cell}");
        let ttft = cell["p50_ttft_ms"]
            .as_f64()
            .expect("the tool's median TTFT");
        let load = cell["n"].as_u64().expect("a concurrency");
        assert!(
            table.contains(&format!("{load}: {ttft:.3}")),
            "{load}: {ttft} not in {table}"
        );
    }
    page.screenshot("curves-aggregate-rows").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

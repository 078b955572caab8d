//! Several deployments in one slice, in a real browser: the throughput–interactivity button draws one point per
//! configuration and load, each named by its configuration, with frontiers only through single configurations,
//! and the default views mark every square and series that pools deployments.

use cellscope_e2e::Harness;

/// Engines, tensor-parallel sizes and concurrencies of the root: every combination is one InferenceX row.
const ENGINES: [&str; 2] = ["sglang", "vllm"];
const TPS: [u32; 2] = [4, 8];
const CONCURRENCIES: [u32; 3] = [4, 16, 64];

/// A root holding one InferenceX aggregate of one model at 1k1k: 2 engines × TP 4, 8 × 3 concurrencies, each
/// row its own configuration at its own load (figures in seconds, as the collector writes them).
fn deployments_root() -> anyhow::Result<tempfile::TempDir> {
    let root = tempfile::tempdir()?;
    let mut rows = Vec::new();
    for (engine_index, engine) in ENGINES.into_iter().enumerate() {
        for tp in TPS {
            for conc in CONCURRENCIES {
                // Per-user speed falls and throughput per GPU rises with concurrency; TP 8 is faster per user,
                // slower per GPU; the second engine a little faster throughout.
                let speed = 1.0 + 0.1 * engine_index as f64;
                let tpot_s = 0.004 * f64::from(conc).sqrt() * 4.0 / f64::from(tp) / speed;
                let per_gpu = f64::from(conc) / tpot_s / f64::from(tp) / 4.0;
                rows.push(serde_json::json!({
                    "conc": conc, "dp_attention": "false", "ep": 1, "framework": engine, "hw": "h200",
                    "isl": 1024, "osl": 1024, "model": "meta-llama/Llama-3.3-70B-Instruct", "precision": "fp8",
                    "tp": tp, "pp": 1,
                    "median_tpot": tpot_s, "mean_tpot": tpot_s, "p99_tpot": tpot_s * 1.5,
                    "median_intvty": 1.0 / tpot_s, "mean_intvty": 1.0 / tpot_s,
                    "median_ttft": 0.1, "mean_ttft": 0.1, "p99_ttft": 0.2,
                    "median_e2el": 0.1 + 1023.0 * tpot_s, "mean_e2el": 0.1 + 1023.0 * tpot_s,
                    "p99_e2el": 0.2 + 1023.0 * tpot_s * 1.5,
                    "output_tput_per_gpu": per_gpu, "tput_per_gpu": 2.0 * per_gpu,
                    "input_tput_per_gpu": per_gpu,
                }));
            }
        }
    }
    std::fs::write(
        root.path().join("agg_bmk.json"),
        serde_json::to_vec_pretty(&rows)?,
    )?;
    Ok(root)
}

/// The accessible names of the chart's point buttons, one per drawn point.
async fn point_names(page: &Harness) -> anyhow::Result<Vec<String>> {
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    page.eval(
        "[...document.querySelectorAll('#curves-points .point-focus')].map(b => b.getAttribute('aria-label'))",
    )
    .await
}

#[tokio::test]
async fn the_pareto_button_draws_one_point_per_configuration_and_load() -> anyhow::Result<()> {
    let root = deployments_root()?;
    let page = Harness::start_on("configurations-pareto", root.path()).await?;
    page.open("/?view=curves").await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    page.click("#curve-pareto").await?;
    page.until("location.search.includes('color=configuration')")
        .await?;
    let names = point_names(&page).await?;
    let expected = ENGINES.len() * TPS.len() * CONCURRENCIES.len();
    anyhow::ensure!(
        names.len() == expected,
        "{} points: {names:#?}",
        names.len()
    );
    // Every point names its engine and TP (the parts that differ), its load, the whole configuration, and that it
    // stands for one cell: no point averages deployments.
    let mut seen = std::collections::BTreeSet::new();
    for name in &names {
        let (engine, tp, conc) = ENGINES
            .iter()
            .flat_map(|engine| TPS.iter().map(move |tp| (*engine, *tp)))
            .flat_map(|(engine, tp)| CONCURRENCIES.iter().map(move |conc| (engine, tp, *conc)))
            .find(|(engine, tp, conc)| name.starts_with(&format!("{engine} · tp {tp} · N={conc};")))
            .ok_or_else(|| anyhow::anyhow!("a point named by no configuration and load: {name}"))?;
        anyhow::ensure!(
            name.contains(&format!(
                "configuration {engine} · Llama-3.3-70B-Instruct · "
            )) && name.contains(&format!("tp={tp}"))
                && name.contains("; 1 cell;"),
            "{name}"
        );
        anyhow::ensure!(
            seen.insert((engine, tp, conc)),
            "two points of {engine} tp {tp} N={conc}"
        );
    }
    // Each series is one configuration, so each draws its frontier, and nothing says it is withheld.
    let frontier: u64 = page
        .eval("Number(document.querySelector('#curves-canvas').dataset.frontierPoints)")
        .await?;
    anyhow::ensure!(frontier > 0, "no frontier point");
    anyhow::ensure!(
        page.count("#curves-warnings").await? == 0,
        "{}",
        page.text("#curves-warnings").await.unwrap_or_default()
    );
    page.screenshot("configurations-pareto").await?;
    // The frontier across configurations: chosen by keyboard-reachable select, kept in the link.
    page.eval::<bool>(
        "(() => { const s = document.querySelector('#curve-frontier'); s.value = 'all'; \
         s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()",
    )
    .await?;
    page.until("location.search.includes('frontier=all')")
        .await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let (on, off): (u64, u64) = page
        .eval(
            "[Number(document.querySelector('#curves-canvas').dataset.frontierPoints), \
              Number(document.querySelector('#curves-canvas').dataset.dominatedPoints)]",
        )
        .await?;
    anyhow::ensure!(
        on > 0 && off > 0 && on + off == expected as u64,
        "across configurations: {on} on, {off} off"
    );
    page.screenshot("configurations-frontier-all").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn default_views_mark_what_pools_deployments() -> anyhow::Result<()> {
    let root = deployments_root()?;
    let page = Harness::start_on("configurations-badges", root.path()).await?;
    // Curves coloured by backend: each point pools TP 4 and 8, which the legend and the note say.
    page.open("/?view=curves&metric=aggregate_tps").await?;
    page.wait_for_attr("#curves-canvas", "data-drawn", "true")
        .await?;
    let badges: Vec<String> = page
        .eval(
            "[...document.querySelectorAll('#curves-legend .badge.pools')].map(b => b.textContent)",
        )
        .await?;
    anyhow::ensure!(
        badges == ["pools tp 4, 8", "pools tp 4, 8"],
        "legend badges: {badges:?}"
    );
    let warnings = page.text("#curves-warnings").await?;
    anyhow::ensure!(
        warnings.contains("pool several deployments (up to tp 4, 8)"),
        "{warnings}"
    );
    let names = point_names(&page).await?;
    anyhow::ensure!(
        names
            .iter()
            .all(|name| name.contains("mean of 2 cells: tp 4, 8")),
        "{names:#?}"
    );
    // The matrix: each square pools both TPs and says so on its face.
    page.open("/?view=matrix&metric=aggregate_tps&at_load=16")
        .await?;
    page.wait_for("td.square").await?;
    let pools: Vec<String> = page
        .eval("[...document.querySelectorAll('td.square .pools')].map(p => p.textContent)")
        .await?;
    anyhow::ensure!(
        !pools.is_empty() && pools.iter().all(|text| text == "pools tp 4, 8"),
        "square badges: {pools:?}"
    );
    let note = page.text("#matrix-deployments").await?;
    anyhow::ensure!(note.contains("pool several deployments"), "{note}");
    page.screenshot("configurations-matrix-badges").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

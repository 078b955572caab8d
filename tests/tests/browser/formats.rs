//! Other benchmark tools' files in a real browser: the mixed-format demo root (the TR164 demo beside a vLLM sweep,
//! SGLang JSONL and an AIPerf sweep) side by side in the matrix, compared across formats, their inferred key values
//! in the audit and a cell's origin in the inspector; and, on the format fixtures, figures the tool reported (†) or
//! that rest on a derived wall latency (‡) marked wherever they are shown, with the reason efficiency is absent.

use cellscope_e2e::{Config, Harness};
use std::path::PathBuf;

/// The committed format fixtures, served as one root (read-only, like every root).
fn fixtures_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/formats")
}

/// The `p99_e2e_latency_ms` that SGLang wrote on line `line` (1-based) of a fixture JSONL, read straight from the
/// file: the tool's own figure, independent of cellscope's reader.
fn sglang_reported(file: &str, line: usize, key: &str) -> anyhow::Result<f64> {
    let text = std::fs::read_to_string(fixtures_root().join(file))?;
    let record = text
        .lines()
        .nth(line - 1)
        .ok_or_else(|| anyhow::anyhow!("{file} has no line {line}"))?;
    // The bare `Infinity` of `request_rate` is not JSON; the figure wanted is elsewhere on the line.
    let value: serde_json::Value = serde_json::from_str(&record.replace("Infinity", "null"))?;
    value[key]
        .as_f64()
        .ok_or_else(|| anyhow::anyhow!("{file}:{line} has no {key}"))
}

#[tokio::test]
async fn a_mixed_root_shows_every_format_side_by_side_compares_across_them_and_audits_inferred_keys()
-> anyhow::Result<()> {
    let mixed = Config::from_env()?.mixed_root()?;
    let page = Harness::start_on("mixed-root", &mixed).await?;
    one_grid_per_suite_with_derived_marks(&page).await?;
    compare_across_formats(&page).await?;
    the_audit_lists_inferred_parts(&page).await?;
    the_inspector_shows_an_sglang_cell_origin(&page).await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// The matrix of the mixed root: one grid per suite, SGLang's derived wall times marked.
async fn one_grid_per_suite_with_derived_marks(page: &Harness) -> anyhow::Result<()> {
    // One grid per suite: the two TR164 suites and the external sweep, backends as rows.
    page.open(
        "/?grid=suite&rows=backend&cols=model&workload=short_decode&metric=p95_wall_ms&at_n=4",
    )
    .await?;
    page.wait_for("table.grid[data-grid=external] td.square")
        .await?;
    let grids: Vec<String> = page
        .eval("[...document.querySelectorAll('table.grid')].map((grid) => grid.dataset.grid)")
        .await?;
    assert_eq!(grids, ["cloud_core", "external", "local_core"]);
    let external: Vec<(String, String, String, String, String)> = page
        .eval(
            "[...document.querySelectorAll('table.grid[data-grid=external] td.square:not(.absent)')].map((td) => \
             [td.dataset.row, td.dataset.col, td.querySelector('.value').textContent, td.dataset.reported, \
             td.dataset.derived])",
        )
        .await?;
    let rows: std::collections::BTreeSet<&str> =
        external.iter().map(|square| square.0.as_str()).collect();
    assert_eq!(
        rows.into_iter().collect::<Vec<_>>(),
        ["sglang", "tgi", "vllm"],
        "{external:?}"
    );
    for (backend, model, value, reported, derived) in &external {
        assert!(
            value.ends_with(" ms") || value.ends_with(" s"),
            "{backend} {model}: {value}"
        );
        assert_eq!(reported, "0", "{backend} {model}: nothing is reported");
        // SGLang's files have no end-to-end latency: its wall times are TTFT + Σ ITL, and say so.
        let expected_derived = if backend == "sglang" { "3" } else { "0" };
        assert_eq!(derived, expected_derived, "{backend} {model}");
    }
    let sglang_hover: String = page
        .eval(
            "document.querySelector('table.grid[data-grid=external] td.square[data-row=sglang]').title",
        )
        .await?;
    assert!(
        sglang_hover.contains(
            "‡ 3 of 3 cells: derived: wall latency rebuilt as TTFT + Σ inter-token latencies"
        ),
        "{sglang_hover}"
    );
    page.screenshot("formats-mixed-matrix").await?;
    Ok(())
}

/// vLLM's JSON against SGLang's JSONL in the Compare view, as /api/compare gives it.
async fn compare_across_formats(page: &Harness) -> anyhow::Result<()> {
    // Compare across formats: vLLM's JSON against SGLang's JSONL, the same table /api/compare gives (on the two
    // workloads of the sweep both engines ran: the vLLM-only deployment sweeps beside it have no SGLang side).
    page.open(
        "/?view=compare&by=backend&a=vllm&b=sglang&per=workload&metric=p95_wall_ms&suite=external\
         &workload=long_prefill_8k,short_decode",
    )
    .await?;
    page.wait_for("#compare-table tbody tr").await?;
    let table: Vec<(String, String, String)> = page
        .eval(
            "[...document.querySelectorAll('#compare-table tbody tr')].map((row) => \
             [row.dataset.group, row.dataset.pairs, row.dataset.verdict])",
        )
        .await?;
    let api = page
        .get(
            "/api/compare?by=backend&a=vllm&b=sglang&per=workload&metric=p95_wall_ms&suite=external\
             &workload=long_prefill_8k,short_decode",
        )?
        .json()?;
    let groups = api["groups"]
        .as_array()
        .ok_or_else(|| anyhow::anyhow!("no groups in {api}"))?;
    let expected: Vec<(String, String, String)> = groups
        .iter()
        .map(|group| {
            (
                group["group"].as_str().unwrap_or_default().to_string(),
                group["n_pairs"].to_string(),
                group["verdict"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(table, expected);
    assert_eq!(table.len(), 2, "both workloads of the external sweep");
    assert!(table.iter().all(|(_, pairs, _)| pairs != "0"), "{table:?}");
    Ok(())
}

/// The audit's inferred key parts and their rules.
async fn the_audit_lists_inferred_parts(page: &Harness) -> anyhow::Result<()> {
    // The audit lists what was inferred for each run, with the rule.
    page.open("/?view=audit").await?;
    let inferred = "article.audit-run[data-run='external/sglang'] dd[data-line=inferred]";
    page.wait_for(inferred).await?;
    let text = page.text(inferred).await?;
    for expected in [
        "backend = sglang on 60 cells (cellscope.toml [[map]] #3 (glob `external/sglang/**`): backend = \"sglang\")",
        "suite = external on 60 cells",
    ] {
        assert!(text.contains(expected), "{text}");
    }
    let tr164: u64 = page
        .count("article.audit-run[data-run='20260612_212816_266127'] dd[data-line=inferred]")
        .await?;
    assert_eq!(tr164, 0, "TR164 runs read every key part");
    Ok(())
}

/// The origin of an SGLang cell and its reported figures in the Inspector.
async fn the_inspector_shows_an_sglang_cell_origin(page: &Harness) -> anyhow::Result<()> {
    // The inspector tells where an SGLang cell came from and sets the tool's figures against cellscope's.
    let provenance = page.get("/api/provenance")?.json()?;
    let origin = provenance["origins"]
        .as_array()
        .and_then(|origins| {
            origins.iter().find(|keyed| {
                keyed["key"]["run_id"] == "external/sglang"
                    && keyed["key"]["n"] == 4
                    && keyed["key"]["rep"] == 0
                    && keyed["key"]["workload"] == "short_decode"
                    && keyed["key"]["model"] == "qwen2.5-7b"
            })
        })
        .ok_or_else(|| anyhow::anyhow!("no origin for the SGLang cell"))?
        .clone();
    // The key's text escapes the `/` of the run id (`%2F`), and the link percent-encodes that `%`; the
    // configuration SGLang's `server_info` states sits between the workload and the load.
    page.open("/?view=inspector&cell=external%252Fsglang/external/scaling/sglang/qwen2.5-7b/short_decode/dp=1,engine_version=0.5.1,tp=1/n=4/rep=0")
        .await?;
    page.wait_for("#cell-origin").await?;
    assert_eq!(
        page.eval::<String>("document.querySelector('#cell-origin').dataset.format")
            .await?,
        "sglang-bench"
    );
    let file = page.text("#origin-file").await?;
    assert!(
        file.contains(origin["origin"]["file"].as_str().unwrap_or("?")),
        "{file}"
    );
    let dimensions: Vec<String> = page
        .eval("[...document.querySelectorAll('#inferred-parts li')].map((li) => li.dataset.dimension)")
        .await?;
    assert!(
        dimensions.contains(&"backend".to_string()),
        "{dimensions:?}"
    );
    let reported = origin["origin"]["reported"]["p99_wall_ms"]
        .as_f64()
        .ok_or_else(|| anyhow::anyhow!("no reported p99 in {origin}"))?;
    let row = page
        .text("#reported-vs-recomputed tr[data-column=p99_wall_ms]")
        .await?;
    assert!(row.contains(&format!("{reported:.2} ms")), "{row}");
    let derived_marks = page
        .count("#reps-table tr.current td[data-mark='‡']:not([data-stat])")
        .await?;
    assert_eq!(
        derived_marks, 5,
        "mean, p50, p95 and p99 wall are derived, and the p95 multiplier computed from p95 wall"
    );
    // Among the serving figures, those computed from the derived wall latency (TPOT is wall less TTFT per token
    // after the first, interactivity its inverse) carry the mark too.
    let derived_serving: Vec<String> = page
        .eval("Array.from(document.querySelectorAll(\"#reps-table tr.current td[data-stat][data-mark='‡']\")).map(td => td.dataset.stat)")
        .await?;
    assert_eq!(
        derived_serving,
        [
            "mean_tpot_ms",
            "p50_tpot_ms",
            "p95_tpot_ms",
            "p99_tpot_ms",
            "p50_interactivity_tps"
        ]
    );
    page.screenshot("formats-mixed-inspector").await?;
    Ok(())
}

#[tokio::test]
async fn reported_and_derived_figures_are_marked_and_a_baseline_other_than_n1_is_named()
-> anyhow::Result<()> {
    let page = Harness::start_on("reported-figures", &fixtures_root()).await?;

    // SGLang without --output-details: every figure is the tool's.
    page.open("/?run=sglang-plain&metric=p95_wall_ms&at_n=1&grid=run&rows=backend&cols=model")
        .await?;
    let square = "table.grid td.square[data-row=sglang]";
    page.wait_for(square).await?;
    assert_eq!(
        page.eval::<String>(&format!(
            "document.querySelector('{square}').dataset.reported"
        ))
        .await?,
        "1"
    );
    assert!(page.text(&format!("{square} .glyphs")).await?.contains('†'));
    let hover: String = page
        .eval(&format!("document.querySelector('{square}').title"))
        .await?;
    assert!(
        hover.contains("† 1 of 1 cells: reported by the tool, not recomputed"),
        "{hover}"
    );
    // The legend says what the signs mean.
    assert!(
        page.text("#matrix-legend")
            .await?
            .contains("† reported by the tool · ‡ derived"),
        "legend"
    );

    // AIPerf v0.1's one run is at concurrency 4 only: nothing to scale against, so no efficiency, and the square
    // and its hover say so rather than showing the cell divided by itself.
    page.open(
        "/?run=aiperf-v01%2Fartifacts&metric=efficiency&at_n=4&grid=run&rows=backend&cols=model",
    )
    .await?;
    let square = "table.grid td.square";
    page.wait_for(square).await?;
    assert_eq!(page.text(&format!("{square} .value")).await?, "one load");
    let hover: String = page
        .eval(&format!("document.querySelector('{square}').title"))
        .await?;
    assert!(
        hover.contains("one load, no scaling (the series was measured at N=4 only"),
        "{hover}"
    );
    // InferenceX's TP4 sweep starts at N = 4: efficiency is measured against N = 4, and the square says so.
    page.open(
        "/?run=inferencex-agg&tp=4&metric=efficiency&at_n=16&grid=run&rows=backend&cols=model",
    )
    .await?;
    page.wait_for(square).await?;
    let value = page.text(&format!("{square} .value")).await?;
    assert!(value.ends_with(" vs N=4"), "{value}");
    let hover: String = page
        .eval(&format!("document.querySelector('{square}').title"))
        .await?;
    assert!(
        hover.contains(
            "parallel efficiency vs N=4: no N = 1 cell in the series, so it is measured against the lowest load"
        ),
        "{hover}"
    );
    page.screenshot("formats-no-baseline").await?;

    // The inspector marks each reported figure and shows the tool's figure with nothing recomputed beside it.
    page.open("/?view=inspector&cell=sglang-plain/sglang-bench/sweep/sglang/Llama-3.1-8B-Instruct/random_1024x128/dp=1,engine_version=0.5.5,max_model_len=1024,tp=1/n=1/rep=0")
        .await?;
    page.wait_for("#reported-vs-recomputed").await?;
    let marked = page
        .count("#reps-table tr.current td[data-mark='†']")
        .await?;
    assert!(marked >= 6, "{marked} reported figures marked");
    let row = page
        .text("#reported-vs-recomputed tr[data-column=p99_wall_ms]")
        .await?;
    let file_p99 = sglang_reported(
        "sglang-plain/sglang_0302_16_1024_128.jsonl",
        1,
        "p99_e2e_latency_ms",
    )?;
    assert!(row.contains("no request rows"), "{row}");
    assert!(row.contains(&format!("{file_p99:.2} ms")), "{row}");
    assert!(
        page.text("#marks-key")
            .await?
            .contains("† reported by the tool")
    );

    // With --output-details, cellscope recomputes from the requests and shows the tool's figure and the difference.
    page.open("/?view=inspector&cell=sglang-detailed/sglang-bench/sweep/sglang/Qwen3-8B/random_1024x128/dp=1,engine_version=0.5.5,max_model_len=1024,tp=1/n=2/rep=0")
        .await?;
    page.wait_for("#reported-vs-recomputed").await?;
    let file_p99 = sglang_reported(
        "sglang-detailed/sglang_0301_40_1024_128.jsonl",
        2,
        "p99_e2e_latency_ms",
    )?;
    let row: Vec<String> = page
        .eval(
            "[...document.querySelectorAll('#reported-vs-recomputed tr[data-column=p99_wall_ms] td')].map((td) => td.textContent)",
        )
        .await?;
    let recomputed: f64 = row[1].trim_end_matches(" ms").parse()?;
    assert_eq!(row[2], format!("{file_p99:.2} ms"));
    // `+1.23 ms (+0.45 %)`: recomputed − reported, then relative to the reported figure (the recomputed value read
    // back from its two decimals, hence the tolerance).
    let (difference, relative) = row[3]
        .trim_end_matches(" %)")
        .split_once(" (")
        .ok_or_else(|| anyhow::anyhow!("difference {:?}", row[3]))?;
    // The difference is in the figure's unit, like the figures.
    let difference = difference
        .strip_suffix(" ms")
        .ok_or_else(|| anyhow::anyhow!("difference {:?} not in ms", row[3]))?;
    let (difference, relative): (f64, f64) = (difference.parse()?, relative.parse()?);
    assert!(
        (difference - (recomputed - file_p99)).abs() <= 0.006,
        "{row:?}"
    );
    assert!(
        (relative - difference / file_p99 * 100.0).abs() <= 0.006,
        "{row:?}"
    );
    assert!(
        difference != 0.0,
        "the tool's p99 includes the [DONE] tail: {row:?}"
    );
    assert_eq!(
        page.count("#reps-table tr.current td[data-mark='‡']:not([data-stat])")
            .await?,
        5,
        "wall latencies and the p95 multiplier are derived"
    );
    page.screenshot("formats-inspector-reported").await?;

    // The curves say how many points rest on reported figures.
    page.open("/?view=curves&run=sglang-plain&metric=p95_wall_ms")
        .await?;
    page.wait_for("#curves-marks").await?;
    let note = page.text("#curves-marks").await?;
    assert!(
        note.contains(
            "2 points rest on figures the tool reported (†), not recomputed from request rows"
        ),
        "{note}"
    );
    page.assert_no_console_errors().await?;
    page.close().await
}

/// A cell whose tool wrote no per-request rows (SGLang without `--output-details`) has no latencies to draw:
/// the inspector says so in words instead of drawing two empty chart frames.
#[tokio::test]
async fn a_reported_only_cell_says_it_has_no_rows_instead_of_empty_charts() -> anyhow::Result<()> {
    let page = Harness::start_on("reported-only-rows", &fixtures_root()).await?;
    page.open("/?view=inspector&cell=sglang-plain/sglang-bench/sweep/sglang/Llama-3.1-8B-Instruct/random_1024x128/dp=1,engine_version=0.5.5,max_model_len=1024,tp=1/n=1/rep=0")
        .await?;
    page.wait_for("#no-rows").await?;
    page.until("(document.querySelector('#no-rows')?.textContent || '').includes('reported only its own figures')")
        .await?;
    let message = page.text("#no-rows").await?;
    assert!(
        message.contains("No per-request rows")
            && message.contains("reported only its own figures"),
        "{message}"
    );
    let hidden: bool = page
        .eval(
            "['#histogram-canvas', '#cdf-canvas'].every(css => getComputedStyle(document.querySelector(css)).display === 'none')",
        )
        .await?;
    assert!(hidden, "the empty chart frames are not shown");
    page.screenshot("inspector-reported-only").await?;
    page.close().await
}

/// The refilled SGLang mistral cell: the sentence that says the replaced rows are "listed below" is followed by
/// the list, one row per replaced row, as many as the counts say.
#[tokio::test]
async fn the_replaced_rows_are_listed_where_the_inspector_says() -> anyhow::Result<()> {
    let page = Harness::start("replaced-rows-listed").await?;
    page.open("/?view=inspector&cell=20260612_212816_266127/cloud_core/scaling/sglang/mistral-7b/long_prefill_8k/n=32/rep=0")
        .await?;
    page.wait_for("#replaced-rows").await?;
    let replaced: String = page
        .eval("document.querySelector('#lineage-counts').dataset.replaced")
        .await?;
    let listed = page.count("#replaced-rows tbody tr").await?;
    assert_eq!(listed.to_string(), replaced);
    assert!(listed > 0);
    page.screenshot("inspector-replaced-rows").await?;
    page.close().await
}

/// Files no reader recognises are listed among the warnings, in `/api/index` and on the Audit page, each with the
/// nearest reader's reason, and are information: the header counts them without marking the count for attention.
#[tokio::test]
async fn files_no_reader_recognises_are_listed_as_information_not_problems() -> anyhow::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/not-recognised");
    let page = Harness::start_on("not-recognised", &root).await?;
    let expected = [
        "chats/conversations.jsonl",
        "exports/host_metrics.csv",
        "notes/summary.json",
        "unknown-tool/report.json",
    ];
    let mut index = page.get("/api/index")?.json()?;
    for _ in 0..100 {
        if index["complete"] == true {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        index = page.get("/api/index")?.json()?;
    }
    let listed: Vec<(String, String, String)> = index["warnings"]
        .as_array()
        .ok_or_else(|| anyhow::anyhow!("no warnings list"))?
        .iter()
        .map(|warning| {
            let text = |key: &str| warning[key].as_str().unwrap_or_default().to_string();
            (text("kind"), text("severity"), text("file"))
        })
        .collect();
    assert_eq!(
        listed,
        expected.map(|file| (
            "not_recognised".to_string(),
            "info".to_string(),
            file.to_string()
        )),
    );

    page.open("/?view=audit").await?;
    page.wait_for_details().await?;
    page.wait_for_text("#warnings-link", "4 warnings").await?;
    let marked: bool = page
        .eval("document.querySelector('#warnings-link').classList.contains('warn')")
        .await?;
    assert!(!marked, "information alone does not mark the warning count");
    let items: Vec<String> = page
        .eval(
            "[...document.querySelectorAll('#warnings-list li.info')].map((li) => li.textContent)",
        )
        .await?;
    assert_eq!(items.len(), expected.len(), "{items:?}");
    for (item, file) in items.iter().zip(expected) {
        assert!(
            item.starts_with(&format!("not_recognised  {file} — ")),
            "{item}"
        );
    }
    assert!(
        items[1].contains("the nearest, table, finds a table whose CSV header"),
        "{}",
        items[1]
    );
    page.assert_no_console_errors().await?;
    page.close().await
}

/// An AIPerf cell of the mixed demo in the inspector: its reps table shows the serving figures the reps have
/// (TTFT, TPOT, interactivity, request throughput) in their units, and its table of the tool's own figures writes
/// request throughput in req/s, with the number AIPerf wrote in its file.
#[tokio::test]
async fn the_inspector_shows_each_reps_serving_figures_in_their_units() -> anyhow::Result<()> {
    let mixed = Config::from_env()?.mixed_root()?;
    let page = Harness::start_on("inspector-serving", &mixed).await?;
    let run = "external/aiperf-sweep/llama3.1-8b-long_prefill_8k";
    // The run id's `/` is escaped in the key (`%2F`), and the link percent-encodes that `%`.
    page.open(&format!(
        "/?view=inspector&cell={}/external/scaling/tgi/llama3.1-8b/long_prefill_8k/n=1/rep=1",
        run.replace('/', "%252F")
    ))
    .await?;
    page.wait_for("#reported-vs-recomputed").await?;
    let headings: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('#reps-table th[data-stat]')).map(th => th.dataset.stat)")
        .await?;
    for stat in [
        "mean_ttft_ms",
        "mean_tpot_ms",
        "p99_tpot_ms",
        "p50_interactivity_tps",
        "request_throughput_rps",
    ] {
        assert!(
            headings.iter().any(|heading| heading == stat),
            "{stat} missing from {headings:?}"
        );
    }
    // Each rep's figures as `/api/cells` gives them, in their units.
    let cells = page
        .get("/api/cells?model=llama3.1-8b&workload=long_prefill_8k&backend=tgi&n=1&format=json")?
        .json()?;
    let cells = cells.as_array().cloned().unwrap_or_default();
    assert!(cells.len() >= 2, "the reps of the cell: {cells:?}");
    for cell in &cells {
        let rep = cell["rep"].as_u64().unwrap_or_default();
        let shown = |stat: &str| format!("#reps-table tr[data-rep='{rep}'] td[data-stat={stat}]");
        let rps = cell["request_throughput_rps"]
            .as_f64()
            .expect("request throughput");
        assert!(
            page.text(&shown("request_throughput_rps"))
                .await?
                .starts_with(&format!("{rps:.2} req/s")),
            "rep {rep}"
        );
        let tpot = cell["p99_tpot_ms"].as_f64().expect("p99 TPOT");
        assert!(
            page.text(&shown("p99_tpot_ms"))
                .await?
                .starts_with(&format!("{tpot:.2} ms")),
            "rep {rep}: p99 TPOT {tpot}"
        );
    }
    // The tool's request throughput, read from AIPerf's own file, in requests per second.
    let file = mixed.join(format!(
        "{run}/profile_runs/trial_0001/concurrency_1/profile_export_aiperf.json"
    ));
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file)?)?;
    let reported = written["request_throughput"]["avg"]
        .as_f64()
        .ok_or_else(|| anyhow::anyhow!("no request_throughput.avg in {}", file.display()))?;
    let row = page
        .text("#reported-vs-recomputed tr[data-column=request_throughput_rps]")
        .await?;
    assert!(row.contains(&format!("{reported:.2} req/s")), "{row}");
    assert!(!row.contains("tok/s"), "{row}");
    page.screenshot("inspector-serving-figures").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

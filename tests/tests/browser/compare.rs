//! The Compare view in a real browser: choosing the sides and the phase, the forest plot's five drawn rows, the
//! table against `/api/compare` (the same numbers from the same parameters), the long_prefill_8k row's dropped
//! pairs and "include excluded", the link's round trip, a pair opened in the Inspector, and "compare these".

use cellscope_e2e::Harness;

/// Sets a `<select>` and tells the app, as a user's choice would.
fn choose(css: &str, value: &str) -> String {
    format!(
        "(() => {{ const s = document.querySelector('{css}'); s.value = '{value}'; \
         s.dispatchEvent(new Event('change')); return s.value === '{value}'; }})()"
    )
}

/// Non-white pixels in a 9 × 9 square around (x, y) in CSS pixels of the canvas.
async fn coloured_around(page: &Harness, canvas: &str, x: f64, y: f64) -> anyhow::Result<u64> {
    page.eval(&format!(
        "(() => {{ const c = document.querySelector('{canvas}'); const s = c.width / c.clientWidth; \
         const d = c.getContext('2d').getImageData(Math.round(({x} - 4) * s), Math.round(({y} - 4) * s), \
         Math.round(9 * s), Math.round(9 * s)).data; let n = 0; \
         for (let i = 0; i < d.length; i += 4) {{ if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) n++; }} \
         return n; }})()"
    ))
    .await
}

/// A row of the table: (group, pairs, verdict, dropped).
type TableRow = (String, u32, String, u32);

/// The table's rows as (group, pairs, verdict, dropped) from their data attributes.
async fn table_rows(page: &Harness) -> anyhow::Result<Vec<TableRow>> {
    let rows: Vec<(String, String, String, String)> = page
        .eval(
            "Array.from(document.querySelectorAll('#compare-table tbody tr')).map(r => \
             [r.dataset.group, r.dataset.pairs, r.dataset.verdict, r.dataset.dropped])",
        )
        .await?;
    rows.into_iter()
        .map(|(group, pairs, verdict, dropped)| {
            Ok((group, pairs.parse()?, verdict, dropped.parse()?))
        })
        .collect()
}

#[tokio::test]
async fn the_compare_tab_draws_the_head_to_head_and_its_link_reopens_it() -> anyhow::Result<()> {
    let page = Harness::start("compare").await?;
    open_the_scaling_comparison(&page).await?;
    the_forest_plot_draws_five_rows(&page).await?;
    let table = the_table_says_what_the_api_says(&page).await?;
    the_confounders_name_what_else_differs(&page).await?;
    long_prefill_names_its_dropped_pairs(&page, &table).await?;
    the_exports_are_named_for_the_view(&page).await?;
    the_link_reopens_the_comparison(&page, &table).await?;
    including_the_exclusions_gives_back_the_pairs(&page).await?;
    a_pair_opens_its_cells_in_the_inspector(&page).await?;
    compare_these_opens_from_the_curves(&page).await?;
    hand_edited_links_are_explained(&page).await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// Opens the Compare tab, chooses vllm against sglang and narrows the phase to scaling.
async fn open_the_scaling_comparison(page: &Harness) -> anyhow::Result<()> {
    page.open("/").await?;
    page.wait_for("button.tab[data-view=compare]").await?;
    page.click("button.tab[data-view=compare]").await?;
    page.wait_for("#compare-by").await?;
    // Backend is the default contrast; the sides are chosen explicitly, then the phase is narrowed to scaling.
    assert!(page.eval::<bool>(&choose("#compare-by", "backend")).await?);
    assert!(page.eval::<bool>(&choose("#compare-a", "vllm")).await?);
    page.until("location.search.includes('a=vllm')").await?;
    assert!(page.eval::<bool>(&choose("#compare-b", "sglang")).await?);
    page.until("location.search.includes('b=sglang')").await?;
    page.click("details.filter[data-dimension=phase] summary")
        .await?;
    page.click("details.filter[data-dimension=phase] input[data-value=scaling]")
        .await?;
    page.until("location.search.includes('phase=scaling')")
        .await?;
    page.until("document.querySelectorAll('#compare-table tbody tr').length === 5")
        .await?;
    page.wait_for_attr("#forest-canvas", "data-drawn", "true")
        .await?;
    Ok(())
}

/// The forest plot's five rows, each marker drawn where the page says it is.
async fn the_forest_plot_draws_five_rows(page: &Harness) -> anyhow::Result<()> {
    // Five rows in the forest plot, each with its marker drawn where the page says it is.
    let rows: String = page
        .eval("document.querySelector('#forest-canvas').dataset.rows")
        .await?;
    let rows: Vec<(String, f64, f64)> = rows
        .split(';')
        .map(|row| {
            let parts: Vec<&str> = row.split(',').collect();
            Ok((parts[0].to_string(), parts[1].parse()?, parts[2].parse()?))
        })
        .collect::<anyhow::Result<_>>()?;
    let groups: Vec<&str> = rows.iter().map(|row| row.0.as_str()).collect();
    assert_eq!(
        groups,
        [
            "balanced_2k",
            "long_decode",
            "long_prefill_8k",
            "repeated_prefix",
            "short_decode"
        ]
    );
    for (group, x, y) in &rows {
        let pixels = coloured_around(page, "#forest-canvas", *x, *y).await?;
        assert!(
            pixels > 20,
            "{group}: only {pixels} coloured pixels at its marker"
        );
    }
    // Rows are drawn top to bottom, one apart.
    assert!(
        rows.windows(2).all(|pair| pair[1].2 > pair[0].2 + 10.0),
        "{rows:?}"
    );
    Ok(())
}

/// The table against /api/compare; returns its rows.
async fn the_table_says_what_the_api_says(page: &Harness) -> anyhow::Result<Vec<TableRow>> {
    // The table says what /api/compare says for the same parameters.
    let link: String = page.eval("location.search").await?;
    assert!(
        link.contains(
            "view=compare&by=backend&a=vllm&b=sglang&per=workload&metric=efficiency&alpha=0.05"
        ),
        "{link}"
    );
    let api: serde_json::Value = page
        .get(
            "/api/compare?by=backend&a=vllm&b=sglang&per=workload&metric=efficiency&phase=scaling",
        )?
        .json()?;
    let table = table_rows(page).await?;
    let groups = api["groups"]
        .as_array()
        .ok_or_else(|| anyhow::anyhow!("no groups in {api}"))?;
    assert_eq!(table.len(), groups.len());
    for ((group, pairs, verdict, dropped), expected) in table.iter().zip(groups) {
        assert_eq!(
            Some(group.as_str()),
            expected["group"].as_str(),
            "{expected}"
        );
        assert_eq!(
            u64::from(*pairs),
            expected["n_pairs"].as_u64().unwrap_or(0),
            "{group}"
        );
        assert_eq!(
            Some(verdict.as_str()),
            expected["verdict"].as_str(),
            "{group}"
        );
        let api_dropped = expected["dropped"].as_array().map_or(0, Vec::len);
        assert_eq!(*dropped as usize, api_dropped, "{group}");
    }
    let mean_text = page
        .text("#compare-table tr[data-group=long_prefill_8k] td:nth-child(3)")
        .await?;
    let api_mean = groups
        .iter()
        .find(|group| group["group"] == "long_prefill_8k")
        .and_then(|group| group["mean_delta"].as_f64())
        .ok_or_else(|| anyhow::anyhow!("no long_prefill_8k mean in {api}"))?;
    assert_eq!(mean_text, format!("{api_mean:+.4}"));
    Ok(table)
}

/// The confounders above the table.
async fn the_confounders_name_what_else_differs(page: &Harness) -> anyhow::Result<()> {
    // What else differs: the drivers, torch and the backends' versions, each with its runs; the GPU is the same.
    // The refill run's context override is not among them: the ledger leaves its cells out of this comparison.
    let confounders = page.text("#compare-confounders").await?;
    assert!(!confounders.contains("11264"), "{confounders}");
    for expected in [
        "What else differs between vllm and sglang",
        "580.159",
        "575.57",
        "0.10.2",
        "0.5.12.post1",
    ] {
        assert!(
            confounders.contains(expected),
            "{expected} missing: {confounders}"
        );
    }
    let equal = page.text("#confounders-equal summary").await?;
    assert!(equal.ends_with("equal on both sides"), "{equal}");
    assert!(
        !page
            .text("#compare-confounders > table")
            .await?
            .contains("A100"),
        "the shared GPU is counted, not listed"
    );
    Ok(())
}

/// long_prefill_8k's dropped pairs, then the view's screenshots.
async fn long_prefill_names_its_dropped_pairs(
    page: &Harness,
    table: &[TableRow],
) -> anyhow::Result<()> {
    // long_prefill_8k: 20 pairs, the 5 Mistral pairs named with the ledger entry that drops them.
    let long_prefill = table
        .iter()
        .find(|row| row.0 == "long_prefill_8k")
        .ok_or_else(|| anyhow::anyhow!("no long_prefill_8k row"))?;
    assert_eq!((long_prefill.1, long_prefill.3), (20, 5));
    let dropped = page
        .text("#compare-table tr[data-group=long_prefill_8k] td.dropped")
        .await?;
    assert!(dropped.contains("5 dropped"), "{dropped}");
    let lines: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('#compare-table tr[data-group=long_prefill_8k] td.dropped li')).map(li => li.textContent)")
        .await?;
    assert_eq!(lines.len(), 5, "{lines:?}");
    let mut ns: Vec<u32> = Vec::new();
    for line in &lines {
        assert!(
            line.contains("model=mistral-7b")
                && line.contains("excluded by the ledger (")
                && line.ends_with("on both sides"),
            "{line}"
        );
        let n = line
            .split_whitespace()
            .find_map(|word| word.strip_prefix("n="))
            .and_then(|n| n.trim_end_matches(':').parse().ok())
            .ok_or_else(|| anyhow::anyhow!("no N in {line}"))?;
        ns.push(n);
    }
    ns.sort_unstable();
    assert_eq!(ns, [2, 4, 8, 16, 32], "{lines:?}");
    // Close the phase picker so the screenshot shows the view.
    page.click("details.filter[data-dimension=phase] summary")
        .await?;
    page.screenshot("view-compare").await?;
    page.eval::<bool>(
        "(() => { document.querySelector('#compare-area').scrollIntoView(); return true; })()",
    )
    .await?;
    page.screenshot("view-compare-forest").await?;
    Ok(())
}

/// The table and forest plot exports.
async fn the_exports_are_named_for_the_view(page: &Harness) -> anyhow::Result<()> {
    // Exports: the table as CSV under the view in words, the forest plot as PNG and SVG, named for the view.
    page.capture_downloads().await?;
    page.click("#export-compare-csv").await?;
    page.until("window.__blobs.length === 1").await?;
    let csv: String = page.eval_async("window.__blobs[0].text()").await?;
    assert!(
        csv.starts_with(
            "# cellscope compare: parallel efficiency, vllm − sglang by backend, per workload"
        ),
        "{csv}"
    );
    let rows: Vec<&str> = csv.lines().filter(|line| !line.starts_with('#')).collect();
    assert_eq!(rows.len(), 6, "{csv}");
    assert!(rows[0].starts_with("workload,n_pairs,mean_delta,"), "{csv}");
    let long_prefill_row = rows
        .iter()
        .find(|row| row.starts_with("long_prefill_8k,20,"))
        .ok_or_else(|| anyhow::anyhow!("no long_prefill_8k row of 20 pairs: {csv}"))?;
    assert!(long_prefill_row.contains("vllm edge"), "{long_prefill_row}");
    assert_figures_read_as_numbers(&csv)?;
    // Kept beside the screenshots, to read with other tools.
    let kept = cellscope_e2e::Config::from_env()?.screenshots;
    std::fs::create_dir_all(&kept)?;
    std::fs::write(kept.join("compare-table.csv"), &csv)?;
    page.click("#export-svg").await?;
    page.until("window.__blobs.length === 2").await?;
    let svg: String = page.eval_async("window.__blobs[1].text()").await?;
    for text in [
        "long_prefill_8k · 20 pairs",
        "vllm edge (higher parallel efficiency)",
        "cellscope compare",
    ] {
        assert!(svg.contains(text), "{text} missing from the SVG");
    }
    page.click("#export-png").await?;
    page.until("window.__names.length === 3").await?;
    let names: Vec<String> = page.eval("window.__names").await?;
    assert!(
        names[0].starts_with("cellscope-compare-efficiency-") && names[0].ends_with(".csv"),
        "{names:?}"
    );
    assert!(
        names[1].ends_with(".svg") && names[2].ends_with(".png"),
        "{names:?}"
    );
    Ok(())
}

/// The figure columns of a Compare table CSV, which a reader such as pandas types as floats.
const FIGURE_COLUMNS: [&str; 9] = [
    "mean_delta",
    "median_delta",
    "ci_low",
    "ci_high",
    "wilcoxon_statistic",
    "p_value",
    "holm_p",
    "rank_biserial",
    "ratio_a_to_b",
];

/// The Compare table CSV read as pandas reads it (`#` lines are comments, RFC 4180 quoting): every field of a
/// figure column is empty or a float literal (a point, an exponent, `inf` or `NaN`: pandas types a column of
/// whole numbers as integers), so each column is typed float, and some Δ or interval end is negative, so a
/// negative figure was read as a number, not as text.
fn assert_figures_read_as_numbers(csv: &str) -> anyhow::Result<()> {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_reader(csv.as_bytes());
    let header = reader.headers()?.clone();
    let mut negative = 0;
    let mut rows = 0;
    for record in reader.records() {
        let record = record?;
        rows += 1;
        for column in FIGURE_COLUMNS {
            let index = header
                .iter()
                .position(|name| name == column)
                .ok_or_else(|| anyhow::anyhow!("no column {column} in {header:?}"))?;
            let field = &record[index];
            if field.is_empty() {
                continue;
            }
            let value: f64 = field
                .parse()
                .map_err(|_| anyhow::anyhow!("{column} = {field:?} is not a number: {csv}"))?;
            assert!(
                field.contains(['.', 'e']) || field.ends_with("inf") || field == "NaN",
                "{column} = {field:?} would be read as a whole number"
            );
            if value < 0.0 && ["mean_delta", "median_delta", "ci_low", "ci_high"].contains(&column)
            {
                negative += 1;
            }
        }
    }
    assert!(rows > 0, "{csv}");
    assert!(negative > 0, "no negative Δ to read back: {csv}");
    Ok(())
}

/// The link's round trip.
async fn the_link_reopens_the_comparison(page: &Harness, table: &[TableRow]) -> anyhow::Result<()> {
    // The link reopens exactly this comparison: a fresh load of the app from it alone.
    let href: String = page.eval("location.pathname + location.search").await?;
    page.open("/").await?;
    page.wait_for("#matrix-area, .matrix, #app").await?;
    page.open(&href).await?;
    page.until("document.querySelectorAll('#compare-table tbody tr').length === 5")
        .await?;
    assert_eq!(table_rows(page).await?, table);
    let reopened: String = page.eval("location.pathname + location.search").await?;
    assert_eq!(reopened, href);
    Ok(())
}

/// "include excluded", and the refill run it brings in.
async fn including_the_exclusions_gives_back_the_pairs(page: &Harness) -> anyhow::Result<()> {
    // Putting the ledger's exclusions back gives long_prefill_8k its 25 pairs.
    page.click("input[data-include=excluded]").await?;
    page.wait_for_attr(
        "#compare-table tr[data-group=long_prefill_8k]",
        "data-pairs",
        "25",
    )
    .await?;
    assert!(
        page.eval::<String>("location.search")
            .await?
            .contains("include=excluded")
    );
    // Now the refilled Mistral cells are compared, and the refill run's context override is named with its run.
    page.until("document.querySelector('#compare-confounders').textContent.includes('11264')")
        .await?;
    let confounders = page.text("#compare-confounders").await?;
    assert!(
        confounders.contains("20260613_055519_963364"),
        "{confounders}"
    );
    Ok(())
}

/// A pair clicked in the paired view.
async fn a_pair_opens_its_cells_in_the_inspector(page: &Harness) -> anyhow::Result<()> {
    // A pair of the paired view opens its cells in the Inspector.
    page.wait_for_attr("#paired-canvas", "data-drawn", "true")
        .await?;
    let points: String = page
        .eval("document.querySelector('#paired-canvas').dataset.points")
        .await?;
    assert_eq!(
        points.split(';').count(),
        5 * 25,
        "every pair of the five groups is drawn"
    );
    let first: Vec<f64> = points
        .split(';')
        .next()
        .unwrap_or_default()
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    assert_eq!(first[2], 6.0, "a pair holds each side's 3 reps");
    page.wait_for_details().await?;
    page.eval::<bool>(&format!(
        "(() => {{ const c = document.querySelector('#paired-canvas'); const r = c.getBoundingClientRect(); \
         c.dispatchEvent(new MouseEvent('click', {{ clientX: r.left + {}, clientY: r.top + {}, bubbles: true }})); \
         return true; }})()",
        first[0], first[1]
    ))
    .await?;
    page.wait_for("#pair-cells").await?;
    let cells = page.text("#pair-cells").await?;
    assert!(cells.contains("This pair pools 6 cells"), "{cells}");
    page.click("#pair-cells li a").await?;
    page.until("location.search.includes('view=inspector') && location.search.includes('cell=')")
        .await?;
    Ok(())
}

/// "compare these" from the Curves.
async fn compare_these_opens_from_the_curves(page: &Harness) -> anyhow::Result<()> {
    // "compare these" from the Curves: its colour dimension becomes the contrast, its facet the groups.
    page.open("/?view=curves&backend=vllm,sglang&phase=scaling&color=backend&facet=workload")
        .await?;
    page.wait_for("#compare-these").await?;
    page.click("#compare-these").await?;
    page.until("document.querySelectorAll('#compare-table tbody tr').length === 5")
        .await?;
    let link: String = page.eval("location.search").await?;
    assert!(
        link.contains("view=compare&by=backend&a=vllm&b=sglang&per=workload"),
        "{link}"
    );
    Ok(())
}

/// Hand-edited links with a bad side or an uncontrastable dimension.
async fn hand_edited_links_are_explained(page: &Harness) -> anyhow::Result<()> {
    // Hand-edited links: a side absent from the data is named with the values there are; a dimension that cannot
    // be contrasted is set aside and listed in the notice, and the default contrast is shown.
    page.open("/?view=compare&by=backend&a=vllm&b=tgi").await?;
    page.wait_for("#compare-error").await?;
    let error = page.text("#compare-error").await?;
    assert!(
        error.contains("`b` = `tgi` is not a backend in the data")
            && error.contains("pytorch_direct, sglang, vllm"),
        "{error}"
    );
    page.open("/?view=compare&by=n&a=vllm&b=sglang").await?;
    page.wait_for("#ignored-notice li[data-parameter=by]")
        .await?;
    page.until("document.querySelectorAll('#compare-table tbody tr').length === 5")
        .await?;
    Ok(())
}

/// Each label of the exported forest SVG with the y of its row and whether a two-pixel horizontal interval
/// lies on that row: `[label, label y, interval found]`.
const SVG_ROWS: &str = "(async () => { const text = await window.__blobs[window.__blobs.length - 1].text(); \
     const svg = new DOMParser().parseFromString(text, 'image/svg+xml'); \
     const lines = Array.from(svg.querySelectorAll('polyline')).map(p => p.getAttribute('points').trim().split(/\\s+/) \
       .map(xy => xy.split(',').map(Number))).filter(p => p.length === 2 && p[0][1] === p[1][1] && p[0][0] !== p[1][0]); \
     const height = Number(svg.documentElement.getAttribute('height')); \
     return Array.from(svg.querySelectorAll('text')).filter(t => / · \\d+ pairs$/.test(t.textContent.trim())) \
       .map(t => { const y = Number(t.getAttribute('y')); \
         return [t.textContent.trim(), y, y > 0 && y < height && lines.some(l => Math.abs(l[0][1] - y) <= 1)]; }); })()";

#[tokio::test]
async fn the_default_comparison_pairs_each_configuration_once_and_its_export_keeps_rows_and_colours()
-> anyhow::Result<()> {
    let page = Harness::start("compare-default").await?;
    // No phase filter: the view's default, and what "compare these" opens.
    page.open("/?view=compare&a=vllm&b=sglang").await?;
    page.until("document.querySelectorAll('#compare-table tbody tr').length === 5")
        .await?;
    assert_eq!(
        page.text("#compare-pairing").await?,
        "each pair: mean of phase scaling, ttft × rep 0, 1, 2 per side"
    );
    let pairs: Vec<(String, u32)> = table_rows(&page)
        .await?
        .into_iter()
        .map(|(group, pairs, ..)| (group, pairs))
        .collect();
    for (group, count) in &pairs {
        let expected = if group == "long_prefill_8k" { 20 } else { 25 };
        assert_eq!(*count, expected, "{group}: one pair per (model, N)");
    }

    // The exported SVG draws each group's interval on its label's row, inside the image.
    page.wait_for_attr("#forest-canvas", "data-drawn", "true")
        .await?;
    page.capture_downloads().await?;
    page.click("#export-svg").await?;
    page.until("window.__blobs.length === 1").await?;
    let rows: Vec<(String, f64, bool)> = page.eval_async(SVG_ROWS).await?;
    assert_eq!(rows.len(), 5, "{rows:?}");
    assert!(rows.iter().all(|(.., on_row)| *on_row), "{rows:?}");
    // The PNG export is the same drawing on a canvas: a real PNG, kept beside the screenshots to look at.
    page.click("#export-png").await?;
    page.until("window.__names.length === 2").await?;
    let png = page.save_download(1, "compare-export.png").await?;
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");

    // A value keeps its colour when the sides are swapped.
    let verdict_colour = "getComputedStyle(document.querySelector(\
        '#compare-table tr[data-group=long_prefill_8k] td.verdict')).color";
    let before: String = page.eval(verdict_colour).await?;
    assert!(
        page.text("#compare-table tr[data-group=long_prefill_8k] td.verdict")
            .await?
            .starts_with("vllm edge")
    );
    page.click("#compare-swap").await?;
    page.until("location.search.includes('a=sglang')").await?;
    page.wait_for_attr(
        "#compare-table tr[data-group=long_prefill_8k]",
        "data-verdict",
        "b_edge",
    )
    .await?;
    let after: String = page.eval(verdict_colour).await?;
    assert_eq!(before, after, "vllm's edge keeps vllm's colour");
    page.screenshot("view-compare-default").await?;

    // One model: five pairs a group, which cannot reach p < 0.05 whatever their values.
    page.open("/?view=compare&a=vllm&b=sglang&phase=scaling&model=llama3.1-8b")
        .await?;
    page.until("document.querySelectorAll('#compare-table tbody tr').length === 5")
        .await?;
    let verdicts: Vec<String> = page
        .eval("Array.from(document.querySelectorAll('#compare-table td.verdict')).map(td => td.textContent)")
        .await?;
    assert!(
        verdicts.iter().all(|verdict| verdict
            == "too few pairs to claim a difference (smallest attainable p = 0.0625)"),
        "{verdicts:?}"
    );

    // A side in the wrong case: the value meant is named, and no empty chart frames are shown.
    page.open("/?view=compare&a=VLLM&b=sglang").await?;
    page.wait_for("#compare-error").await?;
    let error = page.text("#compare-error").await?;
    assert!(error.contains("did you mean `vllm`?"), "{error}");
    assert!(
        page.eval::<bool>("document.querySelector('#compare-area').offsetParent === null")
            .await?,
        "the chart frames are hidden"
    );
    // The picker shows the side as the link chose it, marked, and nothing can be exported.
    let picked: String = page
        .eval("(() => { const s = document.querySelector('#compare-a'); return s.options[s.selectedIndex].text; })()")
        .await?;
    assert_eq!(picked, "VLLM (not in the data)");
    assert!(
        page.eval::<bool>("['#export-compare-csv', '#export-png', '#export-svg'].every(id => document.querySelector(id).disabled)")
            .await?
    );
    Ok(())
}

/// The exported PNG at 800 px: the header's long lines (the link above all) wrap inside the image, so no text
/// reaches its right edge, and the image grows to hold them.
#[tokio::test]
async fn a_png_export_wraps_its_header_inside_the_image() -> anyhow::Result<()> {
    let page = Harness::start("compare-png-header").await?;
    page.client().set_window_size(800, 900).await?;
    page.open("/?view=compare&a=vllm&b=sglang&metric=p95_wall_ms&model=llama3.1-8b,mistral-7b,phi-4,qwen2.5-7b,qwen2.5-14b&include=excluded")
        .await?;
    page.wait_for_attr("#forest-canvas", "data-drawn", "true")
        .await?;
    page.capture_downloads().await?;
    page.click("#export-png").await?;
    page.until("window.__names.length === 1").await?;
    let png = page.save_download(0, "compare-export-800.png").await?;
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    // The image decoded in the page: its size, and the dark (text) pixels in its rightmost 6 columns.
    let (width, height, at_edge): (u32, u32, u32) = page
        .eval_async(
            "(async () => { const image = new Image(); image.src = window.__hrefs[0]; await image.decode(); \
             const canvas = document.createElement('canvas'); canvas.width = image.width; canvas.height = image.height; \
             const context = canvas.getContext('2d'); context.drawImage(image, 0, 0); \
             const scale = image.width / 800; const strip = Math.round(6 * scale); \
             const data = context.getImageData(image.width - strip, 0, strip, image.height).data; let dark = 0; \
             for (let i = 0; i < data.length; i += 4) if (data[i] < 110 && data[i + 1] < 110 && data[i + 2] < 110) dark += 1; \
             return [image.width, image.height, dark]; })()",
        )
        .await?;
    assert!(width >= 700, "{width} px wide");
    assert_eq!(
        at_edge, 0,
        "text reaches the right edge of the {width} × {height} image"
    );
    // Seven lines (view, filters, method, cells, snapshot, link, pairing) one line each would make the image
    // 8 + 7 × 16 + 22 px above a forest plot of five rows (90 + 5 × 36): wrapped, they take more.
    let scale = f64::from(width)
        / page
            .eval::<f64>("document.querySelector('#forest-canvas').getBoundingClientRect().width")
            .await?;
    let css_height = f64::from(height) / scale;
    assert!(
        css_height > 142.0 + 270.0 + 16.0,
        "{css_height} px tall: the header did not wrap"
    );
    page.assert_no_console_errors().await?;
    page.close().await
}

//! The Audit page's runs section in a real browser over the demo data: what `cellscope audit` prints per run
//! (census, checksums, backup comparison) and the REFILL_NOTE claims checked against the files, mismatches
//! flagged; a screenshot under `target/screenshots/`.

use cellscope_e2e::Harness;

const MASTER: &str = "20260612_212816_266127";

#[tokio::test]
async fn the_audit_runs_section_shows_checksums_the_backup_comparison_and_flags_the_note_hashes()
-> anyhow::Result<()> {
    let page = Harness::start("audit-runs").await?;
    page.open("/?view=audit").await?;
    let block = format!("#run-{MASTER}");
    page.wait_for(&block).await?;
    // The md5 the server computed, once the second indexing stage is in (the page asks again until it is).
    let mut md5 = None;
    for _ in 0..100 {
        let index = page.get("/api/index")?.json()?;
        if index["complete"] == true {
            md5 = index["runs"]
                .as_array()
                .and_then(|runs| runs.iter().find(|run| run["run_id"] == MASTER))
                .and_then(|run| run["metrics"]["md5"].as_str())
                .map(str::to_string);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let md5 = md5.ok_or_else(|| anyhow::anyhow!("the index never had the master's md5"))?;
    let metrics = format!("{block} dd[data-line='metrics'] code.hash");
    page.wait_for_text(&metrics, &md5).await?;

    let backup = page
        .text(&format!("{block} dd[data-line='backup']"))
        .await?;
    assert!(
        backup
            .contains("3,780 rows replaced (were http_400 3,780) · only non-ok rows were replaced"),
        "{backup}"
    );
    assert!(
        backup.contains(&format!("{MASTER}_BACKUP_preRefill")),
        "{backup}"
    );

    // The note's md5 prefixes are the documented TR164 values, not what this tree's files hash to: flagged.
    let mismatch = format!("{block} .note-claim[data-verdict='mismatch']");
    page.until(&format!(
        "document.querySelectorAll({mismatch:?}).length === 2"
    ))
    .await?;
    let flagged: Vec<String> = page
        .eval(&format!(
            "[...document.querySelectorAll({mismatch:?})].map((claim) => claim.textContent)"
        ))
        .await?;
    assert!(
        flagged[0].contains("md5 of the original master's metrics.csv: 5fd15755... — MISMATCH"),
        "{flagged:?}"
    );
    assert!(
        flagged[1].contains("md5 of the refill run's metrics.csv: e0400837... — MISMATCH"),
        "{flagged:?}"
    );
    assert_eq!(
        page.count(&format!("{block} .note-claim.claim-mismatch"))
            .await?,
        2
    );
    // The row counts match the backup comparison and the refill run.
    let matching: Vec<String> = page
        .eval(&format!(
            "[...document.querySelectorAll(\"{block} .note-claim[data-verdict='matches']\")].map((claim) => claim.textContent)"
        ))
        .await?;
    assert!(
        matching.contains(
            &"note line 22: http_400 rows replaced: 3,780 — matches (the backup comparison: 3,780)"
                .to_string()
        ),
        "{matching:?}"
    );
    assert_eq!(matching.len(), 6, "{matching:?}");
    assert_eq!(
        page.count(&format!("{block} .note-claim[data-verdict='not_recorded']"))
            .await?,
        1
    );
    // The refill run says what it is; every run has a block.
    let refill_role = page.text("#run-20260613_055519_963364 .run-role").await?;
    assert!(
        refill_role.contains(&format!("refill run spliced into {MASTER}")),
        "{refill_role}"
    );
    assert_eq!(page.count("#audit-runs .audit-run").await?, 4);

    // The note, opened, marks the lines whose claims do not hold.
    page.click(&format!("{block} .refill-note summary")).await?;
    assert_eq!(
        page.count(&format!("{block} .note-source .note-line.claim-mismatch"))
            .await?,
        2
    );
    page.eval::<bool>(&format!(
        "(document.querySelector({block:?}).scrollIntoView(), true)"
    ))
    .await?;
    page.screenshot("view-audit-runs").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// The warnings of `/api/index` (the indexer's), read apart from the app.
fn indexer_warnings(page: &Harness) -> anyhow::Result<u64> {
    for _ in 0..100 {
        let index = page.get("/api/index")?.json()?;
        if index["complete"] == true {
            return index["warnings"]
                .as_array()
                .map(|warnings| warnings.len() as u64)
                .ok_or_else(|| anyhow::anyhow!("no warnings list"));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    anyhow::bail!("the index never completed")
}

#[tokio::test]
async fn the_note_mismatches_are_warnings_and_the_problem_list_is_grouped_by_run_and_status()
-> anyhow::Result<()> {
    let page = Harness::start("audit-grouped").await?;
    page.open("/?view=audit").await?;
    page.wait_for(&format!("#run-{MASTER}")).await?;
    page.wait_for_details().await?;
    // The demo note's two md5 prefixes are the documented TR164 values, not this tree's: two more warnings than
    // the indexer's, in the header and in the master's block.
    let expected = indexer_warnings(&page)? + 2;
    page.wait_for_text("#warnings-link", &format!("{expected} warnings"))
        .await?;
    let block = format!("#run-{MASTER} dd[data-line='warnings']");
    page.until(&format!(
        "[...document.querySelectorAll(\"{block} li\")].filter((li) => li.textContent.includes('refill_note_mismatch')).length === 2"
    ))
    .await?;
    assert_eq!(
        page.count("#warnings-list li").await?,
        expected,
        "the list under Warnings holds what the header counts"
    );

    // Every row sits under the heading of its run and status, and each heading counts the rows under it.
    let groups: Vec<(String, String, String, u64)> = page
        .eval(
            "(() => { const out = []; let group = null; \
             for (const tr of document.querySelectorAll('#audit-table tbody tr')) { \
               if (tr.classList.contains('audit-group')) { group = [tr.dataset.groupRun, tr.dataset.groupStatus, tr.dataset.cells, 0]; out.push(group); } \
               else { if (!group || !tr.dataset.cell.startsWith(group[0] + '/') || tr.dataset.status !== group[1]) return [['misplaced', tr.dataset.cell, '', 0]]; group[3]++; } } \
             return out; })()",
        )
        .await?;
    assert!(groups.len() > 2, "{groups:?}");
    for (run, status, cells, counted) in &groups {
        assert_eq!(cells, &counted.to_string(), "{run} {status}");
    }
    let v1_skipped = groups
        .iter()
        .find(|(run, status, _, _)| run == "20260531_120428_552237" && status == "skipped");
    assert_eq!(v1_skipped.map(|group| group.3), Some(14), "{groups:?}");
    let pairs: std::collections::BTreeSet<(&str, &str)> = groups
        .iter()
        .map(|(run, status, _, _)| (run.as_str(), status.as_str()))
        .collect();
    assert_eq!(pairs.len(), groups.len(), "one heading per run and status");

    // The ledger's selector in words, and what `comparison` means said where it appears.
    let selects = page
        .text("#ledger-table tr[data-ledger='mistral-long-prefill-tokenizer'] td.selects")
        .await?;
    assert_eq!(selects, "model = mistral-7b and workload = long_prefill_8k");
    let meaning = page.text(".scope-meaning[data-scope='comparison']").await?;
    assert!(
        meaning.contains("left out on every side") && meaning.contains("single backend"),
        "{meaning}"
    );
    page.assert_no_console_errors().await?;
    page.close().await
}

#[tokio::test]
async fn searching_the_audit_for_http_400_finds_the_cells_whose_rows_failed_so()
-> anyhow::Result<()> {
    let page = Harness::start("audit-http-400").await?;
    page.open("/?view=audit&q=http_400").await?;
    page.wait_for_details().await?;
    // The demo's SGLang Mistral long_prefill_8k cells: 3,780 http_400 rows over 36 cells before the refill
    // (6 N × 3 reps × 2 phases), and no other cell had one.
    page.until("document.querySelectorAll('#audit-table tbody tr[data-cell]').length === 36")
        .await?;
    assert_eq!(
        page.count("#audit-table tbody tr[data-cell*='/sglang/mistral-7b/long_prefill_8k/']")
            .await?,
        36
    );
    let evidence = page
        .text("#audit-table tbody tr[data-cell] td:nth-child(5)")
        .await?;
    assert!(
        evidence.contains("before the refill: http_400"),
        "{evidence}"
    );
    page.assert_no_console_errors().await?;
    page.close().await
}

/// The audit of the mixed demo, whose other tools' files rarely say how many requests a cell expects: each run's
/// rows line sets rows against an expected count only where some cell has one, and says whose count it is when
/// other cells of the run have rows too; the counts come from `/api/index`'s census.
#[tokio::test]
async fn a_runs_rows_line_states_expected_rows_only_where_a_cell_expects_any() -> anyhow::Result<()>
{
    let mixed = cellscope_e2e::Config::from_env()?.mixed_root()?;
    let page = Harness::start_on("audit-census", &mixed).await?;
    page.open("/?view=audit").await?;
    page.wait_for("#audit-runs .audit-run dd[data-line=rows]")
        .await?;
    let index = page.get("/api/index")?.json()?;
    let lines: std::collections::BTreeMap<String, String> = page
        .eval(
            "Object.fromEntries(Array.from(document.querySelectorAll('#audit-runs .audit-run')) \
             .map(run => [run.dataset.run, (run.querySelector('dd[data-line=rows]') || {}).textContent || '']))",
        )
        .await?;
    let (mut without, mut part) = (0, 0);
    for run in index["runs"].as_array().cloned().unwrap_or_default() {
        let id = run["run_id"].as_str().unwrap_or_default();
        let Some(line) = lines.get(id) else { continue };
        let census = &run["census"];
        let (rows, expected, observed) = (
            census["rows"].as_u64().unwrap_or(0),
            census["expected_rows"].as_u64().unwrap_or(0),
            census["observed_rows"].as_u64().unwrap_or(0),
        );
        assert!(!line.contains("expected 0 / observed 0"), "{id}: {line}");
        if expected == 0 && observed == 0 {
            without += 1;
            assert!(!line.contains("expected"), "{id}: {line}");
        } else if observed < rows {
            part += 1;
            assert!(
                line.contains("(cells with an expected count)"),
                "{id}: {line}"
            );
        }
    }
    assert!(
        without > 0 && part > 0,
        "the mixed demo has runs of both kinds"
    );
    page.screenshot("audit-census-lines").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

/// The runs table shows each run's start as its manifest records it and sorts by it both ways. The times are
/// the demo manifests' `started_at` (`data/demo/tr164-*/<run>/manifest.json`), read by hand: the master's is
/// `2026-06-12T21:31:42+00:00`, and the V1 run's `2026-05-31T12:04:28-04:00` is 16:04 UTC.
#[tokio::test]
async fn the_runs_table_shows_each_runs_recorded_start_and_sorts_by_it() -> anyhow::Result<()> {
    let page = Harness::start("audit-started").await?;
    page.open("/?view=audit").await?;
    let master = format!("#runs-table tr[data-run='{MASTER}'] td.run-started");
    page.wait_for_text(&master, "2026-06-12 21:31 UTC").await?;
    let title: String = page
        .eval(&format!("document.querySelector({master:?}).title"))
        .await?;
    assert!(
        title.contains(&format!("tr164-v3/{MASTER}/manifest.json (started_at)")),
        "{title}"
    );
    let order =
        "[...document.querySelectorAll('#runs-table tbody tr')].map((row) => row.dataset.run)";
    let first = "document.querySelector('#runs-table tbody tr').dataset.run";
    page.click("#runs-table button.sort[data-column='started']")
        .await?;
    page.until(&format!("{first} === '20260531_120428_552237'"))
        .await?;
    let ascending: Vec<String> = page.eval(order).await?;
    assert_eq!(
        ascending,
        [
            "20260531_120428_552237",
            "20260612_204254_036590",
            MASTER,
            "20260613_055519_963364"
        ]
    );
    let v1: String = page
        .text("#runs-table tr[data-run='20260531_120428_552237'] td.run-started")
        .await?;
    assert_eq!(v1.trim(), "2026-05-31 16:04 UTC");
    page.click("#runs-table button.sort[data-column='started']")
        .await?;
    page.until(&format!("{first} === '20260613_055519_963364'"))
        .await?;
    let descending: Vec<String> = page.eval(order).await?;
    assert_eq!(
        descending,
        ascending.iter().rev().cloned().collect::<Vec<_>>()
    );
    page.screenshot("audit-runs-started").await?;
    page.assert_no_console_errors().await?;
    page.close().await
}

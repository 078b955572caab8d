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

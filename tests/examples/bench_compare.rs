//! The browser side of `cargo xtask bench compare`: opens the Compare view on all cells of the served data
//! (vllm vs sglang on efficiency per workload: pairing, rep means, Wilcoxon, Holm and five 10,000-resample
//! bootstraps), then recomputes it `REPEAT` times by changing α and reads each computation's duration from the
//! page's own `performance.measure("compare")`. Writes `{"ms": [...], "cells": …}` to `OUT_JSON`.
//!
//! Usage (with the environment `cargo xtask e2e` sets): `bench_compare OUT_JSON REPEAT`.

use anyhow::Context;
use cellscope_e2e::Harness;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .context("usage: bench_compare OUT_JSON REPEAT")?;
    let repeat: usize = args
        .next()
        .context("usage: bench_compare OUT_JSON REPEAT")?
        .parse()?;
    let page = Harness::start("bench-compare").await?;
    page.open("/?view=compare&by=backend&a=vllm&b=sglang&per=workload&metric=efficiency")
        .await?;
    page.until("document.querySelectorAll('#compare-table tbody tr').length === 5")
        .await?;
    let cells: String = page.text("#cell-count").await?;
    let mut ms = Vec::with_capacity(repeat);
    for round in 0..repeat {
        let before: usize = page
            .eval("performance.getEntriesByName('compare').length")
            .await?;
        // α alternates between two values: the comparison is computed afresh each time, the pairs stay the same.
        let alpha = if round % 2 == 0 { "0.049" } else { "0.05" };
        page.eval::<bool>(&format!(
            "(() => {{ const i = document.querySelector('#compare-alpha'); i.value = '{alpha}'; \
             i.dispatchEvent(new Event('change')); return true; }})()"
        ))
        .await?;
        page.until(&format!(
            "performance.getEntriesByName('compare').length > {before}"
        ))
        .await?;
        let duration: f64 = page
            .eval("performance.getEntriesByName('compare').slice(-1)[0].duration")
            .await?;
        ms.push(duration);
    }
    let groups = page.count("#compare-table tbody tr").await?;
    std::fs::write(
        &out,
        serde_json::json!({ "ms": ms, "cells": cells, "groups": groups }).to_string(),
    )?;
    page.close().await
}

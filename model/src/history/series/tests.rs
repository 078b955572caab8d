//! Histories built from hand-made cells and runs: order by recorded time, reps as a band, exclusions, the
//! environment changes between runs, the regression rule's two arms and the JSON shape.

use super::*;
use crate::exclusions::ExclusionScope;
use crate::facts::{Census, FileDigest, RunRole, RunStart};
use crate::history::changepoint::Shift;
use crate::history::{Band, HistoryBody, Regression};
use crate::stat::Stat;
use crate::status::CellStatus;

const TTFT: Metric = Metric::Stat(Stat::P50TtftMs);

fn run(id: &str, at: Option<&str>, driver: &str) -> RunFacts {
    RunFacts {
        run_id: id.to_string(),
        path: id.to_string(),
        role: RunRole::Run,
        refill_of: None,
        copy_of: None,
        manifest_status: None,
        has_plan: false,
        census: Census::default(),
        metrics: FileDigest::default(),
        files: Vec::new(),
        refill: None,
        backups: Vec::new(),
        exclusions: BTreeMap::new(),
        suites: Vec::new(),
        environment: BTreeMap::from([(EnvironmentField::Driver, driver.to_string())]),
        inferred: Vec::new(),
        started: at.map(|at| RunStart {
            at: at.to_string(),
            source: RunStartSource::Recorded {
                file: format!("{id}/manifest.json"),
                key: "started_at".to_string(),
            },
        }),
    }
}

fn cell(run_id: &str, rep: u32, ttft_ms: f64) -> CellSummary {
    let mut cell = CellSummary::empty(
        CellKey {
            run_id: run_id.into(),
            suite: "nightly".into(),
            phase: "serve".into(),
            backend: "vllm".into(),
            model: "llama3.1-8b".into(),
            workload: "chat".into(),
            config: Config::new(),
            load: Load::Concurrency(16),
            rep,
        },
        CellStatus::Clean,
    );
    cell.stats.p50_ttft_ms = Some(ttft_ms);
    cell
}

/// Twelve nights: named so that id order and time order disagree, 100 ms for eight nights then 150 ms.
fn nights() -> (Vec<CellSummary>, Vec<RunFacts>) {
    let values = [
        100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 101.0, 99.0, 150.0, 151.0, 149.0, 150.5,
    ];
    let mut cells = Vec::new();
    let mut runs = Vec::new();
    for (night, value) in values.iter().enumerate() {
        let id = format!("night-{}", 11 - night);
        runs.push(run(
            &id,
            Some(&format!("2026-11-{:02}T02:00:00Z", night + 1)),
            "575.57",
        ));
        cells.push(cell(&id, 0, *value));
    }
    (cells, runs)
}

#[test]
fn points_follow_the_recorded_times_and_the_step_is_found_at_its_run() {
    let (cells, runs) = nights();
    let all = histories(&cells, &runs, TTFT, &HistoryChoice::default());
    assert_eq!(all.len(), 1);
    let history = &all[0];
    assert_eq!(history.label, "vllm · llama3.1-8b · chat · N=16");
    let order: Vec<&str> = history
        .points
        .iter()
        .map(|point| point.run.as_str())
        .collect();
    assert_eq!(order[..3], ["night-11", "night-10", "night-9"]);
    assert_eq!(history.points[0].time_source, Some(TimeSource::Recorded));
    let [change] = history.change_points.as_slice() else {
        panic!("one change point expected: {:?}", history.change_points);
    };
    assert_eq!((change.index, change.run.as_str()), (8, "night-3"));
    assert_eq!(change.direction, Some(Shift::Regression));
    let before = (100.0 + 101.0 + 99.0 + 100.5 + 99.5 + 100.0 + 101.0 + 99.0) / 8.0;
    let after = (150.0 + 151.0 + 149.0 + 150.5) / 4.0;
    assert!((change.mean_before - before).abs() < 1e-9);
    assert!((change.mean_after - after).abs() < 1e-9);
    assert!(change.p_value <= 0.001);
    assert!(
        change
            .sentence
            .starts_with("worse by 50.1% since run night-3"),
        "{}",
        change.sentence
    );
    // The step is 4 runs from the end: within the last 10 (the default), not within the last 3.
    assert!(
        matches!(history.regression, Some(Regression::ChangePoint { ref run, .. }) if run == "night-3")
    );
    let three = HistoryChoice {
        k: 3,
        ..HistoryChoice::default()
    };
    let older = &histories(&cells, &runs, TTFT, &three)[0];
    assert!(!older.regressed, "{:?}", older.regression);
}

#[test]
fn a_latest_run_worse_than_the_band_is_flagged_with_the_band() {
    let values = [100.0, 101.0, 99.0, 100.0, 101.0, 100.0, 130.0];
    let runs: Vec<RunFacts> = (0..values.len())
        .map(|night| run(&format!("20261101_0{night}0000_000000"), None, "575.57"))
        .collect();
    let cells: Vec<CellSummary> = values
        .iter()
        .zip(&runs)
        .map(|(value, run)| cell(&run.run_id, 0, *value))
        .collect();
    // A threshold no change point passes, so only the band speaks.
    let choice = HistoryChoice {
        max_pvalue: 1e-300,
        k: 5,
        band: Band::Sd(3.0),
        ..HistoryChoice::default()
    };
    let history = &histories(&cells, &[], TTFT, &choice)[0];
    assert_eq!(
        history.points[0].time.as_deref(),
        Some("2026-11-01T00:00:00Z")
    );
    assert_eq!(history.points[0].time_source, Some(TimeSource::RunId));
    let Some(Regression::OutsideBand {
        value,
        low,
        high,
        mean,
        runs: counted,
        ..
    }) = &history.regression
    else {
        panic!("expected the band rule: {:?}", history.regression);
    };
    // numpy: x = [101, 99, 100, 101, 100]; x.mean() = 100.2, x.std(ddof=1) = 0.8366600265340756.
    assert_eq!((*value, *counted), (130.0, 5));
    assert!((mean - 100.2).abs() < 1e-12);
    assert!((high - (100.2 + 3.0 * 0.836_660_026_534_075_6)).abs() < 1e-9);
    assert!((low - (100.2 - 3.0 * 0.836_660_026_534_075_6)).abs() < 1e-9);
    // A throughput that falls is worse too; one that rises is not flagged.
    let wide = HistoryChoice {
        band: Band::Percent(50.0),
        ..choice.clone()
    };
    assert!(
        !histories(&cells, &[], TTFT, &wide)[0].regressed,
        "130 is within 50%"
    );
}

#[test]
fn reps_make_the_band_and_excluded_reps_count_as_missing() {
    let runs = vec![
        run("a", Some("2026-11-01T02:00:00Z"), "575.57"),
        run("b", Some("2026-11-02T02:00:00Z"), "580.65"),
    ];
    let mut excluded = cell("b", 0, 500.0);
    excluded.exclusion_scope = Some(ExclusionScope::All);
    let mut compared_only = cell("b", 1, 120.0);
    compared_only.exclusion_scope = Some(ExclusionScope::Comparison);
    let cells = vec![
        cell("a", 0, 100.0),
        cell("a", 1, 110.0),
        cell("a", 2, 90.0),
        excluded,
        compared_only,
    ];
    let history = &histories(&cells, &runs, TTFT, &HistoryChoice::default())[0];
    let a = &history.points[0];
    assert_eq!(
        (a.value, a.low, a.high, a.reps),
        (Some(100.0), Some(90.0), Some(110.0), 3)
    );
    let b = &history.points[1];
    assert_eq!((b.value, b.reps, b.excluded), (Some(120.0), 1, false));
    assert_eq!(b.changed.len(), 1);
    assert_eq!(b.changed[0].describe(), "driver 575.57 → 580.65");
    assert!(a.changed.is_empty());
}

#[test]
fn since_keeps_later_runs_and_drops_runs_without_a_time() {
    let (mut cells, mut runs) = nights();
    runs.push(run("undated", None, "575.57"));
    cells.push(cell("undated", 0, 100.0));
    let all = &histories(&cells, &runs, TTFT, &HistoryChoice::default())[0];
    assert_eq!(all.points.len(), 13);
    assert_eq!(
        all.points[0].run, "undated",
        "runs without a time come first"
    );
    let since = HistoryChoice {
        since: Some("2026-11-10".into()),
        ..HistoryChoice::default()
    };
    let late = &histories(&cells, &runs, TTFT, &since)[0];
    let kept: Vec<&str> = late.points.iter().map(|point| point.run.as_str()).collect();
    assert_eq!(kept, ["night-2", "night-1", "night-0"]);
}

#[test]
fn the_body_is_written_as_the_cli_documents_it() {
    let (cells, runs) = nights();
    let body = HistoryBody {
        metric: TTFT,
        choice: HistoryChoice::default(),
        series: histories(&cells, &runs, TTFT, &HistoryChoice::default()),
    };
    let json = serde_json::to_value(&body).unwrap();
    let series = &json["series"][0];
    assert_eq!(series["key"]["load"], "n=16");
    assert_eq!(series["key"]["backend"], "vllm");
    assert_eq!(series["metric"], "p50_ttft_ms");
    assert_eq!(series["points"][0]["run"], "night-11");
    assert_eq!(series["points"][0]["time"], "2026-11-01T02:00:00Z");
    assert_eq!(series["change_points"][0]["direction"], "worse");
    assert_eq!(series["regressed"], true);
    let back: HistoryBody = serde_json::from_value(json).unwrap();
    assert_eq!(back, body);
    assert_eq!(body.regressions().len(), 1);
}

//! `cellscope history` and `/api/history` on the nightly demo root, against what numpy and Apache Otava compute
//! from the same files (`model/tests/vectors/nightly_otava.py`): the same values, the change points at the
//! injected runs with Otava's p-values, none on the flat configuration, and the regression flag on the recent
//! regression only.

use crate::common;

use serde_json::Value;

fn oracle() -> Value {
    serde_json::from_str(include_str!(
        "../../../model/tests/vectors/nightly_otava.json"
    ))
    .expect("the vectors are JSON")
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

fn history(args: &[&str]) -> std::process::Output {
    let root = common::nightly_root().to_string_lossy().into_owned();
    common::cellscope_command()
        .args(["history", &root, "--no-cache"])
        .args(args)
        .output()
        .expect("cellscope runs")
}

fn json_body() -> Value {
    let output = history(&["--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON")
}

/// The computed History of an oracle series.
fn matching<'a>(body: &'a Value, want: &Value) -> &'a Value {
    let load = format!("n={}", want["n"]);
    body["series"]
        .as_array()
        .expect("series")
        .iter()
        .find(|series| {
            let key = &series["key"];
            key["backend"] == want["backend"]
                && key["model"] == want["model"]
                && key["workload"] == want["workload"]
                && key["load"] == load.as_str()
        })
        .unwrap_or_else(|| panic!("no History for {want}"))
}

#[test]
fn change_points_are_otavas_at_the_injected_runs() {
    let body = json_body();
    let oracle = oracle();
    let wanted = oracle["series"].as_array().expect("series");
    assert_eq!(body["series"].as_array().map(Vec::len), Some(wanted.len()));
    for want in wanted {
        let got = matching(&body, want);
        let runs: Vec<&str> = got["points"]
            .as_array()
            .expect("points")
            .iter()
            .map(|point| point["run"].as_str().expect("run"))
            .collect();
        let want_runs: Vec<&str> = want["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(|run| run.as_str().expect("run"))
            .collect();
        assert_eq!(runs, want_runs, "run order of {want}");
        for (point, value) in got["points"]
            .as_array()
            .expect("points")
            .iter()
            .zip(want["values"].as_array().expect("values"))
        {
            let (got_value, want_value) = (
                point["value"].as_f64().expect("value"),
                value.as_f64().expect("value"),
            );
            assert!(
                close(got_value, want_value),
                "{} {got_value} vs numpy {want_value}",
                point["run"]
            );
        }
        let got_changes = got["change_points"].as_array().expect("change points");
        let want_changes = want["change_points"].as_array().expect("change points");
        assert_eq!(
            got_changes.len(),
            want_changes.len(),
            "{}: {got_changes:?}",
            got["label"]
        );
        for (got_change, want_change) in got_changes.iter().zip(want_changes) {
            assert_eq!(got_change["run"], want_change["run"]);
            for figure in ["p_value", "mean_before", "mean_after"] {
                let (a, b) = (
                    got_change[figure].as_f64().expect("figure"),
                    want_change[figure].as_f64().expect("figure"),
                );
                assert!(
                    close(a, b),
                    "{} {figure}: {a:e} vs Otava {b:e}",
                    got["label"]
                );
            }
            assert_eq!(got_change["direction"], "worse");
        }
    }
    // The engine upgrade before night 12 and the recent step from night 28 are where Otava finds them; the flat
    // configuration has none.
    let change_runs: Vec<(String, usize)> = wanted
        .iter()
        .flat_map(|want| {
            want["change_points"]
                .as_array()
                .expect("change points")
                .iter()
                .map(move |change| {
                    (
                        format!("{} {}", want["backend"], want["model"]),
                        change["index"].as_u64().expect("index") as usize,
                    )
                })
        })
        .collect();
    let upgrade = cellscope_demo::ENGINE_UPGRADE_NIGHT as usize - 1;
    let recent = cellscope_demo::RECENT_REGRESSION_NIGHT as usize - 1;
    assert_eq!(
        change_runs,
        [
            ("\"sglang\" \"llama3.1-8b\"".to_string(), upgrade),
            ("\"sglang\" \"llama3.1-8b\"".to_string(), upgrade),
            ("\"vllm\" \"llama3.1-8b\"".to_string(), recent),
            ("\"vllm\" \"llama3.1-8b\"".to_string(), recent),
        ]
    );
}

#[test]
fn the_flag_fires_on_the_recent_regression_only_and_strict_fails_the_job() {
    let body = json_body();
    let flagged: Vec<String> = body["series"]
        .as_array()
        .expect("series")
        .iter()
        .filter(|series| series["regressed"] == true)
        .map(|series| series["label"].as_str().expect("label").to_string())
        .collect();
    assert_eq!(
        flagged,
        [
            "vllm · llama3.1-8b · short_decode · N=1",
            "vllm · llama3.1-8b · short_decode · N=8"
        ]
    );
    assert_eq!(history(&["--strict"]).status.code(), Some(1));
    assert_eq!(history(&[]).status.code(), Some(0));
    assert_eq!(
        history(&["--strict", "--model", "qwen2.5-7b"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        history(&["--strict", "--backend", "sglang"]).status.code(),
        Some(0),
        "the upgrade is 19 runs back"
    );
    assert_eq!(
        history(&["--strict", "--backend", "sglang", "--k", "20"])
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn the_driver_change_is_named_on_the_step_it_happened() {
    let body = json_body();
    for series in body["series"].as_array().expect("series") {
        let points = series["points"].as_array().expect("points");
        let changed: Vec<(usize, String)> = points
            .iter()
            .enumerate()
            .filter_map(|(position, point)| {
                let changes = point["changed"].as_array()?;
                Some((
                    position,
                    changes
                        .iter()
                        .map(|change| change["field"].as_str().expect("field").to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                ))
            })
            .collect();
        let driver = (
            cellscope_demo::DRIVER_CHANGE_NIGHT as usize - 1,
            "driver".to_string(),
        );
        if series["key"]["backend"] == "sglang" {
            let upgrade = (
                cellscope_demo::ENGINE_UPGRADE_NIGHT as usize - 1,
                "backend_version".to_string(),
            );
            assert_eq!(changed, [upgrade, driver], "{}", series["label"]);
        } else {
            assert_eq!(changed, [driver], "{}", series["label"]);
        }
    }
}

#[test]
fn markdown_rows_link_to_each_history_and_since_keeps_later_runs() {
    let output = history(&[
        "--format",
        "markdown",
        "--base-url",
        "https://bench.example.org/",
    ]);
    assert!(output.status.success());
    let markdown = String::from_utf8_lossy(&output.stdout);
    assert!(
        markdown.starts_with("### History: 2 of 6 regressed"),
        "{markdown}"
    );
    let rows: Vec<&str> = markdown
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| |"))
        .collect();
    assert_eq!(rows.len(), 6, "{markdown}");
    assert!(
        rows[0].starts_with("| ❌ regressed | [vllm · llama3.1-8b · short_decode · N="),
        "{}",
        rows[0]
    );
    assert!(
        rows.iter()
            .all(|row| row.contains("](https://bench.example.org/?view=history&cell="))
    );
    let since = history(&["--json", "--since", "2026-11-21"]);
    let body: Value = serde_json::from_slice(&since.stdout).expect("JSON");
    for series in body["series"].as_array().expect("series") {
        assert_eq!(
            series["points"].as_array().map(Vec::len),
            Some(10),
            "nights 21 to 30"
        );
    }
    let bad = history(&["--since", "last week"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected YYYY-MM-DD"));
}

/// `GET uri` on the nightly root's router: status and JSON body.
async fn api(uri: &str) -> (axum::http::StatusCode, Value) {
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;
    let root = common::nightly_root();
    let index = cellscope_index::build(
        root,
        &cellscope_index::IndexOptions::default(),
        &cellscope_index::Quiet,
    )
    .expect("the nightly root indexes");
    let store = cellscope::http::snapshot::Store::new(
        root.to_path_buf(),
        cellscope::http::snapshot::Snapshot::new(index, true).expect("a snapshot"),
    );
    let app =
        cellscope::http::router(store, &cellscope::http::HttpOptions::default()).expect("a router");
    let request = axum::http::Request::get(uri)
        .body(axum::body::Body::empty())
        .expect("a request");
    let response = app.oneshot(request).await.expect("an answer");
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    (status, serde_json::from_slice(&body).expect("JSON"))
}

#[tokio::test]
async fn the_api_answers_what_the_cli_prints() {
    let (status, body) = api("/api/history?backend=vllm&metric=p50_ttft_ms").await;
    assert_eq!(status, 200);
    let cli = json_body();
    let vllm: Vec<&Value> = cli["series"]
        .as_array()
        .expect("series")
        .iter()
        .filter(|series| series["key"]["backend"] == "vllm")
        .collect();
    assert_eq!(
        body["series"]
            .as_array()
            .expect("series")
            .iter()
            .collect::<Vec<_>>(),
        vllm
    );
    for (uri, code) in [
        ("/api/history?metric=breakdown", "bad_parameter"),
        ("/api/history?tolerance=3", "bad_parameter"),
        ("/api/history?window=1", "bad_parameter"),
        ("/api/history?by=backend", "unknown_parameter"),
    ] {
        let (status, body) = api(uri).await;
        assert_eq!(status, 400, "{uri}");
        assert_eq!(body["error"]["code"], code, "{uri}: {body}");
    }
}

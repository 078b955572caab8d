//! The HTTP API: in-process router tests for every endpoint, format and error path; real-socket tests for
//! live re-indexing, SSE, path-escape attempts; and the guarantee that nothing under the data root changes.

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use cellscope::http::snapshot::{Snapshot, Store};
use cellscope::http::{HttpOptions, router};
use cellscope_index::{self as index, IndexOptions, Quiet};
use common::demo_root;
use http_body_util::BodyExt as _;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use tower::ServiceExt as _;

fn store_for(root: &Path) -> Arc<Store> {
    let index = index::build(root, &IndexOptions::default(), &Quiet).unwrap();
    Store::new(root.to_path_buf(), Snapshot::new(index, true).unwrap())
}

fn demo_store() -> Arc<Store> {
    static STORE: OnceLock<Arc<Store>> = OnceLock::new();
    STORE.get_or_init(|| store_for(demo_root())).clone()
}

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

impl Reply {
    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&self.body)))
    }
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map_or("", |value| value.to_str().unwrap())
    }
}

async fn get(uri: &str) -> Reply {
    get_with(uri, &[]).await
}

async fn get_with(uri: &str, headers: &[(&str, &str)]) -> Reply {
    let app = router(demo_store(), &HttpOptions::default()).unwrap();
    let mut request = Request::get(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = app
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

fn cells_from_arrow(bytes: &[u8]) -> Vec<cellscope_model::CellSummary> {
    cellscope_model::schema::cells_from_ipc(bytes).unwrap()
}

#[tokio::test]
async fn index_lists_runs_dimensions_and_snapshot() {
    let reply = get("/api/index").await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.header("content-type"), "application/json");
    assert_eq!(reply.header("cache-control"), "no-cache");
    let json = reply.json();
    assert_eq!(json["cells"], 2160);
    assert_eq!(json["runs"].as_array().unwrap().len(), 4);
    let snapshot = json["snapshot"].as_str().unwrap();
    assert_eq!(snapshot.len(), 16);
    // The ETag starts with the snapshot id and covers the bodies too (second indexing stage included).
    let etag = reply.header("etag").to_string();
    assert!(etag.starts_with(&format!("W/\"{snapshot}-")), "{etag}");
    let backends: Vec<&str> = json["dimensions"]["backend"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    assert_eq!(backends, ["pytorch_direct", "sglang", "vllm"]);
    let ns: Vec<u64> = json["dimensions"]["load"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_u64().unwrap())
        .collect();
    assert_eq!(ns, [1, 2, 4, 8, 16, 32]);
    assert_eq!(json["exclusions"][0]["matched_cells"], 72);
    // Conditional request: same ETag → 304 without a body; the bare snapshot id is not a validator.
    let again = get_with("/api/index", &[("if-none-match", &etag)]).await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert!(again.body.is_empty());
    let stale = get_with("/api/index", &[("if-none-match", "W/\"0000000000000000\"")]).await;
    assert_eq!(stale.status, StatusCode::OK);
    let bare = get_with(
        "/api/index",
        &[("if-none-match", &format!("W/\"{snapshot}\""))],
    )
    .await;
    assert_eq!(bare.status, StatusCode::OK);
}

#[tokio::test]
async fn cells_arrow_body_matches_the_cli_export() {
    let reply = get("/api/cells").await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.header("content-type"),
        "application/vnd.apache.arrow.stream"
    );
    let served = cells_from_arrow(&reply.body);
    let output = common::cellscope_command()
        .args(["cells", &demo_root().to_string_lossy(), "--format", "arrow"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let exported = cells_from_arrow(&output.stdout);
    assert_eq!(served.len(), 2160);
    assert_eq!(served, exported);
}

#[tokio::test]
async fn cells_filters_by_any_dimension_in_every_format() {
    let reply = get("/api/cells?backend=vllm,sglang&workload=long_decode&n=1,32").await;
    let cells = cells_from_arrow(&reply.body);
    // 2 backends × 5 models × 2 N × 3 reps × 2 phases.
    assert_eq!(cells.len(), 120);
    assert!(cells.iter().all(|cell| cell.key.workload == "long_decode"
        && (cell.key.n().expect("a concurrency") == 1
            || cell.key.n().expect("a concurrency") == 32)));
    let csv = get("/api/cells?backend=vllm&n=32&format=csv").await;
    assert_eq!(csv.header("content-type"), "text/csv; charset=utf-8");
    let text = String::from_utf8(csv.body).unwrap();
    assert_eq!(text.lines().count(), 1 + 5 * 5 * 3 * 2);
    // The API's CSV is the plain table: the app's download alone carries `#` lines about its view.
    assert!(text.starts_with("run_id,suite,phase,"), "{}", &text[..80]);
    let json = get("/api/cells?run=20260531_120428_552237&status=skipped&format=json")
        .await
        .json();
    assert_eq!(json.as_array().unwrap().len(), 14);
    assert!(
        json.as_array()
            .unwrap()
            .iter()
            .all(|cell| cell["status"] == "skipped" && cell["efficiency"].is_null())
    );
}

#[tokio::test]
async fn bad_parameters_get_json_errors() {
    for (uri, status, code) in [
        ("/api/cells?n=abc", StatusCode::BAD_REQUEST, "bad_parameter"),
        (
            "/api/cells?colour=red",
            StatusCode::BAD_REQUEST,
            "unknown_parameter",
        ),
        (
            "/api/cells?format=xml",
            StatusCode::BAD_REQUEST,
            "bad_parameter",
        ),
        (
            "/api/cells?status=broken",
            StatusCode::BAD_REQUEST,
            "bad_parameter",
        ),
        (
            "/api/index?format=csv",
            StatusCode::BAD_REQUEST,
            "bad_parameter",
        ),
        (
            "/api/index?x=1",
            StatusCode::BAD_REQUEST,
            "unknown_parameter",
        ),
        (
            "/api/provenance?format=arrow",
            StatusCode::BAD_REQUEST,
            "bad_parameter",
        ),
        (
            "/api/requests?run=20260531_120428_552237",
            StatusCode::BAD_REQUEST,
            "missing_parameter",
        ),
        (
            "/api/requests?run=x&phase=scaling&model=m&workload=w&n=1&rep=0",
            StatusCode::NOT_FOUND,
            "unknown_cell",
        ),
        (
            "/api/requests?run=20260531_120428_552237&phase=scaling&model=llama3.2-1b&workload=short_decode&n=one&rep=0",
            StatusCode::BAD_REQUEST,
            "bad_parameter",
        ),
        (
            "/api/requests?run=20260531_120428_552237&phase=scaling&model=llama3.2-1b&workload=short_decode&n=1,2&rep=0",
            StatusCode::BAD_REQUEST,
            "bad_parameter",
        ),
        ("/api/nothing", StatusCode::NOT_FOUND, "unknown_route"),
        ("/api", StatusCode::NOT_FOUND, "unknown_route"),
    ] {
        let reply = get(uri).await;
        assert_eq!(reply.status, status, "{uri}");
        let json = reply.json();
        assert_eq!(json["error"]["code"], code, "{uri}: {json}");
        assert!(
            json["error"]["message"]
                .as_str()
                .is_some_and(|message| !message.is_empty()),
            "{uri}"
        );
    }
}

/// Before the second indexing stage (backup comparison) the replaced rows are unknown: the request waits for
/// the complete snapshot instead of answering without them.
#[tokio::test]
async fn replaced_rows_wait_for_the_second_indexing_stage() {
    let root = demo_root();
    let first = index::build(
        root,
        &IndexOptions {
            hashes: false,
            backup_diff: false,
        },
        &Quiet,
    )
    .unwrap();
    let store = Store::new(root.to_path_buf(), Snapshot::new(first, false).unwrap());
    let app = router(store.clone(), &HttpOptions::default()).unwrap();
    let uri = "/api/requests?run=20260612_212816_266127&phase=scaling&model=mistral-7b&workload=long_prefill_8k&n=32&rep=1&format=json";
    let request = tokio::spawn(app.oneshot(Request::get(uri).body(Body::empty()).unwrap()));
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        !request.is_finished(),
        "answered before the backup comparison"
    );
    let complete = index::build(root, &IndexOptions::default(), &Quiet).unwrap();
    store
        .current
        .store(Arc::new(Snapshot::new(complete, true).unwrap()));
    let response = request.await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&body).unwrap();
    let replaced = rows
        .iter()
        .filter(|row| row["lineage"] == "replaced")
        .count();
    assert_eq!((rows.len(), replaced), (640, 320));
}

#[tokio::test]
async fn requests_of_a_refilled_cell_show_both_lineages() {
    let uri = "/api/requests?run=20260612_212816_266127&phase=scaling&model=mistral-7b&workload=long_prefill_8k&n=32&rep=1";
    let reply = get(uri).await;
    assert_eq!(
        reply.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let rows = cellscope_model::requests::requests_from_ipc(&reply.body).unwrap();
    use cellscope_model::requests::Lineage;
    let current: Vec<_> = rows
        .iter()
        .filter(|row| row.lineage == Lineage::Current)
        .collect();
    let replaced: Vec<_> = rows
        .iter()
        .filter(|row| row.lineage == Lineage::Replaced)
        .collect();
    assert_eq!((current.len(), replaced.len()), (320, 320));
    assert!(
        current
            .iter()
            .all(|row| row.status == "ok" && row.source_run_id == "20260613_055519_963364")
    );
    assert!(
        replaced
            .iter()
            .all(|row| row.status == "http_400" && row.source_run_id == "20260612_212816_266127")
    );
    // The p95 of the current rows is the cell's p95 in /api/cells.
    let mut walls: Vec<f64> = current.iter().filter_map(|row| row.wall_ms).collect();
    walls.sort_by(f64::total_cmp);
    let cells = cells_from_arrow(&get("/api/cells?run=20260612_212816_266127&phase=scaling&model=mistral-7b&workload=long_prefill_8k&n=32&rep=1").await.body);
    assert_eq!(cells.len(), 1);
    assert_eq!(
        cellscope_model::quantile_linear(&walls, 0.95),
        cells[0].stats.p95_wall_ms
    );
    let csv = get(&format!("{uri}&format=csv")).await;
    assert_eq!(String::from_utf8(csv.body).unwrap().lines().count(), 641);
    // A skipped V1 cell has exactly its sentinel row.
    let skipped = get("/api/requests?run=20260531_120428_552237&phase=scaling&model=llama3.2-3b&workload=long_decode&n=16&rep=2&format=json").await.json();
    assert_eq!(skipped.as_array().unwrap().len(), 1);
    assert_eq!(skipped[0]["class"], "skip");
}

#[tokio::test]
async fn pre_refill_cells_show_the_failed_state_before_the_splice() {
    let cells = cells_from_arrow(&get("/api/cells?lineage=pre_refill").await.body);
    assert_eq!(cells.len(), 36);
    assert!(
        cells
            .iter()
            .all(|cell| cell.status == cellscope_model::CellStatus::Failed
                && cell.ok_rows == 0
                && cell.failed_rows == 10 * cell.key.n().expect("a concurrency")
                && cell.key.model == "mistral-7b")
    );
    let bad = get("/api/cells?lineage=old").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_value_no_cell_has_is_refused_with_the_valid_values_not_answered_with_no_cells() {
    let reply = get("/api/cells?model=nope&format=json").await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    let error = &reply.json()["error"];
    assert_eq!(error["code"], "unknown_value");
    let message = error["message"].as_str().unwrap();
    // Every model `/api/index` lists is named.
    let index = get("/api/index").await.json();
    let models = index["dimensions"]["model"].as_array().unwrap();
    assert!(models.len() > 3);
    for model in models {
        let model = model["value"].as_str().unwrap();
        assert!(message.contains(model), "{model}: {message}");
    }
    assert!(!message.contains("did you mean"), "{message}");
    // A wrong case is answered with the value meant.
    let reply = get("/api/cells?model=Mistral-7B&backend=vllm").await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    let message = reply.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with(
            "model has no value `Mistral-7B` in this data (did you mean `mistral-7b`?)"
        ),
        "{message}"
    );
    // An N the sweep never ran is refused too; values that exist but select nothing together are not.
    assert_eq!(
        get("/api/cells?n=3&format=csv").await.status,
        StatusCode::BAD_REQUEST
    );
    let empty = get("/api/cells?run=20260531_120428_552237&backend=sglang&format=json").await;
    assert_eq!(empty.status, StatusCode::OK);
    assert_eq!(empty.json().as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn provenance_has_skips_refill_note_exclusions_and_histories() {
    let json = get("/api/provenance").await.json();
    assert_eq!(json["skipped"].as_array().unwrap().len(), 14);
    let refill = &json["refills"][0];
    assert_eq!(refill["run"], "20260612_212816_266127");
    assert_eq!(refill["refilled_cells"], 36);
    let html = refill["note_html"].as_str().unwrap();
    assert!(html.contains("20260613_055519_963364") && !html.contains("<script"));
    assert_eq!(
        json["exclusions"][0]["matched"].as_array().unwrap().len(),
        72
    );
    assert!(json["manifest_histories"].as_array().unwrap().len() >= 360);
    // The statuses of the rows the refill replaced, per cell: the 3,780 `http_400` rows of the backup's
    // metrics.csv, over the 36 SGLang Mistral long_prefill_8k cells; no other cell has or had a non-ok row.
    let failures = json["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 36);
    let mut replaced = 0;
    for failure in failures {
        let key = &failure["key"];
        assert_eq!(
            (&key["backend"], &key["model"], &key["workload"]),
            (
                &serde_json::json!("sglang"),
                &serde_json::json!("mistral-7b"),
                &serde_json::json!("long_prefill_8k")
            ),
            "{key}"
        );
        assert!(failure.get("failed_by_status").is_none(), "{failure}");
        replaced += failure["pre_refill_failed_by_status"]["http_400"]
            .as_u64()
            .unwrap();
    }
    assert_eq!(replaced, 3780);
}

#[tokio::test]
async fn static_app_routes_fall_back_to_the_page_and_assets_404() {
    let page = get("/").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.header("content-type").starts_with("text/html"));
    let route = get("/curves").await;
    assert_eq!(route.status, StatusCode::OK);
    assert_eq!(route.body, page.body);
    assert_eq!(get("/missing.js").await.status, StatusCode::NOT_FOUND);
    let csp = page.header("content-security-policy");
    assert!(
        csp.contains("default-src 'self'") && csp.contains("'wasm-unsafe-eval'"),
        "{csp}"
    );
    assert_eq!(page.header("x-content-type-options"), "nosniff");
    assert_eq!(page.header("referrer-policy"), "no-referrer");
}

#[tokio::test]
async fn responses_are_compressed_when_asked() {
    for encoding in ["gzip", "br", "zstd"] {
        let reply = get_with("/api/cells?format=csv", &[("accept-encoding", encoding)]).await;
        assert_eq!(reply.header("content-encoding"), encoding);
    }
    assert_eq!(
        get("/api/cells?format=csv")
            .await
            .header("content-encoding"),
        ""
    );
    // Request rows are compressed beside their reading (off the answering threads), in the encoding asked for,
    // and decode to the plain body in every format.
    let decode = |encoding: &str, body: &[u8]| -> Vec<u8> {
        let mut decoded = Vec::new();
        match encoding {
            "zstd" => decoded = zstd::decode_all(body).unwrap(),
            "gzip" => {
                std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(body), &mut decoded)
                    .unwrap();
            }
            "br" => {
                std::io::Read::read_to_end(
                    &mut brotli::Decompressor::new(body, 4096),
                    &mut decoded,
                )
                .unwrap();
            }
            other => panic!("unexpected encoding {other}"),
        }
        decoded
    };
    let cell = "/api/requests?run=20260612_212816_266127&phase=scaling&model=mistral-7b&workload=long_prefill_8k&n=32&rep=1";
    for format in ["", "&format=csv", "&format=json"] {
        let uri = format!("{cell}{format}");
        let plain = get(&uri).await;
        assert_eq!(plain.status, StatusCode::OK);
        assert_eq!(plain.header("content-encoding"), "");
        assert_eq!(plain.header("vary"), "accept-encoding");
        for (asked, chosen) in [
            ("gzip", "gzip"),
            ("br", "br"),
            ("zstd", "zstd"),
            ("gzip, deflate, br, zstd", "zstd"),
            ("zstd;q=0, gzip", "gzip"),
        ] {
            let reply = get_with(&uri, &[("accept-encoding", asked)]).await;
            assert_eq!(reply.header("content-encoding"), chosen, "{uri} {asked}");
            assert!(reply.body.len() < plain.body.len() / 2, "{uri} {asked}");
            assert_eq!(decode(chosen, &reply.body), plain.body, "{uri} {asked}");
        }
    }
}

#[tokio::test]
async fn the_full_cells_table_is_served_precompressed_and_decodes_to_the_same_cells() {
    let plain = get("/api/cells").await;
    let zstd = get_with(
        "/api/cells",
        &[("accept-encoding", "gzip, deflate, br, zstd")],
    )
    .await;
    assert_eq!(zstd.header("content-encoding"), "zstd");
    assert!(zstd.body.len() < plain.body.len() / 2);
    let decoded = zstd::decode_all(zstd.body.as_slice()).unwrap();
    assert_eq!(decoded, plain.body);
    let gzip = get_with("/api/cells", &[("accept-encoding", "gzip")]).await;
    assert_eq!(gzip.header("content-encoding"), "gzip");
    let mut decoded = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(gzip.body.as_slice()),
        &mut decoded,
    )
    .unwrap();
    assert_eq!(decoded, plain.body);
    let refused = get_with("/api/cells", &[("accept-encoding", "zstd;q=0")]).await;
    assert_eq!(refused.header("content-encoding"), "");
    assert_eq!(refused.body, plain.body);
}

#[tokio::test]
async fn a_filtered_table_is_built_once_per_query_and_served_precompressed() {
    // A store of its own: the other tests' queries must not fill this one's cache.
    let store = store_for(demo_root());
    let app = router(store.clone(), &HttpOptions::default()).unwrap();
    let fetch = |uri: &'static str, encoding: Option<&'static str>| {
        let app = app.clone();
        async move {
            let mut request = Request::get(uri);
            if let Some(encoding) = encoding {
                request = request.header("accept-encoding", encoding);
            }
            let response = app
                .oneshot(request.body(Body::empty()).unwrap())
                .await
                .unwrap();
            let encoding = response
                .headers()
                .get("content-encoding")
                .map(|value| value.to_str().unwrap().to_string());
            let body = response
                .into_body()
                .collect()
                .await
                .unwrap()
                .to_bytes()
                .to_vec();
            (encoding, body)
        }
    };
    let (encoding, plain) = fetch("/api/cells?backend=vllm,sglang&n=4", None).await;
    assert_eq!(encoding, None);
    // The same filter written another way is the same entry, served compressed.
    let (encoding, zstd) = fetch("/api/cells?n=4&backend=sglang&backend=vllm", Some("zstd")).await;
    assert_eq!(encoding.as_deref(), Some("zstd"));
    assert_eq!(zstd::decode_all(zstd.as_slice()).unwrap(), plain);
    assert_eq!(store.load().filtered_cells.usage().0, 1);
    // The body holds exactly the cells the filter admits, as the unfiltered table has them.
    let cells = cellscope_model::schema::cells_from_ipc(&plain).unwrap();
    let expected: Vec<_> = store
        .load()
        .index
        .cells
        .iter()
        .filter(|cell| {
            cell.key.n().expect("a concurrency") == 4
                && ["vllm", "sglang"].contains(&cell.key.backend.as_str())
        })
        .cloned()
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(cells, expected);
    let (_, csv) = fetch("/api/cells?backend=vllm&format=csv", Some("gzip")).await;
    assert!(!csv.is_empty());
    assert_eq!(store.load().filtered_cells.usage().0, 2);
}

#[tokio::test]
async fn cors_is_off_by_default_and_allows_one_origin_when_asked() {
    let reply = get_with("/api/index", &[("origin", "https://example.org")]).await;
    assert_eq!(reply.header("access-control-allow-origin"), "");
    let app = router(
        demo_store(),
        &HttpOptions {
            cors_origin: Some("https://example.org".into()),
            ..HttpOptions::default()
        },
    )
    .unwrap();
    let response = app
        .oneshot(
            Request::get("/api/index")
                .header("origin", "https://example.org")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "https://example.org"
    );
}

#[tokio::test]
async fn compare_answers_the_same_json_as_the_cli_and_names_bad_parameters() {
    let reply = get("/api/compare?a=vllm&b=sglang&phase=scaling").await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.header("content-type"), "application/json");
    let json = reply.json();
    assert_eq!(json["spec"]["by"], "backend");
    let groups = json["groups"].as_array().unwrap();
    let pairs: Vec<(String, u64)> = groups
        .iter()
        .map(|group| {
            (
                group["group"].as_str().unwrap().to_string(),
                group["n_pairs"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("balanced_2k".to_string(), 25),
            ("long_decode".to_string(), 25),
            ("long_prefill_8k".to_string(), 20),
            ("repeated_prefix".to_string(), 25),
            ("short_decode".to_string(), 25),
        ]
    );
    // What else differs: the same body carries the confounders, typed as the model's `CompareBody`.
    let body: cellscope_model::api::CompareBody = serde_json::from_slice(&reply.body).unwrap();
    let confounders = &body.confounders;
    let summary = |contrast: &cellscope_model::compare::confounders::FieldContrast| {
        [&contrast.a, &contrast.b].map(|values| {
            values
                .iter()
                .map(|value| {
                    (
                        value.value.clone().unwrap_or_default(),
                        value.runs.join(","),
                    )
                })
                .collect::<Vec<_>>()
        })
    };
    use cellscope_model::api::EnvironmentField;
    let differing = |confounders: &cellscope_model::compare::confounders::Confounders,
                     field: EnvironmentField| {
        summary(
            confounders
                .differing
                .iter()
                .find(|contrast| contrast.field == field)
                .unwrap_or_else(|| panic!("{field:?} does not differ: {confounders:?}")),
        )
    };
    const VLLM: &str = "20260612_204254_036590";
    const SGLANG: &str = "20260612_212816_266127";
    const REFILL: &str = "20260613_055519_963364";
    let one = |value: &str, runs: &str| vec![(value.to_string(), runs.to_string())];
    assert_eq!(
        differing(confounders, EnvironmentField::Driver),
        [one("580.159", VLLM), one("575.57", SGLANG)]
    );
    assert_eq!(
        differing(confounders, EnvironmentField::BackendVersion),
        [one("0.10.2", VLLM), one("0.5.12.post1", SGLANG)]
    );
    assert_eq!(
        differing(confounders, EnvironmentField::Install),
        [
            one("native venv", VLLM),
            one("native launcher (vendor Docker image bypassed)", SGLANG)
        ]
    );
    let equal: Vec<EnvironmentField> = confounders.equal.iter().map(|c| c.field).collect();
    assert_eq!(
        equal,
        [
            EnvironmentField::Gpu,
            EnvironmentField::GpuMemoryMib,
            EnvironmentField::Python,
            EnvironmentField::MaxModelLen
        ]
    );
    let included = get("/api/compare?a=vllm&b=sglang&phase=scaling&include=excluded")
        .await
        .json();
    assert_eq!(included["groups"][2]["n_pairs"], 25);
    let included: cellscope_model::compare::confounders::Confounders =
        serde_json::from_value(included["confounders"].clone()).unwrap();
    assert_eq!(
        differing(&included, EnvironmentField::MaxModelLen),
        [
            one("8768", VLLM),
            vec![
                ("8768".to_string(), SGLANG.to_string()),
                ("11264".to_string(), REFILL.to_string())
            ]
        ]
    );
    // The app reads the same facts from /api/index to compute the confounders itself.
    let index: cellscope_model::api::IndexBody =
        serde_json::from_slice(&get("/api/index").await.body).unwrap();
    let refill = index.runs.iter().find(|run| run.run_id == REFILL).unwrap();
    assert_eq!(refill.environment[&EnvironmentField::MaxModelLen], "11264");
    assert_eq!(refill.environment[&EnvironmentField::Driver], "575.57");
    for (uri, message) in [
        ("/api/compare?a=vllm", "`b` is required"),
        (
            "/api/compare?a=vllm&b=tgi",
            "the backend values are pytorch_direct, sglang, vllm",
        ),
        (
            "/api/compare?a=vllm&b=sglang&metric=ok_rate",
            "`metric` must be one of",
        ),
        (
            "/api/compare?a=vllm&b=sglang&colour=red",
            "unknown parameter `colour`",
        ),
    ] {
        let reply = get(uri).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{uri}");
        let error = reply.json();
        assert_eq!(error["error"]["code"], "bad_parameter", "{uri}");
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains(message),
            "{uri}: {error}"
        );
    }
}

#[tokio::test]
async fn a_cell_is_named_by_its_key_or_by_its_dimensions_alike() {
    let eight = "run=20260612_212816_266127&suite=cloud_core&phase=scaling&backend=sglang&model=mistral-7b\
                 &workload=long_prefill_8k&n=32&rep=1";
    let key: cellscope_model::CellKey =
        "20260612_212816_266127/cloud_core/scaling/sglang/mistral-7b/long_prefill_8k/n=32/rep=1"
            .parse()
            .unwrap();
    let by_key = format!(
        "/api/requests?{}",
        cellscope_model::requests::requests_query(&key)
    );
    assert!(by_key.starts_with("/api/requests?cell="), "{by_key}");
    for format in ["", "&format=csv", "&format=json"] {
        let named = get(&format!("{by_key}{format}")).await;
        assert_eq!(named.status, StatusCode::OK, "{format}");
        let aliased = get(&format!("/api/requests?{eight}{format}")).await;
        assert_eq!(named.body, aliased.body, "{format}");
        assert_eq!(named.header("content-type"), aliased.header("content-type"));
    }
    // Both at once is refused; a text that is no cell key is refused with the form it takes.
    let both = get(&format!("{by_key}&run=20260612_212816_266127")).await;
    assert_eq!(both.status, StatusCode::BAD_REQUEST);
    let bad = get("/api/requests?cell=nope").await.json();
    assert_eq!(bad["error"]["code"], "bad_parameter");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("run/suite/phase/backend/model/workload/n=N/rep=R")
    );
    // The pre-refill cells under `include`, the name every endpoint uses, and under `lineage`, its older one.
    let included = get("/api/cells?include=pre_refill").await;
    assert_eq!(included.status, StatusCode::OK);
    assert_eq!(
        included.body,
        get("/api/cells?lineage=pre_refill").await.body
    );
    assert_ne!(included.body, get("/api/cells").await.body);
}

#[tokio::test]
async fn a_bad_value_is_refused_with_the_same_words_on_every_endpoint() {
    let cell =
        "run=20260612_212816_266127&phase=scaling&model=mistral-7b&workload=long_prefill_8k&n=32";
    for (parameter, routes) in [
        (
            "rep=one",
            vec![
                "/api/cells?".to_string(),
                format!("/api/requests?{cell}&"),
                "/api/compare?a=vllm&b=sglang&".to_string(),
            ],
        ),
        (
            "include=refill",
            vec![
                "/api/cells?".to_string(),
                "/api/compare?a=vllm&b=sglang&".to_string(),
            ],
        ),
        (
            "at=a&at=b",
            vec![
                "/api/index?".to_string(),
                "/api/provenance?".to_string(),
                "/api/cells?".to_string(),
                "/api/compare?a=vllm&b=sglang&".to_string(),
            ],
        ),
    ] {
        let mut bodies = Vec::new();
        for route in &routes {
            let reply = get(&format!("{route}{parameter}")).await;
            assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{route}{parameter}");
            bodies.push(reply.json());
        }
        assert!(
            bodies.iter().all(|body| *body == bodies[0]),
            "{parameter}: {bodies:?}"
        );
        assert_eq!(bodies[0]["error"]["code"], "bad_parameter");
    }
    // The toggles that decide only what enters aggregates do not change the cells listed, so they are refused there.
    for toggle in ["include=excluded", "omit=partial"] {
        let reply = get(&format!("/api/cells?{toggle}")).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{toggle}");
    }
    assert_eq!(
        get("/api/cells?include=refilled&format=csv").await.body,
        get("/api/cells?format=csv").await.body
    );
}

/// A reply of the router over `store`.
async fn get_from(store: &Arc<Store>, uri: &str) -> Reply {
    let app = router(store.clone(), &HttpOptions::default()).unwrap();
    let response = app
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Reply {
        status,
        headers,
        body: body.to_vec(),
    }
}

/// A deployment parameter is a dimension of the API: `/api/index` lists the ones that vary, `/api/cells` filters
/// on them in every format (the `config` column carrying the whole configuration), and `/api/compare` contrasts
/// two of their values on pairs that agree on every other parameter.
#[tokio::test]
async fn a_deployment_parameter_filters_groups_and_is_compared_through_the_api() {
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/formats");
    let inferencex = store_for(&formats.join("vllm-inferencex"));
    let index = get_from(&inferencex, "/api/index").await.json();
    let values = |dimension: &str| -> Vec<(u64, u64)> {
        index["dimensions"][dimension]
            .as_array()
            .unwrap_or_else(|| panic!("{dimension} listed: {}", index["dimensions"]))
            .iter()
            .map(|count| {
                (
                    count["value"].as_u64().unwrap(),
                    count["cells"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(values("tp"), [(4, 1), (8, 1)]);
    // Parameters both deployments share are not listed.
    for same in ["ep", "precision", "accelerator"] {
        assert!(index["dimensions"].get(same).is_none(), "{same}");
    }
    let tp8 = get_from(&inferencex, "/api/cells?tp=8&format=json")
        .await
        .json();
    let cells = tp8.as_array().unwrap();
    assert_eq!(cells.len(), 1);
    assert_eq!(
        cells[0]["config"],
        "accelerator=b200,dp_attention=false,engine=sglang,ep=1,precision=fp4,tp=8"
    );
    let csv = get_from(&inferencex, "/api/cells?tensor_parallel_size=4&format=csv").await;
    let text = String::from_utf8(csv.body).unwrap();
    assert!(text.lines().next().unwrap().ends_with(",config"), "{text}");
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.ends_with(",tp=4\"\n"), "{text}");
    let arrow = get_from(&inferencex, "/api/cells?tp=4,8").await;
    let decoded = cells_from_arrow(&arrow.body);
    assert_eq!(decoded.len(), 2);
    assert_eq!(decoded[1].key.config.get("tp"), Some("8"));
    // A value no deployment has is refused with the ones there are.
    let refused = get_from(&inferencex, "/api/cells?tp=16").await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let message = refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("tp has no value `16`") && message.ends_with("4, 8"),
        "{message}"
    );

    let compared = get_from(
        &inferencex,
        "/api/compare?by=tp&a=4&b=8&per=none&metric=p95_wall_ms",
    )
    .await;
    assert_eq!(
        compared.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&compared.body)
    );
    let body: cellscope_model::api::CompareBody = serde_json::from_slice(&compared.body).unwrap();
    let [group] = body.comparison.groups.as_slice() else {
        panic!("{:#?}", body.comparison.groups);
    };
    let [pair] = group.pairs.as_slice() else {
        panic!("{:#?}", group.pairs);
    };
    let tp = cellscope_model::Dimension::parse("tp").unwrap();
    assert!(
        pair.coordinates
            .iter()
            .all(|(dimension, _)| *dimension != tp)
    );
    let names: Vec<&str> = pair
        .coordinates
        .iter()
        .map(|(dimension, _)| dimension.name())
        .collect();
    assert!(
        names.contains(&"precision") && names.contains(&"ep"),
        "{names:?}"
    );
    assert_eq!(pair.a_cells[0].config.get("tp"), Some("4"));
    assert_eq!(pair.b_cells[0].config.get("tp"), Some("8"));

    // A serve parameter a sweep varies groups the comparison's pairs by load, one pair per concurrency.
    let sweep = store_for(&formats.join("vllm-sweep-config"));
    let by_seqs = get_from(
        &sweep,
        "/api/compare?by=max_num_seqs&a=4&b=8&per=none&metric=p95_wall_ms",
    )
    .await
    .json();
    assert_eq!(by_seqs["groups"][0]["n_pairs"], 2, "{by_seqs}");
    let grouped = get_from(
        &sweep,
        "/api/compare?by=max_num_seqs&a=4&b=8&per=max_num_seqs&metric=p95_wall_ms",
    )
    .await;
    assert_eq!(grouped.status, StatusCode::BAD_REQUEST, "per is by");
    let eight = get_from(&sweep, "/api/cells?max_num_seqs=8&n=4&format=json")
        .await
        .json();
    assert_eq!(eight.as_array().unwrap().len(), 1);
    // An unknown name is still an unknown parameter, not a filter that selects nothing.
    let bogus = get_from(&sweep, "/api/cells?bogus=1&format=json").await;
    assert_eq!(bogus.status, StatusCode::BAD_REQUEST);
    assert_eq!(bogus.json()["error"]["code"], "unknown_parameter");
}

#[tokio::test]
async fn the_cli_writes_the_bytes_the_api_sends_for_a_slice_and_for_a_cells_rows() {
    let root = demo_root().to_str().unwrap();
    let cell =
        "20260612_212816_266127/cloud_core/scaling/sglang/mistral-7b/long_prefill_8k/n=32/rep=1";
    for (uri, args) in [
        (
            "/api/cells?backend=vllm&n=4,8&status=clean".to_string(),
            vec![
                "cells",
                root,
                "--format",
                "arrow",
                "--backend",
                "vllm",
                "--load",
                "4,8",
                "--status",
                "clean",
            ],
        ),
        (
            "/api/cells?include=pre_refill&format=csv".to_string(),
            vec!["cells", root, "--format", "csv", "--include", "pre_refill"],
        ),
        (
            format!("/api/requests?cell={cell}&format=csv"),
            vec!["requests", root, "--cell", cell, "--format", "csv"],
        ),
        (
            format!("/api/requests?cell={cell}"),
            vec!["requests", root, "--cell", cell, "--format", "arrow"],
        ),
    ] {
        let reply = get(&uri).await;
        assert_eq!(reply.status, StatusCode::OK, "{uri}");
        let output = common::cellscope_command()
            .args(&args)
            .arg("--no-cache")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(reply.body.len() > 1000, "{uri}");
        assert!(
            output.stdout.as_slice() == &reply.body[..],
            "{uri}: the CLI's bytes differ from the API's"
        );
    }
}

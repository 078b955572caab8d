//! The JSON and Arrow API: `/api/index`, `/api/cells`, `/api/requests`, `/api/provenance`, `/api/events`.

use super::archive::Archived;
use super::bodies;
use super::error::ApiError;
use super::snapshot::{Snapshot, Store};
use crate::export::{self, Format};
use axum::body::{Body, Bytes};
use axum::extract::{Query, RawQuery, State};
use axum::http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, ETAG, IF_NONE_MATCH, VARY,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use cellscope_model::api::{CompareBody, IndexBody};
use cellscope_model::filter::{DimensionFilter, dimension_counts};
use cellscope_model::key::Value;
use cellscope_model::requests::{requests_schema, requests_to_batch};
use cellscope_model::schema::{ARROW_STREAM_MEDIA_TYPE, cells_from_ipc, write_ipc_stream};
use cellscope_model::{CellKey, CellStatus, CellSummary, Dimension};
use futures_util::StreamExt as _;
use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::sync::Arc;
use tokio_stream::wrappers::BroadcastStream;

pub type Params = Query<Vec<(String, String)>>;

fn media_type(format: Format) -> &'static str {
    match format {
        Format::Arrow => ARROW_STREAM_MEDIA_TYPE,
        Format::Csv => "text/csv; charset=utf-8",
        Format::Json => "application/json",
    }
}

/// `W/"<snapshot>-<content>"`: a response is a function of the snapshot's content (second indexing stage
/// included) and the URL, so the snapshot's ETag validates it.
fn etag(snapshot: &Snapshot) -> HeaderValue {
    HeaderValue::from_str(&format!("W/\"{}\"", snapshot.etag))
        .unwrap_or_else(|_| HeaderValue::from_static("W/\"\""))
}

fn not_modified(headers: &HeaderMap, snapshot: &Snapshot) -> Option<Response> {
    let tag = etag(snapshot);
    let matches = headers
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|candidate| {
            let candidate = candidate.trim();
            candidate == "*"
                || candidate.trim_start_matches("W/")
                    == tag.to_str().unwrap_or("").trim_start_matches("W/")
        });
    matches.then(|| {
        (
            StatusCode::NOT_MODIFIED,
            [
                (ETAG, tag),
                (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            ],
        )
            .into_response()
    })
}

/// Names on `response` the snapshot it was made from (`x-cellscope-snapshot`), as every answer from a snapshot
/// does: the app pins links to it.
pub(crate) fn name_snapshot(response: &mut Response, id: &str) {
    if let Ok(value) = HeaderValue::from_str(id) {
        response.headers_mut().insert(
            axum::http::HeaderName::from_static("x-cellscope-snapshot"),
            value,
        );
    }
}

fn respond(snapshot: &Snapshot, content_type: &'static str, body: impl Into<Body>) -> Response {
    let mut response = (
        [
            (CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (ETAG, etag(snapshot)),
        ],
        body.into(),
    )
        .into_response();
    name_snapshot(&mut response, &snapshot.id);
    response
}

/// Parsed query parameters: `format` plus the parameters a handler accepts, comma-separated lists merged.
pub(crate) struct Parsed {
    format: Option<Format>,
    values: BTreeMap<String, Vec<String>>,
}

pub(crate) fn parse(params: &[(String, String)], accepted: &[&str]) -> Result<Parsed, ApiError> {
    let mut parsed = Parsed {
        format: None,
        values: BTreeMap::new(),
    };
    for (name, value) in params {
        if name == "format" {
            parsed.format = Some(
                value
                    .parse()
                    .map_err(|message: String| ApiError::bad_request("bad_parameter", message))?,
            );
            continue;
        }
        if !accepted.contains(&name.as_str()) {
            return Err(ApiError::bad_request(
                "unknown_parameter",
                format!(
                    "unknown query parameter `{name}`; accepted: format, {}",
                    accepted.join(", ")
                ),
            ));
        }
        let entry = parsed.values.entry(name.clone()).or_default();
        entry.extend(
            value
                .split(',')
                .map(str::trim)
                .filter(|part| !part.is_empty())
                .map(str::to_string),
        );
    }
    Ok(parsed)
}

pub(crate) const DIMENSIONS: [&str; 8] = [
    "run", "suite", "phase", "backend", "model", "workload", "n", "rep",
];

/// Which snapshot a request reads: the current one, or a kept one named by `at=` (a pinned link).
enum Pinned {
    Current,
    Kept(String, Archived),
}

/// Takes `at` out of the parameters and finds that snapshot; a snapshot no longer kept is a 404 that says so.
fn pinned(store: &Store, parsed: &mut Parsed) -> Result<Pinned, ApiError> {
    let Some(values) = parsed.values.remove("at") else {
        return Ok(Pinned::Current);
    };
    let [at] = values.as_slice() else {
        return Err(ApiError::bad_request(
            "bad_parameter",
            "`at` takes one snapshot id",
        ));
    };
    let current = store.load().id.clone();
    if *at == current {
        return Ok(Pinned::Current);
    }
    match store.archive.as_ref().and_then(|archive| archive.load(at)) {
        Some(archived) => Ok(Pinned::Kept(at.clone(), archived)),
        None => Err(ApiError::not_found(
            "snapshot_gone",
            format!(
                "snapshot {at} is not kept by this server any more (or never was); the current snapshot is {current}"
            ),
        )),
    }
}

/// The cells of a kept snapshot's Arrow table (written by this server, so a failure is internal).
fn kept_cells(arrow: &[u8]) -> Result<Vec<CellSummary>, ApiError> {
    cells_from_ipc(arrow).map_err(|error| ApiError::Internal(error.to_string()))
}

/// A body of a kept snapshot: immutable for its bytes, validated by their hash.
fn respond_kept(
    headers: &HeaderMap,
    id: &str,
    content_type: &'static str,
    body: Vec<u8>,
) -> Response {
    let tag = cellscope_index::hex::short_sha256(&body);
    let etag = HeaderValue::from_str(&format!("W/\"{id}-kept-{tag}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("W/\"\""));
    let matches = headers
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| {
            value
                .split(',')
                .any(|candidate| candidate.trim() == etag.to_str().unwrap_or(""))
        });
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(CONTENT_TYPE, HeaderValue::from_static(content_type))],
            body,
        )
            .into_response()
    };
    let response_headers = response.headers_mut();
    response_headers.insert(ETAG, etag);
    response_headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    name_snapshot(&mut response, id);
    response
}

/// The JSON bodies computed once per snapshot.
#[derive(Clone, Copy)]
enum JsonBody {
    Index,
    Provenance,
}

/// A JSON body computed once per snapshot, served as is (`/api/index`, `/api/provenance`), current or kept.
fn precomputed_json(
    store: &Store,
    headers: &HeaderMap,
    params: &[(String, String)],
    which: JsonBody,
) -> Result<Response, ApiError> {
    let route = match which {
        JsonBody::Index => "/api/index",
        JsonBody::Provenance => "/api/provenance",
    };
    let mut parsed = parse(params, &["at"])?;
    if matches!(parsed.format, Some(Format::Csv | Format::Arrow)) {
        return Err(ApiError::bad_request(
            "bad_parameter",
            format!("{route} is JSON only (format=json)"),
        ));
    }
    if let Pinned::Kept(id, archived) = pinned(store, &mut parsed)? {
        let body = match which {
            JsonBody::Index => archived.index_json,
            JsonBody::Provenance => archived.provenance_json,
        };
        return Ok(respond_kept(headers, &id, "application/json", body));
    }
    let snapshot = store.load();
    if let Some(response) = not_modified(headers, &snapshot) {
        return Ok(response);
    }
    let body = match which {
        JsonBody::Index => &snapshot.index_json,
        JsonBody::Provenance => &snapshot.provenance_json,
    };
    Ok(respond(&snapshot, "application/json", body.clone()))
}

/// `GET /api/index`
pub async fn index(
    State(store): State<Arc<Store>>,
    headers: HeaderMap,
    Query(params): Params,
) -> Result<Response, ApiError> {
    precomputed_json(&store, &headers, &params, JsonBody::Index)
}

/// The cells a `/api/cells` query selects: the model's dimension filter plus `status=`. A value no cell of the
/// data has (`known`: each dimension's values) is refused with the dimension's values, and the one meant when
/// it is close, rather than answered with no cells.
fn cell_filter(
    parsed: &Parsed,
    known: &BTreeMap<Dimension, Vec<Value>>,
) -> Result<impl Fn(&CellSummary) -> bool + Send + use<>, ApiError> {
    let mut filter = DimensionFilter::default();
    let mut statuses: Option<BTreeSet<CellStatus>> = None;
    for (name, values) in &parsed.values {
        if name == "status" {
            let mut set = BTreeSet::new();
            for value in values {
                set.insert(CellStatus::parse(value).ok_or_else(|| {
                    ApiError::bad_request(
                        "bad_parameter",
                        format!("status `{value}` is not one of clean, partial, failed, skipped, not_run"),
                    )
                })?);
            }
            statuses = Some(set);
            continue;
        }
        let dimension = Dimension::parse(name).ok_or_else(|| {
            ApiError::bad_request("unknown_parameter", format!("unknown dimension `{name}`"))
        })?;
        filter
            .accept(dimension, values.iter().cloned())
            .map_err(|error| ApiError::bad_request("bad_parameter", error.to_string()))?;
    }
    let unknown = filter.unknown_values(known);
    if !unknown.is_empty() {
        let message: Vec<String> = unknown.iter().map(ToString::to_string).collect();
        return Err(ApiError::bad_request("unknown_value", message.join("; ")));
    }
    Ok(move |cell: &CellSummary| {
        statuses
            .as_ref()
            .is_none_or(|set| set.contains(&cell.status))
            && filter.admits(&cell.key)
    })
}

/// How long a request that needs the second indexing stage waits for it before answering 503.
const SECOND_STAGE_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The current snapshot once it holds the second indexing stage. Rows a refill replaced and the pre-refill
/// cells come from the backup comparison; answering from the first-stage snapshot would silently leave them out
/// (an inspector showing "0 replaced rows" for a refilled cell), so such requests wait for the comparison, which
/// takes about a second on the demo data.
async fn complete_snapshot(store: &Store) -> Result<Arc<Snapshot>, ApiError> {
    let started = std::time::Instant::now();
    loop {
        let snapshot = store.load();
        if snapshot.complete {
            return Ok(snapshot);
        }
        if started.elapsed() > SECOND_STAGE_WAIT {
            return Err(ApiError::Unavailable(
                "the backup comparison (second indexing stage) is still running; retry in a moment"
                    .into(),
            ));
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// `GET /api/cells`
pub async fn cells(
    State(store): State<Arc<Store>>,
    headers: HeaderMap,
    Query(params): Params,
) -> Result<Response, ApiError> {
    let mut accepted = DIMENSIONS.to_vec();
    accepted.extend(["status", "lineage", "at"]);
    let mut parsed = parse(&params, &accepted)?;
    let format = parsed.format.unwrap_or(Format::Arrow);
    let pinned = pinned(&store, &mut parsed)?;
    // `lineage=pre_refill`: the refilled cells as they were before the refill (the what-if of the app).
    let pre_refill = match parsed.values.remove("lineage").as_deref() {
        None => false,
        Some([value]) if value == "current" => false,
        Some([value]) if value == "pre_refill" => true,
        Some(other) => {
            return Err(ApiError::bad_request(
                "bad_parameter",
                format!(
                    "lineage must be `current` or `pre_refill`, got `{}`",
                    other.join(",")
                ),
            ));
        }
    };
    if let Pinned::Kept(id, archived) = pinned {
        let arrow = if pre_refill {
            archived.pre_refill_arrow
        } else {
            archived.cells_arrow
        };
        if parsed.values.is_empty() && format == Format::Arrow {
            return Ok(respond_kept(&headers, &id, media_type(format), arrow));
        }
        let kept = kept_cells(&arrow)?;
        let known = dimension_counts(&kept)
            .into_iter()
            .map(|(dimension, counts)| {
                (
                    dimension,
                    counts.into_iter().map(|(value, _)| value).collect(),
                )
            })
            .collect();
        let filter = cell_filter(&parsed, &known)?;
        let selected: Vec<CellSummary> = kept.into_iter().filter(|cell| filter(cell)).collect();
        let body = export::encode(&selected, format)
            .map_err(|error| ApiError::Internal(error.to_string()))?;
        return Ok(respond_kept(&headers, &id, media_type(format), body));
    }
    let snapshot = if pre_refill {
        complete_snapshot(&store).await?
    } else {
        store.load()
    };
    let filter = cell_filter(&parsed, &snapshot.dimension_values)?;
    if let Some(response) = not_modified(&headers, &snapshot) {
        return Ok(response);
    }
    if parsed.values.is_empty() && format == Format::Arrow && !pre_refill {
        // The whole table, precompressed per snapshot in the encodings the client accepts.
        let compressed = &snapshot.cells_arrow_compressed;
        let response = if accepted_encoding(&headers).is_some_and(|encoding| encoding != "zstd") {
            // Brotli or gzip is made on the first request that needs it: off the async workers.
            let building = snapshot.clone();
            tokio::task::spawn_blocking(move || {
                respond_encoded(
                    &building,
                    &headers,
                    media_type(format),
                    &building.cells_arrow,
                    |encoding| building.cells_arrow_compressed.get(encoding),
                )
            })
            .await
            .map_err(|error| ApiError::Internal(error.to_string()))?
        } else {
            respond_encoded(
                &snapshot,
                &headers,
                media_type(format),
                &snapshot.cells_arrow,
                |encoding| compressed.get(encoding),
            )
        };
        return Ok(response);
    }
    // A slice: built and compressed once per snapshot and normalised query, then served from memory.
    let key = bodies::key(format.name(), pre_refill, &parsed.values);
    let building = snapshot.clone();
    let body = snapshot
        .filtered_cells
        .get_or_build(&key, move || {
            let source = if pre_refill {
                &building.index.pre_refill_cells
            } else {
                &building.index.cells
            };
            let selected: Vec<CellSummary> =
                source.iter().filter(|cell| filter(cell)).cloned().collect();
            export::encode(&selected, format)
                .map(|plain| Arc::new(bodies::Body::new(plain)))
                .map_err(|error| ApiError::Internal(error.to_string()))
        })
        .await?;
    Ok(respond_encoded(
        &snapshot,
        &headers,
        media_type(format),
        &body.plain,
        |encoding| {
            body.compressed
                .iter()
                .find(|(name, _)| *name == encoding)
                .map(|(_, bytes)| bytes.clone())
        },
    ))
}

/// The best of the bodies' encodings ([`ENCODINGS`](super::snapshot::ENCODINGS), best first) the client
/// accepts.
pub(crate) fn accepted_encoding(headers: &HeaderMap) -> Option<&'static str> {
    let accepted = headers
        .get(ACCEPT_ENCODING)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    let accepts = |encoding: &str| {
        accepted.split(',').any(|part| {
            let mut pieces = part.trim().split(';');
            pieces.next() == Some(encoding)
                && !pieces.any(|parameter| parameter.trim().replace(' ', "") == "q=0")
        })
    };
    super::snapshot::ENCODINGS
        .into_iter()
        .find(|encoding| accepts(encoding))
}

/// A body in the best encoding the client accepts of those `compressed` gives (`Vary: accept-encoding`), else
/// plain.
fn respond_encoded(
    snapshot: &Snapshot,
    headers: &HeaderMap,
    content_type: &'static str,
    plain: &Bytes,
    compressed: impl Fn(&str) -> Option<Bytes>,
) -> Response {
    let chosen =
        accepted_encoding(headers).and_then(|encoding| Some((encoding, compressed(encoding)?)));
    let mut response = match chosen {
        Some((encoding, body)) => {
            let mut response = respond(snapshot, content_type, body);
            response
                .headers_mut()
                .insert(CONTENT_ENCODING, HeaderValue::from_static(encoding));
            response
        }
        None => respond(snapshot, content_type, plain.clone()),
    };
    response
        .headers_mut()
        .insert(VARY, HeaderValue::from_static("accept-encoding"));
    response
}

fn one<'a>(parsed: &'a Parsed, name: &str) -> Result<Option<&'a str>, ApiError> {
    match parsed.values.get(name).map(Vec::as_slice) {
        None | Some([]) => Ok(None),
        Some([value]) => Ok(Some(value.as_str())),
        Some(_) => Err(ApiError::bad_request(
            "bad_parameter",
            format!("`{name}` takes one value"),
        )),
    }
}

fn number(parsed: &Parsed, name: &str) -> Result<Option<u32>, ApiError> {
    one(parsed, name)?
        .map(|value| {
            value.parse::<u32>().map_err(|_| {
                ApiError::bad_request(
                    "bad_parameter",
                    format!("`{name}` must be a non-negative integer, got `{value}`"),
                )
            })
        })
        .transpose()
}

/// `GET /api/requests?run=…&phase=…&model=…&workload=…&n=…&rep=…` (`suite`, `backend` when ambiguous).
pub async fn requests(
    State(store): State<Arc<Store>>,
    headers: HeaderMap,
    Query(params): Params,
) -> Result<Response, ApiError> {
    let parsed = parse(&params, &DIMENSIONS)?;
    let format = parsed.format.unwrap_or(Format::Arrow);
    let required = ["run", "phase", "model", "workload", "n", "rep"];
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|name| !parsed.values.contains_key(*name))
        .collect();
    if !missing.is_empty() {
        return Err(ApiError::bad_request(
            "missing_parameter",
            format!(
                "missing {}; a cell is named by run, phase, model, workload, n and rep (and suite, backend when ambiguous)",
                missing.join(", ")
            ),
        ));
    }
    let (n, rep) = (number(&parsed, "n")?, number(&parsed, "rep")?);
    let text = |name: &str| one(&parsed, name);
    let (run, phase, model, workload, suite, backend) = (
        text("run")?,
        text("phase")?,
        text("model")?,
        text("workload")?,
        text("suite")?,
        text("backend")?,
    );
    let mut snapshot = store.load();
    if let Some(response) = not_modified(&headers, &snapshot) {
        return Ok(response);
    }
    let matches = |key: &CellKey| {
        Some(key.run_id.as_str()) == run
            && Some(key.phase.as_str()) == phase
            && Some(key.model.as_str()) == model
            && Some(key.workload.as_str()) == workload
            && Some(key.n) == n
            && Some(key.rep) == rep
            && suite.is_none_or(|suite| key.suite == suite)
            && backend.is_none_or(|backend| key.backend == backend)
    };
    // Keys sort by run first: only the run's own cells are looked at, not every cell of the index.
    let first_of_run = CellKey {
        run_id: run.unwrap_or_default().to_string(),
        suite: String::new(),
        phase: String::new(),
        backend: String::new(),
        model: String::new(),
        workload: String::new(),
        n: 0,
        rep: 0,
    };
    let found: Vec<&CellKey> = snapshot
        .index
        .rows
        .range(&first_of_run..)
        .map(|(key, _)| key)
        .take_while(|key| Some(key.run_id.as_str()) == run)
        .filter(|key| matches(key))
        .collect();
    let key = match found.as_slice() {
        [] => {
            return Err(ApiError::not_found(
                "unknown_cell",
                "no cell with this run, phase, model, workload, n and rep",
            ));
        }
        [key] => (*key).clone(),
        many => {
            let choices: Vec<String> = many
                .iter()
                .map(|key| format!("suite={} backend={}", key.suite, key.backend))
                .collect();
            return Err(ApiError::bad_request(
                "ambiguous_cell",
                format!("several cells match; add one of: {}", choices.join("; ")),
            ));
        }
    };
    // The cells table is sorted by key.
    let refilled = snapshot
        .index
        .cells
        .binary_search_by(|cell| cell.key.cmp(&key))
        .is_ok_and(|position| snapshot.index.cells[position].refilled);
    if refilled && !snapshot.complete {
        snapshot = complete_snapshot(&store).await?;
    }
    let locator = snapshot.index.rows.get(&key).cloned().unwrap_or_default();
    let disk = cellscope_index::storage::LocalDisk::new(&snapshot.index.root);
    let rows = tokio::task::spawn_blocking(move || cellscope_index::read_rows(&disk, &locator))
        .await
        .map_err(|error| ApiError::Internal(error.to_string()))?
        .map_err(|error| match error {
            cellscope_index::RowsError::Changed(message) => ApiError::Unavailable(message),
            other => ApiError::Internal(other.to_string()),
        })?;
    let batch = requests_to_batch(&rows).map_err(|error| ApiError::Internal(error.to_string()))?;
    let body = match format {
        Format::Arrow => write_ipc_stream(&[batch], &requests_schema())
            .map_err(|error| ApiError::Internal(error.to_string()))?,
        other => export::encode_batch(&batch, other)
            .map_err(|error| ApiError::Internal(error.to_string()))?,
    };
    Ok(respond(&snapshot, media_type(format), body))
}

/// `GET /api/provenance`
pub async fn provenance(
    State(store): State<Arc<Store>>,
    headers: HeaderMap,
    Query(params): Params,
) -> Result<Response, ApiError> {
    precomputed_json(&store, &headers, &params, JsonBody::Provenance)
}

/// `GET /api/compare`: the head-to-head as JSON, from the same parameters as `cellscope compare`
/// (`by`, `a`, `b`, `per`, `metric`, `alpha`, `include`, `omit`, dimension filters, `at`).
pub async fn compare(
    State(store): State<Arc<Store>>,
    Query(params): Params,
) -> Result<Response, ApiError> {
    let mut pairs = Vec::new();
    let mut at = None;
    for (name, value) in params {
        match name.as_str() {
            "at" => at = Some(value),
            "format" if value == "json" => {}
            "format" => {
                return Err(ApiError::bad_request(
                    "bad_parameter",
                    "/api/compare is JSON only (format=json)",
                ));
            }
            _ => pairs.push((name, value)),
        }
    }
    let query = cellscope_model::compare::parse_query(&pairs)
        .map_err(|error| ApiError::bad_request("bad_parameter", error.to_string()))?;
    // A pinned link compares the cells of its snapshot while the server keeps it (404 once it is gone).
    let mut pin = Parsed {
        format: None,
        values: at
            .map(|at| ("at".to_string(), vec![at]))
            .into_iter()
            .collect(),
    };
    // The runs come with the cells, from the same snapshot: the confounders name the runs behind each side.
    let (cells, runs) = match pinned(&store, &mut pin)? {
        Pinned::Kept(_, archived) => {
            let index: IndexBody = serde_json::from_slice(&archived.index_json)
                .map_err(|error| ApiError::Internal(error.to_string()))?;
            let cells = cellscope_model::explore::working_cells(
                &kept_cells(&archived.cells_arrow)?,
                &kept_cells(&archived.pre_refill_arrow)?,
                &query.what_if,
            );
            (cells, index.runs)
        }
        Pinned::Current => {
            let snapshot = if query.what_if.pre_refill {
                complete_snapshot(&store).await?
            } else {
                store.load()
            };
            let cells = cellscope_model::explore::working_cells(
                &snapshot.index.cells,
                &snapshot.index.pre_refill_cells,
                &query.what_if,
            );
            (cells, snapshot.index.runs.clone())
        }
    };
    let comparison = query
        .run(&cells)
        .map_err(|error| ApiError::bad_request("bad_parameter", error.to_string()))?;
    let confounders =
        cellscope_model::compare::confounders::confounders(&comparison, &cells, &runs);
    let body = serde_json::to_vec(&CompareBody {
        comparison,
        confounders,
    })
    .map_err(|error| ApiError::Internal(error.to_string()))?;
    Ok((
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response())
}

/// `GET /api/events`: `event: snapshot` with the current id at once, then one per new snapshot.
pub async fn events(
    State(store): State<Arc<Store>>,
    axum::Extension(subscribers): axum::Extension<super::limits::EventSubscribers>,
) -> Result<impl IntoResponse, ApiError> {
    let subscription = subscribers.subscribe()?;
    let current = store.load().id.clone();
    let updates = BroadcastStream::new(store.events.subscribe())
        .filter_map(|message| async move { message.ok() });
    // The stream holds its subscription: when the client goes away the stream is dropped, and its place with it.
    let stream = futures_util::stream::once(async move { current })
        .chain(updates)
        .map(move |id| {
            let _held = &subscription;
            Ok::<Event, Infallible>(Event::default().event("snapshot").data(id))
        });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// Unknown `/api/…` routes.
pub async fn unknown() -> ApiError {
    ApiError::not_found(
        "unknown_route",
        "no such API route; see /api/index, /api/cells, /api/requests, /api/provenance, /api/compare, /api/bundle, /api/events",
    )
}

/// `GET /api/bundle?<query of a view>`: the offline copy of that view (`cellscope bundle`), as a download. It is
/// made from the complete snapshot (refilled cells' rows need the backup comparison).
pub async fn bundle(
    State(store): State<Arc<Store>>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let snapshot = complete_snapshot(&store).await?;
    let made_at_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as u64);
    let building = snapshot.clone();
    let built = tokio::task::spawn_blocking(move || {
        crate::bundle::build(
            &building,
            query.as_deref().unwrap_or_default(),
            made_at_unix_ms,
        )
    })
    .await
    .map_err(|error| ApiError::Internal(error.to_string()))?;
    let bundle = built.map_err(|error| match error {
        crate::bundle::BundleError::NoApp => ApiError::not_found("no_app", error.to_string()),
        other => ApiError::Internal(other.to_string()),
    })?;
    let disposition = format!("attachment; filename=\"cellscope-{}.html\"", snapshot.id);
    Ok((
        [
            (
                CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (CACHE_CONTROL, HeaderValue::from_static("no-store")),
            (
                axum::http::header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&disposition)
                    .map_err(|error| ApiError::Internal(error.to_string()))?,
            ),
        ],
        bundle.html,
    )
        .into_response())
}

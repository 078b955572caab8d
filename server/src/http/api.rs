//! The JSON and Arrow API: `/api/index`, `/api/cells`, `/api/requests`, `/api/provenance`, `/api/compare`,
//! `/api/events`, `/api/bundle`. Every handler reads its parameters through [`ApiQuery`], the model's typed query.

use super::archive::Archived;
use super::bodies;
use super::encoding::accepted_encoding;
use super::error::ApiError;
use super::query::{ApiQuery, refused};
use super::snapshot::{Snapshot, Store, name_snapshot};
use crate::export::{self, Format};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, ETAG, IF_NONE_MATCH, VARY,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use cellscope_model::api::{CompareBody, IndexBody};
use cellscope_model::compare::CompareQuery;
use cellscope_model::filter::{dimension_counts, dimension_values};
use cellscope_model::key::Value;
use cellscope_model::query::{CellLookupError, Endpoint, Query};
use cellscope_model::requests::{requests_schema, requests_to_batch};
use cellscope_model::schema::{ARROW_STREAM_MEDIA_TYPE, cells_from_ipc, write_ipc_stream};
use cellscope_model::{CellKey, CellSummary, Dimension};
use futures_util::StreamExt as _;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use tokio_stream::wrappers::BroadcastStream;

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

/// Which snapshot a request reads: the current one, or a kept one named by `at=` (a pinned link).
enum Pinned {
    Current,
    Kept(String, Archived),
}

/// The snapshot `at` names; a snapshot no longer kept is a 404 that says so.
fn pinned(store: &Store, at: Option<&str>) -> Result<Pinned, ApiError> {
    let Some(at) = at else {
        return Ok(Pinned::Current);
    };
    let current = store.load().id.clone();
    if at == current {
        return Ok(Pinned::Current);
    }
    match store.archive.as_ref().and_then(|archive| archive.load(at)) {
        Some(archived) => Ok(Pinned::Kept(at.to_string(), archived)),
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
    query: &Query,
    which: JsonBody,
) -> Result<Response, ApiError> {
    if let Pinned::Kept(id, archived) = pinned(store, query.at.as_deref())? {
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
    ApiQuery { query, .. }: ApiQuery,
) -> Result<Response, ApiError> {
    precomputed_json(&store, &headers, &query, JsonBody::Index)
}

/// The cells a `/api/cells` query selects: the model's dimension filter plus `status=`. A value no cell of the
/// data has (`known`: each dimension's values) is refused with the dimension's values, and the one meant when
/// it is close, rather than answered with no cells.
fn cell_filter(
    query: &Query,
    known: &BTreeMap<Dimension, Vec<Value>>,
) -> Result<impl Fn(&CellSummary) -> bool + Send + use<>, ApiError> {
    query
        .cells_selector(known)
        .map_err(|unknown| ApiError::bad_request("unknown_value", unknown.to_string()))
}

/// Whether a `/api/cells` query selects a slice rather than the whole table.
fn selects_slice(query: &Query) -> bool {
    !query.filter.values.is_empty() || !query.status.is_empty()
}

/// The values that shape a slice's body, by parameter name, for its key among the kept bodies.
fn slice_values(query: &Query) -> BTreeMap<String, Vec<String>> {
    let mut values: BTreeMap<String, Vec<String>> = query
        .filter
        .values
        .iter()
        .map(|(dimension, values)| (dimension.name().to_string(), values.clone()))
        .collect();
    if !query.status.is_empty() {
        let statuses = query
            .status
            .iter()
            .map(|status| status.as_str().to_string());
        values.insert("status".into(), statuses.collect());
    }
    values
}

/// Whether `/api/cells` is asked for the pre-refill table; the other toggles are refused ([`Query::cells_pre_refill`]).
fn cells_toggles(query: &Query) -> Result<bool, ApiError> {
    query
        .cells_pre_refill()
        .map_err(|error| refused(Endpoint::Cells, &error))
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
    ApiQuery { query, .. }: ApiQuery,
) -> Result<Response, ApiError> {
    let format = query.format.unwrap_or(Format::Arrow);
    // `include=pre_refill`: the refilled cells as they were before the refill (the what-if of the app).
    let pre_refill = cells_toggles(&query)?;
    if let Pinned::Kept(id, archived) = pinned(&store, query.at.as_deref())? {
        return kept_cells_body(&headers, &query, &id, archived, pre_refill);
    }
    let snapshot = if pre_refill {
        complete_snapshot(&store).await?
    } else {
        store.load()
    };
    let filter = cell_filter(&query, &snapshot.dimension_values)?;
    if let Some(response) = not_modified(&headers, &snapshot) {
        return Ok(response);
    }
    if !selects_slice(&query) && format == Format::Arrow && !pre_refill {
        return whole_table(snapshot, headers).await;
    }
    // A slice: built and compressed once per snapshot and normalised query, then served from memory.
    let key = bodies::key(format.name(), pre_refill, &slice_values(&query));
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

/// The cells of a kept snapshot (a pinned link), whole or sliced.
fn kept_cells_body(
    headers: &HeaderMap,
    query: &Query,
    id: &str,
    archived: Archived,
    pre_refill: bool,
) -> Result<Response, ApiError> {
    let format = query.format.unwrap_or(Format::Arrow);
    let arrow = if pre_refill {
        archived.pre_refill_arrow
    } else {
        archived.cells_arrow
    };
    if !selects_slice(query) && format == Format::Arrow {
        return Ok(respond_kept(headers, id, media_type(format), arrow));
    }
    let kept = kept_cells(&arrow)?;
    let known = dimension_values(&dimension_counts(&kept));
    let filter = cell_filter(query, &known)?;
    let selected: Vec<CellSummary> = kept.into_iter().filter(|cell| filter(cell)).collect();
    let body =
        export::encode(&selected, format).map_err(|error| ApiError::Internal(error.to_string()))?;
    Ok(respond_kept(headers, id, media_type(format), body))
}

/// The whole cells table, precompressed per snapshot in the encodings the client accepts.
async fn whole_table(snapshot: Arc<Snapshot>, headers: HeaderMap) -> Result<Response, ApiError> {
    let media_type = media_type(Format::Arrow);
    if accepted_encoding(&headers).is_some_and(|encoding| encoding != "zstd") {
        // Brotli or gzip is made on the first request that needs it: off the async workers.
        return tokio::task::spawn_blocking(move || {
            respond_encoded(
                &snapshot,
                &headers,
                media_type,
                &snapshot.cells_arrow,
                |encoding| snapshot.cells_arrow_compressed.get(encoding),
            )
        })
        .await
        .map_err(|error| ApiError::Internal(error.to_string()));
    }
    Ok(respond_encoded(
        &snapshot,
        &headers,
        media_type,
        &snapshot.cells_arrow,
        |encoding| snapshot.cells_arrow_compressed.get(encoding),
    ))
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

/// The one cell a request for rows names in `snapshot`: none is a 404; several (suite or backend left out where
/// they tell cells apart) a 400 naming what to add.
fn requested_cell(snapshot: &Snapshot, query: &Query) -> Result<CellKey, ApiError> {
    let request = query
        .cell_request()
        .map_err(|error| refused(Endpoint::Requests, &error))?;
    match request.find_in(&snapshot.index.rows) {
        Ok(key) => Ok(key.clone()),
        Err(error @ CellLookupError::Unknown) => {
            Err(ApiError::not_found(error.code(), error.to_string()))
        }
        Err(error) => Err(ApiError::bad_request(error.code(), error.to_string())),
    }
}

/// `GET /api/requests?cell=run/suite/phase/backend/model/workload/n=N/rep=R`, or the cell's dimensions
/// (`run`, `phase`, `model`, `workload`, `n`, `rep`; `suite`, `backend` when ambiguous).
pub async fn requests(
    State(store): State<Arc<Store>>,
    headers: HeaderMap,
    ApiQuery { query, .. }: ApiQuery,
) -> Result<Response, ApiError> {
    let format = query.format.unwrap_or(Format::Arrow);
    query
        .cell_request()
        .map_err(|error| refused(Endpoint::Requests, &error))?;
    let mut snapshot = store.load();
    if let Some(response) = not_modified(&headers, &snapshot) {
        return Ok(response);
    }
    let key = requested_cell(&snapshot, &query)?;
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
    ApiQuery { query, .. }: ApiQuery,
) -> Result<Response, ApiError> {
    precomputed_json(&store, &headers, &query, JsonBody::Provenance)
}

/// The working cells of the snapshot a comparison reads (the current one, or a kept one for a pinned link, while
/// the server keeps it), with its runs: the confounders name the runs behind each side.
async fn compared_cells(
    store: &Store,
    query: &Query,
) -> Result<(Vec<CellSummary>, Vec<cellscope_model::api::RunFacts>), ApiError> {
    let what_if = &query.what_if;
    match pinned(store, query.at.as_deref())? {
        Pinned::Kept(_, archived) => {
            let index: IndexBody = serde_json::from_slice(&archived.index_json)
                .map_err(|error| ApiError::Internal(error.to_string()))?;
            let cells = cellscope_model::explore::working_cells(
                &kept_cells(&archived.cells_arrow)?,
                &kept_cells(&archived.pre_refill_arrow)?,
                what_if,
            );
            Ok((cells, index.runs))
        }
        Pinned::Current => {
            let snapshot = if what_if.pre_refill {
                complete_snapshot(store).await?
            } else {
                store.load()
            };
            let cells = cellscope_model::explore::working_cells(
                &snapshot.index.cells,
                &snapshot.index.pre_refill_cells,
                what_if,
            );
            Ok((cells, snapshot.index.runs.clone()))
        }
    }
}

/// `GET /api/compare`: the head-to-head as JSON, from the same parameters as `cellscope compare`
/// (`by`, `a`, `b`, `per`, `metric`, `alpha`, `include`, `omit`, dimension filters, `at`).
pub async fn compare(
    State(store): State<Arc<Store>>,
    ApiQuery { query, .. }: ApiQuery,
) -> Result<Response, ApiError> {
    let compared = CompareQuery::from_query(&query)
        .map_err(|error| ApiError::bad_request("bad_parameter", error.to_string()))?;
    let (cells, runs) = compared_cells(&store, &query).await?;
    let query = compared;
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

/// `GET /api/history`: every History of the slice as JSON, from the same parameters as `cellscope history`
/// (`metric`, `window`, `pvalue`, `k`, `tolerance`, `since`, dimension filters, `include`, `omit`, `at`).
pub async fn history(
    State(store): State<Arc<Store>>,
    ApiQuery { query, .. }: ApiQuery,
) -> Result<Response, ApiError> {
    let asked = cellscope_model::history::HistoryQuery::from_query(&query)
        .map_err(|error| ApiError::bad_request(error.code(), error.to_string()))?;
    let (cells, runs) = compared_cells(&store, &query).await?;
    let body = serde_json::to_vec(&asked.run(&cells, &runs))
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
    _query: ApiQuery,
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
        "no such API route; see /api/index, /api/cells, /api/requests, /api/provenance, /api/compare, /api/history, /api/bundle, /api/events",
    )
}

/// `GET /api/bundle?<query of a view>`: the offline copy of that view (`cellscope bundle`), as a download. It is
/// made from the complete snapshot (refilled cells' rows need the backup comparison).
pub async fn bundle(
    State(store): State<Arc<Store>>,
    ApiQuery { raw, .. }: ApiQuery,
) -> Result<Response, ApiError> {
    let snapshot = complete_snapshot(&store).await?;
    let made_at_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as u64);
    let building = snapshot.clone();
    let built =
        tokio::task::spawn_blocking(move || crate::bundle::build(&building, &raw, made_at_unix_ms))
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

//! Fetching the API: the index and provenance as the model's typed JSON bodies, the cells and request rows as
//! Arrow IPC decoded with the model crate.

use cellscope_model::CellSummary;
use cellscope_model::api::{ErrorBody, IndexBody, Provenance};
use cellscope_model::requests::{RequestRow, requests_from_ipc};
use cellscope_model::schema::cells_from_ipc;
use futures::future::LocalBoxFuture;
use gloo_net::http::Request;
use leptos::wasm_split::{SplitLoaderError, wasm_split};
use serde::de::DeserializeOwned;

/// How long one request may take before it counts as failed.
const TIMEOUT_MS: u32 = 20_000;

/// Why a request failed, in words a user can act on, with the server's error code when it gave one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Failure {
    pub message: String,
    pub code: Option<String>,
    /// Worth one more try: no answer in time, no connection, or the server said it is busy.
    transient: bool,
}

impl Failure {
    fn transient(message: String) -> Failure {
        Failure {
            message,
            code: None,
            transient: true,
        }
    }
}

async fn fetch_once(url: &str) -> Result<Vec<u8>, Failure> {
    if crate::offline::is_offline() {
        // An offline copy answers from its own data, and what it does not hold it cannot fetch.
        return crate::offline::body(url).await.ok_or_else(|| Failure {
            message: format!(
                "{url}: not in this offline copy (it holds the cells, provenance and the request rows of the \
                 cells in the view it was made for; open the live server for the rest)"
            ),
            code: Some("not_in_offline_copy".into()),
            transient: false,
        });
    }
    let signal = web_sys::AbortSignal::timeout_with_u32(TIMEOUT_MS);
    let response = Request::get(url)
        .abort_signal(Some(&signal))
        .send()
        .await
        .map_err(|error| match error {
            gloo_net::Error::JsError(error)
                if error.name == "TimeoutError" || error.name == "AbortError" =>
            {
                Failure::transient(format!(
                    "{url}: the server did not answer within {} s",
                    TIMEOUT_MS / 1000
                ))
            }
            _ => Failure::transient(format!(
                "{url}: cannot reach the cellscope server (is it still running?)"
            )),
        })?;
    if !response.ok() {
        let status = response.status();
        let body = response.binary().await.unwrap_or_default();
        // The server's errors are `{"error": {"code", "message"}}`; say the message, not the JSON.
        let (code, message) = match serde_json::from_slice::<ErrorBody>(&body) {
            Ok(body) => (Some(body.error.code), body.error.message),
            Err(_) => (None, String::from_utf8_lossy(&body).into_owned()),
        };
        return Err(Failure {
            message: format!("{url}: HTTP {status}: {message}"),
            code,
            transient: status >= 500,
        });
    }
    response.binary().await.map_err(|_| {
        Failure::transient(format!(
            "{url}: the connection broke while the answer arrived"
        ))
    })
}

/// The body of `GET url`: one retry after a transient failure, then a specific error.
async fn fetch(url: &str) -> Result<Vec<u8>, Failure> {
    match fetch_once(url).await {
        Err(failure) if failure.transient => fetch_once(url).await,
        other => other,
    }
}

fn decoding(url: &str, error: impl std::fmt::Display) -> Failure {
    Failure {
        message: format!("{url}: {error}"),
        code: None,
        transient: false,
    }
}

async fn json<T: DeserializeOwned>(url: &str) -> Result<T, Failure> {
    let body = fetch(url).await?;
    serde_json::from_slice(&body).map_err(|error| decoding(url, error))
}

pub(crate) async fn cells(url: &str) -> Result<Vec<CellSummary>, Failure> {
    let body = fetch(url).await?;
    cells_from_ipc(&body).map_err(|error| decoding(url, error))
}

pub(crate) async fn requests(query: &str) -> Result<Vec<RequestRow>, String> {
    let url = format!("/api/requests?{query}");
    let body = fetch(&url).await.map_err(|failure| {
        if failure.code.as_deref() == Some("not_in_offline_copy") {
            rows_not_in_copy()
        } else {
            failure.message
        }
    })?;
    requests_from_ipc(&body).map_err(|error| format!("{url}: {error}"))
}

/// Why an offline copy shows no request rows for a cell, in words: it is a property of the copy, so nothing
/// the reader can retry.
fn rows_not_in_copy() -> String {
    let held = crate::offline::meta().map_or(0, |meta| meta.cells_with_rows);
    format!(
        "This offline copy does not hold the request rows of this cell: it carries them only for the {held} cells \
         of the view it was made for. The cell's summary above is complete; open the live server to see its rows."
    )
}

/// `GET /api/index`.
pub(crate) async fn index() -> Result<IndexBody, String> {
    json("/api/index").await.map_err(|failure| failure.message)
}

/// `GET /api/index` of snapshot `at` (the current one when `None`).
pub(crate) async fn index_at(at: Option<&str>) -> Result<IndexBody, String> {
    json(&format!("/api/index{}", at_query(at, '?')))
        .await
        .map_err(|failure| failure.message)
}

/// `GET /api/provenance` of snapshot `at` (the current one when `None`), decoded by the details' chunk.
pub(crate) async fn provenance_at(at: Option<String>) -> Result<Provenance, String> {
    (details()
        .await
        .map_err(|error| details_unloaded(&error))?
        .provenance)(at)
    .await
}

/// `GET /api/provenance` of snapshot `at`, decoded.
async fn provenance_of(at: Option<String>) -> Result<Provenance, String> {
    json(&format!("/api/provenance{}", at_query(at.as_deref(), '?')))
        .await
        .map_err(|failure| failure.message)
}

/// Everything the app loads at start (and again when the data changes).
#[derive(Clone, Debug)]
pub(crate) struct Dataset {
    pub snapshot: String,
    pub index: IndexBody,
    /// Arrives after the first view is drawn.
    pub provenance: Option<Provenance>,
    pub cells: Vec<CellSummary>,
    pub pre_refill: Vec<CellSummary>,
    /// The snapshot a link asked for when the server no longer keeps it (the latest data is shown instead).
    pub gone: Option<String>,
}

/// `?at=<snapshot>` to append to an API path, or nothing for the current snapshot.
fn at_query(at: Option<&str>, separator: char) -> String {
    at.map(|at| format!("{separator}at={at}"))
        .unwrap_or_default()
}

/// What the first view needs: the index and the cells of snapshot `at` (the current one when `None`), fetched
/// concurrently. A snapshot the server no longer keeps falls back to the current data, saying so in `gone`.
/// Provenance and the pre-refill cells follow in [`load_details`], so the first chart does not wait for them.
pub(crate) async fn load(at: Option<String>) -> Result<Dataset, String> {
    let index_url = format!("/api/index{}", at_query(at.as_deref(), '?'));
    let cells_url = format!("/api/cells{}", at_query(at.as_deref(), '?'));
    let (index, cells) = futures::join!(json::<IndexBody>(&index_url), cells(&cells_url));
    match (index, cells) {
        (Ok(index), Ok(cells)) => Ok(Dataset {
            snapshot: index.snapshot.clone(),
            index,
            provenance: None,
            cells,
            pre_refill: Vec::new(),
            gone: None,
        }),
        (Err(failure), _) | (_, Err(failure))
            if at.is_some() && failure.code.as_deref() == Some("snapshot_gone") =>
        {
            let mut dataset = Box::pin(load(None)).await?;
            dataset.gone = at;
            Ok(dataset)
        }
        (Err(failure), _) | (_, Err(failure)) => Err(failure.message),
    }
}

/// Provenance (skip reasons, refill notes, ledger matches, manifest histories) and the pre-refill cells of
/// snapshot `at`. Decoding provenance is code of its own chunk, fetched beside these bodies after the first view's
/// data, so the first screen's download does not carry it.
pub(crate) async fn load_details(
    at: Option<String>,
) -> Result<(Provenance, Vec<CellSummary>), String> {
    (details()
        .await
        .map_err(|error| details_unloaded(&error))?
        .load)(at)
    .await
}

fn details_unloaded(error: &SplitLoaderError) -> String {
    format!(
        "cannot load the code that reads provenance ({error}); the server may have a newer version of the app: \
         reloading the page loads it"
    )
}

/// A future of the details' chunk, which the shell awaits without knowing its type.
type Pending<T> = LocalBoxFuture<'static, Result<T, String>>;

/// Provenance and the pre-refill cells.
type Loaded = (Provenance, Vec<CellSummary>);

/// The details' chunk: what reads the bodies the first view does not wait for.
struct Details {
    load: fn(Option<String>) -> Pending<Loaded>,
    provenance: fn(Option<String>) -> Pending<Provenance>,
}

// A split point as in `views.rs`: the macro's `extern` declarations are its only unsafe code.
#[allow(unsafe_code)] // SAFETY: see `views.rs`.
#[wasm_split(later_details, wasm_split_path = ::leptos::wasm_split, fallible)]
fn details() -> Result<Details, SplitLoaderError> {
    Ok(Details {
        load: |at| Box::pin(details_of(at)),
        provenance: |at| Box::pin(provenance_of(at)),
    })
}

async fn details_of(at: Option<String>) -> Result<(Provenance, Vec<CellSummary>), String> {
    let provenance_url = format!("/api/provenance{}", at_query(at.as_deref(), '?'));
    let pre_refill_url = format!(
        "/api/cells?{}{}",
        cellscope_model::query::PRE_REFILL_CELLS,
        at_query(at.as_deref(), '&')
    );
    let (provenance, pre_refill) =
        futures::join!(json::<Provenance>(&provenance_url), cells(&pre_refill_url));
    Ok((
        provenance.map_err(|failure| failure.message)?,
        pre_refill.unwrap_or_default(),
    ))
}

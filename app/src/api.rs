//! Fetching the API: the index and provenance as the model's typed JSON bodies, the cells and request rows as
//! Arrow IPC decoded with the model crate.

use cellscope_model::CellSummary;
use cellscope_model::api::{ErrorBody, IndexBody, Provenance};
use cellscope_model::requests::{RequestRow, requests_from_batch};
use cellscope_model::schema::{cells_from_batch, read_ipc_stream};
use gloo_net::http::Request;
use serde::de::DeserializeOwned;

/// How long one request may take before it counts as failed.
const TIMEOUT_MS: u32 = 20_000;

/// Why a request failed, in words a user can act on.
enum Failure {
    /// Worth one more try: no answer in time, no connection, or the server said it is busy.
    Transient(String),
    Final(String),
}

async fn fetch_once(url: &str) -> Result<Vec<u8>, Failure> {
    let signal = web_sys::AbortSignal::timeout_with_u32(TIMEOUT_MS);
    let response = Request::get(url)
        .abort_signal(Some(&signal))
        .send()
        .await
        .map_err(|error| match error {
            gloo_net::Error::JsError(error)
                if error.name == "TimeoutError" || error.name == "AbortError" =>
            {
                Failure::Transient(format!(
                    "{url}: the server did not answer within {} s",
                    TIMEOUT_MS / 1000
                ))
            }
            _ => Failure::Transient(format!(
                "{url}: cannot reach the cellscope server (is it still running?)"
            )),
        })?;
    if !response.ok() {
        let status = response.status();
        let body = response.binary().await.unwrap_or_default();
        // The server's errors are `{"error": {"code", "message"}}`; say the message, not the JSON.
        let message = serde_json::from_slice::<ErrorBody>(&body)
            .map(|body| body.error.message)
            .unwrap_or_else(|_| String::from_utf8_lossy(&body).into_owned());
        let text = format!("{url}: HTTP {status}: {message}");
        return Err(if status >= 500 {
            Failure::Transient(text)
        } else {
            Failure::Final(text)
        });
    }
    response.binary().await.map_err(|_| {
        Failure::Transient(format!(
            "{url}: the connection broke while the answer arrived"
        ))
    })
}

/// The body of `GET url`: one retry after a transient failure, then a specific error.
async fn bytes(url: &str) -> Result<Vec<u8>, String> {
    match fetch_once(url).await {
        Ok(body) => Ok(body),
        Err(Failure::Final(message)) => Err(message),
        Err(Failure::Transient(_)) => fetch_once(url).await.map_err(|failure| match failure {
            Failure::Transient(message) | Failure::Final(message) => message,
        }),
    }
}

async fn json<T: DeserializeOwned>(url: &str) -> Result<T, String> {
    let body = bytes(url).await?;
    serde_json::from_slice(&body).map_err(|error| format!("{url}: {error}"))
}

pub async fn cells(url: &str) -> Result<Vec<CellSummary>, String> {
    let body = bytes(url).await?;
    let batches = read_ipc_stream(&body).map_err(|error| format!("{url}: {error}"))?;
    let mut cells = Vec::new();
    for batch in &batches {
        cells.extend(cells_from_batch(batch).map_err(|error| format!("{url}: {error}"))?);
    }
    Ok(cells)
}

pub async fn requests(query: &str) -> Result<Vec<RequestRow>, String> {
    let url = format!("/api/requests?{query}");
    let body = bytes(&url).await?;
    let batches = read_ipc_stream(&body).map_err(|error| format!("{url}: {error}"))?;
    let mut rows = Vec::new();
    for batch in &batches {
        rows.extend(requests_from_batch(batch).map_err(|error| format!("{url}: {error}"))?);
    }
    Ok(rows)
}

/// `GET /api/index`.
pub async fn index() -> Result<IndexBody, String> {
    json("/api/index").await
}

/// Everything the app loads at start (and again when the data changes).
#[derive(Clone, Debug)]
pub struct Dataset {
    pub snapshot: String,
    pub index: IndexBody,
    /// Arrives after the first view is drawn.
    pub provenance: Option<Provenance>,
    pub cells: Vec<CellSummary>,
    pub pre_refill: Vec<CellSummary>,
}

/// What the first view needs: the index and the cells, fetched concurrently. Provenance and the pre-refill cells
/// follow in [`load_details`], so the first chart does not wait for them.
pub async fn load() -> Result<Dataset, String> {
    let (index, cells) = futures::join!(json::<IndexBody>("/api/index"), cells("/api/cells"));
    let index = index?;
    Ok(Dataset {
        snapshot: index.snapshot.clone(),
        index,
        provenance: None,
        cells: cells?,
        pre_refill: Vec::new(),
    })
}

/// Provenance (skip reasons, refill notes, ledger matches, manifest histories) and the pre-refill cells.
pub async fn load_details() -> Result<(Provenance, Vec<CellSummary>), String> {
    let (provenance, pre_refill) = futures::join!(
        json::<Provenance>("/api/provenance"),
        cells("/api/cells?lineage=pre_refill")
    );
    Ok((provenance?, pre_refill.unwrap_or_default()))
}

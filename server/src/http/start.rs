//! The start of `serve`: the listener is bound at once and the app's files are served while the first index is
//! built; API requests wait for it, except the app's first requests (index, cells, provenance, pre-refill cells),
//! which are answered from the kept snapshot when every entry under the data root is as it was when that snapshot
//! was made (a warm start that does not wait for indexing).
//!
//! The kept answers are trusted on the same terms as the cache of read results' first snapshot: sizes,
//! modification and change times of every entry under the root, and the build of cellscope itself
//! ([`inputs_fingerprint`]). The index is built behind it as on every start, and its second stage checks the files'
//! contents; a snapshot that differs from the one answered is announced on `/api/events` like any change.

use super::archive::KeptBodies;
pub use super::inputs::inputs_fingerprint;
use super::limits::EventSubscribers;
use super::routes::{HttpOptions, api_routes, with_middleware};
use super::snapshot::Store;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, VARY};
use axum::http::{HeaderValue, Method};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use cellscope_model::query::{Endpoint, Query, WhatIf};
use std::convert::Infallible;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

/// The kept body that answers `GET path?query` before the store is ready, with its media type: the app's first
/// requests, each without query but the pre-refill cells (`include=pre_refill`, or `lineage=pre_refill` as older
/// pages ask).
fn kept_answer<'a>(
    kept: &'a KeptBodies,
    path: &str,
    query: Option<&str>,
) -> Option<(&'a Bytes, &'static str)> {
    let arrow = cellscope_model::schema::ARROW_STREAM_MEDIA_TYPE;
    let query = query.unwrap_or_default();
    match (path, query) {
        ("/api/index", "") => Some((&kept.index_json_zstd, "application/json")),
        ("/api/provenance", "") => Some((&kept.provenance_json_zstd, "application/json")),
        ("/api/cells", _) => {
            let asked = Query::parse(query, Endpoint::Cells).ok()?;
            let pre_refill = Query {
                what_if: WhatIf {
                    pre_refill: true,
                    ..WhatIf::DEFAULT
                },
                ..Query::DEFAULT
            };
            if asked == Query::DEFAULT {
                Some((&kept.cells_arrow_zstd, arrow))
            } else if asked == pre_refill {
                Some((&kept.pre_refill_arrow_zstd, arrow))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The routers of a ready server: `full` with its middleware, and its bare API routes for the requests that
/// arrived while it started (they have been through the middleware once already).
struct Routers {
    full: Router,
    api: Router,
}

struct Shared {
    kept: Option<KeptBodies>,
    options: HttpOptions,
    subscribers: EventSubscribers,
    routers: OnceLock<Routers>,
    ready: tokio::sync::Notify,
    url: String,
    started: std::time::Instant,
}

impl Shared {
    /// The bare API routes, once the store is ready.
    async fn api(&self) -> Router {
        loop {
            // Created before the check, so a `notify_waiters` between the check and the wait still wakes it.
            let notified = self.ready.notified();
            if let Some(routers) = self.routers.get() {
                return routers.api.clone();
            }
            notified.await;
        }
    }
}

/// The service a server runs from its first moment: before the store is ready it serves the app's files, answers
/// the app's first requests from the kept snapshot and holds other API requests until the index is built; after,
/// it hands every request to the full router.
#[derive(Clone)]
pub struct Starting {
    shared: Arc<Shared>,
    starting: Router,
}

impl Starting {
    /// A server listening on `listener`, answering the app's first requests from `kept` until it is
    /// [`Starting::ready`].
    pub fn new(
        listener: &tokio::net::TcpListener,
        kept: Option<KeptBodies>,
        options: &HttpOptions,
    ) -> Result<Starting, String> {
        let url = listener
            .local_addr()
            .map(|local| format!("http://{local}/"))
            .map_err(|error| error.to_string())?;
        let shared = Arc::new(Shared {
            kept,
            options: options.clone(),
            subscribers: EventSubscribers::new(options.limits.max_event_subscribers),
            routers: OnceLock::new(),
            ready: tokio::sync::Notify::new(),
            url,
            started: std::time::Instant::now(),
        });
        let routes = Router::new()
            .route("/api/index", any(kept_or_wait))
            .route("/api/provenance", any(kept_or_wait))
            .route("/api/cells", any(kept_or_wait))
            .route("/api", any(wait))
            .route("/api/{*rest}", any(wait))
            .with_state(Arc::clone(&shared));
        let starting = with_middleware(routes, options, &shared.subscribers)?;
        Ok(Starting { shared, starting })
    }

    /// Serves `store` from now on, and lets the requests that waited for it through.
    pub fn ready(&self, store: Arc<Store>) -> Result<(), String> {
        let snapshot = store.load();
        tracing::info!(
            url = %self.shared.url,
            root = %store.root.display(),
            runs = snapshot.index.runs.len(),
            cells = snapshot.index.cells.len(),
            index_ms = format!("{:.1}", snapshot.index.elapsed.as_secs_f64() * 1e3),
            app = super::assets::app_embedded(),
            "cellscope serving"
        );
        if let Some(kept) = &self.shared.kept
            && kept.id != snapshot.id
        {
            // Files with unchanged sizes and times but other contents; clients see the new id on `/api/events`.
            tracing::warn!(
                answered = %kept.id,
                indexed = %snapshot.id,
                "the kept snapshot answered at start is not the one the files index to now"
            );
        }
        let api = api_routes(store);
        let full = with_middleware(api.clone(), &self.shared.options, &self.shared.subscribers)?;
        self.shared
            .routers
            .set(Routers { full, api })
            .map_err(|_| "the server was made ready twice".to_string())?;
        self.shared.ready.notify_waiters();
        Ok(())
    }

    /// Serves on `listener` until `shutdown` completes, then until every connection has finished its request in
    /// progress.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let limits = self.shared.options.connections.clone();
        super::connections::serve(listener, self, &limits, shutdown).await;
        Ok(())
    }
}

impl tower::Service<Request> for Starting {
    type Response = Response;
    type Error = Infallible;
    type Future = axum::routing::future::RouteFuture<Infallible>;

    fn poll_ready(&mut self, _context: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Both routers are always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match self.shared.routers.get() {
            Some(routers) => routers.full.clone().call(request),
            None => self.starting.clone().call(request),
        }
    }
}

/// Any API request before the store is ready: held until it is, then answered by the API's own routes; after
/// [`super::limits::Limits::first_index_wait`], a `503` that says the index is still being built.
async fn wait(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    use tower::ServiceExt as _;
    let Ok(api) = tokio::time::timeout(shared.options.limits.first_index_wait, shared.api()).await
    else {
        return super::error::ApiError::Unavailable(format!(
            "the server is still building its first index of the data ({:.0} s since it started); retry in a moment",
            shared.started.elapsed().as_secs_f64()
        ))
        .into_response();
    };
    match api.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// The index, provenance and cells routes before the store is ready: a kept body for a plain `GET` (the only
/// query the app sends here being the pre-refill lineage) from a client that takes zstd (every current browser
/// does); anything else waits.
async fn kept_or_wait(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let kept = shared.kept.as_ref().filter(|_| {
        request.method() == Method::GET
            && super::encoding::accepted_encoding(request.headers()) == Some("zstd")
    });
    match kept.and_then(|kept| {
        let (body, media_type) = kept_answer(kept, request.uri().path(), request.uri().query())?;
        Some(kept_response(&kept.id, body, media_type))
    }) {
        Some(response) => response,
        None => wait(State(shared), request).await,
    }
}

/// A kept body with the headers its route gives the same body, less the ETag: a revalidation after the start goes
/// to the new snapshot, which sends the body again.
fn kept_response(id: &str, body: &Bytes, media_type: &'static str) -> Response {
    let mut response = (
        [
            (CONTENT_TYPE, HeaderValue::from_static(media_type)),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (CONTENT_ENCODING, HeaderValue::from_static("zstd")),
            (VARY, HeaderValue::from_static("accept-encoding")),
        ],
        body.clone(),
    )
        .into_response();
    super::snapshot::name_snapshot(&mut response, id);
    response
}

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
use super::limits::EventSubscribers;
use super::snapshot::Store;
use super::{HttpOptions, api_routes, with_middleware};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, VARY};
use axum::http::{HeaderValue, Method};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use sha2::Digest as _;
use std::convert::Infallible;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

/// The kept body that answers `GET path?query` before the store is ready, with its media type: the app's first
/// requests, each without query (the pre-refill cells being the one query it sends there).
fn kept_answer<'a>(
    kept: &'a KeptBodies,
    path: &str,
    query: Option<&str>,
) -> Option<(&'a Bytes, &'static str)> {
    let arrow = cellscope_model::schema::ARROW_STREAM_MEDIA_TYPE;
    match (path, query.unwrap_or_default()) {
        ("/api/index", "") => Some((&kept.index_json_zstd, "application/json")),
        ("/api/provenance", "") => Some((&kept.provenance_json_zstd, "application/json")),
        ("/api/cells", "") => Some((&kept.cells_arrow_zstd, arrow)),
        ("/api/cells", "lineage=pre_refill") => Some((&kept.pre_refill_arrow_zstd, arrow)),
        _ => None,
    }
}

/// A fingerprint of everything an index of `root` can read and of the code that would read it: the cellscope
/// version, the hash of the indexer's sources and the running executable's size and times, then every entry under
/// the root in name order (symbolic links not followed, as discovery does not follow them) with its kind, size,
/// modification time and, on Unix, permissions and change time. An added, removed, rewritten, touched or
/// re-permissioned file changes it; so does a new build of cellscope.
pub fn inputs_fingerprint(root: &Path) -> std::io::Result<String> {
    let mut hash = sha2::Sha256::new();
    hash.update(b"cellscope inputs 1\0");
    hash.update(env!("CARGO_PKG_VERSION").as_bytes());
    hash.update(cellscope_index::READ_CODE.as_bytes());
    let executable = std::fs::metadata(std::env::current_exe()?)?;
    update_with_metadata(&mut hash, &executable);
    hash.update(root.as_os_str().as_encoded_bytes());
    hash.update([0]);
    walk(root, "", &mut hash)?;
    Ok(cellscope_index::hex::hex(&hash.finalize()))
}

fn walk(directory: &Path, relative: &str, hash: &mut sha2::Sha256) -> std::io::Result<()> {
    let mut entries = std::fs::read_dir(directory)?.collect::<Result<Vec<_>, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name();
        let path = format!("{relative}/{}", name.to_string_lossy());
        // `DirEntry::metadata` does not follow symbolic links.
        let metadata = entry.metadata()?;
        hash.update(path.as_bytes());
        hash.update([0]);
        let kind = metadata.file_type();
        hash.update([if kind.is_dir() {
            b'd'
        } else if kind.is_symlink() {
            b'l'
        } else if kind.is_file() {
            b'f'
        } else {
            b'o'
        }]);
        if kind.is_dir() {
            // A directory that cannot be listed is part of what an index sees (it warns about it).
            match walk(&entry.path(), &path, hash) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied => {
                    hash.update(b"unreadable\0");
                }
                Err(error) => return Err(error),
            }
        } else {
            update_with_metadata(hash, &metadata);
        }
    }
    hash.update(b"end\0");
    Ok(())
}

fn update_with_metadata(hash: &mut sha2::Sha256, metadata: &std::fs::Metadata) {
    hash.update(metadata.len().to_le_bytes());
    let modified_ns = metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |elapsed| elapsed.as_nanos());
    hash.update(modified_ns.to_le_bytes());
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        hash.update(metadata.mode().to_le_bytes());
        hash.update(metadata.ctime().to_le_bytes());
        hash.update(metadata.ctime_nsec().to_le_bytes());
        hash.update(metadata.ino().to_le_bytes());
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

    /// Serves on `listener` until `shutdown` completes.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        use anyhow::Context as _;
        use axum::ServiceExt as _;
        // Over-long links are rewritten before the HTTP library would refuse them with a blank page.
        axum::serve(
            super::long_links::LongLinkListener(listener),
            self.into_make_service(),
        )
        .with_graceful_shutdown(shutdown)
        .await
        .context("serving")
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
            && super::api::accepted_encoding(request.headers()) == Some("zstd")
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
    super::api::name_snapshot(&mut response, id);
    response
}

#[cfg(test)]
mod tests {
    use super::inputs_fingerprint;

    #[test]
    fn the_fingerprint_follows_names_sizes_times_and_permissions_but_not_reads() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("run")).unwrap();
        let file = root.path().join("run/metrics.csv");
        std::fs::write(&file, "a,b\n1,2\n").unwrap();
        let first = inputs_fingerprint(root.path()).unwrap();
        std::fs::read(&file).unwrap();
        assert_eq!(inputs_fingerprint(root.path()).unwrap(), first);
        // An empty directory is seen by an index (a run without metrics.csv is warned about).
        std::fs::create_dir(root.path().join("empty")).unwrap();
        let with_directory = inputs_fingerprint(root.path()).unwrap();
        assert_ne!(with_directory, first);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o200)).unwrap();
            assert_ne!(inputs_fingerprint(root.path()).unwrap(), with_directory);
        }
    }
}

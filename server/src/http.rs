//! `cellscope serve`: the HTTP edge. Routes, middleware (compression, security headers, timeouts, limits,
//! CORS), live re-indexing, and the listener with its connection cap and timeouts.

pub mod api;
pub mod archive;
pub mod assets;
pub mod bodies;
pub mod connections;
pub mod encoding;
pub mod error;
pub mod hosts;
pub mod inputs;
pub mod limits;
pub mod long_links;
pub mod query;
pub mod routes;
pub mod snapshot;
pub mod start;
pub mod watch;
pub mod zero_copy;

pub use routes::{CSP, HttpOptions, router};
use snapshot::Store;
use std::sync::Arc;

/// Serves `store` on an already bound listener until `shutdown` completes (tests bind `127.0.0.1:0`).
pub async fn serve_listener(
    listener: tokio::net::TcpListener,
    store: Arc<Store>,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let starting = start::Starting::new(&listener, None, &options).map_err(anyhow::Error::msg)?;
    starting.ready(store).map_err(anyhow::Error::msg)?;
    starting.serve(listener, shutdown).await
}

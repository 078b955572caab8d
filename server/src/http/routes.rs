//! The router: the API's routes, the app's files behind them, and the one stack of middleware (compression,
//! security headers, timeouts, limits, CORS) around everything.

use super::snapshot::Store;
use super::{api, assets, connections, hosts, limits};
use axum::Router;
use axum::http::header::{self, HeaderName};
use axum::http::{HeaderValue, Method};
use axum::routing::get;
use std::sync::Arc;
use tower_http::compression::CompressionLayer;
use tower_http::cors::CorsLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;

/// The Content-Security-Policy: the app's own scripts and WASM, nothing from elsewhere.
/// `wasm-unsafe-eval` lets the page compile its WebAssembly; inline styles are allowed because the app sets
/// element styles (positions of tooltips, colour swatches) from code.
pub const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// The Content-Security-Policy with `frame-ancestors` set to `sources` (a CSP source list, e.g. `*` or
/// `http://localhost:8888`): the pages that may show the app in a frame, such as a notebook's. [`CSP`] when none.
pub fn csp_with_frame_ancestors(sources: Option<&str>) -> String {
    match sources {
        Some(sources) => CSP.replace(
            "frame-ancestors 'none'",
            &format!("frame-ancestors {sources}"),
        ),
        None => CSP.to_string(),
    }
}

/// A `frame-ancestors` source list as `serve --frame-ancestors` takes it: space-separated sources of the
/// characters a source may hold, nothing that would end the directive (`;`, `,`) or the header.
pub fn frame_ancestors(text: &str) -> Result<String, String> {
    let sources: Vec<&str> = text.split_whitespace().collect();
    let allowed = |c: char| c.is_ascii_alphanumeric() || "*:/.-_'[]+%~".contains(c);
    if sources.is_empty() {
        return Err("expected one or more sources (`*`, `http://localhost:8888`)".into());
    }
    match sources.iter().find(|source| !source.chars().all(allowed)) {
        Some(source) => Err(format!(
            "`{source}` is not a frame-ancestors source (a scheme, host, port, `*` or a quoted keyword)"
        )),
        None => Ok(sources.join(" ")),
    }
}

/// Whether a request reached a trustworthy origin (loopback, or HTTPS in front of the server): the only origins
/// where browsers apply `Cross-Origin-Opener-Policy`. Elsewhere (plain HTTP on a shared host name) they ignore it
/// and log a console error for it.
fn trustworthy_origin(headers: &axum::http::HeaderMap) -> bool {
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    let name = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    let loopback = name == "localhost"
        || name.ends_with(".localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback());
    let behind_https = headers
        .get("x-forwarded-proto")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|proto| proto.eq_ignore_ascii_case("https"));
    loopback || behind_https
}

/// `Cross-Origin-Opener-Policy: same-origin` where browsers honour it. A plain tower layer (see
/// `limits::RequestLimitsLayer` for why not `axum::middleware::from_fn`).
#[derive(Clone, Copy, Debug)]
struct OpenerPolicyLayer;

impl<S> tower::Layer<S> for OpenerPolicyLayer {
    type Service = OpenerPolicy<S>;

    fn layer(&self, inner: S) -> Self::Service {
        OpenerPolicy(inner)
    }
}

#[derive(Clone, Debug)]
struct OpenerPolicy<S>(S);

/// What a response goes through on its way out: with or without the header.
type Finish<E> = fn(Result<axum::response::Response, E>) -> Result<axum::response::Response, E>;

fn with_opener_policy<E>(
    response: Result<axum::response::Response, E>,
) -> Result<axum::response::Response, E> {
    response.map(|mut response| {
        response.headers_mut().insert(
            HeaderName::from_static("cross-origin-opener-policy"),
            HeaderValue::from_static("same-origin"),
        );
        response
    })
}

fn unchanged<E>(
    response: Result<axum::response::Response, E>,
) -> Result<axum::response::Response, E> {
    response
}

impl<S> tower::Service<axum::extract::Request> for OpenerPolicy<S>
where
    S: tower::Service<axum::extract::Request, Response = axum::response::Response>,
{
    type Response = axum::response::Response;
    type Error = S::Error;
    type Future = futures_util::future::Map<S::Future, Finish<S::Error>>;

    fn poll_ready(
        &mut self,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.0.poll_ready(context)
    }

    fn call(&mut self, request: axum::extract::Request) -> Self::Future {
        use futures_util::FutureExt as _;
        let finish: Finish<S::Error> = if trustworthy_origin(request.headers()) {
            with_opener_policy
        } else {
            unchanged
        };
        self.0.call(request).map(finish)
    }
}

#[cfg(test)]
mod tests {
    use super::trustworthy_origin;
    use axum::http::HeaderMap;

    #[test]
    fn loopback_and_https_are_trustworthy_origins_plain_http_names_are_not() {
        let with = |pairs: &[(&'static str, &'static str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(*name, value.parse().unwrap());
            }
            trustworthy_origin(&headers)
        };
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "[::1]:8080",
            "app.localhost",
        ] {
            assert!(with(&[("host", host)]), "{host}");
        }
        assert!(!with(&[("host", "cellscope.test:8080")]));
        assert!(!with(&[("host", "10.0.0.7")]));
        assert!(with(&[
            ("host", "cellscope.example.org"),
            ("x-forwarded-proto", "https")
        ]));
    }
}

#[derive(Clone, Debug, Default)]
pub struct HttpOptions {
    /// One origin allowed to call the API from another site; none by default.
    pub cors_origin: Option<String>,
    /// What one request may ask of the server.
    pub limits: limits::Limits,
    /// How many connections may be open and how long one may be slow or idle.
    pub connections: connections::ConnectionLimits,
    /// The host names requests may be addressed to (a loopback server's), each other one answered 421; `None`
    /// checks none.
    pub allowed_hosts: Option<hosts::AllowedHosts>,
    /// The pages that may show the app in a frame (`frame-ancestors` sources); none by default.
    pub frame_ancestors: Option<String>,
    /// Benchmarks only: a directory served as plain files under `/bench-static/`, so a load test can compare
    /// `/api/cells` with the same bytes served as a static file by the same server and middleware.
    pub bench_static: Option<std::path::PathBuf>,
}

pub fn router(store: Arc<Store>, options: &HttpOptions) -> Result<Router, String> {
    let subscribers = limits::EventSubscribers::new(options.limits.max_event_subscribers);
    with_middleware(api_routes(store), options, &subscribers)
}

/// The API's routes on `store`, without middleware (see [`with_middleware`]).
pub(crate) fn api_routes(store: Arc<Store>) -> Router {
    Router::new()
        .route("/api/index", get(api::index))
        .route("/api/cells", get(api::cells))
        .route("/api/requests", get(api::requests))
        .route("/api/provenance", get(api::provenance))
        .route("/api/compare", get(api::compare))
        .route("/api/history", get(api::history))
        .route("/api/events", get(api::events))
        .route("/api/bundle", get(api::bundle))
        .route("/api", get(api::unknown))
        .route("/api/{*rest}", get(api::unknown))
        .with_state(store)
}

/// `routes` with the app's static files behind them and the one stack of middleware around everything: what the
/// server serves, once the store is ready and while it starts ([`super::start`]). `subscribers` counts live-update
/// streams across both.
pub(crate) fn with_middleware(
    routes: Router,
    options: &HttpOptions,
    subscribers: &limits::EventSubscribers,
) -> Result<Router, String> {
    let routes = match &options.bench_static {
        Some(directory) => routes.nest_service(
            "/bench-static",
            tower_http::services::ServeDir::new(directory),
        ),
        None => routes,
    };
    // One stack of middleware around the whole router, listed outermost first. Applied with one `layer` call,
    // a request passes through it as one boxed service; each `Router::layer` call of its own boxed every route
    // again, so a request was cloned and boxed once per layer (about a tenth of the server's CPU time per
    // `/api/cells` answer under load).
    let cors = match &options.cors_origin {
        Some(origin) => {
            let origin = HeaderValue::from_str(origin)
                .map_err(|_| format!("--cors: `{origin}` is not a valid origin"))?;
            Some(
                CorsLayer::new()
                    .allow_origin(origin)
                    .allow_methods([Method::GET]),
            )
        }
        None => None,
    };
    let host_check = options
        .allowed_hosts
        .clone()
        .map(|allowed| axum::middleware::from_fn_with_state(allowed, hosts::check));
    let middleware = tower::ServiceBuilder::new()
        .option_layer(host_check)
        .map_response(axum::response::IntoResponse::into_response)
        .option_layer(cors)
        // CORS answers preflight requests with an empty body of the type below it.
        .map_response(axum::response::IntoResponse::into_response)
        .layer(
            tower_http::trace::TraceLayer::new_for_http()
                .make_span_with(
                    tower_http::trace::DefaultMakeSpan::new().level(tracing::Level::DEBUG),
                )
                .on_response(
                    tower_http::trace::DefaultOnResponse::new().level(tracing::Level::DEBUG),
                ),
        )
        .layer(axum::Extension(subscribers.clone()))
        .layer(limits::RequestLimitsLayer(options.limits.clone()))
        // The layers above take the router's own response type.
        .map_response(axum::response::IntoResponse::into_response)
        .layer(RequestBodyLimitLayer::new(options.limits.max_body_bytes))
        // The layers below and the routes take the router's own request body type.
        .map_request(with_router_body)
        .layer(CompressionLayer::new().gzip(true).br(true).zstd(true))
        .layer(OpenerPolicyLayer)
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_str(&csp_with_frame_ancestors(
                options.frame_ancestors.as_deref(),
            ))
            .map_err(|error| format!("the frame-ancestors sources: {error}"))?,
        ));
    Ok(routes.fallback(get(assets::static_file)).layer(middleware))
}

/// A request with its body as the router's own type (what the body limit wraps it in, unwrapped for the layers
/// inside it, as a route of its own would).
fn with_router_body<B>(request: axum::http::Request<B>) -> axum::extract::Request
where
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    request.map(axum::body::Body::new)
}

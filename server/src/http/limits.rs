//! What one request may ask of the server: the length of an API query, the size of its headers and body, how
//! long it may take, and how many live-update subscribers may be connected at once. Each refusal is a JSON error
//! naming the limit.

use super::error::ApiError;
use super::long_links::QUERY_TOO_LONG;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::http::header::CONTENT_LENGTH;
use axum::response::{IntoResponse, Response};
use futures_util::future::Either;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Limits {
    /// Longest query string of an `/api/…` request. The app's own pages take any query: a hand-edited link,
    /// however long, opens the app, which says what it did not use.
    pub max_query_bytes: usize,
    /// Largest sum of header names and values.
    pub max_header_bytes: usize,
    /// Largest request body (every route is a GET; a body is never needed).
    pub max_body_bytes: usize,
    /// Longest time a handler may take to produce its response (a live-update stream, once started, is not cut).
    pub request_timeout: Duration,
    /// Most `/api/events` streams open at once.
    pub max_event_subscribers: usize,
    /// Longest time an API request waits for the server's first index while it starts, before a `503` that says
    /// so: under the app's own 20 s timeout, so the page shows why rather than that the server did not answer.
    pub first_index_wait: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // The longest query the app writes (every filter value of the demo data selected) is under 2 KB.
            max_query_bytes: 8 * 1024,
            max_header_bytes: 16 * 1024,
            max_body_bytes: 16 * 1024,
            request_timeout: Duration::from_secs(30),
            max_event_subscribers: 256,
            first_index_wait: Duration::from_secs(15),
        }
    }
}

/// Enforces [`Limits`] on every request: refuses one whose API query, headers or declared body are over them
/// before any handler runs, and answers `408 request_timeout` when a handler has not produced its response within
/// `request_timeout` ([`HandlerTimeoutFuture`]). A plain tower layer rather than `axum::middleware::from_fn`,
/// which boxes the rest of the stack and its future once more for every request.
#[derive(Clone, Debug)]
pub struct RequestLimitsLayer(pub Limits);

impl<S> tower::Layer<S> for RequestLimitsLayer {
    type Service = RequestLimits<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestLimits {
            limits: self.0.clone(),
            inner,
        }
    }
}

/// The service of [`RequestLimitsLayer`].
#[derive(Clone, Debug)]
pub struct RequestLimits<S> {
    limits: Limits,
    inner: S,
}

impl<S> tower::Service<Request> for RequestLimits<S>
where
    S: tower::Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future =
        Either<std::future::Ready<Result<Response, S::Error>>, HandlerTimeoutFuture<S::Future>>;

    fn poll_ready(&mut self, context: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match refusal_of(&self.limits, &request) {
            Some(refusal) => Either::Left(std::future::ready(Ok(refusal))),
            None => Either::Right(HandlerTimeoutFuture {
                handler: self.inner.call(request),
                arrived: tokio::time::Instant::now(),
                timeout: self.limits.request_timeout,
                timer: None,
            }),
        }
    }
}

/// The refusal of a request whose API query, headers or declared body are over `limits`, if it is one.
fn refusal_of(limits: &Limits, request: &Request) -> Option<Response> {
    let uri = request.uri();
    // A request line too long for the HTTP library arrives with its query replaced by its length (long_links.rs).
    let query_bytes = uri
        .query()
        .and_then(|query| query.strip_prefix(QUERY_TOO_LONG)?.strip_prefix('='))
        .and_then(|bytes| bytes.parse::<usize>().ok())
        .or_else(|| uri.query().map(str::len))
        .unwrap_or(0);
    if uri.path().starts_with("/api/") && query_bytes > limits.max_query_bytes {
        return Some(refusal(
            StatusCode::URI_TOO_LONG,
            "query_too_long",
            format!(
                "the query string is {query_bytes} bytes; the API takes at most {}",
                limits.max_query_bytes
            ),
        ));
    }
    let header_bytes: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    if header_bytes > limits.max_header_bytes {
        return Some(refusal(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large",
            format!(
                "the request headers are {header_bytes} bytes; the server takes at most {}",
                limits.max_header_bytes
            ),
        ));
    }
    let body_bytes = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if let Some(body_bytes) = body_bytes.filter(|bytes| *bytes > limits.max_body_bytes as u64) {
        return Some(refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!(
                "the request body is {body_bytes} bytes; the server takes at most {} (every route is a GET)",
                limits.max_body_bytes
            ),
        ));
    }
    None
}

fn refusal(status: StatusCode, code: &'static str, message: String) -> Response {
    ApiError::Limit {
        status,
        code,
        message,
    }
    .into_response()
}

pin_project_lite::pin_project! {
    /// A handler's response, or `408 request_timeout` if the timer fires first.
    ///
    /// Not tower-http's `TimeoutLayer`, which starts a timer for every request: tokio's timer driver, holding no
    /// other timer at that moment, is woken for each (a write to its eventfd and another turn of its event loop),
    /// although nearly every answer, a body kept per snapshot, is ready the first time it is polled. Under load
    /// that was one system call and one wake-up per request beside the one write of the answer. This future
    /// polls the handler first and starts the timer, measured from the request's arrival, only when the handler
    /// is pending.
    pub struct HandlerTimeoutFuture<F> {
        #[pin]
        handler: F,
        arrived: tokio::time::Instant,
        timeout: Duration,
        // Boxed: a timer exists only for the few requests whose handler waits, so the common answer carries none.
        timer: Option<Pin<Box<tokio::time::Sleep>>>,
    }
}

impl<F, E> Future for HandlerTimeoutFuture<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(response) = this.handler.poll(context) {
            return Poll::Ready(response);
        }
        let deadline = *this.arrived + *this.timeout;
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match timer.as_mut().poll(context) {
            Poll::Ready(()) => Poll::Ready(Ok(refusal(
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!(
                    "the answer was not ready within {:.1} s; the request was given up",
                    this.timeout.as_secs_f64()
                ),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// How many `/api/events` streams are open, against the most allowed.
#[derive(Clone, Debug)]
pub struct EventSubscribers {
    open: Arc<AtomicUsize>,
    most: usize,
}

/// One open stream's place; dropping it (the stream ends or the client goes away) gives the place back.
#[derive(Debug)]
pub struct Subscription {
    open: Arc<AtomicUsize>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl EventSubscribers {
    pub fn new(most: usize) -> Self {
        EventSubscribers {
            open: Arc::new(AtomicUsize::new(0)),
            most,
        }
    }

    /// A place for one more stream, or the refusal that says the server is full.
    pub fn subscribe(&self) -> Result<Subscription, ApiError> {
        let taken = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < self.most).then_some(open + 1)
            });
        match taken {
            Ok(_) => Ok(Subscription {
                open: self.open.clone(),
            }),
            Err(open) => Err(ApiError::Limit {
                status: StatusCode::SERVICE_UNAVAILABLE,
                code: "too_many_subscribers",
                message: format!(
                    "{open} live-update streams are open, the most this server allows; the app keeps working and \
                     can reload to see new data"
                ),
            }),
        }
    }

    /// Streams open now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }
}

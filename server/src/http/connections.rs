//! The connections `serve` keeps: at most [`ConnectionLimits::max_connections`] open at once (one more is answered
//! `503` and closed), each closed when it is slow to send a request head or sits idle between requests.
//!
//! Without them a client that opens connections and sends nothing, or a request head one byte at a time, held
//! each connection open for good, and enough of them took every file descriptor of the process: the listener
//! could accept no one else and the server could no longer open the data root's files.
//!
//! Each accepted connection is served by hyper's HTTP/1.1 connection (browsers speak HTTP/2 only over TLS, and
//! the long-link scanner reads HTTP/1.1 request lines) under a watchdog that knows three things of it
//! ([`Activity`]): whether a request is in progress (from the moment its head is complete to the end of its
//! response body, so an open live-update stream is always in progress), when the head now being received began,
//! and when the last response ended. hyper's own `header_read_timeout` is not used: its timer starts as soon as a
//! kept-alive connection goes idle, so it would close every idle connection after the header timeout and leave no
//! room for a longer idle timeout.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::response::Response;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;
use tower::ServiceExt as _;

/// How long connections may take and how many may be open.
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    /// Longest time from a connection's opening, or from the first byte of a later request, to the end of that
    /// request's head.
    pub header_timeout: Duration,
    /// Longest time a connection may stay open with no request in progress after its last response.
    pub idle_timeout: Duration,
    /// Most connections open at once; one more is answered `503 Service Unavailable` and closed.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_connections: default_max_connections(),
        }
    }
}

/// Descriptors kept for what the server opens besides connections: indexing's files (one per thread), sealed
/// bodies' memory files, the watcher, the caches, and refused connections while they linger
/// ([`MAX_LINGERING_REFUSALS`]).
const DESCRIPTOR_HEADROOM: u64 = 128;

/// Most connections by default.
pub fn default_max_connections() -> usize {
    // At most 1024, far more than a team's browsers hold, and never the descriptors the server itself needs.
    let most = open_files_soft_limit()
        .saturating_sub(DESCRIPTOR_HEADROOM)
        .clamp(1, 1024);
    usize::try_from(most).unwrap_or(1024)
}

/// The process's soft limit on open files (`RLIMIT_NOFILE`).
#[cfg(target_os = "linux")]
fn open_files_soft_limit() -> u64 {
    rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX)
}

/// Not read elsewhere than Linux: macOS's default soft limit, the lowest in common use.
#[cfg(not(target_os = "linux"))]
fn open_files_soft_limit() -> u64 {
    256
}

/// Refused connections whose request is read and dropped before closing, at most, at once; more are closed at once.
const MAX_LINGERING_REFUSALS: usize = 16;

/// How long a refused connection's request is read and dropped before it is closed.
const REFUSAL_LINGER: Duration = Duration::from_secs(1);

/// The whole answer to a connection over [`ConnectionLimits::max_connections`].
static REFUSAL: LazyLock<String> = LazyLock::new(|| {
    let body = "the server has as many connections open as it allows; retry in a moment\n";
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n\
         Content-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
});

/// Serves `service` on `listener`'s connections within `limits` until `shutdown` completes; then accepts no more,
/// lets each connection finish its request in progress and returns once all are closed.
pub(crate) async fn serve<S>(
    mut listener: tokio::net::TcpListener,
    service: S,
    limits: &ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let slots = Arc::new(tokio::sync::Semaphore::new(
        limits
            .max_connections
            .min(tokio::sync::Semaphore::MAX_PERMITS),
    ));
    let lingering = Arc::new(AtomicUsize::new(0));
    // Closed when shutdown begins: each connection then finishes its request in progress and closes.
    let (stopping, stop) = tokio::sync::watch::channel(());
    tokio::spawn(async move {
        shutdown.await;
        drop(stop);
    });
    // Each connection holds a receiver; the sender is closed when every connection has ended.
    let (all_closed, open) = tokio::sync::watch::channel(());
    let mut refused_in_burst = 0u64;
    loop {
        let (stream, _address) = tokio::select! {
            accepted = axum::serve::Listener::accept(&mut listener) => accepted,
            () = stopping.closed() => break,
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            if refused_in_burst == 0 {
                tracing::warn!(
                    max_connections = limits.max_connections,
                    "as many connections are open as allowed: new ones get 503 until one closes"
                );
            }
            refused_in_burst += 1;
            refuse(stream, &lingering);
            continue;
        };
        if refused_in_burst > 0 {
            tracing::info!(
                refused = refused_in_burst,
                "a connection closed: new connections are served again"
            );
            refused_in_burst = 0;
        }
        // Over-long links are rewritten before hyper would refuse them with a blank page.
        let io = super::long_links::accepted(stream);
        let service = service.clone();
        let limits = limits.clone();
        let stopping = stopping.clone();
        let open = open.clone();
        tokio::spawn(async move {
            serve_connection(io, service, &limits, &stopping).await;
            drop((slot, open));
        });
    }
    drop(open);
    drop(listener);
    all_closed.closed().await;
}

/// Answers a connection over the cap with [`REFUSAL`] and closes it.
fn refuse(stream: tokio::net::TcpStream, lingering: &Arc<AtomicUsize>) {
    // A new connection's send buffer is empty, so the short answer is taken whole without waiting.
    if let Err(error) = stream.try_write(REFUSAL.as_bytes()) {
        tracing::debug!(%error, "cannot answer a refused connection");
    }
    // Closed with the client's request unread, the connection would be reset, and a reset can discard the answer
    // before the client reads it; so its request is read and dropped for a moment first, by a bounded number.
    if lingering.fetch_add(1, Ordering::AcqRel) >= MAX_LINGERING_REFUSALS {
        lingering.fetch_sub(1, Ordering::AcqRel);
        return;
    }
    let lingering = Arc::clone(lingering);
    tokio::spawn(async move {
        let _ = tokio::time::timeout(REFUSAL_LINGER, drain(stream)).await;
        lingering.fetch_sub(1, Ordering::AcqRel);
    });
}

/// Ends the sending side of `stream`, then reads until the client closes.
async fn drain(mut stream: tokio::net::TcpStream) -> io::Result<()> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    stream.shutdown().await?;
    let mut scratch = [0u8; 4096];
    while stream.read(&mut scratch).await? > 0 {}
    Ok(())
}

/// Serves one connection until it ends, is closed by its watchdog, or shutdown lets it finish.
async fn serve_connection<Io, S>(
    io: Io,
    service: S,
    limits: &ConnectionLimits,
    stopping: &tokio::sync::watch::Sender<()>,
) where
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    use futures_util::FutureExt as _;
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        inner: io,
        activity: Arc::clone(&activity),
    });
    let service = Counted {
        service,
        activity: Arc::clone(&activity),
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    // Off, and no timer given to hyper: the watchdog below keeps both timeouts (see the module's comment).
    builder.header_read_timeout(None);
    let mut connection = pin!(builder.serve_connection(io, service));
    let mut stop = pin!(stopping.closed().fuse());
    let mut watchdog = Watchdog::new(&activity, limits);
    loop {
        tokio::select! {
            // The connection first, so that the watchdog sees what this turn of it changed.
            biased;
            served = connection.as_mut() => {
                if let Err(error) = served {
                    tracing::trace!(error = %error, "connection ended with an error");
                }
                break;
            }
            () = &mut stop => connection.as_mut().graceful_shutdown(),
            overdue = std::future::poll_fn(|context| watchdog.poll(context)) => {
                tracing::debug!(
                    header_timeout_s = limits.header_timeout.as_secs_f64(),
                    idle_timeout_s = limits.idle_timeout.as_secs_f64(),
                    "closing a connection: {}",
                    overdue.reason()
                );
                break;
            }
        }
    }
}

/// What closes a connection that has no request in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Overdue {
    /// A request head not complete within the header timeout.
    Head,
    /// No new request within the idle timeout of the last response.
    Idle,
}

impl Overdue {
    fn reason(self) -> &'static str {
        match self {
            Overdue::Head => "a request head was not complete within the header timeout",
            Overdue::Idle => "no request came within the idle timeout",
        }
    }
}

/// Times of [`Activity`] are nanoseconds since the connection opened; this one stands for none.
const NO_TIME: u64 = u64::MAX;

/// What the watchdog knows of one connection, written by its reader ([`Watched`]) and its requests ([`Counted`]).
/// Atomics, because a request's place is shared with its response body, which the service's types require to be
/// `Send`.
#[derive(Debug)]
struct Activity {
    opened: Instant,
    /// Requests whose head is complete and whose response body has not ended.
    in_flight: AtomicUsize,
    /// When the first byte of the request head now being received arrived ([`NO_TIME`] when there is none); a new
    /// connection's first head is counted from its opening.
    head_started: AtomicU64,
    /// When the last request in progress ended.
    idle_since: AtomicU64,
}

impl Activity {
    fn new() -> Self {
        Activity {
            opened: Instant::now(),
            in_flight: AtomicUsize::new(0),
            head_started: AtomicU64::new(0),
            idle_since: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_nanos()).unwrap_or(NO_TIME - 1)
    }

    fn at(&self, time: u64) -> Instant {
        self.opened + Duration::from_nanos(time)
    }

    /// Bytes arrived: the start of a request head unless a request is in progress (they are its body, or a
    /// pipelined request) or a head is already being received.
    fn bytes_read(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0
            && self.head_started.load(Ordering::Acquire) == NO_TIME
        {
            self.head_started.store(self.now(), Ordering::Release);
        }
    }

    /// A request's head is complete: it is in progress until the returned guard is dropped.
    fn request_started(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.head_started.store(NO_TIME, Ordering::Release);
        InFlight(Arc::clone(self))
    }

    /// When the connection is to be closed and why, or `None` while a request is in progress.
    fn deadline(&self, limits: &ConnectionLimits) -> Option<(Instant, Overdue)> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        match self.head_started.load(Ordering::Acquire) {
            NO_TIME => Some((
                self.at(self.idle_since.load(Ordering::Acquire)) + limits.idle_timeout,
                Overdue::Idle,
            )),
            started => Some((self.at(started) + limits.header_timeout, Overdue::Head)),
        }
    }
}

/// One request in progress; dropping it (its response body ended or was dropped) ends it.
#[derive(Debug)]
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.idle_since.store(self.0.now(), Ordering::Release);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One timer per connection, armed at the earliest time the connection may be due to close.
///
/// It is moved only when the deadline comes earlier; when it fires before the deadline (which moved later, as
/// each request on a busy connection moves it), it is armed again. So a busy connection resets its timer about
/// once per timeout, not once per request.
struct Watchdog<'a> {
    activity: &'a Activity,
    limits: &'a ConnectionLimits,
    timer: Pin<Box<tokio::time::Sleep>>,
    /// Where the timer is armed; `None` once it has fired and is not armed again.
    armed: Option<Instant>,
}

impl<'a> Watchdog<'a> {
    fn new(activity: &'a Activity, limits: &'a ConnectionLimits) -> Self {
        let first = activity
            .deadline(limits)
            .map_or_else(Instant::now, |(at, _)| at);
        Watchdog {
            activity,
            limits,
            timer: Box::pin(tokio::time::sleep_until(first)),
            armed: Some(first),
        }
    }

    /// Ready with the reason when the connection is due to close.
    fn poll(&mut self, context: &mut Context<'_>) -> Poll<Overdue> {
        loop {
            // A request in progress is never due; the timer, armed or not, is left to fire.
            let Some((due, overdue)) = self.activity.deadline(self.limits) else {
                return Poll::Pending;
            };
            match self.armed {
                Some(at) if at <= due => {
                    ready!(self.timer.as_mut().poll(context));
                    if at == due {
                        return Poll::Ready(overdue);
                    }
                    self.armed = None;
                }
                _ => {
                    self.timer.as_mut().reset(due);
                    self.armed = Some(due);
                }
            }
        }
    }
}

/// A connection's bytes, with each read told to its [`Activity`].
struct Watched<Io> {
    inner: Io,
    activity: Arc<Activity>,
}

impl<Io: AsyncRead + Unpin> AsyncRead for Watched<Io> {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(context, buf))?;
        if buf.filled().len() > before {
            this.activity.bytes_read();
        }
        Poll::Ready(Ok(()))
    }
}

impl<Io: AsyncWrite + Unpin> AsyncWrite for Watched<Io> {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(context, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(context, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(context)
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(context)
    }
}

/// The server's service for hyper, counting each request in progress in its connection's [`Activity`] from the
/// call to the end of its response body.
#[derive(Clone)]
struct Counted<S> {
    service: S,
    activity: Arc<Activity>,
}

impl<S> hyper::service::Service<hyper::Request<Incoming>> for Counted<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone,
{
    type Response = hyper::Response<CountedBody>;
    type Error = Infallible;
    type Future = CountedFuture<tower::util::Oneshot<S, Request>>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        CountedFuture {
            in_flight: Some(self.activity.request_started()),
            response: self.service.clone().oneshot(request.map(Body::new)),
        }
    }
}

pin_project_lite::pin_project! {
    /// A response on its way, holding its request's place in progress until its body takes it.
    struct CountedFuture<F> {
        #[pin]
        response: F,
        in_flight: Option<InFlight>,
    }
}

impl<F> Future for CountedFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<hyper::Response<CountedBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = ready!(this.response.poll(context))?;
        let in_flight = this.in_flight.take();
        Poll::Ready(Ok(response.map(|body| CountedBody { body, in_flight })))
    }
}

/// A response body that ends its request's place in progress when it ends or is dropped. Frames pass unchanged
/// (a sealed body's bytes still reach the connection's writer as the same slice, see `zero_copy`).
struct CountedBody {
    body: Body,
    in_flight: Option<InFlight>,
}

impl HttpBody for CountedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let frame = ready!(Pin::new(&mut this.body).poll_frame(context));
        if frame.is_none() {
            this.in_flight = None;
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ConnectionLimits {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_connections: 4,
        }
    }

    #[test]
    fn a_new_connection_owes_its_first_head_and_an_idle_one_its_next_request() {
        let activity = Arc::new(Activity::new());
        let limits = limits();
        assert_eq!(
            activity.deadline(&limits),
            Some((activity.opened + limits.header_timeout, Overdue::Head))
        );
        let request = activity.request_started();
        assert_eq!(activity.deadline(&limits), None, "a request in progress");
        // Bytes while a request is in progress (its body, a pipelined request) start no head.
        activity.bytes_read();
        assert_eq!(activity.deadline(&limits), None);
        drop(request);
        let Some((idle_until, Overdue::Idle)) = activity.deadline(&limits) else {
            panic!("idle after the response");
        };
        assert!(idle_until >= activity.opened + limits.idle_timeout);
        activity.bytes_read();
        let Some((head_until, Overdue::Head)) = activity.deadline(&limits) else {
            panic!("a head being received");
        };
        // A later byte of the same head does not move its deadline.
        activity.bytes_read();
        assert_eq!(
            activity.deadline(&limits),
            Some((head_until, Overdue::Head))
        );
    }

    #[test]
    fn the_refusal_is_one_complete_503_that_asks_to_retry_and_closes() {
        let (head, body) = REFUSAL.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
        assert!(head.contains("\r\nConnection: close\r\n"));
        assert!(head.contains("\r\nRetry-After: 1\r\n"));
        assert!(head.contains(&format!("\r\nContent-Length: {}", body.len())));
        assert_eq!(body.lines().count(), 1);
    }

    #[test]
    fn the_default_cap_leaves_descriptors_below_the_open_file_limit() {
        let most = default_max_connections() as u64;
        assert!((1..=1024).contains(&most));
        let soft_limit = open_files_soft_limit();
        if soft_limit > DESCRIPTOR_HEADROOM {
            assert!(most + DESCRIPTOR_HEADROOM <= soft_limit);
        }
    }
}

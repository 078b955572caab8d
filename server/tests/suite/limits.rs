//! The server's limits on a real loopback socket: a long API query, oversized headers, a declared body, a slow
//! handler and too many live-update streams are each refused with the status and JSON error that name the limit,
//! while the app's pages take any query and ordinary requests go on being served; and the opener policy header
//! goes only where browsers honour it.

use crate::common;

use cellscope::http::limits::Limits;
use cellscope::http::snapshot::{Store, first_snapshot};
use cellscope::http::{HttpOptions, serve_listener};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

fn good_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/good")
}

/// Serves the good fixture with `limits` until the returned sender is dropped.
async fn start(limits: Limits) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    start_on(&good_root(), limits).await
}

/// Serves `root`'s first snapshot (the second indexing stage is not run) with `limits`.
async fn start_on(root: &Path, limits: Limits) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let root = root.to_path_buf();
    let store = Store::new(root.clone(), first_snapshot(&root, None).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = HttpOptions {
        limits,
        ..HttpOptions::default()
    };
    tokio::spawn(async move {
        serve_listener(listener, store, options, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    (addr, stop)
}

/// Sends `head` (the request line and headers, without the blank line) and reads the status and body.
async fn exchange(addr: SocketAddr, head: &str) -> (u16, String) {
    let (status, body) = common::raw_exchange(addr, head).await.unwrap();
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn error_code(body: &str) -> String {
    let json: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|error| panic!("{error}: {body}"));
    json["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn an_api_query_over_the_limit_is_refused_and_a_page_with_any_query_still_opens() {
    let (addr, _stop) = start(Limits::default()).await;
    let long = format!("backend={}", "x".repeat(9 * 1024));
    let (status, body) = exchange(addr, &format!("GET /api/cells?{long} HTTP/1.1")).await;
    assert_eq!(status, 414, "{body}");
    assert_eq!(error_code(&body), "query_too_long");
    assert!(body.contains("at most 8192"), "{body}");
    // Just under the limit, the query is read (and its unknown value reported as such, not as a length).
    let under = format!("backend={}", "x".repeat(8 * 1024 - 8));
    let (status, body) = exchange(addr, &format!("GET /api/cells?{under} HTTP/1.1")).await;
    assert_ne!(status, 414, "{body}");
    // A hand-edited link of 60 KB opens the app, which reports what it did not use.
    let page_query = format!("view=matrix&junk={}", "y".repeat(60 * 1024));
    let (status, body) = exchange(addr, &format!("GET /?{page_query} HTTP/1.1")).await;
    assert_eq!(status, 200);
    assert!(body.contains("<html"), "{}", &body[..body.len().min(200)]);
}

#[tokio::test]
async fn links_longer_than_a_request_line_may_be_still_open_the_app_and_the_api_names_their_length()
{
    let (addr, _stop) = start(Limits::default()).await;
    // 100 KB and 1 MB: past the 64 KB the HTTP library takes in a request target, which it would answer with a
    // bare 414 and an empty page.
    for junk_bytes in [100 * 1024, 1024 * 1024] {
        let page_query = format!("view=matrix&junk={}", "y".repeat(junk_bytes));
        let (status, body) = exchange(addr, &format!("GET /?{page_query} HTTP/1.1")).await;
        assert_eq!(status, 200, "{junk_bytes} bytes");
        assert!(body.contains("<html"), "{}", &body[..body.len().min(200)]);
        let target_bytes = "/?".len() + page_query.len();
        let (status, body) = exchange(addr, &format!("GET /api/cells?{page_query} HTTP/1.1")).await;
        assert_eq!(status, 414, "{body}");
        assert_eq!(error_code(&body), "query_too_long");
        assert!(
            body.contains(&format!(
                "the query string is {} bytes",
                target_bytes + "api/cells".len()
            )),
            "{body}"
        );
    }
    // On one kept-alive connection, a long link and then an ordinary request: both answered, in order.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let long = format!(
        "GET /?junk={} HTTP/1.1\r\nHost: a\r\n\r\n",
        "z".repeat(200_000)
    );
    let request = format!("{long}GET /api/index HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let response = String::from_utf8_lossy(&response);
    let statuses: Vec<&str> = response
        .match_indices("HTTP/1.1 ")
        .map(|(at, _)| &response[at + 9..at + 12])
        .collect();
    assert_eq!(
        statuses,
        ["200", "200"],
        "{}",
        &response[..response.len().min(300)]
    );
    assert!(
        response.contains("\"snapshot\""),
        "the second answer is the index"
    );
}

#[tokio::test]
async fn oversized_headers_and_a_declared_body_are_refused() {
    let (addr, _stop) = start(Limits::default()).await;
    let cookie = "c".repeat(17 * 1024);
    let (status, body) = exchange(
        addr,
        &format!("GET /api/index HTTP/1.1\r\nCookie: {cookie}"),
    )
    .await;
    assert_eq!(status, 431, "{body}");
    assert_eq!(error_code(&body), "headers_too_large");
    let (status, body) = exchange(addr, "GET /api/index HTTP/1.1\r\nContent-Length: 1000000").await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(error_code(&body), "body_too_large");
    // The refusals took nothing away: an ordinary request is answered.
    let (status, _) = exchange(addr, "GET /api/index HTTP/1.1").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_handler_that_outlasts_the_timeout_gets_408() {
    // The rows of a refilled cell wait for the second indexing stage (the backup comparison), which this server
    // never starts: the handler waits far longer than the timeout, every time. `/api/index` answers at once.
    let root = common::demo_root();
    let (addr, _stop) = start_on(
        root,
        Limits {
            request_timeout: Duration::from_millis(200),
            ..Limits::default()
        },
    )
    .await;
    let (status, body) = exchange(
        addr,
        "GET /api/requests?run=20260612_212816_266127&phase=scaling&model=mistral-7b&workload=long_prefill_8k&n=1&rep=0 HTTP/1.1",
    )
    .await;
    assert_eq!(status, 408, "{body}");
    assert_eq!(error_code(&body), "request_timeout");
    assert!(body.contains("0.2 s"), "{body}");
    let (status, _) = exchange(addr, "GET /api/index HTTP/1.1").await;
    assert_eq!(status, 200);
}

/// Opens `/api/events` and reads until the first event, leaving the stream open.
async fn subscribe(addr: SocketAddr) -> Result<BufReader<TcpStream>, (u16, String)> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /api/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).await.unwrap();
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    if status != 200 {
        let mut rest = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(2), reader.read_to_end(&mut rest)).await;
        return Err((status, String::from_utf8_lossy(&rest).into_owned()));
    }
    let mut line = String::new();
    while !line.starts_with("event: snapshot") {
        line.clear();
        reader.read_line(&mut line).await.unwrap();
    }
    Ok(reader)
}

#[tokio::test]
async fn live_update_streams_over_the_cap_are_refused_and_a_closed_one_frees_its_place() {
    let (addr, _stop) = start(Limits {
        max_event_subscribers: 3,
        ..Limits::default()
    })
    .await;
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(subscribe(addr).await.expect("a place under the cap"));
    }
    let (status, body) = subscribe(addr).await.expect_err("the fourth is refused");
    assert_eq!(status, 503);
    assert!(body.contains("too_many_subscribers"), "{body}");
    // A client going away gives its place back (the server notices when the stream is dropped).
    drop(open.pop());
    let mut again = None;
    for _ in 0..100 {
        if let Ok(stream) = subscribe(addr).await {
            again = Some(stream);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        again.is_some(),
        "the closed stream's place was not given back"
    );
}

/// The response head of `GET target` sent with the `Host` header `host` and `extra` header lines.
async fn head_for_host(addr: SocketAddr, target: &str, host: &str, extra: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request =
        format!("GET {target} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let end = response
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .expect("a complete response head");
    String::from_utf8_lossy(&response[..end]).to_ascii_lowercase()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_opener_policy_is_sent_where_browsers_honour_it_and_nowhere_else() {
    let (addr, _stop) = start(Limits::default()).await;
    let coop = "cross-origin-opener-policy: same-origin";
    for (target, host, extra, expected) in [
        ("/", "localhost:8080", "", true),
        ("/api/index", "127.0.0.1:8080", "", true),
        ("/api/cells", "[::1]:8080", "", true),
        ("/", "cellscope.test:8080", "", false),
        ("/api/index", "10.0.0.7", "", false),
        (
            "/api/index",
            "cellscope.example.org",
            "X-Forwarded-Proto: https\r\n",
            true,
        ),
    ] {
        let head = head_for_host(addr, target, host, extra).await;
        assert!(head.starts_with("http/1.1 200"), "{target} {host}: {head}");
        assert_eq!(head.contains(coop), expected, "{target} {host}: {head}");
        // The other security headers go on every answer, whatever the host.
        assert!(head.contains("x-content-type-options: nosniff"), "{head}");
        assert!(head.contains("referrer-policy: no-referrer"), "{head}");
    }
}

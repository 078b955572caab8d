//! A real `cellscope serve` on loopback and its connections: the header and idle timeouts close slow and idle
//! ones, a live-update stream is never idle, and one connection over the cap gets a 503 until a slot frees.
//!
//! Every wait is bounded by a generous read timeout; nothing asserts how long the server took.

use crate::common;

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

/// The longest any read waits: far beyond every timeout the tests set, so only a server that never closes fails.
const READ_TIMEOUT: Duration = Duration::from_secs(20);

/// `cellscope serve` of the `good` fixture on a free loopback port, with its log lines as they come; killed when
/// dropped.
struct Serving {
    child: std::process::Child,
    port: u16,
    log: mpsc::Receiver<String>,
}

impl Serving {
    fn start(flags: &[&str]) -> Serving {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/good");
        let mut child = common::cellscope_command()
            .arg("serve")
            .arg(&root)
            .args(["--addr", "127.0.0.1:0", "--no-cache"])
            .args(flags)
            .env("CELLSCOPE_LOG", "info")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (sender, log) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut seen = Vec::new();
        let port = loop {
            let Ok(line) = log.recv_timeout(Duration::from_secs(60)) else {
                let _ = child.kill();
                panic!("serve did not say it serves: {seen:#?}");
            };
            let port = line
                .contains("cellscope serving")
                .then(|| line.split("url=http://127.0.0.1:").nth(1))
                .flatten()
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|port| port.parse().ok());
            seen.push(line);
            if let Some(port) = port {
                break port;
            }
        };
        Serving { child, port, log }
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        stream
    }

    /// Stops the server and returns the log lines it wrote after it said it serves.
    fn stop(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The reader ends at the end of the closed pipe, so every line is in.
        self.log.iter().collect()
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends a keep-alive `GET target` on `stream`.
fn send_get(stream: &mut TcpStream, target: &str) {
    write!(stream, "GET {target} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
}

/// Reads one response with a `Content-Length` from `stream`: its head (status line and headers) and body.
fn read_response(stream: &mut TcpStream) -> (String, Vec<u8>) {
    let mut bytes = Vec::new();
    let mut byte = [0u8; 1];
    while !bytes.ends_with(b"\r\n\r\n") {
        let read = stream.read(&mut byte).unwrap();
        assert_eq!(
            read, 1,
            "the connection closed within a response head: {bytes:?}"
        );
        bytes.push(byte[0]);
    }
    let head = String::from_utf8(bytes).unwrap();
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or_else(|| panic!("no Content-Length in {head}"));
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).unwrap();
    (head, body)
}

/// A keep-alive `GET target` and its answer on `stream`.
fn get(stream: &mut TcpStream, target: &str) -> (String, Vec<u8>) {
    send_get(stream, target);
    read_response(stream)
}

/// Waits (up to [`READ_TIMEOUT`]) for the server to close `stream`: the read sees its end or a reset.
fn assert_closed_by_the_server(stream: &mut TcpStream) {
    let mut rest = Vec::new();
    match stream.read_to_end(&mut rest) {
        Ok(_) => assert!(
            rest.is_empty(),
            "unexpected bytes before the close: {rest:?}"
        ),
        Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(error) => panic!("the connection is still open after {READ_TIMEOUT:?}: {error}"),
    }
}

/// Whether `stream` is still open now: nothing to read yet, or bytes, but not its end.
fn still_open(stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let peeked = stream.peek(&mut [0u8; 1]);
    stream.set_nonblocking(false).unwrap();
    match peeked {
        Ok(read) => read > 0,
        Err(error) => error.kind() == std::io::ErrorKind::WouldBlock,
    }
}

fn status(head: &str) -> &str {
    head.split_whitespace().nth(1).unwrap_or_default()
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[test]
fn a_request_head_left_unfinished_or_never_sent_is_closed_after_the_header_timeout() {
    let server = Serving::start(&["--header-timeout-s", "1", "--idle-timeout-s", "600"]);
    // A kept-alive connection that has had its answer: idle, which the header timeout does not govern.
    let mut idle = server.connect();
    let (head, _) = get(&mut idle, "/api/index");
    assert_eq!(status(&head), "200", "{head}");

    let mut partial = server.connect();
    partial
        .write_all(b"GET /api/index HTTP/1.1\r\nHost: localhost\r\n")
        .unwrap();
    assert_closed_by_the_server(&mut partial);
    let mut silent = server.connect();
    assert_closed_by_the_server(&mut silent);

    // Idle for longer than the header timeout by now, and still served.
    assert!(still_open(&idle));
    let (head, _) = get(&mut idle, "/api/index");
    assert_eq!(status(&head), "200", "{head}");
}

#[test]
fn an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() {
    let server = Serving::start(&["--header-timeout-s", "600", "--idle-timeout-s", "1"]);
    let mut stream = server.connect();
    let (head, body) = get(&mut stream, "/api/index");
    assert_eq!(status(&head), "200", "{head}");
    assert!(!body.is_empty());
    assert_ne!(
        header(&head, "connection").map(str::to_ascii_lowercase),
        Some("close".to_string()),
        "{head}"
    );
    assert_closed_by_the_server(&mut stream);
}

#[test]
fn a_live_update_stream_is_not_idle_however_long_it_waits_for_an_event() {
    let server = Serving::start(&["--header-timeout-s", "1", "--idle-timeout-s", "1"]);
    let mut events = server.connect();
    send_get(&mut events, "/api/events");
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("event: snapshot") {
        let read = events.read(&mut buffer).unwrap();
        assert!(read > 0, "{}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buffer[..read]);
    }
    assert!(String::from_utf8_lossy(&seen).starts_with("HTTP/1.1 200 "));

    // A connection idle since after the stream's first event is closed: the idle timeout has passed for both.
    let mut idle = server.connect();
    let (head, _) = get(&mut idle, "/api/index");
    assert_eq!(status(&head), "200", "{head}");
    assert_closed_by_the_server(&mut idle);
    assert!(
        still_open(&events),
        "the live-update stream was cut as idle"
    );
}

#[test]
fn one_connection_over_the_cap_gets_503_with_retry_after_until_a_slot_frees() {
    let server = Serving::start(&[
        "--max-connections",
        "4",
        "--header-timeout-s",
        "600",
        "--idle-timeout-s",
        "600",
    ]);
    // Four kept-alive connections, each answered once so that each surely holds its slot.
    let mut held: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut stream = server.connect();
            let (head, _) = get(&mut stream, "/api/index");
            assert_eq!(status(&head), "200", "{head}");
            stream
        })
        .collect();
    for _ in 0..3 {
        let mut over = server.connect();
        let (head, body) = get(&mut over, "/api/index");
        assert_eq!(status(&head), "503", "{head}");
        assert_eq!(header(&head, "retry-after"), Some("1"), "{head}");
        assert_eq!(header(&head, "connection"), Some("close"), "{head}");
        let body = String::from_utf8(body).unwrap();
        assert_eq!(body.lines().count(), 1, "{body}");
        assert_closed_by_the_server(&mut over);
    }
    // The held connections are still served.
    let (head, _) = get(&mut held[0], "/api/index");
    assert_eq!(status(&head), "200", "{head}");

    // Closing one frees its slot once the server has seen the close; until then a new connection may still be
    // refused, and is retried.
    drop(held.pop());
    let mut answers = Vec::new();
    let served = (0..400).any(|_| {
        let mut stream = server.connect();
        let (head, _) = get(&mut stream, "/api/index");
        let served = status(&head) == "200";
        answers.push(head);
        if !served {
            std::thread::sleep(Duration::from_millis(50));
        }
        served
    });
    assert!(served, "{answers:#?}");

    // One warning for the whole burst of refusals, not one per connection.
    let log = server.stop();
    let warnings = log
        .iter()
        .filter(|line| line.contains("as many connections are open as allowed"))
        .count();
    assert_eq!(warnings, 1, "{log:#?}");
}

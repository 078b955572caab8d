//! A minimal HTTP/1.1 client over a loopback TCP socket, for readiness checks and API assertions that need no
//! browser (and no HTTP client crate).

use anyhow::{Context, bail};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// A response: status, headers (names lower-cased) and the body as received (no `Accept-Encoding` is sent, so it
/// is not compressed).
#[derive(Clone, Debug)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> anyhow::Result<serde_json::Value> {
        serde_json::from_slice(&self.body).context("response body is not JSON")
    }
}

/// `GET url` (`http://host:port/path?query`), with `Connection: close`; 10 s to connect and 30 s to answer.
pub fn get(url: &str) -> anyhow::Result<HttpResponse> {
    request("GET", url, &[], &[])
}

/// `METHOD url` with more `headers` and `body` (sent with its length unless a bodiless GET), as [`get`] does; for
/// the S3 API server the object-storage tests fill and change.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> anyhow::Result<HttpResponse> {
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("{url}: only http:// URLs"))?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let address = authority
        .to_socket_addrs()
        .with_context(|| format!("resolving {authority}"))?
        .next()
        .with_context(|| format!("{authority} has no address"))?;
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(10))
        .with_context(|| format!("connecting to {authority}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let length = if body.is_empty() && method == "GET" {
        String::new()
    } else {
        format!("Content-Length: {}\r\n", body.len())
    };
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: */*\r\n{extra}{length}Connection: close\r\n\r\n"
    )?;
    stream.write_all(body)?;
    let raw = read_response(&mut stream)
        .with_context(|| format!("reading the answer to {method} {url}"))?;
    parse(&raw).with_context(|| format!("{method} {url}"))
}

/// Reads one response: up to the end of the body as its headers frame it, since some servers (chromedriver) keep
/// the connection open despite `Connection: close`.
fn read_response(stream: &mut TcpStream) -> anyhow::Result<Vec<u8>> {
    let mut raw = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let read = stream.read(&mut buffer)?;
        if read == 0 {
            return Ok(raw);
        }
        raw.extend_from_slice(&buffer[..read]);
        if is_complete(&raw) {
            return Ok(raw);
        }
    }
}

/// Whether `raw` holds a whole response (false when only the end of the connection can tell).
fn is_complete(raw: &[u8]) -> bool {
    let Some(end) = raw.windows(4).position(|window| window == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    let body = &raw[end + 4..];
    let header = |name: &str| {
        head.split("\r\n")
            .filter_map(|line| line.split_once(':'))
            .find(|(key, _)| key.trim() == name)
            .map(|(_, value)| value.trim().to_string())
    };
    if let Some(length) = header("content-length").and_then(|value| value.parse::<usize>().ok()) {
        return body.len() >= length;
    }
    if header("transfer-encoding").is_some_and(|value| value == "chunked") {
        return body.ends_with(b"0\r\n\r\n") && dechunk(body).is_ok();
    }
    false
}

fn parse(raw: &[u8]) -> anyhow::Result<HttpResponse> {
    let end = raw
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .context("no end of headers")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("bad status line `{status_line}`"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| (key.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let mut response = HttpResponse {
        status,
        headers,
        body: Vec::new(),
    };
    let body = &raw[end + 4..];
    response.body = if response
        .header("transfer-encoding")
        .is_some_and(|value| value.eq_ignore_ascii_case("chunked"))
    {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    Ok(response)
}

fn dechunk(mut body: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|window| window == b"\r\n")
            .context("truncated chunk size")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .with_context(|| format!("bad chunk size `{size_text}`"))?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if body.len() < size + 2 {
            bail!("truncated chunk");
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_chunked_bodies() {
        let plain = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-A: b\r\n\r\n{}").unwrap();
        assert_eq!((plain.status, plain.text().as_str()), (200, "{}"));
        assert_eq!(plain.header("x-a"), Some("b"));
        let chunked = parse(
            b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!((chunked.status, chunked.text().as_str()), (404, "abcde"));
    }
}

//! Lets a link longer than the HTTP library accepts still open the app: a request line over
//! [`MAX_REQUEST_LINE_BYTES`] has its query replaced by `query_too_long=<bytes>` before the request is parsed.
//!
//! The HTTP library refuses a request target over 65,534 bytes with a bare 414 and an empty body, before any
//! handler runs; in a browser that is a blank page. A hand-edited or generated link can be longer (links
//! carry the whole view), and the promise is that any link opens the app and says what it did not use. So
//! each connection's bytes pass through a small scanner: request lines of ordinary length pass unchanged, an
//! over-long one is rewritten to its path plus the reserved parameter [`QUERY_TOO_LONG`], whose value is the
//! length of the original target. A page is served as for any query, and the app reads its view from the
//! browser's address, which still holds the whole link; the API's query limit refuses the request with the real
//! length. The scanner keeps at most one request line's first [`MAX_REQUEST_LINE_BYTES`] in memory, so a
//! gigabyte-long line costs nothing more than a short one.
//!
//! Only request lines are touched. Header lines pass as they come; a request that declares a body
//! (`Content-Length` other than 0, or `Transfer-Encoding`) switches the connection to plain pass-through,
//! because finding the next request line would mean parsing the body. Every route is a GET without a body, and
//! the body limit refuses such a request anyway.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The longest request line passed on unchanged: the HTTP library's limit for a request target (`u16::MAX - 1`),
/// applied to the whole line so that every target it would refuse is rewritten.
pub const MAX_REQUEST_LINE_BYTES: usize = 65_534;

/// The parameter put in place of an over-long query: `query_too_long=<bytes of the original path and query>`.
pub const QUERY_TOO_LONG: &str = "query_too_long";

/// How much of the end of an over-long request line is kept to find its HTTP version.
const TAIL_BYTES: usize = 32;

/// An accepted connection as it is served: through [`LongLinks`] to its writer (`zero_copy`).
pub fn accepted(stream: tokio::net::TcpStream) -> LongLinks<super::zero_copy::ZeroCopyStream> {
    // Responses go out as soon as they are written: with Nagle's algorithm the last short segment of a body can
    // wait for the acknowledgement of the one before, which the client may delay.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "cannot set TCP_NODELAY on a connection");
    }
    LongLinks::new(super::zero_copy::stream(stream))
}

/// A connection whose over-long request lines are rewritten as they are read (writes pass unchanged).
pub struct LongLinks<Io> {
    inner: Io,
    scanner: Scanner,
    /// Scanned bytes not yet handed to the reader, from `out_start` on.
    out: Vec<u8>,
    out_start: usize,
}

impl<Io> LongLinks<Io> {
    pub fn new(inner: Io) -> Self {
        LongLinks {
            inner,
            scanner: Scanner::default(),
            out: Vec::new(),
            out_start: 0,
        }
    }
}

impl<Io: AsyncRead + Unpin> AsyncRead for LongLinks<Io> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.out_start < this.out.len() {
                let count = buf.remaining().min(this.out.len() - this.out_start);
                buf.put_slice(&this.out[this.out_start..this.out_start + count]);
                this.out_start += count;
                if this.out_start == this.out.len() {
                    this.out.clear();
                    this.out_start = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.scanner.phase == Phase::PassThrough {
                return Pin::new(&mut this.inner).poll_read(cx, buf);
            }
            let mut scratch = [0u8; 8192];
            let mut read = ReadBuf::new(&mut scratch);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                // End of input: whatever part of a request line is held goes on as it is, for the HTTP library
                // to judge; then the reader sees the end.
                this.scanner.finish(&mut this.out);
                if this.out.is_empty() {
                    return Poll::Ready(Ok(()));
                }
            } else {
                this.scanner.feed(read.filled(), &mut this.out);
            }
        }
    }
}

impl<Io: AsyncWrite + Unpin> AsyncWrite for LongLinks<Io> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    /// Before a request line (blank lines before one are passed on and skipped, as the HTTP grammar allows).
    #[default]
    RequestLine,
    /// Between a request line and the blank line that ends its headers.
    Headers,
    /// For the rest of the connection: a request declared a body.
    PassThrough,
}

/// The byte-level state of one connection's requests.
#[derive(Debug, Default)]
struct Scanner {
    phase: Phase,
    /// The current line's first bytes: a whole request line up to the limit, or a header line's first few.
    line: Vec<u8>,
    /// The current line's length so far, including what was not kept.
    line_bytes: usize,
    /// The last bytes of an over-long request line (its HTTP version is there).
    tail: Vec<u8>,
    /// Whether the current request's headers declare a body.
    declares_body: bool,
}

impl Scanner {
    /// Scans `input`, appending what the HTTP library should read to `out`.
    fn feed(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        while !input.is_empty() {
            let end = memchr::memchr(b'\n', input);
            let part = &input[..end.map_or(input.len(), |at| at + 1)];
            input = &input[part.len()..];
            match self.phase {
                Phase::PassThrough => {
                    out.extend_from_slice(part);
                    out.extend_from_slice(input);
                    return;
                }
                Phase::RequestLine => {
                    self.hold_request_line(part);
                    if end.is_some() {
                        self.end_request_line(out);
                    }
                }
                Phase::Headers => {
                    out.extend_from_slice(part);
                    // A header's name and the start of its value are all that is looked at.
                    let room = 64usize.saturating_sub(self.line.len());
                    self.line.extend_from_slice(&part[..part.len().min(room)]);
                    self.line_bytes += part.len();
                    if end.is_some() {
                        self.end_header_line();
                    }
                }
            }
        }
    }

    /// At the end of input: passes on a held request line unchanged.
    fn finish(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.line);
        self.line_bytes = 0;
        self.tail.clear();
    }

    fn hold_request_line(&mut self, part: &[u8]) {
        self.line_bytes += part.len();
        let room = MAX_REQUEST_LINE_BYTES.saturating_sub(self.line.len());
        self.line.extend_from_slice(&part[..part.len().min(room)]);
        if part.len() > room {
            self.tail
                .extend_from_slice(&part[part.len().saturating_sub(TAIL_BYTES)..]);
            let excess = self.tail.len().saturating_sub(TAIL_BYTES);
            self.tail.drain(..excess);
        }
    }

    fn end_request_line(&mut self, out: &mut Vec<u8>) {
        let blank = matches!(self.line.as_slice(), b"\n" | b"\r\n");
        if self.line_bytes <= MAX_REQUEST_LINE_BYTES {
            out.extend_from_slice(&self.line);
        } else {
            self.rewrite_long_request_line(out);
        }
        self.line.clear();
        self.tail.clear();
        self.line_bytes = 0;
        if !blank {
            self.phase = Phase::Headers;
        }
    }

    /// Writes `METHOD PATH?query_too_long=<target bytes> VERSION` for the held over-long line.
    fn rewrite_long_request_line(&mut self, out: &mut Vec<u8>) {
        let method_end = memchr::memchr(b' ', &self.line).unwrap_or(0);
        let method = &self.line[..method_end];
        let target = &self.line[(method_end + 1).min(self.line.len())..];
        // A path without its query, if the query starts within the kept bytes; otherwise the app's root.
        let path = match memchr::memchr(b'?', target) {
            Some(at) if target.get(..at).is_some_and(|path| !path.contains(&b' ')) => &target[..at],
            _ => b"/".as_slice(),
        };
        // The version is after the line's last space. The tail holds the line's last bytes when it is full;
        // otherwise it holds everything after the kept bytes, and the end of those comes first.
        let mut last = if self.tail.len() == TAIL_BYTES {
            Vec::new()
        } else {
            self.line[self.line.len().saturating_sub(TAIL_BYTES)..].to_vec()
        };
        last.extend_from_slice(&self.tail);
        let last = last.strip_suffix(b"\n").unwrap_or(&last);
        let last = last.strip_suffix(b"\r").unwrap_or(last);
        let version = memchr::memrchr(b' ', last).map_or(&[][..], |at| &last[at + 1..]);
        let line_ending = 2;
        let target_bytes = self
            .line_bytes
            .saturating_sub(method.len() + 1 + version.len() + 1 + line_ending);
        out.extend_from_slice(method);
        out.push(b' ');
        out.extend_from_slice(path);
        out.extend_from_slice(format!("?{QUERY_TOO_LONG}={target_bytes} ").as_bytes());
        out.extend_from_slice(version);
        out.extend_from_slice(b"\r\n");
    }

    fn end_header_line(&mut self) {
        let line = self.line.as_slice();
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() && self.line_bytes <= 2 {
            self.phase = if self.declares_body {
                Phase::PassThrough
            } else {
                Phase::RequestLine
            };
            self.declares_body = false;
        } else if let Some(colon) = memchr::memchr(b':', line) {
            let name = &line[..colon];
            let value = line[colon + 1..].trim_ascii();
            if name.eq_ignore_ascii_case(b"transfer-encoding")
                || (name.eq_ignore_ascii_case(b"content-length") && value != b"0")
            {
                self.declares_body = true;
            }
        }
        self.line.clear();
        self.line_bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scans `input` split into pieces of `piece` bytes, as a socket might deliver it.
    fn scan(input: &[u8], piece: usize) -> Vec<u8> {
        let mut scanner = Scanner::default();
        let mut out = Vec::new();
        for chunk in input.chunks(piece.max(1)) {
            scanner.feed(chunk, &mut out);
        }
        scanner.finish(&mut out);
        out
    }

    #[test]
    fn ordinary_requests_pass_unchanged_however_they_are_split() {
        let input = b"GET /?view=matrix HTTP/1.1\r\nHost: a\r\n\r\n\r\nGET /api/cells HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\nGET /x HTTP/1.1\r\n\r\n";
        for piece in [1, 2, 3, 7, 16, 1000] {
            assert_eq!(scan(input, piece), input.to_vec(), "piece {piece}");
        }
    }

    #[test]
    fn an_over_long_request_line_keeps_its_path_and_reports_the_target_length() {
        let query = format!("view=matrix&junk={}", "y".repeat(100 * 1024));
        let target = format!("/some/path?{query}");
        let input = format!("GET {target} HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\n\r\n");
        let expected = format!(
            "GET /some/path?{QUERY_TOO_LONG}={} HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\n\r\n",
            target.len()
        );
        for piece in [1, 5, 4096, 8192, 1 << 20] {
            assert_eq!(
                String::from_utf8(scan(input.as_bytes(), piece)).unwrap(),
                expected,
                "piece {piece}"
            );
        }
    }

    #[test]
    fn a_line_exactly_at_the_limit_passes_and_one_byte_more_is_rewritten() {
        let frame = "GET /? HTTP/1.1\r\n".len();
        let at_limit = format!(
            "GET /?{} HTTP/1.1\r\n\r\n",
            "q".repeat(MAX_REQUEST_LINE_BYTES - frame)
        );
        assert_eq!(scan(at_limit.as_bytes(), 999), at_limit.as_bytes());
        let over = format!(
            "GET /?{} HTTP/1.1\r\n\r\n",
            "q".repeat(MAX_REQUEST_LINE_BYTES - frame + 1)
        );
        let target_bytes = MAX_REQUEST_LINE_BYTES - frame + 3;
        assert_eq!(
            String::from_utf8(scan(over.as_bytes(), 999)).unwrap(),
            format!("GET /?{QUERY_TOO_LONG}={target_bytes} HTTP/1.1\r\n\r\n")
        );
    }

    #[test]
    fn a_request_with_a_body_switches_the_connection_to_pass_through() {
        let long = format!("GET /?{} HTTP/1.1\r\n\r\n", "q".repeat(70_000));
        let input = format!("POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello{long}");
        assert_eq!(scan(input.as_bytes(), 13), input.as_bytes());
    }

    #[test]
    fn a_huge_path_without_a_query_becomes_the_root() {
        let input = format!("GET /{} HTTP/1.1\r\n\r\n", "p".repeat(200_000));
        let out = String::from_utf8(scan(input.as_bytes(), 4096)).unwrap();
        assert_eq!(
            out,
            format!("GET /?{QUERY_TOO_LONG}=200001 HTTP/1.1\r\n\r\n")
        );
    }
}

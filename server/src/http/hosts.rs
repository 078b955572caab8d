//! The `Host` check against DNS rebinding: a server listening on a loopback address answers only requests
//! addressed to a loopback name (and the names `--allow-host` adds); a page on another site whose name was
//! re-pointed at 127.0.0.1 gets 421 Misdirected Request instead of the data.

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The names a loopback server always answers to.
pub const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The host names a server answers to, compared without the port and case-insensitively.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedHosts(Arc<Vec<String>>);

impl AllowedHosts {
    /// The loopback names and `more`; `None` when `addr` is not loopback (a server bound to a routable address is
    /// reached by whatever name points at it, and a reverse proxy in front of it checks names).
    pub fn for_address(addr: std::net::SocketAddr, more: &[String]) -> Option<AllowedHosts> {
        addr.ip().is_loopback().then(|| {
            let names = LOOPBACK_NAMES
                .iter()
                .map(|name| name.to_string())
                .chain(more.iter().map(|name| name.to_ascii_lowercase()))
                .collect();
            AllowedHosts(Arc::new(names))
        })
    }

    /// Whether a `Host` header's value names an allowed host (`localhost:8080`, `[::1]:8080`, `127.0.0.1`).
    pub fn admits(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        let name = if host.starts_with('[') {
            host.split_inclusive(']').next().unwrap_or_default()
        } else {
            host.split(':').next().unwrap_or_default()
        };
        self.0.iter().any(|allowed| *allowed == name)
    }
}

/// Middleware: 421 for a request whose `Host` names a host the server does not answer to. A request without
/// `Host` (HTTP/1.0) names none and passes: a browser always sends one.
pub async fn check(State(allowed): State<AllowedHosts>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .map(|value| value.to_str().unwrap_or("\u{fffd}").to_string());
    match host {
        Some(host) if !allowed.admits(&host) => (
            StatusCode::MISDIRECTED_REQUEST,
            format!(
                "this server answers to {}; start it with --allow-host NAME to answer to another name\n",
                allowed.0.join(", ")
            ),
        )
            .into_response(),
        _ => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_with_and_without_ports_are_admitted_and_others_are_not() {
        let addr = "127.0.0.1:8080".parse().unwrap();
        let allowed = AllowedHosts::for_address(addr, &["Bench.Local".to_string()]).unwrap();
        for host in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:8080",
            "[::1]:8080",
            "[::1]",
            "bench.local:1",
        ] {
            assert!(allowed.admits(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.2",
            "[::2]:80",
            "",
        ] {
            assert!(!allowed.admits(host), "{host}");
        }
        assert_eq!(
            AllowedHosts::for_address("0.0.0.0:8080".parse().unwrap(), &[]),
            None
        );
    }
}

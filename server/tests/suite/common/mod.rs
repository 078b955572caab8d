//! Shared test support: the demo data set, generated once per test binary into a temporary directory.

pub(crate) use crate::shared::{copy_tree, demo_index, demo_root, mkfifo};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The nightly demo root (seed 164), generated on first use beside [`demo_root`]'s.
pub(crate) fn nightly_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let parent = Path::new(env!("CARGO_TARGET_TMPDIR"));
        crate::shared::remove_stale_dirs(parent);
        let dir = parent.join(format!("nightly-{}", std::process::id()));
        cellscope_demo::generate_nightly(&dir, 164).expect("the nightly root generates");
        dir
    })
}

/// The `cellscope` binary, with its default cache directory (`$XDG_CACHE_HOME/cellscope`) inside this test
/// process's own directory under `target/`, so that tests never write to the user's cache.
pub(crate) fn cellscope_command() -> std::process::Command {
    static CACHE_HOME: OnceLock<PathBuf> = OnceLock::new();
    let home = CACHE_HOME.get_or_init(|| {
        let parent = Path::new(env!("CARGO_TARGET_TMPDIR"));
        crate::shared::remove_stale_dirs(parent);
        parent.join(format!("cache-home-{}", std::process::id()))
    });
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cellscope"));
    command.env("XDG_CACHE_HOME", home);
    command
}

/// Sends `head` (a request line, optionally with headers, without the blank line) on a fresh loopback connection
/// with `Host` and `Connection: close`, and reads the whole answer: its status (0 for no complete response) and
/// body.
pub(crate) async fn raw_exchange(
    addr: std::net::SocketAddr,
    head: &str,
) -> std::io::Result<(u16, Vec<u8>)> {
    let (status, _, body) = raw_response(addr, head).await?;
    Ok((status, body))
}

/// [`raw_exchange`] that also returns the response head (status line and headers; empty, with status 0 and the
/// whole answer as the body, when no complete head came).
pub(crate) async fn raw_response(
    addr: std::net::SocketAddr,
    head: &str,
) -> std::io::Result<(u16, String, Vec<u8>)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let request = format!("{head}\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    let Some(split) = response.windows(4).position(|window| window == b"\r\n\r\n") else {
        return Ok((0, String::new(), response));
    };
    let head = String::from_utf8_lossy(&response[..split]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    Ok((status, head, response[split + 4..].to_vec()))
}

/// Every warning of an audit (the root's and each run's).
pub(crate) fn warnings_of(audit: &serde_json::Value) -> Vec<&serde_json::Value> {
    audit["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .chain(
            audit["runs"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|run| run["warnings"].as_array().unwrap()),
        )
        .collect()
}

/// Every warning of an audit as (kind, file).
pub(crate) fn kinds_and_files(audit: &serde_json::Value) -> Vec<(String, String)> {
    warnings_of(audit)
        .into_iter()
        .map(|warning| {
            (
                warning["kind"].as_str().unwrap().to_string(),
                warning["file"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

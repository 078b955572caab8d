//! `cellscope serve`: listen first, answer from a kept snapshot while the first index is built, then serve the
//! index and re-index when the data root changes (watched when local, polled when in object storage).

use super::{CacheArgs, DataRoot};
use anyhow::Context;
use cellscope::http::archive::{Archive, KeptBodies};
use cellscope::http::snapshot::Store;
use cellscope_index::cache::RunCache;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub(super) struct ServeArgs {
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    /// Address to listen on (loopback unless told otherwise).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: std::net::SocketAddr,
    /// Allow this one origin to call the API from another site (CORS is off by default).
    #[arg(long)]
    cors: Option<String>,
    /// On a loopback address, also answer requests addressed to this host name (repeatable); any name but
    /// localhost, 127.0.0.1 and [::1] is otherwise refused with 421, against DNS rebinding.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
    /// Let pages of these origins show the app in a frame, as a notebook does: Content-Security-Policy
    /// `frame-ancestors` sources, space-separated (`http://localhost:8888`, `*`). By default no page may.
    #[arg(long, value_name = "SOURCES", value_parser = cellscope::http::routes::frame_ancestors)]
    frame_ancestors: Option<String>,
    /// For a data root in object storage: seconds between listings of the bucket prefix (new, changed or
    /// deleted objects re-index). A local root is watched instead.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    poll: f64,
    /// Threads answering HTTP requests (default: one fewer than the cores, at least one). Indexing, building
    /// bodies and reading rows run on threads of their own, so the answering threads only send what is built.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    http_threads: Option<u16>,
    /// Benchmarks only: serve this directory's files under /bench-static/ (the static-file peer).
    #[arg(long, hide = true)]
    bench_static: Option<PathBuf>,
    /// Seconds an index may run before it is abandoned (re-indexing) or reported as stuck (the first index).
    #[arg(long, hide = true, value_name = "SECONDS", default_value_t = cellscope::http::snapshot::INDEX_DEADLINE.as_secs_f64())]
    index_deadline_s: f64,
    /// Seconds a connection may take to send a request head, from its opening or a later request's first byte.
    #[arg(long, hide = true, value_name = "SECONDS", value_parser = positive_seconds)]
    header_timeout_s: Option<f64>,
    /// Seconds a connection may stay open with no request in progress after its last response.
    #[arg(long, hide = true, value_name = "SECONDS", value_parser = positive_seconds)]
    idle_timeout_s: Option<f64>,
    /// Most connections open at once (default: 1024, fewer under a low open-file limit); one more gets 503.
    #[arg(long, hide = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: Option<u32>,
    #[command(flatten)]
    cache: CacheArgs,
}

/// A number of seconds above zero, as the timeout flags take it.
fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && std::time::Duration::try_from_secs_f64(seconds).is_ok() => {
            Ok(seconds)
        }
        _ => Err(format!("`{text}` is not a number of seconds above 0")),
    }
}

/// The connection limits of the flags, each one not given at its default.
fn connection_limits(
    header_timeout_s: Option<f64>,
    idle_timeout_s: Option<f64>,
    max_connections: Option<u32>,
) -> cellscope::http::connections::ConnectionLimits {
    let default = cellscope::http::connections::ConnectionLimits::default();
    cellscope::http::connections::ConnectionLimits {
        header_timeout: header_timeout_s
            .map_or(default.header_timeout, std::time::Duration::from_secs_f64),
        idle_timeout: idle_timeout_s
            .map_or(default.idle_timeout, std::time::Duration::from_secs_f64),
        max_connections: max_connections.map_or(default.max_connections, |most| most as usize),
    }
}

/// How many snapshots, and how many bytes of them (zstd-compressed), are kept for pinned links.
const KEPT_SNAPSHOTS: usize = 20;
const KEPT_BYTES: u64 = 256 * 1024 * 1024;

/// What the first index starts from: the canonical root, the caches, and the kept snapshot for these files.
struct Start {
    root: PathBuf,
    archive: Option<Archive>,
    runs: Option<Arc<RunCache>>,
    /// The fingerprint of the root's files taken before indexing (only with an archive).
    inputs: Option<String>,
    kept: Option<KeptBodies>,
}

pub(super) fn run(arguments: ServeArgs) -> anyhow::Result<ExitCode> {
    let ServeArgs {
        data_dir,
        addr,
        cors,
        allow_hosts,
        frame_ancestors,
        poll,
        http_threads,
        bench_static,
        index_deadline_s,
        header_timeout_s,
        idle_timeout_s,
        max_connections,
        cache,
    } = arguments;
    let data_root = DataRoot::open(data_dir, &cache)?;
    let start = prepare(&data_root, &cache)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(http_threads.map_or_else(default_http_threads, usize::from))
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    // As the runtime counts them, so that the log says what runs, not what was asked.
    tracing::info!(
        http_threads = runtime.metrics().num_workers(),
        "threads answering HTTP requests"
    );
    let options = cellscope::http::HttpOptions {
        cors_origin: cors,
        allowed_hosts: cellscope::http::hosts::AllowedHosts::for_address(addr, &allow_hosts),
        frame_ancestors,
        bench_static,
        limits: cellscope::http::limits::Limits::default(),
        connections: connection_limits(header_timeout_s, idle_timeout_s, max_connections),
    };
    tracing::info!(
        max_connections = options.connections.max_connections,
        header_timeout_s = options.connections.header_timeout.as_secs_f64(),
        idle_timeout_s = options.connections.idle_timeout.as_secs_f64(),
        "connection limits"
    );
    runtime.block_on(serve(
        addr,
        start,
        &options,
        data_root.remote.as_ref(),
        poll,
        std::time::Duration::from_secs_f64(index_deadline_s.max(0.0)),
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Resolves the root, opens the caches and finds a kept snapshot made from exactly the root's present files.
fn prepare(data_root: &DataRoot, cache: &CacheArgs) -> anyhow::Result<Start> {
    let data_dir = &data_root.path;
    let root = data_dir
        .canonicalize()
        .with_context(|| format!("data directory {} does not exist", data_dir.display()))?;
    let base = cache.base(&root)?;
    let archive = match &base {
        None => None,
        Some(base) => {
            let dir = snapshot_cache(base, &root)?;
            tracing::info!(dir = %dir.display(), "keeping recent snapshots for pinned links");
            Some(Archive::new(dir, KEPT_SNAPSHOTS, KEPT_BYTES))
        }
    };
    let runs = cache.runs(&root)?.map(Arc::new);
    // What the data root's files are now, and the kept answers for exactly these files and this build.
    let inputs = archive.as_ref().and_then(|_| {
        cellscope::http::start::inputs_fingerprint(&root)
            .map_err(|error| tracing::warn!(%error, root = %root.display(), "cannot list the data root before indexing"))
            .ok()
    });
    let kept = archive
        .as_ref()
        .zip(inputs.as_deref())
        .and_then(|(archive, inputs)| archive.kept_for_inputs(inputs));
    if let Some(kept) = &kept {
        tracing::info!(
            snapshot = %kept.id,
            "the data root is as it was for a kept snapshot: the app's first requests are answered from it while the index is built"
        );
    }
    Ok(Start {
        root,
        archive,
        runs,
        inputs,
        kept,
    })
}

/// Listens, builds the first index on a thread of its own, then serves it and keeps it current until Ctrl-C.
async fn serve(
    addr: std::net::SocketAddr,
    start: Start,
    options: &cellscope::http::HttpOptions,
    remote: Option<&Arc<cellscope::remote::Remote>>,
    poll: f64,
    index_deadline: std::time::Duration,
) -> anyhow::Result<()> {
    let Start {
        root,
        archive,
        runs,
        inputs,
        kept,
    } = start;
    // Listening comes first: the app's files are served and a warm start answers the app's first requests from
    // the kept snapshot while the index is built; other API requests wait for it.
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let starting = cellscope::http::start::Starting::new(&listener, kept, options)
        .map_err(anyhow::Error::msg)?;
    let mut serving = tokio::spawn(starting.clone().serve(listener, async {
        let _ = tokio::signal::ctrl_c().await;
    }));
    // Indexing runs on a thread of its own, which Ctrl-C does not wait for.
    let (built_sender, mut built) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("cellscope-first-index".into())
        .spawn(move || {
            let _ = built_sender.send(first_store(root, archive, runs, inputs));
        })
        .context("starting the first index")?;
    let mut overdue = false;
    let store = loop {
        tokio::select! {
            built = &mut built => break built.context("the first index stopped")??,
            served = &mut serving => return served.context("serving")?,
            () = tokio::time::sleep(index_deadline), if !overdue => {
                overdue = true;
                tracing::warn!(deadline_s = index_deadline.as_secs_f64(),
                    "the first index is past its deadline: a read of the data root may be stuck; the API answers 503 until it ends");
            }
        }
    };
    store.set_index_deadline(index_deadline);
    // A remote root is polled (its listing compared with the mirror's); a local one is watched.
    let _watching = match remote {
        Some(remote) => {
            cellscope::http::watch::spawn_polling(
                store.clone(),
                Arc::clone(remote),
                std::time::Duration::from_secs_f64(poll.max(0.1)),
            );
            None
        }
        None => Some(cellscope::http::watch::spawn(store.clone())?),
    };
    starting.ready(store).map_err(anyhow::Error::msg)?;
    serving.await.context("serving")?
}

/// The threads answering HTTP requests unless `--http-threads` says otherwise: one fewer than the cores. What
/// costs CPU time (indexing, building and compressing bodies, reading request rows) runs on rayon's and tokio's
/// blocking threads; the answering threads mostly hand built bodies to the kernel. On two cores shared with the
/// clients (a browser, or wrk in `cargo xtask bench http`), a second answering thread only competed with them:
/// `/api/cells` compressed p99 at 64 connections was 5.19–5.52 ms with two and 4.24–4.52 ms with one (README).
fn default_http_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .saturating_sub(1)
        .max(1)
}

/// The store of `serve`'s first snapshot (cells only, runs taken from the cache of read results by their stamps).
/// `inputs` is the fingerprint of the root's files taken before indexing; the store remembers it for the complete
/// snapshot only if the files still have it after the second stage (see `Store::with_caches`).
fn first_store(
    root: PathBuf,
    archive: Option<Archive>,
    runs: Option<Arc<RunCache>>,
    inputs: Option<String>,
) -> anyhow::Result<Arc<Store>> {
    let snapshot = cellscope::http::snapshot::first_snapshot(&root, runs.as_deref())
        .map_err(anyhow::Error::msg)?;
    if snapshot.index.runs.is_empty() {
        tracing::warn!(root = %root.display(), "no run directories yet; serving an empty index and watching for new runs");
    }
    if let Some(report) = &snapshot.index.cache {
        tracing::info!(
            used = report.used,
            read = report.read,
            unreadable = report.unreadable.len(),
            "first snapshot: runs taken from the cache of read results"
        );
    }
    Ok(Store::with_caches(root, snapshot, archive, runs, inputs))
}

/// The directory of kept snapshots of `root`: one folder per data root inside the cache directory.
fn snapshot_cache(base: &Path, root: &Path) -> anyhow::Result<PathBuf> {
    let root_hash = cellscope_index::hex::short_sha256(root.to_string_lossy().as_bytes());
    let dir = base.join("snapshots").join(root_hash);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

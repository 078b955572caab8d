//! The server on a real loopback socket: live re-indexing with SSE while a client polls, path-escape attempts,
//! and an unchanged data root afterwards.

use crate::common;

use cellscope::http::snapshot::{Store, first_snapshot};
use cellscope::http::{HttpOptions, serve_listener, watch};
use common::copy_tree;
use sha2::Digest as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures")
}

struct Server {
    addr: SocketAddr,
    store: Arc<Store>,
    _watching: Option<watch::Watching>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn start(root: &Path) -> Server {
    start_serving(root, true).await
}

/// The server on `root`, re-indexing on changes when `watching` (without, a test moves it on by hand).
async fn start_serving(root: &Path, watching: bool) -> Server {
    let store = Store::new(root.to_path_buf(), first_snapshot(root, None).unwrap());
    let watching = watching.then(|| watch::spawn(store.clone()).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = store.clone();
    tokio::spawn(async move {
        serve_listener(listener, serving, HttpOptions::default(), async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    Server {
        addr,
        store,
        _watching: watching,
        stop: Some(stop),
    }
}

/// A raw HTTP/1.1 GET, so request targets reach the server exactly as written (no client-side normalisation).
async fn raw_get(addr: SocketAddr, target: &str) -> (u16, Vec<u8>) {
    try_raw_get(addr, target)
        .await
        .unwrap_or_else(|error| panic!("GET {target}: {error}"))
}

/// Status 0 stands for "no complete response".
async fn try_raw_get(addr: SocketAddr, target: &str) -> std::io::Result<(u16, Vec<u8>)> {
    common::raw_exchange(addr, &format!("GET {target} HTTP/1.1")).await
}

async fn snapshot_id(addr: SocketAddr) -> String {
    let (status, body) = raw_get(addr, "/api/index").await;
    assert_eq!(status, 200);
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    json["snapshot"].as_str().unwrap().to_string()
}

/// A checksum of every file under `root`: paths, contents and modification times.
fn checksum(root: &Path) -> String {
    let mut files = Vec::new();
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                walk(&path, files)
            } else {
                files.push(path)
            }
        }
    }
    walk(root, &mut files);
    files.sort();
    let mut hasher = sha2::Sha256::new();
    for file in files {
        hasher.update(file.to_string_lossy().as_bytes());
        if let Ok(metadata) = std::fs::symlink_metadata(&file) {
            hasher.update(format!("{:?}", metadata.modified().ok()).as_bytes());
        }
        if !file.is_symlink() {
            hasher.update(std::fs::read(&file).unwrap());
        }
    }
    format!("{:x}", hasher.finalize())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_run_appears_with_a_new_snapshot_and_an_event_while_polling_never_fails() {
    let root = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("good"), root.path());
    let server = start(root.path()).await;
    // Let the watcher's first full pass settle, then remember the snapshot.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = snapshot_id(server.addr).await;

    // Subscribe to events: the first one carries the current snapshot.
    let mut events = TcpStream::connect(server.addr).await.unwrap();
    events
        .write_all(
            b"GET /api/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
        )
        .await
        .unwrap();
    let mut events = BufReader::new(events);
    let mut next_snapshot_event = async move || -> String {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                events.read_line(&mut line).await.unwrap() > 0,
                "event stream closed"
            );
            if let Some(data) = line.trim_end().strip_prefix("data:") {
                return data.trim().to_string();
            }
        }
    };
    assert_eq!(next_snapshot_event().await, before);

    // A client polls /api/cells throughout the swap.
    let stop = Arc::new(AtomicBool::new(false));
    let (polls, failures) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let poller = {
        let (stop, polls, failures, addr) =
            (stop.clone(), polls.clone(), failures.clone(), server.addr);
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let reply = try_raw_get(addr, "/api/cells").await;
                let ok = reply.is_ok_and(|(status, body)| {
                    status == 200 && cellscope_model::schema::read_ipc_stream(&body).is_ok()
                });
                if !ok {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
                polls.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    // A new run directory lands.
    let good = std::fs::read_to_string(fixtures().join("good/20260101_000000_000001/metrics.csv"))
        .unwrap();
    let new_run = root.path().join("20260301_000000_000099");
    std::fs::create_dir_all(&new_run).unwrap();
    std::fs::write(
        new_run.join("metrics.csv"),
        good.replace("20260101_000000_000001", "20260301_000000_000099"),
    )
    .unwrap();

    // The watcher may catch the file half-written (that snapshot serves what is complete and warns); wait for
    // the announcement of the snapshot that has the new run's cells.
    let announced = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let id = next_snapshot_event().await;
            if server.store.load().index.cells.len() == 8 {
                return id;
            }
        }
    })
    .await
    .expect("an SSE event for the new run within 20 s");
    assert_ne!(announced, before);
    let after = snapshot_id(server.addr).await;
    assert_eq!(after, announced);
    let snapshot = server.store.load();
    assert_eq!(snapshot.index.cells.len(), 8);
    assert!(snapshot.index.run("20260301_000000_000099").is_some());
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, Ordering::Relaxed);
    poller.await.unwrap();
    assert!(polls.load(Ordering::Relaxed) > 10, "the poller ran");
    assert_eq!(
        failures.load(Ordering::Relaxed),
        0,
        "no request failed during the swap"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_the_data_does_not_trigger_re_indexing() {
    let root = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("good"), root.path());
    let server = start(root.path()).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    for _ in 0..5 {
        let (status, _) = raw_get(server.addr, "/api/requests?run=20260101_000000_000001&phase=scaling&model=llama3.2-1b&workload=short_decode&n=1&rep=0").await;
        assert_eq!(status, 200);
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // Only the first full pass ran: neither indexing nor serving rows (both open files) counts as a change.
    assert_eq!(server.store.reindexes.load(Ordering::Relaxed), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_escapes_get_400_or_404_and_read_nothing_outside_the_root() {
    // A secret outside the data root, reachable only by escaping: a run directory and a plain file.
    let outside = tempfile::tempdir().unwrap();
    let secret_run = outside.path().join("20260909_000000_000666");
    std::fs::create_dir_all(&secret_run).unwrap();
    let good = std::fs::read_to_string(fixtures().join("good/20260101_000000_000001/metrics.csv"))
        .unwrap();
    std::fs::write(
        secret_run.join("metrics.csv"),
        good.replace("20260101_000000_000001", "20260909_000000_000666")
            .replace("llama3.2-1b", "secret-model"),
    )
    .unwrap();
    std::fs::write(outside.path().join("secret.txt"), "TOP-SECRET").unwrap();

    let root = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("good"), root.path());
    // Symlinks pointing outside: a directory and a metrics.csv.
    std::os::unix::fs::symlink(outside.path(), root.path().join("escape-dir")).unwrap();
    let linked_run = root.path().join("20260910_000000_000667");
    std::fs::create_dir_all(&linked_run).unwrap();
    std::os::unix::fs::symlink(
        secret_run.join("metrics.csv"),
        linked_run.join("metrics.csv"),
    )
    .unwrap();
    let before = checksum(root.path());
    let outside_before = checksum(outside.path());

    let server = start(root.path()).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let secret = outside
        .path()
        .join("secret.txt")
        .to_string_lossy()
        .into_owned();
    let cell = "phase=scaling&model=secret-model&workload=short_decode&n=1&rep=0";
    let attempts = [
        "/../../../../etc/passwd".to_string(),
        "/%2e%2e/%2e%2e/%2e%2e/etc/passwd".to_string(),
        "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd".to_string(),
        "/..%2f..%2f..%2fetc%2fpasswd".to_string(),
        "/..%5c..%5cwindows%5cwin.ini".to_string(),
        "/escape-dir/secret.txt".to_string(),
        "/escape-dir/20260909_000000_000666/metrics.csv".to_string(),
        format!("/{secret}"),
        format!("//{}", secret.trim_start_matches('/')),
        "/%252e%252e/%252e%252e/etc/passwd".to_string(),
        "/index.html/../../etc/passwd".to_string(),
        "/api/../../etc/passwd".to_string(),
        format!("/api/requests?run=20260909_000000_000666&{cell}"),
        format!("/api/requests?run=20260910_000000_000667&{cell}"),
        format!("/api/requests?run=../../escape-dir/20260909_000000_000666&{cell}"),
        format!("/api/requests?run=%2Fetc%2Fpasswd&{cell}"),
        "/api/cells?run=..%2F..%2Fetc".to_string(),
    ];
    for target in &attempts {
        let (status, body) = raw_get(server.addr, target).await;
        let text = String::from_utf8_lossy(&body);
        let is_empty_table = target.starts_with("/api/cells")
            && status == 200
            && cellscope_model::schema::read_ipc_stream(&body)
                .is_ok_and(|batches| batches.iter().all(|b| b.num_rows() == 0));
        assert!(
            status == 400 || status == 404 || is_empty_table,
            "{target}: status {status}: {text}"
        );
        assert!(
            !text.contains("TOP-SECRET")
                && !text.contains("root:x:")
                && !text.contains("secret-model"),
            "{target} leaked: {text}"
        );
    }
    let snapshot = server.store.load();
    assert!(
        snapshot.index.run("20260909_000000_000666").is_none(),
        "a run reached through a symlink was indexed"
    );
    assert!(
        snapshot.index.run("20260910_000000_000667").is_none(),
        "a symlinked metrics.csv was read"
    );
    assert!(
        snapshot
            .index
            .warnings
            .iter()
            .any(|warning| warning.kind == "symlink_ignored")
    );
    drop(server);
    assert_eq!(checksum(root.path()), before, "the data root changed");
    assert_eq!(checksum(outside.path()), outside_before);
}

/// A raw GET with extra request headers: `(status, ETag, body)`.
/// Re-indexes the store's data root on a blocking thread, as the watcher does.
async fn reindex(store: &Arc<Store>) {
    let worker = store.clone();
    tokio::task::spawn_blocking(move || worker.reindex(&cellscope_index::IndexOptions::default()))
        .await
        .unwrap()
        .unwrap();
}

/// Adds a run `run_id` under `root` whose metrics.csv is run 20260101_000000_000001's under the new id.
fn copy_first_run(root: &Path, run_id: &str) {
    let csv = std::fs::read_to_string(root.join("20260101_000000_000001/metrics.csv")).unwrap();
    let run = root.join(run_id);
    std::fs::create_dir(&run).unwrap();
    std::fs::write(
        run.join("metrics.csv"),
        csv.replace("20260101_000000_000001", run_id),
    )
    .unwrap();
}

/// `GET target` with extra `headers` (each line ending in CRLF): status, ETag and body.
async fn get_tagged(addr: SocketAddr, target: &str, headers: &str) -> (u16, String, Vec<u8>) {
    let request = format!("GET {target} HTTP/1.1\r\n{headers}");
    let (status, head, body) = common::raw_response(addr, request.trim_end())
        .await
        .unwrap();
    assert_ne!(status, 0, "{target}: no complete response head");
    let etag = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("etag")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_default();
    (status, etag, body)
}

/// Every conditional request with a validator seen earlier: a 304 only when the body is still the one that
/// validator was given with.
async fn no_stale_304(addr: SocketAddr, seen: &[(String, String, Vec<u8>)]) -> usize {
    let mut not_modified = 0;
    for (target, etag, body) in seen {
        let (status, _, _) = get_tagged(addr, target, &format!("If-None-Match: {etag}\r\n")).await;
        let (_, _, current) = get_tagged(addr, target, "").await;
        if status == 304 {
            not_modified += 1;
            assert!(
                &current == body,
                "{target}: 304 for {etag}, but the body has changed"
            );
        } else {
            assert_eq!(status, 200, "{target}");
        }
    }
    not_modified
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_304_never_confirms_a_body_that_changed_across_the_second_stage_and_a_data_change() {
    let root = tempfile::tempdir().unwrap();
    copy_tree(&common::demo_root().join("tr164-v3"), root.path());
    std::fs::copy(
        common::demo_root().join("exclusions.toml"),
        root.path().join("exclusions.toml"),
    )
    .unwrap();
    // No watcher: the test moves the server from the first indexing stage to the second, then changes the data.
    let server = start_serving(root.path(), false).await;
    let (addr, store) = (server.addr, server.store.clone());
    let targets = [
        "/api/index",
        "/api/provenance",
        "/api/cells",
        "/api/cells?format=json&backend=sglang&n=32",
        "/api/requests?run=20260612_204254_036590&phase=scaling&model=phi-4&workload=long_decode&n=4&rep=1",
    ];
    let mut seen = Vec::new();
    let collect = async |seen: &mut Vec<(String, String, Vec<u8>)>| {
        for target in targets {
            let (status, etag, body) = get_tagged(addr, target, "").await;
            assert_eq!(status, 200, "{target}");
            assert!(etag.starts_with("W/\""), "{target}: {etag}");
            seen.push((target.to_string(), etag, body));
        }
    };
    collect(&mut seen).await;
    let stage_one: serde_json::Value = serde_json::from_slice(&seen[0].2).unwrap();
    assert_eq!(stage_one["complete"], false);
    // Unchanged: every validator still holds.
    assert_eq!(no_stale_304(addr, &seen).await, targets.len());

    // The second stage adds checksums and the backup comparison to /api/index and /api/provenance.
    reindex(&store).await;
    let (_, _, index) = get_tagged(addr, "/api/index", "").await;
    let stage_two: serde_json::Value = serde_json::from_slice(&index).unwrap();
    assert_eq!(stage_two["complete"], true);
    assert_eq!(
        stage_two["snapshot"], stage_one["snapshot"],
        "the data did not change"
    );
    no_stale_304(addr, &seen).await;
    collect(&mut seen).await;

    // A data change: the ledger goes, so exclusions and cells change.
    std::fs::remove_file(root.path().join("exclusions.toml")).unwrap();
    let worker = store.clone();
    let changed = tokio::task::spawn_blocking(move || {
        worker.reindex(&cellscope_index::IndexOptions::default())
    })
    .await
    .unwrap()
    .unwrap();
    assert!(changed.is_some(), "a new snapshot");
    no_stale_304(addr, &seen).await;
    // Re-indexing unchanged data keeps the snapshot, so its validators keep holding.
    let mut current = Vec::new();
    collect(&mut current).await;
    let worker = store.clone();
    let again = tokio::task::spawn_blocking(move || {
        worker.reindex(&cellscope_index::IndexOptions::default())
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(again, None);
    assert_eq!(no_stale_304(addr, &current).await, targets.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_snapshot_keeps_its_figures_after_the_data_changes() {
    let root = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("good"), root.path());
    let cache = tempfile::tempdir().unwrap();
    let store = Store::archiving(
        root.path().to_path_buf(),
        first_snapshot(root.path(), None).unwrap(),
        Some(cellscope::http::archive::Archive::new(
            cache.path().to_path_buf(),
            20,
            1 << 30,
        )),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serving = store.clone();
    tokio::spawn(async move {
        serve_listener(
            listener,
            serving,
            HttpOptions::default(),
            std::future::pending(),
        )
        .await
        .unwrap();
    });
    let pinned = snapshot_id(addr).await;
    let (_, before) = raw_get(addr, "/api/cells?format=json").await;

    // The data changes: one more run.
    copy_first_run(root.path(), "20260101_000000_000002");
    reindex(&store).await;
    let latest = snapshot_id(addr).await;
    assert_ne!(latest, pinned);
    let (_, now) = raw_get(addr, "/api/cells?format=json").await;
    assert_ne!(now, before);

    // The pinned link still reads the figures it was made with, and says which snapshot they are.
    let (status, kept) = raw_get(addr, &format!("/api/cells?format=json&at={pinned}")).await;
    assert_eq!(status, 200);
    assert_eq!(kept, before);
    let (_, index) = raw_get(addr, &format!("/api/index?at={pinned}")).await;
    let index: serde_json::Value = serde_json::from_slice(&index).unwrap();
    assert_eq!(index["snapshot"], pinned.as_str());
    assert_eq!(index["runs"].as_array().unwrap().len(), 1);
    let (status, _) = raw_get(addr, &format!("/api/provenance?at={pinned}")).await;
    assert_eq!(status, 200);
    let (status, filtered) =
        raw_get(addr, &format!("/api/cells?format=json&n=1&at={pinned}")).await;
    assert_eq!(status, 200);
    assert!(filtered.len() < kept.len());
    // The current snapshot by id is the current one.
    let (_, current) = raw_get(addr, &format!("/api/cells?format=json&at={latest}")).await;
    assert_eq!(current, now);
    // A snapshot never kept, or not an id at all, is a clear 404.
    for at in ["0123456789abcdef", "..%2F..%2Fetc"] {
        let (status, body) = raw_get(addr, &format!("/api/cells?at={at}")).await;
        assert_eq!(status, 404, "{at}");
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "snapshot_gone");
    }
    // A comparison pinned to a kept snapshot takes the runs behind its sides from that snapshot's index: once a
    // third run has made `latest` a kept snapshot, comparing its two runs still names them, and only them.
    copy_first_run(root.path(), "20260101_000000_000003");
    reindex(&store).await;
    assert_ne!(snapshot_id(addr).await, latest);
    let (status, body) = raw_get(
        addr,
        &format!(
            "/api/compare?by=run&a=20260101_000000_000001&b=20260101_000000_000002&metric=aggregate_tps&at={latest}"
        ),
    )
    .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let body: cellscope_model::api::CompareBody = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        body.comparison.groups[0].n_pairs, 2,
        "N = 1 and 2, each the mean of two reps"
    );
    let runs = |side: &[cellscope_model::compare::confounders::SideRun]| -> Vec<String> {
        side.iter().map(|run| run.run_id.clone()).collect()
    };
    assert_eq!(runs(&body.confounders.a_runs), ["20260101_000000_000001"]);
    assert_eq!(runs(&body.confounders.b_runs), ["20260101_000000_000002"]);
    // The fixture states no environment: nothing differs, nothing is equal.
    assert!(body.confounders.differing.is_empty() && body.confounders.equal.is_empty());

    // Kept snapshots live in the cache directory; the data root holds only what the test wrote.
    assert!(cache.path().join(&pinned).join("cells.arrow.zst").is_file());
    assert!(!root.path().join(&pinned).exists());
}

/// Waits until the archive remembers the files `fingerprint` (the complete snapshot is kept as it is swapped in).
async fn remembered(
    archive: &cellscope::http::archive::Archive,
    fingerprint: &str,
) -> cellscope::http::archive::KeptBodies {
    for _ in 0..400 {
        if let Some(found) = archive.kept_for_inputs(fingerprint) {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the archive never remembered the complete snapshot's files");
}

/// A server in its start on a loopback port, answering from `kept` until it is made ready.
async fn serve_starting(
    kept: Option<cellscope::http::archive::KeptBodies>,
    options: &HttpOptions,
) -> (SocketAddr, cellscope::http::start::Starting) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let starting = cellscope::http::start::Starting::new(&listener, kept, options).unwrap();
    tokio::spawn(
        starting
            .clone()
            .serve(listener, std::future::pending::<()>()),
    );
    (addr, starting)
}

fn unzstd(body: &[u8]) -> Vec<u8> {
    zstd::stream::decode_all(body).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_on_unchanged_files_answers_the_first_requests_from_the_kept_snapshot_while_it_indexes()
 {
    use cellscope::http::start::inputs_fingerprint;
    let root = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("good"), root.path());
    let cache = tempfile::tempdir().unwrap();
    let (root, cache) = (root.path(), cache.path());

    let before = inputs_fingerprint(root).unwrap();
    let complete = a_first_start_keeps_its_complete_snapshot(root, cache, &before).await;
    let first_id = complete.id.clone();

    // A second start on the same files: the app's first requests answer before the store exists, the rest
    // waits for it.
    let now = inputs_fingerprint(root).unwrap();
    assert_eq!(now, before, "reading the files did not change them");
    let kept = kept_archive(cache).kept_for_inputs(&now).unwrap();
    let (addr, starting) = serve_starting(Some(kept), &HttpOptions::default()).await;
    the_kept_bodies_answer_before_the_store_exists(addr, &complete).await;
    let second = the_rest_waits_for_the_store(addr, starting, root).await;
    // Once ready, the routes answer from the index: the same table.
    let (status, head, body) =
        common::raw_response(addr, "GET /api/cells HTTP/1.1\r\nAccept-Encoding: zstd")
            .await
            .unwrap();
    assert_eq!(status, 200);
    assert!(head.contains("etag:"), "the route's own answer: {head}");
    assert_eq!(unzstd(&body), second.load().cells_arrow.to_vec());

    a_restart_keeps_the_kept_bodies(root, cache, &now).await;
    a_changed_root_or_a_damaged_body_is_not_answered_from_the_archive(
        root, cache, &before, &first_id,
    );
}

/// The archive of kept snapshots in `cache`, as `serve` opens it.
fn kept_archive(cache: &Path) -> cellscope::http::archive::Archive {
    cellscope::http::archive::Archive::new(cache.to_path_buf(), 20, 1 << 30)
}

/// A start's store: its first snapshot, kept in the archive, with the files' fingerprint at start.
fn start_store(root: &Path, cache: &Path, fingerprint: &str) -> Arc<Store> {
    Store::with_caches(
        root.to_path_buf(),
        first_snapshot(root, None).unwrap(),
        Some(kept_archive(cache)),
        None,
        Some(fingerprint.to_string()),
    )
}

/// A first start: nothing kept for these files yet. Its first snapshot is not remembered for them; the complete
/// one (second stage, same data) is, once kept. Returns the complete snapshot.
async fn a_first_start_keeps_its_complete_snapshot(
    root: &Path,
    cache: &Path,
    before: &str,
) -> Arc<cellscope::http::snapshot::Snapshot> {
    assert!(kept_archive(cache).kept_for_inputs(before).is_none());
    let first = start_store(root, cache, before);
    let first_id = first.load().id.clone();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        kept_archive(cache).kept_for_inputs(before).is_none(),
        "a first-stage snapshot is never remembered for a start"
    );
    reindex(&first).await;
    let complete = first.load();
    assert!(complete.complete);
    assert_eq!(complete.id, first_id);
    let kept = remembered(&kept_archive(cache), before).await;
    assert_eq!(kept.id, first_id);
    assert_eq!(
        unzstd(&kept.cells_arrow_zstd),
        complete.cells_arrow.to_vec()
    );
    assert_eq!(unzstd(&kept.index_json_zstd), complete.index_json.to_vec());
    assert_eq!(
        unzstd(&kept.provenance_json_zstd),
        complete.provenance_json.to_vec()
    );
    complete
}

/// The app's first requests (the cells, index, provenance and pre-refill bodies in zstd) and its files are
/// answered from the kept snapshot `complete` while no store exists.
async fn the_kept_bodies_answer_before_the_store_exists(
    addr: SocketAddr,
    complete: &cellscope::http::snapshot::Snapshot,
) {
    let first_id = &complete.id;
    let pre_refill = cellscope::export::encode(
        &complete.index.pre_refill_cells,
        cellscope::export::Format::Arrow,
    )
    .unwrap();
    for (target, expected) in [
        ("/api/cells", complete.cells_arrow.to_vec()),
        ("/api/index", complete.index_json.to_vec()),
        ("/api/provenance", complete.provenance_json.to_vec()),
        ("/api/cells?lineage=pre_refill", pre_refill),
    ] {
        let (status, head, body) = common::raw_response(
            addr,
            &format!("GET {target} HTTP/1.1\r\nAccept-Encoding: zstd"),
        )
        .await
        .unwrap();
        assert_eq!(status, 200, "{target}: {head}");
        assert!(
            head.contains(&format!("x-cellscope-snapshot: {first_id}")),
            "{head}"
        );
        assert!(head.contains("content-encoding: zstd"), "{head}");
        assert!(head.contains("x-content-type-options: nosniff"), "{head}");
        assert!(!head.contains("etag:"), "{head}");
        assert_eq!(unzstd(&body), expected, "{target}");
    }
    // The app's files do not wait either.
    let (status, _) = raw_get(addr, "/").await;
    assert_eq!(status, 200);
}

/// Everything else waits for the index (a filter, another format, another route, a client that does not take
/// zstd) and is answered from the store once it is ready. Returns that store.
async fn the_rest_waits_for_the_store(
    addr: SocketAddr,
    starting: cellscope::http::start::Starting,
    root: &Path,
) -> Arc<Store> {
    let waiting: Vec<_> = [
        "GET /api/cells?format=json HTTP/1.1",
        "GET /api/cells HTTP/1.1",
        "GET /api/index HTTP/1.1",
        "GET /api/cells?n=1 HTTP/1.1\r\nAccept-Encoding: zstd",
        "GET /api/requests?run=20260101_000000_000001&phase=scaling&backend=vllm HTTP/1.1",
    ]
    .into_iter()
    .map(|head| tokio::spawn(common::raw_response(addr, head)))
    .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        waiting.iter().all(|request| !request.is_finished()),
        "no request the kept bodies cannot answer was answered before the store was ready"
    );
    let second = Store::new(root.to_path_buf(), first_snapshot(root, None).unwrap());
    starting.ready(second.clone()).unwrap();
    let answers: Vec<_> = futures_util::future::join_all(waiting)
        .await
        .into_iter()
        .map(|answer| answer.unwrap().unwrap())
        .collect();
    assert!(answers[..4].iter().all(|(status, _, _)| *status == 200));
    assert_eq!(answers[1].2, second.load().cells_arrow.to_vec());
    assert_eq!(answers[2].2, second.load().index_json.to_vec());
    assert_ne!(answers[4].0, 0, "the held request got the API's own answer");
    second
}

/// The restart keeps its own snapshots of the same data (first stage, then complete) without replacing the kept
/// bodies, whose bytes the next start checks.
async fn a_restart_keeps_the_kept_bodies(root: &Path, cache: &Path, now: &str) {
    let kept_before = kept_archive(cache).kept_for_inputs(now).unwrap();
    let restarted = start_store(root, cache, now);
    reindex(&restarted).await;
    assert!(restarted.load().complete);
    let kept_after = kept_archive(cache).kept_for_inputs(now).unwrap();
    assert_eq!(kept_after.index_json_zstd, kept_before.index_json_zstd);
    assert_eq!(
        kept_after.provenance_json_zstd,
        kept_before.provenance_json_zstd
    );
    assert_eq!(
        kept_after.pre_refill_arrow_zstd,
        kept_before.pre_refill_arrow_zstd
    );
}

/// Touching a file, adding one, or a damaged kept body: nothing is answered from the archive.
fn a_changed_root_or_a_damaged_body_is_not_answered_from_the_archive(
    root: &Path,
    cache: &Path,
    before: &str,
    first_id: &str,
) {
    use cellscope::http::start::inputs_fingerprint;
    let metrics = root.join("20260101_000000_000001/metrics.csv");
    let file = std::fs::File::options()
        .append(true)
        .open(&metrics)
        .unwrap();
    file.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    let touched = inputs_fingerprint(root).unwrap();
    assert_ne!(touched, before);
    assert!(kept_archive(cache).kept_for_inputs(&touched).is_none());
    std::fs::write(root.join("notes.txt"), "a new file").unwrap();
    assert_ne!(inputs_fingerprint(root).unwrap(), touched);
    let kept_body = cache.join(first_id).join("provenance.json.zst");
    let mut damaged = std::fs::read(&kept_body).unwrap();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    std::fs::write(&kept_body, damaged).unwrap();
    assert!(kept_archive(cache).kept_for_inputs(before).is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_waits_too_long_for_the_first_index_gets_a_503_that_says_why() {
    let mut options = HttpOptions::default();
    options.limits.first_index_wait = Duration::from_millis(200);
    let (addr, starting) = serve_starting(None, &options).await;
    // The app's files are served while the index is being built; the API is not.
    assert_eq!(raw_get(addr, "/").await.0, 200);
    let (status, body) = raw_get(addr, "/api/index").await;
    assert_eq!(status, 503);
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error"]["code"], "unavailable");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("still building its first index"),
        "{body}"
    );
    // Once ready, the same request is answered.
    let root = fixtures().join("good");
    starting
        .ready(Store::new(
            root.clone(),
            first_snapshot(&root, None).unwrap(),
        ))
        .unwrap();
    assert_eq!(raw_get(addr, "/api/index").await.0, 200);
}

/// The responses on one connection's bytes, in order: each one's head and body (framed by `Content-Length`).
fn split_responses(mut bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut responses = Vec::new();
    while !bytes.is_empty() {
        let split = bytes
            .windows(4)
            .position(|window| window == b"\r\n\r\n")
            .expect("a complete response head");
        let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
        let length: usize = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse().unwrap())
            })
            .expect("a Content-Length");
        let body_start = split + 4;
        responses.push((head, bytes[body_start..body_start + length].to_vec()));
        bytes = &bytes[body_start + length..];
    }
    responses
}

/// The cells table and its compressed form are sent from sealed memory files (without copying) and arrive whole
/// however the client reads: three requests pipelined on one connection whose receive buffer is small and whose
/// reader is slow, so the server's sends are partial and wait for the socket, headers and bodies alternating.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_sent_without_copying_arrive_whole_through_partial_sends_and_pipelining() {
    use tokio::io::AsyncReadExt as _;
    let server = start_serving(common::demo_root(), false).await;
    let plain = server.store.current.load().cells_arrow.clone();
    assert!(plain.len() > cellscope::http::zero_copy::MIN_SEALED_BYTES);
    let sent_before = cellscope::http::zero_copy::bytes_sent_without_copying();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(server.addr).await.unwrap();
    stream
        .write_all(
            b"GET /api/cells HTTP/1.1\r\nHost: a\r\n\r\n\
              GET /api/cells HTTP/1.1\r\nHost: a\r\nAccept-Encoding: zstd\r\n\r\n\
              GET /api/cells HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
        )
        .await
        .unwrap();
    let mut received = Vec::new();
    let mut chunk = [0u8; 1500];
    for reads in 0usize.. {
        let read = stream.read(&mut chunk).await.unwrap();
        if read == 0 {
            break;
        }
        received.extend_from_slice(&chunk[..read]);
        if reads % 64 == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    let responses = split_responses(&received);
    assert_eq!(responses.len(), 3);
    for (head, _) in &responses {
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    }
    assert_eq!(responses[0].1, plain);
    assert!(
        responses[1]
            .0
            .to_ascii_lowercase()
            .contains("content-encoding: zstd")
    );
    assert_eq!(unzstd(&responses[1].1), plain);
    assert_eq!(responses[2].1, plain);
    if cfg!(target_os = "linux") {
        let sent = cellscope::http::zero_copy::bytes_sent_without_copying() - sent_before;
        let expected = 2 * plain.len() + responses[1].1.len();
        assert!(
            sent >= expected as u64,
            "{sent} bytes sent without copying, at least {expected} expected"
        );
    }
}

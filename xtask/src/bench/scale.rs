//! `cargo xtask bench scale`: the 10-million-row scale budgets (docs/performance.md), end to end.
//!
//! The data is `demo-data --scale 34` (≈ 100 runs, ≈ 10 million rows, ≈ 2.9 GB), generated once under
//! `target/bench/scale-34/data` (a `.complete` marker beside it is written last, so an interrupted generation is
//! redone). Measured: the cold cells-only index in paired runs against the dataframe peers on the same files (as
//! `bench index`), then a release `serve` of the root: time from spawn to the first `/api/cells` answer, peak
//! RSS, the `/api/cells` body and its p99 under 64 connections, `/api/requests` p99 for random cells, and a
//! restart on unchanged data.

use crate::bench::{free_port, wrk};
use crate::process;
use crate::workspace_root;
use anyhow::{Context, bail};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::e2e::SCALE;
/// Cells of the `/api/requests` load test, drawn once with a fixed seed.
const REQUEST_CELLS: usize = 500;

/// The status code of `GET path` on `addr` with the extra header lines `headers` (each ending in CRLF), or `None`
/// while nothing answers. A raw request on a fresh connection, so polling every few milliseconds costs no process
/// start.
fn status_with(addr: &str, path: &str, headers: &str) -> Option<u16> {
    let mut stream = std::net::TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}Connection: close\r\n\r\n"
    )
    .ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

/// A running `cellscope serve`, killed when dropped.
struct Server {
    child: std::process::Child,
    addr: String,
    /// Seconds from spawn to the first 200 from `/api/cells`.
    first_cells_s: f64,
    started: Instant,
}

impl Server {
    fn start(binary: &str, root: &str, extra: &[&str]) -> anyhow::Result<Server> {
        let addr = format!("127.0.0.1:{}", free_port()?);
        let started = Instant::now();
        let mut args = vec!["serve", root, "--addr", &addr];
        args.extend(extra);
        let child = std::process::Command::new(binary)
            .args(&args)
            .env("CELLSCOPE_LOG", "warn")
            .spawn()
            .context("starting cellscope serve")?;
        let mut server = Server {
            child,
            addr,
            first_cells_s: 0.0,
            started,
        };
        server.first_cells_s = server.first_200_s("/api/cells", "Accept-Encoding: zstd\r\n")?;
        Ok(server)
    }

    /// Seconds from spawn to the first 200 from `/api/index` without zstd, which a warm start's kept bodies do not
    /// answer: the API answers from the server's own index.
    fn first_index_s(&mut self) -> anyhow::Result<f64> {
        self.first_200_s("/api/index", "")
    }

    /// Seconds from spawn to the first 200 from `GET path` with the extra header lines `headers`.
    fn first_200_s(&mut self, path: &str, headers: &str) -> anyhow::Result<f64> {
        loop {
            if status_with(&self.addr, path, headers) == Some(200) {
                return Ok(self.started.elapsed().as_secs_f64());
            }
            if self.started.elapsed() > Duration::from_secs(300) {
                bail!("the server did not answer {path} within 300 s");
            }
            if let Some(status) = self.child.try_wait()? {
                bail!("the server exited ({status}) before answering {path}");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Waits until the second indexing stage (hashes, backup comparison) has finished.
    fn settle(&self) -> anyhow::Result<f64> {
        let started = Instant::now();
        loop {
            if let Ok(body) =
                process::output("curl", &["-sf", &format!("http://{}/api/index", self.addr)])
                && body.contains("\"complete\":true")
            {
                return Ok(started.elapsed().as_secs_f64());
            }
            if started.elapsed() > Duration::from_secs(600) {
                bail!("the server did not finish its full index within 600 s");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Peak resident memory so far, from the kernel's `VmHWM`.
    fn peak_rss_mb(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
        let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb / 1024.0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Percent-encodes a query value (the demo's values are plain, but a bench should not depend on it).
fn encoded(value: &str) -> String {
    value
        .bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
                (byte as char).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

/// A wrk script that asks for the rows of one of `cells` (drawn with a fixed seed) per request.
fn requests_script(cells: &[Value]) -> anyhow::Result<PathBuf> {
    let with_rows: Vec<&Value> = cells
        .iter()
        .filter(|cell| cell.get("rows").and_then(Value::as_u64).unwrap_or(0) > 0)
        .collect();
    if with_rows.is_empty() {
        bail!("no cell with rows to ask for");
    }
    // A 64-bit xorshift: the same cells every run, no random-number dependency.
    let mut state = 0x5EED_0164_u64;
    let mut paths = Vec::new();
    for _ in 0..REQUEST_CELLS {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let cell = with_rows[(state % with_rows.len() as u64) as usize];
        let text = |name: &str| match cell.get(name) {
            Some(Value::String(text)) => encoded(text),
            Some(other) => encoded(&other.to_string()),
            None => String::new(),
        };
        paths.push(format!(
            "\"/api/requests?run={}&suite={}&phase={}&backend={}&model={}&workload={}&n={}&rep={}\"",
            text("run_id"),
            text("suite"),
            text("phase"),
            text("backend"),
            text("model"),
            text("workload"),
            text("n"),
            text("rep")
        ));
    }
    let script = format!(
        "local paths = {{ {} }}\nlocal next = 0\nrequest = function()\n  next = next % #paths + 1\n  return wrk.format(\"GET\", paths[next])\nend\n",
        paths.join(",\n")
    );
    let path = workspace_root().join("target/bench/scale-requests.lua");
    std::fs::write(&path, script)?;
    Ok(path)
}

pub(super) fn scale(runs: u32, seconds: u32, connections: u32) -> anyhow::Result<()> {
    let root = crate::e2e::ensure_scale_data()?;
    crate::bench::ensure_wrk()?;
    process::run("cargo", &["build", "--release", "-p", "cellscope"])?;
    let binary = workspace_root()
        .join("target/release/cellscope")
        .to_string_lossy()
        .into_owned();
    let root_text = root.to_string_lossy().into_owned();
    let out_dir = workspace_root().join("target/bench");

    let index = crate::bench::paired_tr164(&binary, &root, &crate::bench::PEERS, runs, false, 1)?;

    // A cold start of the server (the files are in the page cache after the index runs above) with an empty
    // cache of its own under target/, which its second stage fills for the restart below.
    let cache = out_dir.join("scale-cache");
    if cache.exists() {
        std::fs::remove_dir_all(&cache).with_context(|| format!("emptying {}", cache.display()))?;
    }
    let cache_text = cache.to_string_lossy().into_owned();
    let server = Server::start(&binary, &root_text, &["--cache", &cache_text])?;
    let cold_first_cells_s = server.first_cells_s;
    let settle_s = server.settle()?;
    let cells_url = format!("http://{}/api/cells", server.addr);
    let body_bytes = process::output("sh", &["-c", &format!("curl -sf {cells_url} | wc -c")])?;
    let zstd_bytes = process::output(
        "sh",
        &[
            "-c",
            &format!("curl -sf -H 'Accept-Encoding: zstd' {cells_url} | wc -c"),
        ],
    )?;
    let load = (
        crate::bench::default_wrk_threads(None),
        seconds,
        connections,
    );
    let cells: Vec<Value> =
        serde_json::from_slice(&std::fs::read(out_dir.join("tr164-cells.json"))?)
            .context("reading cellscope's cells")?;
    let (cells_rps, cells_p50, cells_p99, cells_errors, raw) =
        wrk(&cells_url, Some("zstd"), load, None)?;
    eprintln!("{raw}");
    let script = requests_script(&cells)?;
    let (requests_rps, requests_p50, requests_p99, requests_errors, raw) = wrk(
        &format!("http://{}", server.addr),
        Some("zstd"),
        load,
        Some(&script.to_string_lossy()),
    )?;
    eprintln!("{raw}");
    let peak_rss_mb = server.peak_rss_mb();
    drop(server);

    // Restarts on unchanged data: warm starts from the cache the first server wrote. Each answers the app's first
    // requests from the snapshot kept for these files, then the whole API once its own index is built.
    let mut restarts = Vec::new();
    for _ in 0..runs {
        let mut restart = Server::start(&binary, &root_text, &["--cache", &cache_text])?;
        let api_s = restart.first_index_s()?;
        restarts.push((restart.first_cells_s, api_s));
    }
    let restart_cells: Vec<String> = restarts.iter().map(|run| format!("{:.3}", run.0)).collect();
    let restart_api: Vec<String> = restarts.iter().map(|run| format!("{:.2}", run.1)).collect();
    let restart_first_cells_s =
        crate::paired::median(&mut restarts.iter().map(|run| run.0).collect::<Vec<_>>());
    let restart_api_s =
        crate::paired::median(&mut restarts.iter().map(|run| run.1).collect::<Vec<_>>());

    let verdict = |met: bool| if met { "met" } else { "**not met**" };
    let rss_text = peak_rss_mb.map_or("?".to_string(), |mb| format!("{mb:.0} MB"));
    let table = format!(
        "`cargo xtask bench scale`: `demo-data --scale {SCALE}` under `target/bench/scale-34/data`, {cells} cells; \
         the peers read the {files} metrics.csv files whose cells are in the table ({gb:.2} GB).\n\n\
         **Cold index, paired runs** (cellscope cells-only index, spawn to exit, against each peer in a fresh \
         process, timed inside it after its imports and one untimed warm-up run):\n\n{index_table}\n\
         Cold index, median of the runs: {cold_index:.2} s (budget ≤ 10 s: {cold_index_verdict}); median ratio to the fastest \
         peer like for like (both after a warm-up run) {ratio:.2} (budget ≤ 0.5: {ratio_verdict}).\n\n\
         **Server** (release `cellscope serve`, loopback, wrk -t {wrk_threads} -c {connections} -d {seconds}s on the same 2 cores):\n\n\
         | figure | measured | budget |\n|---|---|---|\n\
         | spawn → first `/api/cells` 200 (cold) | {cold:.2} s | — |\n\
         | first answer → full index (hashes, backup comparison) done | {settle:.1} s | — |\n\
         | peak RSS of `serve` (after the load tests) | {rss_text} | ≤ 2 GB: {rss_verdict} |\n\
         | `/api/cells` body | {body} bytes identity, {zstd} bytes zstd | — |\n\
         | `/api/cells` zstd under load | {cells_rps:.0} req/s, p50 {cells_p50:.2} ms, p99 {cells_p99:.2} ms, {cells_errors} errors | — |\n\
         | `/api/requests`, {REQUEST_CELLS} cells in turn | {requests_rps:.0} req/s, p50 {requests_p50:.2} ms, p99 {requests_p99:.2} ms, {requests_errors} errors | — |\n\
         | restart on unchanged data (warm, from the cache) → first `/api/cells` 200, median of {runs} ({restart_cells}) | {restart:.3} s | ≤ 1 s: {restart_verdict} |\n\
         | the same restarts → first `/api/index` 200 (its own index built), median ({restart_api_runs}) | {restart_api:.2} s | — |\n",
        wrk_threads = load.0,
        restart_cells = restart_cells.join(", "),
        restart_api_runs = restart_api.join(", "),
        cells = index.cells,
        files = index.files,
        gb = index.bytes as f64 / 1e9,
        index_table = index.table,
        cold_index = index.median_cellscope_s,
        cold_index_verdict = verdict(index.median_cellscope_s <= 10.0),
        ratio = index.median_ratio,
        ratio_verdict = verdict(index.median_ratio <= 0.5),
        cold = cold_first_cells_s,
        settle = settle_s,
        rss_verdict = verdict(peak_rss_mb.is_some_and(|mb| mb <= 2048.0)),
        body = body_bytes.trim(),
        zstd = zstd_bytes.trim(),
        restart = restart_first_cells_s,
        restart_api = restart_api_s,
        restart_verdict = verdict(restart_first_cells_s <= 1.0),
    );
    std::fs::write(out_dir.join("scale.md"), &table)?;
    println!("{table}\n(written to target/bench/scale.md)");
    Ok(())
}

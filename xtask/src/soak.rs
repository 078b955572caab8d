//! `cargo xtask soak [--seconds N]`: a release `cellscope serve` on loopback under 64 keep-alive connections
//! (plain and filtered `/api/cells`, `/api/requests`, `/api/provenance`, `/api/index`) and 16 live-update
//! subscribers, while a writer changes the data root every 2 s (adds a run, appends rows in small writes,
//! truncates a file mid-row, renames and deletes runs, rewrites a ledger). It then checks, and writes to
//! `target/soak/report.md`: no status but 200 and 304, every body the same for the same ETag (never a mix of two
//! snapshots), no request slower than 1 s, resident memory flat within 20% after warm-up, open file descriptors
//! flat, and the server's final cells table equal to a cold index of the final tree.
//!
//! The root is a copy of the demo data under `target/soak/data`; the demo data itself is only read.

use crate::bench::free_port;
use crate::process;
use crate::workspace_root;
use anyhow::{Context, bail};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 64;
const SUBSCRIBERS: usize = 16;
const WRITE_EVERY: Duration = Duration::from_secs(2);
const WARM_UP: Duration = Duration::from_secs(10);

/// What every connection saw, merged.
#[derive(Default)]
struct Seen {
    statuses: BTreeMap<u16, u64>,
    /// Non-200/304 answers: (path, status, start of body).
    errors: Vec<(String, u16, String)>,
    slowest_ms: f64,
    latencies_ms: Vec<f64>,
    /// (path, ETag) → body hashes seen.
    bodies: BTreeMap<(String, String), BTreeSet<[u8; 32]>>,
    stream_errors: Vec<String>,
}

pub(crate) fn run(seconds: u64) -> anyhow::Result<()> {
    let binary = crate::e2e::release_server()?;
    run_with(&binary, seconds, true)
}

/// The soak with `binary`. Without `timing` (CI's short run on the debug server, sharing the machine with other
/// steps) the latency and memory figures are reported, not held to their budgets; errors, ETag consistency,
/// descriptors and the final index always are.
pub(crate) fn run_with(binary: &Path, seconds: u64, timing: bool) -> anyhow::Result<()> {
    let root = workspace_root();
    let demo = crate::demo::ensure_demo_data()?;
    let work = root.join("target/soak");
    let data = work.join("data");
    if data.exists() {
        std::fs::remove_dir_all(&data)?;
    }
    std::fs::create_dir_all(&work)?;
    process::run(
        "cp",
        &["-r", &demo.to_string_lossy(), &data.to_string_lossy()],
    )?;
    let before = crate::checksum::Checksum::of(&demo)?;
    let good = root.join("data/fixtures/good/20260101_000000_000001");
    let addr = format!("127.0.0.1:{}", free_port()?);
    let cache = work.join("cache");
    let mut server = std::process::Command::new(binary)
        .args(["serve", &data.to_string_lossy(), "--addr", &addr, "--cache"])
        .arg(&cache)
        .env("CELLSCOPE_LOG", "warn")
        .spawn()
        .context("starting cellscope serve")?;
    let pid = server.id();
    let outcome = soak(&addr, pid, &data, &good, seconds, binary, timing);
    let _ = server.kill();
    let _ = server.wait();
    crate::checksum::verify_unchanged(&before, &demo)?;
    outcome
}

/// Resident memory and open files of the server, sampled twice a second: (seconds since start, RSS MB,
/// descriptors).
type Sample = (f64, f64, usize);

/// What the connections, the subscribers and the writer did over the soak, and the server's samples.
struct Drive {
    seen: Seen,
    events: u64,
    changes: u64,
    samples: Vec<Sample>,
}

/// Resident memory and descriptors after warm-up: their ranges and the medians of the first and last quarter.
struct Resources {
    rss_min: f64,
    rss_max: f64,
    rss_early: f64,
    rss_late: f64,
    fds_min: usize,
    fds_max: usize,
    fds_first: usize,
    fds_last: usize,
}

impl Resources {
    fn of(samples: &[Sample]) -> Resources {
        let after_warm_up: Vec<&Sample> = samples
            .iter()
            .filter(|(at, ..)| *at >= WARM_UP.as_secs_f64())
            .collect();
        let rss = |pick: fn(f64, f64) -> f64| {
            after_warm_up
                .iter()
                .map(|(_, rss, _)| *rss)
                .fold(f64::NAN, pick)
        };
        // Flat: no growth from the first quarter of the measured span to the last (medians), beyond 20%. Each
        // re-index allocates and frees tens of megabytes, so single samples swing more than that without any leak.
        let quarter = (after_warm_up.len() / 4).max(1);
        let median_rss = |samples: &[&Sample]| {
            let mut values: Vec<f64> = samples.iter().map(|(_, rss, _)| *rss).collect();
            values.sort_by(f64::total_cmp);
            values.get(values.len() / 2).copied().unwrap_or(0.0)
        };
        // Flat: what is open in the last quarter is no more than in the first plus a few descriptors (medians, as
        // for memory: a single sample counts the files that requests in flight and a re-index hold open at that
        // instant, which swings by ten without any leak; a leak grows with the 20,000 requests of a short soak).
        let median_fds = |samples: &[&Sample]| {
            let mut values: Vec<usize> = samples.iter().map(|(.., fds)| *fds).collect();
            values.sort_unstable();
            values.get(values.len() / 2).copied().unwrap_or(0)
        };
        let first = &after_warm_up[..quarter.min(after_warm_up.len())];
        let last = &after_warm_up[after_warm_up.len().saturating_sub(quarter)..];
        Resources {
            rss_min: rss(f64::min),
            rss_max: rss(f64::max),
            rss_early: median_rss(first),
            rss_late: median_rss(last),
            fds_min: after_warm_up
                .iter()
                .map(|(.., fds)| *fds)
                .min()
                .unwrap_or(0),
            fds_max: after_warm_up
                .iter()
                .map(|(.., fds)| *fds)
                .max()
                .unwrap_or(0),
            fds_first: median_fds(first),
            fds_last: median_fds(last),
        }
    }

    fn rss_flat(&self) -> bool {
        self.rss_late <= self.rss_early * 1.2
    }

    fn fds_flat(&self) -> bool {
        self.fds_last <= self.fds_first + 8
    }
}

/// Everything the report states, and the verdicts on it.
struct Findings<'a> {
    seconds: u64,
    timing: bool,
    drive: &'a Drive,
    /// (path, ETag) pairs answered with more than one body.
    mixed: usize,
    p50_ms: f64,
    p99_ms: f64,
    resources: Resources,
    settled: f64,
    final_equal: bool,
}

impl Findings<'_> {
    /// Whatever the machine, these always hold: no errors, no mixed snapshots, no descriptor leak, the right
    /// final table.
    fn correct(&self) -> bool {
        let seen = &self.drive.seen;
        seen.errors.is_empty()
            && seen.stream_errors.is_empty()
            && self.mixed == 0
            && self.resources.fds_flat()
            && self.final_equal
    }

    /// The latency and memory budgets, held only with `timing`.
    fn timely(&self) -> bool {
        self.drive.seen.slowest_ms < 1000.0 && self.resources.rss_flat()
    }

    /// The report's table.
    fn report(&self) -> String {
        let Findings {
            seconds,
            timing,
            drive,
            settled,
            ..
        } = self;
        let (seen, changes, resources) = (&drive.seen, drive.changes, &self.resources);
        let Resources {
            rss_min,
            rss_max,
            rss_early,
            rss_late,
            fds_min,
            fds_max,
            fds_first,
            fds_last,
        } = resources;
        let requests_total: u64 = seen.statuses.values().sum();
        let verdict = |ok: bool| if ok { "met" } else { "**not met**" };
        format!(
            "Soak of {seconds} s (`cargo xtask soak --seconds {seconds}{}`): {} server on loopback, {CONNECTIONS} \
             keep-alive connections, {SUBSCRIBERS} live-update subscribers, {changes} changes to the data root (one \
             every {} s).\n\n\
             | check | measured | budget |\n|---|---|---|\n\
             | requests answered | {requests_total} ({}) | — |\n\
             | errors (any status but 200/304, or a broken connection) | {} | 0 — {} |\n\
             | bodies differing under one ETag | {} | 0 — {} |\n\
             | slowest request | {:.0} ms (p50 {:.1} ms, p99 {:.1} ms) | < 1,000 ms — {} |\n\
             | resident memory after {} s of warm-up | median {rss_early:.0} MB in the first quarter, {rss_late:.0} MB in \
             the last (samples {rss_min:.0}–{rss_max:.0} MB) | growth within 20% — {} |\n\
             | open file descriptors after warm-up | median {fds_first} in the first quarter, {fds_last} in the last \
             (samples {fds_min}–{fds_max}) | flat (at most 8 more) — {} |\n\
             | live-update events received | {} by {SUBSCRIBERS} subscribers, {} stream errors | — |\n\
             | final cells table equals a cold index of the final tree | {} (server settled {settled:.1} s after the last \
             change) | — {} |\n",
            if *timing { "" } else { " --debug" },
            if *timing { "release" } else { "debug" },
            WRITE_EVERY.as_secs(),
            seen.statuses
                .iter()
                .map(|(status, count)| format!("{status}: {count}"))
                .collect::<Vec<_>>()
                .join(", "),
            seen.errors.len(),
            verdict(seen.errors.is_empty() && seen.stream_errors.is_empty()),
            self.mixed,
            verdict(self.mixed == 0),
            seen.slowest_ms,
            self.p50_ms,
            self.p99_ms,
            verdict(seen.slowest_ms < 1000.0),
            WARM_UP.as_secs(),
            verdict(resources.rss_flat()),
            verdict(resources.fds_flat()),
            drive.events,
            seen.stream_errors.len(),
            if self.final_equal { "yes" } else { "no" },
            verdict(self.final_equal),
        )
    }
}

fn soak(
    addr: &str,
    pid: u32,
    data: &Path,
    good: &Path,
    seconds: u64,
    binary: &Path,
    timing: bool,
) -> anyhow::Result<()> {
    wait_for(addr, "/api/index", |body| {
        body.contains("\"complete\":true")
    })?;
    let drive = drive(addr, pid, data, good, seconds)?;
    // The final tree, once the server has taken it in, against a cold index of the same tree.
    let settled = settle(addr)?;
    let served = get(addr, "/api/cells?format=csv")?.2;
    let cold = process::output(
        &binary.to_string_lossy(),
        &[
            "cells",
            &data.to_string_lossy(),
            "--format",
            "csv",
            "--no-cache",
        ],
    )?;
    let final_equal = served == cold.as_bytes();

    let seen = &drive.seen;
    let mixed = seen
        .bodies
        .values()
        .filter(|hashes| hashes.len() > 1)
        .count();
    let mut latencies = seen.latencies_ms.clone();
    latencies.sort_by(f64::total_cmp);
    let percentile = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
    };
    let findings = Findings {
        seconds,
        timing,
        drive: &drive,
        mixed,
        p50_ms: percentile(0.5),
        p99_ms: percentile(0.99),
        resources: Resources::of(&drive.samples),
        settled,
        final_equal,
    };
    write_report(&findings.report(), &drive)?;
    let failed = !findings.correct() || (timing && !findings.timely());
    if failed {
        bail!("the soak missed a budget (see target/soak/report.md)");
    }
    Ok(())
}

/// Runs the connections, the subscribers and the writer for `seconds`, sampling the server's memory and
/// descriptors, and gathers what they saw.
fn drive(addr: &str, pid: u32, data: &Path, good: &Path, seconds: u64) -> anyhow::Result<Drive> {
    let requests = request_paths(addr)?;
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let started = Instant::now();
    let mut threads = Vec::new();
    for connection in 0..CONNECTIONS {
        let (addr, stop, seen, requests) = (
            addr.to_string(),
            stop.clone(),
            seen.clone(),
            requests.clone(),
        );
        threads.push(std::thread::spawn(move || {
            load(&addr, connection, &requests, &stop, &seen);
        }));
    }
    let events = Arc::new(AtomicU64::new(0));
    for _ in 0..SUBSCRIBERS {
        let (addr, stop, seen, events) =
            (addr.to_string(), stop.clone(), seen.clone(), events.clone());
        threads.push(std::thread::spawn(move || {
            subscribe(&addr, &stop, &seen, &events)
        }));
    }
    let writes = {
        let (data, good, stop) = (data.to_path_buf(), good.to_path_buf(), stop.clone());
        std::thread::spawn(move || writer(&data, &good, &stop))
    };
    let mut samples: Vec<Sample> = Vec::new();
    while started.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_millis(500));
        if let Some(sample) = sample(pid) {
            samples.push((started.elapsed().as_secs_f64(), sample.0, sample.1));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let changes = writes
        .join()
        .map_err(|_| anyhow::anyhow!("the writer panicked"))??;
    for thread in threads {
        thread
            .join()
            .map_err(|_| anyhow::anyhow!("a load thread panicked"))?;
    }
    let seen = std::mem::take(&mut *seen.lock().map_err(|_| anyhow::anyhow!("poisoned"))?);
    Ok(Drive {
        seen,
        events: events.load(Ordering::Relaxed),
        changes,
        samples,
    })
}

/// Writes `target/soak/report.md` (the table and the first errors) and `samples.csv`, and prints the report.
fn write_report(report: &str, drive: &Drive) -> anyhow::Result<()> {
    let work = workspace_root().join("target/soak");
    let mut details = report.to_string();
    for (path, status, body) in drive.seen.errors.iter().take(20) {
        details.push_str(&format!("\n- {status} on {path}: {body}"));
    }
    for error in drive.seen.stream_errors.iter().take(20) {
        details.push_str(&format!("\n- stream: {error}"));
    }
    std::fs::write(work.join("report.md"), &details)?;
    std::fs::write(
        work.join("samples.csv"),
        std::iter::once("seconds,rss_mb,open_fds".to_string())
            .chain(
                drive
                    .samples
                    .iter()
                    .map(|(at, rss, fds)| format!("{at:.1},{rss:.1},{fds}")),
            )
            .collect::<Vec<_>>()
            .join("\n"),
    )?;
    println!("{details}");
    Ok(())
}

/// The paths the connections cycle through: the cells table plain and filtered, the provenance and index
/// bodies, and the request rows of the first cells of the index's runs.
fn request_paths(addr: &str) -> anyhow::Result<Vec<String>> {
    let (_, _, csv) = get(addr, "/api/cells?format=csv")?;
    let text = String::from_utf8_lossy(&csv);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let column = |name: &str| header.iter().position(|field| *field == name);
    let wanted = [
        "run_id", "phase", "model", "workload", "n", "rep", "suite", "backend",
    ];
    let positions: Vec<usize> = wanted
        .iter()
        .map(|name| column(name).with_context(|| format!("no column {name}")))
        .collect::<anyhow::Result<_>>()?;
    let mut paths = vec![
        "/api/cells".to_string(),
        "/api/cells?backend=vllm&workload=long_decode".to_string(),
        "/api/cells?phase=scaling&n=1,2,4".to_string(),
        "/api/provenance".to_string(),
        "/api/index".to_string(),
    ];
    for line in lines.step_by(97).take(24) {
        let fields: Vec<&str> = line.split(',').collect();
        let value = |index: usize| fields.get(positions[index]).copied().unwrap_or_default();
        paths.push(format!(
            "/api/requests?run={}&phase={}&model={}&workload={}&n={}&rep={}&suite={}&backend={}",
            value(0),
            value(1),
            value(2),
            value(3),
            value(4),
            value(5),
            value(6),
            value(7)
        ));
    }
    Ok(paths)
}

/// One keep-alive connection cycling through `paths` until `stop`.
fn load(addr: &str, connection: usize, paths: &[String], stop: &AtomicBool, seen: &Mutex<Seen>) {
    let mut local = Seen::default();
    let mut stream: Option<BufReader<TcpStream>> = None;
    let mut turn = connection;
    while !stop.load(Ordering::Relaxed) {
        let path = &paths[turn % paths.len()];
        turn += 1;
        if stream.is_none() {
            stream = TcpStream::connect(addr).ok().map(BufReader::new);
        }
        let Some(reader) = stream.as_mut() else {
            local
                .errors
                .push((path.clone(), 0, "cannot connect".into()));
            continue;
        };
        let started = Instant::now();
        match exchange(reader, addr, path) {
            Ok((status, etag, body)) => {
                let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
                local.latencies_ms.push(elapsed_ms);
                local.slowest_ms = local.slowest_ms.max(elapsed_ms);
                *local.statuses.entry(status).or_default() += 1;
                if status != 200 && status != 304 {
                    let start = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
                    local.errors.push((path.clone(), status, start));
                } else if status == 200 && !path.starts_with("/api/requests") {
                    local
                        .bodies
                        .entry((path.clone(), etag))
                        .or_default()
                        .insert(Sha256::digest(&body).into());
                }
            }
            Err(error) => {
                local.errors.push((path.clone(), 0, error.to_string()));
                stream = None;
            }
        }
    }
    if let Ok(mut seen) = seen.lock() {
        for (status, count) in local.statuses {
            *seen.statuses.entry(status).or_default() += count;
        }
        seen.errors.extend(local.errors);
        seen.slowest_ms = seen.slowest_ms.max(local.slowest_ms);
        seen.latencies_ms.extend(local.latencies_ms);
        for (key, hashes) in local.bodies {
            seen.bodies.entry(key).or_default().extend(hashes);
        }
    }
}

/// One request on an open keep-alive connection: status, ETag and body (identity encoding).
fn exchange(
    reader: &mut BufReader<TcpStream>,
    addr: &str,
    path: &str,
) -> std::io::Result<(u16, String, Vec<u8>)> {
    write!(
        reader.get_mut(),
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept-Encoding: identity\r\n\r\n"
    )?;
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line: {line:?}")))?;
    let mut length = None;
    let mut chunked = false;
    let mut etag = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "etag" => etag = value.to_string(),
                _ => {}
            }
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim(), 16)
                .map_err(|_| std::io::Error::other("bad chunk size"))?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(length) = length {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    Ok((status, etag, body))
}

fn get(addr: &str, path: &str) -> anyhow::Result<(u16, String, Vec<u8>)> {
    let mut reader = BufReader::new(TcpStream::connect(addr)?);
    Ok(exchange(&mut reader, addr, path)?)
}

/// One live-update subscriber: reads events until `stop`; a stream that ends early is an error.
fn subscribe(addr: &str, stop: &AtomicBool, seen: &Mutex<Seen>, events: &AtomicU64) {
    let fail = |message: String| {
        if let Ok(mut seen) = seen.lock() {
            seen.stream_errors.push(message);
        }
    };
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return fail("cannot connect".into());
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    if write!(stream, "GET /api/events HTTP/1.1\r\nHost: {addr}\r\n\r\n").is_err() {
        return fail("cannot send".into());
    }
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    while !stop.load(Ordering::Relaxed) {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return fail("the stream ended".into()),
            Ok(_) if line.starts_with("event: snapshot") => {
                events.fetch_add(1, Ordering::Relaxed);
            }
            Ok(_) => {}
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(error) => return fail(error.to_string()),
        }
    }
}

/// Changes `data/soak/` every [`WRITE_EVERY`] until `stop`, cycling through six kinds of change. Returns how many
/// changes it made.
fn writer(data: &Path, good: &Path, stop: &AtomicBool) -> anyhow::Result<u64> {
    let soak = data.join("soak");
    std::fs::create_dir_all(&soak)?;
    let good_metrics = std::fs::read(good.join("metrics.csv"))?;
    let rows: Vec<&[u8]> = good_metrics
        .split(|byte| *byte == b'\n')
        .skip(1)
        .filter(|line| !line.is_empty())
        .collect();
    let mut next_id = 1u32;
    let mut live: Vec<PathBuf> = Vec::new();
    let mut changes = 0u64;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(WRITE_EVERY);
        let kind = changes % 6;
        changes += 1;
        let run_id = |id: u32| format!("20270101_000000_{id:06}");
        match kind {
            // A new run: its metrics.csv written in one go, with its own run id in every row.
            0 | 3 if live.len() < 6 => {
                let id = run_id(next_id);
                next_id += 1;
                let directory = soak.join(&id);
                std::fs::create_dir_all(&directory)?;
                let text =
                    String::from_utf8_lossy(&good_metrics).replace("20260101_000000_000001", &id);
                std::fs::write(directory.join("metrics.csv"), text)?;
                live.push(directory);
            }
            // Rows appended a few bytes at a time, as a running benchmark writes them.
            1 if !live.is_empty() => {
                let directory = &live[changes as usize % live.len()];
                let id = directory
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let mut file = std::fs::OpenOptions::new()
                    .append(true)
                    .open(directory.join("metrics.csv"))?;
                for row in rows.iter().take(4) {
                    let row = String::from_utf8_lossy(row).replace("20260101_000000_000001", &id);
                    for piece in row.as_bytes().chunks(16) {
                        file.write_all(piece)?;
                        file.flush()?;
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    file.write_all(b"\n")?;
                }
            }
            // A file cut mid-row, as a crash leaves it.
            2 if !live.is_empty() => {
                let path = live[changes as usize % live.len()].join("metrics.csv");
                let length = std::fs::metadata(&path)?.len();
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)?
                    .set_len(length.saturating_sub(37))?;
            }
            // A run renamed (its rows keep their run id: the index names it a copy or a foreign id).
            4 if !live.is_empty() => {
                let from = live.remove(0);
                let to = soak.join(run_id(next_id));
                next_id += 1;
                std::fs::rename(&from, &to)?;
                live.push(to);
            }
            // A run deleted, and the ledger rewritten.
            _ => {
                if live.len() > 2 {
                    std::fs::remove_dir_all(live.remove(0))?;
                }
                let n = 1 + changes % 4;
                std::fs::write(
                    soak.join("exclusions.toml"),
                    format!(
                        "[[exclude]]\nid = \"soak-{changes}\"\nselect = {{ n = {n} }}\nscope = \"all\"\nreason = \"soak change {changes}\"\n"
                    ),
                )?;
            }
        }
    }
    Ok(changes)
}

/// Resident memory in MB and open descriptors of `pid`.
fn sample(pid: u32) -> Option<(f64, usize)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find(|line| line.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    Some((kb / 1024.0, fds))
}

fn wait_for(addr: &str, path: &str, ready: impl Fn(&str) -> bool) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        if let Ok((200, _, body)) = get(addr, path)
            && ready(&String::from_utf8_lossy(&body))
        {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(120) {
            bail!("the server did not answer {path} within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until the server's index is complete and its snapshot has not changed for 3 s; returns the wait.
fn settle(addr: &str) -> anyhow::Result<f64> {
    let started = Instant::now();
    let mut last = String::new();
    let mut stable_since = Instant::now();
    loop {
        let (_, _, body) = get(addr, "/api/index")?;
        let body = String::from_utf8_lossy(&body);
        let snapshot = body
            .split("\"snapshot\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default()
            .to_string();
        if snapshot != last {
            last = snapshot;
            stable_since = Instant::now();
        } else if body.contains("\"complete\":true")
            && stable_since.elapsed() > Duration::from_secs(3)
        {
            return Ok(started.elapsed().as_secs_f64() - 3.0);
        }
        if started.elapsed() > Duration::from_secs(120) {
            bail!("the server did not settle within 120 s of the last change");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

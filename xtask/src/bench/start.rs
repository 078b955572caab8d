//! `cargo xtask bench start`: how long `cellscope serve` takes from being started to its first answer from
//! `/api/cells`, cold (`--no-cache`) and warm (restarted on unchanged data with the cache of read results that an
//! earlier start wrote), in alternating runs. The budget (docs/performance.md) is a warm start within 50 ms on the demo
//! data; `--data` times another root (the `--scale 34` demo: within 1 s). With `--chart`, also the time from a
//! warm restart's spawn to the app's first chart in headless Chromium (`xtask/bench/first_chart.py`), with and
//! without the answers kept for a start.

use crate::workspace_root;
use anyhow::{Context, bail};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long one start may take before the benchmark gives up.
const START_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs the benchmark: `runs` cold and `runs` warm starts on `data` (default: the demo data), then with `chart`
/// `runs` pairs of warm restarts timed to the first chart.
pub(super) fn start(runs: u32, data: Option<PathBuf>, chart: bool) -> anyhow::Result<()> {
    let default_data = data.is_none();
    let data = match data {
        Some(data) => workspace_root().join(data),
        None => crate::demo::ensure_demo_data()?,
    };
    let binary = crate::e2e::release_server()?;
    let out_dir = workspace_root().join("target/bench");
    let cache = out_dir.join("start-cache");
    // A cache of this benchmark's own, under target/, emptied first: the user's cache is never touched.
    if cache.exists() {
        std::fs::remove_dir_all(&cache).with_context(|| format!("emptying {}", cache.display()))?;
    }
    std::fs::create_dir_all(&cache)?;
    // One start that runs to its second stage writes the cache; it is not timed.
    let mut priming = spawn(&binary, &data, Some(&cache))?;
    let primed = wait_until_complete(&mut priming);
    stop(priming);
    primed?;
    let cache_bytes = directory_bytes(&cache.join("runs"));
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    for run in 1..=runs {
        eprintln!("start {run} of {runs}: cold, then warm");
        cold.push(first_answers_ms(&binary, &data, None)?);
        warm.push(first_answers_ms(&binary, &data, Some(&cache))?);
    }
    let mut table = format!(
        "`cargo xtask bench start`: `cellscope serve {}` from spawn to the first 200 from `GET /api/cells` \
         (`Accept-Encoding: zstd`), then to the first 200 from `GET /api/index` without zstd (an answer from the \
         server's own index: the whole API answers), cold (`--no-cache`) and warm (`--cache`, written by an earlier start on the same data: \
         {:.1} MB of read results, and the snapshots it kept), in alternating runs. A warm start answers \
         the app's first requests (zstd index, cells, provenance) from the snapshot kept for the unchanged files \
         while its index is built.\n\n\
         | run | cold: cells | cold: index | warm: cells | warm: index |\n|---|---|---|---|---|\n",
        data.display(),
        cache_bytes as f64 / 1e6
    );
    for (run, (cold, warm)) in cold.iter().zip(&warm).enumerate() {
        table.push_str(&format!(
            "| {} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms |\n",
            run + 1,
            cold.0,
            cold.1,
            warm.0,
            warm.1
        ));
    }
    let column = |runs: &[(f64, f64)], second: bool| {
        let mut values: Vec<f64> = runs
            .iter()
            .map(|run| if second { run.1 } else { run.0 })
            .collect();
        crate::paired::median(&mut values)
    };
    let warm_cells = column(&warm, false);
    // The budgets: 50 ms on the demo data, 1 s at `--scale 34` (any other root is held to the latter).
    let (budget_ms, of_what) = if default_data {
        (50.0, "the demo data's")
    } else {
        (
            1000.0,
            "the `--scale 34` budget, for any root but the demo's:",
        )
    };
    table.push_str(&format!(
        "| median | {:.1} ms | {:.1} ms | {warm_cells:.1} ms | {:.1} ms |\n\n\
         Warm start to the first `/api/cells` answer, median {warm_cells:.1} ms: {of_what} budget ≤ {budget_ms:.0} ms {}.\n",
        column(&cold, false),
        column(&cold, true),
        column(&warm, true),
        if warm_cells <= budget_ms {
            "met"
        } else {
            "**not met**"
        }
    ));
    if chart {
        crate::browser::ensure_installed()?;
        let python = crate::bench::python_with_peers()?;
        let script = workspace_root().join("xtask/bench/first_chart.py");
        let runs_text = runs.to_string();
        let chart_table = crate::process::output(
            &python.to_string_lossy(),
            &[
                &script.to_string_lossy(),
                &binary.to_string_lossy(),
                &data.to_string_lossy(),
                &cache.to_string_lossy(),
                &runs_text,
                crate::browser::CHROMEDRIVER,
                crate::browser::CHROMIUM,
            ],
        )?;
        table.push_str(&format!(
            "\nFrom a warm restart's spawn to the matrix's first chart in headless Chromium (opened as soon as the \
             server listens; the app's `first-chart` mark), with the answers kept for a start and with them moved \
             aside, in alternating runs:\n\n{chart_table}\n"
        ));
    }
    std::fs::create_dir_all(&out_dir)?;
    std::fs::write(out_dir.join("start.md"), &table)?;
    println!("{table}\n(written to target/bench/start.md)");
    Ok(())
}

/// `cellscope serve DATA` on a free loopback port, with `cache` or `--no-cache`.
fn spawn(binary: &Path, data: &Path, cache: Option<&Path>) -> anyhow::Result<(Child, u16)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut command = Command::new(binary);
    command
        .arg("serve")
        .arg(data)
        .args(["--addr", &format!("127.0.0.1:{port}")])
        .env("CELLSCOPE_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    match cache {
        Some(cache) => command.arg("--cache").arg(cache),
        None => command.arg("--no-cache"),
    };
    let child = command.spawn().context("starting cellscope serve")?;
    Ok((child, port))
}

fn stop((mut child, _): (Child, u16)) {
    let _ = child.kill();
    let _ = child.wait();
}

/// One `GET` on a fresh connection (taking zstd when `zstd`): the status code and the body, or `None` while
/// nothing listens.
fn get(port: u16, path: &str, zstd: bool) -> Option<(u16, Vec<u8>)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    let encoding = if zstd {
        "Accept-Encoding: zstd\r\n"
    } else {
        ""
    };
    stream
        .write_all(
            format!(
                "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{encoding}Connection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        .ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let head_end = response
        .windows(4)
        .position(|window| window == b"\r\n\r\n")?;
    let status = std::str::from_utf8(&response[..head_end])
        .ok()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((status, response[head_end + 4..].to_vec()))
}

/// Milliseconds from spawning the server to its first 200 from `/api/cells`, and to its first 200 from
/// `/api/index` after that.
fn first_answers_ms(
    binary: &Path,
    data: &Path,
    cache: Option<&Path>,
) -> anyhow::Result<(f64, f64)> {
    let started = Instant::now();
    let server = spawn(binary, data, cache)?;
    let port = server.1;
    let first_200 = |path: &str, zstd: bool| loop {
        if let Some((200, _)) = get(port, path, zstd) {
            break Ok(started.elapsed().as_secs_f64() * 1e3);
        }
        if started.elapsed() > START_TIMEOUT {
            break Err(anyhow::anyhow!(
                "no answer from {path} within {START_TIMEOUT:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    // `/api/index` without zstd: an answer the kept bodies of a warm start do not give, so it comes from the
    // server's own index.
    let result = first_200("/api/cells", true)
        .and_then(|cells| Ok((cells, first_200("/api/index", false)?)));
    stop(server);
    result
}

/// Waits until the server's second stage is done (`/api/index` says `complete`), when the cache is written.
fn wait_until_complete(server: &mut (Child, u16)) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        if let Some((200, body)) = get(server.1, "/api/index", false)
            && String::from_utf8_lossy(&body).contains("\"complete\":true")
        {
            return Ok(());
        }
        if let Ok(Some(status)) = server.0.try_wait() {
            bail!("cellscope serve ended ({status}) before its second stage");
        }
        if started.elapsed() > START_TIMEOUT {
            bail!("the second stage did not finish within {START_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The bytes of the files in `dir` (not recursive: the cache's entries are one directory).
fn directory_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|entry| entry.metadata().ok())
                .map(|metadata| metadata.len())
                .sum()
        })
        .unwrap_or(0)
}

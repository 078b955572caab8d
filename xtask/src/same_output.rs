//! `cargo xtask same-output`: runs the `cellscope` binary over the demo roots and every fixture root and compares
//! what it prints and serves with a recorded baseline, so a change meant to keep behaviour can show that it does.
//!
//! Per root it keeps `cells --format csv` (current and `--include pre_refill`), `audit --json`, `index --json`
//! (uncached, then cold and warm through a fresh cache), `index --explain` of every file of the fixture roots, and
//! from `cellscope serve` the bodies of `/api/index`, `/api/provenance`, `/api/cells?format=csv` and
//! `/api/requests` of its cells (every cell of a fixture, every twentieth of a demo root).
//! Each output keeps its exit status and standard error; the workspace's path, the cache's path, timings and peak
//! memory are replaced by a placeholder rather than left out.
//! `--record` writes `target/same-output/baseline/`; without it the outputs go to `target/same-output/current/`
//! and every file must equal the baseline's, byte for byte.

use anyhow::{Context, bail};
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Keys of the JSON outputs whose values are timings or memory, written as [`NORMALISED`].
const VARYING_KEYS: [&str; 6] = [
    "median_s",
    "min_s",
    "seconds",
    "peak_rss_bytes",
    "index_ms",
    "indexed_at_unix_ms",
];

/// What a varying value is replaced by.
const NORMALISED: &str = "\"<normalised>\"";

/// One cell in this many of a demo root has its requests fetched (a demo root's rows are hundreds of megabytes).
const DEMO_CELL_STRIDE: usize = 20;

/// How long a server may take to finish its first index.
const SERVE_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs the outputs into the baseline (`record`) or into `current` and compares them with the baseline.
pub(crate) fn run(record: bool, binary: Option<PathBuf>) -> anyhow::Result<()> {
    let binary = match binary {
        Some(binary) => binary,
        None => {
            crate::process::run("cargo", &["build", "-p", "cellscope"])?;
            crate::target_dir().join("debug").join("cellscope")
        }
    };
    let base = crate::target_dir().join("same-output");
    let out = base.join(if record { "baseline" } else { "current" });
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("removing {}", out.display()))?;
    }
    let roots = roots()?;
    for root in &roots {
        eprintln!("same-output: {}", root.display());
        capture_root(&binary, root, &out.join(root))?;
    }
    let (files, bytes) = tree_size(&out)?;
    eprintln!(
        "same-output: {} roots, {files} files, {bytes} bytes in {}",
        roots.len(),
        out.display()
    );
    if record {
        return Ok(());
    }
    compare(&base.join("baseline"), &out)
}

/// The roots, relative to the workspace: the two demo roots, every fixture directory and every format fixture.
fn roots() -> anyhow::Result<Vec<PathBuf>> {
    let mut roots = vec![PathBuf::from("data/demo"), PathBuf::from("data/demo-mixed")];
    for parent in ["data/fixtures", "data/fixtures/formats"] {
        let mut children: Vec<PathBuf> = std::fs::read_dir(parent)
            .with_context(|| format!("listing {parent}"))?
            .flatten()
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
            .map(|entry| Path::new(parent).join(entry.file_name()))
            .filter(|path| path != Path::new("data/fixtures/formats"))
            .collect();
        children.sort();
        roots.extend(children);
    }
    for root in &roots[..2] {
        if !root.is_dir() {
            bail!(
                "{} is missing: run `cargo xtask demo-data` first",
                root.display()
            );
        }
    }
    Ok(roots)
}

/// Every output of one root, written under `out`.
fn capture_root(binary: &Path, root: &Path, out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out)?;
    let root_text = root.to_string_lossy().into_owned();
    let cli = |name: &str, args: &[&str]| -> anyhow::Result<()> {
        let mut all: Vec<&str> = args.to_vec();
        all.push(&root_text);
        write_output(out, name, &command_output(binary, &all, None)?)
    };
    cli("cells.csv", &["cells", "--format", "csv", "--no-cache"])?;
    cli(
        "cells-pre-refill.csv",
        &[
            "cells",
            "--format",
            "csv",
            "--include",
            "pre_refill",
            "--no-cache",
        ],
    )?;
    cli("audit.json", &["audit", "--json", "--no-cache"])?;
    cli("index.json", &["index", "--json", "--no-cache"])?;
    let cache = tempdir("cache")?;
    let cache_text = cache.to_string_lossy().into_owned();
    for name in ["index-cold-cache.json", "index-warm-cache.json"] {
        let args = ["index", "--json", "--cache", &cache_text, &root_text];
        write_output(out, name, &command_output(binary, &args, Some(&cache))?)?;
    }
    std::fs::remove_dir_all(&cache).ok();
    if !root.starts_with("data/demo") && !root.starts_with("data/demo-mixed") {
        for file in files_under(root)? {
            let args = ["index", "--explain", &file, "--no-cache", &root_text];
            let name = format!("explain/{file}.txt");
            write_output(out, &name, &command_output(binary, &args, None)?)?;
        }
    }
    capture_served(binary, root, out)
}

/// A command's standard output, then its exit status and standard error, normalised.
fn command_output(binary: &Path, args: &[&str], cache: Option<&Path>) -> anyhow::Result<Vec<u8>> {
    let output = Command::new(binary)
        .args(args)
        .env("CELLSCOPE_LOG", "warn")
        .env("NO_COLOR", "1")
        .output()
        .with_context(|| format!("running {} {}", binary.display(), args.join(" ")))?;
    let mut text = output.stdout;
    text.extend_from_slice(format!("\n--- {}\n", output.status).as_bytes());
    text.extend_from_slice(&output.stderr);
    Ok(normalise(&text, cache))
}

/// Writes `bytes` to `out/name`, creating its directory.
fn write_output(out: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let path = out.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// The files under `root`, relative to it, sorted.
fn files_under(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))?
        {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                let relative = entry
                    .path()
                    .strip_prefix(root)?
                    .to_string_lossy()
                    .into_owned();
                files.push(relative);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// A fresh directory under the system's temporary directory.
fn tempdir(what: &str) -> anyhow::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    let dir = std::env::temp_dir().join(format!(
        "cellscope-same-output-{what}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// The workspace's and the cache's paths, timestamps of log lines and the values of [`VARYING_KEYS`] replaced.
fn normalise(bytes: &[u8], cache: Option<&Path>) -> Vec<u8> {
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    if let Some(cache) = cache {
        text = text.replace(&*cache.to_string_lossy(), "<cache>");
    }
    text = text.replace(&*crate::workspace_root().to_string_lossy(), "<workspace>");
    for key in VARYING_KEYS {
        text = replace_json_values(&text, key);
    }
    text = replace_file_times(&text);
    text.split_inclusive('\n')
        .map(|line| match line.split_once(' ') {
            Some((stamp, rest)) if is_timestamp(stamp) => format!("<time> {rest}"),
            _ => line.to_string(),
        })
        .collect::<String>()
        .into_bytes()
}

/// Whether `word` is a log line's RFC 3339 timestamp (`2026-01-01T00:00:00.000000Z`).
fn is_timestamp(word: &str) -> bool {
    let bytes = word.as_bytes();
    bytes.len() >= 20
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[10] == b'T'
        && word.ends_with('Z')
}

/// `text` with every run start read from a file's modification time, which a checkout sets, replaced: the `at` of a
/// JSON start whose source is `file_modified`, and the time of the audit's `≤ … (file time)`.
fn replace_file_times(text: &str) -> String {
    const AT: &str = "\"at\":";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(position) = rest.find(AT) {
        let after_key = position + AT.len();
        out.push_str(&rest[..after_key]);
        let value = &rest[after_key..];
        let spaces = value.len() - value.trim_start().len();
        let quoted = &value[spaces..];
        if !quoted.starts_with('"') {
            out.push_str(&value[..spaces]);
            rest = quoted;
            continue;
        }
        let end = quoted[1..]
            .find('"')
            .map_or(quoted.len(), |close| close + 2);
        // The source follows its time in the same object, before the object closes.
        let source = &quoted[end..];
        let object = &source[..source.find('}').unwrap_or(source.len())];
        let file_time = object
            .replace(' ', "")
            .contains("\"kind\":\"file_modified\"");
        out.push_str(&value[..spaces]);
        out.push_str(if file_time {
            NORMALISED
        } else {
            &quoted[..end]
        });
        rest = &quoted[end..];
    }
    out.push_str(rest);
    let mut text = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(position) = rest.find("≤ ") {
        let after = position + "≤ ".len();
        text.push_str(&rest[..after]);
        let minute = rest[after..]
            .char_indices()
            .nth(16)
            .map_or(rest.len() - after, |(end, _)| end);
        if rest[after + minute..].starts_with(" (file time)") {
            text.push_str("<file time>");
            rest = &rest[after + minute..];
        } else {
            rest = &rest[after..];
        }
    }
    text.push_str(rest);
    text
}

/// `text` with the value of every `"key":` (a number, or an array of numbers) replaced by [`NORMALISED`].
fn replace_json_values(text: &str, key: &str) -> String {
    let needle = format!("\"{key}\":");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(position) = rest.find(&needle) {
        let after_key = position + needle.len();
        out.push_str(&rest[..after_key]);
        let value = &rest[after_key..];
        let spaces = value.len() - value.trim_start_matches(' ').len();
        out.push_str(&value[..spaces]);
        let value = &value[spaces..];
        let end = if value.starts_with('[') {
            value.find(']').map_or(value.len(), |close| close + 1)
        } else {
            value.find([',', '}', '\n']).unwrap_or(value.len())
        };
        out.push_str(NORMALISED);
        rest = &value[end..];
    }
    out.push_str(rest);
    out
}

/// The bodies `cellscope serve` answers for `root`, written under `out/api/`.
fn capture_served(binary: &Path, root: &Path, out: &Path) -> anyhow::Result<()> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut child = Command::new(binary)
        .arg("serve")
        .arg(root)
        .args(["--addr", &format!("127.0.0.1:{port}"), "--no-cache"])
        .env("CELLSCOPE_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting cellscope serve")?;
    let result = fetch_bodies(&mut child, port, root, out);
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Fetches the bodies once the server's index is complete.
fn fetch_bodies(child: &mut Child, port: u16, root: &Path, out: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        if let Some((200, body)) = get(port, "/api/index?format=json")
            && String::from_utf8_lossy(&body).contains("\"complete\":true")
        {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            bail!("cellscope serve {} ended ({status})", root.display());
        }
        if started.elapsed() > SERVE_TIMEOUT {
            bail!("cellscope serve {} did not index in time", root.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let save = |name: &str, path: &str| -> anyhow::Result<Vec<u8>> {
        let (status, body) = get(port, path).with_context(|| format!("GET {path}"))?;
        let mut text = format!("{path}\n--- {status}\n").into_bytes();
        text.extend_from_slice(&body);
        write_output(out, name, &normalise(&text, None))?;
        Ok(body)
    };
    save("api/index.json", "/api/index?format=json")?;
    save("api/provenance.json", "/api/provenance")?;
    save("api/cells.csv", "/api/cells?format=csv")?;
    let cells = save("api/cells.json", "/api/cells?format=json")?;
    let stride = if root.starts_with("data/demo") {
        DEMO_CELL_STRIDE
    } else {
        1
    };
    let mut requests = Vec::new();
    for key in cell_keys(&cells)?.iter().step_by(stride) {
        let path = format!("/api/requests?format=csv&cell={}", url_escape(key));
        let (status, body) = get(port, &path).with_context(|| format!("GET {path}"))?;
        requests.extend_from_slice(format!("{path}\n--- {status}\n").as_bytes());
        requests.extend_from_slice(&body);
        requests.push(b'\n');
    }
    write_output(out, "api/requests.csv", &normalise(&requests, None))
}

/// The text form of each cell's key in a `/api/cells?format=json` body, in the body's order.
fn cell_keys(body: &[u8]) -> anyhow::Result<Vec<String>> {
    let cells: Vec<serde_json::Value> =
        serde_json::from_slice(body).context("reading /api/cells?format=json")?;
    let text = |cell: &serde_json::Value, name: &str| {
        cell.get(name)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .replace('%', "%25")
            .replace('/', "%2F")
    };
    Ok(cells
        .iter()
        .map(|cell| {
            let mut parts: Vec<String> =
                ["run_id", "suite", "phase", "backend", "model", "workload"]
                    .iter()
                    .map(|name| text(cell, name))
                    .collect();
            let config = text(cell, "config");
            if !config.is_empty() {
                parts.push(config);
            }
            let load = match (
                cell.get("n").and_then(serde_json::Value::as_u64),
                cell.get("rate_rps"),
            ) {
                (Some(n), _) => format!("n={n}"),
                (None, Some(serde_json::Value::Number(rate))) => {
                    format!("rate={}", rate.as_f64().unwrap_or(f64::NAN))
                }
                (None, Some(serde_json::Value::String(rate))) => format!("rate={rate}"),
                _ => "load=unstated".to_string(),
            };
            parts.push(load);
            let rep = cell
                .get("rep")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or_default();
            parts.push(format!("rep={rep}"));
            parts.join("/")
        })
        .collect())
}

/// `text` with every byte but unreserved ASCII percent-encoded, for a query value.
fn url_escape(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(byte).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

/// One HTTP/1.0 `GET` (so the body is never chunked): the status and the body, or `None` while nothing listens.
fn get(port: u16, path: &str) -> Option<(u16, Vec<u8>)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
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

/// The number of files under `dir` and their bytes.
fn tree_size(dir: &Path) -> anyhow::Result<(usize, u64)> {
    let files = files_under(dir)?;
    let bytes = files
        .iter()
        .map(|file| std::fs::metadata(dir.join(file)).map_or(0, |metadata| metadata.len()))
        .sum();
    Ok((files.len(), bytes))
}

/// Fails naming every file that is missing, extra or different between `baseline` and `current`.
fn compare(baseline: &Path, current: &Path) -> anyhow::Result<()> {
    if !baseline.is_dir() {
        bail!(
            "no baseline in {}: run with --record first",
            baseline.display()
        );
    }
    let before: BTreeSet<String> = files_under(baseline)?.into_iter().collect();
    let after: BTreeSet<String> = files_under(current)?.into_iter().collect();
    let mut problems = Vec::new();
    for file in before.difference(&after) {
        problems.push(format!("missing: {file}"));
    }
    for file in after.difference(&before) {
        problems.push(format!("new: {file}"));
    }
    let (mut same, mut same_bytes) = (0usize, 0u64);
    for file in before.intersection(&after) {
        let (old, new) = (
            std::fs::read(baseline.join(file))?,
            std::fs::read(current.join(file))?,
        );
        if old == new {
            same += 1;
            same_bytes += old.len() as u64;
        } else {
            problems.push(format!("differs: {file}{}", first_difference(&old, &new)));
        }
    }
    if problems.is_empty() {
        eprintln!("same-output: all {same} files equal the baseline ({same_bytes} bytes)");
        return Ok(());
    }
    for problem in &problems {
        eprintln!("{problem}");
    }
    bail!("{} outputs differ from the baseline", problems.len())
}

/// Where two outputs first differ: the line number and both lines.
fn first_difference(old: &[u8], new: &[u8]) -> String {
    let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    let line = old
        .lines()
        .zip(new.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| old.lines().count().min(new.lines().count()));
    let cut = |text: &str| text.chars().take(300).collect::<String>();
    format!(
        " (line {}:\n  - {}\n  + {})",
        line + 1,
        cut(old.lines().nth(line).unwrap_or("<end>")),
        cut(new.lines().nth(line).unwrap_or("<end>"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_times_are_replaced_and_recorded_times_kept() {
        let text = r#"[{"started":{"at":"2026-12-07T22:00:01Z","source":{"kind":"file_modified","file":"a.json"}}},{"started":{"at":"2026-03-01T10:15:00Z","source":{"kind":"recorded","file":"b.json","key":"date"}}},{"at":null}]"#;
        assert_eq!(
            String::from_utf8(normalise(text.as_bytes(), None)).unwrap(),
            r#"[{"started":{"at":"<normalised>","source":{"kind":"file_modified","file":"a.json"}}},{"started":{"at":"2026-03-01T10:15:00Z","source":{"kind":"recorded","file":"b.json","key":"date"}}},{"at":null}]"#
        );
        let pretty =
            "\"at\": \"2026-12-07T22:00:01Z\",\n  \"source\": {\n    \"kind\": \"file_modified\",";
        assert!(
            String::from_utf8(normalise(pretty.as_bytes(), None))
                .unwrap()
                .starts_with("\"at\": \"<normalised>\",")
        );
        let audit = "  started   ≤ 2026-12-07 22:00 (file time) · modification time of a.json\n  started   2026-03-01 10:15 UTC\n";
        assert_eq!(
            String::from_utf8(normalise(audit.as_bytes(), None)).unwrap(),
            "  started   ≤ <file time> (file time) · modification time of a.json\n  started   2026-03-01 10:15 UTC\n"
        );
    }

    #[test]
    fn timings_and_memory_are_replaced_and_the_rest_kept() {
        let text =
            r#"{"runs":1,"median_s":0.0011,"seconds":[0.1,0.2],"cache":null,"peak_rss_bytes":196}"#;
        assert_eq!(
            String::from_utf8(normalise(text.as_bytes(), None)).unwrap(),
            r#"{"runs":1,"median_s":"<normalised>","seconds":"<normalised>","cache":null,"peak_rss_bytes":"<normalised>"}"#
        );
        let pretty = "{\n  \"index_ms\": 4.5,\n  \"cells\": 2\n}";
        assert_eq!(
            String::from_utf8(normalise(pretty.as_bytes(), None)).unwrap(),
            "{\n  \"index_ms\": \"<normalised>\",\n  \"cells\": 2\n}"
        );
    }

    #[test]
    fn a_log_line_loses_its_timestamp() {
        let text = "2026-03-01T10:15:00.123456Z  WARN cellscope: x\nplain line\n";
        assert_eq!(
            String::from_utf8(normalise(text.as_bytes(), None)).unwrap(),
            "<time>  WARN cellscope: x\nplain line\n"
        );
    }

    #[test]
    fn a_cell_key_escapes_its_separators() {
        let body = br#"[{"run_id":"results/a%b","suite":"s","phase":"p","backend":"b","model":"m","workload":"w","n":null,"rate_rps":4.0,"rep":1,"config":"tp=4"}]"#;
        assert_eq!(
            cell_keys(body).unwrap(),
            vec!["results%2Fa%25b/s/p/b/m/w/tp=4/rate=4/rep=1".to_string()]
        );
    }
}

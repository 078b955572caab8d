//! `serve` on a data root that holds files no reader may wait on, and with an index that outruns its deadline:
//! the server answers, logs what it met, and keeps picking up changes.

use crate::common;
use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn good_run() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/good")
}

/// `cellscope audit ROOT --no-cache --json`, parsed.
fn audit_json(root: &Path) -> serde_json::Value {
    let audit = common::cellscope_command()
        .arg("audit")
        .arg(root)
        .args(["--no-cache", "--json"])
        .output()
        .unwrap();
    serde_json::from_slice(&audit.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&audit.stderr)))
}

/// A child process killed when the test ends, passed or not.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The body of `GET path` from the server on `port` (raw HTTP/1.1, `Connection: close`).
fn get(port: u16, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply
}

/// Polls until `done` holds of the log lines seen so far and `GET path`'s reply, for at most 60 s.
fn wait_for(
    port: u16,
    path: &str,
    log: &mpsc::Receiver<String>,
    seen: &mut Vec<String>,
    done: impl Fn(&[String], &str) -> bool,
) -> String {
    let started = Instant::now();
    loop {
        seen.extend(log.try_iter());
        let reply = get(port, path);
        if done(seen, &reply) {
            return reply;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "not reached in 60 s; the last reply:\n{}\nthe log:\n{}",
            &reply[..reply.len().min(600)],
            seen.join("\n")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A root with FIFOs under the names readers open (the mapping, a per-request file beside a summary) is served
/// at once; a FIFO added while serving does not stop re-indexing; and with a deadline every re-index outruns,
/// each is reported, the current snapshot keeps serving, and later changes are still picked up.
#[test]
fn serve_answers_past_fifos_and_keeps_picking_up_changes_past_its_index_deadline() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("good")).unwrap();
    common::copy_tree(&good_run(), &root.path().join("good"));
    let summary = root.path().join("aiperf/c8");
    std::fs::create_dir_all(&summary).unwrap();
    std::fs::copy(
        good_run().join(
            "../formats/aiperf-v010/artifacts/qwen3-8b-openai-chat-concurrency8/profile_export_aiperf.json",
        ),
        summary.join("profile_export_aiperf.json"),
    )
    .unwrap();
    common::mkfifo(&summary.join("profile_export.jsonl"));
    common::mkfifo(&root.path().join("cellscope.toml"));

    let mut child = Killed(
        common::cellscope_command()
            .arg("serve")
            .arg(root.path())
            .args([
                "--addr",
                "127.0.0.1:0",
                "--no-cache",
                "--index-deadline-s",
                "0",
            ])
            .env("CELLSCOPE_LOG", "info")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (sender, log) = mpsc::channel();
    let stderr = child.0.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = sender.send(line);
        }
    });
    let mut seen: Vec<String> = Vec::new();
    let port: u16 = loop {
        let line = log
            .recv_timeout(Duration::from_secs(60))
            .expect("serve logs its address");
        let port = line
            .split("url=http://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|port| port.parse().ok());
        seen.push(line);
        if let Some(port) = port {
            break port;
        }
    };

    let first = wait_for(port, "/api/index", &log, &mut seen, |_, reply| {
        reply.starts_with("HTTP/1.1 200")
    });
    for kind in ["\"not_a_file\"", "cellscope.toml", "profile_export.jsonl"] {
        assert!(first.contains(kind), "{kind} missing from the index");
    }

    // While serving: FIFOs under a side file's and a ledger's name, then a new run.
    let run = root.path().join("good/20260101_000000_000001");
    let staged = tempfile::tempdir().unwrap();
    common::copy_tree(&run, staged.path());
    common::mkfifo(&run.join("manifest.json.fifo"));
    common::mkfifo(&root.path().join("good/exclusions.toml"));
    std::fs::create_dir_all(root.path().join("later")).unwrap();
    std::fs::rename(
        staged.path(),
        root.path().join("later/20260401_000000_000009"),
    )
    .unwrap();
    let reply = wait_for(port, "/api/index", &log, &mut seen, |seen, reply| {
        reply.contains("20260401_000000_000009")
            && seen.iter().any(|line| line.contains("past its deadline"))
    });
    drop(child);
    assert!(reply.starts_with("HTTP/1.1 200"), "{}", &reply[..200]);
}

/// A 1 GiB file with no line break under a metrics file's name, beside a 1 GiB per-request file of NULs and a
/// good run, is refused on its head, hashed a piece at a time and quoted only as an excerpt: the audit's peak
/// memory stays far below one file's size, and its report stays small.
#[test]
fn memory_is_bounded_by_the_work_not_by_a_file_without_line_breaks() {
    const GIB: u64 = 1 << 30;
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("good")).unwrap();
    common::copy_tree(&good_run(), &root.path().join("good"));
    let run = root.path().join("nul/20260501_000000_000001");
    std::fs::create_dir_all(&run).unwrap();
    // Sparse: the bytes read as NULs and take no disk space.
    std::fs::File::create(run.join("metrics.csv"))
        .unwrap()
        .set_len(GIB)
        .unwrap();
    let summary = root.path().join("aiperf/c8");
    std::fs::create_dir_all(&summary).unwrap();
    std::fs::copy(
        good_run().join(
            "../formats/aiperf-v010/artifacts/qwen3-8b-openai-chat-concurrency8/profile_export_aiperf.json",
        ),
        summary.join("profile_export_aiperf.json"),
    )
    .unwrap();
    std::fs::File::create(summary.join("profile_export.jsonl"))
        .unwrap()
        .set_len(GIB + 1)
        .unwrap();
    // The full index (hashes included), as `audit` and `serve` make it; its peak memory from the process itself.
    let indexed = common::cellscope_command()
        .arg("index")
        .arg(root.path())
        .args(["--no-cache", "--json"])
        .output()
        .unwrap();
    assert!(indexed.status.success());
    let report: serde_json::Value = serde_json::from_slice(&indexed.stdout).unwrap();
    let peak_bytes = report["peak_rss_bytes"].as_u64().unwrap();
    assert!(
        peak_bytes < 256 << 20,
        "peak resident memory {peak_bytes} bytes for 1 GiB files"
    );
    let audit = common::cellscope_command()
        .arg("audit")
        .arg(root.path())
        .arg("--no-cache")
        .output()
        .unwrap();
    assert!(audit.status.success());
    assert!(
        audit.stdout.len() < 64 << 10,
        "{} bytes of report",
        audit.stdout.len()
    );
    assert!(
        audit.stderr.len() < 64 << 10,
        "{} bytes of log",
        audit.stderr.len()
    );
    let kinds = common::kinds_and_files(&audit_json(root.path()));
    let has = |kind: &str, file: &str| kinds.contains(&(kind.to_string(), file.to_string()));
    assert!(
        has("line_too_long", "nul/20260501_000000_000001/metrics.csv"),
        "{kinds:?}"
    );
    assert!(
        has("file_too_large", "aiperf/c8/profile_export.jsonl"),
        "{kinds:?}"
    );
}

/// `cellscope cells ROOT --format csv` and `audit ROOT --json`'s warnings (kind, file) for a root holding one
/// file, `name`, with `text`.
fn cells_and_warnings(name: &str, text: &[u8]) -> (String, Vec<(String, String)>) {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join(name), text).unwrap();
    let cells = common::cellscope_command()
        .arg("cells")
        .arg(root.path())
        .args(["--no-cache", "--format", "csv"])
        .output()
        .unwrap();
    let warnings = common::kinds_and_files(&audit_json(root.path()));
    (String::from_utf8(cells.stdout).unwrap(), warnings)
}

/// `text` (a JSON object) with `preamble` inserted as its first members.
fn with_preamble(text: &[u8], preamble: &str) -> Vec<u8> {
    let open = text.iter().position(|byte| *byte == b'{').unwrap();
    [&text[..=open], preamble.as_bytes(), &text[open + 1..]].concat()
}

/// Formats are detected from the file's structure however long its first values are: a result whose first
/// member is a 1 MiB string, or 70,000 blanks and nesting 100 deep, or a GuideLLM report whose `args` hold a
/// 200 KB `--data`, gives the cells of the file without them; nesting too deep to parse is a warning on the
/// file, never silence.
#[test]
fn a_long_or_deep_value_before_a_results_keys_does_not_hide_it() {
    let fixtures = good_run().join("../formats");
    let vllm_name = "openai-infqps-concurrency1-Qwen3-8B-20260302-090000.json";
    let vllm = std::fs::read(fixtures.join("vllm-plain").join(vllm_name)).unwrap();
    let (expected, none) = cells_and_warnings(vllm_name, &vllm);
    assert!(none.is_empty(), "{none:?}");
    assert_eq!(expected.lines().count(), 2, "{expected}");
    let long = format!("\"notes\": \"{}\", ", "n".repeat(1 << 20));
    let deep = format!(
        "\"deep\":{}{}[{}1{}], ",
        " ".repeat(70_000),
        "\n".repeat(3),
        "[".repeat(99),
        "]".repeat(99)
    );
    for preamble in [long, deep] {
        let (cells, warnings) = cells_and_warnings(vllm_name, &with_preamble(&vllm, &preamble));
        assert!(
            cells == expected,
            "{}: {}",
            &preamble[..20],
            &cells[..cells.len().min(400)]
        );
        assert!(warnings.is_empty(), "{warnings:?}");
    }
    let too_deep = format!("\"deep\": {}{}, ", "[".repeat(40_000), "]".repeat(40_000));
    let (cells, warnings) = cells_and_warnings(vllm_name, &with_preamble(&vllm, &too_deep));
    assert_eq!(cells.lines().count(), 1, "{cells}");
    assert!(
        warnings.contains(&("invalid_json".to_string(), vllm_name.to_string())),
        "{warnings:?}"
    );

    let report = std::fs::read(fixtures.join("guidellm-v05/benchmarks.json")).unwrap();
    let (expected, _) = cells_and_warnings("benchmarks.json", &report);
    assert!(expected.lines().count() > 2, "{expected}");
    let mut long_args: serde_json::Value = serde_json::from_slice(&report).unwrap();
    long_args["args"]["data"] = serde_json::json!(["x".repeat(200 * 1024)]);
    // `args` comes before `benchmarks`, as GuideLLM writes them.
    let text = format!(
        "{{\"metadata\": {}, \"args\": {}, \"benchmarks\": {}}}",
        long_args["metadata"], long_args["args"], long_args["benchmarks"]
    );
    let (cells, _) = cells_and_warnings("benchmarks.json", text.as_bytes());
    // The workload is named after `--data`, so it alone differs.
    assert_eq!(without_workload(&cells), without_workload(&expected));
}

/// The rows of a cells CSV without their workload column.
fn without_workload(csv_text: &str) -> Vec<Vec<String>> {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let workload = reader
        .headers()
        .unwrap()
        .iter()
        .position(|name| name == "workload")
        .unwrap();
    reader
        .records()
        .map(|record| {
            let record = record.unwrap();
            record
                .iter()
                .enumerate()
                .filter(|(index, _)| *index != workload)
                .map(|(_, field)| field.to_string())
                .collect()
        })
        .collect()
}

/// The value of `column` in the only row of a cells CSV.
fn cell_value(csv_text: &str, column: &str) -> String {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let position = reader
        .headers()
        .unwrap()
        .iter()
        .position(|name| name == column)
        .unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 1, "{csv_text}");
    rows[0][position].to_string()
}

/// A vLLM result whose requests carry a negative token count, a latency of 1e300 s and a negative TTFT: each of
/// those requests is left out with `bad_number` at the file and record, as a TR164 row would be, and the cell's
/// figures are those of the other requests (computed here from the file's arrays).
#[test]
fn requests_of_other_tools_with_numbers_that_are_not_measurements_are_left_out_and_named() {
    let name = "openai-infqps-concurrency4-Qwen3-8B-20260301-101745.json";
    let text = std::fs::read(good_run().join("../formats/vllm-detailed").join(name)).unwrap();
    let mut result: serde_json::Value = serde_json::from_slice(&text).unwrap();
    result["output_lens"][0] = serde_json::json!(-45);
    result["latencies"][1] = serde_json::json!(1e300);
    result["ttfts"][2] = serde_json::json!(-0.003);
    let (cells, warnings) = cells_and_warnings(name, result.to_string().as_bytes());
    let bad: Vec<&(String, String)> = warnings
        .iter()
        .filter(|(kind, _)| kind == "bad_number")
        .collect();
    assert_eq!(bad.len(), 3, "{warnings:?}");
    assert!(bad.iter().all(|(_, file)| file == name), "{bad:?}");
    // Twelve requests: three left out, one failed (`errors` names it), eight measured.
    let errors = result["errors"].as_array().unwrap();
    let kept: Vec<usize> = (3..12)
        .filter(|index| errors[*index].as_str().unwrap().is_empty())
        .collect();
    assert_eq!(kept.len(), 8);
    assert_eq!(cell_value(&cells, "rows"), "9");
    assert_eq!(cell_value(&cells, "ok_rows"), "8");
    assert_eq!(cell_value(&cells, "failed_rows"), "1");
    let mean_wall_ms = kept
        .iter()
        .map(|index| result["latencies"][*index].as_f64().unwrap() * 1000.0)
        .sum::<f64>()
        / kept.len() as f64;
    let shown: f64 = cell_value(&cells, "mean_wall_ms").parse().unwrap();
    assert!(
        (shown - mean_wall_ms).abs() <= 1e-9 * mean_wall_ms,
        "{shown} against {mean_wall_ms}"
    );
    let mean_completion_tokens = kept
        .iter()
        .map(|index| result["output_lens"][*index].as_f64().unwrap())
        .sum::<f64>()
        / kept.len() as f64;
    let shown: f64 = cell_value(&cells, "mean_completion_tokens")
        .parse()
        .unwrap();
    assert!((shown - mean_completion_tokens).abs() < 1e-9, "{shown}");
}

/// Result files that cannot be read each get a warning naming them, not the `not_recognised` note of a file no
/// reader knows: a Parquet file cut short or with random bytes between its magic numbers, a result saved as
/// UTF-16, a GuideLLM report with no benchmarks; and an empty per-request file beside an AIPerf summary is said
/// and left the summary's cell as it is without it.
#[test]
fn unreadable_corrupt_utf16_and_empty_results_each_get_a_warning_naming_the_file() {
    let fixtures = good_run().join("../formats");
    let root = tempfile::tempdir().unwrap();
    let put = |relative: &str, bytes: &[u8]| {
        let path = root.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    let parquet = std::fs::read(fixtures.join("table-parquet/requests.parquet")).unwrap();
    put("cut/requests.parquet", &parquet[..300]);
    let mut scrambled = b"PAR1".to_vec();
    scrambled.extend((0..2000u32).map(|index| (index.wrapping_mul(2_654_435_761) >> 13) as u8));
    scrambled.extend(0x7fff_ffffu32.to_le_bytes());
    scrambled.extend(b"PAR1");
    put("scrambled/requests.parquet", &scrambled);
    let vllm_name = "openai-infqps-concurrency1-Qwen3-8B-20260302-090000.json";
    let vllm = std::fs::read_to_string(fixtures.join("vllm-plain").join(vllm_name)).unwrap();
    let utf16: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain(vllm.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    put(&format!("utf16/{vllm_name}"), &utf16);
    let mut report: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixtures.join("guidellm-v05/benchmarks.json")).unwrap(),
    )
    .unwrap();
    report["benchmarks"] = serde_json::json!([]);
    put(
        "no-benchmarks/benchmarks.json",
        report.to_string().as_bytes(),
    );
    let summary = std::fs::read(fixtures.join(
        "aiperf-v010/artifacts/qwen3-8b-openai-chat-concurrency8/profile_export_aiperf.json",
    ))
    .unwrap();
    put("aiperf/c8/profile_export_aiperf.json", &summary);
    put("alone/c8/profile_export_aiperf.json", &summary);
    put("aiperf/c8/profile_export.jsonl", b"");

    let warnings = common::kinds_and_files(&audit_json(root.path()));
    for (kind, file) in [
        ("corrupt_file", "cut/requests.parquet".to_string()),
        ("corrupt_file", "scrambled/requests.parquet".to_string()),
        ("utf16_file", format!("utf16/{vllm_name}")),
        ("no_records", "no-benchmarks/benchmarks.json".to_string()),
        ("empty_file", "aiperf/c8/profile_export.jsonl".to_string()),
    ] {
        assert!(
            warnings.contains(&(kind.to_string(), file.clone())),
            "no {kind} on {file} in {warnings:?}"
        );
    }
    assert!(
        !warnings.iter().any(|(kind, _)| kind == "not_recognised"),
        "{warnings:?}"
    );
    // The summary beside an empty per-request file gives the cell it gives alone.
    let cells = common::cellscope_command()
        .arg("cells")
        .arg(root.path())
        .args(["--no-cache", "--format", "csv"])
        .output()
        .unwrap();
    let mut reader = csv::Reader::from_reader(cells.stdout.as_slice());
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|header| header == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let of_run = |run: &str| {
        rows.iter()
            .find(|row| &row[column("run_id")] == run)
            .unwrap_or_else(|| panic!("no cell of {run}"))
            .clone()
    };
    let (beside, alone) = (of_run("aiperf"), of_run("alone"));
    for name in [
        "status",
        "rows",
        "failed_rows",
        "p50_ttft_ms",
        "mean_wall_ms",
    ] {
        assert_eq!(beside[column(name)], alone[column(name)], "{name}");
    }
}

/// Thirty bad lines in a JSON Lines result give twenty warnings, each at the line it names, and one that counts
/// the other ten, as a TR164 file's malformed rows do; the good records are all read.
#[test]
fn warnings_of_one_kind_on_one_file_are_listed_to_twenty_then_counted() {
    let name = "sglang_0302_16_1024_128.jsonl";
    let text =
        std::fs::read_to_string(good_run().join("../formats/sglang-plain").join(name)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let bad: Vec<String> = (0..30).map(|index| format!("{{oops {index}")).collect();
    let mixed: Vec<&str> = lines[..1]
        .iter()
        .copied()
        .chain(bad.iter().map(String::as_str))
        .chain(lines[1..].iter().copied())
        .collect();
    let (expected, _) = cells_and_warnings(name, text.as_bytes());
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join(name), mixed.join("\n") + "\n").unwrap();
    let audit = audit_json(root.path());
    let warnings: Vec<&serde_json::Value> = common::warnings_of(&audit)
        .into_iter()
        .filter(|warning| warning["kind"] == "invalid_json")
        .collect();
    assert_eq!(warnings.len(), 21);
    for warning in &warnings {
        let message = warning["message"].as_str().unwrap();
        match warning["line"].as_u64() {
            Some(line) => assert!(message.starts_with(&format!("line {line} ")), "{message}"),
            None => assert!(
                message.starts_with("10 further `invalid_json` findings"),
                "{message}"
            ),
        }
    }
    let (cells, _) = cells_and_warnings(name, (mixed.join("\n") + "\n").as_bytes());
    assert_eq!(cells, expected);
}

/// A UTF-8 byte-order mark before a result (as Windows tools write one) changes nothing: the file is recognised
/// and gives the cells it gives without it, with no warning.
#[test]
fn a_byte_order_mark_before_a_result_changes_nothing() {
    for (directory, name) in [
        ("sglang-plain", "sglang_0302_16_1024_128.jsonl"),
        (
            "vllm-plain",
            "openai-infqps-concurrency1-Qwen3-8B-20260302-090000.json",
        ),
        ("guidellm-v05", "benchmarks.json"),
    ] {
        let text = std::fs::read(good_run().join("../formats").join(directory).join(name)).unwrap();
        let (expected, _) = cells_and_warnings(name, &text);
        assert!(expected.lines().count() > 1, "{directory}");
        let marked = [b"\xef\xbb\xbf".as_slice(), &text].concat();
        let (cells, warnings) = cells_and_warnings(name, &marked);
        assert_eq!(cells, expected, "{directory}");
        assert!(warnings.is_empty(), "{directory}: {warnings:?}");
    }
}

/// A FIFO named like a result, with no summary beside it, is named (`not_a_file`), never opened.
#[test]
fn a_fifo_named_like_a_result_is_named_and_never_opened() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("good")).unwrap();
    common::copy_tree(&good_run(), &root.path().join("good"));
    std::fs::create_dir_all(root.path().join("runs")).unwrap();
    common::mkfifo(&root.path().join("runs/results.json"));
    let audit = audit_json(root.path());
    assert!(
        audit["warnings"].as_array().unwrap().iter().any(
            |warning| warning["kind"] == "not_a_file" && warning["file"] == "runs/results.json"
        ),
        "{audit}"
    );
}

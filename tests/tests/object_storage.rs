//! Data roots in object storage, against a real S3 API server (moto's, on loopback): the demo data uploaded to a
//! bucket indexes to exactly what the local directory gives, `serve` sees a changed object by polling, two
//! replicas over one bucket agree byte for byte, the bucket is never written, and credentials never appear in
//! what cellscope prints.

use anyhow::{Context, bail, ensure};
use cellscope_e2e::{Config, HttpResponse, Server};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The secret every test hands cellscope; it must never be printed.
const SECRET: &str = "do-not-print-this-secret-4711";

/// moto's standalone server on a free loopback port, killed on drop.
struct Moto {
    child: Child,
    endpoint: String,
}

impl Moto {
    fn start(config: &Config) -> anyhow::Result<Moto> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let child = Command::new(config.moto_server()?)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting moto_server")?;
        let moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while cellscope_e2e::get(&format!("{}/", moto.endpoint)).is_err() {
            ensure!(
                Instant::now() < deadline,
                "moto_server did not answer within 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(moto)
    }

    fn call(&self, method: &str, path: &str, body: &[u8]) -> anyhow::Result<HttpResponse> {
        // moto checks no signature, but refuses an anonymous caller an overwrite or delete of an object it put.
        let authorization = "AWS4-HMAC-SHA256 Credential=cellscope-test/20260101/us-east-1/s3/aws4_request, \
                             SignedHeaders=host, Signature=0";
        let response = cellscope_e2e::request(
            method,
            &format!("{}{path}", self.endpoint),
            &[("Authorization", authorization)],
            body,
        )?;
        ensure!(
            (200..300).contains(&response.status),
            "{method} {path}: {} {}",
            response.status,
            response.text()
        );
        Ok(response)
    }

    /// Makes `bucket` and uploads every file under `dir` as `prefix/<relative path>`.
    fn upload(&self, bucket: &str, prefix: &str, dir: &Path) -> anyhow::Result<usize> {
        let _ = self.call("PUT", &format!("/{bucket}"), &[]);
        let mut files = 0;
        let mut pending = vec![dir.to_path_buf()];
        while let Some(current) = pending.pop() {
            for entry in std::fs::read_dir(&current)? {
                let entry = entry?;
                let kind = entry.file_type()?;
                if kind.is_dir() {
                    pending.push(entry.path());
                } else if kind.is_file() {
                    let relative = entry
                        .path()
                        .strip_prefix(dir)?
                        .to_string_lossy()
                        .into_owned();
                    self.put(
                        bucket,
                        &format!("{prefix}/{relative}"),
                        &std::fs::read(entry.path())?,
                    )?;
                    files += 1;
                }
            }
        }
        Ok(files)
    }

    fn put(&self, bucket: &str, key: &str, bytes: &[u8]) -> anyhow::Result<()> {
        self.call("PUT", &format!("/{bucket}/{}", encoded(key)), bytes)
            .map(drop)
    }

    fn delete(&self, bucket: &str, key: &str) -> anyhow::Result<()> {
        self.call("DELETE", &format!("/{bucket}/{}", encoded(key)), &[])
            .map(drop)
    }

    /// The bucket's listing (keys, sizes, ETags, dates), to show that cellscope wrote nothing.
    fn listing(&self, bucket: &str) -> anyhow::Result<String> {
        Ok(self
            .call("GET", &format!("/{bucket}?list-type=2&max-keys=10000"), &[])?
            .text())
    }

    /// The environment that points cellscope's S3 client at this server.
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "cellscope-test".into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET.into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A key as a URL path: every byte but unreserved ones and `/` percent-encoded.
fn encoded(key: &str) -> String {
    key.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

/// `cellscope ARGS` with `env`; its output, failing when it failed.
fn cellscope(config: &Config, args: &[&str], env: &[(&str, String)]) -> anyhow::Result<Output> {
    let output = Command::new(&config.bin)
        .args(args)
        .envs(env.iter().map(|(key, value)| (*key, value.as_str())))
        .env("CELLSCOPE_LOG", "warn")
        .output()
        .with_context(|| format!("running cellscope {}", args.join(" ")))?;
    if !output.status.success() {
        bail!(
            "cellscope {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(output)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_bucket_indexes_exactly_like_the_local_directory() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    let mixed = config.mixed_root()?;
    let moto = Moto::start(&config)?;
    let env = moto.env();
    // The bad-input fixtures, whose warnings the fixture goldens pin on the local directory.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures");
    let uploaded = moto.upload("sweeps", "tr164", &config.data)?
        + moto.upload("sweeps", "mixed/root", &mixed)?
        + moto.upload("sweeps", "fixtures", &fixtures)?;
    ensure!(uploaded > 300, "only {uploaded} files uploaded");
    let before = moto.listing("sweeps")?;
    // The TR164 demo (refills, backups, the ledger, skipped and failed cells), the mixed-format root (six other
    // tools' files and a cellscope.toml mapping) and the bad-input fixtures: every cell, and every warning naming
    // run, file and line.
    for (local, remote) in [
        (
            config.data.to_string_lossy().into_owned(),
            "s3://sweeps/tr164",
        ),
        (
            mixed.to_string_lossy().into_owned(),
            "s3://sweeps/mixed/root/",
        ),
        (
            fixtures.to_string_lossy().into_owned(),
            "s3://sweeps/fixtures",
        ),
    ] {
        let local = local.as_str();
        let cache = tempfile::tempdir()?;
        let cache_dir = cache.path().to_string_lossy().into_owned();
        for format in ["csv", "json"] {
            let expected = cellscope(
                &config,
                &["cells", local, "--format", format, "--no-cache"],
                &[],
            )?;
            let got = cellscope(
                &config,
                &["cells", remote, "--format", format, "--cache", &cache_dir],
                &env,
            )?;
            ensure!(
                expected.stdout == got.stdout,
                "{remote}: the {format} cells table differs from the local one ({} vs {} bytes)",
                got.stdout.len(),
                expected.stdout.len()
            );
            ensure!(
                text(&expected.stderr) == text(&got.stderr),
                "{remote}: the warnings differ:\nlocal:\n{}\nremote:\n{}",
                text(&expected.stderr),
                text(&got.stderr)
            );
        }
        // The audit report: census, hashes of every metrics.csv, refills, exclusions, the breakdown table.
        let expected = cellscope(&config, &["audit", local, "--json", "--no-cache"], &[])?;
        let got = cellscope(&config, &["audit", remote, "--json", "--no-cache"], &env)?;
        // The report names its root: the URL, without credentials, where the local one names the directory.
        let mut expected_report: serde_json::Value = serde_json::from_slice(&expected.stdout)?;
        let mut got_report: serde_json::Value = serde_json::from_slice(&got.stdout)?;
        ensure!(
            got_report["root"] == remote.trim_end_matches('/'),
            "the audit report names its root {}",
            got_report["root"]
        );
        expected_report["root"] = serde_json::Value::Null;
        got_report["root"] = serde_json::Value::Null;
        ensure!(
            expected_report == got_report,
            "{remote}: the audit report differs from the local one"
        );
        ensure!(
            expected.stdout.len() > 1000,
            "the audit report is nearly empty"
        );
        ensure!(
            !text(&got.stderr).contains(SECRET) && !text(&got.stdout).contains(SECRET),
            "the secret was printed"
        );
    }
    // A head-to-head of two backends, statistics and confounders included.
    let local_root = config.data.to_string_lossy().into_owned();
    let compare = |root: &str, env: &[(&str, String)]| {
        cellscope(
            &config,
            &[
                "compare",
                root,
                "--by",
                "backend",
                "--a",
                "vllm",
                "--b",
                "sglang",
                "--json",
                "--no-cache",
            ],
            env,
        )
    };
    let expected = compare(&local_root, &[])?;
    let got = compare("s3://sweeps/tr164", &env)?;
    ensure!(
        expected.stdout == got.stdout && expected.stdout.len() > 1000,
        "the comparison differs from the local one"
    );
    ensure!(
        moto.listing("sweeps")? == before,
        "cellscope changed the bucket"
    );
    Ok(())
}

#[test]
fn serve_follows_the_bucket_and_replicas_agree() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    let moto = Moto::start(&config)?;
    let env = moto.env();
    moto.upload("runs", "tr164", &config.data)?;
    let env_refs: Vec<(&str, &str)> = env
        .iter()
        .map(|(key, value)| (*key, value.as_str()))
        .collect();
    let local = Server::start(&config)?;
    let replicas = start_replicas_sharing_a_bucket_cache(&config, &moto, &env_refs)?;
    let local_snapshot = the_replicas_answer_as_the_local_server(&replicas, &local)?;
    let (changed_local, local_changed) =
        a_cut_object_reaches_both_replicas(&config, &moto, &replicas, &local_snapshot)?;
    a_deleted_object_leaves_the_index(
        &config,
        &moto,
        &replicas,
        changed_local.path(),
        local_changed,
    )
}

/// Two replicas over `s3://runs/tr164` keeping their read results in the bucket: the first writes them, the
/// second starts warm from them.
fn start_replicas_sharing_a_bucket_cache(
    config: &Config,
    moto: &Moto,
    env_refs: &[(&str, &str)],
) -> anyhow::Result<[Server; 2]> {
    // Both replicas keep their read results in the bucket: the first writes them, the second starts warm.
    let args = ["--poll", "0.5", "--cache", "s3://runs/cellscope-cache"];
    let first = Server::start_with(config, "s3://runs/tr164".as_ref(), &args, env_refs)?;
    let entries = |listing: &str| listing.matches(".entry</Key>").count();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut written = 0;
    loop {
        std::thread::sleep(Duration::from_millis(1000));
        let now = entries(&moto.listing("runs")?);
        if now > 0 && now == written {
            break;
        }
        written = now;
        ensure!(
            Instant::now() < deadline,
            "the first replica wrote no read results to the bucket cache within 120 s; its log:\n{}",
            first.log()
        );
    }
    let second = Server::start_with(config, "s3://runs/tr164".as_ref(), &args, env_refs)?;
    let warm_line = second
        .log()
        .lines()
        .find(|line| line.contains("first snapshot: runs taken from the cache"))
        .map(str::to_string)
        .with_context(|| {
            format!(
                "the second replica did not start from the bucket cache:\n{}",
                second.log()
            )
        })?;
    let used: usize = warm_line
        .split_whitespace()
        .find_map(|word| word.strip_prefix("used="))
        .and_then(|number| number.parse().ok())
        .with_context(|| format!("no used= in `{warm_line}`"))?;
    ensure!(
        used > 0 && used <= written,
        "the second replica took {used} runs from the {written} cached entries: `{warm_line}`"
    );
    Ok([first, second])
}

/// Each replica answers the cells table, the index's snapshot and two cells' request rows as the local server
/// does; returns that snapshot id.
fn the_replicas_answer_as_the_local_server(
    replicas: &[Server; 2],
    local: &Server,
) -> anyhow::Result<serde_json::Value> {
    let local_cells = local.get("/api/cells")?;
    ensure!(local_cells.status == 200 && local_cells.body.len() > 10_000);
    let local_snapshot = local.get("/api/index")?.json()?["snapshot"].clone();
    // A cell's request rows, read back from the mirror by offset: a clean cell, and a refilled one whose replaced
    // rows come from the backup directory.
    let requests = [
        "/api/requests?run=20260612_212816_266127&suite=cloud_core&phase=scaling&backend=sglang\
         &model=llama3.1-8b&workload=balanced_2k&n=1&rep=0",
        "/api/requests?run=20260612_212816_266127&suite=cloud_core&phase=scaling&backend=sglang\
         &model=mistral-7b&workload=long_prefill_8k&n=1&rep=0",
    ];
    for replica in replicas {
        for path in requests {
            let expected = local.get(path)?;
            ensure!(
                expected.status == 200 && expected.body.len() > 1000,
                "{path}: {}",
                expected.status
            );
            ensure!(
                replica.get(path)?.body == expected.body,
                "{path} differs from the local server's"
            );
        }
        let cells = replica.get("/api/cells")?;
        ensure!(
            cells.body == local_cells.body,
            "a replica's /api/cells differs from the local server's"
        );
        ensure!(
            replica.get("/api/index")?.json()?["snapshot"] == local_snapshot,
            "a replica's snapshot id differs from the local server's"
        );
    }
    Ok(local_snapshot)
}

/// One run's metrics.csv loses its last rows in the bucket: both replicas see it within a few polls and agree on
/// the new snapshot, which is what a local directory with the same change gives. Returns that directory and its
/// server.
fn a_cut_object_reaches_both_replicas(
    config: &Config,
    moto: &Moto,
    replicas: &[Server; 2],
    local_snapshot: &serde_json::Value,
) -> anyhow::Result<(tempfile::TempDir, Server)> {
    // One run's metrics.csv loses its last rows in the bucket: both replicas see it within a few polls and agree
    // on the new snapshot, which is what a local directory with the same change gives.
    let changed_local = tempfile::tempdir()?;
    copy_tree(&config.data, changed_local.path())?;
    let run = "tr164-v3/20260612_212816_266127/metrics.csv";
    let full = std::fs::read(config.data.join(run))?;
    let kept_lines: Vec<&[u8]> = full.split(|byte| *byte == b'\n').collect();
    let mut shorter = kept_lines[..kept_lines.len() / 2].join(&b'\n');
    shorter.push(b'\n');
    std::fs::write(changed_local.path().join(run), &shorter)?;
    moto.put("runs", &format!("tr164/{run}"), &shorter)?;
    let local_changed = Server::start_with(config, changed_local.path().as_os_str(), &[], &[])?;
    let expected_snapshot = local_changed.get("/api/index")?.json()?["snapshot"].clone();
    ensure!(
        expected_snapshot != *local_snapshot,
        "cutting a metrics.csv did not change the snapshot"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    for replica in replicas {
        loop {
            if replica.get("/api/index")?.json()?["snapshot"] == expected_snapshot {
                break;
            }
            ensure!(
                Instant::now() < deadline,
                "a replica did not announce the changed bucket's snapshot within 60 s; its log:\n{}",
                replica.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        ensure!(
            replica.get("/api/cells")?.body == local_changed.get("/api/cells")?.body,
            "after the change a replica's /api/cells differs from the changed local directory's"
        );
        ensure!(
            !replica.log().contains(SECRET),
            "the secret was printed in the server log"
        );
        ensure!(
            replica.log().contains("remote data root changed"),
            "the replica did not log the change it saw"
        );
    }
    Ok((changed_local, local_changed))
}

/// A deleted object leaves the index as a deleted file does.
fn a_deleted_object_leaves_the_index(
    config: &Config,
    moto: &Moto,
    replicas: &[Server; 2],
    changed_local: &Path,
    local_changed: Server,
) -> anyhow::Result<()> {
    let gone = "tr164-v1";
    for entry in walk(&changed_local.join(gone))? {
        let relative = entry
            .strip_prefix(changed_local)?
            .to_string_lossy()
            .into_owned();
        moto.delete("runs", &format!("tr164/{relative}"))?;
    }
    std::fs::remove_dir_all(changed_local.join(gone))?;
    drop(local_changed);
    let local_removed = Server::start_with(config, changed_local.as_os_str(), &[], &[])?;
    let removed_snapshot = local_removed.get("/api/index")?.json()?["snapshot"].clone();
    let deadline = Instant::now() + Duration::from_secs(60);
    while replicas[0].get("/api/index")?.json()?["snapshot"] != removed_snapshot {
        ensure!(
            Instant::now() < deadline,
            "the replica did not drop the deleted run within 60 s; its log:\n{}",
            replicas[0].log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    ensure!(replicas[0].get("/api/cells")?.body == local_removed.get("/api/cells")?.body);
    Ok(())
}

#[test]
fn bad_credentials_and_missing_buckets_are_said_without_the_secret() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    let moto = Moto::start(&config)?;
    let env = moto.env();
    let output = Command::new(&config.bin)
        .args([
            "cells",
            "s3://no-such-bucket/runs",
            "--format",
            "csv",
            "--no-cache",
        ])
        .envs(env.iter().map(|(key, value)| (*key, value.as_str())))
        .output()?;
    let stderr = text(&output.stderr);
    ensure!(
        !output.status.success(),
        "a missing bucket was not an error"
    );
    ensure!(
        stderr.contains("s3://no-such-bucket/runs"),
        "the error does not name the URL: {stderr}"
    );
    ensure!(!stderr.contains(SECRET), "the secret was printed: {stderr}");
    // An empty prefix of an existing bucket says so instead of serving nothing.
    moto.call("PUT", "/empty", &[])?;
    let output = Command::new(&config.bin)
        .args(["cells", "s3://empty/runs", "--format", "csv", "--no-cache"])
        .envs(env.iter().map(|(key, value)| (*key, value.as_str())))
        .output()?;
    let stderr = text(&output.stderr);
    ensure!(!output.status.success());
    ensure!(
        stderr.contains("nothing under this prefix"),
        "the error does not say the prefix is empty: {stderr}"
    );
    Ok(())
}

fn walk(dir: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                pending.push(entry.path());
            } else {
                files.push(entry.path());
            }
        }
    }
    Ok(files)
}

fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    for file in walk(from)? {
        let target = to.join(file.strip_prefix(from)?);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(&file, &target)?;
    }
    Ok(())
}

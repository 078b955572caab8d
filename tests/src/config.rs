//! Where the tests find the server binary, the data, the browser and the screenshot directory: environment
//! variables set by `cargo xtask e2e` / `cargo xtask ci`.

use anyhow::bail;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a test run needs from outside.
#[derive(Clone, Debug)]
pub struct Config {
    /// `CELLSCOPE_BIN`: a `cellscope` (debug or release) with the web app embedded.
    pub bin: PathBuf,
    /// `CELLSCOPE_DATA`: the data root to serve.
    pub data: PathBuf,
    /// `CELLSCOPE_MIXED_DATA`: the mixed-format demo root (TR164 demo + vLLM, SGLang and AIPerf sweeps), for the
    /// tests of other tools' files ([`Config::mixed_root`]).
    pub mixed: Option<PathBuf>,
    /// `CELLSCOPE_NIGHTLY_DATA`: the nightly demo root (a run per engine per night), for the History view's tests
    /// ([`Config::nightly_root`]).
    pub nightly: Option<PathBuf>,
    /// `CELLSCOPE_MOTO_SERVER`: moto's standalone S3 API server, for the object-storage tests
    /// ([`Config::moto_server`]).
    pub moto_server: Option<PathBuf>,
    /// `CELLSCOPE_FAKE_GCS_SERVER`: fake-gcs-server, the Google Cloud Storage API server of the object-storage
    /// tests ([`Config::fake_gcs_server`]).
    pub fake_gcs_server: Option<PathBuf>,
    /// `CELLSCOPE_AZURITE_BLOB`: Azurite's `azurite-blob`, the Azure Blob Storage API server of the
    /// object-storage tests ([`Config::azurite_blob`]).
    pub azurite_blob: Option<PathBuf>,
    /// `CHROMIUM` (default `/usr/bin/chromium`).
    pub chromium: PathBuf,
    /// `CHROMEDRIVER` (default `/usr/bin/chromedriver`).
    pub chromedriver: PathBuf,
    /// `CELLSCOPE_SCREENSHOTS` (default `target/screenshots` of the workspace).
    pub screenshots: PathBuf,
}

const HOW_TO_RUN: &str = "The browser tests need a `cellscope` binary with the web app embedded, the demo data, \
     Chromium and ChromeDriver: run them with `cargo xtask e2e` (or as part of `cargo xtask ci`), which builds and \
     installs all of that (and the S3, GCS and Azure Blob API servers for the object-storage tests) and sets \
     CELLSCOPE_BIN, CELLSCOPE_DATA and the rest.";

impl Config {
    /// Reads the environment; an error saying how to run the tests when a required variable is missing.
    pub fn from_env() -> anyhow::Result<Self> {
        Self::from_lookup(|name| std::env::var_os(name))
    }

    fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> anyhow::Result<Self> {
        let required = |name: &str| -> anyhow::Result<PathBuf> {
            match lookup(name) {
                Some(value) if !value.is_empty() => Ok(PathBuf::from(value)),
                _ => bail!("{name} is not set. {HOW_TO_RUN}"),
            }
        };
        let or = |name: &str, default: PathBuf| lookup(name).map_or(default, PathBuf::from);
        let optional = |name: &str| {
            lookup(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let config = Self {
            bin: required("CELLSCOPE_BIN")?,
            data: required("CELLSCOPE_DATA")?,
            mixed: lookup("CELLSCOPE_MIXED_DATA")
                .filter(|value| !value.is_empty())
                .map(PathBuf::from),
            nightly: optional("CELLSCOPE_NIGHTLY_DATA"),
            moto_server: optional("CELLSCOPE_MOTO_SERVER"),
            fake_gcs_server: optional("CELLSCOPE_FAKE_GCS_SERVER"),
            azurite_blob: optional("CELLSCOPE_AZURITE_BLOB"),
            chromium: or("CHROMIUM", PathBuf::from("/usr/bin/chromium")),
            chromedriver: or("CHROMEDRIVER", PathBuf::from("/usr/bin/chromedriver")),
            screenshots: or(
                "CELLSCOPE_SCREENSHOTS",
                workspace.join("target/screenshots"),
            ),
        };
        for (name, path) in [
            ("CELLSCOPE_BIN", &config.bin),
            ("CELLSCOPE_DATA", &config.data),
            ("CHROMIUM", &config.chromium),
            ("CHROMEDRIVER", &config.chromedriver),
        ] {
            if !path.exists() {
                bail!("{name}: {} does not exist. {HOW_TO_RUN}", path.display());
            }
        }
        Ok(config)
    }

    /// The mixed-format root; an error saying how to get it when it was not given or is not there.
    pub fn mixed_root(&self) -> anyhow::Result<PathBuf> {
        match &self.mixed {
            Some(mixed) if mixed.join("cellscope.toml").is_file() => Ok(mixed.clone()),
            Some(mixed) => bail!(
                "CELLSCOPE_MIXED_DATA: {} is not a complete mixed demo root. {HOW_TO_RUN}",
                mixed.display()
            ),
            None => bail!("CELLSCOPE_MIXED_DATA is not set. {HOW_TO_RUN}"),
        }
    }
}

impl Config {
    /// The nightly demo root; an error saying how to get it when it was not given or is not there.
    pub fn nightly_root(&self) -> anyhow::Result<PathBuf> {
        match &self.nightly {
            Some(nightly) if nightly.join("README.md").is_file() => Ok(nightly.clone()),
            Some(nightly) => bail!(
                "CELLSCOPE_NIGHTLY_DATA: {} is not a complete nightly demo root. {HOW_TO_RUN}",
                nightly.display()
            ),
            None => bail!("CELLSCOPE_NIGHTLY_DATA is not set. {HOW_TO_RUN}"),
        }
    }

    /// moto's `moto_server`; an error saying how to get it when it was not given or is not there.
    pub fn moto_server(&self) -> anyhow::Result<PathBuf> {
        existing("CELLSCOPE_MOTO_SERVER", self.moto_server.as_ref())
    }

    /// fake-gcs-server; an error saying how to get it when it was not given or is not there.
    pub fn fake_gcs_server(&self) -> anyhow::Result<PathBuf> {
        existing("CELLSCOPE_FAKE_GCS_SERVER", self.fake_gcs_server.as_ref())
    }

    /// Azurite's `azurite-blob`; an error saying how to get it when it was not given or is not there.
    pub fn azurite_blob(&self) -> anyhow::Result<PathBuf> {
        existing("CELLSCOPE_AZURITE_BLOB", self.azurite_blob.as_ref())
    }
}

/// The program an optional variable names, when it is set and the file exists.
fn existing(name: &str, program: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    match program {
        Some(program) if program.is_file() => Ok(program.clone()),
        Some(program) => bail!("{name}: {} does not exist. {HOW_TO_RUN}", program.display()),
        None => bail!("{name} is not set. {HOW_TO_RUN}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_the_variables_it_says_how_to_run_the_tests() {
        let error = Config::from_lookup(|_| None).unwrap_err().to_string();
        assert!(error.contains("CELLSCOPE_BIN is not set"), "{error}");
        assert!(error.contains("cargo xtask ci"), "{error}");
    }
}

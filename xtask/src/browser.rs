//! Chromium and ChromeDriver for the browser tests: Debian's packages, installed with apt-get when missing.
//!
//! Nothing downloads a browser at run time (the machine reaches only the package registries); the tests drive
//! these two binaries.

use crate::process::{self, output};
use anyhow::{Context, bail};
use std::path::Path;

pub(crate) const CHROMIUM: &str = "/usr/bin/chromium";
pub(crate) const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Installs `chromium` and `chromium-driver` when either binary is missing; prints both versions.
pub(crate) fn ensure_installed() -> anyhow::Result<()> {
    if !Path::new(CHROMIUM).is_file() || !Path::new(CHROMEDRIVER).is_file() {
        let env = [("DEBIAN_FRONTEND", "noninteractive")];
        process::run_with_env("apt-get", &["update", "-q"], &env)
            .context("apt-get update (installing Chromium needs root)")?;
        process::run_with_env(
            "apt-get",
            // With the recommended packages (fonts among them), as on the machines where this was proven.
            &["install", "-y", "-q", "chromium", "chromium-driver"],
            &env,
        )
        .context("installing Debian's chromium and chromium-driver")?;
    }
    let chromium = output(CHROMIUM, &["--version"])?;
    let driver = output(CHROMEDRIVER, &["--version"])?;
    let major = |text: &str| {
        text.split_whitespace()
            .find(|word| word.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .and_then(|version| version.split('.').next())
            .map(str::to_string)
    };
    if major(&chromium) != major(&driver) {
        bail!(
            "Chromium and ChromeDriver differ in major version ({} vs {}): `apt-get install chromium chromium-driver` \
             brings them to the same one",
            chromium.trim(),
            driver.trim()
        );
    }
    eprintln!("{} / {}", chromium.trim(), driver.trim());
    Ok(())
}

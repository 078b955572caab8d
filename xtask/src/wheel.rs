//! `cargo xtask wheel`: the `cellscope` wheel (the binary with the app embedded, and the pure-Python package
//! beside it) built by maturin from `pyproject.toml`; and CI's check of it in a fresh virtual environment.

use crate::{process, web};
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// maturin, from the Python package registry, in a virtual environment under `target/`. Pinned: the wheel's
/// layout and tags are maturin's.
const MATURIN: [&str; 1] = ["maturin==1.9.6"];

/// What the test environment needs beside the wheel: its one dependency (pyarrow, which pip installs from the
/// wheel's metadata anyway), pandas for `to_pandas()`, IPython for `show()` (as Jupyter has it) and pytest.
const TEST_PACKAGES: [&str; 4] = ["pyarrow>=14", "pandas>=1.5", "ipython>=8", "pytest>=7"];

/// Where the wheels go.
pub(crate) fn wheel_dir() -> PathBuf {
    crate::target_dir().join("wheels")
}

/// The virtual environment CI installs the wheel into, made anew on every run.
fn test_venv() -> PathBuf {
    crate::target_dir().join("wheel-test-venv")
}

/// `cargo xtask wheel`: the bundle, then a wheel of the binary built with `profile` (`release` by default) and
/// the crate's `features`, stripped. Returns the wheel's path.
pub(crate) fn build(
    profile: &str,
    features: &[&str],
    env: &[(&str, String)],
) -> anyhow::Result<PathBuf> {
    if !web::web_dir().join("index.html").is_file() || profile == "release" {
        web::build_with(false, env)?;
    }
    let maturin = ensure_maturin()?;
    let out = wheel_dir();
    // Only this build's wheel is left there, so the one found below is it.
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("emptying {}", out.display()))?;
    }
    let out_text = out.to_string_lossy().into_owned();
    let features = features.join(",");
    let mut args = vec!["build", "--profile", profile, "--strip", "--out", &out_text];
    if !features.is_empty() {
        args.extend(["--features", &features]);
    }
    process::run_with_env(&maturin.to_string_lossy(), &args, env)?;
    let wheel = only_wheel(&out)?;
    let bytes = std::fs::metadata(&wheel)?.len();
    eprintln!("wheel: {} ({:.1} MB)", wheel.display(), bytes as f64 / 1e6);
    Ok(wheel)
}

fn ensure_maturin() -> anyhow::Result<PathBuf> {
    let python = process::python_venv("maturin-venv", &MATURIN, &["maturin"])?;
    Ok(python.with_file_name("maturin"))
}

fn only_wheel(dir: &Path) -> anyhow::Result<PathBuf> {
    let wheels: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|extension| extension == "whl"))
        .collect();
    match wheels.as_slice() {
        [wheel] => Ok(wheel.clone()),
        other => bail!(
            "expected one wheel in {}, found {}",
            dir.display(),
            other.len()
        ),
    }
}

/// maturin, and a fresh virtual environment with the test packages, ready for a wheel: made beside the build,
/// since pip spends most of its time waiting on the network or unpacking. Returns the environment's Python.
pub(crate) fn prepare_test_venv() -> anyhow::Result<PathBuf> {
    ensure_maturin()?;
    let venv = test_venv();
    if venv.exists() {
        std::fs::remove_dir_all(&venv).with_context(|| format!("removing {}", venv.display()))?;
    }
    let python = process::python_venv(
        "wheel-test-venv",
        &TEST_PACKAGES,
        &["pyarrow", "pandas", "pytest"],
    )?;
    Ok(python)
}

/// Installs `wheel` into the test environment and runs what a user would first: `cellscope --version` and
/// `cellscope cells DATA --format csv` from the environment's own scripts directory, checked against the
/// binary the tests use. Returns the command that runs the package's pytest file.
pub(crate) fn install_and_check(
    python: &Path,
    wheel: &Path,
    data: &Path,
    tests_binary: &Path,
) -> anyhow::Result<Command> {
    process::run(
        &python.to_string_lossy(),
        &[
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--force-reinstall",
            "--no-deps",
            &wheel.to_string_lossy(),
        ],
    )?;
    let installed = python.with_file_name("cellscope");
    let installed_text = installed.to_string_lossy().into_owned();
    let version = process::output(&installed_text, &["--version"])?;
    let expected = format!("cellscope {}", env!("CARGO_PKG_VERSION"));
    anyhow::ensure!(
        version.trim() == expected,
        "`cellscope --version` from the wheel said {version:?}, expected {expected:?}"
    );
    let data_text = data.to_string_lossy().into_owned();
    let cells = ["cells", data_text.as_str(), "--format", "csv", "--no-cache"];
    let from_wheel = process::output(&installed_text, &cells)?;
    let from_tests = process::output(&tests_binary.to_string_lossy(), &cells)?;
    anyhow::ensure!(
        from_wheel == from_tests,
        "`cellscope cells --format csv` from the wheel differs from the tests' binary's"
    );
    eprintln!(
        "{version}`cellscope cells {} --format csv` from the wheel: {} rows, as the tests' binary",
        data.display(),
        from_wheel.lines().count().saturating_sub(1)
    );
    let mut pytest = Command::new(python);
    pytest
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(crate::workspace_root().join("python/tests"))
        .env("CELLSCOPE_DEMO_DATA", data)
        // The package finds the binary the wheel installed, as a user's would.
        .env_remove("CELLSCOPE_BINARY");
    Ok(pytest)
}

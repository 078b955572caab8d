//! Running external commands with their command line echoed and a clear error when they fail.

use anyhow::{Context, bail};
use std::path::Path;
use std::process::Command;

/// Runs `program args…`, inheriting stdio; fails with the command line if it exits non-zero.
pub(crate) fn run(program: &str, args: &[&str]) -> anyhow::Result<()> {
    eprintln!("$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .status()
        .with_context(|| format!("starting {program}"))?;
    if !status.success() {
        bail!("`{program} {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Runs `program args…` like [`run`], with extra environment variables (echoed too, so a failing step can be
/// re-run by hand).
pub(crate) fn run_with_env(
    program: &str,
    args: &[&str],
    env: &[(&str, impl AsRef<str>)],
) -> anyhow::Result<()> {
    let shown: Vec<String> = env
        .iter()
        .map(|(key, value)| format!("{key}={}", value.as_ref()))
        .collect();
    eprintln!("$ {} {program} {}", shown.join(" "), args.join(" "));
    let status = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(key, value)| (key, value.as_ref())))
        .status()
        .with_context(|| format!("starting {program}"))?;
    if !status.success() {
        bail!("`{program} {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Runs `program args…` like [`run_with_env`], with its standard output and error written to `log` (created or
/// truncated) instead of the terminal: for a command that runs beside others. On failure the error carries the
/// log's last lines, so the cause is in the message wherever it is printed.
pub(crate) fn run_logged(
    program: &str,
    args: &[&str],
    env: &[(&str, impl AsRef<str>)],
    log: &Path,
) -> anyhow::Result<()> {
    let file = create_log(log)?;
    let status = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(key, value)| (key, value.as_ref())))
        .stdout(file.try_clone()?)
        .stderr(file)
        .status()
        .with_context(|| format!("starting {program}"))?;
    if !status.success() {
        bail!(
            "`{program} {}` failed ({status}); the last lines of {}:\n{}",
            args.join(" "),
            log.display(),
            log_tail(log, 40)
        );
    }
    Ok(())
}

/// Creates (or truncates) the log file at `path`, with its directory, for a command's output.
pub(crate) fn create_log(path: &Path) -> anyhow::Result<std::fs::File> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))
}

/// The last `count` lines of the log at `path` (empty when it cannot be read), for an error message.
pub(crate) fn log_tail(path: &Path, count: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

/// Runs a command and returns its standard output.
pub(crate) fn output(program: &str, args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("starting {program}"))?;
    if !output.status.success() {
        bail!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Installs the wasm32 target with rustup when it is missing.
pub(crate) fn ensure_wasm_target() -> anyhow::Result<()> {
    let installed = output("rustup", &["target", "list", "--installed"])?;
    if !installed
        .lines()
        .any(|line| line.trim() == "wasm32-unknown-unknown")
    {
        run("rustup", &["target", "add", "wasm32-unknown-unknown"])?;
    }
    Ok(())
}

/// The Python of a virtual environment under `target/<name>`, made when missing, with `packages` installed from
/// the package registry unless `import <modules>` already succeeds there.
pub(crate) fn python_venv(
    name: &str,
    packages: &[&str],
    modules: &[&str],
) -> anyhow::Result<std::path::PathBuf> {
    let venv = crate::workspace_root().join("target").join(name);
    let python = venv.join("bin/python");
    if !python.is_file() {
        run("python3", &["-m", "venv", &venv.to_string_lossy()])?;
    }
    let python_text = python.to_string_lossy().into_owned();
    let check = format!("import {}", modules.join(", "));
    if output(&python_text, &["-c", &check]).is_err() {
        let mut args = vec![
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ];
        args.extend(packages);
        run(&python_text, &args)?;
    }
    Ok(python)
}

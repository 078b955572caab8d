//! `cargo xtask serve`: the app and its API on the mixed demo root (or any data root) in one command: demo data
//! when absent, the web bundle, a release server embedding it, then that server in the foreground.

use crate::{e2e, web};
use anyhow::Context;
use std::path::PathBuf;

pub(crate) fn run(addr: &str, data: Option<PathBuf>, dev: bool) -> anyhow::Result<()> {
    let data = match data {
        Some(data) => data,
        None => crate::demo::ensure_mixed_demo_data()?,
    };
    web::build(dev)?;
    let bin = e2e::release_server()?;
    eprintln!(
        "\ncellscope: http://{addr}/  (data: {}; Ctrl-C stops it)\n",
        data.display()
    );
    let mut command = std::process::Command::new(&bin);
    command.arg("serve").arg(&data).args(["--addr", addr]);
    exec(command).with_context(|| format!("running {}", bin.display()))
}

/// Replaces this process with the server, so that Ctrl-C and the exit status are the server's own.
#[cfg(unix)]
fn exec(mut command: std::process::Command) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    Err(command.exec().into())
}

#[cfg(not(unix))]
fn exec(mut command: std::process::Command) -> anyhow::Result<()> {
    let status = command.status()?;
    anyhow::ensure!(status.success(), "the server exited with {status}");
    Ok(())
}

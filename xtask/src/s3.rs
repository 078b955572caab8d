//! The real S3 API server the object-storage tests run against: moto's standalone server, from the Python
//! package registry, in a virtual environment under `target/`.

use crate::process::{self, output};
use crate::workspace_root;
use std::path::PathBuf;

/// moto's S3 service and its standalone server's web framework: what `moto_server` needs to answer the S3 API,
/// without the other 150 services' dependencies that `moto[server]` would install.
const PACKAGES: [&str; 3] = ["moto[s3]==5.2.5", "flask==3.1.3", "flask-cors==6.0.5"];

/// The `moto_server` executable, installed when missing.
pub fn ensure_moto_server() -> anyhow::Result<PathBuf> {
    let venv = workspace_root().join("target/moto-venv");
    let python = venv.join("bin/python");
    let server = venv.join("bin/moto_server");
    if !python.is_file() {
        process::run("python3", &["-m", "venv", &venv.to_string_lossy()])?;
    }
    let python_text = python.to_string_lossy().into_owned();
    if !server.is_file() || output(&python_text, &["-c", "import moto, flask, flask_cors"]).is_err()
    {
        let mut args = vec![
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ];
        args.extend(PACKAGES);
        process::run(&python_text, &args)?;
    }
    Ok(server)
}

//! The real S3 API server the object-storage tests run against: moto's standalone server, from the Python
//! package registry, in a virtual environment under `target/`.

use crate::process;
use std::path::PathBuf;

/// moto's S3 service and its standalone server's web framework: what `moto_server` needs to answer the S3 API,
/// without the other 150 services' dependencies that `moto[server]` would install.
const PACKAGES: [&str; 3] = ["moto[s3]==5.2.5", "flask==3.1.3", "flask-cors==6.0.5"];

/// The `moto_server` executable, installed when missing.
pub(crate) fn ensure_moto_server() -> anyhow::Result<PathBuf> {
    let python = process::python_venv("moto-venv", &PACKAGES, &["moto", "flask", "flask_cors"])?;
    Ok(python.with_file_name("moto_server"))
}

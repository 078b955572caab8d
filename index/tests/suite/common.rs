//! Shared test support of the index's suite: a FIFO made where a file is expected.

use std::path::Path;

/// A FIFO at `path`, by `mkfifo` (the tests have no libc of their own).
pub(crate) fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

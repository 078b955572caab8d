//! The file walk the build scripts share (the indexer's, over its sources; the server's, over the web bundle).

use std::path::{Path, PathBuf};

/// Every file below `dir`, appended to `out` in directory order; an unreadable directory adds nothing.
pub(crate) fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

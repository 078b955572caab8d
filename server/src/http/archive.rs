//! The bodies of recent snapshots, kept in the cache directory so that a link pinned to a snapshot (`at=`) shows
//! the figures it was made with after the data has changed. Bounded by count and bytes; outside the data root
//! (the server refuses a cache directory inside it); zstd-compressed; written to a temporary name and renamed, so
//! a reader never sees half a file.

use super::snapshot::Snapshot;
use std::path::{Path, PathBuf};

/// The bodies a view needs to show a snapshot as it was.
pub struct Archived {
    pub index_json: Vec<u8>,
    pub provenance_json: Vec<u8>,
    /// The cells table and the pre-refill cells, Arrow IPC streams.
    pub cells_arrow: Vec<u8>,
    pub pre_refill_arrow: Vec<u8>,
}

const PARTS: [&str; 4] = [
    "index.json",
    "provenance.json",
    "cells.arrow",
    "pre_refill.arrow",
];

pub struct Archive {
    dir: PathBuf,
    max_snapshots: usize,
    max_bytes: u64,
}

/// Snapshot ids are 16 lowercase hex digits; anything else never becomes a path.
pub fn is_snapshot_id(text: &str) -> bool {
    text.len() == 16
        && text
            .bytes()
            .all(|byte| byte.is_ascii_hexdigit() && !byte.is_ascii_uppercase())
}

impl Archive {
    /// Keeps up to `max_snapshots` snapshots and `max_bytes` (compressed) in `dir`.
    pub fn new(dir: PathBuf, max_snapshots: usize, max_bytes: u64) -> Archive {
        Archive {
            dir,
            max_snapshots,
            max_bytes,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes a snapshot's bodies (replacing an earlier, less complete version of the same id), then drops the
    /// oldest snapshots beyond the bounds.
    pub fn save(&self, snapshot: &Snapshot) -> std::io::Result<()> {
        let pre_refill = crate::export::encode(
            &snapshot.index.pre_refill_cells,
            crate::export::Format::Arrow,
        )
        .map_err(|error| std::io::Error::other(error.to_string()))?;
        let bodies: [&[u8]; 4] = [
            &snapshot.index_json,
            &snapshot.provenance_json,
            &snapshot.cells_arrow,
            &pre_refill,
        ];
        let target = self.dir.join(&snapshot.id);
        std::fs::create_dir_all(&target)?;
        for (name, body) in PARTS.iter().zip(bodies) {
            let compressed = zstd::bulk::compress(body, 3)?;
            let temporary = target.join(format!("{name}.zst.partial"));
            std::fs::write(&temporary, compressed)?;
            std::fs::rename(&temporary, target.join(format!("{name}.zst")))?;
        }
        self.prune(&snapshot.id)
    }

    /// The bodies of snapshot `id`, when kept.
    pub fn load(&self, id: &str) -> Option<Archived> {
        if !is_snapshot_id(id) {
            return None;
        }
        let dir = self.dir.join(id);
        let mut parts = PARTS.iter().map(|name| {
            let compressed = std::fs::read(dir.join(format!("{name}.zst"))).ok()?;
            zstd::stream::decode_all(compressed.as_slice()).ok()
        });
        Some(Archived {
            index_json: parts.next()??,
            provenance_json: parts.next()??,
            cells_arrow: parts.next()??,
            pre_refill_arrow: parts.next()??,
        })
    }

    /// Removes the oldest snapshots (by the time they were written) until the bounds hold; `keep` stays.
    fn prune(&self, keep: &str) -> std::io::Result<()> {
        let mut kept: Vec<(std::time::SystemTime, u64, PathBuf)> = Vec::new();
        for entry in std::fs::read_dir(&self.dir)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !is_snapshot_id(&name) {
                continue;
            }
            let mut bytes = 0;
            let mut written = std::time::SystemTime::UNIX_EPOCH;
            for file in std::fs::read_dir(entry.path())?.flatten() {
                if let Ok(metadata) = file.metadata() {
                    bytes += metadata.len();
                    written = written.max(metadata.modified().unwrap_or(written));
                }
            }
            kept.push((written, bytes, entry.path()));
        }
        // Newest first; the one just written is newest of all.
        kept.sort_by_key(|(written, _, _)| std::cmp::Reverse(*written));
        let mut total = 0;
        for (position, (_, bytes, path)) in kept.into_iter().enumerate() {
            total += bytes;
            let is_kept = path.file_name().is_some_and(|name| name == keep);
            if !is_kept && (position >= self.max_snapshots || total > self.max_bytes) {
                std::fs::remove_dir_all(&path)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_snapshot_ids_name_directories() {
        assert!(is_snapshot_id("dabbb1722432857b"));
        for bad in [
            "",
            "../../etc/passwd",
            "DABBB1722432857B",
            "dabbb1722432857",
            "dabbb1722432857bz",
        ] {
            assert!(!is_snapshot_id(bad), "{bad}");
        }
    }
}

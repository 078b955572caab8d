//! The bodies of recent snapshots, kept in the cache directory so that a link pinned to a snapshot (`at=`) shows
//! the figures it was made with after the data has changed. Bounded by count and bytes; outside the data root
//! (the server refuses a cache directory inside it); zstd-compressed; written to a temporary name and renamed, so
//! a reader never sees half a file.
//!
//! It also remembers which snapshot the files under the data root indexed to (`inputs/<fingerprint>`, see
//! [`super::start::inputs_fingerprint`]), so that a start on the same files can answer `/api/cells` from the kept
//! body before its index is built.

use axum::body::Bytes;
use cellscope_model::CellSummary;
use sha2::Digest as _;
use std::path::{Path, PathBuf};

/// What the archive keeps of a snapshot: its id, whether it is complete, and its bodies.
pub struct Saved<'a> {
    pub id: &'a str,
    /// Whether the backup comparison (second indexing stage) is in it.
    pub complete: bool,
    pub index_json: &'a [u8],
    pub provenance_json: &'a [u8],
    pub cells_arrow: &'a [u8],
    /// The pre-refill cells, encoded when they are written.
    pub pre_refill_cells: &'a [CellSummary],
}

/// The bodies a view needs to show a snapshot as it was.
pub struct Archived {
    pub index_json: Vec<u8>,
    pub provenance_json: Vec<u8>,
    /// The cells table and the pre-refill cells, Arrow IPC streams.
    pub cells_arrow: Vec<u8>,
    pub pre_refill_arrow: Vec<u8>,
}

/// The bodies of a kept complete snapshot as the archive holds them (zstd), for a start on the files it was made
/// from: what the app asks for first (see [`super::start`]). Only a complete snapshot is remembered for a start, so
/// the pre-refill cells are the backup comparison's.
#[derive(Clone, Debug)]
pub struct KeptBodies {
    /// The snapshot they belong to (named on every answer, as every answer from a snapshot is).
    pub id: String,
    pub index_json_zstd: Bytes,
    pub provenance_json_zstd: Bytes,
    pub cells_arrow_zstd: Bytes,
    pub pre_refill_arrow_zstd: Bytes,
}

/// The kept bodies, in the order of [`Archived`]'s fields.
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

/// The empty file that marks a kept snapshot as complete (second indexing stage included).
const COMPLETE: &str = "complete";
/// The directory of remembered fingerprints.
const INPUTS: &str = "inputs";
/// Fingerprints remembered at most (one is written per start whose files changed since the last).
const KEPT_FINGERPRINTS: usize = 64;

/// Fingerprints are sha256 digests, 64 lowercase hex digits; anything else never becomes a path.
fn is_fingerprint(text: &str) -> bool {
    is_lowercase_hex(text, 64)
}

/// Snapshot ids are 16 lowercase hex digits; anything else never becomes a path.
pub fn is_snapshot_id(text: &str) -> bool {
    is_lowercase_hex(text, 16)
}

fn is_lowercase_hex(text: &str, digits: usize) -> bool {
    text.len() == digits
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
    /// oldest snapshots beyond the bounds. A version as complete as this one is kept as it is (only marked as
    /// used): it holds the same data, indexed earlier, and the answers of a start are checked against its bytes.
    pub fn save(&self, snapshot: Saved<'_>) -> std::io::Result<()> {
        let target = self.dir.join(snapshot.id);
        let marker = target.join(COMPLETE);
        let kept_index = target.join(format!("{}.zst", PARTS[0]));
        let all_kept = PARTS
            .iter()
            .all(|name| target.join(format!("{name}.zst")).is_file());
        let as_complete = if marker.is_file() {
            Some(marker.clone())
        } else if !snapshot.complete && all_kept {
            Some(kept_index)
        } else {
            None
        };
        if let Some(used) = as_complete {
            std::fs::File::options()
                .write(true)
                .open(used)?
                .set_modified(std::time::SystemTime::now())?;
            return self.prune(snapshot.id);
        }
        let pre_refill =
            crate::export::encode(snapshot.pre_refill_cells, crate::export::Format::Arrow)
                .map_err(|error| std::io::Error::other(error.to_string()))?;
        let bodies: [&[u8]; 4] = [
            snapshot.index_json,
            snapshot.provenance_json,
            snapshot.cells_arrow,
            &pre_refill,
        ];
        std::fs::create_dir_all(&target)?;
        for (name, body) in PARTS.iter().zip(bodies) {
            let compressed = zstd::bulk::compress(body, 3)?;
            let temporary = target.join(format!("{name}.zst.partial"));
            std::fs::write(&temporary, compressed)?;
            std::fs::rename(&temporary, target.join(format!("{name}.zst")))?;
        }
        if snapshot.complete {
            std::fs::write(&marker, b"")?;
        }
        self.prune(snapshot.id)
    }

    /// Remembers that files with `fingerprint` indexed to snapshot `id`, which must be kept here already (and
    /// complete); the entry names the sha256 of each kept body, so a body changed since is never served for it.
    pub fn remember_inputs(&self, fingerprint: &str, id: &str) -> std::io::Result<()> {
        if !is_fingerprint(fingerprint) || !is_snapshot_id(id) {
            return Err(std::io::Error::other("not a fingerprint and a snapshot id"));
        }
        let mut entry = id.to_string();
        for name in PARTS {
            let body = std::fs::read(self.dir.join(id).join(format!("{name}.zst")))?;
            entry.push(' ');
            entry.push_str(&cellscope_index::hex::hex(&sha2::Sha256::digest(&body)));
        }
        entry.push('\n');
        let dir = self.dir.join(INPUTS);
        std::fs::create_dir_all(&dir)?;
        let temporary = dir.join(format!("{fingerprint}.partial"));
        std::fs::write(&temporary, entry)?;
        std::fs::rename(&temporary, dir.join(fingerprint))?;
        self.prune_inputs()
    }

    /// The snapshot remembered for files with `fingerprint`, its bodies still zstd-compressed as kept, when it is
    /// still kept and every body is the one remembered.
    pub fn kept_for_inputs(&self, fingerprint: &str) -> Option<KeptBodies> {
        if !is_fingerprint(fingerprint) {
            return None;
        }
        let entry = std::fs::read_to_string(self.dir.join(INPUTS).join(fingerprint)).ok()?;
        let mut fields = entry.split_whitespace();
        let id = fields.next().filter(|id| is_snapshot_id(id))?;
        let dir = self.dir.join(id);
        let mut bodies = PARTS.iter().zip(fields).map(|(name, sha256)| {
            let body = std::fs::read(dir.join(format!("{name}.zst"))).ok()?;
            (cellscope_index::hex::hex(&sha2::Sha256::digest(&body)) == sha256)
                .then(|| Bytes::from(body))
        });
        Some(KeptBodies {
            id: id.to_string(),
            index_json_zstd: bodies.next()??,
            provenance_json_zstd: bodies.next()??,
            cells_arrow_zstd: bodies.next()??,
            pre_refill_arrow_zstd: bodies.next()??,
        })
    }

    /// Drops the remembered fingerprints of snapshots no longer kept, and all but the newest
    /// [`KEPT_FINGERPRINTS`].
    fn prune_inputs(&self) -> std::io::Result<()> {
        let dir = self.dir.join(INPUTS);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(());
        };
        let mut live = Vec::new();
        for entry in entries.flatten() {
            // A `.partial` file is another start's write in progress.
            if !is_fingerprint(&entry.file_name().to_string_lossy()) {
                continue;
            }
            let path = entry.path();
            let id = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| text.split(' ').next().map(str::to_string));
            let kept = id.is_some_and(|id| is_snapshot_id(&id) && self.dir.join(&id).is_dir());
            let written = entry.metadata().and_then(|metadata| metadata.modified());
            match (kept, written) {
                (true, Ok(written)) => live.push((written, path)),
                _ => std::fs::remove_file(&path)?,
            }
        }
        live.sort_by_key(|(written, _)| std::cmp::Reverse(*written));
        for (_, path) in live.into_iter().skip(KEPT_FINGERPRINTS) {
            std::fs::remove_file(path)?;
        }
        Ok(())
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
        self.prune_snapshots(keep)?;
        self.prune_inputs()
    }

    fn prune_snapshots(&self, keep: &str) -> std::io::Result<()> {
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

    #[test]
    fn only_fingerprints_name_remembered_inputs() {
        let fingerprint = "3fcbf4da66a190a9e3797e446fd0b409e327d2782f61bd7c9efdb4c5e8d9777b";
        assert!(is_fingerprint(fingerprint));
        let dir = tempfile::tempdir().unwrap();
        let archive = Archive::new(dir.path().to_path_buf(), 20, 1 << 30);
        for bad in [
            "",
            "../inputs",
            &fingerprint.to_uppercase(),
            &fingerprint[1..],
        ] {
            assert!(!is_fingerprint(bad), "{bad}");
            assert!(archive.kept_for_inputs(bad).is_none(), "{bad}");
            assert!(
                archive.remember_inputs(bad, "dabbb1722432857b").is_err(),
                "{bad}"
            );
        }
        // A fingerprint of a snapshot that is not kept: nothing to remember, nothing to answer with.
        assert!(
            archive
                .remember_inputs(fingerprint, "dabbb1722432857b")
                .is_err()
        );
        assert!(archive.kept_for_inputs(fingerprint).is_none());
    }
}

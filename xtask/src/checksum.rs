//! A checksum of a data directory (every path with its size, modification time and content hash) to prove that
//! the browser tests left the data untouched: the server must never write under its data root.

use anyhow::Context;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::UNIX_EPOCH;

/// One entry per path below the root, directories included (their mtime changes when a file is created and
/// deleted again).
#[derive(PartialEq, Eq)]
pub(crate) struct Checksum {
    entries: BTreeMap<String, String>,
}

impl Checksum {
    /// Walks `root` without following symbolic links (a link is recorded by its target).
    pub(crate) fn of(root: &Path) -> anyhow::Result<Self> {
        let mut entries = BTreeMap::new();
        walk(root, root, &mut entries)?;
        Ok(Self { entries })
    }

    /// One hash over every entry, for the log.
    pub(crate) fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        for (path, entry) in &self.entries {
            hasher.update(path.as_bytes());
            hasher.update([0]);
            hasher.update(entry.as_bytes());
            hasher.update([b'\n']);
        }
        hasher.finalize()[..8]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The paths that were added, removed or changed from `self` to `after`, each with what changed.
    pub(crate) fn differences(&self, after: &Self) -> Vec<String> {
        let mut out = Vec::new();
        for (path, before) in &self.entries {
            match after.entries.get(path) {
                None => out.push(format!("removed {path}")),
                Some(now) if now != before => {
                    out.push(format!("changed {path}: {before} -> {now}"))
                }
                Some(_) => {}
            }
        }
        for path in after.entries.keys() {
            if !self.entries.contains_key(path) {
                out.push(format!("added {path}"));
            }
        }
        out
    }
}

/// Fails, listing every difference, when `root` no longer has the checksum `before`.
pub(crate) fn verify_unchanged(before: &Checksum, root: &Path) -> anyhow::Result<()> {
    let after = Checksum::of(root)?;
    let differences = before.differences(&after);
    if !differences.is_empty() {
        anyhow::bail!(
            "{} changed while the server ran on it (it must only read its data root):\n  {}",
            root.display(),
            differences.join("\n  ")
        );
    }
    eprintln!(
        "{}: unchanged ({} entries, checksum {})",
        root.display(),
        after.len(),
        after.digest()
    );
    Ok(())
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        let meta = std::fs::symlink_metadata(&path)
            .with_context(|| format!("reading metadata of {}", path.display()))?;
        let mtime = meta
            .modified()
            .ok()
            .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |since| since.as_nanos());
        let relative = path.strip_prefix(root)?.to_string_lossy().into_owned();
        let kind = meta.file_type();
        let content = if kind.is_symlink() {
            format!(
                "link to {}",
                std::fs::read_link(&path)
                    .with_context(|| format!("reading link {}", path.display()))?
                    .display()
            )
        } else if kind.is_dir() {
            walk(root, &path, out)?;
            "dir".to_string()
        } else {
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            format!("sha256 {:x}", Sha256::digest(&bytes))
        };
        out.insert(
            relative,
            format!("{} bytes, mtime {mtime} ns, {content}", meta.len()),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_write_shows() {
        let dir = std::env::temp_dir().join(format!("xtask-checksum-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("run")).unwrap();
        std::fs::write(dir.join("run/metrics.csv"), "a,b\n1,2\n").unwrap();
        let before = Checksum::of(&dir).unwrap();
        assert!(before == Checksum::of(&dir).unwrap());
        std::fs::write(dir.join("run/metrics.csv"), "a,b\n1,3\n").unwrap();
        let after = Checksum::of(&dir).unwrap();
        let differences = before.differences(&after);
        assert!(
            differences
                .iter()
                .any(|line| line.starts_with("changed run/metrics.csv")),
            "{differences:?}"
        );
        std::fs::write(dir.join("run/.lock"), "").unwrap();
        let added = after.differences(&Checksum::of(&dir).unwrap());
        assert!(added.contains(&"added run/.lock".to_string()), "{added:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Where cache entries are kept: the narrow [`CacheStore`] seam (get and put of bytes by key) and its local
//! implementation, a directory. An object-storage store shared by replicas can stand in for it without touching
//! the indexer, because keys and entries hold no absolute path.

use std::io;
use std::path::{Path, PathBuf};

/// Keeps cache entries by key. Keys are lowercase hex digests (see [`is_key`]); entries are opaque bytes that the
/// caller checks before use, so a store may lose, truncate or corrupt them without making a wrong index.
pub trait CacheStore: Send + Sync {
    /// The entry stored under `key`, `None` when there is none.
    fn get(&self, key: &str) -> io::Result<Option<Vec<u8>>>;
    /// Stores `bytes` under `key`, replacing an earlier entry; a reader sees the old entry or the new one whole.
    fn put(&self, key: &str, bytes: &[u8]) -> io::Result<()>;
    /// Drops entries beyond the store's bounds, never one of `keep` (the entries the last index used).
    fn prune(&self, keep: &[String]) -> io::Result<()> {
        let _ = keep;
        Ok(())
    }
    /// How to name the store to a user (a directory, a bucket URL).
    fn describe(&self) -> String;
}

/// Keys are 64 lowercase hex digits (a sha256); anything else never becomes a file name.
pub fn is_key(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

/// Entries as files of one directory, `<key>.entry`, bounded in bytes: beyond the bound the oldest written go.
pub struct DirectoryStore {
    dir: PathBuf,
    max_bytes: u64,
}

impl DirectoryStore {
    /// A store in `dir` (created on the first write) holding at most `max_bytes` of entries.
    pub fn new(dir: PathBuf, max_bytes: u64) -> DirectoryStore {
        DirectoryStore { dir, max_bytes }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> io::Result<PathBuf> {
        if !is_key(key) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{key:?} is not a cache key"),
            ));
        }
        Ok(self.dir.join(format!("{key}.entry")))
    }
}

impl CacheStore for DirectoryStore {
    fn get(&self, key: &str) -> io::Result<Option<Vec<u8>>> {
        match std::fs::read(self.path(key)?) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn put(&self, key: &str, bytes: &[u8]) -> io::Result<()> {
        let target = self.path(key)?;
        std::fs::create_dir_all(&self.dir)?;
        // Written under a name no reader looks at, then renamed over the entry: a crash or a full disk leaves
        // a stray temporary file, never half an entry under the key. The process id and a counter keep two
        // writers (two servers on one cache) off each other's temporary file.
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let serial = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temporary = self
            .dir
            .join(format!("{key}.{}.{serial}.partial", std::process::id()));
        let written =
            std::fs::write(&temporary, bytes).and_then(|()| std::fs::rename(&temporary, &target));
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written
    }

    fn prune(&self, keep: &[String]) -> io::Result<()> {
        let keep: std::collections::HashSet<&str> = keep.iter().map(String::as_str).collect();
        let mut entries: Vec<(std::time::SystemTime, u64, PathBuf, bool)> = Vec::new();
        let listing = match std::fs::read_dir(&self.dir) {
            Ok(listing) => listing,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        };
        for entry in listing.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            let written = metadata.modified().unwrap_or(std::time::UNIX_EPOCH);
            if let Some(key) = name.strip_suffix(".entry")
                && is_key(key)
            {
                entries.push((written, metadata.len(), entry.path(), keep.contains(key)));
            } else if name.ends_with(".partial")
                && written.elapsed().is_ok_and(|age| age.as_secs() > 3600)
            {
                // A temporary file an hour old belongs to a write that died.
                let _ = std::fs::remove_file(entry.path());
            }
        }
        // Newest first; entries in use count first of all, so they are never the ones over the bound.
        entries.sort_by_key(|(written, _, _, in_use)| (!in_use, std::cmp::Reverse(*written)));
        let mut total = 0;
        for (_, bytes, path, in_use) in entries {
            total += bytes;
            if !in_use && total > self.max_bytes {
                std::fs::remove_file(&path)?;
            }
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.dir.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    const C: &str = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";

    #[test]
    fn a_directory_store_gets_what_was_put_and_refuses_other_names() {
        let dir = tempfile::tempdir().unwrap();
        let store = DirectoryStore::new(dir.path().join("runs"), 1 << 20);
        assert_eq!(store.get(A).unwrap(), None);
        store.put(A, b"first").unwrap();
        store.put(A, b"second").unwrap();
        assert_eq!(store.get(A).unwrap().as_deref(), Some(&b"second"[..]));
        assert!(store.get("../../etc/passwd").is_err());
        assert!(store.put(&A.to_uppercase(), b"x").is_err());
        // Only the entry is left: the temporary file was renamed over it.
        let names: Vec<String> = std::fs::read_dir(store.dir())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [format!("{A}.entry")]);
    }

    #[test]
    fn pruning_keeps_entries_in_use_and_the_newest_within_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let store = DirectoryStore::new(dir.path().to_path_buf(), 12);
        for (key, age_s) in [(A, 30), (B, 20), (C, 10)] {
            store.put(key, b"123456").unwrap();
            let file = std::fs::File::options()
                .write(true)
                .open(dir.path().join(format!("{key}.entry")))
                .unwrap();
            file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(age_s))
                .unwrap();
        }
        // A is the oldest but in use, C the newest of the others: together 12 bytes, the bound; B goes.
        store.prune(&[A.to_string()]).unwrap();
        assert!(store.get(A).unwrap().is_some());
        assert!(store.get(B).unwrap().is_none());
        assert!(store.get(C).unwrap().is_some());
    }
}

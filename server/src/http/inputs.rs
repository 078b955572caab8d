//! The fingerprint of a data root's inputs: what a warm start compares to trust the answers kept from an earlier
//! run of the server on the same files (see [`super::start`]).

use cellscope_index::storage::{self, EntryKind, LocalDisk, Storage as _};
use sha2::Digest as _;
use std::path::Path;

/// A fingerprint of everything an index of `root` can read and of the code that would read it: the cellscope
/// version, the hash of the indexer's sources and the running executable's size and times, then every entry under
/// the root in name order (symbolic links not followed, as discovery does not follow them) with its kind, size,
/// modification time and, on Unix, permissions and change time. An added, removed, rewritten, touched or
/// re-permissioned file changes it; so does a new build of cellscope.
pub fn inputs_fingerprint(root: &Path) -> std::io::Result<String> {
    let mut hash = sha2::Sha256::new();
    hash.update(b"cellscope inputs 1\0");
    hash.update(env!("CARGO_PKG_VERSION").as_bytes());
    hash.update(cellscope_index::READ_CODE.as_bytes());
    let executable = std::fs::metadata(std::env::current_exe()?)?;
    update_with_metadata(&mut hash, &executable);
    hash.update(root.as_os_str().as_encoded_bytes());
    hash.update([0]);
    walk(&LocalDisk::new(root), "", &mut hash)?;
    Ok(cellscope_index::hex::hex(&hash.finalize()))
}

/// Every entry under `directory` in name order, listed through the index's storage as discovery lists it.
fn walk(disk: &LocalDisk, directory: &str, hash: &mut sha2::Sha256) -> std::io::Result<()> {
    for entry in disk.list(directory)? {
        let path = storage::join(directory, &entry.name);
        hash.update(format!("/{path}").as_bytes());
        hash.update([0]);
        hash.update([match entry.kind {
            EntryKind::Directory => b'd',
            EntryKind::Symlink => b'l',
            EntryKind::File => b'f',
            EntryKind::Other => b'o',
        }]);
        if entry.kind == EntryKind::Directory {
            // A directory that cannot be listed is part of what an index sees (it warns about it).
            match walk(disk, &path, hash) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied => {
                    hash.update(b"unreadable\0");
                }
                Err(error) => return Err(error),
            }
        } else {
            update_with_metadata(hash, &disk.metadata(&path)?);
        }
    }
    hash.update(b"end\0");
    Ok(())
}

fn update_with_metadata(hash: &mut sha2::Sha256, metadata: &std::fs::Metadata) {
    hash.update(metadata.len().to_le_bytes());
    let modified_ns = metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |elapsed| elapsed.as_nanos());
    hash.update(modified_ns.to_le_bytes());
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        hash.update(metadata.mode().to_le_bytes());
        hash.update(metadata.ctime().to_le_bytes());
        hash.update(metadata.ctime_nsec().to_le_bytes());
        hash.update(metadata.ino().to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::inputs_fingerprint;

    #[test]
    fn the_fingerprint_follows_names_sizes_times_and_permissions_but_not_reads() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("run")).unwrap();
        let file = root.path().join("run/metrics.csv");
        std::fs::write(&file, "a,b\n1,2\n").unwrap();
        let first = inputs_fingerprint(root.path()).unwrap();
        std::fs::read(&file).unwrap();
        assert_eq!(inputs_fingerprint(root.path()).unwrap(), first);
        // An empty directory is seen by an index (a run without metrics.csv is warned about).
        std::fs::create_dir(root.path().join("empty")).unwrap();
        let with_directory = inputs_fingerprint(root.path()).unwrap();
        assert_ne!(with_directory, first);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o200)).unwrap();
            assert_ne!(inputs_fingerprint(root.path()).unwrap(), with_directory);
        }
    }
}

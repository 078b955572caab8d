//! Where run files are read from: the storage half of the ingest seam (local disk today, object storage later).
//!
//! Every reader reaches the data through [`Storage`] with paths relative to the data root and `/`-separated, so
//! no reader builds an absolute path and a different backend (a bucket prefix) can stand in without touching
//! them. A backend that is a local disk also hands out the file itself ([`Storage::local_file`]), which the TR164
//! reader maps or reads in pieces on every core; every other backend is read by bytes. Nothing here can write.

// The memory map and its SIGBUS guard are system calls on raw memory; each unsafe block there says why it holds.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub(crate) mod mapped;

use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What a listing entry is. Symbolic links are reported as such and never followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
    /// FIFOs, sockets, devices: never read.
    Other,
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub kind: EntryKind,
    pub bytes: u64,
    pub modified: Option<SystemTime>,
}

/// Size, modification time and kind of one entry (a symbolic link is itself, not what it points to).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    pub bytes: u64,
    pub modified: Option<SystemTime>,
    pub kind: EntryKind,
}

impl Meta {
    pub fn is_file(&self) -> bool {
        self.kind == EntryKind::File
    }
}

/// Read-only access to a data root. Paths are relative to the root, `/`-separated; `""` is the root itself.
pub trait Storage: Send + Sync {
    /// The entries of one directory, sorted by name.
    fn list(&self, directory: &str) -> io::Result<Vec<Entry>>;
    fn stat(&self, path: &str) -> io::Result<Meta>;
    fn read(&self, path: &str) -> io::Result<Vec<u8>>;
    /// The bytes of `range` (shorter when the file ends first).
    fn read_range(&self, path: &str, range: Range<u64>) -> io::Result<Vec<u8>>;
    /// How to name `path` to a user (an absolute path on disk, a URL in a bucket).
    fn display(&self, path: &str) -> String;

    /// The whole file into `buffer` (its contents replaced), so that a reader of many files can keep one buffer
    /// and its pages between them.
    fn read_into(&self, path: &str, buffer: &mut Vec<u8>) -> io::Result<()> {
        *buffer = self.read(path)?;
        Ok(())
    }

    /// The file opened, when the backend is a local disk: a reader may then map it or read it in pieces at any
    /// offset. `None` for a backend that is not (the file is read with the methods above).
    fn local_file(&self, path: &str) -> Option<io::Result<std::fs::File>> {
        let _ = path;
        None
    }
}

/// The kind of a local directory entry or file, as its own metadata says (a link is not followed).
fn kind_of(file_type: std::fs::FileType) -> EntryKind {
    if file_type.is_symlink() {
        EntryKind::Symlink
    } else if file_type.is_dir() {
        EntryKind::Directory
    } else if file_type.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    }
}

/// `a/b` + `c` → `a/b/c`; the root (`""`) joins to the bare name.
pub fn join(directory: &str, name: &str) -> String {
    if directory.is_empty() {
        name.to_string()
    } else {
        format!("{directory}/{name}")
    }
}

/// The directory part of a relative path (`""` for a file at the root).
pub fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(directory, _)| directory)
}

/// The last component of a relative path.
pub fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

/// A data root on the local file system.
#[derive(Clone, Debug)]
pub struct LocalDisk {
    root: PathBuf,
}

impl LocalDisk {
    pub fn new(root: &Path) -> LocalDisk {
        LocalDisk {
            root: root.to_path_buf(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute path of a relative one. Components that could leave the root (`..`, absolute parts) are
    /// refused, so a path that came from a file's content cannot reach outside the data root.
    pub fn absolute(&self, path: &str) -> io::Result<PathBuf> {
        let mut absolute = self.root.clone();
        for component in path.split('/').filter(|component| !component.is_empty()) {
            if component == ".." || component == "." || component.contains('\\') {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{path} is not a plain path inside the data root"),
                ));
            }
            absolute.push(component);
        }
        Ok(absolute)
    }
}

impl LocalDisk {
    /// The metadata of `path` itself, a symbolic link not followed: for what needs more of a file than [`Meta`]
    /// (the server's fingerprint of the data root's inputs, walked through [`Storage::list`] as discovery walks).
    pub fn metadata(&self, path: &str) -> io::Result<std::fs::Metadata> {
        std::fs::symlink_metadata(self.absolute(path)?)
    }

    /// `path` opened for reading only if it is a regular file. The open neither follows a symbolic link nor waits
    /// for a FIFO's writer, and the kind is read from the opened file, so no file swapped in between can block.
    fn open_regular(&self, path: &str) -> io::Result<std::fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
            .open(self.absolute(path)?)
            .map_err(|error| match error.raw_os_error() {
                Some(libc::ELOOP) => NotAFile::error(EntryKind::Symlink),
                _ => error,
            })?;
        let kind = kind_of(file.metadata()?.file_type());
        if kind == EntryKind::File {
            Ok(file)
        } else {
            Err(NotAFile::error(kind))
        }
    }
}

/// The error of opening something that is not a regular file (see [`not_a_file`]).
#[derive(Debug)]
pub struct NotAFile(pub EntryKind);

impl NotAFile {
    fn error(kind: EntryKind) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidInput, NotAFile(kind))
    }
}

impl std::fmt::Display for NotAFile {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self.0 {
            EntryKind::Directory => "it is a directory, not a regular file",
            EntryKind::Symlink => {
                "it is a symbolic link, not a regular file (links are not followed)"
            }
            _ => "it is a FIFO, socket or device, not a regular file",
        })
    }
}

impl std::error::Error for NotAFile {}

/// The largest result file a reader holds whole (a JSON document, a JSON Lines or CSV export): parsing costs a
/// few times a file's size in memory, so a larger one is refused with `file_too_large` rather than risk the
/// machine. TR164 metrics files are read in pieces and have no such bound.
pub const MAX_DOCUMENT_BYTES: u64 = 1 << 30;

/// The largest side file of a TR164 run read (a manifest, a plan, a refill note: kilobytes in practice).
pub const MAX_SIDE_FILE_BYTES: u64 = 16 << 20;

/// The error of a file larger than a reader holds whole.
#[derive(Debug)]
pub struct TooLarge {
    pub bytes: u64,
    pub max_bytes: u64,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "it is {} bytes, more than the {} a file of this kind is read whole up to",
            self.bytes, self.max_bytes
        )
    }
}

impl std::error::Error for TooLarge {}

/// The whole of `path`, refused without reading it when it is larger than `max_bytes`.
pub fn read_bounded(storage: &dyn Storage, path: &str, max_bytes: u64) -> io::Result<Vec<u8>> {
    let too_large =
        |bytes| io::Error::new(io::ErrorKind::InvalidData, TooLarge { bytes, max_bytes });
    let bytes = storage.stat(path)?.bytes;
    if bytes > max_bytes {
        return Err(too_large(bytes));
    }
    let read = storage.read(path)?;
    if read.len() as u64 > max_bytes {
        return Err(too_large(read.len() as u64));
    }
    Ok(read)
}

/// Whether a read failed because the path is not a regular file (a FIFO, device, directory or link).
pub fn not_a_file(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<NotAFile>())
}

/// The warning for a file that could not be read: `not_a_file` or `unreadable_file`, naming the file.
pub fn unreadable_warning(error: &io::Error, path: &str) -> cellscope_model::api::Warning {
    let too_large = error.get_ref().is_some_and(|inner| inner.is::<TooLarge>());
    let code = if not_a_file(error) {
        "not_a_file"
    } else if too_large {
        "file_too_large"
    } else {
        "unreadable_file"
    };
    cellscope_model::api::Warning::error(code, format!("cannot read the file: {error}")).file(path)
}

impl Storage for LocalDisk {
    fn list(&self, directory: &str) -> io::Result<Vec<Entry>> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(self.absolute(directory)?)? {
            let entry = entry?;
            // `file_type` of a directory entry does not follow symbolic links, which is what keeps the walk
            // inside the root.
            let kind = kind_of(entry.file_type()?);
            let metadata = (kind == EntryKind::File)
                .then(|| entry.metadata().ok())
                .flatten();
            entries.push(Entry {
                name: entry.file_name().to_string_lossy().into_owned(),
                kind,
                bytes: metadata.as_ref().map_or(0, std::fs::Metadata::len),
                modified: metadata.and_then(|metadata| metadata.modified().ok()),
            });
        }
        entries.sort_by(|left, right| left.name.cmp(&right.name));
        Ok(entries)
    }

    fn stat(&self, path: &str) -> io::Result<Meta> {
        let metadata = std::fs::symlink_metadata(self.absolute(path)?)?;
        Ok(Meta {
            bytes: metadata.len(),
            modified: metadata.modified().ok(),
            kind: kind_of(metadata.file_type()),
        })
    }

    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.read_into(path, &mut bytes)?;
        Ok(bytes)
    }

    fn read_range(&self, path: &str, range: Range<u64>) -> io::Result<Vec<u8>> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = self.open_regular(path)?;
        file.seek(SeekFrom::Start(range.start))?;
        let mut bytes = Vec::new();
        file.take(range.end.saturating_sub(range.start))
            .read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    fn display(&self, path: &str) -> String {
        self.absolute(path)
            .map_or_else(|_| path.to_string(), |path| path.display().to_string())
    }

    fn read_into(&self, path: &str, buffer: &mut Vec<u8>) -> io::Result<()> {
        use std::io::Read;
        buffer.clear();
        let mut file = self.open_regular(path)?;
        buffer.reserve(file.metadata().map_or(0, |metadata| metadata.len()) as usize);
        file.read_to_end(buffer)?;
        Ok(())
    }

    fn local_file(&self, path: &str) -> Option<io::Result<std::fs::File>> {
        Some(self.open_regular(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_disk_lists_reads_and_refuses_to_leave_the_root() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("run")).unwrap();
        std::fs::write(root.path().join("run/b.json"), b"0123456789").unwrap();
        std::fs::write(root.path().join("run/a.json"), b"{}").unwrap();
        let disk = LocalDisk::new(root.path());
        let names: Vec<(String, EntryKind, u64)> = disk
            .list("run")
            .unwrap()
            .into_iter()
            .map(|entry| (entry.name, entry.kind, entry.bytes))
            .collect();
        assert_eq!(
            names,
            [
                ("a.json".to_string(), EntryKind::File, 2),
                ("b.json".to_string(), EntryKind::File, 10)
            ]
        );
        assert_eq!(disk.list("").unwrap()[0].kind, EntryKind::Directory);
        assert_eq!(disk.read_range("run/b.json", 3..6).unwrap(), b"345");
        assert_eq!(disk.read_range("run/b.json", 8..100).unwrap(), b"89");
        assert_eq!(disk.stat("run/b.json").unwrap().bytes, 10);
        assert_eq!(disk.stat("run").unwrap().kind, EntryKind::Directory);
        let mut buffer = b"left over".to_vec();
        disk.read_into("run/a.json", &mut buffer).unwrap();
        assert_eq!(buffer, b"{}");
        assert!(disk.local_file("run/b.json").unwrap().is_ok());
        assert!(disk.local_file("../etc/passwd").unwrap().is_err());
        assert!(disk.read("../etc/passwd").is_err());
        assert!(disk.read("run/../../x").is_err());
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("a/b", "c"), "a/b/c");
        assert_eq!(parent("a/b/c.json"), "a/b");
        assert_eq!(parent("c.json"), "");
        assert_eq!(file_name("a/b/c.json"), "c.json");
    }
}

//! Data roots in object storage (`s3://`, `gs://`, `az://`, `file://`): a read-only local mirror of the bucket
//! prefix, kept in step by polling listings.
//!
//! The indexer reads a local tree. A remote root is listed through the `object_store` crate and every object is
//! fetched into a mirror directory inside the cache directory (never the bucket, which is only ever read), with
//! the object's last-modified time as the file's modification time. Discovery, parsing, refills, backups and
//! the ledger then run the very code, and give the very results, they give on a local directory; the per-run
//! cache's size-and-time stamps stay meaningful. A later sync lists the prefix again and fetches only objects
//! whose ETag, size or last-modified changed, and removes what the bucket no longer has; that listing is the
//! change detection of `serve` on a remote root.
//!
//! Credentials come from each cloud's standard environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`, read by the
//! builders' `from_env`); nothing here prints them, and a URL is shown without any user or password part.

use futures_util::StreamExt as _;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt as _};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// How many objects are fetched at once.
const FETCHES_IN_FLIGHT: usize = 16;

/// Errors reaching or mirroring a remote root.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("{url} is not a data root cellscope can read: {message}")]
    Url { url: String, message: String },
    #[error("cannot list {url}: {reason}")]
    List { url: String, reason: String },
    #[error("cannot fetch {url}: {reason}")]
    Fetch { url: String, reason: String },
    #[error(
        "{url}: nothing under this prefix (no objects, or a bucket that is empty or does not exist)"
    )]
    Empty { url: String },
    #[error("cannot write the local mirror at {path}: {source}")]
    Mirror {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The blocking task that syncs the mirror ended without a result (it panicked or was cancelled).
    #[error("syncing {url} stopped: {reason}")]
    SyncTask { url: String, reason: String },
}

/// Whether a data-root argument names object storage rather than a local directory.
pub fn is_remote(argument: &str) -> bool {
    ["s3://", "gs://", "az://", "abfs://", "abfss://", "file://"]
        .iter()
        .any(|scheme| argument.starts_with(scheme))
}

/// A URL as it may be shown: without a password, and without a user name except where it names an Azure
/// container (`abfss://container@account.dfs.core.windows.net/…`), which tells two containers' roots apart.
fn shown(url: &url::Url) -> String {
    let mut shown = url.clone();
    let names_a_container = matches!(url.scheme(), "az" | "abfs" | "abfss")
        && url.host_str().is_some_and(|host| host.contains('.'));
    if !names_a_container {
        let _ = shown.set_username("");
    }
    let _ = shown.set_password(None);
    shown.to_string().trim_end_matches('/').to_string()
}

/// What is known of one mirrored object: enough to tell whether the bucket's copy changed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Mirrored {
    bytes: u64,
    e_tag: Option<String>,
    modified_unix_ms: i64,
}

/// What one sync did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Objects under the prefix.
    pub objects: usize,
    pub bytes: u64,
    /// Objects fetched because they were new or changed.
    pub fetched: usize,
    pub fetched_bytes: u64,
    /// Files removed from the mirror because the bucket no longer has them.
    pub removed: usize,
    /// Objects left out because their key is not a plain relative path (`..`, empty parts).
    pub skipped: usize,
}

impl SyncReport {
    pub fn changed(&self) -> bool {
        self.fetched > 0 || self.removed > 0
    }
}

/// A remote data root and its local mirror.
pub struct Remote {
    /// The URL as shown to users.
    pub url: String,
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    /// `<cache>/remote/<hash of the URL>`: `tree/` (what the indexer reads), `state.json`, `incoming/`.
    dir: PathBuf,
    /// Held for the life of the mirror: two processes never write one mirror (a second gets its own).
    _lock: std::fs::File,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Remote")
            .field("url", &self.url)
            .field("dir", &self.dir)
            .finish()
    }
}

impl Remote {
    /// Opens `argument` (`s3://bucket/prefix`, …) with its mirror under `cache_dir/remote/`.
    pub fn open(argument: &str, cache_dir: &Path) -> Result<Remote, RemoteError> {
        let (url, store, prefix) = open_store(argument)?;
        let (dir, lock) = mirror_dir(cache_dir, &url)?;
        Ok(Remote {
            url,
            store,
            prefix,
            dir,
            _lock: lock,
        })
    }

    /// The local tree the indexer reads.
    pub fn tree(&self) -> PathBuf {
        self.dir.join("tree")
    }

    /// Brings the mirror in step with the bucket: lists the prefix, fetches new and changed objects, removes
    /// what is gone. Files change by rename, so a reader never sees half an object.
    pub async fn sync(&self) -> Result<SyncReport, RemoteError> {
        let mut listing = self.store.list(Some(&self.prefix));
        let mut objects = BTreeMap::new();
        let mut report = SyncReport::default();
        while let Some(meta) = listing.next().await {
            let meta = meta.map_err(|error| RemoteError::List {
                url: self.url.clone(),
                reason: reason(&error),
            })?;
            let Some(relative) = relative_key(&self.prefix, &meta.location) else {
                report.skipped += 1;
                continue;
            };
            report.objects += 1;
            report.bytes += meta.size;
            objects.insert(
                relative,
                (
                    meta.location,
                    Mirrored {
                        bytes: meta.size,
                        e_tag: meta.e_tag,
                        modified_unix_ms: meta.last_modified.timestamp_millis(),
                    },
                ),
            );
        }
        if objects.is_empty() {
            return Err(RemoteError::Empty {
                url: self.url.clone(),
            });
        }
        let state_path = self.dir.join("state.json");
        let mut state: BTreeMap<String, Mirrored> = std::fs::read(&state_path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        let tree = self.tree();
        let incoming = self.dir.join("incoming");
        create_dir(&incoming)?;
        let wanted: Vec<(String, ObjectPath, Mirrored)> = objects
            .iter()
            .filter(|(relative, (_, mirrored))| {
                state.get(*relative) != Some(mirrored)
                    || !std::fs::metadata(tree.join(relative.as_str()))
                        .is_ok_and(|metadata| metadata.len() == mirrored.bytes)
            })
            .map(|(relative, (location, mirrored))| {
                (relative.clone(), location.clone(), mirrored.clone())
            })
            .collect();
        let mut fetches = futures_util::stream::iter(wanted.into_iter().enumerate().map(
            |(number, (relative, location, mirrored))| {
                let store = Arc::clone(&self.store);
                let temporary = incoming.join(number.to_string());
                let target = tree.join(&relative);
                async move {
                    let bytes = store.get(&location).await?.bytes().await;
                    Ok::<_, object_store::Error>((relative, mirrored, bytes, temporary, target))
                }
            },
        ))
        .buffer_unordered(FETCHES_IN_FLIGHT);
        while let Some(fetched) = fetches.next().await {
            let (relative, mirrored, bytes, temporary, target) =
                fetched.map_err(|error| RemoteError::Fetch {
                    url: self.url.clone(),
                    reason: reason(&error),
                })?;
            let bytes = bytes.map_err(|error| RemoteError::Fetch {
                url: format!("{}/{relative}", self.url),
                reason: reason(&error),
            })?;
            place(&bytes, &temporary, &target, mirrored.modified_unix_ms)?;
            report.fetched += 1;
            report.fetched_bytes += bytes.len() as u64;
            state.insert(relative, mirrored);
        }
        // What the bucket no longer has leaves the mirror, so a deleted run disappears from the index too.
        let gone: Vec<String> = state
            .keys()
            .filter(|relative| !objects.contains_key(*relative))
            .cloned()
            .collect();
        for relative in gone {
            state.remove(&relative);
            if std::fs::remove_file(tree.join(&relative)).is_ok() {
                report.removed += 1;
            }
        }
        report.removed += remove_strays(&tree, "", &objects)?;
        let text = serde_json::to_vec(&state).unwrap_or_default();
        place(&text, &incoming.join("state"), &state_path, 0)?;
        Ok(report)
    }

    /// [`Remote::sync`] for a caller outside any async runtime (the one-shot commands).
    pub fn sync_blocking(&self) -> Result<SyncReport, RemoteError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|source| RemoteError::Mirror {
                path: self.dir.clone(),
                source,
            })?;
        runtime.block_on(self.sync())
    }
}

/// The per-run cache of read results in object storage (`--cache s3://bucket/prefix`), shared by replicas: one
/// object per entry, `<prefix>/runs/<key>.entry`. The cache's callers are synchronous (indexing threads), so the
/// store drives its requests on a small runtime of its own. Entries are checked by their reader before use, so a
/// lost or damaged object costs a re-read, never a wrong index. cellscope does not prune a bucket cache: a
/// lifecycle rule on the prefix bounds it.
pub struct ObjectCacheStore {
    url: String,
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    runtime: tokio::runtime::Runtime,
}

impl ObjectCacheStore {
    pub fn open(argument: &str) -> Result<ObjectCacheStore, RemoteError> {
        let (url, store, prefix) = open_store(argument)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("cellscope-cache-io")
            .enable_all()
            .build()
            .map_err(|source| RemoteError::Mirror {
                path: PathBuf::from(&url),
                source,
            })?;
        Ok(ObjectCacheStore {
            url,
            store,
            prefix: prefix.join("runs"),
            runtime,
        })
    }

    fn location(&self, key: &str) -> std::io::Result<ObjectPath> {
        if !cellscope_index::cache::store::is_key(key) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{key:?} is not a cache key"),
            ));
        }
        Ok(self.prefix.clone().join(format!("{key}.entry").as_str()))
    }
}

impl cellscope_index::cache::CacheStore for ObjectCacheStore {
    fn get(&self, key: &str) -> std::io::Result<Option<Vec<u8>>> {
        let location = self.location(key)?;
        self.runtime.block_on(async {
            match self.store.get(&location).await {
                Ok(got) => got
                    .bytes()
                    .await
                    .map(|bytes| Some(bytes.to_vec()))
                    .map_err(std::io::Error::other),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(error) => Err(std::io::Error::other(error)),
            }
        })
    }

    fn put(&self, key: &str, bytes: &[u8]) -> std::io::Result<()> {
        let location = self.location(key)?;
        // An object store's put replaces the object whole: a reader sees the old entry or the new one.
        self.runtime.block_on(async {
            self.store
                .put(&location, bytes::Bytes::copy_from_slice(bytes).into())
                .await
                .map(drop)
                .map_err(std::io::Error::other)
        })
    }

    fn describe(&self) -> String {
        format!("{}/runs", self.url)
    }
}

/// The store a URL names, its prefix, and the URL as it may be shown.
fn open_store(argument: &str) -> Result<(String, Arc<dyn ObjectStore>, ObjectPath), RemoteError> {
    let parsed = url::Url::parse(argument).map_err(|error| RemoteError::Url {
        url: argument.to_string(),
        message: error.to_string(),
    })?;
    let url = shown(&parsed);
    let refused = |message: String| RemoteError::Url {
        url: url.clone(),
        message,
    };
    fn shared(store: impl ObjectStore) -> Arc<dyn ObjectStore> {
        Arc::new(store)
    }
    // A cloud store: the builder's result, and the key prefix the URL's path names.
    let cloud = |built: Result<Arc<dyn ObjectStore>, object_store::Error>| {
        Ok::<_, RemoteError>((
            built.map_err(|error| refused(error.to_string()))?,
            url_prefix(&parsed).map_err(&refused)?,
        ))
    };
    let (store, prefix): (Arc<dyn ObjectStore>, ObjectPath) = match parsed.scheme() {
        "s3" => cloud(
            object_store::aws::AmazonS3Builder::from_env()
                .with_url(argument)
                .build()
                .map(shared),
        )?,
        "gs" => cloud(
            object_store::gcp::GoogleCloudStorageBuilder::from_env()
                .with_url(argument)
                .build()
                .map(shared),
        )?,
        "az" | "abfs" | "abfss" => cloud(
            object_store::azure::MicrosoftAzureBuilder::from_env()
                .with_url(argument)
                .build()
                .map(shared),
        )?,
        "file" => {
            let path = parsed
                .to_file_path()
                .map_err(|()| refused("not an absolute local path".to_string()))?;
            (
                Arc::new(
                    object_store::local::LocalFileSystem::new_with_prefix(&path)
                        .map_err(|error| refused(error.to_string()))?,
                ),
                ObjectPath::default(),
            )
        }
        other => return Err(refused(format!("unknown scheme {other}://"))),
    };
    Ok((url, store, prefix))
}

/// One line on why a request failed. object_store's messages repeat their whole chain of causes, each with the
/// request URL and the response body; the user needs the innermost cause, and for a cloud's XML error its code
/// and message ("NoSuchBucket: The specified bucket does not exist").
fn reason(error: &object_store::Error) -> String {
    let mut innermost: &dyn std::error::Error = error;
    while let Some(source) = innermost.source() {
        innermost = source;
    }
    let text = innermost.to_string();
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let start = text.find(&open)? + open.len();
        let end = start + text[start..].find(&format!("</{name}>"))?;
        Some(text[start..end].to_string())
    };
    let status = text
        .split_once("status code: ")
        .map(|(_, rest)| rest.split(':').next().unwrap_or(rest).trim().to_string());
    match (tag("Code"), tag("Message"), status) {
        (Some(code), Some(message), Some(status)) => format!("{status}: {code}: {message}"),
        (Some(code), Some(message), None) => format!("{code}: {message}"),
        (Some(code), None, _) => code,
        (None, _, Some(status)) => status,
        _ => text.lines().next().unwrap_or_default().to_string(),
    }
}

/// The key prefix a URL names: the path after the bucket or container.
fn url_prefix(url: &url::Url) -> Result<ObjectPath, String> {
    ObjectPath::from_url_path(url.path()).map_err(|error| error.to_string())
}

/// An object's key relative to the prefix, when every part is a plain name. Directory markers (keys ending in
/// `/`) and keys with `.`/`..` parts or backslashes are left out: a key cannot reach outside the mirror.
fn relative_key(prefix: &ObjectPath, location: &ObjectPath) -> Option<String> {
    let parts: Vec<String> = location
        .prefix_match(prefix)?
        .map(|part| part.as_ref().to_string())
        .collect();
    let plain = !parts.is_empty()
        && parts.iter().all(|part| {
            !part.is_empty() && part != "." && part != ".." && !part.contains(['\\', '/'])
        });
    plain.then(|| parts.join("/"))
}

fn create_dir(dir: &Path) -> Result<(), RemoteError> {
    std::fs::create_dir_all(dir).map_err(|source| RemoteError::Mirror {
        path: dir.to_path_buf(),
        source,
    })
}

/// Writes `bytes` to `temporary`, dates it, and renames it over `target`.
fn place(
    bytes: &[u8],
    temporary: &Path,
    target: &Path,
    modified_unix_ms: i64,
) -> Result<(), RemoteError> {
    let failed = |source| RemoteError::Mirror {
        path: target.to_path_buf(),
        source,
    };
    if let Some(parent) = target.parent() {
        create_dir(parent)?;
    }
    let file = std::fs::File::create(temporary).map_err(failed)?;
    std::io::Write::write_all(&mut &file, bytes).map_err(failed)?;
    if modified_unix_ms > 0 {
        let modified = SystemTime::UNIX_EPOCH + Duration::from_millis(modified_unix_ms as u64);
        file.set_modified(modified).map_err(failed)?;
    }
    drop(file);
    std::fs::rename(temporary, target).map_err(failed)
}

/// Removes files of the tree that are not objects (left by an interrupted earlier mirror) and then empty
/// directories; returns how many files went.
fn remove_strays(
    tree: &Path,
    relative: &str,
    objects: &BTreeMap<String, (ObjectPath, Mirrored)>,
) -> Result<usize, RemoteError> {
    let dir = if relative.is_empty() {
        tree.to_path_buf()
    } else {
        tree.join(relative)
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(0);
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = if relative.is_empty() {
            name
        } else {
            format!("{relative}/{name}")
        };
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            removed += remove_strays(tree, &child, objects)?;
            // Fails while the directory still holds something, which is what should stay.
            let _ = std::fs::remove_dir(entry.path());
        } else if !objects.contains_key(&child) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

/// The mirror directory of `url`, locked for this process. A second process on the same URL and cache gets a
/// numbered sibling rather than writing the first one's files under it.
fn mirror_dir(cache_dir: &Path, url: &str) -> Result<(PathBuf, std::fs::File), RemoteError> {
    let hash = cellscope_index::hex::short_sha256(url.as_bytes());
    for attempt in 0..16 {
        let dir = cache_dir.join("remote").join(if attempt == 0 {
            hash.clone()
        } else {
            format!("{hash}-{attempt}")
        });
        create_dir(&dir)?;
        let lock_path = dir.join("lock");
        let lock = std::fs::File::create(&lock_path).map_err(|source| RemoteError::Mirror {
            path: lock_path.clone(),
            source,
        })?;
        if lock.try_lock().is_ok() {
            return Ok((dir, lock));
        }
    }
    Err(RemoteError::Mirror {
        path: cache_dir.join("remote"),
        source: std::io::Error::other("every mirror directory of this URL is in use"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_could_leave_the_mirror_are_left_out() {
        let prefix = ObjectPath::from("sweeps/tr164");
        let inside = ObjectPath::from("sweeps/tr164/run-1/metrics.csv");
        assert_eq!(
            relative_key(&prefix, &inside).as_deref(),
            Some("run-1/metrics.csv")
        );
        assert_eq!(
            relative_key(&prefix, &ObjectPath::from("other/run-1/metrics.csv")),
            None
        );
        // The prefix itself (a directory marker) is not a file of the tree.
        assert_eq!(relative_key(&prefix, &prefix), None);
    }

    #[test]
    fn urls_are_shown_without_credentials() {
        let url = url::Url::parse("s3://key:secret@bucket/prefix/").unwrap();
        assert_eq!(shown(&url), "s3://bucket/prefix");
        let url = url::Url::parse("gs://key:secret@bucket/prefix").unwrap();
        assert_eq!(shown(&url), "gs://bucket/prefix");
        // Before an Azure account's host the user part is the container: kept, so two containers differ.
        let url = url::Url::parse("abfss://runs:secret@acct.dfs.core.windows.net/sweeps/").unwrap();
        assert_eq!(shown(&url), "abfss://runs@acct.dfs.core.windows.net/sweeps");
        let other = url::Url::parse("abfss://logs@acct.dfs.core.windows.net/sweeps").unwrap();
        assert_ne!(shown(&other), shown(&url));
        let url = url::Url::parse("az://user:secret@container/prefix").unwrap();
        assert_eq!(shown(&url), "az://container/prefix");
    }

    #[test]
    fn a_cloud_error_is_said_in_one_line() {
        let body = "Error performing GET http://127.0.0.1:1/nobucket?list-type=2 in 35ms - Server returned non-2xx \
                    status code: 404 Not Found: <?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code>\
                    <Message>The specified bucket does not exist</Message><RequestId>X</RequestId></Error>";
        let error = object_store::Error::Generic {
            store: "S3",
            source: Box::new(std::io::Error::other(body)),
        };
        assert_eq!(
            reason(&error),
            "404 Not Found: NoSuchBucket: The specified bucket does not exist"
        );
        let refused = object_store::Error::Generic {
            store: "S3",
            source: Box::new(std::io::Error::other("Connection refused (os error 111)")),
        };
        assert_eq!(reason(&refused), "Connection refused (os error 111)");
    }

    #[test]
    fn remote_arguments_are_told_from_paths() {
        assert!(is_remote("s3://bucket/prefix"));
        assert!(is_remote("gs://bucket"));
        assert!(is_remote("az://container/runs"));
        assert!(is_remote("file:///srv/sweeps"));
        assert!(!is_remote("data/demo"));
        assert!(!is_remote("./s3:/x"));
    }

    #[test]
    fn a_file_url_mirrors_the_directory_and_follows_changes() {
        let source = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(source.path().join("run-a")).unwrap();
        std::fs::write(source.path().join("run-a/metrics.csv"), "a,b\n1,2\n").unwrap();
        std::fs::write(source.path().join("run-a/manifest.json"), "{}").unwrap();
        let url = url::Url::from_directory_path(source.path()).unwrap();
        let remote = Remote::open(url.as_str(), cache.path()).unwrap();
        let first = remote.sync_blocking().unwrap();
        assert_eq!((first.objects, first.fetched, first.removed), (2, 2, 0));
        assert_eq!(
            std::fs::read_to_string(remote.tree().join("run-a/metrics.csv")).unwrap(),
            "a,b\n1,2\n"
        );
        // Nothing changed: nothing fetched.
        let second = remote.sync_blocking().unwrap();
        assert_eq!((second.fetched, second.removed), (0, 0));
        assert!(!second.changed());
        // One file changes, one goes: exactly those reach the mirror.
        std::fs::write(source.path().join("run-a/metrics.csv"), "a,b\n1,2\n3,4\n").unwrap();
        std::fs::remove_file(source.path().join("run-a/manifest.json")).unwrap();
        let third = remote.sync_blocking().unwrap();
        assert_eq!((third.objects, third.fetched, third.removed), (1, 1, 1));
        assert!(!remote.tree().join("run-a/manifest.json").exists());
        assert_eq!(
            std::fs::read_to_string(remote.tree().join("run-a/metrics.csv")).unwrap(),
            "a,b\n1,2\n3,4\n"
        );
        // A second process on the same URL and cache gets a mirror of its own.
        let other = Remote::open(url.as_str(), cache.path()).unwrap();
        assert_ne!(other.tree(), remote.tree());
    }
}

//! The cache of per-run read results, which makes a restart on unchanged data fast (a warm start).
//!
//! Reading a run (parsing its metrics.csv or another tool's files, its side files) and comparing a backup with
//! its master are the expensive parts of indexing, and each depends only on its own files. So each result is
//! kept as one entry, keyed by what decides it: the code that read it (the cellscope version and a hash of the
//! indexer's sources, see build.rs), the format, the run's place and files relative to the data root,
//! `cellscope.toml` for the formats that read it, and the size and modification time of every file the read
//! opened (an absent side file counts as absent). Lineage, ledger and assembly still run on every index: they are
//! cheap and relate runs to each other.
//!
//! An entry is trusted in one of two ways ([`Trust`]). By stamps, when size and modification time match: the
//! first snapshot of `serve` and `index --cells-only`, which must be quick. By contents, when in addition the
//! sha256 of every file equals the one the entry was built from: every full index (the server's second stage,
//! `audit`, `index`) and the one-shot commands. An entry whose files changed without a change of size or time is
//! dropped with a `stale_cache_entry` warning naming run and file, and the run is read again; one whose file cannot
//! be read now is dropped without it, as the run's read names the file (`unreadable_file`, `not_a_file`) and
//! nothing says its content changed; an entry that cannot be read or decoded is logged and ignored. Entries are
//! written only by full reads (with checksums) of files that could all be read, so each carries what any kind of
//! index needs; a lighter index leaves out what it would not have computed, so a warm index equals a cold one byte
//! for byte.
//!
//! Keys and entries hold no absolute path, so replicas serving the same data from different places can share a
//! store; the store is the narrow [`CacheStore`] seam (get and put of bytes by key).

pub mod store;
mod wire;

pub use store::{CacheStore, DirectoryStore};

use crate::run::found::DetectedRun;
use crate::run::{BackupRead, Inputs, ReadContext, RunRead};
use crate::storage::{self, Storage};
use cellscope_model::api::{EnvironmentField, FileDigest, Warning};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::UNIX_EPOCH;

/// A hash of the code that reads run files (its sources, the model's and the locked dependencies): read results
/// cached by a build with another hash are not used.
pub const READ_CODE: &str = env!("CELLSCOPE_READ_CODE");

/// Bumped when the entry layout changes in a way the source hash would not show (it changes with every source
/// file of the indexer and the model, so in practice this stays).
const SCHEMA: u32 = 3;
/// The first bytes of every entry.
const MAGIC: &[u8; 8] = b"cscache1";
/// Entries kept in a directory store by default: a warm start of 100 runs and 10 million rows needs about
/// 60 MB, so this holds several such data roots.
pub const DEFAULT_MAX_BYTES: u64 = 1024 * 1024 * 1024;

/// How far an index trusts a cache entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Sizes and modification times match: used without reading the files.
    Stamps,
    /// The files' sha256 also match the entry's: the files are read and hashed, not parsed.
    Contents,
}

/// A cache of read results over a [`CacheStore`].
pub struct RunCache {
    store: Box<dyn CacheStore>,
}

impl RunCache {
    pub fn new(store: Box<dyn CacheStore>) -> RunCache {
        RunCache { store }
    }

    /// A cache in a local directory, bounded by [`DEFAULT_MAX_BYTES`].
    pub fn in_directory(dir: PathBuf) -> RunCache {
        RunCache::new(Box::new(DirectoryStore::new(dir, DEFAULT_MAX_BYTES)))
    }

    pub fn describe(&self) -> String {
        self.store.describe()
    }
}

/// What one index did with the cache.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheReport {
    /// Runs and backups taken from the cache.
    pub used: u32,
    /// Runs and backups read from their files (no entry for their stamps, or the entry was not usable).
    pub read: u32,
    /// Entries written.
    pub written: u32,
    /// Entries dropped because a file's content no longer matched (each also a `stale_cache_entry` warning).
    pub stale: u32,
    /// Entries that could not be read or decoded, each with the reason; their runs were read from the files.
    pub unreadable: Vec<String>,
}

/// Size and modification time of one input file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    bytes: u64,
    modified_ns: u64,
}

/// Every input file of one read: its path relative to the data root and its stamp, `None` when absent.
type Stamped = Vec<(String, Option<Stamp>)>;

/// What a key is a hash of.
#[derive(Serialize)]
struct KeyMaterial<'a> {
    schema: u32,
    version: &'a str,
    code: &'a str,
    /// `run` or `backup`.
    kind: &'a str,
    format: &'a str,
    root: &'a str,
    files: &'a [String],
    id: Option<&'a str>,
    /// sha256 of `cellscope.toml`, for the reads that depend on it.
    mapping: Option<[u8; 32]>,
    inputs: &'a Stamped,
}

/// A file or directory a format's read looked at besides the run's own files (a summary's per-request file
/// beside it, a directory listed for it), as it was then: the entry is used only while each is still so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Companion {
    /// A file read or stat-ed, with its stamp (`None`: it was not there).
    File { path: String, stamp: Option<Stamp> },
    /// A directory listed, with a sha256 of its entries' names, kinds, sizes and modification times.
    Listing { path: String, fingerprint: [u8; 32] },
}

/// One run's read, as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RunEntry {
    /// sha256 of each input file that was present (companion files included).
    hashes: Vec<(String, [u8; 32])>,
    companions: Vec<Companion>,
    run_id: String,
    rows_file: String,
    metrics: Result<wire::Metrics, wire::Rejected>,
    digest: FileDigest,
    manifest: Option<wire::ManifestEntry>,
    plan: Option<wire::PlanEntry>,
    note: Option<wire::NoteEntry>,
    environment: BTreeMap<EnvironmentField, String>,
    started: Option<wire::StartEntry>,
    warnings: Vec<Warning>,
}

/// One backup's read and comparison with its master, as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct BackupEntry {
    hashes: Vec<(String, [u8; 32])>,
    digest: FileDigest,
    diff: Option<Result<wire::Splice, String>>,
    parsed: Option<wire::Metrics>,
}

/// Why an entry was not usable.
#[derive(Debug, thiserror::Error)]
enum EntryError {
    #[error("cannot read it: {0}")]
    Store(#[from] std::io::Error),
    #[error("it is not a cache entry of this layout")]
    Header,
    #[error("its checksum does not match its content (a damaged or partly written file)")]
    Checksum,
    #[error("it cannot be decoded: {0}")]
    Decode(#[from] postcard::Error),
    #[error("it has {0} bytes after its end")]
    Trailing(usize),
}

/// `MAGIC`, the key, the sha256 of the payload, the payload.
fn encode<T: Serialize>(key: &str, value: &T) -> Result<Vec<u8>, postcard::Error> {
    let payload = postcard::to_stdvec(value)?;
    let mut bytes = Vec::with_capacity(MAGIC.len() + key.len() + 32 + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(key.as_bytes());
    bytes.extend_from_slice(&sha2::Sha256::digest(&payload));
    bytes.extend_from_slice(&payload);
    Ok(bytes)
}

fn decode<T: for<'de> Deserialize<'de>>(key: &str, bytes: &[u8]) -> Result<T, EntryError> {
    let header = MAGIC.len() + key.len();
    if bytes.len() < header + 32
        || &bytes[..MAGIC.len()] != MAGIC
        || &bytes[MAGIC.len()..header] != key.as_bytes()
    {
        return Err(EntryError::Header);
    }
    let (checksum, payload) = bytes[header..].split_at(32);
    if sha2::Sha256::digest(payload).as_slice() != checksum {
        return Err(EntryError::Checksum);
    }
    let (value, rest) = postcard::take_from_bytes(payload)?;
    if !rest.is_empty() {
        return Err(EntryError::Trailing(rest.len()));
    }
    Ok(value)
}

fn stamp_of(meta: &storage::Meta) -> Option<Stamp> {
    let modified = meta.modified?.duration_since(UNIX_EPOCH).ok()?;
    Some(Stamp {
        bytes: meta.bytes,
        modified_ns: u64::try_from(modified.as_nanos()).ok()?,
    })
}

fn hex_to_bytes(text: &str) -> Option<[u8; 32]> {
    let mut bytes = [0u8; 32];
    if text.len() != 64 {
        return None;
    }
    for (index, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(index * 2..index * 2 + 2)?, 16).ok()?;
    }
    Some(bytes)
}

/// One format's read of a run or backup as the cache sees it: the format's name, what the read depends on, and the
/// read itself, which the read stage hands down so that the cache calls no format of its own accord.
pub(crate) struct Reading<'r, T> {
    pub format: &'static str,
    pub inputs: Inputs,
    pub read: &'r dyn Fn(&ReadContext<'_>) -> T,
}

/// The cache as one index uses it: the trust it gives entries, the files it has hashed, what it did.
pub(crate) struct Session<'a> {
    cache: &'a RunCache,
    trust: Trust,
    mapping: Option<[u8; 32]>,
    /// sha256 of files already hashed by this index (a master's metrics.csv is an input of its run and its backup).
    hashed: Mutex<HashMap<String, Option<[u8; 32]>>>,
    report: Mutex<CacheReport>,
    warnings: Mutex<Vec<Warning>>,
    /// Keys used or written, which pruning spares.
    keys: Mutex<Vec<String>>,
}

impl<'a> Session<'a> {
    pub(crate) fn new(
        cache: &'a RunCache,
        trust: Trust,
        mapping_text: Option<&str>,
    ) -> Session<'a> {
        Session {
            cache,
            trust,
            mapping: mapping_text.map(|text| sha2::Sha256::digest(text.as_bytes()).into()),
            hashed: Mutex::default(),
            report: Mutex::default(),
            warnings: Mutex::default(),
            keys: Mutex::default(),
        }
    }

    /// What this index did with the cache, and the `stale_cache_entry` warnings. Prunes the store when entries
    /// were written (a failure only costs disk space, so it is logged).
    pub(crate) fn finish(self) -> (CacheReport, Vec<Warning>) {
        let report = self
            .report
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner());
        let keys = self
            .keys
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner());
        if report.written > 0
            && let Err(error) = self.cache.store.prune(&keys)
        {
            tracing::warn!(%error, cache = %self.cache.describe(), "cannot prune the cache");
        }
        let warnings = self
            .warnings
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner());
        (report, warnings)
    }

    fn count(&self, change: impl FnOnce(&mut CacheReport)) {
        if let Ok(mut report) = self.report.lock() {
            change(&mut report);
        }
    }

    fn remember(&self, key: &str) {
        if let Ok(mut keys) = self.keys.lock() {
            keys.push(key.to_string());
        }
    }

    fn key(&self, material: &KeyMaterial<'_>) -> Option<String> {
        let bytes = postcard::to_stdvec(material).ok()?;
        Some(crate::hex::hex(&sha2::Sha256::digest(&bytes)))
    }

    /// The entry under `key`, when there is one that decodes; an unusable one is logged and counted.
    fn get<T: for<'de> Deserialize<'de>>(&self, key: &str, what: &str) -> Option<T> {
        let result = match self.cache.store.get(key) {
            Ok(None) => return None,
            Ok(Some(bytes)) => decode(key, &bytes),
            Err(error) => Err(EntryError::Store(error)),
        };
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                let message = format!("the cached read of {what} ({key}) is not used: {error}");
                tracing::warn!(cache = %self.cache.describe(), "{message}");
                self.count(|report| report.unreadable.push(message));
                None
            }
        }
    }

    fn put<T: Serialize>(&self, key: &str, value: &T, what: &str) {
        let written = encode(key, value)
            .map_err(|error| error.to_string())
            .and_then(|bytes| {
                self.cache
                    .store
                    .put(key, &bytes)
                    .map_err(|error| error.to_string())
            });
        match written {
            Ok(()) => {
                self.count(|report| report.written += 1);
                self.remember(key);
            }
            Err(error) => {
                tracing::warn!(%error, cache = %self.cache.describe(), "cannot cache the read of {what}");
            }
        }
    }

    /// sha256 of a file of the data root, once per index.
    fn sha256(&self, storage: &dyn Storage, file: &str) -> Option<[u8; 32]> {
        if let Some(known) = self
            .hashed
            .lock()
            .ok()
            .and_then(|hashed| hashed.get(file).copied())
        {
            return known;
        }
        let hash = storage
            .read(file)
            .ok()
            .map(|bytes| sha2::Sha256::digest(&bytes).into());
        if let Ok(mut hashed) = self.hashed.lock() {
            hashed.insert(file.to_string(), hash);
        }
        hash
    }

    fn knows_sha256(&self, file: &str, hash: [u8; 32]) {
        if let Ok(mut hashed) = self.hashed.lock() {
            hashed.insert(file.to_string(), Some(hash));
        }
    }

    /// Whether an entry may be used: always by stamps; by contents when every file still has the sha256 the entry
    /// was built from. A file that does not is a `stale_cache_entry` warning on `run`; a file that cannot be read
    /// is not (nothing says its content changed), and the entry is not used either: reading the run again names
    /// the file as unreadable.
    fn trusted(&self, storage: &dyn Storage, hashes: &[(String, [u8; 32])], run: &str) -> bool {
        if self.trust == Trust::Stamps {
            return true;
        }
        for (file, hash) in hashes {
            let Some(now) = self.sha256(storage, file) else {
                tracing::debug!(run, %file, "a cached read's file cannot be read; reading the run again");
                return false;
            };
            if now != *hash {
                tracing::warn!(run, %file, "a cached read no longer matches its file; reading the run again");
                self.count(|report| report.stale += 1);
                if let Ok(mut warnings) = self.warnings.lock() {
                    warnings.push(
                        Warning::warn(
                            "stale_cache_entry",
                            "the file's content changed although its size and modification time did not; the \
                             cached read of this run was dropped and the run was read again from its files",
                        )
                        .run(run)
                        .file(file),
                    );
                }
                return false;
            }
        }
        true
    }

    /// sha256 of every present input, for a new entry; `None` when a file cannot be read.
    fn hashes_of(
        &self,
        storage: &dyn Storage,
        inputs: &Stamped,
    ) -> Option<Vec<(String, [u8; 32])>> {
        inputs
            .iter()
            .filter(|(_, stamp)| stamp.is_some())
            .map(|(file, _)| Some((file.clone(), self.sha256(storage, file)?)))
            .collect()
    }

    /// A run's read: its entry when one is trusted, else read from its files (and cached, after a full read).
    pub(crate) fn read_run(
        &self,
        context: &ReadContext<'_>,
        run: &DetectedRun,
        reading: Reading<'_, RunRead>,
    ) -> RunRead {
        let declared = &reading.inputs;
        let Some(inputs) = stamped(context.storage, &declared.files) else {
            return (reading.read)(context);
        };
        let material = KeyMaterial {
            schema: SCHEMA,
            version: env!("CARGO_PKG_VERSION"),
            code: READ_CODE,
            kind: "run",
            format: reading.format,
            root: &run.root,
            files: &run.files,
            id: run.id.as_deref(),
            mapping: if declared.mapping { self.mapping } else { None },
            inputs: &inputs,
        };
        let Some(key) = self.key(&material) else {
            return (reading.read)(context);
        };
        let what = format!("run `{}`", run.root);
        if let Some(entry) = self.get::<RunEntry>(&key, &what)
            && entry
                .companions
                .iter()
                .all(|companion| companion_now(context.storage, companion) == *companion)
            && self.trusted(context.storage, &entry.hashes, &entry.run_id)
        {
            self.count(|report| report.used += 1);
            self.remember(&key);
            return run_read(entry, context, reading.format, run);
        }
        // The read goes through the data root's storage, which notes what it opens beyond its declared inputs: a
        // summary's per-request file beside it, a directory listed for it; those become inputs of the entry too.
        let recording = Recording {
            inner: context.storage,
            files: Mutex::default(),
            directories: Mutex::default(),
        };
        let recorded = ReadContext {
            storage: &recording,
            mapping: context.mapping,
            options: context.options,
            progress: context.progress,
        };
        let read = (reading.read)(&recorded);
        self.count(|report| report.read += 1);
        if context.options.hashes {
            if let Some(hash) = read.digest.sha256.as_deref().and_then(hex_to_bytes) {
                self.knows_sha256(&read.digest.path, hash);
            }
            let own: Vec<String> = inputs.iter().map(|(path, _)| path.clone()).collect();
            let companions = recording.companions(&own);
            let companion_files: Stamped = companions
                .iter()
                .filter_map(|companion| match companion {
                    Companion::File { path, stamp } => Some((path.clone(), *stamp)),
                    Companion::Listing { .. } => None,
                })
                .collect();
            if let Some(mut hashes) = self.hashes_of(context.storage, &inputs)
                && let Some(companion_hashes) = self.hashes_of(context.storage, &companion_files)
                && stamped(context.storage, &declared.files).as_ref() == Some(&inputs)
            {
                hashes.extend(companion_hashes);
                let entry = RunEntry {
                    hashes,
                    companions,
                    run_id: read.id.clone(),
                    rows_file: read.rows_file.clone(),
                    metrics: read.metrics.clone().map(Into::into).map_err(Into::into),
                    digest: read.digest.clone(),
                    manifest: read.manifest.clone().map(Into::into),
                    plan: read.plan.clone().map(Into::into),
                    note: read.note.clone().map(Into::into),
                    environment: read.environment.clone(),
                    started: read.started.clone().map(Into::into),
                    warnings: read.warnings.clone(),
                };
                self.put(&key, &entry, &what);
            }
        }
        read
    }

    /// A backup's read and comparison with the run it is a backup of (`master`, when that was found): its entry
    /// when one is trusted, else read from the files (and cached, after a full read).
    pub(crate) fn read_backup(
        &self,
        context: &ReadContext<'_>,
        backup: &DetectedRun,
        master: Option<&DetectedRun>,
        reading: Reading<'_, BackupRead>,
    ) -> BackupRead {
        let options = context.options;
        // Neither checksums nor the comparison: nothing is read, so there is nothing to save.
        if !options.hashes && !options.backup_diff {
            return (reading.read)(context);
        }
        let declared = &reading.inputs;
        let Some(inputs) = stamped(context.storage, &declared.files) else {
            return (reading.read)(context);
        };
        let of = backup.backup_of.clone().unwrap_or_default();
        let files = [of.label.clone(), of.run.clone()];
        let material = KeyMaterial {
            schema: SCHEMA,
            version: env!("CARGO_PKG_VERSION"),
            code: READ_CODE,
            kind: "backup",
            format: reading.format,
            root: &backup.root,
            files: &files,
            id: master.map(|master| master.root.as_str()),
            mapping: if declared.mapping { self.mapping } else { None },
            inputs: &inputs,
        };
        let Some(key) = self.key(&material) else {
            return (reading.read)(context);
        };
        let what = format!("backup `{}`", backup.root);
        if let Some(entry) = self.get::<BackupEntry>(&key, &what)
            && self.trusted(context.storage, &entry.hashes, &of.run)
        {
            self.count(|report| report.used += 1);
            self.remember(&key);
            let mut digest = entry.digest;
            if !options.hashes {
                digest.md5 = None;
                digest.sha256 = None;
            }
            context.progress.file_done(digest.bytes);
            let (diff, parsed) = if options.backup_diff {
                (
                    entry.diff.map(|diff| diff.map(Into::into)),
                    entry.parsed.map(Into::into),
                )
            } else {
                (None, None)
            };
            return BackupRead {
                of: of.run,
                label: of.label,
                root: backup.root.clone(),
                digest,
                diff,
                parsed,
            };
        }
        let read = (reading.read)(context);
        self.count(|report| report.read += 1);
        if options.hashes && options.backup_diff {
            if let Some(hash) = read.digest.sha256.as_deref().and_then(hex_to_bytes) {
                self.knows_sha256(&read.digest.path, hash);
            }
            let unchanged = inputs
                .iter()
                .all(|(path, stamp)| stamp_at(context.storage, path) == *stamp);
            if let Some(hashes) = self.hashes_of(context.storage, &inputs)
                && unchanged
            {
                let entry = BackupEntry {
                    hashes,
                    digest: read.digest.clone(),
                    diff: read.diff.clone().map(|diff| diff.map(Into::into)),
                    parsed: read.parsed.clone().map(Into::into),
                };
                self.put(&key, &entry, &what);
            }
        }
        read
    }
}

/// A [`Storage`] that notes every path a read opens, stats or lists, so that a format's companion files become
/// inputs of its run's entry like the run's own files.
struct Recording<'a> {
    inner: &'a dyn Storage,
    files: Mutex<std::collections::BTreeSet<String>>,
    directories: Mutex<std::collections::BTreeSet<String>>,
}

impl Recording<'_> {
    fn note(set: &Mutex<std::collections::BTreeSet<String>>, path: &str) {
        if let Ok(mut set) = set.lock() {
            set.insert(path.to_string());
        }
    }

    /// What the read looked at besides `own` files, as it is now.
    fn companions(&self, own: &[String]) -> Vec<Companion> {
        let taken = |set: &Mutex<std::collections::BTreeSet<String>>| {
            set.lock().map(|set| set.clone()).unwrap_or_default()
        };
        let files = taken(&self.files)
            .into_iter()
            .filter(|path| !own.contains(path))
            .map(|path| Companion::File { path, stamp: None });
        let directories = taken(&self.directories)
            .into_iter()
            .map(|path| Companion::Listing {
                path,
                fingerprint: [0; 32],
            });
        files
            .chain(directories)
            .map(|companion| companion_now(self.inner, &companion))
            .collect()
    }
}

impl Storage for Recording<'_> {
    fn list(&self, directory: &str) -> std::io::Result<Vec<storage::Entry>> {
        Recording::note(&self.directories, directory);
        self.inner.list(directory)
    }
    fn stat(&self, path: &str) -> std::io::Result<storage::Meta> {
        Recording::note(&self.files, path);
        self.inner.stat(path)
    }
    fn read(&self, path: &str) -> std::io::Result<Vec<u8>> {
        Recording::note(&self.files, path);
        self.inner.read(path)
    }
    fn read_range(&self, path: &str, range: std::ops::Range<u64>) -> std::io::Result<Vec<u8>> {
        Recording::note(&self.files, path);
        self.inner.read_range(path, range)
    }
    fn display(&self, path: &str) -> String {
        self.inner.display(path)
    }
    fn read_into(&self, path: &str, buffer: &mut Vec<u8>) -> std::io::Result<()> {
        Recording::note(&self.files, path);
        self.inner.read_into(path, buffer)
    }
    fn local_file(&self, path: &str) -> Option<std::io::Result<std::fs::File>> {
        Recording::note(&self.files, path);
        self.inner.local_file(path)
    }
}

/// `companion` as it is now on `storage` (same path, current stamp or listing).
fn companion_now(storage: &dyn Storage, companion: &Companion) -> Companion {
    match companion {
        Companion::File { path, .. } => Companion::File {
            path: path.clone(),
            stamp: stamp_at(storage, path),
        },
        Companion::Listing { path, .. } => {
            let mut hasher = sha2::Sha256::new();
            for entry in storage.list(path).unwrap_or_default() {
                hasher.update(entry.name.as_bytes());
                hasher.update([0, entry.kind as u8]);
                hasher.update(entry.bytes.to_le_bytes());
                let modified = entry
                    .modified
                    .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |since| since.as_nanos());
                hasher.update(modified.to_le_bytes());
            }
            Companion::Listing {
                path: path.clone(),
                fingerprint: hasher.finalize().into(),
            }
        }
    }
}

/// The stamp of a file of the data root; `None` when it is not a regular file (or has no modification time).
fn stamp_at(storage: &dyn Storage, path: &str) -> Option<Stamp> {
    storage
        .stat(path)
        .ok()
        .filter(storage::Meta::is_file)
        .as_ref()
        .and_then(stamp_of)
}

/// Every input file with its stamp (`None` for one that is absent and not required); `None` when the read cannot be
/// cached (a required file that is not there, a file without a modification time).
fn stamped(storage: &dyn Storage, files: &[(String, bool)]) -> Option<Stamped> {
    files
        .iter()
        .map(|(path, required)| {
            let meta = storage.stat(path).ok().filter(storage::Meta::is_file);
            let stamp = match &meta {
                Some(meta) => Some(stamp_of(meta)?),
                None if *required => return None,
                None => None,
            };
            Some((path.clone(), stamp))
        })
        .collect()
}

/// A run's read from its entry, with what a read of this kind of index would have left out left out.
fn run_read(
    entry: RunEntry,
    context: &ReadContext<'_>,
    format: &'static str,
    run: &DetectedRun,
) -> RunRead {
    let mut digest = entry.digest;
    if !context.options.hashes {
        digest.md5 = None;
        digest.sha256 = None;
    }
    context.progress.file_done(digest.bytes);
    RunRead {
        id: entry.run_id,
        root: run.root.clone(),
        rows_file: entry.rows_file,
        metrics: entry.metrics.map(Into::into).map_err(Into::into),
        digest,
        manifest: entry.manifest.map(Into::into),
        plan: entry.plan.map(Into::into),
        note: entry.note.map(Into::into),
        files: Vec::new(),
        environment: entry.environment,
        started: entry.started.map(Into::into),
        warnings: entry.warnings,
        format,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::SpliceDiff;
    use crate::run::expected::Manifest;
    use crate::run::parsed::{ParsedCell, ParsedMetrics};
    use cellscope_model::key::CellCoordinates;

    /// The data root as it is, except that the named files cannot be read (their size and time unchanged), as
    /// with a file whose permissions were taken away.
    struct Unreadable<'a> {
        disk: &'a crate::storage::LocalDisk,
        files: &'a [&'a str],
    }

    impl Unreadable<'_> {
        fn check(&self, path: &str) -> std::io::Result<()> {
            if self.files.contains(&path) {
                return Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
            }
            Ok(())
        }
    }

    impl Storage for Unreadable<'_> {
        fn list(&self, directory: &str) -> std::io::Result<Vec<storage::Entry>> {
            self.disk.list(directory)
        }
        fn stat(&self, path: &str) -> std::io::Result<storage::Meta> {
            self.disk.stat(path)
        }
        fn read(&self, path: &str) -> std::io::Result<Vec<u8>> {
            self.check(path)?;
            self.disk.read(path)
        }
        fn read_range(&self, path: &str, range: std::ops::Range<u64>) -> std::io::Result<Vec<u8>> {
            self.check(path)?;
            self.disk.read_range(path, range)
        }
        fn display(&self, path: &str) -> String {
            path.to_string()
        }
        fn local_file(&self, path: &str) -> Option<std::io::Result<std::fs::File>> {
            match self.check(path) {
                Ok(()) => self.disk.local_file(path),
                Err(error) => Some(Err(error)),
            }
        }
    }

    #[test]
    fn a_file_that_cannot_be_read_is_named_unreadable_and_its_entry_is_not_called_stale() {
        // A run with a manifest, and a backup of it (the same rows) compared with it.
        let root = tempfile::tempdir().unwrap();
        let metrics = "run_id,suite,phase,backend,model,workload,n_agents,rep,agent_id,request_id,\
                       request_sequence,wall_ms,prompt_tokens,completion_tokens,submit_time_s,complete_time_s,status\n\
                       r1,s,scaling,b,m,w,1,0,1,1,1,100.0,10,10,1.0,2.0,ok\n";
        for directory in ["r1", "r1_BACKUP_x"] {
            std::fs::create_dir(root.path().join(directory)).unwrap();
            std::fs::write(root.path().join(directory).join("metrics.csv"), metrics).unwrap();
        }
        std::fs::write(root.path().join("r1/manifest.json"), "{}").unwrap();
        let disk = crate::storage::LocalDisk::new(root.path());
        let store = tempfile::tempdir().unwrap();
        let cache = RunCache::in_directory(store.path().to_path_buf());
        // The run and its backup as discovery finds them, each read through its format.
        let found = crate::discover::discover(&disk, &crate::formats::Registry).runs;
        let [run, backup] = [&found[0], &found[1]];
        assert_eq!(
            (run.root.as_str(), backup.root.as_str()),
            ("r1", "r1_BACKUP_x")
        );
        let format = crate::formats::by_name(run.format).unwrap();
        let options = crate::run::IndexOptions::default();
        let mapping = crate::mapping::Mapping::default();
        // A full index's reads of the run and the backup through `storage`, with what the cache did and said.
        let read = |storage: &dyn Storage| {
            let session = Session::new(&cache, Trust::Contents, None);
            let context = ReadContext {
                storage,
                mapping: &mapping,
                options: &options,
                progress: &crate::run::Quiet,
            };
            let read = session.read_run(
                &context,
                run,
                Reading {
                    format: format.name(),
                    inputs: format.inputs(run, None),
                    read: &|context| format.read_run(context, run),
                },
            );
            let backup = session.read_backup(
                &context,
                backup,
                Some(run),
                Reading {
                    format: format.name(),
                    inputs: format.inputs(backup, Some(run)),
                    read: &|context| format.read_backup(context, backup, Some(run)),
                },
            );
            let (report, warnings) = session.finish();
            (read, backup, report, warnings)
        };
        let (first, _, report, _) = read(&disk);
        assert!(first.warnings.is_empty(), "{:?}", first.warnings);
        assert_eq!((report.read, report.written), (2, 2));
        for file in [
            "r1/metrics.csv",
            "r1/manifest.json",
            "r1_BACKUP_x/metrics.csv",
        ] {
            let files = [file];
            let unreadable = Unreadable {
                disk: &disk,
                files: &files,
            };
            let (read, backup, report, cache_warnings) = read(&unreadable);
            assert!(cache_warnings.is_empty(), "{file}: {cache_warnings:?}");
            // What reads the unreadable file is read again (the backup's comparison reads the master's metrics
            // too), and no read that failed is kept.
            let again: u32 = if file == "r1/metrics.csv" { 2 } else { 1 };
            assert_eq!(
                (report.used, report.read, report.stale, report.written),
                (2 - again, again, 0, 0),
                "{file}"
            );
            let named: Vec<(&str, Option<&str>)> = read
                .warnings
                .iter()
                .map(|warning| (warning.kind.as_str(), warning.file.as_deref()))
                .collect();
            if file.starts_with("r1/") {
                assert_eq!(named, vec![("unreadable_file", Some(file))], "{file}");
            }
            // No checksum is claimed for a file that was not read.
            for digest in [&read.digest, &backup.digest] {
                assert_eq!(digest.sha256.is_none(), digest.path == file, "{file}");
            }
        }
        // Readable again, the entries the first reads wrote are used: none was dropped or replaced.
        let (_, _, report, warnings) = read(&disk);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!((report.used, report.read, report.stale), (2, 0, 0));
    }

    #[test]
    fn an_entry_comes_back_exactly_and_a_damaged_one_is_refused() {
        let key = "ab".repeat(32);
        let entry = BackupEntry {
            hashes: vec![("r/metrics.csv".into(), [7; 32])],
            digest: FileDigest {
                path: "r_BACKUP_x/metrics.csv".into(),
                bytes: 12,
                md5: Some("m".into()),
                sha256: None,
            },
            diff: Some(Err("cannot read".into())),
            parsed: Some(
                ParsedMetrics {
                    records: 3,
                    ..ParsedMetrics::default()
                }
                .into(),
            ),
        };
        let bytes = encode(&key, &entry).unwrap();
        let back: BackupEntry = decode(&key, &bytes).unwrap();
        assert_eq!(back.hashes, entry.hashes);
        assert_eq!(back.digest, entry.digest);
        let diff = |diff: Option<Result<wire::Splice, String>>| {
            diff.map(|diff| diff.map(SpliceDiff::from))
        };
        assert_eq!(diff(back.diff), diff(entry.diff.clone()));
        assert_eq!(
            back.parsed
                .map(|parsed| ParsedMetrics::from(parsed).records),
            Some(3)
        );
        // Another key's entry, a flipped bit, a truncation and garbage after the end are all refused.
        assert!(matches!(
            decode::<BackupEntry>(&"cd".repeat(32), &bytes),
            Err(EntryError::Header)
        ));
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(matches!(
            decode::<BackupEntry>(&key, &flipped),
            Err(EntryError::Checksum)
        ));
        assert!(decode::<BackupEntry>(&key, &bytes[..bytes.len() - 1]).is_err());
        assert!(decode::<BackupEntry>(&key, b"cscache1").is_err());
    }

    #[test]
    fn offsets_numbers_and_json_values_come_back_bit_for_bit() {
        let mut cell = ParsedCell {
            row_offsets: vec![120, 7_000_000_000, 5, u64::MAX, 0],
            ..Default::default()
        };
        cell.stats.p95_wall_ms = Some(0.1 + 0.2);
        cell.stats.mean_wall_ms = Some(f64::MIN_POSITIVE);
        let manifest = Manifest {
            environment: Some(
                serde_json::json!({"gpu": "L4", "memory_gb": 22.494_140_625, "n": 18_446_744_073_709_551_615u64}),
            ),
            ..Manifest::default()
        };
        let coordinates = CellCoordinates {
            suite: "s".into(),
            phase: "p".into(),
            backend: "b".into(),
            model: "m".into(),
            workload: "w".into(),
            config: Default::default(),
            load: cellscope_model::Load::Concurrency(1),
            rep: 0,
        };
        let parsed = ParsedMetrics {
            cells: vec![(coordinates, cell.clone())],
            ..ParsedMetrics::default()
        };
        let written = (
            wire::Metrics::from(parsed),
            wire::ManifestEntry::from(manifest.clone()),
        );
        let bytes = postcard::to_stdvec(&written).unwrap();
        let (back_parsed, back_manifest): (wire::Metrics, wire::ManifestEntry) =
            postcard::from_bytes(&bytes).unwrap();
        let back_cell = ParsedMetrics::from(back_parsed).cells.remove(0).1;
        let back_manifest = Manifest::from(back_manifest);
        assert_eq!(back_cell.row_offsets, cell.row_offsets);
        assert_eq!(back_cell.stats, cell.stats);
        assert_eq!(
            back_cell.stats.p95_wall_ms.map(f64::to_bits),
            Some((0.1f64 + 0.2).to_bits())
        );
        assert_eq!(back_manifest.environment, manifest.environment);
    }
}

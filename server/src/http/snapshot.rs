//! A snapshot: one immutable index plus the response bodies precomputed from it, identified by a content hash.
//! The server holds the current snapshot in an `ArcSwap`; a request loads it once and keeps it to the end.

use super::encoding::{Compressed, complete_zstd_level};
pub use super::encoding::{ENCODINGS, compress_all};
use crate::export::{self, Format};
use arc_swap::ArcSwap;
use axum::body::Bytes;
use cellscope_index::cache::{RunCache, Trust};
use cellscope_index::{Index, IndexOptions, Quiet};
use cellscope_model::api::{
    CellFailures, DimensionCount, ExclusionMatches, IndexBody, KeyedOrigin, ManifestHistory,
    Provenance, RefillProvenance, SkippedCell,
};
use cellscope_model::filter::dimension_counts;
use cellscope_model::key::Value;
use cellscope_model::reasons::skip_reason;
use cellscope_model::{CellStatus, Dimension};
use sha2::Digest as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::broadcast;

pub struct Snapshot {
    /// The data snapshot: a content hash of the cells table and the stage-1 facts (runs, ledger, provenance).
    /// Links pin it (`at=`) and the server announces it; equal data gives an equal id. The checksums and backup
    /// comparisons of the second indexing stage do not change it.
    pub id: String,
    /// The validator of every response: a hash of everything a body can depend on, the second stage and the
    /// time of indexing included, so a 304 never confirms a body that has changed.
    pub etag: String,
    /// The same without the time of indexing: equal when a re-index found nothing new.
    pub content: String,
    pub index: Index,
    pub indexed_at_unix_ms: u64,
    /// `/api/cells` without filters, Arrow IPC, encoded once.
    pub cells_arrow: Bytes,
    /// The same body compressed once per snapshot (zstd at once, brotli and gzip when first asked for).
    pub cells_arrow_compressed: Compressed,
    /// `/api/index`.
    pub index_json: Bytes,
    /// `/api/provenance`, computed once per snapshot (notes rendered and sanitised once).
    pub provenance_json: Bytes,
    /// Whether hashes and backup diffs are in (the second indexing stage).
    pub complete: bool,
    /// Filtered `/api/cells` bodies built for this snapshot, by normalised query (bounded in bytes).
    pub filtered_cells: super::bodies::Bodies,
    /// Every dimension's values, as `/api/index` lists them: what a filter value of `/api/cells` is checked
    /// against.
    pub dimension_values: BTreeMap<Dimension, Vec<Value>>,
}

pub(crate) fn render_markdown(text: &str) -> String {
    let parser = pulldown_cmark::Parser::new_ext(text, pulldown_cmark::Options::ENABLE_TABLES);
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, parser);
    ammonia::clean(&html)
}

/// The `/api/provenance` body of an index.
pub fn provenance(index: &Index, snapshot: &str) -> Provenance {
    let skipped = index
        .cells
        .iter()
        .filter(|cell| matches!(cell.status, CellStatus::Skipped | CellStatus::NotRun))
        .map(|cell| {
            let provenance = index.provenance.get(&cell.key);
            let history = provenance.map(|p| p.history.clone()).unwrap_or_default();
            SkippedCell {
                key: cell.key.clone(),
                status: cell.status,
                reason: skip_reason(cell.status, &history),
                manifest_status: provenance.and_then(|p| p.manifest_status.clone()),
                history,
            }
        })
        .collect();
    let refills = index
        .runs
        .iter()
        .filter_map(|run| {
            let refill = run.refill.as_ref()?;
            Some(RefillProvenance {
                run: run.run_id.clone(),
                path: run.path.clone(),
                refill_runs: refill.refill_runs.clone(),
                refilled_cells: refill.refilled_cells,
                refill_rows: refill.refill_rows,
                note_markdown: refill.note.clone(),
                note_html: refill.note.as_deref().map(render_markdown),
                backups: run.backups.clone(),
            })
        })
        .collect();
    let exclusions = index
        .exclusions
        .iter()
        .map(|entry| ExclusionMatches {
            entry: entry.clone(),
            matched: index
                .cells
                .iter()
                .filter(|cell| cell.excluded.contains(&entry.entry.id))
                .map(|cell| cell.key.clone())
                .collect(),
        })
        .collect();
    let manifest_histories = index
        .provenance
        .iter()
        .filter(|(_, provenance)| !provenance.history.is_empty())
        .map(|(key, provenance)| ManifestHistory {
            key: key.clone(),
            manifest_status: provenance.manifest_status.clone(),
            history: provenance.history.clone(),
        })
        .collect();
    let origins = index
        .provenance
        .iter()
        .filter_map(|(key, provenance)| {
            Some(KeyedOrigin {
                key: key.clone(),
                origin: provenance.origin.clone()?,
            })
        })
        .collect();
    // Cells with non-ok rows now or before a refill, in key order (both maps are sorted by key).
    let mut failures: Vec<CellFailures> = index
        .provenance
        .iter()
        .filter(|(_, provenance)| !provenance.failed_by_status.is_empty())
        .map(|(key, provenance)| CellFailures {
            key: key.clone(),
            failed_by_status: provenance.failed_by_status.clone(),
            pre_refill_failed_by_status: index
                .pre_refill_failed
                .get(key)
                .cloned()
                .unwrap_or_default(),
        })
        .collect();
    failures.extend(
        index
            .pre_refill_failed
            .iter()
            .filter(|(key, _)| {
                index
                    .provenance
                    .get(*key)
                    .is_none_or(|provenance| provenance.failed_by_status.is_empty())
            })
            .map(|(key, statuses)| CellFailures {
                key: key.clone(),
                failed_by_status: BTreeMap::new(),
                pre_refill_failed_by_status: statuses.clone(),
            }),
    );
    failures.sort_by(|left, right| left.key.cmp(&right.key));
    Provenance {
        snapshot: snapshot.to_string(),
        failures,
        origins,
        skipped,
        refills,
        exclusions,
        manifest_histories,
        warnings: index.warnings.clone(),
    }
}

impl Snapshot {
    pub fn new(index: Index, complete: bool) -> Result<Snapshot, String> {
        let indexed_at_unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis() as u64);
        // The parts below are independent of each other: computed two at a time (this runs on two cores), then
        // hashed in one fixed order, so the ids are the same as computing them one after the other.
        let ((cells_arrow, provenance_map_json), ((dimensions, mut provenance_body), etag_tail)) =
            rayon::join(
                || {
                    rayon::join(
                        || export::encode(&index.cells, Format::Arrow),
                        || json(&index.provenance.iter().collect::<Vec<_>>()),
                    )
                },
                || {
                    rayon::join(
                        || {
                            rayon::join(
                                || dimension_counts(&index.cells),
                                // The snapshot id is filled in once known.
                                || provenance(&index, ""),
                            )
                        },
                        || etag_tail(&index),
                    )
                },
            );
        // The cells table is what every client fetches: it and its compressed forms are sent without copying.
        let cells_arrow = super::zero_copy::sealed(cells_arrow.map_err(|error| error.to_string())?);
        let mut hasher = sha2::Sha256::new();
        hasher.update(&cells_arrow);
        // Run facts that do not depend on the second stage (hashes, backup diffs), so finishing that stage
        // does not announce a new snapshot unless it changed what is shown.
        for run in &index.runs {
            hasher.update(run.run_id.as_bytes());
            hasher.update(run.path.as_bytes());
            hasher.update(run.metrics.bytes.to_le_bytes());
            hasher.update(json(&run.census));
            if let Some(refill) = &run.refill {
                hasher.update(refill.note.as_deref().unwrap_or_default().as_bytes());
            }
        }
        hasher.update(json(&index.exclusions));
        hasher.update(provenance_map_json);
        let id = cellscope_index::hex::short_hex(&hasher.finalize());
        provenance_body.snapshot = id.clone();
        let dimension_values = cellscope_model::filter::dimension_values(&dimensions);
        let mut body = IndexBody {
            snapshot: id.clone(),
            complete,
            // Filled in below, after the content hash.
            indexed_at_unix_ms: 0,
            index_ms: 0.0,
            cells: index.cells.len(),
            runs: index.runs.clone(),
            exclusions: index.exclusions.clone(),
            warnings: index.warnings.clone(),
            dimensions: dimensions
                .into_iter()
                .map(|(dimension, counts)| {
                    let counts = counts
                        .into_iter()
                        .map(|(value, cells)| DimensionCount { value, cells })
                        .collect();
                    (dimension, counts)
                })
                .collect(),
        };
        let index_ms = index.elapsed.as_secs_f64() * 1e3;
        let ((untimed_index_json, index_json), (provenance_json, cells_arrow_compressed)) =
            rayon::join(
                || {
                    let untimed = serde_json::to_vec(&body);
                    body.indexed_at_unix_ms = indexed_at_unix_ms;
                    body.index_ms = index_ms;
                    (untimed, serde_json::to_vec(&body))
                },
                || {
                    (
                        serde_json::to_vec(&provenance_body),
                        // The first snapshot of a start favours time (zstd 3 takes half the time of 6 for a body
                        // 4% larger); the complete one that replaces it a moment later compresses harder.
                        Compressed::new(
                            cells_arrow.clone(),
                            if complete {
                                complete_zstd_level(cells_arrow.len())
                            } else {
                                3
                            },
                        ),
                    )
                },
            );
        let untimed_index_json = untimed_index_json.map_err(|error| error.to_string())?;
        let index_json = index_json.map_err(|error| error.to_string())?;
        let provenance_json = provenance_json.map_err(|error| error.to_string())?;
        // Everything any response is made from: the three precomputed bodies (the index body carries the
        // second stage and the warnings), the pre-refill cells and where each cell's rows are.
        let mut etag = sha2::Sha256::new();
        for part in [&cells_arrow[..], &untimed_index_json, &provenance_json] {
            etag.update((part.len() as u64).to_le_bytes());
            etag.update(part);
        }
        etag.update(etag_tail);
        let content = cellscope_index::hex::short_hex(&etag.finalize());
        let mut timed = sha2::Sha256::new();
        timed.update(content.as_bytes());
        timed.update(&index_json);
        let etag = format!(
            "{id}-{}",
            cellscope_index::hex::short_hex(&timed.finalize())
        );
        Ok(Snapshot {
            id,
            etag,
            content,
            index,
            indexed_at_unix_ms,
            cells_arrow,
            cells_arrow_compressed,
            index_json: Bytes::from(index_json),
            provenance_json: Bytes::from(provenance_json),
            complete,
            filtered_cells: super::bodies::Bodies::default(),
            dimension_values,
        })
    }
}

/// What the ETag covers besides the three bodies, in the order it is hashed: the pre-refill cells and where each
/// cell's rows are.
fn etag_tail(index: &Index) -> Vec<u8> {
    let mut tail = json(&index.pre_refill_cells);
    for (key, rows) in &index.rows {
        tail.extend_from_slice(key.to_string().as_bytes());
        tail.extend_from_slice(&rows.file_bytes.to_le_bytes());
        tail.extend_from_slice(&(rows.offsets.len() as u64).to_le_bytes());
        if let Some((_, bytes, offsets)) = &rows.backup {
            tail.extend_from_slice(&bytes.to_le_bytes());
            tail.extend_from_slice(&(offsets.len() as u64).to_le_bytes());
        }
    }
    tail
}

/// The JSON bytes of a value, for hashing (types that cannot be JSON hash as nothing).
fn json<T: serde::Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

/// Names on `response` the snapshot it was made from (`x-cellscope-snapshot`), as every answer from a snapshot
/// does: the app pins links to it.
pub(crate) fn name_snapshot(response: &mut axum::response::Response, id: &str) {
    if let Ok(value) = axum::http::HeaderValue::from_str(id) {
        response.headers_mut().insert(
            axum::http::HeaderName::from_static("x-cellscope-snapshot"),
            value,
        );
    }
}

/// The shared state of the server.
pub struct Store {
    pub root: PathBuf,
    pub current: ArcSwap<Snapshot>,
    /// Announces each new snapshot id.
    pub events: broadcast::Sender<String>,
    /// How many re-indexes ran (the watcher's health: it must not react to its own reads).
    pub reindexes: std::sync::atomic::AtomicU64,
    /// Where recent snapshots are kept for pinned links; `None` keeps only the current one.
    pub archive: Option<super::archive::Archive>,
    /// The cache of read results re-indexing takes unchanged runs from (checked against the files' contents).
    pub runs: Option<Arc<RunCache>>,
    /// Saving the first snapshot in the archive, which runs beside serving so that a start does not wait for it;
    /// a re-index waits for it before it swaps, so the archive never misses the snapshot a link was pinned to.
    first_kept: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
    /// The fingerprint of the files the first snapshot was made from, until the complete snapshot of the same
    /// data is kept and remembered for it (see [`Store::with_caches`]).
    start_inputs: std::sync::Mutex<Option<String>>,
    /// The number of the latest re-index started: an older one that finishes late (one that outran its
    /// deadline) does not swap its snapshot over a newer one's.
    generation: std::sync::atomic::AtomicU64,
    /// How long a re-index may run before the watcher stops waiting for it, in milliseconds.
    index_deadline_ms: std::sync::atomic::AtomicU64,
}

/// How long a re-index may run before the watcher stops waiting for it and takes later changes: far beyond the
/// minutes a very large root takes, so it only ever ends a read that is stuck.
pub const INDEX_DEADLINE: std::time::Duration = std::time::Duration::from_secs(600);

impl Store {
    pub fn new(root: PathBuf, snapshot: Snapshot) -> Arc<Store> {
        Store::archiving(root, snapshot, None)
    }

    /// A store that keeps recent snapshots in `archive` (the current one is saved at once, beside serving).
    pub fn archiving(
        root: PathBuf,
        snapshot: Snapshot,
        archive: Option<super::archive::Archive>,
    ) -> Arc<Store> {
        Store::with_caches(root, snapshot, archive, None, None)
    }

    /// A store that keeps recent snapshots in `archive` and re-indexes with the cache of read results `runs`.
    /// `inputs` is the fingerprint of the data root's files taken before the snapshot was made
    /// ([`super::inputs::inputs_fingerprint`]): once the complete snapshot of the same data (the second stage) is
    /// kept and the files still have that fingerprint, the archive remembers it for a start on the same files.
    /// One check at the end suffices: any write to a file changes its change time, which cannot be set back.
    pub fn with_caches(
        root: PathBuf,
        snapshot: Snapshot,
        archive: Option<super::archive::Archive>,
        runs: Option<Arc<RunCache>>,
        inputs: Option<String>,
    ) -> Arc<Store> {
        let (events, _) = broadcast::channel(16);
        let store = Arc::new(Store {
            root,
            current: ArcSwap::from_pointee(snapshot),
            events,
            reindexes: Default::default(),
            archive,
            runs,
            first_kept: std::sync::Mutex::new(None),
            start_inputs: std::sync::Mutex::new(inputs),
            generation: Default::default(),
            index_deadline_ms: std::sync::atomic::AtomicU64::new(INDEX_DEADLINE.as_millis() as u64),
        });
        if store.archive.is_some() {
            let keeping = Arc::clone(&store);
            let handle = std::thread::Builder::new()
                .name("cellscope-keep".into())
                .spawn(move || {
                    keeping.keep(&keeping.load());
                });
            match handle {
                Ok(handle) => {
                    if let Ok(mut first) = store.first_kept.lock() {
                        *first = Some(handle);
                    }
                }
                // No thread to spare: saved here instead.
                Err(_) => {
                    store.keep(&store.load());
                }
            }
        }
        store
    }

    /// Waits until the first snapshot is in the archive.
    fn wait_first_kept(&self) {
        let handle = self
            .first_kept
            .lock()
            .ok()
            .and_then(|mut first| first.take());
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }

    /// Saves a snapshot in the archive; a failure only costs pinned links their old figures, so it is logged.
    /// Whether it is kept.
    fn keep(&self, snapshot: &Snapshot) -> bool {
        let Some(archive) = &self.archive else {
            return false;
        };
        let saved = super::archive::Saved {
            id: &snapshot.id,
            complete: snapshot.complete,
            index_json: &snapshot.index_json,
            provenance_json: &snapshot.provenance_json,
            cells_arrow: &snapshot.cells_arrow,
            pre_refill_cells: &snapshot.index.pre_refill_cells,
        };
        match archive.save(saved) {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(%error, dir = %archive.dir().display(), "cannot keep the snapshot for pinned links");
                false
            }
        }
    }

    /// Once the complete snapshot of the start's data (`kept`, the same id as the first snapshot `first`) is kept:
    /// remembers it for the files' fingerprint at start, when they still have it.
    fn remember_start_inputs(&self, first: &str, kept: &str) {
        let Some(inputs) = self
            .start_inputs
            .lock()
            .ok()
            .and_then(|mut inputs| inputs.take())
        else {
            return;
        };
        let Some(archive) = &self.archive else {
            return;
        };
        let unchanged =
            super::inputs::inputs_fingerprint(&self.root).is_ok_and(|now| now == inputs);
        if first != kept || !unchanged {
            return;
        }
        if let Err(error) = archive.remember_inputs(&inputs, kept) {
            tracing::warn!(%error, dir = %archive.dir().display(), "cannot remember the snapshot for the next start");
        }
    }

    pub fn load(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// How long a re-index may run before the watcher stops waiting for it ([`INDEX_DEADLINE`] unless set).
    pub fn index_deadline(&self) -> std::time::Duration {
        std::time::Duration::from_millis(
            self.index_deadline_ms
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    pub fn set_index_deadline(&self, deadline: std::time::Duration) {
        self.index_deadline_ms.store(
            deadline.as_millis() as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// Rebuilds the index (blocking; call from a blocking task) and swaps it in. Returns the new id when the
    /// content changed.
    pub fn reindex(&self, options: &IndexOptions) -> Result<Option<String>, String> {
        self.reindexes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let generation = self
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            + 1;
        // A cached read is used only when its files' contents still match: this is where the entries the first
        // snapshot trusted by size and modification time are checked.
        let index = match &self.runs {
            Some(cache) => {
                cellscope_index::build_cached(&self.root, options, &Quiet, cache, Trust::Contents)
            }
            None => cellscope_index::build(&self.root, options, &Quiet),
        }
        .map_err(|error| error.to_string())?;
        if let Some(report) = &index.cache
            && (report.stale > 0 || !report.unreadable.is_empty())
        {
            tracing::warn!(
                stale = report.stale,
                unreadable = report.unreadable.len(),
                "cached reads were dropped and their runs read again"
            );
        }
        let complete = options.hashes && options.backup_diff;
        let current = self.load();
        let snapshot = Snapshot::new(index, complete)?;
        // Nothing new: keep the current snapshot, whose bodies and ETag stay valid.
        if snapshot.content == current.content {
            return Ok(None);
        }
        if self.generation.load(std::sync::atomic::Ordering::SeqCst) != generation {
            tracing::info!(
                "a re-index that outran its deadline finished after a newer one started; its result is dropped"
            );
            return Ok(None);
        }
        let changed = snapshot.id != current.id;
        let id = snapshot.id.clone();
        self.wait_first_kept();
        if self.keep(&snapshot) && complete {
            self.remember_start_inputs(&current.id, &snapshot.id);
        }
        self.current.store(Arc::new(snapshot));
        if changed {
            // Nobody listening is fine.
            let _ = self.events.send(id.clone());
            return Ok(Some(id));
        }
        Ok(None)
    }
}

/// Builds the first snapshot quickly (cells only) so the server can answer at once. With a cache of read
/// results, runs whose files have the size and modification time of a cached read are taken from it unread; the
/// second stage checks them against the files' contents.
pub fn first_snapshot(root: &Path, cache: Option<&RunCache>) -> Result<Snapshot, String> {
    let options = IndexOptions {
        hashes: false,
        backup_diff: false,
    };
    let index = match cache {
        Some(cache) => cellscope_index::build_cached(root, &options, &Quiet, cache, Trust::Stamps),
        None => cellscope_index::build(root, &options, &Quiet),
    }
    .map_err(|error| error.to_string())?;
    Snapshot::new(index, false)
}

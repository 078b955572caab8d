//! A snapshot: one immutable index plus the response bodies precomputed from it, identified by a content hash.
//! The server holds the current snapshot in an `ArcSwap`; a request loads it once and keeps it to the end.

use crate::export::{self, Format};
use crate::index::{Index, IndexOptions, Quiet};
use arc_swap::ArcSwap;
use axum::body::Bytes;
use cellscope_model::Dimension;
use serde_json::json;
use sha2::Digest as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::broadcast;

pub struct Snapshot {
    /// A content hash of what is indexed (cells, runs, ledger); equal data gives an equal id.
    pub id: String,
    pub index: Index,
    pub indexed_at_unix_ms: u64,
    /// `/api/cells` without filters, Arrow IPC, encoded once.
    pub cells_arrow: Bytes,
    /// The same body compressed once per snapshot: `(content-encoding, bytes)`, best first.
    pub cells_arrow_compressed: Vec<(&'static str, Bytes)>,
    /// `/api/index`.
    pub index_json: Bytes,
    /// Whether hashes and backup diffs are in (the second indexing stage).
    pub complete: bool,
}

fn dimension_values(index: &Index) -> serde_json::Value {
    let mut dimensions = serde_json::Map::new();
    for dimension in Dimension::ALL {
        let mut counts: BTreeMap<(u8, u32, String), u32> = BTreeMap::new();
        for cell in &index.cells {
            let value = cell.key.value(dimension);
            // Numbers sort numerically, text alphabetically.
            let sort_key = match value {
                cellscope_model::key::DimensionValue::Number(number) => (0, number, String::new()),
                cellscope_model::key::DimensionValue::Text(text) => (1, 0, text.to_string()),
            };
            *counts.entry(sort_key).or_default() += 1;
        }
        let values: Vec<serde_json::Value> = counts
            .into_iter()
            .map(|((kind, number, text), cells)| {
                let value = if kind == 0 {
                    json!(number)
                } else {
                    json!(text)
                };
                json!({ "value": value, "cells": cells })
            })
            .collect();
        dimensions.insert(
            dimension.name().to_string(),
            serde_json::Value::Array(values),
        );
    }
    serde_json::Value::Object(dimensions)
}

impl Snapshot {
    pub fn new(index: Index, complete: bool) -> Result<Snapshot, String> {
        let cells_arrow =
            export::encode(&index.cells, Format::Arrow).map_err(|error| error.to_string())?;
        let mut hasher = sha2::Sha256::new();
        hasher.update(&cells_arrow);
        // Run facts that do not depend on the second stage (hashes, backup diffs), so finishing that stage
        // does not announce a new snapshot unless it changed what is shown.
        for run in &index.runs {
            hasher.update(run.run_id.as_bytes());
            hasher.update(run.path.as_bytes());
            hasher.update(run.metrics.bytes.to_le_bytes());
            hasher.update(serde_json::to_vec(&run.census).unwrap_or_default());
            if let Some(refill) = &run.refill {
                hasher.update(refill.note.as_deref().unwrap_or_default().as_bytes());
            }
        }
        hasher.update(serde_json::to_vec(&index.exclusions).unwrap_or_default());
        hasher.update(serde_json::to_vec(&index.provenance).unwrap_or_default());
        let id: String = hasher
            .finalize()
            .iter()
            .take(8)
            .map(|byte| format!("{byte:02x}"))
            .collect();
        let indexed_at_unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis() as u64);
        let index_json = serde_json::to_vec(&json!({
            "snapshot": id,
            "complete": complete,
            "indexed_at_unix_ms": indexed_at_unix_ms,
            "index_ms": index.elapsed.as_secs_f64() * 1e3,
            "cells": index.cells.len(),
            "runs": index.runs,
            "exclusions": index.exclusions,
            "warnings": index.warnings,
            "dimensions": dimension_values(&index),
        }))
        .map_err(|error| error.to_string())?;
        let cells_arrow_compressed = compress_all(&cells_arrow);
        Ok(Snapshot {
            id,
            index,
            indexed_at_unix_ms,
            cells_arrow: Bytes::from(cells_arrow),
            cells_arrow_compressed,
            index_json: Bytes::from(index_json),
            complete,
        })
    }
}

/// zstd, brotli and gzip versions of `body`. Compressing 0.4 MB per request would dominate the cost of
/// `/api/cells`; once per snapshot it is a few milliseconds.
fn compress_all(body: &[u8]) -> Vec<(&'static str, Bytes)> {
    use std::io::Write as _;
    let mut out = Vec::new();
    if let Ok(zstd) = zstd::bulk::compress(body, 6) {
        out.push(("zstd", Bytes::from(zstd)));
    }
    let mut brotli = Vec::new();
    {
        let mut writer = brotli::CompressorWriter::new(&mut brotli, 4096, 6, 22);
        if writer.write_all(body).is_ok() && writer.flush().is_ok() {
            drop(writer);
            out.push(("br", Bytes::from(brotli)));
        }
    }
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    if gzip.write_all(body).is_ok()
        && let Ok(gzip) = gzip.finish()
    {
        out.push(("gzip", Bytes::from(gzip)));
    }
    out
}

/// The shared state of the server.
pub struct Store {
    pub root: PathBuf,
    pub current: ArcSwap<Snapshot>,
    /// Announces each new snapshot id.
    pub events: broadcast::Sender<String>,
    /// How many re-indexes ran (the watcher's health: it must not react to its own reads).
    pub reindexes: std::sync::atomic::AtomicU64,
}

impl Store {
    pub fn new(root: PathBuf, snapshot: Snapshot) -> Arc<Store> {
        let (events, _) = broadcast::channel(16);
        Arc::new(Store {
            root,
            current: ArcSwap::from_pointee(snapshot),
            events,
            reindexes: Default::default(),
        })
    }

    pub fn load(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// Rebuilds the index (blocking; call from a blocking task) and swaps it in. Returns the new id when the
    /// content changed.
    pub fn reindex(&self, options: &IndexOptions) -> Result<Option<String>, String> {
        self.reindexes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let index =
            crate::index::build(&self.root, options, &Quiet).map_err(|error| error.to_string())?;
        let complete = options.hashes && options.backup_diff;
        let snapshot = Snapshot::new(index, complete)?;
        let changed = snapshot.id != self.load().id;
        let id = snapshot.id.clone();
        self.current.store(Arc::new(snapshot));
        if changed {
            // Nobody listening is fine.
            let _ = self.events.send(id.clone());
            return Ok(Some(id));
        }
        Ok(None)
    }
}

/// Builds the first snapshot quickly (cells only) so the server can answer at once.
pub fn first_snapshot(root: &Path) -> Result<Snapshot, String> {
    let index = crate::index::build(
        root,
        &IndexOptions {
            hashes: false,
            backup_diff: false,
        },
        &Quiet,
    )
    .map_err(|error| error.to_string())?;
    Snapshot::new(index, false)
}

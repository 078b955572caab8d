//! Live re-indexing: watch the data root (or poll a remote one), debounce bursts of changes, rebuild in the
//! background and swap.

use super::snapshot::Store;
use cellscope_index::IndexOptions;
use notify_debouncer_mini::notify::{
    self, EventKind, RecommendedWatcher, RecursiveMode, Watcher as _,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long the data root must be quiet before a re-index starts.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// Keeps the watcher alive; dropping it stops watching.
pub struct Watching {
    _watcher: RecommendedWatcher,
}

/// Rebuilds the full index (hashes, backup diffs) once, then again after every burst of changes.
pub fn spawn(store: Arc<Store>) -> anyhow::Result<Watching> {
    let (sender, mut receiver) = mpsc::unbounded_channel::<()>();
    let mut watcher =
        notify::recommended_watcher(move |result: notify::Result<notify::Event>| match result {
            // Opening and reading files is what indexing itself does; reacting to it would re-index forever.
            Ok(event) if matches!(event.kind, EventKind::Access(_)) => {}
            Ok(_) => {
                let _ = sender.send(());
            }
            Err(error) => tracing::warn!(%error, "watching the data root"),
        })?;
    watcher.watch(&store.root, RecursiveMode::Recursive)?;
    tokio::spawn(async move {
        // The first pass completes the quick startup snapshot with hashes and backup comparisons.
        reindex(&store).await;
        while receiver.recv().await.is_some() {
            // Debounce: wait until the data root has been quiet for a moment, so a burst of writes (a run being
            // copied in) becomes one re-index.
            loop {
                tokio::time::sleep(DEBOUNCE).await;
                let mut more = false;
                while receiver.try_recv().is_ok() {
                    more = true;
                }
                if !more {
                    break;
                }
            }
            reindex(&store).await;
        }
    });
    Ok(Watching { _watcher: watcher })
}

/// For a data root in object storage: re-lists the bucket prefix every `interval`, brings the local mirror in
/// step, and re-indexes when an object was added, changed or removed. Like [`spawn`], the first pass completes
/// the startup snapshot. A failed listing is logged and the current snapshot keeps serving.
pub fn spawn_polling(store: Arc<Store>, remote: Arc<crate::remote::Remote>, interval: Duration) {
    tokio::spawn(async move {
        reindex(&store).await;
        loop {
            tokio::time::sleep(interval).await;
            // The sync writes the mirror's files with blocking calls: off the runtime's workers, on a runtime of
            // its own.
            let syncing = Arc::clone(&remote);
            let synced = tokio::task::spawn_blocking(move || syncing.sync_blocking())
                .await
                .unwrap_or_else(|error| {
                    Err(crate::remote::RemoteError::SyncTask {
                        url: remote.url.clone(),
                        reason: error.to_string(),
                    })
                });
            match synced {
                Ok(report) if report.changed() => {
                    tracing::info!(url = %remote.url, fetched = report.fetched, removed = report.removed,
                        "remote data root changed");
                    reindex(&store).await;
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(%error, "polling the remote data root; the current snapshot keeps serving")
                }
            }
        }
    });
}

/// One re-index on a blocking thread, waited for until the store's deadline: past it, the watcher goes back to
/// watching (the current snapshot keeps serving, and the next change starts a new re-index) and the stuck one is
/// left to finish or not.
async fn reindex(store: &Arc<Store>) {
    let started = std::time::Instant::now();
    let worker = Arc::clone(store);
    let deadline = store.index_deadline();
    let task = tokio::task::spawn_blocking(move || worker.reindex(&IndexOptions::default()));
    let Ok(result) = tokio::time::timeout(deadline, task).await else {
        tracing::warn!(
            deadline_s = deadline.as_secs_f64(),
            "re-indexing is past its deadline and is abandoned: the previous snapshot keeps serving, and the next \
             change to the data starts a new re-index"
        );
        return;
    };
    match result {
        Ok(Ok(Some(id))) => {
            let snapshot = store.load();
            tracing::info!(snapshot = %id, runs = snapshot.index.runs.len(), cells = snapshot.index.cells.len(),
                warnings = snapshot.index.warnings.len(), ms = started.elapsed().as_millis() as u64, "re-indexed: new snapshot");
        }
        Ok(Ok(None)) => tracing::debug!(
            ms = started.elapsed().as_millis() as u64,
            "re-indexed: unchanged"
        ),
        Ok(Err(error)) => {
            tracing::error!(%error, "re-indexing failed; the previous snapshot keeps serving")
        }
        Err(error) => tracing::error!(%error, "re-indexing task failed"),
    }
}

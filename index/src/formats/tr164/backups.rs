//! A TR164 backup (`<run id>_BACKUP_<label>/`, the run before a refill was spliced into it): its metrics file's
//! digest, its parse for the pre-refill cells and its row-by-row comparison with the master.

use super::metrics::metrics_bytes;
use super::{BackupDir, RunDir};
use super::{metrics_csv, splice};
use crate::run::bytes::digest;
use crate::run::{BackupRead, IndexOptions, Progress};
use crate::storage::Storage;

/// One backup read and, when `options` ask for the comparison and the master is known, compared with `master`.
pub(crate) fn read_backup(
    storage: &dyn Storage,
    dir: BackupDir,
    master: Option<&RunDir>,
    options: &IndexOptions,
    progress: &dyn Progress,
) -> BackupRead {
    let relative = format!("{}/metrics.csv", dir.relative);
    // Neither a hash nor the comparison is wanted (`--cells-only`): the backup's bytes are not needed at all.
    let read = (options.hashes || options.backup_diff).then(|| storage.read(&relative).ok());
    let read_failed = matches!(read, Some(None));
    let bytes = read.flatten().unwrap_or_default();
    // A file that could not be read has no checksums: those of no bytes would be taken for its content (and a
    // cached comparison would be checked against them).
    let mut digest = digest(relative, &bytes, options.hashes && !read_failed);
    if bytes.is_empty() {
        digest.bytes = storage.stat(&digest.path).map_or(0, |meta| meta.bytes);
    }
    let diff = match master {
        Some(master) if options.backup_diff => Some(
            metrics_bytes(storage, &master.metrics_relative())
                .map_err(|error| format!("cannot read the master {}: {error}", master.metrics_name))
                .and_then(|master_bytes| splice::diff(&master_bytes, &bytes)),
        ),
        _ => None,
    };
    let parsed = options
        .backup_diff
        .then(|| metrics_csv::parse(&bytes, &mut Vec::new()).ok())
        .flatten();
    progress.file_done(digest.bytes);
    BackupRead {
        of: dir.master_run_id,
        label: dir.label,
        root: dir.relative,
        digest,
        diff,
        parsed,
    }
}

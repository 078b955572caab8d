//! How a TR164 run is found: by the names in its directory. A directory holding a metrics file (`metrics.csv`, or
//! compressed) is a run, named by the directory, or, when the directory is `<run id>_BACKUP_<label>`, that run's
//! backup; its other files (manifest, plan, note, config, traces) are the run's own. What the listing shows to be
//! wrong is said: a metrics file that is not a regular file, one that is not read, a run-named directory without one.

use super::{BackupDir, RunDir};
use crate::run::found::{BackupOf, DetectedRun, Listed};
use crate::storage::{self, Entry, EntryKind};
use cellscope_model::api::Warning;

/// The names a TR164 run's metrics file may have, in order of preference: plain, then compressed (read through
/// [`crate::run::bytes::decompressed`]).
pub(super) const METRICS_NAMES: [&str; 3] = ["metrics.csv", "metrics.csv.gz", "metrics.csv.zst"];

/// Which of [`METRICS_NAMES`] the file `relative` (a TR164 run's one detected file) is; plain when none.
pub(super) fn metrics_name_of(relative: &str) -> &'static str {
    let name = storage::file_name(relative);
    METRICS_NAMES
        .into_iter()
        .find(|known| *known == name)
        .unwrap_or(METRICS_NAMES[0])
}

/// Splits `<run id>_BACKUP_<label>` into its parts.
pub(super) fn backup_name(name: &str) -> Option<(&str, &str)> {
    let (master, label) = name.split_once("_BACKUP_")?;
    (!master.is_empty()).then_some((master, label))
}

/// Whether `name` has the shape of a TR164 run id, `YYYYMMDD_HHMMSS_ffffff`.
fn looks_like_run_id(name: &str) -> bool {
    let parts: Vec<&str> = name.split('_').collect();
    matches!(parts.as_slice(), [date, time, micros]
        if date.len() == 8 && time.len() == 6 && micros.len() == 6
            && [date, time, micros].iter().all(|part| part.bytes().all(|byte| byte.is_ascii_digit())))
}

/// What the listing of `directory` shows: the run or backup it is, whether its subtree is a run's, and what is
/// wrong in it.
pub(super) fn listing(directory: &str, entries: &[Entry]) -> Listed {
    let name = storage::file_name(directory);
    let backup = backup_name(name);
    // The run's metrics file: plain if there is one, else compressed (backups are read plain only).
    let metrics_name = METRICS_NAMES
        .into_iter()
        .find(|metrics| {
            entries
                .iter()
                .any(|entry| entry.name == *metrics && entry.kind == EntryKind::File)
        })
        .filter(|metrics| *metrics == METRICS_NAMES[0] || backup.is_none());
    let mut warnings = Vec::new();
    for entry in entries {
        let path = storage::join(directory, &entry.name);
        if let Some(warning) = not_a_file(entry, &path) {
            warnings.push(warning);
        }
        if let Some(warning) = unread_metrics(entry, &path, metrics_name, backup.is_some()) {
            warnings.push(warning);
        }
    }
    warnings.extend(no_metrics(directory, entries));
    let runs = metrics_name
        .map(|metrics_name| {
            let dir = RunDir {
                run_id: if name.is_empty() {
                    "root".to_string()
                } else {
                    name.to_string()
                },
                relative: directory.to_string(),
                metrics_name,
            };
            let mut run = DetectedRun {
                format: super::NAME,
                root: directory.to_string(),
                files: vec![dir.metrics_relative()],
                listing: Some(names(entries)),
                ..DetectedRun::default()
            };
            match backup {
                Some((master, label)) => {
                    run.backup_of = Some(BackupOf {
                        run: master.to_string(),
                        label: label.to_string(),
                    });
                }
                None => run.own_id = Some(dir.run_id),
            }
            run
        })
        .into_iter()
        .collect();
    Listed {
        runs,
        names: vec![METRICS_NAMES[0]],
        owns_subtree: metrics_name.is_some()
            || looks_like_run_id(backup.map_or(name, |(master, _)| master)),
        warnings,
    }
}

/// The names in a run directory, sorted, sub-directories ending with `/`.
fn names(entries: &[Entry]) -> Vec<String> {
    let mut files: Vec<String> = entries
        .iter()
        .map(|entry| {
            if entry.kind == EntryKind::Directory {
                format!("{}/", entry.name)
            } else {
                entry.name.clone()
            }
        })
        .collect();
    files.sort();
    files
}

/// A `metrics.csv` that is a directory or a FIFO would otherwise make its run vanish without a word, and reading
/// a FIFO would block the index.
fn not_a_file(entry: &Entry, path: &str) -> Option<Warning> {
    if entry.name != METRICS_NAMES[0]
        || !matches!(entry.kind, EntryKind::Directory | EntryKind::Other)
    {
        return None;
    }
    let what = if entry.kind == EntryKind::Directory {
        "a directory"
    } else {
        "a FIFO, socket or device"
    };
    Some(
        Warning::error(
            "not_a_file",
            format!(
                "`{}` is {what}, not a regular file; it is not read (this directory is not indexed as a run)",
                entry.name
            ),
        )
        .file(path),
    )
}

/// Compressed metrics that are not read (another codec, a backup's, or beside a plain metrics.csv): said, rather
/// than left out in silence.
fn unread_metrics(
    entry: &Entry,
    path: &str,
    metrics_name: Option<&str>,
    is_backup: bool,
) -> Option<Warning> {
    let suffix = [".gz", ".zst", ".bz2", ".xz"]
        .into_iter()
        .find(|suffix| entry.name == format!("metrics.csv{suffix}"))
        .filter(|_| metrics_name != Some(entry.name.as_str()))?;
    let why = if metrics_name.is_some() {
        "this directory's metrics.csv is read instead".to_string()
    } else if is_backup && matches!(suffix, ".gz" | ".zst") {
        "a backup is compared only from a plain metrics.csv".to_string()
    } else {
        format!(
            "cellscope reads metrics.csv, .gz and .zst, not {suffix}; decompress it to index the run"
        )
    };
    Some(
        Warning::warn(
            "compressed_metrics",
            format!("`metrics.csv{suffix}` is not read: {why}"),
        )
        .file(path),
    )
}

/// A directory named like a run with no metrics file at all (not even a compressed or linked one, which are
/// reported by the entry) is a run that never wrote a row, or a copy that lost its data.
fn no_metrics(directory: &str, entries: &[Entry]) -> Option<Warning> {
    let name = storage::file_name(directory);
    if !looks_like_run_id(backup_name(name).map_or(name, |(master, _)| master))
        || entries
            .iter()
            .any(|entry| entry.name.starts_with("metrics.csv"))
    {
        return None;
    }
    let holds = if entries.is_empty() {
        "it is empty".to_string()
    } else {
        format!(
            "it holds {}",
            entries
                .iter()
                .map(|entry| entry.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Some(
        Warning::warn(
            "no_metrics_file",
            format!(
                "this directory is named like a run but holds no metrics.csv ({holds}); nothing of it is indexed"
            ),
        )
        // No `.run(…)`: there is no run of this id in the index to list the warning under.
        .file(directory),
    )
}

/// The backup a detected backup run is, and the master directory when that run was found.
pub(super) fn backup_of(backup: &DetectedRun) -> BackupDir {
    let of = backup.backup_of.clone().unwrap_or_else(|| BackupOf {
        run: String::new(),
        label: String::new(),
    });
    BackupDir {
        master_run_id: of.run,
        label: of.label,
        relative: backup.root.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, kind: EntryKind) -> Entry {
        Entry {
            name: name.to_string(),
            kind,
            bytes: 0,
            modified: None,
        }
    }

    #[test]
    fn backup_names_split_into_master_and_label() {
        assert_eq!(
            backup_name("20260612_212816_266127_BACKUP_preRefill"),
            Some(("20260612_212816_266127", "preRefill"))
        );
        assert_eq!(backup_name("20260612_212816_266127"), None);
        assert_eq!(backup_name("_BACKUP_x"), None);
    }

    #[test]
    fn a_directory_with_metrics_is_a_run_and_a_run_named_one_owns_its_files_without() {
        let listed = listing(
            "results/v3/my-run",
            &[
                entry("metrics.csv", EntryKind::File),
                entry("traces", EntryKind::Directory),
                entry("metrics.csv.gz", EntryKind::File),
            ],
        );
        assert!(listed.owns_subtree);
        assert_eq!(listed.runs.len(), 1);
        assert_eq!(listed.runs[0].own_id.as_deref(), Some("my-run"));
        assert_eq!(listed.runs[0].files, ["results/v3/my-run/metrics.csv"]);
        assert_eq!(
            listed.runs[0].listing.as_deref(),
            Some(
                &[
                    "metrics.csv".to_string(),
                    "metrics.csv.gz".into(),
                    "traces/".into()
                ][..]
            )
        );
        let kinds: Vec<(&str, Option<&str>)> = listed
            .warnings
            .iter()
            .map(|warning| (warning.kind.as_str(), warning.file.as_deref()))
            .collect();
        assert_eq!(
            kinds,
            [(
                "compressed_metrics",
                Some("results/v3/my-run/metrics.csv.gz")
            )]
        );
        // A run-named directory without metrics owns its files, and is said to hold no metrics file; a backup's
        // compressed metrics are not read, and a backup is no run of its own.
        let empty = listing("v1/20260531_120428_552237", &[]);
        assert!(empty.owns_subtree && empty.runs.is_empty());
        assert_eq!(empty.warnings[0].kind, "no_metrics_file");
        let backup = listing(
            "v1/20260531_120428_552237_BACKUP_preRefill",
            &[entry("metrics.csv", EntryKind::File)],
        );
        assert_eq!(backup.runs[0].own_id, None);
        assert_eq!(
            backup.runs[0].backup_of,
            Some(BackupOf {
                run: "20260531_120428_552237".into(),
                label: "preRefill".into()
            })
        );
        let compressed_backup = listing(
            "v1/20260531_120428_552237_BACKUP_x",
            &[entry("metrics.csv.gz", EntryKind::File)],
        );
        assert!(compressed_backup.runs.is_empty() && compressed_backup.owns_subtree);
        assert!(!listing("results/v3", &[]).owns_subtree);
    }
}

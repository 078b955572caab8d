//! Finds run directories, backups, exclusion ledgers, `cellscope.toml` and other tools' result files under the
//! data root without leaving it, and names the files that may have been results but that no format reads.

use super::mapping::{self, Mapping};
use super::storage::{self, Entry, EntryKind, Storage};
use crate::run::found::{BackupDir, DetectedRun, METRICS_NAMES, Offered, RunDir, Unread};
use cellscope_model::api::{NOT_RECOGNISED, Warning};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[derive(Clone, Debug, Default)]
pub struct Discovery {
    pub runs: Vec<RunDir>,
    pub backups: Vec<BackupDir>,
    /// Runs of the other tools' formats, each with its files.
    pub external: Vec<DetectedRun>,
    /// `exclusions.toml` files (relative to the data root) with the directory (`""` = root) whose subtree they
    /// apply to.
    pub ledgers: Vec<(String, String)>,
    /// `cellscope.toml` at the root, as text.
    pub mapping: Option<String>,
    pub warnings: Vec<Warning>,
}

pub fn relative_path(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative
        .components()
        .map(|component| component.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Splits `<run id>_BACKUP_<label>` into its parts.
pub fn backup_name(name: &str) -> Option<(&str, &str)> {
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

/// Extensions of files another tool's format may be in; nothing else is opened during discovery (YAML for the
/// llm-d benchmark reports, text for the logs some tools leave).
const CANDIDATE_EXTENSIONS: [&str; 9] = [
    "json", "jsonl", "csv", "parquet", "yaml", "yml", "txt", "log", "out",
];

/// Text extensions offered for the logs some tools leave (LoadGen's, console logs): a results folder holds many
/// other texts (notes, READMEs), so one no format reads is passed over without a `not_recognised` finding unless
/// it resembles a tool's output (a reader found some of its marks).
const TEXT_EXTENSIONS: [&str; 3] = ["txt", "log", "out"];

/// Files discovery never offers to a format: cellscope's own, and TR164 side files.
const NOT_RESULTS: [&str; 3] = ["cellscope.toml", "exclusions.toml", "metrics.csv"];

/// Which other tool's format a file is in: given the data root, `cellscope.toml` and the file's path, the format's
/// name and the root of the run the file belongs to, or why no format reads it. Discovery is the stage below
/// reading and knows no format: the formats hand it this.
pub type Detect<'a> = dyn Fn(&dyn Storage, &Mapping, &str) -> Offered + 'a;

/// Walks the data root through `storage` (symbolic links are listed, never followed, so nothing outside it is
/// reached) and classifies what it finds: TR164 run directories and backups (a `metrics.csv`), exclusion
/// ledgers, `cellscope.toml`, and the files of other tools' formats, detected by their content (`detect`) and
/// grouped into runs by each format's run root. Runs are ordered by relative path; of several TR164 directories
/// with the same run id only the first counts.
pub fn discover(storage: &dyn Storage, detect: &Detect<'_>) -> Discovery {
    let mut walk = Walk {
        storage,
        detect,
        // Detection needs `[[table]]` globs before the walk reaches the files; the index reports the file's
        // problems once, from the text kept in the discovery.
        mapping: Mapping::load(storage),
        discovery: Discovery::default(),
        candidates: Vec::new(),
        external: BTreeMap::new(),
        unread: Vec::new(),
    };
    let mut pending = vec![String::new()];
    while let Some(directory) = pending.pop() {
        let subdirectories = walk.directory(&directory);
        // Depth-first in name order, like the sorted walk before it.
        pending.extend(subdirectories.into_iter().rev());
    }
    walk.finish()
}

/// The walk of a data root: what it has found so far.
struct Walk<'a> {
    storage: &'a dyn Storage,
    detect: &'a Detect<'a>,
    mapping: Mapping,
    discovery: Discovery,
    /// Directories with a TR164 metrics file (runs and backups), with its name.
    candidates: Vec<(String, &'static str)>,
    /// Other tools' files by run root and format.
    external: BTreeMap<(String, &'static str), Vec<String>>,
    /// Files that may have been results but that no format reads, with why.
    unread: Vec<(String, Unread)>,
}

impl Walk<'_> {
    /// One directory's entries classified; its sub-directories, in name order, to walk next.
    fn directory(&mut self, directory: &str) -> Vec<String> {
        let entries = match self.storage.list(directory) {
            Ok(entries) => entries,
            Err(error) => {
                self.discovery.warnings.push(
                    Warning::warn(
                        "unreadable_directory",
                        format!("cannot read this part of the data root: {error}"),
                    )
                    .file(directory),
                );
                return Vec::new();
            }
        };
        // The run's metrics file: plain if there is one, else compressed (backups are read plain only).
        let metrics_name = METRICS_NAMES.into_iter().find(|name| {
            entries
                .iter()
                .any(|entry| entry.name == *name && entry.kind == EntryKind::File)
        });
        let is_backup = backup_name(storage::file_name(directory)).is_some();
        let metrics_name = metrics_name.filter(|name| *name == METRICS_NAMES[0] || !is_backup);
        if let Some(name) = metrics_name {
            self.candidates.push((directory.to_string(), name));
        }
        let mut subdirectories = Vec::new();
        for entry in &entries {
            let path = storage::join(directory, &entry.name);
            self.warn_not_a_file(entry, &path);
            self.warn_unread_metrics(entry, &path, metrics_name, is_backup);
            match entry.kind {
                EntryKind::Directory => subdirectories.push(path),
                EntryKind::Symlink => self.warn_symlink(&path),
                EntryKind::File => self.file(directory, entry, path, metrics_name.is_some()),
                EntryKind::Other if may_be_a_result(entry) => self.warn_special_result(&path),
                EntryKind::Other => {}
            }
        }
        self.warn_no_metrics(directory, &entries);
        subdirectories
    }

    /// A regular file: a ledger, the root's `cellscope.toml`, or (outside a TR164 run directory) maybe another
    /// tool's result.
    fn file(&mut self, directory: &str, entry: &Entry, path: String, in_tr164_run: bool) {
        if entry.name == "exclusions.toml" {
            self.discovery.ledgers.push((directory.to_string(), path));
        } else if entry.name == "cellscope.toml" && directory.is_empty() {
            self.discovery.mapping = mapping::read_text(self.storage, &mut self.discovery.warnings);
        } else if !in_tr164_run && may_be_a_result(entry) {
            match (self.detect)(self.storage, &self.mapping, &path) {
                Offered::Run { format, root } => {
                    self.external.entry((root, format)).or_default().push(path);
                }
                Offered::Unread(unread) => self.unread.push((path, unread)),
            }
        }
    }

    /// cellscope's own file names that are not regular files: a directory or a FIFO named metrics.csv would
    /// otherwise make its run (or ledger, or mapping) vanish without a word, and reading a FIFO would block the
    /// index.
    fn warn_not_a_file(&mut self, entry: &Entry, path: &str) {
        if !NOT_RESULTS.contains(&entry.name.as_str())
            || !matches!(entry.kind, EntryKind::Directory | EntryKind::Other)
        {
            return;
        }
        let what = if entry.kind == EntryKind::Directory {
            "a directory"
        } else {
            "a FIFO, socket or device"
        };
        self.discovery.warnings.push(
            Warning::error(
                "not_a_file",
                format!(
                    "`{}` is {what}, not a regular file; it is not read ({})",
                    entry.name,
                    match entry.name.as_str() {
                        "metrics.csv" => "this directory is not indexed as a run",
                        "exclusions.toml" => "no exclusion of this directory applies",
                        _ => "no mapping is applied",
                    }
                ),
            )
            .file(path),
        );
    }

    /// Compressed metrics that are not read (another codec, a backup's, or beside a plain metrics.csv): said,
    /// rather than left out in silence.
    fn warn_unread_metrics(
        &mut self,
        entry: &Entry,
        path: &str,
        metrics_name: Option<&str>,
        is_backup: bool,
    ) {
        let Some(suffix) = [".gz", ".zst", ".bz2", ".xz"]
            .into_iter()
            .find(|suffix| entry.name == format!("metrics.csv{suffix}"))
            .filter(|_| metrics_name != Some(entry.name.as_str()))
        else {
            return;
        };
        let why = if metrics_name.is_some() {
            "this directory's metrics.csv is read instead".to_string()
        } else if is_backup && matches!(suffix, ".gz" | ".zst") {
            "a backup is compared only from a plain metrics.csv".to_string()
        } else {
            format!(
                "cellscope reads metrics.csv, .gz and .zst, not {suffix}; decompress it to index the run"
            )
        };
        self.discovery.warnings.push(
            Warning::warn(
                "compressed_metrics",
                format!("`metrics.csv{suffix}` is not read: {why}"),
            )
            .file(path),
        );
    }

    /// A FIFO, socket or device named like a result (`profile_export.jsonl`, `results.json`): never opened, and
    /// said, since a result that is not a file would otherwise be missing without a word.
    fn warn_special_result(&mut self, path: &str) {
        self.discovery.warnings.push(
            Warning::warn(
                "not_a_file",
                "this is a FIFO, socket or device named like a result, not a regular file; it is not read",
            )
            .file(path),
        );
    }

    /// Any link, not only one named like cellscope's files: a run directory linked into the root would otherwise
    /// be left out without a word.
    fn warn_symlink(&mut self, path: &str) {
        self.discovery.warnings.push(
            Warning::warn(
                "symlink_ignored",
                "this is a symbolic link, which is not followed, so nothing outside the data root is read (a run \
                 linked into the root is not indexed: copy it, or serve the directory it points to)",
            )
            .file(path),
        );
    }

    /// A directory named like a TR164 run with no metrics file at all (not even a compressed or linked one, which
    /// are reported by the entry) is a run that never wrote a row, or a copy that lost its data.
    fn warn_no_metrics(&mut self, directory: &str, entries: &[Entry]) {
        let name = storage::file_name(directory);
        if !looks_like_run_id(backup_name(name).map_or(name, |(master, _)| master))
            || entries
                .iter()
                .any(|entry| entry.name.starts_with("metrics.csv"))
        {
            return;
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
        self.discovery.warnings.push(
            Warning::warn(
                "no_metrics_file",
                format!(
                    "this directory is named like a run but holds no metrics.csv ({holds}); nothing of it is indexed"
                ),
            )
            // No `.run(…)`: there is no run of this id in the index to list the warning under.
            .file(directory),
        );
    }

    /// A `not_recognised` finding for each file that may have been a result but that no format reads, unless it
    /// is part of a TR164 run directory (its traces, notes and exports, or a run-named directory's, which
    /// `no_metrics_file` reports) or a side file of a run that was found. It is information, not a problem: a
    /// results folder holds other files, and the finding says why each was passed over.
    fn warn_unread(&mut self) {
        let tr164_directories: BTreeSet<&str> = self
            .candidates
            .iter()
            .map(|(directory, _)| directory.as_str())
            .collect();
        for (path, unread) in std::mem::take(&mut self.unread) {
            let side_of_a_found_run = unread
                .side_of
                .iter()
                .any(|(format, root)| self.external.contains_key(&(root.clone(), *format)));
            if side_of_a_found_run
                || in_tr164_directory(&path, &tr164_directories)
                || (is_text(&path) && !unread.resembles_a_result)
            {
                continue;
            }
            if let Some(kind) = unread.problem {
                self.discovery
                    .warnings
                    .push(Warning::warn(kind, unread.reason).file(&path));
                continue;
            }
            self.discovery
                .warnings
                .push(Warning::info(NOT_RECOGNISED, message(&unread)).file(&path));
        }
    }

    /// The discovery once the walk is done: TR164 runs (the first of each id) and backups, and other tools' runs
    /// with their files in path order.
    fn finish(mut self) -> Discovery {
        self.warn_unread();
        let mut runs_by_id: BTreeMap<String, RunDir> = BTreeMap::new();
        for (relative, metrics_name) in std::mem::take(&mut self.candidates) {
            let name = storage::file_name(&relative).to_string();
            if let Some((master, label)) = backup_name(&name) {
                self.discovery.backups.push(BackupDir {
                    master_run_id: master.to_string(),
                    label: label.to_string(),
                    relative,
                });
                continue;
            }
            let run_id = if name.is_empty() {
                "root".to_string()
            } else {
                name
            };
            if let Some(first) = runs_by_id.get(&run_id) {
                self.discovery.warnings.push(
                    Warning::error(
                        "duplicate_run",
                        format!(
                            "run id {run_id} is also the directory {}; this copy is ignored so its cells are not \
                             counted twice",
                            first.relative
                        ),
                    )
                    .run(&run_id)
                    .file(&storage::join(&relative, metrics_name)),
                );
                continue;
            }
            runs_by_id.insert(
                run_id.clone(),
                RunDir {
                    run_id,
                    relative,
                    metrics_name,
                },
            );
        }
        let mut discovery = self.discovery;
        discovery.runs = runs_by_id.into_values().collect();
        discovery
            .runs
            .sort_by(|left, right| left.relative.cmp(&right.relative));
        discovery.external = self
            .external
            .into_iter()
            .map(|((root, format), mut files)| {
                files.sort();
                DetectedRun {
                    format,
                    root,
                    files,
                    id: None,
                }
            })
            .collect();
        discovery
    }
}

/// The `not_recognised` finding's message: why the file is not read, and where to learn more.
fn message(unread: &Unread) -> String {
    format!(
        "{}; nothing of it is indexed (`cellscope index DIR --explain FILE` gives every reader's reason)",
        unread.reason
    )
}

/// Whether a file lies under a TR164 run or backup directory, or under a directory named like a run.
fn in_tr164_directory(path: &str, tr164_directories: &BTreeSet<&str>) -> bool {
    let mut directory = storage::parent(path);
    loop {
        let name = storage::file_name(directory);
        if tr164_directories.contains(directory)
            || looks_like_run_id(backup_name(name).map_or(name, |(master, _)| master))
        {
            return true;
        }
        if directory.is_empty() {
            return false;
        }
        directory = storage::parent(directory);
    }
}

/// Whether a file has one of the [`TEXT_EXTENSIONS`].
fn is_text(path: &str) -> bool {
    path.rsplit_once('.').is_some_and(|(_, extension)| {
        TEXT_EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str())
    })
}

/// Whether a file may be another tool's result, by its name: only such files are opened to detect their format.
fn may_be_a_result(entry: &Entry) -> bool {
    entry.name.rsplit_once('.').is_some_and(|(_, extension)| {
        CANDIDATE_EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str())
    }) && !NOT_RESULTS.contains(&entry.name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn files_under_a_tr164_run_or_a_run_named_directory_are_the_runs_own() {
        let runs = BTreeSet::from(["results/v3/my-run"]);
        assert!(in_tr164_directory(
            "results/v3/my-run/traces/a.jsonl",
            &runs
        ));
        assert!(in_tr164_directory("results/v3/my-run/summary.csv", &runs));
        assert!(in_tr164_directory(
            "v1/20260531_120428_552237/traces/a.jsonl",
            &runs
        ));
        assert!(in_tr164_directory(
            "v1/20260531_120428_552237_BACKUP_preRefill/plan.json",
            &runs
        ));
        assert!(!in_tr164_directory("results/v3/summary.csv", &runs));
        assert!(!in_tr164_directory("results/v3/my-run-2/a.json", &runs));
        assert!(!in_tr164_directory("a.json", &runs));
        // A run at the data root owns every file under it.
        assert!(in_tr164_directory("anything/a.json", &BTreeSet::from([""])));
    }
}

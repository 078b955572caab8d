//! Finds the runs of every format under the data root without leaving it, exclusion ledgers and `cellscope.toml`,
//! and names the files that may have been results but that no format reads. Discovery knows no format: the formats
//! tell it what a directory's listing shows and what a file offered to them is ([`Recognise`]).

use super::mapping::{self, Mapping};
use super::storage::{self, Entry, EntryKind, Storage};
use crate::run::found::{DetectedRun, Listed, Offered, Unread};
use cellscope_model::api::{NOT_RECOGNISED, Warning};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[derive(Clone, Debug, Default)]
pub(crate) struct Discovery {
    /// Every run found, backups among them: the runs whose files carry their own id first (by root), then the
    /// others by root and format, then the backups in the order the walk found them.
    pub runs: Vec<DetectedRun>,
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

/// Extensions of files another tool's format may be in; nothing else is opened during discovery (YAML for the
/// llm-d benchmark reports, text for the logs some tools leave).
const CANDIDATE_EXTENSIONS: [&str; 9] = [
    "json", "jsonl", "csv", "parquet", "yaml", "yml", "txt", "log", "out",
];

/// Text extensions offered for the logs some tools leave (LoadGen's, console logs): a results folder holds many
/// other texts (notes, READMEs), so one no format reads is passed over without a `not_recognised` finding unless
/// it resembles a tool's output (a reader found some of its marks).
const TEXT_EXTENSIONS: [&str; 3] = ["txt", "log", "out"];

/// cellscope's own files, which discovery never offers to a format.
const NOT_RESULTS: [&str; 2] = ["cellscope.toml", "exclusions.toml"];

/// What the formats make of what discovery finds. Discovery is the stage below reading and knows no format: the
/// formats hand it this.
pub(crate) trait Recognise: Sync {
    /// What the formats that find their runs by name make of one directory's listing.
    fn listing(&self, directory: &str, entries: &[Entry]) -> Listed;
    /// Which format's content the file at `path` has (given the data root and `cellscope.toml`), and the root of
    /// the run it belongs to; or why no format reads it.
    fn file(&self, storage: &dyn Storage, mapping: &Mapping, path: &str) -> Offered;
}

/// Walks the data root through `storage` (symbolic links are listed, never followed, so nothing outside it is
/// reached) and classifies what it finds: runs a directory's listing shows (`recognise.listing`), exclusion
/// ledgers, `cellscope.toml`, and the files of other formats, detected by their content (`recognise.file`) and
/// grouped into runs by each format's run root. Of several runs that carry the same own id only the first the
/// walk finds counts.
pub(crate) fn discover(storage: &dyn Storage, recognise: &dyn Recognise) -> Discovery {
    let mut walk = Walk {
        storage,
        recognise,
        // Detection needs `[[table]]` globs before the walk reaches the files; the index reports the file's
        // problems once, from the text kept in the discovery.
        mapping: Mapping::load(storage),
        discovery: Discovery::default(),
        listed: Vec::new(),
        owned: BTreeSet::new(),
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
    recognise: &'a dyn Recognise,
    mapping: Mapping,
    discovery: Discovery,
    /// Runs and backups directories' listings showed, in the order the walk found them.
    listed: Vec<DetectedRun>,
    /// Directories whose subtree belongs to a run.
    owned: BTreeSet<String>,
    /// Files detected by their content, by run root and format.
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
        let Listed {
            runs,
            names,
            owns_subtree,
            warnings,
        } = self.recognise.listing(directory, &entries);
        self.discovery.warnings.extend(warnings);
        if owns_subtree {
            self.owned.insert(directory.to_string());
        }
        let in_a_listed_run = !runs.is_empty();
        self.listed.extend(runs);
        let mut subdirectories = Vec::new();
        for entry in &entries {
            let path = storage::join(directory, &entry.name);
            self.warn_not_a_file(entry, &path);
            let dealt_with = names.contains(&entry.name.as_str());
            match entry.kind {
                EntryKind::Directory => subdirectories.push(path),
                EntryKind::Symlink => self.warn_symlink(&path),
                EntryKind::File if !dealt_with => {
                    self.file(directory, entry, path, in_a_listed_run)
                }
                EntryKind::Other if !dealt_with && may_be_a_result(entry) => {
                    self.warn_special_result(&path);
                }
                EntryKind::File | EntryKind::Other => {}
            }
        }
        subdirectories
    }

    /// A regular file: a ledger, the root's `cellscope.toml`, or (outside a directory a listing showed to be a
    /// run's) maybe a result.
    fn file(&mut self, directory: &str, entry: &Entry, path: String, in_a_listed_run: bool) {
        if entry.name == "exclusions.toml" {
            self.discovery.ledgers.push((directory.to_string(), path));
        } else if entry.name == "cellscope.toml" && directory.is_empty() {
            self.discovery.mapping = mapping::read_text(self.storage, &mut self.discovery.warnings);
        } else if !in_a_listed_run && may_be_a_result(entry) {
            match self.recognise.file(self.storage, &self.mapping, &path) {
                Offered::Run { format, root } => {
                    self.external.entry((root, format)).or_default().push(path);
                }
                Offered::Unread(unread) => self.unread.push((path, unread)),
            }
        }
    }

    /// cellscope's own file names that are not regular files: a directory or a FIFO named so would otherwise make
    /// its ledger or mapping vanish without a word, and reading a FIFO would block the index.
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
                    if entry.name == "exclusions.toml" {
                        "no exclusion of this directory applies"
                    } else {
                        "no mapping is applied"
                    }
                ),
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

    /// A `not_recognised` finding for each file that may have been a result but that no format reads, unless it
    /// lies in a directory a listing showed to belong to a run (its traces, notes and exports) or is a side file of
    /// a run that was found. It is information, not a problem: a results folder holds other files, and the finding
    /// says why each was passed over.
    fn warn_unread(&mut self) {
        for (path, unread) in std::mem::take(&mut self.unread) {
            let side_of_a_found_run = unread
                .side_of
                .iter()
                .any(|(format, root)| self.external.contains_key(&(root.clone(), *format)));
            if side_of_a_found_run
                || in_owned_directory(&path, &self.owned)
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

    /// The discovery once the walk is done: the runs listings showed (the first of each own id), then the runs
    /// of files detected by content with their files in path order, then the backups.
    fn finish(mut self) -> Discovery {
        self.warn_unread();
        let mut listed = Vec::new();
        let mut backups = Vec::new();
        let mut first_of_id: BTreeMap<String, String> = BTreeMap::new();
        for run in std::mem::take(&mut self.listed) {
            if run.backup_of.is_some() {
                backups.push(run);
                continue;
            }
            if let Some(id) = &run.own_id {
                if let Some(first) = first_of_id.get(id) {
                    let warning = Warning::error(
                        "duplicate_run",
                        format!(
                            "run id {id} is also the directory {first}; this copy is ignored so its cells are not \
                             counted twice"
                        ),
                    )
                    .run(id);
                    self.discovery.warnings.push(match run.files.first() {
                        Some(file) => warning.file(file),
                        None => warning,
                    });
                    continue;
                }
                first_of_id.insert(id.clone(), run.root.clone());
            }
            listed.push(run);
        }
        listed.sort_by(|left, right| left.root.cmp(&right.root));
        let mut discovery = self.discovery;
        discovery.runs = listed;
        discovery.runs.extend(
            self.external
                .into_iter()
                .map(|((root, format), mut files)| {
                    files.sort();
                    DetectedRun {
                        format,
                        root,
                        files,
                        ..DetectedRun::default()
                    }
                }),
        );
        discovery.runs.extend(backups);
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

/// Whether a file lies in one of the `owned` directories or under one.
fn in_owned_directory(path: &str, owned: &BTreeSet<String>) -> bool {
    let mut directory = storage::parent(path);
    loop {
        if owned.contains(directory) {
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
    fn files_under_an_owned_directory_are_its_runs() {
        let owned = BTreeSet::from(["results/v3/my-run".to_string()]);
        assert!(in_owned_directory(
            "results/v3/my-run/traces/a.jsonl",
            &owned
        ));
        assert!(in_owned_directory("results/v3/my-run/summary.csv", &owned));
        assert!(!in_owned_directory("results/v3/summary.csv", &owned));
        assert!(!in_owned_directory("results/v3/my-run-2/a.json", &owned));
        assert!(!in_owned_directory("a.json", &owned));
        // A run at the data root owns every file under it.
        assert!(in_owned_directory(
            "anything/a.json",
            &BTreeSet::from([String::new()])
        ));
    }
}

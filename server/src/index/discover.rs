//! Finds run directories, backups and exclusion ledgers under the data root without leaving it.

use cellscope_model::api::Warning;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A directory holding a `metrics.csv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunDir {
    /// The directory name.
    pub run_id: String,
    pub path: PathBuf,
    /// `path` relative to the data root, with `/` separators.
    pub relative: String,
}

/// `<run id>_BACKUP_<label>/`: the untouched state of a run before a splice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackupDir {
    pub master_run_id: String,
    pub label: String,
    pub path: PathBuf,
    pub relative: String,
}

#[derive(Clone, Debug, Default)]
pub struct Discovery {
    pub runs: Vec<RunDir>,
    pub backups: Vec<BackupDir>,
    /// `exclusions.toml` files with the directory (relative, `""` = root) whose subtree they apply to.
    pub ledgers: Vec<(String, PathBuf)>,
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

/// Walks `root` (not following symlinks, so nothing outside it is reached) and classifies what it finds.
/// Runs are ordered by relative path; of several directories with the same run id only the first counts.
pub fn discover(root: &Path) -> Discovery {
    let mut discovery = Discovery::default();
    let mut runs_by_id: BTreeMap<String, RunDir> = BTreeMap::new();
    let mut candidates = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
    {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                let path = error
                    .path()
                    .map(|path| relative_path(root, path))
                    .unwrap_or_default();
                discovery.warnings.push(
                    Warning::warn(
                        "unreadable_directory",
                        format!("cannot read this part of the data root: {error}"),
                    )
                    .file(&path),
                );
                continue;
            }
        };
        let file_type = entry.file_type();
        let name = entry.file_name().to_string_lossy();
        if file_type.is_symlink() && (name == "metrics.csv" || name == "exclusions.toml") {
            discovery.warnings.push(
                Warning::warn(
                    "symlink_ignored",
                    "symbolic links are not followed, so nothing outside the data root is read",
                )
                .file(&relative_path(root, entry.path())),
            );
            continue;
        }
        if !file_type.is_file() {
            continue;
        }
        let Some(directory) = entry.path().parent() else {
            continue;
        };
        match name.as_ref() {
            "metrics.csv" => candidates.push(directory.to_path_buf()),
            "exclusions.toml" => discovery
                .ledgers
                .push((relative_path(root, directory), entry.path().to_path_buf())),
            _ => {}
        }
    }
    for directory in candidates {
        let name = directory
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let relative = relative_path(root, &directory);
        if let Some((master, label)) = backup_name(&name) {
            discovery.backups.push(BackupDir {
                master_run_id: master.to_string(),
                label: label.to_string(),
                path: directory.clone(),
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
            discovery.warnings.push(
                Warning::error(
                    "duplicate_run",
                    format!(
                        "run id {run_id} is also the directory {}; this copy is ignored so its cells are not \
                         counted twice",
                        first.relative
                    ),
                )
                .run(&run_id)
                .file(&format!("{relative}/metrics.csv")),
            );
            continue;
        }
        runs_by_id.insert(
            run_id.clone(),
            RunDir {
                run_id,
                path: directory,
                relative,
            },
        );
    }
    discovery.runs = runs_by_id.into_values().collect();
    discovery
        .runs
        .sort_by(|left, right| left.relative.cmp(&right.relative));
    discovery
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
}

//! A TR164 run's side files: its manifest, execution plan, refill note (with the run ids it names) and config, each
//! read through [`Storage`] and left out with a warning when it is not a regular file or cannot be read or parsed.

use super::RunDir;
use super::environment;
use super::run_files;
use crate::run::expected::{Manifest, Plan};
use crate::storage::{self, EntryKind, Storage};
use cellscope_model::api::Warning;
use std::collections::BTreeMap;

/// What a TR164 run's side files hold, parsed, with what reading them found (in the order the files are read).
pub(super) struct SideFiles {
    pub manifest: Option<Manifest>,
    pub plan: Option<Plan>,
    pub note_bytes: Option<Vec<u8>>,
    pub config: Option<serde_json::Value>,
    pub warnings: Vec<Warning>,
}

/// A TR164 run's manifest, plan, refill note and config, each left out with a warning when it cannot be read or
/// parsed.
pub(super) fn read_side_files(storage: &dyn Storage, dir: &RunDir, run_id: &str) -> SideFiles {
    let mut warnings = Vec::new();
    let mut read_side_file = |name: &str| -> Option<Vec<u8>> {
        let path = storage::join(&dir.relative, name);
        // The entry itself, not what a link points to: a link is not followed out of the data root.
        let entry = storage.stat(&path);
        if !entry.as_ref().is_ok_and(storage::Meta::is_file) {
            // A directory, FIFO, device or link under a side file's name is said, not taken as "no such file".
            if let Ok(meta) = entry {
                warnings.push(
                    Warning::error(
                        "not_a_file",
                        format!(
                            "`{name}` is {}, not a regular file; it is not read",
                            match meta.kind {
                                EntryKind::Directory => "a directory",
                                EntryKind::Symlink => "a symbolic link (links are not followed)",
                                _ => "a FIFO, socket or device",
                            }
                        ),
                    )
                    .run(run_id)
                    .file(&format!("{}/{name}", dir.relative)),
                );
            }
            return None;
        }
        match storage::read_bounded(storage, &path, storage::MAX_SIDE_FILE_BYTES) {
            Ok(bytes) => Some(bytes),
            Err(error) => {
                warnings.push(
                    storage::unreadable_warning(&error, &format!("{}/{name}", dir.relative))
                        .run(run_id),
                );
                None
            }
        }
    };
    let manifest_bytes = read_side_file("manifest.json");
    let plan_bytes = read_side_file("execution_plan.json");
    let note_bytes = read_side_file("REFILL_NOTE.md");
    let config_bytes = read_side_file("config.yaml");
    // An invalid side file is reported with its position and left out; the run is indexed without it.
    let mut invalid = |kind: &str, name: &str, what: &str, problem: run_files::JsonProblem| {
        warnings.push(
            Warning::error(
                kind,
                format!(
                    "{name} is not a valid {what} (column {}): {}; the run is indexed without it",
                    problem.column, problem.message
                ),
            )
            .run(run_id)
            .file(&format!("{}/{name}", dir.relative))
            .line(problem.line),
        );
    };
    let manifest = manifest_bytes.and_then(|bytes| {
        run_files::parse_manifest(&bytes)
            .map_err(|problem| invalid("invalid_manifest", "manifest.json", "manifest", problem))
            .ok()
    });
    let plan = plan_bytes.and_then(|bytes| {
        run_files::parse_plan(&bytes)
            .map_err(|problem| invalid("invalid_plan", "execution_plan.json", "plan", problem))
            .ok()
    });
    for (scope, status, count) in manifest
        .as_ref()
        .map(run_files::unknown_statuses)
        .unwrap_or_default()
    {
        let known = if scope == "run" {
            run_files::RUN_STATUSES.join(", ")
        } else {
            run_files::CELL_STATUSES.join(", ")
        };
        let whose = if scope == "run" {
            "the run's status".to_string()
        } else {
            format!("the status of {count} cell(s)")
        };
        warnings.push(
            Warning::warn(
                "unknown_manifest_status",
                format!(
                    "{whose} is `{}`, not one of {known}; it is shown as written and does not change how rows are \
                     counted",
                    status.escape_debug()
                ),
            )
            .run(run_id)
            .file(&format!("{}/manifest.json", dir.relative)),
        );
    }
    let config = config_bytes.and_then(|bytes| {
        environment::parse_config(&bytes)
            .map_err(|problem| {
                warnings.push(
                    Warning::warn(
                        "invalid_config",
                        format!(
                            "config.yaml is not valid YAML: {}; the run's max model length and extra \
                             arguments are taken as not stated",
                            problem.message
                        ),
                    )
                    .run(run_id)
                    .file(&format!("{}/config.yaml", dir.relative))
                    .at_line(problem.line),
                );
            })
            .ok()
    });
    SideFiles {
        manifest,
        plan,
        note_bytes,
        config,
        warnings,
    }
}

/// Run ids (`YYYYMMDD_HHMMSS_ffffff` or `YYYYMMDD_HHMMSS`) a note mentions, each with the 1-based line of its
/// first mention.
pub(super) fn run_ids_in(text: &str) -> BTreeMap<String, u64> {
    let mut found = BTreeMap::new();
    for (line_index, line) in text.lines().enumerate() {
        let bytes = line.as_bytes();
        let digits = |start: usize, count: usize| {
            bytes
                .get(start..start + count)
                .is_some_and(|slice| slice.iter().all(u8::is_ascii_digit))
        };
        let mut start = 0;
        while start + 15 <= bytes.len() {
            let boundary_before = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
            if boundary_before
                && digits(start, 8)
                && bytes[start + 8] == b'_'
                && digits(start + 9, 6)
            {
                let mut end = start + 15;
                if bytes.get(end) == Some(&b'_') && digits(end + 1, 6) {
                    end += 7;
                }
                found
                    .entry(line[start..end].to_string())
                    .or_insert(line_index as u64 + 1);
                start = end;
            } else {
                start += 1;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_mentions_carry_their_line() {
        let note = "# Refill\n\nRun 20260613_055519_963364 refilled master 20260612_212816_266127.\n\
                    Again 20260613_055519_963364; not an id: x20260613_055519_963364, 2026061_055519.\n";
        let names = run_ids_in(note);
        assert_eq!(
            names,
            BTreeMap::from([
                ("20260612_212816_266127".to_string(), 3),
                ("20260613_055519_963364".to_string(), 3),
            ])
        );
    }
}

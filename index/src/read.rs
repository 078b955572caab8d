//! Stage 2 of indexing: read every run found by discovery, each through its format, and every backup beside it,
//! in parallel, each on its own. Nothing here relates runs to each other; that is the lineage stage's work.

use crate::cache::{Reading, Session};
use crate::formats::{self, RunFormat};
use crate::mapping::Mapping;
use crate::parse::{HEAD_BYTES, outline};
use crate::records::{self, ids, verdict};
use crate::run::found::DetectedRun;
use crate::run::record::FileAt;
use crate::run::{BackupRead, IndexOptions, ReadContext, RunRead};
use crate::storage::Storage as _;
use cellscope_model::api::{RunStart, RunStartSource, Warning};
use rayon::prelude::*;
use std::collections::HashMap;

pub(crate) struct Reads {
    pub runs: Vec<RunRead>,
    pub backups: Vec<BackupRead>,
    /// Runs that were given another run's id and renamed ([`ids::separate_run_ids`]).
    pub warnings: Vec<Warning>,
}

/// Reads every run and backup discovery `found`, runs and backups in parallel, each through its format. A backup
/// is read with the run of its format it is a backup of, when that was found. With a `cache`, a run or backup
/// whose entry it trusts is taken from it instead.
pub(crate) fn read_all(
    found: &[DetectedRun],
    context: &ReadContext<'_>,
    cache: Option<&Session<'_>>,
) -> Reads {
    let (backups, mut runs): (Vec<&DetectedRun>, Vec<&DetectedRun>) =
        found.iter().partition(|run| run.backup_of.is_some());
    let mut runs: Vec<DetectedRun> = runs.drain(..).cloned().collect();
    let warnings = ids::separate_run_ids(context, &mut runs);
    let runs_by_id: HashMap<(&str, String), &DetectedRun> = runs
        .iter()
        .map(|run| ((run.format, ids::run_id(context, run)), run))
        .collect();
    let (runs, backups) = rayon::join(
        || {
            runs.par_iter()
                .filter_map(|run| {
                    let format = formats::by_name(run.format)?;
                    let mut read = match cache {
                        Some(cache) => cache.read_run(
                            context,
                            run,
                            Reading {
                                format: format.name(),
                                inputs: format.inputs(run, None),
                                read: &|context| format.read_run(context, run),
                            },
                        ),
                        None => format.read_run(context, run),
                    };
                    read.files = run.listed_files();
                    with_start(context.storage, run, &mut read);
                    Some(read)
                })
                .collect()
        },
        || {
            backups
                .par_iter()
                .filter_map(|backup| {
                    let format = formats::by_name(backup.format)?;
                    let of = backup.backup_of.as_ref()?;
                    let master = runs_by_id.get(&(backup.format, of.run.clone())).copied();
                    Some(match cache {
                        Some(cache) => cache.read_backup(
                            context,
                            backup,
                            master,
                            Reading {
                                format: format.name(),
                                inputs: format.inputs(backup, master),
                                read: &|context| format.read_backup(context, backup, master),
                            },
                        ),
                        None => format.read_backup(context, backup, master),
                    })
                })
                .collect()
        },
    );
    Reads {
        runs,
        backups,
        warnings,
    }
}

/// Gives a run whose files record no start the time its id names, else the earliest modification time of its
/// files (docs/definitions.md#run-start). Done after the cache, so a file time is always the file's as it is now.
fn with_start(storage: &dyn crate::storage::Storage, run: &DetectedRun, read: &mut RunRead) {
    if read.started.is_some() {
        return;
    }
    let name = read.id.rsplit('/').next().unwrap_or(&read.id);
    if let Some(at) = cellscope_model::runs::id_time(name) {
        read.started = Some(RunStart {
            at,
            source: RunStartSource::RunId {
                id: read.id.clone(),
            },
        });
        return;
    }
    read.started = run
        .files
        .iter()
        .filter_map(|file| {
            let at = crate::parse::time::modified(storage.stat(file).ok()?.modified?)?;
            Some((at, file))
        })
        .min()
        .map(|(at, file)| RunStart {
            at,
            source: RunStartSource::FileModified { file: file.clone() },
        });
}

/// Every run under `root` found and read as an index reads them (without a cache or `cellscope.toml`), for the
/// tests of the stages after this one.
#[cfg(test)]
pub(crate) fn read_root(root: &std::path::Path, options: &IndexOptions) -> Reads {
    let disk = crate::storage::LocalDisk::new(root);
    let discovery = crate::discover::discover(&disk, &formats::Registry);
    let context = ReadContext {
        storage: &disk,
        mapping: &Mapping::default(),
        options,
        progress: &crate::run::Quiet,
    };
    read_all(&discovery.runs, &context, None)
}

/// How one file of the data root is read and keyed, for `cellscope index --explain FILE`: its format, each
/// record's cell and, for every dimension, the field it was read from or the rule that inferred it.
pub fn explain(root: &std::path::Path, relative: &str) -> Result<String, String> {
    use std::fmt::Write as _;
    let disk = crate::storage::LocalDisk::new(root);
    let mut warnings = Vec::new();
    let mapping = crate::mapping::read_text(&disk, &mut warnings)
        .map(|text| Mapping::parse(&text, crate::mapping::FILE, &mut warnings))
        .unwrap_or_default();
    let head = disk
        .read_range(relative, 0..HEAD_BYTES)
        .and_then(|head| outline::head(&disk, relative, head, HEAD_BYTES))
        .map_err(|error| format!("cannot read {relative}: {error}"))?;
    let file = FileAt {
        storage: &disk,
        mapping: &mapping,
        path: relative,
        head: &head,
    };
    let examine = |list: &[&'static dyn RunFormat]| {
        list.iter()
            .map(|format| (format.name(), format.examine(&file)))
            .collect::<Vec<_>>()
    };
    let (by_name, by_content) = (examine(formats::BY_NAME), examine(formats::BY_CONTENT));
    let format = by_name
        .iter()
        .chain(&by_content)
        .find(|(_, verdict)| verdict.reads())
        .and_then(|(name, _)| formats::by_name(name))
        .ok_or_else(|| {
            verdict::explain_unread(relative, &by_name, &by_content)
                .trim_end()
                .to_string()
        })?;
    let mut out = String::new();
    let root_of_run = format.run_root(relative);
    let _ = writeln!(
        out,
        "{relative}\n  format: {}\n  run root: {}",
        format.name(),
        if root_of_run.is_empty() {
            "(the data root)"
        } else {
            &root_of_run
        }
    );
    if let Some(stated) = format.keys_stated() {
        let _ = writeln!(out, "  {stated}");
        return Ok(out);
    }
    let records = format.records(&FileAt::whole(&disk, &mapping, relative), &mut warnings);
    let run = DetectedRun {
        format: format.name(),
        root: root_of_run,
        files: vec![relative.to_string()],
        ..DetectedRun::default()
    };
    let options = IndexOptions::CELLS;
    let context = ReadContext {
        storage: &disk,
        mapping: &mapping,
        options: &options,
        progress: &crate::run::Quiet,
    };
    let run_id = ids::run_id(&context, &run);
    out.push_str(&records::explain::records_text(
        format.name(),
        relative,
        &run_id,
        records,
        &mapping,
        warnings,
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value as Json;
    use std::time::{Duration, SystemTime};

    /// vLLM's result of `data/fixtures/formats/vllm-plain` with its `date` replaced (`None`: removed), written to
    /// `directory/result.json` under a new root, modified at `modified_s` since 1970.
    fn result_at(directory: &str, date: Option<&str>, modified_s: u64) -> tempfile::TempDir {
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../data/fixtures/formats/vllm-plain/openai-infqps-concurrency1-Qwen3-8B-20260302-090000.json",
        );
        let mut result: Json = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
        match date {
            Some(date) => result["date"] = Json::from(date),
            None => {
                result.as_object_mut().unwrap().remove("date");
            }
        }
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join(directory);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("result.json");
        std::fs::write(&path, serde_json::to_vec(&result).unwrap()).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(modified_s))
            .unwrap();
        root
    }

    fn only_run(root: &tempfile::TempDir) -> RunRead {
        let mut reads = read_root(root.path(), &IndexOptions::default());
        assert_eq!(reads.runs.len(), 1);
        reads.runs.remove(0)
    }

    #[test]
    fn a_recorded_start_is_read_from_the_file_and_key() {
        let root = result_at("plain", Some("20260302-090000"), 1_767_323_045);
        let read = only_run(&root);
        let started = read.started.expect("a start");
        assert_eq!(started.at, "2026-03-02T09:00:00Z");
        assert_eq!(
            started.source,
            RunStartSource::Recorded {
                file: "plain/result.json".into(),
                key: "date".into()
            }
        );
    }

    #[test]
    fn without_a_recorded_start_the_files_modification_time_is_taken_and_said_to_be() {
        // 1767323045 s since 1970 is 2026-01-02T03:04:05Z (`date -u -d @1767323045`).
        let root = result_at("plain", None, 1_767_323_045);
        let read = only_run(&root);
        assert_eq!(
            read.started,
            Some(RunStart {
                at: "2026-01-02T03:04:05Z".into(),
                source: RunStartSource::FileModified {
                    file: "plain/result.json".into()
                },
            })
        );
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    }

    #[test]
    fn a_time_in_the_run_id_comes_before_the_file_time() {
        let root = result_at("20260105_101500", None, 1_767_323_045);
        let read = only_run(&root);
        let started = read.started.expect("a start");
        assert_eq!(started.at, "2026-01-05T10:15:00Z");
        assert!(matches!(started.source, RunStartSource::RunId { .. }));
    }

    #[test]
    fn an_unreadable_time_is_warned_of_by_file_and_key_and_the_file_time_taken() {
        let root = result_at("plain", Some("20261340-000000"), 1_767_323_045);
        let read = only_run(&root);
        let warning = read
            .warnings
            .iter()
            .find(|warning| warning.kind == "unreadable_time")
            .unwrap_or_else(|| panic!("{:?}", read.warnings));
        assert_eq!(warning.file.as_deref(), Some("plain/result.json"));
        assert_eq!(warning.line, Some(1));
        assert!(warning.message.contains("`date`"), "{}", warning.message);
        assert!(warning.message.contains("20261340-000000"));
        assert_eq!(
            read.started.map(|started| (started.at, started.source)),
            Some((
                "2026-01-02T03:04:05Z".into(),
                RunStartSource::FileModified {
                    file: "plain/result.json".into()
                }
            ))
        );
    }
}

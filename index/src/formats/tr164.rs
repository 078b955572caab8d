//! TR164 run directories (`metrics.csv` plus manifest, plan, refill note, config and backups) behind the
//! [`RunFormat`] seam. A run is found by the names in its directory ([`listing`]) and read here ([`read_run`]): its
//! metrics file ([`metrics`], parsed by [`metrics_csv`]) beside its side files (`side_files`: [`run_files`] and
//! [`environment`] parse them); a backup is read in [`backups`] and compared with its master by [`splice`]; [`rows`]
//! reads a cell's rows back for `/api/requests`. Its rows carry their run's id, which the lineage stage reads to
//! find refills. Every file is read through [`Storage`] by its path relative to the data root; on a local disk the
//! metrics file is mapped or read in pieces ([`Storage::local_file`]).

pub(super) mod backups;
pub(super) mod environment;
#[cfg(feature = "fuzzing")]
pub(crate) mod fuzzing;
mod listing;
pub(super) mod metrics;
pub(super) mod metrics_csv;
pub(super) mod rows;
pub(super) mod run_files;
mod side_files;
pub(super) mod splice;

use super::RunFormat;
use crate::records::verdict::{Nearness, Verdict};
use crate::run::found::{DetectedRun, Listed};
use crate::run::record::{FileAt, RunRecord};
use crate::run::rows::{CellRows, RowsError};
use crate::run::{BackupRead, IndexOptions, Inputs, Note, Progress, ReadContext, RunRead};
use crate::storage::{self, Entry, Storage};
use cellscope_model::api::{RunStart, Warning};
use cellscope_model::requests::RequestRow;
use listing::{METRICS_NAMES, metrics_name_of};
use side_files::SideFiles;
use std::collections::BTreeSet;

/// The format's name.
const NAME: &str = "tr164";

/// The files beside a run's metrics file that its read opens, relative to its directory.
const SIDE_FILES: [&str; 4] = [
    "manifest.json",
    "execution_plan.json",
    "REFILL_NOTE.md",
    "config.yaml",
];

/// A directory holding a `metrics.csv` (or, without one, a `metrics.csv.gz` or `metrics.csv.zst`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RunDir {
    /// The directory name.
    pub run_id: String,
    /// The directory relative to the data root, with `/` separators.
    pub relative: String,
    /// The metrics file's name: one of the names a metrics file may have.
    pub metrics_name: &'static str,
}

impl RunDir {
    /// The run directory of a run discovery found (its one file is the metrics file, plain or compressed).
    fn of(run: &DetectedRun) -> RunDir {
        RunDir {
            run_id: match storage::file_name(&run.root) {
                "" => "root".to_string(),
                name => name.to_string(),
            },
            relative: run.root.clone(),
            metrics_name: metrics_name_of(run.files.first().map_or("", String::as_str)),
        }
    }

    /// The metrics file relative to the data root.
    pub(super) fn metrics_relative(&self) -> String {
        storage::join(&self.relative, self.metrics_name)
    }
}

/// `<run id>_BACKUP_<label>/`: the untouched state of a run before a splice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct BackupDir {
    pub master_run_id: String,
    pub label: String,
    /// The directory relative to the data root.
    pub relative: String,
}

pub(super) struct Tr164;

/// The format, as the registry lists it.
pub(crate) static FORMAT: &dyn RunFormat = &Tr164;

impl RunFormat for Tr164 {
    fn name(&self) -> &'static str {
        NAME
    }

    /// A file named `metrics.csv` (a header that is not TR164's is reported by the reader, with the columns it
    /// lacks, rather than passed over in silence).
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        if storage::file_name(file.path) == METRICS_NAMES[0] {
            Verdict::Reads
        } else {
            Verdict::declines(
                Nearness::OtherKind,
                "a file not named `metrics.csv`, which a TR164 run directory's metrics are",
            )
        }
    }

    fn run_root(&self, path: &str) -> String {
        storage::parent(path).to_string()
    }

    fn records(&self, _: &FileAt<'_>, _: &mut Vec<Warning>) -> Vec<RunRecord> {
        Vec::new()
    }

    fn read_run(&self, context: &ReadContext<'_>, run: &DetectedRun) -> RunRead {
        read_run(
            context.storage,
            RunDir::of(run),
            context.options,
            context.progress,
        )
    }

    /// TR164 rows are read back by their byte offsets in `metrics.csv` (and the backup for replaced rows).
    fn read_rows(
        &self,
        storage: &dyn Storage,
        cell: &CellRows,
    ) -> Result<Vec<RequestRow>, RowsError> {
        rows::read(storage, cell)
    }

    fn listing(&self, directory: &str, entries: &[Entry]) -> Listed {
        listing::listing(directory, entries)
    }

    /// A run's metrics file (under the name discovery found: plain or compressed) and its side files, which may be
    /// absent; a backup's metrics file and its master's. `cellscope.toml` maps nothing of a TR164 run.
    fn inputs(&self, run: &DetectedRun, master: Option<&DetectedRun>) -> Inputs {
        let files = if run.backup_of.is_some() {
            std::iter::once(run)
                .chain(master)
                .map(|run| (storage::join(&run.root, METRICS_NAMES[0]), true))
                .collect()
        } else {
            run.files
                .iter()
                .take(1)
                .map(|metrics| (metrics.clone(), true))
                .chain(
                    SIDE_FILES
                        .iter()
                        .map(|name| (storage::join(&run.root, name), false)),
                )
                .collect()
        };
        Inputs {
            files,
            mapping: false,
        }
    }

    fn read_backup(
        &self,
        context: &ReadContext<'_>,
        backup: &DetectedRun,
        master: Option<&DetectedRun>,
    ) -> BackupRead {
        backups::read_backup(
            context.storage,
            listing::backup_of(backup),
            master.map(RunDir::of).as_ref(),
            context.options,
            context.progress,
        )
    }

    fn keys_stated(&self) -> Option<&'static str> {
        Some(
            "every key dimension is a column of the file (run_id, suite, phase, backend, model, workload, n_agents, \
             rep)",
        )
    }
}

/// One run directory read: its metrics file and, beside it, its side files; the run's environment from both.
pub(super) fn read_run(
    storage: &dyn Storage,
    dir: RunDir,
    options: &IndexOptions,
    progress: &dyn Progress,
) -> RunRead {
    let run_id = dir.run_id.clone();
    // The side files (manifest, plan, note, config; about a megabyte of JSON per TR164 run) are read and parsed
    // beside the metrics, not after them: the last run's were a serial tail of a cold index. Each half keeps its
    // own warnings, joined in the order one pass after the other gave.
    let ((metrics, digest, mut warnings), side) = rayon::join(
        || metrics::read_run_metrics(storage, &dir, &run_id, options, progress),
        || side_files::read_side_files(storage, &dir, &run_id),
    );
    let SideFiles {
        manifest,
        plan,
        note_bytes,
        config,
        warnings: side_warnings,
    } = side;
    warnings.extend(side_warnings);
    let backends: BTreeSet<String> = metrics
        .as_ref()
        .map(|parsed| {
            parsed
                .cells
                .iter()
                .map(|(coordinates, _)| coordinates.backend.clone())
                .collect()
        })
        .unwrap_or_default();
    let environment = environment::environment(
        manifest
            .as_ref()
            .and_then(|manifest| manifest.environment.as_ref()),
        manifest
            .as_ref()
            .and_then(|manifest| manifest.max_model_len.as_ref()),
        config.as_ref(),
        &backends,
    );
    let note = note_bytes.map(|bytes| {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Note {
            path: format!("{}/REFILL_NOTE.md", dir.relative),
            names: side_files::run_ids_in(&text),
            text,
        }
    });
    let manifest_path = format!("{}/manifest.json", dir.relative);
    let mut time_warnings = Vec::new();
    let started = manifest
        .as_ref()
        .and_then(|manifest| {
            crate::parse::time::started(
                manifest.started_at.as_ref(),
                crate::parse::time::Clock::Iso,
                "started_at",
                &manifest_path,
                &mut time_warnings,
            )
        })
        .map(|started| RunStart::recorded(started.at, &manifest_path, &started.key));
    warnings.extend(
        time_warnings
            .into_iter()
            .map(|warning| warning.run(&run_id)),
    );
    RunRead {
        id: run_id,
        rows_file: dir.metrics_relative(),
        root: dir.relative,
        metrics,
        digest,
        manifest,
        plan,
        note,
        files: Vec::new(),
        environment,
        started,
        warnings,
        format: NAME,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run directory `r1` with one row and the manifest `manifest`, read as an index reads it.
    fn read_with_manifest(manifest: &str) -> RunRead {
        let root = tempfile::tempdir().unwrap();
        let run = root.path().join("r1");
        std::fs::create_dir(&run).unwrap();
        std::fs::write(
            run.join("metrics.csv"),
            "run_id,suite,phase,backend,model,workload,n_agents,rep,agent_id,request_id,request_sequence,wall_ms,prompt_tokens,completion_tokens,submit_time_s,complete_time_s,status\n\
             r1,s,p,b,m,w,1,0,1,1,1,10.0,5,5,1.0,2.0,ok\n",
        )
        .unwrap();
        std::fs::write(run.join("manifest.json"), manifest).unwrap();
        crate::read::read_root(root.path(), &IndexOptions::default())
            .runs
            .remove(0)
    }

    #[test]
    fn the_manifests_start_is_the_runs_in_utc() {
        // 12:04:28 at UTC−4 is 16:04:28 UTC.
        let read = read_with_manifest(
            r#"{"status": "complete", "started_at": "2026-05-31T12:04:28-04:00"}"#,
        );
        assert_eq!(
            read.started,
            Some(RunStart::recorded(
                "2026-05-31T16:04:28Z".into(),
                "r1/manifest.json",
                "started_at"
            ))
        );
        let read = read_with_manifest(r#"{"status": "complete", "started_at": "at dawn"}"#);
        assert!(
            read.started
                .as_ref()
                .is_some_and(|started| started.is_file_time()),
            "{:?}",
            read.started
        );
        let warning = &read.warnings[0];
        assert_eq!(
            (
                warning.kind.as_str(),
                warning.file.as_deref(),
                warning.run.as_deref()
            ),
            ("unreadable_time", Some("r1/manifest.json"), Some("r1"))
        );
        assert!(warning.message.contains("`started_at`"));
    }

    #[test]
    fn a_run_directory_is_read_with_its_side_files() {
        let root = tempfile::tempdir().unwrap();
        let run = root.path().join("r1");
        std::fs::create_dir(&run).unwrap();
        std::fs::write(
            run.join("metrics.csv"),
            "run_id,suite,phase,backend,model,workload,n_agents,rep,agent_id,request_id,request_sequence,wall_ms,prompt_tokens,completion_tokens,submit_time_s,complete_time_s,status\n\
             r1,s,p,b,m,w,1,0,1,1,1,10.0,5,5,1.0,2.0,ok\n",
        )
        .unwrap();
        std::fs::write(run.join("manifest.json"), "{ not json").unwrap();
        std::fs::write(
            run.join("REFILL_NOTE.md"),
            "refill 20260613_055519_963364\n",
        )
        .unwrap();
        let disk = crate::storage::LocalDisk::new(root.path());
        let reads = crate::read::read_root(root.path(), &IndexOptions::default());
        let read = &reads.runs[0];
        assert_eq!((read.id.as_str(), read.format), ("r1", NAME));
        let parsed = read.metrics.as_ref().unwrap();
        assert_eq!(parsed.cells.len(), 1);
        assert_eq!(
            read.digest.bytes,
            std::fs::metadata(run.join("metrics.csv")).unwrap().len()
        );
        assert!(read.digest.md5.is_some());
        assert!(read.manifest.is_none());
        assert_eq!(read.warnings.len(), 1);
        assert_eq!(
            (
                read.warnings[0].kind.as_str(),
                read.warnings[0].file.as_deref(),
                read.warnings[0].line
            ),
            ("invalid_manifest", Some("r1/manifest.json"), Some(1))
        );
        let note = read.note.as_ref().unwrap();
        assert_eq!(note.path, "r1/REFILL_NOTE.md");
        assert_eq!(note.names["20260613_055519_963364"], 1);
        assert_eq!(
            read.files,
            ["REFILL_NOTE.md", "manifest.json", "metrics.csv"]
        );
        // The row at the cell's first offset, read back, is on the file's second line.
        let rows = rows::read(
            &disk,
            &CellRows {
                file: read.rows_file.clone(),
                file_bytes: read.digest.bytes,
                offsets: vec![parsed.cells[0].1.row_offsets[0]],
                ..CellRows::default()
            },
        )
        .unwrap();
        assert_eq!(rows[0].line, 2);
    }
}

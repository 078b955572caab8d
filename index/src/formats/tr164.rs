//! TR164 run directories (`metrics.csv` plus manifest, plan, refill note, config and backups) behind the
//! [`RunFormat`] seam. A run is read here ([`read_run`]): its metrics file ([`metrics`], parsed by
//! [`metrics_csv`]) beside its side files (`side_files`: [`run_files`] and [`environment`] parse them); a backup
//! is read in [`backups`] and compared with its master by [`splice`]; [`rows`] reads a cell's rows back for
//! `/api/requests`. Refill lineage is TR164's own and is decided in the lineage stage. Every file is read through
//! [`Storage`] by its path relative to the data root; on a local disk the metrics file is mapped or read in pieces
//! ([`Storage::local_file`]).

pub mod backups;
pub mod environment;
pub mod metrics;
pub mod metrics_csv;
pub mod rows;
pub mod run_files;
mod side_files;
pub mod splice;

use super::RunFormat;
use crate::records::verdict::{Nearness, Verdict};
use crate::run::found::{DetectedRun, RunDir, metrics_name_of};
use crate::run::record::{FileAt, RunRecord};
use crate::run::rows::{CellRows, RowsError};
use crate::run::{IndexOptions, Progress, ReadContext, RunRead};
use crate::storage::{self, EntryKind, Storage};
use cellscope_model::api::Warning;
use cellscope_model::requests::RequestRow;
use side_files::SideFiles;
use std::collections::BTreeSet;

pub struct Tr164;

impl RunFormat for Tr164 {
    fn name(&self) -> &'static str {
        "tr164"
    }

    /// A file named `metrics.csv` (a header that is not TR164's is reported by the reader, with the columns it
    /// lacks, rather than passed over in silence).
    fn examine(&self, file: &FileAt<'_>) -> Verdict {
        if storage::file_name(file.path) == "metrics.csv" {
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
        let name = storage::file_name(&run.root);
        // Discovery named the metrics file (plain or compressed) as the run's one file.
        let metrics_name = metrics_name_of(run.files.first().map_or("", String::as_str));
        let dir = RunDir {
            run_id: if name.is_empty() {
                "root".to_string()
            } else {
                name.to_string()
            },
            relative: run.root.clone(),
            metrics_name,
        };
        read_run(context.storage, dir, context.options, context.progress)
    }

    /// TR164 rows are read back by their byte offsets in `metrics.csv` (and the backup for replaced rows).
    fn read_rows(
        &self,
        storage: &dyn Storage,
        cell: &CellRows,
    ) -> Result<Vec<RequestRow>, RowsError> {
        rows::read(storage, cell)
    }
}

/// One run directory read: its metrics file and, beside it, its side files; the run's environment from both.
pub fn read_run(
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
    let refill_note = note_bytes.map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let note_names = refill_note
        .as_deref()
        .map(side_files::run_ids_in)
        .unwrap_or_default();
    let files = list_files(storage, &dir.relative);
    RunRead {
        dir,
        metrics,
        digest,
        manifest,
        plan,
        refill_note,
        note_names,
        files,
        environment,
        warnings,
        format: "tr164",
    }
}

/// The names in a run directory (relative to the data root), sorted, sub-directories ending with `/`.
pub(crate) fn list_files(storage: &dyn Storage, directory: &str) -> Vec<String> {
    let Ok(entries) = storage.list(directory) else {
        return Vec::new();
    };
    let mut files: Vec<String> = entries
        .into_iter()
        .map(|entry| {
            if entry.kind == EntryKind::Directory {
                format!("{}/", entry.name)
            } else {
                entry.name
            }
        })
        .collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::found::RunDir;

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
        let dir = RunDir {
            run_id: "r1".into(),
            relative: "r1".into(),
            metrics_name: "metrics.csv",
        };
        let disk = crate::storage::LocalDisk::new(root.path());
        let read = read_run(&disk, dir, &IndexOptions::default(), &crate::run::Quiet);
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
        assert_eq!(read.note_names["20260613_055519_963364"], 1);
        assert_eq!(
            read.files,
            ["REFILL_NOTE.md", "manifest.json", "metrics.csv"]
        );
        let offset = parsed.cells[0].1.row_offsets[0];
        assert_eq!(
            metrics::lines_in_file(&disk, "r1/metrics.csv", &[offset]),
            [Some(2)]
        );
    }
}

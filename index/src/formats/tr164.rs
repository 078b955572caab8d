//! TR164 run directories (`metrics.csv` plus manifest, plan, refill note, config and backups) behind the
//! [`RunFormat`] seam: [`read`] reads a run and a backup, [`metrics_csv`] parses the metrics file, [`run_files`]
//! and [`environment`] the side files, [`splice`] compares a master with its backup and [`rows`] reads a cell's
//! rows back. Refill lineage is TR164's own and is decided in the lineage stage. Every file is read through
//! [`Storage`] by its path relative to the data root; on a local disk the metrics file is mapped or read in pieces
//! ([`Storage::local_file`]).

pub mod environment;
pub mod metrics_csv;
pub mod read;
pub mod rows;
pub mod run_files;
pub mod splice;

use super::{RunFormat, RunRecord};
use crate::run::found::{DetectedRun, RunDir, metrics_name_of};
use crate::run::rows::{CellRows, RowsError};
use crate::run::{ReadContext, RunRead};
use crate::storage::{self, Storage};
use cellscope_model::api::Warning;
use cellscope_model::requests::RequestRow;

pub struct Tr164;

impl RunFormat for Tr164 {
    fn name(&self) -> &'static str {
        "tr164"
    }

    /// A file named `metrics.csv` (a header that is not TR164's is reported by the reader, with the columns it
    /// lacks, rather than passed over in silence).
    fn detect(&self, path: &str, _head: &[u8]) -> bool {
        storage::file_name(path) == "metrics.csv"
    }

    fn run_root(&self, path: &str) -> String {
        storage::parent(path).to_string()
    }

    fn records(&self, _: &dyn Storage, _: &str, _: &mut Vec<Warning>) -> Vec<RunRecord> {
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
        read::read_run(context.storage, dir, context.options, context.progress)
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

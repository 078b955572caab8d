//! `cellscope requests`: the request rows of one cell, current and replaced by a refill, as `/api/requests`
//! gives them.

use super::cells::write_export;
use super::filters::{Filters, refuse_unstated_params};
use super::{CacheArgs, DataRoot, load_root};
use anyhow::Context;
use cellscope::export::{self, Format};
use cellscope_index::IndexOptions;
use cellscope_model::query::{Endpoint, Query};
use cellscope_model::requests::requests_to_batch;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub(super) struct RequestsArgs {
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    /// The cell's key, `run/suite/phase/backend/model/workload/n=N/rep=R` (a load may also be `rate=R`), as
    /// `/api/requests?cell=` takes it; or name it by `--run --phase --model --workload --load --rep` (and
    /// `--suite`, `--backend` or `--param` when those tell cells apart).
    #[arg(long)]
    cell: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    /// Output file (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    #[command(flatten)]
    filters: Filters,
    #[command(flatten)]
    cache: CacheArgs,
}

pub(super) fn run(arguments: RequestsArgs) -> anyhow::Result<ExitCode> {
    let pairs: Vec<(String, String)> = arguments
        .cell
        .iter()
        .map(|cell| ("cell".to_string(), cell.clone()))
        .collect();
    let mut query = Query::from_pairs(&pairs, Endpoint::Requests)?;
    arguments.filters.apply(&mut query)?;
    let request = query.cell_request()?;
    let root = DataRoot::open(arguments.data_dir, &arguments.cache)?;
    let index = load_root(&root, &arguments.cache, &IndexOptions::CELLS)?;
    refuse_unstated_params(&query, &index.cells)?;
    let key = request.find_in(&index.rows)?;
    let disk = cellscope_index::storage::LocalDisk::new(&index.root);
    let rows = cellscope_index::read_rows(&disk, &index.rows[key])
        .with_context(|| format!("reading the rows of {key}"))?;
    let batch = requests_to_batch(&rows)?;
    write_export(
        &export::encode_batch(&batch, arguments.format)?,
        arguments.format,
        arguments.output.as_deref(),
    )?;
    Ok(ExitCode::SUCCESS)
}

//! `cellscope requests`: the request rows of one cell, current and replaced by a refill, as `/api/requests`
//! gives them.

use super::cells::write_export;
use super::query_flags::{self, QueryFlags, refuse_unstated_params};
use super::{CacheArgs, DataRoot, load_root};
use anyhow::Context;
use cellscope::export::{self, Format};
use cellscope_index::IndexOptions;
use cellscope_model::requests::requests_to_batch;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub(super) struct RequestsArgs {
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    /// Output file (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The cell, by its key (`--cell`) or by its dimensions (`--suite`, `--backend` or `--param` when those tell
    /// cells apart), as `/api/requests` takes it.
    #[command(flatten)]
    query: QueryFlags<query_flags::Requests>,
    #[command(flatten)]
    cache: CacheArgs,
}

pub(super) fn run(arguments: RequestsArgs) -> anyhow::Result<ExitCode> {
    let query = arguments.query.query;
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

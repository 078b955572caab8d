//! `cellscope compare`: the head-to-head of two values of one dimension, as the model's typed query asks it (the
//! one `/api/compare` reads) and as the model lays it out.

use super::query_flags::{self, QueryFlags};
use super::{CacheArgs, DataRoot, load_root};
use anyhow::Context;
use cellscope::terminal::printable;
use cellscope_index::IndexOptions;
use cellscope_model::compare::CompareQuery;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub(super) struct CompareArgs {
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    /// The comparison and its slice, as `/api/compare` takes them.
    #[command(flatten)]
    query: QueryFlags<query_flags::Compare>,
    /// Print every group, pair and dropped pair as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    cache: CacheArgs,
}

pub(super) fn run(arguments: CompareArgs) -> anyhow::Result<ExitCode> {
    let root = DataRoot::open(arguments.data_dir.clone(), &arguments.cache)?;
    let typed = arguments.query.query;
    let query = CompareQuery::from_query(&typed)?;
    let index = load_root(&root, &arguments.cache, &IndexOptions::CELLS)?;
    query_flags::refuse_unstated_params(&typed, &index.cells)?;
    let cells = cellscope_model::explore::working_cells(
        &index.cells,
        &index.pre_refill_cells,
        &query.what_if,
    );
    let comparison = query.run(&cells)?;
    let confounders =
        cellscope_model::compare::confounders::confounders(&comparison, &cells, &index.runs);
    let mut stdout = std::io::stdout().lock();
    if arguments.json {
        let body = cellscope_model::api::CompareBody {
            comparison,
            confounders,
        };
        serde_json::to_writer_pretty(&mut stdout, &body).context("writing JSON")?;
        writeln!(stdout)?;
    } else {
        let text = cellscope_model::compare::text::render_report(&comparison, &confounders);
        stdout.write_all(printable(&text).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

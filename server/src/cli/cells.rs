//! `cellscope cells`: one row per cell, as CSV, JSON or Arrow IPC, to a file or standard output; sliced by the
//! same filters as `/api/cells`.

use super::filters::{Filters, refuse_unstated_params};
use super::{CacheArgs, DataRoot, load_root};
use anyhow::Context;
use cellscope::export::{self, Format};
use cellscope::terminal::{for_standard_output, printable};
use cellscope_index::IndexOptions;
use cellscope_model::CellSummary;
use cellscope_model::filter::{dimension_counts, dimension_values};
use cellscope_model::query::{Endpoint, Query};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub(super) struct CellsArgs {
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    #[arg(long, value_enum)]
    format: Format,
    /// Output file (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Only cells of these statuses, comma-separated: clean, partial, failed, skipped, not_run.
    #[arg(long, value_delimiter = ',')]
    status: Vec<String>,
    /// `pre_refill`: the refilled cells as they were before the refill. The table lists every cell with its
    /// status and exclusions whatever the other toggles, so they are refused here.
    #[arg(long, value_delimiter = ',')]
    include: Vec<String>,
    #[command(flatten)]
    filters: Filters,
    #[command(flatten)]
    cache: CacheArgs,
}

pub(super) fn run(arguments: CellsArgs) -> anyhow::Result<ExitCode> {
    let query = typed_query(&arguments)?;
    let pre_refill = query.cells_pre_refill()?;
    let root = DataRoot::open(arguments.data_dir, &arguments.cache)?;
    let index = load_root(&root, &arguments.cache, &IndexOptions::CELLS)?;
    for warning in &index.warnings {
        eprintln!("{}", printable(&warning.to_string()));
    }
    refuse_unstated_params(&query, &index.cells)?;
    let known = dimension_values(&dimension_counts(&index.cells));
    let keeps = query.cells_selector(&known)?;
    let source = if pre_refill {
        &index.pre_refill_cells
    } else {
        &index.cells
    };
    let selected: Vec<CellSummary> = source.iter().filter(|cell| keeps(cell)).cloned().collect();
    write_export(
        &export::encode(&selected, arguments.format)?,
        arguments.format,
        arguments.output.as_deref(),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// The query the arguments ask, read by the same rules as `/api/cells`'s parameters.
fn typed_query(arguments: &CellsArgs) -> anyhow::Result<Query> {
    let pairs: Vec<(String, String)> = [
        ("status", &arguments.status),
        ("include", &arguments.include),
    ]
    .into_iter()
    .filter(|(_, values)| !values.is_empty())
    .map(|(name, values)| (name.to_string(), values.join(",")))
    .collect();
    let mut query = Query::from_pairs(&pairs, Endpoint::Cells)?;
    arguments.filters.apply(&mut query)?;
    Ok(query)
}

/// Writes an export to `output`, or to standard output: there CSV written to a terminal has its control
/// characters shown as escapes (JSON writes them as escapes itself, Arrow is binary); into a pipe or a file
/// the bytes are the export's.
pub(super) fn write_export(
    bytes: &[u8],
    format: Format,
    output: Option<&Path>,
) -> anyhow::Result<()> {
    match output {
        Some(path) => {
            std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
        }
        None => {
            let stdout = std::io::stdout();
            let terminal = format == Format::Csv && stdout.is_terminal();
            stdout
                .lock()
                .write_all(&for_standard_output(bytes, terminal))
                .context("writing to standard output")
        }
    }
}

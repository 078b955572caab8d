//! `cellscope cells`: one row per cell, as CSV, JSON or Arrow IPC, to a file or standard output; sliced by the
//! same filters as `/api/cells`.

use super::query_flags::{self, QueryFlags, refuse_unstated_params};
use super::{CacheArgs, DataRoot, load_root};
use anyhow::Context;
use cellscope::export::{self, Format};
use cellscope::terminal::{for_standard_output, printable};
use cellscope_index::IndexOptions;
use cellscope_model::CellSummary;
use cellscope_model::filter::{dimension_counts, dimension_values};
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
    /// The slice, as `/api/cells` takes it. Of the toggles only `--include pre_refill` (the refilled cells as
    /// they were before the refill) changes the table, which lists every cell with its status and exclusions.
    #[command(flatten)]
    query: QueryFlags<query_flags::Cells>,
    #[command(flatten)]
    cache: CacheArgs,
}

pub(super) fn run(arguments: CellsArgs) -> anyhow::Result<ExitCode> {
    let query = arguments.query.query;
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

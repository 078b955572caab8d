//! `cellscope cells`: one row per cell, as CSV, JSON or Arrow IPC, to a file or standard output.

use super::{CacheArgs, DataRoot, load_root};
use anyhow::Context;
use cellscope::export::{self, Format};
use cellscope::terminal::{for_standard_output, printable};
use cellscope_index::IndexOptions;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
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
    #[command(flatten)]
    cache: CacheArgs,
}

pub(super) fn run(arguments: CellsArgs) -> anyhow::Result<ExitCode> {
    let CellsArgs {
        data_dir,
        format,
        output,
        cache,
    } = arguments;
    let root = DataRoot::open(data_dir, &cache)?;
    let index = load_root(&root, &cache, &IndexOptions::CELLS)?;
    for warning in &index.warnings {
        eprintln!("{}", printable(&warning.to_string()));
    }
    let bytes = export::encode(&index.cells, format)?;
    match output {
        Some(path) => {
            std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        }
        None => {
            let stdout = std::io::stdout();
            // CSV carries the data's text as it is; JSON writes the C0 controls as escapes itself, Arrow is binary.
            let terminal = format == Format::Csv && stdout.is_terminal();
            stdout
                .lock()
                .write_all(&for_standard_output(&bytes, terminal))
                .context("writing to standard output")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

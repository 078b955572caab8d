//! `cellscope bundle`: one self-contained HTML file that reopens a view with no server.

use super::{CacheArgs, DataRoot, load_root, resolved};
use anyhow::{Context, bail};
use cellscope::terminal::printable;
use cellscope_index::IndexOptions;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub(super) struct BundleArgs {
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    /// The view, as the query string of an app link (`view=curves&model=qwen2.5-7b`, with or without `?`);
    /// empty for the default view.
    #[arg(long, default_value = "")]
    view: String,
    /// The HTML file to write (never inside the data root).
    #[arg(short, long, default_value = "cellscope-audit.html")]
    output: PathBuf,
    #[command(flatten)]
    cache: CacheArgs,
}

pub(super) fn run(arguments: BundleArgs) -> anyhow::Result<ExitCode> {
    let BundleArgs {
        data_dir,
        view,
        output,
        cache,
    } = arguments;
    let data_root = DataRoot::open(data_dir, &cache)?;
    let root = data_root
        .path
        .canonicalize()
        .with_context(|| format!("cannot index {}", data_root.path.display()))?;
    let target = resolved(&output)?;
    if target.starts_with(&root) {
        bail!(
            "{} is inside the data root {}, which cellscope never writes to; write the bundle elsewhere with \
             -o FILE",
            output.display(),
            root.display()
        );
    }
    let index = load_root(&data_root, &cache, &IndexOptions::default())?;
    for warning in &index.warnings {
        eprintln!("{}", printable(&warning.to_string()));
    }
    let snapshot =
        cellscope::http::snapshot::Snapshot::new(index, true).map_err(anyhow::Error::msg)?;
    let made_at_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as u64);
    let bundle = cellscope::bundle::build(&snapshot, &view, made_at_unix_ms)?;
    for (key, reason) in &bundle.unreadable {
        eprintln!(
            "{}",
            printable(&format!("rows of {key} left out: {reason}"))
        );
    }
    std::fs::write(&output, &bundle.html)
        .with_context(|| format!("writing {}", output.display()))?;
    println!(
        "wrote {}: {:.1} MB, snapshot {}, {} cells in view, request rows of {}{}",
        output.display(),
        bundle.html.len() as f64 / 1e6,
        snapshot.id,
        bundle.cells_in_view,
        bundle.cells_with_rows,
        if bundle.cells_with_rows < bundle.cells_in_view {
            format!(
                " (the rest left out beyond {} MB of rows; narrow the view for all)",
                cellscope::bundle::MAX_ROW_BYTES >> 20
            )
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}

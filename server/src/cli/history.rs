//! `cellscope history`: every configuration × workload × load of a data root across its runs, with change points
//! and the regression flag, as text, JSON or a Markdown table; `--strict` fails a CI job on any regression.

use super::query_flags::{self, QueryFlags, refuse_unstated_params};
use super::{CacheArgs, DataRoot, load_root};
use anyhow::Context;
use cellscope::terminal::printable;
use cellscope_index::IndexOptions;
use cellscope_model::filter::{dimension_counts, dimension_values};
use cellscope_model::history::{HistoryQuery, report};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// How the Histories are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Report {
    /// One line per History, regressed ones first.
    Text,
    /// A Markdown table, for a CI job's summary or a pull-request comment.
    Markdown,
    /// Every History with its points and change points, as JSON (the same as `--json`).
    Json,
}

#[derive(clap::Args)]
pub(super) struct HistoryArgs {
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    /// The slice, the metric and the method's and rule's parameters, as `/api/history` takes them.
    #[command(flatten)]
    query: QueryFlags<query_flags::History>,
    /// Print every History as JSON (`--format json`).
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// How to write the Histories.
    #[arg(long, value_enum, default_value_t = Report::Text)]
    format: Report,
    /// With `--format markdown`: the address the app is served at (`https://bench.example.org`), so that each
    /// row links to its History.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Exit with status 1 when any History is regressed (for CI jobs).
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    cache: CacheArgs,
}

pub(super) fn run(arguments: HistoryArgs) -> anyhow::Result<ExitCode> {
    let typed = arguments.query.query;
    let query = HistoryQuery::from_query(&typed)?;
    let root = DataRoot::open(arguments.data_dir.clone(), &arguments.cache)?;
    let index = load_root(&root, &arguments.cache, &IndexOptions::CELLS)?;
    refuse_unstated_params(&typed, &index.cells)?;
    let known = dimension_values(&dimension_counts(&index.cells));
    let keeps = typed.cells_selector(&known)?;
    let cells = cellscope_model::explore::working_cells(
        &index.cells,
        &index.pre_refill_cells,
        &typed.what_if,
    );
    let kept: Vec<_> = cells.into_iter().filter(|cell| keeps(cell)).collect();
    let body = query.run(&kept, &index.runs);
    let mut stdout = std::io::stdout().lock();
    let format = if arguments.json {
        Report::Json
    } else {
        arguments.format
    };
    match format {
        Report::Json => {
            serde_json::to_writer_pretty(&mut stdout, &body).context("writing JSON")?;
            writeln!(stdout)?;
        }
        Report::Text => stdout.write_all(printable(&report::render_text(&body)).as_bytes())?,
        Report::Markdown => {
            let table = report::render_markdown(&body, &query, arguments.base_url.as_deref());
            stdout.write_all(printable(&table).as_bytes())?;
        }
    }
    let regressed = body.series.iter().any(|series| series.regressed);
    Ok(if arguments.strict && regressed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

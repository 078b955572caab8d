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

/// How the comparison is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Report {
    /// The confounders and the table, for a terminal.
    Text,
    /// A Markdown table, for a CI job's summary or a pull-request comment.
    Markdown,
}

#[derive(clap::Args)]
pub(super) struct CompareArgs {
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    /// The comparison and its slice, as `/api/compare` takes them.
    #[command(flatten)]
    query: QueryFlags<query_flags::Compare>,
    /// Print every group, pair and dropped pair as JSON.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// How to write the comparison: `text` (the default) or `markdown`, a table a CI job can post.
    #[arg(long, value_enum, default_value_t = Report::Text)]
    format: Report,
    /// With `--format markdown`: the address the app is served at, so that each group links to its Compare.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    #[command(flatten)]
    cache: CacheArgs,
}

pub(super) fn run(arguments: CompareArgs) -> anyhow::Result<ExitCode> {
    let root = DataRoot::open(arguments.data_dir.clone(), &arguments.cache)?;
    let typed = arguments.query.query.clone();
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
    } else if arguments.format == Report::Markdown {
        let link = |group: &cellscope_model::compare::Group| {
            let base = arguments.base_url.as_deref()?.trim_end_matches('/');
            Some(format!(
                "{base}/{}",
                cellscope_model::compare::group_link(&typed, group)
            ))
        };
        let table =
            cellscope_model::compare::text::render_markdown(&comparison, &confounders, link);
        stdout.write_all(printable(&table).as_bytes())?;
    } else {
        let text = cellscope_model::compare::text::render_report(&comparison, &confounders);
        stdout.write_all(printable(&text).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

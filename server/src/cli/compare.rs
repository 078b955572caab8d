//! `cellscope compare`: the head-to-head of two values of one dimension, as the model's typed query asks it (the
//! one `/api/compare` reads) and as the model lays it out.

use super::filters::Filters;
use super::{CacheArgs, DataRoot, load_root};
use anyhow::Context;
use cellscope::terminal::printable;
use cellscope_index::IndexOptions;
use cellscope_model::Dimension;
use cellscope_model::cli_values::{self, Per};
use cellscope_model::compare::CompareQuery;
use cellscope_model::metric::Metric;
use cellscope_model::query::{CompareChoice, Include, Query};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub(super) struct CompareArgs {
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    /// The dimension whose values are compared: backend, model, run, suite, phase, workload, or a deployment
    /// parameter (tp, precision, max_num_seqs, …).
    #[arg(long, value_parser = cli_values::contrasted, default_value_t = CompareChoice::DEFAULT.by)]
    by: Dimension,
    #[arg(long)]
    a: String,
    #[arg(long)]
    b: String,
    /// One group per value of this dimension (a deployment parameter too), or `none`.
    #[arg(long, value_parser = cli_values::grouped, default_value_t = Per(CompareChoice::DEFAULT.per))]
    per: Per,
    /// A per-cell metric (efficiency, aggregate_tps, p99_ttft_ms, goodput_rps, …) or slo_capacity.
    #[arg(long, value_enum, default_value_t = Query::DEFAULT.metric)]
    metric: Metric,
    /// The SLO of `--metric slo_capacity`: bounds (`p99_ttft_ms<=2000,p99_tpot_ms<=100`, the default) or an
    /// MLPerf preset's name.
    #[arg(long, value_parser = slo_text, default_value = "")]
    slo: String,
    /// Significance level for claiming an edge (Holm-adjusted).
    #[arg(long, default_value_t = CompareChoice::DEFAULT.alpha)]
    alpha: f64,
    /// What-if toggles, comma-separated: excluded (put ledger exclusions back), pre_refill, partial.
    #[arg(long, value_enum, value_delimiter = ',')]
    include: Vec<Include>,
    /// Leave partial cells out.
    #[arg(long)]
    omit_partial: bool,
    #[command(flatten)]
    filters: Filters,
    /// Print every group, pair and dropped pair as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    cache: CacheArgs,
}

pub(super) fn run(arguments: CompareArgs) -> anyhow::Result<ExitCode> {
    let root = DataRoot::open(arguments.data_dir.clone(), &arguments.cache)?;
    let typed = typed_query(&arguments)?;
    let query = CompareQuery::from_query(&typed)?;
    let index = load_root(&root, &arguments.cache, &IndexOptions::CELLS)?;
    super::filters::refuse_unstated_params(&typed, &index.cells)?;
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

/// An SLO as `--slo` takes it (empty: the default), refused with the reason when it is none.
fn slo_text(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(String::new());
    }
    cellscope_model::slo::Slo::from_link(text)
        .map(|_| text.to_string())
        .map_err(|error| error.to_string())
}

/// The typed query of the arguments, as `/api/compare` reads its parameters into one.
fn typed_query(arguments: &CompareArgs) -> anyhow::Result<Query> {
    let mut query = Query {
        compare: CompareChoice {
            by: arguments.by,
            a: Some(arguments.a.clone()),
            b: Some(arguments.b.clone()),
            per: arguments.per.0,
            alpha: arguments.alpha,
        },
        metric: arguments.metric,
        slo: arguments.slo.clone(),
        ..Query::DEFAULT
    };
    for include in &arguments.include {
        query.what_if.set(*include, true);
    }
    if arguments.omit_partial {
        query.what_if.partial = false;
    }
    arguments.filters.apply(&mut query)?;
    Ok(query)
}

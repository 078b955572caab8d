//! The dimension filters `cells`, `compare` and `requests` share, written as in `/api/cells` and read into the
//! model's typed query by its own rules.

use anyhow::bail;
use cellscope_model::cli_values;
use cellscope_model::filter::FilterError;
use cellscope_model::filter::unstated_params;
use cellscope_model::query::Query;
use cellscope_model::{CellSummary, Dimension};

/// Dimension filters: comma-separated values of each dimension, as in `/api/cells`.
#[derive(clap::Args)]
pub(super) struct Filters {
    /// Dimension filters, written as in /api/cells (comma-separated values).
    #[arg(long, value_delimiter = ',')]
    run: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    suite: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    phase: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    backend: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    model: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    workload: Vec<String>,
    /// Loads: `16` (N=16 or 16 req/s), `n=16`, `rate=2.5`, `rate=inf`.
    #[arg(long, value_delimiter = ',', visible_alias = "n")]
    load: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    rep: Vec<String>,
    /// A deployment parameter's values, as NAME=VALUES (`--param tp=4,8`); repeat for more parameters.
    #[arg(long = "param", value_name = "NAME=VALUES", value_parser = cli_values::param_filter)]
    params: Vec<(Dimension, Vec<String>)>,
}

impl Filters {
    /// Adds the filters to `query` as a query string's would be: items trimmed, empty ones dropped, values
    /// checked by the dimension's rules.
    pub(super) fn apply(&self, query: &mut Query) -> Result<(), FilterError> {
        for (dimension, values) in [
            (Dimension::Run, &self.run),
            (Dimension::Suite, &self.suite),
            (Dimension::Phase, &self.phase),
            (Dimension::Backend, &self.backend),
            (Dimension::Model, &self.model),
            (Dimension::Workload, &self.workload),
            (Dimension::Load, &self.load),
            (Dimension::Rep, &self.rep),
        ] {
            let items = values.iter().map(|value| value.trim().to_string());
            query
                .filter
                .accept(dimension, items.filter(|item| !item.is_empty()))?;
        }
        for (dimension, values) in &self.params {
            query.filter.accept(*dimension, values.iter().cloned())?;
        }
        Ok(())
    }
}

/// Refuses a deployment parameter the query filters on that is neither well known nor stated by any cell of
/// the data, as `/api/cells` refuses an unknown parameter: the data is read after the arguments, so this is
/// checked once it is.
pub(super) fn refuse_unstated_params(query: &Query, cells: &[CellSummary]) -> anyhow::Result<()> {
    match unstated_params(&query.filter, cells).as_slice() {
        [] => Ok(()),
        names => bail!(
            "no cell of this data states the deployment parameter {} and it is not a well-known one",
            names
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

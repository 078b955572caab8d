//! A History as the API and the CLI ask for it: which cells (the dimension filters), which metric, the method's
//! and the rule's parameters; and the link that opens one History in the app.

use super::{HistoryBody, HistoryChoice, HistoryKey, histories};
use crate::facts::RunFacts;
use crate::filter::DimensionFilter;
use crate::metric::Metric;
use crate::query::{IgnoredParameter, Query, QueryError, encode};
use crate::summary::CellSummary;

/// The metric a History follows when the query names none: the median time to first token.
pub const DEFAULT_METRIC: Metric = Metric::Stat(crate::stat::Stat::P50TtftMs);

/// A History request, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryQuery {
    /// Which cells.
    pub filter: DimensionFilter,
    /// The metric followed: one with a value per cell.
    pub metric: Metric,
    /// The method's and the rule's parameters.
    pub choice: HistoryChoice,
}

impl HistoryQuery {
    /// The History part of a query read for `/api/history`; a metric without a value per cell (breakdown N, SLO
    /// capacity, the ok rate) is refused.
    pub fn from_query(query: &Query) -> Result<HistoryQuery, QueryError> {
        if !query.metric.per_cell() {
            return Err(QueryError::Bad(IgnoredParameter {
                name: "metric".into(),
                value: query.metric.name().into(),
                reason: "a History follows a metric with a value per cell; breakdown, slo_capacity and ok_rate \
                         are read over a whole curve"
                    .into(),
            }));
        }
        Ok(HistoryQuery {
            filter: query.filter.clone(),
            metric: query.metric,
            choice: query.history.clone(),
        })
    }

    /// Every History of the cells the filter keeps.
    pub fn run(&self, cells: &[CellSummary], runs: &[RunFacts]) -> HistoryBody {
        let kept: Vec<CellSummary> = cells
            .iter()
            .filter(|cell| self.filter.admits(&cell.key))
            .cloned()
            .collect();
        HistoryBody {
            metric: self.metric,
            choice: self.choice.clone(),
            series: histories(&kept, runs, self.metric, &self.choice),
        }
    }

    /// The app's link to one History (without the origin): `?view=history&cell=…&metric=…` and the choices that
    /// are not the defaults, the cell being the History's latest.
    pub fn link(&self, key: &HistoryKey, cell: &crate::key::CellKey) -> String {
        debug_assert!(key.holds(cell));
        let mut link = format!(
            "?view=history&cell={}&metric={}",
            encode(&cell.to_string(), false),
            self.metric.name()
        );
        for (name, value) in self.choice.pairs() {
            link.push_str(&format!("&{name}={}", encode(&value, false)));
        }
        link
    }
}

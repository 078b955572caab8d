//! `cellscope audit`: the model's audit report ([`cellscope_model::audit::report`]) of an index.

use cellscope_index::Index;
use cellscope_model::Criterion;
use cellscope_model::audit::report::{self as model_report, Audited};
pub use cellscope_model::audit::report::{
    AuditReport, BreakdownRow, CriterionInfo, RunAudit, UnaccountedCell, render_text,
};

/// The audit of `index` under `criterion`.
pub fn report<'a>(index: &'a Index, criterion: &Criterion) -> AuditReport<'a> {
    let audited = Audited {
        runs: &index.runs,
        warnings: &index.warnings,
        cells: &index.cells,
        exclusions: &index.exclusions,
    };
    model_report::report(index.root.display().to_string(), audited, criterion)
}

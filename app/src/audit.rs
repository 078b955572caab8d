//! The audit: every cell that is not clean (or is refilled / fallback-completed), every exclusion-ledger entry
//! with the cells it matches, every run's census, checksums, refill and backup facts with its REFILL_NOTE claims
//! checked ([`runs`]), and every indexing warning, with the evidence; filterable, sortable, linked to the
//! inspector.

mod runs;

use crate::state::{Ctx, ctx};
use cellscope_model::api::{Provenance, Severity};
use cellscope_model::audit as model_audit;
use cellscope_model::exclusions::ExclusionScope;
use cellscope_model::order::{btree_set, sort_stable_by};
use cellscope_model::reasons::{cell_reason, needs_audit};
use cellscope_model::view_state::{AuditColumn, AuditSort, View, ViewState};
use cellscope_model::{CellKey, CellSummary};
use leptos::prelude::*;

#[derive(Clone, Debug, PartialEq)]
struct AuditRow {
    cell: CellKey,
    key: String,
    run: String,
    status: String,
    flags: String,
    reason: String,
    evidence: String,
    rows: u32,
    expected: Option<u32>,
}

fn audit_rows(cells: &[CellSummary], provenance: Option<&Provenance>) -> Vec<AuditRow> {
    cells
        .iter()
        .filter(|cell| needs_audit(cell))
        .map(|cell| {
            let mut flags = Vec::new();
            if cell.refilled {
                flags.push("refilled".to_string());
            }
            if cell.fallback {
                flags.push("fallback".to_string());
            }
            if !cell.excluded.is_empty() {
                flags.push(format!("excluded ({})", cell.excluded.join(", ")));
            }
            let skip_reason = provenance
                .and_then(|provenance| provenance.skipped(&cell.key))
                .map(|skipped| skipped.reason.as_str());
            let events: Vec<String> = provenance
                .and_then(|provenance| provenance.history(&cell.key))
                .map(|history| {
                    history
                        .history
                        .iter()
                        .map(|event| event.event.clone())
                        .collect()
                })
                .unwrap_or_default();
            // The statuses of the non-ok rows, now and before a refill, so that a search for one finds them.
            let failures = provenance
                .and_then(|provenance| provenance.failures_of(&cell.key))
                .map(model_audit::failures_evidence)
                .unwrap_or_default()
                .into_iter()
                .map(|part| format!(" · {part}"))
                .collect::<String>();
            let evidence = format!(
                "observed {}/{} expected · ok {} · failed {} · skip rows {}{failures}{}",
                cell.rows,
                cell.expected_rows
                    .map_or("?".into(), |expected| expected.to_string()),
                cell.ok_rows,
                cell.failed_rows,
                cell.skip_rows,
                if events.is_empty() {
                    String::new()
                } else {
                    format!(" · manifest: {}", events.join(" → "))
                }
            );
            AuditRow {
                cell: cell.key.clone(),
                key: cell.key.to_string(),
                run: cell.key.run_id.clone(),
                status: cell.status.as_str().to_string(),
                flags: flags.join(", "),
                reason: cell_reason(cell, skip_reason),
                evidence,
                rows: cell.rows,
                expected: cell.expected_rows,
            }
        })
        .collect()
}

/// Sorts the rows into groups of one run and one status, runs then statuses ascending (statuses in the sorted
/// direction when the sort is by status), each group's rows in the sorted column's order: a stable sort, so rows
/// tied on it keep the index's order.
fn sort_rows(rows: &mut [AuditRow], sort: Option<AuditSort>) {
    sort_stable_by(rows, |a, b| {
        let by_status = sort.is_some_and(|sort| sort.column == AuditColumn::Status);
        let status = if sort.is_some_and(|sort| by_status && sort.descending) {
            b.status.cmp(&a.status)
        } else {
            a.status.cmp(&b.status)
        };
        let group = if by_status {
            status.then_with(|| a.run.cmp(&b.run))
        } else {
            a.run.cmp(&b.run).then(status)
        };
        group.then_with(|| {
            let Some(sort) = sort else {
                return std::cmp::Ordering::Equal;
            };
            let order = match sort.column {
                AuditColumn::Status => std::cmp::Ordering::Equal,
                AuditColumn::Flags => a.flags.cmp(&b.flags),
                AuditColumn::Reason => a.reason.cmp(&b.reason),
                AuditColumn::Rows => a.rows.cmp(&b.rows),
                AuditColumn::Key => a.key.cmp(&b.key),
            };
            if sort.descending {
                order.reverse()
            } else {
                order
            }
        })
    });
}

/// The rows with a heading before each group of one run and one status: `(run, status, cells)`.
enum Line {
    Group(String, String, usize),
    Row(Box<AuditRow>),
}

fn grouped(rows: Vec<AuditRow>) -> Vec<Line> {
    let mut lines = Vec::with_capacity(rows.len() + 8);
    let mut start = 0;
    for (index, row) in rows.iter().enumerate() {
        if index + 1 == rows.len()
            || rows[index + 1].run != row.run
            || rows[index + 1].status != row.status
        {
            lines.push(Line::Group(
                row.run.clone(),
                row.status.clone(),
                index + 1 - start,
            ));
            start = index + 1;
        }
    }
    // Headings were pushed at each group's end; put each before its rows.
    let mut out = Vec::with_capacity(lines.len() + rows.len());
    let mut rows = rows.into_iter();
    for line in lines {
        if let Line::Group(_, _, cells) = &line {
            let cells = *cells;
            out.push(line);
            out.extend(
                rows.by_ref()
                    .take(cells)
                    .map(|row| Line::Row(Box::new(row))),
            );
        }
    }
    out
}

#[allow(unreachable_pub)] // `#[component]` makes the props type `pub` whatever the function's visibility.
#[component]
pub(crate) fn AuditView() -> impl IntoView {
    let ctx = ctx();
    let rows = shown_rows(ctx);
    view! {
        <section class="controls">
            <label>"filter " <input id="audit-query" type="search" placeholder="status, model, reason…"
                prop:value=move || ctx.state.with(|state| state.query.clone())
                on:input=move |event| { let text = event_target_value(&event); ctx.state.update(|state| state.query = text); }/></label>
            <span class="count" id="audit-count">{move || format!("{} cells", rows.with(Vec::len))}</span>
        </section>
        {problems_table(ctx, rows)}
        {ledger(ctx)}
        <runs::RunsSection/>
        {warnings(ctx)}
    }
}

/// The cells the audit lists, after the view's filter and the query, in the sorted order.
fn shown_rows(ctx: Ctx) -> Memo<Vec<AuditRow>> {
    let all_rows = Memo::new(move |_| {
        let provenance = ctx
            .data
            .with(|data| data.as_ref().and_then(|data| data.provenance.clone()));
        ctx.working
            .with(|cells| audit_rows(cells, provenance.as_ref()))
    });
    Memo::new(move |_| {
        let (query, sort, filter) = ctx
            .state
            .with(|state| (state.query.to_lowercase(), state.sort, state.filter.clone()));
        let mut rows: Vec<AuditRow> = all_rows
            .get()
            .into_iter()
            .filter(|row| filter.admits(&row.cell))
            .filter(|row| {
                query.is_empty()
                    || format!(
                        "{} {} {} {} {}",
                        row.key, row.status, row.flags, row.reason, row.evidence
                    )
                    .to_lowercase()
                    .contains(&query)
            })
            .collect();
        sort_rows(&mut rows, sort);
        rows
    })
}

/// A column's header. Each header is a button, so the table is sorted by keyboard as well as by pointer; the
/// sorted column says its direction with an arrow and, for screen readers, `aria-sort`.
fn header(ctx: Ctx, column: AuditColumn, label: &'static str) -> impl IntoView {
    let direction = move || {
        ctx.state
            .with(|state| state.sort)
            .filter(|sort| sort.column == column)
            .map(|sort| sort.descending)
    };
    view! {
        <th aria-sort=move || match direction() {
            Some(true) => "descending",
            Some(false) => "ascending",
            None => "none",
        }>
            <button type="button" class="sort" data-column=column.name()
                on:click=move |_| ctx.update(|state| state.sort = Some(AuditSort::toggled(state.sort, column)))>
                {label}
                {move || match direction() {
                    Some(true) => " ▼",
                    Some(false) => " ▲",
                    None => "",
                }}
            </button>
        </th>
    }
}

/// The cells that are not clean, grouped by run and status, each linked to the inspector.
fn problems_table(ctx: Ctx, rows: Memo<Vec<AuditRow>>) -> impl IntoView {
    view! {
        <table class="audit" id="audit-table">
            <thead><tr>
                {header(ctx, AuditColumn::Key, "cell")}
                {header(ctx, AuditColumn::Status, "status")}
                {header(ctx, AuditColumn::Flags, "flags")}
                {header(ctx, AuditColumn::Reason, "reason")}
                {header(ctx, AuditColumn::Rows, "evidence")}
            </tr></thead>
            <tbody>
                {move || grouped(rows.get()).into_iter().map(|line| line_view(ctx, line)).collect_view()}
            </tbody>
        </table>
    }
}

/// One line of the problems table: a group's heading or a cell.
fn line_view(ctx: Ctx, line: Line) -> AnyView {
    match line {
        Line::Group(run, status, cells) => {
            let (shown_run, shown_status) = (run.clone(), status.clone());
            view! {
                <tr class="audit-group" data-group-run=run data-group-status=status data-cells=cells.to_string()>
                    <th colspan="5" scope="rowgroup">
                        "run " <code>{shown_run}</code> " · " {shown_status} " · "
                        {format!("{cells} cell{}", if cells == 1 { "" } else { "s" })}
                    </th>
                </tr>
            }.into_any()
        }
        Line::Row(row) => {
            let next = ctx.state.with_untracked(|state| ViewState {
                cell: Some(row.cell.clone()),
                view: View::Inspector,
                ..state.clone()
            });
            let link = next.href();
            view! {
                <tr data-status=row.status.clone() data-flags=row.flags.clone() data-cell=row.key.clone()>
                    <td><a href=link on:click=move |event| { event.prevent_default(); ctx.go(next.clone()); }>{row.key.clone()}</a></td>
                    <td>{row.status.clone()}</td>
                    <td>{row.flags.clone()}</td>
                    <td>{row.reason.clone()}</td>
                    <td>{row.evidence.clone()}</td>
                </tr>
            }.into_any()
        }
    }
}

/// The exclusion ledger: each entry with the cells it matches (a link to them), then each scope it uses in words.
fn ledger(ctx: Ctx) -> impl IntoView {
    let ledger = move || {
        ctx.data.with(|data| {
            data.as_ref()
                .and_then(|data| data.provenance.as_ref())
                .map(|provenance| provenance.exclusions.clone())
                .unwrap_or_default()
        })
    };
    view! {
        <h3>"Exclusion ledger"</h3>
        <table class="audit" id="ledger-table">
            <thead><tr><th>"id"</th><th>"scope"</th><th>"selects"</th><th>"reason"</th><th>"source / decided"</th><th>"matched cells"</th></tr></thead>
            <tbody>
                {move || ledger().into_iter().map(|item| {
                    let entry = item.entry.entry;
                    let matched = item.matched.len();
                    // The count is a link to the entry's cells: the audit filtered by the entry id.
                    let id = entry.id.clone();
                    let entry_link = ctx.state.with_untracked(|state| {
                        ViewState { view: View::Audit, query: id.clone(), ..state.clone() }.href()
                    });
                    let select = entry.describe_select();
                    view! {
                        <tr data-ledger=entry.id.clone()>
                            <td>{entry.id.clone()}</td>
                            <td title=entry.scope.meaning()>{entry.scope.as_str()}</td>
                            <td class="selects">{select}</td>
                            <td>{entry.reason.clone()}</td>
                            <td>{format!("{} · {}", entry.source.unwrap_or_default(), entry.decided.unwrap_or_default())}</td>
                            <td class="matched"><a href=entry_link data-matched=matched.to_string() on:click=move |event| {
                                event.prevent_default();
                                let id = id.clone();
                                ctx.update(move |state| { state.query = id; state.view = View::Audit; });
                            }>{format!("{matched} cells")}</a></td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        {move || {
            // Each scope the ledger uses, said once in words under the table.
            let scopes: std::collections::BTreeSet<ExclusionScope> =
                btree_set(ledger().iter().map(|item| item.entry.entry.scope));
            scopes.into_iter().map(|scope| view! {
                <p class="hint scope-meaning" data-scope=scope.as_str()>{scope.meaning()}</p>
            }).collect_view()
        }}
    }
}

/// The indexer's warnings and the contradicted REFILL_NOTE claims: what the header counts.
fn warnings(ctx: Ctx) -> impl IntoView {
    let warnings = move || {
        ctx.data.with(|data| {
            data.as_ref()
                .map(|data| model_audit::warnings(&data.index))
                .unwrap_or_default()
        })
    };
    view! {
        <h3 id="warnings">"Warnings"</h3>
        <ul class="warnings" id="warnings-list">
            {move || {
                let warnings = warnings();
                if warnings.is_empty() {
                    view! { <li>"none"</li> }.into_any()
                } else {
                    warnings.into_iter().map(|warning| view! {
                        <li class=match warning.severity { Severity::Error => "error", Severity::Warning => "warning", Severity::Info => "info" }>
                            <code>{warning.kind.clone()}</code> " "
                            {warning.run.clone().unwrap_or_default()} " "
                            {warning.file.clone().unwrap_or_default()}
                            {warning.line.map(|line| format!(":{line}"))} " — "
                            {warning.message.clone()}
                        </li>
                    }).collect_view().into_any()
                }
            }}
        </ul>
    }
}

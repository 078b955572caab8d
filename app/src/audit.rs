//! The audit: every cell that is not clean (or is refilled / fallback-completed), every exclusion-ledger entry
//! with the cells it matches, and every indexing warning, with the evidence; filterable, sortable, linked to
//! the inspector.

use crate::app::ctx;
use cellscope_model::view_state::View;
use cellscope_model::{CellStatus, CellSummary};
use leptos::prelude::*;

#[derive(Clone, Debug, PartialEq)]
struct AuditRow {
    key: String,
    run: String,
    status: String,
    flags: String,
    reason: String,
    evidence: String,
    rows: u32,
    expected: Option<u32>,
}

fn audit_rows(cells: &[CellSummary], provenance: &serde_json::Value) -> Vec<AuditRow> {
    let skipped = provenance["skipped"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let histories = provenance["manifest_histories"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    cells
        .iter()
        .filter(|cell| cell.status != CellStatus::Clean || cell.refilled || cell.fallback)
        .map(|cell| {
            let key_json = serde_json::to_value(&cell.key).unwrap_or_default();
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
            let skip_reason = skipped
                .iter()
                .find(|entry| entry["key"] == key_json)
                .and_then(|entry| entry["reason"].as_str())
                .map(str::to_string);
            let events: Vec<String> = histories
                .iter()
                .find(|entry| entry["key"] == key_json)
                .and_then(|entry| entry["history"].as_array())
                .map(|events| {
                    events
                        .iter()
                        .filter_map(|event| event["event"].as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let reason = match cell.status {
                CellStatus::Skipped => {
                    skip_reason.unwrap_or_else(|| "skip sentinel row only".into())
                }
                CellStatus::Partial => format!(
                    "{} of {} expected rows",
                    cell.rows,
                    cell.expected_rows.unwrap_or(0)
                ),
                CellStatus::Failed => format!("{} of {} rows failed", cell.failed_rows, cell.rows),
                CellStatus::NotRun => "planned but absent from metrics.csv".into(),
                CellStatus::Clean if cell.refilled => format!(
                    "rows replaced by refill run {}",
                    cell.source_run_id.clone().unwrap_or_default()
                ),
                CellStatus::Clean => "completed through the fallback path".into(),
            };
            let evidence = format!(
                "observed {}/{} expected · ok {} · failed {} · skip rows {}{}",
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
                key: cell.key.to_string(),
                run: cell.key.run_id.clone(),
                status: cell.status.as_str().to_string(),
                flags: flags.join(", "),
                reason,
                evidence,
                rows: cell.rows,
                expected: cell.expected_rows,
            }
        })
        .collect()
}

fn sort_rows(rows: &mut [AuditRow], sort: Option<&str>) {
    let Some(sort) = sort else { return };
    let (descending, column) = match sort.strip_prefix('-') {
        Some(column) => (true, column),
        None => (false, sort),
    };
    rows.sort_by(|a, b| {
        let order = match column {
            "status" => a.status.cmp(&b.status),
            "flags" => a.flags.cmp(&b.flags),
            "reason" => a.reason.cmp(&b.reason),
            "rows" => a.rows.cmp(&b.rows),
            _ => a.key.cmp(&b.key),
        };
        if descending { order.reverse() } else { order }
    });
}

#[component]
pub fn AuditView() -> impl IntoView {
    let ctx = ctx();
    let all_rows = Memo::new(move |_| {
        let provenance = ctx
            .data
            .with(|data| data.as_ref().map(|data| data.provenance.clone()))
            .unwrap_or_default();
        ctx.working.with(|cells| audit_rows(cells, &provenance))
    });
    let rows = Memo::new(move |_| {
        let (query, sort, state) = ctx.state.with(|state| {
            (
                state.query.to_lowercase(),
                state.sort.clone(),
                state.clone(),
            )
        });
        let mut rows: Vec<AuditRow> = all_rows
            .get()
            .into_iter()
            .filter(|row| {
                let key = crate::inspector::parse_cell(&row.key);
                key.is_some_and(|key| state.admits_key(&key))
            })
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
        sort_rows(&mut rows, sort.as_deref());
        rows
    });
    let sort_by = move |column: &'static str| {
        ctx.update(|state| {
            state.sort = Some(if state.sort.as_deref() == Some(column) {
                format!("-{column}")
            } else {
                column.to_string()
            });
        });
    };
    let ledger = move || {
        ctx.data.with(|data| {
            data.as_ref()
                .map(|data| {
                    data.provenance["exclusions"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                })
                .unwrap_or_default()
        })
    };
    let warnings = move || {
        ctx.data.with(|data| {
            data.as_ref()
                .map(|data| {
                    data.index["warnings"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                })
                .unwrap_or_default()
        })
    };
    view! {
        <section class="controls">
            <label>"filter " <input id="audit-query" type="search" placeholder="status, model, reason…"
                prop:value=move || ctx.state.with(|state| state.query.clone())
                on:input=move |event| { let text = event_target_value(&event); ctx.state.update(|state| state.query = text); }/></label>
            <span class="count" id="audit-count">{move || format!("{} cells", rows.with(Vec::len))}</span>
        </section>
        <table class="audit" id="audit-table">
            <thead><tr>
                <th on:click=move |_| sort_by("key")>"cell"</th>
                <th on:click=move |_| sort_by("status")>"status"</th>
                <th on:click=move |_| sort_by("flags")>"flags"</th>
                <th on:click=move |_| sort_by("reason")>"reason"</th>
                <th on:click=move |_| sort_by("rows")>"evidence"</th>
            </tr></thead>
            <tbody>
                {move || rows.get().into_iter().map(|row| {
                    let target = row.key.clone();
                    view! {
                        <tr data-status=row.status.clone() data-flags=row.flags.clone() data-cell=row.key.clone()>
                            <td><a href="#" on:click=move |event| {
                                event.prevent_default();
                                let target = target.clone();
                                ctx.update(move |state| { state.cell = Some(target); state.view = View::Inspector; });
                            }>{row.key.clone()}</a></td>
                            <td>{row.status.clone()}</td>
                            <td>{row.flags.clone()}</td>
                            <td>{row.reason.clone()}</td>
                            <td>{row.evidence.clone()}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        <h3>"Exclusion ledger"</h3>
        <table class="audit" id="ledger-table">
            <thead><tr><th>"id"</th><th>"scope"</th><th>"selects"</th><th>"reason"</th><th>"source / decided"</th><th>"matched cells"</th></tr></thead>
            <tbody>
                {move || ledger().into_iter().map(|item| {
                    let entry = item["entry"].clone();
                    let matched = item["matched"].as_array().map_or(0, Vec::len);
                    view! {
                        <tr data-ledger=entry["id"].as_str().unwrap_or("").to_string()>
                            <td>{entry["id"].as_str().unwrap_or("").to_string()}</td>
                            <td>{entry["scope"].as_str().unwrap_or("").to_string()}</td>
                            <td><code>{entry["select"].to_string()}</code></td>
                            <td>{entry["reason"].as_str().unwrap_or("").to_string()}</td>
                            <td>{format!("{} · {}", entry["source"].as_str().unwrap_or(""), entry["decided"].as_str().unwrap_or(""))}</td>
                            <td class="matched">{matched}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        <h3 id="warnings">"Indexing warnings"</h3>
        <ul class="warnings" id="warnings-list">
            {move || {
                let warnings = warnings();
                if warnings.is_empty() {
                    view! { <li>"none"</li> }.into_any()
                } else {
                    warnings.into_iter().map(|warning| view! {
                        <li class=warning["severity"].as_str().unwrap_or("").to_string()>
                            <code>{warning["kind"].as_str().unwrap_or("").to_string()}</code> " "
                            {warning["run"].as_str().unwrap_or("").to_string()} " "
                            {warning["file"].as_str().unwrap_or("").to_string()}
                            {warning["line"].as_u64().map(|line| format!(":{line}"))} " — "
                            {warning["message"].as_str().unwrap_or("").to_string()}
                        </li>
                    }).collect_view().into_any()
                }
            }}
        </ul>
    }
}

//! The Audit page's runs section: for every run the lines `cellscope audit` prints, worded by
//! `cellscope_model::audit` (census, rows, metrics checksums, manifest, refill, backups, exclusions), the claims of
//! its REFILL_NOTE.md checked against the files, the note itself and the run's warnings.

use crate::state::ctx;
use cellscope_model::api::{IndexBody, RunFacts, RunRole, Severity, Warning};
use cellscope_model::audit::{self as model_audit, NoteClaim, Part, Verdict};
use cellscope_model::order::btree_set;
use leptos::either::Either;
use leptos::prelude::*;
use std::collections::BTreeSet;

/// One run with everything its block shows, computed from the index once per snapshot.
#[derive(Clone, Debug, PartialEq)]
struct RunAudit {
    run: RunFacts,
    claims: Vec<NoteClaim>,
    warnings: Vec<Warning>,
}

fn run_audits(index: &IndexBody) -> Vec<RunAudit> {
    index
        .runs
        .iter()
        .map(|run| {
            let claims = model_audit::check_refill_note(run, &index.runs, index.complete);
            // The indexer's warnings of the run, then its contradicted note claims, as the CLI lists them.
            let mut warnings: Vec<Warning> = index
                .warnings
                .iter()
                .filter(|warning| warning.run.as_deref() == Some(run.run_id.as_str()))
                .cloned()
                .collect();
            warnings.extend(model_audit::note_warnings(run, &claims));
            RunAudit {
                claims,
                warnings,
                run: run.clone(),
            }
        })
        .collect()
}

/// An element id for a run: `run-<run_id>`, with anything an id or a CSS selector would trip on replaced
/// (copies are named like `run (1)`). `data-run` keeps the run id exactly.
fn element_id(run_id: &str) -> String {
    let safe: String = run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("run-{safe}")
}

/// Words as text, checksums as selectable code.
fn parts_view(parts: Vec<Part>) -> impl IntoView {
    parts
        .into_iter()
        .map(|part| match part {
            Part::Text(text) => Either::Left(text),
            Part::Code(code) => Either::Right(view! { <code class="hash">{code}</code> }),
        })
        .collect_view()
}

fn claims_view(claims: Vec<NoteClaim>) -> impl IntoView {
    view! {
        <ul class="note-claims">
            {claims.into_iter().map(|claim| {
                let verdict = claim.verdict.as_str();
                view! {
                    <li class=format!("note-claim claim-{}", verdict.replace('_', "-"))
                        data-verdict=verdict data-line=claim.line.to_string() title=claim.text.clone()>
                        {parts_view(claim.parts())}
                    </li>
                }
            }).collect_view()}
        </ul>
    }
}

/// The note as written, one numbered line each (the numbers are CSS, so a copy takes the text alone); lines
/// holding a claim are marked with the worst verdict on them.
fn note_view(note: String, claims: &[NoteClaim]) -> impl IntoView + use<> {
    let mismatched: BTreeSet<u64> = btree_set(
        claims
            .iter()
            .filter(|claim| claim.verdict == Verdict::Mismatch)
            .map(|claim| claim.line),
    );
    let claimed: BTreeSet<u64> = btree_set(claims.iter().map(|claim| claim.line));
    let lines: Vec<(u64, String)> = note
        .lines()
        .enumerate()
        .map(|(index, line)| (index as u64 + 1, line.to_string()))
        .collect();
    view! {
        <details class="refill-note">
            <summary>"REFILL_NOTE.md"</summary>
            <pre class="note-source">
                {lines.into_iter().map(|(number, line)| {
                    let class = if mismatched.contains(&number) {
                        "note-line claimed claim-mismatch"
                    } else if claimed.contains(&number) {
                        "note-line claimed"
                    } else {
                        "note-line"
                    };
                    view! { <span class=class data-line=number.to_string()>{line}</span> }
                }).collect_view()}
            </pre>
        </details>
    }
}

/// One run's block; `label` says what the run id stands for (its backends and start).
fn run_view(audit: RunAudit, label: String) -> impl IntoView {
    let RunAudit {
        run,
        claims,
        warnings,
    } = audit;
    let role = model_audit::run_role(&run);
    let note = run.refill.as_ref().and_then(|refill| refill.note.clone());
    let mut claims_left = Some(claims.clone());
    let lines = model_audit::run_lines(&run)
        .into_iter()
        .map(|line| {
            // The claims sit under the refill line, as in the terminal.
            let claims = (line.label == "refill")
                .then(|| claims_left.take())
                .flatten()
                .filter(|claims| !claims.is_empty())
                .map(claims_view);
            view! {
                <dt>{line.label}</dt>
                <dd data-line=line.label>{parts_view(line.parts)}{claims}</dd>
            }
        })
        .collect_view();
    let warnings_count = model_audit::warnings_value(warnings.len());
    view! {
        <article class="audit-run" id=element_id(&run.run_id) data-run=run.run_id.clone()
            data-role=match run.role { RunRole::Run => "run", RunRole::Refill => "refill", RunRole::Copy => "copy" }>
            <h4>
                <code>{run.run_id.clone()}</code>
                {(!label.is_empty()).then(|| view! { <span class="run-label">{label}</span> })}
                <span class="run-path">{run.path.clone()}</span>
                {role.map(|role| view! { <span class="run-role">"— " {role}</span> })}
            </h4>
            <dl class="run-facts">
                {lines}
                <dt>"warnings"</dt>
                <dd data-line="warnings">
                    {warnings_count}
                    {(!warnings.is_empty()).then(|| view! {
                        <ul class="run-warnings">
                            {warnings.into_iter().map(|warning| view! {
                                <li class=match warning.severity { Severity::Error => "error", Severity::Warning => "warning", Severity::Info => "info" }>{warning.to_string()}</li>
                            }).collect_view()}
                        </ul>
                    })}
                </dd>
            </dl>
            {note.map(|note| note_view(note, &claims))}
        </article>
    }
}

/// The runs table: one row per run with its start (worded by the model, its source in the hover) and cells, in
/// index order until the `started` header sorts it.
fn runs_table(index: Memo<Vec<RunFacts>>) -> impl IntoView {
    // `None`: index order; `Some(descending)`: by start.
    let sort = RwSignal::new(None::<bool>);
    let rows = move || {
        index.with(|runs| {
            let ordered: Vec<RunFacts> = match sort.get() {
                Some(descending) => cellscope_model::runs::by_start(runs, descending)
                    .into_iter()
                    .cloned()
                    .collect(),
                None => runs.clone(),
            };
            ordered
                .into_iter()
                .map(|run| {
                    let (label, title, kind, at) = match &run.started {
                        Some(started) => (
                            started.label(),
                            started.explanation(),
                            if started.is_file_time() { "file" } else { "read" },
                            started.at.clone(),
                        ),
                        None => (
                            "unknown".to_string(),
                            "nothing says when this run started".to_string(),
                            "none",
                            String::new(),
                        ),
                    };
                    view! {
                        <tr data-run=run.run_id.clone()>
                            <td><a href=format!("#{}", element_id(&run.run_id))><code>{run.run_id.clone()}</code></a></td>
                            <td class="run-started" data-start=kind data-at=at title=title>{label}</td>
                            <td class="num">{run.census.cells}</td>
                        </tr>
                    }
                })
                .collect_view()
        })
    };
    view! {
        <table class="audit" id="runs-table">
            <thead><tr>
                <th>"run"</th>
                <th aria-sort=move || match sort.get() { Some(true) => "descending", Some(false) => "ascending", None => "none" }>
                    <button type="button" class="sort" data-column="started"
                        on:click=move |_| sort.update(|sort| *sort = Some(*sort == Some(false)))>
                        "started"
                        {move || match sort.get() { Some(true) => " ▼", Some(false) => " ▲", None => "" }}
                    </button>
                </th>
                <th>"cells"</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// The runs section: the runs table, then one block per run, in index order.
#[allow(unreachable_pub)] // `#[component]` makes the props type `pub` whatever the function's visibility.
#[component]
pub(super) fn RunsSection() -> impl IntoView {
    let ctx = ctx();
    let audits = Memo::new(move |_| {
        ctx.data.with(|data| {
            data.as_ref()
                .map(|data| (data.index.complete, run_audits(&data.index)))
                .unwrap_or_default()
        })
    });
    let runs = Memo::new(move |_| {
        ctx.data.with(|data| {
            data.as_ref()
                .map(|data| data.index.runs.clone())
                .unwrap_or_default()
        })
    });
    view! {
        <h3 id="runs">"Runs"</h3>
        {runs_table(runs)}
        <div id="audit-runs">
            {move || {
                let (complete, audits) = audits.get();
                view! {
                    {(!complete).then(|| view! {
                        <p class="hint" id="runs-incomplete">
                            "Checksums and backup comparisons are still being computed; they appear here when ready."
                        </p>
                    })}
                    {audits.into_iter().map(|audit| {
                        let label = ctx.working.with_untracked(|cells| cellscope_model::runs::run_label(&audit.run.run_id, cells));
                        run_view(audit, label)
                    }).collect_view()}
                }
            }}
        </div>
    }
}

//! Run ids of other tools' runs: `cellscope.toml`'s `run`, else the run root; and every run given its own when
//! two would share one.

use crate::run::ReadContext;
use crate::run::found::DetectedRun;
use cellscope_model::api::Warning;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// The run id of a detected run: `cellscope.toml`'s `run` when a `[[map]]` entry sets it for the first file,
/// else the `run` constant of its `[[table]]` entry, else the run root (the data root itself is `root`).
pub(crate) fn run_id(context: &ReadContext<'_>, run: &DetectedRun) -> String {
    if let Some(id) = &run.id {
        return id.clone();
    }
    natural_run_id(context, run)
}

/// The run id `cellscope.toml` or the run root give, before runs are told apart.
pub(crate) fn natural_run_id(context: &ReadContext<'_>, run: &DetectedRun) -> String {
    if let Some(own) = &run.own_id {
        return own.clone();
    }
    let first = run.files.first().map(String::as_str).unwrap_or_default();
    let template = crate::mapping::TemplateContext {
        path: first,
        record: &Json::Null,
    };
    let table_run = context
        .mapping
        .table_for(first)
        .and_then(|entry| entry.spec.run.as_ref())
        .map(|run| match &run.value {
            toml::Value::String(text) => text.clone(),
            other => other.to_string(),
        });
    match (context.mapping.value("run", &template), table_run) {
        (Some(Ok(mapped)), _) => mapped.value,
        (_, Some(table_run)) => table_run,
        _ if run.root.is_empty() => "root".to_string(),
        _ => run.root.clone(),
    }
}

/// Gives every run its own id. Two runs can be given one: `cellscope.toml` maps the same `run` onto two run
/// roots, or two formats' files share a directory (each format's files are a run of their own). Their cells would
/// then have the same keys and one would hide the other, so the first in `runs`' order (discovery's: the runs that
/// carry their own id first, then by root and format name) keeps the id and each later one is indexed as
/// `<id>@<its root>` (`<id>@<its format>` when the roots are the same; `#2`, `#3`, … if that is taken too), with a
/// warning naming both roots.
pub(crate) fn separate_run_ids(
    context: &ReadContext<'_>,
    runs: &mut [DetectedRun],
) -> Vec<Warning> {
    let natural: Vec<String> = runs
        .iter()
        .map(|run| natural_run_id(context, run))
        .collect();
    let mut taken: std::collections::BTreeSet<String> = natural.iter().cloned().collect();
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    let mut warnings = Vec::new();
    for (index, id) in natural.iter().enumerate() {
        let Some(&earlier) = first.get(id.as_str()) else {
            first.insert(id.as_str(), index);
            continue;
        };
        let shown = |run: &DetectedRun| {
            if run.root.is_empty() {
                "the data root".to_string()
            } else {
                format!("`{}`", run.root)
            }
        };
        let (kept, run) = (&runs[earlier], &runs[index]);
        let suffix = if run.root == kept.root {
            run.format.to_string()
        } else if run.root.is_empty() {
            "root".to_string()
        } else {
            run.root.clone()
        };
        let base = format!("{id}@{suffix}");
        let mut renamed = base.clone();
        let mut number = 2;
        while taken.contains(&renamed) {
            renamed = format!("{base}#{number}");
            number += 1;
        }
        taken.insert(renamed.clone());
        let warning = Warning::warn(
            "duplicate_run_id",
            format!(
                "run id `{id}` is given to two runs: {} ({}) and {} ({}); so that their cells are kept apart, \
                 the second is indexed as `{renamed}` (give it its own `run` in cellscope.toml to name it)",
                shown(kept),
                kept.format,
                shown(run),
                run.format
            ),
        )
        .run(&renamed);
        warnings.push(match run.files.first() {
            Some(file) => warning.file(file),
            None => warning,
        });
        runs[index].id = Some(renamed);
    }
    warnings
}

//! Repetitions only where records are alike: records of one run that would share a cell key but differ in a
//! setting they record ([`RunRecord::recorded`](crate::run::record::RunRecord)) are different deployments, so each value of the
//! setting becomes a configuration parameter of its record's cell, with a `records_differ` warning naming it.

use super::{Draft, coordinates_text};
use crate::run::record::How;
use cellscope_model::api::Warning;
use cellscope_model::config;
use cellscope_model::key::CellCoordinates;
use std::collections::{BTreeMap, BTreeSet};

/// The drafts with every setting that tells records of one key apart added to their configurations.
pub(super) fn separate(
    mut drafts: Vec<Draft>,
    run_id: &str,
    warnings: &mut Vec<Warning>,
) -> Vec<Draft> {
    let mut groups: BTreeMap<(CellCoordinates, Option<u32>), Vec<usize>> = BTreeMap::new();
    for (index, draft) in drafts.iter().enumerate() {
        groups
            .entry((draft.coordinates.clone(), draft.rep))
            .or_default()
            .push(index);
    }
    let mut found: Vec<(usize, String)> = Vec::new();
    for ((coordinates, _), members) in groups {
        if members.len() < 2 {
            continue;
        }
        let differing = differing_settings(&drafts, &members);
        if differing.is_empty() {
            continue;
        }
        let message = message(&drafts, &members, &differing, &coordinates);
        for &index in &members {
            let draft = &mut drafts[index];
            for name in &differing {
                if let Some(value) = draft.record.recorded.get(name).cloned() {
                    draft.config.set(
                        name,
                        &value,
                        How::Read(format!(
                            "field `{name}` (it tells records of one key apart)"
                        )),
                    );
                }
            }
            draft.coordinates.config = draft.config.config.clone();
        }
        found.push((members[0], message));
    }
    for (first, message) in found {
        let draft = &drafts[first];
        warnings.push(
            Warning::warn("records_differ", message)
                .run(run_id)
                .file(&draft.file)
                .at_line(draft.record.line),
        );
    }
    drafts
}

/// The settings whose values are not the same in every member (a setting one member lacks differs too), among
/// those that can be configuration.
fn differing_settings(drafts: &[Draft], members: &[usize]) -> Vec<String> {
    let names: BTreeSet<&String> = members
        .iter()
        .flat_map(|index| drafts[*index].record.recorded.keys())
        .collect();
    names
        .into_iter()
        .filter(|name| config::is_configuration(name))
        .filter(|name| {
            let values: BTreeSet<Option<&String>> = members
                .iter()
                .map(|index| drafts[*index].record.recorded.get(*name))
                .collect();
            values.len() > 1
        })
        .cloned()
        .collect()
}

/// What the warning says: which records would have been one cell, the settings and values that tell them apart,
/// and what was done.
fn message(
    drafts: &[Draft],
    members: &[usize],
    differing: &[String],
    coordinates: &CellCoordinates,
) -> String {
    let records: Vec<String> = members
        .iter()
        .map(|index| {
            let draft = &drafts[*index];
            let line = draft
                .record
                .line
                .map(|line| format!(" (line {line})"))
                .unwrap_or_default();
            if draft.file == drafts[members[0]].file {
                format!("record {}{line}", draft.record.record)
            } else {
                format!("record {}{line} of `{}`", draft.record.record, draft.file)
            }
        })
        .collect();
    let settings: Vec<String> = differing
        .iter()
        .map(|name| {
            let values: Vec<String> = members
                .iter()
                .map(|index| {
                    drafts[*index]
                        .record
                        .recorded
                        .get(name)
                        .map_or_else(|| "not stated".to_string(), |value| format!("`{value}`"))
                })
                .collect();
            format!("`{name}` ({})", values.join(", "))
        })
        .collect();
    format!(
        "{} would be one cell ({}) but differ in {}; each value is a configuration parameter of its record's cell, \
         so they are not repetitions of one cell",
        crate::records::verdict::listed(&records),
        coordinates_text(coordinates),
        crate::records::verdict::listed(&settings)
    )
}

//! Stage 2 of indexing: read every run found by discovery (each through its format) and every TR164 backup, in
//! parallel, each on its own. Nothing here relates runs to each other; that is the lineage stage's work.

use crate::discover::Discovery;
use crate::formats::{self, tr164::backups::read_backup};
use crate::mapping::Mapping;
use crate::parse::{HEAD_BYTES, outline};
use crate::records::{self, ids, verdict};
use crate::run::found::{DetectedRun, RunDir};
use crate::run::record::FileAt;
use crate::run::{BackupRead, IndexOptions, Progress, ReadContext, RunRead};
use crate::storage::Storage;
use rayon::prelude::*;
use std::collections::HashMap;

pub struct Reads {
    pub runs: Vec<RunRead>,
    pub backups: Vec<BackupRead>,
    /// Runs that were given another run's id and renamed ([`ids::separate_run_ids`]).
    pub warnings: Vec<cellscope_model::api::Warning>,
}

/// Reads every run and backup of `discovery`, runs and backups in parallel. Runs of every format go through
/// their [`RunFormat`](super::formats::RunFormat); backups are TR164's.
/// With a `cache`, a run or backup whose entry it trusts is taken from it instead.
pub fn read_all(
    discovery: &Discovery,
    storage: &dyn Storage,
    mapping: &Mapping,
    options: &IndexOptions,
    progress: &dyn Progress,
    cache: Option<&super::cache::Session<'_>>,
) -> Reads {
    let context = ReadContext {
        storage,
        mapping,
        options,
        progress,
    };
    let mut detected: Vec<DetectedRun> = discovery
        .runs
        .iter()
        .map(|dir| DetectedRun {
            format: "tr164",
            root: dir.relative.clone(),
            files: vec![dir.metrics_relative()],
            id: None,
        })
        .chain(discovery.external.iter().cloned())
        .collect();
    let warnings = ids::separate_run_ids(&context, &mut detected);
    let runs_by_id: HashMap<&str, &RunDir> = discovery
        .runs
        .iter()
        .map(|run| (run.run_id.as_str(), run))
        .collect();
    let (runs, backups) = rayon::join(
        || {
            detected
                .par_iter()
                .filter_map(|run| {
                    formats::by_name(run.format).map(|format| match cache {
                        Some(cache) => cache.read_run(&context, format, run),
                        None => format.read_run(&context, run),
                    })
                })
                .collect()
        },
        || {
            discovery
                .backups
                .par_iter()
                .map(|dir| {
                    let master = runs_by_id.get(dir.master_run_id.as_str()).copied();
                    match cache {
                        Some(cache) => cache.read_backup(dir, master, options, progress),
                        None => read_backup(storage, dir.clone(), master, options, progress),
                    }
                })
                .collect()
        },
    );
    Reads {
        runs,
        backups,
        warnings,
    }
}

/// How one file of the data root is read and keyed, for `cellscope index --explain FILE`: its format, each
/// record's cell and, for every dimension, the field it was read from or the rule that inferred it.
pub fn explain(root: &std::path::Path, relative: &str) -> Result<String, String> {
    use std::fmt::Write as _;
    let disk = crate::storage::LocalDisk::new(root);
    let mut warnings = Vec::new();
    let mapping = crate::mapping::read_text(&disk, &mut warnings)
        .map(|text| Mapping::parse(&text, crate::mapping::FILE, &mut warnings))
        .unwrap_or_default();
    let head = disk
        .read_range(relative, 0..HEAD_BYTES)
        .and_then(|head| outline::head(&disk, relative, head, HEAD_BYTES))
        .map_err(|error| format!("cannot read {relative}: {error}"))?;
    let file = FileAt {
        storage: &disk,
        mapping: &mapping,
        path: relative,
        head: &head,
    };
    let mut verdicts = Vec::new();
    let format = formats::FORMATS
        .iter()
        .copied()
        .find(|format| {
            let verdict = format.examine(&file);
            let reads = verdict.reads();
            verdicts.push((format.name(), verdict));
            reads
        })
        .ok_or_else(|| {
            // TR164 runs are found by their metrics file's name; other files are offered to the others.
            let (by_name, offered) = verdicts.split_at(1);
            verdict::explain_unread(relative, by_name, offered)
                .trim_end()
                .to_string()
        })?;
    let mut out = String::new();
    let root_of_run = format.run_root(relative);
    let _ = writeln!(
        out,
        "{relative}\n  format: {}\n  run root: {}",
        format.name(),
        if root_of_run.is_empty() {
            "(the data root)"
        } else {
            &root_of_run
        }
    );
    if format.name() == "tr164" {
        let _ = writeln!(
            out,
            "  every key dimension is a column of the file (run_id, suite, phase, backend, model, workload, n_agents, rep)"
        );
        return Ok(out);
    }
    let records = format.records(&FileAt::whole(&disk, &mapping, relative), &mut warnings);
    let run = DetectedRun {
        format: format.name(),
        root: root_of_run,
        files: vec![relative.to_string()],
        id: None,
    };
    let options = IndexOptions::CELLS;
    let context = ReadContext {
        storage: &disk,
        mapping: &mapping,
        options: &options,
        progress: &crate::run::Quiet,
    };
    let run_id = ids::run_id(&context, &run);
    out.push_str(&records::explain::records_text(
        format.name(),
        relative,
        &run_id,
        records,
        &mapping,
        warnings,
    ));
    Ok(out)
}

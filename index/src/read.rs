//! Stage 2 of indexing: read every run found by discovery (each through its format) and every TR164 backup, in
//! parallel, each on its own. Nothing here relates runs to each other; that is the lineage stage's work.

use crate::discover::Discovery;
use crate::formats::{self, tr164::backups::read_backup};
use crate::mapping::Mapping;
use crate::run::found::{DetectedRun, RunDir};
use crate::run::{BackupRead, IndexOptions, Progress, ReadContext, RunRead};
use crate::storage::Storage;
use rayon::prelude::*;
use std::collections::HashMap;

pub struct Reads {
    pub runs: Vec<RunRead>,
    pub backups: Vec<BackupRead>,
    /// Runs that were given another run's id and renamed ([`formats::separate_run_ids`]).
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
    let warnings = formats::separate_run_ids(&context, &mut detected);
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

//! From records to cells, for every format that reads its files as [`RunRecord`]s: the cell key (`cellscope.toml`,
//! what the file states, the default rules: [`key`], with the deployment [`config`]), the run id ([`ids`]), the
//! census and statistics of each record's requests and the tool's own figures ([`census`], [`figures`]), the rows
//! read back, what a format's examination of a file gives ([`verdict`]) and what `cellscope index --explain`
//! says of a file ([`explain`]). Done here once for all of them, so that a format only says what is in its files.

pub(crate) mod census;
pub(crate) mod config;
pub(crate) mod explain;
pub(crate) mod figures;
pub(crate) mod ids;
pub(crate) mod key;
pub(crate) mod verdict;

use crate::mapping::Mapping;
use crate::parse::json;
use crate::run::bytes::digest;
use crate::run::found::DetectedRun;
use crate::run::parsed::ParsedMetrics;
use crate::run::record::{FileAt, Part, Request, RunRecord};
use crate::run::rows::{CellRows, ExternalRows, RowsError};
use crate::run::{ReadContext, RunRead};
use crate::storage::{self, Storage};
use cellscope_model::api::{EnvironmentField, FileDigest, RunStart, Warning};
use cellscope_model::requests::{Lineage, RequestRow, RowClass};
use census::{capped, cell_of, drop_bad_requests, status_of};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// The statistics columns a record can fill, in cells-table order (the model's list).
pub(crate) use cellscope_model::origin::STAT_COLUMNS;

/// A format's reader of one file's records (the records of a file it reads whole, with problems as warnings).
pub(crate) type Records<'a> = dyn Fn(&FileAt<'_>, &mut Vec<Warning>) -> Vec<RunRecord> + 'a;

/// A directory named for a load level (`concurrency8`, `concurrency_8`, `c8`, `n8`, `max_concurrency=8`,
/// `request_rate_5.0`): users make one directory per level, and the sweep is the directory above.
pub(crate) fn is_load_level_directory(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let digits_after = |prefix: &str| {
        lower.strip_prefix(prefix).is_some_and(|rest| {
            !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
    };
    [
        "concurrency_",
        "concurrency",
        "max_concurrency=",
        "request_rate_",
        "c",
        "n",
    ]
    .iter()
    .any(|prefix| digits_after(prefix))
        || lower.ends_with(|c: char| c.is_ascii_digit())
            && ["-concurrency", "_concurrency"]
                .iter()
                .any(|marker| lower.contains(marker))
}

/// The file's directory, or the one above when the directory is named for a load level.
pub(crate) fn default_run_root(path: &str) -> String {
    let directory = storage::parent(path);
    if is_load_level_directory(storage::file_name(directory)) {
        storage::parent(directory).to_string()
    } else {
        directory.to_string()
    }
}

/// The offered request rate a record's `field` states (a number, `"inf"`, `Infinity`, a number as a string), as
/// a key part; `None` when the field is absent, null or not a rate above zero.
pub(crate) fn rate_part(object: &Json, field: &str) -> Option<Part> {
    let rate = object
        .get(field)
        .and_then(json::number)
        .and_then(cellscope_model::RateRps::new)?;
    Part::read(rate.to_string(), format!("field `{field}`"))
}

/// A run read from its records: the records of every file (`records_of`, the format's reader) → cells keyed by
/// `cellscope.toml` and the default rules → the same [`RunRead`] every format gives.
pub(crate) fn read_records(
    format: &'static str,
    records_of: &Records<'_>,
    context: &ReadContext<'_>,
    run: &DetectedRun,
) -> RunRead {
    let run_id = ids::run_id(context, run);
    let mut warnings = Vec::new();
    let mut records: Vec<(String, RunRecord)> = Vec::new();
    let mut total_bytes = 0u64;
    let mut file_bytes: BTreeMap<String, u64> = BTreeMap::new();
    let mut single_file_bytes = None;
    for file in &run.files {
        let mut file_warnings = Vec::new();
        let mut found = records_of(
            &FileAt::whole(context.storage, context.mapping, file),
            &mut file_warnings,
        );
        drop_bad_requests(&mut found, file, &mut file_warnings);
        if found.is_empty()
            && !file_warnings
                .iter()
                .any(|warning| warning.file.as_deref() == Some(file))
        {
            // Recognised but empty (`benchmarks: []`, an empty array): said, never silence.
            file_warnings.push(
                Warning::warn(
                    "no_records",
                    format!(
                        "the file is a {} result but holds no result records (an empty list); nothing of it is \
                         indexed",
                        format
                    ),
                )
                .file(file),
            );
        }
        warnings.extend(
            capped(file_warnings, file)
                .into_iter()
                .map(|warning| warning.run(&run_id)),
        );
        let bytes = context.storage.stat(file).map_or(0, |meta| meta.bytes);
        file_bytes.insert(file.clone(), bytes);
        total_bytes += bytes;
        context.progress.file_done(bytes);
        records.extend(found.into_iter().map(|record| (file.clone(), record)));
    }
    if let [only] = run.files.as_slice()
        && context.options.hashes
    {
        single_file_bytes =
            storage::read_bounded(context.storage, only, storage::MAX_DOCUMENT_BYTES).ok();
    }
    let (started, environment) = recorded_facts(&records, &run_id, &mut warnings);
    let keyed = key::resolve(format, context.mapping, &run_id, records, &mut warnings);
    let mut parsed = ParsedMetrics::default();
    for keyed in keyed {
        parsed.records += keyed.record.requests.len() as u64;
        let bytes = file_bytes.get(&keyed.file).copied().unwrap_or(0);
        let cell = cell_of(format, &run_id, &keyed, bytes);
        parsed.cells.push((keyed.coordinates, cell));
    }
    let digest = match (single_file_bytes, run.files.as_slice()) {
        (Some(bytes), [only]) => digest(only.clone(), &bytes, true),
        _ => FileDigest {
            path: if run.files.len() == 1 {
                run.files[0].clone()
            } else {
                format!("{}/", run.root)
            },
            bytes: total_bytes,
            md5: None,
            sha256: None,
        },
    };
    RunRead {
        id: run_id,
        root: run.root.clone(),
        rows_file: digest.path.clone(),
        metrics: Ok(parsed),
        digest,
        manifest: None,
        plan: None,
        note: None,
        files: Vec::new(),
        environment,
        started,
        warnings,
        format,
    }
}

/// The run's start (its records' earliest, with the file and key it was read from) and how it was made (each
/// field as the first record stating it has it, and a warning for a record stating another value).
fn recorded_facts(
    records: &[(String, RunRecord)],
    run_id: &str,
    warnings: &mut Vec<Warning>,
) -> (Option<RunStart>, BTreeMap<EnvironmentField, String>) {
    // RFC 3339 UTC strings of one length order as the times they name.
    let started = records
        .iter()
        .filter_map(|(file, record)| Some((file, record.started.as_ref()?)))
        .min_by(|(file_a, a), (file_b, b)| (&a.at, file_a).cmp(&(&b.at, file_b)))
        .map(|(file, started)| RunStart::recorded(started.at.clone(), file, &started.key));
    let mut environment = BTreeMap::new();
    for (file, record) in records {
        for (field, value) in &record.environment {
            let kept = environment.entry(*field).or_insert_with(|| value.clone());
            if kept != value {
                warnings.push(
                    Warning::warn(
                        "environment_differs",
                        format!(
                            "the run's files state two values of its {}: `{kept}` is shown, `{value}` here is not",
                            field.label()
                        ),
                    )
                    .run(run_id)
                    .file(file),
                );
            }
        }
    }
    (started, environment)
}

/// Where a cell of another tool's file keeps its requests, once its file is checked to be the length it had when
/// indexed (rows read from a file that has changed since are refused, never mixed into the snapshot's cell);
/// `None` for a cell that has no such file.
pub(crate) fn unchanged_source<'a>(
    storage: &dyn Storage,
    rows: &'a CellRows,
) -> Result<Option<&'a ExternalRows>, RowsError> {
    let Some(source) = &rows.external else {
        return Ok(None);
    };
    let meta = storage
        .stat(&source.file)
        .map_err(|error| RowsError::Read {
            path: source.file.clone(),
            source: error,
        })?;
    if meta.bytes != rows.file_bytes {
        return Err(RowsError::Changed(source.file.clone()));
    }
    Ok(Some(source))
}

/// The rows of a cell read back from its record: the record read again from its file (`records_of`, the format's
/// reader), its requests as rows.
pub(crate) fn read_record_rows(
    records_of: &Records<'_>,
    storage: &dyn Storage,
    rows: &CellRows,
) -> Result<Vec<RequestRow>, RowsError> {
    let Some(source) = unchanged_source(storage, rows)? else {
        return Ok(Vec::new());
    };
    let mut warnings = Vec::new();
    let mapping = Mapping::load(storage);
    let record = records_of(
        &FileAt::whole(storage, &mapping, &source.file),
        &mut warnings,
    )
    .into_iter()
    .find(|record| record.record == source.record)
    .ok_or_else(|| RowsError::Malformed {
        path: source.file.clone(),
        message: format!("record {} is no longer in the file", source.record),
    })?;
    let mut record = record;
    drop_bad_requests(
        std::slice::from_mut(&mut record),
        &source.file,
        &mut warnings,
    );
    Ok(record
        .requests
        .iter()
        .enumerate()
        .map(|(index, request)| {
            request_row(&source.run_id, index, request, record.line.unwrap_or(0))
        })
        .collect())
}

/// One request of another tool's file as a row of `/api/requests`: failed when it has an error or no latency
/// (the rule `cell_of` counts by), its status `http_<code>`, `error`, `no_latency` or `ok`. `line` is where the
/// row's record (or, for a table, the row itself) starts in the file.
pub(crate) fn request_row(
    source_run_id: &str,
    index: usize,
    request: &Request,
    line: u64,
) -> RequestRow {
    RequestRow {
        lineage: Lineage::Current,
        class: if request.error.is_some() || request.wall_ms.is_none() {
            RowClass::Failed
        } else {
            RowClass::Ok
        },
        source_run_id: source_run_id.to_string(),
        line,
        agent_id: None,
        request_id: u32::try_from(index).ok(),
        request_sequence: None,
        wall_ms: request.wall_ms,
        ttft_ms: request.ttft_ms,
        prompt_tokens: request.prompt_tokens,
        completion_tokens: request.completion_tokens,
        submit_time_s: request.start_s,
        complete_time_s: request.end_s,
        status: match &request.error {
            Some(error) => status_of(error),
            None if request.wall_ms.is_none() => "no_latency".to_string(),
            None => "ok".to_string(),
        },
        error: request.error.clone().filter(|error| !error.is_empty()),
    }
}

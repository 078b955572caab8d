//! One keyed record made a cell: its census, the statistics of its requests (recomputed from them, by the rules
//! request rows are held to), the tool's figures where the requests cannot give one (marked reported or
//! derived), and where its rows are.

use super::key;
use crate::run::parsed::{ExternalCell, IdCount, ParsedCell};
use crate::run::record::{Request, RunRecord};
use cellscope_model::api::Warning;
use cellscope_model::origin::{CellOrigin, FigureOrigin};
use cellscope_model::stat::Stat;
use cellscope_model::stats::{CellAccumulator, CellStats, MAX_LATENCY_MS, RequestSample};
use std::collections::BTreeMap;

/// The cell one keyed record makes: census, statistics (recomputed from its requests where it has them, the
/// tool's figures marked reported where it does not), and where its rows are.
pub(crate) fn cell_of(
    format: &'static str,
    run_id: &str,
    keyed: &key::KeyedRecord,
    file_bytes: u64,
) -> ParsedCell {
    let record = &keyed.record;
    // Without per-request timestamps the tool's duration is the span (formats.md: how vLLM and SGLang define
    // throughput); with them the product's rule applies.
    let timestamps = record
        .requests
        .iter()
        .any(|request| request.start_s.is_some() && request.end_s.is_some());
    let (mut cell, accumulator, tokens_known) = census(record, timestamps);
    let mut stats = accumulator.finish();
    leave_out_unmeasured(record, &cell, tokens_known, &mut stats);
    let figures = figures_of(keyed, &cell, &mut stats);
    if !record.has_requests {
        stats.ok_rows = cell.ok_rows;
    }
    cell.stats = stats;
    cell.row_run_ids.insert(
        run_id.to_string(),
        IdCount {
            rows: cell.rows,
            first_offset: 0,
        },
    );
    let mut notes = record.notes.clone();
    if let Some((status, why)) = &record.rejected {
        notes.push(format!("the tool judged this result {status}: {why}"));
    }
    if record.has_requests && !timestamps && stats.aggregate_tps.is_some() {
        notes.push(
            "aggregate tps = Σ completion tokens of ok requests / the tool's duration (the requests carry no \
             timestamps)"
                .to_string(),
        );
    }
    cell.external = Some(Box::new(ExternalCell {
        format,
        file: keyed.file.clone(),
        file_bytes,
        record: record.record,
        expected_rows: record.expected_rows,
        figures,
        origin: CellOrigin {
            format: format.to_string(),
            file: keyed.file.clone(),
            record: record.record,
            line: record.line,
            inferred: keyed.inferred.clone(),
            reported: record.reported.clone(),
            reported_figures: record.reported_figures.clone(),
            notes,
        },
    }));
    cell
}

/// What is wrong with a request's numbers, if anything, by the rules TR164 rows are held to: a latency (wall,
/// TTFT, each inter-token gap) from 0 to [`MAX_LATENCY_MS`] ms, a token count a whole number, start and end
/// finite with the end not before the start. A failed request's numbers are not measurements and are not checked.
fn request_problem(request: &Request) -> Option<String> {
    use cellscope_model::stats::{is_latency_ms, is_token_count};
    if request.error.is_some() {
        return None;
    }
    let latencies = [("wall latency", request.wall_ms), ("TTFT", request.ttft_ms)];
    if let Some((name, value)) = latencies.into_iter().find_map(|(name, value)| {
        value
            .filter(|value| !is_latency_ms(*value))
            .map(|value| (name, value))
    }) {
        return Some(format!(
            "its {name} is {value} ms; expected a latency from 0 to {MAX_LATENCY_MS} ms"
        ));
    }
    if let Some(gap) = request
        .itl_ms
        .iter()
        .flatten()
        .find(|gap| !is_latency_ms(**gap))
    {
        return Some(format!(
            "an inter-token gap is {gap} ms; expected a latency from 0 to {MAX_LATENCY_MS} ms"
        ));
    }
    let counts = [
        ("prompt", request.prompt_tokens),
        ("completion", request.completion_tokens),
    ];
    if let Some((name, value)) = counts.into_iter().find_map(|(name, value)| {
        value
            .filter(|value| !is_token_count(*value))
            .map(|value| (name, value))
    }) {
        return Some(format!(
            "its {name} token count is {value}; expected a whole number from 0 to {}",
            u32::MAX
        ));
    }
    match (request.start_s, request.end_s) {
        (Some(start), Some(end)) if !start.is_finite() || !end.is_finite() => Some(format!(
            "its start ({start} s) or end ({end} s) is not a time"
        )),
        (Some(start), Some(end)) if end < start => {
            Some(format!("it ends ({end} s) before it starts ({start} s)"))
        }
        _ => None,
    }
}

/// Leaves out of each record the requests whose numbers are not measurements ([`request_problem`]), counting
/// them as malformed rows, with a `bad_number` warning on the file at the record's line for each.
pub(crate) fn drop_bad_requests(
    records: &mut [RunRecord],
    file: &str,
    warnings: &mut Vec<Warning>,
) {
    for record in records.iter_mut() {
        let (line, index_of_record) = (record.line, record.record);
        let mut position = 0usize;
        record.requests.retain(|request| {
            position += 1;
            let Some(problem) = request_problem(request) else {
                return true;
            };
            warnings.push(
                Warning::error(
                    "bad_number",
                    format!(
                        "request {} of record {index_of_record}: {problem}; the request is left out",
                        position - 1
                    ),
                )
                .file(file)
                .at_line(line),
            );
            false
        });
        let kept = record.requests.len();
        record.malformed += (position - kept) as u32;
    }
}

/// How many warnings of one kind on one file are listed one by one, as for TR164's rows; the rest are counted.
const MAX_WARNINGS_PER_KIND: usize = 20;

/// `warnings` (of one file) with at most [`MAX_WARNINGS_PER_KIND`] of each kind, the rest of a kind said in one
/// more warning of that kind, so that a file of many bad lines does not bury everything else.
pub(crate) fn capped(warnings: Vec<Warning>, file: &str) -> Vec<Warning> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut kept = Vec::with_capacity(warnings.len().min(256));
    let mut first_left_out: BTreeMap<String, Warning> = BTreeMap::new();
    for warning in warnings {
        let count = seen.entry(warning.kind.clone()).or_default();
        *count += 1;
        if *count <= MAX_WARNINGS_PER_KIND {
            kept.push(warning);
        } else {
            first_left_out
                .entry(warning.kind.clone())
                .or_insert(warning);
        }
    }
    for (kind, first) in first_left_out {
        let more = seen[&kind] - MAX_WARNINGS_PER_KIND;
        kept.push(Warning {
            message: format!(
                "{more} further `{kind}` findings on this file are not listed (only the first \
                 {MAX_WARNINGS_PER_KIND} are)"
            ),
            line: None,
            file: Some(first.file.unwrap_or_else(|| file.to_string())),
            ..first
        });
    }
    kept
}

/// A record's census (rows, ok and failed by status, the requests' positions) and the statistics of its `ok`
/// requests, and whether every one of those states its completion tokens. Without per-request `timestamps` the
/// tool's duration stands for each request's span. A record of aggregates only is counted by the tool's counts.
fn census(record: &RunRecord, timestamps: bool) -> (ParsedCell, CellAccumulator, bool) {
    let mut cell = ParsedCell {
        malformed_rows: record.malformed,
        ..ParsedCell::default()
    };
    let mut accumulator = CellAccumulator::new();
    let mut tokens_known = true;
    for (index, request) in record.requests.iter().enumerate() {
        cell.row_offsets.push(index as u64);
        cell.rows += 1;
        if let Some(error) = &request.error {
            cell.failed_rows += 1;
            let status = status_of(error);
            *cell.failed_by_status.entry(status).or_default() += 1;
            continue;
        }
        let Some(wall_ms) = request.wall_ms else {
            cell.failed_rows += 1;
            *cell
                .failed_by_status
                .entry("no_latency".to_string())
                .or_default() += 1;
            continue;
        };
        cell.ok_rows += 1;
        tokens_known &= request.completion_tokens.is_some();
        let (submit_time_s, complete_time_s) = if timestamps {
            (
                request.start_s.unwrap_or(f64::INFINITY),
                request.end_s.unwrap_or(f64::NEG_INFINITY),
            )
        } else {
            (0.0, record.duration_s.unwrap_or(0.0))
        };
        accumulator.push(&RequestSample {
            wall_ms,
            ttft_ms: request.ttft_ms,
            prompt_tokens: request.prompt_tokens.unwrap_or(0.0),
            completion_tokens: request.completion_tokens.unwrap_or(0.0),
            submit_time_s,
            complete_time_s,
        });
        if let Some(gaps) = &request.itl_ms {
            accumulator.push_gaps(gaps.iter().copied());
        }
    }
    if let Some((status, _)) = &record.rejected {
        // The tool rejected the record as a whole: every request it counts fails under its status word.
        let all = record.completed.unwrap_or(0) + record.failed.unwrap_or(0);
        cell.rows = all.max(cell.rows);
        cell.failed_rows = cell.rows;
        cell.ok_rows = 0;
        cell.failed_by_status = BTreeMap::from([(status.clone(), cell.rows)]);
    } else if !record.has_requests {
        // Aggregates only: the tool's counts are the census.
        cell.ok_rows = record.completed.unwrap_or(0);
        cell.failed_rows = record.failed.unwrap_or(0);
        cell.rows = cell.ok_rows + cell.failed_rows;
        if cell.failed_rows > 0 {
            cell.failed_by_status
                .insert("failed".to_string(), cell.failed_rows);
        }
    } else if let Some(failed) = record.failed
        && failed > cell.failed_rows
        && record
            .requests
            .iter()
            .all(|request| request.error.is_none())
    {
        // Legacy files count failures without saying which requests failed.
        let missing = failed - cell.failed_rows;
        cell.failed_rows += missing;
        cell.rows += missing;
        cell.failed_by_status.insert("failed".to_string(), missing);
    }
    (cell, accumulator, tokens_known)
}

/// Statistics the requests cannot give left out: TTFT when no `ok` request has one, prompt tokens when none
/// states them, completion tokens and throughput unless every `ok` request states its completion tokens.
fn leave_out_unmeasured(
    record: &RunRecord,
    cell: &ParsedCell,
    tokens_known: bool,
    stats: &mut CellStats,
) {
    let with_ttft = record
        .requests
        .iter()
        .any(|request| request.error.is_none() && request.ttft_ms.is_some());
    let prompt_known = record
        .requests
        .iter()
        .any(|request| request.error.is_none() && request.prompt_tokens.is_some());
    if !with_ttft {
        stats.p50_ttft_ms = None;
        stats.p95_ttft_ms = None;
    }
    if !prompt_known {
        stats.mean_prompt_tokens = None;
    }
    if !tokens_known || cell.ok_rows == 0 {
        stats.mean_completion_tokens = stats.mean_completion_tokens.filter(|_| tokens_known);
        stats.aggregate_tps = stats.aggregate_tps.filter(|_| tokens_known);
    }
    // TPOT divides by each request's tokens: a cell where some are unknown would mix requests silently.
    if !tokens_known {
        for stat in TOKEN_RATES {
            if let Some(slot) = stats.get_mut(stat) {
                *slot = None;
            }
        }
    }
    if !prompt_known || !tokens_known {
        stats.total_tps = None;
    }
}

/// The statistics computed from each request's TPOT, and so from its wall latency and token count.
const TOKEN_RATES: [Stat; 5] = [
    Stat::MeanTpotMs,
    Stat::P50TpotMs,
    Stat::P95TpotMs,
    Stat::P99TpotMs,
    Stat::P50InteractivityTps,
];

/// Where a cell's figures come from: what the requests could not give, the tool's figure gives, marked as
/// reported; latencies rebuilt from TTFT and ITL are marked derived, and key parts that were not read inferred.
fn figures_of(keyed: &key::KeyedRecord, cell: &ParsedCell, stats: &mut CellStats) -> FigureOrigin {
    let record = &keyed.record;
    let mut figures = FigureOrigin::default();
    for stat in Stat::REQUEST {
        let Some(slot) = stats.get_mut(stat) else {
            continue;
        };
        if slot.is_none()
            && let Some(value) = record.reported.get(stat.name())
            && value.is_finite()
            // An all-failed run writes its aggregates as 0.0: never a measurement.
            && !(cell.ok_rows == 0 && *value == 0.0)
        {
            *slot = Some(*value);
            figures.reported.push(stat.name().to_string());
        }
    }
    for stat in Stat::REQUEST {
        if let Some(slot) = stats.get_mut(stat)
            && slot.is_none()
            && let Some(value) = record.derived.get(stat.name())
            && value.is_finite()
        {
            *slot = Some(*value);
            figures.derived.push(stat.name().to_string());
        }
    }
    if record.wall_derived {
        let wall = [
            Stat::MeanWallMs,
            Stat::P50WallMs,
            Stat::P95WallMs,
            Stat::P99WallMs,
        ];
        figures.derived.extend(
            wall.into_iter()
                .chain(TOKEN_RATES)
                .map(Stat::name)
                .filter(|column| !figures.reported.iter().any(|name| name == column))
                .map(str::to_string),
        );
    }
    figures.inferred = keyed
        .inferred
        .iter()
        .map(|part| part.dimension.clone())
        .collect();
    figures
}

/// The status word of a failed request: `http_<code>` when the error text starts with an HTTP status code,
/// else `error`.
pub(crate) fn status_of(error: &str) -> String {
    let code: String = error.chars().take_while(char::is_ascii_digit).collect();
    if code.len() == 3 {
        format!("http_{code}")
    } else {
        "error".to_string()
    }
}
